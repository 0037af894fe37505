//! The process-global libcuda search, in its own test binary because the
//! result of the first load is kept for the life of the process.

use cuda_sys::LoadError;

/// Without a driver, the search fails with a typed error that lists every
/// candidate tried and why; with one (the GPU machine), it opens
/// libcuda.so.1 by soname and the driver reports CUDA 12 or newer.
#[test]
fn the_libcuda_search_reports_every_candidate_or_finds_the_driver() {
    if std::env::var_os("CUDAKIT_LIBCUDA").is_some() {
        // An explicit path makes it the only candidate: checked elsewhere.
        std::env::remove_var("CUDAKIT_LIBCUDA");
    }
    // Nothing has searched yet, and asking whether it has does not search.
    assert!(cuda_sys::loaded_driver().is_none());
    assert!(cuda_sys::loaded_driver().is_none());
    let outcome = cuda_sys::driver_with_origin();
    assert_eq!(cuda_sys::loaded_driver().is_some(), outcome.is_ok());
    match outcome {
        Err(LoadError::NotFound {
            library,
            attempts,
            hint,
        }) => {
            assert_eq!(library, "libcuda");
            assert_eq!(attempts[0].candidate, "libcuda.so.1");
            assert!(!attempts[0].reason.is_empty());
            assert!(attempts
                .iter()
                .any(|a| a.candidate == "/usr/local/cuda/lib64/libcuda.so.1"));
            assert!(attempts
                .iter()
                .all(|a| !a.candidate.ends_with("libcuda.so")));
            assert!(hint.contains("CUDAKIT_LIBCUDA"));
            // The same error comes back on every later call.
            assert!(matches!(
                cuda_sys::driver(),
                Err(LoadError::NotFound { .. })
            ));
        }
        Err(other) => panic!("unexpected load error: {other}"),
        Ok((cu, loaded)) => {
            let mut version = 0;
            // SAFETY: a valid out-pointer.
            let rc = unsafe { (cu.cuDriverGetVersion)(&mut version) };
            assert_eq!(rc, cuda_sys::CUresult::CUDA_SUCCESS);
            assert!(version >= 12000, "driver version {version}");
            assert!(loaded.candidate.contains("libcuda.so.1"));
        }
    }
}
