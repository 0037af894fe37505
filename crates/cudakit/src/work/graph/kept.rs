//! Repeating host callbacks that a graph keeps alive: a host node of a
//! captured or built graph runs its closure at every replay, so the graph
//! owns the boxed closure (type-erased) for as long as any replay can call
//! it. Panics are caught and reported to the scope that launched the graph
//! last.

use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use crate::context::release::in_callback;
use crate::work::scope::record_callback_panic;

/// The scopes that have a launch of a graph in flight: a panic of one of
/// its host nodes is reported to each of them (one replay cannot be told
/// from another inside the callback, so no scope that may have run it is
/// left out, and none that cannot have is named: a scope leaves the list
/// when it has waited for its streams).
#[derive(Debug, Default)]
pub(crate) struct Launchers {
    scopes: Mutex<Vec<u64>>,
}

impl Launchers {
    /// Adds the scope `id` (once).
    pub(crate) fn enter(&self, id: u64) {
        let mut l = crate::context::lock(&self.scopes);
        if !l.contains(&id) {
            l.push(id);
        }
    }

    /// Removes the scope `id`.
    pub(crate) fn leave(&self, id: u64) {
        crate::context::lock(&self.scopes).retain(|s| *s != id);
    }

    fn now(&self) -> Vec<u64> {
        crate::context::lock(&self.scopes).clone()
    }
}

/// A scope's launch of a graph: the scope keeps it until it has waited for
/// its streams, and dropping it takes the scope off the graph's launchers
/// (its own and its children's).
pub(crate) struct LaunchMark {
    pub(crate) scope: u64,
    pub(crate) launchers: Vec<Arc<Launchers>>,
    /// The host callbacks the replays call, alive at least as long as this.
    _host: Arc<HostNodes>,
}

impl LaunchMark {
    /// Enters `scope` into every launcher list and keeps `host`.
    pub(crate) fn new(scope: u64, launchers: Vec<Arc<Launchers>>, host: Arc<HostNodes>) -> Self {
        for l in &launchers {
            l.enter(scope);
        }
        LaunchMark {
            scope,
            launchers,
            _host: host,
        }
    }
}

impl Drop for LaunchMark {
    fn drop(&mut self) {
        for l in &self.launchers {
            l.leave(self.scope);
        }
    }
}

/// The host-node callbacks of a graph and of its child graphs (whose host
/// nodes the parent's replays call too), shared by the graph and by every
/// scope with a replay in flight, so that dropping (or forgetting) the graph
/// before the scope waits frees none of them.
#[derive(Default)]
pub(crate) struct HostNodes {
    pub(crate) kept: Mutex<Vec<Kept>>,
    pub(crate) children: Mutex<Vec<Arc<HostNodes>>>,
}

/// A callback that runs at every replay of a graph: kept alive by the
/// graph that refers to it (and by the scopes that launched it), called
/// through a lock because two executable graphs instantiated from one graph
/// may run at once.
pub(crate) struct Repeat<F> {
    /// The scopes with a replay in flight.
    pub(crate) key: Arc<Launchers>,
    pub(crate) f: Mutex<F>,
}

/// The trampoline of a repeating callback.
///
/// # Safety
///
/// `user` points at a live `Repeat<F>` (the graph holding it, and every
/// scope that launched a replay of it, keep it until no replay can call it).
pub(crate) unsafe extern "C" fn run_repeat<F: FnMut() + Send>(user: *mut c_void) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the function's contract: `user` points at a live
        // `Repeat<F>`, only ever shared.
        let repeat = unsafe { &*user.cast::<Repeat<F>>() };
        let mut f = crate::context::lock(&repeat.f);
        if let Err(payload) = in_callback(|| catch_unwind(AssertUnwindSafe(|| (*f)()))) {
            let text = crate::work::scope::panic_message(&*payload);
            let _ = catch_unwind(AssertUnwindSafe(move || drop(payload)));
            for id in repeat.key.now() {
                record_callback_panic(id, text.clone());
            }
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
        key: Arc<Launchers>,
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
