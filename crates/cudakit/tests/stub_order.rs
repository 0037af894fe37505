//! Ordering across streams inside one scope (issue 20, defect 8), against
//! the stand-in libcuda, which counts `cuStreamWaitEvent` calls:
//!
//! - the same device memory used on two streams of one scope: the second
//!   stream waits for the first, so the two writes cannot race; memory used
//!   on one stream only costs no wait;
//! - a stream-ordered buffer used on a stream other than the one it was
//!   allocated on waits for that stream once (its allocation is ordered
//!   there only);
//! - work whose memory is not known (a graph replay) waits for the other
//!   streams, and each other stream waits for it once before its next use;
//! - a use inside a capture does not become its range's last use (it
//!   waited for nothing): the next use outside the capture still waits.
//!
//! Process-global (`CUDAKIT_LIBCUDA`), hence a binary of its own.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::Context;

fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn open() -> libloading::Library {
    stub::open_default()
}

fn waits(lib: &libloading::Library) -> u64 {
    stub::call0(lib, b"stub_stream_waits\0")
}

#[test]
fn the_same_memory_on_two_streams_of_a_scope_is_ordered() {
    let _serial = serial();
    let lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    let (a, b) = (ctx.stream().expect("a"), ctx.stream().expect("b"));
    let x = ctx.alloc::<u32>(64).expect("x");
    let y = ctx.alloc::<u32>(64).expect("y");
    let z = ctx.alloc::<u32>(64).expect("z");
    let w = ctx.alloc::<u32>(64).expect("w");
    let host = vec![1u32; 64];
    ctx.scope(|s| {
        // Both streams in use; the second touches other memory than the
        // first did, so it waits for nothing (the two may overlap).
        s.copy_to_device(&a, &host, &z)?;
        let before = waits(&lib);
        s.copy_to_device(&b, &host, &w)?;
        assert_eq!(waits(&lib) - before, 0, "disjoint memory waits for nothing");
        // z was used on a while a was the only stream: b waits for it.
        let before = waits(&lib);
        s.copy(&b, &z, &w)?;
        assert_eq!(
            waits(&lib) - before,
            1,
            "memory noted on the first stream orders the second"
        );
        // And w is now last used on b again: nothing to wait for there.
        let before = waits(&lib);
        s.copy_to_device(&b, &host, &w)?;
        assert_eq!(waits(&lib) - before, 0, "same stream");
        // x on a, then x on b: b waits for a.
        s.copy_to_device(&a, &host, &x)?;
        let before = waits(&lib);
        s.copy_to_device(&b, &host, &x)?;
        assert_eq!(
            waits(&lib) - before,
            1,
            "the second writer waits for the first"
        );
        // A part of x, as a view, on a again: a waits for b.
        let before = waits(&lib);
        s.copy(&a, y.view(0..8)?, x.view(8..16)?)?;
        assert_eq!(
            waits(&lib) - before,
            1,
            "an overlapping view is ordered too"
        );
        // w was last used on b: a waits for b, once.
        let before = waits(&lib);
        s.copy(&a, &y, &w)?;
        assert_eq!(waits(&lib) - before, 1, "w was last used on b");
        // y and w are now last used on a: again on a, no wait.
        let before = waits(&lib);
        s.copy(&a, &w, &y)?;
        assert_eq!(
            waits(&lib) - before,
            0,
            "memory used on one stream only waits for nothing"
        );
        Ok(())
    })
    .expect("scope");
}

#[test]
fn a_pool_buffer_used_on_another_stream_waits_for_its_allocation() {
    let _serial = serial();
    let lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    let (a, b) = (ctx.stream().expect("a"), ctx.stream().expect("b"));
    let pool = ctx.default_pool().expect("default pool");
    let buf = pool.alloc::<u32>(&a, 64).expect("pool buffer on a");
    let host = vec![2u32; 64];
    ctx.scope(|s| {
        let before = waits(&lib);
        s.copy_to_device(&b, &host, &buf)?;
        assert_eq!(
            waits(&lib) - before,
            1,
            "b waits for a, where the buffer was allocated"
        );
        let before = waits(&lib);
        s.copy_to_device(&b, &host, &buf)?;
        assert_eq!(waits(&lib) - before, 0, "once is enough");
        Ok(())
    })
    .expect("scope");
    // On its own stream: no wait at all.
    ctx.scope(|s| {
        let before = waits(&lib);
        s.copy_to_device(&a, &host, &buf)?;
        assert_eq!(waits(&lib) - before, 0, "on its allocation's stream");
        Ok(())
    })
    .expect("scope");
    drop(buf);
}

#[test]
fn work_ordered_after_everything_is_waited_for_by_the_other_streams() {
    let _serial = serial();
    let lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    let (a, c) = (ctx.stream().expect("a"), ctx.stream().expect("c"));
    let x = ctx.alloc::<u32>(64).expect("x");
    let host = vec![1u32; 64];
    let mut g = ctx.graph().expect("graph");
    g.add_empty(&[]).expect("node");
    let exec = g
        .instantiate(cudakit::work::graph::InstantiateOptions::default())
        .expect("instantiate");
    ctx.scope(|s| {
        s.copy_to_device(&a, &host, &x)?;
        // A graph replay (memory the table cannot see) on c: c waits for a.
        let before = waits(&lib);
        s.launch_graph(&c, &exec)?;
        assert!(waits(&lib) > before, "the replay waits for a's upload");
        // The replay may read or write x: a's next use of x waits for c,
        // once.
        let before = waits(&lib);
        s.copy_to_device(&a, &host, &x)?;
        assert_eq!(
            waits(&lib) - before,
            1,
            "a's second upload of x did not wait for c's replay"
        );
        let before = waits(&lib);
        s.copy_to_device(&a, &host, &x)?;
        assert_eq!(waits(&lib) - before, 0, "waited for the same replay twice");
        Ok(())
    })
    .expect("scope");
}

#[test]
fn a_use_inside_a_capture_does_not_become_the_last_use() {
    let _serial = serial();
    let lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    let (a, b) = (ctx.stream().expect("a"), ctx.stream().expect("b"));
    let x = ctx.alloc::<u32>(64).expect("x");
    let y = ctx.alloc::<u32>(64).expect("y");
    let host = vec![1u32; 64];
    ctx.scope(|s| {
        s.copy_to_device(&a, &host, &x)?;
        s.copy_to_device(&b, &host, &y)?;
        // b uses x inside a capture: the captured copy waits for nothing
        // now (it runs at replays), so it must not become x's last use.
        let graph = s.capture(&b, || s.copy(&b, &x, &y))?;
        drop(graph);
        // b's next use of x outside the capture still waits for a's upload.
        let before = waits(&lib);
        s.copy(&b, &x, &y)?;
        assert_eq!(
            waits(&lib) - before,
            1,
            "b's use of x after its capture did not wait for a's upload"
        );
        Ok(())
    })
    .expect("scope");
}
