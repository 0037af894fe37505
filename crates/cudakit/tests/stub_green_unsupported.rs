//! On a driver without the green-context entry points (before CUDA 12.4),
//! splitting SMs and reading the SM resource are `Error::NotSupported`
//! naming the entry point, and the context stays usable. Runs against the
//! stand-in built without them; process-global, so in its own test binary.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::{Context, Error};

#[test]
fn without_green_context_entry_points_splitting_is_not_supported() {
    let path = stub::build_stub("omit-green");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    let ctx = Context::new(0).expect("context on the stand-in");
    let cu = cudakit::sys::driver().expect("the stand-in");
    assert!(cu.cuGreenCtxCreate.is_none());
    assert!(cu.missing_optional().contains(&"cuGreenCtxCreate"));
    match ctx.split_sms(&[16]) {
        Err(Error::NotSupported {
            needs_driver: "CUDA 12.4",
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    let err = ctx.sm_resource().unwrap_err();
    assert!(
        matches!(
            err,
            Error::NotSupported {
                feature: "cuDeviceGetDevResource",
                needs_driver: "CUDA 12.4"
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("not supported"), "{err}");
    // A stream of the primary context is made as before.
    ctx.stream().expect("stream");
    ctx.alloc::<u32>(4).expect("alloc");
    assert!(ctx.poisoned().is_none());
}
