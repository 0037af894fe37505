//! Graph capture and replay: record a small pipeline once, replay it many
//! times with new inputs.
//!
//! Work queued on a stream inside `Scope::capture` is recorded into a
//! graph instead of running. The instantiated graph (`GraphExec`) replays
//! the whole pipeline with one `cuGraphLaunch`, which costs a fraction of
//! launching each kernel again. The graph refers to the buffers it was
//! captured with, so new inputs go into the same device buffers between
//! replays.
//!
//! ```sh
//! cargo run --release -p cudakit --example graph_replay
//! ```
//!
//! Prints `graph_replay: ok (...)` and exits 0; exits 1 on a wrong result
//! or an error.

use cudakit::{params, Context, InstantiateOptions, LaunchConfig, Program};

const SOURCE: &str = r#"
extern "C" __global__ void square(const float* x, float* y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * x[i];
}
extern "C" __global__ void add_scalar(const float* y, float b, float* z, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) z[i] = y[i] + b;
}
"#;

const REPLAYS: usize = 100;

fn main() -> cudakit::Result<()> {
    let n: usize = 10_000;
    let b = 0.25f32;
    let ctx = Context::new(0)?;
    let compiled = Program::new("pipeline.cu", SOURCE).compile_for(&ctx)?;
    let module = ctx.load_module(&compiled)?;
    let square = module.function("square")?;
    let add_scalar = module.function("add_scalar")?;

    // Buffers the graph will use, declared before the scope so that they
    // outlive every replay.
    let x = ctx.alloc::<f32>(n)?;
    let y = ctx.alloc::<f32>(n)?;
    let z = ctx.alloc::<f32>(n)?;
    let stream = ctx.stream()?;
    let config = LaunchConfig::for_elements(n, 256)?;

    let mut checked = 0usize;
    ctx.scope(|s| {
        // Record: nothing runs yet. The launches are checked (arguments,
        // configuration) now, at capture time.
        let graph = s.capture(&stream, || {
            // SAFETY: each kernel reads and writes n-element buffers of n
            // elements.
            unsafe {
                s.launch(&stream, &square, &config, &params![&x, &y, n as u32])?;
                s.launch(&stream, &add_scalar, &config, &params![&y, b, &z, n as u32])
            }
        })?;
        println!("captured {} nodes", graph.node_count()?);
        let exec = graph.instantiate(InstantiateOptions::default().label("square + b"))?;

        for replay in 0..REPLAYS {
            // New inputs in the same buffer (integers, so every result is
            // exact), then one launch of the whole pipeline.
            let input: Vec<f32> = (0..n).map(|i| ((i + replay) % 1000) as f32).collect();
            x.copy_from_host(&input)?;
            z.fill(f32::NAN)?; // poison: an element the replay misses shows
            s.launch_graph(&stream, &exec)?;
            // A synchronous read inside a scope waits for the queued work.
            let got = z.to_vec()?;
            for (i, &g) in got.iter().enumerate() {
                let want = input[i] * input[i] + b;
                if g != want {
                    eprintln!("graph_replay: FAILED: replay {replay}: z[{i}] = {g}, want {want}");
                    std::process::exit(1);
                }
            }
            checked += n;
        }
        Ok(())
    })?;
    println!("graph_replay: ok (2 kernels captured, {REPLAYS} replays, {checked} elements exact)");
    Ok(())
}
