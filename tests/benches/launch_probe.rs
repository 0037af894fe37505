//! `cargo bench -p cudakit-tests --bench launch_probe`: what a launch's
//! host-side overhead costs on the GPU's machine, apart from cudakit. The
//! raw `cuLaunchKernel` loop is timed with added work after each launch:
//! `SPIN` register-only loop iterations (about four instructions each), or
//! `TOUCH` reads of fixed cache lines spread over a 1 MiB table (the same
//! lines each launch, as a launch's own state is), or a `Mutex`
//! lock and unlock, or one atomic read-modify-write. Beside them, cudakit's
//! launch with the arguments built per launch and built once. The slopes
//! say whether instructions or memory make cudakit's distance from raw.
//! Needs a GPU; without one it prints why and exits non-zero.

use std::hint::black_box;
use std::time::{Duration, Instant};

use cudakit::compile::program::Program;
use cudakit::{params, Context, LaunchConfig};

const NOOP: &str = r#"
extern "C" __global__ void noop(float* p, int n) { if (n < 0) p[0] = 1.0f; }
"#;

fn main() {
    if let Err(e) = run() {
        eprintln!("probe failed: {e}");
        std::process::exit(1);
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[inline(never)]
fn spin(k: u32) {
    for i in 0..k {
        black_box(i);
    }
}

#[inline(never)]
fn touch(table: &[u64], lines: usize) -> u64 {
    let mut s = 0u64;
    // 4 KiB + 64 B apart: distinct sets, the same lines every call.
    for i in 0..lines {
        s = s.wrapping_add(table[(i * 520) % table.len()]);
    }
    s
}

fn run() -> cudakit::Result<()> {
    let ctx = Context::new(0)?;
    println!("device: {}", ctx.device().name()?);
    let compiled = Program::new("noop.cu", NOOP).compile_for(&ctx)?;
    let module = ctx.load_module(&compiled)?;
    let f = module.function("noop")?;
    let stream = ctx.stream()?;
    let buf = ctx.alloc::<f32>(1)?;
    let cfg = LaunchConfig::new(1, 32);
    let cu = cudakit::sys::driver()?;
    let table: Vec<u64> = (0..(1u64 << 17)).collect();
    let per_batch = 2000u32;
    let n: i32 = 1;

    let lock = std::sync::Mutex::new(0u64);
    let counter = std::sync::atomic::AtomicU64::new(0);
    // extra: 0 none, 1 a Mutex lock/unlock after each launch (as the
    // stream lock), 2 one atomic read-modify-write (a locked instruction).
    let raw = |spin_k: u32, lines: usize, extra: u8| -> cudakit::Result<Duration> {
        let mut ptr = buf.device_ptr().as_raw();
        let mut nn = n;
        let mut args: [*mut std::ffi::c_void; 2] =
            [(&mut ptr as *mut u64).cast(), (&mut nn as *mut i32).cast()];
        let t = Instant::now();
        for _ in 0..per_batch {
            // SAFETY: a live function and stream; one pointer per
            // parameter (float*, int), each to a live value of its size.
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
            cudakit::error::check("cuLaunchKernel", rc)?;
            if spin_k > 0 {
                spin(spin_k);
            }
            if lines > 0 {
                black_box(touch(&table, lines));
            }
            match extra {
                1 => *lock.lock().unwrap() += 1,
                2 => {
                    counter.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                }
                _ => {}
            }
        }
        let e = t.elapsed();
        stream.synchronize()?;
        Ok(e / per_batch)
    };
    let prebuilt = params![&buf, n];
    let kit = |pre: bool| -> cudakit::Result<Duration> {
        let mut e = Duration::ZERO;
        ctx.scope(|s| {
            let t = Instant::now();
            for _ in 0..per_batch {
                if pre {
                    // SAFETY: noop writes nothing unless n < 0.
                    unsafe { s.launch(&stream, &f, &cfg, &prebuilt)? };
                } else {
                    // SAFETY: as above.
                    unsafe { s.launch(&stream, &f, &cfg, &params![&buf, n])? };
                }
            }
            e = t.elapsed();
            Ok(())
        })?;
        Ok(e / per_batch)
    };
    // (name, spin, lines) for raw variants; kit variants after.
    let variants: Vec<(String, u32, usize, u8)> = vec![
        ("raw".into(), 0, 0, 0),
        ("raw + spin 75 (~300 instr)".into(), 75, 0, 0),
        ("raw + spin 150 (~600 instr)".into(), 150, 0, 0),
        ("raw + spin 300 (~1200 instr)".into(), 300, 0, 0),
        ("raw + touch 12 lines".into(), 0, 12, 0),
        ("raw + touch 48 lines".into(), 0, 48, 0),
        ("raw + Mutex lock/unlock".into(), 0, 0, 1),
        ("raw + one atomic RMW".into(), 0, 0, 2),
    ];
    let batches = 41;
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); variants.len() + 2];
    for v in &variants {
        raw(v.1, v.2, v.3)?;
    }
    kit(false)?;
    kit(true)?;
    for b in 0..batches {
        let order: Vec<usize> = if b % 2 == 0 {
            (0..samples.len()).collect()
        } else {
            (0..samples.len()).rev().collect()
        };
        for i in order {
            let d = if i < variants.len() {
                raw(variants[i].1, variants[i].2, variants[i].3)?
            } else {
                kit(i == variants.len() + 1)?
            };
            samples[i].push(d);
        }
    }
    let mut spin_alone = Vec::new();
    for _ in 0..batches {
        let t = Instant::now();
        for _ in 0..per_batch {
            spin(150);
        }
        spin_alone.push(t.elapsed() / per_batch);
    }
    let names: Vec<String> = variants
        .iter()
        .map(|v| v.0.clone())
        .chain(["kit".into(), "kit, ParamList built once".into()])
        .collect();
    let base = median(samples[0].clone());
    for (name, s) in names.iter().zip(samples) {
        let m = median(s);
        println!(
            "{name:<34} {:>9.1} ns  {:.3}x raw",
            m.as_nanos() as f64,
            m.as_secs_f64() / base.as_secs_f64()
        );
    }
    println!(
        "spin 150 alone                     {:>9.1} ns",
        median(spin_alone).as_nanos() as f64
    );
    Ok(())
}
