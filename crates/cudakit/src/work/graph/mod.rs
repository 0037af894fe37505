//! CUDA graphs: work recorded once and replayed many times at a fraction
//! of the cost of launching it again.
//!
//! - [`Scope::capture`](crate::Scope::capture) records the work queued on
//!   a stream inside a scope;
//! - a [`Graph`] made by [`Context::graph`] is built node by node, with
//!   explicit dependencies;
//! - [`Graph::instantiate`] makes a [`GraphExec`], launched on a stream in
//!   a scope ([`Scope::launch_graph`](crate::Scope::launch_graph)), whose
//!   kernel nodes can be given new arguments
//!   ([`GraphExec::set_kernel_params`]) and which can take a whole new
//!   graph of the same shape ([`GraphExec::update`]).
//! - conditional nodes ([`Graph::add_if`], [`Graph::add_if_else`],
//!   [`Graph::add_while`], [`Graph::add_switch`]) run bodies, built like
//!   any graph, as a kernel decides on the device (see [`conditional`]);
//! - [`InstantiateOptions::device_launch`] makes an executable graph that
//!   a kernel launches from the device (see [`device_launch`]).
//!
//! # What is checked
//!
//! A kernel node is checked exactly like a launch, when it is added (or
//! captured, or updated): arguments against `cuFuncGetParamInfo`, the
//! configuration against the device's and the function's limits, pointer
//! arguments against the kernel's context. A dependency on a node of
//! another graph, an empty graph, an update that changes the graph's
//! shape, an executable graph launched on a stream of another context:
//! each is a typed error, and the context stays usable.
//!
//! # Lifetimes: graphs borrow
//!
//! A `Graph<'g>` **borrows** everything its nodes refer to for `'g`:
//! buffers (shared where the node reads them or they are device memory,
//! exclusively where it writes host memory), functions (and so their
//! module), events, child graphs. A [`GraphExec`] borrows its graph. So a
//! buffer a graph uses cannot be dropped while the graph or an executable
//! graph made from it lives:
//!
//! ```compile_fail,E0505
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let buffer = ctx.alloc::<f32>(16)?;
//! let mut graph = ctx.graph()?;
//! graph.add_memset(&buffer, 0.0f32, &[])?;
//! let exec = graph.instantiate(Default::default())?;
//! drop(buffer); // error[E0505]: cannot move out of `buffer` because it is borrowed
//! drop(exec);
//! # Ok(()) }
//! ```
//!
//! Borrowing, not owning, keeps graphs zero-cost and lets one buffer serve
//! several graphs; the price is that host memory a graph writes stays
//! exclusively borrowed while the graph lives. Device memory, which the
//! host only reaches through copies, can be written between replays
//! (`DeviceBuffer::copy_from_host` takes `&self`): that is how a replayed
//! graph gets new inputs. Host callbacks of a graph are owned by it.
//!
//! An executable graph's launches are asynchronous; dropping it waits for
//! the ones still in flight (an event recorded after each launch), so no
//! replay outlives the borrows.

mod capture;
pub mod conditional;
pub mod device_launch;
mod exec;
mod kept;

pub use conditional::{Body, Condition, ConditionalKind};
pub use exec::{GraphExec, InstantiateOptions};

pub(crate) use capture::{capture_key, keep_in_capture};
pub(crate) use kept::{HostNodes, Kept, LaunchMark, Launchers};

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use cuda_sys::{
    CUevent, CUgraph, CUgraphNode, CUgraphNodeType, CUresult, Driver, CUDA_HOST_NODE_PARAMS,
    CUDA_KERNEL_NODE_PARAMS, CUDA_MEMCPY3D, CUDA_MEMSET_NODE_PARAMS, CUDA_MEM_ALLOC_NODE_PARAMS,
};

use crate::compile::module::Function;
use crate::context::{same_context, Context};
use crate::error::{Error, Result};
use crate::memory::image::copy3d::{memcpy3d, Extent, Side};
use crate::memory::{byte_len, memset_word, DeviceCopy, DeviceDst, DeviceSrc};
use crate::work::event::Event;
use crate::work::launch::params::PointerArray;
use crate::work::launch::{LaunchConfig, ParamList};

/// The shape of the driver's event-node functions
/// (`cuGraphAddEventRecordNode`, `cuGraphAddEventWaitNode`).
type EventNodeFn =
    unsafe extern "C" fn(*mut CUgraphNode, CUgraph, *const CUgraphNode, usize, CUevent) -> CUresult;

static NEXT_GRAPH: AtomicU64 = AtomicU64::new(1);

/// A node of a [`Graph`]: a handle for dependencies and updates. `Copy`;
/// it names its graph, so a node of another graph is refused as a
/// dependency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GraphNode {
    graph: u64,
    raw: CUgraphNode,
}

// SAFETY: a node handle is an opaque identifier the driver accepts from any
// thread; it is only dereferenced by the driver.
unsafe impl Send for GraphNode {}
// SAFETY: as above.
unsafe impl Sync for GraphNode {}

impl GraphNode {
    /// The raw handle.
    pub fn as_raw(&self) -> CUgraphNode {
        self.raw
    }
}

/// The kind of a graph node (`CUgraphNodeType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum NodeKind {
    /// A kernel launch.
    Kernel,
    /// A memory copy.
    Memcpy,
    /// A memory set.
    Memset,
    /// A host function.
    Host,
    /// A child graph.
    Graph,
    /// No operation.
    Empty,
    /// A wait on an event.
    EventWait,
    /// An event record.
    EventRecord,
    /// A memory allocation.
    MemAlloc,
    /// A memory free.
    MemFree,
    /// A conditional node (if, while, switch).
    Conditional,
    /// Another kind (its `CUgraphNodeType` value).
    Other(i32),
}

impl NodeKind {
    fn from_raw(t: CUgraphNodeType) -> Self {
        match t {
            CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL => NodeKind::Kernel,
            CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEMCPY => NodeKind::Memcpy,
            CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEMSET => NodeKind::Memset,
            CUgraphNodeType::CU_GRAPH_NODE_TYPE_HOST => NodeKind::Host,
            CUgraphNodeType::CU_GRAPH_NODE_TYPE_GRAPH => NodeKind::Graph,
            CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY => NodeKind::Empty,
            CUgraphNodeType::CU_GRAPH_NODE_TYPE_WAIT_EVENT => NodeKind::EventWait,
            CUgraphNodeType::CU_GRAPH_NODE_TYPE_EVENT_RECORD => NodeKind::EventRecord,
            CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEM_ALLOC => NodeKind::MemAlloc,
            CUgraphNodeType::CU_GRAPH_NODE_TYPE_MEM_FREE => NodeKind::MemFree,
            CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL => NodeKind::Conditional,
            other => NodeKind::Other(other.0),
        }
    }

    /// The name with its article: "a kernel node", "an empty node".
    fn a_node(self) -> String {
        let name = self.name();
        let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {name} node")
    }

    fn name(self) -> String {
        match self {
            NodeKind::Kernel => "kernel".into(),
            NodeKind::Memcpy => "memcpy".into(),
            NodeKind::Memset => "memset".into(),
            NodeKind::Host => "host".into(),
            NodeKind::Graph => "child graph".into(),
            NodeKind::Empty => "empty".into(),
            NodeKind::EventWait => "event wait".into(),
            NodeKind::EventRecord => "event record".into(),
            NodeKind::MemAlloc => "memory allocation".into(),
            NodeKind::MemFree => "memory free".into(),
            NodeKind::Conditional => "conditional".into(),
            NodeKind::Other(n) => format!("type {n}"),
        }
    }
}

/// Device memory a graph allocates when it runs (a memory-allocation
/// node, `cuGraphAddMemAllocNode`) and frees in a later node. It exists
/// only while the graph runs, between those two nodes, so it is not a
/// buffer: nodes of its graph reach it through
/// [`Graph::add_memset_alloc`], [`Graph::add_copy_from_alloc`],
/// [`Graph::add_copy_to_alloc`], or as a raw address given to a kernel
/// node ([`GraphAlloc::as_raw`], under `add_kernel`'s safety contract).
#[derive(Debug)]
pub struct GraphAlloc<T> {
    graph: u64,
    /// The allocation node: every node that uses the memory depends on it.
    node: CUgraphNode,
    /// The nodes added through this handle that use the memory: the free
    /// node depends on every one of them.
    users: std::cell::RefCell<Vec<CUgraphNode>>,
    ptr: u64,
    len: usize,
    _marker: PhantomData<T>,
}

impl<T> GraphAlloc<T> {
    /// The address the allocation has while the graph runs.
    pub fn as_raw(&self) -> u64 {
        self.ptr
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always `false`.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// A CUDA graph (`cuGraphCreate`, or made by a capture), destroyed on drop
/// (`cuGraphDestroy`). Borrows what its nodes use for `'g` (see the
/// [module documentation](self)).
///
/// ```no_run
/// use cudakit::{Context, InstantiateOptions};
/// # fn main() -> cudakit::Result<()> {
/// let ctx = Context::new(0)?;
/// let (a, b) = (ctx.alloc::<f32>(1024)?, ctx.alloc::<f32>(1024)?);
/// let stream = ctx.stream()?;
/// // Built node by node (kernels, copies, memsets, host functions, ...),
/// // or captured from a stream (`Scope::capture`).
/// let mut graph = ctx.graph()?;
/// let fill = graph.add_memset(&a, 1.5f32, &[])?;
/// graph.add_copy(&a, &b, &[fill])?; // runs after the memset
/// let exec = graph.instantiate(InstantiateOptions::default())?;
/// ctx.scope(|s| {
///     for _ in 0..10 {
///         s.launch_graph(&stream, &exec)?; // one cuGraphLaunch per replay
///     }
///     Ok(())
/// })?;
/// assert!(b.to_vec()?.iter().all(|&v| v == 1.5));
/// # Ok(()) }
/// ```
pub struct Graph<'g> {
    ctx: &'g Context,
    raw: CUgraph,
    id: u64,
    /// The key of the scope that launched the graph last: its host nodes
    /// report panics there.
    key: Arc<Launchers>,
    /// The keys of the child graphs' host nodes (theirs and their
    /// children's): a launch of this graph enters them too.
    child_keys: Vec<Arc<Launchers>>,
    /// The host-node callbacks (and the child graphs'), shared with the
    /// scopes that launch the graph.
    host: Arc<HostNodes>,
    /// The driver's graph, destroyed when the graph and every executable
    /// graph made from it are gone (they describe its nodes).
    handle: Arc<GraphHandle>,
    /// Allocation nodes without a free node yet, as (address, bytes).
    unfreed: Vec<(u64, usize)>,
    /// Bytes of all allocation nodes.
    alloc_bytes: usize,
    /// The identity of the outermost graph: this one's own, or, for the
    /// body of a conditional node, that of the graph the node is in (or
    /// its family's). Conditional handles are kernel arguments within a
    /// family only.
    family: u64,
    /// Whether this is the body of a conditional node: the driver owns
    /// it (`handle` is the outermost graph's, which keeps it alive), it
    /// takes only the node kinds CUDA allows there, and it is instantiated
    /// only with its graph.
    body: bool,
    /// Conditional handles made for this graph family and used by no
    /// conditional node yet (shared by the family).
    unused_conditions: Arc<std::sync::Mutex<Vec<u64>>>,
    /// Whether a node added here (or in a child graph added here) copies
    /// from or to host memory: a conditional body refuses such a child.
    host_copies: bool,
    /// The first kernel node (here or in a child graph added here) whose
    /// function uses dynamic parallelism: a device-launch graph refuses it.
    dynamic_kernel: Option<String>,
    /// Invariant in `'g`: a graph's `'g` cannot shrink once it has one. A
    /// conditional body shares its parent's `'g` (its nodes run in the
    /// parent's executable graphs): were `Graph` covariant, a body (or a
    /// graph swapped into its place) could be coerced to a shorter `'g` and
    /// take nodes that borrow less long than the parent's replays run.
    _borrows: PhantomData<fn(&'g ()) -> &'g ()>,
}

// SAFETY: the only field that is not Send by itself is the raw CUgraph,
// which the driver accepts from any thread (the driver API is thread-safe).
// `kept` is Send (its closures are `F: Send`, reached only through their
// mutexes, by the driver's callback thread); `ctx` is `&Context` (Context is
// Sync) and `key` an `Arc<Launchers>`. What the nodes borrow for 'g is
// held only as a marker (`PhantomData<fn(&'g ()) -> &'g ()>`): moving the graph does not
// give the receiving thread any host access to those borrows.
unsafe impl Send for Graph<'_> {}

impl std::fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Graph")
            .field("id", &self.id)
            .field("raw", &self.raw)
            .finish()
    }
}

impl Context {
    /// An empty graph to build node by node (`cuGraphCreate`).
    ///
    /// # Errors
    ///
    /// Driver errors; a poisoned context.
    pub fn graph(&self) -> Result<Graph<'_>> {
        let cu = self.enter()?;
        let mut raw: CUgraph = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; flags must be 0.
        self.check("cuGraphCreate", unsafe { (cu.cuGraphCreate)(&mut raw, 0) })?;
        Ok(Graph::from_raw(
            self,
            raw,
            Arc::new(Launchers::default()),
            Vec::new(),
        ))
    }
}

/// A linear copy of `bytes` from `src` to `dst` (one row, one slice).
fn copy_1d(src: Side, dst: Side, bytes: usize) -> CUDA_MEMCPY3D {
    memcpy3d(
        src,
        dst,
        Extent {
            width_bytes: bytes,
            height: 1,
            depth: 1,
        },
    )
}

impl<'g> Graph<'g> {
    pub(crate) fn from_raw(
        ctx: &'g Context,
        raw: CUgraph,
        key: Arc<Launchers>,
        kept: Vec<Kept>,
    ) -> Self {
        let host = Arc::new(HostNodes::default());
        *crate::context::lock(&host.kept) = kept;
        let id = NEXT_GRAPH.fetch_add(1, Ordering::Relaxed);
        Graph {
            ctx,
            raw,
            id,
            key,
            child_keys: Vec::new(),
            host,
            handle: Arc::new(GraphHandle {
                ctx: ctx.downgrade(),
                raw: raw as usize,
                peers: std::sync::Mutex::new(Vec::new()),
            }),
            unfreed: Vec::new(),
            alloc_bytes: 0,
            family: id,
            body: false,
            unused_conditions: Arc::default(),
            host_copies: false,
            dynamic_kernel: None,
            _borrows: PhantomData,
        }
    }

    /// The context.
    pub fn context(&self) -> &'g Context {
        self.ctx
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUgraph {
        self.raw
    }

    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Refuses dependencies of another graph; the raw handles.
    fn deps(&self, what: &'static str, deps: &[GraphNode]) -> Result<Vec<CUgraphNode>> {
        deps.iter()
            .enumerate()
            .map(|(index, d)| {
                if d.graph == self.id {
                    Ok(d.raw)
                } else {
                    Err(Error::ForeignGraphNode { what, index })
                }
            })
            .collect()
    }

    fn node(&self, raw: CUgraphNode) -> GraphNode {
        GraphNode {
            graph: self.id,
            raw,
        }
    }

    /// Every node, in the driver's order (`cuGraphGetNodes`): creation
    /// order, which for a captured graph is the order the work was queued.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn nodes(&self) -> Result<Vec<GraphNode>> {
        Ok(self
            .raw_nodes()?
            .into_iter()
            .map(|raw| self.node(raw))
            .collect())
    }

    pub(crate) fn raw_nodes(&self) -> Result<Vec<CUgraphNode>> {
        graph_nodes(self.ctx, self.raw)
    }

    /// Number of nodes.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn node_count(&self) -> Result<usize> {
        Ok(self.raw_nodes()?.len())
    }

    /// The kind of `node` (`cuGraphNodeGetType`).
    ///
    /// # Errors
    ///
    /// [`Error::ForeignGraphNode`]; driver errors.
    pub fn node_kind(&self, node: GraphNode) -> Result<NodeKind> {
        self.deps("node_kind", &[node])?;
        raw_kind(self.ctx, node.raw)
    }

    /// The kernel nodes, in [`Graph::nodes`] order.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn kernel_nodes(&self) -> Result<Vec<GraphNode>> {
        let mut out = Vec::new();
        for raw in self.raw_nodes()? {
            if raw_kind(self.ctx, raw)? == NodeKind::Kernel {
                out.push(self.node(raw));
            }
        }
        Ok(out)
    }

    /// Describes a raw node of this graph as "kernel node 3".
    pub(crate) fn describe(&self, raw: CUgraphNode) -> String {
        describe_node(self.ctx, self.raw, raw)
    }

    /// The shared handle (for executable graphs).
    pub(crate) fn handle(&self) -> &Arc<GraphHandle> {
        &self.handle
    }

    /// The host-node callbacks (for executable graphs).
    pub(crate) fn host(&self) -> &Arc<HostNodes> {
        &self.host
    }

    /// The launch keys of this graph and its children (for executable
    /// graphs).
    pub(crate) fn keys(&self) -> Vec<Arc<Launchers>> {
        let mut k = Vec::with_capacity(1 + self.child_keys.len());
        k.push(self.key.clone());
        k.extend(self.child_keys.iter().cloned());
        k
    }

    /// Allocation nodes without a free node, as (address, bytes), and the
    /// bytes of all allocation nodes.
    pub(crate) fn allocations(&self) -> (&[(u64, usize)], usize) {
        (&self.unfreed, self.alloc_bytes)
    }

    /// Adds a kernel node: `function` with `config` and `params`, checked
    /// exactly like [`Scope::launch`](crate::Scope::launch)
    /// (`cuGraphAddKernelNode_v2`). The argument values are copied into
    /// the node; the buffers among them stay borrowed for `'g`.
    ///
    /// Clusters, cooperative launches and priorities are launch attributes
    /// that kernel nodes do not take here: such a configuration is an
    /// [`Error::InvalidArgument`].
    ///
    /// # Safety
    ///
    /// As [`Scope::launch`](crate::Scope::launch): the kernel must stay
    /// within the buffers it is given and take parameters of the types
    /// given; a raw address (a [`GraphAlloc::as_raw`], say) must be valid
    /// whenever the node runs.
    ///
    /// # Errors
    ///
    /// As [`Scope::launch`](crate::Scope::launch);
    /// [`Error::ForeignGraphNode`].
    pub unsafe fn add_kernel(
        &mut self,
        function: &'g Function<'_>,
        config: &LaunchConfig,
        params: &ParamList<'g>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        let deps = self.deps("add_kernel", deps)?;
        let mut pointers = PointerArray::new();
        let node_params = kernel_node_params(
            self.ctx,
            function,
            config,
            params,
            &mut pointers,
            self.family,
        )?;
        self.handle.add_peers(params.peer_uses(self.ctx.id()));
        let cu = self.ctx.enter()?;
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: a live graph; `deps` are nodes of it; `node_params`
        // points into `pointers` and `params`' storage, both alive across
        // the call, which copies the argument values.
        self.ctx.check("cuGraphAddKernelNode_v2", unsafe {
            (cu.cuGraphAddKernelNode)(&mut node, self.raw, deps.as_ptr(), deps.len(), &node_params)
        })?;
        if self.dynamic_kernel.is_none() && function.uses_dynamic_parallelism() == Some(true) {
            self.dynamic_kernel = Some(function.name().to_owned());
        }
        Ok(self.node(node))
    }

    fn add_memcpy(
        &mut self,
        what: &'static str,
        copy: CUDA_MEMCPY3D,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        let deps = self.deps(what, deps)?;
        let cu = self.ctx.enter()?;
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: a live graph and its nodes; `copy` describes memory the
        // caller borrowed for 'g (checked for length by the caller).
        self.ctx.check("cuGraphAddMemcpyNode", unsafe {
            (cu.cuGraphAddMemcpyNode)(
                &mut node,
                self.raw,
                deps.as_ptr(),
                deps.len(),
                &copy,
                self.ctx.as_raw(),
            )
        })?;
        Ok(self.node(node))
    }

    /// Adds a host-to-device copy (`cuGraphAddMemcpyNode`). `src` (a slice
    /// or a pinned buffer) stays borrowed for `'g`.
    ///
    /// # Errors
    ///
    /// Length and context mismatches; [`Error::ForeignGraphNode`]; driver
    /// errors.
    pub fn add_copy_to_device<T: DeviceCopy>(
        &mut self,
        src: &'g [T],
        dst: impl DeviceDst<'g, T>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.refuse_in_body("add_copy_to_device", "a copy from or to host memory")?;
        crate::memory::same_len("add_copy_to_device", dst.len(), src.len())?;
        same_context("add_copy_to_device", self.ctx, dst.context())?;
        let c = copy_1d(
            Side::host(src.as_ptr().cast()),
            Side::device(dst.device_ptr().as_raw()),
            byte_len::<T>(src.len(), "copy")?,
        );
        let node = self.add_memcpy("add_copy_to_device", c, deps)?;
        self.host_copies = true;
        Ok(node)
    }

    /// Adds a device-to-host copy (`cuGraphAddMemcpyNode`). `dst` stays
    /// borrowed exclusively for `'g`.
    ///
    /// # Errors
    ///
    /// As [`Graph::add_copy_to_device`].
    pub fn add_copy_to_host<T: DeviceCopy>(
        &mut self,
        src: impl DeviceSrc<'g, T>,
        dst: &'g mut [T],
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.refuse_in_body("add_copy_to_host", "a copy from or to host memory")?;
        crate::memory::same_len("add_copy_to_host", src.len(), dst.len())?;
        same_context("add_copy_to_host", self.ctx, src.context())?;
        let c = copy_1d(
            Side::device(src.device_ptr().as_raw()),
            Side::host(dst.as_mut_ptr().cast_const().cast()),
            byte_len::<T>(dst.len(), "copy")?,
        );
        let node = self.add_memcpy("add_copy_to_host", c, deps)?;
        self.host_copies = true;
        Ok(node)
    }

    /// Adds a device-to-device copy (`cuGraphAddMemcpyNode`).
    ///
    /// # Errors
    ///
    /// As [`Graph::add_copy_to_device`].
    pub fn add_copy<T: DeviceCopy>(
        &mut self,
        src: impl DeviceSrc<'g, T>,
        dst: impl DeviceDst<'g, T>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        crate::memory::same_len("add_copy", src.len(), dst.len())?;
        same_context("add_copy", self.ctx, src.context())?;
        same_context("add_copy", self.ctx, dst.context())?;
        crate::memory::no_overlap(
            "add_copy",
            src.device_ptr().as_raw(),
            dst.device_ptr().as_raw(),
            byte_len::<T>(src.len(), "copy")?,
        )?;
        let c = copy_1d(
            Side::device(src.device_ptr().as_raw()),
            Side::device(dst.device_ptr().as_raw()),
            byte_len::<T>(src.len(), "copy")?,
        );
        self.add_memcpy("add_copy", c, deps)
    }

    /// Adds a host-to-host copy (`cuGraphAddMemcpyNode`), ordered with the
    /// device work around it.
    ///
    /// # Errors
    ///
    /// As [`Graph::add_copy_to_device`].
    pub fn add_copy_host<T: DeviceCopy>(
        &mut self,
        src: &'g [T],
        dst: &'g mut [T],
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.refuse_in_body("add_copy_host", "a copy from or to host memory")?;
        crate::memory::same_len("add_copy_host", src.len(), dst.len())?;
        let c = copy_1d(
            Side::host(src.as_ptr().cast()),
            Side::host(dst.as_mut_ptr().cast_const().cast()),
            byte_len::<T>(src.len(), "copy")?,
        );
        let node = self.add_memcpy("add_copy_host", c, deps)?;
        self.host_copies = true;
        Ok(node)
    }

    /// Adds a memset node: every element of `dst` set to `value`, whose
    /// type must be 1, 2 or 4 bytes (`cuGraphAddMemsetNode`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for other element sizes; context
    /// mismatches; [`Error::ForeignGraphNode`]; driver errors.
    pub fn add_memset<T: DeviceCopy>(
        &mut self,
        dst: impl DeviceDst<'g, T>,
        value: T,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        same_context("add_memset", self.ctx, dst.context())?;
        self.memset_raw(dst.device_ptr().as_raw(), dst.len(), value, deps)
    }

    fn memset_raw<T: DeviceCopy>(
        &mut self,
        ptr: u64,
        len: usize,
        value: T,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        byte_len::<T>(len, "memset")?;
        let size = std::mem::size_of::<T>();
        let Some(v) = memset_word(value) else {
            return Err(Error::InvalidArgument(format!(
                "add_memset: elements of {size} bytes; memset nodes set 1, 2 or 4 bytes"
            )));
        };
        let deps = self.deps("add_memset", deps)?;
        let p = CUDA_MEMSET_NODE_PARAMS {
            dst: ptr,
            pitch: 0,
            value: v,
            elementSize: size as u32,
            width: len,
            height: 1,
        };
        let cu = self.ctx.enter()?;
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: a live graph and its nodes; `len` elements of `size`
        // bytes at `ptr`, memory borrowed for 'g (or the graph's own).
        self.ctx.check("cuGraphAddMemsetNode", unsafe {
            (cu.cuGraphAddMemsetNode)(
                &mut node,
                self.raw,
                deps.as_ptr(),
                deps.len(),
                &p,
                self.ctx.as_raw(),
            )
        })?;
        Ok(self.node(node))
    }

    /// Adds a host node running `f` at every replay (`cuGraphAddHostNode`).
    /// The graph keeps the closure; a panic in it is reported by the scope
    /// that launched the graph (see [`crate::work::callback`]).
    ///
    /// # Errors
    ///
    /// [`Error::ForeignGraphNode`]; driver errors.
    pub fn add_host_fn<F>(&mut self, f: F, deps: &[GraphNode]) -> Result<GraphNode>
    where
        F: FnMut() + Send + 'g,
    {
        self.refuse_in_body("add_host_fn", "a host node")?;
        let deps = self.deps("add_host_fn", deps)?;
        let (kept, func, user) = Kept::new(self.key.clone(), f);
        let p = CUDA_HOST_NODE_PARAMS {
            r#fn: func,
            userData: user,
        };
        let cu = self.ctx.enter()?;
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: a live graph and its nodes; `user` points at the boxed
        // closure, which the graph keeps for its whole life (and every
        // executable graph made from it borrows the graph).
        self.ctx.check("cuGraphAddHostNode", unsafe {
            (cu.cuGraphAddHostNode)(&mut node, self.raw, deps.as_ptr(), deps.len(), &p)
        })?;
        crate::context::lock(&self.host.kept).push(kept);
        Ok(self.node(node))
    }

    /// Adds a node that records `event` (`cuGraphAddEventRecordNode`).
    ///
    /// # Errors
    ///
    /// Context mismatches; [`Error::ForeignGraphNode`]; driver errors.
    pub fn add_event_record(
        &mut self,
        event: &'g Event<'_>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.add_event_node(
            "add_event_record",
            "cuGraphAddEventRecordNode",
            |cu| cu.cuGraphAddEventRecordNode,
            event,
            deps,
        )
    }

    /// Adds a node that waits for `event` (`cuGraphAddEventWaitNode`).
    ///
    /// # Errors
    ///
    /// As [`Graph::add_event_record`].
    pub fn add_event_wait(
        &mut self,
        event: &'g Event<'_>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.add_event_node(
            "add_event_wait",
            "cuGraphAddEventWaitNode",
            |cu| cu.cuGraphAddEventWaitNode,
            event,
            deps,
        )
    }

    /// Adds an event record or wait node for the method `what`, through
    /// the driver function `pick` selects (`cuGraphAddEventRecordNode` or
    /// `cuGraphAddEventWaitNode`, named `call`).
    fn add_event_node(
        &mut self,
        what: &'static str,
        call: &'static str,
        pick: fn(&Driver) -> EventNodeFn,
        event: &'g Event<'_>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.refuse_in_body(
            what,
            if what == "add_event_record" {
                "an event record node"
            } else {
                "an event wait node"
            },
        )?;
        same_context(what, self.ctx, event.context())?;
        let deps = self.deps(what, deps)?;
        let cu = self.ctx.enter()?;
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: `pick` returns one of the loaded driver's two event-node
        // functions (same signature); a live graph, its nodes, and a live
        // event borrowed for 'g.
        self.ctx.check(call, unsafe {
            pick(cu)(
                &mut node,
                self.raw,
                deps.as_ptr(),
                deps.len(),
                event.as_raw(),
            )
        })?;
        Ok(self.node(node))
    }

    /// Adds an empty node: a join point (`cuGraphAddEmptyNode`).
    ///
    /// # Errors
    ///
    /// [`Error::ForeignGraphNode`]; driver errors.
    pub fn add_empty(&mut self, deps: &[GraphNode]) -> Result<GraphNode> {
        let deps = self.deps("add_empty", deps)?;
        let cu = self.ctx.enter()?;
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: a live graph and its nodes.
        self.ctx.check("cuGraphAddEmptyNode", unsafe {
            (cu.cuGraphAddEmptyNode)(&mut node, self.raw, deps.as_ptr(), deps.len())
        })?;
        Ok(self.node(node))
    }

    /// Makes `to` depend on `from` programmatically
    /// (`cuGraphAddDependencies_v2` with a `CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC`
    /// edge from `CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC`): the graph's
    /// form of [`LaunchConfig::programmatic`]. `to` may start once every
    /// block of `from` has triggered (`griddepcontrol.launch_dependents`)
    /// or exited, and must wait for `from`'s results with
    /// `griddepcontrol.wait` before it reads them. Add `to` without a
    /// dependency on `from` and add this edge instead.
    ///
    /// # Safety
    ///
    /// The edge weakens the ordering of two kernels that were added under
    /// [`Graph::add_kernel`]'s contract: `to`'s kernel must execute
    /// `griddepcontrol.wait` (`cudaGridDependencySynchronize()`) before it
    /// reads anything `from`'s kernel writes, or writes anything it reads;
    /// without it, `from`'s writes are not guaranteed visible (they may
    /// still be running).
    ///
    /// # Errors
    ///
    /// [`Error::ForeignGraphNode`]; [`Error::InvalidArgument`] unless both
    /// are kernel nodes, or for a node and itself; [`Error::NotSupported`]
    /// below compute capability 9.0 or where the driver lacks
    /// `cuGraphAddDependencies_v2` (before CUDA 12.3); driver errors.
    pub unsafe fn add_programmatic_dependency(
        &mut self,
        from: GraphNode,
        to: GraphNode,
    ) -> Result<()> {
        let raw = self.deps("add_programmatic_dependency", &[from, to])?;
        if raw[0] == raw[1] {
            return Err(Error::InvalidArgument(
                "add_programmatic_dependency: a node cannot depend on itself".into(),
            ));
        }
        for (which, node) in [("from", from), ("to", to)] {
            let kind = raw_kind(self.ctx, node.raw)?;
            if kind != NodeKind::Kernel {
                return Err(Error::InvalidArgument(format!(
                    "add_programmatic_dependency: `{which}` is a {} node; programmatic \
                     dependencies join kernel nodes only",
                    kind.name()
                )));
            }
        }
        if self.ctx.limits().compute_capability.0 < 9 {
            return Err(Error::NotSupported {
                feature: "programmatic dependencies between kernel nodes",
                needs_driver: "a device of compute capability 9.0",
            });
        }
        let cu = self.ctx.enter()?;
        let add = cu.cuGraphAddDependencies.ok_or(Error::NotSupported {
            feature: "cuGraphAddDependencies_v2 (edge data)",
            needs_driver: "CUDA 12.3",
        })?;
        let edge = cuda_sys::CUgraphEdgeData {
            from_port: cuda_sys::CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC,
            to_port: 0,
            r#type: cuda_sys::CUgraphDependencyType::CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC.0 as u8,
            reserved: [0; 5],
        };
        // SAFETY: a live graph, two of its nodes, one edge's data; each
        // array holds one element.
        self.ctx.check("cuGraphAddDependencies_v2", unsafe {
            add(self.raw, &raw[0], &raw[1], &edge, 1)
        })
    }

    /// Adds `child` as a node (`cuGraphAddChildGraphNode`, which clones
    /// it). The child stays borrowed for `'g`: its clone calls the child's
    /// host callbacks and uses its buffers.
    ///
    /// # Errors
    ///
    /// Context mismatches; [`Error::ForeignGraphNode`]; driver errors.
    pub fn add_child(&mut self, child: &'g Graph<'g>, deps: &[GraphNode]) -> Result<GraphNode> {
        same_context("add_child", self.ctx, child.ctx)?;
        let deps = self.deps("add_child", deps)?;
        self.check_child_for_body(child)?;
        let cu = self.ctx.enter()?;
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: two live graphs, nodes of this one; the driver clones the
        // child.
        self.ctx.check("cuGraphAddChildGraphNode", unsafe {
            (cu.cuGraphAddChildGraphNode)(&mut node, self.raw, deps.as_ptr(), deps.len(), child.raw)
        })?;
        // The driver copies the child, host nodes included: their callbacks
        // report panics under the child's key, which a launch of this graph
        // enters as well (`Graph::launch_mark`).
        self.host_copies |= child.host_copies;
        if self.dynamic_kernel.is_none() {
            self.dynamic_kernel.clone_from(&child.dynamic_kernel);
        }
        self.child_keys.push(child.key.clone());
        self.child_keys.extend(child.child_keys.iter().cloned());
        crate::context::lock(&self.host.children).push(child.host.clone());
        self.handle.add_peers(child.handle.peers());
        Ok(self.node(node))
    }

    /// Adds a memory-allocation node for `len` elements of device memory
    /// (`cuGraphAddMemAllocNode`), freed by a later
    /// [`Graph::add_mem_free`] (or, with
    /// [`InstantiateOptions::auto_free_on_launch`], at the next launch).
    ///
    /// # Errors
    ///
    /// Size errors; [`Error::ForeignGraphNode`]; driver errors.
    pub fn add_mem_alloc<T: DeviceCopy>(
        &mut self,
        len: usize,
        deps: &[GraphNode],
    ) -> Result<(GraphNode, GraphAlloc<T>)> {
        self.refuse_in_body("add_mem_alloc", "a memory allocation node")?;
        let bytes = byte_len::<T>(len, "graph allocation")?;
        crate::memory::check_align::<T>("graph allocation")?;
        let deps = self.deps("add_mem_alloc", deps)?;
        let mut p = CUDA_MEM_ALLOC_NODE_PARAMS {
            poolProps: crate::memory::buffer::pool::device_pool_props(self.ctx),
            accessDescs: std::ptr::null(),
            accessDescCount: 0,
            bytesize: bytes,
            dptr: 0,
        };
        let cu = self.ctx.enter()?;
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: a live graph and its nodes; `p` is a valid in/out record
        // (device location, no access descriptors, no export handles).
        self.ctx.check("cuGraphAddMemAllocNode", unsafe {
            (cu.cuGraphAddMemAllocNode)(&mut node, self.raw, deps.as_ptr(), deps.len(), &mut p)
        })?;
        Ok((self.node(node), {
            self.unfreed.push((p.dptr, bytes));
            self.alloc_bytes += bytes;
            GraphAlloc {
                graph: self.id,
                node,
                users: std::cell::RefCell::new(Vec::new()),
                ptr: p.dptr,
                len,
                _marker: PhantomData,
            }
        }))
    }

    /// `deps` plus the allocation node, without duplicates (the driver
    /// refuses a dependency listed twice): a node over the allocation runs
    /// after the memory exists, whatever the caller listed.
    fn alloc_deps<T>(&self, alloc: &GraphAlloc<T>, deps: &[GraphNode]) -> Vec<GraphNode> {
        let mut all: Vec<GraphNode> = deps.to_vec();
        if !all.iter().any(|d| d.raw == alloc.node) {
            all.push(self.node(alloc.node));
        }
        all
    }

    fn own_alloc<T>(&self, what: &'static str, alloc: &GraphAlloc<T>) -> Result<()> {
        if alloc.graph == self.id {
            Ok(())
        } else {
            Err(Error::InvalidArgument(format!(
                "{what}: the allocation belongs to another graph"
            )))
        }
    }

    /// Adds a memory-free node for `alloc` (`cuGraphAddMemFreeNode`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an allocation of another graph;
    /// [`Error::ForeignGraphNode`]; driver errors.
    pub fn add_mem_free<T>(
        &mut self,
        alloc: GraphAlloc<T>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.own_alloc("add_mem_free", &alloc)?;
        let mut deps = self.deps("add_mem_free", deps)?;
        // The free runs after the allocation and after every node that uses
        // the memory through this handle, whatever the caller listed.
        deps.push(alloc.node);
        deps.extend(alloc.users.borrow().iter().copied());
        let mut unique = Vec::with_capacity(deps.len());
        for d in deps {
            if !unique.contains(&d) {
                unique.push(d);
            }
        }
        let deps = unique;
        let cu = self.ctx.enter()?;
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: a live graph and its nodes; `alloc.ptr` was allocated by
        // a node of this graph and is freed once (the handle is consumed).
        self.ctx.check("cuGraphAddMemFreeNode", unsafe {
            (cu.cuGraphAddMemFreeNode)(&mut node, self.raw, deps.as_ptr(), deps.len(), alloc.ptr)
        })?;
        self.unfreed.retain(|(p, _)| *p != alloc.ptr);
        Ok(self.node(node))
    }

    /// Adds a memset node over a graph allocation. It depends on the
    /// allocation node (added to `deps` when missing), and the free node
    /// ([`Graph::add_mem_free`]) will depend on it.
    ///
    /// # Errors
    ///
    /// As [`Graph::add_memset`]; an allocation of another graph.
    pub fn add_memset_alloc<T: DeviceCopy>(
        &mut self,
        alloc: &GraphAlloc<T>,
        value: T,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.own_alloc("add_memset_alloc", alloc)?;
        let deps = self.alloc_deps(alloc, deps);
        let node = self.memset_raw(alloc.ptr, alloc.len, value, &deps)?;
        alloc.users.borrow_mut().push(node.raw);
        Ok(node)
    }

    /// Adds a copy from a graph allocation to device memory, ordered after
    /// the allocation node and before the free node (as
    /// [`Graph::add_memset_alloc`]).
    ///
    /// # Errors
    ///
    /// As [`Graph::add_copy`]; an allocation of another graph.
    pub fn add_copy_from_alloc<T: DeviceCopy>(
        &mut self,
        alloc: &GraphAlloc<T>,
        dst: impl DeviceDst<'g, T>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.own_alloc("add_copy_from_alloc", alloc)?;
        crate::memory::same_len("add_copy_from_alloc", alloc.len, dst.len())?;
        same_context("add_copy_from_alloc", self.ctx, dst.context())?;
        let c = copy_1d(
            Side::device(alloc.ptr),
            Side::device(dst.device_ptr().as_raw()),
            byte_len::<T>(alloc.len, "copy")?,
        );
        let deps = self.alloc_deps(alloc, deps);
        let node = self.add_memcpy("add_copy_from_alloc", c, &deps)?;
        alloc.users.borrow_mut().push(node.raw);
        Ok(node)
    }

    /// Adds a copy from device memory into a graph allocation, ordered after
    /// the allocation node and before the free node (as
    /// [`Graph::add_memset_alloc`]).
    ///
    /// # Errors
    ///
    /// As [`Graph::add_copy`]; an allocation of another graph.
    pub fn add_copy_to_alloc<T: DeviceCopy>(
        &mut self,
        src: impl DeviceSrc<'g, T>,
        alloc: &GraphAlloc<T>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.own_alloc("add_copy_to_alloc", alloc)?;
        crate::memory::same_len("add_copy_to_alloc", src.len(), alloc.len)?;
        same_context("add_copy_to_alloc", self.ctx, src.context())?;
        let c = copy_1d(
            Side::device(src.device_ptr().as_raw()),
            Side::device(alloc.ptr),
            byte_len::<T>(alloc.len, "copy")?,
        );
        let deps = self.alloc_deps(alloc, deps);
        let node = self.add_memcpy("add_copy_to_alloc", c, &deps)?;
        alloc.users.borrow_mut().push(node.raw);
        Ok(node)
    }

    /// The graph in Graphviz DOT, verbose (`cuGraphDebugDotPrint`, through
    /// a temporary file).
    ///
    /// # Errors
    ///
    /// Driver errors; [`Error::Io`].
    pub fn dot(&self) -> Result<String> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "cudakit-graph-{}-{}-{}.dot",
            std::process::id(),
            self.id,
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let text = path.to_string_lossy().into_owned();
        let c_path = std::ffi::CString::new(text.clone()).map_err(|_| Error::InteriorNul {
            what: "the DOT file path",
        })?;
        let cu = self.ctx.enter()?;
        // SAFETY: a live graph; a NUL-terminated path; defined flags.
        let rc = unsafe {
            (cu.cuGraphDebugDotPrint)(
                self.raw,
                c_path.as_ptr(),
                cuda_sys::CUgraphDebugDot_flags::CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE.0 as u32,
            )
        };
        self.ctx.check("cuGraphDebugDotPrint", rc)?;
        let out = std::fs::read_to_string(&path).map_err(|e| Error::Io {
            path: text,
            message: e.to_string(),
        });
        let _ = std::fs::remove_file(&path);
        out
    }
}

/// The driver's graph (`CUgraph`), shared by a [`Graph`] and the
/// executable graphs made from it; destroyed (`cuGraphDestroy`) when the
/// last of them goes.
pub(crate) struct GraphHandle {
    /// Weak: a forgotten executable graph holds this, and must leak only
    /// itself, not its context. A context that is gone took the graph
    /// with it.
    ctx: crate::context::WeakContext,
    raw: usize,
    /// The peer memory the graph's kernels use, as (device ordinal, owner
    /// context id), checked at each replay ([`GraphHandle::check_peers`]):
    /// access that was disabled since the kernel was added (or a peer
    /// context made again) is a typed error, not a device fault.
    peers: std::sync::Mutex<Vec<(i32, usize)>>,
}

impl GraphHandle {
    pub(crate) fn raw(&self) -> CUgraph {
        self.raw as CUgraph
    }

    /// Notes peer memory the graph uses.
    pub(crate) fn add_peers(&self, uses: impl IntoIterator<Item = (i32, usize)>) {
        let mut list = crate::context::lock(&self.peers);
        for u in uses {
            if !list.contains(&u) {
                list.push(u);
            }
        }
    }

    /// The peer memory the graph uses.
    pub(crate) fn peers(&self) -> Vec<(i32, usize)> {
        crate::context::lock(&self.peers).clone()
    }

    /// Refuses a replay on `ctx` of a graph whose kernels use peer memory
    /// that `ctx` no longer has access to.
    pub(crate) fn check_peers(&self, ctx: &Context) -> Result<()> {
        for &(ordinal, owner) in crate::context::lock(&self.peers).iter() {
            if !ctx.peer_enabled(ordinal, owner) {
                return Err(Error::PeerAccessUnsupported {
                    from: ctx.device().ordinal(),
                    to: ordinal,
                    reason: "the graph's kernels use that device's memory through peer access, \
                             which was disabled since (or the peer context was made again): \
                             enable it again, or rebuild the graph",
                });
            }
        }
        Ok(())
    }
}

impl Drop for GraphHandle {
    fn drop(&mut self) {
        let raw = self.raw;
        let Some(ctx) = self.ctx.upgrade() else {
            return;
        };
        // SAFETY: destroys the graph made by cuGraphCreate or a capture,
        // once: the last holder is gone. An executable graph does not need
        // its graph to run (the driver made its own copy at instantiation).
        ctx.release("cuGraphDestroy", None, move |cu| unsafe {
            (cu.cuGraphDestroy)(raw as CUgraph)
        });
    }
}

/// `raw` as "kernel node 3" in the graph `graph` (for errors).
pub(crate) fn describe_node(ctx: &Context, graph: CUgraph, raw: CUgraphNode) -> String {
    if raw.is_null() {
        return "the graph".into();
    }
    let kind = raw_kind(ctx, raw)
        .map(NodeKind::name)
        .unwrap_or_else(|_| "unknown".into());
    match graph_nodes(ctx, graph)
        .ok()
        .and_then(|n| n.iter().position(|&r| r == raw))
    {
        Some(i) => format!("{kind} node {i}"),
        None => format!("{kind} node {raw:p}"),
    }
}

/// The nodes of the live graph `graph` (`cuGraphGetNodes`).
fn graph_nodes(ctx: &Context, graph: CUgraph) -> Result<Vec<CUgraphNode>> {
    let cu = ctx.enter()?;
    let mut n = 0usize;
    // SAFETY: a live graph; a null array asks for the count only.
    ctx.check("cuGraphGetNodes", unsafe {
        (cu.cuGraphGetNodes)(graph, std::ptr::null_mut(), &mut n)
    })?;
    let mut nodes = vec![std::ptr::null_mut(); n];
    if n > 0 {
        // SAFETY: `nodes` has room for `n` handles, as `n` says.
        ctx.check("cuGraphGetNodes", unsafe {
            (cu.cuGraphGetNodes)(graph, nodes.as_mut_ptr(), &mut n)
        })?;
        nodes.truncate(n);
    }
    Ok(nodes)
}

fn raw_kind(ctx: &Context, raw: CUgraphNode) -> Result<NodeKind> {
    let cu = ctx.enter()?;
    let mut t = CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
    // SAFETY: a node of a live graph; a valid out-pointer.
    ctx.check("cuGraphNodeGetType", unsafe {
        (cu.cuGraphNodeGetType)(raw, &mut t)
    })?;
    Ok(NodeKind::from_raw(t))
}

/// Checks a kernel node like a launch and builds its parameters; the
/// result points into `pointers` and `params`.
pub(crate) fn kernel_node_params(
    ctx: &Context,
    function: &Function<'_>,
    config: &LaunchConfig,
    params: &ParamList<'_>,
    pointers: &mut PointerArray,
    family: u64,
) -> Result<CUDA_KERNEL_NODE_PARAMS> {
    same_context("kernel node", ctx, function.context())?;
    function.check_args(ctx, params)?;
    params.check_conditions("kernel node", Some(family))?;
    if config.cluster.is_some()
        || config.cooperative
        || config.priority.is_some()
        || config.programmatic
        || config.access_policy.is_some()
    {
        return Err(Error::InvalidArgument(format!(
            "{}: graph kernel nodes take grid, block and shared memory only (no cluster, \
             cooperative, priority, programmatic or access-policy attributes; a programmatic \
             dependency between kernel nodes is Graph::add_programmatic_dependency)",
            function.name()
        )));
    }
    function.validate(config)?;
    params.pointers(pointers);
    Ok(CUDA_KERNEL_NODE_PARAMS {
        func: function.as_raw(),
        gridDimX: config.grid.x,
        gridDimY: config.grid.y,
        gridDimZ: config.grid.z,
        blockDimX: config.block.x,
        blockDimY: config.block.y,
        blockDimZ: config.block.z,
        sharedMemBytes: config.shared_bytes,
        kernelParams: pointers.as_mut_ptr(),
        extra: std::ptr::null_mut(),
        kern: std::ptr::null_mut(),
        ctx: std::ptr::null_mut(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cuda_sys::CUmemorytype;
    use std::ffi::c_void;

    /// `copy_1d` fills a descriptor field for field as the copy nodes did
    /// by hand: the whole extent in one row, pitches and heights 0.
    #[test]
    fn linear_copy_descriptors_match_the_hand_filled_ones() {
        let host = [0u8; 64];
        let (h, d) = (host.as_ptr().cast::<c_void>(), 0x7000_0000u64);
        let by_hand = |src_host: bool, dst_host: bool| {
            let mut c = CUDA_MEMCPY3D {
                WidthInBytes: 64,
                Height: 1,
                Depth: 1,
                ..CUDA_MEMCPY3D::default()
            };
            if src_host {
                c.srcMemoryType = CUmemorytype::CU_MEMORYTYPE_HOST;
                c.srcHost = h;
            } else {
                c.srcMemoryType = CUmemorytype::CU_MEMORYTYPE_DEVICE;
                c.srcDevice = d;
            }
            if dst_host {
                c.dstMemoryType = CUmemorytype::CU_MEMORYTYPE_HOST;
                c.dstHost = h.cast_mut();
            } else {
                c.dstMemoryType = CUmemorytype::CU_MEMORYTYPE_DEVICE;
                c.dstDevice = d;
            }
            c
        };
        let side = |on_host: bool| {
            if on_host {
                Side::host(h)
            } else {
                Side::device(d)
            }
        };
        for (src_host, dst_host) in [(true, false), (false, true), (false, false), (true, true)] {
            assert_eq!(
                format!("{:?}", copy_1d(side(src_host), side(dst_host), 64)),
                format!("{:?}", by_hand(src_host, dst_host)),
                "host source {src_host}, host destination {dst_host}"
            );
        }
    }
}
