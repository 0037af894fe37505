//! Batched copies: many copies of any buffer kinds queued by one driver
//! call (`cuMemcpyBatchAsync`, CUDA 12.8+), each checked as the single copy
//! of its kind is checked ([`Scope::copy_to_device`], [`Scope::copy_to_host`],
//! [`Scope::copy`]): lengths, contexts, borrows for the scope's lifetime.
//!
//! A driver without the entry point gets the same copies one by one
//! (`cuMemcpyAsync`, which takes any pair of addresses under unified
//! addressing), and [`Metrics::copy_batch_fallbacks`](crate::Metrics::copy_batch_fallbacks)
//! counts it. A batch cannot be captured (the driver's batched copy is not
//! a graph operation): inside a capture it is [`Error::IllegalDuringCapture`].
//!
//! ```no_run
//! # fn main() -> cudakit::Result<()> {
//! use cudakit::{Context, CopyBatch};
//! let ctx = Context::new(0)?;
//! let stream = ctx.stream()?;
//! let host: Vec<Vec<f32>> = (0..100).map(|i| vec![i as f32; 1024]).collect();
//! let dev: Vec<_> = (0..100)
//!     .map(|_| ctx.alloc::<f32>(1024))
//!     .collect::<cudakit::Result<_>>()?;
//! ctx.scope(|s| {
//!     let mut batch = CopyBatch::new();
//!     for (h, d) in host.iter().zip(&dev) {
//!         batch.to_device(h, d)?;
//!     }
//!     s.copy_batch(&stream, batch)
//! })?;
//! # Ok(())
//! # }
//! ```

use std::marker::PhantomData;

use cuda_sys::{CUmemLocation, CUmemcpyAttributes, CUmemcpySrcAccessOrder, CUresult};

use crate::context::{same_context, Context};
use crate::error::{Error, Result};
use crate::memory::{byte_len, same_len, DeviceCopy, DeviceDst, DeviceSrc};
use crate::work::scope::{Scope, Use};
use crate::work::stream::Stream;

/// Copies to queue together with [`Scope::copy_batch`]. Each `push` borrows
/// its source and destination for `'s` (the scope's lifetime): shared for
/// what is read, exclusively for host memory that is written.
#[derive(Debug, Default)]
pub struct CopyBatch<'s> {
    ctx: Option<&'s Context>,
    dsts: Vec<u64>,
    srcs: Vec<u64>,
    sizes: Vec<usize>,
    uses: Vec<Use>,
    /// The host ranges, as (address, bytes).
    host: Vec<(u64, usize)>,
    _borrows: PhantomData<&'s mut ()>,
}

impl<'s> CopyBatch<'s> {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty batch with room for `copies` copies.
    pub fn with_capacity(copies: usize) -> Self {
        CopyBatch {
            ctx: None,
            dsts: Vec::with_capacity(copies),
            srcs: Vec::with_capacity(copies),
            sizes: Vec::with_capacity(copies),
            uses: Vec::with_capacity(2 * copies),
            host: Vec::with_capacity(copies),
            _borrows: PhantomData,
        }
    }

    /// Copies in the batch so far.
    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    /// Whether the batch has no copy yet.
    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    fn same_ctx(&mut self, what: &'static str, ctx: &'s Context) -> Result<()> {
        match self.ctx {
            Some(first) => same_context(what, first, ctx),
            None => {
                self.ctx = Some(ctx);
                Ok(())
            }
        }
    }

    fn push(&mut self, dst: u64, src: u64, bytes: usize) {
        self.dsts.push(dst);
        self.srcs.push(src);
        self.sizes.push(bytes);
    }

    /// Adds a host-to-device copy of `src` into `dst`.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`]; [`Error::ContextMismatch`] against the
    /// batch's earlier copies; size overflow.
    pub fn to_device<T: DeviceCopy>(
        &mut self,
        src: &'s [T],
        dst: impl DeviceDst<'s, T>,
    ) -> Result<&mut Self> {
        same_len("copy_batch", dst.len(), src.len())?;
        self.same_ctx("copy_batch", dst.context())?;
        let bytes = byte_len::<T>(src.len(), "copy")?;
        let d = dst.device_ptr().as_raw();
        self.uses.push((d, bytes as u64, dst.origin()));
        self.host.push((src.as_ptr() as usize as u64, bytes));
        self.push(d, src.as_ptr() as usize as u64, bytes);
        Ok(self)
    }

    /// Adds a device-to-host copy of `src` into `dst`.
    ///
    /// # Errors
    ///
    /// As [`CopyBatch::to_device`].
    pub fn to_host<T: DeviceCopy>(
        &mut self,
        src: impl DeviceSrc<'s, T>,
        dst: &'s mut [T],
    ) -> Result<&mut Self> {
        same_len("copy_batch", src.len(), dst.len())?;
        self.same_ctx("copy_batch", src.context())?;
        let bytes = byte_len::<T>(dst.len(), "copy")?;
        let s = src.device_ptr().as_raw();
        self.uses.push((s, bytes as u64, src.origin()));
        self.host.push((dst.as_ptr() as usize as u64, bytes));
        self.push(dst.as_mut_ptr() as usize as u64, s, bytes);
        Ok(self)
    }

    /// Adds a device-to-device copy of `src` into `dst`.
    ///
    /// # Errors
    ///
    /// As [`CopyBatch::to_device`].
    pub fn device<T: DeviceCopy>(
        &mut self,
        src: impl DeviceSrc<'s, T>,
        dst: impl DeviceDst<'s, T>,
    ) -> Result<&mut Self> {
        same_len("copy_batch", src.len(), dst.len())?;
        self.same_ctx("copy_batch", src.context())?;
        self.same_ctx("copy_batch", dst.context())?;
        let bytes = byte_len::<T>(src.len(), "copy")?;
        let (s, d) = (src.device_ptr().as_raw(), dst.device_ptr().as_raw());
        crate::memory::no_overlap("copy_batch", s, d, bytes)?;
        self.uses.push((s, bytes as u64, src.origin()));
        self.uses.push((d, bytes as u64, dst.origin()));
        self.push(d, s, bytes);
        Ok(self)
    }
}

impl<'s, 'env> Scope<'s, 'env> {
    /// Queues every copy of `batch` on `stream` in one driver call
    /// (`cuMemcpyBatchAsync_v2`; `cuMemcpyBatchAsync` on a 12.8 or 12.9
    /// driver), in stream order: the copies start after the work queued
    /// before on `stream`, and work queued after waits for all of them.
    /// The copies of one batch may run in any order among themselves, so
    /// no two of them may write the same memory, and none may read memory
    /// another one writes (checked: [`Error::InvalidArgument`]). See the
    /// [module documentation](self).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for an empty batch or overlapping copies;
    /// [`Error::ContextMismatch`]; [`Error::IllegalDuringCapture`] inside a
    /// capture; [`Error::StreamCaptured`]; driver errors.
    pub fn copy_batch(&self, stream: &'s Stream<'_>, batch: CopyBatch<'s>) -> Result<()> {
        let Some(ctx) = batch.ctx else {
            return Err(Error::InvalidArgument(
                "copy_batch: the batch is empty (at least one copy is needed)".into(),
            ));
        };
        same_context("copy_batch", self.context(), ctx)?;
        refuse_overlaps(&batch)?;
        // A copy of pageable memory waits on the host for the stream, as a
        // single pageable copy does: behind a host callback of this scope
        // that has not run (it could be waiting for this thread) it would
        // never return. Refused, as `copy_to_device` refuses it.
        if self.callback_pending_on(stream.as_raw()) {
            let cu = ctx.enter()?;
            if let Some(&(_, bytes)) = batch.host.iter().find(|&&(p, _)| {
                !crate::memory::staged::is_page_locked(cu, p as usize as *const u8)
            }) {
                return Err(Error::InvalidArgument(format!(
                    "copy_batch: a copy of {bytes} bytes of pageable memory waits on the host for \
                     its stream, where a host callback of this scope has not run yet (it could \
                     be waiting for this thread): use page-locked memory (PinnedBuffer), queue \
                     the batch before the callback, or use another stream"
                )));
            }
        }
        let raw = self.use_stream_for(stream, batch.uses.iter().copied())?;
        if raw.captured() {
            return Err(Error::IllegalDuringCapture {
                operation: "copy_batch (cuMemcpyBatchAsync is not captured into graphs)",
                device: ctx.device().ordinal(),
            });
        }
        let CopyBatch {
            mut dsts,
            mut srcs,
            mut sizes,
            ..
        } = batch;
        let cu = ctx.enter()?;
        let count = sizes.len();
        // One attribute for every copy: sources in stream order.
        let mut attrs = [CUmemcpyAttributes {
            srcAccessOrder: CUmemcpySrcAccessOrder::CU_MEMCPY_SRC_ACCESS_ORDER_STREAM,
            srcLocHint: CUmemLocation::default(),
            dstLocHint: CUmemLocation::default(),
            flags: 0,
        }];
        let mut idx = [0usize];
        let counters = ctx.counters();
        let rc = if let Some(batch_v2) = cu.cuMemcpyBatchAsync {
            // SAFETY: `count` entries in each array; every address range was
            // checked against its buffer when pushed, and stays borrowed
            // (host memory exclusively where written) until the scope has
            // synchronized the stream; one attribute, applying from copy 0;
            // a live stream whose lock `raw` holds.
            unsafe {
                batch_v2(
                    dsts.as_mut_ptr(),
                    srcs.as_mut_ptr(),
                    sizes.as_mut_ptr(),
                    count,
                    attrs.as_mut_ptr(),
                    idx.as_mut_ptr(),
                    1,
                    *raw,
                )
            }
        } else if let Some(batch_v1) = cu.cuMemcpyBatchAsync_v1 {
            let mut fail = usize::MAX;
            // SAFETY: as above, with a valid out-pointer for the failing
            // copy's index.
            unsafe {
                batch_v1(
                    dsts.as_mut_ptr(),
                    srcs.as_mut_ptr(),
                    sizes.as_mut_ptr(),
                    count,
                    attrs.as_mut_ptr(),
                    idx.as_mut_ptr(),
                    1,
                    &mut fail,
                    *raw,
                )
            }
        } else {
            counters
                .copy_batch_fallbacks
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            for i in 0..count {
                // SAFETY: as above, one copy at a time on the same stream.
                let rc = unsafe { (cu.cuMemcpyAsync)(dsts[i], srcs[i], sizes[i], *raw) };
                ctx.check("cuMemcpyAsync", rc)?;
            }
            return Ok(());
        };
        ctx.check("cuMemcpyBatchAsync", rc)?;
        debug_assert_eq!(rc, CUresult::CUDA_SUCCESS);
        counters
            .copy_batches
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}

/// Refuses a batch in which one copy writes memory another copy of the
/// batch reads or writes: the copies of a batch have no order among
/// themselves. Each copy writes one range: the writers sorted by start, a
/// writer that starts before the furthest end of those before it overlaps
/// that one; a copy's source overlaps a writer of another copy when one of
/// the writers that start before the source ends reaches past its start
/// (the two furthest-reaching writers of each prefix, for a source whose
/// own copy is the furthest). O(n log n).
fn refuse_overlaps(batch: &CopyBatch<'_>) -> Result<()> {
    let n = batch.len();
    let mut writers: Vec<(u64, u64, usize)> = (0..n)
        .map(|i| {
            let d = batch.dsts[i];
            (d, d.saturating_add(batch.sizes[i] as u64), i)
        })
        .collect();
    writers.sort_unstable_by_key(|w| w.0);
    // best[k], second[k]: the two furthest ends (with their copies) among
    // writers[..k].
    let mut best: Vec<Option<(u64, usize)>> = Vec::with_capacity(n + 1);
    let mut second: Vec<Option<(u64, usize)>> = Vec::with_capacity(n + 1);
    best.push(None);
    second.push(None);
    for &(start, end, i) in &writers {
        let (b, s2) = (best[best.len() - 1], second[second.len() - 1]);
        if let Some((bend, bi)) = b {
            if start < bend {
                return Err(overlap(bi, i));
            }
        }
        let (nb, ns) = match b {
            Some((bend, _)) if bend >= end => (
                b,
                if s2.map_or(true, |(e, _)| end > e) {
                    Some((end, i))
                } else {
                    s2
                },
            ),
            _ => (Some((end, i)), b),
        };
        best.push(nb);
        second.push(ns);
    }
    for i in 0..n {
        let (start, end) = (
            batch.srcs[i],
            batch.srcs[i].saturating_add(batch.sizes[i] as u64),
        );
        let p = writers.partition_point(|w| w.0 < end);
        let candidate = match best[p] {
            Some((_, bi)) if bi == i => second[p],
            b => b,
        };
        if let Some((wend, wi)) = candidate {
            if wend > start {
                return Err(overlap(wi, i));
            }
        }
    }
    Ok(())
}

fn overlap(a: usize, b: usize) -> Error {
    let (a, b) = (a.min(b), a.max(b));
    Error::InvalidArgument(format!(
        "copy_batch: copies {a} and {b} overlap where one of them writes (the copies of a \
         batch run in no order among themselves); split the batch or queue them one by one"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(ops: &[(u64, u64, usize)]) -> CopyBatch<'static> {
        let mut b = CopyBatch::new();
        for &(d, s, n) in ops {
            b.push(d, s, n);
        }
        b
    }

    #[test]
    fn disjoint_copies_and_shared_sources_pass() {
        // Two copies reading the same source into separate destinations.
        assert!(refuse_overlaps(&batch(&[(1000, 0, 100), (2000, 0, 100)])).is_ok());
        // Back to back destinations.
        assert!(refuse_overlaps(&batch(&[(1000, 0, 100), (1100, 500, 100)])).is_ok());
        // A copy whose own ranges overlap is refused when it is pushed
        // (`CopyBatch::device`, `memory::no_overlap`), not here.
        assert!(refuse_overlaps(&batch(&[(0, 50, 100)])).is_ok());
    }

    #[test]
    fn a_write_over_another_copys_range_is_refused() {
        // Same destination twice.
        let e = refuse_overlaps(&batch(&[(1000, 0, 100), (1050, 500, 100)])).unwrap_err();
        assert!(e.to_string().contains("copies 0 and 1 overlap"), "{e}");
        // One writes what another reads.
        let e = refuse_overlaps(&batch(&[(3000, 0, 10), (1000, 2000, 10), (2005, 4000, 10)]))
            .unwrap_err();
        assert!(e.to_string().contains("copies 1 and 2 overlap"), "{e}");
        // A reader after a long writer of another copy, past a short range
        // of a third (the sweep keeps the two furthest ends).
        let e = refuse_overlaps(&batch(&[
            (0, 10_000, 1000),
            (100, 20_000, 10),
            (900, 30_000, 10),
        ]))
        .unwrap_err();
        assert!(e.to_string().contains("overlap"), "{e}");
        // The furthest writer is the copy itself: the next furthest counts.
        let e = refuse_overlaps(&batch(&[(0, 5000, 100), (50, 0, 1000)])).unwrap_err();
        assert!(e.to_string().contains("copies 0 and 1 overlap"), "{e}");
    }

    /// The sweep against the quadratic definition, on random batches.
    #[test]
    fn the_sweep_agrees_with_every_pair_checked() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = |m: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % m
        };
        for _ in 0..2000 {
            let n = 1 + next(12) as usize;
            let ops: Vec<(u64, u64, usize)> = (0..n)
                .map(|_| (next(400), next(400), 1 + next(40) as usize))
                .collect();
            let hit = |a: u64, an: usize, b: u64, bn: usize| a < b + bn as u64 && b < a + an as u64;
            let mut want = false;
            for i in 0..n {
                for j in 0..n {
                    if i != j {
                        let (di, si, ni) = ops[i];
                        let (dj, sj, nj) = ops[j];
                        want |= hit(di, ni, dj, nj) || hit(di, ni, sj, nj);
                        let _ = si;
                    }
                }
            }
            let got = refuse_overlaps(&batch(&ops)).is_err();
            assert_eq!(got, want, "{ops:?}");
        }
    }
}
