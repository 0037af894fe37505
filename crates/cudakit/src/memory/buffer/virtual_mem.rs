//! Virtual memory: [`VirtualBuffer`] reserves a large address range once
//! (`cuMemAddressReserve`) and maps physical memory into it on demand
//! (`cuMemCreate`, `cuMemMap`, `cuMemSetAccess`), so that it grows in place
//! (the same device address, no copy) and shrinks (`cuMemUnmap`,
//! `cuMemRelease`).
//!
//! The allocation granularity is read from the driver
//! (`cuMemGetAllocationGranularity`, minimum, for a pinned allocation on
//! the context's device), never assumed: the reservation and every mapping
//! are whole multiples of it. Every physical allocation is recorded in the
//! arena as [`AllocKind::Virtual`], with the caller that grew the buffer.
//!
//! See [`VirtualBuffer`] for why it is sound, and what happens on each
//! thread and failure.

use std::marker::PhantomData;
use std::panic::Location;
use std::ptr;

use cuda_sys::{
    CUdeviceptr, CUmemAccessDesc, CUmemAccess_flags, CUmemAllocationGranularity_flags,
    CUmemAllocationHandleType, CUmemAllocationProp, CUmemAllocationProp_allocFlags,
    CUmemAllocationType, CUmemGenericAllocationHandle, CUmemLocation, CUmemLocationType, CUresult,
};

use crate::context::arena::AllocKind;
use crate::context::Context;
use crate::error::{Error, Result, VirtualMemoryError};
use crate::memory::DeviceView;
use crate::memory::{byte_len, check_align, DeviceCopy, DevicePtr};

/// One physical allocation mapped at `offset` bytes into the range.
#[derive(Debug)]
struct Chunk {
    handle: CUmemGenericAllocationHandle,
    offset: usize,
    bytes: usize,
    /// Its arena record.
    id: u64,
}

/// A buffer of `T` in a reserved device address range, grown and shrunk
/// in place by mapping physical memory: the device address of the first
/// element never changes, and growth copies nothing. The allocation
/// granularity is read from the driver; every physical allocation is an
/// [`AllocKind::Virtual`] record in the arena, with its caller.
///
/// # Soundness
///
/// - Growing and shrinking take `&mut self`. Device work reaches the
///   buffer only through a borrow (`&VirtualBuffer` as a kernel argument
///   or a copy operand), inside a scope that waits for its work before the
///   borrow ends, or in a graph whose replays run only in scopes that its
///   borrows outlive. So while `&mut self` exists no queued work can use
///   the range, and an unmap never pulls memory from under a kernel. The
///   same reasoning lets [`DeviceBuffer`](crate::DeviceBuffer)'s drop free.
/// - Growth maps only addresses past the ones in use; the device address
///   of the first element never changes.
/// - Drop goes through `Context::release`: each physical allocation is
///   unmapped and released, then the range is freed, in that order, now or
///   (on a driver callback thread, or a capturing one) later on a cudakit
///   thread. A refused unmap keeps the allocation (recorded as leaked,
///   never released while it may still be mapped); a refused release is
///   recorded as leaked too. `mem::forget` of the buffer leaks it, and
///   nothing else.
///
/// # Threads and failures
///
/// `&mut self` makes growth and shrinking single-threaded per buffer; the
/// driver calls are thread-safe between buffers. They are refused on a
/// thread that is capturing ([`Error::IllegalDuringCapture`]: the driver
/// would refuse them there and invalidate the capture) and inside host
/// callbacks ([`Error::InsideHostCallback`]). A failed `cuMemCreate`
/// changes nothing; a failed `cuMemMap` releases the new allocation; a
/// failed `cuMemSetAccess` unmaps and releases it (nothing used it yet).
/// A failed unmap while shrinking keeps that allocation mapped (and the
/// buffer's length is still the new one, which it covers); a failed
/// release after a good unmap is recorded as leaked.
///
/// ```no_run
/// # fn main() -> cudakit::Result<()> {
/// let ctx = cudakit::Context::new(0)?;
/// // Room for 4 Gi floats, 1 Mi of them backed now.
/// let mut v = ctx.alloc_virtual::<f32>(1 << 20, 4 << 30)?;
/// let address = v.device_ptr();
/// v.resize(256 << 20)?; // grows in place: same address, no copy
/// assert_eq!(v.device_ptr(), address);
/// v.shrink_by(128 << 20)?;
/// # Ok(()) }
/// ```
pub struct VirtualBuffer<'c, T: DeviceCopy> {
    ctx: &'c Context,
    base: CUdeviceptr,
    /// Bytes reserved, a multiple of `granularity`.
    reserved: usize,
    /// The driver's minimum granularity for this device's allocations.
    granularity: usize,
    /// The unit physical memory is added in, a multiple of `granularity`.
    step: usize,
    /// Mapped from `base` on, in order, without gaps.
    chunks: Vec<Chunk>,
    /// Bytes mapped: the sum of the chunks'.
    mapped: usize,
    len: usize,
    /// Devices besides the owner granted access ([`VirtualBuffer::grant_access`]).
    peers: Vec<i32>,
    /// Whether its allocations are made exportable as POSIX file
    /// descriptors ([`Context::alloc_virtual_shareable`]).
    shareable: bool,
    _marker: PhantomData<T>,
}

impl<T: DeviceCopy> std::fmt::Debug for VirtualBuffer<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VirtualBuffer")
            .field("ptr", &format_args!("{:#x}", self.base))
            .field("len", &self.len)
            .field("mapped", &self.mapped)
            .field("reserved", &self.reserved)
            .field("granularity", &self.granularity)
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

/// `value` rounded up to a multiple of `unit`; `None` on overflow.
fn round_up(value: usize, unit: usize) -> Option<usize> {
    value.checked_add(unit - 1).map(|v| v / unit * unit)
}

/// The properties of a pinned allocation on `ctx`'s device: exportable as
/// a POSIX file descriptor when `shareable`, not exportable otherwise.
pub(crate) fn allocation_prop(ctx: &Context, shareable: bool) -> CUmemAllocationProp {
    CUmemAllocationProp {
        r#type: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        requestedHandleTypes: if shareable {
            CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
        } else {
            CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_NONE
        },
        location: CUmemLocation {
            r#type: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: ctx.device().ordinal(),
        },
        win32HandleMetaData: ptr::null_mut(),
        allocFlags: CUmemAllocationProp_allocFlags::default(),
    }
}

impl Context {
    /// The device's minimum granularity for virtual-memory allocations
    /// (`cuMemGetAllocationGranularity`, `CU_MEM_ALLOC_GRANULARITY_MINIMUM`,
    /// for a pinned allocation on this device): every reservation and
    /// mapping of a [`VirtualBuffer`] is a multiple of it.
    ///
    /// # Errors
    ///
    /// Driver errors (a device without virtual memory management);
    /// [`Error::ContextPoisoned`].
    pub fn virtual_granularity(&self) -> Result<usize> {
        self.granularity_for(false)
    }

    /// [`Context::virtual_granularity`] for allocations made exportable
    /// (`shareable`) or not.
    pub(crate) fn granularity_for(&self, shareable: bool) -> Result<usize> {
        let cu = self.enter()?;
        let prop = allocation_prop(self, shareable);
        let mut granularity = 0usize;
        // SAFETY: a valid out-pointer and a fully initialised property
        // struct of the header's layout, alive for the call.
        self.check("cuMemGetAllocationGranularity", unsafe {
            (cu.cuMemGetAllocationGranularity)(
                &mut granularity,
                &prop,
                CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            )
        })?;
        if granularity == 0 {
            return Err(Error::InvalidArgument(
                "cuMemGetAllocationGranularity reported a granularity of 0 bytes".to_owned(),
            ));
        }
        Ok(granularity)
    }

    /// A [`VirtualBuffer`] of `len` elements with address space reserved
    /// for `max_len` (rounded up to the granularity), grown in steps of
    /// the granularity.
    ///
    /// # Errors
    ///
    /// [`Error::ZeroLength`], [`Error::SizeOverflow`] and
    /// [`Error::Alignment`] before the driver;
    /// [`Error::VirtualMemory`] with [`VirtualMemoryError::PastReservation`]
    /// when `len > max_len`; [`Error::IllegalDuringCapture`]; driver
    /// errors (out of memory, out of address space); a poisoned context.
    #[track_caller]
    pub fn alloc_virtual<T: DeviceCopy>(
        &self,
        len: usize,
        max_len: usize,
    ) -> Result<VirtualBuffer<'_, T>> {
        VirtualBuffer::new_at(self, len, max_len, None, false, Location::caller())
    }

    /// [`Context::alloc_virtual`] whose physical allocations can be
    /// exported to other processes as POSIX file descriptors
    /// (`CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR` in `cuMemCreate`'s
    /// properties): see [`VirtualBuffer::export_ipc`] and [`crate::ipc`].
    ///
    /// # Errors
    ///
    /// As [`Context::alloc_virtual`]; a driver or device without
    /// shareable allocations answers `cuMemCreate` with an error.
    #[track_caller]
    pub fn alloc_virtual_shareable<T: DeviceCopy>(
        &self,
        len: usize,
        max_len: usize,
    ) -> Result<VirtualBuffer<'_, T>> {
        VirtualBuffer::new_at(self, len, max_len, None, true, Location::caller())
    }

    /// [`Context::alloc_virtual`] with physical memory added in units of
    /// `step_bytes`, which must be a multiple of the granularity
    /// ([`Context::virtual_granularity`]): fewer, larger allocations for a
    /// buffer that grows by large amounts.
    ///
    /// # Errors
    ///
    /// [`Error::VirtualMemory`] with [`VirtualMemoryError::Unaligned`] when
    /// `step_bytes` is 0 or not a multiple of the granularity; as
    /// [`Context::alloc_virtual`].
    #[track_caller]
    pub fn alloc_virtual_with_step<T: DeviceCopy>(
        &self,
        len: usize,
        max_len: usize,
        step_bytes: usize,
    ) -> Result<VirtualBuffer<'_, T>> {
        VirtualBuffer::new_at(
            self,
            len,
            max_len,
            Some(step_bytes),
            false,
            Location::caller(),
        )
    }
}

impl<'c, T: DeviceCopy> VirtualBuffer<'c, T> {
    fn new_at(
        ctx: &'c Context,
        len: usize,
        max_len: usize,
        step: Option<usize>,
        shareable: bool,
        location: &'static Location<'static>,
    ) -> Result<Self> {
        let max_bytes = byte_len::<T>(max_len, "virtual reservation")?;
        let bytes = byte_len::<T>(len, "virtual buffer")?;
        check_align::<T>("virtual buffer")?;
        if bytes > max_bytes {
            return Err(Error::VirtualMemory(VirtualMemoryError::PastReservation {
                requested: bytes as u64,
                reserved: max_bytes as u64,
            }));
        }
        ctx.refuse_during_capture("cuMemAddressReserve")?;
        let granularity = ctx.granularity_for(shareable)?;
        let step = step.unwrap_or(granularity);
        if step == 0 || step % granularity != 0 {
            return Err(Error::VirtualMemory(VirtualMemoryError::Unaligned {
                what: "the mapping step",
                bytes: step,
                granularity,
            }));
        }
        let reserved = round_up(max_bytes, granularity).ok_or(Error::SizeOverflow {
            len: max_len,
            elem_size: std::mem::size_of::<T>(),
        })?;
        let cu = ctx.enter()?;
        let mut base: CUdeviceptr = 0;
        // SAFETY: a valid out-pointer; `reserved` is a non-zero multiple of
        // the granularity; alignment 0 (the granularity), no fixed address,
        // no flags; the context is current.
        ctx.check("cuMemAddressReserve", unsafe {
            (cu.cuMemAddressReserve)(&mut base, reserved, 0, 0, 0)
        })?;
        let mut buffer = VirtualBuffer {
            ctx,
            base,
            reserved,
            granularity,
            step,
            chunks: Vec::new(),
            mapped: 0,
            len: 0,
            peers: Vec::new(),
            shareable,
            _marker: PhantomData,
        };
        // On failure `buffer` is dropped, which frees the reservation.
        buffer.map_to(bytes, location)?;
        buffer.len = len;
        Ok(buffer)
    }

    /// Maps physical memory until at least `bytes` are mapped (at most
    /// `reserved`): one new allocation, a whole number of steps (the last
    /// one cut to the reservation, which is a multiple of the granularity).
    fn map_to(&mut self, bytes: usize, location: &'static Location<'static>) -> Result<()> {
        if bytes <= self.mapped {
            return Ok(());
        }
        let ctx = self.ctx;
        ctx.refuse_during_capture("cuMemCreate")?;
        let want = round_up(bytes - self.mapped, self.step).unwrap_or(usize::MAX);
        let size = want.min(self.reserved - self.mapped);
        let cu = ctx.enter()?;
        let prop = allocation_prop(ctx, self.shareable);
        let mut handle: CUmemGenericAllocationHandle = 0;
        // SAFETY: a valid out-pointer; `size` is a non-zero multiple of the
        // granularity (step and reservation are); the property struct is
        // fully initialised and alive for the call; the context is current.
        ctx.check("cuMemCreate", unsafe {
            (cu.cuMemCreate)(&mut handle, size, &prop, 0)
        })?;
        let at = self.base + self.mapped as u64;
        // SAFETY: `[at, at + size)` lies in the reservation (mapped + size
        // <= reserved) and is not mapped (chunks cover exactly
        // `[base, base + mapped)`); the handle is `size` bytes, offset 0.
        let rc = unsafe { (cu.cuMemMap)(at, size, 0, handle, 0) };
        if let Err(err) = ctx.check("cuMemMap", rc) {
            // SAFETY: the handle made above, mapped nowhere, released once.
            let rc = unsafe { (cu.cuMemRelease)(handle) };
            ctx.record_drop_error("cuMemRelease", rc);
            return Err(err);
        }
        let access = self.access_descs();
        // SAFETY: `[at, at + size)` was just mapped; `access.len()` access
        // descriptors, alive for the call.
        let rc = unsafe { (cu.cuMemSetAccess)(at, size, access.as_ptr(), access.len()) };
        if let Err(err) = ctx.check("cuMemSetAccess", rc) {
            // Nothing used the new range: it is unmapped and released.
            // SAFETY: the range mapped just above, unmapped once.
            let rc = unsafe { (cu.cuMemUnmap)(at, size) };
            ctx.record_drop_error("cuMemUnmap", rc);
            if rc == CUresult::CUDA_SUCCESS {
                // SAFETY: the handle made above, no longer mapped, released
                // once.
                let rc = unsafe { (cu.cuMemRelease)(handle) };
                ctx.record_drop_error("cuMemRelease", rc);
            }
            return Err(err);
        }
        let id = ctx.arena().record_alloc(AllocKind::Virtual, size, location);
        self.chunks.push(Chunk {
            handle,
            offset: self.mapped,
            bytes: size,
            id,
        });
        self.mapped += size;
        Ok(())
    }

    /// Read-write access for the owning device, then for each peer granted.
    fn access_descs(&self) -> Vec<CUmemAccessDesc> {
        std::iter::once(self.ctx.device().ordinal())
            .chain(self.peers.iter().copied())
            .map(|id| CUmemAccessDesc {
                location: CUmemLocation {
                    r#type: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                    id,
                },
                flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
            })
            .collect()
    }

    /// Gives `peer`'s device read-write access to the buffer
    /// (`cuMemSetAccess` over the mapped range for the owner and every
    /// peer granted), now and for every later growth. Idempotent; the
    /// owner's own device needs no grant.
    ///
    /// This is the memory's side of peer access, for copies. A kernel of
    /// another context never takes a virtual buffer as an argument (the
    /// launch refuses it, whatever peer access says): its access is per
    /// mapping, and the launch check cannot see the grants.
    ///
    /// # Errors
    ///
    /// [`Error::PeerAccessUnsupported`] when `cuDeviceCanAccessPeer`
    /// reports that `peer`'s device cannot reach this one;
    /// [`Error::IllegalDuringCapture`]; driver errors (the grant is then
    /// not recorded); a poisoned context.
    pub fn grant_access(&mut self, peer: &Context) -> Result<()> {
        let (owner, other) = (self.ctx.device(), peer.device());
        if owner == other || self.peers.contains(&other.ordinal()) {
            return Ok(());
        }
        let ctx = self.ctx;
        ctx.refuse_during_capture("cuMemSetAccess")?;
        let cu = ctx.enter()?;
        let mut can: std::ffi::c_int = 0;
        // SAFETY: a valid out-pointer and two device handles.
        ctx.check("cuDeviceCanAccessPeer", unsafe {
            (cu.cuDeviceCanAccessPeer)(&mut can, other.as_raw(), owner.as_raw())
        })?;
        if can == 0 {
            return Err(Error::PeerAccessUnsupported {
                from: other.ordinal(),
                to: owner.ordinal(),
                reason: "cuDeviceCanAccessPeer reports no access",
            });
        }
        self.peers.push(other.ordinal());
        let access = self.access_descs();
        // SAFETY: `[base, base + mapped)` is mapped (the chunks cover it,
        // and `mapped > 0`: a buffer holds at least one element);
        // `access.len()` descriptors, alive for the call.
        let rc =
            unsafe { (cu.cuMemSetAccess)(self.base, self.mapped, access.as_ptr(), access.len()) };
        if let Err(err) = ctx.check("cuMemSetAccess", rc) {
            self.peers.pop();
            return Err(err);
        }
        Ok(())
    }

    /// The devices granted access besides the owner.
    pub fn peers(&self) -> &[i32] {
        &self.peers
    }

    /// Unmaps and releases the allocations lying wholly at or past `keep`
    /// bytes, last first.
    fn unmap_past(&mut self, keep: usize) -> Result<()> {
        let ctx = self.ctx;
        ctx.refuse_during_capture("cuMemUnmap")?;
        let cu = ctx.enter()?;
        while let Some(last) = self.chunks.last() {
            if last.offset < keep {
                break;
            }
            let at = self.base + last.offset as u64;
            // SAFETY: the chunk's range, mapped by `map_to`, unmapped once.
            // No queued work uses it: `&mut self` excludes every borrow a
            // kernel, copy or graph of the buffer holds (see the module
            // docs), and the bytes past `keep` hold no element any more.
            let rc = unsafe { (cu.cuMemUnmap)(at, last.bytes) };
            ctx.check("cuMemUnmap", rc)?;
            let Some(chunk) = self.chunks.pop() else {
                break;
            };
            self.mapped -= chunk.bytes;
            // SAFETY: the chunk's handle, now mapped nowhere, released once.
            let rc = unsafe { (cu.cuMemRelease)(chunk.handle) };
            ctx.arena().record_release(chunk.id, rc, "cuMemRelease");
            ctx.check("cuMemRelease", rc)?;
        }
        Ok(())
    }

    /// Sets the length to `new_len` elements, in place: the device address
    /// stays; growing maps physical memory past the mapped part (new
    /// elements are unspecified), shrinking unmaps and releases the
    /// allocations no element lies in any more.
    ///
    /// # Errors
    ///
    /// [`Error::ZeroLength`] for 0 (cudakit has no empty buffers);
    /// [`Error::VirtualMemory`] with
    /// [`VirtualMemoryError::PastReservation`] past the reservation;
    /// [`Error::IllegalDuringCapture`]; [`Error::InsideHostCallback`];
    /// driver errors (out of memory; the buffer is then unchanged).
    ///
    /// It takes `&mut self`, so no view, copy or kernel that borrows the
    /// buffer can be alive across it:
    ///
    /// ```compile_fail,E0502
    /// # fn main() -> cudakit::Result<()> {
    /// let ctx = cudakit::Context::new(0)?;
    /// let mut v = ctx.alloc_virtual::<f32>(16, 1 << 20)?;
    /// let view = v.as_view();
    /// v.resize(32)?; // error: `v` is borrowed by `view`
    /// # drop(view); Ok(()) }
    /// ```
    ///
    /// and a scope's work keeps its borrow until the scope has waited:
    ///
    /// ```compile_fail,E0502
    /// # fn main() -> cudakit::Result<()> {
    /// # use cudakit::{params, LaunchConfig};
    /// let ctx = cudakit::Context::new(0)?;
    /// let module = ctx.load_module_file("k.cubin")?;
    /// let k = module.function("k")?;
    /// let stream = ctx.stream()?;
    /// let mut v = ctx.alloc_virtual::<f32>(16, 1 << 20)?;
    /// ctx.scope(|s| {
    ///     // SAFETY: (not reached: this does not compile)
    ///     unsafe { s.launch(&stream, &k, &LaunchConfig::new(1, 16), &params![&v])? };
    ///     v.resize(32) // error: the launch borrows `v` for the scope
    /// })?;
    /// # Ok(()) }
    /// ```
    #[track_caller]
    pub fn resize(&mut self, new_len: usize) -> Result<()> {
        let location = Location::caller();
        let bytes = byte_len::<T>(new_len, "virtual buffer")?;
        if bytes > self.reserved {
            return Err(Error::VirtualMemory(VirtualMemoryError::PastReservation {
                requested: bytes as u64,
                reserved: self.reserved as u64,
            }));
        }
        if new_len >= self.len {
            self.map_to(bytes, location)?;
            self.len = new_len;
            Ok(())
        } else {
            // Refusals that change nothing come before the length does.
            self.ctx.refuse_during_capture("cuMemUnmap")?;
            self.ctx.enter()?;
            self.len = new_len;
            self.unmap_past(bytes)
        }
    }

    /// Grows by `n` elements ([`VirtualBuffer::resize`]).
    ///
    /// # Errors
    ///
    /// [`Error::SizeOverflow`] when the length overflows; as
    /// [`VirtualBuffer::resize`].
    #[track_caller]
    pub fn grow_by(&mut self, n: usize) -> Result<()> {
        let new_len = self.len.checked_add(n).ok_or(Error::SizeOverflow {
            len: usize::MAX,
            elem_size: std::mem::size_of::<T>(),
        })?;
        self.resize(new_len)
    }

    /// Shrinks by `n` elements ([`VirtualBuffer::resize`]).
    ///
    /// # Errors
    ///
    /// [`Error::VirtualMemory`] with [`VirtualMemoryError::BelowZero`] when
    /// `n` is more than the length; [`Error::ZeroLength`] when it equals
    /// it; as [`VirtualBuffer::resize`].
    #[track_caller]
    pub fn shrink_by(&mut self, n: usize) -> Result<()> {
        let new_len =
            self.len
                .checked_sub(n)
                .ok_or(Error::VirtualMemory(VirtualMemoryError::BelowZero {
                    len: self.len,
                    by: n,
                }))?;
        self.resize(new_len)
    }

    /// The context.
    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    /// The device address of the first element; it never changes.
    pub fn device_ptr(&self) -> DevicePtr {
        DevicePtr::new(self.base)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always `false`: the length is at least 1.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Size in bytes.
    pub fn byte_len(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// Elements the reservation can hold: the most `resize` accepts.
    pub fn capacity(&self) -> usize {
        self.reserved / std::mem::size_of::<T>()
    }

    /// Bytes of physical memory mapped now (at least [`Self::byte_len`]).
    pub fn mapped_bytes(&self) -> usize {
        self.mapped
    }

    /// Bytes of address range reserved.
    pub fn reserved_bytes(&self) -> usize {
        self.reserved
    }

    /// The driver's allocation granularity the buffer maps in.
    pub fn granularity(&self) -> usize {
        self.granularity
    }

    /// Physical allocations mapped now.
    pub fn allocations(&self) -> usize {
        self.chunks.len()
    }

    /// Whether its allocations can be exported to other processes
    /// ([`Context::alloc_virtual_shareable`]).
    pub fn is_shareable(&self) -> bool {
        self.shareable
    }

    /// The physical allocations, in address order: (handle, bytes).
    pub(crate) fn allocation_handles(&self) -> Vec<(CUmemGenericAllocationHandle, usize)> {
        self.chunks.iter().map(|c| (c.handle, c.bytes)).collect()
    }

    /// The whole buffer as a view. The view borrows the buffer, so no
    /// shrink can unmap what it covers while it lives.
    pub fn as_view(&self) -> DeviceView<'_, T> {
        // The first `len` elements are mapped (`mapped >= byte_len`), as a
        // view's copies need; the copies below go through it.
        DeviceView::from_raw_parts(self.ctx, self.base, self.len)
            .restricted_to_own_device(crate::compile::signature::check::Container::VirtualBuffer)
    }

    view_methods!();
}

impl<T: DeviceCopy> Drop for VirtualBuffer<'_, T> {
    fn drop(&mut self) {
        // Last mapped first, then the range: each release runs in the order
        // it was handed over (now, or all later on one cudakit thread).
        for chunk in self.chunks.drain(..).rev() {
            let (at, bytes, handle) = (self.base + chunk.offset as u64, chunk.bytes, chunk.handle);
            // SAFETY: unmaps the chunk mapped by `map_to` and releases its
            // handle, once each; a refused unmap keeps the handle (released
            // while mapped, the memory could not be freed, and the arena
            // would record a free that did not happen). No device work can
            // still use the range: work borrows the buffer inside a scope,
            // which waits for it before the borrow ends, and a graph's
            // replays run only in scopes that its borrows outlive.
            self.ctx.release(
                "cuMemUnmap, cuMemRelease",
                Some(chunk.id),
                move |cu| unsafe {
                    let rc = (cu.cuMemUnmap)(at, bytes);
                    if rc != CUresult::CUDA_SUCCESS {
                        return rc;
                    }
                    (cu.cuMemRelease)(handle)
                },
            );
        }
        let (base, reserved) = (self.base, self.reserved);
        // SAFETY: frees the range reserved in `new_at`, once, after the
        // unmaps handed over above (releases run in order).
        self.ctx
            .release("cuMemAddressFree", None, move |cu| unsafe {
                (cu.cuMemAddressFree)(base, reserved)
            });
    }
}

device_memory_impls!(VirtualBuffer, base);

#[cfg(test)]
mod tests {
    use super::round_up;

    #[test]
    fn sizes_round_up_to_the_unit() {
        assert_eq!(round_up(1, 4096), Some(4096));
        assert_eq!(round_up(4096, 4096), Some(4096));
        assert_eq!(round_up(4097, 4096), Some(8192));
        assert_eq!(round_up(usize::MAX, 4096), None);
    }
}
