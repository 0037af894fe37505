//! `types` is split into one file per section of `cuda.h`, but the public
//! paths stay flat: every item is `cuda_sys::NAME` and
//! `cuda_sys::types::NAME`, and the two name one item. One item (or more)
//! from each file, so a file whose re-export went missing fails to compile.

use std::any::TypeId;

/// Both paths of each type name one type.
macro_rules! same_type {
    ($($name:ident),* $(,)?) => {
        $(
            assert_eq!(
                TypeId::of::<cuda_sys::$name>(),
                TypeId::of::<cuda_sys::types::$name>(),
                stringify!($name)
            );
        )*
    };
}

#[test]
fn every_section_is_reachable_from_both_flat_paths() {
    same_type!(
        // handles
        CUdeviceptr,
        CUdevice,
        CUcontext,
        CUstream,
        CUuuid,
        CUipcMemHandle,
        // result
        CUresult,
        // device
        CUdevice_attribute,
        CUdevprop,
        // context
        CUlimit,
        CUctxCreateParams,
        // stream
        CUstream_flags,
        CUhostFn,
        // memory
        CUmemorytype,
        CUDA_MEMCPY3D,
        // module
        CUfunction_attribute,
        CUjit_option,
        // launch
        CUlaunchAttributeID,
        CUlaunchConfig,
        CUoccupancyB2DSize,
        // graph
        CUgraphNodeType,
        CUgraphNodeParams,
        // array
        CUarray_format,
        CUDA_RESOURCE_DESC,
    );
    // `#define` constants, spread over the files by section.
    assert_eq!(cuda_sys::CUDA_VERSION, cuda_sys::types::CUDA_VERSION);
    assert_eq!(cuda_sys::CU_IPC_HANDLE_SIZE, 64);
    assert_eq!(cuda_sys::types::CU_DEVICE_CPU, -1);
    assert_eq!(cuda_sys::CU_STREAM_LEGACY as usize, 1);
    assert_eq!(cuda_sys::CU_MEMHOSTALLOC_DEVICEMAP, 2);
    assert_eq!(cuda_sys::CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT, 2);
    assert_eq!(cuda_sys::CU_GRAPH_KERNEL_NODE_PORT_LAUNCH_ORDER, 2);
    assert_eq!(cuda_sys::CUDA_ARRAY3D_SPARSE, 0x40);
    assert_eq!(
        cuda_sys::CU_STREAM_ATTRIBUTE_PRIORITY,
        cuda_sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PRIORITY
    );
}
