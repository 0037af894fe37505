//! Graphs: node types and parameters, instantiation, executable-graph
//! update, conditional nodes and the kernel-node attribute names.

use super::*;

// ---------------------------------------------------------------------------
// Enums
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
// Constants (`#define`)
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Structs
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
