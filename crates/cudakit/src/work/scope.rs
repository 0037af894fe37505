//! Scopes: where asynchronous work happens.
//!
//! `ctx.scope(|s| { ... })` runs a closure that queues copies and launches
//! on streams. Every buffer such work uses is borrowed for the whole scope
//! (shared where the work only reads it or it is device memory, exclusive
//! where the work writes host-visible memory), and before `scope` returns,
//! also when the closure panics, it synchronizes every stream the scope
//! used. So when the borrows end, the device is done with the buffers: none
//! can be freed, and no host slice of one handed out, while work on it may
//! still run. This is the same shape as `std::thread::scope`.
//!
//! Work on several streams of one scope is ordered where it shares memory:
//! an operation on a device range that another stream of the scope used
//! last first waits for that stream (an event wait). Work whose memory
//! cudakit cannot see (a graph replay, a peer copy, an array copy) waits
//! for every other stream, and every other stream waits for it once before
//! its next operation. A use inside a capture waits for nothing now (its
//! work runs at replays) and does not become its range's last use.
//!
//! ```no_run
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let stream = ctx.stream()?;
//! let input = ctx.upload(&[1.0f32, 2.0, 3.0])?;
//! let output = ctx.alloc::<f32>(3)?;
//! let mut host = ctx.alloc_pinned::<f32>(3)?;
//! ctx.scope(|s| {
//!     s.copy(&stream, &input, &output)?;        // device to device
//!     s.copy_to_host(&stream, &output, &mut host)?; // into pinned memory
//!     Ok(())
//! })?; // both copies have finished here
//! assert_eq!(&host[..], &[1.0, 2.0, 3.0]);
//! # Ok(()) }
//! ```

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use cuda_sys::{CUevent, CUstream};

use crate::context::release::{in_driver_callback, wait_elsewhere_or_abort};
use crate::context::same_context;
use crate::context::stream_state::{wait_stream, StreamInner, StreamOrigin, StreamState};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::memory::transfer::copy;
use crate::memory::{byte_len, same_len, DeviceCopy, DeviceDst, DeviceSrc, UnifiedBuffer};
use crate::work::event::Event;
use crate::work::stream::Stream;

/// What a timed operation was, for the metrics.
#[derive(Debug, Clone)]
pub(crate) enum Timed {
    Kernel(String),
    HtoD,
    DtoH,
    DtoD,
}

/// Something a scope owns on behalf of work it queued (a host function's
/// boxed closure), type-erased: freed by the scope after it waited for the
/// stream, on the scope's own thread, or kept forever (leaked on purpose)
/// when the wait failed.
pub(crate) struct Owned {
    /// The stream the work was queued on.
    pub(crate) stream: CUstream,
    pub(crate) ptr: *mut c_void,
    /// Bytes, for the arena's leak record.
    pub(crate) bytes: usize,
    /// Frees the box.
    pub(crate) free: unsafe fn(*mut c_void),
    /// Makes sure the work will never touch the box's contents again (a
    /// host function not yet started is cancelled, one running is waited
    /// for), so that what the box borrows may end.
    pub(crate) cancel: unsafe fn(*mut c_void),
    /// Whether the work is over (a host function that has run).
    pub(crate) finished: unsafe fn(*mut c_void) -> bool,
}

/// The handle a scope's closure queues work through
/// ([`Context::scope`]): launches, copies, captures and callbacks, on
/// streams of the context. What the work uses stays borrowed until the
/// scope has waited for its streams. See the module docs.
///
/// ```no_run
/// use cudakit::{params, Context, LaunchConfig, Program};
/// # fn main() -> cudakit::Result<()> {
/// let ctx = Context::new(0)?;
/// let compiled = Program::new("neg.cu", r#"
///     extern "C" __global__ void negate(float* x, unsigned n) {
///         unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
///         if (i < n) x[i] = -x[i];
///     }"#).compile_for(&ctx)?;
/// let module = ctx.load_module(&compiled)?;
/// let negate = module.function("negate")?;
/// let x = ctx.upload(&[1.0f32, 2.0, 3.0])?;
/// let mut host = [0.0f32; 3];
/// let stream = ctx.stream()?; // streams come from the context, not the scope
/// ctx.scope(|s| {
///     // SAFETY: negate reads and writes x[0..3), which x holds.
///     unsafe { s.launch(&stream, &negate, &LaunchConfig::new(1, 32), &params![&x, 3u32])? };
///     s.copy_to_host(&stream, &x, &mut host[..]) // in stream order, after the kernel
/// })?; // waits for `stream` before returning
/// assert_eq!(host, [-1.0, -2.0, -3.0]);
/// # Ok(()) }
/// ```
// `repr(C)` and 64-byte aligned: what a fast-path launch reads and writes
// (the four last noted ranges, then the context, the last stream, the
// counters and the flags) fills the first two cache lines; the rest is
// for the full path.
#[repr(C, align(64))]
pub struct Scope<'s, 'env: 's> {
    /// A range `note_use` found in, or added to, the table (`order`)
    /// since the table last lost an entry: noted again, it is skipped.
    last_noted: [Cell<(u64, u64)>; NOTED_RECENT],
    ctx: &'env Context,
    /// A stream `streams` holds (the last one used): the launch path's
    /// check that a stream is known costs one load for it.
    last_stream: Cell<Option<CUstream>>,
    /// Launches made through the scope, added to the context's metrics
    /// when it ends (one shared atomic update per scope, not per launch).
    launches: Cell<u64>,
    /// Of `launches`, those the launch fast path issued (tests only read
    /// it: [`Scope::fast_launches`]).
    fast_launches: Cell<u64>,
    /// The slot of `last_noted` the next new range takes.
    noted_next: Cell<usize>,
    /// Whether `streams` holds more than one.
    multi: Cell<bool>,
    /// Whether `tails` holds any (one load on the launch path).
    has_tails: Cell<bool>,
    /// Whether `barriers` holds any (one load on the launch path).
    has_barriers: Cell<bool>,
    /// Whether work of the scope touched memory the table does not know
    /// (see `note_use`): a stream new to the scope then waits for all the
    /// others once.
    untracked: Cell<bool>,
    /// Unique among the process's scopes (never reused, unlike an address).
    id: u64,
    streams: RefCell<Vec<(CUstream, Arc<StreamState>)>>,
    /// Whether the scope is counted as having queued work (see
    /// `Context::begin_scope_work`).
    counted: Cell<bool>,
    /// Other contexts whose memory peer copies of the scope touch: their
    /// synchronous operations wait for the scope's streams until it ends
    /// (`Context::begin_foreign`).
    peers: RefCell<Vec<Context>>,
    timings: RefCell<Vec<(Timed, Event<'env>, Event<'env>)>>,
    /// Host-function closures queued by the scope, freed after its wait.
    owned: RefCell<Vec<Owned>>,
    /// Streams whose last work queued by the scope is a host function of
    /// the scope, as (stream, index in `owned`): once that function has
    /// run, all of the scope's work on the stream is over (the driver calls
    /// it after the work queued before it, and the scope queued nothing
    /// after it), so the scope's end need not wait for the stream with an
    /// event (see `finish`). Cleared for a stream by every enqueue on it.
    tails: RefCell<Vec<(CUstream, usize)>>,
    /// Which stream used each device range last (once the scope uses more
    /// than one stream, or stream-ordered memory of another stream).
    order: RefCell<Vec<LastUse>>,
    /// Streams that wrote a module variable (`copy_to_global`), which any
    /// kernel may read without naming it: every other stream of the scope
    /// waits for such a stream once, before its next operation. With the
    /// streams that already did.
    barriers: RefCell<Vec<Barrier>>,
    /// Streams made by [`Scope::stream`], destroyed when the scope is
    /// (after its wait). Boxed on purpose: a stream handed out must never
    /// move, and a `Vec<Stream>` would move its elements when it grows.
    #[allow(clippy::vec_box)]
    made: RefCell<Vec<Box<Stream<'env>>>>,
    /// What replays of executable graphs launched by the scope use (their
    /// graphs' host-node callbacks), kept alive until the scope's wait even
    /// if the graph is dropped (or forgotten) first.
    keep_alive: RefCell<Vec<Arc<dyn Any + Send + Sync>>>,
    _scope: PhantomData<&'s mut &'s ()>,
}

impl std::fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("id", &self.id)
            .field("streams", &self.streams.borrow().len())
            .finish()
    }
}

static NEXT_SCOPE: AtomicU64 = AtomicU64::new(1);

/// Device memory an operation uses: (address, bytes, the allocation stream
/// of stream-ordered memory).
pub(crate) type Use = (u64, u64, Option<StreamOrigin>);

/// A stream after whose module-variable write the scope's other streams
/// wait (see `Scope::barriers`): (stream, its state, streams that waited).
type Barrier = (CUstream, Arc<StreamState>, Vec<usize>);

/// How an enqueue is ordered against the scope's other streams.
enum Ordering_<I> {
    /// After the last uses of this memory on other streams.
    Uses(I),
    /// After everything the other streams queued.
    All,
}

/// How many of the ranges noted last a scope remembers, so that the same
/// arguments launched again are noted without a look at the table.
const NOTED_RECENT: usize = 4;

/// How many distinct device ranges a scope notes while it uses one stream.
const NOTED_RANGES: usize = 64;

/// How long a scope's end spins for its last host function on a stream
/// before it waits for the stream with an event instead (`Scope::tail_ran`).
const TAIL_SPIN: Duration = Duration::from_micros(200);
/// How long of that it spins without yielding the core.
const TAIL_SPIN_HOT: Duration = Duration::from_micros(30);

/// The last use of a device range in a scope: by which stream.
struct LastUse {
    start: u64,
    end: u64,
    stream: usize,
    /// That stream's state (alive for the scope: see `order_use`).
    state: *const StreamState,
}

/// A stream in use by one enqueue of a scope: its capture lock is held from
/// the capture check to the driver call, so no capture can begin or end in
/// between (see `crate::context::stream_state`). Dereferences to the raw
/// stream; dropped right after the enqueue.
pub(crate) struct StreamUse<'a> {
    raw: CUstream,
    guard: MutexGuard<'a, StreamInner>,
}

impl StreamUse<'_> {
    /// Whether the stream is captured (by the scope using it: any other
    /// capture was refused).
    pub(crate) fn captured(&self) -> bool {
        self.guard.capture.is_some()
    }

    /// The capture the stream belongs to, if any.
    pub(crate) fn capture_record(
        &self,
    ) -> Option<&Arc<crate::context::stream_state::CaptureRecord>> {
        self.guard.capture.as_ref()
    }

    /// The locked state.
    pub(crate) fn inner(&mut self) -> &mut StreamInner {
        &mut self.guard
    }
}

impl std::ops::Deref for StreamUse<'_> {
    type Target = CUstream;
    fn deref(&self) -> &CUstream {
        &self.raw
    }
}

impl Context {
    /// Runs `f`, in which work is queued on streams through the [`Scope`];
    /// then waits for every stream the scope used, and returns what `f`
    /// returned. See [`crate::work::scope`].
    ///
    /// # Errors
    ///
    /// The first error of `f`, or else the first error of synchronizing
    /// (a faulted kernel's sticky error, which poisons the context).
    ///
    /// # Panics
    ///
    /// Never on its own; but should every wait for the scope's work fail
    /// while that work may still run (a wait refused twice, the second time
    /// on a fresh thread, with an error that is not sticky), the process is
    /// aborted: returning would end borrows that queued copies and kernels
    /// may still write through, and there is no safe way to go on.
    pub fn scope<'env, R>(
        &'env self,
        f: impl for<'s> FnOnce(&'s Scope<'s, 'env>) -> Result<R>,
    ) -> Result<R> {
        // A scope's end takes the context's pending-work lock, which a
        // synchronizing thread can hold while it waits for this very
        // callback: refused on the driver's callback thread, as every
        // cudakit call there is.
        crate::context::release::refuse_in_callback("Context::scope")?;
        let scope = Scope {
            ctx: self,
            id: NEXT_SCOPE.fetch_add(1, Ordering::Relaxed),
            streams: RefCell::new(Vec::new()),
            last_stream: Cell::new(None),
            multi: Cell::new(false),
            has_tails: Cell::new(false),
            last_noted: Default::default(),
            noted_next: Cell::new(0),
            counted: Cell::new(false),
            peers: RefCell::new(Vec::new()),
            launches: Cell::new(0),
            fast_launches: Cell::new(0),
            timings: RefCell::new(Vec::new()),
            owned: RefCell::new(Vec::new()),
            tails: RefCell::new(Vec::new()),
            order: RefCell::new(Vec::new()),
            untracked: Cell::new(false),
            barriers: RefCell::new(Vec::new()),
            has_barriers: Cell::new(false),
            made: RefCell::new(Vec::new()),
            keep_alive: RefCell::new(Vec::new()),
            _scope: PhantomData,
        };
        let guard = SyncOnUnwind(&scope);
        let result = f(&scope);
        std::mem::forget(guard);
        let synced = scope.finish();
        match result {
            Err(e) => Err(e),
            Ok(r) => synced.map(|()| r),
        }
    }
}

/// Synchronizes the scope's streams when the closure panics.
struct SyncOnUnwind<'a, 's, 'env>(&'a Scope<'s, 'env>);

impl Drop for SyncOnUnwind<'_, '_, '_> {
    fn drop(&mut self) {
        let _ = self.0.finish();
    }
}

impl<'s, 'env> Scope<'s, 'env> {
    /// The context.
    pub fn context(&self) -> &'env Context {
        self.ctx
    }

    /// Takes `stream` for one enqueue: refuses a stream of another context,
    /// or one that a capture of another scope owns; remembers it for the
    /// final wait; holds its capture lock until the returned guard drops.
    pub(crate) fn use_stream<'a>(&self, stream: &'a Stream<'_>) -> Result<StreamUse<'a>> {
        self.use_stream_ordered(stream, Ordering_::Uses(std::iter::empty()))
    }

    /// [`Scope::use_stream`] for an operation that uses the device memory
    /// `uses` (address, bytes, allocation stream of stream-ordered memory):
    /// the stream first waits for every other stream of the scope that used
    /// overlapping memory last, and for the allocation's stream of
    /// stream-ordered memory, so that two streams of one scope never touch
    /// the same memory in an undefined order (see "Ordering across streams"
    /// in the module docs).
    pub(crate) fn use_stream_for<'a>(
        &self,
        stream: &'a Stream<'_>,
        uses: impl IntoIterator<Item = Use>,
    ) -> Result<StreamUse<'a>> {
        self.use_stream_ordered(stream, Ordering_::Uses(uses))
    }

    /// [`Scope::use_stream`] for an operation whose memory is not known
    /// (a graph replay): the stream waits for every other stream the scope
    /// used.
    pub(crate) fn use_stream_after_all<'a>(&self, stream: &'a Stream<'_>) -> Result<StreamUse<'a>> {
        self.use_stream_ordered(stream, Ordering_::<std::iter::Empty<Use>>::All)
    }

    /// The launch fast path's [`Scope::use_stream_for`]: the stream the
    /// scope used last, while it is the scope's only one, with no host
    /// function or barrier pending and every range of the scope's memory
    /// noted, for arguments whose stream-ordered memory (if any) was
    /// allocated on it: nothing to wait for. Takes the stream's capture
    /// lock and notes the arguments' ranges, as the full path does. `None`
    /// (the stream captured, or any of the above not so), before anything
    /// was noted: the caller takes the full path.
    #[inline(always)]
    pub(crate) fn use_stream_fast<'a>(
        &self,
        stream: &'a Stream<'_>,
        params: &crate::work::launch::ParamList<'_>,
    ) -> Option<StreamUse<'a>> {
        let raw = stream.as_raw();
        // `last_stream` is set only once the stream is in `streams` and
        // the scope's work counted (`use_stream_ordered`); a stream in
        // `streams` is borrowed for the scope, so its handle names it and
        // its context was checked at that first use.
        if self.last_stream.get() != Some(raw)
            || self.multi.get()
            || self.has_tails.get()
            || self.has_barriers.get()
            || self.untracked.get()
        {
            return None;
        }
        if params.has_origin()
            && !params
                .all_device_uses(|_, _, origin| origin.map_or(true, |o| o.raw == raw as usize))
        {
            return None;
        }
        let state = stream.state();
        let guard = state.lock();
        if guard.capture.is_some() {
            return None;
        }
        match params.pointer_ranges() {
            Some(ranges) => {
                for &(start, bytes) in ranges {
                    self.note_use(raw, Arc::as_ptr(state), start, bytes);
                }
            }
            None => {
                params.all_device_uses(|start, bytes, _| {
                    self.note_use(raw, Arc::as_ptr(state), start, bytes);
                    true
                });
            }
        }
        Some(StreamUse { raw, guard })
    }

    fn use_stream_ordered<'a, I: IntoIterator<Item = Use>>(
        &self,
        stream: &'a Stream<'_>,
        order: Ordering_<I>,
    ) -> Result<StreamUse<'a>> {
        same_context("scope", self.ctx, stream.context())?;
        crate::context::release::refuse_in_callback("work queued in a scope")?;
        if !self.counted.get() {
            self.ctx.begin_scope_work()?;
            self.counted.set(true);
        }
        let raw = stream.as_raw();
        let state = stream.state();
        // Work is about to be queued on `raw`: a host function queued
        // earlier is no longer the scope's last work there.
        if self.has_tails.get() {
            let mut tails = self.tails.borrow_mut();
            tails.retain(|(s, _)| *s != raw);
            self.has_tails.set(!tails.is_empty());
        }
        let refused = || Error::StreamCaptured {
            operation: "work on a stream that another scope is capturing",
            device: self.ctx.device().ordinal(),
        };
        // Event handles the stream must wait for (recorded on other streams,
        // each under its own lock, before this stream's lock is taken: two
        // stream locks are never held at once).
        let mut waits: Vec<CUevent> = Vec::new();
        let known = self.last_stream.get() == Some(raw)
            || self.streams.borrow().iter().any(|(s, _)| *s == raw);
        if !known {
            if !state.lock().usable_by_scope(self.id) {
                return Err(refused());
            }
            // A stream new to a scope whose earlier work was not all tracked
            // (memory cudakit cannot see, or more ranges than the table
            // keeps while one stream was in use) waits for the others once.
            if self.untracked.get() {
                self.order_after_others(raw, &mut waits)?;
                self.untracked.set(false);
            }
            let count = {
                let mut streams = self.streams.borrow_mut();
                streams.push((raw, state.clone()));
                streams.len()
            };
            self.multi.set(count > 1);
            // Before the stream's lock: `pending` is always locked first.
            self.ctx.begin_pending(self.id, raw, state);
        }
        self.last_stream.set(Some(raw));
        // Whether this operation's memory is not known (a graph replay, a
        // peer copy): ordered after everything of the other streams, and
        // every other stream's next use then waits for it (below).
        let after_all = matches!(&order, Ordering_::All);
        // The table's new last uses, filed only once this stream's waits
        // were issued outside a capture (a use whose wait was skipped or
        // failed must not become the range's last use).
        let mut updates: Vec<LastUse> = Vec::new();
        match order {
            Ordering_::All if !self.multi.get() => {
                // The only stream so far: nothing to order against now, but
                // what this touched is not known to the table.
                self.untracked.set(true);
            }
            Ordering_::All => self.order_after_others(raw, &mut waits)?,
            Ordering_::Uses(uses) => {
                let multi = self.multi.get();
                for (start, bytes, origin) in uses {
                    if !multi && origin.map_or(true, |o| o.raw == raw as usize) {
                        // One stream so far: only noted (no lookup, no
                        // wait), so that a second stream can be ordered
                        // after it without waiting for all of it.
                        self.note_use(raw, Arc::as_ptr(state), start, bytes);
                        continue;
                    }
                    self.order_use(
                        raw,
                        Arc::as_ptr(state),
                        (start, bytes, origin),
                        &mut waits,
                        &mut updates,
                    )?;
                }
            }
        }
        // Barriers (module-variable writes on other streams) this use must
        // wait for; marked as waited only once the waits were issued below.
        let mut barrier_marks: Vec<usize> = Vec::new();
        if self.has_barriers.get() {
            // A module variable written on another stream of the scope:
            // wait for that stream once (the variable is read by kernels
            // without being named). An order point of another stream is
            // taken before this stream's lock, as above.
            let barriers = self.barriers.borrow();
            for (i, (other, st, waited)) in barriers.iter().enumerate() {
                if *other != raw && !waited.contains(&(raw as usize)) {
                    if let Some(ev) = self.order_point(*other, st)? {
                        waits.push(ev);
                    }
                    barrier_marks.push(i);
                }
            }
        }
        let guard = state.lock();
        if !guard.usable_by_scope(self.id) {
            return Err(refused());
        }
        // A captured stream cannot wait for an event recorded outside its
        // capture (the driver calls that isolation); captured work runs at
        // replays, which are ordered by their own launch.
        if !waits.is_empty() && guard.capture.is_none() {
            let cu = self.ctx.enter()?;
            for ev in waits {
                // SAFETY: a live stream (its capture lock held by `guard`)
                // and a live event of the context, recorded on another
                // stream just before; flags 0.
                self.ctx.check("cuStreamWaitEvent", unsafe {
                    (cu.cuStreamWaitEvent)(raw, ev, 0)
                })?;
            }
        }
        // A captured stream did not wait (its work runs at replays): it
        // waits at its first use outside the capture.
        if !barrier_marks.is_empty() && guard.capture.is_none() {
            let mut barriers = self.barriers.borrow_mut();
            for i in barrier_marks {
                barriers[i].2.push(raw as usize);
            }
        }
        if guard.capture.is_none() {
            // The waits were issued: this stream is now the last user of
            // the ranges it ordered. (A captured use files nothing: its
            // work runs at replays, which are ordered as a whole.)
            if !updates.is_empty() {
                let mut table = self.order.borrow_mut();
                // The table may lose the ranges `note_use` remembers.
                for c in &self.last_noted {
                    c.set((0, 0));
                }
                for u in updates {
                    table.retain(|t| !(u.start <= t.start && t.end <= u.end));
                    table.push(u);
                }
            }
            // Memory the table cannot see, used on one of several streams:
            // each other stream waits for this one once, at its next use,
            // as after a module-variable write. (The operation is queued
            // right after this returns, on this thread: a scope is not
            // shared, so no other use comes between.)
            if after_all && self.multi.get() {
                self.add_barrier(raw, state);
            }
        }
        Ok(StreamUse { raw, guard })
    }

    /// Orders one use of `[start, start + bytes)` on `raw` (whose state is
    /// `state`): every other stream that last used overlapping memory in
    /// this scope, or else the allocation stream of stream-ordered memory,
    /// gets an order point that `raw` will wait for; the memory's new last
    /// use (on `raw`) goes to `updates`, which the caller files once the
    /// waits were issued.
    fn order_use(
        &self,
        raw: CUstream,
        state: *const StreamState,
        (start, bytes, origin): Use,
        waits: &mut Vec<CUevent>,
        updates: &mut Vec<LastUse>,
    ) -> Result<()> {
        let end = start.saturating_add(bytes.max(1));
        let mut others: Vec<(usize, *const StreamState)> = Vec::new();
        let mut seen = false;
        {
            let table = self.order.borrow();
            for u in table.iter().filter(|u| u.start < end && start < u.end) {
                seen = true;
                if u.stream != raw as usize && !others.iter().any(|(s, _)| *s == u.stream) {
                    others.push((u.stream, u.state));
                }
            }
        }
        if !seen {
            if let Some(o) = origin.filter(|o| o.raw != raw as usize) {
                others.push((o.raw, o.state));
            }
        }
        for (other, st) in others {
            // SAFETY: `st` is the state of a stream this scope used (its
            // `Arc` is in `streams` until the scope ends) or the allocation
            // stream of stream-ordered memory that the operation borrows
            // (the buffer holds the state's `Arc`).
            let st = unsafe { &*st };
            if let Some(ev) = self.order_point(other as CUstream, st)? {
                waits.push(ev);
            }
        }
        // Filed by the caller once the waits were issued.
        updates.push(LastUse {
            start,
            end,
            stream: raw as usize,
            state,
        });
        Ok(())
    }

    /// Makes `raw` (state `state`) a barrier: every other stream of the
    /// scope waits for it once, before its next operation (a later barrier
    /// on the same stream makes them wait again).
    fn add_barrier(&self, raw: CUstream, state: &Arc<StreamState>) {
        let mut barriers = self.barriers.borrow_mut();
        match barriers.iter_mut().find(|(s, _, _)| *s == raw) {
            Some((_, _, waited)) => waited.clear(),
            None => barriers.push((raw, state.clone(), Vec::new())),
        }
        self.has_barriers.set(true);
    }

    /// Notes that `[start, start + bytes)` was used on `raw`, the scope's only
    /// stream so far; past [`NOTED_RANGES`] distinct ranges the scope stops
    /// noting and a second stream will wait for all of this one instead.
    #[inline(always)]
    fn note_use(&self, raw: CUstream, state: *const StreamState, start: u64, bytes: u64) {
        if self.untracked.get() {
            return;
        }
        let end = start.saturating_add(bytes.max(1));
        // (0, 0), the empty slot, is no range: `end > start` or `end` is
        // u64::MAX.
        if self.last_noted.iter().any(|c| c.get() == (start, end)) {
            return;
        }
        self.note_new(raw, state, start, end);
    }

    /// [`Scope::note_use`] for a range not among the last few noted.
    #[inline(never)]
    fn note_new(&self, raw: CUstream, state: *const StreamState, start: u64, end: u64) {
        let mut table = self.order.borrow_mut();
        if !table.iter().any(|u| u.start == start && u.end == end) {
            if table.len() >= NOTED_RANGES {
                self.untracked.set(true);
                return;
            }
            table.push(LastUse {
                start,
                end,
                stream: raw as usize,
                state,
            });
        }
        let slot = self.noted_next.get();
        self.last_noted[slot].set((start, end));
        self.noted_next.set((slot + 1) % NOTED_RECENT);
    }

    /// An event marking the end of what `raw` (a live stream, state `st`)
    /// has queued so far: recorded now, under its lock; for a stream in a
    /// capture, its fence (its eager work ends there); `None` when there is
    /// nothing to wait for.
    /// Adds to `waits` an order point of every stream of the scope but `raw`.
    fn order_after_others(&self, raw: CUstream, waits: &mut Vec<CUevent>) -> Result<()> {
        // A copy of the list: `order_point` takes each stream's lock, and
        // nothing may hold the scope's list meanwhile.
        let others: Vec<(CUstream, Arc<StreamState>)> = self
            .streams
            .borrow()
            .iter()
            .filter(|(s, _)| *s != raw)
            .cloned()
            .collect();
        for (other, st) in &others {
            if let Some(ev) = self.order_point(*other, st)? {
                waits.push(ev);
            }
        }
        Ok(())
    }

    fn order_point(&self, raw: CUstream, st: &StreamState) -> Result<Option<CUevent>> {
        st.mark(self.ctx, self.ctx.enter()?, raw)
    }

    /// Hands the scope the box of a one-shot host function (see [`Owned`])
    /// just queued on `owned.stream`, as the last work the scope queued
    /// there (see `tails`): nothing may be queued on that stream between
    /// the `cuLaunchHostFunc` and this call (the caller still holds the
    /// stream's use).
    pub(crate) fn own_tail(&self, owned: Owned) {
        let raw = owned.stream;
        let mut list = self.owned.borrow_mut();
        list.push(owned);
        let mut tails = self.tails.borrow_mut();
        tails.retain(|(s, _)| *s != raw);
        tails.push((raw, list.len() - 1));
        self.has_tails.set(true);
    }

    /// Whether the host function `o` has run, waiting briefly for it: a
    /// spin on its state (which its trampoline sets as its last access)
    /// for up to [`TAIL_SPIN`], yielding the core after the first
    /// [`TAIL_SPIN_HOT`]. No driver call, and no wake-up of this thread by
    /// another: the callback's own store is what ends the wait. `false`
    /// when it has not run by then (the caller waits for the stream as
    /// usual, so a long wait costs no more than it did).
    fn tail_ran(o: &Owned) -> bool {
        // SAFETY: every box is alive until `finish` frees it, after this.
        let done = || unsafe { (o.finished)(o.ptr) };
        if done() {
            return true;
        }
        let start = std::time::Instant::now();
        loop {
            for _ in 0..64 {
                std::hint::spin_loop();
                if done() {
                    return true;
                }
            }
            let t = start.elapsed();
            if t >= TAIL_SPIN {
                return done();
            }
            if t >= TAIL_SPIN_HOT {
                std::thread::yield_now();
            }
        }
    }

    /// Refuses a copy of `bytes` to or from the pageable memory at `host` on
    /// `raw` that would go through the staged pipeline while a host function
    /// this scope queued on `raw` has not run: the pipeline waits on this
    /// thread for the stream to reach the copy (as the driver's pageable
    /// copies do), and a callback that waits for this thread would never
    /// let it. A typed error instead of a hang.
    ///
    /// Returns whether the copy goes through the staged pipeline (decided
    /// here, once, and handed to the copy).
    fn staging(&self, raw: CUstream, host: *const u8, bytes: usize) -> Result<bool> {
        let staged = copy::stages(self.ctx, host, bytes)?;
        if !staged {
            return Ok(false);
        }
        let owned = self.owned.borrow();
        // SAFETY: every box is alive until `finish`.
        let waiting = owned
            .iter()
            .any(|o| o.stream == raw && !unsafe { (o.finished)(o.ptr) });
        if waiting {
            return Err(Error::InvalidArgument(format!(
                "a pageable copy of {bytes} bytes waits on the host for its stream, where a host \
                 callback of this scope has not run yet (it could be waiting for this thread): \
                 copy from page-locked memory (PinnedBuffer), queue the copy before the callback, \
                 or use another stream"
            )));
        }
        Ok(true)
    }

    /// Whether a host callback this scope queued on `raw` has not run yet.
    pub(crate) fn callback_pending_on(&self, raw: CUstream) -> bool {
        let owned = self.owned.borrow();
        // SAFETY: every box is alive until `finish`.
        owned
            .iter()
            .any(|o| o.stream == raw && !unsafe { (o.finished)(o.ptr) })
    }

    /// Keeps `what` alive until the scope has waited for its streams.
    pub(crate) fn keep_alive(&self, what: Arc<dyn Any + Send + Sync>) {
        self.keep_alive.borrow_mut().push(what);
    }

    /// Counts a launch (filed in the context's metrics when the scope ends).
    #[inline]
    pub(crate) fn count_launch(&self) {
        self.launches.set(self.launches.get() + 1);
    }

    /// [`Scope::count_launch`] for a launch the fast path issued.
    #[inline(always)]
    pub(crate) fn count_fast_launch(&self) {
        self.count_launch();
        self.fast_launches.set(self.fast_launches.get() + 1);
    }

    /// How many of the scope's launches so far took the launch path's fast
    /// case (checks taken from caches, see `Scope::launch`). For tests that
    /// check which path a launch took; not a stable interface.
    #[doc(hidden)]
    pub fn fast_launches(&self) -> u64 {
        self.fast_launches.get()
    }

    /// Starts timing an operation on the stream in use when kernel timing
    /// is on.
    pub(crate) fn time_start(&self, on: &StreamUse<'_>) -> Result<Option<Event<'env>>> {
        // Nothing runs during a graph capture, so nothing is timed (the
        // events would be captured, never completed); graph launches are
        // timed instead (`crate::work::graph`).
        if !self.ctx.kernel_timing() || on.captured() {
            return Ok(None);
        }
        let start = Event::new(self.ctx, true)?;
        start.record_on(on.raw)?;
        Ok(Some(start))
    }

    /// Ends timing started by [`Scope::time_start`]. `what` is only built
    /// when timing is on, so the default path allocates nothing.
    pub(crate) fn time_end(
        &self,
        what: impl FnOnce() -> Timed,
        on: &StreamUse<'_>,
        start: Option<Event<'env>>,
    ) -> Result<()> {
        if let Some(start) = start {
            let end = Event::new(self.ctx, true)?;
            end.record_on(on.raw)?;
            self.timings.borrow_mut().push((what(), start, end));
        }
        Ok(())
    }

    /// Waits for every stream used, frees what the work owned, files the
    /// timings. A wait that fails is tried once more on a fresh thread (a
    /// thread that is capturing may not wait); if that fails too and the
    /// error is not sticky, the work may still run: see [`Context::scope`].
    fn finish(&self) -> Result<()> {
        let mut streams: Vec<(CUstream, Arc<StreamState>)> =
            std::mem::take(&mut *self.streams.borrow_mut());
        self.last_stream.set(None);
        self.multi.set(false);
        // A stream whose last work of the scope is a host function of the
        // scope that has run needs no wait: that function ran after all of
        // the scope's earlier work on the stream (stream order; and the
        // driver does not call host functions after an error of the
        // context), and its trampoline's last access to the box was the
        // store that `finished` reads (Acquire). Waiting for it this way
        // costs no event record, no trip of the device's front end after
        // the callback and no wake-up; the stream's wait below stays for
        // every other case (also when the callback has not run within the
        // spin, or never runs: then the wait reports why).
        let tails = std::mem::take(&mut *self.tails.borrow_mut());
        self.has_tails.set(false);
        if !tails.is_empty() && !in_driver_callback() {
            let owned = self.owned.borrow();
            streams.retain(|(raw, _)| {
                !tails
                    .iter()
                    .any(|(s, i)| s == raw && owned.get(*i).is_some_and(Self::tail_ran))
            });
        }
        let mut first_err = None;
        // Streams whose wait failed with a sticky error: the context is
        // unusable and its work stopped, but what was queued for them is not
        // freed (kept, leaked on purpose), in case the driver still calls it.
        let mut failed: Vec<CUstream> = Vec::new();
        // Inside a driver callback every driver call was refused, so nothing
        // of the scope was queued and there is nothing to wait for.
        if !streams.is_empty() && !in_driver_callback() {
            match self.ctx.enter_for_drop() {
                Some(cu) => {
                    for (raw, state) in &streams {
                        if let Err(e) = wait_stream(self.ctx, cu, *raw, state) {
                            if !self.wait_elsewhere(*raw, state) {
                                failed.push(*raw);
                            }
                            first_err.get_or_insert(e);
                        }
                    }
                }
                None => {
                    for (raw, state) in &streams {
                        if !self.wait_elsewhere(*raw, state) {
                            failed.push(*raw);
                        }
                    }
                }
            }
        }
        self.ctx.end_pending(self.id);
        for peer in std::mem::take(&mut *self.peers.borrow_mut()) {
            peer.end_foreign(self.id);
        }
        let owned = std::mem::take(&mut *self.owned.borrow_mut());
        for o in owned {
            if failed.contains(&o.stream) {
                // SAFETY: `o` was made by the callback module with matching
                // functions; after `cancel` the driver never runs the
                // closure, and the box itself is never freed.
                unsafe { (o.cancel)(o.ptr) };
                self.ctx
                    .arena()
                    .record_kept(o.bytes, "a host callback whose stream's wait failed");
            } else {
                // The closure's own drop may panic: caught, reported as the
                // callback's, so that the rest of the scope's end still runs.
                let free = std::panic::AssertUnwindSafe(|| {
                    // SAFETY: as above; the stream's wait covered the
                    // callback (it ran, or the driver dropped it), so nothing
                    // uses the box any more, and it is freed once, here.
                    unsafe { (o.free)(o.ptr) }
                });
                if let Err(payload) = std::panic::catch_unwind(free) {
                    let text = panic_message(&*payload);
                    std::mem::forget(payload);
                    record_callback_panic(self.id, format!("dropping a host callback: {text}"));
                }
            }
        }
        if failed.is_empty() {
            let kept = std::mem::take(&mut *self.keep_alive.borrow_mut());
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(kept))).is_err() {
                record_callback_panic(self.id, "dropping a graph's host callbacks panicked".into());
            }
        } else {
            // Kept forever: a replay may still reach them.
            for k in std::mem::take(&mut *self.keep_alive.borrow_mut()) {
                std::mem::forget(k);
                self.ctx
                    .arena()
                    .record_kept(0, "a graph's host callbacks whose replay's wait failed");
            }
        }
        self.ctx.drain_callback_releases();
        if self.counted.replace(false) {
            self.ctx.end_scope_work();
        }
        let launches = self.launches.replace(0);
        if launches > 0 {
            self.ctx
                .counters()
                .launches
                .fetch_add(launches, std::sync::atomic::Ordering::Relaxed);
        }
        let timings = std::mem::take(&mut *self.timings.borrow_mut());
        if first_err.is_none() {
            for (what, start, end) in timings {
                // An error here still lets the panic report below run.
                let t: Duration = match end.elapsed_since(&start) {
                    Ok(t) => t,
                    Err(e) => {
                        first_err.get_or_insert(e);
                        break;
                    }
                };
                let c = self.ctx.counters();
                match what {
                    Timed::Kernel(name) => c.add_kernel_time(&name, t),
                    Timed::HtoD => c.htod.add_time(t),
                    Timed::DtoH => c.dtoh.add_time(t),
                    Timed::DtoD => c.dtod.add_time(t),
                }
            }
        }
        if let Some(e) = take_callback_panic(self.id) {
            first_err.get_or_insert(e);
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The second try of a failed wait, on a fresh thread (one that is not
    /// capturing and not a driver callback). `true` when the stream's work
    /// is known to be over: waited for, or stopped by a sticky error. A
    /// non-sticky failure here leaves work running under borrows that are
    /// about to end: the process is aborted (see [`Context::scope`]).
    fn wait_elsewhere(&self, raw: CUstream, state: &Arc<StreamState>) -> bool {
        let raw = raw as usize;
        wait_elsewhere_or_abort(self.ctx, "a scope", |ctx| match ctx.enter_for_drop() {
            Some(cu) => wait_stream(ctx, cu, raw as CUstream, state),
            // In a forked child nothing of the parent's work runs here.
            None if crate::driver::forked() => Err(Error::ForkedChild),
            None => Err(Error::InvalidArgument(
                "the driver could not be entered".into(),
            )),
        })
        .is_ok()
    }

    /// Registers `raw` (a stream of this scope, state `state`) as work that
    /// touches `other`'s memory: `other`'s synchronous operations wait for
    /// it until the scope ends.
    pub(crate) fn touch_peer(
        &self,
        other: &Context,
        raw: CUstream,
        state: &Arc<StreamState>,
    ) -> Result<()> {
        other.begin_foreign(self.id, raw, state, self.ctx)?;
        let mut peers = self.peers.borrow_mut();
        if !peers.iter().any(|p| p.same(other)) {
            peers.push(other.clone());
        }
        Ok(())
    }

    /// An identity of the scope, unique among the process's scopes.
    pub(crate) fn key(&self) -> u64 {
        self.id
    }

    /// A new stream of the scope's context (`cuStreamCreate`, non-blocking),
    /// owned by the scope and destroyed when it ends, after its wait: for
    /// work that needs a stream of its own without making one outside the
    /// scope (`Context::stream`, which outlives scopes, is the other way).
    ///
    /// ```no_run
    /// # fn main() -> cudakit::Result<()> {
    /// let ctx = cudakit::Context::new(0)?;
    /// let buf = ctx.alloc::<f32>(1024)?;
    /// let host = vec![1.0f32; 1024];
    /// ctx.scope(|s| {
    ///     let stream = s.stream()?;
    ///     s.copy_to_device(stream, &host, &buf)
    /// })?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Context::stream`].
    pub fn stream(&'s self) -> Result<&'s Stream<'env>> {
        let mut all = self.made.borrow_mut();
        all.push(Box::new(self.ctx.stream()?));
        // Taken after the move into the vector (a pointer taken before it
        // would not survive the box's move, in Rust's aliasing model).
        let ptr: *const Stream<'env> = &**all.last().expect("just pushed");
        drop(all);
        // SAFETY: the box's contents never move (the vector moves only the
        // box pointers) and are dropped only with the scope, after the
        // closure that received `&'s self` returned (`'s` cannot outlive
        // it) and after the scope waited for every stream.
        Ok(unsafe { &*ptr })
    }

    /// Copies `src` into the module (or library) variable `global` on
    /// `stream` (`cuMemcpyHtoDAsync_v2`, stream-ordered; CUDA C++'s
    /// `cudaMemcpyToSymbolAsync`). `src` stays borrowed until the scope
    /// ends.
    ///
    /// Kernels read a `__constant__` or `__device__` variable without it
    /// being an argument, so the scope cannot see which of its work reads
    /// it: the copy is ordered after all of the scope's work queued so far
    /// (on every stream), and every later operation of the scope on another
    /// stream waits for this stream first. Within `stream`, work queued
    /// after the copy reads the new value, work queued before it the old.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`]; [`Error::ContextMismatch`]; a pageable
    /// copy behind an unrun host callback of the scope (as
    /// [`Scope::copy_to_device`]); driver errors; a poisoned context.
    pub fn copy_to_global<T: DeviceCopy>(
        &self,
        stream: &'s Stream<'_>,
        src: &'s [T],
        global: &'s crate::compile::module::Global<'_, T>,
    ) -> Result<()> {
        same_len("copy_to_global", global.len(), src.len())?;
        same_context("copy_to_global", self.ctx, global.context())?;
        let bytes = byte_len::<T>(src.len(), "copy")?;
        let raw = self.use_stream_after_all(stream)?;
        if raw.captured() {
            // Captured, the write would run only at replays, which would
            // not order the scope's other streams after it.
            return Err(Error::IllegalDuringCapture {
                operation: "copy_to_global (a captured write orders nothing outside its graph)",
                device: self.ctx.device().ordinal(),
            });
        }
        let staged = self.staging(*raw, src.as_ptr().cast(), bytes)?;
        let t = self.time_start(&raw)?;
        // SAFETY: the variable holds `bytes` bytes at its address (its size
        // came from the driver; lengths checked above) and its module is
        // borrowed for 's; `src` is borrowed until the scope has
        // synchronized this stream.
        unsafe {
            copy::htod_ordered(
                self.ctx,
                *raw,
                global.device_ptr().as_raw(),
                src.as_ptr().cast(),
                bytes,
                staged,
            )
        }?;
        self.time_end(|| Timed::HtoD, &raw, t)?;
        drop(raw);
        // A later write on the same stream: every other stream waits again.
        self.add_barrier(stream.as_raw(), stream.state());
        Ok(())
    }

    /// Copies host memory to the device on `stream`
    /// (`cuMemcpyHtoDAsync_v2`). `src` may be a plain slice or a
    /// [`PinnedBuffer`](crate::PinnedBuffer) (only page-locked memory
    /// overlaps with the host); it stays borrowed until the scope ends.
    ///
    /// # Errors
    ///
    /// Length and context mismatches; driver errors.
    pub fn copy_to_device<T: DeviceCopy>(
        &self,
        stream: &'s Stream<'_>,
        src: &'s [T],
        dst: impl DeviceDst<'s, T>,
    ) -> Result<()> {
        same_len("copy_to_device", dst.len(), src.len())?;
        same_context("copy_to_device", self.ctx, dst.context())?;
        let bytes = byte_len::<T>(src.len(), "copy")?;
        let raw = self.use_stream_for(
            stream,
            [(dst.device_ptr().as_raw(), bytes as u64, dst.origin())],
        )?;
        let staged = self.staging(*raw, src.as_ptr().cast(), bytes)?;
        let t = self.time_start(&raw)?;
        // SAFETY: `src` and `dst` are borrowed until the scope has
        // synchronized this stream; both hold `bytes` bytes. Large pageable
        // sources go through the staged pipeline, ordered after the stream.
        unsafe {
            copy::htod_ordered(
                self.ctx,
                *raw,
                dst.device_ptr().as_raw(),
                src.as_ptr().cast(),
                bytes,
                staged,
            )
        }?;
        self.time_end(|| Timed::HtoD, &raw, t)
    }

    /// Copies device memory to the host on `stream`
    /// (`cuMemcpyDtoHAsync_v2`). `dst` (a slice or a pinned buffer) is
    /// borrowed exclusively until the scope ends.
    ///
    /// # Errors
    ///
    /// Length and context mismatches; driver errors.
    pub fn copy_to_host<T: DeviceCopy>(
        &self,
        stream: &'s Stream<'_>,
        src: impl DeviceSrc<'s, T>,
        dst: &'s mut [T],
    ) -> Result<()> {
        same_len("copy_to_host", src.len(), dst.len())?;
        same_context("copy_to_host", self.ctx, src.context())?;
        let bytes = byte_len::<T>(dst.len(), "copy")?;
        let raw = self.use_stream_for(
            stream,
            [(src.device_ptr().as_raw(), bytes as u64, src.origin())],
        )?;
        let staged = self.staging(*raw, dst.as_ptr().cast(), bytes)?;
        let t = self.time_start(&raw)?;
        // SAFETY: `dst` is borrowed exclusively, `src` shared, until the
        // scope has synchronized this stream; both hold `bytes` bytes; every
        // bit pattern is a valid T.
        unsafe {
            copy::dtoh_ordered(
                self.ctx,
                *raw,
                dst.as_mut_ptr().cast(),
                src.device_ptr().as_raw(),
                bytes,
                staged,
            )
        }?;
        self.time_end(|| Timed::DtoH, &raw, t)
    }

    /// Copies device memory to device memory on `stream`
    /// (`cuMemcpyDtoDAsync_v2`).
    ///
    /// # Errors
    ///
    /// Length and context mismatches; driver errors.
    pub fn copy<T: DeviceCopy>(
        &self,
        stream: &'s Stream<'_>,
        src: impl DeviceSrc<'s, T>,
        dst: impl DeviceDst<'s, T>,
    ) -> Result<()> {
        same_len("copy", src.len(), dst.len())?;
        same_context("copy", self.ctx, src.context())?;
        same_context("copy", self.ctx, dst.context())?;
        let bytes = byte_len::<T>(src.len(), "copy")?;
        crate::memory::no_overlap(
            "copy",
            src.device_ptr().as_raw(),
            dst.device_ptr().as_raw(),
            bytes,
        )?;
        let raw = self.use_stream_for(
            stream,
            [
                (src.device_ptr().as_raw(), bytes as u64, src.origin()),
                (dst.device_ptr().as_raw(), bytes as u64, dst.origin()),
            ],
        )?;
        let t = self.time_start(&raw)?;
        // SAFETY: both borrowed until the scope has synchronized this
        // stream; both hold `bytes` bytes.
        unsafe {
            copy::dtod_async(
                self.ctx,
                *raw,
                dst.device_ptr().as_raw(),
                src.device_ptr().as_raw(),
                bytes,
            )
        }?;
        self.time_end(|| Timed::DtoD, &raw, t)
    }

    /// Prefetches a unified buffer to the device (`to_device`) or the host
    /// on `stream` (`cuMemPrefetchAsync_v2`).
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] before CUDA 12.2;
    /// driver errors.
    pub fn prefetch<T: DeviceCopy>(
        &self,
        stream: &'s Stream<'_>,
        buffer: &'s UnifiedBuffer<'_, T>,
        to_device: bool,
    ) -> Result<()> {
        same_context("prefetch", self.ctx, buffer.context())?;
        let raw = self.use_stream_after_all(stream)?;
        buffer.prefetch_on(*raw, to_device)
    }
}

// ---- panics caught in host callbacks (work::callback, graph host nodes),
// reported when their scope ends

/// Panics caught in callbacks, as (scope key, message), not yet reported.
static PANICS: Mutex<Vec<(u64, String)>> = Mutex::new(Vec::new());
/// How many entries `PANICS` holds: scopes look at the lock only when
/// some panic is pending, so the scope's end costs one load otherwise.
static PENDING: AtomicUsize = AtomicUsize::new(0);

fn panics() -> std::sync::MutexGuard<'static, Vec<(u64, String)>> {
    crate::context::lock(&PANICS)
}

pub(crate) fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic payload that is not a string".to_owned()
    }
}

/// Records a panic caught in a host callback of the scope `key`; the
/// scope's end reports it.
pub(crate) fn record_callback_panic(key: u64, text: String) {
    panics().push((key, text));
    PENDING.fetch_add(1, Ordering::AcqRel);
}

/// The first panic caught in a callback of the scope `key`, as the error
/// its end returns. Called by every scope as it ends.
pub(crate) fn take_callback_panic(key: u64) -> Option<Error> {
    if PENDING.load(Ordering::Acquire) == 0 {
        return None;
    }
    let mut list = panics();
    let mut first = None;
    list.retain(|(k, msg)| {
        if *k == key {
            PENDING.fetch_sub(1, Ordering::AcqRel);
            first.get_or_insert_with(|| msg.clone());
            false
        } else {
            true
        }
    });
    first.map(|message| Error::HostCallbackPanicked { message })
}
