//! The launch audit table, and the argument checks refusing wrong
//! arguments before the driver sees them.
//!
//! `cuLaunchKernel` takes an array of pointers to the argument values. A
//! `ParamList` copies each value into storage it owns and points into it;
//! its audit table shows, per argument, the size, alignment, offset, the
//! pointer the driver receives and the value's bytes. Before each launch,
//! the count and sizes are checked against the kernel's own parameter
//! table (`cuFuncGetParamInfo`, CUDA 12.4 and newer): a wrong argument is a
//! typed error, not a silent wrong answer or an illegal address (700).
//!
//! ```sh
//! cargo run --release -p cudakit --example launch_audit
//! ```
//!
//! Prints the table, the refusals, then `launch_audit: ok (...)`; exits 1
//! when a wrong launch is not refused, a result is wrong, or on an error.

use cudakit::{params, Context, Error, LaunchConfig, ParamCheck, Program};

const SOURCE: &str = r#"
extern "C" __global__ void scale(float* x, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"#;

fn fail(what: String) -> ! {
    eprintln!("launch_audit: FAILED: {what}");
    std::process::exit(1);
}

fn main() -> cudakit::Result<()> {
    let n: usize = 4096;
    let ctx = Context::new(0)?;
    let compiled = Program::new("scale.cu", SOURCE).compile_for(&ctx)?;
    let module = ctx.load_module(&compiled)?;
    let scale = module.function("scale")?;

    // What the kernel declares: (offset, size) per parameter.
    let declared = match scale.param_check()? {
        ParamCheck::Available(table) => table,
        ParamCheck::Unavailable => {
            // A driver before CUDA 12.4: launches are not checked, so the
            // wrong launches below would really run. Do not make them.
            println!("launch_audit: not run (the driver lacks cuFuncGetParamInfo, CUDA 12.4+)");
            return Ok(());
        }
    };
    println!("kernel scale(float*, float, unsigned), parameters as (offset, size): {declared:?}");

    let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = ctx.upload(&host)?;
    let stream = ctx.stream()?;
    let config = LaunchConfig::for_elements(n, 128)?;

    // The right arguments, and their audit table.
    let right = params![&x, 0.5f32, n as u32];
    print!("audit table:\n{}", right.describe_table());
    scale.check_params(&right)?;

    // Wrong: one argument missing (n). Refused before the driver.
    let too_few = params![&x, 0.5f32];
    // SAFETY: the launch is refused by the count check before the driver;
    // were it made, the kernel would read a missing parameter.
    let refused = ctx.scope(|s| unsafe { s.launch(&stream, &scale, &config, &too_few) });
    match refused {
        Err(
            e @ Error::ArgumentCount {
                expected: 3,
                got: 2,
                ..
            },
        ) => println!("refused: {e}"),
        other => fail(format!("a launch with 2 of 3 arguments gave {other:?}")),
    }

    // Wrong: a double (8 bytes) where the kernel takes a float (4 bytes).
    let wrong_size = params![&x, 0.5f64, n as u32];
    // SAFETY: as above; refused by the argument checks before the driver.
    let refused = ctx.scope(|s| unsafe { s.launch(&stream, &scale, &config, &wrong_size) });
    match refused {
        // ArgumentMismatch names the index and both sizes; a typed refusal
        // that never reached the driver is what matters here.
        Err(e) if e.driver_error().is_none() => println!("refused: {e}"),
        other => fail(format!("a launch with a double for a float gave {other:?}")),
    }
    if let Some(e) = ctx.poisoned() {
        fail(format!("a refused launch reached the device: {e}"));
    }
    // Nothing ran: x is unchanged.
    if x.to_vec()? != host {
        fail("a refused launch changed the buffer".into());
    }

    // The right launch runs.
    // SAFETY: scale reads and writes x[0..n), and x holds n elements.
    ctx.scope(|s| unsafe { s.launch(&stream, &scale, &config, &right) })?;
    let got = x.to_vec()?;
    for (i, &g) in got.iter().enumerate() {
        if g != host[i] * 0.5 {
            fail(format!("x[{i}] = {g}, want {}", host[i] * 0.5));
        }
    }
    println!("launch_audit: ok (2 wrong launches refused before the driver, {n} elements exact)");
    Ok(())
}
