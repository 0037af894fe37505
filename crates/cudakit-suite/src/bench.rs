//! Benchmarks against the raw driver API, in the same run on the same
//! device: launch overhead, the argument check on its own, transfers, and
//! compilation. Each figure is the median of many timed batches, warm-up
//! excluded, raw and cudakit batches interleaved so that drift hits both.
//!
//! Used by `tests/benches/launch.rs` (`cargo bench -p cudakit-tests`) and by
//! `cudakit bench`.

use std::time::{Duration, Instant};

use cudakit::compile::program::Program;
use cudakit::work::launch::{LaunchConfig, ParamList};
use cudakit::{params, Context, Result};

/// One comparison: cudakit's time against the raw driver's, per operation.
#[derive(Debug, Clone)]
pub struct Row {
    /// What was measured.
    pub name: String,
    /// Median time per operation through cudakit.
    pub cudakit: Duration,
    /// Median time per operation through the raw driver API (None where
    /// there is no raw counterpart).
    pub raw: Option<Duration>,
    /// Batches timed.
    pub samples: usize,
}

impl Row {
    /// cudakit / raw.
    pub fn ratio(&self) -> Option<f64> {
        self.raw
            .map(|r| self.cudakit.as_secs_f64() / r.as_secs_f64())
    }
}

/// A raw driver call's result as cudakit's typed error, for the raw
/// baselines.
pub(crate) fn check(call: &'static str, rc: cudakit::sys::CUresult) -> Result<()> {
    cudakit::error::check(call, rc).map_err(cudakit::Error::Driver)
}

/// The median of the samples (the upper one of an even count).
pub(crate) fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The medians of `raw` and `kit` over `batches` batches each, the order
/// alternating from batch to batch so that neither side always runs first
/// (after the other's teardown, or its synchronize).
pub(crate) fn alternating_medians(
    batches: usize,
    mut raw: impl FnMut() -> Result<Duration>,
    mut kit: impl FnMut() -> Result<Duration>,
) -> Result<(Duration, Duration)> {
    let (mut r, mut k) = (Vec::new(), Vec::new());
    for i in 0..batches {
        if i % 2 == 0 {
            r.push(raw()?);
            k.push(kit()?);
        } else {
            k.push(kit()?);
            r.push(raw()?);
        }
    }
    Ok((median(r), median(k)))
}

const NOOP: &str = r#"
extern "C" __global__ void noop(float* p, int n) { if (n < 0) p[0] = 1.0f; }
"#;

/// Launch overhead: `batches` batches of `per_batch` launches of an empty
/// kernel, host time per launch, raw `cuLaunchKernel` against
/// `Scope::launch` (which marshals, checks the arguments against the
/// kernel and validates the configuration every time).
///
/// # Errors
///
/// Any cudakit error.
pub fn launch_overhead(ctx: &Context, batches: usize, per_batch: usize) -> Result<Vec<Row>> {
    let compiled = Program::new("noop.cu", NOOP).compile_for(ctx)?;
    let module = ctx.load_module(&compiled)?;
    let f = module.function("noop")?;
    let stream = ctx.stream()?;
    let buf = ctx.alloc::<f32>(1)?;
    let cfg = LaunchConfig::new(1, 32);
    let cu = cudakit::sys::driver()?;
    let n: i32 = 1;

    let raw_batch = || -> Result<Duration> {
        let mut ptr = buf.device_ptr().as_raw();
        let mut nn = n;
        let mut args: [*mut std::ffi::c_void; 2] =
            [(&mut ptr as *mut u64).cast(), (&mut nn as *mut i32).cast()];
        let t = Instant::now();
        for _ in 0..per_batch {
            // SAFETY: a live function and stream; `args` has one pointer per
            // parameter (float*, int), each to a live value of that size.
            let rc = unsafe {
                (cu.cuLaunchKernel)(
                    f.as_raw(),
                    1,
                    1,
                    1,
                    32,
                    1,
                    1,
                    0,
                    stream.as_raw(),
                    args.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            };
            cudakit::error::check("cuLaunchKernel", rc)?;
        }
        let elapsed = t.elapsed();
        stream.synchronize()?;
        Ok(elapsed / per_batch as u32)
    };
    let kit_batch = || -> Result<Duration> {
        let mut elapsed = Duration::ZERO;
        ctx.scope(|s| {
            let t = Instant::now();
            for _ in 0..per_batch {
                // SAFETY: noop writes nothing unless n < 0.
                unsafe { s.launch(&stream, &f, &cfg, &params![&buf, n])? };
            }
            elapsed = t.elapsed();
            Ok(())
        })?;
        Ok(elapsed / per_batch as u32)
    };
    // The same launches with the ParamList built once, outside the loop:
    // what the launch itself adds, apart from building its arguments.
    let prebuilt = params![&buf, n];
    let kit_prebuilt_batch = || -> Result<Duration> {
        let mut elapsed = Duration::ZERO;
        ctx.scope(|s| {
            let t = Instant::now();
            for _ in 0..per_batch {
                // SAFETY: noop writes nothing unless n < 0.
                unsafe { s.launch(&stream, &f, &cfg, &prebuilt)? };
            }
            elapsed = t.elapsed();
            Ok(())
        })?;
        Ok(elapsed / per_batch as u32)
    };
    // Warm-up.
    raw_batch()?;
    kit_batch()?;
    kit_prebuilt_batch()?;
    let (mut raw, mut kit, mut kit_prebuilt) = (Vec::new(), Vec::new(), Vec::new());
    // The order alternates, so that neither side always runs first after
    // the previous batch's synchronize.
    for i in 0..batches {
        if i % 2 == 0 {
            raw.push(raw_batch()?);
            kit.push(kit_batch()?);
            kit_prebuilt.push(kit_prebuilt_batch()?);
        } else {
            kit_prebuilt.push(kit_prebuilt_batch()?);
            kit.push(kit_batch()?);
            raw.push(raw_batch()?);
        }
    }

    // The check alone: argument count and sizes against cuFuncGetParamInfo.
    let p: ParamList<'_> = params![&buf, n];
    f.check_params(&p)?;
    let reps = 1_000_000;
    let mut checks = Vec::new();
    let mut builds = Vec::new();
    let mut validates = Vec::new();
    for _ in 0..batches {
        let t = Instant::now();
        for _ in 0..reps / 100 {
            std::hint::black_box(f.check_params(std::hint::black_box(&p)))?;
        }
        checks.push(t.elapsed() / (reps / 100) as u32);
        let t = Instant::now();
        for _ in 0..reps / 100 {
            std::hint::black_box(params![std::hint::black_box(&buf), std::hint::black_box(n)]);
        }
        builds.push(t.elapsed() / (reps / 100) as u32);
        let t = Instant::now();
        for _ in 0..reps / 100 {
            std::hint::black_box(f.validate(std::hint::black_box(&cfg)))?;
        }
        validates.push(t.elapsed() / (reps / 100) as u32);
    }
    // For reference: what asking the driver for the current context costs
    // (the query cudakit's launch and stream-ordered paths skip when the
    // thread's last `enter` was for the context), and setting it.
    let (mut gets, mut sets) = (Vec::new(), Vec::new());
    let mut current = std::ptr::null_mut();
    // SAFETY: a valid out-pointer.
    cudakit::error::check("cuCtxGetCurrent", unsafe {
        (cu.cuCtxGetCurrent)(&mut current)
    })?;
    for _ in 0..batches {
        let t = Instant::now();
        for _ in 0..reps / 100 {
            let mut c = std::ptr::null_mut();
            // SAFETY: a valid out-pointer.
            let rc = unsafe { (cu.cuCtxGetCurrent)(&mut c) };
            cudakit::error::check("cuCtxGetCurrent", rc)?;
            std::hint::black_box(c);
        }
        gets.push(t.elapsed() / (reps / 100) as u32);
        let t = Instant::now();
        for _ in 0..reps / 100 {
            // SAFETY: the context current now (the benchmark's own), set
            // again: nothing changes.
            let rc = unsafe { (cu.cuCtxSetCurrent)(current) };
            cudakit::error::check("cuCtxSetCurrent", rc)?;
        }
        sets.push(t.elapsed() / (reps / 100) as u32);
    }
    let raw_median = median(raw);
    Ok(vec![
        Row {
            name: "launch (host time per launch)".into(),
            cudakit: median(kit),
            raw: Some(raw_median),
            samples: batches,
        },
        Row {
            name: "  the same with the ParamList built once".into(),
            cudakit: median(kit_prebuilt),
            raw: Some(raw_median),
            samples: batches,
        },
        Row {
            name: "  of which: argument check".into(),
            cudakit: median(checks),
            raw: None,
            samples: batches,
        },
        Row {
            name: "  of which: build ParamList (2 args)".into(),
            cudakit: median(builds),
            raw: None,
            samples: batches,
        },
        Row {
            name: "  of which: validate configuration".into(),
            cudakit: median(validates),
            raw: None,
            samples: batches,
        },
        Row {
            name: "  for reference: driver cuCtxGetCurrent".into(),
            cudakit: median(gets),
            raw: None,
            samples: batches,
        },
        Row {
            name: "  for reference: driver cuCtxSetCurrent (same context)".into(),
            cudakit: median(sets),
            raw: None,
            samples: batches,
        },
    ])
}

/// Transfers of `bytes` between pinned host memory and the device, cudakit's
/// synchronous copies against raw `cuMemcpyHtoD_v2` / `cuMemcpyDtoH_v2` on
/// the same buffers.
///
/// # Errors
///
/// Any cudakit error.
pub fn transfers(ctx: &Context, bytes: usize, samples: usize) -> Result<Vec<Row>> {
    let n = bytes / 4;
    let mut host = ctx.alloc_pinned::<f32>(n)?;
    for (i, x) in host.iter_mut().enumerate() {
        *x = i as f32;
    }
    let dev = ctx.alloc::<f32>(n)?;
    let cu = cudakit::sys::driver()?;
    let raw_h2d = || -> Result<Duration> {
        let t = Instant::now();
        // SAFETY: both buffers hold `bytes` bytes.
        let rc =
            unsafe { (cu.cuMemcpyHtoD)(dev.device_ptr().as_raw(), host.as_ptr().cast(), n * 4) };
        cudakit::error::check("cuMemcpyHtoD_v2", rc)?;
        Ok(t.elapsed())
    };
    let kit_h2d = || -> Result<Duration> {
        let t = Instant::now();
        dev.copy_from_host(&host)?;
        Ok(t.elapsed())
    };
    let (mut r1, mut k1) = (Vec::new(), Vec::new());
    raw_h2d()?;
    kit_h2d()?;
    for _ in 0..samples {
        r1.push(raw_h2d()?);
        k1.push(kit_h2d()?);
    }
    let (mut r2, mut k2) = (Vec::new(), Vec::new());
    for _ in 0..samples + 1 {
        let t = Instant::now();
        // SAFETY: both buffers hold `bytes` bytes.
        let rc = unsafe {
            (cu.cuMemcpyDtoH)(host.as_mut_ptr().cast(), dev.device_ptr().as_raw(), n * 4)
        };
        cudakit::error::check("cuMemcpyDtoH_v2", rc)?;
        r2.push(t.elapsed());
        let t = Instant::now();
        dev.copy_to_host(&mut host)?;
        k2.push(t.elapsed());
    }
    r2.remove(0);
    k2.remove(0);
    let mb = bytes >> 20;
    Ok(vec![
        Row {
            name: format!("HtoD {mb} MiB pinned"),
            cudakit: median(k1),
            raw: Some(median(r1)),
            samples,
        },
        Row {
            name: format!("DtoH {mb} MiB pinned"),
            cudakit: median(k2),
            raw: Some(median(r2)),
            samples,
        },
    ])
}

/// Compilation: a cold compile through cudakit (cache off) against the raw
/// NVRTC calls with the same source and options, and a cache hit including
/// the module load.
///
/// # Errors
///
/// Any cudakit error.
pub fn compile(
    ctx: &Context,
    source: &str,
    name_expressions: &[&str],
    samples: usize,
) -> Result<Vec<Row>> {
    use cudakit::compile::cache::Cache;
    let mut program = Program::new("bench.cu", source);
    for e in name_expressions {
        program = program.name_expression(*e);
    }
    let cold = Cache::disabled();
    let warm = Cache::memory_only();
    let compiled = program.compile_for_with(ctx, &cold)?;
    let options: Vec<String> = compiled.options().to_vec();
    let nv = cudakit::sys::nvrtc()?;
    let raw_compile = || -> Result<Duration> {
        use std::ffi::CString;
        let t = Instant::now();
        let src =
            CString::new(source).map_err(|_| cudakit::Error::InteriorNul { what: "source" })?;
        let nm =
            CString::new("bench.cu").map_err(|_| cudakit::Error::InteriorNul { what: "name" })?;
        let mut prog = std::ptr::null_mut();
        // SAFETY: valid C strings; no headers.
        let rc = unsafe {
            (nv.nvrtcCreateProgram)(
                &mut prog,
                src.as_ptr(),
                nm.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            )
        };
        cudakit::error::check_nvrtc("nvrtcCreateProgram", rc)?;
        let exprs: Vec<CString> = name_expressions
            .iter()
            .map(|e| CString::new(*e).unwrap_or_default())
            .collect();
        for e in &exprs {
            // SAFETY: a live program and a C string.
            let rc = unsafe { (nv.nvrtcAddNameExpression)(prog, e.as_ptr()) };
            cudakit::error::check_nvrtc("nvrtcAddNameExpression", rc)?;
        }
        let opts: Vec<CString> = options
            .iter()
            .map(|o| CString::new(o.as_str()).unwrap_or_default())
            .collect();
        let ptrs: Vec<*const std::ffi::c_char> = opts.iter().map(|o| o.as_ptr()).collect();
        // SAFETY: a live program and `ptrs.len()` C strings.
        let rc = unsafe { (nv.nvrtcCompileProgram)(prog, ptrs.len() as i32, ptrs.as_ptr()) };
        cudakit::error::check_nvrtc("nvrtcCompileProgram", rc)?;
        let mut size = 0usize;
        // SAFETY: a compiled program, a valid out-pointer.
        let rc = unsafe { (nv.nvrtcGetCUBINSize)(prog, &mut size) };
        cudakit::error::check_nvrtc("nvrtcGetCUBINSize", rc)?;
        let mut cubin = vec![0u8; size];
        // SAFETY: `size` writable bytes.
        let rc = unsafe { (nv.nvrtcGetCUBIN)(prog, cubin.as_mut_ptr().cast()) };
        cudakit::error::check_nvrtc("nvrtcGetCUBIN", rc)?;
        for e in &exprs {
            let mut lowered = std::ptr::null();
            // SAFETY: a compiled program with this name expression.
            let rc = unsafe { (nv.nvrtcGetLoweredName)(prog, e.as_ptr(), &mut lowered) };
            cudakit::error::check_nvrtc("nvrtcGetLoweredName", rc)?;
        }
        // SAFETY: destroys the program created above.
        let rc = unsafe { (nv.nvrtcDestroyProgram)(&mut prog) };
        cudakit::error::check_nvrtc("nvrtcDestroyProgram", rc)?;
        Ok(t.elapsed())
    };
    let kit_cold = || -> Result<Duration> {
        let t = Instant::now();
        program.compile_for_with(ctx, &cold)?;
        Ok(t.elapsed())
    };
    program.compile_for_with(ctx, &warm)?;
    let kit_hit = || -> Result<Duration> {
        let t = Instant::now();
        let c = program.compile_for_with(ctx, &warm)?;
        let m = ctx.load_module(&c)?;
        let f = m.function(name_expressions.first().copied().unwrap_or("noop"))?;
        std::hint::black_box(f.as_raw());
        Ok(t.elapsed())
    };
    // The floor of a hit: the driver loading the same CUBIN, looking the
    // kernel up and unloading it, from bytes already in memory.
    // In 8-byte words, so that the image is aligned as an ELF file wants.
    let cubin_bytes = compiled.cubin().unwrap_or_default();
    let mut cubin = vec![0u64; cubin_bytes.len().div_ceil(8)];
    // SAFETY: `cubin` has at least `cubin_bytes.len()` bytes; distinct
    // allocations.
    unsafe {
        std::ptr::copy_nonoverlapping(
            cubin_bytes.as_ptr(),
            cubin.as_mut_ptr().cast::<u8>(),
            cubin_bytes.len(),
        )
    };
    let symbol = std::ffi::CString::new(
        compiled
            .lowered_name(name_expressions.first().copied().unwrap_or("noop"))
            .unwrap_or("noop"),
    )
    .map_err(|_| cudakit::Error::InteriorNul { what: "name" })?;
    let cu = cudakit::sys::driver()?;
    let raw_load = || -> Result<Duration> {
        let t = Instant::now();
        let mut module = std::ptr::null_mut();
        // SAFETY: a CUBIN image, 8-byte aligned, alive for the call; the
        // context is current (made so by compile_for_with above).
        cudakit::error::check("cuModuleLoadData", unsafe {
            (cu.cuModuleLoadData)(&mut module, cubin.as_ptr().cast())
        })?;
        let mut f = std::ptr::null_mut();
        // SAFETY: a live module, a C string, a valid out-pointer.
        let rc = unsafe { (cu.cuModuleGetFunction)(&mut f, module, symbol.as_ptr()) };
        // SAFETY: unloads the module loaded above, once.
        let unload = unsafe { (cu.cuModuleUnload)(module) };
        cudakit::error::check("cuModuleGetFunction", rc)?;
        cudakit::error::check("cuModuleUnload", unload)?;
        std::hint::black_box(f);
        Ok(t.elapsed())
    };
    let (mut raw, mut kit, mut hit, mut load) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..samples {
        raw.push(raw_compile()?);
        kit.push(kit_cold()?);
    }
    // Hits and raw loads in a loop of their own, alternating which goes
    // first: right after a cold compile, whichever ran first paid for
    // caches the compile had emptied.
    kit_hit()?;
    if !cubin.is_empty() {
        raw_load()?;
    }
    for i in 0..samples * 5 {
        if i % 2 == 0 || cubin.is_empty() {
            hit.push(kit_hit()?);
            if !cubin.is_empty() {
                load.push(raw_load()?);
            }
        } else {
            load.push(raw_load()?);
            hit.push(kit_hit()?);
        }
    }
    Ok(vec![
        Row {
            name: "compile (cold, cache off)".into(),
            cudakit: median(kit),
            raw: Some(median(raw)),
            samples,
        },
        Row {
            name: format!(
                "cache hit + module load + lookup (vs raw load of the {} KiB CUBIN)",
                cubin_bytes.len() / 1024
            ),
            cudakit: median(hit),
            raw: (!load.is_empty()).then(|| median(load)),
            samples: samples * 5,
        },
    ])
}

/// Prints rows as a table.
pub fn print(rows: &[Row]) {
    println!(
        "{:<40} {:>12} {:>12} {:>8} {:>6}",
        "benchmark", "cudakit", "raw", "ratio", "n"
    );
    for r in rows {
        let raw = r
            .raw
            .map(|d| format!("{d:.2?}"))
            .unwrap_or_else(|| "-".into());
        let ratio = r
            .ratio()
            .map(|x| format!("{x:.3}"))
            .unwrap_or_else(|| "-".into());
        println!(
            "{:<40} {:>12} {:>12} {:>8} {:>6}",
            r.name,
            format!("{:.2?}", r.cudakit),
            raw,
            ratio,
            r.samples
        );
    }
}
