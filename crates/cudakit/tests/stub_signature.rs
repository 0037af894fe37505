//! Launch arguments checked by C type, with the real NVRTC and the
//! test-only stand-in libcuda: kernels are compiled to PTX by NVRTC, loaded
//! into the stand-in (which accepts any image and records every launch), and
//! each mismatch of issue 25's "Bad input" list is refused before
//! `cuLaunchKernel`: the stand-in records no launch. The matching argument
//! is launched each time, so a check that refused everything would fail.
//!
//! Process-global (`CUDAKIT_LIBCUDA`), so in its own test binary and one
//! test function. Needs libnvrtc (`CUDAKIT_LIBNVRTC`), as `compile.rs` does.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::compile::program::{Arch, Output, Program};
use cudakit::compile::signature::SignatureSource;
use cudakit::{params, Context, Error, LaunchConfig, ParamList};

const SOURCE: &str = r#"
struct Params { float a; int b; };
struct Other { int x; float y; };

__global__ void takes_float(float x, float* out) { out[0] = x; }
__global__ void takes_int(int x, float* out) { out[0] = float(x); }
__global__ void takes_double_ptr(double* p, int n) { if (n) p[0] = 1.0; }
__global__ void takes_params(Params p, float* out) { out[0] = p.a + float(p.b); }
__global__ void takes_ll(long long v, float* out) { out[0] = float(v); }
__global__ void takes_const(const float* in, float* out) { out[0] = in[0]; }

__global__ void ov(float* p, int n) { if (n) p[0] = 1.0f; }
__global__ void ov(double* p, int n) { if (n) p[0] = 2.0; }

namespace app {
template <typename T>
__global__ void transposeNaive(T* out, const T* in, int w, int h) {
    if (w * h) out[0] = in[0];
}
}

extern "C" __global__ void c_saxpy(float a, const float* x, float* y, int n) {
    if (n) y[0] = a * x[0];
}
"#;

cudakit::device_struct! {
    struct Params { a: f32, b: i32 }
}
cudakit::device_struct! {
    struct Other { x: i32, y: f32 }
}
cudakit::device_struct! {
    /// The right layout under another Rust name, declared as `Params`.
    struct Mine as "Params" { a: f32, b: i32 }
}

struct Recorder {
    lib: libloading::Library,
}

impl Recorder {
    fn set_params(&self, layout: &[(usize, usize)]) {
        let flat: Vec<usize> = layout.iter().flat_map(|&(o, s)| [o, s]).collect();
        // SAFETY: the stand-in exports this function with this signature.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(*const usize, usize)>(b"stub_set_params\0")
        }
        .expect("stub_set_params");
        // SAFETY: `flat` holds 2 * layout.len() usizes.
        unsafe { f(flat.as_ptr(), layout.len()) };
    }

    fn launches(&self) -> u64 {
        // SAFETY: as above.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn() -> u64>(b"stub_launch_count\0")
        }
        .expect("stub_launch_count");
        // SAFETY: no arguments.
        unsafe { f() }
    }
}

#[test]
fn every_bad_input_of_issue_25_is_refused_before_the_driver() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let rec = Recorder { lib };

    let compiled = Program::new("sig.cu", SOURCE)
        .arch(Arch::Sm(90))
        .output(Output::Ptx)
        .name_expression("app::transposeNaive<float>")
        .name_expression("static_cast<void(*)(double*, int)>(ov)")
        .compile()
        .expect("NVRTC compiles the kernels");
    let ctx = Context::new(0).expect("context on the stand-in");
    let module = ctx.load_module(&compiled).expect("module");
    assert!(module.ptx_entries().is_some(), "the module keeps its PTX");
    let stream = ctx.stream().expect("stream");
    let f32s = ctx.alloc::<f32>(4).expect("alloc");
    let f64s = ctx.alloc::<f64>(4).expect("alloc");
    let cfg = LaunchConfig::new(1, 1);

    // Launches `p` on `f`, returning the error, and checks the stand-in
    // recorded a launch exactly when there was none.
    let launch = |f: &cudakit::Function<'_>, p: &ParamList<'_>| -> Option<Error> {
        let before = rec.launches();
        // SAFETY: the stand-in runs nothing.
        let result = ctx.scope(|s| unsafe { s.launch(&stream, f, &cfg, p) });
        let after = rec.launches();
        match result {
            Ok(()) => {
                assert_eq!(after, before + 1, "{}: launched", f.name());
                None
            }
            Err(err) => {
                assert_eq!(after, before, "{}: refused before cuLaunchKernel", f.name());
                Some(err)
            }
        }
    };
    let refused = |err: Option<Error>, index: usize, expected: &str, got: &str| match err {
        Some(Error::ArgumentType {
            index: i,
            expected: e,
            got: g,
            ..
        }) => assert_eq!((i, e.as_str(), g.as_str()), (index, expected, got)),
        other => panic!("expected ArgumentType for {expected}, got {other:?}"),
    };

    // float given i32 (then the f32 it takes).
    rec.set_params(&[(0, 4), (8, 8)]);
    let f = module
        .function("takes_float")
        .expect("plain name of a C++ kernel");
    assert_eq!(f.symbol(), "_Z11takes_floatfPf");
    assert_eq!(f.signature().source(), SignatureSource::Mangled);
    refused(launch(&f, &params![3i32, &f32s]), 0, "float", "i32");
    let err = launch(&f, &params![3i32, &f32s]).unwrap();
    assert_eq!(
        err.to_string(),
        "takes_float: parameter 0: kernel takes 'float', got i32"
    );
    assert!(launch(&f, &params![3.0f32, &f32s]).is_none());
    // The audit table names both sides.
    let table = f.describe_params(&params![3.0f32, &f32s]);
    assert!(table.contains("f32 -> float"), "{table}");
    assert!(table.contains("DeviceBuffer<f32> -> float*"), "{table}");
    assert!(table.contains("from the mangled name"), "{table}");

    // int given u32, where the C type is signed.
    let f = module.function("takes_int").unwrap();
    refused(launch(&f, &params![3u32, &f32s]), 0, "int", "u32");
    assert!(launch(&f, &params![3i32, &f32s]).is_none());

    // double* given a buffer of f32.
    rec.set_params(&[(0, 8), (8, 4)]);
    let f = module.function("takes_double_ptr").unwrap();
    refused(
        launch(&f, &params![&f32s, 1i32]),
        0,
        "double*",
        "DeviceBuffer<f32>",
    );
    assert!(launch(&f, &params![&f64s, 1i32]).is_none());
    // The raw escape passes the bytes unchecked (but sized).
    let mut raw = ParamList::new();
    // SAFETY: the stand-in runs nothing; on a GPU this would be the caller's
    // promise that the address is a live double array.
    unsafe { raw.push_untyped(f64s.device_ptr().as_raw()) };
    raw.push(1i32);
    assert!(launch(&f, &raw).is_none());

    // A struct of the right size but another name.
    rec.set_params(&[(0, 8), (8, 8)]);
    let f = module.function("takes_params").unwrap();
    let other = Other { x: 1, y: 2.0 };
    refused(launch(&f, &params![other, &f32s]), 0, "Params", "Other");
    assert!(launch(&f, &params![Params { a: 1.0, b: 2 }, &f32s]).is_none());
    assert!(launch(&f, &params![Mine { a: 1.0, b: 2 }, &f32s]).is_none());

    // long long given i32 (a type error, before the size check).
    let f = module.function("takes_ll").unwrap();
    refused(launch(&f, &params![3i32, &f32s]), 0, "long long", "i32");
    assert!(launch(&f, &params![3i64, &f32s]).is_none());

    // const float* takes any f32 buffer, and not an f64 one.
    let f = module.function("takes_const").unwrap();
    assert!(launch(&f, &params![&f32s, &f32s]).is_none());
    refused(
        launch(&f, &params![&f64s, &f32s]),
        0,
        "const float*",
        "DeviceBuffer<f64>",
    );

    // The overload trap: a plain name that both overloads have is an error
    // listing both; the double* overload, named by its expression, refuses
    // an f32 buffer.
    rec.set_params(&[(0, 8), (8, 4)]);
    match module.function("ov") {
        Err(Error::AmbiguousFunction { name, candidates }) => {
            assert_eq!(name, "ov");
            assert_eq!(candidates.len(), 2, "{candidates:?}");
            assert!(candidates.iter().any(|c| c.contains("ov(float*, int)")));
            assert!(candidates.iter().any(|c| c.contains("ov(double*, int)")));
        }
        other => panic!("expected AmbiguousFunction, got {other:?}"),
    }
    let f = module
        .function("static_cast<void(*)(double*, int)>(ov)")
        .expect("the double* overload by its name expression");
    assert_eq!(f.symbol(), "_Z2ovPdi");
    refused(
        launch(&f, &params![&f32s, 4i32]),
        0,
        "double*",
        "DeviceBuffer<f32>",
    );
    assert!(launch(&f, &params![&f64s, 4i32]).is_none());

    // A template kernel in a namespace, by its plain name and by its
    // qualified one.
    rec.set_params(&[(0, 8), (8, 8), (16, 4), (20, 4)]);
    let f = module.function("transposeNaive").expect("plain name");
    let g = module.function("app::transposeNaive").expect("qualified");
    assert_eq!(f.symbol(), g.symbol());
    assert_eq!(
        f.signature().to_string(),
        "void app::transposeNaive<float>(float*, const float*, int, int)"
    );
    refused(
        launch(&f, &params![&f32s, &f64s, 2i32, 2i32]),
        1,
        "const float*",
        "DeviceBuffer<f64>",
    );
    assert!(launch(&f, &params![&f32s, &f32s, 2i32, 2i32]).is_none());

    // extern "C" through PTX: float given i32 is caught, int given u32 is
    // not (PTX writes both as .u32) until the signature is declared.
    rec.set_params(&[(0, 4), (8, 8), (16, 8), (24, 4)]);
    let f = module.function("c_saxpy").unwrap();
    assert_eq!(f.signature().source(), SignatureSource::Ptx);
    refused(
        launch(&f, &params![2i32, &f32s, &f32s, 4i32]),
        0,
        ".f32 (PTX)",
        "i32",
    );
    assert!(launch(&f, &params![2.0f32, &f32s, &f32s, 4u32]).is_none());
    let f = module
        .function_with_signature("c_saxpy", "float a, const float* x, float* y, int n")
        .expect("declared signature agrees with the PTX");
    assert_eq!(f.signature().source(), SignatureSource::Declared);
    refused(
        launch(&f, &params![2.0f32, &f32s, &f32s, 4u32]),
        3,
        "int",
        "u32",
    );
    refused(
        launch(&f, &params![2.0f32, &f64s, &f32s, 4i32]),
        1,
        "const float*",
        "DeviceBuffer<f64>",
    );
    assert!(launch(&f, &params![2.0f32, &f32s, &f32s, 4i32]).is_none());
    for (bad, why) in [
        ("float, const float*, float*, double", "parameter 3"),
        ("float, const float*, float*", "declared"),
        (
            "float, const float*, float*, Box<int>",
            "template arguments",
        ),
    ] {
        match module.function_with_signature("c_saxpy", bad) {
            Err(err @ Error::DeclaredSignature { .. }) => {
                assert!(err.to_string().contains(why), "{bad}: {err}")
            }
            other => panic!("{bad}: expected DeclaredSignature, got {other:?}"),
        }
    }

    // Graph kernel nodes get the same check, before the driver.
    rec.set_params(&[(0, 4), (8, 8)]);
    let f = module.function("takes_float").unwrap();
    let mut graph = ctx.graph().expect("graph");
    // SAFETY: refused before the driver.
    match unsafe { graph.add_kernel(&f, &cfg, &params![3i32, &f32s], &[]) } {
        Err(Error::ArgumentType { index: 0, .. }) => {}
        other => panic!("graph node: expected ArgumentType, got {other:?}"),
    }
    // SAFETY: the stand-in runs nothing.
    let good = unsafe { graph.add_kernel(&f, &cfg, &params![3.0f32, &f32s], &[]) };
    assert!(
        !matches!(good, Err(Error::ArgumentType { .. })),
        "a matching node passes the check: {good:?}"
    );
    drop(graph);

    // The context stays usable after every refusal.
    assert!(launch(&f, &params![1.5f32, &f32s]).is_none());
}
