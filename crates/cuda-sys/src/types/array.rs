//! Arrays, textures and surfaces: formats, address and filter modes,
//! array and resource descriptors.

use super::*;

// ---------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------

c_enum! {
    /// `CUarray_format`: element formats of CUDA arrays.
    pub struct CUarray_format(c_int) {
        /// 8-bit unsigned integers.
        CU_AD_FORMAT_UNSIGNED_INT8 = 0x01,
        /// 16-bit unsigned integers.
        CU_AD_FORMAT_UNSIGNED_INT16 = 0x02,
        /// 32-bit unsigned integers.
        CU_AD_FORMAT_UNSIGNED_INT32 = 0x03,
        /// 8-bit signed integers.
        CU_AD_FORMAT_SIGNED_INT8 = 0x08,
        /// 16-bit signed integers.
        CU_AD_FORMAT_SIGNED_INT16 = 0x09,
        /// 32-bit signed integers.
        CU_AD_FORMAT_SIGNED_INT32 = 0x0a,
        /// 16-bit floats.
        CU_AD_FORMAT_HALF = 0x10,
        /// 32-bit floats.
        CU_AD_FORMAT_FLOAT = 0x20,
        /// 8-bit planar YUV, 4:2:0.
        CU_AD_FORMAT_NV12 = 0xb0,
        /// 1 channel, 8-bit unsigned normalized.
        CU_AD_FORMAT_UNORM_INT8X1 = 0xc0,
        /// 2 channels, 8-bit unsigned normalized.
        CU_AD_FORMAT_UNORM_INT8X2 = 0xc1,
        /// 4 channels, 8-bit unsigned normalized.
        CU_AD_FORMAT_UNORM_INT8X4 = 0xc2,
        /// 1 channel, 16-bit unsigned normalized.
        CU_AD_FORMAT_UNORM_INT16X1 = 0xc3,
        /// 2 channels, 16-bit unsigned normalized.
        CU_AD_FORMAT_UNORM_INT16X2 = 0xc4,
        /// 4 channels, 16-bit unsigned normalized.
        CU_AD_FORMAT_UNORM_INT16X4 = 0xc5,
        /// 1 channel, 8-bit signed normalized.
        CU_AD_FORMAT_SNORM_INT8X1 = 0xc6,
        /// 2 channels, 8-bit signed normalized.
        CU_AD_FORMAT_SNORM_INT8X2 = 0xc7,
        /// 4 channels, 8-bit signed normalized.
        CU_AD_FORMAT_SNORM_INT8X4 = 0xc8,
        /// 1 channel, 16-bit signed normalized.
        CU_AD_FORMAT_SNORM_INT16X1 = 0xc9,
        /// 2 channels, 16-bit signed normalized.
        CU_AD_FORMAT_SNORM_INT16X2 = 0xca,
        /// 4 channels, 16-bit signed normalized.
        CU_AD_FORMAT_SNORM_INT16X4 = 0xcb,
        /// BC1 block-compressed, 4 channels unsigned normalized.
        CU_AD_FORMAT_BC1_UNORM = 0x91,
        /// BC1 block-compressed, sRGB.
        CU_AD_FORMAT_BC1_UNORM_SRGB = 0x92,
        /// BC2 block-compressed, 4 channels unsigned normalized.
        CU_AD_FORMAT_BC2_UNORM = 0x93,
        /// BC2 block-compressed, sRGB.
        CU_AD_FORMAT_BC2_UNORM_SRGB = 0x94,
        /// BC3 block-compressed, 4 channels unsigned normalized.
        CU_AD_FORMAT_BC3_UNORM = 0x95,
        /// BC3 block-compressed, sRGB.
        CU_AD_FORMAT_BC3_UNORM_SRGB = 0x96,
        /// BC4 block-compressed, 1 channel unsigned normalized.
        CU_AD_FORMAT_BC4_UNORM = 0x97,
        /// BC4 block-compressed, 1 channel signed normalized.
        CU_AD_FORMAT_BC4_SNORM = 0x98,
        /// BC5 block-compressed, 2 channels unsigned normalized.
        CU_AD_FORMAT_BC5_UNORM = 0x99,
        /// BC5 block-compressed, 2 channels signed normalized.
        CU_AD_FORMAT_BC5_SNORM = 0x9a,
        /// BC6H block-compressed, 3 channels unsigned half-float.
        CU_AD_FORMAT_BC6H_UF16 = 0x9b,
        /// BC6H block-compressed, 3 channels signed half-float.
        CU_AD_FORMAT_BC6H_SF16 = 0x9c,
        /// BC7 block-compressed, 4 channels unsigned normalized.
        CU_AD_FORMAT_BC7_UNORM = 0x9d,
        /// BC7 block-compressed, sRGB.
        CU_AD_FORMAT_BC7_UNORM_SRGB = 0x9e,
        /// 10-bit planar YUV, 4:2:0.
        CU_AD_FORMAT_P010 = 0x9f,
        /// 16-bit planar YUV, 4:2:0.
        CU_AD_FORMAT_P016 = 0xa1,
        /// 8-bit planar YUV, 4:2:2.
        CU_AD_FORMAT_NV16 = 0xa2,
        /// 10-bit planar YUV, 4:2:2.
        CU_AD_FORMAT_P210 = 0xa3,
        /// 16-bit planar YUV, 4:2:2.
        CU_AD_FORMAT_P216 = 0xa4,
        /// 2 channels, 8-bit packed YUV, 4:2:2.
        CU_AD_FORMAT_YUY2 = 0xa5,
        /// 2 channels, 10-bit packed YUV, 4:2:2.
        CU_AD_FORMAT_Y210 = 0xa6,
        /// 2 channels, 16-bit packed YUV, 4:2:2.
        CU_AD_FORMAT_Y216 = 0xa7,
        /// 4 channels, 8-bit packed YUV, 4:4:4.
        CU_AD_FORMAT_AYUV = 0xa8,
        /// 10-bit packed YUV, 4:4:4.
        CU_AD_FORMAT_Y410 = 0xa9,
        /// 4 channels, 12-bit packed YUV, 4:4:4.
        CU_AD_FORMAT_Y416 = 0xb1,
        /// 3 channels, 8-bit planar YUV, 4:4:4.
        CU_AD_FORMAT_Y444_PLANAR8 = 0xb2,
        /// 3 channels, 10-bit planar YUV, 4:4:4.
        CU_AD_FORMAT_Y444_PLANAR10 = 0xb3,
        /// 3 channels, 8-bit semi-planar YUV, 4:4:4.
        CU_AD_FORMAT_YUV444_8bit_SemiPlanar = 0xb4,
        /// 3 channels, 16-bit semi-planar YUV, 4:4:4.
        CU_AD_FORMAT_YUV444_16bit_SemiPlanar = 0xb5,
        /// 4 channels, packed R10G10B10A2 unsigned normalized.
        CU_AD_FORMAT_UNORM_INT_101010_2 = 0x50,
        /// Largest value (forces a 32-bit enum).
        CU_AD_FORMAT_MAX = 0x7FFFFFFF,
    }
}

c_enum! {
    /// `CUaddress_mode`: texture addressing modes.
    pub struct CUaddress_mode(c_int) {
        /// Wrap around.
        CU_TR_ADDRESS_MODE_WRAP = 0,
        /// Clamp to the edge.
        CU_TR_ADDRESS_MODE_CLAMP = 1,
        /// Mirror.
        CU_TR_ADDRESS_MODE_MIRROR = 2,
        /// Use the border colour.
        CU_TR_ADDRESS_MODE_BORDER = 3,
    }
}

c_enum! {
    /// `CUfilter_mode`: texture filtering modes.
    pub struct CUfilter_mode(c_int) {
        /// Nearest point.
        CU_TR_FILTER_MODE_POINT = 0,
        /// Linear interpolation.
        CU_TR_FILTER_MODE_LINEAR = 1,
    }
}

c_enum! {
    /// `CUresourcetype`: kinds of resource behind a texture or surface object.
    pub struct CUresourcetype(c_int) {
        /// A CUDA array.
        CU_RESOURCE_TYPE_ARRAY = 0x00,
        /// A mipmapped CUDA array.
        CU_RESOURCE_TYPE_MIPMAPPED_ARRAY = 0x01,
        /// Linear device memory.
        CU_RESOURCE_TYPE_LINEAR = 0x02,
        /// Pitched 2D device memory.
        CU_RESOURCE_TYPE_PITCH2D = 0x03,
    }
}

c_enum! {
    /// `CUresourceViewFormat`: formats of a resource view.
    pub struct CUresourceViewFormat(c_int) {
        /// The underlying resource's format.
        CU_RES_VIEW_FORMAT_NONE = 0x00,
        /// 1 channel, 8-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_1X8 = 0x01,
        /// 2 channels, 8-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_2X8 = 0x02,
        /// 4 channels, 8-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_4X8 = 0x03,
        /// 1 channel, 8-bit signed.
        CU_RES_VIEW_FORMAT_SINT_1X8 = 0x04,
        /// 2 channels, 8-bit signed.
        CU_RES_VIEW_FORMAT_SINT_2X8 = 0x05,
        /// 4 channels, 8-bit signed.
        CU_RES_VIEW_FORMAT_SINT_4X8 = 0x06,
        /// 1 channel, 16-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_1X16 = 0x07,
        /// 2 channels, 16-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_2X16 = 0x08,
        /// 4 channels, 16-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_4X16 = 0x09,
        /// 1 channel, 16-bit signed.
        CU_RES_VIEW_FORMAT_SINT_1X16 = 0x0a,
        /// 2 channels, 16-bit signed.
        CU_RES_VIEW_FORMAT_SINT_2X16 = 0x0b,
        /// 4 channels, 16-bit signed.
        CU_RES_VIEW_FORMAT_SINT_4X16 = 0x0c,
        /// 1 channel, 32-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_1X32 = 0x0d,
        /// 2 channels, 32-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_2X32 = 0x0e,
        /// 4 channels, 32-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_4X32 = 0x0f,
        /// 1 channel, 32-bit signed.
        CU_RES_VIEW_FORMAT_SINT_1X32 = 0x10,
        /// 2 channels, 32-bit signed.
        CU_RES_VIEW_FORMAT_SINT_2X32 = 0x11,
        /// 4 channels, 32-bit signed.
        CU_RES_VIEW_FORMAT_SINT_4X32 = 0x12,
        /// 1 channel, 16-bit float.
        CU_RES_VIEW_FORMAT_FLOAT_1X16 = 0x13,
        /// 2 channels, 16-bit float.
        CU_RES_VIEW_FORMAT_FLOAT_2X16 = 0x14,
        /// 4 channels, 16-bit float.
        CU_RES_VIEW_FORMAT_FLOAT_4X16 = 0x15,
        /// 1 channel, 32-bit float.
        CU_RES_VIEW_FORMAT_FLOAT_1X32 = 0x16,
        /// 2 channels, 32-bit float.
        CU_RES_VIEW_FORMAT_FLOAT_2X32 = 0x17,
        /// 4 channels, 32-bit float.
        CU_RES_VIEW_FORMAT_FLOAT_4X32 = 0x18,
        /// BC1 block-compressed.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC1 = 0x19,
        /// BC2 block-compressed.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC2 = 0x1a,
        /// BC3 block-compressed.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC3 = 0x1b,
        /// BC4 block-compressed, unsigned.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC4 = 0x1c,
        /// BC4 block-compressed, signed.
        CU_RES_VIEW_FORMAT_SIGNED_BC4 = 0x1d,
        /// BC5 block-compressed, unsigned.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC5 = 0x1e,
        /// BC5 block-compressed, signed.
        CU_RES_VIEW_FORMAT_SIGNED_BC5 = 0x1f,
        /// BC6H block-compressed, unsigned half-float.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC6H = 0x20,
        /// BC6H block-compressed, signed half-float.
        CU_RES_VIEW_FORMAT_SIGNED_BC6H = 0x21,
        /// BC7 block-compressed.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC7 = 0x22,
    }
}

c_enum! {
    /// `CUarray_cubemap_face`: the faces of a cubemap, as layer indices.
    pub struct CUarray_cubemap_face(c_int) {
        /// +X face.
        CU_CUBEMAP_FACE_POSITIVE_X = 0x00,
        /// -X face.
        CU_CUBEMAP_FACE_NEGATIVE_X = 0x01,
        /// +Y face.
        CU_CUBEMAP_FACE_POSITIVE_Y = 0x02,
        /// -Y face.
        CU_CUBEMAP_FACE_NEGATIVE_Y = 0x03,
        /// +Z face.
        CU_CUBEMAP_FACE_POSITIVE_Z = 0x04,
        /// -Z face.
        CU_CUBEMAP_FACE_NEGATIVE_Z = 0x05,
    }
}

// ---------------------------------------------------------------------------
// Constants (`#define`)
// ---------------------------------------------------------------------------

/// `CUDA_ARRAY3D_LAYERED`: the array is layered; `Depth` counts layers.
pub const CUDA_ARRAY3D_LAYERED: c_uint = 0x01;
/// `CUDA_ARRAY3D_2DARRAY`: deprecated alias of `CUDA_ARRAY3D_LAYERED`.
pub const CUDA_ARRAY3D_2DARRAY: c_uint = 0x01;
/// `CUDA_ARRAY3D_SURFACE_LDST`: the array may be bound to a surface.
pub const CUDA_ARRAY3D_SURFACE_LDST: c_uint = 0x02;
/// `CUDA_ARRAY3D_CUBEMAP`: the array is a cubemap (six square faces, or layers of them).
pub const CUDA_ARRAY3D_CUBEMAP: c_uint = 0x04;
/// `CUDA_ARRAY3D_TEXTURE_GATHER`: the array supports texture gather.
pub const CUDA_ARRAY3D_TEXTURE_GATHER: c_uint = 0x08;
/// `CUDA_ARRAY3D_DEPTH_TEXTURE`: the array is a depth texture.
pub const CUDA_ARRAY3D_DEPTH_TEXTURE: c_uint = 0x10;
/// `CUDA_ARRAY3D_COLOR_ATTACHMENT`: the array may be a colour target of a graphics API.
pub const CUDA_ARRAY3D_COLOR_ATTACHMENT: c_uint = 0x20;
/// `CUDA_ARRAY3D_SPARSE`: the array is sparse.
pub const CUDA_ARRAY3D_SPARSE: c_uint = 0x40;
/// `CUDA_ARRAY3D_DEFERRED_MAPPING`: the array's memory is mapped later.
pub const CUDA_ARRAY3D_DEFERRED_MAPPING: c_uint = 0x80;
/// `CUDA_ARRAY3D_VIDEO_ENCODE_DECODE`: the array is used for hardware video encode/decode.
pub const CUDA_ARRAY3D_VIDEO_ENCODE_DECODE: c_uint = 0x100;

/// `CU_TRSA_OVERRIDE_FORMAT`: `cuTexRefSetArray` flag, take the format from the array.
pub const CU_TRSA_OVERRIDE_FORMAT: c_uint = 0x01;
/// `CU_TRSF_READ_AS_INTEGER`: texture flag, read integers as integers, not normalized floats.
pub const CU_TRSF_READ_AS_INTEGER: c_uint = 0x01;
/// `CU_TRSF_NORMALIZED_COORDINATES`: texture flag, coordinates are in [0, 1).
pub const CU_TRSF_NORMALIZED_COORDINATES: c_uint = 0x02;
/// `CU_TRSF_SRGB`: texture flag, convert sRGB to linear on read.
pub const CU_TRSF_SRGB: c_uint = 0x10;
/// `CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION`: texture flag, no trilinear filtering shortcuts.
pub const CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION: c_uint = 0x20;
/// `CU_TRSF_SEAMLESS_CUBEMAP`: texture flag, filter seamlessly across cubemap faces.
pub const CU_TRSF_SEAMLESS_CUBEMAP: c_uint = 0x40;

// ---------------------------------------------------------------------------
// Structs
// ---------------------------------------------------------------------------

/// `CUDA_ARRAY_DESCRIPTOR` (`CUDA_ARRAY_DESCRIPTOR_v2`): shape and format of a 1D or 2D array.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_ARRAY_DESCRIPTOR {
    /// Width in elements.
    pub Width: usize,
    /// Height in elements.
    pub Height: usize,
    /// Element format.
    pub Format: CUarray_format,
    /// Channels per element.
    pub NumChannels: c_uint,
}
/// `CUDA_ARRAY_DESCRIPTOR_v2`: see [`CUDA_ARRAY_DESCRIPTOR`].
pub type CUDA_ARRAY_DESCRIPTOR_v2 = CUDA_ARRAY_DESCRIPTOR;
assert_layout!(
    CUDA_ARRAY_DESCRIPTOR,
    size = 24,
    align = 8,
    Format = 16,
    NumChannels = 20
);

/// `CUDA_ARRAY3D_DESCRIPTOR` (`CUDA_ARRAY3D_DESCRIPTOR_v2`): shape, format and flags of an array.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_ARRAY3D_DESCRIPTOR {
    /// Width in elements.
    pub Width: usize,
    /// Height in elements.
    pub Height: usize,
    /// Depth in elements (or layers, with `CUDA_ARRAY3D_LAYERED`).
    pub Depth: usize,
    /// Element format.
    pub Format: CUarray_format,
    /// Channels per element.
    pub NumChannels: c_uint,
    /// `CUDA_ARRAY3D_*` flags.
    pub Flags: c_uint,
}
/// `CUDA_ARRAY3D_DESCRIPTOR_v2`: see [`CUDA_ARRAY3D_DESCRIPTOR`].
pub type CUDA_ARRAY3D_DESCRIPTOR_v2 = CUDA_ARRAY3D_DESCRIPTOR;
assert_layout!(
    CUDA_ARRAY3D_DESCRIPTOR,
    size = 40,
    align = 8,
    Format = 24,
    NumChannels = 28,
    Flags = 32
);

/// The unnamed struct `res.array` of [`CUDA_RESOURCE_DESC`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_RESOURCE_DESC_res_array {
    /// The CUDA array.
    pub hArray: CUarray,
}

/// The unnamed struct `res.mipmap` of [`CUDA_RESOURCE_DESC`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_RESOURCE_DESC_res_mipmap {
    /// The mipmapped CUDA array.
    pub hMipmappedArray: CUmipmappedArray,
}

/// The unnamed struct `res.linear` of [`CUDA_RESOURCE_DESC`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_RESOURCE_DESC_res_linear {
    /// Device address of the memory.
    pub devPtr: CUdeviceptr,
    /// Element format.
    pub format: CUarray_format,
    /// Channels per element.
    pub numChannels: c_uint,
    /// Size in bytes.
    pub sizeInBytes: usize,
}
assert_layout!(
    CUDA_RESOURCE_DESC_res_linear,
    size = 24,
    align = 8,
    format = 8,
    numChannels = 12,
    sizeInBytes = 16
);

/// The unnamed struct `res.pitch2D` of [`CUDA_RESOURCE_DESC`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_RESOURCE_DESC_res_pitch2D {
    /// Device address of the memory.
    pub devPtr: CUdeviceptr,
    /// Element format.
    pub format: CUarray_format,
    /// Channels per element.
    pub numChannels: c_uint,
    /// Width in elements.
    pub width: usize,
    /// Height in elements.
    pub height: usize,
    /// Bytes from one row to the next.
    pub pitchInBytes: usize,
}
assert_layout!(
    CUDA_RESOURCE_DESC_res_pitch2D,
    size = 40,
    align = 8,
    width = 16,
    pitchInBytes = 32
);

/// The unnamed struct `res.reserved` of [`CUDA_RESOURCE_DESC`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_RESOURCE_DESC_res_reserved {
    /// Unused.
    pub reserved: [c_int; 32],
}

/// The unnamed union `res` of [`CUDA_RESOURCE_DESC`]; `resType` says which member is live.
#[repr(C)]
#[derive(Clone, Copy)]
pub union CUDA_RESOURCE_DESC_res {
    /// For `CU_RESOURCE_TYPE_ARRAY`.
    pub array: CUDA_RESOURCE_DESC_res_array,
    /// For `CU_RESOURCE_TYPE_MIPMAPPED_ARRAY`.
    pub mipmap: CUDA_RESOURCE_DESC_res_mipmap,
    /// For `CU_RESOURCE_TYPE_LINEAR`.
    pub linear: CUDA_RESOURCE_DESC_res_linear,
    /// For `CU_RESOURCE_TYPE_PITCH2D`.
    pub pitch2D: CUDA_RESOURCE_DESC_res_pitch2D,
    /// Sizes the union to 128 bytes.
    pub reserved: CUDA_RESOURCE_DESC_res_reserved,
}
assert_layout!(CUDA_RESOURCE_DESC_res, size = 128, align = 8);

impl std::fmt::Debug for CUDA_RESOURCE_DESC_res {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The live member is named by the enclosing `resType`; read none.
        f.debug_struct("CUDA_RESOURCE_DESC_res")
            .finish_non_exhaustive()
    }
}

/// `CUDA_RESOURCE_DESC` (`_v1`): the resource behind a texture or surface object.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_RESOURCE_DESC {
    /// The kind of resource, naming the live member of `res`.
    pub resType: CUresourcetype,
    /// The resource.
    pub res: CUDA_RESOURCE_DESC_res,
    /// Must be zero.
    pub flags: c_uint,
}
/// `CUDA_RESOURCE_DESC_v1`: see [`CUDA_RESOURCE_DESC`].
pub type CUDA_RESOURCE_DESC_v1 = CUDA_RESOURCE_DESC;
assert_layout!(
    CUDA_RESOURCE_DESC,
    size = 144,
    align = 8,
    res = 8,
    flags = 136
);

/// `CUDA_TEXTURE_DESC` (`_v1`): how a texture object samples.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_TEXTURE_DESC {
    /// Addressing mode of each dimension.
    pub addressMode: [CUaddress_mode; 3],
    /// Filtering mode.
    pub filterMode: CUfilter_mode,
    /// `CU_TRSF_*` flags.
    pub flags: c_uint,
    /// Largest anisotropy ratio.
    pub maxAnisotropy: c_uint,
    /// Filtering between mipmap levels.
    pub mipmapFilterMode: CUfilter_mode,
    /// Bias added to the mipmap level.
    pub mipmapLevelBias: f32,
    /// Lowest mipmap level to clamp to.
    pub minMipmapLevelClamp: f32,
    /// Highest mipmap level to clamp to.
    pub maxMipmapLevelClamp: f32,
    /// Border colour (RGBA).
    pub borderColor: [f32; 4],
    /// Must be zero.
    pub reserved: [c_int; 12],
}
/// `CUDA_TEXTURE_DESC_v1`: see [`CUDA_TEXTURE_DESC`].
pub type CUDA_TEXTURE_DESC_v1 = CUDA_TEXTURE_DESC;
assert_layout!(
    CUDA_TEXTURE_DESC,
    size = 104,
    align = 4,
    filterMode = 12,
    mipmapLevelBias = 28,
    borderColor = 40,
    reserved = 56
);

/// `CUDA_RESOURCE_VIEW_DESC` (`_v1`): a view of a resource with another format or range.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_RESOURCE_VIEW_DESC {
    /// The view's format.
    pub format: CUresourceViewFormat,
    /// Width of the view.
    pub width: usize,
    /// Height of the view.
    pub height: usize,
    /// Depth of the view.
    pub depth: usize,
    /// First mipmap level in the view.
    pub firstMipmapLevel: c_uint,
    /// Last mipmap level in the view.
    pub lastMipmapLevel: c_uint,
    /// First layer in the view.
    pub firstLayer: c_uint,
    /// Last layer in the view.
    pub lastLayer: c_uint,
    /// Must be zero.
    pub reserved: [c_uint; 16],
}
/// `CUDA_RESOURCE_VIEW_DESC_v1`: see [`CUDA_RESOURCE_VIEW_DESC`].
pub type CUDA_RESOURCE_VIEW_DESC_v1 = CUDA_RESOURCE_VIEW_DESC;
assert_layout!(
    CUDA_RESOURCE_VIEW_DESC,
    size = 112,
    align = 8,
    width = 8,
    firstMipmapLevel = 32,
    reserved = 48
);

zeroed_default!(
    CUDA_RESOURCE_DESC_res_array,
    CUDA_RESOURCE_DESC_res_mipmap,
    CUDA_RESOURCE_DESC_res_linear,
    CUDA_RESOURCE_DESC_res_pitch2D,
    CUDA_RESOURCE_DESC_res_reserved,
    CUDA_RESOURCE_DESC_res,
    CUDA_RESOURCE_DESC,
);
