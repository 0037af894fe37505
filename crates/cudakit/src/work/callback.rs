//! Host callbacks: a Rust closure run in stream order (`cuLaunchHostFunc`),
//! after the work queued before it on the stream and before the work
//! queued after it.
//!
//! ```no_run
//! # use std::sync::atomic::{AtomicUsize, Ordering};
//! # fn main() -> cudakit::Result<()> {
//! let ctx = cudakit::Context::new(0)?;
//! let stream = ctx.stream()?;
//! let calls = AtomicUsize::new(0);
//! ctx.scope(|s| {
//!     s.host_fn(&stream, || {
//!         calls.fetch_add(1, Ordering::Relaxed);
//!     })
//! })?; // the callback has run here
//! assert_eq!(calls.load(Ordering::Relaxed), 1);
//! # Ok(()) }
//! ```
//!
//! # Borrowing
//!
//! The closure may borrow whatever outlives the scope (`'s`), as the
//! scope's other work does: the scope waits for the stream, and so for the
//! callback, before those borrows end. It must be `Send`: the driver runs
//! it on a thread of its own.
//!
//! # Panics inside a callback
//!
//! A panic never unwinds into the driver. The callback's trampoline catches
//! it, keeps its message, and the scope that queued the callback returns
//! [`Error::HostCallbackPanicked`](crate::Error::HostCallbackPanicked) when
//! it ends (after its streams have synchronized, so the work queued after
//! the callback has run too). The
//! context stays usable. A panic in a graph's host node is reported by the
//! scope that launched an executable graph of that graph last (for the host
//! nodes of a child graph: see [`Graph::add_child`](crate::work::graph::Graph::add_child)).
//!
//! # What a callback must not do
//!
//! CUDA forbids driver calls inside a host function (they may deadlock or
//! fail). cudakit cannot check what a closure calls; a closure that calls
//! into cudakit gets the driver's error or hangs, never undefined behaviour
//! of Rust's.

use crate::error::Result;
use crate::work::graph::Kept;
use crate::work::scope::{record_callback_panic as record_panic, Scope};
use crate::work::stream::Stream;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// A one-shot callback: freed by the trampoline after its one call.
struct Once<F> {
    key: usize,
    f: F,
}

/// The trampoline of a one-shot callback.
///
/// # Safety
///
/// `user` comes from `Box::into_raw` of a `Once<F>` and the driver calls
/// this exactly once for it.
unsafe extern "C" fn run_once<F: FnOnce() + Send>(user: *mut c_void) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the function's contract: a `Box<Once<F>>` turned into a
        // raw pointer by `Scope::host_fn`, handed back exactly once.
        let once = unsafe { Box::from_raw(user.cast::<Once<F>>()) };
        let Once { key, f } = *once;
        if let Err(payload) = catch_unwind(AssertUnwindSafe(f)) {
            record_panic(key, payload);
        }
    }));
    // Only the bookkeeping itself could get here (a poisoned allocator);
    // never unwind into the driver.
    drop(outcome);
}

impl<'s, 'env> Scope<'s, 'env> {
    /// Runs `f` on a driver thread once the work queued before it on
    /// `stream` has finished; work queued after it on `stream` waits for it
    /// (`cuLaunchHostFunc`). See the [module documentation](self).
    ///
    /// Inside a [capture](Scope::capture) the closure becomes a host node
    /// of the graph and runs at every replay (hence `FnMut`); the graph
    /// keeps it.
    ///
    /// # Errors
    ///
    /// Context mismatches; driver errors. A panic of `f` is reported when
    /// the scope ends, as [`Error::HostCallbackPanicked`](crate::Error::HostCallbackPanicked).
    pub fn host_fn<F>(&self, stream: &'s Stream<'_>, f: F) -> Result<()>
    where
        F: FnMut() + Send + 's,
    {
        let raw = self.use_stream(stream)?;
        if self.context().capturing() {
            if let Some(key) = crate::work::graph::capture_key(raw) {
                let (kept, func, user) = Kept::new(key, f);
                let cu = self.context().enter()?;
                // SAFETY: a live stream; `user` points at the boxed closure,
                // which the capture hands to the graph, which keeps it for
                // as long as any replay can call it.
                let rc = unsafe { (cu.cuLaunchHostFunc)(raw, func, user) };
                self.context().check("cuLaunchHostFunc", rc)?;
                crate::work::graph::keep_in_capture(raw, kept);
                return Ok(());
            }
            // A stream that joined a capture through an event is capturing
            // too, but the capture's callbacks are kept per origin stream: a
            // one-shot callback captured there would be freed at the first
            // replay and called again at the next. Refused.
            if self.context().stream_is_capturing(raw)? {
                return Err(crate::error::Error::IllegalDuringCapture {
                    operation: "a host callback on a stream that joined a capture (queue it on \
                                the capture's own stream)",
                    device: self.context().device().ordinal(),
                });
            }
        }
        self.host_fn_once(raw, f)
    }

    /// Queues a one-shot callback on the raw stream `raw` (already counted
    /// by `use_stream`).
    fn host_fn_once<F: FnOnce() + Send + 's>(&self, raw: cuda_sys::CUstream, f: F) -> Result<()> {
        let cu = self.context().enter()?;
        let user = Box::into_raw(Box::new(Once { key: self.key(), f })).cast::<c_void>();
        // SAFETY: a live stream of the scope; `user` is a `Box<Once<F>>`
        // that `run_once::<F>` frees after its one call. The closure's
        // borrows outlive the scope, which synchronizes the stream, and so
        // waits for the call, before they end.
        let rc = unsafe { (cu.cuLaunchHostFunc)(raw, Some(run_once::<F>), user) };
        if rc != cuda_sys::CUresult::CUDA_SUCCESS {
            // SAFETY: the driver refused the call, so it never calls back;
            // the box is still ours.
            drop(unsafe { Box::from_raw(user.cast::<Once<F>>()) });
        }
        self.context().check("cuLaunchHostFunc", rc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::work::scope::take_callback_panic as take_panic;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    #[test]
    fn a_caught_panic_is_reported_once_to_its_scope() {
        let key = 0x1234_5678usize;
        fn trampoline<F: FnOnce() + Send>(once: Once<F>) {
            // SAFETY: a box made here, handed over once, as the driver would.
            unsafe { run_once::<F>(Box::into_raw(Box::new(once)).cast()) };
        }
        trampoline(Once {
            key,
            f: || panic!("boom {}", 7),
        });
        assert!(take_panic(key + 1).is_none());
        let err = take_panic(key).expect("recorded");
        assert_eq!(err.to_string(), "a host callback panicked: boom 7");
        assert!(take_panic(key).is_none());
    }

    #[test]
    fn a_repeating_callback_runs_every_time_and_reports_each_panic() {
        let key = Arc::new(AtomicUsize::new(0x9999_0000));
        let mut n = 0;
        let (kept, func, user) = Kept::new(key.clone(), move || {
            n += 1;
            assert!(n != 2, "second call");
        });
        let func = func.unwrap();
        for _ in 0..3 {
            // SAFETY: `user` points at the live box `kept` owns.
            unsafe { func(user) };
        }
        let err = take_panic(0x9999_0000).expect("second call panicked");
        assert!(err.to_string().contains("second call"), "{err}");
        assert!(take_panic(0x9999_0000).is_none());
        drop(kept);
    }
}
