//! A test-only stand-in for libcuda. Never shipped.
//!
//! It exports the versioned driver symbols that cuda-sys's table names, so
//! that the loader can be tested on a machine without a GPU, and it records
//! what it is called with, so that the argument path (above all the
//! `kernelParams` array of `cuLaunchKernel`) can be checked byte for byte.
//!
//! Besides the CUDA symbols it exports `stub_*` functions through which a
//! test configures it and reads back what it recorded. The real driver
//! remains the ground truth: the hardware suite runs against it.
//!
//! # What it models
//!
//! Wave 3 of the design rests cudakit's safety on driver rules that a race
//! or a failure path breaks; the stand-in models those rules, each written
//! on the function that applies it, so that a test with many threads or an
//! injected failure sees what the driver would do:
//!
//! - **Current context per thread** (`cuCtxSetCurrent`/`cuCtxGetCurrent`,
//!   thread-local as in the driver). Streams, modules, functions and
//!   allocations remember the context current when they were made. A launch
//!   of a function of another context, or stream work on a created stream
//!   of another context, is refused with CUDA_ERROR_INVALID_CONTEXT (201),
//!   as is any stream work with no current context.
//! - **Capture state per stream.** A capture is a record (id, origin
//!   stream, mode, beginning thread, invalidated flag, member streams);
//!   events recorded in it belong to it, and a stream that waits on such an
//!   event joins it. Work queued on a member stream, from any thread,
//!   becomes a node and does not run; nodes queued from a thread other
//!   than the one that began the capture are counted
//!   (`stub_foreign_captured`).
//! - **The refusals of capture** (900 and invalidation for "potentially
//!   unsafe" calls under the thread's capture mode and for waits on a
//!   capturing stream, event or context; 901 for work on an invalidated
//!   capture; 908 for an end from the wrong thread; 906 for the legacy
//!   stream next to a blocking capturing stream).
//! - **Host functions** run asynchronously on one stand-in "driver
//!   callback" thread, FIFO; every driver entry point called on that
//!   thread answers CUDA_ERROR_NOT_PERMITTED (800) and does nothing.
//!   Synchronizing waits for the host functions queued before it.
//! - **Failed waits** (`stub_fail_next_sync`, `stub_fail_syncs`): the next
//!   stream, context or event synchronize returns a code and does not wait,
//!   so the work it was to wait for may still be running.
//!
//! Every refusal is counted by reason (`stub_refusals`).
//!
//! # Other behaviour
//! - `cuInit` succeeds; `cuDriverGetVersion` reports 13000; one device.
//! - `cuMemAlloc_v2` hands out fake addresses from 0xD000_0000 upwards and
//!   records the sizes; `cuMemFree_v2` records the frees.
//! - `cuFuncGetParamInfo` reports the parameter layout set by
//!   `stub_set_params`; `cuLaunchKernel` reads `kernelParams` exactly as the
//!   driver does, one pointer per parameter, and copies that many bytes from
//!   each pointer into its record, which `stub_last_launch` returns.
//! - One device by default (up to 4 with `stub_set_device_count`; sm_90
//!   limits, attributes overridable with `stub_set_attribute`), a primary
//!   context per device (a reset while an allocation is live is
//!   recorded), real host memory for managed and pinned allocations, and a
//!   dynamic shared-memory attribute that launches are checked against
//!   (one value, kept for every function). Any name is a function of a
//!   module: each name its own handle (as each kernel is its own function
//!   to the driver), the same handle every time it is looked up.
//! - Context-independent libraries (`cuLibrary*`, `cuKernel*`): a PTX
//!   image's `.entry` names are its kernels and its `.global`/`.const`
//!   declarations its variables; `cuKernelGetFunction` makes a function of
//!   the current context; a handle not loaded is 400 (`stub_library_counts`).
//! - Virtual memory (`cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`,
//!   `cuMemSetAccess`, `cuMemUnmap`, `cuMemRelease`, `cuMemAddressFree`,
//!   `cuMemGetAllocationGranularity`): fake ranges and numbered handles with
//!   the driver's alignment, overlap and order rules checked and every
//!   refusal counted (`stub_vmm_counts`); no memory behind them.
//! - Copies and memsets move bytes only where both sides are real host
//!   memory (managed or pinned); device memory is fake.
//! - Explicit graphs: distinct graph handles; kernel, empty, host,
//!   child-graph, memset, memcpy, allocation and free nodes are recorded
//!   with their graph and type (`cuGraphGetNodes`, `cuGraphNodeGetType`,
//!   `cuGraphChildGraphNodeGetGraph` answer from the record); conditional
//!   handles and conditional nodes (`cuGraphAddNode_v2`) are checked as
//!   the driver checks them (a handle of this graph, the body count of the
//!   kind) and get fresh body graphs (`stub_condition`, `stub_conditional`).
//! - Green contexts (`cuDeviceGetDevResource`, `cuDevSmResourceSplitByCount`,
//!   `cuDevResourceGenerateDesc`, `cuGreenCtxCreate`, `cuCtxFromGreenCtx`,
//!   `cuGreenCtxStreamCreate`, `cuGreenCtxDestroy`, ...): the device's SMs
//!   (its multiprocessor attribute) split by the minimum and alignment set
//!   with `stub_set_green` (8 and 8 by default, as on sm_90), a split's
//!   output refused as a split's input (as CUDA refuses it), each green
//!   context a CUcontext of its own; a destruction while a stream or an
//!   allocation of it is live, or without a synchronize after its last
//!   launch, is counted (`stub_green_counts`). The `omit-green` feature
//!   leaves all of them out, as a driver before CUDA 12.4.
//! - Inter-process sharing (`cuIpc*`, `cuMemExportToShareableHandle`,
//!   `cuMemImportFromShareableHandle`, `cuMemPool*` export and import):
//!   legacy handles name a `cuMemAlloc` base and open at a fresh address;
//!   shareable allocations and exportable pools export real descriptors
//!   (one end of a socket pair the stand-in keeps), recognised again by
//!   their inode when imported, so that a descriptor passed over a socket
//!   imports and any other one (a pipe, `/dev/null`) is refused (1);
//!   `stub_fail_next_ipc_close` makes the next close fail; every count in
//!   `stub_ipc_counts`. `cuDeviceGetUuid_v2` gives each device its own
//!   UUID.
//! - Every other symbol of the table returns CUDA_ERROR_NOT_SUPPORTED (801).
//!
//! # Not modelled
//! Unjoined forks at the end of a capture (904), isolation errors (905)
//! and `CU_EVENT_WAIT_EXTERNAL`, sticky errors after a fault, and the
//! "potentially unsafe" calls the stand-in does not export (arrays,
//! textures, surfaces answer 801 anyway).
#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::cell::Cell;
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

const CUDA_SUCCESS: i32 = 0;
const CUDA_ERROR_INVALID_VALUE: i32 = 1;
const CUDA_ERROR_NOT_READY: i32 = 600;
const CUDA_ERROR_NOT_SUPPORTED: i32 = 801;

/// Why the stand-in refused a call: the index into `stub_refusals`, with
/// the code returned.
mod reason {
    /// CUDA_ERROR_INVALID_CONTEXT (201): no current context, or a
    /// function or stream of another context than the current one.
    pub const WRONG_CONTEXT: usize = 0;
    /// CUDA_ERROR_NOT_PERMITTED (800): a driver call on the stand-in's
    /// host-function thread.
    pub const NOT_PERMITTED: usize = 1;
    /// CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (900): a call prohibited
    /// during a capture (the capture is invalidated too).
    pub const CAPTURE_UNSUPPORTED: usize = 2;
    /// CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (901): work on a stream whose
    /// capture was invalidated (and the end of such a capture).
    pub const CAPTURE_INVALIDATED: usize = 3;
    /// CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD (908).
    pub const WRONG_THREAD: usize = 4;
    /// CUDA_ERROR_ILLEGAL_STATE (401): a capture begun on a capturing
    /// stream, or ended on a stream that is not capturing.
    pub const ILLEGAL_STATE: usize = 5;
    /// CUDA_ERROR_STREAM_CAPTURE_UNMATCHED (903): a capture ended on a
    /// member stream instead of its origin.
    pub const UNMATCHED: usize = 6;
    /// CUDA_ERROR_STREAM_CAPTURE_IMPLICIT (906): the legacy stream used
    /// while a blocking stream of its context captures.
    pub const IMPLICIT: usize = 7;
    /// CUDA_ERROR_STREAM_CAPTURE_MERGE (902): a wait that would merge two
    /// captures.
    pub const MERGE: usize = 8;
    /// CUDA_ERROR_UNKNOWN (999): a synchronize that waited 30 s for host
    /// functions (held by `stub_hold_host_fns`) and gave up.
    pub const SYNC_TIMEOUT: usize = 9;
    /// A failure injected by `stub_fail_next_sync`/`stub_fail_syncs`.
    pub const INJECTED: usize = 10;
    /// Number of reasons.
    pub const COUNT: usize = 11;
    /// The code returned for each reason (INJECTED returns its own).
    pub const CODES: [i32; COUNT] = [201, 800, 900, 901, 908, 401, 903, 906, 902, 999, 0];
}

/// `CUstreamCaptureMode`.
const MODE_GLOBAL: i32 = 0;
const MODE_RELAXED: i32 = 2;

/// An active capture sequence (removed when it ends).
struct Capture {
    id: u64,
    origin: usize,
    mode: i32,
    /// The stand-in's id of the thread that began it.
    thread: u64,
    invalidated: bool,
    /// The origin and every stream that joined through an event.
    members: Vec<usize>,
    /// The context current when it began.
    ctx: usize,
    /// Operations recorded as nodes, and those queued from another thread.
    nodes: u64,
    foreign: u64,
}

/// A stream the stand-in knows (created, or met as the legacy stream).
struct StreamRec {
    handle: usize,
    ctx: usize,
    /// Created without CU_STREAM_NON_BLOCKING: synchronizes with the legacy
    /// stream.
    blocking: bool,
    /// Host functions queued on it so far, and run so far (FIFO).
    queued: u64,
    run: u64,
}

/// An event: its context, the capture it was last recorded in (if still
/// active) or the host function it follows (stream, sequence number).
struct EventRec {
    handle: usize,
    capture: Option<u64>,
    after: Option<(usize, u64)>,
}

/// A host function waiting for the stand-in's callback thread.
struct HostJob {
    stream: usize,
    seq: u64,
    f: unsafe extern "C" fn(*mut c_void),
    user: usize,
}

struct State {
    #[cfg_attr(feature = "omit-mem-alloc", allow(dead_code))]
    next_address: u64,
    allocations: Vec<(u64, usize)>,
    /// The context current when each allocation (by address) was made.
    allocation_ctx: Vec<(u64, usize)>,
    frees: Vec<u64>,
    /// (offset, size) of each kernel parameter, as cuFuncGetParamInfo reports.
    params: Vec<(usize, usize)>,
    /// Grid, block, shared bytes, then each parameter's bytes.
    last_launch: Vec<u8>,
    launches: u64,
    unsupported_calls: Vec<&'static str>,
    /// Devices reported by cuDeviceGetCount (1 unless a test sets it).
    device_count: i32,
    /// Retains of each device's primary context not yet released.
    retains: [i32; 4],
    /// Resets of a primary context while allocations were live.
    resets_while_retained: u64,
    /// Microseconds cuDevicePrimaryCtxRelease_v2 sleeps (widens races).
    release_delay_us: u64,
    /// Device attributes overridden by `stub_set_attribute`.
    attribute_overrides: Vec<(i32, i32)>,
    /// Managed and pinned allocations: (address, bytes), real host memory.
    managed: Vec<(u64, usize)>,
    pinned: Vec<(u64, usize)>,
    /// The function's dynamic shared-memory attribute.
    dynamic_shared: i32,
    /// Launches refused because they asked for more dynamic shared memory
    /// than the attribute allowed (as the driver refuses them).
    shared_refusals: u64,
    /// State of a tiny xorshift generator for the attribute setter's delay.
    jitter: u64,
    /// The last stream handle handed out (each stream gets its own).
    next_stream: usize,
    streams: Vec<StreamRec>,
    /// Modules and functions: (handle, context).
    modules: Vec<(usize, usize)>,
    functions: Vec<(usize, usize)>,
    /// The (module, name) of each function looked up, its handle
    /// `FUNCTION + 0x10 * index`.
    function_names: Vec<(usize, Vec<u8>)>,
    events: Vec<EventRec>,
    next_event: usize,
    captures: Vec<Capture>,
    next_capture: u64,
    /// (nodes, foreign nodes, invalidated, members) of the last capture
    /// that ended.
    last_capture: [u64; 4],
    /// Operations recorded into a capture from a thread other than the one
    /// that began it.
    foreign_captured: u64,
    /// Refusals by reason (see `reason`).
    refusals: [u64; reason::COUNT],
    /// `cuMemFreeAsync` calls, and those made on a capturing stream.
    async_frees: u64,
    captured_frees: u64,
    /// `cuLaunchHostFunc` calls made on a capturing stream.
    captured_host_fns: u64,
    /// Host functions waiting for the callback thread, whether it is held
    /// (`stub_hold_host_fns`), and those run.
    host_queue: VecDeque<HostJob>,
    hold_host_fns: bool,
    host_fns_run: u64,
    /// Synchronizes still to fail, and the code they return
    /// (`stub_fail_syncs`).
    fail_syncs: u64,
    fail_code: i32,
    /// `cuStreamQuery` calls still to fail with `fail_query_code`.
    fail_queries: u64,
    fail_query_code: i32,
    /// Graph nodes made by the explicit builder: (node, its dependencies).
    nodes: Vec<(usize, Vec<usize>)>,
    /// The same nodes with their graph and `CUgraphNodeType`, and, for a
    /// child-graph node, its graph: (node, graph, type, child graph).
    node_graphs: Vec<(usize, usize, i32, usize)>,
    /// The next graph handle (`cuGraphCreate`, conditional bodies).
    next_graph: usize,
    /// Conditional handles: (handle, graph, default, flags).
    conditions: Vec<(u64, usize, u32, u32)>,
    /// `cuGraphInstantiateWithFlags` flags, in call order, and
    /// `cuGraphUpload` calls.
    instantiate_flags: Vec<u64>,
    uploads: u64,
    /// Conditional nodes: (node, graph, handle, conditional type, bodies).
    conditionals: Vec<(usize, usize, u64, i32, Vec<usize>)>,
    /// Attribute IDs of the last `cuLaunchKernelEx`.
    last_ex_attrs: Vec<i32>,
    /// `cuStreamSetAttribute` calls: (stream, attribute ID, window bytes).
    stream_attrs: Vec<(usize, i32, usize)>,
    /// `cuMemcpyBatchAsync_v2` calls and the copies they held.
    batches: u64,
    batch_ops: u64,
    /// `cuCtxSetLimit` values: (limit, value).
    limits: Vec<(i32, usize)>,
    /// NCCL stand-in: group starts, collective calls, aborts.
    nccl_groups: u64,
    nccl_calls: u64,
    nccl_aborts: u64,
    /// `ncclGetUniqueId` calls, and the first 8 id bytes each
    /// `ncclCommInitRankConfig` was given, with its rank.
    nccl_ids: u64,
    nccl_init_ids: Vec<([u8; 8], i32)>,
}

static STATE: Mutex<State> = Mutex::new(State {
    next_address: 0xD000_0000,
    allocations: Vec::new(),
    allocation_ctx: Vec::new(),
    frees: Vec::new(),
    params: Vec::new(),
    last_launch: Vec::new(),
    launches: 0,
    unsupported_calls: Vec::new(),
    device_count: 1,
    retains: [0; 4],
    resets_while_retained: 0,
    release_delay_us: 0,
    attribute_overrides: Vec::new(),
    managed: Vec::new(),
    pinned: Vec::new(),
    dynamic_shared: 48 * 1024,
    shared_refusals: 0,
    jitter: 0x9E37_79B9_7F4A_7C15,
    next_stream: 0x5_0000,
    streams: Vec::new(),
    modules: Vec::new(),
    functions: Vec::new(),
    function_names: Vec::new(),
    events: Vec::new(),
    next_event: 0xE_0000,
    captures: Vec::new(),
    next_capture: 1,
    last_capture: [0; 4],
    foreign_captured: 0,
    refusals: [0; reason::COUNT],
    async_frees: 0,
    captured_frees: 0,
    captured_host_fns: 0,
    host_queue: VecDeque::new(),
    hold_host_fns: false,
    host_fns_run: 0,
    fail_syncs: 0,
    fail_code: 0,
    fail_queries: 0,
    fail_query_code: 0,
    nodes: Vec::new(),
    node_graphs: Vec::new(),
    next_graph: 0x61_0000,
    conditions: Vec::new(),
    instantiate_flags: Vec::new(),
    uploads: 0,
    conditionals: Vec::new(),
    last_ex_attrs: Vec::new(),
    stream_attrs: Vec::new(),
    batches: 0,
    batch_ops: 0,
    limits: Vec::new(),
    nccl_groups: 0,
    nccl_calls: 0,
    nccl_aborts: 0,
    nccl_ids: 0,
    nccl_init_ids: Vec::new(),
});

/// Signalled whenever a host function has run or the hold is lifted.
static CHANGED: Condvar = Condvar::new();

const PAGE: usize = 4096;

/// How long a synchronize waits for held host functions before it gives up
/// (so that a test that forgets to lift a hold fails instead of hanging).
const SYNC_PATIENCE: Duration = Duration::from_secs(30);

fn state() -> MutexGuard<'static, State> {
    match STATE.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

fn not_supported(symbol: &'static str) -> i32 {
    state().unsupported_calls.push(symbol);
    CUDA_ERROR_NOT_SUPPORTED
}

static NEXT_THREAD: AtomicU64 = AtomicU64::new(1);

/// Calls of `cuStreamWaitEvent` (see `stub_stream_waits`).
static STREAM_WAITS: AtomicU64 = AtomicU64::new(0);

/// How many times `cuStreamWaitEvent` was called, in total: a test reads it
/// before and after an operation to see whether a stream was made to wait.
#[no_mangle]
pub extern "C" fn stub_stream_waits() -> u64 {
    STREAM_WAITS.load(std::sync::atomic::Ordering::Relaxed)
}

thread_local! {
    /// The thread's current context, as the driver keeps it.
    static CURRENT: Cell<usize> = const { Cell::new(0) };
    /// The stand-in's id of this thread.
    static THREAD: u64 = NEXT_THREAD.fetch_add(1, Ordering::Relaxed);
    /// Whether this is the stand-in's host-function thread.
    static ON_CALLBACK_THREAD: Cell<bool> = const { Cell::new(false) };
    /// The thread's capture interaction mode (cuThreadExchangeStreamCaptureMode).
    static THREAD_MODE: Cell<i32> = const { Cell::new(MODE_GLOBAL) };
}

fn current() -> usize {
    CURRENT.with(Cell::get)
}

fn thread_id() -> u64 {
    THREAD.with(|t| *t)
}

/// Counts a refusal and returns its code.
fn refused(reason: usize) -> i32 {
    let mut s = state();
    s.refuse(reason)
}

/// The first statement of every driver entry point: on the stand-in's
/// host-function thread the call is refused with CUDA_ERROR_NOT_PERMITTED
/// (800) and has no effect. CUDA: "The host function must not make any
/// CUDA API calls. Attempting to use a CUDA API may result in
/// CUDA_ERROR_NOT_PERMITTED, but this is not required" (cuLaunchHostFunc);
/// the stand-in always refuses, the strictest reading.
macro_rules! entry {
    () => {
        if ON_CALLBACK_THREAD.with(Cell::get) {
            return refused(reason::NOT_PERMITTED);
        }
    };
}

/// The legacy stream handles (0 and CU_STREAM_LEGACY).
fn is_legacy(stream: usize) -> bool {
    stream == 0 || stream == 1
}

impl State {
    fn refuse(&mut self, why: usize) -> i32 {
        self.refusals[why] += 1;
        reason::CODES[why]
    }

    fn stream(&mut self, handle: usize) -> &mut StreamRec {
        if let Some(i) = self.streams.iter().position(|r| r.handle == handle) {
            return &mut self.streams[i];
        }
        // A stream the stand-in did not make (the legacy or per-thread
        // stream): of the current context, blocking.
        self.streams.push(StreamRec {
            handle,
            ctx: current(),
            blocking: true,
            queued: 0,
            run: 0,
        });
        self.streams.last_mut().expect("just pushed")
    }

    fn created_stream_ctx(&self, handle: usize) -> Option<usize> {
        if is_legacy(handle) || handle == 2 {
            return None;
        }
        self.streams
            .iter()
            .find(|r| r.handle == handle)
            .map(|r| r.ctx)
    }

    /// The index of the active capture `stream` is a member of.
    fn capture_of(&self, stream: usize) -> Option<usize> {
        self.captures
            .iter()
            .position(|c| c.members.contains(&stream))
    }

    fn capture_by_id(&self, id: u64) -> Option<usize> {
        self.captures.iter().position(|c| c.id == id)
    }

    /// A "potentially unsafe" call (one not enqueued to a stream, which a
    /// capture cannot observe: cuMemAlloc, cuMemFree, synchronous copies,
    /// module loads...). CUDA (cuThreadExchangeStreamCaptureMode): a thread
    /// in GLOBAL mode (the default) is prohibited from such calls if it has
    /// an ongoing capture not begun in RELAXED mode, or if any other thread
    /// has a concurrent capture begun in GLOBAL mode; in THREAD_LOCAL mode
    /// only its own captures count; in RELAXED mode it is not prohibited.
    /// A prohibited call returns 900 and invalidates the captures that
    /// prohibited it (the driver's note on such calls: "the call will
    /// invalidate all the conflicting captures").
    fn unsafe_call(&mut self) -> Result<(), i32> {
        let mode = THREAD_MODE.with(Cell::get);
        if mode == MODE_RELAXED {
            return Ok(());
        }
        let me = thread_id();
        let mut hit = false;
        for c in &mut self.captures {
            let own = c.thread == me && c.mode != MODE_RELAXED;
            let global = mode == MODE_GLOBAL && c.thread != me && c.mode == MODE_GLOBAL;
            if own || global {
                c.invalidated = true;
                hit = true;
            }
        }
        if hit {
            Err(self.refuse(reason::CAPTURE_UNSUPPORTED))
        } else {
            Ok(())
        }
    }

    /// The legacy stream next to a capture. CUDA (cuStreamIsCapturing):
    /// "When a blocking stream is capturing, the legacy stream is in an
    /// unusable state until the blocking stream capture is terminated";
    /// using it "would have an implicit dependency on the capturing
    /// stream(s)": 906, and the capture is invalidated.
    fn legacy_use(&mut self) -> Result<(), i32> {
        let cur = current();
        let blocking: Vec<usize> = self
            .streams
            .iter()
            .filter(|r| r.blocking && !is_legacy(r.handle) && r.ctx == cur)
            .map(|r| r.handle)
            .collect();
        let mut hit = false;
        for c in &mut self.captures {
            if c.ctx == cur && c.members.iter().any(|m| blocking.contains(m)) {
                c.invalidated = true;
                hit = true;
            }
        }
        if hit {
            Err(self.refuse(reason::IMPLICIT))
        } else {
            Ok(())
        }
    }

    /// Work queued on `stream` (a launch, an async copy or memset, a host
    /// function, a stream-ordered allocation or free, an event record or
    /// wait, a graph launch). Checks, in the driver's terms:
    /// - a current context is needed (201 without one, CUDA's
    ///   CUDA_ERROR_INVALID_CONTEXT), and a created stream must belong to
    ///   the current context (201 otherwise: the stand-in is stricter than
    ///   the documentation, which lists CUDA_ERROR_INVALID_CONTEXT and
    ///   CUDA_ERROR_INVALID_HANDLE for these calls without saying which, so
    ///   that cudakit's retry after a foreign context switch is exercised);
    /// - on the legacy stream, the implicit-dependency rule (906);
    /// - on a stream that is a member of a capture: 901 if the capture was
    ///   invalidated ("The current capture sequence on the stream has been
    ///   invalidated due to a previous error"), else the operation becomes
    ///   a node and does not run (`Ok(true)`). CUDA records work queued on a
    ///   capturing stream whatever thread queues it; one queued from another
    ///   thread than the capture's is counted in `foreign_captured`.
    fn enqueue(&mut self, stream: usize) -> Result<bool, i32> {
        let cur = current();
        if cur == 0 {
            return Err(self.refuse(reason::WRONG_CONTEXT));
        }
        if let Some(ctx) = self.created_stream_ctx(stream) {
            if ctx != cur {
                return Err(self.refuse(reason::WRONG_CONTEXT));
            }
        }
        if is_legacy(stream) {
            self.legacy_use()?;
            return Ok(false);
        }
        let Some(i) = self.capture_of(stream) else {
            return Ok(false);
        };
        if self.captures[i].invalidated {
            return Err(self.refuse(reason::CAPTURE_INVALIDATED));
        }
        let me = thread_id();
        let c = &mut self.captures[i];
        c.nodes += 1;
        if c.thread != me {
            c.foreign += 1;
            self.foreign_captured += 1;
        }
        Ok(true)
    }

    /// Whether the host functions queued on `stream` so far have run.
    fn stream_idle(&self, stream: usize) -> bool {
        self.streams
            .iter()
            .find(|r| r.handle == stream)
            .map_or(true, |r| r.run >= r.queued)
    }

    fn context_idle(&self, ctx: usize) -> bool {
        self.streams
            .iter()
            .filter(|r| r.ctx == ctx)
            .all(|r| r.run >= r.queued)
    }

    /// An injected failure for this synchronize, if one is pending.
    fn injected(&mut self) -> Option<i32> {
        if self.fail_syncs == 0 {
            return None;
        }
        self.fail_syncs -= 1;
        self.refusals[reason::INJECTED] += 1;
        Some(self.fail_code)
    }

    /// Whether `address` is the host's own memory (no fake device
    /// allocation holds it): what a unified-addressing copy reads as host.
    fn is_host(&self, address: u64) -> bool {
        !self
            .allocations
            .iter()
            .any(|&(a, b)| address >= a && address < a + b as u64)
    }

    fn managed_or_pinned(&self, address: u64, n: usize) -> bool {
        self.managed
            .iter()
            .chain(self.pinned.iter())
            .any(|&(a, b)| address >= a && address + n as u64 <= a + b as u64)
    }
}

/// Waits, releasing the lock, until `done` holds; `None` after
/// [`SYNC_PATIENCE`] (counted as a timeout).
fn wait_until(
    mut s: MutexGuard<'static, State>,
    done: impl Fn(&State) -> bool,
) -> Result<MutexGuard<'static, State>, i32> {
    let deadline = Instant::now() + SYNC_PATIENCE;
    while !done(&s) {
        let now = Instant::now();
        if now >= deadline {
            return Err(s.refuse(reason::SYNC_TIMEOUT));
        }
        s = match CHANGED.wait_timeout(s, deadline - now) {
            Ok((g, _)) => g,
            Err(p) => p.into_inner().0,
        };
    }
    Ok(s)
}

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

/// `cuInit`.
#[no_mangle]
pub unsafe extern "C" fn cuInit(_flags: u32) -> i32 {
    entry!();
    CUDA_SUCCESS
}

/// `cuDriverGetVersion`: reports 13000.
#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut i32) -> i32 {
    entry!();
    if version.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the caller passes a valid out-pointer, as the C API requires.
    unsafe { version.write(13000) };
    CUDA_SUCCESS
}

/// `cuDeviceGetCount`: one device.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut i32) -> i32 {
    entry!();
    if count.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let n = state().device_count;
    // SAFETY: the caller passes a valid out-pointer.
    unsafe { count.write(n) };
    CUDA_SUCCESS
}

/// `cuMemAlloc_v2`: a fake address, recorded with the current context (none
/// is needed: the loader's test calls it bare). A potentially unsafe call
/// during capture (900, see `State::unsafe_call`).
#[cfg(not(feature = "omit-mem-alloc"))]
#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut u64, bytes: usize) -> i32 {
    entry!();
    if dptr.is_null() || bytes == 0 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut s = state();
    if let Err(rc) = s.unsafe_call() {
        return rc;
    }
    let address = s.next_address;
    s.next_address += (bytes as u64).div_ceil(256) * 256;
    s.allocations.push((address, bytes));
    s.allocation_ctx.push((address, current()));
    // SAFETY: the caller passes a valid out-pointer.
    unsafe { dptr.write(address) };
    CUDA_SUCCESS
}

/// `cuMemFree_v2`: recorded; managed allocations are handed back to the
/// host allocator. A potentially unsafe call during capture (900, nothing
/// freed); refused on the host-function thread (800, nothing freed).
#[no_mangle]
pub unsafe extern "C" fn cuMemFree_v2(dptr: u64) -> i32 {
    entry!();
    let mut s = state();
    if let Err(rc) = s.unsafe_call() {
        return rc;
    }
    {
        let mut i = ipc();
        if let Some(k) = i.pool_pointers.iter().position(|&a| a == dptr) {
            i.pool_pointers.swap_remove(k);
        }
    }
    if let Some(i) = s.managed.iter().position(|&(a, _)| a == dptr) {
        let (address, bytes) = s.managed.swap_remove(i);
        let layout = std::alloc::Layout::from_size_align(bytes, PAGE).expect("layout");
        // SAFETY: allocated in cuMemAllocManaged with this layout, freed once.
        unsafe { std::alloc::dealloc(address as usize as *mut u8, layout) };
    }
    s.frees.push(dptr);
    CUDA_SUCCESS
}

/// Real, page-aligned host memory of `bytes` filled with `fill`.
fn host_memory(bytes: usize, fill: u8) -> Option<u64> {
    let layout = std::alloc::Layout::from_size_align(bytes, PAGE).ok()?;
    // SAFETY: a non-zero size (the callers refuse 0).
    let p = unsafe { std::alloc::alloc(layout) };
    if p.is_null() {
        return None;
    }
    // SAFETY: `bytes` writable bytes just allocated.
    unsafe { std::ptr::write_bytes(p, fill, bytes) };
    Some(p as usize as u64)
}

/// `cuMemAllocManaged`: real, page-aligned host memory filled with 0xAB
/// (so that a missing zeroing shows), recorded. Potentially unsafe during
/// capture (900).
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocManaged(dptr: *mut u64, bytes: usize, _flags: u32) -> i32 {
    entry!();
    if dptr.is_null() || bytes == 0 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if let Err(rc) = state().unsafe_call() {
        return rc;
    }
    let Some(address) = host_memory(bytes, 0xAB) else {
        return 2; // CUDA_ERROR_OUT_OF_MEMORY
    };
    let mut s = state();
    s.managed.push((address, bytes));
    s.allocations.push((address, bytes));
    s.allocation_ctx.push((address, current()));
    // SAFETY: the caller passes a valid out-pointer.
    unsafe { dptr.write(address) };
    CUDA_SUCCESS
}

/// `cuMemHostAlloc`: real, page-aligned host memory (0xAB), recorded as an
/// allocation. Potentially unsafe during capture (900).
#[no_mangle]
pub unsafe extern "C" fn cuMemHostAlloc(pp: *mut *mut c_void, bytes: usize, _flags: u32) -> i32 {
    entry!();
    if pp.is_null() || bytes == 0 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if let Err(rc) = state().unsafe_call() {
        return rc;
    }
    let Some(address) = host_memory(bytes, 0xAB) else {
        return 2; // CUDA_ERROR_OUT_OF_MEMORY
    };
    let mut s = state();
    s.pinned.push((address, bytes));
    s.allocations.push((address, bytes));
    s.allocation_ctx.push((address, current()));
    // SAFETY: the caller passes a valid out-pointer.
    unsafe { pp.write(address as usize as *mut c_void) };
    CUDA_SUCCESS
}

/// Host ranges registered by `cuMemHostRegister_v2`: (start, bytes).
static REGISTERED: Mutex<Vec<(u64, usize)>> = Mutex::new(Vec::new());
/// Counts of `cuMemHostRegister_v2` calls that registered, that were
/// refused, and of `cuMemHostUnregister` calls that unregistered; the code
/// the next registration returns (0: none injected).
static REGISTER_COUNTS: [std::sync::atomic::AtomicU64; 4] = [
    std::sync::atomic::AtomicU64::new(0),
    std::sync::atomic::AtomicU64::new(0),
    std::sync::atomic::AtomicU64::new(0),
    std::sync::atomic::AtomicU64::new(0),
];

fn registered() -> MutexGuard<'static, Vec<(u64, usize)>> {
    REGISTERED.lock().unwrap_or_else(|p| p.into_inner())
}

/// `cuMemHostRegister_v2`: records the range; a range overlapping one
/// registered already is CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED (712),
/// as the driver answers; a null pointer or zero size is 1. A code set by
/// `stub_fail_next_register` is returned once instead.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostRegister_v2(p: *mut c_void, bytes: usize, _flags: u32) -> i32 {
    entry!();
    use std::sync::atomic::Ordering::Relaxed;
    let injected = REGISTER_COUNTS[3].swap(0, Relaxed);
    if injected != 0 {
        REGISTER_COUNTS[1].fetch_add(1, Relaxed);
        return injected as i32;
    }
    if p.is_null() || bytes == 0 {
        REGISTER_COUNTS[1].fetch_add(1, Relaxed);
        return CUDA_ERROR_INVALID_VALUE;
    }
    let start = p as usize as u64;
    let mut list = registered();
    if list
        .iter()
        .any(|&(a, n)| start < a + n as u64 && a < start + bytes as u64)
    {
        REGISTER_COUNTS[1].fetch_add(1, Relaxed);
        return 712;
    }
    list.push((start, bytes));
    REGISTER_COUNTS[0].fetch_add(1, Relaxed);
    CUDA_SUCCESS
}

/// `cuMemHostUnregister`: forgets the range registered at `p`; 713
/// (CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED) when there is none.
#[no_mangle]
pub unsafe extern "C" fn cuMemHostUnregister(p: *mut c_void) -> i32 {
    entry!();
    let mut list = registered();
    let Some(i) = list.iter().position(|&(a, _)| a == p as usize as u64) else {
        return 713;
    };
    list.swap_remove(i);
    REGISTER_COUNTS[2].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    CUDA_SUCCESS
}

/// Makes the next `cuMemHostRegister_v2` return `code` (0 cancels).
#[no_mangle]
pub extern "C" fn stub_fail_next_register(code: i32) {
    REGISTER_COUNTS[3].store(code as u32 as u64, std::sync::atomic::Ordering::Relaxed);
}

/// Writes the registrations made, refused, undone, and those live now, to
/// `out[0..4]`.
///
/// # Safety
///
/// `out` points at 4 writable `u64`s.
#[no_mangle]
pub unsafe extern "C" fn stub_register_counts(out: *mut u64) {
    use std::sync::atomic::Ordering::Relaxed;
    let live = registered().len() as u64;
    // SAFETY: the function's contract.
    unsafe {
        out.write(REGISTER_COUNTS[0].load(Relaxed));
        out.add(1).write(REGISTER_COUNTS[1].load(Relaxed));
        out.add(2).write(REGISTER_COUNTS[2].load(Relaxed));
        out.add(3).write(live);
    }
}

/// `cuMemAllocHost_v2`: as [`cuMemHostAlloc`] without flags.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocHost_v2(pp: *mut *mut c_void, bytes: usize) -> i32 {
    entry!();
    // SAFETY: the caller's contract, passed on.
    unsafe { cuMemHostAlloc(pp, bytes, 0) }
}

/// `cuMemFreeHost`: hands pinned memory back. Potentially unsafe during
/// capture (900, nothing freed); refused on the host-function thread.
#[no_mangle]
pub unsafe extern "C" fn cuMemFreeHost(p: *mut c_void) -> i32 {
    entry!();
    let mut s = state();
    if let Err(rc) = s.unsafe_call() {
        return rc;
    }
    let address = p as usize as u64;
    let Some(i) = s.pinned.iter().position(|&(a, _)| a == address) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    let (_, bytes) = s.pinned.swap_remove(i);
    let layout = std::alloc::Layout::from_size_align(bytes, PAGE).expect("layout");
    // SAFETY: allocated in cuMemHostAlloc with this layout, freed once.
    unsafe { std::alloc::dealloc(p.cast(), layout) };
    s.frees.push(address);
    CUDA_SUCCESS
}

/// Writes `n` elements of `width` bytes (`value`, little-endian) at `dst`
/// when it is real host memory.
fn fill(s: &State, dst: u64, value: u32, width: usize, n: usize) {
    let bytes = n * width;
    if !s.managed_or_pinned(dst, bytes) {
        return;
    }
    let pattern = value.to_le_bytes();
    for i in 0..n {
        // SAFETY: the range lies inside a live managed or pinned allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(
                pattern.as_ptr(),
                (dst as usize as *mut u8).add(i * width),
                width,
            )
        };
    }
}

/// Copies `n` bytes when both sides are real host memory (managed or
/// pinned, or host memory of the caller for `host_src`/`host_dst`).
fn copy(s: &State, dst: u64, dst_host: bool, src: u64, src_host: bool, n: usize) {
    let dst_ok = dst_host || s.managed_or_pinned(dst, n);
    let src_ok = src_host || s.managed_or_pinned(src, n);
    if dst_ok && src_ok && n > 0 {
        // SAFETY: both ranges are host memory the caller or the stand-in
        // owns, `n` bytes long.
        unsafe { std::ptr::copy(src as usize as *const u8, dst as usize as *mut u8, n) };
    }
}

/// A synchronous copy or memset: potentially unsafe during capture (900),
/// needs a current context (201), runs on the legacy stream (906 next to
/// a blocking capturing stream).
fn sync_op() -> Result<MutexGuard<'static, State>, i32> {
    let mut s = state();
    s.unsafe_call()?;
    s.enqueue(0)?;
    Ok(s)
}

/// An asynchronous copy or memset on `stream`: `Some(state)` when it is to
/// run now, `None` when it became a node of a capture.
fn async_op(stream: *mut c_void) -> Result<Option<MutexGuard<'static, State>>, i32> {
    let mut s = state();
    if s.enqueue(stream as usize)? {
        return Ok(None);
    }
    Ok(Some(s))
}

/// `cuMemsetD8_v2`: synchronous (see `sync_op`); writes managed or pinned
/// memory for real, accepts any other address.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8_v2(dst: u64, value: u8, n: usize) -> i32 {
    entry!();
    match sync_op() {
        Ok(s) => fill(&s, dst, u32::from(value), 1, n),
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemsetD16_v2`: as [`cuMemsetD8_v2`].
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD16_v2(dst: u64, value: u16, n: usize) -> i32 {
    entry!();
    match sync_op() {
        Ok(s) => fill(&s, dst, u32::from(value), 2, n),
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemsetD32_v2`: as [`cuMemsetD8_v2`].
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32_v2(dst: u64, value: u32, n: usize) -> i32 {
    entry!();
    match sync_op() {
        Ok(s) => fill(&s, dst, value, 4, n),
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemsetD8Async`: stream work (see `State::enqueue`).
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8Async(
    dst: u64,
    value: u8,
    n: usize,
    stream: *mut c_void,
) -> i32 {
    entry!();
    match async_op(stream) {
        Ok(Some(s)) => fill(&s, dst, u32::from(value), 1, n),
        Ok(None) => {}
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemsetD16Async`: stream work.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD16Async(
    dst: u64,
    value: u16,
    n: usize,
    stream: *mut c_void,
) -> i32 {
    entry!();
    match async_op(stream) {
        Ok(Some(s)) => fill(&s, dst, u32::from(value), 2, n),
        Ok(None) => {}
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemsetD32Async`: stream work.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD32Async(
    dst: u64,
    value: u32,
    n: usize,
    stream: *mut c_void,
) -> i32 {
    entry!();
    match async_op(stream) {
        Ok(Some(s)) => fill(&s, dst, value, 4, n),
        Ok(None) => {}
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemcpyHtoD_v2`: synchronous (see `sync_op`).
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoD_v2(dst: u64, src: *const c_void, n: usize) -> i32 {
    entry!();
    match sync_op() {
        Ok(s) => copy(&s, dst, false, src as usize as u64, true, n),
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemcpyDtoH_v2`: synchronous.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoH_v2(dst: *mut c_void, src: u64, n: usize) -> i32 {
    entry!();
    match sync_op() {
        Ok(s) => copy(&s, dst as usize as u64, true, src, false, n),
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemcpyDtoD_v2`: synchronous.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoD_v2(dst: u64, src: u64, n: usize) -> i32 {
    entry!();
    match sync_op() {
        Ok(s) => copy(&s, dst, false, src, false, n),
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemcpy` (unified addressing): synchronous.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpy(dst: u64, src: u64, n: usize) -> i32 {
    entry!();
    match sync_op() {
        Ok(s) => copy(&s, dst, false, src, false, n),
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemcpyHtoDAsync_v2`: stream work.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyHtoDAsync_v2(
    dst: u64,
    src: *const c_void,
    n: usize,
    stream: *mut c_void,
) -> i32 {
    entry!();
    match async_op(stream) {
        Ok(Some(s)) => copy(&s, dst, false, src as usize as u64, true, n),
        Ok(None) => {}
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemcpyDtoHAsync_v2`: stream work.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoHAsync_v2(
    dst: *mut c_void,
    src: u64,
    n: usize,
    stream: *mut c_void,
) -> i32 {
    entry!();
    match async_op(stream) {
        Ok(Some(s)) => copy(&s, dst as usize as u64, true, src, false, n),
        Ok(None) => {}
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemcpyDtoDAsync_v2`: stream work.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyDtoDAsync_v2(
    dst: u64,
    src: u64,
    n: usize,
    stream: *mut c_void,
) -> i32 {
    entry!();
    match async_op(stream) {
        Ok(Some(s)) => copy(&s, dst, false, src, false, n),
        Ok(None) => {}
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemcpyAsync`: stream work.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyAsync(dst: u64, src: u64, n: usize, stream: *mut c_void) -> i32 {
    entry!();
    match async_op(stream) {
        Ok(Some(s)) => copy(&s, dst, false, src, false, n),
        Ok(None) => {}
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuMemcpyPeerAsync`: stream work, as `cuMemcpyAsync` (the contexts are
/// not checked).
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyPeerAsync(
    dst: u64,
    _dst_ctx: *mut c_void,
    src: u64,
    _src_ctx: *mut c_void,
    n: usize,
    stream: *mut c_void,
) -> i32 {
    entry!();
    match async_op(stream) {
        Ok(Some(s)) => copy(&s, dst, false, src, false, n),
        Ok(None) => {}
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuFuncGetParamInfo`: the layout set by `stub_set_params`.
#[cfg(not(feature = "omit-param-info"))]
#[no_mangle]
pub unsafe extern "C" fn cuFuncGetParamInfo(
    _func: *mut c_void,
    index: usize,
    offset: *mut usize,
    size: *mut usize,
) -> i32 {
    entry!();
    let s = state();
    let Some(&(o, z)) = s.params.get(index) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    if !offset.is_null() {
        // SAFETY: a non-null out-pointer from the caller.
        unsafe { offset.write(o) };
    }
    if !size.is_null() {
        // SAFETY: a non-null out-pointer from the caller.
        unsafe { size.write(z) };
    }
    CUDA_SUCCESS
}

/// `cuLaunchKernel`: dereferences `kernelParams` as the driver does and
/// records grid, block, shared bytes and every parameter's bytes (at
/// capture time too: the driver copies the parameters when the node is
/// made). Refused with CUDA_ERROR_INVALID_CONTEXT (201) when the
/// function's context is not the thread's current one (CUDA: a function
/// handle belongs to the module's context; the driver launches in the
/// current context, "CUDA_ERROR_INVALID_CONTEXT" is among its codes) or
/// there is none; then stream work (see `State::enqueue`).
/// `STUB_THRASH=BYTES`: each `cuLaunchKernel` first reads one byte of
/// every cache line of a BYTES-long table, as a real driver's launch evicts
/// its caller's data: under a cache simulator (`valgrind --tool=callgrind
/// --cache-sim=yes`), the caller's misses then count the cache lines its
/// own launch path touches.
fn thrash_caches() {
    static TABLE: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let t = TABLE.get_or_init(|| {
        let n = std::env::var("STUB_THRASH")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0usize);
        vec![1u8; n]
    });
    let mut sum = 0u8;
    for i in (0..t.len()).step_by(64) {
        sum = sum.wrapping_add(t[i]);
    }
    std::hint::black_box(sum);
}

#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernel(
    f: *mut c_void,
    grid_x: u32,
    grid_y: u32,
    grid_z: u32,
    block_x: u32,
    block_y: u32,
    block_z: u32,
    shared: u32,
    stream: *mut c_void,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> i32 {
    entry!();
    thrash_caches();
    if !extra.is_null() {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    let mut s = state();
    let cur = current();
    let owner = s
        .functions
        .iter()
        .find(|&&(h, _)| h == f as usize)
        .map(|&(_, c)| c);
    if cur == 0 || owner.is_some_and(|c| c != cur) {
        return s.refuse(reason::WRONG_CONTEXT);
    }
    if shared as i64 > i64::from(s.dynamic_shared) {
        s.shared_refusals += 1;
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut record = Vec::new();
    for v in [grid_x, grid_y, grid_z, block_x, block_y, block_z, shared] {
        record.extend_from_slice(&v.to_le_bytes());
    }
    if !s.params.is_empty() && kernel_params.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (i, &(_, size)) in s.params.iter().enumerate() {
        // SAFETY: like the driver, the stand-in trusts that kernelParams has
        // one entry per parameter of the kernel.
        let value = unsafe { *kernel_params.add(i) } as *const u8;
        if value.is_null() {
            return CUDA_ERROR_INVALID_VALUE;
        }
        // SAFETY: like the driver, it trusts that each entry points to at
        // least `size` readable bytes.
        let bytes = unsafe { std::slice::from_raw_parts(value, size) };
        record.extend_from_slice(bytes);
    }
    if let Err(rc) = s.enqueue(stream as usize) {
        return rc;
    }
    s.last_launch = record;
    s.launches += 1;
    drop(s);
    // A green context has work again: its next destroy needs a wait first.
    green_synced(cur, false);
    CUDA_SUCCESS
}

/// `CUlaunchConfig`, as far as the stand-in reads it.
#[derive(Debug)]
#[repr(C)]
pub struct LaunchConfig {
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    stream: *mut c_void,
    attrs: *mut c_void,
    num_attrs: u32,
}

/// `cuLaunchKernelEx`: as [`cuLaunchKernel`] with the configuration's
/// dimensions and stream (attributes are ignored).
#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernelEx(
    config: *const LaunchConfig,
    f: *mut c_void,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> i32 {
    entry!();
    if config.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a valid configuration from the caller.
    let c = unsafe { &*config };
    let ids: Vec<i32> = (0..c.num_attrs as usize)
        // SAFETY: `num_attrs` attributes of 72 bytes each (an i32 ID, 4
        // bytes of padding, a 64-byte value), the caller's contract.
        .map(|i| unsafe { *c.attrs.cast::<u8>().add(72 * i).cast::<i32>() })
        .collect();
    state().last_ex_attrs = ids;
    // SAFETY: the caller's contract, passed on.
    unsafe {
        cuLaunchKernel(
            f,
            c.grid[0],
            c.grid[1],
            c.grid[2],
            c.block[0],
            c.block[1],
            c.block[2],
            c.shared,
            c.stream,
            kernel_params,
            extra,
        )
    }
}

/// `cuDeviceGet`: ordinals below the device count.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(device: *mut i32, ordinal: i32) -> i32 {
    entry!();
    if device.is_null() || ordinal < 0 || ordinal >= state().device_count {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a valid out-pointer.
    unsafe { device.write(ordinal) };
    CUDA_SUCCESS
}

/// `cuDeviceGetAttribute`: H100-like limits for the attributes the launch
/// path reads, 0 for the rest.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetAttribute(
    value: *mut i32,
    attribute: i32,
    _device: i32,
) -> i32 {
    entry!();
    let overridden = state()
        .attribute_overrides
        .iter()
        .find(|&&(a, _)| a == attribute)
        .map(|&(_, v)| v);
    let v = match attribute {
        _ if overridden.is_some() => overridden.unwrap_or(0),
        1 => 1024,        // MAX_THREADS_PER_BLOCK
        2 | 3 => 1024,    // MAX_BLOCK_DIM_X, _Y
        4 => 64,          // MAX_BLOCK_DIM_Z
        5 => i32::MAX,    // MAX_GRID_DIM_X
        6 | 7 => 65535,   // MAX_GRID_DIM_Y, _Z
        8 => 48 * 1024,   // MAX_SHARED_MEMORY_PER_BLOCK
        10 => 32,         // WARP_SIZE
        12 => 65536,      // MAX_REGISTERS_PER_BLOCK
        16 => 132,        // MULTIPROCESSOR_COUNT
        39 => 2048,       // MAX_THREADS_PER_MULTIPROCESSOR
        81 => 228 * 1024, // MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
        82 => 65536,      // MAX_REGISTERS_PER_MULTIPROCESSOR
        75 => 9,          // COMPUTE_CAPABILITY_MAJOR
        76 => 0,          // COMPUTE_CAPABILITY_MINOR
        83 => 1,          // MANAGED_MEMORY
        89 => 1,          // CONCURRENT_MANAGED_ACCESS
        95 => 1,          // COOPERATIVE_LAUNCH
        97 => 227 * 1024, // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        106 => 32,        // MAX_BLOCKS_PER_MULTIPROCESSOR
        108 => 80 << 20,  // MAX_PERSISTING_L2_CACHE_SIZE
        109 => 128 << 20, // MAX_ACCESS_POLICY_WINDOW_SIZE
        120 => 1,         // CLUSTER_LAUNCH
        _ => 0,
    };
    if value.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a valid out-pointer.
    unsafe { value.write(v) };
    CUDA_SUCCESS
}

/// A fake context handle.
const CONTEXT: usize = 0xC0_0000;
/// Fake module and function handles (a function per module and name).
const MODULE: usize = 0x30_0000;
const FUNCTION: usize = 0xF0_0000;

/// `cuDevicePrimaryCtxRetain`: a fake context per device, counted.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(ctx: *mut *mut c_void, device: i32) -> i32 {
    entry!();
    let Some(slot) = usize::try_from(device).ok().filter(|&d| d < 4) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    state().retains[slot] += 1;
    // SAFETY: a valid out-pointer.
    unsafe { ctx.write((CONTEXT + slot * 0x1000) as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuDevicePrimaryCtxRelease_v2`: uncounts a retain, after the delay a
/// test set (`stub_set_release_delay_us`).
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(device: i32) -> i32 {
    entry!();
    let Some(slot) = usize::try_from(device).ok().filter(|&d| d < 4) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    let delay = state().release_delay_us;
    if delay > 0 {
        std::thread::sleep(std::time::Duration::from_micros(delay));
    }
    state().retains[slot] -= 1;
    CUDA_SUCCESS
}

/// `cuDevicePrimaryCtxReset_v2`: records a reset while an allocation is
/// live (it would destroy memory another user of the context holds).
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxReset_v2(device: i32) -> i32 {
    entry!();
    if !(0..4).contains(&device) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut s = state();
    let live = s
        .allocations
        .iter()
        .filter(|(a, _)| !s.frees.contains(a))
        .count();
    if live > 0 {
        s.resets_while_retained += 1;
    }
    CUDA_SUCCESS
}

/// `cuCtxGetCurrent`: the calling thread's current context (thread-local,
/// as in the driver).
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCurrent(ctx: *mut *mut c_void) -> i32 {
    entry!();
    // SAFETY: a valid out-pointer.
    unsafe { ctx.write(current() as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuCtxSetCurrent`: sets the calling thread's current context only.
#[no_mangle]
pub unsafe extern "C" fn cuCtxSetCurrent(ctx: *mut c_void) -> i32 {
    entry!();
    CURRENT.with(|c| c.set(ctx as usize));
    CUDA_SUCCESS
}

/// `cuCtxSynchronize`: waits until every host function queued on a stream
/// of the current context has run. Refused:
/// - without a current context (201);
/// - as a potentially unsafe call under the thread's capture mode (900,
///   see `State::unsafe_call`);
/// - while any capture of the current context is active, from any thread
///   (900, and those captures are invalidated). CUDA programming guide,
///   "Prohibited and Unhandled Operations": "It is invalid to synchronize
///   or query the execution status of a stream which is being captured or
///   a captured event ... It is also invalid to synchronize a broader
///   handle which encompasses an active stream capture, such as a device
///   or context handle".
///
/// Then a failure injected with `stub_fail_syncs` is returned without
/// waiting (the queued work may still run).
#[no_mangle]
pub unsafe extern "C" fn cuCtxSynchronize() -> i32 {
    entry!();
    let cur = current();
    let mut s = state();
    if cur == 0 {
        return s.refuse(reason::WRONG_CONTEXT);
    }
    if let Err(rc) = s.unsafe_call() {
        return rc;
    }
    let mut hit = false;
    for c in s.captures.iter_mut().filter(|c| c.ctx == cur) {
        c.invalidated = true;
        hit = true;
    }
    if hit {
        return s.refuse(reason::CAPTURE_UNSUPPORTED);
    }
    if let Some(rc) = s.injected() {
        return rc;
    }
    CTX_SYNC_WAITERS.fetch_add(1, Ordering::SeqCst);
    let waited = wait_until(s, |s| s.context_idle(cur));
    CTX_SYNC_WAITERS.fetch_sub(1, Ordering::SeqCst);
    match waited {
        Ok(_) => {
            green_synced(cur, true);
            CUDA_SUCCESS
        }
        Err(rc) => rc,
    }
}

/// Threads inside `cuCtxSynchronize`, waiting for their context's work.
static CTX_SYNC_WAITERS: AtomicU64 = AtomicU64::new(0);

/// How many threads are inside `cuCtxSynchronize` now, waiting for their
/// context's work: lets a test go on once a synchronize is really waiting
/// (on a held host function, say) instead of sleeping and hoping.
#[no_mangle]
pub extern "C" fn stub_ctx_sync_waiters() -> u64 {
    CTX_SYNC_WAITERS.load(Ordering::SeqCst)
}

/// Refuses a wait on or a query of `stream` while it is a member of a
/// capture: 900, and the capture is invalidated (CUDA: "It is invalid to
/// synchronize or query the execution status of a stream which is being
/// captured"; the sync of the legacy stream next to a blocking capturing
/// stream is 906, see `State::legacy_use`).
fn refuse_capturing_stream(s: &mut State, stream: usize) -> Result<(), i32> {
    if is_legacy(stream) {
        return s.legacy_use();
    }
    if let Some(i) = s.capture_of(stream) {
        s.captures[i].invalidated = true;
        return Err(s.refuse(reason::CAPTURE_UNSUPPORTED));
    }
    Ok(())
}

/// Calls so far of `cuEventRecord`, `cuEventSynchronize` and
/// `cuStreamSynchronize` (see [`stub_wait_counts`]).
static WAIT_COUNTS: [std::sync::atomic::AtomicU64; 3] = [
    std::sync::atomic::AtomicU64::new(0),
    std::sync::atomic::AtomicU64::new(0),
    std::sync::atomic::AtomicU64::new(0),
];

/// Writes the calls so far of `cuEventRecord`, `cuEventSynchronize` and
/// `cuStreamSynchronize` (refused ones included) to `out[0..3]`.
///
/// # Safety
///
/// `out` points at 3 writable `u64`s.
#[no_mangle]
pub unsafe extern "C" fn stub_wait_counts(out: *mut u64) {
    for (i, c) in WAIT_COUNTS.iter().enumerate() {
        // SAFETY: the function's contract.
        unsafe {
            out.add(i)
                .write(c.load(std::sync::atomic::Ordering::Relaxed))
        };
    }
}

/// `cuStreamSynchronize`: waits until the host functions queued on the
/// stream have run (on the legacy stream: those of every blocking stream of
/// the current context too). Refused on a capturing stream (900, see
/// `refuse_capturing_stream`), or with a failure injected by
/// `stub_fail_next_sync`/`stub_fail_syncs`, returned without waiting: the
/// work may still be running, as after a real fault.
#[no_mangle]
pub unsafe extern "C" fn cuStreamSynchronize(stream: *mut c_void) -> i32 {
    entry!();
    WAIT_COUNTS[2].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stream = stream as usize;
    let mut s = state();
    if let Err(rc) = refuse_capturing_stream(&mut s, stream) {
        return rc;
    }
    if let Some(rc) = s.injected() {
        return rc;
    }
    let cur = current();
    let waited = if is_legacy(stream) {
        wait_until(s, |s| {
            s.streams
                .iter()
                .filter(|r| r.ctx == cur && (r.blocking || r.handle == stream))
                .all(|r| r.run >= r.queued)
        })
    } else {
        wait_until(s, |s| s.stream_idle(stream))
    };
    match waited {
        Ok(_) => CUDA_SUCCESS,
        Err(rc) => rc,
    }
}

/// `cuStreamQuery`: CUDA_ERROR_NOT_READY (600) while a host function queued
/// on the stream has not run, else success. Refused on a capturing stream
/// (900, see `refuse_capturing_stream`).
#[no_mangle]
pub unsafe extern "C" fn cuStreamQuery(stream: *mut c_void) -> i32 {
    entry!();
    let stream = stream as usize;
    let mut s = state();
    if let Err(rc) = refuse_capturing_stream(&mut s, stream) {
        return rc;
    }
    if s.fail_queries > 0 {
        s.fail_queries -= 1;
        return s.fail_query_code;
    }
    if s.stream_idle(stream) {
        CUDA_SUCCESS
    } else {
        CUDA_ERROR_NOT_READY
    }
}

/// Makes the next `n` `cuStreamQuery` calls return `code` (a device fault
/// such as 700 that the query reports, as the driver does once a kernel
/// faulted).
#[no_mangle]
pub extern "C" fn stub_fail_queries(n: u64, code: i32) {
    let mut s = state();
    s.fail_queries = n;
    s.fail_query_code = code;
}

/// Makes the next `cuStreamSynchronize`, `cuCtxSynchronize` or
/// `cuEventSynchronize` that would wait return `code` (a device fault such
/// as 700 poisons the context that meets it) without waiting for the host
/// functions queued before it; 0 cancels. A call refused for a capture
/// reason refuses first and leaves the injection pending.
#[no_mangle]
pub extern "C" fn stub_fail_next_sync(code: i32) {
    stub_fail_syncs(u64::from(code != 0), code);
}

/// As [`stub_fail_next_sync`] for the next `n` synchronizes.
#[no_mangle]
pub extern "C" fn stub_fail_syncs(n: u64, code: i32) {
    let mut s = state();
    s.fail_syncs = n;
    s.fail_code = code;
}

/// Makes the host-function thread wait (`true`) before running the next
/// host function, or go on (`false`): "work still running" for a test.
/// A synchronize that meets a held host function waits for it (30 s at
/// most, then CUDA_ERROR_UNKNOWN, counted as a timeout).
#[no_mangle]
pub extern "C" fn stub_hold_host_fns(hold: bool) {
    state().hold_host_fns = hold;
    CHANGED.notify_all();
}

/// Host functions queued and not yet run (held, or still running).
#[no_mangle]
pub extern "C" fn stub_host_fns_pending() -> u64 {
    let s = state();
    s.streams.iter().map(|r| r.queued - r.run).sum()
}

/// Host functions the callback thread has run.
#[no_mangle]
pub extern "C" fn stub_host_fns_run() -> u64 {
    state().host_fns_run
}

/// Operations recorded into a capture from a thread other than the one
/// that began it: "another thread's work entered a capture".
#[no_mangle]
pub extern "C" fn stub_foreign_captured() -> u64 {
    state().foreign_captured
}

/// Copies the refusal counts by reason into `out` (capacity `cap`):
/// 0 wrong context (201), 1 not permitted on the callback thread (800),
/// 2 capture unsupported (900), 3 capture invalidated (901), 4 wrong
/// thread (908), 5 illegal state (401), 6 unmatched (903), 7 implicit
/// (906), 8 merge (902), 9 sync timeout (999), 10 injected failures.
/// Returns the number of reasons.
#[no_mangle]
pub unsafe extern "C" fn stub_refusals(out: *mut u64, cap: usize) -> usize {
    let s = state();
    for (i, n) in s.refusals.iter().take(cap).enumerate() {
        // SAFETY: the test passes `cap` writable u64s.
        unsafe { out.add(i).write(*n) };
    }
    reason::COUNT
}

/// Copies (nodes, nodes queued from a foreign thread, invalidated 0/1,
/// member streams) of the last capture that ended into `out` (4 u64s).
#[no_mangle]
pub unsafe extern "C" fn stub_last_capture(out: *mut u64) {
    let s = state();
    for (i, v) in s.last_capture.iter().enumerate() {
        // SAFETY: the test passes 4 writable u64s.
        unsafe { out.add(i).write(*v) };
    }
}

/// Nodes recorded so far by the active capture whose origin is `stream`
/// (`u64::MAX` if there is none).
#[no_mangle]
pub extern "C" fn stub_capture_nodes(stream: usize) -> u64 {
    let s = state();
    s.captures
        .iter()
        .find(|c| c.origin == stream)
        .map_or(u64::MAX, |c| c.nodes)
}

/// Makes a stream in the current context (201 without one).
fn new_stream(stream: *mut *mut c_void, flags: u32) -> i32 {
    let cur = current();
    let mut s = state();
    if cur == 0 {
        return s.refuse(reason::WRONG_CONTEXT);
    }
    s.next_stream += 0x100;
    let handle = s.next_stream;
    s.streams.push(StreamRec {
        handle,
        ctx: cur,
        blocking: flags & 1 == 0, // CU_STREAM_NON_BLOCKING
        queued: 0,
        run: 0,
    });
    // SAFETY: a valid out-pointer (the callers' contract).
    unsafe { stream.write(handle as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuStreamCreateWithPriority`: a fake stream of the current context.
#[no_mangle]
pub unsafe extern "C" fn cuStreamCreateWithPriority(
    stream: *mut *mut c_void,
    flags: u32,
    _priority: i32,
) -> i32 {
    entry!();
    new_stream(stream, flags)
}

/// `cuStreamCreate`: as [`cuStreamCreateWithPriority`].
#[no_mangle]
pub unsafe extern "C" fn cuStreamCreate(stream: *mut *mut c_void, flags: u32) -> i32 {
    entry!();
    new_stream(stream, flags)
}

/// `cuStreamGetPriority`: 0.
#[no_mangle]
pub unsafe extern "C" fn cuStreamGetPriority(_stream: *mut c_void, priority: *mut i32) -> i32 {
    entry!();
    // SAFETY: a valid out-pointer.
    unsafe { priority.write(0) };
    CUDA_SUCCESS
}

/// `cuStreamDestroy_v2`: returns at once; host functions queued on the
/// stream still run (CUDA: "in case the device is still doing work in the
/// stream ... the function will return immediately and the resources ...
/// released automatically once the device has completed all work").
#[no_mangle]
pub unsafe extern "C" fn cuStreamDestroy_v2(stream: *mut c_void) -> i32 {
    entry!();
    stream_destroyed(stream as usize);
    CUDA_SUCCESS
}

/// Makes a module (one function) in the current context: refused without
/// one (201) and as a potentially unsafe call during capture (900).
fn new_module(module: *mut *mut c_void) -> i32 {
    let cur = current();
    let mut s = state();
    if cur == 0 {
        return s.refuse(reason::WRONG_CONTEXT);
    }
    if let Err(rc) = s.unsafe_call() {
        return rc;
    }
    let handle = MODULE + 0x10 * s.modules.len();
    s.modules.push((handle, cur));
    // SAFETY: a valid out-pointer (the callers' contract).
    unsafe { module.write(handle as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuModuleLoadDataEx`: any image is a module with one function.
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    module: *mut *mut c_void,
    _image: *const c_void,
    _num_options: u32,
    _options: *mut i32,
    _values: *mut *mut c_void,
) -> i32 {
    entry!();
    new_module(module)
}

/// `cuModuleLoadData`: as [`cuModuleLoadDataEx`].
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadData(module: *mut *mut c_void, _image: *const c_void) -> i32 {
    entry!();
    new_module(module)
}

/// `cuModuleUnload`: potentially unsafe during capture (900).
#[no_mangle]
pub unsafe extern "C" fn cuModuleUnload(_module: *mut c_void) -> i32 {
    entry!();
    match state().unsafe_call() {
        Ok(()) => CUDA_SUCCESS,
        Err(rc) => rc,
    }
}

/// `cuModuleGetFunction`: every name resolves to a function of the
/// module, of its own handle per name, which belongs to the module's
/// context.
#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunction(
    f: *mut *mut c_void,
    module: *mut c_void,
    name: *const i8,
) -> i32 {
    entry!();
    if name.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the caller passes a NUL-terminated name.
    let name = unsafe { std::ffi::CStr::from_ptr(name) }
        .to_bytes()
        .to_vec();
    let mut s = state();
    let module = module as usize;
    let ctx = s
        .modules
        .iter()
        .find(|&&(h, _)| h == module)
        .map_or_else(current, |&(_, c)| c);
    let index = match s
        .function_names
        .iter()
        .position(|(m, n)| *m == module && *n == name)
    {
        Some(i) => i,
        None => {
            s.function_names.push((module, name));
            s.function_names.len() - 1
        }
    };
    let handle = FUNCTION + 0x10 * index;
    if !s.functions.iter().any(|&(h, _)| h == handle) {
        s.functions.push((handle, ctx));
    }
    // SAFETY: a valid out-pointer.
    unsafe { f.write(handle as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuFuncGetAttribute`: 1024 threads, no static shared memory, 48 KiB
/// dynamic, 32 registers.
#[no_mangle]
pub unsafe extern "C" fn cuFuncGetAttribute(
    value: *mut i32,
    attribute: i32,
    _f: *mut c_void,
) -> i32 {
    entry!();
    let v = match attribute {
        0 => 1024,                   // MAX_THREADS_PER_BLOCK
        4 => 32,                     // NUM_REGS
        5 => 90,                     // PTX_VERSION
        6 => 90,                     // BINARY_VERSION
        8 => state().dynamic_shared, // MAX_DYNAMIC_SHARED_SIZE_BYTES
        _ => 0,
    };
    // SAFETY: a valid out-pointer.
    unsafe { value.write(v) };
    CUDA_SUCCESS
}

/// `cuFuncSetAttribute`: the dynamic shared-memory attribute is kept (and
/// checked by `cuLaunchKernel`); the call then pauses for a pseudo-random
/// 0 to 255 µs, as a busy driver might, which widens any race between a
/// caller's set and its bookkeeping.
#[no_mangle]
pub unsafe extern "C" fn cuFuncSetAttribute(_f: *mut c_void, attribute: i32, value: i32) -> i32 {
    entry!();
    let pause = {
        let mut s = state();
        if attribute == 8 {
            s.dynamic_shared = value;
        }
        s.jitter ^= s.jitter << 13;
        s.jitter ^= s.jitter >> 7;
        s.jitter ^= s.jitter << 17;
        s.jitter & 0xff
    };
    std::thread::sleep(std::time::Duration::from_micros(pause));
    CUDA_SUCCESS
}

/// Sets the number of devices (1 to 4).
#[no_mangle]
pub extern "C" fn stub_set_device_count(n: i32) {
    state().device_count = n.clamp(1, 4);
}

/// Overrides a device attribute for every device.
#[no_mangle]
pub extern "C" fn stub_set_attribute(attribute: i32, value: i32) {
    let mut s = state();
    s.attribute_overrides.retain(|&(a, _)| a != attribute);
    s.attribute_overrides.push((attribute, value));
}

/// Makes cuDevicePrimaryCtxRelease_v2 sleep `us` microseconds.
#[no_mangle]
pub extern "C" fn stub_set_release_delay_us(us: u64) {
    state().release_delay_us = us;
}

/// Resets that met a live allocation.
#[no_mangle]
pub extern "C" fn stub_resets_while_retained() -> u64 {
    state().resets_while_retained
}

/// Launches refused for asking more dynamic shared memory than the
/// function's attribute allowed.
#[no_mangle]
pub extern "C" fn stub_shared_refusals() -> u64 {
    state().shared_refusals
}

/// Sets the kernel parameter layout: `count` pairs (offset, size).
#[no_mangle]
pub unsafe extern "C" fn stub_set_params(pairs: *const usize, count: usize) {
    let mut params = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: the test passes 2 * count readable usizes.
        let (o, z) = unsafe { (*pairs.add(2 * i), *pairs.add(2 * i + 1)) };
        params.push((o, z));
    }
    state().params = params;
}

/// Copies the last launch record into `out` (capacity `cap`); returns its
/// full length.
#[no_mangle]
pub unsafe extern "C" fn stub_last_launch(out: *mut u8, cap: usize) -> usize {
    let s = state();
    let n = s.last_launch.len().min(cap);
    // SAFETY: the test passes `cap` writable bytes.
    unsafe { std::ptr::copy_nonoverlapping(s.last_launch.as_ptr(), out, n) };
    s.last_launch.len()
}

/// Number of launches recorded.
#[no_mangle]
pub extern "C" fn stub_launch_count() -> u64 {
    state().launches
}

/// Number of live fake allocations (allocated and not freed).
#[no_mangle]
pub extern "C" fn stub_live_allocations() -> usize {
    let s = state();
    s.allocations
        .iter()
        .filter(|(a, _)| !s.frees.contains(a))
        .count()
}

/// Number of calls that reached a generated no-op.
#[no_mangle]
pub extern "C" fn stub_unsupported_calls() -> usize {
    state().unsupported_calls.len()
}

/// `cuDeviceTotalMem_v2`: 80 GiB.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, _dev: i32) -> i32 {
    entry!();
    // SAFETY: a valid out-pointer.
    unsafe { bytes.write(80 << 30) };
    CUDA_SUCCESS
}

/// `cuDeviceGetDefaultMemPool`: a fake pool.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetDefaultMemPool(pool: *mut *mut c_void, _dev: i32) -> i32 {
    entry!();
    // SAFETY: a valid out-pointer.
    unsafe { pool.write(0x70_0000 as *mut c_void) };
    CUDA_SUCCESS
}

/// A stream-ordered allocation on `stream` (see `State::enqueue`): run
/// now, a live allocation; captured, a graph allocation node (an address
/// the graph owns, not live until a launch, not counted).
fn alloc_on_stream(dptr: *mut u64, bytes: usize, stream: *mut c_void) -> i32 {
    if dptr.is_null() || bytes == 0 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut s = state();
    let captured = match s.enqueue(stream as usize) {
        Ok(c) => c,
        Err(rc) => return rc,
    };
    let address = s.next_address;
    s.next_address += (bytes as u64).div_ceil(256) * 256;
    if !captured {
        s.allocations.push((address, bytes));
        s.allocation_ctx.push((address, current()));
    }
    // SAFETY: a valid out-pointer (the callers' contract).
    unsafe { dptr.write(address) };
    CUDA_SUCCESS
}

/// `cuMemAllocAsync`: stream work (201 for a stream of another context
/// than the current one, a node during capture); a fake address.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocAsync(dptr: *mut u64, bytes: usize, stream: *mut c_void) -> i32 {
    entry!();
    alloc_on_stream(dptr, bytes, stream)
}

/// `cuMemAllocFromPoolAsync`: as [`cuMemAllocAsync`].
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocFromPoolAsync(
    dptr: *mut u64,
    bytes: usize,
    _pool: *mut c_void,
    stream: *mut c_void,
) -> i32 {
    entry!();
    alloc_on_stream(dptr, bytes, stream)
}

/// `cuMemFreeAsync`: counted; stream work (see `State::enqueue`): refused
/// calls free nothing; on a capturing stream it is counted as captured (a
/// graph free node) and frees nothing now.
#[no_mangle]
pub unsafe extern "C" fn cuMemFreeAsync(dptr: u64, stream: *mut c_void) -> i32 {
    entry!();
    {
        // An imported pool pointer is given back by its free.
        let mut i = ipc();
        if let Some(k) = i.pool_pointers.iter().position(|&a| a == dptr) {
            i.pool_pointers.swap_remove(k);
        }
    }
    let mut s = state();
    s.async_frees += 1;
    match s.enqueue(stream as usize) {
        Ok(true) => s.captured_frees += 1,
        Ok(false) => s.frees.push(dptr),
        Err(rc) => return rc,
    }
    CUDA_SUCCESS
}

/// `cuStreamBeginCapture_v2`: begins a capture on `stream`, recording its
/// mode and the calling thread. Refused with CUDA_ERROR_ILLEGAL_STATE (401)
/// on a stream already capturing (as origin or member), and on the legacy
/// stream ("The legacy stream is not supported for stream capture");
/// stream work otherwise (201 for another context's stream).
#[no_mangle]
pub unsafe extern "C" fn cuStreamBeginCapture_v2(stream: *mut c_void, mode: i32) -> i32 {
    entry!();
    let stream = stream as usize;
    let mut s = state();
    if is_legacy(stream) || s.capture_of(stream).is_some() {
        return s.refuse(reason::ILLEGAL_STATE);
    }
    let cur = current();
    if cur == 0 || s.created_stream_ctx(stream).is_some_and(|c| c != cur) {
        return s.refuse(reason::WRONG_CONTEXT);
    }
    let id = s.next_capture;
    s.next_capture += 1;
    s.captures.push(Capture {
        id,
        origin: stream,
        mode,
        thread: thread_id(),
        invalidated: false,
        members: vec![stream],
        ctx: cur,
        nodes: 0,
        foreign: 0,
    });
    CUDA_SUCCESS
}

/// `cuStreamEndCapture`: ends the capture whose origin is `stream`, and
/// only that one; its member streams stop capturing. CUDA: "Capture must
/// have been initiated on stream"; "If the mode argument to
/// cuStreamBeginCapture was not CU_STREAM_CAPTURE_MODE_RELAXED, this call
/// must be from the same thread" (else 908, the capture goes on); "If
/// capture was invalidated ... then a NULL graph will be returned" (901).
/// A stream that is not capturing: 401; a member that is not the origin:
/// 903 (CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "The capture was not
/// initiated in this stream").
#[no_mangle]
pub unsafe extern "C" fn cuStreamEndCapture(stream: *mut c_void, graph: *mut *mut c_void) -> i32 {
    entry!();
    if graph.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let stream = stream as usize;
    let mut s = state();
    let Some(i) = s.captures.iter().position(|c| c.origin == stream) else {
        let why = if s.capture_of(stream).is_some() {
            reason::UNMATCHED
        } else {
            reason::ILLEGAL_STATE
        };
        return s.refuse(why);
    };
    if s.captures[i].mode != MODE_RELAXED && s.captures[i].thread != thread_id() {
        return s.refuse(reason::WRONG_THREAD);
    }
    let c = s.captures.swap_remove(i);
    s.last_capture = [
        c.nodes,
        c.foreign,
        u64::from(c.invalidated),
        c.members.len() as u64,
    ];
    // Events recorded in it no longer belong to an active capture.
    for e in s.events.iter_mut().filter(|e| e.capture == Some(c.id)) {
        e.capture = None;
        e.after = None;
    }
    if c.invalidated {
        // SAFETY: a valid out-pointer.
        unsafe { graph.write(std::ptr::null_mut()) };
        return s.refuse(reason::CAPTURE_INVALIDATED);
    }
    // SAFETY: a valid out-pointer.
    unsafe { graph.write((0x60_0000 + 0x10 * (c.id as usize % 0x1000)) as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuStreamIsCapturing`: NONE (0), ACTIVE (1) or INVALIDATED (2) for the
/// capture the stream is a member of. On the legacy stream while a
/// blocking stream of the context captures: 906, status unwritten, no
/// invalidation ("The blocking stream capture is not invalidated").
#[no_mangle]
pub unsafe extern "C" fn cuStreamIsCapturing(stream: *mut c_void, status: *mut i32) -> i32 {
    entry!();
    let stream = stream as usize;
    let mut s = state();
    if is_legacy(stream) {
        let cur = current();
        let blocking: Vec<usize> = s
            .streams
            .iter()
            .filter(|r| r.blocking && !is_legacy(r.handle) && r.ctx == cur)
            .map(|r| r.handle)
            .collect();
        if s.captures
            .iter()
            .any(|c| c.ctx == cur && c.members.iter().any(|m| blocking.contains(m)))
        {
            return s.refuse(reason::IMPLICIT);
        }
    }
    let v = match s.capture_of(stream) {
        None => 0,
        Some(i) if s.captures[i].invalidated => 2,
        Some(_) => 1,
    };
    // SAFETY: a valid out-pointer.
    unsafe { status.write(v) };
    CUDA_SUCCESS
}

/// Writes what `cuStreamGetCaptureInfo_v2`/`_v3` report: status (as
/// `cuStreamIsCapturing`), the capture's id, a fake graph, no
/// dependencies.
///
/// # Safety
///
/// Each pointer is null or valid for one write.
unsafe fn capture_info(
    stream: *mut c_void,
    status: *mut i32,
    id: *mut u64,
    graph: *mut *mut c_void,
    deps: *mut *const c_void,
    edges: *mut *const c_void,
    n: *mut usize,
) -> i32 {
    let s = state();
    let (v, capture_id) = match s.capture_of(stream as usize) {
        None => (0, 0),
        Some(i) => (
            if s.captures[i].invalidated { 2 } else { 1 },
            s.captures[i].id,
        ),
    };
    // SAFETY: the function's contract, for each non-null pointer.
    unsafe {
        if !status.is_null() {
            status.write(v);
        }
        if !id.is_null() && v != 0 {
            id.write(capture_id);
        }
        if !graph.is_null() && v != 0 {
            graph.write((0x60_0000 + 0x10 * (capture_id as usize % 0x1000)) as *mut c_void);
        }
        if !deps.is_null() && v != 0 {
            deps.write(std::ptr::null());
        }
        if !edges.is_null() && v != 0 {
            edges.write(std::ptr::null());
        }
        if !n.is_null() && v != 0 {
            n.write(0);
        }
    }
    CUDA_SUCCESS
}

/// `cuStreamGetCaptureInfo_v3`: see `capture_info`.
#[no_mangle]
pub unsafe extern "C" fn cuStreamGetCaptureInfo_v3(
    stream: *mut c_void,
    status: *mut i32,
    id: *mut u64,
    graph: *mut *mut c_void,
    deps: *mut *const c_void,
    edges: *mut *const c_void,
    n: *mut usize,
) -> i32 {
    entry!();
    // SAFETY: the caller's contract, passed on.
    unsafe { capture_info(stream, status, id, graph, deps, edges, n) }
}

/// `cuStreamGetCaptureInfo_v2`: see `capture_info` (no edge data).
#[no_mangle]
pub unsafe extern "C" fn cuStreamGetCaptureInfo_v2(
    stream: *mut c_void,
    status: *mut i32,
    id: *mut u64,
    graph: *mut *mut c_void,
    deps: *mut *const c_void,
    n: *mut usize,
) -> i32 {
    entry!();
    // SAFETY: the caller's contract, passed on.
    unsafe { capture_info(stream, status, id, graph, deps, std::ptr::null_mut(), n) }
}

/// `cuThreadExchangeStreamCaptureMode`: swaps the calling thread's capture
/// interaction mode (GLOBAL by default), which `State::unsafe_call`
/// applies.
#[no_mangle]
pub unsafe extern "C" fn cuThreadExchangeStreamCaptureMode(mode: *mut i32) -> i32 {
    entry!();
    if mode.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a valid in/out pointer.
    let new = unsafe { mode.read() };
    if !(0..=2).contains(&new) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let old = THREAD_MODE.with(|m| m.replace(new));
    // SAFETY: as above.
    unsafe { mode.write(old) };
    CUDA_SUCCESS
}

/// `cuEventCreate`: a fake event.
#[no_mangle]
pub unsafe extern "C" fn cuEventCreate(event: *mut *mut c_void, _flags: u32) -> i32 {
    entry!();
    if event.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut s = state();
    s.next_event += 0x10;
    let handle = s.next_event;
    s.events.push(EventRec {
        handle,
        capture: None,
        after: None,
    });
    // SAFETY: a valid out-pointer.
    unsafe { event.write(handle as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuEventDestroy_v2`.
#[no_mangle]
pub unsafe extern "C" fn cuEventDestroy_v2(event: *mut c_void) -> i32 {
    entry!();
    state().events.retain(|e| e.handle != event as usize);
    CUDA_SUCCESS
}

/// `cuEventRecord`: stream work (see `State::enqueue`). On a capturing
/// stream the event becomes part of that capture (CUDA: an event recorded
/// in a capture is a capture event, which a wait can join); otherwise it
/// completes when the host functions queued on the stream before it have
/// run.
#[no_mangle]
pub unsafe extern "C" fn cuEventRecord(event: *mut c_void, stream: *mut c_void) -> i32 {
    entry!();
    let fail = FAIL_NEXT_RECORD.swap(0, std::sync::atomic::Ordering::Relaxed);
    if fail != 0 {
        return fail;
    }
    WAIT_COUNTS[0].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stream = stream as usize;
    let mut s = state();
    let captured = match s.enqueue(stream) {
        Ok(c) => c,
        Err(rc) => return rc,
    };
    let capture = if captured {
        s.capture_of(stream).map(|i| s.captures[i].id)
    } else {
        None
    };
    let after = if captured {
        None
    } else {
        Some((stream, s.stream(stream).queued))
    };
    match s.events.iter_mut().find(|e| e.handle == event as usize) {
        Some(e) => {
            e.capture = capture;
            e.after = after;
        }
        None => s.events.push(EventRec {
            handle: event as usize,
            capture,
            after,
        }),
    }
    CUDA_SUCCESS
}

/// `cuEventRecordWithFlags`: as [`cuEventRecord`].
#[no_mangle]
pub unsafe extern "C" fn cuEventRecordWithFlags(
    event: *mut c_void,
    stream: *mut c_void,
    _flags: u32,
) -> i32 {
    entry!();
    // SAFETY: the caller's contract, passed on.
    unsafe { cuEventRecord(event, stream) }
}

/// `cuStreamWaitEvent`: with an event recorded in an active capture, a
/// stream that is not capturing joins that capture (CUDA's cross-stream
/// fork: it becomes a member, and its later work is captured); a stream of
/// another capture would merge two captures (902); a stream of the same
/// capture records a node. Otherwise stream work (see `State::enqueue`).
#[no_mangle]
pub unsafe extern "C" fn cuStreamWaitEvent(
    stream: *mut c_void,
    event: *mut c_void,
    _flags: u32,
) -> i32 {
    entry!();
    STREAM_WAITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let stream = stream as usize;
    let mut s = state();
    let capture = s
        .events
        .iter()
        .find(|e| e.handle == event as usize)
        .and_then(|e| e.capture)
        .and_then(|id| s.capture_by_id(id));
    let Some(ci) = capture else {
        return match s.enqueue(stream) {
            Ok(_) => CUDA_SUCCESS,
            Err(rc) => rc,
        };
    };
    match s.capture_of(stream) {
        Some(j) if j != ci => return s.refuse(reason::MERGE),
        Some(_) => {}
        None => {
            let cur = current();
            if cur == 0 || s.created_stream_ctx(stream).is_some_and(|c| c != cur) {
                return s.refuse(reason::WRONG_CONTEXT);
            }
            s.captures[ci].members.push(stream);
        }
    }
    match s.enqueue(stream) {
        Ok(_) => CUDA_SUCCESS,
        Err(rc) => rc,
    }
}

/// Refuses a wait on or query of an event recorded in an active capture:
/// 900, and the capture is invalidated (CUDA: "It is invalid to
/// synchronize or query the execution status of ... a captured event";
/// the RELAXED mode's note names "cuEventQuery on an event that was last
/// recorded inside a stream capture" as a call that conflicts with capture
/// in every mode. The header also has CUDA_ERROR_CAPTURED_EVENT (907) for
/// such calls; the stand-in answers 900, which cudakit treats alike).
/// Returns what the event waits for otherwise.
fn event_target(s: &mut State, event: usize) -> Result<Option<(usize, u64)>, i32> {
    let Some(e) = s.events.iter().find(|e| e.handle == event) else {
        return Ok(None);
    };
    let (capture, after) = (e.capture, e.after);
    if let Some(i) = capture.and_then(|id| s.capture_by_id(id)) {
        s.captures[i].invalidated = true;
        return Err(s.refuse(reason::CAPTURE_UNSUPPORTED));
    }
    Ok(after)
}

/// `cuEventSynchronize`: waits until the host functions queued on the
/// event's stream before it was recorded have run. Refused for a captured
/// event (900, see `event_target`), or with a failure injected by
/// `stub_fail_syncs`, returned without waiting.
#[no_mangle]
pub unsafe extern "C" fn cuEventSynchronize(event: *mut c_void) -> i32 {
    entry!();
    WAIT_COUNTS[1].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let mut s = state();
    let target = match event_target(&mut s, event as usize) {
        Ok(t) => t,
        Err(rc) => return rc,
    };
    if let Some(rc) = s.injected() {
        return rc;
    }
    let Some((stream, seq)) = target else {
        return CUDA_SUCCESS;
    };
    let done = |s: &State| {
        s.streams
            .iter()
            .find(|r| r.handle == stream)
            .map_or(true, |r| r.run >= seq)
    };
    match wait_until(s, done) {
        Ok(_) => CUDA_SUCCESS,
        Err(rc) => rc,
    }
}

/// `cuEventQuery`: CUDA_ERROR_NOT_READY (600) until the host functions
/// before the event have run. Refused for a captured event (900).
#[no_mangle]
pub unsafe extern "C" fn cuEventQuery(event: *mut c_void) -> i32 {
    entry!();
    let mut s = state();
    match event_target(&mut s, event as usize) {
        Err(rc) => rc,
        Ok(Some((stream, seq))) if s.streams.iter().any(|r| r.handle == stream && r.run < seq) => {
            CUDA_ERROR_NOT_READY
        }
        Ok(_) => CUDA_SUCCESS,
    }
}

/// `cuEventElapsedTime_v2`: 1 ms between any two events; NOT_READY (600)
/// while either waits for a host function; 900 for a captured event.
#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime_v2(
    ms: *mut f32,
    start: *mut c_void,
    end: *mut c_void,
) -> i32 {
    entry!();
    for e in [start, end] {
        // SAFETY: the caller's contract.
        let rc = unsafe { cuEventQuery(e) };
        if rc != CUDA_SUCCESS {
            return rc;
        }
    }
    if ms.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a valid out-pointer.
    unsafe { ms.write(1.0) };
    CUDA_SUCCESS
}

/// `cuEventElapsedTime` (before CUDA 12.8): as [`cuEventElapsedTime_v2`].
#[no_mangle]
pub unsafe extern "C" fn cuEventElapsedTime(
    ms: *mut f32,
    start: *mut c_void,
    end: *mut c_void,
) -> i32 {
    entry!();
    // SAFETY: the caller's contract, passed on.
    unsafe { cuEventElapsedTime_v2(ms, start, end) }
}

/// `cuGraphDestroy`.
#[no_mangle]
pub unsafe extern "C" fn cuGraphDestroy(_graph: *mut c_void) -> i32 {
    entry!();
    CUDA_SUCCESS
}

/// `cuGraphInstantiateWithFlags`: a fake executable graph.
#[no_mangle]
pub unsafe extern "C" fn cuGraphInstantiateWithFlags(
    exec: *mut *mut c_void,
    graph: *mut c_void,
    flags: u64,
) -> i32 {
    entry!();
    if exec.is_null() || graph.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    state().instantiate_flags.push(flags);
    // SAFETY: a valid out-pointer.
    unsafe { exec.write((graph as usize + 0x8_0000) as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuGraphLaunch`: stream work (see `State::enqueue`); nothing runs.
#[no_mangle]
pub unsafe extern "C" fn cuGraphLaunch(_exec: *mut c_void, stream: *mut c_void) -> i32 {
    entry!();
    match state().enqueue(stream as usize) {
        Ok(_) => CUDA_SUCCESS,
        Err(rc) => rc,
    }
}

/// `cuGraphUpload`: stream work (see `State::enqueue`), counted.
#[no_mangle]
pub unsafe extern "C" fn cuGraphUpload(_exec: *mut c_void, stream: *mut c_void) -> i32 {
    entry!();
    let mut s = state();
    match s.enqueue(stream as usize) {
        Ok(_) => {
            s.uploads += 1;
            CUDA_SUCCESS
        }
        Err(rc) => rc,
    }
}

/// (the last `cuGraphInstantiateWithFlags` flags, `cuGraphUpload` calls,
/// instantiations).
#[no_mangle]
pub unsafe extern "C" fn stub_graph_counts(out: *mut u64) {
    let s = state();
    // SAFETY: the test passes 3 writable u64s.
    unsafe {
        out.write(s.instantiate_flags.last().copied().unwrap_or(0));
        out.add(1).write(s.uploads);
        out.add(2).write(s.instantiate_flags.len() as u64);
    }
}

/// `cuGraphExecUpdate_v2`: accepted (`CU_GRAPH_EXEC_UPDATE_SUCCESS`).
#[no_mangle]
pub unsafe extern "C" fn cuGraphExecUpdate_v2(
    _exec: *mut c_void,
    _graph: *mut c_void,
    info: *mut u64,
) -> i32 {
    entry!();
    if info.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a CUgraphExecUpdateResultInfo: 24 bytes, all zero is success
    // with no nodes named.
    unsafe { std::ptr::write_bytes(info, 0, 3) };
    CUDA_SUCCESS
}

/// `cuGraphExecDestroy`.
#[no_mangle]
pub unsafe extern "C" fn cuGraphExecDestroy(_exec: *mut c_void) -> i32 {
    entry!();
    EXEC_DESTROYS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    CUDA_SUCCESS
}

/// `cuGraphExecDestroy` calls so far.
static EXEC_DESTROYS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many `cuGraphExecDestroy` calls the stand-in has had.
#[no_mangle]
pub extern "C" fn stub_exec_destroys() -> u64 {
    EXEC_DESTROYS.load(std::sync::atomic::Ordering::Relaxed)
}

/// A code the next `cuEventRecord` returns without recording (0: none).
static FAIL_NEXT_RECORD: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// Makes the next `cuEventRecord` return `code` without recording; 0
/// cancels.
#[no_mangle]
pub extern "C" fn stub_fail_next_event_record(code: i32) {
    FAIL_NEXT_RECORD.store(code, std::sync::atomic::Ordering::Relaxed);
}

/// The stand-in's host-function thread: runs queued host functions in
/// FIFO order (so FIFO per stream), unless a test holds them. Driver calls
/// made from it are refused (see `entry!`).
fn callback_thread() {
    ON_CALLBACK_THREAD.with(|c| c.set(true));
    loop {
        let job = {
            let mut s = state();
            loop {
                if !s.hold_host_fns {
                    if let Some(job) = s.host_queue.pop_front() {
                        break job;
                    }
                }
                s = match CHANGED.wait(s) {
                    Ok(g) => g,
                    Err(p) => p.into_inner(),
                };
            }
        };
        // SAFETY: the function and data the caller of cuLaunchHostFunc
        // passed, called once, as the driver calls them.
        unsafe { (job.f)(job.user as *mut c_void) };
        {
            let mut s = state();
            let r = s.stream(job.stream);
            r.run = r.run.max(job.seq);
            s.host_fns_run += 1;
        }
        CHANGED.notify_all();
    }
}

static CALLBACK_THREAD: std::sync::Once = std::sync::Once::new();

/// `cuLaunchHostFunc`: stream work (see `State::enqueue`). On a capturing
/// stream it is counted (a graph host node) and not called. Otherwise it is
/// queued for the stand-in's host-function thread and called there later,
/// asynchronously, as the driver does ("The host function will be called
/// ... on a driver thread"); synchronizing the stream waits for it.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchHostFunc(
    stream: *mut c_void,
    f: Option<unsafe extern "C" fn(*mut c_void)>,
    user: *mut c_void,
) -> i32 {
    entry!();
    let Some(f) = f else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    let stream = stream as usize;
    let mut s = state();
    match s.enqueue(stream) {
        Ok(true) => {
            s.captured_host_fns += 1;
            return CUDA_SUCCESS;
        }
        Ok(false) => {}
        Err(rc) => return rc,
    }
    let r = s.stream(stream);
    r.queued += 1;
    let seq = r.queued;
    s.host_queue.push_back(HostJob {
        stream,
        seq,
        f,
        user: user as usize,
    });
    drop(s);
    CALLBACK_THREAD.call_once(|| {
        std::thread::Builder::new()
            .name("stub-driver-callbacks".into())
            .spawn(callback_thread)
            .expect("spawn the stand-in's host-function thread");
    });
    CHANGED.notify_all();
    CUDA_SUCCESS
}

/// Makes `stream` a member of the most recent active capture, as a wait on
/// an event recorded in it does (see `cuStreamWaitEvent`).
#[no_mangle]
pub extern "C" fn stub_join_capture(stream: usize) {
    let mut s = state();
    if s.capture_of(stream).is_none() {
        if let Some(c) = s.captures.last_mut() {
            c.members.push(stream);
        }
    }
}

/// (all `cuMemFreeAsync` calls, those on a capturing stream, host functions
/// queued on a capturing stream).
#[no_mangle]
pub unsafe extern "C" fn stub_capture_counts(out: *mut u64) {
    let s = state();
    // SAFETY: the test passes 3 writable u64s.
    unsafe {
        out.write(s.async_frees);
        out.add(1).write(s.captured_frees);
        out.add(2).write(s.captured_host_fns);
    }
}

/// `cuGraphCreate`: a fake graph.
#[no_mangle]
pub unsafe extern "C" fn cuGraphCreate(graph: *mut *mut c_void, _flags: u32) -> i32 {
    entry!();
    let handle = new_graph(&mut state());
    // SAFETY: a valid out-pointer.
    unsafe { graph.write(handle as *mut c_void) };
    CUDA_SUCCESS
}

/// A fresh graph handle.
fn new_graph(s: &mut State) -> usize {
    let handle = s.next_graph;
    s.next_graph += 0x100;
    handle
}

/// Records a node with its dependencies and returns its handle.
///
/// # Safety
///
/// `deps` holds `n` handles (or is null with `n == 0`).
unsafe fn add_node(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    node_type: i32,
) -> i32 {
    // SAFETY: the function's contract, passed on.
    unsafe { add_typed_node(node, graph, deps, n, node_type, 0) }
}

/// [`add_node`], recording the child graph of a child-graph node.
///
/// # Safety
///
/// As [`add_node`].
unsafe fn add_typed_node(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    node_type: i32,
    child: usize,
) -> i32 {
    let list: Vec<usize> = if n == 0 {
        Vec::new()
    } else {
        // SAFETY: the function's contract.
        unsafe { std::slice::from_raw_parts(deps, n) }
            .iter()
            .map(|&d| d as usize)
            .collect()
    };
    let mut sorted = list.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != list.len() {
        return CUDA_ERROR_INVALID_VALUE; // the driver refuses a repeated dependency
    }
    let mut s = state();
    let handle = 0x90_0000 + 0x10 * (s.nodes.len() + 1);
    s.nodes.push((handle, list));
    s.node_graphs
        .push((handle, graph as usize, node_type, child));
    // SAFETY: a valid out-pointer.
    unsafe { node.write(handle as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuGraphAddMemAllocNode`: recorded (the address stays 0).
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddMemAllocNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    _params: *mut c_void,
) -> i32 {
    entry!();
    // SAFETY: the driver's contract, which the caller keeps.
    unsafe { add_node(node, graph, deps, n, 10) }
}

/// `cuGraphAddMemsetNode`: recorded.
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddMemsetNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    _params: *const c_void,
    _ctx: *mut c_void,
) -> i32 {
    entry!();
    // SAFETY: as above.
    unsafe { add_node(node, graph, deps, n, 2) }
}

/// `cuGraphAddMemcpyNode`: recorded.
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddMemcpyNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    _params: *const c_void,
    _ctx: *mut c_void,
) -> i32 {
    entry!();
    // SAFETY: as above.
    unsafe { add_node(node, graph, deps, n, 1) }
}

/// `cuGraphAddMemFreeNode`: recorded.
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddMemFreeNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    _dptr: u64,
) -> i32 {
    entry!();
    // SAFETY: as above.
    unsafe { add_node(node, graph, deps, n, 11) }
}

/// `cuGraphAddKernelNode_v2`: recorded (type 0); nothing is checked.
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddKernelNode_v2(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    _params: *const c_void,
) -> i32 {
    entry!();
    // SAFETY: as above.
    unsafe { add_node(node, graph, deps, n, 0) }
}

/// `cuGraphAddEventRecordNode`: recorded (type 7).
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddEventRecordNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    _event: *mut c_void,
) -> i32 {
    entry!();
    // SAFETY: as above.
    unsafe { add_node(node, graph, deps, n, 7) }
}

/// `cuGraphAddEventWaitNode`: recorded (type 6).
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddEventWaitNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    _event: *mut c_void,
) -> i32 {
    entry!();
    // SAFETY: as above.
    unsafe { add_node(node, graph, deps, n, 6) }
}

/// `cuGraphAddEmptyNode`: recorded (type 5).
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddEmptyNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
) -> i32 {
    entry!();
    // SAFETY: as above.
    unsafe { add_node(node, graph, deps, n, 5) }
}

/// `cuGraphAddHostNode`: recorded (type 3); the function is never called.
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddHostNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    _params: *const c_void,
) -> i32 {
    entry!();
    // SAFETY: as above.
    unsafe { add_node(node, graph, deps, n, 3) }
}

/// `cuGraphAddChildGraphNode`: recorded (type 4) with the child graph
/// itself (the driver would clone it; the model keeps the handle, so that
/// `cuGraphChildGraphNodeGetGraph` finds the child's nodes).
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddChildGraphNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    child: *mut c_void,
) -> i32 {
    entry!();
    // SAFETY: as above.
    unsafe { add_typed_node(node, graph, deps, n, 4, child as usize) }
}

/// `cuGraphGetNodes`: the nodes recorded for `graph`, in creation order.
#[no_mangle]
pub unsafe extern "C" fn cuGraphGetNodes(
    graph: *mut c_void,
    nodes: *mut *mut c_void,
    count: *mut usize,
) -> i32 {
    entry!();
    if count.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let s = state();
    let mine: Vec<usize> = s
        .node_graphs
        .iter()
        .filter(|r| r.1 == graph as usize)
        .map(|r| r.0)
        .collect();
    if nodes.is_null() {
        // SAFETY: a valid out-pointer.
        unsafe { count.write(mine.len()) };
        return CUDA_SUCCESS;
    }
    // SAFETY: the caller's capacity, as the driver reads it.
    let cap = unsafe { count.read() };
    for (i, n) in mine.iter().take(cap).enumerate() {
        // SAFETY: `nodes` has room for `cap` handles.
        unsafe { nodes.add(i).write(*n as *mut c_void) };
    }
    // SAFETY: a valid out-pointer.
    unsafe { count.write(mine.len().min(cap)) };
    CUDA_SUCCESS
}

/// `cuGraphNodeGetType`: the recorded type.
#[no_mangle]
pub unsafe extern "C" fn cuGraphNodeGetType(node: *mut c_void, out: *mut i32) -> i32 {
    entry!();
    let s = state();
    let Some(r) = s.node_graphs.iter().find(|r| r.0 == node as usize) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    // SAFETY: a valid out-pointer (`CUgraphNodeType` is an int).
    unsafe { out.write(r.2) };
    CUDA_SUCCESS
}

/// `cuGraphChildGraphNodeGetGraph`: the child graph of a child-graph node.
#[no_mangle]
pub unsafe extern "C" fn cuGraphChildGraphNodeGetGraph(
    node: *mut c_void,
    out: *mut *mut c_void,
) -> i32 {
    entry!();
    let s = state();
    match s.node_graphs.iter().find(|r| r.0 == node as usize) {
        Some(r) if r.2 == 4 => {
            // SAFETY: a valid out-pointer.
            unsafe { out.write(r.3 as *mut c_void) };
            CUDA_SUCCESS
        }
        _ => CUDA_ERROR_INVALID_VALUE,
    }
}

/// `cuGraphConditionalHandleCreate`: a fake handle, recorded with its
/// graph, default value and flags.
#[no_mangle]
pub unsafe extern "C" fn cuGraphConditionalHandleCreate(
    out: *mut u64,
    graph: *mut c_void,
    _ctx: *mut c_void,
    default: u32,
    flags: u32,
) -> i32 {
    entry!();
    if out.is_null() || graph.is_null() || flags > 1 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut s = state();
    let handle = 0xC0_0000 + s.conditions.len() as u64 + 1;
    s.conditions.push((handle, graph as usize, default, flags));
    // SAFETY: a valid out-pointer.
    unsafe { out.write(handle) };
    CUDA_SUCCESS
}

/// `cuGraphAddNode_v2`: conditional nodes only (type 13), as the driver
/// checks them: the handle must have been made for this graph; 1 body for
/// while, 1 or 2 for if, at least 1 for switch. The bodies are fresh graph
/// handles written to `phGraph_out`. Other node types answer 801.
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddNode_v2(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    edge_data: *const c_void,
    n: usize,
    params: *mut u8,
) -> i32 {
    entry!();
    if params.is_null() || !edge_data.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // CUgraphNodeParams: int type at 0, the union at 16; in the union
    // CUDA_CONDITIONAL_NODE_PARAMS: handle u64 at 0, type int at 8, size
    // uint at 12, phGraph_out at 16, ctx at 24.
    // SAFETY: the caller passes a CUgraphNodeParams (256 bytes, align 8).
    let (node_type, handle, cond_type, size, out) = unsafe {
        (
            params.cast::<i32>().read(),
            params.add(16).cast::<u64>().read(),
            params.add(24).cast::<i32>().read(),
            params.add(28).cast::<u32>().read(),
            params.add(32).cast::<*mut *mut c_void>().read(),
        )
    };
    if node_type != 13 {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    {
        let s = state();
        let known = s
            .conditions
            .iter()
            .any(|c| c.0 == handle && c.1 == graph as usize);
        let size_ok = match cond_type {
            0 => size == 1 || size == 2,
            1 => size == 1,
            2 => size >= 1,
            _ => false,
        };
        if !known || !size_ok || out.is_null() {
            return CUDA_ERROR_INVALID_VALUE;
        }
    }
    // SAFETY: as above.
    let rc = unsafe { add_node(node, graph, deps, n, 13) };
    if rc != CUDA_SUCCESS {
        return rc;
    }
    let mut s = state();
    let bodies: Vec<usize> = (0..size).map(|_| new_graph(&mut s)).collect();
    for (i, b) in bodies.iter().enumerate() {
        // SAFETY: `phGraph_out` has room for `size` graphs.
        unsafe { out.add(i).write(*b as *mut c_void) };
    }
    // SAFETY: written by add_node just above.
    let made = unsafe { node.read() } as usize;
    s.conditionals
        .push((made, graph as usize, handle, cond_type, bodies));
    CUDA_SUCCESS
}

/// The conditional nodes made: writes (graph, handle, type, bodies) of the
/// `i`th into `out` (4 u64s); returns false past the last.
#[no_mangle]
pub unsafe extern "C" fn stub_conditional(i: usize, out: *mut u64) -> bool {
    let s = state();
    let Some(c) = s.conditionals.get(i) else {
        return false;
    };
    // SAFETY: the test passes 4 writable u64s.
    unsafe {
        out.write(c.1 as u64);
        out.add(1).write(c.2);
        out.add(2).write(c.3 as u64);
        out.add(3).write(c.4.len() as u64);
    }
    true
}

/// The `i`th conditional handle made: writes (graph, default, flags) into
/// `out` (3 u64s); returns false past the last.
#[no_mangle]
pub unsafe extern "C" fn stub_condition(i: usize, out: *mut u64) -> bool {
    let s = state();
    let Some(c) = s.conditions.get(i) else {
        return false;
    };
    // SAFETY: the test passes 3 writable u64s.
    unsafe {
        out.write(c.1 as u64);
        out.add(1).write(u64::from(c.2));
        out.add(2).write(u64::from(c.3));
    }
    true
}

/// Copies the dependencies of `node` into `out` (capacity `cap`); returns
/// their number, or `usize::MAX` for an unknown node.
#[no_mangle]
pub unsafe extern "C" fn stub_node_deps(node: usize, out: *mut usize, cap: usize) -> usize {
    let s = state();
    let Some((_, deps)) = s.nodes.iter().find(|(h, _)| *h == node) else {
        return usize::MAX;
    };
    for (i, d) in deps.iter().take(cap).enumerate() {
        // SAFETY: the test passes `cap` writable usizes.
        unsafe { out.add(i).write(*d) };
    }
    deps.len()
}

// ---- A stand-in NCCL (the same library, loaded as libnccl through
// CUDAKIT_LIBNCCL): communicators are fake handles, collectives are counted
// and do nothing, so a test can see what reached NCCL.

/// `ncclGetVersion`: 2.28.3.
#[no_mangle]
pub unsafe extern "C" fn ncclGetVersion(version: *mut i32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { version.write(22803) };
    0
}

/// `ncclGetUniqueId`: a pattern that differs from call to call (byte `i`
/// of call `k` is `k * 31 + i`).
#[no_mangle]
pub unsafe extern "C" fn ncclGetUniqueId(id: *mut u8) -> i32 {
    let k = {
        let mut s = state();
        s.nccl_ids += 1;
        s.nccl_ids
    };
    for i in 0..128u64 {
        // SAFETY: a 128-byte out-buffer.
        unsafe { id.add(i as usize).write((k * 31 + i) as u8) };
    }
    0
}

/// `ncclCommInitRankConfig`: a fake communicator, ready at once; the id it
/// was given is recorded (`stub_nccl_init_ids`).
#[no_mangle]
pub unsafe extern "C" fn ncclCommInitRankConfig(
    comm: *mut *mut c_void,
    _nranks: i32,
    id: UniqueId,
    rank: i32,
    _config: *mut c_void,
) -> i32 {
    let mut head = [0u8; 8];
    head.copy_from_slice(&id.internal[..8]);
    state().nccl_init_ids.push((head, rank));
    // SAFETY: a valid out-pointer.
    unsafe { comm.write((0xA0_0000 + 0x10 * rank as usize) as *mut c_void) };
    0
}

/// Copies the (id head, rank) pairs of every `ncclCommInitRankConfig` into
/// `out` (16 bytes each: 8 id bytes, the rank as i32, 4 zero bytes; at
/// most `cap` pairs); returns how many there were.
#[no_mangle]
pub unsafe extern "C" fn stub_nccl_init_ids(out: *mut u8, cap: usize) -> usize {
    let s = state();
    for (k, (head, rank)) in s.nccl_init_ids.iter().take(cap).enumerate() {
        let mut rec = [0u8; 16];
        rec[..8].copy_from_slice(head);
        rec[8..12].copy_from_slice(&rank.to_le_bytes());
        // SAFETY: the test passes `cap` records of 16 writable bytes.
        unsafe { std::ptr::copy_nonoverlapping(rec.as_ptr(), out.add(16 * k), 16) };
    }
    s.nccl_init_ids.len()
}

/// `ncclUniqueId` as NCCL passes it: 128 bytes by value.
#[repr(C)]
#[derive(Debug)]
pub struct UniqueId {
    internal: [u8; 128],
}

/// `ncclCommInitRank`: a fake communicator.
#[no_mangle]
pub unsafe extern "C" fn ncclCommInitRank(
    comm: *mut *mut c_void,
    _nranks: i32,
    _id: UniqueId,
    rank: i32,
) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { comm.write((0xA0_0000 + 0x10 * rank as usize) as *mut c_void) };
    0
}

/// `ncclCommInitAll`: one fake communicator per device.
#[no_mangle]
pub unsafe extern "C" fn ncclCommInitAll(
    comms: *mut *mut c_void,
    n: i32,
    _devs: *const i32,
) -> i32 {
    for i in 0..n.max(0) as usize {
        // SAFETY: `n` out-slots.
        unsafe { comms.add(i).write((0xA0_0000 + 0x10 * i) as *mut c_void) };
    }
    0
}

/// `ncclCommDestroy`.
#[no_mangle]
pub extern "C" fn ncclCommDestroy(_comm: *mut c_void) -> i32 {
    0
}

/// `ncclCommAbort`: counted.
#[no_mangle]
pub extern "C" fn ncclCommAbort(_comm: *mut c_void) -> i32 {
    state().nccl_aborts += 1;
    0
}

/// `ncclGetErrorString`.
#[no_mangle]
pub extern "C" fn ncclGetErrorString(_result: i32) -> *const i8 {
    c"stand-in NCCL error".as_ptr()
}

/// `ncclCommGetAsyncError`: none.
#[no_mangle]
pub unsafe extern "C" fn ncclCommGetAsyncError(_comm: *mut c_void, err: *mut i32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { err.write(0) };
    0
}

/// `ncclCommCount`: 2.
#[no_mangle]
pub unsafe extern "C" fn ncclCommCount(_comm: *mut c_void, count: *mut i32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { count.write(2) };
    0
}

/// `ncclCommCuDevice`: from the fake handle.
#[no_mangle]
pub unsafe extern "C" fn ncclCommCuDevice(comm: *mut c_void, device: *mut i32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { device.write(((comm as usize - 0xA0_0000) / 0x10) as i32) };
    0
}

/// `ncclCommUserRank`: from the fake handle.
#[no_mangle]
pub unsafe extern "C" fn ncclCommUserRank(comm: *mut c_void, rank: *mut i32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { rank.write(((comm as usize - 0xA0_0000) / 0x10) as i32) };
    0
}

fn nccl_call() -> i32 {
    state().nccl_calls += 1;
    0
}

/// `ncclReduce`: counted.
#[no_mangle]
pub extern "C" fn ncclReduce(
    _s: *const c_void,
    _r: *mut c_void,
    _n: usize,
    _t: i32,
    _op: i32,
    _root: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclBroadcast`: counted.
#[no_mangle]
pub extern "C" fn ncclBroadcast(
    _s: *const c_void,
    _r: *mut c_void,
    _n: usize,
    _t: i32,
    _root: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclAllReduce`: counted.
#[no_mangle]
pub extern "C" fn ncclAllReduce(
    _s: *const c_void,
    _r: *mut c_void,
    _n: usize,
    _t: i32,
    _op: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclReduceScatter`: counted.
#[no_mangle]
pub extern "C" fn ncclReduceScatter(
    _s: *const c_void,
    _r: *mut c_void,
    _n: usize,
    _t: i32,
    _op: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclAllGather`: counted.
#[no_mangle]
pub extern "C" fn ncclAllGather(
    _s: *const c_void,
    _r: *mut c_void,
    _n: usize,
    _t: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclSend`: counted.
#[no_mangle]
pub extern "C" fn ncclSend(
    _s: *const c_void,
    _n: usize,
    _t: i32,
    _peer: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclRecv`: counted.
#[no_mangle]
pub extern "C" fn ncclRecv(
    _r: *mut c_void,
    _n: usize,
    _t: i32,
    _peer: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclGroupStart`: counted.
#[no_mangle]
pub extern "C" fn ncclGroupStart() -> i32 {
    state().nccl_groups += 1;
    0
}

/// `ncclGroupEnd`.
#[no_mangle]
pub extern "C" fn ncclGroupEnd() -> i32 {
    0
}

/// (group starts, collective calls, aborts) of the stand-in NCCL.
#[no_mangle]
pub unsafe extern "C" fn stub_nccl_counts(out: *mut u64) {
    let s = state();
    // SAFETY: the test passes 3 writable u64s.
    unsafe {
        out.write(s.nccl_groups);
        out.add(1).write(s.nccl_calls);
        out.add(2).write(s.nccl_aborts);
    }
}

/// Copies the attribute IDs of the last `cuLaunchKernelEx` into `out`
/// (capacity `cap`); returns how many there were.
#[no_mangle]
pub unsafe extern "C" fn stub_last_ex_attrs(out: *mut i32, cap: usize) -> usize {
    let s = state();
    for (i, &id) in s.last_ex_attrs.iter().take(cap).enumerate() {
        // SAFETY: the test passes `cap` writable i32s.
        unsafe { out.add(i).write(id) };
    }
    s.last_ex_attrs.len()
}

/// `cuStreamSetAttribute`: recorded (stream, ID, and for an access-policy
/// window its size); the stream must be live.
#[no_mangle]
pub unsafe extern "C" fn cuStreamSetAttribute(
    stream: *mut c_void,
    attr: i32,
    value: *const c_void,
) -> i32 {
    entry!();
    if value.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut s = state();
    if !s.streams.iter().any(|st| st.handle == stream as usize) {
        return 400; // CUDA_ERROR_INVALID_HANDLE
    }
    let bytes = if attr == 1 {
        // SAFETY: a 64-byte attribute value; for ID 1 (access-policy
        // window) its `num_bytes` is the second pointer-sized word.
        unsafe { *value.cast::<usize>().add(1) }
    } else {
        0
    };
    s.stream_attrs.push((stream as usize, attr, bytes));
    CUDA_SUCCESS
}

/// `cuStreamGetAttribute`: zeroes the value (nothing set by default).
#[no_mangle]
pub unsafe extern "C" fn cuStreamGetAttribute(
    _stream: *mut c_void,
    _attr: i32,
    value: *mut c_void,
) -> i32 {
    entry!();
    if value.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a 64-byte out-value.
    unsafe { std::ptr::write_bytes(value.cast::<u8>(), 0, 64) };
    CUDA_SUCCESS
}

/// `cuMemcpyBatchAsync_v2`: each copy as `cuMemcpyAsync` on the stream
/// (copies between host, pinned and managed memory run for real), counted.
#[no_mangle]
pub unsafe extern "C" fn cuMemcpyBatchAsync_v2(
    dsts: *mut u64,
    srcs: *mut u64,
    sizes: *mut usize,
    count: usize,
    attrs: *mut c_void,
    attrs_idxs: *mut usize,
    num_attrs: usize,
    stream: *mut c_void,
) -> i32 {
    entry!();
    if count == 0 || dsts.is_null() || srcs.is_null() || sizes.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if num_attrs == 0 || attrs.is_null() || attrs_idxs.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the first attribute index, which must be 0.
    if unsafe { *attrs_idxs } != 0 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    for i in 0..count {
        // SAFETY: `count` entries in each array, the caller's contract.
        let (d, src, n) = unsafe { (*dsts.add(i), *srcs.add(i), *sizes.add(i)) };
        match async_op(stream) {
            Ok(Some(s)) => {
                let (dh, sh) = (s.is_host(d), s.is_host(src));
                copy(&s, d, dh, src, sh, n)
            }
            Ok(None) => {}
            Err(rc) => return rc,
        }
    }
    let mut s = state();
    s.batches += 1;
    s.batch_ops += count as u64;
    CUDA_SUCCESS
}

/// Batched-copy calls and the copies in them, and stream attribute sets.
#[no_mangle]
pub unsafe extern "C" fn stub_batch_counts(out: *mut u64) {
    let s = state();
    // SAFETY: the test passes 3 writable u64s.
    unsafe {
        out.write(s.batches);
        out.add(1).write(s.batch_ops);
        out.add(2).write(s.stream_attrs.len() as u64);
    }
}

/// `cuCtxSetLimit`: recorded.
#[no_mangle]
pub unsafe extern "C" fn cuCtxSetLimit(limit: i32, value: usize) -> i32 {
    entry!();
    let mut s = state();
    s.limits.retain(|&(l, _)| l != limit);
    s.limits.push((limit, value));
    CUDA_SUCCESS
}

/// `cuCtxGetLimit`: what `cuCtxSetLimit` set, else 0.
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetLimit(value: *mut usize, limit: i32) -> i32 {
    entry!();
    if value.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let v = state()
        .limits
        .iter()
        .find(|&&(l, _)| l == limit)
        .map_or(0, |&(_, v)| v);
    // SAFETY: a valid out-pointer.
    unsafe { value.write(v) };
    CUDA_SUCCESS
}

// ---- Context-independent libraries (cuLibrary*, cuKernel*) ----
//
// A library is loaded with no context needed (as the driver's are). A PTX
// image's kernels are its `.entry` names and its variables the names of its
// `.global` and `.const` declarations; any other image has no kernel list
// and answers every kernel name, as modules do. `cuKernelGetFunction` makes
// a function of the current context (201 without one), recorded with it, so
// that `cuLaunchKernel` refuses it in another context. Unloading a library
// twice, or using an unloaded one, is CUDA_ERROR_INVALID_HANDLE (400).

const CUDA_ERROR_INVALID_HANDLE: i32 = 400;
const CUDA_ERROR_NOT_FOUND: i32 = 500;
const LIBRARY: usize = 0x70_0000;
const KERNEL_FUNCTION: usize = 0x1000_0000;

struct LibRec {
    handle: usize,
    /// `None`: not a PTX image; every name is a kernel.
    kernels: Option<Vec<std::ffi::CString>>,
    /// (name, bytes) of each variable.
    globals: Vec<(String, usize)>,
    loaded: bool,
}

struct LibState {
    libs: Vec<LibRec>,
    loads: u64,
    unloads: u64,
    bad_handles: u64,
    kernel_functions: u64,
}

static LIBS: Mutex<LibState> = Mutex::new(LibState {
    libs: Vec::new(),
    loads: 0,
    unloads: 0,
    bad_handles: 0,
    kernel_functions: 0,
});

fn libs() -> MutexGuard<'static, LibState> {
    match LIBS.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Bytes of one element of a PTX state-space declaration's type.
fn ptx_type_bytes(decl: &str) -> usize {
    for (ty, bytes) in [
        (".f64", 8),
        (".u64", 8),
        (".s64", 8),
        (".b64", 8),
        (".f32", 4),
        (".u32", 4),
        (".s32", 4),
        (".b32", 4),
        (".u16", 2),
        (".s16", 2),
        (".b16", 2),
        (".u8", 1),
        (".s8", 1),
        (".b8", 1),
    ] {
        if decl.contains(ty) {
            return bytes;
        }
    }
    4
}

fn parse_ptx(text: &str) -> (Vec<std::ffi::CString>, Vec<(String, usize)>) {
    let mut kernels = Vec::new();
    let mut globals = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(at) = line.find(".entry ") {
            let rest = line[at + 7..].trim_start();
            let name: String = rest
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '(')
                .collect();
            if !name.is_empty() {
                kernels.push(std::ffi::CString::new(name).expect("no NUL in a PTX name"));
            }
        } else if (line.contains(".global ") || line.contains(".const ")) && line.ends_with(';') {
            let decl = line.trim_end_matches(';');
            let decl = decl.split('=').next().unwrap_or(decl).trim();
            let (head, count) = match decl.find('[') {
                Some(b) => {
                    let n = decl[b + 1..]
                        .trim_end_matches(']')
                        .trim()
                        .parse::<usize>()
                        .unwrap_or(1);
                    (&decl[..b], n)
                }
                None => (decl, 1),
            };
            if let Some(name) = head.split_whitespace().last() {
                globals.push((name.to_owned(), ptx_type_bytes(head) * count));
            }
        }
    }
    (kernels, globals)
}

/// `cuLibraryLoadData`: no context needed; options are not read; text
/// without a `.version` line is CUDA_ERROR_INVALID_PTX (218).
#[no_mangle]
pub unsafe extern "C" fn cuLibraryLoadData(
    library: *mut *mut c_void,
    code: *const c_void,
    _jit_options: *mut i32,
    _jit_values: *mut *mut c_void,
    _num_jit: u32,
    _lib_options: *mut i32,
    _lib_values: *mut *mut c_void,
    _num_lib: u32,
) -> i32 {
    entry!();
    if library.is_null() || code.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the caller passes an image; the first 4 bytes of any image
    // cudakit prepares are readable (PTX is NUL-terminated, binaries have
    // headers).
    let head = unsafe { std::slice::from_raw_parts(code.cast::<u8>(), 4) };
    let (kernels, globals) = if head == b"\x7fELF" || head == [0x50, 0xED, 0x55, 0xBA] {
        (None, Vec::new())
    } else {
        // SAFETY: not a binary, so NUL-terminated PTX text.
        let text = unsafe { std::ffi::CStr::from_ptr(code.cast()) }.to_string_lossy();
        if !text.contains(".version") {
            return 218; // CUDA_ERROR_INVALID_PTX: no PTX header
        }
        let (k, g) = parse_ptx(&text);
        (Some(k), g)
    };
    let mut l = libs();
    let handle = LIBRARY + 0x1000 * (l.libs.len() + 1);
    l.libs.push(LibRec {
        handle,
        kernels,
        globals,
        loaded: true,
    });
    l.loads += 1;
    // SAFETY: a valid out-pointer.
    unsafe { library.write(handle as *mut c_void) };
    CUDA_SUCCESS
}

impl LibState {
    fn live(&mut self, handle: usize) -> Result<usize, i32> {
        match self
            .libs
            .iter()
            .position(|r| r.handle == handle && r.loaded)
        {
            Some(i) => Ok(i),
            None => {
                self.bad_handles += 1;
                Err(CUDA_ERROR_INVALID_HANDLE)
            }
        }
    }

    /// The library and kernel index of a kernel handle of a loaded library.
    fn kernel(&mut self, kernel: usize) -> Result<(usize, usize), i32> {
        let lib = kernel & !0xFFF;
        let i = self.live(lib)?;
        Ok((i, (kernel & 0xFFF) - 0x10))
    }
}

/// `cuLibraryUnload`: 400 for a handle not loaded (twice, or never).
#[no_mangle]
pub unsafe extern "C" fn cuLibraryUnload(library: *mut c_void) -> i32 {
    entry!();
    let mut l = libs();
    match l.live(library as usize) {
        Ok(i) => {
            l.libs[i].loaded = false;
            l.unloads += 1;
            CUDA_SUCCESS
        }
        Err(rc) => rc,
    }
}

/// `cuLibraryGetKernel`: 500 for a name the PTX does not declare.
#[no_mangle]
pub unsafe extern "C" fn cuLibraryGetKernel(
    kernel: *mut *mut c_void,
    library: *mut c_void,
    name: *const i8,
) -> i32 {
    entry!();
    let mut l = libs();
    let i = match l.live(library as usize) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    // SAFETY: the caller passes a C string.
    let name = unsafe { std::ffi::CStr::from_ptr(name) };
    let index = match &l.libs[i].kernels {
        None => 0,
        Some(kernels) => match kernels.iter().position(|k| k.as_c_str() == name) {
            Some(k) => k,
            None => return CUDA_ERROR_NOT_FOUND,
        },
    };
    // SAFETY: a valid out-pointer.
    unsafe { kernel.write((l.libs[i].handle + 0x10 + index) as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuLibraryGetKernelCount`: the PTX's kernels (0 for other images).
#[no_mangle]
pub unsafe extern "C" fn cuLibraryGetKernelCount(count: *mut u32, library: *mut c_void) -> i32 {
    entry!();
    let mut l = libs();
    let i = match l.live(library as usize) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    let n = l.libs[i].kernels.as_ref().map_or(0, Vec::len);
    // SAFETY: a valid out-pointer.
    unsafe { count.write(n as u32) };
    CUDA_SUCCESS
}

/// `cuLibraryEnumerateKernels`.
#[no_mangle]
pub unsafe extern "C" fn cuLibraryEnumerateKernels(
    kernels: *mut *mut c_void,
    num: u32,
    library: *mut c_void,
) -> i32 {
    entry!();
    let mut l = libs();
    let i = match l.live(library as usize) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    let n = l.libs[i].kernels.as_ref().map_or(0, Vec::len);
    if (num as usize) < n {
        return CUDA_ERROR_INVALID_VALUE;
    }
    for k in 0..n {
        // SAFETY: the caller passes `num` >= n writable slots.
        unsafe {
            kernels
                .add(k)
                .write((l.libs[i].handle + 0x10 + k) as *mut c_void)
        };
    }
    CUDA_SUCCESS
}

/// `cuKernelGetName`: the `.entry` name, alive while the library is.
#[no_mangle]
pub unsafe extern "C" fn cuKernelGetName(name: *mut *const i8, kernel: *mut c_void) -> i32 {
    entry!();
    let mut l = libs();
    let (i, k) = match l.kernel(kernel as usize) {
        Ok(v) => v,
        Err(rc) => return rc,
    };
    let Some(text) = l.libs[i].kernels.as_ref().and_then(|ks| ks.get(k)) else {
        return CUDA_ERROR_INVALID_HANDLE;
    };
    // SAFETY: a valid out-pointer; the string lives in the static record.
    unsafe { name.write(text.as_ptr()) };
    CUDA_SUCCESS
}

/// `cuKernelGetFunction`: a function of the current context (201 without
/// one), which `cuLaunchKernel` refuses in another context.
#[no_mangle]
pub unsafe extern "C" fn cuKernelGetFunction(f: *mut *mut c_void, kernel: *mut c_void) -> i32 {
    entry!();
    let cur = current();
    let mut l = libs();
    if let Err(rc) = l.kernel(kernel as usize) {
        return rc;
    }
    let mut s = state();
    if cur == 0 {
        return s.refuse(reason::WRONG_CONTEXT);
    }
    let handle = KERNEL_FUNCTION + (kernel as usize) * 0x10 + (cur - CONTEXT) / 0x1000;
    if !s.functions.iter().any(|&(h, _)| h == handle) {
        s.functions.push((handle, cur));
    }
    l.kernel_functions += 1;
    // SAFETY: a valid out-pointer.
    unsafe { f.write(handle as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuKernelGetParamInfo`: the layout set by `stub_set_params`, for a
/// kernel of a loaded library.
#[no_mangle]
pub unsafe extern "C" fn cuKernelGetParamInfo(
    kernel: *mut c_void,
    index: usize,
    offset: *mut usize,
    size: *mut usize,
) -> i32 {
    entry!();
    if let Err(rc) = libs().kernel(kernel as usize) {
        return rc;
    }
    let s = state();
    let Some(&(o, z)) = s.params.get(index) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    // SAFETY: valid out-pointers from the caller.
    unsafe {
        offset.write(o);
        size.write(z);
    }
    CUDA_SUCCESS
}

fn library_variable(
    dptr: *mut u64,
    bytes: *mut usize,
    library: *mut c_void,
    name: *const i8,
) -> i32 {
    if current() == 0 {
        return refused(reason::WRONG_CONTEXT);
    }
    let mut l = libs();
    let i = match l.live(library as usize) {
        Ok(i) => i,
        Err(rc) => return rc,
    };
    // SAFETY: the caller passes a C string.
    let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy();
    let Some(g) = l.libs[i].globals.iter().position(|(n, _)| *n == name) else {
        return CUDA_ERROR_NOT_FOUND;
    };
    let address = 0xA000_0000 + (l.libs[i].handle as u64) * 0x10 + (g as u64) * 0x100;
    // SAFETY: valid out-pointers from the caller.
    unsafe {
        dptr.write(address);
        bytes.write(l.libs[i].globals[g].1);
    }
    CUDA_SUCCESS
}

/// `cuLibraryGetGlobal`: a PTX `.global`/`.const` variable (201 with no
/// current context, 500 for another name).
#[no_mangle]
pub unsafe extern "C" fn cuLibraryGetGlobal(
    dptr: *mut u64,
    bytes: *mut usize,
    library: *mut c_void,
    name: *const i8,
) -> i32 {
    entry!();
    library_variable(dptr, bytes, library, name)
}

/// `cuLibraryGetManaged`: as `cuLibraryGetGlobal`.
#[no_mangle]
pub unsafe extern "C" fn cuLibraryGetManaged(
    dptr: *mut u64,
    bytes: *mut usize,
    library: *mut c_void,
    name: *const i8,
) -> i32 {
    entry!();
    library_variable(dptr, bytes, library, name)
}

/// Library counters: loads, unloads, calls with a handle not loaded (400),
/// `cuKernelGetFunction` calls, and libraries loaded now.
#[no_mangle]
pub unsafe extern "C" fn stub_library_counts(out: *mut u64) {
    let l = libs();
    let live = l.libs.iter().filter(|r| r.loaded).count() as u64;
    let v = [l.loads, l.unloads, l.bad_handles, l.kernel_functions, live];
    // SAFETY: the test passes 5 writable u64s.
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), out, 5) };
}

// ---- Virtual memory management (cuMemAddressReserve, cuMemCreate, ...) ----
//
// Reservations hand out fake addresses from 0x7F00_0000_0000 upwards;
// physical allocations are numbered handles (no memory behind them, so
// copies into mapped ranges move nothing, as for cuMemAlloc memory). The
// driver's rules that cudakit's bookkeeping depends on are checked, each a
// CUDA_ERROR_INVALID_VALUE (1) counted in `stub_vmm_counts`: sizes,
// addresses and offsets in whole multiples of the granularity (2 MiB unless
// `stub_set_vmm_granularity` says otherwise); a map only inside a
// reservation, only over unmapped addresses, within its handle; access set
// only on mapped ranges; an unmap only of whole mappings; an address free
// only of a whole reservation with nothing mapped in it; a release only of
// a live handle. Reservations, creates and unmaps are potentially unsafe
// during capture (900). `stub_fail_next_mem_create` makes the next
// `cuMemCreate` fail (CUDA_ERROR_OUT_OF_MEMORY, 2).

struct VmmState {
    granularity: usize,
    next_address: u64,
    next_handle: u64,
    /// (base, size).
    reservations: Vec<(u64, usize)>,
    /// (handle, size).
    handles: Vec<(u64, usize)>,
    /// (address, size, handle).
    mappings: Vec<(u64, usize, u64)>,
    /// (address, size, devices) of each cuMemSetAccess.
    access: Vec<(u64, usize, Vec<i32>)>,
    creates: u64,
    releases: u64,
    maps: u64,
    unmaps: u64,
    address_frees: u64,
    invalid: u64,
    fail_next_create: bool,
}

static VMM: Mutex<VmmState> = Mutex::new(VmmState {
    granularity: 2 << 20,
    next_address: 0x7F00_0000_0000,
    next_handle: 0x100,
    reservations: Vec::new(),
    handles: Vec::new(),
    mappings: Vec::new(),
    access: Vec::new(),
    creates: 0,
    releases: 0,
    maps: 0,
    unmaps: 0,
    address_frees: 0,
    invalid: 0,
    fail_next_create: false,
});

fn vmm() -> MutexGuard<'static, VmmState> {
    match VMM.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

impl VmmState {
    fn invalid(&mut self) -> i32 {
        self.invalid += 1;
        CUDA_ERROR_INVALID_VALUE
    }

    fn aligned(&self, v: u64) -> bool {
        v % self.granularity as u64 == 0
    }
}

/// `CUmemAllocationProp`, as far as the stand-in reads it.
#[derive(Debug)]
#[repr(C)]
pub struct AllocationProp {
    kind: i32,
    handle_types: i32,
    location_type: i32,
    location_id: i32,
    win32: *mut c_void,
    flags: [u8; 8],
}

/// A pinned allocation on a device the stand-in has.
fn prop_ok(prop: *const AllocationProp) -> bool {
    if prop.is_null() {
        return false;
    }
    // SAFETY: a non-null pointer to the caller's property struct.
    let p = unsafe { &*prop };
    p.kind == 1 && p.location_type == 1 && p.location_id >= 0 && p.location_id < 4
}

/// Sets the granularity `cuMemGetAllocationGranularity` reports.
#[no_mangle]
pub extern "C" fn stub_set_vmm_granularity(bytes: usize) {
    vmm().granularity = bytes.max(1);
}

/// Makes the next `cuMemCreate` fail with CUDA_ERROR_OUT_OF_MEMORY.
#[no_mangle]
pub extern "C" fn stub_fail_next_mem_create() {
    vmm().fail_next_create = true;
}

/// The devices of the last `cuMemSetAccess` into `out` (capacity `cap`);
/// returns how many there were.
#[no_mangle]
pub unsafe extern "C" fn stub_last_access(out: *mut i32, cap: usize) -> usize {
    let v = vmm();
    let Some((_, _, devices)) = v.access.last() else {
        return 0;
    };
    let n = devices.len().min(cap);
    // SAFETY: the test passes `cap` writable i32s.
    unsafe { std::ptr::copy_nonoverlapping(devices.as_ptr(), out, n) };
    devices.len()
}

/// Virtual-memory counters: live reservations, live mappings, live
/// handles, creates, releases, maps, unmaps, access settings, address
/// frees, refused calls (1).
#[no_mangle]
pub unsafe extern "C" fn stub_vmm_counts(out: *mut u64) {
    let v = vmm();
    let c = [
        v.reservations.len() as u64,
        v.mappings.len() as u64,
        v.handles.len() as u64,
        v.creates,
        v.releases,
        v.maps,
        v.unmaps,
        v.access.len() as u64,
        v.address_frees,
        v.invalid,
    ];
    // SAFETY: the test passes 10 writable u64s.
    unsafe { std::ptr::copy_nonoverlapping(c.as_ptr(), out, c.len()) };
}

/// `cuMemGetAllocationGranularity`: the stand-in's granularity, for a
/// pinned device allocation.
#[no_mangle]
pub unsafe extern "C" fn cuMemGetAllocationGranularity(
    granularity: *mut usize,
    prop: *const AllocationProp,
    _option: i32,
) -> i32 {
    entry!();
    let mut v = vmm();
    if granularity.is_null() || !prop_ok(prop) {
        return v.invalid();
    }
    // SAFETY: a valid out-pointer.
    unsafe { granularity.write(v.granularity) };
    CUDA_SUCCESS
}

/// `cuMemAddressReserve`: a fake range, `size` a multiple of the granularity.
#[no_mangle]
pub unsafe extern "C" fn cuMemAddressReserve(
    ptr: *mut u64,
    size: usize,
    _alignment: usize,
    _addr: u64,
    _flags: u64,
) -> i32 {
    entry!();
    if let Err(rc) = state().unsafe_call() {
        return rc;
    }
    let mut v = vmm();
    if ptr.is_null() || size == 0 || !v.aligned(size as u64) {
        return v.invalid();
    }
    let base = v.next_address;
    v.next_address += size as u64 + v.granularity as u64;
    v.reservations.push((base, size));
    // SAFETY: a valid out-pointer.
    unsafe { ptr.write(base) };
    CUDA_SUCCESS
}

/// `cuMemAddressFree`: a whole reservation with nothing mapped in it.
#[no_mangle]
pub unsafe extern "C" fn cuMemAddressFree(ptr: u64, size: usize) -> i32 {
    entry!();
    if let Err(rc) = state().unsafe_call() {
        return rc;
    }
    let mut v = vmm();
    let Some(i) = v.reservations.iter().position(|&r| r == (ptr, size)) else {
        return v.invalid();
    };
    let end = ptr + size as u64;
    if v.mappings.iter().any(|&(a, _, _)| a >= ptr && a < end) {
        return v.invalid();
    }
    v.reservations.swap_remove(i);
    v.address_frees += 1;
    CUDA_SUCCESS
}

/// `cuMemCreate`: a numbered handle of `size` bytes (a multiple of the
/// granularity), for a pinned device allocation.
#[no_mangle]
pub unsafe extern "C" fn cuMemCreate(
    handle: *mut u64,
    size: usize,
    prop: *const AllocationProp,
    _flags: u64,
) -> i32 {
    entry!();
    if let Err(rc) = state().unsafe_call() {
        return rc;
    }
    let mut v = vmm();
    if std::mem::take(&mut v.fail_next_create) {
        return 2; // CUDA_ERROR_OUT_OF_MEMORY
    }
    if handle.is_null() || size == 0 || !v.aligned(size as u64) || !prop_ok(prop) {
        return v.invalid();
    }
    let h = v.next_handle;
    v.next_handle += 1;
    v.handles.push((h, size));
    v.creates += 1;
    // SAFETY: `prop_ok` checked it is a non-null property struct.
    if unsafe { &*prop }.handle_types & 1 != 0 {
        drop(v);
        ipc().shareable.push(h);
    }
    // SAFETY: a valid out-pointer.
    unsafe { handle.write(h) };
    CUDA_SUCCESS
}

/// `cuMemRelease`: a live handle (the stand-in, stricter than the driver,
/// also refuses one still mapped, so that a release before its unmap shows).
#[no_mangle]
pub unsafe extern "C" fn cuMemRelease(handle: u64) -> i32 {
    entry!();
    let mut v = vmm();
    let Some(i) = v.handles.iter().position(|&(h, _)| h == handle) else {
        return v.invalid();
    };
    if v.mappings.iter().any(|&(_, _, h)| h == handle) {
        return v.invalid();
    }
    v.handles.swap_remove(i);
    v.releases += 1;
    CUDA_SUCCESS
}

/// `cuMemMap`: inside a reservation, over unmapped addresses, aligned,
/// within the handle.
#[no_mangle]
pub unsafe extern "C" fn cuMemMap(
    ptr: u64,
    size: usize,
    offset: usize,
    handle: u64,
    _flags: u64,
) -> i32 {
    entry!();
    let mut v = vmm();
    let end = ptr + size as u64;
    let in_reservation = v
        .reservations
        .iter()
        .any(|&(b, s)| ptr >= b && end <= b + s as u64);
    let handle_ok = v
        .handles
        .iter()
        .any(|&(h, s)| h == handle && offset + size <= s);
    let overlaps = v
        .mappings
        .iter()
        .any(|&(a, s, _)| ptr < a + s as u64 && a < end);
    if size == 0
        || !v.aligned(ptr)
        || !v.aligned(size as u64)
        || !v.aligned(offset as u64)
        || !in_reservation
        || !handle_ok
        || overlaps
    {
        return v.invalid();
    }
    v.mappings.push((ptr, size, handle));
    v.maps += 1;
    CUDA_SUCCESS
}

/// `cuMemUnmap`: whole mappings only (one or more, contiguous, from `ptr`).
#[no_mangle]
pub unsafe extern "C" fn cuMemUnmap(ptr: u64, size: usize) -> i32 {
    entry!();
    let mut v = vmm();
    let end = ptr + size as u64;
    let mut at = ptr;
    let mut covered = Vec::new();
    while at < end {
        match v.mappings.iter().position(|&(a, _, _)| a == at) {
            Some(i) => {
                at += v.mappings[i].1 as u64;
                covered.push(i);
            }
            None => break,
        }
    }
    if at != end || covered.is_empty() {
        return v.invalid();
    }
    covered.sort_unstable();
    for i in covered.into_iter().rev() {
        v.mappings.swap_remove(i);
    }
    v.unmaps += 1;
    CUDA_SUCCESS
}

/// `CUmemAccessDesc`, as the stand-in reads it.
#[derive(Debug)]
#[repr(C)]
pub struct AccessDesc {
    location_type: i32,
    location_id: i32,
    flags: i32,
}

/// `cuMemSetAccess`: a wholly mapped range, device locations,
/// read-write or read access.
#[no_mangle]
pub unsafe extern "C" fn cuMemSetAccess(
    ptr: u64,
    size: usize,
    desc: *const AccessDesc,
    count: usize,
) -> i32 {
    entry!();
    let mut v = vmm();
    if desc.is_null() || count == 0 {
        return v.invalid();
    }
    let mut devices = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: the caller passes `count` descriptors.
        let d = unsafe { &*desc.add(i) };
        if d.location_type != 1 || !(d.flags == 1 || d.flags == 3) {
            return v.invalid();
        }
        devices.push(d.location_id);
    }
    let end = ptr + size as u64;
    let mut at = ptr;
    while at < end {
        match v
            .mappings
            .iter()
            .find(|&&(a, s, _)| at >= a && at < a + s as u64)
        {
            Some(&(a, s, _)) => at = a + s as u64,
            None => return v.invalid(),
        }
    }
    v.access.push((ptr, size, devices));
    CUDA_SUCCESS
}

/// `cuDeviceCanAccessPeer`: every two distinct devices of the stand-in can
/// reach each other; a device cannot be its own peer (0).
#[no_mangle]
pub unsafe extern "C" fn cuDeviceCanAccessPeer(can: *mut i32, dev: i32, peer: i32) -> i32 {
    entry!();
    let n = state().device_count;
    if can.is_null() || !(0..n).contains(&dev) || !(0..n).contains(&peer) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a valid out-pointer.
    unsafe { can.write(i32::from(dev != peer)) };
    CUDA_SUCCESS
}

/// `cuCtxEnablePeerAccess`: accepted (the stand-in has no memory to map).
#[no_mangle]
pub unsafe extern "C" fn cuCtxEnablePeerAccess(_peer: *mut c_void, flags: u32) -> i32 {
    if flags != 0 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    CUDA_SUCCESS
}

/// `cuCtxDisablePeerAccess`: accepted.
#[no_mangle]
pub unsafe extern "C" fn cuCtxDisablePeerAccess(_peer: *mut c_void) -> i32 {
    CUDA_SUCCESS
}

// ---------------------------------------------------------------------------
// Green contexts (left out entirely by the `omit-green` feature, as a driver
// before CUDA 12.4 would be).
//
// A `CUdevResource` is 144 bytes: the type at 0, the driver's own 92 bytes
// from 4 (here: a tag at 4 saying whether the resource may be split: 1 for a
// query's answer, 2 for a split's output, which CUDA does not split again
// before a green context is made of it), then `smCount`,
// `minSmPartitionSize` and `smCoscheduledAlignment` at 96, 100 and 104.
// ---------------------------------------------------------------------------

/// CUDA_ERROR_INVALID_CONTEXT.
#[cfg(not(feature = "omit-green"))]
const CUDA_ERROR_INVALID_CONTEXT: i32 = 201;
/// CUDA_ERROR_INVALID_RESOURCE_TYPE.
#[cfg(not(feature = "omit-green"))]
const CUDA_ERROR_INVALID_RESOURCE_TYPE: i32 = 914;
/// CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION.
#[cfg(not(feature = "omit-green"))]
const CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION: i32 = 915;

/// What the stand-in knows of green contexts.
#[cfg_attr(feature = "omit-green", allow(dead_code))]
struct GreenStub {
    /// Minimum partition size and alignment reported (0 and 0 model a 12.x
    /// driver, which reports neither; `stub_set_green`).
    min: u32,
    align: u32,
    report: bool,
    /// Descriptors: (handle, SMs).
    descs: Vec<(usize, u32)>,
    /// Live green contexts: (handle, its CUcontext, SMs, synchronized since
    /// made or last used).
    live: Vec<(usize, usize, u32, bool)>,
    next: usize,
    /// Streams destroyed so far (`cuStreamDestroy_v2`).
    streams_destroyed: Vec<usize>,
    /// Counters read by `stub_green_counts`.
    created: u64,
    destroyed: u64,
    destroyed_with_live: u64,
    destroyed_unsynced: u64,
    splits: u64,
    direct_streams: u64,
}

static GREEN: Mutex<GreenStub> = Mutex::new(GreenStub {
    min: 8,
    align: 8,
    report: true,
    descs: Vec::new(),
    live: Vec::new(),
    next: 0x6_0000,
    streams_destroyed: Vec::new(),
    created: 0,
    destroyed: 0,
    destroyed_with_live: 0,
    destroyed_unsynced: 0,
    splits: 0,
    direct_streams: 0,
});

fn green() -> MutexGuard<'static, GreenStub> {
    match GREEN.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// Sets the minimum partition size and alignment the stand-in reports and
/// splits by; `report == false` reports neither (as a 12.x driver).
#[no_mangle]
pub extern "C" fn stub_set_green(min: u32, align: u32, report: bool) {
    let mut g = green();
    g.min = min;
    g.align = align;
    g.report = report;
}

/// Writes [created, live, destroyed, destroyed while a stream or an
/// allocation of theirs was live, destroyed without a synchronize after
/// their last work, splits, streams made by cuGreenCtxStreamCreate].
#[no_mangle]
pub unsafe extern "C" fn stub_green_counts(out: *mut u64) {
    let g = green();
    let v = [
        g.created,
        g.live.len() as u64,
        g.destroyed,
        g.destroyed_with_live,
        g.destroyed_unsynced,
        g.splits,
        g.direct_streams,
    ];
    // SAFETY: the caller passes room for 7 values.
    unsafe { std::ptr::copy_nonoverlapping(v.as_ptr(), out, v.len()) };
}

/// Records a stream's destruction (for the green-context checks).
fn stream_destroyed(stream: usize) {
    green().streams_destroyed.push(stream);
}

/// Marks the green context whose CUcontext is `ctx` as synchronized (a
/// successful `cuCtxSynchronize` with it current), or as used again.
fn green_synced(ctx: usize, synced: bool) {
    if let Some(e) = green().live.iter_mut().find(|e| e.1 == ctx) {
        e.3 = synced;
    }
}

/// Writes an SM resource: `tag` 1 (may be split) or 2 (a split's output).
///
/// # Safety
/// `res` points to 144 writable bytes.
#[cfg(not(feature = "omit-green"))]
unsafe fn write_sm_resource(res: *mut u8, tag: u32, sms: u32, min: u32, align: u32) {
    // SAFETY: 144 writable bytes (the caller's contract); unaligned writes.
    unsafe {
        std::ptr::write_bytes(res, 0, 144);
        res.cast::<i32>().write_unaligned(1);
        res.add(4).cast::<u32>().write_unaligned(tag);
        res.add(96).cast::<u32>().write_unaligned(sms);
        res.add(100).cast::<u32>().write_unaligned(min);
        res.add(104).cast::<u32>().write_unaligned(align);
    }
}

/// Reads (type, tag, SMs) of a resource.
///
/// # Safety
/// `res` points to 144 readable bytes.
#[cfg(not(feature = "omit-green"))]
unsafe fn read_sm_resource(res: *const u8) -> (i32, u32, u32) {
    // SAFETY: 144 readable bytes (the caller's contract).
    unsafe {
        (
            res.cast::<i32>().read_unaligned(),
            res.add(4).cast::<u32>().read_unaligned(),
            res.add(96).cast::<u32>().read_unaligned(),
        )
    }
}

/// The reported (min, alignment), or zeros.
#[cfg(not(feature = "omit-green"))]
fn reported(g: &GreenStub) -> (u32, u32) {
    if g.report {
        (g.min, g.align)
    } else {
        (0, 0)
    }
}

/// `cuDeviceGetDevResource`: the device's SMs (its multiprocessor count).
#[cfg(not(feature = "omit-green"))]
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetDevResource(device: i32, res: *mut u8, kind: i32) -> i32 {
    entry!();
    if res.is_null() || !(0..state().device_count).contains(&device) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if kind != 1 {
        return CUDA_ERROR_INVALID_RESOURCE_TYPE;
    }
    let mut sms = 0;
    // SAFETY: a valid out-pointer.
    unsafe { cuDeviceGetAttribute(&mut sms, 16, device) };
    let (min, align) = reported(&green());
    // SAFETY: the caller passes a whole CUdevResource.
    unsafe { write_sm_resource(res, 1, sms as u32, min, align) };
    CUDA_SUCCESS
}

/// `cuGreenCtxGetDevResource`: the green context's SMs.
#[cfg(not(feature = "omit-green"))]
#[no_mangle]
pub unsafe extern "C" fn cuGreenCtxGetDevResource(gctx: usize, res: *mut u8, kind: i32) -> i32 {
    entry!();
    let g = green();
    let Some(&(_, _, sms, _)) = g.live.iter().find(|e| e.0 == gctx) else {
        return CUDA_ERROR_INVALID_CONTEXT;
    };
    if res.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    if kind != 1 {
        return CUDA_ERROR_INVALID_RESOURCE_TYPE;
    }
    let (min, align) = reported(&g);
    // SAFETY: the caller passes a whole CUdevResource.
    unsafe { write_sm_resource(res, 1, sms, min, align) };
    CUDA_SUCCESS
}

/// `cuDevSmResourceSplitByCount`: groups of `minCount` rounded up to the
/// minimum and the alignment (2 and 2 with IGNORE_SM_COSCHEDULING), as many
/// as asked and as fit; the rest is the remainder. A split's output is
/// refused as input (915), as CUDA does.
#[cfg(not(feature = "omit-green"))]
#[no_mangle]
pub unsafe extern "C" fn cuDevSmResourceSplitByCount(
    result: *mut u8,
    groups: *mut u32,
    input: *const u8,
    remaining: *mut u8,
    flags: u32,
    min_count: u32,
) -> i32 {
    entry!();
    if groups.is_null() || input.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a whole CUdevResource (the caller's contract).
    let (kind, tag, sms) = unsafe { read_sm_resource(input) };
    if kind != 1 {
        return CUDA_ERROR_INVALID_RESOURCE_TYPE;
    }
    if tag != 1 {
        return CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION;
    }
    if min_count > sms {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut g = green();
    let (min, align) = if flags & 1 != 0 {
        (2, 2)
    } else {
        (g.min.max(1), g.align.max(1))
    };
    let size = min_count.max(min).div_ceil(align) * align;
    let fit = sms / size;
    if result.is_null() {
        // SAFETY: a valid pointer (checked above).
        unsafe { groups.write(fit) };
        return CUDA_SUCCESS;
    }
    // SAFETY: a valid pointer.
    let made = unsafe { groups.read() }.min(fit);
    let (rmin, ralign) = reported(&g);
    for i in 0..made as usize {
        // SAFETY: `result` has room for the count the caller passed.
        unsafe { write_sm_resource(result.add(144 * i), 2, size, rmin, ralign) };
    }
    if !remaining.is_null() {
        // SAFETY: a whole CUdevResource.
        unsafe { write_sm_resource(remaining, 2, sms - made * size, rmin, ralign) };
    }
    // SAFETY: a valid pointer.
    unsafe { groups.write(made) };
    g.splits += 1;
    CUDA_SUCCESS
}

/// `cuDevResourceGenerateDesc`: a descriptor of the resources' SMs.
#[cfg(not(feature = "omit-green"))]
#[no_mangle]
pub unsafe extern "C" fn cuDevResourceGenerateDesc(
    desc: *mut usize,
    res: *const u8,
    n: u32,
) -> i32 {
    entry!();
    if desc.is_null() || res.is_null() || n == 0 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut sms = 0;
    for i in 0..n as usize {
        // SAFETY: `n` whole resources (the caller's contract).
        let (kind, _, count) = unsafe { read_sm_resource(res.add(144 * i)) };
        if kind != 1 {
            return CUDA_ERROR_INVALID_RESOURCE_TYPE;
        }
        sms += count;
    }
    let mut g = green();
    g.next += 0x100;
    let handle = g.next;
    g.descs.push((handle, sms));
    // SAFETY: a valid out-pointer.
    unsafe { desc.write(handle) };
    CUDA_SUCCESS
}

/// `cuGreenCtxCreate`: a green context of the descriptor's SMs; the flag
/// CU_GREEN_CTX_DEFAULT_STREAM is required (CUDA 13.0).
#[cfg(not(feature = "omit-green"))]
#[no_mangle]
pub unsafe extern "C" fn cuGreenCtxCreate(
    out: *mut usize,
    desc: usize,
    device: i32,
    flags: u32,
) -> i32 {
    entry!();
    let mut g = green();
    let Some(&(_, sms)) = g.descs.iter().find(|d| d.0 == desc) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    if out.is_null() || flags != 1 || !(0..4).contains(&device) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    g.next += 0x100;
    let handle = g.next;
    g.live.push((handle, handle + 0x10, sms, true));
    g.created += 1;
    // SAFETY: a valid out-pointer.
    unsafe { out.write(handle) };
    CUDA_SUCCESS
}

/// `cuCtxFromGreenCtx`: the green context's own CUcontext value.
#[cfg(not(feature = "omit-green"))]
#[no_mangle]
pub unsafe extern "C" fn cuCtxFromGreenCtx(ctx: *mut usize, gctx: usize) -> i32 {
    entry!();
    let Some(&(_, c, _, _)) = green().live.iter().find(|e| e.0 == gctx) else {
        return CUDA_ERROR_INVALID_CONTEXT;
    };
    if ctx.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a valid out-pointer.
    unsafe { ctx.write(c) };
    CUDA_SUCCESS
}

/// `cuGreenCtxStreamCreate`: a stream of the green context, whatever is
/// current; CU_STREAM_NON_BLOCKING is required.
#[cfg(not(feature = "omit-green"))]
#[no_mangle]
pub unsafe extern "C" fn cuGreenCtxStreamCreate(
    stream: *mut *mut c_void,
    gctx: usize,
    flags: u32,
    _priority: i32,
) -> i32 {
    entry!();
    let ctx = {
        let mut g = green();
        let Some(&(_, c, _, _)) = g.live.iter().find(|e| e.0 == gctx) else {
            return CUDA_ERROR_INVALID_CONTEXT;
        };
        if flags & 1 == 0 || stream.is_null() {
            return CUDA_ERROR_INVALID_VALUE;
        }
        g.direct_streams += 1;
        c
    };
    let mut s = state();
    s.next_stream += 0x100;
    let handle = s.next_stream;
    s.streams.push(StreamRec {
        handle,
        ctx,
        blocking: false,
        queued: 0,
        run: 0,
    });
    // SAFETY: a valid out-pointer.
    unsafe { stream.write(handle as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuStreamGetGreenCtx`: the green context a stream was made in, or null.
#[cfg(not(feature = "omit-green"))]
#[no_mangle]
pub unsafe extern "C" fn cuStreamGetGreenCtx(stream: usize, out: *mut usize) -> i32 {
    entry!();
    let ctx = if is_legacy(stream) {
        current()
    } else {
        match state().streams.iter().find(|r| r.handle == stream) {
            Some(r) => r.ctx,
            None => return CUDA_ERROR_INVALID_VALUE,
        }
    };
    let g = green().live.iter().find(|e| e.1 == ctx).map_or(0, |e| e.0);
    // SAFETY: a valid out-pointer.
    unsafe { out.write(g) };
    CUDA_SUCCESS
}

/// `cuGreenCtxDestroy`: counts a destruction while a stream or an
/// allocation made in the green context is live, or without a
/// synchronize of it since its last work.
#[cfg(not(feature = "omit-green"))]
#[no_mangle]
pub unsafe extern "C" fn cuGreenCtxDestroy(gctx: usize) -> i32 {
    entry!();
    let s = state();
    let mut g = green();
    let Some(i) = g.live.iter().position(|e| e.0 == gctx) else {
        return CUDA_ERROR_INVALID_CONTEXT;
    };
    let (_, ctx, _, synced) = g.live.remove(i);
    let live_streams = s
        .streams
        .iter()
        .any(|r| r.ctx == ctx && !g.streams_destroyed.contains(&r.handle));
    let live_allocations = s
        .allocation_ctx
        .iter()
        .any(|&(a, c)| c == ctx && !s.frees.contains(&a));
    if live_streams || live_allocations {
        g.destroyed_with_live += 1;
    }
    if !synced {
        g.destroyed_unsynced += 1;
    }
    g.destroyed += 1;
    CUDA_SUCCESS
}

// ---- Inter-process sharing (cuIpc*, shareable handles, pool export) ----
//
// Descriptors are real: the stand-in makes a socket pair per export, keeps
// one end, and hands the other to the caller; an import recognises a
// descriptor by the inode of the file it refers to (the same in every
// process and after SCM_RIGHTS), so a descriptor of anything else is
// refused with CUDA_ERROR_INVALID_VALUE, as an unknown handle.

struct IpcState {
    /// Handles made by cuMemCreate with POSIX descriptors allowed.
    shareable: Vec<u64>,
    /// Exported descriptors: (inode, allocation size or 0 for a pool, the
    /// end the stand-in keeps).
    exported: Vec<(u64, usize, std::os::unix::net::UnixStream)>,
    /// Pools: (handle, exportable, imported).
    pools: Vec<(usize, bool, bool)>,
    next_pool: usize,
    /// Live opens of legacy handles (addresses).
    /// Open legacy mappings: (address, bytes of the exported allocation).
    legacy_open: Vec<(u64, usize)>,
    /// Live pointers imported from pools.
    pool_pointers: Vec<u64>,
    next_address: u64,
    legacy_opens: u64,
    legacy_closes: u64,
    shareable_exports: u64,
    shareable_imports: u64,
    bad_descriptors: u64,
    pool_imports: u64,
    pool_pointer_imports: u64,
    events_opened: u64,
    /// The code the next cuIpcCloseMemHandle returns (0: none).
    fail_next_close: i32,
}

static IPC: Mutex<IpcState> = Mutex::new(IpcState {
    shareable: Vec::new(),
    exported: Vec::new(),
    pools: Vec::new(),
    next_pool: 0x72_0000,
    legacy_open: Vec::new(),
    pool_pointers: Vec::new(),
    next_address: 0x6A00_0000_0000,
    legacy_opens: 0,
    legacy_closes: 0,
    shareable_exports: 0,
    shareable_imports: 0,
    bad_descriptors: 0,
    pool_imports: 0,
    pool_pointer_imports: 0,
    events_opened: 0,
    fail_next_close: 0,
});

/// Locked after `state()` where both are held, never before it.
fn ipc() -> MutexGuard<'static, IpcState> {
    match IPC.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

/// 64 opaque bytes passed by value (`CUipcMemHandle`, `CUipcEventHandle`).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct Opaque64 {
    bytes: [u8; 64],
}

fn tagged(tag: &[u8; 8], value: u64) -> [u8; 64] {
    let mut b = [0u8; 64];
    b[..8].copy_from_slice(tag);
    b[8..16].copy_from_slice(&value.to_le_bytes());
    b
}

fn untag(tag: &[u8; 8], b: &[u8; 64]) -> Option<u64> {
    if &b[..8] != tag {
        return None;
    }
    let mut v = [0u8; 8];
    v.copy_from_slice(&b[8..16]);
    Some(u64::from_le_bytes(v))
}

/// The inode of the open file `fd` refers to, if it is open.
fn inode_of(fd: i32) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    if fd < 0 {
        return None;
    }
    // SAFETY: the caller of the entry point passes an open descriptor (the
    // C API's contract); it is only duplicated here, not closed.
    let borrowed = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) };
    let owned = borrowed.try_clone_to_owned().ok()?;
    std::fs::File::from(owned).metadata().ok().map(|m| m.ino())
}

/// A new exported descriptor of `size` (0 for a pool): its number, owned
/// by the caller from now on.
fn export_descriptor(size: usize) -> Option<i32> {
    use std::os::fd::{AsRawFd, IntoRawFd};
    let (keep, give) = std::os::unix::net::UnixStream::pair().ok()?;
    let ino = inode_of(give.as_raw_fd())?;
    ipc().exported.push((ino, size, keep));
    Some(give.into_raw_fd())
}

/// `cuDeviceGetUuid_v2`: 16 bytes of 0x5A, the last one the ordinal.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetUuid_v2(uuid: *mut u8, dev: i32) -> i32 {
    entry!();
    if uuid.is_null() || dev < 0 || dev >= state().device_count {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut b = [0x5Au8; 16];
    b[15] = dev as u8;
    // SAFETY: a valid out-pointer to a 16-byte CUuuid.
    unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), uuid, 16) };
    CUDA_SUCCESS
}

/// `cuIpcGetMemHandle`: the base of a live `cuMemAlloc_v2` allocation.
#[no_mangle]
pub unsafe extern "C" fn cuIpcGetMemHandle(handle: *mut Opaque64, dptr: u64) -> i32 {
    entry!();
    let s = state();
    let live = s.allocations.iter().any(|&(a, _)| a == dptr) && !s.frees.contains(&dptr);
    drop(s);
    if handle.is_null() || !live {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a valid out-pointer.
    unsafe {
        handle.write(Opaque64 {
            bytes: tagged(b"STUBIPCM", dptr),
        })
    };
    CUDA_SUCCESS
}

/// `cuIpcOpenMemHandle_v2`: a handle of the stand-in, flags exactly
/// `CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS`, a current context; opens at a
/// fresh address.
#[no_mangle]
pub unsafe extern "C" fn cuIpcOpenMemHandle_v2(ptr: *mut u64, handle: Opaque64, flags: u32) -> i32 {
    entry!();
    if current() == 0 {
        return refused(reason::WRONG_CONTEXT);
    }
    let Some(exported) = untag(b"STUBIPCM", &handle.bytes) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    if ptr.is_null() || flags != 1 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // The exported allocation's size (the exporter is this process's stand-in
    // state); a handle of no live allocation opens nothing.
    let bytes = state()
        .allocations
        .iter()
        .rev()
        .find(|&&(a, _)| a == exported)
        .map(|&(_, b)| b);
    let Some(bytes) = bytes else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    let mut i = ipc();
    let address = i.next_address;
    i.next_address += (bytes as u64).max(1 << 21).next_multiple_of(1 << 21);
    i.legacy_open.push((address, bytes));
    i.legacy_opens += 1;
    // SAFETY: a valid out-pointer.
    unsafe { ptr.write(address) };
    CUDA_SUCCESS
}

/// `cuIpcCloseMemHandle`: an address opened by `cuIpcOpenMemHandle_v2`;
/// the failure set by `stub_fail_next_ipc_close` leaves it open.
#[no_mangle]
pub unsafe extern "C" fn cuIpcCloseMemHandle(dptr: u64) -> i32 {
    entry!();
    let mut i = ipc();
    let fail = std::mem::take(&mut i.fail_next_close);
    if fail != 0 {
        return fail;
    }
    let Some(k) = i.legacy_open.iter().position(|&(a, _)| a == dptr) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    i.legacy_open.swap_remove(k);
    i.legacy_closes += 1;
    CUDA_SUCCESS
}

/// `cuMemGetAddressRange_v2`: the allocation holding `dptr`, of
/// `cuMemAlloc_v2` or a legacy IPC mapping; 1 (invalid value) elsewhere.
#[no_mangle]
pub unsafe extern "C" fn cuMemGetAddressRange_v2(
    base: *mut u64,
    size: *mut usize,
    dptr: u64,
) -> i32 {
    entry!();
    let found = {
        let i = ipc();
        i.legacy_open
            .iter()
            .find(|&&(a, b)| dptr >= a && dptr < a + b.max(1) as u64)
            .copied()
    }
    .or_else(|| {
        let s = state();
        s.allocations
            .iter()
            .rev()
            .find(|&&(a, b)| dptr >= a && dptr < a + b.max(1) as u64 && !s.frees.contains(&a))
            .copied()
    });
    let Some((a, b)) = found else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    if !base.is_null() {
        // SAFETY: a non-null out-pointer from the caller.
        unsafe { base.write(a) };
    }
    if !size.is_null() {
        // SAFETY: a non-null out-pointer from the caller.
        unsafe { size.write(b) };
    }
    CUDA_SUCCESS
}

/// Makes the next `cuIpcCloseMemHandle` return `code` and close nothing.
#[no_mangle]
pub extern "C" fn stub_fail_next_ipc_close(code: i32) {
    ipc().fail_next_close = code;
}

/// `cuIpcGetEventHandle`: a live event.
#[no_mangle]
pub unsafe extern "C" fn cuIpcGetEventHandle(handle: *mut Opaque64, event: *mut c_void) -> i32 {
    entry!();
    let live = state().events.iter().any(|e| e.handle == event as usize);
    if handle.is_null() || !live {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a valid out-pointer.
    unsafe {
        handle.write(Opaque64 {
            bytes: tagged(b"STUBIPCE", event as u64),
        })
    };
    CUDA_SUCCESS
}

/// `cuIpcOpenEventHandle`: a handle of the stand-in; a new event.
#[no_mangle]
pub unsafe extern "C" fn cuIpcOpenEventHandle(event: *mut *mut c_void, handle: Opaque64) -> i32 {
    entry!();
    if untag(b"STUBIPCE", &handle.bytes).is_none() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the caller's out-pointer, passed on.
    let rc = unsafe { cuEventCreate(event, 2) };
    if rc == CUDA_SUCCESS {
        ipc().events_opened += 1;
    }
    rc
}

/// `cuMemExportToShareableHandle`: a live handle made with POSIX
/// descriptors allowed; writes a new descriptor (an `int`).
#[no_mangle]
pub unsafe extern "C" fn cuMemExportToShareableHandle(
    out: *mut c_void,
    handle: u64,
    handle_type: i32,
    flags: u64,
) -> i32 {
    entry!();
    let size = vmm()
        .handles
        .iter()
        .find(|&&(h, _)| h == handle)
        .map(|&(_, s)| s);
    let Some(size) = size else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    if out.is_null() || handle_type != 1 || flags != 0 || !ipc().shareable.contains(&handle) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let Some(fd) = export_descriptor(size) else {
        return 2; // CUDA_ERROR_OUT_OF_MEMORY
    };
    ipc().shareable_exports += 1;
    // SAFETY: for a POSIX descriptor the out-parameter is an `int`.
    unsafe { out.cast::<i32>().write(fd) };
    CUDA_SUCCESS
}

/// `cuMemImportFromShareableHandle`: a descriptor exported by the
/// stand-in (by inode); a new handle of the allocation's size. Any other
/// descriptor is CUDA_ERROR_INVALID_VALUE.
#[no_mangle]
pub unsafe extern "C" fn cuMemImportFromShareableHandle(
    handle: *mut u64,
    os_handle: *mut c_void,
    handle_type: i32,
) -> i32 {
    entry!();
    let fd = os_handle as usize as i32;
    let ino = inode_of(fd);
    let mut i = ipc();
    let size = ino.and_then(|n| {
        i.exported
            .iter()
            .find(|(e, s, _)| *e == n && *s > 0)
            .map(|(_, s, _)| *s)
    });
    let (Some(size), false, 1) = (size, handle.is_null(), handle_type) else {
        i.bad_descriptors += 1;
        return CUDA_ERROR_INVALID_VALUE;
    };
    i.shareable_imports += 1;
    drop(i);
    let mut v = vmm();
    let h = v.next_handle;
    v.next_handle += 1;
    v.handles.push((h, size));
    // SAFETY: a valid out-pointer.
    unsafe { handle.write(h) };
    CUDA_SUCCESS
}

/// `CUmemPoolProps`, as far as the stand-in reads it.
#[derive(Debug)]
#[repr(C)]
pub struct PoolPropsPrefix {
    alloc_type: i32,
    handle_types: i32,
    location_type: i32,
    location_id: i32,
}

/// `cuMemPoolCreate`: a pinned device pool; exportable when its handle
/// types allow POSIX descriptors.
#[no_mangle]
pub unsafe extern "C" fn cuMemPoolCreate(
    pool: *mut *mut c_void,
    props: *const PoolPropsPrefix,
) -> i32 {
    entry!();
    if pool.is_null() || props.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the caller's CUmemPoolProps, which starts with these fields.
    let p = unsafe { &*props };
    if p.alloc_type != 1 || p.location_type != 1 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut i = ipc();
    i.next_pool += 0x10;
    let h = i.next_pool;
    i.pools.push((h, p.handle_types & 1 != 0, false));
    // SAFETY: a valid out-pointer.
    unsafe { pool.write(h as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuMemPoolDestroy`: a pool made or imported here.
#[no_mangle]
pub unsafe extern "C" fn cuMemPoolDestroy(pool: *mut c_void) -> i32 {
    entry!();
    let mut i = ipc();
    let Some(k) = i.pools.iter().position(|&(h, _, _)| h == pool as usize) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    i.pools.swap_remove(k);
    CUDA_SUCCESS
}

/// `cuMemPoolExportToShareableHandle`: an exportable pool; a new
/// descriptor (an `int`).
#[no_mangle]
pub unsafe extern "C" fn cuMemPoolExportToShareableHandle(
    out: *mut c_void,
    pool: *mut c_void,
    handle_type: i32,
    flags: u64,
) -> i32 {
    entry!();
    let exportable = ipc()
        .pools
        .iter()
        .any(|&(h, e, imported)| h == pool as usize && e && !imported);
    if out.is_null() || handle_type != 1 || flags != 0 || !exportable {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let Some(fd) = export_descriptor(0) else {
        return 2; // CUDA_ERROR_OUT_OF_MEMORY
    };
    // SAFETY: for a POSIX descriptor the out-parameter is an `int`.
    unsafe { out.cast::<i32>().write(fd) };
    CUDA_SUCCESS
}

/// `cuMemPoolImportFromShareableHandle`: a pool descriptor exported by the
/// stand-in (by inode); a new imported pool.
#[no_mangle]
pub unsafe extern "C" fn cuMemPoolImportFromShareableHandle(
    pool: *mut *mut c_void,
    os_handle: *mut c_void,
    handle_type: i32,
    flags: u64,
) -> i32 {
    entry!();
    let ino = inode_of(os_handle as usize as i32);
    let mut i = ipc();
    let known = ino.is_some_and(|n| i.exported.iter().any(|(e, s, _)| *e == n && *s == 0));
    if pool.is_null() || handle_type != 1 || flags != 0 || !known {
        i.bad_descriptors += 1;
        return CUDA_ERROR_INVALID_VALUE;
    }
    i.next_pool += 0x10;
    let h = i.next_pool;
    i.pools.push((h, false, true));
    i.pool_imports += 1;
    // SAFETY: a valid out-pointer.
    unsafe { pool.write(h as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuMemPoolExportPointer`: any address (the stand-in does not tell pool
/// allocations apart).
#[no_mangle]
pub unsafe extern "C" fn cuMemPoolExportPointer(out: *mut Opaque64, ptr: u64) -> i32 {
    entry!();
    if out.is_null() || ptr == 0 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a valid out-pointer.
    unsafe {
        out.write(Opaque64 {
            bytes: tagged(b"STUBPPTR", ptr),
        })
    };
    CUDA_SUCCESS
}

/// `cuMemPoolImportPointer`: export data of the stand-in and an imported
/// pool; a fresh address, freed by `cuMemFree_v2`.
#[no_mangle]
pub unsafe extern "C" fn cuMemPoolImportPointer(
    ptr: *mut u64,
    pool: *mut c_void,
    data: *mut Opaque64,
) -> i32 {
    entry!();
    if ptr.is_null() || data.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the caller's 64 bytes of export data.
    let bytes = unsafe { (*data).bytes };
    let mut i = ipc();
    let imported = i
        .pools
        .iter()
        .any(|&(h, _, imported)| h == pool as usize && imported);
    if !imported || untag(b"STUBPPTR", &bytes).is_none() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let address = i.next_address;
    i.next_address += 1 << 21;
    i.pool_pointers.push(address);
    i.pool_pointer_imports += 1;
    // SAFETY: a valid out-pointer.
    unsafe { ptr.write(address) };
    CUDA_SUCCESS
}

/// IPC counters: live legacy opens, legacy opens, legacy closes, shareable
/// exports, shareable imports, refused descriptors, live pools, pool
/// imports, live pool pointers, pool pointer imports, events opened.
#[no_mangle]
pub unsafe extern "C" fn stub_ipc_counts(out: *mut u64) {
    let i = ipc();
    let c = [
        i.legacy_open.len() as u64,
        i.legacy_opens,
        i.legacy_closes,
        i.shareable_exports,
        i.shareable_imports,
        i.bad_descriptors,
        i.pools.len() as u64,
        i.pool_imports,
        i.pool_pointers.len() as u64,
        i.pool_pointer_imports,
        i.events_opened,
    ];
    // SAFETY: the test passes 11 writable u64s.
    unsafe { std::ptr::copy_nonoverlapping(c.as_ptr(), out, c.len()) };
}
