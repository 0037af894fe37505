//! Virtual buffers (`cudakit::VirtualBuffer`) on the test-only stand-in
//! libcuda, which checks the driver's rules for reservations, physical
//! allocations, mappings and access (every size and address a multiple of
//! the granularity, maps only over unmapped addresses inside a
//! reservation, unmaps of whole mappings, releases of unmapped handles,
//! address frees with nothing mapped) and counts every refusal:
//!
//! - growth maps one allocation per step, in place (same address), each
//!   recorded in the arena as `AllocKind::Virtual` with its caller;
//! - shrinking unmaps and releases whole allocations, last first;
//! - growing past the reservation, shrinking below zero and an unaligned
//!   step are typed errors, and change nothing;
//! - a failed `cuMemCreate` changes nothing, and so does a growth or a
//!   shrink refused on a capturing thread;
//! - the buffer is a kernel argument and a copy operand like any buffer;
//! - access granted to a second device covers later growth too;
//! - four threads grow and shrink their own buffers at once;
//! - drop leaves nothing reserved, mapped or allocated, in the stand-in or
//!   in the arena, and the stand-in refused nothing.
//!
//! Process-global (`CUDAKIT_LIBCUDA`), so in its own test binary and one
//! test function.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::{params, AllocKind, Context, Error, LaunchConfig, VirtualMemoryError};

const MIB: usize = 1 << 20;

const PTX: &str = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry sum(.param .u64 p0, .param .u32 p1)
{
    ret;
}
";

struct Stand {
    lib: libloading::Library,
}

impl Stand {
    /// Live reservations, mappings, handles; creates, releases, maps,
    /// unmaps, access settings, address frees, refusals.
    fn vmm(&self) -> [u64; 10] {
        // SAFETY: the stand-in exports this function with this signature.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(*mut u64)>(b"stub_vmm_counts\0")
        }
        .expect("stub_vmm_counts");
        let mut out = [0u64; 10];
        // SAFETY: `out` has 10 slots.
        unsafe { f(out.as_mut_ptr()) };
        out
    }

    fn fail_next_create(&self) {
        // SAFETY: as above.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn()>(b"stub_fail_next_mem_create\0")
        }
        .expect("stub_fail_next_mem_create");
        // SAFETY: no arguments.
        unsafe { f() };
    }

    fn set_params(&self, layout: &[(usize, usize)]) {
        let flat: Vec<usize> = layout.iter().flat_map(|&(o, s)| [o, s]).collect();
        // SAFETY: as above.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(*const usize, usize)>(b"stub_set_params\0")
        }
        .expect("stub_set_params");
        // SAFETY: `flat` holds 2 * layout.len() usizes.
        unsafe { f(flat.as_ptr(), layout.len()) };
    }

    fn last_launch(&self) -> Vec<u8> {
        // SAFETY: as above.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(*mut u8, usize) -> usize>(b"stub_last_launch\0")
        }
        .expect("stub_last_launch");
        let mut out = vec![0u8; 256];
        // SAFETY: `out` has 256 writable bytes.
        let n = unsafe { f(out.as_mut_ptr(), out.len()) };
        out.truncate(n.min(256));
        out
    }
}

fn virtual_live(ctx: &Context) -> (u64, u64) {
    let k = ctx.stats().kind(AllocKind::Virtual);
    (k.live_count, k.live_bytes)
}

#[test]
fn virtual_buffers_grow_shrink_and_free_in_place() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let stand = Stand { lib };
    let ctx = Context::new(0).expect("context on the stand-in");

    let granularity = ctx.virtual_granularity().expect("granularity");
    assert_eq!(granularity, 2 * MIB, "read from the driver");

    // 1000 floats now, room for 1 Gi of them (4 GiB).
    let mut v = ctx.alloc_virtual::<f32>(1000, 1 << 30).expect("virtual");
    let base = v.device_ptr();
    assert_eq!(v.len(), 1000);
    assert_eq!(v.reserved_bytes(), 4 << 30);
    assert_eq!(v.capacity(), 1 << 30);
    assert_eq!((v.mapped_bytes(), v.allocations()), (2 * MIB, 1));
    assert_eq!(virtual_live(&ctx), (1, 2 * MIB as u64));
    let c = stand.vmm();
    assert_eq!((c[0], c[1], c[2], c[7]), (1, 1, 1, 1), "{c:?}");

    // Growth: one new allocation covering the difference, in place.
    let grow_line = line!() + 1;
    v.resize(3 * MIB / 4).expect("grow to 3 MiB");
    assert_eq!(v.device_ptr(), base, "grown in place");
    assert_eq!((v.mapped_bytes(), v.allocations()), (4 * MIB, 2));
    assert_eq!(virtual_live(&ctx), (2, 4 * MIB as u64));
    let newest = ctx
        .arena()
        .live()
        .into_iter()
        .filter(|r| r.kind == AllocKind::Virtual)
        .max_by_key(|r| r.id)
        .expect("a virtual record");
    assert_eq!(newest.location.line(), grow_line, "the caller that grew it");
    assert!(newest.location.file().ends_with("stub_virtual.rs"));
    // Growth inside the mapped part maps nothing.
    v.grow_by(1000).expect("grow inside the mapping");
    assert_eq!(v.allocations(), 2);

    // Bad input: typed, and nothing changes.
    let before = (v.len(), v.mapped_bytes(), stand.vmm());
    match v.resize((1 << 30) + 1) {
        Err(Error::VirtualMemory(VirtualMemoryError::PastReservation {
            requested,
            reserved,
        })) => assert_eq!((requested, reserved), ((4 << 30) + 4, 4 << 30)),
        other => panic!("expected PastReservation, got {other:?}"),
    }
    let len = v.len();
    assert!(matches!(
        v.shrink_by(len + 1),
        Err(Error::VirtualMemory(VirtualMemoryError::BelowZero { .. }))
    ));
    assert!(matches!(v.shrink_by(len), Err(Error::ZeroLength { .. })));
    assert!(matches!(
        ctx.alloc_virtual::<f32>(10, 5),
        Err(Error::VirtualMemory(
            VirtualMemoryError::PastReservation { .. }
        ))
    ));
    assert!(matches!(
        ctx.alloc_virtual_with_step::<f32>(10, 1 << 20, 3 * MIB),
        Err(Error::VirtualMemory(VirtualMemoryError::Unaligned {
            granularity: g,
            ..
        })) if g == 2 * MIB
    ));
    assert!(matches!(
        ctx.alloc_virtual::<f32>(0, 10),
        Err(Error::ZeroLength { .. })
    ));
    // A refused cuMemCreate changes nothing.
    stand.fail_next_create();
    let err = v.resize(9 * MIB / 4).unwrap_err();
    assert!(err.driver_error().is_some(), "{err:?}");
    assert_eq!((v.len(), v.mapped_bytes(), stand.vmm()), before);
    assert_eq!(virtual_live(&ctx), (2, 4 * MIB as u64));

    // Kernel argument and copies, like any buffer.
    let module = ctx.load_module_image(PTX.as_bytes()).expect("module");
    let sum = module.function("sum").expect("sum");
    stand.set_params(&[(0, 8), (8, 4)]);
    let stream = ctx.stream().expect("stream");
    let n = v.len() as u32;
    // SAFETY: the stand-in runs nothing.
    ctx.scope(|s| unsafe { s.launch(&stream, &sum, &LaunchConfig::new(1, 32), &params![&v, n]) })
        .expect("launch");
    let record = stand.last_launch();
    assert_eq!(&record[28..36], &base.as_raw().to_ne_bytes());
    assert_eq!(&record[36..40], &n.to_ne_bytes());
    let host: Vec<f32> = (0..v.len()).map(|i| i as f32).collect();
    v.copy_from_host(&host).expect("htod");
    let d = ctx.alloc::<f32>(v.len()).expect("alloc");
    d.copy_from(&v).expect("dtod from the virtual buffer");
    v.copy_from(&d).expect("dtod into it");
    assert!(matches!(
        v.copy_from_host(&host[1..]),
        Err(Error::LengthMismatch { .. })
    ));
    drop(d);

    // Refused on a capturing thread (the driver would refuse and
    // invalidate the capture), before anything changes.
    let before = (v.len(), v.mapped_bytes(), stand.vmm());
    let (bigger, smaller) = (v.len() * 4, 10);
    let outcome = ctx.scope(|s| {
        s.capture(&stream, || {
            for (len, call) in [(bigger, "cuMemCreate"), (smaller, "cuMemUnmap")] {
                match v.resize(len) {
                    Err(Error::IllegalDuringCapture { operation, .. }) => {
                        assert_eq!(operation, call)
                    }
                    other => panic!("expected IllegalDuringCapture, got {other:?}"),
                }
            }
            Ok(())
        })
        .map(drop)
    });
    assert!(
        matches!(outcome, Err(Error::IllegalDuringCapture { .. })),
        "the capture ends with the refusal: {outcome:?}"
    );
    assert_eq!((v.len(), v.mapped_bytes(), stand.vmm()), before);

    // Access for a second device: over the mapped range now, and for
    // every later growth.
    // SAFETY: the stand-in exports these functions with these signatures.
    let (devices, last_access) = unsafe {
        (
            stand
                .lib
                .get::<unsafe extern "C" fn(i32)>(b"stub_set_device_count\0")
                .expect("stub_set_device_count"),
            stand
                .lib
                .get::<unsafe extern "C" fn(*mut i32, usize) -> usize>(b"stub_last_access\0")
                .expect("stub_last_access"),
        )
    };
    let access = || {
        let mut out = [0i32; 4];
        // SAFETY: `out` has 4 slots.
        let n = unsafe { last_access(out.as_mut_ptr(), out.len()) };
        out[..n.min(4)].to_vec()
    };
    assert_eq!(access(), vec![0], "the owner alone");
    // SAFETY: a plain integer argument.
    unsafe { devices(2) };
    let ctx1 = Context::new(1).expect("device 1");
    v.grant_access(&ctx1).expect("grant");
    v.grant_access(&ctx1).expect("idempotent");
    v.grant_access(&ctx).expect("the owner needs no grant");
    assert_eq!(v.peers(), &[1]);
    assert_eq!(access(), vec![0, 1], "owner and peer");
    let len = v.len();
    v.resize(len + 3 * MIB).expect("grow with a peer");
    assert_eq!(access(), vec![0, 1], "the growth's access covers the peer");
    v.resize(len).expect("back");

    // Shrinking releases whole allocations, last first.
    v.resize(10).expect("shrink");
    assert_eq!(v.device_ptr(), base);
    assert_eq!(
        (v.len(), v.mapped_bytes(), v.allocations()),
        (10, 2 * MIB, 1)
    );
    assert_eq!(virtual_live(&ctx), (1, 2 * MIB as u64));
    let c = stand.vmm();
    assert_eq!((c[1], c[2], c[4], c[6]), (1, 1, 2, 2), "{c:?}");

    // A larger step: fewer, larger allocations.
    let mut w = ctx
        .alloc_virtual_with_step::<u8>(1, 64 * MIB, 8 * MIB)
        .expect("stepped");
    assert_eq!(w.mapped_bytes(), 8 * MIB);
    w.resize(8 * MIB + 1).expect("grow one step");
    assert_eq!((w.mapped_bytes(), w.allocations()), (16 * MIB, 2));
    w.resize(64 * MIB).expect("grow to the reservation");
    assert_eq!(w.mapped_bytes(), 64 * MIB);
    drop(w);

    // Four threads, each its own buffer.
    std::thread::scope(|t| {
        for k in 0..4usize {
            let ctx = &ctx;
            t.spawn(move || {
                let mut b = ctx.alloc_virtual::<u32>(1, 64 * MIB).expect("virtual");
                for i in 1..=20usize {
                    b.resize((i * (k + 1)) % 37 * MIB + 1).expect("resize");
                }
            });
        }
    });

    drop(v);
    let c = stand.vmm();
    assert_eq!((c[0], c[1], c[2]), (0, 0, 0), "nothing left: {c:?}");
    assert_eq!(c[9], 0, "the stand-in refused nothing: {c:?}");
    assert_eq!(c[3], c[4], "every allocation released: {c:?}");
    assert_eq!(virtual_live(&ctx), (0, 0));
    assert_eq!(ctx.stats().kind(AllocKind::Leaked).live_count, 0);
}
