//! Unified (managed) memory (`cuMemAllocManaged`).

use std::marker::PhantomData;
use std::panic::Location;

use cuda_sys::{CUdeviceptr, CUmemAttach_flags, CUmemLocation, CUmemLocationType, CUmem_advise};

use crate::context::arena::AllocKind;
use crate::context::{Context, HostViewToken};
use crate::driver::optional;
use crate::error::Result;
use crate::memory::transfer::copy;
use crate::memory::{
    byte_len, check_align, check_ptr_align, same_len, DeviceCopy, DeviceDst, DevicePtr, DeviceSrc,
    Sealed,
};

/// Where a unified allocation is first attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attach {
    /// Any stream of any device may access it (`CU_MEM_ATTACH_GLOBAL`).
    Global,
    /// Host only until attached to a stream (`CU_MEM_ATTACH_HOST`).
    Host,
}

/// Unified memory for `len` elements: one address valid on the host and the
/// device.
///
/// The host reaches the contents only through [`UnifiedBuffer::as_slice`]
/// and [`UnifiedBuffer::as_mut_slice`], and only once no device work can
/// still use the buffer: device work that writes it borrows it exclusively
/// (`&mut`) until its [`Scope`](crate::Scope) has synchronized, so a host
/// slice cannot be held across it:
///
/// ```compile_fail,E0502
/// # fn main() -> cudakit::Result<()> {
/// let ctx = cudakit::Context::new(0)?;
/// let stream = ctx.stream()?;
/// let mut unified = ctx.alloc_unified::<f32>(4)?;
/// let device = ctx.upload(&[1.0f32; 4])?;
/// let host = unified.as_slice()?;          // host view of the buffer ...
/// ctx.scope(|s| s.copy(&stream, &device, &mut unified))?; // error: borrowed
/// println!("{}", host[0]);                 // ... still in use here
/// # Ok(()) }
/// ```
///
/// and likewise across a launch that takes the buffer as an argument:
///
/// ```compile_fail,E0502
/// # fn main() -> cudakit::Result<()> {
/// # let ctx = cudakit::Context::new(0)?;
/// # let stream = ctx.stream()?;
/// # let module = ctx.load_module_file("kernels.ptx")?;
/// # let kernel = module.function("scale")?;
/// let mut unified = ctx.alloc_unified::<f32>(4)?;
/// let host = unified.as_slice()?;
/// let config = cudakit::LaunchConfig::new(1, 4);
/// // SAFETY: `scale` stays within the 4 elements it is given.
/// ctx.scope(|s| unsafe { s.launch(&stream, &kernel, &config, &cudakit::params![&mut unified]) })?;
/// println!("{}", host[0]); // error: `unified` is borrowed mutably by the launch
/// # Ok(()) }
/// ```
pub struct UnifiedBuffer<'c, T: DeviceCopy> {
    ctx: &'c Context,
    ptr: CUdeviceptr,
    len: usize,
    id: u64,
    _marker: PhantomData<T>,
}

impl<T: DeviceCopy> std::fmt::Debug for UnifiedBuffer<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UnifiedBuffer")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .finish()
    }
}

impl Context {
    /// Allocates unified memory for `len` elements, attached globally, and
    /// zeroes it (`cuMemAllocManaged`, `cuMemsetD8_v2`).
    ///
    /// # Errors
    ///
    /// Zero length and overflow before any driver call; driver errors
    /// (`CUDA_ERROR_NOT_SUPPORTED` on devices without managed memory).
    #[track_caller]
    pub fn alloc_unified<T: DeviceCopy>(&self, len: usize) -> Result<UnifiedBuffer<'_, T>> {
        UnifiedBuffer::new_at(self, len, Attach::Global, Location::caller())
    }

    /// Like [`Context::alloc_unified`] with an explicit attachment.
    ///
    /// # Errors
    ///
    /// As [`Context::alloc_unified`].
    #[track_caller]
    pub fn alloc_unified_attached<T: DeviceCopy>(
        &self,
        len: usize,
        attach: Attach,
    ) -> Result<UnifiedBuffer<'_, T>> {
        UnifiedBuffer::new_at(self, len, attach, Location::caller())
    }
}

impl<'c, T: DeviceCopy> UnifiedBuffer<'c, T> {
    fn new_at(
        ctx: &'c Context,
        len: usize,
        attach: Attach,
        location: &'static Location<'static>,
    ) -> Result<Self> {
        let bytes = byte_len::<T>(len, "unified allocation")?;
        check_align::<T>("unified allocation")?;
        let cu = ctx.enter()?;
        let flags = match attach {
            Attach::Global => CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL,
            Attach::Host => CUmemAttach_flags::CU_MEM_ATTACH_HOST,
        };
        let mut ptr: CUdeviceptr = 0;
        // SAFETY: a valid out-pointer, a non-zero size, a defined flag.
        ctx.check("cuMemAllocManaged", unsafe {
            (cu.cuMemAllocManaged)(&mut ptr, bytes, flags.0 as u32)
        })?;
        if let Err(e) = check_ptr_align::<T>("unified allocation", ptr as usize) {
            // SAFETY: frees the allocation just made, once.
            let rc = unsafe { (cu.cuMemFree)(ptr) };
            ctx.record_drop_error("cuMemFree_v2", rc);
            return Err(e);
        }
        let id = ctx
            .arena()
            .record_alloc(AllocKind::Unified, bytes, location);
        let buf = UnifiedBuffer {
            ctx,
            ptr,
            len,
            id,
            _marker: PhantomData,
        };
        if ctx.limits().concurrent_managed_access {
            // SAFETY: `bytes` bytes at `ptr` were just allocated and no other
            // work knows them; the device allows host access while kernels
            // run, so writing them here races with nothing. Zeroing makes
            // the host view initialised.
            unsafe { std::ptr::write_bytes(ptr as usize as *mut u8, 0, bytes) };
        } else {
            // Without concurrent managed access, a host write while any
            // kernel of the context runs would fault: zero on the device,
            // counted as device work (refused while a host view is alive).
            // SAFETY: `bytes` bytes at `ptr` were just allocated.
            unsafe { copy::fill::<u8>(ctx, ptr, bytes, 0) }?;
        }
        Ok(buf)
    }

    /// The context.
    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    /// The address (valid on host and device).
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

    /// The contents as a host slice, held by a guard. No device work can be
    /// writing the buffer (see the type's documentation).
    ///
    /// On a device without concurrent managed access (Jetson, older GPUs,
    /// some vGPUs), any running kernel makes *all* managed memory
    /// inaccessible to the host. There the view is refused while device
    /// work of the context may run (a scope that queued work, on any thread,
    /// has not ended), the context is synchronized before it is handed out,
    /// and while it lives, device work on the context is refused
    /// ([`Error::UnifiedAccess`](crate::Error::UnifiedAccess)).
    ///
    /// # Errors
    ///
    /// [`Error::UnifiedAccess`](crate::Error::UnifiedAccess) as above; a
    /// poisoned context; synchronization errors.
    pub fn as_slice(&self) -> Result<HostSlice<'_, T>> {
        self.ctx.enter()?;
        let token = self.ctx.begin_host_view()?;
        // SAFETY: `len` initialised elements (zeroed at allocation, written
        // since only as T); no device write can be in flight (it would hold
        // `&mut self`); where the device lacks concurrent managed access,
        // the token keeps all device work of the context out while the
        // slice lives.
        let slice = unsafe { std::slice::from_raw_parts(self.ptr as usize as *const T, self.len) };
        Ok(HostSlice {
            slice,
            _token: token,
        })
    }

    /// The contents as a mutable host slice, held by a guard. See
    /// [`UnifiedBuffer::as_slice`].
    ///
    /// # Errors
    ///
    /// As [`UnifiedBuffer::as_slice`].
    pub fn as_mut_slice(&mut self) -> Result<HostSliceMut<'_, T>> {
        self.ctx.enter()?;
        let token = self.ctx.begin_host_view()?;
        // SAFETY: as in `as_slice`, and `&mut self` excludes every other
        // access for the slice's lifetime.
        let slice =
            unsafe { std::slice::from_raw_parts_mut(self.ptr as usize as *mut T, self.len) };
        Ok(HostSliceMut {
            slice,
            _token: token,
        })
    }

    /// The contents, copied into a vector (through a host view).
    ///
    /// # Errors
    ///
    /// As [`UnifiedBuffer::as_slice`].
    pub fn to_vec(&self) -> Result<Vec<T>> {
        Ok(self.as_slice()?.to_vec())
    }

    /// Copies device memory in (`cuMemcpyDtoD_v2`).
    ///
    /// # Errors
    ///
    /// Length and context mismatches; driver errors.
    pub fn copy_from<'s>(&mut self, src: impl DeviceSrc<'s, T>) -> Result<()> {
        same_len("copy_from", self.len, src.len())?;
        crate::context::same_context("copy_from", self.ctx, src.context())?;
        let bytes = byte_len::<T>(self.len, "copy")?;
        // SAFETY: both hold `self.len` elements (`bytes` bytes; lengths
        // checked above), and both are borrowed for the call.
        unsafe { copy::dtod(self.ctx, self.ptr, src.device_ptr().as_raw(), bytes) }
    }

    /// Prefetches the buffer to the device (`cuMemPrefetchAsync_v2` with a
    /// `CU_MEM_LOCATION_TYPE_DEVICE` location) on the legacy stream, and
    /// waits for it.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`](crate::Error::NotSupported) on drivers before
    /// CUDA 12.2; driver errors.
    pub fn prefetch_to_device(&self) -> Result<()> {
        self.prefetch_and_wait(true)
    }

    /// Prefetches the buffer to host memory (`CU_MEM_LOCATION_TYPE_HOST`).
    ///
    /// # Errors
    ///
    /// As [`UnifiedBuffer::prefetch_to_device`].
    pub fn prefetch_to_host(&self) -> Result<()> {
        self.prefetch_and_wait(false)
    }

    /// Prefetches on the legacy stream and waits for it.
    fn prefetch_and_wait(&self, to_device: bool) -> Result<()> {
        let _work = self.ctx.sync_work()?;
        self.prefetch_on(std::ptr::null_mut(), to_device)?;
        copy::sync_legacy(self.ctx)
    }

    /// Queues a prefetch on `stream` (`cuMemPrefetchAsync_v2`).
    pub(crate) fn prefetch_on(&self, stream: cuda_sys::CUstream, to_device: bool) -> Result<()> {
        let cu = self.ctx.enter()?;
        let f = optional!(cu, cuMemPrefetchAsync, "CUDA 12.2");
        let location = if to_device {
            device_location(self.ctx)
        } else {
            host_location()
        };
        let bytes = self.len * std::mem::size_of::<T>();
        // SAFETY: the range is this allocation, which the caller keeps alive
        // until the stream has run the prefetch; the location is a valid
        // CUmemLocation by value; flags must be 0.
        let rc = unsafe { f(self.ptr, bytes, location, 0, stream) };
        self.ctx.check("cuMemPrefetchAsync_v2", rc)
    }

    /// Gives the driver a hint about the buffer (`cuMemAdvise_v2`), for the
    /// device (`on_host = false`) or the host.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`](crate::Error::NotSupported) on drivers before
    /// CUDA 12.2; driver errors.
    pub fn advise(&self, advice: CUmem_advise, on_host: bool) -> Result<()> {
        let cu = self.ctx.enter()?;
        let f = optional!(cu, cuMemAdvise, "CUDA 12.2");
        let location = if on_host {
            host_location()
        } else {
            device_location(self.ctx)
        };
        let bytes = self.len * std::mem::size_of::<T>();
        // SAFETY: the range is this allocation; advice and location by value.
        let rc = unsafe { f(self.ptr, bytes, advice, location) };
        self.ctx.check("cuMemAdvise_v2", rc)
    }
}

fn device_location(ctx: &Context) -> CUmemLocation {
    CUmemLocation {
        r#type: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
        id: ctx.device().ordinal(),
    }
}

fn host_location() -> CUmemLocation {
    CUmemLocation {
        r#type: CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST,
        id: 0,
    }
}

impl<T: DeviceCopy> Drop for UnifiedBuffer<'_, T> {
    fn drop(&mut self) {
        let ptr = self.ptr;
        // SAFETY: frees the allocation from cuMemAllocManaged, once (now, or
        // after this thread's capture, or off a driver callback thread); no
        // device work can still use it (scopes wait first; a graph's replays
        // run only in scopes that its borrows outlive).
        self.ctx
            .release("cuMemFree_v2", Some(self.id), move |cu| unsafe {
                (cu.cuMemFree)(ptr)
            });
    }
}

impl<T: DeviceCopy> Sealed for &UnifiedBuffer<'_, T> {}
impl<T: DeviceCopy> Sealed for &mut UnifiedBuffer<'_, T> {}

impl<'a, T: DeviceCopy> DeviceSrc<'a, T> for &'a UnifiedBuffer<'_, T> {
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

impl<'a, T: DeviceCopy> DeviceDst<'a, T> for &'a mut UnifiedBuffer<'_, T> {
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

/// A host view of a [`UnifiedBuffer`] (see [`UnifiedBuffer::as_slice`]).
/// Dereferences to `[T]`.
pub struct HostSlice<'a, T> {
    slice: &'a [T],
    _token: HostViewToken<'a>,
}

/// A mutable host view of a [`UnifiedBuffer`] (see
/// [`UnifiedBuffer::as_mut_slice`]). Dereferences to `[T]`.
pub struct HostSliceMut<'a, T> {
    slice: &'a mut [T],
    _token: HostViewToken<'a>,
}

impl<T> std::ops::Deref for HostSlice<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.slice
    }
}

impl<T> std::ops::Deref for HostSliceMut<'_, T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.slice
    }
}

impl<T> std::ops::DerefMut for HostSliceMut<'_, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.slice
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for HostSlice<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.slice.fmt(f)
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for HostSliceMut<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.slice.fmt(f)
    }
}

impl<T: PartialEq, U: AsRef<[T]> + ?Sized> PartialEq<U> for HostSlice<'_, T> {
    fn eq(&self, other: &U) -> bool {
        self.slice == other.as_ref()
    }
}

impl<T: PartialEq, U: AsRef<[T]> + ?Sized> PartialEq<U> for HostSliceMut<'_, T> {
    fn eq(&self, other: &U) -> bool {
        &*self.slice == other.as_ref()
    }
}
