//! Streams: non-blocking, with a priority.

use cuda_sys::{CUstream, CUstream_flags};

use crate::context::Context;
use crate::error::Result;

/// A non-blocking stream (`CU_STREAM_NON_BLOCKING`: it does not wait for
/// the legacy default stream). Destroyed on drop (`cuStreamDestroy_v2`);
/// work still queued on it completes.
pub struct Stream<'c> {
    ctx: &'c Context,
    raw: CUstream,
    priority: i32,
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
    /// A non-blocking stream of default priority (`cuStreamCreateWithPriority`).
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
        // SAFETY: a valid out-pointer, a defined flag; the context is current.
        self.check("cuStreamCreateWithPriority", unsafe {
            (cu.cuStreamCreateWithPriority)(
                &mut raw,
                CUstream_flags::CU_STREAM_NON_BLOCKING.0 as u32,
                priority,
            )
        })?;
        let mut actual = priority;
        // SAFETY: a live stream and a valid out-pointer.
        self.check("cuStreamGetPriority", unsafe {
            (cu.cuStreamGetPriority)(raw, &mut actual)
        })?;
        Ok(Stream {
            ctx: self,
            raw,
            priority: actual,
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

    /// Waits for all work queued on the stream (`cuStreamSynchronize`).
    ///
    /// # Errors
    ///
    /// Driver errors, including the sticky error of a faulted kernel (which
    /// poisons the context).
    pub fn synchronize(&self) -> Result<()> {
        let cu = self.ctx.enter()?;
        // SAFETY: a live stream of the current context.
        self.ctx.check("cuStreamSynchronize", unsafe {
            (cu.cuStreamSynchronize)(self.raw)
        })
    }

    /// Whether all queued work has finished (`cuStreamQuery`).
    ///
    /// # Errors
    ///
    /// Driver errors other than `CUDA_ERROR_NOT_READY`.
    pub fn query(&self) -> Result<bool> {
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
        if let Some(cu) = self.ctx.enter_for_drop() {
            // SAFETY: destroys the stream created in stream_with_priority,
            // once; queued work completes first (driver semantics).
            let rc = unsafe { (cu.cuStreamDestroy)(self.raw) };
            self.ctx.record_drop_error("cuStreamDestroy_v2", rc);
        }
    }
}
