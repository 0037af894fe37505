//! Unified memory on a device without concurrent managed access (Jetson,
//! older GPUs, some vGPUs), where any running kernel makes all managed
//! memory inaccessible to the host (issue 10, item 2), against the
//! test-only stand-in libcuda reporting
//! `CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 0`:
//!
//! - a host view taken before a scope blocks device work until it is
//!   dropped (before the fix the launch went ahead while the view could be
//!   read);
//! - inside or beside a scope that queued work, a host view is refused;
//! - synchronous device work is refused while a view is alive;
//! - the allocation is zeroed on the device, not by the host (the
//!   stand-in fills new managed memory with 0xAB).
//!
//! Process-global (`CUDAKIT_LIBCUDA`), hence one test in its own binary.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::{params, Context, Error, LaunchConfig};

#[test]
fn host_views_and_device_work_exclude_each_other() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    // SAFETY: the stand-in exports stub_set_attribute(i32, i32).
    let set_attribute =
        unsafe { lib.get::<unsafe extern "C" fn(i32, i32)>(b"stub_set_attribute\0") }
            .expect("stub_set_attribute");
    // SAFETY: two plain values; CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89.
    unsafe { set_attribute(89, 0) };
    // SAFETY: the stand-in exports stub_set_params(*const usize, usize).
    let set_params =
        unsafe { lib.get::<unsafe extern "C" fn(*const usize, usize)>(b"stub_set_params\0") }
            .expect("stub_set_params");
    // The kernel takes one pointer: (offset 0, size 8).
    // SAFETY: one (offset, size) pair.
    unsafe { set_params([0usize, 8].as_ptr(), 1) };
    // SAFETY: the stand-in exports stub_launch_count() -> u64.
    let launches = unsafe { lib.get::<unsafe extern "C" fn() -> u64>(b"stub_launch_count\0") }
        .expect("stub_launch_count");

    let ctx = Context::new(0).expect("context on the stand-in");
    assert!(!ctx.limits().concurrent_managed_access);
    let module = ctx
        .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
        .expect("module");
    let kernel = module.function("k").expect("function");
    let stream = ctx.stream().expect("stream");
    let cfg = LaunchConfig::new(1, 1);

    let mut a = ctx.alloc_unified::<u32>(64).expect("unified a");
    let b = ctx.alloc_unified::<u32>(64).expect("unified b");
    // Zeroed on the device (the stand-in's memset), not left at 0xAB.
    assert!(a.as_slice().expect("view").iter().all(|&x| x == 0));
    a.as_mut_slice().expect("view").fill(7);

    // A view of `b` alive across a scope: the scope's first work is refused.
    {
        let view = b.as_slice().expect("view of b");
        // SAFETY: the stand-in runs nothing.
        let before = unsafe { launches() };
        // SAFETY: refused before the driver.
        let err = ctx
            .scope(|s| unsafe { s.launch(&stream, &kernel, &cfg, &params![&mut a]) })
            .unwrap_err();
        assert!(matches!(err, Error::UnifiedAccess { .. }), "{err}");
        // SAFETY: as above.
        assert_eq!(before, unsafe { launches() });
        // Synchronous device work too.
        let err = ctx.upload(&[1u32; 64]).unwrap_err();
        assert!(matches!(err, Error::UnifiedAccess { .. }), "{err}");
        assert_eq!(view[0], 0);
    }

    // Inside a scope that queued work, no view of any unified buffer.
    let err = ctx
        .scope(|s| {
            // SAFETY: the stand-in runs nothing.
            unsafe { s.launch(&stream, &kernel, &cfg, &params![&mut a]) }?;
            b.as_slice().map(|v| v[0])
        })
        .unwrap_err();
    assert!(matches!(err, Error::UnifiedAccess { .. }), "{err}");

    // Beside a scope on another thread, likewise.
    std::thread::scope(|t| {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let (ctx, stream, kernel, a) = (&ctx, &stream, &kernel, &mut a);
        t.spawn(move || {
            ctx.scope(|s| {
                // SAFETY: the stand-in runs nothing.
                unsafe { s.launch(stream, kernel, &cfg, &params![a]) }?;
                tx.send(()).expect("signal");
                done_rx.recv().expect("wait");
                Ok(())
            })
            .expect("scope on the other thread");
        });
        rx.recv().expect("the other scope queued work");
        let err = b.as_slice().map(|v| v[0]).unwrap_err();
        assert!(matches!(err, Error::UnifiedAccess { .. }), "{err}");
        done_tx.send(()).expect("release");
    });

    // Once every scope has ended, views work again.
    assert_eq!(a.as_slice().expect("view")[0], 7);
    assert_eq!(b.to_vec().expect("copy"), vec![0u32; 64]);
    drop((a, b, stream));
    drop(kernel);
    drop(module);
    assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
}
