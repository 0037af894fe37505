//! cuBLASLt, written by hand for the FP8 matmul comparison: the handle and
//! descriptor types, the attribute enums it sets, the heuristic result, and
//! the table of the entry points `cublasLtMatmul` needs.
//!
//! Where the values come from: cuBLASLt's header `cublasLt.h` is not in the
//! pip wheels this project reads. The attribute numbers below
//! (`cublasLtMatmulDescAttributes_t`, `cublasLtMatmulPreferenceAttributes_t`)
//! and the layouts of `cublasLtMatmulAlgo_t` (eight `uint64_t`) and
//! `cublasLtMatmulHeuristicResult_t` were read from the forward
//! declarations of `cublasLt.h` that triton-lang/triton carries in
//! `cublas_types.h` (its NVIDIA backend's include folder), and agree with
//! several other public bindings of cuBLASLt 12/13. The fp8 `cudaDataType`
//! values (`CUDA_R_8F_E4M3` = 28, `CUDA_R_8F_E5M2` = 29) are from CUDA 13's
//! `library_types.h` (the `nvidia-cuda-runtime` wheel) and live in
//! [`crate::cublas::cudaDataType`]. The status type is cuBLAS's
//! ([`cublasStatus_t`]).
//!
//! cuBLASLt is optional: nothing in cuda-sys or cudakit needs it. It is
//! opened at run time (`CUDAKIT_LIBCUBLASLT`, then the soname
//! `libcublasLt.so.13`, then the toolkit folders, then pip's
//! `nvidia/cu13/lib` and `nvidia/cublas/lib`). `cudaStream_t` is the
//! driver's `CUstream`.

use std::ffi::{c_char, c_int, c_void};

use crate::cublas::{cublasComputeType_t, cudaDataType};
use crate::cublasStatus_t;
use crate::table::function_table;
use crate::types::c_enum;
use crate::CUstream;

c_enum! {
    /// `cublasLtMatmulDescAttributes_t`: the attributes of a matmul
    /// descriptor that the comparison sets (the header has more).
    pub struct cublasLtMatmulDescAttributes_t(c_int) {
        /// `int32_t` (`cublasOperation_t`): how A is used.
        CUBLASLT_MATMUL_DESC_TRANSA = 3,
        /// `int32_t` (`cublasOperation_t`): how B is used.
        CUBLASLT_MATMUL_DESC_TRANSB = 4,
        /// `const void*`: device pointer to A's scale (one value of the
        /// scale type); null means 1.
        CUBLASLT_MATMUL_DESC_A_SCALE_POINTER = 17,
        /// `const void*`: device pointer to B's scale; null means 1.
        CUBLASLT_MATMUL_DESC_B_SCALE_POINTER = 18,
        /// `int8_t`: FP8 fast accumulation (0: results accumulated at
        /// higher precision; 1: the tensor cores' own accumulation only).
        CUBLASLT_MATMUL_DESC_FAST_ACCUM = 25,
    }
}

c_enum! {
    /// `cublasLtMatmulPreferenceAttributes_t` (the one the comparison sets).
    pub struct cublasLtMatmulPreferenceAttributes_t(c_int) {
        /// `uint64_t`: the most workspace, in bytes, an algorithm may use.
        CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES = 1,
    }
}

/// The struct `cublasLtHandle_t` points to; only ever handled by pointer.
#[repr(C)]
#[derive(Debug)]
pub struct cublasLtContext {
    _private: [u8; 0],
}
/// `cublasLtHandle_t`.
pub type cublasLtHandle_t = *mut cublasLtContext;

/// The struct `cublasLtMatmulDesc_t` points to.
#[repr(C)]
#[derive(Debug)]
pub struct cublasLtMatmulDescOpaque_t {
    _private: [u8; 0],
}
/// `cublasLtMatmulDesc_t`.
pub type cublasLtMatmulDesc_t = *mut cublasLtMatmulDescOpaque_t;

/// The struct `cublasLtMatrixLayout_t` points to.
#[repr(C)]
#[derive(Debug)]
pub struct cublasLtMatrixLayoutOpaque_t {
    _private: [u8; 0],
}
/// `cublasLtMatrixLayout_t`.
pub type cublasLtMatrixLayout_t = *mut cublasLtMatrixLayoutOpaque_t;

/// The struct `cublasLtMatmulPreference_t` points to.
#[repr(C)]
#[derive(Debug)]
pub struct cublasLtMatmulPreferenceOpaque_t {
    _private: [u8; 0],
}
/// `cublasLtMatmulPreference_t`.
pub type cublasLtMatmulPreference_t = *mut cublasLtMatmulPreferenceOpaque_t;

/// `cublasLtMatmulAlgo_t`: an algorithm, opaque.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct cublasLtMatmulAlgo_t {
    /// Opaque.
    pub data: [u64; 8],
}

/// `cublasLtMatmulHeuristicResult_t`: one algorithm the heuristic offers.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct cublasLtMatmulHeuristicResult_t {
    /// The algorithm.
    pub algo: cublasLtMatmulAlgo_t,
    /// The workspace it needs, in bytes.
    pub workspaceSize: usize,
    /// Whether it can run the problem (`CUBLAS_STATUS_SUCCESS`).
    pub state: cublasStatus_t,
    /// Waves of the GPU it fills.
    pub wavesCount: f32,
    /// Reserved.
    pub reserved: [c_int; 4],
}

function_table! {
    /// Entry points of libcublasLt used by the FP8 GEMM comparison. Open it
    /// with [`cublaslt_with_origin()`](crate::cublaslt_with_origin).
    ///
    /// Every entry is exported by cuBLASLt 11 and later.
    pub struct CublasLt;
    library = "libcublasLt";
    header = "cublasLt.h";
    search = CublasLt;
    required {
        /// Creates a handle.
        cublasLtCreate = "cublasLtCreate": fn(lightHandle: *mut cublasLtHandle_t) -> cublasStatus_t;
        /// Destroys a handle.
        cublasLtDestroy = "cublasLtDestroy": fn(lightHandle: cublasLtHandle_t) -> cublasStatus_t;
        /// The library's version (`CUBLASLT_VERSION`: major·10000 + minor·100 + patch).
        cublasLtGetVersion = "cublasLtGetVersion": fn() -> usize;
        /// Creates a matmul descriptor for a compute type and a scale type.
        cublasLtMatmulDescCreate = "cublasLtMatmulDescCreate": fn(
            matmulDesc: *mut cublasLtMatmulDesc_t,
            computeType: cublasComputeType_t,
            scaleType: cudaDataType,
        ) -> cublasStatus_t;
        /// Destroys a matmul descriptor.
        cublasLtMatmulDescDestroy = "cublasLtMatmulDescDestroy": fn(matmulDesc: cublasLtMatmulDesc_t) -> cublasStatus_t;
        /// Sets one attribute of a matmul descriptor from `sizeInBytes` bytes at `buf`.
        cublasLtMatmulDescSetAttribute = "cublasLtMatmulDescSetAttribute": fn(
            matmulDesc: cublasLtMatmulDesc_t,
            attr: cublasLtMatmulDescAttributes_t,
            buf: *const c_void,
            sizeInBytes: usize,
        ) -> cublasStatus_t;
        /// Creates a column-major layout of `rows`×`cols` elements of `type_`
        /// with columns `ld` elements apart.
        cublasLtMatrixLayoutCreate = "cublasLtMatrixLayoutCreate": fn(
            matLayout: *mut cublasLtMatrixLayout_t,
            type_: cudaDataType,
            rows: u64,
            cols: u64,
            ld: i64,
        ) -> cublasStatus_t;
        /// Destroys a layout.
        cublasLtMatrixLayoutDestroy = "cublasLtMatrixLayoutDestroy": fn(matLayout: cublasLtMatrixLayout_t) -> cublasStatus_t;
        /// Creates a preference object.
        cublasLtMatmulPreferenceCreate = "cublasLtMatmulPreferenceCreate": fn(pref: *mut cublasLtMatmulPreference_t) -> cublasStatus_t;
        /// Destroys a preference object.
        cublasLtMatmulPreferenceDestroy = "cublasLtMatmulPreferenceDestroy": fn(pref: cublasLtMatmulPreference_t) -> cublasStatus_t;
        /// Sets one preference attribute.
        cublasLtMatmulPreferenceSetAttribute = "cublasLtMatmulPreferenceSetAttribute": fn(
            pref: cublasLtMatmulPreference_t,
            attr: cublasLtMatmulPreferenceAttributes_t,
            buf: *const c_void,
            sizeInBytes: usize,
        ) -> cublasStatus_t;
        /// Writes up to `requestedAlgoCount` algorithms for the problem,
        /// best first, and their number to `returnAlgoCount`.
        cublasLtMatmulAlgoGetHeuristic = "cublasLtMatmulAlgoGetHeuristic": fn(
            lightHandle: cublasLtHandle_t,
            operationDesc: cublasLtMatmulDesc_t,
            Adesc: cublasLtMatrixLayout_t,
            Bdesc: cublasLtMatrixLayout_t,
            Cdesc: cublasLtMatrixLayout_t,
            Ddesc: cublasLtMatrixLayout_t,
            preference: cublasLtMatmulPreference_t,
            requestedAlgoCount: c_int,
            heuristicResultsArray: *mut cublasLtMatmulHeuristicResult_t,
            returnAlgoCount: *mut c_int,
        ) -> cublasStatus_t;
        /// D = alpha·op(A)·op(B) + beta·C (times the scales the descriptor
        /// points to), column-major; alpha and beta point to host values of
        /// the scale type in the default pointer mode.
        cublasLtMatmul = "cublasLtMatmul": fn(
            lightHandle: cublasLtHandle_t,
            computeDesc: cublasLtMatmulDesc_t,
            alpha: *const c_void,
            A: *const c_void,
            Adesc: cublasLtMatrixLayout_t,
            B: *const c_void,
            Bdesc: cublasLtMatrixLayout_t,
            beta: *const c_void,
            C: *const c_void,
            Cdesc: cublasLtMatrixLayout_t,
            D: *mut c_void,
            Ddesc: cublasLtMatrixLayout_t,
            algo: *const cublasLtMatmulAlgo_t,
            workspace: *mut c_void,
            workspaceSizeInBytes: usize,
            stream: CUstream,
        ) -> cublasStatus_t;
    }
    optional {
        /// A static string describing a status.
        cublasLtGetStatusString = "cublasLtGetStatusString": fn(status: cublasStatus_t) -> *const c_char;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_layouts_match_the_header() {
        use cublasLtMatmulDescAttributes_t as A;
        assert_eq!(A::CUBLASLT_MATMUL_DESC_TRANSA.0, 3);
        assert_eq!(A::CUBLASLT_MATMUL_DESC_TRANSB.0, 4);
        assert_eq!(A::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER.0, 17);
        assert_eq!(A::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER.0, 18);
        assert_eq!(A::CUBLASLT_MATMUL_DESC_FAST_ACCUM.0, 25);
        assert_eq!(
            cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES.0,
            1
        );
        assert_eq!(std::mem::size_of::<cublasLtMatmulAlgo_t>(), 64);
        // algo (64) + size_t (8) + status (4) + float (4) + int[4] (16).
        assert_eq!(std::mem::size_of::<cublasLtMatmulHeuristicResult_t>(), 96);
        assert_eq!(CublasLt::REQUIRED_SYMBOLS.len(), 13);
        assert_eq!(CublasLt::REQUIRED_SYMBOLS[12], "cublasLtMatmul");
    }
}
