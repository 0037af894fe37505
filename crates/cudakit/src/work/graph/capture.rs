//! Stream capture: work queued on a capturing stream inside a scope becomes
//! a [`Graph`] instead of running.

use std::sync::{Arc, Mutex};

use cuda_sys::{CUgraph, CUstream, CUstreamCaptureMode};

use super::{Graph, Launchers};
use crate::context::stream_state::CaptureRecord;
use crate::context::{same_context, Context};
use crate::error::{Error, Result};
use crate::work::graph::Kept;
use crate::work::scope::Scope;
use crate::work::stream::Stream;

/// A capture in progress: its stream, the key its host nodes report panics
/// under, and the callbacks its host nodes call.
struct Capturing {
    stream: usize,
    key: Arc<Launchers>,
    kept: Vec<Kept>,
}

static CAPTURES: Mutex<Vec<Capturing>> = Mutex::new(Vec::new());

fn captures() -> std::sync::MutexGuard<'static, Vec<Capturing>> {
    crate::context::lock(&CAPTURES)
}

/// The panic key of the capture on `stream`, if one is in progress.
pub(crate) fn capture_key(stream: CUstream) -> Option<Arc<Launchers>> {
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
    stream: &'a Stream<'a>,
    record: Arc<CaptureRecord>,
    done: bool,
}

impl EndCapture<'_> {
    /// Ends the capture (`cuStreamEndCapture`, under the stream's lock);
    /// clears the capture from its stream and from every stream that joined
    /// it; issues the stream-ordered frees deferred during it. Returns the
    /// graph (null if the driver made none), its host callbacks, the end
    /// call's result and the operation refused on this thread during the
    /// capture, if any.
    fn end(
        &mut self,
    ) -> (
        CUgraph,
        Option<Capturing>,
        cuda_sys::CUresult,
        Option<&'static str>,
    ) {
        self.done = true;
        let raw = self.stream.as_raw();
        let mut graph: CUgraph = std::ptr::null_mut();
        let (rc, mut deferred) = {
            let mut g = self.stream.state().lock();
            let rc = match self.ctx.enter_for_drop() {
                // SAFETY: the stream is capturing (begun by `Scope::capture`,
                // on this thread) and alive (borrowed for the scope); a valid
                // out-pointer; the stream's capture lock is held.
                Some(cu) => unsafe { (cu.cuStreamEndCapture)(raw, &mut graph) },
                None => cuda_sys::CUresult::CUDA_ERROR_NOT_INITIALIZED,
            };
            g.capture = None;
            (rc, vec![(raw, std::mem::take(&mut g.deferred_frees))])
        };
        for joined in self.record.end() {
            let mut g = joined.lock();
            if g.capture
                .as_ref()
                .is_some_and(|c| Arc::ptr_eq(c, &self.record))
            {
                g.capture = None;
            }
            // The stream is alive: `joined` holds its state, and a stream
            // dropped since `end` took the list found its state still naming
            // this capture and took its frees with it (see `Stream::drop`).
            let frees = std::mem::take(&mut g.deferred_frees);
            if !frees.is_empty() {
                deferred.push((g.raw as CUstream, frees));
            }
        }
        run_stream_frees(self.ctx, deferred);
        let violation = self.ctx.end_capture();
        (graph, take_capture(raw), rc, violation)
    }
}

/// Issues stream-ordered frees that waited for a capture to end, each on
/// its own stream (alive, and no longer captured). Called on the capturing
/// thread, which may still be capturing another stream: a stream-ordered
/// free on a stream that is not captured is allowed there.
fn run_stream_frees(ctx: &Context, list: Vec<(CUstream, Vec<(u64, u64)>)>) {
    if list.iter().all(|(_, f)| f.is_empty()) {
        return;
    }
    let Some(cu) = ctx.enter_for_drop() else {
        for (_, frees) in list {
            for (_, id) in frees {
                ctx.arena().record_leak(id, "cuMemFreeAsync (no driver)");
            }
        }
        return;
    };
    for (stream, frees) in list {
        for (ptr, id) in frees {
            // SAFETY: an allocation of `cuMemAllocAsync`/`FromPoolAsync`
            // whose buffer was dropped while its stream was captured (so
            // nothing of cudakit uses it), freed once, on that stream, which
            // is alive (the capture's scope borrows its origin; a joined
            // stream's drop takes its frees with it) and no longer captured.
            let rc = unsafe { (cu.cuMemFreeAsync)(ptr, stream) };
            ctx.record_drop_error("cuMemFreeAsync", rc);
            ctx.arena().record_release(id, rc, "cuMemFreeAsync");
        }
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
    let raw = graph as usize;
    // SAFETY: a graph the capture just made, destroyed once, never
    // instantiated.
    ctx.release("cuGraphDestroy", None, move |cu| unsafe {
        (cu.cuGraphDestroy)(raw as CUgraph)
    });
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
        let record = CaptureRecord::new(self.key());
        {
            let mut u = self.use_stream(stream)?;
            if u.captured() {
                return Err(Error::InvalidArgument(
                    "capture: the stream is capturing already (captures do not nest)".into(),
                ));
            }
            let cu = ctx.enter()?;
            // The fence: waits for the stream from other threads during the
            // capture stop here (see `StreamInner::event`).
            let raw = *u;
            u.inner().record_event(ctx, cu, raw)?;
            captures().push(Capturing {
                stream: *u as usize,
                key: Arc::new(Launchers::default()),
                kept: Vec::new(),
            });
            // Counted before the driver begins it: a context synchronize on
            // another thread either finished before (the count waits for it)
            // or sees the count and waits stream by stream.
            ctx.begin_capture();
            // SAFETY: a live stream of the current context, not capturing
            // (its state, locked here, says so; a capture begun by foreign
            // code makes the driver refuse); a defined mode.
            let rc = unsafe {
                (cu.cuStreamBeginCapture)(
                    *u,
                    CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                )
            };
            if let Err(e) = ctx.check("cuStreamBeginCapture_v2", rc) {
                ctx.abandon_capture();
                drop(take_capture(*u));
                return Err(e);
            }
            u.inner().capture = Some(record.clone());
        }
        let mut guard = EndCapture {
            ctx,
            stream,
            record,
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
        let graph = Graph::from_raw(ctx, graph, key, kept);
        graph
            .handle()
            .add_peers(crate::context::lock(&guard.record.peers).iter().copied());
        Ok(graph)
    }
}
