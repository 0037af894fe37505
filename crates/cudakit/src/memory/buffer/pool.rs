//! Stream-ordered memory: buffers allocated and freed in the order of a
//! stream's work (`cuMemAllocAsync`, `cuMemAllocFromPoolAsync`,
//! `cuMemFreeAsync`), from the device's default pool or a created one.
//!
//! ```no_run
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let stream = ctx.stream()?;
//! let pool = ctx.default_pool()?;
//! pool.set_release_threshold(u64::MAX)?; // keep freed memory for reuse
//! let host = vec![1.0f32; 1024];
//! let mut out = vec![0.0f32; 1024];
//! let buffer = pool.alloc::<f32>(&stream, 1024)?; // in stream order
//! ctx.scope(|s| {
//!     s.copy_to_device(&stream, &host, buffer.as_view())?;
//!     s.copy_to_host(&stream, buffer.as_view(), &mut out)
//! })?;
//! drop(buffer); // cuMemFreeAsync on its stream
//! # Ok(()) }
//! ```
//!
//! # When to use them
//!
//! Measured on an H200 (CUDA 13): an allocation and a free from a pool
//! whose release threshold is raised cost about 0.6 µs together, against
//! 58–73 µs for `cuMemAlloc_v2` + `cuMemFree_v2`, which also synchronize
//! the device. Use them for temporaries allocated often (per batch, per
//! step); use [`DeviceBuffer`](crate::DeviceBuffer) for long-lived data.
//! With the default release threshold (0) the pool hands memory back to the
//! system at every synchronization and the next allocation pays for it
//! again: raise the threshold ([`MemPool::set_release_threshold`]) for
//! reuse.
//!
//! # Ordering
//!
//! A [`PoolBuffer`] is valid in the order of the stream it was allocated
//! on, and is freed on that stream when dropped. Work queued on that
//! stream, in a scope, can use it like device memory ([`PoolBuffer::as_view`]
//! is a kernel argument and a copy source or destination). Work on another
//! stream must be ordered after the allocation by the caller (an event
//! recorded on the allocating stream and waited for) — as with aliasing
//! views, cudakit cannot see device-side ordering; the memory stays
//! allocated for as long as the buffer lives, whatever the order. A scope
//! borrows the buffer until its streams have synchronized, so the free is
//! always queued after the work that used it.
//!
//! Every allocation is recorded in the context's arena as
//! [`AllocKind::StreamOrdered`].

use std::marker::PhantomData;
use std::panic::Location;
use std::sync::atomic::{AtomicUsize, Ordering};

use cuda_sys::{
    CUdeviceptr, CUmemAllocationType, CUmemLocation, CUmemLocationType, CUmemPoolProps,
    CUmemPool_attribute, CUmemoryPool, CUstream,
};

use crate::context::arena::AllocKind;
use crate::memory::{
    byte_len, check_align, DeviceCopy, DeviceDst, DevicePtr, DeviceSrc, DeviceView, Sealed,
};
use std::sync::Arc;

use crate::context::stream_state::{SharedStreamState, StreamOrigin, StreamState};
use crate::context::{same_context, Context};
use crate::error::{Error, Result};

/// A stream that stream-ordered memory is allocated and freed on:
/// [`Stream`](crate::Stream). (The memory room knows streams only through
/// this trait; the work room implements it.)
///
/// Sealed: only cudakit's stream implements it.
pub trait OrderedStream: Sealed {
    /// The stream's context.
    fn context(&self) -> &Context;
    /// The raw handle.
    fn as_raw(&self) -> CUstream;
    /// The stream's capture state (opaque; cudakit's own).
    #[doc(hidden)]
    fn capture_state(&self) -> SharedStreamState;
}

/// A stream-ordered memory pool of a device: the default one
/// ([`Context::default_pool`], `cuDeviceGetDefaultMemPool`) or a created
/// one ([`Context::create_pool`], `cuMemPoolCreate`, destroyed on drop).
///
/// ```no_run
/// # fn main() -> cudakit::Result<()> {
/// let ctx = cudakit::Context::new(0)?;
/// let stream = ctx.stream()?;
/// let pool = ctx.default_pool()?;
/// pool.set_release_threshold(u64::MAX)?; // keep freed memory for reuse
/// for step in 0..100 {
///     let temp = pool.alloc::<f32>(&stream, 4096)?; // cuMemAllocAsync, in stream order
///     let input = vec![step as f32; 4096];
///     let mut host = vec![0.0f32; 4096];
///     ctx.scope(|s| {
///         s.copy_to_device(&stream, &input, temp.as_view())?;
///         s.copy_to_host(&stream, temp.as_view(), &mut host)
///     })?;
///     assert_eq!(host[0], step as f32);
/// } // each `temp` is freed on its stream when dropped (cuMemFreeAsync)
/// assert_eq!(pool.usage()?.used, 0);
/// # Ok(()) }
/// ```
pub struct MemPool<'c> {
    ctx: &'c Context,
    raw: CUmemoryPool,
    owned: bool,
    device_bytes: usize,
    /// For a pool made by [`Context::create_exportable_pool`]: its identity
    /// in IPC handles (random, never 0); 0 for a pool that cannot be
    /// exported.
    pub(crate) export_id: u64,
    /// IPC exports of the pool not released: while any is, the drop keeps
    /// the pool.
    pub(crate) exports: AtomicUsize,
}

// SAFETY: a pool handle may be used from any thread.
unsafe impl Send for MemPool<'_> {}
// SAFETY: as above; `MemPool` has no interior state of its own.
unsafe impl Sync for MemPool<'_> {}

impl std::fmt::Debug for MemPool<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemPool")
            .field("raw", &self.raw)
            .field("owned", &self.owned)
            .finish()
    }
}

/// Which freed blocks a pool may hand out again before the free has
/// completed on the device (`CU_MEMPOOL_ATTR_REUSE_*`). All three are on
/// by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReusePolicy {
    /// Reuse across streams when the allocating stream already waits for
    /// the freeing one through an event (`..._FOLLOW_EVENT_DEPENDENCIES`).
    pub follow_event_dependencies: bool,
    /// Reuse a block whose free has completed, on any stream
    /// (`..._ALLOW_OPPORTUNISTIC`).
    pub allow_opportunistic: bool,
    /// Let the driver insert waits to reuse blocks
    /// (`..._ALLOW_INTERNAL_DEPENDENCIES`).
    pub allow_internal_dependencies: bool,
}

/// How much memory a pool holds and hands out
/// (`CU_MEMPOOL_ATTR_RESERVED_MEM_*`, `CU_MEMPOOL_ATTR_USED_MEM_*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolUsage {
    /// Bytes of device memory the pool holds now.
    pub reserved: u64,
    /// Highest `reserved` since the last reset.
    pub reserved_high: u64,
    /// Bytes allocated from the pool and not freed now.
    pub used: u64,
    /// Highest `used` since the last reset.
    pub used_high: u64,
}

/// The properties of a pool of `ctx`'s device memory: pinned device
/// memory on its device, no export handles, the default size (what
/// [`Context::create_pool`] and a graph's allocation node ask for).
pub(crate) fn device_pool_props(ctx: &Context) -> CUmemPoolProps {
    CUmemPoolProps {
        allocType: CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED,
        location: CUmemLocation {
            r#type: CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE,
            id: ctx.device().ordinal(),
        },
        ..Default::default()
    }
}

impl Context {
    /// The device's default pool, which `cuMemAllocAsync` allocates from
    /// (`cuDeviceGetDefaultMemPool`).
    ///
    /// # Errors
    ///
    /// Driver errors; a poisoned context.
    pub fn default_pool(&self) -> Result<MemPool<'_>> {
        let device_bytes = self.device().total_memory()?;
        let cu = self.enter()?;
        let mut raw: CUmemoryPool = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and a device handle.
        self.check("cuDeviceGetDefaultMemPool", unsafe {
            (cu.cuDeviceGetDefaultMemPool)(&mut raw, self.device().as_raw())
        })?;
        Ok(MemPool {
            ctx: self,
            raw,
            owned: false,
            device_bytes,
            export_id: 0,
            exports: AtomicUsize::new(0),
        })
    }

    /// A new pool of device memory on this context's device
    /// (`cuMemPoolCreate`), destroyed when dropped (`cuMemPoolDestroy`;
    /// memory still allocated from it is released once freed).
    ///
    /// # Errors
    ///
    /// Driver errors; a poisoned context.
    pub fn create_pool(&self) -> Result<MemPool<'_>> {
        self.create_pool_with(false)
    }

    /// A new pool (`cuMemPoolCreate`) whose memory can be shared with other
    /// processes: `handleTypes` is `CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR`,
    /// so [`MemPool::export_ipc`] and [`PoolBuffer::export_ipc`] work (see
    /// [`crate::ipc`]). The device's default pool cannot be exported.
    ///
    /// # Errors
    ///
    /// Driver errors (a device or system without shareable pools); a
    /// poisoned context.
    pub fn create_exportable_pool(&self) -> Result<MemPool<'_>> {
        self.create_pool_with(true)
    }

    fn create_pool_with(&self, exportable: bool) -> Result<MemPool<'_>> {
        let device_bytes = self.device().total_memory()?;
        let cu = self.enter()?;
        let mut props = device_pool_props(self);
        if exportable {
            props.handleTypes =
                cuda_sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        }
        let mut raw: CUmemoryPool = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and a zero-initialised property
        // record naming this device (no export handles, default size).
        self.check("cuMemPoolCreate", unsafe {
            (cu.cuMemPoolCreate)(&mut raw, &props)
        })?;
        Ok(MemPool {
            ctx: self,
            raw,
            owned: true,
            device_bytes,
            export_id: if exportable {
                // Odd (the token is), so never 0.
                crate::ipc::handle::process_token()
                    ^ ((NEXT_POOL.fetch_add(1, Ordering::Relaxed) as u64) << 1)
            } else {
                0
            },
            exports: AtomicUsize::new(0),
        })
    }
}

/// Numbers the exportable pools of this process (their identity mixes it
/// with the process token).
static NEXT_POOL: AtomicUsize = AtomicUsize::new(1);

impl<'c> MemPool<'c> {
    /// Whether the pool can be exported ([`Context::create_exportable_pool`]).
    pub fn is_exportable(&self) -> bool {
        self.export_id != 0
    }

    /// The context.
    pub fn context(&self) -> &'c Context {
        self.ctx
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUmemoryPool {
        self.raw
    }

    /// Whether this is the device's default pool.
    pub fn is_default(&self) -> bool {
        !self.owned
    }

    fn get_u64(&self, attr: CUmemPool_attribute) -> Result<u64> {
        let cu = self.ctx.enter()?;
        let mut v = 0u64;
        // SAFETY: a live pool; the attribute's value is a cuuint64_t.
        self.ctx.check("cuMemPoolGetAttribute", unsafe {
            (cu.cuMemPoolGetAttribute)(self.raw, attr, (&mut v as *mut u64).cast())
        })?;
        Ok(v)
    }

    fn set_u64(&self, attr: CUmemPool_attribute, mut v: u64) -> Result<()> {
        let cu = self.ctx.enter()?;
        // SAFETY: a live pool; the attribute's value is a cuuint64_t.
        self.ctx.check("cuMemPoolSetAttribute", unsafe {
            (cu.cuMemPoolSetAttribute)(self.raw, attr, (&mut v as *mut u64).cast())
        })
    }

    fn get_flag(&self, attr: CUmemPool_attribute) -> Result<bool> {
        let cu = self.ctx.enter()?;
        let mut v = 0i32;
        // SAFETY: a live pool; reuse attributes' values are ints.
        self.ctx.check("cuMemPoolGetAttribute", unsafe {
            (cu.cuMemPoolGetAttribute)(self.raw, attr, (&mut v as *mut i32).cast())
        })?;
        Ok(v != 0)
    }

    fn set_flag(&self, attr: CUmemPool_attribute, on: bool) -> Result<()> {
        let cu = self.ctx.enter()?;
        let mut v = i32::from(on);
        // SAFETY: a live pool; reuse attributes' values are ints.
        self.ctx.check("cuMemPoolSetAttribute", unsafe {
            (cu.cuMemPoolSetAttribute)(self.raw, attr, (&mut v as *mut i32).cast())
        })
    }

    /// Bytes of freed memory the pool keeps at a synchronization instead
    /// of releasing them (`CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`; 0 by
    /// default).
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn release_threshold(&self) -> Result<u64> {
        self.get_u64(CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
    }

    /// Sets the release threshold (`u64::MAX`: keep everything).
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn set_release_threshold(&self, bytes: u64) -> Result<()> {
        self.set_u64(
            CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            bytes,
        )
    }

    /// Releases memory the pool holds beyond what is allocated, keeping at
    /// least `keep_bytes` (`cuMemPoolTrimTo`).
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn trim_to(&self, keep_bytes: usize) -> Result<()> {
        let cu = self.ctx.enter()?;
        // SAFETY: a live pool.
        self.ctx.check("cuMemPoolTrimTo", unsafe {
            (cu.cuMemPoolTrimTo)(self.raw, keep_bytes)
        })
    }

    /// The reuse policy.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn reuse(&self) -> Result<ReusePolicy> {
        use CUmemPool_attribute as A;
        Ok(ReusePolicy {
            follow_event_dependencies: self
                .get_flag(A::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES)?,
            allow_opportunistic: self.get_flag(A::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC)?,
            allow_internal_dependencies: self
                .get_flag(A::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES)?,
        })
    }

    /// Sets the reuse policy.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn set_reuse(&self, policy: ReusePolicy) -> Result<()> {
        use CUmemPool_attribute as A;
        self.set_flag(
            A::CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES,
            policy.follow_event_dependencies,
        )?;
        self.set_flag(
            A::CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC,
            policy.allow_opportunistic,
        )?;
        self.set_flag(
            A::CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES,
            policy.allow_internal_dependencies,
        )
    }

    /// The pool's usage counters.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn usage(&self) -> Result<PoolUsage> {
        use CUmemPool_attribute as A;
        Ok(PoolUsage {
            reserved: self.get_u64(A::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT)?,
            reserved_high: self.get_u64(A::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH)?,
            used: self.get_u64(A::CU_MEMPOOL_ATTR_USED_MEM_CURRENT)?,
            used_high: self.get_u64(A::CU_MEMPOOL_ATTR_USED_MEM_HIGH)?,
        })
    }

    /// Resets the high-water marks to the current values.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn reset_high_water_marks(&self) -> Result<()> {
        use CUmemPool_attribute as A;
        self.set_u64(A::CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, 0)?;
        self.set_u64(A::CU_MEMPOOL_ATTR_USED_MEM_HIGH, 0)
    }

    /// Allocates `len` elements in the order of `stream`'s work
    /// (`cuMemAllocAsync` from the default pool,
    /// `cuMemAllocFromPoolAsync` from a created one). The contents are
    /// unspecified. Freed in stream order when dropped.
    ///
    /// # Errors
    ///
    /// Size errors; [`Error::AllocationTooLarge`] for more than the
    /// device's memory, before the driver sees it; context mismatches;
    /// [`Error::IllegalDuringCapture`] while the context captures (graphs
    /// allocate through [`Graph::add_mem_alloc`](crate::work::graph::Graph::add_mem_alloc));
    /// driver errors (out of memory).
    #[track_caller]
    pub fn alloc<'a, T: DeviceCopy>(
        &self,
        stream: &'a impl OrderedStream,
        len: usize,
    ) -> Result<PoolBuffer<'a, T>> {
        let location = Location::caller();
        let bytes = byte_len::<T>(len, "allocation")?;
        check_align::<T>("stream-ordered allocation")?;
        let call = if self.owned {
            "cuMemAllocFromPoolAsync"
        } else {
            "cuMemAllocAsync"
        };
        if bytes > self.device_bytes {
            return Err(Error::AllocationTooLarge {
                call,
                bytes,
                device: self.ctx.device().ordinal(),
                device_bytes: self.device_bytes,
            });
        }
        same_context("MemPool::alloc", self.ctx, stream.context())?;
        crate::context::release::refuse_in_callback("MemPool::alloc")?;
        self.ctx.refuse_during_capture(
            "a stream-ordered allocation outside a graph builder (use Graph::add_mem_alloc)",
        )?;
        let state = stream.capture_state().0;
        // Held across the enqueue: no capture can begin on the stream in
        // between, and work of another thread's capture is refused.
        let g = state.lock();
        if g.capture.is_some() {
            return Err(Error::StreamCaptured {
                operation:
                    "a stream-ordered allocation on a captured stream (use Graph::add_mem_alloc)",
                device: self.ctx.device().ordinal(),
            });
        }
        let mut ptr: CUdeviceptr = 0;
        let raw_stream = stream.as_raw();
        // The stream (created, never the legacy stream) names the device the
        // memory comes from, so the call does not depend on the thread's
        // current context (see `Context::issue_on_stream`).
        self.ctx.issue_on_stream(call, |cu| {
            if self.owned {
                // SAFETY: a valid out-pointer, a non-zero size, a live pool
                // and a live stream of this context.
                unsafe { (cu.cuMemAllocFromPoolAsync)(&mut ptr, bytes, self.raw, raw_stream) }
            } else {
                // SAFETY: a valid out-pointer, a non-zero size and a live
                // stream of this context.
                unsafe { (cu.cuMemAllocAsync)(&mut ptr, bytes, raw_stream) }
            }
        })?;
        drop(g);
        let id = self
            .ctx
            .arena()
            .record_alloc(AllocKind::StreamOrdered, bytes, location);
        Ok(PoolBuffer {
            ctx: stream.context(),
            stream: stream.as_raw(),
            state,
            ptr,
            len,
            id,
            pool_id: self.export_id,
            exports: AtomicUsize::new(0),
            _marker: PhantomData,
        })
    }
}

impl Drop for MemPool<'_> {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        if self.exports.load(Ordering::Acquire) > 0 {
            // Exported over IPC and never released: other processes may
            // hold it imported; the pool is kept.
            self.ctx
                .arena()
                .record_kept(0, "a memory pool exported over IPC, never released");
            self.ctx.keep_for_export();
            return;
        }
        let raw = self.raw as usize;
        // SAFETY: destroys the pool made by create_pool, once (now, or after
        // this thread's capture, or off a driver callback thread); the
        // driver releases it once allocations still live from it are freed.
        self.ctx
            .release("cuMemPoolDestroy", None, move |cu| unsafe {
                (cu.cuMemPoolDestroy)(raw as cuda_sys::CUmemoryPool)
            });
    }
}

/// Device memory for `len` elements of `T` allocated in stream order from
/// a [`MemPool`], freed in stream order on its stream when dropped
/// (`cuMemFreeAsync`). See the [module documentation](crate::memory::pool).
pub struct PoolBuffer<'a, T: DeviceCopy> {
    ctx: &'a Context,
    /// Borrowed for 'a: the buffer is freed on it.
    stream: CUstream,
    /// The stream's capture state: the free is issued under its lock, or
    /// deferred to the end of its capture.
    state: Arc<StreamState>,
    ptr: CUdeviceptr,
    len: usize,
    id: u64,
    /// Its pool's identity in IPC handles (0: the pool cannot be exported).
    pub(crate) pool_id: u64,
    /// IPC exports not released: while any is, the drop keeps the memory.
    pub(crate) exports: AtomicUsize,
    _marker: PhantomData<T>,
}

// SAFETY: the stream and pointer are handles the driver accepts from any
// thread; device memory is not Rust memory, and the context is Sync.
unsafe impl<T: DeviceCopy> Send for PoolBuffer<'_, T> {}
// SAFETY: as above; nothing is mutated through `&PoolBuffer`.
unsafe impl<T: DeviceCopy> Sync for PoolBuffer<'_, T> {}

impl<T: DeviceCopy> std::fmt::Debug for PoolBuffer<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoolBuffer")
            .field("ptr", &format_args!("{:#x}", self.ptr))
            .field("len", &self.len)
            .finish()
    }
}

impl<'a, T: DeviceCopy> PoolBuffer<'a, T> {
    /// The context.
    pub fn context(&self) -> &'a Context {
        self.ctx
    }

    /// The raw handle of the stream it was allocated on, and is freed on.
    pub fn stream(&self) -> CUstream {
        self.stream
    }

    /// The device address.
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

    /// The whole buffer as a view: a kernel argument, a copy source or
    /// destination. As a kernel argument it belongs to its own device's
    /// kernels alone: a pool's allocations do not follow context peer
    /// access (`cuMemPoolSetAccess` grants them, which cudakit does not
    /// call), so another context's kernel is refused it.
    pub fn as_view(&self) -> DeviceView<'_, T> {
        DeviceView::from_raw_parts(self.ctx, self.ptr, self.len)
            .with_origin(self.stream_origin())
            .restricted_to_own_device(crate::compile::signature::check::Container::PoolBuffer)
    }

    /// Frees the buffer in stream order now, returning the driver's
    /// answer (dropping does the same and records errors instead).
    ///
    /// # Errors
    ///
    /// Driver errors; [`Error::ContextPoisoned`], after the memory was
    /// handed back as a drop would. While the context captures a graph,
    /// the buffer is dropped instead (freed after a capture of its
    /// stream), and errors are recorded as a drop records them.
    pub fn free(self) -> Result<()> {
        if self.exports.load(Ordering::Acquire) > 0 {
            // Kept, as the drop keeps it (recorded as leaked).
            drop(self);
            return Err(Error::Ipc(crate::error::IpcError::StillExported {
                what: "stream-ordered buffer",
            }));
        }
        // Where the free cannot be issued now (a captured stream, a
        // capturing thread, a driver callback, off a green context's
        // thread, a child made by `fork`), the drop's path defers or
        // skips it as it does for any release.
        if !self.ctx.releases_now() || self.state.lock().capture.is_some() {
            drop(self);
            return Ok(());
        }
        let this = std::mem::ManuallyDrop::new(self);
        let (ptr, stream) = (this.ptr, this.stream);
        let g = this.state.lock();
        if g.capture.is_some() {
            drop(g);
            drop(std::mem::ManuallyDrop::into_inner(this));
            return Ok(());
        }
        // SAFETY: frees the allocation made by MemPool::alloc, once (the
        // buffer is consumed and its Drop suppressed; a failed call freed
        // nothing, so a retry does not free twice), on its live stream,
        // which is not captured (its state, locked by `g` across the call,
        // says so), after every work that used it (scopes borrow it until
        // they waited).
        let result = this.ctx.issue_on_stream("cuMemFreeAsync", |cu| unsafe {
            (cu.cuMemFreeAsync)(ptr, stream)
        });
        drop(g);
        match &result {
            Err(Error::ContextPoisoned { .. }) => {
                // Refused before the driver saw it: the drop hands it back
                // as on any context that refuses work (errors recorded).
                drop(std::mem::ManuallyDrop::into_inner(this));
            }
            Ok(()) => this.ctx.arena().record_free(this.id),
            Err(_) => this.ctx.arena().record_leak(this.id, "cuMemFreeAsync"),
        }
        result
    }
}

impl<T: DeviceCopy> PoolBuffer<'_, T> {
    /// The stream the buffer was allocated on, for ordering its uses on
    /// other streams (see `crate::work::scope`).
    fn stream_origin(&self) -> StreamOrigin {
        StreamOrigin {
            raw: self.stream as usize,
            state: Arc::as_ptr(&self.state),
        }
    }
}

impl<T: DeviceCopy> Drop for PoolBuffer<'_, T> {
    fn drop(&mut self) {
        if crate::driver::forked() {
            // A child made by `fork`: the memory is the parent's, no driver
            // call may be made, and no lock is taken (a parent's thread may
            // have held the stream's at the fork). The arena stays as it
            // was, as every release leaves it there.
            return;
        }
        let (ptr, stream, id) = (self.ptr, self.stream, self.id);
        if self.exports.load(Ordering::Acquire) > 0 {
            // Exported over IPC and never released: another process may
            // still use the memory, so it is kept, and recorded as such.
            self.ctx
                .arena()
                .record_leak(id, "exported over IPC, its Exported guard never released");
            self.ctx.keep_for_export();
            return;
        }
        if crate::context::release::in_driver_callback() || !self.ctx.thread_allowed() {
            // On a driver thread no driver call is allowed (and a green
            // context's partition takes them only on its own thread, to
            // which the release is handed over). The buffer was
            // moved into a host callback, so no queued work uses it (moving
            // it needed every borrow, and so every scope that used it, to
            // have ended): freed later on the legacy stream, by a thread of
            // cudakit's (see `crate::context::release`).
            // SAFETY: as said; freed once.
            self.ctx
                .release("cuMemFreeAsync", Some(id), move |cu| unsafe {
                    (cu.cuMemFreeAsync)(ptr, std::ptr::null_mut())
                });
            return;
        }
        let mut g = self.state.lock();
        if g.capture.is_some() {
            // Issued now, the free would be captured instead of run: the
            // capture's end issues it on this stream.
            g.deferred_frees.push((ptr, id));
            return;
        }
        let rc = match self.ctx.enter_for_drop() {
            // SAFETY: frees the allocation made by MemPool::alloc, once, on
            // its stream (alive: borrowed for 'a; not captured: its state,
            // locked by `g` across the call, says so; a stream-ordered free
            // on a stream that is not captured is allowed on a capturing
            // thread); work that used the buffer was queued in scopes that
            // have waited for it.
            Some(cu) => unsafe { (cu.cuMemFreeAsync)(ptr, stream) },
            None => cuda_sys::CUresult::CUDA_ERROR_NOT_INITIALIZED,
        };
        drop(g);
        self.ctx.record_drop_error("cuMemFreeAsync", rc);
        self.ctx.arena().record_release(id, rc, "cuMemFreeAsync");
    }
}

impl<T: DeviceCopy> Sealed for &PoolBuffer<'_, T> {}

impl<'b, T: DeviceCopy> DeviceSrc<'b, T> for &'b PoolBuffer<'_, T> {
    fn context(&self) -> &'b Context {
        self.ctx
    }
    fn device_ptr(&self) -> DevicePtr {
        DevicePtr::new(self.ptr)
    }
    fn len(&self) -> usize {
        self.len
    }
    fn origin(&self) -> Option<StreamOrigin> {
        Some(self.stream_origin())
    }
}

impl<'b, T: DeviceCopy> DeviceDst<'b, T> for &'b PoolBuffer<'_, T> {
    fn context(&self) -> &'b Context {
        self.ctx
    }
    fn device_ptr(&self) -> DevicePtr {
        DevicePtr::new(self.ptr)
    }
    fn len(&self) -> usize {
        self.len
    }
    fn origin(&self) -> Option<StreamOrigin> {
        Some(self.stream_origin())
    }
}
