//! Events: ordering between streams, and timing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cuda_sys::{CUevent, CUevent_flags, CUstream};

use crate::context::stream_state::CaptureRecord;
use crate::context::Context;
use crate::context::{lock, same_context};
use crate::error::{Error, Result};
use crate::work::stream::Stream;

/// An event (`cuEventCreate`), destroyed on drop (`cuEventDestroy_v2`).
///
/// An event recorded on a stream that a capture owns becomes a node of
/// that capture: a stream that waits for it joins the capture (a fork), and
/// until the capture ends the event cannot be waited for or queried (the
/// driver would invalidate the capture; cudakit refuses first).
pub struct Event<'c> {
    ctx: &'c Context,
    raw: CUevent,
    timing: bool,
    /// The capture its last record belongs to, if it was recorded in one.
    recorded_in: Mutex<Option<Arc<CaptureRecord>>>,
    /// Made with `CU_EVENT_INTERPROCESS` ([`Context::ipc_event`]).
    interprocess: bool,
    /// IPC exports not released: while any is, the drop keeps the event
    /// (another process may wait on it).
    pub(crate) exports: AtomicUsize,
}

// SAFETY: event handles may be used from any thread.
unsafe impl Send for Event<'_> {}
// SAFETY: as above.
unsafe impl Sync for Event<'_> {}

impl std::fmt::Debug for Event<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event")
            .field("raw", &self.raw)
            .field("timing", &self.timing)
            .finish()
    }
}

impl Context {
    /// An event for ordering only (`CU_EVENT_DISABLE_TIMING`: cheapest).
    ///
    /// # Errors
    ///
    /// Driver errors; a poisoned context.
    pub fn event(&self) -> Result<Event<'_>> {
        Event::new(self, false)
    }

    /// An event that records time, for [`Event::elapsed_since`].
    ///
    /// # Errors
    ///
    /// Driver errors; a poisoned context.
    pub fn timing_event(&self) -> Result<Event<'_>> {
        Event::new(self, true)
    }

    /// An event that other processes can wait on (`cuEventCreate` with
    /// `CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING`): export it with
    /// [`Event::export_ipc`] and open it there with
    /// [`Context::open_ipc_event`] (see [`crate::ipc`]).
    ///
    /// # Errors
    ///
    /// Driver errors; a poisoned context.
    pub fn ipc_event(&self) -> Result<Event<'_>> {
        let flags =
            CUevent_flags::CU_EVENT_INTERPROCESS.0 | CUevent_flags::CU_EVENT_DISABLE_TIMING.0;
        let mut event = Event::with_flags(self, flags as u32, false)?;
        event.interprocess = true;
        Ok(event)
    }
}

impl<'c> Event<'c> {
    pub(crate) fn new(ctx: &'c Context, timing: bool) -> Result<Self> {
        let flags = if timing {
            CUevent_flags::CU_EVENT_DEFAULT
        } else {
            CUevent_flags::CU_EVENT_DISABLE_TIMING
        };
        Event::with_flags(ctx, flags.0 as u32, timing)
    }

    fn with_flags(ctx: &'c Context, flags: u32, timing: bool) -> Result<Self> {
        let cu = ctx.enter()?;
        let mut raw: CUevent = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and flags the header defines.
        ctx.check("cuEventCreate", unsafe {
            (cu.cuEventCreate)(&mut raw, flags)
        })?;
        Ok(Event::from_raw(ctx, raw, timing))
    }

    /// An event of `ctx` that this value owns and destroys.
    pub(crate) fn from_raw(ctx: &'c Context, raw: CUevent, timing: bool) -> Self {
        Event {
            ctx,
            raw,
            timing,
            recorded_in: Mutex::new(None),
            interprocess: false,
            exports: AtomicUsize::new(0),
        }
    }

    /// Whether other processes can open it ([`Context::ipc_event`]).
    pub fn is_interprocess(&self) -> bool {
        self.interprocess
    }

    /// The context.
    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUevent {
        self.raw
    }

    /// Whether the event records time.
    pub fn is_timing(&self) -> bool {
        self.timing
    }

    /// Records the event on `stream` (`cuEventRecord`). On a stream that a
    /// capture owns, only the capturing thread may record (the record
    /// becomes a node of its graph).
    ///
    /// # Errors
    ///
    /// [`Error::ContextMismatch`];
    /// [`Error::StreamCaptured`] on a stream captured by another thread;
    /// driver errors.
    pub fn record(&self, stream: &Stream<'_>) -> Result<()> {
        same_context("Event::record", self.ctx, stream.context())?;
        crate::context::release::refuse_in_callback("Event::record")?;
        let g = stream.state().lock();
        if !g.usable_by_thread() {
            return Err(Error::StreamCaptured {
                operation: "Event::record",
                device: self.ctx.device().ordinal(),
            });
        }
        let cu = self.ctx.enter()?;
        // Held from the record to the store: a wait on the event
        // (`Stream::wait`, `Event::done`) sees the capture the record
        // belongs to, never the record without it.
        let mut recorded_in = lock(&self.recorded_in);
        // SAFETY: a live event and a live stream of the same context; the
        // stream's capture lock (`g`) is held across the call.
        self.ctx.check("cuEventRecord", unsafe {
            (cu.cuEventRecord)(self.raw, stream.as_raw())
        })?;
        *recorded_in = g.capture.clone();
        Ok(())
    }

    /// Records the event on `raw`, a live stream of the context that is not
    /// captured (the caller holds its capture lock): for timing.
    pub(crate) fn record_on(&self, raw: CUstream) -> Result<()> {
        let cu = self.ctx.enter()?;
        let mut recorded_in = lock(&self.recorded_in);
        // SAFETY: a live event and stream of this context (the caller's
        // contract).
        self.ctx.check("cuEventRecord", unsafe {
            (cu.cuEventRecord)(self.raw, raw)
        })?;
        *recorded_in = None;
        Ok(())
    }

    /// The event's record lock, and the capture its last record belongs to
    /// while that runs: held across a wait on the event (a record cannot
    /// slip between the check and the wait; locked after any stream's
    /// state, never before one).
    pub(crate) fn lock_record(
        &self,
    ) -> (
        std::sync::MutexGuard<'_, Option<Arc<CaptureRecord>>>,
        Option<Arc<CaptureRecord>>,
    ) {
        let g = lock(&self.recorded_in);
        let c = g.clone().filter(|c| !c.ended());
        (g, c)
    }

    /// The capture the event's last record belongs to, while it runs.
    pub(crate) fn capture(&self) -> Option<Arc<CaptureRecord>> {
        lock(&self.recorded_in).clone().filter(|c| !c.ended())
    }

    fn refuse_captured(&self, operation: &'static str) -> Result<()> {
        crate::context::release::refuse_in_callback(operation)?;
        if self.capture().is_some() {
            return Err(Error::StreamCaptured {
                operation,
                device: self.ctx.device().ordinal(),
            });
        }
        Ok(())
    }

    /// Waits until the work before the event's record has finished
    /// (`cuEventSynchronize`).
    ///
    /// # Errors
    ///
    /// Driver errors (a faulted kernel's sticky error poisons the context);
    /// [`Error::StreamCaptured`] for an event recorded in a capture that
    /// goes on.
    pub fn synchronize(&self) -> Result<()> {
        self.refuse_captured("Event::synchronize")?;
        let cu = self.ctx.enter()?;
        // SAFETY: a live event.
        self.ctx.check("cuEventSynchronize", unsafe {
            (cu.cuEventSynchronize)(self.raw)
        })
    }

    /// Whether the event has completed (`cuEventQuery`).
    ///
    /// # Errors
    ///
    /// Driver errors other than `CUDA_ERROR_NOT_READY`.
    pub fn query(&self) -> Result<bool> {
        self.refuse_captured("Event::query")?;
        let cu = self.ctx.enter()?;
        // SAFETY: a live event.
        let rc = unsafe { (cu.cuEventQuery)(self.raw) };
        if rc == cuda_sys::CUresult::CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        self.ctx.check("cuEventQuery", rc).map(|()| true)
    }

    /// Time from `start` to this event, both recorded and completed
    /// (`cuEventElapsedTime_v2`, or `cuEventElapsedTime` on drivers before
    /// CUDA 12.8). Resolution is about half a microsecond.
    ///
    /// # Errors
    ///
    /// Driver errors: `CUDA_ERROR_NOT_READY` when either has not completed,
    /// `CUDA_ERROR_INVALID_HANDLE` when either was made without timing.
    pub fn elapsed_since(&self, start: &Event<'_>) -> Result<Duration> {
        same_context("Event::elapsed_since", self.ctx, start.ctx)?;
        let cu = self.ctx.enter()?;
        let mut ms = 0f32;
        let (call, rc) = match (cu.cuEventElapsedTime, cu.cuEventElapsedTime_v1) {
            // SAFETY: a valid out-pointer and two live events.
            (Some(f), _) => ("cuEventElapsedTime_v2", unsafe {
                f(&mut ms, start.raw, self.raw)
            }),
            // SAFETY: as above; the older entry point has the same signature.
            (None, Some(f)) => ("cuEventElapsedTime", unsafe {
                f(&mut ms, start.raw, self.raw)
            }),
            (None, None) => {
                return Err(crate::Error::NotSupported {
                    feature: "cuEventElapsedTime",
                    needs_driver: "CUDA 12.0",
                })
            }
        };
        self.ctx.check(call, rc)?;
        Ok(Duration::from_secs_f64(f64::from(ms.max(0.0)) / 1e3))
    }
}

/// Event operations seen from the stream: the stream module knows nothing
/// of events, so the dependency runs one way.
impl Stream<'_> {
    /// Makes later work on this stream wait for `event` (`cuStreamWaitEvent`).
    ///
    /// Waiting for an event recorded inside a capture makes this stream
    /// join that capture (its later work becomes nodes of the graph, until
    /// it joins back and the capture ends): only the capturing thread may do
    /// that.
    ///
    /// # Errors
    ///
    /// [`Error::ContextMismatch`];
    /// [`Error::StreamCaptured`] where this stream, or the event's capture,
    /// belongs to another thread's capture; driver errors.
    pub fn wait(&self, event: &Event<'_>) -> Result<()> {
        same_context("Stream::wait", self.context(), event.context())?;
        crate::context::release::refuse_in_callback("Stream::wait")?;
        let ctx = self.context();
        let mut g = self.state().lock();
        // Held to the wait below: no record of the event slips between.
        let (_record, joins) = event.lock_record();
        let foreign_join = joins
            .as_ref()
            .is_some_and(|c| c.thread != std::thread::current().id());
        if !g.usable_by_thread() || foreign_join {
            return Err(Error::StreamCaptured {
                operation: "Stream::wait",
                device: ctx.device().ordinal(),
            });
        }
        let cu = ctx.enter()?;
        let joining = match (&joins, &g.capture) {
            (Some(c), None) => {
                // The stream enters the capture: its fence first (what it
                // holds before the join is all of its work that will run).
                g.record_event(ctx, cu, self.as_raw())?;
                Some(c.clone())
            }
            _ => None,
        };
        // SAFETY: a live stream and a live event of the same context; flags
        // 0; the stream's capture lock (`g`) is held across the call.
        ctx.check("cuStreamWaitEvent", unsafe {
            (cu.cuStreamWaitEvent)(self.as_raw(), event.as_raw(), 0)
        })?;
        if let Some(c) = joining {
            lock(&c.joined).push(self.state().clone());
            g.capture = Some(c);
        }
        Ok(())
    }

    /// Records `event` at this point of the stream (`cuEventRecord`).
    ///
    /// # Errors
    ///
    /// [`Error::ContextMismatch`]; driver errors.
    pub fn record(&self, event: &Event<'_>) -> Result<()> {
        event.record(self)
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        if self.exports.load(Ordering::Acquire) > 0 {
            // Exported over IPC and never released: another process may
            // still wait on it (destroying it then is undefined behaviour
            // there), so it is kept.
            self.ctx
                .arena()
                .record_kept(0, "an event exported over IPC, never released");
            self.ctx.keep_for_export();
            return;
        }
        let raw = self.raw as usize;
        // SAFETY: destroys the event created in Event::new, once (now, or
        // after this thread's capture, or off a driver callback thread).
        self.ctx
            .release("cuEventDestroy_v2", None, move |cu| unsafe {
                (cu.cuEventDestroy)(raw as CUevent)
            });
    }
}
