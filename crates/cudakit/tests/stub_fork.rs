//! A child made by `fork` after the driver was loaded (issue 20): CUDA's
//! state does not survive `fork`, so every cudakit call that would reach
//! the driver there is [`Error::ForkedChild`], and drops there free
//! nothing (the parent owns it all). The stand-in counts live allocations
//! and launches in the child's own copy of its state: neither moves.
//!
//! One test in a binary of its own: `fork` copies only the calling thread,
//! and `CUDAKIT_LIBCUDA` is process-global.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use std::ffi::c_int;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use cudakit::work::future::Batch;
use cudakit::{Context, Error};

extern "C" {
    fn fork() -> c_int;
    fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int;
    fn kill(pid: c_int, sig: c_int) -> c_int;
    fn _exit(code: c_int) -> !;
}

const WNOHANG: c_int = 1;
const SIGKILL: c_int = 9;

fn counter(lib: &libloading::Library, name: &[u8]) -> u64 {
    // SAFETY: exported by the stand-in with this signature (both return an
    // integer of 64 bits on the 64-bit targets the stand-in builds for).
    let f = unsafe { lib.get::<unsafe extern "C" fn() -> u64>(name) }.expect("stand-in counter");
    // SAFETY: no arguments.
    unsafe { f() }
}

/// The checks run in the child: the number of the first that failed, or 0.
fn in_child(
    ctx: &Context,
    stream: &cudakit::Stream,
    pinned: &cudakit::PinnedBuffer<u32>,
    lib: &libloading::Library,
    batch: &mut Batch<(), ()>,
) -> c_int {
    let live = counter(lib, b"stub_live_allocations\0");
    let launches = counter(lib, b"stub_launch_count\0");
    if !matches!(Context::new(0), Err(Error::ForkedChild)) {
        return 1;
    }
    if !matches!(ctx.stream(), Err(Error::ForkedChild)) {
        return 2;
    }
    let buf = ctx.alloc::<u32>(16);
    if !matches!(buf, Err(Error::ForkedChild)) {
        return 3;
    }
    let r = ctx.scope(|s| s.host_fn(stream, || {}));
    if !matches!(r, Err(Error::ForkedChild)) {
        return 4;
    }
    if !Error::ForkedChild.is_sticky() {
        return 5;
    }
    // The parent's handles dropped here free nothing.
    drop(ctx.clone());
    if counter(lib, b"stub_live_allocations\0") != live {
        return 6;
    }
    if counter(lib, b"stub_launch_count\0") != launches {
        return 7;
    }
    // Pure host work still works in the child (the staged pipeline's copy
    // threads did not survive the fork: the calling thread copies alone).
    let src: Vec<u8> = (0..(40 << 20)).map(|i| (i * 7 + 3) as u8).collect();
    let mut dst = vec![0xA5u8; src.len()];
    if cudakit::memory::staged::host_copy(&mut dst, &src).is_err() || dst != src {
        return 8;
    }
    // Page-locked memory stays shared with the parent across fork: its
    // slice panics in the child instead of handing it out.
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pinned[0])).is_ok() {
        return 9;
    }
    // A batch still running in the parent at the fork has no thread here:
    // polled, it says so (a panic) instead of pending for ever.
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| poll_once(batch))).is_ok() {
        return 10;
    }
    // A stream's future is refused before any lock of the process's (one
    // a parent's thread held at the fork would never be released here).
    if !matches!(stream.done(), Err(Error::ForkedChild)) {
        return 11;
    }
    0
}

/// A waker that does nothing (the polls here are one-off).
struct Nothing;
impl Wake for Nothing {
    fn wake(self: Arc<Self>) {}
}

/// One poll of `f`.
fn poll_once<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
    let w = Waker::from(Arc::new(Nothing));
    Pin::new(f).poll(&mut TaskContext::from_waker(&w))
}

#[test]
fn a_forked_child_refuses_the_driver_and_frees_nothing() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let ctx = Context::new(0).expect("context on the stand-in");
    let buf = ctx.alloc::<u32>(1024).expect("buffer");
    let stream = ctx.stream().expect("stream");
    let pinned = ctx.alloc_pinned::<u32>(64).expect("pinned");
    // Start the copy threads in the parent.
    let mut warm = vec![0u8; 8 << 20];
    cudakit::memory::staged::host_copy(&mut warm, &vec![1u8; 8 << 20]).expect("host copy");
    let live = counter(&lib, b"stub_live_allocations\0");
    // A batch that is still running at the fork: its host function is
    // held by the stand-in until the parent lets it go.
    let hold = |on: bool| stub::call::<bool, ()>(&lib, b"stub_hold_host_fns\0", on);
    hold(true);
    let leaked: &'static Context = Box::leak(Box::new(ctx.clone()));
    let batch_stream: &'static cudakit::Stream<'static> =
        Box::leak(Box::new(leaked.stream().expect("stream")));
    let mut batch = leaked.submit((), move |s, _: &mut ()| {
        s.host_fn(batch_stream, || {})?;
        Ok(())
    });
    stub::wait_until("the batch to queue its host function", || {
        counter(&lib, b"stub_host_fns_pending\0") > 0
    });
    assert!(!batch.is_done());

    // SAFETY: the child runs only `in_child` (cudakit, whose driver calls
    // the atfork handler refuses, and memory work) and leaves with
    // `_exit`, running no destructor or atexit handler of the parent's.
    let pid = unsafe { fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            in_child(&ctx, &stream, &pinned, &lib, &mut batch)
        }))
        .unwrap_or(100);
        // SAFETY: ends the child without unwinding into the test harness.
        unsafe { _exit(code) };
    }
    let started = Instant::now();
    let mut status: c_int = 0;
    loop {
        // SAFETY: our own child; a valid out-pointer.
        let r = unsafe { waitpid(pid, &mut status, WNOHANG) };
        if r == pid {
            break;
        }
        assert!(r == 0, "waitpid failed");
        if started.elapsed() > Duration::from_secs(60) {
            // SAFETY: our own child, which hung.
            unsafe { kill(pid, SIGKILL) };
            panic!("the forked child hung");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let (exited, code) = (status & 0x7f == 0, (status >> 8) & 0xff);
    assert!(exited, "the child died of signal {}", status & 0x7f);
    assert_eq!(code, 0, "check {code} failed in the forked child");

    // The parent's batch resolves once its host function may run.
    hold(false);
    let deadline = Instant::now() + Duration::from_secs(30);
    let ((), r) = loop {
        if let Poll::Ready(v) = poll_once(&mut batch) {
            break v;
        }
        assert!(
            Instant::now() < deadline,
            "the parent's batch never resolved"
        );
        std::thread::sleep(Duration::from_millis(1));
    };
    r.expect("the parent's batch");

    // The parent is untouched by the child's drops.
    assert_eq!(counter(&lib, b"stub_live_allocations\0"), live);
    let more = ctx.alloc::<u32>(1024).expect("the parent still allocates");
    assert_eq!(counter(&lib, b"stub_live_allocations\0"), live + 1);
    let ran = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&ran);
    ctx.scope(|s| {
        s.host_fn(&stream, move || {
            flag.store(true, std::sync::atomic::Ordering::SeqCst)
        })
    })
    .expect("the parent still queues work");
    assert!(ran.load(std::sync::atomic::Ordering::SeqCst));
    assert_eq!(pinned[0], 0, "the parent's page-locked memory still reads");
    drop((more, buf, pinned));
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
}
