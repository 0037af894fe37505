//! Devices: `CUdevice_attribute`, peer attributes, and the legacy
//! `CUdevprop`.

use super::*;

// ---------------------------------------------------------------------------
// Enums
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
// Constants (`#define`)
// ---------------------------------------------------------------------------

/// `CU_DEVICE_CPU`: the device ordinal that stands for the host CPU.
pub const CU_DEVICE_CPU: CUdevice = -1;
/// `CU_DEVICE_INVALID`: an invalid device ordinal.
pub const CU_DEVICE_INVALID: CUdevice = -2;

// ---------------------------------------------------------------------------
// Structs
// ---------------------------------------------------------------------------

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
