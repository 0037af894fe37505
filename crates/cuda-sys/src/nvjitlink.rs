//! nvJitLink, written by hand from CUDA 13.0's `nvJitLink.h`: the link-time
//! optimizing linker of CUDA 12 and later, which links LTO-IR (NVRTC's
//! `-dlto` output) together with PTX, CUBIN, fatbins and libraries such as
//! `libcudadevrt.a` into one CUBIN. It runs on the host; no GPU is needed.
//!
//! The header maps each API name to a versioned symbol through a `static
//! inline` wrapper (`nvJitLinkCreate` calls `__nvJitLinkCreate_13_0`); each
//! table entry binds the versioned symbol, as the header's wrappers do, so
//! a library that dropped the 13.0 ABI fails to load with a
//! [`LoadError::MissingSymbol`](crate::LoadError::MissingSymbol) naming it.
//! `nvJitLinkVersion` is exported unversioned.

use std::ffi::{c_char, c_int, c_uint, c_void};

use crate::table::function_table;
use crate::types::c_enum;

c_enum! {
    /// `nvJitLinkResult`: the status every nvJitLink entry point returns.
    #[must_use]
    pub struct nvJitLinkResult(c_int) {
        /// The call succeeded.
        NVJITLINK_SUCCESS = 0,
        /// An option was not recognized.
        NVJITLINK_ERROR_UNRECOGNIZED_OPTION = 1,
        /// `-arch=sm_NN` was not given.
        NVJITLINK_ERROR_MISSING_ARCH = 2,
        /// An input is invalid.
        NVJITLINK_ERROR_INVALID_INPUT = 3,
        /// Compiling PTX failed.
        NVJITLINK_ERROR_PTX_COMPILE = 4,
        /// Compiling NVVM IR (LTO-IR) failed.
        NVJITLINK_ERROR_NVVM_COMPILE = 5,
        /// An internal error.
        NVJITLINK_ERROR_INTERNAL = 6,
        /// The thread pool failed.
        NVJITLINK_ERROR_THREADPOOL = 7,
        /// An input was not recognized.
        NVJITLINK_ERROR_UNRECOGNIZED_INPUT = 8,
        /// The finalizer failed.
        NVJITLINK_ERROR_FINALIZE = 9,
        /// An input was null.
        NVJITLINK_ERROR_NULL_INPUT = 10,
        /// Options that cannot be combined were given.
        NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS = 11,
        /// An input is not of the type it was added as.
        NVJITLINK_ERROR_INCORRECT_INPUT_TYPE = 12,
        /// An input's architecture differs from `-arch`.
        NVJITLINK_ERROR_ARCH_MISMATCH = 13,
        /// An input was made by a newer toolkit than this nvJitLink.
        NVJITLINK_ERROR_OUTDATED_LIBRARY = 14,
        /// A fatbin was expected and is missing.
        NVJITLINK_ERROR_MISSING_FATBIN = 15,
        /// The `-arch` value is not recognized.
        NVJITLINK_ERROR_UNRECOGNIZED_ARCH = 16,
        /// The `-arch` value is not supported.
        NVJITLINK_ERROR_UNSUPPORTED_ARCH = 17,
        /// LTO-IR inputs need `-lto`.
        NVJITLINK_ERROR_LTO_NOT_ENABLED = 18,
    }
}

c_enum! {
    /// `nvJitLinkInputType`: what an input is.
    pub struct nvJitLinkInputType(c_int) {
        /// No input (an error value).
        NVJITLINK_INPUT_NONE = 0,
        /// A CUBIN.
        NVJITLINK_INPUT_CUBIN = 1,
        /// PTX.
        NVJITLINK_INPUT_PTX = 2,
        /// LTO-IR.
        NVJITLINK_INPUT_LTOIR = 3,
        /// A fatbin.
        NVJITLINK_INPUT_FATBIN = 4,
        /// A host object with embedded device code.
        NVJITLINK_INPUT_OBJECT = 5,
        /// A host library (archive) of such objects, e.g. `libcudadevrt.a`.
        NVJITLINK_INPUT_LIBRARY = 6,
        /// An index file.
        NVJITLINK_INPUT_INDEX = 7,
        /// Let nvJitLink tell the type from the contents.
        NVJITLINK_INPUT_ANY = 10,
    }
}

/// The struct `nvJitLinkHandle` points to (`struct nvJitLink`); only ever
/// handled by pointer.
#[repr(C)]
#[derive(Debug)]
pub struct nvJitLink {
    _private: [u8; 0],
}

/// `nvJitLinkHandle`: an opaque handle to one link.
pub type nvJitLinkHandle = *mut nvJitLink;

function_table! {
    /// Entry points of libnvJitLink. Obtain the process's table with
    /// [`nvjitlink()`](crate::nvjitlink()), or open a specific library with
    /// [`NvJitLink::load_from`].
    ///
    /// Every entry is required: all of them are in every nvJitLink 13.
    pub struct NvJitLink;
    library = "libnvJitLink";
    header = "nvJitLink.h";
    search = NvJitLink;
    required {
        /// Creates a link with `numOptions` option strings (`-arch=sm_90`,
        /// `-lto`, `-O3`, ...).
        nvJitLinkCreate = "__nvJitLinkCreate_13_0": fn(
            handle: *mut nvJitLinkHandle,
            numOptions: u32,
            options: *const *const c_char,
        ) -> nvJitLinkResult;
        /// Destroys a link and sets the handle to null.
        nvJitLinkDestroy = "__nvJitLinkDestroy_13_0": fn(handle: *mut nvJitLinkHandle) -> nvJitLinkResult;
        /// Adds an input from memory; `name` (may be null) labels it in logs.
        nvJitLinkAddData = "__nvJitLinkAddData_13_0": fn(
            handle: nvJitLinkHandle,
            inputType: nvJitLinkInputType,
            data: *const c_void,
            size: usize,
            name: *const c_char,
        ) -> nvJitLinkResult;
        /// Adds an input from a file.
        nvJitLinkAddFile = "__nvJitLinkAddFile_13_0": fn(
            handle: nvJitLinkHandle,
            inputType: nvJitLinkInputType,
            fileName: *const c_char,
        ) -> nvJitLinkResult;
        /// Links the inputs.
        nvJitLinkComplete = "__nvJitLinkComplete_13_0": fn(handle: nvJitLinkHandle) -> nvJitLinkResult;
        /// Writes the size of the linked CUBIN.
        nvJitLinkGetLinkedCubinSize = "__nvJitLinkGetLinkedCubinSize_13_0": fn(
            handle: nvJitLinkHandle,
            size: *mut usize,
        ) -> nvJitLinkResult;
        /// Copies the linked CUBIN into a buffer of that size.
        nvJitLinkGetLinkedCubin = "__nvJitLinkGetLinkedCubin_13_0": fn(
            handle: nvJitLinkHandle,
            cubin: *mut c_void,
        ) -> nvJitLinkResult;
        /// Writes the size of the linked PTX (with `-ptx`), including its NUL.
        nvJitLinkGetLinkedPtxSize = "__nvJitLinkGetLinkedPtxSize_13_0": fn(
            handle: nvJitLinkHandle,
            size: *mut usize,
        ) -> nvJitLinkResult;
        /// Copies the linked PTX into a buffer of that size.
        nvJitLinkGetLinkedPtx = "__nvJitLinkGetLinkedPtx_13_0": fn(
            handle: nvJitLinkHandle,
            ptx: *mut c_char,
        ) -> nvJitLinkResult;
        /// Writes the size of the error log, including its NUL.
        nvJitLinkGetErrorLogSize = "__nvJitLinkGetErrorLogSize_13_0": fn(
            handle: nvJitLinkHandle,
            size: *mut usize,
        ) -> nvJitLinkResult;
        /// Copies the error log into a buffer of that size.
        nvJitLinkGetErrorLog = "__nvJitLinkGetErrorLog_13_0": fn(
            handle: nvJitLinkHandle,
            log: *mut c_char,
        ) -> nvJitLinkResult;
        /// Writes the size of the info log, including its NUL.
        nvJitLinkGetInfoLogSize = "__nvJitLinkGetInfoLogSize_13_0": fn(
            handle: nvJitLinkHandle,
            size: *mut usize,
        ) -> nvJitLinkResult;
        /// Copies the info log into a buffer of that size.
        nvJitLinkGetInfoLog = "__nvJitLinkGetInfoLog_13_0": fn(
            handle: nvJitLinkHandle,
            log: *mut c_char,
        ) -> nvJitLinkResult;
        /// Writes the library's major and minor version.
        nvJitLinkVersion = "nvJitLinkVersion": fn(major: *mut c_uint, minor: *mut c_uint) -> nvJitLinkResult;
    }
    optional {
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `nvJitLinkResult` as `nvJitLink.h` 13.0 declares it (the enumerators
    /// count up from 0 in header order).
    const HEADER_RESULT: &[&str] = &[
        "NVJITLINK_SUCCESS",
        "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
        "NVJITLINK_ERROR_MISSING_ARCH",
        "NVJITLINK_ERROR_INVALID_INPUT",
        "NVJITLINK_ERROR_PTX_COMPILE",
        "NVJITLINK_ERROR_NVVM_COMPILE",
        "NVJITLINK_ERROR_INTERNAL",
        "NVJITLINK_ERROR_THREADPOOL",
        "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
        "NVJITLINK_ERROR_FINALIZE",
        "NVJITLINK_ERROR_NULL_INPUT",
        "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
        "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
        "NVJITLINK_ERROR_ARCH_MISMATCH",
        "NVJITLINK_ERROR_OUTDATED_LIBRARY",
        "NVJITLINK_ERROR_MISSING_FATBIN",
        "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
        "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
        "NVJITLINK_ERROR_LTO_NOT_ENABLED",
    ];

    /// The header's input types: `NONE = 0, CUBIN = 1`, then counting up,
    /// and `ANY = 10`.
    const HEADER_INPUT: &[(&str, c_int)] = &[
        ("NVJITLINK_INPUT_NONE", 0),
        ("NVJITLINK_INPUT_CUBIN", 1),
        ("NVJITLINK_INPUT_PTX", 2),
        ("NVJITLINK_INPUT_LTOIR", 3),
        ("NVJITLINK_INPUT_FATBIN", 4),
        ("NVJITLINK_INPUT_OBJECT", 5),
        ("NVJITLINK_INPUT_LIBRARY", 6),
        ("NVJITLINK_INPUT_INDEX", 7),
        ("NVJITLINK_INPUT_ANY", 10),
    ];

    /// Every function the header declares, with the symbol its inline
    /// wrapper calls, except `nvJitLinkGetLinkedLTOIRSize` and
    /// `nvJitLinkGetLinkedLTOIR` (LTO-IR output, which cudakit never asks
    /// for; `__nvJitLinkGetLinkedLTOIR*_13_0` are exported all the same).
    const HEADER_SYMBOLS: &[&str] = &[
        "__nvJitLinkCreate_13_0",
        "__nvJitLinkDestroy_13_0",
        "__nvJitLinkAddData_13_0",
        "__nvJitLinkAddFile_13_0",
        "__nvJitLinkComplete_13_0",
        "__nvJitLinkGetLinkedCubinSize_13_0",
        "__nvJitLinkGetLinkedCubin_13_0",
        "__nvJitLinkGetLinkedPtxSize_13_0",
        "__nvJitLinkGetLinkedPtx_13_0",
        "__nvJitLinkGetErrorLogSize_13_0",
        "__nvJitLinkGetErrorLog_13_0",
        "__nvJitLinkGetInfoLogSize_13_0",
        "__nvJitLinkGetInfoLog_13_0",
        "nvJitLinkVersion",
    ];

    #[test]
    fn results_match_the_header() {
        assert_eq!(nvJitLinkResult::ALL.len(), HEADER_RESULT.len());
        for (i, ((name, value), header)) in
            nvJitLinkResult::ALL.iter().zip(HEADER_RESULT).enumerate()
        {
            assert_eq!(name, header);
            assert_eq!(value.0, i as c_int, "{name}");
        }
        assert_eq!(format!("{:?}", nvJitLinkResult(99)), "nvJitLinkResult(99)");
    }

    #[test]
    fn input_types_match_the_header() {
        assert_eq!(nvJitLinkInputType::ALL.len(), HEADER_INPUT.len());
        for ((name, value), (hname, hvalue)) in nvJitLinkInputType::ALL.iter().zip(HEADER_INPUT) {
            assert_eq!((name, value.0), (hname, *hvalue));
        }
    }

    /// The search of issue 13: the override alone when set; else the soname,
    /// the toolkit folders, then both wheels' folders.
    #[test]
    fn nvjitlink_is_searched_by_override_soname_toolkits_and_wheels() {
        use crate::loader::{candidates, Surroundings, Which};
        use std::path::Path;
        let entries = |folder: &Path| -> Vec<String> {
            match folder.to_str() {
                Some("/py") => vec!["nvidia".into()],
                _ => Vec::new(),
            }
        };
        let env = |name: &str| match name {
            "PYTHONPATH" => Some("/py".to_owned()),
            "CUDA_PATH" => Some("/opt/tk".to_owned()),
            _ => None,
        };
        let s = Surroundings {
            var: &env,
            entries: &entries,
            exe: None,
            build_workspace: None,
            trusted: &|_: &std::path::Path| true,
        };
        let list = candidates(Which::NvJitLink, &s);
        assert_eq!(list[0], "libnvJitLink.so.13");
        assert_eq!(list[1], "/opt/tk/lib64/libnvJitLink.so.13");
        let wheel = list
            .iter()
            .position(|c| c == "/py/nvidia/nvjitlink/lib/libnvJitLink.so.13")
            .expect("nvidia/nvjitlink wheel");
        let cu13 = list
            .iter()
            .position(|c| c == "/py/nvidia/cu13/lib/libnvJitLink.so.13")
            .expect("nvidia/cu13 wheel");
        let toolkit = list
            .iter()
            .position(|c| c == "/usr/local/cuda/lib64/libnvJitLink.so.13")
            .unwrap();
        assert!(toolkit < wheel && wheel < cu13, "{list:#?}");
        let explicit = |name: &str| {
            (name == "CUDAKIT_LIBNVJITLINK").then(|| "/x/libnvJitLink.so.13".to_owned())
        };
        let s = Surroundings {
            var: &explicit,
            entries: &entries,
            exe: None,
            build_workspace: None,
            trusted: &|_: &std::path::Path| true,
        };
        assert_eq!(candidates(Which::NvJitLink, &s), ["/x/libnvJitLink.so.13"]);
    }

    #[test]
    fn a_missing_library_is_a_load_error_listing_the_paths() {
        // SAFETY: the path does not exist, so nothing is loaded.
        let err = unsafe { NvJitLink::load_from("/nonexistent/libnvJitLink.so.13") }.unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("libnvJitLink could not be loaded"),
            "{text}"
        );
        assert!(
            text.contains("/nonexistent/libnvJitLink.so.13: no such file"),
            "{text}"
        );
        assert!(text.contains("CUDAKIT_LIBNVJITLINK"), "{text}");
    }

    #[test]
    fn the_table_binds_every_header_function_once() {
        assert_eq!(NvJitLink::REQUIRED_SYMBOLS, HEADER_SYMBOLS);
        assert!(NvJitLink::OPTIONAL_SYMBOLS.is_empty());
    }
}
