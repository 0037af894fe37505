//! Several GPUs: peer access and copies between devices ([`peer`]), and
//! collectives through NCCL ([`nccl`]).
//!
//! Every device has one [`Context`] (its primary context), usable from any
//! thread; [`contexts`] opens one per device. A sticky error poisons only
//! the context of the device where it happened: the others keep working.
//!
//! ```no_run
//! use cudakit::multi::{self, nccl::{self, Communicator, ReduceOp}};
//!
//! # fn main() -> cudakit::Result<()> {
//! let ctxs = multi::contexts()?;
//! let (c0, c1) = (&ctxs[0], &ctxs[1]);
//! println!("{}", multi::PeerMatrix::read()?);
//! c0.enable_peer_access(c1)?; // idempotent; a typed error where impossible
//!
//! let comms = Communicator::init_all(&[c0, c1])?;
//! let (x0, x1) = (c0.upload(&[1.0f32, 2.0])?, c1.upload(&[10.0f32, 20.0])?);
//! let (s0, s1) = (c0.stream()?, c1.stream()?);
//! c0.scope(|a| c1.scope(|b| nccl::group(|g| {
//!     g.all_reduce(&comms[0], a, &s0, &x0, &x0, ReduceOp::Sum)?;
//!     g.all_reduce(&comms[1], b, &s1, &x1, &x1, ReduceOp::Sum)
//! })))?;
//! assert_eq!(x1.to_vec()?, [11.0, 22.0]);
//! # Ok(()) }
//! ```

pub mod nccl;
pub mod peer;

pub use peer::{copy_peer, PeerLink, PeerMatrix};

use crate::context::device::Device;
use crate::context::Context;
use crate::error::Result;

/// One context per device, in ordinal order (`cuDeviceGetCount`, then the
/// primary context of each).
///
/// # Errors
///
/// Load and `cuInit` errors; driver errors.
pub fn contexts() -> Result<Vec<Context>> {
    Device::all()?.into_iter().map(Context::on).collect()
}
