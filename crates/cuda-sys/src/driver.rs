//! The libcuda function table, written by hand from CUDA 13.0's `cuda.h`.
//!
//! Each entry names the symbol the header's `#define` block maps the API name
//! to (`cuMemAlloc` is exported as `cuMemAlloc_v2`) and has the signature of
//! that versioned symbol's prototype. The per-thread default stream variants
//! (`_ptds`, `_ptsz`) are not used: cudakit always passes an explicit stream.
//!
//! Entry points that every driver from CUDA 12.0 on exports are required (the
//! version each one appeared in is the `PFN_<name>_v<version>` typedef of
//! `cudaTypedefs.h`). Newer ones are `Option`s, and so are the library and
//! kernel API, `cuLaunchKernelEx`, the cluster occupancy queries and the entry
//! points `cuda.h` marks deprecated. Where the header's name now maps to a
//! symbol newer than 12.0 (`cuMemPrefetchAsync_v2`, `cuMemAdvise_v2`,
//! `cuStreamGetCaptureInfo_v3`, `cuEventElapsedTime_v2`), the older symbol is
//! bound too, as an optional field with a `_v1` (or its own `_v2`) suffix and
//! its own signature, so that the safe layer can fall back to it on an older
//! driver.

use std::ffi::{c_char, c_int, c_uchar, c_uint, c_ushort, c_void};

use crate::table::function_table;
use crate::types::*;

function_table! {
    /// Entry points of libcuda. Obtain the process's table with
    /// [`driver()`](crate::driver()), or open a specific library with
    /// [`Driver::load_from`].
    pub struct Driver;
    library = "libcuda";
    header = "cuda.h";
    search = Cuda;
    required {
        // --- initialisation and versions
        cuInit = "cuInit": fn(Flags: c_uint) -> CUresult;
        cuDriverGetVersion = "cuDriverGetVersion": fn(driverVersion: *mut c_int) -> CUresult;
        // --- errors
        cuGetErrorName = "cuGetErrorName": fn(error: CUresult, pStr: *mut *const c_char) -> CUresult;
        cuGetErrorString = "cuGetErrorString": fn(error: CUresult, pStr: *mut *const c_char) -> CUresult;
        // --- devices
        cuDeviceGet = "cuDeviceGet": fn(device: *mut CUdevice, ordinal: c_int) -> CUresult;
        cuDeviceGetCount = "cuDeviceGetCount": fn(count: *mut c_int) -> CUresult;
        cuDeviceGetName = "cuDeviceGetName": fn(name: *mut c_char, len: c_int, dev: CUdevice) -> CUresult;
        cuDeviceGetUuid = "cuDeviceGetUuid_v2": fn(uuid: *mut CUuuid, dev: CUdevice) -> CUresult;
        cuDeviceTotalMem = "cuDeviceTotalMem_v2": fn(bytes: *mut usize, dev: CUdevice) -> CUresult;
        cuDeviceGetAttribute = "cuDeviceGetAttribute": fn(pi: *mut c_int, attrib: CUdevice_attribute, dev: CUdevice) -> CUresult;
        cuDeviceGetPCIBusId = "cuDeviceGetPCIBusId": fn(pciBusId: *mut c_char, len: c_int, dev: CUdevice) -> CUresult;
        cuDeviceGetByPCIBusId = "cuDeviceGetByPCIBusId": fn(dev: *mut CUdevice, pciBusId: *const c_char) -> CUresult;
        cuDeviceCanAccessPeer = "cuDeviceCanAccessPeer": fn(canAccessPeer: *mut c_int, dev: CUdevice, peerDev: CUdevice) -> CUresult;
        cuDeviceGetP2PAttribute = "cuDeviceGetP2PAttribute": fn(value: *mut c_int, attrib: CUdevice_P2PAttribute, srcDevice: CUdevice, dstDevice: CUdevice) -> CUresult;
        cuDeviceGetDefaultMemPool = "cuDeviceGetDefaultMemPool": fn(pool_out: *mut CUmemoryPool, dev: CUdevice) -> CUresult;
        cuDeviceGetMemPool = "cuDeviceGetMemPool": fn(pool: *mut CUmemoryPool, dev: CUdevice) -> CUresult;
        // --- primary contexts
        cuDevicePrimaryCtxRetain = "cuDevicePrimaryCtxRetain": fn(pctx: *mut CUcontext, dev: CUdevice) -> CUresult;
        cuDevicePrimaryCtxRelease = "cuDevicePrimaryCtxRelease_v2": fn(dev: CUdevice) -> CUresult;
        cuDevicePrimaryCtxReset = "cuDevicePrimaryCtxReset_v2": fn(dev: CUdevice) -> CUresult;
        cuDevicePrimaryCtxSetFlags = "cuDevicePrimaryCtxSetFlags_v2": fn(dev: CUdevice, flags: c_uint) -> CUresult;
        cuDevicePrimaryCtxGetState = "cuDevicePrimaryCtxGetState": fn(dev: CUdevice, flags: *mut c_uint, active: *mut c_int) -> CUresult;
        // --- contexts
        cuCtxDestroy = "cuCtxDestroy_v2": fn(ctx: CUcontext) -> CUresult;
        cuCtxSetCurrent = "cuCtxSetCurrent": fn(ctx: CUcontext) -> CUresult;
        cuCtxGetCurrent = "cuCtxGetCurrent": fn(pctx: *mut CUcontext) -> CUresult;
        cuCtxPushCurrent = "cuCtxPushCurrent_v2": fn(ctx: CUcontext) -> CUresult;
        cuCtxPopCurrent = "cuCtxPopCurrent_v2": fn(pctx: *mut CUcontext) -> CUresult;
        cuCtxGetDevice = "cuCtxGetDevice": fn(device: *mut CUdevice) -> CUresult;
        cuCtxGetFlags = "cuCtxGetFlags": fn(flags: *mut c_uint) -> CUresult;
        cuCtxGetId = "cuCtxGetId": fn(ctx: CUcontext, ctxId: *mut u64) -> CUresult;
        cuCtxSynchronize = "cuCtxSynchronize": fn() -> CUresult;
        cuCtxSetLimit = "cuCtxSetLimit": fn(limit: CUlimit, value: usize) -> CUresult;
        cuCtxGetLimit = "cuCtxGetLimit": fn(pvalue: *mut usize, limit: CUlimit) -> CUresult;
        cuCtxGetCacheConfig = "cuCtxGetCacheConfig": fn(pconfig: *mut CUfunc_cache) -> CUresult;
        cuCtxSetCacheConfig = "cuCtxSetCacheConfig": fn(config: CUfunc_cache) -> CUresult;
        cuCtxGetApiVersion = "cuCtxGetApiVersion": fn(ctx: CUcontext, version: *mut c_uint) -> CUresult;
        cuCtxGetStreamPriorityRange = "cuCtxGetStreamPriorityRange": fn(leastPriority: *mut c_int, greatestPriority: *mut c_int) -> CUresult;
        cuCtxEnablePeerAccess = "cuCtxEnablePeerAccess": fn(peerContext: CUcontext, Flags: c_uint) -> CUresult;
        cuCtxDisablePeerAccess = "cuCtxDisablePeerAccess": fn(peerContext: CUcontext) -> CUresult;
        // --- memory
        cuMemGetInfo = "cuMemGetInfo_v2": fn(free: *mut usize, total: *mut usize) -> CUresult;
        cuMemAlloc = "cuMemAlloc_v2": fn(dptr: *mut CUdeviceptr, bytesize: usize) -> CUresult;
        cuMemAllocPitch = "cuMemAllocPitch_v2": fn(dptr: *mut CUdeviceptr, pPitch: *mut usize, WidthInBytes: usize, Height: usize, ElementSizeBytes: c_uint) -> CUresult;
        cuMemFree = "cuMemFree_v2": fn(dptr: CUdeviceptr) -> CUresult;
        cuMemGetAddressRange = "cuMemGetAddressRange_v2": fn(pbase: *mut CUdeviceptr, psize: *mut usize, dptr: CUdeviceptr) -> CUresult;
        cuMemAllocHost = "cuMemAllocHost_v2": fn(pp: *mut *mut c_void, bytesize: usize) -> CUresult;
        cuMemFreeHost = "cuMemFreeHost": fn(p: *mut c_void) -> CUresult;
        cuMemHostAlloc = "cuMemHostAlloc": fn(pp: *mut *mut c_void, bytesize: usize, Flags: c_uint) -> CUresult;
        cuMemHostGetDevicePointer = "cuMemHostGetDevicePointer_v2": fn(pdptr: *mut CUdeviceptr, p: *mut c_void, Flags: c_uint) -> CUresult;
        cuMemHostGetFlags = "cuMemHostGetFlags": fn(pFlags: *mut c_uint, p: *mut c_void) -> CUresult;
        cuMemHostRegister = "cuMemHostRegister_v2": fn(p: *mut c_void, bytesize: usize, Flags: c_uint) -> CUresult;
        cuMemHostUnregister = "cuMemHostUnregister": fn(p: *mut c_void) -> CUresult;
        cuMemAllocManaged = "cuMemAllocManaged": fn(dptr: *mut CUdeviceptr, bytesize: usize, flags: c_uint) -> CUresult;
        cuMemAllocAsync = "cuMemAllocAsync": fn(dptr: *mut CUdeviceptr, bytesize: usize, hStream: CUstream) -> CUresult;
        cuMemFreeAsync = "cuMemFreeAsync": fn(dptr: CUdeviceptr, hStream: CUstream) -> CUresult;
        cuMemAllocFromPoolAsync = "cuMemAllocFromPoolAsync": fn(dptr: *mut CUdeviceptr, bytesize: usize, pool: CUmemoryPool, hStream: CUstream) -> CUresult;
        cuMemPoolTrimTo = "cuMemPoolTrimTo": fn(pool: CUmemoryPool, minBytesToKeep: usize) -> CUresult;
        cuMemPoolCreate = "cuMemPoolCreate": fn(pool: *mut CUmemoryPool, poolProps: *const CUmemPoolProps) -> CUresult;
        cuMemPoolDestroy = "cuMemPoolDestroy": fn(pool: CUmemoryPool) -> CUresult;
        cuMemPoolSetAttribute = "cuMemPoolSetAttribute": fn(pool: CUmemoryPool, attr: CUmemPool_attribute, value: *mut c_void) -> CUresult;
        cuMemPoolGetAttribute = "cuMemPoolGetAttribute": fn(pool: CUmemoryPool, attr: CUmemPool_attribute, value: *mut c_void) -> CUresult;
        // --- copies
        cuMemcpy = "cuMemcpy": fn(dst: CUdeviceptr, src: CUdeviceptr, ByteCount: usize) -> CUresult;
        cuMemcpyAsync = "cuMemcpyAsync": fn(dst: CUdeviceptr, src: CUdeviceptr, ByteCount: usize, hStream: CUstream) -> CUresult;
        cuMemcpyPeer = "cuMemcpyPeer": fn(dstDevice: CUdeviceptr, dstContext: CUcontext, srcDevice: CUdeviceptr, srcContext: CUcontext, ByteCount: usize) -> CUresult;
        cuMemcpyPeerAsync = "cuMemcpyPeerAsync": fn(dstDevice: CUdeviceptr, dstContext: CUcontext, srcDevice: CUdeviceptr, srcContext: CUcontext, ByteCount: usize, hStream: CUstream) -> CUresult;
        cuMemcpyHtoD = "cuMemcpyHtoD_v2": fn(dstDevice: CUdeviceptr, srcHost: *const c_void, ByteCount: usize) -> CUresult;
        cuMemcpyDtoH = "cuMemcpyDtoH_v2": fn(dstHost: *mut c_void, srcDevice: CUdeviceptr, ByteCount: usize) -> CUresult;
        cuMemcpyDtoD = "cuMemcpyDtoD_v2": fn(dstDevice: CUdeviceptr, srcDevice: CUdeviceptr, ByteCount: usize) -> CUresult;
        cuMemcpyHtoDAsync = "cuMemcpyHtoDAsync_v2": fn(dstDevice: CUdeviceptr, srcHost: *const c_void, ByteCount: usize, hStream: CUstream) -> CUresult;
        cuMemcpyDtoHAsync = "cuMemcpyDtoHAsync_v2": fn(dstHost: *mut c_void, srcDevice: CUdeviceptr, ByteCount: usize, hStream: CUstream) -> CUresult;
        cuMemcpyDtoDAsync = "cuMemcpyDtoDAsync_v2": fn(dstDevice: CUdeviceptr, srcDevice: CUdeviceptr, ByteCount: usize, hStream: CUstream) -> CUresult;
        cuMemcpyDtoA = "cuMemcpyDtoA_v2": fn(dstArray: CUarray, dstOffset: usize, srcDevice: CUdeviceptr, ByteCount: usize) -> CUresult;
        cuMemcpyAtoD = "cuMemcpyAtoD_v2": fn(dstDevice: CUdeviceptr, srcArray: CUarray, srcOffset: usize, ByteCount: usize) -> CUresult;
        cuMemcpyHtoA = "cuMemcpyHtoA_v2": fn(dstArray: CUarray, dstOffset: usize, srcHost: *const c_void, ByteCount: usize) -> CUresult;
        cuMemcpyAtoH = "cuMemcpyAtoH_v2": fn(dstHost: *mut c_void, srcArray: CUarray, srcOffset: usize, ByteCount: usize) -> CUresult;
        cuMemcpyAtoA = "cuMemcpyAtoA_v2": fn(dstArray: CUarray, dstOffset: usize, srcArray: CUarray, srcOffset: usize, ByteCount: usize) -> CUresult;
        cuMemcpyHtoAAsync = "cuMemcpyHtoAAsync_v2": fn(dstArray: CUarray, dstOffset: usize, srcHost: *const c_void, ByteCount: usize, hStream: CUstream) -> CUresult;
        cuMemcpyAtoHAsync = "cuMemcpyAtoHAsync_v2": fn(dstHost: *mut c_void, srcArray: CUarray, srcOffset: usize, ByteCount: usize, hStream: CUstream) -> CUresult;
        cuMemcpy2D = "cuMemcpy2D_v2": fn(pCopy: *const CUDA_MEMCPY2D) -> CUresult;
        cuMemcpy2DUnaligned = "cuMemcpy2DUnaligned_v2": fn(pCopy: *const CUDA_MEMCPY2D) -> CUresult;
        cuMemcpy2DAsync = "cuMemcpy2DAsync_v2": fn(pCopy: *const CUDA_MEMCPY2D, hStream: CUstream) -> CUresult;
        cuMemcpy3D = "cuMemcpy3D_v2": fn(pCopy: *const CUDA_MEMCPY3D) -> CUresult;
        cuMemcpy3DAsync = "cuMemcpy3DAsync_v2": fn(pCopy: *const CUDA_MEMCPY3D, hStream: CUstream) -> CUresult;
        cuMemcpy3DPeer = "cuMemcpy3DPeer": fn(pCopy: *const CUDA_MEMCPY3D_PEER) -> CUresult;
        cuMemcpy3DPeerAsync = "cuMemcpy3DPeerAsync": fn(pCopy: *const CUDA_MEMCPY3D_PEER, hStream: CUstream) -> CUresult;
        // --- memset
        cuMemsetD8 = "cuMemsetD8_v2": fn(dstDevice: CUdeviceptr, uc: c_uchar, N: usize) -> CUresult;
        cuMemsetD16 = "cuMemsetD16_v2": fn(dstDevice: CUdeviceptr, us: c_ushort, N: usize) -> CUresult;
        cuMemsetD32 = "cuMemsetD32_v2": fn(dstDevice: CUdeviceptr, ui: c_uint, N: usize) -> CUresult;
        cuMemsetD2D8 = "cuMemsetD2D8_v2": fn(dstDevice: CUdeviceptr, dstPitch: usize, uc: c_uchar, Width: usize, Height: usize) -> CUresult;
        cuMemsetD2D16 = "cuMemsetD2D16_v2": fn(dstDevice: CUdeviceptr, dstPitch: usize, us: c_ushort, Width: usize, Height: usize) -> CUresult;
        cuMemsetD2D32 = "cuMemsetD2D32_v2": fn(dstDevice: CUdeviceptr, dstPitch: usize, ui: c_uint, Width: usize, Height: usize) -> CUresult;
        cuMemsetD8Async = "cuMemsetD8Async": fn(dstDevice: CUdeviceptr, uc: c_uchar, N: usize, hStream: CUstream) -> CUresult;
        cuMemsetD16Async = "cuMemsetD16Async": fn(dstDevice: CUdeviceptr, us: c_ushort, N: usize, hStream: CUstream) -> CUresult;
        cuMemsetD32Async = "cuMemsetD32Async": fn(dstDevice: CUdeviceptr, ui: c_uint, N: usize, hStream: CUstream) -> CUresult;
        cuMemsetD2D8Async = "cuMemsetD2D8Async": fn(dstDevice: CUdeviceptr, dstPitch: usize, uc: c_uchar, Width: usize, Height: usize, hStream: CUstream) -> CUresult;
        cuMemsetD2D16Async = "cuMemsetD2D16Async": fn(dstDevice: CUdeviceptr, dstPitch: usize, us: c_ushort, Width: usize, Height: usize, hStream: CUstream) -> CUresult;
        cuMemsetD2D32Async = "cuMemsetD2D32Async": fn(dstDevice: CUdeviceptr, dstPitch: usize, ui: c_uint, Width: usize, Height: usize, hStream: CUstream) -> CUresult;
        // --- virtual memory management (CUDA 10.2)
        cuMemAddressReserve = "cuMemAddressReserve": fn(ptr: *mut CUdeviceptr, size: usize, alignment: usize, addr: CUdeviceptr, flags: u64) -> CUresult;
        cuMemAddressFree = "cuMemAddressFree": fn(ptr: CUdeviceptr, size: usize) -> CUresult;
        cuMemCreate = "cuMemCreate": fn(handle: *mut CUmemGenericAllocationHandle, size: usize, prop: *const CUmemAllocationProp, flags: u64) -> CUresult;
        cuMemRelease = "cuMemRelease": fn(handle: CUmemGenericAllocationHandle) -> CUresult;
        cuMemMap = "cuMemMap": fn(ptr: CUdeviceptr, size: usize, offset: usize, handle: CUmemGenericAllocationHandle, flags: u64) -> CUresult;
        cuMemUnmap = "cuMemUnmap": fn(ptr: CUdeviceptr, size: usize) -> CUresult;
        cuMemSetAccess = "cuMemSetAccess": fn(ptr: CUdeviceptr, size: usize, desc: *const CUmemAccessDesc, count: usize) -> CUresult;
        cuMemGetAllocationGranularity = "cuMemGetAllocationGranularity": fn(granularity: *mut usize, prop: *const CUmemAllocationProp, option: CUmemAllocationGranularity_flags) -> CUresult;
        // --- inter-process sharing (IPC). Every driver from CUDA 12.0 on exports
        // them (`PFN_cuIpc*_v4010`, `PFN_cuIpcOpenMemHandle_v11000`,
        // `PFN_cuMem*ShareableHandle_v10020`, `PFN_cuMemPool*_v11020`).
        cuIpcGetEventHandle = "cuIpcGetEventHandle": fn(pHandle: *mut CUipcEventHandle, event: CUevent) -> CUresult;
        cuIpcOpenEventHandle = "cuIpcOpenEventHandle": fn(phEvent: *mut CUevent, handle: CUipcEventHandle) -> CUresult;
        cuIpcGetMemHandle = "cuIpcGetMemHandle": fn(pHandle: *mut CUipcMemHandle, dptr: CUdeviceptr) -> CUresult;
        cuIpcOpenMemHandle = "cuIpcOpenMemHandle_v2": fn(pdptr: *mut CUdeviceptr, handle: CUipcMemHandle, Flags: c_uint) -> CUresult;
        cuIpcCloseMemHandle = "cuIpcCloseMemHandle": fn(dptr: CUdeviceptr) -> CUresult;
        cuMemExportToShareableHandle = "cuMemExportToShareableHandle": fn(shareableHandle: *mut c_void, handle: CUmemGenericAllocationHandle, handleType: CUmemAllocationHandleType, flags: u64) -> CUresult;
        cuMemImportFromShareableHandle = "cuMemImportFromShareableHandle": fn(handle: *mut CUmemGenericAllocationHandle, osHandle: *mut c_void, shHandleType: CUmemAllocationHandleType) -> CUresult;
        cuMemPoolExportToShareableHandle = "cuMemPoolExportToShareableHandle": fn(handle_out: *mut c_void, pool: CUmemoryPool, handleType: CUmemAllocationHandleType, flags: u64) -> CUresult;
        cuMemPoolImportFromShareableHandle = "cuMemPoolImportFromShareableHandle": fn(pool_out: *mut CUmemoryPool, handle: *mut c_void, handleType: CUmemAllocationHandleType, flags: u64) -> CUresult;
        cuMemPoolExportPointer = "cuMemPoolExportPointer": fn(shareData_out: *mut CUmemPoolPtrExportData, ptr: CUdeviceptr) -> CUresult;
        cuMemPoolImportPointer = "cuMemPoolImportPointer": fn(ptr_out: *mut CUdeviceptr, pool: CUmemoryPool, shareData: *mut CUmemPoolPtrExportData) -> CUresult;
        // --- unified memory
        cuMemRangeGetAttribute = "cuMemRangeGetAttribute": fn(data: *mut c_void, dataSize: usize, attribute: CUmem_range_attribute, devPtr: CUdeviceptr, count: usize) -> CUresult;
        cuMemRangeGetAttributes = "cuMemRangeGetAttributes": fn(data: *mut *mut c_void, dataSizes: *mut usize, attributes: *mut CUmem_range_attribute, numAttributes: usize, devPtr: CUdeviceptr, count: usize) -> CUresult;
        // --- pointer attributes
        cuPointerGetAttribute = "cuPointerGetAttribute": fn(data: *mut c_void, attribute: CUpointer_attribute, ptr: CUdeviceptr) -> CUresult;
        cuPointerGetAttributes = "cuPointerGetAttributes": fn(numAttributes: c_uint, attributes: *mut CUpointer_attribute, data: *mut *mut c_void, ptr: CUdeviceptr) -> CUresult;
        cuPointerSetAttribute = "cuPointerSetAttribute": fn(value: *const c_void, attribute: CUpointer_attribute, ptr: CUdeviceptr) -> CUresult;
        // --- streams
        cuStreamCreate = "cuStreamCreate": fn(phStream: *mut CUstream, Flags: c_uint) -> CUresult;
        cuStreamCreateWithPriority = "cuStreamCreateWithPriority": fn(phStream: *mut CUstream, flags: c_uint, priority: c_int) -> CUresult;
        cuStreamGetFlags = "cuStreamGetFlags": fn(hStream: CUstream, flags: *mut c_uint) -> CUresult;
        cuStreamGetPriority = "cuStreamGetPriority": fn(hStream: CUstream, priority: *mut c_int) -> CUresult;
        cuStreamGetCtx = "cuStreamGetCtx": fn(hStream: CUstream, pctx: *mut CUcontext) -> CUresult;
        cuStreamGetId = "cuStreamGetId": fn(hStream: CUstream, streamId: *mut u64) -> CUresult;
        cuStreamQuery = "cuStreamQuery": fn(hStream: CUstream) -> CUresult;
        cuStreamSynchronize = "cuStreamSynchronize": fn(hStream: CUstream) -> CUresult;
        cuStreamWaitEvent = "cuStreamWaitEvent": fn(hStream: CUstream, hEvent: CUevent, Flags: c_uint) -> CUresult;
        cuStreamAddCallback = "cuStreamAddCallback": fn(hStream: CUstream, callback: CUstreamCallback, userData: *mut c_void, flags: c_uint) -> CUresult;
        cuStreamAttachMemAsync = "cuStreamAttachMemAsync": fn(hStream: CUstream, dptr: CUdeviceptr, length: usize, flags: c_uint) -> CUresult;
        cuStreamDestroy = "cuStreamDestroy_v2": fn(hStream: CUstream) -> CUresult;
        cuLaunchHostFunc = "cuLaunchHostFunc": fn(hStream: CUstream, r#fn: CUhostFn, userData: *mut c_void) -> CUresult;
        // --- stream capture
        cuStreamBeginCapture = "cuStreamBeginCapture_v2": fn(hStream: CUstream, mode: CUstreamCaptureMode) -> CUresult;
        cuStreamEndCapture = "cuStreamEndCapture": fn(hStream: CUstream, phGraph: *mut CUgraph) -> CUresult;
        cuStreamIsCapturing = "cuStreamIsCapturing": fn(hStream: CUstream, captureStatus: *mut CUstreamCaptureStatus) -> CUresult;
        cuThreadExchangeStreamCaptureMode = "cuThreadExchangeStreamCaptureMode": fn(mode: *mut CUstreamCaptureMode) -> CUresult;
        // --- events
        cuEventCreate = "cuEventCreate": fn(phEvent: *mut CUevent, Flags: c_uint) -> CUresult;
        cuEventRecord = "cuEventRecord": fn(hEvent: CUevent, hStream: CUstream) -> CUresult;
        cuEventRecordWithFlags = "cuEventRecordWithFlags": fn(hEvent: CUevent, hStream: CUstream, flags: c_uint) -> CUresult;
        cuEventQuery = "cuEventQuery": fn(hEvent: CUevent) -> CUresult;
        cuEventSynchronize = "cuEventSynchronize": fn(hEvent: CUevent) -> CUresult;
        cuEventDestroy = "cuEventDestroy_v2": fn(hEvent: CUevent) -> CUresult;
        // --- modules
        cuModuleLoad = "cuModuleLoad": fn(module: *mut CUmodule, fname: *const c_char) -> CUresult;
        cuModuleLoadData = "cuModuleLoadData": fn(module: *mut CUmodule, image: *const c_void) -> CUresult;
        cuModuleLoadDataEx = "cuModuleLoadDataEx": fn(module: *mut CUmodule, image: *const c_void, numOptions: c_uint, options: *mut CUjit_option, optionValues: *mut *mut c_void) -> CUresult;
        cuModuleLoadFatBinary = "cuModuleLoadFatBinary": fn(module: *mut CUmodule, fatCubin: *const c_void) -> CUresult;
        cuModuleUnload = "cuModuleUnload": fn(hmod: CUmodule) -> CUresult;
        cuModuleGetFunction = "cuModuleGetFunction": fn(hfunc: *mut CUfunction, hmod: CUmodule, name: *const c_char) -> CUresult;
        cuModuleGetGlobal = "cuModuleGetGlobal_v2": fn(dptr: *mut CUdeviceptr, bytes: *mut usize, hmod: CUmodule, name: *const c_char) -> CUresult;
        cuModuleGetLoadingMode = "cuModuleGetLoadingMode": fn(mode: *mut CUmoduleLoadingMode) -> CUresult;
        // --- functions
        cuFuncGetAttribute = "cuFuncGetAttribute": fn(pi: *mut c_int, attrib: CUfunction_attribute, hfunc: CUfunction) -> CUresult;
        cuFuncSetAttribute = "cuFuncSetAttribute": fn(hfunc: CUfunction, attrib: CUfunction_attribute, value: c_int) -> CUresult;
        cuFuncSetCacheConfig = "cuFuncSetCacheConfig": fn(hfunc: CUfunction, config: CUfunc_cache) -> CUresult;
        cuFuncGetModule = "cuFuncGetModule": fn(hmod: *mut CUmodule, hfunc: CUfunction) -> CUresult;
        // --- launches
        cuLaunchKernel = "cuLaunchKernel": fn(f: CUfunction, gridDimX: c_uint, gridDimY: c_uint, gridDimZ: c_uint, blockDimX: c_uint, blockDimY: c_uint, blockDimZ: c_uint, sharedMemBytes: c_uint, hStream: CUstream, kernelParams: *mut *mut c_void, extra: *mut *mut c_void) -> CUresult;
        cuLaunchCooperativeKernel = "cuLaunchCooperativeKernel": fn(f: CUfunction, gridDimX: c_uint, gridDimY: c_uint, gridDimZ: c_uint, blockDimX: c_uint, blockDimY: c_uint, blockDimZ: c_uint, sharedMemBytes: c_uint, hStream: CUstream, kernelParams: *mut *mut c_void) -> CUresult;
        // --- occupancy
        cuOccupancyMaxActiveBlocksPerMultiprocessor = "cuOccupancyMaxActiveBlocksPerMultiprocessor": fn(numBlocks: *mut c_int, func: CUfunction, blockSize: c_int, dynamicSMemSize: usize) -> CUresult;
        cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags = "cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags": fn(numBlocks: *mut c_int, func: CUfunction, blockSize: c_int, dynamicSMemSize: usize, flags: c_uint) -> CUresult;
        cuOccupancyMaxPotentialBlockSize = "cuOccupancyMaxPotentialBlockSize": fn(minGridSize: *mut c_int, blockSize: *mut c_int, func: CUfunction, blockSizeToDynamicSMemSize: CUoccupancyB2DSize, dynamicSMemSize: usize, blockSizeLimit: c_int) -> CUresult;
        cuOccupancyMaxPotentialBlockSizeWithFlags = "cuOccupancyMaxPotentialBlockSizeWithFlags": fn(minGridSize: *mut c_int, blockSize: *mut c_int, func: CUfunction, blockSizeToDynamicSMemSize: CUoccupancyB2DSize, dynamicSMemSize: usize, blockSizeLimit: c_int, flags: c_uint) -> CUresult;
        cuOccupancyAvailableDynamicSMemPerBlock = "cuOccupancyAvailableDynamicSMemPerBlock": fn(dynamicSmemSize: *mut usize, func: CUfunction, numBlocks: c_int, blockSize: c_int) -> CUresult;
        // --- graphs
        cuGraphCreate = "cuGraphCreate": fn(phGraph: *mut CUgraph, flags: c_uint) -> CUresult;
        cuGraphDestroy = "cuGraphDestroy": fn(hGraph: CUgraph) -> CUresult;
        cuGraphClone = "cuGraphClone": fn(phGraphClone: *mut CUgraph, originalGraph: CUgraph) -> CUresult;
        cuGraphAddKernelNode = "cuGraphAddKernelNode_v2": fn(phGraphNode: *mut CUgraphNode, hGraph: CUgraph, dependencies: *const CUgraphNode, numDependencies: usize, nodeParams: *const CUDA_KERNEL_NODE_PARAMS) -> CUresult;
        cuGraphAddMemcpyNode = "cuGraphAddMemcpyNode": fn(phGraphNode: *mut CUgraphNode, hGraph: CUgraph, dependencies: *const CUgraphNode, numDependencies: usize, copyParams: *const CUDA_MEMCPY3D, ctx: CUcontext) -> CUresult;
        cuGraphAddMemsetNode = "cuGraphAddMemsetNode": fn(phGraphNode: *mut CUgraphNode, hGraph: CUgraph, dependencies: *const CUgraphNode, numDependencies: usize, memsetParams: *const CUDA_MEMSET_NODE_PARAMS, ctx: CUcontext) -> CUresult;
        cuGraphAddHostNode = "cuGraphAddHostNode": fn(phGraphNode: *mut CUgraphNode, hGraph: CUgraph, dependencies: *const CUgraphNode, numDependencies: usize, nodeParams: *const CUDA_HOST_NODE_PARAMS) -> CUresult;
        cuGraphAddChildGraphNode = "cuGraphAddChildGraphNode": fn(phGraphNode: *mut CUgraphNode, hGraph: CUgraph, dependencies: *const CUgraphNode, numDependencies: usize, childGraph: CUgraph) -> CUresult;
        cuGraphAddEmptyNode = "cuGraphAddEmptyNode": fn(phGraphNode: *mut CUgraphNode, hGraph: CUgraph, dependencies: *const CUgraphNode, numDependencies: usize) -> CUresult;
        cuGraphAddEventRecordNode = "cuGraphAddEventRecordNode": fn(phGraphNode: *mut CUgraphNode, hGraph: CUgraph, dependencies: *const CUgraphNode, numDependencies: usize, event: CUevent) -> CUresult;
        cuGraphAddEventWaitNode = "cuGraphAddEventWaitNode": fn(phGraphNode: *mut CUgraphNode, hGraph: CUgraph, dependencies: *const CUgraphNode, numDependencies: usize, event: CUevent) -> CUresult;
        cuGraphKernelNodeGetParams = "cuGraphKernelNodeGetParams_v2": fn(hNode: CUgraphNode, nodeParams: *mut CUDA_KERNEL_NODE_PARAMS) -> CUresult;
        cuGraphKernelNodeSetParams = "cuGraphKernelNodeSetParams_v2": fn(hNode: CUgraphNode, nodeParams: *const CUDA_KERNEL_NODE_PARAMS) -> CUresult;
        cuGraphGetNodes = "cuGraphGetNodes": fn(hGraph: CUgraph, nodes: *mut CUgraphNode, numNodes: *mut usize) -> CUresult;
        cuGraphNodeGetType = "cuGraphNodeGetType": fn(hNode: CUgraphNode, r#type: *mut CUgraphNodeType) -> CUresult;
        cuGraphChildGraphNodeGetGraph = "cuGraphChildGraphNodeGetGraph": fn(hNode: CUgraphNode, phGraph: *mut CUgraph) -> CUresult;
        cuGraphDestroyNode = "cuGraphDestroyNode": fn(hNode: CUgraphNode) -> CUresult;
        cuGraphDebugDotPrint = "cuGraphDebugDotPrint": fn(hGraph: CUgraph, path: *const c_char, flags: c_uint) -> CUresult;
        cuGraphInstantiate = "cuGraphInstantiateWithFlags": fn(phGraphExec: *mut CUgraphExec, hGraph: CUgraph, flags: u64) -> CUresult;
        cuGraphLaunch = "cuGraphLaunch": fn(hGraphExec: CUgraphExec, hStream: CUstream) -> CUresult;
        cuGraphUpload = "cuGraphUpload": fn(hGraphExec: CUgraphExec, hStream: CUstream) -> CUresult;
        cuGraphExecUpdate = "cuGraphExecUpdate_v2": fn(hGraphExec: CUgraphExec, hGraph: CUgraph, resultInfo: *mut CUgraphExecUpdateResultInfo) -> CUresult;
        cuGraphExecKernelNodeSetParams = "cuGraphExecKernelNodeSetParams_v2": fn(hGraphExec: CUgraphExec, hNode: CUgraphNode, nodeParams: *const CUDA_KERNEL_NODE_PARAMS) -> CUresult;
        cuGraphExecDestroy = "cuGraphExecDestroy": fn(hGraphExec: CUgraphExec) -> CUresult;
        cuGraphAddMemAllocNode = "cuGraphAddMemAllocNode": fn(phGraphNode: *mut CUgraphNode, hGraph: CUgraph, dependencies: *const CUgraphNode, numDependencies: usize, nodeParams: *mut CUDA_MEM_ALLOC_NODE_PARAMS) -> CUresult;
        cuGraphAddMemFreeNode = "cuGraphAddMemFreeNode": fn(phGraphNode: *mut CUgraphNode, hGraph: CUgraph, dependencies: *const CUgraphNode, numDependencies: usize, dptr: CUdeviceptr) -> CUresult;
        cuDeviceGraphMemTrim = "cuDeviceGraphMemTrim": fn(device: CUdevice) -> CUresult;
        // --- linker
        cuLinkCreate = "cuLinkCreate_v2": fn(numOptions: c_uint, options: *mut CUjit_option, optionValues: *mut *mut c_void, stateOut: *mut CUlinkState) -> CUresult;
        cuLinkAddData = "cuLinkAddData_v2": fn(state: CUlinkState, r#type: CUjitInputType, data: *mut c_void, size: usize, name: *const c_char, numOptions: c_uint, options: *mut CUjit_option, optionValues: *mut *mut c_void) -> CUresult;
        cuLinkAddFile = "cuLinkAddFile_v2": fn(state: CUlinkState, r#type: CUjitInputType, path: *const c_char, numOptions: c_uint, options: *mut CUjit_option, optionValues: *mut *mut c_void) -> CUresult;
        cuLinkComplete = "cuLinkComplete": fn(state: CUlinkState, cubinOut: *mut *mut c_void, sizeOut: *mut usize) -> CUresult;
        cuLinkDestroy = "cuLinkDestroy": fn(state: CUlinkState) -> CUresult;
        // --- arrays, textures and surfaces
        cuArrayCreate = "cuArrayCreate_v2": fn(pHandle: *mut CUarray, pAllocateArray: *const CUDA_ARRAY_DESCRIPTOR) -> CUresult;
        cuArrayGetDescriptor = "cuArrayGetDescriptor_v2": fn(pArrayDescriptor: *mut CUDA_ARRAY_DESCRIPTOR, hArray: CUarray) -> CUresult;
        cuArray3DCreate = "cuArray3DCreate_v2": fn(pHandle: *mut CUarray, pAllocateArray: *const CUDA_ARRAY3D_DESCRIPTOR) -> CUresult;
        cuArray3DGetDescriptor = "cuArray3DGetDescriptor_v2": fn(pArrayDescriptor: *mut CUDA_ARRAY3D_DESCRIPTOR, hArray: CUarray) -> CUresult;
        cuArrayDestroy = "cuArrayDestroy": fn(hArray: CUarray) -> CUresult;
        cuTexObjectCreate = "cuTexObjectCreate": fn(pTexObject: *mut CUtexObject, pResDesc: *const CUDA_RESOURCE_DESC, pTexDesc: *const CUDA_TEXTURE_DESC, pResViewDesc: *const CUDA_RESOURCE_VIEW_DESC) -> CUresult;
        cuTexObjectDestroy = "cuTexObjectDestroy": fn(texObject: CUtexObject) -> CUresult;
        cuTexObjectGetResourceDesc = "cuTexObjectGetResourceDesc": fn(pResDesc: *mut CUDA_RESOURCE_DESC, texObject: CUtexObject) -> CUresult;
        cuTexObjectGetTextureDesc = "cuTexObjectGetTextureDesc": fn(pTexDesc: *mut CUDA_TEXTURE_DESC, texObject: CUtexObject) -> CUresult;
        cuTexObjectGetResourceViewDesc = "cuTexObjectGetResourceViewDesc": fn(pResViewDesc: *mut CUDA_RESOURCE_VIEW_DESC, texObject: CUtexObject) -> CUresult;
        cuSurfObjectCreate = "cuSurfObjectCreate": fn(pSurfObject: *mut CUsurfObject, pResDesc: *const CUDA_RESOURCE_DESC) -> CUresult;
        cuSurfObjectDestroy = "cuSurfObjectDestroy": fn(surfObject: CUsurfObject) -> CUresult;
        cuSurfObjectGetResourceDesc = "cuSurfObjectGetResourceDesc": fn(pResDesc: *mut CUDA_RESOURCE_DESC, surfObject: CUsurfObject) -> CUresult;
        // --- entry points
        cuGetProcAddress = "cuGetProcAddress_v2": fn(symbol: *const c_char, pfn: *mut *mut c_void, cudaVersion: c_int, flags: u64, symbolStatus: *mut CUdriverProcAddressQueryResult) -> CUresult;
    }
    optional {
        // --- tensor maps (TMA, sm_90+)
        cuTensorMapEncodeTiled = "cuTensorMapEncodeTiled": fn(tensorMap: *mut CUtensorMap, tensorDataType: CUtensorMapDataType, tensorRank: u32, globalAddress: *mut c_void, globalDim: *const u64, globalStrides: *const u64, boxDim: *const u32, elementStrides: *const u32, interleave: CUtensorMapInterleave, swizzle: CUtensorMapSwizzle, l2Promotion: CUtensorMapL2promotion, oobFill: CUtensorMapFloatOOBfill) -> CUresult;
        cuTensorMapReplaceAddress = "cuTensorMapReplaceAddress": fn(tensorMap: *mut CUtensorMap, globalAddress: *mut c_void) -> CUresult;
        // --- contexts
        cuCtxCreate = "cuCtxCreate_v4": fn(pctx: *mut CUcontext, ctxCreateParams: *mut CUctxCreateParams, flags: c_uint, dev: CUdevice) -> CUresult;
        cuCtxSetFlags = "cuCtxSetFlags": fn(flags: c_uint) -> CUresult;
        cuCtxRecordEvent = "cuCtxRecordEvent": fn(hCtx: CUcontext, hEvent: CUevent) -> CUresult;
        cuCtxWaitEvent = "cuCtxWaitEvent": fn(hCtx: CUcontext, hEvent: CUevent) -> CUresult;
        // --- unified memory
        cuMemPrefetchAsync = "cuMemPrefetchAsync_v2": fn(devPtr: CUdeviceptr, count: usize, location: CUmemLocation, flags: c_uint, hStream: CUstream) -> CUresult;
        cuMemAdvise = "cuMemAdvise_v2": fn(devPtr: CUdeviceptr, count: usize, advice: CUmem_advise, location: CUmemLocation) -> CUresult;
        /// Legacy `cuMemPrefetchAsync` (CUDA 8.0, destination as a `CUdevice`): the fallback
        /// for drivers older than 12.2, which lack `cuMemPrefetchAsync_v2`. Declared in
        /// `cuda.h`'s API-versioning block and typed by `PFN_cuMemPrefetchAsync_v8000` in
        /// `cudaTypedefs.h`.
        cuMemPrefetchAsync_v1 = "cuMemPrefetchAsync": fn(devPtr: CUdeviceptr, count: usize, dstDevice: CUdevice, hStream: CUstream) -> CUresult;
        /// Legacy `cuMemAdvise` (CUDA 8.0, device as a `CUdevice`): the fallback for
        /// drivers older than 12.2, which lack `cuMemAdvise_v2`. Declared in `cuda.h`'s
        /// API-versioning block and typed by `PFN_cuMemAdvise_v8000` in `cudaTypedefs.h`.
        cuMemAdvise_v1 = "cuMemAdvise": fn(devPtr: CUdeviceptr, count: usize, advice: CUmem_advise, device: CUdevice) -> CUresult;
        // --- stream capture
        cuStreamGetCaptureInfo = "cuStreamGetCaptureInfo_v3": fn(hStream: CUstream, captureStatus_out: *mut CUstreamCaptureStatus, id_out: *mut u64, graph_out: *mut CUgraph, dependencies_out: *mut *const CUgraphNode, edgeData_out: *mut *const CUgraphEdgeData, numDependencies_out: *mut usize) -> CUresult;
        /// `cuStreamGetCaptureInfo_v2` (CUDA 11.3, no edge data): the fallback for
        /// drivers older than 12.3, which lack `cuStreamGetCaptureInfo_v3`. Declared in
        /// `cuda.h`'s API-versioning block and typed by
        /// `PFN_cuStreamGetCaptureInfo_v11030` in `cudaTypedefs.h`.
        cuStreamGetCaptureInfo_v2 = "cuStreamGetCaptureInfo_v2": fn(hStream: CUstream, captureStatus_out: *mut CUstreamCaptureStatus, id_out: *mut u64, graph_out: *mut CUgraph, dependencies_out: *mut *const CUgraphNode, numDependencies_out: *mut usize) -> CUresult;
        cuStreamBeginCaptureToGraph = "cuStreamBeginCaptureToGraph": fn(hStream: CUstream, hGraph: CUgraph, dependencies: *const CUgraphNode, dependencyData: *const CUgraphEdgeData, numDependencies: usize, mode: CUstreamCaptureMode) -> CUresult;
        // --- events
        cuEventElapsedTime = "cuEventElapsedTime_v2": fn(pMilliseconds: *mut f32, hStart: CUevent, hEnd: CUevent) -> CUresult;
        /// Legacy `cuEventElapsedTime` (CUDA 2.0, same signature): the fallback for
        /// drivers older than 12.8, which lack `cuEventElapsedTime_v2`. Declared in
        /// `cuda.h`'s API-versioning block and typed by `PFN_cuEventElapsedTime_v2000`
        /// in `cudaTypedefs.h`.
        cuEventElapsedTime_v1 = "cuEventElapsedTime": fn(pMilliseconds: *mut f32, hStart: CUevent, hEnd: CUevent) -> CUresult;
        // --- modules
        cuModuleGetFunctionCount = "cuModuleGetFunctionCount": fn(count: *mut c_uint, r#mod: CUmodule) -> CUresult;
        cuModuleEnumerateFunctions = "cuModuleEnumerateFunctions": fn(functions: *mut CUfunction, numFunctions: c_uint, r#mod: CUmodule) -> CUresult;
        // --- libraries and kernels
        cuLibraryLoadData = "cuLibraryLoadData": fn(library: *mut CUlibrary, code: *const c_void, jitOptions: *mut CUjit_option, jitOptionsValues: *mut *mut c_void, numJitOptions: c_uint, libraryOptions: *mut CUlibraryOption, libraryOptionValues: *mut *mut c_void, numLibraryOptions: c_uint) -> CUresult;
        cuLibraryLoadFromFile = "cuLibraryLoadFromFile": fn(library: *mut CUlibrary, fileName: *const c_char, jitOptions: *mut CUjit_option, jitOptionsValues: *mut *mut c_void, numJitOptions: c_uint, libraryOptions: *mut CUlibraryOption, libraryOptionValues: *mut *mut c_void, numLibraryOptions: c_uint) -> CUresult;
        cuLibraryUnload = "cuLibraryUnload": fn(library: CUlibrary) -> CUresult;
        cuLibraryGetKernel = "cuLibraryGetKernel": fn(pKernel: *mut CUkernel, library: CUlibrary, name: *const c_char) -> CUresult;
        cuLibraryGetKernelCount = "cuLibraryGetKernelCount": fn(count: *mut c_uint, lib: CUlibrary) -> CUresult;
        cuLibraryEnumerateKernels = "cuLibraryEnumerateKernels": fn(kernels: *mut CUkernel, numKernels: c_uint, lib: CUlibrary) -> CUresult;
        cuLibraryGetModule = "cuLibraryGetModule": fn(pMod: *mut CUmodule, library: CUlibrary) -> CUresult;
        cuLibraryGetGlobal = "cuLibraryGetGlobal": fn(dptr: *mut CUdeviceptr, bytes: *mut usize, library: CUlibrary, name: *const c_char) -> CUresult;
        cuLibraryGetManaged = "cuLibraryGetManaged": fn(dptr: *mut CUdeviceptr, bytes: *mut usize, library: CUlibrary, name: *const c_char) -> CUresult;
        cuKernelGetFunction = "cuKernelGetFunction": fn(pFunc: *mut CUfunction, kernel: CUkernel) -> CUresult;
        cuKernelGetAttribute = "cuKernelGetAttribute": fn(pi: *mut c_int, attrib: CUfunction_attribute, kernel: CUkernel, dev: CUdevice) -> CUresult;
        cuKernelSetAttribute = "cuKernelSetAttribute": fn(attrib: CUfunction_attribute, val: c_int, kernel: CUkernel, dev: CUdevice) -> CUresult;
        cuKernelGetName = "cuKernelGetName": fn(name: *mut *const c_char, hfunc: CUkernel) -> CUresult;
        cuKernelGetParamInfo = "cuKernelGetParamInfo": fn(kernel: CUkernel, paramIndex: usize, paramOffset: *mut usize, paramSize: *mut usize) -> CUresult;
        // --- functions
        /// Deprecated in `cuda.h`; optional so that a driver which drops it still loads.
        cuFuncSetSharedMemConfig = "cuFuncSetSharedMemConfig": fn(hfunc: CUfunction, config: CUsharedconfig) -> CUresult;
        cuFuncGetName = "cuFuncGetName": fn(name: *mut *const c_char, hfunc: CUfunction) -> CUresult;
        cuFuncGetParamInfo = "cuFuncGetParamInfo": fn(func: CUfunction, paramIndex: usize, paramOffset: *mut usize, paramSize: *mut usize) -> CUresult;
        cuFuncIsLoaded = "cuFuncIsLoaded": fn(state: *mut CUfunctionLoadingState, function: CUfunction) -> CUresult;
        cuFuncLoad = "cuFuncLoad": fn(function: CUfunction) -> CUresult;
        // --- launches
        cuLaunchKernelEx = "cuLaunchKernelEx": fn(config: *const CUlaunchConfig, f: CUfunction, kernelParams: *mut *mut c_void, extra: *mut *mut c_void) -> CUresult;
        /// Deprecated in `cuda.h`; optional so that a driver which drops it still loads.
        cuLaunchCooperativeKernelMultiDevice = "cuLaunchCooperativeKernelMultiDevice": fn(launchParamsList: *mut CUDA_LAUNCH_PARAMS, numDevices: c_uint, flags: c_uint) -> CUresult;
        // --- stream attributes (L2 access-policy windows)
        cuStreamGetAttribute = "cuStreamGetAttribute": fn(hStream: CUstream, attr: CUstreamAttrID, value_out: *mut CUstreamAttrValue) -> CUresult;
        cuStreamSetAttribute = "cuStreamSetAttribute": fn(hStream: CUstream, attr: CUstreamAttrID, value: *const CUstreamAttrValue) -> CUresult;
        // --- graph edges with data (programmatic dependencies, CUDA 12.3)
        cuGraphAddDependencies = "cuGraphAddDependencies_v2": fn(hGraph: CUgraph, from: *const CUgraphNode, to: *const CUgraphNode, edgeData: *const CUgraphEdgeData, numDependencies: usize) -> CUresult;
        // --- generic node creation and conditional nodes (CUDA 12.3)
        cuGraphAddNode = "cuGraphAddNode_v2": fn(phGraphNode: *mut CUgraphNode, hGraph: CUgraph, dependencies: *const CUgraphNode, dependencyData: *const CUgraphEdgeData, numDependencies: usize, nodeParams: *mut CUgraphNodeParams) -> CUresult;
        cuGraphConditionalHandleCreate = "cuGraphConditionalHandleCreate": fn(pHandle_out: *mut CUgraphConditionalHandle, hGraph: CUgraph, ctx: CUcontext, defaultLaunchValue: c_uint, flags: c_uint) -> CUresult;
        // --- batched copies
        cuMemcpyBatchAsync = "cuMemcpyBatchAsync_v2": fn(dsts: *mut CUdeviceptr, srcs: *mut CUdeviceptr, sizes: *mut usize, count: usize, attrs: *mut CUmemcpyAttributes, attrsIdxs: *mut usize, numAttrs: usize, hStream: CUstream) -> CUresult;
        /// Legacy `cuMemcpyBatchAsync` (CUDA 12.8, with `failIdx`): the fallback for
        /// drivers older than 13.0, which lack `cuMemcpyBatchAsync_v2`. Declared in
        /// `cuda.h`'s API-versioning block.
        cuMemcpyBatchAsync_v1 = "cuMemcpyBatchAsync": fn(dsts: *mut CUdeviceptr, srcs: *mut CUdeviceptr, sizes: *mut usize, count: usize, attrs: *mut CUmemcpyAttributes, attrsIdxs: *mut usize, numAttrs: usize, failIdx: *mut usize, hStream: CUstream) -> CUresult;
        // --- green contexts (CUDA 12.4; cuGreenCtxStreamCreate 12.5, cuGreenCtxGetId 12.9)
        cuDeviceGetDevResource = "cuDeviceGetDevResource": fn(device: CUdevice, resource: *mut CUdevResource, r#type: CUdevResourceType) -> CUresult;
        cuCtxGetDevResource = "cuCtxGetDevResource": fn(hCtx: CUcontext, resource: *mut CUdevResource, r#type: CUdevResourceType) -> CUresult;
        cuGreenCtxGetDevResource = "cuGreenCtxGetDevResource": fn(hCtx: CUgreenCtx, resource: *mut CUdevResource, r#type: CUdevResourceType) -> CUresult;
        cuDevSmResourceSplitByCount = "cuDevSmResourceSplitByCount": fn(result: *mut CUdevResource, nbGroups: *mut c_uint, input: *const CUdevResource, remaining: *mut CUdevResource, useFlags: c_uint, minCount: c_uint) -> CUresult;
        cuDevResourceGenerateDesc = "cuDevResourceGenerateDesc": fn(phDesc: *mut CUdevResourceDesc, resources: *mut CUdevResource, nbResources: c_uint) -> CUresult;
        cuGreenCtxCreate = "cuGreenCtxCreate": fn(phCtx: *mut CUgreenCtx, desc: CUdevResourceDesc, dev: CUdevice, flags: c_uint) -> CUresult;
        cuGreenCtxDestroy = "cuGreenCtxDestroy": fn(hCtx: CUgreenCtx) -> CUresult;
        cuCtxFromGreenCtx = "cuCtxFromGreenCtx": fn(pContext: *mut CUcontext, hCtx: CUgreenCtx) -> CUresult;
        cuGreenCtxRecordEvent = "cuGreenCtxRecordEvent": fn(hCtx: CUgreenCtx, hEvent: CUevent) -> CUresult;
        cuGreenCtxWaitEvent = "cuGreenCtxWaitEvent": fn(hCtx: CUgreenCtx, hEvent: CUevent) -> CUresult;
        cuStreamGetGreenCtx = "cuStreamGetGreenCtx": fn(hStream: CUstream, phCtx: *mut CUgreenCtx) -> CUresult;
        cuGreenCtxStreamCreate = "cuGreenCtxStreamCreate": fn(phStream: *mut CUstream, greenCtx: CUgreenCtx, flags: c_uint, priority: c_int) -> CUresult;
        cuGreenCtxGetId = "cuGreenCtxGetId": fn(greenCtx: CUgreenCtx, greenCtxId: *mut u64) -> CUresult;
        // --- occupancy
        cuOccupancyMaxPotentialClusterSize = "cuOccupancyMaxPotentialClusterSize": fn(clusterSize: *mut c_int, func: CUfunction, config: *const CUlaunchConfig) -> CUresult;
        cuOccupancyMaxActiveClusters = "cuOccupancyMaxActiveClusters": fn(numClusters: *mut c_int, func: CUfunction, config: *const CUlaunchConfig) -> CUresult;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::Driver;

    /// Every `#define api symbol` of `cuda.h`'s versioning block (the default,
    /// not per-thread, branch) whose symbol differs from the API name, copied
    /// from the CUDA 13.0 header.
    const HEADER_DEFINES: &[(&str, &str)] = &[
        ("cuDeviceTotalMem", "cuDeviceTotalMem_v2"),
        ("cuCtxCreate", "cuCtxCreate_v4"),
        ("cuModuleGetGlobal", "cuModuleGetGlobal_v2"),
        ("cuMemGetInfo", "cuMemGetInfo_v2"),
        ("cuMemAlloc", "cuMemAlloc_v2"),
        ("cuMemAllocPitch", "cuMemAllocPitch_v2"),
        ("cuMemFree", "cuMemFree_v2"),
        ("cuMemGetAddressRange", "cuMemGetAddressRange_v2"),
        ("cuMemAllocHost", "cuMemAllocHost_v2"),
        ("cuMemHostGetDevicePointer", "cuMemHostGetDevicePointer_v2"),
        ("cuMemAdvise", "cuMemAdvise_v2"),
        ("cuMemPrefetchAsync", "cuMemPrefetchAsync_v2"),
        ("cuMemcpyHtoD", "cuMemcpyHtoD_v2"),
        ("cuMemcpyDtoH", "cuMemcpyDtoH_v2"),
        ("cuMemcpyDtoD", "cuMemcpyDtoD_v2"),
        ("cuMemcpyDtoA", "cuMemcpyDtoA_v2"),
        ("cuMemcpyAtoD", "cuMemcpyAtoD_v2"),
        ("cuMemcpyHtoA", "cuMemcpyHtoA_v2"),
        ("cuMemcpyAtoH", "cuMemcpyAtoH_v2"),
        ("cuMemcpyAtoA", "cuMemcpyAtoA_v2"),
        ("cuMemcpyHtoAAsync", "cuMemcpyHtoAAsync_v2"),
        ("cuMemcpyAtoHAsync", "cuMemcpyAtoHAsync_v2"),
        ("cuMemcpy2D", "cuMemcpy2D_v2"),
        ("cuMemcpy2DUnaligned", "cuMemcpy2DUnaligned_v2"),
        ("cuMemcpy3D", "cuMemcpy3D_v2"),
        ("cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2"),
        ("cuMemcpyDtoHAsync", "cuMemcpyDtoHAsync_v2"),
        ("cuMemcpyDtoDAsync", "cuMemcpyDtoDAsync_v2"),
        ("cuMemcpy2DAsync", "cuMemcpy2DAsync_v2"),
        ("cuMemcpy3DAsync", "cuMemcpy3DAsync_v2"),
        ("cuMemcpyBatchAsync", "cuMemcpyBatchAsync_v2"),
        ("cuMemcpy3DBatchAsync", "cuMemcpy3DBatchAsync_v2"),
        ("cuMemsetD8", "cuMemsetD8_v2"),
        ("cuMemsetD16", "cuMemsetD16_v2"),
        ("cuMemsetD32", "cuMemsetD32_v2"),
        ("cuMemsetD2D8", "cuMemsetD2D8_v2"),
        ("cuMemsetD2D16", "cuMemsetD2D16_v2"),
        ("cuMemsetD2D32", "cuMemsetD2D32_v2"),
        ("cuArrayCreate", "cuArrayCreate_v2"),
        ("cuArrayGetDescriptor", "cuArrayGetDescriptor_v2"),
        ("cuArray3DCreate", "cuArray3DCreate_v2"),
        ("cuArray3DGetDescriptor", "cuArray3DGetDescriptor_v2"),
        ("cuTexRefSetAddress", "cuTexRefSetAddress_v2"),
        ("cuTexRefGetAddress", "cuTexRefGetAddress_v2"),
        (
            "cuGraphicsResourceGetMappedPointer",
            "cuGraphicsResourceGetMappedPointer_v2",
        ),
        ("cuCtxDestroy", "cuCtxDestroy_v2"),
        ("cuCtxPopCurrent", "cuCtxPopCurrent_v2"),
        ("cuCtxPushCurrent", "cuCtxPushCurrent_v2"),
        ("cuStreamDestroy", "cuStreamDestroy_v2"),
        ("cuEventDestroy", "cuEventDestroy_v2"),
        ("cuTexRefSetAddress2D", "cuTexRefSetAddress2D_v3"),
        ("cuLinkCreate", "cuLinkCreate_v2"),
        ("cuLinkAddData", "cuLinkAddData_v2"),
        ("cuLinkAddFile", "cuLinkAddFile_v2"),
        ("cuMemHostRegister", "cuMemHostRegister_v2"),
        (
            "cuGraphicsResourceSetMapFlags",
            "cuGraphicsResourceSetMapFlags_v2",
        ),
        ("cuStreamBeginCapture", "cuStreamBeginCapture_v2"),
        ("cuDevicePrimaryCtxRelease", "cuDevicePrimaryCtxRelease_v2"),
        ("cuDevicePrimaryCtxReset", "cuDevicePrimaryCtxReset_v2"),
        (
            "cuDevicePrimaryCtxSetFlags",
            "cuDevicePrimaryCtxSetFlags_v2",
        ),
        ("cuDeviceGetUuid", "cuDeviceGetUuid_v2"),
        ("cuIpcOpenMemHandle", "cuIpcOpenMemHandle_v2"),
        ("cuGraphInstantiate", "cuGraphInstantiateWithFlags"),
        ("cuGraphExecUpdate", "cuGraphExecUpdate_v2"),
        ("cuGetProcAddress", "cuGetProcAddress_v2"),
        ("cuGraphAddKernelNode", "cuGraphAddKernelNode_v2"),
        (
            "cuGraphKernelNodeGetParams",
            "cuGraphKernelNodeGetParams_v2",
        ),
        (
            "cuGraphKernelNodeSetParams",
            "cuGraphKernelNodeSetParams_v2",
        ),
        (
            "cuGraphExecKernelNodeSetParams",
            "cuGraphExecKernelNodeSetParams_v2",
        ),
        ("cuGraphGetEdges", "cuGraphGetEdges_v2"),
        (
            "cuGraphNodeGetDependencies",
            "cuGraphNodeGetDependencies_v2",
        ),
        (
            "cuGraphNodeGetDependentNodes",
            "cuGraphNodeGetDependentNodes_v2",
        ),
        ("cuGraphAddDependencies", "cuGraphAddDependencies_v2"),
        ("cuGraphRemoveDependencies", "cuGraphRemoveDependencies_v2"),
        ("cuGraphAddNode", "cuGraphAddNode_v2"),
        ("cuEventElapsedTime", "cuEventElapsedTime_v2"),
        ("cuStreamWriteValue32", "cuStreamWriteValue32_v2"),
        ("cuStreamWaitValue32", "cuStreamWaitValue32_v2"),
        ("cuStreamWriteValue64", "cuStreamWriteValue64_v2"),
        ("cuStreamWaitValue64", "cuStreamWaitValue64_v2"),
        ("cuStreamBatchMemOp", "cuStreamBatchMemOp_v2"),
        ("cuStreamGetCaptureInfo", "cuStreamGetCaptureInfo_v3"),
        (
            "cuStreamUpdateCaptureDependencies",
            "cuStreamUpdateCaptureDependencies_v2",
        ),
    ];

    /// Unversioned legacy symbols bound on purpose, as optional fallbacks with
    /// their own (older) signatures, for drivers that lack the newer symbol.
    const LEGACY_FALLBACKS: &[&str] = &[
        "cuMemPrefetchAsync",
        "cuMemAdvise",
        "cuEventElapsedTime",
        "cuMemcpyBatchAsync",
    ];

    fn required() -> HashSet<&'static str> {
        Driver::REQUIRED_SYMBOLS.iter().copied().collect()
    }

    fn optional() -> HashSet<&'static str> {
        Driver::OPTIONAL_SYMBOLS.iter().copied().collect()
    }

    #[test]
    fn no_duplicate_symbols() {
        let mut seen = HashSet::new();
        for symbol in Driver::REQUIRED_SYMBOLS
            .iter()
            .chain(Driver::OPTIONAL_SYMBOLS)
        {
            assert!(seen.insert(*symbol), "{symbol} is bound twice");
        }
    }

    #[test]
    fn known_required_mappings() {
        let required = required();
        for symbol in [
            "cuInit",
            "cuMemAlloc_v2",
            "cuMemFree_v2",
            "cuMemcpyHtoD_v2",
            "cuMemcpyDtoH_v2",
            "cuCtxDestroy_v2",
            "cuStreamDestroy_v2",
            "cuEventDestroy_v2",
            "cuModuleGetGlobal_v2",
            "cuDeviceGetUuid_v2",
            "cuDevicePrimaryCtxRelease_v2",
            "cuStreamBeginCapture_v2",
            "cuGraphInstantiateWithFlags",
            "cuGraphAddKernelNode_v2",
            "cuGraphExecUpdate_v2",
            "cuGetProcAddress_v2",
            "cuLaunchKernel",
            "cuMemAllocAsync",
            "cuMemFreeAsync",
            "cuMemAddressReserve",
            "cuMemAddressFree",
            "cuMemCreate",
            "cuMemRelease",
            "cuMemMap",
            "cuMemUnmap",
            "cuMemSetAccess",
            "cuMemGetAllocationGranularity",
            "cuIpcGetMemHandle",
            "cuIpcOpenMemHandle_v2",
            "cuIpcCloseMemHandle",
            "cuIpcGetEventHandle",
            "cuIpcOpenEventHandle",
            "cuMemExportToShareableHandle",
            "cuMemImportFromShareableHandle",
            "cuMemPoolExportToShareableHandle",
            "cuMemPoolImportFromShareableHandle",
            "cuMemPoolExportPointer",
            "cuMemPoolImportPointer",
        ] {
            assert!(required.contains(symbol), "{symbol} should be required");
        }
    }

    #[test]
    fn known_optional_mappings() {
        let optional = optional();
        for symbol in [
            "cuFuncGetParamInfo",
            "cuLaunchKernelEx",
            "cuStreamGetCaptureInfo_v3",
            "cuStreamGetCaptureInfo_v2",
            "cuMemPrefetchAsync_v2",
            "cuMemAdvise_v2",
            "cuEventElapsedTime_v2",
            "cuCtxCreate_v4",
            "cuStreamBeginCaptureToGraph",
            "cuFuncGetName",
            "cuCtxRecordEvent",
            "cuLibraryLoadData",
            "cuKernelGetFunction",
            "cuGraphAddNode_v2",
            "cuGraphConditionalHandleCreate",
            "cuGreenCtxCreate",
            "cuGreenCtxDestroy",
            "cuCtxFromGreenCtx",
            "cuDeviceGetDevResource",
            "cuDevSmResourceSplitByCount",
            "cuDevResourceGenerateDesc",
            "cuGreenCtxStreamCreate",
        ] {
            assert!(optional.contains(symbol), "{symbol} should be optional");
        }
    }

    #[test]
    fn library_and_kernel_api_is_optional() {
        for symbol in Driver::REQUIRED_SYMBOLS {
            assert!(
                !symbol.starts_with("cuLibrary") && !symbol.starts_with("cuKernel"),
                "{symbol} should be optional"
            );
        }
    }

    #[test]
    fn no_unversioned_name_where_the_header_maps_to_a_versioned_symbol() {
        let required = required();
        let optional = optional();
        for (api, symbol) in HEADER_DEFINES {
            assert_ne!(api, symbol);
            assert!(
                !required.contains(api),
                "required {api} should be bound as {symbol}"
            );
            if LEGACY_FALLBACKS.contains(api) {
                assert!(
                    optional.contains(symbol),
                    "legacy fallback {api} bound without {symbol}"
                );
            } else {
                assert!(
                    !optional.contains(api),
                    "optional {api} should be bound as {symbol}"
                );
            }
        }
    }

    #[test]
    fn legacy_fallbacks_are_optional() {
        let required = required();
        let optional = optional();
        for api in LEGACY_FALLBACKS {
            assert!(!required.contains(api), "{api} must not be required");
            assert!(optional.contains(api), "{api} fallback missing");
        }
    }

    #[test]
    fn no_per_thread_default_stream_variants() {
        for symbol in Driver::REQUIRED_SYMBOLS
            .iter()
            .chain(Driver::OPTIONAL_SYMBOLS)
        {
            assert!(
                !symbol.ends_with("_ptds") && !symbol.ends_with("_ptsz"),
                "{symbol} is a per-thread default stream variant"
            );
        }
    }
}
