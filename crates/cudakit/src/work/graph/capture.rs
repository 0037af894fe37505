//! Stream capture: work queued on a capturing stream inside a scope becomes
//! a [`Graph`] instead of running.

use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};

use cuda_sys::{CUgraph, CUstream, CUstreamCaptureMode};

use super::Graph;
use crate::context::{same_context, Context};
use crate::error::{Error, Result};
use crate::work::graph::Kept;
use crate::work::scope::Scope;
use crate::work::stream::Stream;

/// A capture in progress: its stream, the key its host nodes report panics
/// under, and the callbacks its host nodes call.
struct Capturing {
    stream: usize,
    key: Arc<AtomicUsize>,
    kept: Vec<Kept>,
}

static CAPTURES: Mutex<Vec<Capturing>> = Mutex::new(Vec::new());

fn captures() -> std::sync::MutexGuard<'static, Vec<Capturing>> {
    crate::context::lock(&CAPTURES)
}

/// The panic key of the capture on `stream`, if one is in progress.
pub(crate) fn capture_key(stream: CUstream) -> Option<Arc<AtomicUsize>> {
    captures()
        .iter()
        .find(|c| c.stream == stream as usize)
        .map(|c| c.key.clone())
}

/// Hands a host node's callback to the capture on `stream`, whose graph
/// will keep it.
pub(crate) fn keep_in_capture(stream: CUstream, kept: Kept) {
    let mut list = captures();
    if let Some(c) = list.iter_mut().find(|c| c.stream == stream as usize) {
        c.kept.push(kept);
    }
}

fn take_capture(stream: CUstream) -> Option<Capturing> {
    let mut list = captures();
    let i = list.iter().position(|c| c.stream == stream as usize)?;
    Some(list.swap_remove(i))
}

/// Ends a capture however the closure left: by returning or by panicking.
struct EndCapture<'a> {
    ctx: &'a Context,
    stream: CUstream,
    done: bool,
}

impl EndCapture<'_> {
    /// Ends the capture; returns the graph (null if the driver made none),
    /// its host callbacks, the end call's result and the operation refused
    /// during the capture, if any.
    fn end(
        &mut self,
    ) -> (
        CUgraph,
        Option<Capturing>,
        cuda_sys::CUresult,
        Option<&'static str>,
    ) {
        self.done = true;
        let mut graph: CUgraph = std::ptr::null_mut();
        let rc = match self.ctx.enter_for_drop() {
            // SAFETY: the stream is capturing (begun by `Scope::capture`,
            // on this thread) and alive (borrowed for the scope); a valid
            // out-pointer.
            Some(cu) => unsafe { (cu.cuStreamEndCapture)(self.stream, &mut graph) },
            None => cuda_sys::CUresult::CUDA_ERROR_NOT_INITIALIZED,
        };
        let violation = self.ctx.end_capture(self.stream);
        (graph, take_capture(self.stream), rc, violation)
    }
}

impl Drop for EndCapture<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let (graph, kept, _, _) = self.end();
        destroy(self.ctx, graph);
        drop(kept);
    }
}

fn destroy(ctx: &Context, graph: CUgraph) {
    if graph.is_null() {
        return;
    }
    if let Some(cu) = ctx.enter_for_drop() {
        // SAFETY: a graph the capture just made, destroyed once, never
        // instantiated.
        let rc = unsafe { (cu.cuGraphDestroy)(graph) };
        ctx.record_drop_error("cuGraphDestroy", rc);
    }
}

impl<'s, 'env> Scope<'s, 'env> {
    /// Captures the work `f` queues on `stream` into a [`Graph`] instead of
    /// running it (`cuStreamBeginCapture_v2` in thread-local mode, then
    /// `cuStreamEndCapture`). Launches, copies, memsets, host callbacks
    /// and event waits queued on `stream` inside `f` (through this scope)
    /// become nodes; every check a launch makes happens now, at capture
    /// time.
    ///
    /// The graph borrows what the captured work borrows, for the scope's
    /// lifetime: it can be instantiated and replayed within the scope,
    /// with its inputs changed between replays through device memory.
    ///
    /// cudakit's own bookkeeping stays out of the capture: kernel timing
    /// is suspended while any stream of the context captures (replays are
    /// timed instead), and a synchronous operation (a synchronous copy or
    /// memset, [`Context::synchronize`]) is refused before the driver sees
    /// it. Such a refusal ends the capture: `capture` returns
    /// [`Error::IllegalDuringCapture`] naming the operation (even if `f`
    /// ignored the error), the partial graph is discarded and the context
    /// stays usable.
    ///
    /// # Errors
    ///
    /// The first error of `f`; [`Error::IllegalDuringCapture`]; a capture
    /// the driver invalidated (`cuStreamEndCapture`:
    /// `CUDA_ERROR_STREAM_CAPTURE_INVALIDATED`, with the cause returned by
    /// the call inside `f` that broke it); [`Error::InvalidArgument`] when
    /// `stream` is capturing already; context mismatches.
    pub fn capture(
        &self,
        stream: &'s Stream<'_>,
        f: impl FnOnce() -> Result<()>,
    ) -> Result<Graph<'s>> {
        let ctx: &'env Context = self.context();
        same_context("capture", ctx, stream.context())?;
        let raw = self.use_stream(stream)?;
        {
            let mut list = captures();
            if list.iter().any(|c| c.stream == raw as usize) {
                return Err(Error::InvalidArgument(
                    "capture: the stream is capturing already (captures do not nest)".into(),
                ));
            }
            list.push(Capturing {
                stream: raw as usize,
                key: Arc::new(AtomicUsize::new(0)),
                kept: Vec::new(),
            });
        }
        let cu = match ctx.enter() {
            Ok(cu) => cu,
            Err(e) => {
                drop(take_capture(raw));
                return Err(e);
            }
        };
        ctx.begin_capture(raw, self.key());
        // SAFETY: a live stream of the current context, not capturing (no
        // capture of ours is registered for it, and one begun elsewhere
        // makes the driver refuse); a defined mode.
        let rc = unsafe {
            (cu.cuStreamBeginCapture)(
                raw,
                CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        };
        if let Err(e) = ctx.check("cuStreamBeginCapture_v2", rc) {
            ctx.end_capture(raw);
            drop(take_capture(raw));
            return Err(e);
        }
        let mut guard = EndCapture {
            ctx,
            stream: raw,
            done: false,
        };
        let result = f();
        let (graph, capturing, rc, violation) = guard.end();
        let kept = capturing.map(|c| (c.key, c.kept));
        if let Some(operation) = violation {
            destroy(ctx, graph);
            return Err(Error::IllegalDuringCapture {
                operation,
                device: ctx.device().ordinal(),
            });
        }
        if let Err(e) = result {
            destroy(ctx, graph);
            return Err(e);
        }
        if let Err(e) = ctx.check("cuStreamEndCapture", rc) {
            destroy(ctx, graph);
            return Err(e);
        }
        let (key, kept) = kept.unwrap_or_default();
        Ok(Graph::from_raw(ctx, graph, key, kept))
    }
}
