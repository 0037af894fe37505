// cudakit test kernels: dense matrix multiplication in f32 and f64.
//
// Self-contained: no #include (NVRTC 13 has no built-in standard or CUDA
// headers beyond its implicit prelude), compiled with NVRTC for sm_90.
// See kernels/README.md for every kernel's parameters and launch geometry.
//
// Conventions shared by every kernel in this file
// -----------------------------------------------
// - Row-major, packed storage (no separate leading dimensions).
// - op(A) is M x K, op(B) is K x N, C is M x N with C[i][j] at C[i*N + j].
// - A not transposed: stored M x K, op(A)[i][k] = A[i*K + k].
//   A transposed:     stored K x M, op(A)[i][k] = A[k*M + i].
// - B not transposed: stored K x N, op(B)[k][j] = B[k*N + j].
//   B transposed:     stored N x K, op(B)[k][j] = B[j*K + k].
// - M, N, K >= 0; K == 0 gives C = 0 (or beta*C for the gemm kernels).
//   Every kernel is correct for any M, N, K (all loads and stores are
//   bounds-checked; tiles are zero-filled past the edges).
// - BLAS semantics for beta: when beta == 0, C is not read, so an output
//   buffer poisoned with NaN does not leak into the result.
// - Offsets are computed in 64-bit (long long), so M*K, K*N and M*N may
//   exceed 2^31 as long as each dimension fits in int.
// - Products are accumulated in the element type T (f32 for float, f64 for
//   double), one fused multiply-add per k; the order of k within a thread is
//   ascending.

// ---------------------------------------------------------------------------
// Naive: one thread per output element.
// ---------------------------------------------------------------------------

template <typename T>
__device__ __forceinline__ void matmul_naive_body(const T* __restrict__ A, const T* __restrict__ B,
                                                  T* __restrict__ C, int M, int N, int K) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= M || col >= N) {
        return;
    }
    T acc = T(0);
    for (int k = 0; k < K; ++k) {
        acc += A[(long long)row * K + k] * B[(long long)k * N + col];
    }
    C[(long long)row * N + col] = acc;
}

// C = A * B, any 2-D block shape; grid = (ceil(N/blockDim.x), ceil(M/blockDim.y)).
template <typename T>
__global__ void matmul_naive(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C,
                             int M, int N, int K) {
    matmul_naive_body<T>(A, B, C, M, N, K);
}

// The same as matmul_naive<float>, under an unmangled name (no name
// expression needed to look it up).
extern "C" __global__ void matmul_naive_f32(const float* __restrict__ A,
                                            const float* __restrict__ B, float* __restrict__ C,
                                            int M, int N, int K) {
    matmul_naive_body<float>(A, B, C, M, N, K);
}

// The same as matmul_naive<double>, under an unmangled name.
extern "C" __global__ void matmul_naive_f64(const double* __restrict__ A,
                                            const double* __restrict__ B, double* __restrict__ C,
                                            int M, int N, int K) {
    matmul_naive_body<double>(A, B, C, M, N, K);
}

// ---------------------------------------------------------------------------
// Shared-memory tiles: block TILE x TILE threads, one output per thread.
// The core serves matmul_tiled, gemm (transposes, alpha, beta) and
// matmul_batched.
// ---------------------------------------------------------------------------

template <typename T, int TILE, bool TA, bool TB>
__device__ __forceinline__ void tiled_core(int M, int N, int K, T alpha,
                                           const T* __restrict__ A, const T* __restrict__ B,
                                           T beta, T* __restrict__ C) {
    // As[i][k] and Bs[k][j]; the +1 column keeps transposed stores free of
    // bank conflicts.
    __shared__ T As[TILE][TILE + 1];
    __shared__ T Bs[TILE][TILE + 1];

    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row0 = blockIdx.y * TILE;
    const int col0 = blockIdx.x * TILE;

    T acc = T(0);
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Consecutive threads (tx) always read consecutive addresses.
        if (!TA) {
            const int i = row0 + ty;
            const int k = k0 + tx;
            As[ty][tx] = (i < M && k < K) ? A[(long long)i * K + k] : T(0);
        } else {
            const int k = k0 + ty;
            const int i = row0 + tx;
            As[tx][ty] = (i < M && k < K) ? A[(long long)k * M + i] : T(0);
        }
        if (!TB) {
            const int k = k0 + ty;
            const int j = col0 + tx;
            Bs[ty][tx] = (k < K && j < N) ? B[(long long)k * N + j] : T(0);
        } else {
            const int j = col0 + ty;
            const int k = k0 + tx;
            Bs[tx][ty] = (j < N && k < K) ? B[(long long)j * K + k] : T(0);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            acc += As[ty][k] * Bs[k][tx];
        }
        __syncthreads();
    }

    const int row = row0 + ty;
    const int col = col0 + tx;
    if (row < M && col < N) {
        T* c = C + (long long)row * N + col;
        *c = (beta == T(0)) ? alpha * acc : alpha * acc + beta * *c;
    }
}

// C = A * B; block (TILE, TILE, 1); grid (ceil(N/TILE), ceil(M/TILE), 1).
template <typename T, int TILE>
__global__ void __launch_bounds__(TILE * TILE)
    matmul_tiled(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M,
                 int N, int K) {
    tiled_core<T, TILE, false, false>(M, N, K, T(1), A, B, T(0), C);
}

// The tile size of gemm and matmul_batched.
#define GEMM_TILE 16

// C = alpha * op(A) * op(B) + beta * C, op chosen by TA / TB (true =
// transposed storage, see the conventions above). When beta == 0, C is only
// written. Block (16, 16, 1); grid (ceil(N/16), ceil(M/16), 1).
template <typename T, bool TA, bool TB>
__global__ void __launch_bounds__(GEMM_TILE * GEMM_TILE)
    gemm(int M, int N, int K, T alpha, const T* __restrict__ A, const T* __restrict__ B, T beta,
         T* __restrict__ C) {
    tiled_core<T, GEMM_TILE, TA, TB>(M, N, K, alpha, A, B, beta, C);
}

// Strided batch: C_b = A_b * B_b for b in [0, batch), where
// A_b = A + b*strideA (elements), likewise B_b and C_b. A stride of 0
// broadcasts one matrix to every batch entry (not allowed for C).
// Block (16, 16, 1); grid (ceil(N/16), ceil(M/16), batch) with
// batch <= 65535 (the grid's z limit); blocks with blockIdx.z >= batch exit.
template <typename T>
__global__ void __launch_bounds__(GEMM_TILE * GEMM_TILE)
    matmul_batched(const T* __restrict__ A, const T* __restrict__ B, T* __restrict__ C, int M,
                   int N, int K, long long strideA, long long strideB, long long strideC,
                   int batch) {
    const int b = blockIdx.z;
    if (b >= batch) {
        return;  // uniform across the block: no __syncthreads is skipped by half a block
    }
    tiled_core<T, GEMM_TILE, false, false>(M, N, K, T(1), A + b * strideA, B + b * strideB, T(0),
                                           C + b * strideC);
}

// ---------------------------------------------------------------------------
// Register-blocked GEMM (SGEMM for float, DGEMM for double), NN only.
//
// A block of THREADS = (BM/TM)*(BN/TN) threads (1-D) computes a BM x BN tile
// of C; each thread computes TM x TN outputs held in registers. Per step of
// BK, the block stages A's BM x BK slice transposed (As[k][i]) and B's
// BK x BN slice (Bs[k][j]) in shared memory, zero-filled past M, N, K.
//
// A thread's outputs are TM/W row chunks and TN/W column chunks of W
// consecutive elements, W = 16 / sizeof(T) (4 floats, 2 doubles), so that
// its shared-memory reads are 16-byte vectors and a warp's reads touch
// consecutive 16-byte words (no bank conflicts):
//   rows: m0 + c*(BM/TM)*W + tr*W + w   for c < TM/W, w < W
//   cols: n0 + c*(BN/TN)*W + tc*W + w   for c < TN/W, w < W
// with tr = tid / (BN/TN), tc = tid % (BN/TN).
// ---------------------------------------------------------------------------

template <typename T>
struct Vec16;
template <>
struct Vec16<float> {
    typedef float4 type;
    static constexpr int W = 4;
    static __device__ __forceinline__ void unpack(const float4& v, float* out) {
        out[0] = v.x;
        out[1] = v.y;
        out[2] = v.z;
        out[3] = v.w;
    }
};
template <>
struct Vec16<double> {
    typedef double2 type;
    static constexpr int W = 2;
    static __device__ __forceinline__ void unpack(const double2& v, double* out) {
        out[0] = v.x;
        out[1] = v.y;
    }
};

// C = alpha * A * B + beta * C (NN). When beta == 0, C is only written.
// Block (THREADS, 1, 1) with THREADS = (BM/TM)*(BN/TN);
// grid (ceil(N/BN), ceil(M/BM), 1); no dynamic shared memory.
template <typename T, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    gemm_regblock(int M, int N, int K, T alpha, const T* __restrict__ A,
                  const T* __restrict__ B, T beta, T* __restrict__ C) {
    typedef typename Vec16<T>::type V;
    constexpr int W = Vec16<T>::W;
    constexpr int RS = BM / TM;  // threads along M
    constexpr int CS = BN / TN;  // threads along N
    constexpr int THREADS = RS * CS;
    constexpr int PAD = W;  // keeps rows 16-byte aligned and the transposed stores conflict-free
    static_assert(BM % TM == 0 && BN % TN == 0, "the thread tile must divide the block tile");
    static_assert(TM % W == 0 && TN % W == 0, "the thread tile must be whole 16-byte vectors");
    static_assert((BM * BK) % THREADS == 0, "A's slice must split evenly over the threads");
    static_assert((BK * BN) % THREADS == 0, "B's slice must split evenly over the threads");

    __shared__ __align__(16) T As[BK][BM + PAD];
    __shared__ __align__(16) T Bs[BK][BN];

    const int tid = threadIdx.x;
    const int tr = tid / CS;
    const int tc = tid % CS;
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;

    T acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            acc[i][j] = T(0);
        }
    }
    T ra[TM];
    T rb[TN];

    for (int k0 = 0; k0 < K; k0 += BK) {
#pragma unroll
        for (int r = 0; r < (BM * BK) / THREADS; ++r) {
            const int idx = tid + r * THREADS;
            const int i = idx / BK;
            const int k = idx % BK;
            const int gi = m0 + i;
            const int gk = k0 + k;
            As[k][i] = (gi < M && gk < K) ? A[(long long)gi * K + gk] : T(0);
        }
#pragma unroll
        for (int r = 0; r < (BK * BN) / THREADS; ++r) {
            const int idx = tid + r * THREADS;
            const int k = idx / BN;
            const int j = idx % BN;
            const int gk = k0 + k;
            const int gj = n0 + j;
            Bs[k][j] = (gk < K && gj < N) ? B[(long long)gk * N + gj] : T(0);
        }
        __syncthreads();

#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int c = 0; c < TM / W; ++c) {
                const V v = *reinterpret_cast<const V*>(&As[k][c * RS * W + tr * W]);
                Vec16<T>::unpack(v, &ra[c * W]);
            }
#pragma unroll
            for (int c = 0; c < TN / W; ++c) {
                const V v = *reinterpret_cast<const V*>(&Bs[k][c * CS * W + tc * W]);
                Vec16<T>::unpack(v, &rb[c * W]);
            }
#pragma unroll
            for (int i = 0; i < TM; ++i) {
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    acc[i][j] += ra[i] * rb[j];
                }
            }
        }
        __syncthreads();
    }

#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int gi = m0 + (i / W) * RS * W + tr * W + (i % W);
        if (gi >= M) {
            continue;
        }
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int gj = n0 + (j / W) * CS * W + tc * W + (j % W);
            if (gj < N) {
                T* c = C + (long long)gi * N + gj;
                *c = (beta == T(0)) ? alpha * acc[i][j] : alpha * acc[i][j] + beta * *c;
            }
        }
    }
}
