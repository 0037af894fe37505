//! Green contexts (CUDA 12.4+): device resources, their SM partitions and
//! the flags of `cuGreenCtxCreate` and `cuDevSmResourceSplitByCount`.

use super::*;

c_enum! {
    /// `CUdevResourceType`: which member of [`CUdevResource`]'s union is set.
    pub struct CUdevResourceType(c_int) {
        /// Not a valid resource; nothing in it may be read.
        CU_DEV_RESOURCE_TYPE_INVALID = 0,
        /// Streaming multiprocessors (`sm` is set).
        CU_DEV_RESOURCE_TYPE_SM = 1,
    }
}

c_enum! {
    /// `CUgreenCtxCreate_flags`: flags of `cuGreenCtxCreate`.
    pub struct CUgreenCtxCreate_flags(c_uint) {
        /// Give the green context a default stream. Required by CUDA 13.0.
        CU_GREEN_CTX_DEFAULT_STREAM = 0x1,
    }
}

c_enum! {
    /// `CUdevSmResourceSplit_flags`: flags of `cuDevSmResourceSplitByCount`
    /// (a bit set).
    pub struct CUdevSmResourceSplit_flags(c_uint) {
        /// Lower the minimum count and alignment by treating each SM on its
        /// own, giving up large thread-block clusters.
        CU_DEV_SM_RESOURCE_SPLIT_IGNORE_SM_COSCHEDULING = 0x1,
        /// Compute capability 9.0+: aim for groups that allow the largest
        /// clusters.
        CU_DEV_SM_RESOURCE_SPLIT_MAX_POTENTIAL_CLUSTER_SIZE = 0x2,
    }
}

/// `RESOURCE_ABI_VERSION`: the version of [`CUdevResource`]'s layout.
pub const RESOURCE_ABI_VERSION: c_int = 1;
/// `RESOURCE_ABI_EXTERNAL_BYTES`: the size of [`CUdevResource`]'s union.
pub const RESOURCE_ABI_EXTERNAL_BYTES: usize = 48;

/// `CUdevSmResource`: SM data of a resource. Every field is written by the
/// driver only. CUDA 13.0 added the last two; a 12.x driver leaves them as
/// they were (zero, from [`Default`]).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CUdevSmResource {
    /// SMs in the resource.
    pub smCount: c_uint,
    /// The fewest SMs a partition of this resource may have.
    pub minSmPartitionSize: c_uint,
    /// SMs guaranteed to be co-scheduled on one GPU processing cluster;
    /// `smCount` is a multiple of it.
    pub smCoscheduledAlignment: c_uint,
}
assert_layout!(CUdevSmResource, size = 12, align = 4);

/// The unnamed union of [`CUdevResource`]: sized by its padding member, so
/// that later resource kinds fit without changing the struct's size.
#[repr(C)]
#[derive(Clone, Copy)]
pub union CUdevResource_union {
    /// Set when the type is `CU_DEV_RESOURCE_TYPE_SM`.
    pub sm: CUdevSmResource,
    /// The union's full size.
    pub _oversize: [c_uchar; RESOURCE_ABI_EXTERNAL_BYTES],
}
assert_layout!(CUdevResource_union, size = 48, align = 4);

impl std::fmt::Debug for CUdevResource_union {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // SAFETY: `_oversize` spans the whole union and is plain bytes,
        // valid for any initialized bit pattern (every constructor of this
        // union starts from all-zero bytes or a driver's full write).
        let bytes = unsafe { self._oversize };
        f.debug_struct("CUdevResource_union")
            .field("_oversize", &&bytes[..])
            .finish()
    }
}

/// `CUdevResource` (`CUdevResource_v1`): a tagged union of one kind of
/// device resource. Only the driver writes it; the bytes it keeps for
/// itself (`_internal_padding`) travel with the value into later calls
/// (a split, a descriptor), so a resource is copied whole, never rebuilt.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CUdevResource {
    /// Which member of the union was set.
    pub r#type: CUdevResourceType,
    /// The driver's own data.
    pub _internal_padding: [c_uchar; 92],
    /// The resource.
    pub u: CUdevResource_union,
}
/// `CUdevResource_v1`: see [`CUdevResource`].
pub type CUdevResource_v1 = CUdevResource;
// Measured with gcc on the 13.0 header: 144 bytes, 4-aligned, union at 96.
assert_layout!(CUdevResource, size = 144, align = 4, u = 96);

impl CUdevResource {
    /// The SM data, when the type is `CU_DEV_RESOURCE_TYPE_SM`.
    pub fn sm(&self) -> Option<CUdevSmResource> {
        if self.r#type == CUdevResourceType::CU_DEV_RESOURCE_TYPE_SM {
            // SAFETY: the type says `sm` was the member set; it is plain
            // integers, valid for any initialized bit pattern.
            Some(unsafe { self.u.sm })
        } else {
            None
        }
    }
}

zeroed_default!(CUdevResource_union, CUdevResource);
