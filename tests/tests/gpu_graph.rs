//! CUDA graphs, stream-ordered memory and host callbacks on the device:
//!
//! - a built graph with every node kind (memset, copies in every direction
//!   with pinned host memory, kernel, host function, event record and
//!   wait, empty, child graph, memory allocation and free), replayed;
//! - a captured pipeline (upload, three kernels, download) replayed 1000
//!   times with its inputs changed between replays;
//! - kernel-node parameter updates between replays, and whole-graph
//!   updates, accepted and refused (typed, naming the node);
//! - the bad inputs of issue 11, each a typed error with the context
//!   usable after it;
//! - 1e5 stream-ordered allocations, with the arena and the device's free
//!   memory flat;
//! - a panicking host callback, direct and as a graph node;
//! - a capture with kernel timing on.
//!
//! Inputs come from a seeded `Rng`, outputs are poisoned first, and every
//! element is checked against a CPU reference.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use cudakit::compile::module::{Function, Module};
use cudakit::compile::program::Program;
use cudakit::work::graph::NodeKind;
use cudakit::{params, Context, Error, InstantiateOptions, LaunchConfig};
use cudakit_suite::rng::Rng;

fn lock() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

fn ctx() -> Context {
    Context::new(0).expect("device 0")
}

const KERNELS: &str = r#"
extern "C" __global__ void axpb(const float* x, const float* bias, float* y, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + bias[i];
}
extern "C" __global__ void square(const float* x, float* y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * x[i];
}
extern "C" __global__ void sub(const float* x, const float* y, float* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = x[i] - y[i];
}
extern "C" __global__ void fill(float* out, float v, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v + (float)i;
}
extern "C" __global__ void fill_raw(unsigned long long address, float v, unsigned n) {
    float* out = (float*)address;
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = v + (float)i;
}
"#;

fn module(ctx: &Context) -> Module<'_> {
    let compiled = Program::new("graph.cu", KERNELS)
        .compile_for(ctx)
        .expect("compile graph.cu");
    ctx.load_module(&compiled).expect("load graph.cu")
}

fn f<'m>(m: &'m Module<'_>, name: &str) -> Function<'m> {
    m.function(name).expect(name)
}

const POISON: f32 = -7.77e30;

fn close(got: f32, want: f64) -> bool {
    ((got as f64) - want).abs() <= 1e-5 * want.abs().max(1.0)
}

fn check(what: &str, got: &[f32], want: &[f64], rng: &Rng) {
    assert_eq!(got.len(), want.len(), "{what}");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        assert!(
            close(g, w),
            "{what}[{i}] = {g}, want {w} ({})",
            rng.describe()
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn every_node_kind_in_a_built_graph() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let axpb = f(&m, "axpb");
    let fill_raw = f(&m, "fill_raw");
    let mut rng = Rng::new();
    let n = rng.range(1000, 5000);
    let x_host = rng.vec_f32(n);
    let bias_host = rng.vec_f32(n);
    let a = rng.f32_sym();
    let mut pinned_in = ctx.alloc_pinned::<f32>(n).unwrap();
    pinned_in.copy_from_slice(&x_host);
    let mut pinned_out = ctx.alloc_pinned::<f32>(n).unwrap();
    pinned_out.fill(POISON);
    let mut host_copy = vec![POISON; n];
    let x = ctx.upload(&vec![POISON; n]).unwrap();
    let bias = ctx.upload(&bias_host).unwrap();
    let y = ctx.upload(&vec![POISON; n]).unwrap();
    let y2 = ctx.upload(&vec![POISON; n]).unwrap();
    let zeroed = ctx.upload(&vec![POISON; n]).unwrap();
    let child_target = ctx.upload(&vec![0u32; n]).unwrap();
    let from_alloc = ctx.upload(&vec![POISON; n]).unwrap();
    let stream = ctx.stream().unwrap();
    let recorded = ctx.event().unwrap();
    let calls = AtomicUsize::new(0);
    let cfg = LaunchConfig::for_elements(n, 256).unwrap();
    let child_value = rng.next_u32();
    let v = rng.f32_sym();
    let replays = 3;
    {
        let mut child = ctx.graph().unwrap();
        child.add_memset(&child_target, child_value, &[]).unwrap();

        let mut g = ctx.graph().unwrap();
        let set = g.add_memset(&zeroed, 0.0f32, &[]).unwrap();
        let up = g.add_copy_to_device(&pinned_in, &x, &[]).unwrap();
        // SAFETY: axpb reads n floats of x and bias, writes n of y.
        let k = unsafe {
            g.add_kernel(
                &axpb,
                &cfg,
                &params![&x, &bias, &y, a, n as u32],
                &[up, set],
            )
            .unwrap()
        };
        let dd = g.add_copy(&y, &y2, &[k]).unwrap();
        let down = g.add_copy_to_host(&y2, &mut pinned_out, &[dd]).unwrap();
        let hh = g.add_copy_host(&x_host, &mut host_copy, &[]).unwrap();
        let host = g
            .add_host_fn(
                || {
                    calls.fetch_add(1, Ordering::Relaxed);
                },
                &[down],
            )
            .unwrap();
        let rec = g.add_event_record(&recorded, &[host]).unwrap();
        let wait = g.add_event_wait(&recorded, &[rec]).unwrap();
        let child_node = g.add_child(&child, &[]).unwrap();
        let (alloc_node, alloc) = g.add_mem_alloc::<f32>(n, &[]).unwrap();
        // SAFETY: fill_raw writes n floats at the graph allocation, which
        // lives between its allocation and free nodes, this node between.
        let fill_node = unsafe {
            g.add_kernel(
                &fill_raw,
                &cfg,
                &params![alloc.as_raw(), v, n as u32],
                &[alloc_node],
            )
            .unwrap()
        };
        let out = g
            .add_copy_from_alloc(&alloc, &from_alloc, &[fill_node])
            .unwrap();
        let set2 = g.add_memset_alloc(&alloc, 0.0f32, &[out]).unwrap();
        let free = g.add_mem_free(alloc, &[set2]).unwrap();
        let _join = g.add_empty(&[wait, child_node, free, hh]).unwrap();
        assert_eq!(g.node_kind(k).unwrap(), NodeKind::Kernel);
        assert_eq!(g.node_kind(free).unwrap(), NodeKind::MemFree);
        // set, up, kernel, dd, down, hh, host fn, record, wait, child, alloc,
        // fill, out, set2, free, join.
        assert_eq!(g.node_count().unwrap(), 16);
        let dot = g.dot().unwrap();
        assert!(dot.contains("digraph"), "{dot}");
        let exec = g.instantiate(InstantiateOptions::default()).unwrap();
        ctx.scope(|s| {
            exec.upload(s, &stream)?;
            for _ in 0..replays {
                s.launch_graph(&stream, &exec)?;
            }
            Ok(())
        })
        .unwrap();
    }
    assert_eq!(calls.load(Ordering::Relaxed), replays);
    let want: Vec<f64> = (0..n)
        .map(|i| a as f64 * x_host[i] as f64 + bias_host[i] as f64)
        .collect();
    check("pinned_out", &pinned_out, &want, &rng);
    check("y", &y.to_vec().unwrap(), &want, &rng);
    assert_eq!(host_copy, x_host);
    assert!(zeroed.to_vec().unwrap().iter().all(|&z| z == 0.0));
    assert!(child_target
        .to_vec()
        .unwrap()
        .iter()
        .all(|&c| c == child_value));
    let want_fill: Vec<f64> = (0..n).map(|i| (v + i as f32) as f64).collect();
    check(
        "from_alloc",
        &from_alloc.to_vec().unwrap(),
        &want_fill,
        &rng,
    );
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_captured_pipeline_replays_1000_times_with_new_inputs() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let (axpb, square, sub) = (f(&m, "axpb"), f(&m, "square"), f(&m, "sub"));
    let mut rng = Rng::new();
    let n = rng.range(2000, 9000);
    let a = rng.f32_sym();
    let bias_host = rng.vec_f32(n);
    let mut pinned_bias = ctx.alloc_pinned::<f32>(n).unwrap();
    pinned_bias.copy_from_slice(&bias_host);
    let x = ctx.upload(&vec![POISON; n]).unwrap();
    let bias = ctx.upload(&vec![POISON; n]).unwrap();
    let t1 = ctx.upload(&vec![POISON; n]).unwrap();
    let t2 = ctx.upload(&vec![POISON; n]).unwrap();
    let out = ctx.upload(&vec![POISON; n]).unwrap();
    let result = ctx.upload(&vec![POISON; n]).unwrap();
    let stream = ctx.stream().unwrap();
    let cfg = LaunchConfig::for_elements(n, 128).unwrap();
    let n32 = n as u32;
    let launches_before = ctx.metrics().graph_launches;
    ctx.scope(|s| {
        let graph = s.capture(&stream, || {
            s.copy_to_device(&stream, &pinned_bias, &bias)?;
            // SAFETY: each kernel stays within its n-element buffers.
            unsafe {
                s.launch(&stream, &axpb, &cfg, &params![&x, &bias, &t1, a, n32])?;
                s.launch(&stream, &square, &cfg, &params![&t1, &t2, n32])?;
                s.launch(&stream, &sub, &cfg, &params![&t2, &x, &out, n32])?;
            }
            s.copy(&stream, &out, &result)
        })?;
        assert_eq!(graph.node_count()?, 5);
        assert_eq!(graph.kernel_nodes()?.len(), 3);
        let exec = graph.instantiate(InstantiateOptions::default().label("pipeline"))?;
        for replay in 0..1000 {
            let input = rng.vec_f32(n);
            x.copy_from_host(&input)?;
            result.fill(POISON)?;
            s.launch_graph(&stream, &exec)?;
            let got = result.to_vec()?;
            let want: Vec<f64> = (0..n)
                .map(|i| {
                    let t = a as f64 * input[i] as f64 + bias_host[i] as f64;
                    t * t - input[i] as f64
                })
                .collect();
            for i in 0..n {
                // Tolerance for the f32 chain (fma, squaring).
                let tol = 1e-4 * want[i].abs().max(1.0);
                assert!(
                    ((got[i] as f64) - want[i]).abs() <= tol,
                    "replay {replay}: result[{i}] = {}, want {} ({})",
                    got[i],
                    want[i],
                    rng.describe()
                );
            }
        }
        Ok(())
    })
    .unwrap();
    assert_eq!(ctx.metrics().graph_launches - launches_before, 1000);
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn kernel_nodes_and_whole_graphs_update_between_replays() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let (fill, axpb) = (f(&m, "fill"), f(&m, "axpb"));
    let mut rng = Rng::new();
    let n = rng.range(500, 3000);
    let cfg = LaunchConfig::for_elements(n, 256).unwrap();
    let bufs: Vec<_> = (0..3)
        .map(|_| ctx.upload(&vec![POISON; n]).unwrap())
        .collect();
    let stream = ctx.stream().unwrap();
    // Declared before the executable graph, which borrows them.
    let mut same = ctx.graph().unwrap();
    let mut bigger = ctx.graph().unwrap();
    let mut g = ctx.graph().unwrap();
    let v0 = rng.f32_sym();
    // SAFETY: fill writes n floats of its buffer.
    let node = unsafe {
        g.add_kernel(&fill, &cfg, &params![&bufs[0], v0, n as u32], &[])
            .unwrap()
    };
    let mut exec = g.instantiate(Default::default()).unwrap();
    for round in 0..30 {
        let target = &bufs[round % 3];
        target.fill(POISON).unwrap();
        let v = rng.f32_sym();
        // SAFETY: as above.
        unsafe {
            exec.set_kernel_params(node, &fill, &cfg, &params![target, v, n as u32])
                .unwrap()
        };
        ctx.scope(|s| s.launch_graph(&stream, &exec)).unwrap();
        let want: Vec<f64> = (0..n).map(|i| (v + i as f32) as f64).collect();
        check("updated fill", &target.to_vec().unwrap(), &want, &rng);
    }
    // A checked update: wrong argument count, typed, exec still usable.
    // SAFETY: refused before the driver.
    let err = unsafe { exec.set_kernel_params(node, &fill, &cfg, &params![&bufs[0], 1.0f32]) }
        .unwrap_err();
    assert!(matches!(err, Error::ArgumentCount { .. }), "{err}");

    // Whole-graph update with the same shape: accepted.
    let v1 = rng.f32_sym();
    // SAFETY: as above.
    unsafe {
        same.add_kernel(&fill, &cfg, &params![&bufs[1], v1, n as u32], &[])
            .unwrap()
    };
    exec.update(&same).unwrap();
    bufs[1].fill(POISON).unwrap();
    ctx.scope(|s| s.launch_graph(&stream, &exec)).unwrap();
    let want: Vec<f64> = (0..n).map(|i| (v1 + i as f32) as f64).collect();
    check("whole update", &bufs[1].to_vec().unwrap(), &want, &rng);

    // A changed shape: refused, naming the node; the exec stays usable.
    // SAFETY: as above; axpb reads two n-float buffers and writes one.
    let first = unsafe {
        bigger
            .add_kernel(&fill, &cfg, &params![&bufs[2], v1, n as u32], &[])
            .unwrap()
    };
    // SAFETY: as above.
    unsafe {
        bigger
            .add_kernel(
                &axpb,
                &cfg,
                &params![&bufs[2], &bufs[2], &bufs[0], 1.0f32, n as u32],
                &[first],
            )
            .unwrap()
    };
    match exec.update(&bigger) {
        Err(Error::GraphUpdate { node, reason }) => {
            assert!(!reason.is_empty());
            assert!(node.contains("node") || node == "the graph", "{node}");
        }
        other => panic!("expected a refused update, got {other:?}"),
    }
    bufs[1].fill(POISON).unwrap();
    ctx.scope(|s| s.launch_graph(&stream, &exec)).unwrap();
    check("after refusal", &bufs[1].to_vec().unwrap(), &want, &rng);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn bad_inputs_are_typed_errors_and_the_context_stays_usable() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let fill = f(&m, "fill");
    let mut rng = Rng::new();
    let n = rng.range(100, 2000);
    let buf = ctx.upload(&vec![POISON; n]).unwrap();
    let stream = ctx.stream().unwrap();
    let cfg = LaunchConfig::for_elements(n, 128).unwrap();

    // An empty graph.
    let empty = ctx.graph().unwrap();
    assert!(matches!(
        empty.instantiate(Default::default()),
        Err(Error::EmptyGraph)
    ));
    // A dependency of another graph.
    let mut g1 = ctx.graph().unwrap();
    let mut g2 = ctx.graph().unwrap();
    let other = g2.add_empty(&[]).unwrap();
    let err = g1.add_empty(&[other]).unwrap_err();
    assert!(
        matches!(err, Error::ForeignGraphNode { index: 0, .. }),
        "{err}"
    );
    // An illegal operation during capture: typed, names it, ends the
    // capture, context usable. Even when the closure swallows the error.
    for swallow in [false, true] {
        let r = ctx.scope(|s| {
            s.capture(&stream, || {
                // SAFETY: fill writes n floats of buf.
                unsafe { s.launch(&stream, &fill, &cfg, &params![&buf, 1.0f32, n as u32])? };
                let sync = buf.to_vec().map(|_| ());
                if swallow {
                    let _ = ctx.synchronize();
                    Ok(())
                } else {
                    sync
                }
            })
            .map(|_| ())
        });
        match r {
            Err(Error::IllegalDuringCapture { operation, .. }) => {
                assert!(
                    operation.contains("synchronous") || operation.contains("cuCtxSynchronize"),
                    "{operation}"
                )
            }
            other => panic!("expected IllegalDuringCapture, got {other:?}"),
        }
        assert!(ctx.poisoned().is_none());
    }
    // A pool allocation larger than the device.
    let pool = ctx.default_pool().unwrap();
    let total = ctx.device().total_memory().unwrap();
    let err = pool.alloc::<u8>(&stream, total + 1).unwrap_err();
    assert!(matches!(err, Error::AllocationTooLarge { .. }), "{err}");
    // An exec launched on a stream of another context: needs a second
    // device, else reported as not run at the end of the test.
    let devices = cudakit::Device::count().unwrap_or(1);
    if devices > 1 {
        let ctx1 = Context::new(1).unwrap();
        let s1 = ctx1.stream().unwrap();
        let mut g = ctx.graph().unwrap();
        g.add_memset(&buf, 0.0f32, &[]).unwrap();
        let exec = g.instantiate(Default::default()).unwrap();
        let err = ctx1.scope(|s| s.launch_graph(&s1, &exec)).unwrap_err();
        assert!(matches!(err, Error::ContextMismatch { .. }), "{err}");
    }
    // Still usable: a capture and replay work.
    let v = rng.f32_sym();
    ctx.scope(|s| {
        let g = s.capture(&stream, || {
            // SAFETY: fill writes n floats of buf.
            unsafe { s.launch(&stream, &fill, &cfg, &params![&buf, v, n as u32]) }
        })?;
        let e = g.instantiate(Default::default())?;
        s.launch_graph(&stream, &e)
    })
    .unwrap();
    let want: Vec<f64> = (0..n).map(|i| (v + i as f32) as f64).collect();
    check("after bad inputs", &buf.to_vec().unwrap(), &want, &rng);
    if devices < 2 {
        cudakit_suite::not_run(format!(
            "the cross-context graph launch check needs two devices, this machine has \
             {devices} (every other check of this test passed)"
        ));
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_hundred_thousand_stream_ordered_allocations_stay_flat() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let fill = f(&m, "fill");
    let mut rng = Rng::new();
    let stream = ctx.stream().unwrap();
    let pool = ctx.default_pool().unwrap();
    pool.set_release_threshold(u64::MAX).unwrap();
    let created = ctx.create_pool().unwrap();
    created.set_release_threshold(64 << 20).unwrap();
    let reuse = created.reuse().unwrap();
    created.set_reuse(reuse).unwrap();
    let live_before = ctx.stats().live_count();
    // Warm the pools, then measure.
    for p in [&pool, &created] {
        drop(p.alloc::<f32>(&stream, 1 << 20).unwrap());
    }
    stream.synchronize().unwrap();
    let (free_before, _) = ctx.memory_info().unwrap();
    for i in 0..100_000 {
        let p = if i % 2 == 0 { &pool } else { &created };
        let n = rng.range(1, 1 << 16);
        let b = p.alloc::<f32>(&stream, n).unwrap();
        if i % 1000 == 0 {
            let v = rng.f32_sym();
            let mut host = vec![POISON; n];
            let cfg = LaunchConfig::for_elements(n, 256).unwrap();
            ctx.scope(|s| {
                // SAFETY: fill writes n floats of the pool buffer.
                unsafe { s.launch(&stream, &fill, &cfg, &params![b.as_view(), v, n as u32])? };
                s.copy_to_host(&stream, &b, &mut host)
            })
            .unwrap();
            let want: Vec<f64> = (0..n).map(|k| (v + k as f32) as f64).collect();
            check("pool buffer", &host, &want, &rng);
        }
        drop(b);
    }
    stream.synchronize().unwrap();
    assert_eq!(ctx.stats().live_count(), live_before);
    let kind = ctx.stats().kind(cudakit::AllocKind::StreamOrdered);
    assert_eq!(kind.live_count, 0);
    assert!(kind.total_allocs >= 100_000);
    assert_eq!(pool.usage().unwrap().used, 0);
    assert_eq!(created.usage().unwrap().used, 0);
    let (free_after, _) = ctx.memory_info().unwrap();
    let drift = free_before.abs_diff(free_after);
    assert!(drift <= 256 << 20, "device memory moved by {drift} bytes");
    created.trim_to(0).unwrap();
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_panicking_host_callback_is_reported_by_its_scope() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let fill = f(&m, "fill");
    let mut rng = Rng::new();
    let n = rng.range(100, 1000);
    let buf = ctx.upload(&vec![POISON; n]).unwrap();
    let stream = ctx.stream().unwrap();
    let cfg = LaunchConfig::for_elements(n, 128).unwrap();
    let after = AtomicUsize::new(0);
    let v = rng.f32_sym();
    let r = ctx.scope(|s| {
        s.host_fn(&stream, || panic!("callback says no"))?;
        // Work after the callback still runs.
        // SAFETY: fill writes n floats of buf.
        unsafe { s.launch(&stream, &fill, &cfg, &params![&buf, v, n as u32])? };
        s.host_fn(&stream, || {
            after.fetch_add(1, Ordering::Relaxed);
        })
    });
    match r {
        Err(Error::HostCallbackPanicked { message }) => {
            assert!(message.contains("callback says no"), "{message}")
        }
        other => panic!("expected HostCallbackPanicked, got {other:?}"),
    }
    assert_eq!(after.load(Ordering::Relaxed), 1);
    let want: Vec<f64> = (0..n).map(|i| (v + i as f32) as f64).collect();
    check("after the panic", &buf.to_vec().unwrap(), &want, &rng);
    assert!(ctx.poisoned().is_none());
    // The next scope is clean.
    ctx.scope(|s| s.host_fn(&stream, || {})).unwrap();
    // As a graph node.
    let mut g = ctx.graph().unwrap();
    let mut calls = 0;
    g.add_host_fn(
        move || {
            calls += 1;
            if calls == 2 {
                panic!("second replay");
            }
        },
        &[],
    )
    .unwrap();
    let exec = g.instantiate(Default::default()).unwrap();
    ctx.scope(|s| s.launch_graph(&stream, &exec)).unwrap();
    let err = ctx.scope(|s| s.launch_graph(&stream, &exec)).unwrap_err();
    assert!(matches!(err, Error::HostCallbackPanicked { .. }), "{err}");
    ctx.scope(|s| s.launch_graph(&stream, &exec)).unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_capture_with_kernel_timing_on() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let (fill, square) = (f(&m, "fill"), f(&m, "square"));
    let mut rng = Rng::new();
    let n = rng.range(1000, 4000);
    let a = ctx.upload(&vec![POISON; n]).unwrap();
    let b = ctx.upload(&vec![POISON; n]).unwrap();
    let stream = ctx.stream().unwrap();
    let cfg = LaunchConfig::for_elements(n, 256).unwrap();
    let v = rng.f32_sym();
    ctx.set_kernel_timing(true);
    let before = ctx.metrics();
    let result = ctx.scope(|s| {
        let g = s.capture(&stream, || {
            // SAFETY: each kernel stays within its n-element buffers.
            unsafe {
                s.launch(&stream, &fill, &cfg, &params![&a, v, n as u32])?;
                s.launch(&stream, &square, &cfg, &params![&a, &b, n as u32])?;
            }
            Ok(())
        })?;
        let exec = g.instantiate(InstantiateOptions::default().label("timed"))?;
        for _ in 0..5 {
            s.launch_graph(&stream, &exec)?;
        }
        Ok(())
    });
    ctx.set_kernel_timing(false);
    result.unwrap();
    let after = ctx.metrics();
    assert_eq!(after.graph_launches - before.graph_launches, 5);
    let timed = after
        .kernels
        .get("graph timed")
        .expect("graph replays timed");
    let earlier = before.kernels.get("graph timed").map_or(0, |k| k.launches);
    assert_eq!(timed.launches - earlier, 5);
    assert!(timed.total.as_nanos() > 0);
    let want: Vec<f64> = (0..n)
        .map(|i| {
            let t = (v + i as f32) as f64;
            t * t
        })
        .collect();
    check("timed capture", &b.to_vec().unwrap(), &want, &rng);
    assert!(ctx.poisoned().is_none());
}

/// The graph benchmarks (`cudakit_suite::bench_graph::graphs`), printed.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn bench_graph_rows() {
    let _g = lock();
    let ctx = ctx();
    let rows = cudakit_suite::bench_graph::graphs(&ctx, 15).expect("benchmarks");
    for r in &rows {
        println!(
            "BENCH {:<55} cudakit {:>12?} raw {:>12?} ratio {:.3}",
            r.name,
            r.cudakit,
            r.raw.unwrap_or_default(),
            r.ratio().unwrap_or(f64::NAN)
        );
    }
}

/// A stream-ordered buffer dropped while its stream captures is freed once
/// the capture has ended, not recorded into the graph (where every replay
/// would free it again); the graph replays cleanly and the arena and pool
/// come back to where they were.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_pool_buffer_dropped_during_a_capture_is_freed_after_it() {
    let _g = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let fill = f(&m, "fill");
    let stream = ctx.stream().unwrap();
    let pool = ctx.default_pool().unwrap();
    let n = 4099usize;
    let out = ctx.upload(&vec![POISON; n]).unwrap();
    let cfg = LaunchConfig::for_elements(n, 256).unwrap();
    let live_before = ctx
        .stats()
        .kind(cudakit::AllocKind::StreamOrdered)
        .live_count;
    let mut doomed = Some(pool.alloc::<f32>(&stream, 1 << 16).unwrap());
    stream.synchronize().unwrap();
    ctx.scope(|s| {
        let g = s.capture(&stream, || {
            // SAFETY: fill writes n floats of out.
            unsafe { s.launch(&stream, &fill, &cfg, &params![&out, 2.0f32, n as u32])? };
            drop(doomed.take());
            Ok(())
        })?;
        assert_eq!(
            g.node_count()?,
            1,
            "only the kernel: the free was not captured"
        );
        assert_eq!(
            ctx.stats()
                .kind(cudakit::AllocKind::StreamOrdered)
                .live_count,
            live_before,
            "freed once the capture ended"
        );
        let exec = g.instantiate(InstantiateOptions::default())?;
        for _ in 0..3 {
            s.launch_graph(&stream, &exec)?;
        }
        Ok(())
    })
    .unwrap();
    let got = out.to_vec().unwrap();
    let want: Vec<f64> = (0..n).map(|k| (2.0f32 + k as f32) as f64).collect();
    check("after replays", &got, &want, &Rng::new());
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
}

/// A host callback that is a scope's last work on its stream ends the
/// scope as soon as it has run (the scope waits for the callback itself,
/// not for an event behind it): the kernel and the download queued before
/// it are complete when the scope returns, over many round trips, also
/// when the callback outlasts the scope's spin (it sleeps), and with two
/// streams whose last work is a callback each.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_scope_ending_in_a_host_callback_returns_with_all_its_work_done() {
    let _l = lock();
    let ctx = ctx();
    let m = module(&ctx);
    let fill = f(&m, "fill");
    let mut rng = Rng::new();
    let n = rng.range(1000, 100_000);
    let buf = ctx.alloc::<f32>(n).unwrap();
    let mut host = ctx.alloc_pinned::<f32>(n).unwrap();
    let (s1, s2) = (ctx.stream().unwrap(), ctx.stream().unwrap());
    let cfg = LaunchConfig::for_elements(n, 128).unwrap();
    let ran = AtomicUsize::new(0);
    for trip in 0..300usize {
        host.fill(POISON);
        let v = rng.f32_sym();
        let sleep = trip % 50 == 7;
        ctx.scope(|s| {
            // SAFETY: fill writes n floats of buf.
            unsafe { s.launch(&s1, &fill, &cfg, &params![&buf, v, n as u32])? };
            s.copy_to_host(&s1, &buf, &mut host)?;
            s.host_fn(&s1, || {
                if sleep {
                    std::thread::sleep(std::time::Duration::from_millis(3));
                }
                ran.fetch_add(1, Ordering::SeqCst);
            })?;
            s.host_fn(&s2, || {
                ran.fetch_add(1000, Ordering::SeqCst);
            })
        })
        .unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), (trip + 1) * 1001, "trip {trip}");
        let want: Vec<f64> = (0..n).map(|i| (v + i as f32) as f64).collect();
        check(&format!("trip {trip}"), &host[..], &want, &rng);
    }
    assert!(ctx.poisoned().is_none());
}
