//! Memory: device, pinned host and unified buffers of plain-data elements.
//!
//! # Who may touch what, and when
//!
//! - Device memory ([`DeviceBuffer`], [`DeviceView`]) is not Rust memory:
//!   the host only reaches it through copies. Its contents may be written
//!   through a shared reference, and synchronous copies take `&self`.
//! - Host-visible memory ([`PinnedBuffer`], [`UnifiedBuffer`]) is Rust
//!   memory. Work that may write it borrows it exclusively; work that reads
//!   it borrows it shared.
//! - Asynchronous work happens only inside a [`Scope`](crate::Scope)
//!   (`ctx.scope(|s| ...)`), which borrows every buffer it uses until the
//!   scope ends and synchronizes every stream it used before it returns,
//!   also when the closure panics. So no buffer is dropped, and no host
//!   slice of a unified or pinned buffer is handed out, while the device
//!   may still use it.
//!
//! Sizes are checked before any driver call: zero elements and byte counts
//! that overflow `usize` are typed errors.

pub(crate) mod buffer;
pub(crate) mod image;
pub(crate) mod transfer;

pub use buffer::pool;
pub use image::{array, pitched, tensor_map, texture};
pub use transfer::registered::RegisteredHost;
pub use transfer::staged;

pub use buffer::device::{DeviceBuffer, DeviceView};
pub use buffer::element::{
    name_hash, Bf16, DeviceCopy, ElementType, Scalar, StructName, F16, F8E4M3, F8E5M2,
};
pub use buffer::imported::ImportedBuffer;
pub use buffer::pinned::PinnedBuffer;
pub use buffer::pool::{MemPool, OrderedStream, PoolBuffer, PoolUsage, ReusePolicy};
pub use buffer::unified::{Attach, HostSlice, HostSliceMut, UnifiedBuffer};
pub use buffer::virtual_mem::VirtualBuffer;

use crate::context::stream_state::StreamOrigin;
use std::ops::{Bound, RangeBounds};

use cuda_sys::CUdeviceptr;

use crate::context::Context;
use crate::error::{Error, Result};

/// Checks that two lengths match.
pub(crate) fn same_len(what: &'static str, expected: usize, got: usize) -> Result<()> {
    if expected == got {
        Ok(())
    } else {
        Err(Error::LengthMismatch {
            what,
            expected,
            got,
        })
    }
}

/// Refuses a device-to-device copy whose source and destination overlap
/// (`bytes` from `src` and from `dst`): CUDA's copies do not move
/// overlapping memory, and the result would be undefined (two views of one
/// buffer can be a source and a destination at once).
pub(crate) fn no_overlap(what: &'static str, src: u64, dst: u64, bytes: usize) -> Result<()> {
    let n = bytes as u64;
    if src < dst.saturating_add(n) && dst < src.saturating_add(n) {
        return Err(Error::InvalidArgument(format!(
            "{what}: the source and the destination overlap ({bytes} bytes from {src:#x} and \
             from {dst:#x}); a copy does not move overlapping memory: copy through a \
             temporary buffer"
        )));
    }
    Ok(())
}

/// Bytes of `len` elements of `T`, refusing zero and overflow.
pub(crate) fn byte_len<T>(len: usize, what: &'static str) -> Result<usize> {
    if len == 0 {
        return Err(Error::ZeroLength { what });
    }
    let size = std::mem::size_of::<T>();
    if size == 0 {
        return Err(Error::InvalidArgument(format!(
            "{what}: zero-sized element types cannot be stored in CUDA memory"
        )));
    }
    len.checked_mul(size).ok_or(Error::SizeOverflow {
        len,
        elem_size: size,
    })
}

/// `value`'s bytes as the word of a `cuMemsetD8/16/32` (and of a memset
/// node): zero-extended to 32 bits for elements of 1, 2 or 4 bytes; `None`
/// for other sizes, which a memset cannot write.
pub(crate) fn memset_word<T: DeviceCopy>(value: T) -> Option<u32> {
    let size = std::mem::size_of::<T>();
    if !matches!(size, 1 | 2 | 4) {
        return None;
    }
    let mut raw = [0u8; 4];
    // SAFETY: `value` is `size` (1, 2 or 4) readable bytes, all initialised
    // (DeviceCopy forbids padding); `raw` has 4.
    unsafe {
        std::ptr::copy_nonoverlapping((&value as *const T).cast::<u8>(), raw.as_mut_ptr(), size)
    };
    Some(match size {
        1 => u32::from(raw[0]),
        2 => u32::from(u16::from_ne_bytes([raw[0], raw[1]])),
        _ => u32::from_ne_bytes(raw),
    })
}

/// The alignment every CUDA allocation guarantees: `cuMemAlloc`,
/// `cuMemAllocManaged` and `cuMemHostAlloc` return memory aligned for any
/// variable, which the CUDA programming guide puts at 256 bytes at least.
pub const GUARANTEED_ALIGN: usize = 256;

/// Refuses element types more aligned than [`GUARANTEED_ALIGN`], before
/// any driver call.
pub(crate) fn check_align<T>(what: &'static str) -> Result<()> {
    let align = std::mem::align_of::<T>();
    if align > GUARANTEED_ALIGN {
        return Err(Error::Alignment {
            what,
            type_name: std::any::type_name::<T>(),
            align,
            limit: GUARANTEED_ALIGN,
        });
    }
    Ok(())
}

/// Refuses an allocation the driver returned misaligned for `T` (never
/// seen; checked because host slices of it are made).
pub(crate) fn check_ptr_align<T>(what: &'static str, address: usize) -> Result<()> {
    let align = std::mem::align_of::<T>();
    if address % align != 0 {
        return Err(Error::Alignment {
            what,
            type_name: std::any::type_name::<T>(),
            align,
            limit: 1 << address.trailing_zeros(),
        });
    }
    Ok(())
}

/// Resolves a range against a length.
pub(crate) fn resolve_range(range: impl RangeBounds<usize>, len: usize) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1).ok_or(Error::OutOfBounds {
            start: s,
            end: s,
            len,
        })?,
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e
            .checked_add(1)
            .ok_or(Error::OutOfBounds { start, end: e, len })?,
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(Error::OutOfBounds { start, end, len });
    }
    if start == end {
        return Err(Error::ZeroLength { what: "view" });
    }
    Ok((start, end))
}

mod sealed {
    pub trait Sealed {}
}

/// Device-addressable memory that device work may **read** for the lifetime
/// `'a`: `&DeviceBuffer`, [`DeviceView`], `&UnifiedBuffer`.
///
/// Sealed: only cudakit's buffer types implement it.
pub trait DeviceSrc<'a, T: DeviceCopy>: sealed::Sealed {
    /// The context the memory belongs to.
    fn context(&self) -> &'a Context;
    /// The device address of the first element.
    fn device_ptr(&self) -> DevicePtr;
    /// Number of elements.
    fn len(&self) -> usize;
    /// Always `false`: cudakit has no empty buffers.
    fn is_empty(&self) -> bool {
        false
    }
    /// For stream-ordered memory: the stream it was allocated on.
    #[doc(hidden)]
    fn origin(&self) -> Option<StreamOrigin> {
        None
    }
}

/// Device-addressable memory that device work may **write** for the
/// lifetime `'a`: `&DeviceBuffer` and [`DeviceView`] (device memory is not
/// Rust memory), and `&mut UnifiedBuffer` (host-visible, so exclusively).
///
/// Sealed: only cudakit's buffer types implement it.
pub trait DeviceDst<'a, T: DeviceCopy>: sealed::Sealed {
    /// The context the memory belongs to.
    fn context(&self) -> &'a Context;
    /// The device address of the first element.
    fn device_ptr(&self) -> DevicePtr;
    /// Number of elements.
    fn len(&self) -> usize;
    /// Always `false`: cudakit has no empty buffers.
    fn is_empty(&self) -> bool {
        false
    }
    /// For stream-ordered memory: the stream it was allocated on.
    #[doc(hidden)]
    fn origin(&self) -> Option<StreamOrigin> {
        None
    }
}

pub(crate) use sealed::Sealed;

/// A device address, as a buffer hands it out.
///
/// It is deliberately not [`DeviceCopy`], so it cannot be passed to a
/// kernel: a buffer is passed as itself (`params![&buffer]`), which keeps it
/// borrowed, and checked for its context, until the work is done. Passing a
/// buffer's address as a plain number does not compile:
///
/// ```compile_fail,E0277
/// # fn main() -> cudakit::Result<()> {
/// let ctx = cudakit::Context::new(0)?;
/// let buffer = ctx.alloc::<f32>(16)?;
/// let params = cudakit::params![buffer.device_ptr()]; // error: not a KernelArg
/// # drop(params); Ok(()) }
/// ```
///
/// [`DevicePtr::as_raw`] gives the number for FFI and for device-side data
/// structures. A raw address passed to a kernel escapes every check
/// (lifetime, context, length): see the `# Safety` section of
/// [`Scope::launch`](crate::Scope::launch).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DevicePtr(CUdeviceptr);

impl DevicePtr {
    pub(crate) fn new(raw: CUdeviceptr) -> Self {
        DevicePtr(raw)
    }

    /// The address as the driver API's `CUdeviceptr`.
    pub fn as_raw(self) -> CUdeviceptr {
        self.0
    }
}

impl std::fmt::Debug for DevicePtr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DevicePtr({:#x})", self.0)
    }
}

impl std::fmt::LowerHex for DevicePtr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::LowerHex::fmt(&self.0, f)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn memset_words_zero_extend_1_2_and_4_byte_elements() {
        use super::memset_word;
        assert_eq!(memset_word(0xA5u8), Some(0xA5));
        assert_eq!(memset_word(-1i8), Some(0xFF));
        assert_eq!(memset_word(0xBEEFu16), Some(0xBEEF));
        assert_eq!(memset_word(1.5f32), Some(1.5f32.to_bits()));
        assert_eq!(memset_word(-2i32), Some(0xFFFF_FFFE));
        assert_eq!(memset_word(1.0f64), None);
        assert_eq!(memset_word(7u64), None);
    }

    use super::*;

    #[test]
    fn sizes_are_checked_before_the_driver() {
        assert_eq!(byte_len::<f32>(4, "x").unwrap(), 16);
        assert!(matches!(
            byte_len::<f32>(0, "allocation"),
            Err(Error::ZeroLength { what: "allocation" })
        ));
        assert!(matches!(
            byte_len::<u64>(usize::MAX / 4, "allocation"),
            Err(Error::SizeOverflow { elem_size: 8, .. })
        ));
        assert!(matches!(
            byte_len::<()>(3, "x"),
            Err(Error::InvalidArgument(_))
        ));
    }

    #[test]
    fn ranges_are_checked() {
        assert_eq!(resolve_range(.., 10).unwrap(), (0, 10));
        assert_eq!(resolve_range(2..5, 10).unwrap(), (2, 5));
        assert_eq!(resolve_range(2..=5, 10).unwrap(), (2, 6));
        assert!(matches!(
            resolve_range(5..11, 10),
            Err(Error::OutOfBounds { .. })
        ));
        assert!(matches!(
            resolve_range(5..5, 10),
            Err(Error::ZeroLength { .. })
        ));
        #[allow(clippy::reversed_empty_ranges)]
        let reversed = resolve_range(6..5, 10);
        assert!(matches!(reversed, Err(Error::OutOfBounds { .. })));
        assert!(matches!(
            resolve_range(0..=usize::MAX, 10),
            Err(Error::OutOfBounds { .. })
        ));
    }
}
