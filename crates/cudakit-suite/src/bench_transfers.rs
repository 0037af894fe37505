//! Transfer and load benchmarks of issue 14, each beside its raw baseline
//! measured in the same run: pageable copies through the staged pipeline
//! against the raw driver's pinned rate (the goal: at least 0.8 of it), the
//! raw driver's own pageable copies for reference, both directions at once
//! (pinned and pageable), and module loading.

use std::time::{Duration, Instant};

use cudakit::compile::program::Program;
use cudakit::memory::staged::{self, PageablePolicy};
use cudakit::{Context, Result};

use crate::bench::{check, median, Row};

/// Times `f` `samples` times after one warm-up run.
fn timed(samples: usize, mut f: impl FnMut() -> Result<()>) -> Result<Vec<Duration>> {
    f()?;
    let mut out = Vec::with_capacity(samples);
    for _ in 0..samples {
        let t = Instant::now();
        f()?;
        out.push(t.elapsed());
    }
    Ok(out)
}

/// Pageable transfers of `bytes` (one direction at a time): cudakit
/// (`copy_from_host` / `copy_to_host` of a `Vec`, staged above 8 MiB)
/// against the raw driver's pinned copies of the same size; and the raw
/// driver's pageable copies, for reference.
///
/// # Errors
///
/// Any cudakit or driver error.
pub fn pageable(ctx: &Context, bytes: usize, samples: usize) -> Result<Vec<Row>> {
    let cu = cudakit::sys::driver()?;
    let dev = ctx.alloc::<u8>(bytes)?;
    let mut pinned = ctx.alloc_pinned::<u8>(bytes)?;
    let mut pageable: Vec<u8> = (0..bytes).map(|i| (i * 7) as u8).collect();
    pinned.copy_from_slice(&pageable);
    let d = dev.device_ptr().as_raw();
    let mut rows = Vec::new();
    let mb = bytes >> 20;
    // Host to device.
    let (mut raw_pinned, mut raw_pageable, mut kit) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..2 {
        // Interleaved, so that drift hits all three.
        raw_pinned.extend(timed(samples / 2 + 1, || {
            // SAFETY: both hold `bytes` bytes.
            check("cuMemcpyHtoD_v2", unsafe {
                (cu.cuMemcpyHtoD)(d, pinned.as_ptr().cast(), bytes)
            })
        })?);
        raw_pageable.extend(timed(samples / 2 + 1, || {
            // SAFETY: both hold `bytes` bytes.
            check("cuMemcpyHtoD_v2", unsafe {
                (cu.cuMemcpyHtoD)(d, pageable.as_ptr().cast(), bytes)
            })?;
            // SAFETY: the legacy stream, where the copy may still land.
            check("cuStreamSynchronize", unsafe {
                (cu.cuStreamSynchronize)(std::ptr::null_mut())
            })
        })?);
        kit.extend(timed(samples / 2 + 1, || dev.copy_from_host(&pageable))?);
    }
    let raw_pageable_h2d = median(raw_pageable);
    rows.push(Row {
        name: format!("HtoD {mb} MiB pageable (vs raw pinned)"),
        cudakit: median(kit),
        raw: Some(median(raw_pinned)),
        samples,
    });
    // Device to host.
    let (mut raw_pinned, mut raw_pageable, mut kit) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..2 {
        raw_pinned.extend(timed(samples / 2 + 1, || {
            // SAFETY: both hold `bytes` bytes.
            check("cuMemcpyDtoH_v2", unsafe {
                (cu.cuMemcpyDtoH)(pinned.as_mut_ptr().cast(), d, bytes)
            })
        })?);
        raw_pageable.extend(timed(samples / 2 + 1, || {
            // SAFETY: both hold `bytes` bytes.
            check("cuMemcpyDtoH_v2", unsafe {
                (cu.cuMemcpyDtoH)(pageable.as_mut_ptr().cast(), d, bytes)
            })
        })?);
        kit.extend(timed(samples / 2 + 1, || dev.copy_to_host(&mut pageable))?);
    }
    rows.push(Row {
        name: format!("DtoH {mb} MiB pageable (vs raw pinned)"),
        cudakit: median(kit),
        raw: Some(median(raw_pinned)),
        samples,
    });
    // The host side alone: what bounds a staged transfer when the DMA is
    // faster than the copies.
    let mut other = vec![0u8; bytes];
    let threads = timed(samples, || staged::host_copy(&mut other, &pageable))?;
    let single = timed(samples, || {
        other.copy_from_slice(&pageable);
        Ok(())
    })?;
    let streaming = staged::streaming_copies();
    staged::set_streaming_copies(!streaming);
    let flipped = timed(samples, || staged::host_copy(&mut other, &pageable));
    staged::set_streaming_copies(streaming);
    let flipped = flipped?;
    let (on, off) = if streaming {
        (threads, flipped)
    } else {
        (flipped, threads)
    };
    rows.push(Row {
        name: format!("  host copy alone, {mb} MiB pageable, copy threads"),
        cudakit: median(on),
        raw: None,
        samples,
    });
    rows.push(Row {
        name: "  the same with plain stores (not streaming)".into(),
        cudakit: median(off),
        raw: None,
        samples,
    });
    rows.push(Row {
        name: format!("  host copy alone, {mb} MiB pageable, one thread"),
        cudakit: median(single),
        raw: None,
        samples,
    });
    rows.push(Row {
        name: format!("  raw driver HtoD {mb} MiB pageable"),
        cudakit: raw_pageable_h2d,
        raw: None,
        samples,
    });
    rows.push(Row {
        name: format!("  raw driver DtoH {mb} MiB pageable"),
        cudakit: median(raw_pageable),
        raw: None,
        samples,
    });
    Ok(rows)
}

/// Both directions at once, `bytes` each way: pinned through a scope with
/// two streams against raw async copies on two streams; pageable from two
/// threads (staged) against the same raw pinned pair.
///
/// # Errors
///
/// Any cudakit or driver error.
pub fn bidirectional(ctx: &Context, bytes: usize, samples: usize) -> Result<Vec<Row>> {
    let cu = cudakit::sys::driver()?;
    let up_dev = ctx.alloc::<u8>(bytes)?;
    let down_dev = ctx.alloc::<u8>(bytes)?;
    let up_pinned = ctx.alloc_pinned::<u8>(bytes)?;
    let mut down_pinned = ctx.alloc_pinned::<u8>(bytes)?;
    let mut up_pageable = vec![3u8; bytes];
    let mut down_pageable = vec![0u8; bytes];
    let (s1, s2) = (ctx.stream()?, ctx.stream()?);
    let (a, b) = (s1.as_raw(), s2.as_raw());
    let (ud, dd) = (up_dev.device_ptr().as_raw(), down_dev.device_ptr().as_raw());
    // The raw pair writes the pinned buffer through a raw pointer, taken
    // once; the cudakit pair borrows the buffer in turn, never at once.
    let down_raw = down_pinned.as_mut_ptr();
    let raw = || -> Result<()> {
        // SAFETY: pinned buffers and device buffers of `bytes` bytes each,
        // live until both streams are synchronized below.
        check("cuMemcpyHtoDAsync_v2", unsafe {
            (cu.cuMemcpyHtoDAsync)(ud, up_pinned.as_ptr().cast(), bytes, a)
        })?;
        // SAFETY: as above.
        check("cuMemcpyDtoHAsync_v2", unsafe {
            (cu.cuMemcpyDtoHAsync)(down_raw.cast(), dd, bytes, b)
        })?;
        // SAFETY: live streams.
        check("cuStreamSynchronize", unsafe {
            (cu.cuStreamSynchronize)(a)
        })?;
        // SAFETY: live streams.
        check("cuStreamSynchronize", unsafe {
            (cu.cuStreamSynchronize)(b)
        })
    };
    let both = |down: &mut cudakit::PinnedBuffer<'_, u8>| -> Result<()> {
        ctx.scope(|s| {
            s.copy_to_device(&s1, &up_pinned, &up_dev)?;
            s.copy_to_host(&s2, &down_dev, down)?;
            Ok(())
        })
    };
    raw()?;
    both(&mut down_pinned)?;
    let (mut raw_t, mut kit) = (Vec::with_capacity(samples), Vec::with_capacity(samples));
    for _ in 0..samples {
        let t = Instant::now();
        both(&mut down_pinned)?;
        kit.push(t.elapsed());
        let t = Instant::now();
        raw()?;
        raw_t.push(t.elapsed());
    }
    let raw_both = median(raw_t);
    let mb = bytes >> 20;
    let mut rows = vec![Row {
        name: format!("both ways {mb} MiB pinned"),
        cudakit: median(kit),
        raw: Some(raw_both),
        samples,
    }];
    // Pageable both ways, from two threads through the synchronous copies,
    // under the default policy and then under each alternative (the
    // policy is the process's; restored after), with streaming copies
    // off for one row.
    // Two threads for all the rounds, meeting at a barrier before each
    // (as `registered_once`'s), so that no sample includes a thread spawn.
    let mut both_pageable = || -> Result<Duration> {
        let start = std::sync::Barrier::new(2);
        let (ups, downs) = two_threads(
            &start,
            samples,
            || meet_rounds(&start, samples, &mut || up_dev.copy_from_host(&up_pageable)),
            || {
                meet_rounds(&start, samples, &mut || {
                    down_dev.copy_to_host(&mut down_pageable)
                })
            },
        )?;
        Ok(median(slower_of_each_round(&ups?, &downs?)))
    };
    let policy = staged::pageable_policy();
    let streaming = staged::streaming_copies();
    let mut variants: Vec<(String, Result<Duration>)> = Vec::new();
    variants.push((
        format!("both ways {mb} MiB pageable (vs raw pinned)"),
        both_pageable(),
    ));
    for (name, p, stream) in [
        (
            "  staged both (policy stage)",
            PageablePolicy::Stage,
            streaming,
        ),
        (
            "  staged both, plain stores",
            PageablePolicy::Stage,
            !streaming,
        ),
        (
            "  registered both (policy register)",
            PageablePolicy::Register,
            streaming,
        ),
        (
            "  uploads registered, downloads staged",
            PageablePolicy::RegisterUploads,
            streaming,
        ),
        (
            "  downloads registered, uploads staged",
            PageablePolicy::RegisterDownloads,
            streaming,
        ),
    ] {
        // SAFETY: while the registering rows run, the only copies of the
        // process are this benchmark's own two synchronous transfers.
        unsafe { staged::set_pageable_policy_unchecked(p) };
        staged::set_streaming_copies(stream);
        let r = both_pageable();
        variants.push((name.into(), r));
    }
    // SAFETY: the policy in force before (set by the caller's contract).
    unsafe { staged::set_pageable_policy_unchecked(policy) };
    staged::set_streaming_copies(streaming);
    // The same pageable buffers, each registered once for all the samples
    // (`Context::with_registered`, one scope per thread): the transfers
    // inside the scopes, and the whole run with its registrations spread
    // over the transfers.
    let once = registered_once(
        ctx,
        (&up_dev, &down_dev),
        (&mut up_pageable, &mut down_pageable),
        samples,
    );
    let name = match &once {
        Ok((_, _, false)) => "  with_registered, registration refused (staged)",
        _ => "  registered once for all samples (with_registered)",
    };
    match once {
        Ok((inside, amortized, _)) => {
            variants.push((name.into(), Ok(inside)));
            variants.push((
                format!(
                    "    the same, its registration spread over {} transfers",
                    samples + 1
                ),
                Ok(amortized),
            ));
        }
        Err(e) => variants.push((name.into(), Err(e))),
    }
    for (name, r) in variants {
        rows.push(Row {
            name,
            cudakit: r?,
            raw: Some(raw_both),
            samples,
        });
    }
    // What a registration costs: cuMemHostRegister_v2 + cuMemHostUnregister
    // of the whole pageable buffer (its pages already touched), raw.
    let base = up_pageable.as_ptr() as usize;
    let start = base.div_ceil(1 << 16) << 16;
    let len = ((base + bytes) >> 16 << 16).saturating_sub(start);
    if len > 0 {
        let mut reg = Vec::with_capacity(samples);
        for _ in 0..samples.min(7) {
            let t = Instant::now();
            // SAFETY: whole 64 KiB blocks inside `up_pageable`, which
            // outlives the registration, undone right after; nothing else
            // uses them meanwhile.
            let rc = unsafe { (cu.cuMemHostRegister)(start as *mut _, len, 0) };
            if rc != cudakit::sys::CUresult::CUDA_SUCCESS {
                break;
            }
            // SAFETY: registered just above.
            check("cuMemHostUnregister", unsafe {
                (cu.cuMemHostUnregister)(start as *mut _)
            })?;
            reg.push(t.elapsed());
        }
        if !reg.is_empty() {
            rows.push(Row {
                name: format!("  register + unregister {mb} MiB pageable (raw)"),
                cudakit: median(reg),
                raw: None,
                samples: samples.min(7),
            });
        }
    }
    if let Some(ns) = staged::registration_cost_ns_per_mib() {
        rows.push(Row {
            name: "  registration cost cudakit measured, per MiB".into(),
            cudakit: Duration::from_nanos(ns),
            raw: None,
            samples: 1,
        });
    }
    Ok(rows)
}

/// Both directions at once from two threads, each with its pageable
/// buffer registered once by `Context::with_registered` for `samples + 1`
/// transfers (the first untimed): the median of the later transfers (each
/// the longer of the two directions, started together), the whole run,
/// registrations included, per transfer, and whether both buffers were
/// registered (else their transfers were staged).
fn registered_once(
    ctx: &Context,
    (up_dev, down_dev): (
        &cudakit::DeviceBuffer<'_, u8>,
        &cudakit::DeviceBuffer<'_, u8>,
    ),
    (up, down): (&mut [u8], &mut [u8]),
    samples: usize,
) -> Result<(Duration, Duration, bool)> {
    type Side = Result<(Vec<Duration>, bool)>;
    let start = std::sync::Barrier::new(2);
    let side = |registered: bool, transfer: &mut dyn FnMut() -> Result<()>| -> Side {
        meet_rounds(&start, samples, transfer).map(|times| (times, registered))
    };
    let met = |r: Result<Side>| -> Side {
        match r {
            Ok(inner) => inner,
            // The scope did not begin: its rounds are still met.
            Err(e) => {
                for _ in 0..=samples {
                    start.wait();
                }
                Err(e)
            }
        }
    };
    let t0 = Instant::now();
    let (ups, downs) = two_threads(
        &start,
        samples,
        || met(ctx.with_registered(up, |h| side(h.is_registered(), &mut || h.upload_to(up_dev)))),
        || {
            met(ctx.with_registered(down, |h| {
                let registered = h.is_registered();
                side(registered, &mut || h.download_from(down_dev))
            }))
        },
    )?;
    let total = t0.elapsed();
    let ((ups, up_reg), (downs, down_reg)) = (ups?, downs?);
    Ok((
        median(slower_of_each_round(&ups, &downs)),
        total / (samples as u32 + 1),
        up_reg && down_reg,
    ))
}

/// Runs `up` and `down` on two scoped threads, each of which meets the
/// other at `start` for the `samples + 1` rounds of [`meet_rounds`], and returns what
/// each returned (a panic of either is resumed here). Should the second
/// thread fail to start, this thread meets the first one's rounds in its
/// place, so that it does not wait at the barrier for ever, and the
/// failure is returned.
fn two_threads<U: Send, D: Send>(
    start: &std::sync::Barrier,
    samples: usize,
    up: impl FnOnce() -> U + Send,
    down: impl FnOnce() -> D + Send,
) -> Result<(U, D)> {
    let spawn_failed = |e: std::io::Error| cudakit::Error::Io {
        path: "(a benchmark thread)".into(),
        message: format!("could not start a thread: {e}"),
    };
    std::thread::scope(|t| {
        let up = std::thread::Builder::new()
            .name("bench-upload".into())
            .spawn_scoped(t, up)
            .map_err(spawn_failed)?;
        let down = match std::thread::Builder::new()
            .name("bench-download".into())
            .spawn_scoped(t, down)
        {
            Ok(down) => down,
            Err(e) => {
                for _ in 0..=samples {
                    start.wait();
                }
                let _ = up.join();
                return Err(spawn_failed(e));
            }
        };
        let up = up.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        let down = down.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        Ok((up, down))
    })
}

/// The longer of the two directions' times in each round of
/// [`meet_rounds`], the first (untimed warm-up) round skipped.
fn slower_of_each_round(ups: &[Duration], downs: &[Duration]) -> Vec<Duration> {
    ups.iter()
        .zip(downs)
        .skip(1)
        .map(|(u, d)| *u.max(d))
        .collect()
}

/// One thread's side of a two-thread measurement: `samples + 1` rounds,
/// each starting at `start`, each timing one `transfer`. Every round meets
/// the other thread at the barrier, also after an error or a panic of this
/// side (its later rounds then copy nothing), so that neither waits for
/// ever for the other. A panic is resumed once every round has been met.
fn meet_rounds(
    start: &std::sync::Barrier,
    samples: usize,
    transfer: &mut dyn FnMut() -> Result<()>,
) -> Result<Vec<Duration>> {
    let mut times = Vec::with_capacity(samples + 1);
    let mut failed = None;
    let mut panicked = None;
    for _ in 0..=samples {
        start.wait();
        if failed.is_none() && panicked.is_none() {
            let t = Instant::now();
            match std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut *transfer)) {
                Ok(Ok(())) => times.push(t.elapsed()),
                Ok(Err(e)) => failed = Some(e),
                Err(payload) => panicked = Some(payload),
            }
        }
    }
    if let Some(payload) = panicked {
        std::panic::resume_unwind(payload);
    }
    failed.map_or(Ok(times), Err)
}

const LOAD_KERNEL: &str = r#"
extern "C" __global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"#;

/// Module load of a CUBIN: `ctx.load_module` against raw `cuModuleLoadData`
/// plus `cuModuleGetFunction` and `cuModuleUnload`; and a context-independent
/// library (`Library::load`, `function`, drop: `cuLibraryLoadData`,
/// `cuLibraryGetKernel`, `cuKernelGetFunction`, `cuLibraryUnload`) against
/// the same raw module baseline, measured in the same loop.
///
/// # Errors
///
/// Any cudakit or driver error.
pub fn module_load(ctx: &Context, samples: usize) -> Result<Vec<Row>> {
    let cu = cudakit::sys::driver()?;
    let compiled = Program::new("load.cu", LOAD_KERNEL).compile_for(ctx)?;
    let Some(cubin) = compiled.cubin() else {
        return Ok(Vec::new());
    };
    // The driver wants an 8-byte-aligned image.
    let mut image: Vec<u64> = vec![0; cubin.len().div_ceil(8)];
    // SAFETY: `image` has at least `cubin.len()` bytes; distinct buffers.
    unsafe {
        std::ptr::copy_nonoverlapping(cubin.as_ptr(), image.as_mut_ptr().cast(), cubin.len())
    };
    let name = c"add";
    let mut raw = Vec::with_capacity(samples);
    let mut kit = Vec::with_capacity(samples);
    let mut lib = Vec::with_capacity(samples);
    let mut raw_lib = Vec::with_capacity(samples);
    // The raw library path, where the driver has it: what bounds cudakit's
    // library row against the module baseline.
    let raw_library = match (
        cu.cuLibraryLoadData,
        cu.cuLibraryGetKernel,
        cu.cuKernelGetFunction,
        cu.cuLibraryUnload,
    ) {
        (Some(load), Some(get_kernel), Some(get_function), Some(unload)) => {
            Some((load, get_kernel, get_function, unload))
        }
        _ => None,
    };
    for i in 0..=samples {
        let rl = match raw_library {
            Some((load, get_kernel, get_function, unload)) => {
                let t = Instant::now();
                let mut library = std::ptr::null_mut();
                // SAFETY: a valid out-pointer, an aligned CUBIN image, no
                // options (null arrays of length 0).
                check("cuLibraryLoadData", unsafe {
                    load(
                        &mut library,
                        image.as_ptr().cast(),
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        0,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        0,
                    )
                })?;
                let mut kernel = std::ptr::null_mut();
                // SAFETY: a live library and a C string.
                check("cuLibraryGetKernel", unsafe {
                    get_kernel(&mut kernel, library, name.as_ptr())
                })?;
                let mut f = std::ptr::null_mut();
                // SAFETY: a live kernel; the context is current.
                check("cuKernelGetFunction", unsafe {
                    get_function(&mut f, kernel)
                })?;
                std::hint::black_box(f);
                // SAFETY: unloads the library loaded above, once.
                check("cuLibraryUnload", unsafe { unload(library) })?;
                Some(t.elapsed())
            }
            None => None,
        };
        let t = Instant::now();
        let mut module = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and an aligned CUBIN image.
        check("cuModuleLoadData", unsafe {
            (cu.cuModuleLoadData)(&mut module, image.as_ptr().cast())
        })?;
        let mut f = std::ptr::null_mut();
        // SAFETY: a live module and a C string.
        check("cuModuleGetFunction", unsafe {
            (cu.cuModuleGetFunction)(&mut f, module, name.as_ptr())
        })?;
        // SAFETY: unloads the module loaded above, once.
        check("cuModuleUnload", unsafe { (cu.cuModuleUnload)(module) })?;
        let r = t.elapsed();
        let t = Instant::now();
        {
            let m = ctx.load_module(&compiled)?;
            let f = m.function("add")?;
            std::hint::black_box(f.as_raw());
        }
        let k = t.elapsed();
        let t = Instant::now();
        {
            let library = cudakit::Library::load(&compiled)?;
            let f = library.function(ctx, "add")?;
            std::hint::black_box(f.as_raw());
        }
        let l = t.elapsed();
        if i > 0 {
            raw.push(r);
            kit.push(k);
            lib.push(l);
            raw_lib.extend(rl);
        }
    }
    let raw = median(raw);
    let mut rows = vec![
        Row {
            name: "module load (CUBIN) + lookup + unload".into(),
            cudakit: median(kit),
            raw: Some(raw),
            samples,
        },
        Row {
            name: "library load (CUBIN) + kernel + function + unload, against raw module load \
                   + lookup + unload"
                .into(),
            cudakit: median(lib),
            raw: Some(raw),
            samples,
        },
    ];
    if !raw_lib.is_empty() {
        let raw_lib = median(raw_lib);
        rows.push(Row {
            name: "  the same against the raw library path (the driver's own cost)".into(),
            cudakit: rows[1].cudakit,
            raw: Some(raw_lib),
            samples,
        });
        rows.push(Row {
            name: "  for reference: raw library path against raw module".into(),
            cudakit: raw_lib,
            raw: Some(raw),
            samples,
        });
    }
    Ok(rows)
}

/// Context creation from nothing: `Context::new` (retain the primary
/// context, read the device's limits) and its drop (release), against raw
/// `cuDevicePrimaryCtxRetain` plus `cuDevicePrimaryCtxRelease_v2`. Must run
/// while no other handle of the device's context exists, or both sides
/// measure a retain of a live context.
///
/// # Errors
///
/// Any cudakit or driver error.
pub fn context_creation(ordinal: usize, samples: usize) -> Result<Vec<Row>> {
    let device = cudakit::Device::get(ordinal)?;
    let cu = cudakit::sys::driver()?;
    let (mut raw, mut kit) = (Vec::with_capacity(samples), Vec::with_capacity(samples));
    for i in 0..=samples {
        let t = Instant::now();
        let mut ctx = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and a device handle from cuDeviceGet.
        check("cuDevicePrimaryCtxRetain", unsafe {
            (cu.cuDevicePrimaryCtxRetain)(&mut ctx, device.as_raw())
        })?;
        // SAFETY: makes the retained context current, as Context::new's
        // first operation would.
        check("cuCtxSetCurrent", unsafe { (cu.cuCtxSetCurrent)(ctx) })?;
        // SAFETY: no operands; the context is current. The same first
        // operation as cudakit's side below, so that both sides ask the
        // driver for the same work.
        check("cuCtxSynchronize", unsafe { (cu.cuCtxSynchronize)() })?;
        // SAFETY: releases the retain above, once.
        check("cuDevicePrimaryCtxRelease_v2", unsafe {
            (cu.cuDevicePrimaryCtxRelease)(device.as_raw())
        })?;
        let r = t.elapsed();
        let t = Instant::now();
        {
            let c = Context::new(ordinal)?;
            c.synchronize()?;
        }
        let k = t.elapsed();
        if i > 0 {
            raw.push(r);
            kit.push(k);
        }
    }
    Ok(vec![Row {
        name: "context create + current + synchronize + release".into(),
        cudakit: median(kit),
        raw: Some(median(raw)),
        samples,
    }])
}

/// Growing a buffer by 1 GiB, `steps` times from 1 GiB: a
/// [`VirtualBuffer`](cudakit::VirtualBuffer) grown in place
/// (`cuMemCreate`, `cuMemMap`, `cuMemSetAccess` of the new gibibyte, no
/// copy) against the raw way without virtual memory: `cuMemAlloc_v2` of
/// the whole new size, `cuMemcpyDtoD_v2` of the old contents and
/// `cuMemFree_v2` of the old buffer. The raw copy grows with the buffer,
/// the in-place growth does not; the row reports the median step of each
/// (both figures, no target). Needs `1 + steps` GiB of device memory at
/// the raw side's peak (old and new buffers at once), so `steps` is cut to
/// what the device's free memory allows.
///
/// # Errors
///
/// Any cudakit or driver error.
pub fn virtual_growth(ctx: &Context, steps: usize) -> Result<Vec<Row>> {
    const GIB: usize = 1 << 30;
    let cu = cudakit::sys::driver()?;
    let (mut free, mut total) = (0usize, 0usize);
    ctx.synchronize()?;
    // SAFETY: valid out-pointers; `synchronize` made the context current.
    check("cuMemGetInfo_v2", unsafe {
        (cu.cuMemGetInfo)(&mut free, &mut total)
    })?;
    // The raw side holds the old and the new buffer at once: 2 * steps + 1 GiB.
    let steps = steps.min((free / GIB).saturating_sub(2) / 2).max(1);
    let (mut raw, mut kit) = (Vec::with_capacity(steps), Vec::with_capacity(steps));
    {
        let mut v = ctx.alloc_virtual_with_step::<u8>(GIB, (steps + 1) * GIB, GIB)?;
        v.fill(7)?;
        for _ in 0..steps {
            let t = Instant::now();
            v.grow_by(GIB)?;
            kit.push(t.elapsed());
        }
        std::hint::black_box(v.device_ptr());
    }
    let mut old: u64 = 0;
    // SAFETY: a valid out-pointer; the context is current.
    check("cuMemAlloc_v2", unsafe { (cu.cuMemAlloc)(&mut old, GIB) })?;
    // SAFETY: `old` holds GIB bytes.
    check("cuMemsetD8_v2", unsafe { (cu.cuMemsetD8)(old, 7, GIB) })?;
    let mut size = GIB;
    for _ in 0..steps {
        let t = Instant::now();
        let mut new: u64 = 0;
        // SAFETY: a valid out-pointer.
        check("cuMemAlloc_v2", unsafe {
            (cu.cuMemAlloc)(&mut new, size + GIB)
        })?;
        // SAFETY: `new` holds `size + GIB` bytes and `old` holds `size`.
        check("cuMemcpyDtoD_v2", unsafe {
            (cu.cuMemcpyDtoD)(new, old, size)
        })?;
        // SAFETY: frees the old buffer, once; `cuMemFree` synchronizes
        // with the device work queued before it, the copy included.
        check("cuMemFree_v2", unsafe { (cu.cuMemFree)(old) })?;
        // SAFETY: no operands; everything queued has finished on return.
        check("cuCtxSynchronize", unsafe { (cu.cuCtxSynchronize)() })?;
        raw.push(t.elapsed());
        old = new;
        size += GIB;
    }
    // SAFETY: frees the last buffer, once.
    check("cuMemFree_v2", unsafe { (cu.cuMemFree)(old) })?;
    Ok(vec![Row {
        name: format!(
            "grow a virtual buffer by 1 GiB in place (1 to {} GiB), against cuMemAlloc of the \
             new size + copy + free of the old",
            steps + 1
        ),
        cudakit: median(kit),
        raw: Some(median(raw)),
        samples: steps,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Barrier;

    /// A side that panics in its second round still meets every round, so
    /// the other side finishes all of its transfers; the panic then reaches
    /// the joining thread. Without the catch, the other side would wait at
    /// the barrier for ever (the test would hang, and time out).
    #[test]
    fn a_panicking_side_still_meets_every_round() {
        let start = Barrier::new(2);
        let samples = 4;
        let done = AtomicUsize::new(0);
        let (panicker, other) = std::thread::scope(|t| {
            let a = t.spawn(|| {
                let mut round = 0;
                meet_rounds(&start, samples, &mut || {
                    round += 1;
                    assert!(round < 2, "injected panic in round {round}");
                    Ok(())
                })
            });
            let b = t.spawn(|| {
                meet_rounds(&start, samples, &mut || {
                    done.fetch_add(1, Ordering::Relaxed);
                    Ok(())
                })
            });
            (a.join(), b.join())
        });
        assert!(panicker.is_err(), "the panic is resumed after the rounds");
        let times = other.expect("the other side ran").expect("no error");
        assert_eq!(times.len(), samples + 1);
        assert_eq!(done.load(Ordering::Relaxed), samples + 1);
    }

    #[test]
    fn two_threads_meet_every_round_and_return_both_results() {
        let start = Barrier::new(2);
        let samples = 4;
        let (up, down) = two_threads(
            &start,
            samples,
            || meet_rounds(&start, samples, &mut || Ok(())),
            || meet_rounds(&start, samples, &mut || Ok(())),
        )
        .expect("both threads start");
        assert_eq!(up.expect("up").len(), samples + 1);
        assert_eq!(down.expect("down").len(), samples + 1);
    }

    #[test]
    fn a_round_takes_the_slower_direction_and_the_warm_up_is_dropped() {
        let ms = Duration::from_millis;
        let ups = [ms(50), ms(3), ms(7), ms(5)];
        let downs = [ms(40), ms(4), ms(6), ms(5)];
        assert_eq!(slower_of_each_round(&ups, &downs), [ms(4), ms(7), ms(5)]);
    }

    /// An error stops this side's transfers but not its rounds, and is
    /// returned.
    #[test]
    fn an_erring_side_stops_copying_and_reports() {
        let start = Barrier::new(2);
        let samples = 3;
        let (erring, other) = std::thread::scope(|t| {
            let a = t.spawn(|| {
                let mut calls = 0;
                let r = meet_rounds(&start, samples, &mut || {
                    calls += 1;
                    Err(cudakit::Error::InvalidArgument("injected".into()))
                });
                (r, calls)
            });
            let b = t.spawn(|| meet_rounds(&start, samples, &mut || Ok(())));
            (a.join().expect("no panic"), b.join().expect("no panic"))
        });
        assert!(erring.0.is_err());
        assert_eq!(erring.1, 1, "no transfer after the error");
        assert_eq!(other.expect("no error").len(), samples + 1);
    }
}
