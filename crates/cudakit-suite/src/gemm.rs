//! Running a matrix kernel of [`kernels`](crate::kernels) on any GEMM it can
//! serve: the host side of the kernels' operand rules, shared by the
//! hardware suite and `cudakit matmul`.
//!
//! A [`Product`] takes a GEMM as the caller stores it (A M×K or K×M, B K×N
//! or N×K, row-major, packed: [`Gemm`]) and gives the kernel what it needs:
//!
//! - **Storage order.** Every kernel reads A as stored M×K; B as K×N (the
//!   `_nn` kernels and the pointer kernels) or N×K (the `_nt` TMA kernels).
//!   An operand stored the other way is transposed on the host while it is
//!   staged for upload (the documented fallback for the transposes a kernel
//!   lacks), except for the one case `cudakit matmul` times: tf32 with B
//!   stored K×N, where B is transposed on the device by
//!   `transpose<float>` (kernels/transpose.cu) into an N×K scratch buffer
//!   before each product, as the lab measured it ([`Transpose::Device`]).
//! - **Row pitch.** TMA needs every row pitch to be a multiple of 16 bytes:
//!   an operand whose rows are not is staged with its rows padded to
//!   [`MatmulKernel::row_pitch`] (the padding holds the poison value, and
//!   stays unread: the maps' dimensions are the logical ones, and TMA fills
//!   every box past them with zeros). K = 0 gets one padded column.
//! - **Padding** ([`Pad::Device`], what `cudakit matmul` runs). sgemm.cu's
//!   kernels run their fast whole-tile body only where K % 16 == 0 and
//!   N % 4 == 0 (and the whole tile is in range); any other shape puts every
//!   block on a slower edge body. For such shapes the product copies A and B
//!   on the device into zero-padded scratch buffers (K to a multiple of 16,
//!   N to a multiple of 4, M to a multiple of the tile's rows:
//!   [`padded_shape`]), runs the kernel on the padded shape into a padded C
//!   (C copied in first when beta ≠ 0), and copies C back: `sgemm_pad`
//!   (kernels/sgemm.cu) before and after each launch of the kernel, timed
//!   with it. Where the padded M is a whole number of tiles wide and the
//!   padded N is not (4095×4097×…), it computes Cᵀ = Bᵀ·Aᵀ instead, on
//!   zero-padded transposes (`sgemm_pad_t`), so that every block is a whole
//!   tile ([`Padding::transposed`]). The zeros add nothing to any sum, and
//!   a·b = b·a, so C is the unpadded product's, bit for bit.
//! - **Launch.** Dynamic shared memory above 48 KiB is opted into
//!   (`MAX_DYNAMIC_SHARED_SIZE_BYTES`) when the product is made; the tensor
//!   maps are built by [`Product::maps`]; [`Product::launches`] holds the
//!   launches (the transpose or the pads, then the kernel, then the copy of
//!   C back) ready to queue in a scope.
//!
//! [`fastest`] names the kernel `cudakit matmul` picks for a precision on a
//! device.

use cudakit::memory::tensor_map::TensorMap;
use cudakit::{
    params, Context, DeviceBuffer, DeviceCopy, Error, Function, LaunchConfig, Module, ParamList,
    Result, Scope, Stream,
};

use crate::kernels::{
    c_layout, matmul_kernel, sgemm_pad_grid, sgemm_pad_program, sgemm_pad_t_grid, tensor_maps,
    transpose_grid, Elem, MatmulKernel, Raster, Signature, Source, SGEMM_PAD, SGEMM_PAD_BLOCK,
    SGEMM_PAD_T, SGEMM_PAD_T_BLOCK, TRANSPOSE_BLOCK,
};
use crate::reference::{Gemm, Op, Real};

/// What a product computes in: the element type of A and B, and for f32
/// inputs whether the tensor cores may read them as tf32.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Precision {
    /// f32 inputs and output, f32 FMAs (no tf32).
    F32,
    /// f64 everywhere.
    F64,
    /// IEEE binary16 inputs, f32 accumulation and output.
    F16,
    /// bfloat16 inputs, f32 accumulation and output.
    Bf16,
    /// f32 inputs read as tf32 by the tensor cores, f32 accumulation and
    /// output.
    Tf32,
    /// OCP FP8 e4m3 A and B (B stored N×K), per-tensor scales, tensor-core
    /// accumulation, f32 output.
    E4m3,
    /// e5m2 A times e4m3 B (B stored N×K): the mixed pair cuBLASLt
    /// multiplies (it has no e5m2 × e5m2).
    E5m2xE4m3,
}

impl Precision {
    /// Every precision, in the CLI's order.
    pub const ALL: [Precision; 7] = [
        Precision::F32,
        Precision::F64,
        Precision::F16,
        Precision::Bf16,
        Precision::Tf32,
        Precision::E4m3,
        Precision::E5m2xE4m3,
    ];

    /// The name `cudakit matmul --dtype` takes.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
            Precision::F16 => "f16",
            Precision::Bf16 => "bf16",
            Precision::Tf32 => "tf32",
            Precision::E4m3 => "e4m3",
            Precision::E5m2xE4m3 => "e5m2xe4m3",
        }
    }

    /// The element type of A (and of B, except for [`Precision::E5m2xE4m3`]:
    /// see [`Precision::input_b`]).
    pub fn input(self) -> Elem {
        match self {
            Precision::F32 | Precision::Tf32 => Elem::F32,
            Precision::F64 => Elem::F64,
            Precision::F16 => Elem::F16,
            Precision::Bf16 => Elem::Bf16,
            Precision::E4m3 => Elem::E4m3,
            Precision::E5m2xE4m3 => Elem::E5m2,
        }
    }

    /// The element type of B.
    pub fn input_b(self) -> Elem {
        match self {
            Precision::E5m2xE4m3 => Elem::E4m3,
            p => p.input(),
        }
    }

    /// Whether the inputs are FP8 (run through [`crate::fp8::Fp8Gemm`]).
    pub fn is_fp8(self) -> bool {
        matches!(self, Precision::E4m3 | Precision::E5m2xE4m3)
    }

    /// The element type of C.
    pub fn output(self) -> Elem {
        match self {
            Precision::F64 => Elem::F64,
            _ => Elem::F32,
        }
    }

    /// The precision `kernel` computes in.
    pub fn of(kernel: &MatmulKernel) -> Precision {
        match (kernel.input, kernel.accumulation) {
            (Elem::F32, crate::reference::Accumulation::Tf32) => Precision::Tf32,
            (Elem::F32, _) => Precision::F32,
            (Elem::F64, _) => Precision::F64,
            (Elem::F16, _) => Precision::F16,
            (Elem::Bf16, _) => Precision::Bf16,
            (Elem::E4m3, _) => Precision::E4m3,
            (Elem::E5m2, _) => Precision::E5m2xE4m3,
        }
    }
}

/// The fastest kernel measured for `precision` on a device of compute
/// capability `cc`, or `None` when no kernel serves it there (tf32 needs
/// the tensor cores of sm_80 or later). On sm_90 the H200 kernels (kernels/README.md: 0.98–1.0×
/// cuBLAS for bf16/f16/tf32, 0.89–0.92× for f32, 0.92–1.0× for f64); elsewhere
/// the register-blocked SGEMM/DGEMM and the `mma.sync` kernels (f16, bf16 and
/// tf32).
pub fn fastest(precision: Precision, cc: (u32, u32)) -> Option<&'static MatmulKernel> {
    let h200 = [
        (Precision::F32, "sgemm_128x256"),
        (Precision::F64, "dgemm_dmma_128x128"),
        (Precision::F16, "gemm_sm90_f16_nn"),
        (Precision::Bf16, "gemm_sm90_bf16_nn"),
        (Precision::Tf32, "gemm_sm90_tf32_nn"),
        (Precision::E4m3, "gemm_sm90_e4m3_nt"),
        (Precision::E5m2xE4m3, "gemm_sm90_e5m2_e4m3_nt"),
    ];
    let older = [
        (Precision::F32, "gemm_regblock<float, 128, 128, 8, 8, 8>"),
        (Precision::F64, "gemm_regblock<double, 64, 64, 8, 4, 4>"),
        (Precision::F16, "matmul_f16_mma"),
        (Precision::Bf16, "matmul_bf16_mma"),
        (Precision::Tf32, "matmul_tf32_mma"),
    ];
    let pick = |table: &[(Precision, &'static str)]| {
        table
            .iter()
            .find(|(p, _)| *p == precision)
            .map(|(_, name)| matmul_kernel(name))
            .filter(|k| k.runs_on(cc))
    };
    pick(&h200).or_else(|| pick(&older))
}

/// Where an operand stored the other way round is transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transpose {
    /// On the host, while it is staged for upload (not part of the
    /// product's time).
    Host,
    /// On the device, before each launch, where the kernels allow it
    /// (tf32 with B stored K×N and K a multiple of 4; other cases fall back
    /// to the host).
    Device,
}

/// Whether an SGEMM of sgemm.cu whose shape keeps its blocks off the
/// whole-tile body runs on zero-padded copies of its operands (see the
/// module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pad {
    /// The kernel on the operands as staged: its edge bodies serve any
    /// shape.
    Off,
    /// A, B (and C when beta ≠ 0) copied on the device into zero-padded
    /// buffers of [`padded_shape`] before each launch of the kernel, C
    /// copied back after it, all timed with the product; for other kernels
    /// and shapes, as [`Pad::Off`].
    Device,
}

/// How [`Pad::Device`] runs a product ([`padded_shape`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Padding {
    /// The (M, N, K) the kernel runs on.
    pub dims: [usize; 3],
    /// Whether it computes Cᵀ = Bᵀ·Aᵀ: its A is Bᵀ padded (N rows), its B
    /// Aᵀ padded (M columns), its C Cᵀ padded; else A, B and C padded.
    pub transposed: bool,
}

/// How [`Pad::Device`] runs `kernel` for `g`. The kernel's M is the
/// product's M rounded up to a multiple of the tile's rows, its N the
/// product's N rounded up to 4, its K the product's K rounded up to 16, so
/// that every block whose tile lies inside the padded matrix takes the
/// whole-tile body; transposed (Cᵀ = Bᵀ·Aᵀ: the kernel's M from N, its N
/// from M) when M rounded up to 4 is a multiple of the tile's columns and N
/// rounded up to 4 is not, since then every block is a whole tile (at
/// 4095×4097×4093: 33×16 whole tiles, against 32×16 and an edge column).
/// `None` (no padding) unless `kernel` is one of sgemm.cu's, M, N and K
/// are non-zero, K % 16 ≠ 0 or N % 4 ≠ 0 (the scratch buffers are
/// allocations, aligned as the whole-tile body needs), the kernel's N
/// holds a whole tile (else no block could take that body) and the padded
/// sizes fit the kernel's `int`s.
pub fn padded_shape(kernel: &MatmulKernel, g: &Gemm) -> Option<Padding> {
    if kernel.file != "sgemm.cu" || kernel.signature != Signature::Gemm {
        return None;
    }
    if g.m == 0 || g.n == 0 || g.k == 0 || (g.k % 16 == 0 && g.n % 4 == 0) {
        return None;
    }
    let [tile_m, tile_n] = kernel.tile.map(|t| t as usize);
    let (m4, n4) = (
        g.m.checked_next_multiple_of(4)?,
        g.n.checked_next_multiple_of(4)?,
    );
    let transposed = m4 % tile_n == 0 && n4 % tile_n != 0;
    let (rows, cols) = if transposed { (g.n, m4) } else { (g.m, n4) };
    let dims = [
        rows.checked_next_multiple_of(tile_m)?,
        cols,
        g.k.checked_next_multiple_of(16)?,
    ];
    let fits = dims.iter().all(|&d| i32::try_from(d).is_ok());
    (fits && dims[1] >= tile_n).then_some(Padding { dims, transposed })
}

/// `stored` (a `rows`×`cols` row-major packed matrix), transposed when
/// `transpose` is set, with rows `ld` elements apart (at least one row; the
/// padding and a K = 0 matrix's row hold `T::POISON`).
///
/// # Panics
///
/// When `stored` does not hold `rows`×`cols` elements, or `ld` is less
/// than the staged row length.
pub fn stage<T: Real>(
    stored: &[T],
    rows: usize,
    cols: usize,
    transpose: bool,
    ld: usize,
) -> Vec<T> {
    assert_eq!(stored.len(), rows * cols, "a {rows}x{cols} matrix");
    let (out_rows, out_cols) = if transpose {
        (cols, rows)
    } else {
        (rows, cols)
    };
    assert!(ld >= out_cols, "row pitch {ld} < {out_cols} columns");
    let mut out = vec![T::POISON; out_rows.max(1) * ld.max(1)];
    for r in 0..out_rows {
        for c in 0..out_cols {
            out[r * ld + c] = if transpose {
                stored[c * cols + r]
            } else {
                stored[r * cols + c]
            };
        }
    }
    out
}

/// `kernel`'s grid for an M×N C ([`MatmulKernel::grid`]); for
/// [`Raster::Clusters`], at most one block per SM of the `sms`, in whole
/// clusters (at least one cluster), and no more clusters than the waves
/// need: when the units do not fill the last wave, the grid shrinks until
/// they do, keeping the number of waves (at 4096³ on 132 SMs, 256 units
/// run in 4 waves on 64 clusters instead of 66; measured 0.3–1 % faster at
/// 4096 on the H200, kernels/README.md).
pub fn persistent_grid(kernel: &MatmulKernel, m: usize, n: usize, sms: u32) -> [u32; 3] {
    let mut grid = kernel.grid(m, n, 1);
    if kernel.raster == Raster::Clusters {
        let c = kernel.cluster.max(1);
        let (units, slots) = (grid[0] / c, (sms / c).max(1));
        if units > slots {
            // As many clusters as the last wave needs: the same number of
            // waves as with every slot busy, on fewer SMs.
            let waves = units.div_ceil(slots);
            grid[0] = units.div_ceil(waves) * c;
        }
    }
    grid
}

/// Refuses an M, N or K that does not fit the kernels' `int`s, and for the
/// TMA kernels, which round M, N and K up to whole tiles and stages in an
/// `int` (a wrapped count would skip work and leave a silent wrong C), one
/// above `i32::MAX - 256`.
pub(crate) fn dims_fit(kernel: &MatmulKernel, [m, n, k]: [usize; 3]) -> Result<()> {
    for (what, x) in [("M", m), ("N", n), ("K", k)] {
        int(x, what)?;
        if kernel.uses_tma() && x > i32::MAX as usize - 256 {
            return Err(Error::InvalidArgument(format!(
                "{what} = {x}: {} rounds it up to whole tiles or stages in an int (at most {})",
                kernel.name,
                i32::MAX - 256
            )));
        }
    }
    Ok(())
}

fn int(x: usize, what: &str) -> Result<i32> {
    i32::try_from(x)
        .map_err(|_| Error::InvalidArgument(format!("{what} = {x} does not fit an int")))
}

/// One GEMM on the device, staged for one kernel (see the module docs).
pub struct Product<'c, I: DeviceCopy, O: DeviceCopy> {
    kernel: &'static MatmulKernel,
    g: Gemm,
    a: DeviceBuffer<'c, I>,
    lda: usize,
    b: DeviceBuffer<'c, I>,
    ldb: usize,
    /// How B is stored in `b`.
    b_op: Op,
    /// B transposed on the device (N×K, rows K apart), when it is.
    bt: Option<DeviceBuffer<'c, I>>,
    c: DeviceBuffer<'c, O>,
    module: Module<'c>,
    transpose: Option<Module<'c>>,
    /// The zero-padded operands the kernel runs on ([`Pad::Device`]).
    padded: Option<Padded<'c, I, O>>,
    staged_on_host: Vec<&'static str>,
}

/// The tensor maps of a TMA product ([`Product::maps`]): A's and B's, and
/// C's for a [`Signature::TmaStore`] kernel whose C rows TMA can address
/// ([`c_layout`]); and of an FP8 product ([`crate::fp8::Fp8Gemm::maps`]).
/// [`Product::launches`] and [`crate::fp8::Fp8Gemm::launches`] take only
/// the maps of their own product: a kernel stores C through `c`, so maps of
/// other buffers would write them.
#[derive(Debug)]
pub struct Maps<'a> {
    a: TensorMap<'a>,
    b: TensorMap<'a>,
    c: Option<TensorMap<'a>>,
    /// The device addresses of the A, B and C they were made over.
    over: [u64; 3],
}

impl<'a> Maps<'a> {
    /// The maps of one product over the buffers at device addresses
    /// `over` (A, B, C), for [`Maps::are_over`].
    pub(crate) fn new(
        a: TensorMap<'a>,
        b: TensorMap<'a>,
        c: Option<TensorMap<'a>>,
        over: [u64; 3],
    ) -> Self {
        Maps { a, b, c, over }
    }

    /// Whether they were made over the A, B and C at these addresses.
    pub(crate) fn are_over(&self, over: [u64; 3]) -> bool {
        self.over == over
    }

    /// C's map, or, without one (the kernel then stores directly and never
    /// reads its tmC), A's to fill the parameter slot.
    pub(crate) fn c_or_a(&self) -> &TensorMap<'a> {
        self.c.as_ref().unwrap_or(&self.a)
    }

    /// Over the staged A.
    pub fn a(&self) -> &TensorMap<'a> {
        &self.a
    }

    /// Over the staged B (or its device transpose).
    pub fn b(&self) -> &TensorMap<'a> {
        &self.b
    }

    /// Over C, when the kernel stores through one and N % 4 = 0.
    pub fn c(&self) -> Option<&TensorMap<'a>> {
        self.c.as_ref()
    }
}

/// The scratch buffers of a padded product: the kernel's A (M'×K'), B
/// (K'×N') and C (M'×N') for its shape [M', N', K'] ([`padded_shape`];
/// transposed: Bᵀ, Aᵀ and Cᵀ, padded), and the module of `sgemm_pad` and
/// `sgemm_pad_t`.
struct Padded<'c, I: DeviceCopy, O: DeviceCopy> {
    dims: [usize; 3],
    transposed: bool,
    a: DeviceBuffer<'c, I>,
    b: DeviceBuffer<'c, I>,
    c: DeviceBuffer<'c, O>,
    module: Module<'c>,
}

impl<'c, I: DeviceCopy + Real, O: DeviceCopy + Real> Product<'c, I, O> {
    /// Compiles (through the process's cache) and loads `kernel`, opts into
    /// its dynamic shared memory, stages and uploads A and B as `g` stores
    /// them, and uploads `c` (or poisons C when there is none: beta = 0 must
    /// not read it). Waits for the uploads before returning.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when the element types are not the
    /// kernel's, the kernel is a batched one, or a size does not fit the
    /// kernels' `int`; compile, load, allocation and copy errors.
    ///
    /// # Panics
    ///
    /// When `a`, `b` or `c` do not hold `g`'s A, B and C.
    pub fn new(
        ctx: &'c Context,
        kernel: &'static MatmulKernel,
        g: Gemm,
        data: (&[I], &[I], Option<&[O]>),
        transpose: Transpose,
    ) -> Result<Self> {
        Product::with_pad(ctx, kernel, g, data, transpose, Pad::Off)
    }

    /// As [`Product::new`], and with [`Pad::Device`] an SGEMM of a shape
    /// that [`padded_shape`] pads runs on zero-padded copies of A and B:
    /// the scratch buffers are allocated here (through the context, so the
    /// arena tracks them) and `sgemm_pad` is compiled and loaded.
    ///
    /// # Errors
    ///
    /// As [`Product::new`].
    ///
    /// # Panics
    ///
    /// As [`Product::new`].
    pub fn with_pad(
        ctx: &'c Context,
        kernel: &'static MatmulKernel,
        g: Gemm,
        (a, b, c): (&[I], &[I], Option<&[O]>),
        transpose: Transpose,
        pad: Pad,
    ) -> Result<Self> {
        assert_eq!(a.len(), g.a_len(), "A of {g:?}");
        assert_eq!(b.len(), g.b_len(), "B of {g:?}");
        if let Some(c) = c {
            assert_eq!(c.len(), g.c_len(), "C of {g:?}");
        }
        if I::NAME != kernel.input.name() || O::NAME != kernel.output.name() {
            return Err(Error::InvalidArgument(format!(
                "{} takes {:?} inputs and {:?} output, not {} and {}",
                kernel.name,
                kernel.input,
                kernel.output,
                I::NAME,
                O::NAME
            )));
        }
        if kernel.signature == Signature::TmaScaled {
            return Err(Error::InvalidArgument(format!(
                "{} takes FP8 operands and scales: run it through fp8::Fp8Gemm",
                kernel.name
            )));
        }
        if kernel.signature == Signature::Batched {
            return Err(Error::InvalidArgument(format!(
                "{} is batched: a Product runs one GEMM",
                kernel.name
            )));
        }
        dims_fit(kernel, [g.m, g.n, g.k])?;
        let mut staged_on_host = Vec::new();
        // A: the kernels read it as stored M×K.
        let lda = kernel.row_pitch(g.k);
        let a_t = g.op_a != kernel.op_a;
        if a_t {
            staged_on_host.push("A transposed on the host");
        }
        let (a_rows, a_cols) = if g.op_a == Op::N {
            (g.m, g.k)
        } else {
            (g.k, g.m)
        };
        let a_host = stage(a, a_rows, a_cols, a_t, lda);
        // B: as the kernel reads it, or as given for a device transpose.
        let (b_rows, b_cols) = if g.op_b == Op::N {
            (g.k, g.n)
        } else {
            (g.n, g.k)
        };
        let on_device = transpose == Transpose::Device
            && kernel.uses_tma()
            && g.op_b == Op::N
            && kernel.op_b == Op::T
            && g.k > 0
            && g.n > 0
            && kernel.row_pitch(g.k) == g.k;
        let (b_host, ldb, b_op) = if on_device {
            (b.to_vec(), g.n, Op::N)
        } else {
            let b_t = g.op_b != kernel.op_b;
            if b_t {
                staged_on_host.push("B transposed on the host");
            }
            let ldb = kernel.row_pitch(if kernel.op_b == Op::N { g.n } else { g.k });
            (stage(b, b_rows, b_cols, b_t, ldb), ldb, kernel.op_b)
        };
        if kernel.uses_tma() && (lda != g.k || (!on_device && ldb != b_host_cols(kernel, &g))) {
            staged_on_host.push("rows padded to 16 bytes for TMA");
        }
        let compiled = kernel.program().compile_for(ctx)?;
        let module = ctx.load_module(&compiled)?;
        if kernel.shared_bytes > 48 * 1024 {
            module
                .function(kernel.name)?
                .set_max_dynamic_shared_memory(kernel.shared_bytes)?;
        }
        let transpose = if on_device {
            let compiled = Source::named("transpose.cu").program().compile_for(ctx)?;
            Some(ctx.load_module(&compiled)?)
        } else {
            None
        };
        let a = ctx.upload(&a_host)?;
        let b = ctx.upload(&b_host)?;
        let bt = if on_device {
            Some(ctx.alloc::<I>(g.n * g.k)?)
        } else {
            None
        };
        let c = match c {
            Some(c) if !c.is_empty() => ctx.upload(c)?,
            _ => {
                let d = ctx.alloc::<O>(g.c_len().max(1))?;
                d.fill(O::POISON)?;
                d
            }
        };
        let padded = match (pad, padded_shape(kernel, &g)) {
            (Pad::Device, Some(Padding { dims, transposed })) => {
                let [m, n, k] = dims;
                let compiled = sgemm_pad_program().compile_for(ctx)?;
                Some(Padded {
                    dims,
                    transposed,
                    a: ctx.alloc::<I>(m * k)?,
                    b: ctx.alloc::<I>(k * n)?,
                    c: ctx.alloc::<O>(m * n)?,
                    module: ctx.load_module(&compiled)?,
                })
            }
            _ => None,
        };
        // Synchronous uploads and fills may still be in flight on the
        // legacy stream, which the launch's stream does not wait for.
        ctx.synchronize()?;
        Ok(Product {
            kernel,
            g,
            a,
            lda,
            b,
            ldb,
            b_op,
            bt,
            c,
            module,
            transpose,
            padded,
            staged_on_host,
        })
    }

    /// The kernel.
    pub fn kernel(&self) -> &'static MatmulKernel {
        self.kernel
    }

    /// The GEMM as the caller stores it.
    pub fn gemm(&self) -> Gemm {
        self.g
    }

    /// C on the device (M×N, packed; one element when empty).
    pub fn c(&self) -> &DeviceBuffer<'c, O> {
        &self.c
    }

    /// The shape the kernel runs on: the padded one ([`padded_shape`])
    /// when the operands are padded, else the GEMM's own (M, N, K).
    pub fn kernel_shape(&self) -> [usize; 3] {
        match &self.padded {
            Some(p) => p.dims,
            None => [self.g.m, self.g.n, self.g.k],
        }
    }

    /// The kernel's grid ([`MatmulKernel::grid`] of [`Product::kernel_shape`];
    /// for [`Raster::Clusters`], at most one block per SM, in whole
    /// clusters).
    pub fn grid(&self) -> [u32; 3] {
        let [m, n, _] = self.kernel_shape();
        let sms = self.module.context().limits().multiprocessors;
        persistent_grid(self.kernel, m, n, sms)
    }

    /// What the product does besides the kernel: the device transpose or
    /// padding it runs, and how the operands were staged on the host.
    pub fn notes(&self) -> Vec<&'static str> {
        let mut notes = self.staged_on_host.clone();
        if self.bt.is_some() {
            notes.insert(0, "B transposed on the device (transpose<float>, timed)");
        }
        match &self.padded {
            Some(p) if p.transposed => notes.insert(
                0,
                "C^T = B^T*A^T on zero-padded transposes made on the device (K to 16, M to 4, \
                 N to the tile), C transposed back (sgemm_pad_t, timed)",
            ),
            Some(_) => notes.insert(
                0,
                "A, B zero-padded on the device (K to 16, N to 4, M to the tile), \
                 C copied back (sgemm_pad, timed)",
            ),
            None => {}
        }
        notes
    }

    /// `x` as the kernel receives it as alpha or beta: rounded to f32,
    /// except for the f64 kernels.
    pub fn scalar(&self, x: f64) -> f64 {
        if self.kernel.input == Elem::F64 {
            x
        } else {
            f64::from(x as f32)
        }
    }

    /// The tensor maps of a TMA kernel over the staged A and B (and C, see
    /// [`Maps`]); `None` for the other kernels.
    ///
    /// # Errors
    ///
    /// As [`tensor_maps`].
    pub fn maps(&self) -> Result<Option<Maps<'_>>> {
        if !self.kernel.uses_tma() {
            return Ok(None);
        }
        let (b, ldb) = match &self.bt {
            Some(bt) => (bt, self.g.k),
            None => (&self.b, self.ldb),
        };
        let dims = [self.g.m, self.g.n, self.g.k];
        let (a, b) = tensor_maps(self.kernel, dims, (&self.a, self.lda), (b, ldb))?;
        let c = match c_layout(self.g.m, self.g.n) {
            Some(layout) if self.kernel.signature == Signature::TmaStore => {
                Some(TensorMap::tiled(&self.c, layout)?)
            }
            _ => None,
        };
        Ok(Some(Maps {
            a,
            b,
            c,
            over: self.map_buffers(),
        }))
    }

    /// The device addresses of the A, B (or Bᵀ) and C that [`Product::maps`]
    /// describes.
    fn map_buffers(&self) -> [u64; 3] {
        let b = self.bt.as_ref().unwrap_or(&self.b);
        [
            self.a.device_ptr().as_raw(),
            b.device_ptr().as_raw(),
            self.c.device_ptr().as_raw(),
        ]
    }

    /// `maps` when they are this product's own ([`Product::maps`]).
    fn own_maps<'m>(&self, maps: &'m Option<Maps<'m>>) -> Result<&'m Maps<'m>> {
        match maps {
            Some(mp) if mp.are_over(self.map_buffers()) => Ok(mp),
            _ => Err(Error::InvalidArgument(format!(
                "{} needs this product's own tensor maps (Product::maps)",
                self.kernel.name
            ))),
        }
    }

    /// The launches of one product, C = alpha·op(A)·op(B) + beta·C, ready
    /// to queue with [`Launches::enqueue`]: the device transpose when there
    /// is one, then the kernel (none when M or N is 0).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for alpha ≠ 1 or beta ≠ 0 with a kernel
    /// that has no alpha/beta, or for a TMA kernel without its `maps`;
    /// [`Error::UnknownFunction`] and other module errors.
    pub fn launches<'a>(
        &'a self,
        maps: &'a Option<Maps<'a>>,
        alpha: f64,
        beta: f64,
    ) -> Result<Launches<'a>> {
        let g = &self.g;
        let (m, n, k) = (int(g.m, "M")?, int(g.n, "N")?, int(g.k, "K")?);
        let mut steps = Vec::new();
        if let (Some(bt), Some(module)) = (&self.bt, &self.transpose) {
            let name = match self.kernel.input.size() {
                2 => "transpose<unsigned short>",
                4 => "transpose<float>",
                _ => "transpose<double>",
            };
            let grid = transpose_grid(g.k, g.n);
            let b = TRANSPOSE_BLOCK;
            steps.push(Step {
                function: module.function(name)?,
                config: LaunchConfig::new((grid[0], grid[1], grid[2]), (b[0], b[1], b[2])),
                params: params![&self.b, bt, k, n],
            });
        }
        // The padded shape as the kernels' ints (`padded_shape` checked
        // that it fits).
        let padded = match &self.padded {
            Some(p) => {
                let [pm, pn, pk] = p.dims;
                let dims = [
                    int(pm, "padded M")?,
                    int(pn, "padded N")?,
                    int(pk, "padded K")?,
                ];
                Some((p, dims))
            }
            None => None,
        };
        if let Some((p, [pm, pn, pk])) = padded {
            // The kernel's A from A (or, transposed, Bᵀ), its B from B (or
            // Aᵀ), its C from C (or Cᵀ) when beta ≠ 0.
            let (module, t) = (&p.module, p.transposed);
            let (a_src, a_dims, b_src, b_dims) = if t {
                (&self.b, [k, n], &self.a, [m, k])
            } else {
                (&self.a, [m, k], &self.b, [k, n])
            };
            steps.push(pad_step(module, t, a_src, a_dims, &p.a, [pm, pk])?);
            steps.push(pad_step(module, t, b_src, b_dims, &p.b, [pk, pn])?);
            if beta != 0.0 {
                steps.push(pad_step(module, t, &self.c, [m, n], &p.c, [pm, pn])?);
            }
        }
        if g.m > 0 && g.n > 0 {
            let grid = self.grid();
            let b = self.kernel.block;
            let config = LaunchConfig::new((grid[0], grid[1], grid[2]), (b[0], b[1], b[2]))
                .shared(self.kernel.shared_bytes);
            // With padding, the kernel runs on the scratch buffers and the
            // padded shape.
            let ((a, bb, c), [m, n, k]) = match padded {
                Some((p, dims)) => ((&p.a, &p.b, &p.c), dims),
                None => ((&self.a, &self.b, &self.c), [m, n, k]),
            };
            let params: ParamList<'a> = match (self.kernel.signature, self.kernel.input) {
                (Signature::Tma, _) => {
                    let maps = self.own_maps(maps)?;
                    params![&maps.a, &maps.b, c, m, n, k, alpha as f32, beta as f32]
                }
                (Signature::TmaStore, _) => {
                    let maps = self.own_maps(maps)?;
                    let mc = maps.c_or_a();
                    params![&maps.a, &maps.b, mc, c, m, n, k, alpha as f32, beta as f32]
                }
                (Signature::Gemm, Elem::F64) => params![m, n, k, alpha, a, bb, beta, c],
                (Signature::Gemm, _) => params![m, n, k, alpha as f32, a, bb, beta as f32, c],
                (Signature::Matmul, _) => {
                    if alpha != 1.0 || beta != 0.0 {
                        return Err(Error::InvalidArgument(format!(
                            "{} computes C = A*B only (alpha 1, beta 0)",
                            self.kernel.name
                        )));
                    }
                    params![a, bb, c, m, n, k]
                }
                (Signature::Batched | Signature::TmaScaled, _) => {
                    unreachable!("refused by Product::new")
                }
            };
            steps.push(Step {
                function: self.module.function(self.kernel.name)?,
                config,
                params,
            });
        }
        if let Some((p, [pm, pn, _])) = padded {
            steps.push(pad_step(
                &p.module,
                p.transposed,
                &p.c,
                [pm, pn],
                &self.c,
                [m, n],
            )?);
        }
        Ok(Launches { steps })
    }

    /// Runs the product once on a stream of its own and returns C.
    ///
    /// # Errors
    ///
    /// As [`Product::maps`], [`Product::launches`] and the launches.
    pub fn run(&self, ctx: &Context, alpha: f64, beta: f64) -> Result<Vec<O>> {
        let stream = ctx.stream()?;
        let maps = self.maps()?;
        let launches = self.launches(&maps, alpha, beta)?;
        ctx.scope(|s| launches.enqueue(s, &stream))?;
        let mut c = self.c.to_vec()?;
        c.truncate(self.g.c_len());
        Ok(c)
    }

    /// A and B as they sit on the device for a comparison library: (the
    /// buffer, its row pitch in elements, how it is stored). B is the
    /// caller's B when the kernel gets a device-transposed copy.
    pub fn operands(&self) -> [(&DeviceBuffer<'c, I>, usize, Op); 2] {
        [(&self.a, self.lda, Op::N), (&self.b, self.ldb, self.b_op)]
    }
}

/// A launch of `sgemm_pad` (`dst` (`dst_dims` rows × columns, packed) =
/// `src` (`src_dims`) where both are in range, 0 elsewhere), or with
/// `transposed` of `sgemm_pad_t` (`dst` = `src`ᵀ where both are in range).
///
/// # Errors
///
/// [`Error::UnknownFunction`] and other module errors.
fn pad_step<'a, S: DeviceCopy, D: DeviceCopy>(
    module: &'a Module<'_>,
    transposed: bool,
    src: &'a DeviceBuffer<'_, S>,
    [src_rows, src_cols]: [i32; 2],
    dst: &'a DeviceBuffer<'_, D>,
    [dst_rows, dst_cols]: [i32; 2],
) -> Result<Step<'a>> {
    let (name, grid, b) = if transposed {
        let grid = sgemm_pad_t_grid(dst_rows as usize, dst_cols as usize);
        (SGEMM_PAD_T, grid, SGEMM_PAD_T_BLOCK)
    } else {
        let grid = sgemm_pad_grid(dst_rows as usize, dst_cols as usize);
        (SGEMM_PAD, grid, SGEMM_PAD_BLOCK)
    };
    Ok(Step {
        function: module.function(name)?,
        config: LaunchConfig::new((grid[0], grid[1], grid[2]), (b[0], b[1], b[2])),
        params: params![src, src_rows, src_cols, dst, dst_rows, dst_cols],
    })
}

/// The row length of B as a kernel reads it.
fn b_host_cols(kernel: &MatmulKernel, g: &Gemm) -> usize {
    if kernel.op_b == Op::N {
        g.n
    } else {
        g.k
    }
}

impl<I: DeviceCopy, O: DeviceCopy> std::fmt::Debug for Product<'_, I, O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Product")
            .field("kernel", &self.kernel.name)
            .field("gemm", &self.g)
            .field("lda", &self.lda)
            .field("ldb", &self.ldb)
            .field("device_transpose", &self.bt.is_some())
            .field(
                "padded",
                &self.padded.as_ref().map(|p| (p.dims, p.transposed)),
            )
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Launches<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// One launch of a [`Launches`].
struct Step<'a> {
    function: Function<'a>,
    config: LaunchConfig,
    params: ParamList<'a>,
}

/// The launches of one product ([`Product::launches`]).
pub struct Launches<'a> {
    steps: Vec<Step<'a>>,
}

impl<'a> Launches<'a> {
    /// No launch (an empty C).
    pub(crate) fn none() -> Self {
        Launches { steps: Vec::new() }
    }

    /// One launch: `function` with `config` and `params` (for the products
    /// of this crate, whose constructors check the geometry).
    pub(crate) fn one(function: Function<'a>, config: LaunchConfig, params: ParamList<'a>) -> Self {
        Launches {
            steps: vec![Step {
                function,
                config,
                params,
            }],
        }
    }

    /// Queues the launches on `stream`, in order.
    ///
    /// # Errors
    ///
    /// Launch errors (see `Scope::launch`).
    pub fn enqueue<'s>(&'s self, s: &Scope<'s, '_>, stream: &'s Stream<'_>) -> Result<()> {
        for step in &self.steps {
            // SAFETY: every step was built by `Product::launches` (or
            // `fp8::Fp8Gemm::launches`, whose comment states the same for
            // its one launch) for the
            // kernel's documented geometry (kernels/README.md): the grid and
            // block of its descriptor, its dynamic shared memory (opted into
            // by `Product::new`), and parameters in its signature's order
            // and types over buffers staged for exactly this M, N, K (A
            // with `lda`-pitched rows, B as the kernel reads it or as the
            // transpose reads it, C with M·N elements, each at least one
            // element; with padding, the GEMM's M, N, K are the padded
            // ones and its A, B, C the scratch buffers allocated for
            // exactly them, M'·K', K'·N', M'·N' elements) and tensor maps
            // whose extents lie inside those buffers (checked by
            // `TensorMap::tiled`); every access of the kernels is
            // bounds-checked against M, N, K, and TMA never reads past a
            // map's extent. A `sgemm_pad` or `sgemm_pad_t` step
            // (`pad_step`) gets the block and grid of `sgemm_pad_grid` or
            // `sgemm_pad_t_grid` and each buffer with the rows and columns
            // it was allocated for (A M×K, B K×N, C M×N, and the scratch
            // buffers above): the kernels read their source only at rows
            // and columns below the source's and write their destination
            // only below the destination's.
            unsafe { s.launch(stream, &step.function, &step.config, &step.params)? };
        }
        Ok(())
    }

    /// The kernels launched, in order.
    pub fn names(&self) -> Vec<&str> {
        self.steps.iter().map(|s| s.function.name()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_persistent_grid_keeps_the_waves_of_every_slot_busy_on_fewest_clusters() {
        let k = matmul_kernel("gemm_sm90_bf16_nn");
        assert_eq!(persistent_grid(k, 4096, 4096, 132), [128, 1, 1]);
        assert_eq!(persistent_grid(k, 8192, 8192, 132), [128, 1, 1]);
        // Fewer units than slots: one cluster each.
        assert_eq!(persistent_grid(k, 1024, 1024, 132), [32, 1, 1]);
        // 133 units: 3 waves on 66 slots, 45 clusters (gpu_matmul's
        // 1700x4700 case, where two clusters walk one unit fewer).
        assert_eq!(persistent_grid(k, 1700, 4700, 132), [90, 1, 1]);
        for sms in [1, 2, 3, 78, 114, 132, 133] {
            let slots = (sms / 2).max(1);
            for m in [1, 128, 300, 2500, 4096, 4097, 8192, 12345] {
                for n in [1, 256, 520, 3000, 4096, 8192] {
                    let units = k.grid(m, n, 1)[0] / 2;
                    let [g, y, z] = persistent_grid(k, m, n, sms);
                    assert_eq!((y, z, g % 2), (1, 1, 0), "{sms} {m} {n}");
                    let clusters = g / 2;
                    assert!(
                        clusters >= 1 && clusters <= slots.min(units),
                        "{sms} {m} {n}: {g}"
                    );
                    // As many waves as with every slot busy, and no
                    // cluster that the last wave leaves idle.
                    let waves = units.div_ceil(slots.min(units));
                    assert_eq!(units.div_ceil(clusters), waves, "{sms} {m} {n}: {g}");
                    assert!((clusters - 1) * waves < units, "{sms} {m} {n}: {g}");
                }
            }
        }
    }

    #[test]
    fn tma_kernels_refuse_sizes_they_would_round_past_an_int() {
        let top = i32::MAX as usize - 256;
        for name in ["gemm_sm90_e4m3_nt", "gemm_sm90_bf16_nn"] {
            let k = matmul_kernel(name);
            assert!(dims_fit(k, [top, top, top]).is_ok());
            for dims in [[top + 1, 1, 1], [1, top + 1, 1], [1, 1, top + 1]] {
                match dims_fit(k, dims) {
                    Err(Error::InvalidArgument(msg)) => {
                        assert!(msg.contains("whole tiles"), "{msg}")
                    }
                    other => panic!("{name} {dims:?}: {other:?}"),
                }
            }
        }
        // A pointer kernel takes any int, and nothing past one.
        let s = matmul_kernel("sgemm_128x256");
        assert!(dims_fit(s, [i32::MAX as usize; 3]).is_ok());
        assert!(dims_fit(s, [1, i32::MAX as usize + 1, 1]).is_err());
    }

    #[test]
    fn staging_transposes_and_pads() {
        // 2x3 stored, transposed into 3 rows of pitch 4.
        let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let s = stage(&a, 2, 3, true, 4);
        assert_eq!(s.len(), 12);
        assert_eq!(&s[0..2], &[1.0, 4.0]);
        assert_eq!(&s[4..6], &[2.0, 5.0]);
        assert_eq!(&s[8..10], &[3.0, 6.0]);
        assert!(s[2].is_poison() && s[3].is_poison() && s[11].is_poison());
        assert_eq!(stage(&a, 2, 3, false, 3), a);
        // K = 0: one padded row of poison.
        let empty: [f32; 0] = [];
        let s = stage(&empty, 5, 0, false, 4);
        assert!(s.len() >= 4 && s.iter().all(|x| x.is_poison()));
    }

    #[test]
    fn padding_covers_the_shapes_no_block_takes_whole_tiles_in() {
        let k256 = matmul_kernel("sgemm_128x256");
        let k128 = matmul_kernel("sgemm_128x128");
        let nn = |m, n, k| Gemm::new(m, n, k, Op::N, Op::N);
        let padded = |k, g: &Gemm| padded_shape(k, g).map(|p| p.dims);
        // M rounds to whole tiles of N, N does not: transposed, every block
        // a whole tile.
        let p = padded_shape(k256, &nn(4095, 4097, 4093)).unwrap();
        assert_eq!((p.dims, p.transposed), ([4224, 4096, 4096], true));
        let p = padded_shape(k256, &nn(255, 257, 33)).unwrap();
        assert_eq!((p.dims, p.transposed), ([384, 256, 48], true));
        let p = padded_shape(k128, &nn(128, 130, 17)).unwrap();
        assert_eq!((p.dims, p.transposed), ([256, 128, 32], true));
        // Both or neither whole: not transposed.
        let p = padded_shape(k256, &nn(4095, 4095, 4093)).unwrap();
        assert_eq!((p.dims, p.transposed), ([4096, 4096, 4096], false));
        let p = padded_shape(k256, &nn(4091, 4097, 4093)).unwrap();
        assert_eq!((p.dims, p.transposed), ([4096, 4100, 4096], false));
        // K odd with N % 4 == 0; N odd with K % 16 == 0.
        assert_eq!(padded(k256, &nn(255, 256, 17)), Some([256, 256, 32]));
        assert_eq!(padded(k256, &nn(250, 259, 64)), Some([256, 260, 64]));
        assert_eq!(padded(k128, &nn(129, 130, 33)), Some([256, 132, 48]));
        assert_eq!(padded(k256, &nn(1, 300, 1)), Some([128, 300, 16]));
        // Already eligible (an M edge alone is not padded), K = 0, N' narrower
        // than a tile.
        assert_eq!(padded_shape(k256, &nn(4096, 4096, 4096)), None);
        assert_eq!(padded_shape(k256, &nn(4095, 4096, 4096)), None);
        assert_eq!(padded_shape(k256, &nn(5, 7, 0)), None);
        assert_eq!(padded_shape(k256, &nn(300, 251, 17)), None);
        assert_eq!(padded_shape(k128, &nn(300, 123, 17)), None);
        assert_eq!(padded(k256, &nn(300, 253, 17)), Some([384, 256, 32]));
        // A padded size past the kernels' int.
        assert_eq!(padded_shape(k256, &nn(1, 300, i32::MAX as usize)), None);
        // Only sgemm.cu's kernels.
        for name in [
            "dgemm_dmma_128x128",
            "gemm_regblock<float, 128, 128, 8, 8, 8>",
        ] {
            assert_eq!(
                padded_shape(matmul_kernel(name), &nn(4095, 4097, 4093)),
                None
            );
        }
    }

    #[test]
    fn the_fastest_kernel_depends_on_the_device() {
        let on = |p, cc| fastest(p, cc).map(|k| k.name);
        assert_eq!(on(Precision::Bf16, (9, 0)), Some("gemm_sm90_bf16_nn"));
        assert_eq!(on(Precision::F16, (9, 0)), Some("gemm_sm90_f16_nn"));
        assert_eq!(on(Precision::Tf32, (9, 0)), Some("gemm_sm90_tf32_nn"));
        assert_eq!(on(Precision::F32, (9, 0)), Some("sgemm_128x256"));
        assert_eq!(on(Precision::F64, (9, 0)), Some("dgemm_dmma_128x128"));
        assert_eq!(on(Precision::Bf16, (8, 9)), Some("matmul_bf16_mma"));
        assert_eq!(
            on(Precision::F64, (8, 0)),
            Some("gemm_regblock<double, 64, 64, 8, 4, 4>")
        );
        // sgemm.cu needs only sm_80's cp.async.
        assert_eq!(on(Precision::F32, (8, 6)), Some("sgemm_128x256"));
        assert_eq!(on(Precision::Tf32, (8, 9)), Some("matmul_tf32_mma"));
        assert_eq!(on(Precision::Tf32, (7, 5)), None);
        assert_eq!(on(Precision::Bf16, (10, 0)), Some("matmul_bf16_mma"));
        for p in Precision::ALL {
            let k = fastest(p, (9, 0)).unwrap();
            assert_eq!(Precision::of(k), p);
            assert_eq!((k.input, k.output), (p.input(), p.output()));
            assert_eq!(p.is_fp8(), k.signature == Signature::TmaScaled);
        }
    }
}
