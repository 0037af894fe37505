//! Modules, libraries, functions and the JIT: function attributes, JIT
//! options and input types, library options.

use super::*;

// ---------------------------------------------------------------------------
// Enums
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
