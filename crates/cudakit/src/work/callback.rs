//! Host callbacks: a Rust closure run in stream order (`cuLaunchHostFunc`),
//! after the work queued before it on the stream and before the work
//! queued after it.
//!
//! ```no_run
//! # fn main() -> cudakit::Result<()> {
//! use std::sync::atomic::{AtomicUsize, Ordering};
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
//! [`Error::HostCallbackPanicked`] when it ends (after its streams have
//! synchronized, so the work queued after the callback has run too). The
//! context stays usable. A panic in a graph's host node is reported by the
//! scope that launched the graph last.
//!
//! # What a callback must not do
//!
//! CUDA forbids driver calls inside a host function (they may deadlock or
//! fail). cudakit cannot check what a closure calls; a closure that calls
//! into cudakit gets the driver's error or hangs, never undefined behaviour
//! of Rust's.

use std::any::Any;
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::{Error, Result};
use crate::work::scope::Scope;
use crate::work::stream::Stream;

/// Panics caught in callbacks, as (scope key, message), not yet reported.
static PANICS: Mutex<Vec<(usize, String)>> = Mutex::new(Vec::new());
/// How many entries `PANICS` holds: scopes look at the lock only when
/// some panic is pending, so the scope's end costs one load otherwise.
static PENDING: AtomicUsize = AtomicUsize::new(0);

fn panics() -> std::sync::MutexGuard<'static, Vec<(usize, String)>> {
    match PANICS.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

fn message(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic payload that is not a string".to_owned()
    }
}

fn record_panic(key: usize, payload: Box<dyn Any + Send>) {
    let text = message(&*payload);
    // Dropping a payload can panic in turn; that panic is caught too.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
    panics().push((key, text));
    PENDING.fetch_add(1, Ordering::AcqRel);
}

/// The first panic caught in a callback of the scope `key`, as the error
/// its end returns. Called by every scope as it ends.
pub(crate) fn take_panic(key: usize) -> Option<Error> {
    if PENDING.load(Ordering::Acquire) == 0 {
        return None;
    }
    let mut list = panics();
    let mut first = None;
    list.retain(|(k, msg)| {
        if *k == key {
            PENDING.fetch_sub(1, Ordering::AcqRel);
            first.get_or_insert_with(|| msg.clone());
            false
        } else {
            true
        }
    });
    first.map(|message| Error::HostCallbackPanicked { message })
}

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

/// A callback that runs at every replay of a graph: kept alive by the
/// graph that refers to it, called through a lock because two executable
/// graphs instantiated from one graph may run at once.
pub(crate) struct Repeat<F> {
    /// The key of the scope that launched the graph last.
    pub(crate) key: Arc<AtomicUsize>,
    pub(crate) f: Mutex<F>,
}

/// The trampoline of a repeating callback.
///
/// # Safety
///
/// `user` points at a live `Repeat<F>` (the graph holding it outlives
/// every replay: an executable graph waits for its replays when dropped).
pub(crate) unsafe extern "C" fn run_repeat<F: FnMut() + Send>(user: *mut c_void) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the function's contract: `user` points at a live
        // `Repeat<F>`, only ever shared.
        let repeat = unsafe { &*user.cast::<Repeat<F>>() };
        let mut f = match repeat.f.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| (*f)())) {
            record_panic(repeat.key.load(Ordering::Acquire), payload);
        }
    }));
    drop(outcome);
}

/// A type-erased boxed callback that a graph keeps alive: its address is
/// the `userData` of a host node.
pub(crate) struct Kept {
    ptr: *mut c_void,
    drop_fn: unsafe fn(*mut c_void),
}

// SAFETY: the box it owns holds a `Repeat<F>` with `F: Send`, whose
// closure is only reached through its mutex.
unsafe impl Send for Kept {}

/// Drops a `Box<Repeat<F>>` made by [`Kept::new`].
///
/// # Safety
///
/// `ptr` comes from `Box::into_raw` of a `Repeat<F>`, dropped once.
unsafe fn drop_repeat<F>(ptr: *mut c_void) {
    // SAFETY: the function's contract.
    drop(unsafe { Box::from_raw(ptr.cast::<Repeat<F>>()) });
}

impl Kept {
    /// Boxes `f` as a repeating callback reporting panics under `key`;
    /// returns the box and the (trampoline, user data) pair for the driver.
    pub(crate) fn new<F: FnMut() + Send>(
        key: Arc<AtomicUsize>,
        f: F,
    ) -> (Kept, cuda_sys::CUhostFn, *mut c_void) {
        let ptr = Box::into_raw(Box::new(Repeat {
            key,
            f: Mutex::new(f),
        }))
        .cast::<c_void>();
        (
            Kept {
                ptr,
                drop_fn: drop_repeat::<F>,
            },
            Some(run_repeat::<F>),
            ptr,
        )
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `drop_fn` were made together by `Kept::new`;
        // this is the one drop, after every replay that could call it.
        unsafe { (self.drop_fn)(self.ptr) }
    }
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
    /// the scope ends, as [`Error::HostCallbackPanicked`].
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
        }
        self.host_fn_once(raw, f)
    }

    /// Queues a one-shot callback on the raw stream `raw` (already counted
    /// by `use_stream`).
    fn host_fn_once<F: FnOnce() + Send + 's>(&self, raw: cuda_sys::CUstream, f: F) -> Result<()> {
        let user = Box::into_raw(Box::new(Once { key: self.key(), f })).cast::<c_void>();
        let cu = match self.context().enter() {
            Ok(cu) => cu,
            Err(e) => {
                // SAFETY: made just above and never handed to the driver.
                drop(unsafe { Box::from_raw(user.cast::<Once<F>>()) });
                return Err(e);
            }
        };
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
