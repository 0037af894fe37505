// cudakit test kernels: f16, bf16 and tf32 matrix multiplication on tensor
// cores, accumulating in f32, output f32.
//
// Self-contained: NVRTC 13 ships no cuda_fp16.h / cuda_bf16.h / mma.h as
// built-in headers, so the 16-bit elements travel as their raw bits
// (unsigned short, IEEE binary16 or bfloat16) and the tensor cores are driven
// with the PTX instruction mma.sync.aligned (m16n8k16 for f16/bf16, m16n8k8
// for tf32; sm_80 and later; compiled here for sm_90). See kernels/README.md.
//
// Conventions: row-major, packed. A is M x K (A[i*K + k]), B is K x N
// (B[k*N + j]), C is M x N (C[i*N + j]), C = A * B. Any M, N, K >= 0:
// tiles are staged in shared memory and zero-filled past the edges, so
// shapes that are not multiples of 16 (or of the 64 x 64 block tile) are
// exact in the same sense as the interior. Every product of two f16 (or
// bf16) values is exact in f32; tf32 inputs are rounded to tf32 as they are
// staged; the sums are f32 additions in the tensor core's order, which
// differs from a sequential loop.

// Block tile: 64 x 64 outputs, K step 32, 4 warps in a 2 x 2 arrangement,
// each warp 32 x 32 outputs = 2 (m16) x 4 (n8) mma tiles.
#define MMA_BM 64
#define MMA_BN 64
#define MMA_BK 32
#define MMA_THREADS 128

// What differs between the element types: the global and shared element, the
// shared row length, the mma's K, and how a fragment register is read. A
// fragment register holds PER_WORD consecutive k of one row; a thread's two
// registers of a row are at k0 = ks + PER_WORD*t and k0 + KSTEP/2 (the PTX
// fragment tables: {A[g][k0], A[g+8][k0], A[g][k1], A[g+8][k1]} and
// {B[k0][g], B[k1][g]}).

// f16 / bf16: 16-bit bits staged unchanged, mma.m16n8k16. Rows of MMA_BK + 8
// elements are 80 bytes (20 words), so a warp's fragment reads (8 rows x 4
// words) hit 32 distinct banks, and every row stays 16-byte aligned.
template <bool BF16>
struct MmaHalf {
    typedef unsigned short In;
    typedef unsigned short S;
    static constexpr int LDS = MMA_BK + 8;
    static constexpr int KSTEP = 16;
    static constexpr int PER_WORD = 2;
    __device__ __forceinline__ static S stage(In x) { return x; }
    // Two consecutive 16-bit elements as one register (the lower-indexed
    // element in the low half, as mma expects).
    __device__ __forceinline__ static unsigned word(const S* p) {
        return *reinterpret_cast<const unsigned*>(p);
    }
    __device__ __forceinline__ static void mma(float (&d)[4], const unsigned (&a)[4],
                                               const unsigned (&b)[2]) {
        if (BF16) {
            asm volatile(
                "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        } else {
            asm volatile(
                "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
        }
    }
};

// tf32: f32 inputs rounded to tf32 as they are staged (cvt.rna.tf32.f32: 10
// explicit mantissa bits, round to nearest, ties away from zero), then
// mma.m16n8k8 .tf32. Rows of MMA_BK + 4 = 36 words: a warp's fragment reads
// (bank (4g + t) mod 32) hit 32 distinct banks.
struct MmaTf32 {
    typedef float In;
    typedef unsigned S;
    static constexpr int LDS = MMA_BK + 4;
    static constexpr int KSTEP = 8;
    static constexpr int PER_WORD = 1;
    __device__ __forceinline__ static S stage(In x) {
        unsigned r;
        asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
        return r;
    }
    __device__ __forceinline__ static unsigned word(const S* p) { return *p; }
    __device__ __forceinline__ static void mma(float (&d)[4], const unsigned (&a)[4],
                                               const unsigned (&b)[2]) {
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
            "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
};

template <class T>
__device__ __forceinline__ void matmul_mma_body(const typename T::In* __restrict__ A,
                                                const typename T::In* __restrict__ B,
                                                float* __restrict__ C, int M, int N, int K) {
    typedef typename T::In In;
    // As[i][k]: A's 64 x 32 slice, row-major. Bs[j][k]: B's 32 x 64 slice
    // stored transposed (k contiguous), which is the "col" layout mma wants.
    __shared__ __align__(16) typename T::S As[MMA_BM][T::LDS];
    __shared__ __align__(16) typename T::S Bs[MMA_BN][T::LDS];

    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int g = lane >> 2;  // "groupID" in the PTX fragment tables
    const int t = lane & 3;   // "threadID_in_group"
    const int wm = (warp >> 1) * 32;
    const int wn = (warp & 1) * 32;
    const int m0 = blockIdx.y * MMA_BM;
    const int n0 = blockIdx.x * MMA_BN;

    float acc[2][4][4];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt) {
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                acc[mt][nt][r] = 0.0f;
            }
        }
    }

    for (int k0 = 0; k0 < K; k0 += MMA_BK) {
        // A: consecutive threads read consecutive k of one row.
#pragma unroll 8  // fully unrolled, 16 loads in flight cost ~240 registers
        for (int r = 0; r < (MMA_BM * MMA_BK) / MMA_THREADS; ++r) {
            const int idx = tid + r * MMA_THREADS;
            const int i = idx / MMA_BK;
            const int k = idx % MMA_BK;
            const int gi = m0 + i;
            const int gk = k0 + k;
            As[i][k] = T::stage((gi < M && gk < K) ? A[(long long)gi * K + gk] : (In)0);
        }
        // B: consecutive threads read consecutive j of one row of B.
#pragma unroll 8  // fully unrolled, 16 loads in flight cost ~240 registers
        for (int r = 0; r < (MMA_BK * MMA_BN) / MMA_THREADS; ++r) {
            const int idx = tid + r * MMA_THREADS;
            const int k = idx / MMA_BN;
            const int j = idx % MMA_BN;
            const int gk = k0 + k;
            const int gj = n0 + j;
            Bs[j][k] = T::stage((gk < K && gj < N) ? B[(long long)gk * N + gj] : (In)0);
        }
        __syncthreads();

#pragma unroll
        for (int ks = 0; ks < MMA_BK; ks += T::KSTEP) {
            // Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k16 /
            // m16n8k8"): A regs {A[g][k0], A[g+8][k0], A[g][k1], A[g+8][k1]},
            // B regs {B[k0][g], B[k1][g]}, D regs {D[g][2t], D[g][2t+1],
            // D[g+8][2t], D[g+8][2t+1]}.
            const int ka = ks + T::PER_WORD * t;
            const int kb = ka + T::KSTEP / 2;
            unsigned a[2][4];
            unsigned b[4][2];
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
                const int r = wm + mt * 16 + g;
                a[mt][0] = T::word(&As[r][ka]);
                a[mt][1] = T::word(&As[r + 8][ka]);
                a[mt][2] = T::word(&As[r][kb]);
                a[mt][3] = T::word(&As[r + 8][kb]);
            }
#pragma unroll
            for (int nt = 0; nt < 4; ++nt) {
                const int c = wn + nt * 8 + g;
                b[nt][0] = T::word(&Bs[c][ka]);
                b[nt][1] = T::word(&Bs[c][kb]);
            }
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
#pragma unroll
                for (int nt = 0; nt < 4; ++nt) {
                    T::mma(acc[mt][nt], a[mt], b[nt]);
                }
            }
        }
        __syncthreads();
    }

#pragma unroll
    for (int mt = 0; mt < 2; ++mt) {
#pragma unroll
        for (int nt = 0; nt < 4; ++nt) {
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const int gi = m0 + wm + mt * 16 + g + (r >> 1) * 8;
                const int gj = n0 + wn + nt * 8 + 2 * t + (r & 1);
                if (gi < M && gj < N) {
                    C[(long long)gi * N + gj] = acc[mt][nt][r];
                }
            }
        }
    }
}

// C = A * B with A, B in IEEE binary16 (bits), C in f32.
// Block (128, 1, 1); grid (ceil(N/64), ceil(M/64), 1); no dynamic shared memory.
extern "C" __global__ void __launch_bounds__(MMA_THREADS)
    matmul_f16_mma(const unsigned short* __restrict__ A, const unsigned short* __restrict__ B,
                   float* __restrict__ C, int M, int N, int K) {
    matmul_mma_body<MmaHalf<false>>(A, B, C, M, N, K);
}

// C = A * B with A, B in bfloat16 (bits), C in f32.
// Block (128, 1, 1); grid (ceil(N/64), ceil(M/64), 1); no dynamic shared memory.
extern "C" __global__ void __launch_bounds__(MMA_THREADS)
    matmul_bf16_mma(const unsigned short* __restrict__ A, const unsigned short* __restrict__ B,
                    float* __restrict__ C, int M, int N, int K) {
    matmul_mma_body<MmaHalf<true>>(A, B, C, M, N, K);
}

// C = A * B with A, B in f32 read as tf32 (rounded to nearest), C in f32: the
// tf32 fallback for devices without sm_90's wgmma.
// Block (128, 1, 1); grid (ceil(N/64), ceil(M/64), 1); no dynamic shared memory.
extern "C" __global__ void __launch_bounds__(MMA_THREADS)
    matmul_tf32_mma(const float* __restrict__ A, const float* __restrict__ B,
                    float* __restrict__ C, int M, int N, int K) {
    matmul_mma_body<MmaTf32>(A, B, C, M, N, K);
}
