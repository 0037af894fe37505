//! Errors: every `CUresult` and `nvrtcResult` becomes a typed error that
//! names the entry point that produced it.
//!
//! Raw codes are mapped in exactly one place, `error/codes.rs`. Driver results pass
//! through one helper, [`check`], or through a context's check that also
//! records sticky errors (see [`crate::Context`]).

mod codes;
mod debug;
mod nccl;
mod texture;

pub use codes::{CodeText, DriverCode, JitLinkCode, NvrtcCode};
pub use cuda_sys::LoadError;
pub use nccl::{NcclCode, NcclError};
pub use texture::TextureError;

use cuda_sys::{nvrtcResult, CUresult};
use std::fmt;

/// A driver entry point returned an error.
///
/// Displayed as `cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory`;
/// a code newer than CUDA 13.0's `cuda.h` with the name and text the loaded
/// driver gives it (see [`DriverCode::driver_text`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DriverError {
    /// The exported symbol that was called (`cuMemAlloc_v2`).
    pub call: &'static str,
    /// What it returned.
    pub code: DriverCode,
}
impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self { call, code, .. } = self;
        write!(f, "{call}: {code}")
    }
}

impl std::error::Error for DriverError {}

impl DriverError {
    /// Whether the error leaves the context unusable (illegal address,
    /// device assert, launch failure, ...). See [`DriverCode::is_sticky`].
    pub fn is_sticky(&self) -> bool {
        self.code.is_sticky()
    }
}

/// An NVRTC entry point returned an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NvrtcError {
    /// The NVRTC function that was called.
    pub call: &'static str,
    /// What it returned.
    pub code: NvrtcCode,
}
impl fmt::Display for NvrtcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Self { call, code, .. } = self;
        write!(f, "{call}: {code}")
    }
}

impl std::error::Error for NvrtcError {}

/// A launch configuration that the device or the function cannot run.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum LaunchConfigError {
    /// A dimension or count is zero.
    Zero {
        /// Which dimension (`grid.x`, `block.z`, `cluster.y`, ...).
        what: &'static str,
    },
    /// A value exceeds a limit of the device or the function.
    OverLimit {
        /// What was asked for (`block threads`, `dynamic shared memory`, ...).
        what: &'static str,
        /// The value asked for.
        value: u64,
        /// The limit.
        limit: u64,
        /// Where the limit comes from (a device attribute or a function
        /// attribute, by its CUDA name).
        source_of_limit: &'static str,
    },
    /// A cluster dimension does not divide the grid.
    ClusterDoesNotDivideGrid {
        /// `x`, `y` or `z`.
        axis: char,
        /// The grid dimension.
        grid: u32,
        /// The cluster dimension.
        cluster: u32,
    },
}
impl fmt::Display for LaunchConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Zero { what, .. } => write!(
                f,
                "{what} is 0; every grid, block and cluster dimension must be at least 1",
            ),
            Self::OverLimit {
                what,
                value,
                limit,
                source_of_limit,
                ..
            } => write!(
                f,
                "{what} is {value}, over the limit {limit} ({source_of_limit})",
            ),
            Self::ClusterDoesNotDivideGrid {
                axis,
                grid,
                cluster,
                ..
            } => write!(
                f,
                "grid.{axis} = {grid} is not a multiple of cluster.{axis} = {cluster}",
            ),
        }
    }
}

impl std::error::Error for LaunchConfigError {}

/// Everything that can go wrong in cudakit.
///
/// `Debug` reads like `Display`, so that `fn main() -> cudakit::Result<()>`
/// prints the message (with the paths a load tried and the hint on their own
/// lines), then any cause the message lacks under `Caused by:`, as `anyhow`
/// does. `{:#?}` prints the variant and its fields, as a derived `Debug`
/// would.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// libcuda or libnvrtc could not be loaded.
    Load(LoadError),
    /// A driver entry point failed.
    Driver(DriverError),
    /// An NVRTC entry point failed.
    Nvrtc(NvrtcError),
    /// NVRTC rejected the program; the log has the file:line diagnostics.
    Compile {
        /// The program's name (as passed to `nvrtcCreateProgram`).
        program: String,
        /// The options it was compiled with.
        options: Vec<String>,
        /// What `nvrtcCompileProgram` returned.
        code: NvrtcCode,
        /// NVRTC's log.
        log: String,
    },
    /// The driver's JIT rejected a PTX or CUBIN image; the log says why.
    ModuleLoad {
        /// The entry point (`cuModuleLoadDataEx`).
        call: &'static str,
        /// What it returned.
        code: DriverCode,
        /// The JIT error log (and info log, when there is one).
        log: String,
    },
    /// An earlier sticky error left this context unusable; cudakit refuses
    /// further work on it without entering the driver.
    ContextPoisoned {
        /// The device ordinal.
        device: i32,
        /// The error that poisoned the context, with the call that returned it.
        cause: DriverError,
    },
    /// An optional entry point this operation needs is missing from the
    /// loaded driver or NVRTC.
    NotSupported {
        /// What was asked for, by its entry point (`cuFuncGetParamInfo`).
        feature: &'static str,
        /// The first CUDA version whose library has it (`CUDA 12.4`).
        needs_driver: &'static str,
    },
    /// The launch configuration exceeds a limit of the device or function.
    LaunchConfig {
        /// The kernel.
        function: String,
        /// Which limit, and the value asked for.
        error: LaunchConfigError,
    },
    /// The number of arguments does not match the kernel's parameters.
    ArgumentCount {
        /// The kernel.
        function: String,
        /// Parameters the kernel declares (from `cuFuncGetParamInfo`).
        expected: usize,
        /// Arguments given.
        got: usize,
    },
    /// An argument's size does not match the kernel's parameter.
    ArgumentMismatch {
        /// The kernel.
        function: String,
        /// The parameter index, from 0.
        index: usize,
        /// The parameter's size in the kernel.
        expected_size: usize,
        /// The argument's size.
        got_size: usize,
    },
    /// An argument's type does not match the kernel's parameter type (from
    /// its mangled name, a declared signature, or its PTX).
    ArgumentType {
        /// The kernel.
        function: String,
        /// The parameter index, from 0.
        index: usize,
        /// The parameter's type in C spelling (`const float*`), or its PTX
        /// declaration (`.f32 (PTX)`).
        expected: String,
        /// The argument, in Rust spelling (`DeviceBuffer<f64>`).
        got: String,
    },
    /// A plain kernel name matches more than one kernel of the module.
    AmbiguousFunction {
        /// The name asked for.
        name: String,
        /// Each match, as `signature [symbol]`.
        candidates: Vec<String>,
    },
    /// A declared kernel signature could not be read, or contradicts the
    /// module's PTX or the kernel's mangled name.
    DeclaredSignature {
        /// The kernel.
        function: String,
        /// Why.
        reason: String,
    },
    /// A zero-length allocation or copy was asked for.
    ZeroLength {
        /// What was asked for.
        what: &'static str,
    },
    /// An element count times the element size overflows `usize`.
    SizeOverflow {
        /// Element count.
        len: usize,
        /// Element size in bytes.
        elem_size: usize,
    },
    /// Two lengths that must match do not.
    LengthMismatch {
        /// The operation.
        what: &'static str,
        /// The length required.
        expected: usize,
        /// The length given.
        got: usize,
    },
    /// A range does not lie inside the buffer.
    OutOfBounds {
        /// Range start.
        start: usize,
        /// Range end.
        end: usize,
        /// Buffer length.
        len: usize,
    },
    /// Objects of two different contexts were mixed in one operation.
    ContextMismatch {
        /// The operation.
        what: &'static str,
        /// One device ordinal.
        a: i32,
        /// The other.
        b: i32,
    },
    /// A launch argument is memory of another context than the kernel's,
    /// and peer access from the kernel's context to it is not enabled
    /// (`Context::enable_peer_access`).
    ArgumentContextMismatch {
        /// The kernel.
        function: String,
        /// The argument's index, from 0.
        index: usize,
        /// The device ordinal of the argument's context.
        argument_device: i32,
        /// The device ordinal of the kernel's context.
        kernel_device: i32,
    },
    /// Host access to unified memory and device work would overlap on a
    /// device without concurrent managed access, where any running kernel
    /// makes all managed memory inaccessible to the host.
    UnifiedAccess {
        /// The device ordinal.
        device: i32,
        /// What was refused, and why.
        reason: &'static str,
    },
    /// An element type more aligned than the memory can guarantee.
    Alignment {
        /// The kind of memory or storage.
        what: &'static str,
        /// The element type.
        type_name: &'static str,
        /// Its alignment.
        align: usize,
        /// The alignment the memory guarantees.
        limit: usize,
    },
    /// A tensor-map layout that breaks a rule of `cuTensorMapEncodeTiled`,
    /// or reaches past the memory it describes.
    TensorMap {
        /// The rule broken, with the values.
        reason: String,
    },
    /// A string handed to C contains a NUL byte.
    InteriorNul {
        /// Which string.
        what: &'static str,
    },
    /// The module has no function of that name.
    UnknownFunction {
        /// The name asked for.
        name: String,
        /// The names the module knows (name expressions and `extern "C"` names).
        known: Vec<String>,
    },
    /// The module has no global of that name, or its size differs.
    Global {
        /// The symbol asked for.
        name: String,
        /// What is wrong.
        reason: String,
    },
    /// A device ordinal that does not exist.
    NoSuchDevice {
        /// The ordinal asked for.
        ordinal: usize,
        /// Devices present.
        count: usize,
    },
    /// An operation that a stream capture cannot contain (a synchronous
    /// copy, a context synchronize) was refused before the driver saw it;
    /// the capture is ended, its graph discarded, the context stays usable.
    IllegalDuringCapture {
        /// The operation (a driver entry point or what it stands for).
        operation: &'static str,
        /// The device whose context was capturing.
        device: i32,
    },
    /// Work on a stream that a capture of another scope (or another thread)
    /// owns: queued there, it would have become a node of that graph. It
    /// was refused before the driver saw it; that capture goes on.
    StreamCaptured {
        /// What was refused.
        operation: &'static str,
        /// The device of the stream.
        device: i32,
    },
    /// A cudakit call made inside a host callback (a host function or a
    /// graph host node), where CUDA forbids driver calls; refused before
    /// the driver saw it.
    InsideHostCallback {
        /// What was refused.
        operation: &'static str,
    },
    /// An L2 access-policy window or persisting set-aside the device would
    /// refuse (see [`crate::work::l2`]); refused before the driver.
    AccessPolicy {
        /// What is wrong, with the device's limit where one applies.
        reason: String,
    },
    /// A cudakit call in a child made by `fork` after the parent loaded the
    /// driver. CUDA's state does not survive `fork` (any driver call in the
    /// child is undefined behaviour), so cudakit refuses every driver call
    /// there, and drops there free nothing (the parent owns it all). Start
    /// CUDA work in a child with `exec` (for example
    /// `std::process::Command`), or fork before the first cudakit call.
    ForkedChild,
    /// A wait for queued work failed (or was refused) while the work may
    /// still run: what it uses was kept, not freed, and is reported as
    /// leaked ([`AllocKind::Leaked`](crate::AllocKind::Leaked)).
    WaitFailed {
        /// The wait that failed.
        call: &'static str,
        /// Its error.
        cause: DriverError,
    },
    /// A graph node was given a dependency that belongs to another graph.
    ForeignGraphNode {
        /// The node being added.
        what: &'static str,
        /// Its position in the dependency list.
        index: usize,
    },
    /// A graph with no nodes cannot be instantiated.
    EmptyGraph,
    /// A conditional handle ([`Condition`](crate::work::graph::Condition))
    /// used outside the graph it was made for: a conditional node of
    /// another graph, or a kernel of another graph (or a plain launch)
    /// given it as an argument.
    ForeignCondition {
        /// The operation that was refused.
        what: &'static str,
        /// Where the handle may be used instead.
        reason: &'static str,
    },
    /// A node kind that CUDA does not allow where it was added: in a
    /// conditional node's body (kernel, empty, child-graph, memset, memcpy
    /// and conditional nodes only), or in a graph instantiated for device
    /// launch.
    NodeNotAllowed {
        /// The operation that was refused.
        what: &'static str,
        /// Where the node would have gone (`a conditional body`).
        place: &'static str,
        /// The node kind refused (`a host node`), with its position where
        /// the node came from a child graph.
        kind: String,
        /// What the place allows.
        allowed: &'static str,
    },
    /// `cuGraphExecUpdate_v2` refused an update.
    GraphUpdate {
        /// The node at fault (its kind and index in the new graph), or
        /// `the graph` when the driver names none.
        node: String,
        /// What the driver reported (`CUgraphExecUpdateResult`).
        reason: &'static str,
    },
    /// A host callback panicked; the panic was caught in the callback and
    /// reported when its scope ended.
    HostCallbackPanicked {
        /// The panic's message.
        message: String,
    },
    /// A stream-ordered allocation larger than the device's memory.
    AllocationTooLarge {
        /// The entry point that would have been called.
        call: &'static str,
        /// Bytes asked for.
        bytes: usize,
        /// The device.
        device: i32,
        /// Its total memory.
        device_bytes: usize,
    },
    /// A value that the API rejects before the driver sees it.
    InvalidArgument(String),
    /// A texture or surface the hardware cannot make, refused before the
    /// driver.
    Texture(TextureError),
    /// An nvJitLink entry point failed; nvJitLink's error and info logs
    /// say why.
    JitLink {
        /// The entry point (`nvJitLinkComplete`, ...).
        call: &'static str,
        /// What it returned.
        code: JitLinkCode,
        /// nvJitLink's error log, then its info log.
        log: String,
    },
    /// A link input needs nvJitLink (LTO-IR, or a link with LTO-IR in
    /// it), and nvJitLink could not be loaded.
    JitLinkUnavailable {
        /// The input that needed it.
        input: String,
        /// Why it needs nvJitLink.
        why: &'static str,
        /// Where nvJitLink was looked for.
        source: LoadError,
    },
    /// `libcudadevrt.a`, which device-side launches link against, was not
    /// found.
    DeviceRuntimeNotFound {
        /// Every path looked at, in order.
        looked_in: Vec<String>,
    },
    /// CUDA's own headers (for `#include <cooperative_groups.h>`, `<mma.h>`,
    /// `<cuda/std/...>`), asked for with
    /// [`Program::cuda_headers`](crate::compile::program::Program::cuda_headers),
    /// were not found; see [`crate::compile::headers`].
    CudaHeadersNotFound {
        /// Every folder looked at, in order, each with why it was not used.
        looked_in: Vec<String>,
    },
    /// A file-system operation failed (module files, the compile cache).
    Io {
        /// The file or folder.
        path: String,
        /// The operating system's message.
        message: String,
    },
    /// An NCCL entry point failed.
    Nccl(NcclError),
    /// Peer access between two devices is impossible (`cuDeviceCanAccessPeer`
    /// says no, or it is one device).
    PeerAccessUnsupported {
        /// The device whose context would reach the other's memory.
        from: i32,
        /// The device whose memory would be reached.
        to: i32,
        /// Why (`cuDeviceCanAccessPeer` reports 0, same device).
        reason: &'static str,
    },
    /// A buffer, stream or scope of a device outside the communicator's.
    CommunicatorDevice {
        /// The collective (`ncclAllReduce`).
        call: &'static str,
        /// Which operand (`send buffer`, `stream`, ...).
        what: &'static str,
        /// The communicator's rank.
        rank: usize,
        /// The communicator's device.
        communicator_device: i32,
        /// The operand's device.
        got: i32,
    },
    /// The calls of a group do not match between the ranks of one process
    /// (count, element type, operator, root, peers), or a rank of the
    /// process has no matching call: NCCL would hang or mix data, so
    /// nothing was queued.
    CollectiveMismatch {
        /// The collective.
        call: &'static str,
        /// What differs.
        reason: String,
    },
    /// An NCCL operation did not finish in time; the communicator was
    /// aborted (`ncclCommAbort`).
    NcclTimeout {
        /// What was waited for (`ncclCommInitRankConfig`, a collective).
        call: &'static str,
        /// The rank that waited.
        rank: usize,
        /// How long it waited.
        waited: std::time::Duration,
    },
    /// A rendezvous of communicator ranks failed (see
    /// [`crate::multi::nccl::rendezvous`]): a rank missing or dead, a
    /// mismatched world size, a rank claimed twice, a bad configuration.
    Rendezvous {
        /// The rank that reports it, where known.
        rank: Option<usize>,
        /// What went wrong (never the communicator's id).
        reason: String,
    },
    /// The communicator was aborted after an earlier error; it refuses work.
    CommunicatorAborted {
        /// The rank.
        rank: usize,
        /// The error that aborted it.
        cause: String,
    },
    /// A [`VirtualBuffer`](crate::memory::VirtualBuffer) asked to grow past
    /// its reservation, to shrink below zero, or to map in units the
    /// driver's granularity does not allow; refused before the driver,
    /// with the buffer unchanged.
    VirtualMemory(VirtualMemoryError),
    /// A green-context partition size the device cannot make (checked
    /// before the driver, see [`Context::split_sms`](crate::Context::split_sms)).
    SmGranularity {
        /// The device ordinal.
        device: i32,
        /// The size asked for, in SMs.
        count: u32,
        /// The fewest SMs a partition may have.
        min: u32,
        /// A partition's size must be a multiple of this.
        multiple: u32,
        /// Whether the driver reported `min` and `multiple` (CUDA 13.0+).
        reported_by_driver: bool,
    },
    /// Green-context partitions of more SMs in all than there are.
    NotEnoughSms {
        /// The device ordinal.
        device: i32,
        /// SMs asked for, in all.
        requested: u32,
        /// SMs the split could use.
        available: u32,
    },
    /// The driver made a green-context partition of another size than
    /// asked (by its own cluster and alignment rules).
    SmSplitMismatch {
        /// The device ordinal.
        device: i32,
        /// The size asked for.
        requested: u32,
        /// The size made (0: no group).
        got: u32,
    },
    /// A green context used on a thread other than the one that made it
    /// (CUDA lets one thread at a time have a green context current).
    GreenContextThread {
        /// The device ordinal.
        device: i32,
    },
    /// Sharing memory or events with another process refused before the
    /// driver (see [`crate::ipc`]): a handle blob that does not parse, a
    /// handle of another device, kind or element size, a buffer that cannot
    /// be exported, or a failure of the Unix socket that carries handles.
    Ipc(IpcError),
}
impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Load(inner) => fmt::Display::fmt(inner, f),
            Self::Driver(inner) => fmt::Display::fmt(inner, f),
            Self::Nvrtc(inner) => fmt::Display::fmt(inner, f),
            Self::Compile { program, options, code, log, .. } => write!(
                f,
                "compiling {program} failed ({}) with options [{}]:\n{log}",
                code.name(),
                options.join(" "),
            ),
            Self::ModuleLoad { call, code, log, .. } => write!(
                f,
                "{call}: {code}; JIT log:\n{log}",
            ),
            Self::ContextPoisoned { device, cause, .. } => write!(
                f,
                "the context of device {device} is unusable after an earlier sticky error ({cause}); \
                 start a new process (the dependable recovery) or drop every object of the context \
                 and call Context::reset",
            ),
            Self::NotSupported { feature, needs_driver, .. } => write!(
                f,
                "{feature} is not supported by the loaded library (needs {needs_driver} or newer)",
            ),
            Self::LaunchConfig { function, error, .. } => write!(
                f,
                "invalid launch configuration for {function}: {error}",
            ),
            Self::ArgumentCount { function, expected, got, .. } => write!(
                f,
                "{function}: the kernel takes {expected} argument(s), {got} were given",
            ),
            Self::ArgumentMismatch { function, index, expected_size, got_size, .. } => write!(
                f,
                "{function}: argument {index} is {got_size} byte(s), the kernel's parameter {index} is {expected_size}",
            ),
            Self::ArgumentType { function, index, expected, got, .. } => write!(
                f,
                "{function}: parameter {index}: kernel takes '{expected}', got {got}",
            ),
            Self::AmbiguousFunction { name, candidates, .. } => write!(
                f,
                "{name:?} names {} kernels of the module; look one up by its name expression or symbol: {}",
                candidates.len(),
                candidates.join("; "),
            ),
            Self::DeclaredSignature { function, reason, .. } => write!(
                f,
                "{function}: declared signature refused: {reason}",
            ),
            Self::ZeroLength { what, .. } => write!(
                f,
                "zero-length {what}: CUDA allocations and copies need at least one element",
            ),
            Self::SizeOverflow { len, elem_size, .. } => write!(
                f,
                "{len} elements of {elem_size} bytes overflow the address space",
            ),
            Self::LengthMismatch { what, expected, got, .. } => write!(
                f,
                "{what}: lengths differ ({expected} expected, {got} given)",
            ),
            Self::OutOfBounds { start, end, len, .. } => write!(
                f,
                "range {start}..{end} is out of bounds for a buffer of {len} elements",
            ),
            Self::ContextMismatch { what, a, b, .. } => write!(
                f,
                "{what}: objects of different contexts (device {a} and device {b})",
            ),
            Self::ArgumentContextMismatch { function, index, argument_device, kernel_device, .. } => write!(
                f,
                "launch of {function}: argument {index} is memory of device {argument_device}, but the \
                 kernel runs on device {kernel_device} (context mismatch; peer access from device \
                 {kernel_device} to device {argument_device} is not enabled)",
            ),
            Self::UnifiedAccess { device, reason, .. } => write!(
                f,
                "unified memory of device {device} (no concurrent managed access): {reason}",
            ),
            Self::Alignment { what, type_name, align, limit, .. } => write!(
                f,
                "{what}: {type_name} needs {align}-byte alignment, more than the {limit} bytes it guarantees",
            ),
            Self::TensorMap { reason, .. } => write!(f, "tensor map: {reason}"),
            Self::InteriorNul { what, .. } => write!(f, "{what} contains an interior NUL byte"),
            Self::UnknownFunction { name, known, .. } => write!(
                f,
                "no function {name:?} in the module; it knows: {}",
                known.join(", "),
            ),
            Self::Global { name, reason, .. } => write!(f, "global {name:?}: {reason}"),
            Self::NoSuchDevice { ordinal, count, .. } => write!(
                f,
                "device {ordinal} does not exist ({count} device(s) present)",
            ),
            Self::IllegalDuringCapture { operation, device, .. } => write!(
                f,
                "{operation} is not allowed while a stream of device {device} is capturing a graph; the capture was ended",
            ),
            Self::StreamCaptured { operation, device, .. } => write!(
                f,
                "{operation}: the stream belongs to a graph capture of another scope on device {device}; refused, that capture goes on",
            ),
            Self::InsideHostCallback { operation, .. } => write!(
                f,
                "{operation}: cudakit cannot call the driver inside a host callback (CUDA forbids it there); do it after the scope ends",
            ),
            Self::AccessPolicy { reason, .. } => write!(f, "L2 access policy: {reason}"),
            Self::ForkedChild => write!(
                f,
                "this process is a child made by fork after its parent loaded the CUDA driver; CUDA cannot be used here (spawn a fresh process with std::process::Command, or fork before the first cudakit call)",
            ),
            Self::WaitFailed { call, cause, .. } => write!(
                f,
                "{call} failed while work may still run; what it uses was kept (leaked on purpose): {cause}",
            ),
            Self::ForeignGraphNode { what, index, .. } => write!(
                f,
                "{what}: dependency {index} is a node of another graph",
            ),
            Self::EmptyGraph => write!(
                f,
                "cuGraphInstantiateWithFlags: the graph is empty (it has no nodes)",
            ),
            Self::ForeignCondition { what, reason, .. } => write!(
                f,
                "{what}: the conditional handle belongs to another graph ({reason})",
            ),
            Self::NodeNotAllowed { what, place, kind, allowed, .. } => write!(
                f,
                "{what}: {place} cannot hold {kind}; {allowed}",
            ),
            Self::GraphUpdate { node, reason, .. } => write!(
                f,
                "cuGraphExecUpdate_v2 refused the update at {node}: {reason}",
            ),
            Self::HostCallbackPanicked { message, .. } => write!(
                f,
                "a host callback panicked: {message}",
            ),
            Self::AllocationTooLarge { call, bytes, device, device_bytes, .. } => write!(
                f,
                "{call}: {bytes} bytes asked for, more than device {device} has ({device_bytes} bytes)",
            ),
            Self::InvalidArgument(reason) => write!(f, "invalid argument: {reason}"),
            Self::Texture(inner) => fmt::Display::fmt(inner, f),
            Self::JitLink { call, code, log, .. } => write!(
                f,
                "{call}: {code}; nvJitLink log:\n{log}",
            ),
            Self::JitLinkUnavailable { input, why, source, .. } => write!(
                f,
                "link input {input} needs nvJitLink ({why}), which could not be loaded: {source}",
            ),
            Self::DeviceRuntimeNotFound { looked_in, .. } => write!(
                f,
                "libcudadevrt.a (the device runtime, for device-side launches) was not found; looked \
                 in:\n  {}\nhint: install the CUDA toolkit or `python3 -m pip install \
                 nvidia-cuda-runtime==13.0.*`, or set CUDAKIT_CUDADEVRT to its path",
                looked_in.join("\n  "),
            ),
            Self::CudaHeadersNotFound { looked_in, .. } => write!(
                f,
                "CUDA's headers (cuda_runtime.h, crt/ and CCCL) were not found; looked in:\n  {}\nhint: \
                 install the CUDA toolkit, or `python3 -m pip install nvidia-cuda-runtime==13.0.* \
                 nvidia-cuda-crt==13.0.* nvidia-cuda-cccl==13.0.*` (scripts/nvrtc-env.sh installs them \
                 into .deps/python), or set CUDAKIT_CUDA_INCLUDE to the include folder",
                looked_in.join("\n  "),
            ),
            Self::Io { path, message, .. } => write!(f, "{path}: {message}"),
            Self::Nccl(inner) => fmt::Display::fmt(inner, f),
            Self::PeerAccessUnsupported { from, to, reason, .. } => write!(
                f,
                "peer access from device {from} to device {to} is not possible: {reason}",
            ),
            Self::CommunicatorDevice { call, what, rank, communicator_device, got, .. } => write!(
                f,
                "{call}: {what} is of device {got}, but rank {rank} of the communicator is on device \
                 {communicator_device}",
            ),
            Self::CollectiveMismatch { call, reason, .. } => write!(
                f,
                "{call}: the ranks' calls do not match: {reason}; nothing was queued",
            ),
            Self::NcclTimeout { call, rank, waited, .. } => write!(
                f,
                "{call}: rank {rank} waited {waited:?} for the other ranks (timeout); the communicator \
                 was aborted",
            ),
            Self::Rendezvous { rank, reason, .. } => write!(
                f,
                "rendezvous{}: {reason}",
                rank.map_or_else(String::new, |r| format!(" (rank {r})")),
            ),
            Self::CommunicatorAborted { rank, cause, .. } => write!(
                f,
                "the communicator of rank {rank} was aborted after an earlier error: {cause}",
            ),
            Self::VirtualMemory(error) => write!(f, "virtual buffer: {error}"),
            Self::SmGranularity { device, count, min, multiple, reported_by_driver, .. } => write!(
                f,
                "device {device} cannot make a green context of {count} SMs: a partition takes at least \
                 {min} SMs, in multiples of {multiple} ({})",
                if *reported_by_driver { "as cuDeviceGetDevResource reports" } else { "CUDA's documented \
                 default for the architecture; the driver does not report it" },
            ),
            Self::NotEnoughSms { device, requested, available, .. } => write!(
                f,
                "green contexts of {requested} SMs in all asked for, but {available} SMs are available on device {device}",
            ),
            Self::SmSplitMismatch { device, requested, got, .. } => write!(
                f,
                "cuDevSmResourceSplitByCount made a partition of {got} SMs where {requested} were asked \
                 for on device {device}",
            ),
            Self::GreenContextThread { device, .. } => write!(
                f,
                "a green context of device {device} is used on a thread other than the one that made \
                 it (a green context may be current to one thread at a time: use it on its own thread)",
            ),
            Self::Ipc(error) => write!(f, "ipc: {error}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Load(inner) => inner.source(),
            Self::Driver(inner) => inner.source(),
            Self::Nvrtc(inner) => inner.source(),
            Self::Texture(inner) => inner.source(),
            Self::Nccl(inner) => inner.source(),
            Self::JitLinkUnavailable { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<LoadError> for Error {
    fn from(inner: LoadError) -> Self {
        Self::Load(inner)
    }
}

impl From<DriverError> for Error {
    fn from(inner: DriverError) -> Self {
        Self::Driver(inner)
    }
}

impl From<NvrtcError> for Error {
    fn from(inner: NvrtcError) -> Self {
        Self::Nvrtc(inner)
    }
}

impl From<TextureError> for Error {
    fn from(inner: TextureError) -> Self {
        Self::Texture(inner)
    }
}

impl From<NcclError> for Error {
    fn from(inner: NcclError) -> Self {
        Self::Nccl(inner)
    }
}

/// What the inter-process sharing of [`crate::ipc`] refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IpcError {
    /// The blob is shorter than its header or its payload says.
    Truncated {
        /// Bytes the header (or the payload it announces) needs.
        needed: usize,
        /// Bytes given.
        got: usize,
    },
    /// The blob does not start with cudakit's magic bytes: it is not a
    /// handle that [`IpcHandle::to_bytes`](crate::ipc::IpcHandle::to_bytes)
    /// wrote.
    BadMagic {
        /// The first bytes found.
        found: [u8; 8],
    },
    /// A format version this cudakit does not read.
    UnsupportedVersion {
        /// The blob's version.
        found: u16,
        /// The version this cudakit writes and reads.
        supported: u16,
    },
    /// A field of the blob holds a value no writer makes (an unknown kind,
    /// a size that is not a whole number of elements, chunks that do not
    /// add up).
    Malformed {
        /// What is wrong.
        reason: String,
    },
    /// The handle is of another kind than the import asked for (a pool
    /// handle given to a buffer import, say).
    WrongKind {
        /// The kind the import needs.
        expected: &'static str,
        /// The kind of the handle.
        found: &'static str,
    },
    /// The handle was exported from another device than the importing
    /// context's (the exporter's device UUID is in the handle).
    WrongDevice {
        /// The exporter's device UUID.
        exporter: String,
        /// The importing context's device UUID.
        importer: String,
    },
    /// The buffer was exported with another element size than the import
    /// asks for.
    ElementSize {
        /// The exporter's element size.
        exported: usize,
        /// The importer's.
        asked: usize,
    },
    /// A legacy IPC handle opened in the process that exported it: CUDA
    /// refuses that (`cuIpcOpenMemHandle_v2` answers
    /// CUDA_ERROR_INVALID_CONTEXT); use the buffer itself.
    OwnProcess,
    /// The handle needs descriptors that did not come with it, or came
    /// with others.
    Descriptors {
        /// Descriptors the handle's kind needs.
        expected: usize,
        /// Descriptors present.
        got: usize,
    },
    /// The memory cannot be exported: the device's default pool, a pool or
    /// virtual buffer made without an export handle type.
    NotExportable {
        /// What was to be exported.
        what: &'static str,
        /// Why not, and what to use instead.
        reason: &'static str,
    },
    /// A pool buffer's handle given to an imported pool that is not the
    /// pool it was allocated from.
    WrongPool,
    /// The buffer was exported and its export guard never released
    /// ([`Exported::release`](crate::ipc::Exported::release)): another
    /// process may still use the memory, so it is kept (recorded as
    /// leaked), not freed.
    StillExported {
        /// The buffer kind.
        what: &'static str,
    },
    /// The socket that carries handles failed, or a message on it was not
    /// a handle message.
    Channel {
        /// The system call or step (`sendmsg`, `recvmsg`, `read`).
        call: &'static str,
        /// The operating system's message, or what was wrong.
        message: String,
    },
}
impl fmt::Display for IpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Truncated { needed, got, .. } => write!(
                f,
                "the handle blob is truncated: {needed} bytes needed, {got} given",
            ),
            Self::BadMagic { found, .. } => write!(
                f,
                "not a cudakit IPC handle: the magic bytes are {found:02x?}",
            ),
            Self::UnsupportedVersion { found, supported, .. } => write!(
                f,
                "IPC handle format version {found} is not supported (this cudakit reads {supported})",
            ),
            Self::Malformed { reason, .. } => write!(f, "malformed IPC handle: {reason}"),
            Self::WrongKind { expected, found, .. } => write!(
                f,
                "an IPC handle of kind {found} was given where {expected} is needed",
            ),
            Self::WrongDevice { exporter, importer, .. } => write!(
                f,
                "the handle was exported from device {exporter} and cannot be opened on device {importer} \
                 (UUIDs differ); import it in a context of the exporter's device",
            ),
            Self::ElementSize { exported, asked, .. } => write!(
                f,
                "the handle holds elements of {exported} bytes; importing them as elements of {asked} \
                 bytes is refused",
            ),
            Self::OwnProcess => write!(
                f,
                "a legacy IPC memory handle cannot be opened in the process that exported it (CUDA \
                 refuses it); use the buffer itself",
            ),
            Self::Descriptors { expected, got, .. } => write!(
                f,
                "the handle needs {expected} file descriptor(s), {got} came with it",
            ),
            Self::NotExportable { what, reason, .. } => write!(
                f,
                "{what} cannot be exported: {reason}",
            ),
            Self::WrongPool => write!(
                f,
                "the pointer was exported from another pool than the imported one",
            ),
            Self::StillExported { what, .. } => write!(
                f,
                "the {what} is still exported (its Exported guard was not released): it is kept, not \
                 freed, because another process may still use it",
            ),
            Self::Channel { call, message, .. } => write!(f, "{call}: {message}"),
        }
    }
}

impl std::error::Error for IpcError {}

/// What a [`VirtualBuffer`](crate::memory::VirtualBuffer) refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VirtualMemoryError {
    /// The new size passes the reserved address range, which cannot grow
    /// in place.
    PastReservation {
        /// Bytes the new length needs.
        requested: u64,
        /// Bytes reserved.
        reserved: u64,
    },
    /// A shrink by more elements than the buffer holds.
    BelowZero {
        /// Elements held.
        len: usize,
        /// Elements asked to remove.
        by: usize,
    },
    /// A size that must be a multiple of the allocation granularity is not.
    Unaligned {
        /// Which size (the mapping unit, the reservation).
        what: &'static str,
        /// The size given.
        bytes: usize,
        /// The driver's minimum granularity for the device.
        granularity: usize,
    },
}
impl fmt::Display for VirtualMemoryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::PastReservation { requested, reserved, .. } => write!(
                f,
                "{requested} bytes asked for, past the {reserved} bytes of address range reserved \
                 (reserve more when the buffer is made)",
            ),
            Self::BelowZero { len, by, .. } => write!(
                f,
                "shrinking {len} elements by {by} would go below zero",
            ),
            Self::Unaligned { what, bytes, granularity, .. } => write!(
                f,
                "{what} of {bytes} bytes is not a multiple of the allocation granularity, {granularity} \
                 bytes (cuMemGetAllocationGranularity)",
            ),
        }
    }
}

impl std::error::Error for VirtualMemoryError {}

impl Error {
    /// The driver error inside, if this is one (also the cause of a poisoned
    /// context, and the code of a refused module load).
    pub fn driver_error(&self) -> Option<DriverError> {
        match self {
            Error::Driver(e) => Some(*e),
            Error::ContextPoisoned { cause, .. } => Some(*cause),
            Error::ModuleLoad { call, code, .. } => Some(DriverError { call, code: *code }),
            _ => None,
        }
    }

    /// Whether the error left the context unusable (in a forked child
    /// ([`Error::ForkedChild`]) every context is: nothing of its work runs
    /// in this process).
    pub fn is_sticky(&self) -> bool {
        matches!(self, Error::ContextPoisoned { .. } | Error::ForkedChild)
            || self.driver_error().is_some_and(|e| e.is_sticky())
    }
}

/// `Result` with cudakit's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The one helper every raw driver result goes through.
///
/// # Errors
///
/// [`DriverError`] naming `call` when `rc` is not `CUDA_SUCCESS`.
#[inline]
pub fn check(call: &'static str, rc: CUresult) -> Result<(), DriverError> {
    if rc == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(DriverError {
            call,
            code: DriverCode::from_raw(rc),
        })
    }
}

/// The one helper every raw NVRTC result goes through.
///
/// # Errors
///
/// [`NvrtcError`] naming `call` when `rc` is not `NVRTC_SUCCESS`.
#[inline]
pub fn check_nvrtc(call: &'static str, rc: nvrtcResult) -> Result<(), NvrtcError> {
    if rc == nvrtcResult::NVRTC_SUCCESS {
        Ok(())
    } else {
        Err(NvrtcError {
            call,
            code: NvrtcCode::from_raw(rc),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_driver_error_names_the_call_code_number_and_meaning() {
        let err = check("cuMemAlloc_v2", CUresult::CUDA_ERROR_OUT_OF_MEMORY).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (2): {}",
                DriverCode::from_raw(CUresult::CUDA_ERROR_OUT_OF_MEMORY).meaning()
            )
        );
        assert!(!err.is_sticky());
        assert!(check("cuInit", CUresult::CUDA_SUCCESS).is_ok());
    }

    #[test]
    fn a_refused_module_load_exposes_its_driver_code() {
        let load = |rc| Error::ModuleLoad {
            call: "cuModuleLoadDataEx",
            code: DriverCode::from_raw(rc),
            log: String::new(),
        };
        let bad = load(CUresult::CUDA_ERROR_INVALID_IMAGE);
        assert_eq!(bad.driver_error().unwrap().call, "cuModuleLoadDataEx");
        assert!(!bad.is_sticky());
        assert!(load(CUresult::CUDA_ERROR_LAUNCH_FAILED).is_sticky());
    }

    #[test]
    fn unknown_codes_keep_their_number() {
        let err = check("cuFoo", CUresult(123_456)).unwrap_err();
        assert_eq!(err.code.number(), 123_456);
        assert!(err.to_string().contains("123456"));
    }

    #[test]
    fn sticky_errors_are_flagged_through_error() {
        let err: Error = check("cuCtxSynchronize", CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)
            .unwrap_err()
            .into();
        assert!(err.is_sticky());
        let poisoned = Error::ContextPoisoned {
            device: 0,
            cause: err.driver_error().unwrap(),
        };
        assert!(poisoned.is_sticky());
        let text = poisoned.to_string();
        assert!(
            text.contains("cuCtxSynchronize: CUDA_ERROR_ILLEGAL_ADDRESS (700)"),
            "{text}"
        );
    }

    #[test]
    fn nvrtc_errors_name_the_call() {
        let err = check_nvrtc(
            "nvrtcCompileProgram",
            nvrtcResult::NVRTC_ERROR_INVALID_OPTION,
        )
        .unwrap_err();
        assert!(err
            .to_string()
            .starts_with("nvrtcCompileProgram: NVRTC_ERROR_INVALID_OPTION (5)"));
    }

    /// The texts and causes `thiserror` produced before cudakit dropped it
    /// (the forms it had: a struct, a transparent variant, named fields
    /// with extra arguments, a tuple variant, a unit variant, a field named
    /// `source`), byte for byte.
    #[test]
    fn errors_display_and_chain_as_before() {
        use std::error::Error as _;
        let driver = DriverError {
            call: "cuInit",
            code: DriverCode::from_raw(CUresult::CUDA_ERROR_NO_DEVICE),
        };
        let wrapped = Error::from(driver);
        assert_eq!(wrapped.to_string(), driver.to_string());
        assert!(wrapped.source().is_none());
        let compile = Error::Compile {
            program: "k.cu".into(),
            options: vec!["-arch=sm_90".into(), "-lineinfo".into()],
            code: NvrtcCode::from_raw(nvrtcResult::NVRTC_ERROR_COMPILATION),
            log: "k.cu(1): error".into(),
        };
        assert_eq!(
            compile.to_string(),
            "compiling k.cu failed (NVRTC_ERROR_COMPILATION) with options \
             [-arch=sm_90 -lineinfo]:\nk.cu(1): error"
        );
        assert_eq!(
            Error::InvalidArgument("n must be even".into()).to_string(),
            "invalid argument: n must be even"
        );
        assert_eq!(
            Error::EmptyGraph.to_string(),
            "cuGraphInstantiateWithFlags: the graph is empty (it has no nodes)"
        );
        assert_eq!(
            Error::from(TextureError::NotSurfaceCapable).to_string(),
            "the array was not made for surfaces (CUDA_ARRAY3D_SURFACE_LDST); make it with \
             Context::surface_array"
        );
        let missing = LoadError::MissingSymbol {
            library: "libnvJitLink",
            path: "/x/libnvJitLink.so.13".into(),
            symbol: "nvJitLinkCreate",
            reason: "undefined symbol".into(),
        };
        let unavailable = Error::JitLinkUnavailable {
            input: "a.ltoir".into(),
            why: "LTO-IR",
            source: missing.clone(),
        };
        assert_eq!(
            unavailable.to_string(),
            format!(
                "link input a.ltoir needs nvJitLink (LTO-IR), which could not be loaded: {missing}"
            )
        );
        let cause = unavailable
            .source()
            .expect("the field named source is the cause");
        assert_eq!(cause.to_string(), missing.to_string());
        assert!(Error::Load(missing).source().is_none());
    }
}
