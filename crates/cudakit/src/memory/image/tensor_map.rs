//! Tensor maps for the Tensor Memory Accelerator (TMA, sm_90 and newer):
//! `cuTensorMapEncodeTiled` behind a type that checks every rule of the
//! driver's documentation before the call, and that keeps the memory it
//! describes borrowed for as long as the map exists.
//!
//! A [`TensorMap`] is passed to a kernel by value (a 128-byte,
//! 128-byte-aligned `const __grid_constant__ CUtensorMap` parameter) with
//! `params![&map, ...]`; the launch checks its context like a buffer's.
//! Its descriptor bytes ([`TensorMap::descriptor`]) are not an argument
//! ([`TensorMapDescriptor`]); the raw bytes are the documented `unsafe`
//! escape. The
//! map borrows the memory the way a writer does (`&DeviceBuffer`,
//! [`DeviceView`](crate::DeviceView) or `&mut UnifiedBuffer`), since a
//! kernel may store through it with `cp.async.bulk.tensor`.
//!
//! Beyond the driver's rules, the map must lie inside the memory it
//! borrows: the last element it can address, `Σ (dims[i] − 1) ·
//! strides[i]` bytes past the start plus one element, is within the
//! buffer. TMA fills coordinates outside `dims` itself (with zeros, or the
//! NaN of [`OobFill::NanRequestZeroFma`]) and never reads them.

use std::marker::PhantomData;

use cuda_sys::{
    CUtensorMap, CUtensorMapDataType as D, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
    CUtensorMapL2promotion, CUtensorMapSwizzle,
};

use crate::context::Context;
use crate::driver::optional;
use crate::error::{Error, Result};
use crate::memory::{DeviceCopy, DeviceDst};

/// The element type of a tensor map; its size must equal the buffer's
/// element size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TensorDataType {
    /// `u8`.
    U8,
    /// `u16`.
    U16,
    /// `u32`.
    U32,
    /// `i32`.
    I32,
    /// `u64`.
    U64,
    /// `i64`.
    I64,
    /// IEEE half ([`F16`](crate::F16)).
    F16,
    /// `f32`.
    F32,
    /// `f64`.
    F64,
    /// bfloat16 ([`Bf16`](crate::Bf16)).
    Bf16,
    /// `f32`, subnormals flushed to zero.
    F32Ftz,
    /// `f32` read as tf32.
    Tf32,
    /// `f32` read as tf32, subnormals flushed to zero.
    Tf32Ftz,
}

impl TensorDataType {
    fn raw(self) -> D {
        match self {
            TensorDataType::U8 => D::CU_TENSOR_MAP_DATA_TYPE_UINT8,
            TensorDataType::U16 => D::CU_TENSOR_MAP_DATA_TYPE_UINT16,
            TensorDataType::U32 => D::CU_TENSOR_MAP_DATA_TYPE_UINT32,
            TensorDataType::I32 => D::CU_TENSOR_MAP_DATA_TYPE_INT32,
            TensorDataType::U64 => D::CU_TENSOR_MAP_DATA_TYPE_UINT64,
            TensorDataType::I64 => D::CU_TENSOR_MAP_DATA_TYPE_INT64,
            TensorDataType::F16 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            TensorDataType::F32 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            TensorDataType::F64 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
            TensorDataType::Bf16 => D::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            TensorDataType::F32Ftz => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ,
            TensorDataType::Tf32 => D::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
            TensorDataType::Tf32Ftz => D::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ,
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            TensorDataType::U8 => 1,
            TensorDataType::U16 | TensorDataType::F16 | TensorDataType::Bf16 => 2,
            TensorDataType::U64 | TensorDataType::I64 | TensorDataType::F64 => 8,
            _ => 4,
        }
    }

    fn is_float(self) -> bool {
        !matches!(
            self,
            TensorDataType::U8
                | TensorDataType::U16
                | TensorDataType::U32
                | TensorDataType::I32
                | TensorDataType::U64
                | TensorDataType::I64
        )
    }
}

/// Interleaved layouts (`CUtensorMapInterleave`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Interleave {
    /// None (the usual case).
    #[default]
    None,
    /// 16 bytes (NC/8HWC8 for 2-byte channels).
    B16,
    /// 32 bytes (NC/16HWC16 for 2-byte channels).
    B32,
}

/// The shared-memory swizzle of a box (`CUtensorMapSwizzle`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Swizzle {
    /// None.
    #[default]
    None,
    /// 16-byte chunks within a 32-byte span.
    B32,
    /// 16-byte chunks within a 64-byte span.
    B64,
    /// 16-byte chunks within a 128-byte span (what wgmma's 128-byte
    /// swizzled layouts expect).
    B128,
}

impl Swizzle {
    fn span(self) -> Option<usize> {
        match self {
            Swizzle::None => None,
            Swizzle::B32 => Some(32),
            Swizzle::B64 => Some(64),
            Swizzle::B128 => Some(128),
        }
    }
}

/// L2 fetch granularity (`CUtensorMapL2promotion`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum L2Promotion {
    /// None.
    #[default]
    None,
    /// 64 bytes.
    B64,
    /// 128 bytes.
    B128,
    /// 256 bytes.
    B256,
}

/// What out-of-bounds elements read as (`CUtensorMapFloatOOBfill`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum OobFill {
    /// Zeros.
    #[default]
    Zero,
    /// A NaN that makes FMAs produce zero (floating-point types only).
    NanRequestZeroFma,
}

/// The layout of a tiled tensor map: dimensions innermost first, as the
/// driver takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TiledLayout {
    /// Element type.
    pub data_type: TensorDataType,
    /// Elements along each dimension, innermost first (rank 1 to 5).
    pub dims: Vec<u64>,
    /// Bytes between consecutive indices of dimensions 1.. (rank − 1
    /// entries; dimension 0 is contiguous).
    pub strides: Vec<u64>,
    /// The box (tile) a copy moves, in elements per dimension (1 to 256).
    pub box_dims: Vec<u32>,
    /// Traversal strides per dimension (1 to 8); all 1 for a dense box.
    pub element_strides: Vec<u32>,
    /// Interleaved layout.
    pub interleave: Interleave,
    /// Shared-memory swizzle.
    pub swizzle: Swizzle,
    /// L2 promotion.
    pub l2_promotion: L2Promotion,
    /// Out-of-bounds fill.
    pub oob_fill: OobFill,
}

impl TiledLayout {
    /// A dense row-major matrix of `rows` × `cols` elements (`cols`
    /// contiguous, rows `row_stride_elems` apart) moved in boxes of
    /// `box_rows` × `box_cols`, without swizzle.
    pub fn matrix(
        data_type: TensorDataType,
        rows: u64,
        cols: u64,
        row_stride_elems: u64,
        box_rows: u32,
        box_cols: u32,
    ) -> TiledLayout {
        TiledLayout {
            data_type,
            dims: vec![cols, rows],
            strides: vec![row_stride_elems.saturating_mul(data_type.size() as u64)],
            box_dims: vec![box_cols, box_rows],
            element_strides: vec![1, 1],
            interleave: Interleave::None,
            swizzle: Swizzle::None,
            l2_promotion: L2Promotion::None,
            oob_fill: OobFill::Zero,
        }
    }

    /// With a swizzle.
    pub fn swizzle(mut self, swizzle: Swizzle) -> TiledLayout {
        self.swizzle = swizzle;
        self
    }

    /// With an L2 promotion.
    pub fn l2_promotion(mut self, l2: L2Promotion) -> TiledLayout {
        self.l2_promotion = l2;
        self
    }

    /// Checks every rule of `cuTensorMapEncodeTiled` that cudakit can see,
    /// and that the map stays inside `bytes` bytes at `address`.
    fn check(&self, address: u64, bytes: usize, elem_size: usize) -> Result<()> {
        let bad = |reason: String| Err(Error::TensorMap { reason });
        let esize = self.data_type.size();
        if esize != elem_size {
            return bad(format!(
                "data type {:?} has {esize}-byte elements, the buffer's are {elem_size} bytes",
                self.data_type
            ));
        }
        let rank = self.dims.len();
        if !(1..=5).contains(&rank) {
            return bad(format!("rank {rank}: must be 1 to 5"));
        }
        if self.interleave != Interleave::None && rank < 3 {
            return bad(format!(
                "rank {rank}: an interleaved layout needs rank 3 or more"
            ));
        }
        if self.strides.len() != rank - 1
            || self.box_dims.len() != rank
            || self.element_strides.len() != rank
        {
            return bad(format!(
                "rank {rank} needs {} strides, {rank} box dimensions and {rank} element strides; \
                 got {}, {} and {}",
                rank - 1,
                self.strides.len(),
                self.box_dims.len(),
                self.element_strides.len()
            ));
        }
        let align = if self.interleave == Interleave::B32 {
            32
        } else {
            16
        };
        if address % align != 0 {
            return bad(format!(
                "the start address {address:#x} is not {align}-byte aligned"
            ));
        }
        for (i, &d) in self.dims.iter().enumerate() {
            if d == 0 || d > 1 << 32 {
                return bad(format!("dims[{i}] = {d}: must be 1 to 2^32"));
            }
        }
        for (i, &s) in self.strides.iter().enumerate() {
            if s % align != 0 || s >= 1 << 40 {
                return bad(format!(
                    "strides[{i}] = {s} bytes: must be a multiple of {align} and below 2^40"
                ));
            }
        }
        // Dimension i+1's stride covers dimension i's extent: no two
        // indices alias.
        let mut extent = self.dims[0] * esize as u64;
        for (i, &s) in self.strides.iter().enumerate() {
            if s < extent {
                return bad(format!(
                    "strides[{i}] = {s} bytes is less than the {extent} bytes dimension {i} spans"
                ));
            }
            extent = s.saturating_mul(self.dims[i + 1]);
        }
        for (i, &b) in self.box_dims.iter().enumerate() {
            if b == 0 || b > 256 {
                return bad(format!("box_dims[{i}] = {b}: must be 1 to 256"));
            }
        }
        let inner = self.box_dims[0] as usize * esize;
        if self.interleave == Interleave::None && inner % 16 != 0 {
            return bad(format!(
                "the box's inner dimension is {inner} bytes: it must be a multiple of 16"
            ));
        }
        if self.interleave == Interleave::None {
            if let Some(span) = self.swizzle.span() {
                if inner > span {
                    return bad(format!(
                        "the box's inner dimension is {inner} bytes, more than the {span}-byte \
                         swizzle span"
                    ));
                }
            }
        }
        if self.interleave == Interleave::B32 && self.swizzle != Swizzle::B32 {
            return bad("a 32-byte interleave needs the 32-byte swizzle".to_owned());
        }
        for (i, &e) in self.element_strides.iter().enumerate() {
            if !(1..=8).contains(&e) {
                return bad(format!("element_strides[{i}] = {e}: must be 1 to 8"));
            }
        }
        if self.oob_fill == OobFill::NanRequestZeroFma && !self.data_type.is_float() {
            return bad(format!(
                "the NaN out-of-bounds fill needs a floating-point type, not {:?}",
                self.data_type
            ));
        }
        // The farthest byte the map can address lies inside the buffer.
        let mut last = 0u128;
        last += u128::from(self.dims[0] - 1) * esize as u128;
        for (i, &s) in self.strides.iter().enumerate() {
            last += u128::from(self.dims[i + 1] - 1) * u128::from(s);
        }
        let end = last + esize as u128;
        if end > bytes as u128 {
            return bad(format!(
                "the map reaches {end} bytes past its start, but the memory holds {bytes}"
            ));
        }
        Ok(())
    }
}

/// A tensor map's 128 descriptor bytes (`CUtensorMap`), as
/// [`TensorMap::descriptor`] hands them out.
///
/// They are deliberately neither [`DeviceCopy`] nor a
/// [`KernelArg`](crate::work::launch::KernelArg), so they cannot be passed
/// to a kernel: a map is passed as itself (`params![&map]`), which keeps the
/// map, and through it the memory it describes, borrowed until the scope
/// has synchronized, and checks its context before the launch. Passing the
/// descriptor does not compile:
///
/// ```compile_fail,E0277
/// use cudakit::memory::tensor_map::{TensorDataType, TensorMap, TiledLayout};
/// # fn main() -> cudakit::Result<()> {
/// let ctx = cudakit::Context::new(0)?;
/// let buffer = ctx.alloc::<f32>(64 * 64)?;
/// let layout = TiledLayout::matrix(TensorDataType::F32, 64, 64, 64, 16, 16);
/// let map = TensorMap::tiled(&buffer, layout)?;
/// let params = cudakit::params![*map.descriptor()]; // error[E0277]: not a KernelArg
/// # drop(params); Ok(()) }
/// ```
///
/// The map passed as itself does:
///
/// ```no_run
/// use cudakit::memory::tensor_map::{TensorDataType, TensorMap, TiledLayout};
/// # fn main() -> cudakit::Result<()> {
/// let ctx = cudakit::Context::new(0)?;
/// let buffer = ctx.alloc::<f32>(64 * 64)?;
/// let layout = TiledLayout::matrix(TensorDataType::F32, 64, 64, 64, 16, 16);
/// let map = TensorMap::tiled(&buffer, layout)?;
/// let params = cudakit::params![&map];
/// # drop(params); Ok(()) }
/// ```
///
/// [`TensorMapDescriptor::as_raw`] gives the driver's struct, for FFI (and
/// its `opaque` words, which are a `[u64; 16]`). Bytes that reach a kernel
/// by that road escape every check: they hold the address of the memory
/// the map describes, which may be freed once the map's borrow ends,
/// whatever work is still queued. See the `# Safety` section of
/// [`Scope::launch`](crate::Scope::launch).
#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TensorMapDescriptor(CUtensorMap);

impl TensorMapDescriptor {
    /// The descriptor as the driver API's `CUtensorMap`.
    pub fn as_raw(&self) -> &CUtensorMap {
        &self.0
    }
}

impl std::fmt::Debug for TensorMapDescriptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorMapDescriptor")
            .finish_non_exhaustive()
    }
}

/// A tiled tensor map over memory it borrows for `'a` (see the module
/// docs). Pass it to a kernel as `&map`.
pub struct TensorMap<'a> {
    raw: TensorMapDescriptor,
    ctx: &'a Context,
    layout: TiledLayout,
    _borrow: PhantomData<&'a ()>,
}

impl std::fmt::Debug for TensorMap<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorMap")
            .field("layout", &self.layout)
            .finish_non_exhaustive()
    }
}

impl<'a> TensorMap<'a> {
    /// A tiled map over `memory` (`cuTensorMapEncodeTiled`), after checking
    /// `layout` (see the module docs).
    ///
    /// # Errors
    ///
    /// [`Error::TensorMap`] naming the rule a layout breaks;
    /// [`Error::NotSupported`] on a driver without tensor maps (before CUDA
    /// 12.0) or a device before sm_90; driver errors.
    pub fn tiled<T: DeviceCopy>(
        memory: impl DeviceDst<'a, T>,
        layout: TiledLayout,
    ) -> Result<Self> {
        let ctx = memory.context();
        let address = memory.device_ptr().as_raw();
        let bytes = memory.len() * std::mem::size_of::<T>();
        layout.check(address, bytes, std::mem::size_of::<T>())?;
        if ctx.limits().compute_capability.0 < 9 {
            return Err(Error::NotSupported {
                feature: "tensor maps (TMA)",
                needs_driver: "a device of compute capability 9.0 or newer",
            });
        }
        let cu = ctx.enter()?;
        let encode = optional!(cu, cuTensorMapEncodeTiled, "CUDA 12.0");
        let mut raw = CUtensorMap::default();
        let rank = layout.dims.len() as u32;
        let interleave = match layout.interleave {
            Interleave::None => CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            Interleave::B16 => CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_16B,
            Interleave::B32 => CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_32B,
        };
        let swizzle = match layout.swizzle {
            Swizzle::None => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
            Swizzle::B32 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
            Swizzle::B64 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
            Swizzle::B128 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
        };
        let l2 = match layout.l2_promotion {
            L2Promotion::None => CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
            L2Promotion::B64 => CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
            L2Promotion::B128 => CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            L2Promotion::B256 => CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        };
        let oob = match layout.oob_fill {
            OobFill::Zero => CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            OobFill::NanRequestZeroFma => {
                CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
            }
        };
        // SAFETY: `raw` is a 128-byte-aligned CUtensorMap to write; the
        // arrays hold `rank`, `rank - 1`, `rank` and `rank` entries (checked
        // by `layout.check`); the address is this context's memory, which
        // stays borrowed for 'a; the enums are defined values.
        let rc = unsafe {
            encode(
                &mut raw,
                layout.data_type.raw(),
                rank,
                address as usize as *mut std::ffi::c_void,
                layout.dims.as_ptr(),
                layout.strides.as_ptr(),
                layout.box_dims.as_ptr(),
                layout.element_strides.as_ptr(),
                interleave,
                swizzle,
                l2,
                oob,
            )
        };
        ctx.check("cuTensorMapEncodeTiled", rc)?;
        Ok(TensorMap {
            raw: TensorMapDescriptor(raw),
            ctx,
            layout,
            _borrow: PhantomData,
        })
    }

    /// The descriptor. A [`TensorMapDescriptor`] is not a kernel argument:
    /// pass the map itself (`params![&map]`). See [`TensorMapDescriptor`]
    /// for the explicit escape.
    pub fn descriptor(&self) -> &TensorMapDescriptor {
        &self.raw
    }

    /// The layout it was made from.
    pub fn layout(&self) -> &TiledLayout {
        &self.layout
    }

    /// The context of the memory it describes.
    pub fn context(&self) -> &'a Context {
        self.ctx
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix() -> TiledLayout {
        TiledLayout::matrix(TensorDataType::Bf16, 4096, 4096, 4096, 128, 64).swizzle(Swizzle::B128)
    }

    #[test]
    fn a_good_layout_passes_and_every_rule_is_checked() {
        let bytes = 4096 * 4096 * 2;
        assert!(matrix().check(0x1000, bytes, 2).is_ok());
        let fails = |l: TiledLayout, addr: u64, bytes: usize, esize: usize, needle: &str| {
            let e = l.check(addr, bytes, esize).unwrap_err().to_string();
            assert!(e.contains(needle), "{e} (wanted {needle:?})");
        };
        fails(matrix(), 0x1000, bytes, 4, "4 bytes");
        fails(matrix(), 0x1008, bytes, 2, "16-byte aligned");
        fails(matrix(), 0x1000, bytes - 1, 2, "memory holds");
        let mut l = matrix();
        l.strides[0] = 8190;
        fails(l, 0x1000, bytes, 2, "multiple of 16");
        let mut l = matrix();
        l.strides[0] = 4096;
        fails(l, 0x1000, bytes, 2, "less than");
        let mut l = matrix();
        l.box_dims[1] = 257;
        fails(l, 0x1000, bytes, 2, "1 to 256");
        let mut l = matrix();
        l.box_dims[0] = 4; // 8 bytes
        fails(l, 0x1000, bytes, 2, "multiple of 16");
        let l =
            TiledLayout::matrix(TensorDataType::Bf16, 64, 256, 256, 64, 128).swizzle(Swizzle::B128); // 256-byte inner box
        fails(l, 0x1000, 64 * 256 * 2, 2, "swizzle span");
        let mut l = matrix();
        l.element_strides[1] = 9;
        fails(l, 0x1000, bytes, 2, "1 to 8");
        let mut l = matrix();
        l.dims = vec![1; 6];
        fails(l, 0x1000, bytes, 2, "rank 6");
        let mut l = matrix();
        l.interleave = Interleave::B16;
        fails(l, 0x1000, bytes, 2, "rank 3");
        let mut l = TiledLayout::matrix(TensorDataType::I32, 16, 16, 16, 16, 16);
        l.oob_fill = OobFill::NanRequestZeroFma;
        fails(l, 0x1000, 16 * 16 * 4, 4, "floating-point");
        let mut l = matrix();
        l.dims[0] = 0;
        fails(l, 0x1000, bytes, 2, "1 to 2^32");
    }

    #[test]
    fn huge_strides_and_dims_are_refused_not_overflowed() {
        let mut l = TiledLayout::matrix(TensorDataType::U8, 1 << 32, 16, 16, 1, 16);
        l.dims = vec![16, 1 << 32, 1 << 32];
        l.strides = vec![(1u64 << 40) - 16, (1u64 << 40) - 16];
        l.box_dims = vec![16, 1, 1];
        l.element_strides = vec![1, 1, 1];
        let e = l.check(0, usize::MAX, 1).unwrap_err().to_string();
        assert!(e.contains("less than") || e.contains("memory holds"), "{e}");
    }

    #[test]
    fn the_farthest_element_is_what_bounds_the_memory() {
        // 3 rows of 8 f32 with a 64-byte row stride: the last element ends
        // at 2·64 + 8·4 = 160 bytes.
        let l = TiledLayout::matrix(TensorDataType::F32, 3, 8, 16, 3, 8);
        assert!(l.check(0, 160, 4).is_ok());
        assert!(l.check(0, 159, 4).is_err());
    }
}
