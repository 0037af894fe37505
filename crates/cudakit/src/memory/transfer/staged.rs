//! The staged pipeline for pageable host memory.
//!
//! The driver copies pageable memory slowly (5 to 16 GB/s measured on an
//! H200, against 50+ for page-locked memory): it stages through its own
//! small buffers, one host thread at a time. For transfers of
//! [`STAGE_MIN`] bytes or more, cudakit stages instead: the host bytes are
//! copied by several threads into a few reused page-locked chunks, and each
//! chunk's DMA runs while the next chunk is filled, alternating between two
//! streams.
//!
//! - The chunks ([`CHUNK`] bytes, [`CHUNKS`] per direction) are allocated
//!   on the first staged transfer and kept by the context, recorded in its
//!   arena as [`AllocKind::Staging`]; [`Context::release_staging`] frees
//!   them. Each direction has its own set and lock, so a host-to-device and
//!   a device-to-host transfer run at the same time.
//! - A transfer is synchronous: it returns when the last byte has landed,
//!   so the caller's slice is borrowed exactly as long as it is used. Within
//!   a scope, the pipeline's streams first wait for the scope's stream and
//!   the scope's stream then waits for the pipeline, so stream order holds.
//! - The host copies run on the calling thread and on copy threads started
//!   on the first staged transfer and kept for the process: the machine's
//!   parallelism minus one, at most 15, or `CUDAKIT_STAGING_THREADS` when
//!   set (0: the calling thread alone). A chunk is cut into one part per
//!   thread and the caller, each at least 1 MiB.
//! - Byte-exact at any length and start: chunks are cut at byte offsets,
//!   the device address advances by the same amount, and nothing assumes
//!   alignment.
//! - The host copies use streaming (non-temporal) stores on x86-64
//!   ([`set_streaming_copies`]): a copy far larger than the caches then
//!   does not read each destination line before writing it, a third less
//!   memory traffic, which is what bounds two transfers at once.
//! - [`PageablePolicy`] chooses, per direction, between staging and the
//!   caller's own pages registered for the call (`registered`); the
//!   default stages one direction at a time and registers a transfer that
//!   meets one of the other direction while registration is cheap.

use std::collections::VecDeque;
use std::panic::Location;
use std::ptr;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use once_cell::sync::OnceCell;

use cuda_sys::{
    CUdeviceptr, CUevent, CUmemorytype, CUpointer_attribute, CUresult, CUstream, CUstream_flags,
    Driver, CU_MEMHOSTALLOC_PORTABLE,
};

use crate::context::arena::{AllocKind, Arena};
use crate::context::{Context, ContextResource};
use crate::error::Result;

pub use super::registered::measured_cost_ns_per_mib as registration_cost_ns_per_mib;

/// Transfers of at least this many bytes go through the pipeline; smaller
/// ones go to the driver directly (below it, the pipeline's fixed costs
/// outweigh its bandwidth).
pub const STAGE_MIN: usize = 8 << 20;
/// Bytes per page-locked chunk.
pub const CHUNK: usize = 16 << 20;
/// Chunks per direction.
pub const CHUNKS: usize = 4;
/// Host bytes one copying thread takes at least.
const PART_MIN: usize = 1 << 20;

/// One direction's chunks, streams and events.
pub(crate) struct Lane {
    pub(crate) chunks: [*mut u8; CHUNKS],
    ids: [u64; CHUNKS],
    events: [CUevent; CHUNKS],
    pub(crate) streams: [CUstream; 2],
}

// SAFETY: the raw pointers are page-locked host allocations and driver
// handles owned by the lane; the driver API is thread-safe, and the lane is
// only used behind its mutex.
unsafe impl Send for Lane {}

/// The context's staging state: one lane per direction, made on first use,
/// and how many transfers of each direction (host to device, device to
/// host) are under way.
#[derive(Default)]
pub(crate) struct Staging {
    htod: Mutex<Option<Lane>>,
    dtoh: Mutex<Option<Lane>>,
    active: [AtomicUsize; 2],
}

/// How pageable transfers of [`STAGE_MIN`] bytes and more are made (see
/// [`set_pageable_policy`]). A registration is made and undone inside the
/// transfer's call (never kept past the caller's borrow), and a refused one
/// falls back to staging.
///
/// The registering policies are chosen only through the `unsafe`
/// [`set_pageable_policy_unchecked`]: while cudakit holds its temporary
/// registration, the driver takes those pages for pinned ones in every
/// other copy too, and an asynchronous copy that another thread queues
/// from the same host memory (a small one, or one on a capturing context,
/// which cudakit hands to the driver as it is) would become a real DMA
/// that can run after the registration is undone. Measured on the H200,
/// registering 256 MiB and undoing it cost 16.5 ms, more than the whole
/// staged transfer of both directions (13.2 ms), so nothing is lost by
/// staging by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PageablePolicy {
    /// Staged (the default; registration is never chosen by itself, see
    /// above).
    Auto,
    /// Always staged through the page-locked chunks.
    Stage,
    /// Always the caller's pages, registered for the transfer.
    Register,
    /// Uploads (host to device) from registered pages, downloads staged.
    RegisterUploads,
    /// Downloads (device to host) into registered pages, uploads staged.
    RegisterDownloads,
}

/// The policy (0: Auto, 1: Stage, 2: Register, 3: RegisterUploads,
/// 4: RegisterDownloads); `u8::MAX` until read from the environment.
static POLICY: AtomicU8 = AtomicU8::new(u8::MAX);
/// Whether the host copies use streaming (non-temporal) stores: 0 no,
/// 1 yes, `u8::MAX` until read from the environment.
static STREAMING: AtomicU8 = AtomicU8::new(u8::MAX);

const POLICIES: [PageablePolicy; 5] = [
    PageablePolicy::Auto,
    PageablePolicy::Stage,
    PageablePolicy::Register,
    PageablePolicy::RegisterUploads,
    PageablePolicy::RegisterDownloads,
];

/// Sets how pageable transfers of [`STAGE_MIN`] bytes and more are made,
/// for the whole process: [`PageablePolicy::Auto`] or
/// [`PageablePolicy::Stage`]. The first value comes from
/// `CUDAKIT_PAGEABLE` (`auto` or `stage`), else `Auto`.
///
/// # Errors
///
/// [`Error::InvalidArgument`](crate::Error::InvalidArgument) for a
/// registering policy, which only [`set_pageable_policy_unchecked`] sets;
/// the policy in force is unchanged.
pub fn set_pageable_policy(policy: PageablePolicy) -> crate::error::Result<()> {
    match policy {
        PageablePolicy::Auto | PageablePolicy::Stage => {
            // SAFETY: neither policy registers memory.
            unsafe { set_pageable_policy_unchecked(policy) };
            Ok(())
        }
        _ => Err(crate::Error::InvalidArgument(format!(
            "{policy:?} registers the caller's pages for each transfer, which other threads' \
             asynchronous copies could take for pinned memory: set it with the unsafe \
             set_pageable_policy_unchecked"
        ))),
    }
}

/// [`set_pageable_policy`] for any policy, the registering ones included.
///
/// # Safety
///
/// While a registering policy is in force, no thread may queue an
/// asynchronous copy (`Scope::copy_to_device`, `Scope::copy_to_host` and
/// the other scope copies, captured ones included) from or to host memory
/// that a pageable transfer of [`STAGE_MIN`] bytes or more may be
/// transferring at the same time on another thread: during that transfer
/// the driver treats those pages as pinned and would queue a DMA that can
/// outlive the registration. Synchronous copies of other threads are safe.
pub unsafe fn set_pageable_policy_unchecked(policy: PageablePolicy) {
    let i = POLICIES.iter().position(|p| *p == policy).unwrap_or(0);
    POLICY.store(i as u8, Ordering::Relaxed);
}

/// The policy in force (see [`set_pageable_policy`]).
pub fn pageable_policy() -> PageablePolicy {
    let mut i = POLICY.load(Ordering::Relaxed);
    if i == u8::MAX {
        let from_env = std::env::var("CUDAKIT_PAGEABLE").ok();
        // The registering policies are not taken from the environment:
        // they are set only through the unsafe setter (see the enum).
        i = match from_env.as_deref().map(str::trim) {
            Some("stage") => 1,
            _ => 0,
        };
        POLICY.store(i, Ordering::Relaxed);
    }
    POLICIES[usize::from(i).min(POLICIES.len() - 1)]
}

/// Sets whether the staged pipeline's host copies use streaming
/// (non-temporal) stores on x86-64, which skip reading each destination
/// line before writing it (a third less memory traffic for a copy that
/// does not fit in the caches). The first value comes from
/// `CUDAKIT_STAGING_STREAMING` (`0` or `1`), else on. Other architectures
/// always copy with `copy_nonoverlapping`.
pub fn set_streaming_copies(on: bool) {
    STREAMING.store(u8::from(on), Ordering::Relaxed);
}

/// Whether the host copies use streaming stores (see
/// [`set_streaming_copies`]).
pub fn streaming_copies() -> bool {
    let mut v = STREAMING.load(Ordering::Relaxed);
    if v == u8::MAX {
        v = match std::env::var("CUDAKIT_STAGING_STREAMING").as_deref() {
            Ok("0") => 0,
            _ => 1,
        };
        STREAMING.store(v, Ordering::Relaxed);
    }
    v == 1
}

/// Whether a transfer in direction `dir` (0 host to device, 1 device to
/// host) registers the caller's pages, given the policy.
fn registers(dir: usize) -> bool {
    match pageable_policy() {
        PageablePolicy::Stage => false,
        PageablePolicy::Register => true,
        PageablePolicy::RegisterUploads => dir == 0,
        PageablePolicy::RegisterDownloads => dir == 1,
        PageablePolicy::Auto => false,
    }
}

/// Counts a transfer of one direction as under way while it lives.
struct Active<'a>(&'a AtomicUsize);

impl<'a> Active<'a> {
    fn new(count: &'a AtomicUsize) -> Active<'a> {
        count.fetch_add(1, Ordering::AcqRel);
        Active(count)
    }
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl std::fmt::Debug for Staging {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Staging").finish_non_exhaustive()
    }
}

fn lock(m: &Mutex<Option<Lane>>) -> MutexGuard<'_, Option<Lane>> {
    // A panic while a lane was in use leaves its chunks and handles valid
    // (every step either completed or was never issued).
    crate::context::lock(m)
}

impl Lane {
    #[track_caller]
    fn new(ctx: &Context) -> Result<Lane> {
        let cu = ctx.enter()?;
        let mut lane = Lane {
            chunks: [ptr::null_mut(); CHUNKS],
            ids: [0; CHUNKS],
            events: [ptr::null_mut(); CHUNKS],
            streams: [ptr::null_mut(); 2],
        };
        // On any failure below, `free` hands back what was made so far
        // (null handles are skipped).
        let made = (|| -> Result<()> {
            for i in 0..CHUNKS {
                let mut p = ptr::null_mut();
                // SAFETY: a valid out-pointer, a non-zero size, a defined
                // flag; the context is current.
                ctx.check("cuMemHostAlloc", unsafe {
                    (cu.cuMemHostAlloc)(&mut p, CHUNK, CU_MEMHOSTALLOC_PORTABLE)
                })?;
                lane.chunks[i] = p.cast();
                lane.ids[i] =
                    ctx.arena()
                        .record_alloc(AllocKind::Staging, CHUNK, Location::caller());
                // SAFETY: a valid out-pointer; CU_EVENT_DISABLE_TIMING (2).
                ctx.check("cuEventCreate", unsafe {
                    (cu.cuEventCreate)(&mut lane.events[i], 2)
                })?;
            }
            for s in &mut lane.streams {
                // SAFETY: a valid out-pointer and a defined flag.
                ctx.check("cuStreamCreateWithPriority", unsafe {
                    (cu.cuStreamCreateWithPriority)(
                        s,
                        CUstream_flags::CU_STREAM_NON_BLOCKING.0 as u32,
                        0,
                    )
                })?;
            }
            Ok(())
        })();
        match made {
            Ok(()) => Ok(lane),
            Err(e) => {
                lane.free(cu, ctx.arena(), &mut |call, rc| {
                    ctx.record_drop_error(call, rc)
                });
                Err(e)
            }
        }
    }

    /// Hands everything back; errors go to `record`. The lane's context
    /// must be current. A chunk is freed only once both streams were
    /// waited for (a failed, non-sticky wait may leave a DMA reading or
    /// writing it: the chunks are then kept, recorded as leaked), and the
    /// arena records a free only when `cuMemFreeHost` succeeded.
    fn free(&mut self, cu: &Driver, arena: &Arena, record: &mut dyn FnMut(&'static str, CUresult)) {
        let mut settled = true;
        for s in &mut self.streams {
            if !s.is_null() {
                // SAFETY: a stream this lane created; destroyed once (nulled).
                let rc = unsafe { (cu.cuStreamSynchronize)(*s) };
                record("cuStreamSynchronize", rc);
                if rc != CUresult::CUDA_SUCCESS && !crate::DriverCode::from_raw(rc).is_sticky() {
                    settled = false;
                }
                // SAFETY: as above (a stream with work still queued is
                // destroyed once that work is done).
                record("cuStreamDestroy_v2", unsafe { (cu.cuStreamDestroy)(*s) });
                *s = ptr::null_mut();
            }
        }
        for i in 0..CHUNKS {
            if !self.events[i].is_null() {
                // SAFETY: an event this lane created; destroyed once.
                record("cuEventDestroy_v2", unsafe {
                    (cu.cuEventDestroy)(self.events[i])
                });
                self.events[i] = ptr::null_mut();
            }
            if !self.chunks[i].is_null() {
                if settled {
                    // SAFETY: a chunk from cuMemHostAlloc; its streams were
                    // synchronized above, so no DMA uses it; freed once.
                    let rc = unsafe { (cu.cuMemFreeHost)(self.chunks[i].cast()) };
                    record("cuMemFreeHost", rc);
                    arena.record_release(self.ids[i], rc, "cuMemFreeHost");
                } else {
                    arena.record_leak(self.ids[i], "cuStreamSynchronize");
                }
                self.chunks[i] = ptr::null_mut();
            }
        }
    }
}

impl ContextResource for Staging {
    /// Frees both lanes. The context must be current.
    fn release(&self, cu: &Driver, arena: &Arena, record: &mut dyn FnMut(&'static str, CUresult)) {
        for lane in [&self.htod, &self.dtoh] {
            if let Some(mut l) = lock(lane).take() {
                l.free(cu, arena, record);
            }
        }
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The context's staging state, made on first use.
fn staging(ctx: &Context) -> &Staging {
    let slot = ctx
        .staging_slot()
        .get_or_init(|| Box::new(Staging::default()));
    match slot.as_any().downcast_ref::<Staging>() {
        Some(s) => s,
        // Only this module fills the slot, always with a Staging.
        None => unreachable!("the staging slot holds a Staging"),
    }
}

/// Whether `ptr` lies in page-locked host memory the driver knows
/// (`cuPointerGetAttribute` with `CU_POINTER_ATTRIBUTE_MEMORY_TYPE`; for
/// pageable memory the driver answers with an error, which is not
/// recorded: it is the expected answer).
///
/// Memory that cudakit has registered for a transfer of its own (on
/// another thread) is not page-locked here: that registration ends with
/// that transfer, and a DMA queued from it could outlive it (see
/// `registered`).
pub(crate) fn is_page_locked(cu: &Driver, ptr: *const u8) -> bool {
    let probe = || {
        let mut kind: i32 = 0;
        // SAFETY: a valid out-pointer for a CUmemorytype (a C int); the
        // address is only looked up, never dereferenced.
        let rc = unsafe {
            (cu.cuPointerGetAttribute)(
                (&mut kind as *mut i32).cast(),
                CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                ptr as usize as CUdeviceptr,
            )
        };
        rc == CUresult::CUDA_SUCCESS && kind == CUmemorytype::CU_MEMORYTYPE_HOST.0
    };
    super::registered::page_locked_not_ours(ptr, probe)
}

/// Copies `len` bytes from `src` to `dst` with streaming stores where
/// [`streaming_copies`] is on (x86-64), else `copy_nonoverlapping`.
///
/// # Safety
///
/// As `ptr::copy_nonoverlapping`.
unsafe fn copy_part(dst: *mut u8, src: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    if len >= 4096 && streaming_copies() {
        // SAFETY: the caller's contract.
        unsafe { copy_streaming(dst, src, len) };
        return;
    }
    // SAFETY: the caller's contract.
    unsafe { ptr::copy_nonoverlapping(src, dst, len) };
}

/// `copy_nonoverlapping` with non-temporal 16-byte stores (SSE2, which
/// every x86-64 processor has) for the 64-byte-aligned middle of `dst`,
/// plain copies for the ends, and a store fence at the end, so that every
/// byte is visible to other threads (and to a DMA issued after them)
/// once the call returns.
///
/// # Safety
///
/// As `ptr::copy_nonoverlapping`.
#[cfg(target_arch = "x86_64")]
unsafe fn copy_streaming(dst: *mut u8, src: *const u8, len: usize) {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
    let head = dst.align_offset(64).min(len);
    // SAFETY: the first `head <= len` bytes of both ranges.
    unsafe { ptr::copy_nonoverlapping(src, dst, head) };
    let mut i = head;
    while i + 64 <= len {
        // SAFETY: bytes `i..i + 64` lie inside both ranges; the loads take
        // any alignment; `dst + i` is 64-byte aligned (so each 16-byte
        // store is aligned, as `_mm_stream_si128` requires). SSE2 is part
        // of the x86-64 baseline.
        unsafe {
            let s = src.add(i).cast::<__m128i>();
            let d = dst.add(i).cast::<__m128i>();
            let a = _mm_loadu_si128(s);
            let b = _mm_loadu_si128(s.add(1));
            let c = _mm_loadu_si128(s.add(2));
            let e = _mm_loadu_si128(s.add(3));
            _mm_stream_si128(d, a);
            _mm_stream_si128(d.add(1), b);
            _mm_stream_si128(d.add(2), c);
            _mm_stream_si128(d.add(3), e);
        }
        i += 64;
    }
    // SAFETY: the last `len - i` bytes of both ranges.
    unsafe { ptr::copy_nonoverlapping(src.add(i), dst.add(i), len - i) };
    // SAFETY: a fence has no memory operands; it orders the streaming
    // stores above before every later store (the part's completion count).
    unsafe { _mm_sfence() };
}

/// Copies `src` into `dst`, split into parts of at least [`PART_MIN`]
/// bytes: the calling thread copies the first part, the copy threads (see
/// [`CopyPool`]) the others, and the call returns when every part is done.
/// While it waits, the caller copies parts still queued (its own or another
/// caller's) instead of sleeping.
///
/// # Safety
///
/// `len` readable bytes at `src` and `len` writable bytes at `dst`, not
/// overlapping and not accessed otherwise, for the duration of the call:
/// the parts reach other threads as addresses, and this call outlives them
/// all.
unsafe fn parallel_copy(dst: *mut u8, src: *const u8, len: usize) {
    let pool = CopyPool::get();
    let parts = (pool.threads() + 1).min(len / PART_MIN).max(1);
    if parts == 1 {
        // SAFETY: the caller's contract.
        unsafe { copy_part(dst, src, len) };
        return;
    }
    // Every part is non-empty: `per >= PART_MIN` exceeds `parts`, so
    // `(parts - 1) * per < len`.
    let per = len.div_ceil(parts);
    let (d, s) = (dst as usize, src as usize);
    let done = Arc::new(Done {
        left: AtomicUsize::new(parts - 1),
        lock: Mutex::new(()),
        all_done: Condvar::new(),
    });
    {
        let mut jobs = crate::context::lock(&pool.jobs);
        for p in 1..parts {
            let start = p * per;
            debug_assert!(start < len);
            jobs.push_back(Job {
                dst: d + start,
                src: s + start,
                len: per.min(len - start),
                done: Arc::clone(&done),
            });
        }
    }
    // One wake per part: waking every idle thread for a few parts made
    // them all contend for the queue's lock.
    for _ in 1..parts {
        pool.ready.notify_one();
    }
    // SAFETY: part 0 lies inside both ranges (the caller's contract) and is
    // disjoint from the parts given to the pool.
    unsafe { copy_part(dst, src, per) };
    // Parts nobody has taken yet: copied here rather than waited for.
    while done.left.load(Ordering::Acquire) != 0 {
        let job = crate::context::lock(&pool.jobs).pop_front();
        match job {
            Some(job) => job.run(),
            None => break,
        }
    }
    // The other parts take about as long as this one: spin briefly before
    // sleeping, so that the common case pays no wake-up.
    for _ in 0..2_000 {
        if done.left.load(Ordering::Acquire) == 0 {
            return;
        }
        std::hint::spin_loop();
    }
    let mut g = crate::context::lock(&done.lock);
    while done.left.load(Ordering::Acquire) != 0 {
        g = match done.all_done.wait(g) {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
    }
}

/// One part of a [`parallel_copy`]: `len` bytes from `src` to `dst`
/// (addresses), and the count of its call's parts still to do.
struct Job {
    dst: usize,
    src: usize,
    len: usize,
    done: Arc<Done>,
}

impl Job {
    /// Copies the part and counts it done, waking its caller after the
    /// last one.
    fn run(self) {
        // SAFETY: a part of a `parallel_copy` whose caller waits, with its
        // ranges valid, until `left` reaches 0 below; parts are disjoint
        // ranges of the destination.
        unsafe { copy_part(self.dst as *mut u8, self.src as *const u8, self.len) };
        if self.done.left.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Under the lock the caller checks `left` with, so the wake
            // cannot fall between its check and its wait.
            let _g = crate::context::lock(&self.done.lock);
            self.done.all_done.notify_all();
        }
    }
}

/// A [`parallel_copy`]'s parts still running, and how to wake its caller.
struct Done {
    left: AtomicUsize,
    lock: Mutex<()>,
    all_done: Condvar,
}

/// The host threads that copy between pageable memory and the chunks:
/// started on the first staged transfer and kept for the process (a
/// transfer then pays no thread start: spawning a thread per part cost
/// tens of microseconds a chunk), idle on a condition variable between
/// transfers. Their number is the machine's parallelism minus one, at most
/// 15 (a 16 MiB chunk then splits into 16 parts of 1 MiB), or
/// `CUDAKIT_STAGING_THREADS` (0 copies on the calling thread alone). Where the system refuses a thread, fewer run;
/// with none, the caller copies everything.
struct CopyPool {
    /// Copy threads started (set once, when they all are).
    threads: AtomicUsize,
    /// The process that started them: a child made by `fork` has none of
    /// them, and copies on the calling thread alone.
    pid: u32,
    /// Parts waiting, oldest first.
    jobs: Mutex<VecDeque<Job>>,
    ready: Condvar,
}

impl CopyPool {
    fn get() -> &'static CopyPool {
        static POOL: OnceCell<&'static CopyPool> = OnceCell::new();
        POOL.get_or_init(|| {
            let wanted = std::env::var("CUDAKIT_STAGING_THREADS")
                .ok()
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or_else(|| {
                    std::thread::available_parallelism()
                        .map(|n| n.get())
                        .unwrap_or(4)
                        .clamp(1, 16)
                        - 1
                })
                .min(64);
            let pool: &'static CopyPool = Box::leak(Box::new(CopyPool {
                threads: AtomicUsize::new(0),
                pid: std::process::id(),
                jobs: Mutex::new(VecDeque::new()),
                ready: Condvar::new(),
            }));
            let mut started = 0;
            for i in 0..wanted {
                let spawned = std::thread::Builder::new()
                    .name(format!("cudakit-copy-{i}"))
                    .spawn(move || pool.work());
                if spawned.is_err() {
                    break;
                }
                started += 1;
            }
            pool.threads.store(started, Ordering::Relaxed);
            pool
        })
    }

    /// Copy threads this process can count on: none in a child made by
    /// `fork` (threads do not survive it).
    fn threads(&self) -> usize {
        if std::process::id() == self.pid {
            self.threads.load(Ordering::Relaxed)
        } else {
            0
        }
    }

    /// A copy thread's loop: take a part, copy it, count it done.
    fn work(&self) -> ! {
        loop {
            let job = {
                let mut jobs = crate::context::lock(&self.jobs);
                loop {
                    if let Some(job) = jobs.pop_front() {
                        break job;
                    }
                    jobs = match self.ready.wait(jobs) {
                        Ok(g) => g,
                        Err(poisoned) => poisoned.into_inner(),
                    };
                }
            };
            job.run();
        }
    }
}

/// Copies `src` into `dst` on the staged pipeline's copy threads, as the
/// pipeline copies between pageable memory and its chunks (see
/// `CUDAKIT_STAGING_THREADS`). No device is involved: this measures the
/// host side of a staged transfer, which bounds its rate.
///
/// # Errors
///
/// [`Error::LengthMismatch`](crate::Error::LengthMismatch) when the lengths
/// differ.
pub fn host_copy(dst: &mut [u8], src: &[u8]) -> Result<()> {
    crate::memory::same_len("host_copy", dst.len(), src.len())?;
    // The whole copy in chunk-sized steps, each split across the copy
    // threads as the pipeline splits a chunk.
    let mut off = 0;
    while off < src.len() {
        let n = CHUNK.min(src.len() - off);
        // SAFETY: `n` bytes of each slice from `off`, borrowed (`&mut`
        // exclusively) for the whole call; a `&mut` and a `&` slice never
        // overlap.
        unsafe { parallel_copy(dst[off..].as_mut_ptr(), src[off..].as_ptr(), n) };
        off += n;
    }
    Ok(())
}

impl Context {
    /// Frees the staged pipeline's page-locked chunks (they are made again
    /// by the next staged transfer). Waits for any staged transfer running
    /// on another thread to finish first.
    ///
    /// Does nothing where a release may not run now (on a thread that is
    /// capturing, where a wait would invalidate the capture; in a driver
    /// callback; off a green context's thread; in a child made by `fork`):
    /// the chunks stay for the next transfer, or the context's drop.
    pub fn release_staging(&self) {
        if !self.releases_now() {
            return;
        }
        let Some(cu) = self.enter_for_drop() else {
            return;
        };
        let Some(slot) = self.staging_slot().get() else {
            return;
        };
        slot.release(cu, self.arena(), &mut |call, rc| {
            self.record_drop_error(call, rc)
        });
    }
}

/// Host to device through the pipeline: `bytes` bytes from `src` to `dst`,
/// after the work queued on `after` (a scope's stream; null for none), which
/// then waits for the copy.
///
/// # Safety
///
/// `src` must be `bytes` readable bytes for the duration of the call, and
/// `dst` `bytes` bytes of device memory of `ctx`.
pub(crate) unsafe fn htod(
    ctx: &Context,
    dst: CUdeviceptr,
    src: *const u8,
    bytes: usize,
    after: CUstream,
) -> Result<()> {
    let register = registers(0);
    with_lane(ctx, 0, |lane| {
        // SAFETY: the caller's contract; the lane is locked and its previous
        // transfer finished.
        if register && unsafe { super::registered::htod(ctx, lane, dst, src, bytes, after) }? {
            return Ok(());
        }
        let cu = ctx.enter()?;
        // Every DMA this call queued has finished when it returns, also on an
        // error: none may write the caller's memory after that.
        let queued = (|| -> Result<()> {
            order_after(ctx, lane, after)?;
            let pieces = bytes.div_ceil(CHUNK);
            for i in 0..pieces {
                let slot = i % CHUNKS;
                let off = i * CHUNK;
                let n = CHUNK.min(bytes - off);
                if i >= CHUNKS {
                    // SAFETY: an event of this lane, recorded after the DMA that
                    // last read this chunk.
                    ctx.check("cuEventSynchronize", unsafe {
                        (cu.cuEventSynchronize)(lane.events[slot])
                    })?;
                }
                // SAFETY: the chunk holds CHUNK >= n bytes and no DMA reads it
                // now: for i >= CHUNKS its last DMA of this transfer finished
                // above; for i < CHUNKS the previous transfer on this lane ended
                // in `finish`, which waited for both streams on every path
                // (errors and a poisoned context included; a wait it cannot
                // complete aborts the process). `src + off` has `n` readable bytes (the
                // caller's contract, for the whole call: the caller waits for
                // the copy); distinct allocations, nothing else touches them.
                unsafe { parallel_copy(lane.chunks[slot], src.add(off), n) };
                let stream = lane.streams[i % 2];
                // SAFETY: `n` bytes of the page-locked chunk to `n` bytes of device
                // memory at `dst + off` (inside the caller's range); the chunk is not
                // touched again until its event has completed.
                ctx.check("cuMemcpyHtoDAsync_v2", unsafe {
                    (cu.cuMemcpyHtoDAsync)(dst + off as u64, lane.chunks[slot].cast(), n, stream)
                })?;
                // SAFETY: a live event and stream of this lane.
                ctx.check("cuEventRecord", unsafe {
                    (cu.cuEventRecord)(lane.events[slot], stream)
                })?;
            }
            Ok(())
        })();
        let done = finish(ctx, lane);
        queued.and(done)
    })
}

/// Device to host through the pipeline; see [`htod`].
///
/// # Safety
///
/// `dst` must be `bytes` writable bytes, not otherwise accessed during the
/// call, and `src` `bytes` bytes of device memory of `ctx`.
pub(crate) unsafe fn dtoh(
    ctx: &Context,
    dst: *mut u8,
    src: CUdeviceptr,
    bytes: usize,
    after: CUstream,
) -> Result<()> {
    let register = registers(1);
    with_lane(ctx, 1, |lane| {
        // SAFETY: the caller's contract; the lane is locked and its previous
        // transfer finished.
        if register && unsafe { super::registered::dtoh(ctx, lane, dst, src, bytes, after) }? {
            return Ok(());
        }
        let cu = ctx.enter()?;
        // As in `htod`: no DMA of this call outlives it, also on an error.
        let queued = (|| -> Result<()> {
            order_after(ctx, lane, after)?;
            let pieces = bytes.div_ceil(CHUNK);
            let issue = |i: usize| -> Result<()> {
                let slot = i % CHUNKS;
                let off = i * CHUNK;
                let n = CHUNK.min(bytes - off);
                let stream = lane.streams[i % 2];
                // SAFETY: `n` bytes of device memory at `src + off` (inside the
                // caller's range) into the chunk, which holds CHUNK >= n bytes and
                // is not read by the host until the event recorded next completes.
                ctx.check("cuMemcpyDtoHAsync_v2", unsafe {
                    (cu.cuMemcpyDtoHAsync)(lane.chunks[slot].cast(), src + off as u64, n, stream)
                })?;
                // SAFETY: a live event and stream of this lane.
                ctx.check("cuEventRecord", unsafe {
                    (cu.cuEventRecord)(lane.events[slot], stream)
                })
            };
            for i in 0..pieces.min(CHUNKS) {
                issue(i)?;
            }
            for j in 0..pieces {
                let slot = j % CHUNKS;
                let off = j * CHUNK;
                let n = CHUNK.min(bytes - off);
                // SAFETY: the event recorded after chunk j's DMA.
                ctx.check("cuEventSynchronize", unsafe {
                    (cu.cuEventSynchronize)(lane.events[slot])
                })?;
                // SAFETY: the DMA into the chunk has completed and the next one
                // into it is issued only after this copy returns; `dst + off` has
                // `n` writable bytes not otherwise accessed (the caller's
                // contract); distinct allocations.
                unsafe { parallel_copy(dst.add(off), lane.chunks[slot], n) };
                if j + CHUNKS < pieces {
                    issue(j + CHUNKS)?;
                }
            }
            Ok(())
        })();
        let done = finish(ctx, lane);
        queued.and(done)
    })
}

/// Runs `f` on the context's lane of direction `dir` (0 host to device,
/// 1 device to host), made on first use, locked for the call and counted
/// as under way. The lane's previous transfer has finished (every
/// transfer ends in [`finish`]); `f` must end its own the same way.
pub(crate) fn with_lane<R>(
    ctx: &Context,
    dir: usize,
    f: impl FnOnce(&Lane) -> Result<R>,
) -> Result<R> {
    let staging = staging(ctx);
    let _active = Active::new(&staging.active[dir]);
    let mut guard = lock(if dir == 0 {
        &staging.htod
    } else {
        &staging.dtoh
    });
    if guard.is_none() {
        *guard = Some(Lane::new(ctx)?);
    }
    let Some(lane) = guard.as_ref() else {
        unreachable!("made above")
    };
    f(lane)
}

/// Makes the lane's streams wait for the work queued on `after`.
pub(crate) fn order_after(ctx: &Context, lane: &Lane, after: CUstream) -> Result<()> {
    if after.is_null() {
        return Ok(());
    }
    let cu = ctx.enter()?;
    // SAFETY: `after` is a live stream of the context (the scope borrows
    // it); the event is the lane's.
    ctx.check("cuEventRecord", unsafe {
        (cu.cuEventRecord)(lane.events[0], after)
    })?;
    for s in lane.streams {
        // SAFETY: live stream and event of the context; flags 0.
        ctx.check("cuStreamWaitEvent", unsafe {
            (cu.cuStreamWaitEvent)(s, lane.events[0], 0)
        })?;
    }
    Ok(())
}

/// Waits until both streams are done (so `after`, the scope's stream, needs
/// no wait: everything the pipeline queued has finished), on every path: the
/// context is entered even when poisoned, and both streams are waited for
/// even when the first wait fails. A wait that fails with an error that is
/// not sticky is tried again on a fresh thread (one that is not capturing);
/// if that fails too, a DMA may still write the caller's memory or read a
/// chunk the next transfer refills, and the process is aborted rather than
/// returning into that (the rule of `Context::scope`). After a sticky error
/// the context's work has stopped.
pub(crate) fn finish(ctx: &Context, lane: &Lane) -> Result<()> {
    let mut first = Ok(());
    for s in lane.streams {
        let raw = s as usize;
        let wait = |ctx: &Context| -> Result<()> {
            match ctx.enter_for_drop() {
                // SAFETY: a live stream of the lane (the lane is alive: the
                // caller holds its lock).
                Some(cu) => ctx.check("cuStreamSynchronize", unsafe {
                    (cu.cuStreamSynchronize)(raw as cuda_sys::CUstream)
                }),
                // In a forked child nothing of the parent's work runs here.
                None if crate::driver::forked() => Err(crate::Error::ForkedChild),
                None => Err(crate::Error::InvalidArgument(
                    "the driver could not be entered to wait for a staged transfer".into(),
                )),
            }
        };
        let r = match wait(ctx) {
            Err(e) if !e.is_sticky() => {
                crate::context::release::wait_elsewhere_or_abort(ctx, "a staged transfer", wait)
                    .and(Err(e))
            }
            r => r,
        };
        if first.is_ok() {
            first = r;
        }
    }
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pool's parts cover every byte once, at odd lengths and
    /// unaligned starts, from several callers at once.
    #[test]
    fn parallel_copy_is_byte_exact_at_odd_lengths_and_starts() {
        let lens = [
            0,
            1,
            PART_MIN - 1,
            PART_MIN,
            2 * PART_MIN + 7,
            5 * PART_MIN + 3,
            17 * PART_MIN + 1,
        ];
        std::thread::scope(|scope| {
            for caller in 0..3usize {
                scope.spawn(move || {
                    for (k, &len) in lens.iter().enumerate() {
                        let (so, dof) = ((caller + k) % 7, (caller * 3 + k) % 5);
                        let src: Vec<u8> = (0..len + so)
                            .map(|i| (i.wrapping_mul(31) ^ caller) as u8)
                            .collect();
                        let mut dst = vec![0xA5u8; len + dof + 9];
                        // SAFETY: `len` bytes of two distinct vectors.
                        unsafe { parallel_copy(dst[dof..].as_mut_ptr(), src[so..].as_ptr(), len) };
                        assert_eq!(&dst[dof..dof + len], &src[so..so + len], "len {len}");
                        assert!(dst[..dof].iter().all(|&b| b == 0xA5), "before, len {len}");
                        assert!(
                            dst[dof + len..].iter().all(|&b| b == 0xA5),
                            "after, len {len}"
                        );
                    }
                });
            }
        });
    }

    /// Streaming and plain copies alike, at every alignment of both ends.
    #[test]
    fn streaming_copies_are_byte_exact_at_every_alignment() {
        let src: Vec<u8> = (0..70_000usize).map(|i| (i * 131 + 7) as u8).collect();
        for streaming in [true, false] {
            for so in 0..67 {
                for dof in [0usize, 1, 15, 16, 33, 63, 64] {
                    let len = 8192 + so * 37;
                    let mut dst = vec![0xC3u8; len + dof + 70];
                    // SAFETY: `len` bytes inside two distinct vectors.
                    unsafe {
                        if streaming {
                            copy_streaming(dst[dof..].as_mut_ptr(), src[so..].as_ptr(), len)
                        } else {
                            ptr::copy_nonoverlapping(
                                src[so..].as_ptr(),
                                dst[dof..].as_mut_ptr(),
                                len,
                            )
                        }
                    };
                    assert_eq!(&dst[dof..dof + len], &src[so..so + len], "{so} {dof}");
                    assert!(dst[..dof].iter().all(|&b| b == 0xC3));
                    assert!(dst[dof + len..].iter().all(|&b| b == 0xC3));
                }
            }
        }
    }

    /// Host-copy rates with and without streaming stores (run with
    /// `--ignored --nocapture`; a measurement, not a check).
    #[test]
    #[ignore = "a measurement"]
    fn host_copy_rates_with_and_without_streaming_stores() {
        let n = 256 << 20;
        let src = vec![3u8; n];
        let mut dst = vec![0u8; n];
        host_copy(&mut dst, &src).unwrap();
        for round in 0..3 {
            for on in [true, false] {
                set_streaming_copies(on);
                let t = std::time::Instant::now();
                host_copy(&mut dst, &src).unwrap();
                let e = t.elapsed();
                println!(
                    "round {round}: streaming {on}: 256 MiB in {e:?} ({:.1} GB/s, {} threads + caller)",
                    n as f64 / e.as_secs_f64() / 1e9,
                    CopyPool::get().threads()
                );
            }
        }
        set_streaming_copies(true);
    }

    #[test]
    fn host_copy_is_exact_and_refuses_different_lengths() {
        let src: Vec<u8> = (0..CHUNK + 3 * PART_MIN + 5)
            .map(|i| (i % 251) as u8)
            .collect();
        let mut dst = vec![0u8; src.len()];
        host_copy(&mut dst, &src).unwrap();
        assert!(dst == src);
        let err = host_copy(&mut dst[1..], &src).unwrap_err();
        assert!(matches!(err, crate::Error::LengthMismatch { .. }), "{err}");
    }
}
