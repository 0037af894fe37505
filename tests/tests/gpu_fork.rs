//! `fork` after the staged pipeline ran (issue 20): the child of a process
//! that uses CUDA may not call the driver (CUDA's state does not survive
//! `fork`; NVIDIA calls any use there undefined behaviour). cudakit refuses
//! every driver call in such a child with `Error::ForkedChild` and frees
//! nothing there; the pipeline's host side (its copy threads did not
//! survive either) copies on the calling thread alone, and the parent goes
//! on unharmed.
//!
//! One test in a binary of its own: `fork` copies only the calling thread,
//! and a lock another test's thread held at that moment would stay locked
//! in the child.

use std::ffi::c_int;
use std::time::{Duration, Instant};

use cudakit::memory::staged::{host_copy, CHUNK};
use cudakit::{Context, Error};
use cudakit_suite::rng::Rng;

extern "C" {
    fn fork() -> c_int;
    fn waitpid(pid: c_int, status: *mut c_int, options: c_int) -> c_int;
    fn kill(pid: c_int, sig: c_int) -> c_int;
    fn _exit(code: c_int) -> !;
}

const WNOHANG: c_int = 1;
const SIGKILL: c_int = 9;

fn bytes(rng: &mut Rng, n: usize) -> Vec<u8> {
    (0..n).map(|_| rng.next_u64() as u8).collect()
}

/// The checks of the child: the number of the first that failed, or 0.
fn in_child(
    ctx: &Context,
    dev: &cudakit::DeviceBuffer<u8>,
    src: &[u8],
    pinned: &cudakit::PinnedBuffer<u32>,
    unified: &cudakit::UnifiedBuffer<u32>,
) -> c_int {
    let mut out = vec![0xA5u8; src.len()];
    if !matches!(dev.copy_to_host(&mut out), Err(Error::ForkedChild)) {
        return 1;
    }
    if out.iter().any(|&b| b != 0xA5) {
        return 2;
    }
    if !matches!(ctx.upload(src), Err(Error::ForkedChild)) {
        return 3;
    }
    if !matches!(Context::new(0), Err(Error::ForkedChild)) {
        return 4;
    }
    if !matches!(ctx.stream(), Err(Error::ForkedChild)) {
        return 5;
    }
    // Managed memory is not mapped in the child (a raw read there is
    // SIGSEGV, measured): its views are refused.
    if !matches!(unified.as_slice(), Err(Error::ForkedChild)) {
        return 7;
    }
    // Page-locked memory stays shared with the parent: its slice panics
    // rather than hand out memory the parent's copies may use.
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pinned[0])).is_ok() {
        return 8;
    }
    // The pipeline's host half, on this thread alone.
    if host_copy(&mut out, src).is_err() || out != src {
        return 6;
    }
    // The parent's context dropped here frees nothing and does not hang.
    drop(ctx.clone());
    0
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_child_forked_after_staged_transfers_refuses_the_driver() {
    let ctx = Context::new(0).expect("device 0");
    let mut rng = Rng::new();
    let n = 3 * CHUNK + 4321;
    let src = bytes(&mut rng, n);
    // Staged both ways in the parent: chunks made, copy threads started.
    let dev = ctx.upload(&src).expect("upload");
    let mut back = vec![0x5Au8; n];
    dev.copy_to_host(&mut back).expect("download");
    assert!(back == src, "staged round trip in the parent");
    let mut pinned = ctx.alloc_pinned::<u32>(1024).expect("pinned");
    pinned
        .iter_mut()
        .enumerate()
        .for_each(|(i, v)| *v = i as u32 * 5 + 2);
    let unified = ctx.alloc_unified::<u32>(1024).expect("unified");

    // SAFETY: the child runs only `in_child` (cudakit calls, which refuse
    // the driver after the atfork handler ran, and host memory work) and
    // leaves with `_exit`, running none of the parent's destructors.
    let pid = unsafe { fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            in_child(&ctx, &dev, &src, &pinned, &unified)
        }))
        .unwrap_or(100);
        // SAFETY: ends the child without unwinding into the harness.
        unsafe { _exit(code) };
    }
    let started = Instant::now();
    let mut status: c_int = 0;
    loop {
        // SAFETY: our own child; a valid out-pointer.
        let r = unsafe { waitpid(pid, &mut status, WNOHANG) };
        if r == pid {
            break;
        }
        assert_eq!(r, 0, "waitpid failed");
        if started.elapsed() > Duration::from_secs(120) {
            // SAFETY: our own child, which hung.
            unsafe { kill(pid, SIGKILL) };
            panic!("the forked child hung");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(
        status & 0x7f,
        0,
        "the child died of signal {}",
        status & 0x7f
    );
    assert_eq!(
        (status >> 8) & 0xff,
        0,
        "check {} failed in the child",
        (status >> 8) & 0xff
    );

    // The parent, after the child's drops: the pipeline both ways again,
    // with fresh data over the same buffer.
    let src2 = bytes(&mut rng, n);
    dev.copy_from_host(&src2).expect("upload after fork");
    let mut back2 = vec![0x5Au8; n];
    dev.copy_to_host(&mut back2).expect("download after fork");
    assert!(back2 == src2, "staged round trip after the fork");
    // The child's panic on the shared page-locked memory wrote nothing.
    assert!(pinned
        .iter()
        .enumerate()
        .all(|(i, &v)| v == i as u32 * 5 + 2));
    assert!(unified
        .as_slice()
        .expect("unified view")
        .iter()
        .all(|&v| v == 0));
    drop((dev, pinned, unified));
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
    assert!(ctx.leak_report().is_empty(), "{}", ctx.leak_report());
}
