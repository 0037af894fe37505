//! Sharing device memory and events with other processes (IPC).
//!
//! Three kinds of memory can be exported, each into an [`IpcHandle`]
//! (cudakit's versioned header, which names the exporter's device and
//! process, and the driver's bytes; see [`handle`] for the format):
//!
//! | exporter | handle | importer |
//! |---|---|---|
//! | [`DeviceBuffer::export_ipc`](crate::DeviceBuffer::export_ipc) (`cuIpcGetMemHandle`) | 64 bytes, any channel | `unsafe` [`Context::open_ipc`](crate::Context::open_ipc) (`cuIpcOpenMemHandle_v2`) |
//! | [`VirtualBuffer::export_ipc`](crate::VirtualBuffer::export_ipc) of a [shareable](crate::Context::alloc_virtual_shareable) buffer (`cuMemExportToShareableHandle`) | one POSIX descriptor per allocation | [`Context::import_virtual`](crate::Context::import_virtual) (`cuMemImportFromShareableHandle`, reserve, map, access) |
//! | [`MemPool::export_ipc`](crate::MemPool::export_ipc) of an [exportable](crate::Context::create_exportable_pool) pool, then [`PoolBuffer::export_ipc`](crate::PoolBuffer::export_ipc) per buffer | one descriptor, then 64 bytes per buffer | [`Context::import_pool`](crate::Context::import_pool), then `unsafe` [`ImportedPool::import`] |
//!
//! and an interprocess event ([`Context::ipc_event`](crate::Context::ipc_event),
//! [`Event::export_ipc`](crate::Event::export_ipc), `unsafe`
//! [`Context::open_ipc_event`](crate::Context::open_ipc_event)) orders the
//! importer's stream after the exporter's work. Descriptors cannot travel
//! as bytes: [`IpcChannel`] sends a handle's blob and its descriptors over
//! a Unix socket (`SCM_RIGHTS`).
//!
//! An import is an [`ImportedBuffer`]: a buffer of its own kind (a kernel
//! argument, a copy operand, a view), borrowing the importing context,
//! recorded in the arena as [`AllocKind::Imported`](crate::AllocKind::Imported)
//! with its caller, and removed from it only when the driver closed or
//! unmapped it.
//!
//! ```no_run
//! # fn main() -> cudakit::Result<()> {
//! use cudakit::ipc::IpcChannel;
//! # let socket_path = "/tmp/s";
//! // Exporter.
//! let ctx = cudakit::Context::new(0)?;
//! let stream = ctx.stream()?;
//! let buffer = ctx.alloc::<u32>(1 << 20)?;
//! let ready = ctx.ipc_event()?;
//! let sevens = vec![7u32; 1 << 20];
//! ctx.scope(|s| s.copy_to_device(&stream, &sevens, buffer.as_view()))?;
//! ready.record(&stream)?;
//! let channel = IpcChannel::connect(socket_path)?;
//! let (memory, event) = (buffer.export_ipc()?, ready.export_ipc()?);
//! memory.send(&channel)?;
//! event.send(&channel)?;
//! channel.recv_message()?; // "done": the importer closed both
//! memory.release();
//! event.release();
//!
//! // Importer (another process, a context of the same device).
//! # let channel = IpcChannel::connect(socket_path)?;
//! let (memory, event) = (channel.recv()?, channel.recv()?);
//! // SAFETY: the exporter keeps the buffer and the event until it reads
//! // our "done" below.
//! let buffer = unsafe { ctx.open_ipc::<u32>(&memory)? };
//! // SAFETY: as above.
//! let ready = unsafe { ctx.open_ipc_event(&event)? };
//! stream.wait(&ready)?;
//! stream.synchronize()?;
//! assert!(buffer.to_vec()?.iter().all(|&x| x == 7));
//! drop((buffer, ready));
//! channel.send_message(b"done", &[])?;
//! # Ok(()) }
//! ```
//!
//! # Duties, and why this is sound
//!
//! Exporter's duty: keep the memory (and the event) alive while another
//! process uses it. cudakit cannot see the other process, so the duty is
//! held by the [`Exported`] guard every export returns:
//!
//! - it borrows what it exports: safe code cannot free, drop or resize it
//!   while the guard lives;
//! - the export is counted on the buffer, pool or event, and only
//!   [`Exported::release`] uncounts it. A drop of the buffer while an
//!   export is counted (the guard dropped without `release`, or forgotten
//!   with `mem::forget`) does not free: the memory is kept, recorded as
//!   [`AllocKind::Leaked`](crate::AllocKind::Leaked). So a forgotten guard
//!   leaks, and never frees what another process may use; no guarantee
//!   rests on a destructor running (rule 4 of the architecture).
//!
//! Importer's side: opening a legacy handle, a pool pointer or an event is
//! `unsafe`, because the memory's lifetime there depends on the exporter,
//! another program: CUDA calls a free in the exporter before the importer's
//! close, and the use of an imported event whose exporter destroyed it,
//! undefined behaviour. The caller's promise is the exporter's duty above
//! (kept by cudakit when the exporter uses it and releases only after the
//! importer said it is done). Importing shareable (virtual-memory)
//! allocations is safe: the importer's handles hold references of their own,
//! and CUDA frees the physical memory only after every handle is released
//! and every mapping unmapped, whatever the exporter does.
//!
//! In this process, an [`ImportedBuffer`] is used like any buffer: device
//! work reaches it only through borrows held by a scope (which waits before
//! the borrow ends) or a graph, so its close never meets queued work, as a
//! [`DeviceBuffer`](crate::DeviceBuffer)'s free never does.
//!
//! # Bad input
//!
//! Refused before the driver, each a typed [`IpcError`](crate::error::IpcError), nothing changed:
//! a blob that is truncated or not cudakit's (wrong magic, version, kind),
//! a handle of another device (its device UUID differs from the importing
//! context's), another element size, descriptors missing, a legacy handle
//! opened in its own process (CUDA refuses it), a pool pointer given to
//! another pool. The driver refuses the rest with a typed driver error, and
//! the context stays usable: a descriptor that is not a CUDA handle (a
//! pipe, `/dev/null`), a legacy handle whose exporter has exited (its
//! memory was freed with its process).
//!
//! # Threads and failures
//!
//! Exports and imports may run on any thread; each import is one arena
//! record taken after its driver calls succeeded. They are refused on a
//! thread that is capturing (the driver would refuse the mapping calls and
//! invalidate the capture) and inside host callbacks. A failed shareable
//! import undoes what it did, last first (unmap, release, free the range;
//! a refused unmap keeps the rest). Closing: a refused close keeps the
//! arena record, as leaked (the memory may still be mapped); a close from a
//! capturing thread or a callback is deferred like every release.

pub(crate) mod channel;
mod export;
pub mod handle;
mod import;

pub use channel::{IpcChannel, MAX_FDS, MAX_MESSAGE};
pub use export::Exported;
pub use handle::{HandleKind, IpcHandle};
pub use import::ImportedPool;

pub use crate::memory::ImportedBuffer;
