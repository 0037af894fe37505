//! Benchmarks of the launch features of issue 21, each beside its baseline
//! in the same process on the same device (median of `samples` batches,
//! warm-up excluded, the two sides alternating which goes first):
//!
//! - a launch with the programmatic attribute, host time, against a raw
//!   `cuLaunchKernelEx` with the same attribute;
//! - 1000 dependent kernels, time per kernel, chained with programmatic
//!   dependent launch against the same chain without it (the gain);
//! - 1000 copies of 4 KiB from pinned memory to the device in one batch
//!   (`Scope::copy_batch`) against the raw `cuMemcpyBatchAsync_v2` (each
//!   timed from building its arrays, or its batch, to the stream's end), and
//!   1000 single async copies against that raw batch;
//! - a kernel that re-reads a 40 MiB buffer 100 times with a persisting L2
//!   window against the same kernel without one (the gain);
//! - a while-loop graph of 1000 iterations (a conditional node whose body
//!   counts and sets the condition) against 1000 host-side replays of its
//!   body as a graph of its own (both: one launch batch and its wait).
//!
//! The "raw" column holds each row's baseline; the row's name says which.

use std::ffi::c_void;
use std::time::{Duration, Instant};

use cudakit::compile::linker::{LinkOptions, Linker};
use cudakit::compile::program::Program;
use cudakit::error::check;
use cudakit::sys::{
    CUlaunchAttribute, CUlaunchAttributeID, CUlaunchAttributeValue, CUlaunchConfig, CUmemLocation,
    CUmemcpyAttributes, CUmemcpySrcAccessOrder,
};
use cudakit::{
    params, AccessPolicyWindow, Context, CopyBatch, Error, InstantiateOptions, LaunchConfig, Result,
};

use crate::bench::{alternating_medians, Row};
use crate::kernels::{CONDITIONAL, PDL};

const NOOP: &str = r#"
extern "C" __global__ void noop(float* p, int n) { if (n < 0) p[0] = 1.0f; }
"#;

/// The launch-feature benchmarks; rows a device cannot run (programmatic
/// launch below sm_90, no batched copies) are left out and named in the
/// returned list of what was not run.
///
/// # Errors
///
/// Any cudakit error.
pub fn features(ctx: &Context, samples: usize) -> Result<(Vec<Row>, Vec<String>)> {
    let samples = samples.max(3);
    let mut rows = Vec::new();
    let mut not_run = Vec::new();
    let cu = cudakit::sys::driver()?;
    let stream = ctx.stream()?;
    let raw_stream = stream.as_raw();
    let sm90 = ctx.limits().compute_capability.0 >= 9;

    // --- the programmatic attribute on the launch path, host time.
    if sm90 {
        let module = ctx.load_module(&Program::new("noop.cu", NOOP).compile_for(ctx)?)?;
        let f = module.function("noop")?;
        let buf = ctx.alloc::<f32>(1)?;
        let per_batch = 2000;
        let cfg = LaunchConfig::new(1, 32).programmatic();
        let ex = cu.cuLaunchKernelEx.ok_or(Error::NotSupported {
            feature: "cuLaunchKernelEx",
            needs_driver: "CUDA 11.8",
        })?;
        let raw = || -> Result<Duration> {
            let mut ptr = buf.device_ptr().as_raw();
            let mut n = 1i32;
            let mut args: [*mut c_void; 2] =
                [(&mut ptr as *mut u64).cast(), (&mut n as *mut i32).cast()];
            let mut attr = CUlaunchAttribute {
                id: CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION,
                pad: [0; 4],
                value: CUlaunchAttributeValue { pad: [0; 64] },
            };
            attr.value.programmaticStreamSerializationAllowed = 1;
            let config = CUlaunchConfig {
                gridDimX: 1,
                gridDimY: 1,
                gridDimZ: 1,
                blockDimX: 32,
                blockDimY: 1,
                blockDimZ: 1,
                sharedMemBytes: 0,
                hStream: raw_stream,
                attrs: &mut attr,
                numAttrs: 1,
            };
            let t = Instant::now();
            for _ in 0..per_batch {
                // SAFETY: a live function and stream; one pointer per
                // parameter (float*, int), each to a live value; one
                // attribute whose member matches its ID.
                check("cuLaunchKernelEx", unsafe {
                    ex(&config, f.as_raw(), args.as_mut_ptr(), std::ptr::null_mut())
                })?;
            }
            let e = t.elapsed();
            stream.synchronize()?;
            Ok(e / per_batch)
        };
        let kit = || -> Result<Duration> {
            let mut e = Duration::ZERO;
            let p = params![&buf, 1i32];
            ctx.scope(|s| {
                let t = Instant::now();
                for _ in 0..per_batch {
                    // SAFETY: noop writes nothing unless n < 0.
                    unsafe { s.launch(&stream, &f, &cfg, &p)? };
                }
                e = t.elapsed();
                Ok(())
            })?;
            Ok(e / per_batch)
        };
        raw()?;
        kit()?;
        let (r, k) = alternating_medians(samples.max(21), raw, kit)?;
        rows.push(Row {
            name: "launch with the programmatic attribute (host time; raw cuLaunchKernelEx)".into(),
            cudakit: k,
            raw: Some(r),
            samples: samples.max(21),
        });
    } else {
        not_run.push("programmatic launch rows: the device is below sm_90".into());
    }

    // --- 1000 dependent kernels, with and without programmatic launch.
    if sm90 {
        let module = ctx.load_module(&Program::new("pdl.cu", PDL).compile_for(ctx)?)?;
        let f = module.function("pdl_step")?;
        let n = 4096usize;
        let x = ctx.upload(&vec![1.0f32; n])?;
        let y = ctx.alloc::<f32>(n)?;
        let chain = |programmatic: bool| -> Result<Duration> {
            let mut cfg = LaunchConfig::for_elements(n, 128)?;
            if programmatic {
                cfg = cfg.programmatic();
            }
            let t = Instant::now();
            ctx.scope(|s| {
                for k in 0..1000 {
                    let (src, dst) = if k % 2 == 0 { (&x, &y) } else { (&y, &x) };
                    // SAFETY: pdl_step reads n floats of src, writes n of dst.
                    unsafe {
                        s.launch(
                            &stream,
                            &f,
                            &cfg,
                            &params![src, dst, n as i32, 0.5f32, 0.25f32],
                        )?
                    };
                }
                Ok(())
            })?;
            Ok(t.elapsed() / 1000)
        };
        chain(false)?;
        chain(true)?;
        let (plain, pdl) = alternating_medians(samples, || chain(false), || chain(true))?;
        rows.push(Row {
            name: "1000 dependent kernels, time per kernel: programmatic (raw: the plain chain)"
                .into(),
            cudakit: pdl,
            raw: Some(plain),
            samples,
        });
    }

    // --- 1000 x 4 KiB pinned -> device: one batch, raw batch, single copies.
    match cu.cuMemcpyBatchAsync {
        Some(raw_batch) => {
            let count = 1000usize;
            let bytes = 4096usize;
            let src: Vec<_> = (0..count)
                .map(|k| {
                    let mut p = ctx.alloc_pinned::<u8>(bytes)?;
                    p.fill(k as u8);
                    Ok(p)
                })
                .collect::<Result<_>>()?;
            let dst: Vec<_> = (0..count)
                .map(|_| ctx.alloc::<u8>(bytes))
                .collect::<Result<_>>()?;
            // Both sides are timed from their arrays up: a raw caller builds
            // the three arrays, cudakit's builds the batch.
            let raw = || -> Result<Duration> {
                let t = Instant::now();
                let mut d: Vec<u64> = dst.iter().map(|b| b.device_ptr().as_raw()).collect();
                let mut s: Vec<u64> = src.iter().map(|p| p.as_ptr() as usize as u64).collect();
                let mut sizes = vec![bytes; count];
                let mut attrs = [CUmemcpyAttributes {
                    srcAccessOrder: CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
                    srcLocHint: CUmemLocation::default(),
                    dstLocHint: CUmemLocation::default(),
                    flags: 0,
                }];
                let mut idx = [0usize];
                // SAFETY: `count` live ranges of `bytes` each on both sides
                // (pinned sources, device destinations); one attribute; a
                // live stream, synchronized before the buffers can go.
                check("cuMemcpyBatchAsync_v2", unsafe {
                    raw_batch(
                        d.as_mut_ptr(),
                        s.as_mut_ptr(),
                        sizes.as_mut_ptr(),
                        count,
                        attrs.as_mut_ptr(),
                        idx.as_mut_ptr(),
                        1,
                        raw_stream,
                    )
                })?;
                stream.synchronize()?;
                Ok(t.elapsed())
            };
            let kit = || -> Result<Duration> {
                let t = Instant::now();
                ctx.scope(|sc| {
                    let mut b = CopyBatch::with_capacity(count);
                    for (p, d) in src.iter().zip(&dst) {
                        b.to_device(&p[..], d)?;
                    }
                    sc.copy_batch(&stream, b)
                })?;
                Ok(t.elapsed())
            };
            let singles = || -> Result<Duration> {
                let t = Instant::now();
                for (p, d) in src.iter().zip(&dst) {
                    // SAFETY: a pinned source and a device destination of
                    // `bytes` each, live until the synchronize below.
                    check("cuMemcpyHtoDAsync_v2", unsafe {
                        (cu.cuMemcpyHtoDAsync)(
                            d.device_ptr().as_raw(),
                            p.as_ptr().cast(),
                            bytes,
                            raw_stream,
                        )
                    })?;
                }
                stream.synchronize()?;
                Ok(t.elapsed())
            };
            raw()?;
            kit()?;
            singles()?;
            let (r, k) = alternating_medians(samples, raw, kit)?;
            rows.push(Row {
                name: "1000 x 4 KiB pinned to device in one batch (copy_batch; raw batch)".into(),
                cudakit: k,
                raw: Some(r),
                samples,
            });
            let (r, s1) = alternating_medians(samples, raw, singles)?;
            rows.push(Row {
                name: "1000 x 4 KiB pinned to device as 1000 async copies (raw: one batch)".into(),
                cudakit: s1,
                raw: Some(r),
                samples,
            });
        }
        None => not_run.push("batched copies: the driver lacks cuMemcpyBatchAsync_v2".into()),
    }

    // --- a 40 MiB buffer re-read 100 times, with and without a window.
    let max_window = ctx.device().attribute(
        cudakit::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE,
    )? as usize;
    let max_persist = ctx.device().attribute(
        cudakit::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE,
    )? as usize;
    if max_window >= 40 << 20 && max_persist > 0 {
        let module = ctx.load_module(&Program::new("pdl.cu", PDL).compile_for(ctx)?)?;
        let f = module.function("l2_reread")?;
        let n = (40 << 20) / 4;
        let buf = ctx.upload(&vec![0.5f32; n])?;
        let out = ctx.alloc::<f32>(n)?;
        ctx.set_persisting_l2_limit(max_persist)?;
        let window = AccessPolicyWindow::over(&buf)
            .hit_ratio((max_persist as f32 / (40u32 << 20) as f32).min(1.0));
        let run = |with: bool| -> Result<Duration> {
            let mut cfg = LaunchConfig::for_elements(n, 256)?;
            if with {
                cfg = cfg.access_policy(window);
            }
            let t = Instant::now();
            ctx.scope(|s| {
                // SAFETY: l2_reread reads n floats of buf, writes n of out.
                unsafe {
                    s.launch(
                        &stream,
                        &f,
                        &cfg,
                        &params![&buf, &out, n as i32, 100i32, 4099i32],
                    )
                }
            })?;
            Ok(t.elapsed())
        };
        run(false)?;
        run(true)?;
        let (without, with) = alternating_medians(samples, || run(false), || run(true))?;
        ctx.set_persisting_l2_limit(0)?;
        rows.push(Row {
            name: "40 MiB re-read 100x with a persisting L2 window (raw: no window)".into(),
            cudakit: with,
            raw: Some(without),
            samples,
        });
    } else {
        not_run.push(format!(
            "L2 window row: the device allows a {max_window}-byte window and a \
             {max_persist}-byte persisting set-aside"
        ));
    }
    // --- a while loop of 1000 iterations against 1000 replays of its body.
    if cudakit::driver_version()? >= (12, 3) {
        rows.push(while_loop(ctx, &stream, samples)?);
    } else {
        not_run.push("while-loop graph row: conditional nodes need a CUDA 12.3 driver".into());
    }
    Ok((rows, not_run))
}

/// A while-loop graph of 1000 iterations (`cond_count` as the body, which
/// ends the loop at 1000) against 1000 host launches of a graph holding
/// only that body (`cond_count` with a null handle), each side one scope:
/// its launches and its wait.
fn while_loop(ctx: &Context, stream: &cudakit::Stream<'_>, samples: usize) -> Result<Row> {
    let iterations = 1000u32;
    let compiled = Program::new("conditional.cu", CONDITIONAL)
        .relocatable_device_code(true)
        .compile_for(ctx)?;
    let mut linker = Linker::with_device_runtime(ctx, &LinkOptions::new())?;
    linker.add_compiled(&compiled)?;
    let module = linker.complete()?;
    let f = module.function("cond_count")?;
    let count = ctx.alloc::<u32>(1)?;
    let one = LaunchConfig::new(1, 32);
    let mut looped = ctx.graph()?;
    let cond = looped.condition(Some(1))?;
    let zero = looped.add_memset(&count, 0u32, &[])?;
    let (_, mut body) = looped.add_while(&cond, &[zero])?;
    // SAFETY: one thread reads and writes one u32 of `count`; the handle is
    // the graph's.
    unsafe { body.add_kernel(&f, &one, &params![&cond, &count, iterations], &[])? };
    let loop_exec = looped.instantiate(InstantiateOptions::default().label("while 1000"))?;
    let mut alone = ctx.graph()?;
    // SAFETY: as above; a null handle sets no condition.
    unsafe { alone.add_kernel(&f, &one, &params![0u64, &count, iterations], &[])? };
    let body_exec = alone.instantiate(InstantiateOptions::default().label("while body"))?;
    let run_loop = || -> Result<Duration> {
        let t = Instant::now();
        ctx.scope(|s| s.launch_graph(stream, &loop_exec))?;
        let e = t.elapsed();
        let got = count.to_vec()?[0];
        if got != iterations {
            return Err(Error::InvalidArgument(format!(
                "while-loop graph: {got} iterations ran, not {iterations}"
            )));
        }
        Ok(e)
    };
    let replays = || -> Result<Duration> {
        let t = Instant::now();
        ctx.scope(|s| {
            for _ in 0..iterations {
                s.launch_graph(stream, &body_exec)?;
            }
            Ok(())
        })?;
        Ok(t.elapsed())
    };
    run_loop()?;
    replays()?;
    let (raw, kit) = alternating_medians(samples, replays, run_loop)?;
    Ok(Row {
        name: "while-loop graph, 1000 iterations, whole loop (raw: 1000 host replays of its body)"
            .into(),
        cudakit: kit,
        raw: Some(raw),
        samples,
    })
}
