//! Work on CUDA arrays and pitched memory: copies queued in a [`Scope`],
//! and texture and surface objects as kernel arguments.
//!
//! A [`Texture`] is passed as `&texture` (a reader: the texture, and
//! through it the memory it samples, stay borrowed until the scope ends); a
//! [`Surface`] as `&mut surface` (a writer: the surface borrows its array
//! exclusively, and the launch borrows the surface exclusively, so nothing
//! else reads or writes the array while the kernel may write it). Their
//! handles ([`TextureHandle`](crate::memory::texture::TextureHandle),
//! [`SurfaceHandle`](crate::memory::texture::SurfaceHandle)) are not
//! arguments.

use crate::context::same_context;
use crate::error::Result;
use crate::memory::image::array::{Array, ArrayElement};
use crate::memory::image::copy3d::{copy3d_async, Side};
use crate::memory::image::pitched::{copy2d_async, Pitched};
use crate::memory::image::texture::{Surface, Texture};
use crate::memory::same_len;
use crate::memory::DeviceCopy;
use crate::work::launch::params::{sealed, ArgKind, ArgType, KernelArg, ParamList};
use crate::work::scope::{Scope, Timed};
use crate::work::stream::Stream;

impl<'s> Scope<'s, '_> {
    /// Copies `src`, every element in row-major order, into `dst` on
    /// `stream` (`cuMemcpy3DAsync_v2`). Both stay borrowed until the scope
    /// ends.
    ///
    /// # Errors
    ///
    /// Length and context mismatches; driver errors.
    pub fn copy_to_array<T: ArrayElement>(
        &self,
        stream: &'s Stream<'_>,
        src: &'s [T],
        dst: &'s Array<'_, T>,
    ) -> Result<()> {
        same_len("copy_to_array", dst.len(), src.len())?;
        same_context("copy_to_array", self.context(), dst.context())?;
        let (w, h, _) = dst.shape().extent();
        let desc = dst.linear_copy(
            Side::Host {
                ptr: src.as_ptr().cast(),
                pitch: w * std::mem::size_of::<T>(),
                height: h,
            },
            true,
        );
        let raw = self.use_stream_after_all(stream)?;
        let t = self.time_start(&raw)?;
        // SAFETY: `src` holds every element, packed, and it and the array are
        // borrowed until the scope has synchronized this stream.
        unsafe { copy3d_async(self.context(), *raw, &desc) }?;
        self.time_end(|| Timed::HtoD, &raw, t)
    }

    /// Copies `src` into `dst`, in row-major order, on `stream`
    /// (`cuMemcpy3DAsync_v2`). `dst` is borrowed exclusively until the
    /// scope ends.
    ///
    /// # Errors
    ///
    /// Length and context mismatches; driver errors.
    pub fn copy_from_array<T: ArrayElement>(
        &self,
        stream: &'s Stream<'_>,
        src: &'s Array<'_, T>,
        dst: &'s mut [T],
    ) -> Result<()> {
        same_len("copy_from_array", src.len(), dst.len())?;
        same_context("copy_from_array", self.context(), src.context())?;
        let (w, h, _) = src.shape().extent();
        let desc = src.linear_copy(
            Side::Host {
                ptr: dst.as_mut_ptr().cast_const().cast(),
                pitch: w * std::mem::size_of::<T>(),
                height: h,
            },
            false,
        );
        let raw = self.use_stream_after_all(stream)?;
        let t = self.time_start(&raw)?;
        // SAFETY: `dst` has room for every element and is borrowed
        // exclusively, the array shared, until the scope has synchronized
        // this stream; every bit pattern is a valid `T`.
        unsafe { copy3d_async(self.context(), *raw, &desc) }?;
        self.time_end(|| Timed::DtoH, &raw, t)
    }

    /// Copies packed rows from `src` into a pitched allocation on `stream`
    /// (`cuMemcpy2DAsync_v2`).
    ///
    /// # Errors
    ///
    /// Length and context mismatches; driver errors.
    pub fn copy_to_pitched<T: DeviceCopy>(
        &self,
        stream: &'s Stream<'_>,
        src: &'s [T],
        dst: &'s Pitched<'_, T>,
    ) -> Result<()> {
        same_len("copy_to_pitched", dst.len(), src.len())?;
        same_context("copy_to_pitched", self.context(), dst.context())?;
        let desc = dst.packed_copy(dst.host_rows(src.as_ptr().cast()), true);
        let raw = self.use_stream_after_all(stream)?;
        let t = self.time_start(&raw)?;
        // SAFETY: `src` holds `height` packed rows; both are borrowed until
        // the scope has synchronized this stream.
        unsafe { copy2d_async(self.context(), *raw, &desc) }?;
        self.time_end(|| Timed::HtoD, &raw, t)
    }

    /// Copies a pitched allocation's rows, packed, into `dst` on `stream`
    /// (`cuMemcpy2DAsync_v2`).
    ///
    /// # Errors
    ///
    /// Length and context mismatches; driver errors.
    pub fn copy_from_pitched<T: DeviceCopy>(
        &self,
        stream: &'s Stream<'_>,
        src: &'s Pitched<'_, T>,
        dst: &'s mut [T],
    ) -> Result<()> {
        same_len("copy_from_pitched", src.len(), dst.len())?;
        same_context("copy_from_pitched", self.context(), src.context())?;
        let desc = src.packed_copy(src.host_rows(dst.as_mut_ptr().cast_const().cast()), false);
        let raw = self.use_stream_after_all(stream)?;
        let t = self.time_start(&raw)?;
        // SAFETY: `dst` has room for `height` packed rows, borrowed
        // exclusively until the scope has synchronized this stream; every
        // bit pattern is a valid `T`.
        unsafe { copy2d_async(self.context(), *raw, &desc) }?;
        self.time_end(|| Timed::DtoH, &raw, t)
    }
}

fn push_object(
    list: &mut ParamList<'_>,
    raw: u64,
    object: &'static str,
    type_name: &'static str,
    ctx: &crate::Context,
    ty: &'static ArgType,
) {
    list.push_bytes(
        &raw.to_ne_bytes(),
        std::mem::align_of::<u64>(),
        type_name,
        ArgKind::Object {
            object,
            device: ctx.device().ordinal(),
        },
        ctx.id(),
        ty,
    );
}

impl sealed::Sealed for &Texture<'_> {}
/// `cudaTextureObject_t`: the texture, and the memory it samples, stay
/// borrowed for `'a`.
impl<'a> KernelArg<'a> for &'a Texture<'_> {
    fn push_into(self, list: &mut ParamList<'a>) {
        push_object(
            list,
            self.handle().as_raw(),
            "texture",
            "cudaTextureObject_t",
            self.context(),
            &ArgType::Texture,
        );
    }
}

impl sealed::Sealed for &mut Surface<'_> {}
/// `cudaSurfaceObject_t`: a writer's argument; the surface (and so its
/// array) stays borrowed exclusively for `'a`.
impl<'a> KernelArg<'a> for &'a mut Surface<'_> {
    fn push_into(self, list: &mut ParamList<'a>) {
        push_object(
            list,
            self.handle().as_raw(),
            "surface",
            "cudaSurfaceObject_t",
            self.context(),
            &ArgType::Surface,
        );
    }
}
