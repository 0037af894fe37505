//! Pageable transfers without staging: the caller's own pages are
//! registered with the driver (`cuMemHostRegister_v2`) for the length of
//! one transfer, the DMA runs straight from (or into) them, and they are
//! unregistered before the call returns.
//!
//! # Why only for the call
//!
//! A registration outliving the caller's borrow would be unsound: once the
//! borrow ends the memory may be unmapped and the address reused by an
//! unrelated mapping, while the driver's registration still translates the
//! address to the old, pinned physical pages. A later DMA "from" that
//! address would read stale pages (a silent wrong answer). So the pages are
//! registered, used and unregistered inside the call that borrows them:
//! register → copy → wait → unregister.
//!
//! # What is registered
//!
//! Only the whole [`ALIGN`]-sized blocks inside the caller's range: nothing
//! outside the borrow is ever registered, so two transfers of disjoint
//! buffers never overlap (and cannot make each other's registration fail),
//! whatever the system's page size up to 64 KiB. The few bytes before and
//! after go through the lane's first page-locked chunk.
//!
//! # Failures
//!
//! A refused registration (memory the driver cannot pin, a range someone
//! else registered: `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`, a device
//! without the feature) is no error: the transfer is staged instead. A
//! failed wait for the DMA keeps the registration for ever (rule 2: the DMA
//! may still use the pages), recorded as kept in the arena; cudakit itself
//! then never treats that range as page-locked (see [`page_locked_not_ours`]).
//!
//! # Threads
//!
//! While cudakit holds a transient registration, the driver reports the
//! range as page-locked to anyone who asks. Another thread's cudakit copy
//! of the same bytes (a shared borrow of the source) must not take that
//! for page-locked memory and queue an asynchronous DMA from it that could
//! outlive the registration: [`page_locked_not_ours`] tells `is_page_locked`
//! that such a range is cudakit's, and the copy treats it as pageable.

use std::ptr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use cuda_sys::{CUdeviceptr, CUresult, CUstream, CU_MEMHOSTREGISTER_READ_ONLY};

use super::staged::{finish, order_after, Lane, CHUNK};

const _: () = assert!(2 * ALIGN <= CHUNK, "the edges fit in one chunk");
use crate::context::Context;
use crate::error::Result;

/// Registered blocks are whole multiples of this, at addresses that are
/// multiples of it (64 KiB: every page size Linux uses for host memory on
/// the platforms CUDA supports, but the huge ones).
pub(crate) const ALIGN: usize = 64 << 10;

/// Ranges cudakit registered for a transfer (start, end), from just
/// before `cuMemHostRegister_v2` until just after a successful
/// `cuMemHostUnregister`; kept for ever when the unregistration did not
/// happen.
static OURS: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());
/// How many entries `OURS` holds (raised before a registration begins).
static LIVE: AtomicUsize = AtomicUsize::new(0);
/// Raised once per registration, after `LIVE` and before the driver call:
/// a probe that saw `LIVE == 0` and the same generation before and after
/// it cannot have seen a registration of cudakit's.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// The last measured cost of a registration and its unregistration, in
/// nanoseconds per MiB (0: not measured yet); `PageablePolicy::Auto`
/// registers only while it is low.
static COST_NS_PER_MIB: AtomicU64 = AtomicU64::new(0);

/// The last measured cost of registering and unregistering a range, in
/// nanoseconds per MiB; `None` before the first registered transfer.
pub fn measured_cost_ns_per_mib() -> Option<u64> {
    match COST_NS_PER_MIB.load(Ordering::Relaxed) {
        0 => None,
        c => Some(c),
    }
}

/// Whether `ptr` lies in a range cudakit has registered for a transfer of
/// its own (or kept after a failed wait): such memory is pageable to every
/// other copy, which must never queue DMA from it that could outlive the
/// registration. `probe` is the driver's answer for `ptr`
/// (`is_page_locked`'s `cuPointerGetAttribute`), asked here so that the
/// answer and this check see the same registrations.
pub(crate) fn page_locked_not_ours(ptr: *const u8, probe: impl Fn() -> bool) -> bool {
    let generation = GENERATION.load(Ordering::SeqCst);
    let live = LIVE.load(Ordering::SeqCst);
    if !probe() {
        return false;
    }
    if live == 0 && GENERATION.load(Ordering::SeqCst) == generation {
        // No registration of cudakit's was live when the probe began, and
        // none began before it ended: the page-locked memory is not ours.
        return true;
    }
    // Under the lock no registration of ours begins or ends: a range that
    // is not listed is not registered by cudakit now.
    let ours = crate::context::lock(&OURS);
    let p = ptr as usize;
    if ours.iter().any(|&(s, e)| s <= p && p < e) {
        return false;
    }
    probe()
}

/// A transient registration of `[start, start + len)`, and how long the
/// driver took to make it.
struct Registration {
    start: usize,
    len: usize,
    took: std::time::Duration,
}

/// Registers the whole [`ALIGN`] blocks of `[host, host + bytes)` (read
/// only for an upload where the device supports it); `None` when there
/// are too few of them, or the driver refused (the caller stages). A
/// sticky error is returned.
fn register(
    ctx: &Context,
    host: usize,
    bytes: usize,
    upload: bool,
) -> Result<Option<Registration>> {
    let start = host.div_ceil(ALIGN) * ALIGN;
    let end = (host + bytes) / ALIGN * ALIGN;
    // Worth it only when the registered part is most of the transfer.
    if end <= start || end - start < bytes / 2 {
        return Ok(None);
    }
    let len = end - start;
    let cu = ctx.enter()?;
    {
        let mut ours = crate::context::lock(&OURS);
        LIVE.fetch_add(1, Ordering::SeqCst);
        GENERATION.fetch_add(1, Ordering::SeqCst);
        ours.push((start, end));
    }
    let flags: &[u32] = if upload {
        &[CU_MEMHOSTREGISTER_READ_ONLY, 0]
    } else {
        &[0]
    };
    let mut rc = CUresult::CUDA_SUCCESS;
    for &f in flags {
        let t = Instant::now();
        // SAFETY: `[start, start + len)` lies inside the caller's borrowed
        // range (rounded inwards), which stays mapped for the call; the
        // registration is undone before the call returns (or kept for ever
        // after a failed wait), and the range is listed as ours meanwhile.
        rc = unsafe { (cu.cuMemHostRegister)(start as *mut _, len, f) };
        if rc == CUresult::CUDA_SUCCESS {
            let took = t.elapsed();
            return Ok(Some(Registration { start, len, took }));
        }
        if rc == CUresult::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED {
            break;
        }
    }
    forget_ours(start);
    // A refusal is no error (the transfer is staged), unless it is sticky.
    match ctx.check("cuMemHostRegister_v2", rc) {
        Err(e) if e.is_sticky() => Err(e),
        _ => Ok(None),
    }
}

/// Removes `start`'s entry from the list of our registrations.
fn forget_ours(start: usize) {
    let mut ours = crate::context::lock(&OURS);
    if let Some(i) = ours.iter().position(|&(s, _)| s == start) {
        ours.swap_remove(i);
        LIVE.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Registration {
    /// Undoes the registration after the transfer's DMA is known to be
    /// over (`waited`), or keeps it for ever (recorded as kept) when not.
    fn end(self, ctx: &Context, waited: bool) {
        if !waited {
            ctx.arena().record_kept(
                self.len,
                "pages registered for a transfer whose wait failed",
            );
            return;
        }
        let t = Instant::now();
        let rc = match ctx.enter_for_drop() {
            // SAFETY: registered by `register` at this address; the DMA
            // that used it has finished (the lane's streams were waited
            // for); unregistered once.
            Some(cu) => unsafe { (cu.cuMemHostUnregister)(self.start as *mut _) },
            None => CUresult::CUDA_ERROR_NOT_INITIALIZED,
        };
        ctx.record_drop_error("cuMemHostUnregister", rc);
        if rc == CUresult::CUDA_SUCCESS {
            forget_ours(self.start);
            let mib = (self.len >> 20).max(1) as u64;
            let ns = (self.took + t.elapsed()).as_nanos() as u64 / mib;
            COST_NS_PER_MIB.store(ns.max(1), Ordering::Relaxed);
        } else {
            ctx.arena()
                .record_kept(self.len, "pages whose unregistration the driver refused");
        }
    }
}

/// Whether `finish`'s outcome means the DMA is known to be over: it
/// returns only once both streams were waited for (also when it reports an
/// error: a failed first wait was tried again, and a second failure aborts
/// the process), or after a sticky error, which stopped the context's
/// work; the pages are kept registered then all the same, as the boxes of
/// host callbacks are (rule 2: nothing the work may still use is given up
/// on an error's word).
fn waited(done: &Result<()>) -> bool {
    match done {
        Ok(()) => true,
        Err(e) => !e.is_sticky(),
    }
}

/// Host to device from the caller's registered pages. `Ok(false)` when
/// they could not be registered (nothing was queued: the caller stages).
///
/// # Safety
///
/// As `staged::htod`; `lane` is the context's host-to-device lane, locked
/// by the caller, whose previous transfer has finished.
pub(crate) unsafe fn htod(
    ctx: &Context,
    lane: &Lane,
    dst: CUdeviceptr,
    src: *const u8,
    bytes: usize,
    after: CUstream,
) -> Result<bool> {
    let Some(reg) = register(ctx, src as usize, bytes, true)? else {
        return Ok(false);
    };
    let head = reg.start - src as usize;
    let tail = src as usize + bytes - (reg.start + reg.len);
    let queued = (|| -> Result<()> {
        let cu = ctx.enter()?;
        order_after(ctx, lane, after)?;
        let chunk = lane.chunks[0];
        // SAFETY: the head and tail (each under ALIGN bytes, together
        // under CHUNK) are readable bytes of the caller's range; the chunk
        // is not read by any DMA (the lane's previous transfer finished).
        unsafe {
            ptr::copy_nonoverlapping(src, chunk, head);
            ptr::copy_nonoverlapping(src.add(bytes - tail), chunk.add(head), tail);
        }
        let s = lane.streams[0];
        for (d, h, n) in [
            (dst, chunk as usize, head),
            (dst + (bytes - tail) as u64, chunk as usize + head, tail),
            (dst + head as u64, reg.start, reg.len),
        ] {
            if n == 0 {
                continue;
            }
            // SAFETY: `n` bytes of page-locked memory (the chunk, or the
            // range registered above) to `n` bytes of device memory inside
            // the caller's range; both stay valid until `finish` below has
            // waited for the stream.
            ctx.check("cuMemcpyHtoDAsync_v2", unsafe {
                (cu.cuMemcpyHtoDAsync)(d, h as *const _, n, s)
            })?;
        }
        Ok(())
    })();
    let done = finish(ctx, lane);
    reg.end(ctx, waited(&done));
    queued.and(done).map(|()| true)
}

/// Device to host into the caller's registered pages; see [`htod`].
///
/// # Safety
///
/// As `staged::dtoh`; `lane` is the context's device-to-host lane, locked
/// by the caller, whose previous transfer has finished.
pub(crate) unsafe fn dtoh(
    ctx: &Context,
    lane: &Lane,
    dst: *mut u8,
    src: CUdeviceptr,
    bytes: usize,
    after: CUstream,
) -> Result<bool> {
    let Some(reg) = register(ctx, dst as usize, bytes, false)? else {
        return Ok(false);
    };
    let head = reg.start - dst as usize;
    let tail = dst as usize + bytes - (reg.start + reg.len);
    let chunk = lane.chunks[0];
    let queued = (|| -> Result<()> {
        let cu = ctx.enter()?;
        order_after(ctx, lane, after)?;
        let s = lane.streams[0];
        for (h, d, n) in [
            (chunk as usize, src, head),
            (chunk as usize + head, src + (bytes - tail) as u64, tail),
            (reg.start, src + head as u64, reg.len),
        ] {
            if n == 0 {
                continue;
            }
            // SAFETY: `n` bytes of device memory inside the caller's range
            // into `n` bytes of page-locked memory (the chunk, which no
            // other DMA uses now, or the range registered above); both stay
            // valid until `finish` below has waited for the stream.
            ctx.check("cuMemcpyDtoHAsync_v2", unsafe {
                (cu.cuMemcpyDtoHAsync)(h as *mut _, d, n, s)
            })?;
        }
        Ok(())
    })();
    let done = finish(ctx, lane);
    if queued.is_ok() && done.is_ok() {
        // SAFETY: the DMA into the chunk has finished (waited for above);
        // the head and tail are writable bytes of the caller's range, not
        // otherwise accessed during the call.
        unsafe {
            ptr::copy_nonoverlapping(chunk, dst, head);
            ptr::copy_nonoverlapping(chunk.add(head), dst.add(bytes - tail), tail);
        }
    }
    reg.end(ctx, waited(&done));
    queued.and(done).map(|()| true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A range listed as ours is pageable to everyone while it is listed,
    /// whatever the driver answers; outside it, and once it is forgotten,
    /// the driver's answer stands. A registration that begins during the
    /// probe sends the check to the list.
    #[test]
    fn our_registrations_are_never_page_locked_to_other_copies() {
        let (start, end) = (0x7000_0000_0000usize, 0x7000_0100_0000usize);
        {
            let mut ours = crate::context::lock(&OURS);
            LIVE.fetch_add(1, Ordering::SeqCst);
            GENERATION.fetch_add(1, Ordering::SeqCst);
            ours.push((start, end));
        }
        assert!(!page_locked_not_ours((start + 5) as *const u8, || true));
        assert!(!page_locked_not_ours((end - 1) as *const u8, || true));
        assert!(page_locked_not_ours(end as *const u8, || true));
        assert!(!page_locked_not_ours((start + 5) as *const u8, || false));
        forget_ours(start);
        assert!(page_locked_not_ours((start + 5) as *const u8, || true));
        // A registration of ours that begins while the probe runs.
        let probe = || {
            let mut ours = crate::context::lock(&OURS);
            if !ours.iter().any(|&(s, _)| s == start) {
                LIVE.fetch_add(1, Ordering::SeqCst);
                GENERATION.fetch_add(1, Ordering::SeqCst);
                ours.push((start, end));
            }
            true
        };
        assert!(!page_locked_not_ours((start + 5) as *const u8, probe));
        forget_ours(start);
    }
}
