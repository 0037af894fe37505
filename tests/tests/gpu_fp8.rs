//! FP8 on the H200: the device's conversions against cudakit's CPU ones
//! (bit for bit), and the FP8 kernels of `kernels/gemm_sm90.cu` (e4m3 ×
//! e4m3, e5m2 × e4m3) through `cudakit_suite::fp8::Fp8Gemm` at edge shapes and at 4096³,
//! against the f64 CPU reference with the FP8 tolerance
//! (`Tolerance::gemm(Accumulation::Fp8TensorCore, K)`), with per-tensor
//! scales ≠ 1, alpha and beta, and poisoned outputs.
//!
//! Inputs are random FP8 codes (fresh seeds, printed on failure): every
//! finite e4m3 value with |x| ≤ 4 (e5m2: |x| ≤ 4 too), so that sums stay
//! far from overflow. Outputs above 10⁷ elements are checked at 10⁵ random
//! positions plus every edge row and column.

use std::sync::{Mutex, MutexGuard, OnceLock};

use cudakit::{params, Context, LaunchConfig, F8E4M3, F8E5M2};
use cudakit_suite::fp8::{Fp8, Fp8Gemm};
use cudakit_suite::kernels::{matmul_kernel, Source};
use cudakit_suite::reference::{self, Gemm, Op, Real};
use cudakit_suite::rng::Rng;

fn ctx() -> &'static Context {
    static CTX: OnceLock<Context> = OnceLock::new();
    CTX.get_or_init(|| Context::new(0).unwrap_or_else(|e| panic!("no GPU context: {e}")))
}

fn gpu_lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// A random FP8 value with |x| ≤ 4 (drawn by code, not rounded).
fn draw<T: Fp8>(rng: &mut Rng, n: usize) -> Vec<T> {
    (0..n)
        .map(|_| loop {
            let v = T::from_f32(f32::from_bits(rng.next_u32()) % 4.0);
            if v.to_f32().is_finite() {
                break v;
            }
        })
        .collect()
}

/// One FP8 GEMM case: draw, run, check every element (sampled above 10⁷).
fn run_gemm<A: Fp8, B: Fp8>(kernel: &str, [m, n, k]: [usize; 3], beta: f64) {
    let _gpu = gpu_lock();
    let ctx = ctx();
    let kern = matmul_kernel(kernel);
    if !kern.runs_on(ctx.limits().compute_capability) {
        cudakit_suite::not_run(format!("{kernel} needs sm_90a"));
    }
    let mut rng = Rng::new();
    let a: Vec<A> = draw(&mut rng, m * k);
    let b: Vec<B> = draw(&mut rng, n * k);
    // Scales ≠ 1, powers of two, so that alpha·scale_a·scale_b is exact.
    let (scale_a, scale_b, alpha) = (0.5f32, 4.0f32, 1.5f64);
    let c_in: Option<Vec<f32>> = (beta != 0.0).then(|| rng.vec_f32(m * n));
    let product = Fp8Gemm::new(
        ctx,
        kern,
        [m, n, k],
        (&a, &b, c_in.as_deref()),
        (scale_a, scale_b),
    )
    .unwrap_or_else(|e| panic!("{kernel}: {e}"));
    let got = product
        .run(ctx, alpha, beta)
        .unwrap_or_else(|e| panic!("{kernel}: {e}"));
    // The reference in f64 from the exact values: A M×K, B stored N×K.
    let a32: Vec<f32> = a.iter().map(|v| v.to_f32()).collect();
    let b32: Vec<f32> = b.iter().map(|v| v.to_f32()).collect();
    let g = Gemm::new(m, n, k, Op::N, Op::T);
    let alpha_eff = alpha * f64::from(scale_a) * f64::from(scale_b);
    reference::check_gemm(
        &mut rng,
        &g,
        alpha_eff,
        &a32,
        &b32,
        beta,
        c_in.as_deref(),
        &got,
        kern.tolerance(k),
    )
    .unwrap_or_else(|e| panic!("{kernel}: {e}"));
}

macro_rules! fp8_cases {
    ($($name:ident: $a:ty, $b:ty, $kernel:literal, $dims:expr, $beta:expr;)*) => { $(
        #[test]
        #[ignore = "needs an NVIDIA GPU"]
        fn $name() {
            run_gemm::<$a, $b>($kernel, $dims, $beta);
        }
    )* };
}

fp8_cases! {
    e4m3_1x1x16: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [1, 1, 16], 0.0;
    e4m3_129x131x64: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [129, 131, 64], 0.0;
    e4m3_300x520x272_beta: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [300, 520, 272], -0.75;
    e4m3_257x1000x1040: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [257, 1000, 1040], 0.0;
    e4m3_17x19x23_padded_k: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [17, 19, 23], 0.0;
    e4m3_5x7x0: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [5, 7, 0], 0.5;
    e4m3_1000x3x128: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [1000, 3, 128], 0.0;
    e5m2_e4m3_129x131x64: F8E5M2, F8E4M3, "gemm_sm90_e5m2_e4m3_nt", [129, 131, 64], 0.0;
    e5m2_e4m3_300x520x272_beta: F8E5M2, F8E4M3, "gemm_sm90_e5m2_e4m3_nt", [300, 520, 272], -0.75;
    e5m2_e4m3_3x1000x48: F8E5M2, F8E4M3, "gemm_sm90_e5m2_e4m3_nt", [3, 1000, 48], 0.0;
    // The TMA-store epilogue (beta = 0, N % 4 = 0): an odd number of
    // tile-rows (the last cluster's second block stores nothing), edges in
    // M and N, K past one stage, and more units than clusters (each cluster
    // walks several, the ring and the staging running on across them).
    e4m3_257x520x400_tma_store: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [257, 520, 400], 0.0;
    e4m3_2500x3000x256_persistent: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [2500, 3000, 256], 0.0;
    e5m2_e4m3_2500x3000x256_persistent: F8E5M2, F8E4M3, "gemm_sm90_e5m2_e4m3_nt", [2500, 3000, 256], 0.0;
    e4m3_129x132x0_tma_store_k0: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [129, 132, 0], 0.0;
    e4m3_300x520x100_tma_store_padded_k: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [300, 520, 100], 0.0;
    // 19 tile-rows and more units than clusters: the spare CTA past M goes
    // on to real units; K = 200 ends in a partial stage.
    e4m3_2400x3000x200_odd_rows_persistent: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [2400, 3000, 200], 0.0;
    // 133 units on 45 clusters in 3 waves (on 132 SMs): two clusters walk
    // 2 units, the rest 3.
    e4m3_1700x4700x128_unequal_walks: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [1700, 4700, 128], 0.0;
    // beta ≠ 0 with more units than clusters: the direct stores, persistent.
    e4m3_2500x3000x256_beta: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [2500, 3000, 256], 0.5;
    large_e4m3_4096: F8E4M3, F8E4M3, "gemm_sm90_e4m3_nt", [4096, 4096, 4096], 0.0;
    large_e5m2_e4m3_4096: F8E5M2, F8E4M3, "gemm_sm90_e5m2_e4m3_nt", [4096, 4096, 4096], 0.0;
}

/// A product's launch refuses another product's tensor maps (their C map
/// would have the kernel store into the other product's C), and its own
/// still run and verify.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn an_fp8_product_refuses_tensor_maps_that_are_not_its_own() {
    let _gpu = gpu_lock();
    let ctx = ctx();
    let kernel = "gemm_sm90_e4m3_nt";
    let kern = matmul_kernel(kernel);
    if !kern.runs_on(ctx.limits().compute_capability) {
        cudakit_suite::not_run(format!("{kernel} needs sm_90a"));
    }
    let [m, n, k] = [300, 520, 272];
    let mut rng = Rng::new();
    let a: Vec<F8E4M3> = draw(&mut rng, m * k);
    let b: Vec<F8E4M3> = draw(&mut rng, n * k);
    let make = || Fp8Gemm::new(ctx, kern, [m, n, k], (&a, &b, None), (1.0, 1.0)).unwrap();
    let (one, other) = (make(), make());
    let theirs = other.maps().unwrap();
    assert!(theirs.c().is_some(), "N % 4 = 0 has a C map");
    match one.launches(&theirs, 1.0, 0.0) {
        Err(cudakit::Error::InvalidArgument(msg)) => {
            assert!(msg.contains("own tensor maps"), "{msg}")
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("foreign maps accepted"),
    }
    let got = one.run(ctx, 1.0, 0.0).unwrap();
    let a32: Vec<f32> = a.iter().map(|v| v.to_f32()).collect();
    let b32: Vec<f32> = b.iter().map(|v| v.to_f32()).collect();
    reference::check_gemm(
        &mut rng,
        &Gemm::new(m, n, k, Op::N, Op::T),
        1.0,
        &a32,
        &b32,
        0.0,
        None,
        &got,
        kern.tolerance(k),
    )
    .unwrap();
}

/// Every f32 input of the conversion test: every FP8 value of both
/// formats, the midpoints between neighbours and their f32 neighbours,
/// saturation and underflow edges, infinities, NaN, and random bits.
fn conversion_inputs(rng: &mut Rng) -> Vec<f32> {
    let mut values: Vec<f32> = (0..=255u8)
        .flat_map(|c| [F8E4M3(c).to_f32(), F8E5M2(c).to_f32()])
        .filter(|v| v.is_finite())
        .collect();
    values.sort_by(f32::total_cmp);
    values.dedup();
    let mut xs = Vec::new();
    for w in values.windows(2) {
        let mid = ((f64::from(w[0]) + f64::from(w[1])) / 2.0) as f32;
        for x in [w[0], mid] {
            xs.extend([
                x,
                f32::from_bits(x.to_bits() + 1),
                f32::from_bits(x.to_bits().max(1) - 1),
            ]);
        }
    }
    xs.extend([
        464.0,
        465.0,
        61440.0,
        61441.0,
        1e30,
        f32::MAX,
        f32::INFINITY,
    ]);
    xs.extend([
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(1),
        0.0,
        -0.0,
    ]);
    xs.extend((0..100_000).map(|_| f32::from_bits(rng.next_u32())));
    xs
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn conversions_match_the_cpu_bit_for_bit() {
    let _gpu = gpu_lock();
    let ctx = ctx();
    let mut rng = Rng::new();
    let xs = conversion_inputs(&mut rng);
    let n = xs.len();
    let compiled = Source::named("fp8_convert.cu")
        .program()
        .compile_for(ctx)
        .unwrap();
    let module = ctx.load_module(&compiled).unwrap();
    let x = ctx.upload(&xs).unwrap();
    let codes: Vec<u8> = (0..=255u8).collect();
    let c = ctx.upload(&codes).unwrap();
    let out8 = ctx.alloc::<u8>(n).unwrap();
    let out32 = ctx.alloc::<f32>(256).unwrap();
    let stream = ctx.stream().unwrap();
    let grid = |len: usize| LaunchConfig::new((len.div_ceil(256) as u32, 1, 1), (256, 1, 1));
    let mut nan_codes = Vec::new();
    for (to, from) in [
        ("f32_to_e4m3", "e4m3_to_f32"),
        ("f32_to_e5m2", "e5m2_to_f32"),
    ] {
        out8.fill(0xa5).unwrap();
        out32.fill(f32::POISON).unwrap();
        ctx.synchronize().unwrap();
        let f_to = module.function(to).unwrap();
        let f_from = module.function(from).unwrap();
        let (p_to, p_from) = (params![&x, &out8, n as i32], params![&c, &out32, 256i32]);
        ctx.scope(|s| {
            // SAFETY: fp8_convert.cu's kernels are grid-stride loops over n
            // elements of their input and output, which hold n (xs, out8)
            // and 256 (codes, out32) elements.
            unsafe { s.launch(&stream, &f_to, &grid(n), &p_to)? };
            // SAFETY: as above.
            unsafe { s.launch(&stream, &f_from, &grid(256), &p_from) }
        })
        .unwrap();
        let got8 = out8.to_vec().unwrap();
        let got32 = out32.to_vec().unwrap();
        for (i, &v) in xs.iter().enumerate() {
            let want = if to == "f32_to_e4m3" {
                F8E4M3::from_f32(v).0
            } else {
                F8E5M2::from_f32(v).0
            };
            if v.is_nan() {
                // The NaN's code is the hardware's; any NaN code passes.
                let is_nan = if to == "f32_to_e4m3" {
                    F8E4M3(got8[i]).is_nan()
                } else {
                    F8E5M2(got8[i]).is_nan()
                };
                assert!(
                    is_nan,
                    "{to}({:#010x}) = {:#04x}, not a NaN",
                    v.to_bits(),
                    got8[i]
                );
                nan_codes.push((to, v.to_bits(), got8[i], want));
            } else {
                assert_eq!(
                    got8[i],
                    want,
                    "{to}({v:e} = {:#010x}): GPU {:#04x}, CPU {want:#04x}; {}",
                    v.to_bits(),
                    got8[i],
                    rng.describe()
                );
            }
        }
        for code in 0..=255u8 {
            let want = if from == "e4m3_to_f32" {
                F8E4M3(code).to_f32()
            } else {
                F8E5M2(code).to_f32()
            };
            let got = got32[code as usize];
            if want.is_nan() {
                assert!(
                    got.is_nan() && !got.is_poison(),
                    "{from}({code:#04x}) = {got}"
                );
            } else {
                assert_eq!(got.to_bits(), want.to_bits(), "{from}({code:#04x})");
            }
        }
    }
    eprintln!("NaN conversions (kernel, input bits, GPU code, CPU code): {nan_codes:x?}");
}
