//! Soundness on the GPU (issue 10): what the stand-in libcuda cannot show.
//!
//! - Item 4: a synchronous call made inside a scope sees all work queued
//!   before it on the context. Before the fix, `b.to_vec()` after
//!   `s.copy(&stream, &a, &b)` read `b` through the legacy stream, which
//!   does not wait for cudakit's non-blocking streams, and returned stale
//!   (poisoned) data.
//! - Item 2 on a device with concurrent managed access: host views and
//!   device work may overlap (the borrow rules keep them off the same
//!   buffer); the test checks that a view does not block unrelated work
//!   there, and that every element written by the device is seen.

use cudakit::compile::program::Program;
use cudakit::work::launch::LaunchConfig;
use cudakit::{params, Context};
use cudakit_suite::rng::Rng;

const SLOW: &str = r#"
extern "C" __global__ void slow_scale(const float* in, float* out, float k, long long spins, int n) {
    long long start = clock64();
    while (clock64() - start < spins) { }
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * k;
}
"#;

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_synchronous_call_inside_a_scope_sees_the_scopes_queued_work() {
    let ctx = Context::new(0).expect("device 0");
    let mut rng = Rng::new();
    let stream = ctx.stream().expect("stream");

    // A large device-to-device copy queued on a non-blocking stream, then a
    // synchronous read of its destination.
    let n = 32 << 20; // 128 MiB of f32
    let host: Vec<f32> = rng.vec_f32(n);
    let a = ctx.upload(&host).expect("upload");
    for round in 0..3 {
        let b = ctx.alloc::<f32>(n).expect("alloc");
        b.fill(f32::NAN).expect("poison");
        let got = ctx
            .scope(|s| {
                s.copy(&stream, &a, &b)?;
                b.to_vec()
            })
            .expect("scope");
        let bad = got
            .iter()
            .zip(&host)
            .position(|(g, h)| g.to_bits() != h.to_bits());
        assert_eq!(bad, None, "round {round}: stale element at {bad:?}");
    }

    // A slow kernel writing `out`, then synchronous reads and writes.
    let compiled = Program::new("slow.cu", SLOW)
        .compile_for(&ctx)
        .expect("compile");
    let module = ctx.load_module(&compiled).expect("load");
    let f = module.function("slow_scale").expect("function");
    let m = 1 << 20;
    let input: Vec<f32> = rng.vec_f32(m);
    let k = 1.0 + rng.f32_sym().abs();
    let din = ctx.upload(&input).expect("upload");
    let out = ctx.alloc::<f32>(m).expect("alloc");
    out.fill(f32::NAN).expect("poison");
    let cfg = LaunchConfig::for_elements(m, 256).expect("config");
    let (got, overwritten) = ctx
        .scope(|s| {
            let p = params![&din, &out, k, 20_000_000i64, m as i32];
            // SAFETY: slow_scale reads and writes `m` elements of each buffer.
            unsafe { s.launch(&stream, &f, &cfg, &p) }?;
            let got = out.to_vec()?;
            // A synchronous write after the kernel must land after it too.
            out.copy_from_host(&input)?;
            Ok((got, out.to_vec()?))
        })
        .expect("scope");
    for i in 0..m {
        let want = input[i] * k;
        assert_eq!(got[i].to_bits(), want.to_bits(), "element {i}");
        assert_eq!(overwritten[i].to_bits(), input[i].to_bits(), "element {i}");
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn host_views_of_unified_memory_are_guards_and_see_device_writes() {
    let ctx = Context::new(0).expect("device 0");
    let mut rng = Rng::new();
    let stream = ctx.stream().expect("stream");
    let compiled = Program::new("slow.cu", SLOW)
        .compile_for(&ctx)
        .expect("compile");
    let module = ctx.load_module(&compiled).expect("load");
    let f = module.function("slow_scale").expect("function");
    let n = 4099; // odd
    let input: Vec<f32> = rng.vec_f32(n);
    let din = ctx.upload(&input).expect("upload");
    let mut unified = ctx.alloc_unified::<f32>(n).expect("unified");
    unified.as_mut_slice().expect("view").fill(f32::NAN);
    let other = ctx.alloc_unified::<f32>(n).expect("unified");
    let view = other.as_slice().expect("view of another buffer");
    let cfg = LaunchConfig::for_elements(n, 128).expect("config");
    ctx.scope(|s| {
        let p = params![&din, &mut unified, 3.0f32, 1000i64, n as i32];
        // SAFETY: slow_scale reads and writes `n` elements of each buffer.
        unsafe { s.launch(&stream, &f, &cfg, &p) }
    })
    .expect("work beside a view of another buffer runs where managed access is concurrent");
    assert!(view.iter().all(|&x| x == 0.0), "zeroed at allocation");
    drop(view);
    let got = unified.as_slice().expect("view");
    for i in 0..n {
        assert_eq!(got[i].to_bits(), (input[i] * 3.0).to_bits(), "element {i}");
    }
}
