//! Contexts: the device's primary context, retained and released, with the
//! arena, the metrics and the sticky-error record that every object of the
//! context shares.
//!
//! # Sticky errors
//!
//! Some errors leave a CUDA context unusable (an illegal address, a device
//! assert, a launch failure: see [`DriverCode::is_sticky`]). The driver's
//! only guarantee after one is that a new process works; every later call on
//! the context may return the same error. cudakit records the first sticky
//! error a context sees; from then on every operation on that context
//! returns [`Error::ContextPoisoned`] naming the original error and call,
//! without entering the driver. Drops on a poisoned context still hand the
//! resources back (the driver answers at once with the sticky error, which
//! is recorded, never panicked on).
//!
//! What cudakit offers beyond a new process is best effort: drop every
//! object of the context, then [`Context::reset`], which releases the
//! primary context and resets it (`cuDevicePrimaryCtxReset_v2`). Whether the
//! device is usable afterwards in the same process is up to the driver; the
//! hardware suite tests what actually happens.
//!
//! [`DriverCode::is_sticky`]: crate::DriverCode::is_sticky
//!
//! The room also holds who owns what and what is alive: [`device`]
//! (enumeration, attributes, limits), [`arena`] (every allocation, with its
//! caller) and [`metrics`] (time and bytes).

pub mod arena;
pub mod device;
pub mod green;
pub mod metrics;
pub(crate) mod release;
pub(crate) mod stream_state;

use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use cuda_sys::{CUcontext, CUlimit, Driver};
use once_cell::sync::OnceCell;

use self::arena::{Arena, ArenaStats};
use self::device::{Device, DeviceLimits};
use self::metrics::{Metrics, MetricsCounters};
use self::stream_state::StreamState;
use crate::driver::cu;
use crate::error::{check, DriverCode, DriverError, Error, Result};

/// A device's primary context. Cheap to clone (clones share one retained
/// context).
///
/// ```no_run
/// # fn main() -> cudakit::Result<()> {
/// let ctx = cudakit::Context::new(0)?; // device 0 (cuDevicePrimaryCtxRetain)
/// let limits = ctx.limits();
/// println!("{}: sm_{}{}, {} SMs", ctx.device().name()?, limits.compute_capability.0,
///          limits.compute_capability.1, limits.multiprocessors);
/// let buffer = ctx.upload(&[1.0f32, 2.0, 3.0])?; // recorded in the context's arena
/// assert_eq!(buffer.to_vec()?, [1.0, 2.0, 3.0]);
/// assert_eq!(ctx.stats().live_count(), 1);
/// drop(buffer);
/// assert!(ctx.leak_report().is_empty());
/// # Ok(()) }
/// ```
///
/// Buffers, streams and modules borrow it, so none can outlive it:
///
/// ```compile_fail,E0597
/// # fn main() -> cudakit::Result<()> {
/// let buffer = {
///     let ctx = cudakit::Context::new(0)?;
///     ctx.alloc::<f32>(16)?
/// }; // error: `ctx` does not live long enough
/// # drop(buffer); Ok(()) }
/// ```
#[derive(Clone)]
pub struct Context {
    shared: Arc<Shared>,
}

// `repr(C)` and 64-byte aligned: the fields every launch reads (`raw`,
// `generation`, `device`, `kernel_timing`, `is_green`, `poison`'s state)
// come first and lie on the record's first cache line, instead of wherever
// the compiler would put them in a record of over a kilobyte (one line to
// fetch after the driver's own call has evicted them, not four). That line
// is not the `Arc`'s counts' line: the allocation holds the two counts (16
// bytes) first, and the 64-byte alignment pads them, so the record starts
// at byte 64, a line after them (the counts change when a `Context` is
// cloned or dropped, which launches do not do). The test
// `the_launch_fields_fill_the_records_first_line` checks this layout.
#[repr(C, align(64))]
pub(crate) struct Shared {
    raw: CUcontext,
    /// This context's identity: unique in the process, never reused.
    generation: u64,
    device: Device,
    kernel_timing: AtomicBool,
    /// `green.is_some()`, beside the other fields the launch path reads.
    is_green: bool,
    poison: OnceCell<DriverError>,
    limits: DeviceLimits,
    drop_errors: Mutex<Vec<DriverError>>,
    arena: Arena,
    metrics: MetricsCounters,
    released: AtomicBool,
    /// Objects kept because they were exported over IPC and their guard
    /// was never released: another process may still use them, so the
    /// context that holds them is never released or reset.
    kept_exports: AtomicUsize,
    work: WorkTracker,
    /// Per device ordinal: the identity ([`Context::id`]) of the peer
    /// context this context has access to (`cuCtxEnablePeerAccess`), 0 for
    /// none; kept by `multi::peer`. An identity, not a bit: a peer context
    /// that was dropped and made again is another context, to which the
    /// old access does not extend.
    peers: [AtomicU64; 64],
    /// State that a room above keeps per context and hands back before
    /// the context goes (the staged pipeline's page-locked chunks); held
    /// as a trait object so that this room does not depend on that one.
    staging: OnceCell<Box<dyn ContextResource>>,
    /// For a green context ([`green`]): its handle, the primary context it
    /// belongs to, and the thread that may make it current. `None` for a
    /// primary context.
    green: Option<green::GreenState>,
}

/// A stream of another context registered on this one (see
/// `WorkTracker::foreign`): (scope id, raw stream, its state, its context).
type ForeignStream = (u64, usize, Arc<StreamState>, Context);

/// What device work and host access to unified memory are in flight.
///
/// `scopes` counts scopes that queued work and have not synchronized yet:
/// a synchronous call made while any exists first waits for the whole
/// context (`cuCtxSynchronize`), so it sees all work queued before it.
///
/// On a device without concurrent managed access, any running kernel makes
/// all managed memory inaccessible to the host. There device work (a scope's
/// first operation, a synchronous copy or memset) and host views of unified
/// memory exclude each other: `lock` makes each check-and-count atomic,
/// and the loser gets [`Error::UnifiedAccess`].
#[derive(Default)]
struct WorkTracker {
    lock: Mutex<()>,
    scopes: AtomicUsize,
    host_views: AtomicUsize,
    /// Stream captures in progress on the context (see
    /// `Context::begin_capture`): while any runs, the context cannot be
    /// synchronized as a whole (CUDA refuses to synchronize a context with
    /// an active capture, and the refusal invalidates it), so waits go
    /// stream by stream through `pending`.
    captures: AtomicUsize,
    /// Held (shared) across a `cuCtxSynchronize`, and (exclusively) by a
    /// capture that is about to begin while it counts itself: so no context
    /// synchronize that saw no capture can still be running when a capture
    /// begins (the driver would refuse it and invalidate the capture).
    sync_gate: std::sync::RwLock<()>,
    /// The streams that scopes have queued work on and not yet waited for,
    /// as (scope id, raw stream, its capture state): what a synchronous
    /// operation waits for while a capture runs. Locked before any stream's
    /// state, never after.
    pending: Mutex<Vec<(u64, usize, Arc<StreamState>)>>,
    /// Streams of *other* contexts whose scopes queued peer copies that
    /// touch this context's memory (`Scope::copy_peer`), as (scope id, raw
    /// stream, its state, its context): this context's synchronous
    /// operations wait for them too, so that they never read this
    /// context's memory before such a copy is done. Removed by the scope
    /// after its wait, before its borrows end. Locked after `pending` and
    /// before any stream's state, never while one is held.
    foreign: Mutex<Vec<ForeignStream>>,
    /// Releases that drops on driver callback threads handed over (see
    /// `release`), and how many there are.
    from_callbacks: Mutex<Vec<release::Release>>,
    callback_releases: AtomicUsize,
}

// SAFETY: CUcontext is a handle the driver API accepts from any thread; all
// other fields are thread-safe.
unsafe impl Send for Shared {}
// SAFETY: as above; the driver API is thread-safe and the shared state is
// behind atomics, OnceCell and Mutex.
unsafe impl Sync for Shared {}

static REGISTRY: Mutex<Vec<(i32, Weak<Shared>)>> = Mutex::new(Vec::new());

thread_local! {
    /// The context this thread's last [`Context::enter`] or drop-time
    /// switch ([`Context::enter_for_drop`]) made current (as an address; 0
    /// for none), for [`Context::enter_for_launch`] and the calls that use
    /// it (launches, [`Context::issue_on_stream`]).
    static LAUNCH_CURRENT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// The first operation refused on this thread during its capture (see
    /// `Context::refuse_during_capture`).
    static VIOLATION: std::cell::Cell<Option<&'static str>> = const { std::cell::Cell::new(None) };
}

/// Locks `m`, taking over a lock poisoned by a panic: every mutex of the
/// crate guards state that single calls (push, remove, take, store) keep
/// consistent, so a panic while it was held cannot leave it half-updated.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

fn registry() -> std::sync::MutexGuard<'static, Vec<(i32, Weak<Shared>)>> {
    lock(&REGISTRY)
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Context");
        d.field("device", &self.shared.device.ordinal());
        if let Some(g) = &self.shared.green {
            d.field("green_sms", &g.sms());
        }
        d.field("poisoned", &self.shared.poison.get()).finish()
    }
}

impl Context {
    /// The primary context of device `ordinal`, retained
    /// (`cuDevicePrimaryCtxRetain`). Every `Context` of one device shares
    /// one primary context, one arena, one metrics record and one
    /// sticky-error record.
    ///
    /// # Errors
    ///
    /// Load and `cuInit` errors, [`Error::NoSuchDevice`], driver errors.
    #[track_caller]
    pub fn new(ordinal: usize) -> Result<Context> {
        Self::on(Device::get(ordinal)?)
    }

    /// The primary context of `device`. See [`Context::new`].
    ///
    /// # Errors
    ///
    /// As [`Context::new`].
    pub fn on(device: Device) -> Result<Context> {
        let mut reg = registry();
        reg.retain(|(_, w)| w.strong_count() > 0);
        if let Some(shared) = reg
            .iter()
            .find(|(d, _)| *d == device.ordinal())
            .and_then(|(_, w)| w.upgrade())
        {
            return Ok(Context { shared });
        }
        let cu = cu()?;
        let limits = device.limits()?;
        let mut raw: CUcontext = ptr::null_mut();
        // SAFETY: a valid out-pointer and a device handle from cuDeviceGet.
        check("cuDevicePrimaryCtxRetain", unsafe {
            (cu.cuDevicePrimaryCtxRetain)(&mut raw, device.as_raw())
        })?;
        let shared = Arc::new(Shared::new(device, raw, limits, None));
        reg.push((device.ordinal(), Arc::downgrade(&shared)));
        Ok(Context { shared })
    }

    /// A context around `raw` (the `CUcontext` of a green context, from
    /// `cuCtxFromGreenCtx`) on this context's device, with `limits` (the
    /// partition's SMs) and its own arena, metrics and sticky record, which
    /// owns `green` (see [`green`]).
    pub(crate) fn child_green(
        &self,
        raw: CUcontext,
        limits: DeviceLimits,
        green: green::GreenState,
    ) -> Context {
        Context {
            shared: Arc::new(Shared::new(self.shared.device, raw, limits, Some(green))),
        }
    }

    /// The device.
    pub fn device(&self) -> Device {
        self.shared.device
    }

    /// The raw primary context handle.
    pub fn as_raw(&self) -> CUcontext {
        self.shared.raw
    }

    /// The device's launch limits, read when the context was created.
    pub fn limits(&self) -> &DeviceLimits {
        &self.shared.limits
    }

    /// The arena of this context's allocations.
    pub fn arena(&self) -> &Arena {
        &self.shared.arena
    }

    /// The arena's counters (live, peak, totals per kind).
    pub fn stats(&self) -> ArenaStats {
        self.shared.arena.stats()
    }

    /// What is live and where it was allocated; empty when nothing is.
    pub fn leak_report(&self) -> String {
        self.shared.arena.leak_report()
    }

    /// Bytes and time of copies, compiles, module loads; launches; kernel
    /// time per function when [`Context::set_kernel_timing`] is on.
    pub fn metrics(&self) -> Metrics {
        self.shared.metrics.snapshot()
    }

    pub(crate) fn counters(&self) -> &MetricsCounters {
        &self.shared.metrics
    }

    /// Turns event timing of launches and asynchronous copies on or off.
    /// Off by default: the default launch path records nothing.
    pub fn set_kernel_timing(&self, on: bool) {
        self.shared.kernel_timing.store(on, Ordering::Relaxed);
    }

    pub(crate) fn kernel_timing(&self) -> bool {
        self.shared.kernel_timing.load(Ordering::Relaxed)
    }

    /// The sticky error that poisoned this context, if any.
    pub fn poisoned(&self) -> Option<DriverError> {
        self.shared.poison.get().copied()
    }

    /// Errors that drops of this context's objects met (they never panic).
    pub fn drop_errors(&self) -> Vec<DriverError> {
        lock(&self.shared.drop_errors).clone()
    }

    /// An identity of the shared context state, unique in the process and
    /// never reused (a generation counted from 1; 0 is no context).
    #[inline]
    pub(crate) fn id(&self) -> usize {
        self.shared.generation as usize
    }

    /// A handle that does not keep the context alive (for records that a
    /// leaked object may hold: a forgotten executable graph must not leak
    /// its whole context).
    pub(crate) fn downgrade(&self) -> WeakContext {
        WeakContext(Arc::downgrade(&self.shared))
    }

    /// Whether two handles share one primary context.
    pub fn same(&self, other: &Context) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    /// Whether this context has peer access to the memory of the context
    /// whose identity is `peer` ([`Context::id`]) on device `ordinal`
    /// (enabled through `Context::enable_peer_access` for that very
    /// context).
    #[inline]
    pub(crate) fn peer_enabled(&self, ordinal: i32, peer: usize) -> bool {
        (0..64).contains(&ordinal)
            && peer != 0
            && self.shared.peers[ordinal as usize].load(Ordering::Acquire) == peer as u64
    }

    /// Records that peer access to the context `peer` (on device
    /// `ordinal`) was enabled (`Some(peer id)`) or disabled (`None`).
    /// Ordinals from 64 on are never recorded.
    pub(crate) fn record_peer(&self, ordinal: i32, peer: Option<usize>) {
        if (0..64).contains(&ordinal) {
            self.shared.peers[ordinal as usize]
                .store(peer.map_or(0, |p| p as u64), Ordering::Release);
        }
    }

    /// Refuses work on a poisoned context, without entering the driver: the
    /// first step of every `enter`, and alone for calls into libraries that
    /// take the device from their own handles (NCCL's communicators).
    #[inline]
    pub(crate) fn refuse_poisoned(&self) -> Result<()> {
        match self.shared.poison.get() {
            Some(cause) => Err(Error::ContextPoisoned {
                device: self.shared.device.ordinal(),
                cause: *cause,
            }),
            // A green context shares its primary context's fate both ways
            // (see `green`): a sticky error of either stops both.
            None => match &self.shared.green {
                Some(g) => g.parent().refuse_poisoned(),
                None => Ok(()),
            },
        }
    }

    /// Records a sticky error: the context is poisoned (and, for a green
    /// context, its primary context too), and pending futures poll again.
    #[cold]
    fn poison(&self, err: DriverError) {
        let mut first = self.shared.poison.set(err).is_ok();
        if let Some(g) = &self.shared.green {
            first |= g.parent().shared.poison.set(err).is_ok();
        }
        // Host functions of this context may never run now: pending
        // futures poll again and see the poison. Only at the first
        // poisoning (every later sticky error, each drop's refused free
        // after a fault, would wake them again for nothing).
        if first {
            if let Some(wake) = ON_POISON.get() {
                wake();
            }
        }
    }

    /// Refuses work on a poisoned context, and makes the context current on
    /// the calling thread. Every operation starts here.
    #[inline]
    pub(crate) fn enter(&self) -> Result<&'static Driver> {
        self.refuse_poisoned()?;
        if release::in_driver_callback() {
            return Err(Error::InsideHostCallback {
                operation: "a cudakit call",
            });
        }
        self.refuse_other_thread()?;
        let cu = cu()?;
        let mut current: CUcontext = ptr::null_mut();
        // SAFETY: a valid out-pointer.
        self.check("cuCtxGetCurrent", unsafe {
            (cu.cuCtxGetCurrent)(&mut current)
        })?;
        if current != self.shared.raw {
            // SAFETY: the context is alive for as long as `self` (a primary
            // context retained, a green one not destroyed before its record).
            self.check("cuCtxSetCurrent", unsafe {
                (cu.cuCtxSetCurrent)(self.shared.raw)
            })?;
        }
        LAUNCH_CURRENT.with(|c| c.set(self.shared.raw as usize));
        Ok(cu)
    }

    /// [`Context::enter`] for the launch path and for calls whose stream
    /// names the context ([`Context::issue_on_stream`]): skips the driver's
    /// current-context query when this thread's last `enter` (or drop-time
    /// switch) was for this context, and says so (`true`). Foreign code may
    /// have switched the thread's context since: the launch's function and
    /// stream belong to this context, so the driver then refuses the launch
    /// with an error (never runs it elsewhere), and
    /// [`Context::should_retry_elsewhere`] tells the caller to enter and
    /// issue it once more.
    #[inline]
    pub(crate) fn enter_for_launch(&self) -> Result<(&'static Driver, bool)> {
        if self.believed_current() {
            self.refuse_poisoned()?;
            // This thread's record may name a green context that was
            // destroyed and whose address a new one (of another thread)
            // now has: the thread rule holds on the fast path too.
            self.refuse_other_thread()?;
            return Ok((cu()?, true));
        }
        Ok((self.enter()?, false))
    }

    /// The launch fast path's [`Context::enter_for_launch`]: the driver,
    /// where this thread's last `enter` was for this context (which is
    /// neither green nor poisoned) and the thread is not inside a driver
    /// callback; `None` sends the launch to the full path, which reports
    /// whatever refuses it.
    #[inline(always)]
    pub(crate) fn launch_driver_fast(&self) -> Option<&'static Driver> {
        if !self.believed_current()
            || self.shared.poison.get().is_some()
            || self.shared.is_green
            || release::in_driver_callback()
        {
            return None;
        }
        crate::driver::cu_fast()
    }

    /// Whether this thread's last [`Context::enter`] (or drop-time
    /// `cuCtxSetCurrent`) was for this context.
    #[inline]
    fn believed_current(&self) -> bool {
        LAUNCH_CURRENT.with(|c| c.get()) == self.shared.raw as usize
    }

    /// After a call issued without asking the driver for the current
    /// context (`fast`) failed with `rc`: whether another context turned out
    /// to be current, so that the call is worth issuing again after a full
    /// [`Context::enter`]. A sticky code is never retried, nor a failure
    /// met with this context current (the driver's answer stands, and is
    /// reported as it was; issuing it again could turn it into another
    /// error, such as an invalidated capture). The query's own failure
    /// counts as "no".
    #[cold]
    pub(crate) fn should_retry_elsewhere(&self, fast: bool, rc: cuda_sys::CUresult) -> bool {
        if !fast || DriverCode::from_raw(rc).is_sticky() {
            return false;
        }
        Self::forget_launch_current();
        let Ok(cu) = cu() else { return false };
        let mut current: CUcontext = ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let asked = unsafe { (cu.cuCtxGetCurrent)(&mut current) };
        asked == cuda_sys::CUresult::CUDA_SUCCESS && current != self.shared.raw
    }

    /// Issues a call whose stream names the context: the driver takes the
    /// device from the stream, not from the thread's current context
    /// (`cuMemAllocAsync`, `cuMemAllocFromPoolAsync`, `cuMemFreeAsync` on a
    /// created stream). The driver's current-context query is skipped when
    /// this thread's last `enter` was for this context; should the call fail
    /// because foreign code switched contexts since, it is issued once more
    /// after a full [`Context::enter`] (see
    /// [`Context::should_retry_elsewhere`]; a failed call did nothing, so
    /// the retry cannot do anything twice). Sticky errors poison the context
    /// as in [`Context::check`].
    #[inline]
    pub(crate) fn issue_on_stream(
        &self,
        call: &'static str,
        mut op: impl FnMut(&'static Driver) -> cuda_sys::CUresult,
    ) -> Result<()> {
        let (cu, fast) = self.enter_for_launch()?;
        let rc = op(cu);
        if rc == cuda_sys::CUresult::CUDA_SUCCESS {
            return Ok(());
        }
        if self.should_retry_elsewhere(fast, rc) {
            let cu = self.enter()?;
            return self.check(call, op(cu));
        }
        self.check(call, rc)
    }

    /// Drops this thread's record of the current context (after a failed
    /// launch, whatever the cause).
    pub(crate) fn forget_launch_current() {
        LAUNCH_CURRENT.with(|c| c.set(0));
    }

    /// Checks a driver result; a sticky error poisons the context.
    #[inline]
    pub(crate) fn check(&self, call: &'static str, rc: cuda_sys::CUresult) -> Result<()> {
        if rc == cuda_sys::CUresult::CUDA_SUCCESS {
            return Ok(());
        }
        self.check_failed(call, rc)
    }

    #[cold]
    #[inline(never)]
    fn check_failed(&self, call: &'static str, rc: cuda_sys::CUresult) -> Result<()> {
        match check(call, rc) {
            Ok(()) => Ok(()),
            Err(err) => {
                if err.is_sticky() {
                    self.poison(err);
                }
                Err(Error::Driver(err))
            }
        }
    }

    /// Counts an object kept because it was exported over IPC and its
    /// guard was never released: from now on the context is never released
    /// or reset (see [`Shared`]'s drop).
    pub(crate) fn keep_for_export(&self) {
        self.shared.kept_exports.fetch_add(1, Ordering::AcqRel);
    }

    /// Records an error met while dropping an object of this context.
    pub(crate) fn record_drop_error(&self, call: &'static str, rc: cuda_sys::CUresult) {
        if let Err(err) = check(call, rc) {
            if err.is_sticky() {
                self.poison(err);
            }
            lock(&self.shared.drop_errors).push(err);
        }
    }

    /// For drops: makes the context current without refusing a poisoned one
    /// (resources are still handed back). `None` when not even that works.
    pub(crate) fn enter_for_drop(&self) -> Option<&'static Driver> {
        if release::in_driver_callback() || !self.thread_allowed() {
            return None;
        }
        let cu = cu().ok()?;
        // SAFETY: the context is alive for as long as `self` (a primary
        // context retained, a green one not destroyed before its record).
        let rc = unsafe { (cu.cuCtxSetCurrent)(self.shared.raw) };
        self.record_drop_error("cuCtxSetCurrent", rc);
        // The launch path's record of the current context follows the
        // switch (an earlier `enter` of another context no longer holds).
        let now = if rc == cuda_sys::CUresult::CUDA_SUCCESS {
            self.shared.raw as usize
        } else {
            0
        };
        LAUNCH_CURRENT.with(|c| c.set(now));
        Some(cu)
    }

    fn work_lock(&self) -> std::sync::MutexGuard<'_, ()> {
        lock(&self.shared.work.lock)
    }

    /// Counts a scope that is about to queue its first work. Where the
    /// device lacks concurrent managed access, refused while a host view of
    /// unified memory is alive.
    pub(crate) fn begin_scope_work(&self) -> Result<()> {
        let work = &self.shared.work;
        if self.shared.limits.concurrent_managed_access {
            work.scopes.fetch_add(1, Ordering::AcqRel);
            return Ok(());
        }
        self.count_device_work(
            "device work cannot start while a host view of unified memory of the context is \
             alive (drop the view first)",
        )
    }

    /// On a device without concurrent managed access: counts device work
    /// about to start, refused (`refusal`) while a host view of unified
    /// memory is alive.
    fn count_device_work(&self, refusal: &'static str) -> Result<()> {
        let work = &self.shared.work;
        let _g = self.work_lock();
        if work.host_views.load(Ordering::Acquire) > 0 {
            return Err(self.unified_access(refusal));
        }
        work.scopes.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// Uncounts a scope that has synchronized.
    pub(crate) fn end_scope_work(&self) {
        self.shared.work.scopes.fetch_sub(1, Ordering::AcqRel);
    }

    /// Prepares a synchronous operation (a copy or memset on the legacy
    /// stream): waits for every scope's queued work first when any is
    /// pending, so that the operation sees all work queued before it; where
    /// the device lacks concurrent managed access, also counts the
    /// operation as device work for as long as the guard lives.
    pub(crate) fn sync_work(&self) -> Result<SyncWork<'_>> {
        // Before any lock: on the driver's callback thread a lock another
        // thread holds across a wait for this callback would never come.
        release::refuse_in_callback("a synchronous copy or memset")?;
        self.refuse_during_capture(
            "a synchronous copy or memset (it waits for the context with cuCtxSynchronize and \
             runs on the legacy stream)",
        )?;
        let work = &self.shared.work;
        let counted = if self.shared.limits.concurrent_managed_access {
            false
        } else {
            self.count_device_work(
                "a synchronous copy or memset cannot run while a host view of unified memory \
                 of the context is alive (drop the view first)",
            )?;
            true
        };
        let guard = SyncWork { ctx: self, counted };
        // Our own count (where there is one) is not pending work.
        if work.scopes.load(Ordering::Acquire) > usize::from(counted) {
            self.synchronize()?;
        }
        Ok(guard)
    }

    /// Opens a host view of unified memory. Where the device lacks
    /// concurrent managed access, refused while device work of the context
    /// may run; otherwise free.
    pub(crate) fn begin_host_view(&self) -> Result<HostViewToken<'_>> {
        if self.shared.limits.concurrent_managed_access {
            return Ok(HostViewToken {
                ctx: self,
                counted: false,
            });
        }
        let work = &self.shared.work;
        let _g = self.work_lock();
        if work.scopes.load(Ordering::Acquire) > 0 {
            return Err(self.unified_access(
                "a host view cannot be taken while device work of the context may run (a scope \
                 that queued work, on any thread, has not ended)",
            ));
        }
        // Synchronous operations have finished by now, but a kernel queued
        // by another library on the context could still run.
        self.synchronize()?;
        work.host_views.fetch_add(1, Ordering::AcqRel);
        Ok(HostViewToken {
            ctx: self,
            counted: true,
        })
    }

    /// Counts a stream capture that begins on this thread (graph capture,
    /// see `crate::work::graph`). The caller holds the stream's lock.
    pub(crate) fn begin_capture(&self) {
        {
            // Waits for context synchronizes that began before any capture
            // was counted; later ones see the count and wait stream by
            // stream instead.
            let _gate = match self.shared.work.sync_gate.write() {
                Ok(g) => g,
                Err(p) => p.into_inner(),
            };
            self.shared.work.captures.fetch_add(1, Ordering::AcqRel);
        }
        release::capture_begun();
        VIOLATION.with(|v| v.set(None));
    }

    /// Undoes [`Context::begin_capture`] for a capture the driver refused
    /// to begin.
    pub(crate) fn abandon_capture(&self) {
        self.shared.work.captures.fetch_sub(1, Ordering::AcqRel);
        release::capture_ended();
        VIOLATION.with(|v| v.set(None));
    }

    /// Uncounts a capture of this thread that has ended; returns the first
    /// operation refused on this thread while it ran, if any. After the
    /// thread's last capture, the releases that waited for it run.
    pub(crate) fn end_capture(&self) -> Option<&'static str> {
        let violation = VIOLATION.with(|v| v.take());
        self.shared.work.captures.fetch_sub(1, Ordering::AcqRel);
        release::capture_ended();
        violation
    }

    /// Whether a stream of the context is capturing (on any thread).
    #[inline]
    pub(crate) fn capturing(&self) -> bool {
        self.shared.work.captures.load(Ordering::Acquire) > 0
    }

    /// Refuses `operation` on a thread that is capturing (in thread-local
    /// mode the driver would refuse it there and invalidate the capture),
    /// recording it so that the capture ends with the error even if the
    /// caller drops it. Other threads' captures do not matter.
    #[inline]
    pub(crate) fn refuse_during_capture(&self, operation: &'static str) -> Result<()> {
        if !release::thread_capturing() {
            return Ok(());
        }
        VIOLATION.with(|v| {
            if v.get().is_none() {
                v.set(Some(operation));
            }
        });
        Err(Error::IllegalDuringCapture {
            operation,
            device: self.shared.device.ordinal(),
        })
    }

    /// Registers `state` (the stream `raw`) as used by the scope `scope`
    /// until it has waited (`end_pending`).
    pub(crate) fn begin_pending(
        &self,
        scope: u64,
        raw: cuda_sys::CUstream,
        state: &Arc<StreamState>,
    ) {
        lock(&self.shared.work.pending).push((scope, raw as usize, state.clone()));
    }

    /// Removes the scope's registrations (after it waited for its streams).
    pub(crate) fn end_pending(&self, scope: u64) {
        lock(&self.shared.work.pending).retain(|(s, _, _)| *s != scope);
    }

    /// Waits for the work scopes have queued, stream by stream, without
    /// synchronizing any capture: a stream captured now is waited for up to
    /// the fence recorded as it entered the capture (what it holds after
    /// that is captured, and does not run). For when a capture runs on the
    /// context and `cuCtxSynchronize` is not allowed.
    fn synchronize_pending(&self) -> Result<()> {
        let cu = self.enter()?;
        // Held across the waits: a scope removes its streams under this lock
        // before its borrows of them end, so every stream listed stays alive.
        let pending = lock(&self.shared.work.pending);
        let mut first = Ok(());
        for (_, raw, state) in pending.iter() {
            let r = stream_state::wait_stream(self, cu, *raw as cuda_sys::CUstream, state);
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    fn unified_access(&self, reason: &'static str) -> Error {
        Error::UnifiedAccess {
            device: self.shared.device.ordinal(),
            reason,
        }
    }

    /// The staged pipeline's state (see `memory::staged`).
    pub(crate) fn staging_slot(&self) -> &OnceCell<Box<dyn ContextResource>> {
        &self.shared.staging
    }

    /// Waits for all work of the context (`cuCtxSynchronize`). While a
    /// stream of the context is being captured on another thread, CUDA
    /// refuses to synchronize the context (and the refusal would invalidate
    /// that capture): then it waits instead for every stream that scopes
    /// have queued work on, a captured one up to the point where its capture
    /// began (its captured work does not run).
    ///
    /// # Errors
    ///
    /// Driver errors, including the sticky error of a faulted kernel (which
    /// poisons the context); [`Error::ContextPoisoned`];
    /// [`Error::IllegalDuringCapture`] on a thread that is capturing;
    /// [`Error::InsideHostCallback`] inside a host callback.
    pub fn synchronize(&self) -> Result<()> {
        // Refused on the driver's callback thread before the gate: a read
        // of it there can queue behind a capture's pending write, which
        // waits for another thread's read, held across a cuCtxSynchronize
        // that waits for this very callback.
        release::refuse_in_callback("Context::synchronize")?;
        self.refuse_during_capture("cuCtxSynchronize")?;
        self.drain_callback_releases();
        let gate = match self.shared.work.sync_gate.read() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if self.capturing() {
            drop(gate);
            self.synchronize_pending()?;
            return self.synchronize_foreign();
        }
        let cu = self.enter()?;
        // SAFETY: the context is current; no capture of the context can
        // begin while `gate` is held (see `sync_gate`).
        let rc = unsafe { (cu.cuCtxSynchronize)() };
        drop(gate);
        self.check("cuCtxSynchronize", rc)?;
        self.synchronize_foreign()
    }

    /// Registers `raw` (a stream of `owner`, another context, with state
    /// `state`) as queued work of scope `scope` that touches this context's
    /// memory (see `WorkTracker::foreign`), counted as a scope's work of
    /// this context until [`Context::end_foreign`].
    pub(crate) fn begin_foreign(
        &self,
        scope: u64,
        raw: cuda_sys::CUstream,
        state: &Arc<StreamState>,
        owner: &Context,
    ) -> Result<()> {
        let mut list = lock(&self.shared.work.foreign);
        if list
            .iter()
            .any(|(s, r, _, _)| *s == scope && *r == raw as usize)
        {
            return Ok(());
        }
        self.begin_scope_work()?;
        list.push((scope, raw as usize, state.clone(), owner.clone()));
        Ok(())
    }

    /// Removes the scope's foreign registrations (after it waited for its
    /// streams) and their counts.
    pub(crate) fn end_foreign(&self, scope: u64) {
        let mut list = lock(&self.shared.work.foreign);
        let before = list.len();
        list.retain(|(s, _, _, _)| *s != scope);
        for _ in list.len()..before {
            self.end_scope_work();
        }
    }

    /// Waits for the foreign streams registered on this context (each up
    /// to now, entered in its own context).
    fn synchronize_foreign(&self) -> Result<()> {
        // Held across the waits, as `pending` is: the scope removes its
        // streams under this lock before its borrows of them end.
        let list = lock(&self.shared.work.foreign);
        let waited = !list.is_empty();
        let mut first = Ok(());
        for (_, raw, state, owner) in list.iter() {
            let r = owner.enter().and_then(|cu| {
                stream_state::wait_stream(owner, cu, *raw as cuda_sys::CUstream, state)
            });
            if first.is_ok() {
                first = r;
            }
        }
        drop(list);
        if waited {
            // This thread's current context was switched by the waits.
            self.enter()?;
        }
        first
    }

    /// Free and total device memory in bytes (`cuMemGetInfo_v2`).
    ///
    /// # Errors
    ///
    /// Driver errors; [`Error::ContextPoisoned`].
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        let cu = self.enter()?;
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: valid out-pointers; the context is current.
        self.check("cuMemGetInfo_v2", unsafe {
            (cu.cuMemGetInfo)(&mut free, &mut total)
        })?;
        Ok((free, total))
    }

    /// Reads a context limit (`cuCtxGetLimit`).
    ///
    /// # Errors
    ///
    /// Driver errors; [`Error::ContextPoisoned`].
    pub fn limit(&self, limit: CUlimit) -> Result<usize> {
        let cu = self.enter()?;
        let mut value = 0usize;
        // SAFETY: a valid out-pointer; the context is current.
        self.check("cuCtxGetLimit", unsafe {
            (cu.cuCtxGetLimit)(&mut value, limit)
        })?;
        Ok(value)
    }

    /// Sets a context limit (`cuCtxSetLimit`).
    ///
    /// # Errors
    ///
    /// Driver errors; [`Error::ContextPoisoned`].
    pub fn set_limit(&self, limit: CUlimit, value: usize) -> Result<()> {
        let cu = self.enter()?;
        // SAFETY: the context is current; both arguments by value.
        self.check("cuCtxSetLimit", unsafe { (cu.cuCtxSetLimit)(limit, value) })
    }

    /// The range of stream priorities as (least, greatest); the greatest
    /// priority is the numerically lowest (`cuCtxGetStreamPriorityRange`).
    ///
    /// # Errors
    ///
    /// Driver errors; [`Error::ContextPoisoned`].
    pub fn stream_priority_range(&self) -> Result<(i32, i32)> {
        let cu = self.enter()?;
        let (mut least, mut greatest) = (0, 0);
        // SAFETY: valid out-pointers; the context is current.
        self.check("cuCtxGetStreamPriorityRange", unsafe {
            (cu.cuCtxGetStreamPriorityRange)(&mut least, &mut greatest)
        })?;
        Ok((least, greatest))
    }

    /// Best-effort recovery after a sticky error: releases this (last)
    /// handle of the primary context and resets it
    /// (`cuDevicePrimaryCtxRelease_v2`, `cuDevicePrimaryCtxReset_v2`). A new
    /// [`Context::new`] afterwards retains a fresh primary context, if the
    /// driver can give one; a new process is the dependable recovery.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] while other handles of this context exist
    /// (every buffer, stream and module borrows one, so they are gone by
    /// now); driver errors from the reset.
    pub fn reset(self) -> Result<()> {
        if self.shared.kept_exports.load(Ordering::Acquire) > 0 {
            return Err(Error::InvalidArgument(format!(
                "Context::reset: device {}'s context keeps objects exported over IPC whose \
                 Exported guard was never released; another process may still use them",
                self.device().ordinal()
            )));
        }
        if self.shared.green.is_some() {
            return Err(Error::InvalidArgument(
                "Context::reset applies to a primary context; a green context is destroyed when \
                 its last handle drops"
                    .into(),
            ));
        }
        // The registry lock is held from the uniqueness check to the reset:
        // `Context::on` retains under the same lock, so no other thread can
        // retain the primary context between our last-handle check and the
        // reset, which would destroy memory that thread is using.
        let mut reg = registry();
        let shared = match Arc::try_unwrap(self.shared) {
            Ok(shared) => shared,
            Err(shared) => {
                return Err(Error::InvalidArgument(format!(
                    "Context::reset needs the last handle of device {}'s context; {} exist",
                    shared.device.ordinal(),
                    Arc::strong_count(&shared)
                )))
            }
        };
        reg.retain(|(_, w)| w.strong_count() > 0);
        let cu = cu()?;
        shared.free_staging(cu);
        shared.released.store(true, Ordering::Relaxed);
        // SAFETY: releases the retain taken in Context::on, exactly once (the
        // `released` flag stops Drop from releasing again).
        let _ = unsafe { (cu.cuDevicePrimaryCtxRelease)(shared.device.as_raw()) };
        // SAFETY: resets the device's primary context. No cudakit object of
        // it is alive: they borrow a Context and this was the last handle,
        // and no new one can be made while `reg` is locked.
        let rc = unsafe { (cu.cuDevicePrimaryCtxReset)(shared.device.as_raw()) };
        drop(shared);
        drop(reg);
        check("cuDevicePrimaryCtxReset_v2", rc)?;
        Ok(())
    }
}

impl Shared {
    fn new(
        device: Device,
        raw: CUcontext,
        limits: DeviceLimits,
        green: Option<green::GreenState>,
    ) -> Shared {
        Shared {
            is_green: green.is_some(),
            device,
            raw,
            limits,
            poison: OnceCell::new(),
            drop_errors: Mutex::new(Vec::new()),
            arena: Arena::new(),
            metrics: MetricsCounters::default(),
            kernel_timing: AtomicBool::new(false),
            released: AtomicBool::new(false),
            kept_exports: AtomicUsize::new(0),
            work: WorkTracker::default(),
            peers: std::array::from_fn(|_| AtomicU64::new(0)),
            generation: GENERATIONS.fetch_add(1, Ordering::Relaxed),
            staging: OnceCell::new(),
            green,
        }
    }

    /// Frees the staged pipeline's chunks (before the context is released
    /// or reset); errors are ignored, as in any drop.
    fn free_staging(&self, cu: &Driver) {
        // SAFETY: the context is alive: a primary context is still retained
        // by this record, a green one is destroyed only after this (in
        // `GreenState::destroy`, from this record's drop).
        let _ = unsafe { (cu.cuCtxSetCurrent)(self.raw) };
        // The context is about to be released: this thread's launch path
        // must not take it for current without asking the driver again
        // (other threads' records may still name it: their next call is
        // refused by the driver and issued again after asking).
        LAUNCH_CURRENT.with(|c| c.set(0));
        if let Some(staging) = self.staging.get() {
            staging.release(cu, &self.arena, &mut |_, _| {});
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if crate::driver::forked() {
            // A child made by `fork`: everything here is the parent's (its
            // driver state did not survive the fork), and nothing is freed
            // or reported in this process.
            return;
        }
        // The last handle dropped where no driver call may be made (inside
        // a host callback, on a capturing thread) or, for a green context,
        // on a thread other than its own: the context and everything it
        // still holds are kept for the rest of the process, never released
        // there.
        let here_not_allowed = release::in_driver_callback()
            || release::thread_capturing()
            || self
                .green
                .as_ref()
                .is_some_and(|g| !g.owned_here(self as *const Shared as usize));
        if here_not_allowed {
            eprintln!(
                "cudakit: the last handle of device {}'s context was dropped inside a host \
                 callback, during a capture or off its green context's thread: the context and \
                 what it holds are kept (not released) for the rest of the process",
                self.device.ordinal()
            );
            std::mem::forget(std::mem::take(&mut *lock(&self.work.from_callbacks)));
            if let Some(g) = self.green.take() {
                std::mem::forget(g);
            }
            return;
        }
        // Releases that drops on driver callback threads handed over and no
        // cudakit thread ran yet: run now, with the context current.
        let left = std::mem::take(&mut *lock(&self.work.from_callbacks));
        if !left.is_empty() {
            if let Ok(cu) = cu() {
                // SAFETY: the context is alive: a primary context is still
                // retained by this record, a green one is destroyed only
                // after this (`GreenState::destroy`, below).
                let _ = unsafe { (cu.cuCtxSetCurrent)(self.raw) };
                LAUNCH_CURRENT.with(|c| c.set(0));
                for r in left {
                    r.run_raw(cu, &self.arena);
                }
            }
        }
        if !self.released.load(Ordering::Relaxed) {
            if let Ok(cu) = cu() {
                self.free_staging(cu);
            }
        }
        let report = self.arena.leak_report();
        if !report.is_empty() {
            eprintln!(
                "cudakit: the context of device {} is dropped with {report}",
                self.device.ordinal()
            );
        }
        if self.released.load(Ordering::Relaxed) {
            return;
        }
        if let Some(g) = &self.green {
            // Waits for the green context's work, then destroys it (or
            // keeps it, when the wait failed); its primary context is
            // released afterwards, with the `parent` field.
            g.destroy(self.raw);
            return;
        }
        if self.kept_exports.load(Ordering::Acquire) > 0 {
            // Memory or events exported over IPC and never released live in
            // this context: releasing it would free them under the other
            // process. The retain is kept.
            eprintln!(
                "cudakit: device {}'s context keeps {} object(s) exported over IPC whose guard \
                 was never released: the context is kept retained",
                self.device.ordinal(),
                self.kept_exports.load(Ordering::Acquire)
            );
            return;
        }
        if let Ok(cu) = cu() {
            // SAFETY: releases the retain taken in Context::on, exactly once.
            let _ = unsafe { (cu.cuDevicePrimaryCtxRelease)(self.device.as_raw()) };
        }
    }
}

/// Context identities handed out so far (0 is none).
static GENERATIONS: AtomicU64 = AtomicU64::new(1);

/// What runs when a context is poisoned: set once by the room above that
/// waits on work (`work::future`, whose pending futures must poll again
/// and see the poison), so that this room does not reach up into it.
static ON_POISON: OnceCell<fn()> = OnceCell::new();

/// Registers the poison hook (see [`ON_POISON`]); later calls do nothing.
pub(crate) fn on_poison(hook: fn()) {
    let _ = ON_POISON.get_or_init(|| hook);
}

/// A context handle that does not keep it alive (see `Context::downgrade`).
pub(crate) struct WeakContext(Weak<Shared>);

impl WeakContext {
    /// The context, if it is still alive.
    pub(crate) fn upgrade(&self) -> Option<Context> {
        self.0.upgrade().map(|shared| Context { shared })
    }
}

/// Refuses to mix objects of two contexts.
pub(crate) fn same_context(what: &'static str, a: &Context, b: &Context) -> Result<()> {
    if a.same(b) {
        Ok(())
    } else {
        Err(Error::ContextMismatch {
            what,
            a: a.device().ordinal(),
            b: b.device().ordinal(),
        })
    }
}

/// A synchronous operation in progress (see [`Context::sync_work`]).
pub(crate) struct SyncWork<'a> {
    ctx: &'a Context,
    counted: bool,
}

impl Drop for SyncWork<'_> {
    fn drop(&mut self) {
        if self.counted {
            self.ctx.end_scope_work();
        }
    }
}

/// A live host view of unified memory (see [`Context::begin_host_view`]).
pub(crate) struct HostViewToken<'a> {
    ctx: &'a Context,
    counted: bool,
}

impl Drop for HostViewToken<'_> {
    fn drop(&mut self) {
        if self.counted {
            self.ctx
                .shared
                .work
                .host_views
                .fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// Per-context state of a room above this one (the staged pipeline's
/// chunks), released with the context: before `Context::reset` and when the
/// last handle drops, with the context current.
pub(crate) trait ContextResource: std::any::Any + Send + Sync {
    /// Hands everything back; errors go to `record`.
    fn release(
        &self,
        cu: &Driver,
        arena: &Arena,
        record: &mut dyn FnMut(&'static str, cuda_sys::CUresult),
    );
    /// For the owner's downcast.
    fn as_any(&self) -> &dyn std::any::Any;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the layout comment on `Shared` claims: the fields a launch
    /// reads end within the record's first 64 bytes; the record is 64-byte
    /// aligned and over a kilobyte; in an `Arc` (two counts first) it
    /// starts on a line boundary, so the counts lie on the line before it.
    #[test]
    fn the_launch_fields_fill_the_records_first_line() {
        use std::mem::{align_of, offset_of, size_of};
        assert_eq!(align_of::<Shared>(), 64);
        assert!(size_of::<Shared>() > 1024, "{}", size_of::<Shared>());
        assert_eq!(offset_of!(Shared, raw), 0);
        let ends = [
            offset_of!(Shared, raw) + size_of::<CUcontext>(),
            offset_of!(Shared, generation) + size_of::<u64>(),
            offset_of!(Shared, device) + size_of::<Device>(),
            offset_of!(Shared, kernel_timing) + size_of::<AtomicBool>(),
            offset_of!(Shared, is_green) + size_of::<bool>(),
            offset_of!(Shared, poison) + size_of::<OnceCell<DriverError>>(),
        ];
        assert!(ends.iter().all(|&end| end <= 64), "{ends:?}");
        // Any 64-byte aligned record, as `Shared` is: the `Arc`'s data
        // pointer is on a line boundary, with the counts before it.
        #[repr(C, align(64))]
        struct Aligned([u8; 64]);
        let arc = Arc::new(Aligned([0; 64]));
        assert_eq!(Arc::as_ptr(&arc) as usize % 64, 0);
        assert_eq!(arc.0.len(), 64);
    }
}
