//! Green contexts (`Context::split_sms`) on the test-only stand-in libcuda,
//! which splits the device's 132 SMs by a minimum and an alignment of 8 (as
//! sm_90), refuses to split a split's output again (as CUDA does), gives
//! each green context a `CUcontext` of its own, and counts a green context
//! destroyed while a stream or an allocation of it is live, or without a
//! synchronize after its last launch:
//!
//! - the device's SM resource is read from the driver;
//! - every size the device cannot make (0, below 8, not a multiple of 8,
//!   more than 132 in all) is a typed error naming the rule, refused
//!   before the driver is asked to split, and the context stays usable;
//! - `[16, 32]` gives partitions of exactly 16 and 32 SMs and a remainder
//!   of 84, carved one after the other (the second from a green context of
//!   the first split's leftover); a 12.x driver's missing granularity falls
//!   back to the documented sm_90 rule;
//! - streams (made on the green context directly), modules, buffers,
//!   launches and scopes work on a partition, in its own arena; the
//!   primary context's buffers and functions are refused there before the
//!   driver;
//! - another thread is refused before the driver, and a buffer dropped on
//!   another thread is freed by the owning thread later;
//! - a scope's failed wait is tried again on a fresh thread acting for the
//!   owning one (a refusal there would abort the process);
//! - every green context is destroyed after its streams and allocations
//!   and after a wait for its work; one whose wait fails is kept;
//! - a sticky error on a partition poisons the primary context too.
//!
//! Process-global (`CUDAKIT_LIBCUDA`), so in its own test binary and one
//! test function.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::{params, AllocKind, Context, Error, LaunchConfig, SmSplitOptions};

const PTX: &str = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p0)
{
    ret;
}
";

struct Stand {
    lib: libloading::Library,
}

impl Stand {
    /// [created, live, destroyed, destroyed with live streams or
    /// allocations, destroyed without a wait, splits, direct streams].
    fn green(&self) -> [u64; 7] {
        stub::counts(&self.lib, b"stub_green_counts\0")
    }

    fn set_green(&self, min: u32, align: u32, report: bool) {
        // SAFETY: as above.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(u32, u32, bool)>(b"stub_set_green\0")
        }
        .expect("stub_set_green");
        // SAFETY: plain values.
        unsafe { f(min, align, report) };
    }

    fn fail_next_sync(&self, code: i32) {
        // SAFETY: as above.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(i32)>(b"stub_fail_next_sync\0")
        }
        .expect("stub_fail_next_sync");
        // SAFETY: a plain value.
        unsafe { f(code) };
    }

    fn set_params(&self, layout: &[(usize, usize)]) {
        stub::set_params(&self.lib, layout);
    }

    fn refusals(&self) -> Vec<u64> {
        // SAFETY: as above.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(*mut u64, usize) -> usize>(b"stub_refusals\0")
        }
        .expect("stub_refusals");
        let mut out = vec![0u64; 32];
        // SAFETY: `out` has 32 slots.
        let n = unsafe { f(out.as_mut_ptr(), out.len()) };
        out.truncate(n.min(32));
        out
    }
}

#[test]
fn green_contexts_split_check_track_and_destroy_in_order() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let stand = Stand { lib };
    stand.set_params(&[(0, 8)]);
    let ctx = Context::new(0).expect("context on the stand-in");
    assert!(!ctx.is_green());
    assert_eq!(ctx.green_sm_count(), None);
    assert!(ctx.primary().same(&ctx));

    // The device's SMs and rules, from the driver.
    let sms = ctx.sm_resource().expect("sm_resource");
    assert_eq!(
        (sms.sm_count, sms.min_partition_size, sms.alignment),
        (132, 8, 8)
    );
    assert!(sms.reported_by_driver);

    // Sizes the device cannot make: typed, named, before the driver.
    for (counts, bad) in [
        (&[12u32][..], 12u32),
        (&[0][..], 0),
        (&[4][..], 4),
        (&[16, 20][..], 20),
        (&[7, 16][..], 7),
    ] {
        match ctx.split_sms(counts) {
            Err(Error::SmGranularity {
                device: 0,
                count,
                min: 8,
                multiple: 8,
                reported_by_driver: true,
            }) if count == bad => {}
            other => panic!("{counts:?}: {other:?}"),
        }
    }
    let err = ctx.split_sms(&[12]).unwrap_err();
    assert!(
        err.to_string()
            .contains("at least 8 SMs, in multiples of 8"),
        "{err}"
    );
    match ctx.split_sms(&[128, 8]) {
        Err(Error::NotEnoughSms {
            device: 0,
            requested: 136,
            available: 132,
        }) => {}
        other => panic!("{other:?}"),
    }
    assert!(matches!(ctx.split_sms(&[]), Err(Error::InvalidArgument(_))));
    // With IGNORE_SM_COSCHEDULING only 0 and the total are checked first.
    assert!(matches!(
        ctx.split_sms_with(&[0], SmSplitOptions::default().ignore_coscheduling(true)),
        Err(Error::SmGranularity { count: 0, .. })
    ));
    assert_eq!(stand.green()[5], 0, "nothing reached the split");
    assert_eq!(stand.green()[0], 0, "nothing was made");
    assert!(ctx.poisoned().is_none());
    ctx.alloc::<u32>(4).expect("the context stays usable");

    // A split of 16 and 32: exact sizes and a remainder of 84.
    let split = ctx.split_sms(&[16, 32]).expect("split");
    assert_eq!(split.partitions().len(), 2);
    let (small, large) = (&split[0], &split[1]);
    assert!(small.is_green() && large.is_green());
    assert_eq!(small.green_sm_count(), Some(16));
    assert_eq!(large.green_sm_count(), Some(32));
    assert_eq!(small.limits().multiprocessors, 16);
    let rest = split.remainder().expect("a remainder");
    assert_eq!(rest.green_sm_count(), Some(84));
    assert!(small.primary().same(&ctx) && large.primary().same(&ctx));
    assert!(!small.same(&ctx) && !small.same(large));
    assert_ne!(small.as_raw(), ctx.as_raw());
    assert!(small.as_raw_green().is_some() && ctx.as_raw_green().is_none());
    assert_eq!(small.sm_resource().expect("partition's").sm_count, 16);
    // Two splits (one per size); four green contexts: two partitions, the
    // first split's leftover (kept by the second partition), the remainder.
    let g = stand.green();
    assert_eq!((g[0], g[1], g[5]), (4, 4, 2), "{g:?}");
    // A partition can itself be split.
    let inner = large.split_sms(&[8]).expect("split a partition");
    assert_eq!(inner[0].green_sm_count(), Some(8));
    assert_eq!(inner.remainder().and_then(|r| r.green_sm_count()), Some(24));
    assert!(inner[0].primary().same(&ctx));
    drop(inner);

    // Work on a partition: its own stream, module, buffers, arena.
    let stream = small.stream().expect("stream");
    assert_eq!(stand.green()[6], 1, "made by cuGreenCtxStreamCreate");
    let module = small.load_module_image(PTX.as_bytes()).expect("module");
    let k = module.function("k").expect("function");
    let buf = small.alloc::<u32>(256).expect("alloc");
    assert_eq!(small.stats().live_count(), 1);
    // SAFETY: the stand-in runs nothing.
    small
        .scope(|s| unsafe { s.launch(&stream, &k, &LaunchConfig::new(1, 32), &params![&buf]) })
        .expect("launch on the partition");
    assert_eq!(small.metrics().launches, 1);
    // The primary context's buffer and function are another context's.
    let primary_buf = ctx.alloc::<u32>(256).expect("primary alloc");
    let err = small
        // SAFETY: refused before the driver.
        .scope(|s| unsafe {
            s.launch(
                &stream,
                &k,
                &LaunchConfig::new(1, 32),
                &params![&primary_buf],
            )
        })
        .unwrap_err();
    assert!(
        matches!(err, Error::ArgumentContextMismatch { .. }),
        "{err}"
    );
    let primary_module = ctx.load_module_image(PTX.as_bytes()).expect("module");
    let pk = primary_module.function("k").expect("function");
    let err = small
        // SAFETY: refused before the driver.
        .scope(|s| unsafe { s.launch(&stream, &pk, &LaunchConfig::new(1, 32), &params![&buf]) })
        .unwrap_err();
    assert!(matches!(err, Error::ContextMismatch { .. }), "{err}");
    assert_eq!(
        stand.refusals().first().copied(),
        Some(0),
        "no wrong-context refusal"
    );

    // Another thread: refused before the driver; a drop there is deferred
    // to the owning thread.
    let moved = small.alloc::<u32>(64).expect("alloc");
    std::thread::scope(|t| {
        t.spawn(|| {
            let r = small.alloc::<u32>(4);
            assert!(
                matches!(r, Err(Error::GreenContextThread { device: 0 })),
                "{r:?}"
            );
            assert!(matches!(
                small.stream(),
                Err(Error::GreenContextThread { .. })
            ));
            // The primary context is any thread's.
            ctx.alloc::<u32>(4).expect("primary on another thread");
            drop(moved);
        });
    });
    assert_eq!(small.stats().live_count(), 2, "not freed on that thread");
    small
        .synchronize()
        .expect("synchronize drains the deferred free");
    assert_eq!(small.stats().live_count(), 1);
    // A stream-ordered buffer freed explicitly on another thread: handed
    // to the owning thread as its drop would be, never leaked for good.
    let pool = small.default_pool().expect("pool");
    let pooled = pool.alloc::<u32>(&stream, 64).expect("pool alloc");
    std::thread::scope(|t| {
        t.spawn(|| pooled.free().expect("free off the partition's thread"));
    });
    assert_eq!(
        small.stats().kind(AllocKind::Leaked).live_count,
        0,
        "freed off its thread: recorded as leaked for good"
    );
    small
        .synchronize()
        .expect("synchronize drains the deferred free");
    assert_eq!(small.stats().live_count(), 1, "the pool buffer was freed");
    drop(pool);
    assert!(small.drop_errors().is_empty(), "{:?}", small.drop_errors());

    // A scope whose wait fails once (not sticky): tried again on a fresh
    // thread, which acts for this one (else the process would abort).
    let r = small.scope(|s| {
        // SAFETY: the stand-in runs nothing.
        unsafe { s.launch(&stream, &k, &LaunchConfig::new(1, 32), &params![&buf])? };
        stand.fail_next_sync(1);
        Ok(())
    });
    assert!(r.is_err(), "the first failure is reported");
    assert!(small.poisoned().is_none());
    small.alloc::<u32>(1).expect("usable after");

    // Drops in order: streams, modules and buffers first (they borrow the
    // partition), then the green contexts, each after a wait.
    drop((k, pk));
    drop((module, buf, stream, primary_module, primary_buf));
    drop(split);
    let g = stand.green();
    assert_eq!(g[1], 0, "every green context destroyed: {g:?}");
    assert_eq!(g[2], g[0], "{g:?}");
    assert_eq!(g[3], 0, "none destroyed with a live stream or allocation");
    assert_eq!(g[4], 0, "none destroyed before a wait for its work");

    // A 12.x driver reports no granularity: the documented sm_90 rule.
    stand.set_green(0, 0, false);
    let sms = ctx.sm_resource().expect("sm_resource");
    assert_eq!((sms.min_partition_size, sms.alignment), (8, 8));
    assert!(!sms.reported_by_driver);
    assert!(matches!(
        ctx.split_sms(&[12]),
        Err(Error::SmGranularity {
            reported_by_driver: false,
            ..
        })
    ));
    stand.set_green(8, 8, true);

    // No remainder when asked for none, or when nothing is left.
    let whole = ctx
        .split_sms_with(&[64, 64], SmSplitOptions::default().remainder(false))
        .expect("split");
    assert!(whole.remainder().is_none());
    drop(whole);

    // A green context whose wait fails is kept, not destroyed.
    let before = stand.green();
    let kept = ctx
        .split_sms_with(&[8], SmSplitOptions::default().remainder(false))
        .expect("split");
    let ks = kept[0].stream().expect("stream");
    let km = kept[0].load_module_image(PTX.as_bytes()).expect("module");
    let kf = km.function("k").expect("function");
    let kb = kept[0].alloc::<u32>(4).expect("alloc");
    // SAFETY: the stand-in runs nothing.
    kept[0]
        .scope(|s| unsafe { s.launch(&ks, &kf, &LaunchConfig::new(1, 32), &params![&kb]) })
        .expect("launch");
    drop(kf);
    drop((km, ks, kb));
    stand.fail_next_sync(1);
    drop(kept);
    let after = stand.green();
    assert_eq!(after[0] - before[0], 1, "one made");
    assert_eq!(after[1] - before[1], 1, "and kept: {after:?}");
    assert_eq!(after[2], before[2], "not destroyed");

    // A sticky error on a partition poisons the primary context too.
    let split = ctx.split_sms(&[8]).expect("split");
    let p = &split[0];
    let ps = p.stream().expect("stream");
    let pm = p.load_module_image(PTX.as_bytes()).expect("module");
    let pf = pm.function("k").expect("function");
    let pb = p.alloc::<u32>(4).expect("alloc");
    let r = p.scope(|s| {
        // SAFETY: the stand-in runs nothing.
        unsafe { s.launch(&ps, &pf, &LaunchConfig::new(1, 32), &params![&pb])? };
        stand.fail_next_sync(700);
        Ok(())
    });
    assert!(r.is_err());
    assert!(p.poisoned().is_some(), "the partition is poisoned");
    assert!(ctx.poisoned().is_some(), "and so is the primary context");
    assert!(matches!(
        ctx.alloc::<u32>(1),
        Err(Error::ContextPoisoned { .. })
    ));
    assert!(matches!(
        split.remainder().expect("remainder").stream(),
        Err(Error::ContextPoisoned { .. })
    ));
}
