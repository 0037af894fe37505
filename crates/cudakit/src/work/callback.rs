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
//! [`Error::HostCallbackPanicked`] when
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

use crate::context::release::in_callback;
use crate::error::{Error, Result};
use crate::work::graph::Kept;
use crate::work::scope::{panic_message, record_callback_panic as record_panic, Owned, Scope};
use crate::work::stream::Stream;
use std::cell::UnsafeCell;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU8, Ordering};

/// Not called yet.
const PENDING: u8 = 0;
/// Being called now, on the driver's thread.
const RUNNING: u8 = 1;
/// Called; the driver will not touch it again.
const DONE: u8 = 2;
/// Cancelled by its scope (a wait failed): the trampoline returns without
/// calling the closure, if the driver ever calls it.
const CANCELLED: u8 = 3;

/// A one-shot callback. The scope that queued it owns the box: the
/// trampoline only calls the closure (by `&mut`, once), and the scope frees
/// the box, dropping the closure and everything it owns, on its own thread
/// after it waited for the stream. So nothing the closure owns is dropped
/// on the driver's thread, where CUDA forbids the driver calls that
/// dropping a cudakit object makes.
pub(crate) struct HostCall<F> {
    state: AtomicU8,
    key: u64,
    f: UnsafeCell<F>,
}

/// The trampoline of a one-shot callback.
///
/// # Safety
///
/// `user` points at a live `HostCall<F>` made by `Scope::host_fn`, which
/// its scope keeps until the call is over or cancelled.
unsafe extern "C" fn run_once<F: FnMut() + Send>(user: *mut c_void) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the function's contract.
        let call = unsafe { &*user.cast::<HostCall<F>>() };
        if call
            .state
            .compare_exchange(PENDING, RUNNING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return; // cancelled: its borrows may have ended
        }
        // SAFETY: the state went from PENDING to RUNNING here, once: this
        // is the only access to the closure until DONE is stored below.
        let f = unsafe { &mut *call.f.get() };
        if let Err(payload) = in_callback(|| catch_unwind(AssertUnwindSafe(f))) {
            let text = panic_message(&*payload);
            // Dropped as a callback's (a payload may be a cudakit object,
            // whose release must then be handed over, not run here: rule 3);
            // dropping it can panic in turn, and that panic is caught too.
            in_callback(|| {
                let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            });
            record_panic(call.key, text);
        }
        call.state.store(DONE, Ordering::Release);
    }));
    // Only the bookkeeping itself could get here (a poisoned allocator);
    // never unwind into the driver. Its payload is leaked, not dropped: its
    // drop could run anything, on the driver's thread.
    if let Err(payload) = outcome {
        std::mem::forget(payload);
    }
}

/// Frees a `HostCall<F>` box.
///
/// # Safety
///
/// `ptr` comes from `Box::into_raw` of a `HostCall<F>` that no driver call
/// can reach any more; freed once.
unsafe fn free_once<F>(ptr: *mut c_void) {
    // SAFETY: the function's contract.
    drop(unsafe { Box::from_raw(ptr.cast::<HostCall<F>>()) });
}

/// Cancels a `HostCall<F>`: after this returns, its closure is not running
/// and will never be called.
///
/// # Safety
///
/// `ptr` points at a live `HostCall<F>` (kept alive forever afterwards).
unsafe fn cancel_once<F>(ptr: *mut c_void) {
    // SAFETY: the function's contract.
    let call = unsafe { &*ptr.cast::<HostCall<F>>() };
    if call
        .state
        .compare_exchange(PENDING, CANCELLED, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
    {
        return;
    }
    // The closure runs now and borrows what the caller is about to end: it
    // must be waited for, however long it runs. Yield first (a callback is
    // usually short), then sleep, so that a long one costs no core.
    let mut spins = 0u32;
    while call.state.load(Ordering::Acquire) == RUNNING {
        if spins < 1_000 {
            spins += 1;
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }
}

/// Whether a `HostCall<F>` has run (or was cancelled).
///
/// # Safety
///
/// `ptr` points at a live `HostCall<F>`.
unsafe fn finished_once<F>(ptr: *mut c_void) -> bool {
    // SAFETY: the function's contract.
    let call = unsafe { &*ptr.cast::<HostCall<F>>() };
    matches!(call.state.load(Ordering::Acquire), DONE | CANCELLED)
}

impl<'s, 'env> Scope<'s, 'env> {
    /// Runs `f` on a driver thread once the work queued before it on
    /// `stream` has finished; work queued after it on `stream` waits for it
    /// (`cuLaunchHostFunc`). See the [module documentation](self).
    ///
    /// The scope keeps the closure and drops it, with everything it owns,
    /// on the scope's thread after it waited for the stream, never on the
    /// driver's thread. Inside a [capture](Scope::capture) the closure
    /// becomes a host node of the graph and runs at every replay (hence
    /// `FnMut`); the graph keeps it.
    ///
    /// # Errors
    ///
    /// Context mismatches; [`Error::StreamCaptured`] on a stream another
    /// scope captures; [`Error::IllegalDuringCapture`] on a stream that
    /// joined this scope's capture; driver errors. A panic of `f` is
    /// reported when the scope ends, as
    /// [`Error::HostCallbackPanicked`].
    pub fn host_fn<F>(&self, stream: &'s Stream<'_>, f: F) -> Result<()>
    where
        F: FnMut() + Send + 's,
    {
        let u = self.use_stream(stream)?;
        let cu = self.context().enter()?;
        if u.captured() {
            let Some(key) = crate::work::graph::capture_key(*u) else {
                // A stream that joined a capture through an event: the
                // capture's callbacks are kept per origin stream. Refused.
                return Err(Error::IllegalDuringCapture {
                    operation: "a host callback on a stream that joined a capture (queue it on \
                                the capture's own stream)",
                    device: self.context().device().ordinal(),
                });
            };
            let (kept, func, user) = Kept::new(key, f);
            // SAFETY: a live stream, captured by this scope (its capture
            // lock is held by `u`); `user` points at the boxed closure,
            // which the capture hands to the graph, which keeps it for as
            // long as any replay can call it.
            let rc = unsafe { (cu.cuLaunchHostFunc)(*u, func, user) };
            self.context().check("cuLaunchHostFunc", rc)?;
            crate::work::graph::keep_in_capture(*u, kept);
            return Ok(());
        }
        // A stream can also join a capture behind cudakit's back (a raw
        // `cuStreamWaitEvent` through `cudakit::sys`): while any capture of
        // the context runs, the driver is asked. A one-shot callback
        // captured there would be freed by this scope and called again by
        // every replay.
        if self.context().capturing()
            && crate::context::stream_state::joined_elsewhere(self.context(), cu, *u)?
        {
            return Err(Error::IllegalDuringCapture {
                operation: "a host callback on a stream that joined a capture outside \
                            cudakit (queue it on the capture's own stream)",
                device: self.context().device().ordinal(),
            });
        }
        let user = Box::into_raw(Box::new(HostCall {
            state: AtomicU8::new(PENDING),
            key: self.key(),
            f: UnsafeCell::new(f),
        }))
        .cast::<c_void>();
        // SAFETY: a live stream of the scope (its capture lock held by `u`);
        // `user` is a `HostCall<F>` that the scope keeps (below) until it
        // waited for the stream, so until the call is over. The closure's
        // borrows outlive the scope.
        let rc = unsafe { (cu.cuLaunchHostFunc)(*u, Some(run_once::<F>), user) };
        if rc != cuda_sys::CUresult::CUDA_SUCCESS {
            // SAFETY: the driver refused the call, so it never calls back;
            // the box is still ours, freed once.
            unsafe { free_once::<F>(user) };
            return self.context().check("cuLaunchHostFunc", rc);
        }
        // While `u` is held: nothing else is queued on the stream by this
        // scope in between, so the callback is the scope's last work there.
        self.own_tail(Owned {
            stream: *u,
            ptr: user,
            bytes: std::mem::size_of::<HostCall<F>>(),
            free: free_once::<F>,
            cancel: cancel_once::<F>,
            finished: finished_once::<F>,
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::work::scope::take_callback_panic as take_panic;
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;

    /// A box as `Scope::host_fn` makes it, with its trampoline, cancel and
    /// free functions for the closure's own type.
    type Erased = (
        *mut c_void,
        unsafe extern "C" fn(*mut c_void),
        unsafe fn(*mut c_void),
        unsafe fn(*mut c_void),
    );

    fn erase<F: FnMut() + Send>(key: u64, f: F) -> Erased {
        let call = Box::into_raw(Box::new(HostCall {
            state: AtomicU8::new(PENDING),
            key,
            f: UnsafeCell::new(f),
        }));
        (call.cast(), run_once::<F>, cancel_once::<F>, free_once::<F>)
    }

    #[test]
    fn a_caught_panic_is_reported_once_to_its_scope() {
        let key = 0x1234_5678u64;
        let (ptr, tramp, _, free) = erase(key, || panic!("boom {}", 7));
        // SAFETY: a live box made here, called once as the driver would.
        unsafe { tramp(ptr) };
        assert!(take_panic(key + 1).is_none());
        let err = take_panic(key).expect("recorded");
        assert_eq!(err.to_string(), "a host callback panicked: boom 7");
        assert!(take_panic(key).is_none());
        // SAFETY: made above, no longer reachable by any call.
        unsafe { free(ptr) };
    }

    #[test]
    fn a_cancelled_callback_never_runs_its_closure() {
        let ran = Arc::new(AtomicUsize::new(0));
        let r = ran.clone();
        let (ptr, tramp, cancel, free) = erase(2, move || {
            r.fetch_add(1, Ordering::Relaxed);
        });
        // SAFETY: a live box; cancelled, then called as a late driver would.
        unsafe {
            cancel(ptr);
            tramp(ptr);
        }
        assert_eq!(ran.load(Ordering::Relaxed), 0);
        // A call that already ran is not cancelled (nothing to do), and runs
        // once only.
        let r2 = ran.clone();
        let (ptr2, tramp2, cancel2, free2) = erase(3, move || {
            r2.fetch_add(1, Ordering::Relaxed);
        });
        // SAFETY: live boxes made here; freed once, after their last use.
        unsafe {
            tramp2(ptr2);
            cancel2(ptr2);
            tramp2(ptr2);
            free2(ptr2);
            free(ptr);
        }
        assert_eq!(ran.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_repeating_callback_runs_every_time_and_reports_each_panic() {
        let key = Arc::new(crate::work::graph::Launchers::default());
        key.enter(0x9999_0000);
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
