//! Shared helpers of cudakit's hardware test suite.
//!
//! - [`kernels`](mod@kernels): the CUDA sources of `kernels/`, embedded, with
//!   descriptors (name expressions, element types, block shapes, tiles) to
//!   loop over.
//! - [`gemm`](mod@gemm): a GEMM staged for any matrix kernel (transposes,
//!   TMA row pitches, tensor maps, launches) and the fastest kernel per
//!   precision and device; [`cublas`](mod@cublas): cuBLAS in the same run,
//!   for comparison only (optional, loaded at run time);
//!   [`fp8`](mod@fp8): the FP8 GEMMs' host side (two operand types, scales).
//! - [`reference`](mod@reference): f64 CPU references (GEMM in every operand layout,
//!   batched, axpy, sums, transpose), tolerances derived from the
//!   arithmetic, poison patterns, and the comparisons every test ends with.
//! - [`rng`](mod@rng): a seeded generator for test inputs; fresh seeds each run,
//!   reproducible with `CUDAKIT_TEST_SEED`.
//! - [`bench`](mod@bench): cudakit against the raw driver API (`cargo bench`).
//!
//! A hardware test draws its inputs from one [`rng::Rng`], poisons its
//! outputs ([`reference::POISON_U32`]), launches a kernel described in
//! [`kernels`], and checks every output element with
//! [`reference::check_gemm`] or [`reference::compare`]:
//!
//! ```
//! use cudakit_suite::kernels::matmul_kernel;
//! use cudakit_suite::reference;
//! use cudakit_suite::rng::Rng;
//!
//! let mut rng = Rng::new();
//! let kernel = matmul_kernel("gemm<float, true, false>");
//! let g = kernel.gemm(33, 17, 65);
//! let (a, b) = (rng.vec_f32(g.a_len()), rng.vec_f32(g.b_len()));
//! // ... run `kernel.name` on the GPU with grid kernel.grid(33, 17, 1) ...
//! # let got: Vec<f32> = reference::gemm(&g, 1.0, &a, &b, 0.0, None)
//! #     .value.iter().map(|&v| v as f32).collect();
//! reference::check_gemm(&mut rng, &g, 1.0, &a, &b, 0.0, None, &got, kernel.tolerance(g.k))
//!     .unwrap();
//! ```

//!
//! A test that cannot run here (a driver without the entry point it needs,
//! say) never passes by returning early: it calls [`not_run`], which prints
//! `NOT RUN: <test>: <reason>` and fails the test. The hardware runner
//! (`scripts/gpu-run.sh`) counts those as *not run*, with their reasons,
//! never as passed (`docs/testing.md`).

pub mod bench;
pub mod bench_async;
pub mod bench_features;
pub mod bench_graph;
pub mod bench_ipc;
pub mod bench_multi;
pub mod bench_transfers;
pub mod cublas;
pub mod fp8;
pub mod gemm;
pub mod kernels;
pub mod reference;
pub mod rng;

/// The marker a test that cannot run prints before it fails; the runner
/// (`scripts/gpu-run.sh`) looks for it at the start of a line's text.
pub const NOT_RUN_MARKER: &str = "NOT RUN: ";

/// Ends the current test as *not run*: prints `NOT RUN: <test>: <reason>`
/// to stderr (libtest shows a failed test's output, so the line lands in
/// the log), then panics. libtest has no run-time skip, and a test that
/// returns early would count as passed; this one counts as failed under
/// plain `cargo test` and as not run in the hardware runner's summary.
///
/// `<test>` is the name libtest gave the test's thread (the test's path).
///
/// # Panics
///
/// Always: that is how the test ends.
#[track_caller]
pub fn not_run(reason: impl std::fmt::Display) -> ! {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("<unnamed test thread>");
    // One line, whatever the reason holds: the runner reads line by line.
    let reason = reason.to_string().replace('\n', " ");
    eprintln!("{NOT_RUN_MARKER}{test}: {reason}");
    panic!("test not run (see the NOT RUN line): {reason}");
}
