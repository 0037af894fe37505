//! Launches: launch attributes and their values, `CUlaunchConfig`, the
//! `extra`-array markers of `cuLaunchKernel`, and the occupancy callback.

use super::*;

// ---------------------------------------------------------------------------
// Enums
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
// Constants (`#define`)
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// Callback types
// ---------------------------------------------------------------------------

/// `CUoccupancyB2DSize`: maps a block size to the dynamic shared memory a
/// block of that size needs, for the occupancy calculator.
pub type CUoccupancyB2DSize = Option<unsafe extern "C" fn(blockSize: c_int) -> usize>;

// ---------------------------------------------------------------------------
// Structs
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

zeroed_default!(
    CUaccessPolicyWindow,
    CUlaunchAttributeValue_programmaticEvent,
    CUlaunchAttributeValue_launchCompletionEvent,
    CUlaunchAttributeValue_deviceUpdatableKernelNode,
    CUlaunchAttributeValue,
    CUlaunchAttribute,
    CUlaunchConfig,
    CUDA_LAUNCH_PARAMS,
);
