//! cuBLAS, written by hand from cuBLAS 13's `cublas_api.h` and `cublas_v2.h`
//! (and `library_types.h` for `cudaDataType`): the status code, the handle,
//! the enums a GEMM takes, and the table of the few entry points the
//! matrix-multiply comparison uses (`cublasGemmEx` and what it needs).
//!
//! cuBLAS is optional: nothing in cuda-sys or cudakit needs it. It is used
//! only by the hardware suite and `cudakit matmul`, to measure cuBLAS in the
//! same run as cudakit's kernels. It is opened at run time like libcuda (see
//! [`crate::loader`]: `CUDAKIT_LIBCUBLAS`, then the soname `libcublas.so.13`,
//! then the toolkit folders, then pip's `nvidia/cu13/lib` and
//! `nvidia/cublas/lib`). `libcublas.so.13` needs `libcublasLt.so.13`, which
//! it finds beside itself (its RPATH is `$ORIGIN`).
//!
//! The `_v2` entry points are the ones `cublas_v2.h` maps the API names to
//! (`#define cublasCreate cublasCreate_v2`); `cublasGemmEx` and
//! `cublasSetMathMode` have no suffix. `cudaStream_t` is the driver's
//! `CUstream`.

use std::ffi::{c_char, c_int, c_void};

use crate::table::function_table;
use crate::types::c_enum;
use crate::CUstream;

c_enum! {
    /// `cublasStatus_t`: the status every cuBLAS entry point returns.
    #[must_use]
    pub struct cublasStatus_t(c_int) {
        /// The call succeeded.
        CUBLAS_STATUS_SUCCESS = 0,
        /// The library was not initialized (no handle, or the CUDA runtime
        /// could not start).
        CUBLAS_STATUS_NOT_INITIALIZED = 1,
        /// A resource allocation failed.
        CUBLAS_STATUS_ALLOC_FAILED = 3,
        /// An unsupported value or parameter was passed.
        CUBLAS_STATUS_INVALID_VALUE = 7,
        /// The function needs a feature the device lacks.
        CUBLAS_STATUS_ARCH_MISMATCH = 8,
        /// Access to GPU memory space failed.
        CUBLAS_STATUS_MAPPING_ERROR = 11,
        /// The GPU program failed to execute.
        CUBLAS_STATUS_EXECUTION_FAILED = 13,
        /// An internal cuBLAS operation failed.
        CUBLAS_STATUS_INTERNAL_ERROR = 14,
        /// The functionality requested is not supported.
        CUBLAS_STATUS_NOT_SUPPORTED = 15,
        /// A license check failed.
        CUBLAS_STATUS_LICENSE_ERROR = 16,
    }
}

c_enum! {
    /// `cublasOperation_t`: how an operand is used (column-major).
    pub struct cublasOperation_t(c_int) {
        /// As stored.
        CUBLAS_OP_N = 0,
        /// Transposed.
        CUBLAS_OP_T = 1,
        /// Conjugate-transposed.
        CUBLAS_OP_C = 2,
    }
}

c_enum! {
    /// `cublasMath_t`: the handle's math mode (flags may be or-ed in).
    pub struct cublasMath_t(c_int) {
        /// The default: no down-conversion of f32 inputs (no TF32).
        CUBLAS_DEFAULT_MATH = 0,
        /// Deprecated: same as `CUBLAS_COMPUTE_32F_FAST_16F`.
        CUBLAS_TENSOR_OP_MATH = 1,
        /// Like the `_PEDANTIC` compute types.
        CUBLAS_PEDANTIC_MATH = 2,
        /// f32 routines may use TF32 tensor cores.
        CUBLAS_TF32_TENSOR_OP_MATH = 3,
        /// f32 routines may use the BF16x9 emulation.
        CUBLAS_FP32_EMULATED_BF16X9_MATH = 4,
        /// f64 routines may use fixed-point emulation.
        CUBLAS_FP64_EMULATED_FIXEDPOINT_MATH = 8,
        /// Reductions use the accumulator type, not a narrower output type.
        CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION = 16,
    }
}

c_enum! {
    /// `cublasComputeType_t`: the precision a GEMM computes in.
    pub struct cublasComputeType_t(c_int) {
        /// Half.
        CUBLAS_COMPUTE_16F = 64,
        /// Half, pedantic.
        CUBLAS_COMPUTE_16F_PEDANTIC = 65,
        /// Float.
        CUBLAS_COMPUTE_32F = 68,
        /// Float, pedantic.
        CUBLAS_COMPUTE_32F_PEDANTIC = 69,
        /// Float, inputs may be down-converted to half or TF32.
        CUBLAS_COMPUTE_32F_FAST_16F = 74,
        /// Float, inputs may be down-converted to bfloat16 or TF32.
        CUBLAS_COMPUTE_32F_FAST_16BF = 75,
        /// Float, inputs may be down-converted to TF32.
        CUBLAS_COMPUTE_32F_FAST_TF32 = 77,
        /// Float, emulated with three bfloat16 values per input.
        CUBLAS_COMPUTE_32F_EMULATED_16BFX9 = 78,
        /// Double.
        CUBLAS_COMPUTE_64F = 70,
        /// Double, pedantic.
        CUBLAS_COMPUTE_64F_PEDANTIC = 71,
        /// Double, emulated in fixed point.
        CUBLAS_COMPUTE_64F_EMULATED_FIXEDPOINT = 79,
        /// Signed 32-bit integer.
        CUBLAS_COMPUTE_32I = 72,
        /// Signed 32-bit integer, pedantic.
        CUBLAS_COMPUTE_32I_PEDANTIC = 73,
    }
}

c_enum! {
    /// `cudaDataType` (`library_types.h`): the element types a GEMM takes
    /// (only the real types a GEMM comparison uses).
    pub struct cudaDataType(c_int) {
        /// `float`.
        CUDA_R_32F = 0,
        /// `double`.
        CUDA_R_64F = 1,
        /// IEEE half.
        CUDA_R_16F = 2,
        /// bfloat16.
        CUDA_R_16BF = 14,
        /// OCP FP8 E4M3 (`nv_fp8_e4m3`).
        CUDA_R_8F_E4M3 = 28,
        /// OCP FP8 E5M2 (`nv_fp8_e5m2`).
        CUDA_R_8F_E5M2 = 29,
    }
}

c_enum! {
    /// `cublasGemmAlgo_t`: the GEMM algorithm (only the default is used).
    pub struct cublasGemmAlgo_t(c_int) {
        /// cuBLAS's heuristic choice (`CUBLAS_GEMM_DFALT` is the same value).
        CUBLAS_GEMM_DEFAULT = -1,
    }
}

/// The struct `cublasHandle_t` points to (`struct cublasContext`); only
/// ever handled by pointer.
#[repr(C)]
#[derive(Debug)]
pub struct cublasContext {
    _private: [u8; 0],
}

/// `cublasHandle_t`: an opaque handle to a cuBLAS context.
pub type cublasHandle_t = *mut cublasContext;

function_table! {
    /// Entry points of libcublas used by the GEMM comparison. Obtain the
    /// process's table with [`cublas()`](crate::cublas()), or open a specific
    /// library with [`Cublas::load_from`].
    ///
    /// Every entry is exported by cuBLAS 11 and later.
    pub struct Cublas;
    library = "libcublas";
    header = "cublas_api.h";
    search = Cublas;
    required {
        /// Creates a handle on the current device (and its primary context).
        cublasCreate = "cublasCreate_v2": fn(handle: *mut cublasHandle_t) -> cublasStatus_t;
        /// Destroys a handle.
        cublasDestroy = "cublasDestroy_v2": fn(handle: cublasHandle_t) -> cublasStatus_t;
        /// Writes the library's version (`CUBLAS_VERSION`: major·10000 + minor·100 + patch).
        cublasGetVersion = "cublasGetVersion_v2": fn(handle: cublasHandle_t, version: *mut c_int) -> cublasStatus_t;
        /// Sets the stream later calls of the handle run on.
        cublasSetStream = "cublasSetStream_v2": fn(handle: cublasHandle_t, streamId: CUstream) -> cublasStatus_t;
        /// Sets the handle's math mode.
        cublasSetMathMode = "cublasSetMathMode": fn(handle: cublasHandle_t, mode: cublasMath_t) -> cublasStatus_t;
        /// `C = alpha op(A) op(B) + beta C`, column-major, with the element
        /// types and compute type given; alpha and beta point to host values
        /// of the compute type's scalar (float for the `32F` types, double
        /// for `64F`) in the default pointer mode.
        cublasGemmEx = "cublasGemmEx": fn(
            handle: cublasHandle_t,
            transa: cublasOperation_t,
            transb: cublasOperation_t,
            m: c_int,
            n: c_int,
            k: c_int,
            alpha: *const c_void,
            A: *const c_void,
            Atype: cudaDataType,
            lda: c_int,
            B: *const c_void,
            Btype: cudaDataType,
            ldb: c_int,
            beta: *const c_void,
            C: *mut c_void,
            Ctype: cudaDataType,
            ldc: c_int,
            computeType: cublasComputeType_t,
            algo: cublasGemmAlgo_t,
        ) -> cublasStatus_t;
    }
    optional {
        /// A static string describing a status (cuBLAS 11.4.2).
        cublasGetStatusString = "cublasGetStatusString": fn(status: cublasStatus_t) -> *const c_char;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_match_the_header() {
        assert_eq!(cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED.0, 15);
        assert_eq!(cublasComputeType_t::CUBLAS_COMPUTE_32F.0, 68);
        assert_eq!(cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32.0, 77);
        assert_eq!(cublasComputeType_t::CUBLAS_COMPUTE_64F.0, 70);
        assert_eq!(cudaDataType::CUDA_R_16BF.0, 14);
        assert_eq!(cudaDataType::CUDA_R_8F_E4M3.0, 28);
        assert_eq!(cudaDataType::CUDA_R_8F_E5M2.0, 29);
        assert_eq!(cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT.0, -1);
        assert_eq!(cublasMath_t::CUBLAS_DEFAULT_MATH.0, 0);
        assert_eq!(
            Cublas::REQUIRED_SYMBOLS,
            [
                "cublasCreate_v2",
                "cublasDestroy_v2",
                "cublasGetVersion_v2",
                "cublasSetStream_v2",
                "cublasSetMathMode",
                "cublasGemmEx"
            ]
        );
    }
}
