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

use std::ffi::{c_int, c_void, CStr};
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
        let v = self.version;
        format!("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)
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
        let events = (0..iters)
            .map(|_| Ok((self.ctx.timing_event()?, self.ctx.timing_event()?)))
            .collect::<cudakit::Result<Vec<_>>>()?;
        let queued = (|| {
            for _ in 0..warmup {
                gemm()?;
            }
            for (start, end) in &events {
                start.record(stream)?;
                gemm()?;
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
    if status == cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        return Ok(());
    }
    let message = match t.cublasGetStatusString {
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
