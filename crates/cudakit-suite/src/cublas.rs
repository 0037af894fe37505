//! cuBLAS in the same run as cudakit's kernels, for comparison only: a
//! handle on a context, and timed `cublasGemmEx` calls on row-major
//! operands. cuBLAS is optional and loaded at run time
//! ([`cuda_sys::cublas()`]): when it is missing, [`Cublas::new`] says so
//! with [`CublasError::NotFound`], and nothing else depends on it. The
//! cudakit library crates never use it.
//!
//! Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: a
//! row-major matrix with rows `ld` apart is, read column-major, its own
//! transpose with leading dimension `ld`. So cuBLAS gets m = N, n = M,
//! B first and A second, each `OP_N` when stored as the product uses it
//! (A M×K, B K×N) and `OP_T` when stored transposed, and C with ldc = N.
//!
//! Precisions: f32 is `CUBLAS_COMPUTE_32F` with `CUBLAS_DEFAULT_MATH` (no
//! tf32: the default math mode does not down-convert f32 inputs unless
//! `NVIDIA_TF32_OVERRIDE=1` is set); tf32 is `CUBLAS_COMPUTE_32F_FAST_TF32`;
//! f16 and bf16 take `CUDA_R_16F`/`CUDA_R_16BF` inputs, an f32 C and
//! `CUBLAS_COMPUTE_32F`; f64 is `CUBLAS_COMPUTE_64F`.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::fmt;
use std::time::Duration;

use cuda_sys::cublas::{
    cublasComputeType_t as Compute, cublasGemmAlgo_t, cublasMath_t, cublasOperation_t, cudaDataType,
};
use cuda_sys::{cublasHandle_t, cublasStatus_t, LoadError};
use cudakit::{Context, DeviceBuffer, DeviceCopy, Stream};

use crate::gemm::Precision;
use crate::reference::Op;

/// Why cuBLAS could not be used.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum CublasError {
    /// No libcublas could be loaded (every path tried is listed).
    NotFound(LoadError),
    /// A cuBLAS call failed.
    Call {
        /// The entry point.
        call: &'static str,
        /// The status it returned.
        status: cublasStatus_t,
        /// cuBLAS's description of the status, when it has one.
        message: String,
    },
    /// A cudakit call around cuBLAS failed (events, synchronization).
    Cudakit(cudakit::Error),
    /// Arguments that do not describe the buffers given.
    InvalidArgument(String),
}

impl fmt::Display for CublasError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CublasError::NotFound(e) => write!(f, "cuBLAS not found: {e}"),
            CublasError::Call {
                call,
                status,
                message,
            } => {
                let name = status.name().unwrap_or("unknown status");
                write!(f, "{call}: {name} ({}): {message}", status.0)
            }
            CublasError::Cudakit(e) => write!(f, "around cuBLAS: {e}"),
            CublasError::InvalidArgument(m) => write!(f, "cuBLAS arguments: {m}"),
        }
    }
}

impl std::error::Error for CublasError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CublasError::NotFound(e) => Some(e),
            CublasError::Cudakit(e) => Some(e),
            _ => None,
        }
    }
}

impl From<cudakit::Error> for CublasError {
    fn from(e: cudakit::Error) -> Self {
        CublasError::Cudakit(e)
    }
}

/// A cuBLAS handle on a context's device, destroyed on drop.
pub struct Cublas<'c> {
    ctx: &'c Context,
    table: &'static cuda_sys::Cublas,
    handle: cublasHandle_t,
    version: i32,
    path: String,
}

impl std::fmt::Debug for Cublas<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cublas")
            .field("version", &self.version)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// The row-major operands of one timed GEMM: (buffer, row pitch in
/// elements, how it is stored).
pub type Operand<'b, 'c, T> = (&'b DeviceBuffer<'c, T>, usize, Op);

impl<'c> Cublas<'c> {
    /// Loads cuBLAS (the process's table, see [`cuda_sys::cublas()`]) and
    /// creates a handle on `ctx`'s device, with `ctx` current on this
    /// thread (cuBLAS then uses that primary context).
    ///
    /// # Errors
    ///
    /// [`CublasError::NotFound`] when no libcublas loads;
    /// [`CublasError::Call`] when `cublasCreate_v2` fails.
    pub fn new(ctx: &'c Context) -> Result<Cublas<'c>, CublasError> {
        let (table, loaded) = cuda_sys::cublas_with_origin().map_err(CublasError::NotFound)?;
        make_current(ctx)?;
        let mut handle: cublasHandle_t = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the context is current on this thread.
        let rc = unsafe { (table.cublasCreate)(&mut handle) };
        check(table, "cublasCreate_v2", rc)?;
        let mut version: c_int = 0;
        // SAFETY: a live handle and a valid out-pointer.
        let rc = unsafe { (table.cublasGetVersion)(handle, &mut version) };
        let cublas = Cublas {
            ctx,
            table,
            handle,
            version,
            path: loaded.candidate.clone(),
        };
        check(table, "cublasGetVersion_v2", rc)?;
        Ok(cublas)
    }

    /// The library's version as `major.minor.patch`.
    pub fn version(&self) -> String {
        version_string(self.version as usize)
    }

    /// Where the library was loaded from.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Runs C = alpha·op(A)·op(B) + beta·C (row-major, C packed M×N) with
    /// `cublasGemmEx` in `precision`, `warmup` times untimed and `iters`
    /// times each between two events on `stream`, waits for the stream, and
    /// returns the times. The buffers stay borrowed until the stream has
    /// finished.
    ///
    /// # Errors
    ///
    /// [`CublasError::InvalidArgument`] when an element type is not the
    /// precision's, a buffer is from another context, or a buffer is too
    /// small for its dimensions and pitch; [`CublasError::Call`];
    /// [`CublasError::Cudakit`] for the events and the synchronization.
    #[allow(clippy::too_many_arguments)]
    pub fn time_gemm<I: DeviceCopy, O: DeviceCopy>(
        &self,
        stream: &Stream<'_>,
        precision: Precision,
        [m, n, k]: [usize; 3],
        a: Operand<'_, '_, I>,
        b: Operand<'_, '_, I>,
        c: &DeviceBuffer<'_, O>,
        (alpha, beta): (f64, f64),
        (warmup, iters): (usize, usize),
    ) -> Result<Vec<Duration>, CublasError> {
        let bad = |m: String| Err(CublasError::InvalidArgument(m));
        if precision.is_fp8() {
            return bad(format!(
                "cublasGemmEx has no {}: use CublasLt::time_fp8",
                precision.name()
            ));
        }
        let (in_type, out_type, compute) = types(precision);
        if std::mem::size_of::<I>() != precision.input().size()
            || std::mem::size_of::<O>() != precision.output().size()
        {
            return bad(format!(
                "{} needs {:?} inputs and {:?} output",
                precision.name(),
                precision.input(),
                precision.output()
            ));
        }
        for (what, ctx) in [
            ("A", a.0.context()),
            ("B", b.0.context()),
            ("C", c.context()),
            ("the stream", stream.context()),
        ] {
            if !ctx.same(self.ctx) {
                return bad(format!("{what} belongs to another context"));
            }
        }
        // Stored shapes (rows, cols) of A and B.
        let a_shape = if a.2 == Op::N { (m, k) } else { (k, m) };
        let b_shape = if b.2 == Op::N { (k, n) } else { (n, k) };
        for (what, (buf, ld, _), (rows, cols)) in [("A", a, a_shape), ("B", b, b_shape)] {
            let needed = if rows == 0 {
                Some(0)
            } else {
                (rows - 1).checked_mul(ld).and_then(|x| x.checked_add(cols))
            };
            if ld < cols.max(1) || needed.map_or(true, |need| buf.len() < need) {
                return bad(format!(
                    "{what} is {rows}x{cols} with rows {ld} apart, but holds {} elements",
                    buf.len()
                ));
            }
        }
        if m.checked_mul(n).map_or(true, |mn| c.len() < mn) {
            return bad(format!("C holds {} elements, not {m}x{n}", c.len()));
        }
        let to_int = |x: usize, what: &str| {
            c_int::try_from(x.max(1))
                .map_err(|_| CublasError::InvalidArgument(format!("{what} = {x} exceeds an int")))
        };
        let (mi, ni, ki) = (to_int(n, "N")?, to_int(m, "M")?, to_int(k, "K")?);
        let (lda, ldb, ldc) = (to_int(b.1, "ldb")?, to_int(a.1, "lda")?, to_int(n, "N")?);
        let op = |o: Op| match o {
            Op::N => cublasOperation_t::CUBLAS_OP_N,
            Op::T => cublasOperation_t::CUBLAS_OP_T,
        };
        let (alpha32, beta32) = (alpha as f32, beta as f32);
        let (alpha_ptr, beta_ptr): (*const c_void, *const c_void) =
            if compute == Compute::CUBLAS_COMPUTE_64F {
                ((&alpha as *const f64).cast(), (&beta as *const f64).cast())
            } else {
                (
                    (&alpha32 as *const f32).cast(),
                    (&beta32 as *const f32).cast(),
                )
            };
        make_current(self.ctx)?;
        let t = self.table;
        // SAFETY: a live handle, and a live stream of the handle's context.
        check(t, "cublasSetStream_v2", unsafe {
            (t.cublasSetStream)(self.handle, stream.as_raw())
        })?;
        // SAFETY: a live handle; a defined math mode.
        check(t, "cublasSetMathMode", unsafe {
            (t.cublasSetMathMode)(self.handle, cublasMath_t::CUBLAS_DEFAULT_MATH)
        })?;
        let (m_ok, n_ok) = (m > 0, n > 0);
        let gemm = || -> Result<(), CublasError> {
            if !(m_ok && n_ok) {
                return Ok(());
            }
            // SAFETY: the pointers are device memory of this handle's
            // context (checked above) holding the stored A (ldb argument),
            // B (lda argument) and C of these dimensions and pitches
            // (checked above; K = 0 reads neither), of the element types the
            // precision names (sizes checked above); alpha and beta point to
            // host scalars of the compute type that outlive the call (the
            // default host pointer mode). The buffers stay borrowed until
            // the stream is synchronized below, before this function
            // returns.
            let rc = unsafe {
                (t.cublasGemmEx)(
                    self.handle,
                    op(b.2),
                    op(a.2),
                    mi,
                    ni,
                    ki,
                    alpha_ptr,
                    b.0.device_ptr().as_raw() as usize as *const c_void,
                    in_type,
                    lda,
                    a.0.device_ptr().as_raw() as usize as *const c_void,
                    in_type,
                    ldb,
                    beta_ptr,
                    c.device_ptr().as_raw() as usize as *mut c_void,
                    out_type,
                    ldc,
                    compute,
                    cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            };
            check(t, "cublasGemmEx", rc)
        };
        time_calls(self.ctx, stream, (warmup, iters), gemm)
    }
}

impl Drop for Cublas<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle is live and destroyed once; every call queued
        // through it finished before `time_gemm` returned. A failure cannot
        // be reported from drop and is ignored.
        let _ = unsafe { (self.table.cublasDestroy)(self.handle) };
    }
}

/// The name of the compute type cuBLAS runs `precision` in, for reports
/// (`CUBLAS_COMPUTE_32F`, ...).
pub fn compute_name(precision: Precision) -> &'static str {
    types(precision).2.name().unwrap_or("?")
}

/// (A/B type, C type, compute type) of `precision`.
fn types(precision: Precision) -> (cudaDataType, cudaDataType, Compute) {
    use cudaDataType as D;
    match precision {
        Precision::F32 => (D::CUDA_R_32F, D::CUDA_R_32F, Compute::CUBLAS_COMPUTE_32F),
        Precision::Tf32 => (
            D::CUDA_R_32F,
            D::CUDA_R_32F,
            Compute::CUBLAS_COMPUTE_32F_FAST_TF32,
        ),
        Precision::F64 => (D::CUDA_R_64F, D::CUDA_R_64F, Compute::CUBLAS_COMPUTE_64F),
        Precision::F16 => (D::CUDA_R_16F, D::CUDA_R_32F, Compute::CUBLAS_COMPUTE_32F),
        Precision::Bf16 => (D::CUDA_R_16BF, D::CUDA_R_32F, Compute::CUBLAS_COMPUTE_32F),
        // cublasGemmEx takes no FP8 (time_gemm refuses it): CublasLt does.
        Precision::E4m3 => (
            D::CUDA_R_8F_E4M3,
            D::CUDA_R_32F,
            Compute::CUBLAS_COMPUTE_32F,
        ),
        Precision::E5m2xE4m3 => (
            D::CUDA_R_8F_E5M2,
            D::CUDA_R_32F,
            Compute::CUBLAS_COMPUTE_32F,
        ),
    }
}

/// Makes `ctx` current on this thread (`cuCtxSetCurrent`), so that cuBLAS,
/// which runs on the CUDA runtime, uses it.
fn make_current(ctx: &Context) -> Result<(), CublasError> {
    let cu = cuda_sys::driver().map_err(|e| CublasError::Cudakit(cudakit::Error::from(e)))?;
    // SAFETY: a live context handle (the Context retains it).
    let rc = unsafe { (cu.cuCtxSetCurrent)(ctx.as_raw()) };
    if rc != cuda_sys::CUresult::CUDA_SUCCESS {
        return Err(CublasError::InvalidArgument(format!(
            "cuCtxSetCurrent failed with {rc:?}"
        )));
    }
    Ok(())
}

/// A failed call as a [`CublasError::Call`], with cuBLAS's description.
fn check(
    t: &cuda_sys::Cublas,
    call: &'static str,
    status: cublasStatus_t,
) -> Result<(), CublasError> {
    check_status(t.cublasGetStatusString, call, status)
}

/// `status` as a [`CublasError::Call`] unless it is success, with the
/// library's own message where it has `cublasGetStatusString` (or
/// cuBLASLt's `cublasLtGetStatusString`, the same signature).
fn check_status(
    status_string: Option<unsafe extern "C" fn(cublasStatus_t) -> *const c_char>,
    call: &'static str,
    status: cublasStatus_t,
) -> Result<(), CublasError> {
    if status == cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        return Ok(());
    }
    let message = match status_string {
        Some(f) => {
            // SAFETY: takes any status and returns a static NUL-terminated
            // string (or null).
            let p = unsafe { f(status) };
            if p.is_null() {
                String::new()
            } else {
                // SAFETY: non-null, NUL-terminated, static.
                unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
            }
        }
        None => String::new(),
    };
    Err(CublasError::Call {
        call,
        status,
        message,
    })
}

/// A library version number (`major * 10000 + minor * 100 + patch`) as
/// `major.minor.patch`.
fn version_string(v: usize) -> String {
    format!("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
}

/// Queues `call` `warmup` times untimed and `iters` times between two
/// timing events each on `stream`, then waits for the stream (also when
/// queueing failed, so that nothing queued outlives the caller's buffers)
/// and returns the timed intervals.
fn time_calls(
    ctx: &Context,
    stream: &Stream<'_>,
    (warmup, iters): (usize, usize),
    mut call: impl FnMut() -> Result<(), CublasError>,
) -> Result<Vec<Duration>, CublasError> {
    let events = (0..iters)
        .map(|_| Ok((ctx.timing_event()?, ctx.timing_event()?)))
        .collect::<cudakit::Result<Vec<_>>>()?;
    let queued = (|| {
        for _ in 0..warmup {
            call()?;
        }
        for (start, end) in &events {
            start.record(stream)?;
            call()?;
            end.record(stream)?;
        }
        Ok::<(), CublasError>(())
    })();
    // Whatever was queued finishes before the buffers are released.
    let synced = stream.synchronize();
    queued?;
    synced?;
    Ok(events
        .iter()
        .map(|(start, end)| end.elapsed_since(start))
        .collect::<cudakit::Result<Vec<_>>>()?)
}

/// Whether cuBLAS can be loaded here (without creating a handle).
///
/// # Errors
///
/// [`CublasError::NotFound`] with every path tried.
pub fn available() -> Result<String, CublasError> {
    cuda_sys::cublas_with_origin()
        .map(|(_, loaded)| loaded.candidate.clone())
        .map_err(CublasError::NotFound)
}

/// Whether cuBLASLt can be loaded here (without creating a handle): the
/// library's path.
///
/// # Errors
///
/// [`CublasError::NotFound`] with every path tried.
pub fn lt_available() -> Result<String, CublasError> {
    cuda_sys::cublaslt_with_origin()
        .map(|(_, loaded)| loaded.candidate.clone())
        .map_err(CublasError::NotFound)
}

/// A cuBLASLt handle, for the FP8 comparison: timed `cublasLtMatmul`
/// calls on the operands of a [`crate::fp8::Fp8Gemm`]. Loaded at run time
/// like cuBLAS ([`cuda_sys::cublaslt_with_origin`]), destroyed on drop.
///
/// Row-major C (M×N) = A (M×K) · Bᵀ (B stored N×K) is column-major
/// Cᵀ = B · Aᵀ: cuBLASLt's A is our B read column-major as K×N with
/// `OP_T`, its B our A read as K×M with `OP_N` ("TN", both K-major: the
/// layout cuBLASLt requires for FP8), m = N, n = M, ldc = N. Its A scale is
/// therefore our `scale_b` and its B scale our `scale_a`. Compute
/// `CUBLAS_COMPUTE_32F`, scale type, C and D f32 (`CUDA_R_32F`).
pub struct CublasLt<'c> {
    ctx: &'c Context,
    table: &'static cuda_sys::CublasLt,
    handle: cuda_sys::cublasLtHandle_t,
    version: usize,
    path: String,
}

impl std::fmt::Debug for CublasLt<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CublasLt")
            .field("version", &self.version)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Frees cuBLASLt objects (descriptors, layouts, preferences) on every
/// path out of [`CublasLt::time_fp8`].
struct LtObjects<'t> {
    t: &'t cuda_sys::CublasLt,
    desc: cuda_sys::cublaslt::cublasLtMatmulDesc_t,
    layouts: Vec<cuda_sys::cublaslt::cublasLtMatrixLayout_t>,
    pref: cuda_sys::cublaslt::cublasLtMatmulPreference_t,
}

impl Drop for LtObjects<'_> {
    fn drop(&mut self) {
        for &l in &self.layouts {
            // SAFETY: a layout this struct created and destroys once;
            // failures cannot be reported from drop and are ignored.
            let _ = unsafe { (self.t.cublasLtMatrixLayoutDestroy)(l) };
        }
        if !self.pref.is_null() {
            // SAFETY: as above, for the preference.
            let _ = unsafe { (self.t.cublasLtMatmulPreferenceDestroy)(self.pref) };
        }
        if !self.desc.is_null() {
            // SAFETY: as above, for the descriptor.
            let _ = unsafe { (self.t.cublasLtMatmulDescDestroy)(self.desc) };
        }
    }
}

impl<'c> CublasLt<'c> {
    /// Loads cuBLASLt and creates a handle, with `ctx` current.
    ///
    /// # Errors
    ///
    /// [`CublasError::NotFound`] when no libcublasLt loads;
    /// [`CublasError::Call`] when `cublasLtCreate` fails.
    pub fn new(ctx: &'c Context) -> Result<CublasLt<'c>, CublasError> {
        let (table, loaded) = cuda_sys::cublaslt_with_origin().map_err(CublasError::NotFound)?;
        make_current(ctx)?;
        let mut handle: cuda_sys::cublasLtHandle_t = std::ptr::null_mut();
        // SAFETY: a valid out-pointer; the context is current on this thread.
        let rc = unsafe { (table.cublasLtCreate)(&mut handle) };
        check_lt(table, "cublasLtCreate", rc)?;
        // SAFETY: takes no arguments, returns a number.
        let version = unsafe { (table.cublasLtGetVersion)() };
        Ok(CublasLt {
            ctx,
            table,
            handle,
            version,
            path: loaded.candidate.clone(),
        })
    }

    /// The library's version as `major.minor.patch`.
    pub fn version(&self) -> String {
        version_string(self.version)
    }

    /// Where the library was loaded from.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Runs C = alpha·scale_a·scale_b·A·Bᵀ + beta·C (row-major; A M×K and
    /// B N×K with rows `lda`/`ldb` elements apart, of FP8 types `a_type`
    /// and `b_type`; C f32 M×N packed; the scales device pointers to one
    /// f32 each) with `cublasLtMatmul`, `warmup` times untimed and `iters`
    /// times between events on `stream`, waits for the stream, and returns
    /// the times. `fast_accum` sets `CUBLASLT_MATMUL_DESC_FAST_ACCUM` (1:
    /// the tensor cores' accumulation only, as gemm_sm90.cu's FP8 kernels do).
    ///
    /// # Errors
    ///
    /// [`CublasError::InvalidArgument`] for a non-FP8 type, e5m2 × e5m2,
    /// a buffer of another context or too small; [`CublasError::Call`]
    /// (including `CUBLAS_STATUS_NOT_SUPPORTED` when the heuristic finds no
    /// algorithm); [`CublasError::Cudakit`] for events and synchronization.
    #[allow(clippy::too_many_arguments)]
    pub fn time_fp8<A: DeviceCopy, B: DeviceCopy>(
        &self,
        stream: &Stream<'_>,
        [m, n, k]: [usize; 3],
        (a, lda, a_type): (&DeviceBuffer<'_, A>, usize, crate::kernels::Elem),
        (b, ldb, b_type): (&DeviceBuffer<'_, B>, usize, crate::kernels::Elem),
        c: &DeviceBuffer<'_, f32>,
        (scale_a, scale_b): (&DeviceBuffer<'_, f32>, &DeviceBuffer<'_, f32>),
        (alpha, beta): (f64, f64),
        fast_accum: bool,
        (warmup, iters): (usize, usize),
    ) -> Result<Vec<Duration>, CublasError> {
        use crate::kernels::Elem;
        use cuda_sys::cublaslt::{
            cublasLtMatmulDescAttributes_t as Attr, cublasLtMatmulHeuristicResult_t,
            cublasLtMatmulPreferenceAttributes_t as Pref,
        };
        let bad = |m: String| Err(CublasError::InvalidArgument(m));
        let fp8 = |e: Elem| match e {
            Elem::E4m3 => Some(cudaDataType::CUDA_R_8F_E4M3),
            Elem::E5m2 => Some(cudaDataType::CUDA_R_8F_E5M2),
            _ => None,
        };
        let (Some(at), Some(bt)) = (fp8(a_type), fp8(b_type)) else {
            return bad(format!("{a_type:?} x {b_type:?} is not an FP8 product"));
        };
        if a_type == Elem::E5m2 && b_type == Elem::E5m2 {
            return bad("cuBLASLt has no e5m2 x e5m2".into());
        }
        if std::mem::size_of::<A>() != 1 || std::mem::size_of::<B>() != 1 {
            return bad("FP8 operands are one byte an element".into());
        }
        for (what, ctx) in [
            ("A", a.context()),
            ("B", b.context()),
            ("C", c.context()),
            ("scale_a", scale_a.context()),
            ("scale_b", scale_b.context()),
            ("the stream", stream.context()),
        ] {
            if !ctx.same(self.ctx) {
                return bad(format!("{what} belongs to another context"));
            }
        }
        let need = |rows: usize, ld: usize| if rows == 0 { 0 } else { (rows - 1) * ld + k };
        if lda < k.max(1) || a.len() < need(m, lda) || ldb < k.max(1) || b.len() < need(n, ldb) {
            return bad(format!("A ({} elements, ld {lda}) or B ({} elements, ld {ldb}) is too small for {m}x{n}x{k}", a.len(), b.len()));
        }
        if c.len() < m * n || scale_a.is_empty() || scale_b.is_empty() {
            return bad(format!(
                "C holds {} elements, not {m}x{n}, or a scale is missing",
                c.len()
            ));
        }
        if m == 0 || n == 0 {
            return Ok(vec![Duration::ZERO; iters]);
        }
        make_current(self.ctx)?;
        let t = self.table;
        let mut o = LtObjects {
            t,
            desc: std::ptr::null_mut(),
            layouts: Vec::new(),
            pref: std::ptr::null_mut(),
        };
        // SAFETY: a valid out-pointer and defined enum values.
        check_lt(t, "cublasLtMatmulDescCreate", unsafe {
            (t.cublasLtMatmulDescCreate)(
                &mut o.desc,
                Compute::CUBLAS_COMPUTE_32F,
                cudaDataType::CUDA_R_32F,
            )
        })?;
        let set = |attr: Attr, buf: *const c_void, size: usize| {
            // SAFETY: a live descriptor; `buf` points to `size` bytes of the
            // attribute's documented type, read during the call only.
            check_lt(t, "cublasLtMatmulDescSetAttribute", unsafe {
                (t.cublasLtMatmulDescSetAttribute)(o.desc, attr, buf, size)
            })
        };
        let trans_a = cublasOperation_t::CUBLAS_OP_T.0;
        let trans_b = cublasOperation_t::CUBLAS_OP_N.0;
        set(
            Attr::CUBLASLT_MATMUL_DESC_TRANSA,
            (&trans_a as *const c_int).cast(),
            4,
        )?;
        set(
            Attr::CUBLASLT_MATMUL_DESC_TRANSB,
            (&trans_b as *const c_int).cast(),
            4,
        )?;
        // cuBLASLt's A is our B, so its A scale is our scale_b.
        let sa_ptr = scale_b.device_ptr().as_raw() as usize as *const c_void;
        let sb_ptr = scale_a.device_ptr().as_raw() as usize as *const c_void;
        set(
            Attr::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
            (&sa_ptr as *const *const c_void).cast(),
            8,
        )?;
        set(
            Attr::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
            (&sb_ptr as *const *const c_void).cast(),
            8,
        )?;
        let fast: i8 = i8::from(fast_accum);
        set(
            Attr::CUBLASLT_MATMUL_DESC_FAST_ACCUM,
            (&fast as *const i8).cast(),
            1,
        )?;
        // Column-major layouts: cuBLASLt A = our B as K x N (ld ldb), its
        // B = our A as K x M (ld lda), C and D N x M (ld N).
        for (ty, rows, cols, ld) in [
            (bt, k, n, ldb),
            (at, k, m, lda),
            (cudaDataType::CUDA_R_32F, n, m, n),
        ] {
            let mut l = std::ptr::null_mut();
            // SAFETY: a valid out-pointer; dimensions are plain numbers.
            check_lt(t, "cublasLtMatrixLayoutCreate", unsafe {
                (t.cublasLtMatrixLayoutCreate)(
                    &mut l,
                    ty,
                    rows.max(1) as u64,
                    cols as u64,
                    ld as i64,
                )
            })?;
            o.layouts.push(l);
        }
        // SAFETY: a valid out-pointer.
        check_lt(t, "cublasLtMatmulPreferenceCreate", unsafe {
            (t.cublasLtMatmulPreferenceCreate)(&mut o.pref)
        })?;
        let workspace_bytes: u64 = 32 << 20;
        // SAFETY: a live preference; a u64 as the attribute documents.
        check_lt(t, "cublasLtMatmulPreferenceSetAttribute", unsafe {
            (t.cublasLtMatmulPreferenceSetAttribute)(
                o.pref,
                Pref::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&workspace_bytes as *const u64).cast(),
                8,
            )
        })?;
        let mut result = cublasLtMatmulHeuristicResult_t::default();
        let mut found: c_int = 0;
        // SAFETY: live handle, descriptor, layouts and preference; room for
        // the one result requested, and a valid count out-pointer.
        check_lt(t, "cublasLtMatmulAlgoGetHeuristic", unsafe {
            (t.cublasLtMatmulAlgoGetHeuristic)(
                self.handle,
                o.desc,
                o.layouts[0],
                o.layouts[1],
                o.layouts[2],
                o.layouts[2],
                o.pref,
                1,
                &mut result,
                &mut found,
            )
        })?;
        if found < 1 {
            return Err(CublasError::Call {
                call: "cublasLtMatmulAlgoGetHeuristic",
                status: cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED,
                message: "no algorithm for this FP8 problem".into(),
            });
        }
        let workspace = self.ctx.alloc::<u8>(result.workspaceSize.max(1))?;
        let (alpha32, beta32) = (alpha as f32, beta as f32);
        let matmul = || -> Result<(), CublasError> {
            // SAFETY: live handle, descriptor, layouts and algorithm; A, B,
            // C, the scales and the workspace are device memory of this
            // context (checked above) holding the documented dimensions and
            // pitches (checked above), of the layouts' types (one byte an
            // FP8 element, f32 C); alpha and beta point to host f32 values
            // (the default pointer mode) that outlive the call; D is C, in
            // place, which cublasLtMatmul allows with identical layouts.
            // The buffers stay borrowed until the stream is synchronized
            // below, before this function returns.
            let rc = unsafe {
                (t.cublasLtMatmul)(
                    self.handle,
                    o.desc,
                    (&alpha32 as *const f32).cast(),
                    b.device_ptr().as_raw() as usize as *const c_void,
                    o.layouts[0],
                    a.device_ptr().as_raw() as usize as *const c_void,
                    o.layouts[1],
                    (&beta32 as *const f32).cast(),
                    c.device_ptr().as_raw() as usize as *const c_void,
                    o.layouts[2],
                    c.device_ptr().as_raw() as usize as *mut c_void,
                    o.layouts[2],
                    &result.algo,
                    workspace.device_ptr().as_raw() as usize as *mut c_void,
                    result.workspaceSize,
                    stream.as_raw(),
                )
            };
            check_lt(t, "cublasLtMatmul", rc)
        };
        let times = time_calls(self.ctx, stream, (warmup, iters), matmul);
        drop(workspace);
        times
    }
}

impl Drop for CublasLt<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle is live and destroyed once; every call queued
        // through it finished before `time_fp8` returned. A failure cannot
        // be reported from drop and is ignored.
        let _ = unsafe { (self.table.cublasLtDestroy)(self.handle) };
    }
}

/// A failed cuBLASLt call as a [`CublasError::Call`].
fn check_lt(
    t: &cuda_sys::CublasLt,
    call: &'static str,
    status: cublasStatus_t,
) -> Result<(), CublasError> {
    check_status(t.cublasLtGetStatusString, call, status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precisions_map_to_the_documented_types() {
        assert_eq!(types(Precision::F32).2, Compute::CUBLAS_COMPUTE_32F);
        assert_eq!(
            types(Precision::Tf32).2,
            Compute::CUBLAS_COMPUTE_32F_FAST_TF32
        );
        assert_eq!(types(Precision::Bf16).0, cudaDataType::CUDA_R_16BF);
        assert_eq!(types(Precision::F16).1, cudaDataType::CUDA_R_32F);
        assert_eq!(types(Precision::F64).2, Compute::CUBLAS_COMPUTE_64F);
    }

    #[test]
    fn errors_read_well() {
        let e = CublasError::Call {
            call: "cublasGemmEx",
            status: cublasStatus_t::CUBLAS_STATUS_INVALID_VALUE,
            message: "an invalid numeric value was used as an argument".into(),
        };
        assert_eq!(
            e.to_string(),
            "cublasGemmEx: CUBLAS_STATUS_INVALID_VALUE (7): an invalid numeric value was used \
             as an argument"
        );
    }
}
