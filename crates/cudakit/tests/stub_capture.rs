//! Capture ownership, against the test-only stand-in libcuda (which models
//! which streams capture, and counts frees and host functions queued on a
//! capturing stream). Checks the review fixes on a machine without a GPU:
//!
//! - work of another scope on a stream that a scope is capturing is
//!   refused (it would land in that scope's graph);
//! - a host callback on a stream that joined the capture through an event
//!   is refused (a one-shot callback captured there would be freed at the
//!   first replay); on the capture's own stream it becomes a host node;
//! - a stream-ordered buffer dropped during a capture is freed after the
//!   capture ends, never on the capturing stream.
//!
//! Process-global (`CUDAKIT_LIBCUDA`), hence one test in its own binary.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::{AllocKind, Context, Error};

/// The stand-in's capture state is process-wide: these tests take turns.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

#[test]
fn captures_belong_to_their_scope() {
    let _serial = serial();
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    // SAFETY: exported by the stand-in with these signatures.
    let join = unsafe { lib.get::<unsafe extern "C" fn(usize)>(b"stub_join_capture\0") }
        .expect("stub_join_capture");
    // SAFETY: as above.
    let counts = unsafe { lib.get::<unsafe extern "C" fn(*mut u64)>(b"stub_capture_counts\0") }
        .expect("stub_capture_counts");
    let read = || {
        let mut c = [0u64; 3];
        // SAFETY: three writable u64s.
        unsafe { counts(c.as_mut_ptr()) };
        c
    };

    let ctx = Context::new(0).expect("context on the stand-in");
    let a = ctx.stream().expect("stream a");
    let b = ctx.stream().expect("stream b");
    assert_ne!(a.as_raw(), b.as_raw());
    let pool = ctx.default_pool().expect("default pool");
    let mut doomed = Some(pool.alloc::<f32>(&a, 1024).expect("pool buffer"));
    let ordered_before = ctx.stats().kind(AllocKind::StreamOrdered).live_count;
    assert_eq!(ordered_before, 1);

    let outcome = ctx.scope(|s| {
        let graph = s.capture(&a, || {
            // The capture's own stream: the callback becomes a host node.
            s.host_fn(&a, || {})?;
            // Another scope, on the stream this one captures: refused.
            let other = ctx.scope(|s2| s2.host_fn(&a, || {}));
            assert!(
                matches!(other, Err(Error::IllegalDuringCapture { .. })),
                "{other:?}"
            );
            // A stream that joined the capture through an event.
            // SAFETY: a plain value.
            unsafe { join(b.as_raw() as usize) };
            let joined = s.host_fn(&b, || {});
            assert!(
                matches!(joined, Err(Error::IllegalDuringCapture { .. })),
                "{joined:?}"
            );
            // ... and another scope, which owns no capture, on it: refused.
            let other = ctx.scope(|s2| s2.host_fn(&b, || {}));
            assert!(
                matches!(other, Err(Error::IllegalDuringCapture { .. })),
                "{other:?}"
            );
            // A buffer dropped while its stream captures: not freed now.
            drop(doomed.take());
            let [frees, captured, _] = read();
            assert_eq!((frees, captured), (0, 0), "no free during the capture");
            Ok(())
        });
        // The host_fn on a joined stream was refused inside; the capture
        // reports the first refused operation, if the scope records it.
        drop(graph);
        Ok(())
    });
    outcome.expect("scope");
    let [frees, captured, host_fns] = read();
    assert_eq!(host_fns, 1, "one host node, on the capture's own stream");
    assert_eq!(captured, 0, "no free was recorded into the graph");
    assert_eq!(
        frees, 1,
        "the dropped buffer was freed once the capture ended"
    );
    assert_eq!(ctx.stats().kind(AllocKind::StreamOrdered).live_count, 0);
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
}

/// Nodes over a graph allocation depend on its allocation node, and its
/// free node on each of them, whatever the caller listed (the stand-in
/// records every node's dependencies and, like the driver, refuses a
/// repeated one).
#[test]
fn graph_allocation_nodes_are_ordered() {
    let _serial = serial();
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    // SAFETY: exported by the stand-in with this signature.
    let deps_of = unsafe {
        lib.get::<unsafe extern "C" fn(usize, *mut usize, usize) -> usize>(b"stub_node_deps\0")
    }
    .expect("stub_node_deps");
    let deps = |node: cudakit::GraphNode| {
        let mut out = [0usize; 16];
        // SAFETY: 16 writable usizes.
        let n = unsafe { deps_of(node.as_raw() as usize, out.as_mut_ptr(), out.len()) };
        assert_ne!(n, usize::MAX, "unknown node");
        let mut v = out[..n].to_vec();
        v.sort_unstable();
        v
    };
    let raw = |n: cudakit::GraphNode| n.as_raw() as usize;

    let ctx = Context::new(0).expect("context on the stand-in");
    let dev = ctx.alloc::<f32>(64).expect("device buffer");
    let mut g = ctx.graph().expect("graph");
    let (alloc_node, alloc) = g.add_mem_alloc::<f32>(64, &[]).expect("alloc node");
    // No dependency given: the allocation node is added.
    let set = g.add_memset_alloc(&alloc, 1.0f32, &[]).expect("memset");
    assert_eq!(deps(set), vec![raw(alloc_node)]);
    // The allocation node given already: not repeated.
    let copy = g
        .add_copy_from_alloc(&alloc, &dev, &[set, alloc_node])
        .expect("copy");
    let mut want = vec![raw(set), raw(alloc_node)];
    want.sort_unstable();
    assert_eq!(deps(copy), want);
    // The free waits for the allocation and every node that used it.
    let free = g.add_mem_free(alloc, &[copy]).expect("free");
    let mut want = vec![raw(alloc_node), raw(set), raw(copy)];
    want.sort_unstable();
    assert_eq!(deps(free), want);
}

/// A synchronous call on another thread during a capture is refused (the
/// context is capturing), but it does not fail that capture: captures are
/// thread-local, and so is the record of what they refused.
#[test]
fn a_refusal_on_another_thread_does_not_fail_a_capture() {
    let _serial = serial();
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    let ctx = Context::new(0).expect("context on the stand-in");
    let a = ctx.stream().expect("stream");
    let dev = ctx.alloc::<u32>(16).expect("buffer");
    let (to_other, from_capture) = std::sync::mpsc::channel::<()>();
    let (to_capture, from_other) = std::sync::mpsc::channel::<()>();
    std::thread::scope(|t| {
        let (ctx2, dev2) = (&ctx, &dev);
        t.spawn(move || {
            from_capture.recv().expect("the capture runs");
            let err = dev2.copy_from_host(&[7u32; 16]).unwrap_err();
            assert!(matches!(err, Error::IllegalDuringCapture { .. }), "{err}");
            let _ = ctx2;
            to_capture.send(()).expect("signal");
        });
        let graph = ctx.scope(|s| {
            s.capture(&a, || {
                to_other.send(()).expect("signal");
                from_other.recv().expect("the other thread was refused");
                Ok(())
            })
            .map(drop)
        });
        assert!(
            graph.is_ok(),
            "the capture failed for another thread's refusal: {graph:?}"
        );
    });
}
