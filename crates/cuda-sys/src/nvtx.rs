//! NVTX (the NVIDIA Tools Extension), written by hand from NVTX v3's
//! `nvToolsExt.h` and `nvtxDetail/nvtxTypes.h`.
//!
//! NVTX v3 is header-only: every client carries its own copy of the
//! "injection" protocol, and a tool attaches by naming a shared library in
//! `NVTX_INJECTION64_PATH`. The client loads that library, looks up its
//! export `InitializeInjectionNvtx2` and calls it with a function
//! ([`NvtxGetExportTableFunc_t`]) through which the tool asks for the
//! client's export tables. The callbacks table ([`NVTX_ETID_CALLBACKS`])
//! hands out, per module (core, core2, CUDA, ...), an array of pointers to
//! the client's function-pointer slots, indexed by callback id; the tool
//! writes its implementations into the slots it supports. Slots it leaves
//! null are no-ops. A return of 0 from the initializer means the tool
//! declined, and everything stays a no-op.
//!
//! This module holds the types and constants of that protocol, the client
//! side of it ([`Injection`]: the slots and the two export tables, nothing
//! more), and [`Nvtx`], the handful of entry points cudakit calls, filled
//! either from an injection or from an `libnvToolsExt.so.1` (NVTX v2, which
//! runs the same protocol inside itself). No policy: when to load, and what
//! to emit, is the safe layer's business.

#![allow(non_upper_case_globals)]

use std::ffi::{c_char, c_int, c_uint, c_void, CStr};
use std::path::Path;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicPtr, Ordering};

use libloading::Library;

use crate::table::function_at;

/// `NVTX_VERSION`: the API version this client implements.
pub const NVTX_VERSION: u16 = 3;

/// `nvtxColorType_t::NVTX_COLOR_UNKNOWN`.
pub const NVTX_COLOR_UNKNOWN: i32 = 0;
/// `nvtxColorType_t::NVTX_COLOR_ARGB`: `color` is 0xAARRGGBB.
pub const NVTX_COLOR_ARGB: i32 = 1;
/// `nvtxMessageType_t::NVTX_MESSAGE_UNKNOWN`.
pub const NVTX_MESSAGE_UNKNOWN: i32 = 0;
/// `nvtxMessageType_t::NVTX_MESSAGE_TYPE_ASCII`: `message.ascii` is a NUL-terminated string.
pub const NVTX_MESSAGE_TYPE_ASCII: i32 = 1;
/// `nvtxPayloadType_t::NVTX_PAYLOAD_UNKNOWN`.
pub const NVTX_PAYLOAD_UNKNOWN: i32 = 0;

/// `NvtxCallbackModule::NVTX_CB_MODULE_CORE`.
pub const NVTX_CB_MODULE_CORE: c_int = 1;
/// `NvtxCallbackModule::NVTX_CB_MODULE_CUDA`.
pub const NVTX_CB_MODULE_CUDA: c_int = 2;
/// `NvtxCallbackModule::NVTX_CB_MODULE_OPENCL`.
pub const NVTX_CB_MODULE_OPENCL: c_int = 3;
/// `NvtxCallbackModule::NVTX_CB_MODULE_CUDART`.
pub const NVTX_CB_MODULE_CUDART: c_int = 4;
/// `NvtxCallbackModule::NVTX_CB_MODULE_CORE2`.
pub const NVTX_CB_MODULE_CORE2: c_int = 5;
/// `NvtxCallbackModule::NVTX_CB_MODULE_SYNC`.
pub const NVTX_CB_MODULE_SYNC: c_int = 6;

/// `NVTX_CBID_CORE_MarkEx`.
pub const NVTX_CBID_CORE_MarkEx: usize = 1;
/// `NVTX_CBID_CORE_MarkA`.
pub const NVTX_CBID_CORE_MarkA: usize = 2;
/// `NVTX_CBID_CORE_RangePushEx`.
pub const NVTX_CBID_CORE_RangePushEx: usize = 8;
/// `NVTX_CBID_CORE_RangePushA`.
pub const NVTX_CBID_CORE_RangePushA: usize = 9;
/// `NVTX_CBID_CORE_RangePop`.
pub const NVTX_CBID_CORE_RangePop: usize = 11;
/// `NVTX_CBID_CORE_SIZE`: one past the last core callback id.
pub const NVTX_CBID_CORE_SIZE: usize = 16;
/// `NVTX_CBID_CORE2_DomainMarkEx`.
pub const NVTX_CBID_CORE2_DomainMarkEx: usize = 1;
/// `NVTX_CBID_CORE2_DomainRangePushEx`.
pub const NVTX_CBID_CORE2_DomainRangePushEx: usize = 4;
/// `NVTX_CBID_CORE2_DomainRangePop`.
pub const NVTX_CBID_CORE2_DomainRangePop: usize = 5;
/// `NVTX_CBID_CORE2_DomainCreateA`.
pub const NVTX_CBID_CORE2_DomainCreateA: usize = 12;
/// `NVTX_CBID_CORE2_DomainDestroy`.
pub const NVTX_CBID_CORE2_DomainDestroy: usize = 14;
/// `NVTX_CBID_CORE2_SIZE`.
pub const NVTX_CBID_CORE2_SIZE: usize = 16;
/// `NVTX_CBID_CUDA_SIZE`.
pub const NVTX_CBID_CUDA_SIZE: usize = 9;
/// `NVTX_CBID_OPENCL_SIZE`.
pub const NVTX_CBID_OPENCL_SIZE: usize = 15;
/// `NVTX_CBID_CUDART_SIZE`.
pub const NVTX_CBID_CUDART_SIZE: usize = 7;
/// `NVTX_CBID_SYNC_SIZE`.
pub const NVTX_CBID_SYNC_SIZE: usize = 7;

/// `NvtxExportTableID::NVTX_ETID_CALLBACKS`.
pub const NVTX_ETID_CALLBACKS: u32 = 1;
/// `NvtxExportTableID::NVTX_ETID_VERSIONINFO`.
pub const NVTX_ETID_VERSIONINFO: u32 = 3;

/// The opaque `nvtxDomainRegistration_st`.
#[repr(C)]
#[derive(Debug)]
pub struct nvtxDomainRegistration_st {
    _private: [u8; 0],
}
/// `nvtxDomainHandle_t`.
pub type nvtxDomainHandle_t = *mut nvtxDomainRegistration_st;

/// `nvtxEventAttributes_t` (`nvtxEventAttributes_v2`): `payload` and
/// `message` are unions in C; cudakit uses only the ASCII message and no
/// payload, so both are plain 8-byte fields here.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct nvtxEventAttributes_t {
    /// `NVTX_VERSION`.
    pub version: u16,
    /// `NVTX_EVENT_ATTRIB_STRUCT_SIZE`: the size of this struct.
    pub size: u16,
    /// Category (0: none).
    pub category: u32,
    /// An `nvtxColorType_t`.
    pub colorType: i32,
    /// The colour, as `colorType` says.
    pub color: u32,
    /// An `nvtxPayloadType_t`.
    pub payloadType: i32,
    /// Reserved, 0.
    pub reserved0: i32,
    /// The payload union (`ullValue`, ...).
    pub payload: u64,
    /// An `nvtxMessageType_t`.
    pub messageType: i32,
    /// The message union; for `NVTX_MESSAGE_TYPE_ASCII`, a `const char*`.
    pub message: *const c_char,
}

/// `NVTX_EVENT_ATTRIB_STRUCT_SIZE`.
pub const NVTX_EVENT_ATTRIB_STRUCT_SIZE: u16 = std::mem::size_of::<nvtxEventAttributes_t>() as u16;

const _: () = assert!(std::mem::size_of::<nvtxEventAttributes_t>() == 48);
const _: () = assert!(std::mem::offset_of!(nvtxEventAttributes_t, payload) == 24);
const _: () = assert!(std::mem::offset_of!(nvtxEventAttributes_t, message) == 40);

/// `NvtxFunctionPointer`: a slot's content, cast to its real type by the caller.
pub type NvtxFunctionPointer = *mut c_void;
/// `NvtxFunctionTable`: an array of pointers to slots.
pub type NvtxFunctionTable = *mut *mut NvtxFunctionPointer;
/// `NvtxGetExportTableFunc_t`.
pub type NvtxGetExportTableFunc_t = unsafe extern "C" fn(exportTableId: u32) -> *const c_void;
/// `NvtxInitializeInjectionNvtxFunc_t`: the tool's `InitializeInjectionNvtx2`.
pub type NvtxInitializeInjectionNvtxFunc_t =
    unsafe extern "C" fn(getExportTable: NvtxGetExportTableFunc_t) -> c_int;

/// `NvtxExportTableCallbacks`.
#[repr(C)]
#[derive(Debug)]
pub struct NvtxExportTableCallbacks {
    /// `sizeof(NvtxExportTableCallbacks)`.
    pub struct_size: usize,
    /// Returns the slot array of `module` and its size (the module's
    /// `NVTX_CBID_*_SIZE`); 0 for an unknown module.
    pub GetModuleFunctionTable: unsafe extern "C" fn(
        module: c_int,
        out_table: *mut NvtxFunctionTable,
        out_size: *mut c_uint,
    ) -> c_int,
}

/// `NvtxExportTableVersionInfo`.
#[repr(C)]
#[derive(Debug)]
pub struct NvtxExportTableVersionInfo {
    /// `sizeof(NvtxExportTableVersionInfo)`.
    pub struct_size: usize,
    /// The client's `NVTX_VERSION`.
    pub version: u32,
    /// Reserved.
    pub reserved0: u32,
    /// Set by tools as they attach; ignored by clients today.
    pub SetInjectionNvtxVersion: unsafe extern "C" fn(version: u32),
}

/// `nvtxRangePushEx`.
pub type nvtxRangePushEx_t =
    unsafe extern "C" fn(eventAttrib: *const nvtxEventAttributes_t) -> c_int;
/// `nvtxRangePop`.
pub type nvtxRangePop_t = unsafe extern "C" fn() -> c_int;
/// `nvtxMarkEx`.
pub type nvtxMarkEx_t = unsafe extern "C" fn(eventAttrib: *const nvtxEventAttributes_t);
/// `nvtxDomainCreateA`.
pub type nvtxDomainCreateA_t = unsafe extern "C" fn(name: *const c_char) -> nvtxDomainHandle_t;
/// `nvtxDomainDestroy`.
pub type nvtxDomainDestroy_t = unsafe extern "C" fn(domain: nvtxDomainHandle_t);
/// `nvtxDomainRangePushEx`.
pub type nvtxDomainRangePushEx_t = unsafe extern "C" fn(
    domain: nvtxDomainHandle_t,
    eventAttrib: *const nvtxEventAttributes_t,
) -> c_int;
/// `nvtxDomainRangePop`.
pub type nvtxDomainRangePop_t = unsafe extern "C" fn(domain: nvtxDomainHandle_t) -> c_int;
/// `nvtxDomainMarkEx`.
pub type nvtxDomainMarkEx_t =
    unsafe extern "C" fn(domain: nvtxDomainHandle_t, eventAttrib: *const nvtxEventAttributes_t);

/// The NVTX entry points cudakit uses. A `None` is a call the tool did not
/// take: a no-op.
#[derive(Debug, Clone, Copy, Default)]
pub struct Nvtx {
    /// `nvtxRangePushEx`.
    pub nvtxRangePushEx: Option<nvtxRangePushEx_t>,
    /// `nvtxRangePop`.
    pub nvtxRangePop: Option<nvtxRangePop_t>,
    /// `nvtxMarkEx`.
    pub nvtxMarkEx: Option<nvtxMarkEx_t>,
    /// `nvtxDomainCreateA`.
    pub nvtxDomainCreateA: Option<nvtxDomainCreateA_t>,
    /// `nvtxDomainDestroy`.
    pub nvtxDomainDestroy: Option<nvtxDomainDestroy_t>,
    /// `nvtxDomainRangePushEx`.
    pub nvtxDomainRangePushEx: Option<nvtxDomainRangePushEx_t>,
    /// `nvtxDomainRangePop`.
    pub nvtxDomainRangePop: Option<nvtxDomainRangePop_t>,
    /// `nvtxDomainMarkEx`.
    pub nvtxDomainMarkEx: Option<nvtxDomainMarkEx_t>,
}

/// Why no tool is attached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NvtxLoadError {
    /// `dlopen` failed.
    Open {
        /// The path.
        path: String,
        /// The loader's message.
        reason: String,
    },
    /// The library lacks the entry point.
    MissingSymbol {
        /// The path.
        path: String,
        /// The symbol.
        symbol: &'static str,
    },
    /// `InitializeInjectionNvtx2` returned 0: the tool declined.
    Declined {
        /// The path.
        path: String,
    },
    /// Another client of this process already initialized cuda-sys's
    /// injection: there is one set of slots per process.
    AlreadyInjected,
}

impl std::fmt::Display for NvtxLoadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Open { path, reason } => write!(f, "{path}: cannot be opened: {reason}"),
            Self::MissingSymbol { path, symbol } => write!(f, "{path}: has no {symbol}"),
            Self::Declined { path } => {
                write!(
                    f,
                    "{path}: InitializeInjectionNvtx2 returned 0 (the tool declined)"
                )
            }
            Self::AlreadyInjected => write!(f, "the NVTX injection was already initialized"),
        }
    }
}

impl std::error::Error for NvtxLoadError {}

// ---------------------------------------------------------------- injection

/// One slot per callback id of every module; index 0 of each is unused, as
/// in NVTX's own tables. The tool writes through raw pointers to these
/// during `InitializeInjectionNvtx2`; `AtomicPtr<c_void>` has the same
/// layout as the `NvtxFunctionPointer` the tool writes.
struct Slots {
    core: [AtomicPtr<c_void>; NVTX_CBID_CORE_SIZE],
    core2: [AtomicPtr<c_void>; NVTX_CBID_CORE2_SIZE],
    cuda: [AtomicPtr<c_void>; NVTX_CBID_CUDA_SIZE],
    opencl: [AtomicPtr<c_void>; NVTX_CBID_OPENCL_SIZE],
    cudart: [AtomicPtr<c_void>; NVTX_CBID_CUDART_SIZE],
    sync: [AtomicPtr<c_void>; NVTX_CBID_SYNC_SIZE],
}

#[allow(clippy::declare_interior_mutable_const)]
const NULL_SLOT: AtomicPtr<c_void> = AtomicPtr::new(ptr::null_mut());

static SLOTS: Slots = Slots {
    core: [NULL_SLOT; NVTX_CBID_CORE_SIZE],
    core2: [NULL_SLOT; NVTX_CBID_CORE2_SIZE],
    cuda: [NULL_SLOT; NVTX_CBID_CUDA_SIZE],
    opencl: [NULL_SLOT; NVTX_CBID_OPENCL_SIZE],
    cudart: [NULL_SLOT; NVTX_CBID_CUDART_SIZE],
    sync: [NULL_SLOT; NVTX_CBID_SYNC_SIZE],
};

/// The arrays of slot pointers the tool reads (one extra null at the end of
/// each, so a tool that reads one past the size finds a null, as NVTX's own
/// tables have). Built once, on first use, and never freed.
struct Tables {
    core: Box<[*mut NvtxFunctionPointer]>,
    core2: Box<[*mut NvtxFunctionPointer]>,
    cuda: Box<[*mut NvtxFunctionPointer]>,
    opencl: Box<[*mut NvtxFunctionPointer]>,
    cudart: Box<[*mut NvtxFunctionPointer]>,
    sync: Box<[*mut NvtxFunctionPointer]>,
}

// SAFETY: the tables hold addresses of `SLOTS`' atomics, which are shared
// anyway; the arrays themselves are never written after they are built.
unsafe impl Send for Tables {}
// SAFETY: as for Send.
unsafe impl Sync for Tables {}

fn table_of(slots: &[AtomicPtr<c_void>]) -> Box<[*mut NvtxFunctionPointer]> {
    let mut v: Vec<*mut NvtxFunctionPointer> = slots
        .iter()
        .enumerate()
        .map(|(i, s)| if i == 0 { ptr::null_mut() } else { s.as_ptr() })
        .collect();
    v.push(ptr::null_mut());
    v.into_boxed_slice()
}

static TABLES: once_cell::sync::Lazy<Tables> = once_cell::sync::Lazy::new(|| Tables {
    core: table_of(&SLOTS.core),
    core2: table_of(&SLOTS.core2),
    cuda: table_of(&SLOTS.cuda),
    opencl: table_of(&SLOTS.opencl),
    cudart: table_of(&SLOTS.cudart),
    sync: table_of(&SLOTS.sync),
});

unsafe extern "C" fn get_module_function_table(
    module: c_int,
    out_table: *mut NvtxFunctionTable,
    out_size: *mut c_uint,
) -> c_int {
    let t = &*TABLES;
    let table = match module {
        NVTX_CB_MODULE_CORE => &t.core,
        NVTX_CB_MODULE_CORE2 => &t.core2,
        NVTX_CB_MODULE_CUDA => &t.cuda,
        NVTX_CB_MODULE_OPENCL => &t.opencl,
        NVTX_CB_MODULE_CUDART => &t.cudart,
        NVTX_CB_MODULE_SYNC => &t.sync,
        _ => return 0,
    };
    if !out_size.is_null() {
        // SAFETY: the tool passes a writable `unsigned int*` or null (checked).
        unsafe { *out_size = (table.len() - 1) as c_uint };
    }
    if !out_table.is_null() {
        // SAFETY: the tool passes a writable `NvtxFunctionTable*` or null
        // (checked). The array stays alive for the process (`TABLES` is a
        // static), and the tool only reads it.
        unsafe { *out_table = table.as_ptr() as NvtxFunctionTable };
    }
    1
}

unsafe extern "C" fn set_injection_nvtx_version(_version: u32) {}

static CALLBACKS: NvtxExportTableCallbacks = NvtxExportTableCallbacks {
    struct_size: std::mem::size_of::<NvtxExportTableCallbacks>(),
    GetModuleFunctionTable: get_module_function_table,
};

static VERSION_INFO: NvtxExportTableVersionInfo = NvtxExportTableVersionInfo {
    struct_size: std::mem::size_of::<NvtxExportTableVersionInfo>(),
    version: NVTX_VERSION as u32,
    reserved0: 0,
    SetInjectionNvtxVersion: set_injection_nvtx_version,
};

unsafe extern "C" fn get_export_table(id: u32) -> *const c_void {
    match id {
        NVTX_ETID_CALLBACKS => ptr::addr_of!(CALLBACKS).cast(),
        NVTX_ETID_VERSIONINFO => ptr::addr_of!(VERSION_INFO).cast(),
        _ => ptr::null(),
    }
}

static INJECTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The client side of the NVTX v3 injection protocol.
#[derive(Debug)]
pub struct Injection;

impl Injection {
    /// Loads the tool library at `path` (normally `NVTX_INJECTION64_PATH`),
    /// calls its `InitializeInjectionNvtx2` with this crate's export-table
    /// getter, and returns the entry points the tool filled in. The library
    /// is never unloaded (the tool's functions stay in the slots). At most
    /// once per process: the slots are process-wide.
    ///
    /// # Safety
    ///
    /// Loading a library runs its initializers, and the tool's initializer
    /// runs arbitrary code: `path` must name a genuine NVTX injection
    /// library, whose functions have the NVTX signatures for the callback
    /// ids it fills.
    pub unsafe fn load(path: &Path) -> Result<Nvtx, NvtxLoadError> {
        let shown = path.display().to_string();
        if INJECTED.swap(true, Ordering::AcqRel) {
            return Err(NvtxLoadError::AlreadyInjected);
        }
        // SAFETY: the caller vouches for the library (see # Safety).
        let lib = unsafe { Library::new(path) }.map_err(|e| NvtxLoadError::Open {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        let Some(init) = crate::table::optional(&lib, "InitializeInjectionNvtx2\0") else {
            return Err(NvtxLoadError::MissingSymbol {
                path: shown,
                symbol: "InitializeInjectionNvtx2",
            });
        };
        // SAFETY: the export has the `NvtxInitializeInjectionNvtxFunc_t`
        // signature (the caller vouches for the library), and the library is
        // leaked below, so its code stays mapped.
        let init: NvtxInitializeInjectionNvtxFunc_t = unsafe { function_at(init) };
        std::mem::forget(lib);
        // SAFETY: `get_export_table` has the getter's signature and returns
        // pointers to statics that live for the process.
        let status = unsafe { init(get_export_table) };
        if status == 0 {
            return Err(NvtxLoadError::Declined { path: shown });
        }
        let slot = |s: &AtomicPtr<c_void>| NonNull::new(s.load(Ordering::Acquire));
        // SAFETY: (each `function_at` below) a slot of callback id N holds,
        // when the tool filled it, the tool's implementation of entry point
        // N, with that entry point's signature (the protocol; the caller
        // vouches for the tool), in a library that is never unloaded.
        Ok(unsafe {
            Nvtx {
                nvtxRangePushEx: slot(&SLOTS.core[NVTX_CBID_CORE_RangePushEx])
                    .map(|p| function_at(p)),
                nvtxRangePop: slot(&SLOTS.core[NVTX_CBID_CORE_RangePop]).map(|p| function_at(p)),
                nvtxMarkEx: slot(&SLOTS.core[NVTX_CBID_CORE_MarkEx]).map(|p| function_at(p)),
                nvtxDomainCreateA: slot(&SLOTS.core2[NVTX_CBID_CORE2_DomainCreateA])
                    .map(|p| function_at(p)),
                nvtxDomainDestroy: slot(&SLOTS.core2[NVTX_CBID_CORE2_DomainDestroy])
                    .map(|p| function_at(p)),
                nvtxDomainRangePushEx: slot(&SLOTS.core2[NVTX_CBID_CORE2_DomainRangePushEx])
                    .map(|p| function_at(p)),
                nvtxDomainRangePop: slot(&SLOTS.core2[NVTX_CBID_CORE2_DomainRangePop])
                    .map(|p| function_at(p)),
                nvtxDomainMarkEx: slot(&SLOTS.core2[NVTX_CBID_CORE2_DomainMarkEx])
                    .map(|p| function_at(p)),
            }
        })
    }
}

impl Nvtx {
    /// Opens an NVTX client library (`libnvToolsExt.so.1`, NVTX v2, which
    /// runs the injection protocol itself) and binds its exports. The
    /// library is never unloaded.
    ///
    /// # Safety
    ///
    /// `path` must name a genuine `libnvToolsExt`, whose exports have the
    /// NVTX signatures.
    pub unsafe fn load_library(path: &Path) -> Result<Nvtx, NvtxLoadError> {
        let shown = path.display().to_string();
        // SAFETY: the caller vouches for the library (see # Safety).
        let lib = unsafe { Library::new(path) }.map_err(|e| NvtxLoadError::Open {
            path: shown.clone(),
            reason: e.to_string(),
        })?;
        let sym = |name: &'static str| crate::table::optional(&lib, name);
        if sym("nvtxRangePushEx\0").is_none() {
            return Err(NvtxLoadError::MissingSymbol {
                path: shown,
                symbol: "nvtxRangePushEx",
            });
        }
        // SAFETY: (each `function_at`) the export of that name has the NVTX
        // signature of the field's type (the caller vouches for the
        // library), and the library is leaked below, so it stays mapped.
        let table = unsafe {
            Nvtx {
                nvtxRangePushEx: sym("nvtxRangePushEx\0").map(|p| function_at(p)),
                nvtxRangePop: sym("nvtxRangePop\0").map(|p| function_at(p)),
                nvtxMarkEx: sym("nvtxMarkEx\0").map(|p| function_at(p)),
                nvtxDomainCreateA: sym("nvtxDomainCreateA\0").map(|p| function_at(p)),
                nvtxDomainDestroy: sym("nvtxDomainDestroy\0").map(|p| function_at(p)),
                nvtxDomainRangePushEx: sym("nvtxDomainRangePushEx\0").map(|p| function_at(p)),
                nvtxDomainRangePop: sym("nvtxDomainRangePop\0").map(|p| function_at(p)),
                nvtxDomainMarkEx: sym("nvtxDomainMarkEx\0").map(|p| function_at(p)),
            }
        };
        std::mem::forget(lib);
        Ok(table)
    }
}

/// Event attributes for an ASCII message and an optional ARGB colour.
pub fn event_attributes(message: &CStr, argb: Option<u32>) -> nvtxEventAttributes_t {
    nvtxEventAttributes_t {
        version: NVTX_VERSION,
        size: NVTX_EVENT_ATTRIB_STRUCT_SIZE,
        category: 0,
        colorType: if argb.is_some() {
            NVTX_COLOR_ARGB
        } else {
            NVTX_COLOR_UNKNOWN
        },
        color: argb.unwrap_or(0),
        payloadType: NVTX_PAYLOAD_UNKNOWN,
        reserved0: 0,
        payload: 0,
        messageType: NVTX_MESSAGE_TYPE_ASCII,
        message: message.as_ptr(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_tables_answer_as_the_protocol_says() {
        // SAFETY: the getter takes any id.
        assert!(unsafe { get_export_table(2) }.is_null());
        // SAFETY: as above; id 1 is the callbacks table, a static.
        let cb =
            unsafe { &*(get_export_table(NVTX_ETID_CALLBACKS) as *const NvtxExportTableCallbacks) };
        assert_eq!(cb.struct_size, 16);
        let mut table: NvtxFunctionTable = ptr::null_mut();
        let mut size = 0;
        // SAFETY: both out-pointers are valid.
        let found =
            unsafe { (cb.GetModuleFunctionTable)(NVTX_CB_MODULE_CORE, &mut table, &mut size) };
        assert_eq!(found, 1);
        assert_eq!(size as usize, NVTX_CBID_CORE_SIZE);
        // SAFETY: the table has size + 1 entries.
        unsafe {
            assert!((*table).is_null());
            assert_eq!(
                *table.add(NVTX_CBID_CORE_RangePop),
                SLOTS.core[NVTX_CBID_CORE_RangePop].as_ptr()
            );
            assert!((*table.add(NVTX_CBID_CORE_SIZE)).is_null());
        }
        // SAFETY: out-pointers may be null.
        let unknown = unsafe { (cb.GetModuleFunctionTable)(99, ptr::null_mut(), ptr::null_mut()) };
        assert_eq!(unknown, 0);
    }
}
