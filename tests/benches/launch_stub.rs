//! `cargo bench -p cudakit-tests --bench launch_stub`: the launch path's
//! host cost against the test-only stand-in libcuda, for instruction counts
//! on a machine without a GPU (`valgrind --tool=callgrind`). Not a speed
//! claim: the stand-in's own `cuLaunchKernel` is slow and locks; compare
//! the modes' instruction counts per launch, not their times.
//!
//! Needs `CUDAKIT_LIBCUDA` pointing at `libstub_libcuda.so` (build it with
//! `cargo build --release --manifest-path tests/stub-libcuda/Cargo.toml`).
//! `MODE` is `raw` (the bare `cuLaunchKernel`), `kit` (`params!` built per
//! launch), `prebuilt` (one `ParamList`) or `build` (only `params!`); `N`
//! launches (default 100000).

use cudakit::{params, Context, LaunchConfig};
use std::time::Instant;

fn main() {
    let lib = std::env::var("CUDAKIT_LIBCUDA").expect("CUDAKIT_LIBCUDA: the stand-in libcuda");
    // SAFETY: the stand-in's initialisers are Rust statics only.
    let stub = unsafe { libloading::Library::new(&lib) }.expect("open the stand-in");
    // SAFETY: the stand-in exports this function with this signature.
    let set_params =
        unsafe { stub.get::<unsafe extern "C" fn(*const usize, usize)>(b"stub_set_params\0") }
            .expect("stub_set_params");
    // (float*, int) at offsets 0 and 8.
    let layout = [0usize, 8, 8, 4];
    // SAFETY: two (offset, size) pairs.
    unsafe { set_params(layout.as_ptr(), 2) };

    let mode = std::env::var("MODE").unwrap_or_else(|_| "kit".into());
    let n: usize = std::env::var("N")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let ctx = Context::new(0).expect("context on the stand-in");
    let module = ctx
        .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
        .expect("module");
    let f = module.function("noop").expect("function");
    let buf = ctx.alloc::<f32>(1).expect("alloc");
    let stream = ctx.stream().expect("stream");
    let cfg = LaunchConfig::new(1, 32);
    let cu = cudakit::sys::driver().expect("driver");
    let k: i32 = 1;
    let t = Instant::now();
    match mode.as_str() {
        "raw" => {
            let mut ptr = buf.device_ptr().as_raw();
            let mut kk = k;
            let mut args: [*mut std::ffi::c_void; 2] =
                [(&mut ptr as *mut u64).cast(), (&mut kk as *mut i32).cast()];
            for _ in 0..n {
                // SAFETY: a live function and stream; one pointer per
                // parameter, each to a live value of its size.
                let rc = unsafe {
                    (cu.cuLaunchKernel)(
                        f.as_raw(),
                        1,
                        1,
                        1,
                        32,
                        1,
                        1,
                        0,
                        stream.as_raw(),
                        args.as_mut_ptr(),
                        std::ptr::null_mut(),
                    )
                };
                cudakit::error::check("cuLaunchKernel", rc).expect("launch");
            }
        }
        "kit" => ctx
            .scope(|s| {
                for _ in 0..n {
                    // SAFETY: the stand-in runs nothing.
                    unsafe { s.launch(&stream, &f, &cfg, &params![&buf, k])? };
                }
                Ok(())
            })
            .expect("launches"),
        "prebuilt" => {
            let p = params![&buf, k];
            ctx.scope(|s| {
                for _ in 0..n {
                    // SAFETY: the stand-in runs nothing.
                    unsafe { s.launch(&stream, &f, &cfg, &p)? };
                }
                Ok(())
            })
            .expect("launches")
        }
        "build" => {
            for _ in 0..n {
                std::hint::black_box(params![std::hint::black_box(&buf), std::hint::black_box(k)]);
            }
        }
        other => panic!("MODE {other}: raw, kit, prebuilt or build"),
    }
    let el = t.elapsed();
    println!("{mode}: {n} in {el:?} ({:?} each)", el / n as u32);
}
