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

use stub::call0;

use cudakit::{AllocKind, Context, Error};

/// The stand-in's capture state is process-wide: these tests take turns.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// (nodes, nodes queued from another thread, invalidated, members) of the
/// last capture the stand-in saw end.
fn last_capture(lib: &libloading::Library) -> [u64; 4] {
    // SAFETY: exported by the stand-in with this signature.
    let f = unsafe { lib.get::<unsafe extern "C" fn(*mut u64)>(b"stub_last_capture\0") }
        .expect("stub_last_capture");
    let mut out = [0u64; 4];
    // SAFETY: four writable u64s.
    unsafe { f(out.as_mut_ptr()) };
    out
}

/// The stand-in's refusal counts by reason (see `stub_refusals`).
fn refusals(lib: &libloading::Library) -> [u64; 11] {
    // SAFETY: exported by the stand-in with this signature.
    let f =
        unsafe { lib.get::<unsafe extern "C" fn(*mut u64, usize) -> usize>(b"stub_refusals\0") }
            .expect("stub_refusals");
    let mut out = [0u64; 11];
    // SAFETY: `out.len()` writable u64s.
    let n = unsafe { f(out.as_mut_ptr(), out.len()) };
    assert_eq!(n, out.len(), "the stand-in's reasons changed");
    out
}

/// `stub_refusals` indices.
const NOT_PERMITTED: usize = 1;
const CAPTURE_UNSUPPORTED: usize = 2;

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
                matches!(other, Err(Error::StreamCaptured { .. })),
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
        // Every refusal inside was cudakit's, before the driver, and `f`
        // returned Ok: the capture must give its graph back.
        let graph = graph.expect("the capture, whose refusals were all made before the driver");
        drop(graph);
        Ok(())
    });
    outcome.expect("scope");
    let [nodes, foreign, invalidated, _] = last_capture(&lib);
    assert_eq!(invalidated, 0, "the driver invalidated the capture");
    assert_eq!(foreign, 0, "another thread's work entered the capture");
    assert!(nodes >= 1, "the host node was not captured");
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

/// A synchronous call on another thread during a capture runs: captures
/// are thread-local, so one thread's capture does not change what another
/// thread may do, and the call does not fail that capture.
#[test]
fn another_threads_synchronous_copy_runs_during_a_capture() {
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
            // Another thread's synchronous copy is not the capture's
            // business: it runs (waiting for the captured stream only up
            // to where its capture began), and the capture goes on.
            dev2.copy_from_host(&[7u32; 16])
                .expect("a synchronous copy on another thread during a capture");
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

/// Captures are exclusive (DESIGN.md, wave 3): while one thread captures a
/// stream, another thread's scope using the same stream must be refused or
/// wait; its work must never become a node of the capture (the stand-in,
/// like CUDA, records work queued on a capturing stream from any thread,
/// and counts what came from a thread other than the capture's), and its
/// waits must not invalidate the capture (a stream sync during a capture is
/// 900 and invalidates it, from any thread).
#[test]
fn another_threads_work_never_enters_a_capture() {
    let _serial = serial();
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let ctx = Context::new(0).expect("context on the stand-in");
    let module = ctx
        .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
        .expect("module");
    let f = module.function("k").expect("function");
    let a = ctx.stream().expect("stream");
    let cfg = cudakit::LaunchConfig::new(1, 32);
    let foreign_before: u64 = call0(&lib, b"stub_foreign_captured\0");
    let refused_before = refusals(&lib)[CAPTURE_UNSUPPORTED];
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut failed = Vec::new();
    std::thread::scope(|t| {
        t.spawn(|| {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                // Refused (the stream is another scope's capture) or
                // issued; either is fine, entering the capture is not.
                // SAFETY: the stand-in runs nothing.
                let _ = ctx.scope(|s| unsafe { s.launch(&a, &f, &cfg, &cudakit::params![]) });
            }
        });
        for _ in 0..300 {
            let outcome = ctx.scope(|s| {
                s.capture(&a, || {
                    std::thread::yield_now();
                    Ok(())
                })
                .map(drop)
            });
            if let Err(e) = outcome {
                failed.push(e.to_string());
            }
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let foreign: u64 = call0(&lib, b"stub_foreign_captured\0");
    assert_eq!(
        foreign - foreign_before,
        0,
        "another thread's work was recorded into a capture"
    );
    assert_eq!(
        refusals(&lib)[CAPTURE_UNSUPPORTED],
        refused_before,
        "another thread's wait invalidated a capture"
    );
    assert!(failed.is_empty(), "captures failed: {failed:?}");
}

/// Driver threads run no cudakit drops (DESIGN.md, wave 3): a host
/// callback that owns a buffer is called on the stand-in's driver thread,
/// where every driver call is refused (800, nothing freed); the buffer
/// must be dropped on a thread cudakit controls, and freed.
#[test]
fn host_callbacks_drop_nothing_on_the_driver_thread() {
    let _serial = serial();
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let ctx = Context::new(0).expect("context on the stand-in");
    let stream = ctx.stream().expect("stream");
    let buf = ctx.alloc::<f32>(16).expect("buffer");
    let live_before: usize = call0(&lib, b"stub_live_allocations\0");
    let refused_before = refusals(&lib)[NOT_PERMITTED];
    let calls = std::sync::atomic::AtomicUsize::new(0);
    ctx.scope(|s| {
        s.host_fn(&stream, {
            let calls = &calls;
            move || {
                let _owned = &buf;
                calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        })
    })
    .expect("scope with a host callback");
    assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 1);
    assert_eq!(
        refusals(&lib)[NOT_PERMITTED],
        refused_before,
        "a driver call was made on the driver's callback thread"
    );
    let live_after: usize = call0(&lib, b"stub_live_allocations\0");
    assert_eq!(
        live_after + 1,
        live_before,
        "the callback's buffer was not freed"
    );
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
}

/// A buffer dropped inside a capture: `cuMemFree_v2` is "potentially
/// unsafe" during a capture (900, and the capture is invalidated), so
/// cudakit must defer the free until the capture has ended, and the capture
/// must succeed.
#[test]
fn a_buffer_dropped_during_a_capture_is_freed_after_it() {
    let _serial = serial();
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let ctx = Context::new(0).expect("context on the stand-in");
    let a = ctx.stream().expect("stream");
    let buf = ctx.alloc::<f32>(16).expect("buffer");
    let live_before: usize = call0(&lib, b"stub_live_allocations\0");
    let refused_before = refusals(&lib)[CAPTURE_UNSUPPORTED];
    let outcome = ctx.scope(|s| {
        s.capture(&a, move || {
            drop(buf);
            Ok(())
        })
        .map(drop)
    });
    assert_eq!(
        refusals(&lib)[CAPTURE_UNSUPPORTED],
        refused_before,
        "a free reached the driver during the capture"
    );
    outcome.expect("the capture");
    let live_after: usize = call0(&lib, b"stub_live_allocations\0");
    assert_eq!(live_after + 1, live_before, "the buffer was never freed");
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
}

#[test]
fn a_joined_stream_dropped_on_another_thread_is_kept_and_recorded() {
    let _serial = serial();
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let ctx = Context::new(0).expect("context on the stand-in");
    let a = ctx.stream().expect("stream a");
    let joiner = ctx.stream().expect("stream b");
    let ev = ctx.event().expect("event");
    let leaked_before = ctx.stats().kind(AllocKind::Leaked).live_count;
    let mut joiner = Some(joiner);
    ctx.scope(|s| {
        let graph = s.capture(&a, || {
            ev.record(&a)?;
            let b = joiner.take().expect("the joining stream");
            // b joins this thread's capture, then is dropped on another
            // thread while the capture goes on: the driver still counts it
            // in the capture, so it is kept, and the arena says so.
            b.wait(&ev)?;
            std::thread::scope(|t| {
                t.spawn(move || drop(b));
            });
            Ok(())
        });
        drop(graph);
        Ok(())
    })
    .expect("scope");
    let [_, foreign, invalidated, _] = last_capture(&lib);
    assert_eq!((foreign, invalidated), (0, 0));
    assert_eq!(
        ctx.stats().kind(AllocKind::Leaked).live_count,
        leaked_before + 1,
        "the kept stream is recorded as leaked"
    );
    assert!(
        ctx.leak_report()
            .contains("dropped inside another thread's capture"),
        "{}",
        ctx.leak_report()
    );
}
