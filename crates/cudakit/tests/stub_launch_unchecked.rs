//! On a driver without `cuFuncGetParamInfo` (before CUDA 12.4) the argument
//! check is reported as unavailable, never faked, and launches still work.
//! Runs against the test-only stand-in libcuda built without that entry
//! point; process-global, so in its own test binary.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::{params, Context, LaunchConfig, ParamCheck};

#[test]
fn without_cu_func_get_param_info_the_check_is_reported_unavailable() {
    let path = stub::build_stub("omit-param-info");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    let ctx = Context::new(0).expect("context on the stand-in");
    let cu = cudakit::sys::driver().expect("the stand-in");
    assert!(cu.cuFuncGetParamInfo.is_none());
    assert!(cu.missing_optional().contains(&"cuFuncGetParamInfo"));

    let module = ctx
        .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
        .expect("module");
    let f = module.function("k").expect("function");
    assert_eq!(
        f.param_check().expect("param_check"),
        &ParamCheck::Unavailable
    );
    let buf = ctx.alloc::<f32>(4).expect("alloc");
    let stream = ctx.stream().expect("stream");
    // Any count passes the (unavailable) check; the configuration is still
    // validated.
    // SAFETY: the stand-in runs nothing.
    ctx.scope(|s| unsafe {
        s.launch(&stream, &f, &LaunchConfig::new(1, 32), &params![&buf, 1i32])
    })
    .expect("launch without the check");
    // SAFETY: refused before the driver.
    let err = ctx
        .scope(|s| unsafe { s.launch(&stream, &f, &LaunchConfig::new(1, 4096), &params![&buf]) })
        .unwrap_err();
    assert!(matches!(err, cudakit::Error::LaunchConfig { .. }), "{err}");
    drop(f);
    drop((buf, stream, module));
    assert!(ctx.leak_report().is_empty());
}
