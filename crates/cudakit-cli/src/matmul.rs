//! `cudakit matmul`: the main job end to end. Compile a GEMM kernel of
//! `kernels/` for the GPU, upload random inputs, run it a number of times
//! timed with events, download the result, check it against the f64 CPU
//! reference of `cudakit_suite::reference` with the tolerance derived there,
//! and print a table of times, GFLOP/s, the error and the verdict.
//!
//! By default the kernel is the fastest verified one for the precision and
//! the device (`cudakit_suite::gemm::fastest`: on sm_90 the wgmma + TMA
//! kernels for bf16/f16/tf32, the FFMA SGEMM and the DMMA DGEMM). The
//! product runs through `cudakit_suite::gemm::Product` (tensor maps, padded
//! rows, the device transpose of B for `--kernel gemm_sm90_tf32_nt`). cuBLAS (`cublasGemmEx`, loaded at run
//! time, optional) runs in the same process on the same device buffers, and
//! its rate and the ratio are printed beside cudakit's whenever it loads.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use cudakit::compile::program::Origin;
use cudakit::{
    Bf16, Compiled, Context, DeviceBuffer, DeviceCopy, Error, PinnedBuffer, Stream, F16, F8E4M3,
    F8E5M2,
};
use cudakit_suite::cublas::{self, Cublas, CublasError, CublasLt};
use cudakit_suite::fp8::{fp8_row_pitch, Fp8, Fp8Gemm};
use cudakit_suite::gemm::{self, Launches, Pad, Precision, Product, Transpose};
use cudakit_suite::kernels::{Elem, MatmulKernel, Signature, MATMUL_KERNELS};
use cudakit_suite::reference::{self, Accumulation, Gemm, Op, Real, Reference, Tolerance};
use cudakit_suite::rng::Rng;

use crate::args::{CliError, Exit, Parser, Token};
use crate::doctor;
use crate::json::Json;
use crate::progress::Progress;
use crate::units;
use crate::Global;

pub(crate) const HELP: &str = "\
Compile a matrix-multiply kernel, upload random inputs, run it, download the
result and verify it against an f64 CPU reference; print compile, HtoD,
kernel and DtoH times, GFLOP/s (TFLOP/s for FP8), the largest error against
its tolerance, and the verdict. C = A*B with A M×K, B K×N, C M×N, row-major
(FP8: B stored N×K, below).

Usage: cudakit matmul [OPTIONS]

Options:
  --m M, --n N, --k K   Matrix sizes (default 2048 each; 1 to 2147483647)
  --size S              Shorthand for --m S --n S --k S
  --dtype T             f32 (default; no tf32), f64, f16, bf16, tf32, e4m3,
                        or e5m2xe4m3 (also e5m2-e4m3: e5m2 A, e4m3 B). f16,
                        bf16, tf32: tensor cores, f32 output; e4m3 and
                        e5m2xe4m3: FP8 tensor cores, f32 output, sm_90 only
  --kernel NAME         Default: the fastest verified kernel for the dtype
                        and the device (on sm_90: sgemm, dmma, wgmma). Short
                        names: naive, tiled, gemm, regblock, sgemm (f32/f64),
                        dmma (f64), mma (f16/bf16), wgmma (f16/bf16/tf32/e4m3/
                        e5m2xe4m3); or a full name from --list, e.g.
                        'matmul_tiled<float, 16>' or gemm_sm90_e4m3_nt
  --compare WHAT        auto (default: cuBLAS's rate from the same run and the
                        ratio, when libcublas.so.13 loads; cuBLASLt's for
                        FP8), cublas (required: exit 2 when it does not
                        load), or none
  --iters I             Timed runs (default 10), after --warmup W (default 1)
                        untimed ones; with a comparison, the kernel's and
                        the library's alternate in rounds of 5 (each led by
                        one untimed run), each side going first in turn
  --pad MODE            auto (default: an f32 SGEMM whose K % 16 != 0 or
                        N % 4 != 0 runs on zero-padded copies of A and B,
                        or of their transposes (C^T = B^T*A^T) where that
                        makes every block a whole tile, made on the device
                        and timed with it, and C is copied back), or off
                        (the kernel alone, its edge paths on every block)
  --seed S              Seed of the inputs (decimal or 0x hex; default fresh)
  --verify MODE         auto (default: every element up to M*N*K = 2^30, else
                        sampled), full, sampled, or none
  --samples N           Random elements a sampled check compares (default
                        100000; the first and last rows and columns come on top)
  --device D            Device ordinal (default 0)
  --list                List the kernels and exit
  --json                Print one JSON object instead of the table
  -h, --help            Show this text

cuBLAS is found like libcuda: CUDAKIT_LIBCUBLAS, the soname libcublas.so.13,
the toolkit folders, pip's nvidia/cu13/lib and nvidia/cublas/lib
(`pip install nvidia-cublas`). f32 runs it with CUBLAS_COMPUTE_32F and the
default math mode (no tf32), tf32 with CUBLAS_COMPUTE_32F_FAST_TF32.

FP8 (e4m3, e5m2xe4m3): A (e4m3, or e5m2) is stored M×K and B (e4m3) N×K,
both K-major, the one order Hopper's wgmma reads 8-bit operands in and the
TN layout cuBLASLt requires for FP8. The inputs are random FP8 values
(uniform in [-1, 1) rounded to the format), so the reference multiplies
exactly what the GPU reads. The product is C = alpha*scale_a*scale_b*A*B^T
with per-tensor scales scale_a = 0.5 and scale_b = 4 (device pointers;
their product is 2, so a scale that is dropped shows), alpha 1, beta 0, and
C poisoned first. The tolerance is that of the FP8 tensor cores' own
accumulation (about 13 bits kept per k32 step: far looser than f32's).
The comparison is cuBLASLt (cublasLtMatmul, TN, the same scales, f32 C,
CUBLASLT_MATMUL_DESC_FAST_ACCUM = 1: the same accumulation as the kernel),
found like cuBLAS: CUDAKIT_LIBCUBLASLT, libcublasLt.so.13, the toolkit
folders, pip's nvidia/cu13/lib and nvidia/cublas/lib.

Exit codes: 0 verified (or --verify none); 1 verification failed, a compile
or driver error (a cuBLAS call failing included), or a dtype or kernel this
device does not support (FP8 off sm_90); 2 no usable GPU, driver or NVRTC
(the doctor's diagnosis is printed), or no cuBLAS (cuBLASLt for FP8) with
--compare cublas; 64 usage error.";

/// The element type asked for: one of `gemm::Precision`'s, matched
/// exhaustively here (`Precision` is `#[non_exhaustive]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dtype {
    F32,
    F64,
    F16,
    Bf16,
    Tf32,
    E4m3,
    E5m2xE4m3,
}

impl Dtype {
    const ALL: [Dtype; 7] = [
        Dtype::F32,
        Dtype::F64,
        Dtype::F16,
        Dtype::Bf16,
        Dtype::Tf32,
        Dtype::E4m3,
        Dtype::E5m2xE4m3,
    ];

    fn name(self) -> &'static str {
        self.precision().name()
    }

    /// The dtype of `kernel`'s inputs (an FP8 kernel's included: a kernel
    /// of a precision the CLI does not know yet is refused by `resolve`).
    fn try_of(kernel: &MatmulKernel) -> Option<Dtype> {
        let p = Precision::of(kernel);
        Dtype::ALL.into_iter().find(|d| d.precision() == p)
    }

    fn precision(self) -> Precision {
        match self {
            Dtype::F32 => Precision::F32,
            Dtype::F64 => Precision::F64,
            Dtype::F16 => Precision::F16,
            Dtype::Bf16 => Precision::Bf16,
            Dtype::Tf32 => Precision::Tf32,
            Dtype::E4m3 => Precision::E4m3,
            Dtype::E5m2xE4m3 => Precision::E5m2xE4m3,
        }
    }

    fn is_fp8(self) -> bool {
        self.precision().is_fp8()
    }

    /// The unit the table gives rates in: (label, GFLOP/s per unit).
    fn rate_unit(self) -> (&'static str, f64) {
        if self.is_fp8() {
            ("TFLOP/s", 1e3)
        } else {
            ("GFLOP/s", 1.0)
        }
    }

    /// How C is computed, for the table's title.
    fn formula(self) -> &'static str {
        if self.is_fp8() {
            "C = alpha*scale_a*scale_b*A*B^T"
        } else {
            "C = A*B"
        }
    }

    /// The kernel a short name stands for with this element type.
    fn alias(self, short: &str) -> Option<&'static str> {
        Some(match (self, short) {
            (Dtype::F32, "naive") => "matmul_naive<float>",
            (Dtype::F32, "tiled") => "matmul_tiled<float, 32>",
            (Dtype::F32, "gemm") => "gemm<float, false, false>",
            (Dtype::F32, "regblock") => "gemm_regblock<float, 128, 128, 8, 8, 8>",
            (Dtype::F64, "naive") => "matmul_naive<double>",
            (Dtype::F64, "tiled") => "matmul_tiled<double, 32>",
            (Dtype::F64, "gemm") => "gemm<double, false, false>",
            (Dtype::F64, "regblock") => "gemm_regblock<double, 64, 64, 8, 4, 4>",
            (Dtype::F32, "sgemm") => "sgemm_128x256",
            (Dtype::F64, "dmma") => "dgemm_dmma_128x128",
            (Dtype::F16, "mma") => "matmul_f16_mma",
            (Dtype::Bf16, "mma") => "matmul_bf16_mma",
            (Dtype::Tf32, "mma") => "matmul_tf32_mma",
            (Dtype::F16, "wgmma") => "gemm_sm90_f16_nn",
            (Dtype::Bf16, "wgmma") => "gemm_sm90_bf16_nn",
            (Dtype::Tf32, "wgmma") => "gemm_sm90_tf32_nn",
            (Dtype::E4m3, "wgmma") => "gemm_sm90_e4m3_nt",
            (Dtype::E5m2xE4m3, "wgmma") => "gemm_sm90_e5m2_e4m3_nt",
            _ => return None,
        })
    }
}

const SHORT_NAMES: &[&str] = &[
    "naive", "tiled", "gemm", "regblock", "sgemm", "dmma", "mma", "wgmma",
];

/// Whether to run cuBLAS beside the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compare {
    /// When it loads.
    Auto,
    /// Required.
    Cublas,
    /// Never.
    None,
}

/// How much of C is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verify {
    Auto,
    Full,
    Sampled,
    None,
}

/// Above this M·N·K, `--verify auto` samples.
const AUTO_FULL_LIMIT: u128 = 1 << 30;

#[derive(Debug)]
struct Options {
    m: usize,
    n: usize,
    k: usize,
    dtype: Option<Dtype>,
    kernel: Option<String>,
    iters: usize,
    warmup: usize,
    seed: Option<u64>,
    verify: Verify,
    samples: usize,
    device: usize,
    list: bool,
    compare: Compare,
    pad: Pad,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            m: 2048,
            n: 2048,
            k: 2048,
            dtype: None,
            kernel: None,
            iters: 10,
            warmup: 1,
            seed: None,
            verify: Verify::Auto,
            samples: reference::SAMPLES,
            device: 0,
            list: false,
            compare: Compare::Auto,
            pad: Pad::Device,
        }
    }
}

const MAX_DIM: u64 = i32::MAX as u64;

fn parse(args: &mut Parser, global: &mut Global) -> Result<Option<Options>, CliError> {
    let mut o = Options::default();
    while let Some(token) = args.next_token() {
        let Token::Flag(flag, attached) = &token else {
            return Err(args.unknown(&token));
        };
        let attached = attached.clone();
        let flag = flag.as_str();
        match flag {
            "--json" => {
                args.no_value(flag, &attached)?;
                global.json = true;
            }
            "--help" | "-h" => return Ok(None),
            "--list" => {
                args.no_value(flag, &attached)?;
                o.list = true;
            }
            "--m" | "--n" | "--k" | "--size" => {
                let v = args.value(flag, attached)?;
                let x = args.number(flag, &v, 1, MAX_DIM)? as usize;
                match flag {
                    "--m" => o.m = x,
                    "--n" => o.n = x,
                    "--k" => o.k = x,
                    _ => (o.m, o.n, o.k) = (x, x, x),
                }
            }
            "--dtype" => {
                let v = args.value(flag, attached)?;
                o.dtype = Some(match v.to_ascii_lowercase().as_str() {
                    "f32" | "float" => Dtype::F32,
                    "f64" | "double" => Dtype::F64,
                    "f16" | "half" => Dtype::F16,
                    "bf16" => Dtype::Bf16,
                    "tf32" => Dtype::Tf32,
                    "e4m3" => Dtype::E4m3,
                    "e5m2xe4m3" | "e5m2-e4m3" => Dtype::E5m2xE4m3,
                    _ => {
                        return Err(args.error(format!(
                            "--dtype expects f32, f64, f16, bf16, tf32, e4m3 or e5m2xe4m3 \
                             (e5m2-e4m3), got {v:?}"
                        )))
                    }
                });
            }
            "--compare" => {
                let v = args.value(flag, attached)?;
                o.compare = match v.to_ascii_lowercase().as_str() {
                    "auto" => Compare::Auto,
                    "cublas" => Compare::Cublas,
                    "none" => Compare::None,
                    _ => {
                        return Err(args
                            .error(format!("--compare expects auto, cublas or none, got {v:?}")))
                    }
                };
            }
            "--kernel" => o.kernel = Some(args.value(flag, attached)?),
            "--pad" => {
                let v = args.value(flag, attached)?;
                o.pad = match v.to_ascii_lowercase().as_str() {
                    "auto" => Pad::Device,
                    "off" => Pad::Off,
                    _ => return Err(args.error(format!("--pad expects auto or off, got {v:?}"))),
                };
            }
            "--iters" => {
                let v = args.value(flag, attached)?;
                o.iters = args.number(flag, &v, 1, 1_000_000)? as usize;
            }
            "--warmup" => {
                let v = args.value(flag, attached)?;
                o.warmup = args.number(flag, &v, 0, 1_000_000)? as usize;
            }
            "--seed" => {
                let v = args.value(flag, attached)?;
                o.seed = Some(args.seed(flag, &v)?);
            }
            "--verify" => {
                let v = args.value(flag, attached)?;
                o.verify = match v.as_str() {
                    "auto" => Verify::Auto,
                    "full" => Verify::Full,
                    "sampled" => Verify::Sampled,
                    "none" => Verify::None,
                    _ => {
                        return Err(args.error(format!(
                            "--verify expects auto, full, sampled or none, got {v:?}"
                        )))
                    }
                };
            }
            "--samples" => {
                let v = args.value(flag, attached)?;
                o.samples = args.number(flag, &v, 1, 100_000_000)? as usize;
            }
            "--device" => {
                let v = args.value(flag, attached)?;
                o.device = args.number(flag, &v, 0, 1024)? as usize;
            }
            _ => return Err(args.unknown(&token)),
        }
    }
    Ok(Some(o))
}

/// Removes whitespace, so `matmul_tiled<float,16>` finds
/// `matmul_tiled<float, 16>`.
fn squeeze(name: &str) -> String {
    name.chars().filter(|c| !c.is_whitespace()).collect()
}

/// The kernel and element type from `--dtype` and `--kernel`, for a device
/// of compute capability `cc` (without `--kernel`: the fastest kernel
/// there, [`gemm::fastest`]).
fn resolve(
    dtype: Option<Dtype>,
    kernel: Option<&str>,
    cc: (u32, u32),
) -> Result<(&'static MatmulKernel, Dtype), String> {
    let short = kernel.map(str::trim).filter(|k| SHORT_NAMES.contains(k));
    let name = match (kernel, short) {
        (None, _) => {
            let dtype = dtype.unwrap_or(Dtype::F32);
            let k = gemm::fastest(dtype.precision(), cc).ok_or_else(|| {
                if dtype.is_fp8() {
                    format!(
                        "{} is not supported on this device (sm_{}{}): the FP8 kernels need \
                         sm_90's FP8 wgmma",
                        dtype.name(),
                        cc.0,
                        cc.1
                    )
                } else {
                    format!(
                        "no kernel computes {} on sm_{}{} (tf32 needs sm_80's tensor cores)",
                        dtype.name(),
                        cc.0,
                        cc.1
                    )
                }
            })?;
            k.name
        }
        (_, Some(short)) => {
            let dtype = dtype.unwrap_or(Dtype::F32);
            dtype.alias(short).ok_or_else(|| {
                let fits: Vec<&str> = SHORT_NAMES
                    .iter()
                    .copied()
                    .filter(|s| dtype.alias(s).is_some())
                    .collect();
                format!(
                    "there is no {short} kernel for {}; for {} use --kernel {}",
                    dtype.name(),
                    dtype.name(),
                    fits.join(", ")
                )
            })?
        }
        (Some(full), None) => full,
    };
    let wanted = squeeze(name);
    let found = MATMUL_KERNELS
        .iter()
        .find(|k| squeeze(k.name) == wanted)
        .ok_or_else(|| {
            format!(
                "no matmul kernel named {name:?}; use one of {} or a name from \
                 `cudakit matmul --list`",
                SHORT_NAMES.join(", ")
            )
        })?;
    if found.signature == Signature::Batched {
        return Err(format!(
            "{} is a batched kernel, which `cudakit matmul` does not run",
            found.name
        ));
    }
    let kernel_dtype = Dtype::try_of(found).ok_or_else(|| {
        format!(
            "{} computes in {}, which `cudakit matmul` does not run",
            found.name,
            Precision::of(found).name()
        )
    })?;
    if let Some(d) = dtype {
        if d != kernel_dtype {
            return Err(format!(
                "{} takes {} inputs, not {} (drop --dtype or pick another kernel)",
                found.name,
                kernel_dtype.name(),
                d.name()
            ));
        }
    }
    Ok((found, kernel_dtype))
}

fn list_kernels(global: &Global) {
    let runnable: Vec<&MatmulKernel> = MATMUL_KERNELS
        .iter()
        .filter(|k| k.signature != Signature::Batched)
        .collect();
    if global.json {
        let items: Vec<Json> = runnable
            .iter()
            .map(|k| {
                Json::object()
                    .with("name", k.name)
                    .with("dtype", Precision::of(k).name())
                    .with("input_b", Precision::of(k).input_b().name())
                    .with("accumulation", k.accumulation.name())
                    .with("arch", k.arch.map(|a| a.sm_name()))
                    .with("block", k.block.to_vec())
                    .with("tile", k.tile.to_vec())
            })
            .collect();
        let json = Json::object()
            .with("command", "matmul")
            .with("ok", true)
            .with("exit_code", 0)
            .with("kernels", Json::Arr(items));
        println!("{}", json.to_pretty());
        return;
    }
    println!("{:<44} {:<9} {:<12} tile", "kernel", "dtype", "block");
    for k in runnable {
        let short = Dtype::try_of(k)
            .and_then(|dtype| SHORT_NAMES.iter().find(|s| dtype.alias(s) == Some(k.name)))
            .map_or(String::new(), |s| format!("  (--kernel {s})"));
        println!(
            "{:<44} {:<9} {:<12} {}x{}{short}",
            k.name,
            Precision::of(k).name(),
            format!("{}x{}x{}", k.block[0], k.block[1], k.block[2]),
            k.tile[0],
            k.tile[1]
        );
    }
}

/// Runs `cudakit matmul`.
pub(crate) fn run(mut args: Parser, global: &mut Global) -> Result<Exit, CliError> {
    let Some(o) = parse(&mut args, global)? else {
        println!("{HELP}");
        return Ok(Exit::Ok);
    };
    if o.list {
        list_kernels(global);
        return Ok(Exit::Ok);
    }
    // Names and dtypes are checked before any GPU work (usage errors); the
    // kernel is picked for the device once it is known.
    let (_, dtype) =
        resolve(o.dtype, o.kernel.as_deref(), (9, 0)).map_err(|message| args.error(message))?;
    let g = operands(dtype, o.m, o.n, o.k);
    for (what, len) in [("A", g.a_len()), ("B", g.b_len()), ("C", g.c_len())] {
        if len.checked_mul(8).is_none() {
            return Err(args.error(format!("{what} has {len} elements, too many to address")));
        }
    }

    if o.compare == Compare::Cublas {
        // Before the GPU: a missing cuBLAS (cuBLASLt for FP8) is this
        // command's own error.
        let found = if dtype.is_fp8() {
            cublas::lt_available()
        } else {
            cublas::available()
        };
        found.map_err(|e| cublas_missing(&e, dtype))?;
    }

    let ctx = Context::new(o.device).map_err(|e| gpu_error("cudakit matmul", &e))?;
    if let Err(e) = cudakit::compile::program::nvrtc_version() {
        return Err(gpu_error("cudakit matmul", &e));
    }
    let cc = ctx.limits().compute_capability;
    let arch = format!("sm_{}{}", cc.0, cc.1);
    let unsupported = |message: String| {
        CliError::failure(format!("cudakit matmul: {message}"))
            .with_json("unsupported", dtype.name())
            .with_json("device_arch", arch.as_str())
    };
    let (kernel, dtype) = resolve(o.dtype, o.kernel.as_deref(), cc).map_err(unsupported)?;
    if !kernel.runs_on(cc) {
        return Err(unsupported(format!(
            "{} needs {}: it is not supported on this device ({arch}); drop --kernel for the \
             fastest kernel this device runs",
            kernel.name,
            kernel
                .arch
                .map_or_else(|| "sm_90".to_owned(), |a| a.sm_name()),
        )));
    }
    let seed = o.seed.unwrap_or_else(fresh_seed);
    let run = Run {
        ctx: &ctx,
        kernel,
        g,
        o: &o,
        seed,
        baseline_failed: std::cell::RefCell::new(None),
    };
    let report = match dtype {
        Dtype::F32 | Dtype::Tf32 => run.execute::<f32, f32>(),
        Dtype::F64 => run.execute::<f64, f64>(),
        Dtype::F16 => run.execute::<F16, f32>(),
        Dtype::Bf16 => run.execute::<Bf16, f32>(),
        Dtype::E4m3 => run.execute_fp8::<F8E4M3>(),
        Dtype::E5m2xE4m3 => run.execute_fp8::<F8E5M2>(),
    }
    .map_err(|e| match run.baseline_failed.take() {
        Some(first) => CliError::failure(format!(
            "cudakit matmul: {e}\n(the comparison failed before it, in the same run: {first})"
        )),
        None => run_error(&e),
    })?;
    if let (Compare::Cublas, Some(Err(e))) = (o.compare, &report.cublas) {
        return Err(match e {
            CublasError::NotFound(_) => cublas_missing(e, dtype),
            e => CliError::failure(format!("cudakit matmul: {e}")),
        });
    }
    let header = Header::read(&ctx, dtype, &o, kernel, seed);
    let exit = if report.passed() {
        Exit::Ok
    } else {
        Exit::Failure
    };
    if global.json {
        println!("{}", report.to_json(&header, exit).to_pretty());
    } else {
        print!("{}", report.render(&header));
    }
    if let Err(message) = &report.verification.result {
        eprintln!("error: verification failed: {message}");
    }
    Ok(exit)
}

/// The error for a failure to get a device or NVRTC: exit 2 with the
/// doctor's diagnosis when the machine lacks them, else a plain failure.
fn gpu_error(command: &str, err: &Error) -> CliError {
    match err {
        Error::NoSuchDevice { ordinal, count } if *count > 0 => CliError::usage(format!(
            "{command}: there is no device {ordinal}; this machine has {count} (ordinals 0 to {})",
            count - 1
        )),
        e if doctor::is_missing_gpu(e) => doctor::no_gpu_error(command, e),
        e => CliError::failure(format!("{command}: {e}")),
    }
}

/// `--compare cublas` without a loadable cuBLAS (cuBLASLt for FP8): exit
/// 2, like a missing NVRTC, with every path tried.
fn cublas_missing(err: &CublasError, dtype: Dtype) -> CliError {
    let (what, variable, soname, missing) = if dtype.is_fp8() {
        (
            " (cuBLASLt, for FP8)",
            "CUDAKIT_LIBCUBLASLT",
            "libcublasLt.so.13",
            "libcublasLt",
        )
    } else {
        ("", "CUDAKIT_LIBCUBLAS", "libcublas.so.13", "libcublas")
    };
    CliError::new(
        Exit::NoGpu,
        format!(
            "cudakit matmul: --compare cublas{what}: {err}\nhint: install it with `python3 -m \
             pip install nvidia-cublas` (or the CUDA toolkit), set {variable} to {soname}'s \
             path, or drop --compare cublas"
        ),
    )
    .with_json("missing", missing)
}

/// The GEMM of a dtype's run: A M×K and B K×N, except FP8's B, stored N×K
/// (K-major, as wgmma reads 8-bit operands and cuBLASLt's TN layout wants).
fn operands(dtype: Dtype, m: usize, n: usize, k: usize) -> Gemm {
    if dtype.is_fp8() {
        Gemm::new(m, n, k, Op::N, Op::T)
    } else {
        Gemm::nn(m, n, k)
    }
}

fn run_error(err: &Error) -> CliError {
    if doctor::is_missing_gpu(err) {
        return doctor::no_gpu_error("cudakit matmul", err);
    }
    let mut e = CliError::failure(format!("cudakit matmul: {err}"));
    if let Error::Compile { log, .. } = err {
        e = e.with_json("log", log);
    }
    e
}

/// A fresh seed: the clock and the process id, mixed.
fn fresh_seed() -> u64 {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    Rng::from_seed(nanos ^ (u64::from(std::process::id()) << 32)).next_u64()
}

/// An input element type: how to draw random values.
trait Input: DeviceCopy + Real {
    fn draw(rng: &mut Rng, n: usize) -> Vec<Self>;
}

impl Input for f32 {
    fn draw(rng: &mut Rng, n: usize) -> Vec<f32> {
        rng.vec_f32(n)
    }
}

impl Input for f64 {
    fn draw(rng: &mut Rng, n: usize) -> Vec<f64> {
        rng.vec_f64(n)
    }
}

impl Input for F16 {
    fn draw(rng: &mut Rng, n: usize) -> Vec<F16> {
        rng.vec_f16(n)
    }
}

impl Input for Bf16 {
    fn draw(rng: &mut Rng, n: usize) -> Vec<Bf16> {
        rng.vec_bf16(n)
    }
}

/// FP8 inputs: f32s near-uniform in [-1, 1) rounded to the format, so every
/// value is an exact FP8 one (the reference reads the rounded values).
impl Input for F8E4M3 {
    fn draw(rng: &mut Rng, n: usize) -> Vec<F8E4M3> {
        (0..n).map(|_| F8E4M3::from_f32(rng.f32_sym())).collect()
    }
}

impl Input for F8E5M2 {
    fn draw(rng: &mut Rng, n: usize) -> Vec<F8E5M2> {
        (0..n).map(|_| F8E5M2::from_f32(rng.f32_sym())).collect()
    }
}

struct Run<'a> {
    ctx: &'a Context,
    kernel: &'static MatmulKernel,
    g: Gemm,
    o: &'a Options,
    seed: u64,
    /// The comparison's error, when it failed before the kernel did (the
    /// likely cause: a sticky fault poisons the context for both).
    baseline_failed: std::cell::RefCell<Option<String>>,
}

/// What the header of the table shows.
struct Header {
    device: String,
    arch: String,
    driver: String,
    nvrtc: String,
    dtype: Dtype,
    m: usize,
    n: usize,
    k: usize,
    kernel: &'static str,
    seed: u64,
}

impl Header {
    fn read(ctx: &Context, dtype: Dtype, o: &Options, kernel: &MatmulKernel, seed: u64) -> Header {
        let (major, minor) = ctx.limits().compute_capability;
        let version = |v: cudakit::Result<(i32, i32)>| {
            v.map_or_else(|_| "?".to_owned(), |(a, b)| format!("{a}.{b}"))
        };
        Header {
            device: ctx
                .device()
                .name()
                .unwrap_or_else(|_| "(name unavailable)".into()),
            arch: format!("sm_{major}{minor}"),
            driver: version(cudakit::driver_version()),
            nvrtc: version(cudakit::compile::program::nvrtc_version()),
            dtype,
            m: o.m,
            n: o.n,
            k: o.k,
            kernel: kernel.name,
            seed,
        }
    }
}

/// The outcome of the check.
#[derive(Debug)]
struct Verification {
    mode: &'static str,
    checked: usize,
    total: usize,
    max_abs: f64,
    /// max |err| / bound over the checked elements.
    max_ratio: f64,
    tolerance: Tolerance,
    elapsed: Duration,
    result: Result<(), String>,
}

/// cuBLAS's (or, for FP8, cuBLASLt's) side of the comparison.
#[derive(Debug)]
struct CublasRun {
    /// `cuBLAS` or `cuBLASLt`.
    library: &'static str,
    /// The entry point timed.
    call: &'static str,
    /// Its compute type (`CUBLAS_COMPUTE_32F`, ...).
    compute: &'static str,
    /// FP8 only: `CUBLASLT_MATMUL_DESC_FAST_ACCUM`.
    fast_accum: Option<bool>,
    version: String,
    path: String,
    times: Vec<Duration>,
}

/// The per-tensor scales and alpha of an FP8 run: powers of two, so that
/// alpha·scale_a·scale_b (2) is exact, and not 1, so that a scale the
/// kernel drops shows in the check. Beta is 0 and C is poisoned first.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Fp8Scales {
    scale_a: f32,
    scale_b: f32,
    alpha: f64,
    beta: f64,
}

impl Fp8Scales {
    const RUN: Fp8Scales = Fp8Scales {
        scale_a: 0.5,
        scale_b: 4.0,
        alpha: 1.0,
        beta: 0.0,
    };

    /// What the reference multiplies A·Bᵀ by.
    fn effective_alpha(self) -> f64 {
        self.alpha * f64::from(self.scale_a) * f64::from(self.scale_b)
    }
}

/// Everything measured.
#[derive(Debug)]
struct Report {
    device_ordinal: i32,
    compile: Duration,
    origin: Origin,
    compiled_arch: String,
    image: &'static str,
    load: Duration,
    registers: Option<u32>,
    grid: [u32; 3],
    block: [u32; 3],
    /// The kernels one product launches (a device transpose, then the GEMM).
    launched: Vec<String>,
    /// How the operands were prepared (`gemm::Product::notes`,
    /// `fp8::Fp8Gemm::notes`).
    notes: Vec<&'static str>,
    /// How the kernel accumulates (what the tolerance is derived for).
    accumulation: Accumulation,
    /// FP8 only: the scales, alpha and beta.
    scales: Option<Fp8Scales>,
    /// cuBLAS in the same run: `None` with `--compare none`.
    cublas: Option<Result<CublasRun, CublasError>>,
    /// FP8 only: cuBLASLt's C checked against the same reference, which
    /// shows that the comparison computed the same product.
    cublas_check: Option<Verification>,
    htod: Duration,
    htod_bytes: u64,
    kernel_times: Vec<Duration>,
    warmup: usize,
    dtoh: Duration,
    dtoh_bytes: u64,
    flops: f64,
    verification: Verification,
}

/// The compile (or cache hit) and module load of the kernel, timed for the
/// report, and its register count.
struct Build {
    compiled: Compiled,
    load: Duration,
    registers: Option<u32>,
}

/// What one run measured on the device, whatever stages the product.
struct Timed<'c, G: DeviceCopy> {
    grid: [u32; 3],
    notes: Vec<&'static str>,
    htod: Duration,
    htod_bytes: u64,
    kernel_times: Vec<Duration>,
    launched: Vec<String>,
    /// The kernel's C, downloaded after the timed runs.
    c: PinnedBuffer<'c, G>,
    dtoh: Duration,
    cublas: Option<Result<CublasRun, CublasError>>,
}

impl<'a> Run<'a> {
    /// cuBLAS's handle and a C of its own for the same product, or why
    /// there are none.
    fn cublas_setup<G: DeviceCopy>(
        &self,
    ) -> Result<(Cublas<'a>, DeviceBuffer<'a, G>), CublasError> {
        Ok((Cublas::new(self.ctx)?, self.ctx.alloc::<G>(self.g.c_len())?))
    }

    /// cuBLASLt's handle and a poisoned C of its own for the same FP8
    /// product, or why there are none.
    fn cublaslt_setup(&self) -> Result<(CublasLt<'a>, DeviceBuffer<'a, f32>), CublasError> {
        let lt = CublasLt::new(self.ctx)?;
        let c = self.ctx.alloc::<f32>(self.g.c_len())?;
        c.fill(f32::POISON)?;
        // The fill runs on the legacy stream, which the timed stream does
        // not wait for.
        self.ctx.synchronize()?;
        Ok((lt, c))
    }

    /// What the report says of cuBLAS's side, with its times.
    fn cublas_run(&self, cublas: &Cublas<'_>, times: Vec<Duration>) -> CublasRun {
        CublasRun {
            library: "cuBLAS",
            call: "cublasGemmEx",
            compute: cublas::compute_name(Precision::of(self.kernel)),
            fast_accum: None,
            version: cublas.version(),
            path: cublas.path().to_owned(),
            times,
        }
    }

    /// What the report says of cuBLASLt's side (FAST_ACCUM on: the
    /// kernel's accumulation), with its times.
    fn cublaslt_run(&self, lt: &CublasLt<'_>, times: Vec<Duration>) -> CublasRun {
        CublasRun {
            library: "cuBLASLt",
            call: "cublasLtMatmul",
            compute: cublas::compute_name(Precision::of(self.kernel)),
            fast_accum: Some(true),
            version: lt.version(),
            path: lt.path().to_owned(),
            times,
        }
    }

    /// Refuses a run that needs more device memory than is free, with a
    /// clear message; where the driver cannot say, the allocations report
    /// it.
    fn check_device_memory(&self, bytes: usize) -> cudakit::Result<()> {
        let free = self.ctx.memory_info().map_or(usize::MAX, |(free, _)| free);
        if bytes > free {
            let g = &self.g;
            return Err(Error::InvalidArgument(format!(
                "{}x{}x{} needs {} of device memory; {} is free",
                g.m,
                g.n,
                g.k,
                units::bytes(bytes as u64),
                units::bytes(free as u64)
            )));
        }
        Ok(())
    }

    /// Compiles (or hits the cache) and loads once for the report's compile
    /// and load times and the register count; the product then gets the
    /// same binary from the process's compile cache.
    fn build(&self) -> cudakit::Result<Build> {
        let compiled = self.kernel.program().compile_for(self.ctx)?;
        let started = Instant::now();
        let registers = {
            let module = self.ctx.load_module(&compiled)?;
            let function = module.function(self.kernel.name)?;
            function.attributes().ok().map(|a| a.registers)
        };
        Ok(Build {
            compiled,
            load: started.elapsed(),
            registers,
        })
    }

    /// HtoD of A and B from pinned memory into fresh device buffers, timed
    /// on its own with events (the product stages its own copies).
    fn time_htod<A: DeviceCopy, B: DeviceCopy>(
        &self,
        a: &[A],
        b: &[B],
    ) -> cudakit::Result<Duration> {
        let ctx = self.ctx;
        let a_dev = ctx.alloc::<A>(a.len())?;
        let b_dev = ctx.alloc::<B>(b.len())?;
        let mut a_pin = ctx.alloc_pinned::<A>(a.len())?;
        a_pin.copy_from_slice(a);
        let mut b_pin = ctx.alloc_pinned::<B>(b.len())?;
        b_pin.copy_from_slice(b);
        let stream = ctx.stream()?;
        let (h0, h1) = (ctx.timing_event()?, ctx.timing_event()?);
        ctx.scope(|s| {
            h0.record(&stream)?;
            s.copy_to_device(&stream, &a_pin[..], &a_dev)?;
            s.copy_to_device(&stream, &b_pin[..], &b_dev)?;
            h1.record(&stream)?;
            Ok(())
        })?;
        h1.elapsed_since(&h0)
    }

    /// Runs `launches` `warmup` times untimed, then `iters` times each
    /// between two events on `stream`, and waits for them. The iterations
    /// are queued back to back and waited for once, as cuBLAS's calls are
    /// (`Cublas::time_gemm`): with an untimed run queued ahead of them (as
    /// [`alternate`] asks for), each pair of events brackets the GPU's work
    /// alone, not also the host's time to queue a launch onto an idle GPU.
    fn time_kernel(
        &self,
        launches: &Launches<'_>,
        stream: &Stream<'_>,
        (warmup, iters): (usize, usize),
    ) -> cudakit::Result<Vec<Duration>> {
        let ctx = self.ctx;
        let events = (0..iters)
            .map(|_| Ok((ctx.timing_event()?, ctx.timing_event()?)))
            .collect::<cudakit::Result<Vec<_>>>()?;
        ctx.scope(|s| {
            for _ in 0..warmup {
                launches.enqueue(s, stream)?;
            }
            for (start, end) in &events {
                start.record(stream)?;
                launches.enqueue(s, stream)?;
                end.record(stream)?;
            }
            stream.synchronize()
        })?;
        events
            .iter()
            .map(|(start, end)| end.elapsed_since(start))
            .collect()
    }

    /// Times the kernel (`time_kernel`) and, when there is one, the
    /// baseline (`theirs`, called with the same `(warmup, iters)` pairs)
    /// through [`alternate`], with a progress line for the kernel's runs.
    /// When the kernel fails after the baseline did, the baseline's error
    /// is kept in `baseline_failed` for the message.
    fn time_sides<E: std::fmt::Display>(
        &self,
        launches: &Launches<'_>,
        stream: &Stream<'_>,
        theirs: Option<&mut Side<'_, E>>,
    ) -> cudakit::Result<Sides<E>> {
        let mut progress = Progress::new("kernel", self.o.iters as u64);
        let mut done = 0;
        let mut ours = |runs: (usize, usize)| {
            let times = self.time_kernel(launches, stream, runs)?;
            done += times.len() as u64;
            progress.set(done);
            Ok(times)
        };
        let timed = alternate((self.o.warmup, self.o.iters), &mut ours, theirs);
        progress.finish();
        timed.map_err(|failed| {
            if let Some(e) = failed.baseline_before {
                *self.baseline_failed.borrow_mut() = Some(e.to_string());
            }
            failed.kernel
        })
    }

    /// Downloads the kernel's `c` into pinned memory, timed with events.
    fn download<G: DeviceCopy>(
        &self,
        c: &DeviceBuffer<'_, G>,
        stream: &Stream<'_>,
    ) -> cudakit::Result<(PinnedBuffer<'a, G>, Duration)> {
        let ctx = self.ctx;
        let mut c_pin = ctx.alloc_pinned::<G>(c.len())?;
        let (d0, d1) = (ctx.timing_event()?, ctx.timing_event()?);
        ctx.scope(|s| {
            d0.record(stream)?;
            s.copy_to_host(stream, c, &mut c_pin[..])?;
            d1.record(stream)?;
            Ok(())
        })?;
        let dtoh = d1.elapsed_since(&d0)?;
        Ok((c_pin, dtoh))
    }

    fn report<G: DeviceCopy>(
        &self,
        build: Build,
        timed: Timed<'_, G>,
        verification: Verification,
        scales: Option<Fp8Scales>,
        cublas_check: Option<Verification>,
    ) -> Report {
        let (g, compiled) = (&self.g, &build.compiled);
        Report {
            device_ordinal: self.ctx.device().ordinal(),
            compile: compiled.elapsed(),
            origin: compiled.origin(),
            compiled_arch: compiled.arch().to_string(),
            image: if compiled.cubin().is_some() {
                "cubin"
            } else {
                "ptx"
            },
            load: build.load,
            registers: build.registers,
            grid: timed.grid,
            block: self.kernel.block,
            launched: timed.launched,
            notes: timed.notes,
            accumulation: self.kernel.accumulation,
            scales,
            cublas: timed.cublas,
            cublas_check,
            htod: timed.htod,
            htod_bytes: timed.htod_bytes,
            kernel_times: timed.kernel_times,
            warmup: self.o.warmup,
            dtoh: timed.dtoh,
            dtoh_bytes: (g.c_len() * std::mem::size_of::<G>()) as u64,
            flops: 2.0 * g.m as f64 * g.n as f64 * g.k as f64,
            verification,
        }
    }

    /// A run of a `gemm::Product` kernel (every dtype but FP8).
    fn execute<T: Input, G: DeviceCopy + Real>(&self) -> cudakit::Result<Report> {
        let (ctx, kernel, g, o) = (self.ctx, self.kernel, &self.g, self.o);
        let elem_in = std::mem::size_of::<T>();
        let elem_out = std::mem::size_of::<G>();
        // A and B (a tf32 B twice: as given and transposed), C, and
        // cuBLAS's C; with padding, the padded A, B and C.
        let padded = match o.pad {
            Pad::Device => gemm::padded_shape(kernel, g).map_or(0, |p| {
                let [m, n, k] = p.dims;
                (m * k + k * n) * elem_in + m * n * elem_out
            }),
            Pad::Off => 0,
        };
        self.check_device_memory(
            (g.a_len() + 2 * g.b_len()) * elem_in + 2 * g.c_len() * elem_out + padded,
        )?;
        // The inputs and their pinned copies; the pinned output.
        check_host_memory(g, 2 * elem_in, elem_out, o.verify, o.samples)?;

        // Inputs, drawn before anything is timed.
        let mut rng = Rng::from_seed(self.seed);
        let a = T::draw(&mut rng, g.a_len());
        let b = T::draw(&mut rng, g.b_len());
        let build = self.build()?;
        let htod = self.time_htod(&a, &b)?;

        // The product: A and B staged for the kernel (padded rows for TMA
        // where needed), C poisoned so that an element never written shows.
        let product: Product<'_, T, G> =
            Product::with_pad(ctx, kernel, *g, (&a, &b, None), Transpose::Device, o.pad)?;
        let maps = product.maps()?;
        let launches = product.launches(&maps, 1.0, 0.0)?;
        let stream = ctx.stream()?;
        // cuBLAS on the same operands (the staged A and B; for a
        // device-transposed tf32 B, the caller's B), into a C of its own,
        // timed in the same rounds as the kernel.
        let baseline = (o.compare != Compare::None).then(|| self.cublas_setup::<G>());
        let [a_op, b_op] = product.operands();
        let (dims, precision) = ([g.m, g.n, g.k], Precision::of(kernel));
        let mut theirs = match &baseline {
            Some(Ok((handle, cublas_c))) => Some(|runs| {
                handle.time_gemm(
                    &stream,
                    precision,
                    dims,
                    a_op,
                    b_op,
                    cublas_c,
                    (1.0, 0.0),
                    runs,
                )
            }),
            _ => None,
        };
        let (kernel_times, their_times) = self.time_sides(
            &launches,
            &stream,
            theirs.as_mut().map(|f| f as &mut Side<'_, CublasError>),
        )?;
        let cublas = match baseline {
            None => None,
            Some(Err(e)) => Some(Err(e)),
            Some(Ok((handle, _))) => their_times.map(|t| t.map(|t| self.cublas_run(&handle, t))),
        };
        let (c, dtoh) = self.download(product.c(), &stream)?;
        let timed = Timed {
            grid: product.grid(),
            notes: product.notes(),
            htod,
            htod_bytes: ((a.len() + b.len()) * elem_in) as u64,
            kernel_times,
            launched: launches.names().iter().map(|n| n.to_string()).collect(),
            c,
            dtoh,
            cublas,
        };
        drop(launches);
        drop(maps);
        drop(product);

        let (verification, _) = verify(
            &mut rng,
            g,
            1.0,
            (&a, &b),
            (&timed.c[..g.c_len()], None),
            kernel.tolerance(g.k),
            o.verify,
            o.samples,
        );
        Ok(self.report(build, timed, verification, None, None))
    }

    /// A run of an FP8 kernel through `fp8::Fp8Gemm`: A of `A` (e4m3 or
    /// e5m2) M×K, B e4m3 stored N×K, the scales of [`Fp8Scales::RUN`], and
    /// cuBLASLt beside it.
    fn execute_fp8<A: Fp8 + Input>(&self) -> cudakit::Result<Report> {
        let (ctx, kernel, g, o) = (self.ctx, self.kernel, &self.g, self.o);
        let scales = Fp8Scales::RUN;
        let ld = fp8_row_pitch(g.k);
        // A and B staged with rows padded to 16 bytes, C, cuBLASLt's C and
        // its workspace (at most 32 MiB).
        self.check_device_memory((g.m + g.n) * ld + 2 * g.c_len() * 4 + (32 << 20))?;
        // The inputs, their pinned and staged copies and their exact f32
        // values for the reference; C pinned and cuBLASLt's C.
        check_host_memory(g, 1 + 1 + 1 + 4, 4 + 4, o.verify, o.samples)?;

        // Exactly representable FP8 values, drawn before anything is timed.
        let mut rng = Rng::from_seed(self.seed);
        let a = A::draw(&mut rng, g.a_len());
        let b = F8E4M3::draw(&mut rng, g.b_len());
        let build = self.build()?;
        let htod = self.time_htod(&a, &b)?;

        // Staged (rows padded to 16 bytes where K needs it), the scales
        // uploaded as device pointers, C poisoned (beta = 0 never reads it).
        let product = Fp8Gemm::<A, F8E4M3>::new(
            ctx,
            kernel,
            [g.m, g.n, g.k],
            (&a, &b, None),
            (scales.scale_a, scales.scale_b),
        )?;
        let maps = product.maps()?;
        let launches = product.launches(&maps, scales.alpha, scales.beta)?;
        let stream = ctx.stream()?;
        // cuBLASLt on the staged operands and scales, FAST_ACCUM on (the
        // kernel's accumulation), into a poisoned C of its own, timed in
        // the same rounds as the kernel; that C is checked too.
        let baseline = (o.compare != Compare::None).then(|| self.cublaslt_setup());
        let ((a_dev, lda), (b_dev, ldb), scale_ptrs) = product.operands();
        let dims = [g.m, g.n, g.k];
        let mut theirs = match &baseline {
            Some(Ok((lt, lt_c))) => Some(|runs| {
                lt.time_fp8(
                    &stream,
                    dims,
                    (a_dev, lda, A::ELEM),
                    (b_dev, ldb, Elem::E4m3),
                    lt_c,
                    scale_ptrs,
                    (scales.alpha, scales.beta),
                    true,
                    runs,
                )
            }),
            _ => None,
        };
        let (kernel_times, their_times) = self.time_sides(
            &launches,
            &stream,
            theirs.as_mut().map(|f| f as &mut Side<'_, CublasError>),
        )?;
        let (cublas, cublas_c) = match baseline {
            None => (None, None),
            Some(Err(e)) => (Some(Err(e)), None),
            Some(Ok((lt, lt_c))) => match their_times
                .map(|t| t.and_then(|t| Ok((self.cublaslt_run(&lt, t), lt_c.to_vec()?))))
            {
                Some(Ok((run, c))) => (Some(Ok(run)), Some(c)),
                Some(Err(e)) => (Some(Err(e)), None),
                None => (None, None),
            },
        };
        let (c, dtoh) = self.download(product.c(), &stream)?;
        let timed = Timed {
            grid: product.grid(),
            notes: product.notes(),
            htod,
            htod_bytes: (a.len() + b.len()) as u64,
            kernel_times,
            launched: launches.names().iter().map(|n| n.to_string()).collect(),
            c,
            dtoh,
            cublas,
        };
        drop(launches);
        drop(maps);
        drop(product);

        // The reference reads the exact values (every FP8 value is an f32).
        let a32: Vec<f32> = a.iter().map(|v| v.to_f32()).collect();
        drop(a);
        let b32: Vec<f32> = b.iter().map(|v| Fp8::to_f32(*v)).collect();
        drop(b);
        let (verification, cublas_check) = verify(
            &mut rng,
            g,
            scales.effective_alpha(),
            (&a32, &b32),
            (
                &timed.c[..g.c_len()],
                cublas_c.as_deref().map(|c| &c[..g.c_len()]),
            ),
            kernel.tolerance(g.k),
            o.verify,
            o.samples,
        );
        Ok(self.report(build, timed, verification, Some(scales), cublas_check))
    }
}

/// One side of [`alternate`]: runs `(warmup, timed)` times, one time per
/// timed run.
type Side<'f, E> = dyn FnMut((usize, usize)) -> Result<Vec<Duration>, E> + 'f;

/// The kernel's times and the baseline's (`None` without one).
type Sides<E> = (Vec<Duration>, Option<Result<Vec<Duration>, E>>);

/// Timed runs per round of [`alternate`].
const ROUND: usize = 5;

/// The kernel's error in [`alternate`], with the baseline's when the
/// baseline had failed before it: a sticky fault of the baseline poisons
/// the context, and the kernel then fails for that reason.
#[derive(Debug)]
struct KernelFailed<E> {
    kernel: Error,
    baseline_before: Option<E>,
}

/// Times the kernel (`ours`) and a baseline (`theirs`) in the same run,
/// each called with `(untimed, timed)` run counts and returning one time
/// per timed run. Both warm up first (`warmup` untimed runs each, timing
/// nothing); then the `iters` timed runs go in rounds of at most [`ROUND`]
/// a side, the sides alternating which goes first from round to round, so
/// that a drift of the GPU's clocks or temperature over the run falls on
/// both sides alike rather than on whichever ran second. Each round starts
/// with one untimed run, queued ahead of the first timed one: the side's
/// previous round ended with a wait, and without it the first timed run
/// would start on an idle GPU and include the host's time to queue it. A
/// baseline that fails is not called again and its error is returned in
/// its place; the kernel failing ends the run.
fn alternate<E>(
    (warmup, iters): (usize, usize),
    ours: &mut Side<'_, Error>,
    mut theirs: Option<&mut Side<'_, E>>,
) -> Result<Sides<E>, KernelFailed<E>> {
    let mut mine = Vec::with_capacity(iters);
    let mut their_times: Option<Result<Vec<Duration>, E>> =
        theirs.as_ref().map(|_| Ok(Vec::with_capacity(iters)));
    // One side's runs, appended to its times; a failed baseline is
    // recorded once and skipped after.
    let mut run_theirs = |runs: (usize, usize), acc: &mut Option<Result<Vec<Duration>, E>>| {
        if let (Some(call), Some(Ok(times))) = (theirs.as_mut(), acc.as_mut()) {
            match call(runs) {
                Ok(t) => times.extend(t),
                Err(e) => *acc = Some(Err(e)),
            }
        }
    };
    // The kernel's runs, appended to its times; its error carries the
    // baseline's, if that came first.
    let mut run_ours = |runs: (usize, usize),
                        mine: &mut Vec<Duration>,
                        acc: &mut Option<Result<Vec<Duration>, E>>| {
        match ours(runs) {
            Ok(t) => {
                mine.extend(t);
                Ok(())
            }
            Err(kernel) => Err(KernelFailed {
                kernel,
                baseline_before: match acc.take() {
                    Some(Err(e)) => Some(e),
                    _ => None,
                },
            }),
        }
    };
    run_ours((warmup, 0), &mut mine, &mut their_times)?;
    run_theirs((warmup, 0), &mut their_times);
    let (mut left, mut round) = (iters, 0);
    while left > 0 {
        let n = ROUND.min(left);
        left -= n;
        if round % 2 == 0 {
            run_ours((1, n), &mut mine, &mut their_times)?;
            run_theirs((1, n), &mut their_times);
        } else {
            run_theirs((1, n), &mut their_times);
            run_ours((1, n), &mut mine, &mut their_times)?;
        }
        round += 1;
    }
    Ok((mine, their_times))
}

/// Refuses sizes whose host side (`per_input` bytes for each element of A
/// and B: the inputs, their pinned copies and whatever else a run keeps;
/// `per_output` for each element of C; and what the reference allocates:
/// f64 copies of op(A) and op(B), and for a full check an f64 value and
/// scale per element of C) would not fit in the memory available now;
/// skipped where /proc/meminfo cannot be read.
fn check_host_memory(
    g: &Gemm,
    per_input: usize,
    per_output: usize,
    mode: Verify,
    samples: usize,
) -> cudakit::Result<()> {
    let inputs = g.a_len() + g.b_len();
    let mut need = inputs * per_input + g.c_len() * per_output;
    match checks_everything(mode, g, samples) {
        None => {}
        Some(true) => need += inputs * 8 + g.c_len() * 16,
        Some(false) => need += inputs * 8 + samples * 16,
    }
    let Some(available) = mem_available() else {
        return Ok(());
    };
    if need as u64 > available {
        return Err(Error::InvalidArgument(format!(
            "{}x{}x{} needs about {} of host memory (inputs, pinned copies, output and the \
             reference's f64 copies); {} is available",
            g.m,
            g.n,
            g.k,
            units::bytes(need as u64),
            units::bytes(available)
        )));
    }
    Ok(())
}

/// `MemAvailable` of /proc/meminfo, in bytes.
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// Whether the check compares every element (`Some(true)`), samples
/// (`Some(false)`), or is off (`None`). A sample as large as C is C.
fn checks_everything(mode: Verify, g: &Gemm, samples: usize) -> Option<bool> {
    let work = g.m as u128 * g.n as u128 * g.k as u128;
    let small = g.c_len() <= samples;
    match mode {
        Verify::None => None,
        Verify::Full => Some(true),
        Verify::Sampled => Some(small),
        Verify::Auto => Some(small || work <= AUTO_FULL_LIMIT),
    }
}

/// Checks C against the f64 reference of alpha·op(A)·op(B): every element or
/// sampled positions, with the tolerance of `Tolerance::gemm` for the
/// kernel's accumulation; and `also` (cuBLASLt's C) against the same
/// reference. The verdict is `reference::compare_matrix` / `compare_at`'s
/// (plus, when sampling, `check_written` over all of C); the largest error
/// and its ratio to the bound are measured here for the table.
#[allow(clippy::too_many_arguments)]
fn verify<T: Real, G: Real>(
    rng: &mut Rng,
    g: &Gemm,
    alpha: f64,
    (a, b): (&[T], &[T]),
    (got, also): (&[G], Option<&[G]>),
    tol: Tolerance,
    mode: Verify,
    samples: usize,
) -> (Verification, Option<Verification>) {
    let started = Instant::now();
    let total = g.c_len();
    let full = match checks_everything(mode, g, samples) {
        Some(full) => full,
        None => {
            let none = Verification {
                mode: "none",
                checked: 0,
                total,
                max_abs: 0.0,
                max_ratio: 0.0,
                tolerance: tol,
                elapsed: Duration::ZERO,
                result: Ok(()),
            };
            return (none, None);
        }
    };
    let mut progress = Progress::new("reference", 100);
    let (positions, reference) = if full {
        let reference = full_reference(g, alpha, a, b, &mut progress);
        (None, reference)
    } else {
        let positions = reference::sample_positions(rng, g.m, g.n, samples);
        let reference = sampled_reference(g, alpha, a, b, &positions, &mut progress);
        (Some(positions), reference)
    };
    progress.finish();
    let reference_time = started.elapsed();

    let judge = |got: &[G]| {
        let started = Instant::now();
        let mut max_abs = 0.0f64;
        let mut max_ratio = 0.0f64;
        let mut measure = |got_index: usize, r_index: usize| {
            let value = reference.value[r_index];
            let bound = tol.bound(value, reference.scale[r_index]);
            let err = (got[got_index].to_f64() - value).abs();
            if err.is_finite() {
                max_abs = max_abs.max(err);
                if bound > 0.0 {
                    max_ratio = max_ratio.max(err / bound);
                }
            } else {
                max_abs = f64::INFINITY;
                max_ratio = f64::INFINITY;
            }
        };
        let (checked, result) = match &positions {
            None => {
                (0..total).for_each(|i| measure(i, i));
                (total, reference::compare_matrix(got, &reference, tol, g.n))
            }
            Some(positions) => {
                for (p, &(r, c)) in positions.iter().enumerate() {
                    measure(r * g.n + c, p);
                }
                let result = reference::check_written(got)
                    .and_then(|()| reference::compare_at(got, g.n, positions, &reference, tol));
                (positions.len(), result)
            }
        };
        Verification {
            mode: if full { "full" } else { "sampled" },
            checked,
            total,
            max_abs,
            max_ratio,
            tolerance: tol,
            elapsed: reference_time + started.elapsed(),
            result,
        }
    };
    (judge(got), also.map(judge))
}

/// The whole reference, in row blocks so the progress bar can move (for an
/// operand A stored as is; a transposed A goes in one piece). Bit for bit
/// what `reference::gemm` computes: each element's sum runs over k in the
/// same order whatever the blocking.
fn full_reference<T: Real>(
    g: &Gemm,
    alpha: f64,
    a: &[T],
    b: &[T],
    progress: &mut Progress,
) -> Reference {
    let threads = reference::threads().max(1);
    let rows_per_block = (g.m / 50).max(16 * threads).max(1);
    if g.op_a != Op::N || rows_per_block >= g.m {
        return reference::gemm(g, alpha, a, b, 0.0, None);
    }
    let mut out = Reference {
        value: Vec::with_capacity(g.c_len()),
        scale: Vec::with_capacity(g.c_len()),
    };
    let mut row = 0;
    while row < g.m {
        let end = (row + rows_per_block).min(g.m);
        let part = Gemm::new(end - row, g.n, g.k, Op::N, g.op_b);
        let r = reference::gemm(&part, alpha, &a[row * g.k..end * g.k], b, 0.0, None);
        out.value.extend_from_slice(&r.value);
        out.scale.extend_from_slice(&r.scale);
        row = end;
        progress.set((row * 100 / g.m) as u64);
    }
    out
}

/// The reference at `positions`, in chunks when the work is large enough
/// for a progress bar to matter.
fn sampled_reference<T: Real>(
    g: &Gemm,
    alpha: f64,
    a: &[T],
    b: &[T],
    positions: &[(usize, usize)],
    progress: &mut Progress,
) -> Reference {
    let work = positions.len() as u128 * g.k.max(1) as u128;
    let chunks = (work / 500_000_000).clamp(1, 20) as usize;
    if chunks == 1 {
        return reference::gemm_sampled(g, alpha, a, b, 0.0, None, positions);
    }
    let per = positions.len().div_ceil(chunks);
    let mut out = Reference {
        value: Vec::with_capacity(positions.len()),
        scale: Vec::with_capacity(positions.len()),
    };
    for (i, chunk) in positions.chunks(per).enumerate() {
        let r = reference::gemm_sampled(g, alpha, a, b, 0.0, None, chunk);
        out.value.extend_from_slice(&r.value);
        out.scale.extend_from_slice(&r.scale);
        progress.set(((i + 1) * 100 / chunks) as u64);
    }
    out
}

fn median(times: &[Duration]) -> Duration {
    let mut sorted = times.to_vec();
    sorted.sort();
    sorted.get(sorted.len() / 2).copied().unwrap_or_default()
}

fn origin_name(origin: Origin) -> &'static str {
    match origin {
        Origin::Nvrtc => "NVRTC",
        Origin::MemoryCache => "memory cache",
        Origin::DiskCache => "disk cache",
        _ => "other",
    }
}

impl Report {
    fn passed(&self) -> bool {
        self.verification.result.is_ok()
    }

    fn kernel_median(&self) -> Duration {
        median(&self.kernel_times)
    }

    fn kernel_min(&self) -> Duration {
        self.kernel_times.iter().min().copied().unwrap_or_default()
    }

    fn gflops(&self, t: Duration) -> f64 {
        let s = t.as_secs_f64();
        if s > 0.0 {
            self.flops / s / 1e9
        } else {
            0.0
        }
    }

    /// cudakit's rate over cuBLAS's, at the medians, when cuBLAS ran.
    fn ratio_to_cublas(&self) -> Option<f64> {
        let Some(Ok(c)) = &self.cublas else {
            return None;
        };
        let theirs = median(&c.times).as_secs_f64();
        let ours = self.kernel_median().as_secs_f64();
        (ours > 0.0 && theirs > 0.0).then(|| theirs / ours)
    }

    fn verdict(&self) -> &'static str {
        match (&self.verification.result, self.verification.mode) {
            (_, "none") => "NOT VERIFIED",
            (Ok(()), _) => "PASS",
            (Err(_), _) => "FAIL",
        }
    }

    fn render(&self, h: &Header) -> String {
        let v = &self.verification;
        let mut t = format!(
            "cudakit matmul: {}, {} x {} x {} {}, kernel {}\n\
             device {}: {} ({}), driver CUDA {}, NVRTC {}\n\
             grid {}x{}x{}, block {}x{}x{}{}; {} timed run(s) after {} warm-up; seed {:#018x}\n\n",
            h.dtype.formula(),
            h.m,
            h.n,
            h.k,
            h.dtype.name(),
            h.kernel,
            self.device_ordinal,
            h.device,
            h.arch,
            h.driver,
            h.nvrtc,
            self.grid[0],
            self.grid[1],
            self.grid[2],
            self.block[0],
            self.block[1],
            self.block[2],
            self.registers
                .map_or(String::new(), |r| format!(", {r} registers/thread")),
            self.kernel_times.len(),
            self.warmup,
            h.seed
        );
        if let Some(sc) = self.scales {
            let line = format!(
                "A {} M×K, B {} stored N×K (K-major); scale_a {}, scale_b {} (device pointers), \
                 alpha {}, beta {} (C poisoned); accumulation {}\n",
                h.dtype.precision().input().name(),
                h.dtype.precision().input_b().name(),
                sc.scale_a,
                sc.scale_b,
                sc.alpha,
                sc.beta,
                self.accumulation.name()
            );
            t.insert_str(t.len() - 1, &line);
        }
        if self.launched.len() > 1 || !self.notes.is_empty() {
            let mut line = format!("each run launches {}", self.launched.join(" + "));
            for note in &self.notes {
                line.push_str("; ");
                line.push_str(note);
            }
            t.insert_str(t.len() - 1, &format!("{line}\n"));
        }
        let mut row = |label: &str, value: String, detail: String| {
            let line = format!("  {label:<12} {value:>12}   {detail}");
            t.push_str(line.trim_end());
            t.push('\n');
        };
        let hit = match self.origin {
            Origin::Nvrtc => "cache miss",
            _ => "cache hit",
        };
        row(
            "compile",
            units::duration(self.compile),
            format!(
                "{} ({hit}), {} {}",
                origin_name(self.origin),
                self.compiled_arch,
                self.image.to_uppercase()
            ),
        );
        row("module load", units::duration(self.load), String::new());
        row(
            "HtoD",
            units::duration(self.htod),
            format!(
                "{} at {} (A and B, pinned)",
                units::bytes(self.htod_bytes),
                units::rate(self.htod_bytes, self.htod)
            ),
        );
        row(
            "kernel",
            units::duration(self.kernel_median()),
            format!(
                "median of {}; min {}",
                self.kernel_times.len(),
                units::duration(self.kernel_min())
            ),
        );
        let (unit, per_unit) = h.dtype.rate_unit();
        row(
            unit,
            format!("{:.1}", self.gflops(self.kernel_median()) / per_unit),
            format!(
                "at the median; {:.1} at the min",
                self.gflops(self.kernel_min()) / per_unit
            ),
        );
        let library = if h.dtype.is_fp8() {
            "cuBLASLt"
        } else {
            "cuBLAS"
        };
        match &self.cublas {
            None => {}
            Some(Ok(c)) => {
                let rate = self.gflops(median(&c.times));
                let call = match c.fast_accum {
                    Some(fast) => format!(
                        "{} TN, {}, FAST_ACCUM {}",
                        c.call,
                        c.compute,
                        u8::from(fast)
                    ),
                    None => format!("{}, {}", c.call, c.compute),
                };
                row(
                    c.library,
                    format!("{:.1}", rate / per_unit),
                    format!(
                        "{unit} at its median {} ({call}, {} {}, same run)",
                        units::duration(median(&c.times)),
                        c.library,
                        c.version
                    ),
                );
                row(
                    &format!("vs {}", c.library),
                    format!("{:.3}x", self.ratio_to_cublas().unwrap_or(0.0)),
                    format!(
                        "cudakit {:.1} / {} {:.1} TFLOP/s, at the medians",
                        self.gflops(self.kernel_median()) / 1e3,
                        c.library,
                        rate / 1e3
                    ),
                );
                if let Some(check) = &self.cublas_check {
                    let verdict = match &check.result {
                        Ok(()) => "within".to_owned(),
                        Err(e) => format!("OUTSIDE ({})", e.lines().next().unwrap_or("")),
                    };
                    row(
                        &format!("{} check", c.library),
                        format!("{:.3}", check.max_ratio),
                        format!(
                            "of the tolerance: its C {verdict} the same bound at the same \
                             {} elements (the same product)",
                            units::grouped(check.checked as u64)
                        ),
                    );
                }
            }
            Some(Err(e)) => {
                let first = e.to_string();
                let first = first.lines().next().unwrap_or("").to_owned();
                row(library, "-".into(), format!("not run: {first}"));
            }
        }
        row(
            "DtoH",
            units::duration(self.dtoh),
            format!(
                "{} at {} (C, pinned)",
                units::bytes(self.dtoh_bytes),
                units::rate(self.dtoh_bytes, self.dtoh)
            ),
        );
        if v.mode == "none" {
            row("verify", "-".into(), "skipped (--verify none)".into());
        } else {
            row(
                "verify",
                units::duration(v.elapsed),
                format!(
                    "{} of {} elements ({}) against the f64 CPU reference",
                    units::grouped(v.checked as u64),
                    units::grouped(v.total as u64),
                    v.mode
                ),
            );
            row(
                "max error",
                format!("{:.3e}", v.max_abs),
                format!(
                    "{:.3} of the tolerance (bound {:.3e} x sum|a*b| per element)",
                    v.max_ratio, v.tolerance.scaled
                ),
            );
        }
        row("verdict", self.verdict().into(), String::new());
        t
    }

    fn cublas_json(&self) -> Json {
        match &self.cublas {
            None => Json::object()
                .with("run", false)
                .with("reason", "--compare none"),
            Some(Err(e)) => Json::object()
                .with("run", false)
                .with("available", !matches!(e, CublasError::NotFound(_)))
                .with("reason", e.to_string()),
            Some(Ok(c)) => {
                let times: Vec<f64> = c.times.iter().map(|&d| units::ms(d)).collect();
                let min = c.times.iter().min().copied().unwrap_or_default();
                let check = self.cublas_check.as_ref().map(|v| {
                    Json::object()
                        .with("checked", v.checked)
                        .with("max_abs_error", v.max_abs)
                        .with("max_error_over_tolerance", v.max_ratio)
                        .with("passed", v.result.is_ok())
                        .with("message", v.result.as_ref().err().cloned())
                });
                Json::object()
                    .with("run", true)
                    .with("available", true)
                    .with("library", c.library)
                    .with("version", &c.version)
                    .with("path", &c.path)
                    .with("call", c.call)
                    .with("compute", c.compute)
                    .with("fast_accum", c.fast_accum)
                    .with("check", check)
                    .with("median_ms", units::ms(median(&c.times)))
                    .with("min_ms", units::ms(min))
                    .with("times_ms", times)
                    .with(
                        "gflops",
                        Json::object()
                            .with("median", self.gflops(median(&c.times)))
                            .with("best", self.gflops(min)),
                    )
            }
        }
    }

    fn to_json(&self, h: &Header, exit: Exit) -> Json {
        let v = &self.verification;
        let times: Vec<f64> = self.kernel_times.iter().map(|&d| units::ms(d)).collect();
        Json::object()
            .with("command", "matmul")
            .with("ok", exit == Exit::Ok)
            .with("exit_code", exit.code())
            .with("verdict", self.verdict())
            .with("m", h.m)
            .with("n", h.n)
            .with("k", h.k)
            .with("dtype", h.dtype.name())
            .with("input_a", h.dtype.precision().input().name())
            .with("input_b", h.dtype.precision().input_b().name())
            .with("b_stored", if h.dtype.is_fp8() { "NxK" } else { "KxN" })
            .with("accumulation", self.accumulation.name())
            .with(
                "scales",
                self.scales.map(|s| {
                    Json::object()
                        .with("scale_a", f64::from(s.scale_a))
                        .with("scale_b", f64::from(s.scale_b))
                        .with("alpha", s.alpha)
                        .with("beta", s.beta)
                        .with("pointers", "device")
                }),
            )
            .with("kernel", h.kernel)
            .with("seed", format!("{:#018x}", h.seed))
            .with(
                "device",
                Json::object()
                    .with("ordinal", self.device_ordinal)
                    .with("name", &h.device)
                    .with("arch", &h.arch)
                    .with("driver", &h.driver)
                    .with("nvrtc", &h.nvrtc),
            )
            .with("grid", self.grid.to_vec())
            .with("block", self.block.to_vec())
            .with("launches", self.launched.clone())
            .with(
                "notes",
                self.notes.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
            )
            .with("cublas", self.cublas_json())
            .with("ratio_to_cublas", self.ratio_to_cublas())
            .with("registers", self.registers)
            .with(
                "compile",
                Json::object()
                    .with("ms", units::ms(self.compile))
                    .with("origin", origin_name(self.origin))
                    .with("cache_hit", self.origin != Origin::Nvrtc)
                    .with("arch", &self.compiled_arch)
                    .with("image", self.image),
            )
            .with("module_load_ms", units::ms(self.load))
            .with(
                "htod",
                Json::object()
                    .with("ms", units::ms(self.htod))
                    .with("bytes", self.htod_bytes),
            )
            .with(
                "kernel",
                Json::object()
                    .with("median_ms", units::ms(self.kernel_median()))
                    .with("min_ms", units::ms(self.kernel_min()))
                    .with("iters", self.kernel_times.len())
                    .with("warmup", self.warmup)
                    .with("times_ms", times),
            )
            .with(
                "gflops",
                Json::object()
                    .with("median", self.gflops(self.kernel_median()))
                    .with("best", self.gflops(self.kernel_min())),
            )
            .with(
                "dtoh",
                Json::object()
                    .with("ms", units::ms(self.dtoh))
                    .with("bytes", self.dtoh_bytes),
            )
            .with(
                "verify",
                Json::object()
                    .with("mode", v.mode)
                    .with("checked", v.checked)
                    .with("total", v.total)
                    .with("ms", units::ms(v.elapsed))
                    .with("max_abs_error", v.max_abs)
                    .with("max_error_over_tolerance", v.max_ratio)
                    .with(
                        "tolerance",
                        Json::object()
                            .with("abs", v.tolerance.abs)
                            .with("rel", v.tolerance.rel)
                            .with("scaled", v.tolerance.scaled),
                    )
                    .with("passed", v.result.is_ok())
                    .with("message", v.result.as_ref().err().cloned()),
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A side for `alternate` that logs `(side, warmup, timed)` per call
    /// and returns `timed` times of `ms` milliseconds.
    fn logged(
        log: &std::cell::RefCell<Vec<(char, usize, usize)>>,
        side: char,
        ms: u64,
    ) -> impl FnMut((usize, usize)) -> Vec<Duration> + '_ {
        move |(warmup, timed)| {
            log.borrow_mut().push((side, warmup, timed));
            vec![Duration::from_millis(ms); timed]
        }
    }

    #[test]
    fn the_sides_warm_up_first_then_alternate_which_goes_first() {
        let log = std::cell::RefCell::new(Vec::new());
        let mut k = logged(&log, 'k', 1);
        let mut b = logged(&log, 'b', 2);
        let mut ours = |r| Ok(k(r));
        let mut theirs = |r| Ok::<_, ()>(b(r));
        let (mine, their) = alternate((3, 12), &mut ours, Some(&mut theirs)).unwrap();
        assert_eq!(mine, vec![Duration::from_millis(1); 12]);
        assert_eq!(their, Some(Ok(vec![Duration::from_millis(2); 12])));
        assert_eq!(
            log.take(),
            [
                ('k', 3, 0),
                ('b', 3, 0),
                ('k', 1, 5),
                ('b', 1, 5),
                ('b', 1, 5),
                ('k', 1, 5),
                ('k', 1, 2),
                ('b', 1, 2),
            ]
        );
    }

    #[test]
    fn a_failing_baseline_is_not_called_again_and_the_kernel_runs_on() {
        let log = std::cell::RefCell::new(Vec::new());
        let mut k = logged(&log, 'k', 1);
        let mut calls = 0;
        let mut ours = |r| Ok(k(r));
        let mut theirs = |_| {
            calls += 1;
            if calls == 2 {
                Err("no algorithm")
            } else {
                Ok(vec![Duration::from_millis(2); 5])
            }
        };
        let (mine, their) = alternate((1, 20), &mut ours, Some(&mut theirs)).unwrap();
        assert_eq!(mine.len(), 20);
        assert_eq!(their, Some(Err("no algorithm")));
        assert_eq!(calls, 2);
        // Without a baseline: the kernel alone, warm-up then rounds.
        let log = std::cell::RefCell::new(Vec::new());
        let mut k = logged(&log, 'k', 1);
        let mut ours = |r| Ok(k(r));
        let (mine, their) = alternate::<()>((2, 7), &mut ours, None).unwrap();
        assert_eq!((mine.len(), their), (7, None));
        assert_eq!(log.take(), [('k', 2, 0), ('k', 1, 5), ('k', 1, 2)]);
    }

    #[test]
    fn a_failing_kernel_ends_the_run() {
        let mut calls = 0;
        let mut ours = |_| {
            calls += 1;
            if calls == 2 {
                Err(Error::InvalidArgument("launch".into()))
            } else {
                Ok(Vec::new())
            }
        };
        let mut theirs = |(_, n)| Ok::<_, ()>(vec![Duration::ZERO; n]);
        let err = alternate((1, 10), &mut ours, Some(&mut theirs)).unwrap_err();
        assert!(matches!(err.kernel, Error::InvalidArgument(_)), "{err:?}");
        assert!(err.baseline_before.is_none(), "{err:?}");
        assert_eq!(calls, 2);
    }

    /// A baseline's sticky fault poisons the context, and the kernel's next
    /// round fails: its error carries the baseline's, the cause.
    #[test]
    fn a_kernel_failing_after_the_baseline_keeps_the_baseline_error() {
        // The warm-up runs; the first round (after the baseline's failed
        // warm-up) fails.
        let mut calls = 0;
        let mut ours = |(_, n)| {
            calls += 1;
            if calls == 1 {
                Ok(vec![Duration::ZERO; n])
            } else {
                Err(Error::InvalidArgument("context poisoned".into()))
            }
        };
        let mut theirs = |_| Err::<Vec<Duration>, _>("illegal address");
        let err = alternate((1, 10), &mut ours, Some(&mut theirs)).unwrap_err();
        assert!(matches!(err.kernel, Error::InvalidArgument(_)), "{err:?}");
        assert_eq!(err.baseline_before, Some("illegal address"));
    }

    #[test]
    fn kernels_resolve_from_short_and_full_names() {
        let h200 = (9, 0);
        let (k, d) = resolve(None, None, h200).unwrap();
        assert_eq!((k.name, d), ("sgemm_128x256", Dtype::F32));
        let older = (7, 5);
        let (k, _) = resolve(None, None, older).unwrap();
        assert_eq!(k.name, "gemm_regblock<float, 128, 128, 8, 8, 8>");
        let (k, _) = resolve(Some(Dtype::F64), None, h200).unwrap();
        assert_eq!(k.name, "dgemm_dmma_128x128");
        let (k, _) = resolve(Some(Dtype::F64), None, older).unwrap();
        assert_eq!(k.name, "gemm_regblock<double, 64, 64, 8, 4, 4>");
        for (d, sm90, sm89) in [
            (Dtype::F16, "gemm_sm90_f16_nn", "matmul_f16_mma"),
            (Dtype::Bf16, "gemm_sm90_bf16_nn", "matmul_bf16_mma"),
        ] {
            assert_eq!(resolve(Some(d), None, h200).unwrap().0.name, sm90);
            assert_eq!(resolve(Some(d), None, (8, 9)).unwrap().0.name, sm89);
        }
        let (k, d) = resolve(Some(Dtype::Tf32), None, h200).unwrap();
        assert_eq!((k.name, d), ("gemm_sm90_tf32_nn", Dtype::Tf32));
        let (k, d) = resolve(Some(Dtype::Tf32), None, (8, 9)).unwrap();
        assert_eq!((k.name, d), ("matmul_tf32_mma", Dtype::Tf32));
        assert!(resolve(Some(Dtype::Tf32), None, (7, 5))
            .unwrap_err()
            .contains("tf32 needs sm_80"));
        // A full name gives its own dtype; tf32 is not f32.
        let (k, d) = resolve(None, Some("gemm_sm90_tf32_nt"), h200).unwrap();
        assert_eq!((k.name, d), ("gemm_sm90_tf32_nt", Dtype::Tf32));
        assert!(resolve(Some(Dtype::F32), Some("gemm_sm90_tf32_nt"), h200).is_err());
        assert_eq!(
            resolve(None, Some("tiled"), h200).unwrap().0.name,
            "matmul_tiled<float, 32>"
        );
        assert_eq!(
            resolve(Some(Dtype::Bf16), Some("mma"), h200)
                .unwrap()
                .0
                .name,
            "matmul_bf16_mma"
        );
        assert_eq!(
            resolve(Some(Dtype::Tf32), Some("wgmma"), h200)
                .unwrap()
                .0
                .name,
            "gemm_sm90_tf32_nn"
        );
        let (k, d) = resolve(None, Some("matmul_tiled<double,16>"), h200).unwrap();
        assert_eq!((k.name, d), ("matmul_tiled<double, 16>", Dtype::F64));
        assert!(resolve(Some(Dtype::F32), Some("mma"), h200)
            .unwrap_err()
            .contains("no mma kernel"));
        assert!(resolve(Some(Dtype::F32), Some("matmul_naive<double>"), h200).is_err());
        assert!(resolve(None, Some("matmul_batched<float>"), h200).is_err());
        assert!(resolve(None, Some("nope"), h200)
            .unwrap_err()
            .contains("--list"));
        // Every short name of every dtype names a real, runnable kernel.
        for d in Dtype::ALL {
            for s in SHORT_NAMES {
                if d.alias(s).is_some() {
                    let (k, kd) = resolve(Some(d), Some(s), h200).unwrap();
                    assert_eq!(kd, d, "{s}");
                    assert_ne!(k.signature, Signature::Batched);
                }
            }
        }
    }

    #[test]
    fn options_parse_dtype_and_compare() {
        let parse_words = |words: &[&str]| {
            let mut p = Parser::new("cudakit matmul", words.iter().map(|w| w.to_string()));
            parse(&mut p, &mut Global::default())
        };
        let o = parse_words(&["--dtype", "tf32", "--compare", "cublas", "--size", "4096"])
            .unwrap()
            .unwrap();
        assert_eq!(
            (o.dtype, o.compare, o.m, o.k),
            (Some(Dtype::Tf32), Compare::Cublas, 4096, 4096)
        );
        let o = parse_words(&["--compare=none"]).unwrap().unwrap();
        assert_eq!(o.compare, Compare::None);
        assert_eq!(parse_words(&[]).unwrap().unwrap().compare, Compare::Auto);
        assert_eq!(parse_words(&[]).unwrap().unwrap().pad, Pad::Device);
        assert_eq!(
            parse_words(&["--pad", "off"]).unwrap().unwrap().pad,
            Pad::Off
        );
        assert_eq!(
            parse_words(&["--pad=auto"]).unwrap().unwrap().pad,
            Pad::Device
        );
        let e = parse_words(&["--pad", "yes"]).unwrap_err();
        assert_eq!(e.exit, Exit::Usage);
        assert!(
            e.message.contains("--pad expects auto or off"),
            "{}",
            e.message
        );
        let e = parse_words(&["--compare", "mkl"]).unwrap_err();
        assert_eq!(e.exit, Exit::Usage);
        assert!(
            e.message.contains("--compare expects auto, cublas or none"),
            "{}",
            e.message
        );
        let e = parse_words(&["--dtype", "fp8"]).unwrap_err();
        assert_eq!(e.exit, Exit::Usage);
        assert!(
            e.message.contains("tf32, e4m3 or e5m2xe4m3 (e5m2-e4m3)"),
            "{}",
            e.message
        );
        for (word, want) in [
            ("e4m3", Dtype::E4m3),
            ("E4M3", Dtype::E4m3),
            ("e5m2xe4m3", Dtype::E5m2xE4m3),
            ("e5m2-e4m3", Dtype::E5m2xE4m3),
        ] {
            let o = parse_words(&["--dtype", word, "--seed", "0x2a", "--iters", "20"])
                .unwrap()
                .unwrap();
            assert_eq!(
                (o.dtype, o.seed, o.iters),
                (Some(want), Some(42), 20),
                "{word}"
            );
        }
    }

    #[test]
    fn fp8_dtypes_resolve_to_their_kernels_on_sm_90_only() {
        let h200 = (9, 0);
        for (d, name) in [
            (Dtype::E4m3, "gemm_sm90_e4m3_nt"),
            (Dtype::E5m2xE4m3, "gemm_sm90_e5m2_e4m3_nt"),
        ] {
            let (k, kd) = resolve(Some(d), None, h200).unwrap();
            assert_eq!((k.name, kd), (name, d));
            assert_eq!(k.signature, Signature::TmaScaled);
            assert_eq!(k.accumulation, Accumulation::Fp8TensorCore);
            assert_eq!(resolve(Some(d), Some("wgmma"), h200).unwrap().0.name, name);
            // A full name gives its dtype, with or without --dtype.
            assert_eq!(resolve(None, Some(name), h200).unwrap().1, d);
            assert_eq!(resolve(Some(d), Some(name), h200).unwrap().1, d);
            // Off sm_90 (Ada included: no FP8 wgmma) no kernel serves it.
            for cc in [(8, 9), (8, 0), (10, 0)] {
                let e = resolve(Some(d), None, cc).unwrap_err();
                assert!(e.contains("not supported on this device"), "{e}");
                assert!(e.contains(d.name()), "{e}");
            }
        }
        // An FP8 dtype with a kernel of another dtype, and the reverse.
        let e = resolve(Some(Dtype::E4m3), Some("sgemm_128x256"), h200).unwrap_err();
        assert!(e.contains("takes f32 inputs, not e4m3"), "{e}");
        let e = resolve(Some(Dtype::E4m3), Some("sgemm"), h200).unwrap_err();
        assert!(e.contains("no sgemm kernel for e4m3"), "{e}");
        assert!(e.contains("--kernel wgmma"), "{e}");
        let e = resolve(Some(Dtype::Bf16), Some("gemm_sm90_e4m3_nt"), h200).unwrap_err();
        assert!(e.contains("takes e4m3 inputs, not bf16"), "{e}");
        let e = resolve(Some(Dtype::E4m3), Some("gemm_sm90_e5m2_e4m3_nt"), h200).unwrap_err();
        assert!(e.contains("takes e5m2xe4m3 inputs, not e4m3"), "{e}");
        // FP8's B is stored N×K; the other dtypes' K×N.
        assert_eq!(operands(Dtype::E4m3, 3, 5, 7).op_b, Op::T);
        assert_eq!(operands(Dtype::Bf16, 3, 5, 7).op_b, Op::N);
    }

    #[test]
    fn every_listed_kernel_has_its_own_dtype() {
        for k in MATMUL_KERNELS
            .iter()
            .filter(|k| k.signature != Signature::Batched)
        {
            let d = Dtype::try_of(k).unwrap_or_else(|| panic!("{}", k.name));
            assert_eq!(d.precision(), Precision::of(k), "{}", k.name);
            assert_eq!(d.precision().input(), k.input, "{}", k.name);
            if k.signature == Signature::TmaScaled {
                assert!(d.is_fp8(), "{}", k.name);
            }
            // Every runnable kernel resolves by its full name to that dtype.
            assert_eq!(resolve(None, Some(k.name), (9, 0)).unwrap().1, d);
        }
        assert_eq!(
            Dtype::try_of(cudakit_suite::kernels::matmul_kernel("gemm_sm90_e4m3_nt")),
            Some(Dtype::E4m3)
        );
    }

    #[test]
    fn fp8_inputs_are_exact_fp8_values_of_the_seed() {
        let draw = |seed| {
            let mut rng = Rng::from_seed(seed);
            (F8E5M2::draw(&mut rng, 4096), F8E4M3::draw(&mut rng, 4096))
        };
        let (a, b) = draw(9);
        assert_eq!(
            (
                a.iter().map(|v| v.0).collect::<Vec<_>>(),
                b.iter().map(|v| v.0).collect::<Vec<_>>()
            ),
            {
                let (a2, b2) = draw(9);
                (
                    a2.iter().map(|v| v.0).collect(),
                    b2.iter().map(|v| v.0).collect(),
                )
            }
        );
        for v in &b {
            let x = Fp8::to_f32(*v);
            assert!((-1.0..=1.0).contains(&x), "{x}");
            assert_eq!(F8E4M3::from_f32(x).0, v.0, "{x} is an e4m3 value");
        }
        for v in &a {
            let x = Fp8::to_f32(*v);
            assert!((-1.0..=1.0).contains(&x), "{x}");
            assert_eq!(F8E5M2::from_f32(x).0, v.0, "{x} is an e5m2 value");
        }
        // Many distinct codes, both signs: not a handful of values.
        let mut codes: Vec<u8> = b.iter().map(|v| v.0).collect();
        codes.sort_unstable();
        codes.dedup();
        assert!(codes.len() > 100, "{}", codes.len());
        assert_eq!(Fp8Scales::RUN.effective_alpha(), 2.0);
    }

    fn sample_report(result: Result<(), String>) -> (Report, Header) {
        let ms = Duration::from_micros;
        let report = Report {
            device_ordinal: 0,
            compile: ms(412_800),
            origin: Origin::Nvrtc,
            compiled_arch: "sm_90".into(),
            image: "cubin",
            load: ms(1_200),
            registers: Some(127),
            grid: [16, 16, 1],
            block: [256, 1, 1],
            launched: vec!["sgemm_128x256".into()],
            notes: Vec::new(),
            accumulation: Accumulation::F32,
            scales: None,
            cublas_check: None,
            cublas: Some(Ok(CublasRun {
                library: "cuBLAS",
                call: "cublasGemmEx",
                compute: "CUBLAS_COMPUTE_32F",
                fast_accum: None,
                version: "13.1.0".into(),
                path: "libcublas.so.13".into(),
                times: vec![ms(450), ms(440), ms(460)],
            })),
            htod: ms(2_900),
            htod_bytes: 2 * 2048 * 2048 * 4,
            kernel_times: vec![ms(520), ms(498), ms(530)],
            warmup: 1,
            dtoh: ms(1_400),
            dtoh_bytes: 2048 * 2048 * 4,
            flops: 2.0 * 2048f64.powi(3),
            verification: Verification {
                mode: "sampled",
                checked: 108_186,
                total: 2048 * 2048,
                max_abs: 1.19e-5,
                max_ratio: 0.031,
                tolerance: Tolerance::gemm(Accumulation::F32, 2048),
                elapsed: ms(310_000),
                result,
            },
        };
        let header = Header {
            device: "NVIDIA H200".into(),
            arch: "sm_90".into(),
            driver: "13.0".into(),
            nvrtc: "13.0".into(),
            dtype: Dtype::F32,
            m: 2048,
            n: 2048,
            k: 2048,
            kernel: "gemm_regblock<float, 128, 128, 8, 8, 8>",
            seed: 0x1234,
        };
        (report, header)
    }

    #[test]
    fn the_table_and_the_json_carry_every_figure() {
        let (report, header) = sample_report(Ok(()));
        let text = report.render(&header);
        for want in [
            "2048 x 2048 x 2048 f32",
            "NVIDIA H200 (sm_90)",
            "127 registers/thread",
            "compile",
            "413 ms",
            "cache miss",
            "HtoD",
            "2.90 ms",
            "kernel",
            "520 µs",
            "min 498 µs",
            "GFLOP/s",
            "33038.2",
            "DtoH",
            "108 186 of 4 194 304 elements (sampled)",
            "max error",
            "1.190e-5",
            "0.031 of the tolerance",
            "PASS",
            "cuBLAS",
            "38177.5",
            "CUBLAS_COMPUTE_32F, cuBLAS 13.1.0",
            "vs cuBLAS",
            "0.865x",
        ] {
            assert!(text.contains(want), "no {want:?} in\n{text}");
        }
        let json = report.to_json(&header, Exit::Ok);
        assert_eq!(json.get("verdict"), Some(&Json::from("PASS")));
        let ratio = match json.get("ratio_to_cublas") {
            Some(Json::Num(x)) => *x,
            other => panic!("ratio_to_cublas: {other:?}"),
        };
        assert!((ratio - 450.0 / 520.0).abs() < 1e-9, "{ratio}");
        assert!(json
            .to_pretty()
            .contains("\"compute\": \"CUBLAS_COMPUTE_32F\""));
        // Without cuBLAS the table says why, and the JSON has no ratio.
        let (mut missing, header) = sample_report(Ok(()));
        missing.cublas = Some(Err(CublasError::InvalidArgument("x".into())));
        assert!(missing
            .render(&header)
            .contains("not run: cuBLAS arguments: x"));
        assert_eq!(
            missing.to_json(&header, Exit::Ok).get("ratio_to_cublas"),
            Some(&Json::Null)
        );
        assert_eq!(json.get("exit_code"), Some(&Json::from(0)));
        let (failed, header) = sample_report(Err("3 of 10 elements out of tolerance".into()));
        assert!(failed.render(&header).contains("FAIL"));
        let json = failed.to_json(&header, Exit::Failure);
        assert_eq!(json.get("ok"), Some(&Json::Bool(false)));
        assert!(json
            .to_pretty()
            .contains("3 of 10 elements out of tolerance"));
    }

    #[test]
    fn samples_cover_the_edges_without_repeats() {
        let mut rng = Rng::from_seed(1);
        let p = reference::sample_positions(&mut rng, 50, 40, 100);
        assert!(p.windows(2).all(|w| w[0] < w[1]));
        for c in 0..40 {
            assert!(p.contains(&(0, c)) && p.contains(&(49, c)));
        }
        for r in 0..50 {
            assert!(p.contains(&(r, 0)) && p.contains(&(r, 39)));
        }
        assert!(p.iter().all(|&(r, c)| r < 50 && c < 40));
    }

    fn naive(g: &Gemm, a: &[f32], b: &[f32]) -> Vec<f32> {
        let mut c = vec![0.0f32; g.c_len()];
        for i in 0..g.m {
            for j in 0..g.n {
                let mut acc = 0.0f32;
                for kk in 0..g.k {
                    acc = a[g.a_index(i, kk)].mul_add(b[g.b_index(kk, j)], acc);
                }
                c[i * g.n + j] = acc;
            }
        }
        c
    }

    #[test]
    fn fp8_verification_applies_the_scales_and_checks_cublas_too() {
        let mut rng = Rng::from_seed(11);
        let (m, n, k) = (40, 24, 96);
        let g = operands(Dtype::E5m2xE4m3, m, n, k);
        let a: Vec<f32> = F8E5M2::draw(&mut rng, g.a_len())
            .iter()
            .map(|v| Fp8::to_f32(*v))
            .collect();
        let b: Vec<f32> = F8E4M3::draw(&mut rng, g.b_len())
            .iter()
            .map(|v| Fp8::to_f32(*v))
            .collect();
        let alpha = Fp8Scales::RUN.effective_alpha();
        // C = alpha·A·Bᵀ with B stored N×K, as the FP8 kernels compute it.
        let mut c = vec![0.0f32; m * n];
        for i in 0..m {
            for j in 0..n {
                let dot: f32 = (0..k).map(|kk| a[i * k + kk] * b[j * k + kk]).sum();
                c[i * n + j] = alpha as f32 * dot;
            }
        }
        let tol = Tolerance::gemm(Accumulation::Fp8TensorCore, k);
        // cuBLASLt's C, had it dropped a scale: alpha 1, not 2.
        let unscaled: Vec<f32> = c.iter().map(|x| x / 2.0).collect();
        for mode in [Verify::Full, Verify::Sampled] {
            let (v, check) = verify(
                &mut rng,
                &g,
                alpha,
                (&a, &b),
                (&c, Some(&unscaled)),
                tol,
                mode,
                64,
            );
            assert!(v.result.is_ok(), "{mode:?}: {:?}", v.result);
            assert!(v.max_ratio < 1.0 && v.checked > 0);
            let check = check.expect("the second C is checked");
            assert!(check.result.is_err() && check.max_ratio > 1.0, "{check:?}");
            assert_eq!(check.checked, v.checked);
        }
        // The same C against the reference without the scales fails.
        let (v, _) = verify(
            &mut rng,
            &g,
            1.0,
            (&a, &b),
            (&c, None),
            tol,
            Verify::Full,
            1,
        );
        assert!(v.result.is_err());
        let (none, check) = verify(
            &mut rng,
            &g,
            alpha,
            (&a, &b),
            (&c, Some(&c)),
            tol,
            Verify::None,
            1,
        );
        assert!(none.result.is_ok() && check.is_none());
    }

    #[test]
    fn the_fp8_table_and_json_name_cublaslt_fast_accumulation_and_the_scales() {
        let (mut report, mut header) = sample_report(Ok(()));
        header.dtype = Dtype::E4m3;
        header.kernel = "gemm_sm90_e4m3_nt";
        header.k = 2048;
        report.accumulation = Accumulation::Fp8TensorCore;
        report.scales = Some(Fp8Scales::RUN);
        report.grid = [132, 1, 1];
        report.block = [384, 1, 1];
        report.launched = vec!["gemm_sm90_e4m3_nt".into()];
        // 2·2048³ flop in 25 µs and 20 µs: 687 and 859 TFLOP/s.
        report.kernel_times = vec![Duration::from_micros(25); 3];
        report.cublas = Some(Ok(CublasRun {
            library: "cuBLASLt",
            call: "cublasLtMatmul",
            compute: "CUBLAS_COMPUTE_32F",
            fast_accum: Some(true),
            version: "13.1.0".into(),
            path: "libcublasLt.so.13".into(),
            times: vec![Duration::from_micros(20); 3],
        }));
        report.cublas_check = Some(Verification {
            result: Ok(()),
            max_ratio: 0.02,
            ..sample_report(Ok(())).0.verification
        });
        let text = report.render(&header);
        for want in [
            "C = alpha*scale_a*scale_b*A*B^T, 2048 x 2048 x 2048 e4m3",
            "kernel gemm_sm90_e4m3_nt",
            "A e4m3 M×K, B e4m3 stored N×K",
            "scale_a 0.5, scale_b 4 (device pointers), alpha 1, beta 0",
            "accumulation fp8_tensor_core",
            "TFLOP/s",
            "687.2",
            "cuBLASLt",
            "859.0",
            "cublasLtMatmul TN, CUBLAS_COMPUTE_32F, FAST_ACCUM 1, cuBLASLt 13.1.0",
            "vs cuBLASLt",
            "0.800x",
            "cuBLASLt check",
        ] {
            assert!(text.contains(want), "no {want:?} in\n{text}");
        }
        assert!(!text.contains("GFLOP/s"), "{text}");
        let json = report.to_json(&header, Exit::Ok).to_pretty();
        for want in [
            "\"dtype\": \"e4m3\"",
            "\"accumulation\": \"fp8_tensor_core\"",
            "\"b_stored\": \"NxK\"",
            "\"scale_a\": 0.5",
            "\"scale_b\": 4",
            "\"library\": \"cuBLASLt\"",
            "\"call\": \"cublasLtMatmul\"",
            "\"fast_accum\": true",
            "\"ratio_to_cublas\": 0.8",
            "\"gflops\"",
            "\"max_error_over_tolerance\"",
        ] {
            assert!(json.contains(want), "no {want} in\n{json}");
        }
        // The other dtypes keep their fields: no scales, accumulation named.
        let (report, header) = sample_report(Ok(()));
        let json = report.to_json(&header, Exit::Ok);
        assert_eq!(json.get("scales"), Some(&Json::Null));
        assert_eq!(json.get("accumulation"), Some(&Json::from("f32")));
        assert!(json.to_pretty().contains("\"fast_accum\": null"));
        // Without cuBLASLt the FP8 table says so under its name.
        let (mut missing, mut header) = sample_report(Ok(()));
        header.dtype = Dtype::E5m2xE4m3;
        missing.cublas = Some(Err(CublasError::InvalidArgument("x".into())));
        let text = missing.render(&header);
        assert!(
            text.contains("cuBLASLt") && text.contains("not run: cuBLAS arguments: x"),
            "{text}"
        );
    }

    #[test]
    fn verification_passes_a_correct_product_and_catches_a_wrong_one() {
        let mut rng = Rng::from_seed(7);
        // Tall enough that the full reference runs in row blocks.
        let g = Gemm::nn(16 * reference::threads().max(1) * 2 + 5, 33, 70);
        let a = rng.vec_f32(g.a_len());
        let b = rng.vec_f32(g.b_len());
        let mut c = naive(&g, &a, &b);
        let tol = Tolerance::gemm(Accumulation::F32, g.k);
        for mode in [Verify::Full, Verify::Sampled, Verify::Auto] {
            let v = verify(&mut rng, &g, 1.0, (&a, &b), (&c, None), tol, mode, 50).0;
            assert!(v.result.is_ok(), "{mode:?}: {:?}", v.result);
            assert!(v.max_ratio < 1.0 && v.checked > 0);
        }
        let full = verify(
            &mut rng,
            &g,
            1.0,
            (&a, &b),
            (&c, None),
            tol,
            Verify::Full,
            50,
        )
        .0;
        assert_eq!(full.checked, g.c_len());
        assert_eq!(full.mode, "full");
        // The reference in row blocks equals the one-piece reference.
        let whole = reference::gemm(&g, 1.0, &a, &b, 0.0, None);
        let blocked = full_reference(&g, 1.0, &a, &b, &mut Progress::new("t", 100));
        assert_eq!(whole, blocked);
        // A wrong element at an edge is caught by the sampled check too.
        c[g.n - 1] += 0.5;
        let v = verify(
            &mut rng,
            &g,
            1.0,
            (&a, &b),
            (&c, None),
            tol,
            Verify::Sampled,
            10,
        )
        .0;
        assert_eq!(v.mode, "sampled");
        assert!(v.result.is_err() && v.max_ratio > 1.0);
        // An unwritten (poisoned) element anywhere fails a sampled check.
        c[g.n - 1] -= 0.5;
        c[g.c_len() / 2 + 3] = f32::from_bits(reference::POISON_U32);
        let v = verify(
            &mut rng,
            &g,
            1.0,
            (&a, &b),
            (&c, None),
            tol,
            Verify::Sampled,
            1,
        )
        .0;
        assert!(v.result.unwrap_err().contains("never written"));
        let none = verify(
            &mut rng,
            &g,
            1.0,
            (&a, &b),
            (&c, None),
            tol,
            Verify::None,
            1,
        )
        .0;
        assert!(none.result.is_ok() && none.checked == 0);
    }
}
