//! Communicators: creation (one process over several devices, or one rank
//! of several processes), asynchronous errors, abort, destruction.

use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cuda_sys::nccl::{ncclConfig_t, ncclUniqueId, NCCL_UNIQUE_ID_BYTES};
use cuda_sys::{ncclComm_t, ncclResult_t, CUresult};

use super::{check, nccl};
use crate::context::Context;
use crate::error::{Error, NcclCode, NcclError, Result};
use crate::work::stream::Stream;

/// The bootstrap id of a communicator of several processes
/// (`ncclUniqueId`, 128 bytes). Rank 0 makes it ([`UniqueId::new`]) and
/// sends it to the other ranks over any channel; see the
/// [module docs](super).
#[derive(Clone, Copy)]
pub struct UniqueId(ncclUniqueId);

impl std::fmt::Debug for UniqueId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("UniqueId(..)")
    }
}

impl UniqueId {
    /// A fresh id (`ncclGetUniqueId`); it also starts rank 0's bootstrap
    /// listener.
    ///
    /// # Errors
    ///
    /// [`Error::Load`] when NCCL is missing; NCCL errors.
    pub fn new() -> Result<UniqueId> {
        let nc = nccl()?;
        let mut id = ncclUniqueId {
            internal: [0; NCCL_UNIQUE_ID_BYTES],
        };
        // SAFETY: a valid out-pointer to a 128-byte id.
        let rc = unsafe { (nc.ncclGetUniqueId)(&mut id) };
        check(nc, "ncclGetUniqueId", rc, None)?;
        Ok(UniqueId(id))
    }

    /// The id's 128 bytes.
    pub fn as_bytes(&self) -> [u8; NCCL_UNIQUE_ID_BYTES] {
        self.0.internal.map(|c| c as u8)
    }

    /// The id from its 128 bytes.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`] for any other length.
    pub fn from_bytes(bytes: &[u8]) -> Result<UniqueId> {
        let bytes: [u8; NCCL_UNIQUE_ID_BYTES] =
            bytes.try_into().map_err(|_| Error::LengthMismatch {
                what: "UniqueId::from_bytes",
                expected: NCCL_UNIQUE_ID_BYTES,
                got: bytes.len(),
            })?;
        Ok(UniqueId(ncclUniqueId {
            internal: bytes.map(|b| b as std::ffi::c_char),
        }))
    }

    /// The id as 256 lowercase hex digits, for text channels (a pipe, a
    /// file, an environment variable).
    pub fn to_hex(&self) -> String {
        self.as_bytes().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// The id from [`UniqueId::to_hex`]'s text (surrounding white space
    /// ignored).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for anything but 256 hex digits.
    pub fn from_hex(text: &str) -> Result<UniqueId> {
        let text = text.trim();
        let bad = || {
            Error::InvalidArgument(format!(
                "a unique id is 256 hex digits; got {} character(s)",
                text.len()
            ))
        };
        if text.len() != 2 * NCCL_UNIQUE_ID_BYTES || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let bytes: Vec<u8> = (0..NCCL_UNIQUE_ID_BYTES)
            .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| bad()))
            .collect::<Result<_>>()?;
        UniqueId::from_bytes(&bytes)
    }
}

/// Communicators created together in this process (one `init_all`), or a
/// lone rank: the group checks match the calls of a clique's local ranks.
#[derive(Debug)]
pub(crate) struct Clique {
    /// Unique in the process.
    pub(crate) id: u64,
    /// Ranks of the clique in this process.
    pub(crate) local: usize,
}

static CLIQUES: AtomicU64 = AtomicU64::new(1);

/// One rank of an NCCL communicator, on one device.
///
/// Dropping it flushes and frees it (`ncclCommFinalize`,
/// `ncclCommDestroy`); after an error or a timeout it has been aborted
/// (`ncclCommAbort`) instead. A communicator may move to another thread,
/// but is used by one thread at a time (it is not `Sync`).
pub struct Communicator {
    ctx: Context,
    raw: Cell<ncclComm_t>,
    rank: usize,
    size: usize,
    pub(crate) clique: Arc<Clique>,
    nonblocking: bool,
    timeout: Duration,
    aborted: RefCell<Option<String>>,
}

// SAFETY: an NCCL communicator may be used from any thread, one at a time;
// `Communicator` is not Sync (Cell, RefCell), so it is.
unsafe impl Send for Communicator {}

impl std::fmt::Debug for Communicator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Communicator")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("device", &self.ctx.device().ordinal())
            .field("aborted", &self.aborted.borrow())
            .finish()
    }
}

/// How long a blocking wait of the non-blocking machinery waits by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

impl Communicator {
    /// One communicator per context, all of one process
    /// (`ncclCommInitAll`); rank `i` is on `contexts[i]`'s device.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for no context or one device twice;
    /// [`Error::Load`] when NCCL is missing; NCCL errors; a poisoned
    /// context.
    pub fn init_all(contexts: &[&Context]) -> Result<Vec<Communicator>> {
        if contexts.is_empty() {
            return Err(Error::InvalidArgument(
                "Communicator::init_all needs at least one context".into(),
            ));
        }
        let devices: Vec<c_int> = contexts.iter().map(|c| c.device().ordinal()).collect();
        for (i, d) in devices.iter().enumerate() {
            if devices[..i].contains(d) {
                return Err(Error::InvalidArgument(format!(
                    "Communicator::init_all: device {d} is given twice; NCCL needs one rank per \
                     device"
                )));
            }
        }
        let nc = nccl()?;
        for c in contexts {
            c.enter()?;
        }
        let mut raw: Vec<ncclComm_t> = vec![std::ptr::null_mut(); contexts.len()];
        // SAFETY: `raw` has room for `ndev` handles, `devices` holds `ndev`
        // distinct ordinals of present devices.
        let rc = unsafe {
            (nc.ncclCommInitAll)(raw.as_mut_ptr(), devices.len() as c_int, devices.as_ptr())
        };
        check(nc, "ncclCommInitAll", rc, None)?;
        let clique = Arc::new(Clique {
            id: CLIQUES.fetch_add(1, Ordering::Relaxed),
            local: contexts.len(),
        });
        Ok(raw
            .into_iter()
            .zip(contexts)
            .enumerate()
            .map(|(rank, (raw, ctx))| Communicator {
                ctx: (*ctx).clone(),
                raw: Cell::new(raw),
                rank,
                size: contexts.len(),
                clique: clique.clone(),
                nonblocking: false,
                timeout: DEFAULT_TIMEOUT,
                aborted: RefCell::new(None),
            })
            .collect())
    }

    /// Rank `rank` of `size`, on `ctx`'s device, joining the communicator
    /// of `id` (`ncclCommInitRankConfig` with `blocking = 0`, then
    /// `ncclCommGetAsyncError` polled). Every rank calls it, each in its
    /// own process or thread. When the others have not all joined within
    /// `timeout`, the communicator is aborted (`ncclCommAbort`) and the call
    /// returns [`Error::NcclTimeout`]. `timeout` also bounds later waits of
    /// the communicator's non-blocking calls. (`NCCL_COMM_BLOCKING=1` in the
    /// environment overrides `blocking = 0` inside NCCL: the calls then block
    /// until done and the timeout does not apply.)
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for `rank >= size`; [`Error::NcclTimeout`];
    /// [`Error::NotSupported`] before NCCL 2.14; [`Error::Load`] when NCCL
    /// is missing; NCCL errors; a poisoned context.
    pub fn init_rank(
        ctx: &Context,
        id: &UniqueId,
        rank: usize,
        size: usize,
        timeout: Duration,
    ) -> Result<Communicator> {
        if rank >= size || size > c_int::MAX as usize {
            return Err(Error::InvalidArgument(format!(
                "Communicator::init_rank: rank {rank} of {size} ranks"
            )));
        }
        let nc = nccl()?;
        let init = nc.ncclCommInitRankConfig.ok_or(Error::NotSupported {
            feature: "ncclCommInitRankConfig",
            needs_driver: "NCCL 2.14",
        })?;
        ctx.enter()?;
        let mut config = ncclConfig_t::initializer();
        config.blocking = 0;
        let mut raw: ncclComm_t = std::ptr::null_mut();
        // SAFETY: valid out-pointer and config (NCCL_CONFIG_INITIALIZER's
        // layout, version and magic); the id is passed by value; the
        // device of the communicator is the current context's.
        let rc = unsafe { init(&mut raw, size as c_int, id.0, rank as c_int, &mut config) };
        let comm = Communicator {
            ctx: ctx.clone(),
            raw: Cell::new(raw),
            rank,
            size,
            clique: Arc::new(Clique {
                id: CLIQUES.fetch_add(1, Ordering::Relaxed),
                local: 1,
            }),
            nonblocking: true,
            timeout,
            aborted: RefCell::new(None),
        };
        if rc != ncclResult_t::ncclInProgress {
            if let Err(e) = check(nc, "ncclCommInitRankConfig", rc, Some(raw)) {
                comm.abort_with(e.to_string());
                return Err(e.into());
            }
        }
        comm.wait_ready("ncclCommInitRankConfig")?;
        Ok(comm)
    }

    /// The rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The context of the rank's device.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    /// The raw handle; null once aborted.
    pub fn as_raw(&self) -> ncclComm_t {
        self.raw.get()
    }

    /// Whether calls may return before NCCL has finished them (made by
    /// [`Communicator::init_rank`]).
    pub fn is_nonblocking(&self) -> bool {
        self.nonblocking
    }

    /// Why the communicator was aborted, if it was.
    pub fn aborted(&self) -> Option<String> {
        self.aborted.borrow().clone()
    }

    /// Refuses work on an aborted communicator.
    pub(crate) fn alive(&self) -> Result<ncclComm_t> {
        match &*self.aborted.borrow() {
            Some(cause) => Err(Error::CommunicatorAborted {
                rank: self.rank,
                cause: cause.clone(),
            }),
            None => Ok(self.raw.get()),
        }
    }

    /// Aborts the communicator (`ncclCommAbort`): operations still running
    /// on the device stop, and every later call returns
    /// [`Error::CommunicatorAborted`]. Idempotent.
    pub fn abort(&self) {
        self.abort_with("aborted by the caller".to_owned());
    }

    pub(crate) fn abort_with(&self, cause: String) {
        let raw = self.raw.replace(std::ptr::null_mut());
        self.aborted.borrow_mut().get_or_insert(cause);
        if raw.is_null() {
            return;
        }
        if let Ok(nc) = nccl() {
            self.ctx.enter_for_drop();
            // SAFETY: a live communicator, aborted once (the handle is
            // nulled above).
            let _ = unsafe { (nc.ncclCommAbort)(raw) };
        }
    }

    /// The communicator's asynchronous error (`ncclCommGetAsyncError`):
    /// `Ok(true)` while a non-blocking operation is in progress,
    /// `Ok(false)` when all is well. An error aborts the communicator.
    ///
    /// # Errors
    ///
    /// The asynchronous error, after the abort; [`Error::CommunicatorAborted`].
    pub fn check_async(&self) -> Result<bool> {
        let raw = self.alive()?;
        let nc = nccl()?;
        let mut state = ncclResult_t::ncclSuccess;
        // SAFETY: a live communicator and a valid out-pointer.
        let rc = unsafe { (nc.ncclCommGetAsyncError)(raw, &mut state) };
        let result = check(nc, "ncclCommGetAsyncError", rc, Some(raw)).and_then(|()| {
            if state == ncclResult_t::ncclInProgress {
                return Ok(true);
            }
            check(nc, "ncclCommGetAsyncError", state, Some(raw)).map(|()| false)
        });
        result.map_err(|e: NcclError| {
            self.abort_with(e.to_string());
            e.into()
        })
    }

    /// Waits until no non-blocking operation is in progress, up to the
    /// communicator's timeout; then aborts.
    pub(crate) fn wait_ready(&self, call: &'static str) -> Result<()> {
        let start = Instant::now();
        while self.check_async()? {
            if start.elapsed() > self.timeout {
                self.abort_with(format!("{call} timed out after {:?}", self.timeout));
                return Err(Error::NcclTimeout {
                    call,
                    rank: self.rank,
                    waited: start.elapsed(),
                });
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        Ok(())
    }

    /// Waits for `stream` (of this communicator's context) to finish,
    /// polling it (`cuStreamQuery`) and the communicator's asynchronous
    /// error, for at most `timeout`. On an error or the timeout the
    /// communicator is aborted, which also stops its kernels, so the
    /// scope's own synchronization returns. Use it where a rank in another
    /// process may never make its matching call.
    ///
    /// # Errors
    ///
    /// [`Error::NcclTimeout`]; the asynchronous error; driver errors;
    /// [`Error::ContextMismatch`] for a stream of another context.
    pub fn synchronize(&self, stream: &Stream<'_>, timeout: Duration) -> Result<()> {
        crate::context::same_context("Communicator::synchronize", &self.ctx, stream.context())?;
        let start = Instant::now();
        loop {
            let cu = self.ctx.enter()?;
            // SAFETY: a live stream of the current context.
            let rc = unsafe { (cu.cuStreamQuery)(stream.as_raw()) };
            if rc != CUresult::CUDA_ERROR_NOT_READY {
                self.ctx.check("cuStreamQuery", rc)?;
                return self.check_async().map(|_| ());
            }
            self.check_async()?;
            if start.elapsed() > timeout {
                self.abort_with(format!("a collective timed out after {timeout:?}"));
                return Err(Error::NcclTimeout {
                    call: "Communicator::synchronize",
                    rank: self.rank,
                    waited: start.elapsed(),
                });
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

impl Drop for Communicator {
    fn drop(&mut self) {
        let raw = self.raw.get();
        if raw.is_null() {
            return;
        }
        let Ok(nc) = nccl() else { return };
        self.ctx.enter_for_drop();
        if self.nonblocking {
            if let Some(finalize) = nc.ncclCommFinalize {
                // SAFETY: a live communicator, finalized once before destroy.
                let rc = unsafe { finalize(raw) };
                let ok = matches!(rc, ncclResult_t::ncclSuccess | ncclResult_t::ncclInProgress);
                if !ok || self.wait_ready("ncclCommFinalize").is_err() {
                    // Aborted (by wait_ready, or now): nothing left to destroy.
                    self.abort_with(format!("ncclCommFinalize returned {rc:?}"));
                    return;
                }
            }
        }
        // SAFETY: a live communicator, destroyed once; `Drop` runs once.
        let rc = unsafe { (nc.ncclCommDestroy)(raw) };
        if NcclCode::from_raw(rc).is_some() {
            eprintln!(
                "cudakit: ncclCommDestroy of rank {} returned {rc:?}",
                self.rank
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_bytes_and_hex() {
        let bytes: Vec<u8> = (0..128u32).map(|i| (i * 7 + 3) as u8).collect();
        let id = UniqueId::from_bytes(&bytes).unwrap();
        assert_eq!(id.as_bytes().to_vec(), bytes);
        let hex = id.to_hex();
        assert_eq!(hex.len(), 256);
        let back = UniqueId::from_hex(&format!(" {hex}\n")).unwrap();
        assert_eq!(back.as_bytes(), id.as_bytes());
        assert!(matches!(
            UniqueId::from_bytes(&bytes[..5]),
            Err(Error::LengthMismatch {
                expected: 128,
                got: 5,
                ..
            })
        ));
        assert!(matches!(
            UniqueId::from_hex("abc"),
            Err(Error::InvalidArgument(_))
        ));
        let mut bad = hex.clone();
        bad.replace_range(0..2, "zz");
        assert!(matches!(
            UniqueId::from_hex(&bad),
            Err(Error::InvalidArgument(_))
        ));
        // A sign is not a hex digit (u8::from_str_radix would accept "+f").
        assert!(UniqueId::from_hex(&"+f".repeat(128)).is_err());
    }
}
