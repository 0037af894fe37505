//! Time and bytes for compile, module load, HtoD, DtoH, DtoD and kernels.
//!
//! Counters are atomics on the context; the default launch path only bumps
//! a launch counter. Kernel time per function is measured only when asked
//! for ([`crate::Context::set_kernel_timing`]), with events around each
//! launch, read when the scope that launched it ends.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Bytes and time of one kind of transfer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Transfer {
    /// Number of copies.
    pub count: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Time spent, where it was measured (synchronous copies by the host
    /// clock; asynchronous ones by events when kernel timing is on).
    pub time: Duration,
}

impl Transfer {
    /// Bytes per second over the measured time (0 when none was measured).
    pub fn bytes_per_second(&self) -> f64 {
        let s = self.time.as_secs_f64();
        if s > 0.0 {
            self.bytes as f64 / s
        } else {
            0.0
        }
    }
}

/// Kernel time of one function.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelTime {
    /// Timed launches.
    pub launches: u64,
    /// Total time between the events around them.
    pub total: Duration,
}

/// A snapshot of a context's metrics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Metrics {
    /// Host to device copies.
    pub htod: Transfer,
    /// Device to host copies.
    pub dtoh: Transfer,
    /// Device to device copies.
    pub dtod: Transfer,
    /// NVRTC compiles (bytes: PTX/CUBIN produced).
    pub compile: Transfer,
    /// Module loads (bytes: image size).
    pub module_load: Transfer,
    /// Kernel launches (those of a scope are counted when it ends).
    pub launches: u64,
    /// Launches of executable graphs (`cuGraphLaunch`); with kernel timing
    /// on, the replay time of each graph is filed in `kernels` under
    /// `graph <label>`.
    pub graph_launches: u64,
    /// Batched copies issued as one `cuMemcpyBatchAsync` call
    /// ([`Scope::copy_batch`](crate::Scope::copy_batch)).
    pub copy_batches: u64,
    /// Batched copies issued one copy at a time, because the driver lacks
    /// `cuMemcpyBatchAsync` (before CUDA 12.8).
    pub copy_batch_fallbacks: u64,
    /// Kernel time per function name, when timing was on.
    pub kernels: HashMap<String, KernelTime>,
}

#[derive(Default)]
pub(crate) struct TransferCounters {
    count: AtomicU64,
    bytes: AtomicU64,
    nanos: AtomicU64,
}

impl TransferCounters {
    pub(crate) fn add(&self, bytes: usize, time: Option<Duration>) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.bytes.fetch_add(bytes as u64, Ordering::Relaxed);
        if let Some(t) = time {
            self.nanos.fetch_add(t.as_nanos() as u64, Ordering::Relaxed);
        }
    }

    pub(crate) fn add_time(&self, time: Duration) {
        self.nanos
            .fetch_add(time.as_nanos() as u64, Ordering::Relaxed);
    }

    fn snapshot(&self) -> Transfer {
        Transfer {
            count: self.count.load(Ordering::Relaxed),
            bytes: self.bytes.load(Ordering::Relaxed),
            time: Duration::from_nanos(self.nanos.load(Ordering::Relaxed)),
        }
    }
}

/// The live counters of a context.
#[derive(Default)]
pub(crate) struct MetricsCounters {
    pub(crate) htod: TransferCounters,
    pub(crate) dtoh: TransferCounters,
    pub(crate) dtod: TransferCounters,
    pub(crate) compile: TransferCounters,
    pub(crate) module_load: TransferCounters,
    pub(crate) launches: AtomicU64,
    pub(crate) graph_launches: AtomicU64,
    pub(crate) copy_batches: AtomicU64,
    pub(crate) copy_batch_fallbacks: AtomicU64,
    pub(crate) kernels: Mutex<HashMap<String, KernelTime>>,
}

impl MetricsCounters {
    pub(crate) fn add_kernel_time(&self, name: &str, time: Duration) {
        let mut map = super::lock(&self.kernels);
        let entry = map.entry(name.to_owned()).or_default();
        entry.launches += 1;
        entry.total += time;
    }

    pub(crate) fn snapshot(&self) -> Metrics {
        let kernels = super::lock(&self.kernels).clone();
        Metrics {
            htod: self.htod.snapshot(),
            dtoh: self.dtoh.snapshot(),
            dtod: self.dtod.snapshot(),
            compile: self.compile.snapshot(),
            module_load: self.module_load.snapshot(),
            launches: self.launches.load(Ordering::Relaxed),
            graph_launches: self.graph_launches.load(Ordering::Relaxed),
            copy_batches: self.copy_batches.load(Ordering::Relaxed),
            copy_batch_fallbacks: self.copy_batch_fallbacks.load(Ordering::Relaxed),
            kernels,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_accumulate() {
        let m = MetricsCounters::default();
        m.htod.add(100, Some(Duration::from_micros(10)));
        m.htod.add(50, None);
        m.add_kernel_time("k", Duration::from_micros(3));
        m.add_kernel_time("k", Duration::from_micros(4));
        let s = m.snapshot();
        assert_eq!(s.htod.count, 2);
        assert_eq!(s.htod.bytes, 150);
        assert_eq!(s.htod.time, Duration::from_micros(10));
        assert_eq!(s.kernels["k"].launches, 2);
        assert_eq!(s.kernels["k"].total, Duration::from_micros(7));
        assert!((s.htod.bytes_per_second() - 15e6).abs() < 1.0);
    }
}
