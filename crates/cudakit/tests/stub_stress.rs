//! Many threads against one capturing thread, on the stand-in libcuda
//! (issue 20: "stress the rules with many threads in CI"). While one thread
//! captures a shared stream in a loop (dropping buffers inside each
//! capture), four others, on the same stream and on their own:
//! - queue host functions and launches in scopes (refused or run, never
//!   captured: `stub_foreign_captured` stays 0);
//! - drop device and pinned buffers and free pool buffers (freed at once,
//!   or after the capture that owns their stream; never refused);
//! - make synchronous copies (they run: another thread's capture does not
//!   refuse them, and they do not invalidate it).
//!
//! Afterwards: every capture ended cleanly, nothing was refused for a
//! capture reason, and the arena is back to zero with nothing leaked.
//!
//! Process-global (`CUDAKIT_LIBCUDA`), hence a binary of its own.

#[path = "../../cuda-sys/tests/support/stub.rs"]
mod stub;

use stub::call0;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use cudakit::{AllocKind, Context, Error};

/// The stand-in's refusal counters, by reason (see its `stub_refusals`).
fn refusals(lib: &libloading::Library) -> [u64; 11] {
    // SAFETY: exported by the stand-in with this signature.
    let f =
        unsafe { lib.get::<unsafe extern "C" fn(*mut u64, usize) -> usize>(b"stub_refusals\0") }
            .expect("stub_refusals");
    let mut out = [0u64; 11];
    // SAFETY: eleven writable u64s.
    unsafe { f(out.as_mut_ptr(), out.len()) };
    out
}

#[test]
fn many_threads_against_a_capturing_thread() {
    let path = stub::build_stub("");
    std::env::set_var("CUDAKIT_LIBCUDA", &path);
    // SAFETY: the stand-in library's initialisers are Rust statics only.
    let lib = unsafe { libloading::Library::new(&path) }.expect("open the stand-in");
    let ctx = Context::new(0).expect("context on the stand-in");
    let module = ctx
        .load_module_image(b".version 8.8\n.target sm_90\n.address_size 64\n")
        .expect("module");
    let f = module.function("k").expect("function");
    let shared = ctx.stream().expect("shared stream");
    let pool = ctx.default_pool().expect("default pool");
    let cfg = cudakit::LaunchConfig::new(1, 32);
    let foreign_before: u64 = call0(&lib, b"stub_foreign_captured\0");
    let refused_before = refusals(&lib);
    let stop = AtomicBool::new(false);
    let (ran, refused) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let mut captures = 0usize;
    std::thread::scope(|t| {
        for worker in 0..4usize {
            let (ctx, shared, pool, f, stop, ran, refused) =
                (&ctx, &shared, &pool, &f, &stop, &ran, &refused);
            t.spawn(move || {
                let own = ctx.stream().expect("own stream");
                let mut round = 0usize;
                while !stop.load(Ordering::Relaxed) {
                    round += 1;
                    let stream = if round % 2 == 0 { shared } else { &own };
                    let hits = AtomicUsize::new(0);
                    let r = ctx.scope(|s| {
                        s.host_fn(stream, || {
                            hits.fetch_add(1, Ordering::Relaxed);
                        })?;
                        // SAFETY: the stand-in runs nothing.
                        unsafe { s.launch(stream, f, &cfg, &cudakit::params![]) }
                    });
                    match r {
                        Ok(()) => {
                            assert_eq!(hits.load(Ordering::Relaxed), 1, "worker {worker}");
                            ran.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(Error::StreamCaptured { .. }) => {
                            refused.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => panic!("worker {worker}: {e}"),
                    }
                    // Drops and frees of every kind, on a thread that does
                    // not capture, while the shared stream may be captured.
                    let dev = ctx.alloc::<u32>(256).expect("device buffer");
                    dev.copy_from_host(&[worker as u32; 256])
                        .expect("a synchronous copy during another thread's capture");
                    let pinned = ctx.alloc_pinned::<u32>(64).expect("pinned");
                    let ordered = pool.alloc::<u32>(stream, 64);
                    drop((dev, pinned));
                    match ordered {
                        Ok(b) if round % 3 == 0 => b.free().expect("free"),
                        Ok(b) => drop(b),
                        Err(Error::StreamCaptured { .. }) => {}
                        Err(e) => panic!("worker {worker}: pool alloc: {e}"),
                    }
                }
            });
        }
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(1500) {
            let doomed = ctx.alloc::<u8>(4096).expect("doomed");
            let r = ctx.scope(|s| {
                s.capture(&shared, move || {
                    drop(doomed);
                    std::thread::yield_now();
                    Ok(())
                })
                .map(drop)
            });
            r.unwrap_or_else(|e| panic!("capture {captures}: {e}"));
            captures += 1;
        }
        stop.store(true, Ordering::Relaxed);
    });
    let foreign: u64 = call0(&lib, b"stub_foreign_captured\0");
    assert_eq!(
        foreign - foreign_before,
        0,
        "another thread's work entered a capture"
    );
    let after = refusals(&lib);
    for (reason, (a, b)) in after.iter().zip(refused_before.iter()).enumerate() {
        assert_eq!(a, b, "the stand-in refused calls for reason #{reason}");
    }
    assert!(captures > 10, "only {captures} captures");
    assert!(ran.load(Ordering::Relaxed) > 0, "no worker's scope ran");
    eprintln!(
        "captures {captures}, worker scopes run {}, refused {}",
        ran.load(Ordering::Relaxed),
        refused.load(Ordering::Relaxed)
    );
    drop(module);
    assert_eq!(ctx.stats().live_count(), 0, "{}", ctx.leak_report());
    assert_eq!(ctx.stats().kind(AllocKind::Leaked).total_allocs, 0);
    assert!(ctx.drop_errors().is_empty(), "{:?}", ctx.drop_errors());
}
