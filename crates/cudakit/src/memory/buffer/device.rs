//! Device memory: [`DeviceBuffer`] owns an allocation, [`DeviceView`] is a
//! sub-range of one.

use crate::context::stream_state::StreamOrigin;
use std::marker::PhantomData;
use std::ops::RangeBounds;
use std::panic::Location;
use std::sync::atomic::{AtomicUsize, Ordering};

use cuda_sys::CUdeviceptr;

use crate::compile::signature::check::Container;
use crate::context::arena::AllocKind;
use crate::context::Context;
use crate::error::Result;
use crate::memory::transfer::copy;
use crate::memory::{
    byte_len, check_align, resolve_range, same_len, DeviceCopy, DeviceDst, DevicePtr, DeviceSrc,
    Sealed,
};

/// Device memory for `len` elements of `T` (`cuMemAlloc_v2`), freed on drop
/// (`cuMemFree_v2`) and recorded in the context's arena.
pub struct DeviceBuffer<'c, T: DeviceCopy> {
    ctx: &'c Context,
    ptr: CUdeviceptr,
    len: usize,
    id: u64,
    /// IPC exports not released ([`crate::ipc::Exported`]): while any is,
    /// another process may use the memory, and the drop keeps it.
    pub(crate) exports: AtomicUsize,
    _marker: PhantomData<T>,
}

impl<T: DeviceCopy> std::fmt::Debug for DeviceBuffer<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

impl Context {
    /// Allocates device memory for `len` elements (`cuMemAlloc_v2`). The
    /// contents are unspecified (any bit pattern is a valid `T`).
    ///
    /// # Errors
    ///
    /// [`Error::ZeroLength`](crate::Error::ZeroLength) and
    /// [`Error::SizeOverflow`](crate::Error::SizeOverflow) before any driver
    /// call; driver errors (out of memory); a poisoned context.
    #[track_caller]
    pub fn alloc<T: DeviceCopy>(&self, len: usize) -> Result<DeviceBuffer<'_, T>> {
        DeviceBuffer::uninit_at(self, len, Location::caller())
    }

    /// Allocates device memory and zeroes it (`cuMemsetD8_v2`).
    ///
    /// # Errors
    ///
    /// As [`Context::alloc`].
    #[track_caller]
    pub fn alloc_zeroed<T: DeviceCopy>(&self, len: usize) -> Result<DeviceBuffer<'_, T>> {
        let buf = DeviceBuffer::uninit_at(self, len, Location::caller())?;
        let bytes = byte_len::<T>(len, "allocation")?;
        // SAFETY: `buf` holds `bytes` bytes, just allocated.
        unsafe { copy::fill::<u8>(self, buf.ptr, bytes, 0) }?;
        Ok(buf)
    }

    /// Allocates device memory holding a copy of `src`.
    ///
    /// # Errors
    ///
    /// As [`Context::alloc`], and copy errors.
    #[track_caller]
    pub fn upload<T: DeviceCopy>(&self, src: &[T]) -> Result<DeviceBuffer<'_, T>> {
        let buf = DeviceBuffer::uninit_at(self, src.len(), Location::caller())?;
        // SAFETY: `buf` holds `src.len()` elements, just allocated.
        unsafe { copy::htod(self, buf.ptr, src) }?;
        Ok(buf)
    }
}

impl<'c, T: DeviceCopy> DeviceBuffer<'c, T> {
    fn uninit_at(
        ctx: &'c Context,
        len: usize,
        location: &'static Location<'static>,
    ) -> Result<Self> {
        let bytes = byte_len::<T>(len, "allocation")?;
        check_align::<T>("device allocation")?;
        let cu = ctx.enter()?;
        let mut ptr: CUdeviceptr = 0;
        // SAFETY: a valid out-pointer and a non-zero size; the context is
        // current.
        ctx.check("cuMemAlloc_v2", unsafe { (cu.cuMemAlloc)(&mut ptr, bytes) })?;
        let id = ctx.arena().record_alloc(AllocKind::Device, bytes, location);
        Ok(DeviceBuffer {
            ctx,
            ptr,
            len,
            id,
            exports: AtomicUsize::new(0),
            _marker: PhantomData,
        })
    }

    /// The context.
    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    /// The device address.
    pub fn device_ptr(&self) -> DevicePtr {
        DevicePtr::new(self.ptr)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always `false`: zero-length buffers cannot be made.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Size in bytes.
    pub fn byte_len(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// The whole buffer as a view.
    pub fn as_view(&self) -> DeviceView<'_, T> {
        DeviceView {
            ctx: self.ctx,
            ptr: self.ptr,
            len: self.len,
            origin: None,
            restricted: None,
            _marker: PhantomData,
        }
    }

    view_methods!();
}

impl<T: DeviceCopy> Drop for DeviceBuffer<'_, T> {
    fn drop(&mut self) {
        if self.exports.load(Ordering::Acquire) > 0 {
            // Exported over IPC and never released: another process may
            // still use the memory, so it is kept, and recorded as such.
            self.ctx.arena().record_leak(
                self.id,
                "exported over IPC, its Exported guard never released",
            );
            self.ctx.keep_for_export();
            return;
        }
        let ptr = self.ptr;
        // SAFETY: frees the allocation made in `uninit_at`, once (now, or
        // after this thread's capture, or off a driver callback thread). No
        // device work can still use it: work borrows the buffer inside a
        // scope, which waits for it before the borrow ends, and a graph's
        // replays run only in scopes that its borrows outlive.
        self.ctx
            .release("cuMemFree_v2", Some(self.id), move |cu| unsafe {
                (cu.cuMemFree)(ptr)
            });
    }
}

/// A sub-range of device memory, borrowed from a [`DeviceBuffer`]. `Copy`:
/// device memory is not Rust memory, so views may alias; what a kernel does
/// with aliasing views is the kernel's business.
pub struct DeviceView<'a, T: DeviceCopy> {
    ctx: &'a Context,
    ptr: CUdeviceptr,
    len: usize,
    /// For a view of stream-ordered memory: its allocation's stream.
    origin: Option<StreamOrigin>,
    /// For a view of memory mapped for its own device alone (a
    /// [`VirtualBuffer`](crate::memory::VirtualBuffer)'s or an
    /// [`ImportedBuffer`](crate::memory::ImportedBuffer)'s), that buffer's
    /// kind: as a kernel argument it is checked as that buffer would be
    /// (never an argument of another context: peer access does not extend
    /// to such mappings).
    restricted: Option<Container>,
    _marker: PhantomData<&'a T>,
}

impl<T: DeviceCopy> Clone for DeviceView<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: DeviceCopy> Copy for DeviceView<'_, T> {}

impl<T: DeviceCopy> std::fmt::Debug for DeviceView<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceView")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .finish()
    }
}

impl<'a, T: DeviceCopy> DeviceView<'a, T> {
    /// A view of `len` elements at `ptr`, memory of `ctx` that stays
    /// allocated for `'a` (stream-ordered pool buffers hand theirs out
    /// through this).
    pub(crate) fn from_raw_parts(ctx: &'a Context, ptr: CUdeviceptr, len: usize) -> Self {
        DeviceView {
            ctx,
            ptr,
            len,
            origin: None,
            restricted: None,
            _marker: PhantomData,
        }
    }

    /// The view of a buffer whose mapping only its own device may use
    /// (`container` names its kind; see `restricted`).
    pub(crate) fn restricted_to_own_device(mut self, container: Container) -> Self {
        self.restricted = Some(container);
        self
    }

    /// The kind of buffer a kernel argument of this view is checked as.
    pub(crate) fn container(&self) -> Container {
        self.restricted.unwrap_or(Container::DeviceView)
    }

    /// [`DeviceView::from_raw_parts`] of stream-ordered memory allocated on
    /// `origin`.
    pub(crate) fn with_origin(mut self, origin: StreamOrigin) -> Self {
        self.origin = Some(origin);
        self
    }

    /// The device address of the first element.
    pub fn device_ptr(&self) -> DevicePtr {
        DevicePtr::new(self.ptr)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always `false`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The context.
    pub fn context(&self) -> &'a Context {
        self.ctx
    }

    /// A sub-range of this view.
    ///
    /// # Errors
    ///
    /// [`Error::OutOfBounds`](crate::Error::OutOfBounds) or an empty range.
    pub fn view(&self, range: impl RangeBounds<usize>) -> Result<DeviceView<'a, T>> {
        let (start, end) = resolve_range(range, self.len)?;
        Ok(DeviceView {
            ctx: self.ctx,
            ptr: self.ptr + (start * std::mem::size_of::<T>()) as u64,
            len: end - start,
            origin: self.origin,
            restricted: self.restricted,
            _marker: PhantomData,
        })
    }

    /// Copies `src` in (`cuMemcpyHtoD_v2`).
    ///
    /// # Errors
    ///
    /// Length mismatch; driver errors.
    pub fn copy_from_host(&self, src: &[T]) -> Result<()> {
        same_len("copy_from_host", self.len, src.len())?;
        // SAFETY: the view holds `self.len` elements, and `src` as many
        // (checked above).
        unsafe { copy::htod(self.ctx, self.ptr, src) }
    }

    /// Copies out (`cuMemcpyDtoH_v2`).
    ///
    /// # Errors
    ///
    /// Length mismatch; driver errors.
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        same_len("copy_to_host", self.len, dst.len())?;
        // SAFETY: the view holds `self.len` elements, and `dst` as many
        // (checked above).
        unsafe { copy::dtoh(self.ctx, dst, self.ptr) }
    }

    /// The contents as a vector.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        // SAFETY: the view holds `self.len` elements.
        unsafe { copy::dtoh_vec(self.ctx, self.ptr, self.len) }
    }

    /// Copies device memory in (`cuMemcpyDtoD_v2`).
    ///
    /// # Errors
    ///
    /// Length and context mismatches; driver errors.
    pub fn copy_from<'s>(&self, src: impl DeviceSrc<'s, T>) -> Result<()> {
        same_len("copy_from", self.len, src.len())?;
        crate::context::same_context("copy_from", self.ctx, src.context())?;
        let bytes = byte_len::<T>(self.len, "copy")?;
        crate::memory::no_overlap("copy_from", src.device_ptr().as_raw(), self.ptr, bytes)?;
        // SAFETY: both hold `self.len` elements (`bytes` bytes; lengths
        // checked above), not overlapping, and both are borrowed for the
        // call.
        unsafe { copy::dtod(self.ctx, self.ptr, src.device_ptr().as_raw(), bytes) }
    }

    /// Sets every element to `value`.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn fill(&self, value: T) -> Result<()> {
        // SAFETY: the view holds `self.len` elements.
        unsafe { copy::fill(self.ctx, self.ptr, self.len, value) }
    }
}

impl<T: DeviceCopy> Sealed for &DeviceBuffer<'_, T> {}
impl<T: DeviceCopy> Sealed for DeviceView<'_, T> {}

macro_rules! device_memory_impls {
    ($trait:ident) => {
        impl<'a, T: DeviceCopy> $trait<'a, T> for &'a DeviceBuffer<'_, T> {
            fn context(&self) -> &'a Context {
                self.ctx
            }
            fn device_ptr(&self) -> DevicePtr {
                DevicePtr::new(self.ptr)
            }
            fn len(&self) -> usize {
                self.len
            }
        }
        impl<'a, T: DeviceCopy> $trait<'a, T> for DeviceView<'a, T> {
            fn context(&self) -> &'a Context {
                self.ctx
            }
            fn device_ptr(&self) -> DevicePtr {
                DevicePtr::new(self.ptr)
            }
            fn len(&self) -> usize {
                self.len
            }
            fn origin(&self) -> Option<StreamOrigin> {
                self.origin
            }
        }
    };
}
device_memory_impls!(DeviceSrc);
device_memory_impls!(DeviceDst);
