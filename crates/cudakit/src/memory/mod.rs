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

pub(crate) mod copy;
mod device;
mod element;
mod pinned;
mod unified;

pub use device::{DeviceBuffer, DeviceView};
pub use element::{Bf16, DeviceCopy, F16};
pub use pinned::PinnedBuffer;
pub use unified::{Attach, UnifiedBuffer};

use std::ops::{Bound, RangeBounds};

use cuda_sys::CUdeviceptr;

use crate::context::Context;
use crate::error::{Error, Result};

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
    fn device_ptr(&self) -> CUdeviceptr;
    /// Number of elements.
    fn len(&self) -> usize;
    /// Always `false`: cudakit has no empty buffers.
    fn is_empty(&self) -> bool {
        false
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
    fn device_ptr(&self) -> CUdeviceptr;
    /// Number of elements.
    fn len(&self) -> usize;
    /// Always `false`: cudakit has no empty buffers.
    fn is_empty(&self) -> bool {
        false
    }
}

pub(crate) use sealed::Sealed;

#[cfg(test)]
mod tests {
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
