//! cudakit: a thin safe layer over the CUDA driver API and NVRTC, both
//! loaded at run time through [`cuda_sys`] (re-exported as [`sys`]).
//!
//! ```no_run
//! use cudakit::{params, Context, LaunchConfig, Program};
//!
//! const SAXPY: &str = r#"
//! extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
//!     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
//!     if (i < n) y[i] = a * x[i] + y[i];
//! }"#;
//!
//! fn main() -> cudakit::Result<()> {
//!     let ctx = Context::new(0)?;
//!     println!("{} (sm_{}{})", ctx.device().name()?, ctx.limits().compute_capability.0,
//!              ctx.limits().compute_capability.1);
//!     let module = ctx.load_module(&Program::new("saxpy.cu", SAXPY).compile_for(&ctx)?)?;
//!     let saxpy = module.function("saxpy")?;
//!     let n = 4096;
//!     let x = ctx.upload(&vec![2.0f32; n])?;
//!     let y = ctx.upload(&vec![1.0f32; n])?;
//!     let stream = ctx.stream()?;
//!     ctx.scope(|s| {
//!         // SAFETY: saxpy reads x[0..n) and writes y[0..n); both hold n elements.
//!         unsafe { s.launch(&stream, &saxpy, &LaunchConfig::for_elements(n, 256)?,
//!                           &params![3.0f32, &x, &y, n as u32]) }
//!     })?; // waits for the GPU
//!     assert!(y.to_vec()?.iter().all(|&v| v == 7.0));
//!     assert_eq!(ctx.stats().live_count(), 2); // x and y, in the arena
//!     drop((x, y));
//!     assert!(ctx.leak_report().is_empty());
//!     Ok(())
//! }
//! ```
//!
//! - Every `CUresult` and `nvrtcResult` becomes a typed [`Error`] naming the
//!   entry point; sticky errors poison the [`Context`], which then refuses
//!   work with [`Error::ContextPoisoned`] instead of entering the driver.
//!   `Debug` prints an error like `Display` (so `main` returning one reads
//!   well); `{:#?}` prints its structure.
//! - Kernel arguments are copied into a [`ParamList`] (the [`params!`]
//!   macro), printable as an audit table and checked against the kernel's
//!   parameters (`cuFuncGetParamInfo`) before each launch.
//! - Every allocation is recorded in the context's [`Arena`] with its kind,
//!   size and caller; [`Context::stats`] and [`Context::leak_report`] are one
//!   call away.
//! - Buffers ([`DeviceBuffer`], [`PinnedBuffer`], [`UnifiedBuffer`]) borrow
//!   their context, so none outlives it; asynchronous work runs inside a
//!   [`Scope`], which keeps what it uses borrowed until the device is done.
//! - [`Graph`]s (built or captured), stream-ordered [`MemPool`]s, textures,
//!   several GPUs and NCCL ([`multi`]); runnable examples in the crate's
//!   `examples/` folder.

#![deny(missing_docs)]

pub use cuda_sys as sys;

/// The crate README's code blocks, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub mod compile;
pub mod context;
mod driver;
pub mod error;
pub mod ipc;
pub mod memory;
pub mod multi;
pub mod nvtx;
pub mod work;

pub use compile::cache::{Cache, CacheKey, CacheStats};
pub use compile::library::{Kernel, Library};
pub use compile::linker::{LinkInput, LinkOptions, Linker};
pub use compile::module::{Function, FunctionAttributes, Global, ImageKind, Module, ParamCheck};
pub use compile::program::{Arch, Compiled, CppStd, Origin, Output, Program};
pub use context::arena::{AllocKind, AllocRecord, Arena, ArenaStats, KindStats};
pub use context::device::{Device, DeviceLimits};
pub use context::green::{GreenSplit, SmResource, SmSplitOptions};
pub use context::metrics::Metrics;
pub use context::Context;
pub use driver::driver_version;
pub use error::{
    DriverCode, DriverError, Error, IpcError, LaunchConfigError, NvrtcCode, NvrtcError, Result,
    VirtualMemoryError,
};
pub use ipc::{Exported, ImportedPool, IpcChannel, IpcHandle};
pub use memory::array::{Array, ArrayElement, ArrayShape, ChannelFormat, ChannelKind};
pub use memory::pitched::Pitched;
pub use memory::texture::{AddressMode, FilterMode, ReadMode, Surface, Texture, TextureDesc};
pub use memory::ImportedBuffer;
pub use memory::{
    Attach, Bf16, DeviceBuffer, DeviceCopy, DeviceDst, DevicePtr, DeviceSrc, DeviceView,
    PinnedBuffer, RegisteredHost, UnifiedBuffer, VirtualBuffer, F16, F8E4M3, F8E5M2,
};
pub use memory::{MemPool, PoolBuffer, PoolUsage, ReusePolicy};
pub use work::batch::CopyBatch;
pub use work::event::Event;
pub use work::future::{Batch, Done};
pub use work::graph::{
    Condition, ConditionalKind, Graph, GraphAlloc, GraphExec, GraphNode, InstantiateOptions,
    NodeKind,
};
pub use work::l2::{AccessPolicyWindow, L2Access};
pub use work::launch::{Dim3, KernelArg, LaunchConfig, ParamList};
pub use work::scope::Scope;
pub use work::stream::Stream;
