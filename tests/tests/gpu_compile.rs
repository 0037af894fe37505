//! Hardware tests of the compile path: programs compiled for the device,
//! loaded and run; lookups by name expression and `extern "C"` name;
//! function attributes; more than 48 KiB of dynamic shared memory;
//! `__device__`/`__constant__` globals; the JIT's log for a bad PTX; PTX,
//! CUBIN and files; linked programs (two relocatable pieces; the device
//! runtime for a device-side launch); a cache hit with its module load.
//!
//! Every output is poisoned first and checked element by element against a
//! host reference computed from fresh random inputs, drawn from the suite's
//! [`Rng`] (its seed is printed; `CUDAKIT_TEST_SEED` replays it). A check
//! the driver cannot do here (an entry point it lacks) ends its test as not
//! run ([`cudakit_suite::not_run`]), never as a pass.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use cudakit::compile::cache::Cache;
use cudakit::compile::linker::{LinkOptions, Linker};
use cudakit::compile::program::{Arch, Origin, Output, Program};
use cudakit::work::launch::LaunchConfig;
use cudakit::{params, Context, DriverCode, Error, LaunchConfigError};
use cudakit_suite::not_run;
use cudakit_suite::rng::Rng;

fn ctx() -> Context {
    Context::new(0).expect("device 0")
}

/// A float in [-128, 128) with at most 10 significant bits (a multiple of
/// 1/4), so that the kernels' arithmetic (`2x + 1`, `x * a` with `a` of the
/// same kind) is exact and the checks can compare bit for bit.
fn exact_f32(rng: &mut Rng) -> f32 {
    ((rng.next_u64() >> 54) as f32 - 512.0) / 4.0
}

/// A fresh temporary folder, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "cudakit-gpu-compile-{tag}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const NAMED: &str = r#"
namespace ns {
template <int M, int N>
__global__ void gemm_fill(float* c, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = float(M * N) + float(i);
}
}

template <typename T>
__global__ void scale(T* x, T a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}

__global__ void kernel(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = -x[i];
}

extern "C" __global__ void plain(float* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 2.0f * x[i] + 1.0f;
}
"#;

fn named() -> Program {
    Program::new("named.cu", NAMED)
        .name_expression("ns::gemm_fill<128, 64>")
        .name_expression("scale<float>")
        .name_expression("scale<double>")
        .name_expression("&kernel")
        .without_cache()
}

const N: usize = 10_000;

fn random_floats(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n).map(|_| exact_f32(rng)).collect()
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn compiles_for_the_device_and_runs_every_name_expression() {
    let ctx = ctx();
    let (major, minor) = ctx.limits().compute_capability;
    let compiled = named().compile_for(&ctx).unwrap();
    let device_arch = major * 10 + minor;
    if cudakit::compile::program::supported_archs()
        .unwrap()
        .contains(&device_arch)
    {
        assert_eq!(compiled.arch(), Arch::Sm(device_arch));
        assert!(
            compiled.cubin().is_some(),
            "CUBIN for the device by default"
        );
    } else {
        assert!(
            compiled.ptx().is_some(),
            "PTX when NVRTC cannot target the device"
        );
    }
    let module = ctx.load_module(&compiled).unwrap();
    let mut rng = Rng::new();
    let stream = ctx.stream().unwrap();
    let config = LaunchConfig::for_elements(N, 256).unwrap();
    let n = N as u32;

    // A template in a namespace, with the expression spelled differently.
    let gemm = module.function("ns::gemm_fill<128,64>").unwrap();
    assert_eq!(
        gemm.symbol(),
        compiled.lowered_names()["ns::gemm_fill<128, 64>"]
    );
    let c = ctx.alloc::<f32>(N).unwrap();
    c.fill(f32::NAN).unwrap();
    ctx.scope(|s| {
        let p = params![&c, n];
        // SAFETY: gemm_fill writes c[0..n).
        unsafe { s.launch(&stream, &gemm, &config, &p) }
    })
    .unwrap();
    let got = c.to_vec().unwrap();
    for (i, v) in got.iter().enumerate() {
        assert_eq!(*v, (128 * 64) as f32 + i as f32, "gemm_fill[{i}]");
    }

    // Two instantiations of one template.
    let xs = random_floats(&mut rng, N);
    let a = exact_f32(&mut rng);
    let x = ctx.upload(&xs).unwrap();
    let scale_f = module.function("scale<float>").unwrap();
    ctx.scope(|s| {
        let p = params![&x, a, n];
        // SAFETY: scale reads and writes x[0..n).
        unsafe { s.launch(&stream, &scale_f, &config, &p) }
    })
    .unwrap();
    let got = x.to_vec().unwrap();
    for i in 0..N {
        assert_eq!(got[i], xs[i] * a, "scale<float>[{i}]");
    }
    let xd: Vec<f64> = xs.iter().map(|&v| f64::from(v)).collect();
    let ad = f64::from(exact_f32(&mut rng));
    let x64 = ctx.upload(&xd).unwrap();
    let scale_d = module.function("scale<double>").unwrap();
    ctx.scope(|s| {
        let p = params![&x64, ad, n];
        // SAFETY: scale reads and writes x[0..n).
        unsafe { s.launch(&stream, &scale_d, &config, &p) }
    })
    .unwrap();
    let got = x64.to_vec().unwrap();
    for i in 0..N {
        assert_eq!(got[i], xd[i] * ad, "scale<double>[{i}]");
    }

    // `&kernel`, looked up with and without the `&`, and by lowered name.
    let by_expr = module.function("&kernel").unwrap();
    let by_name = module.function("kernel").unwrap();
    let by_symbol = module.function("_Z6kernelPfj").unwrap();
    assert_eq!(by_expr.as_raw(), by_name.as_raw());
    assert_eq!(by_expr.as_raw(), by_symbol.as_raw());
    let x = ctx.upload(&xs).unwrap();
    ctx.scope(|s| {
        let p = params![&x, n];
        // SAFETY: kernel reads and writes x[0..n).
        unsafe { s.launch(&stream, &by_name, &config, &p) }
    })
    .unwrap();
    let got = x.to_vec().unwrap();
    for i in 0..N {
        assert_eq!(got[i], -xs[i], "kernel[{i}]");
    }

    // An extern "C" name needs no name expression.
    let plain = module.function("plain").unwrap();
    assert_eq!(plain.symbol(), "plain");
    let x = ctx.upload(&xs).unwrap();
    ctx.scope(|s| {
        let p = params![&x, n];
        // SAFETY: plain reads and writes x[0..n).
        unsafe { s.launch(&stream, &plain, &config, &p) }
    })
    .unwrap();
    let got = x.to_vec().unwrap();
    for i in 0..N {
        assert_eq!(got[i], 2.0 * xs[i] + 1.0, "plain[{i}]");
    }

    // Neither: a typed error listing what the module knows.
    match module.function("scale<int>") {
        Err(Error::UnknownFunction { name, known }) => {
            assert_eq!(name, "scale<int>");
            for expected in [
                "ns::gemm_fill<128, 64>",
                "scale<float>",
                "scale<double>",
                "&kernel",
            ] {
                assert!(known.iter().any(|k| k == expected), "{known:?}");
            }
        }
        other => panic!("expected UnknownFunction, got {other:?}"),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn function_symbols_list_every_kernel_of_a_module() {
    let ctx = ctx();
    let compiled = named().compile_for(&ctx).unwrap();
    let module = ctx.load_module(&compiled).unwrap();
    // Enumerating a module's kernels needs CUDA 12.4's entry points: on an
    // older driver this test is not run, and says so.
    let symbols = match module.function_symbols() {
        Ok(symbols) => symbols,
        Err(err @ Error::NotSupported { .. }) => not_run(err),
        Err(other) => panic!("{other}"),
    };
    for lowered in compiled.lowered_names().values() {
        assert!(symbols.contains(lowered), "{lowered} not in {symbols:?}");
    }
    assert!(symbols.contains(&"plain".to_owned()), "{symbols:?}");
    // Four kernels: gemm_fill<128,64>, scale<float>, scale<double>, kernel,
    // plus plain; nothing else.
    assert_eq!(symbols.len(), 5, "{symbols:?}");
    // With enumeration, an unknown name's error lists the extern "C"
    // kernels too, which no name expression names.
    match module.function("scale<int>") {
        Err(Error::UnknownFunction { known, .. }) => {
            assert!(known.iter().any(|k| k == "plain"), "{known:?}");
        }
        other => panic!("expected UnknownFunction, got {other:?}"),
    }
}

const SHARED: &str = r#"
extern "C" __global__ void __launch_bounds__(128) shared_reverse(float* out, unsigned n) {
    __shared__ float tile[1024];
    extern __shared__ float dyn[];
    for (unsigned j = threadIdx.x; j < 1024; j += blockDim.x) tile[j] = float(j);
    for (unsigned j = threadIdx.x; j < n; j += blockDim.x) dyn[j] = float(j);
    __syncthreads();
    for (unsigned j = threadIdx.x; j < n; j += blockDim.x) out[j] = dyn[n - 1 - j] + tile[j % 1024];
}
"#;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn attributes_and_dynamic_shared_memory_above_48_kib() {
    let ctx = ctx();
    let (major, minor) = ctx.limits().compute_capability;
    let compiled = Program::new("shared.cu", SHARED)
        .without_cache()
        .compile_for(&ctx)
        .unwrap();
    let module = ctx.load_module(&compiled).unwrap();
    let f = module.function("shared_reverse").unwrap();
    let attrs = f.attributes().unwrap();
    println!("{attrs:?}");
    assert_eq!(attrs.static_shared_bytes, 4096);
    assert!(attrs.registers > 0 && attrs.registers <= 255, "{attrs:?}");
    assert!(
        attrs.max_threads_per_block > 0 && attrs.max_threads_per_block <= 128,
        "__launch_bounds__(128): {attrs:?}"
    );
    assert!(attrs.max_dynamic_shared_bytes <= 48 * 1024, "{attrs:?}");
    assert_eq!(attrs.local_bytes, 0, "{attrs:?}");
    assert_eq!(attrs.binary_version, major * 10 + minor, "{attrs:?}");
    assert!(attrs.ptx_version >= 50, "{attrs:?}");

    let optin = ctx.limits().max_shared_per_block_optin;
    assert!(optin > 48 * 1024, "the device cannot opt in above 48 KiB");
    let bytes: u32 = 100 * 1024;
    f.set_max_dynamic_shared_memory(bytes).unwrap();
    assert_eq!(f.attributes().unwrap().max_dynamic_shared_bytes, bytes);
    // Over the device's opt-in limit minus the static shared memory: typed,
    // before the driver.
    match f.set_max_dynamic_shared_memory(optin - 4096 + 1) {
        Err(Error::LaunchConfig {
            function,
            error: LaunchConfigError::OverLimit { value, limit, .. },
        }) => {
            assert_eq!(function, "shared_reverse");
            assert_eq!(value, u64::from(optin - 4096 + 1));
            assert_eq!(limit, u64::from(optin - 4096));
        }
        other => panic!("expected an over-limit error, got {other:?}"),
    }
    f.set_max_dynamic_shared_memory(optin - 4096).unwrap();

    // The raised limit is usable: 100 KiB of dynamic shared memory.
    let n = bytes / 4;
    let out = ctx.alloc::<f32>(n as usize).unwrap();
    out.fill(f32::NAN).unwrap();
    let stream = ctx.stream().unwrap();
    let config = LaunchConfig::new(1u32, 128u32).shared(bytes);
    ctx.scope(|s| {
        let p = params![&out, n];
        // SAFETY: shared_reverse writes out[0..n) and uses n floats of
        // dynamic shared memory, which the configuration provides.
        unsafe { s.launch(&stream, &f, &config, &p) }
    })
    .unwrap();
    let got = out.to_vec().unwrap();
    for (j, v) in got.iter().enumerate() {
        let want = (n as usize - 1 - j) as f32 + (j % 1024) as f32;
        assert_eq!(*v, want, "out[{j}]");
    }
}

const GLOBALS: &str = r#"
namespace ns {
__device__ float table[64];
__constant__ int factor;
}
extern "C" __device__ unsigned counter;
__device__ unsigned counter;

extern "C" __global__ void apply(float* out) {
    unsigned i = threadIdx.x;
    out[i] = ns::table[i] * float(ns::factor);
    if (i == 0) counter += 1;
}
"#;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn device_and_constant_globals_round_trip() {
    let ctx = ctx();
    let compiled = Program::new("globals.cu", GLOBALS)
        .name_expression("&ns::table")
        .name_expression("&ns::factor")
        .without_cache()
        .compile_for(&ctx)
        .unwrap();
    let module = ctx.load_module(&compiled).unwrap();
    let mut rng = Rng::new();
    let table = module.global::<f32>("&ns::table").unwrap();
    assert_eq!(table.len(), 64);
    assert_eq!(table.byte_len(), 256);
    let same = module.global::<f32>("ns::table").unwrap();
    assert_eq!(table.device_ptr(), same.device_ptr());
    let values = random_floats(&mut rng, 64);
    table.copy_from_host(&values).unwrap();
    assert_eq!(table.to_vec().unwrap(), values);
    let factor = module.global::<i32>("&ns::factor").unwrap();
    assert_eq!(factor.len(), 1);
    let k = rng.i32_in(-7, 7);
    factor.copy_from_host(&[k]).unwrap();
    let mut back = [0i32];
    factor.copy_to_host(&mut back).unwrap();
    assert_eq!(back, [k]);
    let counter = module.global::<u32>("counter").unwrap();
    let start = rng.below(1000) as u32;
    counter.copy_from_host(&[start]).unwrap();

    let f = module.function("apply").unwrap();
    let out = ctx.alloc::<f32>(64).unwrap();
    out.fill(f32::NAN).unwrap();
    let stream = ctx.stream().unwrap();
    ctx.scope(|s| {
        let p = params![&out];
        // SAFETY: apply writes out[0..64) with 64 threads.
        unsafe { s.launch(&stream, &f, &LaunchConfig::new(1u32, 64u32), &p) }
    })
    .unwrap();
    let got = out.to_vec().unwrap();
    for i in 0..64 {
        assert_eq!(got[i], values[i] * k as f32, "out[{i}]");
    }
    assert_eq!(counter.to_vec().unwrap(), vec![start + 1]);

    // Typed errors: a size that is not a whole number of T, an unknown
    // name, a wrong length.
    match module.global::<u64>("&ns::factor") {
        Err(Error::Global { name, reason }) => {
            assert_eq!(name, "&ns::factor");
            assert!(reason.contains("4 bytes"), "{reason}");
        }
        other => panic!("expected Error::Global, got {other:?}"),
    }
    match module.global::<f32>("ns::missing") {
        Err(Error::Global { reason, .. }) => assert!(reason.contains("&ns::table"), "{reason}"),
        other => panic!("expected Error::Global, got {other:?}"),
    }
    assert!(matches!(
        table.copy_from_host(&values[..10]),
        Err(Error::LengthMismatch { .. })
    ));
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_bad_ptx_reports_the_jit_log() {
    let ctx = ctx();
    let ptx = ".version 8.0\n.target sm_90\n.address_size 64\n\n\
               .visible .entry broken()\n{\n\tbogus.instruction.u32 %r1;\n\tret;\n}\n";
    let result = ctx.load_module_image(ptx.as_bytes());
    if let Err(err) = &result {
        println!("load error: {err}");
    }
    match result {
        Err(Error::ModuleLoad { call, code, log }) => {
            assert_eq!(call, "cuModuleLoadDataEx");
            assert_eq!(code, DriverCode::InvalidPtx, "{log}");
            assert!(log.contains("line 7"), "the log names the line: {log}");
            println!("JIT log:\n{log}");
        }
        other => panic!("expected ModuleLoad, got {other:?}"),
    }
    assert!(ctx.poisoned().is_none(), "a bad image is not sticky");
    // Caught before the driver: NULs inside PTX, a truncated CUBIN.
    assert!(matches!(
        ctx.load_module_image(b".version 8.0\0.target sm_90"),
        Err(Error::InteriorNul { .. })
    ));
    let compiled = Program::new("ok.cu", NAMED)
        .output(Output::Cubin)
        .without_cache()
        .compile_for(&ctx)
        .unwrap();
    let cubin = compiled.cubin().expect("Output::Cubin gives a CUBIN");
    assert!(matches!(
        ctx.load_module_image(&cubin[..cubin.len() / 2]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        ctx.load_module_file("/nonexistent/k.cubin"),
        Err(Error::Io { .. })
    ));
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn ptx_cubin_and_files_load_and_run() {
    let ctx = ctx();
    let ptx = named().output(Output::Ptx).compile_for(&ctx).unwrap();
    assert!(ptx.cubin().is_none());
    let from_ptx = ctx.load_module(&ptx).unwrap();
    println!("JIT info log:\n{}", from_ptx.info_log());
    let cubin = named().output(Output::Cubin).compile_for(&ctx).unwrap();
    let dir = TempDir::new("files");
    let path = dir.0.join("named.cubin");
    std::fs::write(&path, cubin.cubin().unwrap()).unwrap();
    let from_file = ctx.load_module_file(&path).unwrap();
    let ptx_path = dir.0.join("named.ptx");
    std::fs::write(&ptx_path, ptx.ptx().unwrap()).unwrap();
    let from_ptx_file = ctx.load_module_file(&ptx_path).unwrap();
    let mut rng = Rng::new();
    let xs = random_floats(&mut rng, N);
    let stream = ctx.stream().unwrap();
    let config = LaunchConfig::for_elements(N, 128).unwrap();
    for module in [&from_ptx, &from_file, &from_ptx_file] {
        let f = module.function("plain").unwrap();
        let x = ctx.upload(&xs).unwrap();
        ctx.scope(|s| {
            let p = params![&x, N as u32];
            // SAFETY: plain reads and writes x[0..n).
            unsafe { s.launch(&stream, &f, &config, &p) }
        })
        .unwrap();
        let got = x.to_vec().unwrap();
        for i in 0..N {
            assert_eq!(
                got[i],
                2.0 * xs[i] + 1.0,
                "{:?}: plain[{i}]",
                module.program()
            );
        }
    }
    // A module from a file knows no name expressions, but lowered names work.
    let lowered = &cubin.lowered_names()["scale<float>"];
    from_file.function(lowered).unwrap();
    assert!(matches!(
        from_file.function("scale<float>"),
        Err(Error::UnknownFunction { .. })
    ));
}

const HELPER: &str = r#"
__device__ float bias = 0.5f;
__device__ float twice(float x) { return 2.0f * x; }
"#;

const MAIN: &str = r#"
__device__ float twice(float x);
extern __device__ float bias;
template <typename T>
__global__ void apply(T* x, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = T(twice(float(x[i])) + bias);
}
"#;

fn pieces(
    ctx: &Context,
    output: Output,
) -> (
    cudakit::compile::program::Compiled,
    cudakit::compile::program::Compiled,
) {
    let helper = Program::new("helper.cu", HELPER)
        .relocatable_device_code(true)
        .output(output)
        .without_cache()
        .compile_for(ctx)
        .unwrap();
    let main = Program::new("main.cu", MAIN)
        .name_expression("apply<float>")
        .relocatable_device_code(true)
        .output(output)
        .without_cache()
        .compile_for(ctx)
        .unwrap();
    (helper, main)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_linked_program_runs() {
    let ctx = ctx();
    let mut rng = Rng::new();
    let stream = ctx.stream().unwrap();
    for output in [Output::Ptx, Output::Cubin] {
        let (helper, main) = pieces(&ctx, output);
        let mut linker = Linker::new(&ctx, &LinkOptions::new()).unwrap();
        linker
            .add_compiled(&helper)
            .unwrap()
            .add_compiled(&main)
            .unwrap();
        assert_eq!(linker.inputs(), ["helper.cu", "main.cu"]);
        let module = linker.complete().unwrap();
        println!("{output:?} link info log:\n{}", module.info_log());
        // The name expression of main.cu carries over to the linked module.
        let f = module.function("apply<float>").unwrap();
        let bias = module.global::<f32>("bias").unwrap();
        assert_eq!(bias.to_vec().unwrap(), vec![0.5]);
        let b = exact_f32(&mut rng);
        bias.copy_from_host(&[b]).unwrap();
        let xs = random_floats(&mut rng, N);
        let x = ctx.upload(&xs).unwrap();
        let config = LaunchConfig::for_elements(N, 256).unwrap();
        ctx.scope(|s| {
            let p = params![&x, N as u32];
            // SAFETY: apply reads and writes x[0..n).
            unsafe { s.launch(&stream, &f, &config, &p) }
        })
        .unwrap();
        let got = x.to_vec().unwrap();
        for i in 0..N {
            assert_eq!(got[i], 2.0 * xs[i] + b, "{output:?}: apply[{i}]");
        }
    }
    // The linked image can be kept and loaded later.
    let (helper, main) = pieces(&ctx, Output::Ptx);
    let mut linker = Linker::new(&ctx, &LinkOptions::new().quiet(true)).unwrap();
    linker
        .add_compiled(&helper)
        .unwrap()
        .add_compiled(&main)
        .unwrap();
    let image = linker.complete_image().unwrap();
    assert!(image.starts_with(b"\x7fELF"));
    let module = ctx.load_module_image(&image).unwrap();
    module
        .function(&main.lowered_names()["apply<float>"])
        .unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn link_errors_carry_the_log() {
    let ctx = ctx();
    let (_, main) = pieces(&ctx, Output::Ptx);
    let mut linker = Linker::new(&ctx, &LinkOptions::new()).unwrap();
    linker.add_compiled(&main).unwrap();
    let result = linker.complete();
    if let Err(err) = &result {
        println!("link error: {err}");
    }
    match result {
        Err(Error::ModuleLoad { call, log, .. }) => {
            assert_eq!(call, "cuLinkComplete");
            assert!(log.contains("twice") || log.contains("bias"), "{log}");
            println!("link log:\n{log}");
        }
        other => panic!("expected a link error, got {other:?}"),
    }
    let mut linker = Linker::new(&ctx, &LinkOptions::new()).unwrap();
    match linker.add_ptx(
        "garbage.ptx",
        ".version 8.0\n.target sm_90\nthis is not ptx\n",
    ) {
        Err(Error::ModuleLoad { call, log, .. }) => {
            assert_eq!(call, "cuLinkAddData_v2");
            assert!(log.contains("garbage.ptx"), "{log}");
        }
        other => panic!("expected a link error, got {other:?}"),
    }
}

const DEVICE_LAUNCH: &str = r#"
__global__ void child(unsigned* out, unsigned n, unsigned k) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = k * i + 1u;
}
extern "C" __global__ void parent(unsigned* out, unsigned n, unsigned k) {
    if (blockIdx.x == 0 && threadIdx.x == 0) child<<<(n + 127) / 128, 128>>>(out, n, k);
}
"#;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_device_side_launch_links_with_cudadevrt() {
    let ctx = ctx();
    let path = cudakit::compile::linker::cudadevrt_path().unwrap_or_else(|err| panic!("{err}"));
    println!("libcudadevrt: {}", path.display());
    let compiled = Program::new("device_launch.cu", DEVICE_LAUNCH)
        .relocatable_device_code(true)
        .without_cache()
        .compile_for(&ctx)
        .unwrap();
    let mut linker = Linker::new(&ctx, &LinkOptions::new()).unwrap();
    linker
        .add_compiled(&compiled)
        .unwrap()
        .add_cudadevrt()
        .unwrap();
    let module = linker.complete().unwrap();
    let parent = module.function("parent").unwrap();
    let mut rng = Rng::new();
    let k = rng.below(1000) as u32 + 2;
    let out = ctx.alloc::<u32>(N).unwrap();
    out.fill(0xDEAD_BEEF).unwrap();
    let stream = ctx.stream().unwrap();
    ctx.scope(|s| {
        let p = params![&out, N as u32, k];
        // SAFETY: parent's child grid writes out[0..n).
        unsafe { s.launch(&stream, &parent, &LaunchConfig::new(1u32, 32u32), &p) }
    })
    .unwrap();
    let got = out.to_vec().unwrap();
    for (i, v) in got.iter().enumerate() {
        assert_eq!(*v, k * i as u32 + 1, "out[{i}]");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn lto_ir_goes_through_nvjitlink() {
    // CUDA 13's LTO-IR is refused by the driver linker
    // (CUDA_ERROR_JIT_COMPILER_NOT_FOUND, measured on the H200); the Linker
    // hands LTO-IR inputs to nvJitLink instead, loaded at run time.
    let ctx = ctx();
    let (helper, main) = pieces(&ctx, Output::LtoIr);
    assert!(helper.lto_ir().is_some() && main.lto_ir().is_some());
    let mut linker = Linker::new(&ctx, &LinkOptions::new().lto(true)).unwrap();
    let added = linker
        .add_compiled(&helper)
        .and_then(|l| l.add_compiled(&main))
        .map(|_| ());
    match added {
        Ok(()) => {}
        Err(Error::JitLinkUnavailable { .. }) => {
            cudakit_suite::not_run("libnvJitLink.so.13 is not on this machine")
        }
        Err(other) => panic!("adding LTO-IR failed: {other}"),
    }
    // The driver linker refuses LTO-IR: the link must have switched.
    assert!(
        linker.uses_nvjitlink(),
        "LTO-IR inputs were added but the link did not switch to nvJitLink"
    );
    let module = linker
        .complete()
        .unwrap_or_else(|e| panic!("linking LTO-IR failed: {e}"));
    println!("LTO-IR link info log:\n{}", module.info_log());
    // The linked kernel runs and computes what the CPU computes.
    let mut rng = Rng::new();
    let stream = ctx.stream().unwrap();
    let f = module.function("apply<float>").unwrap();
    let bias = module.global::<f32>("bias").unwrap();
    assert_eq!(bias.to_vec().unwrap(), vec![0.5]);
    let b = exact_f32(&mut rng);
    bias.copy_from_host(&[b]).unwrap();
    let xs = random_floats(&mut rng, N);
    let x = ctx.upload(&xs).unwrap();
    let config = LaunchConfig::for_elements(N, 256).unwrap();
    ctx.scope(|s| {
        let p = params![&x, N as u32];
        // SAFETY: apply reads and writes x[0..n).
        unsafe { s.launch(&stream, &f, &config, &p) }
    })
    .unwrap();
    let got = x.to_vec().unwrap();
    for i in 0..N {
        assert_eq!(got[i], 2.0 * xs[i] + b, "nvJitLink: apply[{i}]");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn metrics_record_compiles_and_module_loads() {
    let ctx = ctx();
    let before = ctx.metrics();
    let compiled = named().compile_for(&ctx).unwrap();
    let middle = ctx.metrics();
    assert!(middle.compile.count > before.compile.count);
    assert!(middle.compile.bytes >= before.compile.bytes + compiled.binary_bytes() as u64);
    assert!(middle.compile.time > before.compile.time);
    let module = ctx.load_module(&compiled).unwrap();
    let after = ctx.metrics();
    assert!(after.module_load.count > middle.module_load.count);
    assert!(
        after.module_load.bytes
            >= middle.module_load.bytes + compiled.cubin().map_or(0, |c| c.len()) as u64
    );
    drop(module);
    assert!(
        !ctx.drop_errors().iter().any(|e| e.call == "cuModuleUnload"),
        "{:?}",
        ctx.drop_errors()
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_cache_hit_with_its_module_load_is_fast() {
    let ctx = ctx();
    let dir = TempDir::new("cache");
    let cache = Cache::in_dir(&dir.0);
    let program = named();
    let cold = program.compile_for_with(&ctx, &cache).unwrap();
    assert_eq!(cold.origin(), Origin::Nvrtc);
    let mut best = std::time::Duration::MAX;
    for _ in 0..20 {
        let started = Instant::now();
        let hit = program.compile_for_with(&ctx, &cache).unwrap();
        let module = ctx.load_module(&hit).unwrap();
        let f = module.function("scale<float>").unwrap();
        std::hint::black_box(f.as_raw());
        best = best.min(started.elapsed());
        assert_eq!(hit.origin(), Origin::MemoryCache);
    }
    let fresh = Cache::in_dir(&dir.0);
    let started = Instant::now();
    let hit = program.compile_for_with(&ctx, &fresh).unwrap();
    let module = ctx.load_module(&hit).unwrap();
    module.function("scale<float>").unwrap();
    let disk = started.elapsed();
    assert_eq!(hit.origin(), Origin::DiskCache);
    println!(
        "cold compile {:?}; memory hit + load + lookup {best:?} (goal <= 1 ms); disk hit + load + lookup {disk:?}",
        cold.elapsed()
    );
    assert!(best < cold.elapsed());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_linker_records_its_host_storage_and_frees_it() {
    let ctx = ctx();
    let mine = |ctx: &Context| {
        ctx.arena()
            .live()
            .into_iter()
            .filter(|r| r.location.file() == file!())
            .count()
    };
    let before = mine(&ctx);
    let linker = Linker::new(&ctx, &LinkOptions::new()).unwrap();
    assert_eq!(mine(&ctx), before + 1);
    drop(linker);
    assert_eq!(mine(&ctx), before);
    assert!(
        !ctx.drop_errors().iter().any(|e| e.call == "cuLinkDestroy"),
        "{:?}",
        ctx.drop_errors()
    );
}
