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
use std::marker::PhantomData;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use cuda_sys::CUstream;

use crate::context::same_context;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::memory::{byte_len, copy, DeviceCopy, DeviceDst, DeviceSrc, UnifiedBuffer};
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

/// The handle a scope's closure queues work through. See the module docs.
pub struct Scope<'s, 'env: 's> {
    ctx: &'env Context,
    streams: RefCell<Vec<CUstream>>,
    /// Whether the scope is counted as having queued work (see
    /// `Context::begin_scope_work`).
    counted: Cell<bool>,
    /// Launches made through the scope, added to the context's metrics
    /// when it ends (one shared atomic update per scope, not per launch).
    launches: Cell<u64>,
    timings: RefCell<Vec<(Timed, Event<'env>, Event<'env>)>>,
    _scope: PhantomData<&'s mut &'s ()>,
}

impl std::fmt::Debug for Scope<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope")
            .field("streams", &self.streams.borrow().len())
            .finish()
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
    pub fn scope<'env, R>(
        &'env self,
        f: impl for<'s> FnOnce(&'s Scope<'s, 'env>) -> Result<R>,
    ) -> Result<R> {
        let scope = Scope {
            ctx: self,
            streams: RefCell::new(Vec::new()),
            counted: Cell::new(false),
            launches: Cell::new(0),
            timings: RefCell::new(Vec::new()),
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

    /// Remembers a stream for the final synchronization.
    pub(crate) fn use_stream(&self, stream: &'s Stream<'_>) -> Result<CUstream> {
        same_context("scope", self.ctx, stream.context())?;
        if !self.counted.get() {
            self.ctx.begin_scope_work()?;
            self.counted.set(true);
        }
        let raw = stream.as_raw();
        self.ctx.check_capture_use(raw, self.key())?;
        let mut streams = self.streams.borrow_mut();
        if !streams.contains(&raw) {
            streams.push(raw);
        }
        Ok(raw)
    }

    /// Counts a launch (filed in the context's metrics when the scope ends).
    #[inline]
    pub(crate) fn count_launch(&self) {
        self.launches.set(self.launches.get() + 1);
    }

    /// Starts timing an operation on `stream` when kernel timing is on.
    pub(crate) fn time_start(&self, stream: &Stream<'_>) -> Result<Option<Event<'env>>> {
        // Nothing runs during a graph capture, so nothing is timed (the
        // events would be captured, never completed); graph launches are
        // timed instead (`crate::work::graph`).
        if !self.ctx.kernel_timing() || self.ctx.capturing() {
            return Ok(None);
        }
        let start = Event::new(self.ctx, true)?;
        start.record(stream)?;
        Ok(Some(start))
    }

    /// Ends timing started by [`Scope::time_start`]. `what` is only built
    /// when timing is on, so the default path allocates nothing.
    pub(crate) fn time_end(
        &self,
        what: impl FnOnce() -> Timed,
        stream: &Stream<'_>,
        start: Option<Event<'env>>,
    ) -> Result<()> {
        if let Some(start) = start {
            let end = Event::new(self.ctx, true)?;
            end.record(stream)?;
            self.timings.borrow_mut().push((what(), start, end));
        }
        Ok(())
    }

    /// Waits for every stream used and files the timings.
    fn finish(&self) -> Result<()> {
        let streams: Vec<CUstream> = std::mem::take(&mut *self.streams.borrow_mut());
        let mut first_err = None;
        if let Some(cu) = self.ctx.enter_for_drop() {
            for raw in streams {
                // SAFETY: every stream was borrowed for the scope's lifetime,
                // so it is still alive.
                let rc = unsafe { (cu.cuStreamSynchronize)(raw) };
                if let Err(e) = self.ctx.check("cuStreamSynchronize", rc) {
                    first_err.get_or_insert(e);
                }
            }
        }
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
        if let Some(e) = take_callback_panic(self.key()) {
            first_err.get_or_insert(e);
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// An identity of the scope, unique among live scopes (its address: a
    /// scope does not move while its closure runs).
    pub(crate) fn key(&self) -> usize {
        self as *const Self as *const () as usize
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
        copy::same_len("copy_to_device", dst.len(), src.len())?;
        same_context("copy_to_device", self.ctx, dst.context())?;
        let raw = self.use_stream(stream)?;
        let bytes = byte_len::<T>(src.len(), "copy")?;
        let t = self.time_start(stream)?;
        // SAFETY: `src` and `dst` are borrowed until the scope has
        // synchronized this stream; both hold `bytes` bytes. Large pageable
        // sources go through the staged pipeline, ordered after the stream.
        unsafe {
            copy::htod_ordered(
                self.ctx,
                raw,
                dst.device_ptr().as_raw(),
                src.as_ptr().cast(),
                bytes,
            )
        }?;
        self.time_end(|| Timed::HtoD, stream, t)
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
        copy::same_len("copy_to_host", src.len(), dst.len())?;
        same_context("copy_to_host", self.ctx, src.context())?;
        let raw = self.use_stream(stream)?;
        let bytes = byte_len::<T>(dst.len(), "copy")?;
        let t = self.time_start(stream)?;
        // SAFETY: `dst` is borrowed exclusively, `src` shared, until the
        // scope has synchronized this stream; both hold `bytes` bytes; every
        // bit pattern is a valid T.
        unsafe {
            copy::dtoh_ordered(
                self.ctx,
                raw,
                dst.as_mut_ptr().cast(),
                src.device_ptr().as_raw(),
                bytes,
            )
        }?;
        self.time_end(|| Timed::DtoH, stream, t)
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
        copy::same_len("copy", src.len(), dst.len())?;
        same_context("copy", self.ctx, src.context())?;
        same_context("copy", self.ctx, dst.context())?;
        let raw = self.use_stream(stream)?;
        let bytes = byte_len::<T>(src.len(), "copy")?;
        let t = self.time_start(stream)?;
        // SAFETY: both borrowed until the scope has synchronized this
        // stream; both hold `bytes` bytes.
        unsafe {
            copy::dtod_async(
                self.ctx,
                raw,
                dst.device_ptr().as_raw(),
                src.device_ptr().as_raw(),
                bytes,
            )
        }?;
        self.time_end(|| Timed::DtoD, stream, t)
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
        let raw = self.use_stream(stream)?;
        buffer.prefetch_on(raw, to_device)
    }
}

// ---- panics caught in host callbacks (work::callback, graph host nodes),
// reported when their scope ends

/// Panics caught in callbacks, as (scope key, message), not yet reported.
static PANICS: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());
/// How many entries `PANICS` holds: scopes look at the lock only when
/// some panic is pending, so the scope's end costs one load otherwise.
static PENDING: AtomicUsize = AtomicUsize::new(0);

fn panics() -> std::sync::MutexGuard<'static, Vec<(usize, String)>> {
    crate::context::lock(&PANICS)
}

fn message(payload: &(dyn Any + Send)) -> String {
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
pub(crate) fn record_callback_panic(key: usize, payload: Box<dyn Any + Send>) {
    let text = message(&*payload);
    // Dropping a payload can panic in turn; that panic is caught too.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    panics().push((key, text));
    PENDING.fetch_add(1, Ordering::AcqRel);
}

/// The first panic caught in a callback of the scope `key`, as the error
/// its end returns. Called by every scope as it ends.
pub(crate) fn take_callback_panic(key: usize) -> Option<Error> {
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
