//! NVRTC, written by hand from CUDA 13.0's `nvrtc.h`: `nvrtcResult`, the
//! program handle, and the table of entry points.
//!
//! NVRTC's exported symbols carry no `_v2`-style suffixes: each table entry's
//! symbol is the header's function name.

use std::ffi::{c_char, c_int, c_void};

use crate::table::function_table;
use crate::types::c_enum;

c_enum! {
    /// `nvrtcResult`: the status every NVRTC entry point returns.
    #[must_use]
    pub struct nvrtcResult(c_int) {
        /// The call succeeded.
        NVRTC_SUCCESS = 0,
        /// NVRTC could not allocate host memory.
        NVRTC_ERROR_OUT_OF_MEMORY = 1,
        /// The program object could not be created.
        NVRTC_ERROR_PROGRAM_CREATION_FAILURE = 2,
        /// An argument was invalid (a null pointer, a negative count, ...).
        NVRTC_ERROR_INVALID_INPUT = 3,
        /// The program handle is not a live program.
        NVRTC_ERROR_INVALID_PROGRAM = 4,
        /// A compile option was not recognised or its value was invalid.
        NVRTC_ERROR_INVALID_OPTION = 5,
        /// The source did not compile; the program log says why.
        NVRTC_ERROR_COMPILATION = 6,
        /// A built-in operation failed (often: `libnvrtc-builtins` could not be loaded).
        NVRTC_ERROR_BUILTIN_OPERATION_FAILURE = 7,
        /// A name expression was added after the program was compiled.
        NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION = 8,
        /// A lowered name was asked for before the program was compiled.
        NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION = 9,
        /// The name expression was not added before compiling, or does not name an entity.
        NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID = 10,
        /// An internal error in NVRTC.
        NVRTC_ERROR_INTERNAL_ERROR = 11,
        /// The file named by `--time` could not be written.
        NVRTC_ERROR_TIME_FILE_WRITE_FAILED = 12,
        /// No precompiled header (PCH) creation was attempted.
        NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED = 13,
        /// PCH creation ran out of PCH heap; see `nvrtcGetPCHHeapSizeRequired`.
        NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED = 14,
        /// An error prevented the PCH file from being created.
        NVRTC_ERROR_PCH_CREATE = 15,
        /// Compilation was cancelled by the flow callback (`nvrtcSetFlowCallback`).
        NVRTC_ERROR_CANCELLED = 16,
        /// The time-trace file could not be written.
        NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED = 17,
    }
}

/// The struct `nvrtcProgram` points to (`struct _nvrtcProgram`); only ever
/// handled by pointer, never constructed or read from Rust.
#[repr(C)]
#[derive(Debug)]
pub struct _nvrtcProgram {
    _private: [u8; 0],
}

/// `nvrtcProgram`: an opaque handle to a program, the unit of compilation
/// (`typedef struct _nvrtcProgram *nvrtcProgram;`).
pub type nvrtcProgram = *mut _nvrtcProgram;

function_table! {
    /// Entry points of libnvrtc. Obtain the process's table with
    /// [`nvrtc()`](crate::nvrtc()), or open a specific library with
    /// [`Nvrtc::load_from`].
    ///
    /// Required entries are those every NVRTC from 12.0 on exports. The
    /// optional ones are the precompiled-header functions and the flow
    /// callback, which arrived later, and OptiX IR, kept optional because
    /// cudakit does not use it.
    pub struct Nvrtc;
    library = "libnvrtc";
    header = "nvrtc.h";
    search = Nvrtc;
    required {
        /// Returns a static string for a result code: its enumerator name, or
        /// `"NVRTC_ERROR unknown"`.
        nvrtcGetErrorString = "nvrtcGetErrorString": fn(result: nvrtcResult) -> *const c_char;
        /// Writes NVRTC's major and minor version.
        nvrtcVersion = "nvrtcVersion": fn(major: *mut c_int, minor: *mut c_int) -> nvrtcResult;
        /// Writes the number of architectures NVRTC can compile for.
        nvrtcGetNumSupportedArchs = "nvrtcGetNumSupportedArchs": fn(numArchs: *mut c_int) -> nvrtcResult;
        /// Fills an array (of `nvrtcGetNumSupportedArchs` elements) with the
        /// supported architectures, ascending (`90` for `sm_90`).
        nvrtcGetSupportedArchs = "nvrtcGetSupportedArchs": fn(supportedArchs: *mut c_int) -> nvrtcResult;
        /// Creates a program from a source string and `numHeaders` in-memory headers.
        nvrtcCreateProgram = "nvrtcCreateProgram": fn(
            prog: *mut nvrtcProgram,
            src: *const c_char,
            name: *const c_char,
            numHeaders: c_int,
            headers: *const *const c_char,
            includeNames: *const *const c_char,
        ) -> nvrtcResult;
        /// Destroys a program and sets the handle to null.
        nvrtcDestroyProgram = "nvrtcDestroyProgram": fn(prog: *mut nvrtcProgram) -> nvrtcResult;
        /// Compiles a program with `numOptions` option strings.
        nvrtcCompileProgram = "nvrtcCompileProgram": fn(
            prog: nvrtcProgram,
            numOptions: c_int,
            options: *const *const c_char,
        ) -> nvrtcResult;
        /// Writes the size of the PTX, including the trailing NUL.
        nvrtcGetPTXSize = "nvrtcGetPTXSize": fn(prog: nvrtcProgram, ptxSizeRet: *mut usize) -> nvrtcResult;
        /// Copies the PTX into a buffer of `nvrtcGetPTXSize` bytes.
        nvrtcGetPTX = "nvrtcGetPTX": fn(prog: nvrtcProgram, ptx: *mut c_char) -> nvrtcResult;
        /// Writes the size of the CUBIN (0 when compiled for a virtual `compute_` architecture).
        nvrtcGetCUBINSize = "nvrtcGetCUBINSize": fn(prog: nvrtcProgram, cubinSizeRet: *mut usize) -> nvrtcResult;
        /// Copies the CUBIN into a buffer of `nvrtcGetCUBINSize` bytes.
        nvrtcGetCUBIN = "nvrtcGetCUBIN": fn(prog: nvrtcProgram, cubin: *mut c_char) -> nvrtcResult;
        /// Writes the size of the LTO IR (compiled with `-dlto`).
        nvrtcGetLTOIRSize = "nvrtcGetLTOIRSize": fn(prog: nvrtcProgram, LTOIRSizeRet: *mut usize) -> nvrtcResult;
        /// Copies the LTO IR into a buffer of `nvrtcGetLTOIRSize` bytes.
        nvrtcGetLTOIR = "nvrtcGetLTOIR": fn(prog: nvrtcProgram, LTOIR: *mut c_char) -> nvrtcResult;
        /// Writes the size of the compilation log, including the trailing NUL.
        nvrtcGetProgramLogSize = "nvrtcGetProgramLogSize": fn(prog: nvrtcProgram, logSizeRet: *mut usize) -> nvrtcResult;
        /// Copies the compilation log into a buffer of `nvrtcGetProgramLogSize` bytes.
        nvrtcGetProgramLog = "nvrtcGetProgramLog": fn(prog: nvrtcProgram, log: *mut c_char) -> nvrtcResult;
        /// Notes a name expression (`"ns::scale<float>"`) whose lowered name
        /// will be wanted; must precede compilation.
        nvrtcAddNameExpression = "nvrtcAddNameExpression": fn(
            prog: nvrtcProgram,
            name_expression: *const c_char,
        ) -> nvrtcResult;
        /// Points `*lowered_name` at the mangled name of a name expression
        /// added before compiling; the string lives until the program is destroyed.
        nvrtcGetLoweredName = "nvrtcGetLoweredName": fn(
            prog: nvrtcProgram,
            name_expression: *const c_char,
            lowered_name: *mut *const c_char,
        ) -> nvrtcResult;
    }
    optional {
        /// Writes the size of the OptiX IR (compiled with `--optix-ir`).
        nvrtcGetOptiXIRSize = "nvrtcGetOptiXIRSize": fn(prog: nvrtcProgram, optixirSizeRet: *mut usize) -> nvrtcResult;
        /// Copies the OptiX IR into a buffer of `nvrtcGetOptiXIRSize` bytes.
        nvrtcGetOptiXIR = "nvrtcGetOptiXIR": fn(prog: nvrtcProgram, optixir: *mut c_char) -> nvrtcResult;
        /// Writes the current size of the precompiled-header heap.
        nvrtcGetPCHHeapSize = "nvrtcGetPCHHeapSize": fn(ret: *mut usize) -> nvrtcResult;
        /// Reallocates the precompiled-header heap with `size` bytes.
        nvrtcSetPCHHeapSize = "nvrtcSetPCHHeapSize": fn(size: usize) -> nvrtcResult;
        /// Returns whether the last compilation created a precompiled header.
        nvrtcGetPCHCreateStatus = "nvrtcGetPCHCreateStatus": fn(prog: nvrtcProgram) -> nvrtcResult;
        /// Writes the PCH heap size the program's precompiled header needs.
        nvrtcGetPCHHeapSizeRequired = "nvrtcGetPCHHeapSizeRequired": fn(prog: nvrtcProgram, size: *mut usize) -> nvrtcResult;
        /// Registers a callback, called with `payload` during compilation,
        /// that cancels it by returning 1.
        nvrtcSetFlowCallback = "nvrtcSetFlowCallback": fn(
            prog: nvrtcProgram,
            callback: Option<unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int>,
            payload: *mut c_void,
        ) -> nvrtcResult;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `nvrtcResult` as `nvrtc.h` 13.0 declares it, extracted by script
    /// from the header's `typedef enum { ... } nvrtcResult;`.
    const HEADER_NVRTC_RESULT: &[(&str, c_int)] = &[
        ("NVRTC_SUCCESS", 0),
        ("NVRTC_ERROR_OUT_OF_MEMORY", 1),
        ("NVRTC_ERROR_PROGRAM_CREATION_FAILURE", 2),
        ("NVRTC_ERROR_INVALID_INPUT", 3),
        ("NVRTC_ERROR_INVALID_PROGRAM", 4),
        ("NVRTC_ERROR_INVALID_OPTION", 5),
        ("NVRTC_ERROR_COMPILATION", 6),
        ("NVRTC_ERROR_BUILTIN_OPERATION_FAILURE", 7),
        ("NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION", 8),
        ("NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION", 9),
        ("NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID", 10),
        ("NVRTC_ERROR_INTERNAL_ERROR", 11),
        ("NVRTC_ERROR_TIME_FILE_WRITE_FAILED", 12),
        ("NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED", 13),
        ("NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED", 14),
        ("NVRTC_ERROR_PCH_CREATE", 15),
        ("NVRTC_ERROR_CANCELLED", 16),
        ("NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED", 17),
    ];

    /// Every C function `nvrtc.h` 13.0 declares, in header order, extracted
    /// by script (the C++-only inline `nvrtcGetTypeName` is not exported and
    /// is left out).
    const HEADER_FUNCTIONS: &[&str] = &[
        "nvrtcGetErrorString",
        "nvrtcVersion",
        "nvrtcGetNumSupportedArchs",
        "nvrtcGetSupportedArchs",
        "nvrtcCreateProgram",
        "nvrtcDestroyProgram",
        "nvrtcCompileProgram",
        "nvrtcGetPTXSize",
        "nvrtcGetPTX",
        "nvrtcGetCUBINSize",
        "nvrtcGetCUBIN",
        "nvrtcGetLTOIRSize",
        "nvrtcGetLTOIR",
        "nvrtcGetOptiXIRSize",
        "nvrtcGetOptiXIR",
        "nvrtcGetProgramLogSize",
        "nvrtcGetProgramLog",
        "nvrtcAddNameExpression",
        "nvrtcGetLoweredName",
        "nvrtcGetPCHHeapSize",
        "nvrtcSetPCHHeapSize",
        "nvrtcGetPCHCreateStatus",
        "nvrtcGetPCHHeapSizeRequired",
        "nvrtcSetFlowCallback",
    ];

    #[test]
    fn nvrtc_result_matches_the_header() {
        assert_eq!(nvrtcResult::ALL.len(), 18);
        assert_eq!(nvrtcResult::ALL.len(), HEADER_NVRTC_RESULT.len());
        for ((name, value), (header_name, header_value)) in
            nvrtcResult::ALL.iter().zip(HEADER_NVRTC_RESULT)
        {
            assert_eq!(name, header_name);
            assert_eq!(value.0, *header_value, "{name}");
            assert_eq!(nvrtcResult(*header_value).name(), Some(*header_name));
        }
    }

    #[test]
    fn unknown_results_keep_their_number() {
        let unknown = nvrtcResult(1234);
        assert_eq!(unknown.name(), None);
        assert_eq!(format!("{unknown:?}"), "nvrtcResult(1234)");
        assert_eq!(
            format!("{:?}", nvrtcResult::NVRTC_ERROR_COMPILATION),
            "NVRTC_ERROR_COMPILATION(6)"
        );
    }

    #[test]
    fn the_table_binds_every_header_function_once() {
        let mut bound: Vec<&str> = Nvrtc::REQUIRED_SYMBOLS
            .iter()
            .chain(Nvrtc::OPTIONAL_SYMBOLS)
            .copied()
            .collect();
        assert_eq!(bound.len(), HEADER_FUNCTIONS.len());
        bound.sort_unstable();
        bound.dedup();
        let mut header = HEADER_FUNCTIONS.to_vec();
        header.sort_unstable();
        assert_eq!(bound, header);
    }

    #[test]
    fn the_handle_is_one_pointer() {
        assert_eq!(
            std::mem::size_of::<nvrtcProgram>(),
            std::mem::size_of::<*mut c_void>()
        );
        assert_eq!(std::mem::size_of::<_nvrtcProgram>(), 0);
        assert_eq!(
            std::mem::size_of::<nvrtcResult>(),
            std::mem::size_of::<c_int>()
        );
    }
}
