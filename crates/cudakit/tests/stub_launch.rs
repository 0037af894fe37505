//! The launch path end to end against the test-only stand-in libcuda, whose
//! `cuLaunchKernel` dereferences `kernelParams` exactly as the driver does
//! (one pointer per parameter, as many bytes as `cuFuncGetParamInfo`
//! reports) and records what it read. This checks the argument path byte for
//! byte on a machine without a GPU; the hardware suite remains the ground
//! truth.
//!
//! Process-global: `CUDAKIT_LIBCUDA` points the driver search at the
//! stand-in before the first driver call, so these tests live in their own
//! test binary and run in one test function.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use cudakit::{params, Context, DeviceCopy, Error, LaunchConfig};

#[repr(C)]
#[derive(Clone, Copy)]
struct S24 {
    a: i8,
    _p0: [u8; 7],
    b: f64,
    c: i16,
    _p1: [u8; 6],
}
// SAFETY: repr(C), numbers and explicit padding only.
unsafe impl DeviceCopy for S24 {}

struct Recorder {
    lib: libloading::Library,
}

impl Recorder {
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

    fn last_launch(&self) -> Vec<u8> {
        // SAFETY: as above.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn(*mut u8, usize) -> usize>(b"stub_last_launch\0")
        }
        .expect("stub_last_launch");
        let mut buf = vec![0u8; 4096];
        // SAFETY: `buf` has 4096 writable bytes.
        let n = unsafe { f(buf.as_mut_ptr(), buf.len()) };
        buf.truncate(n);
        buf
    }

    fn launches(&self) -> u64 {
        // SAFETY: as above.
        let f = unsafe {
            self.lib
                .get::<unsafe extern "C" fn() -> u64>(b"stub_launch_count\0")
        }
        .expect("stub_launch_count");
        // SAFETY: no arguments.
        unsafe { f() }
    }
}

fn header(grid: [u32; 3], block: [u32; 3], shared: u32) -> Vec<u8> {
    grid.iter()
        .chain(block.iter())
        .chain(std::iter::once(&shared))
        .flat_map(|v| v.to_le_bytes())
        .collect()
}

#[test]
fn the_driver_reads_every_argument_byte_for_byte() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let rec = Recorder { lib };

    let ctx = Context::new(0).expect("context on the stand-in");
    let module = ctx
        .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
        .expect("module");
    let buf = ctx.alloc::<f32>(100).expect("alloc");
    assert_eq!(
        buf.device_ptr().as_raw(),
        0xD000_0000,
        "the stand-in's first address"
    );
    let stream = ctx.stream().expect("stream");
    let s = S24 {
        a: -3,
        _p0: [0; 7],
        b: 6.5,
        c: 0x1234,
        _p1: [0; 6],
    };

    // The kernel's parameters as the stand-in's cuFuncGetParamInfo reports
    // them: (float*, int, S24) at offsets 0, 8, 16.
    rec.set_params(&[(0, 8), (8, 4), (16, 24)]);
    let f = module.function("k").expect("function");
    let cfg = LaunchConfig::new((3, 2), (32, 4)).shared(1024);
    let p = params![&buf, 7i32, s];
    // The audit table shows what is handed over.
    let table = p.describe();
    assert_eq!(table[0].bytes_hex, "000000d000000000");
    assert_eq!(table[1].bytes_hex, "07000000");
    // SAFETY: the stand-in runs nothing.
    ctx.scope(|sc| unsafe { sc.launch(&stream, &f, &cfg, &p) })
        .expect("launch");

    let mut want = header([3, 2, 1], [32, 4, 1], 1024);
    want.extend_from_slice(&0xD000_0000u64.to_le_bytes());
    want.extend_from_slice(&7i32.to_le_bytes());
    want.push(0xFD); // -3i8
    want.extend_from_slice(&[0; 7]);
    want.extend_from_slice(&6.5f64.to_le_bytes());
    want.extend_from_slice(&0x1234i16.to_le_bytes());
    want.extend_from_slice(&[0; 6]);
    assert_eq!(rec.last_launch(), want);
    assert_eq!(rec.launches(), 1);

    // 20 arguments: the list's storage moves to the heap; the driver still
    // reads every value where the array points.
    let layout: Vec<(usize, usize)> = (0..20).map(|i| (i * 8, 8)).collect();
    rec.set_params(&layout);
    let g = module.function("many").expect("function");
    let mut many = cudakit::ParamList::new();
    for i in 0..20u64 {
        many.push(i * 0x0101_0101);
    }
    assert!(many.is_spilled());
    // SAFETY: as above.
    ctx.scope(|sc| unsafe { sc.launch(&stream, &g, &LaunchConfig::new(1, 1), &many) })
        .expect("launch");
    let mut want = header([1, 1, 1], [1, 1, 1], 0);
    for i in 0..20u64 {
        want.extend_from_slice(&(i * 0x0101_0101).to_le_bytes());
    }
    assert_eq!(rec.last_launch(), want);
    drop(many);

    // Wrong count and wrong size never reach the driver.
    rec.set_params(&[(0, 8), (8, 4)]);
    let h = module.function("two").expect("function");
    let before = rec.launches();
    // SAFETY: refused before the driver.
    let err = ctx
        .scope(|sc| unsafe { sc.launch(&stream, &h, &cfg, &params![&buf]) })
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ArgumentCount {
                expected: 2,
                got: 1,
                ..
            }
        ),
        "{err}"
    );
    // SAFETY: refused before the driver.
    let err = ctx
        .scope(|sc| unsafe { sc.launch(&stream, &h, &cfg, &params![&buf, 7i64]) })
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::ArgumentMismatch {
                index: 1,
                expected_size: 4,
                got_size: 8,
                ..
            }
        ),
        "{err}"
    );
    // An over-limit configuration never reaches it either.
    // SAFETY: refused before the driver.
    let err = ctx
        .scope(|sc| unsafe {
            sc.launch(
                &stream,
                &h,
                &LaunchConfig::new(1, 2048),
                &params![&buf, 1i32],
            )
        })
        .unwrap_err();
    assert!(matches!(err, Error::LaunchConfig { .. }), "{err}");
    assert_eq!(rec.launches(), before);

    drop((p, f, g, h));
    drop((buf, stream, module));
    assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
    assert_eq!(
        cudakit::context::arena::host_arena().stats().live_count(),
        0
    );
}
