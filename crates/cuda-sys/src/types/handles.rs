//! Scalar typedefs (`CUdeviceptr`, `CUdevice`, ...), the opaque handles
//! (`CUcontext`, `CUstream`, ...) and the small handle structs of `cuda.h`
//! (`CUuuid`, the IPC and fabric handles).

use super::*;

// ---------------------------------------------------------------------------
// Typedefs and opaque handles
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
// Constants (`#define`)
// ---------------------------------------------------------------------------

/// `CU_IPC_HANDLE_SIZE`: bytes in an IPC handle.
pub const CU_IPC_HANDLE_SIZE: usize = 64;

// ---------------------------------------------------------------------------
// Structs
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

zeroed_default!(CUipcEventHandle, CUipcMemHandle, CUmemFabricHandle);
