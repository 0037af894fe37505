//! Device graph launch: executable graphs that a kernel launches
//! (`cudaGraphLaunch` in device code, CUDA 12.0+).
//!
//! - [`InstantiateOptions::device_launch`](crate::InstantiateOptions::device_launch) instantiates with
//!   `CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH`; the executable graph is
//!   uploaded (`cuGraphUpload`) and waited for before `instantiate`
//!   returns, so it can be launched from the device at once;
//! - `&GraphExec` of such a graph is a kernel argument
//!   (`cudaGraphExec_t`): a kernel node hands it to
//!   `cudaGraphLaunch(exec, cudaStreamGraphTailLaunch)` (runs after the
//!   launching graph ends) or `cudaStreamGraphFireAndForget` (runs at once,
//!   as a child of the launching graph, which ends after it). The kernel is
//!   relocatable device code linked with the device runtime
//!   (`kernels/device_graph.cu`); CUDA launches a graph from the device
//!   only from a kernel that runs in a graph.
//!
//! # Lifetimes
//!
//! The kernel argument borrows the executable graph for the node's `'g`:
//! the graph launched from the device outlives every graph that can launch
//! it, and so every scope that launched one of those (`'g: 's`), and it
//! cannot be updated (`&mut`) while a graph holds it. Its own borrows
//! outlive it. A device launch runs within the launching graph's launch on
//! its stream (a fire-and-forget child before the launching graph ends, a
//! tail launch before the stream's next work), which the scope waits for.
//!
//! So a graph that a kernel node launches from the device cannot be
//! dropped (or updated) while the graph holding that node lives:
//!
//! ```compile_fail,E0505
//! use cudakit::{params, InstantiateOptions, LaunchConfig};
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let module = ctx.load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")?;
//! let launcher = module.function("launcher")?;
//! let buffer = ctx.alloc::<f32>(16)?;
//! let mut inner = ctx.graph()?;
//! inner.add_memset(&buffer, 1.0f32, &[])?;
//! let device = inner.instantiate(InstantiateOptions::default().device_launch())?;
//! let mut outer = ctx.graph()?;
//! // SAFETY: (not compiled) the kernel launches the graph it is given.
//! unsafe { outer.add_kernel(&launcher, &LaunchConfig::new(1, 1), &params![&device], &[])? };
//! let exec = outer.instantiate(InstantiateOptions::default())?;
//! drop(device); // error[E0505]: cannot move out of `device` because it is borrowed
//! drop(exec);
//! # Ok(()) }
//! ```
//!
//! # What is checked before the driver
//!
//! The rules CUDA sets for device-launch graphs, at instantiation, each an
//! [`Error::NodeNotAllowed`] naming the node:
//!
//! - only kernel, memcpy, memset and child-graph nodes, at any depth of
//!   child graphs (no host, event, empty, memory-allocation, memory-free or
//!   conditional nodes);
//! - no kernel that uses dynamic parallelism, where its module's PTX shows
//!   it ([`Function::uses_dynamic_parallelism`](crate::compile::module::Function::uses_dynamic_parallelism));
//!   a kernel whose PTX is unknown is left to the driver;
//! - no copy from or to host memory through the graph builder (CUDA allows
//!   mapped pinned memory, which a slice does not show), and no copies from
//!   or to arrays (the builder has none; a captured one is the driver's to
//!   refuse);
//! - one context: every node of a cudakit graph is of the graph's context
//!   (nodes of another are [`Error::ContextMismatch`] as they are added).
//!
//! A `&GraphExec` argument of a graph not instantiated for device launch
//! is [`Error::InvalidArgument`] at the launch or node that takes it.
//!
//! # Threads and failures
//!
//! The upload runs on the thread that instantiates (or updates, or sets
//! kernel parameters: both take `&mut`), on a stream of its own that no
//! capture can reach, and is refused on a thread that is capturing (a wait
//! there would invalidate the capture). A refused `cuStreamCreate` or
//! `cuGraphUpload` returns the error (the exec is destroyed: nothing of it
//! was queued); once the upload is queued, the exec's replay event is
//! recorded after it, so a failed `cuEventSynchronize` returns the error
//! and the exec's drop waits again, keeping the exec (leaked on purpose)
//! should that wait fail too. The private stream is destroyed at once
//! (the driver lets its queued upload finish).

use cuda_sys::{CUevent, CUgraph, CUresult, CUstream, CUstream_flags};

use super::{Graph, GraphExec, NodeKind};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::work::launch::params::{sealed, ArgKind, ArgType, KernelArg, ParamList};

const DEVICE_ALLOWS: &str = "a graph launched from the device takes kernel, memcpy (device \
                             memory), memset and child-graph nodes only, of one context, and no \
                             kernel that uses dynamic parallelism";
const PLACE: &str = "a graph instantiated for device launch";

impl Graph<'_> {
    /// Refuses what a device-launch graph may not hold (see the
    /// [module documentation](self)).
    pub(crate) fn check_device_launch(&self) -> Result<()> {
        let refuse = |kind: String| {
            Err(Error::NodeNotAllowed {
                what: "cuGraphInstantiateWithFlags",
                place: PLACE,
                kind,
                allowed: DEVICE_ALLOWS,
            })
        };
        if let Some(name) = &self.dynamic_kernel {
            return refuse(format!("the kernel {name}, which uses dynamic parallelism"));
        }
        if self.host_copies {
            return refuse("a copy from or to host memory".into());
        }
        if let Some((index, kind, depth)) = first_refused_for_device(self.ctx, self.raw, 0)? {
            let within = if depth == 0 {
                String::new()
            } else {
                format!(" of a child graph {depth} deep")
            };
            return refuse(format!("{} (node {index}{within})", kind.a_node()));
        }
        Ok(())
    }
}

/// The first node of `graph` (or its child graphs) that a device-launch
/// graph does not allow: (index in its own graph, kind, child depth).
fn first_refused_for_device(
    ctx: &Context,
    graph: CUgraph,
    depth: usize,
) -> Result<Option<(usize, NodeKind, usize)>> {
    if depth > 64 {
        return Err(Error::InvalidArgument(
            "cuGraphInstantiateWithFlags: child graphs nested more than 64 deep".into(),
        ));
    }
    for (index, raw) in super::graph_nodes(ctx, graph)?.into_iter().enumerate() {
        match super::raw_kind(ctx, raw)? {
            NodeKind::Kernel | NodeKind::Memset | NodeKind::Memcpy => {}
            NodeKind::Graph => {
                let cu = ctx.enter()?;
                let mut inner: CUgraph = std::ptr::null_mut();
                // SAFETY: a child-graph node of a live graph; a valid
                // out-pointer. The graph returned is owned by the node.
                ctx.check("cuGraphChildGraphNodeGetGraph", unsafe {
                    (cu.cuGraphChildGraphNodeGetGraph)(raw, &mut inner)
                })?;
                if let Some(found) = first_refused_for_device(ctx, inner, depth + 1)? {
                    return Ok(Some(found));
                }
            }
            other => return Ok(Some((index, other, depth))),
        }
    }
    Ok(None)
}

impl GraphExec<'_> {
    /// Whether it was instantiated for device launch.
    pub fn is_device_launchable(&self) -> bool {
        self.device_launch
    }

    /// Uploads the executable graph on a private stream (`cuGraphUpload`)
    /// and waits for it (`cuEventSynchronize` on the replay-done event,
    /// recorded after the upload): a graph launched from the device must
    /// be uploaded first. A failed wait returns the error; the exec's drop
    /// waits again, and keeps the exec should that fail too.
    pub(crate) fn upload_and_wait(&self) -> Result<()> {
        self.ctx.refuse_during_capture("cuGraphUpload")?;
        let cu = self.ctx.enter()?;
        let mut stream: CUstream = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; defined flags.
        self.ctx.check("cuStreamCreate", unsafe {
            (cu.cuStreamCreate)(&mut stream, CUstream_flags::CU_STREAM_NON_BLOCKING.0 as u32)
        })?;
        // SAFETY: a live executable graph and stream of this context.
        let rc = unsafe { (cu.cuGraphUpload)(self.raw, stream) };
        let uploaded = self.ctx.check("cuGraphUpload", rc);
        let recorded = if uploaded.is_ok() {
            // SAFETY: the exec's live event and the stream made above.
            let rc = unsafe { (cu.cuEventRecord)(self.done, stream) };
            self.ctx.check("cuEventRecord", rc)
        } else {
            Ok(())
        };
        if uploaded.is_ok() && recorded.is_ok() {
            // The exec's drop now waits for the upload.
            self.used.set(true);
        } else if uploaded.is_ok() {
            // Queued, but no event after it: wait for the stream instead,
            // and keep the exec should that fail with an error that does
            // not stop the context's work (the upload may still run).
            // SAFETY: the live stream made above.
            let rc = unsafe { (cu.cuStreamSynchronize)(stream) };
            if rc != CUresult::CUDA_SUCCESS && !crate::DriverCode::from_raw(rc).is_sticky() {
                self.keep.set(true);
            }
            self.ctx.record_drop_error("cuStreamSynchronize", rc);
        }
        // SAFETY: the stream made above, destroyed once; the driver lets
        // its queued work (the upload) finish first.
        let rc = unsafe { (cu.cuStreamDestroy)(stream) };
        self.ctx.record_drop_error("cuStreamDestroy_v2", rc);
        uploaded?;
        recorded?;
        // SAFETY: the exec's live event, recorded after the upload.
        let rc = unsafe { (cu.cuEventSynchronize)(self.done as CUevent) };
        if rc != CUresult::CUDA_SUCCESS {
            return self.ctx.check("cuEventSynchronize", rc);
        }
        Ok(())
    }
}

impl sealed::Sealed for &GraphExec<'_> {}
/// `cudaGraphExec_t`: an executable graph for a kernel to launch from the
/// device (`cudaGraphLaunch`), borrowed for `'a`. Only a graph instantiated
/// with [`InstantiateOptions::device_launch`](crate::InstantiateOptions::device_launch)
/// is accepted (else the launch or node is [`Error::InvalidArgument`]).
impl<'a> KernelArg<'a> for &'a GraphExec<'_> {
    fn push_into(self, list: &mut ParamList<'a>) {
        if !self.device_launch {
            list.set_error(format!(
                "argument {} (&GraphExec {}) was not instantiated for device launch \
                 (InstantiateOptions::device_launch)",
                list.len(),
                self.label
            ));
            return;
        }
        list.push_bytes(
            &(self.raw as usize as u64).to_ne_bytes(),
            std::mem::align_of::<u64>(),
            "cudaGraphExec_t",
            ArgKind::Object {
                object: "device-launch graph",
                device: self.ctx.device().ordinal(),
            },
            self.ctx.id(),
            &ArgType::Untyped,
        );
    }
}
