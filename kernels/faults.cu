// cudakit test kernels: deliberately faulty kernels for the error tests.
//
// Every fault here is sticky: the context that ran it is unusable afterwards,
// so each test that launches one runs in a child process. Only thread 0 of
// block 0 faults (launch them with one thread; more are harmless). Stores go
// through volatile pointers so the compiler cannot drop or merge them.
//
// Self-contained (no #include), compiled with NVRTC for sm_90. `assert` is
// NVRTC's built-in device assert; fault_assert must be compiled WITHOUT
// -DNDEBUG (with it, assert expands to nothing and the kernel succeeds).
//
// Codes measured on an H200 (driver 580, CUDA 13.0), each in a fresh
// process, reported by the cuCtxSynchronize after the launch (the launch
// itself returned CUDA_SUCCESS) and by every later call in that context:
//   fault_oob_write, offset 2^26 .. 2^44 floats past a 1 MiB buffer
//                                           700, and once 717 (same offset)
//   fault_oob_write, offset 16 floats past a 1 MiB buffer       no fault
//   fault_write_generic / _global at 0x10, 2^41 .. 2^63, ~0     700
//   fault_write_generic / _global at 2^40 (1 TiB)                no fault:
//       that address was mapped in the test process. Never use it; a store
//       there may corrupt something the driver owns.
//   fault_null_write                                             700
//   fault_misaligned_read                                        716
//   fault_trap                                                   719
//   fault_assert(1)                                              710
//   fault_assert(0)                                              success
// An illegal address is reported as 700 (CUDA_ERROR_ILLEGAL_ADDRESS) or 717
// (CUDA_ERROR_INVALID_ADDRESS_SPACE): the same kernel with the same offset
// gave 700 in two processes and 717 in a third, and DESIGN.md reports 717
// for a far write. Tests of address faults must accept both and pin the
// sticky flag, not the number.
// See kernels/README.md.

// p[offset] = value (offset in floats, may be negative), through a pointer
// derived from a device allocation (a global-space store). With `offset`
// well past the allocation's end (e.g. 64 Mi floats = 256 MiB, far beyond
// the allocation granularity, but still a plausible heap address) this is an
// out-of-bounds write: 700 or 717 (see above). A small offset just
// past the end lands in mapped padding and does not fault at all;
// compute-sanitizer catches those.
extern "C" __global__ void fault_oob_write(float* p, long long offset, float value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        volatile float* q = p + offset;
        *q = value;
    }
}

// *(float*)address = value as a generic store (PTX st.f32, no state space:
// the hardware resolves the space from the address). Written in PTX because
// NVVM turns a plain C++ store through an integer-derived pointer into a
// global-space store. An unmapped address (e.g. 1 << 47) gives 700 (or
// 717); see the table above for an address that is mapped.
extern "C" __global__ void fault_write_generic(unsigned long long address, float value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        asm volatile("st.volatile.f32 [%0], %1;" ::"l"(address), "f"(value) : "memory");
    }
}

// The same store as a global-space store (PTX st.global.f32), for comparing
// the error code with fault_write_generic at the same address.
extern "C" __global__ void fault_write_global(unsigned long long address, float value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        asm volatile("st.volatile.global.f32 [%0], %1;" ::"l"(address), "f"(value) : "memory");
    }
}

// A store to the null pointer (generic): 700 on an H200.
extern "C" __global__ void fault_null_write(float value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        volatile float* q = nullptr;
        *q = value;
    }
}

// out[0] = the int at byte address (char*)p + 1: a 4-byte load from an
// address that is not 4-byte aligned. Expected CUDA_ERROR_MISALIGNED_ADDRESS
// (716). `p` must point to at least 8 readable bytes.
extern "C" __global__ void fault_misaligned_read(const int* p, int* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        const char* c = reinterpret_cast<const char*>(p) + 1;
        out[0] = *reinterpret_cast<const volatile int*>(c);
    }
}

// __trap(): expected CUDA_ERROR_LAUNCH_FAILED (719). No parameters (also
// exercises a launch with an empty parameter list).
extern "C" __global__ void fault_trap() {
    __trap();
}

// assert(value == 0) in every thread: with value != 0 the device assert
// fires (message on the process's stdout), expected CUDA_ERROR_ASSERT (710);
// with value == 0 the kernel succeeds (the control case).
extern "C" __global__ void fault_assert(int value) {
    assert(value == 0);
}
