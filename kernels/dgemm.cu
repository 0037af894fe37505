// cudakit DGEMM: f64 GEMM on the FP64 tensor cores (DMMA) with
// mma.sync.aligned.m16n8k8 / m16n8k16 .row.col.f64 (PTX ISA 7.8+, sm_90). See
// kernels/README.md.
//
// Self-contained: no #include. Row-major packed layout as in kernels/README.md:
// A is M x K (A[i*K + k]), B is K x N (B[k*N + j]), C is M x N (C[i*N + j]).
// C = alpha * A * B + beta * C; when beta == 0, C is not read. Any M, N, K >= 0
// (loads zero-filled past the edges, stores bounds-checked); offsets 64-bit.
// Products and sums are f64 (the tensor core's fused multiply-adds, in its
// order).
//
// Design: a block computes a 128 x 128 tile of C with 4 warps along N and
// 128/(16*MT) warps along M (MT = 4: 8 warps, 256 threads; MT = 2: 16 warps,
// 512 threads); each warp owns a (16*MT) x 32 tile = MT x 4 mma tiles of
// 16 x 8, 4*MT*4 f64 accumulators per thread. K advances in slices of BK
// through a ring of STAGES shared-memory stages filled by cp.async (16-byte
// copies when K and N are even, 8-byte copies otherwise; zero-fill past the
// edges), so the copies of later slices overlap the tensor-core work on the
// current one; one __syncthreads per slice. Shared rows are padded (A:
// BK + 4 doubles, B: 128 + 4 doubles) so that the fragment loads (8-byte, per
// half-warp) have no bank conflicts.
//
// The default, dgemm_dmma_128x128, runs the pipelined body below
// (dgemm_pipe_body<16, 4, 8, 0, true>) on every tile that is whole (in
// range, K a multiple of 16, 16-byte aligned operands), its MID variant on
// the other tiles of a matrix of at least 128 x 128 (issue 23), and this
// bounds-checked body (dgemm_body<32, 3, 16, 4, 0>) on smaller matrices. Measured on the H200
// (kernels/README.md): 52 TFLOP/s at 4096^3 against 47 for this body alone.

#define DG_BM 128
#define DG_BN 128
#define DG_LDB (DG_BN + 4)

// Block -> tile mapping. GM = 0: tile (blockIdx.y, blockIdx.x). GM > 0: the
// same grid is walked in groups of GM tile-rows (column-major inside a group)
// so that blocks running at the same time share A and B panels in L2.
template <int GM>
__device__ __forceinline__ void dg_tile_coords(int& tm, int& tn) {
    if (GM == 0) {
        tm = blockIdx.y;
        tn = blockIdx.x;
        return;
    }
    const int tiles_m = gridDim.y, tiles_n = gridDim.x;
    const int bid = blockIdx.y * tiles_n + blockIdx.x;
    const int per_group = GM * tiles_n;
    const int first_m = (bid / per_group) * GM;
    const int rows = min(tiles_m - first_m, GM);
    const int in_group = bid % per_group;
    tm = first_m + in_group % rows;
    tn = in_group / rows;
}

// Dynamic shared memory in bytes for a (BK, STAGES) configuration.
#define DG_SMEM_BYTES(BK, STAGES) ((STAGES) * (DG_BM * ((BK) + 4) + (BK) * DG_LDB) * 8)

__device__ __forceinline__ void dg_mma_16x8x8(double (&d)[4], const double (&a)[4],
                                              const double (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}

// m16n8k16: A fragment a[0..7] = A[g + 8*(i & 1)][t + 4*(i >> 1)],
// B fragment b[0..3] = B[t + 4*i][g]; C as in m16n8k8.
__device__ __forceinline__ void dg_mma_16x8x16(double (&d)[4], const double (&a)[8],
                                               const double (&b)[4]) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, "
        "{%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
          "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
}

__device__ __forceinline__ void dg_cp16(unsigned dst, const double* src, bool ok) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                 "r"(ok ? 16 : 0)
                 : "memory");
}
__device__ __forceinline__ void dg_cp8(unsigned dst, const double* src, bool ok) {
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst), "l"(src),
                 "r"(ok ? 8 : 0)
                 : "memory");
}

template <int BK, int STAGES, int KI, int MT, int GM>
__device__ __forceinline__ void dgemm_body(int M, int N, int K, double alpha,
                                           const double* __restrict__ A,
                                           const double* __restrict__ B, double beta,
                                           double* __restrict__ C) {
    constexpr int LDA = BK + 4;
    constexpr int A_STAGE = DG_BM * LDA;  // doubles
    constexpr int B_STAGE = BK * DG_LDB;  // doubles
    // Warps: (128 / (16*MT)) along M x 4 along N; warp tile (16*MT) x 32.
    constexpr int THREADS = 32 * 4 * (DG_BM / (16 * MT));
    constexpr int A_CHUNKS = DG_BM * BK / 2 / THREADS;  // 16-byte chunks per thread
    constexpr int B_CHUNKS = BK * DG_BN / 2 / THREADS;
    static_assert(BK % KI == 0 && (KI == 8 || KI == 16), "K slice must hold whole mma steps");
    // The 512-thread shape (MT = 2) has 128 registers: unrolling more than two
    // mma steps of a slice makes the compiler hoist fragments and spill.
    constexpr int KS_UNROLL = (MT == 2 && BK / KI > 2) ? 2 : BK / KI;
    extern __shared__ __align__(16) double dg_smem[];
    double* As = dg_smem;                          // [STAGES][BM][LDA]
    double* Bs = dg_smem + STAGES * A_STAGE;  // [STAGES][BK][LDB]

    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int lane = tid & 31;
    const int g = lane >> 2;
    const int t = lane & 3;
    const int wm = (warp >> 2) * (16 * MT);
    const int wn = (warp & 3) * 32;
    int tm, tn;
    dg_tile_coords<GM>(tm, tn);
    const int m0 = tm * DG_BM;
    const int n0 = tn * DG_BN;

    const bool vec_a = ((K & 1) == 0) && ((((unsigned long long)A) & 15) == 0);
    const bool vec_b = ((N & 1) == 0) && ((((unsigned long long)B) & 15) == 0);
    const unsigned as_base = (unsigned)__cvta_generic_to_shared(As);
    const unsigned bs_base = (unsigned)__cvta_generic_to_shared(Bs);

    const int nk = (K + BK - 1) / BK;

    // A slice: 128 rows x BK/2 chunks of 2 doubles; B slice: BK rows x 64 chunks.
    // Per-thread copy coordinates (the same in every stage): A rows
    // a_row + A_RSTEP*i at k offset a_kc; B rows b_kr + B_RSTEP*i at column b_nc.
    static_assert(THREADS % (BK / 2) == 0 && THREADS % 64 == 0, "copy mapping");
    constexpr int A_RSTEP = THREADS / (BK / 2);
    constexpr int B_RSTEP = THREADS / 64;
    const int a_row = tid / (BK / 2);
    const int a_kc = (tid % (BK / 2)) * 2;
    const int b_kr = tid >> 6;
    const int b_nc = (tid & 63) * 2;
    const double* a_src = A + (long long)(m0 + a_row) * K + a_kc;
    const double* b_src = B + (long long)b_kr * N + (n0 + b_nc);
    const unsigned a_dst = as_base + (unsigned)((a_row * LDA + a_kc) * 8);
    const unsigned b_dst = bs_base + (unsigned)((b_kr * DG_LDB + b_nc) * 8);

    auto load_stage = [&](int kt, int s) {
        const int k0 = kt * BK;
        const int gk = k0 + a_kc;
#pragma unroll
        for (int i = 0; i < A_CHUNKS; ++i) {
            const int gr = m0 + a_row + A_RSTEP * i;
            const double* p = a_src + (long long)(A_RSTEP * i) * K + k0;
            const unsigned dst = a_dst + (unsigned)((s * A_STAGE + A_RSTEP * i * LDA) * 8);
            if (vec_a) {
                const bool ok = gr < M && gk < K;
                dg_cp16(dst, ok ? p : A, ok);
            } else {
                const bool ok0 = gr < M && gk < K;
                const bool ok1 = gr < M && gk + 1 < K;
                dg_cp8(dst, ok0 ? p : A, ok0);
                dg_cp8(dst + 8, ok1 ? p + 1 : A, ok1);
            }
        }
        const int gn = n0 + b_nc;
#pragma unroll
        for (int i = 0; i < B_CHUNKS; ++i) {
            const int gkb = k0 + b_kr + B_RSTEP * i;
            const double* p = b_src + (long long)(k0 + B_RSTEP * i) * N;
            const unsigned dst = b_dst + (unsigned)((s * B_STAGE + B_RSTEP * i * DG_LDB) * 8);
            if (vec_b) {
                const bool ok = gkb < K && gn < N;
                dg_cp16(dst, ok ? p : B, ok);
            } else {
                const bool ok0 = gkb < K && gn < N;
                const bool ok1 = gkb < K && gn + 1 < N;
                dg_cp8(dst, ok0 ? p : B, ok0);
                dg_cp8(dst + 8, ok1 ? p + 1 : B, ok1);
            }
        }
    };

    double acc[MT][4][4];
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                acc[i][j][r] = 0.0;
            }
        }
    }

    // Prologue: stages 0 .. STAGES-2 (one commit group each, empty if past K).
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nk) {
            load_stage(s, s);
        }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }

    for (int kt = 0; kt < nk; ++kt) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
        __syncthreads();  // slice kt visible to all; slice kt-1's stage free
        {
            const int pf = kt + STAGES - 1;
            if (pf < nk) {
                load_stage(pf, pf % STAGES);
            }
            asm volatile("cp.async.commit_group;\n" ::: "memory");
        }
        const int s = kt % STAGES;
        const double* as = As + s * A_STAGE;
        const double* bs = Bs + s * B_STAGE;
#pragma unroll KS_UNROLL
        for (int ks = 0; ks < BK; ks += KI) {
            // Fragments (f64 mma): a[i] = A[g + 8*(i & 1)][t + 4*(i >> 1)],
            // b[i] = B[t + 4*i][g]; c0 = C[g][2t], c1 = C[g][2t+1],
            // c2 = C[g+8][2t], c3 = C[g+8][2t+1].
            double b[4][KI / 4];
#pragma unroll
            for (int nt = 0; nt < 4; ++nt) {
                const double* bp = bs + (ks + t) * DG_LDB + wn + 8 * nt + g;
#pragma unroll
                for (int i = 0; i < KI / 4; ++i) {
                    b[nt][i] = bp[4 * i * DG_LDB];
                }
            }
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                double a[KI / 2];
                const double* ap = as + (wm + 16 * mt + g) * LDA + ks + t;
#pragma unroll
                for (int i = 0; i < KI / 2; ++i) {
                    a[i] = ap[(i & 1) * 8 * LDA + (i >> 1) * 4];
                }
#pragma unroll
                for (int nt = 0; nt < 4; ++nt) {
                    if (KI == 8) {
                        dg_mma_16x8x8(acc[mt][nt], *reinterpret_cast<const double(*)[4]>(a),
                                      *reinterpret_cast<const double(*)[2]>(b[nt]));
                    } else {
                        dg_mma_16x8x16(acc[mt][nt], *reinterpret_cast<const double(*)[8]>(a),
                                       *reinterpret_cast<const double(*)[4]>(b[nt]));
                    }
                }
            }
        }
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");

    const bool vec_c = ((N & 1) == 0) && ((((unsigned long long)C) & 15) == 0);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int row = m0 + wm + 16 * mt + g + 8 * h;
            if (row >= M) {
                continue;
            }
            double* crow = C + (long long)row * N;
#pragma unroll
            for (int nt = 0; nt < 4; ++nt) {
                const int col = n0 + wn + 8 * nt + 2 * t;
                double v0 = alpha * acc[mt][nt][2 * h];
                double v1 = alpha * acc[mt][nt][2 * h + 1];
                if (vec_c) {
                    if (col < N) {
                        double2* p = reinterpret_cast<double2*>(crow + col);
                        if (beta != 0.0) {
                            const double2 c = *p;
                            v0 = fma(beta, c.x, v0);
                            v1 = fma(beta, c.y, v1);
                        }
                        *p = make_double2(v0, v1);
                    }
                } else {
                    if (col < N) {
                        crow[col] = (beta != 0.0) ? fma(beta, crow[col], v0) : v0;
                    }
                    if (col + 1 < N) {
                        crow[col + 1] = (beta != 0.0) ? fma(beta, crow[col + 1], v1) : v1;
                    }
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Pipelined body (dgemm_pipe_body, whole tiles only): the same 128 x 128
// tile and 8 warps of 64 x 32. Each warp
// computes its tile transposed (C^T = B^T A^T: the mma's A operand comes from
// B, its B operand from A; see the comment at the main loop), as 2 column
// tiles of 16 by 8 row tiles of 8: 16 mmas per k step. DB = false: one
// register set of fragments per step, each fragment reloaded right after its
// last mma of the step; DB = true: two sets, step x reading set x & 1 while
// the next step's fragments load into the other. The last step of a K slice
// does the cp.async wait and the barrier before its mmas, so that its loads
// read the next slice; after the barrier, the stage of the slice before is
// refilled (slice x lives in stage x % STAGES; the refill is STAGES - 1
// slices ahead). The copies and the epilogue have no bounds checks (the
// caller checked dg_pipe_eligible).
//
// To make every fragment load a conflict-free 16-byte load, the K index
// inside each group of 8 is permuted (a bijection, the same for A and B, so
// the sum is unchanged): the mma's k slots t and t + 4 of thread (g, t) hold
// actual k 2t and 2t + 1. The 16 columns of a column tile are permuted too:
// the mma's row i is column 2 (i & 7) + (i >> 3), so rows g and g + 8 are
// the adjacent columns 2g and 2g + 1.
//
// Shared memory per stage: A 128 rows of BK doubles, 16-byte chunks
// XOR-swizzled by 4 * (row & 1); B BK rows of DP_LDB = 130 doubles (the pad
// makes the 16-byte B loads conflict-free). DP_SMEM_BYTES(16, 4) = 132096
// bytes; every configuration used here stays within DG_SMEM_BYTES(32, 3)
// (211968), which the fallback body needs anyway.
#define DP_LDB 130
#define DP_SMEM_BYTES(BK, STAGES) ((STAGES) * (DG_BM * (BK) + (BK) * DP_LDB) * 8)

__device__ __forceinline__ void dg_cp16_full(unsigned dst, const double* src) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}

// MID (issue 23): the tile at (m0, n0) lies inside the matrix but need not
// be a whole tile of the grid (the caller slid an edge tile back: it stores
// only rows >= m_lo and columns >= n_lo), K need not be a multiple of BK (the
// last slice zero-fills k >= K), and the copies are 8 bytes wide where K or N
// is odd or A or B is not 16-byte aligned; C is stored as double2 only when
// N is even and C 16-byte aligned.
template <int BK, int STAGES, int KI, int GM, bool DB, bool MID = false>
__device__ __forceinline__ void dgemm_pipe_body(int M, int N, int K, double alpha,
                                                const double* __restrict__ A,
                                                const double* __restrict__ B, double beta,
                                                double* __restrict__ C, int m0, int n0,
                                                int m_lo, int n_lo) {
    constexpr int MT = 4;
    constexpr int THREADS = 256;
    constexpr int A_STAGE = DG_BM * BK;  // doubles
    constexpr int B_STAGE = BK * DP_LDB;
    constexpr int NSTEP = BK / KI;       // mma steps per slice
    constexpr int KG = KI / 8;           // groups of 8 k per mma
    constexpr int A_CPR = BK / 2;        // 16-byte chunks per A row
    constexpr int A_RSTEP = THREADS / A_CPR;
    constexpr int A_CHUNKS = DG_BM / A_RSTEP;
    constexpr int B_RSTEP = THREADS / 64;
    constexpr int B_CHUNKS = BK / B_RSTEP;
    static_assert(BK % 16 == 0 && (KI == 8 || KI == 16) && BK % KI == 0, "slice shape");
    static_assert(STAGES >= 3, "the refill goes to the stage read two slices back");
    static_assert(THREADS % A_CPR == 0 && DG_BM % A_RSTEP == 0 && A_RSTEP % 2 == 0, "A copy map");
    static_assert(THREADS % 64 == 0 && BK % (THREADS / 64) == 0, "B copy map");
    extern __shared__ __align__(16) double dg_smem[];
    const unsigned as_base = (unsigned)__cvta_generic_to_shared(dg_smem);
    const unsigned bs_base = as_base + (unsigned)(STAGES * A_STAGE * 8);

    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int lane = tid & 31;
    const int g = lane >> 2;
    const int t = lane & 3;
    const int wm = (warp >> 2) * (16 * MT);
    const int wn = (warp & 3) * 32;
    const int nk = MID ? (K + BK - 1) / BK : K / BK;
    const bool vec_a = !MID || (((K & 1) == 0) && ((((unsigned long long)A) & 15) == 0));
    const bool vec_b = !MID || (((N & 1) == 0) && ((((unsigned long long)B) & 15) == 0));

    // Copy coordinates: A rows a_row + A_RSTEP*i, chunk a_c (k = 2*a_c, +1);
    // B rows b_kr + B_RSTEP*i, chunk b_c (columns 2*b_c, +1). The caller
    // guarantees a full tile: every copy is in range and 16-byte aligned.
    const int a_row = tid / A_CPR;
    const int a_c = tid % A_CPR;
    const int b_kr = tid >> 6;
    const int b_c = tid & 63;
    const unsigned a_dst = as_base + (unsigned)(a_row * BK * 8 + ((a_c ^ ((a_row & 1) << 2)) * 16));
    const unsigned b_dst = bs_base + (unsigned)(b_kr * DP_LDB * 8 + b_c * 16);
    const double* a_next = A + (long long)(m0 + a_row) * K + 2 * a_c;  // slice 0
    const double* b_next = B + (long long)b_kr * N + (n0 + 2 * b_c);
    const long long a_rstride = (long long)A_RSTEP * K;  // doubles between a thread's A rows
    const long long b_rstride = (long long)B_RSTEP * N;
    const long long b_slice = (long long)BK * N;

    // Copies the next slice (a_next, b_next; slice number kt) into stage s
    // and advances.
    auto load_stage = [&](int s, int kt) {
        const unsigned ad = a_dst + (unsigned)(s * A_STAGE * 8);
        const unsigned bd = b_dst + (unsigned)(s * B_STAGE * 8);
        if (MID) {
            // Rows of this slice inside K (all BK but in the last slice).
            const int kleft = K - kt * BK;
            const bool tail = kleft < BK;
            const double* pa = a_next;
#pragma unroll
            for (int i = 0; i < A_CHUNKS; ++i) {
                const unsigned d = ad + (unsigned)(i * A_RSTEP * BK * 8);
                const bool ok0 = !tail || 2 * a_c < kleft;
                const bool ok1 = !tail || 2 * a_c + 1 < kleft;
                if (vec_a) {
                    // 16, 8 or 0 source bytes; the rest zero-filled.
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(d),
                                 "l"(ok0 ? pa : A), "r"(ok1 ? 16 : (ok0 ? 8 : 0))
                                 : "memory");
                } else {
                    dg_cp8(d, ok0 ? pa : A, ok0);
                    dg_cp8(d + 8, ok1 ? pa + 1 : A, ok1);
                }
                pa += a_rstride;
            }
            const double* pb = b_next;
#pragma unroll
            for (int i = 0; i < B_CHUNKS; ++i) {
                const unsigned d = bd + (unsigned)(i * B_RSTEP * DP_LDB * 8);
                const bool ok = !tail || b_kr + B_RSTEP * i < kleft;
                if (vec_b) {
                    dg_cp16(d, ok ? pb : B, ok);
                } else {
                    dg_cp8(d, ok ? pb : B, ok);
                    dg_cp8(d + 8, ok ? pb + 1 : B, ok);
                }
                pb += b_rstride;
            }
            a_next += BK;
            b_next += b_slice;
            return;
        }
        const double* pa = a_next;
#pragma unroll
        for (int i = 0; i < A_CHUNKS; ++i) {
            dg_cp16_full(ad + (unsigned)(i * A_RSTEP * BK * 8), pa);
            pa += a_rstride;
        }
        const double* pb = b_next;
#pragma unroll
        for (int i = 0; i < B_CHUNKS; ++i) {
            dg_cp16_full(bd + (unsigned)(i * B_RSTEP * DP_LDB * 8), pb);
            pb += b_rstride;
        }
        a_next += BK;
        b_next += b_slice;
    };

    // Fragment offsets in doubles (stage 0). A: row wm + g (+16 mt + 8 q),
    // chunk (4 s8 + t) ^ (4 (g & 1)) for group of 8 s8, i.e. 2t + 8 (s8 ^ g1)
    // doubles: a_even + 8 s8 for even s8, a_odd + 8 s8 for odd s8.
    // B: rows 8 s8 + 2t + r, columns wn + 2g + 16 h.
    const int g1 = g & 1;
    const int a_even = (wm + g) * BK + 2 * t + 8 * g1;
    const int a_odd = (wm + g) * BK + 2 * t - 8 * g1;
    const int b_frag = STAGES * A_STAGE + 2 * t * DP_LDB + wn + 2 * g;

    double acc[MT][4][4];
#pragma unroll
    for (int i = 0; i < MT; ++i) {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                acc[i][j][r] = 0.0;
            }
        }
    }

    // Slice x lives in stage x % STAGES. Prologue: slices 0 .. STAGES-2, one
    // commit group each (empty past K).
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < nk) {
            load_stage(s, s);
        }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
    __syncthreads();

    // Swapped operands: the mma computes the warp's C tile transposed,
    // C^T = B^T A^T: the mma's 16 "rows" are 16 columns of C and its 8
    // "columns" are 8 rows of C. Every 16-byte load then fills two adjacent
    // fragment registers in the order the mma reads them, so ptxas needs no
    // register copies (with the mma's A from A, a load's two doubles belong
    // to fragment slots two registers apart, and the previous version of this
    // body spent about 75 IMAD.MOV per slice on them):
    // - mma A (from B), column tile ct (16 columns: mma row i <-> column
    //   wn + 16 ct + 2 (i & 7) + (i >> 3)): a[2j], a[2j + 1] = B[k of slot
    //   t + 4j][wn + 16 ct + 2g + {0, 1}], one 16-byte load;
    // - mma B (from A), row tile rt (8 rows: mma column j <-> row
    //   wm + 8 rt + j): b[2 grp], b[2 grp + 1] = A[wm + 8 rt + g][k of
    //   slots t, t + 4 of group grp], one 16-byte load;
    // - accumulators: c0, c2 = C[row 8 rt + 2t][16 ct + 2g + {0, 1}],
    //   c1, c3 = C[row 8 rt + 2t + 1][same columns] (double2 stores).
    typedef double SwA[KI / 2];  // mma A fragment: one 16-column tile
    typedef double SwB[KI / 4];  // mma B fragment: one 8-row tile
    auto load_sa = [&](SwA& f, int stage, int kstep, int ct) {
        const double* bs = dg_smem + stage * B_STAGE;
#pragma unroll
        for (int grp = 0; grp < KG; ++grp) {
            const int s8 = kstep * KG + grp;
#pragma unroll
            for (int r = 0; r < 2; ++r) {
                const double2 v = *reinterpret_cast<const double2*>(
                    bs + b_frag + (8 * s8 + r) * DP_LDB + 16 * ct);
                f[2 * (2 * grp + r)] = v.x;
                f[2 * (2 * grp + r) + 1] = v.y;
            }
        }
    };
    auto load_sb = [&](SwB& f, int stage, int kstep, int rt) {
        const double* as = dg_smem + stage * A_STAGE;
#pragma unroll
        for (int grp = 0; grp < KG; ++grp) {
            const int s8 = kstep * KG + grp;
            const int ao = ((s8 & 1) ? a_odd : a_even) + 8 * s8;
            const double2 v = *reinterpret_cast<const double2*>(as + ao + 8 * rt * BK);
            f[2 * grp] = v.x;
            f[2 * grp + 1] = v.y;
        }
    };
    auto mma = [&](int ct, int rt, const SwA& fa, const SwB& fb) {
        double(&d)[4] = acc[(ct * 8 + rt) >> 2][(ct * 8 + rt) & 3];
        if (KI == 8) {
            dg_mma_16x8x8(d, *reinterpret_cast<const double(*)[4]>(fa),
                          *reinterpret_cast<const double(*)[2]>(fb));
        } else {
            dg_mma_16x8x16(d, *reinterpret_cast<const double(*)[8]>(fa),
                           *reinterpret_cast<const double(*)[4]>(fb));
        }
    };
    constexpr int NB = DB ? 2 : 1;  // fragment register sets
    static_assert(!DB || NSTEP % 2 == 0, "double buffering: an even count of steps per slice");
    SwA fa[NB][2];
    SwB fb[NB][8];
    if (nk > 0) {
#pragma unroll
        for (int ct = 0; ct < 2; ++ct) {
            load_sa(fa[0][ct], 0, 0, ct);
        }
#pragma unroll
        for (int rt = 0; rt < 8; ++rt) {
            load_sb(fb[0][rt], 0, 0, rt);
        }
    }
    int rs = 0;  // stage holding slice kt
    for (int kt = 0; kt < nk; ++kt) {
        const int nrs = (rs + 1 == STAGES) ? 0 : rs + 1;
#pragma unroll
        for (int ks = 0; ks < NSTEP; ++ks) {
            const int c = DB ? (ks & 1) : 0;  // set read by this step
            const int n = DB ? (c ^ 1) : 0;   // set loaded for the next one
            const bool last = ks + 1 == NSTEP;
            if (last) {
                // Slice kt + 1 complete and visible; every thread is done
                // with slice kt - 1's stage.
                asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 3) : "memory");
                __syncthreads();
            }
            const int nst = last ? nrs : rs;
            const int nks = last ? 0 : ks + 1;
            // Order: column tile 0 across the 8 row tiles, then column
            // tile 1. Double-buffered, each next-step load comes 8 mmas
            // after the last reader of its registers; single-buffered,
            // each fragment reloads right after its last mma of this step
            // (8 mmas before its next use).
#pragma unroll
            for (int ct = 0; ct < 2; ++ct) {
#pragma unroll
                for (int rt = 0; rt < 8; ++rt) {
                    mma(ct, rt, fa[c][ct], fb[c][rt]);
                    if (DB) {
                        if (ct == 0) {
                            load_sb(fb[n][rt], nst, nks, rt);
                        }
                    } else if (ct == 1) {
                        load_sb(fb[n][rt], nst, nks, rt);
                    }
                }
                if (DB) {
                    if (ct == 0) {
                        load_sa(fa[n][0], nst, nks, 0);
                        load_sa(fa[n][1], nst, nks, 1);
                    }
                } else {
                    load_sa(fa[n][ct], nst, nks, ct);
                }
            }
        }
        if (kt + STAGES - 1 < nk) {
            load_stage(rs == 0 ? STAGES - 1 : rs - 1, kt + STAGES - 1);
        }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        rs = nrs;
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");

    const bool vec_c = !MID || (((N & 1) == 0) && ((((unsigned long long)C) & 15) == 0));
#pragma unroll
    for (int ct = 0; ct < 2; ++ct) {
#pragma unroll
        for (int rt = 0; rt < 8; ++rt) {
            const double(&d)[4] = acc[(ct * 8 + rt) >> 2][(ct * 8 + rt) & 3];
            const int row = m0 + wm + 8 * rt + 2 * t;
            const int col = n0 + wn + 16 * ct + 2 * g;
            double* p0 = C + (long long)row * N + col;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                double w0 = alpha * d[h];
                double w1 = alpha * d[h + 2];
                if (MID && row + h < m_lo) {
                    continue;
                }
                if (vec_c) {
                    // MID: col and n_lo are even here (N even), so the pair
                    // is wholly inside or outside the block's own columns.
                    if (MID && col < n_lo) {
                        continue;
                    }
                    double2* p = reinterpret_cast<double2*>(p0 + (long long)h * N);
                    if (beta != 0.0) {
                        const double2 cv = *p;
                        w0 = fma(beta, cv.x, w0);
                        w1 = fma(beta, cv.y, w1);
                    }
                    *p = make_double2(w0, w1);
                } else {
                    double* p = p0 + (long long)h * N;
                    if (col >= n_lo) {
                        p[0] = (beta != 0.0) ? fma(beta, p[0], w0) : w0;
                    }
                    if (col + 1 >= n_lo) {
                        p[1] = (beta != 0.0) ? fma(beta, p[1], w1) : w1;
                    }
                }
            }
        }
    }
}

// Whether this block's tile can take the pipelined path: the whole 128 x 128
// tile in range, K a multiple of BK (every slice full), and A, B and C
// 16-byte aligned with even K and N (all copies and stores 16 bytes wide).
template <int BK, int GM>
__device__ __forceinline__ bool dg_pipe_eligible(int M, int N, int K, const double* A,
                                                 const double* B, const double* C) {
    int tm, tn;
    dg_tile_coords<GM>(tm, tn);
    const unsigned long long al =
        ((unsigned long long)A | (unsigned long long)B | (unsigned long long)C) & 15;
    return al == 0 && ((K | N) & 1) == 0 && K % BK == 0 && (tm + 1) * DG_BM <= M &&
           (tn + 1) * DG_BN <= N;
}

// Per block: the pipelined body on a whole tile (dg_pipe_eligible); with
// MIDP (issue 23), when the matrix holds a whole 128 x 128 tile, the
// pipelined body's MID variant on the block's tile slid back inside the
// matrix (origin min(m0, M - 128), min(n0, N - 128); it stores only its own
// part), for any K, N and alignment; else dgemm_body<32, 3, 16, 4, GM>'s
// bounds-checked body. Without MIDP (the dispatch before issue 23) every
// block that is not eligible runs the bounds-checked body.
template <int BK, int STAGES, int KI, int GM, bool DB, bool MIDP>
__device__ __forceinline__ void dg_dispatch(int M, int N, int K, double alpha,
                                            const double* __restrict__ A,
                                            const double* __restrict__ B, double beta,
                                            double* __restrict__ C) {
    int tm, tn;
    dg_tile_coords<GM>(tm, tn);
    const int m0 = tm * DG_BM, n0 = tn * DG_BN;
    if (dg_pipe_eligible<BK, GM>(M, N, K, A, B, C)) {
        dgemm_pipe_body<BK, STAGES, KI, GM, DB>(M, N, K, alpha, A, B, beta, C, m0, n0, m0, n0);
    } else if (MIDP && M >= DG_BM && N >= DG_BN) {
        dgemm_pipe_body<BK, STAGES, KI, GM, DB, true>(M, N, K, alpha, A, B, beta, C,
                                                      min(m0, M - DG_BM), min(n0, N - DG_BN),
                                                      m0, n0);
    } else {
        dgemm_body<32, 3, 16, 4, GM>(M, N, K, alpha, A, B, beta, C);
    }
}

// C = alpha*A*B + beta*C, f64, through dg_dispatch: the pipelined body
// dgemm_pipe_body<BK, STAGES, KI, GM, DB> (whole tiles, and with MIDP the
// other tiles of a matrix at least 128 x 128), else dgemm_body<32, 3, 16, 4,
// GM>. Block (256, 1, 1), exactly; grid (ceil(N/128), ceil(M/128), 1);
// dynamic shared memory DG_SMEM_BYTES(32, 3) = 211968 bytes (raise the
// attribute first), which covers DP_SMEM_BYTES(BK, STAGES) for the
// configurations below. BK a multiple of 16, KI = 8 or 16 dividing BK,
// STAGES >= 3; DB (two fragment register sets) needs an even number of mma
// steps per slice (BK / KI).
// Name expressions used (spelled exactly so):
//   "dgemm_pipe<16, 4, 8, 0, true>"    (= dgemm_dmma_128x128)
//   "dgemm_pipe<16, 4, 8, 0, true, false>"  the default before issue 23
//   "dgemm_pipe<32, 3, 8, 0, true>", "dgemm_pipe<16, 4, 16, 0, false>"
template <int BK, int STAGES, int KI, int GM, bool DB, bool MIDP = true>
__global__ void __launch_bounds__(256, 1)
    dgemm_pipe(int M, int N, int K, double alpha, const double* __restrict__ A,
               const double* __restrict__ B, double beta, double* __restrict__ C) {
    dg_dispatch<BK, STAGES, KI, GM, DB, MIDP>(M, N, K, alpha, A, B, beta, C);
}

// C = alpha*A*B + beta*C, f64. Block (32*4*(128/(16*MT)), 1, 1), exactly
// (MT = 4: 256; MT = 2: 512); grid (ceil(N/128), ceil(M/128), 1); dynamic
// shared memory DG_SMEM_BYTES(BK, STAGES) bytes (raise
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first; at most 232448).
// BK = K slice per stage (multiple of KI; 128*BK/2 and 64*BK/2 copies must
// split evenly over the threads), STAGES = ring depth, KI = mma K (8 or 16),
// MT = m16 tiles per warp (4 or 2), GM = tile-row grouping (0 = none).
// Name expressions used (spelled exactly so):
//   "dgemm_dmma<32, 3, 16, 4, 0>"  256 threads, 211968 B (dgemm_dmma_128x128's
//                                  path for partial tiles)
//   "dgemm_dmma<32, 3, 8, 2, 0>"   512 threads, 211968 B
//   "dgemm_dmma<16, 4, 8, 2, 0>"   512 threads, 149504 B
template <int BK, int STAGES, int KI, int MT, int GM>
__global__ void __launch_bounds__(32 * 4 * (DG_BM / (16 * MT)), 1)
    dgemm_dmma(int M, int N, int K, double alpha, const double* __restrict__ A,
               const double* __restrict__ B, double beta, double* __restrict__ C) {
    dgemm_body<BK, STAGES, KI, MT, GM>(M, N, K, alpha, A, B, beta, C);
}

// The default DGEMM (= dgemm_pipe<16, 4, 8, 0, true>): interior tiles take
// the pipelined path (BK 16, 4 stages, m16n8k8 with two fragment register
// sets, 132096 bytes of the shared memory), and so do the other tiles of a
// matrix of at least 128 x 128 (MID: slid edge tiles, any K, 8-byte copies
// where needed); smaller matrices dgemm_dmma<32, 3, 16, 4, 0>'s
// bounds-checked path.
// Block (256, 1, 1); grid (ceil(N/128), ceil(M/128), 1); dynamic shared
// memory DG_SMEM_BYTES(32, 3) = 211968 bytes.
extern "C" __global__ void __launch_bounds__(256, 1)
    dgemm_dmma_128x128(int M, int N, int K, double alpha, const double* __restrict__ A,
                       const double* __restrict__ B, double beta, double* __restrict__ C) {
    dg_dispatch<16, 4, 8, 0, true, true>(M, N, K, alpha, A, B, beta, C);
}
