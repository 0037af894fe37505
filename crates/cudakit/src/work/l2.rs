//! L2 persistence: access-policy windows for launches
//! ([`LaunchConfig::access_policy`](crate::LaunchConfig::access_policy)) and
//! streams ([`Stream::set_access_policy`]), and the context's set-aside of
//! persisting L2 ([`Context::set_persisting_l2_limit`]).
//!
//! A window names an address range and how much of it the L2 should try to
//! keep (`hit_ratio` of its lines get the `hit` property, the rest `miss`).
//! It is a cache hint: the driver and the device never read or write
//! memory through it, so a window over memory that has been freed only
//! loses its effect. cudakit checks what the driver would refuse, before
//! the driver: the device must support windows
//! (`CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE` non-zero), the size
//! must be at most that limit and not zero, the hit ratio between 0 and 1,
//! and the miss property normal or streaming. Persisting lines only stay in
//! the set-aside, which is zero until
//! [`Context::set_persisting_l2_limit`] makes it larger (at most
//! `CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE`).

use cuda_sys::{
    CUaccessPolicyWindow, CUaccessProperty, CUdevice_attribute as A, CUlaunchAttributeID,
    CUlaunchAttributeValue, CUlimit,
};

use crate::context::Context;
use crate::error::{Error, Result};
use crate::memory::{DeviceCopy, DevicePtr, DeviceSrc};
use crate::work::stream::Stream;

/// What the L2 does with the lines of one part of a window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum L2Access {
    /// Ordinary caching (`CU_ACCESS_PROPERTY_NORMAL`).
    Normal,
    /// Lines that are unlikely to be used again (`CU_ACCESS_PROPERTY_STREAMING`).
    Streaming,
    /// Lines kept in the persisting set-aside (`CU_ACCESS_PROPERTY_PERSISTING`);
    /// only for the hit part.
    Persisting,
}

impl L2Access {
    fn raw(self) -> CUaccessProperty {
        match self {
            L2Access::Normal => CUaccessProperty::CU_ACCESS_PROPERTY_NORMAL,
            L2Access::Streaming => CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING,
            L2Access::Persisting => CUaccessProperty::CU_ACCESS_PROPERTY_PERSISTING,
        }
    }
}

/// An access-policy window: `bytes` from `base`, of which `hit_ratio` get
/// `hit` and the rest `miss` (see the [module documentation](self)).
/// By default the whole window persists and nothing streams.
#[derive(Debug, Clone, Copy)]
pub struct AccessPolicyWindow {
    base: u64,
    bytes: usize,
    hit_ratio: f32,
    hit: L2Access,
    miss: L2Access,
}

impl PartialEq for AccessPolicyWindow {
    fn eq(&self, other: &Self) -> bool {
        (
            self.base,
            self.bytes,
            self.hit_ratio.to_bits(),
            self.hit,
            self.miss,
        ) == (
            other.base,
            other.bytes,
            other.hit_ratio.to_bits(),
            other.hit,
            other.miss,
        )
    }
}

impl Eq for AccessPolicyWindow {}

impl AccessPolicyWindow {
    /// A window of `bytes` from `base`: persisting hits for all of it,
    /// streaming misses.
    pub fn new(base: DevicePtr, bytes: usize) -> Self {
        AccessPolicyWindow {
            base: base.as_raw(),
            bytes,
            hit_ratio: 1.0,
            hit: L2Access::Persisting,
            miss: L2Access::Streaming,
        }
    }

    /// A window over the whole of `buffer` (any device memory: a buffer, a
    /// view, a pool or unified buffer).
    pub fn over<'a, T: DeviceCopy>(buffer: impl DeviceSrc<'a, T>) -> Self {
        let bytes = buffer.len().saturating_mul(std::mem::size_of::<T>());
        Self::new(buffer.device_ptr(), bytes)
    }

    /// The share of the window's lines that get the hit property, from 0
    /// to 1 (the rest get the miss property).
    pub fn hit_ratio(mut self, ratio: f32) -> Self {
        self.hit_ratio = ratio;
        self
    }

    /// The property of the hit share.
    pub fn hit(mut self, access: L2Access) -> Self {
        self.hit = access;
        self
    }

    /// The property of the rest: normal or streaming.
    pub fn miss(mut self, access: L2Access) -> Self {
        self.miss = access;
        self
    }

    /// Start and size.
    pub fn range(&self) -> (u64, usize) {
        (self.base, self.bytes)
    }

    /// Checks the window against `ctx`'s device: typed errors for what the
    /// driver would refuse.
    pub(crate) fn check(&self, ctx: &Context) -> Result<()> {
        let limit = ctx
            .device()
            .attribute(A::CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)?
            .max(0) as u64;
        if limit == 0 {
            return Err(Error::NotSupported {
                feature: "L2 access-policy windows (CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE is 0)",
                needs_driver: "a device of compute capability 8.0",
            });
        }
        let refuse = |reason: String| Err(Error::AccessPolicy { reason });
        if self.bytes == 0 {
            return refuse("the window is empty (0 bytes)".into());
        }
        if self.bytes as u64 > limit {
            return refuse(format!(
                "the window is {} bytes; the device allows at most {limit} \
                 (CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)",
                self.bytes
            ));
        }
        if !(0.0..=1.0).contains(&self.hit_ratio) {
            return refuse(format!("hit ratio {} is outside 0 to 1", self.hit_ratio));
        }
        if self.miss == L2Access::Persisting {
            return refuse("the miss property must be normal or streaming, not persisting".into());
        }
        Ok(())
    }

    pub(crate) fn raw(&self) -> CUaccessPolicyWindow {
        CUaccessPolicyWindow {
            base_ptr: self.base as usize as *mut std::ffi::c_void,
            num_bytes: self.bytes,
            hitRatio: self.hit_ratio,
            hitProp: self.hit.raw(),
            missProp: self.miss.raw(),
        }
    }

    /// As a launch, stream or kernel-node attribute value.
    pub(crate) fn value(&self) -> CUlaunchAttributeValue {
        let mut v = CUlaunchAttributeValue { pad: [0; 64] };
        v.accessPolicyWindow = self.raw();
        v
    }
}

impl Stream<'_> {
    /// Sets (or, with `None`, clears) the stream's access-policy window
    /// (`cuStreamSetAttribute`, `CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW`):
    /// kernels launched on it afterwards use it.
    ///
    /// # Errors
    ///
    /// [`Error::AccessPolicy`] and [`Error::NotSupported`] as described in
    /// the [module documentation](self); [`Error::StreamCaptured`] on a
    /// stream another thread captures; driver errors.
    pub fn set_access_policy(&self, window: Option<AccessPolicyWindow>) -> Result<()> {
        let ctx = self.context();
        crate::context::release::refuse_in_callback("Stream::set_access_policy")?;
        let value = match window {
            Some(w) => {
                w.check(ctx)?;
                w.value()
            }
            // An empty window clears the policy.
            None => CUlaunchAttributeValue { pad: [0; 64] },
        };
        let g = self.state().lock();
        if !g.usable_by_thread() {
            return Err(Error::StreamCaptured {
                operation: "Stream::set_access_policy",
                device: ctx.device().ordinal(),
            });
        }
        let cu = ctx.enter()?;
        let set = cu.cuStreamSetAttribute.ok_or(Error::NotSupported {
            feature: "cuStreamSetAttribute",
            needs_driver: "CUDA 11.0",
        })?;
        // SAFETY: a live stream of the context (its lock held); a 64-byte
        // attribute value whose member for this ID is the window.
        ctx.check("cuStreamSetAttribute", unsafe {
            set(
                self.as_raw(),
                CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
                &value,
            )
        })?;
        drop(g);
        Ok(())
    }
}

impl Context {
    /// Sets aside `bytes` of L2 for persisting accesses
    /// (`cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE)`); 0 gives it all
    /// back. The driver rounds it to its granularity.
    ///
    /// # Errors
    ///
    /// [`Error::NotSupported`] where the device has no persisting L2;
    /// [`Error::AccessPolicy`] above
    /// `CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE`; driver errors.
    pub fn set_persisting_l2_limit(&self, bytes: usize) -> Result<()> {
        let max = self
            .device()
            .attribute(A::CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)?
            .max(0) as u64;
        if max == 0 {
            return Err(Error::NotSupported {
                feature: "persisting L2 (CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE is 0)",
                needs_driver: "a device of compute capability 8.0",
            });
        }
        if bytes as u64 > max {
            return Err(Error::AccessPolicy {
                reason: format!(
                    "a persisting set-aside of {bytes} bytes; the device allows at most {max} \
                     (CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)"
                ),
            });
        }
        let cu = self.enter()?;
        // SAFETY: a defined limit and a value; the context is current.
        self.check("cuCtxSetLimit", unsafe {
            (cu.cuCtxSetLimit)(CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, bytes)
        })?;
        Ok(())
    }

    /// The persisting-L2 set-aside now, in bytes
    /// (`cuCtxGetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE)`).
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn persisting_l2_limit(&self) -> Result<usize> {
        let cu = self.enter()?;
        let mut v = 0usize;
        // SAFETY: a valid out-pointer and a defined limit.
        self.check("cuCtxGetLimit", unsafe {
            (cu.cuCtxGetLimit)(&mut v, CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE)
        })?;
        Ok(v)
    }
}
