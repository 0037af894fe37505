//! Executable graphs: instantiated, launched on a stream in a scope,
//! updated node by node or as a whole.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use cuda_sys::{
    CUevent, CUevent_flags, CUgraphExec, CUgraphExecUpdateResult, CUgraphExecUpdateResultInfo,
    CUgraphInstantiate_flags, CUresult,
};

use super::{
    describe_node, kernel_node_params, raw_kind, Graph, GraphHandle, GraphNode, HostNodes,
    Launchers, NodeKind,
};
use crate::compile::module::Function;
use crate::context::arena::AllocKind;
use crate::context::{same_context, Context};
use crate::error::{Error, Result};
use crate::work::launch::params::PointerArray;
use crate::work::launch::{LaunchConfig, ParamList};
use crate::work::scope::{Scope, Timed};
use crate::work::stream::Stream;

/// How a graph is instantiated (`CUgraphInstantiate_flags`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct InstantiateOptions {
    /// Free the graph's unfreed allocations before each relaunch
    /// (`CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH`).
    pub auto_free_on_launch: bool,
    /// Use each kernel node's priority instead of the stream's
    /// (`CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY`).
    pub use_node_priority: bool,
    /// Label for the metrics (`graph <label>`); the graph's number when
    /// empty.
    pub label: Option<&'static str>,
    /// Make the graph launchable from the device
    /// (`CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH`), checked against the
    /// rules CUDA sets for such graphs and uploaded before `instantiate`
    /// returns (see [`InstantiateOptions::device_launch`]).
    pub device_launch: bool,
}

impl InstantiateOptions {
    /// With auto-free on launch.
    pub fn auto_free_on_launch(mut self) -> Self {
        self.auto_free_on_launch = true;
        self
    }

    /// With node priorities.
    pub fn use_node_priority(mut self) -> Self {
        self.use_node_priority = true;
        self
    }

    /// With a label for the metrics.
    pub fn label(mut self, label: &'static str) -> Self {
        self.label = Some(label);
        self
    }

    /// For launch from the device (`CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH`):
    /// a kernel may then take the executable graph as an argument and
    /// launch it (`cudaGraphLaunch`). The graph may hold kernel, memcpy,
    /// memset and child-graph nodes only, of one context, and no kernel
    /// that uses dynamic parallelism; `instantiate` refuses anything else
    /// before the driver, and uploads the result (`cuGraphUpload`, waited
    /// for). Not with auto-free on launch (graph memory is refused
    /// anyway). See [`device_launch`](super::device_launch).
    pub fn device_launch(mut self) -> Self {
        self.device_launch = true;
        self
    }

    fn flags(&self) -> u64 {
        let mut f = 0u64;
        if self.auto_free_on_launch {
            f |= CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.0 as u64;
        }
        if self.use_node_priority {
            f |= CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY.0 as u64;
        }
        if self.device_launch {
            f |= CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH.0 as u64;
        }
        f
    }
}

/// An executable graph (`cuGraphInstantiateWithFlags`), destroyed on drop
/// (`cuGraphExecDestroy`) after its launches still in flight have finished.
///
/// `'g` is how long what the graph's nodes use stays borrowed: a replay
/// can only be launched in a scope that this outlives
/// ([`Scope::launch_graph`]), so the scope's wait covers every replay and no
/// borrow ends while one runs, whether or not the executable graph (or its
/// graph) is dropped, or forgotten, first. The executable graph shares what
/// it needs of its graph (the driver's graph, for describing nodes; the
/// host-node callbacks); the graph itself may go first.
pub struct GraphExec<'g> {
    pub(super) ctx: &'g Context,
    pub(super) raw: CUgraphExec,
    /// The graph it was instantiated from: kernel-node updates name nodes
    /// of this one.
    origin_id: u64,
    origin: Arc<GraphHandle>,
    /// The graph whose host callbacks it calls now (after `update`), and
    /// their launch keys.
    host: Arc<HostNodes>,
    keys: Vec<Arc<Launchers>>,
    /// Allocation nodes without a free node (freed by the driver before
    /// each relaunch, with auto-free on launch), freed after the last
    /// replay when dropped.
    unfreed: Vec<u64>,
    /// The arena record of the graph's allocations.
    arena_id: Option<u64>,
    /// Recorded after every launch and upload; dropping waits for it.
    pub(super) done: CUevent,
    pub(super) used: Cell<bool>,
    /// Whether it was launched (not only uploaded): only then do its
    /// allocations exist.
    launched: Cell<bool>,
    pub(super) label: String,
    /// Instantiated for device launch (and uploaded).
    pub(super) device_launch: bool,
    /// Work that uses it may still run and cannot be waited for (an upload
    /// whose wait failed, a launch or upload whose `done` record failed):
    /// the drop keeps it, leaked on purpose.
    pub(super) keep: Cell<bool>,
    _borrows: PhantomData<&'g ()>,
}

impl std::fmt::Debug for GraphExec<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphExec")
            .field("raw", &self.raw)
            .field("label", &self.label)
            .finish()
    }
}

impl<'g> Graph<'g> {
    /// Instantiates the graph (`cuGraphInstantiateWithFlags`). The result
    /// keeps what the graph's nodes borrow borrowed (`'g`).
    ///
    /// # Errors
    ///
    /// [`Error::EmptyGraph`] for a graph without nodes;
    /// [`Error::InvalidArgument`] for allocation nodes without a free node
    /// when auto-free on launch is off (each launch would leak them), for a
    /// conditional body (instantiated with its graph), and for conditional
    /// handles no node uses; for [`InstantiateOptions::device_launch`],
    /// [`Error::NodeNotAllowed`] naming a node CUDA does not allow there;
    /// driver errors (also of the upload that follows a device-launch
    /// instantiation).
    #[track_caller]
    pub fn instantiate(&self, options: InstantiateOptions) -> Result<GraphExec<'g>> {
        if self.is_conditional_body() {
            return Err(Error::InvalidArgument(
                "cuGraphInstantiateWithFlags: a conditional body is instantiated with the graph \
                 that holds its node, not alone"
                    .into(),
            ));
        }
        self.check_conditions_used()?;
        if options.device_launch {
            if options.auto_free_on_launch {
                return Err(Error::InvalidArgument(
                    "cuGraphInstantiateWithFlags: a graph for device launch cannot free on \
                     launch (it may hold no graph memory)"
                        .into(),
                ));
            }
            self.check_device_launch()?;
        }
        let (unfreed, alloc_bytes) = self.allocations();
        if !unfreed.is_empty() && !options.auto_free_on_launch {
            return Err(Error::InvalidArgument(format!(
                "cuGraphInstantiateWithFlags: {} allocation node(s) ({} bytes) have no free node, \
                 so every launch would leak them; add Graph::add_mem_free or instantiate with \
                 auto_free_on_launch",
                unfreed.len(),
                unfreed.iter().map(|(_, b)| b).sum::<usize>()
            )));
        }
        let unfreed: Vec<u64> = unfreed.iter().map(|(p, _)| *p).collect();
        if self.raw_nodes()?.is_empty() {
            return Err(Error::EmptyGraph);
        }
        let ctx = self.context();
        let cu = ctx.enter()?;
        let mut done: CUevent = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and defined flags.
        ctx.check("cuEventCreate", unsafe {
            (cu.cuEventCreate)(&mut done, CUevent_flags::CU_EVENT_DISABLE_TIMING.0 as u32)
        })?;
        let mut raw: CUgraphExec = std::ptr::null_mut();
        // SAFETY: a live graph of the current context; defined flags.
        let rc = unsafe { (cu.cuGraphInstantiate)(&mut raw, self.as_raw(), options.flags()) };
        if let Err(e) = ctx.check("cuGraphInstantiateWithFlags", rc) {
            // SAFETY: the event made above, destroyed once.
            let rc = unsafe { (cu.cuEventDestroy)(done) };
            ctx.record_drop_error("cuEventDestroy_v2", rc);
            return Err(e);
        }
        let label = match options.label {
            Some(l) => l.to_owned(),
            None => format!("#{}", self.id()),
        };
        let arena_id = (alloc_bytes > 0).then(|| {
            ctx.arena().record_alloc(
                AllocKind::Graph,
                alloc_bytes,
                std::panic::Location::caller(),
            )
        });
        let exec = GraphExec {
            ctx,
            raw,
            origin_id: self.id(),
            origin: self.handle().clone(),
            host: self.host().clone(),
            keys: self.keys(),
            unfreed,
            arena_id,
            done,
            used: Cell::new(false),
            launched: Cell::new(false),
            label,
            device_launch: options.device_launch,
            keep: Cell::new(false),
            _borrows: PhantomData,
        };
        if exec.device_launch {
            exec.upload_and_wait()?;
        }
        Ok(exec)
    }
}

impl<'g> GraphExec<'g> {
    /// The context.
    pub fn context(&self) -> &'g Context {
        self.ctx
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUgraphExec {
        self.raw
    }

    /// The label the metrics file replays under (`graph <label>`).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Records the replay-done event on `stream`; `cu` comes from the
    /// caller's `enter` of this context, just before.
    fn mark(&self, cu: &cuda_sys::Driver, stream: cuda_sys::CUstream) -> Result<()> {
        // SAFETY: a live event and stream of this context.
        let rc = unsafe { (cu.cuEventRecord)(self.done, stream) };
        if rc != CUresult::CUDA_SUCCESS {
            // The launch or upload just queued is not covered by `done`:
            // no wait can tell when it is over, so the drop keeps the exec,
            // its event and its allocations (leaked on purpose, recorded).
            self.keep.set(true);
        }
        self.ctx.check("cuEventRecord", rc)?;
        self.used.set(true);
        Ok(())
    }

    /// Uploads the graph to the device ahead of its first launch
    /// (`cuGraphUpload`) on `stream`, inside a scope, so the first launch
    /// costs no more than the next ones.
    ///
    /// # Errors
    ///
    /// Context mismatches; driver errors.
    pub fn upload<'s>(&self, scope: &Scope<'s, '_>, stream: &'s Stream<'_>) -> Result<()>
    where
        'g: 's,
    {
        same_context("GraphExec::upload", self.ctx, stream.context())?;
        same_context("GraphExec::upload", self.ctx, scope.context())?;
        scope.context().refuse_during_capture("cuGraphUpload")?;
        let raw = scope.use_stream(stream)?;
        if raw.captured() {
            return Err(Error::IllegalDuringCapture {
                operation: "cuGraphUpload",
                device: self.ctx.device().ordinal(),
            });
        }
        let cu = self.ctx.enter()?;
        // SAFETY: a live executable graph and stream of this context; the
        // stream's capture lock is held.
        self.ctx.check("cuGraphUpload", unsafe {
            (cu.cuGraphUpload)(self.raw, *raw)
        })?;
        self.mark(cu, *raw)
    }

    fn check_node(&self, what: &'static str, node: GraphNode) -> Result<()> {
        if node.graph == self.origin_id {
            Ok(())
        } else {
            Err(Error::ForeignGraphNode { what, index: 0 })
        }
    }

    /// Gives the kernel node `node` (of the graph this was instantiated
    /// from) a new function, configuration and arguments, checked like a
    /// launch (`cuGraphExecKernelNodeSetParams_v2`). Takes effect at the
    /// next launch; the arguments' buffers are borrowed for `'g`.
    ///
    /// # Safety
    ///
    /// As [`Graph::add_kernel`].
    ///
    /// # Errors
    ///
    /// As [`Scope::launch`](crate::Scope::launch);
    /// [`Error::ForeignGraphNode`] for a node of another graph,
    /// [`Error::InvalidArgument`] for a node that is not a kernel node;
    /// driver errors (a function of another context, say).
    pub unsafe fn set_kernel_params(
        &mut self,
        node: GraphNode,
        function: &'g Function<'_>,
        config: &LaunchConfig,
        params: &ParamList<'g>,
    ) -> Result<()> {
        self.check_node("set_kernel_params", node)?;
        let kind = raw_kind(self.ctx, node.raw)?;
        if kind != NodeKind::Kernel {
            return Err(Error::InvalidArgument(format!(
                "set_kernel_params: {} is not a kernel node",
                describe_node(self.ctx, self.origin.raw(), node.raw)
            )));
        }
        if self.device_launch && function.uses_dynamic_parallelism() == Some(true) {
            return Err(Error::NodeNotAllowed {
                what: "set_kernel_params",
                place: "a graph instantiated for device launch",
                kind: format!(
                    "the kernel {}, which uses dynamic parallelism",
                    function.name()
                ),
                allowed: "a graph launched from the device takes no kernel that uses dynamic \
                          parallelism",
            });
        }
        let mut pointers = PointerArray::new();
        let p = kernel_node_params(
            self.ctx,
            function,
            config,
            params,
            &mut pointers,
            self.origin_id,
        )?;
        self.origin.add_peers(params.peer_uses(self.ctx.id()));
        let cu = self.ctx.enter()?;
        // SAFETY: a live executable graph and a kernel node of the graph it
        // was instantiated from; `p` points into `pointers` and `params`,
        // alive across the call, which copies the values.
        let rc = unsafe { (cu.cuGraphExecKernelNodeSetParams)(self.raw, node.raw, &p) };
        self.ctx.check("cuGraphExecKernelNodeSetParams_v2", rc)?;
        if self.device_launch {
            // Uploaded again before the device may launch it.
            self.upload_and_wait()?;
        }
        Ok(())
    }

    /// Updates the executable graph to `graph`, which must have the same
    /// shape (`cuGraphExecUpdate_v2`): same nodes of the same kinds, same
    /// edges; parameters may differ. Takes effect at the next launch.
    ///
    /// # Errors
    ///
    /// [`Error::GraphUpdate`] naming the node at fault and the reason when
    /// the driver refuses (the executable graph is unchanged and usable);
    /// context mismatches; [`Error::InvalidArgument`] for a conditional
    /// body or unused conditional handles; for an executable graph made
    /// for device launch, [`Error::NodeNotAllowed`] as at instantiation
    /// (it is uploaded again after the update); other driver errors.
    pub fn update(&mut self, graph: &Graph<'g>) -> Result<()> {
        same_context("GraphExec::update", self.ctx, graph.context())?;
        if graph.is_conditional_body() {
            return Err(Error::InvalidArgument(
                "GraphExec::update: a conditional body is not a graph to update to; update to \
                 the graph that holds its node"
                    .into(),
            ));
        }
        graph.check_conditions_used()?;
        if self.device_launch {
            graph.check_device_launch()?;
        }
        let cu = self.ctx.enter()?;
        let mut info = CUgraphExecUpdateResultInfo::default();
        // SAFETY: a live executable graph and graph of this context; a
        // valid out-pointer.
        let rc = unsafe { (cu.cuGraphExecUpdate)(self.raw, graph.as_raw(), &mut info) };
        if rc == CUresult::CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE {
            return Err(Error::GraphUpdate {
                node: graph.describe(info.errorNode),
                reason: update_reason(info.result),
            });
        }
        self.ctx.check("cuGraphExecUpdate_v2", rc)?;
        self.host = graph.host().clone();
        self.origin.add_peers(graph.handle().peers());
        self.keys = graph.keys();
        if self.device_launch {
            // A device-launch graph is uploaded again after an update
            // before the device may launch it.
            self.upload_and_wait()?;
        }
        Ok(())
    }
}

/// What a `CUgraphExecUpdateResult` means.
pub(crate) fn update_reason(r: CUgraphExecUpdateResult) -> &'static str {
    use CUgraphExecUpdateResult as R;
    match r {
        R::CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED => {
            "the topology changed (nodes or edges added or removed)"
        }
        R::CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED => "a node's type changed",
        R::CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED => "a kernel node's function changed",
        R::CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED => {
            "a node's parameters changed in a way an update cannot take"
        }
        R::CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED => "something about the node is not supported",
        R::CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE => {
            "a kernel node's function changed in an unsupported way"
        }
        R::CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED => {
            "node attributes changed in an unsupported way"
        }
        _ => "the driver refused the update (CU_GRAPH_EXEC_UPDATE_ERROR)",
    }
}

impl Drop for GraphExec<'_> {
    fn drop(&mut self) {
        let (raw, done, used) = (self.raw as usize, self.done as usize, self.used.get());
        if self.keep.get() {
            // An upload may still run: keep the exec, its event and its
            // allocations, as a failed wait below does.
            if let Some(id) = self.arena_id {
                self.ctx.arena().record_leak(id, "cuStreamSynchronize");
            }
            return;
        }
        let launched = self.launched.get();
        let unfreed = std::mem::take(&mut self.unfreed);
        let arena_id = self.arena_id;
        let ctx = self.ctx.clone();
        let device = self.ctx.device().as_raw();
        // The whole release waits on this thread's capture if it captures
        // (a wait there would invalidate it), or off a driver callback.
        self.ctx.release("cuGraphExecDestroy", None, move |cu| {
            if used {
                // SAFETY: a live event, recorded after the last launch.
                let rc = unsafe { (cu.cuEventSynchronize)(done as CUevent) };
                if rc != CUresult::CUDA_SUCCESS && !crate::DriverCode::from_raw(rc).is_sticky() {
                    // A replay may still run: keep everything it uses (the
                    // executable graph, its event, its allocations).
                    ctx.record_drop_error("cuEventSynchronize", rc);
                    if let Some(id) = arena_id {
                        ctx.arena().record_leak(id, "cuEventSynchronize");
                    }
                    // Recorded above; nothing more is released.
                    return CUresult::CUDA_SUCCESS;
                }
                ctx.record_drop_error("cuEventSynchronize", rc);
            }
            let mut freed = true;
            if launched && !unfreed.is_empty() {
                freed = free_graph_memory(&ctx, cu, &unfreed);
            }
            if let Some(id) = arena_id {
                if freed {
                    ctx.arena().record_free(id);
                } else {
                    ctx.arena().record_leak(id, "cuMemFree_v2");
                }
            }
            // SAFETY: the event made by instantiate, destroyed once.
            let rc = unsafe { (cu.cuEventDestroy)(done as CUevent) };
            ctx.record_drop_error("cuEventDestroy_v2", rc);
            // SAFETY: destroys the executable graph made by instantiate,
            // once, after its replays (waited for above; an exec that is
            // still in flight would be freed by the driver on completion).
            let rc = unsafe { (cu.cuGraphExecDestroy)(raw as CUgraphExec) };
            if launched && !unfreed.is_empty() {
                // Graph memory stays reserved for graphs until trimmed, and
                // an exec that lives holds its reservation: trimmed once the
                // exec is gone, to hand it back to the device.
                // SAFETY: a valid device handle of this context.
                let trim = unsafe { (cu.cuDeviceGraphMemTrim)(device) };
                ctx.record_drop_error("cuDeviceGraphMemTrim", trim);
            }
            rc
        });
    }
}

/// Frees the allocations of an auto-free-on-launch graph's last replay
/// (`ptrs`, which no free node freed), after that replay: stream-ordered
/// (`cuMemFreeAsync` on a stream of its own, then waited for), the way
/// graph memory is handed back to the graph memory pool. Measured on the
/// H200 (driver 580): `cuMemFree_v2` of such an allocation returns success,
/// yet compute-sanitizer's leak check still counts it live, and a
/// `cuMemFreeAsync` does not leave that report. `cuMemFree_v2` remains
/// the fallback where no stream can be made. Whether everything was freed.
fn free_graph_memory(ctx: &Context, cu: &'static cuda_sys::Driver, ptrs: &[u64]) -> bool {
    let mut stream: cuda_sys::CUstream = std::ptr::null_mut();
    // SAFETY: a valid out-pointer and defined flags; the context is current
    // (the release runs entered).
    let made = unsafe {
        (cu.cuStreamCreate)(
            &mut stream,
            cuda_sys::CUstream_flags::CU_STREAM_NON_BLOCKING.0 as u32,
        )
    };
    if made != CUresult::CUDA_SUCCESS {
        ctx.record_drop_error("cuStreamCreate", made);
        let mut freed = true;
        for ptr in ptrs {
            // SAFETY: an allocation of the exec's last replay that no free
            // node freed (auto-free on launch), freed once, after that
            // replay (waited for by the caller).
            let rc = unsafe { (cu.cuMemFree)(*ptr) };
            ctx.record_drop_error("cuMemFree_v2", rc);
            freed &= rc == CUresult::CUDA_SUCCESS;
        }
        return freed;
    }
    let mut freed = true;
    for ptr in ptrs {
        // SAFETY: as above, queued on a live stream made here.
        let rc = unsafe { (cu.cuMemFreeAsync)(*ptr, stream) };
        ctx.record_drop_error("cuMemFreeAsync", rc);
        freed &= rc == CUresult::CUDA_SUCCESS;
    }
    // SAFETY: the live stream made above.
    let rc = unsafe { (cu.cuStreamSynchronize)(stream) };
    ctx.record_drop_error("cuStreamSynchronize", rc);
    freed &= rc == CUresult::CUDA_SUCCESS;
    // SAFETY: the stream made above, destroyed once (its frees are done).
    let rc = unsafe { (cu.cuStreamDestroy)(stream) };
    ctx.record_drop_error("cuStreamDestroy_v2", rc);
    freed
}

impl<'s, 'env> Scope<'s, 'env> {
    /// Launches `exec` on `stream` (`cuGraphLaunch`). The replay is
    /// counted in the metrics ([`Metrics::graph_launches`]); with kernel
    /// timing on, its time is filed under `graph <label>`.
    ///
    /// What the graph's nodes borrow (`'g`) must outlive the scope, whose
    /// wait covers the replay: dropping or forgetting the executable graph,
    /// or its graph, cannot end those borrows while the replay runs. The
    /// scope also keeps the graph's host-node callbacks alive until then.
    ///
    /// [`Metrics::graph_launches`]: crate::Metrics::graph_launches
    ///
    /// A graph whose nodes borrow a buffer of the scope's own closure
    /// cannot be launched there: the buffer could be dropped while the
    /// replay runs.
    ///
    /// ```compile_fail,E0597
    /// # fn main() -> cudakit::Result<()> {
    /// let ctx = cudakit::Context::new(0)?;
    /// let stream = ctx.stream()?;
    /// ctx.scope(|s| {
    ///     let buf = ctx.alloc::<f32>(16)?;
    ///     let mut g = ctx.graph()?;
    ///     g.add_memset(&buf, 0.0f32, &[])?;
    ///     let exec = g.instantiate(Default::default())?;
    ///     s.launch_graph(&stream, &exec) // error: `buf` does not live long enough
    /// })?;
    /// # Ok(()) }
    /// ```
    ///
    /// Built outside the scope, it can, however often, with the exec or the
    /// graph dropped (or forgotten) whenever:
    ///
    /// ```no_run
    /// # fn main() -> cudakit::Result<()> {
    /// let ctx = cudakit::Context::new(0)?;
    /// let stream = ctx.stream()?;
    /// let buf = ctx.alloc::<f32>(16)?;
    /// let mut g = ctx.graph()?;
    /// g.add_memset(&buf, 0.0f32, &[])?;
    /// let exec = g.instantiate(Default::default())?;
    /// ctx.scope(|s| {
    ///     s.launch_graph(&stream, &exec)?;
    ///     std::mem::forget(exec); // leaks it; the scope still waits
    ///     Ok(())
    /// })?;
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ContextMismatch`] for a stream (or scope) of another
    /// context; [`Error::IllegalDuringCapture`] inside a capture; driver
    /// errors.
    pub fn launch_graph<'g>(&self, stream: &'s Stream<'_>, exec: &GraphExec<'g>) -> Result<()>
    where
        'g: 's,
    {
        let _nvtx = crate::nvtx::auto("graph launch");
        same_context("launch_graph", exec.ctx, stream.context())?;
        same_context("launch_graph", exec.ctx, self.context())?;
        let ctx = self.context();
        ctx.refuse_during_capture("cuGraphLaunch")?;
        // What the graph touches is not known here: after all the scope's
        // other streams.
        exec.origin.check_peers(ctx)?;
        let raw = self.use_stream_after_all(stream)?;
        if raw.captured() {
            return Err(Error::IllegalDuringCapture {
                operation: "cuGraphLaunch",
                device: ctx.device().ordinal(),
            });
        }
        self.keep_alive(Arc::new(super::LaunchMark::new(
            self.key(),
            exec.keys.clone(),
            exec.host.clone(),
        )));
        let timer = self.time_start(&raw)?;
        let cu = ctx.enter()?;
        // SAFETY: a live executable graph and stream of this context; the
        // stream's capture lock is held. What the graph touches is borrowed
        // for 'g, which outlives this scope ('g: 's), and the scope waits
        // for the stream before it ends; its host callbacks are kept alive
        // by the scope (the mark above).
        ctx.check("cuGraphLaunch", unsafe {
            (cu.cuGraphLaunch)(exec.raw, *raw)
        })?;
        exec.launched.set(true);
        exec.mark(cu, *raw)?;
        ctx.counters()
            .graph_launches
            .fetch_add(1, Ordering::Relaxed);
        self.time_end(
            || Timed::Kernel(format!("graph {}", exec.label)),
            &raw,
            timer,
        )
    }
}
