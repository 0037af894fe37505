//! Pageable transfers without staging: the caller's own pages are
//! registered with the driver (`cuMemHostRegister_v2`) for the length of
//! one transfer, the DMA runs straight from (or into) them, and they are
//! unregistered before the call returns.
//!
//! # Why only for the call
//!
//! A registration outliving the caller's borrow would be unsound: once the
//! borrow ends the memory may be unmapped and the address reused by an
//! unrelated mapping, while the driver's registration still translates the
//! address to the old, pinned physical pages. A later DMA "from" that
//! address would read stale pages (a silent wrong answer). So the pages are
//! registered, used and unregistered inside the call that borrows them:
//! register → copy → wait → unregister.
//!
//! # What is registered
//!
//! Only the whole [`ALIGN`]-sized blocks inside the caller's range: nothing
//! outside the borrow is ever registered, so two transfers of disjoint
//! buffers never overlap (and cannot make each other's registration fail),
//! whatever the system's page size up to 64 KiB. The few bytes before and
//! after go through the lane's first page-locked chunk.
//!
//! # Failures
//!
//! A refused registration (memory the driver cannot pin, a range someone
//! else registered: `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`, a device
//! without the feature) is no error: the transfer is staged instead. A
//! failed wait for the DMA keeps the registration for ever (rule 2: the DMA
//! may still use the pages), recorded as kept in the arena; cudakit itself
//! then never treats that range as page-locked (see [`page_locked_not_ours`]).
//!
//! # Threads
//!
//! While cudakit holds a transient registration, the driver reports the
//! range as page-locked to anyone who asks. Another thread's cudakit copy
//! of the same bytes (a shared borrow of the source) must not take that
//! for page-locked memory and queue an asynchronous DMA from it that could
//! outlive the registration: [`page_locked_not_ours`] tells `is_page_locked`
//! that such a range is cudakit's, and the copy treats it as pageable.

use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use cuda_sys::{CUdeviceptr, CUresult, CUstream, CU_MEMHOSTREGISTER_READ_ONLY};

use super::staged::{finish, order_after, Lane, CHUNK};

const _: () = assert!(2 * ALIGN <= CHUNK, "the edges fit in one chunk");
use crate::context::Context;
use crate::error::Result;
use crate::memory::{byte_len, same_len, DeviceBuffer, DeviceCopy};

/// Registered blocks are whole multiples of this, at addresses that are
/// multiples of it (64 KiB: every page size Linux uses for host memory on
/// the platforms CUDA supports, but the huge ones).
pub(crate) const ALIGN: usize = 64 << 10;

/// Ranges cudakit registered for a transfer (start, end), from just
/// before `cuMemHostRegister_v2` until just after a successful
/// `cuMemHostUnregister`; kept for ever when the unregistration did not
/// happen.
static OURS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
/// How many entries `OURS` holds (raised before a registration begins).
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Raised once per registration, after `LIVE` and before the driver call:
/// a probe that saw `LIVE == 0` and the same generation before and after
/// it cannot have seen a registration of cudakit's.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The last measured cost of a registration and its unregistration, in
/// nanoseconds per MiB (0: not measured yet); `PageablePolicy::Auto`
/// registers only while it is low.
static COST_NS_PER_MIB: AtomicU64 = AtomicU64::new(0);

/// The last measured cost of registering and unregistering a range, in
/// nanoseconds per MiB; `None` before the first registered transfer.
pub fn measured_cost_ns_per_mib() -> Option<u64> {
    match COST_NS_PER_MIB.load(Ordering::Relaxed) {
        0 => None,
        c => Some(c),
    }
}

/// Whether `ptr` lies in a range cudakit has registered for a transfer of
/// its own (or kept after a failed wait): such memory is pageable to every
/// other copy, which must never queue DMA from it that could outlive the
/// registration. `probe` is the driver's answer for `ptr`
/// (`is_page_locked`'s `cuPointerGetAttribute`), asked here so that the
/// answer and this check see the same registrations.
pub(crate) fn page_locked_not_ours(ptr: *const u8, probe: impl Fn() -> bool) -> bool {
    let generation = GENERATION.load(Ordering::SeqCst);
    let live = LIVE.load(Ordering::SeqCst);
    if !probe() {
        return false;
    }
    if live == 0 && GENERATION.load(Ordering::SeqCst) == generation {
        // No registration of cudakit's was live when the probe began, and
        // none began before it ended: the page-locked memory is not ours.
        return true;
    }
    // Under the lock no registration of ours begins or ends: a range that
    // is not listed is not registered by cudakit now.
    let ours = crate::context::lock(&OURS);
    let p = ptr as usize;
    if ours.iter().any(|&(s, e)| s <= p && p < e) {
        return false;
    }
    probe()
}

/// A transient registration of `[start, start + len)`, and how long the
/// driver took to make it.
struct Registration {
    start: usize,
    len: usize,
    took: std::time::Duration,
}

/// Registers the whole [`ALIGN`] blocks of `[host, host + bytes)` (read
/// only for an upload where the device supports it); `None` when there
/// are too few of them, or the driver refused (the caller stages). A
/// sticky error is returned.
fn register(
    ctx: &Context,
    host: usize,
    bytes: usize,
    upload: bool,
) -> Result<Option<Registration>> {
    let start = host.div_ceil(ALIGN) * ALIGN;
    let end = (host + bytes) / ALIGN * ALIGN;
    // Worth it only when the registered part is most of the transfer.
    if end <= start || end - start < bytes / 2 {
        return Ok(None);
    }
    let len = end - start;
    let cu = ctx.enter()?;
    {
        let mut ours = crate::context::lock(&OURS);
        LIVE.fetch_add(1, Ordering::SeqCst);
        GENERATION.fetch_add(1, Ordering::SeqCst);
        ours.push((start, end));
    }
    let flags: &[u32] = if upload {
        &[CU_MEMHOSTREGISTER_READ_ONLY, 0]
    } else {
        &[0]
    };
    let mut rc = CUresult::CUDA_SUCCESS;
    for &f in flags {
        let t = Instant::now();
        // SAFETY: `[start, start + len)` lies inside the caller's borrowed
        // range (rounded inwards), which stays mapped for the call; the
        // registration is undone before the call returns (or kept for ever
        // after a failed wait), and the range is listed as ours meanwhile.
        rc = unsafe { (cu.cuMemHostRegister)(start as *mut _, len, f) };
        if rc == CUresult::CUDA_SUCCESS {
            let took = t.elapsed();
            return Ok(Some(Registration { start, len, took }));
        }
        if rc == CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED {
            break;
        }
    }
    forget_ours(start, end);
    // A refusal is no error (the transfer is staged), unless it is sticky.
    match ctx.check("cuMemHostRegister_v2", rc) {
        Err(e) if e.is_sticky() => Err(e),
        _ => Ok(None),
    }
}

/// Removes the entry `(start, end)` from the list of our registrations
/// (the exact pair: a refused attempt on a range that starts where a live
/// one does must not unlist the live one).
fn forget_ours(start: usize, end: usize) {
    let mut ours = crate::context::lock(&OURS);
    if let Some(i) = ours.iter().position(|&r| r == (start, end)) {
        ours.swap_remove(i);
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Registration {
    /// Undoes the registration after the transfer's DMA is known to be
    /// over (`waited`), or keeps it for ever (recorded as kept) when not.
    fn end(self, ctx: &Context, waited: bool) {
        if !waited {
            ctx.arena().record_kept(
                self.len,
                "pages registered for a transfer whose wait failed",
            );
            return;
        }
        let t = Instant::now();
        let rc = match ctx.enter_for_drop() {
            // SAFETY: registered by `register` at this address; the DMA
            // that used it has finished (the lane's streams were waited
            // for); unregistered once.
            Some(cu) => unsafe { (cu.cuMemHostUnregister)(self.start as *mut _) },
            None => CUresult::CUDA_ERROR_NOT_INITIALIZED,
        };
        ctx.record_drop_error("cuMemHostUnregister", rc);
        if rc == CUresult::CUDA_SUCCESS {
            forget_ours(self.start, self.start + self.len);
            let mib = (self.len >> 20).max(1) as u64;
            let ns = (self.took + t.elapsed()).as_nanos() as u64 / mib;
            COST_NS_PER_MIB.store(ns.max(1), Ordering::Relaxed);
        } else {
            ctx.arena()
                .record_kept(self.len, "pages whose unregistration the driver refused");
        }
    }
}

/// Whether `finish`'s outcome means the DMA is known to be over: it
/// returns only once both streams were waited for (also when it reports an
/// error: a failed first wait was tried again, and a second failure aborts
/// the process), or after a sticky error, which stopped the context's
/// work; the pages are kept registered then all the same, as the boxes of
/// host callbacks are (rule 2: nothing the work may still use is given up
/// on an error's word).
fn waited(done: &Result<()>) -> bool {
    match done {
        Ok(()) => true,
        Err(e) => !e.is_sticky(),
    }
}

/// Host to device from the caller's registered pages. `Ok(false)` when
/// they could not be registered (nothing was queued: the caller stages).
///
/// # Safety
///
/// As `staged::htod`; `lane` is the context's host-to-device lane, locked
/// by the caller, whose previous transfer has finished.
pub(crate) unsafe fn htod(
    ctx: &Context,
    lane: &Lane,
    dst: CUdeviceptr,
    src: *const u8,
    bytes: usize,
    after: CUstream,
) -> Result<bool> {
    let Some(reg) = register(ctx, src as usize, bytes, true)? else {
        return Ok(false);
    };
    // SAFETY: the caller's contract; `reg` covers whole blocks inside
    // `[src, src + bytes)`.
    let (queued, done) = unsafe { htod_in(ctx, lane, &reg, dst, src, bytes, after) };
    reg.end(ctx, waited(&done));
    queued.and(done).map(|()| true)
}

/// The body of [`htod`] over a registration `reg` of whole blocks inside
/// `[src, src + bytes)`: queues the edges through the lane's first chunk
/// and the registered middle straight from the caller's pages, and waits
/// (`finish`). Returns what queueing and what the wait reported; the DMA
/// is over unless the wait's result says otherwise (`waited`).
///
/// # Safety
///
/// As [`htod`], and `reg` registered by this context inside the range.
unsafe fn htod_in(
    ctx: &Context,
    lane: &Lane,
    reg: &Registration,
    dst: CUdeviceptr,
    src: *const u8,
    bytes: usize,
    after: CUstream,
) -> (Result<()>, Result<()>) {
    let head = reg.start - src as usize;
    let tail = src as usize + bytes - (reg.start + reg.len);
    let queued = (|| -> Result<()> {
        let cu = ctx.enter()?;
        order_after(ctx, lane, after)?;
        let chunk = lane.chunks[0];
        // SAFETY: the head and tail (each under ALIGN bytes, together
        // under CHUNK) are readable bytes of the caller's range; the chunk
        // is not read by any DMA (the lane's previous transfer finished).
        unsafe {
            ptr::copy_nonoverlapping(src, chunk, head);
            ptr::copy_nonoverlapping(src.add(bytes - tail), chunk.add(head), tail);
        }
        let s = lane.streams[0];
        for (d, h, n) in [
            (dst, chunk as usize, head),
            (dst + (bytes - tail) as u64, chunk as usize + head, tail),
            (dst + head as u64, reg.start, reg.len),
        ] {
            if n == 0 {
                continue;
            }
            // SAFETY: `n` bytes of page-locked memory (the chunk, or the
            // range registered above) to `n` bytes of device memory inside
            // the caller's range; both stay valid until `finish` below has
            // waited for the stream.
            ctx.check("cuMemcpyHtoDAsync_v2", unsafe {
                (cu.cuMemcpyHtoDAsync)(d, h as *const _, n, s)
            })?;
        }
        Ok(())
    })();
    let done = finish(ctx, lane);
    (queued, done)
}

/// Device to host into the caller's registered pages; see [`htod`].
///
/// # Safety
///
/// As `staged::dtoh`; `lane` is the context's device-to-host lane, locked
/// by the caller, whose previous transfer has finished.
pub(crate) unsafe fn dtoh(
    ctx: &Context,
    lane: &Lane,
    dst: *mut u8,
    src: CUdeviceptr,
    bytes: usize,
    after: CUstream,
) -> Result<bool> {
    let Some(reg) = register(ctx, dst as usize, bytes, false)? else {
        return Ok(false);
    };
    // SAFETY: the caller's contract; `reg` covers whole blocks inside
    // `[dst, dst + bytes)`.
    let (queued, done) = unsafe { dtoh_in(ctx, lane, &reg, dst, src, bytes, after) };
    reg.end(ctx, waited(&done));
    queued.and(done).map(|()| true)
}

/// The body of [`dtoh`] over a registration `reg` of whole blocks inside
/// `[dst, dst + bytes)`; see [`htod_in`].
///
/// # Safety
///
/// As [`dtoh`], and `reg` registered by this context inside the range.
unsafe fn dtoh_in(
    ctx: &Context,
    lane: &Lane,
    reg: &Registration,
    dst: *mut u8,
    src: CUdeviceptr,
    bytes: usize,
    after: CUstream,
) -> (Result<()>, Result<()>) {
    let head = reg.start - dst as usize;
    let tail = dst as usize + bytes - (reg.start + reg.len);
    let chunk = lane.chunks[0];
    let queued = (|| -> Result<()> {
        let cu = ctx.enter()?;
        order_after(ctx, lane, after)?;
        let s = lane.streams[0];
        for (h, d, n) in [
            (chunk as usize, src, head),
            (chunk as usize + head, src + (bytes - tail) as u64, tail),
            (reg.start, src + head as u64, reg.len),
        ] {
            if n == 0 {
                continue;
            }
            // SAFETY: `n` bytes of device memory inside the caller's range
            // into `n` bytes of page-locked memory (the chunk, which no
            // other DMA uses now, or the range registered above); both stay
            // valid until `finish` below has waited for the stream.
            ctx.check("cuMemcpyDtoHAsync_v2", unsafe {
                (cu.cuMemcpyDtoHAsync)(h as *mut _, d, n, s)
            })?;
        }
        Ok(())
    })();
    let done = finish(ctx, lane);
    if queued.is_ok() && done.is_ok() {
        // SAFETY: the DMA into the chunk has finished (waited for above);
        // the head and tail are writable bytes of the caller's range, not
        // otherwise accessed during the call.
        unsafe {
            ptr::copy_nonoverlapping(chunk, dst, head);
            ptr::copy_nonoverlapping(chunk.add(head), dst.add(bytes - tail), tail);
        }
    }
    (queued, done)
}

/// Undoes a scope's registration when [`Context::with_registered`] returns
/// or unwinds: after every transfer of the scope has ended (each waits
/// before it returns), or never when one's wait failed with a sticky error
/// or the context is poisoned.
struct ScopeEnd<'c> {
    ctx: &'c Context,
    reg: Option<Registration>,
    kept: AtomicBool,
}

impl Drop for ScopeEnd<'_> {
    fn drop(&mut self) {
        if let Some(reg) = self.reg.take() {
            // A poisoned context stopped its work at an error that no wait
            // can be trusted past: other work of the closure (a scope's
            // copy of the registered pages, which the driver takes for
            // page-locked ones) may not have ended, so the registration is
            // kept as after a failed wait.
            let waited = !self.kept.load(Ordering::SeqCst) && self.ctx.poisoned().is_none();
            reg.end(self.ctx, waited);
        }
    }
}

/// A host slice registered with the driver (`cuMemHostRegister_v2`) for the
/// length of one [`Context::with_registered`] call: its transfers to and
/// from device buffers run as DMA straight from (into) the caller's pages,
/// at page-locked speed, without the registration's cost each time.
///
/// Only the whole 64 KiB blocks inside the slice are registered; its first
/// and last bytes go through a page-locked chunk of cudakit's. When the
/// driver refuses the registration (or the slice has too few whole blocks:
/// less than half of it), [`RegisteredHost::is_registered`] is `false` and
/// the transfers are the ordinary, staged ones.
///
/// Every transfer is synchronous: it returns when its DMA is over, also on
/// an error, so the slice is never touched by the device outside a call.
/// It is handed to the closure only by reference: it cannot be kept, moved
/// out or forgotten, and the registration ends before `with_registered`
/// returns, with the borrow of the slice.
pub struct RegisteredHost<'r, T: DeviceCopy> {
    ctx: &'r Context,
    host: &'r mut [T],
    reg: Option<&'r Registration>,
    kept: &'r AtomicBool,
}

impl<T: DeviceCopy> std::fmt::Debug for RegisteredHost<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the elements: a registered slice is typically large.
        f.debug_struct("RegisteredHost")
            .field("len", &self.host.len())
            .field("registration", &self.reg)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("start", &format_args!("{:#x}", self.start))
            .field("len", &self.len)
            .finish()
    }
}

impl Context {
    /// Registers `host` with the driver, runs `f` with it, and undoes the
    /// registration before returning (also when `f` panics), so that many
    /// transfers of the same pageable memory pay for one registration.
    /// Transfers of `host` go through [`RegisteredHost::upload_to`] and
    /// [`RegisteredHost::download_from`].
    ///
    /// Registering and undoing it cost about 60 µs per MiB on the H200
    /// (`cudakit bench --only both`), several times one staged transfer of
    /// the same bytes: worth it for memory that is transferred again and
    /// again, not for a one-off copy.
    ///
    /// The registration is never kept past the call: once the borrow of
    /// `host` ends, its memory may be unmapped and the address reused,
    /// while a registration would still map it to the old pages. A
    /// transfer whose wait failed with a sticky error may still be using
    /// the pages; then (as for every transfer) the registration is kept
    /// for ever and recorded as kept in the arena.
    ///
    /// ```no_run
    /// # fn main() -> cudakit::Result<()> {
    /// let ctx = cudakit::Context::new(0)?;
    /// let mut frames = vec![0.0f32; 64 << 20];
    /// let dev = ctx.alloc::<f32>(frames.len())?;
    /// ctx.with_registered(&mut frames, |host| -> cudakit::Result<()> {
    ///     for step in 0..100 {
    ///         host.as_mut_slice()[0] = step as f32;
    ///         host.upload_to(&dev)?;
    ///         // ... kernels on `dev` ...
    ///         host.download_from(&dev)?;
    ///     }
    ///     Ok(())
    /// })??;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`crate::Error::ZeroLength`] or a size overflow for `host`; the
    /// capture error on a thread that is capturing (the driver would refuse
    /// the registration and invalidate the capture);
    /// [`crate::Error::InsideHostCallback`] on the driver's callback
    /// thread; a sticky error from the registration. A refused registration is no error
    /// ([`RegisteredHost::is_registered`]).
    pub fn with_registered<T: DeviceCopy, R>(
        &self,
        host: &mut [T],
        f: impl FnOnce(&mut RegisteredHost<'_, T>) -> R,
    ) -> Result<R> {
        crate::context::release::refuse_in_callback("with_registered")?;
        let bytes = byte_len::<T>(host.len(), "with_registered")?;
        // The driver refuses a registration on a capturing thread and
        // invalidates the capture: refused here, naming it.
        self.refuse_during_capture("with_registered (cuMemHostRegister_v2)")?;
        // Read-write: the scope's transfers go both ways.
        let reg = register(self, host.as_ptr() as usize, bytes, false)?;
        let end = ScopeEnd {
            ctx: self,
            reg,
            kept: AtomicBool::new(false),
        };
        let mut registered = RegisteredHost {
            ctx: self,
            host,
            reg: end.reg.as_ref(),
            kept: &end.kept,
        };
        Ok(f(&mut registered))
    }
}

impl<T: DeviceCopy> RegisteredHost<'_, T> {
    /// Whether the driver registered the slice (else its transfers are
    /// staged, as pageable ones are).
    pub fn is_registered(&self) -> bool {
        self.reg.is_some()
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.host.len()
    }

    /// Always `false`: [`Context::with_registered`] refuses empty slices.
    pub fn is_empty(&self) -> bool {
        self.host.is_empty()
    }

    /// The slice (no transfer is under way while it is borrowed).
    pub fn as_slice(&self) -> &[T] {
        self.host
    }

    /// The slice, to change (no transfer is under way while it is
    /// borrowed).
    pub fn as_mut_slice(&mut self) -> &mut [T] {
        self.host
    }

    /// Copies the whole slice into `dst`, synchronously, as
    /// [`DeviceBuffer::copy_from_host`] does (waiting first for pending
    /// work of the context's scopes).
    ///
    /// # Errors
    ///
    /// [`crate::Error::LengthMismatch`] unless `dst` holds as many
    /// elements; a context mismatch (a registration is its context's);
    /// driver errors.
    pub fn upload_to(&self, dst: &DeviceBuffer<'_, T>) -> Result<()> {
        // First: refused on the driver's callback thread before any lock
        // (`sync_work` could wait there for the callback itself).
        self.ctx.enter()?;
        same_len("upload_to", dst.len(), self.host.len())?;
        crate::context::same_context("upload_to", self.ctx, dst.context())?;
        let Some(reg) = self.reg else {
            return dst.copy_from_host(self.host);
        };
        let _nvtx = crate::nvtx::auto("copy HtoD (registered)");
        let bytes = byte_len::<T>(self.host.len(), "copy")?;
        let (ctx, src) = (self.ctx, self.host.as_ptr().cast::<u8>());
        let dptr = dst.device_ptr().as_raw();
        self.transfer(0, bytes, |lane| {
            // SAFETY: `src` is the slice's `bytes` readable bytes, borrowed
            // for the scope; `reg` is this context's registration of whole
            // blocks inside it; `dst` holds `bytes` bytes of this context's
            // device memory (length and context checked above), borrowed
            // for the call; no ordering stream (`transfer`'s `sync_work`
            // waited for the scopes' work); the lane is locked and its last
            // transfer over.
            unsafe { htod_in(ctx, lane, reg, dptr, src, bytes, ptr::null_mut()) }
        })
    }

    /// Copies `src` into the whole slice, synchronously, as
    /// [`DeviceBuffer::copy_to_host`] does.
    ///
    /// # Errors
    ///
    /// As [`RegisteredHost::upload_to`].
    pub fn download_from(&mut self, src: &DeviceBuffer<'_, T>) -> Result<()> {
        self.ctx.enter()?;
        same_len("download_from", src.len(), self.host.len())?;
        crate::context::same_context("download_from", self.ctx, src.context())?;
        let Some(reg) = self.reg else {
            return src.copy_to_host(self.host);
        };
        let _nvtx = crate::nvtx::auto("copy DtoH (registered)");
        let bytes = byte_len::<T>(self.host.len(), "copy")?;
        let (ctx, dst) = (self.ctx, self.host.as_mut_ptr().cast::<u8>());
        let sptr = src.device_ptr().as_raw();
        self.transfer(1, bytes, |lane| {
            // SAFETY: `dst` is the slice's `bytes` writable bytes, borrowed
            // exclusively (`&mut self`: nothing reads or writes them during
            // the call) and of a type valid for every bit pattern; `reg` is
            // this context's registration of whole blocks inside it; `src`
            // holds `bytes` bytes of this context's device memory (checked
            // above); as in `upload_to` otherwise.
            unsafe { dtoh_in(ctx, lane, reg, dst, sptr, bytes, ptr::null_mut()) }
        })
    }

    /// A registered transfer of direction `dir` (0 host to device): waits
    /// for the scopes' pending work, runs `copy` (which queues and waits)
    /// on the direction's lane, keeps the registration when the wait may
    /// not have seen the DMA end, and counts the bytes.
    fn transfer(
        &self,
        dir: usize,
        bytes: usize,
        copy: impl FnOnce(&Lane) -> (Result<()>, Result<()>),
    ) -> Result<()> {
        let ctx = self.ctx;
        let _work = ctx.sync_work()?;
        let t = Instant::now();
        let (queued, done) = super::staged::with_lane(ctx, dir, |lane| Ok(copy(lane)))?;
        if !waited(&done) {
            self.kept.store(true, Ordering::SeqCst);
        }
        queued.and(done)?;
        let counters = ctx.counters();
        let counter = if dir == 0 {
            &counters.htod
        } else {
            &counters.dtoh
        };
        counter.add(bytes, Some(t.elapsed()));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A range listed as ours is pageable to everyone while it is listed,
    /// whatever the driver answers; outside it, and once it is forgotten,
    /// the driver's answer stands. A registration that begins during the
    /// probe sends the check to the list.
    #[test]
    fn our_registrations_are_never_page_locked_to_other_copies() {
        let (start, end) = (0x7000_0000_0000usize, 0x7000_0100_0000usize);
        {
            let mut ours = crate::context::lock(&OURS);
            LIVE.fetch_add(1, Ordering::SeqCst);
            GENERATION.fetch_add(1, Ordering::SeqCst);
            ours.push((start, end));
        }
        assert!(!page_locked_not_ours((start + 5) as *const u8, || true));
        assert!(!page_locked_not_ours((end - 1) as *const u8, || true));
        assert!(page_locked_not_ours(end as *const u8, || true));
        assert!(!page_locked_not_ours((start + 5) as *const u8, || false));
        forget_ours(start, end - 1);
        assert!(
            !page_locked_not_ours((start + 5) as *const u8, || true),
            "another range with the same start does not unlist it"
        );
        forget_ours(start, end);
        assert!(page_locked_not_ours((start + 5) as *const u8, || true));
        // A registration of ours that begins while the probe runs.
        let probe = || {
            let mut ours = crate::context::lock(&OURS);
            if !ours.iter().any(|&(s, _)| s == start) {
                LIVE.fetch_add(1, Ordering::SeqCst);
                GENERATION.fetch_add(1, Ordering::SeqCst);
                ours.push((start, end));
            }
            true
        };
        assert!(!page_locked_not_ours((start + 5) as *const u8, probe));
        forget_ours(start, end);
    }
}
