//! Benchmarks of several GPUs against raw calls in the same process and
//! run: peer copies (each way and both ways at once) against raw
//! `cuMemcpyPeerAsync`, and all-reduce against raw `ncclAllReduce`. Each
//! figure is the median of many timed batches, warm-up excluded, raw and
//! cudakit batches interleaved so that drift hits both. Rows have the shape
//! of [`crate::bench::Row`]; bandwidths are in the row's name.
//!
//! On the shared multi-GPU machines run with `NCCL_NVLS_ENABLE=0`.

use std::ffi::c_void;
use std::time::{Duration, Instant};

use cudakit::error::{NcclCode, NcclError};
use cudakit::multi::nccl::{self, Communicator, ReduceOp};
use cudakit::sys::nccl::{ncclDataType_t, ncclRedOp_t};
use cudakit::sys::ncclResult_t;
use cudakit::{Context, Result};

use crate::bench::{alternating_medians, check, Row};

fn gbps(bytes: usize, t: Duration) -> f64 {
    bytes as f64 / t.as_secs_f64() / 1e9
}

fn mib(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// A raw NCCL call's result as cudakit's typed error (without NCCL's
/// message), for the raw baselines.
fn nccl_check(call: &'static str, rc: ncclResult_t) -> Result<()> {
    match NcclCode::from_raw(rc) {
        None => Ok(()),
        Some(code) => Err(NcclError {
            call,
            code,
            detail: String::new(),
        }
        .into()),
    }
}

/// Peer copies of `bytes` between devices of `c0` and `c1`: 0 to 1, 1 to
/// 0, and both at once, `per_batch` copies a batch, cudakit
/// (`Scope::copy_peer`) against raw `cuMemcpyPeerAsync` on the same
/// streams and buffers. Peer access is enabled both ways first where the
/// devices allow it (the row names say which).
///
/// # Errors
///
/// Any cudakit error.
pub fn peer_copies(
    c0: &Context,
    c1: &Context,
    bytes: usize,
    batches: usize,
    per_batch: usize,
) -> Result<Vec<Row>> {
    let peer = c0.can_access_peer(c1)? && c1.can_access_peer(c0)?;
    if peer {
        c0.enable_peer_access(c1)?;
        c1.enable_peer_access(c0)?;
    }
    let n = bytes / 4;
    let (a0, a1) = (c0.alloc::<f32>(n)?, c1.alloc::<f32>(n)?);
    let (b0, b1) = (c0.alloc::<f32>(n)?, c1.alloc::<f32>(n)?);
    a0.fill(1.0)?;
    a1.fill(2.0)?;
    let (s0, s1) = (c0.stream()?, c1.stream()?);
    let cu = cudakit::sys::driver()?;
    // (direction name, copies 0->1, copies 1->0)
    let cases: [(&str, bool, bool); 3] = [
        ("0->1", true, false),
        ("1->0", false, true),
        ("both ways", true, true),
    ];
    let mut rows = Vec::new();
    for (name, fwd, back) in cases {
        let raw = || -> Result<Duration> {
            c0.synchronize()?; // makes c0 current (idle: returns at once)
            let t = Instant::now();
            for _ in 0..per_batch {
                if fwd {
                    // SAFETY: both buffers hold `bytes` bytes; s0 is a
                    // stream of c0, made current above.
                    let rc = unsafe {
                        (cu.cuMemcpyPeerAsync)(
                            b1.device_ptr().as_raw(),
                            c1.as_raw(),
                            a0.device_ptr().as_raw(),
                            c0.as_raw(),
                            bytes,
                            s0.as_raw(),
                        )
                    };
                    check("cuMemcpyPeerAsync", rc)?;
                }
                if back {
                    // SAFETY: as above, on c1's stream.
                    let rc = unsafe {
                        (cu.cuMemcpyPeerAsync)(
                            b0.device_ptr().as_raw(),
                            c0.as_raw(),
                            a1.device_ptr().as_raw(),
                            c1.as_raw(),
                            bytes,
                            s1.as_raw(),
                        )
                    };
                    check("cuMemcpyPeerAsync", rc)?;
                }
            }
            s0.synchronize()?;
            s1.synchronize()?;
            Ok(t.elapsed() / per_batch as u32)
        };
        let kit = || -> Result<Duration> {
            let t = Instant::now();
            c0.scope(|x| {
                c1.scope(|y| {
                    for _ in 0..per_batch {
                        if fwd {
                            x.copy_peer(&s0, &a0, &b1)?;
                        }
                        if back {
                            y.copy_peer(&s1, &a1, &b0)?;
                        }
                    }
                    Ok(())
                })
            })?;
            Ok(t.elapsed() / per_batch as u32)
        };
        raw()?;
        kit()?;
        let (r, k) = alternating_medians(batches, raw, kit)?;
        let moved = if fwd && back { 2 * bytes } else { bytes };
        rows.push(Row {
            name: format!(
                "peer copy {name} {} (peer access {}; cudakit {:.0} GB/s, raw {:.0} GB/s)",
                mib(bytes),
                if peer { "on" } else { "off" },
                gbps(moved, k),
                gbps(moved, r)
            ),
            cudakit: k,
            raw: Some(r),
            samples: batches,
        });
    }
    Ok(rows)
}

/// All-reduce (sum of f32) over the devices of `c0` and `c1` at each size
/// of `sizes` (bytes), `per_batch` all-reduces a batch: cudakit (scopes and
/// [`nccl::group`]) against raw `ncclGroupStart`, `ncclAllReduce` per rank,
/// `ncclGroupEnd`, on the same communicators, streams and buffers. The row
/// names give the bus bandwidth (for two ranks, bytes over time).
///
/// # Errors
///
/// Any cudakit error; [`Error::Load`](cudakit::Error::Load) without NCCL.
pub fn all_reduce(
    c0: &Context,
    c1: &Context,
    sizes: &[usize],
    batches: usize,
    per_batch: usize,
) -> Result<Vec<Row>> {
    let comms = Communicator::init_all(&[c0, c1])?;
    let nc = cudakit::sys::nccl()?;
    let (s0, s1) = (c0.stream()?, c1.stream()?);
    let mut rows = Vec::new();
    for &bytes in sizes {
        let n = bytes / 4;
        let (x0, x1) = (c0.alloc::<f32>(n)?, c1.alloc::<f32>(n)?);
        let (y0, y1) = (c0.alloc::<f32>(n)?, c1.alloc::<f32>(n)?);
        x0.fill(1.0)?;
        x1.fill(2.0)?;
        let raw = || -> Result<Duration> {
            let t = Instant::now();
            for _ in 0..per_batch {
                // SAFETY: a group of one all-reduce per rank of one
                // clique, on live communicators, streams of their devices
                // and buffers of `n` f32 each; synchronized below before
                // the buffers can go.
                unsafe {
                    nccl_check("ncclGroupStart", (nc.ncclGroupStart)())?;
                    for (comm, s, x, y) in [(&comms[0], &s0, &x0, &y0), (&comms[1], &s1, &x1, &y1)]
                    {
                        nccl_check(
                            "ncclAllReduce",
                            (nc.ncclAllReduce)(
                                x.device_ptr().as_raw() as *const c_void,
                                y.device_ptr().as_raw() as *mut c_void,
                                n,
                                ncclDataType_t::ncclFloat32,
                                ncclRedOp_t::ncclSum,
                                comm.as_raw(),
                                s.as_raw(),
                            ),
                        )?;
                    }
                    nccl_check("ncclGroupEnd", (nc.ncclGroupEnd)())?;
                }
            }
            s0.synchronize()?;
            s1.synchronize()?;
            Ok(t.elapsed() / per_batch as u32)
        };
        let kit = || -> Result<Duration> {
            let t = Instant::now();
            c0.scope(|a| {
                c1.scope(|b| {
                    for _ in 0..per_batch {
                        nccl::group(|g| {
                            g.all_reduce(&comms[0], a, &s0, &x0, &y0, ReduceOp::Sum)?;
                            g.all_reduce(&comms[1], b, &s1, &x1, &y1, ReduceOp::Sum)
                        })?;
                    }
                    Ok(())
                })
            })?;
            Ok(t.elapsed() / per_batch as u32)
        };
        for _ in 0..2 {
            raw()?;
            kit()?;
        }
        let (r, k) = alternating_medians(batches, raw, kit)?;
        // Bus bandwidth: algorithm bandwidth times 2 (n - 1) / n, n = 2.
        rows.push(Row {
            name: format!(
                "all-reduce {} f32, 2 GPUs (busbw cudakit {:.0} GB/s, raw ncclAllReduce {:.0} GB/s)",
                mib(bytes),
                gbps(bytes, k),
                gbps(bytes, r)
            ),
            cudakit: k,
            raw: Some(r),
            samples: batches,
        });
    }
    Ok(rows)
}
