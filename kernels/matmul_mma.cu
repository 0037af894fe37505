// cudakit test kernels: f16 and bf16 matrix multiplication on tensor cores,
// accumulating in f32, output f32.
//
// Self-contained: NVRTC 13 ships no cuda_fp16.h / cuda_bf16.h / mma.h as
// built-in headers, so the 16-bit elements travel as their raw bits
// (unsigned short, IEEE binary16 or bfloat16) and the tensor cores are driven
// with the PTX instruction mma.sync.aligned.m16n8k16 (sm_80 and later;
// compiled here for sm_90). See kernels/README.md.
//
// Conventions: row-major, packed. A is M x K (A[i*K + k]), B is K x N
// (B[k*N + j]), C is M x N (C[i*N + j]), C = A * B. Any M, N, K >= 0:
// tiles are staged in shared memory and zero-filled past the edges, so
// shapes that are not multiples of 16 (or of the 64 x 64 block tile) are
// exact in the same sense as the interior. Every product of two f16 (or
// bf16) values is exact in f32; the sums are f32 additions in the tensor
// core's order, which differs from a sequential loop.

// Block tile: 64 x 64 outputs, K step 32, 4 warps in a 2 x 2 arrangement,
// each warp 32 x 32 outputs = 2 (m16) x 4 (n8) mma tiles.
#define MMA_BM 64
#define MMA_BN 64
#define MMA_BK 32
// Shared-memory row length in 16-bit elements: MMA_BK + 8 makes a row 80
// bytes (20 words), so a warp's fragment reads (8 rows x 4 words) hit 32
// distinct banks, and keeps every row 16-byte aligned.
#define MMA_LDS (MMA_BK + 8)
#define MMA_THREADS 128

template <bool BF16>
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4],
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

// Two consecutive 16-bit elements of a shared-memory row as one register
// (the lower-indexed element in the low half, as mma expects).
__device__ __forceinline__ unsigned ld_pair(const unsigned short* p) {
    return *reinterpret_cast<const unsigned*>(p);
}

template <bool BF16>
__device__ __forceinline__ void matmul_mma_body(const unsigned short* __restrict__ A,
                                                const unsigned short* __restrict__ B,
                                                float* __restrict__ C, int M, int N, int K) {
    // As[i][k]: A's 64 x 32 slice, row-major. Bs[j][k]: B's 32 x 64 slice
    // stored transposed (k contiguous), which is the "col" layout mma wants.
    __shared__ __align__(16) unsigned short As[MMA_BM][MMA_LDS];
    __shared__ __align__(16) unsigned short Bs[MMA_BN][MMA_LDS];

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
            As[i][k] = (gi < M && gk < K) ? A[(long long)gi * K + gk] : (unsigned short)0;
        }
        // B: consecutive threads read consecutive j of one row of B.
#pragma unroll 8  // fully unrolled, 16 loads in flight cost ~240 registers
        for (int r = 0; r < (MMA_BK * MMA_BN) / MMA_THREADS; ++r) {
            const int idx = tid + r * MMA_THREADS;
            const int k = idx / MMA_BN;
            const int j = idx % MMA_BN;
            const int gk = k0 + k;
            const int gj = n0 + j;
            Bs[j][k] = (gk < K && gj < N) ? B[(long long)gk * N + gj] : (unsigned short)0;
        }
        __syncthreads();

#pragma unroll
        for (int ks = 0; ks < MMA_BK; ks += 16) {
            // Fragment layouts of mma.m16n8k16 (PTX ISA, "Matrix Fragments
            // for mma.m16n8k16 with floating point type"):
            //   A regs: {A[g][2t..], A[g+8][2t..], A[g][2t+8..], A[g+8][2t+8..]}
            //   B regs: {B[2t..][g], B[2t+8..][g]}
            //   D regs: {D[g][2t], D[g][2t+1], D[g+8][2t], D[g+8][2t+1]}
            unsigned a[2][4];
            unsigned b[4][2];
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
                const int r = wm + mt * 16 + g;
                a[mt][0] = ld_pair(&As[r][ks + 2 * t]);
                a[mt][1] = ld_pair(&As[r + 8][ks + 2 * t]);
                a[mt][2] = ld_pair(&As[r][ks + 2 * t + 8]);
                a[mt][3] = ld_pair(&As[r + 8][ks + 2 * t + 8]);
            }
#pragma unroll
            for (int nt = 0; nt < 4; ++nt) {
                const int c = wn + nt * 8 + g;
                b[nt][0] = ld_pair(&Bs[c][ks + 2 * t]);
                b[nt][1] = ld_pair(&Bs[c][ks + 2 * t + 8]);
            }
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
#pragma unroll
                for (int nt = 0; nt < 4; ++nt) {
                    mma_m16n8k16<BF16>(acc[mt][nt], a[mt], b[nt]);
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
    matmul_mma_body<false>(A, B, C, M, N, K);
}

// C = A * B with A, B in bfloat16 (bits), C in f32.
// Block (128, 1, 1); grid (ceil(N/64), ceil(M/64), 1); no dynamic shared memory.
extern "C" __global__ void __launch_bounds__(MMA_THREADS)
    matmul_bf16_mma(const unsigned short* __restrict__ A, const unsigned short* __restrict__ B,
                    float* __restrict__ C, int M, int N, int K) {
    matmul_mma_body<true>(A, B, C, M, N, K);
}

// ---------------------------------------------------------------------------
// tf32: f32 inputs rounded to tf32 (cvt.rna.tf32.f32: 10 explicit mantissa
// bits, round to nearest, ties away from zero) as they are staged, then
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (sm_80 and later) with
// f32 accumulation. The fallback for devices without sm_90's wgmma. Same
// block tile and warp layout as above; the K step of 32 is four mma steps of
// 8. Shared rows are MMA_BK + 4 = 36 words, so a warp's fragment reads
// (8 rows x 4 words, bank (4g + t) mod 32) hit 32 distinct banks.
#define MMA_LDS32 (MMA_BK + 4)

__device__ __forceinline__ unsigned to_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4], const unsigned (&a)[4],
                                                 const unsigned (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// C = A * B with A, B in f32 read as tf32 (rounded to nearest), C in f32.
// Block (128, 1, 1); grid (ceil(N/64), ceil(M/64), 1); no dynamic shared memory.
extern "C" __global__ void __launch_bounds__(MMA_THREADS)
    matmul_tf32_mma(const float* __restrict__ A, const float* __restrict__ B,
                    float* __restrict__ C, int M, int N, int K) {
    // As[i][k]: A's 64 x 32 slice, row-major; Bs[j][k]: B's 32 x 64 slice
    // transposed (k contiguous, the "col" layout). Both hold tf32 bits.
    __shared__ __align__(16) unsigned As[MMA_BM][MMA_LDS32];
    __shared__ __align__(16) unsigned Bs[MMA_BN][MMA_LDS32];

    const int tid = threadIdx.x;
    const int lane = tid & 31;
    const int warp = tid >> 5;
    const int g = lane >> 2;
    const int t = lane & 3;
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
#pragma unroll 8
        for (int r = 0; r < (MMA_BM * MMA_BK) / MMA_THREADS; ++r) {
            const int idx = tid + r * MMA_THREADS;
            const int i = idx / MMA_BK;
            const int k = idx % MMA_BK;
            const int gi = m0 + i;
            const int gk = k0 + k;
            As[i][k] = to_tf32((gi < M && gk < K) ? A[(long long)gi * K + gk] : 0.0f);
        }
        // B: consecutive threads read consecutive j of one row of B.
#pragma unroll 8
        for (int r = 0; r < (MMA_BK * MMA_BN) / MMA_THREADS; ++r) {
            const int idx = tid + r * MMA_THREADS;
            const int k = idx / MMA_BN;
            const int j = idx % MMA_BN;
            const int gk = k0 + k;
            const int gj = n0 + j;
            Bs[j][k] = to_tf32((gk < K && gj < N) ? B[(long long)gk * N + gj] : 0.0f);
        }
        __syncthreads();

#pragma unroll
        for (int ks = 0; ks < MMA_BK; ks += 8) {
            // Fragment layouts of mma.m16n8k8 with .tf32 (PTX ISA):
            //   A regs: {A[g][t], A[g+8][t], A[g][t+4], A[g+8][t+4]}
            //   B regs: {B[t][g], B[t+4][g]}
            //   D regs: {D[g][2t], D[g][2t+1], D[g+8][2t], D[g+8][2t+1]}
            unsigned a[2][4];
            unsigned b[4][2];
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
                const int r = wm + mt * 16 + g;
                a[mt][0] = As[r][ks + t];
                a[mt][1] = As[r + 8][ks + t];
                a[mt][2] = As[r][ks + t + 4];
                a[mt][3] = As[r + 8][ks + t + 4];
            }
#pragma unroll
            for (int nt = 0; nt < 4; ++nt) {
                const int c = wn + nt * 8 + g;
                b[nt][0] = Bs[c][ks + t];
                b[nt][1] = Bs[c][ks + t + 4];
            }
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
#pragma unroll
                for (int nt = 0; nt < 4; ++nt) {
                    mma_m16n8k8_tf32(acc[mt][nt], a[mt], b[nt]);
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
