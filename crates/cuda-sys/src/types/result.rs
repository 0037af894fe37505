//! `CUresult`, the status every driver entry point returns.

use super::*;

// ---------------------------------------------------------------------------
// Enums
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
