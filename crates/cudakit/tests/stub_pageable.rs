//! Pageable transfers of the staged-pipeline size under every
//! [`PageablePolicy`], against the stand-in libcuda (whose managed memory
//! is real host memory, so the bytes that reach "the device" can be read
//! back; whose `cuMemHostRegister_v2` records ranges, refuses overlaps with
//! 712 and can be told to refuse the next one):
//!
//! - byte-exact round trips of fresh random data at odd lengths and odd
//!   offsets, the bytes around the destination untouched, under each
//!   policy, with every registration undone when the call returns;
//! - both directions at once from two threads, many times;
//! - a refused registration (injected, and a range someone else registered
//!   first: 712) falls back to staging, still byte-exact;
//! - a wait that fails in the middle (not sticky): the transfer reports it,
//!   and the registration is undone only after the retried wait;
//! - `release_staging` does nothing on a capturing thread, and keeps (as
//!   leaked) the chunks of a lane whose wait failed.
//!
//! Process-global (`CUDAKIT_LIBCUDA`, the policy), hence a binary of its
//! own.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::memory::staged::{self, PageablePolicy, STAGE_MIN};
use cudakit::{AllocKind, Context};

/// Sets the process's pageable policy, the registering ones included.
fn set_policy(policy: PageablePolicy) {
    // SAFETY: the tests of this file are serialized and each waits for its
    // own copies; no other thread queues asynchronous copies from the host
    // memory a registering transfer uses while it runs.
    unsafe { staged::set_pageable_policy_unchecked(policy) };
}

fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn open() -> libloading::Library {
    stub::open_default()
}

/// Registrations made, refused, undone, live.
fn reg_counts(lib: &libloading::Library) -> [u64; 4] {
    stub::counts(lib, b"stub_register_counts\0")
}

/// A small xorshift generator seeded from the clock (fresh data each run),
/// the seed printed on failure.
struct Rng(u64, u64);

impl Rng {
    fn new() -> Rng {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            | 1;
        Rng(seed, seed)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.1;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.1 = x;
        x
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn fill(&mut self, out: &mut [u8]) {
        for c in out.chunks_mut(8) {
            let v = self.next().to_le_bytes();
            c.copy_from_slice(&v[..c.len()]);
        }
    }
}

/// Uploads `len` random bytes from offset `src_off` of a vector into a
/// managed buffer, downloads them to offset `dst_off` of another, and
/// checks every byte and the guard bytes around the destination.
fn round_trip(ctx: &Context, rng: &mut Rng, len: usize, src_off: usize, dst_off: usize) {
    let seed = rng.0;
    let mut src = vec![0u8; len + src_off + 3];
    rng.fill(&mut src);
    let mut dev = ctx.alloc_unified::<u8>(len).unwrap();
    let mut dst = vec![0x5Au8; len + dst_off + 11];
    let stream = ctx.stream().unwrap();
    ctx.scope(|s| s.copy_to_device(&stream, &src[src_off..src_off + len], &mut dev))
        .unwrap();
    ctx.scope(|s| s.copy_to_host(&stream, &dev, &mut dst[dst_off..dst_off + len]))
        .unwrap();
    let what = format!("len {len}, offsets {src_off}/{dst_off}, seed {seed}");
    if dst[dst_off..dst_off + len] != src[src_off..src_off + len] {
        let i = (0..len)
            .find(|&i| dst[dst_off + i] != src[src_off + i])
            .unwrap();
        panic!("{what}: first wrong byte at {i}");
    }
    assert!(dst[..dst_off].iter().all(|&b| b == 0x5A), "{what}: before");
    assert!(
        dst[dst_off + len..].iter().all(|&b| b == 0x5A),
        "{what}: after"
    );
}

const POLICIES: [PageablePolicy; 5] = [
    PageablePolicy::Stage,
    PageablePolicy::Register,
    PageablePolicy::RegisterUploads,
    PageablePolicy::RegisterDownloads,
    PageablePolicy::Auto,
];

#[test]
fn registering_policies_are_set_only_through_the_unsafe_setter() {
    let _serial = serial();
    for p in [
        PageablePolicy::Register,
        PageablePolicy::RegisterUploads,
        PageablePolicy::RegisterDownloads,
    ] {
        let before = staged::pageable_policy();
        assert!(staged::set_pageable_policy(p).is_err(), "{p:?}");
        assert_eq!(staged::pageable_policy(), before, "{p:?}: unchanged");
    }
    staged::set_pageable_policy(PageablePolicy::Stage).expect("stage");
    assert_eq!(staged::pageable_policy(), PageablePolicy::Stage);
    staged::set_pageable_policy(PageablePolicy::Auto).expect("auto");
}

#[test]
fn round_trips_are_byte_exact_under_every_policy() {
    let _serial = serial();
    let lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    let mut rng = Rng::new();
    for policy in POLICIES {
        set_policy(policy);
        let before = reg_counts(&lib);
        for _ in 0..3 {
            let len = STAGE_MIN + rng.below(40 << 20) as usize;
            let (so, dof) = (rng.below(4099) as usize, rng.below(4099) as usize);
            round_trip(&ctx, &mut rng, len, so, dof);
        }
        // Exact sizes and offsets of the edges: whole 64 KiB blocks, none
        // before or after.
        round_trip(&ctx, &mut rng, 3 * STAGE_MIN, 0, 0);
        round_trip(&ctx, &mut rng, STAGE_MIN + 1, 65_535, 1);
        let after = reg_counts(&lib);
        let made = after[0] - before[0];
        match policy {
            PageablePolicy::Stage | PageablePolicy::Auto => {
                assert_eq!(made, 0, "{policy:?}: one direction at a time stages")
            }
            // Each trip registers one side (uploads or downloads) or both.
            PageablePolicy::Register => assert_eq!(made, 10, "{policy:?}"),
            _ => assert_eq!(made, 5, "{policy:?}"),
        }
        assert_eq!(after[2] - before[2], made, "{policy:?}: every one undone");
        assert_eq!(after[3], 0, "{policy:?}: none left registered");
    }
    set_policy(PageablePolicy::Auto);
    assert_eq!(ctx.stats().kind(cudakit::AllocKind::Leaked).live_count, 0);
}

#[test]
fn both_directions_at_once_from_two_threads() {
    let _serial = serial();
    let lib = open();
    let ctx = Context::new(0).expect("context on the stand-in");
    for policy in [PageablePolicy::Auto, PageablePolicy::Register] {
        set_policy(policy);
        let before = reg_counts(&lib);
        let len = 3 * STAGE_MIN + 12_345;
        let mut rng = Rng::new();
        let mut up = vec![0u8; len + 7];
        let mut down_src = vec![0u8; len];
        rng.fill(&mut up);
        rng.fill(&mut down_src);
        let mut dev_up = ctx.alloc_unified::<u8>(len).unwrap();
        let mut dev_down = ctx.alloc_unified::<u8>(len).unwrap();
        dev_down.as_mut_slice().unwrap().copy_from_slice(&down_src);
        let mut down = vec![0u8; len + 5];
        let (s1, s2) = (ctx.stream().unwrap(), ctx.stream().unwrap());
        for round in 0..6 {
            std::thread::scope(|t| {
                let a = t.spawn(|| ctx.scope(|s| s.copy_to_device(&s1, &up[7..], &mut dev_up)));
                let b = t.spawn(|| ctx.scope(|s| s.copy_to_host(&s2, &dev_down, &mut down[5..])));
                a.join().unwrap().unwrap();
                b.join().unwrap().unwrap();
            });
            assert!(
                dev_up.as_slice().unwrap()[..] == up[7..],
                "{policy:?} round {round}: upload, seed {}",
                rng.0
            );
            assert!(
                down[5..] == down_src[..],
                "{policy:?} round {round}: download, seed {}",
                rng.0
            );
        }
        let after = reg_counts(&lib);
        assert_eq!(after[3], 0, "{policy:?}: none left registered");
        assert_eq!(after[0] - before[0], after[2] - before[2]);
        if policy == PageablePolicy::Register {
            assert_eq!(after[0] - before[0], 12, "every transfer registered");
        }
    }
    set_policy(PageablePolicy::Auto);
}

#[test]
fn a_refused_registration_falls_back_to_staging() {
    let _serial = serial();
    let lib = open();
    // SAFETY: exported by the stand-in with this signature.
    let fail = unsafe { lib.get::<unsafe extern "C" fn(i32)>(b"stub_fail_next_register\0") }
        .expect("stub_fail_next_register");
    let ctx = Context::new(0).expect("context on the stand-in");
    let mut rng = Rng::new();
    set_policy(PageablePolicy::Register);
    // Injected: the memory cannot be pinned (CUDA_ERROR_INVALID_VALUE),
    // and someone else's registration (712). Each time the upload's
    // refusal is followed by its read-only-less retry for 1, not for 712.
    for code in [1, 712] {
        let before = reg_counts(&lib);
        // SAFETY: a plain value.
        unsafe { fail(code) };
        round_trip(&ctx, &mut rng, STAGE_MIN + 999, 3, 5);
        let after = reg_counts(&lib);
        assert!(after[1] > before[1], "code {code}: refused");
        assert_eq!(after[3], 0);
    }
    // A range registered by someone else first: cudakit's registration
    // overlaps it (712) and stages; the other registration stays.
    let cu = cudakit::sys::driver().unwrap();
    let len = 2 * STAGE_MIN;
    let mut src = vec![0u8; len];
    rng.fill(&mut src);
    let mut dev = ctx.alloc_unified::<u8>(len).unwrap();
    let stream = ctx.stream().unwrap();
    let block = (src.as_ptr() as usize).div_ceil(1 << 16) * (1 << 16) + (1 << 20);
    // SAFETY: 1 MiB inside `src`, which outlives the registration.
    let rc = unsafe { (cu.cuMemHostRegister)(block as *mut _, 1 << 20, 0) };
    assert_eq!(rc, cudakit::sys::CUresult::CUDA_SUCCESS);
    let before = reg_counts(&lib);
    ctx.scope(|s| s.copy_to_device(&stream, &src, &mut dev))
        .unwrap();
    assert!(dev.as_slice().unwrap()[..] == src[..]);
    let after = reg_counts(&lib);
    assert_eq!(after[1] - before[1], 1, "refused with 712 once");
    assert_eq!(after[3], 1, "the other registration stays");
    // SAFETY: registered above.
    let rc = unsafe { (cu.cuMemHostUnregister)(block as *mut _) };
    assert_eq!(rc, cudakit::sys::CUresult::CUDA_SUCCESS);
    set_policy(PageablePolicy::Auto);
    assert_eq!(ctx.stats().kind(cudakit::AllocKind::Leaked).live_count, 0);
}

#[test]
fn a_failed_wait_in_the_middle_unregisters_only_after_the_retried_wait() {
    let _serial = serial();
    let lib = open();
    // SAFETY: exported by the stand-in with this signature.
    let fail = unsafe { lib.get::<unsafe extern "C" fn(i32)>(b"stub_fail_next_sync\0") }
        .expect("stub_fail_next_sync");
    let ctx = Context::new(0).expect("context on the stand-in");
    let mut rng = Rng::new();
    set_policy(PageablePolicy::Register);
    let len = STAGE_MIN + 4321;
    let mut src = vec![0u8; len];
    rng.fill(&mut src);
    let mut dev = ctx.alloc_unified::<u8>(len).unwrap();
    let stream = ctx.stream().unwrap();
    let before = reg_counts(&lib);
    // SAFETY: a plain value (CUDA_ERROR_INVALID_VALUE: not sticky).
    unsafe { fail(1) };
    let r = ctx.scope(|s| s.copy_to_device(&stream, &src, &mut dev));
    assert!(r.is_err(), "the failed wait is reported: {r:?}");
    let after = reg_counts(&lib);
    assert_eq!(after[0] - before[0], 1, "registered");
    assert_eq!(after[2] - before[2], 1, "undone after the retried wait");
    assert_eq!(after[3], 0);
    assert!(ctx.poisoned().is_none());
    // The context goes on: the next transfer is exact.
    round_trip(&ctx, &mut rng, len, 1, 2);
    set_policy(PageablePolicy::Auto);
    assert_eq!(ctx.stats().kind(cudakit::AllocKind::Leaked).live_count, 0);
}

#[test]
fn staging_is_released_only_where_it_may_be_and_only_when_waited_for() {
    let _serial = serial();
    let lib = open();
    set_policy(PageablePolicy::Stage);
    let ctx = Context::new(0).expect("context on the stand-in");
    let mut rng = Rng::new();
    round_trip(&ctx, &mut rng, STAGE_MIN + 1, 1, 2);
    let live = |kind| ctx.stats().kind(kind).live_count;
    let chunks = live(AllocKind::Staging);
    assert!(chunks > 0, "the staged transfer made its chunks");

    // On a thread that is capturing, a release would wait (and so
    // invalidate the capture): it does nothing.
    let stream = ctx.stream().expect("stream");
    ctx.scope(|s| {
        s.capture(&stream, || {
            ctx.release_staging();
            Ok(())
        })
        .map(drop)
    })
    .expect("the capture is still valid");
    assert_eq!(
        live(AllocKind::Staging),
        chunks,
        "released during a capture"
    );

    // A wait that fails (not sticky) may leave a DMA on a chunk: the
    // chunks are kept, recorded as leaked, never recorded as freed.
    let leaked = live(AllocKind::Leaked);
    let fail = |code: i32| stub::call::<i32, ()>(&lib, b"stub_fail_next_sync\0", code);
    fail(1); // CUDA_ERROR_INVALID_VALUE
    ctx.release_staging();
    assert_eq!(live(AllocKind::Staging), 0);
    // The failed wait is one lane's (each direction has its own lane and
    // streams): that lane's chunks are kept, the other's are freed.
    let kept = live(AllocKind::Leaked) - leaked;
    assert!(
        kept > 0 && kept < chunks,
        "chunks a failed wait left in use were recorded as freed ({kept} of {chunks} kept)"
    );
    // A later transfer makes new chunks and still round-trips.
    round_trip(&ctx, &mut rng, STAGE_MIN + 3, 0, 5);
    fail(0); // cancels any injection left
    ctx.release_staging();
    assert_eq!(live(AllocKind::Staging), 0, "a clean release frees all");
}

/// `Context::with_registered` registers the slice once for any number of
/// transfers both ways, lists it as cudakit's while it lasts (so that no
/// other copy takes it for page-locked memory), and undoes it before it
/// returns; also when the closure panics.
#[test]
fn a_registered_scope_registers_once_and_undoes_it_when_it_ends() {
    let _serial = serial();
    let lib = open();
    set_policy(PageablePolicy::Stage);
    let ctx = Context::new(0).expect("context on the stand-in");
    let len = 3 * STAGE_MIN + 4321;
    let mut host = vec![0u8; len];
    Rng::new().fill(&mut host);
    let dev = ctx.alloc::<u8>(len).unwrap();
    let before = reg_counts(&lib);
    let out = ctx
        .with_registered(&mut host, |h| -> cudakit::Result<usize> {
            assert!(h.is_registered(), "a large slice is registered");
            assert_eq!(reg_counts(&lib)[3], before[3] + 1, "live during the scope");
            let shown = format!("{h:?}");
            assert!(
                shown.contains(&format!("len: {len}")) && shown.len() < 200,
                "Debug shows the length, not the elements: {shown}"
            );
            for _ in 0..4 {
                h.upload_to(&dev)?;
                h.download_from(&dev)?;
            }
            Ok(h.len())
        })
        .unwrap()
        .unwrap();
    assert_eq!(out, len);
    let after = reg_counts(&lib);
    assert_eq!(
        after[0] - before[0],
        1,
        "one registration for eight transfers"
    );
    assert_eq!(after[2] - before[2], 1, "undone when the scope ended");
    assert_eq!(after[3], 0);

    // A panic in the closure: the registration is undone all the same.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _ = ctx.with_registered(&mut host, |h| {
            h.upload_to(&dev).unwrap();
            panic!("inside the scope");
        });
    }));
    assert!(r.is_err());
    let after = reg_counts(&lib);
    assert_eq!(after[0] - before[0], 2);
    assert_eq!(after[2] - before[2], 2, "undone after the panic");
    assert_eq!(after[3], 0);
    assert!(ctx.poisoned().is_none());
    set_policy(PageablePolicy::Auto);
}

/// A refused registration leaves the scope's transfers staged; a length
/// mismatch is a typed error that queues nothing; a failed wait
/// (not sticky) is reported and the registration is still undone at the
/// end (the retried wait saw the DMA end); small slices are not
/// registered at all.
#[test]
fn a_registered_scope_refused_mismatched_or_failed_is_a_clear_error() {
    let _serial = serial();
    let lib = open();
    set_policy(PageablePolicy::Stage);
    let ctx = Context::new(0).expect("context on the stand-in");
    let len = STAGE_MIN + 77;
    let mut host = vec![7u8; len];
    let dev = ctx.alloc::<u8>(len).unwrap();
    let before = reg_counts(&lib);
    stub::call::<i32, ()>(&lib, b"stub_fail_next_register\0", 2); // out of memory
    ctx.with_registered(&mut host, |h| {
        assert!(!h.is_registered(), "refused: staged instead");
        h.upload_to(&dev).unwrap();
        h.download_from(&dev).unwrap();
    })
    .unwrap();
    let after = reg_counts(&lib);
    assert_eq!(after[1] - before[1], 1, "refused once");
    assert_eq!(after[3], 0);

    let short = ctx.alloc::<u8>(len - 1).unwrap();
    ctx.with_registered(&mut host, |h| {
        assert!(h.is_registered());
        assert!(matches!(
            h.upload_to(&short),
            Err(cudakit::Error::LengthMismatch { .. })
        ));
        assert!(matches!(
            h.download_from(&short),
            Err(cudakit::Error::LengthMismatch { .. })
        ));
        // A failed wait (CUDA_ERROR_INVALID_VALUE: not sticky) is reported.
        stub::call::<i32, ()>(&lib, b"stub_fail_next_sync\0", 1);
        assert!(h.upload_to(&dev).is_err(), "the failed wait is reported");
        stub::call::<i32, ()>(&lib, b"stub_fail_next_sync\0", 0);
        h.download_from(&dev).unwrap();
    })
    .unwrap();
    let after = reg_counts(&lib);
    assert_eq!(after[2] - before[2], 1, "undone at the end");
    assert_eq!(after[3], 0);
    assert!(ctx.poisoned().is_none());

    // Under 64 KiB there is no whole block to register: nothing is
    // registered, the transfers are the ordinary ones.
    let mut small = vec![1u32; 16_000];
    let dsmall = ctx.alloc::<u32>(small.len()).unwrap();
    let counts = reg_counts(&lib);
    ctx.with_registered(&mut small, |h| {
        assert!(!h.is_registered());
        h.upload_to(&dsmall).unwrap();
    })
    .unwrap();
    assert_eq!(reg_counts(&lib)[..3], counts[..3], "no registration tried");
    assert!(matches!(
        ctx.with_registered(&mut Vec::<u8>::new(), |_| ()),
        Err(cudakit::Error::ZeroLength { .. })
    ));

    // On a capturing thread the driver would refuse the registration and
    // invalidate the capture: refused before it, the closure not run, and
    // the capture reports what broke its rule.
    let stream = ctx.stream().unwrap();
    let counts = reg_counts(&lib);
    let mut ran = false;
    let captured = ctx.scope(|s| {
        s.capture(&stream, || {
            let r = ctx.with_registered(&mut host, |_| ran = true);
            assert!(r.is_err(), "refused during a capture: {r:?}");
            Ok(())
        })
        .map(drop)
    });
    assert!(!ran, "the closure did not run");
    let msg = format!("{captured:?}");
    assert!(
        captured.is_err() && msg.contains("with_registered"),
        "the capture names it: {msg}"
    );
    assert_eq!(reg_counts(&lib)[..3], counts[..3], "no registration tried");
    assert!(ctx.poisoned().is_none());
    set_policy(PageablePolicy::Auto);
}
