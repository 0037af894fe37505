//! Host-callback round trips against the stand-in libcuda (which runs host
//! functions on a callback thread of its own and lets a test hold them):
//!
//! - a scope whose last work on a stream is a host function returns once
//!   the function has run, without an event wait (the fast path), and
//!   never before: also when the function is held for a long time (the
//!   spin gives up and the stream's wait takes over);
//! - work queued after the host function on the same stream makes the
//!   scope wait for the stream again (the host function is no longer the
//!   scope's last work there);
//! - the round trip's cost next to the raw `cuLaunchHostFunc` +
//!   `cuStreamSynchronize`, printed (`--nocapture`), with the driver calls
//!   each side made: the cudakit side makes no event record and no
//!   event wait.
//!
//! Process-global (`CUDAKIT_LIBCUDA`), hence a binary of its own.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use cudakit::Context;

fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn open() -> libloading::Library {
    stub::open_default()
}

/// The stand-in's counts of `cuEventRecord`, `cuEventSynchronize` and
/// `cuStreamSynchronize` calls so far.
fn waits(lib: &libloading::Library) -> [u64; 3] {
    stub::counts(lib, b"stub_wait_counts\0")
}

#[test]
fn a_scope_ends_once_its_last_host_function_has_run_and_never_before() {
    let _serial = serial();
    let lib = open();
    // SAFETY: exported by the stand-in with this signature.
    let hold = unsafe { lib.get::<unsafe extern "C" fn(bool)>(b"stub_hold_host_fns\0") }
        .expect("stub_hold_host_fns");
    let ctx = Context::new(0).expect("context on the stand-in");
    let (s1, s2) = (ctx.stream().unwrap(), ctx.stream().unwrap());
    let ran = AtomicUsize::new(0);
    // Many round trips racing the callback thread: each scope returns with
    // its callback run (by the spin, or by the stream's wait where the
    // callback thread was not scheduled within the spin).
    for i in 0..200 {
        ctx.scope(|s| {
            s.host_fn(&s1, || {
                ran.fetch_add(1, Ordering::SeqCst);
            })
        })
        .unwrap();
        assert_eq!(ran.load(Ordering::SeqCst), i + 1, "round trip {i}");
    }
    // The fast path itself, deterministic on a loaded machine: the scope
    // ends after its callback has run (and stored its state: a millisecond
    // later), so no event is recorded or waited for.
    let before = waits(&lib);
    for i in 200..220 {
        ctx.scope(|s| {
            s.host_fn(&s1, || {
                ran.fetch_add(1, Ordering::SeqCst);
            })?;
            while ran.load(Ordering::SeqCst) <= i {
                std::thread::yield_now();
            }
            std::thread::sleep(Duration::from_millis(1));
            Ok(())
        })
        .unwrap();
    }
    let after = waits(&lib);
    assert_eq!(
        (after[0] - before[0], after[1] - before[1]),
        (0, 0),
        "the fast path makes no event record and no event wait"
    );
    // Held far past the spin: the scope falls back to the stream's wait
    // and still returns only after the callback.
    ran.store(0, Ordering::SeqCst);
    // SAFETY: a plain value.
    unsafe { hold(true) };
    let seen = std::thread::scope(|t| {
        t.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            // SAFETY: a plain value.
            unsafe { hold(false) };
        });
        ctx.scope(|s| {
            s.host_fn(&s1, || {
                ran.fetch_add(1, Ordering::SeqCst);
            })?;
            s.host_fn(&s2, || {
                ran.fetch_add(10, Ordering::SeqCst);
            })
        })
        .unwrap();
        ran.load(Ordering::SeqCst)
    });
    assert_eq!(seen, 11, "the scope returned before its held callbacks ran");
}

/// Host-side work after the callback on the same stream: the scope must
/// wait for the stream (an event wait), not only for the callback.
#[test]
fn work_after_the_host_function_is_waited_for() {
    let _serial = serial();
    let lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    let stream = ctx.stream().unwrap();
    let ran = AtomicUsize::new(0);
    let a = ctx.upload(&[1u32; 16]).unwrap();
    let b = ctx.alloc::<u32>(16).unwrap();
    let before = waits(&lib);
    ctx.scope(|s| {
        s.host_fn(&stream, || {
            ran.fetch_add(1, Ordering::SeqCst);
        })?;
        // A second host function: the first is no longer the last work.
        s.host_fn(&stream, || {
            ran.fetch_add(1, Ordering::SeqCst);
        })?;
        // And then other work on the stream: a device copy.
        s.copy(&stream, &a, &b)
    })
    .unwrap();
    assert_eq!(ran.load(Ordering::SeqCst), 2);
    assert!(
        waits(&lib)[1] > before[1],
        "work after the last host function: the stream's wait ran"
    );
}

#[test]
fn round_trip_cost_next_to_the_raw_calls() {
    let _serial = serial();
    let _lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    let stream = ctx.stream().unwrap();
    let cu = cudakit::sys::driver().unwrap();
    let raw_stream = stream.as_raw();
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    unsafe extern "C" fn bump(_: *mut std::ffi::c_void) {
        COUNTER.fetch_add(1, Ordering::Relaxed);
    }
    let trips = 2_000u32;
    let (mut raw, mut kit) = (Vec::new(), Vec::new());
    for _ in 0..7 {
        let t = Instant::now();
        for _ in 0..trips {
            // SAFETY: a live stream; `bump` touches a static only.
            let rc = unsafe { (cu.cuLaunchHostFunc)(raw_stream, Some(bump), std::ptr::null_mut()) };
            assert_eq!(rc, cudakit::sys::CUresult::CUDA_SUCCESS);
            stream.synchronize().unwrap();
        }
        raw.push(t.elapsed() / trips);
        let t = Instant::now();
        for _ in 0..trips {
            ctx.scope(|s| {
                s.host_fn(&stream, || {
                    COUNTER.fetch_add(1, Ordering::Relaxed);
                })
            })
            .unwrap();
        }
        kit.push(t.elapsed() / trips);
    }
    raw.sort();
    kit.sort();
    let (r, k) = (raw[raw.len() / 2], kit[kit.len() / 2]);
    println!(
        "stand-in host callback round trip: cudakit {k:?}, raw {r:?}, ratio {:.2}",
        k.as_secs_f64() / r.as_secs_f64()
    );
    assert_eq!(COUNTER.load(Ordering::Relaxed), 2 * 7 * trips as usize);
}
