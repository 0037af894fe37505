//! A stream-ordered memory pool in a loop: a temporary buffer per step,
//! allocated and freed in the order of the stream's work.
//!
//! `cuMemAlloc` + `cuMemFree` cost tens of microseconds and synchronize
//! the device; an allocation from a pool (`cuMemAllocAsync`) whose release
//! threshold is raised reuses memory in well under a microsecond. Use
//! pools for per-step temporaries. A `PoolBuffer` is freed on its stream
//! when dropped (`cuMemFreeAsync`), and every allocation is recorded in
//! the context's arena as `AllocKind::StreamOrdered`.
//!
//! ```sh
//! cargo run --release -p cudakit --example stream_pool
//! ```
//!
//! Prints `stream_pool: ok (...)` and exits 0; exits 1 on a wrong result,
//! a leak, or an error.

use cudakit::{params, AllocKind, Context, LaunchConfig, Program};

const SOURCE: &str = r#"
extern "C" __global__ void iota(float* out, float start, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = start + (float)i;
}
"#;

const STEPS: usize = 1000;

fn fail(what: String) -> ! {
    eprintln!("stream_pool: FAILED: {what}");
    std::process::exit(1);
}

fn main() -> cudakit::Result<()> {
    let ctx = Context::new(0)?;
    let compiled = Program::new("iota.cu", SOURCE).compile_for(&ctx)?;
    let module = ctx.load_module(&compiled)?;
    let iota = module.function("iota")?;
    let stream = ctx.stream()?;

    // The device's default pool; keep freed memory for reuse instead of
    // handing it back to the system at every synchronization.
    let pool = ctx.default_pool()?;
    pool.set_release_threshold(u64::MAX)?;

    let mut checked = 0usize;
    for step in 0..STEPS {
        // A different size each step, up to 64 Ki elements.
        let n = 1 + (step * 7919) % (1 << 16);
        let start = step as f32;
        // Allocated in stream order: valid for work queued on `stream`.
        let buffer = pool.alloc::<f32>(&stream, n)?;
        let mut host = vec![f32::NAN; n];
        let config = LaunchConfig::for_elements(n, 256)?;
        ctx.scope(|s| {
            // SAFETY: iota writes out[0..n), and the buffer holds n elements.
            unsafe {
                s.launch(
                    &stream,
                    &iota,
                    &config,
                    &params![buffer.as_view(), start, n as u32],
                )?
            };
            s.copy_to_host(&stream, &buffer, &mut host)
        })?;
        for (i, &g) in host.iter().enumerate() {
            if g != start + i as f32 {
                fail(format!(
                    "step {step}: element {i} is {g}, want {}",
                    start + i as f32
                ));
            }
        }
        checked += n;
        drop(buffer); // cuMemFreeAsync, on `stream`
    }
    stream.synchronize()?;

    // Every buffer was freed, and the arena saw each allocation.
    let ordered = ctx.stats().kind(AllocKind::StreamOrdered);
    let usage = pool.usage()?;
    if ordered.live_count != 0 || usage.used != 0 {
        fail(format!(
            "{} stream-ordered buffers ({} bytes of the pool) still live",
            ordered.live_count, usage.used
        ));
    }
    if ordered.total_allocs < STEPS as u64 {
        fail(format!(
            "the arena saw {} allocations, want {STEPS}",
            ordered.total_allocs
        ));
    }
    println!(
        "stream_pool: ok ({STEPS} allocations, {checked} elements exact, pool peak {} KiB, 0 live)",
        usage.used_high / 1024
    );
    Ok(())
}
