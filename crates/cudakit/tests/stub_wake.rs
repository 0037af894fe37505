//! A poisoned context wakes its pending futures on a thread of cudakit's
//! own, never inside the call that met the fault: that call may hold a
//! stream's lock (`Stream::done` holds it across its `cuStreamQuery`), and
//! an executor's waker may call into cudakit on that very stream. Against
//! the stand-in libcuda, whose host functions can be held and whose next
//! `cuStreamQuery` can be made to report a device fault.
//!
//! Process-global (`CUDAKIT_LIBCUDA`, the stand-in's hold), hence one test
//! in its own binary.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use stub::{call, call0, wait_until};

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Wake, Waker};
use std::time::Duration;

use cudakit::{Context, Error, Stream};

/// A waker whose wake calls back into cudakit on `stream`, as an executor
/// that polls inline (or a task's code run by the wake) would.
struct Reentrant {
    stream: &'static Stream<'static>,
    /// What the wake's own call returned.
    outcome: Mutex<Option<String>>,
    woke: AtomicBool,
}

impl Wake for Reentrant {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        if self.woke.swap(true, Ordering::SeqCst) {
            return;
        }
        // `Stream::query` takes the stream's lock (its capture check) and
        // does not refuse a poisoned context first.
        let r = self.stream.query();
        *self.outcome.lock().unwrap() = Some(format!("{r:?}"));
    }
}

#[test]
fn a_fault_wakes_futures_off_the_thread_that_holds_the_stream() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let ctx: &'static Context = Box::leak(Box::new(Context::new(0).expect("context")));
    let stream: &'static Stream<'static> = Box::leak(Box::new(ctx.stream().expect("stream")));

    // Work that is still running: a batch's host function, held.
    let _: () = call(&lib, b"stub_hold_host_fns\0", true);
    let (go, wait_go) = mpsc::channel::<()>();
    let batch = ctx.submit((), move |s, _: &mut ()| {
        s.host_fn(stream, || {})?;
        let _ = wait_go.recv();
        Ok(())
    });
    wait_until("the batch's host function", || {
        call0::<u64>(&lib, b"stub_host_fns_pending\0") >= 1
    });

    // A pending future of the stream, polled once with the re-entrant waker.
    let reentrant = Arc::new(Reentrant {
        stream,
        outcome: Mutex::new(None),
        woke: AtomicBool::new(false),
    });
    let waker = Waker::from(reentrant.clone());
    let mut pending = Box::pin(stream.done().expect("a pending future"));
    assert!(pending
        .as_mut()
        .poll(&mut TaskContext::from_waker(&waker))
        .is_pending());

    // The next query reports a device fault: `Stream::done` meets it while
    // it holds the stream's lock, and the context is poisoned.
    let _: () = call(&lib, b"stub_fail_queries\0", (1u64, 700i32));
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let r = stream.done().map(|_| ());
        let _ = tx.send(format!("{r:?}"));
    });
    let first = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the call that met the fault returned (it deadlocked with the waker before)");
    assert!(
        first.contains("700") || first.contains("ILLEGAL"),
        "{first}"
    );
    assert!(ctx.poisoned().is_some());
    // The waker ran, on another thread, once the stream's lock was free.
    wait_until("the wake", || reentrant.outcome.lock().unwrap().is_some());
    assert!(matches!(
        pending.as_mut().poll(&mut TaskContext::from_waker(&waker)),
        std::task::Poll::Ready(Err(Error::ContextPoisoned { .. }))
    ));

    go.send(()).unwrap();
    let _: () = call(&lib, b"stub_hold_host_fns\0", false);
    drop(batch);
}
