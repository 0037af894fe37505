//! The matrix-multiply hardware suite: every kernel of `kernels/matmul.cu`
//! and `kernels/matmul_mma.cu` (naive, tiled, GEMM in every operand layout
//! with alpha and beta, register-blocked SGEMM/DGEMM, batched, f16 and bf16
//! on tensor cores) × shapes (1×1×1, primes, non-multiples of every tile,
//! tall-skinny, short-wide, exact tile multiples, K = 0, 1024³, 4096³) ×
//! element types × memory kinds (device; unified, read on the host after
//! the scope; pinned with asynchronous copies) × streams (independent
//! products on several streams in one scope; dependent ones ordered by
//! events) and the compile path (name expressions, the compile cache).
//!
//! The H200 kernels (`gemm_sm90.cu`: wgmma + TMA for bf16, f16 and tf32;
//! `sgemm.cu`; `dgemm.cu`: DMMA) run through `cudakit_suite::gemm::Product`,
//! the path `cudakit matmul` takes: edge shapes that are not tile
//! multiples, K = 0, all four transposes (the kernels' own storage order
//! directly, the others by the documented fallback: the operand is
//! transposed on the host while staged; tf32 with B stored K×N also by the
//! device transpose), rows padded to 16 bytes for TMA where K or N is odd,
//! alpha and beta (beta = 0 over a NaN-poisoned C), and 4096³. None of them
//! has a batched entry point. They need sm_90 (gemm_sm90.cu exactly
//! sm_90a): elsewhere they are reported as not run.
//!
//! Every case is one named test, generated from the tables below by
//! `macro_rules!`: adding a case is adding a line. Every test draws fresh
//! inputs from one [`Rng`] (its seed is printed, and repeated in every
//! failure message), poisons its outputs, checks every output element
//! against the f64 reference of `cudakit_suite::reference` with the
//! tolerances derived there (outputs above 10⁷ elements: 10⁵ random
//! positions plus every edge row and column), and ends with the context's
//! arena empty.
//!
//! Tests named `large_*` run 4096-class products: the runner's
//! compute-sanitizer pass may skip them (`--skip large_`).
//!
//! The tests of this file share one context (a process-wide `OnceLock`, so
//! the primary context is created once per process, not once per test) and
//! take one lock, so they run one at a time whatever `--test-threads` says:
//! the arena is the context's, and "no live allocation at the end" must not
//! see another test's buffers.
//!
//! The tests at the end that need no GPU check the tables themselves (every
//! kernel name resolves, every kernel is covered) and the checking logic
//! against a CPU emulation of the f32/f64 kernels, so the GPU run's checks
//! are known to accept a correct result and reject a wrong one.

use std::borrow::Cow;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, OnceLock};

use cudakit::compile::program::{Origin, Program};
use cudakit::{
    params, Bf16, Cache, Context, DeviceBuffer, DeviceCopy, Event, Function, KernelArg,
    LaunchConfig, Module, ParamList, PinnedBuffer, Stream, UnifiedBuffer, F16,
};
use cudakit_suite::gemm::{self, Pad, Product, Transpose};
use cudakit_suite::kernels::{
    matmul_kernel, Elem, MatmulKernel, Signature, Source, MATMUL_KERNELS, SOURCES,
};
use cudakit_suite::reference::{self, Gemm, Op, Real, Reference, Tolerance};
use cudakit_suite::rng::Rng;

// ---------------------------------------------------------------------------
// Kernel names (name expressions and `extern "C"` names, as in
// kernels/README.md). `names_resolve_and_every_kernel_is_covered` checks
// each against the descriptors on the CPU, so a typo fails in CI, not on the
// GPU machine.
// ---------------------------------------------------------------------------

const NAIVE_F32: &str = "matmul_naive<float>";
const NAIVE_F64: &str = "matmul_naive<double>";
const NAIVE_C_F32: &str = "matmul_naive_f32";
const NAIVE_C_F64: &str = "matmul_naive_f64";
const TILED_F32_T8: &str = "matmul_tiled<float, 8>";
const TILED_F32_T16: &str = "matmul_tiled<float, 16>";
const TILED_F32_T32: &str = "matmul_tiled<float, 32>";
const TILED_F64_T8: &str = "matmul_tiled<double, 8>";
const TILED_F64_T16: &str = "matmul_tiled<double, 16>";
const TILED_F64_T32: &str = "matmul_tiled<double, 32>";
const GEMM_F32_NN: &str = "gemm<float, false, false>";
const GEMM_F32_NT: &str = "gemm<float, false, true>";
const GEMM_F32_TN: &str = "gemm<float, true, false>";
const GEMM_F32_TT: &str = "gemm<float, true, true>";
const GEMM_F64_NN: &str = "gemm<double, false, false>";
const GEMM_F64_NT: &str = "gemm<double, false, true>";
const GEMM_F64_TN: &str = "gemm<double, true, false>";
const GEMM_F64_TT: &str = "gemm<double, true, true>";
const BATCHED_F32: &str = "matmul_batched<float>";
const BATCHED_F64: &str = "matmul_batched<double>";
/// SGEMM, 128×128 block tile, 8×8 outputs per thread.
const SGEMM_RB128: &str = "gemm_regblock<float, 128, 128, 8, 8, 8>";
/// SGEMM, 64×64 block tile, 8×8 per thread.
const SGEMM_RB64: &str = "gemm_regblock<float, 64, 64, 8, 8, 8>";
/// SGEMM, 64×64 block tile, 4×4 per thread, K step 16.
const SGEMM_RB64K16: &str = "gemm_regblock<float, 64, 64, 16, 4, 4>";
/// DGEMM, 64×64 block tile, 4×4 per thread.
const DGEMM_RB64: &str = "gemm_regblock<double, 64, 64, 8, 4, 4>";
/// DGEMM, 32×32 block tile, 4×4 per thread.
const DGEMM_RB32: &str = "gemm_regblock<double, 32, 32, 8, 4, 4>";
const MMA_F16: &str = "matmul_f16_mma";
const MMA_BF16: &str = "matmul_bf16_mma";
const MMA_TF32: &str = "matmul_tf32_mma";

/// Every name above.
const ALL_NAMES: &[&str] = &[
    NAIVE_F32,
    NAIVE_F64,
    NAIVE_C_F32,
    NAIVE_C_F64,
    TILED_F32_T8,
    TILED_F32_T16,
    TILED_F32_T32,
    TILED_F64_T8,
    TILED_F64_T16,
    TILED_F64_T32,
    GEMM_F32_NN,
    GEMM_F32_NT,
    GEMM_F32_TN,
    GEMM_F32_TT,
    GEMM_F64_NN,
    GEMM_F64_NT,
    GEMM_F64_TN,
    GEMM_F64_TT,
    BATCHED_F32,
    BATCHED_F64,
    SGEMM_RB128,
    SGEMM_RB64,
    SGEMM_RB64K16,
    DGEMM_RB64,
    DGEMM_RB32,
    MMA_F16,
    MMA_BF16,
    MMA_TF32,
];

// ---------------------------------------------------------------------------
// The shared context, the lock, the leak check.
// ---------------------------------------------------------------------------

/// The process's context on device 0, created on first use and kept (the
/// primary context would otherwise be released and created again by every
/// test).
fn ctx() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(|| Context::new(0).expect("device 0"))
}

/// Serializes this file's GPU tests (see the module docs). A test that
/// panicked while holding the lock has dropped its buffers while unwinding,
/// so a poisoned lock is taken over as it is.
fn gpu_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Asserts that the context's arena has no live allocation.
fn assert_no_leaks(ctx: &Context) {
    // The staged pipeline keeps its page-locked chunks (AllocKind::Staging)
    // between transfers: hand them back so the count below is the test's.
    ctx.release_staging();
    let report = ctx.leak_report();
    assert!(report.is_empty(), "live allocations at the end: {report}");
    assert_eq!(ctx.stats().live_count(), 0, "{report}");
}

/// Waits for everything queued on the context so far.
///
/// Synchronous uploads and fills (`cuMemcpyHtoD_v2` from pageable memory,
/// `cuMemsetD32_v2`) run on the legacy default stream, and may still be in
/// flight when they return: the driver documents that a pageable
/// host-to-device copy returns once the data is staged, and that memsets of
/// device memory are asynchronous. `ctx.stream()` streams are non-blocking,
/// so the legacy stream does not order them. Waiting for the context makes
/// every input and poison land before a kernel can read or overwrite it.
fn settle(ctx: &Context) {
    ctx.synchronize()
        .expect("cuCtxSynchronize before the launches");
}

// ---------------------------------------------------------------------------
// Element types.
// ---------------------------------------------------------------------------

/// An element type of a matrix kernel's operands or output.
trait Scalar: Real + DeviceCopy {
    /// `n` fresh random values in [-1, 1) (see [`Rng`]).
    fn random(rng: &mut Rng, n: usize) -> Vec<Self>;
    /// `x` rounded to this type.
    fn from_f64(x: f64) -> Self;
}

impl Scalar for f32 {
    fn random(rng: &mut Rng, n: usize) -> Vec<f32> {
        rng.vec_f32(n)
    }
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
}

impl Scalar for f64 {
    fn random(rng: &mut Rng, n: usize) -> Vec<f64> {
        rng.vec_f64(n)
    }
    fn from_f64(x: f64) -> f64 {
        x
    }
}

impl Scalar for F16 {
    fn random(rng: &mut Rng, n: usize) -> Vec<F16> {
        rng.vec_f16(n)
    }
    fn from_f64(x: f64) -> F16 {
        F16::from_f32(x as f32)
    }
}

impl Scalar for Bf16 {
    fn random(rng: &mut Rng, n: usize) -> Vec<Bf16> {
        rng.vec_bf16(n)
    }
    fn from_f64(x: f64) -> Bf16 {
        Bf16::from_f32(x as f32)
    }
}

/// `v`, or one zero when it is empty: a K = 0 product still needs
/// (unread) A and B buffers, and cudakit has no empty buffers.
fn nonempty<T: Scalar>(v: &[T]) -> Cow<'_, [T]> {
    if v.is_empty() {
        Cow::Owned(vec![T::from_f64(0.0)])
    } else {
        Cow::Borrowed(v)
    }
}

fn to_f64<T: Real>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64()).collect()
}

// ---------------------------------------------------------------------------
// Modules and launch configurations.
// ---------------------------------------------------------------------------

/// The program for a kernel file, with every template instantiation of it
/// registered as a name expression (one program per file, so every test of
/// a file compiles the same program and all but the first hit the cache).
fn program_for(file: &str) -> Program {
    Source::named(file).program()
}

/// `file` compiled for the device (through the process's compile cache)
/// and loaded.
fn load(ctx: &'static Context, file: &str) -> Module<'static> {
    let compiled = program_for(file)
        .compile_for(ctx)
        .unwrap_or_else(|e| panic!("compile {file}: {e}"));
    ctx.load_module(&compiled)
        .unwrap_or_else(|e| panic!("load {file}: {e}"))
}

/// The grid and block `kern` must be launched with for an M×N output
/// (`batch` entries for the batched kernels; 1 otherwise).
fn config(kern: &MatmulKernel, m: usize, n: usize, batch: usize) -> LaunchConfig {
    let g = kern.grid(m, n, batch);
    let b = kern.block;
    LaunchConfig::new((g[0], g[1], g[2]), (b[0], b[1], b[2]))
}

fn int(x: usize) -> i32 {
    i32::try_from(x).expect("a dimension fits the kernels' int")
}

// ---------------------------------------------------------------------------
// Parameter lists: built from whatever buffers hold A, B and C (device
// buffers, or unified buffers borrowed exclusively).
// ---------------------------------------------------------------------------

/// Builds a kernel's parameter list around its A, B and C arguments.
trait Args {
    fn build<'a>(
        &self,
        a: impl KernelArg<'a>,
        b: impl KernelArg<'a>,
        c: impl KernelArg<'a>,
    ) -> ParamList<'a>;
}

/// `(A, B, C, M, N, K)` or `(M, N, K, alpha, A, B, beta, C)`.
struct MatmulArgs<O> {
    signature: Signature,
    dims: [i32; 3],
    alpha: O,
    beta: O,
}

impl<O: Scalar> Args for MatmulArgs<O> {
    fn build<'a>(
        &self,
        a: impl KernelArg<'a>,
        b: impl KernelArg<'a>,
        c: impl KernelArg<'a>,
    ) -> ParamList<'a> {
        let [m, n, k] = self.dims;
        match self.signature {
            Signature::Matmul => params![a, b, c, m, n, k],
            Signature::Gemm => params![m, n, k, self.alpha, a, b, self.beta, c],
            Signature::Batched => panic!("batched kernels take BatchedArgs"),
            Signature::Tma | Signature::TmaStore => {
                panic!("TMA kernels run through cudakit_suite::gemm::Product")
            }
            Signature::TmaScaled => panic!("FP8 kernels run through cudakit_suite::fp8::Fp8Gemm"),
        }
    }
}

/// `(A, B, C, M, N, K, strideA, strideB, strideC, batch)`.
struct BatchedArgs {
    layout: Batch,
}

impl Args for BatchedArgs {
    fn build<'a>(
        &self,
        a: impl KernelArg<'a>,
        b: impl KernelArg<'a>,
        c: impl KernelArg<'a>,
    ) -> ParamList<'a> {
        let l = &self.layout;
        let stride = |s: usize| i64::try_from(s).expect("stride fits in long long");
        params![
            a,
            b,
            c,
            int(l.m),
            int(l.n),
            int(l.k),
            stride(l.stride_a),
            stride(l.stride_b),
            stride(l.stride_c),
            int(l.batch)
        ]
    }
}

/// Memory kinds the operands live in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mem {
    /// Device buffers, uploaded and read back synchronously.
    Device,
    /// Unified buffers written and read on the host (after the scope), and
    /// passed to the kernel borrowed exclusively.
    Unified,
    /// Pinned host buffers, copied to and from device buffers
    /// asynchronously on the launch's stream, in the same scope.
    Pinned,
}

/// The output's contents before the launch.
#[derive(Clone, Copy)]
enum COut<'a, O> {
    /// Poisoned, `len` elements (beta = 0: the kernel must not read it).
    Poison(usize),
    /// The input C (beta ≠ 0).
    Input(&'a [O]),
}

impl<O: Scalar> COut<'_, O> {
    fn len(&self) -> usize {
        match self {
            COut::Poison(len) => *len,
            COut::Input(c) => c.len(),
        }
    }

    fn to_vec(self) -> Vec<O> {
        match self {
            COut::Poison(len) => vec![O::POISON; len],
            COut::Input(c) => c.to_vec(),
        }
    }
}

/// Runs `f` once on A = `a`, B = `b` and C (`c`) held in `mem`, on a stream
/// of its own, and returns C as the host reads it afterwards.
fn execute<I: Scalar, O: Scalar>(
    f: &Function<'_>,
    cfg: &LaunchConfig,
    mem: Mem,
    a: &[I],
    b: &[I],
    c: COut<'_, O>,
    args: &impl Args,
) -> Vec<O> {
    let ctx = ctx();
    let stream = ctx.stream().expect("stream");
    let (a, b) = (nonempty(a), nonempty(b));
    let name = f.name();
    let fail = |e: cudakit::Error| -> ! { panic!("{name} on {mem:?} memory: {e}") };
    match mem {
        Mem::Device => {
            let da = ctx.upload(&a).unwrap_or_else(|e| fail(e));
            let db = ctx.upload(&b).unwrap_or_else(|e| fail(e));
            let dc = match c {
                COut::Input(c) => ctx.upload(c).unwrap_or_else(|e| fail(e)),
                COut::Poison(len) => {
                    let d = ctx.alloc::<O>(len).unwrap_or_else(|e| fail(e));
                    d.fill(O::POISON).unwrap_or_else(|e| fail(e));
                    d
                }
            };
            settle(ctx);
            ctx.scope(|s| {
                let p = args.build(&da, &db, &dc);
                // SAFETY: the grid and block are the kernel's documented
                // ones for this shape (kernels/README.md), the buffers hold
                // op(A), op(B) and C of that shape (A and B at least one
                // element when K = 0), and the parameter list follows the
                // kernel's signature; every access is bounds-checked.
                unsafe { s.launch(&stream, f, cfg, &p) }
            })
            .unwrap_or_else(|e| fail(e));
            dc.to_vec().unwrap_or_else(|e| fail(e))
        }
        Mem::Unified => {
            let mut ua = ctx.alloc_unified::<I>(a.len()).unwrap_or_else(|e| fail(e));
            ua.as_mut_slice()
                .unwrap_or_else(|e| fail(e))
                .copy_from_slice(&a);
            let mut ub = ctx.alloc_unified::<I>(b.len()).unwrap_or_else(|e| fail(e));
            ub.as_mut_slice()
                .unwrap_or_else(|e| fail(e))
                .copy_from_slice(&b);
            let mut uc = ctx.alloc_unified::<O>(c.len()).unwrap_or_else(|e| fail(e));
            uc.as_mut_slice()
                .unwrap_or_else(|e| fail(e))
                .copy_from_slice(&c.to_vec());
            ctx.scope(|s| {
                let p = args.build(&mut ua, &mut ub, &mut uc);
                // SAFETY: as for device memory; the unified buffers are
                // borrowed exclusively until the scope has synchronized.
                unsafe { s.launch(&stream, f, cfg, &p) }
            })
            .unwrap_or_else(|e| fail(e));
            // Read on the host after the scope: the device is done with it.
            uc.to_vec().unwrap_or_else(|e| fail(e))
        }
        Mem::Pinned => {
            let mut pa = ctx.alloc_pinned::<I>(a.len()).unwrap_or_else(|e| fail(e));
            pa.copy_from_slice(&a);
            let mut pb = ctx.alloc_pinned::<I>(b.len()).unwrap_or_else(|e| fail(e));
            pb.copy_from_slice(&b);
            let mut pc = ctx.alloc_pinned::<O>(c.len()).unwrap_or_else(|e| fail(e));
            pc.copy_from_slice(&c.to_vec());
            let mut out = ctx.alloc_pinned::<O>(c.len()).unwrap_or_else(|e| fail(e));
            out.fill(O::POISON);
            let da = ctx.alloc::<I>(a.len()).unwrap_or_else(|e| fail(e));
            let db = ctx.alloc::<I>(b.len()).unwrap_or_else(|e| fail(e));
            let dc = ctx.alloc::<O>(c.len()).unwrap_or_else(|e| fail(e));
            ctx.scope(|s| {
                s.copy_to_device(&stream, &pa, &da)?;
                s.copy_to_device(&stream, &pb, &db)?;
                s.copy_to_device(&stream, &pc, &dc)?;
                let p = args.build(&da, &db, &dc);
                // SAFETY: as for device memory; the copies before and after
                // are ordered with the launch by the stream.
                unsafe { s.launch(&stream, f, cfg, &p) }?;
                s.copy_to_host(&stream, &dc, &mut out)
            })
            .unwrap_or_else(|e| fail(e));
            out.to_vec()
        }
    }
}

// ---------------------------------------------------------------------------
// One product: inputs, scaling, the check.
// ---------------------------------------------------------------------------

/// Which alpha and beta a case uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scaling {
    /// alpha = 1, beta = 0 (the only choice for the `(A, B, C, M, N, K)`
    /// kernels).
    One,
    /// A random alpha in ±[0.5, 1.5), beta = 0: C is poisoned and must not
    /// be read.
    Alpha,
    /// A random alpha, and beta in ±[0.25, 1.25) with C filled randomly.
    AlphaBeta,
}

/// A drawn product: its kernel, shape, inputs and scaling.
struct Job<I, O> {
    kern: &'static MatmulKernel,
    g: Gemm,
    a: Vec<I>,
    b: Vec<I>,
    alpha: O,
    beta: O,
    c_in: Option<Vec<O>>,
}

impl<I: Scalar, O: Scalar> Job<I, O> {
    fn new(rng: &mut Rng, kern: &'static MatmulKernel, [m, n, k]: [usize; 3], s: Scaling) -> Self {
        assert_ne!(kern.signature, Signature::Batched, "{}", kern.name);
        if s != Scaling::One {
            assert_eq!(
                kern.signature,
                Signature::Gemm,
                "{} has no alpha",
                kern.name
            );
        }
        let g = kern.gemm(m, n, k);
        let a = I::random(rng, g.a_len());
        let b = I::random(rng, g.b_len());
        let mut signed = |lo: f64| {
            let sign = if rng.next_u32() & 1 == 0 { 1.0 } else { -1.0 };
            O::from_f64(sign * (lo + rng.f64_unit()))
        };
        let (alpha, beta) = match s {
            Scaling::One => (O::from_f64(1.0), O::from_f64(0.0)),
            Scaling::Alpha => (signed(0.5), O::from_f64(0.0)),
            Scaling::AlphaBeta => (signed(0.5), signed(0.25)),
        };
        let c_in = (beta.to_f64() != 0.0).then(|| O::random(rng, g.c_len()));
        Job {
            kern,
            g,
            a,
            b,
            alpha,
            beta,
            c_in,
        }
    }

    fn args(&self) -> MatmulArgs<O> {
        MatmulArgs {
            signature: self.kern.signature,
            dims: [int(self.g.m), int(self.g.n), int(self.g.k)],
            alpha: self.alpha,
            beta: self.beta,
        }
    }

    fn c(&self) -> COut<'_, O> {
        match &self.c_in {
            Some(c) => COut::Input(c),
            None => COut::Poison(self.g.c_len()),
        }
    }

    fn config(&self) -> LaunchConfig {
        config(self.kern, self.g.m, self.g.n, 1)
    }

    /// Checks `got` against the f64 reference with the kernel's tolerance
    /// ([`reference::check_gemm`]: every element, or the sampled positions
    /// above 10⁷ elements). alpha and beta are the values the kernel
    /// received, widened.
    fn check(&self, rng: &mut Rng, got: &[O]) -> Result<(), String> {
        // With beta ≠ 0 the kernel is a gemm, whose C has A's type, so the
        // conversion is exact; the reference takes C in A's type.
        let c_in: Option<Vec<I>> = self
            .c_in
            .as_ref()
            .map(|c| c.iter().map(|v| I::from_f64(v.to_f64())).collect());
        reference::check_gemm(
            rng,
            &self.g,
            self.alpha.to_f64(),
            &self.a,
            &self.b,
            self.beta.to_f64(),
            c_in.as_deref(),
            got,
            self.kern.tolerance(self.g.k),
        )
        .map_err(|e| format!("{}: {e}", self.kern.name))
    }
}

/// One line of the case table.
#[derive(Clone, Copy, Debug)]
struct Case {
    kernel: &'static str,
    dims: [usize; 3],
    scaling: Scaling,
    mem: Mem,
}

fn run_case(case: Case) {
    let kern = matmul_kernel(case.kernel);
    match (kern.input, kern.output) {
        (Elem::F32, Elem::F32) => run_case_as::<f32, f32>(kern, case),
        (Elem::F64, Elem::F64) => run_case_as::<f64, f64>(kern, case),
        (Elem::F16, Elem::F32) => run_case_as::<F16, f32>(kern, case),
        (Elem::Bf16, Elem::F32) => run_case_as::<Bf16, f32>(kern, case),
        other => panic!("{}: no test path for {other:?}", kern.name),
    }
}

fn run_case_as<I: Scalar, O: Scalar>(kern: &'static MatmulKernel, case: Case) {
    let _gpu = gpu_lock();
    let ctx = ctx();
    let mut rng = Rng::new();
    let job: Job<I, O> = Job::new(&mut rng, kern, case.dims, case.scaling);
    let got = {
        let module = load(ctx, kern.file);
        let f = module.function(kern.name).unwrap_or_else(|e| panic!("{e}"));
        execute(
            &f,
            &job.config(),
            case.mem,
            &job.a,
            &job.b,
            job.c(),
            &job.args(),
        )
    };
    if let Err(e) = job.check(&mut rng, &got) {
        panic!("{case:?}: {e}");
    }
    assert_no_leaks(ctx);
}

/// One test per line: `name: kernel, (M, N, K), scaling, memory;`.
macro_rules! matmul_cases {
    ($($name:ident: $kernel:expr, ($m:expr, $n:expr, $k:expr), $scaling:ident, $mem:ident;)*) => {
        /// Every line of the table, for the CPU check of the table.
        const MATMUL_CASES: &[(&str, Case)] = &[$((
            stringify!($name),
            Case {
                kernel: $kernel,
                dims: [$m, $n, $k],
                scaling: Scaling::$scaling,
                mem: Mem::$mem,
            },
        )),*];
        $(
            #[test]
            #[ignore = "needs an NVIDIA GPU"]
            fn $name() {
                run_case(Case {
                    kernel: $kernel,
                    dims: [$m, $n, $k],
                    scaling: Scaling::$scaling,
                    mem: Mem::$mem,
                });
            }
        )*
    };
}

// Shapes: 1×1×1; primes 127×253×511; 33×65×17 and 129×130×131, which are
// not multiples of any tile (8, 16, 32, 64, 128) or K step (8, 16, 32);
// tall-skinny 4099×7×64; short-wide 5×4097×33; exact tile multiples; K = 0
// (C = beta·C, or zeros); 1024³; and, in `large_*`, 4096³.
matmul_cases! {
    // Naive, one thread per element: templates and extern "C" twins.
    naive_f32_1x1x1: NAIVE_F32, (1, 1, 1), One, Device;
    naive_f32_127x253x511: NAIVE_F32, (127, 253, 511), One, Device;
    naive_f32_33x65x17: NAIVE_F32, (33, 65, 17), One, Device;
    naive_f32_129x130x131: NAIVE_F32, (129, 130, 131), One, Device;
    naive_f32_4099x7x64: NAIVE_F32, (4099, 7, 64), One, Device;
    naive_f32_5x4097x33: NAIVE_F32, (5, 4097, 33), One, Device;
    naive_f32_5x7x0: NAIVE_F32, (5, 7, 0), One, Device;
    naive_f64_1x1x1: NAIVE_F64, (1, 1, 1), One, Device;
    naive_f64_127x253x511: NAIVE_F64, (127, 253, 511), One, Device;
    naive_f64_33x65x17: NAIVE_F64, (33, 65, 17), One, Device;
    naive_f64_129x130x131: NAIVE_F64, (129, 130, 131), One, Device;
    naive_f64_4099x7x64: NAIVE_F64, (4099, 7, 64), One, Device;
    naive_f64_5x4097x33: NAIVE_F64, (5, 4097, 33), One, Device;
    naive_f64_5x7x0: NAIVE_F64, (5, 7, 0), One, Device;
    naive_c_f32_1x1x1: NAIVE_C_F32, (1, 1, 1), One, Device;
    naive_c_f32_127x253x511: NAIVE_C_F32, (127, 253, 511), One, Device;
    naive_c_f32_129x130x131: NAIVE_C_F32, (129, 130, 131), One, Device;
    naive_c_f64_1x1x1: NAIVE_C_F64, (1, 1, 1), One, Device;
    naive_c_f64_127x253x511: NAIVE_C_F64, (127, 253, 511), One, Device;
    naive_c_f64_129x130x131: NAIVE_C_F64, (129, 130, 131), One, Device;

    // Shared-memory tiled, TILE ∈ {8, 16, 32}, f32 and f64.
    tiled_f32_t8_1x1x1: TILED_F32_T8, (1, 1, 1), One, Device;
    tiled_f32_t8_127x253x511: TILED_F32_T8, (127, 253, 511), One, Device;
    tiled_f32_t8_33x65x17: TILED_F32_T8, (33, 65, 17), One, Device;
    tiled_f32_t8_129x130x131: TILED_F32_T8, (129, 130, 131), One, Device;
    tiled_f32_t8_4099x7x64: TILED_F32_T8, (4099, 7, 64), One, Device;
    tiled_f32_t8_5x4097x33: TILED_F32_T8, (5, 4097, 33), One, Device;
    tiled_f32_t8_64x64x64: TILED_F32_T8, (64, 64, 64), One, Device;
    tiled_f32_t8_257x129x300: TILED_F32_T8, (257, 129, 300), One, Device;
    tiled_f32_t16_1x1x1: TILED_F32_T16, (1, 1, 1), One, Device;
    tiled_f32_t16_127x253x511: TILED_F32_T16, (127, 253, 511), One, Device;
    tiled_f32_t16_33x65x17: TILED_F32_T16, (33, 65, 17), One, Device;
    tiled_f32_t16_129x130x131: TILED_F32_T16, (129, 130, 131), One, Device;
    tiled_f32_t16_4099x7x64: TILED_F32_T16, (4099, 7, 64), One, Device;
    tiled_f32_t16_5x4097x33: TILED_F32_T16, (5, 4097, 33), One, Device;
    tiled_f32_t16_64x64x64: TILED_F32_T16, (64, 64, 64), One, Device;
    tiled_f32_t32_1x1x1: TILED_F32_T32, (1, 1, 1), One, Device;
    tiled_f32_t32_127x253x511: TILED_F32_T32, (127, 253, 511), One, Device;
    tiled_f32_t32_33x65x17: TILED_F32_T32, (33, 65, 17), One, Device;
    tiled_f32_t32_129x130x131: TILED_F32_T32, (129, 130, 131), One, Device;
    tiled_f32_t32_4099x7x64: TILED_F32_T32, (4099, 7, 64), One, Device;
    tiled_f32_t32_5x4097x33: TILED_F32_T32, (5, 4097, 33), One, Device;
    tiled_f32_t32_64x64x64: TILED_F32_T32, (64, 64, 64), One, Device;
    tiled_f32_t32_1024x1024x1024: TILED_F32_T32, (1024, 1024, 1024), One, Device;
    tiled_f64_t8_1x1x1: TILED_F64_T8, (1, 1, 1), One, Device;
    tiled_f64_t8_127x253x511: TILED_F64_T8, (127, 253, 511), One, Device;
    tiled_f64_t8_33x65x17: TILED_F64_T8, (33, 65, 17), One, Device;
    tiled_f64_t8_129x130x131: TILED_F64_T8, (129, 130, 131), One, Device;
    tiled_f64_t8_4099x7x64: TILED_F64_T8, (4099, 7, 64), One, Device;
    tiled_f64_t8_5x4097x33: TILED_F64_T8, (5, 4097, 33), One, Device;
    tiled_f64_t8_64x64x64: TILED_F64_T8, (64, 64, 64), One, Device;
    tiled_f64_t16_1x1x1: TILED_F64_T16, (1, 1, 1), One, Device;
    tiled_f64_t16_127x253x511: TILED_F64_T16, (127, 253, 511), One, Device;
    tiled_f64_t16_33x65x17: TILED_F64_T16, (33, 65, 17), One, Device;
    tiled_f64_t16_129x130x131: TILED_F64_T16, (129, 130, 131), One, Device;
    tiled_f64_t16_4099x7x64: TILED_F64_T16, (4099, 7, 64), One, Device;
    tiled_f64_t16_5x4097x33: TILED_F64_T16, (5, 4097, 33), One, Device;
    tiled_f64_t16_64x64x64: TILED_F64_T16, (64, 64, 64), One, Device;
    tiled_f64_t16_1024x1024x1024: TILED_F64_T16, (1024, 1024, 1024), One, Device;
    tiled_f64_t32_1x1x1: TILED_F64_T32, (1, 1, 1), One, Device;
    tiled_f64_t32_127x253x511: TILED_F64_T32, (127, 253, 511), One, Device;
    tiled_f64_t32_33x65x17: TILED_F64_T32, (33, 65, 17), One, Device;
    tiled_f64_t32_129x130x131: TILED_F64_T32, (129, 130, 131), One, Device;
    tiled_f64_t32_4099x7x64: TILED_F64_T32, (4099, 7, 64), One, Device;
    tiled_f64_t32_5x4097x33: TILED_F64_T32, (5, 4097, 33), One, Device;
    tiled_f64_t32_64x64x64: TILED_F64_T32, (64, 64, 64), One, Device;

    // GEMM with alpha and beta in every operand layout. `_beta0`: beta = 0
    // with C poisoned (never read); `_beta`: beta ≠ 0 with C random.
    gemm_f32_nn_1x1x1_beta: GEMM_F32_NN, (1, 1, 1), AlphaBeta, Device;
    gemm_f32_nn_127x253x511_beta0: GEMM_F32_NN, (127, 253, 511), Alpha, Device;
    gemm_f32_nn_127x253x511_beta: GEMM_F32_NN, (127, 253, 511), AlphaBeta, Device;
    gemm_f32_nn_33x65x17_one: GEMM_F32_NN, (33, 65, 17), One, Device;
    gemm_f32_nn_129x130x131_beta: GEMM_F32_NN, (129, 130, 131), AlphaBeta, Device;
    gemm_f32_nn_4099x7x64_beta: GEMM_F32_NN, (4099, 7, 64), AlphaBeta, Device;
    gemm_f32_nn_5x4097x33_beta0: GEMM_F32_NN, (5, 4097, 33), Alpha, Device;
    gemm_f32_nn_5x7x0_beta: GEMM_F32_NN, (5, 7, 0), AlphaBeta, Device;
    gemm_f32_nn_1024x1024x1024_beta: GEMM_F32_NN, (1024, 1024, 1024), AlphaBeta, Device;
    gemm_f32_nt_1x1x1_beta: GEMM_F32_NT, (1, 1, 1), AlphaBeta, Device;
    gemm_f32_nt_127x253x511_beta0: GEMM_F32_NT, (127, 253, 511), Alpha, Device;
    gemm_f32_nt_127x253x511_beta: GEMM_F32_NT, (127, 253, 511), AlphaBeta, Device;
    gemm_f32_nt_33x65x17_one: GEMM_F32_NT, (33, 65, 17), One, Device;
    gemm_f32_nt_129x130x131_beta: GEMM_F32_NT, (129, 130, 131), AlphaBeta, Device;
    gemm_f32_nt_4099x7x64_beta: GEMM_F32_NT, (4099, 7, 64), AlphaBeta, Device;
    gemm_f32_nt_5x4097x33_beta0: GEMM_F32_NT, (5, 4097, 33), Alpha, Device;
    gemm_f32_nt_5x7x0_beta: GEMM_F32_NT, (5, 7, 0), AlphaBeta, Device;
    gemm_f32_tn_1x1x1_beta: GEMM_F32_TN, (1, 1, 1), AlphaBeta, Device;
    gemm_f32_tn_127x253x511_beta0: GEMM_F32_TN, (127, 253, 511), Alpha, Device;
    gemm_f32_tn_127x253x511_beta: GEMM_F32_TN, (127, 253, 511), AlphaBeta, Device;
    gemm_f32_tn_33x65x17_one: GEMM_F32_TN, (33, 65, 17), One, Device;
    gemm_f32_tn_129x130x131_beta: GEMM_F32_TN, (129, 130, 131), AlphaBeta, Device;
    gemm_f32_tn_4099x7x64_beta: GEMM_F32_TN, (4099, 7, 64), AlphaBeta, Device;
    gemm_f32_tn_5x4097x33_beta0: GEMM_F32_TN, (5, 4097, 33), Alpha, Device;
    gemm_f32_tn_5x7x0_beta: GEMM_F32_TN, (5, 7, 0), AlphaBeta, Device;
    gemm_f32_tt_1x1x1_beta: GEMM_F32_TT, (1, 1, 1), AlphaBeta, Device;
    gemm_f32_tt_127x253x511_beta0: GEMM_F32_TT, (127, 253, 511), Alpha, Device;
    gemm_f32_tt_127x253x511_beta: GEMM_F32_TT, (127, 253, 511), AlphaBeta, Device;
    gemm_f32_tt_33x65x17_one: GEMM_F32_TT, (33, 65, 17), One, Device;
    gemm_f32_tt_129x130x131_beta: GEMM_F32_TT, (129, 130, 131), AlphaBeta, Device;
    gemm_f32_tt_4099x7x64_beta: GEMM_F32_TT, (4099, 7, 64), AlphaBeta, Device;
    gemm_f32_tt_5x4097x33_beta0: GEMM_F32_TT, (5, 4097, 33), Alpha, Device;
    gemm_f32_tt_5x7x0_beta: GEMM_F32_TT, (5, 7, 0), AlphaBeta, Device;
    gemm_f64_nn_1x1x1_beta: GEMM_F64_NN, (1, 1, 1), AlphaBeta, Device;
    gemm_f64_nn_127x253x511_beta0: GEMM_F64_NN, (127, 253, 511), Alpha, Device;
    gemm_f64_nn_127x253x511_beta: GEMM_F64_NN, (127, 253, 511), AlphaBeta, Device;
    gemm_f64_nn_33x65x17_one: GEMM_F64_NN, (33, 65, 17), One, Device;
    gemm_f64_nn_129x130x131_beta: GEMM_F64_NN, (129, 130, 131), AlphaBeta, Device;
    gemm_f64_nn_4099x7x64_beta: GEMM_F64_NN, (4099, 7, 64), AlphaBeta, Device;
    gemm_f64_nn_5x4097x33_beta0: GEMM_F64_NN, (5, 4097, 33), Alpha, Device;
    gemm_f64_nn_5x7x0_beta: GEMM_F64_NN, (5, 7, 0), AlphaBeta, Device;
    gemm_f64_nt_1x1x1_beta: GEMM_F64_NT, (1, 1, 1), AlphaBeta, Device;
    gemm_f64_nt_127x253x511_beta0: GEMM_F64_NT, (127, 253, 511), Alpha, Device;
    gemm_f64_nt_127x253x511_beta: GEMM_F64_NT, (127, 253, 511), AlphaBeta, Device;
    gemm_f64_nt_33x65x17_one: GEMM_F64_NT, (33, 65, 17), One, Device;
    gemm_f64_nt_129x130x131_beta: GEMM_F64_NT, (129, 130, 131), AlphaBeta, Device;
    gemm_f64_nt_4099x7x64_beta: GEMM_F64_NT, (4099, 7, 64), AlphaBeta, Device;
    gemm_f64_nt_5x4097x33_beta0: GEMM_F64_NT, (5, 4097, 33), Alpha, Device;
    gemm_f64_nt_5x7x0_beta: GEMM_F64_NT, (5, 7, 0), AlphaBeta, Device;
    gemm_f64_tn_1x1x1_beta: GEMM_F64_TN, (1, 1, 1), AlphaBeta, Device;
    gemm_f64_tn_127x253x511_beta0: GEMM_F64_TN, (127, 253, 511), Alpha, Device;
    gemm_f64_tn_127x253x511_beta: GEMM_F64_TN, (127, 253, 511), AlphaBeta, Device;
    gemm_f64_tn_33x65x17_one: GEMM_F64_TN, (33, 65, 17), One, Device;
    gemm_f64_tn_129x130x131_beta: GEMM_F64_TN, (129, 130, 131), AlphaBeta, Device;
    gemm_f64_tn_4099x7x64_beta: GEMM_F64_TN, (4099, 7, 64), AlphaBeta, Device;
    gemm_f64_tn_5x4097x33_beta0: GEMM_F64_TN, (5, 4097, 33), Alpha, Device;
    gemm_f64_tn_5x7x0_beta: GEMM_F64_TN, (5, 7, 0), AlphaBeta, Device;
    gemm_f64_tt_1x1x1_beta: GEMM_F64_TT, (1, 1, 1), AlphaBeta, Device;
    gemm_f64_tt_127x253x511_beta0: GEMM_F64_TT, (127, 253, 511), Alpha, Device;
    gemm_f64_tt_127x253x511_beta: GEMM_F64_TT, (127, 253, 511), AlphaBeta, Device;
    gemm_f64_tt_33x65x17_one: GEMM_F64_TT, (33, 65, 17), One, Device;
    gemm_f64_tt_129x130x131_beta: GEMM_F64_TT, (129, 130, 131), AlphaBeta, Device;
    gemm_f64_tt_4099x7x64_beta: GEMM_F64_TT, (4099, 7, 64), AlphaBeta, Device;
    gemm_f64_tt_5x4097x33_beta0: GEMM_F64_TT, (5, 4097, 33), Alpha, Device;
    gemm_f64_tt_5x7x0_beta: GEMM_F64_TT, (5, 7, 0), AlphaBeta, Device;
    gemm_f64_tt_1024x1024x1024_beta: GEMM_F64_TT, (1024, 1024, 1024), AlphaBeta, Device;

    // Register-blocked SGEMM and DGEMM (NN, alpha and beta).
    sgemm_rb128_1x1x1: SGEMM_RB128, (1, 1, 1), One, Device;
    sgemm_rb128_127x253x511_beta: SGEMM_RB128, (127, 253, 511), AlphaBeta, Device;
    sgemm_rb128_33x65x17_beta0: SGEMM_RB128, (33, 65, 17), Alpha, Device;
    sgemm_rb128_129x130x131_beta: SGEMM_RB128, (129, 130, 131), AlphaBeta, Device;
    sgemm_rb128_4099x7x64_beta0: SGEMM_RB128, (4099, 7, 64), Alpha, Device;
    sgemm_rb128_5x4097x33_beta: SGEMM_RB128, (5, 4097, 33), AlphaBeta, Device;
    sgemm_rb128_256x256x64_beta: SGEMM_RB128, (256, 256, 64), AlphaBeta, Device;
    sgemm_rb128_5x7x0_beta: SGEMM_RB128, (5, 7, 0), AlphaBeta, Device;
    sgemm_rb128_1024x1024x1024_beta: SGEMM_RB128, (1024, 1024, 1024), AlphaBeta, Device;
    sgemm_rb64_1x1x1: SGEMM_RB64, (1, 1, 1), One, Device;
    sgemm_rb64_127x253x511_beta: SGEMM_RB64, (127, 253, 511), AlphaBeta, Device;
    sgemm_rb64_33x65x17_beta0: SGEMM_RB64, (33, 65, 17), Alpha, Device;
    sgemm_rb64_129x130x131_beta: SGEMM_RB64, (129, 130, 131), AlphaBeta, Device;
    sgemm_rb64_4099x7x64_beta0: SGEMM_RB64, (4099, 7, 64), Alpha, Device;
    sgemm_rb64_5x4097x33_beta: SGEMM_RB64, (5, 4097, 33), AlphaBeta, Device;
    sgemm_rb64_256x256x64_beta: SGEMM_RB64, (256, 256, 64), AlphaBeta, Device;
    sgemm_rb64k16_1x1x1: SGEMM_RB64K16, (1, 1, 1), One, Device;
    sgemm_rb64k16_127x253x511_beta: SGEMM_RB64K16, (127, 253, 511), AlphaBeta, Device;
    sgemm_rb64k16_33x65x17_beta0: SGEMM_RB64K16, (33, 65, 17), Alpha, Device;
    sgemm_rb64k16_129x130x131_beta: SGEMM_RB64K16, (129, 130, 131), AlphaBeta, Device;
    sgemm_rb64k16_4099x7x64_beta0: SGEMM_RB64K16, (4099, 7, 64), Alpha, Device;
    sgemm_rb64k16_5x4097x33_beta: SGEMM_RB64K16, (5, 4097, 33), AlphaBeta, Device;
    sgemm_rb64k16_256x256x64_beta: SGEMM_RB64K16, (256, 256, 64), AlphaBeta, Device;
    sgemm_rb64k16_1024x1024x1024: SGEMM_RB64K16, (1024, 1024, 1024), One, Device;
    dgemm_rb64_1x1x1: DGEMM_RB64, (1, 1, 1), One, Device;
    dgemm_rb64_127x253x511_beta: DGEMM_RB64, (127, 253, 511), AlphaBeta, Device;
    dgemm_rb64_33x65x17_beta0: DGEMM_RB64, (33, 65, 17), Alpha, Device;
    dgemm_rb64_129x130x131_beta: DGEMM_RB64, (129, 130, 131), AlphaBeta, Device;
    dgemm_rb64_4099x7x64_beta0: DGEMM_RB64, (4099, 7, 64), Alpha, Device;
    dgemm_rb64_5x4097x33_beta: DGEMM_RB64, (5, 4097, 33), AlphaBeta, Device;
    dgemm_rb64_256x256x64_beta: DGEMM_RB64, (256, 256, 64), AlphaBeta, Device;
    dgemm_rb64_1024x1024x1024_beta: DGEMM_RB64, (1024, 1024, 1024), AlphaBeta, Device;
    dgemm_rb32_1x1x1: DGEMM_RB32, (1, 1, 1), One, Device;
    dgemm_rb32_127x253x511_beta: DGEMM_RB32, (127, 253, 511), AlphaBeta, Device;
    dgemm_rb32_33x65x17_beta0: DGEMM_RB32, (33, 65, 17), Alpha, Device;
    dgemm_rb32_129x130x131_beta: DGEMM_RB32, (129, 130, 131), AlphaBeta, Device;
    dgemm_rb32_4099x7x64_beta0: DGEMM_RB32, (4099, 7, 64), Alpha, Device;
    dgemm_rb32_5x4097x33_beta: DGEMM_RB32, (5, 4097, 33), AlphaBeta, Device;
    dgemm_rb32_256x256x64_beta: DGEMM_RB32, (256, 256, 64), AlphaBeta, Device;
    dgemm_rb32_5x7x0_beta: DGEMM_RB32, (5, 7, 0), AlphaBeta, Device;

    // f16 and bf16 on tensor cores (mma.sync m16n8k16), f32 out. 70×90×27:
    // K not a multiple of the MMA's 16.
    mma_f16_1x1x1: MMA_F16, (1, 1, 1), One, Device;
    mma_f16_127x253x511: MMA_F16, (127, 253, 511), One, Device;
    mma_f16_33x65x17: MMA_F16, (33, 65, 17), One, Device;
    mma_f16_129x130x131: MMA_F16, (129, 130, 131), One, Device;
    mma_f16_4099x7x64: MMA_F16, (4099, 7, 64), One, Device;
    mma_f16_5x4097x33: MMA_F16, (5, 4097, 33), One, Device;
    mma_f16_256x256x256: MMA_F16, (256, 256, 256), One, Device;
    mma_f16_70x90x27: MMA_F16, (70, 90, 27), One, Device;
    mma_f16_5x7x0: MMA_F16, (5, 7, 0), One, Device;
    mma_f16_1024x1024x1024: MMA_F16, (1024, 1024, 1024), One, Device;
    mma_bf16_1x1x1: MMA_BF16, (1, 1, 1), One, Device;
    mma_bf16_127x253x511: MMA_BF16, (127, 253, 511), One, Device;
    mma_bf16_33x65x17: MMA_BF16, (33, 65, 17), One, Device;
    mma_bf16_129x130x131: MMA_BF16, (129, 130, 131), One, Device;
    mma_bf16_4099x7x64: MMA_BF16, (4099, 7, 64), One, Device;
    mma_bf16_5x4097x33: MMA_BF16, (5, 4097, 33), One, Device;
    mma_bf16_256x256x256: MMA_BF16, (256, 256, 256), One, Device;
    mma_bf16_70x90x27: MMA_BF16, (70, 90, 27), One, Device;
    mma_bf16_5x7x0: MMA_BF16, (5, 7, 0), One, Device;
    mma_bf16_1024x1024x1024: MMA_BF16, (1024, 1024, 1024), One, Device;
    mma_tf32_1x1x1: MMA_TF32, (1, 1, 1), One, Device;
    mma_tf32_127x253x511: MMA_TF32, (127, 253, 511), One, Device;
    mma_tf32_33x65x17: MMA_TF32, (33, 65, 17), One, Device;
    mma_tf32_129x130x131: MMA_TF32, (129, 130, 131), One, Device;
    mma_tf32_4099x7x64: MMA_TF32, (4099, 7, 64), One, Device;
    mma_tf32_5x4097x33: MMA_TF32, (5, 4097, 33), One, Device;
    mma_tf32_256x256x256: MMA_TF32, (256, 256, 256), One, Device;
    mma_tf32_70x90x27: MMA_TF32, (70, 90, 27), One, Device;
    mma_tf32_5x7x0: MMA_TF32, (5, 7, 0), One, Device;
    mma_tf32_1024x1024x1024: MMA_TF32, (1024, 1024, 1024), One, Device;

    // Unified memory: written and read on the host, the kernel's arguments
    // borrowed exclusively.
    unified_naive_f32_127x253x511: NAIVE_F32, (127, 253, 511), One, Unified;
    unified_tiled_f64_t16_129x130x131: TILED_F64_T16, (129, 130, 131), One, Unified;
    unified_gemm_f32_tn_33x65x17_beta: GEMM_F32_TN, (33, 65, 17), AlphaBeta, Unified;
    unified_gemm_f64_nt_127x253x511_beta: GEMM_F64_NT, (127, 253, 511), AlphaBeta, Unified;
    unified_gemm_f32_tt_5x4097x33_beta0: GEMM_F32_TT, (5, 4097, 33), Alpha, Unified;
    unified_sgemm_rb128_129x130x131_beta: SGEMM_RB128, (129, 130, 131), AlphaBeta, Unified;
    unified_dgemm_rb32_4099x7x64_beta: DGEMM_RB32, (4099, 7, 64), AlphaBeta, Unified;
    unified_mma_f16_129x130x131: MMA_F16, (129, 130, 131), One, Unified;
    unified_mma_bf16_127x253x511: MMA_BF16, (127, 253, 511), One, Unified;

    // Pinned host memory, copied asynchronously on the launch's stream.
    pinned_naive_c_f64_127x253x511: NAIVE_C_F64, (127, 253, 511), One, Pinned;
    pinned_tiled_f32_t32_129x130x131: TILED_F32_T32, (129, 130, 131), One, Pinned;
    pinned_gemm_f32_nt_127x253x511_beta: GEMM_F32_NT, (127, 253, 511), AlphaBeta, Pinned;
    pinned_gemm_f64_tn_4099x7x64_beta: GEMM_F64_TN, (4099, 7, 64), AlphaBeta, Pinned;
    pinned_gemm_f64_nn_33x65x17_beta0: GEMM_F64_NN, (33, 65, 17), Alpha, Pinned;
    pinned_sgemm_rb64k16_5x4097x33_beta: SGEMM_RB64K16, (5, 4097, 33), AlphaBeta, Pinned;
    pinned_dgemm_rb64_129x130x131_beta: DGEMM_RB64, (129, 130, 131), AlphaBeta, Pinned;
    pinned_mma_f16_127x253x511: MMA_F16, (127, 253, 511), One, Pinned;
    pinned_mma_bf16_129x130x131: MMA_BF16, (129, 130, 131), One, Pinned;

    // 4096-class: C has 16.7 M elements, so 10⁵ random positions plus every
    // edge row and column are checked. Skipped by the sanitizer pass.
    large_sgemm_rb128_4096x4096x4096_beta: SGEMM_RB128, (4096, 4096, 4096), AlphaBeta, Device;
    large_dgemm_rb64_4096x4096x4096_beta: DGEMM_RB64, (4096, 4096, 4096), AlphaBeta, Device;
    large_mma_f16_4096x4096x4096: MMA_F16, (4096, 4096, 4096), One, Device;
    large_mma_bf16_4096x4096x4096: MMA_BF16, (4096, 4096, 4096), One, Device;
    large_mma_tf32_4096x4096x4096: MMA_TF32, (4096, 4096, 4096), One, Device;
    large_gemm_f32_tn_4096x4096x67_beta: GEMM_F32_TN, (4096, 4096, 67), AlphaBeta, Device;
}

// ---------------------------------------------------------------------------
// Batched: strided batches with gaps, broadcasts, untouched gaps in C.
// ---------------------------------------------------------------------------

/// How a batched operand is laid out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stride {
    /// Entries back to back.
    Packed,
    /// Entries `gap` elements apart (the gaps hold NaN: a kernel that reads
    /// one shows it).
    Gap(usize),
    /// Stride 0: every entry uses the same matrix.
    Broadcast,
}

/// The layout of a strided batch (strides and lengths in elements).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Batch {
    m: usize,
    n: usize,
    k: usize,
    batch: usize,
    stride_a: usize,
    stride_b: usize,
    stride_c: usize,
    len_a: usize,
    len_b: usize,
    len_c: usize,
}

/// Elements past the last C entry that must stay untouched.
const C_TAIL: usize = 7;

impl Batch {
    fn new([m, n, k]: [usize; 3], batch: usize, a: Stride, b: Stride, c_gap: usize) -> Batch {
        let stride = |s: Stride, size: usize| match s {
            Stride::Packed => size,
            Stride::Gap(gap) => size + gap,
            Stride::Broadcast => 0,
        };
        let (stride_a, stride_b) = (stride(a, m * k), stride(b, k * n));
        let stride_c = m * n + c_gap;
        let len = |stride: usize, size: usize| (batch - 1) * stride + size;
        Batch {
            m,
            n,
            k,
            batch,
            stride_a,
            stride_b,
            stride_c,
            len_a: len(stride_a, m * k),
            len_b: len(stride_b, k * n),
            len_c: len(stride_c, m * n) + C_TAIL,
        }
    }

    /// A random operand: every entry random, the gaps between NaN.
    fn operand<T: Scalar>(rng: &mut Rng, len: usize, stride: usize, size: usize) -> Vec<T> {
        let mut v = T::random(rng, len);
        if stride > size {
            for (i, x) in v.iter_mut().enumerate() {
                if i % stride >= size {
                    *x = T::from_f64(f64::NAN);
                }
            }
        }
        v
    }

    /// Checks every C entry against its reference, and that every element
    /// outside the entries (gaps and tail) still holds the poison.
    fn check<T: Scalar>(&self, a: &[T], b: &[T], got: &[T], tol: Tolerance) -> Result<(), String> {
        if got.len() != self.len_c {
            return Err(format!("got {} elements, want {}", got.len(), self.len_c));
        }
        let (m, n, k) = (self.m, self.n, self.k);
        let refs =
            reference::matmul_batched(m, n, k, a, self.stride_a, b, self.stride_b, self.batch);
        for (e, r) in refs.iter().enumerate() {
            let start = e * self.stride_c;
            reference::compare_matrix(&got[start..start + m * n], r, tol, n)
                .map_err(|msg| format!("batch entry {e} of {}: {msg}", self.batch))?;
        }
        let in_an_entry = |i: usize| i / self.stride_c < self.batch && i % self.stride_c < m * n;
        let outside: Vec<usize> = got
            .iter()
            .enumerate()
            .filter(|&(i, v)| !in_an_entry(i) && !v.is_poison())
            .map(|(i, _)| i)
            .collect();
        if outside.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{} elements outside every C entry were written, first at {:?}",
                outside.len(),
                &outside[..outside.len().min(8)]
            ))
        }
    }
}

fn run_batched(kernel: &str, dims: [usize; 3], batch: usize, a: Stride, b: Stride, mem: Mem) {
    let kern = matmul_kernel(kernel);
    match kern.input {
        Elem::F32 => run_batched_as::<f32>(kern, dims, batch, (a, b), mem),
        Elem::F64 => run_batched_as::<f64>(kern, dims, batch, (a, b), mem),
        other => panic!("{}: no batched path for {other:?}", kern.name),
    }
}

fn run_batched_as<T: Scalar>(
    kern: &'static MatmulKernel,
    dims: [usize; 3],
    batch: usize,
    (a_stride, b_stride): (Stride, Stride),
    mem: Mem,
) {
    assert_eq!(kern.signature, Signature::Batched, "{}", kern.name);
    let _gpu = gpu_lock();
    let ctx = ctx();
    let mut rng = Rng::new();
    let c_gap = rng.range(0, 6);
    let layout = Batch::new(dims, batch, a_stride, b_stride, c_gap);
    let [m, n, k] = dims;
    let a: Vec<T> = Batch::operand(&mut rng, layout.len_a, layout.stride_a, m * k);
    let b: Vec<T> = Batch::operand(&mut rng, layout.len_b, layout.stride_b, k * n);
    let got: Vec<T> = {
        let module = load(ctx, kern.file);
        let f = module.function(kern.name).unwrap_or_else(|e| panic!("{e}"));
        execute(
            &f,
            &config(kern, m, n, batch),
            mem,
            &a,
            &b,
            COut::Poison(layout.len_c),
            &BatchedArgs { layout },
        )
    };
    if let Err(e) = layout.check(&a, &b, &got, kern.tolerance(k)) {
        panic!("{} {layout:?}: {e}; {}", kern.name, rng.describe());
    }
    assert_no_leaks(ctx);
}

/// One test per line: `name: kernel, (M, N, K), batch, A stride, B stride,
/// memory;`. C entries are a random 0..6 elements apart.
macro_rules! batched_cases {
    ($($name:ident: $kernel:expr, ($m:expr, $n:expr, $k:expr), $batch:expr, $a:expr, $b:expr, $mem:ident;)*) => {
        /// Every line of the table, for the CPU check of the table.
        const BATCHED_CASES: &[(&str, &str, usize)] = &[$((stringify!($name), $kernel, $batch)),*];
        $(
            #[test]
            #[ignore = "needs an NVIDIA GPU"]
            fn $name() {
                run_batched($kernel, [$m, $n, $k], $batch, $a, $b, Mem::$mem);
            }
        )*
    };
}

batched_cases! {
    batched_f32_1x1x1_b1: BATCHED_F32, (1, 1, 1), 1, Stride::Packed, Stride::Packed, Device;
    batched_f32_33x65x17_b7: BATCHED_F32, (33, 65, 17), 7, Stride::Gap(3), Stride::Gap(5), Device;
    batched_f32_127x253x511_b3: BATCHED_F32, (127, 253, 511), 3, Stride::Packed, Stride::Packed, Device;
    batched_f32_64x48x40_b17_broadcast_a: BATCHED_F32, (64, 48, 40), 17, Stride::Broadcast, Stride::Gap(1), Device;
    batched_f32_20x30x9_b33_broadcast_b: BATCHED_F32, (20, 30, 9), 33, Stride::Gap(2), Stride::Broadcast, Device;
    batched_f32_4099x7x64_b2: BATCHED_F32, (4099, 7, 64), 2, Stride::Packed, Stride::Gap(7), Device;
    batched_f64_1x1x1_b1: BATCHED_F64, (1, 1, 1), 1, Stride::Packed, Stride::Packed, Device;
    batched_f64_33x65x17_b7: BATCHED_F64, (33, 65, 17), 7, Stride::Gap(3), Stride::Gap(5), Device;
    batched_f64_127x253x511_b3: BATCHED_F64, (127, 253, 511), 3, Stride::Packed, Stride::Packed, Device;
    batched_f64_64x48x40_b17_broadcast_a: BATCHED_F64, (64, 48, 40), 17, Stride::Broadcast, Stride::Gap(1), Device;
    batched_f64_20x30x9_b33_broadcast_b: BATCHED_F64, (20, 30, 9), 33, Stride::Gap(2), Stride::Broadcast, Device;
    batched_f64_5x4097x33_b2: BATCHED_F64, (5, 4097, 33), 2, Stride::Gap(4), Stride::Packed, Device;
    unified_batched_f32_33x65x17_b7: BATCHED_F32, (33, 65, 17), 7, Stride::Gap(1), Stride::Packed, Unified;
    pinned_batched_f64_129x130x131_b4: BATCHED_F64, (129, 130, 131), 4, Stride::Packed, Stride::Gap(2), Pinned;
}

// ---------------------------------------------------------------------------
// Streams: independent products on several streams in one scope.
// ---------------------------------------------------------------------------

/// Runs each product on its own stream, all queued in one scope, in `mem`,
/// and checks each. Matmul kernels use alpha = 1; gemm kernels a random
/// alpha and beta ≠ 0.
fn run_streams<I: Scalar, O: Scalar>(specs: &[(&str, [usize; 3])], mem: Mem) {
    let _gpu = gpu_lock();
    let ctx = ctx();
    let mut rng = Rng::new();
    let jobs: Vec<Job<I, O>> = specs
        .iter()
        .map(|&(name, dims)| {
            let kern = matmul_kernel(name);
            let scaling = match kern.signature {
                Signature::Gemm => Scaling::AlphaBeta,
                _ => Scaling::One,
            };
            Job::new(&mut rng, kern, dims, scaling)
        })
        .collect();
    let got: Vec<Vec<O>> = {
        let files: BTreeSet<&str> = jobs.iter().map(|j| j.kern.file).collect();
        let modules: Vec<(&str, Module<'static>)> =
            files.into_iter().map(|f| (f, load(ctx, f))).collect();
        let module_of = |file: &str| &modules.iter().find(|(f, _)| *f == file).unwrap().1;
        let fs: Vec<Function<'_>> = jobs
            .iter()
            .map(|j| {
                module_of(j.kern.file)
                    .function(j.kern.name)
                    .unwrap_or_else(|e| panic!("{e}"))
            })
            .collect();
        let streams: Vec<Stream<'_>> = jobs.iter().map(|_| ctx.stream().unwrap()).collect();
        match mem {
            Mem::Device => streams_device(ctx, &jobs, &fs, &streams),
            Mem::Unified => streams_unified(ctx, &jobs, &fs, &streams),
            Mem::Pinned => streams_pinned(ctx, &jobs, &fs, &streams),
        }
    };
    for (i, (job, got)) in jobs.iter().zip(&got).enumerate() {
        if let Err(e) = job.check(&mut rng, got) {
            panic!("stream {i} of {}: {e}", jobs.len());
        }
    }
    assert_no_leaks(ctx);
}

fn streams_device<I: Scalar, O: Scalar>(
    ctx: &'static Context,
    jobs: &[Job<I, O>],
    fs: &[Function<'_>],
    streams: &[Stream<'_>],
) -> Vec<Vec<O>> {
    let bufs: Vec<(
        DeviceBuffer<'_, I>,
        DeviceBuffer<'_, I>,
        DeviceBuffer<'_, O>,
    )> = jobs
        .iter()
        .map(|j| {
            let c = match j.c() {
                COut::Input(c) => ctx.upload(c).unwrap(),
                COut::Poison(len) => {
                    let d = ctx.alloc::<O>(len).unwrap();
                    d.fill(O::POISON).unwrap();
                    d
                }
            };
            (
                ctx.upload(&nonempty(&j.a)).unwrap(),
                ctx.upload(&nonempty(&j.b)).unwrap(),
                c,
            )
        })
        .collect();
    settle(ctx);
    ctx.scope(|s| {
        for (i, (job, (da, db, dc))) in jobs.iter().zip(&bufs).enumerate() {
            let p = job.args().build(da, db, dc);
            // SAFETY: the kernel's documented geometry for the job's shape,
            // buffers of that shape, its signature's parameter list; every
            // job has buffers of its own.
            unsafe { s.launch(&streams[i], &fs[i], &job.config(), &p) }?;
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    bufs.iter().map(|(_, _, dc)| dc.to_vec().unwrap()).collect()
}

type UnifiedSet<'c, I, O> = (
    UnifiedBuffer<'c, I>,
    UnifiedBuffer<'c, I>,
    UnifiedBuffer<'c, O>,
);

fn streams_unified<I: Scalar, O: Scalar>(
    ctx: &'static Context,
    jobs: &[Job<I, O>],
    fs: &[Function<'_>],
    streams: &[Stream<'_>],
) -> Vec<Vec<O>> {
    let unified = |data: &[I]| {
        let mut u = ctx.alloc_unified::<I>(data.len()).unwrap();
        u.as_mut_slice().unwrap().copy_from_slice(data);
        u
    };
    let mut bufs: Vec<UnifiedSet<'_, I, O>> = jobs
        .iter()
        .map(|j| {
            let mut uc = ctx.alloc_unified::<O>(j.g.c_len()).unwrap();
            uc.as_mut_slice().unwrap().copy_from_slice(&j.c().to_vec());
            (unified(&nonempty(&j.a)), unified(&nonempty(&j.b)), uc)
        })
        .collect();
    ctx.scope(|s| {
        for (i, (job, (ua, ub, uc))) in jobs.iter().zip(bufs.iter_mut()).enumerate() {
            let p = job.args().build(ua, ub, uc);
            // SAFETY: as in `streams_device`; the unified buffers are
            // borrowed exclusively until the scope has synchronized.
            unsafe { s.launch(&streams[i], &fs[i], &job.config(), &p) }?;
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    bufs.iter()
        .map(|(_, _, uc)| uc.as_slice().unwrap().to_vec())
        .collect()
}

type PinnedSet<'c, I, O> = (
    PinnedBuffer<'c, I>,
    PinnedBuffer<'c, I>,
    PinnedBuffer<'c, O>,
    PinnedBuffer<'c, O>,
);

fn streams_pinned<I: Scalar, O: Scalar>(
    ctx: &'static Context,
    jobs: &[Job<I, O>],
    fs: &[Function<'_>],
    streams: &[Stream<'_>],
) -> Vec<Vec<O>> {
    fn pinned<'c, T: Scalar>(ctx: &'c Context, data: &[T]) -> PinnedBuffer<'c, T> {
        let mut p = ctx.alloc_pinned::<T>(data.len()).unwrap();
        p.copy_from_slice(data);
        p
    }
    let mut host: Vec<PinnedSet<'_, I, O>> = jobs
        .iter()
        .map(|j| {
            let c = j.c().to_vec();
            (
                pinned(ctx, &nonempty(&j.a)),
                pinned(ctx, &nonempty(&j.b)),
                pinned(ctx, &c),
                pinned(ctx, &vec![O::POISON; c.len()]),
            )
        })
        .collect();
    let dev: Vec<(
        DeviceBuffer<'_, I>,
        DeviceBuffer<'_, I>,
        DeviceBuffer<'_, O>,
    )> = host
        .iter()
        .map(|(pa, pb, pc, _)| {
            (
                ctx.alloc::<I>(pa.len()).unwrap(),
                ctx.alloc::<I>(pb.len()).unwrap(),
                ctx.alloc::<O>(pc.len()).unwrap(),
            )
        })
        .collect();
    ctx.scope(|s| {
        let work = jobs.iter().zip(host.iter_mut()).zip(&dev).enumerate();
        for (i, ((job, (pa, pb, pc, out)), (da, db, dc))) in work {
            let stream = &streams[i];
            s.copy_to_device(stream, &pa[..], da)?;
            s.copy_to_device(stream, &pb[..], db)?;
            s.copy_to_device(stream, &pc[..], dc)?;
            let p = job.args().build(da, db, dc);
            // SAFETY: as in `streams_device`; the copies are ordered with
            // the launch by the job's stream.
            unsafe { s.launch(stream, &fs[i], &job.config(), &p) }?;
            s.copy_to_host(stream, dc, &mut out[..])?;
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    host.iter().map(|(_, _, _, out)| out.to_vec()).collect()
}

/// One test per line: `name: I, O, memory, [(kernel, (M, N, K)), ...];`.
macro_rules! stream_cases {
    ($($name:ident: $i:ty, $o:ty, $mem:ident, [$(($kernel:expr, ($m:expr, $n:expr, $k:expr))),* $(,)?];)*) => {
        /// Every kernel each line uses, for the CPU check of the table.
        const STREAM_CASES: &[(&str, &[&str])] = &[$((stringify!($name), &[$($kernel),*])),*];
        $(
            #[test]
            #[ignore = "needs an NVIDIA GPU"]
            fn $name() {
                run_streams::<$i, $o>(&[$(($kernel, [$m, $n, $k])),*], Mem::$mem);
            }
        )*
    };
}

stream_cases! {
    streams4_f32_device: f32, f32, Device, [
        (NAIVE_F32, (300, 200, 100)),
        (TILED_F32_T32, (257, 129, 300)),
        (GEMM_F32_NT, (127, 253, 511)),
        (SGEMM_RB128, (513, 257, 129)),
    ];
    streams4_f64_device: f64, f64, Device, [
        (TILED_F64_T8, (129, 130, 131)),
        (GEMM_F64_TT, (200, 100, 300)),
        (DGEMM_RB64, (257, 255, 129)),
        (NAIVE_C_F64, (33, 65, 17)),
    ];
    streams16_f32_device: f32, f32, Device, [
        (GEMM_F32_NN, (64, 64, 64)), (GEMM_F32_NT, (65, 63, 62)),
        (GEMM_F32_TN, (17, 19, 23)), (GEMM_F32_TT, (129, 33, 65)),
        (TILED_F32_T8, (40, 50, 60)), (TILED_F32_T16, (61, 51, 41)),
        (TILED_F32_T32, (100, 3, 77)), (NAIVE_F32, (3, 100, 77)),
        (SGEMM_RB64, (130, 129, 128)), (SGEMM_RB64K16, (99, 101, 103)),
        (SGEMM_RB128, (257, 1, 9)), (NAIVE_C_F32, (1, 257, 9)),
        (GEMM_F32_NN, (1, 1, 1)), (TILED_F32_T16, (5, 7, 0)),
        (SGEMM_RB128, (128, 128, 128)), (GEMM_F32_TT, (31, 37, 41)),
    ];
    streams3_f16_device: F16, f32, Device, [
        (MMA_F16, (129, 130, 131)),
        (MMA_F16, (64, 64, 64)),
        (MMA_F16, (300, 17, 200)),
    ];
    streams3_bf16_unified: Bf16, f32, Unified, [
        (MMA_BF16, (127, 253, 511)),
        (MMA_BF16, (33, 65, 17)),
        (MMA_BF16, (256, 128, 96)),
    ];
    streams4_f32_unified: f32, f32, Unified, [
        (GEMM_F32_TN, (129, 130, 131)),
        (TILED_F32_T16, (200, 300, 100)),
        (SGEMM_RB64, (77, 99, 111)),
        (NAIVE_F32, (5, 4097, 33)),
    ];
    streams8_f32_pinned: f32, f32, Pinned, [
        (GEMM_F32_NN, (129, 130, 131)), (GEMM_F32_NT, (127, 253, 511)),
        (GEMM_F32_TN, (33, 65, 17)), (GEMM_F32_TT, (4099, 7, 64)),
        (SGEMM_RB128, (257, 129, 300)), (SGEMM_RB64K16, (200, 200, 200)),
        (TILED_F32_T32, (5, 4097, 33)), (NAIVE_F32, (1, 1, 1)),
    ];
    streams4_f64_pinned: f64, f64, Pinned, [
        (GEMM_F64_NT, (129, 130, 131)),
        (DGEMM_RB32, (127, 253, 511)),
        (TILED_F64_T32, (300, 100, 200)),
        (NAIVE_F64, (33, 65, 17)),
    ];
}

// ---------------------------------------------------------------------------
// Events: dependent products on different streams.
// ---------------------------------------------------------------------------

/// One stage of a chain: C_i = C_{i-1}·B_i (C_{-1} = A).
struct Stage<T> {
    kern: &'static MatmulKernel,
    g: Gemm,
    b: Vec<T>,
}

/// Checks a chain's outputs.
///
/// 1. Each stage against the f64 reference of the product the GPU was
///    given: C_i against ref(C_{i-1} · B_i) computed from the GPU's own
///    C_{i-1} (downloaded), with the kernel's single-product tolerance.
///    This is as tight as any single-product test: the inputs are exactly
///    what the kernel read.
/// 2. The last stage against the f64 reference of the whole chain,
///    R_i = R_{i-1}·B_i with R_{-1} = A, with the error propagated:
///    writing t_i for stage i's tolerance factor (the `scaled` of
///    [`Tolerance::gemm`]) and E_i for the bound on |C_i − R_i|,
///
///    ```text
///    |C_i − R_i| ≤ |C_i − C_{i-1}B_i| + |(C_{i-1} − R_{i-1})B_i| + |R_{i-1}B_i − R_i|
///                ≤ t_i·(|C_{i-1}||B_i|) + E_{i-1}·|B_i| + (abs terms),
///    ```
///
///    since |C_{i-1}B_i − fl(C_{i-1}B_i)| ≤ γ_{K+2}(u)|C_{i-1}||B_i| is what
///    t_i bounds (with a factor 2 to spare, which also covers R_i's own
///    f64 rounding, γ_{K+2}(2⁻⁵³) relative, and the f64 rounding of the
///    bound products), and E_{-1} = 0. |C_{i-1}||B_i| is the scale of the
///    stage-i reference of check 1; E_{i-1}·|B_i| is one more f64 product.
fn check_chain<T: Scalar>(a: &[T], stages: &[Stage<T>], outputs: &[Vec<T>]) -> Result<(), String> {
    let mut r_prev = to_f64(a);
    let mut e_prev: Option<Vec<f64>> = None;
    for (i, (stage, out)) in stages.iter().zip(outputs).enumerate() {
        let input: &[T] = if i == 0 { a } else { &outputs[i - 1] };
        let tol = stage.kern.tolerance(stage.g.k);
        let reference = reference::gemm(&stage.g, 1.0, input, &stage.b, 0.0, None);
        reference::compare_matrix(out, &reference, tol, stage.g.n).map_err(|e| {
            format!(
                "stage {i} ({}) against the product of its GPU inputs: {e}",
                stage.kern.name
            )
        })?;
        let b64 = to_f64(&stage.b);
        let r = reference::gemm(&stage.g, 1.0, &r_prev, &b64, 0.0, None).value;
        let mut e: Vec<f64> = reference
            .scale
            .iter()
            .map(|s| tol.scaled * s + tol.abs)
            .collect();
        if let Some(e_prev) = &e_prev {
            let b_abs: Vec<f64> = b64.iter().map(|x| x.abs()).collect();
            let carried = reference::gemm(&stage.g, 1.0, e_prev, &b_abs, 0.0, None).value;
            for (x, c) in e.iter_mut().zip(carried) {
                *x += c;
            }
        }
        r_prev = r;
        e_prev = Some(e);
    }
    let (last, out) = (stages.len() - 1, &outputs[stages.len() - 1]);
    let whole = Reference {
        value: r_prev,
        scale: e_prev.unwrap_or_default(),
    };
    let bound = Tolerance {
        abs: 0.0,
        rel: 0.0,
        scaled: 1.0,
    };
    reference::compare_matrix(out, &whole, bound, stages[last].g.n)
        .map_err(|e| format!("the last stage against the f64 product of the whole chain: {e}"))
}

/// A chain of products, stage i on stream i, each stage waiting (through an
/// event recorded after the previous launch) for the one before:
/// C_0 = A·B_0 on stream 0; record; stream 1 waits; C_1 = C_0·B_1 on
/// stream 1; and so on. `dims` = [M, K, N_0, N_1, ...]: A is M×K and C_i is
/// M×N_i. Every C_i is poisoned first, so a stage that started before its
/// input was complete would read NaN and fail.
fn run_chain<T: Scalar>(kernels: &[&str], dims: &[usize]) {
    assert_eq!(dims.len(), kernels.len() + 2);
    let _gpu = gpu_lock();
    let ctx = ctx();
    let mut rng = Rng::new();
    let m = dims[0];
    let a = T::random(&mut rng, m * dims[1]);
    let stages: Vec<Stage<T>> = kernels
        .iter()
        .enumerate()
        .map(|(i, &name)| {
            let kern = matmul_kernel(name);
            assert_eq!(
                kern.op_a,
                Op::N,
                "{name}: a chained product needs A as stored"
            );
            assert_ne!(kern.signature, Signature::Batched, "{name}");
            let g = kern.gemm(m, dims[i + 2], dims[i + 1]);
            let b = T::random(&mut rng, g.b_len());
            Stage { kern, g, b }
        })
        .collect();
    let outputs: Vec<Vec<T>> = {
        let module = load(ctx, stages[0].kern.file);
        assert!(stages.iter().all(|s| s.kern.file == stages[0].kern.file));
        let fs: Vec<Function<'_>> = stages
            .iter()
            .map(|s| module.function(s.kern.name).unwrap())
            .collect();
        let streams: Vec<Stream<'_>> = stages.iter().map(|_| ctx.stream().unwrap()).collect();
        let events: Vec<Event<'_>> = stages.iter().map(|_| ctx.event().unwrap()).collect();
        let da = ctx.upload(&a).unwrap();
        let dbs: Vec<DeviceBuffer<'_, T>> = stages
            .iter()
            .map(|s| ctx.upload(&nonempty(&s.b)).unwrap())
            .collect();
        let dcs: Vec<DeviceBuffer<'_, T>> = stages
            .iter()
            .map(|s| {
                let c = ctx.alloc::<T>(s.g.c_len()).unwrap();
                c.fill(T::POISON).unwrap();
                c
            })
            .collect();
        settle(ctx);
        ctx.scope(|s| {
            for (i, stage) in stages.iter().enumerate() {
                if i > 0 {
                    streams[i].wait(&events[i - 1])?;
                }
                let input = if i == 0 { &da } else { &dcs[i - 1] };
                let args = MatmulArgs {
                    signature: stage.kern.signature,
                    dims: [int(stage.g.m), int(stage.g.n), int(stage.g.k)],
                    alpha: T::from_f64(1.0),
                    beta: T::from_f64(0.0),
                };
                let p = args.build(input, &dbs[i], &dcs[i]);
                let cfg = config(stage.kern, stage.g.m, stage.g.n, 1);
                // SAFETY: the kernel's documented geometry for the stage's
                // shape; the input (A or the previous C) is M×K_i, B_i is
                // K_i×N_i as the kernel stores it, C_i is M×N_i. The
                // previous stage's C is only read, after the event.
                unsafe { s.launch(&streams[i], &fs[i], &cfg, &p) }?;
                events[i].record(&streams[i])?;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{e}"));
        dcs.iter().map(|c| c.to_vec().unwrap()).collect()
    };
    if let Err(e) = check_chain(&a, &stages, &outputs) {
        panic!("chain {kernels:?} {dims:?}: {e}; {}", rng.describe());
    }
    assert_no_leaks(ctx);
}

/// One test per line: `name: T, [kernels...], [M, K, N_0, N_1, ...];`.
macro_rules! chain_cases {
    ($($name:ident: $t:ty, [$($kernel:expr),* $(,)?], [$($d:expr),* $(,)?];)*) => {
        /// Every kernel each line uses, for the CPU check of the table.
        const CHAIN_CASES: &[(&str, &[&str], &[usize])] =
            &[$((stringify!($name), &[$($kernel),*], &[$($d),*])),*];
        $(
            #[test]
            #[ignore = "needs an NVIDIA GPU"]
            fn $name() {
                run_chain::<$t>(&[$($kernel),*], &[$($d),*]);
            }
        )*
    };
}

chain_cases! {
    events_f32_naive_then_tiled32: f32, [NAIVE_F32, TILED_F32_T32], [300, 513, 257, 129];
    events_f32_naive_1024_then_tiled32: f32, [NAIVE_F32, TILED_F32_T32], [1024, 1024, 1024, 256];
    events_f32_sgemm_rb128_then_gemm_nt: f32, [SGEMM_RB128, GEMM_F32_NT], [257, 300, 129, 200];
    events_f64_gemm_nn_then_dgemm_rb64: f64, [GEMM_F64_NN, DGEMM_RB64], [200, 131, 257, 99];
    events_f32_chain3: f32, [NAIVE_F32, TILED_F32_T16, SGEMM_RB64], [129, 130, 131, 65, 33];
    events_f64_chain3: f64, [TILED_F64_T8, GEMM_F64_NT, DGEMM_RB32], [77, 99, 111, 123, 45];
}

// ---------------------------------------------------------------------------
// The compile path: name expressions, the compile cache.
// ---------------------------------------------------------------------------

/// A fresh temporary folder, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let path = std::env::temp_dir().join(format!(
            "cudakit-gpu-matmul-{tag}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&path).expect("create a temporary folder");
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Every kernel of `file` is found through its name expression (templates)
/// or its `extern "C"` name, lowered as NVRTC lowered it; respelled
/// expressions find the same kernel; and each can run.
fn names_resolve_in(file: &str) {
    let _gpu = gpu_lock();
    let ctx = ctx();
    let source = SOURCES.iter().find(|s| s.file == file).unwrap();
    // Register the extern "C" names too: such a name lowers to itself.
    let mut program = source.program();
    for name in source.kernels.iter().filter(|n| !Source::is_template(n)) {
        program = program.name_expression(*name);
    }
    let cc = ctx.limits().compute_capability;
    if source
        .arch
        .is_some_and(|arch| arch.compute_capability() != cc)
    {
        cudakit_suite::not_run(format!(
            "{file} is built for {:?}; this device is {cc:?}",
            source.arch
        ));
    }
    let compiled = program.compile_for(ctx).unwrap_or_else(|e| panic!("{e}"));
    let module = ctx.load_module(&compiled).unwrap();
    for &name in source.kernels {
        let lowered = compiled.lowered_name(name).unwrap_or_else(|| {
            panic!("{name} has no lowered name: {:?}", compiled.lowered_names())
        });
        if Source::is_template(name) {
            assert!(lowered.starts_with("_Z"), "{name} lowered to {lowered}");
        } else {
            assert_eq!(lowered, name, "an extern \"C\" name lowers to itself");
        }
        let f = module.function(name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(f.symbol(), lowered, "{name}");
        let respelled = name.replace(", ", ",");
        let g = module
            .function(&respelled)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(g.as_raw(), f.as_raw(), "{respelled} is {name}");
        let by_symbol = module.function(lowered).unwrap();
        assert_eq!(by_symbol.as_raw(), f.as_raw(), "{lowered} is {name}");
        let attrs = f.attributes().unwrap();
        if let Some(kern) = MATMUL_KERNELS.iter().find(|k| k.name == name) {
            assert!(
                attrs.max_threads_per_block >= kern.threads(),
                "{name} cannot run its {} threads: {attrs:?}",
                kern.threads()
            );
        }
    }
    drop(module);
    assert_no_leaks(ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn compile_matmul_resolves_every_name_expression() {
    names_resolve_in("matmul.cu");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn compile_matmul_mma_resolves_every_name() {
    names_resolve_in("matmul_mma.cu");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn compile_gemm_sm90_resolves_every_name() {
    names_resolve_in("gemm_sm90.cu");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn compile_sgemm_resolves_every_name() {
    names_resolve_in("sgemm.cu");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn compile_dgemm_resolves_every_name() {
    names_resolve_in("dgemm.cu");
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn compile_one_name_expression_instantiates_only_it() {
    let _gpu = gpu_lock();
    let ctx = ctx();
    let compiled = Program::new("matmul.cu", cudakit_suite::kernels::MATMUL)
        .name_expression(GEMM_F64_TN)
        .compile_for(ctx)
        .unwrap();
    let names: Vec<&String> = compiled.lowered_names().keys().collect();
    assert_eq!(names, [GEMM_F64_TN]);
    let module = ctx.load_module(&compiled).unwrap();
    module.function(GEMM_F64_TN).unwrap();
    // An instantiation whose name expression was not registered has no
    // lowered name to look up: a typed error that lists what the module
    // has.
    match module.function(GEMM_F32_NN) {
        Err(cudakit::Error::UnknownFunction { name, known }) => {
            assert_eq!(name, GEMM_F32_NN);
            assert!(known.iter().any(|k| k == GEMM_F64_TN), "{known:?}");
        }
        other => panic!("{GEMM_F32_NN} without its name expression: {other:?}"),
    }
    // extern "C" kernels need no name expression.
    module.function(NAIVE_C_F32).unwrap();
    drop(module);
    assert_no_leaks(ctx);
}

/// Runs `gemm<float, true, false>` from `module` on a small shape with
/// alpha and beta and checks it: a cached binary works like a fresh one.
fn run_small_gemm(module: &Module<'_>) {
    let mut rng = Rng::new();
    let job: Job<f32, f32> = Job::new(
        &mut rng,
        matmul_kernel(GEMM_F32_TN),
        [65, 33, 17],
        Scaling::AlphaBeta,
    );
    let f = module.function(GEMM_F32_TN).unwrap();
    let got = execute(
        &f,
        &job.config(),
        Mem::Device,
        &job.a,
        &job.b,
        job.c(),
        &job.args(),
    );
    job.check(&mut rng, &got).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn compile_twice_hits_the_memory_cache() {
    let _gpu = gpu_lock();
    let ctx = ctx();
    let cache = Cache::memory_only();
    let program = program_for("matmul.cu");
    let cold = program.compile_for_with(ctx, &cache).unwrap();
    assert_eq!(cold.origin(), Origin::Nvrtc, "a new cache is empty");
    let hot = program.compile_for_with(ctx, &cache).unwrap();
    assert_eq!(hot.origin(), Origin::MemoryCache);
    assert_eq!(hot.cubin(), cold.cubin());
    assert_eq!(hot.ptx(), cold.ptx());
    assert_eq!(hot.lowered_names(), cold.lowered_names());
    println!(
        "cold compile {:?}, memory hit {:?}",
        cold.elapsed(),
        hot.elapsed()
    );
    let module = ctx.load_module(&hot).unwrap();
    run_small_gemm(&module);
    drop(module);
    assert_no_leaks(ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn compile_twice_hits_the_disk_cache() {
    let _gpu = gpu_lock();
    let ctx = ctx();
    let dir = TempDir::new("disk-cache");
    let program = program_for("matmul_mma.cu").name_expression(MMA_F16);
    let cold = program
        .compile_for_with(ctx, &Cache::in_dir(&dir.0))
        .unwrap();
    assert_eq!(cold.origin(), Origin::Nvrtc, "a new folder is empty");
    // A second cache on the same folder has an empty memory layer: the
    // hit comes from disk.
    let hot = program
        .compile_for_with(ctx, &Cache::in_dir(&dir.0))
        .unwrap();
    assert_eq!(hot.origin(), Origin::DiskCache);
    assert_eq!(hot.cubin(), cold.cubin());
    assert_eq!(hot.lowered_names(), cold.lowered_names());
    let module = ctx.load_module(&hot).unwrap();
    let f = module.function(MMA_F16).unwrap();
    let mut rng = Rng::new();
    let job: Job<F16, f32> = Job::new(&mut rng, matmul_kernel(MMA_F16), [70, 90, 27], Scaling::One);
    let got = execute(
        &f,
        &job.config(),
        Mem::Device,
        &job.a,
        &job.b,
        job.c(),
        &job.args(),
    );
    job.check(&mut rng, &got).unwrap_or_else(|e| panic!("{e}"));
    drop(f);
    drop(module);
    assert_no_leaks(ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn compile_twice_hits_the_process_cache() {
    let _gpu = gpu_lock();
    let ctx = ctx();
    let program = program_for("matmul.cu");
    let first = program.compile_for(ctx).unwrap();
    let second = program.compile_for(ctx).unwrap();
    println!(
        "process cache {:?}: first {:?}, second {:?}",
        Cache::global(),
        first.origin(),
        second.origin()
    );
    if Cache::global().is_enabled() {
        // The first may itself be a hit (an earlier test, or the disk).
        assert!(
            matches!(second.origin(), Origin::MemoryCache | Origin::DiskCache),
            "{:?}",
            second.origin()
        );
        assert_eq!(second.cubin(), first.cubin());
    } else {
        // CUDAKIT_CACHE=off: every compile is NVRTC's.
        assert_eq!(second.origin(), Origin::Nvrtc);
    }
    let module = ctx.load_module(&second).unwrap();
    run_small_gemm(&module);
    drop(module);
    assert_no_leaks(ctx);
}

// ---------------------------------------------------------------------------
// The H200 kernels (gemm_sm90.cu, sgemm.cu, dgemm.cu) through gemm::Product.
// ---------------------------------------------------------------------------

/// One line of the H200 table.
#[derive(Clone, Copy, Debug)]
struct H200Case {
    kernel: &'static str,
    dims: [usize; 3],
    ops: (Op, Op),
    scaling: Scaling,
    transpose: Transpose,
    /// `Pad::Device` for the padded SGEMM path (`padded_cases!`).
    pad: Pad,
}

fn run_h200(case: H200Case) {
    let kern = matmul_kernel(case.kernel);
    match (kern.input, kern.output) {
        (Elem::F32, Elem::F32) => run_h200_as::<f32, f32>(kern, case),
        (Elem::F64, Elem::F64) => run_h200_as::<f64, f64>(kern, case),
        (Elem::F16, Elem::F32) => run_h200_as::<F16, f32>(kern, case),
        (Elem::Bf16, Elem::F32) => run_h200_as::<Bf16, f32>(kern, case),
        other => panic!("{}: no test path for {other:?}", kern.name),
    }
}

/// Draws A and B stored as `case.ops` say, alpha and beta (C random when
/// beta ≠ 0, drawn in A's type so that the f32 C of the 16-bit kernels
/// holds exactly what the reference reads, else poisoned), runs the
/// product and checks every element (sampled above 10⁷) against the f64
/// reference with the kernel's tolerance. With `Pad::Device`, also that the
/// kernel ran on the shape `gemm::padded_shape` gives (the GEMM's own when
/// it gives none) and that the notes say so.
fn run_h200_as<I: Scalar, O: Scalar>(kern: &'static MatmulKernel, case: H200Case) {
    let _gpu = gpu_lock();
    let ctx = ctx();
    let cc = ctx.limits().compute_capability;
    if !kern.runs_on(cc) {
        cudakit_suite::not_run(format!(
            "{} needs sm_90 ({:?}); this device is sm_{}{}",
            kern.name, kern.arch, cc.0, cc.1
        ));
    }
    let mut rng = Rng::new();
    let [m, n, k] = case.dims;
    let g = Gemm::new(m, n, k, case.ops.0, case.ops.1);
    let a = I::random(&mut rng, g.a_len());
    let b = I::random(&mut rng, g.b_len());
    let mut signed = |lo: f64| {
        let sign = if rng.next_u32() & 1 == 0 { 1.0 } else { -1.0 };
        sign * (lo + rng.f64_unit())
    };
    let (alpha, beta) = match case.scaling {
        Scaling::One => (1.0, 0.0),
        Scaling::Alpha => (signed(0.5), 0.0),
        Scaling::AlphaBeta => (signed(0.5), signed(0.25)),
    };
    let c_in: Option<Vec<I>> = (beta != 0.0).then(|| I::random(&mut rng, g.c_len()));
    let c_out: Option<Vec<O>> = c_in
        .as_ref()
        .map(|c| c.iter().map(|v| O::from_f64(v.to_f64())).collect());
    let (got, alpha, beta, notes) = {
        let product: Product<'_, I, O> = Product::with_pad(
            ctx,
            kern,
            g,
            (&a, &b, c_out.as_deref()),
            case.transpose,
            case.pad,
        )
        .unwrap_or_else(|e| panic!("{case:?}: {e}"));
        let padded = match case.pad {
            Pad::Device => gemm::padded_shape(kern, &g),
            Pad::Off => None,
        };
        assert_eq!(
            product.kernel_shape(),
            padded.map_or([m, n, k], |p| p.dims),
            "{case:?}"
        );
        let notes = product.notes();
        let noted = |what: &str| notes.iter().any(|n| n.contains(what));
        assert_eq!(noted("zero-padded"), padded.is_some(), "{case:?}");
        assert_eq!(
            noted("C^T = B^T*A^T"),
            padded.is_some_and(|p| p.transposed),
            "{case:?}"
        );
        let got = product
            .run(ctx, alpha, beta)
            .unwrap_or_else(|e| panic!("{case:?}: {e}"));
        let notes = product.notes();
        (got, product.scalar(alpha), product.scalar(beta), notes)
    };
    if let Err(e) = reference::check_gemm(
        &mut rng,
        &g,
        alpha,
        &a,
        &b,
        beta,
        c_in.as_deref(),
        &got,
        kern.tolerance(k),
    ) {
        panic!("{case:?} ({notes:?}): {}: {e}", kern.name);
    }
    assert_no_leaks(ctx);
}

/// One test per line: `name: kernel, (M, N, K), (op A, op B), scaling,
/// where a transpose runs;`.
macro_rules! h200_cases {
    ($($name:ident: $kernel:expr, ($m:expr, $n:expr, $k:expr), ($oa:ident, $ob:ident), $scaling:ident, $tr:ident;)*) => {
        /// Every line of the table, for the CPU check of the table.
        const H200_CASES: &[(&str, H200Case)] = &[$((
            stringify!($name),
            H200Case {
                kernel: $kernel,
                dims: [$m, $n, $k],
                ops: (Op::$oa, Op::$ob),
                scaling: Scaling::$scaling,
                transpose: Transpose::$tr,
                pad: Pad::Off,
            },
        )),*];
        $(
            #[test]
            #[ignore = "needs an NVIDIA GPU"]
            fn $name() {
                run_h200(H200Case {
                    kernel: $kernel,
                    dims: [$m, $n, $k],
                    ops: (Op::$oa, Op::$ob),
                    scaling: Scaling::$scaling,
                    transpose: Transpose::$tr,
                    pad: Pad::Off,
                });
            }
        )*
    };
}

/// What `gemm::padded_shape` does with a shape of the padded table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Expect {
    /// A, B and C padded.
    Padded,
    /// Cᵀ = Bᵀ·Aᵀ on padded transposes.
    Transposed,
    /// Left alone.
    Unpadded,
}

/// The padded SGEMM path (`Pad::Device`, what `cudakit matmul` runs): one
/// test per line, `name: kernel, (M, N, K), (op A, op B), scaling, what;`
/// where `what` says how `gemm::padded_shape` treats the shape (checked on
/// the CPU by the table test, and on the GPU against the kernel's shape
/// and the product's notes).
macro_rules! padded_cases {
    ($($name:ident: $kernel:expr, ($m:expr, $n:expr, $k:expr), ($oa:ident, $ob:ident), $scaling:ident, $pads:ident;)*) => {
        /// Every line of the table, for the CPU check of the table.
        const PADDED_CASES: &[(&str, H200Case, Expect)] = &[$((
            stringify!($name),
            H200Case {
                kernel: $kernel,
                dims: [$m, $n, $k],
                ops: (Op::$oa, Op::$ob),
                scaling: Scaling::$scaling,
                transpose: Transpose::Host,
                pad: Pad::Device,
            },
            Expect::$pads,
        )),*];
        $(
            #[test]
            #[ignore = "needs an NVIDIA GPU"]
            fn $name() {
                run_h200(H200Case {
                    kernel: $kernel,
                    dims: [$m, $n, $k],
                    ops: (Op::$oa, Op::$ob),
                    scaling: Scaling::$scaling,
                    transpose: Transpose::Host,
                    pad: Pad::Device,
                });
            }
        )*
    };
}

const SM90_BF16_NN: &str = "gemm_sm90_bf16_nn";
const SM90_F16_NN: &str = "gemm_sm90_f16_nn";
const SM90_BF16_NT: &str = "gemm_sm90_bf16_nt";
const SM90_F16_NT: &str = "gemm_sm90_f16_nt";
const SM90_TF32_NT: &str = "gemm_sm90_tf32_nt";
/// tf32 with B stored K×N read as stored: Cᵀ = Bᵀ·Aᵀ per 256×128 tile,
/// Bᵀ through registers (kernels/gemm_sm90.cu).
const SM90_TF32_NN: &str = "gemm_sm90_tf32_nn";
const SGEMM_256: &str = "sgemm_128x256";
const SGEMM_128: &str = "sgemm_128x128";
const SGEMM_W24: &str = "sgemm_tiled<2, 4, 2, 8, 1, 8>";
const SGEMM_A1: &str = "sgemm_tiled<2, 4, 4, 4, 1, 8>";
/// The default before issue 23: whole tiles FULL, every other block the
/// bounds-checked body (no middle path).
const SGEMM_V0: &str = "sgemm_tiled<2, 4, 4, 4, 1, 8, true, false>";
const DGEMM_128: &str = "dgemm_dmma_128x128";
const DGEMM_MT2: &str = "dgemm_dmma<32, 3, 8, 2, 0>";
const DGEMM_BK16: &str = "dgemm_dmma<16, 4, 8, 2, 0>";
const DGEMM_K32: &str = "dgemm_pipe<32, 3, 8, 0, true>";
const DGEMM_K16: &str = "dgemm_pipe<16, 4, 16, 0, false>";
/// The default DGEMM before issue 23 (no middle path).
const DGEMM_V0: &str = "dgemm_pipe<16, 4, 8, 0, true, false>";

// Shapes: the lab's odd shapes (129×67×255: nothing a tile multiple, K odd
// so TMA rows are padded; 300×520×130; 17×1000×33 and 1000×17×64,
// tall-skinny and short-wide; 257×513×200; 130×300×1031, K past several
// pipeline rounds), 1×1×1, K = 0 (C = beta·C), the four storage orders at
// 127×253×511, and 4096³.
h200_cases! {
    sm90_bf16_nn_129x67x255_beta0: SM90_BF16_NN, (129, 67, 255), (N, N), Alpha, Host;
    sm90_bf16_nn_300x520x130_beta: SM90_BF16_NN, (300, 520, 130), (N, N), AlphaBeta, Host;
    sm90_bf16_nn_1x1x1: SM90_BF16_NN, (1, 1, 1), (N, N), One, Host;
    sm90_bf16_nn_5x3x0_beta: SM90_BF16_NN, (5, 3, 0), (N, N), AlphaBeta, Host;
    sm90_bf16_nn_17x1000x33_beta: SM90_BF16_NN, (17, 1000, 33), (N, N), AlphaBeta, Host;
    sm90_bf16_nn_1000x17x64_beta0: SM90_BF16_NN, (1000, 17, 64), (N, N), Alpha, Host;
    sm90_bf16_nn_257x513x200_beta: SM90_BF16_NN, (257, 513, 200), (N, N), AlphaBeta, Host;
    sm90_bf16_nn_130x300x1031_beta: SM90_BF16_NN, (130, 300, 1031), (N, N), AlphaBeta, Host;
    sm90_bf16_nn_256x512x256: SM90_BF16_NN, (256, 512, 256), (N, N), One, Host;
    // C through TMA stores (beta = 0, N % 4 = 0): partial tiles in M and N,
    // an odd count of tile-rows (the last cluster's second CTA past M), K
    // not a multiple of the stage, and more units than clusters.
    sm90_bf16_nn_300x520x130_beta0: SM90_BF16_NN, (300, 520, 130), (N, N), Alpha, Host;
    sm90_bf16_nn_129x68x255_beta0: SM90_BF16_NN, (129, 68, 255), (N, N), Alpha, Host;
    sm90_bf16_nn_5x8x0_beta0: SM90_BF16_NN, (5, 8, 0), (N, N), Alpha, Host;
    sm90_f16_nn_2200x3000x72_beta0: SM90_F16_NN, (2200, 3000, 72), (N, N), Alpha, Host;
    // An odd count of tile-rows (19) with more units than clusters: the
    // spare CTA past M goes on to real units of its cluster.
    sm90_bf16_nn_2400x3000x200_beta0: SM90_BF16_NN, (2400, 3000, 200), (N, N), Alpha, Host;
    // 133 units (7 unit-rows by 19 tile-columns) on 45 clusters in 3 waves
    // (on 132 SMs): two clusters walk 2 units, the rest 3.
    sm90_bf16_nn_1700x4700x72_beta0: SM90_BF16_NN, (1700, 4700, 72), (N, N), Alpha, Host;
    sm90_bf16_nt_300x520x130_beta0: SM90_BF16_NT, (300, 520, 130), (N, T), Alpha, Host;
    sm90_f16_nt_2200x3000x72: SM90_F16_NT, (2200, 3000, 72), (N, T), One, Host;
    sm90_tf32_nt_300x520x130_beta0: SM90_TF32_NT, (300, 520, 130), (N, T), Alpha, Host;
    sm90_bf16_nn_127x253x511_nt_beta: SM90_BF16_NN, (127, 253, 511), (N, T), AlphaBeta, Host;
    sm90_bf16_nn_127x253x511_tn_beta: SM90_BF16_NN, (127, 253, 511), (T, N), AlphaBeta, Host;
    sm90_bf16_nn_127x253x511_tt_beta0: SM90_BF16_NN, (127, 253, 511), (T, T), Alpha, Host;
    sm90_f16_nn_129x67x255_beta0: SM90_F16_NN, (129, 67, 255), (N, N), Alpha, Host;
    sm90_f16_nn_300x520x130_beta: SM90_F16_NN, (300, 520, 130), (N, N), AlphaBeta, Host;
    sm90_f16_nn_1x1x1: SM90_F16_NN, (1, 1, 1), (N, N), One, Host;
    sm90_f16_nn_5x3x0_beta: SM90_F16_NN, (5, 3, 0), (N, N), AlphaBeta, Host;
    sm90_f16_nn_130x300x1031_beta: SM90_F16_NN, (130, 300, 1031), (N, N), AlphaBeta, Host;
    sm90_f16_nn_127x253x511_tt_beta: SM90_F16_NN, (127, 253, 511), (T, T), AlphaBeta, Host;
    sm90_bf16_nt_129x67x255_beta0: SM90_BF16_NT, (129, 67, 255), (N, T), Alpha, Host;
    sm90_bf16_nt_300x520x130_beta: SM90_BF16_NT, (300, 520, 130), (N, T), AlphaBeta, Host;
    sm90_bf16_nt_1x1x1: SM90_BF16_NT, (1, 1, 1), (N, T), One, Host;
    sm90_bf16_nt_5x3x0_beta: SM90_BF16_NT, (5, 3, 0), (N, T), AlphaBeta, Host;
    sm90_bf16_nt_17x1000x33_beta0: SM90_BF16_NT, (17, 1000, 33), (N, T), Alpha, Host;
    sm90_bf16_nt_127x253x511_nn_beta: SM90_BF16_NT, (127, 253, 511), (N, N), AlphaBeta, Host;
    sm90_bf16_nt_127x253x511_tn_beta0: SM90_BF16_NT, (127, 253, 511), (T, N), Alpha, Host;
    sm90_bf16_nt_127x253x511_tt_beta: SM90_BF16_NT, (127, 253, 511), (T, T), AlphaBeta, Host;
    sm90_f16_nt_129x67x255_beta0: SM90_F16_NT, (129, 67, 255), (N, T), Alpha, Host;
    sm90_f16_nt_1000x17x64_beta: SM90_F16_NT, (1000, 17, 64), (N, T), AlphaBeta, Host;
    sm90_f16_nt_5x3x0_beta: SM90_F16_NT, (5, 3, 0), (N, T), AlphaBeta, Host;
    sm90_f16_nt_127x253x511_tn_beta: SM90_F16_NT, (127, 253, 511), (T, N), AlphaBeta, Host;
    sm90_tf32_nt_129x67x255_beta0: SM90_TF32_NT, (129, 67, 255), (N, T), Alpha, Host;
    sm90_tf32_nt_300x520x130_beta: SM90_TF32_NT, (300, 520, 130), (N, T), AlphaBeta, Host;
    sm90_tf32_nt_1x1x1: SM90_TF32_NT, (1, 1, 1), (N, T), One, Host;
    sm90_tf32_nt_5x3x0_beta: SM90_TF32_NT, (5, 3, 0), (N, T), AlphaBeta, Host;
    sm90_tf32_nt_130x300x1031_beta: SM90_TF32_NT, (130, 300, 1031), (N, T), AlphaBeta, Host;
    sm90_tf32_nt_127x253x511_nn_beta: SM90_TF32_NT, (127, 253, 511), (N, N), AlphaBeta, Host;
    sm90_tf32_nt_127x253x511_tn_beta0: SM90_TF32_NT, (127, 253, 511), (T, N), Alpha, Host;
    sm90_tf32_nt_127x253x511_tt_beta: SM90_TF32_NT, (127, 253, 511), (T, T), AlphaBeta, Host;
    // B stored K×N, transposed on the device (K a multiple of 4), as
    // `cudakit matmul --dtype tf32` runs it; K = 255 falls back to the host.
    sm90_tf32_nn_device_257x513x200_beta: SM90_TF32_NT, (257, 513, 200), (N, N), AlphaBeta, Device;
    sm90_tf32_nn_device_129x67x256_beta0: SM90_TF32_NT, (129, 67, 256), (N, N), Alpha, Device;
    sm90_tf32_nn_device_129x67x255_fallback: SM90_TF32_NT, (129, 67, 255), (N, N), AlphaBeta, Device;
    sm90_tf32_tn_device_64x96x8_beta: SM90_TF32_NT, (64, 96, 8), (T, N), AlphaBeta, Device;

    // The tf32 NN kernel (no transpose pass): edges in M (256-row tiles),
    // N (128-column tiles, pairs of columns per thread, odd N), K (32 a
    // stage, tails, K = 0), padded rows (N or K not a multiple of 4), and
    // every storage order.
    sm90_tf32_nn_129x67x255_beta0: SM90_TF32_NN, (129, 67, 255), (N, N), Alpha, Host;
    sm90_tf32_nn_300x520x130_beta: SM90_TF32_NN, (300, 520, 130), (N, N), AlphaBeta, Host;
    sm90_tf32_nn_1x1x1: SM90_TF32_NN, (1, 1, 1), (N, N), One, Host;
    sm90_tf32_nn_5x3x0_beta: SM90_TF32_NN, (5, 3, 0), (N, N), AlphaBeta, Host;
    sm90_tf32_nn_17x1000x33_beta: SM90_TF32_NN, (17, 1000, 33), (N, N), AlphaBeta, Host;
    sm90_tf32_nn_1000x17x64_beta0: SM90_TF32_NN, (1000, 17, 64), (N, N), Alpha, Host;
    sm90_tf32_nn_257x513x200_beta: SM90_TF32_NN, (257, 513, 200), (N, N), AlphaBeta, Host;
    sm90_tf32_nn_130x300x1031_beta: SM90_TF32_NN, (130, 300, 1031), (N, N), AlphaBeta, Host;
    sm90_tf32_nn_512x384x96: SM90_TF32_NN, (512, 384, 96), (N, N), One, Host;
    sm90_tf32_nn_127x253x511_nt_beta: SM90_TF32_NN, (127, 253, 511), (N, T), AlphaBeta, Host;
    sm90_tf32_nn_127x253x511_tn_beta0: SM90_TF32_NN, (127, 253, 511), (T, N), Alpha, Host;
    sm90_tf32_nn_127x253x511_tt_beta: SM90_TF32_NN, (127, 253, 511), (T, T), AlphaBeta, Host;

    // SGEMM (FFMA, no tf32): NN kernels, the other orders staged.
    sgemm_256_1x1x1: SGEMM_256, (1, 1, 1), (N, N), One, Host;
    sgemm_256_127x253x511_beta: SGEMM_256, (127, 253, 511), (N, N), AlphaBeta, Host;
    sgemm_256_129x67x255_beta0: SGEMM_256, (129, 67, 255), (N, N), Alpha, Host;
    sgemm_256_4099x7x64_beta: SGEMM_256, (4099, 7, 64), (N, N), AlphaBeta, Host;
    sgemm_256_5x4097x33_beta0: SGEMM_256, (5, 4097, 33), (N, N), Alpha, Host;
    sgemm_256_5x7x0_beta: SGEMM_256, (5, 7, 0), (N, N), AlphaBeta, Host;
    sgemm_256_256x512x128_beta: SGEMM_256, (256, 512, 128), (N, N), AlphaBeta, Host;
    // Whole tiles (the unchecked interior body) and edge tiles in one launch.
    sgemm_256_520x300x512_beta: SGEMM_256, (520, 300, 512), (N, N), AlphaBeta, Host;
    sgemm_256_384x384x320_beta0: SGEMM_256, (384, 384, 320), (N, N), Alpha, Host;
    sgemm_256_33x65x17_nt_beta: SGEMM_256, (33, 65, 17), (N, T), AlphaBeta, Host;
    sgemm_256_33x65x17_tn_beta0: SGEMM_256, (33, 65, 17), (T, N), Alpha, Host;
    sgemm_256_33x65x17_tt_beta: SGEMM_256, (33, 65, 17), (T, T), AlphaBeta, Host;
    sgemm_128_1x1x1: SGEMM_128, (1, 1, 1), (N, N), One, Host;
    sgemm_128_127x253x511_beta: SGEMM_128, (127, 253, 511), (N, N), AlphaBeta, Host;
    sgemm_128_129x67x255_beta0: SGEMM_128, (129, 67, 255), (N, N), Alpha, Host;
    sgemm_128_5x7x0_beta: SGEMM_128, (5, 7, 0), (N, N), AlphaBeta, Host;
    sgemm_w24_127x253x511_beta: SGEMM_W24, (127, 253, 511), (N, N), AlphaBeta, Host;
    sgemm_w24_129x67x255_beta0: SGEMM_W24, (129, 67, 255), (N, N), Alpha, Host;
    // The default's whole tiles read A two k steps ahead: one slice (K =
    // 16), two slices, an odd count.
    sgemm_256_256x512x16_beta: SGEMM_256, (256, 512, 16), (N, N), AlphaBeta, Host;
    sgemm_256_256x512x32_beta0: SGEMM_256, (256, 512, 32), (N, N), Alpha, Host;
    sgemm_256_256x256x48_beta: SGEMM_256, (256, 256, 48), (N, N), AlphaBeta, Host;
    // The previous default (A one step ahead).
    sgemm_a1_520x300x512_beta: SGEMM_A1, (520, 300, 512), (N, N), AlphaBeta, Host;
    sgemm_a1_129x67x255_beta0: SGEMM_A1, (129, 67, 255), (N, N), Alpha, Host;
    // Issue 23, the middle path (MID: tiles slid inside the matrix, any K
    // and N, 4-byte copies, a checked last K slice) with whole tiles and
    // edge tiles in one launch. 129×257×33: slid in M and N, K = 2 slices +
    // 1; K = 1 and 17; N = 4 and 5 (narrower than a tile: MID from the
    // origin with checked copies); N % 4 == 0 with K odd (16-byte B copies,
    // K tail); K % 16 == 0 with N odd (no FULL block).
    sgemm_256_129x257x33_beta: SGEMM_256, (129, 257, 33), (N, N), AlphaBeta, Host;
    sgemm_256_129x257x33_beta0: SGEMM_256, (129, 257, 33), (N, N), Alpha, Host;
    sgemm_256_300x520x1_beta0: SGEMM_256, (300, 520, 1), (N, N), Alpha, Host;
    sgemm_256_131x263x17_beta: SGEMM_256, (131, 263, 17), (N, N), AlphaBeta, Host;
    sgemm_256_4099x4x40_beta: SGEMM_256, (4099, 4, 40), (N, N), AlphaBeta, Host;
    sgemm_256_300x5x17_beta0: SGEMM_256, (300, 5, 17), (N, N), Alpha, Host;
    sgemm_256_384x512x33_beta: SGEMM_256, (384, 512, 33), (N, N), AlphaBeta, Host;
    sgemm_256_260x301x64_beta0: SGEMM_256, (260, 301, 64), (N, N), Alpha, Host;
    // The last tile column at most 128 wide runs as 256×128 tiles (odd
    // tile-rows exit): 520×257×19 (5 tile-rows, the last one's tile slid up
    // by 248 rows), 256×260×20 (N % 4 == 0), 1000×2900×77 (every element
    // checked: interior MID tiles, slid M edge, 256×128 column).
    sgemm_256_520x257x19_beta: SGEMM_256, (520, 257, 19), (N, N), AlphaBeta, Host;
    sgemm_256_256x260x20_beta0: SGEMM_256, (256, 260, 20), (N, N), Alpha, Host;
    sgemm_256_1000x2900x77_beta: SGEMM_256, (1000, 2900, 77), (N, N), AlphaBeta, Host;
    sgemm_w24_300x260x17_beta: SGEMM_W24, (300, 260, 17), (N, N), AlphaBeta, Host;
    sgemm_128_129x130x33_beta: SGEMM_128, (129, 130, 33), (N, N), AlphaBeta, Host;
    sgemm_128_300x5x17_beta0: SGEMM_128, (300, 5, 17), (N, N), Alpha, Host;
    sgemm_128_257x129x1_beta: SGEMM_128, (257, 129, 1), (N, N), AlphaBeta, Host;
    // The default before issue 23, kept for same-run comparisons.
    sgemm_v0_129x67x255_beta0: SGEMM_V0, (129, 67, 255), (N, N), Alpha, Host;
    sgemm_v0_520x300x512_beta: SGEMM_V0, (520, 300, 512), (N, N), AlphaBeta, Host;

    // DGEMM on DMMA.
    dgemm_128_1x1x1: DGEMM_128, (1, 1, 1), (N, N), One, Host;
    dgemm_128_127x253x511_beta: DGEMM_128, (127, 253, 511), (N, N), AlphaBeta, Host;
    dgemm_128_129x67x255_beta0: DGEMM_128, (129, 67, 255), (N, N), Alpha, Host;
    dgemm_128_4099x7x64_beta: DGEMM_128, (4099, 7, 64), (N, N), AlphaBeta, Host;
    dgemm_128_5x4097x33_beta0: DGEMM_128, (5, 4097, 33), (N, N), Alpha, Host;
    dgemm_128_5x7x0_beta: DGEMM_128, (5, 7, 0), (N, N), AlphaBeta, Host;
    dgemm_128_130x300x1031_beta: DGEMM_128, (130, 300, 1031), (N, N), AlphaBeta, Host;
    // Whole tiles (the pipelined body) and edge tiles in one launch.
    dgemm_128_520x300x512_beta: DGEMM_128, (520, 300, 512), (N, N), AlphaBeta, Host;
    dgemm_128_384x384x320_beta0: DGEMM_128, (384, 384, 320), (N, N), Alpha, Host;
    // One K slice (the prologue's later stages empty) and an odd count of
    // slices, whole tiles only.
    dgemm_128_256x256x16_beta: DGEMM_128, (256, 256, 16), (N, N), AlphaBeta, Host;
    dgemm_128_256x384x48_beta0: DGEMM_128, (256, 384, 48), (N, N), Alpha, Host;
    dgemm_128_33x65x17_nt_beta: DGEMM_128, (33, 65, 17), (N, T), AlphaBeta, Host;
    dgemm_128_33x65x17_tn_beta: DGEMM_128, (33, 65, 17), (T, N), AlphaBeta, Host;
    dgemm_128_33x65x17_tt_beta0: DGEMM_128, (33, 65, 17), (T, T), Alpha, Host;
    dgemm_mt2_127x253x511_beta: DGEMM_MT2, (127, 253, 511), (N, N), AlphaBeta, Host;
    dgemm_mt2_129x67x255_beta0: DGEMM_MT2, (129, 67, 255), (N, N), Alpha, Host;
    dgemm_bk16_127x253x511_beta: DGEMM_BK16, (127, 253, 511), (N, N), AlphaBeta, Host;
    dgemm_bk16_129x67x255_beta0: DGEMM_BK16, (129, 67, 255), (N, N), Alpha, Host;
    // The other pipelined configurations: BK 32 with 3 stages (two
    // fragment sets), and one set of m16n8k16 fragments.
    dgemm_k32_520x300x512_beta: DGEMM_K32, (520, 300, 512), (N, N), AlphaBeta, Host;
    dgemm_k32_384x384x320_beta0: DGEMM_K32, (384, 384, 320), (N, N), Alpha, Host;
    dgemm_k32_129x67x255_beta: DGEMM_K32, (129, 67, 255), (N, N), AlphaBeta, Host;
    dgemm_k32_256x384x96_beta: DGEMM_K32, (256, 384, 96), (N, N), AlphaBeta, Host;
    dgemm_k16_520x300x512_beta: DGEMM_K16, (520, 300, 512), (N, N), AlphaBeta, Host;
    dgemm_k16_384x384x320_beta0: DGEMM_K16, (384, 384, 320), (N, N), Alpha, Host;
    dgemm_k16_129x67x255_beta: DGEMM_K16, (129, 67, 255), (N, N), AlphaBeta, Host;
    // Issue 23, the pipelined body's middle path (slid edge tiles, any K,
    // 8-byte copies where K or N is odd, scalar C stores where N is odd).
    dgemm_128_129x257x33_beta: DGEMM_128, (129, 257, 33), (N, N), AlphaBeta, Host;
    dgemm_128_129x257x33_beta0: DGEMM_128, (129, 257, 33), (N, N), Alpha, Host;
    dgemm_128_256x260x20_beta: DGEMM_128, (256, 260, 20), (N, N), AlphaBeta, Host;
    dgemm_128_200x300x1_beta0: DGEMM_128, (200, 300, 1), (N, N), Alpha, Host;
    dgemm_128_131x133x17_beta: DGEMM_128, (131, 133, 17), (N, N), AlphaBeta, Host;
    dgemm_128_1000x1100x77_beta: DGEMM_128, (1000, 1100, 77), (N, N), AlphaBeta, Host;
    dgemm_128_130x128x64_beta0: DGEMM_128, (130, 128, 64), (N, N), Alpha, Host;
    dgemm_k32_129x257x33_beta: DGEMM_K32, (129, 257, 33), (N, N), AlphaBeta, Host;
    dgemm_k16_129x257x33_beta0: DGEMM_K16, (129, 257, 33), (N, N), Alpha, Host;
    // The default before issue 23, kept for same-run comparisons.
    dgemm_v0_129x67x255_beta0: DGEMM_V0, (129, 67, 255), (N, N), Alpha, Host;
    dgemm_v0_520x300x512_beta: DGEMM_V0, (520, 300, 512), (N, N), AlphaBeta, Host;

    // 4096³: 10⁵ random positions plus every edge row and column.
    large_sm90_bf16_nn_4096x4096x4096_beta: SM90_BF16_NN, (4096, 4096, 4096), (N, N), AlphaBeta, Host;
    large_sm90_f16_nn_4096x4096x4096: SM90_F16_NN, (4096, 4096, 4096), (N, N), One, Host;
    large_sm90_tf32_nn_device_4096x4096x4096_beta: SM90_TF32_NT, (4096, 4096, 4096), (N, N), AlphaBeta, Device;
    large_sm90_tf32_nn_4096x4096x4096_beta: SM90_TF32_NN, (4096, 4096, 4096), (N, N), AlphaBeta, Host;
    large_sgemm_256_4096x4096x4096_beta: SGEMM_256, (4096, 4096, 4096), (N, N), AlphaBeta, Host;
    large_dgemm_128_4096x4096x4096_beta: DGEMM_128, (4096, 4096, 4096), (N, N), AlphaBeta, Host;
    // Issue 23's shape: no block qualifies for the whole-tile bodies.
    large_sgemm_256_4095x4097x4093_beta: SGEMM_256, (4095, 4097, 4093), (N, N), AlphaBeta, Host;
    large_dgemm_128_4095x4097x4093_beta0: DGEMM_128, (4095, 4097, 4093), (N, N), Alpha, Host;
}

// Issue 23, the padded path: K % 16 ≠ 0 or N % 4 ≠ 0 (M padded to the
// tile's rows on the way), beta = 0 (C poisoned; the padded C is not
// read) and beta ≠ 0 (C copied into the padded C first); K odd with
// N % 4 == 0 and N odd with K % 16 == 0; M far from a tile multiple (5, 1,
// 250);
// A stored transposed (staged on the host, then padded); the 128×128 kernel
// and the pre-issue-23 dispatch. Shapes the padding leaves alone: N padded
// still narrower than a tile (no whole-tile block possible), and shapes
// already eligible.
padded_cases! {
    sgemm_pad_256_129x257x33_beta: SGEMM_256, (129, 257, 33), (N, N), AlphaBeta, Padded;
    sgemm_pad_256_129x257x33_beta0: SGEMM_256, (129, 257, 33), (N, N), Alpha, Padded;
    sgemm_pad_256_300x520x130_beta0: SGEMM_256, (300, 520, 130), (N, N), Alpha, Padded;
    sgemm_pad_256_255x256x17_beta: SGEMM_256, (255, 256, 17), (N, N), AlphaBeta, Padded;
    sgemm_pad_256_250x259x64_beta0: SGEMM_256, (250, 259, 64), (N, N), Alpha, Padded;
    sgemm_pad_256_5x4097x33_beta: SGEMM_256, (5, 4097, 33), (N, N), AlphaBeta, Padded;
    sgemm_pad_256_1x300x1_beta0: SGEMM_256, (1, 300, 1), (N, N), Alpha, Padded;
    sgemm_pad_256_1000x2900x77_beta: SGEMM_256, (1000, 2900, 77), (N, N), AlphaBeta, Padded;
    sgemm_pad_256_129x300x33_tn_beta: SGEMM_256, (129, 300, 33), (T, N), AlphaBeta, Padded;
    sgemm_pad_256_520x257x19_nt_beta0: SGEMM_256, (520, 257, 19), (N, T), Alpha, Padded;
    sgemm_pad_128_129x130x33_beta: SGEMM_128, (129, 130, 33), (N, N), AlphaBeta, Padded;
    sgemm_pad_v0_520x300x511_beta: SGEMM_V0, (520, 300, 511), (N, N), AlphaBeta, Padded;
    // Transposed (M rounded up to 4 a whole number of tile columns, N not):
    // M = 256 and 512 exactly, M = 253 (rounded up to 256), the kernel's M
    // from N = 1000 and 259 (slid edge rows of whole-tile width), K = 1 and
    // 17, A and B stored transposed, the 128×128 kernel, the pre-issue-23
    // dispatch.
    sgemm_pad_t_256_256x259x64_beta0: SGEMM_256, (256, 259, 64), (N, N), Alpha, Transposed;
    sgemm_pad_t_256_255x257x33_beta: SGEMM_256, (255, 257, 33), (N, N), AlphaBeta, Transposed;
    sgemm_pad_t_256_255x257x33_beta0: SGEMM_256, (255, 257, 33), (N, N), Alpha, Transposed;
    sgemm_pad_t_256_512x300x17_beta: SGEMM_256, (512, 300, 17), (N, N), AlphaBeta, Transposed;
    sgemm_pad_t_256_253x1000x1_beta0: SGEMM_256, (253, 1000, 1), (N, N), Alpha, Transposed;
    sgemm_pad_t_256_256x300x33_tn_beta: SGEMM_256, (256, 300, 33), (T, N), AlphaBeta, Transposed;
    sgemm_pad_t_256_768x301x40_tt_beta0: SGEMM_256, (768, 301, 40), (T, T), Alpha, Transposed;
    sgemm_pad_t_128_128x130x17_beta: SGEMM_128, (128, 130, 17), (N, N), AlphaBeta, Transposed;
    sgemm_pad_t_v0_511x300x33_beta: SGEMM_V0, (511, 300, 33), (N, N), AlphaBeta, Transposed;
    sgemm_pad_256_33x65x17_unpadded_beta: SGEMM_256, (33, 65, 17), (N, N), AlphaBeta, Unpadded;
    sgemm_pad_256_256x512x64_unpadded_beta0: SGEMM_256, (256, 512, 64), (N, N), Alpha, Unpadded;
    sgemm_pad_256_5x7x0_unpadded_beta: SGEMM_256, (5, 7, 0), (N, N), AlphaBeta, Unpadded;
    // Issue 23's shape, as `cudakit matmul` runs it (transposed).
    large_sgemm_pad_256_4095x4097x4093_beta: SGEMM_256, (4095, 4097, 4093), (N, N), AlphaBeta, Transposed;
}

// ---------------------------------------------------------------------------
// CPU tests: the tables, and the checks against an emulation of the kernels.
// ---------------------------------------------------------------------------

#[test]
fn names_resolve_and_every_kernel_is_covered() {
    let mut used: BTreeSet<&str> = BTreeSet::new();
    for name in ALL_NAMES {
        matmul_kernel(name);
    }
    for (test, case) in MATMUL_CASES {
        let kern = matmul_kernel(case.kernel);
        assert_ne!(kern.signature, Signature::Batched, "{test}");
        if case.scaling != Scaling::One {
            assert_eq!(kern.signature, Signature::Gemm, "{test}: no alpha/beta");
        }
        for d in case.dims {
            int(d);
        }
        let [m, n, _] = case.dims;
        let g = kern.grid(m, n, 1);
        assert!(g[1] <= 65_535, "{test}: grid y");
        let large = m * n > reference::FULL_CHECK_LIMIT || case.dims.iter().all(|&d| d >= 4096);
        assert_eq!(test.starts_with("large_"), large, "{test}: large_ prefix");
        used.insert(kern.name);
    }
    for (test, kernel, batch) in BATCHED_CASES {
        let kern = matmul_kernel(kernel);
        assert_eq!(kern.signature, Signature::Batched, "{test}");
        assert!((1..=65_535).contains(batch), "{test}");
        used.insert(kern.name);
    }
    for (test, kernels) in STREAM_CASES {
        assert!(kernels.len() >= 2, "{test}: several streams");
        for k in *kernels {
            let kern = matmul_kernel(k);
            assert_eq!(kern.file, matmul_kernel(kernels[0]).file, "{test}");
            assert_eq!(kern.input, matmul_kernel(kernels[0]).input, "{test}");
            used.insert(kern.name);
        }
    }
    for (test, case) in H200_CASES {
        let kern = matmul_kernel(case.kernel);
        assert!(
            matches!(
                kern.signature,
                Signature::Tma | Signature::TmaStore | Signature::Gemm
            ),
            "{test}"
        );
        let [m, n, k] = case.dims;
        for d in case.dims {
            int(d);
        }
        let large = m * n > reference::FULL_CHECK_LIMIT || case.dims.iter().all(|&d| d >= 4096);
        assert_eq!(test.starts_with("large_"), large, "{test}: large_ prefix");
        assert!(m > 0 && n > 0, "{test}");
        let _ = k;
        used.insert(kern.name);
    }
    for (test, case, pads) in PADDED_CASES {
        let kern = matmul_kernel(case.kernel);
        assert_eq!(kern.file, "sgemm.cu", "{test}");
        let [m, n, k] = case.dims;
        let g = Gemm::new(m, n, k, case.ops.0, case.ops.1);
        let shape = gemm::padded_shape(kern, &g);
        let what = match shape {
            None => Expect::Unpadded,
            Some(p) if p.transposed => Expect::Transposed,
            Some(_) => Expect::Padded,
        };
        assert_eq!(what, *pads, "{test}: {shape:?}");
        if let Some(p) = shape {
            let [pm, pn, pk] = p.dims;
            // The kernel's M and N: the product's, or transposed its N and M.
            let (km, kn) = if p.transposed { (n, m) } else { (m, n) };
            let tile_m = kern.tile[0] as usize;
            assert!(pm % tile_m == 0 && pm >= km && pm < km + tile_m, "{test}");
            assert!(pn % 4 == 0 && pn >= kn && pn < kn + 4, "{test}");
            assert!(pk % 16 == 0 && pk >= k && pk < k + 16, "{test}");
            if p.transposed {
                assert_eq!(pn % kern.tile[1] as usize, 0, "{test}: whole tiles");
            }
        }
        let large = m * n > reference::FULL_CHECK_LIMIT || case.dims.iter().all(|&d| d >= 4096);
        assert_eq!(test.starts_with("large_"), large, "{test}: large_ prefix");
    }
    for (test, kernels, dims) in CHAIN_CASES {
        assert_eq!(dims.len(), kernels.len() + 2, "{test}");
        for k in *kernels {
            let kern = matmul_kernel(k);
            assert_eq!(kern.op_a, Op::N, "{test}");
            assert_eq!(kern.file, "matmul.cu", "{test}");
            used.insert(kern.name);
        }
    }
    // The FP8 kernels run through fp8::Fp8Gemm in tests/tests/gpu_fp8.rs.
    used.insert("gemm_sm90_e4m3_nt");
    used.insert("gemm_sm90_e5m2_e4m3_nt");
    let missing: Vec<&str> = MATMUL_KERNELS
        .iter()
        .map(|k| k.name)
        .filter(|n| !used.contains(n))
        .collect();
    assert!(missing.is_empty(), "kernels without a test: {missing:?}");
    let mut names: Vec<&str> = MATMUL_CASES.iter().map(|(t, _)| *t).collect();
    names.extend(BATCHED_CASES.iter().map(|(t, _, _)| *t));
    names.extend(STREAM_CASES.iter().map(|(t, _)| *t));
    names.extend(CHAIN_CASES.iter().map(|(t, _, _)| *t));
    names.extend(H200_CASES.iter().map(|(t, _)| *t));
    names.extend(PADDED_CASES.iter().map(|(t, _, _)| *t));
    let large = names.iter().filter(|t| t.starts_with("large_")).count();
    assert!(
        names.len() >= 160 && large <= 15,
        "{} cases, {large} large",
        names.len()
    );
}

/// Arithmetic of an f32 or f64 kernel, for the CPU emulation.
trait Float: Scalar + Copy + std::ops::Mul<Output = Self> {
    fn fma(self, b: Self, c: Self) -> Self;
}

impl Float for f32 {
    fn fma(self, b: f32, c: f32) -> f32 {
        self.mul_add(b, c)
    }
}

impl Float for f64 {
    fn fma(self, b: f64, c: f64) -> f64 {
        self.mul_add(b, c)
    }
}

/// What the gemm kernels compute, on the CPU: one FMA per k in ascending
/// order in the element type, then alpha·acc + beta·C (C not read when
/// beta = 0).
fn emulate<T: Float>(g: &Gemm, alpha: T, a: &[T], b: &[T], beta: T, c: Option<&[T]>) -> Vec<T> {
    let mut out = Vec::with_capacity(g.c_len());
    for i in 0..g.m {
        for j in 0..g.n {
            let mut acc = T::from_f64(0.0);
            for kk in 0..g.k {
                acc = a[g.a_index(i, kk)].fma(b[g.b_index(kk, j)], acc);
            }
            out.push(if beta.to_f64() == 0.0 {
                alpha * acc
            } else {
                beta.fma(c.unwrap()[i * g.n + j], alpha * acc)
            });
        }
    }
    out
}

#[test]
fn checks_accept_the_kernels_arithmetic_and_reject_errors() {
    let mut rng = Rng::new();
    for (name, dims, scaling) in [
        (GEMM_F32_TN, [33, 65, 17], Scaling::AlphaBeta),
        (GEMM_F32_NT, [5, 7, 0], Scaling::AlphaBeta),
        (GEMM_F32_TT, [17, 19, 300], Scaling::Alpha),
        (NAIVE_F32, [40, 3, 77], Scaling::One),
    ] {
        let job: Job<f32, f32> = Job::new(&mut rng, matmul_kernel(name), dims, scaling);
        let got = emulate(
            &job.g,
            job.alpha,
            &job.a,
            &job.b,
            job.beta,
            job.c_in.as_deref(),
        );
        job.check(&mut rng, &got).unwrap();
        if job.g.c_len() > 1 {
            let mut unwritten = got.clone();
            unwritten[job.g.c_len() / 2] = f32::POISON;
            assert!(job.check(&mut rng, &unwritten).is_err(), "{name}");
            let mut off = got.clone();
            off[1] += 1e-2;
            assert!(job.check(&mut rng, &off).is_err(), "{name}");
        }
    }
    let job: Job<f64, f64> = Job::new(
        &mut rng,
        matmul_kernel(DGEMM_RB32),
        [20, 30, 40],
        Scaling::AlphaBeta,
    );
    let got = emulate(
        &job.g,
        job.alpha,
        &job.a,
        &job.b,
        job.beta,
        job.c_in.as_deref(),
    );
    job.check(&mut rng, &got).unwrap();
}

#[test]
fn batched_checks_accept_strided_results_and_catch_stray_writes() {
    let mut rng = Rng::new();
    let (m, n, k) = (6, 5, 7);
    let tol = matmul_kernel(BATCHED_F32).tolerance(k);
    for (a_s, b_s, batch) in [
        (Stride::Packed, Stride::Packed, 1),
        (Stride::Gap(3), Stride::Broadcast, 4),
        (Stride::Broadcast, Stride::Gap(2), 5),
    ] {
        let l = Batch::new([m, n, k], batch, a_s, b_s, 3);
        let a: Vec<f32> = Batch::operand(&mut rng, l.len_a, l.stride_a, m * k);
        let b: Vec<f32> = Batch::operand(&mut rng, l.len_b, l.stride_b, k * n);
        let mut c = vec![f32::POISON; l.len_c];
        for e in 0..batch {
            let ae = &a[e * l.stride_a..e * l.stride_a + m * k];
            let be = &b[e * l.stride_b..e * l.stride_b + k * n];
            let ce = emulate(&Gemm::nn(m, n, k), 1.0, ae, be, 0.0, None);
            c[e * l.stride_c..e * l.stride_c + m * n].copy_from_slice(&ce);
        }
        l.check(&a, &b, &c, tol).unwrap();
        let mut stray = c.clone();
        stray[l.len_c - 1] = 0.0;
        assert!(l.check(&a, &b, &stray, tol).is_err());
        let mut missing = c.clone();
        missing[(batch - 1) * l.stride_c] = f32::POISON;
        assert!(l.check(&a, &b, &missing, tol).is_err());
    }
}

#[test]
fn chain_checks_accept_chained_results_and_catch_a_stale_input() {
    let mut rng = Rng::new();
    let kernels = [NAIVE_F32, GEMM_F32_NT, TILED_F32_T16];
    let dims = [23, 300, 41, 257, 19];
    let a = rng.vec_f32(dims[0] * dims[1]);
    let stages: Vec<Stage<f32>> = kernels
        .iter()
        .enumerate()
        .map(|(i, &name)| {
            let kern = matmul_kernel(name);
            let g = kern.gemm(dims[0], dims[i + 2], dims[i + 1]);
            let b = rng.vec_f32(g.b_len());
            Stage { kern, g, b }
        })
        .collect();
    let mut outputs: Vec<Vec<f32>> = Vec::new();
    for (i, s) in stages.iter().enumerate() {
        let input = if i == 0 { &a } else { &outputs[i - 1] };
        let c = emulate(&s.g, 1.0, input, &s.b, 0.0, None);
        outputs.push(c);
    }
    check_chain(&a, &stages, &outputs).unwrap();
    // A stage that read its input before the previous stage finished.
    let mut stale = outputs.clone();
    stale[1] = emulate(
        &stages[1].g,
        1.0,
        &vec![0.0; outputs[0].len()],
        &stages[1].b,
        0.0,
        None,
    );
    assert!(check_chain(&a, &stages, &stale).is_err());
    // A chain whose last stage is slightly off everywhere.
    let mut off = outputs.clone();
    for x in off[2].iter_mut() {
        *x *= 1.01;
    }
    assert!(check_chain(&a, &stages, &off).is_err());
}

/// A TMA-store kernel writes C through its C map, so a product takes only
/// its own maps: another product's (same shape, other buffers) or none are
/// refused before anything is queued, and its own still run.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_product_refuses_tensor_maps_that_are_not_its_own() {
    let _gpu = gpu_lock();
    let ctx = ctx();
    let kern = matmul_kernel(SM90_BF16_NN);
    let cc = ctx.limits().compute_capability;
    if !kern.runs_on(cc) {
        cudakit_suite::not_run(format!(
            "{} needs sm_90a; this device is sm_{}{}",
            kern.name, cc.0, cc.1
        ));
    }
    let mut rng = Rng::new();
    let g = Gemm::new(300, 520, 130, Op::N, Op::N);
    let a = Bf16::random(&mut rng, g.a_len());
    let b = Bf16::random(&mut rng, g.b_len());
    let make = || -> Product<'_, Bf16, f32> {
        Product::new(ctx, kern, g, (&a, &b, None), Transpose::Device).unwrap()
    };
    let (one, other) = (make(), make());
    let theirs = other.maps().unwrap();
    assert!(theirs.as_ref().is_some_and(|m| m.c().is_some()));
    for maps in [&theirs, &None] {
        match one.launches(maps, 1.0, 0.0) {
            Err(cudakit::Error::InvalidArgument(msg)) => {
                assert!(msg.contains("own tensor maps"), "{msg}")
            }
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("foreign maps accepted"),
        }
    }
    let got = one.run(ctx, 1.0, 0.0).unwrap();
    reference::check_gemm(
        &mut rng,
        &g,
        1.0,
        &a,
        &b,
        0.0,
        None,
        &got,
        kern.tolerance(130),
    )
    .unwrap();
}
