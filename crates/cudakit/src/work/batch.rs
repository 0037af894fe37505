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
    _borrows: PhantomData<&'s mut ()>,
}

impl<'s> CopyBatch<'s> {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
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
/// themselves. Sorting makes it O(n log n).
fn refuse_overlaps(batch: &CopyBatch<'_>) -> Result<()> {
    // (start, end, writes, copy index), for every range a copy touches.
    let mut ranges: Vec<(u64, u64, bool, usize)> = Vec::with_capacity(2 * batch.len());
    for i in 0..batch.len() {
        let n = batch.sizes[i] as u64;
        ranges.push((batch.dsts[i], batch.dsts[i].saturating_add(n), true, i));
        ranges.push((batch.srcs[i], batch.srcs[i].saturating_add(n), false, i));
    }
    ranges.sort_unstable_by_key(|r| (r.0, r.1));
    // Sweep in order of start: a range overlaps an earlier one of another
    // copy when it starts before that one's end. Kept: the two furthest
    // ends of distinct copies, among writers and among all ranges.
    let (mut writers, mut all) = (Reach::default(), Reach::default());
    for &(start, end, writes, i) in &ranges {
        if let Some(w) = writers.furthest_other_than(i) {
            if start < w.0 {
                return Err(overlap(w.1, i));
            }
        }
        if writes {
            if let Some(a) = all.furthest_other_than(i) {
                if start < a.0 {
                    return Err(overlap(a.1, i));
                }
            }
            writers.add(end, i);
        }
        all.add(end, i);
    }
    Ok(())
}

/// The two furthest range ends of distinct copies seen so far.
#[derive(Default)]
struct Reach {
    first: Option<(u64, usize)>,
    second: Option<(u64, usize)>,
}

impl Reach {
    fn add(&mut self, end: u64, copy: usize) {
        match self.first {
            Some((e, c)) if c == copy => {
                if end > e {
                    self.first = Some((end, copy));
                }
            }
            Some((e, c)) if end > e => {
                self.second = Some((e, c));
                self.first = Some((end, copy));
            }
            // Another copy than the furthest, short of it: `second` is the
            // furthest of every copy but the first's.
            Some(_) => {
                if self.second.map_or(true, |(e, _)| end > e) {
                    self.second = Some((end, copy));
                }
            }
            None => self.first = Some((end, copy)),
        }
    }

    fn furthest_other_than(&self, copy: usize) -> Option<(u64, usize)> {
        match self.first {
            Some((_, c)) if c == copy => self.second,
            f => f,
        }
    }
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
        // A copy whose own ranges touch each other is its own business.
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
}
