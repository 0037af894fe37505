//! Groups: collectives collected, checked, then handed to NCCL between
//! `ncclGroupStart` and `ncclGroupEnd`.
//!
//! What is checked before NCCL sees a call: devices of the scope, stream
//! and buffers; lengths; send and receive buffers that overlap other than
//! in NCCL's in-place layout; that no stream is capturing (a captured
//! collective could replay after its communicator was aborted); and, for
//! the ranks of one process, that their calls match (count, type,
//! operator, root, peers). Any communicator that cannot take its call is
//! refused before the group starts, so a group is never issued in part; an
//! asynchronous error after it aborts every communicator of the group.
//!
//! What cannot be checked: the calls of ranks in other processes. A
//! mismatch there makes NCCL hang or mix data, and a scope's final
//! synchronization has no time limit: with ranks in other processes, call
//! [`Communicator::synchronize`] with a timeout before the scope ends.

use std::cell::RefCell;
use std::ffi::{c_int, c_void};
use std::marker::PhantomData;
use std::sync::Arc;

use cuda_sys::nccl::{ncclDataType_t, ncclRedOp_t};
use cuda_sys::{ncclResult_t, CUdeviceptr, CUstream};

use super::comm::Communicator;
use super::{check, nccl, NcclElement, ReduceOp};
use crate::context::stream_state::StreamState;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::memory::{DeviceDst, DeviceSrc};
use crate::work::scope::Scope;
use crate::work::stream::Stream;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    AllReduce,
    Broadcast,
    Reduce,
    AllGather,
    ReduceScatter,
    Send,
    Recv,
}

impl Kind {
    fn call(self) -> &'static str {
        match self {
            Kind::AllReduce => "ncclAllReduce",
            Kind::Broadcast => "ncclBroadcast",
            Kind::Reduce => "ncclReduce",
            Kind::AllGather => "ncclAllGather",
            Kind::ReduceScatter => "ncclReduceScatter",
            Kind::Send => "ncclSend",
            Kind::Recv => "ncclRecv",
        }
    }
}

/// One queued call.
struct Call<'g> {
    comm: &'g Communicator,
    kind: Kind,
    stream: CUstream,
    send: CUdeviceptr,
    recv: CUdeviceptr,
    /// The count NCCL is given (per rank for all-gather and reduce-scatter).
    count: usize,
    dtype: ncclDataType_t,
    op: ncclRedOp_t,
    /// The root (broadcast, reduce) or the peer (send, receive); 0 otherwise.
    other: usize,
}

/// Collectives queued for one `ncclGroupStart` / `ncclGroupEnd`; see
/// [`group`]. Each method checks its operands at once and queues the call;
/// nothing reaches NCCL before the group's closure has returned `Ok`.
///
/// The lifetimes make the buffers outlive the group's end: a call's scope
/// (`'s`) must outlive `'env`, which outlives the whole [`group`] call, so
/// a group opened outside a scope cannot take that scope's buffers:
///
/// ```compile_fail,E0521
/// # use cudakit::multi::nccl::{self, Communicator, ReduceOp};
/// # fn f(ctx: &cudakit::Context, comm: &Communicator) -> cudakit::Result<()> {
/// let stream = ctx.stream()?;
/// let x = ctx.alloc::<f32>(4)?;
/// nccl::group(|g| {
///     ctx.scope(|s| g.all_reduce(comm, s, &stream, &x, &x, ReduceOp::Sum))
/// })
/// # }
/// ```
pub struct Group<'g, 'env> {
    calls: RefCell<Vec<Call<'g>>>,
    /// The capture states of the calls' streams, locked (in address order)
    /// from the capture check to `ncclGroupEnd`.
    states: RefCell<Vec<Arc<StreamState>>>,
    _env: PhantomData<&'g mut &'env ()>,
}

impl std::fmt::Debug for Group<'_, '_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Group")
            .field("calls", &self.calls.borrow().len())
            .finish()
    }
}

/// Runs `f`, which queues collectives on the [`Group`]; when it returns
/// `Ok`, checks the calls and hands them to NCCL in one group
/// (`ncclGroupStart`, the calls, `ncclGroupEnd`), then reads every
/// communicator's asynchronous error. Open it inside the scopes whose
/// streams and buffers the calls use (for several devices of one process,
/// scopes nested one per context).
///
/// # Errors
///
/// The first error of `f` (nothing is queued then);
/// [`Error::CollectiveMismatch`] when the calls of this process's ranks of
/// one communicator do not match; NCCL errors (the communicators involved
/// are checked and aborted on an asynchronous error); [`Error::NcclTimeout`]
/// for non-blocking communicators that do not finish queuing in time.
pub fn group<'env, R>(f: impl for<'g> FnOnce(&'g Group<'g, 'env>) -> Result<R>) -> Result<R> {
    let g = Group {
        calls: RefCell::new(Vec::new()),
        states: RefCell::new(Vec::new()),
        _env: PhantomData,
    };
    let r = f(&g)?;
    let calls = g.calls.take();
    if !calls.is_empty() {
        validate(&calls)?;
        issue(&calls, &g.states.borrow())?;
    }
    Ok(r)
}

/// Checks, before NCCL, that the ranks of one communicator living in this
/// process make matching calls. Allocates nothing unless it refuses: the
/// calls of a rank are walked in place, once per comparison.
fn validate(calls: &[Call<'_>]) -> Result<()> {
    for (i, head) in calls.iter().enumerate() {
        let id = head.comm.clique.id;
        // Each clique of this process's ranks once, at its first call.
        if head.comm.clique.local <= 1 || calls[..i].iter().any(|c| c.comm.clique.id == id) {
            continue;
        }
        let of = move |rank: usize| {
            calls
                .iter()
                .filter(move |c| c.comm.clique.id == id && c.comm.rank() == rank)
        };
        let collectives =
            move |rank: usize| of(rank).filter(|c| !matches!(c.kind, Kind::Send | Kind::Recv));
        let size = head.comm.size();
        for rank in 1..size {
            let (n0, n) = (collectives(0).count(), collectives(rank).count());
            if n != n0 {
                let call = collectives(0)
                    .nth(n)
                    .or_else(|| collectives(rank).nth(n0))
                    .map_or("ncclGroupEnd", |c| c.kind.call());
                return Err(Error::CollectiveMismatch {
                    call,
                    reason: format!(
                        "rank 0 makes {n0} collective(s), rank {rank} makes {n} (a rank without \
                         its matching call would wait forever)"
                    ),
                });
            }
            for (k, (a, b)) in collectives(0).zip(collectives(rank)).enumerate() {
                let differ = |what: &str, x: String, y: String| Error::CollectiveMismatch {
                    call: a.kind.call(),
                    reason: format!(
                        "collective {k} of the group: {what} is {x} on rank 0, {y} on rank {rank}"
                    ),
                };
                if a.kind != b.kind {
                    return Err(differ(
                        "the call",
                        a.kind.call().into(),
                        b.kind.call().into(),
                    ));
                }
                if a.dtype != b.dtype {
                    return Err(differ(
                        "the element type",
                        format!("{:?}", a.dtype),
                        format!("{:?}", b.dtype),
                    ));
                }
                if a.count != b.count {
                    return Err(differ(
                        "the count",
                        a.count.to_string(),
                        b.count.to_string(),
                    ));
                }
                if a.op != b.op {
                    return Err(differ(
                        "the operator",
                        format!("{:?}", a.op),
                        format!("{:?}", b.op),
                    ));
                }
                if a.other != b.other {
                    return Err(differ("the root", a.other.to_string(), b.other.to_string()));
                }
            }
        }
        // Point to point: the sends from a to b match b's receives from a.
        let p2p = move |kind: Kind, rank: usize, peer: usize| {
            of(rank)
                .filter(move |c| c.kind == kind && c.other == peer)
                .map(|c| (c.count, c.dtype))
        };
        for a in 0..size {
            for b in 0..size {
                if !p2p(Kind::Send, a, b).eq(p2p(Kind::Recv, b, a)) {
                    let sends: Vec<(usize, ncclDataType_t)> = p2p(Kind::Send, a, b).collect();
                    let recvs: Vec<(usize, ncclDataType_t)> = p2p(Kind::Recv, b, a).collect();
                    return Err(Error::CollectiveMismatch {
                        call: "ncclSend",
                        reason: format!(
                            "rank {a} sends {sends:?} (count, type) to rank {b}, which receives \
                             {recvs:?} from it"
                        ),
                    });
                }
            }
        }
    }
    Ok(())
}

/// Hands the calls to NCCL in one group.
fn issue(calls: &[Call<'_>], states: &[Arc<StreamState>]) -> Result<()> {
    let nc = nccl()?;
    // The streams' capture locks, in address order (another group's issue
    // takes them in the same order; every other path holds one at a time),
    // held until the group has been handed to NCCL: no capture can begin on
    // any of them in between, and one begun since the calls were queued is
    // refused here.
    let mut order: Vec<&Arc<StreamState>> = states.iter().collect();
    order.sort_by_key(|s| Arc::as_ptr(s) as usize);
    let mut guards = Vec::with_capacity(order.len());
    for st in order {
        let g = st.lock();
        if g.capture.is_some() {
            return Err(Error::IllegalDuringCapture {
                operation: "an NCCL collective on a stream that a capture owns",
                device: calls
                    .first()
                    .map_or(0, |c| c.comm.context().device().ordinal()),
            });
        }
        guards.push(g);
    }
    // Everything that can be refused is refused before NCCL sees the first
    // call: a group issued in part would launch some ranks' kernels, which
    // would then wait forever for the ranks that never came.
    // NCCL takes each call's device from its communicator and makes it
    // current itself, so the thread is not switched between the ranks'
    // contexts (that cost more than the calls). One rank's context is made
    // current first: a blocking ncclGroupEnd saves the current device and
    // restores it, and on a thread with none current that would create
    // device 0's primary context, which the process may not use.
    for c in calls {
        c.comm.alive()?;
        c.comm.context().refuse_poisoned()?;
    }
    if let Some(first) = calls.first() {
        first.comm.context().enter()?;
    }
    // SAFETY: starts a group on this thread; ended below on every path.
    check(nc, "ncclGroupStart", unsafe { (nc.ncclGroupStart)() }, None)?;
    let mut first_err: Option<Error> = None;
    // Whether part of the group may have reached the device without the
    // rest (NCCL itself discards a whole group when one of its calls
    // fails; cudakit's own refusals in the loop cannot).
    let mut partial = false;
    for c in calls {
        let raw = match c.comm.alive() {
            Ok(raw) => raw,
            Err(e) => {
                first_err = Some(e);
                partial = true;
                break;
            }
        };
        if let Err(e) = c.comm.context().refuse_poisoned() {
            first_err = Some(e);
            partial = true;
            break;
        }
        let (send, recv) = (c.send as *const c_void, c.recv as *mut c_void);
        let (other, stream) = (c.other as c_int, c.stream);
        // SAFETY: for every arm, `raw` is a live communicator; `stream` a
        // stream of its device, used by the caller's scope, which keeps it
        // and both buffers borrowed until it has synchronized (after this
        // group: the group runs inside the scope, see `Group`); the
        // buffers hold what the count says (checked when the call was
        // queued); the type is the buffers' element type.
        let rc = unsafe {
            match c.kind {
                Kind::AllReduce => {
                    (nc.ncclAllReduce)(send, recv, c.count, c.dtype, c.op, raw, stream)
                }
                Kind::Broadcast => {
                    (nc.ncclBroadcast)(send, recv, c.count, c.dtype, other, raw, stream)
                }
                Kind::Reduce => {
                    (nc.ncclReduce)(send, recv, c.count, c.dtype, c.op, other, raw, stream)
                }
                Kind::AllGather => (nc.ncclAllGather)(send, recv, c.count, c.dtype, raw, stream),
                Kind::ReduceScatter => {
                    (nc.ncclReduceScatter)(send, recv, c.count, c.dtype, c.op, raw, stream)
                }
                Kind::Send => (nc.ncclSend)(send, c.count, c.dtype, other, raw, stream),
                Kind::Recv => (nc.ncclRecv)(recv, c.count, c.dtype, other, raw, stream),
            }
        };
        if rc != ncclResult_t::ncclInProgress {
            if let Err(e) = check(nc, c.kind.call(), rc, Some(raw)) {
                first_err = Some(e.into());
                break;
            }
        }
    }
    // SAFETY: ends the group started above.
    let rc = unsafe { (nc.ncclGroupEnd)() };
    let end = if rc == ncclResult_t::ncclInProgress {
        Ok(())
    } else {
        check(nc, "ncclGroupEnd", rc, None)
    };
    // Every communicator of the group: finish non-blocking queuing, read
    // asynchronous errors (an error aborts the communicator).
    for (i, c) in calls.iter().enumerate() {
        if calls[..i].iter().any(|d| std::ptr::eq(d.comm, c.comm)) {
            continue;
        }
        let state = if c.comm.is_nonblocking() {
            c.comm.wait_ready(c.kind.call())
        } else {
            c.comm.check_async().map(|_| ())
        };
        if let Err(e) = state {
            // An asynchronous error aborted this member; the others' kernels
            // would wait for it forever.
            partial = true;
            first_err.get_or_insert(e);
        }
    }
    if first_err.is_some() || end.is_err() {
        // NCCL's failure paths may leave another device current.
        Context::forget_launch_current();
    }
    if let Some(e) = first_err {
        if partial {
            for c in calls {
                c.comm
                    .abort_with(format!("another call of its group failed: {e}"));
            }
        }
        return Err(e);
    }
    end.map_err(Error::from)
}

/// Refuses send and receive buffers that overlap other than in NCCL's own
/// in-place layout (`in_place_send`: where the send buffer must start for
/// the call to be in place), which NCCL leaves undefined.
fn disjoint_or_in_place(
    call: &'static str,
    send: (u64, usize),
    recv: (u64, usize),
    in_place_send: u64,
) -> Result<()> {
    let (s0, s1) = (send.0, send.0.saturating_add(send.1 as u64));
    let (r0, r1) = (recv.0, recv.0.saturating_add(recv.1 as u64));
    if s1 <= r0 || r1 <= s0 || send.0 == in_place_send {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{call}: the send buffer ({s0:#x}..{s1:#x}) overlaps the receive buffer \
         ({r0:#x}..{r1:#x}) without being NCCL's in-place layout (send at {in_place_send:#x}); \
         NCCL leaves such calls undefined"
    )))
}

fn on_device(
    call: &'static str,
    what: &'static str,
    comm: &Communicator,
    ctx: &Context,
) -> Result<()> {
    if ctx.same(comm.context()) {
        Ok(())
    } else {
        Err(Error::CommunicatorDevice {
            call,
            what,
            rank: comm.rank(),
            communicator_device: comm.context().device().ordinal(),
            got: ctx.device().ordinal(),
        })
    }
}

fn same_len(call: &'static str, expected: usize, got: usize) -> Result<()> {
    crate::memory::same_len(call, expected, got)
}

impl<'g, 'env> Group<'g, 'env> {
    /// Checks the scope, stream and communicator, and counts the scope as
    /// having work.
    fn prepare<'s>(
        &self,
        kind: Kind,
        comm: &Communicator,
        s: &'s Scope<'s, '_>,
        stream: &'s Stream<'_>,
    ) -> Result<CUstream> {
        comm.alive()?;
        let call = kind.call();
        on_device(call, "the scope", comm, s.context())?;
        on_device(call, "the stream", comm, stream.context())?;
        // A captured collective would replay after the communicator could
        // have been aborted and freed (abort takes `&self`): refused, on a
        // capturing thread and on a captured stream; checked again, under
        // the streams' locks, when the group is handed to NCCL (`issue`).
        let refuse = || Error::IllegalDuringCapture {
            operation: call,
            device: comm.context().device().ordinal(),
        };
        if crate::context::release::thread_capturing() {
            return Err(refuse());
        }
        let u = s.use_stream_after_all(stream)?;
        if u.captured() {
            return Err(refuse());
        }
        let raw = *u;
        drop(u);
        let state = stream.state();
        let mut states = self.states.borrow_mut();
        if !states.iter().any(|s| Arc::ptr_eq(s, state)) {
            states.push(state.clone());
        }
        Ok(raw)
    }

    fn push(&self, call: Call<'g>) {
        self.calls.borrow_mut().push(call);
    }

    /// All-reduce (`ncclAllReduce`): every rank's `recv` gets the reduction
    /// of every rank's `send`. `send` and `recv` may be the same buffer
    /// (in place).
    ///
    /// # Errors
    ///
    /// [`Error::CommunicatorDevice`] for a scope, stream or buffer of
    /// another device; [`Error::LengthMismatch`];
    /// [`Error::CommunicatorAborted`].
    #[allow(clippy::too_many_arguments)]
    pub fn all_reduce<'s, T: NcclElement>(
        &self,
        comm: &'s Communicator,
        s: &'s Scope<'s, '_>,
        stream: &'s Stream<'_>,
        send: impl DeviceSrc<'s, T>,
        recv: impl DeviceDst<'s, T>,
        op: ReduceOp,
    ) -> Result<()>
    where
        's: 'env,
    {
        let kind = Kind::AllReduce;
        on_device(kind.call(), "the send buffer", comm, send.context())?;
        on_device(kind.call(), "the receive buffer", comm, recv.context())?;
        same_len(kind.call(), send.len(), recv.len())?;
        let bytes = send.len() * std::mem::size_of::<T>();
        let (sp, rp) = (send.device_ptr().as_raw(), recv.device_ptr().as_raw());
        disjoint_or_in_place(kind.call(), (sp, bytes), (rp, bytes), rp)?;
        let stream = self.prepare(kind, comm, s, stream)?;
        self.push(Call {
            comm,
            kind,
            stream,
            send: send.device_ptr().as_raw(),
            recv: recv.device_ptr().as_raw(),
            count: send.len(),
            dtype: T::DATA_TYPE,
            op: op.as_raw(),
            other: 0,
        });
        Ok(())
    }

    /// Broadcast (`ncclBroadcast`, in place): rank `root`'s `buffer` is
    /// copied into every other rank's.
    ///
    /// # Errors
    ///
    /// As [`Group::all_reduce`]; [`Error::InvalidArgument`] for a root
    /// outside the communicator.
    pub fn broadcast<'s, T: NcclElement>(
        &self,
        comm: &'s Communicator,
        s: &'s Scope<'s, '_>,
        stream: &'s Stream<'_>,
        buffer: impl DeviceDst<'s, T>,
        root: usize,
    ) -> Result<()>
    where
        's: 'env,
    {
        let kind = Kind::Broadcast;
        check_rank(kind, comm, root)?;
        on_device(kind.call(), "the buffer", comm, buffer.context())?;
        let stream = self.prepare(kind, comm, s, stream)?;
        let p = buffer.device_ptr().as_raw();
        self.push(Call {
            comm,
            kind,
            stream,
            send: p,
            recv: p,
            count: buffer.len(),
            dtype: T::DATA_TYPE,
            op: ncclRedOp_t::ncclSum,
            other: root,
        });
        Ok(())
    }

    /// Reduce (`ncclReduce`): rank `root`'s `recv` gets the reduction of
    /// every rank's `send`; the other ranks' `recv` is not written.
    ///
    /// # Errors
    ///
    /// As [`Group::broadcast`].
    #[allow(clippy::too_many_arguments)]
    pub fn reduce<'s, T: NcclElement>(
        &self,
        comm: &'s Communicator,
        s: &'s Scope<'s, '_>,
        stream: &'s Stream<'_>,
        send: impl DeviceSrc<'s, T>,
        recv: impl DeviceDst<'s, T>,
        op: ReduceOp,
        root: usize,
    ) -> Result<()>
    where
        's: 'env,
    {
        let kind = Kind::Reduce;
        check_rank(kind, comm, root)?;
        on_device(kind.call(), "the send buffer", comm, send.context())?;
        on_device(kind.call(), "the receive buffer", comm, recv.context())?;
        same_len(kind.call(), send.len(), recv.len())?;
        let bytes = send.len() * std::mem::size_of::<T>();
        let (sp, rp) = (send.device_ptr().as_raw(), recv.device_ptr().as_raw());
        disjoint_or_in_place(kind.call(), (sp, bytes), (rp, bytes), rp)?;
        let stream = self.prepare(kind, comm, s, stream)?;
        self.push(Call {
            comm,
            kind,
            stream,
            send: send.device_ptr().as_raw(),
            recv: recv.device_ptr().as_raw(),
            count: send.len(),
            dtype: T::DATA_TYPE,
            op: op.as_raw(),
            other: root,
        });
        Ok(())
    }

    /// All-gather (`ncclAllGather`): every rank's `recv` (of `size` times
    /// `send`'s length) gets rank `i`'s `send` at offset `i * send.len()`.
    ///
    /// # Errors
    ///
    /// As [`Group::all_reduce`].
    pub fn all_gather<'s, T: NcclElement>(
        &self,
        comm: &'s Communicator,
        s: &'s Scope<'s, '_>,
        stream: &'s Stream<'_>,
        send: impl DeviceSrc<'s, T>,
        recv: impl DeviceDst<'s, T>,
    ) -> Result<()>
    where
        's: 'env,
    {
        let kind = Kind::AllGather;
        on_device(kind.call(), "the send buffer", comm, send.context())?;
        on_device(kind.call(), "the receive buffer", comm, recv.context())?;
        let want = send
            .len()
            .checked_mul(comm.size())
            .ok_or(Error::SizeOverflow {
                len: send.len(),
                elem_size: comm.size(),
            })?;
        same_len(kind.call(), want, recv.len())?;
        let esize = std::mem::size_of::<T>() as u64;
        let (sp, rp) = (send.device_ptr().as_raw(), recv.device_ptr().as_raw());
        // In place: send is rank's block of recv.
        let in_place = rp + (comm.rank() * send.len()) as u64 * esize;
        disjoint_or_in_place(
            kind.call(),
            (sp, send.len() * esize as usize),
            (rp, recv.len() * esize as usize),
            in_place,
        )?;
        let stream = self.prepare(kind, comm, s, stream)?;
        self.push(Call {
            comm,
            kind,
            stream,
            send: send.device_ptr().as_raw(),
            recv: recv.device_ptr().as_raw(),
            count: send.len(),
            dtype: T::DATA_TYPE,
            op: ncclRedOp_t::ncclSum,
            other: 0,
        });
        Ok(())
    }

    /// Reduce-scatter (`ncclReduceScatter`): `send` holds `size` blocks of
    /// `recv`'s length; rank `i`'s `recv` gets the reduction of every
    /// rank's block `i`.
    ///
    /// # Errors
    ///
    /// As [`Group::all_reduce`].
    #[allow(clippy::too_many_arguments)]
    pub fn reduce_scatter<'s, T: NcclElement>(
        &self,
        comm: &'s Communicator,
        s: &'s Scope<'s, '_>,
        stream: &'s Stream<'_>,
        send: impl DeviceSrc<'s, T>,
        recv: impl DeviceDst<'s, T>,
        op: ReduceOp,
    ) -> Result<()>
    where
        's: 'env,
    {
        let kind = Kind::ReduceScatter;
        on_device(kind.call(), "the send buffer", comm, send.context())?;
        on_device(kind.call(), "the receive buffer", comm, recv.context())?;
        let want = recv
            .len()
            .checked_mul(comm.size())
            .ok_or(Error::SizeOverflow {
                len: recv.len(),
                elem_size: comm.size(),
            })?;
        same_len(kind.call(), want, send.len())?;
        let esize = std::mem::size_of::<T>() as u64;
        let (sp, rp) = (send.device_ptr().as_raw(), recv.device_ptr().as_raw());
        // In place: recv is rank's block of send, so send starts rank blocks
        // before recv.
        let in_place = rp.wrapping_sub((comm.rank() * recv.len()) as u64 * esize);
        disjoint_or_in_place(
            kind.call(),
            (sp, send.len() * esize as usize),
            (rp, recv.len() * esize as usize),
            in_place,
        )?;
        let stream = self.prepare(kind, comm, s, stream)?;
        self.push(Call {
            comm,
            kind,
            stream,
            send: send.device_ptr().as_raw(),
            recv: recv.device_ptr().as_raw(),
            count: recv.len(),
            dtype: T::DATA_TYPE,
            op: op.as_raw(),
            other: 0,
        });
        Ok(())
    }

    /// Sends `buffer` to rank `peer` (`ncclSend`), which receives it with
    /// [`Group::recv`].
    ///
    /// # Errors
    ///
    /// As [`Group::broadcast`].
    pub fn send<'s, T: NcclElement>(
        &self,
        comm: &'s Communicator,
        s: &'s Scope<'s, '_>,
        stream: &'s Stream<'_>,
        buffer: impl DeviceSrc<'s, T>,
        peer: usize,
    ) -> Result<()>
    where
        's: 'env,
    {
        let kind = Kind::Send;
        check_rank(kind, comm, peer)?;
        on_device(kind.call(), "the buffer", comm, buffer.context())?;
        let stream = self.prepare(kind, comm, s, stream)?;
        self.push(Call {
            comm,
            kind,
            stream,
            send: buffer.device_ptr().as_raw(),
            recv: 0,
            count: buffer.len(),
            dtype: T::DATA_TYPE,
            op: ncclRedOp_t::ncclSum,
            other: peer,
        });
        Ok(())
    }

    /// Receives into `buffer` from rank `peer` (`ncclRecv`).
    ///
    /// # Errors
    ///
    /// As [`Group::broadcast`].
    pub fn recv<'s, T: NcclElement>(
        &self,
        comm: &'s Communicator,
        s: &'s Scope<'s, '_>,
        stream: &'s Stream<'_>,
        buffer: impl DeviceDst<'s, T>,
        peer: usize,
    ) -> Result<()>
    where
        's: 'env,
    {
        let kind = Kind::Recv;
        check_rank(kind, comm, peer)?;
        on_device(kind.call(), "the buffer", comm, buffer.context())?;
        let stream = self.prepare(kind, comm, s, stream)?;
        self.push(Call {
            comm,
            kind,
            stream,
            send: 0,
            recv: buffer.device_ptr().as_raw(),
            count: buffer.len(),
            dtype: T::DATA_TYPE,
            op: ncclRedOp_t::ncclSum,
            other: peer,
        });
        Ok(())
    }
}

fn check_rank(kind: Kind, comm: &Communicator, rank: usize) -> Result<()> {
    if rank < comm.size() {
        Ok(())
    } else {
        Err(Error::InvalidArgument(format!(
            "{}: rank {rank} is outside the communicator of {} rank(s)",
            kind.call(),
            comm.size()
        )))
    }
}

/// The single-call forms, for a communicator with one rank in this process
/// (made by [`Communicator::init_rank`]). For ranks made together by
/// [`Communicator::init_all`], use one [`group`] holding every rank's call:
/// a lone call is [`Error::CollectiveMismatch`] (it would wait forever).
impl Communicator {
    /// [`Group::all_reduce`] as a group of one call.
    ///
    /// # Errors
    ///
    /// As [`group`] and [`Group::all_reduce`].
    pub fn all_reduce<'s, T: NcclElement>(
        &'s self,
        s: &'s Scope<'s, '_>,
        stream: &'s Stream<'_>,
        send: impl DeviceSrc<'s, T>,
        recv: impl DeviceDst<'s, T>,
        op: ReduceOp,
    ) -> Result<()> {
        group(|g| g.all_reduce(self, s, stream, send, recv, op))
    }

    /// [`Group::broadcast`] as a group of one call.
    ///
    /// # Errors
    ///
    /// As [`group`] and [`Group::broadcast`].
    pub fn broadcast<'s, T: NcclElement>(
        &'s self,
        s: &'s Scope<'s, '_>,
        stream: &'s Stream<'_>,
        buffer: impl DeviceDst<'s, T>,
        root: usize,
    ) -> Result<()> {
        group(|g| g.broadcast(self, s, stream, buffer, root))
    }

    /// [`Group::all_gather`] as a group of one call.
    ///
    /// # Errors
    ///
    /// As [`group`] and [`Group::all_gather`].
    pub fn all_gather<'s, T: NcclElement>(
        &'s self,
        s: &'s Scope<'s, '_>,
        stream: &'s Stream<'_>,
        send: impl DeviceSrc<'s, T>,
        recv: impl DeviceDst<'s, T>,
    ) -> Result<()> {
        group(|g| g.all_gather(self, s, stream, send, recv))
    }
}

#[cfg(test)]
mod tests {
    use super::disjoint_or_in_place as d;

    #[test]
    fn overlapping_buffers_are_refused_unless_in_place() {
        // Disjoint, both orders.
        assert!(d("c", (0x1000, 256), (0x2000, 256), 0x2000).is_ok());
        assert!(d("c", (0x2000, 256), (0x1000, 256), 0x1000).is_ok());
        // Exactly in place.
        assert!(d("c", (0x1000, 256), (0x1000, 256), 0x1000).is_ok());
        // All-gather in place: send is block `rank` of recv.
        assert!(d("c", (0x1100, 256), (0x1000, 1024), 0x1100).is_ok());
        // Shifted by one element: refused.
        let e = d("ncclAllReduce", (0x1004, 256), (0x1000, 256), 0x1000).unwrap_err();
        assert!(e.to_string().contains("overlaps"), "{e}");
        // All-gather with send == recv on rank 1: refused.
        assert!(d("c", (0x1000, 256), (0x1000, 1024), 0x1100).is_err());
    }
}
