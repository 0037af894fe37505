//! Issue 20's hardware probes, as tests: captures against other threads'
//! work, frees on driver threads and inside captures, all on the real
//! driver (the stand-in's versions are in crates/cudakit/tests).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use cudakit::{AllocKind, Context, Error};

/// One thread captures an empty closure on a shared stream in a loop while
/// another queues host functions on it in scopes. Before the fix the
/// process died (SIGSEGV) or hung. Now every host function either runs
/// before its scope returns or is refused with `StreamCaptured`, and every
/// capture ends cleanly.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_capture_never_swallows_another_threads_host_functions() {
    let ctx = Context::new(0).expect("device 0");
    let stream = ctx.stream().expect("stream");
    let stop = AtomicBool::new(false);
    let (ran, refused, queued) = (
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    );
    let mut captures = 0usize;
    std::thread::scope(|t| {
        t.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                let local = AtomicUsize::new(0);
                let r = ctx.scope(|s| {
                    s.host_fn(&stream, || {
                        local.fetch_add(1, Ordering::Relaxed);
                    })
                });
                match r {
                    Ok(()) => {
                        queued.fetch_add(1, Ordering::Relaxed);
                        // The scope waited: its callback has run, exactly once.
                        assert_eq!(local.load(Ordering::Relaxed), 1);
                        ran.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(Error::StreamCaptured { .. }) => {
                        assert_eq!(local.load(Ordering::Relaxed), 0);
                        refused.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => panic!("unexpected error: {e}"),
                }
            }
        });
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_secs(3) {
            let r = ctx.scope(|s| s.capture(&stream, || Ok(())).map(drop));
            match r {
                // An empty capture makes no graph (the driver returns one
                // with no nodes) and that is fine; what matters is that no
                // capture fails because of the other thread.
                Ok(()) => captures += 1,
                Err(e) => panic!("capture {captures} failed: {e}"),
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    eprintln!(
        "captures {captures}, host functions run {}, refused {}",
        ran.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed)
    );
    assert!(captures > 100, "only {captures} captures in 3 s");
    assert!(queued.load(Ordering::Relaxed) > 0, "no host function ran");
    assert!(ctx.poisoned().is_none());
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
}

/// A device buffer owned by a host function's closure is dropped by the
/// scope, on the scope's thread, after the callback ran: the driver frees
/// it (the arena shows it freed, no drop error), instead of refusing the
/// free on its callback thread while the arena claimed "freed".
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_buffer_owned_by_a_host_function_is_freed_by_its_scope() {
    let ctx = Context::new(0).expect("device 0");
    let stream = ctx.stream().expect("stream");
    let (free_before, _) = ctx.memory_info().expect("memory info");
    let tmp = ctx.alloc::<u8>(256 << 20).expect("256 MiB");
    let seen = AtomicUsize::new(0);
    ctx.scope(|s| {
        s.host_fn(&stream, move || {
            seen.fetch_add(tmp.len(), Ordering::Relaxed);
        })
    })
    .expect("scope");
    assert_eq!(ctx.stats().kind(AllocKind::Device).live_count, 0);
    assert_eq!(ctx.stats().kind(AllocKind::Leaked).live_count, 0);
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
    let (free_after, _) = ctx.memory_info().expect("memory info");
    assert!(
        free_after + (64 << 20) >= free_before,
        "256 MiB not returned: {free_before} free before, {free_after} after"
    );
}

/// A device buffer dropped inside a capture on the capturing thread: the
/// free waits for the capture's end (the driver would refuse it there and
/// invalidate the capture); then the memory is returned and the arena
/// agrees.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_buffer_dropped_inside_a_capture_is_freed_after_it() {
    let ctx = Context::new(0).expect("device 0");
    let stream = ctx.stream().expect("stream");
    let pinned = ctx.alloc_pinned::<u8>(1 << 20).expect("pinned");
    let buf = ctx.alloc::<u8>(256 << 20).expect("256 MiB");
    let (free_before, _) = ctx.memory_info().expect("memory info");
    let graph_ok = ctx
        .scope(|s| {
            let g = s.capture(&stream, move || {
                drop(buf);
                drop(pinned);
                Ok(())
            });
            g.map(drop)
        })
        .map(|()| true);
    assert!(graph_ok.is_ok(), "the capture failed: {graph_ok:?}");
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
    assert_eq!(ctx.stats().live_count(), 0, "{}", ctx.leak_report());
    let (free_after, _) = ctx.memory_info().expect("memory info");
    assert!(
        free_after >= free_before + (192 << 20),
        "256 MiB not returned: {free_before} free before, {free_after} after"
    );
}

/// A host function that waits for the host thread, then a 16 MiB pageable
/// copy on the same stream, in one scope: it hung until killed. The rule
/// (docs/architecture.md): a pageable copy into a stream whose earlier work
/// waits for the host is a typed error or completes; it never hangs.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_pageable_copy_after_a_host_function_that_waits_for_the_host_does_not_hang() {
    let ctx = Context::new(0).expect("device 0");
    let stream = ctx.stream().expect("stream");
    let n = 16 << 20;
    let src = vec![3u8; n];
    let dst = ctx.alloc::<u8>(n).expect("16 MiB");
    let go = AtomicBool::new(false);
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::scope(|t| {
        t.spawn(|| {
            let r = ctx.scope(|s| {
                s.host_fn(&stream, || {
                    let start = std::time::Instant::now();
                    while !go.load(Ordering::Acquire) {
                        if start.elapsed() > std::time::Duration::from_secs(20) {
                            return;
                        }
                        std::thread::yield_now();
                    }
                })?;
                let r = s.copy_to_device(&stream, &src, &dst);
                go.store(true, Ordering::Release);
                r
            });
            done_tx.send(r).expect("report");
        });
        let r = done_rx
            .recv_timeout(std::time::Duration::from_secs(15))
            .expect("the scope hung");
        go.store(true, Ordering::Release);
        match r {
            Ok(()) => assert_eq!(dst.to_vec().expect("read back"), src),
            Err(Error::InvalidArgument(_)) | Err(Error::IllegalDuringCapture { .. }) => {}
            Err(e) => panic!("unexpected error: {e}"),
        }
    });
}

const SLOW_FILL: &str = r#"
extern "C" __global__ void slow_fill(float* out, float v, long long spins, int n) {
    long long start = clock64();
    while (clock64() - start < spins) { }
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v;
}
"#;

/// Defect 8: a slow kernel writes a buffer on one stream, then a copy on a
/// second stream of the same scope writes it too. Unordered, the kernel
/// finishes last and its values win; ordered (the second stream waits for
/// the first), the copy's values are what the scope leaves. Each round draws
/// fresh values and poisons the buffer first.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn two_streams_of_a_scope_write_one_buffer_in_program_order() {
    use cudakit::compile::program::Program;
    use cudakit::params;
    use cudakit::work::launch::LaunchConfig;
    let ctx = Context::new(0).expect("device 0");
    let mut rng = cudakit_suite::rng::Rng::new();
    let compiled = Program::new("slow_fill.cu", SLOW_FILL)
        .compile_for(&ctx)
        .expect("compile");
    let module = ctx.load_module(&compiled).expect("load");
    let f = module.function("slow_fill").expect("function");
    let (a, b) = (ctx.stream().expect("a"), ctx.stream().expect("b"));
    let n = 1 << 20;
    let x = ctx.alloc::<f32>(n).expect("x");
    let cfg = LaunchConfig::for_elements(n, 256).expect("config");
    for round in 0..3 {
        x.fill(f32::NAN).expect("poison");
        let first = 1.0 + rng.f32_sym().abs();
        let second: Vec<f32> = rng.vec_f32(n);
        ctx.scope(|s| {
            // Both streams in use first, on other memory.
            s.host_fn(&b, || {})?;
            // SAFETY: slow_fill writes n floats of x.
            unsafe {
                s.launch(&a, &f, &cfg, &params![&x, first, 50_000_000i64, n as i32])?;
            }
            s.copy_to_device(&b, &second, &x)
        })
        .expect("scope");
        let got = x.to_vec().expect("read back");
        let bad = got
            .iter()
            .zip(&second)
            .position(|(g, w)| g.to_bits() != w.to_bits());
        assert_eq!(
            bad, None,
            "round {round}: the kernel's write came after the copy"
        );
    }
}

/// A panic in a host node of a captured graph is reported by the scope that
/// replayed it, when it ends; the context stays usable, and a later scope
/// that replays nothing reports nothing.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_panic_in_a_captured_host_node_is_reported_by_the_scope_that_replayed_it() {
    let ctx = Context::new(0).expect("device 0");
    let stream = ctx.stream().expect("stream");
    let calls = AtomicUsize::new(0);
    let r = ctx.scope(|s| {
        let g = s.capture(&stream, || {
            s.host_fn(&stream, || {
                if calls.fetch_add(1, Ordering::Relaxed) == 1 {
                    panic!("host node boom");
                }
            })
        })?;
        let e = g.instantiate(Default::default())?;
        for _ in 0..3 {
            s.launch_graph(&stream, &e)?;
        }
        Ok(())
    });
    match r {
        Err(Error::HostCallbackPanicked { message }) => {
            assert!(message.contains("host node boom"), "{message}")
        }
        other => panic!("expected the host node's panic, got {other:?}"),
    }
    assert_eq!(
        calls.load(Ordering::Relaxed),
        3,
        "every replay ran the node"
    );
    ctx.scope(|_| Ok(())).expect("a scope that replays nothing");
    assert!(ctx.poisoned().is_none());
    let b = ctx.upload(&[1u32, 2, 3]).expect("usable");
    assert_eq!(b.to_vec().expect("read"), vec![1, 2, 3]);
}
