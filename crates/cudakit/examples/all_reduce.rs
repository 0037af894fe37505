//! An all-reduce over every GPU present, through NCCL.
//!
//! One thread per GPU, one NCCL rank per thread: rank 0 makes a `UniqueId`,
//! every rank joins the communicator with it (`ncclCommInitRankConfig`),
//! then sums its buffer with everyone else's (`ncclAllReduce`) inside a
//! scope of its own context. NCCL is loaded at run time like libcuda
//! (`CUDAKIT_LIBNCCL`, `libnccl.so.2`, or pip's `nvidia-nccl-cu13`).
//!
//! ```sh
//! NCCL_NVLS_ENABLE=0 cargo run --release -p cudakit --example all_reduce
//! ```
//!
//! Prints `all_reduce: ok (N GPUs, ...)` and exits 0. With one GPU it
//! prints `all_reduce: not run (needs 2 GPUs, found 1)` and exits 0; it
//! exits 1 on a wrong sum or an error (NCCL missing included).

use std::time::Duration;

use cudakit::multi::nccl::{Communicator, ReduceOp, UniqueId};
use cudakit::{Context, Device};

const N: usize = 1 << 20;

fn main() -> cudakit::Result<()> {
    let gpus = Device::count()?;
    if gpus < 2 {
        println!("all_reduce: not run (needs 2 GPUs, found {gpus})");
        return Ok(());
    }
    // NVLink multicast stays off (NCCL reads this when it is first loaded).
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    let (major, minor, patch) = cudakit::multi::nccl::version()?;
    println!("NCCL {major}.{minor}.{patch}, {gpus} GPUs");

    // The id every rank joins with; any channel can carry it to other
    // processes (here the ranks are threads of one process).
    let id = UniqueId::new()?;
    let results: Vec<cudakit::Result<()>> = std::thread::scope(|threads| {
        let handles: Vec<_> = (0..gpus)
            .map(|rank| threads.spawn(move || run_rank(rank, gpus, id)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| fail("a rank's thread panicked".into()))
            })
            .collect()
    });
    for result in results {
        result?;
    }
    println!(
        "all_reduce: ok ({gpus} GPUs, sum of {N} f32 per rank, every element exact on every rank)"
    );
    Ok(())
}

fn fail(what: String) -> ! {
    eprintln!("all_reduce: FAILED: {what}");
    std::process::exit(1);
}

/// What rank `rank` contributes at element `i`: small integers, so every
/// sum is exact.
fn value(rank: usize, i: usize) -> f32 {
    ((i % 1000) + 1000 * rank) as f32
}

/// One rank: joins the communicator on device `rank`, all-reduces, checks.
fn run_rank(rank: usize, ranks: usize, id: UniqueId) -> cudakit::Result<()> {
    let ctx = Context::new(rank)?;
    // Waits up to a minute for the other ranks to join, then gives up
    // (aborting the communicator) instead of hanging.
    let comm = Communicator::init_rank(&ctx, &id, rank, ranks, Duration::from_secs(60))?;
    let stream = ctx.stream()?;
    let send = ctx.upload(&(0..N).map(|i| value(rank, i)).collect::<Vec<_>>())?;
    let recv = ctx.upload(&vec![f32::NAN; N])?; // poisoned first
    ctx.scope(|s| {
        comm.all_reduce(s, &stream, &send, &recv, ReduceOp::Sum)?;
        // Bounded wait: ranks in other processes might never arrive.
        comm.synchronize(&stream, Duration::from_secs(60))
    })?;
    let got = recv.to_vec()?;
    for (i, &g) in got.iter().enumerate() {
        let want: f32 = (0..ranks).map(|r| value(r, i)).sum();
        if g != want {
            fail(format!("rank {rank}: element {i} is {g}, want {want}"));
        }
    }
    println!("  rank {rank} (device {rank}): {N} elements exact");
    Ok(())
}
