//! Peer access between devices and copies from one device to another.
//!
//! - The topology: [`PeerLink`] for one ordered pair of devices
//!   (`cuDeviceCanAccessPeer`, `cuDeviceGetP2PAttribute`), [`PeerMatrix`]
//!   for every pair.
//! - [`Context::enable_peer_access`] lets kernels of one context read and
//!   write another device's memory. It is idempotent; where the devices
//!   cannot reach each other it is [`Error::PeerAccessUnsupported`]. Each
//!   context keeps a record of the devices it has access to: a kernel
//!   argument of another device is accepted by
//!   [`Scope::launch`](crate::Scope::launch) exactly when the record holds
//!   that device, and refused before the driver
//!   ([`Error::ArgumentContextMismatch`]) otherwise.
//! - Copies between devices, synchronous ([`copy_peer`], `cuMemcpyPeer`)
//!   and inside scopes ([`Scope::copy_peer`], `cuMemcpyPeerAsync`), work
//!   with and without peer access: without it the driver stages the copy
//!   through the host.

use std::ffi::c_int;
use std::fmt;

use cuda_sys::{CUdevice_P2PAttribute as P2P, CUresult};

use crate::context::device::Device;
use crate::context::same_context;
use crate::context::Context;
use crate::driver::cu;
use crate::error::{check, Error, Result};
use crate::memory::transfer::copy;
use crate::memory::{byte_len, same_len, DeviceCopy, DeviceDst, DeviceSrc};
use crate::work::scope::{Scope, Timed};
use crate::work::stream::Stream;

/// What one device can do with another's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PeerLink {
    /// The device whose kernels would reach the other's memory.
    pub from: i32,
    /// The device whose memory would be reached.
    pub to: i32,
    /// `cuDeviceCanAccessPeer`.
    pub can_access: bool,
    /// `CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK`: relative performance of
    /// the link (0 is the best).
    pub performance_rank: i32,
    /// `CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED`: atomics over the
    /// link are native.
    pub native_atomics: bool,
    /// `CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED`.
    pub array_access: bool,
}

fn p2p(attribute: P2P, from: Device, to: Device) -> Result<i32> {
    let cu = cu()?;
    let mut value: c_int = 0;
    // SAFETY: a valid out-pointer, two device handles from cuDeviceGet and
    // an attribute of the header.
    check("cuDeviceGetP2PAttribute", unsafe {
        (cu.cuDeviceGetP2PAttribute)(&mut value, attribute, from.as_raw(), to.as_raw())
    })?;
    Ok(value)
}

impl PeerLink {
    /// Reads the link from `from` to `to` (two different devices).
    ///
    /// # Errors
    ///
    /// [`Error::PeerAccessUnsupported`] for one device twice; driver errors.
    pub fn read(from: Device, to: Device) -> Result<PeerLink> {
        if from.ordinal() == to.ordinal() {
            return Err(Error::PeerAccessUnsupported {
                from: from.ordinal(),
                to: to.ordinal(),
                reason: "it is the same device",
            });
        }
        let cu = cu()?;
        let mut can: c_int = 0;
        // SAFETY: a valid out-pointer and two device handles.
        check("cuDeviceCanAccessPeer", unsafe {
            (cu.cuDeviceCanAccessPeer)(&mut can, from.as_raw(), to.as_raw())
        })?;
        Ok(PeerLink {
            from: from.ordinal(),
            to: to.ordinal(),
            can_access: can != 0,
            performance_rank: p2p(P2P::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK, from, to)?,
            native_atomics: p2p(
                P2P::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED,
                from,
                to,
            )? != 0,
            array_access: p2p(
                P2P::CU_DEVICE_P2P_ATTRIBUTE_CUDA_ARRAY_ACCESS_SUPPORTED,
                from,
                to,
            )? != 0,
        })
    }
}

/// The peer topology of every pair of devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerMatrix {
    /// The devices, in ordinal order.
    pub devices: Vec<Device>,
    /// Every ordered pair of different devices.
    pub links: Vec<PeerLink>,
}

impl PeerMatrix {
    /// Reads the links between every pair of devices.
    ///
    /// # Errors
    ///
    /// Load and `cuInit` errors; driver errors.
    pub fn read() -> Result<PeerMatrix> {
        let devices = Device::all()?;
        let mut links = Vec::new();
        for &from in &devices {
            for &to in &devices {
                if from != to {
                    links.push(PeerLink::read(from, to)?);
                }
            }
        }
        Ok(PeerMatrix { devices, links })
    }

    /// The link from device `from` to device `to`; `None` on the diagonal
    /// or for an ordinal not present.
    pub fn get(&self, from: i32, to: i32) -> Option<&PeerLink> {
        self.links.iter().find(|l| l.from == from && l.to == to)
    }
}

/// A table, rows the device whose kernels reach, columns the device
/// reached: `yes r0 atomics` (access, performance rank, native atomics),
/// `no`, `-` on the diagonal.
impl fmt::Display for PeerMatrix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "peer access (row reaches column):\n{:8}", "")?;
        for d in &self.devices {
            write!(f, "{:<18}", format!("GPU{}", d.ordinal()))?;
        }
        for from in &self.devices {
            write!(f, "\n{:8}", format!("GPU{}", from.ordinal()))?;
            for to in &self.devices {
                let cell = match self.get(from.ordinal(), to.ordinal()) {
                    None => "-".to_owned(),
                    Some(l) if !l.can_access => "no".to_owned(),
                    Some(l) => format!(
                        "yes r{}{}",
                        l.performance_rank,
                        if l.native_atomics { " atomics" } else { "" }
                    ),
                };
                write!(f, "{cell:<18}")?;
            }
        }
        Ok(())
    }
}

impl Context {
    /// Whether this context's device can reach `peer`'s memory
    /// (`cuDeviceCanAccessPeer`); `false` for the same device.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn can_access_peer(&self, peer: &Context) -> Result<bool> {
        if self.device() == peer.device() {
            return Ok(false);
        }
        let cu = cu()?;
        let mut can: c_int = 0;
        // SAFETY: a valid out-pointer and two device handles.
        check("cuDeviceCanAccessPeer", unsafe {
            (cu.cuDeviceCanAccessPeer)(&mut can, self.device().as_raw(), peer.device().as_raw())
        })?;
        Ok(can != 0)
    }

    /// Lets this context's kernels and copies reach `peer`'s memory
    /// (`cuCtxEnablePeerAccess`), and records it: from now on a buffer of
    /// `peer` is accepted as a kernel argument of this context. Idempotent:
    /// enabling twice is not an error. Access is one way; enable it on
    /// `peer` too for the other direction.
    ///
    /// # Errors
    ///
    /// [`Error::PeerAccessUnsupported`] where the devices cannot reach each
    /// other (or it is one device, or an ordinal from 64 on, which the
    /// record does not hold); driver errors; a poisoned context (either).
    pub fn enable_peer_access(&self, peer: &Context) -> Result<()> {
        let (from, to) = (self.device().ordinal(), peer.device().ordinal());
        if !(0..64).contains(&to) {
            return Err(Error::PeerAccessUnsupported {
                from,
                to,
                reason: "cudakit records peer access for device ordinals below 64 only",
            });
        }
        if from == to {
            return Err(Error::PeerAccessUnsupported {
                from,
                to,
                reason: "it is the same device",
            });
        }
        if !self.can_access_peer(peer)? {
            return Err(Error::PeerAccessUnsupported {
                from,
                to,
                reason: "cuDeviceCanAccessPeer reports no access",
            });
        }
        peer.enter()?;
        let cu = self.enter()?;
        // SAFETY: this context is current; `peer.as_raw()` is a retained
        // primary context; flags must be 0.
        let rc = unsafe { (cu.cuCtxEnablePeerAccess)(peer.as_raw(), 0) };
        match rc {
            CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => {}
            CUresult::CUDA_ERROR_PEER_ACCESS_UNSUPPORTED => {
                return Err(Error::PeerAccessUnsupported {
                    from,
                    to,
                    reason: "cuCtxEnablePeerAccess: CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
                })
            }
            rc => self.check("cuCtxEnablePeerAccess", rc)?,
        }
        self.record_peer(to, Some(peer.id()));
        Ok(())
    }

    /// Takes back this context's access to `peer`'s memory
    /// (`cuCtxDisablePeerAccess`), after waiting for all of this context's
    /// work (`cuCtxSynchronize`), so that no queued kernel loses access
    /// mid-flight. Idempotent.
    ///
    /// From the moment it is called, launches of this context refuse
    /// `peer`'s buffers, and host replays of graphs whose kernels use them
    /// are refused (`Error::PeerAccessUnsupported`). When the wait or the
    /// driver call fails, access stays enabled in the driver, and so in
    /// cudakit's record: [`Context::peer_access_enabled`] is `true` again
    /// once the error is returned.
    ///
    /// # Safety
    ///
    /// No work that uses `peer`'s memory through this access may be queued
    /// on this context by another thread while the call runs (between its
    /// wait and the driver call, such work would lose its access while it
    /// runs: a device fault), and after it no graph launched from the
    /// device (a `&GraphExec` kernel argument, whose inner graph cudakit
    /// does not check at replay) may use that memory.
    ///
    /// # Errors
    ///
    /// Driver errors (of the wait or of `cuCtxDisablePeerAccess`); a
    /// poisoned context.
    pub unsafe fn disable_peer_access(&self, peer: &Context) -> Result<()> {
        let to = peer.device().ordinal();
        if self.device() == peer.device() {
            self.record_peer(to, None);
            return Ok(());
        }
        let was_enabled = self.peer_enabled(to, peer.id());
        with_record_cleared(
            was_enabled,
            |enabled| self.record_peer(to, enabled.then(|| peer.id())),
            || {
                self.synchronize()?;
                let cu = self.enter()?;
                // SAFETY: this context is current; `peer.as_raw()` is a
                // retained primary context.
                let rc = unsafe { (cu.cuCtxDisablePeerAccess)(peer.as_raw()) };
                if rc == CUresult::CUDA_ERROR_PEER_ACCESS_NOT_ENABLED {
                    return Ok(());
                }
                self.check("cuCtxDisablePeerAccess", rc)
            },
        )
    }

    /// Whether [`Context::enable_peer_access`] to `peer` is in force.
    pub fn peer_access_enabled(&self, peer: &Context) -> bool {
        self.peer_enabled(peer.device().ordinal(), peer.id())
    }
}

/// Runs `disable` (the wait and `cuCtxDisablePeerAccess`) with the peer
/// record cleared, so that launches refuse the peer's buffers from the
/// start; when it fails, the driver still has access enabled, and the
/// record is set back to what it was (`was_enabled`). Only a successful
/// disable leaves the record cleared.
fn with_record_cleared(
    was_enabled: bool,
    record: impl Fn(bool),
    disable: impl FnOnce() -> Result<()>,
) -> Result<()> {
    record(false);
    let result = disable();
    if result.is_err() && was_enabled {
        record(true);
    }
    result
}

/// Copies `src` to `dst`, which may be of different devices, synchronously
/// (`cuMemcpyPeer`, then a wait on both contexts' legacy streams). Works
/// with and without peer access. Like every synchronous call, it first
/// waits for scopes of either context with queued work.
///
/// # Errors
///
/// [`Error::LengthMismatch`]; driver errors; a poisoned context (either).
pub fn copy_peer<'a, T: DeviceCopy>(
    src: impl DeviceSrc<'a, T>,
    dst: impl DeviceDst<'a, T>,
) -> Result<()> {
    same_len("copy_peer", dst.len(), src.len())?;
    let bytes = byte_len::<T>(src.len(), "copy")?;
    let (sc, dc) = (src.context(), dst.context());
    sc.enter()?;
    let _src_work = if sc.same(dc) {
        None
    } else {
        Some(sc.sync_work()?)
    };
    let cu = dc.enter()?;
    let _dst_work = dc.sync_work()?;
    let t = std::time::Instant::now();
    // SAFETY: both ranges hold `bytes` bytes of their contexts' memory (the
    // buffers are borrowed for the call); both contexts are retained.
    let rc = unsafe {
        (cu.cuMemcpyPeer)(
            dst.device_ptr().as_raw(),
            dc.as_raw(),
            src.device_ptr().as_raw(),
            sc.as_raw(),
            bytes,
        )
    };
    dc.check("cuMemcpyPeer", rc)?;
    // Device-to-device copies return before they are done; wait for both.
    copy::sync_legacy(dc)?;
    if !sc.same(dc) {
        copy::sync_legacy(sc)?;
    }
    dc.counters().dtod.add(bytes, Some(t.elapsed()));
    Ok(())
}

impl<'s, 'env> Scope<'s, 'env> {
    /// Copies `src` to `dst`, which may be of different devices, on
    /// `stream` (`cuMemcpyPeerAsync`). One of the two must be of the
    /// scope's context; both stay borrowed until the scope has synchronized.
    /// Works with and without peer access.
    ///
    /// The other device's synchronous calls (`to_vec`, `copy_to_host`, a
    /// synchronize of its context) wait for this copy's stream until the
    /// scope ends, as they wait for the other context's own scopes.
    ///
    /// # Errors
    ///
    /// [`Error::LengthMismatch`]; [`Error::ContextMismatch`] when neither
    /// buffer is of the scope's context; driver errors; a poisoned context.
    pub fn copy_peer<T: DeviceCopy>(
        &self,
        stream: &'s Stream<'_>,
        src: impl DeviceSrc<'s, T>,
        dst: impl DeviceDst<'s, T>,
    ) -> Result<()> {
        same_len("copy_peer", dst.len(), src.len())?;
        let ctx = self.context();
        let (sc, dc) = (src.context(), dst.context());
        let other = if ctx.same(sc) {
            dc
        } else {
            same_context("copy_peer", ctx, dc)?;
            sc
        };
        let bytes = byte_len::<T>(src.len(), "copy")?;
        other.enter()?;
        // The other context's synchronous calls (a `to_vec` of its buffer)
        // wait for this stream until the scope ends: registered before the
        // copy is queued, and before the stream's lock is taken (the other
        // context's waits lock its list, then the stream).
        if !other.same(ctx) {
            self.touch_peer(other, stream.as_raw(), stream.state())?;
        }
        let raw = self.use_stream_after_all(stream)?;
        let t = self.time_start(&raw)?;
        let cu = ctx.enter()?;
        // SAFETY: both buffers are borrowed until the scope has synchronized
        // this stream; both hold `bytes` bytes; both contexts are retained.
        let rc = unsafe {
            (cu.cuMemcpyPeerAsync)(
                dst.device_ptr().as_raw(),
                dc.as_raw(),
                src.device_ptr().as_raw(),
                sc.as_raw(),
                bytes,
                *raw,
            )
        };
        ctx.check("cuMemcpyPeerAsync", rc)?;
        ctx.counters().dtod.add(bytes, None);
        self.time_end(|| Timed::DtoD, &raw, t)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    fn refused() -> Error {
        Error::PeerAccessUnsupported {
            from: 0,
            to: 1,
            reason: "refused for the test",
        }
    }

    #[test]
    fn a_failed_disable_keeps_the_record_and_a_successful_one_clears_it() {
        // The record as `Context::record_peer` keeps it, and what the
        // record said while the disable ran.
        let record = Cell::new(true);
        let during = Cell::new(true);
        let err = with_record_cleared(
            true,
            |on| record.set(on),
            || {
                during.set(record.get());
                Err(refused())
            },
        );
        assert!(err.is_err());
        assert!(!during.get(), "launches refuse the peer while it runs");
        assert!(
            record.get(),
            "the driver refused: access is still enabled, and so recorded"
        );

        let ok = with_record_cleared(true, |on| record.set(on), || Ok(()));
        assert!(ok.is_ok());
        assert!(!record.get(), "cleared after a successful disable");

        // A failure never enables what was not enabled.
        let err = with_record_cleared(false, |on| record.set(on), || Err(refused()));
        assert!(err.is_err());
        assert!(!record.get());
    }
}
