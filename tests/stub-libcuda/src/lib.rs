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
//! - One device by default (up to 4 with `stub_set_device_count`; sm_90
//!   limits, attributes overridable with `stub_set_attribute`), a primary
//!   context per device (a reset while an allocation is live is
//!   recorded), real host memory for managed allocations,
//!   and a dynamic shared-memory attribute that launches are checked
//!   against. Streams and modules
//!   whose every name resolves to one function are faked well enough for
//!   cudakit's launch path to run against it.
//! - Every other symbol of the table returns CUDA_ERROR_NOT_SUPPORTED (801).
#![allow(non_snake_case, clippy::missing_safety_doc)]

use std::ffi::c_void;
use std::sync::Mutex;

const CUDA_SUCCESS: i32 = 0;
const CUDA_ERROR_INVALID_VALUE: i32 = 1;
const CUDA_ERROR_NOT_SUPPORTED: i32 = 801;

struct State {
    #[cfg_attr(feature = "omit-mem-alloc", allow(dead_code))]
    next_address: u64,
    allocations: Vec<(u64, usize)>,
    frees: Vec<u64>,
    /// (offset, size) of each kernel parameter, as cuFuncGetParamInfo reports.
    params: Vec<(usize, usize)>,
    /// Grid, block, shared bytes, then each parameter's bytes.
    last_launch: Vec<u8>,
    launches: u64,
    unsupported_calls: Vec<&'static str>,
    /// Devices reported by cuDeviceGetCount (1 unless a test sets it).
    device_count: i32,
    /// Retains of each device's primary context not yet released.
    retains: [i32; 4],
    /// Resets of a primary context while allocations were live.
    resets_while_retained: u64,
    /// Microseconds cuDevicePrimaryCtxRelease_v2 sleeps (widens races).
    release_delay_us: u64,
    /// Device attributes overridden by `stub_set_attribute`.
    attribute_overrides: Vec<(i32, i32)>,
    /// Managed allocations: (address, bytes), real host memory.
    managed: Vec<(u64, usize)>,
    /// The function's dynamic shared-memory attribute.
    dynamic_shared: i32,
    /// Launches refused because they asked for more dynamic shared memory
    /// than the attribute allowed (as the driver refuses them).
    shared_refusals: u64,
    /// State of a tiny xorshift generator for the attribute setter's delay.
    jitter: u64,
    /// The last stream handle handed out (each stream gets its own).
    next_stream: usize,
    /// Streams capturing now.
    capturing: Vec<usize>,
    /// `cuMemFreeAsync` calls, and those made on a capturing stream.
    async_frees: u64,
    captured_frees: u64,
    /// `cuLaunchHostFunc` calls made on a capturing stream.
    captured_host_fns: u64,
    /// A code the next `cuStreamSynchronize` returns instead of success
    /// (0: none), as the driver reports a kernel's fault there.
    fail_next_sync: i32,
    /// Graph nodes made by the explicit builder: (node, its dependencies).
    nodes: Vec<(usize, Vec<usize>)>,
    /// NCCL stand-in: group starts, collective calls, aborts.
    nccl_groups: u64,
    nccl_calls: u64,
    nccl_aborts: u64,
}

static STATE: Mutex<State> = Mutex::new(State {
    next_address: 0xD000_0000,
    allocations: Vec::new(),
    frees: Vec::new(),
    params: Vec::new(),
    last_launch: Vec::new(),
    launches: 0,
    unsupported_calls: Vec::new(),
    device_count: 1,
    retains: [0; 4],
    resets_while_retained: 0,
    release_delay_us: 0,
    attribute_overrides: Vec::new(),
    managed: Vec::new(),
    dynamic_shared: 48 * 1024,
    shared_refusals: 0,
    jitter: 0x9E37_79B9_7F4A_7C15,
    next_stream: 0x5_0000,
    capturing: Vec::new(),
    async_frees: 0,
    captured_frees: 0,
    captured_host_fns: 0,
    fail_next_sync: 0,
    nodes: Vec::new(),
    nccl_groups: 0,
    nccl_calls: 0,
    nccl_aborts: 0,
});

const PAGE: usize = 4096;

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
    let n = state().device_count;
    // SAFETY: the caller passes a valid out-pointer.
    unsafe { count.write(n) };
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

/// `cuMemFree_v2`: recorded; managed allocations are handed back to the
/// host allocator.
#[no_mangle]
pub unsafe extern "C" fn cuMemFree_v2(dptr: u64) -> i32 {
    let mut s = state();
    if let Some(i) = s.managed.iter().position(|&(a, _)| a == dptr) {
        let (address, bytes) = s.managed.swap_remove(i);
        let layout = std::alloc::Layout::from_size_align(bytes, PAGE).expect("layout");
        // SAFETY: allocated in cuMemAllocManaged with this layout, freed once.
        unsafe { std::alloc::dealloc(address as usize as *mut u8, layout) };
    }
    s.frees.push(dptr);
    CUDA_SUCCESS
}

/// `cuMemAllocManaged`: real, page-aligned host memory filled with 0xAB
/// (so that a missing zeroing shows), recorded.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocManaged(dptr: *mut u64, bytes: usize, _flags: u32) -> i32 {
    if dptr.is_null() || bytes == 0 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let Ok(layout) = std::alloc::Layout::from_size_align(bytes, PAGE) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    // SAFETY: a non-zero size.
    let p = unsafe { std::alloc::alloc(layout) };
    if p.is_null() {
        return 2; // CUDA_ERROR_OUT_OF_MEMORY
    }
    // SAFETY: `bytes` writable bytes just allocated.
    unsafe { std::ptr::write_bytes(p, 0xAB, bytes) };
    let address = p as usize as u64;
    let mut s = state();
    s.managed.push((address, bytes));
    s.allocations.push((address, bytes));
    // SAFETY: the caller passes a valid out-pointer.
    unsafe { dptr.write(address) };
    CUDA_SUCCESS
}

/// `cuMemsetD8_v2`: writes managed memory for real; accepts any other
/// address.
#[no_mangle]
pub unsafe extern "C" fn cuMemsetD8_v2(dst: u64, value: u8, n: usize) -> i32 {
    let s = state();
    if s.managed
        .iter()
        .any(|&(a, b)| dst >= a && dst + n as u64 <= a + b as u64)
    {
        // SAFETY: the range lies inside a live managed allocation.
        unsafe { std::ptr::write_bytes(dst as usize as *mut u8, value, n) };
    }
    CUDA_SUCCESS
}

/// `cuFuncGetParamInfo`: the layout set by `stub_set_params`.
#[cfg(not(feature = "omit-param-info"))]
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
    if shared as i64 > i64::from(s.dynamic_shared) {
        s.shared_refusals += 1;
        return CUDA_ERROR_INVALID_VALUE;
    }
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

/// `cuDeviceGet`: ordinals below the device count.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGet(device: *mut i32, ordinal: i32) -> i32 {
    if device.is_null() || ordinal < 0 || ordinal >= state().device_count {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a valid out-pointer.
    unsafe { device.write(ordinal) };
    CUDA_SUCCESS
}

/// `cuDeviceGetAttribute`: H100-like limits for the attributes the launch
/// path reads, 0 for the rest.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetAttribute(
    value: *mut i32,
    attribute: i32,
    _device: i32,
) -> i32 {
    let overridden = state()
        .attribute_overrides
        .iter()
        .find(|&&(a, _)| a == attribute)
        .map(|&(_, v)| v);
    let v = match attribute {
        _ if overridden.is_some() => overridden.unwrap_or(0),
        1 => 1024,        // MAX_THREADS_PER_BLOCK
        2 | 3 => 1024,    // MAX_BLOCK_DIM_X, _Y
        4 => 64,          // MAX_BLOCK_DIM_Z
        5 => i32::MAX,    // MAX_GRID_DIM_X
        6 | 7 => 65535,   // MAX_GRID_DIM_Y, _Z
        8 => 48 * 1024,   // MAX_SHARED_MEMORY_PER_BLOCK
        10 => 32,         // WARP_SIZE
        16 => 132,        // MULTIPROCESSOR_COUNT
        75 => 9,          // COMPUTE_CAPABILITY_MAJOR
        76 => 0,          // COMPUTE_CAPABILITY_MINOR
        83 => 1,          // MANAGED_MEMORY
        89 => 1,          // CONCURRENT_MANAGED_ACCESS
        95 => 1,          // COOPERATIVE_LAUNCH
        97 => 227 * 1024, // MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
        120 => 1,         // CLUSTER_LAUNCH
        _ => 0,
    };
    if value.is_null() {
        return CUDA_ERROR_INVALID_VALUE;
    }
    // SAFETY: a valid out-pointer.
    unsafe { value.write(v) };
    CUDA_SUCCESS
}

/// A fake context handle.
const CONTEXT: usize = 0xC0_0000;
/// A fake module handle.
const MODULE: usize = 0x30_0000;
/// A fake function handle.
const FUNCTION: usize = 0xF0_0000;

thread_local! {
    static CURRENT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// `cuDevicePrimaryCtxRetain`: a fake context per device, counted.
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRetain(ctx: *mut *mut c_void, device: i32) -> i32 {
    let Some(slot) = usize::try_from(device).ok().filter(|&d| d < 4) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    state().retains[slot] += 1;
    // SAFETY: a valid out-pointer.
    unsafe { ctx.write((CONTEXT + slot * 0x1000) as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuDevicePrimaryCtxRelease_v2`: uncounts a retain, after the delay a
/// test set (`stub_set_release_delay_us`).
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxRelease_v2(device: i32) -> i32 {
    let Some(slot) = usize::try_from(device).ok().filter(|&d| d < 4) else {
        return CUDA_ERROR_INVALID_VALUE;
    };
    let delay = state().release_delay_us;
    if delay > 0 {
        std::thread::sleep(std::time::Duration::from_micros(delay));
    }
    state().retains[slot] -= 1;
    CUDA_SUCCESS
}

/// `cuDevicePrimaryCtxReset_v2`: records a reset while an allocation is
/// live (it would destroy memory another user of the context holds).
#[no_mangle]
pub unsafe extern "C" fn cuDevicePrimaryCtxReset_v2(device: i32) -> i32 {
    if !(0..4).contains(&device) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut s = state();
    let live = s
        .allocations
        .iter()
        .filter(|(a, _)| !s.frees.contains(a))
        .count();
    if live > 0 {
        s.resets_while_retained += 1;
    }
    CUDA_SUCCESS
}

/// `cuCtxGetCurrent`.
#[no_mangle]
pub unsafe extern "C" fn cuCtxGetCurrent(ctx: *mut *mut c_void) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { ctx.write(CURRENT.with(|c| c.get()) as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuCtxSetCurrent`.
#[no_mangle]
pub unsafe extern "C" fn cuCtxSetCurrent(ctx: *mut c_void) -> i32 {
    CURRENT.with(|c| c.set(ctx as usize));
    CUDA_SUCCESS
}

/// `cuCtxSynchronize`, `cuStreamSynchronize`: nothing is ever pending.
#[no_mangle]
pub unsafe extern "C" fn cuCtxSynchronize() -> i32 {
    CUDA_SUCCESS
}

/// As [`cuCtxSynchronize`], unless a test set a failure (`stub_fail_next_sync`).
#[no_mangle]
pub unsafe extern "C" fn cuStreamSynchronize(_stream: *mut c_void) -> i32 {
    std::mem::take(&mut state().fail_next_sync)
}

/// Makes the next `cuStreamSynchronize` return `code` (a device fault such
/// as 700 poisons the context that meets it).
#[no_mangle]
pub extern "C" fn stub_fail_next_sync(code: i32) {
    state().fail_next_sync = code;
}

/// `cuStreamCreateWithPriority`: a fake stream.
#[no_mangle]
pub unsafe extern "C" fn cuStreamCreateWithPriority(
    stream: *mut *mut c_void,
    _flags: u32,
    _priority: i32,
) -> i32 {
    let handle = {
        let mut s = state();
        s.next_stream += 0x100;
        s.next_stream
    };
    // SAFETY: a valid out-pointer.
    unsafe { stream.write(handle as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuStreamGetPriority`: 0.
#[no_mangle]
pub unsafe extern "C" fn cuStreamGetPriority(_stream: *mut c_void, priority: *mut i32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { priority.write(0) };
    CUDA_SUCCESS
}

/// `cuStreamDestroy_v2`.
#[no_mangle]
pub unsafe extern "C" fn cuStreamDestroy_v2(_stream: *mut c_void) -> i32 {
    CUDA_SUCCESS
}

/// `cuModuleLoadDataEx`: any image is a module with one function.
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadDataEx(
    module: *mut *mut c_void,
    _image: *const c_void,
    _num_options: u32,
    _options: *mut i32,
    _values: *mut *mut c_void,
) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { module.write(MODULE as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuModuleLoadData`: as [`cuModuleLoadDataEx`].
#[no_mangle]
pub unsafe extern "C" fn cuModuleLoadData(module: *mut *mut c_void, _image: *const c_void) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { module.write(MODULE as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuModuleUnload`.
#[no_mangle]
pub unsafe extern "C" fn cuModuleUnload(_module: *mut c_void) -> i32 {
    CUDA_SUCCESS
}

/// `cuModuleGetFunction`: every name resolves to the one function.
#[no_mangle]
pub unsafe extern "C" fn cuModuleGetFunction(
    f: *mut *mut c_void,
    _module: *mut c_void,
    _name: *const i8,
) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { f.write(FUNCTION as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuFuncGetAttribute`: 1024 threads, no static shared memory, 48 KiB
/// dynamic, 32 registers.
#[no_mangle]
pub unsafe extern "C" fn cuFuncGetAttribute(
    value: *mut i32,
    attribute: i32,
    _f: *mut c_void,
) -> i32 {
    let v = match attribute {
        0 => 1024,                   // MAX_THREADS_PER_BLOCK
        4 => 32,                     // NUM_REGS
        5 => 90,                     // PTX_VERSION
        6 => 90,                     // BINARY_VERSION
        8 => state().dynamic_shared, // MAX_DYNAMIC_SHARED_SIZE_BYTES
        _ => 0,
    };
    // SAFETY: a valid out-pointer.
    unsafe { value.write(v) };
    CUDA_SUCCESS
}

/// `cuFuncSetAttribute`: the dynamic shared-memory attribute is kept (and
/// checked by `cuLaunchKernel`); the call then pauses for a pseudo-random
/// 0 to 255 µs, as a busy driver might, which widens any race between a
/// caller's set and its bookkeeping.
#[no_mangle]
pub unsafe extern "C" fn cuFuncSetAttribute(_f: *mut c_void, attribute: i32, value: i32) -> i32 {
    let pause = {
        let mut s = state();
        if attribute == 8 {
            s.dynamic_shared = value;
        }
        s.jitter ^= s.jitter << 13;
        s.jitter ^= s.jitter >> 7;
        s.jitter ^= s.jitter << 17;
        s.jitter & 0xff
    };
    std::thread::sleep(std::time::Duration::from_micros(pause));
    CUDA_SUCCESS
}

/// Sets the number of devices (1 to 4).
#[no_mangle]
pub extern "C" fn stub_set_device_count(n: i32) {
    state().device_count = n.clamp(1, 4);
}

/// Overrides a device attribute for every device.
#[no_mangle]
pub extern "C" fn stub_set_attribute(attribute: i32, value: i32) {
    let mut s = state();
    s.attribute_overrides.retain(|&(a, _)| a != attribute);
    s.attribute_overrides.push((attribute, value));
}

/// Makes cuDevicePrimaryCtxRelease_v2 sleep `us` microseconds.
#[no_mangle]
pub extern "C" fn stub_set_release_delay_us(us: u64) {
    state().release_delay_us = us;
}

/// Resets that met a live allocation.
#[no_mangle]
pub extern "C" fn stub_resets_while_retained() -> u64 {
    state().resets_while_retained
}

/// Launches refused for asking more dynamic shared memory than the
/// function's attribute allowed.
#[no_mangle]
pub extern "C" fn stub_shared_refusals() -> u64 {
    state().shared_refusals
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

/// `cuDeviceTotalMem_v2`: 80 GiB.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceTotalMem_v2(bytes: *mut usize, _dev: i32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { bytes.write(80 << 30) };
    CUDA_SUCCESS
}

/// `cuDeviceGetDefaultMemPool`: a fake pool.
#[no_mangle]
pub unsafe extern "C" fn cuDeviceGetDefaultMemPool(pool: *mut *mut c_void, _dev: i32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { pool.write(0x70_0000 as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuMemAllocAsync`: a fake address, recorded like `cuMemAlloc_v2`.
#[no_mangle]
pub unsafe extern "C" fn cuMemAllocAsync(
    dptr: *mut u64,
    bytes: usize,
    _stream: *mut c_void,
) -> i32 {
    if dptr.is_null() || bytes == 0 {
        return CUDA_ERROR_INVALID_VALUE;
    }
    let mut s = state();
    let address = s.next_address;
    s.next_address += (bytes as u64).div_ceil(256) * 256;
    s.allocations.push((address, bytes));
    // SAFETY: a valid out-pointer.
    unsafe { dptr.write(address) };
    CUDA_SUCCESS
}

/// `cuMemFreeAsync`: recorded; a free on a capturing stream is counted as
/// captured (the driver would make it a graph node).
#[no_mangle]
pub unsafe extern "C" fn cuMemFreeAsync(dptr: u64, stream: *mut c_void) -> i32 {
    let mut s = state();
    s.async_frees += 1;
    if s.capturing.contains(&(stream as usize)) {
        s.captured_frees += 1;
    } else {
        s.frees.push(dptr);
    }
    CUDA_SUCCESS
}

/// `cuStreamBeginCapture_v2`.
#[no_mangle]
pub unsafe extern "C" fn cuStreamBeginCapture_v2(stream: *mut c_void, _mode: i32) -> i32 {
    let mut s = state();
    if s.capturing.contains(&(stream as usize)) {
        return 900; // CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED-like
    }
    s.capturing.push(stream as usize);
    CUDA_SUCCESS
}

/// `cuStreamEndCapture`: a fake graph; the stream and every stream that
/// joined (see `stub_join_capture`) stop capturing.
#[no_mangle]
pub unsafe extern "C" fn cuStreamEndCapture(_stream: *mut c_void, graph: *mut *mut c_void) -> i32 {
    state().capturing.clear();
    // SAFETY: a valid out-pointer.
    unsafe { graph.write(0x60_0000 as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuStreamIsCapturing`: ACTIVE (1) for a capturing stream, else NONE.
#[no_mangle]
pub unsafe extern "C" fn cuStreamIsCapturing(stream: *mut c_void, status: *mut i32) -> i32 {
    let active = state().capturing.contains(&(stream as usize));
    // SAFETY: a valid out-pointer.
    unsafe { status.write(i32::from(active)) };
    CUDA_SUCCESS
}

/// `cuGraphDestroy`.
#[no_mangle]
pub unsafe extern "C" fn cuGraphDestroy(_graph: *mut c_void) -> i32 {
    CUDA_SUCCESS
}

/// `cuLaunchHostFunc`: on a capturing stream, counted (a graph host node);
/// otherwise the function is called at once, as if the stream were idle.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchHostFunc(
    stream: *mut c_void,
    f: Option<unsafe extern "C" fn(*mut c_void)>,
    user: *mut c_void,
) -> i32 {
    let captured = {
        let mut s = state();
        let c = s.capturing.contains(&(stream as usize));
        if c {
            s.captured_host_fns += 1;
        }
        c
    };
    if !captured {
        if let Some(f) = f {
            // SAFETY: the caller's function and data, called once.
            unsafe { f(user) };
        }
    }
    CUDA_SUCCESS
}

/// Marks `stream` as capturing, as a wait on an event recorded on a
/// capturing stream makes it (joins the capture).
#[no_mangle]
pub extern "C" fn stub_join_capture(stream: usize) {
    state().capturing.push(stream);
}

/// (all `cuMemFreeAsync` calls, those on a capturing stream, host functions
/// queued on a capturing stream).
#[no_mangle]
pub unsafe extern "C" fn stub_capture_counts(out: *mut u64) {
    let s = state();
    // SAFETY: the test passes 3 writable u64s.
    unsafe {
        out.write(s.async_frees);
        out.add(1).write(s.captured_frees);
        out.add(2).write(s.captured_host_fns);
    }
}

/// `cuGraphCreate`: a fake graph.
#[no_mangle]
pub unsafe extern "C" fn cuGraphCreate(graph: *mut *mut c_void, _flags: u32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { graph.write(0x61_0000 as *mut c_void) };
    CUDA_SUCCESS
}

/// Records a node with its dependencies and returns its handle.
///
/// # Safety
///
/// `deps` holds `n` handles (or is null with `n == 0`).
unsafe fn add_node(node: *mut *mut c_void, deps: *const *mut c_void, n: usize) -> i32 {
    let list: Vec<usize> = if n == 0 {
        Vec::new()
    } else {
        // SAFETY: the function's contract.
        unsafe { std::slice::from_raw_parts(deps, n) }
            .iter()
            .map(|&d| d as usize)
            .collect()
    };
    let mut sorted = list.clone();
    sorted.sort_unstable();
    sorted.dedup();
    if sorted.len() != list.len() {
        return CUDA_ERROR_INVALID_VALUE; // the driver refuses a repeated dependency
    }
    let mut s = state();
    let handle = 0x90_0000 + 0x10 * (s.nodes.len() + 1);
    s.nodes.push((handle, list));
    // SAFETY: a valid out-pointer.
    unsafe { node.write(handle as *mut c_void) };
    CUDA_SUCCESS
}

/// `cuGraphAddMemAllocNode`: recorded (the address stays 0).
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddMemAllocNode(
    node: *mut *mut c_void,
    _graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    _params: *mut c_void,
) -> i32 {
    // SAFETY: the driver's contract, which the caller keeps.
    unsafe { add_node(node, deps, n) }
}

/// `cuGraphAddMemsetNode`: recorded.
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddMemsetNode(
    node: *mut *mut c_void,
    _graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    _params: *const c_void,
    _ctx: *mut c_void,
) -> i32 {
    // SAFETY: as above.
    unsafe { add_node(node, deps, n) }
}

/// `cuGraphAddMemcpyNode`: recorded.
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddMemcpyNode(
    node: *mut *mut c_void,
    _graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    _params: *const c_void,
    _ctx: *mut c_void,
) -> i32 {
    // SAFETY: as above.
    unsafe { add_node(node, deps, n) }
}

/// `cuGraphAddMemFreeNode`: recorded.
#[no_mangle]
pub unsafe extern "C" fn cuGraphAddMemFreeNode(
    node: *mut *mut c_void,
    _graph: *mut c_void,
    deps: *const *mut c_void,
    n: usize,
    _dptr: u64,
) -> i32 {
    // SAFETY: as above.
    unsafe { add_node(node, deps, n) }
}

/// Copies the dependencies of `node` into `out` (capacity `cap`); returns
/// their number, or `usize::MAX` for an unknown node.
#[no_mangle]
pub unsafe extern "C" fn stub_node_deps(node: usize, out: *mut usize, cap: usize) -> usize {
    let s = state();
    let Some((_, deps)) = s.nodes.iter().find(|(h, _)| *h == node) else {
        return usize::MAX;
    };
    for (i, d) in deps.iter().take(cap).enumerate() {
        // SAFETY: the test passes `cap` writable usizes.
        unsafe { out.add(i).write(*d) };
    }
    deps.len()
}

// ---- A stand-in NCCL (the same library, loaded as libnccl through
// CUDAKIT_LIBNCCL): communicators are fake handles, collectives are counted
// and do nothing, so a test can see what reached NCCL.

/// `ncclGetVersion`: 2.28.3.
#[no_mangle]
pub unsafe extern "C" fn ncclGetVersion(version: *mut i32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { version.write(22803) };
    0
}

/// `ncclGetUniqueId`: zeros.
#[no_mangle]
pub unsafe extern "C" fn ncclGetUniqueId(id: *mut u8) -> i32 {
    // SAFETY: a 128-byte out-buffer.
    unsafe { std::ptr::write_bytes(id, 0, 128) };
    0
}

/// `ncclUniqueId` as NCCL passes it: 128 bytes by value.
#[repr(C)]
#[derive(Debug)]
pub struct UniqueId {
    internal: [u8; 128],
}

/// `ncclCommInitRank`: a fake communicator.
#[no_mangle]
pub unsafe extern "C" fn ncclCommInitRank(
    comm: *mut *mut c_void,
    _nranks: i32,
    _id: UniqueId,
    rank: i32,
) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { comm.write((0xA0_0000 + 0x10 * rank as usize) as *mut c_void) };
    0
}

/// `ncclCommInitAll`: one fake communicator per device.
#[no_mangle]
pub unsafe extern "C" fn ncclCommInitAll(
    comms: *mut *mut c_void,
    n: i32,
    _devs: *const i32,
) -> i32 {
    for i in 0..n.max(0) as usize {
        // SAFETY: `n` out-slots.
        unsafe { comms.add(i).write((0xA0_0000 + 0x10 * i) as *mut c_void) };
    }
    0
}

/// `ncclCommDestroy`.
#[no_mangle]
pub extern "C" fn ncclCommDestroy(_comm: *mut c_void) -> i32 {
    0
}

/// `ncclCommAbort`: counted.
#[no_mangle]
pub extern "C" fn ncclCommAbort(_comm: *mut c_void) -> i32 {
    state().nccl_aborts += 1;
    0
}

/// `ncclGetErrorString`.
#[no_mangle]
pub extern "C" fn ncclGetErrorString(_result: i32) -> *const i8 {
    c"stand-in NCCL error".as_ptr()
}

/// `ncclCommGetAsyncError`: none.
#[no_mangle]
pub unsafe extern "C" fn ncclCommGetAsyncError(_comm: *mut c_void, err: *mut i32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { err.write(0) };
    0
}

/// `ncclCommCount`: 2.
#[no_mangle]
pub unsafe extern "C" fn ncclCommCount(_comm: *mut c_void, count: *mut i32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { count.write(2) };
    0
}

/// `ncclCommCuDevice`: from the fake handle.
#[no_mangle]
pub unsafe extern "C" fn ncclCommCuDevice(comm: *mut c_void, device: *mut i32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { device.write(((comm as usize - 0xA0_0000) / 0x10) as i32) };
    0
}

/// `ncclCommUserRank`: from the fake handle.
#[no_mangle]
pub unsafe extern "C" fn ncclCommUserRank(comm: *mut c_void, rank: *mut i32) -> i32 {
    // SAFETY: a valid out-pointer.
    unsafe { rank.write(((comm as usize - 0xA0_0000) / 0x10) as i32) };
    0
}

fn nccl_call() -> i32 {
    state().nccl_calls += 1;
    0
}

/// `ncclReduce`: counted.
#[no_mangle]
pub extern "C" fn ncclReduce(
    _s: *const c_void,
    _r: *mut c_void,
    _n: usize,
    _t: i32,
    _op: i32,
    _root: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclBroadcast`: counted.
#[no_mangle]
pub extern "C" fn ncclBroadcast(
    _s: *const c_void,
    _r: *mut c_void,
    _n: usize,
    _t: i32,
    _root: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclAllReduce`: counted.
#[no_mangle]
pub extern "C" fn ncclAllReduce(
    _s: *const c_void,
    _r: *mut c_void,
    _n: usize,
    _t: i32,
    _op: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclReduceScatter`: counted.
#[no_mangle]
pub extern "C" fn ncclReduceScatter(
    _s: *const c_void,
    _r: *mut c_void,
    _n: usize,
    _t: i32,
    _op: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclAllGather`: counted.
#[no_mangle]
pub extern "C" fn ncclAllGather(
    _s: *const c_void,
    _r: *mut c_void,
    _n: usize,
    _t: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclSend`: counted.
#[no_mangle]
pub extern "C" fn ncclSend(
    _s: *const c_void,
    _n: usize,
    _t: i32,
    _peer: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclRecv`: counted.
#[no_mangle]
pub extern "C" fn ncclRecv(
    _r: *mut c_void,
    _n: usize,
    _t: i32,
    _peer: i32,
    _c: *mut c_void,
    _st: *mut c_void,
) -> i32 {
    nccl_call()
}

/// `ncclGroupStart`: counted.
#[no_mangle]
pub extern "C" fn ncclGroupStart() -> i32 {
    state().nccl_groups += 1;
    0
}

/// `ncclGroupEnd`.
#[no_mangle]
pub extern "C" fn ncclGroupEnd() -> i32 {
    0
}

/// (group starts, collective calls, aborts) of the stand-in NCCL.
#[no_mangle]
pub unsafe extern "C" fn stub_nccl_counts(out: *mut u64) {
    let s = state();
    // SAFETY: the test passes 3 writable u64s.
    unsafe {
        out.write(s.nccl_groups);
        out.add(1).write(s.nccl_calls);
        out.add(2).write(s.nccl_aborts);
    }
}
