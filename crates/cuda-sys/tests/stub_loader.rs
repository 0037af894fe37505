//! The loader and the driver table against the test-only stand-in libcuda.

mod support;

use std::ffi::c_char;
use std::ptr;

use cuda_sys::{CUdeviceptr, CUresult, Driver, LoadError};

#[test]
fn the_table_resolves_the_versioned_symbols_of_the_stand_in() {
    let path = support::stub::build_stub("");
    // SAFETY: the stand-in exports the table's symbols with C-compatible
    // signatures (see tests/stub-libcuda).
    let cu = unsafe { Driver::load_from(path.to_str().unwrap()) }.expect("load the stand-in");

    let mut version = 0;
    // SAFETY: a valid out-pointer.
    let rc = unsafe { (cu.cuDriverGetVersion)(&mut version) };
    assert_eq!(rc, CUresult::CUDA_SUCCESS);
    assert_eq!(version, 13000);

    // cuMemAlloc is exported by the stand-in only as cuMemAlloc_v2, by a
    // hand-written recorder that hands out addresses from 0xD000_0000; had
    // the table named another symbol, a generated no-op would answer 801.
    let mut dptr: CUdeviceptr = 0;
    // SAFETY: a valid out-pointer and a non-zero size.
    let rc = unsafe { (cu.cuMemAlloc)(&mut dptr, 1000) };
    assert_eq!(rc, CUresult::CUDA_SUCCESS);
    assert_eq!(dptr, 0xD000_0000);
    // SAFETY: frees what the stand-in handed out.
    let rc = unsafe { (cu.cuMemFree)(dptr) };
    assert_eq!(rc, CUresult::CUDA_SUCCESS);

    // Optional entry points the library exports are resolved.
    assert!(cu.cuFuncGetParamInfo.is_some());
    assert!(
        cu.missing_optional().is_empty(),
        "{:?}",
        cu.missing_optional()
    );
}

#[test]
fn a_missing_required_symbol_is_a_typed_error_naming_it() {
    let path = support::stub::build_stub("omit-mem-alloc");
    let path = path.to_str().unwrap();
    // SAFETY: as above; the load is expected to fail before any call.
    let err = unsafe { Driver::load_from(path) }.unwrap_err();
    match &err {
        LoadError::MissingSymbol {
            library,
            path: p,
            symbol,
            reason,
        } => {
            assert_eq!(*library, "libcuda");
            assert_eq!(p, path);
            assert_eq!(*symbol, "cuMemAlloc_v2");
            assert!(reason.contains("cuMemAlloc_v2"), "{reason}");
        }
        other => panic!("expected MissingSymbol, got {other:?}"),
    }
    assert!(err
        .to_string()
        .contains("missing required symbol `cuMemAlloc_v2`"));
}

#[test]
fn an_explicit_path_that_does_not_exist_is_reported() {
    // SAFETY: nothing is opened.
    let err = unsafe { Driver::load_from("/nonexistent/libcuda.so.1") }.unwrap_err();
    let LoadError::NotFound { attempts, .. } = err else {
        panic!("expected NotFound")
    };
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].candidate, "/nonexistent/libcuda.so.1");
}

/// The stand-in implements no `cuGetErrorName`/`cuGetErrorString`: its
/// generated no-ops answer CUDA_ERROR_NOT_SUPPORTED and write nothing. The
/// safe layer's lookup of unknown codes must then fall back to its own text
/// (tested in cudakit's `error::codes`); this checks the premise.
#[test]
fn the_stand_in_does_not_name_error_codes() {
    let path = support::stub::build_stub("");
    // SAFETY: as above.
    let cu = unsafe { Driver::load_from(path.to_str().unwrap()) }.expect("load the stand-in");
    for get in [cu.cuGetErrorName, cu.cuGetErrorString] {
        let mut out: *const c_char = ptr::null();
        // SAFETY: the code is passed by value and `out` is a valid
        // out-pointer; the stand-in's no-op ignores both.
        let rc = unsafe { get(CUresult(1001), &mut out) };
        assert_eq!(rc, CUresult::CUDA_ERROR_NOT_SUPPORTED);
        assert!(out.is_null());
    }
}
