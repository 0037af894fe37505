//! Tensor maps (`CUtensorMap`): the descriptors of the Tensor Memory
//! Accelerator (TMA, sm_90 and newer), made by `cuTensorMapEncodeTiled` and
//! `cuTensorMapEncodeIm2col`, and passed to kernels by value as
//! `const __grid_constant__ CUtensorMap`.

use super::*;

/// `CU_TENSOR_MAP_NUM_QWORDS`: the descriptor's size in 64-bit words.
pub const CU_TENSOR_MAP_NUM_QWORDS: usize = 16;

/// `CUtensorMap`: an opaque 128-byte descriptor, aligned to 128 bytes as
/// CUDA 13.0's header declares it (`cuTensorMapEncodeTiled` itself needs
/// 64).
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CUtensorMap {
    /// The descriptor's words; only CUDA APIs and PTX read them.
    pub opaque: [u64; CU_TENSOR_MAP_NUM_QWORDS],
}

assert_layout!(CUtensorMap, size = 128, align = 128);

impl Default for CUtensorMap {
    fn default() -> Self {
        CUtensorMap {
            opaque: [0; CU_TENSOR_MAP_NUM_QWORDS],
        }
    }
}

c_enum! {
    /// `CUtensorMapDataType`: the element type a tensor map describes.
    pub struct CUtensorMapDataType(c_int) {
        /// 1 byte.
        CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0,
        /// 2 bytes.
        CU_TENSOR_MAP_DATA_TYPE_UINT16 = 1,
        /// 4 bytes.
        CU_TENSOR_MAP_DATA_TYPE_UINT32 = 2,
        /// 4 bytes.
        CU_TENSOR_MAP_DATA_TYPE_INT32 = 3,
        /// 8 bytes.
        CU_TENSOR_MAP_DATA_TYPE_UINT64 = 4,
        /// 8 bytes.
        CU_TENSOR_MAP_DATA_TYPE_INT64 = 5,
        /// 2 bytes.
        CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6,
        /// 4 bytes.
        CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7,
        /// 8 bytes.
        CU_TENSOR_MAP_DATA_TYPE_FLOAT64 = 8,
        /// 2 bytes.
        CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9,
        /// 4 bytes, subnormals flushed.
        CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ = 10,
        /// 4 bytes, read as tf32.
        CU_TENSOR_MAP_DATA_TYPE_TFLOAT32 = 11,
        /// 4 bytes, tf32 with subnormals flushed.
        CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ = 12,
        /// 16 packed 4-bit values, 8-byte aligned.
        CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B = 13,
        /// 16 packed 4-bit values, 16-byte aligned.
        CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B = 14,
        /// 16 packed 6-bit values, 16-byte aligned.
        CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B = 15,
    }
}

c_enum! {
    /// `CUtensorMapInterleave`: an interleaved layout (NC/8HWC8, ...).
    pub struct CUtensorMapInterleave(c_int) {
        /// None.
        CU_TENSOR_MAP_INTERLEAVE_NONE = 0,
        /// 16-byte interleave.
        CU_TENSOR_MAP_INTERLEAVE_16B = 1,
        /// 32-byte interleave.
        CU_TENSOR_MAP_INTERLEAVE_32B = 2,
    }
}

c_enum! {
    /// `CUtensorMapSwizzle`: the shared-memory bank swizzle of a box.
    pub struct CUtensorMapSwizzle(c_int) {
        /// None.
        CU_TENSOR_MAP_SWIZZLE_NONE = 0,
        /// 16-byte chunks within a 32-byte span.
        CU_TENSOR_MAP_SWIZZLE_32B = 1,
        /// 16-byte chunks within a 64-byte span.
        CU_TENSOR_MAP_SWIZZLE_64B = 2,
        /// 16-byte chunks within a 128-byte span.
        CU_TENSOR_MAP_SWIZZLE_128B = 3,
        /// 32-byte chunks within a 128-byte span.
        CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B = 4,
        /// As above, lower and upper 8 bytes swapped on alternate rows.
        CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B = 5,
        /// 64-byte chunks within a 128-byte span.
        CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B = 6,
    }
}

c_enum! {
    /// `CUtensorMapL2promotion`: the L2 fetch granularity.
    pub struct CUtensorMapL2promotion(c_int) {
        /// None.
        CU_TENSOR_MAP_L2_PROMOTION_NONE = 0,
        /// 64 bytes.
        CU_TENSOR_MAP_L2_PROMOTION_L2_64B = 1,
        /// 128 bytes.
        CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2,
        /// 256 bytes.
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B = 3,
    }
}

c_enum! {
    /// `CUtensorMapFloatOOBfill`: what out-of-bounds elements read as.
    pub struct CUtensorMapFloatOOBfill(c_int) {
        /// Zero.
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0,
        /// A NaN that makes FMAs produce zero (floating-point types only).
        CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA = 1,
    }
}
