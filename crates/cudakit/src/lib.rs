//! cudakit: a thin safe layer over the CUDA driver API and NVRTC, both
//! loaded at run time through [`cuda_sys`] (re-exported as [`sys`]).
//!
//! - Every `CUresult` and `nvrtcResult` becomes a typed [`Error`] naming the
//!   entry point; sticky errors poison the [`Context`], which then refuses
//!   work with [`Error::ContextPoisoned`] instead of entering the driver.
//! - Every allocation is recorded in the context's [`Arena`] with its kind,
//!   size and caller; [`Context::stats`] and [`Context::leak_report`] are one
//!   call away.
//! - Buffers ([`DeviceBuffer`], [`PinnedBuffer`], [`UnifiedBuffer`]) borrow
//!   their context, so none outlives it; asynchronous work runs inside a
//!   [`Scope`], which keeps what it uses borrowed until the device is done.
//!
//! ```no_run
//! use cudakit::Context;
//!
//! fn main() -> cudakit::Result<()> {
//!     let ctx = Context::new(0)?;
//!     println!("{} (sm_{}{})", ctx.device().name()?, ctx.limits().compute_capability.0,
//!              ctx.limits().compute_capability.1);
//!     let x = ctx.upload(&[1.0f32, 2.0, 3.0])?;
//!     let y = ctx.alloc::<f32>(3)?;
//!     y.copy_from(&x)?;
//!     assert_eq!(y.to_vec()?, vec![1.0, 2.0, 3.0]);
//!     assert_eq!(ctx.stats().live_count(), 2);
//!     drop((x, y));
//!     assert!(ctx.leak_report().is_empty());
//!     Ok(())
//! }
//! ```

#![deny(missing_docs)]

pub use cuda_sys as sys;

pub mod compile;
pub mod context;
mod driver;
pub mod error;
pub mod memory;
pub mod multi;
pub mod nvtx;
pub mod work;

pub use compile::cache::{Cache, CacheKey, CacheStats};
pub use compile::linker::{LinkInput, LinkOptions, Linker};
pub use compile::module::{Function, FunctionAttributes, Global, ImageKind, Module, ParamCheck};
pub use compile::program::{Arch, Compiled, CppStd, Origin, Output, Program};
pub use context::arena::{AllocKind, AllocRecord, Arena, ArenaStats, KindStats};
pub use context::device::{Device, DeviceLimits};
pub use context::metrics::Metrics;
pub use context::Context;
pub use driver::driver_version;
pub use error::{DriverCode, DriverError, Error, LaunchConfigError, NvrtcCode, NvrtcError, Result};
pub use memory::array::{Array, ArrayElement, ArrayShape, ChannelFormat, ChannelKind};
pub use memory::pitched::Pitched;
pub use memory::texture::{AddressMode, FilterMode, ReadMode, Surface, Texture, TextureDesc};
pub use memory::{
    Attach, Bf16, DeviceBuffer, DeviceCopy, DeviceDst, DevicePtr, DeviceSrc, DeviceView,
    PinnedBuffer, UnifiedBuffer, F16,
};
pub use memory::{MemPool, PoolBuffer, PoolUsage, ReusePolicy};
pub use work::event::Event;
pub use work::future::{Batch, Done};
pub use work::graph::{Graph, GraphAlloc, GraphExec, GraphNode, InstantiateOptions, NodeKind};
pub use work::launch::{Dim3, KernelArg, LaunchConfig, ParamList};
pub use work::scope::Scope;
pub use work::stream::Stream;
