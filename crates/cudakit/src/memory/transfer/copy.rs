//! The copy plumbing every buffer type shares: one function per direction,
//! each timing itself into the context's metrics.

use std::time::Instant;

use cuda_sys::{CUdeviceptr, CUmemorytype, CUstream};

use super::staged;
use crate::context::Context;
use crate::error::Result;
use crate::memory::{byte_len, memset_word, DeviceCopy};

/// Host to device, synchronous (`cuMemcpyHtoD_v2`).
///
/// # Safety
///
/// `dst` must address at least `src.len()` elements of `T` of device
/// memory of `ctx`, alive for the call.
pub(crate) unsafe fn htod<T: DeviceCopy>(ctx: &Context, dst: CUdeviceptr, src: &[T]) -> Result<()> {
    let _nvtx = crate::nvtx::auto("copy HtoD");
    let bytes = byte_len::<T>(src.len(), "copy")?;
    let cu = ctx.enter()?;
    let _work = ctx.sync_work()?;
    let t = Instant::now();
    if bytes >= staged::STAGE_MIN && !staged::is_page_locked(cu, src.as_ptr().cast()) {
        // SAFETY: `src` is `bytes` readable bytes, borrowed for the call;
        // the caller guarantees `dst` addresses `bytes` bytes of this
        // context's memory; no stream ordering is needed (`after` is null):
        // `sync_work` above waited for pending scope work.
        unsafe { staged::htod(ctx, dst, src.as_ptr().cast(), bytes, std::ptr::null_mut()) }?;
        ctx.counters().htod.add(bytes, Some(t.elapsed()));
        return Ok(());
    }
    // SAFETY: `src` is `bytes` readable bytes; the caller guarantees `dst`
    // addresses at least `bytes` bytes of this context's memory.
    let rc = unsafe { (cu.cuMemcpyHtoD)(dst, src.as_ptr().cast(), bytes) };
    ctx.check("cuMemcpyHtoD_v2", rc)?;
    // From pageable memory the call may return before the DMA has landed,
    // and cudakit's streams do not wait for the legacy stream: wait here so
    // that "synchronous" means done.
    sync_legacy(ctx)?;
    ctx.counters().htod.add(bytes, Some(t.elapsed()));
    Ok(())
}

/// Device to host, synchronous (`cuMemcpyDtoH_v2`).
///
/// # Safety
///
/// `src` must address at least `dst.len()` elements of `T` of device
/// memory of `ctx`, alive for the call.
pub(crate) unsafe fn dtoh<T: DeviceCopy>(
    ctx: &Context,
    dst: &mut [T],
    src: CUdeviceptr,
) -> Result<()> {
    let _nvtx = crate::nvtx::auto("copy DtoH");
    let bytes = byte_len::<T>(dst.len(), "copy")?;
    let cu = ctx.enter()?;
    let _work = ctx.sync_work()?;
    let t = Instant::now();
    if bytes >= staged::STAGE_MIN && !staged::is_page_locked(cu, dst.as_ptr().cast()) {
        // SAFETY: `dst` is `bytes` writable bytes, borrowed exclusively for
        // the call, of a type valid for every bit pattern; the caller
        // guarantees `src` addresses `bytes` bytes.
        unsafe {
            staged::dtoh(
                ctx,
                dst.as_mut_ptr().cast(),
                src,
                bytes,
                std::ptr::null_mut(),
            )
        }?;
        ctx.counters().dtoh.add(bytes, Some(t.elapsed()));
        return Ok(());
    }
    // SAFETY: `dst` is `bytes` writable bytes of a type valid for every bit
    // pattern; the caller guarantees `src` addresses `bytes` bytes.
    let rc = unsafe { (cu.cuMemcpyDtoH)(dst.as_mut_ptr().cast(), src, bytes) };
    ctx.check("cuMemcpyDtoH_v2", rc)?;
    ctx.counters().dtoh.add(bytes, Some(t.elapsed()));
    Ok(())
}

/// Device to host into a new vector.
///
/// # Safety
///
/// `src` must address at least `len` elements of `T` of device memory of
/// `ctx`, alive for the call.
pub(crate) unsafe fn dtoh_vec<T: DeviceCopy>(
    ctx: &Context,
    src: CUdeviceptr,
    len: usize,
) -> Result<Vec<T>> {
    let _nvtx = crate::nvtx::auto("copy DtoH");
    let bytes = byte_len::<T>(len, "copy")?;
    let mut out: Vec<T> = Vec::with_capacity(len);
    let cu = ctx.enter()?;
    let _work = ctx.sync_work()?;
    let t = Instant::now();
    if bytes >= staged::STAGE_MIN {
        // SAFETY: the vector has capacity for `len` elements (`bytes`
        // bytes), owned here; the caller guarantees `src` addresses `bytes`
        // bytes. A new vector is pageable memory.
        unsafe {
            staged::dtoh(
                ctx,
                out.as_mut_ptr().cast(),
                src,
                bytes,
                std::ptr::null_mut(),
            )
        }?;
    } else {
        // SAFETY: the vector has capacity for `len` elements (`bytes`
        // bytes); the caller guarantees `src` addresses `bytes` bytes.
        let rc = unsafe { (cu.cuMemcpyDtoH)(out.as_mut_ptr().cast(), src, bytes) };
        ctx.check("cuMemcpyDtoH_v2", rc)?;
    }
    // SAFETY: the driver wrote all `len` elements, and every bit pattern is
    // a valid `T` (DeviceCopy's contract).
    unsafe { out.set_len(len) };
    ctx.counters().dtoh.add(bytes, Some(t.elapsed()));
    Ok(out)
}

/// Device to device, synchronous with respect to the host
/// (`cuMemcpyDtoD_v2` followed by a wait on the legacy stream's work).
///
/// # Safety
///
/// `dst` and `src` must each address at least `bytes` bytes of device
/// memory of `ctx`, alive for the call.
pub(crate) unsafe fn dtod(
    ctx: &Context,
    dst: CUdeviceptr,
    src: CUdeviceptr,
    bytes: usize,
) -> Result<()> {
    let _nvtx = crate::nvtx::auto("copy DtoD");
    let cu = ctx.enter()?;
    let _work = ctx.sync_work()?;
    let t = Instant::now();
    // SAFETY: the caller guarantees both ranges are `bytes` long in this
    // context's memory.
    let rc = unsafe { (cu.cuMemcpyDtoD)(dst, src, bytes) };
    ctx.check("cuMemcpyDtoD_v2", rc)?;
    sync_legacy(ctx)?;
    ctx.counters().dtod.add(bytes, Some(t.elapsed()));
    Ok(())
}

/// Files a 2D or 3D copy of `bytes` in the context's counters by the
/// memory types of its (source, destination): from the host under HtoD, to
/// the host under DtoH, the others under DtoD.
pub(crate) fn file_copy(
    ctx: &Context,
    sides: (CUmemorytype, CUmemorytype),
    bytes: usize,
    time: Option<std::time::Duration>,
) {
    let c = ctx.counters();
    match sides {
        (CUmemorytype::CU_MEMORYTYPE_HOST, _) => c.htod.add(bytes, time),
        (_, CUmemorytype::CU_MEMORYTYPE_HOST) => c.dtoh.add(bytes, time),
        _ => c.dtod.add(bytes, time),
    }
}

/// Fills `len` elements at `dst` with `value`: `cuMemsetD8/16/32_v2` for
/// elements of 1, 2 or 4 bytes; other sizes upload a filled host copy.
///
/// # Safety
///
/// `dst` must address at least `len` elements of `T` of device memory of
/// `ctx`, alive for the call.
pub(crate) unsafe fn fill<T: DeviceCopy>(
    ctx: &Context,
    dst: CUdeviceptr,
    len: usize,
    value: T,
) -> Result<()> {
    byte_len::<T>(len, "fill")?;
    let Some(word) = memset_word(value) else {
        let host = vec![value; len];
        // SAFETY: this function's contract: `dst` addresses `len` elements.
        return unsafe { htod(ctx, dst, &host) };
    };
    let cu = ctx.enter()?;
    let _work = ctx.sync_work()?;
    // The caller guarantees `dst` addresses `len` elements of `size` bytes;
    // `word` holds the element zero-extended, so the casts drop only zeros.
    let (call, rc) = match std::mem::size_of::<T>() {
        // SAFETY: `len` 1-byte elements at `dst` (the caller's guarantee).
        1 => ("cuMemsetD8_v2", unsafe {
            (cu.cuMemsetD8)(dst, word as u8, len)
        }),
        // SAFETY: `len` 2-byte elements at `dst`.
        2 => ("cuMemsetD16_v2", unsafe {
            (cu.cuMemsetD16)(dst, word as u16, len)
        }),
        // SAFETY: `len` 4-byte elements at `dst`.
        _ => ("cuMemsetD32_v2", unsafe {
            (cu.cuMemsetD32)(dst, word, len)
        }),
    };
    ctx.check(call, rc)?;
    // Memsets of device memory are asynchronous to the host; make this one
    // done before any stream (which does not wait for the legacy stream)
    // can touch the memory.
    sync_legacy(ctx)
}

/// Waits for the legacy default stream, where the synchronous copies and
/// memsets are queued.
pub(crate) fn sync_legacy(ctx: &Context) -> Result<()> {
    let cu = ctx.enter()?;
    // SAFETY: waits on the legacy default stream (NULL).
    let rc = unsafe { (cu.cuStreamSynchronize)(std::ptr::null_mut()) };
    ctx.check("cuStreamSynchronize", rc)
}

/// Host to device on a stream (`cuMemcpyHtoDAsync_v2`).
///
/// # Safety
///
/// `src` must stay readable and unwritten, and `dst` valid, until the
/// stream has finished the copy; both must hold `bytes` bytes.
pub(crate) unsafe fn htod_async(
    ctx: &Context,
    stream: CUstream,
    dst: CUdeviceptr,
    src: *const u8,
    bytes: usize,
) -> Result<()> {
    let cu = ctx.enter()?;
    // SAFETY: the caller's contract.
    let rc = unsafe { (cu.cuMemcpyHtoDAsync)(dst, src.cast(), bytes, stream) };
    ctx.check("cuMemcpyHtoDAsync_v2", rc)?;
    ctx.counters().htod.add(bytes, None);
    Ok(())
}

/// Device to host on a stream (`cuMemcpyDtoHAsync_v2`).
///
/// # Safety
///
/// `dst` must stay writable and otherwise untouched, and `src` valid, until
/// the stream has finished the copy; both must hold `bytes` bytes.
pub(crate) unsafe fn dtoh_async(
    ctx: &Context,
    stream: CUstream,
    dst: *mut u8,
    src: CUdeviceptr,
    bytes: usize,
) -> Result<()> {
    let cu = ctx.enter()?;
    // SAFETY: the caller's contract.
    let rc = unsafe { (cu.cuMemcpyDtoHAsync)(dst.cast(), src, bytes, stream) };
    ctx.check("cuMemcpyDtoHAsync_v2", rc)?;
    ctx.counters().dtoh.add(bytes, None);
    Ok(())
}

/// Device to device on a stream (`cuMemcpyDtoDAsync_v2`).
///
/// # Safety
///
/// Both ranges must stay valid until the stream has finished the copy.
pub(crate) unsafe fn dtod_async(
    ctx: &Context,
    stream: CUstream,
    dst: CUdeviceptr,
    src: CUdeviceptr,
    bytes: usize,
) -> Result<()> {
    let cu = ctx.enter()?;
    // SAFETY: the caller's contract.
    let rc = unsafe { (cu.cuMemcpyDtoDAsync)(dst, src, bytes, stream) };
    ctx.check("cuMemcpyDtoDAsync_v2", rc)?;
    ctx.counters().dtod.add(bytes, None);
    Ok(())
}

/// Host to device in stream order: through the staged pipeline when `src`
/// is pageable and at least [`staged::STAGE_MIN`] bytes (the pipeline's
/// streams wait for `stream` first; the call returns once the bytes have
/// landed), else `cuMemcpyHtoDAsync_v2`. Never staged during a capture
/// (the pipeline synchronizes, which a capture forbids).
///
/// # Safety
///
/// As [`htod_async`].
/// Whether a copy of `bytes` to or from the host memory at `host` goes
/// through the staged pipeline (pageable, large, no capture running).
pub(crate) fn stages(ctx: &Context, host: *const u8, bytes: usize) -> Result<bool> {
    if bytes < staged::STAGE_MIN || ctx.capturing() {
        return Ok(false);
    }
    let cu = ctx.enter()?;
    Ok(!staged::is_page_locked(cu, host))
}

/// Host to device in stream order; `staged_` (from [`stages`], decided
/// once by the caller) sends it through the staged pipeline, which waits on
/// the host for the stream to reach the copy, as the driver's own pageable
/// copies do.
///
/// # Safety
///
/// As [`htod_async`].
pub(crate) unsafe fn htod_ordered(
    ctx: &Context,
    stream: CUstream,
    dst: CUdeviceptr,
    src: *const u8,
    bytes: usize,
    staged_: bool,
) -> Result<()> {
    {
        if staged_ {
            // SAFETY: the caller's contract covers `src` and `dst` for at
            // least as long as this call.
            unsafe { staged::htod(ctx, dst, src, bytes, stream) }?;
            ctx.counters().htod.add(bytes, None);
            return Ok(());
        }
    }
    // SAFETY: the caller's contract.
    unsafe { htod_async(ctx, stream, dst, src, bytes) }
}

/// Device to host in stream order; see [`htod_ordered`].
///
/// # Safety
///
/// As [`dtoh_async`].
pub(crate) unsafe fn dtoh_ordered(
    ctx: &Context,
    stream: CUstream,
    dst: *mut u8,
    src: CUdeviceptr,
    bytes: usize,
    staged_: bool,
) -> Result<()> {
    {
        if staged_ {
            // SAFETY: the caller's contract covers `dst` and `src` for at
            // least as long as this call.
            unsafe { staged::dtoh(ctx, dst, src, bytes, stream) }?;
            ctx.counters().dtoh.add(bytes, None);
            return Ok(());
        }
    }
    // SAFETY: the caller's contract.
    unsafe { dtoh_async(ctx, stream, dst, src, bytes) }
}
