//! Executable graphs: instantiated, launched on a stream in a scope,
//! updated node by node or as a whole.

use std::cell::Cell;
use std::sync::atomic::Ordering;

use cuda_sys::{
    CUevent, CUevent_flags, CUgraphExec, CUgraphExecUpdateResult, CUgraphExecUpdateResultInfo,
    CUgraphInstantiate_flags, CUresult,
};

use super::{kernel_node_params, raw_kind, Graph, GraphNode, NodeKind};
use crate::compile::module::Function;
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

    fn flags(&self) -> u64 {
        let mut f = 0u64;
        if self.auto_free_on_launch {
            f |= CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH.0 as u64;
        }
        if self.use_node_priority {
            f |= CUgraphInstantiate_flags::CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY.0 as u64;
        }
        f
    }
}

/// An executable graph (`cuGraphInstantiateWithFlags`), destroyed on drop
/// (`cuGraphExecDestroy`) after its launches still in flight have finished.
/// Borrows the graph it was made from (and any graph it was updated
/// with), and so everything those borrow.
pub struct GraphExec<'g> {
    ctx: &'g Context,
    raw: CUgraphExec,
    /// The graph it was instantiated from: kernel-node updates name nodes
    /// of this one.
    origin: &'g Graph<'g>,
    /// The graph whose host callbacks it calls now.
    current: &'g Graph<'g>,
    /// Recorded after every launch and upload; dropping waits for it.
    done: CUevent,
    used: Cell<bool>,
    label: String,
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
    /// borrows the graph.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyGraph`] for a graph without nodes; driver errors.
    pub fn instantiate(&'g self, options: InstantiateOptions) -> Result<GraphExec<'g>> {
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
        Ok(GraphExec {
            ctx,
            raw,
            origin: self,
            current: self,
            done,
            used: Cell::new(false),
            label,
        })
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
    fn mark(&self, cu: &cuda_sys::Driver, stream: &Stream<'_>) -> Result<()> {
        // SAFETY: a live event and stream of this context.
        self.ctx.check("cuEventRecord", unsafe {
            (cu.cuEventRecord)(self.done, stream.as_raw())
        })?;
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
    pub fn upload<'s>(&self, scope: &Scope<'s, '_>, stream: &'s Stream<'_>) -> Result<()> {
        same_context("GraphExec::upload", self.ctx, stream.context())?;
        same_context("GraphExec::upload", self.ctx, scope.context())?;
        let raw = scope.use_stream(stream)?;
        let cu = self.ctx.enter()?;
        // SAFETY: a live executable graph and stream of this context.
        self.ctx.check("cuGraphUpload", unsafe {
            (cu.cuGraphUpload)(self.raw, raw)
        })?;
        self.mark(cu, stream)
    }

    fn check_node(&self, what: &'static str, node: GraphNode) -> Result<()> {
        if node.graph == self.origin.id() {
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
                self.origin.describe(node.raw)
            )));
        }
        let mut pointers = PointerArray::new();
        let p = kernel_node_params(self.ctx, function, config, params, &mut pointers)?;
        let cu = self.ctx.enter()?;
        // SAFETY: a live executable graph and a kernel node of the graph it
        // was instantiated from; `p` points into `pointers` and `params`,
        // alive across the call, which copies the values.
        self.ctx.check("cuGraphExecKernelNodeSetParams_v2", unsafe {
            (cu.cuGraphExecKernelNodeSetParams)(self.raw, node.raw, &p)
        })
    }

    /// Updates the executable graph to `graph`, which must have the same
    /// shape (`cuGraphExecUpdate_v2`): same nodes of the same kinds, same
    /// edges; parameters may differ. Takes effect at the next launch.
    ///
    /// # Errors
    ///
    /// [`Error::GraphUpdate`] naming the node at fault and the reason when
    /// the driver refuses (the executable graph is unchanged and usable);
    /// context mismatches; other driver errors.
    pub fn update(&mut self, graph: &'g Graph<'g>) -> Result<()> {
        same_context("GraphExec::update", self.ctx, graph.context())?;
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
        self.current = graph;
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
        if let Some(cu) = self.ctx.enter_for_drop() {
            if self.used.get() {
                // SAFETY: a live event, recorded after the last launch;
                // waiting for it keeps the graph's borrows alive until no
                // replay can touch them.
                let rc = unsafe { (cu.cuEventSynchronize)(self.done) };
                self.ctx.record_drop_error("cuEventSynchronize", rc);
            }
            // SAFETY: destroys the executable graph made by instantiate,
            // once, after its replays.
            let rc = unsafe { (cu.cuGraphExecDestroy)(self.raw) };
            self.ctx.record_drop_error("cuGraphExecDestroy", rc);
            // SAFETY: the event made by instantiate, destroyed once.
            let rc = unsafe { (cu.cuEventDestroy)(self.done) };
            self.ctx.record_drop_error("cuEventDestroy_v2", rc);
        }
    }
}

impl<'s, 'env> Scope<'s, 'env> {
    /// Launches `exec` on `stream` (`cuGraphLaunch`). The replay is
    /// counted in the metrics ([`Metrics::graph_launches`]); with kernel
    /// timing on, its time is filed under `graph <label>`.
    ///
    /// The executable graph need not outlive the scope: dropping it waits
    /// for its replays.
    ///
    /// [`Metrics::graph_launches`]: crate::Metrics::graph_launches
    ///
    /// # Errors
    ///
    /// [`Error::ContextMismatch`] for a stream (or scope) of another
    /// context; [`Error::IllegalDuringCapture`] inside a capture; driver
    /// errors.
    pub fn launch_graph(&self, stream: &'s Stream<'_>, exec: &GraphExec<'_>) -> Result<()> {
        same_context("launch_graph", exec.ctx, stream.context())?;
        same_context("launch_graph", exec.ctx, self.context())?;
        let ctx = self.context();
        ctx.refuse_during_capture("cuGraphLaunch")?;
        let raw = self.use_stream(stream)?;
        exec.current.set_launch_key(self.key());
        let timer = self.time_start(stream)?;
        let cu = ctx.enter()?;
        // SAFETY: a live executable graph and stream of this context. What
        // the graph touches is borrowed for the graph's lifetime, which the
        // executable graph's outlives, and its drop waits for this replay.
        ctx.check("cuGraphLaunch", unsafe {
            (cu.cuGraphLaunch)(exec.raw, raw)
        })?;
        if let Err(e) = exec.mark(cu, stream) {
            // The replay is queued but not marked: wait for it here, so that
            // the executable graph's drop cannot release what it uses while
            // it runs.
            // SAFETY: a live stream of this context.
            let _ = unsafe { (cu.cuStreamSynchronize)(raw) };
            return Err(e);
        }
        ctx.counters()
            .graph_launches
            .fetch_add(1, Ordering::Relaxed);
        self.time_end(
            || Timed::Kernel(format!("graph {}", exec.label)),
            stream,
            timer,
        )
    }
}
