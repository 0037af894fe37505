//! Executable graphs against their replays (issue 20): an exec dropped, or
//! forgotten, while its replays run leaves them correct, and the instantiate
//! flags do what they say.

use std::sync::atomic::{AtomicUsize, Ordering};

use cudakit::work::graph::InstantiateOptions;
use cudakit::{AllocKind, Context};

/// Ten replays of a graph that copies a 64 MiB buffer and counts in a host
/// node; the exec is dropped (first round) or forgotten (second round)
/// inside the scope right after queuing them. The scope's wait covers the
/// replays: every host node ran, the destination holds the source exactly,
/// and nothing is reported leaked or refused.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn an_exec_dropped_or_forgotten_while_its_replays_run() {
    let ctx = Context::new(0).expect("device 0");
    let stream = ctx.stream().expect("stream");
    let mut rng = cudakit_suite::rng::Rng::new();
    let n = 16 << 20;
    let host: Vec<f32> = rng.vec_f32(n);
    let src = ctx.upload(&host).expect("upload");
    for forget in [false, true] {
        let dst = ctx.alloc::<f32>(n).expect("dst");
        dst.fill(f32::NAN).expect("poison");
        let calls = AtomicUsize::new(0);
        let mut g = ctx.graph().expect("graph");
        let copy = g.add_copy(&src, &dst, &[]).expect("copy node");
        g.add_host_fn(
            || {
                calls.fetch_add(1, Ordering::Relaxed);
            },
            &[copy],
        )
        .expect("host node");
        let exec = g.instantiate(InstantiateOptions::default()).expect("exec");
        ctx.scope(|s| {
            for _ in 0..10 {
                s.launch_graph(&stream, &exec)?;
            }
            if forget {
                std::mem::forget(exec);
            } else {
                drop(exec);
            }
            Ok(())
        })
        .expect("scope");
        assert_eq!(calls.load(Ordering::Relaxed), 10, "forget={forget}");
        drop(g);
        let got = dst.to_vec().expect("read back");
        let bad = got
            .iter()
            .zip(&host)
            .position(|(a, b)| a.to_bits() != b.to_bits());
        assert_eq!(bad, None, "forget={forget}");
    }
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
    assert_eq!(ctx.stats().kind(AllocKind::Leaked).live_count, 0);
}

/// Auto-free on launch: a graph whose allocation node has no free node is
/// refused without the flag and replays with it (the arena shows its graph
/// memory while the exec lives, none after); node priorities instantiate
/// and replay.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn instantiate_flags() {
    let ctx = Context::new(0).expect("device 0");
    let stream = ctx.stream().expect("stream");
    let mut g = ctx.graph().expect("graph");
    let (node, alloc) = g.add_mem_alloc::<f32>(1 << 20, &[]).expect("alloc node");
    g.add_memset_alloc(&alloc, 1.0f32, &[node]).expect("memset");
    assert!(g.instantiate(InstantiateOptions::default()).is_err());
    let exec = g
        .instantiate(
            InstantiateOptions::default()
                .auto_free_on_launch()
                .use_node_priority(),
        )
        .expect("auto-free on launch");
    assert_eq!(ctx.stats().kind(AllocKind::Graph).live_bytes, 4 << 20);
    ctx.scope(|s| {
        for _ in 0..5 {
            s.launch_graph(&stream, &exec)?;
        }
        Ok(())
    })
    .expect("replays");
    drop(exec);
    assert_eq!(ctx.stats().kind(AllocKind::Graph).live_count, 0);
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
    drop(alloc);
}
