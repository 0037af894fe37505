//! Contexts: flags, limits, cache and shared-memory configuration,
//! execution affinity and `cuCtxCreate_v4`'s parameters.

use super::*;

// ---------------------------------------------------------------------------
// Enums
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
// Structs
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

zeroed_default!(
    CUexecAffinityParam_param,
    CUexecAffinityParam,
    CUctxCigParam,
    CUctxCreateParams,
);
