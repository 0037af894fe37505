//! `cargo bench -p cudakit-tests --bench launch`: cudakit against the raw
//! driver API on the GPU (see `cudakit_suite::bench`). Needs a GPU; without
//! one it prints why and exits non-zero.

fn main() {
    if let Err(e) = run() {
        eprintln!("benchmark failed: {e}");
        std::process::exit(1);
    }
}

fn run() -> cudakit::Result<()> {
    let ctx = cudakit::Context::new(0)?;
    println!("device: {}", ctx.device().name()?);
    let mut rows = cudakit_suite::bench::launch_overhead(&ctx, 51, 2000)?;
    rows.extend(cudakit_suite::bench::transfers(&ctx, 256 << 20, 21)?);
    rows.extend(cudakit_suite::bench::compile(
        &ctx,
        cudakit_suite::kernels::MATMUL,
        &["matmul_tiled<float, 32>"],
        11,
    )?);
    cudakit_suite::bench::print(&rows);
    Ok(())
}
