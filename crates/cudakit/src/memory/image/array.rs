//! CUDA arrays: opaque, texture-cache-friendly device memory in 1D, 2D, 3D
//! and layered shapes (`cuArray3DCreate_v2`), of 8/16/32-bit integer, half
//! and float channels, 1, 2 or 4 per element.
//!
//! The host reaches an array only through copies (`cuMemcpy3D_v2`): from and
//! to host slices, device buffers and pitched allocations, synchronously
//! here and on streams inside a [`Scope`](crate::Scope). Kernels reach it
//! through texture objects (reads, with filtering) and surface objects
//! (reads and writes): see [`crate::memory::texture`].
//!
//! ```no_run
//! use cudakit::memory::array::ArrayShape;
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let image = ctx.array::<[u8; 4]>(ArrayShape::d2(640, 480))?;
//! image.copy_from_host(&vec![[0u8, 64, 128, 255]; 640 * 480])?;
//! assert_eq!(image.to_vec()?[0], [0, 64, 128, 255]);
//! # Ok(()) }
//! ```

use std::ffi::{c_uint, c_void};
use std::marker::PhantomData;
use std::panic::Location;

use cuda_sys::{
    CUarray, CUarray_format, CUdeviceptr, CUDA_ARRAY3D_DESCRIPTOR, CUDA_ARRAY3D_LAYERED,
    CUDA_ARRAY3D_SURFACE_LDST, CUDA_MEMCPY3D,
};

use super::copy3d::{copy3d, memcpy3d, Extent, Side};
use super::pitched::Pitched;
use crate::context::arena::AllocKind;
use crate::context::{same_context, Context};
use crate::error::{Error, Result};
use crate::memory::{same_len, DeviceCopy, DeviceDst, DeviceSrc, F16};

mod sealed {
    pub trait Sealed {}
}

/// The kind of number in each channel of an array element
/// (`CUarray_format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChannelKind {
    /// `u8` (`CU_AD_FORMAT_UNSIGNED_INT8`).
    U8,
    /// `i8` (`CU_AD_FORMAT_SIGNED_INT8`).
    I8,
    /// `u16` (`CU_AD_FORMAT_UNSIGNED_INT16`).
    U16,
    /// `i16` (`CU_AD_FORMAT_SIGNED_INT16`).
    I16,
    /// `u32` (`CU_AD_FORMAT_UNSIGNED_INT32`).
    U32,
    /// `i32` (`CU_AD_FORMAT_SIGNED_INT32`).
    I32,
    /// Half precision, [`F16`] (`CU_AD_FORMAT_HALF`).
    F16,
    /// `f32` (`CU_AD_FORMAT_FLOAT`).
    F32,
}

impl ChannelKind {
    /// The driver's format code.
    pub fn raw(self) -> CUarray_format {
        match self {
            ChannelKind::U8 => CUarray_format::CU_AD_FORMAT_UNSIGNED_INT8,
            ChannelKind::I8 => CUarray_format::CU_AD_FORMAT_SIGNED_INT8,
            ChannelKind::U16 => CUarray_format::CU_AD_FORMAT_UNSIGNED_INT16,
            ChannelKind::I16 => CUarray_format::CU_AD_FORMAT_SIGNED_INT16,
            ChannelKind::U32 => CUarray_format::CU_AD_FORMAT_UNSIGNED_INT32,
            ChannelKind::I32 => CUarray_format::CU_AD_FORMAT_SIGNED_INT32,
            ChannelKind::F16 => CUarray_format::CU_AD_FORMAT_HALF,
            ChannelKind::F32 => CUarray_format::CU_AD_FORMAT_FLOAT,
        }
    }

    /// The variant's name (`"U8"`).
    pub fn name(self) -> &'static str {
        match self {
            ChannelKind::U8 => "U8",
            ChannelKind::I8 => "I8",
            ChannelKind::U16 => "U16",
            ChannelKind::I16 => "I16",
            ChannelKind::U32 => "U32",
            ChannelKind::I32 => "I32",
            ChannelKind::F16 => "F16",
            ChannelKind::F32 => "F32",
        }
    }

    /// Bytes per channel.
    pub fn bytes(self) -> usize {
        match self {
            ChannelKind::U8 | ChannelKind::I8 => 1,
            ChannelKind::U16 | ChannelKind::I16 | ChannelKind::F16 => 2,
            ChannelKind::U32 | ChannelKind::I32 | ChannelKind::F32 => 4,
        }
    }

    /// Whether the channel holds a floating-point number (half or float).
    pub fn is_float(self) -> bool {
        matches!(self, ChannelKind::F16 | ChannelKind::F32)
    }
}

/// What an array element is: its channel kind and how many channels (1, 2
/// or 4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChannelFormat {
    /// The number in each channel.
    pub kind: ChannelKind,
    /// Channels per element: 1, 2 or 4.
    pub channels: u32,
}

/// An element type CUDA arrays, textures and surfaces can hold: `u8`, `i8`,
/// `u16`, `i16`, `u32`, `i32`, [`F16`] and `f32`, alone or as `[T; 2]` and
/// `[T; 4]` (CUDA's `uchar2`, `float4`, ...).
///
/// Sealed: the driver knows exactly these formats.
pub trait ArrayElement: DeviceCopy + sealed::Sealed {
    /// The element's format.
    const FORMAT: ChannelFormat;
}

macro_rules! array_elements {
    ($($t:ty => $kind:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl ArrayElement for $t {
            const FORMAT: ChannelFormat = ChannelFormat { kind: ChannelKind::$kind, channels: 1 };
        }
        impl sealed::Sealed for [$t; 2] {}
        impl ArrayElement for [$t; 2] {
            const FORMAT: ChannelFormat = ChannelFormat { kind: ChannelKind::$kind, channels: 2 };
        }
        impl sealed::Sealed for [$t; 4] {}
        impl ArrayElement for [$t; 4] {
            const FORMAT: ChannelFormat = ChannelFormat { kind: ChannelKind::$kind, channels: 4 };
        }
    )*};
}
array_elements!(u8 => U8, i8 => I8, u16 => U16, i16 => I16, u32 => U32, i32 => I32, F16 => F16, f32 => F32);

/// The shape of an array. Build it with [`ArrayShape::d1`],
/// [`ArrayShape::d2`], [`ArrayShape::d3`], [`ArrayShape::layered_1d`] or
/// [`ArrayShape::layered_2d`]; every extent is in elements and at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ArrayShape {
    /// A 1D array of `width` elements.
    D1 {
        /// Elements.
        width: usize,
    },
    /// A 2D array.
    D2 {
        /// Elements per row.
        width: usize,
        /// Rows.
        height: usize,
    },
    /// A 3D array.
    D3 {
        /// Elements per row.
        width: usize,
        /// Rows per slice.
        height: usize,
        /// Slices.
        depth: usize,
    },
    /// `layers` 1D arrays of `width` elements (`CUDA_ARRAY3D_LAYERED`).
    Layered1D {
        /// Elements per layer.
        width: usize,
        /// Layers.
        layers: usize,
    },
    /// `layers` 2D arrays (`CUDA_ARRAY3D_LAYERED`).
    Layered2D {
        /// Elements per row.
        width: usize,
        /// Rows per layer.
        height: usize,
        /// Layers.
        layers: usize,
    },
}

impl ArrayShape {
    /// A 1D array.
    pub fn d1(width: usize) -> ArrayShape {
        ArrayShape::D1 { width }
    }
    /// A 2D array.
    pub fn d2(width: usize, height: usize) -> ArrayShape {
        ArrayShape::D2 { width, height }
    }
    /// A 3D array.
    pub fn d3(width: usize, height: usize, depth: usize) -> ArrayShape {
        ArrayShape::D3 {
            width,
            height,
            depth,
        }
    }
    /// A layered 1D array.
    pub fn layered_1d(width: usize, layers: usize) -> ArrayShape {
        ArrayShape::Layered1D { width, layers }
    }
    /// A layered 2D array.
    pub fn layered_2d(width: usize, height: usize, layers: usize) -> ArrayShape {
        ArrayShape::Layered2D {
            width,
            height,
            layers,
        }
    }

    /// (elements per row, rows, slices or layers) as copies see them: 1
    /// for each dimension the shape lacks.
    pub fn extent(self) -> (usize, usize, usize) {
        match self {
            ArrayShape::D1 { width } => (width, 1, 1),
            ArrayShape::D2 { width, height } => (width, height, 1),
            ArrayShape::D3 {
                width,
                height,
                depth,
            } => (width, height, depth),
            ArrayShape::Layered1D { width, layers } => (width, 1, layers),
            ArrayShape::Layered2D {
                width,
                height,
                layers,
            } => (width, height, layers),
        }
    }

    /// Elements in the whole array.
    pub fn len(self) -> usize {
        let (w, h, d) = self.extent();
        w.saturating_mul(h).saturating_mul(d)
    }

    /// Always `false` for a shape an array was made with.
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// Whether the shape is layered.
    pub fn is_layered(self) -> bool {
        matches!(
            self,
            ArrayShape::Layered1D { .. } | ArrayShape::Layered2D { .. }
        )
    }

    /// The driver's descriptor: `Height` 0 for 1D shapes, `Depth` 0 for
    /// unlayered 1D and 2D ones, as `cuArray3DCreate_v2` wants.
    pub(crate) fn descriptor(
        self,
        format: ChannelFormat,
        surface: bool,
    ) -> CUDA_ARRAY3D_DESCRIPTOR {
        let (width, height, depth) = match self {
            ArrayShape::D1 { width } => (width, 0, 0),
            ArrayShape::D2 { width, height } => (width, height, 0),
            ArrayShape::D3 {
                width,
                height,
                depth,
            } => (width, height, depth),
            ArrayShape::Layered1D { width, layers } => (width, 0, layers),
            ArrayShape::Layered2D {
                width,
                height,
                layers,
            } => (width, height, layers),
        };
        let mut flags: c_uint = 0;
        if self.is_layered() {
            flags |= CUDA_ARRAY3D_LAYERED;
        }
        if surface {
            flags |= CUDA_ARRAY3D_SURFACE_LDST;
        }
        CUDA_ARRAY3D_DESCRIPTOR {
            Width: width,
            Height: height,
            Depth: depth,
            Format: format.kind.raw(),
            NumChannels: format.channels,
            Flags: flags,
        }
    }

    fn check(self) -> Result<()> {
        let (w, h, d) = self.extent();
        if w == 0 || h == 0 || d == 0 {
            return Err(Error::ZeroLength {
                what: "array dimension",
            });
        }
        Ok(())
    }
}

/// A CUDA array of `T` (`cuArray3DCreate_v2`), destroyed on drop
/// (`cuArrayDestroy`) and recorded in the context's arena as device memory.
pub struct Array<'c, T: ArrayElement> {
    ctx: &'c Context,
    raw: CUarray,
    shape: ArrayShape,
    surface: bool,
    id: u64,
    _marker: PhantomData<T>,
}

impl<T: ArrayElement> std::fmt::Debug for Array<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Array")
            .field("raw", &self.raw)
            .field("shape", &self.shape)
            .field("format", &T::FORMAT)
            .field("surface", &self.surface)
            .finish()
    }
}

impl Context {
    /// A CUDA array of `T` in `shape` (`cuArray3DCreate_v2`), for texture
    /// reads. Its contents are unspecified.
    ///
    /// # Errors
    ///
    /// [`Error::ZeroLength`] for a zero extent, before the driver; driver
    /// errors (an extent over the device's texture limits is
    /// `CUDA_ERROR_INVALID_VALUE`); [`Error::ContextPoisoned`].
    #[track_caller]
    pub fn array<T: ArrayElement>(&self, shape: ArrayShape) -> Result<Array<'_, T>> {
        Array::create(self, shape, false, Location::caller())
    }

    /// Like [`Context::array`], with `CUDA_ARRAY3D_SURFACE_LDST`: the array
    /// may also be bound to a [`Surface`](crate::memory::texture::Surface)
    /// and written by kernels.
    ///
    /// # Errors
    ///
    /// As [`Context::array`].
    #[track_caller]
    pub fn surface_array<T: ArrayElement>(&self, shape: ArrayShape) -> Result<Array<'_, T>> {
        Array::create(self, shape, true, Location::caller())
    }
}

impl<'c, T: ArrayElement> Array<'c, T> {
    fn create(
        ctx: &'c Context,
        shape: ArrayShape,
        surface: bool,
        location: &'static Location<'static>,
    ) -> Result<Self> {
        shape.check()?;
        let bytes = shape
            .len()
            .checked_mul(std::mem::size_of::<T>())
            .filter(|_| shape.len() != usize::MAX)
            .ok_or(Error::SizeOverflow {
                len: shape.len(),
                elem_size: std::mem::size_of::<T>(),
            })?;
        let desc = shape.descriptor(T::FORMAT, surface);
        let cu = ctx.enter()?;
        let mut raw: CUarray = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and a descriptor that lives for the
        // call; the context is current.
        let rc = unsafe { (cu.cuArray3DCreate)(&mut raw, &desc) };
        ctx.check("cuArray3DCreate_v2", rc)?;
        let id = ctx.arena().record_alloc(AllocKind::Device, bytes, location);
        Ok(Array {
            ctx,
            raw,
            shape,
            surface,
            id,
            _marker: PhantomData,
        })
    }

    /// The context.
    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    /// The driver's handle.
    pub fn as_raw(&self) -> CUarray {
        self.raw
    }

    /// The shape.
    pub fn shape(&self) -> ArrayShape {
        self.shape
    }

    /// The element format.
    pub fn format(&self) -> ChannelFormat {
        T::FORMAT
    }

    /// Whether the array was made for surfaces ([`Context::surface_array`]).
    pub fn is_surface_capable(&self) -> bool {
        self.surface
    }

    /// Elements in the array.
    pub fn len(&self) -> usize {
        self.shape.len()
    }

    /// Always `false`: arrays have at least one element.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The copy extent of the whole array.
    fn whole(&self) -> Extent {
        let (w, h, d) = self.shape.extent();
        Extent {
            width_bytes: w * std::mem::size_of::<T>(),
            height: h,
            depth: d,
        }
    }

    /// The descriptor of a copy between this array and a tightly packed
    /// linear side holding every element.
    pub(crate) fn linear_copy(&self, linear: Side, into_array: bool) -> CUDA_MEMCPY3D {
        let extent = self.whole();
        if into_array {
            memcpy3d(linear, Side::Array(self.raw), extent)
        } else {
            memcpy3d(Side::Array(self.raw), linear, extent)
        }
    }

    /// A host side of `len` elements laid out as this array, packed.
    fn host_side(&self, ptr: *const c_void) -> Side {
        let (w, h, _) = self.shape.extent();
        Side::Host {
            ptr,
            pitch: w * std::mem::size_of::<T>(),
            height: h,
        }
    }

    /// Copies `src`, every element in row-major order (x fastest, then y,
    /// then z or layer), into the array (`cuMemcpy3D_v2`).
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`] unless `src` holds [`Array::len`]
    /// elements; driver errors.
    pub fn copy_from_host(&self, src: &[T]) -> Result<()> {
        same_len("Array::copy_from_host", self.len(), src.len())?;
        let desc = self.linear_copy(self.host_side(src.as_ptr().cast()), true);
        // SAFETY: `src` holds every element of the array, packed, as the
        // host side says, and is borrowed for the (synchronous) call.
        unsafe { copy3d(self.ctx, &desc) }
    }

    /// Copies the array into `dst`, in row-major order (`cuMemcpy3D_v2`).
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`]; driver errors.
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        same_len("Array::copy_to_host", self.len(), dst.len())?;
        let desc = self.linear_copy(self.host_side(dst.as_mut_ptr().cast_const().cast()), false);
        // SAFETY: `dst` has room for every element, packed, and is borrowed
        // exclusively for the call; every bit pattern is a valid `T`.
        unsafe { copy3d(self.ctx, &desc) }
    }

    /// The contents as a vector, in row-major order.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let len = self.len();
        let mut out: Vec<T> = Vec::with_capacity(len);
        let desc = self.linear_copy(self.host_side(out.as_mut_ptr().cast_const().cast()), false);
        // SAFETY: the vector's spare capacity holds `len` elements, packed.
        unsafe { copy3d(self.ctx, &desc) }?;
        // SAFETY: the copy wrote all `len` elements; every bit pattern is a
        // valid `T` (DeviceCopy's contract).
        unsafe { out.set_len(len) };
        Ok(out)
    }

    /// Copies device memory holding every element, packed in row-major
    /// order, into the array (`cuMemcpy3D_v2`).
    ///
    /// # Errors
    ///
    /// Length and context mismatches; driver errors.
    pub fn copy_from_device<'s>(&self, src: impl DeviceSrc<'s, T>) -> Result<()> {
        same_len("Array::copy_from_device", self.len(), src.len())?;
        same_context("Array::copy_from_device", self.ctx, src.context())?;
        let desc = self.linear_copy(self.device_side(src.device_ptr().as_raw()), true);
        // SAFETY: `src` holds every element, packed, and is borrowed for the call.
        unsafe { copy3d(self.ctx, &desc) }
    }

    /// Copies the array into device memory, packed in row-major order
    /// (`cuMemcpy3D_v2`).
    ///
    /// # Errors
    ///
    /// Length and context mismatches; driver errors.
    pub fn copy_to_device<'s>(&self, dst: impl DeviceDst<'s, T>) -> Result<()> {
        same_len("Array::copy_to_device", self.len(), dst.len())?;
        same_context("Array::copy_to_device", self.ctx, dst.context())?;
        let desc = self.linear_copy(self.device_side(dst.device_ptr().as_raw()), false);
        // SAFETY: `dst` has room for every element and is borrowed for the call.
        unsafe { copy3d(self.ctx, &desc) }
    }

    fn device_side(&self, ptr: CUdeviceptr) -> Side {
        let (w, h, _) = self.shape.extent();
        Side::Device {
            ptr,
            pitch: w * std::mem::size_of::<T>(),
            height: h,
        }
    }

    fn check_pitched(&self, what: &'static str, pitched: &Pitched<'_, T>) -> Result<()> {
        same_context(what, self.ctx, pitched.context())?;
        let (w, h, d) = self.shape.extent();
        if d != 1 || (w, h) != (pitched.width(), pitched.height()) {
            return Err(Error::InvalidArgument(format!(
                "{what}: the array is {w}x{h}x{d}, the pitched allocation {}x{}; they must be one \
                 2D shape",
                pitched.width(),
                pitched.height()
            )));
        }
        Ok(())
    }

    /// Copies a pitched allocation of the same width and height into a 1D
    /// or 2D array (`cuMemcpy3D_v2`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the shapes differ; context
    /// mismatches; driver errors.
    pub fn copy_from_pitched(&self, src: &Pitched<'_, T>) -> Result<()> {
        self.check_pitched("Array::copy_from_pitched", src)?;
        let desc = memcpy3d(src.side(), Side::Array(self.raw), self.whole());
        // SAFETY: `src` is `height` rows of `pitch` bytes holding `width`
        // elements each, borrowed for the call.
        unsafe { copy3d(self.ctx, &desc) }
    }

    /// Copies a 1D or 2D array into a pitched allocation of the same width
    /// and height (`cuMemcpy3D_v2`).
    ///
    /// # Errors
    ///
    /// As [`Array::copy_from_pitched`].
    pub fn copy_to_pitched(&self, dst: &Pitched<'_, T>) -> Result<()> {
        self.check_pitched("Array::copy_to_pitched", dst)?;
        let desc = memcpy3d(Side::Array(self.raw), dst.side(), self.whole());
        // SAFETY: as in `copy_from_pitched`, the other way.
        unsafe { copy3d(self.ctx, &desc) }
    }
}

impl<T: ArrayElement> Drop for Array<'_, T> {
    fn drop(&mut self) {
        let raw = self.raw as usize;
        // SAFETY: destroys the array created in `create`, once (now, or
        // after this thread's capture, or off a driver callback thread). No
        // device work can still use it: work borrows the array (or a texture
        // or surface that borrows it) inside a scope, which waits before it
        // ends, and a graph's replays run only in scopes that its borrows
        // outlive.
        self.ctx
            .release("cuArrayDestroy", Some(self.id), move |cu| unsafe {
                (cu.cuArrayDestroy)(raw as cuda_sys::CUarray)
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_match_the_header_and_the_element_sizes() {
        fn size_matches<T: ArrayElement>() {
            let f = T::FORMAT;
            assert_eq!(
                f.kind.bytes() * f.channels as usize,
                std::mem::size_of::<T>(),
                "{}",
                std::any::type_name::<T>()
            );
        }
        size_matches::<u8>();
        size_matches::<[i8; 2]>();
        size_matches::<[u16; 4]>();
        size_matches::<i16>();
        size_matches::<[u32; 2]>();
        size_matches::<[i32; 4]>();
        size_matches::<F16>();
        size_matches::<[F16; 4]>();
        size_matches::<f32>();
        size_matches::<[f32; 2]>();
        assert_eq!(ChannelKind::U8.raw().0, 0x01);
        assert_eq!(ChannelKind::I32.raw().0, 0x0a);
        assert_eq!(ChannelKind::F16.raw().0, 0x10);
        assert_eq!(ChannelKind::F32.raw().0, 0x20);
        assert_eq!(<[f32; 4]>::FORMAT.channels, 4);
    }

    #[test]
    fn shapes_map_to_the_descriptor_the_driver_wants() {
        let f = f32::FORMAT;
        let d = ArrayShape::d1(7).descriptor(f, false);
        assert_eq!((d.Width, d.Height, d.Depth, d.Flags), (7, 0, 0, 0));
        let d = ArrayShape::d2(7, 3).descriptor(f, true);
        assert_eq!(
            (d.Width, d.Height, d.Depth, d.Flags),
            (7, 3, 0, CUDA_ARRAY3D_SURFACE_LDST)
        );
        let d = ArrayShape::d3(7, 3, 2).descriptor(f, false);
        assert_eq!((d.Width, d.Height, d.Depth), (7, 3, 2));
        let d = ArrayShape::layered_1d(7, 5).descriptor(f, false);
        assert_eq!(
            (d.Width, d.Height, d.Depth, d.Flags),
            (7, 0, 5, CUDA_ARRAY3D_LAYERED)
        );
        let d = ArrayShape::layered_2d(7, 3, 5).descriptor(f, true);
        assert_eq!(
            (d.Width, d.Height, d.Depth, d.Flags),
            (7, 3, 5, CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST)
        );
        assert_eq!(d.Format, CUarray_format::CU_AD_FORMAT_FLOAT);
        assert_eq!(ArrayShape::layered_1d(7, 5).extent(), (7, 1, 5));
        assert_eq!(ArrayShape::layered_2d(7, 3, 5).len(), 105);
        assert!(matches!(
            ArrayShape::d2(0, 3).check(),
            Err(Error::ZeroLength { .. })
        ));
        assert!(matches!(
            ArrayShape::layered_1d(3, 0).check(),
            Err(Error::ZeroLength { .. })
        ));
    }
}
