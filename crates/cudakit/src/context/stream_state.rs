//! Capture state per stream: which capture a stream belongs to, taken under
//! the stream's own lock together with every enqueue on it.
//!
//! CUDA records into a capture any work queued on a capturing stream, from
//! any thread. So the check "is this stream captured, and by whom?" and the
//! enqueue that follows it must be one step: every cudakit call that queues
//! work on a stream holds [`StreamState::lock`] from the check to the driver
//! call, and a capture begins and ends under the same lock. No other
//! thread's work can then enter a capture: it either runs before the capture
//! begins, after it ends, or is refused with a typed error naming why.
//!
//! The state lives in the stream (shared through an `Arc`, so that a capture
//! can clear the streams that joined it), not in the context: one thread's
//! capture does not change what other threads may do on other streams.
//!
//! Interleavings, for a reviewer: thread A captures stream `a`, thread B
//! queues on `a`.
//! - B locks first: its work is queued before `cuStreamBeginCapture`, which
//!   waits for the lock, and runs normally.
//! - A locks first: B finds `a` captured by another scope and is refused
//!   (`Error::IllegalDuringCapture`); nothing reaches the driver.
//! - A stream joins a capture only through cudakit's `Stream::wait` on an
//!   event recorded inside it; the join is recorded under the joining
//!   stream's lock, and cleared, stream by stream, when the capture ends.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::ThreadId;

use cuda_sys::{CUevent, CUevent_flags, CUresult, CUstream, Driver};

use super::{lock, Context};

/// A stream's capture state as other rooms hold it (stream-ordered memory
/// frees on its stream under its lock): opaque outside the crate.
#[doc(hidden)]
#[derive(Debug, Clone)]
pub struct SharedStreamState(pub(crate) Arc<StreamState>);

/// The stream a stream-ordered buffer was allocated on, as its views and
/// argument entries carry it: a scope that uses the buffer on another stream
/// first makes that stream wait for this one (the allocation is ordered
/// there only). Valid while the buffer's borrow lasts (the buffer borrows
/// the stream and holds its state).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamOrigin {
    pub(crate) raw: usize,
    pub(crate) state: *const StreamState,
}

// SAFETY: the pointer is only dereferenced while the buffer that holds the
// state alive is borrowed, and `StreamState` is Sync (a mutex).
unsafe impl Send for StreamOrigin {}
// SAFETY: as above.
unsafe impl Sync for StreamOrigin {}

/// The capture state of one stream. See the module docs.
#[derive(Debug, Default)]
pub(crate) struct StreamState {
    inner: Mutex<StreamInner>,
}

/// What [`StreamState`]'s lock guards.
#[derive(Debug, Default)]
pub(crate) struct StreamInner {
    /// The capture this stream belongs to now (as its origin or because it
    /// joined it), if any.
    pub(crate) capture: Option<Arc<CaptureRecord>>,
    /// Stream-ordered frees of buffers dropped while the stream was
    /// captured, as (address, arena id): issued on the stream when its
    /// capture ends (issued during it, they would become graph nodes).
    pub(crate) deferred_frees: Vec<(u64, u64)>,
    /// The stream's own event (made at first need, destroyed with the
    /// stream), as an address: recorded under this lock where a wait for
    /// the stream's work begins, so that the wait itself
    /// (`cuEventSynchronize`) runs without the lock and cannot meet a
    /// capture that begins meanwhile (an event recorded before a capture is
    /// not part of it). A capture records it as the stream enters (its
    /// fence): waiting for it then waits for the work queued before the
    /// capture, which is all of the stream's work that will run.
    pub(crate) event: usize,
    /// The raw stream this state belongs to, as an address.
    pub(crate) raw: usize,
}

impl StreamState {
    /// A new state for the stream `raw`: not captured, nothing deferred.
    pub(crate) fn new(raw: CUstream) -> Arc<StreamState> {
        let s = StreamState::default();
        lock(&s.inner).raw = raw as usize;
        Arc::new(s)
    }

    /// An event marking the end of the work queued on `raw` (the stream of
    /// this state) that will run: recorded now, under the lock, when the
    /// stream is not captured; its fence (recorded as it entered the
    /// capture) when it is; `None` when nothing of it will run before its
    /// capture ends (no fence, or a capture joined outside cudakit: a raw
    /// `cuStreamWaitEvent` through `cudakit::sys`, whose contract makes the
    /// caller answer for the stream's earlier work; recording there would
    /// put the event into that capture). What waits for the stream (a
    /// scope's end, another stream of the scope) waits for this, without
    /// the lock.
    pub(crate) fn mark(
        &self,
        ctx: &Context,
        cu: &'static Driver,
        raw: CUstream,
    ) -> crate::Result<Option<CUevent>> {
        let mut g = self.lock();
        if g.capture.is_some() {
            return Ok(g.fence());
        }
        if ctx.capturing() && joined_elsewhere(ctx, cu, raw)? {
            return Ok(None);
        }
        g.record_event(ctx, cu, raw).map(Some)
    }

    /// Locks the state. Held from a capture check to the enqueue it guards.
    #[inline]
    pub(crate) fn lock(&self) -> MutexGuard<'_, StreamInner> {
        lock(&self.inner)
    }
}

impl StreamInner {
    /// Records the stream's event on `raw` (the stream this state belongs
    /// to), making it first if need be; returns it. The caller holds the
    /// lock (`self`), and the stream is not captured by anyone but the
    /// caller's own capture that is about to begin or the join being made.
    pub(crate) fn record_event(
        &mut self,
        ctx: &Context,
        cu: &'static Driver,
        raw: CUstream,
    ) -> crate::Result<CUevent> {
        if self.event == 0 {
            let mut ev: CUevent = std::ptr::null_mut();
            // SAFETY: a valid out-pointer and defined flags; the context is
            // current (the caller entered it).
            ctx.check("cuEventCreate", unsafe {
                (cu.cuEventCreate)(&mut ev, CUevent_flags::CU_EVENT_DISABLE_TIMING.0 as u32)
            })?;
            self.event = ev as usize;
        }
        let ev = self.event as CUevent;
        // SAFETY: a live event of this context and the live stream `raw`
        // (the caller borrows it).
        ctx.check("cuEventRecord", unsafe { (cu.cuEventRecord)(ev, raw) })?;
        Ok(ev)
    }

    /// The event recorded as the stream entered its capture, if captured.
    pub(crate) fn fence(&self) -> Option<CUevent> {
        match (&self.capture, self.event) {
            (Some(_), e) if e != 0 => Some(e as CUevent),
            _ => None,
        }
    }

    /// Whether the stream may take work from the scope `scope` on the
    /// current thread: not captured, or captured by that scope (a capture
    /// is thread-local, and a scope never leaves its thread).
    #[inline]
    pub(crate) fn usable_by_scope(&self, scope: u64) -> bool {
        match &self.capture {
            None => true,
            Some(c) => c.scope == scope,
        }
    }

    /// Whether work queued outside any scope (an event record or wait) may
    /// go on the stream from this thread: not captured, or captured by a
    /// capture begun on this thread (the capture's own closure recording a
    /// fork or join).
    #[inline]
    pub(crate) fn usable_by_thread(&self) -> bool {
        match &self.capture {
            None => true,
            Some(c) => c.thread == std::thread::current().id(),
        }
    }
}

/// A capture in progress, shared by the streams that belong to it.
#[derive(Debug)]
pub(crate) struct CaptureRecord {
    /// The scope that runs the capture (its unique id).
    pub(crate) scope: u64,
    /// The thread that began it (captures are thread-local).
    pub(crate) thread: ThreadId,
    /// Streams that joined the capture through an event, cleared when it
    /// ends.
    pub(crate) joined: Mutex<Vec<Arc<StreamState>>>,
    /// Set when the capture has ended.
    ended: AtomicBool,
    /// The peer memory its kernels use, as (device ordinal, owner context
    /// id): the graph checks at each replay that access to it is still
    /// enabled.
    pub(crate) peers: Mutex<Vec<(i32, usize)>>,
}

impl CaptureRecord {
    /// A record for a capture that `scope` begins on this thread.
    pub(crate) fn new(scope: u64) -> Arc<CaptureRecord> {
        Arc::new(CaptureRecord {
            scope,
            thread: std::thread::current().id(),
            joined: Mutex::new(Vec::new()),
            ended: AtomicBool::new(false),
            peers: Mutex::new(Vec::new()),
        })
    }

    /// Whether the capture has ended.
    pub(crate) fn ended(&self) -> bool {
        self.ended.load(Ordering::Acquire)
    }

    /// Marks the capture ended and takes the streams that joined it (their
    /// states still name it: the caller clears them).
    pub(crate) fn end(&self) -> Vec<Arc<StreamState>> {
        self.ended.store(true, Ordering::Release);
        std::mem::take(&mut *lock(&self.joined))
    }
}

/// Waits for the work queued on `raw` (whose state is `state`) so far, by
/// its event: recorded under the stream's lock, waited for without it. A
/// stream captured now is waited for up to its fence (the work queued before
/// its capture; the captured work does not run). The stream must stay alive
/// across the call (the caller borrows it).
pub(crate) fn wait_stream(
    ctx: &Context,
    cu: &'static Driver,
    raw: CUstream,
    state: &StreamState,
) -> crate::Result<()> {
    let Some(ev) = state.mark(ctx, cu, raw)? else {
        return Ok(());
    };
    // SAFETY: a live event of the stream (destroyed only with the stream,
    // which the caller keeps alive), last recorded outside any capture.
    ctx.check("cuEventSynchronize", unsafe { (cu.cuEventSynchronize)(ev) })
}

/// Destroys the stream's event, if it was made (the stream's drop).
pub(crate) fn destroy_event(cu: &'static Driver, event: usize) -> CUresult {
    if event == 0 {
        return CUresult::CUDA_SUCCESS;
    }
    // SAFETY: the stream's own event, destroyed once, with the stream.
    unsafe { (cu.cuEventDestroy)(event as CUevent) }
}

/// Whether the driver counts `raw` in a capture that cudakit did not record.
pub(crate) fn joined_elsewhere(
    ctx: &Context,
    cu: &'static Driver,
    raw: CUstream,
) -> crate::Result<bool> {
    let mut status = cuda_sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: a live stream (the caller's contract) and a valid out-pointer.
    ctx.check("cuStreamIsCapturing", unsafe {
        (cu.cuStreamIsCapturing)(raw, &mut status)
    })?;
    Ok(status != cuda_sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
}
