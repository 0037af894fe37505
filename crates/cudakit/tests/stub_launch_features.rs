//! Issue 21 against the stand-in libcuda: batched copies (one driver call,
//! byte-exact through managed memory, every bad batch refused before the
//! driver), programmatic dependent launch and L2 access-policy windows
//! (the launch attributes the stand-in records, the device's limits checked
//! before the driver).
//!
//! Process-global (`CUDAKIT_LIBCUDA`, attribute overrides), hence a binary
//! of its own with one test.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::{params, AccessPolicyWindow, Context, CopyBatch, Error, L2Access, LaunchConfig};

struct Stub(libloading::Library);

impl Stub {
    fn call<A, R>(&self, name: &[u8], a: A) -> R {
        // SAFETY: exported by the stand-in; the caller names a function of
        // signature `fn(A) -> R`.
        let f = unsafe { self.0.get::<unsafe extern "C" fn(A) -> R>(name) }.expect("stub export");
        // SAFETY: as above.
        unsafe { f(a) }
    }
    fn batch_counts(&self) -> [u64; 3] {
        let mut c = [0u64; 3];
        self.call::<*mut u64, ()>(b"stub_batch_counts\0", c.as_mut_ptr());
        c
    }
    fn ex_attrs(&self) -> Vec<i32> {
        // SAFETY: exported with this signature.
        let f = unsafe {
            self.0
                .get::<unsafe extern "C" fn(*mut i32, usize) -> usize>(b"stub_last_ex_attrs\0")
        }
        .expect("stub_last_ex_attrs");
        let mut out = [0i32; 8];
        // SAFETY: 8 writable i32s.
        let n = unsafe { f(out.as_mut_ptr(), out.len()) };
        out[..n.min(8)].to_vec()
    }
    fn launches(&self) -> u64 {
        self.call::<(), u64>(b"stub_launch_count\0", ())
    }
    fn set_attribute(&self, attribute: i32, value: i32) {
        // SAFETY: exported with this signature.
        let f = unsafe {
            self.0
                .get::<unsafe extern "C" fn(i32, i32)>(b"stub_set_attribute\0")
        }
        .expect("stub_set_attribute");
        // SAFETY: plain values.
        unsafe { f(attribute, value) };
    }
    fn set_params(&self, layout: &[(usize, usize)]) {
        let flat: Vec<usize> = layout.iter().flat_map(|&(o, s)| [o, s]).collect();
        // SAFETY: exported with this signature.
        let f = unsafe {
            self.0
                .get::<unsafe extern "C" fn(*const usize, usize)>(b"stub_set_params\0")
        }
        .expect("stub_set_params");
        // SAFETY: 2 * len usizes.
        unsafe { f(flat.as_ptr(), layout.len()) };
    }
}

#[test]
fn batches_dependent_launches_and_l2_windows() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let stub = Stub(unsafe { libloading::Library::new(&path) }.expect("open the stand-in"));
    stub.call::<i32, ()>(b"stub_set_device_count\0", 2);
    let ctx = Context::new(0).expect("context on the stand-in");
    let stream = ctx.stream().expect("stream");

    // --- batched copies, byte-exact through managed memory.
    let n = 64usize;
    let host: Vec<Vec<u32>> = (0..100u32)
        .map(|k| (0..n as u32).map(|i| k * 1000 + i * 7 + 1).collect())
        .collect();
    let mut unified: Vec<_> = (0..100)
        .map(|_| ctx.alloc_unified::<u32>(n).expect("unified"))
        .collect();
    let mut back: Vec<Vec<u32>> = vec![vec![0xDEAD_BEEF; n]; 100];
    ctx.scope(|s| {
        let mut batch = CopyBatch::new();
        for (h, u) in host.iter().zip(unified.iter_mut()) {
            batch.to_device(h, u)?;
        }
        assert_eq!(batch.len(), 100);
        s.copy_batch(&stream, batch)
    })
    .expect("host to device batch");
    ctx.scope(|s| {
        let mut batch = CopyBatch::new();
        for (u, b) in unified.iter().zip(back.iter_mut()) {
            batch.to_host(u, b)?;
        }
        s.copy_batch(&stream, batch)
    })
    .expect("device to host batch");
    assert_eq!(back, host, "the batches copied every byte");
    assert_eq!(
        stub.batch_counts()[..2],
        [2, 200],
        "two driver calls, 200 copies"
    );
    assert_eq!(ctx.metrics().copy_batches, 2);
    assert_eq!(ctx.metrics().copy_batch_fallbacks, 0);

    // --- bad batches, refused before the driver.
    let empty = ctx.scope(|s| s.copy_batch(&stream, CopyBatch::new()));
    assert!(matches!(empty, Err(Error::InvalidArgument(_))), "{empty:?}");
    let short = vec![1u32; n - 1];
    let mut b = CopyBatch::new();
    let mismatch = b.to_device(&short, &mut unified[0]).map(|_| ());
    assert!(
        matches!(mismatch, Err(Error::LengthMismatch { .. })),
        "{mismatch:?}"
    );
    let dev = ctx.alloc::<u32>(n).expect("device buffer");
    let overlapping = ctx.scope(|s| {
        let mut b = CopyBatch::new();
        b.to_device(&host[0], &dev)?;
        b.to_device(&host[1], &dev)?;
        s.copy_batch(&stream, b)
    });
    assert!(
        matches!(&overlapping, Err(Error::InvalidArgument(m)) if m.contains("overlap")),
        "{overlapping:?}"
    );
    let other = Context::new(1).expect("device 1");
    let theirs = other.alloc::<u32>(n).expect("device 1 buffer");
    let mut b = CopyBatch::new();
    b.to_device(&host[0], &dev).expect("first copy");
    let mixed = b.to_device(&host[1], &theirs).map(|_| ());
    assert!(
        matches!(mixed, Err(Error::ContextMismatch { .. })),
        "{mixed:?}"
    );
    let captured = ctx.scope(|s| {
        let g = s.capture(&stream, || {
            let mut b = CopyBatch::new();
            b.to_device(&host[0], &dev)?;
            let r = s.copy_batch(&stream, b);
            assert!(
                matches!(r, Err(Error::IllegalDuringCapture { .. })),
                "{r:?}"
            );
            Ok(())
        });
        drop(g);
        Ok(())
    });
    captured.expect("the refusal leaves the capture and the scope usable");
    assert_eq!(
        stub.batch_counts()[..2],
        [2, 200],
        "no refused batch reached the driver"
    );

    // --- a pageable copy in a batch behind a host callback of the scope
    // that has not run: refused (it would wait on the host for the stream,
    // where the callback may wait for this thread).
    stub.call::<bool, ()>(b"stub_hold_host_fns\0", true);
    let r = ctx.scope(|s| {
        s.host_fn(&stream, || {})?;
        let mut b = CopyBatch::new();
        b.to_device(&host[0], &dev)?;
        let r = s.copy_batch(&stream, b);
        stub.call::<bool, ()>(b"stub_hold_host_fns\0", false);
        r
    });
    assert!(
        matches!(&r, Err(Error::InvalidArgument(m)) if m.contains("host callback")),
        "{r:?}"
    );
    assert_eq!(
        stub.batch_counts()[..2],
        [2, 200],
        "the refused batch reached no driver"
    );

    // --- a copy whose source and destination overlap (two views of one
    // buffer) is refused in every form: CUDA's copies do not move
    // overlapping memory.
    let (lo, hi) = (
        dev.view(0..32).expect("view"),
        dev.view(16..48).expect("view"),
    );
    let r = ctx.scope(|s| s.copy(&stream, lo, hi));
    assert!(
        matches!(&r, Err(Error::InvalidArgument(m)) if m.contains("overlap")),
        "{r:?}"
    );
    let r = CopyBatch::new().device(lo, hi).map(|_| ());
    assert!(
        matches!(&r, Err(Error::InvalidArgument(m)) if m.contains("overlap")),
        "{r:?}"
    );
    let r = hi.copy_from(lo);
    assert!(
        matches!(&r, Err(Error::InvalidArgument(m)) if m.contains("overlap")),
        "{r:?}"
    );
    let disjoint = dev.view(32..64).expect("view");
    disjoint
        .copy_from(dev.view(0..32).expect("view"))
        .expect("disjoint views copy");

    // --- programmatic dependent launch and access-policy windows.
    let module = ctx
        .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
        .expect("module");
    stub.set_params(&[(0, 8), (8, 4)]);
    let f = module.function("k").expect("function");
    let cfg = LaunchConfig::new(4, 64).programmatic();
    // SAFETY: the stand-in runs nothing.
    ctx.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&dev, 3i32]) })
        .expect("a programmatic launch");
    assert_eq!(
        stub.ex_attrs(),
        vec![6],
        "PROGRAMMATIC_STREAM_SERIALIZATION"
    );
    let window = AccessPolicyWindow::over(&dev).hit_ratio(0.5);
    let cfg = LaunchConfig::new(4, 64).access_policy(window);
    // SAFETY: as above.
    ctx.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&dev, 3i32]) })
        .expect("a launch with a window");
    assert_eq!(stub.ex_attrs(), vec![1], "ACCESS_POLICY_WINDOW");
    let launches = stub.launches();
    let refused = [
        AccessPolicyWindow::over(&dev).hit_ratio(1.5),
        AccessPolicyWindow::over(&dev).miss(L2Access::Persisting),
        AccessPolicyWindow::new(dev.device_ptr(), 0),
        // Larger than the stand-in's 128 MiB limit.
        AccessPolicyWindow::new(dev.device_ptr(), 129 << 20),
    ];
    for w in refused {
        let cfg = LaunchConfig::new(4, 64).access_policy(w);
        // SAFETY: as above.
        let r = ctx.scope(|s| unsafe { s.launch(&stream, &f, &cfg, &params![&dev, 3i32]) });
        assert!(matches!(r, Err(Error::AccessPolicy { .. })), "{w:?}: {r:?}");
        let r = stream.set_access_policy(Some(w));
        assert!(matches!(r, Err(Error::AccessPolicy { .. })), "{w:?}: {r:?}");
    }
    assert_eq!(
        stub.launches(),
        launches,
        "no refused window reached the driver"
    );
    stream
        .set_access_policy(Some(AccessPolicyWindow::over(&dev)))
        .expect("stream window");
    stream.set_access_policy(None).expect("cleared");
    assert_eq!(stub.batch_counts()[2], 2, "two stream attribute sets");
    let over = ctx.set_persisting_l2_limit(81 << 20);
    assert!(matches!(over, Err(Error::AccessPolicy { .. })), "{over:?}");
    ctx.set_persisting_l2_limit(16 << 20).expect("set-aside");
    assert_eq!(ctx.persisting_l2_limit().expect("read back"), 16 << 20);

    // A device below compute capability 9.0 refuses the programmatic
    // attribute (no silent plain launch); 8.0 has windows.
    drop(theirs);
    drop(other);
    stub.set_attribute(75, 8);
    let old = Context::new(1).expect("device 1 as sm_80");
    assert_eq!(old.limits().compute_capability.0, 8);
    let m1 = old
        .load_module_image(b".version 8.8\n.target sm_80\n.address_size 64\n")
        .expect("module on device 1");
    let f1 = m1.function("k").expect("function on device 1");
    let s1 = old.stream().expect("stream on device 1");
    let d1 = old.alloc::<u32>(n).expect("buffer on device 1");
    let cfg = LaunchConfig::new(4, 64).programmatic();
    // SAFETY: as above.
    let r = old.scope(|s| unsafe { s.launch(&s1, &f1, &cfg, &params![&d1, 3i32]) });
    assert!(matches!(r, Err(Error::NotSupported { .. })), "{r:?}");
    assert_eq!(
        stub.launches(),
        launches,
        "the refused launch did not reach the driver"
    );
    // Streams the scope makes and owns (Scope::stream, issue 26).
    let ran = std::sync::atomic::AtomicUsize::new(0);
    ctx.scope(|s| {
        let (one, two) = (s.stream()?, s.stream()?);
        assert_ne!(one.as_raw(), two.as_raw());
        s.host_fn(one, || {
            ran.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })?;
        s.host_fn(two, || {
            ran.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        })?;
        Ok(())
    })
    .expect("a scope's own streams");
    assert_eq!(
        ran.load(std::sync::atomic::Ordering::SeqCst),
        2,
        "both ran before the scope ended"
    );
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
}
