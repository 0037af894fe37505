//! Releases: where the driver calls of drops go.
//!
//! A drop frees memory or destroys a handle with one driver call. Two kinds
//! of thread must not make that call:
//!
//! - **A thread that is capturing a graph.** In thread-local capture mode
//!   the driver refuses frees and other "potentially unsafe" calls there
//!   (`CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED`) and invalidates the capture.
//!   Such releases wait on the thread until its last capture has ended, and
//!   run there; no wider than that: other threads release at once.
//! - **A driver callback thread** (inside a host function or a graph host
//!   node). CUDA forbids driver calls there (`CUDA_ERROR_NOT_PERMITTED`).
//!   cudakit's trampolines mark the thread while the user's closure runs;
//!   a release made then is handed to the context and run by the next
//!   cudakit thread that drains it: a scope's end, a synchronize, the
//!   context's own drop. Host-function closures themselves are dropped by
//!   the scope that queued them, after it waited for its streams (see
//!   `crate::work::callback`).
//!
//! A third kind may not make the call either: a thread other than the one
//! that owns a green context (see [`super::green`]). Its releases are
//! handed to the context like a callback's.
//!
//! Either way, the arena records the free only when the driver did free:
//! a refused call keeps the allocation, marked leaked
//! ([`AllocKind::Leaked`](super::arena::AllocKind::Leaked)), because the
//! memory was not given back.

use std::cell::{Cell, RefCell};
use std::sync::atomic::Ordering;

use cuda_sys::{CUresult, Driver};

use super::{lock, Context};

/// A driver call that releases something, with what the arena knows of it
/// (the context is kept beside it, not in it: a release the context itself
/// holds must not keep the context alive).
pub(crate) struct Release {
    call: &'static str,
    arena_id: Option<u64>,
    op: Box<dyn FnOnce(&'static Driver) -> CUresult + Send>,
}

thread_local! {
    /// Captures begun on this thread and not yet ended.
    static CAPTURES_HERE: Cell<usize> = const { Cell::new(0) };
    /// Whether this thread is running a user closure inside a driver
    /// callback (a host function or host node).
    static IN_DRIVER_CALLBACK: Cell<bool> = const { Cell::new(false) };
    /// Releases made on this thread while it captured.
    static AFTER_CAPTURE: RefCell<Vec<(Context, Release)>> = const { RefCell::new(Vec::new()) };
    /// The green context (its record's address) this thread acts for while
    /// the owning thread waits for it (see [`act_for`]); 0 for none.
    pub(crate) static DELEGATE: Cell<usize> = const { Cell::new(0) };
}

/// A permission to act for a green context on another thread, taken on a
/// thread allowed to use it (see [`Context::delegation`]).
#[derive(Clone, Copy)]
pub(crate) struct Delegation(pub(crate) usize);

/// Runs `f` on this thread acting for the green context of `delegation`
/// (the thread that took it waits for this one meanwhile, so one thread at
/// a time uses the green context); afterwards this thread makes no context
/// current any more.
pub(crate) fn act_for<R>(delegation: Option<Delegation>, f: impl FnOnce() -> R) -> R {
    let Some(Delegation(addr)) = delegation else {
        return f();
    };
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            DELEGATE.with(|d| d.set(0));
            if let Ok(cu) = crate::driver::cu() {
                // SAFETY: a null context is always accepted: it unbinds the
                // green context from this thread.
                let _ = unsafe { (cu.cuCtxSetCurrent)(std::ptr::null_mut()) };
            }
            super::LAUNCH_CURRENT.with(|c| c.set(0));
        }
    }
    DELEGATE.with(|d| d.set(addr));
    let _restore = Restore;
    f()
}

/// Whether the calling thread is capturing a graph (thread-local mode).
#[inline]
pub(crate) fn thread_capturing() -> bool {
    CAPTURES_HERE.with(|c| c.get()) > 0
}

/// Whether the calling thread runs a user closure inside a driver
/// callback.
#[inline]
pub(crate) fn in_driver_callback() -> bool {
    IN_DRIVER_CALLBACK.with(|c| c.get())
}

/// Refuses `operation` inside a driver callback, before any lock is taken
/// (a lock held by the thread that waits for the callback would deadlock).
#[inline]
pub(crate) fn refuse_in_callback(operation: &'static str) -> crate::Result<()> {
    if in_driver_callback() {
        return Err(crate::Error::InsideHostCallback { operation });
    }
    Ok(())
}

/// Counts a capture begun on this thread.
pub(crate) fn capture_begun() {
    CAPTURES_HERE.with(|c| c.set(c.get() + 1));
}

/// Uncounts a capture of this thread; after the last one, runs the
/// releases that waited for it.
pub(crate) fn capture_ended() {
    let left = CAPTURES_HERE.with(|c| {
        let n = c.get().saturating_sub(1);
        c.set(n);
        n
    });
    if left == 0 {
        let waiting = AFTER_CAPTURE.with(|l| std::mem::take(&mut *l.borrow_mut()));
        for (ctx, r) in waiting {
            r.run(&ctx);
        }
    }
}

/// Marks the thread as inside a driver callback while `f` runs (the
/// trampolines of host functions and host nodes), and restores the mark
/// afterwards, also when `f` unwinds.
pub(crate) fn in_callback<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            IN_DRIVER_CALLBACK.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(IN_DRIVER_CALLBACK.with(|c| c.replace(true)));
    f()
}

impl Release {
    /// Issues the call now (the thread may call the driver) and files the
    /// outcome: freed in the arena on success; on a refusal, the error in
    /// the context's drop-error record and the allocation marked leaked.
    fn run(self, ctx: &Context) {
        let Release { call, arena_id, op } = self;
        let rc = match ctx.enter_for_drop() {
            Some(cu) => op(cu),
            None => CUresult::CUDA_ERROR_NOT_INITIALIZED,
        };
        ctx.record_drop_error(call, rc);
        if let Some(id) = arena_id {
            ctx.arena().record_release(id, rc, call);
        }
    }
}

/// The second try of a wait for work that may still use what its caller is
/// about to release (rule 2): `wait` runs again on a fresh thread (one that
/// is neither capturing nor a driver callback, where the first try may have
/// been refused). `Ok` when it waited; the error when a sticky error stopped
/// the context's work (nothing of it runs any more). Any other failure
/// leaves work running under borrows that end when the caller returns: the
/// process is aborted, with `what` in the message, rather than returning
/// into undefined behaviour.
pub(crate) fn wait_elsewhere_or_abort(
    ctx: &Context,
    what: &str,
    wait: impl Fn(&Context) -> crate::Result<()> + Sync,
) -> crate::Result<()> {
    // A green context is used by one thread at a time: the fresh thread
    // acts for this one, which waits for it meanwhile.
    let delegation = ctx.delegation();
    let outcome = std::thread::scope(|t| t.spawn(|| act_for(delegation, || wait(ctx))).join());
    match outcome {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) if e.is_sticky() => Err(e),
        other => {
            eprintln!(
                "cudakit: {what} on device {} could not wait for its work ({other:?}); the \
                 work may still touch memory whose borrows end now, so the process is aborted",
                ctx.device().ordinal()
            );
            std::process::abort();
        }
    }
}

impl Release {
    /// [`Release::run`] while the context's shared record is being
    /// dropped: the context is current already; errors go nowhere (no
    /// record outlives the context), the arena is told.
    pub(crate) fn run_raw(self, cu: &'static Driver, arena: &super::arena::Arena) {
        let rc = (self.op)(cu);
        if let Some(id) = self.arena_id {
            arena.record_release(id, rc, self.call);
        }
    }
}

impl Context {
    /// Releases something with the driver call `op` (named `call`), now
    /// where the calling thread may call the driver, or later where it may
    /// not (see the module docs). `arena_id` is the allocation's record,
    /// freed when the call succeeds.
    pub(crate) fn release(
        &self,
        call: &'static str,
        arena_id: Option<u64>,
        op: impl FnOnce(&'static Driver) -> CUresult + Send + 'static,
    ) {
        let r = Release {
            call,
            arena_id,
            op: Box::new(op),
        };
        self.dispatch(r);
    }

    /// Whether [`Context::release`] would run a release on this thread now
    /// (not a forked child, a driver callback, another thread than a green
    /// context's own, or a capturing thread, where it is handed on).
    pub(crate) fn releases_now(&self) -> bool {
        !crate::driver::forked()
            && !in_driver_callback()
            && self.thread_allowed()
            && !thread_capturing()
    }

    fn dispatch(&self, r: Release) {
        if crate::driver::forked() {
            // A child made by `fork`: the handle is the parent's, and no
            // driver call may be made here. Dropping the closure frees only
            // this process's copy of what it owns.
            return;
        }
        if in_driver_callback() || !self.thread_allowed() {
            // A driver callback may not call the driver; another thread
            // than a green context's own may not make it current: the
            // release waits for the context's next drain on a thread that
            // may (its scope ends, synchronizes, its own drop).
            let work = &self.shared.work;
            lock(&work.from_callbacks).push(r);
            work.callback_releases.fetch_add(1, Ordering::AcqRel);
        } else if thread_capturing() {
            AFTER_CAPTURE.with(|l| l.borrow_mut().push((self.clone(), r)));
        } else {
            r.run(self);
        }
    }

    /// Runs the releases that drops on driver callback threads handed to
    /// the context (one atomic load when there are none). Called on
    /// cudakit's own threads: a scope's end, synchronizes, the context's
    /// drop.
    pub(crate) fn drain_callback_releases(&self) {
        let work = &self.shared.work;
        if in_driver_callback() || work.callback_releases.load(Ordering::Acquire) == 0 {
            return;
        }
        let list = std::mem::take(&mut *lock(&work.from_callbacks));
        work.callback_releases
            .fetch_sub(list.len(), Ordering::AcqRel);
        for r in list {
            self.dispatch(r);
        }
    }
}
