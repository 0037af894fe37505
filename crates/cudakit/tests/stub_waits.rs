//! Failed waits and graph memory, against the stand-in libcuda (which runs
//! host functions on a callback thread of its own and lets a test hold them
//! and fail the next wait):
//!
//! - a scope whose wait fails while its host function has not run does not
//!   return, and so end the closure's borrows, before the callback is over:
//!   it waits again on a fresh thread;
//! - a graph whose allocation node has no free node is refused at
//!   instantiation (every launch would leak it) unless it frees on launch;
//! - a replay whose `done` record failed keeps its executable graph: no
//!   wait can tell when that replay is over;
//! - a host callback's `Context::synchronize` is refused before the
//!   synchronize gate, where it could wait behind a capture that waits for
//!   another thread's synchronize, which waits for the callback.
//!
//! Process-global (`CUDAKIT_LIBCUDA`), hence a binary of its own.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use std::sync::atomic::{AtomicUsize, Ordering};

use cudakit::work::graph::InstantiateOptions;
use cudakit::{AllocKind, Context, Error};

fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn open() -> libloading::Library {
    stub::open_default()
}

#[test]
fn a_failed_wait_does_not_end_the_borrows_of_a_callback_that_has_not_run() {
    let _serial = serial();
    let lib = open();
    // SAFETY: exported by the stand-in with these signatures.
    let hold = unsafe { lib.get::<unsafe extern "C" fn(bool)>(b"stub_hold_host_fns\0") }
        .expect("stub_hold_host_fns");
    // SAFETY: as above.
    let fail = unsafe { lib.get::<unsafe extern "C" fn(i32)>(b"stub_fail_next_sync\0") }
        .expect("stub_fail_next_sync");
    let ctx = Context::new(0).expect("context on the stand-in");
    let stream = ctx.stream().expect("stream");
    let calls = AtomicUsize::new(0);
    // SAFETY: plain values.
    unsafe { hold(true) };
    let result = std::thread::scope(|t| {
        let r = ctx.scope(|s| {
            s.host_fn(&stream, || {
                calls.fetch_add(1, Ordering::SeqCst);
            })?;
            // The scope's own wait fails (a non-sticky error), with the
            // callback still held: the work may still run.
            // SAFETY: a plain value (CUDA_ERROR_INVALID_VALUE).
            unsafe { fail(1) };
            t.spawn(|| {
                std::thread::sleep(std::time::Duration::from_millis(300));
                // SAFETY: a plain value.
                unsafe { hold(false) };
            });
            Ok(())
        });
        // Read before the releasing thread is joined: the scope itself must
        // have waited for the callback.
        (r, calls.load(Ordering::SeqCst))
    });
    let (r, seen) = result;
    assert!(
        matches!(&r, Err(Error::Driver(e)) if e.code.raw().0 == 1),
        "the injected failure is reported: {r:?}"
    );
    assert_eq!(
        seen, 1,
        "the scope returned before its callback ran: its borrows ended under it"
    );
    assert_eq!(ctx.stats().kind(AllocKind::Leaked).live_count, 0);
}

#[test]
fn an_allocation_node_without_a_free_node_is_refused_unless_freed_on_launch() {
    let _serial = serial();
    let _lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    let mut g = ctx.graph().expect("graph");
    let (_node, alloc) = g.add_mem_alloc::<f32>(1024, &[]).expect("alloc node");
    let err = g
        .instantiate(InstantiateOptions::default())
        .expect_err("an unfreed allocation node must be refused");
    assert!(
        matches!(&err, Error::InvalidArgument(m) if m.contains("no free node")),
        "{err}"
    );
    // (Instantiating for real needs `cuGraphGetNodes`, which the stand-in
    // lacks; the GPU suite instantiates with auto-free on launch.)
    assert_eq!(ctx.stats().kind(AllocKind::Graph).live_count, 0);
    drop(alloc);
}

#[test]
fn a_launch_whose_done_record_failed_keeps_its_executable_graph() {
    let _serial = serial();
    let lib = open();
    let destroys = || stub::call0::<u64>(&lib, b"stub_exec_destroys\0");
    let ctx = Context::new(0).expect("context on the stand-in");
    let stream = ctx.stream().expect("stream");
    let mut g = ctx.graph().expect("graph");
    g.add_empty(&[]).expect("empty node");

    // A launch whose record succeeds: the drop waits for it and destroys.
    let exec = g
        .instantiate(InstantiateOptions::default())
        .expect("instantiate");
    ctx.scope(|s| s.launch_graph(&stream, &exec))
        .expect("launch");
    let before = destroys();
    drop(exec);
    assert_eq!(destroys(), before + 1, "a waited-for exec is destroyed");

    // The replay is queued, then recording `done` after it fails: nothing
    // can wait for that replay, so the drop (inside the scope, before the
    // scope's own wait) must keep the exec and whatever it uses.
    let exec = g
        .instantiate(InstantiateOptions::default())
        .expect("instantiate");
    let leaked_before = ctx.stats().kind(AllocKind::Leaked).live_count;
    let st = &stream;
    let lib = &lib;
    let r = ctx.scope(move |s| {
        // CUDA_ERROR_INVALID_VALUE.
        stub::call::<i32, ()>(lib, b"stub_fail_next_event_record\0", 1);
        let r = s.launch_graph(st, &exec);
        drop(exec);
        r
    });
    assert!(
        matches!(&r, Err(Error::Driver(e)) if e.code.raw().0 == 1),
        "the failed record is reported: {r:?}"
    );
    assert_eq!(
        destroys(),
        before + 1,
        "an exec whose replay nothing can wait for was destroyed"
    );
    // (An exec without graph memory has no arena entry to mark leaked.)
    assert_eq!(
        ctx.stats().kind(AllocKind::Leaked).live_count,
        leaked_before
    );
}

/// A host callback that calls `Context::synchronize` is refused at once,
/// before the synchronize gate: there a read can queue behind a capture's
/// pending write, which waits for another thread's synchronize, which in
/// turn waits for this very callback. With the refusal after the gate, the
/// three waited on each other until the stand-in's synchronize gave up
/// (30 s, an error for the other thread).
#[test]
fn a_callback_that_synchronizes_is_refused_before_it_can_block_a_capture() {
    use std::time::{Duration, Instant};
    let _serial = serial();
    let lib = open();
    let hold = |on: bool| stub::call::<bool, ()>(&lib, b"stub_hold_host_fns\0", on);
    let sync_waiters = || stub::call0::<u64>(&lib, b"stub_ctx_sync_waiters\0");
    let ctx = Context::new(0).expect("context on the stand-in");
    let (stream, other) = (ctx.stream().expect("stream"), ctx.stream().expect("stream"));
    let seen = std::sync::Mutex::new(None);
    hold(true);
    let t0 = Instant::now();
    let (sync, capture) = std::thread::scope(|t| {
        let r = ctx.scope(|s| {
            s.host_fn(&stream, || {
                *seen.lock().unwrap() = Some(ctx.synchronize());
            })?;
            // Another thread synchronizes: it holds the gate's read while
            // the driver waits for the held callback. Go on only once it
            // is waiting in the driver (so holding the read).
            let sync = t.spawn(|| ctx.synchronize());
            stub::wait_until("the other thread's synchronize in the driver", || {
                sync_waiters() > 0
            });
            // A third begins a capture: its write waits for that read (a
            // wait on cudakit's lock, which the stand-in cannot see: it is
            // given 200 ms; on a machine too slow for that the test passes
            // without exercising this step, and cannot hang).
            let capture = t.spawn(|| ctx.scope(|s2| s2.capture(&other, || Ok(())).map(drop)));
            std::thread::sleep(Duration::from_millis(200));
            hold(false);
            Ok((sync, capture))
        });
        let (sync, capture) = r.expect("the scope");
        (sync.join().unwrap(), capture.join().unwrap())
    });
    let took = t0.elapsed();
    hold(false);
    assert!(
        matches!(
            seen.lock().unwrap().take(),
            Some(Err(Error::InsideHostCallback { .. }))
        ),
        "the callback's synchronize is refused"
    );
    sync.expect("the other thread's synchronize ends once the callback has run");
    capture.expect("the capture begins and ends");
    assert!(
        took < Duration::from_secs(10),
        "no thread waited for another: {took:?}"
    );
}

/// A scope opened inside a host callback is refused before its closure
/// runs: its end would take the pending-work lock, which a thread
/// synchronizing during a capture holds while it waits for this callback.
#[test]
fn a_scope_inside_a_host_callback_is_refused() {
    let _serial = serial();
    let _lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    let stream = ctx.stream().expect("stream");
    let seen = std::sync::Mutex::new(None);
    let ran = std::sync::atomic::AtomicBool::new(false);
    ctx.scope(|s| {
        s.host_fn(&stream, || {
            let r = ctx.scope(|_| {
                ran.store(true, Ordering::SeqCst);
                Ok(())
            });
            *seen.lock().unwrap() = Some(r);
        })
    })
    .expect("the scope");
    assert!(
        matches!(
            seen.lock().unwrap().take(),
            Some(Err(Error::InsideHostCallback { .. }))
        ),
        "refused"
    );
    assert!(!ran.load(Ordering::SeqCst), "its closure did not run");
}
