// cudakit test kernels for conditional graph nodes (issue 21): a kernel
// sets the condition of an if, if/else, while or switch node with the
// device runtime's
//
//   void cudaGraphSetConditional(cudaGraphConditionalHandle handle,
//                                unsigned int value);
//
// cudaGraphConditionalHandle is an unsigned long long: cudakit's
// `&Condition` kernel argument. NVRTC declares cudaGraphSetConditional
// only in relocatable device code, as an external function that
// libcudadevrt.a provides: compile this file with -rdc=true
// (`Program::relocatable_device_code(true)`) and link it with the device
// runtime (`Linker::with_device_runtime`). Self-contained otherwise (no
// #include). The handle must belong to the graph the kernel node is in, or
// to a graph whose conditional body holds it; only one thread sets it (a
// race between setters is undefined). See kernels/README.md.

// Sets the condition to *value (one thread).
extern "C" __global__ void cond_set(unsigned long long handle, const unsigned* value) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        cudaGraphSetConditional(handle, *value);
    }
}

// One Jacobi sweep of the tridiagonal system 4 x[i] - x[i-1] - x[i+1] = b[i]
// (x[-1] = x[n] = 0): y[i] = ((b[i] + x[i-1]) + x[i+1]) * 0.25, and the
// largest |y[i] - x[i]| into *resid_bits as its bits (a non-negative
// float orders like its bits, so atomicMax is exact and order-free). No
// multiply feeds an add, so no FMA contraction: the CPU gets the same bits.
extern "C" __global__ void jacobi_sweep(const float* x, float* y, const float* b, int n,
                                        unsigned* resid_bits) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float left = i > 0 ? x[i - 1] : 0.0f;
        float right = i + 1 < n ? x[i + 1] : 0.0f;
        float v = __fmul_rn(__fadd_rn(__fadd_rn(b[i], left), right), 0.25f);
        y[i] = v;
        atomicMax(resid_bits, __float_as_uint(fabsf(__fsub_rn(v, x[i]))));
    }
}

// After a sweep (one thread): counts the iteration, keeps the residual in
// *last, clears *resid_bits for the next sweep, and keeps the while loop
// going (condition 1) while residual >= tol and fewer than max_iters
// iterations have run, else ends it (0).
extern "C" __global__ void jacobi_decide(unsigned long long handle, unsigned* resid_bits,
                                         float* last, unsigned* iters, float tol,
                                         unsigned max_iters) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned it = *iters + 1;
        *iters = it;
        float r = __uint_as_float(*resid_bits);
        *last = r;
        *resid_bits = 0u;
        cudaGraphSetConditional(handle, (r >= tol && it < max_iters) ? 1u : 0u);
    }
}

// out[i] = in[i] * a + b, rounded twice (no FMA): a body's work.
extern "C" __global__ void cond_axpb(const float* in, float* out, int n, float a, float b) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = __fadd_rn(__fmul_rn(in[i], a), b);
    }
}

// A while loop's counter as its only body (one thread): *count += 1, and
// the condition stays 1 until *count reaches limit. For the benchmark of a
// while graph against host-side replays of its body.
extern "C" __global__ void cond_count(unsigned long long handle, unsigned* count,
                                      unsigned limit) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned c = *count + 1;
        *count = c;
        if (handle != 0ull) {
            cudaGraphSetConditional(handle, c < limit ? 1u : 0u);
        }
    }
}
