//! Hardware tests of the safe core's memory: every buffer kind and copy
//! direction, sync and on streams, with fresh random data, poisoned
//! destinations, and the arena back to zero after each test.

use cudakit::{AllocKind, Bf16, Context, DeviceCopy, Error, F16};
use cudakit_suite::rng::Rng;

fn ctx() -> Context {
    Context::new(0).expect("device 0")
}

/// Asserts that nothing of `ctx` is live any more.
fn assert_no_leaks(ctx: &Context) {
    let report = ctx.leak_report();
    assert!(report.is_empty(), "leaked: {report}");
    // The staged pipeline's chunks are kept between transfers (Staging).
    ctx.release_staging();
    assert_eq!(ctx.stats().live_count(), 0);
}

#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
struct Particle {
    id: u8,
    _pad: [u8; 3],
    pos: [f32; 3],
    mass: f64,
}
// SAFETY: repr(C), plain numbers; every bit pattern is a valid value; the
// padding after `id` is an explicit field (1 + 3 + 12 + 8 = 24 = size).
unsafe impl DeviceCopy for Particle {}
const _: () = assert!(std::mem::size_of::<Particle>() == 24);

fn round_trip<T: DeviceCopy + PartialEq + std::fmt::Debug>(ctx: &Context, data: &[T], poison: T) {
    let dev = ctx.upload(data).unwrap();
    let mut back = vec![poison; data.len()];
    dev.copy_to_host(&mut back).unwrap();
    assert_eq!(back, data);
    assert_eq!(dev.to_vec().unwrap(), data);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn device_buffers_round_trip_every_element_type() {
    let ctx = ctx();
    let mut rng = Rng::new();
    let n = 4099; // not a multiple of anything convenient
    round_trip(&ctx, &rng.vec_f32(n), f32::NAN.to_bits() as f32);
    round_trip(&ctx, &rng.vec_f64(n), -1e300);
    round_trip(
        &ctx,
        &(0..n).map(|_| rng.next_u64() as u8).collect::<Vec<_>>(),
        0xAA,
    );
    round_trip(
        &ctx,
        &(0..n).map(|_| rng.next_u64() as i64).collect::<Vec<_>>(),
        i64::MIN,
    );
    round_trip(
        &ctx,
        &(0..n)
            .map(|_| F16::from_f32(rng.f32_sym()))
            .collect::<Vec<_>>(),
        F16(0x7e00),
    );
    round_trip(
        &ctx,
        &(0..n)
            .map(|_| Bf16::from_f32(rng.f32_sym()))
            .collect::<Vec<_>>(),
        Bf16(0x7fc0),
    );
    round_trip(
        &ctx,
        &(0..n)
            .map(|_| [rng.f32_sym(), rng.f32_sym(), rng.f32_sym()])
            .collect::<Vec<_>>(),
        [f32::MAX; 3],
    );
    let particles: Vec<Particle> = (0..n)
        .map(|i| Particle {
            id: i as u8,
            _pad: [i as u8; 3],
            pos: [rng.f32_sym(), rng.f32_sym(), rng.f32_sym()],
            mass: rng.f64_sym(),
        })
        .collect();
    let poison = Particle {
        id: 0xFF,
        _pad: [0xFF; 3],
        pos: [f32::MAX; 3],
        mass: f64::MAX,
    };
    round_trip(&ctx, &particles, poison);
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn views_copy_sub_ranges_and_device_to_device() {
    let ctx = ctx();
    let mut rng = Rng::new();
    let data = rng.vec_f32(1000);
    let a = ctx.upload(&data).unwrap();
    let b = ctx.alloc::<f32>(1000).unwrap();
    b.fill(-7.0).unwrap();
    // b[100..300] = a[500..700]
    b.view(100..300)
        .unwrap()
        .copy_from(a.view(500..700).unwrap())
        .unwrap();
    let got = b.to_vec().unwrap();
    for (i, &g) in got.iter().enumerate() {
        let want = if (100..300).contains(&i) {
            data[i + 400]
        } else {
            -7.0
        };
        assert_eq!(g, want, "element {i}");
    }
    // Host into a view, and a view out.
    let patch = rng.vec_f32(10);
    a.view(990..).unwrap().copy_from_host(&patch).unwrap();
    let mut tail = vec![f32::NAN; 10];
    a.view(990..1000).unwrap().copy_to_host(&mut tail).unwrap();
    assert_eq!(tail, patch);
    // Whole-buffer device copy.
    let c = ctx.alloc::<f32>(1000).unwrap();
    c.copy_from(&a).unwrap();
    assert_eq!(c.to_vec().unwrap(), a.to_vec().unwrap());
    drop((a, b, c));
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn fill_works_for_every_element_size() {
    let ctx = ctx();
    let n = 777;
    let b8 = ctx.alloc::<u8>(n).unwrap();
    b8.fill(0x5A).unwrap();
    assert!(b8.to_vec().unwrap().iter().all(|&x| x == 0x5A));
    let b16 = ctx.alloc::<F16>(n).unwrap();
    b16.fill(F16::from_f32(1.5)).unwrap();
    assert!(b16
        .to_vec()
        .unwrap()
        .iter()
        .all(|&x| x == F16::from_f32(1.5)));
    let b32 = ctx.alloc::<f32>(n).unwrap();
    b32.fill(-3.25).unwrap();
    assert!(b32.to_vec().unwrap().iter().all(|&x| x == -3.25));
    let b64 = ctx.alloc::<f64>(n).unwrap();
    b64.fill(std::f64::consts::PI).unwrap();
    assert!(b64
        .to_vec()
        .unwrap()
        .iter()
        .all(|&x| x == std::f64::consts::PI));
    let z = ctx.alloc_zeroed::<u32>(n).unwrap();
    assert!(z.to_vec().unwrap().iter().all(|&x| x == 0));
    drop((b8, b16, b32, b64, z));
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn pinned_buffers_copy_asynchronously_on_streams() {
    let ctx = ctx();
    let mut rng = Rng::new();
    let n = 1 << 20;
    let s1 = ctx.stream().unwrap();
    let s2 = ctx.stream().unwrap();
    let mut src = ctx.alloc_pinned::<f32>(n).unwrap();
    src.copy_from_slice(&rng.vec_f32(n));
    let mut wc = ctx.alloc_pinned_write_combined::<f32>(n).unwrap();
    assert!(wc.is_write_combined());
    wc.copy_from_slice(&rng.vec_f32(n));
    let mut dst = ctx.alloc_pinned::<f32>(n).unwrap();
    dst.fill(f32::NAN);
    let mut dst2 = ctx.alloc_pinned::<f32>(n).unwrap();
    dst2.fill(f32::NAN);
    let d1 = ctx.alloc::<f32>(n).unwrap();
    let d2 = ctx.alloc::<f32>(n).unwrap();
    let d3 = ctx.alloc::<f32>(n).unwrap();
    ctx.scope(|s| {
        s.copy_to_device(&s1, &src, &d1)?;
        s.copy(&s1, &d1, &d2)?;
        s.copy_to_host(&s1, &d2, &mut dst)?;
        s.copy_to_device(&s2, &wc, &d3)?;
        s.copy_to_host(&s2, &d3, &mut dst2)?;
        Ok(())
    })
    .unwrap();
    assert_eq!(&dst[..], &src[..]);
    assert_eq!(&dst2[..], &wc[..]);
    let m = ctx.metrics();
    assert!(m.htod.bytes >= 2 * 4 * n as u64);
    assert!(m.dtoh.bytes >= 2 * 4 * n as u64);
    drop((src, wc, dst, dst2, d1, d2, d3));
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn unified_buffers_are_read_on_the_host_after_device_work() {
    let ctx = ctx();
    let mut rng = Rng::new();
    let n = 65_537;
    let stream = ctx.stream().unwrap();
    let mut u = ctx.alloc_unified::<f64>(n).unwrap();
    let data = rng.vec_f64(n);
    u.as_mut_slice().unwrap().copy_from_slice(&data);
    u.prefetch_to_device().unwrap();
    u.advise(
        cudakit::sys::CUmem_advise::CU_MEM_ADVISE_SET_READ_MOSTLY,
        false,
    )
    .unwrap();
    // Device reads the unified buffer.
    let d = ctx.alloc::<f64>(n).unwrap();
    d.copy_from(&u).unwrap();
    assert_eq!(d.to_vec().unwrap(), data);
    // Device writes it, on a stream, inside a scope; then the host reads.
    let fresh = rng.vec_f64(n);
    d.copy_from_host(&fresh).unwrap();
    u.as_mut_slice().unwrap().fill(f64::NAN);
    ctx.scope(|s| {
        s.prefetch(&stream, &u, true)?;
        Ok(())
    })
    .unwrap();
    ctx.scope(|s| s.copy(&stream, &d, &mut u)).unwrap();
    assert_eq!(u.as_slice().unwrap(), &fresh[..]);
    u.prefetch_to_host().unwrap();
    assert_eq!(u.as_slice().unwrap(), &fresh[..]);
    // And synchronous device-to-unified.
    let again = rng.vec_f64(n);
    d.copy_from_host(&again).unwrap();
    u.copy_from(&d).unwrap();
    assert_eq!(u.as_slice().unwrap(), &again[..]);
    drop((u, d));
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn sizes_are_refused_before_the_driver() {
    let ctx = ctx();
    assert!(matches!(ctx.alloc::<f32>(0), Err(Error::ZeroLength { .. })));
    assert!(matches!(
        ctx.alloc::<u64>(usize::MAX / 2),
        Err(Error::SizeOverflow { .. })
    ));
    assert!(matches!(
        ctx.alloc_pinned::<f32>(0),
        Err(Error::ZeroLength { .. })
    ));
    assert!(matches!(
        ctx.alloc_unified::<f32>(0),
        Err(Error::ZeroLength { .. })
    ));
    assert!(matches!(
        ctx.upload::<f32>(&[]),
        Err(Error::ZeroLength { .. })
    ));
    let b = ctx.alloc::<f32>(10).unwrap();
    assert!(matches!(
        b.copy_from_host(&[1.0; 9]),
        Err(Error::LengthMismatch { .. })
    ));
    assert!(matches!(b.view(5..11), Err(Error::OutOfBounds { .. })));
    // Out of memory is a typed driver error, and the context stays usable.
    let err = ctx.alloc::<u8>(1 << 50).unwrap_err();
    let Error::Driver(e) = err else {
        panic!("{err}")
    };
    assert_eq!(e.call, "cuMemAlloc_v2");
    assert_eq!(e.code, cudakit::DriverCode::OutOfMemory);
    assert!(ctx.poisoned().is_none());
    drop(b);
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn the_arena_records_kind_size_and_caller() {
    let ctx = ctx();
    let before = ctx.stats();
    let d = ctx.alloc::<f32>(100).unwrap();
    let p = ctx.alloc_pinned::<u16>(50).unwrap();
    let u = ctx.alloc_unified::<u8>(7).unwrap();
    let s = ctx.stats();
    assert_eq!(s.kind(AllocKind::Device).live_bytes, 400);
    assert_eq!(s.kind(AllocKind::Pinned).live_bytes, 100);
    assert_eq!(s.kind(AllocKind::Unified).live_bytes, 7);
    assert_eq!(s.live_count(), 3);
    let report = ctx.leak_report();
    assert!(report.contains(file!()), "{report}");
    assert!(report.contains("Device 400 bytes"), "{report}");
    drop((d, p, u));
    let after = ctx.stats();
    assert_eq!(after.live_count(), 0);
    assert_eq!(
        after.kind(AllocKind::Device).total_allocs,
        before.kind(AllocKind::Device).total_allocs + 1
    );
    assert!(after.kind(AllocKind::Device).peak_bytes >= 400);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn streams_and_events_order_and_time_work() {
    let ctx = ctx();
    let (least, greatest) = ctx.stream_priority_range().unwrap();
    assert!(greatest <= least);
    let hi = ctx.stream_with_priority(greatest).unwrap();
    let lo = ctx.stream_with_priority(least).unwrap();
    assert_eq!(hi.priority(), greatest);
    assert_eq!(lo.priority(), least);
    let mut rng = Rng::new();
    let n = 1 << 22;
    let data = rng.vec_f32(n);
    let a = ctx.upload(&data).unwrap();
    let b = ctx.alloc::<f32>(n).unwrap();
    let c = ctx.alloc::<f32>(n).unwrap();
    c.fill(f32::NAN).unwrap();
    let start = ctx.timing_event().unwrap();
    let done_on_hi = ctx.event().unwrap();
    let end = ctx.timing_event().unwrap();
    ctx.scope(|s| {
        start.record(&hi)?;
        s.copy(&hi, &a, &b)?;
        done_on_hi.record(&hi)?;
        lo.wait(&done_on_hi)?; // lo's copy reads what hi's wrote
        s.copy(&lo, &b, &c)?;
        end.record(&lo)?;
        Ok(())
    })
    .unwrap();
    assert!(hi.query().unwrap() && lo.query().unwrap());
    assert!(end.query().unwrap());
    let t = end.elapsed_since(&start).unwrap();
    assert!(t.as_nanos() > 0, "{t:?}");
    assert_eq!(c.to_vec().unwrap(), data);
    drop((a, b, c));
    assert_no_leaks(&ctx);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn devices_report_their_identity_and_limits() {
    let n = cudakit::Device::count().unwrap();
    assert!(n >= 1);
    let d = cudakit::Device::get(0).unwrap();
    assert!(!d.name().unwrap().is_empty());
    assert!(d.uuid_string().unwrap().starts_with("GPU-"));
    assert!(d.total_memory().unwrap() > 1 << 30);
    let l = d.limits().unwrap();
    assert!(l.max_threads_per_block >= 1024);
    assert!(l.max_shared_per_block_optin >= l.max_shared_per_block);
    assert!(matches!(
        cudakit::Device::get(n),
        Err(Error::NoSuchDevice { .. })
    ));
    let (major, _) = cudakit::driver_version().unwrap();
    assert!(major >= 12);
    // Two handles of one device share one context, arena and record.
    let a = Context::new(0).unwrap();
    let b = Context::new(0).unwrap();
    assert!(a.same(&b));
    let (free, total) = a.memory_info().unwrap();
    assert!(free <= total && total > 0);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn alloc_free_cycles_leave_nothing_behind() {
    let ctx = ctx();
    ctx.synchronize().unwrap();
    let (free_before, _) = ctx.memory_info().unwrap();
    for i in 0..10_000usize {
        let b = ctx.alloc::<u8>(1 + (i * 7919) % (1 << 20)).unwrap();
        if i % 1000 == 0 {
            b.fill(1).unwrap();
        }
    }
    for _ in 0..100 {
        let _p = ctx.alloc_pinned::<u8>(4096).unwrap();
        let _u = ctx.alloc_unified::<u8>(4096).unwrap();
    }
    assert_no_leaks(&ctx);
    let (free_after, _) = ctx.memory_info().unwrap();
    let diff = free_before.abs_diff(free_after);
    assert!(diff <= 64 << 20, "free memory moved by {diff} bytes");
    let s = ctx.stats().kind(AllocKind::Device);
    assert!(s.total_allocs >= 10_000 && s.total_allocs == s.total_frees);
}
