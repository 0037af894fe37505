//! Linking and device-side features (issue 13): LTO through nvJitLink (two
//! programs sharing a device function across modules, LTO-IR mixed with
//! CUBIN, against the driver linker's non-LTO link of the same sources),
//! dynamic parallelism two levels deep (fire-and-forget and tail launches,
//! libcudadevrt.a found at run time), constant memory through
//! `Module::global`, and the error cases.
//!
//! Tests marked "needs libnvJitLink" run without a GPU (nvJitLink links on
//! the host): `CUDAKIT_LIBNVJITLINK=.../libnvJitLink.so.13 cargo test
//! --test gpu_linking -- --include-ignored nvjitlink_`.

use std::time::{Duration, Instant};

use cudakit::compile::devrt::device_runtime_path;
use cudakit::compile::linker::{LinkOptions, Linker};
use cudakit::compile::nvjitlink::{JitLink, JitLinkInput};
use cudakit::compile::program::{Arch, Compiled, Output, Program};
use cudakit::error::JitLinkCode;
use cudakit::work::launch::LaunchConfig;
use cudakit::{params, Context, Error};
use cudakit_suite::reference::POISON_U32;
use cudakit_suite::rng::Rng;

fn ctx() -> Context {
    Context::new(0).expect("device 0")
}

/// The shared device function, in its own program.
const POLY: &str = r#"
__device__ float poly(float x, const float* c, int degree) {
    float acc = 0.0f;
    for (int j = degree; j >= 0; --j) acc = acc * x + c[j];
    return acc;
}
"#;

/// The kernel, calling `poly` from the other module.
const EVAL: &str = r#"
__device__ float poly(float x, const float* c, int degree);
extern "C" __global__ void eval(const float* x, const float* c, int degree, float* out, int n, int reps) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    float acc = 0.0f;
    for (int r = 0; r < reps; ++r) acc += poly(v + (float)r * 1e-3f, c, degree);
    out[i] = acc;
}
"#;

fn compile(name: &str, src: &str, arch: Arch, output: Output) -> Compiled {
    Program::new(name, src)
        .arch(arch)
        .relocatable_device_code(true)
        .output(output)
        .without_cache()
        .compile()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn arch_of(ctx: &Context) -> Arch {
    let (major, minor) = ctx.limits().compute_capability;
    Arch::Sm(major * 10 + minor)
}

/// Evaluates on the CPU, in f64, what `eval` computes in f32.
fn eval_reference(x: &[f32], c: &[f32], reps: usize) -> Vec<f64> {
    x.iter()
        .map(|&v| {
            (0..reps)
                .map(|r| {
                    let t = (v + r as f32 * 1e-3) as f64;
                    c.iter().rev().fold(0.0f64, |acc, &cj| acc * t + cj as f64)
                })
                .sum()
        })
        .collect()
}

/// Runs `eval` of `module` and checks every output; returns the kernel
/// time of `rounds` launches.
fn run_eval(ctx: &Context, module: &cudakit::Module<'_>, rng: &mut Rng, rounds: usize) -> Duration {
    let (n, degree, reps) = (1 << 16, 6usize, 64usize);
    let x: Vec<f32> = rng.vec_f32(n).iter().map(|v| v * 0.9).collect();
    let c: Vec<f32> = rng.vec_f32(degree + 1).iter().map(|v| v * 0.5).collect();
    let (xd, cd) = (ctx.upload(&x).unwrap(), ctx.upload(&c).unwrap());
    let out = ctx.alloc::<f32>(n).unwrap();
    out.fill(f32::from_bits(POISON_U32)).unwrap();
    let eval = module.function("eval").unwrap();
    let stream = ctx.stream().unwrap();
    let config = LaunchConfig::for_elements(n, 256).unwrap();
    let launch = |count: usize| {
        ctx.scope(|s| {
            let p = params![&xd, &cd, degree as i32, &out, n as i32, reps as i32];
            for _ in 0..count {
                // SAFETY: eval reads n x, degree + 1 c, writes n outputs.
                unsafe { s.launch(&stream, &eval, &config, &p) }?;
            }
            Ok(())
        })
        .unwrap()
    };
    launch(1);
    let got = out.to_vec().unwrap();
    let want = eval_reference(&x, &c, reps);
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        let tol = 1e-4 * (1.0 + w.abs()) * reps as f64;
        assert!(((g as f64) - w).abs() <= tol, "out[{i}] = {g}, want {w}");
    }
    let t = Instant::now();
    launch(rounds);
    t.elapsed()
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn lto_links_two_programs_sharing_a_device_function_and_runs() {
    let ctx = ctx();
    let mut rng = Rng::new();
    println!("{}", rng.describe());
    let arch = arch_of(&ctx);
    // LTO: both programs as LTO-IR, linked by nvJitLink.
    let poly = compile("poly.cu", POLY, arch, Output::LtoIr);
    let eval = compile("eval.cu", EVAL, arch, Output::LtoIr);
    let mut linker = Linker::new(&ctx, &LinkOptions::new()).unwrap();
    linker.add_compiled(&poly).unwrap();
    assert!(
        linker.uses_nvjitlink(),
        "LTO-IR switches the link to nvJitLink"
    );
    linker.add_compiled(&eval).unwrap();
    let lto = linker.complete().unwrap_or_else(|e| panic!("{e}"));
    println!(
        "nvJitLink {:?}; info log:\n{}",
        cudakit::compile::nvjitlink::version(),
        lto.info_log()
    );
    // Not LTO: the same sources as relocatable CUBIN, linked by the driver.
    let poly_cubin = compile("poly.cu", POLY, arch, Output::Cubin);
    let eval_cubin = compile("eval.cu", EVAL, arch, Output::Cubin);
    let mut linker = Linker::new(&ctx, &LinkOptions::new()).unwrap();
    linker
        .add_compiled(&poly_cubin)
        .unwrap()
        .add_compiled(&eval_cubin)
        .unwrap();
    assert!(!linker.uses_nvjitlink());
    let plain = linker.complete().unwrap();
    let rounds = 50;
    let t_lto = run_eval(&ctx, &lto, &mut rng, rounds);
    let t_plain = run_eval(&ctx, &plain, &mut rng, rounds);
    println!(
        "eval x{rounds}: LTO {t_lto:?}, driver link without LTO {t_plain:?} (LTO/plain = {:.3})",
        t_lto.as_secs_f64() / t_plain.as_secs_f64()
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn lto_ir_mixed_with_cubin_links_through_nvjitlink() {
    let ctx = ctx();
    let mut rng = Rng::new();
    let arch = arch_of(&ctx);
    // The CUBIN first (kept, then replayed into nvJitLink), then LTO-IR.
    let poly = compile("poly.cu", POLY, arch, Output::Cubin);
    let eval = compile("eval.cu", EVAL, arch, Output::LtoIr);
    let mut linker = Linker::new(&ctx, &LinkOptions::new().quiet(true)).unwrap();
    linker.add_compiled(&poly).unwrap();
    assert!(!linker.uses_nvjitlink());
    linker.add_compiled(&eval).unwrap();
    assert!(linker.uses_nvjitlink());
    assert_eq!(linker.inputs(), ["poly.cu", "eval.cu"]);
    let module = linker.complete().unwrap_or_else(|e| panic!("{e}"));
    run_eval(&ctx, &module, &mut rng, 1);
    // An unresolved function is nvJitLink's typed error, with its log.
    let mut linker = Linker::new(&ctx, &LinkOptions::new()).unwrap();
    linker.add_compiled(&eval).unwrap();
    match linker.complete() {
        Err(Error::JitLink { call, code, log }) => {
            println!("{call}: {code}\n{log}");
            assert_eq!(call, "nvJitLinkComplete");
            assert!(log.contains("poly"), "{log}");
        }
        other => panic!("expected an nvJitLink error, got {other:?}"),
    };
}

const TWO_LEVELS: &str = r#"
__global__ void grandchild(unsigned* out, unsigned begin, unsigned end, unsigned k) {
    unsigned i = begin + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < end) out[i] = k * i + 7u;
}
__global__ void child(unsigned* out, unsigned* marks, unsigned n, unsigned k, unsigned chunk) {
    unsigned begin = blockIdx.x * chunk;
    unsigned end = min(n, begin + chunk);
    if (threadIdx.x == 0) {
        // Depth 2, as a tail launch: runs after this child grid completes.
        grandchild<<<(end - begin + 127) / 128, 128, 0, cudaStreamTailLaunch>>>(out, begin, end, k);
        marks[blockIdx.x] = 3u * blockIdx.x + k;
    }
}
extern "C" __global__ void parent(unsigned* out, unsigned* marks, unsigned n, unsigned k, unsigned chunk) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        // Depth 1, fire and forget.
        child<<<(n + chunk - 1) / chunk, 32, 0, cudaStreamFireAndForget>>>(out, marks, n, k, chunk);
    }
}
"#;

fn run_two_levels(ctx: &Context, module: &cudakit::Module<'_>, rng: &mut Rng) {
    let (n, chunk) = (100_003usize, 1000usize);
    let children = n.div_ceil(chunk);
    let k = rng.below(1000) as u32 + 2;
    let out = ctx.alloc::<u32>(n).unwrap();
    let marks = ctx.alloc::<u32>(children).unwrap();
    out.fill(POISON_U32).unwrap();
    marks.fill(POISON_U32).unwrap();
    let parent = module.function("parent").unwrap();
    let stream = ctx.stream().unwrap();
    ctx.scope(|s| {
        let p = params![&out, &marks, n as u32, k, chunk as u32];
        // SAFETY: the grids write out[0..n) and marks[0..children).
        unsafe { s.launch(&stream, &parent, &LaunchConfig::new(1u32, 32u32), &p) }
    })
    .unwrap();
    let got = out.to_vec().unwrap();
    for (i, &v) in got.iter().enumerate() {
        assert_eq!(v, k.wrapping_mul(i as u32).wrapping_add(7), "out[{i}]");
    }
    let got = marks.to_vec().unwrap();
    for (b, &v) in got.iter().enumerate() {
        assert_eq!(v, 3 * b as u32 + k, "marks[{b}]");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn dynamic_parallelism_two_levels_deep_with_the_device_runtime_preset() {
    let ctx = ctx();
    let mut rng = Rng::new();
    println!(
        "libcudadevrt: {}",
        device_runtime_path()
            .unwrap_or_else(|e| panic!("{e}"))
            .display()
    );
    let compiled = Program::new("two_levels.cu", TWO_LEVELS)
        .relocatable_device_code(true)
        .without_cache()
        .compile_for(&ctx)
        .unwrap_or_else(|e| panic!("{e}"));
    // The one-call path: the preset adds libcudadevrt.a.
    let mut linker = Linker::with_device_runtime(&ctx, &LinkOptions::new()).unwrap();
    linker.add_compiled(&compiled).unwrap();
    let module = linker.complete().unwrap_or_else(|e| panic!("{e}"));
    run_two_levels(&ctx, &module, &mut rng);
    // The same through nvJitLink: the relocatable CUBIN and the library.
    let mut link = JitLink::new(arch_of(&ctx), &[]).unwrap();
    link.add(
        JitLinkInput::Cubin,
        "two_levels.cu",
        compiled.cubin().unwrap(),
    )
    .unwrap()
    .add_file(JitLinkInput::Library, device_runtime_path().unwrap())
    .unwrap();
    let image = link.complete().unwrap_or_else(|e| panic!("{e}"));
    let module = ctx.load_module_image(&image).unwrap();
    run_two_levels(&ctx, &module, &mut rng);
    // Without the device runtime the link fails, naming the missing symbol.
    let mut linker = Linker::new(&ctx, &LinkOptions::new()).unwrap();
    linker.add_compiled(&compiled).unwrap();
    match linker.complete() {
        Err(Error::ModuleLoad { call, log, .. }) => {
            println!("{call}:\n{log}");
            assert_eq!(call, "cuLinkComplete");
        }
        other => panic!("expected a link error without libcudadevrt.a, got {other:?}"),
    };
}

const CONSTANTS: &str = r#"
__constant__ unsigned coeffs[256];
__constant__ unsigned offset;
extern "C" __global__ void apply(const unsigned* x, unsigned* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = coeffs[i & 255] * x[i] + offset;
}
"#;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn constant_memory_holds_what_the_host_wrote() {
    let ctx = ctx();
    let mut rng = Rng::new();
    let compiled = Program::new("constants.cu", CONSTANTS)
        .compile_for(&ctx)
        .unwrap();
    let module = ctx.load_module(&compiled).unwrap();
    let coeffs: Vec<u32> = (0..256).map(|_| rng.next_u32()).collect();
    let offset = rng.next_u32();
    let table = module.global::<u32>("coeffs").unwrap();
    assert_eq!((table.len(), table.byte_len()), (256, 1024));
    table.copy_from_host(&coeffs).unwrap();
    module
        .global::<u32>("offset")
        .unwrap()
        .copy_from_host(&[offset])
        .unwrap();
    assert_eq!(table.to_vec().unwrap(), coeffs);
    let n = 10_000usize;
    let x: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let xd = ctx.upload(&x).unwrap();
    let out = ctx.alloc::<u32>(n).unwrap();
    out.fill(POISON_U32).unwrap();
    let apply = module.function("apply").unwrap();
    let stream = ctx.stream().unwrap();
    ctx.scope(|s| {
        let p = params![&xd, &out, n as i32];
        // SAFETY: apply reads n inputs and writes n outputs.
        unsafe { s.launch(&stream, &apply, &LaunchConfig::for_elements(n, 256)?, &p) }
    })
    .unwrap();
    for (i, &v) in out.to_vec().unwrap().iter().enumerate() {
        assert_eq!(
            v,
            coeffs[i & 255].wrapping_mul(x[i]).wrapping_add(offset),
            "out[{i}]"
        );
    }
    // Size mismatches are typed errors.
    assert!(matches!(
        module.global::<[u32; 3]>("coeffs"),
        Err(Error::Global { .. })
    ));
    assert!(matches!(
        module.global::<u64>("offset"),
        Err(Error::Global { .. })
    ));
    assert!(matches!(
        table.copy_from_host(&coeffs[..255]),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(
        module.global::<u32>("no_such"),
        Err(Error::Global { .. })
    ));
    // Over 64 KiB of constants as PTX: the driver's JIT reports the bank.
    let ptx = Program::new("big.cu", BIG_CONSTANTS)
        .output(Output::Ptx)
        .compile_for(&ctx)
        .unwrap();
    match ctx.load_module(&ptx) {
        Err(Error::ModuleLoad { log, .. }) => {
            println!("{log}");
            assert!(log.contains("constant"), "{log}");
        }
        other => panic!("expected the JIT to refuse 68 KB of constants, got {other:?}"),
    };
}

const BIG_CONSTANTS: &str = r#"
__constant__ float big[17000];
extern "C" __global__ void k(float* out) { out[threadIdx.x] = big[threadIdx.x * 500]; }
"#;

/// Needs NVRTC only: ptxas reports the 64 KiB constant bank.
#[test]
fn exceeding_the_constant_bank_is_reported_by_the_compile() {
    let err = Program::new("big.cu", BIG_CONSTANTS)
        .arch(Arch::Sm(90))
        .output(Output::Cubin)
        .without_cache()
        .compile()
        .unwrap_err();
    match &err {
        Error::Compile { log, .. } => {
            assert!(log.contains("too much global constant data"), "{log}");
            assert!(log.contains("0x10000 max"), "{log}");
        }
        other => panic!("expected a compile error, got {other:?}"),
    }
}

#[test]
#[ignore = "needs libnvJitLink"]
fn nvjitlink_links_lto_ir_on_the_host() {
    let poly = compile("poly.cu", POLY, Arch::Sm(90), Output::LtoIr);
    let eval = compile("eval.cu", EVAL, Arch::Sm(90), Output::LtoIr);
    println!(
        "nvJitLink {:?}",
        cudakit::compile::nvjitlink::version().unwrap()
    );
    let mut link = JitLink::new(Arch::Sm(90), &["-lto", "-O3"]).unwrap();
    link.add(JitLinkInput::LtoIr, "poly.cu", poly.lto_ir().unwrap())
        .unwrap()
        .add(JitLinkInput::LtoIr, "eval.cu", eval.lto_ir().unwrap())
        .unwrap();
    assert_eq!(link.options(), ["-arch=sm_90", "-lto", "-O3"]);
    let cubin = link.complete().unwrap();
    assert!(cubin.starts_with(b"\x7fELF"), "a CUBIN is an ELF image");
    assert!(
        cubin.windows(4).any(|w| w == b"eval"),
        "the kernel is in the image"
    );

    // Unresolved: eval without poly.
    let mut link = JitLink::new(Arch::Sm(90), &["-lto"]).unwrap();
    link.add(JitLinkInput::LtoIr, "eval.cu", eval.lto_ir().unwrap())
        .unwrap();
    match link.complete() {
        Err(Error::JitLink { call, code, log }) => {
            println!("{call}: {code}\n{log}");
            assert_eq!(call, "nvJitLinkComplete");
            assert!(log.contains("poly"), "{log}");
        }
        other => panic!("expected an unresolved-symbol error, got {other:?}"),
    }
    // LTO-IR without -lto.
    let mut link = JitLink::new(Arch::Sm(90), &[]).unwrap();
    let outcome = link
        .add(JitLinkInput::LtoIr, "eval.cu", eval.lto_ir().unwrap())
        .map(|_| ());
    let outcome = outcome.and_then(|()| link.complete().map(|_| ()));
    println!("LTO-IR without -lto: {outcome:?}");
    assert!(matches!(outcome, Err(Error::JitLink { .. })), "{outcome:?}");
    // An unknown option.
    match JitLink::new(Arch::Sm(90), &["-no-such-option"]) {
        Err(Error::JitLink { call, code, .. }) => {
            assert_eq!(
                (call, code),
                ("nvJitLinkCreate", JitLinkCode::UnrecognizedOption)
            );
        }
        other => panic!("expected NVJITLINK_ERROR_UNRECOGNIZED_OPTION, got {other:?}"),
    }
    // Garbage as LTO-IR.
    let mut link = JitLink::new(Arch::Sm(90), &["-lto"]).unwrap();
    let garbage = link
        .add(JitLinkInput::LtoIr, "garbage", b"not lto ir")
        .map(|_| ());
    let garbage = garbage.and_then(|()| link.complete().map(|_| ()));
    assert!(matches!(garbage, Err(Error::JitLink { .. })), "{garbage:?}");
}

#[test]
#[ignore = "needs libnvJitLink"]
fn nvjitlink_links_device_launches_with_the_device_runtime_on_the_host() {
    let compiled = compile("two_levels.cu", TWO_LEVELS, Arch::Sm(90), Output::Cubin);
    let devrt = device_runtime_path().unwrap_or_else(|e| panic!("{e}"));
    let mut link = JitLink::new(Arch::Sm(90), &[]).unwrap();
    link.add(
        JitLinkInput::Cubin,
        "two_levels.cu",
        compiled.cubin().unwrap(),
    )
    .unwrap()
    .add_file(JitLinkInput::Library, &devrt)
    .unwrap();
    let cubin = link.complete().unwrap_or_else(|e| panic!("{e}"));
    assert!(cubin.starts_with(b"\x7fELF"));
    // Without the runtime, the device-side launch stays unresolved.
    let mut link = JitLink::new(Arch::Sm(90), &[]).unwrap();
    link.add(
        JitLinkInput::Cubin,
        "two_levels.cu",
        compiled.cubin().unwrap(),
    )
    .unwrap();
    let err = link.complete().unwrap_err();
    println!("{err}");
    assert!(matches!(err, Error::JitLink { .. }), "{err:?}");
}
