//! Futures of the GPU's work against the stand-in libcuda, whose host
//! functions can be held ("work still running"): an event's, a stream's and
//! an owned batch's future, driven by a minimal executor written here (a
//! waker that unparks the blocked thread); a batch future dropped early and
//! one leaked with `mem::forget`, whose buffers are neither freed early nor
//! reused; and a poisoned context's futures.
//!
//! Process-global (`CUDAKIT_LIBCUDA`, the stand-in's hold), hence one test
//! in its own binary.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use stub::{call, call0, wait_until};

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use cudakit::{Context, DeviceBuffer, Error, Stream};

/// Wakes by unparking the thread that blocks on the future, and counts.
struct Unpark {
    thread: std::thread::Thread,
    wakes: AtomicUsize,
}

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        self.thread.unpark();
    }
}

fn waker() -> (Arc<Unpark>, Waker) {
    let u = Arc::new(Unpark {
        thread: std::thread::current(),
        wakes: AtomicUsize::new(0),
    });
    (u.clone(), Waker::from(u))
}

/// The executor: polls, parks until woken (30 s at most), polls again.
fn block_on<F: Future>(f: F) -> F::Output {
    let (_u, w) = waker();
    let mut cx = TaskContext::from_waker(&w);
    let mut f = pin!(f);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        assert!(Instant::now() < deadline, "future never woke");
        std::thread::park_timeout(Duration::from_secs(1));
    }
}

/// One poll with a fresh waker.
fn poll_once<F: Future + Unpin>(f: &mut F) -> Poll<F::Output> {
    let (_u, w) = waker();
    std::pin::Pin::new(f).poll(&mut TaskContext::from_waker(&w))
}

type Payload = (DeviceBuffer<'static, f32>, &'static Stream<'static>);

#[test]
fn futures_own_what_the_gpu_uses() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let ctx: &'static Context = Box::leak(Box::new(Context::new(0).expect("context")));
    let stream: &'static Stream<'static> = Box::leak(Box::new(ctx.stream().expect("stream")));
    let idle = ctx.stream().expect("stream");

    // An idle stream and an event with nothing pending are ready at once.
    assert!(matches!(
        poll_once(&mut idle.done().unwrap()),
        Poll::Ready(Ok(()))
    ));
    let ev = ctx.event().unwrap();
    ev.record(&idle).unwrap();
    assert!(matches!(
        poll_once(&mut ev.done().unwrap()),
        Poll::Ready(Ok(()))
    ));

    // A batch whose work is still running (its host function held).
    let _: () = call(&lib, b"stub_hold_host_fns\0", true);
    let buf = ctx.upload(&[1.0f32; 256]).unwrap();
    let addr = buf.device_ptr().as_raw();
    let ran = Arc::new(AtomicUsize::new(0));
    let ran2 = ran.clone();
    let mut batch = ctx.submit((buf, stream), move |s, (buf, stream): &mut Payload| {
        let ran = ran2.clone();
        s.host_fn(stream, move || {
            ran.fetch_add(1, Ordering::SeqCst);
        })?;
        Ok(buf.len())
    });
    wait_until("the batch's host function to be queued", || {
        call0::<u64>(&lib, b"stub_host_fns_pending\0") >= 1
    });
    assert!(poll_once(&mut batch).is_pending());
    assert!(!batch.is_done());
    // The stream's work so far, and an event recorded behind it.
    let mut on_stream = stream.done().unwrap();
    assert!(poll_once(&mut on_stream).is_pending());
    let ev = ctx.event().unwrap();
    ev.record(stream).unwrap();
    let mut on_event = ev.done().unwrap();
    assert!(poll_once(&mut on_event).is_pending());
    assert_eq!(ran.load(Ordering::SeqCst), 0);
    let _: () = call(&lib, b"stub_hold_host_fns\0", false);
    let ((buf, _), r) = block_on(batch);
    assert_eq!(r.unwrap(), 256);
    assert_eq!(
        ran.load(Ordering::SeqCst),
        1,
        "the work ran before the payload came back"
    );
    assert_eq!(
        buf.device_ptr().as_raw(),
        addr,
        "the payload handed back is the one given"
    );
    block_on(on_stream).unwrap();
    block_on(on_event).unwrap();
    drop(buf);

    // Dropped early: the batch's thread keeps the payload until the work is
    // done, then frees it there.
    let _: () = call(&lib, b"stub_hold_host_fns\0", true);
    let live_before = ctx.stats().live_count();
    let buf = ctx.alloc::<f32>(1024).unwrap();
    let dropped = ctx.submit((buf, stream), |s, (_buf, stream): &mut Payload| {
        s.host_fn(stream, || {})
    });
    wait_until("the dropped batch's host function", || {
        call0::<u64>(&lib, b"stub_host_fns_pending\0") >= 1
    });
    drop(dropped);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(
        ctx.stats().live_count(),
        live_before + 1,
        "freed while the GPU may use it"
    );
    let _: () = call(&lib, b"stub_hold_host_fns\0", false);
    wait_until("the dropped batch's payload to be freed", || {
        ctx.stats().live_count() == live_before
    });

    // Leaked: its buffers are never freed and never reused.
    let _: () = call(&lib, b"stub_hold_host_fns\0", true);
    let live_before = ctx.stats().live_count();
    let driver_before: usize = call0(&lib, b"stub_live_allocations\0");
    let buf = ctx.alloc::<f32>(4096).unwrap();
    let leaked_addr = buf.device_ptr().as_raw();
    let leaked = ctx.submit((buf, stream), |s, (_buf, stream): &mut Payload| {
        s.host_fn(stream, || {})
    });
    wait_until("the leaked batch's host function", || {
        call0::<u64>(&lib, b"stub_host_fns_pending\0") >= 1
    });
    std::mem::forget(leaked);
    let _: () = call(&lib, b"stub_hold_host_fns\0", false);
    wait_until("the leaked batch's work", || {
        call0::<u64>(&lib, b"stub_host_fns_pending\0") == 0
    });
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        ctx.stats().live_count(),
        live_before + 1,
        "the leaked batch's buffer was freed"
    );
    assert_eq!(
        call0::<usize>(&lib, b"stub_live_allocations\0"),
        driver_before + 1,
        "the driver freed the leaked batch's buffer"
    );
    let fresh: Vec<DeviceBuffer<'static, f32>> =
        (0..4).map(|_| ctx.alloc::<f32>(4096).unwrap()).collect();
    assert!(
        fresh.iter().all(|b| b.device_ptr().as_raw() != leaked_addr),
        "the leaked batch's memory was reused"
    );
    drop(fresh);

    // A poisoned context: a pending future wakes and reports it; new
    // futures and batches are refused, the payload handed back.
    let _: () = call(&lib, b"stub_hold_host_fns\0", true);
    let buf = ctx.alloc::<f32>(16).unwrap();
    // The batch queues its host function, then waits for the test before
    // its scope ends, so that the fault below meets the scope's wait.
    let (go, wait_go) = std::sync::mpsc::channel::<()>();
    let doomed = ctx.submit((buf, stream), move |s, (_buf, stream): &mut Payload| {
        s.host_fn(stream, || {})?;
        let _ = wait_go.recv();
        Ok(())
    });
    wait_until("the doomed batch's host function", || {
        call0::<u64>(&lib, b"stub_host_fns_pending\0") >= 1
    });
    let mut pending = stream.done().unwrap();
    assert!(poll_once(&mut pending).is_pending());
    // The scope's wait and its retry on a fresh thread both meet the fault.
    // SAFETY: exported by the stand-in with this signature.
    let fail = unsafe { lib.get::<unsafe extern "C" fn(u64, i32)>(b"stub_fail_syncs\0") }
        .expect("stub_fail_syncs");
    // SAFETY: plain values (CUDA_ERROR_ILLEGAL_ADDRESS, sticky).
    unsafe { fail(2, 700) };
    go.send(()).unwrap();
    let ((_buf, _), r) = block_on(doomed);
    assert!(r.is_err(), "the faulted batch reports its error");
    assert!(ctx.poisoned().is_some());
    assert!(matches!(
        block_on(pending),
        Err(Error::ContextPoisoned { .. })
    ));
    assert!(matches!(idle.done(), Err(Error::ContextPoisoned { .. })));
    let (back, r) = block_on(ctx.submit(vec![7u8; 4], |_s, _v: &mut Vec<u8>| Ok(())));
    assert_eq!(back, [7u8; 4], "the payload comes back");
    assert!(matches!(r, Err(Error::ContextPoisoned { .. })));
    let _: () = call(&lib, b"stub_hold_host_fns\0", false);
}
