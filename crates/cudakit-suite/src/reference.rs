//! CPU references in f64, tolerances derived from the arithmetic, and the
//! comparison that every hardware test ends with.
//!
//! # Conventions
//!
//! The same as `kernels/README.md`: row-major, packed. op(A) is M×K, op(B)
//! is K×N, C is M×N with `C[i*N + j]`. A stored as is ([`Op::N`]) is M×K
//! (`A[i*K + k]`); transposed ([`Op::T`]) it is stored K×M (`A[k*M + i]`).
//! B stored as is is K×N (`B[k*N + j]`); transposed, N×K (`B[j*K + k]`).
//! The gemm kernels compute `C = alpha*op(A)*op(B) + beta*C` and, when
//! `beta == 0`, never read C; so do the references here.
//!
//! # References carry their own error scale
//!
//! Every reference element comes with a *scale*: for a product,
//! `|alpha| * sum_k |a_ik * b_kj| + |beta * c_ij|`; for a sum, `sum |x_i|`.
//! Rounding-error bounds are proportional to that scale, not to the result
//! (which cancellation can make arbitrarily small), so tolerances are
//! `Tolerance::scaled * scale` plus small absolute and relative terms. See
//! [`Tolerance`] for the derivations.
//!
//! # Large outputs
//!
//! Above [`FULL_CHECK_LIMIT`] elements, tests check [`check_positions`]: at
//! least [`SAMPLES`] random positions plus every element of the first and
//! last rows and columns, against [`gemm_sampled`] (or [`gemm_at`] for one
//! element). [`check_gemm`] makes that choice.

use std::ops::Range;
use std::thread;

use cudakit::{Bf16, F16, F8E4M3, F8E5M2};

use crate::rng::Rng;

/// The unit roundoff of f32, 2^-24 (half of `f32::EPSILON`).
pub const U32: f64 = f32::EPSILON as f64 / 2.0;
/// The unit roundoff of f64, 2^-53 (half of `f64::EPSILON`).
pub const U64: f64 = f64::EPSILON / 2.0;

/// The 32-bit poison pattern tests fill outputs with before a launch
/// (`cuMemsetD32`). As an f32 it is a quiet NaN with payload `0x78dead`; two
/// of them side by side (`0x7ff8dead_7ff8dead`) are an f64 NaN too, so one
/// `cuMemsetD32` poisons f32 and f64 buffers alike. A NaN computed by the GPU
/// is the canonical `0x7fffffff`, never this payload, so a poisoned element
/// still in the output means "never written".
pub const POISON_U32: u32 = 0x7ff8_dead;
/// [`POISON_U32`] twice: the f64 poison.
pub const POISON_U64: u64 = 0x7ff8_dead_7ff8_dead;
/// The 16-bit poison (`cuMemsetD16`): a NaN as f16 and as bf16.
pub const POISON_U16: u16 = 0x7ff8;

/// Above this many output elements, tests check sampled positions.
pub const FULL_CHECK_LIMIT: usize = 10_000_000;
/// How many random positions a sampled check draws (edges come on top).
pub const SAMPLES: usize = 100_000;

/// An element type the references read and the comparisons check: converts
/// exactly to f64 and knows its poison pattern.
pub trait Real: Copy + Send + Sync + 'static {
    /// The type's name in messages.
    const NAME: &'static str;
    /// The poisoned value (see [`POISON_U32`]).
    const POISON: Self;
    /// The exact value as f64.
    fn to_f64(self) -> f64;
    /// Whether these are exactly the poison bits.
    fn is_poison(self) -> bool;
    /// The raw bits, for messages.
    fn bits(self) -> u64;
}

/// `f32::from_bits` in a const context, which the standard library allows
/// only from Rust 1.83 (the workspace's MSRV is 1.80).
const fn f32_from_bits(bits: u32) -> f32 {
    #[repr(C)]
    union Bits {
        u: u32,
        f: f32,
    }
    // SAFETY: both fields are 4 bytes, and every bit pattern is a valid f32.
    unsafe { Bits { u: bits }.f }
}

/// `f64::from_bits` in a const context (see [`f32_from_bits`]).
const fn f64_from_bits(bits: u64) -> f64 {
    #[repr(C)]
    union Bits {
        u: u64,
        f: f64,
    }
    // SAFETY: both fields are 8 bytes, and every bit pattern is a valid f64.
    unsafe { Bits { u: bits }.f }
}

impl Real for f32 {
    const NAME: &'static str = "f32";
    const POISON: f32 = f32_from_bits(POISON_U32);
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn is_poison(self) -> bool {
        self.to_bits() == POISON_U32
    }
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl Real for f64 {
    const NAME: &'static str = "f64";
    const POISON: f64 = f64_from_bits(POISON_U64);
    fn to_f64(self) -> f64 {
        self
    }
    fn is_poison(self) -> bool {
        self.to_bits() == POISON_U64
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// `Real` for a float kept as its bits (`.0`), converted through `to_f32`,
/// with `$poison` as its poison bits.
macro_rules! bits_real {
    ($t:ident, $name:literal, $poison:expr) => {
        impl Real for $t {
            const NAME: &'static str = $name;
            const POISON: $t = $t($poison);
            fn to_f64(self) -> f64 {
                f64::from(self.to_f32())
            }
            fn is_poison(self) -> bool {
                self.0 == $poison
            }
            fn bits(self) -> u64 {
                u64::from(self.0)
            }
        }
    };
}

bits_real!(F16, "f16", POISON_U16);
bits_real!(Bf16, "bf16", POISON_U16);

/// The 8-bit poison of the FP8 inputs' row padding (never read: the tensor
/// maps' dimensions are the logical ones): a NaN as e4m3 and as e5m2.
pub const POISON_U8: u8 = 0x7f;

bits_real!(F8E4M3, "e4m3", POISON_U8);
bits_real!(F8E5M2, "e5m2", POISON_U8);

/// How an operand is stored: as is, or transposed (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Not transposed.
    N,
    /// Transposed.
    T,
}

impl Op {
    /// Both, N first.
    pub const ALL: [Op; 2] = [Op::N, Op::T];

    /// Whether the operand is stored transposed (the kernels' `TA`/`TB`).
    pub fn is_transposed(self) -> bool {
        self == Op::T
    }
}

/// The shape of a GEMM and how A and B are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gemm {
    /// Rows of op(A) and C.
    pub m: usize,
    /// Columns of op(B) and C.
    pub n: usize,
    /// Columns of op(A), rows of op(B).
    pub k: usize,
    /// How A is stored.
    pub op_a: Op,
    /// How B is stored.
    pub op_b: Op,
}

impl Gemm {
    /// A GEMM with the given storage.
    pub fn new(m: usize, n: usize, k: usize, op_a: Op, op_b: Op) -> Gemm {
        Gemm {
            m,
            n,
            k,
            op_a,
            op_b,
        }
    }

    /// A plain product: neither operand transposed.
    pub fn nn(m: usize, n: usize, k: usize) -> Gemm {
        Gemm::new(m, n, k, Op::N, Op::N)
    }

    /// Elements of A.
    pub fn a_len(&self) -> usize {
        self.m * self.k
    }

    /// Elements of B.
    pub fn b_len(&self) -> usize {
        self.k * self.n
    }

    /// Elements of C.
    pub fn c_len(&self) -> usize {
        self.m * self.n
    }

    /// Where `op(A)[i][k]` lives in A's storage.
    pub fn a_index(&self, i: usize, k: usize) -> usize {
        match self.op_a {
            Op::N => i * self.k + k,
            Op::T => k * self.m + i,
        }
    }

    /// Where `op(B)[k][j]` lives in B's storage.
    pub fn b_index(&self, k: usize, j: usize) -> usize {
        match self.op_b {
            Op::N => k * self.n + j,
            Op::T => j * self.k + k,
        }
    }

    fn check_inputs<T, C>(&self, a: &[T], b: &[T], beta: f64, c: Option<&[C]>) {
        assert_eq!(a.len(), self.a_len(), "A of {self:?} has the wrong length");
        assert_eq!(b.len(), self.b_len(), "B of {self:?} has the wrong length");
        if beta != 0.0 {
            let c = c.expect("beta != 0 needs the input C");
            assert_eq!(c.len(), self.c_len(), "C of {self:?} has the wrong length");
        }
    }
}

/// Reference values and the error scale of each (see the module docs).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reference {
    /// The exact result, computed in f64.
    pub value: Vec<f64>,
    /// What rounding errors scale with, element by element.
    pub scale: Vec<f64>,
}

impl Reference {
    /// Values whose scale is their own magnitude (exact data: a copy, a
    /// transpose, or anything compared with [`Tolerance::EXACT`]).
    pub fn exact<T: Real>(values: &[T]) -> Reference {
        let value: Vec<f64> = values.iter().map(|v| v.to_f64()).collect();
        let scale = value.iter().map(|v| v.abs()).collect();
        Reference { value, scale }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.value.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }
}

/// The threads the references use: all the machine's.
pub fn threads() -> usize {
    thread::available_parallelism().map_or(1, |n| n.get())
}

/// Splits `0..len` into at most `parts` contiguous ranges of near-equal size.
fn split(len: usize, parts: usize) -> Vec<Range<usize>> {
    let parts = parts.clamp(1, len.max(1));
    let base = len / parts;
    let extra = len % parts;
    let mut start = 0;
    (0..parts)
        .map(|p| {
            let size = base + usize::from(p < extra);
            let r = start..start + size;
            start += size;
            r
        })
        .collect()
}

/// op(A) as a row-major M×K f64 matrix.
fn op_a_rows<T: Real>(g: &Gemm, a: &[T]) -> Vec<f64> {
    let mut out = Vec::with_capacity(g.m * g.k);
    for i in 0..g.m {
        out.extend((0..g.k).map(|kk| a[g.a_index(i, kk)].to_f64()));
    }
    out
}

/// op(B) as a row-major K×N f64 matrix.
fn op_b_rows<T: Real>(g: &Gemm, b: &[T]) -> Vec<f64> {
    let mut out = Vec::with_capacity(g.k * g.n);
    for kk in 0..g.k {
        out.extend((0..g.n).map(|j| b[g.b_index(kk, j)].to_f64()));
    }
    out
}

/// op(B) transposed: row j holds column j of op(B) (an N×K matrix).
fn op_b_cols<T: Real>(g: &Gemm, b: &[T]) -> Vec<f64> {
    let mut out = Vec::with_capacity(g.k * g.n);
    for j in 0..g.n {
        out.extend((0..g.k).map(|kk| b[g.b_index(kk, j)].to_f64()));
    }
    out
}

/// Applies alpha and beta to an accumulated sum and its scale.
fn finish(acc: f64, acc_scale: f64, alpha: f64, beta: f64, c: Option<f64>) -> (f64, f64) {
    if beta == 0.0 {
        (alpha * acc, alpha.abs() * acc_scale)
    } else {
        let c = c.expect("beta != 0 needs the input C");
        (
            alpha * acc + beta * c,
            alpha.abs() * acc_scale + (beta * c).abs(),
        )
    }
}

/// `C = alpha*op(A)*op(B) + beta*C` in f64, every element, with its scale.
/// When `beta == 0`, `c` is ignored (it may be `None`). Pass the alpha and
/// beta the kernel receives (for an f32 kernel, its f32 values widened), and
/// the inputs exactly as uploaded (f16/bf16 as [`F16`]/[`Bf16`], so the
/// reference uses their rounded values).
///
/// Each element is `sum_k a_ik*b_kj` accumulated in ascending k with one
/// multiplication and one addition per k, exactly as [`gemm_at`] and
/// [`gemm_sampled`] do, so all three agree bit for bit. The work is blocked
/// (16 rows × 256 k × 512 columns, so a block of op(B) stays in cache) and
/// spread over [`threads`] threads by rows: 4096³ takes seconds on 16 cores.
///
/// # Panics
///
/// When a slice's length does not match `g`, or `beta != 0` without `c`.
pub fn gemm<T: Real>(
    g: &Gemm,
    alpha: f64,
    a: &[T],
    b: &[T],
    beta: f64,
    c: Option<&[T]>,
) -> Reference {
    gemm_with_threads(g, alpha, a, b, beta, c, threads())
}

/// [`gemm`] on a chosen number of threads.
///
/// # Panics
///
/// As [`gemm`].
pub fn gemm_with_threads<T: Real>(
    g: &Gemm,
    alpha: f64,
    a: &[T],
    b: &[T],
    beta: f64,
    c: Option<&[T]>,
    threads: usize,
) -> Reference {
    const ROWS: usize = 16;
    const DEPTH: usize = 256;
    const COLS: usize = 512;

    g.check_inputs(a, b, beta, c);
    let (m, n, k) = (g.m, g.n, g.k);
    let mut value = vec![0.0f64; m * n];
    let mut scale = vec![0.0f64; m * n];
    if m == 0 || n == 0 {
        return Reference { value, scale };
    }
    let a_rows = op_a_rows(g, a);
    let b_rows = op_b_rows(g, b);
    let ranges = split(m, threads);

    thread::scope(|s| {
        let mut value_rest: &mut [f64] = &mut value;
        let mut scale_rest: &mut [f64] = &mut scale;
        for rows in ranges {
            let (value_part, v_rest) = value_rest.split_at_mut(rows.len() * n);
            let (scale_part, s_rest) = scale_rest.split_at_mut(rows.len() * n);
            value_rest = v_rest;
            scale_rest = s_rest;
            let (a_rows, b_rows) = (&a_rows, &b_rows);
            s.spawn(move || {
                for i0 in (rows.start..rows.end).step_by(ROWS) {
                    let i1 = (i0 + ROWS).min(rows.end);
                    for j0 in (0..n).step_by(COLS) {
                        let j1 = (j0 + COLS).min(n);
                        for k0 in (0..k).step_by(DEPTH) {
                            let k1 = (k0 + DEPTH).min(k);
                            for i in i0..i1 {
                                let local = (i - rows.start) * n;
                                let c_row = &mut value_part[local + j0..local + j1];
                                let s_row = &mut scale_part[local + j0..local + j1];
                                for kk in k0..k1 {
                                    let aik = a_rows[i * k + kk];
                                    let aik_abs = aik.abs();
                                    let b_row = &b_rows[kk * n + j0..kk * n + j1];
                                    for ((cv, sv), &bv) in
                                        c_row.iter_mut().zip(s_row.iter_mut()).zip(b_row)
                                    {
                                        *cv += aik * bv;
                                        *sv += aik_abs * bv.abs();
                                    }
                                }
                            }
                        }
                    }
                }
            });
        }
    });

    for idx in 0..m * n {
        let c_in = if beta == 0.0 {
            None
        } else {
            c.map(|c| c[idx].to_f64())
        };
        let (v, s) = finish(value[idx], scale[idx], alpha, beta, c_in);
        value[idx] = v;
        scale[idx] = s;
    }
    Reference { value, scale }
}

/// One element of [`gemm`]: `(value, scale)` of `C[i][j]`, bit for bit what
/// `gemm` computes there, straight from the stored operands.
///
/// # Panics
///
/// As [`gemm`], or when (i, j) is outside C.
#[allow(clippy::too_many_arguments)]
pub fn gemm_at<T: Real>(
    g: &Gemm,
    alpha: f64,
    a: &[T],
    b: &[T],
    beta: f64,
    c: Option<&[T]>,
    i: usize,
    j: usize,
) -> (f64, f64) {
    g.check_inputs(a, b, beta, c);
    assert!(i < g.m && j < g.n, "({i}, {j}) is outside {g:?}");
    let mut acc = 0.0f64;
    let mut acc_scale = 0.0f64;
    for kk in 0..g.k {
        let av = a[g.a_index(i, kk)].to_f64();
        let bv = b[g.b_index(kk, j)].to_f64();
        acc += av * bv;
        acc_scale += av.abs() * bv.abs();
    }
    let c_in = if beta == 0.0 {
        None
    } else {
        c.map(|c| c[i * g.n + j].to_f64())
    };
    finish(acc, acc_scale, alpha, beta, c_in)
}

/// [`gemm`] at the given (row, column) positions only, in their order,
/// bit for bit equal to `gemm` there. op(A) and op(B) are first copied to
/// f64 with rows and columns contiguous, so each position is one contiguous
/// dot product; positions are spread over [`threads`] threads.
///
/// # Panics
///
/// As [`gemm_at`].
pub fn gemm_sampled<T: Real>(
    g: &Gemm,
    alpha: f64,
    a: &[T],
    b: &[T],
    beta: f64,
    c: Option<&[T]>,
    positions: &[(usize, usize)],
) -> Reference {
    g.check_inputs(a, b, beta, c);
    let k = g.k;
    let a_rows = op_a_rows(g, a);
    let b_cols = op_b_cols(g, b);
    let mut value = vec![0.0f64; positions.len()];
    let mut scale = vec![0.0f64; positions.len()];
    let ranges = split(positions.len(), threads());
    thread::scope(|s| {
        let mut value_rest: &mut [f64] = &mut value;
        let mut scale_rest: &mut [f64] = &mut scale;
        for range in ranges {
            let (value_part, v_rest) = value_rest.split_at_mut(range.len());
            let (scale_part, s_rest) = scale_rest.split_at_mut(range.len());
            value_rest = v_rest;
            scale_rest = s_rest;
            let (a_rows, b_cols) = (&a_rows, &b_cols);
            let positions = &positions[range];
            s.spawn(move || {
                for (p, &(i, j)) in positions.iter().enumerate() {
                    assert!(i < g.m && j < g.n, "({i}, {j}) is outside {g:?}");
                    let a_row = &a_rows[i * k..(i + 1) * k];
                    let b_col = &b_cols[j * k..(j + 1) * k];
                    let mut acc = 0.0f64;
                    let mut acc_scale = 0.0f64;
                    for (&av, &bv) in a_row.iter().zip(b_col) {
                        acc += av * bv;
                        acc_scale += av.abs() * bv.abs();
                    }
                    let c_in = if beta == 0.0 {
                        None
                    } else {
                        c.map(|c| c[i * g.n + j].to_f64())
                    };
                    let (v, sc) = finish(acc, acc_scale, alpha, beta, c_in);
                    value_part[p] = v;
                    scale_part[p] = sc;
                }
            });
        }
    });
    Reference { value, scale }
}

/// `C = A*B` (NN, alpha = 1, beta = 0): [`gemm`] for the `matmul_*` kernels.
///
/// # Panics
///
/// As [`gemm`].
pub fn matmul<T: Real>(m: usize, n: usize, k: usize, a: &[T], b: &[T]) -> Reference {
    gemm(&Gemm::nn(m, n, k), 1.0, a, b, 0.0, None)
}

/// The strided batch of `matmul_batched`: for each b < batch,
/// `C_b = A_b * B_b` with `A_b = a[b*stride_a ..][..m*k]` and likewise B.
/// Returns one [`Reference`] per batch entry (C_b belongs at
/// `b*stride_c .. b*stride_c + m*n`; the elements between are never written).
///
/// # Panics
///
/// When a batch entry runs past the end of `a` or `b`.
#[allow(clippy::too_many_arguments)]
pub fn matmul_batched<T: Real>(
    m: usize,
    n: usize,
    k: usize,
    a: &[T],
    stride_a: usize,
    b: &[T],
    stride_b: usize,
    batch: usize,
) -> Vec<Reference> {
    (0..batch)
        .map(|e| {
            let a_e = &a[e * stride_a..e * stride_a + m * k];
            let b_e = &b[e * stride_b..e * stride_b + k * n];
            matmul(m, n, k, a_e, b_e)
        })
        .collect()
}

/// `alpha*x + y`, element by element (saxpy, daxpy), scale `|alpha*x| + |y|`.
/// Pass the alpha the kernel receives (for saxpy, the f32 value widened).
///
/// # Panics
///
/// When `x` and `y` differ in length.
pub fn axpy<T: Real>(alpha: f64, x: &[T], y: &[T]) -> Reference {
    assert_eq!(x.len(), y.len(), "axpy: x and y differ in length");
    let (value, scale) = x
        .iter()
        .zip(y)
        .map(|(&x, &y)| {
            let (x, y) = (x.to_f64(), y.to_f64());
            (alpha * x + y, (alpha * x).abs() + y.abs())
        })
        .unzip();
    Reference { value, scale }
}

/// The sum of `x` as a one-element [`Reference`] whose scale is `sum |x_i|`.
/// Neumaier's compensated summation in f64: the error is at most
/// `2u|S| + O(n u^2) sum|x_i|`, i.e. exact for any practical purpose.
pub fn sum<T: Real>(x: &[T]) -> Reference {
    let mut total = 0.0f64;
    let mut compensation = 0.0f64;
    let mut scale = 0.0f64;
    for &v in x {
        let v = v.to_f64();
        let t = total + v;
        if total.abs() >= v.abs() {
            compensation += (total - t) + v;
        } else {
            compensation += (v - t) + total;
        }
        total = t;
        scale += v.abs();
    }
    Reference {
        value: vec![total + compensation],
        scale: vec![scale],
    }
}

/// `out = in^T`: `in` is rows×cols row-major, `out` cols×rows.
///
/// # Panics
///
/// When `x.len() != rows * cols`.
pub fn transpose<T: Copy>(rows: usize, cols: usize, x: &[T]) -> Vec<T> {
    assert_eq!(x.len(), rows * cols, "transpose: wrong length");
    let mut out = Vec::with_capacity(x.len());
    for c in 0..cols {
        out.extend((0..rows).map(|r| x[r * cols + c]));
    }
    out
}

/// `gamma_n = n*u / (1 - n*u)`: the classic bound on the relative error of
/// n roundings (Higham, *Accuracy and Stability of Numerical Algorithms*,
/// §3.1). Infinite when `n*u >= 1` (no bound).
pub fn gamma(n: usize, u: f64) -> f64 {
    let nu = n as f64 * u;
    if nu >= 1.0 {
        f64::INFINITY
    } else {
        nu / (1.0 - nu)
    }
}

/// The relative error of truncating an f32 to tf32 (10 explicit mantissa
/// bits): less than 2^-10.
pub const TF32_U: f64 = 1.0 / 1024.0;

/// How a GEMM kernel accumulates, for [`Tolerance::gemm`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Accumulation {
    /// f32 FMAs on the CUDA cores (naive, tiled, register-blocked SGEMM).
    F32,
    /// f64 FMAs (the f64 kernels).
    F64,
    /// f32 accumulation inside tensor cores (`mma.sync` with f16 or bf16
    /// inputs).
    TensorCoreF32,
    /// f32 inputs read as tf32 by the tensor cores (the low 13 mantissa bits
    /// ignored, i.e. truncated), f32 accumulation.
    Tf32,
    /// FP8 (e4m3, e5m2) inputs on Hopper's tensor cores (`wgmma` k32),
    /// accumulated by the tensor cores alone ("fast accumulation"): see
    /// [`Tolerance`] for the model and [`FP8_ACC_U`].
    Fp8TensorCore,
}

impl Accumulation {
    /// Its name in reports (`cudakit matmul --json`): `f32`, `f64`,
    /// `tensor_core_f32`, `tf32` or `fp8_tensor_core` (FP8 fast
    /// accumulation).
    pub fn name(self) -> &'static str {
        match self {
            Accumulation::F32 => "f32",
            Accumulation::F64 => "f64",
            Accumulation::TensorCoreF32 => "tensor_core_f32",
            Accumulation::Tf32 => "tf32",
            Accumulation::Fp8TensorCore => "fp8_tensor_core",
        }
    }
}

/// The relative error of one FP8 `wgmma` accumulation step on Hopper, as
/// modelled for [`Accumulation::Fp8TensorCore`]: published measurements of
/// H100/H800 FP8 tensor cores (DeepSeek-V3's report: "around 14 bits"; the
/// e8m13 accumulator reported in other studies, whose low 10 f32 mantissa
/// bits are truncated) put the accumulator at 13 mantissa bits, truncated:
/// less than 2^-13 of the magnitude per step.
pub const FP8_ACC_U: f64 = 1.0 / 8192.0;

/// An error bound per element:
/// `|got - value| <= abs + rel*|value| + scaled*scale`.
///
/// # The GEMM bound
///
/// Each C element is `alpha * sum_k a_ik b_kj + beta * c_ij`: a sum of K+1
/// terms with at most three factors each. Whatever the order of the
/// additions and whether multiplications are fused, floating-point
/// evaluation with unit roundoff u satisfies (Higham §3.1, §3.5)
///
/// `|fl(c) - c| <= gamma_{K+2}(u) * (|alpha| sum_k |a_ik b_kj| + |beta c_ij|)`,
///
/// where the parenthesis is the reference's `scale`. The f64 reference obeys
/// the same bound with u = 2^-53, so the distance between kernel and
/// reference is at most the sum of the two. Hence:
///
/// - **f32 (CUDA cores)**: `scaled = 2*gamma_{K+2}(2^-24) + gamma_{K+2}(2^-53)`
///   ≈ `(K+2) * 2^-23`: the bound with a factor 2 to spare (a rigorous worst
///   case; typical errors grow like sqrt(K), and the H200 run measured at
///   most 0.25 K u scale). For K = 4096 that is 4.9e-4 of the scale, in line
///   with the "1e-4 relative, scaled by K".
/// - **f64**: kernel and reference have the same u, so
///   `scaled = 2*(gamma_{K+2}(2^-53) + gamma_{K+2}(2^-53))`.
/// - **f16/bf16 inputs on tensor cores, f32 accumulation**: the inputs are
///   exact f16 (bf16) values and the reference must be computed from those
///   rounded values (it is, when it reads the [`F16`]/[`Bf16`] the GPU got),
///   so input rounding is not an error. Every product of two f16 (11-bit) or
///   bf16 (8-bit) significands is exact in f32 (at most 22 bits of 24). The
///   sums are f32, but in the tensor core's order and rounding: studies of
///   NVIDIA tensor cores (Fasi, Higham, Mikaitis, Pranesh, "Numerical
///   behavior of NVIDIA tensor cores", PeerJ CS 2021) found f32 accumulation
///   that truncates instead of rounding to nearest, which doubles the
///   per-operation error to 2u. So `scaled = 2 * gamma_{K+2}(2 * 2^-24) +
///   gamma_{K+2}(2^-53)`: the truncation factor 2 and the same factor 2 to
///   spare (measured on the H200: at most 0.21 K u scale).
/// - **tf32 on tensor cores**: the f32 inputs are truncated to tf32, each
///   losing up to 2^-10 of itself ([`TF32_U`]), which no f64 reference of
///   the f32 inputs sees: `scaled = 2 TF32_U + TF32_U^2` on top of the
///   f16/bf16 bound (the lab run on the H200 measured at most 0.57 of a
///   similar bound, on 1x1x1-like short sums where the truncations add up).
///
/// - **FP8 on Hopper tensor cores, fast accumulation**: the inputs are
///   exact FP8 values and every product of two of them (at most 4 × 4
///   significant bits) is exact, so input rounding is no error here either.
///   The accumulation is *not* f32's: Hopper's FP8 `wgmma` keeps about 13
///   mantissa bits and truncates ([`FP8_ACC_U`]), so the f32 accumulation
///   order alone does not bound the error. The model: each `wgmma` k32 step
///   adds 32 products to the accumulator with up to six truncations below
///   `FP8_ACC_U` each (the five levels of a 32-term reduction and the
///   addition into the accumulator), so a K-long sum takes 6·⌈K/32⌉ of
///   them; the epilogue's `alpha·scale_a·scale_b` product, its multiply
///   and the `beta·C` add are three f32 roundings. `scaled = 2 *
///   gamma_{6⌈K/32⌉+1}(FP8_ACC_U) + gamma_3(2^-24) + gamma_{K+2}(2^-53)`,
///   with the usual factor 2 to spare: 3.2e-3 of the scale at K = 64, 0.21
///   at K = 4096. One truncation per step (the first model) was too tight:
///   on the H200 an e5m2 × e4m3 product at 129×131×64 had one element at
///   1.16 of that bound (8.5e-4 of its scale; seed 0x9828ca7bfcb458de),
///   0.27 of this one. It is a model from measurements, not a proof: a
///   step whose products are far smaller than the accumulator may lose
///   more of them (each is aligned to the largest exponent before the
///   sum), which random inputs of one magnitude do not provoke.
///
/// Every GEMM bound adds `abs = (K+2) * MIN_POSITIVE` of the accumulating
/// type, for results near underflow (subnormal products lose their relative
/// accuracy). `rel` is 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// An absolute floor.
    pub abs: f64,
    /// A multiple of |reference value|.
    pub rel: f64,
    /// A multiple of the reference's error scale.
    pub scaled: f64,
}

impl Tolerance {
    /// Bit-exact agreement (after conversion to f64): transposes, copies,
    /// argument echoes. NaN still never passes.
    pub const EXACT: Tolerance = Tolerance {
        abs: 0.0,
        rel: 0.0,
        scaled: 0.0,
    };

    /// The allowed error for a reference value with its scale.
    pub fn bound(&self, value: f64, scale: f64) -> f64 {
        self.abs + self.rel * value.abs() + self.scaled * scale
    }

    /// The GEMM bound for a K-long accumulation; see the type's docs.
    pub fn gemm(accumulation: Accumulation, k: usize) -> Tolerance {
        let n = k + 2;
        let reference = gamma(n, U64);
        let (scaled, tiny) = match accumulation {
            Accumulation::F32 => (
                2.0 * gamma(n, U32) + reference,
                f64::from(f32::MIN_POSITIVE),
            ),
            Accumulation::F64 => (2.0 * (gamma(n, U64) + reference), f64::MIN_POSITIVE),
            Accumulation::TensorCoreF32 => (
                2.0 * gamma(n, 2.0 * U32) + reference,
                f64::from(f32::MIN_POSITIVE),
            ),
            // Each input loses up to 2^-10 of itself to the truncation, so a
            // product is off by up to (2 * 2^-10 + 2^-20) of |a b|: that
            // much of the scale, then the tensor-core accumulation bound.
            Accumulation::Tf32 => (
                2.0 * TF32_U + TF32_U * TF32_U + 2.0 * gamma(n, 2.0 * U32) + reference,
                f64::from(f32::MIN_POSITIVE),
            ),
            Accumulation::Fp8TensorCore => (
                2.0 * gamma(6 * k.div_ceil(32) + 1, FP8_ACC_U) + gamma(3, U32) + reference,
                f64::from(f32::MIN_POSITIVE),
            ),
        };
        Tolerance {
            abs: n as f64 * tiny,
            rel: 0.0,
            scaled,
        }
    }

    /// saxpy (`u = 2^-24`) or daxpy (`u = 2^-53`) against [`axpy`]: one FMA
    /// rounds once (|err| <= u |a x + y| <= u scale), an unfused multiply
    /// and add twice; allow `2*gamma_2(u)` of the scale plus the reference's
    /// own rounding of one f64 addition.
    pub fn axpy(u: f64) -> Tolerance {
        Tolerance {
            abs: 0.0,
            rel: 0.0,
            scaled: 2.0 * gamma(2, u) + U64,
        }
    }

    /// A sum of n f32 values accumulated in f64 in any order
    /// (`reduce_sum_f32_partials` + `reduce_sum_f64`) against [`sum`]:
    /// `|err| <= gamma_{n-1}(2^-53) sum|x_i|`; doubled to spare.
    pub fn sum_f64(n: usize) -> Tolerance {
        Tolerance {
            abs: 0.0,
            rel: 0.0,
            scaled: 2.0 * gamma(n.saturating_sub(1).max(1), U64),
        }
    }

    /// A sum of n f32 values accumulated in f32 in any order
    /// (`reduce_sum_f32_atomic`): `|err| <= gamma_{n-1}(2^-24) sum|x_i|`,
    /// doubled to spare. Loose for large n (0.12 sum|x_i| at n = 10^6); the
    /// test is that the atomic path adds every block exactly once, which
    /// errors far larger than that would reveal.
    pub fn sum_f32(n: usize) -> Tolerance {
        Tolerance {
            abs: 0.0,
            rel: 0.0,
            scaled: 2.0 * gamma(n.saturating_sub(1).max(1), U32),
        }
    }

    /// A bf16 *output*, or a bf16 result compared with a reference computed
    /// from unrounded inputs: the 1e-2, relative to the scale as
    /// well as to the value, since cancellation can make the value itself
    /// tiny. (bf16 keeps 8 significant bits: half an ulp is 2^-9 ≈ 2e-3
    /// relative, so 1e-2 leaves room for a few roundings.)
    pub fn bf16() -> Tolerance {
        Tolerance {
            abs: 0.0,
            rel: 1e-2,
            scaled: 1e-2,
        }
    }
}

/// Where a compared element sits, for messages.
#[derive(Clone, Copy)]
enum Layout {
    Flat,
    Matrix { cols: usize },
}

impl Layout {
    fn name(self, index: usize) -> String {
        match self {
            Layout::Flat => format!("[{index}]"),
            Layout::Matrix { cols } if cols > 0 => format!("({}, {})", index / cols, index % cols),
            Layout::Matrix { .. } => format!("[{index}]"),
        }
    }
}

/// How many failing elements a message lists.
const SHOWN: usize = 8;

fn compare_impl<G: Real>(
    got: &[G],
    pairs: impl Iterator<Item = (usize, usize)>,
    reference: &Reference,
    tol: Tolerance,
    layout: Layout,
) -> Result<(), String> {
    let mut checked = 0usize;
    let mut bad = 0usize;
    let mut unwritten = 0usize;
    let mut not_finite = 0usize;
    let mut max_abs = 0.0f64;
    let mut max_rel = 0.0f64;
    let mut max_ratio = 0.0f64;
    let mut shown = Vec::new();
    for (g_index, r_index) in pairs {
        checked += 1;
        let g = got[g_index];
        let value = reference.value[r_index];
        let bound = tol.bound(value, reference.scale[r_index]);
        let gv = g.to_f64();
        let err = (gv - value).abs();
        // `!(err <= bound)`: NaN (in got or reference) never passes, and
        // neither does an infinity (inf - inf is NaN, inf - x is inf).
        let within = err <= bound;
        let fails = g.is_poison() || !gv.is_finite() || !within;
        if err.is_finite() {
            max_abs = max_abs.max(err);
            if value != 0.0 {
                max_rel = max_rel.max(err / value.abs());
            }
            if bound > 0.0 {
                max_ratio = max_ratio.max(err / bound);
            }
        }
        if fails {
            bad += 1;
            let what = if g.is_poison() {
                unwritten += 1;
                "unwritten (still poison)".to_owned()
            } else {
                if !gv.is_finite() {
                    not_finite += 1;
                }
                format!("{gv:e} (bits {:#x})", g.bits())
            };
            if shown.len() < SHOWN {
                shown.push(format!(
                    "{}: got {what}, want {value:e} ± {bound:.3e} (err {err:.3e})",
                    layout.name(g_index)
                ));
            }
        }
    }
    if bad == 0 {
        return Ok(());
    }
    Err(format!(
        "{bad} of {checked} {} elements out of tolerance ({unwritten} unwritten, {not_finite} NaN or infinite); \
         max |err| {max_abs:.3e}, max |err|/|want| {max_rel:.3e}, max |err|/tolerance {max_ratio:.3} \
         (tolerance {tol:?}); first: {}",
        G::NAME,
        shown.join("; ")
    ))
}

/// Compares every element of `got` with `reference`.
///
/// # Errors
///
/// A message with how many elements failed (and how many of those were
/// never written, or NaN/infinite), the largest absolute, relative and
/// tolerance-relative errors, and the first few failures with their indices.
/// A NaN, an infinity or a poisoned element never passes, whatever the
/// tolerance. A length mismatch is an error too.
pub fn compare<G: Real>(got: &[G], reference: &Reference, tol: Tolerance) -> Result<(), String> {
    if got.len() != reference.len() {
        return Err(format!(
            "got {} elements, the reference has {}",
            got.len(),
            reference.len()
        ));
    }
    compare_impl(
        got,
        (0..got.len()).map(|i| (i, i)),
        reference,
        tol,
        Layout::Flat,
    )
}

/// [`compare`] for a matrix with `cols` columns: failures are named by
/// (row, column).
///
/// # Errors
///
/// As [`compare`].
pub fn compare_matrix<G: Real>(
    got: &[G],
    reference: &Reference,
    tol: Tolerance,
    cols: usize,
) -> Result<(), String> {
    if got.len() != reference.len() {
        return Err(format!(
            "got {} elements, the reference has {}",
            got.len(),
            reference.len()
        ));
    }
    compare_impl(
        got,
        (0..got.len()).map(|i| (i, i)),
        reference,
        tol,
        Layout::Matrix { cols },
    )
}

/// Compares a matrix with `cols` columns at the given (row, column)
/// positions: `reference` holds one element per position, in order (as
/// [`gemm_sampled`] returns).
///
/// # Errors
///
/// As [`compare`]; also when a position lies outside `got` or the lengths
/// of `positions` and `reference` differ.
pub fn compare_at<G: Real>(
    got: &[G],
    cols: usize,
    positions: &[(usize, usize)],
    reference: &Reference,
    tol: Tolerance,
) -> Result<(), String> {
    if positions.len() != reference.len() {
        return Err(format!(
            "{} positions but {} reference values",
            positions.len(),
            reference.len()
        ));
    }
    if let Some(&(r, c)) = positions
        .iter()
        .find(|&&(r, c)| c >= cols || r * cols + c >= got.len())
    {
        return Err(format!(
            "position ({r}, {c}) is outside the {}-element, {cols}-column output",
            got.len()
        ));
    }
    compare_impl(
        got,
        positions
            .iter()
            .enumerate()
            .map(|(p, &(r, c))| (r * cols + c, p)),
        reference,
        tol,
        Layout::Matrix { cols },
    )
}

/// The indices of elements that still hold the poison pattern.
pub fn unwritten<G: Real>(got: &[G]) -> Vec<usize> {
    got.iter()
        .enumerate()
        .filter(|(_, v)| v.is_poison())
        .map(|(i, _)| i)
        .collect()
}

/// Checks that no element still holds the poison pattern.
///
/// # Errors
///
/// How many are unwritten, and the first few indices.
pub fn check_written<G: Real>(got: &[G]) -> Result<(), String> {
    let missing = unwritten(got);
    if missing.is_empty() {
        return Ok(());
    }
    let first: Vec<String> = missing.iter().take(SHOWN).map(|i| i.to_string()).collect();
    Err(format!(
        "{} of {} {} elements never written (still poison), first at [{}]",
        missing.len(),
        got.len(),
        G::NAME,
        first.join(", ")
    ))
}

/// The positions a test must check in a rows×cols output: `None` (check
/// all of them) up to [`FULL_CHECK_LIMIT`] elements; above it, every
/// element of the first and last rows and columns plus [`SAMPLES`] random
/// positions, sorted and without repeats.
pub fn check_positions(rng: &mut Rng, rows: usize, cols: usize) -> Option<Vec<(usize, usize)>> {
    if rows.saturating_mul(cols) <= FULL_CHECK_LIMIT {
        return None;
    }
    Some(sample_positions(rng, rows, cols, SAMPLES))
}

/// Every element of the first and last rows and columns of a rows×cols
/// output plus `samples` random positions, sorted and without repeats.
pub fn sample_positions(
    rng: &mut Rng,
    rows: usize,
    cols: usize,
    samples: usize,
) -> Vec<(usize, usize)> {
    let mut positions = Vec::with_capacity(samples + 2 * (rows + cols));
    for c in 0..cols {
        positions.push((0, c));
        positions.push((rows - 1, c));
    }
    for r in 0..rows {
        positions.push((r, 0));
        positions.push((r, cols - 1));
    }
    for _ in 0..samples {
        positions.push((rng.range(0, rows), rng.range(0, cols)));
    }
    positions.sort_unstable();
    positions.dedup();
    positions
}

/// Checks a GEMM output against [`gemm`], or, above [`FULL_CHECK_LIMIT`]
/// elements, against [`gemm_sampled`] at [`check_positions`] drawn from
/// `rng`. Also checks that every element of `got` was written, also when
/// sampling (that scan is cheap).
///
/// # Errors
///
/// As [`compare`], prefixed with the GEMM and the rng's seed.
///
/// # Panics
///
/// As [`gemm`].
#[allow(clippy::too_many_arguments)]
pub fn check_gemm<T: Real, G: Real>(
    rng: &mut Rng,
    g: &Gemm,
    alpha: f64,
    a: &[T],
    b: &[T],
    beta: f64,
    c: Option<&[T]>,
    got: &[G],
    tol: Tolerance,
) -> Result<(), String> {
    let seed = rng.describe();
    let context = |e: String| format!("{g:?} alpha {alpha} beta {beta}: {e}; {seed}");
    if got.len() != g.c_len() {
        return Err(context(format!(
            "got {} elements, C has {}",
            got.len(),
            g.c_len()
        )));
    }
    match check_positions(rng, g.m, g.n) {
        None => {
            let reference = gemm(g, alpha, a, b, beta, c);
            compare_matrix(got, &reference, tol, g.n).map_err(context)
        }
        Some(positions) => {
            check_written(got).map_err(context)?;
            let reference = gemm_sampled(g, alpha, a, b, beta, c, &positions);
            compare_at(got, g.n, &positions, &reference, tol).map_err(context)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accumulations_have_distinct_report_names() {
        let all = [
            Accumulation::F32,
            Accumulation::F64,
            Accumulation::TensorCoreF32,
            Accumulation::Tf32,
            Accumulation::Fp8TensorCore,
        ];
        let mut names: Vec<&str> = all.iter().map(|a| a.name()).collect();
        assert_eq!(Accumulation::Fp8TensorCore.name(), "fp8_tensor_core");
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
    }

    /// op(X) as an explicit row-major matrix, built the dumb way.
    fn explicit(x: &[f64], rows: usize, cols: usize, op: Op) -> Vec<Vec<f64>> {
        (0..rows)
            .map(|r| {
                (0..cols)
                    .map(|c| match op {
                        Op::N => x[r * cols + c],
                        Op::T => x[c * rows + r],
                    })
                    .collect()
            })
            .collect()
    }

    /// The triple loop, independent of the code under test.
    fn naive(g: &Gemm, alpha: f64, a: &[f64], b: &[f64], beta: f64, c: Option<&[f64]>) -> Vec<f64> {
        let a = explicit(a, g.m, g.k, g.op_a);
        let b = explicit(b, g.k, g.n, g.op_b);
        let mut out = vec![0.0; g.m * g.n];
        for i in 0..g.m {
            for j in 0..g.n {
                let mut acc = 0.0;
                for (kk, a_ik) in a[i].iter().enumerate() {
                    acc += a_ik * b[kk][j];
                }
                out[i * g.n + j] = if beta == 0.0 {
                    alpha * acc
                } else {
                    alpha * acc + beta * c.unwrap()[i * g.n + j]
                };
            }
        }
        out
    }

    #[test]
    fn gemm_matches_the_triple_loop_for_every_op_and_shape() {
        let mut rng = Rng::new();
        for _ in 0..40 {
            let (m, n, k) = (rng.range(1, 40), rng.range(1, 40), rng.range(0, 40));
            for op_a in Op::ALL {
                for op_b in Op::ALL {
                    let g = Gemm::new(m, n, k, op_a, op_b);
                    let a = rng.vec_f64(g.a_len());
                    let b = rng.vec_f64(g.b_len());
                    let c = rng.vec_f64(g.c_len());
                    let (alpha, beta) = (rng.f64_sym(), rng.f64_sym());
                    let got = gemm(&g, alpha, &a, &b, beta, Some(&c));
                    let want = naive(&g, alpha, &a, &b, beta, Some(&c));
                    // Same operations in the same order: bit for bit.
                    assert_eq!(got.value, want, "{g:?} {}", rng.describe());
                }
            }
        }
    }

    #[test]
    fn blocking_and_threads_do_not_change_the_result() {
        let mut rng = Rng::new();
        // Larger than one block in every dimension (16 rows, 256 k, 512 cols).
        let g = Gemm::new(37, 530, 300, Op::T, Op::N);
        let a = rng.vec_f32(g.a_len());
        let b = rng.vec_f32(g.b_len());
        let one = gemm_with_threads(&g, 1.0, &a, &b, 0.0, None, 1);
        let many = gemm_with_threads(&g, 1.0, &a, &b, 0.0, None, 7);
        assert_eq!(one, many);
        let wide = gemm_with_threads(&g, 1.0, &a, &b, 0.0, None, 1000);
        assert_eq!(one, wide);
    }

    #[test]
    fn single_elements_and_samples_agree_with_the_full_product() {
        let mut rng = Rng::new();
        for op_a in Op::ALL {
            for op_b in Op::ALL {
                let g = Gemm::new(23, 31, 45, op_a, op_b);
                let a = rng.vec_f32(g.a_len());
                let b = rng.vec_f32(g.b_len());
                let c = rng.vec_f32(g.c_len());
                let full = gemm(&g, 0.5, &a, &b, -2.0, Some(&c));
                let positions: Vec<(usize, usize)> = (0..200)
                    .map(|_| (rng.range(0, g.m), rng.range(0, g.n)))
                    .collect();
                let sampled = gemm_sampled(&g, 0.5, &a, &b, -2.0, Some(&c), &positions);
                for (p, &(i, j)) in positions.iter().enumerate() {
                    let at = gemm_at(&g, 0.5, &a, &b, -2.0, Some(&c), i, j);
                    let idx = i * g.n + j;
                    assert_eq!(at, (full.value[idx], full.scale[idx]));
                    assert_eq!((sampled.value[p], sampled.scale[p]), at);
                }
            }
        }
    }

    #[test]
    fn transposed_storage_is_the_transpose() {
        let mut rng = Rng::new();
        let (m, n, k) = (13, 17, 19);
        let a = rng.vec_f64(m * k);
        let b = rng.vec_f64(k * n);
        let nn = gemm(&Gemm::nn(m, n, k), 1.0, &a, &b, 0.0, None);
        // Storing A^T (K×M) and B^T (N×K) with op T must give the same C.
        let a_t = transpose(m, k, &a);
        let b_t = transpose(k, n, &b);
        for (op_a, a_s) in [(Op::N, &a), (Op::T, &a_t)] {
            for (op_b, b_s) in [(Op::N, &b), (Op::T, &b_t)] {
                let g = Gemm::new(m, n, k, op_a, op_b);
                assert_eq!(gemm(&g, 1.0, a_s, b_s, 0.0, None), nn, "{g:?}");
            }
        }
        assert_eq!(transpose(k, m, &a_t), a);
    }

    #[test]
    fn the_scale_is_the_sum_of_absolute_products() {
        let g = Gemm::nn(1, 1, 3);
        let a = [1.0f64, -2.0, 3.0];
        let b = [4.0f64, 5.0, -6.0];
        let c = [10.0f64];
        let r = gemm(&g, 2.0, &a, &b, -0.5, Some(&c));
        assert_eq!(r.value, [2.0 * (4.0 - 10.0 - 18.0) - 5.0]);
        assert_eq!(r.scale, [2.0 * (4.0 + 10.0 + 18.0) + 5.0]);
    }

    #[test]
    fn beta_zero_never_reads_c() {
        let g = Gemm::nn(2, 2, 2);
        let a = [1.0f32; 4];
        let c = [f32::POISON; 4];
        let r = gemm(&g, 1.0, &a, &a, 0.0, Some(&c));
        assert_eq!(r.value, [2.0; 4]);
        let r = gemm(&g, 1.0, &a, &a, 0.0, None);
        assert_eq!(r.value, [2.0; 4]);
        assert_eq!(gemm_at(&g, 1.0, &a, &a, 0.0, Some(&c), 1, 1), (2.0, 2.0));
    }

    #[test]
    fn empty_dimensions() {
        let r = gemm(&Gemm::nn(3, 4, 0), 1.0, &[] as &[f32], &[], 0.0, None);
        assert_eq!(r.value, vec![0.0; 12]);
        assert!(gemm(
            &Gemm::nn(0, 4, 5),
            1.0,
            &[] as &[f32],
            &[0.0; 20],
            0.0,
            None
        )
        .is_empty());
        assert!(gemm(&Gemm::nn(4, 0, 5), 1.0, &[0.0f32; 20], &[], 0.0, None).is_empty());
    }

    #[test]
    #[should_panic(expected = "wrong length")]
    fn wrong_lengths_panic() {
        let _ = gemm(&Gemm::nn(2, 2, 2), 1.0, &[0.0f32; 3], &[0.0; 4], 0.0, None);
    }

    #[test]
    fn half_inputs_use_their_rounded_values() {
        let a = [F16::from_f32(0.1), F16::from_f32(1.0 / 3.0)];
        let b = [Bf16::from_f32(0.1), Bf16::from_f32(1.0 / 3.0)];
        let ra = matmul(1, 1, 2, &a[..], &[F16::from_f32(1.0), F16::from_f32(1.0)]);
        let want = f64::from(a[0].to_f32()) + f64::from(a[1].to_f32());
        assert_eq!(ra.value, [want]);
        let rb = matmul(1, 1, 2, &b[..], &[Bf16::from_f32(1.0), Bf16::from_f32(1.0)]);
        let want = f64::from(b[0].to_f32()) + f64::from(b[1].to_f32());
        assert_eq!(rb.value, [want]);
        assert_ne!(ra.value, rb.value);
    }

    #[test]
    fn batched_references_follow_the_strides() {
        let mut rng = Rng::new();
        let (m, n, k, batch) = (3, 4, 5, 3);
        let (sa, sb) = (m * k + 2, k * n + 1);
        let a = rng.vec_f32(sa * batch);
        let b = rng.vec_f32(sb * batch);
        let refs = matmul_batched(m, n, k, &a, sa, &b, sb, batch);
        assert_eq!(refs.len(), batch);
        for (e, r) in refs.iter().enumerate() {
            let want = matmul(
                m,
                n,
                k,
                &a[e * sa..e * sa + m * k],
                &b[e * sb..e * sb + k * n],
            );
            assert_eq!(r, &want);
        }
        // Stride 0 broadcasts one matrix.
        let refs = matmul_batched(m, n, k, &a, 0, &b, sb, batch);
        assert_eq!(
            refs[2],
            matmul(m, n, k, &a[..m * k], &b[2 * sb..2 * sb + k * n])
        );
    }

    #[test]
    fn axpy_sum_and_transpose() {
        let x = [1.0f32, -2.0, 3.0];
        let y = [0.5f32, 0.5, -10.0];
        let r = axpy(2.0, &x, &y);
        assert_eq!(r.value, [2.5, -3.5, -4.0]);
        assert_eq!(r.scale, [2.5, 4.5, 16.0]);
        // Compensated: the 1.0 survives the cancellation of 1e16.
        let s = sum(&[1e16f64, 1.0, -1e16]);
        assert_eq!(s.value, [1.0]);
        assert_eq!(s.scale, [2e16 + 1.0]);
        assert_eq!(sum::<f32>(&[]).value, [0.0]);
        let t = transpose(2, 3, &[1, 2, 3, 4, 5, 6]);
        assert_eq!(t, [1, 4, 2, 5, 3, 6]);
        assert_eq!(transpose(3, 2, &t), [1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn poison_patterns_are_nan_in_every_width() {
        assert!(f32::POISON.is_nan());
        assert!(f64::POISON.is_nan());
        assert_eq!(f32::POISON.to_bits(), POISON_U32);
        assert_eq!(f64::POISON.to_bits(), POISON_U64);
        assert!(F16::POISON.to_f32().is_nan());
        assert!(Bf16::POISON.to_f32().is_nan());
        // cuMemsetD32 with POISON_U32 poisons f64 buffers too.
        let two = (u64::from(POISON_U32) << 32) | u64::from(POISON_U32);
        assert_eq!(two, POISON_U64);
        // A computed NaN is not mistaken for poison.
        assert!(!f32::NAN.is_poison());
        let zero = std::hint::black_box(0.0f64);
        assert!(!(zero / zero).is_poison());
    }

    #[test]
    fn compare_accepts_errors_within_the_bound_only() {
        let reference = Reference {
            value: vec![1.0, -2.0, 0.0],
            scale: vec![1.0, 2.0, 4.0],
        };
        let tol = Tolerance {
            abs: 0.0,
            rel: 0.0,
            scaled: 0.1,
        };
        assert_eq!(compare(&[1.05f64, -2.19, 0.39], &reference, tol), Ok(()));
        let err = compare(&[1.05f64, -2.21, 0.39], &reference, tol).unwrap_err();
        assert!(err.starts_with("1 of 3 f64 elements"), "{err}");
        assert!(err.contains("[1]"), "{err}");
        let err = compare_matrix(&[1.05f64, -2.21, 0.39], &reference, tol, 2).unwrap_err();
        assert!(err.contains("(0, 1)"), "{err}");
        assert!(compare(&[1.0f64, -2.0], &reference, tol).is_err());
    }

    #[test]
    fn nan_infinity_and_poison_never_pass() {
        let reference = Reference {
            value: vec![1.0],
            scale: vec![1.0],
        };
        let huge = Tolerance {
            abs: f64::INFINITY,
            rel: 1e300,
            scaled: 1e300,
        };
        for bad in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let err = compare(&[bad], &reference, huge).unwrap_err();
            assert!(err.contains("1 NaN or infinite"), "{err}");
        }
        let err = compare(&[f32::POISON], &reference, huge).unwrap_err();
        assert!(err.contains("1 unwritten"), "{err}");
        assert!(err.contains("unwritten (still poison)"), "{err}");
        // A NaN reference fails too.
        let nan_ref = Reference {
            value: vec![f64::NAN],
            scale: vec![1.0],
        };
        assert!(compare(&[1.0f32], &nan_ref, huge).is_err());
        assert_eq!(compare(&[1.0f32], &reference, Tolerance::EXACT), Ok(()));
        assert!(compare(&[1.0000001f32], &reference, Tolerance::EXACT).is_err());
    }

    #[test]
    fn written_checks_find_the_poison() {
        let mut v = vec![0.0f32; 10];
        assert_eq!(check_written(&v), Ok(()));
        v[3] = f32::POISON;
        v[7] = f32::POISON;
        assert_eq!(unwritten(&v), [3, 7]);
        let err = check_written(&v).unwrap_err();
        assert!(err.contains("2 of 10") && err.contains("[3, 7]"), "{err}");
        let h = [F16::POISON, F16::from_f32(1.0)];
        assert_eq!(unwritten(&h), [0]);
    }

    #[test]
    fn compare_at_checks_positions_against_the_sampled_reference() {
        let mut rng = Rng::new();
        let g = Gemm::nn(9, 11, 7);
        let a = rng.vec_f32(g.a_len());
        let b = rng.vec_f32(g.b_len());
        let full = gemm(&g, 1.0, &a, &b, 0.0, None);
        let got: Vec<f32> = full.value.iter().map(|&v| v as f32).collect();
        let positions = [(0, 0), (8, 10), (4, 5)];
        let sampled = gemm_sampled(&g, 1.0, &a, &b, 0.0, None, &positions);
        let tol = Tolerance::gemm(Accumulation::F32, g.k);
        assert_eq!(compare_at(&got, g.n, &positions, &sampled, tol), Ok(()));
        let mut wrong = got.clone();
        wrong[8 * 11 + 10] += 0.5;
        let err = compare_at(&wrong, g.n, &positions, &sampled, tol).unwrap_err();
        assert!(err.contains("(8, 10)"), "{err}");
        assert!(compare_at(&got, g.n, &[(9, 0)], &sampled, tol).is_err());
        assert!(compare_at(&got, g.n, &[(0, 11), (0, 0), (1, 1)], &sampled, tol).is_err());
    }

    #[test]
    fn check_gemm_finds_a_wrong_element_full_and_sampled() {
        let mut rng = Rng::new();
        let g = Gemm::new(5, 6, 7, Op::T, Op::N);
        let a = rng.vec_f32(g.a_len());
        let b = rng.vec_f32(g.b_len());
        let c = rng.vec_f32(g.c_len());
        let r = gemm(&g, 1.5, &a, &b, 0.25, Some(&c));
        let mut got: Vec<f32> = r.value.iter().map(|&v| v as f32).collect();
        let tol = Tolerance::gemm(Accumulation::F32, g.k);
        assert_eq!(
            check_gemm(&mut rng, &g, 1.5, &a, &b, 0.25, Some(&c), &got, tol),
            Ok(())
        );
        got[13] = f32::POISON;
        let err = check_gemm(&mut rng, &g, 1.5, &a, &b, 0.25, Some(&c), &got, tol).unwrap_err();
        assert!(
            err.contains("(2, 1)") && err.contains("CUDAKIT_TEST_SEED"),
            "{err}"
        );
    }

    #[test]
    fn large_outputs_are_sampled_with_every_edge() {
        let mut rng = Rng::new();
        assert_eq!(check_positions(&mut rng, 1000, 10_000), None);
        let (rows, cols) = (5000, 4001);
        let p = check_positions(&mut rng, rows, cols).expect("sampled");
        assert!(p.len() >= SAMPLES * 9 / 10, "{}", p.len());
        assert!(p.iter().all(|&(r, c)| r < rows && c < cols));
        for c in 0..cols {
            assert!(p.binary_search(&(0, c)).is_ok());
            assert!(p.binary_search(&(rows - 1, c)).is_ok());
        }
        for r in 0..rows {
            assert!(p.binary_search(&(r, 0)).is_ok());
            assert!(p.binary_search(&(r, cols - 1)).is_ok());
        }
        let mut sorted = p.clone();
        sorted.dedup();
        assert_eq!(sorted, p);
    }

    #[test]
    fn tolerances_follow_the_derivation() {
        assert_eq!(gamma(0, U32), 0.0);
        assert!(gamma(1 << 24, U32).is_infinite());
        let t = Tolerance::gemm(Accumulation::F32, 4096);
        // ≈ (K+2) * 2^-23.
        let approx = 4098.0 * f64::from(f32::EPSILON);
        assert!((t.scaled / approx - 1.0).abs() < 1e-3, "{t:?}");
        assert!(t.scaled < 5e-4);
        let tc = Tolerance::gemm(Accumulation::TensorCoreF32, 4096);
        assert!((tc.scaled / t.scaled - 2.0).abs() < 1e-3, "{tc:?}");
        let d = Tolerance::gemm(Accumulation::F64, 4096);
        assert!(
            d.scaled < 4.01 * 4098.0 * U64 && d.scaled > 4.0 * 4098.0 * U64,
            "{d:?}"
        );
        assert_eq!(t.bound(10.0, 0.0), t.abs);
        assert!(Tolerance::sum_f64(1_000_000).scaled < 1e-9);
        assert!(Tolerance::axpy(U32).scaled > 4.0 * U32);
        assert_eq!(Tolerance::bf16().bound(-2.0, 3.0), 0.05);
    }

    #[test]
    fn split_covers_everything_once() {
        for len in [0, 1, 5, 16, 17, 1000] {
            for parts in [1, 2, 3, 16, 2000] {
                let ranges = split(len, parts);
                let mut next = 0;
                for r in &ranges {
                    assert_eq!(r.start, next);
                    next = r.end;
                }
                assert_eq!(next, len);
                assert!(ranges.len() <= parts.max(1));
            }
        }
    }
}
