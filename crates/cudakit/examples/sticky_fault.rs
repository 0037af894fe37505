//! A deliberate out-of-bounds write, in a child process: the typed sticky
//! error, and the poisoned context that refuses further work.
//!
//! Some device faults (an illegal address, 700; a misaligned access, 716; a
//! launch failure, 719; ...) are *sticky*: the context is unusable after
//! them, and a new process is the dependable recovery. cudakit records the
//! first such error and refuses every later call on that context with
//! `Error::ContextPoisoned`, naming the original call, without entering the
//! driver again.
//!
//! So the fault runs in a child: this program starts itself again
//! (`std::process::Command` on `current_exe()`) with
//! `CUDAKIT_EXAMPLE_FAULT_CHILD=1`. The child faults, checks what cudakit
//! reports, and prints one `CHILD` line; the parent checks that line, then
//! shows that its own process still has a working GPU.
//!
//! ```sh
//! cargo run --release -p cudakit --example sticky_fault
//! ```
//!
//! Prints `sticky_fault: ok (...)` and exits 0; exits 1 otherwise.

use std::process::Command;

use cudakit::{params, Context, Device, Error, LaunchConfig, Program};

const CHILD_VAR: &str = "CUDAKIT_EXAMPLE_FAULT_CHILD";

const SOURCE: &str = r#"
extern "C" __global__ void write_at(float* p, long long offset, float v) {
    p[offset] = v;
}
"#;

fn fail(what: String) -> ! {
    eprintln!("sticky_fault: FAILED: {what}");
    std::process::exit(1);
}

fn main() -> cudakit::Result<()> {
    if std::env::var_os(CHILD_VAR).is_some() {
        return child();
    }
    // Loads libcuda here first, so that a machine without a driver gets
    // the readable load error from this process.
    let devices = Device::count()?;
    if devices == 0 {
        fail("no CUDA device".into());
    }

    let exe = std::env::current_exe()
        .unwrap_or_else(|e| fail(format!("cannot find this program's own path: {e}")));
    let out = Command::new(exe)
        .env(CHILD_VAR, "1")
        .output()
        .unwrap_or_else(|e| fail(format!("cannot start the child: {e}")));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    print!("{stdout}");
    if !out.status.success() {
        fail(format!("the child failed ({}):\n{stderr}", out.status));
    }
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("CHILD "))
        .unwrap_or_else(|| fail(format!("no CHILD line from the child:\n{stdout}\n{stderr}")));
    let field = |key: &str| {
        line.split(' ')
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .unwrap_or_else(|| fail(format!("no {key} in {line}")))
    };
    let code: i32 = field("code").parse().unwrap_or(-1);
    // 700 (illegal address) by CUDA's documentation; an H200 reported 717
    // (invalid address space) for a write this far outside any allocation.
    if ![700, 717].contains(&code) {
        fail(format!("the fault gave code {code}, want 700 or 717"));
    }
    for key in ["sticky", "poisoned_same", "next_refused"] {
        if field(key) != "true" {
            fail(format!("child: {key} is not true: {line}"));
        }
    }

    // The fault poisoned the child's context only: this process is fine.
    let ctx = Context::new(0)?;
    let back = ctx.upload(&[1.0f32, 2.0, 3.0])?.to_vec()?;
    if back != [1.0, 2.0, 3.0] {
        fail(format!("the parent's round trip gave {back:?}"));
    }
    println!(
        "sticky_fault: ok (child: {} sticky, context poisoned, next call refused; parent usable)",
        field("first")
    );
    Ok(())
}

/// The child: makes the fault and reports what cudakit did with it.
fn child() -> cudakit::Result<()> {
    let ctx = Context::new(0)?;
    let compiled = Program::new("fault.cu", SOURCE).compile_for(&ctx)?;
    let module = ctx.load_module(&compiled)?;
    let write_at = module.function("write_at")?;
    let buffer = ctx.alloc::<f32>(1024)?; // 4 KiB
    let stream = ctx.stream()?;

    // 256 MiB past the end of a 4 KiB buffer: far outside any allocation.
    let offset: i64 = 64 << 20;
    let result = ctx.scope(|s| {
        // SAFETY: this launch breaks the contract on purpose: the write is
        // out of bounds, in a process of its own that exits right after.
        // 2^26 floats past a small allocation is an address the H200 was
        // measured to fault on (700, or 717) rather than one mapped to
        // other memory (kernels/faults.cu); the fault is the point.
        unsafe {
            s.launch(
                &stream,
                &write_at,
                &LaunchConfig::new(1, 1),
                &params![&buffer, offset, 1.0f32],
            )
        }
    });
    let first = match result {
        Err(Error::Driver(e)) => e,
        other => fail(format!(
            "the faulting kernel gave {other:?}, want a driver error"
        )),
    };
    println!("child: the fault: {first}");
    println!("child: sticky: {}", first.is_sticky());

    // The context remembers it ...
    let poisoned_same = ctx.poisoned() == Some(first);
    // ... and refuses the next call without entering the driver.
    let next = ctx.alloc::<f32>(16);
    let next_refused =
        matches!(&next, Err(Error::ContextPoisoned { cause, .. }) if *cause == first);
    if let Err(e) = &next {
        println!("child: the next call: {e}");
    }
    println!(
        "CHILD first={}:{} code={} sticky={} poisoned_same={poisoned_same} next_refused={next_refused}",
        first.call,
        first.code.number(),
        first.code.number(),
        first.is_sticky()
    );
    Ok(())
}
