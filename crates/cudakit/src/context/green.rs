//! Green contexts (CUDA 12.4+): a device's SMs split into partitions, each
//! a [`Context`] whose work runs on its own SMs only.
//!
//! ```no_run
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let sms = ctx.sm_resource()?; // cuDeviceGetDevResource
//! println!("{} SMs, partitions of {}+ in steps of {}", sms.sm_count, sms.min_partition_size,
//!          sms.alignment);
//! let split = ctx.split_sms(&[16, 32])?; // two green contexts, and the SMs left over
//! let (small, large) = (&split[0], &split[1]);
//! assert_eq!(small.green_sm_count(), Some(16));
//! let buf = small.alloc::<u32>(1024)?; // memory of the green context, in its arena
//! let stream = small.stream()?; // cuGreenCtxStreamCreate
//! let host = vec![7u32; 1024];
//! small.scope(|s| s.copy_to_device(&stream, &host, &buf))?; // kernels here run on its 16 SMs
//! # drop((buf, stream, large)); Ok(()) }
//! ```
//!
//! # What a green context is here
//!
//! Each partition is a full cudakit [`Context`] built around the
//! `CUcontext` that `cuCtxFromGreenCtx` gives (the primary context seen
//! with the partition's resources): streams, modules, library kernels
//! ([`Kernel::function`](crate::Kernel::function)), buffers, scopes,
//! launches, graphs, the arena, metrics and the sticky record all work on
//! it as on the primary context, through the same code. A green context
//! has its own arena and its own identity, so a buffer, module or function
//! of the primary context (or of another partition) is *another context's*
//! and is refused as a launch argument or in a copy before the driver
//! ([`Error::ArgumentContextMismatch`], [`Error::ContextMismatch`]);
//! allocate what a partition's kernels use through the partition, and load
//! its modules there.
//!
//! # Lifetimes and destruction
//!
//! Streams, buffers, modules and functions of a green context borrow its
//! `Context`, so none outlives it (the compile-fail doctest below). The
//! last handle's drop waits for the green context's work
//! (`cuCtxSynchronize` with it current) and only then destroys it
//! (`cuGreenCtxDestroy`); should that wait fail, the green context is kept,
//! never destroyed under work that may still run (rule 2 of
//! `docs/architecture.md`). `mem::forget` of a partition, or of anything
//! of it, leaks it and nothing else (rule 4). A green context holds a
//! handle of its device's primary context, released after it.
//!
//! ```compile_fail,E0597
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let stream = {
//!     let split = ctx.split_sms(&[16])?;
//!     split[0].stream()?
//! }; // error: `split` does not live long enough
//! # drop(stream); Ok(()) }
//! ```
//!
//! # Threads
//!
//! CUDA lets a green context be current to one thread at a time and does
//! not synchronize calls that reach one green context from several threads
//! (`cuda.h`, `cuGreenCtxCreate`). So a green context is used on the thread
//! that made it: an operation on any other thread is
//! [`Error::GreenContextThread`] before the driver. A drop on another
//! thread hands its driver call to the green context, and the owning
//! thread runs it at its next scope end, synchronize, or the green
//! context's own drop. cudakit's own second try of a failed wait (rule 2)
//! acts for the owning thread while that thread waits for it.
//! [`Context::submit`](crate::Context::submit) runs its work on a thread of
//! its own, and so is refused on a green context.
//!
//! # Sticky errors
//!
//! A green context is the primary context with other resources: a sticky
//! error of a kernel on a partition is taken to leave the primary context
//! unusable too, and the other way round. Either poisons both (every
//! partition reads its primary context's record), so that no work is
//! queued on a context whose memory may be gone.
//!
//! # Splitting
//!
//! [`Context::split_sms`] takes the partition sizes in SMs. Each is checked
//! before the driver against the device's own rules: the minimum partition
//! size and the alignment `cuDeviceGetDevResource` reports (CUDA 13.0 and
//! later; an older driver reports neither, and then CUDA's documented
//! defaults per architecture are used: 2 and 2 on compute capability 6.x
//! and 7.x, 4 and 2 on 8.x, 8 and 8 on 9.0 and later), and the SMs the
//! device has. A size the device cannot make is [`Error::SmGranularity`]
//! naming both numbers; too many SMs in all is [`Error::NotEnoughSms`].
//!
//! `cuDevSmResourceSplitByCount` makes groups of one size per call, and a
//! group it returns cannot be split again before a green context is made
//! from it. So the partitions are carved one after the other: the first
//! from the device, the next from a green context holding the SMs left
//! over, and so on; the last leftover is the remainder
//! ([`GreenSplit::remainder`]). Each partition keeps the leftover context
//! it was carved from alive for as long as it lives (it has no work). A
//! partition the driver makes of another size than asked (its cluster
//! rules) is [`Error::SmSplitMismatch`], never a silent other size.

use std::ptr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use cuda_sys::{
    CUcontext, CUdevResource, CUdevResourceType, CUdevSmResourceSplit_flags, CUgreenCtx,
    CUgreenCtxCreate_flags, Driver,
};

use super::release::{Delegation, DELEGATE};
use super::{Context, LAUNCH_CURRENT};
use crate::driver::{cu, optional};
use crate::error::{Error, Result};

/// The SMs of a device or of a green context, and how they can be split
/// (`cuDeviceGetDevResource`, `cuGreenCtxGetDevResource`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SmResource {
    /// SMs available.
    pub sm_count: u32,
    /// The fewest SMs a partition may have.
    pub min_partition_size: u32,
    /// A partition's size is a multiple of this (the SMs co-scheduled on
    /// one GPU processing cluster).
    pub alignment: u32,
    /// Whether the driver reported `min_partition_size` and `alignment`
    /// (CUDA 13.0 and later); otherwise they are CUDA's documented defaults
    /// for the device's compute capability.
    pub reported_by_driver: bool,
}

impl SmResource {
    fn from_raw(raw: &CUdevResource, compute_capability: (u32, u32)) -> SmResource {
        let sm = raw.sm().unwrap_or_default();
        let (min, align) = default_granularity(compute_capability);
        let reported = sm.minSmPartitionSize != 0 && sm.smCoscheduledAlignment != 0;
        SmResource {
            sm_count: sm.smCount,
            min_partition_size: if reported { sm.minSmPartitionSize } else { min },
            alignment: if reported {
                sm.smCoscheduledAlignment
            } else {
                align
            },
            reported_by_driver: reported,
        }
    }

    /// Whether a partition of `count` SMs meets the minimum and the
    /// alignment.
    pub fn can_make(&self, count: u32) -> bool {
        count > 0 && count >= self.min_partition_size && count % self.alignment.max(1) == 0
    }
}

/// CUDA's documented minimum partition size and alignment per compute
/// capability (`cuda.h`, the green-context section), for a driver that
/// does not report them.
fn default_granularity((major, _): (u32, u32)) -> (u32, u32) {
    match major {
        6 | 7 => (2, 2),
        8 => (4, 2),
        m if m >= 9 => (8, 8),
        _ => (1, 1),
    }
}

/// How [`Context::split_sms_with`] splits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SmSplitOptions {
    /// `CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING`: finer partitions
    /// that give up large clusters. The driver lowers its minimum and
    /// alignment by an amount it does not report, so only 0 and the total
    /// are checked before the driver, and the sizes the driver makes
    /// afterwards.
    pub ignore_coscheduling: bool,
    /// `CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE` (compute
    /// capability 9.0+): partitions that allow the largest clusters.
    pub max_cluster_size: bool,
    /// Whether to make a green context of the SMs left over
    /// ([`GreenSplit::remainder`]). On by default.
    pub remainder: bool,
}

impl Default for SmSplitOptions {
    fn default() -> Self {
        SmSplitOptions {
            ignore_coscheduling: false,
            max_cluster_size: false,
            remainder: true,
        }
    }
}

impl SmSplitOptions {
    /// See [`SmSplitOptions::ignore_coscheduling`].
    pub fn ignore_coscheduling(mut self, on: bool) -> Self {
        self.ignore_coscheduling = on;
        self
    }

    /// See [`SmSplitOptions::max_cluster_size`].
    pub fn max_cluster_size(mut self, on: bool) -> Self {
        self.max_cluster_size = on;
        self
    }

    /// See [`SmSplitOptions::remainder`].
    pub fn remainder(mut self, on: bool) -> Self {
        self.remainder = on;
        self
    }

    fn flags(&self) -> u32 {
        let mut flags = 0;
        if self.ignore_coscheduling {
            flags |= CUdevSmResourceSplit_flags::CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING.0;
        }
        if self.max_cluster_size {
            flags |=
                CUdevSmResourceSplit_flags::CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE.0;
        }
        flags
    }
}

/// The green contexts of one [`Context::split_sms`]: one per size asked
/// for, in order (`split[i]`), and the SMs left over.
#[derive(Debug)]
pub struct GreenSplit {
    partitions: Vec<Context>,
    remainder: Option<Context>,
}

impl GreenSplit {
    /// The partitions, in the order their sizes were given.
    pub fn partitions(&self) -> &[Context] {
        &self.partitions
    }

    /// A green context of the SMs no partition took, if any are left and
    /// [`SmSplitOptions::remainder`] was on. CUDA gives it fewer guarantees
    /// than the partitions (it may not be co-scheduled as a whole).
    pub fn remainder(&self) -> Option<&Context> {
        self.remainder.as_ref()
    }

    /// The partitions and the remainder, as owned handles.
    pub fn into_parts(self) -> (Vec<Context>, Option<Context>) {
        (self.partitions, self.remainder)
    }
}

impl std::ops::Index<usize> for GreenSplit {
    type Output = Context;

    fn index(&self, i: usize) -> &Context {
        &self.partitions[i]
    }
}

/// What a green context's [`Context`] owns beyond a primary one's.
pub(crate) struct GreenState {
    handle: CUgreenCtx,
    /// The primary context of the device: retained for as long as the
    /// green context lives, and the record of their shared sticky fate.
    parent: Context,
    /// The thread allowed to make it current ([`thread_tag`]).
    owner: u64,
    sms: u32,
    /// The green context this one was carved from (a leftover of the same
    /// split, or the green context the caller split), kept until this one
    /// is destroyed.
    source: Option<Context>,
}

impl GreenState {
    /// Whether this thread may make the green context current: the thread
    /// that made it, or one acting for it (`record` is the address of the
    /// context's record).
    pub(crate) fn owned_here(&self, record: usize) -> bool {
        self.owner == thread_tag() || DELEGATE.with(|d| d.get()) == record
    }

    /// The device's primary context.
    pub(crate) fn parent(&self) -> &Context {
        &self.parent
    }

    /// SMs of the partition.
    pub(crate) fn sms(&self) -> u32 {
        self.sms
    }

    /// The green context's last act, from its record's drop (no handle of
    /// it exists any more, so nothing else reaches it): waits for its work
    /// with `raw` (its `CUcontext`) current, then destroys it. A failed
    /// wait keeps it (and so what it was carved from): work that may still
    /// run keeps its context (rule 2). On a thread that is capturing, the
    /// wait would be refused and break that capture: the green context is
    /// kept too.
    pub(crate) fn destroy(&self, raw: CUcontext) {
        let Ok(cu) = cu() else { return };
        let device = self.parent.device().ordinal();
        if super::release::thread_capturing() || super::release::in_driver_callback() {
            eprintln!(
                "cudakit: a green context of device {device} was dropped on a thread that is \
                 capturing or inside a driver callback; it is kept, not destroyed"
            );
            return;
        }
        // SAFETY: `raw` is the CUcontext of this green context, which is not
        // destroyed yet (that happens below, once).
        let mut rc = unsafe { (cu.cuCtxSetCurrent)(raw) };
        if rc == cuda_sys::CUresult::CUDA_SUCCESS {
            // SAFETY: the green context is current on this thread.
            rc = unsafe { (cu.cuCtxSynchronize)() };
        }
        // This thread no longer uses the green context: the primary
        // context (retained by `parent`, alive until after this) becomes
        // current in its place, so no thread keeps a destroyed one current.
        // SAFETY: the primary context is retained by `self.parent`.
        let _ = unsafe { (cu.cuCtxSetCurrent)(self.parent.as_raw()) };
        LAUNCH_CURRENT.with(|c| c.set(0));
        if rc != cuda_sys::CUresult::CUDA_SUCCESS {
            eprintln!(
                "cudakit: the wait for a green context of device {device} failed \
                 (cuCtxSynchronize: {rc:?}); it is kept, not destroyed, as its work may still run"
            );
            // Whatever it was carved from stays too.
            if let Some(source) = &self.source {
                std::mem::forget(source.clone());
            }
            return;
        }
        let Some(destroy) = cu.cuGreenCtxDestroy else {
            return;
        };
        // SAFETY: a green context made by cuGreenCtxCreate, destroyed once,
        // after its work finished; no stream, module or allocation of it is
        // alive (each borrows a handle of this record, which is dropping).
        let rc = unsafe { destroy(self.handle) };
        if rc != cuda_sys::CUresult::CUDA_SUCCESS {
            eprintln!("cudakit: cuGreenCtxDestroy on device {device} failed: {rc:?}");
        }
    }
}

static NEXT_THREAD_TAG: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// A number for this thread, unique in the process.
    static THREAD_TAG: u64 = NEXT_THREAD_TAG.fetch_add(1, Ordering::Relaxed);
}

/// This thread's number (see [`GreenState::owner`]).
fn thread_tag() -> u64 {
    THREAD_TAG.with(|t| *t)
}

impl Context {
    /// Whether this thread may use the context: always for a primary
    /// context; for a green one, on the thread that made it or one acting
    /// for it.
    #[inline]
    pub(crate) fn thread_allowed(&self) -> bool {
        match &self.shared.green {
            None => true,
            Some(g) => {
                g.owner == thread_tag()
                    || DELEGATE.with(|d| d.get()) == Arc::as_ptr(&self.shared) as usize
            }
        }
    }

    /// [`Error::GreenContextThread`] where [`Context::thread_allowed`] says no.
    #[inline]
    pub(crate) fn refuse_other_thread(&self) -> Result<()> {
        if self.thread_allowed() {
            Ok(())
        } else {
            Err(Error::GreenContextThread {
                device: self.device().ordinal(),
            })
        }
    }

    /// For a green context used on this (allowed) thread: a permission for
    /// another thread to act for it while this one waits ([`act_for`](super::release::act_for)).
    /// This thread stops having the green context current, so that it is
    /// current to one thread at a time.
    pub(crate) fn delegation(&self) -> Option<Delegation> {
        let g = self.shared.green.as_ref()?;
        if !self.thread_allowed() {
            return None;
        }
        if let Ok(cu) = cu() {
            let mut current: CUcontext = ptr::null_mut();
            // SAFETY: a valid out-pointer.
            let asked = unsafe { (cu.cuCtxGetCurrent)(&mut current) };
            if asked == cuda_sys::CUresult::CUDA_SUCCESS && current == self.shared.raw {
                // SAFETY: the primary context is retained by `g.parent`.
                let _ = unsafe { (cu.cuCtxSetCurrent)(g.parent.as_raw()) };
                LAUNCH_CURRENT.with(|c| c.set(0));
            }
        }
        Some(Delegation(Arc::as_ptr(&self.shared) as usize))
    }

    /// Whether this is a green context (made by [`Context::split_sms`]).
    pub fn is_green(&self) -> bool {
        self.shared.green.is_some()
    }

    /// The SMs of a green context's partition; `None` for a primary context.
    pub fn green_sm_count(&self) -> Option<u32> {
        self.shared.green.as_ref().map(|g| g.sms)
    }

    /// The device's primary context: `self` for a primary context, the one
    /// a green context belongs to otherwise.
    pub fn primary(&self) -> &Context {
        match &self.shared.green {
            Some(g) => &g.parent,
            None => self,
        }
    }

    /// The raw green context, for calls cudakit does not wrap; `None` for a
    /// primary context. Like [`Context::as_raw`], it is valid while `self`
    /// is, and CUDA lets one thread at a time use it.
    pub fn as_raw_green(&self) -> Option<CUgreenCtx> {
        self.shared.green.as_ref().map(|g| g.handle)
    }

    /// The SMs this context may use and how they split: the device's for a
    /// primary context (`cuDeviceGetDevResource`), the partition's for a
    /// green one (`cuGreenCtxGetDevResource`).
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] on a driver before CUDA 12.4; driver errors;
    /// [`Error::ContextPoisoned`]; [`Error::GreenContextThread`].
    pub fn sm_resource(&self) -> Result<SmResource> {
        let cu = self.enter()?;
        let raw = self.raw_sm_resource(cu)?;
        Ok(SmResource::from_raw(&raw, self.limits().compute_capability))
    }

    /// The driver's SM resource of this context (see
    /// [`Context::sm_resource`]).
    fn raw_sm_resource(&self, cu: &'static Driver) -> Result<CUdevResource> {
        let mut raw = CUdevResource::default();
        let sm = CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM;
        match &self.shared.green {
            Some(g) => {
                let get = optional!(cu, cuGreenCtxGetDevResource, "CUDA 12.4");
                // SAFETY: a live green context (owned by this record), a
                // valid out-pointer to a whole CUdevResource, a defined type.
                self.check("cuGreenCtxGetDevResource", unsafe {
                    get(g.handle, &mut raw, sm)
                })?;
            }
            None => {
                let get = optional!(cu, cuDeviceGetDevResource, "CUDA 12.4");
                // SAFETY: a device handle from cuDeviceGet, a valid
                // out-pointer to a whole CUdevResource, a defined type.
                self.check("cuDeviceGetDevResource", unsafe {
                    get(self.device().as_raw(), &mut raw, sm)
                })?;
            }
        }
        Ok(raw)
    }

    /// Splits this context's SMs into green contexts of `counts` SMs each,
    /// in order, plus one of the SMs left over. See [`green`](self) for
    /// what a green context can do and the rules of the split.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for no counts; [`Error::SmGranularity`]
    /// for a count of 0, below the minimum partition size or not a multiple
    /// of the alignment; [`Error::NotEnoughSms`] for more SMs in all than
    /// the context has; [`Error::SmSplitMismatch`] where the driver makes
    /// another size; [`Error::NotSupported`] on a driver before CUDA 12.4;
    /// driver errors; [`Error::ContextPoisoned`];
    /// [`Error::GreenContextThread`]. Green contexts made before an error
    /// are destroyed again.
    pub fn split_sms(&self, counts: &[u32]) -> Result<GreenSplit> {
        self.split_sms_with(counts, SmSplitOptions::default())
    }

    /// [`Context::split_sms`] with options.
    ///
    /// # Errors
    ///
    /// As [`Context::split_sms`].
    pub fn split_sms_with(&self, counts: &[u32], options: SmSplitOptions) -> Result<GreenSplit> {
        let cu = self.enter()?;
        let fns = GreenFns::load(cu)?;
        if counts.is_empty() {
            return Err(Error::InvalidArgument(
                "split_sms needs at least one partition size".into(),
            ));
        }
        let device = self.device().ordinal();
        let mut input = self.raw_sm_resource(cu)?;
        let info = SmResource::from_raw(&input, self.limits().compute_capability);
        for &count in counts {
            let refused = if options.ignore_coscheduling {
                count == 0
            } else {
                !info.can_make(count)
            };
            if refused {
                return Err(Error::SmGranularity {
                    device,
                    count,
                    min: info.min_partition_size,
                    multiple: info.alignment,
                    reported_by_driver: info.reported_by_driver,
                });
            }
        }
        let total: u64 = counts.iter().map(|&c| u64::from(c)).sum();
        if total > u64::from(info.sm_count) {
            return Err(Error::NotEnoughSms {
                device,
                requested: total.min(u64::from(u32::MAX)) as u32,
                available: info.sm_count,
            });
        }

        let root = self.primary();
        // The green context the next partition is carved from (none: the
        // device itself, or this context when it is green).
        let mut source: Option<Context> = self.is_green().then(|| self.clone());
        let mut partitions = Vec::with_capacity(counts.len());
        let mut remainder = None;
        for (i, &count) in counts.iter().enumerate() {
            let mut group = CUdevResource::default();
            let mut left = CUdevResource::default();
            let mut groups: u32 = 1;
            // SAFETY: `group` and `left` are whole CUdevResources, one
            // result slot as `groups` says; `input` is an SM resource the
            // driver wrote (of the device or of a live green context).
            self.check("cuDevSmResourceSplitByCount", unsafe {
                (fns.split)(
                    &mut group,
                    &mut groups,
                    &input,
                    &mut left,
                    options.flags(),
                    count,
                )
            })?;
            let got = if groups == 0 {
                0
            } else {
                group.sm().map_or(0, |s| s.smCount)
            };
            if got != count {
                return Err(Error::SmSplitMismatch {
                    device,
                    requested: count,
                    got,
                });
            }
            partitions.push(self.make_green(&fns, root, group, count, source.clone())?);
            let left_sms = left.sm().map_or(0, |s| s.smCount);
            let last = i + 1 == counts.len();
            if left_sms == 0 {
                if !last {
                    let rest: u64 = counts[i + 1..].iter().map(|&c| u64::from(c)).sum();
                    return Err(Error::NotEnoughSms {
                        device,
                        requested: (u64::from(count) + rest).min(u64::from(u32::MAX)) as u32,
                        available: count,
                    });
                }
                break;
            }
            if last && !options.remainder {
                break;
            }
            let leftover = self.make_green(&fns, root, left, left_sms, source.take())?;
            if last {
                remainder = Some(leftover);
                break;
            }
            input = leftover.raw_sm_resource(cu)?;
            source = Some(leftover);
        }
        Ok(GreenSplit {
            partitions,
            remainder,
        })
    }

    /// A green context of `resource` (`sms` SMs) on this context's device,
    /// whose primary context is `root`, keeping `source` alive.
    fn make_green(
        &self,
        fns: &GreenFns,
        root: &Context,
        mut resource: CUdevResource,
        sms: u32,
        source: Option<Context>,
    ) -> Result<Context> {
        let mut desc: cuda_sys::CUdevResourceDesc = ptr::null_mut();
        // SAFETY: a valid out-pointer and one whole resource the driver
        // wrote (a split's group or leftover).
        self.check("cuDevResourceGenerateDesc", unsafe {
            (fns.generate_desc)(&mut desc, &mut resource, 1)
        })?;
        let mut handle: CUgreenCtx = ptr::null_mut();
        // SAFETY: a valid out-pointer, a descriptor just made, the device
        // of this context, the flag CUDA 13.0 requires.
        self.check("cuGreenCtxCreate", unsafe {
            (fns.create)(
                &mut handle,
                desc,
                self.device().as_raw(),
                CUgreenCtxCreate_flags::CU_GREEN_CTX_DEFAULT_STREAM.0,
            )
        })?;
        let mut raw: CUcontext = ptr::null_mut();
        // SAFETY: a green context just made and a valid out-pointer.
        let rc = unsafe { (fns.from_green)(&mut raw, handle) };
        if let Err(e) = self.check("cuCtxFromGreenCtx", rc) {
            // SAFETY: the green context just made, unused: no stream,
            // module or allocation of it exists.
            let _ = unsafe { (fns.destroy)(handle) };
            return Err(e);
        }
        let mut limits = *root.limits();
        limits.multiprocessors = sms;
        Ok(root.child_green(
            raw,
            limits,
            GreenState {
                handle,
                parent: root.clone(),
                owner: thread_tag(),
                sms,
                source,
            },
        ))
    }
}

/// The entry points a split needs, each present or the split is
/// [`Error::NotSupported`] before anything is made.
struct GreenFns {
    split: unsafe extern "C" fn(
        *mut CUdevResource,
        *mut std::ffi::c_uint,
        *const CUdevResource,
        *mut CUdevResource,
        std::ffi::c_uint,
        std::ffi::c_uint,
    ) -> cuda_sys::CUresult,
    generate_desc: unsafe extern "C" fn(
        *mut cuda_sys::CUdevResourceDesc,
        *mut CUdevResource,
        std::ffi::c_uint,
    ) -> cuda_sys::CUresult,
    create: unsafe extern "C" fn(
        *mut CUgreenCtx,
        cuda_sys::CUdevResourceDesc,
        cuda_sys::CUdevice,
        std::ffi::c_uint,
    ) -> cuda_sys::CUresult,
    from_green: unsafe extern "C" fn(*mut CUcontext, CUgreenCtx) -> cuda_sys::CUresult,
    destroy: unsafe extern "C" fn(CUgreenCtx) -> cuda_sys::CUresult,
}

impl GreenFns {
    fn load(cu: &'static Driver) -> Result<GreenFns> {
        // Queried before anything is split (a leftover is read back with it).
        optional!(cu, cuGreenCtxGetDevResource, "CUDA 12.4");
        optional!(cu, cuDeviceGetDevResource, "CUDA 12.4");
        Ok(GreenFns {
            split: optional!(cu, cuDevSmResourceSplitByCount, "CUDA 12.4"),
            generate_desc: optional!(cu, cuDevResourceGenerateDesc, "CUDA 12.4"),
            create: optional!(cu, cuGreenCtxCreate, "CUDA 12.4"),
            from_green: optional!(cu, cuCtxFromGreenCtx, "CUDA 12.4"),
            destroy: optional!(cu, cuGreenCtxDestroy, "CUDA 12.4"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hopper(sm_count: u32) -> SmResource {
        SmResource {
            sm_count,
            min_partition_size: 8,
            alignment: 8,
            reported_by_driver: true,
        }
    }

    #[test]
    fn granularity_rules() {
        let r = hopper(132);
        for ok in [8, 16, 24, 64, 128] {
            assert!(r.can_make(ok), "{ok}");
        }
        for bad in [0, 1, 4, 7, 12, 20, 129] {
            assert!(!r.can_make(bad), "{bad}");
        }
    }

    #[test]
    fn documented_defaults_when_the_driver_reports_none() {
        let mut raw = CUdevResource {
            r#type: CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM,
            ..Default::default()
        };
        raw.u.sm = cuda_sys::CUdevSmResource {
            smCount: 108,
            minSmPartitionSize: 0,
            smCoscheduledAlignment: 0,
        };
        let r = SmResource::from_raw(&raw, (8, 0));
        assert_eq!((r.sm_count, r.min_partition_size, r.alignment), (108, 4, 2));
        assert!(!r.reported_by_driver);
        assert_eq!(SmResource::from_raw(&raw, (9, 0)).alignment, 8);
        assert_eq!(SmResource::from_raw(&raw, (7, 5)).min_partition_size, 2);
        assert_eq!(SmResource::from_raw(&raw, (10, 0)).min_partition_size, 8);
    }

    #[test]
    fn a_resource_of_another_type_has_no_sms() {
        let raw = CUdevResource::default();
        assert_eq!(SmResource::from_raw(&raw, (9, 0)).sm_count, 0);
    }

    #[test]
    fn split_flags() {
        assert_eq!(SmSplitOptions::default().flags(), 0);
        assert_eq!(
            SmSplitOptions::default().ignore_coscheduling(true).flags(),
            1
        );
        assert_eq!(
            SmSplitOptions::default()
                .ignore_coscheduling(true)
                .max_cluster_size(true)
                .flags(),
            3
        );
        assert!(SmSplitOptions::default().remainder);
    }
}
