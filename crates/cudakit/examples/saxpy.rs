//! saxpy: `y = a * x + y` on the GPU, the "hello world" of CUDA.
//!
//! Compiles a kernel at run time with NVRTC, launches it over a million
//! elements, reads the result back and checks every element.
//!
//! ```sh
//! cargo run --release -p cudakit --example saxpy
//! ```
//!
//! Prints `saxpy: ok (1048576 elements, max error 0)` and exits 0; on a
//! wrong result it prints what differs and exits 1; without a GPU or a
//! driver, `main` returns the error, which prints where libcuda was looked
//! for and what to install, and exits 1.

use cudakit::{params, Context, LaunchConfig, Program};

/// The kernel, in CUDA C++. `extern "C"` keeps its name unmangled, so the
/// module finds it as "saxpy" (see the `template_kernel` example for C++
/// names).
const SOURCE: &str = r#"
extern "C" __global__ void saxpy(float a, const float* x, float* y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"#;

fn main() -> cudakit::Result<()> {
    let n: usize = 1 << 20;

    // The primary context of device 0: loads libcuda and calls cuInit.
    let ctx = Context::new(0)?;

    // Compile for this device's architecture with NVRTC, then load the
    // CUBIN (or PTX) into the context.
    let compiled = Program::new("saxpy.cu", SOURCE).compile_for(&ctx)?;
    let module = ctx.load_module(&compiled)?;
    let saxpy = module.function("saxpy")?;

    // Inputs whose products and sums are exact in f32, so the GPU's answer
    // must match the CPU's to the bit.
    let a = 2.5f32;
    let x_host: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let y_host: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let x = ctx.upload(&x_host)?; // cuMemAlloc + cuMemcpyHtoD
    let y = ctx.upload(&y_host)?;

    // One thread per element, 256 threads per block.
    let config = LaunchConfig::for_elements(n, 256)?;
    let stream = ctx.stream()?;

    // Launches are asynchronous; a scope keeps the buffers borrowed until
    // the GPU is done with them, and waits for its streams before it
    // returns. Device buffers are passed as `&buf`, also the one the
    // kernel writes: the borrow lasts until the scope has synchronized.
    // The argument count and sizes are checked against the kernel's own
    // parameters before the driver sees the launch.
    ctx.scope(|s| {
        let args = params![a, &x, &y, n as u32];
        // SAFETY: saxpy reads x[0..n) and writes y[0..n), and both buffers
        // hold n elements; nothing else touches them during the launch.
        unsafe { s.launch(&stream, &saxpy, &config, &args) }
    })?;

    // Read back (cuMemcpyDtoH) and check every element.
    let got = y.to_vec()?;
    let mut max_error = 0f32;
    for (i, &g) in got.iter().enumerate() {
        let want = a * x_host[i] + y_host[i];
        let error = (g - want).abs();
        if error > 0.0 {
            eprintln!("saxpy: FAILED: y[{i}] = {g}, want {want}");
            std::process::exit(1);
        }
        max_error = max_error.max(error);
    }
    println!("saxpy: ok ({n} elements, max error {max_error})");
    Ok(())
}
