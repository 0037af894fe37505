//! Memory of another process mapped into this one: [`ImportedBuffer`].
//! It is made by the imports of [`crate::ipc`]; this room only knows how to
//! use it (views, copies, kernel arguments) and how to give it back.

use std::marker::PhantomData;

use cuda_sys::{CUdeviceptr, CUmemGenericAllocationHandle, CUresult, Driver};

use crate::context::Context;
use crate::error::Result;
use crate::memory::{DeviceCopy, DevicePtr, DeviceView};

/// How an [`ImportedBuffer`]'s memory is mapped, and so how it is given back.
#[derive(Debug)]
pub(crate) enum Mapping {
    /// A legacy IPC handle opened with `cuIpcOpenMemHandle_v2`; closed with
    /// `cuIpcCloseMemHandle`.
    Legacy,
    /// Shareable allocations imported (`cuMemImportFromShareableHandle`)
    /// and mapped into a range reserved here; unmapped (`cuMemUnmap`), the
    /// handles released (`cuMemRelease`), the range freed
    /// (`cuMemAddressFree`).
    Shared {
        reserved: usize,
        handles: Vec<CUmemGenericAllocationHandle>,
    },
    /// A pointer imported from an imported pool (`cuMemPoolImportPointer`);
    /// freed with `cuMemFree_v2`.
    Pool,
}

/// Memory exported by another process and opened in this one (see
/// [`crate::ipc`]): a legacy IPC handle of a `cuMemAlloc` buffer, the
/// shareable allocations of a [`VirtualBuffer`](crate::VirtualBuffer), or
/// a buffer of an exported pool. It is a buffer of its own kind, used like
/// the others: [`ImportedBuffer::as_view`] and `&ImportedBuffer` are kernel
/// arguments and copy operands; it borrows the importing context (and, for
/// a pool pointer, the imported pool), so it cannot outlive either.
///
/// Recorded in the context's arena as
/// [`AllocKind::Imported`](crate::AllocKind::Imported), with the caller
/// that imported it; the record is removed only when the driver has
/// closed or unmapped it. A refused close keeps the record, as leaked.
/// Dropping it closes it (errors go to [`Context::drop_errors`]);
/// [`ImportedBuffer::close`] returns the driver's answer. `mem::forget`
/// leaks the mapping, and nothing else.
pub struct ImportedBuffer<'a, T: DeviceCopy> {
    ctx: &'a Context,
    ptr: CUdeviceptr,
    len: usize,
    /// Its arena record.
    id: u64,
    mapping: Mapping,
    _marker: PhantomData<T>,
}

// SAFETY: the pointer and handles are values the driver accepts from any
// thread; device memory is not Rust memory, and the context is Sync.
unsafe impl<T: DeviceCopy> Send for ImportedBuffer<'_, T> {}
// SAFETY: as above; nothing is mutated through `&ImportedBuffer`.
unsafe impl<T: DeviceCopy> Sync for ImportedBuffer<'_, T> {}

impl<T: DeviceCopy> std::fmt::Debug for ImportedBuffer<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImportedBuffer")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .field("mapping", &self.mapping)
            .field("type", &std::any::type_name::<T>())
            .finish()
    }
}

impl<'a, T: DeviceCopy> ImportedBuffer<'a, T> {
    /// Takes over memory mapped at `ptr` (`len` elements) by an import
    /// recorded as `id` in `ctx`'s arena, given back as `mapping` says.
    pub(crate) fn from_mapping(
        ctx: &'a Context,
        ptr: CUdeviceptr,
        len: usize,
        id: u64,
        mapping: Mapping,
    ) -> Self {
        ImportedBuffer {
            ctx,
            ptr,
            len,
            id,
            mapping,
            _marker: PhantomData,
        }
    }

    /// The importing context.
    pub fn context(&self) -> &'a Context {
        self.ctx
    }

    /// The device address in this process (not the exporter's: CUDA makes
    /// no promise that they are equal).
    pub fn device_ptr(&self) -> DevicePtr {
        DevicePtr::new(self.ptr)
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Always `false`: an exported buffer holds at least one element.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Size in bytes.
    pub fn byte_len(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    /// Which import made it: `"legacy"`, `"shareable"` or `"pool"`.
    pub fn source(&self) -> &'static str {
        match self.mapping {
            Mapping::Legacy => "legacy",
            Mapping::Shared { .. } => "shareable",
            Mapping::Pool => "pool",
        }
    }

    /// The whole buffer as a view: a kernel argument, a copy source or
    /// destination. It borrows the buffer, so it cannot outlive the import.
    pub fn as_view(&self) -> DeviceView<'_, T> {
        DeviceView::from_raw_parts(self.ctx, self.ptr, self.len)
            .restricted_to_own_device(crate::compile::signature::check::Container::ImportedBuffer)
    }

    view_methods!();

    /// Closes the import now and returns the driver's answer (dropping does
    /// the same and records errors instead). A refused close keeps the
    /// arena record, as leaked: the memory may still be mapped.
    ///
    /// # Errors
    ///
    /// Driver errors of the close (`cuIpcCloseMemHandle`, `cuMemUnmap`,
    /// `cuMemRelease`, `cuMemAddressFree` or `cuMemFree_v2`). On a thread
    /// that is capturing or inside a host callback, where the driver would
    /// refuse it, the close is handed to the drop's deferred path and
    /// `Ok(())` returned.
    pub fn close(self) -> Result<()> {
        if !self.ctx.releases_now() {
            // Where the driver would refuse the close (or, on a green
            // context's partition, another thread than its own), the drop's
            // deferred path gives the import back later.
            drop(self);
            return Ok(());
        }
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again: the mapping is
        // moved out once, and the rest (a reference, integers) needs no
        // drop.
        let mapping = unsafe { std::ptr::read(&this.mapping) };
        let (call, op) = close_op(this.ptr, mapping);
        let (rc, refused) = match this.ctx.enter() {
            Ok(cu) => (op(cu), None),
            // A poisoned context: handed back as a drop would, the refusal
            // returned.
            Err(e) => match this.ctx.enter_for_drop() {
                Some(cu) => (op(cu), Some(e)),
                None => (CUresult::CUDA_ERROR_NOT_INITIALIZED, Some(e)),
            },
        };
        this.ctx.arena().record_release(this.id, rc, call);
        if let Some(e) = refused {
            this.ctx.record_drop_error(call, rc);
            return Err(e);
        }
        this.ctx.check(call, rc)
    }
}

/// The driver calls that give an import back, and the name they are
/// recorded under. Each stops at the first refusal and returns it, keeping
/// what that call would have freed (an unmap refused keeps the handles and
/// the range: releasing them under a live mapping would free nothing and
/// the arena would record a free that did not happen).
fn close_op(
    ptr: CUdeviceptr,
    mapping: Mapping,
) -> (
    &'static str,
    Box<dyn FnOnce(&'static Driver) -> CUresult + Send>,
) {
    match mapping {
        Mapping::Legacy => (
            "cuIpcCloseMemHandle",
            // SAFETY: closes the mapping opened by cuIpcOpenMemHandle_v2 at
            // `ptr`, once. No device work can still use it: work borrows the
            // buffer inside a scope, which waits before the borrow ends.
            Box::new(move |cu| unsafe { (cu.cuIpcCloseMemHandle)(ptr) }),
        ),
        Mapping::Shared { reserved, handles } => (
            "cuMemUnmap, cuMemRelease, cuMemAddressFree",
            Box::new(move |cu| {
                // SAFETY: unmaps the whole range mapped by the import (the
                // handles were mapped contiguously from `ptr`), once; no
                // queued work uses it (as above).
                let rc = unsafe { (cu.cuMemUnmap)(ptr, reserved) };
                if rc != CUresult::CUDA_SUCCESS {
                    return rc;
                }
                let mut first = CUresult::CUDA_SUCCESS;
                for h in handles {
                    // SAFETY: a handle imported by the import, now mapped
                    // nowhere, released once.
                    let rc = unsafe { (cu.cuMemRelease)(h) };
                    if first == CUresult::CUDA_SUCCESS {
                        first = rc;
                    }
                }
                if first != CUresult::CUDA_SUCCESS {
                    return first;
                }
                // SAFETY: the range reserved by the import, nothing mapped
                // in it any more, freed once.
                unsafe { (cu.cuMemAddressFree)(ptr, reserved) }
            }),
        ),
        Mapping::Pool => (
            "cuMemFreeAsync",
            // Freed stream-ordered, as pool memory is (memcheck counted a
            // `cuMemFree_v2` of an imported pool pointer as a leak), on the
            // legacy stream, which is then waited for: the close returns
            // once the memory is given back, as the exporter's protocol
            // needs ("done" after the close).
            // SAFETY: frees the pointer imported by cuMemPoolImportPointer,
            // once; no queued work uses it (as above); the legacy stream
            // (null) is always valid.
            Box::new(move |cu| unsafe {
                let rc = (cu.cuMemFreeAsync)(ptr, std::ptr::null_mut());
                if rc != CUresult::CUDA_SUCCESS {
                    return rc;
                }
                (cu.cuStreamSynchronize)(std::ptr::null_mut())
            }),
        ),
    }
}

impl<T: DeviceCopy> Drop for ImportedBuffer<'_, T> {
    fn drop(&mut self) {
        let mapping = std::mem::replace(&mut self.mapping, Mapping::Legacy);
        let (call, op) = close_op(self.ptr, mapping);
        // The release runs now, or (capturing thread, driver callback) later
        // on a cudakit thread; the arena record goes only when it succeeded.
        self.ctx.release(call, Some(self.id), op);
    }
}

device_memory_impls!(ImportedBuffer, ptr);
