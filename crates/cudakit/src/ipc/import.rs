//! The importer's side: opening what another process exported, as an
//! [`ImportedBuffer`], an [`ImportedPool`] or an [`Event`].

use std::os::fd::AsRawFd;
use std::panic::Location;

use cuda_sys::{
    CUdeviceptr, CUevent, CUipcEventHandle, CUipcMemHandle, CUipcMem_flags, CUmemAccessDesc,
    CUmemAccess_flags, CUmemAllocationHandleType, CUmemGenericAllocationHandle, CUmemLocation,
    CUmemLocationType, CUmemPoolPtrExportData, CUmemoryPool, CUresult,
};

use super::handle::{process_token, HandleKind, IpcHandle};
use crate::context::arena::AllocKind;
use crate::context::Context;
use crate::error::{Error, IpcError, Result};
use crate::memory::buffer::imported::Mapping;
use crate::memory::{check_align, DeviceCopy, ImportedBuffer};
use crate::work::event::Event;

fn to_c_chars(b: [u8; 64]) -> [std::ffi::c_char; 64] {
    b.map(|x| x as std::ffi::c_char)
}

/// The refusals every import makes before the driver: a capturing thread
/// (the driver refuses mapping calls there and invalidates the capture), a
/// driver callback, a poisoned context.
fn refuse_here(ctx: &Context, call: &'static str) -> Result<()> {
    crate::context::release::refuse_in_callback(call)?;
    ctx.refuse_during_capture(call)
}

impl Context {
    /// Opens a [`DeviceBuffer`](crate::DeviceBuffer)'s legacy IPC handle,
    /// exported by another process with
    /// [`DeviceBuffer::export_ipc`](crate::DeviceBuffer::export_ipc), as
    /// `len` elements of `T` (`cuIpcOpenMemHandle_v2` with
    /// `CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS`); closed with
    /// `cuIpcCloseMemHandle` when the buffer drops. Recorded in the arena as
    /// [`AllocKind::Imported`] with the caller.
    ///
    /// If the exporting process has exited, its memory went with it: the
    /// open is expected to fail with a driver error (the code is the
    /// driver's; the GPU test `leak_legacy_handle_of_an_exited_exporter_is_refused`
    /// observes it, see `docs/ipc.md`), and the context stays usable.
    ///
    /// # Safety
    ///
    /// The memory belongs to the exporting process, which cudakit cannot
    /// see. The caller guarantees that the exporter keeps the allocation
    /// alive (does not free it, and does not exit) until this import is
    /// closed (dropped or [`ImportedBuffer::close`]d) — with cudakit on the
    /// exporter's side: that its [`Exported`](super::Exported) guard is
    /// released only after this process said it is done. CUDA calls a free
    /// in the exporter before the importer's close undefined behaviour.
    ///
    /// # Errors
    ///
    /// Before the driver: [`Error::Ipc`] with [`IpcError::WrongKind`],
    /// [`IpcError::ElementSize`], [`IpcError::WrongDevice`] (the handle
    /// names another device than this context's), [`IpcError::OwnProcess`]
    /// (CUDA cannot open a handle in the process that exported it);
    /// [`Error::Alignment`]; [`Error::IllegalDuringCapture`];
    /// [`Error::InsideHostCallback`]. Driver errors from the open.
    #[track_caller]
    pub unsafe fn open_ipc<T: DeviceCopy>(
        &self,
        handle: &IpcHandle,
    ) -> Result<ImportedBuffer<'_, T>> {
        let location = Location::caller();
        handle.check_for(
            HandleKind::LegacyMemory,
            self,
            Some(std::mem::size_of::<T>()),
        )?;
        check_align::<T>("imported buffer")?;
        if handle.process == process_token() {
            return Err(Error::Ipc(IpcError::OwnProcess));
        }
        let len = handle.elements()?;
        refuse_here(self, "cuIpcOpenMemHandle_v2")?;
        let cu = self.enter()?;
        let raw = CUipcMemHandle {
            reserved: to_c_chars(handle.driver_bytes()),
        };
        let mut ptr: CUdeviceptr = 0;
        // SAFETY: a valid out-pointer, a handle of 64 bytes passed by value,
        // the one flag the call accepts; the context is current.
        self.check("cuIpcOpenMemHandle_v2", unsafe {
            (cu.cuIpcOpenMemHandle)(
                &mut ptr,
                raw,
                CUipcMem_flags::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS.0 as u32,
            )
        })?;
        // The blob's byte count is the other process's word: checked
        // against the allocation the driver opened, so that a blob that
        // claims more than it shares cannot make safe copies or kernels
        // reach past it.
        let (mut base, mut size): (CUdeviceptr, usize) = (0, 0);
        // SAFETY: valid out-pointers; `ptr` was just opened in this context.
        let range = unsafe { (cu.cuMemGetAddressRange)(&mut base, &mut size, ptr) };
        let fits =
            range == cuda_sys::CUresult::CUDA_SUCCESS && base == ptr && size as u64 >= handle.bytes;
        if !fits {
            // SAFETY: the mapping opened above, closed once; nothing of
            // cudakit's refers to it yet.
            let _ = unsafe { (cu.cuIpcCloseMemHandle)(ptr) };
            self.check("cuMemGetAddressRange_v2", range)?;
            return Err(Error::Ipc(IpcError::Malformed {
                reason: format!(
                    "the handle claims {} bytes, but the allocation it opens has {size} \
                     (at offset {} of it)",
                    handle.bytes,
                    ptr.saturating_sub(base)
                ),
            }));
        }
        let id = self
            .arena()
            .record_alloc(AllocKind::Imported, handle.bytes as usize, location);
        Ok(ImportedBuffer::from_mapping(
            self,
            ptr,
            len,
            id,
            Mapping::Legacy,
        ))
    }

    /// Imports a shareable [`VirtualBuffer`](crate::VirtualBuffer)'s
    /// allocations, exported by another process with
    /// [`VirtualBuffer::export_ipc`](crate::VirtualBuffer::export_ipc), as
    /// `len` elements of `T`: each descriptor is imported
    /// (`cuMemImportFromShareableHandle`), mapped in order into a range
    /// reserved here (`cuMemAddressReserve`, `cuMemMap`) and made
    /// readable and writable by this context's device (`cuMemSetAccess`).
    /// Recorded in the arena as [`AllocKind::Imported`] with the caller.
    ///
    /// Safe: the imported handles hold references of their own to the
    /// physical memory, which CUDA frees only when every handle (shareable
    /// ones included) is released and every mapping unmapped; so the memory
    /// stays valid here whatever the exporter does, exiting included. The
    /// handle's descriptors are not consumed: drop the handle to close them.
    ///
    /// # Errors
    ///
    /// Before the driver: [`Error::Ipc`] with [`IpcError::WrongKind`],
    /// [`IpcError::ElementSize`], [`IpcError::WrongDevice`];
    /// [`Error::Alignment`]; [`Error::IllegalDuringCapture`];
    /// [`Error::InsideHostCallback`]. Driver errors: a descriptor that is
    /// not a CUDA allocation's (a pipe, `/dev/null`) is refused by
    /// `cuMemImportFromShareableHandle`. On any failure what was imported
    /// or mapped is undone, and nothing is recorded.
    #[track_caller]
    pub fn import_virtual<T: DeviceCopy>(
        &self,
        handle: &IpcHandle,
    ) -> Result<ImportedBuffer<'_, T>> {
        let location = Location::caller();
        handle.check_for(HandleKind::Shareable, self, Some(std::mem::size_of::<T>()))?;
        check_align::<T>("imported buffer")?;
        let len = handle.elements()?;
        refuse_here(self, "cuMemImportFromShareableHandle")?;
        let granularity = self.granularity_for(true)?;
        let sizes: Vec<usize> = handle.chunk_sizes().map(|s| s as usize).collect();
        let reserved: usize = sizes.iter().sum();
        if reserved % granularity != 0 || sizes.iter().any(|s| s % granularity != 0) {
            return Err(Error::Ipc(IpcError::Malformed {
                reason: format!(
                    "allocations of {sizes:?} bytes are not multiples of this device's \
                     granularity ({granularity} bytes)"
                ),
            }));
        }
        let cu = self.enter()?;
        let mut base: CUdeviceptr = 0;
        // SAFETY: a valid out-pointer; `reserved` is a non-zero multiple of
        // the granularity; default alignment, no fixed address, no flags.
        self.check("cuMemAddressReserve", unsafe {
            (cu.cuMemAddressReserve)(&mut base, reserved, 0, 0, 0)
        })?;
        // What is held so far, undone in reverse on a failure.
        let mut handles: Vec<CUmemGenericAllocationHandle> = Vec::new();
        let mut mapped = 0usize;
        let undo = |handles: &[CUmemGenericAllocationHandle], mapped: usize| {
            if mapped > 0 {
                // SAFETY: the mappings made below, contiguous from `base`,
                // used by nothing yet, unmapped once.
                let rc = unsafe { (cu.cuMemUnmap)(base, mapped) };
                self.record_drop_error("cuMemUnmap", rc);
                if rc != CUresult::CUDA_SUCCESS {
                    // Still mapped: nothing under it is released or freed,
                    // and the arena says so (the mapped bytes are kept).
                    self.arena().record_kept(
                        mapped,
                        "an import of shareable memory whose undo could not unmap it",
                    );
                    return;
                }
            }
            for &h in handles {
                // SAFETY: a handle imported below, mapped nowhere, released once.
                let rc = unsafe { (cu.cuMemRelease)(h) };
                self.record_drop_error("cuMemRelease", rc);
            }
            // SAFETY: the range reserved above, nothing mapped in it.
            let rc = unsafe { (cu.cuMemAddressFree)(base, reserved) };
            self.record_drop_error("cuMemAddressFree", rc);
        };
        for (fd, &size) in handle.fds.iter().zip(&sizes) {
            let mut h: CUmemGenericAllocationHandle = 0;
            // SAFETY: a valid out-pointer; for a POSIX file descriptor the
            // OS handle is the descriptor's number in the pointer argument
            // (CUDA's convention); the descriptor is open (owned by
            // `handle`) for the call, which does not take it over.
            let rc = unsafe {
                (cu.cuMemImportFromShareableHandle)(
                    &mut h,
                    fd.as_raw_fd() as usize as *mut std::ffi::c_void,
                    CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                )
            };
            if let Err(e) = self.check("cuMemImportFromShareableHandle", rc) {
                undo(&handles, mapped);
                return Err(e);
            }
            handles.push(h);
            // SAFETY: `[base + mapped, + size)` lies in the reservation and
            // is not mapped; the handle is `size` bytes, offset 0.
            let rc = unsafe { (cu.cuMemMap)(base + mapped as u64, size, 0, h, 0) };
            if let Err(e) = self.check("cuMemMap", rc) {
                undo(&handles, mapped);
                return Err(e);
            }
            mapped += size;
        }
        let access = [CUmemAccessDesc {
            location: CUmemLocation {
                r#type: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
                id: self.device().ordinal(),
            },
            flags: CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        }];
        // SAFETY: `[base, base + reserved)` is wholly mapped above; one
        // descriptor, alive for the call.
        let rc = unsafe { (cu.cuMemSetAccess)(base, reserved, access.as_ptr(), access.len()) };
        if let Err(e) = self.check("cuMemSetAccess", rc) {
            undo(&handles, mapped);
            return Err(e);
        }
        let id = self
            .arena()
            .record_alloc(AllocKind::Imported, reserved, location);
        Ok(ImportedBuffer::from_mapping(
            self,
            base,
            len,
            id,
            Mapping::Shared { reserved, handles },
        ))
    }

    /// Imports an exportable pool of another process, exported with
    /// [`MemPool::export_ipc`](crate::MemPool::export_ipc)
    /// (`cuMemPoolImportFromShareableHandle`), so that its buffers can be
    /// imported ([`ImportedPool::import`]). Destroyed when dropped
    /// (`cuMemPoolDestroy`). An imported pool cannot allocate.
    ///
    /// # Errors
    ///
    /// Before the driver: [`Error::Ipc`] with [`IpcError::WrongKind`],
    /// [`IpcError::WrongDevice`]; [`Error::IllegalDuringCapture`];
    /// [`Error::InsideHostCallback`]. Driver errors: a descriptor that is not
    /// a CUDA pool's is refused.
    pub fn import_pool(&self, handle: &IpcHandle) -> Result<ImportedPool<'_>> {
        handle.check_for(HandleKind::Pool, self, None)?;
        refuse_here(self, "cuMemPoolImportFromShareableHandle")?;
        let cu = self.enter()?;
        let fd = handle.fds[0].as_raw_fd();
        let mut raw: CUmemoryPool = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the descriptor's number as the OS
        // handle (CUDA's convention for POSIX descriptors), open for the
        // call; flags 0.
        self.check("cuMemPoolImportFromShareableHandle", unsafe {
            (cu.cuMemPoolImportFromShareableHandle)(
                &mut raw,
                fd as usize as *mut std::ffi::c_void,
                CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0,
            )
        })?;
        Ok(ImportedPool {
            ctx: self,
            raw,
            pool_id: handle.pool_id,
        })
    }

    /// Opens an interprocess event of another process, exported with
    /// [`Event::export_ipc`] (`cuIpcOpenEventHandle`): an event of this
    /// context without timing, destroyed when dropped. Streams of this
    /// context can wait on it ([`Stream::wait`](crate::Stream::wait)) for
    /// the work the exporter recorded it after.
    ///
    /// # Safety
    ///
    /// Using an imported event after the exporter destroyed its event is
    /// undefined behaviour (CUDA's rule), and cudakit cannot see the
    /// exporter. The caller guarantees that the exporter keeps the event
    /// until this one is dropped (with cudakit there: releases its
    /// [`Exported`](super::Exported) guard only after this process said it
    /// is done).
    ///
    /// # Errors
    ///
    /// Before the driver: [`Error::Ipc`] with [`IpcError::WrongKind`],
    /// [`IpcError::WrongDevice`]; [`Error::InsideHostCallback`]. Driver
    /// errors from the open.
    pub unsafe fn open_ipc_event(&self, handle: &IpcHandle) -> Result<Event<'_>> {
        handle.check_for(HandleKind::Event, self, None)?;
        crate::context::release::refuse_in_callback("cuIpcOpenEventHandle")?;
        let cu = self.enter()?;
        let raw = CUipcEventHandle {
            reserved: to_c_chars(handle.driver_bytes()),
        };
        let mut event: CUevent = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and a handle of 64 bytes passed by
        // value; the context is current.
        self.check("cuIpcOpenEventHandle", unsafe {
            (cu.cuIpcOpenEventHandle)(&mut event, raw)
        })?;
        Ok(Event::from_raw(self, event, false))
    }
}

/// A pool of another process, imported ([`Context::import_pool`]): its
/// buffers exported there can be opened here ([`ImportedPool::import`]).
/// Destroyed when dropped (`cuMemPoolDestroy`); its imported buffers borrow
/// it, so they are closed first.
pub struct ImportedPool<'c> {
    ctx: &'c Context,
    raw: CUmemoryPool,
    pool_id: u64,
}

// SAFETY: a pool handle may be used from any thread.
unsafe impl Send for ImportedPool<'_> {}
// SAFETY: as above; nothing is mutated through `&ImportedPool`.
unsafe impl Sync for ImportedPool<'_> {}

impl std::fmt::Debug for ImportedPool<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportedPool")
            .field("raw", &self.raw)
            .finish()
    }
}

impl<'c> ImportedPool<'c> {
    /// The importing context.
    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUmemoryPool {
        self.raw
    }

    /// Opens a buffer of the exporter's pool, exported with
    /// [`PoolBuffer::export_ipc`](crate::PoolBuffer::export_ipc), as `len`
    /// elements of `T` (`cuMemPoolImportPointer`); freed here when dropped
    /// (`cuMemFree_v2`). Recorded in the arena as [`AllocKind::Imported`]
    /// with the caller. It borrows the pool.
    ///
    /// # Safety
    ///
    /// CUDA's rules for the memory, which cudakit cannot check across
    /// processes: it must not be touched before its allocation has
    /// completed in the exporter (wait on an IPC event the exporter
    /// recorded after it), and it must be freed here (dropped or closed)
    /// before the exporter frees it. The caller guarantees both (with
    /// cudakit on the exporter's side: its [`Exported`](super::Exported)
    /// guard is released only after this process said it is done). The
    /// handle's byte count must also be true: the buffer is as long as the
    /// handle says, and a pool pointer's allocation is not measured here
    /// (a legacy handle's is, by [`Context::open_ipc`]).
    ///
    /// # Errors
    ///
    /// Before the driver: [`Error::Ipc`] with [`IpcError::WrongKind`],
    /// [`IpcError::ElementSize`], [`IpcError::WrongDevice`],
    /// [`IpcError::WrongPool`] (a pointer of another pool than this one);
    /// [`Error::Alignment`]; [`Error::IllegalDuringCapture`];
    /// [`Error::InsideHostCallback`]. Driver errors from the import.
    #[track_caller]
    pub unsafe fn import<T: DeviceCopy>(
        &self,
        handle: &IpcHandle,
    ) -> Result<ImportedBuffer<'_, T>> {
        let location = Location::caller();
        let ctx = self.ctx;
        handle.check_for(HandleKind::PoolPointer, ctx, Some(std::mem::size_of::<T>()))?;
        check_align::<T>("imported buffer")?;
        if handle.pool_id != self.pool_id {
            return Err(Error::Ipc(IpcError::WrongPool));
        }
        let len = handle.elements()?;
        refuse_here(ctx, "cuMemPoolImportPointer")?;
        let cu = ctx.enter()?;
        let mut data = CUmemPoolPtrExportData {
            reserved: handle.driver_bytes(),
        };
        let mut ptr: CUdeviceptr = 0;
        // SAFETY: a valid out-pointer, a live imported pool, and 64 bytes of
        // export data alive for the call.
        ctx.check("cuMemPoolImportPointer", unsafe {
            (cu.cuMemPoolImportPointer)(&mut ptr, self.raw, &mut data)
        })?;
        let id = ctx
            .arena()
            .record_alloc(AllocKind::Imported, handle.bytes as usize, location);
        Ok(ImportedBuffer::from_mapping(
            ctx,
            ptr,
            len,
            id,
            Mapping::Pool,
        ))
    }
}

impl Drop for ImportedPool<'_> {
    fn drop(&mut self) {
        let raw = self.raw as usize;
        // SAFETY: destroys the pool imported in import_pool, once (now, or
        // later on a cudakit thread); its imported buffers borrowed it and
        // are closed already (or forgotten: leaked, and unused).
        self.ctx
            .release("cuMemPoolDestroy", None, move |cu| unsafe {
                (cu.cuMemPoolDestroy)(raw as CUmemoryPool)
            });
    }
}
