//! The staged pipeline for pageable transfers (issue 14): byte-exact at odd
//! lengths and unaligned starts, both directions, both at once from two
//! threads, its page-locked chunks recorded in the arena as `Staging` (and
//! left out of the leak report), freed by `release_staging`.

use cudakit::context::arena::AllocKind;
use cudakit::memory::staged::{CHUNK, STAGE_MIN};
use cudakit::Context;
use cudakit_suite::rng::Rng;

/// Sets the process's pageable policy, the registering ones included.
fn set_policy(policy: cudakit::memory::staged::PageablePolicy) {
    // SAFETY: every test of this file copies from host memory of its own;
    // no thread queues asynchronous copies from the host memory that a
    // registering transfer of another test uses.
    unsafe { cudakit::memory::staged::set_pageable_policy_unchecked(policy) };
}

fn bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next_u64() as u8).collect()
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn staged_transfers_are_byte_exact_at_odd_lengths_and_offsets() {
    let ctx = Context::new(0).expect("device 0");
    let mut rng = Rng::new();
    // Lengths around the threshold and the chunk size, odd, several chunks.
    let lengths = [
        STAGE_MIN,
        STAGE_MIN + 1,
        CHUNK - 3,
        CHUNK + 7,
        4 * CHUNK + 12_345,
        9 * CHUNK + 1,
    ];
    for (k, &n) in lengths.iter().enumerate() {
        let offset = 1 + k % 7; // unaligned start inside a larger buffer
        let host = bytes(&mut rng, n + offset + 5);
        let src = &host[offset..offset + n];
        let dev = ctx.upload(src).expect("upload");
        // Read back through the driver path in pieces below the threshold,
        // so the check does not rely on the pipeline itself.
        let mut piece = vec![0u8; STAGE_MIN / 2];
        let mut pos = 0;
        while pos < n {
            let m = piece.len().min(n - pos);
            dev.view(pos..pos + m)
                .expect("view")
                .copy_to_host(&mut piece[..m])
                .expect("read back");
            assert!(
                piece[..m] == src[pos..pos + m],
                "upload of {n} bytes differs near {pos}"
            );
            pos += m;
        }
        // Device to host through the pipeline, into an unaligned slice with
        // poisoned guards on both sides.
        let mut out = vec![0xA5u8; n + offset + 5];
        dev.copy_to_host(&mut out[offset..offset + n])
            .expect("download");
        assert!(out[..offset].iter().all(|&b| b == 0xA5), "guard before");
        assert!(out[offset + n..].iter().all(|&b| b == 0xA5), "guard after");
        assert!(
            out[offset..offset + n] == *src,
            "download of {n} bytes differs"
        );
        let v = dev.to_vec().expect("to_vec");
        assert!(v == src, "to_vec of {n} bytes differs");
    }
    // Wider elements at an odd element count.
    let n = (3 * CHUNK) / 4 + 3;
    let data: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
    let dev = ctx.upload(&data).expect("upload u32");
    assert_eq!(dev.to_vec().expect("to_vec u32"), data);

    let staging = ctx.stats().kind(AllocKind::Staging).live_bytes;
    assert!(staging > 0, "the pipeline's chunks are recorded as Staging");
    assert!(!ctx.leak_report().contains("Staging"));
    drop(dev);
    ctx.release_staging();
    assert_eq!(ctx.stats().kind(AllocKind::Staging).live_bytes, 0);
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn both_directions_at_once_from_two_threads() {
    let ctx = Context::new(0).expect("device 0");
    let mut rng = Rng::new();
    let n = 6 * CHUNK + 101;
    let up = bytes(&mut rng, n);
    let down_src = bytes(&mut rng, n);
    let a = ctx.alloc::<u8>(n).expect("alloc");
    let b = ctx.upload(&down_src).expect("upload");
    let mut down = vec![0u8; n];
    for _ in 0..3 {
        std::thread::scope(|t| {
            t.spawn(|| a.copy_from_host(&up).expect("up"));
            t.spawn(|| b.copy_to_host(&mut down).expect("down"));
        });
        assert!(down == down_src);
        assert!(a.to_vec().expect("read") == up);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn staged_copies_inside_a_scope_keep_stream_order() {
    let ctx = Context::new(0).expect("device 0");
    let mut rng = Rng::new();
    let stream = ctx.stream().expect("stream");
    let n = 3 * CHUNK + 333;
    let data = bytes(&mut rng, n);
    let a = ctx.upload(&data).expect("upload");
    let b = ctx.alloc::<u8>(n).expect("alloc");
    b.fill(0x5A).expect("poison");
    let c = ctx.alloc::<u8>(n).expect("alloc");
    let d = ctx.alloc::<u8>(n).expect("alloc");
    d.fill(0x5A).expect("poison");
    let src = bytes(&mut rng, n);
    let mut out = vec![0xC3u8; n];
    ctx.scope(|s| {
        // Device to device, then a staged download of its destination: the
        // download must come after the copy on the stream.
        s.copy(&stream, &a, &b)?;
        s.copy_to_host(&stream, &b, &mut out)?;
        // A staged upload, then a device copy of its destination.
        s.copy_to_device(&stream, &src, &c)?;
        s.copy(&stream, &c, &d)?;
        Ok(())
    })
    .expect("scope");
    assert!(
        out == data,
        "the staged download ran before the copy it follows"
    );
    assert!(
        d.to_vec().expect("read") == src,
        "the copy ran before the staged upload"
    );
}

/// `CUDAKIT_STAGING_THREADS=0`: the calling thread copies alone. The
/// setting is read once per process, so the case runs in a child process
/// (this binary, filtered to this test, with the variable set); the child
/// round-trips 40 MiB through the pipeline and checks every byte.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn staged_transfers_with_no_copy_threads() {
    if std::env::var_os("CUDAKIT_STAGED_CHILD").is_some() {
        assert_eq!(
            std::env::var("CUDAKIT_STAGING_THREADS").as_deref(),
            Ok("0"),
            "the child runs with CUDAKIT_STAGING_THREADS=0"
        );
        let ctx = Context::new(0).expect("device 0");
        let mut rng = Rng::new();
        let n = (40 << 20) + 7;
        let src = bytes(&mut rng, n);
        let dev = ctx.alloc::<u8>(n).expect("alloc");
        dev.copy_from_host(&src).expect("staged upload");
        let mut back = vec![0x5Au8; n];
        dev.copy_to_host(&mut back).expect("staged download");
        assert!(back == src, "a byte differs after the round trip");
        println!("STAGED-CHILD ok");
        return;
    }
    let exe = std::env::current_exe().expect("own executable");
    let out = std::process::Command::new(exe)
        .args([
            "staged_transfers_with_no_copy_threads",
            "--exact",
            "--include-ignored",
            "--nocapture",
        ])
        .env("CUDAKIT_STAGED_CHILD", "1")
        .env("CUDAKIT_STAGING_THREADS", "0")
        .output()
        .expect("spawn the child");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("STAGED-CHILD ok"),
        "child failed ({:?}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `release_staging` while another thread's staged transfer runs: the
/// transfer's chunks are not freed under it (every round trip stays byte
/// exact), and afterwards the cache can be released and rebuilt.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn release_staging_during_another_threads_transfer() {
    let ctx = Context::new(0).expect("device 0");
    let mut rng = Rng::new();
    let n = 48 << 20;
    let src = bytes(&mut rng, n);
    let dev = ctx.alloc::<u8>(n).expect("alloc");
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|t| {
        t.spawn(|| {
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                ctx.release_staging();
                std::thread::yield_now();
            }
        });
        for round in 0..6 {
            dev.copy_from_host(&src).expect("upload");
            let mut back = vec![0xA5u8; n];
            dev.copy_to_host(&mut back).expect("download");
            assert!(back == src, "round {round}: a byte differs");
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    ctx.release_staging();
    assert_eq!(
        ctx.stats().kind(cudakit::AllocKind::Staging).live_count,
        0,
        "{}",
        ctx.leak_report()
    );
}

/// Reads `dev` back in pieces below the pipeline's threshold (the driver's
/// own path), so that a check does not rely on the pipeline itself.
fn read_back(dev: &cudakit::DeviceBuffer<'_, u8>, want: &[u8], what: &str) {
    let n = want.len();
    let mut piece = vec![0u8; STAGE_MIN / 2];
    let mut pos = 0;
    while pos < n {
        let m = piece.len().min(n - pos);
        dev.view(pos..pos + m)
            .expect("view")
            .copy_to_host(&mut piece[..m])
            .expect("read back");
        assert!(
            piece[..m] == want[pos..pos + m],
            "{what}: differs near {pos}"
        );
        pos += m;
    }
}

/// Every pageable policy (staged, registered, one of each), both
/// directions at once from two threads, odd lengths and offsets, fresh
/// data each round; a range someone else registered first (the driver's
/// CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED for cudakit's registration)
/// falls back to staging. Every policy must be byte-exact; the policy is
/// the process's, restored at the end.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn every_pageable_policy_is_byte_exact_both_ways_at_once() {
    use cudakit::memory::staged::{self, PageablePolicy};
    let ctx = Context::new(0).expect("device 0");
    let mut rng = Rng::new();
    let before = staged::pageable_policy();
    for policy in [
        PageablePolicy::Stage,
        PageablePolicy::Register,
        PageablePolicy::RegisterUploads,
        PageablePolicy::RegisterDownloads,
        PageablePolicy::Auto,
    ] {
        set_policy(policy);
        for round in 0..3usize {
            let n = STAGE_MIN + rng.range(0, 5 * CHUNK);
            let (uo, doff) = (rng.range(0, 70_000), rng.range(0, 70_000));
            let up_host = bytes(&mut rng, n + uo + 3);
            let down_want = bytes(&mut rng, n);
            let up_dev = ctx.alloc::<u8>(n).expect("alloc");
            // Filled through the driver's path in pieces.
            let down_dev = ctx.alloc::<u8>(n).expect("alloc");
            let mut pos = 0;
            while pos < n {
                let m = (STAGE_MIN / 2).min(n - pos);
                down_dev
                    .view(pos..pos + m)
                    .expect("view")
                    .copy_from_host(&down_want[pos..pos + m])
                    .expect("fill");
                pos += m;
            }
            let mut down_host = vec![0xA5u8; n + doff + 9];
            std::thread::scope(|t| {
                let up = t.spawn(|| up_dev.copy_from_host(&up_host[uo..uo + n]));
                let down = t.spawn(|| down_dev.copy_to_host(&mut down_host[doff..doff + n]));
                up.join().expect("upload thread").expect("upload");
                down.join().expect("download thread").expect("download");
            });
            let what = format!("{policy:?} round {round}, {n} bytes ({})", rng.describe());
            read_back(&up_dev, &up_host[uo..uo + n], &format!("{what}: upload"));
            assert!(
                down_host[..doff].iter().all(|&b| b == 0xA5),
                "{what}: guard"
            );
            assert!(
                down_host[doff + n..].iter().all(|&b| b == 0xA5),
                "{what}: guard"
            );
            assert!(
                down_host[doff..doff + n] == down_want[..],
                "{what}: download"
            );
        }
    }
    // Someone else's registration inside the source: cudakit's is refused
    // (712) and the transfer is staged, exact all the same.
    set_policy(PageablePolicy::Register);
    let n = 3 * CHUNK + 77;
    let src = bytes(&mut rng, n);
    let dev = ctx.alloc::<u8>(n).expect("alloc");
    let cu = cudakit::sys::driver().unwrap();
    let block = (src.as_ptr() as usize).div_ceil(1 << 16) * (1 << 16) + CHUNK;
    // SAFETY: 1 MiB inside `src`, which outlives the registration; undone
    // below.
    let rc = unsafe { (cu.cuMemHostRegister)(block as *mut _, 1 << 20, 0) };
    assert_eq!(rc, cudakit::sys::CUresult::CUDA_SUCCESS);
    dev.copy_from_host(&src)
        .expect("upload past a foreign registration");
    read_back(&dev, &src, "past a foreign registration");
    // SAFETY: registered above; no DMA uses it now (the copy returned).
    let rc = unsafe { (cu.cuMemHostUnregister)(block as *mut _) };
    assert_eq!(rc, cudakit::sys::CUresult::CUDA_SUCCESS);
    set_policy(before);
    assert!(ctx.poisoned().is_none());
    assert_eq!(ctx.stats().kind(AllocKind::Leaked).live_count, 0);
}

/// `Context::with_registered`: the slice registered once, transfers both
/// ways byte-exact (unaligned start and odd length inside a larger
/// allocation, so both edges go through the chunk), the bytes around it
/// untouched, several rounds with the host changing the data in between;
/// two scopes at once from two threads, one uploading, one downloading.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_registered_scope_is_byte_exact_both_ways_and_from_two_threads() {
    let ctx = Context::new(0).expect("device 0");
    let mut rng = Rng::new();
    let n = 5 * CHUNK + 4_321;
    let offset = 3;
    let mut whole = vec![0x3Cu8; n + offset + 9];
    let dev = ctx.alloc::<u8>(n).expect("alloc");
    let other = ctx.upload(&bytes(&mut rng, n)).expect("upload");
    let mut other_copy = vec![0u8; n];
    other.copy_to_host(&mut other_copy).expect("read back");
    let rounds: Vec<Vec<u8>> = (0..3).map(|_| bytes(&mut rng, n)).collect();
    ctx.with_registered(&mut whole[offset..offset + n], |h| {
        assert!(h.is_registered(), "a large pageable slice is registered");
        for (r, data) in rounds.iter().enumerate() {
            h.as_mut_slice().copy_from_slice(data);
            h.upload_to(&dev).expect("upload");
            read_back(&dev, data, &format!("registered upload, round {r}"));
            h.download_from(&other).expect("download");
            assert!(
                h.as_slice() == &other_copy[..],
                "registered download, round {r}"
            );
        }
    })
    .expect("with_registered");
    assert!(whole[..offset].iter().all(|&b| b == 0x3C), "bytes before");
    assert!(
        whole[offset + n..].iter().all(|&b| b == 0x3C),
        "bytes after"
    );

    // Both directions at once, each thread with its own scope.
    let up = bytes(&mut rng, n);
    let mut up_host = up.clone();
    let mut down_host = vec![0u8; n];
    let dev_up = ctx.alloc::<u8>(n).expect("alloc");
    std::thread::scope(|t| {
        let a = t.spawn(|| {
            ctx.with_registered(&mut up_host, |h| {
                assert!(
                    h.is_registered(),
                    "the uploading thread's slice is registered"
                );
                for _ in 0..4 {
                    h.upload_to(&dev_up).expect("upload");
                }
            })
        });
        let b = t.spawn(|| {
            ctx.with_registered(&mut down_host, |h| {
                assert!(
                    h.is_registered(),
                    "the downloading thread's slice is registered"
                );
                for _ in 0..4 {
                    h.download_from(&other).expect("download");
                }
            })
        });
        a.join().unwrap().expect("uploads");
        b.join().unwrap().expect("downloads");
    });
    read_back(&dev_up, &up, "registered uploads beside downloads");
    assert!(
        down_host == other_copy,
        "registered downloads beside uploads"
    );
}
