//! Typed result codes: [`DriverCode`] for the driver's `CUresult`,
//! [`NvrtcCode`] for NVRTC's `nvrtcResult`.
//!
//! This module is the one place where a raw code becomes a typed one. Each
//! enum is declared together with its table by a single macro invocation: one
//! line per code of CUDA 13.0's header, giving the variant, the header's
//! constant (taken from `cuda-sys`, so the number is never written twice), a
//! one-line meaning paraphrasing the header, and for driver codes whether the
//! code is *sticky*. The macro generates the enum, the table the tests walk,
//! and every method (`from_raw`, `raw`, `name`, `number`, `meaning`,
//! `is_sticky`) from those lines, so no impl is written twice.
//!
//! A sticky code is one the header says leaves the process in an
//! inconsistent state: every later CUDA call returns an error, and the only
//! dependable way to use CUDA again is a new process.
//!
//! A code the table does not know (a newer driver's, say) becomes `Other`
//! and keeps its number, so nothing is lost on the way up. When the driver
//! is loaded, an unknown driver code is displayed with the name and text the
//! driver itself gives it (`cuGetErrorName`, `cuGetErrorString`): the lookup
//! is [`DriverCode::driver_text`], and the display takes the looked-up text
//! as input, so both are tested without a GPU.

use std::borrow::Cow;
use std::ffi::{c_char, CStr};
use std::fmt;
use std::ptr;

use cuda_sys::{nvJitLinkResult, nvrtcResult, CUresult};

/// A code's name and description as a loaded library reports them (for the
/// driver: `cuGetErrorName` and `cuGetErrorString`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CodeText {
    /// The library's name for the code (`CUDA_ERROR_...`).
    pub name: String,
    /// The library's description, as it gives it.
    pub text: String,
}

/// The signature `cuGetErrorName` and `cuGetErrorString` share.
type GetErrorFn = unsafe extern "C" fn(CUresult, *mut *const c_char) -> CUresult;

/// Asks a driver's `cuGetErrorName` and `cuGetErrorString` about `raw`.
/// `None` when either fails (a driver that does not know the code answers
/// `CUDA_ERROR_INVALID_VALUE`; the test stand-in answers 801 to both) or
/// gives no string.
fn ask_driver(get_name: GetErrorFn, get_string: GetErrorFn, raw: CUresult) -> Option<CodeText> {
    Some(CodeText {
        name: ask_one(get_name, raw)?,
        text: ask_one(get_string, raw)?,
    })
}

/// One of the two calls of [`ask_driver`]; the string is copied out.
fn ask_one(get: GetErrorFn, raw: CUresult) -> Option<String> {
    let mut out: *const c_char = ptr::null();
    // SAFETY: `get` is `cuGetErrorName` or `cuGetErrorString` of the loaded
    // driver table (or, in tests, a function of the same signature): it takes
    // the code by value and writes one pointer through `&mut out`, a valid
    // out-pointer to a live local.
    let rc = unsafe { get(raw, &mut out) };
    if rc != CUresult::CUDA_SUCCESS || out.is_null() {
        return None;
    }
    // SAFETY: on success the driver has pointed `out` at a NUL-terminated
    // string in its own static storage, and cuda-sys never unloads libcuda,
    // so the string is valid for this read; it is copied before returning.
    let text = unsafe { CStr::from_ptr(out) };
    Some(text.to_string_lossy().into_owned())
}

/// A library's description as one lowercase line without a trailing period,
/// the form of every cudakit message: whitespace runs become one space, a
/// capitalised first word is lowercased (an acronym such as `CUDA` is not).
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let trimmed = joined.trim_end_matches('.').trim_end();
    let mut chars = trimmed.chars();
    match (chars.next(), chars.clone().next()) {
        (Some(first), second)
            if first.is_uppercase() && !second.is_some_and(char::is_uppercase) =>
        {
            first.to_lowercase().chain(chars).collect()
        }
        _ => trimmed.to_owned(),
    }
}

/// How a code displays: `NAME (N): meaning`.
struct Shown<'a> {
    name: &'a str,
    number: i32,
    meaning: Cow<'a, str>,
    /// For an unknown code the loaded library named: its header.
    named_by_library: Option<&'static str>,
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}): {}", self.name, self.number, self.meaning)?;
        if let Some(header) = self.named_by_library {
            write!(
                f,
                " (as the loaded library names it; not in CUDA 13.0's {header})"
            )?;
        }
        Ok(())
    }
}

/// One row of a code table (the tests walk the tables; the methods are
/// generated from the same macro lines as `match`es).
#[cfg(test)]
struct Row<R, C> {
    /// The raw value, as `cuda-sys` declares it.
    raw: R,
    /// The typed code.
    code: C,
    /// The header's name for the code.
    name: &'static str,
    /// A one-line paraphrase of the header's description.
    meaning: &'static str,
    /// Whether the header says the process must be relaunched after it.
    sticky: bool,
}

/// `true` for a row marked `sticky`, `false` for an unmarked one.
macro_rules! sticky {
    () => {
        false
    };
    (sticky) => {
        true
    };
}

/// Declares a code enum, its table and its methods from one list of rows,
/// so that they cannot disagree: each variant is documented with its header
/// name and meaning, and `Other(i32)` is added for codes the list does not
/// name.
macro_rules! code_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident: $raw:ident from $header:literal,
            success $success:ident, unknown $unknown:literal, table $table:ident
            $(, unknown codes named by $ask:ident)? {
            $( $variant:ident = $cname:ident, $meaning:literal $(, $sticky:ident)?; )*
        }
    ) => {
        $(#[$meta])*
        #[non_exhaustive]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $(
                #[doc = concat!("`", stringify!($cname), "`: ", $meaning, ".")]
                $variant,
            )*
            #[doc = concat!(
                "A code not in CUDA 13.0's `", $header,
                "` (from a newer library, say); the number is kept."
            )]
            Other(i32),
        }

        #[doc = concat!(
            "Every error code of CUDA 13.0's `", $header,
            "`, in header order, as declared by the one macro invocation ",
            "that also generates the code-to-variant `match`es."
        )]
        #[cfg(test)]
        const $table: &[Row<$raw, $name>] = &[
            $(
                Row {
                    raw: $raw::$cname,
                    code: $name::$variant,
                    name: stringify!($cname),
                    meaning: $meaning,
                    sticky: sticky!($($sticky)?),
                },
            )*
        ];

        impl $name {
            #[doc = concat!(
                "The typed code of a raw `", stringify!($raw), "`; a value CUDA 13.0's `",
                $header, "` does not name becomes [`", stringify!($name),
                "::Other`] with its number."
            )]
            ///
            #[doc = concat!(
                "`", stringify!($success), "` is not an error and has no variant: passed ",
                "here, it becomes `Other(0)`. Callers check for success before converting."
            )]
            #[must_use]
            pub fn from_raw(raw: $raw) -> Self {
                match raw {
                    $( $raw::$cname => Self::$variant, )*
                    other => Self::Other(other.0),
                }
            }

            #[doc = concat!("The raw `", stringify!($raw), "` this code stands for.")]
            pub fn raw(self) -> $raw {
                match self {
                    $( Self::$variant => $raw::$cname, )*
                    Self::Other(number) => $raw(number),
                }
            }

            /// The header's name for the code (`CUDA_ERROR_OUT_OF_MEMORY`,
            /// `NVRTC_ERROR_COMPILATION`, ...).
            #[doc = concat!("`\"", $unknown, "\"` for [`", stringify!($name), "::Other`].")]
            #[must_use]
            pub fn name(self) -> &'static str {
                match self {
                    $( Self::$variant => stringify!($cname), )*
                    Self::Other(_) => $unknown,
                }
            }

            /// The code's number as the header defines it; kept for
            #[doc = concat!("[`", stringify!($name), "::Other`] too.")]
            #[must_use]
            pub fn number(self) -> i32 {
                self.raw().0
            }

            /// What the code means, in one lowercase line without a trailing
            /// period (`"out of memory"`), paraphrasing the header.
            #[doc = concat!(
                "For [`", stringify!($name), "::Other`]: `\"a code CUDA 13.0's ",
                $header, " does not define\"`."
            )]
            #[must_use]
            pub fn meaning(self) -> &'static str {
                match self {
                    $( Self::$variant => $meaning, )*
                    Self::Other(_) => concat!("a code CUDA 13.0's ", $header, " does not define"),
                }
            }

            /// Whether the code is sticky: the header says it leaves the
            /// process in an inconsistent state, every later CUDA call fails,
            /// and only a new process dependably gets a usable context back.
            #[doc = concat!(
                "`false` for [`", stringify!($name), "::Other`], whose nature these ",
                "bindings cannot know, and for every code the header does not mark."
            )]
            #[must_use]
            pub fn is_sticky(self) -> bool {
                match self {
                    $( Self::$variant => sticky!($($sticky)?), )*
                    Self::Other(_) => false,
                }
            }

            /// The code as `Display` shows it, with `asked` (what the loaded
            /// library says about the code) used for an unknown code:
            /// `NAME (N): meaning` for a known code; for an unknown one the
            /// library's name and text, flagged as such, or without them
            #[doc = concat!("`", $unknown, " (N): a code CUDA 13.0's ", $header, " does not define`.")]
            pub fn display_with(self, asked: Option<&CodeText>) -> impl fmt::Display + '_ {
                match (self, asked) {
                    (Self::Other(number), Some(asked)) => Shown {
                        name: &asked.name,
                        number,
                        meaning: Cow::Owned(one_line(&asked.text)),
                        named_by_library: Some($header),
                    },
                    _ => Shown {
                        name: self.name(),
                        number: self.number(),
                        meaning: Cow::Borrowed(self.meaning()),
                        named_by_library: None,
                    },
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                #[allow(unused_mut)]
                let mut asked: Option<CodeText> = None;
                $(
                    if let Self::Other(_) = self {
                        asked = self.$ask();
                    }
                )?
                let shown = self.display_with(asked.as_ref());
                shown.fmt(f)
            }
        }
    };
}

code_enum! {
    /// A driver error code: one variant per error `CUresult` of CUDA 13.0's
    /// `cuda.h` (`CUDA_SUCCESS` is no error and has none), plus
    /// [`DriverCode::Other`] for codes these bindings do not know.
    pub enum DriverCode: CUresult from "cuda.h",
        success CUDA_SUCCESS, unknown "CUDA_ERROR_<unknown>", table DRIVER_TABLE,
        unknown codes named by driver_text {
        InvalidValue = CUDA_ERROR_INVALID_VALUE,
            "a parameter is outside its acceptable range";
        OutOfMemory = CUDA_ERROR_OUT_OF_MEMORY, "out of memory";
        NotInitialized = CUDA_ERROR_NOT_INITIALIZED,
            "the driver is not initialized (cuInit was not called or failed)";
        Deinitialized = CUDA_ERROR_DEINITIALIZED, "the driver is shutting down";
        ProfilerDisabled = CUDA_ERROR_PROFILER_DISABLED,
            "the profiler is disabled for this run (an external profiling tool may be attached)";
        ProfilerNotInitialized = CUDA_ERROR_PROFILER_NOT_INITIALIZED,
            "profiler not initialized (deprecated since CUDA 5.0)";
        ProfilerAlreadyStarted = CUDA_ERROR_PROFILER_ALREADY_STARTED,
            "profiling already started (deprecated since CUDA 5.0)";
        ProfilerAlreadyStopped = CUDA_ERROR_PROFILER_ALREADY_STOPPED,
            "profiling already stopped (deprecated since CUDA 5.0)";
        StubLibrary = CUDA_ERROR_STUB_LIBRARY,
            "the loaded libcuda is a stub library, not a real driver";
        CallRequiresNewerDriver = CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER,
            "the call needs a newer CUDA driver than the one installed";
        DeviceUnavailable = CUDA_ERROR_DEVICE_UNAVAILABLE,
            "the device is unavailable now (exclusive-process or prohibited compute mode)";
        NoDevice = CUDA_ERROR_NO_DEVICE, "no CUDA-capable device was detected";
        InvalidDevice = CUDA_ERROR_INVALID_DEVICE,
            "the device ordinal is invalid, or the action is invalid for the device";
        DeviceNotLicensed = CUDA_ERROR_DEVICE_NOT_LICENSED, "the grid license is not applied";
        InvalidImage = CUDA_ERROR_INVALID_IMAGE, "the kernel image or module is invalid";
        InvalidContext = CUDA_ERROR_INVALID_CONTEXT,
            "no context is current to the thread, or the context handle is invalid";
        ContextAlreadyCurrent = CUDA_ERROR_CONTEXT_ALREADY_CURRENT,
            "the context is already current (deprecated since CUDA 3.2)";
        MapFailed = CUDA_ERROR_MAP_FAILED, "a map or register operation failed";
        UnmapFailed = CUDA_ERROR_UNMAP_FAILED, "an unmap or unregister operation failed";
        ArrayIsMapped = CUDA_ERROR_ARRAY_IS_MAPPED,
            "the array is mapped and cannot be destroyed";
        AlreadyMapped = CUDA_ERROR_ALREADY_MAPPED, "the resource is already mapped";
        NoBinaryForGpu = CUDA_ERROR_NO_BINARY_FOR_GPU,
            "no kernel image in the module suits this device";
        AlreadyAcquired = CUDA_ERROR_ALREADY_ACQUIRED, "the resource is already acquired";
        NotMapped = CUDA_ERROR_NOT_MAPPED, "the resource is not mapped";
        NotMappedAsArray = CUDA_ERROR_NOT_MAPPED_AS_ARRAY,
            "the mapped resource is not available as an array";
        NotMappedAsPointer = CUDA_ERROR_NOT_MAPPED_AS_POINTER,
            "the mapped resource is not available as a pointer";
        // Not sticky: unlike the codes below, the header does not say the
        // process must be relaunched. The hardware may still be unhealthy.
        EccUncorrectable = CUDA_ERROR_ECC_UNCORRECTABLE,
            "an uncorrectable ECC error was detected during execution";
        UnsupportedLimit = CUDA_ERROR_UNSUPPORTED_LIMIT,
            "the limit is not supported by the device";
        ContextAlreadyInUse = CUDA_ERROR_CONTEXT_ALREADY_IN_USE,
            "the context is already bound to another CPU thread";
        PeerAccessUnsupported = CUDA_ERROR_PEER_ACCESS_UNSUPPORTED,
            "peer access is not supported between these devices";
        InvalidPtx = CUDA_ERROR_INVALID_PTX, "just-in-time compilation of PTX failed";
        InvalidGraphicsContext = CUDA_ERROR_INVALID_GRAPHICS_CONTEXT,
            "an error with the OpenGL or DirectX context";
        // Not sticky, as ECC_UNCORRECTABLE above.
        NvlinkUncorrectable = CUDA_ERROR_NVLINK_UNCORRECTABLE,
            "an uncorrectable NVLink error was detected during execution";
        JitCompilerNotFound = CUDA_ERROR_JIT_COMPILER_NOT_FOUND,
            "the PTX JIT compiler library was not found";
        UnsupportedPtxVersion = CUDA_ERROR_UNSUPPORTED_PTX_VERSION,
            "the PTX was produced by an unsupported toolchain";
        JitCompilationDisabled = CUDA_ERROR_JIT_COMPILATION_DISABLED,
            "just-in-time compilation of PTX is disabled";
        UnsupportedExecAffinity = CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY,
            "the execution affinity type is not supported by the device";
        UnsupportedDevsideSync = CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC,
            "the code to JIT-compile calls cudaDeviceSynchronize, which is unsupported";
        // Sticky: the header says the process is left inconsistent and must be
        // terminated and relaunched to use CUDA again.
        Contained = CUDA_ERROR_CONTAINED,
            "a device exception was contained by the GPU's error containment", sticky;
        InvalidSource = CUDA_ERROR_INVALID_SOURCE,
            "the device kernel source is invalid (compile or link errors)";
        FileNotFound = CUDA_ERROR_FILE_NOT_FOUND, "the file was not found";
        SharedObjectSymbolNotFound = CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND,
            "a link to a shared object failed to resolve";
        SharedObjectInitFailed = CUDA_ERROR_SHARED_OBJECT_INIT_FAILED,
            "initialization of a shared object failed";
        OperatingSystem = CUDA_ERROR_OPERATING_SYSTEM, "an operating system call failed";
        InvalidHandle = CUDA_ERROR_INVALID_HANDLE,
            "a resource handle (stream, event, ...) is invalid";
        IllegalState = CUDA_ERROR_ILLEGAL_STATE,
            "a resource the call needs is not in a valid state for it";
        LossyQuery = CUDA_ERROR_LOSSY_QUERY,
            "the query would discard semantically important information";
        NotFound = CUDA_ERROR_NOT_FOUND, "named symbol not found";
        NotReady = CUDA_ERROR_NOT_READY,
            "asynchronous work has not completed yet (not an error as such)";
        // Sticky: the header says the process is left inconsistent and must be
        // terminated and relaunched to use CUDA again.
        IllegalAddress = CUDA_ERROR_ILLEGAL_ADDRESS,
            "a kernel loaded or stored at an illegal memory address", sticky;
        LaunchOutOfResources = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
            "the launch lacks resources (too many threads for its registers, or bad parameter sizes)";
        // Sticky: same header wording as ILLEGAL_ADDRESS (process inconsistent,
        // terminate and relaunch).
        LaunchTimeout = CUDA_ERROR_LAUNCH_TIMEOUT,
            "the kernel ran past the execution timeout", sticky;
        LaunchIncompatibleTexturing = CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING,
            "the launch uses an incompatible texturing mode";
        PeerAccessAlreadyEnabled = CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED,
            "peer access to the context is already enabled";
        PeerAccessNotEnabled = CUDA_ERROR_PEER_ACCESS_NOT_ENABLED,
            "peer access to the context was never enabled";
        PrimaryContextActive = CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE,
            "the device's primary context is already initialized";
        ContextIsDestroyed = CUDA_ERROR_CONTEXT_IS_DESTROYED,
            "the current context was destroyed, or is a primary context not yet initialized";
        // Sticky: the header says the context can no longer be used and must be
        // destroyed, and all of its device allocations are invalid.
        Assert = CUDA_ERROR_ASSERT,
            "a device-side assert triggered during kernel execution", sticky;
        TooManyPeers = CUDA_ERROR_TOO_MANY_PEERS,
            "the hardware resources for peer access are exhausted";
        HostMemoryAlreadyRegistered = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
            "the host memory range is already registered";
        HostMemoryNotRegistered = CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
            "the host pointer is not in any registered memory range";
        // Sticky: process inconsistent, terminate and relaunch (header).
        HardwareStackError = CUDA_ERROR_HARDWARE_STACK_ERROR,
            "a kernel hit a stack error (corruption or the stack size limit)", sticky;
        // Sticky: process inconsistent, terminate and relaunch (header).
        IllegalInstruction = CUDA_ERROR_ILLEGAL_INSTRUCTION,
            "a kernel executed an illegal instruction", sticky;
        // Sticky: process inconsistent, terminate and relaunch (header).
        MisalignedAddress = CUDA_ERROR_MISALIGNED_ADDRESS,
            "a kernel loaded or stored at a misaligned address", sticky;
        // Sticky: process inconsistent, terminate and relaunch (header).
        InvalidAddressSpace = CUDA_ERROR_INVALID_ADDRESS_SPACE,
            "a kernel gave an instruction an address outside the address spaces it allows", sticky;
        // Sticky: process inconsistent, terminate and relaunch (header).
        InvalidPc = CUDA_ERROR_INVALID_PC,
            "a kernel's program counter wrapped its address space", sticky;
        // Sticky: process inconsistent, terminate and relaunch (header).
        LaunchFailed = CUDA_ERROR_LAUNCH_FAILED,
            "an exception occurred on the device while executing a kernel", sticky;
        CooperativeLaunchTooLarge = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE,
            "a cooperative launch has more blocks than can be resident at once";
        // Sticky: process inconsistent, terminate and relaunch (header).
        TensorMemoryLeak = CUDA_ERROR_TENSOR_MEMORY_LEAK,
            "a kernel exited without freeing all of its tensor memory", sticky;
        NotPermitted = CUDA_ERROR_NOT_PERMITTED, "the operation is not permitted";
        NotSupported = CUDA_ERROR_NOT_SUPPORTED,
            "the operation is not supported on this system or device";
        SystemNotReady = CUDA_ERROR_SYSTEM_NOT_READY,
            "the system is not ready for CUDA work (check its configuration and driver daemons)";
        SystemDriverMismatch = CUDA_ERROR_SYSTEM_DRIVER_MISMATCH,
            "the display driver and the CUDA driver versions do not match";
        CompatNotSupportedOnDevice = CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE,
            "forward compatibility is not supported on the visible hardware";
        MpsConnectionFailed = CUDA_ERROR_MPS_CONNECTION_FAILED,
            "the MPS client could not connect to the MPS control daemon or server";
        MpsRpcFailure = CUDA_ERROR_MPS_RPC_FAILURE,
            "a remote procedure call between the MPS server and client failed";
        MpsServerNotReady = CUDA_ERROR_MPS_SERVER_NOT_READY,
            "the MPS server is not ready for new clients";
        MpsMaxClientsReached = CUDA_ERROR_MPS_MAX_CLIENTS_REACHED,
            "the hardware resources for another MPS client are exhausted";
        MpsMaxConnectionsReached = CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED,
            "the hardware resources for device connections are exhausted";
        // Sticky: the header says the process must be terminated and relaunched
        // to use CUDA again.
        MpsClientTerminated = CUDA_ERROR_MPS_CLIENT_TERMINATED,
            "the MPS server terminated this client", sticky;
        CdpNotSupported = CUDA_ERROR_CDP_NOT_SUPPORTED,
            "dynamic parallelism (CDP) is not supported in this configuration";
        CdpVersionMismatch = CUDA_ERROR_CDP_VERSION_MISMATCH,
            "the module mixes incompatible versions of dynamic parallelism";
        StreamCaptureUnsupported = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
            "the operation is not permitted while the stream is capturing";
        StreamCaptureInvalidated = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED,
            "the stream's capture sequence was invalidated by an earlier error";
        StreamCaptureMerge = CUDA_ERROR_STREAM_CAPTURE_MERGE,
            "the operation would merge two independent capture sequences";
        StreamCaptureUnmatched = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED,
            "the capture was not started in this stream";
        StreamCaptureUnjoined = CUDA_ERROR_STREAM_CAPTURE_UNJOINED,
            "the capture sequence has a fork not joined back to the origin stream";
        StreamCaptureIsolation = CUDA_ERROR_STREAM_CAPTURE_ISOLATION,
            "a dependency would cross the capture sequence boundary";
        StreamCaptureImplicit = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
            "a disallowed implicit dependency on a capture from the legacy stream";
        CapturedEvent = CUDA_ERROR_CAPTURED_EVENT,
            "the operation is not permitted on an event last recorded in a capturing stream";
        StreamCaptureWrongThread = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD,
            "a capture not in relaxed mode was ended from a different thread";
        Timeout = CUDA_ERROR_TIMEOUT, "the wait operation timed out";
        GraphExecUpdateFailure = CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE,
            "the graph update broke a constraint of executable graph update";
        // Sticky: process inconsistent, terminate and relaunch (header).
        ExternalDevice = CUDA_ERROR_EXTERNAL_DEVICE,
            "an external device signalled an error for data shared with CUDA", sticky;
        InvalidClusterSize = CUDA_ERROR_INVALID_CLUSTER_SIZE,
            "the launch's cluster configuration is invalid";
        FunctionNotLoaded = CUDA_ERROR_FUNCTION_NOT_LOADED, "the function is not loaded";
        InvalidResourceType = CUDA_ERROR_INVALID_RESOURCE_TYPE,
            "a resource is not of a valid type for the operation";
        InvalidResourceConfiguration = CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
            "a resource is insufficient or not applicable for the operation";
        KeyRotation = CUDA_ERROR_KEY_ROTATION, "an error occurred during key rotation";
        Unknown = CUDA_ERROR_UNKNOWN, "an unknown internal error occurred";
    }
}

impl DriverCode {
    /// What the loaded driver says about the code: its name and description
    /// from `cuGetErrorName` and `cuGetErrorString`. `None` when no driver
    /// has been loaded yet (this never loads one) or the driver does not
    /// know the code.
    ///
    /// `Display` uses it for [`DriverCode::Other`], the codes of a driver
    /// newer than CUDA 13.0's `cuda.h`, so that their message names them.
    #[must_use]
    pub fn driver_text(self) -> Option<CodeText> {
        let cu = cuda_sys::loaded_driver()?;
        ask_driver(cu.cuGetErrorName, cu.cuGetErrorString, self.raw())
    }
}

code_enum! {
    /// An NVRTC error code: one variant per error `nvrtcResult` of CUDA
    /// 13.0's `nvrtc.h` (`NVRTC_SUCCESS` is no error and has none), plus
    /// [`NvrtcCode::Other`] for codes these bindings do not know.
    pub enum NvrtcCode: nvrtcResult from "nvrtc.h",
        success NVRTC_SUCCESS, unknown "NVRTC_ERROR_<unknown>", table NVRTC_TABLE {
        OutOfMemory = NVRTC_ERROR_OUT_OF_MEMORY, "out of host memory";
        ProgramCreationFailure = NVRTC_ERROR_PROGRAM_CREATION_FAILURE,
            "the program could not be created";
        InvalidInput = NVRTC_ERROR_INVALID_INPUT,
            "an argument is invalid (a null pointer, a negative count, ...)";
        InvalidProgram = NVRTC_ERROR_INVALID_PROGRAM, "the program handle is invalid";
        InvalidOption = NVRTC_ERROR_INVALID_OPTION,
            "a compile option is unknown or has an invalid value";
        Compilation = NVRTC_ERROR_COMPILATION,
            "the source did not compile (the program log says why)";
        BuiltinOperationFailure = NVRTC_ERROR_BUILTIN_OPERATION_FAILURE,
            "a built-in operation failed (often: libnvrtc-builtins could not be loaded)";
        NoNameExpressionsAfterCompilation = NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION,
            "name expressions cannot be added after compiling";
        NoLoweredNamesBeforeCompilation = NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION,
            "lowered names are not available before compiling";
        NameExpressionNotValid = NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID,
            "the name expression was not added before compiling, or names nothing";
        InternalError = NVRTC_ERROR_INTERNAL_ERROR, "an internal error in NVRTC";
        TimeFileWriteFailed = NVRTC_ERROR_TIME_FILE_WRITE_FAILED,
            "the file named by --time could not be written";
        NoPchCreateAttempted = NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED,
            "no precompiled header creation was attempted";
        PchCreateHeapExhausted = NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED,
            "the precompiled header heap ran out of space";
        PchCreate = NVRTC_ERROR_PCH_CREATE,
            "an error prevented the precompiled header from being created";
        Cancelled = NVRTC_ERROR_CANCELLED,
            "compilation was cancelled by the flow callback";
        TimeTraceFileWriteFailed = NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED,
            "the time-trace file could not be written";
    }
}

code_enum! {
    /// An nvJitLink error code: one variant per error `nvJitLinkResult` of
    /// CUDA 13.0's `nvJitLink.h` (`NVJITLINK_SUCCESS` is no error and has
    /// none), plus [`JitLinkCode::Other`] for codes these bindings do not know.
    pub enum JitLinkCode: nvJitLinkResult from "nvJitLink.h",
        success NVJITLINK_SUCCESS, unknown "NVJITLINK_ERROR_<unknown>", table NVJITLINK_TABLE {
        UnrecognizedOption = NVJITLINK_ERROR_UNRECOGNIZED_OPTION, "an option is not recognized";
        MissingArch = NVJITLINK_ERROR_MISSING_ARCH, "no -arch=sm_NN option was given";
        InvalidInput = NVJITLINK_ERROR_INVALID_INPUT, "an input is invalid";
        PtxCompile = NVJITLINK_ERROR_PTX_COMPILE, "compiling PTX failed (the error log says why)";
        NvvmCompile = NVJITLINK_ERROR_NVVM_COMPILE,
            "compiling LTO-IR failed (the error log says why)";
        Internal = NVJITLINK_ERROR_INTERNAL, "an internal error in nvJitLink";
        Threadpool = NVJITLINK_ERROR_THREADPOOL, "nvJitLink's thread pool failed";
        UnrecognizedInput = NVJITLINK_ERROR_UNRECOGNIZED_INPUT, "an input is not recognized";
        Finalize = NVJITLINK_ERROR_FINALIZE, "finalizing the link failed";
        NullInput = NVJITLINK_ERROR_NULL_INPUT, "an input is null";
        IncompatibleOptions = NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS,
            "options that cannot be combined were given";
        IncorrectInputType = NVJITLINK_ERROR_INCORRECT_INPUT_TYPE,
            "an input is not of the type it was added as";
        ArchMismatch = NVJITLINK_ERROR_ARCH_MISMATCH,
            "an input was compiled for another architecture than -arch";
        OutdatedLibrary = NVJITLINK_ERROR_OUTDATED_LIBRARY,
            "an input was made by a newer toolkit than this nvJitLink";
        MissingFatbin = NVJITLINK_ERROR_MISSING_FATBIN, "a fatbin is missing";
        UnrecognizedArch = NVJITLINK_ERROR_UNRECOGNIZED_ARCH, "the -arch value is not recognized";
        UnsupportedArch = NVJITLINK_ERROR_UNSUPPORTED_ARCH, "the -arch value is not supported";
        LtoNotEnabled = NVJITLINK_ERROR_LTO_NOT_ENABLED, "inputs of LTO-IR need the -lto option";
    }
}

/// The nvJitLink table against the header (issue 13).
#[cfg(test)]
mod jitlink_tests {
    use super::*;

    #[test]
    fn every_nvjitlink_code_has_a_variant_name_and_meaning() {
        assert_eq!(NVJITLINK_TABLE.len() + 1, nvJitLinkResult::ALL.len());
        for row in NVJITLINK_TABLE {
            assert_eq!(JitLinkCode::from_raw(row.raw), row.code);
            assert_eq!(row.code.raw(), row.raw);
            assert_eq!(row.code.name(), row.name);
            assert_eq!(
                nvJitLinkResult::ALL
                    .iter()
                    .find(|(_, v)| *v == row.raw)
                    .unwrap()
                    .0,
                row.name
            );
            assert!(!row.sticky && !row.code.is_sticky());
            assert_eq!(row.code.meaning(), row.meaning);
            assert!(
                row.meaning.chars().next().unwrap().is_lowercase() && !row.meaning.ends_with('.')
            );
        }
        assert_eq!(
            JitLinkCode::from_raw(nvJitLinkResult(77)),
            JitLinkCode::Other(77)
        );
        assert_eq!(
            JitLinkCode::PtxCompile.to_string(),
            "NVJITLINK_ERROR_PTX_COMPILE (4): compiling PTX failed (the error log says why)"
        );
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// The codes whose description in `cuda.h` 13.0 says the process is left
    /// in an inconsistent state (or the context unusable) and CUDA can only
    /// be used again after a relaunch.
    const EXPECTED_STICKY: &[CUresult] = &[
        CUresult::CUDA_ERROR_CONTAINED,
        CUresult::CUDA_ERROR_ILLEGAL_ADDRESS,
        CUresult::CUDA_ERROR_LAUNCH_TIMEOUT,
        CUresult::CUDA_ERROR_ASSERT,
        CUresult::CUDA_ERROR_HARDWARE_STACK_ERROR,
        CUresult::CUDA_ERROR_ILLEGAL_INSTRUCTION,
        CUresult::CUDA_ERROR_MISALIGNED_ADDRESS,
        CUresult::CUDA_ERROR_INVALID_ADDRESS_SPACE,
        CUresult::CUDA_ERROR_INVALID_PC,
        CUresult::CUDA_ERROR_LAUNCH_FAILED,
        CUresult::CUDA_ERROR_TENSOR_MEMORY_LEAK,
        CUresult::CUDA_ERROR_MPS_CLIENT_TERMINATED,
        CUresult::CUDA_ERROR_EXTERNAL_DEVICE,
    ];

    #[test]
    fn the_tables_have_one_row_per_header_error() {
        assert_eq!(DRIVER_TABLE.len(), 100);
        assert_eq!(NVRTC_TABLE.len(), 17);
        // The headers' enums are these rows plus the success value.
        assert_eq!(CUresult::ALL.len(), DRIVER_TABLE.len() + 1);
        assert_eq!(nvrtcResult::ALL.len(), NVRTC_TABLE.len() + 1);
    }

    #[test]
    fn every_driver_error_maps_to_its_variant_and_back() {
        for &(name, raw) in CUresult::ALL {
            if raw == CUresult::CUDA_SUCCESS {
                continue;
            }
            let code = DriverCode::from_raw(raw);
            assert!(!matches!(code, DriverCode::Other(_)), "{name} is unmapped");
            assert_eq!(code.name(), name);
            assert_eq!(code.raw(), raw, "{name}");
            assert_eq!(code.number(), raw.0, "{name}");
        }
    }

    #[test]
    fn every_nvrtc_error_maps_to_its_variant_and_back() {
        for &(name, raw) in nvrtcResult::ALL {
            if raw == nvrtcResult::NVRTC_SUCCESS {
                continue;
            }
            let code = NvrtcCode::from_raw(raw);
            assert!(!matches!(code, NvrtcCode::Other(_)), "{name} is unmapped");
            assert_eq!(code.name(), name);
            assert_eq!(code.raw(), raw, "{name}");
            assert_eq!(code.number(), raw.0, "{name}");
        }
    }

    #[test]
    fn unknown_codes_keep_their_number() {
        for number in [12345, -1, 35, 1000] {
            let code = DriverCode::from_raw(CUresult(number));
            assert_eq!(code, DriverCode::Other(number));
            assert_eq!(code.number(), number);
            assert_eq!(code.raw(), CUresult(number));
            assert_eq!(code.name(), "CUDA_ERROR_<unknown>");
            assert!(!code.is_sticky());
        }
        for number in [12345, -1, 18] {
            let code = NvrtcCode::from_raw(nvrtcResult(number));
            assert_eq!(code, NvrtcCode::Other(number));
            assert_eq!(code.number(), number);
            assert_eq!(code.raw(), nvrtcResult(number));
            assert_eq!(code.name(), "NVRTC_ERROR_<unknown>");
        }
    }

    /// What a driver newer than these bindings would answer: a name and a
    /// text for 1001, `CUDA_ERROR_INVALID_VALUE` for any other code.
    unsafe extern "C" fn newer_name(code: CUresult, out: *mut *const c_char) -> CUresult {
        if code != CUresult(1001) {
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        }
        // SAFETY: `ask_one` passes a valid out-pointer.
        unsafe { *out = c"CUDA_ERROR_SOMETHING_NEW".as_ptr() };
        CUresult::CUDA_SUCCESS
    }

    unsafe extern "C" fn newer_string(code: CUresult, out: *mut *const c_char) -> CUresult {
        if code != CUresult(1001) {
            return CUresult::CUDA_ERROR_INVALID_VALUE;
        }
        // SAFETY: `ask_one` passes a valid out-pointer.
        unsafe { *out = c"Something new  went wrong.".as_ptr() };
        CUresult::CUDA_SUCCESS
    }

    /// What the test stand-in libcuda (tests/stub-libcuda) answers: its
    /// generated no-op returns CUDA_ERROR_NOT_SUPPORTED and writes nothing.
    unsafe extern "C" fn stand_in(_: CUresult, _: *mut *const c_char) -> CUresult {
        CUresult::CUDA_ERROR_NOT_SUPPORTED
    }

    /// Success without a string: treated as no answer.
    unsafe extern "C" fn null_answer(_: CUresult, _: *mut *const c_char) -> CUresult {
        CUresult::CUDA_SUCCESS
    }

    #[test]
    fn the_driver_is_asked_for_its_name_and_text() {
        assert_eq!(
            ask_driver(newer_name, newer_string, CUresult(1001)),
            Some(CodeText {
                name: "CUDA_ERROR_SOMETHING_NEW".into(),
                text: "Something new  went wrong.".into(),
            })
        );
        assert_eq!(ask_driver(newer_name, newer_string, CUresult(1002)), None);
        assert_eq!(ask_driver(stand_in, stand_in, CUresult(1001)), None);
        assert_eq!(ask_driver(newer_name, stand_in, CUresult(1001)), None);
        assert_eq!(ask_driver(null_answer, null_answer, CUresult(1001)), None);
    }

    /// Issue 10: an unknown code shows the driver's name and text, and keeps
    /// its number; without them, the old message.
    #[test]
    fn an_unknown_code_displays_what_the_driver_says() {
        let asked = ask_driver(newer_name, newer_string, CUresult(1001));
        let code = DriverCode::from_raw(CUresult(1001));
        assert_eq!(code, DriverCode::Other(1001));
        assert_eq!(
            code.display_with(asked.as_ref()).to_string(),
            "CUDA_ERROR_SOMETHING_NEW (1001): something new went wrong \
             (as the loaded library names it; not in CUDA 13.0's cuda.h)"
        );
        assert_eq!(
            code.display_with(None).to_string(),
            "CUDA_ERROR_<unknown> (1001): a code CUDA 13.0's cuda.h does not define"
        );
        // The stand-in's answer degrades to the old message.
        let asked = ask_driver(stand_in, stand_in, CUresult(1001));
        assert_eq!(
            code.display_with(asked.as_ref()).to_string(),
            code.display_with(None).to_string()
        );
        // A known code always shows the table's text.
        let asked = CodeText {
            name: "X".into(),
            text: "y".into(),
        };
        assert_eq!(
            DriverCode::OutOfMemory
                .display_with(Some(&asked))
                .to_string(),
            "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"
        );
        assert_eq!(
            DriverCode::OutOfMemory.to_string(),
            "CUDA_ERROR_OUT_OF_MEMORY (2): out of memory"
        );
        assert_eq!(
            NvrtcCode::Other(99).to_string(),
            "NVRTC_ERROR_<unknown> (99): a code CUDA 13.0's nvrtc.h does not define"
        );
    }

    /// Without a loaded driver nothing is asked, and nothing is loaded.
    #[test]
    fn display_never_loads_the_driver() {
        if cuda_sys::loaded_driver().is_none() {
            assert_eq!(DriverCode::Other(1001).driver_text(), None);
            let _ = DriverCode::Other(1001).to_string();
            assert!(cuda_sys::loaded_driver().is_none());
        }
    }

    #[test]
    fn library_text_becomes_one_lowercase_line() {
        assert_eq!(one_line("Invalid argument."), "invalid argument");
        assert_eq!(one_line("  out of\n memory  "), "out of memory");
        assert_eq!(
            one_line("CUDA driver is a stub library"),
            "CUDA driver is a stub library"
        );
        assert_eq!(
            one_line("PTX JIT compiler library not found..."),
            "PTX JIT compiler library not found"
        );
        assert_eq!(one_line("X"), "x");
        assert_eq!(one_line(""), "");
    }

    #[test]
    fn success_is_no_variant() {
        assert_eq!(
            DriverCode::from_raw(CUresult::CUDA_SUCCESS),
            DriverCode::Other(0)
        );
        assert_eq!(
            NvrtcCode::from_raw(nvrtcResult::NVRTC_SUCCESS),
            NvrtcCode::Other(0)
        );
    }

    #[test]
    fn the_sticky_set_is_the_headers() {
        let sticky: HashSet<CUresult> = DRIVER_TABLE
            .iter()
            .filter(|row| row.code.is_sticky())
            .map(|row| row.raw)
            .collect();
        let expected: HashSet<CUresult> = EXPECTED_STICKY.iter().copied().collect();
        assert_eq!(expected.len(), EXPECTED_STICKY.len());
        assert_eq!(sticky, expected);
        assert!(NVRTC_TABLE.iter().all(|row| !row.sticky));
        assert!(NVRTC_TABLE.iter().all(|row| !row.code.is_sticky()));
        assert!(DRIVER_TABLE
            .iter()
            .all(|row| row.sticky == row.code.is_sticky()));
        // The codes DESIGN.md names, and the one measured on hardware.
        assert!(DriverCode::IllegalAddress.is_sticky());
        assert!(DriverCode::MisalignedAddress.is_sticky());
        assert!(DriverCode::LaunchFailed.is_sticky());
        assert!(DriverCode::InvalidAddressSpace.is_sticky());
        assert!(!DriverCode::OutOfMemory.is_sticky());
    }

    #[test]
    fn no_two_rows_share_a_variant_or_a_code() {
        let variants: HashSet<DriverCode> = DRIVER_TABLE.iter().map(|row| row.code).collect();
        let raws: HashSet<CUresult> = DRIVER_TABLE.iter().map(|row| row.raw).collect();
        let names: HashSet<&str> = DRIVER_TABLE.iter().map(|row| row.name).collect();
        assert_eq!(variants.len(), DRIVER_TABLE.len());
        assert_eq!(raws.len(), DRIVER_TABLE.len());
        assert_eq!(names.len(), DRIVER_TABLE.len());

        let variants: HashSet<NvrtcCode> = NVRTC_TABLE.iter().map(|row| row.code).collect();
        let raws: HashSet<nvrtcResult> = NVRTC_TABLE.iter().map(|row| row.raw).collect();
        let names: HashSet<&str> = NVRTC_TABLE.iter().map(|row| row.name).collect();
        assert_eq!(variants.len(), NVRTC_TABLE.len());
        assert_eq!(raws.len(), NVRTC_TABLE.len());
        assert_eq!(names.len(), NVRTC_TABLE.len());
    }

    /// Non-empty, one line, lowercase first letter, no trailing period.
    fn assert_meaning_shape(name: &str, meaning: &str) {
        let first = meaning.chars().next();
        assert!(
            first.is_some_and(|c| c.is_ascii_lowercase()),
            "{name}: {meaning:?}"
        );
        assert!(!meaning.ends_with('.'), "{name}: {meaning:?}");
        assert!(!meaning.contains('\n'), "{name}: {meaning:?}");
        assert_eq!(meaning.trim(), meaning, "{name}");
    }

    #[test]
    fn meanings_are_one_lowercase_line() {
        for row in DRIVER_TABLE {
            assert_eq!(row.code.meaning(), row.meaning, "{}", row.name);
            assert_meaning_shape(row.name, row.code.meaning());
        }
        for row in NVRTC_TABLE {
            assert_eq!(row.code.meaning(), row.meaning, "{}", row.name);
            assert_meaning_shape(row.name, row.code.meaning());
        }
        assert_meaning_shape("other", DriverCode::Other(1).meaning());
        assert_meaning_shape("other", NvrtcCode::Other(1).meaning());
        assert_eq!(DriverCode::OutOfMemory.meaning(), "out of memory");
    }
}
