//! Page-locked host memory (`cuMemHostAlloc`).

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::panic::Location;

use cuda_sys::{CU_MEMHOSTALLOC_PORTABLE, CU_MEMHOSTALLOC_WRITECOMBINED};

use crate::context::arena::AllocKind;
use crate::context::Context;
use crate::error::Result;
use crate::memory::{byte_len, check_align, check_ptr_align, DeviceCopy};

/// Page-locked host memory for `len` elements, zero-filled, readable and
/// writable as a slice. Asynchronous copies from and to it overlap with the
/// host; inside a [`Scope`](crate::Scope), a copy that reads it borrows it
/// shared and one that writes it borrows it exclusively until the scope
/// ends.
///
/// # Panics
///
/// Its slice access panics in a child made by `fork` after the parent
/// loaded the driver. Page-locked memory stays shared with the parent
/// across `fork` (measured on the H200, driver 580: a child's write shows
/// in the parent), where the parent's copies may be reading or writing it;
/// the slice cannot report an error, and a silent shared write is worse
/// than a panic.
pub struct PinnedBuffer<'c, T: DeviceCopy> {
    ctx: &'c Context,
    ptr: *mut T,
    len: usize,
    id: u64,
    write_combined: bool,
    _marker: PhantomData<T>,
}

// SAFETY: the buffer owns its memory like a Box<[T]>; T is Send + Sync.
unsafe impl<T: DeviceCopy> Send for PinnedBuffer<'_, T> {}
// SAFETY: shared access only reads; mutation needs &mut.
unsafe impl<T: DeviceCopy> Sync for PinnedBuffer<'_, T> {}

impl<T: DeviceCopy> std::fmt::Debug for PinnedBuffer<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedBuffer")
            .field("len", &self.len)
            .field("write_combined", &self.write_combined)
            .finish()
    }
}

impl Context {
    /// Allocates page-locked host memory for `len` elements, zero-filled
    /// (`cuMemHostAlloc` with `CU_MEMHOSTALLOC_PORTABLE`).
    ///
    /// # Errors
    ///
    /// Zero length and overflow before any driver call; driver errors.
    #[track_caller]
    pub fn alloc_pinned<T: DeviceCopy>(&self, len: usize) -> Result<PinnedBuffer<'_, T>> {
        PinnedBuffer::new_at(self, len, false, Location::caller())
    }

    /// Like [`Context::alloc_pinned`], write-combined
    /// (`CU_MEMHOSTALLOC_WRITECOMBINED`): faster host-to-device transfers,
    /// but host reads of it are very slow. Use it only for buffers the host
    /// writes and never reads.
    ///
    /// # Errors
    ///
    /// As [`Context::alloc_pinned`].
    #[track_caller]
    pub fn alloc_pinned_write_combined<T: DeviceCopy>(
        &self,
        len: usize,
    ) -> Result<PinnedBuffer<'_, T>> {
        PinnedBuffer::new_at(self, len, true, Location::caller())
    }
}

impl<'c, T: DeviceCopy> PinnedBuffer<'c, T> {
    fn new_at(
        ctx: &'c Context,
        len: usize,
        write_combined: bool,
        location: &'static Location<'static>,
    ) -> Result<Self> {
        let bytes = byte_len::<T>(len, "pinned allocation")?;
        check_align::<T>("pinned allocation")?;
        let cu = ctx.enter()?;
        let mut flags = CU_MEMHOSTALLOC_PORTABLE;
        if write_combined {
            flags |= CU_MEMHOSTALLOC_WRITECOMBINED;
        }
        let mut ptr = std::ptr::null_mut();
        // SAFETY: a valid out-pointer, a non-zero size, defined flags.
        ctx.check("cuMemHostAlloc", unsafe {
            (cu.cuMemHostAlloc)(&mut ptr, bytes, flags)
        })?;
        if let Err(e) = check_ptr_align::<T>("pinned allocation", ptr as usize) {
            // SAFETY: frees the allocation just made, once.
            let rc = unsafe { (cu.cuMemFreeHost)(ptr) };
            ctx.record_drop_error("cuMemFreeHost", rc);
            return Err(e);
        }
        // SAFETY: the driver returned `bytes` writable bytes, aligned for T
        // (checked above); zeroing makes every element initialised.
        unsafe { std::ptr::write_bytes(ptr.cast::<u8>(), 0, bytes) };
        let id = ctx.arena().record_alloc(AllocKind::Pinned, bytes, location);
        Ok(PinnedBuffer {
            ctx,
            ptr: ptr.cast(),
            len,
            id,
            write_combined,
            _marker: PhantomData,
        })
    }

    /// The context.
    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    /// Whether the memory is write-combined.
    pub fn is_write_combined(&self) -> bool {
        self.write_combined
    }
}

impl<T: DeviceCopy> Deref for PinnedBuffer<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        refuse_forked_child();
        // SAFETY: `len` initialised elements owned by self; no device write
        // can be in flight while `&self` exists outside a scope, and inside a
        // scope a device write borrows the buffer exclusively.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: DeviceCopy> DerefMut for PinnedBuffer<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        refuse_forked_child();
        // SAFETY: as above, and `&mut self` excludes every other access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

/// See "Panics" on [`PinnedBuffer`].
#[inline]
fn refuse_forked_child() {
    if crate::driver::forked() {
        forked_child_access();
    }
}

#[cold]
#[inline(never)]
fn forked_child_access() -> ! {
    panic!(
        "{}: a PinnedBuffer's memory is shared with the parent process after fork",
        crate::Error::ForkedChild
    )
}

impl<T: DeviceCopy> Drop for PinnedBuffer<'_, T> {
    fn drop(&mut self) {
        let ptr = self.ptr as usize;
        // SAFETY: frees the memory from cuMemHostAlloc, once (now, or after
        // this thread's capture, or off a driver callback thread); no copy
        // can be in flight (scopes wait before their borrows end, and a
        // graph's replays run only in scopes that its borrows outlive).
        self.ctx
            .release("cuMemFreeHost", Some(self.id), move |cu| unsafe {
                (cu.cuMemFreeHost)(ptr as *mut std::ffi::c_void)
            });
    }
}
