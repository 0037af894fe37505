//! Awaiting the GPU: [`std::future::Future`]s for an event, for a stream's
//! work so far, and for an owned batch of work, with no async runtime.
//!
//! - [`Event::done`] and [`Stream::done`] observe work; they own nothing
//!   the GPU uses. A host function (`cuLaunchHostFunc`) queued behind the
//!   work (for an event, on a private stream that waits for it) wakes the
//!   task. An already-finished event or stream is ready at once (one
//!   `cuEventQuery` / `cuStreamQuery`, no host function).
//! - [`Context::submit`] runs an owned batch: the caller moves a payload
//!   (buffers, anything `Send + 'static`) into it, a closure queues work on
//!   it in a [`Scope`], and the future resolves to the payload, handed back,
//!   with the closure's result. The scope, with its usual guarantees, runs
//!   on a thread cudakit spawns for the batch, which waits for the work
//!   (the "waiting thread") and then wakes the task.
//!
//! # Why this is sound when a future is leaked or dropped early
//!
//! The io_uring rule: whatever the GPU uses is owned by the operation, not
//! borrowed by the future. A future may be dropped at any poll or never
//! polled, and `mem::forget` is safe, so no guarantee here rests on the
//! future's destructor.
//!
//! - The batch's payload is moved into the batch's thread, which is the only
//!   owner while the work is queued. The scope on that thread borrows it and
//!   waits for every stream it used before it returns (rule 2 of
//!   docs/architecture.md holds there exactly as in any scope). Only then is
//!   the payload put into the completion slot, shared with the future by an
//!   `Arc`. Dropping the future early drops the future's half: the thread
//!   still owns the payload until the work is done, and the slot (and the
//!   payload in it) is dropped by whichever of the two lets go last: the
//!   batch's thread or the future's owner, both threads of the program, never
//!   a driver thread (rule 3). Forgetting the future leaks its `Arc`, so the
//!   payload stays in the slot for ever: never freed early, never reused (its
//!   allocations stay live in the arena). The payload is `'static`, and so is
//!   the context (`&'static Context`), because the thread may outlive any
//!   borrow the caller holds.
//! - An event's or stream's future owns a `Signal`: two atomics and a
//!   waker slot, nothing of cudakit's. The host function gets a raw pointer
//!   to it and touches no reference count; a process-wide list holds one
//!   `Arc` until the host function has marked its last access, and is
//!   pruned on cudakit's threads (every new future, every poll). So a
//!   forgotten or dropped future leaves a signal that the host function can
//!   still write, and nothing is freed on the driver's thread. The host
//!   function calls `Waker::wake` on a clone taken out of the signal's lock
//!   (the executor's code, on the driver's thread, marked as a callback:
//!   cudakit calls there are refused).
//!   The waker itself is dropped by the pruner or the future, not there.
//! - A sticky error (a faulted kernel) stops the context's work, and its
//!   host functions may never run: recording one (by any cudakit call, or
//!   a drop, that meets it) wakes every pending signal, and a poll of a
//!   poisoned context's future is [`Error::ContextPoisoned`]. The error is
//!   recorded when a cudakit call meets it: a task that only awaits, while
//!   nothing else calls into the context, is not woken by a fault alone.
//!   Such a task should bound its wait (a timeout of its executor) and then
//!   call something that reaches the driver (`Context::synchronize`), which
//!   records the fault and resolves the future.

use std::any::Any;
use std::ffi::c_void;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context as TaskContext, Poll, Waker};

use cuda_sys::{CUresult, CUstream};

use crate::context::release::{in_callback, refuse_in_callback};
use crate::context::{lock, Context};
use crate::error::{Error, Result};
use crate::work::event::Event;
use crate::work::scope::Scope;
use crate::work::stream::Stream;

/// Not signalled yet.
const PENDING: u8 = 0;
/// Signalled; the host function may still be using the signal.
const DONE: u8 = 1;
/// Signalled, and the host function no longer touches the signal.
const FINISHED: u8 = 2;

/// What a host function sets and a future reads.
struct Signal {
    state: AtomicU8,
    waker: Mutex<Option<Waker>>,
}

impl Signal {
    fn new() -> Arc<Self> {
        Arc::new(Signal {
            state: AtomicU8::new(PENDING),
            waker: Mutex::new(None),
        })
    }

    fn done(&self) -> bool {
        self.state.load(Ordering::Acquire) != PENDING
    }

    fn wake(&self) {
        // Woken outside the lock: an executor that polls inside `wake`
        // would otherwise meet the lock `register` takes.
        let waker = lock(&self.waker).clone();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Stores the task's waker, unless the signal already fired.
    fn register(&self, waker: &Waker) {
        let mut slot = lock(&self.waker);
        match slot.as_ref() {
            Some(w) if w.will_wake(waker) => {}
            _ => *slot = Some(waker.clone()),
        }
    }
}

/// The signals whose host function may still run; see the module docs.
static IN_FLIGHT: Mutex<Vec<Arc<Signal>>> = Mutex::new(Vec::new());

/// Drops the list's `Arc`s of signals whose host function has finished.
fn prune() {
    let done: Vec<Arc<Signal>> = {
        let mut list = lock(&IN_FLIGHT);
        let (done, pending) = list
            .drain(..)
            .partition(|s| s.state.load(Ordering::Acquire) == FINISHED);
        *list = pending;
        done
    };
    // Dropped here, outside the lock (a waker's drop runs executor code).
    drop(done);
}

/// Wakes every pending signal: a sticky error was recorded, and the host
/// functions of the poisoned context may never run.
///
/// The wakes run on a thread of cudakit's own, not on the caller's: the
/// error is recorded by whatever call met it, which may hold a stream's
/// lock (`Stream::done` holds it across its query), and a waker runs the
/// executor's code, which may poll or queue work on that same stream. On
/// the caller's thread that would deadlock; on the waking thread it waits
/// for the lock like any other thread. Only when no thread can be spawned
/// are they woken here.
pub(crate) fn wake_all() {
    let list: Vec<Arc<Signal>> = lock(&IN_FLIGHT).clone();
    if list.is_empty() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("cudakit-wake".into())
        .spawn(move || {
            for s in &list {
                s.wake();
            }
        });
    if spawned.is_err() {
        let list: Vec<Arc<Signal>> = lock(&IN_FLIGHT).clone();
        for s in &list {
            s.wake();
        }
    }
}

/// The host function of a signal.
///
/// # Safety
///
/// `user` is `Arc::as_ptr` of a signal that `IN_FLIGHT` keeps alive until
/// this function stores `FINISHED`.
unsafe extern "C" fn signal_host_fn(user: *mut c_void) {
    // SAFETY: the caller's contract: alive until the FINISHED store below,
    // after which this function does not touch it.
    let signal = unsafe { &*(user as *const Signal) };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        in_callback(|| {
            signal.state.store(DONE, Ordering::Release);
            signal.wake();
        })
    }));
    // A waker that panicked: its payload is leaked, not dropped on the
    // driver's thread (its drop could run anything).
    if let Err(payload) = outcome {
        std::mem::forget(payload);
    }
    signal.state.store(FINISHED, Ordering::Release);
}

/// Queues `signal`'s host function on `raw` (`cuLaunchHostFunc`); the
/// caller holds what keeps the stream out of any capture.
fn queue_signal(ctx: &Context, raw: CUstream, signal: &Arc<Signal>) -> Result<()> {
    let cu = ctx.enter()?;
    crate::context::on_poison(wake_all);
    lock(&IN_FLIGHT).push(signal.clone());
    // SAFETY: a live stream of the current context; the host function and
    // its argument satisfy `signal_host_fn`'s contract (the list holds an
    // `Arc` until FINISHED).
    let rc = unsafe {
        (cu.cuLaunchHostFunc)(
            raw,
            Some(signal_host_fn),
            Arc::as_ptr(signal) as *mut c_void,
        )
    };
    if rc != CUresult::CUDA_SUCCESS {
        // Not queued: the driver will never call it.
        signal.state.store(FINISHED, Ordering::Release);
    }
    ctx.check("cuLaunchHostFunc", rc)
}

/// A future that resolves when work observed by a host function is done:
/// [`Event::done`], [`Stream::done`].
#[must_use = "futures do nothing unless polled"]
pub struct Done<'c> {
    ctx: &'c Context,
    /// `None`: the work was already done.
    signal: Option<Arc<Signal>>,
}

impl std::fmt::Debug for Done<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Done")
            .field("done", &self.signal.as_ref().map_or(true, |s| s.done()))
            .finish()
    }
}

impl Future for Done<'_> {
    type Output = Result<()>;

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Result<()>> {
        if crate::driver::forked() {
            // A child made by fork: no host function of the parent's work
            // runs here.
            return Poll::Ready(Err(Error::ForkedChild));
        }
        prune();
        let Some(signal) = &self.signal else {
            return Poll::Ready(Ok(()));
        };
        if signal.done() {
            return Poll::Ready(Ok(()));
        }
        signal.register(cx.waker());
        if signal.done() {
            return Poll::Ready(Ok(()));
        }
        if let Err(e) = self.ctx.refuse_poisoned() {
            return Poll::Ready(Err(e));
        }
        Poll::Pending
    }
}

impl<'c> Stream<'c> {
    /// A future that resolves when the work queued on this stream so far
    /// is done: a host function queued now wakes it. Ready at once when
    /// `cuStreamQuery` says the stream is idle. See [`crate::work::future`].
    ///
    /// # Errors
    ///
    /// [`Error::ContextPoisoned`] (also from the future, should the context
    /// be poisoned while it waits); [`Error::StreamCaptured`] while a
    /// capture owns the stream (the host function would join the graph);
    /// [`Error::InsideHostCallback`]; driver errors.
    pub fn done(&self) -> Result<Done<'c>> {
        let ctx = self.context();
        if crate::driver::forked() {
            // Before any lock: one held by a parent's thread at the fork
            // would never be released here.
            return Err(Error::ForkedChild);
        }
        refuse_in_callback("Stream::done")?;
        ctx.refuse_poisoned()?;
        prune();
        // The capture lock is held from the check to the enqueue (rule 1).
        let state = self.state().lock();
        if state.capture.is_some() {
            return Err(Error::StreamCaptured {
                operation: "Stream::done",
                device: ctx.device().ordinal(),
            });
        }
        let cu = ctx.enter()?;
        // SAFETY: a live stream.
        let rc = unsafe { (cu.cuStreamQuery)(self.as_raw()) };
        if rc == CUresult::CUDA_SUCCESS {
            return Ok(Done { ctx, signal: None });
        }
        if rc != CUresult::CUDA_ERROR_NOT_READY {
            ctx.check("cuStreamQuery", rc)?;
        }
        let signal = Signal::new();
        queue_signal(ctx, self.as_raw(), &signal)?;
        drop(state);
        Ok(Done {
            ctx,
            signal: Some(signal),
        })
    }
}

impl<'c> Event<'c> {
    /// A future that resolves when the work this event last recorded is
    /// done. Ready at once when `cuEventQuery` says so; otherwise a private
    /// stream waits for the event (`cuStreamWaitEvent`, which takes the
    /// event's state now, so the event may be recorded again or destroyed
    /// meanwhile) and runs the waking host function. See
    /// [`crate::work::future`].
    ///
    /// # Errors
    ///
    /// [`Error::ContextPoisoned`]; [`Error::StreamCaptured`] for an event
    /// recorded in a capture that goes on; driver errors.
    pub fn done(&self) -> Result<Done<'c>> {
        let ctx = self.context();
        if crate::driver::forked() {
            // Before any lock: one held by a parent's thread at the fork
            // would never be released here.
            return Err(Error::ForkedChild);
        }
        refuse_in_callback("Event::done")?;
        ctx.refuse_poisoned()?;
        prune();
        // Held from the capture check to the wait: a record of the event in
        // another thread's capture cannot slip between them (the private
        // stream would join that capture).
        let (record, captured) = self.lock_record();
        if captured.is_some() {
            return Err(Error::StreamCaptured {
                operation: "Event::done",
                device: ctx.device().ordinal(),
            });
        }
        let cu = ctx.enter()?;
        // SAFETY: a live event.
        let rc = unsafe { (cu.cuEventQuery)(self.as_raw()) };
        if rc == CUresult::CUDA_SUCCESS {
            return Ok(Done { ctx, signal: None });
        }
        if rc != CUresult::CUDA_ERROR_NOT_READY {
            ctx.check("cuEventQuery", rc)?;
        }
        let mut raw: CUstream = std::ptr::null_mut();
        // SAFETY: a valid out-pointer and a defined flag.
        ctx.check("cuStreamCreate", unsafe {
            (cu.cuStreamCreate)(
                &mut raw,
                cuda_sys::CUstream_flags::CU_STREAM_NON_BLOCKING.0 as u32,
            )
        })?;
        let signal = Signal::new();
        // SAFETY: a live private stream and a live event of this context.
        let queued = ctx
            .check("cuStreamWaitEvent", unsafe {
                (cu.cuStreamWaitEvent)(raw, self.as_raw(), 0)
            })
            .and_then(|()| queue_signal(ctx, raw, &signal));
        drop(record);
        // The stream's resources are released once its work is done; the
        // host function still runs (cuStreamDestroy_v2's documented
        // behaviour). The private stream never belongs to a capture; its
        // destruction goes through the release path like every stream's
        // (on a thread that captures, it waits for the capture's end).
        let raw_stream = raw as usize;
        ctx.release("cuStreamDestroy_v2", None, move |cu| {
            // SAFETY: the live stream made above, destroyed once.
            unsafe { (cu.cuStreamDestroy)(raw_stream as CUstream) }
        });
        queued?;
        Ok(Done {
            ctx,
            signal: Some(signal),
        })
    }
}

// ------------------------------------------------------------------ batches

/// What a batch's thread leaves for its future.
struct Slot<P, R> {
    state: AtomicU8,
    waker: Mutex<Option<Waker>>,
    out: Mutex<Option<Outcome<P, R>>>,
}

enum Outcome<P, R> {
    Finished(P, Result<R>),
    Panicked(P, Box<dyn Any + Send>),
}

/// An owned batch of GPU work: [`Context::submit`]. Resolves to the payload,
/// handed back, and the batch closure's result.
///
/// Dropping it before it resolves, or forgetting it, is sound and frees
/// nothing early: see [`crate::work::future`].
///
/// # Panics
///
/// Polled in a child made by `fork` before it resolved: the batch's thread
/// and its payload are the parent's, so it can never resolve there (the
/// `Done` futures resolve to [`Error::ForkedChild`] instead; a batch has no
/// payload to hand back with an error).
#[must_use = "the batch runs anyway; drop the future to discard its payload once done"]
pub struct Batch<P, R> {
    slot: Arc<Slot<P, R>>,
}

impl<P, R> std::fmt::Debug for Batch<P, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field(
                "done",
                &(self.slot.state.load(Ordering::Acquire) != PENDING),
            )
            .finish()
    }
}

impl<P, R> Batch<P, R> {
    /// Whether the batch's work is done (and its payload waits in the slot).
    pub fn is_done(&self) -> bool {
        self.slot.state.load(Ordering::Acquire) != PENDING
    }
}

impl<P, R> Future for Batch<P, R> {
    /// The payload, always handed back, and the batch's result: the
    /// closure's error, or the scope's (a sticky error poisons the context:
    /// the GPU's work has stopped when the payload comes back).
    type Output = (P, Result<R>);

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<Self::Output> {
        let slot = &self.slot;
        if slot.state.load(Ordering::Acquire) == PENDING && crate::driver::forked() {
            // A child made by `fork` has no batch thread: the batch would
            // never resolve, and its payload is that thread's, so there is
            // nothing to hand back with an error. Said, rather than a hang.
            panic!(
                "a cudakit Batch submitted before fork was polled in the child: it cannot \
                 resolve there (its thread and payload are the parent's)"
            );
        }
        if slot.state.load(Ordering::Acquire) == PENDING {
            *lock(&slot.waker) = Some(cx.waker().clone());
            if slot.state.load(Ordering::Acquire) == PENDING {
                return Poll::Pending;
            }
        }
        match lock(&slot.out).take() {
            Some(Outcome::Finished(p, r)) => Poll::Ready((p, r)),
            Some(Outcome::Panicked(_p, payload)) => std::panic::resume_unwind(payload),
            None => panic!("Batch polled after it resolved"),
        }
    }
}

impl Context {
    /// Runs `work` on an owned `payload` as a batch, and returns a future of
    /// the payload and `work`'s result. `work` queues GPU work in a
    /// [`Scope`] (launches, copies, host functions: anything a scope does)
    /// on the payload it is lent; the scope waits for that work before the
    /// payload is handed back.
    ///
    /// The batch runs on a thread of its own, so the payload and the context
    /// are `'static` (a context made with `Box::leak` or held in a
    /// `static`). Why a dropped or forgotten future is sound: see
    /// [`crate::work::future`].
    ///
    /// ```no_run
    /// # fn main() -> cudakit::Result<()> {
    /// let ctx: &'static cudakit::Context = Box::leak(Box::new(cudakit::Context::new(0)?));
    /// let host = vec![1.0f32; 1 << 20];
    /// let dev = ctx.alloc::<f32>(1 << 20)?;
    /// let stream = ctx.stream()?;
    /// // The batch owns the host vector, the buffer and the stream.
    /// let batch = ctx.submit((host, dev, stream), |s, (host, dev, stream)| {
    ///     s.copy_to_device(stream, host, &*dev)
    /// });
    /// // ... `batch.await` in an async fn; here, block on it:
    /// # let _ = batch;
    /// # Ok(()) }
    /// ```
    ///
    /// # Panics
    ///
    /// A panic of `work` is resumed by the poll that would have resolved
    /// the future (after the scope waited for the work).
    pub fn submit<P, R, F>(&'static self, payload: P, work: F) -> Batch<P, R>
    where
        P: Send + 'static,
        R: Send + 'static,
        F: for<'s, 'p> FnOnce(&'s Scope<'s, 'p>, &'p mut P) -> Result<R> + Send + 'static,
    {
        let slot = Arc::new(Slot {
            state: AtomicU8::new(PENDING),
            waker: Mutex::new(None),
            out: Mutex::new(None),
        });
        if let Err(e) = refuse_in_callback("Context::submit").and_then(|()| self.refuse_poisoned())
        {
            // Nothing queued: resolved at once, with the payload.
            *lock(&slot.out) = Some(Outcome::Finished(payload, Err(e)));
            slot.state.store(DONE, Ordering::Release);
            return Batch { slot };
        }
        // Taken by the batch's thread; taken back if no thread can be made.
        let job = Arc::new(Mutex::new(Some((payload, work))));
        let theirs = (slot.clone(), job.clone());
        let spawned = std::thread::Builder::new()
            .name("cudakit-batch".into())
            .spawn(move || {
                let (slot, job) = theirs;
                let taken = lock(&job).take();
                if let Some((payload, work)) = taken {
                    run_batch(self, &slot, payload, work);
                }
            });
        if spawned.is_err() {
            // No thread: the batch runs here, and the future is ready.
            let taken = lock(&job).take();
            if let Some((payload, work)) = taken {
                run_batch(self, &slot, payload, work);
            }
        }
        Batch { slot }
    }
}

/// Runs a batch's scope on the calling thread and files the outcome.
fn run_batch<P, R, F>(ctx: &'static Context, slot: &Slot<P, R>, mut payload: P, work: F)
where
    F: for<'s, 'p> FnOnce(&'s Scope<'s, 'p>, &'p mut P) -> Result<R>,
{
    let result = catch_unwind(AssertUnwindSafe(|| ctx.scope(|s| work(s, &mut payload))));
    // The scope has waited for every stream it used: the GPU is done with
    // the payload (or, after a sticky error, has stopped).
    let outcome = match result {
        Ok(r) => Outcome::Finished(payload, r),
        Err(p) => Outcome::Panicked(payload, p),
    };
    *lock(&slot.out) = Some(outcome);
    slot.state.store(DONE, Ordering::Release);
    let waker = lock(&slot.waker).take();
    if let Some(w) = waker {
        w.wake();
    }
}
