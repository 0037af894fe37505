//! NCCL, written by hand from NCCL 2.28's `nccl.h`: `ncclResult_t`, the
//! element types and reduction operators, the communicator handle, the
//! unique id, the configuration struct, and the table of entry points.
//!
//! NCCL is optional: nothing in cuda-sys or cudakit needs it unless
//! collectives are used. It is opened at run time like libcuda (see
//! [`crate::loader`]: `CUDAKIT_LIBNCCL`, then the soname `libnccl.so.2`, then
//! the toolkit folders, then pip's `nvidia/nccl/lib`).
//!
//! NCCL's exported symbols carry no version suffixes: each table entry's
//! symbol is the header's function name. `cudaStream_t` is the runtime's
//! name for the driver's `CUstream` (the same `struct CUstream_st *`), so
//! streams made with the driver API are passed as they are.
//!
//! `cuMulticastCreate` (NVLink SHARP multicast) is deliberately not bound
//! anywhere in cuda-sys: on the shared multi-GPU machines multicast stays
//! off (`NCCL_NVLS_ENABLE=0`).

use std::ffi::{c_char, c_int, c_uint, c_void};

use crate::table::function_table;
use crate::types::c_enum;
use crate::CUstream;

c_enum! {
    /// `ncclResult_t`: the status every NCCL entry point returns.
    #[must_use]
    pub struct ncclResult_t(c_int) {
        /// The call succeeded.
        ncclSuccess = 0,
        /// A CUDA call made by NCCL failed.
        ncclUnhandledCudaError = 1,
        /// A system call failed (a socket, shared memory, ...).
        ncclSystemError = 2,
        /// An internal check of NCCL failed (a bug in NCCL, or memory corruption).
        ncclInternalError = 3,
        /// An argument was invalid (a null pointer, a rank out of range, ...).
        ncclInvalidArgument = 4,
        /// A call was made in a wrong order or state (a programming error).
        ncclInvalidUsage = 5,
        /// A remote process failed or the network broke (NCCL 2.9).
        ncclRemoteError = 6,
        /// A non-blocking operation is still in progress (NCCL 2.14).
        ncclInProgress = 7,
        /// An operation timed out (NCCL 2.28).
        ncclTimeout = 8,
    }
}

c_enum! {
    /// `ncclDataType_t`: the element types of collectives. The header's
    /// aliases (`ncclChar`, `ncclInt`, `ncclHalf`, `ncclFloat`, `ncclDouble`)
    /// name the same values and are left out.
    pub struct ncclDataType_t(c_int) {
        /// `int8_t`.
        ncclInt8 = 0,
        /// `uint8_t`.
        ncclUint8 = 1,
        /// `int32_t`.
        ncclInt32 = 2,
        /// `uint32_t`.
        ncclUint32 = 3,
        /// `int64_t`.
        ncclInt64 = 4,
        /// `uint64_t`.
        ncclUint64 = 5,
        /// IEEE half precision (`__half`).
        ncclFloat16 = 6,
        /// `float`.
        ncclFloat32 = 7,
        /// `double`.
        ncclFloat64 = 8,
        /// bfloat16 (`__nv_bfloat16`; NCCL 2.10 built with CUDA 11).
        ncclBfloat16 = 9,
        /// FP8 E4M3 (NCCL 2.24, sm_90 and newer).
        ncclFloat8e4m3 = 10,
        /// FP8 E5M2 (NCCL 2.24, sm_90 and newer).
        ncclFloat8e5m2 = 11,
    }
}

c_enum! {
    /// `ncclRedOp_t`: the built-in reduction operators (values from
    /// `ncclNumOps` on are operators made by `ncclRedOpCreatePreMulSum`).
    pub struct ncclRedOp_t(c_int) {
        /// Sum.
        ncclSum = 0,
        /// Product.
        ncclProd = 1,
        /// Maximum.
        ncclMax = 2,
        /// Minimum.
        ncclMin = 3,
        /// Average: the sum divided by the number of ranks (NCCL 2.10).
        ncclAvg = 4,
    }
}

/// The struct `ncclComm_t` points to (`struct ncclComm`); only ever handled
/// by pointer.
#[repr(C)]
#[derive(Debug)]
pub struct ncclComm {
    _private: [u8; 0],
}

/// `ncclComm_t`: an opaque handle to a communicator.
pub type ncclComm_t = *mut ncclComm;

/// `cudaStream_t`: the runtime's name for a stream; the same handle as the
/// driver's [`CUstream`].
pub type cudaStream_t = CUstream;

/// `NCCL_UNIQUE_ID_BYTES`.
pub const NCCL_UNIQUE_ID_BYTES: usize = 128;

/// `ncclUniqueId`: the opaque bootstrap id that rank 0 makes with
/// `ncclGetUniqueId` and every rank passes to `ncclCommInitRank`. Plain
/// bytes; it may travel over any channel.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct ncclUniqueId {
    /// The id's bytes (`char internal[NCCL_UNIQUE_ID_BYTES]`).
    pub internal: [c_char; NCCL_UNIQUE_ID_BYTES],
}

impl std::fmt::Debug for ncclUniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ncclUniqueId(..)")
    }
}

/// `NCCL_CONFIG_UNDEF_INT`: a configuration field left to NCCL.
pub const NCCL_CONFIG_UNDEF_INT: c_int = c_int::MIN;

/// `NCCL_API_MAGIC`: the magic number of configuration structs.
pub const NCCL_API_MAGIC: c_uint = 0xcafe_beef;

/// `NCCL_VERSION(X, Y, Z)` as the header computes it.
pub const fn nccl_version(major: c_int, minor: c_int, patch: c_int) -> c_int {
    if major <= 2 && minor <= 8 {
        major * 1000 + minor * 100 + patch
    } else {
        major * 10000 + minor * 100 + patch
    }
}

/// `ncclConfig_t` as NCCL 2.18 declares `struct ncclConfig_v21700` (2.17's
/// fields, then `splitShare`).
///
/// NCCL's configuration struct only ever grows at its end, and NCCL copies
/// `min(size, its own sizeof)` bytes over its own `NCCL_CONFIG_INITIALIZER`
/// (checking the magic, and using `version` to default fields older
/// layouts lack); so this prefix, declared as version 2.17, is understood
/// by every NCCL from 2.14 on (2.14 to 2.17 read only the fields they
/// have), and every field after it keeps NCCL's default. Fill it with [`ncclConfig_t::initializer`]
/// (`NCCL_CONFIG_INITIALIZER`).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct ncclConfig_t {
    /// `sizeof(ncclConfig_t)`; never set by hand.
    pub size: usize,
    /// [`NCCL_API_MAGIC`]; never set by hand.
    pub magic: c_uint,
    /// The NCCL version whose layout this is; never set by hand.
    pub version: c_uint,
    /// 1 (the default): calls block until done; 0: calls may return
    /// `ncclInProgress`, and `ncclCommGetAsyncError` tells when they finish.
    pub blocking: c_int,
    /// Thread-block cluster size (sm_90 and newer).
    pub cgaClusterSize: c_int,
    /// Minimum number of CTAs (channels).
    pub minCTAs: c_int,
    /// Maximum number of CTAs (channels).
    pub maxCTAs: c_int,
    /// The network module to use, by name (NULL: NCCL chooses).
    pub netName: *const c_char,
    /// Whether split communicators share the parent's resources.
    pub splitShare: c_int,
}

impl ncclConfig_t {
    /// `NCCL_CONFIG_INITIALIZER` for this layout: every customisable field
    /// undefined (NCCL's defaults).
    pub const fn initializer() -> ncclConfig_t {
        ncclConfig_t {
            size: std::mem::size_of::<ncclConfig_t>(),
            magic: NCCL_API_MAGIC,
            version: nccl_version(2, 17, 0) as c_uint,
            blocking: NCCL_CONFIG_UNDEF_INT,
            cgaClusterSize: NCCL_CONFIG_UNDEF_INT,
            minCTAs: NCCL_CONFIG_UNDEF_INT,
            maxCTAs: NCCL_CONFIG_UNDEF_INT,
            netName: std::ptr::null(),
            splitShare: NCCL_CONFIG_UNDEF_INT,
        }
    }
}

function_table! {
    /// Entry points of libnccl. Obtain the process's table with
    /// [`nccl()`](crate::nccl()), or open a specific library with
    /// [`Nccl::load_from`].
    ///
    /// Required entries are those every NCCL from 2.7 (point-to-point
    /// `ncclSend`/`ncclRecv`) exports. The non-blocking configuration,
    /// finalisation and error-message functions arrived in 2.13 and 2.14
    /// and are optional.
    pub struct Nccl;
    library = "libnccl";
    header = "nccl.h";
    search = Nccl;
    required {
        /// Writes the library's `NCCL_VERSION_CODE`.
        ncclGetVersion = "ncclGetVersion": fn(version: *mut c_int) -> ncclResult_t;
        /// Makes a bootstrap id for `ncclCommInitRank` (rank 0 calls it once).
        ncclGetUniqueId = "ncclGetUniqueId": fn(uniqueId: *mut ncclUniqueId) -> ncclResult_t;
        /// Creates the communicator of one rank; blocks until all `nranks` joined.
        ncclCommInitRank = "ncclCommInitRank": fn(
            comm: *mut ncclComm_t,
            nranks: c_int,
            commId: ncclUniqueId,
            rank: c_int,
        ) -> ncclResult_t;
        /// Creates `ndev` communicators of one process, one per device of
        /// `devlist` (the first `ndev` devices when NULL).
        ncclCommInitAll = "ncclCommInitAll": fn(comm: *mut ncclComm_t, ndev: c_int, devlist: *const c_int) -> ncclResult_t;
        /// Frees a communicator's local resources.
        ncclCommDestroy = "ncclCommDestroy": fn(comm: ncclComm_t) -> ncclResult_t;
        /// Frees a communicator and aborts its operations running on the device.
        ncclCommAbort = "ncclCommAbort": fn(comm: ncclComm_t) -> ncclResult_t;
        /// A static string for a result code.
        ncclGetErrorString = "ncclGetErrorString": fn(result: ncclResult_t) -> *const c_char;
        /// Writes the communicator's asynchronous error (or `ncclInProgress`
        /// while a non-blocking operation runs).
        ncclCommGetAsyncError = "ncclCommGetAsyncError": fn(comm: ncclComm_t, asyncError: *mut ncclResult_t) -> ncclResult_t;
        /// Writes the number of ranks.
        ncclCommCount = "ncclCommCount": fn(comm: ncclComm_t, count: *mut c_int) -> ncclResult_t;
        /// Writes the CUDA device of the communicator.
        ncclCommCuDevice = "ncclCommCuDevice": fn(comm: ncclComm_t, device: *mut c_int) -> ncclResult_t;
        /// Writes the communicator's rank.
        ncclCommUserRank = "ncclCommUserRank": fn(comm: ncclComm_t, rank: *mut c_int) -> ncclResult_t;
        /// Reduces `count` elements of every rank's `sendbuff` into `recvbuff` of rank `root`.
        ncclReduce = "ncclReduce": fn(
            sendbuff: *const c_void,
            recvbuff: *mut c_void,
            count: usize,
            datatype: ncclDataType_t,
            op: ncclRedOp_t,
            root: c_int,
            comm: ncclComm_t,
            stream: cudaStream_t,
        ) -> ncclResult_t;
        /// Copies `count` elements of rank `root`'s `sendbuff` into every rank's `recvbuff`.
        ncclBroadcast = "ncclBroadcast": fn(
            sendbuff: *const c_void,
            recvbuff: *mut c_void,
            count: usize,
            datatype: ncclDataType_t,
            root: c_int,
            comm: ncclComm_t,
            stream: cudaStream_t,
        ) -> ncclResult_t;
        /// Reduces `count` elements of every rank's `sendbuff` into every rank's `recvbuff`.
        ncclAllReduce = "ncclAllReduce": fn(
            sendbuff: *const c_void,
            recvbuff: *mut c_void,
            count: usize,
            datatype: ncclDataType_t,
            op: ncclRedOp_t,
            comm: ncclComm_t,
            stream: cudaStream_t,
        ) -> ncclResult_t;
        /// Reduces `nranks * recvcount` elements and leaves block `i` on rank `i`.
        ncclReduceScatter = "ncclReduceScatter": fn(
            sendbuff: *const c_void,
            recvbuff: *mut c_void,
            recvcount: usize,
            datatype: ncclDataType_t,
            op: ncclRedOp_t,
            comm: ncclComm_t,
            stream: cudaStream_t,
        ) -> ncclResult_t;
        /// Gathers `sendcount` elements of every rank, rank `i`'s at offset `i * sendcount`.
        ncclAllGather = "ncclAllGather": fn(
            sendbuff: *const c_void,
            recvbuff: *mut c_void,
            sendcount: usize,
            datatype: ncclDataType_t,
            comm: ncclComm_t,
            stream: cudaStream_t,
        ) -> ncclResult_t;
        /// Sends `count` elements to rank `peer` (NCCL 2.7).
        ncclSend = "ncclSend": fn(
            sendbuff: *const c_void,
            count: usize,
            datatype: ncclDataType_t,
            peer: c_int,
            comm: ncclComm_t,
            stream: cudaStream_t,
        ) -> ncclResult_t;
        /// Receives `count` elements from rank `peer` (NCCL 2.7).
        ncclRecv = "ncclRecv": fn(
            recvbuff: *mut c_void,
            count: usize,
            datatype: ncclDataType_t,
            peer: c_int,
            comm: ncclComm_t,
            stream: cudaStream_t,
        ) -> ncclResult_t;
        /// Starts a group: calls until `ncclGroupEnd` are queued and launched together.
        ncclGroupStart = "ncclGroupStart": fn() -> ncclResult_t;
        /// Ends a group and launches its calls.
        ncclGroupEnd = "ncclGroupEnd": fn() -> ncclResult_t;
    }
    optional {
        /// Like `ncclCommInitRank`, with a configuration (NCCL 2.14):
        /// `blocking = 0` makes it return at once.
        ncclCommInitRankConfig = "ncclCommInitRankConfig": fn(
            comm: *mut ncclComm_t,
            nranks: c_int,
            commId: ncclUniqueId,
            rank: c_int,
            config: *mut ncclConfig_t,
        ) -> ncclResult_t;
        /// Flushes a communicator's operations before `ncclCommDestroy` (NCCL 2.14).
        ncclCommFinalize = "ncclCommFinalize": fn(comm: ncclComm_t) -> ncclResult_t;
        /// A message about the last error of the communicator (NCCL 2.13).
        ncclGetLastError = "ncclGetLastError": fn(comm: ncclComm_t) -> *const c_char;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ncclResult_t` as NCCL 2.28's `nccl.h` declares it (less
    /// `ncclNumResults`, a count).
    const HEADER_RESULT: &[(&str, c_int)] = &[
        ("ncclSuccess", 0),
        ("ncclUnhandledCudaError", 1),
        ("ncclSystemError", 2),
        ("ncclInternalError", 3),
        ("ncclInvalidArgument", 4),
        ("ncclInvalidUsage", 5),
        ("ncclRemoteError", 6),
        ("ncclInProgress", 7),
        ("ncclTimeout", 8),
    ];

    const HEADER_TYPES: &[(&str, c_int)] = &[
        ("ncclInt8", 0),
        ("ncclUint8", 1),
        ("ncclInt32", 2),
        ("ncclUint32", 3),
        ("ncclInt64", 4),
        ("ncclUint64", 5),
        ("ncclFloat16", 6),
        ("ncclFloat32", 7),
        ("ncclFloat64", 8),
        ("ncclBfloat16", 9),
        ("ncclFloat8e4m3", 10),
        ("ncclFloat8e5m2", 11),
    ];

    fn same<T: Copy + PartialEq + std::fmt::Debug>(
        all: &[(&str, T)],
        header: &[(&str, c_int)],
        value: impl Fn(T) -> c_int,
    ) {
        assert_eq!(all.len(), header.len());
        for ((name, v), (hname, hv)) in all.iter().zip(header) {
            assert_eq!(name, hname);
            assert_eq!(value(*v), *hv, "{name}");
        }
    }

    #[test]
    fn codes_match_the_header() {
        same(ncclResult_t::ALL, HEADER_RESULT, |v| v.0);
        same(ncclDataType_t::ALL, HEADER_TYPES, |v| v.0);
        let ops: Vec<c_int> = ncclRedOp_t::ALL.iter().map(|(_, v)| v.0).collect();
        assert_eq!(ops, [0, 1, 2, 3, 4]);
        assert_eq!(ncclResult_t(99).name(), None);
        assert_eq!(format!("{:?}", ncclResult_t(99)), "ncclResult_t(99)");
    }

    #[test]
    fn the_config_is_the_2_17_prefix() {
        // size_t, 2 x unsigned, 4 x int, a pointer, an int (then padding).
        assert_eq!(std::mem::size_of::<ncclConfig_t>(), 48);
        assert_eq!(std::mem::offset_of!(ncclConfig_t, blocking), 16);
        assert_eq!(std::mem::offset_of!(ncclConfig_t, netName), 32);
        assert_eq!(std::mem::offset_of!(ncclConfig_t, splitShare), 40);
        let c = ncclConfig_t::initializer();
        assert_eq!(c.size, 48);
        assert_eq!(c.magic, 0xcafe_beef);
        assert_eq!(c.version, 21700);
        assert_eq!(c.blocking, c_int::MIN);
        assert_eq!(nccl_version(2, 8, 4), 2804);
        assert_eq!(nccl_version(2, 28, 3), 22803);
        assert_eq!(std::mem::size_of::<ncclUniqueId>(), 128);
    }

    #[test]
    fn the_table_never_binds_multicast() {
        let all: Vec<&str> = Nccl::REQUIRED_SYMBOLS
            .iter()
            .chain(Nccl::OPTIONAL_SYMBOLS)
            .copied()
            .collect();
        assert!(all.iter().all(|s| !s.contains("Multicast")));
        assert!(all.contains(&"ncclAllReduce"));
        assert!(all.contains(&"ncclCommInitRankConfig"));
    }
}

#[cfg(test)]
mod search_tests {
    use std::path::Path;

    use crate::loader::{candidates, Surroundings, Which};

    fn list(vars: &[(&str, &str)], folders: &[(&str, &[&str])]) -> Vec<String> {
        let var = |name: &str| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        };
        let entries = |folder: &Path| {
            folders
                .iter()
                .find(|(f, _)| Path::new(f) == folder)
                .map(|(_, e)| e.iter().map(|s| s.to_string()).collect())
                .unwrap_or_default()
        };
        candidates(
            Which::Nccl,
            &Surroundings {
                var: &var,
                entries: &entries,
                exe: None,
                build_workspace: None,
                trusted: &|_: &std::path::Path| true,
            },
        )
    }

    #[test]
    fn the_override_is_the_only_candidate() {
        assert_eq!(
            list(&[("CUDAKIT_LIBNCCL", "/x/libnccl.so.2")], &[]),
            ["/x/libnccl.so.2"]
        );
    }

    #[test]
    fn the_soname_comes_first_then_toolkits_then_the_wheel() {
        let l = list(&[("PYTHONPATH", "/py")], &[("/py", &["nvidia"])]);
        assert_eq!(l[0], "libnccl.so.2");
        assert!(l.contains(&"/usr/local/cuda/lib64/libnccl.so.2".to_owned()));
        assert_eq!(l.last().unwrap(), "/py/nvidia/nccl/lib/libnccl.so.2");
    }
}
