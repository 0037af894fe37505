//! The copy descriptors 2D and 3D copies share: the sides of a copy
//! ([`Side`]), its size ([`Extent`]), the `CUDA_MEMCPY3D` they make
//! ([`memcpy3d`]), and the 3D copies themselves (`cuMemcpy3D_v2`,
//! `cuMemcpy3DAsync_v2`).

use std::ffi::c_void;
use std::time::Instant;

use cuda_sys::{CUarray, CUdeviceptr, CUmemorytype, CUstream, CUDA_MEMCPY3D};

use crate::context::Context;
use crate::error::Result;
use crate::memory::transfer::copy::{file_copy, sync_legacy};

/// One side of a 2D or 3D copy.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Side {
    /// Host memory: `height` rows of `pitch` bytes per slice.
    Host {
        ptr: *const c_void,
        pitch: usize,
        height: usize,
    },
    /// Linear device memory, laid out as a host side.
    Device {
        ptr: CUdeviceptr,
        pitch: usize,
        height: usize,
    },
    /// A CUDA array.
    Array(CUarray),
}

impl Side {
    /// Host memory of a linear copy (no pitch).
    pub(crate) fn host(ptr: *const c_void) -> Side {
        Side::Host {
            ptr,
            pitch: 0,
            height: 0,
        }
    }

    /// Device memory of a linear copy (no pitch).
    pub(crate) fn device(ptr: CUdeviceptr) -> Side {
        Side::Device {
            ptr,
            pitch: 0,
            height: 0,
        }
    }
}

/// The size of a copy.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Extent {
    pub(crate) width_bytes: usize,
    pub(crate) height: usize,
    pub(crate) depth: usize,
}

/// The `CUDA_MEMCPY3D` of a copy from `src` to `dst` of `extent`.
pub(crate) fn memcpy3d(src: Side, dst: Side, extent: Extent) -> CUDA_MEMCPY3D {
    // All-zero bytes (cuda-sys's `Default`) is the header's "unused" value
    // for each field (offsets 0, null pointers; `reserved0/1` must be null).
    let mut d = CUDA_MEMCPY3D::default();
    match src {
        Side::Host { ptr, pitch, height } => {
            d.srcMemoryType = CUmemorytype::CU_MEMORYTYPE_HOST;
            d.srcHost = ptr;
            d.srcPitch = pitch;
            d.srcHeight = height;
        }
        Side::Device { ptr, pitch, height } => {
            d.srcMemoryType = CUmemorytype::CU_MEMORYTYPE_DEVICE;
            d.srcDevice = ptr;
            d.srcPitch = pitch;
            d.srcHeight = height;
        }
        Side::Array(array) => {
            d.srcMemoryType = CUmemorytype::CU_MEMORYTYPE_ARRAY;
            d.srcArray = array;
        }
    }
    match dst {
        Side::Host { ptr, pitch, height } => {
            d.dstMemoryType = CUmemorytype::CU_MEMORYTYPE_HOST;
            d.dstHost = ptr.cast_mut();
            d.dstPitch = pitch;
            d.dstHeight = height;
        }
        Side::Device { ptr, pitch, height } => {
            d.dstMemoryType = CUmemorytype::CU_MEMORYTYPE_DEVICE;
            d.dstDevice = ptr;
            d.dstPitch = pitch;
            d.dstHeight = height;
        }
        Side::Array(array) => {
            d.dstMemoryType = CUmemorytype::CU_MEMORYTYPE_ARRAY;
            d.dstArray = array;
        }
    }
    d.WidthInBytes = extent.width_bytes;
    d.Height = extent.height;
    d.Depth = extent.depth;
    d
}

fn bytes_of(desc: &CUDA_MEMCPY3D) -> usize {
    desc.WidthInBytes * desc.Height * desc.Depth
}

fn file(ctx: &Context, desc: &CUDA_MEMCPY3D, time: Option<std::time::Duration>) {
    file_copy(
        ctx,
        (desc.srcMemoryType, desc.dstMemoryType),
        bytes_of(desc),
        time,
    );
}

/// A synchronous 3D copy (`cuMemcpy3D_v2`), done when it returns (the
/// legacy stream, where it is queued, is waited for).
///
/// # Safety
///
/// Every side of `desc` must address live memory of this context (arrays,
/// device memory) or of the host, of the extent and pitches it states, for
/// the duration of the call; a host destination must be writable and valid
/// for every bit pattern written.
pub(crate) unsafe fn copy3d(ctx: &Context, desc: &CUDA_MEMCPY3D) -> Result<()> {
    let cu = ctx.enter()?;
    let _work = ctx.sync_work()?;
    let t = Instant::now();
    // SAFETY: the caller's contract; the descriptor lives for the call.
    let rc = unsafe { (cu.cuMemcpy3D)(desc) };
    ctx.check("cuMemcpy3D_v2", rc)?;
    sync_legacy(ctx)?;
    file(ctx, desc, Some(t.elapsed()));
    Ok(())
}

/// A 3D copy on `stream` (`cuMemcpy3DAsync_v2`).
///
/// # Safety
///
/// As [`copy3d`], for as long as the stream may run the copy: until the
/// stream has been synchronized.
pub(crate) unsafe fn copy3d_async(
    ctx: &Context,
    stream: CUstream,
    desc: &CUDA_MEMCPY3D,
) -> Result<()> {
    let cu = ctx.enter()?;
    // SAFETY: the caller's contract; the driver reads the descriptor during
    // the call only.
    let rc = unsafe { (cu.cuMemcpy3DAsync)(desc, stream) };
    ctx.check("cuMemcpy3DAsync_v2", rc)?;
    file(ctx, desc, None);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_descriptors_fill_the_sides_they_name() {
        let host = [0u8; 64];
        let d = memcpy3d(
            Side::Host {
                ptr: host.as_ptr().cast(),
                pitch: 12,
                height: 2,
            },
            Side::Device {
                ptr: 0x1000,
                pitch: 512,
                height: 2,
            },
            Extent {
                width_bytes: 12,
                height: 2,
                depth: 1,
            },
        );
        assert_eq!(d.srcMemoryType, CUmemorytype::CU_MEMORYTYPE_HOST);
        assert_eq!(d.srcHost, host.as_ptr().cast());
        assert_eq!((d.srcPitch, d.srcHeight), (12, 2));
        assert_eq!(d.dstMemoryType, CUmemorytype::CU_MEMORYTYPE_DEVICE);
        assert_eq!((d.dstDevice, d.dstPitch), (0x1000, 512));
        assert!(d.reserved0.is_null() && d.reserved1.is_null());
        assert_eq!(bytes_of(&d), 24);
        let d = memcpy3d(
            Side::Array(std::ptr::null_mut()),
            Side::Host {
                ptr: host.as_ptr().cast(),
                pitch: 4,
                height: 1,
            },
            Extent {
                width_bytes: 4,
                height: 1,
                depth: 3,
            },
        );
        assert_eq!(d.srcMemoryType, CUmemorytype::CU_MEMORYTYPE_ARRAY);
        assert_eq!(d.dstMemoryType, CUmemorytype::CU_MEMORYTYPE_HOST);
        assert_eq!(d.Depth, 3);
    }
}
