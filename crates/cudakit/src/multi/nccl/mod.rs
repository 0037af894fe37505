//! NCCL communicators and collectives on cudakit buffers.
//!
//! NCCL is loaded at run time like libcuda (`CUDAKIT_LIBNCCL`, then
//! `libnccl.so.2`, the toolkit folders, pip's `nvidia/nccl/lib`); without
//! it every call here is [`Error::Load`] listing each path tried.
//!
//! # Communicators
//!
//! - One process over several devices: [`Communicator::init_all`]
//!   (`ncclCommInitAll`), one communicator per context.
//! - Several processes (or threads), one rank each:
//!   [`Communicator::init_rank`] (`ncclCommInitRankConfig`, non-blocking,
//!   polled with `ncclCommGetAsyncError`). Rank 0 makes a [`UniqueId`] and
//!   sends it to every other rank over any channel it has: a file, a pipe,
//!   an environment variable of a child process, MPI's broadcast. The id is
//!   128 plain bytes ([`UniqueId::as_bytes`]) or 256 hex digits
//!   ([`UniqueId::to_hex`]). Every rank then calls `init_rank` with the id,
//!   its rank and the number of ranks. A rank that does not join within the
//!   timeout makes the others' `init_rank` return [`Error::NcclTimeout`]
//!   after aborting (`ncclCommAbort`): nothing hangs.
//!
//! # Collectives
//!
//! All-reduce, broadcast, reduce, all-gather, reduce-scatter, send and
//! receive run inside a scope of the communicator's context, on a stream of
//! it, with buffers of it, of any [`NcclElement`] type (`f16` and `bf16`
//! included); the buffers stay borrowed until the scope has synchronized.
//! They are queued through a [`Group`] ([`group`]): the calls are checked
//! (devices, lengths, and, for the ranks that live in this process, that
//! every rank makes matching calls: same counts, types, operators, roots,
//! peers), and only then handed to NCCL between `ncclGroupStart` and
//! `ncclGroupEnd`. A mismatch is [`Error::CollectiveMismatch`] with nothing
//! queued: one process never waits forever on itself. The methods of
//! [`Communicator`] are groups of one call, for communicators with one rank
//! in this process.
//!
//! After each group the communicators' asynchronous errors are read
//! (`ncclCommGetAsyncError`); an error aborts the communicator, which then
//! refuses work ([`Error::CommunicatorAborted`]).
//! [`Communicator::synchronize`] waits for a stream with a timeout, polling
//! the same, for ranks in other processes that may never arrive.
//!
//! NVLink multicast (NVLS) is not used by cudakit; on shared machines run
//! with `NCCL_NVLS_ENABLE=0`.

mod comm;
mod group;
pub mod rendezvous;

pub use comm::{Communicator, UniqueId};
pub use group::{group, Group};
pub use rendezvous::{Rendezvous, RendezvousConfig};

use std::ffi::CStr;

use cuda_sys::nccl::{ncclDataType_t, ncclRedOp_t};
use cuda_sys::{ncclComm_t, ncclResult_t, Nccl};

use crate::error::{Error, NcclCode, NcclError, Result};
use crate::memory::{Bf16, DeviceCopy, F16};

/// The process's NCCL table ([`Error::ForkedChild`] in a child forked
/// after the driver was loaded: NCCL calls into CUDA).
pub(crate) fn nccl() -> Result<&'static Nccl> {
    if crate::driver::forked() {
        return Err(Error::ForkedChild);
    }
    cuda_sys::nccl().map_err(Error::Load)
}

/// NCCL's version as (major, minor, patch) (`ncclGetVersion`).
///
/// # Errors
///
/// [`Error::Load`] when NCCL is missing; NCCL errors.
pub fn version() -> Result<(i32, i32, i32)> {
    let nc = nccl()?;
    let mut code = 0;
    // SAFETY: a valid out-pointer.
    let rc = unsafe { (nc.ncclGetVersion)(&mut code) };
    check(nc, "ncclGetVersion", rc, None)?;
    Ok(split_version(code))
}

/// `NCCL_VERSION_CODE` as (major, minor, patch): 2.8.4 is 2804, 2.28.3 is
/// 22803.
fn split_version(code: i32) -> (i32, i32, i32) {
    if code < 10000 {
        (code / 1000, code % 1000 / 100, code % 100)
    } else {
        (code / 10000, code % 10000 / 100, code % 100)
    }
}

/// Where NCCL was found, for diagnostics: the library that opened, or the
/// load error listing every path tried.
pub fn origin() -> std::result::Result<String, cuda_sys::LoadError> {
    cuda_sys::nccl_with_origin().map(|(_, loaded)| loaded.candidate.clone())
}

/// Turns an NCCL result into a typed error, with NCCL's message about it
/// (`ncclGetLastError`) when there is a communicator to ask.
pub(crate) fn check(
    nc: &Nccl,
    call: &'static str,
    rc: ncclResult_t,
    comm: Option<ncclComm_t>,
) -> Result<(), NcclError> {
    match NcclCode::from_raw(rc) {
        None => Ok(()),
        Some(code) => Err(NcclError {
            call,
            code,
            detail: last_error(nc, comm),
        }),
    }
}

fn last_error(nc: &Nccl, comm: Option<ncclComm_t>) -> String {
    let Some(get) = nc.ncclGetLastError else {
        return String::new();
    };
    // SAFETY: NCCL ignores the argument ("comm is currently unused and can
    // be NULL"; `comm` is NULL or a live communicator anyway) and returns
    // its thread-local last-error buffer, a NUL-terminated char array that
    // lives as long as this thread; it is copied below before any other
    // NCCL call on this thread can rewrite it.
    let text = unsafe { get(comm.unwrap_or(std::ptr::null_mut())) };
    if text.is_null() {
        return String::new();
    }
    // SAFETY: non-null, NUL-terminated and alive for this thread (above);
    // copied at once.
    unsafe { CStr::from_ptr(text) }
        .to_string_lossy()
        .trim()
        .to_owned()
}

mod sealed {
    pub trait Sealed {}
}

/// An element type NCCL reduces and moves: `i8`, `u8`, `i32`, `u32`,
/// `i64`, `u64`, [`F16`], [`Bf16`], `f32`, `f64`. Sealed; a type NCCL does
/// not know is a compile error:
///
/// ```compile_fail,E0277
/// fn takes<T: cudakit::multi::nccl::NcclElement>() {}
/// takes::<u16>(); // error: NCCL has no 16-bit integer type
/// ```
pub trait NcclElement: DeviceCopy + sealed::Sealed {
    /// The `ncclDataType_t` of the type.
    const DATA_TYPE: ncclDataType_t;
}

macro_rules! nccl_elements {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl NcclElement for $t {
            const DATA_TYPE: ncclDataType_t = ncclDataType_t::$d;
        }
    )*};
}

nccl_elements! {
    i8 => ncclInt8,
    u8 => ncclUint8,
    i32 => ncclInt32,
    u32 => ncclUint32,
    i64 => ncclInt64,
    u64 => ncclUint64,
    F16 => ncclFloat16,
    Bf16 => ncclBfloat16,
    f32 => ncclFloat32,
    f64 => ncclFloat64,
}

/// A built-in reduction operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReduceOp {
    /// Sum (`ncclSum`).
    Sum,
    /// Product (`ncclProd`).
    Prod,
    /// Maximum (`ncclMax`).
    Max,
    /// Minimum (`ncclMin`).
    Min,
    /// Average: sum divided by the number of ranks (`ncclAvg`, NCCL 2.10).
    Avg,
}

impl ReduceOp {
    /// The raw operator.
    pub fn as_raw(self) -> ncclRedOp_t {
        match self {
            ReduceOp::Sum => ncclRedOp_t::ncclSum,
            ReduceOp::Prod => ncclRedOp_t::ncclProd,
            ReduceOp::Max => ncclRedOp_t::ncclMax,
            ReduceOp::Min => ncclRedOp_t::ncclMin,
            ReduceOp::Avg => ncclRedOp_t::ncclAvg,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_split_both_ways() {
        assert_eq!(split_version(2804), (2, 8, 4));
        assert_eq!(split_version(22803), (2, 28, 3));
        assert_eq!(split_version(21903), (2, 19, 3));
    }

    #[test]
    fn element_types_map_to_nccl_data_types() {
        assert_eq!(<f32 as NcclElement>::DATA_TYPE.0, 7);
        assert_eq!(<F16 as NcclElement>::DATA_TYPE.0, 6);
        assert_eq!(<Bf16 as NcclElement>::DATA_TYPE.0, 9);
        assert_eq!(<u64 as NcclElement>::DATA_TYPE.0, 5);
        assert_eq!(ReduceOp::Avg.as_raw().0, 4);
    }

    /// A library that is not NCCL is a typed load error naming the path.
    #[test]
    fn a_missing_nccl_lists_the_path_tried() {
        // SAFETY: the path does not exist, so nothing is opened.
        let err = unsafe { Nccl::load_from("/nonexistent/libnccl.so.2") }.unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("libnccl could not be loaded"), "{text}");
        assert!(
            text.contains("/nonexistent/libnccl.so.2: no such file"),
            "{text}"
        );
        assert!(text.contains("CUDAKIT_LIBNCCL"), "{text}");
    }
}
