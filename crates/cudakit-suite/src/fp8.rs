//! FP8 GEMMs on the device: the FP8 kernels of `kernels/gemm_sm90.cu`
//! (`gemm_sm90_e4m3_nt`, `gemm_sm90_e5m2_e4m3_nt`) staged and launched
//! for any M, N, K, as [`crate::gemm::Product`] does for the other matrix
//! kernels (the FP8 kernels take two operand types and two scale pointers,
//! which `Product` has no room for).
//!
//! C = alpha·scale_a·scale_b·A·Bᵀ + beta·C with A (e4m3 or e5m2) stored
//! M×K, B (e4m3) stored N×K, both row-major, C f32 M×N packed. wgmma reads
//! 8-bit operands only K-major, so this is the one storage order: a caller
//! with B stored K×N transposes it first.
//!
//! TMA needs every row pitch to be a multiple of 16 bytes, i.e. K a
//! multiple of 16 for packed FP8 rows. Other K are not refused: A and B are
//! staged with their rows padded to the next multiple of 16 (the padding
//! holds [`crate::reference::POISON_U8`] and stays unread: the maps'
//! dimensions are the logical K, and TMA zero-fills every box past it).
//! K = 0 gets one padded column (C = beta·C).

use cudakit::memory::tensor_map::TensorMap;
use cudakit::{
    params, Context, DeviceBuffer, Error, LaunchConfig, Module, ParamList, Result, F8E4M3, F8E5M2,
};

use crate::gemm::{dims_fit, persistent_grid, stage, Launches, Maps};
use crate::kernels::{c_layout, tma_layouts, Elem, MatmulKernel, Signature};
use crate::reference::Real;

/// An FP8 element type of the kernels' operands.
pub trait Fp8: cudakit::DeviceCopy + Real {
    /// Its [`Elem`].
    const ELEM: Elem;
    /// Rounds an f32 to it (nearest even, saturating).
    fn from_f32(x: f32) -> Self;
    /// Its exact value.
    fn to_f32(self) -> f32;
}

impl Fp8 for F8E4M3 {
    const ELEM: Elem = Elem::E4m3;
    fn from_f32(x: f32) -> Self {
        F8E4M3::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        F8E4M3::to_f32(self)
    }
}

impl Fp8 for F8E5M2 {
    const ELEM: Elem = Elem::E5m2;
    fn from_f32(x: f32) -> Self {
        F8E5M2::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        F8E5M2::to_f32(self)
    }
}

/// The row pitch, in elements (= bytes), of a staged FP8 operand with `k`
/// elements a row: `k` rounded up to a multiple of 16, at least 16.
pub fn fp8_row_pitch(k: usize) -> usize {
    k.max(1).div_ceil(16) * 16
}

fn int(x: usize, what: &str) -> Result<i32> {
    i32::try_from(x)
        .map_err(|_| Error::InvalidArgument(format!("{what} = {x} does not fit an int")))
}

/// One FP8 GEMM on the device, staged for an FP8 kernel of `gemm_sm90.cu`.
pub struct Fp8Gemm<'c, A: Fp8, B: Fp8> {
    kernel: &'static MatmulKernel,
    dims: [usize; 3],
    a: DeviceBuffer<'c, A>,
    b: DeviceBuffer<'c, B>,
    ld: usize,
    c: DeviceBuffer<'c, f32>,
    scale_a: DeviceBuffer<'c, f32>,
    scale_b: DeviceBuffer<'c, f32>,
    module: Module<'c>,
    blocks: u32,
    padded: bool,
}

impl<'c, A: Fp8, B: Fp8> Fp8Gemm<'c, A, B> {
    /// Compiles (through the process's cache) and loads `kernel`, opts into
    /// its dynamic shared memory, stages and uploads A (M×K) and B (N×K)
    /// with rows padded to 16 bytes where K needs it, the two scales, and
    /// `c` (or poisons C when there is none: beta = 0 must not read it).
    /// Waits for the uploads before returning. The grid is at most one
    /// block per SM, in whole clusters (the clusters walk the tiles).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] when `kernel` is not an FP8 kernel, the
    /// element types are not its own, or M, N or K is above
    /// `i32::MAX - 256` (the kernel rounds them up to whole tiles in an
    /// `int`); compile, load, allocation and copy errors.
    ///
    /// # Panics
    ///
    /// When `a`, `b` or `c` do not hold M×K, N×K and M×N elements.
    pub fn new(
        ctx: &'c Context,
        kernel: &'static MatmulKernel,
        [m, n, k]: [usize; 3],
        (a, b, c): (&[A], &[B], Option<&[f32]>),
        (scale_a, scale_b): (f32, f32),
    ) -> Result<Self> {
        assert_eq!(a.len(), m * k, "A is {m}x{k}");
        assert_eq!(b.len(), n * k, "B is {n}x{k}");
        if let Some(c) = c {
            assert_eq!(c.len(), m * n, "C is {m}x{n}");
        }
        if kernel.signature != Signature::TmaScaled
            || A::ELEM != kernel.input
            || B::ELEM != Elem::E4m3
        {
            return Err(Error::InvalidArgument(format!(
                "{} is not an FP8 kernel for {} x {} operands",
                kernel.name,
                A::NAME,
                B::NAME
            )));
        }
        dims_fit(kernel, [m, n, k])?;
        let ld = fp8_row_pitch(k);
        let a_host = stage(a, m, k, false, ld);
        let b_host = stage(b, n, k, false, ld);
        let compiled = kernel.program().compile_for(ctx)?;
        let module = ctx.load_module(&compiled)?;
        module
            .function(kernel.name)?
            .set_max_dynamic_shared_memory(kernel.shared_bytes)?;
        let blocks = persistent_grid(kernel, m, n, ctx.limits().multiprocessors)[0];
        let a = ctx.upload(&a_host)?;
        let b = ctx.upload(&b_host)?;
        let c = match c {
            Some(c) if !c.is_empty() => ctx.upload(c)?,
            _ => {
                let d = ctx.alloc::<f32>((m * n).max(1))?;
                d.fill(f32::POISON)?;
                d
            }
        };
        let scale_a = ctx.upload(&[scale_a])?;
        let scale_b = ctx.upload(&[scale_b])?;
        // Synchronous uploads and fills may still be in flight on the
        // legacy stream, which the launch's stream does not wait for.
        ctx.synchronize()?;
        Ok(Fp8Gemm {
            kernel,
            dims: [m, n, k],
            a,
            b,
            ld,
            c,
            scale_a,
            scale_b,
            module,
            blocks,
            padded: ld != k,
        })
    }

    /// The kernel.
    pub fn kernel(&self) -> &'static MatmulKernel {
        self.kernel
    }

    /// The blocks launched (at most one per SM, in whole clusters; none
    /// when M or N is 0).
    pub fn grid(&self) -> [u32; 3] {
        let [m, n, _] = self.dims;
        [if m > 0 && n > 0 { self.blocks } else { 0 }, 1, 1]
    }

    /// How the operands were staged, for reports.
    pub fn notes(&self) -> Vec<&'static str> {
        if self.padded {
            vec!["rows padded to 16 bytes for TMA"]
        } else {
            Vec::new()
        }
    }

    /// C on the device (M×N, packed; one element when empty).
    pub fn c(&self) -> &DeviceBuffer<'c, f32> {
        &self.c
    }

    /// A, B (device buffer, row pitch in elements; both K-major) and the
    /// scale buffers, for a comparison library.
    #[allow(clippy::type_complexity)]
    pub fn operands(
        &self,
    ) -> (
        (&DeviceBuffer<'c, A>, usize),
        (&DeviceBuffer<'c, B>, usize),
        (&DeviceBuffer<'c, f32>, &DeviceBuffer<'c, f32>),
    ) {
        (
            (&self.a, self.ld),
            (&self.b, self.ld),
            (&self.scale_a, &self.scale_b),
        )
    }

    /// The tensor maps over the staged A and B (`kernels/README.md`: UINT8,
    /// 128-byte swizzle, zero fill; A `{K, M}` in 128×128 boxes, B `{K, N}`
    /// in 128×128 boxes, one half of the tile's columns per block of a
    /// cluster), and over C when N % 4 = 0 ([`c_layout`]; the kernel stores
    /// C through it when beta = 0).
    ///
    /// # Errors
    ///
    /// As [`TensorMap::tiled`].
    pub fn maps(&self) -> Result<Maps<'_>> {
        let [m, n, _] = self.dims;
        let (la, lb) = tma_layouts(self.kernel, self.dims, self.ld, self.ld);
        let c = match c_layout(m, n) {
            Some(layout) => Some(TensorMap::tiled(&self.c, layout)?),
            None => None,
        };
        Ok(Maps::new(
            TensorMap::tiled(&self.a, la)?,
            TensorMap::tiled(&self.b, lb)?,
            c,
            self.map_buffers(),
        ))
    }

    /// The device addresses of the A, B and C that [`Fp8Gemm::maps`]
    /// describes.
    fn map_buffers(&self) -> [u64; 3] {
        [
            self.a.device_ptr().as_raw(),
            self.b.device_ptr().as_raw(),
            self.c.device_ptr().as_raw(),
        ]
    }

    /// The launch of one product, C = alpha·scale_a·scale_b·A·Bᵀ + beta·C,
    /// ready to queue with [`Launches::enqueue`] (none when M or N is 0).
    /// `maps` must be this product's own ([`Fp8Gemm::maps`]): the kernel
    /// stores C through the C map, so maps of other buffers would write
    /// them.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for maps of other buffers; module errors.
    pub fn launches<'a>(
        &'a self,
        maps: &'a Maps<'a>,
        alpha: f64,
        beta: f64,
    ) -> Result<Launches<'a>> {
        if !maps.are_over(self.map_buffers()) {
            return Err(Error::InvalidArgument(format!(
                "{} needs this product's own tensor maps (Fp8Gemm::maps)",
                self.kernel.name
            )));
        }
        let [m, n, k] = self.dims;
        let function = self.module.function(self.kernel.name)?;
        let b = self.kernel.block;
        let blocks = self.grid()[0];
        let config =
            LaunchConfig::new((blocks, 1, 1), (b[0], b[1], b[2])).shared(self.kernel.shared_bytes);
        let (mi, ni, ki) = (int(m, "M")?, int(n, "N")?, int(k, "K")?);
        let params: ParamList<'a> = params![
            maps.a(),
            maps.b(),
            maps.c_or_a(),
            &self.c,
            mi,
            ni,
            ki,
            alpha as f32,
            beta as f32,
            &self.scale_a,
            &self.scale_b
        ];
        // The launch's safety (Launches::enqueue): the block and dynamic
        // shared memory of the kernel's descriptor (opted into by `new`),
        // a grid of whole clusters (the clusters walk the units),
        // parameters in its order and types over the staged buffers of
        // these M, N, K (the maps checked above to be over this product's
        // A, B (rows `ld` apart inside the maps' extents) and C (M×N
        // floats, N apart), one f32 per scale); every direct store of the
        // kernel is bounds-checked and TMA clips its stores to C's map.
        Ok(if blocks == 0 {
            Launches::none()
        } else {
            Launches::one(function, config, params)
        })
    }

    /// Runs the product once on a stream of its own and returns C.
    ///
    /// # Errors
    ///
    /// As [`Fp8Gemm::maps`], [`Fp8Gemm::launches`] and the launch.
    pub fn run(&self, ctx: &Context, alpha: f64, beta: f64) -> Result<Vec<f32>> {
        let stream = ctx.stream()?;
        let maps = self.maps()?;
        let launches = self.launches(&maps, alpha, beta)?;
        ctx.scope(|s| launches.enqueue(s, &stream))?;
        let mut c = self.c.to_vec()?;
        c.truncate(self.dims[0] * self.dims[1]);
        Ok(c)
    }
}

impl<A: Fp8, B: Fp8> std::fmt::Debug for Fp8Gemm<'_, A, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fp8Gemm")
            .field("kernel", &self.kernel.name)
            .field("dims", &self.dims)
            .field("ld", &self.ld)
            .field("blocks", &self.blocks)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::matmul_kernel;

    #[test]
    fn row_pitches_and_maps_follow_the_readme() {
        assert_eq!(fp8_row_pitch(4096), 4096);
        assert_eq!(fp8_row_pitch(100), 112);
        assert_eq!(fp8_row_pitch(0), 16);
        let k = matmul_kernel("gemm_sm90_e4m3_nt");
        let (a, b) = tma_layouts(k, [300, 520, 100], 112, 112);
        assert_eq!(
            (a.dims.clone(), a.strides.clone(), a.box_dims.clone()),
            (vec![100, 300], vec![112], vec![128, 128])
        );
        assert_eq!(
            (b.dims.clone(), b.strides.clone(), b.box_dims.clone()),
            (vec![100, 520], vec![112], vec![128, 128])
        );
        assert_eq!(a.data_type, cudakit::memory::tensor_map::TensorDataType::U8);
        let mixed = matmul_kernel("gemm_sm90_e5m2_e4m3_nt");
        assert_eq!(
            (mixed.input, mixed.op_b),
            (Elem::E5m2, crate::reference::Op::T)
        );
        assert_eq!(k.shared_bytes, 230_400);
        assert_eq!(
            (k.file, k.raster, k.cluster),
            ("gemm_sm90.cu", crate::kernels::Raster::Clusters, 2)
        );
        // C's map for the TMA-store epilogue: 64 rows × 32 columns.
        let c = c_layout(300, 520).unwrap();
        assert_eq!(
            (c.dims.clone(), c.box_dims.clone()),
            (vec![520, 300], vec![32, 64])
        );
        assert!(c_layout(300, 521).is_none());
        // One cluster per unit (two tile-rows by a tile-column), at most
        // one block per SM: at 4096, 256 units take 4 waves on 66 clusters,
        // and 64 clusters run them in the same 4.
        assert_eq!(persistent_grid(k, 300, 520, 132), [12, 1, 1]);
        assert_eq!(persistent_grid(k, 4096, 4096, 132), [128, 1, 1]);
        assert_eq!(persistent_grid(k, 4096, 4096, 1), [2, 1, 1]);
        assert_eq!(
            k.accumulation,
            crate::reference::Accumulation::Fp8TensorCore
        );
    }

    #[test]
    fn fp8_tolerance_grows_with_the_wgmma_steps() {
        use crate::reference::{Accumulation, Tolerance};
        let t64 = Tolerance::gemm(Accumulation::Fp8TensorCore, 64).scaled;
        let t4096 = Tolerance::gemm(Accumulation::Fp8TensorCore, 4096).scaled;
        assert!((3.1e-3..3.3e-3).contains(&t64), "{t64}");
        assert!((0.20..0.21).contains(&t4096), "{t4096}");
        // Far looser than f32 accumulation: the tensor cores keep ~13 bits.
        assert!(t4096 > 50.0 * Tolerance::gemm(Accumulation::F32, 4096).scaled);
    }
}
