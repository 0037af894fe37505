//! Streams: non-blocking, with a priority.

use std::sync::Arc;

use cuda_sys::{CUstream, CUstream_flags};

use crate::context::stream_state::StreamState;
use crate::context::Context;
use crate::error::{Error, Result};

/// A non-blocking stream (`CU_STREAM_NON_BLOCKING`: it does not wait for
/// the legacy default stream). Destroyed on drop (`cuStreamDestroy_v2`);
/// work still queued on it completes.
///
/// Streams are `Sync`: several threads may queue work on one stream. Every
/// enqueue holds the stream's capture lock from its capture check to the
/// driver call (see `crate::context::stream_state`), so that while a scope
/// captures the stream no other scope's or thread's work can enter the
/// graph: it is refused with [`Error::StreamCaptured`].
pub struct Stream<'c> {
    ctx: &'c Context,
    raw: CUstream,
    priority: i32,
    state: Arc<StreamState>,
}

// SAFETY: a stream handle may be used from any thread (the driver API is
// thread-safe); the context reference is Sync.
unsafe impl Send for Stream<'_> {}
// SAFETY: as above.
unsafe impl Sync for Stream<'_> {}

impl std::fmt::Debug for Stream<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("raw", &self.raw)
            .field("priority", &self.priority)
            .finish()
    }
}

impl Context {
    /// A non-blocking stream of default priority (`cuStreamCreateWithPriority`;
    /// on a green context `cuGreenCtxStreamCreate` where the driver has it).
    ///
    /// # Errors
    ///
    /// Driver errors; a poisoned context.
    pub fn stream(&self) -> Result<Stream<'_>> {
        self.stream_with_priority(0)
    }

    /// A non-blocking stream with `priority`; lower numbers are higher
    /// priorities, and values outside [`Context::stream_priority_range`] are
    /// clamped by the driver.
    ///
    /// # Errors
    ///
    /// Driver errors; a poisoned context.
    pub fn stream_with_priority(&self, priority: i32) -> Result<Stream<'_>> {
        let cu = self.enter()?;
        let mut raw: CUstream = std::ptr::null_mut();
        let non_blocking = CUstream_flags::CU_STREAM_NON_BLOCKING.0 as u32;
        match (self.as_raw_green(), cu.cuGreenCtxStreamCreate) {
            // A green context's stream, made on it directly (CUDA 12.5+).
            (Some(green), Some(create)) => {
                // SAFETY: a valid out-pointer, a live green context (owned
                // by `self`), the flag the call requires.
                self.check("cuGreenCtxStreamCreate", unsafe {
                    create(&mut raw, green, non_blocking, priority)
                })?;
            }
            // Otherwise (and on a 12.4 driver, for a green context) a stream
            // of the current context: for a green context, its
            // `cuCtxFromGreenCtx` context, which `enter` made current.
            _ => {
                // SAFETY: a valid out-pointer, a defined flag; the context
                // is current.
                self.check("cuStreamCreateWithPriority", unsafe {
                    (cu.cuStreamCreateWithPriority)(&mut raw, non_blocking, priority)
                })?;
            }
        }
        let mut actual = priority;
        // SAFETY: a live stream and a valid out-pointer.
        self.check("cuStreamGetPriority", unsafe {
            (cu.cuStreamGetPriority)(raw, &mut actual)
        })?;
        Ok(Stream {
            ctx: self,
            raw,
            priority: actual,
            state: StreamState::new(raw),
        })
    }
}

impl<'c> Stream<'c> {
    /// The context.
    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUstream {
        self.raw
    }

    /// The priority the driver gave the stream.
    pub fn priority(&self) -> i32 {
        self.priority
    }

    /// The stream's capture state (see `crate::context::stream_state`).
    pub(crate) fn state(&self) -> &Arc<StreamState> {
        &self.state
    }

    /// Refuses a wait or query of a stream that belongs to a capture: the
    /// driver would refuse it and invalidate the capture.
    fn refuse_captured(&self, operation: &'static str) -> Result<()> {
        crate::context::release::refuse_in_callback(operation)?;
        if self.state.lock().capture.is_some() {
            return Err(Error::StreamCaptured {
                operation,
                device: self.ctx.device().ordinal(),
            });
        }
        Ok(())
    }

    /// Waits for all work queued on the stream (`cuStreamSynchronize`).
    ///
    /// # Errors
    ///
    /// Driver errors, including the sticky error of a faulted kernel (which
    /// poisons the context); [`Error::StreamCaptured`] while the stream
    /// belongs to a graph capture (synchronizing it would invalidate the
    /// capture).
    pub fn synchronize(&self) -> Result<()> {
        self.ctx.refuse_during_capture("cuStreamSynchronize")?;
        self.refuse_captured("cuStreamSynchronize")?;
        let cu = self.ctx.enter()?;
        // SAFETY: a live stream of the current context.
        self.ctx.check("cuStreamSynchronize", unsafe {
            (cu.cuStreamSynchronize)(self.raw)
        })?;
        self.ctx.drain_callback_releases();
        Ok(())
    }

    /// Whether all queued work has finished (`cuStreamQuery`).
    ///
    /// # Errors
    ///
    /// Driver errors other than `CUDA_ERROR_NOT_READY`;
    /// [`Error::StreamCaptured`] while the stream belongs to a capture.
    pub fn query(&self) -> Result<bool> {
        self.refuse_captured("cuStreamQuery")?;
        let cu = self.ctx.enter()?;
        // SAFETY: a live stream.
        let rc = unsafe { (cu.cuStreamQuery)(self.raw) };
        if rc == cuda_sys::CUresult::CUDA_ERROR_NOT_READY {
            return Ok(false);
        }
        self.ctx.check("cuStreamQuery", rc).map(|()| true)
    }
}

impl Drop for Stream<'_> {
    fn drop(&mut self) {
        if crate::driver::forked() {
            // A child made by fork: the stream is the parent's, and its lock
            // may have been held by a thread that did not survive the fork.
            return;
        }
        let raw = self.raw as usize;
        let (deferred, foreign, event) = {
            let mut g = self.state.lock();
            // A stream that joined a capture (only joined streams can be
            // dropped during one: a capture's origin is borrowed by its
            // scope) leaves it; its deferred frees go with its destruction.
            let mut foreign = false;
            if let Some(c) = g.capture.take() {
                crate::context::lock(&c.joined).retain(|s| !Arc::ptr_eq(s, &self.state));
                foreign = c.thread != std::thread::current().id();
            }
            (
                std::mem::take(&mut g.deferred_frees),
                foreign,
                std::mem::take(&mut g.event),
            )
        };
        if foreign {
            // Dropped on another thread while it belongs to a capture of a
            // thread that goes on capturing: the driver still counts the
            // stream in that capture, so a free or destroy issued on it now
            // would be captured, and this thread cannot wait for the capture
            // to end. Kept (leaked on purpose), recorded as such.
            for (_, id) in deferred {
                self.ctx
                    .arena()
                    .record_leak(id, "its stream was dropped inside another thread's capture");
            }
            // The stream and its event are kept too: recorded, so the leak
            // report says so (they are handles, not memory: 0 bytes).
            self.ctx.arena().record_kept(
                0,
                "a stream (and its event) dropped inside another thread's capture",
            );
            return;
        }
        for (ptr, id) in deferred {
            // SAFETY: a stream-ordered allocation whose buffer was dropped
            // while this stream was captured (so nothing of cudakit uses
            // it), freed once, on this stream, which is still alive (it is
            // destroyed below, after this call is queued).
            self.ctx
                .release("cuMemFreeAsync", Some(id), move |cu| unsafe {
                    (cu.cuMemFreeAsync)(ptr, raw as CUstream)
                });
        }
        self.ctx.release("cuEventDestroy_v2", None, move |cu| {
            crate::context::stream_state::destroy_event(cu, event)
        });
        // SAFETY: destroys the stream created in stream_with_priority, once,
        // after every release above was issued or deferred before it (a
        // deferred release is queued on this thread's list ahead of this
        // one, and the list runs in order); queued work completes first
        // (driver semantics).
        self.ctx
            .release("cuStreamDestroy_v2", None, move |cu| unsafe {
                (cu.cuStreamDestroy)(raw as CUstream)
            });
    }
}
