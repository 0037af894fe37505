//! Benchmarks of graphs, stream-ordered memory and host callbacks against
//! the raw driver API, in the same process on the same device: replay of a
//! 1000-kernel graph per kernel, capture + instantiate of 1000 launches,
//! stream-ordered allocation + free (beside `cuMemAlloc` + `cuMemFree`),
//! and a host-callback round trip. Each figure is the median of `samples`
//! batches, warm-up excluded, raw and cudakit batches interleaved.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cudakit::compile::program::Program;
use cudakit::error::check;
use cudakit::sys::{CUgraph, CUgraphExec, CUstreamCaptureMode};
use cudakit::work::launch::LaunchConfig;
use cudakit::{params, Context, InstantiateOptions, Result};

use crate::bench::{median, Row};

const NOOP: &str = r#"
extern "C" __global__ void noop(float* p, int n) { if (n < 0) p[0] = 1.0f; }
"#;

/// Kernels per graph.
const KERNELS: usize = 1000;

unsafe extern "C" fn bump(user: *mut c_void) {
    // SAFETY: `user` points at an AtomicUsize that outlives the stream
    // synchronization after this callback's launch.
    unsafe { &*user.cast::<AtomicUsize>() }.fetch_add(1, Ordering::Relaxed);
}

/// The graph, pool and callback benchmarks; `samples` batches each.
///
/// # Errors
///
/// Any cudakit error.
pub fn graphs(ctx: &Context, samples: usize) -> Result<Vec<Row>> {
    let samples = samples.max(3);
    let compiled = Program::new("noop.cu", NOOP).compile_for(ctx)?;
    let module = ctx.load_module(&compiled)?;
    let f = module.function("noop")?;
    let stream = ctx.stream()?;
    let buf = ctx.alloc::<f32>(1)?;
    let cfg = LaunchConfig::new(1, 32);
    let cu = cudakit::sys::driver()?;
    let raw_stream = stream.as_raw();
    let n: i32 = 1;

    // --- raw capture + instantiate
    let raw_capture = || -> Result<(CUgraph, CUgraphExec, Duration)> {
        let mut ptr = buf.device_ptr().as_raw();
        let mut nn = n;
        let mut args: [*mut c_void; 2] =
            [(&mut ptr as *mut u64).cast(), (&mut nn as *mut i32).cast()];
        let t = Instant::now();
        // SAFETY: a live stream, not capturing; a defined mode.
        check("cuStreamBeginCapture_v2", unsafe {
            (cu.cuStreamBeginCapture)(
                raw_stream,
                CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            )
        })?;
        for _ in 0..KERNELS {
            // SAFETY: a live function and capturing stream; one pointer per
            // parameter (float*, int), each to a live value.
            check("cuLaunchKernel", unsafe {
                (cu.cuLaunchKernel)(
                    f.as_raw(),
                    1,
                    1,
                    1,
                    32,
                    1,
                    1,
                    0,
                    raw_stream,
                    args.as_mut_ptr(),
                    std::ptr::null_mut(),
                )
            })?;
        }
        let mut g: CUgraph = std::ptr::null_mut();
        // SAFETY: the stream is capturing (begun above); valid out-pointer.
        check("cuStreamEndCapture", unsafe {
            (cu.cuStreamEndCapture)(raw_stream, &mut g)
        })?;
        let mut e: CUgraphExec = std::ptr::null_mut();
        // SAFETY: a live graph; flags 0.
        check("cuGraphInstantiateWithFlags", unsafe {
            (cu.cuGraphInstantiate)(&mut e, g, 0)
        })?;
        Ok((g, e, t.elapsed()))
    };
    let raw_destroy = |g: CUgraph, e: CUgraphExec| {
        // SAFETY: made by raw_capture, destroyed once, not running.
        unsafe {
            let _ = (cu.cuGraphExecDestroy)(e);
        }
        // SAFETY: as above.
        unsafe {
            let _ = (cu.cuGraphDestroy)(g);
        }
    };

    // --- capture + instantiate, and replay
    let (mut cap_raw, mut cap_kit, mut rep_raw, mut rep_kit) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let raw_round = || -> Result<(Duration, Duration)> {
        let (g, e, t_raw) = raw_capture()?;
        stream.synchronize()?;
        // Replay: launch + wait, per kernel.
        // SAFETY: a live executable graph and stream.
        check("cuGraphLaunch", unsafe {
            (cu.cuGraphLaunch)(e, raw_stream)
        })?;
        stream.synchronize()?;
        let t = Instant::now();
        // SAFETY: as above.
        check("cuGraphLaunch", unsafe {
            (cu.cuGraphLaunch)(e, raw_stream)
        })?;
        stream.synchronize()?;
        let r_raw = t.elapsed() / KERNELS as u32;
        raw_destroy(g, e);
        Ok((t_raw, r_raw))
    };
    let kit_round = || -> Result<(Duration, Duration)> {
        let mut t_kit = Duration::ZERO;
        let mut r_kit = Duration::ZERO;
        ctx.scope(|s| {
            let t = Instant::now();
            let graph = s.capture(&stream, || {
                for _ in 0..KERNELS {
                    // SAFETY: noop writes nothing unless n < 0.
                    unsafe { s.launch(&stream, &f, &cfg, &params![&buf, n])? };
                }
                Ok(())
            })?;
            let exec = graph.instantiate(InstantiateOptions::default())?;
            t_kit = t.elapsed();
            s.launch_graph(&stream, &exec)?;
            stream.synchronize()?;
            let t = Instant::now();
            s.launch_graph(&stream, &exec)?;
            stream.synchronize()?;
            r_kit = t.elapsed() / KERNELS as u32;
            Ok(())
        })?;
        Ok((t_kit, r_kit))
    };
    for round in 0..=samples {
        // The order alternates, so that neither side always follows the
        // other's teardown.
        let ((t_raw, r_raw), (t_kit, r_kit)) = if round % 2 == 0 {
            let r = raw_round()?;
            (r, kit_round()?)
        } else {
            let k = kit_round()?;
            (raw_round()?, k)
        };
        if round > 0 {
            cap_raw.push(t_raw);
            cap_kit.push(t_kit);
            rep_raw.push(r_raw);
            rep_kit.push(r_kit);
        }
    }

    // --- stream-ordered alloc + free, and cuMemAlloc + cuMemFree
    let pool = ctx.default_pool()?;
    pool.set_release_threshold(u64::MAX)?;
    let per_batch = 1000usize;
    let bytes = 1 << 20;
    let (mut so_raw, mut so_kit, mut ma_raw, mut ma_kit) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for round in 0..=samples {
        let t = Instant::now();
        for _ in 0..per_batch {
            let mut p = 0u64;
            // SAFETY: a valid out-pointer, a non-zero size, a live stream.
            check("cuMemAllocAsync", unsafe {
                (cu.cuMemAllocAsync)(&mut p, bytes, raw_stream)
            })?;
            // SAFETY: frees the allocation just made, once, on its stream.
            check("cuMemFreeAsync", unsafe {
                (cu.cuMemFreeAsync)(p, raw_stream)
            })?;
        }
        let r = t.elapsed() / per_batch as u32;
        stream.synchronize()?;
        let t = Instant::now();
        for _ in 0..per_batch {
            drop(pool.alloc::<u8>(&stream, bytes)?);
        }
        let k = t.elapsed() / per_batch as u32;
        stream.synchronize()?;
        let few = 20;
        let t = Instant::now();
        for _ in 0..few {
            let mut p = 0u64;
            // SAFETY: a valid out-pointer and a non-zero size.
            check("cuMemAlloc_v2", unsafe { (cu.cuMemAlloc)(&mut p, bytes) })?;
            // SAFETY: frees the allocation just made, once.
            check("cuMemFree_v2", unsafe { (cu.cuMemFree)(p) })?;
        }
        let mr = t.elapsed() / few;
        let t = Instant::now();
        for _ in 0..few {
            drop(ctx.alloc::<u8>(bytes)?);
        }
        let mk = t.elapsed() / few;
        if round > 0 {
            so_raw.push(r);
            so_kit.push(k);
            ma_raw.push(mr);
            ma_kit.push(mk);
        }
    }

    // --- host callback round trip
    let counter = AtomicUsize::new(0);
    let trips = 200u32;
    let (mut cb_raw, mut cb_kit) = (Vec::new(), Vec::new());
    for round in 0..=samples {
        let t = Instant::now();
        for _ in 0..trips {
            // SAFETY: a live stream; `bump` only touches `counter`, which
            // outlives the synchronization right after.
            check("cuLaunchHostFunc", unsafe {
                (cu.cuLaunchHostFunc)(
                    raw_stream,
                    Some(bump),
                    (&counter as *const AtomicUsize).cast_mut().cast(),
                )
            })?;
            stream.synchronize()?;
        }
        let r = t.elapsed() / trips;
        let t = Instant::now();
        for _ in 0..trips {
            ctx.scope(|s| {
                s.host_fn(&stream, || {
                    counter.fetch_add(1, Ordering::Relaxed);
                })
            })?;
        }
        let k = t.elapsed() / trips;
        if round > 0 {
            cb_raw.push(r);
            cb_kit.push(k);
        }
    }

    Ok(vec![
        Row {
            name: format!("graph replay, {KERNELS} kernels (per kernel)"),
            cudakit: median(rep_kit),
            raw: Some(median(rep_raw)),
            samples,
        },
        Row {
            name: format!("capture + instantiate, {KERNELS} launches"),
            cudakit: median(cap_kit),
            raw: Some(median(cap_raw)),
            samples,
        },
        Row {
            name: "stream-ordered alloc + free, 1 MiB (default pool)".into(),
            cudakit: median(so_kit),
            raw: Some(median(so_raw)),
            samples,
        },
        Row {
            name: "  beside: cuMemAlloc + cuMemFree, 1 MiB".into(),
            cudakit: median(ma_kit),
            raw: Some(median(ma_raw)),
            samples,
        },
        Row {
            name: "host callback round trip".into(),
            cudakit: median(cb_kit),
            raw: Some(median(cb_raw)),
            samples,
        },
    ])
}
