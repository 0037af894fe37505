//! A C++ template kernel in a namespace, found by its C++ name.
//!
//! NVRTC mangles C++ kernel names (`blas::axpy<float>` becomes something
//! like `_ZN4blas4axpyIfEEvT_PKS1_PS1_j`). Registering each instantiation
//! as a *name expression* before compiling makes NVRTC instantiate it and
//! report its mangled ("lowered") name; the module then finds the kernel by
//! the C++ spelling.
//!
//! ```sh
//! cargo run --release -p cudakit --example template_kernel
//! ```
//!
//! Prints `template_kernel: ok (...)` and exits 0; exits 1 on a wrong
//! result or an error.

use cudakit::{params, Context, DeviceCopy, Function, LaunchConfig, Program};

const SOURCE: &str = r#"
namespace blas {
template <typename T>
__global__ void axpy(T a, const T* x, T* y, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
}  // namespace blas
"#;

const N: usize = 100_000;

fn main() -> cudakit::Result<()> {
    let ctx = Context::new(0)?;
    let compiled = Program::new("axpy.cu", SOURCE)
        // One name expression per instantiation the program needs.
        .name_expression("blas::axpy<float>")
        .name_expression("blas::axpy<double>")
        .compile_for(&ctx)?;
    for (expression, lowered) in compiled.lowered_names() {
        println!("  {expression:<20} -> {lowered}");
    }
    let module = ctx.load_module(&compiled)?;

    // Found by the C++ name (spaces inside the brackets do not matter).
    let axpy_f32 = module.function("blas::axpy<float>")?;
    let axpy_f64 = module.function("blas::axpy< double >")?;

    run(&ctx, &axpy_f32, 3.0f32, |i| (i % 512) as f32)?;
    run(&ctx, &axpy_f64, -0.5f64, |i| (i % 4096) as f64)?;
    println!("template_kernel: ok (blas::axpy<float> and blas::axpy<double>, {N} elements each)");
    Ok(())
}

/// Runs `y = a * x + y` with `x[i] = value(i)` and `y[i] = 1`, and checks
/// every element (the values are exact in both types).
fn run<T>(
    ctx: &Context,
    kernel: &Function<'_>,
    a: T,
    value: impl Fn(usize) -> T,
) -> cudakit::Result<()>
where
    T: DeviceCopy
        + PartialEq
        + std::fmt::Debug
        + std::ops::Mul<Output = T>
        + std::ops::Add<Output = T>
        + From<u8>,
{
    let x_host: Vec<T> = (0..N).map(&value).collect();
    let x = ctx.upload(&x_host)?;
    let ones: Vec<T> = (0..N).map(|_| T::from(1u8)).collect();
    let y = ctx.upload(&ones)?;
    let stream = ctx.stream()?;
    let config = LaunchConfig::for_elements(N, 256)?;
    ctx.scope(|s| {
        // SAFETY: the kernel reads x[0..N) and writes y[0..N); both hold N
        // elements of the type it was instantiated for.
        unsafe { s.launch(&stream, kernel, &config, &params![a, &x, &y, N as u32]) }
    })?;
    for (i, got) in y.to_vec()?.into_iter().enumerate() {
        let want = a * x_host[i] + T::from(1u8);
        if got != want {
            eprintln!(
                "template_kernel: FAILED: {}: y[{i}] = {got:?}, want {want:?}",
                kernel.name()
            );
            std::process::exit(1);
        }
    }
    println!("  {}: {N} elements exact", kernel.name());
    Ok(())
}
