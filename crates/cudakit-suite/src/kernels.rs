//! The kernel sources of `kernels/`, embedded, and descriptors of what they
//! hold (names, name expressions, element types, block shapes, tiles), so
//! that tests loop over kernels instead of spelling each one out.
//!
//! `kernels/README.md` documents every kernel's parameters and geometry;
//! the descriptors here mirror it, and `tests/tests/kernels_compile.rs`
//! checks that every name listed here compiles and lowers.

use crate::reference::{Accumulation, Gemm, Op, Tolerance};
use crate::rng::Rng;

/// `kernels/matmul.cu`: f32 and f64 GEMM (naive, tiled, transposed with
/// alpha/beta, batched, register-blocked).
pub const MATMUL: &str = include_str!("../../../kernels/matmul.cu");
/// `kernels/matmul_mma.cu`: f16 and bf16 on tensor cores, f32 out.
pub const MATMUL_MMA: &str = include_str!("../../../kernels/matmul_mma.cu");
/// `kernels/blas1.cu`: saxpy, daxpy, sum reductions.
pub const BLAS1: &str = include_str!("../../../kernels/blas1.cu");
/// `kernels/transpose.cu`: tiled transpose.
pub const TRANSPOSE: &str = include_str!("../../../kernels/transpose.cu");
/// `kernels/faults.cu`: deliberately faulty kernels.
pub const FAULTS: &str = include_str!("../../../kernels/faults.cu");
/// `kernels/launch.cu`: argument kinds, structs, big shared memory,
/// clusters, cooperative launch, spin and count helpers.
pub const LAUNCH: &str = include_str!("../../../kernels/launch.cu");

/// The options every kernel file is meant to compile with (CUBIN for the
/// H200). Add `--ptxas-options=--warn-on-spills` to make a register spill
/// show in the log.
pub const OPTIONS: &[&str] = &["-arch=sm_90"];

/// One kernel file and every kernel in it: `extern "C"` names and the name
/// expressions of template instantiations (also valid as name expressions:
/// an `extern "C"` name lowers to itself).
#[derive(Clone, Copy, Debug)]
pub struct Source {
    /// The file name under `kernels/`.
    pub file: &'static str,
    /// The source text.
    pub text: &'static str,
    /// Every kernel the file defines, as looked up by tests.
    pub kernels: &'static [&'static str],
}

impl Source {
    /// Whether `name` is a template instantiation (has a name expression
    /// that lowers to a mangled `_Z...` name) rather than `extern "C"`.
    pub fn is_template(name: &str) -> bool {
        name.contains('<')
    }
}

/// Every kernel file with every kernel it holds.
pub const SOURCES: &[Source] = &[
    Source {
        file: "matmul.cu",
        text: MATMUL,
        kernels: &[
            "matmul_naive<float>",
            "matmul_naive<double>",
            "matmul_naive_f32",
            "matmul_naive_f64",
            "matmul_tiled<float, 8>",
            "matmul_tiled<float, 16>",
            "matmul_tiled<float, 32>",
            "matmul_tiled<double, 8>",
            "matmul_tiled<double, 16>",
            "matmul_tiled<double, 32>",
            "gemm<float, false, false>",
            "gemm<float, false, true>",
            "gemm<float, true, false>",
            "gemm<float, true, true>",
            "gemm<double, false, false>",
            "gemm<double, false, true>",
            "gemm<double, true, false>",
            "gemm<double, true, true>",
            "matmul_batched<float>",
            "matmul_batched<double>",
            "gemm_regblock<float, 128, 128, 8, 8, 8>",
            "gemm_regblock<float, 64, 64, 8, 8, 8>",
            "gemm_regblock<float, 64, 64, 16, 4, 4>",
            "gemm_regblock<double, 64, 64, 8, 4, 4>",
            "gemm_regblock<double, 32, 32, 8, 4, 4>",
        ],
    },
    Source {
        file: "matmul_mma.cu",
        text: MATMUL_MMA,
        kernels: &["matmul_f16_mma", "matmul_bf16_mma"],
    },
    Source {
        file: "blas1.cu",
        text: BLAS1,
        kernels: &[
            "saxpy",
            "daxpy",
            "reduce_sum_f32_partials",
            "reduce_sum_f64",
            "reduce_sum_f32_atomic",
        ],
    },
    Source {
        file: "transpose.cu",
        text: TRANSPOSE,
        kernels: &[
            "transpose<float>",
            "transpose<double>",
            "transpose<unsigned short>",
        ],
    },
    Source {
        file: "faults.cu",
        text: FAULTS,
        kernels: &[
            "fault_oob_write",
            "fault_write_generic",
            "fault_write_global",
            "fault_null_write",
            "fault_misaligned_read",
            "fault_trap",
            "fault_assert",
        ],
    },
    Source {
        file: "launch.cu",
        text: LAUNCH,
        kernels: &[
            "args_struct<S4>",
            "args_struct<S8>",
            "args_struct<S12>",
            "args_struct<S16>",
            "args_struct<S24>",
            "args_struct<S32>",
            "args_struct<S64>",
            "args_struct<V16>",
            "args_struct<F8>",
            "args_structs_all",
            "args_array",
            "struct_layout",
            "args_scalars",
            "args_many",
            "big_shared",
            "cluster_static",
            "cluster_dynamic",
            "coop_grid_sync",
            "spin",
            "spin_ns",
            "count_threads",
        ],
    },
];

/// An element type of a kernel's matrices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Elem {
    /// `float`.
    F32,
    /// `double`.
    F64,
    /// IEEE binary16 as `unsigned short` bits ([`cudakit::F16`]).
    F16,
    /// bfloat16 as `unsigned short` bits ([`cudakit::Bf16`]).
    Bf16,
}

impl Elem {
    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Elem::F32 => 4,
            Elem::F64 => 8,
            Elem::F16 | Elem::Bf16 => 2,
        }
    }
}

/// A matrix kernel's parameter list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Signature {
    /// `(const T* A, const T* B, T* C, int M, int N, int K)`: C = A·B.
    Matmul,
    /// `(int M, int N, int K, T alpha, const T* A, const T* B, T beta, T* C)`:
    /// C = alpha·op(A)·op(B) + beta·C, C not read when beta = 0.
    Gemm,
    /// `(const T* A, const T* B, T* C, int M, int N, int K,
    /// long long strideA, long long strideB, long long strideC, int batch)`:
    /// C_b = A_b·B_b, grid z = batch.
    Batched,
}

/// One matrix-multiply kernel and how to launch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatmulKernel {
    /// The file under `kernels/`.
    pub file: &'static str,
    /// Its source text.
    pub source: &'static str,
    /// The `extern "C"` name or name expression.
    pub name: &'static str,
    /// The element type of A and B.
    pub input: Elem,
    /// The element type of C.
    pub output: Elem,
    /// The parameter list.
    pub signature: Signature,
    /// How A is stored.
    pub op_a: Op,
    /// How B is stored.
    pub op_b: Op,
    /// The block shape it must be launched with.
    pub block: [u32; 3],
    /// Rows (of M) and columns (of N) of C that one block computes.
    pub tile: [u32; 2],
    /// How it accumulates (picks the tolerance).
    pub accumulation: Accumulation,
}

impl MatmulKernel {
    /// The grid for an M×N output (and `batch` entries for
    /// [`Signature::Batched`]; pass 1 otherwise):
    /// (⌈N/tile cols⌉, ⌈M/tile rows⌉, batch), each at least 1 so that an
    /// empty output is still a valid launch that writes nothing.
    ///
    /// # Panics
    ///
    /// When a dimension does not fit the grid (`u32`; z ≤ 65535 is the
    /// driver's to check).
    pub fn grid(&self, m: usize, n: usize, batch: usize) -> [u32; 3] {
        let blocks = |len: usize, tile: u32| -> u32 {
            let count = len.div_ceil(tile as usize).max(1);
            u32::try_from(count).expect("grid dimension fits in u32")
        };
        [
            blocks(n, self.tile[1]),
            blocks(m, self.tile[0]),
            u32::try_from(batch.max(1)).expect("batch fits in u32"),
        ]
    }

    /// The GEMM this kernel computes for M, N, K (its operand storage).
    pub fn gemm(&self, m: usize, n: usize, k: usize) -> Gemm {
        Gemm::new(m, n, k, self.op_a, self.op_b)
    }

    /// The tolerance for a K-long accumulation ([`Tolerance::gemm`]).
    pub fn tolerance(&self, k: usize) -> Tolerance {
        Tolerance::gemm(self.accumulation, k)
    }

    /// Threads per block.
    pub fn threads(&self) -> u32 {
        self.block.iter().product()
    }
}

#[allow(clippy::too_many_arguments)]
const fn kernel(
    file: &'static str,
    source: &'static str,
    name: &'static str,
    input: Elem,
    output: Elem,
    signature: Signature,
    ops: (Op, Op),
    block: [u32; 3],
    tile: [u32; 2],
) -> MatmulKernel {
    let accumulation = match (input, output) {
        (Elem::F64, _) => Accumulation::F64,
        (Elem::F16, _) | (Elem::Bf16, _) => Accumulation::TensorCoreF32,
        _ => Accumulation::F32,
    };
    MatmulKernel {
        file,
        source,
        name,
        input,
        output,
        signature,
        op_a: ops.0,
        op_b: ops.1,
        block,
        tile,
        accumulation,
    }
}

const NN: (Op, Op) = (Op::N, Op::N);
const SQ16: [u32; 3] = [16, 16, 1];

const fn mm(
    name: &'static str,
    t: Elem,
    sig: Signature,
    ops: (Op, Op),
    block: [u32; 3],
    tile: [u32; 2],
) -> MatmulKernel {
    kernel("matmul.cu", MATMUL, name, t, t, sig, ops, block, tile)
}

const fn regblock(name: &'static str, t: Elem, bm: u32, bn: u32, tm: u32, tn: u32) -> MatmulKernel {
    mm(
        name,
        t,
        Signature::Gemm,
        NN,
        [(bm / tm) * (bn / tn), 1, 1],
        [bm, bn],
    )
}

/// Every matrix-multiply kernel, in `SOURCES` order.
pub const MATMUL_KERNELS: &[MatmulKernel] = &[
    mm(
        "matmul_naive<float>",
        Elem::F32,
        Signature::Matmul,
        NN,
        SQ16,
        [16, 16],
    ),
    mm(
        "matmul_naive<double>",
        Elem::F64,
        Signature::Matmul,
        NN,
        SQ16,
        [16, 16],
    ),
    mm(
        "matmul_naive_f32",
        Elem::F32,
        Signature::Matmul,
        NN,
        SQ16,
        [16, 16],
    ),
    mm(
        "matmul_naive_f64",
        Elem::F64,
        Signature::Matmul,
        NN,
        SQ16,
        [16, 16],
    ),
    mm(
        "matmul_tiled<float, 8>",
        Elem::F32,
        Signature::Matmul,
        NN,
        [8, 8, 1],
        [8, 8],
    ),
    mm(
        "matmul_tiled<float, 16>",
        Elem::F32,
        Signature::Matmul,
        NN,
        SQ16,
        [16, 16],
    ),
    mm(
        "matmul_tiled<float, 32>",
        Elem::F32,
        Signature::Matmul,
        NN,
        [32, 32, 1],
        [32, 32],
    ),
    mm(
        "matmul_tiled<double, 8>",
        Elem::F64,
        Signature::Matmul,
        NN,
        [8, 8, 1],
        [8, 8],
    ),
    mm(
        "matmul_tiled<double, 16>",
        Elem::F64,
        Signature::Matmul,
        NN,
        SQ16,
        [16, 16],
    ),
    mm(
        "matmul_tiled<double, 32>",
        Elem::F64,
        Signature::Matmul,
        NN,
        [32, 32, 1],
        [32, 32],
    ),
    mm(
        "gemm<float, false, false>",
        Elem::F32,
        Signature::Gemm,
        (Op::N, Op::N),
        SQ16,
        [16, 16],
    ),
    mm(
        "gemm<float, false, true>",
        Elem::F32,
        Signature::Gemm,
        (Op::N, Op::T),
        SQ16,
        [16, 16],
    ),
    mm(
        "gemm<float, true, false>",
        Elem::F32,
        Signature::Gemm,
        (Op::T, Op::N),
        SQ16,
        [16, 16],
    ),
    mm(
        "gemm<float, true, true>",
        Elem::F32,
        Signature::Gemm,
        (Op::T, Op::T),
        SQ16,
        [16, 16],
    ),
    mm(
        "gemm<double, false, false>",
        Elem::F64,
        Signature::Gemm,
        (Op::N, Op::N),
        SQ16,
        [16, 16],
    ),
    mm(
        "gemm<double, false, true>",
        Elem::F64,
        Signature::Gemm,
        (Op::N, Op::T),
        SQ16,
        [16, 16],
    ),
    mm(
        "gemm<double, true, false>",
        Elem::F64,
        Signature::Gemm,
        (Op::T, Op::N),
        SQ16,
        [16, 16],
    ),
    mm(
        "gemm<double, true, true>",
        Elem::F64,
        Signature::Gemm,
        (Op::T, Op::T),
        SQ16,
        [16, 16],
    ),
    mm(
        "matmul_batched<float>",
        Elem::F32,
        Signature::Batched,
        NN,
        SQ16,
        [16, 16],
    ),
    mm(
        "matmul_batched<double>",
        Elem::F64,
        Signature::Batched,
        NN,
        SQ16,
        [16, 16],
    ),
    regblock(
        "gemm_regblock<float, 128, 128, 8, 8, 8>",
        Elem::F32,
        128,
        128,
        8,
        8,
    ),
    regblock(
        "gemm_regblock<float, 64, 64, 8, 8, 8>",
        Elem::F32,
        64,
        64,
        8,
        8,
    ),
    regblock(
        "gemm_regblock<float, 64, 64, 16, 4, 4>",
        Elem::F32,
        64,
        64,
        4,
        4,
    ),
    regblock(
        "gemm_regblock<double, 64, 64, 8, 4, 4>",
        Elem::F64,
        64,
        64,
        4,
        4,
    ),
    regblock(
        "gemm_regblock<double, 32, 32, 8, 4, 4>",
        Elem::F64,
        32,
        32,
        4,
        4,
    ),
    kernel(
        "matmul_mma.cu",
        MATMUL_MMA,
        "matmul_f16_mma",
        Elem::F16,
        Elem::F32,
        Signature::Matmul,
        NN,
        [128, 1, 1],
        [64, 64],
    ),
    kernel(
        "matmul_mma.cu",
        MATMUL_MMA,
        "matmul_bf16_mma",
        Elem::Bf16,
        Elem::F32,
        Signature::Matmul,
        NN,
        [128, 1, 1],
        [64, 64],
    ),
];

/// The matrix kernel named `name`.
///
/// # Panics
///
/// When there is none.
pub fn matmul_kernel(name: &str) -> &'static MatmulKernel {
    MATMUL_KERNELS
        .iter()
        .find(|k| k.name == name)
        .unwrap_or_else(|| panic!("no matmul kernel named {name:?}"))
}

/// Shapes (M, N, K) every matrix kernel should be run on: the degenerate
/// 1×1×1, primes, non-multiples of every tile size (8, 16, 32, 64, 128 and
/// the K steps 8, 16, 32), exact multiples, tall-skinny and short-wide, and
/// K = 0. Large shapes (up to 4096²) are the tests' to add.
pub const SHAPES: &[[usize; 3]] = &[
    [1, 1, 1],
    [2, 3, 5],
    [17, 19, 23],
    [127, 253, 511],
    [129, 131, 67],
    [64, 64, 64],
    [128, 128, 128],
    [33, 65, 17],
    [257, 129, 300],
    [1000, 3, 77],
    [3, 1000, 77],
    [1, 517, 9],
    [517, 1, 9],
    [5, 7, 0],
];

/// The transpose kernels: name expression and element type. Block
/// [`TRANSPOSE_BLOCK`], grid [`transpose_grid`].
pub const TRANSPOSE_KERNELS: &[(&str, Elem)] = &[
    ("transpose<float>", Elem::F32),
    ("transpose<double>", Elem::F64),
    ("transpose<unsigned short>", Elem::F16),
];

/// The transpose kernels' block shape (exactly).
pub const TRANSPOSE_BLOCK: [u32; 3] = [32, 8, 1];

/// The grid for transposing a rows×cols matrix: (⌈cols/32⌉, ⌈rows/32⌉, 1),
/// each at least 1.
///
/// # Panics
///
/// When a dimension does not fit in `u32`.
pub fn transpose_grid(rows: usize, cols: usize) -> [u32; 3] {
    let blocks = |len: usize| u32::try_from(len.div_ceil(32).max(1)).expect("fits in u32");
    [blocks(cols), blocks(rows), 1]
}

/// A deliberate fault: the kernel and the `CUresult` codes seen for it on
/// the H200 (see `kernels/README.md` for its parameters and the arguments
/// used). A test should accept any of `codes` and check that the error is
/// sticky: address faults came back as 700 in some processes and 717 in
/// others, for the same kernel and arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    /// The `extern "C"` kernel in `faults.cu`.
    pub kernel: &'static str,
    /// What it does wrong.
    pub what: &'static str,
    /// The codes the synchronization after it may return.
    pub codes: &'static [u32],
}

/// The faults whose outcome does not depend on an address choice.
pub const FAULTS_MEASURED: &[Fault] = &[
    Fault {
        kernel: "fault_oob_write",
        what: "store 64 Mi floats past a 1 MiB allocation",
        codes: &[700, 717],
    },
    Fault {
        kernel: "fault_null_write",
        what: "store to address 0",
        codes: &[700, 717],
    },
    Fault {
        kernel: "fault_misaligned_read",
        what: "4-byte load from an odd address",
        codes: &[716],
    },
    Fault {
        kernel: "fault_trap",
        what: "__trap()",
        codes: &[719],
    },
    Fault {
        kernel: "fault_assert",
        what: "assert(value == 0) with value = 1",
        codes: &[710],
    },
];

// ---------------------------------------------------------------------------
// launch.cu's structs, mirrored.
// ---------------------------------------------------------------------------

/// A struct `launch.cu` takes by value, mirrored with the C layout. The
/// padding of the C struct is an explicit `_pad` field here (cudakit's
/// `DeviceCopy` forbids implicit padding, whose bytes Rust may not read), so
/// a test decides what the padding bytes hold and `args_struct`'s byte echo
/// can be compared in full.
pub trait StructArg: cudakit::DeviceCopy + std::fmt::Debug + PartialEq {
    /// The name expression of the `args_struct` instantiation for it.
    const KERNEL: &'static str;
    /// `sizeof` in C.
    const SIZE: usize;
    /// A value with random fields, each exactly representable in f64, and
    /// random padding bytes.
    fn random(rng: &mut Rng) -> Self;
    /// The fields as `args_struct` writes them: f64, declaration order
    /// (padding excluded).
    fn fields(&self) -> Vec<f64>;
    /// The C bytes of the value, padding included, built field by field at
    /// the offsets `kernels/README.md` documents (not from Rust's layout):
    /// what `args_struct`'s byte echo must return.
    fn to_bytes(&self) -> Vec<u8>;
}

/// Writes `bytes` at `offset`.
fn put(buf: &mut [u8], offset: usize, bytes: &[u8]) {
    buf[offset..offset + bytes.len()].copy_from_slice(bytes);
}

/// A random i64 that f64 holds exactly (|v| < 2^53).
fn exact_i64(rng: &mut Rng) -> i64 {
    (rng.next_u64() >> 11) as i64 - (1i64 << 52)
}

/// `N` random bytes.
fn random_bytes<const N: usize>(rng: &mut Rng) -> [u8; N] {
    let mut b = [0u8; N];
    for x in &mut b {
        *x = rng.next_u32() as u8;
    }
    b
}

/// `struct S4 { unsigned char a; short b; }`: size 4, align 2.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct S4 {
    /// Offset 0.
    pub a: u8,
    /// C padding, offset 1.
    pub _pad: u8,
    /// Offset 2.
    pub b: i16,
}

/// `struct S8 { float a; unsigned char b; }`: size 8, align 4.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct S8 {
    /// Offset 0.
    pub a: f32,
    /// Offset 4.
    pub b: u8,
    /// C padding, offsets 5..8.
    pub _pad: [u8; 3],
}

/// `struct S12 { int a; unsigned char b; float c; }`: size 12, align 4.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct S12 {
    /// Offset 0.
    pub a: i32,
    /// Offset 4.
    pub b: u8,
    /// C padding, offsets 5..8.
    pub _pad: [u8; 3],
    /// Offset 8.
    pub c: f32,
}

/// `struct S16 { double a; int b; }`: size 16, align 8.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct S16 {
    /// Offset 0.
    pub a: f64,
    /// Offset 8.
    pub b: i32,
    /// C padding, offsets 12..16.
    pub _pad: [u8; 4],
}

/// `struct S24 { signed char a; double b; short c; }`: size 24, align 8.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct S24 {
    /// Offset 0.
    pub a: i8,
    /// C padding, offsets 1..8.
    pub _pad0: [u8; 7],
    /// Offset 8.
    pub b: f64,
    /// Offset 16.
    pub c: i16,
    /// C padding, offsets 18..24.
    pub _pad1: [u8; 6],
}

/// `struct S32 { int a; double b; float c; long long d; }`: size 32, align 8.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct S32 {
    /// Offset 0.
    pub a: i32,
    /// C padding, offsets 4..8.
    pub _pad0: [u8; 4],
    /// Offset 8.
    pub b: f64,
    /// Offset 16.
    pub c: f32,
    /// C padding, offsets 20..24.
    pub _pad1: [u8; 4],
    /// Offset 24.
    pub d: i64,
}

/// `struct S64 { double v[7]; unsigned char tag; }`: size 64, align 8.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct S64 {
    /// Offset 0.
    pub v: [f64; 7],
    /// Offset 56.
    pub tag: u8,
    /// C padding, offsets 57..64.
    pub _pad: [u8; 7],
}

/// `struct __align__(16) V16 { float x, y, z, w; }`: size 16, align 16.
#[repr(C, align(16))]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct V16 {
    /// Offset 0.
    pub x: f32,
    /// Offset 4.
    pub y: f32,
    /// Offset 8.
    pub z: f32,
    /// Offset 12.
    pub w: f32,
}

/// `struct F8 { float v[8]; }`: a fixed array by value; size 32, align 4.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct F8 {
    /// Offset 0.
    pub v: [f32; 8],
}

macro_rules! device_copy {
    ($($t:ty),*) => { $(
        // SAFETY: a #[repr(C)] struct of plain numbers and byte arrays: no
        // pointers or drop glue, valid for every bit pattern, and without
        // implicit padding (the C padding is an explicit `_pad` field;
        // `no_implicit_padding` checks that the fields fill the size). Field
        // order, sizes and alignment are launch.cu's, checked against the
        // documented layout by `rust_mirrors_match_the_c_layout` and on the
        // GPU by the `struct_layout` kernel.
        unsafe impl cudakit::DeviceCopy for $t {}
    )* };
}
device_copy!(S4, S8, S12, S16, S24, S32, S64, V16, F8);

impl StructArg for S4 {
    const KERNEL: &'static str = "args_struct<S4>";
    const SIZE: usize = 4;
    fn random(rng: &mut Rng) -> S4 {
        S4 {
            a: rng.next_u32() as u8,
            _pad: rng.next_u32() as u8,
            b: rng.next_u32() as i16,
        }
    }
    fn fields(&self) -> Vec<f64> {
        vec![f64::from(self.a), f64::from(self.b)]
    }
    fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![0; Self::SIZE];
        put(&mut b, 0, &[self.a, self._pad]);
        put(&mut b, 2, &self.b.to_le_bytes());
        b
    }
}

impl StructArg for S8 {
    const KERNEL: &'static str = "args_struct<S8>";
    const SIZE: usize = 8;
    fn random(rng: &mut Rng) -> S8 {
        S8 {
            a: rng.f32_sym() * 1000.0,
            b: rng.next_u32() as u8,
            _pad: random_bytes(rng),
        }
    }
    fn fields(&self) -> Vec<f64> {
        vec![f64::from(self.a), f64::from(self.b)]
    }
    fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![0; Self::SIZE];
        put(&mut b, 0, &self.a.to_le_bytes());
        put(&mut b, 4, &[self.b]);
        put(&mut b, 5, &self._pad);
        b
    }
}

impl StructArg for S12 {
    const KERNEL: &'static str = "args_struct<S12>";
    const SIZE: usize = 12;
    fn random(rng: &mut Rng) -> S12 {
        S12 {
            a: rng.i32(),
            b: rng.next_u32() as u8,
            _pad: random_bytes(rng),
            c: rng.f32_sym(),
        }
    }
    fn fields(&self) -> Vec<f64> {
        vec![f64::from(self.a), f64::from(self.b), f64::from(self.c)]
    }
    fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![0; Self::SIZE];
        put(&mut b, 0, &self.a.to_le_bytes());
        put(&mut b, 4, &[self.b]);
        put(&mut b, 5, &self._pad);
        put(&mut b, 8, &self.c.to_le_bytes());
        b
    }
}

impl StructArg for S16 {
    const KERNEL: &'static str = "args_struct<S16>";
    const SIZE: usize = 16;
    fn random(rng: &mut Rng) -> S16 {
        S16 {
            a: rng.f64_sym() * 1e300,
            b: rng.i32(),
            _pad: random_bytes(rng),
        }
    }
    fn fields(&self) -> Vec<f64> {
        vec![self.a, f64::from(self.b)]
    }
    fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![0; Self::SIZE];
        put(&mut b, 0, &self.a.to_le_bytes());
        put(&mut b, 8, &self.b.to_le_bytes());
        put(&mut b, 12, &self._pad);
        b
    }
}

impl StructArg for S24 {
    const KERNEL: &'static str = "args_struct<S24>";
    const SIZE: usize = 24;
    fn random(rng: &mut Rng) -> S24 {
        S24 {
            a: rng.next_u32() as i8,
            _pad0: random_bytes(rng),
            b: rng.f64_sym(),
            c: rng.next_u32() as i16,
            _pad1: random_bytes(rng),
        }
    }
    fn fields(&self) -> Vec<f64> {
        vec![f64::from(self.a), self.b, f64::from(self.c)]
    }
    fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![0; Self::SIZE];
        put(&mut b, 0, &self.a.to_le_bytes());
        put(&mut b, 1, &self._pad0);
        put(&mut b, 8, &self.b.to_le_bytes());
        put(&mut b, 16, &self.c.to_le_bytes());
        put(&mut b, 18, &self._pad1);
        b
    }
}

impl StructArg for S32 {
    const KERNEL: &'static str = "args_struct<S32>";
    const SIZE: usize = 32;
    fn random(rng: &mut Rng) -> S32 {
        S32 {
            a: rng.i32(),
            _pad0: random_bytes(rng),
            b: rng.f64_sym(),
            c: rng.f32_sym(),
            _pad1: random_bytes(rng),
            d: exact_i64(rng),
        }
    }
    fn fields(&self) -> Vec<f64> {
        vec![f64::from(self.a), self.b, f64::from(self.c), self.d as f64]
    }
    fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![0; Self::SIZE];
        put(&mut b, 0, &self.a.to_le_bytes());
        put(&mut b, 4, &self._pad0);
        put(&mut b, 8, &self.b.to_le_bytes());
        put(&mut b, 16, &self.c.to_le_bytes());
        put(&mut b, 20, &self._pad1);
        put(&mut b, 24, &self.d.to_le_bytes());
        b
    }
}

impl StructArg for S64 {
    const KERNEL: &'static str = "args_struct<S64>";
    const SIZE: usize = 64;
    fn random(rng: &mut Rng) -> S64 {
        let mut v = [0.0; 7];
        for x in &mut v {
            *x = rng.f64_sym();
        }
        S64 {
            v,
            tag: rng.next_u32() as u8,
            _pad: random_bytes(rng),
        }
    }
    fn fields(&self) -> Vec<f64> {
        let mut f = self.v.to_vec();
        f.push(f64::from(self.tag));
        f
    }
    fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![0; Self::SIZE];
        for (i, x) in self.v.iter().enumerate() {
            put(&mut b, 8 * i, &x.to_le_bytes());
        }
        put(&mut b, 56, &[self.tag]);
        put(&mut b, 57, &self._pad);
        b
    }
}

impl StructArg for V16 {
    const KERNEL: &'static str = "args_struct<V16>";
    const SIZE: usize = 16;
    fn random(rng: &mut Rng) -> V16 {
        V16 {
            x: rng.f32_sym(),
            y: rng.f32_sym(),
            z: rng.f32_sym(),
            w: rng.f32_sym(),
        }
    }
    fn fields(&self) -> Vec<f64> {
        [self.x, self.y, self.z, self.w]
            .iter()
            .map(|&v| f64::from(v))
            .collect()
    }
    fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![0; Self::SIZE];
        for (i, x) in [self.x, self.y, self.z, self.w].iter().enumerate() {
            put(&mut b, 4 * i, &x.to_le_bytes());
        }
        b
    }
}

impl StructArg for F8 {
    const KERNEL: &'static str = "args_struct<F8>";
    const SIZE: usize = 32;
    fn random(rng: &mut Rng) -> F8 {
        let mut v = [0.0; 8];
        for x in &mut v {
            *x = rng.f32_sym();
        }
        F8 { v }
    }
    fn fields(&self) -> Vec<f64> {
        self.v.iter().map(|&v| f64::from(v)).collect()
    }
    fn to_bytes(&self) -> Vec<u8> {
        let mut b = vec![0; Self::SIZE];
        for (i, x) in self.v.iter().enumerate() {
            put(&mut b, 4 * i, &x.to_le_bytes());
        }
        b
    }
}

/// What `struct_layout` writes (35 u64): sizes, alignments and offsets in
/// the order `kernels/README.md` gives, as documented for the C side.
pub const STRUCT_LAYOUT: [u64; 35] = [
    4, 2, 0, 2, // S4: size, align, a, b
    8, 4, 0, 4, // S8
    12, 4, 0, 4, 8, // S12: size, align, a, b, c
    16, 8, 0, 8, // S16
    24, 8, 0, 8, 16, // S24
    32, 8, 0, 8, 16, 24, // S32: size, align, a, b, c, d
    64, 8, 0, 56, // S64: size, align, v, tag
    16, 16, // V16: size, align
    32, // F8: size
];

/// [`STRUCT_LAYOUT`] as the Rust mirrors have it (`size_of`, `align_of`,
/// `offset_of!`): equal to it, or the mirrors are wrong.
pub fn rust_struct_layout() -> [u64; 35] {
    use std::mem::{align_of, offset_of, size_of};
    let v = [
        size_of::<S4>(),
        align_of::<S4>(),
        offset_of!(S4, a),
        offset_of!(S4, b),
        size_of::<S8>(),
        align_of::<S8>(),
        offset_of!(S8, a),
        offset_of!(S8, b),
        size_of::<S12>(),
        align_of::<S12>(),
        offset_of!(S12, a),
        offset_of!(S12, b),
        offset_of!(S12, c),
        size_of::<S16>(),
        align_of::<S16>(),
        offset_of!(S16, a),
        offset_of!(S16, b),
        size_of::<S24>(),
        align_of::<S24>(),
        offset_of!(S24, a),
        offset_of!(S24, b),
        offset_of!(S24, c),
        size_of::<S32>(),
        align_of::<S32>(),
        offset_of!(S32, a),
        offset_of!(S32, b),
        offset_of!(S32, c),
        offset_of!(S32, d),
        size_of::<S64>(),
        align_of::<S64>(),
        offset_of!(S64, v),
        offset_of!(S64, tag),
        size_of::<V16>(),
        align_of::<V16>(),
        size_of::<F8>(),
    ];
    v.map(|x| x as u64)
}

/// How many f64 `args_structs_all` writes: 2+2+3+2+3+4+8+4.
pub const STRUCTS_ALL_FIELDS: usize = 28;

/// How many f64 (and u64 bit patterns) `args_scalars` writes.
pub const SCALARS_COUNT: usize = 10;

/// How many parameters `args_many` takes (its output pointer included), and
/// how many f64 it writes (`MANY_PARAMS - 1`).
pub const MANY_PARAMS: usize = 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_mirrors_match_the_c_layout() {
        assert_eq!(rust_struct_layout(), STRUCT_LAYOUT);
    }

    /// The bytes of `value` as they sit in memory.
    fn memory_bytes<S: StructArg>(value: &S) -> Vec<u8> {
        let len = std::mem::size_of::<S>();
        // SAFETY: `value` is a live reference to `len` bytes, and every one
        // of them is initialized: the mirrors have no implicit padding
        // (`no_implicit_padding` checks that their fields fill the size,
        // and the field offsets are checked against the C layout).
        let bytes = unsafe { std::slice::from_raw_parts((value as *const S).cast::<u8>(), len) };
        bytes.to_vec()
    }

    fn bytes_match_memory<S: StructArg>(rng: &mut Rng) {
        assert_eq!(std::mem::size_of::<S>(), S::SIZE, "{}", S::KERNEL);
        for _ in 0..20 {
            let value = S::random(rng);
            assert_eq!(value.to_bytes(), memory_bytes(&value), "{}", S::KERNEL);
            assert!(value.fields().iter().all(|f| f.is_finite()));
        }
    }

    #[test]
    fn no_implicit_padding() {
        use std::mem::{size_of, size_of_val};
        macro_rules! fields_fill {
            ($t:ty: $($f:ident),*) => {{
                let v = <$t>::default();
                assert_eq!(0 $(+ size_of_val(&v.$f))*, size_of::<$t>(), stringify!($t));
            }};
        }
        fields_fill!(S4: a, _pad, b);
        fields_fill!(S8: a, b, _pad);
        fields_fill!(S12: a, b, _pad, c);
        fields_fill!(S16: a, b, _pad);
        fields_fill!(S24: a, _pad0, b, c, _pad1);
        fields_fill!(S32: a, _pad0, b, c, _pad1, d);
        fields_fill!(S64: v, tag, _pad);
        fields_fill!(V16: x, y, z, w);
        fields_fill!(F8: v);
    }

    #[test]
    fn struct_bytes_follow_the_documented_offsets() {
        let mut rng = Rng::new();
        bytes_match_memory::<S4>(&mut rng);
        bytes_match_memory::<S8>(&mut rng);
        bytes_match_memory::<S12>(&mut rng);
        bytes_match_memory::<S16>(&mut rng);
        bytes_match_memory::<S24>(&mut rng);
        bytes_match_memory::<S32>(&mut rng);
        bytes_match_memory::<S64>(&mut rng);
        bytes_match_memory::<V16>(&mut rng);
        bytes_match_memory::<F8>(&mut rng);
        let s = S24 {
            a: -3,
            _pad0: [0xaa; 7],
            b: 6.5,
            c: -7,
            _pad1: [0xbb; 6],
        };
        let mut want = vec![0xaa; 24];
        want[0] = 0xfd;
        want[8..16].copy_from_slice(&6.5f64.to_le_bytes());
        want[16..18].copy_from_slice(&(-7i16).to_le_bytes());
        want[18..].fill(0xbb);
        assert_eq!(s.to_bytes(), want);
        assert_eq!(s.fields(), [-3.0, 6.5, -7.0]);
    }

    #[test]
    fn struct_fields_add_up_to_structs_all() {
        let mut rng = Rng::new();
        let n = S4::random(&mut rng).fields().len()
            + S8::random(&mut rng).fields().len()
            + S12::random(&mut rng).fields().len()
            + S16::random(&mut rng).fields().len()
            + S24::random(&mut rng).fields().len()
            + S32::random(&mut rng).fields().len()
            + S64::random(&mut rng).fields().len()
            + V16::random(&mut rng).fields().len();
        assert_eq!(n, STRUCTS_ALL_FIELDS);
        assert_eq!(F8::random(&mut rng).fields().len(), 8);
    }

    #[test]
    fn grids_cover_every_element_and_stay_launchable() {
        for k in MATMUL_KERNELS {
            for &[m, n, _] in SHAPES {
                let g = k.grid(m, n, 1);
                assert!(g[0] as usize * k.tile[1] as usize >= n, "{}", k.name);
                assert!(g[1] as usize * k.tile[0] as usize >= m, "{}", k.name);
                // No block is wholly outside C (except for an empty C).
                assert!((g[0] as usize - 1) * (k.tile[1] as usize) < n.max(1));
                assert!((g[1] as usize - 1) * (k.tile[0] as usize) < m.max(1));
                assert_eq!(g[2], 1);
            }
            assert_eq!(k.grid(0, 0, 0), [1, 1, 1]);
            assert!(k.threads() <= 1024, "{}", k.name);
        }
        assert_eq!(
            matmul_kernel("matmul_batched<float>").grid(20, 40, 7),
            [3, 2, 7]
        );
        assert_eq!(transpose_grid(33, 65), [3, 2, 1]);
        assert_eq!(transpose_grid(0, 0), [1, 1, 1]);
    }

    #[test]
    fn descriptors_agree_with_their_names() {
        for k in MATMUL_KERNELS {
            let source = SOURCES
                .iter()
                .find(|s| s.file == k.file)
                .expect("the kernel's file is a source");
            assert!(
                source.kernels.contains(&k.name),
                "{} not in {}",
                k.name,
                k.file
            );
            assert_eq!(source.text, k.source);
            let double = k.name.contains("double") || k.name.ends_with("f64");
            assert_eq!(k.input == Elem::F64, double, "{}", k.name);
            if let Some(rest) = k.name.strip_prefix("gemm<") {
                // <T, TA, TB>
                let p: Vec<&str> = rest.trim_end_matches('>').split(", ").collect();
                assert_eq!(k.op_a.is_transposed(), p[1] == "true", "{}", k.name);
                assert_eq!(k.op_b.is_transposed(), p[2] == "true", "{}", k.name);
            }
            if let Some(rest) = k.name.strip_prefix("gemm_regblock<") {
                // <T, BM, BN, BK, TM, TN>
                let p: Vec<u32> = rest
                    .trim_end_matches('>')
                    .split(", ")
                    .skip(1)
                    .map(|x| x.parse().unwrap())
                    .collect();
                assert_eq!(k.tile, [p[0], p[1]], "{}", k.name);
                assert_eq!(k.threads(), (p[0] / p[3]) * (p[1] / p[4]), "{}", k.name);
            }
            if let Some(rest) = k.name.strip_prefix("matmul_tiled<") {
                let tile: u32 = rest
                    .trim_end_matches('>')
                    .split(", ")
                    .nth(1)
                    .unwrap()
                    .parse()
                    .unwrap();
                assert_eq!(k.block, [tile, tile, 1]);
                assert_eq!(k.tile, [tile, tile]);
            }
        }
        let names: Vec<&str> = MATMUL_KERNELS.iter().map(|k| k.name).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
    }
}
