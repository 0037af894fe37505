//! The process's driver table, initialised once (`cuInit`).

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use cuda_sys::Driver;
use once_cell::sync::OnceCell;

use crate::error::{check, Error, Result};

static INIT: OnceCell<Result<&'static Driver>> = OnceCell::new();

/// The loaded and initialised libcuda table.
///
/// # Errors
///
/// [`Error::Load`] when libcuda cannot be loaded (the error lists every
/// candidate tried); [`Error::Driver`] when `cuInit` fails (no device, a
/// driver too old, ...). The first outcome is kept for the process.
/// [`Error::ForkedChild`] in a child made by `fork` after this process
/// loaded the driver: CUDA's state does not survive `fork`, and any driver
/// call there is undefined behaviour, so none is made.
#[inline]
pub(crate) fn cu() -> Result<&'static Driver> {
    if FORKED.load(Ordering::Relaxed) {
        return Err(Error::ForkedChild);
    }
    match INIT.get() {
        Some(Ok(table)) => Ok(table),
        Some(Err(err)) => Err(err.clone()),
        None => INIT.get_or_init(init).clone(),
    }
}

/// The table for the launch fast path: null until [`arm_fast`] stored it
/// (after the table loaded), and null again in a child made by `fork`
/// (the atfork handler clears it). One load, on a line of its own, where
/// [`cu`] reads `FORKED` and `INIT`.
static FAST: AtomicPtr<Driver> = AtomicPtr::new(std::ptr::null_mut());

/// [`cu`] for the launch fast path: the table once [`arm_fast`] armed it,
/// never in a forked child; `None` sends the caller to its full path,
/// which calls [`cu`].
#[inline(always)]
pub(crate) fn cu_fast() -> Option<&'static Driver> {
    // Acquire, pairing with `arm_fast`'s Release store: a thread that reads
    // the pointer also sees the table it points at fully written (free on
    // x86, where every load is an acquire).
    let table = FAST.load(Ordering::Acquire);
    // SAFETY: `FAST` holds null or a pointer from a `&'static Driver`
    // (`arm_fast`; the atfork handler stores only null), so a non-null one
    // points at a table that lives for the process. Its initialisation
    // happens before this read: it was complete when `cu` handed the table
    // to the thread that armed it (`INIT` is a `OnceCell`, whose readers
    // synchronize with its initialiser), that thread's Release store
    // followed, and this Acquire load read that store, so the table's
    // fields are read here without a data race.
    unsafe { table.cast_const().as_ref() }
}

/// Lets [`cu_fast`] return `cu` (a table [`cu`] returned), unless this is
/// a forked child. The launch path arms it only when it needs nothing of
/// the full path's extras (tracing, NVTX ranges), which are fixed for the
/// process once read.
pub(crate) fn arm_fast(cu: &'static Driver) {
    if !FORKED.load(Ordering::Relaxed) {
        // Release: publishes the table's initialisation, which this thread
        // saw complete (it got `cu` from `cu()`), to every thread whose
        // Acquire load in `cu_fast` reads this pointer.
        FAST.store(std::ptr::from_ref(cu).cast_mut(), Ordering::Release);
    }
}

/// Set in a child made by `fork` once the parent had loaded the driver
/// (the handler [`init`] registers runs in the child, before `fork`
/// returns there).
static FORKED: AtomicBool = AtomicBool::new(false);

/// Whether this process is a child made by `fork` after its parent loaded
/// the driver: nothing of cudakit's may call the driver here, and nothing
/// the parent allocated is this process's to free.
#[inline]
pub(crate) fn forked() -> bool {
    FORKED.load(Ordering::Relaxed)
}

/// Runs in the child of a `fork` (an atfork handler: only atomic stores,
/// which are async-signal-safe). The null store to `FAST` may be Relaxed:
/// null publishes no data that a reader could dereference, and the child
/// has one thread, the one running this handler before `fork` returns
/// there, so every later `cu_fast` of the child follows the store in
/// program order and reads null (`FORKED`, stored first, keeps
/// `arm_fast` from storing a table there again).
extern "C" fn mark_forked_child() {
    FORKED.store(true, Ordering::Relaxed);
    FAST.store(std::ptr::null_mut(), Ordering::Relaxed);
}

extern "C" {
    /// glibc's and musl's `pthread_atfork` (in the C library every Rust
    /// program on Linux links).
    fn pthread_atfork(
        prepare: Option<extern "C" fn()>,
        parent: Option<extern "C" fn()>,
        child: Option<extern "C" fn()>,
    ) -> std::ffi::c_int;
}

fn init() -> Result<&'static Driver> {
    // Registered before the driver exists in this process, so that no child
    // forked after it can reach the driver unflagged.
    // SAFETY: registers a handler that only stores to an atomic; handlers
    // stay registered for the life of the process, as the function does.
    let rc = unsafe { pthread_atfork(None, None, Some(mark_forked_child)) };
    if rc != 0 {
        return Err(Error::InvalidArgument(format!(
            "pthread_atfork failed ({rc}): cudakit needs it to keep a forked child from \
             calling the driver, so it does not load libcuda"
        )));
    }
    let table = cuda_sys::driver().map_err(Error::Load)?;
    // SAFETY: cuInit takes flags by value; 0 is the only defined value.
    check("cuInit", unsafe { (table.cuInit)(0) })?;
    Ok(table)
}

/// The driver's CUDA version as (major, minor), e.g. (13, 0).
///
/// # Errors
///
/// Load and `cuInit` errors, and `cuDriverGetVersion` failing.
pub fn driver_version() -> Result<(i32, i32)> {
    let cu = cu()?;
    let mut version = 0;
    // SAFETY: a valid out-pointer.
    check("cuDriverGetVersion", unsafe {
        (cu.cuDriverGetVersion)(&mut version)
    })?;
    Ok((version / 1000, (version % 1000) / 10))
}

/// Returns the optional entry point or [`Error::NotSupported`].
macro_rules! optional {
    ($cu:expr, $field:ident, $needs:literal) => {
        match $cu.$field {
            Some(f) => f,
            None => {
                return Err($crate::error::Error::NotSupported {
                    feature: stringify!($field),
                    needs_driver: $needs,
                })
            }
        }
    };
}
pub(crate) use optional;
