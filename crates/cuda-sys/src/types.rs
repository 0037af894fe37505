//! Types of CUDA 13.0's `cuda.h`: handles, `CUresult`, the C enums as
//! integer newtypes, the `#define` constants, and the `#[repr(C)]` structs.
//!
//! No Rust `enum` ever receives a value from C: a driver newer than these
//! bindings may return a value such an enum lacks, which would be undefined
//! behaviour. Every C enum is a `#[repr(transparent)]` newtype over its
//! integer with one associated constant per enumerator, named exactly as in
//! the header.
//!
//! Every struct's size and alignment, and the offsets of the fields that are
//! easy to get wrong (after unions, around padding), are checked at compile
//! time against numbers measured by compiling a C program that includes the
//! real 13.0 header with gcc on x86-64 Linux. Every struct here is plain
//! data: its `Default` is all-zero bytes, what C code gets from
//! `memset(&s, 0, sizeof s)` (null pointers, `None` callbacks, zero enums).
//!
//! Versioned typedefs are kept as aliases (`CUDA_MEMCPY2D_v2` and
//! `CUDA_MEMCPY2D` are one type), so a signature can be written with
//! whichever name the header uses.

use std::ffi::{c_char, c_int, c_longlong, c_uchar, c_uint, c_ulonglong, c_ushort, c_void};
use std::marker::{PhantomData, PhantomPinned};

/// Declares a C enum as a `#[repr(transparent)]` integer newtype with one
/// associated constant per enumerator and a table of (name, value) pairs.
///
/// Several enumerators may share a value (the header keeps deprecated
/// aliases); `name()` then returns the first one in header order.
macro_rules! c_enum {
    (
        $(#[$meta:meta])*
        pub struct $name:ident($repr:ty) {
            $( $(#[$cmeta:meta])* $cname:ident = $value:expr, )*
        }
    ) => {
        $(#[$meta])*
        #[repr(transparent)]
        #[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
        pub struct $name(pub $repr);

        #[allow(non_upper_case_globals)]
        impl $name {
            $(
                $(#[$cmeta])*
                pub const $cname: $name = $name($value);
            )*
            /// Every enumerator of the header as (name, value), in header order.
            pub const ALL: &'static [(&'static str, $name)] = &[$((stringify!($cname), $name($value))),*];

            /// The enumerator's name in the header, or `None` for a value
            /// these bindings do not know (a newer driver's, say).
            pub fn name(self) -> Option<&'static str> {
                Self::ALL.iter().find(|(_, v)| *v == self).map(|(n, _)| *n)
            }
        }

        impl ::std::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                match self.name() {
                    Some(name) => write!(f, "{}({})", name, self.0),
                    None => write!(f, "{}({})", stringify!($name), self.0),
                }
            }
        }
    };
}
pub(crate) use c_enum;

/// Declares opaque C structs and the handle types that point to them.
macro_rules! opaque_handles {
    ($( $(#[$meta:meta])* $handle:ident = *mut $tag:ident; )*) => {
        $(
            #[doc = concat!("The opaque C struct `", stringify!($tag), "` behind [`", stringify!($handle), "`]; never constructed in Rust.")]
            #[repr(C)]
            #[derive(Debug)]
            pub struct $tag {
                _private: [u8; 0],
                _marker: PhantomData<(*mut u8, PhantomPinned)>,
            }
            $(#[$meta])*
            pub type $handle = *mut $tag;
        )*
    };
}

/// Checks a struct's size and alignment, and optionally field offsets,
/// against the numbers measured from the C header, at compile time.
macro_rules! assert_layout {
    ($ty:ty, size = $size:expr, align = $align:expr $(, $field:ident = $off:expr)* $(,)?) => {
        const _: () = assert!(
            ::std::mem::size_of::<$ty>() == $size && ::std::mem::align_of::<$ty>() == $align
        );
        $( const _: () = assert!(::std::mem::offset_of!($ty, $field) == $off); )*
    };
}

/// Implements `Default` as all-zero bytes for plain-data C structs.
macro_rules! zeroed_default {
    ($($ty:ty),* $(,)?) => {
        $(
            impl Default for $ty {
                fn default() -> Self {
                    // SAFETY: the type is a `#[repr(C)]` struct or union whose
                    // fields are integers, floats, raw pointers, `Option`s of
                    // `extern "C" fn`, `c_enum!` newtypes, or arrays, structs
                    // and unions of those; all-zero bytes is a valid value of
                    // each (0, 0.0, null, `None`).
                    unsafe { ::std::mem::zeroed() }
                }
            }
        )*
    };
}

// The header makes `CUdeviceptr` 32 bits wide on 32-bit targets, and every
// layout number below was measured on a 64-bit one.
#[cfg(not(target_pointer_width = "64"))]
compile_error!("cuda-sys mirrors the 64-bit layout of cuda.h only");

// ---------------------------------------------------------------------------
// Scalar typedefs
// ---------------------------------------------------------------------------

/// `cuuint32_t`: the header's 32-bit unsigned integer.
pub type cuuint32_t = u32;
/// `cuuint64_t`: the header's 64-bit unsigned integer.
pub type cuuint64_t = u64;

/// `CUdeviceptr_v2`: a device address, as wide as a host pointer (64 bits on
/// the platforms cudakit supports).
pub type CUdeviceptr_v2 = u64;
/// `CUdeviceptr`: a device address.
pub type CUdeviceptr = CUdeviceptr_v2;

/// `CUdevice_v1`: a device ordinal.
pub type CUdevice_v1 = c_int;
/// `CUdevice`: a device ordinal.
pub type CUdevice = CUdevice_v1;

/// `CUtexObject_v1`: an opaque texture-object value.
pub type CUtexObject_v1 = u64;
/// `CUtexObject`: an opaque texture-object value.
pub type CUtexObject = CUtexObject_v1;
/// `CUsurfObject_v1`: an opaque surface-object value.
pub type CUsurfObject_v1 = u64;
/// `CUsurfObject`: an opaque surface-object value.
pub type CUsurfObject = CUsurfObject_v1;

/// `CUmemGenericAllocationHandle_v1`: a physical allocation made by `cuMemCreate`.
pub type CUmemGenericAllocationHandle_v1 = u64;
/// `CUmemGenericAllocationHandle`: a physical allocation made by `cuMemCreate`.
pub type CUmemGenericAllocationHandle = CUmemGenericAllocationHandle_v1;

/// `CUgraphConditionalHandle`: the condition variable of a conditional graph node.
pub type CUgraphConditionalHandle = cuuint64_t;

// ---------------------------------------------------------------------------
// Opaque handles
// ---------------------------------------------------------------------------

opaque_handles! {
    /// `CUcontext`: a context handle.
    CUcontext = *mut CUctx_st;
    /// `CUmodule`: a loaded module.
    CUmodule = *mut CUmod_st;
    /// `CUfunction`: a kernel function of a module.
    CUfunction = *mut CUfunc_st;
    /// `CUlibrary`: a context-independent library.
    CUlibrary = *mut CUlib_st;
    /// `CUkernel`: a context-independent kernel of a library.
    CUkernel = *mut CUkern_st;
    /// `CUarray`: a CUDA array.
    CUarray = *mut CUarray_st;
    /// `CUmipmappedArray`: a mipmapped CUDA array.
    CUmipmappedArray = *mut CUmipmappedArray_st;
    /// `CUtexref`: a (legacy) texture reference.
    CUtexref = *mut CUtexref_st;
    /// `CUsurfref`: a (legacy) surface reference.
    CUsurfref = *mut CUsurfref_st;
    /// `CUevent`: an event.
    CUevent = *mut CUevent_st;
    /// `CUstream`: a stream; null is the default stream.
    CUstream = *mut CUstream_st;
    /// `CUgraphicsResource`: a graphics-interop resource.
    CUgraphicsResource = *mut CUgraphicsResource_st;
    /// `CUexternalMemory`: imported external memory.
    CUexternalMemory = *mut CUextMemory_st;
    /// `CUexternalSemaphore`: an imported external semaphore.
    CUexternalSemaphore = *mut CUextSemaphore_st;
    /// `CUgraph`: a graph under construction.
    CUgraph = *mut CUgraph_st;
    /// `CUgraphNode`: a node of a graph.
    CUgraphNode = *mut CUgraphNode_st;
    /// `CUgraphExec`: an instantiated, executable graph.
    CUgraphExec = *mut CUgraphExec_st;
    /// `CUmemoryPool`: a stream-ordered memory pool.
    CUmemoryPool = *mut CUmemPoolHandle_st;
    /// `CUuserObject`: a user object whose lifetime graphs can hold.
    CUuserObject = *mut CUuserObject_st;
    /// `CUgraphDeviceNode`: a kernel node that device code may update.
    CUgraphDeviceNode = *mut CUgraphDeviceUpdatableNode_st;
    /// `CUasyncCallbackHandle`: a registered asynchronous-notification callback.
    CUasyncCallbackHandle = *mut CUasyncCallbackEntry_st;
    /// `CUgreenCtx`: a green context; use it from one CPU thread at a time.
    CUgreenCtx = *mut CUgreenCtx_st;
    /// `CUlinkState`: a pending JIT link (`cuLinkCreate`).
    CUlinkState = *mut CUlinkState_st;
    /// `CUdevResourceDesc`: a descriptor of device resources for green contexts.
    CUdevResourceDesc = *mut CUdevResourceDesc_st;
    /// `CUlogsCallbackHandle`: a registered driver-log callback.
    CUlogsCallbackHandle = *mut CUlogsCallbackEntry_st;
}

// ---------------------------------------------------------------------------
// Callback types
// ---------------------------------------------------------------------------

/// `CUhostFn`: a host function enqueued on a stream or a graph host node.
pub type CUhostFn = Option<unsafe extern "C" fn(userData: *mut c_void)>;

/// `CUstreamCallback`: a stream callback (`cuStreamAddCallback`); `status`
/// is `CUDA_SUCCESS` or the stream's sticky error.
pub type CUstreamCallback =
    Option<unsafe extern "C" fn(hStream: CUstream, status: CUresult, userData: *mut c_void)>;

/// `CUoccupancyB2DSize`: maps a block size to the dynamic shared memory a
/// block of that size needs, for the occupancy calculator.
pub type CUoccupancyB2DSize = Option<unsafe extern "C" fn(blockSize: c_int) -> usize>;

// ---------------------------------------------------------------------------
// CUresult
// ---------------------------------------------------------------------------

c_enum! {
    /// `CUresult` (`cudaError_enum`): the status every driver entry point
    /// returns. "Sticky" below means the header says the process is left in
    /// an inconsistent state: every later call fails the same way and only a
    /// new process recovers.
    #[must_use]
    pub struct CUresult(c_int) {
        /// No error; for a query, the queried work has also completed.
        CUDA_SUCCESS = 0,
        /// One or more arguments are outside their acceptable range.
        CUDA_ERROR_INVALID_VALUE = 1,
        /// Not enough memory or other resources could be allocated for the operation.
        CUDA_ERROR_OUT_OF_MEMORY = 2,
        /// The driver has not been initialised with `cuInit`, or initialisation failed.
        CUDA_ERROR_NOT_INITIALIZED = 3,
        /// The driver is shutting down.
        CUDA_ERROR_DEINITIALIZED = 4,
        /// Profiling is disabled for this run, e.g. because an external profiler is attached.
        CUDA_ERROR_PROFILER_DISABLED = 5,
        /// Deprecated since CUDA 5.0: profiler start/stop without initialisation is no longer an error.
        CUDA_ERROR_PROFILER_NOT_INITIALIZED = 6,
        /// Deprecated since CUDA 5.0: starting a started profiler is no longer an error.
        CUDA_ERROR_PROFILER_ALREADY_STARTED = 7,
        /// Deprecated since CUDA 5.0: stopping a stopped profiler is no longer an error.
        CUDA_ERROR_PROFILER_ALREADY_STOPPED = 8,
        /// The loaded libcuda is a stub library, not a real driver.
        CUDA_ERROR_STUB_LIBRARY = 34,
        /// The call needs a newer driver than the one installed.
        CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36,
        /// The device is unavailable right now, typically because of its compute mode.
        CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
        /// The driver found no CUDA-capable device.
        CUDA_ERROR_NO_DEVICE = 100,
        /// The ordinal is not a valid device, or the action is invalid for that device.
        CUDA_ERROR_INVALID_DEVICE = 101,
        /// The GRID license has not been applied.
        CUDA_ERROR_DEVICE_NOT_LICENSED = 102,
        /// The kernel image (or the module) is invalid.
        CUDA_ERROR_INVALID_IMAGE = 200,
        /// No context is current, the context handle is invalid (destroyed, say), or a green context was not converted with `cuCtxFromGreenCtx`.
        CUDA_ERROR_INVALID_CONTEXT = 201,
        /// Deprecated since CUDA 3.2: the context was already the active one.
        CUDA_ERROR_CONTEXT_ALREADY_CURRENT = 202,
        /// A map or register operation failed.
        CUDA_ERROR_MAP_FAILED = 205,
        /// An unmap or unregister operation failed.
        CUDA_ERROR_UNMAP_FAILED = 206,
        /// The array is mapped and so cannot be destroyed.
        CUDA_ERROR_ARRAY_IS_MAPPED = 207,
        /// The resource is already mapped.
        CUDA_ERROR_ALREADY_MAPPED = 208,
        /// No kernel image in the module suits this device (wrong architecture).
        CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
        /// The resource has already been acquired.
        CUDA_ERROR_ALREADY_ACQUIRED = 210,
        /// The resource is not mapped.
        CUDA_ERROR_NOT_MAPPED = 211,
        /// The mapped resource cannot be accessed as an array.
        CUDA_ERROR_NOT_MAPPED_AS_ARRAY = 212,
        /// The mapped resource cannot be accessed as a pointer.
        CUDA_ERROR_NOT_MAPPED_AS_POINTER = 213,
        /// An uncorrectable ECC error was detected during execution.
        CUDA_ERROR_ECC_UNCORRECTABLE = 214,
        /// The `CUlimit` is not supported by the active device.
        CUDA_ERROR_UNSUPPORTED_LIMIT = 215,
        /// The context is already bound to another CPU thread.
        CUDA_ERROR_CONTEXT_ALREADY_IN_USE = 216,
        /// Peer access is not supported between these devices.
        CUDA_ERROR_PEER_ACCESS_UNSUPPORTED = 217,
        /// PTX JIT compilation failed.
        CUDA_ERROR_INVALID_PTX = 218,
        /// Something is wrong with the OpenGL or DirectX context.
        CUDA_ERROR_INVALID_GRAPHICS_CONTEXT = 219,
        /// An uncorrectable NVLink error was detected during execution.
        CUDA_ERROR_NVLINK_UNCORRECTABLE = 220,
        /// The PTX JIT compiler library was not found.
        CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
        /// The PTX was produced by a toolchain this driver does not support.
        CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
        /// PTX JIT compilation is disabled.
        CUDA_ERROR_JIT_COMPILATION_DISABLED = 223,
        /// The `CUexecAffinityType` is not supported by the active device.
        CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY = 224,
        /// The code to JIT-compile calls `cudaDeviceSynchronize` in device code, which is unsupported.
        CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC = 225,
        /// A device exception was contained by the GPU's error containment; sticky.
        CUDA_ERROR_CONTAINED = 226,
        /// The device source is invalid (compile or link errors in device code).
        CUDA_ERROR_INVALID_SOURCE = 300,
        /// The file was not found.
        CUDA_ERROR_FILE_NOT_FOUND = 301,
        /// A link to a shared object could not be resolved.
        CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302,
        /// Initialising a shared object failed.
        CUDA_ERROR_SHARED_OBJECT_INIT_FAILED = 303,
        /// An operating-system call failed.
        CUDA_ERROR_OPERATING_SYSTEM = 304,
        /// A resource handle (stream, event, ...) is not valid.
        CUDA_ERROR_INVALID_HANDLE = 400,
        /// A resource the call needs is not in a state that allows the operation.
        CUDA_ERROR_ILLEGAL_STATE = 401,
        /// Introspecting the object this way would lose semantically important information.
        CUDA_ERROR_LOSSY_QUERY = 402,
        /// A named symbol (variable, function, texture, surface) was not found.
        CUDA_ERROR_NOT_FOUND = 500,
        /// Asynchronous work has not completed yet; not an error as such.
        CUDA_ERROR_NOT_READY = 600,
        /// A kernel loaded or stored at an invalid address; sticky.
        CUDA_ERROR_ILLEGAL_ADDRESS = 700,
        /// The launch lacked resources: too many threads for the register count, or arguments too many or too large.
        CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701,
        /// A kernel ran past the watchdog time limit; sticky.
        CUDA_ERROR_LAUNCH_TIMEOUT = 702,
        /// The launch uses an incompatible texturing mode.
        CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING = 703,
        /// Peer access to that context is already enabled.
        CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED = 704,
        /// Peer access to be disabled was never enabled.
        CUDA_ERROR_PEER_ACCESS_NOT_ENABLED = 705,
        /// The device's primary context has already been initialised.
        CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE = 708,
        /// The current context was destroyed, or is a primary context not yet initialised.
        CUDA_ERROR_CONTEXT_IS_DESTROYED = 709,
        /// A device-side assert fired; the context is unusable and must be destroyed.
        CUDA_ERROR_ASSERT = 710,
        /// The hardware resources for peer access are exhausted.
        CUDA_ERROR_TOO_MANY_PEERS = 711,
        /// The host memory range is already registered.
        CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED = 712,
        /// The pointer does not start a registered host memory range.
        CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED = 713,
        /// A kernel hit a stack error (corruption or overflow); sticky.
        CUDA_ERROR_HARDWARE_STACK_ERROR = 714,
        /// A kernel executed an illegal instruction; sticky.
        CUDA_ERROR_ILLEGAL_INSTRUCTION = 715,
        /// A kernel loaded or stored at a misaligned address; sticky.
        CUDA_ERROR_MISALIGNED_ADDRESS = 716,
        /// A kernel gave an instruction an address outside the address spaces (global, shared, local) it accepts; sticky.
        CUDA_ERROR_INVALID_ADDRESS_SPACE = 717,
        /// A kernel's program counter wrapped its address space; sticky.
        CUDA_ERROR_INVALID_PC = 718,
        /// A kernel raised an exception (bad device pointer, out-of-bounds shared memory, ...); sticky.
        CUDA_ERROR_LAUNCH_FAILED = 719,
        /// A cooperative launch asked for more blocks than can be resident on the device at once.
        CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE = 720,
        /// A kernel exited without freeing all of its tensor memory; sticky.
        CUDA_ERROR_TENSOR_MEMORY_LEAK = 721,
        /// The operation is not permitted.
        CUDA_ERROR_NOT_PERMITTED = 800,
        /// The operation is not supported on this system or device.
        CUDA_ERROR_NOT_SUPPORTED = 801,
        /// The system is not ready for CUDA work (check the configuration and driver daemons).
        CUDA_ERROR_SYSTEM_NOT_READY = 802,
        /// The display driver and the CUDA driver versions do not match.
        CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
        /// Forward-compatibility mode is not supported by the visible hardware.
        CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
        /// The MPS client could not connect to the MPS control daemon or server.
        CUDA_ERROR_MPS_CONNECTION_FAILED = 805,
        /// A remote procedure call between MPS server and client failed.
        CUDA_ERROR_MPS_RPC_FAILURE = 806,
        /// The MPS server is not ready for new clients (it may be recovering).
        CUDA_ERROR_MPS_SERVER_NOT_READY = 807,
        /// The hardware resources for another MPS client are exhausted.
        CUDA_ERROR_MPS_MAX_CLIENTS_REACHED = 808,
        /// The hardware resources for device connections are exhausted.
        CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED = 809,
        /// The MPS server terminated this client; the process must be restarted.
        CUDA_ERROR_MPS_CLIENT_TERMINATED = 810,
        /// The module uses CUDA Dynamic Parallelism, which this configuration (MPS, say) does not support.
        CUDA_ERROR_CDP_NOT_SUPPORTED = 811,
        /// The module mixes incompatible versions of CUDA Dynamic Parallelism.
        CUDA_ERROR_CDP_VERSION_MISMATCH = 812,
        /// The operation is not allowed while the stream is capturing.
        CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
        /// The stream's capture sequence was invalidated by an earlier error.
        CUDA_ERROR_STREAM_CAPTURE_INVALIDATED = 901,
        /// The operation would merge two independent capture sequences.
        CUDA_ERROR_STREAM_CAPTURE_MERGE = 902,
        /// The capture was not begun in this stream.
        CUDA_ERROR_STREAM_CAPTURE_UNMATCHED = 903,
        /// The capture sequence forked and was not joined back to the origin stream.
        CUDA_ERROR_STREAM_CAPTURE_UNJOINED = 904,
        /// A dependency would cross the capture sequence's boundary.
        CUDA_ERROR_STREAM_CAPTURE_ISOLATION = 905,
        /// An implicit dependency on the legacy stream would reach into a capture sequence.
        CUDA_ERROR_STREAM_CAPTURE_IMPLICIT = 906,
        /// The operation is not allowed on an event last recorded in a capturing stream.
        CUDA_ERROR_CAPTURED_EVENT = 907,
        /// A capture not begun in relaxed mode was ended from another thread.
        CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD = 908,
        /// The wait operation's timeout expired.
        CUDA_ERROR_TIMEOUT = 909,
        /// The executable-graph update was rejected because it broke an update constraint.
        CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE = 910,
        /// A device outside CUDA signalled an error on data shared with CUDA; sticky.
        CUDA_ERROR_EXTERNAL_DEVICE = 911,
        /// The launch's cluster configuration is invalid.
        CUDA_ERROR_INVALID_CLUSTER_SIZE = 912,
        /// The function is not loaded, and the call needs a loaded function.
        CUDA_ERROR_FUNCTION_NOT_LOADED = 913,
        /// A resource passed in is of a type the operation does not accept.
        CUDA_ERROR_INVALID_RESOURCE_TYPE = 914,
        /// The resources passed in are insufficient or do not apply to the operation.
        CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION = 915,
        /// An error occurred during the key rotation sequence.
        CUDA_ERROR_KEY_ROTATION = 916,
        /// An unknown internal error.
        CUDA_ERROR_UNKNOWN = 999,
    }
}

// ---------------------------------------------------------------------------
// Devices
// ---------------------------------------------------------------------------

c_enum! {
    /// `CUdevice_attribute`: what `cuDeviceGetAttribute` can report.
    pub struct CUdevice_attribute(c_int) {
        /// Largest number of threads in a block.
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
        /// Largest block extent in x.
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
        /// Largest block extent in y.
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
        /// Largest block extent in z.
        CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
        /// Largest grid extent in x.
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
        /// Largest grid extent in y.
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
        /// Largest grid extent in z.
        CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
        /// Shared memory a block may use without opting in, in bytes.
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
        /// Deprecated alias of `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK`.
        CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK = 8,
        /// Constant memory available to kernels, in bytes.
        CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9,
        /// Threads per warp.
        CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
        /// Largest pitch memory copies accept, in bytes.
        CU_DEVICE_ATTRIBUTE_MAX_PITCH = 11,
        /// 32-bit registers available to a block.
        CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
        /// Deprecated alias of `CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK`.
        CU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK = 12,
        /// Typical clock rate, in kHz.
        CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
        /// Alignment textures require.
        CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT = 14,
        /// Deprecated (use `CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT`): copy and kernel can overlap.
        CU_DEVICE_ATTRIBUTE_GPU_OVERLAP = 15,
        /// Number of streaming multiprocessors.
        CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
        /// Whether kernels have a run-time limit (watchdog).
        CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT = 17,
        /// Whether the device is integrated with host memory.
        CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
        /// Whether host memory can be mapped into the device's address space.
        CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
        /// The compute mode, a `CUcomputemode` value.
        CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20,
        /// Largest 1D texture width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH = 21,
        /// Largest 2D texture width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH = 22,
        /// Largest 2D texture height.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT = 23,
        /// Largest 3D texture width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH = 24,
        /// Largest 3D texture height.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT = 25,
        /// Largest 3D texture depth.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH = 26,
        /// Largest layered 2D texture width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH = 27,
        /// Largest layered 2D texture height.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT = 28,
        /// Most layers of a layered 2D texture.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS = 29,
        /// Deprecated alias of `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH`.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_WIDTH = 27,
        /// Deprecated alias of `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT`.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_HEIGHT = 28,
        /// Deprecated alias of `CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS`.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_NUMSLICES = 29,
        /// Alignment surfaces require.
        CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT = 30,
        /// Whether several kernels may run concurrently.
        CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 31,
        /// Whether ECC is enabled.
        CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
        /// PCI bus number.
        CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
        /// PCI device (slot) number.
        CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
        /// Whether the device runs under the TCC driver model (Windows).
        CU_DEVICE_ATTRIBUTE_TCC_DRIVER = 35,
        /// Peak memory clock rate, in kHz.
        CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
        /// Global memory bus width, in bits.
        CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
        /// L2 cache size, in bytes.
        CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
        /// Most threads resident on one multiprocessor.
        CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
        /// Number of asynchronous copy engines.
        CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40,
        /// Whether the device shares one virtual address space with the host.
        CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
        /// Largest layered 1D texture width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH = 42,
        /// Most layers of a layered 1D texture.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS = 43,
        /// Deprecated; do not use.
        CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER = 44,
        /// Largest 2D texture width with `CUDA_ARRAY3D_TEXTURE_GATHER`.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH = 45,
        /// Largest 2D texture height with `CUDA_ARRAY3D_TEXTURE_GATHER`.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT = 46,
        /// Alternative largest 3D texture width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE = 47,
        /// Alternative largest 3D texture height.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE = 48,
        /// Alternative largest 3D texture depth.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE = 49,
        /// PCI domain number.
        CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
        /// Pitch alignment textures require.
        CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT = 51,
        /// Largest cubemap texture width (and height).
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH = 52,
        /// Largest layered cubemap texture width (and height).
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH = 53,
        /// Most layers of a layered cubemap texture.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS = 54,
        /// Largest 1D surface width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH = 55,
        /// Largest 2D surface width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH = 56,
        /// Largest 2D surface height.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT = 57,
        /// Largest 3D surface width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH = 58,
        /// Largest 3D surface height.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT = 59,
        /// Largest 3D surface depth.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH = 60,
        /// Largest layered 1D surface width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH = 61,
        /// Most layers of a layered 1D surface.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS = 62,
        /// Largest layered 2D surface width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH = 63,
        /// Largest layered 2D surface height.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT = 64,
        /// Most layers of a layered 2D surface.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS = 65,
        /// Largest cubemap surface width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH = 66,
        /// Largest layered cubemap surface width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH = 67,
        /// Most layers of a layered cubemap surface.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS = 68,
        /// Deprecated (use `cuDeviceGetTexture1DLinearMaxWidth`): largest linear 1D texture width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH = 69,
        /// Largest linear 2D texture width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH = 70,
        /// Largest linear 2D texture height.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT = 71,
        /// Largest linear 2D texture pitch, in bytes.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH = 72,
        /// Largest mipmapped 2D texture width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH = 73,
        /// Largest mipmapped 2D texture height.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT = 74,
        /// Compute capability, major number.
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
        /// Compute capability, minor number.
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
        /// Largest mipmapped 1D texture width.
        CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH = 77,
        /// Whether streams may have priorities.
        CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED = 78,
        /// Whether globals can be cached in L1.
        CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED = 79,
        /// Whether locals can be cached in L1.
        CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED = 80,
        /// Shared memory available to one multiprocessor, in bytes.
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
        /// 32-bit registers available to one multiprocessor.
        CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
        /// Whether managed (unified) memory can be allocated on this system.
        CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
        /// Whether the device sits on a multi-GPU board.
        CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD = 84,
        /// Identifier shared by the devices of one multi-GPU board.
        CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID = 85,
        /// Whether the host link supports every native atomic operation.
        CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED = 86,
        /// Single- to double-precision throughput ratio.
        CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO = 87,
        /// Whether pageable host memory is coherently accessible without registering it.
        CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88,
        /// Whether device and CPU can access managed memory concurrently and coherently.
        CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
        /// Whether compute preemption is supported.
        CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED = 90,
        /// Whether registered host memory is reachable at the same address as on the CPU.
        CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91,
        /// Deprecated with the v1 memory-operation API: `cuStreamBatchMemOp` is supported.
        CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 = 92,
        /// Deprecated with the v1 memory-operation API: 64-bit memory operations are supported.
        CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1 = 93,
        /// Deprecated with the v1 memory-operation API: `CU_STREAM_WAIT_VALUE_NOR` is supported.
        CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1 = 94,
        /// Whether cooperative kernels can be launched (`cuLaunchCooperativeKernel`).
        CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
        /// Deprecated, as `cuLaunchCooperativeKernelMultiDevice` is.
        CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH = 96,
        /// Shared memory a block may use after opting in, in bytes.
        CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
        /// Whether remote-write flushes (`CU_STREAM_WAIT_VALUE_FLUSH` and its mem-op) are supported.
        CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES = 98,
        /// Whether host memory can be registered.
        CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED = 99,
        /// Whether pageable memory is accessed through the host's page tables.
        CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 100,
        /// Whether the host can access managed memory on the device without migrating it.
        CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = 101,
        /// Deprecated alias of `CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED`.
        CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED = 102,
        /// Whether the virtual memory management API (`cuMemCreate`, `cuMemMap`, ...) is supported.
        CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
        /// Whether allocations can be exported as POSIX file descriptors.
        CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103,
        /// Whether allocations can be exported as Win32 NT handles.
        CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED = 104,
        /// Whether allocations can be exported as Win32 KMT handles.
        CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED = 105,
        /// Most blocks resident on one multiprocessor.
        CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
        /// Whether memory compression is supported.
        CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED = 107,
        /// Largest persisting-L2 capacity that can be set, in bytes.
        CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 108,
        /// Largest `CUaccessPolicyWindow::num_bytes`.
        CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE = 109,
        /// Whether `cuMemCreate` accepts the GPUDirect RDMA flag.
        CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 110,
        /// Shared memory the driver reserves per block, in bytes.
        CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 111,
        /// Whether sparse CUDA arrays (and mipmapped arrays) are supported.
        CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED = 112,
        /// Whether `CU_MEMHOSTREGISTER_READ_ONLY` is supported.
        CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED = 113,
        /// Whether external timeline semaphores can be imported.
        CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED = 114,
        /// Whether stream-ordered allocation (`cuMemAllocAsync`, memory pools) is supported.
        CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
        /// Whether the GPUDirect RDMA APIs are supported.
        CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116,
        /// Bitmask of `CUflushGPUDirectRDMAWritesOptions`.
        CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = 117,
        /// A `CUGPUDirectRDMAWritesOrdering`: the scope within which RDMA writes need no flush.
        CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING = 118,
        /// Handle types memory-pool IPC supports.
        CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 119,
        /// Whether thread-block clusters can be launched.
        CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120,
        /// Whether CUDA arrays with deferred mapping are supported.
        CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED = 121,
        /// Whether 64-bit stream memory operations are supported.
        CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS = 122,
        /// Whether `CU_STREAM_WAIT_VALUE_NOR` is supported.
        CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR = 123,
        /// Whether dma_buf sharing is supported.
        CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
        /// Whether IPC events are supported.
        CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED = 125,
        /// Number of memory synchronization domains.
        CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT = 126,
        /// Whether memory can be accessed through tensor maps.
        CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED = 127,
        /// Whether allocations can be exported as fabric handles.
        CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 128,
        /// Whether unified function pointers are supported.
        CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS = 129,
        /// NUMA configuration, a `CUdeviceNumaConfig` value.
        CU_DEVICE_ATTRIBUTE_NUMA_CONFIG = 130,
        /// NUMA node of the device's memory.
        CU_DEVICE_ATTRIBUTE_NUMA_ID = 131,
        /// Whether switch multicast and reductions are supported.
        CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 132,
        /// Whether contexts on this device are shared through MPS.
        CU_DEVICE_ATTRIBUTE_MPS_ENABLED = 133,
        /// NUMA node of the host closest to the device, or -1.
        CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID = 134,
        /// Whether CUDA-in-graphics (CIG) with D3D12 is supported.
        CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED = 135,
        /// Bitmask of the decompression algorithms supported.
        CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK = 136,
        /// Longest single decompression operation, in bytes.
        CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH = 137,
        /// Whether CUDA-in-graphics (CIG) with Vulkan is supported.
        CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED = 138,
        /// PCI device ID and vendor ID, 16 bits each.
        CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID = 139,
        /// PCI subsystem ID and subsystem vendor ID, 16 bits each.
        CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID = 140,
        /// Whether host-NUMA locations work with the virtual memory management API.
        CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 141,
        /// Whether host-NUMA locations work with memory pools.
        CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED = 142,
        /// Whether host-NUMA IPC across the nodes of a multi-node system is supported.
        CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED = 143,
        /// Whether host locations work with memory pools.
        CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED = 144,
        /// Whether host locations work with the virtual memory management API.
        CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 145,
        /// Whether pinned host buffers can be shared through dma_buf.
        CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED = 146,
        /// Whether the host link supports only some native atomic operations.
        CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED = 147,
        /// One past the last attribute.
        CU_DEVICE_ATTRIBUTE_MAX = 148,
    }
}

c_enum! {
    /// `CUdevice_P2PAttribute`: what `cuDeviceGetP2PAttribute` can report.
    pub struct CUdevice_P2PAttribute(c_int) {
        /// Relative performance of the link between the two devices.
        CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK = 0x01,
        /// Whether peer access is enabled.
        CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED = 0x02,
        /// Whether every CUDA atomic operation works over the link.
        CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED = 0x03,
        /// Deprecated alias of `CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED`.
        CU_DEVICE_P2P_ATTRIBUTE_ACCESS_ACCESS_SUPPORTED = 0x04,
        /// Whether CUDA arrays can be accessed over the link.
        CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED = 0x04,
        /// Whether only some CUDA atomic operations work over the link.
        CU_DEVICE_P2P_ATTRIBUTE_ONLY_PARTIAL_NATIVE_ATOMIC_SUPPORTED = 0x05,
    }
}

c_enum! {
    /// `CUcomputemode`: a device's compute mode.
    pub struct CUcomputemode(c_int) {
        /// Any number of contexts per device.
        CU_COMPUTEMODE_DEFAULT = 0,
        /// No context may be created on the device.
        CU_COMPUTEMODE_PROHIBITED = 2,
        /// One context, used by a single process, at a time.
        CU_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
    }
}

c_enum! {
    /// `CUdeviceNumaConfig`: a device's NUMA configuration.
    pub struct CUdeviceNumaConfig(c_int) {
        /// The device is not a NUMA node.
        CU_DEVICE_NUMA_CONFIG_NONE = 0,
        /// The device is a NUMA node; `CU_DEVICE_ATTRIBUTE_NUMA_ID` gives its ID.
        CU_DEVICE_NUMA_CONFIG_NUMA_NODE = 1,
    }
}

// ---------------------------------------------------------------------------
// Contexts
// ---------------------------------------------------------------------------

c_enum! {
    /// `CUctx_flags`: context creation flags (a bit set).
    pub struct CUctx_flags(c_int) {
        /// Let the driver choose how the CPU waits.
        CU_CTX_SCHED_AUTO = 0x00,
        /// Spin while waiting for the GPU.
        CU_CTX_SCHED_SPIN = 0x01,
        /// Yield the CPU thread while waiting.
        CU_CTX_SCHED_YIELD = 0x02,
        /// Block the CPU thread on a synchronization primitive while waiting.
        CU_CTX_SCHED_BLOCKING_SYNC = 0x04,
        /// Deprecated since CUDA 4.0 alias of `CU_CTX_SCHED_BLOCKING_SYNC`.
        CU_CTX_BLOCKING_SYNC = 0x04,
        /// Mask of the scheduling bits.
        CU_CTX_SCHED_MASK = 0x07,
        /// Deprecated since CUDA 11.0; no effect (host mapping is always on).
        CU_CTX_MAP_HOST = 0x08,
        /// Keep the local-memory allocation after a launch.
        CU_CTX_LMEM_RESIZE_TO_MAX = 0x10,
        /// Write a core dump when an exception occurs in this context.
        CU_CTX_COREDUMP_ENABLE = 0x20,
        /// Allow a user pipe to trigger core dumps in this context.
        CU_CTX_USER_COREDUMP_ENABLE = 0x40,
        /// Make synchronous memory operations in this context synchronize.
        CU_CTX_SYNC_MEMOPS = 0x80,
        /// Mask of all flags.
        CU_CTX_FLAGS_MASK = 0xFF,
    }
}

c_enum! {
    /// `CUlimit`: per-context limits for `cuCtxGetLimit`/`cuCtxSetLimit`.
    pub struct CUlimit(c_int) {
        /// Stack size of each GPU thread, in bytes.
        CU_LIMIT_STACK_SIZE = 0x00,
        /// Size of the FIFO device `printf` writes to, in bytes.
        CU_LIMIT_PRINTF_FIFO_SIZE = 0x01,
        /// Size of the heap device `malloc` draws from, in bytes.
        CU_LIMIT_MALLOC_HEAP_SIZE = 0x02,
        /// Deepest nesting at which the device runtime may synchronize.
        CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH = 0x03,
        /// Most launches the device runtime may have pending.
        CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT = 0x04,
        /// Hint for L2's largest fetch granularity, 0 to 128 bytes.
        CU_LIMIT_MAX_L2_FETCH_GRANULARITY = 0x05,
        /// Size of the persisting L2 cache lines, in bytes.
        CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06,
        /// Query only: shared memory available to kernels on a CIG context, in bytes.
        CU_LIMIT_SHMEM_SIZE = 0x07,
        /// Query only: non-zero for a CIG-enabled context.
        CU_LIMIT_CIG_ENABLED = 0x08,
        /// Zero makes launches on a CIG context fail rather than fall back when shared memory runs short.
        CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED = 0x09,
        /// One past the last limit.
        CU_LIMIT_MAX = 10,
    }
}

c_enum! {
    /// `CUfunc_cache`: preferred split between L1 cache and shared memory.
    pub struct CUfunc_cache(c_int) {
        /// No preference (the default).
        CU_FUNC_CACHE_PREFER_NONE = 0x00,
        /// Prefer more shared memory, less L1.
        CU_FUNC_CACHE_PREFER_SHARED = 0x01,
        /// Prefer more L1, less shared memory.
        CU_FUNC_CACHE_PREFER_L1 = 0x02,
        /// Prefer equal L1 and shared memory.
        CU_FUNC_CACHE_PREFER_EQUAL = 0x03,
    }
}

c_enum! {
    /// `CUsharedconfig` (deprecated): shared-memory bank size.
    pub struct CUsharedconfig(c_int) {
        /// The device's default bank size.
        CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE = 0x00,
        /// Four-byte banks.
        CU_SHARED_MEM_CONFIG_FOUR_BYTE_BANK_SIZE = 0x01,
        /// Eight-byte banks.
        CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE = 0x02,
    }
}

c_enum! {
    /// `CUshared_carveout`: shared-memory carveout presets, in percent, for
    /// `CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`.
    pub struct CUshared_carveout(c_int) {
        /// No preference (the default).
        CU_SHAREDMEM_CARVEOUT_DEFAULT = -1,
        /// As much shared memory as possible, least L1.
        CU_SHAREDMEM_CARVEOUT_MAX_SHARED = 100,
        /// As much L1 as possible, least shared memory.
        CU_SHAREDMEM_CARVEOUT_MAX_L1 = 0,
    }
}

c_enum! {
    /// `CUexecAffinityType`: kinds of execution affinity a context can have.
    pub struct CUexecAffinityType(c_int) {
        /// Limit the context to a number of SMs.
        CU_EXEC_AFFINITY_TYPE_SM_COUNT = 0,
        /// One past the last type.
        CU_EXEC_AFFINITY_TYPE_MAX = 1,
    }
}

c_enum! {
    /// `CUcigDataType`: kinds of data shared with a CUDA-in-graphics context.
    pub struct CUcigDataType(c_int) {
        /// A D3D12 command queue handle.
        CIG_DATA_TYPE_D3D12_COMMAND_QUEUE = 0x1,
        /// An NVIDIA data blob (Vulkan and other clients).
        CIG_DATA_TYPE_NV_BLOB = 0x2,
    }
}

// ---------------------------------------------------------------------------
// Streams and events
// ---------------------------------------------------------------------------

c_enum! {
    /// `CUstream_flags`: stream creation flags.
    pub struct CUstream_flags(c_int) {
        /// Default stream behaviour.
        CU_STREAM_DEFAULT = 0x0,
        /// The stream does not synchronize with the legacy null stream.
        CU_STREAM_NON_BLOCKING = 0x1,
    }
}

c_enum! {
    /// `CUevent_flags`: event creation flags (a bit set).
    pub struct CUevent_flags(c_int) {
        /// Default event behaviour.
        CU_EVENT_DEFAULT = 0x0,
        /// Synchronizing on the event blocks the CPU thread instead of spinning.
        CU_EVENT_BLOCKING_SYNC = 0x1,
        /// The event records no timing data.
        CU_EVENT_DISABLE_TIMING = 0x2,
        /// The event can be shared between processes; needs `CU_EVENT_DISABLE_TIMING`.
        CU_EVENT_INTERPROCESS = 0x4,
    }
}

c_enum! {
    /// `CUevent_record_flags`: flags of `cuEventRecordWithFlags`.
    pub struct CUevent_record_flags(c_int) {
        /// Default record behaviour.
        CU_EVENT_RECORD_DEFAULT = 0x0,
        /// During stream capture, make an event-record node; invalid outside capture.
        CU_EVENT_RECORD_EXTERNAL = 0x1,
    }
}

c_enum! {
    /// `CUevent_wait_flags`: flags of `cuStreamWaitEvent`.
    pub struct CUevent_wait_flags(c_int) {
        /// Default wait behaviour.
        CU_EVENT_WAIT_DEFAULT = 0x0,
        /// During stream capture, make an event-wait node; invalid outside capture.
        CU_EVENT_WAIT_EXTERNAL = 0x1,
    }
}

c_enum! {
    /// `CUevent_sched_flags`: how the CPU waits on an event.
    pub struct CUevent_sched_flags(c_int) {
        /// Let the driver choose.
        CU_EVENT_SCHED_AUTO = 0x00,
        /// Spin.
        CU_EVENT_SCHED_SPIN = 0x01,
        /// Yield the CPU thread.
        CU_EVENT_SCHED_YIELD = 0x02,
        /// Block on a synchronization primitive.
        CU_EVENT_SCHED_BLOCKING_SYNC = 0x04,
    }
}

c_enum! {
    /// `CUstreamWaitValue_flags`: conditions and flags of `cuStreamWaitValue32/64`.
    pub struct CUstreamWaitValue_flags(c_int) {
        /// Wait until `(int32_t)(*addr - value) >= 0` (cyclic comparison); the default.
        CU_STREAM_WAIT_VALUE_GEQ = 0x0,
        /// Wait until `*addr == value`.
        CU_STREAM_WAIT_VALUE_EQ = 0x1,
        /// Wait until `(*addr & value) != 0`.
        CU_STREAM_WAIT_VALUE_AND = 0x2,
        /// Wait until `~(*addr | value) != 0`.
        CU_STREAM_WAIT_VALUE_NOR = 0x3,
        /// Flush outstanding remote writes after the wait.
        CU_STREAM_WAIT_VALUE_FLUSH = 1 << 30,
    }
}

c_enum! {
    /// `CUstreamWriteValue_flags`: flags of `cuStreamWriteValue32/64`.
    pub struct CUstreamWriteValue_flags(c_int) {
        /// Default: a memory fence precedes the write.
        CU_STREAM_WRITE_VALUE_DEFAULT = 0x0,
        /// Let the write be reordered with earlier writes (not in the v2 API).
        CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER = 0x1,
    }
}

c_enum! {
    /// `CUstreamCaptureStatus`: a stream's capture state.
    pub struct CUstreamCaptureStatus(c_int) {
        /// Not capturing.
        CU_STREAM_CAPTURE_STATUS_NONE = 0,
        /// Capturing.
        CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
        /// In a capture sequence that was invalidated but not yet ended.
        CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
    }
}

c_enum! {
    /// `CUstreamCaptureMode`: which unsafe API calls other threads may make during a capture.
    pub struct CUstreamCaptureMode(c_int) {
        /// Prohibit unsafe calls from any thread while any global capture is active.
        CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
        /// Prohibit unsafe calls only from this thread.
        CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
        /// Prohibit nothing.
        CU_STREAM_CAPTURE_MODE_RELAXED = 2,
    }
}

c_enum! {
    /// `CUstreamUpdateCaptureDependencies_flags`: flags of `cuStreamUpdateCaptureDependencies`.
    pub struct CUstreamUpdateCaptureDependencies_flags(c_int) {
        /// Add the nodes to the dependency set.
        CU_STREAM_ADD_CAPTURE_DEPENDENCIES = 0x0,
        /// Replace the dependency set with the nodes.
        CU_STREAM_SET_CAPTURE_DEPENDENCIES = 0x1,
    }
}

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

c_enum! {
    /// `CUmemorytype`: where memory lives, as in `CUDA_MEMCPY2D`.
    pub struct CUmemorytype(c_int) {
        /// Host memory.
        CU_MEMORYTYPE_HOST = 0x01,
        /// Device memory.
        CU_MEMORYTYPE_DEVICE = 0x02,
        /// A CUDA array.
        CU_MEMORYTYPE_ARRAY = 0x03,
        /// Unified (device or host) memory.
        CU_MEMORYTYPE_UNIFIED = 0x04,
    }
}

c_enum! {
    /// `CUmemAttach_flags`: visibility of managed memory (`cuMemAllocManaged`, `cuStreamAttachMemAsync`).
    pub struct CUmemAttach_flags(c_int) {
        /// Any stream on any device may access the memory.
        CU_MEM_ATTACH_GLOBAL = 0x1,
        /// No stream on any device may access the memory (host only).
        CU_MEM_ATTACH_HOST = 0x2,
        /// Only a single stream on the associated device may access the memory.
        CU_MEM_ATTACH_SINGLE = 0x4,
    }
}

c_enum! {
    /// `CUmem_advise`: advice for `cuMemAdvise` on managed memory.
    pub struct CUmem_advise(c_int) {
        /// The data will mostly be read, rarely written.
        CU_MEM_ADVISE_SET_READ_MOSTLY = 1,
        /// Undo `CU_MEM_ADVISE_SET_READ_MOSTLY`.
        CU_MEM_ADVISE_UNSET_READ_MOSTLY = 2,
        /// Prefer to keep the data at the given location.
        CU_MEM_ADVISE_SET_PREFERRED_LOCATION = 3,
        /// Clear the preferred location.
        CU_MEM_ADVISE_UNSET_PREFERRED_LOCATION = 4,
        /// The given device will access the data; keep it mapped there to avoid faults.
        CU_MEM_ADVISE_SET_ACCESSED_BY = 5,
        /// Let the driver decide the fault policy for the given device again.
        CU_MEM_ADVISE_UNSET_ACCESSED_BY = 6,
    }
}

c_enum! {
    /// `CUmem_range_attribute`: what `cuMemRangeGetAttribute` can report.
    pub struct CUmem_range_attribute(c_int) {
        /// Whether the range is marked read-mostly.
        CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY = 1,
        /// The range's preferred location (a device ordinal).
        CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION = 2,
        /// The devices with `CU_MEM_ADVISE_SET_ACCESSED_BY` set for the range.
        CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY = 3,
        /// Where the range was last prefetched to (a device ordinal).
        CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION = 4,
        /// Type of the range's preferred location.
        CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE = 5,
        /// Identifier of the range's preferred location.
        CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_ID = 6,
        /// Type of the location the range was last prefetched to.
        CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_TYPE = 7,
        /// Identifier of the location the range was last prefetched to.
        CU_MEM_RANGE_ATTRIBUTE_LAST_PREFETCH_LOCATION_ID = 8,
    }
}

c_enum! {
    /// `CUpointer_attribute`: what `cuPointerGetAttribute` can report.
    pub struct CUpointer_attribute(c_int) {
        /// The `CUcontext` the memory was allocated or registered in.
        CU_POINTER_ATTRIBUTE_CONTEXT = 1,
        /// The `CUmemorytype` of the memory.
        CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
        /// The address at which the device sees the memory.
        CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
        /// The address at which the host sees the memory.
        CU_POINTER_ATTRIBUTE_HOST_POINTER = 4,
        /// Tokens for the Linux kernel's nv-p2p interface.
        CU_POINTER_ATTRIBUTE_P2P_TOKENS = 5,
        /// Whether synchronous memory operations on the region always synchronize.
        CU_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6,
        /// A process-unique ID of the allocation.
        CU_POINTER_ATTRIBUTE_BUFFER_ID = 7,
        /// Whether the memory is managed.
        CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
        /// Ordinal of the device the memory was allocated or registered on.
        CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
        /// Whether the allocation can be shared with legacy CUDA IPC.
        CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE = 10,
        /// Start address of the allocation's range.
        CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
        /// Size of the allocation's range.
        CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
        /// Whether the address is mapped to a backing allocation.
        CU_POINTER_ATTRIBUTE_MAPPED = 13,
        /// Bitmask of the `CUmemAllocationHandleType`s the allocation allows.
        CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES = 14,
        /// Whether the memory can be used with GPUDirect RDMA.
        CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE = 15,
        /// The current device's access flags on the memory.
        CU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 16,
        /// The memory pool the allocation came from, or null.
        CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17,
        /// Size of the underlying mapping.
        CU_POINTER_ATTRIBUTE_MAPPING_SIZE = 18,
        /// Start address of the underlying mapping.
        CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR = 19,
        /// A process-unique ID of the physical allocation.
        CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID = 20,
        /// Whether the memory can be used for hardware-accelerated decompression.
        CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE = 21,
    }
}

c_enum! {
    /// `CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS`: values of `CU_POINTER_ATTRIBUTE_ACCESS_FLAGS`.
    pub struct CUDA_POINTER_ATTRIBUTE_ACCESS_FLAGS(c_int) {
        /// No access; the data must be staged elsewhere.
        CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE = 0x0,
        /// Read-only access.
        CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ = 0x1,
        /// Read-write access.
        CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE = 0x3,
    }
}

c_enum! {
    /// `CUmemLocationType`: kinds of memory location.
    pub struct CUmemLocationType(c_int) {
        /// Invalid location.
        CU_MEM_LOCATION_TYPE_INVALID = 0x0,
        /// No location (e.g. a managed pool with no preferred location); same value as invalid.
        CU_MEM_LOCATION_TYPE_NONE = 0x0,
        /// A device; the ID is its ordinal.
        CU_MEM_LOCATION_TYPE_DEVICE = 0x1,
        /// The host; the ID is ignored.
        CU_MEM_LOCATION_TYPE_HOST = 0x2,
        /// A host NUMA node; the ID is the node.
        CU_MEM_LOCATION_TYPE_HOST_NUMA = 0x3,
        /// The calling thread's host NUMA node; the ID is ignored.
        CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 0x4,
        /// Largest value (forces a 32-bit enum).
        CU_MEM_LOCATION_TYPE_MAX = 0x7FFFFFFF,
    }
}

c_enum! {
    /// `CUmemAllocationType`: kinds of physical allocation.
    pub struct CUmemAllocationType(c_int) {
        /// Invalid type.
        CU_MEM_ALLOCATION_TYPE_INVALID = 0x0,
        /// Pinned: cannot migrate while in use.
        CU_MEM_ALLOCATION_TYPE_PINNED = 0x1,
        /// Managed memory.
        CU_MEM_ALLOCATION_TYPE_MANAGED = 0x2,
        /// Largest value (forces a 32-bit enum).
        CU_MEM_ALLOCATION_TYPE_MAX = 0x7FFFFFFF,
    }
}

c_enum! {
    /// `CUmemAllocationHandleType`: how an allocation may be exported (a bit set).
    pub struct CUmemAllocationHandleType(c_int) {
        /// Not exportable.
        CU_MEM_HANDLE_TYPE_NONE = 0x0,
        /// As a POSIX file descriptor (`int`).
        CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1,
        /// As a Win32 NT handle.
        CU_MEM_HANDLE_TYPE_WIN32 = 0x2,
        /// As a Win32 KMT handle.
        CU_MEM_HANDLE_TYPE_WIN32_KMT = 0x4,
        /// As a fabric handle (`CUmemFabricHandle`).
        CU_MEM_HANDLE_TYPE_FABRIC = 0x8,
        /// Largest value (forces a 32-bit enum).
        CU_MEM_HANDLE_TYPE_MAX = 0x7FFFFFFF,
    }
}

c_enum! {
    /// `CUmemAccess_flags`: protection of a mapped range.
    pub struct CUmemAccess_flags(c_int) {
        /// Not accessible (the default).
        CU_MEM_ACCESS_FLAGS_PROT_NONE = 0x0,
        /// Readable.
        CU_MEM_ACCESS_FLAGS_PROT_READ = 0x1,
        /// Readable and writable.
        CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3,
        /// Largest value (forces a 32-bit enum).
        CU_MEM_ACCESS_FLAGS_PROT_MAX = 0x7FFFFFFF,
    }
}

c_enum! {
    /// `CUmemAllocationGranularity_flags`: which granularity `cuMemGetAllocationGranularity` reports.
    pub struct CUmemAllocationGranularity_flags(c_int) {
        /// The minimum granularity.
        CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0,
        /// The granularity recommended for performance.
        CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 0x1,
    }
}

c_enum! {
    /// `CUmemAllocationCompType`: compression of an allocation.
    pub struct CUmemAllocationCompType(c_int) {
        /// Not compressible.
        CU_MEM_ALLOCATION_COMP_NONE = 0x0,
        /// Compressible.
        CU_MEM_ALLOCATION_COMP_GENERIC = 0x1,
    }
}

c_enum! {
    /// `CUmemPool_attribute`: memory-pool attributes (`cuMemPoolGetAttribute`).
    pub struct CUmemPool_attribute(c_int) {
        /// `int`: reuse memory freed in another stream when an event dependency orders it.
        CU_MEMPOOL_ATTR_REUSE_FOLLOW_EVENT_DEPENDENCIES = 1,
        /// `int`: reuse already-completed frees with no dependency.
        CU_MEMPOOL_ATTR_REUSE_ALLOW_OPPORTUNISTIC = 2,
        /// `int`: let the allocator add stream dependencies to reuse freed memory.
        CU_MEMPOOL_ATTR_REUSE_ALLOW_INTERNAL_DEPENDENCIES = 3,
        /// `cuuint64_t`: bytes to keep reserved before releasing memory to the OS.
        CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
        /// `cuuint64_t`: backing memory currently allocated.
        CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5,
        /// `cuuint64_t`: high-water mark of backing memory (resettable to zero).
        CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH = 6,
        /// `cuuint64_t`: memory currently in use by the application.
        CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7,
        /// `cuuint64_t`: high-water mark of memory in use (resettable to zero).
        CU_MEMPOOL_ATTR_USED_MEM_HIGH = 8,
    }
}

c_enum! {
    /// `CUmemcpyFlags`: flags of copies in a batch (`cuMemcpyBatchAsync`).
    pub struct CUmemcpyFlags(c_int) {
        /// Default behaviour.
        CU_MEMCPY_FLAG_DEFAULT = 0x0,
        /// Hint: try to overlap the copy with compute work.
        CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE = 0x1,
    }
}

c_enum! {
    /// `CUmemcpySrcAccessOrder`: how a batched copy may order its source accesses.
    pub struct CUmemcpySrcAccessOrder(c_int) {
        /// Invalid (the zero value).
        CU_MEMCPY_SRC_ACCESS_ORDER_INVALID = 0x0,
        /// The source is read in stream order.
        CU_MEMCPY_SRC_ACCESS_ORDER_STREAM = 0x1,
        /// The source may be read out of order, but only during the API call.
        CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL = 0x2,
        /// The source may be read out of order, even after the call returns.
        CU_MEMCPY_SRC_ACCESS_ORDER_ANY = 0x3,
        /// Largest value (forces a 32-bit enum).
        CU_MEMCPY_SRC_ACCESS_ORDER_MAX = 0x7FFFFFFF,
    }
}

c_enum! {
    /// `CUipcMem_flags`: flags of `cuIpcOpenMemHandle`.
    pub struct CUipcMem_flags(c_int) {
        /// Enable peer access between the devices as needed.
        CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS = 0x1,
    }
}

// ---------------------------------------------------------------------------
// Modules, functions, JIT
// ---------------------------------------------------------------------------

c_enum! {
    /// `CUfunction_attribute`: function attributes (`cuFuncGetAttribute`, `cuFuncSetAttribute`).
    pub struct CUfunction_attribute(c_int) {
        /// Most threads per block a launch of this function may use, on this device.
        CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
        /// Static shared memory the function needs, in bytes (dynamic excluded).
        CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
        /// User constant memory the function needs, in bytes.
        CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
        /// Local memory per thread, in bytes.
        CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
        /// Registers per thread.
        CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
        /// PTX version compiled for, major * 10 + minor (0 for very old cubins).
        CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
        /// Binary architecture compiled for, major * 10 + minor.
        CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
        /// Whether it was compiled with `-Xptxas --dlcm=ca`.
        CU_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7,
        /// Most dynamic shared memory a launch may request, in bytes; settable up to the opt-in limit.
        CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
        /// Hint: shared-memory carveout in percent (see `CUshared_carveout`).
        CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,
        /// Whether launches must specify a cluster size.
        CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET = 10,
        /// Required cluster width in blocks.
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11,
        /// Required cluster height in blocks.
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT = 12,
        /// Required cluster depth in blocks.
        CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH = 13,
        /// Whether a non-portable cluster size may be used.
        CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
        /// Block scheduling policy, a `CUclusterSchedulingPolicy` value.
        CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15,
        /// One past the last attribute.
        CU_FUNC_ATTRIBUTE_MAX = 16,
    }
}

c_enum! {
    /// `CUclusterSchedulingPolicy`: how the blocks of a cluster are placed on SMs.
    pub struct CUclusterSchedulingPolicy(c_int) {
        /// The default policy.
        CU_CLUSTER_SCHEDULING_POLICY_DEFAULT = 0,
        /// Spread the blocks over the SMs.
        CU_CLUSTER_SCHEDULING_POLICY_SPREAD = 1,
        /// Let the hardware balance the blocks over the SMs.
        CU_CLUSTER_SCHEDULING_POLICY_LOAD_BALANCING = 2,
    }
}

c_enum! {
    /// `CUmoduleLoadingMode`: lazy or eager kernel loading (`cuModuleGetLoadingMode`).
    pub struct CUmoduleLoadingMode(c_int) {
        /// Lazy loading is off.
        CU_MODULE_EAGER_LOADING = 0x1,
        /// Lazy loading is on.
        CU_MODULE_LAZY_LOADING = 0x2,
    }
}

c_enum! {
    /// `CUfunctionLoadingState`: whether a function is loaded (`cuFuncIsLoaded`).
    pub struct CUfunctionLoadingState(c_int) {
        /// Not loaded yet.
        CU_FUNCTION_LOADING_STATE_UNLOADED = 0,
        /// Loaded.
        CU_FUNCTION_LOADING_STATE_LOADED = 1,
        /// One past the last state.
        CU_FUNCTION_LOADING_STATE_MAX = 2,
    }
}

c_enum! {
    /// `CUlibraryOption`: options of `cuLibraryLoadData`/`cuLibraryLoadFromFile`.
    pub struct CUlibraryOption(c_int) {
        /// A `CUlibraryHostUniversalFunctionAndDataTable`.
        CU_LIBRARY_HOST_UNIVERSAL_FUNCTION_AND_DATA_TABLE = 0,
        /// The image passed to `cuLibraryLoadData` stays alive until unload, so the driver need not copy it.
        CU_LIBRARY_BINARY_IS_PRESERVED = 1,
        /// Number of options.
        CU_LIBRARY_NUM_OPTIONS = 2,
    }
}

c_enum! {
    /// `CUjit_option`: JIT compiler and linker options; each option's value
    /// is passed as a `void*` whose meaning is noted below.
    pub struct CUjit_option(c_int) {
        /// `unsigned int`: most registers a thread may use (compiler).
        CU_JIT_MAX_REGISTERS = 0,
        /// `unsigned int`, in and out: threads per block to target; not with `CU_JIT_TARGET` (compiler).
        CU_JIT_THREADS_PER_BLOCK = 1,
        /// `float`, out: wall time spent compiling and linking, in ms.
        CU_JIT_WALL_TIME = 2,
        /// `char*`: buffer for informational log messages.
        CU_JIT_INFO_LOG_BUFFER = 3,
        /// `unsigned int`, in and out: size of the info log buffer, then bytes written.
        CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
        /// `char*`: buffer for error log messages.
        CU_JIT_ERROR_LOG_BUFFER = 5,
        /// `unsigned int`, in and out: size of the error log buffer, then bytes written.
        CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
        /// `unsigned int`: optimization level 0 to 4 (4 is the default).
        CU_JIT_OPTIMIZATION_LEVEL = 7,
        /// No value: target the current context's device (the default).
        CU_JIT_TARGET_FROM_CUCONTEXT = 8,
        /// `unsigned int`, a `CUjit_target`: the target; not with `CU_JIT_THREADS_PER_BLOCK`.
        CU_JIT_TARGET = 9,
        /// `unsigned int`, a `CUjit_fallback`: what to do without a matching cubin (not for linking).
        CU_JIT_FALLBACK_STRATEGY = 10,
        /// `int`: emit debug information (`-g`).
        CU_JIT_GENERATE_DEBUG_INFO = 11,
        /// `int`: verbose log messages.
        CU_JIT_LOG_VERBOSE = 12,
        /// `int`: emit line information (`-lineinfo`) (compiler).
        CU_JIT_GENERATE_LINE_INFO = 13,
        /// `unsigned int`, a `CUjit_cacheMode`: the `-dlcm` caching mode (compiler).
        CU_JIT_CACHE_MODE = 14,
        /// Deprecated; do not use.
        CU_JIT_NEW_SM3X_OPT = 15,
        /// Internal use only.
        CU_JIT_FAST_COMPILE = 16,
        /// `const char**`: device symbols to relocate to host addresses (dynamic linker).
        CU_JIT_GLOBAL_SYMBOL_NAMES = 17,
        /// `void**`: the host addresses for `CU_JIT_GLOBAL_SYMBOL_NAMES` (dynamic linker).
        CU_JIT_GLOBAL_SYMBOL_ADDRESSES = 18,
        /// `unsigned int`: number of global symbol names and addresses (dynamic linker).
        CU_JIT_GLOBAL_SYMBOL_COUNT = 19,
        /// Deprecated, `int`: link-time optimization for pre-12.0 LTO-IR.
        CU_JIT_LTO = 20,
        /// Deprecated, `int`: flush denormals to zero under LTO.
        CU_JIT_FTZ = 21,
        /// Deprecated, `int`: IEEE-exact division under LTO.
        CU_JIT_PREC_DIV = 22,
        /// Deprecated, `int`: IEEE-exact square root under LTO.
        CU_JIT_PREC_SQRT = 23,
        /// Deprecated, `int`: contract multiply-adds into FMAs under LTO.
        CU_JIT_FMA = 24,
        /// Deprecated, `const char**`: kernels to keep when linking (pre-12.0 LTO-IR).
        CU_JIT_REFERENCED_KERNEL_NAMES = 25,
        /// Deprecated, `unsigned int`: number of `CU_JIT_REFERENCED_KERNEL_NAMES`.
        CU_JIT_REFERENCED_KERNEL_COUNT = 26,
        /// Deprecated, `const char**`: variables to keep when linking (pre-12.0 LTO-IR).
        CU_JIT_REFERENCED_VARIABLE_NAMES = 27,
        /// Deprecated, `unsigned int`: number of `CU_JIT_REFERENCED_VARIABLE_NAMES`.
        CU_JIT_REFERENCED_VARIABLE_COUNT = 28,
        /// Deprecated, `int`: allow removing unreferenced device variables under LTO.
        CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES = 29,
        /// `int`: generate position-independent code (compiler).
        CU_JIT_POSITION_INDEPENDENT_CODE = 30,
        /// `unsigned int`: hint for the minimum CTAs per SM (compiler).
        CU_JIT_MIN_CTA_PER_SM = 31,
        /// `int`: upper bound on threads per block (compiler).
        CU_JIT_MAX_THREADS_PER_BLOCK = 32,
        /// `int`: let the JIT launch-bound options override PTX directives (compiler).
        CU_JIT_OVERRIDE_DIRECTIVE_VALUES = 33,
        /// `unsigned int`: threads for parallel compilation; 0 is one per CPU (compiler).
        CU_JIT_SPLIT_COMPILE = 34,
        /// Number of options.
        CU_JIT_NUM_OPTIONS = 35,
    }
}

c_enum! {
    /// `CUjit_target`: JIT compilation targets.
    pub struct CUjit_target(c_int) {
        /// Compute capability 3.0.
        CU_TARGET_COMPUTE_30 = 30,
        /// Compute capability 3.2.
        CU_TARGET_COMPUTE_32 = 32,
        /// Compute capability 3.5.
        CU_TARGET_COMPUTE_35 = 35,
        /// Compute capability 3.7.
        CU_TARGET_COMPUTE_37 = 37,
        /// Compute capability 5.0.
        CU_TARGET_COMPUTE_50 = 50,
        /// Compute capability 5.2.
        CU_TARGET_COMPUTE_52 = 52,
        /// Compute capability 5.3.
        CU_TARGET_COMPUTE_53 = 53,
        /// Compute capability 6.0.
        CU_TARGET_COMPUTE_60 = 60,
        /// Compute capability 6.1.
        CU_TARGET_COMPUTE_61 = 61,
        /// Compute capability 6.2.
        CU_TARGET_COMPUTE_62 = 62,
        /// Compute capability 7.0.
        CU_TARGET_COMPUTE_70 = 70,
        /// Compute capability 7.2.
        CU_TARGET_COMPUTE_72 = 72,
        /// Compute capability 7.5.
        CU_TARGET_COMPUTE_75 = 75,
        /// Compute capability 8.0.
        CU_TARGET_COMPUTE_80 = 80,
        /// Compute capability 8.6.
        CU_TARGET_COMPUTE_86 = 86,
        /// Compute capability 8.7.
        CU_TARGET_COMPUTE_87 = 87,
        /// Compute capability 8.9.
        CU_TARGET_COMPUTE_89 = 89,
        /// Compute capability 9.0.
        CU_TARGET_COMPUTE_90 = 90,
        /// Compute capability 10.0.
        CU_TARGET_COMPUTE_100 = 100,
        /// Compute capability 11.0.
        CU_TARGET_COMPUTE_110 = 110,
        /// Compute capability 10.3.
        CU_TARGET_COMPUTE_103 = 103,
        /// Compute capability 12.0.
        CU_TARGET_COMPUTE_120 = 120,
        /// Compute capability 12.1.
        CU_TARGET_COMPUTE_121 = 121,
        /// Compute capability 9.0 with architecture-specific features (`sm_90a`).
        CU_TARGET_COMPUTE_90A = CU_COMPUTE_ACCELERATED_TARGET_BASE + 90,
        /// Compute capability 10.0 with architecture-specific features.
        CU_TARGET_COMPUTE_100A = CU_COMPUTE_ACCELERATED_TARGET_BASE + 100,
        /// Compute capability 11.0 with architecture-specific features.
        CU_TARGET_COMPUTE_110A = CU_COMPUTE_ACCELERATED_TARGET_BASE + 110,
        /// Compute capability 10.3 with architecture-specific features.
        CU_TARGET_COMPUTE_103A = CU_COMPUTE_ACCELERATED_TARGET_BASE + 103,
        /// Compute capability 12.0 with architecture-specific features.
        CU_TARGET_COMPUTE_120A = CU_COMPUTE_ACCELERATED_TARGET_BASE + 120,
        /// Compute capability 12.1 with architecture-specific features.
        CU_TARGET_COMPUTE_121A = CU_COMPUTE_ACCELERATED_TARGET_BASE + 121,
        /// Compute capability 10.x with family-specific features.
        CU_TARGET_COMPUTE_100F = CU_COMPUTE_FAMILY_TARGET_BASE + 100,
        /// Compute capability 11.0 with family-specific features.
        CU_TARGET_COMPUTE_110F = CU_COMPUTE_FAMILY_TARGET_BASE + 110,
        /// Compute capability 10.3 with family-specific features.
        CU_TARGET_COMPUTE_103F = CU_COMPUTE_FAMILY_TARGET_BASE + 103,
        /// Compute capability 12.0 with family-specific features.
        CU_TARGET_COMPUTE_120F = CU_COMPUTE_FAMILY_TARGET_BASE + 120,
        /// Compute capability 12.1 with family-specific features.
        CU_TARGET_COMPUTE_121F = CU_COMPUTE_FAMILY_TARGET_BASE + 121,
    }
}

/// `CU_COMPUTE_ACCELERATED_TARGET_BASE`: added to a `CUjit_target` for the
/// architecture-specific ("a") variant.
pub const CU_COMPUTE_ACCELERATED_TARGET_BASE: c_int = 0x10000;
/// `CU_COMPUTE_FAMILY_TARGET_BASE`: added to a `CUjit_target` for the
/// family-specific ("f") variant.
pub const CU_COMPUTE_FAMILY_TARGET_BASE: c_int = 0x20000;

c_enum! {
    /// `CUjit_fallback`: what the JIT does when no cubin matches exactly.
    pub struct CUjit_fallback(c_int) {
        /// Compile the PTX.
        CU_PREFER_PTX = 0,
        /// Use a compatible cubin.
        CU_PREFER_BINARY = 1,
    }
}

c_enum! {
    /// `CUjit_cacheMode`: the `-dlcm` caching mode.
    pub struct CUjit_cacheMode(c_int) {
        /// No `-dlcm` flag.
        CU_JIT_CACHE_OPTION_NONE = 0,
        /// L1 caching off (`-dlcm=cg`).
        CU_JIT_CACHE_OPTION_CG = 1,
        /// L1 caching on (`-dlcm=ca`).
        CU_JIT_CACHE_OPTION_CA = 2,
    }
}

c_enum! {
    /// `CUjitInputType`: kinds of input to the JIT linker.
    pub struct CUjitInputType(c_int) {
        /// A cubin for one device class.
        CU_JIT_INPUT_CUBIN = 0,
        /// PTX source.
        CU_JIT_INPUT_PTX = 1,
        /// A fatbinary of cubins and/or PTX.
        CU_JIT_INPUT_FATBINARY = 2,
        /// A host object with embedded device code.
        CU_JIT_INPUT_OBJECT = 3,
        /// An archive of host objects with embedded device code.
        CU_JIT_INPUT_LIBRARY = 4,
        /// Deprecated: NVVM IR for link-time optimization (pre-12.0).
        CU_JIT_INPUT_NVVM = 5,
        /// Number of input types.
        CU_JIT_NUM_INPUT_TYPES = 6,
    }
}

c_enum! {
    /// `CUoccupancy_flags`: flags of the occupancy calculator.
    pub struct CUoccupancy_flags(c_int) {
        /// Default behaviour.
        CU_OCCUPANCY_DEFAULT = 0x0,
        /// Assume global caching is on and cannot be turned off automatically.
        CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE = 0x1,
    }
}

c_enum! {
    /// `CUdriverProcAddress_flags`: search flags of `cuGetProcAddress`.
    pub struct CUdriverProcAddress_flags(c_int) {
        /// Default search.
        CU_GET_PROC_ADDRESS_DEFAULT = 0,
        /// Search the legacy-default-stream versions.
        CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1 << 0,
        /// Search the per-thread-default-stream versions.
        CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 1 << 1,
    }
}

c_enum! {
    /// `CUdriverProcAddressQueryResult`: the outcome of a `cuGetProcAddress` search.
    pub struct CUdriverProcAddressQueryResult(c_int) {
        /// Found.
        CU_GET_PROC_ADDRESS_SUCCESS = 0,
        /// Not found.
        CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
        /// Found, but not for the version asked.
        CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
    }
}

// ---------------------------------------------------------------------------
// Launch attributes
// ---------------------------------------------------------------------------

c_enum! {
    /// `CUlaunchAttributeID`: the `id` of a `CUlaunchAttribute`; also the
    /// stream and kernel-node attribute IDs. Value 15 is unassigned in 13.0.
    pub struct CUlaunchAttributeID(c_int) {
        /// Ignored entry.
        CU_LAUNCH_ATTRIBUTE_IGNORE = 0,
        /// `accessPolicyWindow` (streams, graph nodes, launches).
        CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1,
        /// `cooperative` (graph nodes, launches).
        CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2,
        /// `syncPolicy` (streams).
        CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY = 3,
        /// `clusterDim` (graph nodes, launches).
        CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = 4,
        /// `clusterSchedulingPolicyPreference` (graph nodes, launches).
        CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 5,
        /// `programmaticStreamSerializationAllowed`: let the grid overlap the previous kernel (launches).
        CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6,
        /// `programmaticEvent`: an event triggered when every block has triggered it (launches).
        CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT = 7,
        /// `priority` (streams, graph nodes, launches).
        CU_LAUNCH_ATTRIBUTE_PRIORITY = 8,
        /// `memSyncDomainMap` (streams, graph nodes, launches).
        CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP = 9,
        /// `memSyncDomain` (streams, graph nodes, launches).
        CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN = 10,
        /// `preferredClusterDim`: a preferred, larger substitute cluster shape (graph nodes, launches).
        CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION = 11,
        /// `launchCompletionEvent`: an event triggered once every block has started (launches).
        CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT = 12,
        /// `deviceUpdatableKernelNode`: make the kernel node updatable from the device (graphs only).
        CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE = 13,
        /// `sharedMemCarveout`: shared-memory carveout hint in percent (launches).
        CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 14,
        /// `nvlinkUtilCentricScheduling`: hint to favour NVLink utilization (streams, graph nodes, launches).
        CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING = 16,
    }
}

/// `CUkernelNodeAttrID`: kernel-node attribute IDs are launch attribute IDs.
pub type CUkernelNodeAttrID = CUlaunchAttributeID;
/// `CUstreamAttrID`: stream attribute IDs are launch attribute IDs.
pub type CUstreamAttrID = CUlaunchAttributeID;

c_enum! {
    /// `CUaccessProperty`: cache persistence for the hit and miss parts of an access policy window.
    pub struct CUaccessProperty(c_int) {
        /// Normal persistence.
        CU_ACCESS_PROPERTY_NORMAL = 0,
        /// Streaming: less likely to stay in cache.
        CU_ACCESS_PROPERTY_STREAMING = 1,
        /// Persisting: more likely to stay in cache.
        CU_ACCESS_PROPERTY_PERSISTING = 2,
    }
}

c_enum! {
    /// `CUsynchronizationPolicy`: how the CPU waits for work in a stream.
    pub struct CUsynchronizationPolicy(c_int) {
        /// Let the driver choose.
        CU_SYNC_POLICY_AUTO = 1,
        /// Spin.
        CU_SYNC_POLICY_SPIN = 2,
        /// Yield the CPU thread.
        CU_SYNC_POLICY_YIELD = 3,
        /// Block on a synchronization primitive.
        CU_SYNC_POLICY_BLOCKING_SYNC = 4,
    }
}

c_enum! {
    /// `CUlaunchMemSyncDomain`: memory synchronization domain of a launch.
    pub struct CUlaunchMemSyncDomain(c_int) {
        /// The default domain.
        CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT = 0,
        /// The remote domain.
        CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE = 1,
    }
}

// ---------------------------------------------------------------------------
// Graphs
// ---------------------------------------------------------------------------

c_enum! {
    /// `CUgraphNodeType`: kinds of graph node.
    pub struct CUgraphNodeType(c_int) {
        /// Kernel launch.
        CU_GRAPH_NODE_TYPE_KERNEL = 0,
        /// Memory copy.
        CU_GRAPH_NODE_TYPE_MEMCPY = 1,
        /// Memory set.
        CU_GRAPH_NODE_TYPE_MEMSET = 2,
        /// Host function.
        CU_GRAPH_NODE_TYPE_HOST = 3,
        /// Embedded child graph.
        CU_GRAPH_NODE_TYPE_GRAPH = 4,
        /// No operation.
        CU_GRAPH_NODE_TYPE_EMPTY = 5,
        /// Wait on an event.
        CU_GRAPH_NODE_TYPE_WAIT_EVENT = 6,
        /// Record an event.
        CU_GRAPH_NODE_TYPE_EVENT_RECORD = 7,
        /// Signal external semaphores.
        CU_GRAPH_NODE_TYPE_EXT_SEMAS_SIGNAL = 8,
        /// Wait on external semaphores.
        CU_GRAPH_NODE_TYPE_EXT_SEMAS_WAIT = 9,
        /// Memory allocation.
        CU_GRAPH_NODE_TYPE_MEM_ALLOC = 10,
        /// Memory free.
        CU_GRAPH_NODE_TYPE_MEM_FREE = 11,
        /// Batch of stream memory operations.
        CU_GRAPH_NODE_TYPE_BATCH_MEM_OP = 12,
        /// Conditional execution or loop of body graphs.
        CU_GRAPH_NODE_TYPE_CONDITIONAL = 13,
    }
}

c_enum! {
    /// `CUgraphDependencyType`: kinds of graph edge (`CUgraphEdgeData::type`).
    pub struct CUgraphDependencyType(c_int) {
        /// An ordinary dependency.
        CU_GRAPH_DEPENDENCY_TYPE_DEFAULT = 0,
        /// A programmatic dependency between kernel nodes.
        CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC = 1,
    }
}

c_enum! {
    /// `CUgraphConditionalNodeType`: kinds of conditional node.
    pub struct CUgraphConditionalNodeType(c_int) {
        /// If (and optionally else).
        CU_GRAPH_COND_TYPE_IF = 0,
        /// While the condition is non-zero.
        CU_GRAPH_COND_TYPE_WHILE = 1,
        /// Switch on the condition's value.
        CU_GRAPH_COND_TYPE_SWITCH = 2,
    }
}

c_enum! {
    /// `CUgraphChildGraphNodeOwnership`: whether a child graph is cloned or moved into its parent.
    pub struct CUgraphChildGraphNodeOwnership(c_int) {
        /// Clone the child graph (the default).
        CU_GRAPH_CHILD_GRAPH_OWNERSHIP_CLONE = 0,
        /// Move the child graph; the parent owns and destroys it.
        CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE = 1,
    }
}

c_enum! {
    /// `CUgraphInstantiateResult`: outcome of `cuGraphInstantiateWithParams`.
    pub struct CUgraphInstantiateResult(c_int) {
        /// Instantiated.
        CUDA_GRAPH_INSTANTIATE_SUCCESS = 0,
        /// Failed for a reason the returned `CUresult` gives.
        CUDA_GRAPH_INSTANTIATE_ERROR = 1,
        /// Failed: the graph's structure is invalid (a cycle, say).
        CUDA_GRAPH_INSTANTIATE_INVALID_STRUCTURE = 2,
        /// Failed for device launch: an operation is unsupported there.
        CUDA_GRAPH_INSTANTIATE_NODE_OPERATION_NOT_SUPPORTED = 3,
        /// Failed for device launch: the nodes belong to several contexts.
        CUDA_GRAPH_INSTANTIATE_MULTIPLE_CTXS_NOT_SUPPORTED = 4,
        /// Failed: a conditional handle is not used by any conditional node.
        CUDA_GRAPH_INSTANTIATE_CONDITIONAL_HANDLE_UNUSED = 5,
    }
}

c_enum! {
    /// `CUgraphInstantiate_flags`: flags of graph instantiation (a bit set).
    pub struct CUgraphInstantiate_flags(c_int) {
        /// Free the graph's allocations before each relaunch.
        CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH = 1,
        /// Upload the graph right after instantiation (`cuGraphInstantiateWithParams` only).
        CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD = 2,
        /// Make the graph launchable from the device.
        CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH = 4,
        /// Use each node's priority rather than the stream's.
        CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY = 8,
    }
}

c_enum! {
    /// `CUgraphExecUpdateResult`: outcome of `cuGraphExecUpdate`.
    pub struct CUgraphExecUpdateResult(c_int) {
        /// Updated.
        CU_GRAPH_EXEC_UPDATE_SUCCESS = 0x0,
        /// Failed for a reason the returned `CUresult` gives.
        CU_GRAPH_EXEC_UPDATE_ERROR = 0x1,
        /// Failed: the topology changed.
        CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED = 0x2,
        /// Failed: a node's type changed.
        CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED = 0x3,
        /// Failed: a kernel node's function changed (drivers before 11.2).
        CU_GRAPH_EXEC_UPDATE_ERROR_FUNCTION_CHANGED = 0x4,
        /// Failed: parameters changed in an unsupported way.
        CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED = 0x5,
        /// Failed: something about a node is unsupported.
        CU_GRAPH_EXEC_UPDATE_ERROR_NOT_SUPPORTED = 0x6,
        /// Failed: a kernel node's function changed in an unsupported way.
        CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE = 0x7,
        /// Failed: node attributes changed in an unsupported way.
        CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED = 0x8,
    }
}

c_enum! {
    /// `CUgraphMem_attribute`: graph memory attributes (`cuDeviceGetGraphMemAttribute`).
    pub struct CUgraphMem_attribute(c_int) {
        /// `cuuint64_t`: memory currently associated with graphs.
        CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT = 0,
        /// `cuuint64_t`: high-water mark of memory associated with graphs (resettable to zero).
        CU_GRAPH_MEM_ATTR_USED_MEM_HIGH = 1,
        /// `cuuint64_t`: memory currently reserved by the graph allocator.
        CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT = 2,
        /// `cuuint64_t`: high-water mark of memory reserved by the graph allocator.
        CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH = 3,
    }
}

c_enum! {
    /// `CUgraphDebugDot_flags`: what `cuGraphDebugDotPrint` writes (a bit set).
    pub struct CUgraphDebugDot_flags(c_int) {
        /// Everything, as if every flag were set.
        CU_GRAPH_DEBUG_DOT_FLAGS_VERBOSE = 1 << 0,
        /// Use the runtime API's structures.
        CU_GRAPH_DEBUG_DOT_FLAGS_RUNTIME_TYPES = 1 << 1,
        /// Kernel node parameters.
        CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_PARAMS = 1 << 2,
        /// Memcpy node parameters.
        CU_GRAPH_DEBUG_DOT_FLAGS_MEMCPY_NODE_PARAMS = 1 << 3,
        /// Memset node parameters.
        CU_GRAPH_DEBUG_DOT_FLAGS_MEMSET_NODE_PARAMS = 1 << 4,
        /// Host node parameters.
        CU_GRAPH_DEBUG_DOT_FLAGS_HOST_NODE_PARAMS = 1 << 5,
        /// Event handles of record and wait nodes.
        CU_GRAPH_DEBUG_DOT_FLAGS_EVENT_NODE_PARAMS = 1 << 6,
        /// External semaphore signal node parameters.
        CU_GRAPH_DEBUG_DOT_FLAGS_EXT_SEMAS_SIGNAL_NODE_PARAMS = 1 << 7,
        /// External semaphore wait node parameters.
        CU_GRAPH_DEBUG_DOT_FLAGS_EXT_SEMAS_WAIT_NODE_PARAMS = 1 << 8,
        /// Kernel node attributes.
        CU_GRAPH_DEBUG_DOT_FLAGS_KERNEL_NODE_ATTRIBUTES = 1 << 9,
        /// Node handles and kernel function handles.
        CU_GRAPH_DEBUG_DOT_FLAGS_HANDLES = 1 << 10,
        /// Memory allocation node parameters.
        CU_GRAPH_DEBUG_DOT_FLAGS_MEM_ALLOC_NODE_PARAMS = 1 << 11,
        /// Memory free node parameters.
        CU_GRAPH_DEBUG_DOT_FLAGS_MEM_FREE_NODE_PARAMS = 1 << 12,
        /// Batch memory operation node parameters.
        CU_GRAPH_DEBUG_DOT_FLAGS_BATCH_MEM_OP_NODE_PARAMS = 1 << 13,
        /// Edge numbering.
        CU_GRAPH_DEBUG_DOT_FLAGS_EXTRA_TOPO_INFO = 1 << 14,
        /// Conditional node parameters.
        CU_GRAPH_DEBUG_DOT_FLAGS_CONDITIONAL_NODE_PARAMS = 1 << 15,
    }
}

c_enum! {
    /// `CUuserObject_flags`: flags of `cuUserObjectCreate`.
    pub struct CUuserObject_flags(c_int) {
        /// The destructor's execution is not synchronized with any CUDA handle.
        CU_USER_OBJECT_NO_DESTRUCTOR_SYNC = 1,
    }
}

c_enum! {
    /// `CUuserObjectRetain_flags`: flags of `cuGraphRetainUserObject`.
    pub struct CUuserObjectRetain_flags(c_int) {
        /// Move the caller's references instead of creating new ones.
        CU_GRAPH_USER_OBJECT_MOVE = 1,
    }
}

// ---------------------------------------------------------------------------
// Arrays, textures, surfaces
// ---------------------------------------------------------------------------

c_enum! {
    /// `CUarray_format`: element formats of CUDA arrays.
    pub struct CUarray_format(c_int) {
        /// 8-bit unsigned integers.
        CU_AD_FORMAT_UNSIGNED_INT8 = 0x01,
        /// 16-bit unsigned integers.
        CU_AD_FORMAT_UNSIGNED_INT16 = 0x02,
        /// 32-bit unsigned integers.
        CU_AD_FORMAT_UNSIGNED_INT32 = 0x03,
        /// 8-bit signed integers.
        CU_AD_FORMAT_SIGNED_INT8 = 0x08,
        /// 16-bit signed integers.
        CU_AD_FORMAT_SIGNED_INT16 = 0x09,
        /// 32-bit signed integers.
        CU_AD_FORMAT_SIGNED_INT32 = 0x0a,
        /// 16-bit floats.
        CU_AD_FORMAT_HALF = 0x10,
        /// 32-bit floats.
        CU_AD_FORMAT_FLOAT = 0x20,
        /// 8-bit planar YUV, 4:2:0.
        CU_AD_FORMAT_NV12 = 0xb0,
        /// 1 channel, 8-bit unsigned normalized.
        CU_AD_FORMAT_UNORM_INT8X1 = 0xc0,
        /// 2 channels, 8-bit unsigned normalized.
        CU_AD_FORMAT_UNORM_INT8X2 = 0xc1,
        /// 4 channels, 8-bit unsigned normalized.
        CU_AD_FORMAT_UNORM_INT8X4 = 0xc2,
        /// 1 channel, 16-bit unsigned normalized.
        CU_AD_FORMAT_UNORM_INT16X1 = 0xc3,
        /// 2 channels, 16-bit unsigned normalized.
        CU_AD_FORMAT_UNORM_INT16X2 = 0xc4,
        /// 4 channels, 16-bit unsigned normalized.
        CU_AD_FORMAT_UNORM_INT16X4 = 0xc5,
        /// 1 channel, 8-bit signed normalized.
        CU_AD_FORMAT_SNORM_INT8X1 = 0xc6,
        /// 2 channels, 8-bit signed normalized.
        CU_AD_FORMAT_SNORM_INT8X2 = 0xc7,
        /// 4 channels, 8-bit signed normalized.
        CU_AD_FORMAT_SNORM_INT8X4 = 0xc8,
        /// 1 channel, 16-bit signed normalized.
        CU_AD_FORMAT_SNORM_INT16X1 = 0xc9,
        /// 2 channels, 16-bit signed normalized.
        CU_AD_FORMAT_SNORM_INT16X2 = 0xca,
        /// 4 channels, 16-bit signed normalized.
        CU_AD_FORMAT_SNORM_INT16X4 = 0xcb,
        /// BC1 block-compressed, 4 channels unsigned normalized.
        CU_AD_FORMAT_BC1_UNORM = 0x91,
        /// BC1 block-compressed, sRGB.
        CU_AD_FORMAT_BC1_UNORM_SRGB = 0x92,
        /// BC2 block-compressed, 4 channels unsigned normalized.
        CU_AD_FORMAT_BC2_UNORM = 0x93,
        /// BC2 block-compressed, sRGB.
        CU_AD_FORMAT_BC2_UNORM_SRGB = 0x94,
        /// BC3 block-compressed, 4 channels unsigned normalized.
        CU_AD_FORMAT_BC3_UNORM = 0x95,
        /// BC3 block-compressed, sRGB.
        CU_AD_FORMAT_BC3_UNORM_SRGB = 0x96,
        /// BC4 block-compressed, 1 channel unsigned normalized.
        CU_AD_FORMAT_BC4_UNORM = 0x97,
        /// BC4 block-compressed, 1 channel signed normalized.
        CU_AD_FORMAT_BC4_SNORM = 0x98,
        /// BC5 block-compressed, 2 channels unsigned normalized.
        CU_AD_FORMAT_BC5_UNORM = 0x99,
        /// BC5 block-compressed, 2 channels signed normalized.
        CU_AD_FORMAT_BC5_SNORM = 0x9a,
        /// BC6H block-compressed, 3 channels unsigned half-float.
        CU_AD_FORMAT_BC6H_UF16 = 0x9b,
        /// BC6H block-compressed, 3 channels signed half-float.
        CU_AD_FORMAT_BC6H_SF16 = 0x9c,
        /// BC7 block-compressed, 4 channels unsigned normalized.
        CU_AD_FORMAT_BC7_UNORM = 0x9d,
        /// BC7 block-compressed, sRGB.
        CU_AD_FORMAT_BC7_UNORM_SRGB = 0x9e,
        /// 10-bit planar YUV, 4:2:0.
        CU_AD_FORMAT_P010 = 0x9f,
        /// 16-bit planar YUV, 4:2:0.
        CU_AD_FORMAT_P016 = 0xa1,
        /// 8-bit planar YUV, 4:2:2.
        CU_AD_FORMAT_NV16 = 0xa2,
        /// 10-bit planar YUV, 4:2:2.
        CU_AD_FORMAT_P210 = 0xa3,
        /// 16-bit planar YUV, 4:2:2.
        CU_AD_FORMAT_P216 = 0xa4,
        /// 2 channels, 8-bit packed YUV, 4:2:2.
        CU_AD_FORMAT_YUY2 = 0xa5,
        /// 2 channels, 10-bit packed YUV, 4:2:2.
        CU_AD_FORMAT_Y210 = 0xa6,
        /// 2 channels, 16-bit packed YUV, 4:2:2.
        CU_AD_FORMAT_Y216 = 0xa7,
        /// 4 channels, 8-bit packed YUV, 4:4:4.
        CU_AD_FORMAT_AYUV = 0xa8,
        /// 10-bit packed YUV, 4:4:4.
        CU_AD_FORMAT_Y410 = 0xa9,
        /// 4 channels, 12-bit packed YUV, 4:4:4.
        CU_AD_FORMAT_Y416 = 0xb1,
        /// 3 channels, 8-bit planar YUV, 4:4:4.
        CU_AD_FORMAT_Y444_PLANAR8 = 0xb2,
        /// 3 channels, 10-bit planar YUV, 4:4:4.
        CU_AD_FORMAT_Y444_PLANAR10 = 0xb3,
        /// 3 channels, 8-bit semi-planar YUV, 4:4:4.
        CU_AD_FORMAT_YUV444_8bit_SemiPlanar = 0xb4,
        /// 3 channels, 16-bit semi-planar YUV, 4:4:4.
        CU_AD_FORMAT_YUV444_16bit_SemiPlanar = 0xb5,
        /// 4 channels, packed R10G10B10A2 unsigned normalized.
        CU_AD_FORMAT_UNORM_INT_101010_2 = 0x50,
        /// Largest value (forces a 32-bit enum).
        CU_AD_FORMAT_MAX = 0x7FFFFFFF,
    }
}

c_enum! {
    /// `CUaddress_mode`: texture addressing modes.
    pub struct CUaddress_mode(c_int) {
        /// Wrap around.
        CU_TR_ADDRESS_MODE_WRAP = 0,
        /// Clamp to the edge.
        CU_TR_ADDRESS_MODE_CLAMP = 1,
        /// Mirror.
        CU_TR_ADDRESS_MODE_MIRROR = 2,
        /// Use the border colour.
        CU_TR_ADDRESS_MODE_BORDER = 3,
    }
}

c_enum! {
    /// `CUfilter_mode`: texture filtering modes.
    pub struct CUfilter_mode(c_int) {
        /// Nearest point.
        CU_TR_FILTER_MODE_POINT = 0,
        /// Linear interpolation.
        CU_TR_FILTER_MODE_LINEAR = 1,
    }
}

c_enum! {
    /// `CUresourcetype`: kinds of resource behind a texture or surface object.
    pub struct CUresourcetype(c_int) {
        /// A CUDA array.
        CU_RESOURCE_TYPE_ARRAY = 0x00,
        /// A mipmapped CUDA array.
        CU_RESOURCE_TYPE_MIPMAPPED_ARRAY = 0x01,
        /// Linear device memory.
        CU_RESOURCE_TYPE_LINEAR = 0x02,
        /// Pitched 2D device memory.
        CU_RESOURCE_TYPE_PITCH2D = 0x03,
    }
}

c_enum! {
    /// `CUresourceViewFormat`: formats of a resource view.
    pub struct CUresourceViewFormat(c_int) {
        /// The underlying resource's format.
        CU_RES_VIEW_FORMAT_NONE = 0x00,
        /// 1 channel, 8-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_1X8 = 0x01,
        /// 2 channels, 8-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_2X8 = 0x02,
        /// 4 channels, 8-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_4X8 = 0x03,
        /// 1 channel, 8-bit signed.
        CU_RES_VIEW_FORMAT_SINT_1X8 = 0x04,
        /// 2 channels, 8-bit signed.
        CU_RES_VIEW_FORMAT_SINT_2X8 = 0x05,
        /// 4 channels, 8-bit signed.
        CU_RES_VIEW_FORMAT_SINT_4X8 = 0x06,
        /// 1 channel, 16-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_1X16 = 0x07,
        /// 2 channels, 16-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_2X16 = 0x08,
        /// 4 channels, 16-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_4X16 = 0x09,
        /// 1 channel, 16-bit signed.
        CU_RES_VIEW_FORMAT_SINT_1X16 = 0x0a,
        /// 2 channels, 16-bit signed.
        CU_RES_VIEW_FORMAT_SINT_2X16 = 0x0b,
        /// 4 channels, 16-bit signed.
        CU_RES_VIEW_FORMAT_SINT_4X16 = 0x0c,
        /// 1 channel, 32-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_1X32 = 0x0d,
        /// 2 channels, 32-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_2X32 = 0x0e,
        /// 4 channels, 32-bit unsigned.
        CU_RES_VIEW_FORMAT_UINT_4X32 = 0x0f,
        /// 1 channel, 32-bit signed.
        CU_RES_VIEW_FORMAT_SINT_1X32 = 0x10,
        /// 2 channels, 32-bit signed.
        CU_RES_VIEW_FORMAT_SINT_2X32 = 0x11,
        /// 4 channels, 32-bit signed.
        CU_RES_VIEW_FORMAT_SINT_4X32 = 0x12,
        /// 1 channel, 16-bit float.
        CU_RES_VIEW_FORMAT_FLOAT_1X16 = 0x13,
        /// 2 channels, 16-bit float.
        CU_RES_VIEW_FORMAT_FLOAT_2X16 = 0x14,
        /// 4 channels, 16-bit float.
        CU_RES_VIEW_FORMAT_FLOAT_4X16 = 0x15,
        /// 1 channel, 32-bit float.
        CU_RES_VIEW_FORMAT_FLOAT_1X32 = 0x16,
        /// 2 channels, 32-bit float.
        CU_RES_VIEW_FORMAT_FLOAT_2X32 = 0x17,
        /// 4 channels, 32-bit float.
        CU_RES_VIEW_FORMAT_FLOAT_4X32 = 0x18,
        /// BC1 block-compressed.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC1 = 0x19,
        /// BC2 block-compressed.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC2 = 0x1a,
        /// BC3 block-compressed.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC3 = 0x1b,
        /// BC4 block-compressed, unsigned.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC4 = 0x1c,
        /// BC4 block-compressed, signed.
        CU_RES_VIEW_FORMAT_SIGNED_BC4 = 0x1d,
        /// BC5 block-compressed, unsigned.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC5 = 0x1e,
        /// BC5 block-compressed, signed.
        CU_RES_VIEW_FORMAT_SIGNED_BC5 = 0x1f,
        /// BC6H block-compressed, unsigned half-float.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC6H = 0x20,
        /// BC6H block-compressed, signed half-float.
        CU_RES_VIEW_FORMAT_SIGNED_BC6H = 0x21,
        /// BC7 block-compressed.
        CU_RES_VIEW_FORMAT_UNSIGNED_BC7 = 0x22,
    }
}

c_enum! {
    /// `CUarray_cubemap_face`: the faces of a cubemap, as layer indices.
    pub struct CUarray_cubemap_face(c_int) {
        /// +X face.
        CU_CUBEMAP_FACE_POSITIVE_X = 0x00,
        /// -X face.
        CU_CUBEMAP_FACE_NEGATIVE_X = 0x01,
        /// +Y face.
        CU_CUBEMAP_FACE_POSITIVE_Y = 0x02,
        /// -Y face.
        CU_CUBEMAP_FACE_NEGATIVE_Y = 0x03,
        /// +Z face.
        CU_CUBEMAP_FACE_POSITIVE_Z = 0x04,
        /// -Z face.
        CU_CUBEMAP_FACE_NEGATIVE_Z = 0x05,
    }
}

// ---------------------------------------------------------------------------
// #define constants
// ---------------------------------------------------------------------------

/// `CUDA_VERSION`: the API version of the header these bindings mirror (13.0).
pub const CUDA_VERSION: c_int = 13000;

/// `CU_IPC_HANDLE_SIZE`: bytes in an IPC handle.
pub const CU_IPC_HANDLE_SIZE: usize = 64;

/// `CU_STREAM_LEGACY`: the implicit stream with legacy synchronization
/// behaviour, passed where a `CUstream` is expected.
pub const CU_STREAM_LEGACY: CUstream = 0x1 as CUstream;
/// `CU_STREAM_PER_THREAD`: the implicit per-thread stream, passed where a
/// `CUstream` is expected.
pub const CU_STREAM_PER_THREAD: CUstream = 0x2 as CUstream;

/// `CU_DEVICE_CPU`: the device ordinal that stands for the host CPU.
pub const CU_DEVICE_CPU: CUdevice = -1;
/// `CU_DEVICE_INVALID`: an invalid device ordinal.
pub const CU_DEVICE_INVALID: CUdevice = -2;

/// `CU_MEMHOSTALLOC_PORTABLE`: `cuMemHostAlloc` flag, memory is pinned for every context.
pub const CU_MEMHOSTALLOC_PORTABLE: c_uint = 0x01;
/// `CU_MEMHOSTALLOC_DEVICEMAP`: `cuMemHostAlloc` flag, map the memory into the device's address space.
pub const CU_MEMHOSTALLOC_DEVICEMAP: c_uint = 0x02;
/// `CU_MEMHOSTALLOC_WRITECOMBINED`: `cuMemHostAlloc` flag, write-combined memory (fast to write and transfer, slow for the CPU to read).
pub const CU_MEMHOSTALLOC_WRITECOMBINED: c_uint = 0x04;

/// `CU_MEMHOSTREGISTER_PORTABLE`: `cuMemHostRegister` flag, memory is pinned for every context.
pub const CU_MEMHOSTREGISTER_PORTABLE: c_uint = 0x01;
/// `CU_MEMHOSTREGISTER_DEVICEMAP`: `cuMemHostRegister` flag, map the memory into the device's address space.
pub const CU_MEMHOSTREGISTER_DEVICEMAP: c_uint = 0x02;
/// `CU_MEMHOSTREGISTER_IOMEMORY`: `cuMemHostRegister` flag, the range is memory-mapped I/O (Linux only).
pub const CU_MEMHOSTREGISTER_IOMEMORY: c_uint = 0x04;
/// `CU_MEMHOSTREGISTER_READ_ONLY`: `cuMemHostRegister` flag, the device only reads the range.
pub const CU_MEMHOSTREGISTER_READ_ONLY: c_uint = 0x08;

/// `CUDA_ARRAY3D_LAYERED`: the array is layered; `Depth` counts layers.
pub const CUDA_ARRAY3D_LAYERED: c_uint = 0x01;
/// `CUDA_ARRAY3D_2DARRAY`: deprecated alias of `CUDA_ARRAY3D_LAYERED`.
pub const CUDA_ARRAY3D_2DARRAY: c_uint = 0x01;
/// `CUDA_ARRAY3D_SURFACE_LDST`: the array may be bound to a surface.
pub const CUDA_ARRAY3D_SURFACE_LDST: c_uint = 0x02;
/// `CUDA_ARRAY3D_CUBEMAP`: the array is a cubemap (six square faces, or layers of them).
pub const CUDA_ARRAY3D_CUBEMAP: c_uint = 0x04;
/// `CUDA_ARRAY3D_TEXTURE_GATHER`: the array supports texture gather.
pub const CUDA_ARRAY3D_TEXTURE_GATHER: c_uint = 0x08;
/// `CUDA_ARRAY3D_DEPTH_TEXTURE`: the array is a depth texture.
pub const CUDA_ARRAY3D_DEPTH_TEXTURE: c_uint = 0x10;
/// `CUDA_ARRAY3D_COLOR_ATTACHMENT`: the array may be a colour target of a graphics API.
pub const CUDA_ARRAY3D_COLOR_ATTACHMENT: c_uint = 0x20;
/// `CUDA_ARRAY3D_SPARSE`: the array is sparse.
pub const CUDA_ARRAY3D_SPARSE: c_uint = 0x40;
/// `CUDA_ARRAY3D_DEFERRED_MAPPING`: the array's memory is mapped later.
pub const CUDA_ARRAY3D_DEFERRED_MAPPING: c_uint = 0x80;
/// `CUDA_ARRAY3D_VIDEO_ENCODE_DECODE`: the array is used for hardware video encode/decode.
pub const CUDA_ARRAY3D_VIDEO_ENCODE_DECODE: c_uint = 0x100;

/// `CU_TRSA_OVERRIDE_FORMAT`: `cuTexRefSetArray` flag, take the format from the array.
pub const CU_TRSA_OVERRIDE_FORMAT: c_uint = 0x01;
/// `CU_TRSF_READ_AS_INTEGER`: texture flag, read integers as integers, not normalized floats.
pub const CU_TRSF_READ_AS_INTEGER: c_uint = 0x01;
/// `CU_TRSF_NORMALIZED_COORDINATES`: texture flag, coordinates are in [0, 1).
pub const CU_TRSF_NORMALIZED_COORDINATES: c_uint = 0x02;
/// `CU_TRSF_SRGB`: texture flag, convert sRGB to linear on read.
pub const CU_TRSF_SRGB: c_uint = 0x10;
/// `CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION`: texture flag, no trilinear filtering shortcuts.
pub const CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION: c_uint = 0x20;
/// `CU_TRSF_SEAMLESS_CUBEMAP`: texture flag, filter seamlessly across cubemap faces.
pub const CU_TRSF_SEAMLESS_CUBEMAP: c_uint = 0x40;

/// `CU_LAUNCH_PARAM_END_AS_INT`: integer value of [`CU_LAUNCH_PARAM_END`].
pub const CU_LAUNCH_PARAM_END_AS_INT: usize = 0x00;
/// `CU_LAUNCH_PARAM_END`: terminates the `extra` array of `cuLaunchKernel`.
pub const CU_LAUNCH_PARAM_END: *mut c_void = std::ptr::null_mut();
/// `CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT`: integer value of [`CU_LAUNCH_PARAM_BUFFER_POINTER`].
pub const CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT: usize = 0x01;
/// `CU_LAUNCH_PARAM_BUFFER_POINTER`: in `extra`, the next entry points to
/// one buffer holding every kernel parameter, laid out with C alignment.
pub const CU_LAUNCH_PARAM_BUFFER_POINTER: *mut c_void =
    CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT as *mut c_void;
/// `CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT`: integer value of [`CU_LAUNCH_PARAM_BUFFER_SIZE`].
pub const CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT: usize = 0x02;
/// `CU_LAUNCH_PARAM_BUFFER_SIZE`: in `extra`, the next entry points to a
/// `size_t` holding the size of the `CU_LAUNCH_PARAM_BUFFER_POINTER` buffer.
pub const CU_LAUNCH_PARAM_BUFFER_SIZE: *mut c_void =
    CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT as *mut c_void;

/// `CU_LAUNCH_KERNEL_REQUIRED_BLOCK_DIM`: launch with the kernel's required block dimension.
pub const CU_LAUNCH_KERNEL_REQUIRED_BLOCK_DIM: c_int = 1;
/// `CU_PARAM_TR_DEFAULT`: use the texture reference's default texture unit.
pub const CU_PARAM_TR_DEFAULT: c_int = -1;

/// `CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC`: each kernel waits only for prior work in its own stream.
pub const CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_PRE_LAUNCH_SYNC: c_uint = 0x01;
/// `CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC`: later work in each stream waits only for that stream's kernel.
pub const CUDA_COOPERATIVE_LAUNCH_MULTI_DEVICE_NO_POST_LAUNCH_SYNC: c_uint = 0x02;

/// `CU_MEM_CREATE_USAGE_TILE_POOL`: `CUmemAllocationProp` usage bit, the memory is a tile pool.
pub const CU_MEM_CREATE_USAGE_TILE_POOL: c_ushort = 0x1;
/// `CU_MEM_CREATE_USAGE_HW_DECOMPRESS`: `CUmemAllocationProp` usage bit, the memory feeds hardware decompression.
pub const CU_MEM_CREATE_USAGE_HW_DECOMPRESS: c_ushort = 0x2;
/// `CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS`: `CUmemPoolProps` usage bit, the pool feeds hardware decompression.
pub const CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS: c_ushort = 0x2;

/// `CU_GRAPH_COND_ASSIGN_DEFAULT`: apply a conditional handle's default value at each launch.
pub const CU_GRAPH_COND_ASSIGN_DEFAULT: c_uint = 0x1;
/// `CU_GRAPH_KERNEL_NODE_PORT_DEFAULT`: edge port, the kernel has finished.
pub const CU_GRAPH_KERNEL_NODE_PORT_DEFAULT: c_uchar = 0;
/// `CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC`: edge port, every block has triggered programmatic completion or exited.
pub const CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC: c_uchar = 1;
/// `CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER`: edge port, every block has begun.
pub const CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER: c_uchar = 2;

/// `CU_KERNEL_NODE_ATTRIBUTE_ACCESS_POLICY_WINDOW`: kernel-node spelling of the launch attribute.
pub const CU_KERNEL_NODE_ATTRIBUTE_ACCESS_POLICY_WINDOW: CUkernelNodeAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
/// `CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE`: kernel-node spelling of the launch attribute.
pub const CU_KERNEL_NODE_ATTRIBUTE_COOPERATIVE: CUkernelNodeAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
/// `CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_DIMENSION`: kernel-node spelling of the launch attribute.
pub const CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_DIMENSION: CUkernelNodeAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
/// `CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE`: kernel-node spelling of the launch attribute.
pub const CU_KERNEL_NODE_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE: CUkernelNodeAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE;
/// `CU_KERNEL_NODE_ATTRIBUTE_PRIORITY`: kernel-node spelling of the launch attribute.
pub const CU_KERNEL_NODE_ATTRIBUTE_PRIORITY: CUkernelNodeAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PRIORITY;
/// `CU_KERNEL_NODE_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP`: kernel-node spelling of the launch attribute.
pub const CU_KERNEL_NODE_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP: CUkernelNodeAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP;
/// `CU_KERNEL_NODE_ATTRIBUTE_MEM_SYNC_DOMAIN`: kernel-node spelling of the launch attribute.
pub const CU_KERNEL_NODE_ATTRIBUTE_MEM_SYNC_DOMAIN: CUkernelNodeAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN;
/// `CU_KERNEL_NODE_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION`: kernel-node spelling of the launch attribute.
pub const CU_KERNEL_NODE_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION: CUkernelNodeAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION;
/// `CU_KERNEL_NODE_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE`: kernel-node spelling of the launch attribute.
pub const CU_KERNEL_NODE_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE: CUkernelNodeAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE;
/// `CU_KERNEL_NODE_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`: kernel-node spelling of the launch attribute.
pub const CU_KERNEL_NODE_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: CUkernelNodeAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT;

/// `CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW`: stream spelling of the launch attribute.
pub const CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW: CUstreamAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW;
/// `CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY`: stream spelling of the launch attribute.
pub const CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY: CUstreamAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY;
/// `CU_STREAM_ATTRIBUTE_PRIORITY`: stream spelling of the launch attribute.
pub const CU_STREAM_ATTRIBUTE_PRIORITY: CUstreamAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PRIORITY;
/// `CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP`: stream spelling of the launch attribute.
pub const CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP: CUstreamAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP;
/// `CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN`: stream spelling of the launch attribute.
pub const CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN: CUstreamAttrID =
    CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN;

// ---------------------------------------------------------------------------
// Small structs: identifiers and handles
// ---------------------------------------------------------------------------

/// `CUuuid`: a 16-byte UUID (of a device, say).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CUuuid {
    /// The UUID's bytes.
    pub bytes: [c_char; 16],
}
assert_layout!(CUuuid, size = 16, align = 1);

/// `CUipcEventHandle` (`CUipcEventHandle_v1`): an event shared between processes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUipcEventHandle {
    /// Opaque contents.
    pub reserved: [c_char; CU_IPC_HANDLE_SIZE],
}
/// `CUipcEventHandle_v1`: see [`CUipcEventHandle`].
pub type CUipcEventHandle_v1 = CUipcEventHandle;
assert_layout!(CUipcEventHandle, size = 64, align = 1);

/// `CUipcMemHandle` (`CUipcMemHandle_v1`): device memory shared between processes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUipcMemHandle {
    /// Opaque contents.
    pub reserved: [c_char; CU_IPC_HANDLE_SIZE],
}
/// `CUipcMemHandle_v1`: see [`CUipcMemHandle`].
pub type CUipcMemHandle_v1 = CUipcMemHandle;
assert_layout!(CUipcMemHandle, size = 64, align = 1);

/// `CUmemFabricHandle` (`CUmemFabricHandle_v1`): an allocation exported
/// over the NVSwitch fabric, to processes on this or other nodes.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemFabricHandle {
    /// Opaque contents.
    pub data: [c_uchar; CU_IPC_HANDLE_SIZE],
}
/// `CUmemFabricHandle_v1`: see [`CUmemFabricHandle`].
pub type CUmemFabricHandle_v1 = CUmemFabricHandle;
assert_layout!(CUmemFabricHandle, size = 64, align = 1);

/// `CUdevprop` (`CUdevprop_v1`): legacy device properties (`cuDeviceGetProperties`, deprecated).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUdevprop {
    /// Largest number of threads in a block.
    pub maxThreadsPerBlock: c_int,
    /// Largest block extent in each dimension.
    pub maxThreadsDim: [c_int; 3],
    /// Largest grid extent in each dimension.
    pub maxGridSize: [c_int; 3],
    /// Shared memory per block, in bytes.
    pub sharedMemPerBlock: c_int,
    /// Constant memory, in bytes.
    pub totalConstantMemory: c_int,
    /// Threads per warp.
    pub SIMDWidth: c_int,
    /// Largest pitch of memory copies, in bytes.
    pub memPitch: c_int,
    /// 32-bit registers per block.
    pub regsPerBlock: c_int,
    /// Clock rate, in kHz.
    pub clockRate: c_int,
    /// Alignment textures require.
    pub textureAlign: c_int,
}
/// `CUdevprop_v1`: see [`CUdevprop`].
pub type CUdevprop_v1 = CUdevprop;
assert_layout!(CUdevprop, size = 56, align = 4);

// ---------------------------------------------------------------------------
// Contexts
// ---------------------------------------------------------------------------

/// `CUexecAffinitySmCount` (`_v1`): the SM count of `CU_EXEC_AFFINITY_TYPE_SM_COUNT`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUexecAffinitySmCount {
    /// Number of SMs the context may use.
    pub val: c_uint,
}
/// `CUexecAffinitySmCount_v1`: see [`CUexecAffinitySmCount`].
pub type CUexecAffinitySmCount_v1 = CUexecAffinitySmCount;
assert_layout!(CUexecAffinitySmCount, size = 4, align = 4);

/// The unnamed union `param` of [`CUexecAffinityParam`].
#[repr(C)]
#[derive(Clone, Copy)]
pub union CUexecAffinityParam_param {
    /// Value for `CU_EXEC_AFFINITY_TYPE_SM_COUNT`.
    pub smCount: CUexecAffinitySmCount,
}
assert_layout!(CUexecAffinityParam_param, size = 4, align = 4);

impl std::fmt::Debug for CUexecAffinityParam_param {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: `smCount` is the union's only member and spans all of it;
        // it is a plain `c_uint`, valid for any initialized bit pattern.
        let smCount = unsafe { self.smCount };
        f.debug_struct("CUexecAffinityParam_param")
            .field("smCount", &smCount)
            .finish()
    }
}

/// `CUexecAffinityParam` (`_v1`): one execution-affinity parameter of a context.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUexecAffinityParam {
    /// Which member of `param` is meant.
    pub r#type: CUexecAffinityType,
    /// The value.
    pub param: CUexecAffinityParam_param,
}
/// `CUexecAffinityParam_v1`: see [`CUexecAffinityParam`].
pub type CUexecAffinityParam_v1 = CUexecAffinityParam;
assert_layout!(CUexecAffinityParam, size = 8, align = 4, param = 4);

/// `CUctxCigParam`: data shared with a CUDA-in-graphics context.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUctxCigParam {
    /// What `sharedData` is.
    pub sharedDataType: CUcigDataType,
    /// The shared data (a D3D12 command queue, say).
    pub sharedData: *mut c_void,
}
assert_layout!(CUctxCigParam, size = 16, align = 8, sharedData = 8);

/// `CUctxCreateParams`: parameters of `cuCtxCreate_v4` (the 13.0
/// `cuCtxCreate`); at most one of the two arrays may be non-null.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUctxCreateParams {
    /// Execution-affinity parameters, or null.
    pub execAffinityParams: *mut CUexecAffinityParam,
    /// Number of `execAffinityParams`.
    pub numExecAffinityParams: c_int,
    /// CUDA-in-graphics parameters, or null.
    pub cigParams: *mut CUctxCigParam,
}
assert_layout!(CUctxCreateParams, size = 24, align = 8, cigParams = 16);

// ---------------------------------------------------------------------------
// Launches
// ---------------------------------------------------------------------------

/// `CUaccessPolicyWindow` (`_v1`): an L2 persistence policy for the window
/// `[base_ptr, base_ptr + num_bytes)`: a `hitRatio` share of it gets
/// `hitProp`, the rest `missProp`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUaccessPolicyWindow {
    /// Start of the window (the driver may align it).
    pub base_ptr: *mut c_void,
    /// Size of the window, at most `CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE`.
    pub num_bytes: usize,
    /// Share of the window that gets `hitProp`, 0.0 to 1.0.
    pub hitRatio: f32,
    /// Property of the hit share.
    pub hitProp: CUaccessProperty,
    /// Property of the rest; normal or streaming only.
    pub missProp: CUaccessProperty,
}
/// `CUaccessPolicyWindow_v1`: see [`CUaccessPolicyWindow`].
pub type CUaccessPolicyWindow_v1 = CUaccessPolicyWindow;
assert_layout!(
    CUaccessPolicyWindow,
    size = 32,
    align = 8,
    hitRatio = 16,
    hitProp = 20,
    missProp = 24
);

/// `CUlaunchMemSyncDomainMap`: domain IDs for the two memory synchronization domains.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUlaunchMemSyncDomainMap {
    /// Domain ID of `CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT` kernels.
    pub default_: c_uchar,
    /// Domain ID of `CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE` kernels.
    pub remote: c_uchar,
}
assert_layout!(CUlaunchMemSyncDomainMap, size = 2, align = 1);

/// The unnamed `{x, y, z}` struct of `CUlaunchAttributeValue::clusterDim`
/// (and `preferredClusterDim`): a cluster shape in blocks.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUlaunchAttributeValue_clusterDim {
    /// Blocks in x; must divide the grid's x.
    pub x: c_uint,
    /// Blocks in y; must divide the grid's y.
    pub y: c_uint,
    /// Blocks in z; must divide the grid's z.
    pub z: c_uint,
}
assert_layout!(
    CUlaunchAttributeValue_clusterDim,
    size = 12,
    align = 4,
    z = 8
);
/// The unnamed struct of `CUlaunchAttributeValue::preferredClusterDim`.
pub type CUlaunchAttributeValue_preferredClusterDim = CUlaunchAttributeValue_clusterDim;

/// The unnamed struct of `CUlaunchAttributeValue::programmaticEvent`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUlaunchAttributeValue_programmaticEvent {
    /// Event fired once every block has triggered it; created with timing disabled.
    pub event: CUevent,
    /// Event record flags (not `CU_EVENT_RECORD_EXTERNAL`).
    pub flags: c_int,
    /// Non-zero: each block triggers the event when it starts.
    pub triggerAtBlockStart: c_int,
}
assert_layout!(
    CUlaunchAttributeValue_programmaticEvent,
    size = 16,
    align = 8,
    flags = 8,
    triggerAtBlockStart = 12
);

/// The unnamed struct of `CUlaunchAttributeValue::launchCompletionEvent`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUlaunchAttributeValue_launchCompletionEvent {
    /// Event fired once every block has started; created with timing disabled.
    pub event: CUevent,
    /// Event record flags (not `CU_EVENT_RECORD_EXTERNAL`).
    pub flags: c_int,
}
assert_layout!(
    CUlaunchAttributeValue_launchCompletionEvent,
    size = 16,
    align = 8,
    flags = 8
);

/// The unnamed struct of `CUlaunchAttributeValue::deviceUpdatableKernelNode`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUlaunchAttributeValue_deviceUpdatableKernelNode {
    /// 1 to make the node updatable from the device (cannot be undone).
    pub deviceUpdatable: c_int,
    /// Out: the handle device code uses to update the node.
    pub devNode: CUgraphDeviceNode,
}
assert_layout!(
    CUlaunchAttributeValue_deviceUpdatableKernelNode,
    size = 16,
    align = 8,
    devNode = 8
);

/// `CUlaunchAttributeValue`: the value of a launch, stream or kernel-node
/// attribute; the member to use is named by the attribute's ID. 64 bytes.
#[repr(C)]
#[derive(Clone, Copy)]
pub union CUlaunchAttributeValue {
    /// Padding to 64 bytes.
    pub pad: [c_char; 64],
    /// For `CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW`.
    pub accessPolicyWindow: CUaccessPolicyWindow,
    /// For `CU_LAUNCH_ATTRIBUTE_COOPERATIVE`: non-zero for a cooperative kernel.
    pub cooperative: c_int,
    /// For `CU_LAUNCH_ATTRIBUTE_SYNCHRONIZATION_POLICY`.
    pub syncPolicy: CUsynchronizationPolicy,
    /// For `CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`.
    pub clusterDim: CUlaunchAttributeValue_clusterDim,
    /// For `CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE`.
    pub clusterSchedulingPolicyPreference: CUclusterSchedulingPolicy,
    /// For `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`.
    pub programmaticStreamSerializationAllowed: c_int,
    /// For `CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT`.
    pub programmaticEvent: CUlaunchAttributeValue_programmaticEvent,
    /// For `CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT`.
    pub launchCompletionEvent: CUlaunchAttributeValue_launchCompletionEvent,
    /// For `CU_LAUNCH_ATTRIBUTE_PRIORITY`: the kernel's execution priority.
    pub priority: c_int,
    /// For `CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP`.
    pub memSyncDomainMap: CUlaunchMemSyncDomainMap,
    /// For `CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN`.
    pub memSyncDomain: CUlaunchMemSyncDomain,
    /// For `CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION`.
    pub preferredClusterDim: CUlaunchAttributeValue_preferredClusterDim,
    /// For `CU_LAUNCH_ATTRIBUTE_DEVICE_UPDATABLE_KERNEL_NODE`.
    pub deviceUpdatableKernelNode: CUlaunchAttributeValue_deviceUpdatableKernelNode,
    /// For `CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT`: percent.
    pub sharedMemCarveout: c_uint,
    /// For `CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING`: 0 or 1.
    pub nvlinkUtilCentricScheduling: c_uint,
}
assert_layout!(
    CUlaunchAttributeValue,
    size = 64,
    align = 8,
    pad = 0,
    accessPolicyWindow = 0,
    clusterDim = 0,
    programmaticEvent = 0,
    deviceUpdatableKernelNode = 0,
    nvlinkUtilCentricScheduling = 0,
);
/// `CUkernelNodeAttrValue_v1`: kernel-node attribute values are launch attribute values.
pub type CUkernelNodeAttrValue_v1 = CUlaunchAttributeValue;
/// `CUkernelNodeAttrValue`: kernel-node attribute values are launch attribute values.
pub type CUkernelNodeAttrValue = CUkernelNodeAttrValue_v1;
/// `CUstreamAttrValue_v1`: stream attribute values are launch attribute values.
pub type CUstreamAttrValue_v1 = CUlaunchAttributeValue;
/// `CUstreamAttrValue`: stream attribute values are launch attribute values.
pub type CUstreamAttrValue = CUstreamAttrValue_v1;

impl std::fmt::Debug for CUlaunchAttributeValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Which member is live depends on the attribute ID, which the union
        // does not know; print nothing that would read an inactive member.
        f.debug_struct("CUlaunchAttributeValue")
            .finish_non_exhaustive()
    }
}

/// `CUlaunchAttribute`: one attribute of a `cuLaunchKernelEx` launch.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUlaunchAttribute {
    /// Which attribute, and so which member of `value`.
    pub id: CUlaunchAttributeID,
    /// Padding so that `value` starts at offset 8.
    pub pad: [c_char; 8 - std::mem::size_of::<CUlaunchAttributeID>()],
    /// The attribute's value.
    pub value: CUlaunchAttributeValue,
}
assert_layout!(
    CUlaunchAttribute,
    size = 72,
    align = 8,
    id = 0,
    pad = 4,
    value = 8
);

/// `CUlaunchConfig`: the configuration of a `cuLaunchKernelEx` launch.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUlaunchConfig {
    /// Grid width in blocks.
    pub gridDimX: c_uint,
    /// Grid height in blocks.
    pub gridDimY: c_uint,
    /// Grid depth in blocks.
    pub gridDimZ: c_uint,
    /// Block width in threads.
    pub blockDimX: c_uint,
    /// Block height in threads.
    pub blockDimY: c_uint,
    /// Block depth in threads.
    pub blockDimZ: c_uint,
    /// Dynamic shared memory per block, in bytes.
    pub sharedMemBytes: c_uint,
    /// The stream.
    pub hStream: CUstream,
    /// The attributes; may be null when `numAttrs` is 0.
    pub attrs: *mut CUlaunchAttribute,
    /// Number of `attrs`.
    pub numAttrs: c_uint,
}
assert_layout!(
    CUlaunchConfig,
    size = 56,
    align = 8,
    sharedMemBytes = 24,
    hStream = 32,
    attrs = 40,
    numAttrs = 48
);

/// `CUDA_LAUNCH_PARAMS` (`_v1`): one launch of the deprecated
/// `cuLaunchCooperativeKernelMultiDevice`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_LAUNCH_PARAMS {
    /// The kernel.
    pub function: CUfunction,
    /// Grid width in blocks.
    pub gridDimX: c_uint,
    /// Grid height in blocks.
    pub gridDimY: c_uint,
    /// Grid depth in blocks.
    pub gridDimZ: c_uint,
    /// Block width in threads.
    pub blockDimX: c_uint,
    /// Block height in threads.
    pub blockDimY: c_uint,
    /// Block depth in threads.
    pub blockDimZ: c_uint,
    /// Dynamic shared memory per block, in bytes.
    pub sharedMemBytes: c_uint,
    /// The stream.
    pub hStream: CUstream,
    /// Pointers to the kernel's parameter values.
    pub kernelParams: *mut *mut c_void,
}
/// `CUDA_LAUNCH_PARAMS_v1`: see [`CUDA_LAUNCH_PARAMS`].
pub type CUDA_LAUNCH_PARAMS_v1 = CUDA_LAUNCH_PARAMS;
assert_layout!(
    CUDA_LAUNCH_PARAMS,
    size = 56,
    align = 8,
    hStream = 40,
    kernelParams = 48
);

// ---------------------------------------------------------------------------
// Memory
// ---------------------------------------------------------------------------

/// `CUmemLocation` (`_v1`): a memory location.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUmemLocation {
    /// The kind of location, which gives `id` its meaning.
    pub r#type: CUmemLocationType,
    /// Device ordinal, NUMA node, or ignored, depending on `type`.
    pub id: c_int,
}
/// `CUmemLocation_v1`: see [`CUmemLocation`].
pub type CUmemLocation_v1 = CUmemLocation;
assert_layout!(CUmemLocation, size = 8, align = 4, id = 4);

/// `CUmemAccessDesc` (`_v1`): the access a location gets to a mapped range.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUmemAccessDesc {
    /// The location whose access changes.
    pub location: CUmemLocation,
    /// The access it gets.
    pub flags: CUmemAccess_flags,
}
/// `CUmemAccessDesc_v1`: see [`CUmemAccessDesc`].
pub type CUmemAccessDesc_v1 = CUmemAccessDesc;
assert_layout!(CUmemAccessDesc, size = 12, align = 4, flags = 8);

/// The unnamed struct `allocFlags` of [`CUmemAllocationProp`].
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUmemAllocationProp_allocFlags {
    /// Ask for compressible memory (a `CUmemAllocationCompType` value).
    pub compressionType: c_uchar,
    /// Non-zero if the memory will be used with GPUDirect RDMA.
    pub gpuDirectRDMACapable: c_uchar,
    /// Bitmask of intended usage (`CU_MEM_CREATE_USAGE_*`).
    pub usage: c_ushort,
    /// Must be zero.
    pub reserved: [c_uchar; 4],
}
assert_layout!(
    CUmemAllocationProp_allocFlags,
    size = 8,
    align = 2,
    usage = 2
);

/// `CUmemAllocationProp` (`_v1`): properties of a `cuMemCreate` allocation.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemAllocationProp {
    /// The kind of allocation.
    pub r#type: CUmemAllocationType,
    /// Handle types it may be exported as.
    pub requestedHandleTypes: CUmemAllocationHandleType,
    /// Where it lives.
    pub location: CUmemLocation,
    /// Windows security attributes for `CU_MEM_HANDLE_TYPE_WIN32`; null otherwise.
    pub win32HandleMetaData: *mut c_void,
    /// Further flags.
    pub allocFlags: CUmemAllocationProp_allocFlags,
}
/// `CUmemAllocationProp_v1`: see [`CUmemAllocationProp`].
pub type CUmemAllocationProp_v1 = CUmemAllocationProp;
assert_layout!(
    CUmemAllocationProp,
    size = 32,
    align = 8,
    location = 8,
    win32HandleMetaData = 16,
    allocFlags = 24
);

/// `CUmemPoolProps` (`_v1`): properties of a memory pool (`cuMemPoolCreate`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemPoolProps {
    /// Allocation type; must be `CU_MEM_ALLOCATION_TYPE_PINNED`.
    pub allocType: CUmemAllocationType,
    /// Handle types the pool's allocations may be exported as.
    pub handleTypes: CUmemAllocationHandleType,
    /// Where the allocations live.
    pub location: CUmemLocation,
    /// Windows security attributes for `CU_MEM_HANDLE_TYPE_WIN32`; null otherwise.
    pub win32SecurityAttributes: *mut c_void,
    /// Largest size of the pool; 0 for a system-dependent default.
    pub maxSize: usize,
    /// Bitmask of intended usage (`CU_MEM_POOL_CREATE_USAGE_*`).
    pub usage: c_ushort,
    /// Must be zero.
    pub reserved: [c_uchar; 54],
}
/// `CUmemPoolProps_v1`: see [`CUmemPoolProps`].
pub type CUmemPoolProps_v1 = CUmemPoolProps;
assert_layout!(
    CUmemPoolProps,
    size = 88,
    align = 8,
    win32SecurityAttributes = 16,
    maxSize = 24,
    usage = 32,
    reserved = 34
);

/// `CUmemPoolPtrExportData` (`_v1`): opaque data to share one pool allocation with another process.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUmemPoolPtrExportData {
    /// Opaque contents.
    pub reserved: [c_uchar; 64],
}
/// `CUmemPoolPtrExportData_v1`: see [`CUmemPoolPtrExportData`].
pub type CUmemPoolPtrExportData_v1 = CUmemPoolPtrExportData;
assert_layout!(CUmemPoolPtrExportData, size = 64, align = 1);

/// `CUmemcpyAttributes` (`_v1`): attributes of copies in a `cuMemcpyBatchAsync` batch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUmemcpyAttributes {
    /// How the source may be accessed.
    pub srcAccessOrder: CUmemcpySrcAccessOrder,
    /// Location hint for a managed (or non-CUDA) source.
    pub srcLocHint: CUmemLocation,
    /// Location hint for a managed (or non-CUDA) destination.
    pub dstLocHint: CUmemLocation,
    /// `CUmemcpyFlags` bits.
    pub flags: c_uint,
}
/// `CUmemcpyAttributes_v1`: see [`CUmemcpyAttributes`].
pub type CUmemcpyAttributes_v1 = CUmemcpyAttributes;
assert_layout!(
    CUmemcpyAttributes,
    size = 24,
    align = 4,
    srcLocHint = 4,
    dstLocHint = 12,
    flags = 20
);

/// `CUDA_POINTER_ATTRIBUTE_P2P_TOKENS` (`_v1`): GPUDirect tokens of a pointer.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_POINTER_ATTRIBUTE_P2P_TOKENS {
    /// The peer-to-peer token.
    pub p2pToken: c_ulonglong,
    /// The address-space token.
    pub vaSpaceToken: c_uint,
}
/// `CUDA_POINTER_ATTRIBUTE_P2P_TOKENS_v1`: see [`CUDA_POINTER_ATTRIBUTE_P2P_TOKENS`].
pub type CUDA_POINTER_ATTRIBUTE_P2P_TOKENS_v1 = CUDA_POINTER_ATTRIBUTE_P2P_TOKENS;
assert_layout!(
    CUDA_POINTER_ATTRIBUTE_P2P_TOKENS,
    size = 16,
    align = 8,
    vaSpaceToken = 8
);

/// `CUDA_MEMCPY2D` (`CUDA_MEMCPY2D_v2`): a 2D copy (`cuMemcpy2D_v2`).
/// For each side, only the fields its memory type uses are read.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMCPY2D {
    /// Source x offset, in bytes.
    pub srcXInBytes: usize,
    /// Source y offset, in rows.
    pub srcY: usize,
    /// Source memory type.
    pub srcMemoryType: CUmemorytype,
    /// Source host pointer.
    pub srcHost: *const c_void,
    /// Source device pointer.
    pub srcDevice: CUdeviceptr,
    /// Source array.
    pub srcArray: CUarray,
    /// Source pitch, in bytes (ignored for arrays).
    pub srcPitch: usize,
    /// Destination x offset, in bytes.
    pub dstXInBytes: usize,
    /// Destination y offset, in rows.
    pub dstY: usize,
    /// Destination memory type.
    pub dstMemoryType: CUmemorytype,
    /// Destination host pointer.
    pub dstHost: *mut c_void,
    /// Destination device pointer.
    pub dstDevice: CUdeviceptr,
    /// Destination array.
    pub dstArray: CUarray,
    /// Destination pitch, in bytes (ignored for arrays).
    pub dstPitch: usize,
    /// Width of the copy, in bytes.
    pub WidthInBytes: usize,
    /// Height of the copy, in rows.
    pub Height: usize,
}
/// `CUDA_MEMCPY2D_v2`: see [`CUDA_MEMCPY2D`].
pub type CUDA_MEMCPY2D_v2 = CUDA_MEMCPY2D;
assert_layout!(
    CUDA_MEMCPY2D,
    size = 128,
    align = 8,
    srcMemoryType = 16,
    srcHost = 24,
    srcPitch = 48,
    dstMemoryType = 72,
    dstHost = 80,
    WidthInBytes = 112,
    Height = 120,
);

/// `CUDA_MEMCPY3D` (`CUDA_MEMCPY3D_v2`): a 3D copy (`cuMemcpy3D_v2`).
/// For each side, only the fields its memory type uses are read.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMCPY3D {
    /// Source x offset, in bytes.
    pub srcXInBytes: usize,
    /// Source y offset.
    pub srcY: usize,
    /// Source z offset.
    pub srcZ: usize,
    /// Source level of detail.
    pub srcLOD: usize,
    /// Source memory type.
    pub srcMemoryType: CUmemorytype,
    /// Source host pointer.
    pub srcHost: *const c_void,
    /// Source device pointer.
    pub srcDevice: CUdeviceptr,
    /// Source array.
    pub srcArray: CUarray,
    /// Must be null.
    pub reserved0: *mut c_void,
    /// Source pitch, in bytes (ignored for arrays).
    pub srcPitch: usize,
    /// Source height, in rows (ignored for arrays; may be 0 if `Depth` is 1).
    pub srcHeight: usize,
    /// Destination x offset, in bytes.
    pub dstXInBytes: usize,
    /// Destination y offset.
    pub dstY: usize,
    /// Destination z offset.
    pub dstZ: usize,
    /// Destination level of detail.
    pub dstLOD: usize,
    /// Destination memory type.
    pub dstMemoryType: CUmemorytype,
    /// Destination host pointer.
    pub dstHost: *mut c_void,
    /// Destination device pointer.
    pub dstDevice: CUdeviceptr,
    /// Destination array.
    pub dstArray: CUarray,
    /// Must be null.
    pub reserved1: *mut c_void,
    /// Destination pitch, in bytes (ignored for arrays).
    pub dstPitch: usize,
    /// Destination height, in rows (ignored for arrays; may be 0 if `Depth` is 1).
    pub dstHeight: usize,
    /// Width of the copy, in bytes.
    pub WidthInBytes: usize,
    /// Height of the copy, in rows.
    pub Height: usize,
    /// Depth of the copy, in slices.
    pub Depth: usize,
}
/// `CUDA_MEMCPY3D_v2`: see [`CUDA_MEMCPY3D`].
pub type CUDA_MEMCPY3D_v2 = CUDA_MEMCPY3D;
assert_layout!(
    CUDA_MEMCPY3D,
    size = 200,
    align = 8,
    srcMemoryType = 32,
    srcHost = 40,
    reserved0 = 64,
    dstMemoryType = 120,
    dstHost = 128,
    reserved1 = 152,
    Depth = 192,
);

/// `CUDA_MEMCPY3D_PEER` (`_v1`): a 3D copy between contexts (`cuMemcpy3DPeer`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMCPY3D_PEER {
    /// Source x offset, in bytes.
    pub srcXInBytes: usize,
    /// Source y offset.
    pub srcY: usize,
    /// Source z offset.
    pub srcZ: usize,
    /// Source level of detail.
    pub srcLOD: usize,
    /// Source memory type.
    pub srcMemoryType: CUmemorytype,
    /// Source host pointer.
    pub srcHost: *const c_void,
    /// Source device pointer.
    pub srcDevice: CUdeviceptr,
    /// Source array.
    pub srcArray: CUarray,
    /// Source context (ignored for arrays).
    pub srcContext: CUcontext,
    /// Source pitch, in bytes (ignored for arrays).
    pub srcPitch: usize,
    /// Source height, in rows (ignored for arrays; may be 0 if `Depth` is 1).
    pub srcHeight: usize,
    /// Destination x offset, in bytes.
    pub dstXInBytes: usize,
    /// Destination y offset.
    pub dstY: usize,
    /// Destination z offset.
    pub dstZ: usize,
    /// Destination level of detail.
    pub dstLOD: usize,
    /// Destination memory type.
    pub dstMemoryType: CUmemorytype,
    /// Destination host pointer.
    pub dstHost: *mut c_void,
    /// Destination device pointer.
    pub dstDevice: CUdeviceptr,
    /// Destination array.
    pub dstArray: CUarray,
    /// Destination context (ignored for arrays).
    pub dstContext: CUcontext,
    /// Destination pitch, in bytes (ignored for arrays).
    pub dstPitch: usize,
    /// Destination height, in rows (ignored for arrays; may be 0 if `Depth` is 1).
    pub dstHeight: usize,
    /// Width of the copy, in bytes.
    pub WidthInBytes: usize,
    /// Height of the copy, in rows.
    pub Height: usize,
    /// Depth of the copy, in slices.
    pub Depth: usize,
}
/// `CUDA_MEMCPY3D_PEER_v1`: see [`CUDA_MEMCPY3D_PEER`].
pub type CUDA_MEMCPY3D_PEER_v1 = CUDA_MEMCPY3D_PEER;
assert_layout!(
    CUDA_MEMCPY3D_PEER,
    size = 200,
    align = 8,
    srcContext = 64,
    dstContext = 152,
    Depth = 192
);

// ---------------------------------------------------------------------------
// Arrays, textures, surfaces
// ---------------------------------------------------------------------------

/// `CUDA_ARRAY_DESCRIPTOR` (`CUDA_ARRAY_DESCRIPTOR_v2`): shape and format of a 1D or 2D array.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_ARRAY_DESCRIPTOR {
    /// Width in elements.
    pub Width: usize,
    /// Height in elements.
    pub Height: usize,
    /// Element format.
    pub Format: CUarray_format,
    /// Channels per element.
    pub NumChannels: c_uint,
}
/// `CUDA_ARRAY_DESCRIPTOR_v2`: see [`CUDA_ARRAY_DESCRIPTOR`].
pub type CUDA_ARRAY_DESCRIPTOR_v2 = CUDA_ARRAY_DESCRIPTOR;
assert_layout!(
    CUDA_ARRAY_DESCRIPTOR,
    size = 24,
    align = 8,
    Format = 16,
    NumChannels = 20
);

/// `CUDA_ARRAY3D_DESCRIPTOR` (`CUDA_ARRAY3D_DESCRIPTOR_v2`): shape, format and flags of an array.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_ARRAY3D_DESCRIPTOR {
    /// Width in elements.
    pub Width: usize,
    /// Height in elements.
    pub Height: usize,
    /// Depth in elements (or layers, with `CUDA_ARRAY3D_LAYERED`).
    pub Depth: usize,
    /// Element format.
    pub Format: CUarray_format,
    /// Channels per element.
    pub NumChannels: c_uint,
    /// `CUDA_ARRAY3D_*` flags.
    pub Flags: c_uint,
}
/// `CUDA_ARRAY3D_DESCRIPTOR_v2`: see [`CUDA_ARRAY3D_DESCRIPTOR`].
pub type CUDA_ARRAY3D_DESCRIPTOR_v2 = CUDA_ARRAY3D_DESCRIPTOR;
assert_layout!(
    CUDA_ARRAY3D_DESCRIPTOR,
    size = 40,
    align = 8,
    Format = 24,
    NumChannels = 28,
    Flags = 32
);

/// The unnamed struct `res.array` of [`CUDA_RESOURCE_DESC`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_RESOURCE_DESC_res_array {
    /// The CUDA array.
    pub hArray: CUarray,
}

/// The unnamed struct `res.mipmap` of [`CUDA_RESOURCE_DESC`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_RESOURCE_DESC_res_mipmap {
    /// The mipmapped CUDA array.
    pub hMipmappedArray: CUmipmappedArray,
}

/// The unnamed struct `res.linear` of [`CUDA_RESOURCE_DESC`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_RESOURCE_DESC_res_linear {
    /// Device address of the memory.
    pub devPtr: CUdeviceptr,
    /// Element format.
    pub format: CUarray_format,
    /// Channels per element.
    pub numChannels: c_uint,
    /// Size in bytes.
    pub sizeInBytes: usize,
}
assert_layout!(
    CUDA_RESOURCE_DESC_res_linear,
    size = 24,
    align = 8,
    format = 8,
    numChannels = 12,
    sizeInBytes = 16
);

/// The unnamed struct `res.pitch2D` of [`CUDA_RESOURCE_DESC`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_RESOURCE_DESC_res_pitch2D {
    /// Device address of the memory.
    pub devPtr: CUdeviceptr,
    /// Element format.
    pub format: CUarray_format,
    /// Channels per element.
    pub numChannels: c_uint,
    /// Width in elements.
    pub width: usize,
    /// Height in elements.
    pub height: usize,
    /// Bytes from one row to the next.
    pub pitchInBytes: usize,
}
assert_layout!(
    CUDA_RESOURCE_DESC_res_pitch2D,
    size = 40,
    align = 8,
    width = 16,
    pitchInBytes = 32
);

/// The unnamed struct `res.reserved` of [`CUDA_RESOURCE_DESC`].
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_RESOURCE_DESC_res_reserved {
    /// Unused.
    pub reserved: [c_int; 32],
}

/// The unnamed union `res` of [`CUDA_RESOURCE_DESC`]; `resType` says which member is live.
#[repr(C)]
#[derive(Clone, Copy)]
pub union CUDA_RESOURCE_DESC_res {
    /// For `CU_RESOURCE_TYPE_ARRAY`.
    pub array: CUDA_RESOURCE_DESC_res_array,
    /// For `CU_RESOURCE_TYPE_MIPMAPPED_ARRAY`.
    pub mipmap: CUDA_RESOURCE_DESC_res_mipmap,
    /// For `CU_RESOURCE_TYPE_LINEAR`.
    pub linear: CUDA_RESOURCE_DESC_res_linear,
    /// For `CU_RESOURCE_TYPE_PITCH2D`.
    pub pitch2D: CUDA_RESOURCE_DESC_res_pitch2D,
    /// Sizes the union to 128 bytes.
    pub reserved: CUDA_RESOURCE_DESC_res_reserved,
}
assert_layout!(CUDA_RESOURCE_DESC_res, size = 128, align = 8);

impl std::fmt::Debug for CUDA_RESOURCE_DESC_res {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The live member is named by the enclosing `resType`; read none.
        f.debug_struct("CUDA_RESOURCE_DESC_res")
            .finish_non_exhaustive()
    }
}

/// `CUDA_RESOURCE_DESC` (`_v1`): the resource behind a texture or surface object.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_RESOURCE_DESC {
    /// The kind of resource, naming the live member of `res`.
    pub resType: CUresourcetype,
    /// The resource.
    pub res: CUDA_RESOURCE_DESC_res,
    /// Must be zero.
    pub flags: c_uint,
}
/// `CUDA_RESOURCE_DESC_v1`: see [`CUDA_RESOURCE_DESC`].
pub type CUDA_RESOURCE_DESC_v1 = CUDA_RESOURCE_DESC;
assert_layout!(
    CUDA_RESOURCE_DESC,
    size = 144,
    align = 8,
    res = 8,
    flags = 136
);

/// `CUDA_TEXTURE_DESC` (`_v1`): how a texture object samples.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_TEXTURE_DESC {
    /// Addressing mode of each dimension.
    pub addressMode: [CUaddress_mode; 3],
    /// Filtering mode.
    pub filterMode: CUfilter_mode,
    /// `CU_TRSF_*` flags.
    pub flags: c_uint,
    /// Largest anisotropy ratio.
    pub maxAnisotropy: c_uint,
    /// Filtering between mipmap levels.
    pub mipmapFilterMode: CUfilter_mode,
    /// Bias added to the mipmap level.
    pub mipmapLevelBias: f32,
    /// Lowest mipmap level to clamp to.
    pub minMipmapLevelClamp: f32,
    /// Highest mipmap level to clamp to.
    pub maxMipmapLevelClamp: f32,
    /// Border colour (RGBA).
    pub borderColor: [f32; 4],
    /// Must be zero.
    pub reserved: [c_int; 12],
}
/// `CUDA_TEXTURE_DESC_v1`: see [`CUDA_TEXTURE_DESC`].
pub type CUDA_TEXTURE_DESC_v1 = CUDA_TEXTURE_DESC;
assert_layout!(
    CUDA_TEXTURE_DESC,
    size = 104,
    align = 4,
    filterMode = 12,
    mipmapLevelBias = 28,
    borderColor = 40,
    reserved = 56
);

/// `CUDA_RESOURCE_VIEW_DESC` (`_v1`): a view of a resource with another format or range.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_RESOURCE_VIEW_DESC {
    /// The view's format.
    pub format: CUresourceViewFormat,
    /// Width of the view.
    pub width: usize,
    /// Height of the view.
    pub height: usize,
    /// Depth of the view.
    pub depth: usize,
    /// First mipmap level in the view.
    pub firstMipmapLevel: c_uint,
    /// Last mipmap level in the view.
    pub lastMipmapLevel: c_uint,
    /// First layer in the view.
    pub firstLayer: c_uint,
    /// Last layer in the view.
    pub lastLayer: c_uint,
    /// Must be zero.
    pub reserved: [c_uint; 16],
}
/// `CUDA_RESOURCE_VIEW_DESC_v1`: see [`CUDA_RESOURCE_VIEW_DESC`].
pub type CUDA_RESOURCE_VIEW_DESC_v1 = CUDA_RESOURCE_VIEW_DESC;
assert_layout!(
    CUDA_RESOURCE_VIEW_DESC,
    size = 112,
    align = 8,
    width = 8,
    firstMipmapLevel = 32,
    reserved = 48
);

// ---------------------------------------------------------------------------
// Graphs
// ---------------------------------------------------------------------------

/// `CUDA_KERNEL_NODE_PARAMS_v1`: kernel node parameters, first version.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_KERNEL_NODE_PARAMS_v1 {
    /// The kernel.
    pub func: CUfunction,
    /// Grid width in blocks.
    pub gridDimX: c_uint,
    /// Grid height in blocks.
    pub gridDimY: c_uint,
    /// Grid depth in blocks.
    pub gridDimZ: c_uint,
    /// Block width in threads.
    pub blockDimX: c_uint,
    /// Block height in threads.
    pub blockDimY: c_uint,
    /// Block depth in threads.
    pub blockDimZ: c_uint,
    /// Dynamic shared memory per block, in bytes.
    pub sharedMemBytes: c_uint,
    /// Pointers to the kernel's parameter values.
    pub kernelParams: *mut *mut c_void,
    /// Extra options (`CU_LAUNCH_PARAM_*`), or null.
    pub extra: *mut *mut c_void,
}
assert_layout!(
    CUDA_KERNEL_NODE_PARAMS_v1,
    size = 56,
    align = 8,
    sharedMemBytes = 32,
    kernelParams = 40,
    extra = 48
);

/// `CUDA_KERNEL_NODE_PARAMS_v2`: kernel node parameters taken by the `_v2`
/// kernel-node entry points; 13.0's `CUDA_KERNEL_NODE_PARAMS`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_KERNEL_NODE_PARAMS_v2 {
    /// The kernel, or null to use `kern`.
    pub func: CUfunction,
    /// Grid width in blocks.
    pub gridDimX: c_uint,
    /// Grid height in blocks.
    pub gridDimY: c_uint,
    /// Grid depth in blocks.
    pub gridDimZ: c_uint,
    /// Block width in threads.
    pub blockDimX: c_uint,
    /// Block height in threads.
    pub blockDimY: c_uint,
    /// Block depth in threads.
    pub blockDimZ: c_uint,
    /// Dynamic shared memory per block, in bytes.
    pub sharedMemBytes: c_uint,
    /// Pointers to the kernel's parameter values.
    pub kernelParams: *mut *mut c_void,
    /// Extra options (`CU_LAUNCH_PARAM_*`), or null.
    pub extra: *mut *mut c_void,
    /// The kernel, used only when `func` is null.
    pub kern: CUkernel,
    /// Context to run in (null: the current one); ignored when `func` is set.
    pub ctx: CUcontext,
}
/// `CUDA_KERNEL_NODE_PARAMS`: in CUDA 13.0, [`CUDA_KERNEL_NODE_PARAMS_v2`].
pub type CUDA_KERNEL_NODE_PARAMS = CUDA_KERNEL_NODE_PARAMS_v2;
assert_layout!(
    CUDA_KERNEL_NODE_PARAMS_v2,
    size = 72,
    align = 8,
    kernelParams = 40,
    extra = 48,
    kern = 56,
    ctx = 64
);

/// `CUDA_KERNEL_NODE_PARAMS_v3`: kernel node parameters inside `CUgraphNodeParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_KERNEL_NODE_PARAMS_v3 {
    /// The kernel, or null to use `kern`.
    pub func: CUfunction,
    /// Grid width in blocks.
    pub gridDimX: c_uint,
    /// Grid height in blocks.
    pub gridDimY: c_uint,
    /// Grid depth in blocks.
    pub gridDimZ: c_uint,
    /// Block width in threads.
    pub blockDimX: c_uint,
    /// Block height in threads.
    pub blockDimY: c_uint,
    /// Block depth in threads.
    pub blockDimZ: c_uint,
    /// Dynamic shared memory per block, in bytes.
    pub sharedMemBytes: c_uint,
    /// Pointers to the kernel's parameter values.
    pub kernelParams: *mut *mut c_void,
    /// Extra options (`CU_LAUNCH_PARAM_*`), or null.
    pub extra: *mut *mut c_void,
    /// The kernel, used only when `func` is null.
    pub kern: CUkernel,
    /// Context to run in (null: the current one); ignored when `func` is set.
    pub ctx: CUcontext,
}
assert_layout!(
    CUDA_KERNEL_NODE_PARAMS_v3,
    size = 72,
    align = 8,
    kernelParams = 40,
    extra = 48,
    kern = 56,
    ctx = 64
);

/// `CUDA_MEMSET_NODE_PARAMS_v1`: memset node parameters; 13.0's `CUDA_MEMSET_NODE_PARAMS`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_MEMSET_NODE_PARAMS_v1 {
    /// Destination device address.
    pub dst: CUdeviceptr,
    /// Destination pitch in bytes (unused when `height` is 1).
    pub pitch: usize,
    /// Value to set.
    pub value: c_uint,
    /// Element size in bytes: 1, 2 or 4.
    pub elementSize: c_uint,
    /// Row width in elements.
    pub width: usize,
    /// Number of rows.
    pub height: usize,
}
/// `CUDA_MEMSET_NODE_PARAMS`: in CUDA 13.0, [`CUDA_MEMSET_NODE_PARAMS_v1`].
pub type CUDA_MEMSET_NODE_PARAMS = CUDA_MEMSET_NODE_PARAMS_v1;
assert_layout!(
    CUDA_MEMSET_NODE_PARAMS_v1,
    size = 40,
    align = 8,
    value = 16,
    width = 24,
    height = 32
);

/// `CUDA_MEMSET_NODE_PARAMS_v2`: memset node parameters with a context.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMSET_NODE_PARAMS_v2 {
    /// Destination device address.
    pub dst: CUdeviceptr,
    /// Destination pitch in bytes (unused when `height` is 1).
    pub pitch: usize,
    /// Value to set.
    pub value: c_uint,
    /// Element size in bytes: 1, 2 or 4.
    pub elementSize: c_uint,
    /// Row width in elements.
    pub width: usize,
    /// Number of rows.
    pub height: usize,
    /// Context to run in.
    pub ctx: CUcontext,
}
assert_layout!(
    CUDA_MEMSET_NODE_PARAMS_v2,
    size = 48,
    align = 8,
    value = 16,
    ctx = 40
);

/// `CUDA_HOST_NODE_PARAMS_v1`: host node parameters; 13.0's `CUDA_HOST_NODE_PARAMS`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_HOST_NODE_PARAMS_v1 {
    /// The function to call.
    pub r#fn: CUhostFn,
    /// Its argument.
    pub userData: *mut c_void,
}
/// `CUDA_HOST_NODE_PARAMS`: in CUDA 13.0, [`CUDA_HOST_NODE_PARAMS_v1`].
pub type CUDA_HOST_NODE_PARAMS = CUDA_HOST_NODE_PARAMS_v1;
assert_layout!(CUDA_HOST_NODE_PARAMS_v1, size = 16, align = 8, userData = 8);

/// `CUDA_HOST_NODE_PARAMS_v2`: host node parameters inside `CUgraphNodeParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_HOST_NODE_PARAMS_v2 {
    /// The function to call.
    pub r#fn: CUhostFn,
    /// Its argument.
    pub userData: *mut c_void,
}
assert_layout!(CUDA_HOST_NODE_PARAMS_v2, size = 16, align = 8, userData = 8);

/// `CUDA_MEMCPY_NODE_PARAMS`: memcpy node parameters inside `CUgraphNodeParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEMCPY_NODE_PARAMS {
    /// Must be zero.
    pub flags: c_int,
    /// Must be zero.
    pub reserved: c_int,
    /// Context to run in.
    pub copyCtx: CUcontext,
    /// The copy.
    pub copyParams: CUDA_MEMCPY3D,
}
assert_layout!(
    CUDA_MEMCPY_NODE_PARAMS,
    size = 216,
    align = 8,
    copyCtx = 8,
    copyParams = 16
);

/// `CUDA_CONDITIONAL_NODE_PARAMS`: conditional node parameters.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_CONDITIONAL_NODE_PARAMS {
    /// The condition, created beforehand with `cuGraphConditionalHandleCreate`.
    pub handle: CUgraphConditionalHandle,
    /// The kind of conditional.
    pub r#type: CUgraphConditionalNodeType,
    /// Number of body graphs: 1 for while, 1 or 2 for if, any positive number for switch.
    pub size: c_uint,
    /// Out: the body graphs, owned by CUDA for the node's lifetime.
    pub phGraph_out: *mut CUgraph,
    /// Context to run in; must match the handle's and the bodies'.
    pub ctx: CUcontext,
}
assert_layout!(
    CUDA_CONDITIONAL_NODE_PARAMS,
    size = 32,
    align = 8,
    r#type = 8,
    size = 12,
    phGraph_out = 16,
    ctx = 24
);

/// `CUDA_CHILD_GRAPH_NODE_PARAMS`: child graph node parameters.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_CHILD_GRAPH_NODE_PARAMS {
    /// The child graph to clone or move in; on query, the node's graph.
    pub graph: CUgraph,
    /// Whether the child graph is cloned or moved.
    pub ownership: CUgraphChildGraphNodeOwnership,
}
assert_layout!(
    CUDA_CHILD_GRAPH_NODE_PARAMS,
    size = 16,
    align = 8,
    ownership = 8
);

/// `CUDA_EVENT_RECORD_NODE_PARAMS`: event record node parameters.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_EVENT_RECORD_NODE_PARAMS {
    /// The event to record.
    pub event: CUevent,
}
assert_layout!(CUDA_EVENT_RECORD_NODE_PARAMS, size = 8, align = 8);

/// `CUDA_EVENT_WAIT_NODE_PARAMS`: event wait node parameters.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_EVENT_WAIT_NODE_PARAMS {
    /// The event to wait on.
    pub event: CUevent,
}
assert_layout!(CUDA_EVENT_WAIT_NODE_PARAMS, size = 8, align = 8);

/// `CUDA_MEM_ALLOC_NODE_PARAMS_v1`: memory allocation node parameters; 13.0's `CUDA_MEM_ALLOC_NODE_PARAMS`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEM_ALLOC_NODE_PARAMS_v1 {
    /// In: where to allocate; `handleTypes` must be `CU_MEM_HANDLE_TYPE_NONE`.
    pub poolProps: CUmemPoolProps,
    /// In: peer access descriptors.
    pub accessDescs: *const CUmemAccessDesc,
    /// In: number of `accessDescs`, at most the number of GPUs.
    pub accessDescCount: usize,
    /// In: size of the allocation in bytes.
    pub bytesize: usize,
    /// Out: address of the allocation.
    pub dptr: CUdeviceptr,
}
/// `CUDA_MEM_ALLOC_NODE_PARAMS`: in CUDA 13.0, [`CUDA_MEM_ALLOC_NODE_PARAMS_v1`].
pub type CUDA_MEM_ALLOC_NODE_PARAMS = CUDA_MEM_ALLOC_NODE_PARAMS_v1;
assert_layout!(
    CUDA_MEM_ALLOC_NODE_PARAMS_v1,
    size = 120,
    align = 8,
    accessDescs = 88,
    dptr = 112
);

/// `CUDA_MEM_ALLOC_NODE_PARAMS_v2`: memory allocation node parameters inside `CUgraphNodeParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_MEM_ALLOC_NODE_PARAMS_v2 {
    /// In: where to allocate; `handleTypes` must be `CU_MEM_HANDLE_TYPE_NONE`.
    pub poolProps: CUmemPoolProps,
    /// In: peer access descriptors.
    pub accessDescs: *const CUmemAccessDesc,
    /// In: number of `accessDescs`, at most the number of GPUs.
    pub accessDescCount: usize,
    /// In: size of the allocation in bytes.
    pub bytesize: usize,
    /// Out: address of the allocation.
    pub dptr: CUdeviceptr,
}
assert_layout!(
    CUDA_MEM_ALLOC_NODE_PARAMS_v2,
    size = 120,
    align = 8,
    accessDescs = 88,
    dptr = 112
);

/// `CUDA_MEM_FREE_NODE_PARAMS`: memory free node parameters.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct CUDA_MEM_FREE_NODE_PARAMS {
    /// The address to free.
    pub dptr: CUdeviceptr,
}
assert_layout!(CUDA_MEM_FREE_NODE_PARAMS, size = 8, align = 8);

/// The unnamed union of [`CUgraphNodeParams`]; `type` says which member
/// is live. The external-semaphore and batch-memop members of the C union
/// are not mirrored; `reserved1` keeps the size exact.
#[repr(C)]
#[derive(Clone, Copy)]
pub union CUgraphNodeParams_params {
    /// Padding; unused bytes must be zero.
    pub reserved1: [c_longlong; 29],
    /// For `CU_GRAPH_NODE_TYPE_KERNEL`.
    pub kernel: CUDA_KERNEL_NODE_PARAMS_v3,
    /// For `CU_GRAPH_NODE_TYPE_MEMCPY`.
    pub memcpy: CUDA_MEMCPY_NODE_PARAMS,
    /// For `CU_GRAPH_NODE_TYPE_MEMSET`.
    pub memset: CUDA_MEMSET_NODE_PARAMS_v2,
    /// For `CU_GRAPH_NODE_TYPE_HOST`.
    pub host: CUDA_HOST_NODE_PARAMS_v2,
    /// For `CU_GRAPH_NODE_TYPE_GRAPH`.
    pub graph: CUDA_CHILD_GRAPH_NODE_PARAMS,
    /// For `CU_GRAPH_NODE_TYPE_WAIT_EVENT`.
    pub eventWait: CUDA_EVENT_WAIT_NODE_PARAMS,
    /// For `CU_GRAPH_NODE_TYPE_EVENT_RECORD`.
    pub eventRecord: CUDA_EVENT_RECORD_NODE_PARAMS,
    /// For `CU_GRAPH_NODE_TYPE_MEM_ALLOC`.
    pub alloc: CUDA_MEM_ALLOC_NODE_PARAMS_v2,
    /// For `CU_GRAPH_NODE_TYPE_MEM_FREE`.
    pub free: CUDA_MEM_FREE_NODE_PARAMS,
    /// For `CU_GRAPH_NODE_TYPE_CONDITIONAL`.
    pub conditional: CUDA_CONDITIONAL_NODE_PARAMS,
}
assert_layout!(CUgraphNodeParams_params, size = 232, align = 8);

impl std::fmt::Debug for CUgraphNodeParams_params {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The live member is named by the enclosing `type`; read none.
        f.debug_struct("CUgraphNodeParams_params")
            .finish_non_exhaustive()
    }
}

/// `CUgraphNodeParams`: parameters of any kind of node (`cuGraphAddNode_v2`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUgraphNodeParams {
    /// The kind of node, naming the live member of `params`.
    pub r#type: CUgraphNodeType,
    /// Must be zero.
    pub reserved0: [c_int; 3],
    /// The parameters (an anonymous union in C, whose members C code names
    /// directly: `p.kernel` there is `p.params.kernel` here).
    pub params: CUgraphNodeParams_params,
    /// Must be zero.
    pub reserved2: c_longlong,
}
assert_layout!(
    CUgraphNodeParams,
    size = 256,
    align = 8,
    reserved0 = 4,
    params = 16,
    reserved2 = 248
);

/// `CUgraphEdgeData`: annotations of a graph edge; all-zero is an ordinary
/// full dependency.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUgraphEdgeData {
    /// When the upstream node triggers the edge (`CU_GRAPH_KERNEL_NODE_PORT_*`).
    pub from_port: c_uchar,
    /// Which part of the downstream node depends on it; must be zero.
    pub to_port: c_uchar,
    /// A `CUgraphDependencyType` value.
    pub r#type: c_uchar,
    /// Must be zero.
    pub reserved: [c_uchar; 5],
}
assert_layout!(
    CUgraphEdgeData,
    size = 8,
    align = 1,
    r#type = 2,
    reserved = 3
);

/// `CUDA_GRAPH_INSTANTIATE_PARAMS`: parameters of `cuGraphInstantiateWithParams`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUDA_GRAPH_INSTANTIATE_PARAMS {
    /// `CUgraphInstantiate_flags` bits.
    pub flags: cuuint64_t,
    /// Stream for `CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD`.
    pub hUploadStream: CUstream,
    /// Out: the node that made instantiation fail, if any.
    pub hErrNode_out: CUgraphNode,
    /// Out: the outcome.
    pub result_out: CUgraphInstantiateResult,
}
assert_layout!(
    CUDA_GRAPH_INSTANTIATE_PARAMS,
    size = 32,
    align = 8,
    hErrNode_out = 16,
    result_out = 24
);

/// `CUgraphExecUpdateResultInfo` (`_v1`): the outcome of `cuGraphExecUpdate_v2`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUgraphExecUpdateResultInfo {
    /// What happened.
    pub result: CUgraphExecUpdateResult,
    /// The node at fault (the "to" node of a mismatched edge), or null.
    pub errorNode: CUgraphNode,
    /// The "from" node of a mismatched edge, or null.
    pub errorFromNode: CUgraphNode,
}
/// `CUgraphExecUpdateResultInfo_v1`: see [`CUgraphExecUpdateResultInfo`].
pub type CUgraphExecUpdateResultInfo_v1 = CUgraphExecUpdateResultInfo;
assert_layout!(
    CUgraphExecUpdateResultInfo,
    size = 24,
    align = 8,
    errorNode = 8,
    errorFromNode = 16
);

zeroed_default!(
    CUipcEventHandle,
    CUipcMemHandle,
    CUmemFabricHandle,
    CUexecAffinityParam_param,
    CUexecAffinityParam,
    CUctxCigParam,
    CUctxCreateParams,
    CUaccessPolicyWindow,
    CUlaunchAttributeValue_programmaticEvent,
    CUlaunchAttributeValue_launchCompletionEvent,
    CUlaunchAttributeValue_deviceUpdatableKernelNode,
    CUlaunchAttributeValue,
    CUlaunchAttribute,
    CUlaunchConfig,
    CUDA_LAUNCH_PARAMS,
    CUmemAllocationProp,
    CUmemPoolProps,
    CUmemPoolPtrExportData,
    CUDA_MEMCPY2D,
    CUDA_MEMCPY3D,
    CUDA_MEMCPY3D_PEER,
    CUDA_RESOURCE_DESC_res_array,
    CUDA_RESOURCE_DESC_res_mipmap,
    CUDA_RESOURCE_DESC_res_linear,
    CUDA_RESOURCE_DESC_res_pitch2D,
    CUDA_RESOURCE_DESC_res_reserved,
    CUDA_RESOURCE_DESC_res,
    CUDA_RESOURCE_DESC,
    CUDA_KERNEL_NODE_PARAMS_v1,
    CUDA_KERNEL_NODE_PARAMS_v2,
    CUDA_KERNEL_NODE_PARAMS_v3,
    CUDA_MEMSET_NODE_PARAMS_v2,
    CUDA_HOST_NODE_PARAMS_v1,
    CUDA_HOST_NODE_PARAMS_v2,
    CUDA_MEMCPY_NODE_PARAMS,
    CUDA_CONDITIONAL_NODE_PARAMS,
    CUDA_CHILD_GRAPH_NODE_PARAMS,
    CUDA_EVENT_RECORD_NODE_PARAMS,
    CUDA_EVENT_WAIT_NODE_PARAMS,
    CUDA_MEM_ALLOC_NODE_PARAMS_v1,
    CUDA_MEM_ALLOC_NODE_PARAMS_v2,
    CUgraphNodeParams_params,
    CUgraphNodeParams,
    CUDA_GRAPH_INSTANTIATE_PARAMS,
    CUgraphExecUpdateResultInfo,
);
