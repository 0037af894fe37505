//! Conditional nodes (CUDA 12.3+ for `if` and `while`, 12.8+ for
//! `if`/`else` and `switch`): graphs that decide on the device whether,
//! which, and how many times a body runs.
//!
//! - [`Graph::condition`] makes a [`Condition`]
//!   (`cuGraphConditionalHandleCreate`), bound to that graph, with an
//!   optional default value applied at every launch;
//! - [`Graph::add_conditional`] (or [`Graph::add_if`],
//!   [`Graph::add_if_else`], [`Graph::add_while`], [`Graph::add_switch`])
//!   adds the node (`cuGraphAddNode_v2` with a `CU_GRAPH_NODE_TYPE_CONDITIONAL`
//!   `CUgraphNodeParams`) and returns its bodies as [`Body`]s, built with
//!   the same methods as any graph;
//! - a kernel sets the condition with the device runtime's
//!   `cudaGraphSetConditional(handle, value)`: the [`Condition`] is its
//!   kernel argument (`cudaGraphConditionalHandle`, 64 bits). NVRTC
//!   declares the function only in relocatable device code
//!   (`-rdc=true`), as an external function that `libcudadevrt.a`
//!   provides, so the kernel is compiled relocatable and linked with the
//!   device runtime (`Linker::with_device_runtime`). See
//!   `kernels/conditional.cu`.
//!
//! # Lifetimes
//!
//! A [`Body<'p, 'g>`](Body) is a graph of the same `'g` as the graph
//! holding its node (`Graph` is invariant in `'g`): what its nodes use is
//! borrowed as long as the outermost graph's borrows. It borrows the
//! graph holding its node exclusively for `'p`, so that graph is not used
//! (built, read, instantiated) while one of its bodies can change: CUDA
//! does not let a graph and its parts be used at once from two threads,
//! and a `Body` is not `Send`. The driver owns the body's `CUgraph` (it
//! lives as long as the conditional node, so as long as the outermost
//! graph); a body also holds the outermost graph's shared handle, so the
//! `CUgraph` it names outlives it whatever is dropped first, or forgotten.
//! An executable graph is a copy made at instantiation; a body changed
//! after that changes only the next instantiation (or
//! [`GraphExec::update`](crate::GraphExec::update)).
//!
//! ```no_run
//! use cudakit::compile::linker::{LinkOptions, Linker};
//! use cudakit::compile::program::Program;
//! use cudakit::{params, Context, InstantiateOptions, LaunchConfig};
//! # fn main() -> cudakit::Result<()> {
//! let ctx = Context::new(0)?;
//! let src = r#"extern "C" __global__ void count(unsigned long long h, unsigned* c, unsigned n) {
//!     if (++*c >= n) cudaGraphSetConditional(h, 0);
//! }"#;
//! let compiled = Program::new("count.cu", src)
//!     .relocatable_device_code(true) // cudaGraphSetConditional is extern
//!     .compile_for(&ctx)?;
//! let mut linker = Linker::with_device_runtime(&ctx, &LinkOptions::new())?;
//! linker.add_compiled(&compiled)?;
//! let module = linker.complete()?;
//! let count = module.function("count")?;
//! let c = ctx.alloc::<u32>(1)?;
//! let mut graph = ctx.graph()?;
//! let cond = graph.condition(Some(1))?; // 1 at every launch: enter the loop
//! let zero = graph.add_memset(&c, 0u32, &[])?;
//! let (_, mut body) = graph.add_while(&cond, &[zero])?;
//! // SAFETY: one thread reads and writes c[0].
//! unsafe { body.add_kernel(&count, &LaunchConfig::new(1, 1), &params![&cond, &c, 10u32], &[])? };
//! let exec = graph.instantiate(InstantiateOptions::default())?;
//! let stream = ctx.stream()?;
//! ctx.scope(|s| s.launch_graph(&stream, &exec))?;
//! assert_eq!(c.to_vec()?[0], 10);
//! # Ok(()) }
//! ```
//!
//! What a body uses stays borrowed as long as the outermost graph's
//! executable graphs live:
//!
//! ```compile_fail,E0505
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let buffer = ctx.alloc::<f32>(16)?;
//! let mut graph = ctx.graph()?;
//! let cond = graph.condition(Some(1))?;
//! let (_, mut body) = graph.add_if(&cond, &[])?;
//! body.add_memset(&buffer, 0.0f32, &[])?;
//! let exec = graph.instantiate(Default::default())?;
//! drop(buffer); // error[E0505]: cannot move out of `buffer` because it is borrowed
//! drop(exec);
//! # Ok(()) }
//! ```
//!
//! and a body's `'g` is its parent's (`Graph` is invariant in `'g`), so a
//! body cannot take a borrow shorter than the parent's replays:
//!
//! ```compile_fail,E0597
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let mut graph = ctx.graph()?;
//! let cond = graph.condition(Some(1))?;
//! let (_, mut body) = graph.add_if(&cond, &[])?;
//! {
//!     let short = ctx.alloc::<f32>(16)?;
//!     body.add_memset(&short, 0.0f32, &[])?; // error[E0597]: `short` does not live long enough
//! }
//! let exec = graph.instantiate(Default::default())?;
//! # drop(exec);
//! # Ok(()) }
//! ```
//!
//! The graph holding a node is not used while a body of it may change:
//!
//! ```compile_fail,E0502
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let mut graph = ctx.graph()?;
//! let cond = graph.condition(Some(1))?;
//! let (_, mut body) = graph.add_if(&cond, &[])?;
//! let exec = graph.instantiate(Default::default())?; // error[E0502]: `graph` is borrowed
//! body.add_empty(&[])?;
//! # drop(exec);
//! # Ok(()) }
//! ```
//!
//! and a body stays on the thread that holds that borrow:
//!
//! ```compile_fail,E0277
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let mut graph = ctx.graph()?;
//! let cond = graph.condition(Some(1))?;
//! let (_, mut body) = graph.add_if(&cond, &[])?;
//! std::thread::scope(|s| {
//!     s.spawn(move || body.add_empty(&[])); // error[E0277]: `*const ()` cannot be sent
//! });
//! # Ok(()) }
//! ```
//!
//! # What is checked before the driver
//!
//! - A handle is used by conditional nodes of the graph it was made for
//!   only, and is a kernel argument only of kernel nodes of that graph or
//!   of its bodies (at any depth): anything else is
//!   [`Error::ForeignCondition`] (a plain launch too: outside its graph a
//!   handle names nothing the kernel may set).
//! - A body takes kernel, empty, child-graph, memset, memcpy (device
//!   memory) and conditional nodes only, also inside child graphs at any
//!   depth: a host, event, memory-allocation or memory-free node, or a
//!   copy from or to host memory, is [`Error::NodeNotAllowed`] naming the
//!   node kind. Every kernel of a body is in one context: the graph's
//!   (kernel nodes and child graphs of another context are refused as in
//!   any graph, [`Error::ContextMismatch`]).
//! - A handle made but used by no conditional node: the driver refuses the
//!   graph at instantiation (`CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED`);
//!   `instantiate` refuses it first ([`Error::InvalidArgument`]).
//! - `if`/`else` and `switch` need a 12.8 driver, conditional nodes a
//!   12.3 one ([`Error::NotSupported`]); a switch of 0 cases is
//!   [`Error::InvalidArgument`].
//!
//! # Threads and failures
//!
//! Nothing here queues, waits or frees: a handle and a node are made on
//! the thread that holds the graph (`&mut`), and the bodies are freed by
//! the driver with the outermost graph (`cuGraphDestroy`, when its last
//! holder goes). The handles made and not yet used are shared by the
//! graph family under a mutex (bodies are `Send` and may be built on other
//! threads). A refused `cuGraphConditionalHandleCreate` records nothing; a
//! refused `cuGraphAddNode_v2` returns no bodies and leaves the handle
//! unused, so the graph is not instantiated until another node uses it
//! (the driver would refuse it as well).

use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use cuda_sys::{
    CUgraph, CUgraphConditionalHandle, CUgraphConditionalNodeType, CUgraphNode, CUgraphNodeParams,
    CUgraphNodeType, CU_GRAPH_COND_ASSIGN_DEFAULT,
};

use super::{Graph, GraphAlloc, GraphNode, HostNodes, Launchers, NodeKind, NEXT_GRAPH};
use crate::compile::module::Function;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::memory::{DeviceCopy, DeviceDst, DeviceSrc};
use crate::work::event::Event;
use crate::work::launch::params::{sealed, ArgKind, ArgType, KernelArg, ParamList};
use crate::work::launch::LaunchConfig;

/// What a conditional body allows, for errors.
const BODY_ALLOWS: &str = "a conditional body takes kernel, empty, child-graph, memset, \
                           memcpy (device memory) and conditional nodes only";

/// The most bodies a switch node is given here.
pub const MAX_SWITCH_CASES: u32 = 1 << 16;

/// The kind of a conditional node, with the number of its bodies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConditionalKind {
    /// One body, run once when the condition is non-zero (CUDA 12.3).
    If,
    /// Two bodies: the first runs when the condition is non-zero, the
    /// second when it is zero (CUDA 12.8).
    IfElse,
    /// One body, run again and again while the condition is non-zero,
    /// tested before each run (CUDA 12.3). A kernel of the body sets the
    /// condition to 0 to end the loop.
    While,
    /// `n` bodies: body `v` runs when the condition is `v`; none when it
    /// is `n` or more (CUDA 12.8).
    Switch(u32),
}

impl ConditionalKind {
    /// The driver's type and body count.
    fn raw(self) -> (CUgraphConditionalNodeType, u32) {
        match self {
            ConditionalKind::If => (CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_IF, 1),
            ConditionalKind::IfElse => (CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_IF, 2),
            ConditionalKind::While => (CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_WHILE, 1),
            ConditionalKind::Switch(n) => {
                (CUgraphConditionalNodeType::CU_GRAPH_COND_TYPE_SWITCH, n)
            }
        }
    }

    /// The driver version the kind needs, as (major, minor) and as text.
    fn needs(self) -> ((i32, i32), &'static str) {
        match self {
            ConditionalKind::If | ConditionalKind::While => ((12, 3), "CUDA 12.3"),
            ConditionalKind::IfElse | ConditionalKind::Switch(_) => ((12, 8), "CUDA 12.8"),
        }
    }

    fn feature(self) -> &'static str {
        match self {
            ConditionalKind::If => "conditional if nodes",
            ConditionalKind::IfElse => "conditional if/else nodes",
            ConditionalKind::While => "conditional while nodes",
            ConditionalKind::Switch(_) => "conditional switch nodes",
        }
    }
}

/// A conditional handle (`CUgraphConditionalHandle`): the condition of a
/// conditional node, made by [`Graph::condition`] for one graph. Its value
/// is set by a kernel (`cudaGraphSetConditional`) and, where it has a
/// default, reset to it at every launch of the graph.
///
/// `&Condition` is a kernel argument of C type `cudaGraphConditionalHandle`
/// (`unsigned long long`), accepted by kernel nodes of its graph and of
/// that graph's conditional bodies only.
#[derive(Debug, PartialEq, Eq, Hash)]
pub struct Condition {
    graph: u64,
    family: u64,
    raw: CUgraphConditionalHandle,
    ctx_id: usize,
    device: i32,
    default: Option<u32>,
}

impl Condition {
    /// The raw handle.
    pub fn as_raw(&self) -> CUgraphConditionalHandle {
        self.raw
    }

    /// The value applied at every launch of the graph, if any
    /// (`CU_GRAPH_COND_ASSIGN_DEFAULT`). Without one the value is
    /// whatever a kernel set last (0 at first).
    pub fn default_value(&self) -> Option<u32> {
        self.default
    }
}

impl sealed::Sealed for &Condition {}
/// `cudaGraphConditionalHandle`, by value (copied, not borrowed: the
/// handle lives as long as its graph, which the node's graph family is).
/// Only kernel nodes of the handle's graph (or of its conditional bodies)
/// accept it.
impl<'a> KernelArg<'a> for &Condition {
    fn push_into(self, list: &mut ParamList<'a>) {
        list.push_bytes(
            &self.raw.to_ne_bytes(),
            std::mem::align_of::<u64>(),
            "cudaGraphConditionalHandle",
            ArgKind::Condition {
                graph: self.family,
                device: self.device,
            },
            self.ctx_id,
            const { &ArgType::Value(<u64 as DeviceCopy>::ELEMENT_TYPE) },
        );
    }
}

/// The body of a conditional node: a [`Graph`] owned by the driver for the
/// node's life, built with the same methods as any graph (`add_kernel`,
/// `add_copy`, `add_memset`, `add_empty`, `add_child`, nested
/// `add_if`/`add_while`/..., and the others, which refuse the node kinds a
/// body may not hold), and read through [`Deref`](std::ops::Deref) to
/// `Graph` (`nodes`, `dot`, ...).
///
/// It borrows the graph that holds its node exclusively (`'p`): while a
/// body can be built, its parent cannot be used (read by an instantiation,
/// say) on this or any other thread, as CUDA requires of graphs whose
/// parts are being changed. It is not `Send`, and it does not hand out
/// `&mut Graph`, so the body cannot leave that borrow. Its nodes borrow
/// for the parent's `'g`.
pub struct Body<'p, 'g> {
    graph: Graph<'g>,
    _parent: PhantomData<(&'p mut Graph<'g>, *const ())>,
}

impl std::fmt::Debug for Body<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Body").field(&self.graph).finish()
    }
}

impl<'g> std::ops::Deref for Body<'_, 'g> {
    type Target = Graph<'g>;
    fn deref(&self) -> &Graph<'g> {
        &self.graph
    }
}

impl<'p, 'g> Body<'p, 'g> {
    fn new(graph: Graph<'g>) -> Self {
        Body {
            graph,
            _parent: PhantomData,
        }
    }

    /// [`Graph::add_kernel`] in the body.
    ///
    /// # Safety
    ///
    /// As [`Graph::add_kernel`].
    ///
    /// # Errors
    ///
    /// As [`Graph::add_kernel`].
    pub unsafe fn add_kernel(
        &mut self,
        function: &'g Function<'_>,
        config: &LaunchConfig,
        params: &ParamList<'g>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.graph.add_kernel(function, config, params, deps) }
    }

    /// [`Graph::add_copy`] in the body (device memory).
    ///
    /// # Errors
    ///
    /// As [`Graph::add_copy`].
    pub fn add_copy<T: DeviceCopy>(
        &mut self,
        src: impl DeviceSrc<'g, T>,
        dst: impl DeviceDst<'g, T>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.graph.add_copy(src, dst, deps)
    }

    /// [`Graph::add_memset`] in the body.
    ///
    /// # Errors
    ///
    /// As [`Graph::add_memset`].
    pub fn add_memset<T: DeviceCopy>(
        &mut self,
        dst: impl DeviceDst<'g, T>,
        value: T,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.graph.add_memset(dst, value, deps)
    }

    /// [`Graph::add_empty`] in the body.
    ///
    /// # Errors
    ///
    /// As [`Graph::add_empty`].
    pub fn add_empty(&mut self, deps: &[GraphNode]) -> Result<GraphNode> {
        self.graph.add_empty(deps)
    }

    /// [`Graph::add_child`] in the body: the child, at any depth, must
    /// hold only what a body may.
    ///
    /// # Errors
    ///
    /// As [`Graph::add_child`]; [`Error::NodeNotAllowed`].
    pub fn add_child(&mut self, child: &'g Graph<'g>, deps: &[GraphNode]) -> Result<GraphNode> {
        self.graph.add_child(child, deps)
    }

    /// [`Graph::add_programmatic_dependency`] in the body.
    ///
    /// # Safety
    ///
    /// As [`Graph::add_programmatic_dependency`].
    ///
    /// # Errors
    ///
    /// As [`Graph::add_programmatic_dependency`].
    pub unsafe fn add_programmatic_dependency(
        &mut self,
        from: GraphNode,
        to: GraphNode,
    ) -> Result<()> {
        // SAFETY: the caller's contract, passed on.
        unsafe { self.graph.add_programmatic_dependency(from, to) }
    }

    /// Refused: a body holds no copy from or to host memory
    /// ([`Error::NodeNotAllowed`]).
    ///
    /// # Errors
    ///
    /// Always [`Error::NodeNotAllowed`].
    pub fn add_copy_to_device<T: DeviceCopy>(
        &mut self,
        src: &'g [T],
        dst: impl DeviceDst<'g, T>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.graph.add_copy_to_device(src, dst, deps)
    }

    /// Refused: a body holds no copy from or to host memory
    /// ([`Error::NodeNotAllowed`]).
    ///
    /// # Errors
    ///
    /// Always [`Error::NodeNotAllowed`].
    pub fn add_copy_to_host<T: DeviceCopy>(
        &mut self,
        src: impl DeviceSrc<'g, T>,
        dst: &'g mut [T],
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.graph.add_copy_to_host(src, dst, deps)
    }

    /// Refused: a body holds no host node ([`Error::NodeNotAllowed`]).
    ///
    /// # Errors
    ///
    /// Always [`Error::NodeNotAllowed`].
    pub fn add_host_fn<F>(&mut self, f: F, deps: &[GraphNode]) -> Result<GraphNode>
    where
        F: FnMut() + Send + 'g,
    {
        self.graph.add_host_fn(f, deps)
    }

    /// Refused: a body holds no event node ([`Error::NodeNotAllowed`]).
    ///
    /// # Errors
    ///
    /// Always [`Error::NodeNotAllowed`].
    pub fn add_event_record(
        &mut self,
        event: &'g Event<'_>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.graph.add_event_record(event, deps)
    }

    /// Refused: a body holds no event node ([`Error::NodeNotAllowed`]).
    ///
    /// # Errors
    ///
    /// Always [`Error::NodeNotAllowed`].
    pub fn add_event_wait(
        &mut self,
        event: &'g Event<'_>,
        deps: &[GraphNode],
    ) -> Result<GraphNode> {
        self.graph.add_event_wait(event, deps)
    }

    /// Refused: a body holds no memory node ([`Error::NodeNotAllowed`]).
    ///
    /// # Errors
    ///
    /// Always [`Error::NodeNotAllowed`].
    pub fn add_mem_alloc<T: DeviceCopy>(
        &mut self,
        len: usize,
        deps: &[GraphNode],
    ) -> Result<(GraphNode, GraphAlloc<T>)> {
        self.graph.add_mem_alloc(len, deps)
    }

    /// [`Graph::condition`] for conditional nodes of this body.
    ///
    /// # Errors
    ///
    /// As [`Graph::condition`].
    pub fn condition(&mut self, default: Option<u32>) -> Result<Condition> {
        self.graph.condition(default)
    }

    /// [`Graph::add_conditional`] in the body (nested).
    ///
    /// # Errors
    ///
    /// As [`Graph::add_conditional`].
    pub fn add_conditional(
        &mut self,
        condition: &Condition,
        kind: ConditionalKind,
        deps: &[GraphNode],
    ) -> Result<(GraphNode, Vec<Body<'_, 'g>>)> {
        self.graph.add_conditional(condition, kind, deps)
    }

    /// [`Graph::add_if`] in the body (nested).
    ///
    /// # Errors
    ///
    /// As [`Graph::add_conditional`].
    pub fn add_if(
        &mut self,
        condition: &Condition,
        deps: &[GraphNode],
    ) -> Result<(GraphNode, Body<'_, 'g>)> {
        self.graph.add_if(condition, deps)
    }

    /// [`Graph::add_if_else`] in the body (nested).
    ///
    /// # Errors
    ///
    /// As [`Graph::add_conditional`].
    pub fn add_if_else(
        &mut self,
        condition: &Condition,
        deps: &[GraphNode],
    ) -> Result<(GraphNode, Body<'_, 'g>, Body<'_, 'g>)> {
        self.graph.add_if_else(condition, deps)
    }

    /// [`Graph::add_while`] in the body (nested).
    ///
    /// # Errors
    ///
    /// As [`Graph::add_conditional`].
    pub fn add_while(
        &mut self,
        condition: &Condition,
        deps: &[GraphNode],
    ) -> Result<(GraphNode, Body<'_, 'g>)> {
        self.graph.add_while(condition, deps)
    }

    /// [`Graph::add_switch`] in the body (nested).
    ///
    /// # Errors
    ///
    /// As [`Graph::add_conditional`].
    pub fn add_switch(
        &mut self,
        condition: &Condition,
        cases: u32,
        deps: &[GraphNode],
    ) -> Result<(GraphNode, Vec<Body<'_, 'g>>)> {
        self.graph.add_switch(condition, cases, deps)
    }
}

impl<'g> Graph<'g> {
    /// Whether this graph is the body of a conditional node.
    pub fn is_conditional_body(&self) -> bool {
        self.body
    }

    /// Refuses `kind` when this graph is a conditional body.
    pub(crate) fn refuse_in_body(&self, what: &'static str, kind: &str) -> Result<()> {
        if self.body {
            Err(Error::NodeNotAllowed {
                what,
                place: "a conditional body",
                kind: kind.to_owned(),
                allowed: BODY_ALLOWS,
            })
        } else {
            Ok(())
        }
    }

    /// Checks a child graph for a body: its node kinds, at any depth
    /// (`cuGraphGetNodes`, `cuGraphNodeGetType`,
    /// `cuGraphChildGraphNodeGetGraph`), and its copies from or to host
    /// memory (recorded as its nodes were added).
    pub(crate) fn check_child_for_body(&self, child: &Graph<'_>) -> Result<()> {
        if !self.body {
            return Ok(());
        }
        if child.host_copies {
            return self.refuse_in_body("add_child", "a child graph that copies host memory");
        }
        if let Some((index, kind)) = first_refused(self.ctx, child.raw, 0)? {
            return self.refuse_in_body(
                "add_child",
                &format!(
                    "a child graph with {} (node {index} of its graph)",
                    kind.a_node()
                ),
            );
        }
        Ok(())
    }

    /// A conditional handle for conditional nodes of this graph
    /// (`cuGraphConditionalHandleCreate`). With `default`, the condition
    /// is set to it at every launch (`CU_GRAPH_COND_ASSIGN_DEFAULT`);
    /// without, it keeps what a kernel set last. Every handle made must
    /// be used by a conditional node before the graph is instantiated.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] before CUDA 12.3; driver errors.
    pub fn condition(&mut self, default: Option<u32>) -> Result<Condition> {
        let cu = self.ctx.enter()?;
        let create = crate::driver::optional!(cu, cuGraphConditionalHandleCreate, "CUDA 12.3");
        let mut raw: CUgraphConditionalHandle = 0;
        let flags = if default.is_some() {
            CU_GRAPH_COND_ASSIGN_DEFAULT
        } else {
            0
        };
        // SAFETY: a live graph of this context and a valid out-pointer;
        // defined flags.
        self.ctx.check("cuGraphConditionalHandleCreate", unsafe {
            create(
                &mut raw,
                self.raw,
                self.ctx.as_raw(),
                default.unwrap_or(0),
                flags,
            )
        })?;
        crate::context::lock(&self.unused_conditions).push(raw);
        Ok(Condition {
            graph: self.id,
            family: self.family,
            raw,
            ctx_id: self.ctx.id(),
            device: self.ctx.device().ordinal(),
            default,
        })
    }

    /// Adds a conditional node of `kind` on `condition`
    /// (`cuGraphAddNode_v2`), and returns it with its bodies, in the
    /// driver's order: for [`ConditionalKind::IfElse`] the `if` body then
    /// the `else` body, for [`ConditionalKind::Switch`] body `v` at index
    /// `v`. The bodies are empty graphs to build with the same methods as
    /// any graph (see the [module documentation](self) for what they
    /// take).
    ///
    /// # Errors
    ///
    /// [`Error::ForeignCondition`] for a handle made for another graph;
    /// [`Error::InvalidArgument`] for a switch of 0 or more than
    /// [`MAX_SWITCH_CASES`] cases; [`Error::NotSupported`] where the
    /// driver is older than the kind needs; [`Error::ForeignGraphNode`];
    /// driver errors.
    pub fn add_conditional(
        &mut self,
        condition: &Condition,
        kind: ConditionalKind,
        deps: &[GraphNode],
    ) -> Result<(GraphNode, Vec<Body<'_, 'g>>)> {
        let (node, bodies) = self.conditional_node(condition, kind, deps)?;
        Ok((node, bodies.into_iter().map(Body::new).collect()))
    }

    /// [`Graph::add_conditional`], the bodies as the graphs they are.
    fn conditional_node(
        &mut self,
        condition: &Condition,
        kind: ConditionalKind,
        deps: &[GraphNode],
    ) -> Result<(GraphNode, Vec<Graph<'g>>)> {
        if condition.graph != self.id {
            return Err(Error::ForeignCondition {
                what: "add_conditional",
                reason: "a conditional node takes a handle made by Graph::condition on the \
                         graph the node is added to",
            });
        }
        let (cond_type, size) = kind.raw();
        if size == 0 || size > MAX_SWITCH_CASES {
            return Err(Error::InvalidArgument(format!(
                "add_conditional: a switch takes 1 to {MAX_SWITCH_CASES} cases, not {size}"
            )));
        }
        let deps = self.deps("add_conditional", deps)?;
        let (version, needs_driver) = kind.needs();
        if crate::driver_version()? < version {
            return Err(Error::NotSupported {
                feature: kind.feature(),
                needs_driver,
            });
        }
        let cu = self.ctx.enter()?;
        let add = crate::driver::optional!(cu, cuGraphAddNode, "CUDA 12.3");
        let mut bodies: Vec<CUgraph> = vec![std::ptr::null_mut(); size as usize];
        let mut p = CUgraphNodeParams {
            r#type: CUgraphNodeType::CU_GRAPH_NODE_TYPE_CONDITIONAL,
            ..CUgraphNodeParams::default()
        };
        p.params.conditional = cuda_sys::CUDA_CONDITIONAL_NODE_PARAMS {
            handle: condition.raw,
            r#type: cond_type,
            size,
            phGraph_out: bodies.as_mut_ptr(),
            ctx: self.ctx.as_raw(),
        };
        let mut node: CUgraphNode = std::ptr::null_mut();
        // SAFETY: a live graph of this context and its nodes (no edge data:
        // plain dependencies); `p` is a zeroed CUgraphNodeParams whose
        // conditional member is live, as its type says, and whose output
        // array `bodies` has room for `size` graphs, alive across the call.
        self.ctx.check("cuGraphAddNode_v2", unsafe {
            add(
                &mut node,
                self.raw,
                deps.as_ptr(),
                std::ptr::null(),
                deps.len(),
                &mut p,
            )
        })?;
        crate::context::lock(&self.unused_conditions).retain(|&h| h != condition.raw);
        // The driver points `phGraph_out` at its own array of the bodies
        // (valid for the node's lifetime), as cuda.h documents it
        // ("CUDA-owned array populated ... during creation of the node");
        // a driver that fills the array it was given leaves the pointer at
        // `bodies`. Either way the bodies are read through the pointer.
        // SAFETY: the conditional member is the one the call filled (the
        // node type says so); the pointer is the driver's array or
        // `bodies`, of `size` graphs either way, alive here.
        let out = unsafe { p.params.conditional.phGraph_out };
        if out.is_null() {
            return Err(Error::InvalidArgument(
                "cuGraphAddNode_v2 returned no body graphs for the conditional node".into(),
            ));
        }
        // SAFETY: as above: `size` initialised graph handles at `out`.
        let raw: Vec<CUgraph> = unsafe { std::slice::from_raw_parts(out, size as usize) }.to_vec();
        drop(bodies);
        let bodies = raw.into_iter().map(|raw| self.body(raw)).collect();
        Ok((self.node(node), bodies))
    }

    /// A body of a conditional node of this graph: the driver's graph
    /// `raw`, kept alive by the outermost graph's handle.
    fn body(&self, raw: CUgraph) -> Graph<'g> {
        Graph {
            ctx: self.ctx,
            raw,
            id: NEXT_GRAPH.fetch_add(1, Ordering::Relaxed),
            key: Arc::new(Launchers::default()),
            child_keys: Vec::new(),
            host: Arc::new(HostNodes::default()),
            handle: self.handle.clone(),
            unfreed: Vec::new(),
            alloc_bytes: 0,
            family: self.family,
            body: true,
            unused_conditions: self.unused_conditions.clone(),
            host_copies: false,
            dynamic_kernel: None,
            _borrows: PhantomData,
        }
    }

    /// An `if` node: its body runs once when the condition is non-zero
    /// (CUDA 12.3). See [`Graph::add_conditional`].
    ///
    /// # Errors
    ///
    /// As [`Graph::add_conditional`].
    pub fn add_if(
        &mut self,
        condition: &Condition,
        deps: &[GraphNode],
    ) -> Result<(GraphNode, Body<'_, 'g>)> {
        let (node, mut bodies) = self.add_conditional(condition, ConditionalKind::If, deps)?;
        Ok((node, one(&mut bodies)?))
    }

    /// An `if`/`else` node: the first body runs when the condition is
    /// non-zero, the second when it is zero (CUDA 12.8). See
    /// [`Graph::add_conditional`].
    ///
    /// # Errors
    ///
    /// As [`Graph::add_conditional`].
    pub fn add_if_else(
        &mut self,
        condition: &Condition,
        deps: &[GraphNode],
    ) -> Result<(GraphNode, Body<'_, 'g>, Body<'_, 'g>)> {
        let (node, mut bodies) = self.add_conditional(condition, ConditionalKind::IfElse, deps)?;
        let otherwise = one(&mut bodies)?;
        let then = one(&mut bodies)?;
        Ok((node, then, otherwise))
    }

    /// A `while` node: its body runs while the condition is non-zero,
    /// tested before each run (CUDA 12.3); give the handle a default of 1
    /// to enter the loop, and let a kernel of the body set it to 0 to
    /// leave it. See [`Graph::add_conditional`].
    ///
    /// # Errors
    ///
    /// As [`Graph::add_conditional`].
    pub fn add_while(
        &mut self,
        condition: &Condition,
        deps: &[GraphNode],
    ) -> Result<(GraphNode, Body<'_, 'g>)> {
        let (node, mut bodies) = self.add_conditional(condition, ConditionalKind::While, deps)?;
        Ok((node, one(&mut bodies)?))
    }

    /// A `switch` node of `cases` bodies: body `v` runs when the condition
    /// is `v`, none when it is `cases` or more (CUDA 12.8). See
    /// [`Graph::add_conditional`].
    ///
    /// # Errors
    ///
    /// As [`Graph::add_conditional`].
    pub fn add_switch(
        &mut self,
        condition: &Condition,
        cases: u32,
        deps: &[GraphNode],
    ) -> Result<(GraphNode, Vec<Body<'_, 'g>>)> {
        self.add_conditional(condition, ConditionalKind::Switch(cases), deps)
    }

    /// Refuses a graph with handles that no conditional node uses (the
    /// driver would refuse it at instantiation).
    pub(crate) fn check_conditions_used(&self) -> Result<()> {
        let unused = crate::context::lock(&self.unused_conditions).len();
        if unused > 0 {
            return Err(Error::InvalidArgument(format!(
                "cuGraphInstantiateWithFlags: {unused} conditional handle(s) made by \
                 Graph::condition are used by no conditional node (the driver refuses such a \
                 graph: CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED)"
            )));
        }
        Ok(())
    }
}

/// The last body of `bodies`, taken out (the driver returned as many as
/// asked for; an empty list is reported, never a panic).
fn one<'p, 'g>(bodies: &mut Vec<Body<'p, 'g>>) -> Result<Body<'p, 'g>> {
    bodies.pop().ok_or_else(|| {
        Error::InvalidArgument("cuGraphAddNode_v2 returned fewer bodies than asked for".into())
    })
}

/// The first node of `graph` (or of its child graphs, at any depth) that a
/// conditional body does not allow, as (index in its own graph, kind).
fn first_refused(ctx: &Context, graph: CUgraph, depth: usize) -> Result<Option<(usize, NodeKind)>> {
    if depth > 64 {
        return Err(Error::InvalidArgument(
            "add_child: child graphs nested more than 64 deep".into(),
        ));
    }
    for (index, raw) in super::graph_nodes(ctx, graph)?.into_iter().enumerate() {
        match super::raw_kind(ctx, raw)? {
            NodeKind::Kernel
            | NodeKind::Empty
            | NodeKind::Memset
            | NodeKind::Memcpy
            | NodeKind::Conditional => {}
            NodeKind::Graph => {
                let cu = ctx.enter()?;
                let mut inner: CUgraph = std::ptr::null_mut();
                // SAFETY: a child-graph node of a live graph; a valid
                // out-pointer. The graph returned is owned by the node.
                ctx.check("cuGraphChildGraphNodeGetGraph", unsafe {
                    (cu.cuGraphChildGraphNodeGetGraph)(raw, &mut inner)
                })?;
                if let Some(found) = first_refused(ctx, inner, depth + 1)? {
                    return Ok(Some(found));
                }
            }
            other => return Ok(Some((index, other))),
        }
    }
    Ok(None)
}
