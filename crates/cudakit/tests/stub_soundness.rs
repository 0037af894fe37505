//! Soundness checks against the test-only stand-in libcuda (issue 10,
//! items 1, 3, 6 and 7), on a machine without a GPU. The stand-in is set to
//! report two devices; each check would fail without its fix:
//!
//! - a buffer of one device's context passed to a kernel of another is
//!   refused before the driver (`ArgumentContextMismatch`);
//! - `Context::reset` never resets a primary context that another thread
//!   retained meanwhile (the stand-in counts resets with a retain
//!   outstanding, and pauses in `cuDevicePrimaryCtxRelease_v2` to widen the
//!   window);
//! - element types more aligned than the memory guarantees are refused;
//! - threads raising a function's dynamic shared-memory limit at once never
//!   leave cudakit's cached limit above the real attribute (the stand-in
//!   refuses launches over the attribute, and pauses in
//!   `cuFuncSetAttribute`).
//!
//! Process-global (`CUDAKIT_LIBCUDA`), hence one test function in its own
//! binary.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use std::sync::atomic::{AtomicBool, Ordering};

use cudakit::{params, Context, DeviceCopy, Error, LaunchConfig};

struct Stub {
    lib: libloading::Library,
}

impl Stub {
    fn call0<R>(&self, name: &[u8]) -> R {
        // SAFETY: the stand-in exports `name` as a no-argument function
        // returning R (each caller below names one it exports so).
        let f = unsafe { self.lib.get::<unsafe extern "C" fn() -> R>(name) }.expect("symbol");
        // SAFETY: no arguments.
        unsafe { f() }
    }

    fn call1<A>(&self, name: &[u8], a: A) {
        // SAFETY: as above, a one-argument function.
        let f = unsafe { self.lib.get::<unsafe extern "C" fn(A)>(name) }.expect("symbol");
        // SAFETY: plain-value argument.
        unsafe { f(a) }
    }

    fn set_params(&self, layout: &[(usize, usize)]) {
        let flat: Vec<usize> = layout.iter().flat_map(|&(o, s)| [o, s]).collect();
        // SAFETY: the stand-in exports this function with this signature.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(*const usize, usize)>(b"stub_set_params\0")
        }
        .expect("stub_set_params");
        // SAFETY: `flat` holds 2 * layout.len() usizes.
        unsafe { f(flat.as_ptr(), layout.len()) };
    }
}

#[repr(C, align(512))]
#[derive(Clone, Copy)]
struct Wide([u8; 512]);
// SAFETY: a byte array, no padding (size 512 = alignment), every bit
// pattern valid.
unsafe impl DeviceCopy for Wide {}

#[test]
fn soundness_against_the_stand_in() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let stub = Stub { lib };
    stub.call1(b"stub_set_device_count\0", 2i32);

    // Item 3: a pointer argument of another context never reaches the driver.
    {
        let ctx0 = Context::new(0).expect("device 0");
        let ctx1 = Context::new(1).expect("device 1");
        assert!(!ctx0.same(&ctx1));
        let module = ctx1
            .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
            .expect("module");
        let f = module.function("k").expect("function");
        stub.set_params(&[(0, 8), (8, 8)]);
        let foreign = ctx0.alloc::<f32>(16).expect("alloc on 0");
        let local = ctx1.alloc::<f32>(16).expect("alloc on 1");
        let stream = ctx1.stream().expect("stream");
        let before: u64 = stub.call0(b"stub_launch_count\0");
        let cfg = LaunchConfig::new(1, 16);
        // SAFETY: refused before the driver.
        let err = ctx1
            .scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&local, &foreign]) })
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::ArgumentContextMismatch {
                    index: 1,
                    argument_device: 0,
                    kernel_device: 1,
                    ..
                }
            ),
            "{err}"
        );
        // A view is checked the same way.
        let view = foreign.view(2..10).expect("view");
        // SAFETY: refused before the driver.
        let err = ctx1
            .scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![view, &local]) })
            .unwrap_err();
        assert!(
            matches!(err, Error::ArgumentContextMismatch { index: 0, .. }),
            "{err}"
        );
        // A virtual buffer's mapping is granted per device (`grant_access`),
        // which peer access does not extend: with peer access on, the
        // buffer, its view and a sub-view of it are all still refused (a
        // view used to pass as a plain device view).
        ctx1.enable_peer_access(&ctx0).expect("peer access 1 -> 0");
        let virt = ctx0
            .alloc_virtual::<f32>(16, 1 << 20)
            .expect("virtual on 0");
        for (what, p) in [
            ("the buffer", params![&virt, &local]),
            ("its view", params![virt.as_view(), &local]),
            (
                "a sub-view",
                params![virt.view(1..9).expect("view"), &local],
            ),
        ] {
            // SAFETY: refused before the driver.
            let err = ctx1
                .scope(|s| unsafe { s.launch(&stream, &f, &cfg, &p) })
                .unwrap_err();
            assert!(
                matches!(err, Error::ArgumentContextMismatch { index: 0, .. }),
                "{what} of another context's virtual buffer: {err}"
            );
        }
        // A pool's allocations do not follow context peer access either
        // (`cuMemPoolSetAccess` grants them): a view of one is refused.
        let stream0 = ctx0.stream().expect("stream on 0");
        let pool = ctx0.default_pool().expect("pool on 0");
        let pooled = pool.alloc::<f32>(&stream0, 16).expect("pool alloc on 0");
        // SAFETY: refused before the driver.
        let err = ctx1
            .scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![pooled.as_view(), &local]) })
            .unwrap_err();
        assert!(
            matches!(err, Error::ArgumentContextMismatch { index: 0, .. }),
            "a view of another context's pool buffer: {err}"
        );
        drop(pooled);
        drop(pool);
        // A plain buffer of device 0 is reachable through that peer access.
        // SAFETY: the stand-in runs nothing.
        ctx1.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&foreign, &local]) })
            .expect("a peer's plain buffer");
        drop(virt);
        // SAFETY: no work of ctx1 uses ctx0's memory any more (the scopes
        // above waited).
        unsafe { ctx1.disable_peer_access(&ctx0) }.expect("peer access off");
        // (One launch above: the peer's plain buffer.)
        let after: u64 = stub.call0::<u64>(b"stub_launch_count\0") - 1;
        assert_eq!(before, after, "a foreign argument reached cuLaunchKernel");
        let after = after + 1;
        // The same arguments of the right context do launch.
        // SAFETY: the stand-in runs nothing.
        ctx1.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&local, &local]) })
            .expect("launch with local arguments");
        let launched: u64 = stub.call0(b"stub_launch_count\0");
        assert_eq!(launched, after + 1);
    }

    // Item 6: alignment beyond what the memory guarantees is a typed error.
    {
        let ctx = Context::new(0).expect("device 0");
        for err in [
            ctx.alloc_pinned::<Wide>(4).map(|_| ()).unwrap_err(),
            ctx.alloc_unified::<Wide>(4).map(|_| ()).unwrap_err(),
            ctx.alloc::<Wide>(4).map(|_| ()).unwrap_err(),
        ] {
            assert!(
                matches!(
                    err,
                    Error::Alignment {
                        align: 512,
                        limit: 256,
                        ..
                    }
                ),
                "{err}"
            );
        }
        assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
    }

    // Item 7: racing raises of the dynamic shared-memory limit.
    {
        let ctx = Context::new(0).expect("device 0");
        let module = ctx
            .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
            .expect("module");
        let f = module.function("shared").expect("function");
        stub.set_params(&[]);
        let refused_before: u64 = stub.call0(b"stub_shared_refusals\0");
        std::thread::scope(|t| {
            for thread in 0..8u32 {
                let (ctx, f) = (&ctx, &f);
                t.spawn(move || {
                    let stream = ctx.stream().expect("stream");
                    for i in 0..40u32 {
                        // Sizes between 48 KiB and 200 KiB, different per
                        // thread and iteration.
                        let kib = 48 + (thread * 37 + i * 53) % 152;
                        let cfg = LaunchConfig::new(1, 32).shared(kib * 1024);
                        // SAFETY: the stand-in runs nothing.
                        ctx.scope(|s| unsafe { s.launch(&stream, f, &cfg, &params![]) })
                            .unwrap_or_else(|e| panic!("launch with {kib} KiB: {e}"));
                    }
                });
            }
        });
        let refused_after: u64 = stub.call0(b"stub_shared_refusals\0");
        assert_eq!(
            refused_before, refused_after,
            "a launch reached the driver asking more shared memory than the attribute allowed"
        );
    }

    // Item 1: reset against concurrent retains.
    {
        stub.call1(b"stub_set_release_delay_us\0", 300u64);
        let stop = AtomicBool::new(false);
        std::thread::scope(|t| {
            t.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let ctx = Context::new(0).expect("context");
                    let buf = ctx.alloc::<u32>(4).expect("alloc");
                    // Holds the memory a while, as a real user would.
                    std::thread::sleep(std::time::Duration::from_micros(200));
                    drop(buf);
                    drop(ctx);
                }
            });
            for _ in 0..200 {
                if let Ok(ctx) = Context::new(0) {
                    // Refused while the other thread holds a handle; that is
                    // fine. What must never happen is a reset under its feet.
                    let _ = ctx.reset();
                }
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
            stop.store(true, Ordering::Relaxed);
        });
        stub.call1(b"stub_set_release_delay_us\0", 0u64);
        let bad: u64 = stub.call0(b"stub_resets_while_retained\0");
        assert_eq!(
            bad, 0,
            "Context::reset reset a primary context another thread retained"
        );
    }
}
