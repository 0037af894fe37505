//! Benchmarks of the profiler and async surfaces, in the same process on
//! the same device: NVTX ranges with no tool attached, per thousand
//! (absolute: the target is 5 ns or less a range, 5 µs a thousand; it has no raw counterpart, since without a tool
//! there is nothing to call), and awaiting an event that has already
//! finished (`Event::done` polled by a minimal executor) beside the raw
//! `cuEventQuery` that tells the same thing. Each figure is the median of
//! `samples` batches, warm-up excluded, the two sides interleaved.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context as TaskContext, Poll, RawWaker, RawWakerVTable, Waker};
use std::time::{Duration, Instant};

use cudakit::error::check;
use cudakit::{Context, Result};

use crate::bench::{alternating_medians, median, Row};

/// Operations per timed batch of the NVTX row.
const NVTX_PER_BATCH: u32 = 1_000_000;
/// Awaits per timed batch.
const AWAITS_PER_BATCH: u32 = 2_000;

fn noop_raw_waker() -> RawWaker {
    fn clone(_: *const ()) -> RawWaker {
        noop_raw_waker()
    }
    fn noop(_: *const ()) {}
    static VTABLE: RawWakerVTable = RawWakerVTable::new(clone, noop, noop, noop);
    RawWaker::new(std::ptr::null(), &VTABLE)
}

/// Polls `f` until it is ready, spinning: the executor of a future that is
/// expected to be ready at once.
fn block_on<F: Future>(f: F) -> F::Output {
    // SAFETY: the vtable's functions do nothing and never touch the data
    // pointer (null), so every contract of RawWaker holds.
    let waker = unsafe { Waker::from_raw(noop_raw_waker()) };
    let mut cx = TaskContext::from_waker(&waker);
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        std::hint::spin_loop();
    }
}

/// The NVTX and await rows; `samples` batches each.
///
/// # Errors
///
/// Any cudakit error.
pub fn api(ctx: &Context, samples: usize) -> Result<Vec<Row>> {
    let samples = samples.max(3);
    let mut rows = Vec::new();

    // --- an NVTX range with no tool attached
    let tool = cudakit::nvtx::status().is_none();
    let nvtx_batch = || {
        let t = Instant::now();
        for _ in 0..NVTX_PER_BATCH {
            let r = cudakit::nvtx::range(black_box("cudakit bench"));
            black_box(&r);
            drop(r);
        }
        // Per thousand ranges: a Duration counts whole nanoseconds.
        t.elapsed() / (NVTX_PER_BATCH / 1000)
    };
    nvtx_batch();
    let nvtx: Vec<Duration> = (0..samples).map(|_| nvtx_batch()).collect();
    rows.push(Row {
        name: if tool {
            "1000 NVTX ranges (a tool is attached)".into()
        } else {
            "1000 NVTX ranges, no tool attached".into()
        },
        cudakit: median(nvtx),
        raw: None,
        samples,
    });

    // --- awaiting an event that has finished
    let stream = ctx.stream()?;
    let event = ctx.event()?;
    event.record(&stream)?;
    event.synchronize()?;
    let cu = cudakit::sys::driver()?;
    let raw_event = event.as_raw();
    let raw_batch = || -> Result<Duration> {
        let t = Instant::now();
        for _ in 0..AWAITS_PER_BATCH {
            // SAFETY: a live event of the current context.
            check("cuEventQuery", unsafe { (cu.cuEventQuery)(raw_event) })?;
        }
        Ok(t.elapsed() / AWAITS_PER_BATCH)
    };
    let kit_batch = || -> Result<Duration> {
        let t = Instant::now();
        for _ in 0..AWAITS_PER_BATCH {
            block_on(event.done()?)?;
        }
        Ok(t.elapsed() / AWAITS_PER_BATCH)
    };
    // The context is current on this thread (the synchronize above made it
    // so), as the raw calls need.
    raw_batch()?;
    kit_batch()?;
    let (raw, kit) = alternating_medians(samples, raw_batch, kit_batch)?;
    rows.push(Row {
        name: "await a finished event (vs cuEventQuery)".into(),
        cudakit: kit,
        raw: Some(raw),
        samples,
    });
    Ok(rows)
}
