//! Issue 24, fix 1, against the stand-in libcuda with two devices: a
//! scope of device 0 that queues a peer copy into a buffer of device 1
//! makes device 1's synchronous calls wait for that copy's stream until
//! the scope ends. Before the fix, device 1's `to_vec` returned at once
//! (its context saw no work of its own) and could read the buffer before
//! the copy had written it. The stand-in's held host functions stand for
//! the copy's stream being busy.
//!
//! Process-global (`CUDAKIT_LIBCUDA`), hence a binary of its own.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use cudakit::Context;

#[test]
fn the_peer_contexts_synchronous_reads_wait_for_the_scopes_copy() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    // SAFETY: exported by the stand-in with these signatures.
    let devices = unsafe { lib.get::<unsafe extern "C" fn(i32)>(b"stub_set_device_count\0") }
        .expect("stub_set_device_count");
    // SAFETY: as above.
    let hold = unsafe { lib.get::<unsafe extern "C" fn(bool)>(b"stub_hold_host_fns\0") }
        .expect("stub_hold_host_fns");
    // SAFETY: plain values.
    unsafe { devices(2) };
    let c0 = Context::new(0).expect("device 0");
    let c1 = Context::new(1).expect("device 1");
    let stream = c0.stream().expect("stream of device 0");
    let src = c0.alloc::<u32>(256).expect("source on device 0");
    let dst = c1.alloc::<u32>(256).expect("destination on device 1");
    let read = AtomicBool::new(false);
    c0.scope(|s| {
        // The stream is busy (a held host function) when the copy is queued.
        // SAFETY: a plain value.
        unsafe { hold(true) };
        s.host_fn(&stream, || {})?;
        s.copy_peer(&stream, &src, &dst)?;
        std::thread::scope(|t| {
            let reader = t.spawn(|| {
                let v = dst.to_vec();
                read.store(true, Ordering::SeqCst);
                v
            });
            std::thread::sleep(Duration::from_millis(200));
            assert!(
                !read.load(Ordering::SeqCst),
                "device 1's to_vec returned while the peer copy's stream was still busy"
            );
            // SAFETY: a plain value.
            unsafe { hold(false) };
            reader
                .join()
                .expect("reader")
                .expect("to_vec after the copy");
        });
        Ok(())
    })
    .expect("scope");
    // After the scope, device 1 has nothing of device 0's to wait for.
    let started = std::time::Instant::now();
    dst.to_vec().expect("to_vec after the scope");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(c0.drop_errors().is_empty() && c1.drop_errors().is_empty());
}
