//! The exporter's side: each kind of exportable memory (and the
//! interprocess event) gives an [`Exported`] guard that borrows it and
//! holds the [`IpcHandle`] to send.

use std::ffi::c_int;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicUsize, Ordering};

use cuda_sys::{
    CUipcEventHandle, CUipcMemHandle, CUmemAllocationHandleType, CUmemPoolPtrExportData,
};

use super::handle::{process_token, HandleKind, IpcHandle, MAX_CHUNKS};
use super::IpcChannel;
use crate::error::{Error, IpcError, Result};
use crate::memory::{DeviceBuffer, DeviceCopy, MemPool, PoolBuffer, VirtualBuffer};
use crate::work::event::Event;
use crate::Context;

/// An export in progress: the [`IpcHandle`] another process opens, and a
/// borrow of what it shares, so that it cannot be freed, dropped, resized
/// or moved while the guard lives.
///
/// # The exporter's duty, and how the guard expresses it
///
/// Another process may use the memory (or wait on the event) until it has
/// closed its import. cudakit cannot see that process, so the duty is
/// explicit: call [`Exported::release`] once the importers have said they
/// are done (over the [`IpcChannel`], say). Until then:
///
/// - the guard borrows the buffer, so safe code cannot free or resize it;
/// - if the guard is dropped without `release`, or forgotten
///   (`mem::forget`), the export stays counted on the buffer, and the
///   buffer's drop keeps the memory instead of freeing it (recorded in the
///   arena as [`AllocKind::Leaked`](crate::AllocKind::Leaked), "exported
///   over IPC, its Exported guard never released"). A forgotten guard
///   leaks; it never frees memory another process may still use. Nothing
///   rests on the guard's destructor running.
///
/// The exception is a shareable [`VirtualBuffer`]: each importer holds a
/// reference of its own to the physical memory (the descriptor it
/// imported; CUDA frees the memory only when every handle, shareable ones
/// included, is released and every mapping unmapped), so freeing it here
/// is harmless to them, and its guard only owns the descriptors.
#[must_use = "an export not released keeps its memory for ever: call Exported::release once the \
              importers are done"]
pub struct Exported<'b> {
    handle: IpcHandle,
    /// The exporter's count of unreleased exports (absent for a shareable
    /// virtual buffer, whose memory importers keep alive themselves).
    count: Option<&'b AtomicUsize>,
}

impl std::fmt::Debug for Exported<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exported")
            .field("handle", &self.handle)
            .finish()
    }
}

impl<'b> Exported<'b> {
    fn new(handle: IpcHandle, count: Option<&'b AtomicUsize>) -> Self {
        if let Some(c) = count {
            c.fetch_add(1, Ordering::AcqRel);
        }
        Exported { handle, count }
    }

    /// The handle to send (its blob and descriptors).
    pub fn handle(&self) -> &IpcHandle {
        &self.handle
    }

    /// Sends the handle over `channel` ([`IpcChannel::send`]).
    ///
    /// # Errors
    ///
    /// As [`IpcChannel::send`].
    pub fn send(&self, channel: &IpcChannel) -> Result<()> {
        channel.send(&self.handle)
    }

    /// Ends the export: the caller states that no other process uses the
    /// memory any more (each importer closed its import). The buffer may be
    /// freed normally afterwards. The handle's descriptors are closed.
    pub fn release(self) {
        if let Some(c) = self.count {
            c.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

/// The header fields every handle of `ctx` shares.
fn new_handle(
    ctx: &Context,
    kind: HandleKind,
    bytes: usize,
    elem_size: usize,
    payload: Vec<u8>,
    fds: Vec<OwnedFd>,
) -> Result<IpcHandle> {
    Ok(IpcHandle {
        kind,
        device: super::handle::device_uuid(ctx)?,
        process: process_token(),
        bytes: bytes as u64,
        elem_size: elem_size as u32,
        pool_id: 0,
        payload,
        fds,
    })
}

/// The 64 bytes of a driver handle as the payload.
fn bytes_of(raw: &[std::ffi::c_char; 64]) -> Vec<u8> {
    raw.iter().map(|&b| b as u8).collect()
}

impl<T: DeviceCopy> DeviceBuffer<'_, T> {
    /// Exports the buffer to other processes as a legacy IPC handle
    /// (`cuIpcGetMemHandle`): 64 bytes that can travel through any channel.
    /// Another process opens it with [`Context::open_ipc`] (not this one:
    /// CUDA refuses to open a handle in the process that exported it).
    ///
    /// ```no_run
    /// # fn main() -> cudakit::Result<()> {
    /// use cudakit::ipc::IpcChannel;
    /// let ctx = cudakit::Context::new(0)?;
    /// let buffer = ctx.upload(&[1u32, 2, 3])?;
    /// let channel = IpcChannel::connect("/tmp/importer.sock")?;
    /// let export = buffer.export_ipc()?;
    /// export.send(&channel)?;
    /// channel.recv_message()?; // the importer says it has closed its import
    /// export.release();
    /// drop(buffer); // freed: no other process uses it
    /// # Ok(()) }
    /// ```
    ///
    /// The guard borrows the buffer, so it cannot be dropped while
    /// exported:
    ///
    /// ```compile_fail,E0505
    /// # fn main() -> cudakit::Result<()> {
    /// let ctx = cudakit::Context::new(0)?;
    /// let buffer = ctx.alloc::<f32>(16)?;
    /// let export = buffer.export_ipc()?;
    /// drop(buffer); // error: `buffer` is borrowed by `export`
    /// export.release();
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// Driver errors (a device or system without IPC support); a poisoned
    /// context.
    pub fn export_ipc(&self) -> Result<Exported<'_>> {
        let ctx = self.context();
        let cu = ctx.enter()?;
        let mut raw = CUipcMemHandle::default();
        // SAFETY: a valid out-pointer; the buffer's address is the base of a
        // live cuMemAlloc allocation of this context, which is current.
        ctx.check("cuIpcGetMemHandle", unsafe {
            (cu.cuIpcGetMemHandle)(&mut raw, self.device_ptr().as_raw())
        })?;
        let handle = new_handle(
            ctx,
            HandleKind::LegacyMemory,
            self.byte_len(),
            std::mem::size_of::<T>(),
            bytes_of(&raw.reserved),
            Vec::new(),
        )?;
        Ok(Exported::new(handle, Some(&self.exports)))
    }
}

/// Exports one shareable allocation as a POSIX file descriptor.
fn export_fd(ctx: &Context, handle: cuda_sys::CUmemGenericAllocationHandle) -> Result<OwnedFd> {
    let cu = ctx.enter()?;
    let mut fd: c_int = -1;
    // SAFETY: for a POSIX file descriptor the out-parameter is an `int`;
    // the handle is a live allocation made with that handle type.
    ctx.check("cuMemExportToShareableHandle", unsafe {
        (cu.cuMemExportToShareableHandle)(
            (&mut fd as *mut c_int).cast(),
            handle,
            CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            0,
        )
    })?;
    if fd < 0 {
        return Err(Error::Ipc(IpcError::Channel {
            call: "cuMemExportToShareableHandle",
            message: format!("the driver returned descriptor {fd}"),
        }));
    }
    // SAFETY: the driver made a new descriptor for this process and hands
    // it to the caller, who owns it from now on.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

impl<T: DeviceCopy> VirtualBuffer<'_, T> {
    /// Exports the buffer's physical allocations to other processes, one
    /// POSIX file descriptor each (`cuMemExportToShareableHandle`); another
    /// process maps them with [`Context::import_virtual`]. The buffer must
    /// have been made shareable ([`Context::alloc_virtual_shareable`]).
    ///
    /// Each importer holds its own reference to the memory, so it stays
    /// valid there even after this buffer shrinks or is dropped, or this
    /// process exits (the guard owns only the descriptors). The guard
    /// borrows the buffer: it cannot be resized while the export lives, so
    /// the handle names exactly the allocations mapped now.
    ///
    /// # Errors
    ///
    /// [`Error::Ipc`] with [`IpcError::NotExportable`] for a buffer made
    /// without an export handle type, or one of more than 64 allocations;
    /// driver errors; a poisoned context.
    pub fn export_ipc(&self) -> Result<Exported<'_>> {
        if !self.is_shareable() {
            return Err(Error::Ipc(IpcError::NotExportable {
                what: "a virtual buffer",
                reason: "it was made without an export handle type (make it with \
                         Context::alloc_virtual_shareable)",
            }));
        }
        let chunks = self.allocation_handles();
        if chunks.len() > MAX_CHUNKS {
            return Err(Error::Ipc(IpcError::NotExportable {
                what: "a virtual buffer",
                reason: "it holds more than 64 physical allocations (grow it in larger steps)",
            }));
        }
        let ctx = self.context();
        let mut fds = Vec::with_capacity(chunks.len());
        let mut payload = Vec::with_capacity(chunks.len() * 8);
        for &(h, bytes) in &chunks {
            // A failure drops (closes) the descriptors made so far.
            fds.push(export_fd(ctx, h)?);
            payload.extend_from_slice(&(bytes as u64).to_le_bytes());
        }
        let handle = new_handle(
            ctx,
            HandleKind::Shareable,
            self.byte_len(),
            std::mem::size_of::<T>(),
            payload,
            fds,
        )?;
        Ok(Exported::new(handle, None))
    }
}

impl MemPool<'_> {
    /// Exports the pool to other processes as a POSIX file descriptor
    /// (`cuMemPoolExportToShareableHandle`); another process imports it with
    /// [`Context::import_pool`], then each buffer exported with
    /// [`PoolBuffer::export_ipc`]. The pool must be exportable
    /// ([`Context::create_exportable_pool`]).
    ///
    /// # Errors
    ///
    /// [`Error::Ipc`] with [`IpcError::NotExportable`] for the device's
    /// default pool (CUDA cannot export it) and for a pool created without
    /// an export handle type; driver errors; a poisoned context.
    pub fn export_ipc(&self) -> Result<Exported<'_>> {
        if self.is_default() {
            return Err(Error::Ipc(IpcError::NotExportable {
                what: "the device's default pool",
                reason: "CUDA cannot export it (create one with Context::create_exportable_pool)",
            }));
        }
        if !self.is_exportable() {
            return Err(Error::Ipc(IpcError::NotExportable {
                what: "a memory pool",
                reason: "it was created without an export handle type (create it with \
                         Context::create_exportable_pool)",
            }));
        }
        let ctx = self.context();
        let cu = ctx.enter()?;
        let mut fd: c_int = -1;
        // SAFETY: for a POSIX file descriptor the out-parameter is an `int`;
        // a live pool created with that handle type; flags 0.
        ctx.check("cuMemPoolExportToShareableHandle", unsafe {
            (cu.cuMemPoolExportToShareableHandle)(
                (&mut fd as *mut c_int).cast(),
                self.as_raw(),
                CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0,
            )
        })?;
        if fd < 0 {
            return Err(Error::Ipc(IpcError::Channel {
                call: "cuMemPoolExportToShareableHandle",
                message: format!("the driver returned descriptor {fd}"),
            }));
        }
        // SAFETY: the driver made a new descriptor for this process; this
        // handle owns it from now on.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut handle = new_handle(ctx, HandleKind::Pool, 0, 0, Vec::new(), vec![fd])?;
        handle.pool_id = self.export_id;
        Ok(Exported::new(handle, Some(&self.exports)))
    }
}

impl<T: DeviceCopy> PoolBuffer<'_, T> {
    /// Exports one buffer of an exportable pool (`cuMemPoolExportPointer`):
    /// 64 bytes, opened in another process with [`ImportedPool::import`]
    /// after it imported the pool ([`MemPool::export_ipc`]).
    ///
    /// The importer must not touch the memory before its allocation has
    /// completed on this buffer's stream: record an
    /// [`ipc_event`](Context::ipc_event) after the work that fills it and
    /// let the importer wait on it. The importer must free it (close its
    /// import) before this buffer is freed: release the guard only then.
    ///
    /// # Errors
    ///
    /// [`Error::Ipc`] with [`IpcError::NotExportable`] for a buffer of a
    /// pool that cannot be exported (the default pool, a pool created
    /// without an export handle type); driver errors; a poisoned context.
    ///
    /// [`ImportedPool::import`]: super::ImportedPool::import
    pub fn export_ipc(&self) -> Result<Exported<'_>> {
        if self.pool_id == 0 {
            return Err(Error::Ipc(IpcError::NotExportable {
                what: "a stream-ordered buffer",
                reason: "its pool cannot be exported (allocate it from a pool made with \
                         Context::create_exportable_pool)",
            }));
        }
        let ctx = self.context();
        let cu = ctx.enter()?;
        let mut data = CUmemPoolPtrExportData { reserved: [0; 64] };
        // SAFETY: a valid out-pointer; the address of a live allocation of
        // an exportable pool of this context.
        ctx.check("cuMemPoolExportPointer", unsafe {
            (cu.cuMemPoolExportPointer)(&mut data, self.device_ptr().as_raw())
        })?;
        let mut handle = new_handle(
            ctx,
            HandleKind::PoolPointer,
            self.len() * std::mem::size_of::<T>(),
            std::mem::size_of::<T>(),
            data.reserved.to_vec(),
            Vec::new(),
        )?;
        handle.pool_id = self.pool_id;
        Ok(Exported::new(handle, Some(&self.exports)))
    }
}

impl Event<'_> {
    /// Exports the event to other processes (`cuIpcGetEventHandle`), so that
    /// their streams can wait for work recorded here: record it after the
    /// work, then send the handle; the importer opens it with
    /// [`Context::open_ipc_event`] and waits on it
    /// ([`Stream::wait`](crate::Stream::wait)). The event must be made by
    /// [`Context::ipc_event`].
    ///
    /// Waiting on an imported event after the exporter destroyed it is
    /// undefined behaviour in the importer (CUDA's rule), so an export that
    /// is not released keeps the event alive: its drop does not destroy it.
    ///
    /// # Errors
    ///
    /// [`Error::Ipc`] with [`IpcError::NotExportable`] for an event made
    /// without `CU_EVENT_INTERPROCESS`; driver errors; a poisoned context.
    pub fn export_ipc(&self) -> Result<Exported<'_>> {
        if !self.is_interprocess() {
            return Err(Error::Ipc(IpcError::NotExportable {
                what: "an event",
                reason: "it was made without CU_EVENT_INTERPROCESS (make it with \
                         Context::ipc_event)",
            }));
        }
        let ctx = self.context();
        let cu = ctx.enter()?;
        let mut raw = CUipcEventHandle::default();
        // SAFETY: a valid out-pointer and a live interprocess event of this
        // context.
        ctx.check("cuIpcGetEventHandle", unsafe {
            (cu.cuIpcGetEventHandle)(&mut raw, self.as_raw())
        })?;
        let handle = new_handle(
            ctx,
            HandleKind::Event,
            0,
            0,
            bytes_of(&raw.reserved),
            Vec::new(),
        )?;
        Ok(Exported::new(handle, Some(&self.exports)))
    }
}
