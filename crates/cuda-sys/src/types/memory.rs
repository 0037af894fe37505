//! Memory: memory types and attributes, unified-memory advice, virtual
//! memory management, memory pools and the copy descriptors.

use super::*;

// ---------------------------------------------------------------------------
// Enums
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
// Constants (`#define`)
// ---------------------------------------------------------------------------

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

/// `CU_MEM_CREATE_USAGE_TILE_POOL`: `CUmemAllocationProp` usage bit, the memory is a tile pool.
pub const CU_MEM_CREATE_USAGE_TILE_POOL: c_ushort = 0x1;
/// `CU_MEM_CREATE_USAGE_HW_DECOMPRESS`: `CUmemAllocationProp` usage bit, the memory feeds hardware decompression.
pub const CU_MEM_CREATE_USAGE_HW_DECOMPRESS: c_ushort = 0x2;
/// `CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS`: `CUmemPoolProps` usage bit, the pool feeds hardware decompression.
pub const CU_MEM_POOL_CREATE_USAGE_HW_DECOMPRESS: c_ushort = 0x2;

// ---------------------------------------------------------------------------
// Structs
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

zeroed_default!(
    CUmemAllocationProp,
    CUmemPoolProps,
    CUmemPoolPtrExportData,
    CUDA_MEMCPY2D,
    CUDA_MEMCPY3D,
    CUDA_MEMCPY3D_PEER,
);
