//! Hand-written raw bindings to the CUDA driver API (`libcuda`) and the
//! run-time compiler NVRTC (`libnvrtc`), both opened at run time.
//!
//! This crate mirrors CUDA 13.0's `cuda.h` and `nvrtc.h`: C names, C
//! signatures, no policy. Nothing is linked at build time, so it builds on a
//! machine with no CUDA at all. The safe layer is the `cudakit` crate.
//!
//! - [`types`]: handles, `CUresult`, the C enums as integer newtypes, and the
//!   `#[repr(C)]` structs, each with its size checked against the header.
//! - [`mod@driver`]: the table of libcuda entry points, [`Driver`].
//! - [`mod@nvrtc`]: NVRTC's types and its table, [`Nvrtc`].
//! - [`mod@nccl`]: NCCL's types and its table, [`Nccl`] (optional).
//! - [`mod@cublas`]: cuBLAS's GEMM types and its table, [`Cublas`] (optional).
//! - [`mod@cublaslt`]: cuBLASLt's matmul types and its table, [`CublasLt`] (optional).
//! - [`loader`]: where the libraries are looked for.
//!
//! ```no_run
//! let cu = cuda_sys::driver().expect("libcuda");
//! // SAFETY: cuInit takes flags by value and may be called any number of times.
//! let rc = unsafe { (cu.cuInit)(0) };
//! assert_eq!(rc, cuda_sys::CUresult::CUDA_SUCCESS);
//! ```
//!
//! Calling any entry point is `unsafe`: the caller upholds the C API's
//! contract (valid handles, pointers to live memory of the right size, the
//! right context current). The `cudakit` crate does that for you.

#![allow(non_camel_case_types, non_snake_case)]
#![deny(missing_docs)]

pub mod cublas;
pub mod cublaslt;
pub mod driver;
pub mod loader;
pub mod nccl;
pub mod nvjitlink;
pub mod nvrtc;
pub mod nvtx;
pub(crate) mod table;
pub mod types;

pub use cublas::{cublasHandle_t, cublasStatus_t, Cublas};
pub use cublaslt::{cublasLtHandle_t, CublasLt};
pub use driver::Driver;
pub use loader::{Attempt, LoadError, Loaded};
pub use nccl::{ncclComm_t, ncclResult_t, Nccl};
pub use nvjitlink::{nvJitLinkHandle, nvJitLinkInputType, nvJitLinkResult, NvJitLink};
pub use nvrtc::{nvrtcProgram, nvrtcResult, Nvrtc};
pub use types::*;

/// The crate README's code blocks, compiled as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The process's libcuda table, loaded on first use and kept for the life of
/// the process.
///
/// # Errors
///
/// [`LoadError::NotFound`] listing every candidate tried when no libcuda
/// opens; [`LoadError::MissingSymbol`] when one opens but lacks a required
/// entry point. The result of the first call is kept: later calls return the
/// same table or the same error.
pub fn driver() -> Result<&'static Driver, LoadError> {
    driver_with_origin().map(|(table, _)| table)
}

/// Like [`driver()`], with where the library came from.
///
/// # Errors
///
/// As [`driver()`].
pub fn driver_with_origin() -> Result<(&'static Driver, &'static Loaded), LoadError> {
    Driver::process()
}

/// The process's libcuda table if an earlier [`driver()`] call loaded it;
/// `None` otherwise. Never starts a search, so it is cheap and free of side
/// effects (an error message can use it to ask the driver about a code).
pub fn loaded_driver() -> Option<&'static Driver> {
    Driver::process_if_loaded()
}

/// The process's libnvrtc table, loaded on first use and kept for the life
/// of the process.
///
/// # Errors
///
/// As [`driver()`], for libnvrtc.
pub fn nvrtc() -> Result<&'static Nvrtc, LoadError> {
    nvrtc_with_origin().map(|(table, _)| table)
}

/// Like [`nvrtc()`], with where the library came from.
///
/// # Errors
///
/// As [`nvrtc()`].
pub fn nvrtc_with_origin() -> Result<(&'static Nvrtc, &'static Loaded), LoadError> {
    Nvrtc::process()
}

/// The process's libnvrtc table if an earlier [`nvrtc()`] call loaded it;
/// `None` otherwise. Never starts a search.
pub fn loaded_nvrtc() -> Option<&'static Nvrtc> {
    Nvrtc::process_if_loaded()
}

/// The process's libnccl table, loaded on first use and kept for the life
/// of the process. NCCL is optional: only collectives need it.
///
/// # Errors
///
/// As [`driver()`], for libnccl (`CUDAKIT_LIBNCCL`, `libnccl.so.2`, the
/// toolkit folders, pip's `nvidia/nccl/lib`).
pub fn nccl() -> Result<&'static Nccl, LoadError> {
    nccl_with_origin().map(|(table, _)| table)
}

/// Like [`nccl()`], with where the library came from.
///
/// # Errors
///
/// As [`nccl()`].
pub fn nccl_with_origin() -> Result<(&'static Nccl, &'static Loaded), LoadError> {
    Nccl::process()
}

/// The process's libnccl table if an earlier [`nccl()`] call loaded it;
/// `None` otherwise. Never starts a search.
pub fn loaded_nccl() -> Option<&'static Nccl> {
    Nccl::process_if_loaded()
}

/// The process's libnvJitLink table, loaded on first use and kept for the
/// life of the process. Found by `CUDAKIT_LIBNVJITLINK`, then the soname
/// `libnvJitLink.so.13`, the toolkit folders, and the wheels' folders
/// `nvidia/nvjitlink/lib` and `nvidia/cu13/lib` (see [`loader`]).
///
/// # Errors
///
/// As [`driver()`], for libnvJitLink.
pub fn nvjitlink() -> Result<&'static NvJitLink, LoadError> {
    nvjitlink_with_origin().map(|(table, _)| table)
}

/// Like [`nvjitlink()`], with where the library came from.
///
/// # Errors
///
/// As [`nvjitlink()`].
pub fn nvjitlink_with_origin() -> Result<(&'static NvJitLink, &'static Loaded), LoadError> {
    NvJitLink::process()
}

/// The process's libnvJitLink table if an earlier [`nvjitlink()`] call
/// loaded it; `None` otherwise. Never starts a search.
pub fn loaded_nvjitlink() -> Option<&'static NvJitLink> {
    NvJitLink::process_if_loaded()
}

/// The process's libcublas table, loaded on first use and kept for the life
/// of the process. cuBLAS is optional: only the matmul comparison uses it.
///
/// # Errors
///
/// As [`driver()`], for libcublas (`CUDAKIT_LIBCUBLAS`, `libcublas.so.13`,
/// the toolkit folders, pip's `nvidia/cu13/lib` and `nvidia/cublas/lib`).
pub fn cublas() -> Result<&'static Cublas, LoadError> {
    cublas_with_origin().map(|(table, _)| table)
}

/// Like [`cublas()`], with where the library came from.
///
/// # Errors
///
/// As [`cublas()`].
pub fn cublas_with_origin() -> Result<(&'static Cublas, &'static Loaded), LoadError> {
    Cublas::process()
}

/// The process's libcublas table if an earlier [`cublas()`] call loaded it;
/// `None` otherwise. Never starts a search.
pub fn loaded_cublas() -> Option<&'static Cublas> {
    Cublas::process_if_loaded()
}

/// The process's libcublasLt table, loaded on first use and kept for the
/// life of the process. cuBLASLt is optional: only the fp8 matmul
/// comparison uses it.
///
/// # Errors
///
/// As [`driver()`], for libcublasLt (`CUDAKIT_LIBCUBLASLT`,
/// `libcublasLt.so.13`, the toolkit folders, pip's `nvidia/cu13/lib` and
/// `nvidia/cublas/lib`).
pub fn cublaslt_with_origin() -> Result<(&'static CublasLt, &'static Loaded), LoadError> {
    CublasLt::process()
}

/// The process's libcublasLt table if an earlier [`cublaslt_with_origin()`]
/// call loaded it; `None` otherwise. Never starts a search.
pub fn loaded_cublaslt() -> Option<&'static CublasLt> {
    CublasLt::process_if_loaded()
}
