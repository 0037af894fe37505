//! Pitched 2D device memory (`cuMemAllocPitch_v2`): `height` rows of
//! `width` elements, each row starting `pitch` bytes after the one before,
//! the pitch chosen by the driver for coalesced access and texture
//! alignment. Copies are 2D (`cuMemcpy2D_v2`), so rows of any width, odd
//! ones included, land at the pitch.
//!
//! ```no_run
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let rows = ctx.alloc_pitched::<f32>(37, 5)?; // 37 floats per row
//! assert!(rows.pitch() >= 37 * 4);
//! rows.copy_from_host(&vec![1.0; 37 * 5])?;
//! assert_eq!(rows.to_vec()?, vec![1.0; 37 * 5]);
//! # Ok(()) }
//! ```

use std::ffi::{c_uint, c_void};
use std::marker::PhantomData;
use std::panic::Location;
use std::time::Instant;

use cuda_sys::{CUdeviceptr, CUmemorytype, CUstream, CUDA_MEMCPY2D};

use super::copy3d::Side;
use crate::context::arena::AllocKind;
use crate::context::{same_context, Context};
use crate::error::{Error, Result};
use crate::memory::transfer::copy::{file_copy, sync_legacy};
use crate::memory::{
    check_align, memset_word, same_len, DeviceCopy, DeviceDst, DevicePtr, DeviceSrc,
};

/// `height` rows of `width` elements of `T` at a driver-chosen pitch
/// (`cuMemAllocPitch_v2`), freed on drop (`cuMemFree_v2`) and recorded in
/// the context's arena as device memory.
pub struct Pitched<'c, T: DeviceCopy> {
    ctx: &'c Context,
    ptr: CUdeviceptr,
    pitch: usize,
    width: usize,
    height: usize,
    id: u64,
    _marker: PhantomData<T>,
}

impl<T: DeviceCopy> std::fmt::Debug for Pitched<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pitched")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("width", &self.width)
            .field("height", &self.height)
            .field("pitch", &self.pitch)
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

/// `cuMemAllocPitch_v2`'s `ElementSizeBytes` (4, 8 or 16: the widest
/// access the rows should suit) for elements of `size` bytes.
pub(crate) fn access_size(size: usize) -> c_uint {
    if size % 16 == 0 {
        16
    } else if size % 8 == 0 {
        8
    } else {
        4
    }
}

impl Context {
    /// Allocates `height` rows of `width` elements at a pitch the driver
    /// chooses (`cuMemAllocPitch_v2`). The contents are unspecified.
    ///
    /// # Errors
    ///
    /// [`Error::ZeroLength`] and [`Error::SizeOverflow`] before the driver;
    /// driver errors; [`Error::ContextPoisoned`].
    #[track_caller]
    pub fn alloc_pitched<T: DeviceCopy>(
        &self,
        width: usize,
        height: usize,
    ) -> Result<Pitched<'_, T>> {
        Pitched::create(self, width, height, Location::caller())
    }
}

impl<'c, T: DeviceCopy> Pitched<'c, T> {
    fn create(
        ctx: &'c Context,
        width: usize,
        height: usize,
        location: &'static Location<'static>,
    ) -> Result<Self> {
        if width == 0 || height == 0 {
            return Err(Error::ZeroLength {
                what: "pitched allocation",
            });
        }
        check_align::<T>("pitched allocation")?;
        let size = std::mem::size_of::<T>();
        let row = crate::memory::byte_len::<T>(width, "pitched allocation")?;
        row.checked_mul(height).ok_or(Error::SizeOverflow {
            len: width.saturating_mul(height),
            elem_size: size,
        })?;
        let cu = ctx.enter()?;
        let (mut ptr, mut pitch): (CUdeviceptr, usize) = (0, 0);
        // SAFETY: valid out-pointers, non-zero sizes and an access size of
        // 4, 8 or 16; the context is current.
        let rc =
            unsafe { (cu.cuMemAllocPitch)(&mut ptr, &mut pitch, row, height, access_size(size)) };
        ctx.check("cuMemAllocPitch_v2", rc)?;
        let id = ctx
            .arena()
            .record_alloc(AllocKind::Device, pitch * height, location);
        Ok(Pitched {
            ctx,
            ptr,
            pitch,
            width,
            height,
            id,
            _marker: PhantomData,
        })
    }

    /// The context.
    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    /// The device address of row 0.
    pub fn device_ptr(&self) -> DevicePtr {
        DevicePtr::new(self.ptr)
    }

    /// Elements per row.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows.
    pub fn height(&self) -> usize {
        self.height
    }

    /// Bytes from the start of one row to the next (at least
    /// `width * size_of::<T>()`).
    pub fn pitch(&self) -> usize {
        self.pitch
    }

    /// Elements in all rows (`width * height`).
    pub fn len(&self) -> usize {
        self.width * self.height
    }

    /// Always `false`.
    pub fn is_empty(&self) -> bool {
        false
    }

    fn row_bytes(&self) -> usize {
        self.width * std::mem::size_of::<T>()
    }

    /// This allocation as one side of a copy.
    pub(crate) fn side(&self) -> Side {
        Side::Device {
            ptr: self.ptr,
            pitch: self.pitch,
            height: self.height,
        }
    }

    /// The 2D copy between this allocation and packed rows.
    pub(crate) fn packed_copy(&self, packed: Side, into_self: bool) -> CUDA_MEMCPY2D {
        if into_self {
            memcpy2d(packed, self.side(), self.row_bytes(), self.height)
        } else {
            memcpy2d(self.side(), packed, self.row_bytes(), self.height)
        }
    }

    /// Packed host rows of this shape.
    pub(crate) fn host_rows(&self, ptr: *const c_void) -> Side {
        Side::Host {
            ptr,
            pitch: self.row_bytes(),
            height: self.height,
        }
    }

    /// Copies `src`, `height` packed rows of `width` elements, in
    /// (`cuMemcpy2D_v2`).
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`] unless `src` holds `width * height`
    /// elements; driver errors.
    pub fn copy_from_host(&self, src: &[T]) -> Result<()> {
        same_len("Pitched::copy_from_host", self.len(), src.len())?;
        let desc = self.packed_copy(self.host_rows(src.as_ptr().cast()), true);
        // SAFETY: `src` holds `height` packed rows, borrowed for the call;
        // the allocation has `height` rows of `pitch >= row` bytes.
        unsafe { copy2d(self.ctx, &desc) }
    }

    /// Copies the rows out, packed (`cuMemcpy2D_v2`).
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`]; driver errors.
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        same_len("Pitched::copy_to_host", self.len(), dst.len())?;
        let desc = self.packed_copy(self.host_rows(dst.as_mut_ptr().cast_const().cast()), false);
        // SAFETY: `dst` has room for `height` packed rows and is borrowed
        // exclusively for the call; every bit pattern is a valid `T`.
        unsafe { copy2d(self.ctx, &desc) }
    }

    /// The rows as a vector, packed.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let len = self.len();
        let mut out: Vec<T> = Vec::with_capacity(len);
        let desc = self.packed_copy(self.host_rows(out.as_mut_ptr().cast_const().cast()), false);
        // SAFETY: the spare capacity holds `height` packed rows.
        unsafe { copy2d(self.ctx, &desc) }?;
        // SAFETY: the copy wrote all `len` elements; every bit pattern is a
        // valid `T` (DeviceCopy's contract).
        unsafe { out.set_len(len) };
        Ok(out)
    }

    /// Copies packed rows from device memory in (`cuMemcpy2D_v2`).
    ///
    /// # Errors
    ///
    /// Length and context mismatches; driver errors.
    pub fn copy_from_device<'s>(&self, src: impl DeviceSrc<'s, T>) -> Result<()> {
        same_len("Pitched::copy_from_device", self.len(), src.len())?;
        same_context("Pitched::copy_from_device", self.ctx, src.context())?;
        let packed = Side::Device {
            ptr: src.device_ptr().as_raw(),
            pitch: self.row_bytes(),
            height: self.height,
        };
        let desc = self.packed_copy(packed, true);
        // SAFETY: `src` holds `height` packed rows, borrowed for the call.
        unsafe { copy2d(self.ctx, &desc) }
    }

    /// Copies the rows into device memory, packed (`cuMemcpy2D_v2`).
    ///
    /// # Errors
    ///
    /// Length and context mismatches; driver errors.
    pub fn copy_to_device<'s>(&self, dst: impl DeviceDst<'s, T>) -> Result<()> {
        same_len("Pitched::copy_to_device", self.len(), dst.len())?;
        same_context("Pitched::copy_to_device", self.ctx, dst.context())?;
        let packed = Side::Device {
            ptr: dst.device_ptr().as_raw(),
            pitch: self.row_bytes(),
            height: self.height,
        };
        let desc = self.packed_copy(packed, false);
        // SAFETY: `dst` has room for `height` packed rows, borrowed for the call.
        unsafe { copy2d(self.ctx, &desc) }
    }

    /// Copies another pitched allocation of the same width and height in
    /// (`cuMemcpy2D_v2`; the pitches may differ).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the shapes differ; context
    /// mismatches; driver errors.
    pub fn copy_from(&self, src: &Pitched<'_, T>) -> Result<()> {
        same_context("Pitched::copy_from", self.ctx, src.ctx)?;
        if (src.width, src.height) != (self.width, self.height) {
            return Err(Error::InvalidArgument(format!(
                "Pitched::copy_from: {}x{} into {}x{}",
                src.width, src.height, self.width, self.height
            )));
        }
        let desc = memcpy2d(src.side(), self.side(), self.row_bytes(), self.height);
        // SAFETY: both allocations have `height` rows of at least `row`
        // bytes at their pitches, borrowed for the call.
        unsafe { copy2d(self.ctx, &desc) }
    }

    /// Sets every element of every row to `value`, leaving the padding at
    /// the end of each row alone (`cuMemsetD2D8/16/32_v2` for elements of
    /// 1, 2 or 4 bytes; packed rows uploaded with `cuMemcpy2D_v2` for
    /// other sizes).
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn fill(&self, value: T) -> Result<()> {
        let Some(word) = memset_word(value) else {
            return self.copy_from_host(&vec![value; self.len()]);
        };
        let cu = self.ctx.enter()?;
        let _work = self.ctx.sync_work()?;
        let (ptr, pitch, w, h) = (self.ptr, self.pitch, self.width, self.height);
        // `word` holds the element zero-extended: the casts drop only zeros.
        let (call, rc) = match std::mem::size_of::<T>() {
            // SAFETY: `h` rows of `w` 1-byte elements at `pitch`, inside the allocation.
            1 => ("cuMemsetD2D8_v2", unsafe {
                (cu.cuMemsetD2D8)(ptr, pitch, word as u8, w, h)
            }),
            // SAFETY: `h` rows of `w` 2-byte elements at `pitch`.
            2 => ("cuMemsetD2D16_v2", unsafe {
                (cu.cuMemsetD2D16)(ptr, pitch, word as u16, w, h)
            }),
            // SAFETY: `h` rows of `w` 4-byte elements at `pitch`.
            _ => ("cuMemsetD2D32_v2", unsafe {
                (cu.cuMemsetD2D32)(ptr, pitch, word, w, h)
            }),
        };
        self.ctx.check(call, rc)?;
        sync_legacy(self.ctx)
    }
}

impl<T: DeviceCopy> Drop for Pitched<'_, T> {
    fn drop(&mut self) {
        let ptr = self.ptr;
        // SAFETY: frees the allocation made in `create`, once (now, or after
        // this thread's capture, or off a driver callback thread); no device
        // work can still use it (scopes wait before their borrows end; a
        // graph's replays run only in scopes that its borrows outlive).
        self.ctx
            .release("cuMemFree_v2", Some(self.id), move |cu| unsafe {
                (cu.cuMemFree)(ptr)
            });
    }
}

/// The `CUDA_MEMCPY2D` of `height` rows of `width_bytes` from `src` to
/// `dst` (array sides address the array's first row).
pub(crate) fn memcpy2d(src: Side, dst: Side, width_bytes: usize, height: usize) -> CUDA_MEMCPY2D {
    // All-zero bytes (cuda-sys's `Default`) is the header's "unused" value
    // of every field (offsets 0, null pointers).
    let mut d = CUDA_MEMCPY2D::default();
    match src {
        Side::Host { ptr, pitch, .. } => {
            d.srcMemoryType = CUmemorytype::CU_MEMORYTYPE_HOST;
            d.srcHost = ptr;
            d.srcPitch = pitch;
        }
        Side::Device { ptr, pitch, .. } => {
            d.srcMemoryType = CUmemorytype::CU_MEMORYTYPE_DEVICE;
            d.srcDevice = ptr;
            d.srcPitch = pitch;
        }
        Side::Array(array) => {
            d.srcMemoryType = CUmemorytype::CU_MEMORYTYPE_ARRAY;
            d.srcArray = array;
        }
    }
    match dst {
        Side::Host { ptr, pitch, .. } => {
            d.dstMemoryType = CUmemorytype::CU_MEMORYTYPE_HOST;
            d.dstHost = ptr.cast_mut();
            d.dstPitch = pitch;
        }
        Side::Device { ptr, pitch, .. } => {
            d.dstMemoryType = CUmemorytype::CU_MEMORYTYPE_DEVICE;
            d.dstDevice = ptr;
            d.dstPitch = pitch;
        }
        Side::Array(array) => {
            d.dstMemoryType = CUmemorytype::CU_MEMORYTYPE_ARRAY;
            d.dstArray = array;
        }
    }
    d.WidthInBytes = width_bytes;
    d.Height = height;
    d
}

fn file(ctx: &Context, desc: &CUDA_MEMCPY2D, time: Option<std::time::Duration>) {
    file_copy(
        ctx,
        (desc.srcMemoryType, desc.dstMemoryType),
        desc.WidthInBytes * desc.Height,
        time,
    );
}

/// A synchronous 2D copy (`cuMemcpy2D_v2`), done when it returns.
///
/// # Safety
///
/// Both sides of `desc` must address live memory of the extent and pitches
/// it states (device sides of this context) for the call; a host
/// destination must be writable and valid for every bit pattern written.
pub(crate) unsafe fn copy2d(ctx: &Context, desc: &CUDA_MEMCPY2D) -> Result<()> {
    let cu = ctx.enter()?;
    let _work = ctx.sync_work()?;
    let t = Instant::now();
    // SAFETY: the caller's contract; the descriptor lives for the call.
    let rc = unsafe { (cu.cuMemcpy2D)(desc) };
    ctx.check("cuMemcpy2D_v2", rc)?;
    sync_legacy(ctx)?;
    file(ctx, desc, Some(t.elapsed()));
    Ok(())
}

/// A 2D copy on `stream` (`cuMemcpy2DAsync_v2`).
///
/// # Safety
///
/// As [`copy2d`], until the stream has been synchronized.
pub(crate) unsafe fn copy2d_async(
    ctx: &Context,
    stream: CUstream,
    desc: &CUDA_MEMCPY2D,
) -> Result<()> {
    let cu = ctx.enter()?;
    // SAFETY: the caller's contract; the descriptor is read during the call.
    let rc = unsafe { (cu.cuMemcpy2DAsync)(desc, stream) };
    ctx.check("cuMemcpy2DAsync_v2", rc)?;
    file(ctx, desc, None);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_sizes_are_four_eight_or_sixteen() {
        assert_eq!(access_size(1), 4);
        assert_eq!(access_size(2), 4);
        assert_eq!(access_size(4), 4);
        assert_eq!(access_size(12), 4);
        assert_eq!(access_size(8), 8);
        assert_eq!(access_size(24), 8);
        assert_eq!(access_size(16), 16);
        assert_eq!(access_size(48), 16);
    }

    #[test]
    fn two_d_descriptors_carry_both_pitches() {
        let host = [0u32; 10];
        let d = memcpy2d(
            Side::Host {
                ptr: host.as_ptr().cast(),
                pitch: 20,
                height: 2,
            },
            Side::Device {
                ptr: 0x2000,
                pitch: 512,
                height: 2,
            },
            20,
            2,
        );
        assert_eq!(d.srcMemoryType, CUmemorytype::CU_MEMORYTYPE_HOST);
        assert_eq!((d.srcPitch, d.dstPitch), (20, 512));
        assert_eq!((d.WidthInBytes, d.Height), (20, 2));
        assert_eq!(d.dstDevice, 0x2000);
        assert_eq!((d.srcXInBytes, d.srcY, d.dstXInBytes, d.dstY), (0, 0, 0, 0));
    }
}
