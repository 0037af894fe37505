//! Devices: enumeration and attributes, read with `cuDeviceGetAttribute`.

use std::ffi::c_char;

use cuda_sys::{CUdevice, CUdevice_attribute as A, CUuuid};

use crate::driver::cu;
use crate::error::{check, Error, Result};

/// A CUDA device, by ordinal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Device {
    ordinal: i32,
    raw: CUdevice,
}

/// The limits the launch path validates against, read once per context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceLimits {
    /// `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK`.
    pub max_threads_per_block: u32,
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_{X,Y,Z}`.
    pub max_block_dim: [u32; 3],
    /// `CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_{X,Y,Z}`.
    pub max_grid_dim: [u32; 3],
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK` (the default, 48 KiB).
    pub max_shared_per_block: u32,
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`.
    pub max_shared_per_block_optin: u32,
    /// `CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT`.
    pub multiprocessors: u32,
    /// `CU_DEVICE_ATTRIBUTE_WARP_SIZE`.
    pub warp_size: u32,
    /// `CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_{MAJOR,MINOR}`.
    pub compute_capability: (u32, u32),
    /// `CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH`.
    pub cooperative_launch: bool,
    /// `CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH`.
    pub cluster_launch: bool,
    /// `CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY`.
    pub managed_memory: bool,
    /// `CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS`.
    pub concurrent_managed_access: bool,
    /// `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR`: resident
    /// threads per SM (occupancy's thread bound).
    pub max_threads_per_multiprocessor: u32,
    /// `CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR`: resident blocks
    /// per SM.
    pub max_blocks_per_multiprocessor: u32,
    /// `CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR`: shared
    /// memory per SM, in bytes, for all its resident blocks together.
    pub max_shared_per_multiprocessor: u32,
    /// `CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR`: 32-bit
    /// registers per SM.
    pub max_registers_per_multiprocessor: u32,
    /// `CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK`: 32-bit registers one
    /// block may use.
    pub max_registers_per_block: u32,
}

impl Device {
    /// The number of devices (`cuDeviceGetCount`).
    ///
    /// # Errors
    ///
    /// Load and `cuInit` errors; `cuDeviceGetCount` failing.
    pub fn count() -> Result<usize> {
        let cu = cu()?;
        let mut n = 0;
        // SAFETY: a valid out-pointer.
        check("cuDeviceGetCount", unsafe { (cu.cuDeviceGetCount)(&mut n) })?;
        Ok(n.max(0) as usize)
    }

    /// The device of ordinal `ordinal` (`cuDeviceGet`).
    ///
    /// # Errors
    ///
    /// [`Error::NoSuchDevice`] for an ordinal past the count; driver errors.
    pub fn get(ordinal: usize) -> Result<Device> {
        let count = Self::count()?;
        if ordinal >= count {
            return Err(Error::NoSuchDevice { ordinal, count });
        }
        let cu = cu()?;
        let mut raw = 0;
        // SAFETY: a valid out-pointer and an ordinal below the count.
        check("cuDeviceGet", unsafe {
            (cu.cuDeviceGet)(&mut raw, ordinal as i32)
        })?;
        Ok(Device {
            ordinal: ordinal as i32,
            raw,
        })
    }

    /// Every device.
    ///
    /// # Errors
    ///
    /// As [`Device::get`].
    pub fn all() -> Result<Vec<Device>> {
        (0..Self::count()?).map(Self::get).collect()
    }

    /// The ordinal.
    pub fn ordinal(&self) -> i32 {
        self.ordinal
    }

    /// The raw handle.
    pub fn as_raw(&self) -> CUdevice {
        self.raw
    }

    /// The device's name (`cuDeviceGetName`).
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn name(&self) -> Result<String> {
        let cu = cu()?;
        let mut buf = [0 as c_char; 256];
        // SAFETY: the buffer holds 256 bytes, the length passed.
        check("cuDeviceGetName", unsafe {
            (cu.cuDeviceGetName)(buf.as_mut_ptr(), buf.len() as i32, self.raw)
        })?;
        let bytes: Vec<u8> = buf
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The device's UUID (`cuDeviceGetUuid_v2`), as 16 bytes.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn uuid(&self) -> Result<[u8; 16]> {
        let cu = cu()?;
        let mut uuid = CUuuid { bytes: [0; 16] };
        // SAFETY: a valid out-pointer to a CUuuid.
        check("cuDeviceGetUuid_v2", unsafe {
            (cu.cuDeviceGetUuid)(&mut uuid, self.raw)
        })?;
        Ok(uuid.bytes.map(|b| b as u8))
    }

    /// The UUID in the usual `GPU-xxxxxxxx-xxxx-...` form.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn uuid_string(&self) -> Result<String> {
        let b = self.uuid()?;
        let hex: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
        Ok(format!(
            "GPU-{}-{}-{}-{}-{}",
            hex[0..4].concat(),
            hex[4..6].concat(),
            hex[6..8].concat(),
            hex[8..10].concat(),
            hex[10..16].concat()
        ))
    }

    /// Total memory in bytes (`cuDeviceTotalMem_v2`).
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn total_memory(&self) -> Result<usize> {
        let cu = cu()?;
        let mut bytes = 0usize;
        // SAFETY: a valid out-pointer.
        check("cuDeviceTotalMem_v2", unsafe {
            (cu.cuDeviceTotalMem)(&mut bytes, self.raw)
        })?;
        Ok(bytes)
    }

    /// One attribute (`cuDeviceGetAttribute`).
    ///
    /// # Errors
    ///
    /// Driver errors (`CUDA_ERROR_INVALID_VALUE` for an attribute the driver
    /// does not know).
    pub fn attribute(&self, attribute: A) -> Result<i32> {
        let cu = cu()?;
        let mut value = 0;
        // SAFETY: a valid out-pointer; the attribute is passed by value.
        check("cuDeviceGetAttribute", unsafe {
            (cu.cuDeviceGetAttribute)(&mut value, attribute, self.raw)
        })?;
        Ok(value)
    }

    fn attr_u32(&self, attribute: A) -> Result<u32> {
        Ok(self.attribute(attribute)?.max(0) as u32)
    }

    /// Compute capability as (major, minor).
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn compute_capability(&self) -> Result<(u32, u32)> {
        Ok((
            self.attr_u32(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
            self.attr_u32(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
        ))
    }

    /// The limits the launch path checks, read attribute by attribute.
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn limits(&self) -> Result<DeviceLimits> {
        Ok(DeviceLimits {
            max_threads_per_block: self.attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_block_dim: [
                self.attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                self.attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                self.attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ],
            max_grid_dim: [
                self.attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                self.attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                self.attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ],
            max_shared_per_block: self
                .attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            max_shared_per_block_optin: self
                .attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            multiprocessors: self.attr_u32(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            warp_size: self.attr_u32(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE)?,
            compute_capability: self.compute_capability()?,
            cooperative_launch: self.attribute(A::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)? != 0,
            cluster_launch: self.attribute(A::CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH)? != 0,
            managed_memory: self.attribute(A::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY)? != 0,
            concurrent_managed_access: self
                .attribute(A::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS)?
                != 0,
            max_threads_per_multiprocessor: self
                .attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR)?,
            max_blocks_per_multiprocessor: self
                .attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR)?,
            max_shared_per_multiprocessor: self
                .attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
            max_registers_per_multiprocessor: self
                .attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR)?,
            max_registers_per_block: self
                .attr_u32(A::CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?,
        })
    }

    /// Whether this device can access `peer`'s memory (`cuDeviceCanAccessPeer`).
    ///
    /// # Errors
    ///
    /// Driver errors.
    pub fn can_access_peer(&self, peer: &Device) -> Result<bool> {
        let cu = cu()?;
        let mut can = 0;
        // SAFETY: a valid out-pointer; both handles come from cuDeviceGet.
        check("cuDeviceCanAccessPeer", unsafe {
            (cu.cuDeviceCanAccessPeer)(&mut can, self.raw, peer.raw)
        })?;
        Ok(can != 0)
    }
}
