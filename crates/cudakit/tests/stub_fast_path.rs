//! The launch path's fast case (`Scope::launch` after an earlier launch of
//! the same scope on the same stream, whose checks it takes from caches)
//! against the test-only stand-in libcuda and real NVRTC: every refusal of
//! the full path must still happen there, before the driver, and the
//! stand-in must record no launch for it. Each case below runs inside one
//! scope that has launched already, which is what sends a launch down the
//! fast path.
//!
//! Process-global (`CUDAKIT_LIBCUDA`): the tests take one lock and share
//! one stand-in.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::compile::program::{Arch, Output, Program};
use cudakit::{params, Context, Error, LaunchConfig};
use stub::{call, call0, set_params};

const SOURCE: &str = r#"
extern "C" __global__ void k(float* p, int n) { if (n < 0) p[0] = 1.0f; }
extern "C" __global__ void kd(double* p, int n) { if (n < 0) p[0] = 1.0; }
extern "C" __global__ void kc(unsigned long long h, float* p) { if (h == 0) p[0] = 1.0f; }
"#;

// `refused(what, r, before)` must give the error `pattern`.
macro_rules! assert_refused {
    ($refused:ident, $what:expr, $r:expr, $before:expr, $pattern:pat) => {
        match $refused($what, $r, $before) {
            $pattern => {}
            other => panic!("{}: {other:?}", $what),
        }
    };
}

/// `$ctx`, device 0's context on the stand-in, and `$f`, the kernel
/// `$name` of `SOURCE` compiled and loaded there, looked up with the
/// declared signature `$sig`.
macro_rules! kernel_on_device_0 {
    ($ctx:ident, $f:ident = $name:literal, $sig:literal) => {
        let $ctx = Context::new(0).expect("context on the stand-in");
        let compiled = compiled();
        let module = $ctx.load_module(&compiled).expect("module");
        let $f = module.function_with_signature($name, $sig).expect($name);
    };
}

fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn open() -> libloading::Library {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let () = call(&lib, b"stub_set_device_count\0", 2i32);
    // (pointer, int) at offsets 0 and 8.
    set_params(&lib, &[(0, 8), (8, 4)]);
    lib
}

fn compiled() -> cudakit::compile::program::Compiled {
    Program::new("fast.cu", SOURCE)
        .arch(Arch::Sm(90))
        .output(Output::Ptx)
        .compile()
        .expect("NVRTC compiles the kernels")
}

#[test]
fn every_check_of_the_full_path_holds_on_the_fast_path() {
    let _serial = serial();
    let lib = open();
    let launches = || -> u64 { call0(&lib, b"stub_launch_count\0") };
    let cu = cudakit::sys::driver().expect("the stand-in's table");
    let current = || {
        let mut c = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let rc = unsafe { (cu.cuCtxGetCurrent)(&mut c) };
        assert_eq!(rc, cudakit::sys::CUresult::CUDA_SUCCESS);
        c
    };
    let (c0, c1) = (Context::new(0).unwrap(), Context::new(1).unwrap());
    let compiled = compiled();
    let module = c0.load_module(&compiled).expect("module");
    let f = module
        .function_with_signature("k", "float* p, int n")
        .expect("k");
    let fd = module
        .function_with_signature("kd", "double* p, int n")
        .expect("kd");
    let stream = c0.stream().expect("stream");
    let f32s = c0.alloc::<f32>(4).expect("alloc");
    let f64s = c0.alloc::<f64>(4).expect("alloc");
    let cfg = LaunchConfig::new(1, 32);
    let foreign = c1.alloc::<f32>(4).expect("alloc on device 1");

    let outcome = c0.scope(|s| {
        // Refused before the driver: the stand-in records no launch.
        let refused = |what: &str, r: cudakit::Result<()>, before: u64| -> Error {
            assert_eq!(launches(), before, "{what}: reached the driver");
            match r {
                Err(e) => e,
                Ok(()) => panic!("{what}: launched"),
            }
        };
        let launched = |what: &str, r: cudakit::Result<()>, before: u64| {
            r.unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(launches(), before + 1, "{what}: not launched once");
        };
        // The first launch takes the full path (the scope's first use of
        // the stream, the function's first configuration); the later ones
        // the fast path, the first of them filling `fitted`.
        for i in 0..3 {
            let before = launches();
            // SAFETY: the stand-in runs nothing.
            let r = unsafe { s.launch(&stream, &f, &cfg, &params![&f32s, 1i32]) };
            launched(&format!("warm-up {i}"), r, before);
        }
        assert_eq!(s.fast_launches(), 2, "warm-ups 1 and 2 take the fast path");
        for i in 0..2 {
            let before = launches();
            // SAFETY: the stand-in runs nothing.
            let r = unsafe { s.launch(&stream, &fd, &cfg, &params![&f64s, 1i32]) };
            launched(&format!("kd warm-up {i}"), r, before);
        }
        assert_eq!(s.fast_launches(), 3, "kd's second launch is fast");
        let fast = s.fast_launches();

        // Argument types and sizes.
        let before = launches();
        // SAFETY: refused before the driver.
        let r = unsafe { s.launch(&stream, &f, &cfg, &params![&f64s, 1i32]) };
        assert_refused!(
            refused,
            "double* for float*",
            r,
            before,
            Error::ArgumentType { index: 0, .. }
        );
        // SAFETY: refused before the driver.
        let r = unsafe { s.launch(&stream, &f, &cfg, &params![&f32s, 1u32]) };
        assert_refused!(
            refused,
            "unsigned for int",
            r,
            before,
            Error::ArgumentType { index: 1, .. }
        );
        // SAFETY: refused before the driver.
        let r = unsafe { s.launch(&stream, &f, &cfg, &params![&f32s, 1i64]) };
        refused("long long for int", r, before);
        // SAFETY: refused before the driver.
        let r = unsafe { s.launch(&stream, &f, &cfg, &params![&f32s]) };
        assert_refused!(
            refused,
            "one argument of two",
            r,
            before,
            Error::ArgumentCount { .. }
        );
        // The same argument types fit `k`, not `kd`: the record of what
        // fitted is the function's own (both have one, of another
        // signature each).
        // SAFETY: refused before the driver.
        let r = unsafe { s.launch(&stream, &fd, &cfg, &params![&f32s, 1i32]) };
        assert_refused!(
            refused,
            "float* for kd's double*",
            r,
            before,
            Error::ArgumentType { index: 0, .. }
        );
        // A buffer of another context, without peer access.
        // SAFETY: refused before the driver.
        let r = unsafe { s.launch(&stream, &f, &cfg, &params![&foreign, 1i32]) };
        assert_refused!(
            refused,
            "a buffer of device 1",
            r,
            before,
            Error::ArgumentContextMismatch { index: 0, .. }
        );

        // Configurations: only the one validated last is taken from the
        // cache.
        for (what, bad) in [
            ("a zero grid", LaunchConfig::new(0, 32)),
            ("4096 threads a block", LaunchConfig::new(1, 4096)),
            ("a zero block", LaunchConfig::new(1, 0)),
        ] {
            // SAFETY: refused before the driver.
            let r = unsafe { s.launch(&stream, &f, &bad, &params![&f32s, 1i32]) };
            assert_refused!(refused, what, r, before, Error::LaunchConfig { .. });
        }
        assert_eq!(s.fast_launches(), fast, "a refused launch counted as fast");
        // SAFETY: the stand-in runs nothing.
        let r = unsafe { s.launch(&stream, &f, &cfg, &params![&f32s, 1i32]) };
        launched("after the refusals", r, before);
        assert_eq!(s.fast_launches(), fast + 1, "the caches still hold");

        // Foreign code switches the thread to device 1 behind cudakit's
        // back after a launch on device 0. The fast path believes device 0
        // current, the stand-in refuses the launch (201), and it is issued
        // once more after a full enter.
        let before = launches();
        // SAFETY: the stand-in runs nothing.
        let r = unsafe { s.launch(&stream, &f, &cfg, &params![&f32s, 1i32]) };
        launched("device 0 current again", r, before);
        assert_eq!(current(), c0.as_raw());
        // SAFETY: foreign code's own switch.
        let rc = unsafe { (cu.cuCtxSetCurrent)(c1.as_raw()) };
        assert_eq!(rc, cudakit::sys::CUresult::CUDA_SUCCESS);
        let before = launches();
        // SAFETY: the stand-in runs nothing.
        let r = unsafe { s.launch(&stream, &f, &cfg, &params![&f32s, 1i32]) };
        launched("after a foreign switch", r, before);
        assert_eq!(current(), c0.as_raw(), "launched with device 1 current");

        // A launch during a capture of the stream is the capture's (the
        // fast path leaves captures to the full path, which records the
        // capture's peer memory): the stand-in counts it as a node of the
        // capture.
        let graph = s.capture(&stream, || {
            let nodes: u64 = call(&lib, b"stub_capture_nodes\0", stream.as_raw() as usize);
            let fast = s.fast_launches();
            // SAFETY: the stand-in runs nothing.
            unsafe { s.launch(&stream, &f, &cfg, &params![&f32s, 1i32])? };
            let after: u64 = call(&lib, b"stub_capture_nodes\0", stream.as_raw() as usize);
            assert_eq!(after, nodes + 1, "the launch is not in the capture");
            assert_eq!(
                s.fast_launches(),
                fast,
                "a captured launch took the fast path"
            );
            Ok(())
        })?;
        drop(graph);
        let before = launches();
        // SAFETY: the stand-in runs nothing.
        let r = unsafe { s.launch(&stream, &f, &cfg, &params![&f32s, 1i32]) };
        launched("after the capture", r, before);

        // A sticky error poisons the context: the next launch is refused.
        let () = call(&lib, b"stub_fail_next_sync\0", 700i32);
        assert!(stream.synchronize().is_err(), "the injected fault");
        assert!(c0.poisoned().is_some(), "a sticky error poisons");
        let before = launches();
        // SAFETY: refused before the driver.
        let r = unsafe { s.launch(&stream, &f, &cfg, &params![&f32s, 1i32]) };
        assert_refused!(
            refused,
            "a poisoned context",
            r,
            before,
            Error::ContextPoisoned { .. }
        );
        Ok(())
    });
    // What the scope's own end reports on a poisoned context is not this
    // test's subject (stub_waits covers it); every case above ran.
    drop(outcome);
}

/// Rule 1 on the fast path: a scope that launches again and again on a
/// stream (after its first launch, every one takes the fast path) while
/// another thread captures that stream. Each launch is refused (the stream
/// is the other scope's capture) or issued; none may enter the capture.
#[test]
fn the_fast_path_never_enters_another_threads_capture() {
    let _serial = serial();
    let lib = open();
    kernel_on_device_0!(ctx, f = "k", "float* p, int n");
    let stream = ctx.stream().expect("stream");
    let buf = ctx.alloc::<f32>(4).expect("alloc");
    let cfg = LaunchConfig::new(1, 32);
    let foreign_before: u64 = call0(&lib, b"stub_foreign_captured\0");
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (mut issued, mut refused) = (0u64, 0u64);
    let mut failed = Vec::new();
    std::thread::scope(|t| {
        let launcher = t.spawn(|| {
            let (mut issued, mut refused) = (0u64, 0u64);
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let _ = ctx.scope(|s| {
                    for _ in 0..200 {
                        // SAFETY: the stand-in runs nothing.
                        match unsafe { s.launch(&stream, &f, &cfg, &params![&buf, 1i32]) } {
                            Ok(()) => issued += 1,
                            Err(Error::StreamCaptured { .. }) => refused += 1,
                            Err(e) => panic!("launch: {e}"),
                        }
                    }
                    Ok(())
                });
            }
            (issued, refused)
        });
        for _ in 0..300 {
            let outcome = ctx.scope(|s| {
                s.capture(&stream, || {
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
        (issued, refused) = launcher.join().expect("the launching thread");
    });
    let foreign: u64 = call0(&lib, b"stub_foreign_captured\0");
    assert_eq!(
        foreign - foreign_before,
        0,
        "another thread's launch was recorded into a capture"
    );
    assert!(failed.is_empty(), "captures failed: {failed:?}");
    assert!(issued > 0, "no launch was issued");
    eprintln!("{issued} launches issued, {refused} refused during captures");
}

/// What the fast path leaves to the full path because the full path must
/// wait or reorder there: a host function queued on the stream (the scope's
/// end must then wait for the stream again, not only for the host
/// function), a second stream of the scope (a range another stream used
/// last is waited for), and stream-ordered memory of another stream (its
/// allocation is waited for). Each is checked by what the driver was asked
/// to do, and by the scope's count of fast launches.
#[test]
fn the_fast_path_leaves_waits_and_tails_to_the_full_path() {
    let _serial = serial();
    let lib = open();
    kernel_on_device_0!(ctx, f = "k", "float* p, int n");
    let (a, b) = (ctx.stream().expect("a"), ctx.stream().expect("b"));
    let (x, y) = (
        ctx.alloc::<f32>(4).expect("x"),
        ctx.alloc::<f32>(4).expect("y"),
    );
    let cfg = LaunchConfig::new(1, 32);
    let waits = || -> u64 { call0(&lib, b"stub_stream_waits\0") };
    let event_syncs = || stub::counts::<3>(&lib, b"stub_wait_counts\0")[1];
    let host_fns_run = || -> u64 { call0(&lib, b"stub_host_fns_run\0") };
    // Two launches of `k` on x: the second takes the fast path.
    macro_rules! warm {
        ($s:expr, $stream:expr) => {
            for _ in 0..2 {
                // SAFETY: the stand-in runs nothing.
                unsafe { $s.launch($stream, &f, &cfg, &params![&x, 1i32])? };
            }
        };
    }

    // A host function, then a launch: the launch is no longer the tail,
    // so the scope's end waits for the stream (event record and wait), not
    // only for the host function that has run.
    let mut syncs_at_end = 0;
    ctx.scope(|s| {
        warm!(s, &a);
        assert_eq!(s.fast_launches(), 1);
        let ran = host_fns_run();
        s.host_fn(&a, || {})?;
        stub::wait_until("the host function", || host_fns_run() > ran);
        // SAFETY: the stand-in runs nothing.
        unsafe { s.launch(&a, &f, &cfg, &params![&x, 1i32])? };
        assert_eq!(
            s.fast_launches(),
            1,
            "a launch after a host function was fast"
        );
        syncs_at_end = event_syncs();
        Ok(())
    })
    .expect("scope");
    assert!(
        event_syncs() > syncs_at_end,
        "the scope's end did not wait for the launch after its host function"
    );

    // Two streams: a(x), b(x), a(y), then a(x) again must wait for b,
    // which used x last.
    ctx.scope(|s| {
        warm!(s, &a);
        let before = waits();
        // SAFETY: the stand-in runs nothing.
        unsafe { s.launch(&b, &f, &cfg, &params![&x, 1i32])? };
        assert_eq!(waits() - before, 1, "b(x) waits for a(x)");
        // SAFETY: the stand-in runs nothing.
        unsafe { s.launch(&a, &f, &cfg, &params![&y, 1i32])? };
        let (before, fast) = (waits(), s.fast_launches());
        // SAFETY: the stand-in runs nothing.
        unsafe { s.launch(&a, &f, &cfg, &params![&x, 1i32])? };
        assert_eq!(waits() - before, 1, "a(x) after b(x) waits for b");
        assert_eq!(
            s.fast_launches(),
            fast,
            "a launch of a two-stream scope was fast"
        );
        Ok(())
    })
    .expect("scope");

    // Stream-ordered memory allocated on b, used on a: a waits for b once.
    let pool = ctx.default_pool().expect("default pool");
    let pb = pool.alloc::<f32>(&b, 4).expect("pool buffer on b");
    ctx.scope(|s| {
        warm!(s, &a);
        let (before, fast) = (waits(), s.fast_launches());
        // SAFETY: the stand-in runs nothing.
        unsafe { s.launch(&a, &f, &cfg, &params![pb.as_view(), 1i32])? };
        assert_eq!(waits() - before, 1, "a waits for the allocation on b");
        assert_eq!(
            s.fast_launches(),
            fast,
            "a launch with b's pool memory was fast"
        );
        let before = waits();
        // SAFETY: the stand-in runs nothing.
        unsafe { s.launch(&a, &f, &cfg, &params![pb.as_view(), 1i32])? };
        assert_eq!(waits() - before, 0, "once is enough");
        Ok(())
    })
    .expect("scope");
    drop(pb);
}

/// A conditional handle outside its graph is refused on the fast path as
/// on the full one, though a plain `u64` of the same parameter took the
/// fast path just before.
#[test]
fn a_condition_handle_is_refused_on_the_fast_path() {
    let _serial = serial();
    let lib = open();
    set_params(&lib, &[(0, 8), (8, 8)]);
    kernel_on_device_0!(ctx, kc = "kc", "unsigned long long h, float* p");
    let stream = ctx.stream().expect("stream");
    let buf = ctx.alloc::<f32>(4).expect("alloc");
    let cfg = LaunchConfig::new(1, 32);
    let mut g = ctx.graph().expect("graph");
    let cond = g.condition(Some(1)).expect("handle");
    let launches = || -> u64 { call0(&lib, b"stub_launch_count\0") };
    ctx.scope(|s| {
        for _ in 0..3 {
            // SAFETY: the stand-in runs nothing.
            unsafe { s.launch(&stream, &kc, &cfg, &params![7u64, &buf])? };
        }
        assert_eq!(s.fast_launches(), 2, "a plain u64 takes the fast path");
        let before = launches();
        // SAFETY: refused before the driver.
        let r = unsafe { s.launch(&stream, &kc, &cfg, &params![&cond, &buf]) };
        assert!(
            matches!(r, Err(Error::ForeignCondition { .. })),
            "a condition handle outside its graph: {r:?}"
        );
        assert_eq!(launches(), before, "reached the driver");
        assert_eq!(s.fast_launches(), 2);
        Ok(())
    })
    .expect("scope");
}
