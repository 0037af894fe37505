// cudakit FP8 conversions on the device (sm_89 and later), to check the CPU
// conversions of cudakit::F8E4M3 / cudakit::F8E5M2 bit for bit.
//
// Self-contained: no #include. FP8 values travel as raw bytes (`unsigned
// char`). f32 -> fp8 is PTX `cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32`: round to
// nearest even, finite values beyond the largest saturate to it, NaN gives
// a NaN. fp8 -> f32 is `cvt.rn.f16x2.{e4m3x2,e5m2x2}` (exact: every FP8
// value is an f16 value) followed by `cvt.f32.f16` (exact). The conversion
// packs two values; both halves get the same input here, so the byte (or
// half) taken does not depend on which half holds which.
//
// Every kernel: one thread per element, any 1-D block and grid covering n
// (grid-stride).

__device__ __forceinline__ unsigned char f32_to_e4m3_one(float x) {
    unsigned short pair;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %1;" : "=h"(pair) : "f"(x));
    return (unsigned char)(pair & 0xff);
}

__device__ __forceinline__ unsigned char f32_to_e5m2_one(float x) {
    unsigned short pair;
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %1;" : "=h"(pair) : "f"(x));
    return (unsigned char)(pair & 0xff);
}

__device__ __forceinline__ float e4m3_to_f32_one(unsigned char v) {
    const unsigned short pair = (unsigned short)(v | (v << 8));
    float y;
    asm("{\n.reg .b16 lo, hi;\n.reg .b32 h2;\n"
        "cvt.rn.f16x2.e4m3x2 h2, %1;\n"
        "mov.b32 {lo, hi}, h2;\n"
        "cvt.f32.f16 %0, lo;\n}"
        : "=f"(y)
        : "h"(pair));
    return y;
}

__device__ __forceinline__ float e5m2_to_f32_one(unsigned char v) {
    const unsigned short pair = (unsigned short)(v | (v << 8));
    float y;
    asm("{\n.reg .b16 lo, hi;\n.reg .b32 h2;\n"
        "cvt.rn.f16x2.e5m2x2 h2, %1;\n"
        "mov.b32 {lo, hi}, h2;\n"
        "cvt.f32.f16 %0, lo;\n}"
        : "=f"(y)
        : "h"(pair));
    return y;
}

// out[i] = the e4m3 code of x[i] (round to nearest even, saturating).
extern "C" __global__ void f32_to_e4m3(const float* __restrict__ x, unsigned char* __restrict__ out,
                                       int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = f32_to_e4m3_one(x[i]);
    }
}

// out[i] = the e5m2 code of x[i] (round to nearest even, saturating).
extern "C" __global__ void f32_to_e5m2(const float* __restrict__ x, unsigned char* __restrict__ out,
                                       int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = f32_to_e5m2_one(x[i]);
    }
}

// out[i] = the value of the e4m3 code x[i], as f32 (exact).
extern "C" __global__ void e4m3_to_f32(const unsigned char* __restrict__ x, float* __restrict__ out,
                                       int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = e4m3_to_f32_one(x[i]);
    }
}

// out[i] = the value of the e5m2 code x[i], as f32 (exact).
extern "C" __global__ void e5m2_to_f32(const unsigned char* __restrict__ x, float* __restrict__ out,
                                       int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        out[i] = e5m2_to_f32_one(x[i]);
    }
}
