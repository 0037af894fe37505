//! The kernel sources of `kernels/`, embedded, and descriptors of what they
//! hold (names, name expressions, element types, block shapes, tiles), so
//! that tests loop over kernels instead of spelling each one out.
//!
//! `kernels/README.md` documents every kernel's parameters and geometry;
//! the descriptors here mirror it, and `tests/tests/kernels_compile.rs`
//! checks that every name listed here compiles and lowers.

use cudakit::compile::program::{Arch, Program};
use cudakit::memory::tensor_map::{L2Promotion, Swizzle, TensorDataType, TensorMap, TiledLayout};
use cudakit::{DeviceBuffer, DeviceCopy};

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
/// `kernels/gemm_sm90.cu`: bf16, f16, tf32 and FP8 (e4m3 × e4m3, e5m2 ×
/// e4m3, with per-tensor scales) GEMM on wgmma, fed by TMA (sm_90a only).
pub const GEMM_SM90: &str = include_str!("../../../kernels/gemm_sm90.cu");
/// `kernels/fp8_convert.cu`: f32 ↔ e4m3/e5m2 conversions on the device
/// (PTX `cvt`, sm_89 and later).
pub const FP8_CONVERT: &str = include_str!("../../../kernels/fp8_convert.cu");
/// `kernels/sgemm.cu`: f32 SGEMM on the CUDA cores (no tf32).
pub const SGEMM: &str = include_str!("../../../kernels/sgemm.cu");
/// `kernels/dgemm.cu`: f64 DGEMM on the FP64 tensor cores (DMMA, sm_90).
pub const DGEMM: &str = include_str!("../../../kernels/dgemm.cu");

/// The options every kernel file is meant to compile with (CUBIN for the
/// H200). Add `--ptxas-options=--warn-on-spills` to make a register spill
/// show in the log.
pub const OPTIONS: &[&str] = &["-arch=sm_90"];
/// `kernels/pdl.cu`: programmatic dependent launch and the L2-window
/// re-read kernel.
pub const PDL: &str = include_str!("../../../kernels/pdl.cu");
/// `kernels/conditional.cu`: kernels that set the condition of a
/// conditional graph node (`cudaGraphSetConditional`; relocatable, linked
/// with the device runtime), a Jacobi sweep and its while-loop test.
pub const CONDITIONAL: &str = include_str!("../../../kernels/conditional.cu");
/// `kernels/device_graph.cu`: a kernel that launches an executable graph
/// from the device (`cudaGraphLaunch`; relocatable, linked with the device
/// runtime).
pub const DEVICE_GRAPH: &str = include_str!("../../../kernels/device_graph.cu");
/// `kernels/smid.cu`: the SM each block runs on (`%smid`) and timed spins
/// (`%globaltimer`), for green contexts.
pub const SMID: &str = include_str!("../../../kernels/smid.cu");

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
    /// The architecture the file must be compiled for, when it uses
    /// architecture-specific features (`sm_90a` for wgmma); `None`: any
    /// architecture of [`OPTIONS`] or the device's own.
    pub arch: Option<Arch>,
    /// Whether the file is relocatable device code (`-rdc=true`), to be
    /// linked with the device runtime before it is loaded
    /// (`Linker::with_device_runtime`): it calls device-runtime functions
    /// such as `cudaGraphSetConditional`.
    pub relocatable: bool,
}

impl Source {
    /// The NVRTC options the file compiles with: `-arch=` its own
    /// architecture when it has one, else [`OPTIONS`].
    pub fn options(&self) -> Vec<String> {
        let mut o: Vec<String> = match self.arch {
            Some(arch) => vec![format!("-arch={}", arch.sm_name())],
            None => OPTIONS.iter().map(|o| (*o).to_owned()).collect(),
        };
        if self.relocatable {
            o.push("-rdc=true".to_owned());
        }
        o
    }

    /// A program of the file with every template instantiation registered
    /// as a name expression (`extern "C"` names need none), for its
    /// architecture when it has one (else [`Program::compile_for`] picks
    /// the device's).
    pub fn program(&self) -> Program {
        let mut p = Program::new(self.file, self.text);
        for name in self.kernels.iter().filter(|n| Source::is_template(n)) {
            p = p.name_expression(*name);
        }
        if let Some(arch) = self.arch {
            p = p.arch(arch);
        }
        if self.relocatable {
            p = p.relocatable_device_code(true);
        }
        p
    }

    /// The source named `file`.
    ///
    /// # Panics
    ///
    /// When there is none.
    pub fn named(file: &str) -> &'static Source {
        SOURCES
            .iter()
            .find(|s| s.file == file)
            .unwrap_or_else(|| panic!("no kernel source {file}"))
    }

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
        arch: None,
        relocatable: false,
    },
    Source {
        file: "matmul_mma.cu",
        text: MATMUL_MMA,
        kernels: &["matmul_f16_mma", "matmul_bf16_mma", "matmul_tf32_mma"],
        arch: None,
        relocatable: false,
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
        arch: None,
        relocatable: false,
    },
    Source {
        file: "transpose.cu",
        text: TRANSPOSE,
        kernels: &[
            "transpose<float>",
            "transpose<double>",
            "transpose<unsigned short>",
        ],
        arch: None,
        relocatable: false,
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
        arch: None,
        relocatable: false,
    },
    Source {
        file: "pdl.cu",
        text: PDL,
        kernels: &["pdl_step", "l2_reread"],
        arch: None,
        relocatable: false,
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
        arch: None,
        relocatable: false,
    },
    Source {
        file: "gemm_sm90.cu",
        text: GEMM_SM90,
        kernels: &[
            "gemm_sm90_bf16_nn",
            "gemm_sm90_f16_nn",
            "gemm_sm90_bf16_nt",
            "gemm_sm90_f16_nt",
            "gemm_sm90_tf32_nt",
            "gemm_sm90_tf32_nn",
            "gemm_sm90_e4m3_nt",
            "gemm_sm90_e5m2_e4m3_nt",
        ],
        arch: Some(Arch::SmA(90)),
        relocatable: false,
    },
    Source {
        file: "fp8_convert.cu",
        text: FP8_CONVERT,
        kernels: &["f32_to_e4m3", "f32_to_e5m2", "e4m3_to_f32", "e5m2_to_f32"],
        arch: None,
        relocatable: false,
    },
    Source {
        file: "sgemm.cu",
        text: SGEMM,
        kernels: &[
            "sgemm_128x256",
            "sgemm_128x128",
            "sgemm_tiled<2, 4, 4, 4, 1, 8>",
            "sgemm_tiled<2, 4, 2, 8, 1, 8>",
            "sgemm_tiled<2, 2, 4, 4, 2, 0>",
            "sgemm_tiled<2, 4, 4, 4, 1, 8, true>",
            "sgemm_tiled<2, 4, 4, 4, 1, 8, true, false>",
            "sgemm_pad",
            "sgemm_pad_t",
        ],
        arch: None,
        relocatable: false,
    },
    Source {
        file: "dgemm.cu",
        text: DGEMM,
        kernels: &[
            "dgemm_dmma_128x128",
            "dgemm_dmma<32, 3, 16, 4, 0>",
            "dgemm_dmma<32, 3, 8, 2, 0>",
            "dgemm_dmma<16, 4, 8, 2, 0>",
            "dgemm_pipe<16, 4, 8, 0, true>",
            "dgemm_pipe<16, 4, 8, 0, true, false>",
            "dgemm_pipe<32, 3, 8, 0, true>",
            "dgemm_pipe<16, 4, 16, 0, false>",
        ],
        arch: None,
        relocatable: false,
    },
    Source {
        file: "conditional.cu",
        text: CONDITIONAL,
        kernels: &[
            "cond_set",
            "jacobi_sweep",
            "jacobi_decide",
            "cond_axpb",
            "cond_count",
        ],
        arch: None,
        relocatable: true,
    },
    Source {
        file: "device_graph.cu",
        text: DEVICE_GRAPH,
        kernels: &["dgl_step"],
        arch: None,
        relocatable: true,
    },
    Source {
        file: "smid.cu",
        text: SMID,
        kernels: &["smid_blocks", "smid_persistent", "spin_timed"],
        arch: None,
        relocatable: false,
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
    /// OCP FP8 E4M3 as `unsigned char` bits ([`cudakit::F8E4M3`]).
    E4m3,
    /// OCP FP8 E5M2 as `unsigned char` bits ([`cudakit::F8E5M2`]).
    E5m2,
}

impl Elem {
    /// Its name in messages (`Real::NAME` of its Rust type).
    pub fn name(self) -> &'static str {
        match self {
            Elem::F32 => "f32",
            Elem::F64 => "f64",
            Elem::F16 => "f16",
            Elem::Bf16 => "bf16",
            Elem::E4m3 => "e4m3",
            Elem::E5m2 => "e5m2",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Elem::F32 => 4,
            Elem::F64 => 8,
            Elem::F16 | Elem::Bf16 => 2,
            Elem::E4m3 | Elem::E5m2 => 1,
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
    /// `(TensorMap tmA, TensorMap tmB, float* C, int M, int N, int K,
    /// float alpha, float beta)`: C = alpha·A·op(B) + beta·C with A and B
    /// read through TMA tensor maps ([`tma_layouts`], [`tensor_maps`]), C
    /// f32 and not read when beta = 0.
    Tma,
    /// `(TensorMap tmA, TensorMap tmB, TensorMap tmC, float* C, int M,
    /// int N, int K, float alpha, float beta)`: as [`Signature::Tma`], and
    /// C also stored through TMA with `tmC` ([`c_layout`]) when beta = 0 and
    /// N % 4 = 0 (the kernel never reads `tmC` otherwise: any valid map
    /// then).
    TmaStore,
    /// `(TensorMap tmA, TensorMap tmB, TensorMap tmC, float* C, int M,
    /// int N, int K, float alpha, float beta, const float* scale_a, const
    /// float* scale_b)`: C = alpha·scale_a·scale_b·A·Bᵀ + beta·C with FP8 A
    /// and B read through TMA tensor maps (B stored N×K), C stored as for
    /// [`Signature::TmaStore`], the scales device pointers to one f32 each
    /// (null: 1); run through [`crate::fp8::Fp8Gemm`], not
    /// [`crate::gemm::Product`].
    TmaScaled,
}

/// How a kernel's blocks cover C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Raster {
    /// Grid (⌈N/tile cols⌉, ⌈M/tile rows⌉, batch).
    Tiles,
    /// Grid (⌈M/tile rows⌉·⌈N/tile cols⌉, 1, 1): one block per tile, the
    /// kernel maps its index to a tile itself.
    Linear,
    /// Persistent clusters of [`MatmulKernel::cluster`] blocks (compiled
    /// into the kernel): a unit is `cluster` tile-rows by one tile-column,
    /// and the clusters walk the units themselves, so any grid
    /// (`cluster`·g, 1, 1) with g ≥ 1 covers C. [`MatmulKernel::grid`] is
    /// one cluster per unit (the most that is useful);
    /// [`crate::gemm::Product`] launches at most one block per SM.
    Clusters,
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
    /// Dynamic shared memory per block, in bytes: launch with it, after
    /// raising the function's `MAX_DYNAMIC_SHARED_SIZE_BYTES` to it when
    /// it is above 48 KiB.
    pub shared_bytes: u32,
    /// How the grid covers C.
    pub raster: Raster,
    /// Blocks per cluster, compiled into the kernel (`__cluster_dims__`);
    /// 1 for a kernel without clusters. The grid's x is a multiple of it.
    pub cluster: u32,
    /// The architecture it must be compiled for (its file's, see
    /// [`Source::arch`]).
    pub arch: Option<Arch>,
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
        if self.raster == Raster::Clusters {
            let c = self.cluster.max(1);
            let unit_rows = blocks(m, self.tile[0]).div_ceil(c);
            let units = u64::from(unit_rows) * u64::from(blocks(n, self.tile[1]));
            return [
                u32::try_from(units * u64::from(c)).expect("grid dimension fits in u32"),
                1,
                u32::try_from(batch.max(1)).expect("batch fits in u32"),
            ];
        }
        if self.raster == Raster::Linear {
            let tiles = u64::from(blocks(m, self.tile[0])) * u64::from(blocks(n, self.tile[1]));
            return [
                u32::try_from(tiles).expect("grid dimension fits in u32"),
                1,
                u32::try_from(batch.max(1)).expect("batch fits in u32"),
            ];
        }
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

    /// Its file's descriptor.
    pub fn source_file(&self) -> &'static Source {
        Source::named(self.file)
    }

    /// A program of just this kernel, for its architecture when it has
    /// one: a template by its name expression (the file's other templates
    /// are never instantiated), an `extern "C"` kernel by defining
    /// `CUDAKIT_ONLY` and `CUDAKIT_ONLY_<name>`, which the files whose
    /// kernels are slow to compile (gemm_sm90.cu, sgemm.cu) test around
    /// each kernel, so that the others are not compiled.
    pub fn program(&self) -> Program {
        let p = Program::new(self.file, self.source).name_expression(self.name);
        let p = if Source::is_template(self.name) {
            p
        } else {
            p.define_flag("CUDAKIT_ONLY")
                .define_flag(format!("CUDAKIT_ONLY_{}", self.name))
        };
        match self.arch {
            Some(arch) => p.arch(arch),
            None => p,
        }
    }

    /// Whether it runs on a device of compute capability `cc`: an
    /// `sm_XYa` kernel only on exactly X.Y; the DMMA DGEMMs need sm_90
    /// (`mma.sync` m16n8k8/k16 `.f64`); the f16/bf16/tf32 `mma.sync` kernels and
    /// the cp.async SGEMMs sm_80; the plain CUDA-core kernels any device.
    pub fn runs_on(&self, cc: (u32, u32)) -> bool {
        match (self.arch, self.file) {
            (Some(arch), _) => arch.compute_capability() == cc,
            (None, "dgemm.cu") => cc >= (9, 0),
            (None, "matmul_mma.cu" | "sgemm.cu") => cc >= (8, 0),
            (None, _) => true,
        }
    }

    /// Whether A and B reach the kernel through TMA tensor maps.
    pub fn uses_tma(&self) -> bool {
        matches!(
            self.signature,
            Signature::Tma | Signature::TmaStore | Signature::TmaScaled
        )
    }

    /// The row pitch, in elements, that a stored operand with `cols`
    /// elements per row gets: `cols` for pointer kernels (packed), and for
    /// TMA kernels `cols` rounded up to a multiple of 16 bytes (what
    /// `cuTensorMapEncodeTiled` requires of every row pitch), at least one
    /// such multiple (a K = 0 operand still needs a valid map).
    pub fn row_pitch(&self, cols: usize) -> usize {
        if !self.uses_tma() {
            return cols;
        }
        let quantum = 16 / self.input.size();
        cols.max(1).div_ceil(quantum) * quantum
    }
}

/// The TMA layouts of `kernel`'s A and B maps for an M×N×K product whose
/// stored A has rows `lda` elements apart and stored B rows `ldb` apart
/// (`kernels/README.md`, gemm_sm90.cu): 128-byte swizzle, 256-byte L2
/// promotion, zero fill out of bounds; A `{K, M}` in boxes of 128 bytes ×
/// the tile's rows (128; 256 for `gemm_sm90_tf32_nn`); B `{N, K}` in boxes
/// of 128 bytes × as many rows (64×64 for 16-bit inputs, 32×32 for tf32)
/// for the NN kernels and `{K, N}` in boxes of 128 bytes × the tile's
/// columns shared among a cluster's blocks (256 / 2 = 128 rows) for the NT
/// and FP8 ones. K = 0 is encoded as 1 (the kernel then reads nothing, but
/// the map must be valid).
///
/// # Panics
///
/// When `kernel` takes no tensor maps ([`MatmulKernel::uses_tma`]).
pub fn tma_layouts(
    kernel: &MatmulKernel,
    [m, n, k]: [usize; 3],
    lda: usize,
    ldb: usize,
) -> (TiledLayout, TiledLayout) {
    assert!(kernel.uses_tma(), "{} takes no tensor maps", kernel.name);
    let data_type = match kernel.input {
        Elem::Bf16 => TensorDataType::Bf16,
        Elem::F16 => TensorDataType::F16,
        Elem::F32 => TensorDataType::F32,
        Elem::E4m3 | Elem::E5m2 => TensorDataType::U8,
        Elem::F64 => panic!("{}: no f64 TMA kernel", kernel.name),
    };
    let wide = (128 / kernel.input.size()) as u32;
    let k = k.max(1) as u64;
    let tuned = |l: TiledLayout| l.swizzle(Swizzle::B128).l2_promotion(L2Promotion::B256);
    // Boxes of the tile's rows of A (and of its columns of B stored N×K);
    // B stored K×N in square boxes of one 128-byte swizzle row by as many
    // k: 64×64 for 16-bit inputs, 32×32 for f32.
    let [rows, cols] = kernel.tile;
    let a = tuned(TiledLayout::matrix(
        data_type, m as u64, k, lda as u64, rows, wide,
    ));
    let b = match kernel.op_b {
        Op::N => TiledLayout::matrix(data_type, k, n as u64, ldb as u64, wide, wide),
        // Each block of a cluster loads (and multicasts) its share of the
        // tile's columns.
        Op::T => TiledLayout::matrix(
            data_type,
            n as u64,
            k,
            ldb as u64,
            cols / kernel.cluster.max(1),
            wide,
        ),
    };
    (a, tuned(b))
}

/// The TMA layout of a [`Signature::TmaStore`] kernel's C map for an M×N
/// f32 C with rows N apart: `{N, M}`, boxes of 32 columns (128 bytes) × 64
/// rows, 128-byte swizzle, no L2 promotion. `None` when N % 4 ≠ 0 (rows
/// not 16 bytes apart: TMA cannot address them, and the kernel then stores
/// directly).
pub fn c_layout(m: usize, n: usize) -> Option<TiledLayout> {
    if n % 4 != 0 || m == 0 || n == 0 {
        return None;
    }
    Some(
        TiledLayout::matrix(TensorDataType::F32, m as u64, n as u64, n as u64, 64, 32)
            .swizzle(Swizzle::B128)
            .l2_promotion(L2Promotion::None),
    )
}

/// The tensor maps of [`tma_layouts`] over the stored A and B
/// (`cuTensorMapEncodeTiled`), borrowing them.
///
/// # Errors
///
/// [`cudakit::Error::TensorMap`] when a layout breaks a TMA rule (a row
/// pitch that is not a multiple of 16 bytes: use [`MatmulKernel::row_pitch`]
/// for the stored operands; a buffer too small for its map);
/// [`cudakit::Error::NotSupported`] before sm_90; driver errors.
///
/// # Panics
///
/// As [`tma_layouts`].
pub fn tensor_maps<'a, T: DeviceCopy>(
    kernel: &MatmulKernel,
    dims: [usize; 3],
    (a, lda): (&'a DeviceBuffer<'_, T>, usize),
    (b, ldb): (&'a DeviceBuffer<'_, T>, usize),
) -> cudakit::Result<(TensorMap<'a>, TensorMap<'a>)> {
    let (la, lb) = tma_layouts(kernel, dims, lda, ldb);
    Ok((TensorMap::tiled(a, la)?, TensorMap::tiled(b, lb)?))
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
        (Elem::E4m3, _) | (Elem::E5m2, _) => Accumulation::Fp8TensorCore,
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
        shared_bytes: 0,
        raster: Raster::Tiles,
        cluster: 1,
        arch: None,
    }
}

/// `kernels/gemm_sm90.cu`'s dynamic shared memory (`SM90_SMEM_BYTES`: 4
/// stages of 48 KiB, the epilogue's 4 pieces of 8 KiB and 1 KiB of
/// alignment slack).
pub const SM90_SMEM_BYTES: u32 = 4 * (128 * 128 + 256 * 128) + 4 * (64 * 32 * 4) + 1024;

/// `gemm_sm90_tf32_nn`'s dynamic shared memory (`SM90_NN_SMEM_BYTES`: 4
/// stages of 48 KiB plus 1 KiB of alignment slack).
pub const SM90_NN_SMEM_BYTES: u32 = 4 * (128 * 128 + 256 * 128) + 1024;

/// `kernels/dgemm.cu`'s `DG_SMEM_BYTES(BK, STAGES)`.
pub const fn dgemm_smem_bytes(bk: u32, stages: u32) -> u32 {
    stages * (128 * (bk + 4) + bk * 132) * 8
}

/// A gemm_sm90.cu kernel of `gemm_body`: 384 threads, a 128×256 tile,
/// persistent clusters of 2 along M, C stored through TMA.
const fn sm90(name: &'static str, input: Elem, op_b: Op) -> MatmulKernel {
    let k = kernel(
        "gemm_sm90.cu",
        GEMM_SM90,
        name,
        input,
        Elem::F32,
        Signature::TmaStore,
        (Op::N, op_b),
        [384, 1, 1],
        [128, 256],
    );
    MatmulKernel {
        accumulation: match input {
            Elem::F32 => Accumulation::Tf32,
            _ => Accumulation::TensorCoreF32,
        },
        shared_bytes: SM90_SMEM_BYTES,
        raster: Raster::Clusters,
        cluster: 2,
        arch: Some(Arch::SmA(90)),
        ..k
    }
}

/// An FP8 kernel of gemm_sm90.cu's `gemm_body`, as [`sm90`]'s: A of
/// `input` stored M×K, B e4m3 stored N×K, per-tensor scales, run through
/// [`crate::fp8::Fp8Gemm`].
const fn sm90_fp8(name: &'static str, input: Elem) -> MatmulKernel {
    MatmulKernel {
        signature: Signature::TmaScaled,
        accumulation: Accumulation::Fp8TensorCore,
        ..sm90(name, input, Op::T)
    }
}

/// An sgemm.cu kernel: 256 threads, NN, no dynamic shared memory.
const fn sgemm(name: &'static str, tile: [u32; 2]) -> MatmulKernel {
    kernel(
        "sgemm.cu",
        SGEMM,
        name,
        Elem::F32,
        Elem::F32,
        Signature::Gemm,
        (Op::N, Op::N),
        [256, 1, 1],
        tile,
    )
}

/// A dgemm.cu kernel: a 128×128 tile, NN, `threads` per block and
/// `DG_SMEM_BYTES(bk, stages)` of dynamic shared memory.
const fn dgemm(name: &'static str, threads: u32, bk: u32, stages: u32) -> MatmulKernel {
    let k = kernel(
        "dgemm.cu",
        DGEMM,
        name,
        Elem::F64,
        Elem::F64,
        Signature::Gemm,
        (Op::N, Op::N),
        [threads, 1, 1],
        [128, 128],
    );
    MatmulKernel {
        shared_bytes: dgemm_smem_bytes(bk, stages),
        ..k
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
    MatmulKernel {
        accumulation: Accumulation::Tf32,
        ..kernel(
            "matmul_mma.cu",
            MATMUL_MMA,
            "matmul_tf32_mma",
            Elem::F32,
            Elem::F32,
            Signature::Matmul,
            NN,
            [128, 1, 1],
            [64, 64],
        )
    },
    sm90("gemm_sm90_bf16_nn", Elem::Bf16, Op::N),
    sm90("gemm_sm90_f16_nn", Elem::F16, Op::N),
    sm90("gemm_sm90_bf16_nt", Elem::Bf16, Op::T),
    sm90("gemm_sm90_f16_nt", Elem::F16, Op::T),
    sm90("gemm_sm90_tf32_nt", Elem::F32, Op::T),
    MatmulKernel {
        tile: [256, 128],
        signature: Signature::Tma,
        shared_bytes: SM90_NN_SMEM_BYTES,
        raster: Raster::Linear,
        cluster: 1,
        ..sm90("gemm_sm90_tf32_nn", Elem::F32, Op::N)
    },
    sm90_fp8("gemm_sm90_e4m3_nt", Elem::E4m3),
    sm90_fp8("gemm_sm90_e5m2_e4m3_nt", Elem::E5m2),
    sgemm("sgemm_128x256", [128, 256]),
    sgemm("sgemm_128x128", [128, 128]),
    sgemm("sgemm_tiled<2, 4, 2, 8, 1, 8>", [128, 256]),
    sgemm("sgemm_tiled<2, 4, 4, 4, 1, 8>", [128, 256]),
    // The default before issue 23 (no middle path), for same-run comparisons.
    sgemm("sgemm_tiled<2, 4, 4, 4, 1, 8, true, false>", [128, 256]),
    dgemm("dgemm_dmma_128x128", 256, 32, 3),
    dgemm("dgemm_dmma<32, 3, 8, 2, 0>", 512, 32, 3),
    dgemm("dgemm_dmma<16, 4, 8, 2, 0>", 512, 16, 4),
    dgemm("dgemm_pipe<32, 3, 8, 0, true>", 256, 32, 3),
    dgemm("dgemm_pipe<16, 4, 16, 0, false>", 256, 32, 3),
    // The default before issue 23 (no middle path), for same-run comparisons.
    dgemm("dgemm_pipe<16, 4, 8, 0, true, false>", 256, 32, 3),
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

/// sgemm.cu's zero-padding copy, which the padded SGEMM path
/// ([`crate::gemm::Pad::Device`]) runs before and after the kernel:
/// `(const float* src, int src_rows, int src_cols, float* dst, int dst_rows,
/// int dst_cols)`, dst = src where both are in range, 0 elsewhere.
pub const SGEMM_PAD: &str = "sgemm_pad";

/// `sgemm_pad`'s block shape (exactly).
pub const SGEMM_PAD_BLOCK: [u32; 3] = [256, 1, 1];

/// The grid of `sgemm_pad` for a `rows`×`cols` destination:
/// (⌈cols/1024⌉, min(rows, 65535), 1), each at least 1 (the kernel loops
/// over the rows past the grid's).
///
/// # Panics
///
/// When ⌈cols/1024⌉ does not fit in `u32`.
pub fn sgemm_pad_grid(rows: usize, cols: usize) -> [u32; 3] {
    let x = u32::try_from(cols.div_ceil(1024).max(1)).expect("fits in u32");
    let y = rows.clamp(1, 65535) as u32;
    [x, y, 1]
}

/// sgemm.cu's transposing zero-padding copy, for the transposed padded
/// path: `sgemm_pad`'s parameters, dst = srcᵀ where both are in range
/// (`dst[r][c] = src[c][r]`), 0 elsewhere.
pub const SGEMM_PAD_T: &str = "sgemm_pad_t";

/// `sgemm_pad_t`'s block shape (exactly).
pub const SGEMM_PAD_T_BLOCK: [u32; 3] = [32, 8, 1];

/// The grid of `sgemm_pad_t` for a `rows`×`cols` destination:
/// (⌈cols/32⌉, min(⌈rows/32⌉, 65535), 1), each at least 1 (the kernel loops
/// over the tile-rows past the grid's).
///
/// # Panics
///
/// When ⌈cols/32⌉ does not fit in `u32`.
pub fn sgemm_pad_t_grid(rows: usize, cols: usize) -> [u32; 3] {
    let x = u32::try_from(cols.div_ceil(32).max(1)).expect("fits in u32");
    let y = rows.div_ceil(32).clamp(1, 65535) as u32;
    [x, y, 1]
}

/// A program of sgemm.cu's `sgemm_pad` and `sgemm_pad_t` alone
/// (`CUDAKIT_ONLY`, as [`MatmulKernel::program`] compiles one SGEMM): no
/// GEMM body is compiled.
pub fn sgemm_pad_program() -> Program {
    Program::new("sgemm.cu", SGEMM)
        .name_expression(SGEMM_PAD)
        .name_expression(SGEMM_PAD_T)
        .define_flag("CUDAKIT_ONLY")
        .define_flag(format!("CUDAKIT_ONLY_{SGEMM_PAD}"))
        .define_flag(format!("CUDAKIT_ONLY_{SGEMM_PAD_T}"))
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
            if k.raster == Raster::Clusters {
                assert_eq!((k.tile, k.cluster), ([128, 256], 2), "{}", k.name);
                for &[m, n, _] in SHAPES {
                    // One cluster per unit (2 tile-rows by 1 tile-column).
                    let units = m.div_ceil(128).max(1).div_ceil(2) * n.div_ceil(256).max(1);
                    assert_eq!(k.grid(m, n, 1), [2 * units as u32, 1, 1], "{}", k.name);
                }
                assert_eq!(k.grid(4096, 4096, 1), [32 * 16, 1, 1]);
                assert_eq!(k.grid(4097, 4096, 1), [34 * 16, 1, 1]);
                assert_eq!(k.grid(1, 1, 1), [2, 1, 1]);
                continue;
            }
            assert_eq!(k.cluster, 1, "{}", k.name);
            if k.raster == Raster::Linear {
                for &[m, n, _] in SHAPES {
                    let [tm, tn] = k.tile.map(|t| t as usize);
                    assert!([[128, 256], [256, 128]].contains(&[tm, tn]), "{}", k.name);
                    let tiles = m.div_ceil(tm).max(1) * n.div_ceil(tn).max(1);
                    assert_eq!(k.grid(m, n, 1), [tiles as u32, 1, 1], "{}", k.name);
                }
                assert_eq!(k.grid(4096, 4096, 1), [32 * 16, 1, 1]);
                continue;
            }
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
        assert_eq!(sgemm_pad_grid(4095, 4096), [4, 4095, 1]);
        assert_eq!(sgemm_pad_grid(4096, 4097), [5, 4096, 1]);
        assert_eq!(sgemm_pad_grid(100_000, 1), [1, 65535, 1]);
        assert_eq!(sgemm_pad_grid(0, 0), [1, 1, 1]);
        assert_eq!(sgemm_pad_t_grid(4224, 4096), [128, 132, 1]);
        assert_eq!(sgemm_pad_t_grid(4095, 4097), [129, 128, 1]);
        assert_eq!(sgemm_pad_t_grid(3_000_000, 1), [1, 65535, 1]);
        assert_eq!(sgemm_pad_t_grid(0, 0), [1, 1, 1]);
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
            assert_eq!(source.arch, k.arch, "{}", k.name);
            let double =
                k.name.contains("double") || k.name.ends_with("f64") || k.name.starts_with("dgemm");
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

    #[test]
    fn the_h200_kernels_carry_their_geometry() {
        let k = matmul_kernel("gemm_sm90_bf16_nn");
        assert_eq!(
            (k.shared_bytes, k.block, k.tile, k.cluster),
            (230_400, [384, 1, 1], [128, 256], 2)
        );
        assert_eq!(
            (k.signature, k.raster),
            (Signature::TmaStore, Raster::Clusters)
        );
        let nn = matmul_kernel("gemm_sm90_tf32_nn");
        assert_eq!(
            (nn.shared_bytes, nn.tile, nn.cluster, nn.signature),
            (197_632, [256, 128], 1, Signature::Tma)
        );
        assert_eq!(k.arch, Some(Arch::SmA(90)));
        assert!(k.runs_on((9, 0)) && !k.runs_on((10, 0)) && !k.runs_on((8, 9)));
        assert_eq!(Source::named("gemm_sm90.cu").options(), ["-arch=sm_90a"]);
        assert_eq!(Source::named("sgemm.cu").options(), OPTIONS);
        let d = matmul_kernel("dgemm_dmma_128x128");
        assert_eq!((d.shared_bytes, d.threads()), (211_968, 256));
        assert_eq!(
            matmul_kernel("dgemm_dmma<16, 4, 8, 2, 0>").shared_bytes,
            149_504
        );
        assert!(d.runs_on((9, 0)) && !d.runs_on((8, 0)));
        assert!(matmul_kernel("sgemm_128x256").runs_on((8, 0)));
        let tf32 = matmul_kernel("gemm_sm90_tf32_nt");
        assert_eq!(tf32.accumulation, Accumulation::Tf32);
        assert_eq!((tf32.input, tf32.op_b), (Elem::F32, Op::T));
        for k in MATMUL_KERNELS.iter().filter(|k| k.shared_bytes > 0) {
            assert!(
                k.shared_bytes <= 232_448,
                "{}: over the H200's opt-in limit",
                k.name
            );
        }
    }

    #[test]
    fn row_pitches_are_16_byte_multiples_for_tma_only() {
        let bf16 = matmul_kernel("gemm_sm90_bf16_nn");
        assert_eq!(bf16.row_pitch(4096), 4096);
        assert_eq!(bf16.row_pitch(67), 72);
        assert_eq!(bf16.row_pitch(0), 8);
        let tf32 = matmul_kernel("gemm_sm90_tf32_nt");
        assert_eq!(tf32.row_pitch(67), 68);
        assert_eq!(tf32.row_pitch(1), 4);
        assert_eq!(matmul_kernel("sgemm_128x256").row_pitch(67), 67);
    }

    #[test]
    fn tma_layouts_follow_the_readme() {
        let (a, b) = tma_layouts(
            matmul_kernel("gemm_sm90_bf16_nn"),
            [300, 520, 130],
            136,
            520,
        );
        assert_eq!(
            (a.dims.clone(), a.strides.clone(), a.box_dims.clone()),
            (vec![130, 300], vec![272], vec![64, 128])
        );
        assert_eq!(
            (b.dims.clone(), b.strides.clone(), b.box_dims.clone()),
            (vec![520, 130], vec![1040], vec![64, 64])
        );
        assert_eq!((a.swizzle, b.swizzle), (Swizzle::B128, Swizzle::B128));
        assert_eq!(a.l2_promotion, L2Promotion::B256);
        assert_eq!(a.data_type, TensorDataType::Bf16);
        let (a, b) = tma_layouts(matmul_kernel("gemm_sm90_tf32_nt"), [64, 96, 0], 4, 4);
        assert_eq!(
            (a.dims.clone(), a.box_dims.clone()),
            (vec![1, 64], vec![32, 128])
        );
        assert_eq!(
            (b.dims.clone(), b.strides.clone(), b.box_dims.clone()),
            (vec![1, 96], vec![16], vec![32, 128])
        );
        // C for the TMA-store kernels: {N, M}, 32 x 64 boxes, none for N % 4 != 0.
        let c = c_layout(300, 520).expect("N % 4 == 0");
        assert_eq!(
            (c.dims.clone(), c.strides.clone(), c.box_dims.clone()),
            (vec![520, 300], vec![2080], vec![32, 64])
        );
        assert_eq!(
            (c.swizzle, c.l2_promotion),
            (Swizzle::B128, L2Promotion::None)
        );
        assert_eq!(c.data_type, TensorDataType::F32);
        assert!(c_layout(300, 522).is_none() && c_layout(0, 8).is_none());
        assert_eq!(a.data_type, TensorDataType::F32);
        // The tf32 NN kernel: 256-row boxes of A, B K×N in 32×32 boxes.
        let (a, b) = tma_layouts(matmul_kernel("gemm_sm90_tf32_nn"), [300, 67, 130], 132, 68);
        assert_eq!(
            (a.dims.clone(), a.strides.clone(), a.box_dims.clone()),
            (vec![130, 300], vec![528], vec![32, 256])
        );
        assert_eq!(
            (b.dims.clone(), b.strides.clone(), b.box_dims.clone()),
            (vec![67, 130], vec![272], vec![32, 32])
        );
        assert_eq!((a.swizzle, b.swizzle), (Swizzle::B128, Swizzle::B128));
        assert_eq!(
            matmul_kernel("gemm_sm90_tf32_nn").grid(300, 67, 1),
            [2, 1, 1]
        );
    }
}
