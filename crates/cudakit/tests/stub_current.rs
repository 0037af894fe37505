//! The launch path's record of the thread's current context, against the
//! test-only stand-in libcuda (which keeps a current context per thread, as
//! the driver does, and gives each device's primary context its own
//! handle). Launches and stream-ordered calls skip the driver's
//! current-context query when the thread's last `enter` was for their
//! context; every cudakit path that switches the thread's context must keep
//! that record true, or a launch would be issued with another context
//! current. Stream-ordered memory is checked after a foreign context switch,
//! and freed explicitly on a poisoned context (handed back all the same).
//!
//! Process-global (`CUDAKIT_LIBCUDA`), hence one test in its own binary.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::{params, Context, LaunchConfig};

#[test]
fn launches_and_stream_ordered_memory_keep_to_their_context() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    // SAFETY: exported by the stand-in with these signatures.
    let devices = unsafe { lib.get::<unsafe extern "C" fn(i32)>(b"stub_set_device_count\0") }
        .expect("stub_set_device_count");
    // SAFETY: as above.
    let set_params =
        unsafe { lib.get::<unsafe extern "C" fn(*const usize, usize)>(b"stub_set_params\0") }
            .expect("stub_set_params");
    // SAFETY: plain values; one parameter of 8 bytes at offset 0.
    unsafe {
        devices(2);
        set_params([0usize, 8].as_ptr(), 1);
    }
    let cu = cudakit::sys::driver().expect("the stand-in's table");
    let current = || {
        let mut c = std::ptr::null_mut();
        // SAFETY: a valid out-pointer.
        let rc = unsafe { (cu.cuCtxGetCurrent)(&mut c) };
        assert_eq!(rc, cudakit::sys::CUresult::CUDA_SUCCESS);
        c
    };

    let (c0, c1) = (Context::new(0).unwrap(), Context::new(1).unwrap());
    assert_ne!(c0.as_raw(), c1.as_raw());
    // The per-SM limits occupancy code reads, as the stand-in reports them
    // (H100-like).
    let l = c0.limits();
    assert_eq!(
        (
            l.max_threads_per_multiprocessor,
            l.max_blocks_per_multiprocessor,
            l.max_shared_per_multiprocessor,
            l.max_registers_per_multiprocessor,
            l.max_registers_per_block
        ),
        (2048, 32, 228 * 1024, 65536, 65536)
    );
    let module = c0
        .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
        .expect("module");
    let f = module.function("k").expect("function");
    let stream = c0.stream().expect("stream");
    let buf = c0.alloc::<f32>(16).expect("alloc");
    let cfg = LaunchConfig::new(1, 32);
    // Launches on c0 and returns the context current right after the launch
    // (the scope's end makes c0 current again, so it is read inside).
    let launch = || {
        let mut during = std::ptr::null_mut();
        c0.scope(|s| {
            // SAFETY: the stand-in runs nothing.
            unsafe { s.launch(&stream, &f, &cfg, &params![&buf])? };
            during = current();
            Ok(())
        })
        .expect("launch");
        during
    };

    // A launch on c0: c0 is current, and the record says so.
    assert_eq!(launch(), c0.as_raw());

    // Dropping a buffer of c1 makes c1 current (the drop hands the memory
    // back in its own context). The next launch on c0 must not take c0 for
    // current on the strength of the old record.
    // SAFETY: exported by the stand-in with this signature.
    let refusals =
        unsafe { lib.get::<unsafe extern "C" fn(*mut u64, usize) -> usize>(b"stub_refusals\0") }
            .expect("stub_refusals");
    let wrong_context = || {
        let mut r = [0u64; 11];
        // SAFETY: `r.len()` writable u64s.
        unsafe { refusals(r.as_mut_ptr(), r.len()) };
        r[0]
    };
    // SAFETY: exported by the stand-in with this signature.
    let launch_count = unsafe { lib.get::<unsafe extern "C" fn() -> u64>(b"stub_launch_count\0") }
        .expect("stub_launch_count");
    let other = c1.alloc::<f32>(16).expect("alloc on device 1");
    assert_eq!(current(), c1.as_raw());
    // SAFETY: no arguments.
    let (refused_before, launched_before) = (wrong_context(), unsafe { launch_count() });
    assert_eq!(launch(), c0.as_raw(), "launched with c1 current");
    // SAFETY: no arguments.
    let launched = unsafe { launch_count() } - launched_before;
    assert_eq!(
        launched, 1,
        "the launch did not reach the driver exactly once"
    );
    assert!(
        wrong_context() - refused_before <= 1,
        "more than one launch was refused for the wrong context"
    );
    drop(other);
    assert_eq!(current(), c1.as_raw());
    assert_eq!(
        launch(),
        c0.as_raw(),
        "launched with c1 current after c1's drop"
    );

    // A launch after foreign code switched the thread's context behind
    // cudakit's record (c0 is recorded as current): the stand-in refuses
    // the fast path's launch (201, the function is c0's and c1 is
    // current), and cudakit must enter c0 and issue it once more
    // (`Context::should_retry_elsewhere`).
    assert_eq!(launch(), c0.as_raw());
    // SAFETY: foreign code's own switch.
    let rc = unsafe { (cu.cuCtxSetCurrent)(c1.as_raw()) };
    assert_eq!(rc, cudakit::sys::CUresult::CUDA_SUCCESS);
    // SAFETY: no arguments.
    let (refused_before, launched_before) = (wrong_context(), unsafe { launch_count() });
    let mut during = std::ptr::null_mut();
    // SAFETY: the stand-in runs nothing.
    c0.scope(|s| {
        // SAFETY: the stand-in runs nothing.
        unsafe { s.launch(&stream, &f, &cfg, &params![&buf])? };
        during = current();
        Ok(())
    })
    .expect("the retried launch");
    assert_eq!(during, c0.as_raw());
    // SAFETY: no arguments.
    assert_eq!(unsafe { launch_count() }, launched_before + 1);
    assert_eq!(
        wrong_context(),
        refused_before + 1,
        "the fast path did not meet the foreign switch (the retry went untested)"
    );

    // Stream-ordered memory after foreign code switched the thread's context
    // away: the stream names the device, and the memory comes back.
    let pool = c0.default_pool().expect("default pool");
    assert_eq!(launch(), c0.as_raw());
    // SAFETY: foreign code's own switch; cudakit must cope with it.
    let rc = unsafe { (cu.cuCtxSetCurrent)(c1.as_raw()) };
    assert_eq!(rc, cudakit::sys::CUresult::CUDA_SUCCESS);
    let live = c0.stats().live_count();
    let a = pool
        .alloc::<f32>(&stream, 64)
        .expect("stream-ordered alloc");
    assert_eq!(c0.stats().live_count(), live + 1);
    a.free().expect("stream-ordered free");
    assert_eq!(c0.stats().live_count(), live);

    // A stream-ordered buffer freed explicitly while its stream captures a
    // graph: the free is not recorded into the graph (a replay would free
    // it again), and the memory is handed back once the capture ends.
    // SAFETY: exported by the stand-in with this signature.
    let capture_counts =
        unsafe { lib.get::<unsafe extern "C" fn(*mut u64)>(b"stub_capture_counts\0") }
            .expect("stub_capture_counts");
    let counts = || {
        let mut c = [0u64; 3];
        // SAFETY: three writable u64s.
        unsafe { capture_counts(c.as_mut_ptr()) };
        c
    };
    let captured_before = counts()[1];
    let freed = pool
        .alloc::<f32>(&stream, 64)
        .expect("stream-ordered alloc");
    c0.scope(|s| {
        let graph = s.capture(&stream, || freed.free())?;
        drop(graph);
        Ok(())
    })
    .expect("capture");
    assert_eq!(counts()[1], captured_before, "the free went into the graph");
    assert_eq!(c0.stats().live_count(), live, "not handed back");

    // A stream-ordered buffer freed explicitly on a context poisoned since
    // it was made: a typed error, and the memory is still handed back (as a
    // drop hands it back) and leaves the arena.
    // SAFETY: exported by the stand-in with this signature.
    let fail_next_sync = unsafe { lib.get::<unsafe extern "C" fn(i32)>(b"stub_fail_next_sync\0") }
        .expect("stub_fail_next_sync");
    // SAFETY: exported by the stand-in with this signature.
    let live_allocations =
        unsafe { lib.get::<unsafe extern "C" fn() -> usize>(b"stub_live_allocations\0") }
            .expect("stub_live_allocations");
    let a = pool
        .alloc::<f32>(&stream, 64)
        .expect("stream-ordered alloc");
    // SAFETY: no arguments.
    let driver_live = unsafe { live_allocations() };
    // SAFETY: a plain value; 700 is CUDA_ERROR_ILLEGAL_ADDRESS, sticky.
    unsafe { fail_next_sync(700) };
    let err = c0
        .scope(|s| {
            // SAFETY: the stand-in runs nothing.
            unsafe { s.launch(&stream, &f, &cfg, &params![&buf]) }
        })
        .unwrap_err();
    assert!(err.is_sticky(), "{err}");
    assert!(c0.poisoned().is_some());
    let err = a.free().unwrap_err();
    assert!(
        matches!(err, cudakit::Error::ContextPoisoned { .. }),
        "{err}"
    );
    // SAFETY: no arguments.
    let driver_live_after = unsafe { live_allocations() };
    assert_eq!(driver_live_after, driver_live - 1, "not handed back");
    assert_eq!(c0.stats().live_count(), live, "still in the arena");
    drop(pool);
    drop(buf);
}
