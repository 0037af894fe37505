//! Texture objects (`cuTexObjectCreate`) over CUDA arrays, linear device
//! memory and pitched memory, and surface objects (`cuSurfObjectCreate`)
//! over arrays; both passed to kernels as `cudaTextureObject_t` /
//! `cudaSurfaceObject_t` (`CUtexObject`, `CUsurfObject`, 64-bit handles).
//!
//! # Lifetimes
//!
//! A [`Texture`] borrows the memory it samples for as long as it lives, and
//! a launch that takes it borrows the texture; so the memory can be neither
//! freed nor dropped while a texture, or queued work, may read it:
//!
//! ```compile_fail,E0505
//! use cudakit::memory::array::ArrayShape;
//! use cudakit::memory::texture::{Texture, TextureDesc};
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let array = ctx.array::<f32>(ArrayShape::d2(64, 64))?;
//! let texture = Texture::from_array(&array, &TextureDesc::new())?;
//! drop(array); // error[E0505]: cannot move out of `array` because it is borrowed
//! let params = cudakit::params![&texture];
//! # drop(params); Ok(()) }
//! ```
//!
//! A [`Surface`] is a writer: it borrows its array exclusively, so while a
//! surface lives no texture samples the array and the host does not copy
//! from it (what a kernel writes through the surface is seen once the
//! surface, and the scope that used it, are gone):
//!
//! ```compile_fail,E0502
//! use cudakit::memory::array::ArrayShape;
//! use cudakit::memory::texture::Surface;
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let mut array = ctx.surface_array::<f32>(ArrayShape::d2(64, 64))?;
//! let mut surface = Surface::new(&mut array)?;
//! let host = array.to_vec()?; // error[E0502]: `array` is also borrowed as mutable
//! let params = cudakit::params![&mut surface];
//! # drop((params, host)); Ok(()) }
//! ```
//!
//! A texture's or surface's handle ([`Texture::handle`],
//! [`Surface::handle`]) is not a kernel argument: passing
//! [`TextureHandle`] or [`SurfaceHandle`] does not compile, and the raw
//! number behind it is the documented `unsafe` escape (see the `# Safety`
//! section of [`Scope::launch`](crate::Scope::launch)).
//!
//! # Sampling
//!
//! [`TextureDesc`] chooses, per dimension, the address mode for coordinates
//! outside the texture ([`AddressMode`]: wrap, clamp, mirror, border), the
//! filter ([`FilterMode`]: nearest texel, or linear interpolation between
//! the 2, 4 or 8 nearest), whether coordinates are normalized to `[0, 1)`,
//! and whether 8/16-bit integers are read as they are or as floats in
//! `[0, 1]` (`[-1, 1]` signed) ([`ReadMode`]). Combinations the hardware
//! does not support are refused before the driver
//! ([`TextureError`]).
//! `docs/textures.md` gives the formulas the hardware follows, which the
//! GPU tests recompute on the CPU.

use std::marker::PhantomData;

use cuda_sys::{
    CUaddress_mode, CUfilter_mode, CUresourcetype, CUsurfObject, CUtexObject, CUDA_RESOURCE_DESC,
    CUDA_TEXTURE_DESC, CU_TRSF_NORMALIZED_COORDINATES, CU_TRSF_READ_AS_INTEGER,
};

use super::array::{Array, ArrayElement, ArrayShape, ChannelFormat};
use super::pitched::Pitched;
use crate::context::Context;
use crate::error::{Result, TextureError};
use crate::memory::DeviceSrc;

/// What a texture does with a coordinate outside `[0, size)`
/// (`CUaddress_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressMode {
    /// Repeats the texture (`CU_TR_ADDRESS_MODE_WRAP`); normalized
    /// coordinates only.
    Wrap,
    /// Repeats the edge texel (`CU_TR_ADDRESS_MODE_CLAMP`).
    Clamp,
    /// Repeats the texture mirrored at every edge
    /// (`CU_TR_ADDRESS_MODE_MIRROR`); normalized coordinates only.
    Mirror,
    /// Reads the border color (`CU_TR_ADDRESS_MODE_BORDER`).
    Border,
}

impl AddressMode {
    /// Every mode.
    pub const ALL: [AddressMode; 4] = [
        AddressMode::Wrap,
        AddressMode::Clamp,
        AddressMode::Mirror,
        AddressMode::Border,
    ];

    /// The variant's name (`"Wrap"`).
    pub fn name(self) -> &'static str {
        match self {
            AddressMode::Wrap => "Wrap",
            AddressMode::Clamp => "Clamp",
            AddressMode::Mirror => "Mirror",
            AddressMode::Border => "Border",
        }
    }

    fn raw(self) -> CUaddress_mode {
        match self {
            AddressMode::Wrap => CUaddress_mode::CU_TR_ADDRESS_MODE_WRAP,
            AddressMode::Clamp => CUaddress_mode::CU_TR_ADDRESS_MODE_CLAMP,
            AddressMode::Mirror => CUaddress_mode::CU_TR_ADDRESS_MODE_MIRROR,
            AddressMode::Border => CUaddress_mode::CU_TR_ADDRESS_MODE_BORDER,
        }
    }
}

/// How a texture filters (`CUfilter_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FilterMode {
    /// The nearest texel (`CU_TR_FILTER_MODE_POINT`).
    Point,
    /// Linear interpolation between neighbouring texels, with 8-bit
    /// weights (`CU_TR_FILTER_MODE_LINEAR`); float results only.
    Linear,
}

impl FilterMode {
    fn raw(self) -> CUfilter_mode {
        match self {
            FilterMode::Point => CUfilter_mode::CU_TR_FILTER_MODE_POINT,
            FilterMode::Linear => CUfilter_mode::CU_TR_FILTER_MODE_LINEAR,
        }
    }
}

/// How integer texels are returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReadMode {
    /// As stored (`CU_TRSF_READ_AS_INTEGER` for integer formats).
    ElementType,
    /// 8- and 16-bit integers as floats: unsigned in `[0, 1]`
    /// (`v / max`), signed in `[-1, 1]` (`max(v / max, -1)`).
    NormalizedFloat,
}

impl ReadMode {
    /// The variant's name (`"ElementType"`).
    pub fn name(self) -> &'static str {
        match self {
            ReadMode::ElementType => "ElementType",
            ReadMode::NormalizedFloat => "NormalizedFloat",
        }
    }
}

/// How a texture object samples (`CUDA_TEXTURE_DESC`). A builder; the
/// default is point filtering, clamping, unnormalized coordinates, values
/// read as stored, a zero border.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TextureDesc {
    address: [AddressMode; 3],
    filter: FilterMode,
    read: ReadMode,
    normalized: bool,
    border: [f32; 4],
}

impl Default for TextureDesc {
    fn default() -> Self {
        TextureDesc::new()
    }
}

impl TextureDesc {
    /// Point filtering, clamp, unnormalized coordinates, element-type reads.
    pub fn new() -> TextureDesc {
        TextureDesc {
            address: [AddressMode::Clamp; 3],
            filter: FilterMode::Point,
            read: ReadMode::ElementType,
            normalized: false,
            border: [0.0; 4],
        }
    }

    /// The same address mode in every dimension.
    pub fn address(mut self, mode: AddressMode) -> TextureDesc {
        self.address = [mode; 3];
        self
    }

    /// One address mode per dimension (x, y, z).
    pub fn address_per_dimension(mut self, modes: [AddressMode; 3]) -> TextureDesc {
        self.address = modes;
        self
    }

    /// The filter.
    pub fn filter(mut self, filter: FilterMode) -> TextureDesc {
        self.filter = filter;
        self
    }

    /// The read mode.
    pub fn read_mode(mut self, read: ReadMode) -> TextureDesc {
        self.read = read;
        self
    }

    /// Coordinates in `[0, 1)` (`CU_TRSF_NORMALIZED_COORDINATES`) instead
    /// of `[0, size)`.
    pub fn normalized_coordinates(mut self, on: bool) -> TextureDesc {
        self.normalized = on;
        self
    }

    /// The border color (RGBA), read by [`AddressMode::Border`] outside the
    /// texture.
    pub fn border_color(mut self, rgba: [f32; 4]) -> TextureDesc {
        self.border = rgba;
        self
    }

    /// The address modes (x, y, z).
    pub fn address_modes(&self) -> [AddressMode; 3] {
        self.address
    }

    /// The filter mode.
    pub fn filter_mode(&self) -> FilterMode {
        self.filter
    }

    /// The read mode.
    pub fn read(&self) -> ReadMode {
        self.read
    }

    /// Whether coordinates are normalized.
    pub fn is_normalized(&self) -> bool {
        self.normalized
    }

    /// The border color.
    pub fn border(&self) -> [f32; 4] {
        self.border
    }

    /// Refuses what the hardware cannot do with `format` from `resource`.
    pub(crate) fn check(
        &self,
        format: ChannelFormat,
        resource: Resource,
    ) -> Result<(), TextureError> {
        let kind = format.kind;
        if resource == Resource::Linear {
            if self.filter == FilterMode::Linear {
                return Err(TextureError::LinearMemory {
                    what: "linear filtering",
                });
            }
            if self.normalized {
                return Err(TextureError::LinearMemory {
                    what: "normalized coordinates",
                });
            }
        }
        if !self.normalized {
            if let Some(&mode) = self
                .address
                .iter()
                .find(|m| matches!(m, AddressMode::Wrap | AddressMode::Mirror))
            {
                return Err(TextureError::NeedsNormalizedCoordinates { mode: mode.name() });
            }
        }
        let promotes =
            !kind.is_float() && kind.bytes() < 4 && self.read == ReadMode::NormalizedFloat;
        if self.read == ReadMode::NormalizedFloat && !kind.is_float() && kind.bytes() == 4 {
            return Err(TextureError::NormalizedRead32 { kind: kind.name() });
        }
        if self.filter == FilterMode::Linear && !kind.is_float() && !promotes {
            return Err(TextureError::LinearFilterNeedsFloat {
                kind: kind.name(),
                read: self.read.name(),
            });
        }
        Ok(())
    }

    fn raw(&self, format: ChannelFormat) -> CUDA_TEXTURE_DESC {
        let mut flags = 0;
        if self.normalized {
            flags |= CU_TRSF_NORMALIZED_COORDINATES;
        }
        if self.read == ReadMode::ElementType && !format.kind.is_float() {
            flags |= CU_TRSF_READ_AS_INTEGER;
        }
        CUDA_TEXTURE_DESC {
            addressMode: self.address.map(AddressMode::raw),
            filterMode: self.filter.raw(),
            flags,
            borderColor: self.border,
            ..CUDA_TEXTURE_DESC::default()
        }
    }
}

/// The memory behind a texture.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Resource {
    Array,
    Linear,
    Pitched,
}

/// A texture object (`cuTexObjectCreate`) reading memory borrowed for
/// `'a`; destroyed on drop (`cuTexObjectDestroy`). Passed to kernels as
/// `cudaTextureObject_t` (`params![&texture]`).
pub struct Texture<'a> {
    ctx: &'a Context,
    raw: CUtexObject,
    format: ChannelFormat,
    desc: TextureDesc,
    _reads: PhantomData<&'a ()>,
}

impl std::fmt::Debug for Texture<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Texture")
            .field("raw", &format_args!("{:#x}", self.raw))
            .field("format", &self.format)
            .field("desc", &self.desc)
            .finish()
    }
}

impl<'a> Texture<'a> {
    fn create(
        ctx: &'a Context,
        resource: CUDA_RESOURCE_DESC,
        kind: Resource,
        format: ChannelFormat,
        desc: &TextureDesc,
    ) -> Result<Texture<'a>> {
        desc.check(format, kind)?;
        let tex_desc = desc.raw(format);
        let cu = ctx.enter()?;
        let mut raw: CUtexObject = 0;
        // SAFETY: a valid out-pointer; the resource descriptor names memory
        // of this context that the caller keeps borrowed for the texture's
        // life; both descriptors live for the call; no view descriptor; the
        // context is current.
        let rc =
            unsafe { (cu.cuTexObjectCreate)(&mut raw, &resource, &tex_desc, std::ptr::null()) };
        ctx.check("cuTexObjectCreate", rc)?;
        Ok(Texture {
            ctx,
            raw,
            format,
            desc: *desc,
            _reads: PhantomData,
        })
    }

    /// A texture over a CUDA array (any shape; layered arrays are sampled
    /// with `tex1DLayered`/`tex2DLayered`). For a plain 1D array the address
    /// modes of y and z are set to clamp: the hardware samples 1D arrays
    /// at y = 0, and border addressing there would mix the border color
    /// into every linearly filtered value (seen on the H200).
    ///
    /// # Errors
    ///
    /// [`TextureError`] (as [`Error::Texture`](crate::Error::Texture)) for unsupported
    /// combinations; driver errors.
    pub fn from_array<T: ArrayElement>(
        array: &'a Array<'_, T>,
        desc: &TextureDesc,
    ) -> Result<Texture<'a>> {
        let mut resource = CUDA_RESOURCE_DESC {
            resType: CUresourcetype::CU_RESOURCE_TYPE_ARRAY,
            ..CUDA_RESOURCE_DESC::default()
        };
        resource.res.array.hArray = array.as_raw();
        let mut desc = *desc;
        if let ArrayShape::D1 { .. } = array.shape() {
            // Measured on the H200 (driver 580): a plain 1D array is filtered
            // as if it had a second dimension sampled at y = 0, so border
            // addressing in y mixes half the border color into every
            // linearly filtered value. The unused dimensions clamp instead.
            desc.address[1] = AddressMode::Clamp;
            desc.address[2] = AddressMode::Clamp;
        }
        Self::create(array.context(), resource, Resource::Array, T::FORMAT, &desc)
    }

    /// A texture over linear device memory, read in kernels with
    /// `tex1Dfetch<T>(texture, index)` (point filtering and unnormalized
    /// coordinates only; an index outside the memory reads 0).
    ///
    /// # Errors
    ///
    /// [`TextureError::LinearMemory`] for filtering or normalized
    /// coordinates; driver errors (more elements than
    /// `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH`).
    pub fn from_linear<T: ArrayElement>(
        memory: impl DeviceSrc<'a, T>,
        desc: &TextureDesc,
    ) -> Result<Texture<'a>> {
        let mut resource = CUDA_RESOURCE_DESC {
            resType: CUresourcetype::CU_RESOURCE_TYPE_LINEAR,
            ..CUDA_RESOURCE_DESC::default()
        };
        resource.res.linear = cuda_sys::CUDA_RESOURCE_DESC_res_linear {
            devPtr: memory.device_ptr().as_raw(),
            format: T::FORMAT.kind.raw(),
            numChannels: T::FORMAT.channels,
            sizeInBytes: memory.len() * std::mem::size_of::<T>(),
        };
        Self::create(
            memory.context(),
            resource,
            Resource::Linear,
            T::FORMAT,
            desc,
        )
    }

    /// A 2D texture over pitched memory (`CU_RESOURCE_TYPE_PITCH2D`),
    /// sampled like a 2D array.
    ///
    /// # Errors
    ///
    /// As [`Texture::from_array`].
    pub fn from_pitched<T: ArrayElement>(
        pitched: &'a Pitched<'_, T>,
        desc: &TextureDesc,
    ) -> Result<Texture<'a>> {
        let mut resource = CUDA_RESOURCE_DESC {
            resType: CUresourcetype::CU_RESOURCE_TYPE_PITCH2D,
            ..CUDA_RESOURCE_DESC::default()
        };
        resource.res.pitch2D = cuda_sys::CUDA_RESOURCE_DESC_res_pitch2D {
            devPtr: pitched.device_ptr().as_raw(),
            format: T::FORMAT.kind.raw(),
            numChannels: T::FORMAT.channels,
            width: pitched.width(),
            height: pitched.height(),
            pitchInBytes: pitched.pitch(),
        };
        Self::create(
            pitched.context(),
            resource,
            Resource::Pitched,
            T::FORMAT,
            desc,
        )
    }

    /// The object's handle. A [`TextureHandle`] is not a kernel argument:
    /// pass the texture itself (`params![&texture]`), which keeps it and the
    /// memory it samples borrowed, and checked for its context, until the
    /// work is done. See [`TextureHandle`] for the explicit escape.
    pub fn handle(&self) -> TextureHandle {
        TextureHandle(self.raw)
    }

    /// The context.
    pub fn context(&self) -> &'a Context {
        self.ctx
    }

    /// The texel format.
    pub fn format(&self) -> ChannelFormat {
        self.format
    }

    /// How it samples.
    pub fn desc(&self) -> &TextureDesc {
        &self.desc
    }
}

impl Drop for Texture<'_> {
    fn drop(&mut self) {
        let raw = self.raw;
        // SAFETY: destroys the object made in `create`, once (now, or after
        // this thread's capture, or off a driver callback thread); no queued
        // work can still use it (a launch borrows the texture inside a scope,
        // which waits before it ends; a graph kernel node borrows it for the
        // graph's `'g`, and replays run only in scopes that `'g` outlives).
        self.ctx
            .release("cuTexObjectDestroy", None, move |cu| unsafe {
                (cu.cuTexObjectDestroy)(raw)
            });
    }
}

/// A surface object (`cuSurfObjectCreate`) over an array borrowed
/// exclusively for `'a`: kernels read and write the array through it
/// (`surf2Dread`, `surf2Dwrite`, with x in bytes). Destroyed on drop
/// (`cuSurfObjectDestroy`). Passed to kernels as `cudaSurfaceObject_t`
/// (`params![&mut surface]`, a writer's borrow).
pub struct Surface<'a> {
    ctx: &'a Context,
    raw: CUsurfObject,
    format: ChannelFormat,
    _writes: PhantomData<&'a mut ()>,
}

impl std::fmt::Debug for Surface<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Surface")
            .field("raw", &format_args!("{:#x}", self.raw))
            .field("format", &self.format)
            .finish()
    }
}

impl<'a> Surface<'a> {
    /// A surface over `array`, which must have been made with
    /// [`Context::surface_array`](crate::Context::surface_array).
    ///
    /// # Errors
    ///
    /// [`TextureError::NotSurfaceCapable`] before the driver; driver errors.
    pub fn new<T: ArrayElement>(array: &'a mut Array<'_, T>) -> Result<Surface<'a>> {
        if !array.is_surface_capable() {
            return Err(TextureError::NotSurfaceCapable.into());
        }
        let ctx: &'a Context = array.context();
        let mut resource = CUDA_RESOURCE_DESC {
            resType: CUresourcetype::CU_RESOURCE_TYPE_ARRAY,
            ..CUDA_RESOURCE_DESC::default()
        };
        resource.res.array.hArray = array.as_raw();
        let cu = ctx.enter()?;
        let mut raw: CUsurfObject = 0;
        // SAFETY: a valid out-pointer; the descriptor names a live
        // surface-capable array of this context, borrowed exclusively for
        // the surface's life; the context is current.
        let rc = unsafe { (cu.cuSurfObjectCreate)(&mut raw, &resource) };
        ctx.check("cuSurfObjectCreate", rc)?;
        Ok(Surface {
            ctx,
            raw,
            format: T::FORMAT,
            _writes: PhantomData,
        })
    }

    /// The object's handle. A [`SurfaceHandle`] is not a kernel argument:
    /// pass the surface itself (`params![&mut surface]`), which keeps it and
    /// its array borrowed exclusively, and checked for its context, until
    /// the work is done. See [`SurfaceHandle`] for the explicit escape.
    pub fn handle(&self) -> SurfaceHandle {
        SurfaceHandle(self.raw)
    }

    /// The context.
    pub fn context(&self) -> &'a Context {
        self.ctx
    }

    /// The element format.
    pub fn format(&self) -> ChannelFormat {
        self.format
    }
}

impl Drop for Surface<'_> {
    fn drop(&mut self) {
        let raw = self.raw;
        // SAFETY: destroys the object made in `new`, once (now, or after
        // this thread's capture, or off a driver callback thread); no queued
        // work can still use it (as for a texture).
        self.ctx
            .release("cuSurfObjectDestroy", None, move |cu| unsafe {
                (cu.cuSurfObjectDestroy)(raw)
            });
    }
}

/// A texture object's handle (`CUtexObject`), as [`Texture::handle`] hands
/// it out.
///
/// It is deliberately neither [`DeviceCopy`](crate::DeviceCopy) nor a
/// [`KernelArg`](crate::work::launch::KernelArg), so it cannot be passed to
/// a kernel: a texture is passed as itself (`params![&texture]`), which
/// keeps the texture, and through it the memory it samples, borrowed until
/// the scope has synchronized, and checks its context before the launch.
/// Passing the handle does not compile:
///
/// ```compile_fail,E0277
/// use cudakit::memory::array::ArrayShape;
/// use cudakit::memory::texture::{Texture, TextureDesc};
/// # fn main() -> cudakit::Result<()> {
/// let ctx = cudakit::Context::new(0)?;
/// let array = ctx.array::<f32>(ArrayShape::d2(64, 64))?;
/// let texture = Texture::from_array(&array, &TextureDesc::new())?;
/// let params = cudakit::params![texture.handle()]; // error[E0277]: not a KernelArg
/// # drop(params); Ok(()) }
/// ```
///
/// The texture passed as itself does:
///
/// ```no_run
/// use cudakit::memory::array::ArrayShape;
/// use cudakit::memory::texture::{Texture, TextureDesc};
/// # fn main() -> cudakit::Result<()> {
/// let ctx = cudakit::Context::new(0)?;
/// let array = ctx.array::<f32>(ArrayShape::d2(64, 64))?;
/// let texture = Texture::from_array(&array, &TextureDesc::new())?;
/// let params = cudakit::params![&texture];
/// # drop(params); Ok(()) }
/// ```
///
/// [`TextureHandle::as_raw`] gives the number, for FFI and for handles
/// stored in device-side data structures. A raw handle that reaches a
/// kernel (as a `u64`, or inside a struct) escapes every check: the object
/// is destroyed when its [`Texture`] drops, and the memory it samples may be
/// freed once the texture's borrow ends, whatever work is still queued. See
/// the `# Safety` section of [`Scope::launch`](crate::Scope::launch).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TextureHandle(CUtexObject);

impl TextureHandle {
    /// The handle as the driver API's `CUtexObject` (the kernel's
    /// `cudaTextureObject_t`).
    pub fn as_raw(self) -> CUtexObject {
        self.0
    }
}

impl std::fmt::Debug for TextureHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TextureHandle({:#x})", self.0)
    }
}

/// A surface object's handle (`CUsurfObject`), as [`Surface::handle`] hands
/// it out.
///
/// Like [`TextureHandle`], it is neither [`DeviceCopy`](crate::DeviceCopy)
/// nor a [`KernelArg`](crate::work::launch::KernelArg): a surface is passed
/// as itself (`params![&mut surface]`, a writer's borrow of the surface and
/// so of its array). Passing the handle does not compile:
///
/// ```compile_fail,E0277
/// use cudakit::memory::array::ArrayShape;
/// use cudakit::memory::texture::Surface;
/// # fn main() -> cudakit::Result<()> {
/// let ctx = cudakit::Context::new(0)?;
/// let mut array = ctx.surface_array::<f32>(ArrayShape::d2(64, 64))?;
/// let surface = Surface::new(&mut array)?;
/// let params = cudakit::params![surface.handle()]; // error[E0277]: not a KernelArg
/// # drop(params); Ok(()) }
/// ```
///
/// The surface passed as itself does:
///
/// ```no_run
/// use cudakit::memory::array::ArrayShape;
/// use cudakit::memory::texture::Surface;
/// # fn main() -> cudakit::Result<()> {
/// let ctx = cudakit::Context::new(0)?;
/// let mut array = ctx.surface_array::<f32>(ArrayShape::d2(64, 64))?;
/// let mut surface = Surface::new(&mut array)?;
/// let params = cudakit::params![&mut surface];
/// # drop(params); Ok(()) }
/// ```
///
/// [`SurfaceHandle::as_raw`] is the explicit escape, with the obligations
/// of a raw texture handle (and a writer's: nothing else may read or write
/// the array while a kernel may write it): see the `# Safety` section of
/// [`Scope::launch`](crate::Scope::launch).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct SurfaceHandle(CUsurfObject);

impl SurfaceHandle {
    /// The handle as the driver API's `CUsurfObject` (the kernel's
    /// `cudaSurfaceObject_t`).
    pub fn as_raw(self) -> CUsurfObject {
        self.0
    }
}

impl std::fmt::Debug for SurfaceHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SurfaceHandle({:#x})", self.0)
    }
}

impl<'c, T: ArrayElement> Array<'c, T> {
    /// A texture over this array; see [`Texture::from_array`].
    ///
    /// # Errors
    ///
    /// As [`Texture::from_array`].
    pub fn texture(&self, desc: &TextureDesc) -> Result<Texture<'_>> {
        Texture::from_array(self, desc)
    }

    /// A surface over this array; see [`Surface::new`].
    ///
    /// # Errors
    ///
    /// As [`Surface::new`].
    pub fn surface(&mut self) -> Result<Surface<'_>> {
        Surface::new(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fmt<T: ArrayElement>() -> ChannelFormat {
        T::FORMAT
    }

    #[test]
    fn wrap_and_mirror_need_normalized_coordinates() {
        for mode in [AddressMode::Wrap, AddressMode::Mirror] {
            let desc = TextureDesc::new().address(mode);
            assert_eq!(
                desc.check(fmt::<f32>(), Resource::Array),
                Err(TextureError::NeedsNormalizedCoordinates { mode: mode.name() })
            );
            assert!(desc
                .normalized_coordinates(true)
                .check(fmt::<f32>(), Resource::Array)
                .is_ok());
        }
        for mode in [AddressMode::Clamp, AddressMode::Border] {
            assert!(TextureDesc::new()
                .address(mode)
                .check(fmt::<f32>(), Resource::Pitched)
                .is_ok());
        }
        let mixed = TextureDesc::new().address_per_dimension([
            AddressMode::Clamp,
            AddressMode::Mirror,
            AddressMode::Clamp,
        ]);
        assert!(matches!(
            mixed.check(fmt::<f32>(), Resource::Array),
            Err(TextureError::NeedsNormalizedCoordinates { mode: "Mirror" })
        ));
    }

    #[test]
    fn linear_filtering_needs_float_results() {
        let linear = TextureDesc::new().filter(FilterMode::Linear);
        assert!(linear.check(fmt::<f32>(), Resource::Array).is_ok());
        assert!(linear
            .check(fmt::<[F16Alias; 4]>(), Resource::Array)
            .is_ok());
        assert!(matches!(
            linear.check(fmt::<u8>(), Resource::Array),
            Err(TextureError::LinearFilterNeedsFloat { .. })
        ));
        let promoted = linear.read_mode(ReadMode::NormalizedFloat);
        assert!(promoted.check(fmt::<u8>(), Resource::Array).is_ok());
        assert!(promoted.check(fmt::<[i16; 2]>(), Resource::Array).is_ok());
        assert_eq!(
            promoted.check(fmt::<u32>(), Resource::Array),
            Err(TextureError::NormalizedRead32 { kind: "U32" })
        );
        assert!(matches!(
            TextureDesc::new()
                .read_mode(ReadMode::NormalizedFloat)
                .check(fmt::<i32>(), Resource::Array),
            Err(TextureError::NormalizedRead32 { .. })
        ));
    }

    type F16Alias = crate::memory::F16;

    #[test]
    fn linear_memory_is_fetched_by_index() {
        assert!(TextureDesc::new()
            .check(fmt::<f32>(), Resource::Linear)
            .is_ok());
        assert!(matches!(
            TextureDesc::new()
                .filter(FilterMode::Linear)
                .check(fmt::<f32>(), Resource::Linear),
            Err(TextureError::LinearMemory { .. })
        ));
        assert!(matches!(
            TextureDesc::new()
                .normalized_coordinates(true)
                .check(fmt::<f32>(), Resource::Linear),
            Err(TextureError::LinearMemory { .. })
        ));
    }

    #[test]
    fn the_descriptor_carries_modes_and_flags() {
        let desc = TextureDesc::new()
            .address_per_dimension([AddressMode::Wrap, AddressMode::Mirror, AddressMode::Border])
            .filter(FilterMode::Linear)
            .normalized_coordinates(true)
            .border_color([1.0, 2.0, 3.0, 4.0]);
        let raw = desc.raw(fmt::<f32>());
        assert_eq!(raw.addressMode[0], CUaddress_mode::CU_TR_ADDRESS_MODE_WRAP);
        assert_eq!(
            raw.addressMode[1],
            CUaddress_mode::CU_TR_ADDRESS_MODE_MIRROR
        );
        assert_eq!(
            raw.addressMode[2],
            CUaddress_mode::CU_TR_ADDRESS_MODE_BORDER
        );
        assert_eq!(raw.filterMode, CUfilter_mode::CU_TR_FILTER_MODE_LINEAR);
        assert_eq!(raw.flags, CU_TRSF_NORMALIZED_COORDINATES);
        assert_eq!(raw.borderColor, [1.0, 2.0, 3.0, 4.0]);
        assert!(raw.reserved.iter().all(|&r| r == 0));
        let ints = TextureDesc::new().raw(fmt::<[u16; 2]>());
        assert_eq!(ints.flags, CU_TRSF_READ_AS_INTEGER);
        let promoted = TextureDesc::new()
            .read_mode(ReadMode::NormalizedFloat)
            .raw(fmt::<u8>());
        assert_eq!(promoted.flags, 0);
    }

    #[test]
    fn handles_show_their_number_and_give_it_back() {
        let t = TextureHandle(0x1234);
        assert_eq!(t.as_raw(), 0x1234);
        assert_eq!(format!("{t:?}"), "TextureHandle(0x1234)");
        let s = SurfaceHandle(0xabc);
        assert_eq!(s.as_raw(), 0xabc);
        assert_eq!(format!("{s:?}"), "SurfaceHandle(0xabc)");
    }

    #[test]
    fn errors_read_as_sentences() {
        let e: crate::Error = TextureError::NeedsNormalizedCoordinates { mode: "Wrap" }.into();
        assert!(e.to_string().contains("normalized coordinates"), "{e}");
        assert!(TextureError::NotSurfaceCapable
            .to_string()
            .contains("surface_array"));
    }
}
