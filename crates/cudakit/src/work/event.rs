//! Events: ordering between streams, and timing.

use std::time::Duration;

use cuda_sys::{CUevent, CUevent_flags};

use crate::context::same_context;
use crate::context::Context;
use crate::error::Result;
use crate::work::stream::Stream;

/// An event (`cuEventCreate`), destroyed on drop (`cuEventDestroy_v2`).
pub struct Event<'c> {
    ctx: &'c Context,
    raw: CUevent,
    timing: bool,
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
}

impl<'c> Event<'c> {
    pub(crate) fn new(ctx: &'c Context, timing: bool) -> Result<Self> {
        let cu = ctx.enter()?;
        let flags = if timing {
            CUevent_flags::CU_EVENT_DEFAULT
        } else {
            CUevent_flags::CU_EVENT_DISABLE_TIMING
        };
        let mut raw: CUevent = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and defined flags.
        ctx.check("cuEventCreate", unsafe {
            (cu.cuEventCreate)(&mut raw, flags.0 as u32)
        })?;
        Ok(Event { ctx, raw, timing })
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

    /// Records the event on `stream` (`cuEventRecord`).
    ///
    /// # Errors
    ///
    /// [`Error::ContextMismatch`](crate::Error::ContextMismatch); driver errors.
    pub fn record(&self, stream: &Stream<'_>) -> Result<()> {
        same_context("Event::record", self.ctx, stream.context())?;
        let cu = self.ctx.enter()?;
        // SAFETY: a live event and a live stream of the same context.
        self.ctx.check("cuEventRecord", unsafe {
            (cu.cuEventRecord)(self.raw, stream.as_raw())
        })
    }

    /// Waits until the work before the event's record has finished
    /// (`cuEventSynchronize`).
    ///
    /// # Errors
    ///
    /// Driver errors (a faulted kernel's sticky error poisons the context).
    pub fn synchronize(&self) -> Result<()> {
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
    /// # Errors
    ///
    /// [`Error::ContextMismatch`](crate::Error::ContextMismatch); driver errors.
    pub fn wait(&self, event: &Event<'_>) -> Result<()> {
        same_context("Stream::wait", self.context(), event.context())?;
        let cu = self.context().enter()?;
        // SAFETY: a live stream and a live event of the same context; flags 0.
        self.context().check("cuStreamWaitEvent", unsafe {
            (cu.cuStreamWaitEvent)(self.as_raw(), event.as_raw(), 0)
        })
    }

    /// Records `event` at this point of the stream (`cuEventRecord`).
    ///
    /// # Errors
    ///
    /// [`Error::ContextMismatch`](crate::Error::ContextMismatch); driver errors.
    pub fn record(&self, event: &Event<'_>) -> Result<()> {
        event.record(self)
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        if let Some(cu) = self.ctx.enter_for_drop() {
            // SAFETY: destroys the event created in Event::new, once.
            let rc = unsafe { (cu.cuEventDestroy)(self.raw) };
            self.ctx.record_drop_error("cuEventDestroy_v2", rc);
        }
    }
}
