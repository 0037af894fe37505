// cudakit test kernels: vector operations (axpy) and sum reductions.
//
// Self-contained (no #include), compiled with NVRTC for sm_90. Every kernel
// uses a grid-stride loop, so any grid size is correct; the reductions need
// blockDim.x to be a multiple of 32 (at most 1024) because they reduce with
// full-warp shuffles. See kernels/README.md.

// ---------------------------------------------------------------------------
// axpy: y[i] = a * x[i] + y[i] for i < n, one fused multiply-add each.
// ---------------------------------------------------------------------------

template <typename T>
__device__ __forceinline__ void axpy_body(int n, T a, const T* __restrict__ x,
                                          T* __restrict__ y) {
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a * x[i] + y[i];
    }
}

// Any 1-D geometry (e.g. block 256, grid ceil(n/256)).
extern "C" __global__ void saxpy(int n, float a, const float* __restrict__ x,
                                 float* __restrict__ y) {
    axpy_body<float>(n, a, x, y);
}

// Any 1-D geometry.
extern "C" __global__ void daxpy(int n, double a, const double* __restrict__ x,
                                 double* __restrict__ y) {
    axpy_body<double>(n, a, x, y);
}

// ---------------------------------------------------------------------------
// Sum reductions.
//
// Two-pass and deterministic: reduce_sum_f32_partials writes one f64 partial
// per block; reduce_sum_f64 (one block) adds the partials. Each f32 input is
// converted exactly to f64 and all additions are in f64, in an order fixed by
// the launch geometry, so the same input and geometry give the same bits.
// Error bound against the exact sum: |err| <= (n - 1) * eps_f64 * sum|x_i|
// (plus O(eps^2)), i.e. ~1e-16 relative to sum|x_i| for any n below 1e9 -
// far below what f32 inputs can resolve.
//
// One-pass atomic: reduce_sum_f32_atomic adds each block's f32 sum into *out
// with atomicAdd; the order of those additions varies from run to run, so
// the result is not bitwise reproducible. Any summation order obeys
// |err| <= (n - 1) * eps_f32 * sum|x_i| (plus O(eps^2)).
// ---------------------------------------------------------------------------

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
        v += __shfl_down_sync(0xffffffffu, v, offset);
    }
    return v;
}

// The block's sum, valid in thread 0. blockDim.x must be a multiple of 32.
template <typename T>
__device__ __forceinline__ T block_sum(T v) {
    __shared__ T warp_sums[32];
    const int lane = threadIdx.x & 31;
    const int warp = threadIdx.x >> 5;
    v = warp_sum<T>(v);
    if (lane == 0) {
        warp_sums[warp] = v;
    }
    __syncthreads();
    if (warp == 0) {
        const int warps = blockDim.x >> 5;
        v = (lane < warps) ? warp_sums[lane] : T(0);
        v = warp_sum<T>(v);
    }
    return v;
}

// partials[blockIdx.x] = sum of this block's grid-stride share of x[0..n).
// Block: multiple of 32 threads (256 suggested); grid: any (e.g. 1024 or
// ceil(n/256) capped); partials has gridDim.x elements.
extern "C" __global__ void reduce_sum_f32_partials(const float* __restrict__ x, long long n,
                                                   double* __restrict__ partials) {
    double acc = 0.0;
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        acc += (double)x[i];
    }
    acc = block_sum<double>(acc);
    if (threadIdx.x == 0) {
        partials[blockIdx.x] = acc;
    }
}

// out[0] = sum of x[0..n). Launch exactly one block (multiple of 32 threads,
// 1024 suggested); for the second pass, x = the partials and n = their count.
extern "C" __global__ void reduce_sum_f64(const double* __restrict__ x, long long n,
                                          double* __restrict__ out) {
    double acc = 0.0;
    for (long long i = threadIdx.x; i < n; i += blockDim.x) {
        acc += x[i];
    }
    acc = block_sum<double>(acc);
    if (threadIdx.x == 0) {
        out[0] = acc;
    }
}

// *out += sum of x[0..n) in f32, one atomicAdd per block. *out must be set
// (to 0) before the launch. Block: multiple of 32 threads; grid: any.
extern "C" __global__ void reduce_sum_f32_atomic(const float* __restrict__ x, long long n,
                                                 float* __restrict__ out) {
    float acc = 0.0f;
    const long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        acc += x[i];
    }
    acc = block_sum<float>(acc);
    if (threadIdx.x == 0) {
        atomicAdd(out, acc);
    }
}
