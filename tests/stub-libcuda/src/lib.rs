//! A test-only stand-in for libcuda. Never shipped.
//!
//! It exports the versioned driver symbols that cuda-sys's table names, so
//! that the loader can be tested on a machine without a GPU, and it records
//! what it is called with, so that the argument path (above all the
//! `kernelParams` array of `cuLaunchKernel`) can be checked byte for byte.
//!
//! Besides the CUDA symbols it exports `stub_*` functions through which a
//! test configures it and reads back what it recorded. The real driver
//! remains the ground truth: the hardware suite runs against it.
//!
//! Behaviour:
//! - `cuInit` succeeds; `cuDriverGetVersion` reports 13000; one device.
//! - `cuMemAlloc_v2` hands out fake addresses from 0xD000_0000 upwards and
//!   records the sizes; `cuMemFree_v2` records the frees.
//! - `cuFuncGetParamInfo` reports the parameter layout set by
//!   `stub_set_params`; `cuLaunchKernel` reads `kernelParams` exactly as the
//!   driver does, one pointer per parameter, and copies that many bytes from
//!   each pointer into its record, which `stub_last_launch` returns.
//! - Every other symbol of the table returns CUDA_ERROR_NOT_SUPPORTED (801).
#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::c_void;
use std::sync::Mutex;

const CUDA_SUCCESS: i32 = 0;
const CUDA_ERROR_INVALID_VALUE: i32 = 1;
const CUDA_ERROR_NOT_SUPPORTED: i32 = 801;

struct State {
    next_address: u64,
    allocations: Vec<(u64, usize)>,
    frees: Vec<u64>,
    /// (offset, size) of each kernel parameter, as cuFuncGetParamInfo reports.
    params: Vec<(usize, usize)>,
    /// Grid, block, shared bytes, then each parameter's bytes.
    last_launch: Vec<u8>,
    launches: u64,
    unsupported_calls: Vec<&'static str>,
}

static STATE: Mutex<State> = Mutex::new(State {
    next_address: 0xD000_0000,
    allocations: Vec::new(),
    frees: Vec::new(),
    params: Vec::new(),
    last_launch: Vec::new(),
    launches: 0,
    unsupported_calls: Vec::new(),
});

fn state() -> std::sync::MutexGuard<'static, State> {
    match STATE.lock() {
        Ok(guard) => guard,
        Err(poisoned) => poisoned.into_inner(),
    }
}

fn not_supported(symbol: &'static str) -> i32 {
    state().unsupported_calls.push(symbol);
    CUDA_ERROR_NOT_SUPPORTED
}

include!(concat!(env!("OUT_DIR"), "/generated.rs"));

/// `cuInit`.
#[no_mangle]
pub unsafe extern "C" fn cuInit(_flags: u32) -> i32 {
    CUDA_SUCCESS
}

/// `cuDriverGetVersion`: reports 13000.
#[no_mangle]
pub unsafe extern "C" fn cuDriverGetVersion(version: *mut i32) -> i32 {
    if version.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the caller passes a valid out-pointer, as the C API requires.
    unsafe { version.write(13000) };
    CUDA_SUCCESS
}

/// `cuDeviceGetCount`: one device.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetCount(count: *mut i32) -> i32 {
    if count.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: the caller passes a valid out-pointer.
    unsafe { count.write(1) };
    CUDA_SUCCESS
}

/// `cuMemAlloc_v2`: a fake address, recorded.
#[cfg(not(feature = "omit-mem-alloc"))]
#[no_mangle]
pub unsafe extern "C" fn cuMemAlloc_v2(dptr: *mut u64, bytes: usize) -> i32 {
    if dptr.is_null() || bytes == 0 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut s = state();
    let address = s.next_address;
    s.next_address += (bytes as u64).div_ceil(256) * 256;
    s.allocations.push((address, bytes));
    // SAFETY: the caller passes a valid out-pointer.
    unsafe { dptr.write(address) };
    CUDA_SUCCESS
}

/// `cuMemFree_v2`: recorded.
#[no_mangle]
pub unsafe extern "C" fn cuMemFree_v2(dptr: u64) -> i32 {
    state().frees.push(dptr);
    CUDA_SUCCESS
}

/// `cuFuncGetParamInfo`: the layout set by `stub_set_params`.
#[no_mangle]
pub unsafe extern "C" fn cuFuncGetParamInfo(
    _func: *mut c_void,
    index: usize,
    offset: *mut usize,
    size: *mut usize,
) -> i32 {
    let s = state();
    let Some(&(o, z)) = s.params.get(index) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    if !offset.is_null() {
        // SAFETY: a non-null out-pointer from the caller.
        unsafe { offset.write(o) };
    }
    if !size.is_null() {
        // SAFETY: a non-null out-pointer from the caller.
        unsafe { size.write(z) };
    }
    CUDA_SUCCESS
}

/// `cuLaunchKernel`: dereferences `kernelParams` as the driver does and
/// records grid, block, shared bytes and every parameter's bytes.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernel(
    _f: *mut c_void,
    grid_x: u32,
    grid_y: u32,
    grid_z: u32,
    block_x: u32,
    block_y: u32,
    block_z: u32,
    shared: u32,
    _stream: *mut c_void,
    kernel_params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> i32 {
    if !extra.is_null() {
        return CUDA_ERROR_NOT_SUPPORTED;
    }
    let mut s = state();
    let mut record = Vec::new();
    for v in [grid_x, grid_y, grid_z, block_x, block_y, block_z, shared] {
        record.extend_from_slice(&v.to_le_bytes());
    }
    if !s.params.is_empty() && kernel_params.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (i, &(_, size)) in s.params.iter().enumerate() {
        // SAFETY: like the driver, the stand-in trusts that kernelParams has
        // one entry per parameter of the kernel.
        let value = unsafe { *kernel_params.add(i) } as *const u8;
        if value.is_null() {
            return CUDA_ERROR_INVALID_VALUE;
        }
        // SAFETY: like the driver, it trusts that each entry points to at
        // least `size` readable bytes.
        let bytes = unsafe { std::slice::from_raw_parts(value, size) };
        record.extend_from_slice(bytes);
    }
    s.last_launch = record;
    s.launches += 1;
    CUDA_SUCCESS
}

/// Sets the kernel parameter layout: `count` pairs (offset, size).
#[no_mangle]
pub unsafe extern "C" fn stub_set_params(pairs: *const usize, count: usize) {
    let mut params = Vec::with_capacity(count);
    for i in 0..count {
        // SAFETY: the test passes 2 * count readable usizes.
        let (o, z) = unsafe { (*pairs.add(2 * i), *pairs.add(2 * i + 1)) };
        params.push((o, z));
    }
    state().params = params;
}

/// Copies the last launch record into `out` (capacity `cap`); returns its
/// full length.
#[no_mangle]
pub unsafe extern "C" fn stub_last_launch(out: *mut u8, cap: usize) -> usize {
    let s = state();
    let n = s.last_launch.len().min(cap);
    // SAFETY: the test passes `cap` writable bytes.
    unsafe { std::ptr::copy_nonoverlapping(s.last_launch.as_ptr(), out, n) };
    s.last_launch.len()
}

/// Number of launches recorded.
#[no_mangle]
pub extern "C" fn stub_launch_count() -> u64 {
    state().launches
}

/// Number of live fake allocations (allocated and not freed).
#[no_mangle]
pub extern "C" fn stub_live_allocations() -> usize {
    let s = state();
    s.allocations
        .iter()
        .filter(|(a, _)| !s.frees.contains(a))
        .count()
}

/// Number of calls that reached a generated no-op.
#[no_mangle]
pub extern "C" fn stub_unsupported_calls() -> usize {
    state().unsupported_calls.len()
}
