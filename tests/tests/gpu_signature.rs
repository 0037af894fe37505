//! Hardware tests of the argument type check (issue 25): every builtin
//! pairing of a Rust scalar with a C parameter type, launched for real where
//! it matches (each output element compared with the value sent) and
//! refused before the driver where it does not; template kernels in
//! namespaces, found by their plain names; CUDA vector types; `extern "C"`
//! kernels checked through their PTX and through a declared signature; the
//! overload trap; graph kernel nodes and their updates. Every refusal leaves
//! the context usable.

use std::sync::{Mutex, MutexGuard};

use cudakit::compile::module::Module;
use cudakit::compile::program::{Output, Program};
use cudakit::compile::signature::SignatureSource;
use cudakit::{
    params, Bf16, Context, DeviceBuffer, DeviceCopy, Error, Function, LaunchConfig, ParamList, F16,
};
use cudakit_suite::rng::Rng;

fn lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn ctx() -> Context {
    Context::new(0).expect("device 0")
}

/// The C types of the pairing table, with the Rust type that matches each.
/// `__half` and `__nv_bfloat16` are declared here as the 2-byte structs
/// they are (NVRTC has no cuda_fp16.h built in): they mangle as in CUDA's
/// headers.
const STORE_TYPES: [&str; 15] = [
    "signed char",
    "char",
    "unsigned char",
    "short",
    "unsigned short",
    "int",
    "unsigned int",
    "long",
    "long long",
    "unsigned long",
    "unsigned long long",
    "float",
    "double",
    "__half",
    "__nv_bfloat16",
];

const KERNELS: &str = r#"
struct __align__(2) __half { unsigned short bits; };
struct __align__(2) __nv_bfloat16 { unsigned short bits; };

namespace sig {
template <typename T>
__global__ void store(T v, T* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v;
}
}

namespace outer { namespace inner {
template <typename T>
__global__ void axpy(T a, const T* x, T* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
} }

__global__ void vec4(float4 v, const float4* in, float4* out, int2 shape) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < shape.x * shape.y) {
        float4 a = in[i];
        out[i] = make_float4(a.x + v.x, a.y + v.y, a.z + v.z, a.w + v.w);
    }
}

__global__ void ov(float* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = 1.0f;
}
__global__ void ov(double* p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) p[i] = 2.0;
}

extern "C" __global__ void c_saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;

/// The module, compiled to PTX (so `extern "C"` kernels are checked
/// through it), with every template instance the tests use.
fn module(ctx: &Context) -> Module<'_> {
    let mut p = Program::new("signature.cu", KERNELS)
        .output(Output::Ptx)
        .name_expression("outer::inner::axpy<float>")
        .name_expression("static_cast<void(*)(float*, int)>(ov)")
        .name_expression("static_cast<void(*)(double*, int)>(ov)");
    for t in STORE_TYPES {
        p = p.name_expression(format!("sig::store<{t}>"));
    }
    let compiled = p.compile_for(ctx).expect("compile signature.cu");
    ctx.load_module(&compiled).expect("load signature.cu")
}

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig::for_elements(n, 128).unwrap()
}

/// Launches and synchronizes.
fn launch(
    ctx: &Context,
    f: &Function<'_>,
    config: &LaunchConfig,
    p: &ParamList<'_>,
) -> cudakit::Result<()> {
    let stream = ctx.stream()?;
    // SAFETY: every kernel here stays within `n` elements of its buffers,
    // which the callers size to `n`.
    ctx.scope(|s| unsafe { s.launch(&stream, f, config, p) })
}

fn assert_refused(what: &str, result: cudakit::Result<()>, index: usize) {
    match result {
        Err(Error::ArgumentType { index: i, .. }) if i == index => {}
        other => panic!("{what}: expected ArgumentType at {index}, got {other:?}"),
    }
}

/// One Rust scalar: its name and a random value.
trait Sample: DeviceCopy + PartialEq + std::fmt::Debug {
    const NAME: &'static str;
    fn random(rng: &mut Rng) -> Self;
}

macro_rules! samples {
    ($($t:ty => $name:literal, |$r:ident| $random:expr;)*) => {$(
        impl Sample for $t {
            const NAME: &'static str = $name;
            fn random($r: &mut Rng) -> Self { $random }
        }
    )*};
}

samples! {
    i8 => "i8", |r| r.next_u64() as i8;
    u8 => "u8", |r| r.next_u64() as u8;
    i16 => "i16", |r| r.next_u64() as i16;
    u16 => "u16", |r| r.next_u64() as u16;
    i32 => "i32", |r| r.next_u64() as i32;
    u32 => "u32", |r| r.next_u64() as u32;
    i64 => "i64", |r| r.next_u64() as i64;
    u64 => "u64", |r| r.next_u64();
    f32 => "f32", |r| r.f32_sym();
    f64 => "f64", |r| r.f64_sym();
    F16 => "F16", |r| r.f16_sym();
    Bf16 => "Bf16", |r| r.bf16_sym();
}

/// Which Rust scalar each C type of [`STORE_TYPES`] takes: its own; `long`
/// and `long long` both take `i64`; `unsigned short` also takes the bits
/// of `F16` and `Bf16`.
fn takes(c_type: &str, rust: &str) -> bool {
    matches!(
        (c_type, rust),
        ("signed char" | "char", "i8")
            | ("unsigned char", "u8")
            | ("short", "i16")
            | ("unsigned short", "u16" | "F16" | "Bf16")
            | ("int", "i32")
            | ("unsigned int", "u32")
            | ("long" | "long long", "i64")
            | ("unsigned long" | "unsigned long long", "u64")
            | ("float", "f32")
            | ("double", "f64")
            | ("__half", "F16")
            | ("__nv_bfloat16", "Bf16")
    )
}

/// `sig::store<c_type>` given a value of `V`, its output a buffer of `B`
/// (the C type's own Rust type): launched and checked where it matches,
/// refused where it does not.
fn pairing<V: Sample, B: Sample>(ctx: &Context, m: &Module<'_>, c_type: &str, rng: &mut Rng) {
    let f = m.function(&format!("sig::store<{c_type}>")).unwrap();
    assert_eq!(f.signature().source(), SignatureSource::Mangled);
    let n = rng.range(100, 3000);
    let out: DeviceBuffer<'_, B> = ctx.alloc(n).unwrap();
    out.fill(B::random(rng)).unwrap();
    let before = out.to_vec().unwrap();
    let v = V::random(rng);
    let result = launch(ctx, &f, &cfg(n), &params![v, &out, n as i32]);
    if takes(c_type, V::NAME) {
        result.unwrap_or_else(|e| panic!("{c_type} given {}: {e}", V::NAME));
        // The value arrives bit for bit in every element.
        let bits = |x: &[u8]| x.to_vec();
        // SAFETY: `v` is plain data of `size_of::<V>()` bytes, no padding.
        let sent = bits(unsafe {
            std::slice::from_raw_parts((&v as *const V).cast::<u8>(), std::mem::size_of::<V>())
        });
        for (i, got) in out.to_vec().unwrap().iter().enumerate() {
            // SAFETY: as above, for `B`, the same size as `V`.
            let got = bits(unsafe {
                std::slice::from_raw_parts((got as *const B).cast::<u8>(), std::mem::size_of::<B>())
            });
            assert_eq!(
                got,
                sent,
                "{c_type} given {}: element {i} ({})",
                V::NAME,
                rng.describe()
            );
        }
    } else {
        assert_refused(&format!("{c_type} given {}", V::NAME), result, 0);
        assert_eq!(out.to_vec().unwrap(), before, "{c_type}: nothing ran");
    }
}

macro_rules! every_value {
    ($ctx:expr, $m:expr, $c:expr, $b:ty, $rng:expr) => {{
        pairing::<i8, $b>($ctx, $m, $c, $rng);
        pairing::<u8, $b>($ctx, $m, $c, $rng);
        pairing::<i16, $b>($ctx, $m, $c, $rng);
        pairing::<u16, $b>($ctx, $m, $c, $rng);
        pairing::<i32, $b>($ctx, $m, $c, $rng);
        pairing::<u32, $b>($ctx, $m, $c, $rng);
        pairing::<i64, $b>($ctx, $m, $c, $rng);
        pairing::<u64, $b>($ctx, $m, $c, $rng);
        pairing::<f32, $b>($ctx, $m, $c, $rng);
        pairing::<f64, $b>($ctx, $m, $c, $rng);
        pairing::<F16, $b>($ctx, $m, $c, $rng);
        pairing::<Bf16, $b>($ctx, $m, $c, $rng);
    }};
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn every_builtin_pairing_is_launched_where_it_matches_and_refused_where_not() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let mut rng = Rng::new();
    every_value!(&ctx, &m, "signed char", i8, &mut rng);
    every_value!(&ctx, &m, "char", i8, &mut rng);
    every_value!(&ctx, &m, "unsigned char", u8, &mut rng);
    every_value!(&ctx, &m, "short", i16, &mut rng);
    every_value!(&ctx, &m, "unsigned short", u16, &mut rng);
    every_value!(&ctx, &m, "int", i32, &mut rng);
    every_value!(&ctx, &m, "unsigned int", u32, &mut rng);
    every_value!(&ctx, &m, "long", i64, &mut rng);
    every_value!(&ctx, &m, "long long", i64, &mut rng);
    every_value!(&ctx, &m, "unsigned long", u64, &mut rng);
    every_value!(&ctx, &m, "unsigned long long", u64, &mut rng);
    every_value!(&ctx, &m, "float", f32, &mut rng);
    every_value!(&ctx, &m, "double", f64, &mut rng);
    every_value!(&ctx, &m, "__half", F16, &mut rng);
    every_value!(&ctx, &m, "__nv_bfloat16", Bf16, &mut rng);

    // A buffer of another element type is refused as the pointer (index 1).
    let f = m.function("sig::store<float>").unwrap();
    let doubles = ctx.alloc::<f64>(4).unwrap();
    assert_refused(
        "float* given DeviceBuffer<f64>",
        launch(&ctx, &f, &cfg(4), &params![1.0f32, &doubles, 4i32]),
        1,
    );
    // A plain name that many instances share is an error listing them.
    match m.function("store") {
        Err(Error::AmbiguousFunction { candidates, .. }) => {
            assert_eq!(candidates.len(), STORE_TYPES.len(), "{candidates:?}")
        }
        other => panic!("expected AmbiguousFunction, got {other:?}"),
    }
    assert!(ctx.poisoned().is_none());
    ctx.synchronize().unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_template_kernel_in_nested_namespaces_is_found_by_its_plain_name() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let mut rng = Rng::new();
    let f = m.function("axpy").expect("the one axpy instance");
    assert_eq!(
        f.symbol(),
        m.function("outer::inner::axpy<float>").unwrap().symbol()
    );
    assert_eq!(
        f.signature().to_string(),
        "void outer::inner::axpy<float>(float, const float*, float*, int)"
    );
    let n = rng.range(1000, 20000);
    let (x, y0) = (rng.vec_f32(n), rng.vec_f32(n));
    let a = rng.f32_sym();
    let xd = ctx.upload(&x).unwrap();
    let yd = ctx.upload(&y0).unwrap();
    launch(&ctx, &f, &cfg(n), &params![a, &xd, &yd, n as i32]).unwrap();
    let got = yd.to_vec().unwrap();
    for i in 0..n {
        let want = a * x[i] + y0[i];
        assert!(
            (got[i] - want).abs() <= 1e-5 * want.abs().max(1.0),
            "y[{i}] = {}, want {want} ({})",
            got[i],
            rng.describe()
        );
    }
    // Mismatches, refused before the driver; y is unchanged.
    let xd64 = ctx.upload(&vec![0.0f64; n]).unwrap();
    assert_refused(
        "a given f64",
        launch(&ctx, &f, &cfg(n), &params![1.0f64, &xd, &yd, n as i32]),
        0,
    );
    assert_refused(
        "x given f64s",
        launch(&ctx, &f, &cfg(n), &params![a, &xd64, &yd, n as i32]),
        1,
    );
    assert_refused(
        "n given u32",
        launch(&ctx, &f, &cfg(n), &params![a, &xd, &yd, n as u32]),
        3,
    );
    assert_eq!(yd.to_vec().unwrap(), got);
}

cudakit::device_struct! {
    #[repr(align(16))]
    struct Float4 as "float4" { v: [f32; 4] }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn vector_types_take_arrays_of_their_lanes_or_structs_of_their_name() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let mut rng = Rng::new();
    let f = m.function("vec4").unwrap();
    let (w, h) = (rng.range(10, 100), rng.range(10, 100));
    let n = w * h;
    let input: Vec<[f32; 4]> = (0..n)
        .map(|_| [rng.f32_sym(), rng.f32_sym(), rng.f32_sym(), rng.f32_sym()])
        .collect();
    let v = Float4 {
        v: [rng.f32_sym(), rng.f32_sym(), rng.f32_sym(), rng.f32_sym()],
    };
    let ind = ctx.upload(&input).unwrap();
    let out = ctx.upload(&vec![[f32::NAN; 4]; n]).unwrap();
    let shape = [w as i32, h as i32];
    launch(&ctx, &f, &cfg(n), &params![v, &ind, &out, shape]).unwrap();
    for (i, got) in out.to_vec().unwrap().iter().enumerate() {
        for lane in 0..4 {
            assert_eq!(
                got[lane],
                input[i][lane] + v.v[lane],
                "out[{i}].{lane} ({})",
                rng.describe()
            );
        }
    }
    // int4 bits for a float4, a float2 buffer for a float4*, a uint2 for
    // an int2: refused.
    let ints = [1i32; 4];
    let halves = ctx.alloc::<[f32; 2]>(n).unwrap();
    assert_refused(
        "float4 given [i32; 4]",
        launch(&ctx, &f, &cfg(n), &params![ints, &ind, &out, shape]),
        0,
    );
    assert_refused(
        "float4* given [f32; 2]s",
        launch(&ctx, &f, &cfg(n), &params![v, &halves, &out, shape]),
        1,
    );
    assert_refused(
        "int2 given [u32; 2]",
        launch(
            &ctx,
            &f,
            &cfg(n),
            &params![v, &ind, &out, [w as u32, h as u32]],
        ),
        3,
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn extern_c_kernels_are_checked_through_their_ptx_and_a_declared_signature() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let mut rng = Rng::new();
    let n = rng.range(1000, 20000);
    let (x, y0) = (rng.vec_f32(n), rng.vec_f32(n));
    let a = rng.f32_sym();
    let xd = ctx.upload(&x).unwrap();
    let yd = ctx.upload(&y0).unwrap();

    let f = m.function("c_saxpy").unwrap();
    assert_eq!(f.signature().source(), SignatureSource::Ptx);
    // PTX: a float given an int is caught ...
    assert_refused(
        "a given i32 (PTX)",
        launch(&ctx, &f, &cfg(n), &params![1i32, &xd, &yd, n as i32]),
        0,
    );
    // ... signedness is not (PTX writes int as .u32).
    launch(&ctx, &f, &cfg(n), &params![a, &xd, &yd, n as u32]).unwrap();
    let once: Vec<f32> = (0..n).map(|i| a * x[i] + y0[i]).collect();

    let d = m
        .function_with_signature("c_saxpy", "float a, const float* x, float* y, int n")
        .unwrap();
    assert_eq!(d.signature().source(), SignatureSource::Declared);
    assert_refused(
        "n given u32 (declared)",
        launch(&ctx, &d, &cfg(n), &params![a, &xd, &yd, n as u32]),
        3,
    );
    launch(&ctx, &d, &cfg(n), &params![a, &xd, &yd, n as i32]).unwrap();
    let got = yd.to_vec().unwrap();
    for i in 0..n {
        let want = a * x[i] + once[i];
        assert!(
            (got[i] - want).abs() <= 1e-5 * want.abs().max(1.0),
            "y[{i}] = {}, want {want} ({})",
            got[i],
            rng.describe()
        );
    }
    // A declaration the PTX contradicts is refused at lookup.
    assert!(matches!(
        m.function_with_signature("c_saxpy", "double a, const float* x, float* y, int n"),
        Err(Error::DeclaredSignature { .. })
    ));
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_overload_trap_is_refused_and_each_overload_runs_with_its_own_buffer() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let mut rng = Rng::new();
    let n = rng.range(100, 5000);
    assert!(matches!(
        m.function("ov"),
        Err(Error::AmbiguousFunction { .. })
    ));
    let for_f32 = m.function("static_cast<void(*)(float*, int)>(ov)").unwrap();
    let for_f64 = m
        .function("static_cast<void(*)(double*, int)>(ov)")
        .unwrap();
    let f32s = ctx.upload(&vec![-1.0f32; n]).unwrap();
    let f64s = ctx.upload(&vec![-1.0f64; n]).unwrap();
    // The seed's trap: the double* overload given an f32 buffer.
    assert_refused(
        "ov(double*) given f32s",
        launch(&ctx, &for_f64, &cfg(n), &params![&f32s, n as i32]),
        0,
    );
    assert!(
        f32s.to_vec().unwrap().iter().all(|&v| v == -1.0),
        "nothing ran"
    );
    launch(&ctx, &for_f64, &cfg(n), &params![&f64s, n as i32]).unwrap();
    launch(&ctx, &for_f32, &cfg(n), &params![&f32s, n as i32]).unwrap();
    assert!(f64s.to_vec().unwrap().iter().all(|&v| v == 2.0));
    assert!(f32s.to_vec().unwrap().iter().all(|&v| v == 1.0));
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn graph_kernel_nodes_and_their_updates_are_checked_like_launches() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let mut rng = Rng::new();
    let f = m.function("axpy").unwrap();
    let n = rng.range(1000, 20000);
    let (x, y0) = (rng.vec_f32(n), rng.vec_f32(n));
    let (a, b) = (rng.f32_sym(), rng.f32_sym());
    let xd = ctx.upload(&x).unwrap();
    let yd = ctx.upload(&y0).unwrap();
    let x64 = ctx.alloc::<f64>(n).unwrap();
    let stream = ctx.stream().unwrap();
    let mut g = ctx.graph().unwrap();
    // SAFETY: refused before the driver.
    let bad = unsafe { g.add_kernel(&f, &cfg(n), &params![a, &x64, &yd, n as i32], &[]) };
    assert!(
        matches!(bad, Err(Error::ArgumentType { index: 1, .. })),
        "{bad:?}"
    );
    // SAFETY: axpy reads and writes n floats.
    let node = unsafe { g.add_kernel(&f, &cfg(n), &params![a, &xd, &yd, n as i32], &[]) }.unwrap();
    let mut exec = g.instantiate(Default::default()).unwrap();
    ctx.scope(|s| s.launch_graph(&stream, &exec)).unwrap();
    // SAFETY: refused before the driver.
    let bad = unsafe { exec.set_kernel_params(node, &f, &cfg(n), &params![a, &xd, &yd, n as u64]) };
    assert!(
        matches!(bad, Err(Error::ArgumentType { index: 3, .. })),
        "{bad:?}"
    );
    // SAFETY: as above.
    unsafe { exec.set_kernel_params(node, &f, &cfg(n), &params![b, &xd, &yd, n as i32]) }.unwrap();
    ctx.scope(|s| s.launch_graph(&stream, &exec)).unwrap();
    let got = yd.to_vec().unwrap();
    for i in 0..n {
        let want = b * x[i] + (a * x[i] + y0[i]);
        assert!(
            (got[i] - want).abs() <= 1e-4 * want.abs().max(1.0),
            "y[{i}] = {}, want {want} ({})",
            got[i],
            rng.describe()
        );
    }
    drop(exec);
    assert!(ctx.poisoned().is_none());
}
