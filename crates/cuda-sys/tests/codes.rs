//! Table tests of the enum newtypes against the numbers in CUDA 13.0's
//! `cuda.h`.
//!
//! `CUDA_RESULT_13_0` was extracted from the header's `cudaError_enum` by a
//! script (every `CUDA_* = N` line between `typedef enum cudaError_enum {`
//! and `} CUresult;`), not typed from memory, so it checks the hand-written
//! bindings independently.

use std::collections::HashSet;

use cuda_sys::{
    CUdevice_attribute, CUfunction_attribute, CUlaunchAttributeID, CUmemLocationType, CUresult,
};

/// Every (name, value) pair of `cudaError_enum` in CUDA 13.0's `cuda.h`, in
/// header order.
const CUDA_RESULT_13_0: &[(&str, i32)] = &[
    ("CUDA_SUCCESS", 0),
    ("CUDA_ERROR_INVALID_VALUE", 1),
    ("CUDA_ERROR_OUT_OF_MEMORY", 2),
    ("CUDA_ERROR_NOT_INITIALIZED", 3),
    ("CUDA_ERROR_DEINITIALIZED", 4),
    ("CUDA_ERROR_PROFILER_DISABLED", 5),
    ("CUDA_ERROR_PROFILER_NOT_INITIALIZED", 6),
    ("CUDA_ERROR_PROFILER_ALREADY_STARTED", 7),
    ("CUDA_ERROR_PROFILER_ALREADY_STOPPED", 8),
    ("CUDA_ERROR_STUB_LIBRARY", 34),
    ("CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", 36),
    ("CUDA_ERROR_DEVICE_UNAVAILABLE", 46),
    ("CUDA_ERROR_NO_DEVICE", 100),
    ("CUDA_ERROR_INVALID_DEVICE", 101),
    ("CUDA_ERROR_DEVICE_NOT_LICENSED", 102),
    ("CUDA_ERROR_INVALID_IMAGE", 200),
    ("CUDA_ERROR_INVALID_CONTEXT", 201),
    ("CUDA_ERROR_CONTEXT_ALREADY_CURRENT", 202),
    ("CUDA_ERROR_MAP_FAILED", 205),
    ("CUDA_ERROR_UNMAP_FAILED", 206),
    ("CUDA_ERROR_ARRAY_IS_MAPPED", 207),
    ("CUDA_ERROR_ALREADY_MAPPED", 208),
    ("CUDA_ERROR_NO_BINARY_FOR_GPU", 209),
    ("CUDA_ERROR_ALREADY_ACQUIRED", 210),
    ("CUDA_ERROR_NOT_MAPPED", 211),
    ("CUDA_ERROR_NOT_MAPPED_AS_ARRAY", 212),
    ("CUDA_ERROR_NOT_MAPPED_AS_POINTER", 213),
    ("CUDA_ERROR_ECC_UNCORRECTABLE", 214),
    ("CUDA_ERROR_UNSUPPORTED_LIMIT", 215),
    ("CUDA_ERROR_CONTEXT_ALREADY_IN_USE", 216),
    ("CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", 217),
    ("CUDA_ERROR_INVALID_PTX", 218),
    ("CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", 219),
    ("CUDA_ERROR_NVLINK_UNCORRECTABLE", 220),
    ("CUDA_ERROR_JIT_COMPILER_NOT_FOUND", 221),
    ("CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 222),
    ("CUDA_ERROR_JIT_COMPILATION_DISABLED", 223),
    ("CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", 224),
    ("CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", 225),
    ("CUDA_ERROR_CONTAINED", 226),
    ("CUDA_ERROR_INVALID_SOURCE", 300),
    ("CUDA_ERROR_FILE_NOT_FOUND", 301),
    ("CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", 302),
    ("CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", 303),
    ("CUDA_ERROR_OPERATING_SYSTEM", 304),
    ("CUDA_ERROR_INVALID_HANDLE", 400),
    ("CUDA_ERROR_ILLEGAL_STATE", 401),
    ("CUDA_ERROR_LOSSY_QUERY", 402),
    ("CUDA_ERROR_NOT_FOUND", 500),
    ("CUDA_ERROR_NOT_READY", 600),
    ("CUDA_ERROR_ILLEGAL_ADDRESS", 700),
    ("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 701),
    ("CUDA_ERROR_LAUNCH_TIMEOUT", 702),
    ("CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", 703),
    ("CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", 704),
    ("CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", 705),
    ("CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", 708),
    ("CUDA_ERROR_CONTEXT_IS_DESTROYED", 709),
    ("CUDA_ERROR_ASSERT", 710),
    ("CUDA_ERROR_TOO_MANY_PEERS", 711),
    ("CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", 712),
    ("CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", 713),
    ("CUDA_ERROR_HARDWARE_STACK_ERROR", 714),
    ("CUDA_ERROR_ILLEGAL_INSTRUCTION", 715),
    ("CUDA_ERROR_MISALIGNED_ADDRESS", 716),
    ("CUDA_ERROR_INVALID_ADDRESS_SPACE", 717),
    ("CUDA_ERROR_INVALID_PC", 718),
    ("CUDA_ERROR_LAUNCH_FAILED", 719),
    ("CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", 720),
    ("CUDA_ERROR_TENSOR_MEMORY_LEAK", 721),
    ("CUDA_ERROR_NOT_PERMITTED", 800),
    ("CUDA_ERROR_NOT_SUPPORTED", 801),
    ("CUDA_ERROR_SYSTEM_NOT_READY", 802),
    ("CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", 803),
    ("CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", 804),
    ("CUDA_ERROR_MPS_CONNECTION_FAILED", 805),
    ("CUDA_ERROR_MPS_RPC_FAILURE", 806),
    ("CUDA_ERROR_MPS_SERVER_NOT_READY", 807),
    ("CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", 808),
    ("CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED", 809),
    ("CUDA_ERROR_MPS_CLIENT_TERMINATED", 810),
    ("CUDA_ERROR_CDP_NOT_SUPPORTED", 811),
    ("CUDA_ERROR_CDP_VERSION_MISMATCH", 812),
    ("CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", 900),
    ("CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", 901),
    ("CUDA_ERROR_STREAM_CAPTURE_MERGE", 902),
    ("CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", 903),
    ("CUDA_ERROR_STREAM_CAPTURE_UNJOINED", 904),
    ("CUDA_ERROR_STREAM_CAPTURE_ISOLATION", 905),
    ("CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", 906),
    ("CUDA_ERROR_CAPTURED_EVENT", 907),
    ("CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", 908),
    ("CUDA_ERROR_TIMEOUT", 909),
    ("CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", 910),
    ("CUDA_ERROR_EXTERNAL_DEVICE", 911),
    ("CUDA_ERROR_INVALID_CLUSTER_SIZE", 912),
    ("CUDA_ERROR_FUNCTION_NOT_LOADED", 913),
    ("CUDA_ERROR_INVALID_RESOURCE_TYPE", 914),
    ("CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION", 915),
    ("CUDA_ERROR_KEY_ROTATION", 916),
    ("CUDA_ERROR_UNKNOWN", 999),
];

#[test]
fn cuda_result_has_every_code_of_the_header() {
    assert_eq!(CUDA_RESULT_13_0.len(), 101, "the 13.0 header has 101 codes");
    assert_eq!(CUresult::ALL.len(), 101);
    for &(name, value) in CUDA_RESULT_13_0 {
        let found = CUresult::ALL.iter().find(|(n, _)| *n == name);
        let (_, code) = found.unwrap_or_else(|| panic!("{name} is missing from CUresult::ALL"));
        assert_eq!(code.0, value, "{name} has the wrong value");
        assert_eq!(CUresult(value).name(), Some(name), "name() of {value}");
    }
}

#[test]
fn cuda_result_follows_header_order() {
    let ours: Vec<(&str, i32)> = CUresult::ALL.iter().map(|&(n, v)| (n, v.0)).collect();
    assert_eq!(ours, CUDA_RESULT_13_0);
}

#[test]
fn cuda_result_names_and_values_are_unique() {
    let names: HashSet<&str> = CUresult::ALL.iter().map(|(n, _)| *n).collect();
    let values: HashSet<i32> = CUresult::ALL.iter().map(|(_, v)| v.0).collect();
    assert_eq!(names.len(), CUresult::ALL.len(), "duplicate name");
    assert_eq!(values.len(), CUresult::ALL.len(), "duplicate value");
}

#[test]
fn cuda_result_constants_and_debug() {
    assert_eq!(CUresult::CUDA_SUCCESS, CUresult(0));
    assert_eq!(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS.0, 700);
    assert_eq!(CUresult::CUDA_ERROR_INVALID_ADDRESS_SPACE.0, 717);
    assert_eq!(CUresult::CUDA_ERROR_UNKNOWN.0, 999);
    assert_eq!(CUresult::default(), CUresult::CUDA_SUCCESS);
    assert_eq!(
        format!("{:?}", CUresult(700)),
        "CUDA_ERROR_ILLEGAL_ADDRESS(700)"
    );
    // A code from a newer driver keeps its number and has no name.
    assert_eq!(CUresult(12345).name(), None);
    assert_eq!(format!("{:?}", CUresult(12345)), "CUresult(12345)");
}

#[test]
fn device_attributes_match_the_header() {
    let expected: &[(&str, i32)] = &[
        ("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK", 1),
        ("CU_DEVICE_ATTRIBUTE_WARP_SIZE", 10),
        ("CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT", 16),
        ("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR", 75),
        ("CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR", 76),
        ("CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY", 83),
        ("CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS", 89),
        ("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN", 97),
        (
            "CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED",
            147,
        ),
        ("CU_DEVICE_ATTRIBUTE_MAX", 148),
    ];
    for &(name, value) in expected {
        let found = CUdevice_attribute::ALL.iter().find(|(n, _)| *n == name);
        let (_, attr) = found.unwrap_or_else(|| panic!("{name} is missing"));
        assert_eq!(attr.0, value, "{name}");
    }
    assert_eq!(
        CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR.0,
        75
    );
    // 147 attributes, 6 deprecated aliases sharing a value, and the MAX marker.
    assert_eq!(CUdevice_attribute::ALL.len(), 154);
    // An alias reports the first name in header order (here the current one).
    assert_eq!(
        CUdevice_attribute::CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK.name(),
        Some("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK")
    );
}

#[test]
fn other_enums_match_the_header() {
    assert_eq!(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS.0, 4);
    assert_eq!(
        CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES.0,
        8
    );
    assert_eq!(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX.0, 16);
    assert_eq!(CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_COOPERATIVE.0, 2);
    assert_eq!(
        CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION.0,
        4
    );
    assert_eq!(
        CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_NVLINK_UTIL_CENTRIC_SCHEDULING.0,
        16
    );
    assert_eq!(
        CUlaunchAttributeID(15).name(),
        None,
        "15 is unassigned in 13.0"
    );
    assert_eq!(CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE.0, 1);
    assert_eq!(
        CUmemLocationType::CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT.0,
        4
    );
}
