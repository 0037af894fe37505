//! Repeating host callbacks that a graph keeps alive: a host node of a
//! captured or built graph runs its closure at every replay, so the graph
//! owns the boxed closure (type-erased) for as long as any replay can call
//! it. Panics are caught and reported to the scope that launched the graph
//! last.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::work::scope::record_callback_panic;

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
        let mut f = crate::context::lock(&repeat.f);
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| (*f)())) {
            record_callback_panic(repeat.key.load(Ordering::Acquire), payload);
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
