// cudakit SGEMM: f32 GEMM on the CUDA cores (FFMA, no tf32), for sm_80+ and
// tuned on the H200 (sm_90). See kernels/README.md.
//
// Self-contained: no #include. Row-major packed layout as in kernels/README.md:
// A is M x K (A[i*K + k]), B is K x N (B[k*N + j]), C is M x N (C[i*N + j]).
// C = alpha * A * B + beta * C; when beta == 0, C is not read. Any M, N, K >= 0
// and any alignment (every load is in range by construction or
// bounds-checked and zero-filled, every store in the block's own part of C);
// offsets are 64-bit. Accumulation in f32, one FMA per k, ascending k per
// output element.
//
// Design: a block of 256 threads (8 warps) computes a BM x BN tile of C;
// each thread computes (4*RM) x (4*CN) outputs held in registers, as RM x CN
// blocks of 4 x 4. Lanes form a LANES_M x (32/LANES_M) grid inside the warp
// (lr = lane / (32/LANES_M), lc = lane % (32/LANES_M)); a thread's rows are
// wm + 4*lr + 4*LANES_M*r + {0..3} (r < RM) and its columns
// wn + 4*lc + 4*(32/LANES_M)*c + {0..3} (c < CN), where warp w owns the
// warp tile at (wm, wn) in a WARPS_M x (8/WARPS_M) arrangement. So
// BM = WARPS_M * 4*LANES_M * RM and BN = (8/WARPS_M) * 4*(32/LANES_M) * CN.
//
// K advances in slices of 16, double-buffered in shared memory: the next
// slice's global loads (16-byte vectors where K and N are multiples of 4,
// scalar otherwise) are in flight while the current slice is computed (A in
// registers, B by cp.async straight into the other buffer, zero-filled past
// the edges), so there is one __syncthreads per slice. The shared-memory
// fragments of k step k + 1 are read into a second register set while step
// k's FMAs run; the last step of a slice stores the next A slice, waits for
// the next B slice and passes the barrier before its FMAs, so the next
// slice's first fragments load behind them. With A2 (the default's whole
// tiles), A's fragments are read two steps ahead into four register sets and
// the barrier moves to step 14: ncu showed the first FMAs of each step waiting
// on the shared-memory loads (short-scoreboard stalls, 0.35 per issued
// instruction against cuBLAS's 0.19), and the earlier A loads cut that wait.
//
// Interior blocks (the whole tile in range, K % 16 == 0, A and B allow
// 16-byte vectors) run a copy of the body without bounds checks, with running
// pointers (PATH = SG_FULL; the dispatch picks per block); this cut the main
// loop's non-FMA instructions by about half. Since issue 23 every other
// block of a matrix that holds a whole tile runs the SG_MID copy: its tile
// slid back inside the matrix (the overlap computed twice, stored once),
// copies by cp.async (A 4-byte, transposed; B 16-byte when N % 4 == 0 and B
// is aligned, else 4-byte), no checks but in the last K slice; and a
// 128 x 256 kernel runs a last tile column of width <= 128 as 256 x 128
// tiles, half as many blocks (sgemm_dispatch_mid).
//
// A's slice is stored transposed (As[k][i]) so that a thread reads its A
// values as 16-byte vectors; the columns are XOR-swizzled by
// 8 * ((k / 4) % 4), which makes the transposing stores free of bank
// conflicts and keeps every 4-aligned group of columns contiguous.
//
// Measured on the H200 (kernels/README.md): the 128 x 256 tile with
// 8 x 16 outputs per thread (sgemm_128x256) is the fastest shape tried
// (47.1 / 47.5 TFLOP/s at 4096^3 / 8192^3, 0.92 / 0.93x cuBLAS in the same
// process).

#define SG_BK 16

// Block -> tile mapping. GM = 0: tile (blockIdx.y, blockIdx.x). GM > 0: the
// same grid is walked in groups of GM tile-rows (column-major inside a group)
// so that blocks running at the same time share A and B panels in L2.
template <int GM>
__device__ __forceinline__ void sg_tile_coords(int& tm, int& tn) {
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
#define SG_THREADS 256

// sgemm_body's paths: bounds-checked; FULL (whole tile, K % SG_BK == 0,
// 16-byte vectors); MID (a tile inside the matrix, any K, N and alignment).
#define SG_CHECKED 0
#define SG_FULL 1
#define SG_MID 2

// FULL: the caller has checked that this block's whole BM x BN tile is in
// range, K % SG_BK == 0, and A and B allow 16-byte vectors (K % 4 == 0,
// N % 4 == 0, 16-byte aligned): loads and cp.async then run without bounds
// checks from running pointers, and the epilogue stores float4 unchecked when
// C is 16-byte aligned.
template <int RM, int CN, int WARPS_M, int LANES_M, int PATH, bool A2 = false>
__device__ __forceinline__ void sgemm_body(int M, int N, int K, float alpha,
                                           const float* __restrict__ A,
                                           const float* __restrict__ B, float beta,
                                           float* __restrict__ C,
                                           float (&As)[2][SG_BK][WARPS_M * 4 * LANES_M * RM],
                                           float (&Bs)[2][SG_BK][(8 / WARPS_M) * 4 * (32 / LANES_M) * CN],
                                           int m0, int n0, int m_lo, int n_lo, bool small = false) {
    constexpr bool FULL = PATH == SG_FULL;
    constexpr bool MID = PATH == SG_MID;
    constexpr int WARPS_N = 8 / WARPS_M;
    constexpr int LANES_N = 32 / LANES_M;
    constexpr int RSTEP = 4 * LANES_M;  // row distance between a thread's 4-row groups
    constexpr int CSTEP = 4 * LANES_N;  // column distance between its 4-column groups
    constexpr int WTM = RSTEP * RM;     // warp tile rows
    constexpr int WTN = CSTEP * CN;     // warp tile columns
    constexpr int BM = WARPS_M * WTM;
    constexpr int BN = WARPS_N * WTN;
    constexpr int TM = 4 * RM;
    constexpr int TN = 4 * CN;
    static_assert(BM % 64 == 0 && BN % 64 == 0, "tile loads assume 64-multiples");
    static_assert(2 * SG_BK * (BM + BN) * 4 <= 48 * 1024, "static shared memory limit");

    const int tid = threadIdx.x;
    const int warp = tid >> 5;
    const int lane = tid & 31;
    const int wm = (warp / WARPS_N) * WTM;
    const int wn = (warp % WARPS_N) * WTN;
    const int lr = lane / LANES_N;
    const int lc = lane % LANES_N;


    // Loader mapping. A: thread loads rows a_row + 64*i, k = 4*a_kq..+3.
    const int a_row = (tid & 7) + ((tid >> 5) << 3);
    const int a_kq = (tid >> 3) & 3;

    const bool vec_a = ((K & 3) == 0) && ((((unsigned long long)A) & 15) == 0);
    const bool vec_b = ((N & 3) == 0) && ((((unsigned long long)B) & 15) == 0);

    float4 ra[BM / 64];
    // FULL: running pointers to the next slice (A rows a_row + 64 i at k
    // 4 a_kq; B rows kr0 + (SG_THREADS / (BN / 4)) i at column 4 nq0).
    constexpr int B_RSTEP = SG_THREADS / (BN / 4);
    const float* a_next = A + (long long)(m0 + a_row) * K + 4 * a_kq;
    const float* b_next = B + (long long)(tid / (BN / 4)) * N + n0 + 4 * (tid % (BN / 4));
    const long long a_rstride = 64LL * K;
    const long long b_rstride = (long long)B_RSTEP * N;

    // MID: the tile at (m0, n0) lies inside the matrix (the caller slid an
    // edge tile back), so only the last slice's k needs a check. A goes to
    // shared memory by 4-byte cp.async, transposed: thread copies k = mk of
    // rows mr + 16 j (j < BM/16); a warp's copy j covers 4 rows x 8 k, which
    // the MID swizzle (column ^ 4 (k & 7)) spreads over 32 banks. B: 16-byte
    // cp.async as in FULL when vec_b, else 4-byte copies of column tid % BN,
    // k rows tid / BN + (SG_THREADS / BN) j: each copy a warp's 128
    // consecutive bytes.
    static_assert(!MID || (SG_THREADS == 256 && BN <= SG_THREADS), "MID copy map");
    constexpr int MB_RSTEP = SG_THREADS / BN;
    const int mk = 8 * ((tid >> 5) & 1) + (tid & 7);
    const int mr = 4 * (tid >> 6) + ((tid >> 3) & 3);
    // Copy j's column (mr + 16 j) ^ 4 (mk & 7) is (mr ^ (4 mk & 15)) +
    // 16 (j ^ fb) with fb = bit 2 of mk: +16 fb for even j, -16 fb for odd j.
    const int m_fb = 16 * ((mk >> 2) & 1);
    const int m_col = mr ^ ((4 * mk) & 15);
    const unsigned ma_even = (unsigned)__cvta_generic_to_shared(&As[0][mk][0]) +
                             (unsigned)((m_col + m_fb) * 4);
    const unsigned ma_odd = (unsigned)__cvta_generic_to_shared(&As[0][mk][0]) +
                            (unsigned)((m_col - m_fb) * 4);
    const float* ma_next = A + (long long)(m0 + mr) * K + mk;
    const long long ma_rstride = 16LL * K;
    const unsigned mb_dst = (unsigned)__cvta_generic_to_shared(&Bs[0][tid / BN][tid % BN]);
    const float* mb_next = B + (long long)(tid / BN) * N + n0 + tid % BN;
    const long long mb_rstride = (long long)MB_RSTEP * N;

    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            acc[i][j] = 0.0f;
        }
    }

    const int nk = (K + SG_BK - 1) / SG_BK;

    auto load_tile = [&](int kt) {
        if (MID) {
            // The last slice of a K that is no multiple of SG_BK zero-fills
            // k >= K (source size 0, from a valid address).
            const int buf = kt & 1;
            const unsigned de = ma_even + (unsigned)(buf * SG_BK * BM * 4);
            const unsigned dodd = ma_odd + (unsigned)(buf * SG_BK * BM * 4);
            const float* p = ma_next;
            if (small || (kt + 1 == nk && (K % SG_BK) != 0)) {
                const bool k_ok = kt * SG_BK + mk < K;
#pragma unroll
                for (int j = 0; j < BM / 16; ++j) {
                    const bool ok = k_ok && mr + 16 * j < M - m0;
                    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(
                                     ((j & 1) ? dodd : de) + (unsigned)(64 * j)),
                                 "l"(ok ? p : A), "r"(ok ? 4 : 0)
                                 : "memory");
                    p += ma_rstride;
                }
            } else {
#pragma unroll
                for (int j = 0; j < BM / 16; ++j) {
                    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(
                                     ((j & 1) ? dodd : de) + (unsigned)(64 * j)),
                                 "l"(p)
                                 : "memory");
                    p += ma_rstride;
                }
            }
            ma_next += SG_BK;
            return;
        }
        if (FULL) {
            const float* p = a_next;
#pragma unroll
            for (int i = 0; i < BM / 64; ++i) {
                ra[i] = *reinterpret_cast<const float4*>(p);
                p += a_rstride;
            }
            a_next += SG_BK;
            return;
        }
        const int k0 = kt * SG_BK;
#pragma unroll
        for (int i = 0; i < BM / 64; ++i) {
            const int row = m0 + a_row + 64 * i;
            const int k = k0 + 4 * a_kq;
            const float* p = A + (long long)row * K + k;
            if (vec_a) {
                ra[i] = (row < M && k < K) ? *reinterpret_cast<const float4*>(p)
                                           : make_float4(0.f, 0.f, 0.f, 0.f);
            } else {
                const bool r_ok = row < M;
                ra[i].x = (r_ok && k + 0 < K) ? p[0] : 0.0f;
                ra[i].y = (r_ok && k + 1 < K) ? p[1] : 0.0f;
                ra[i].z = (r_ok && k + 2 < K) ? p[2] : 0.0f;
                ra[i].w = (r_ok && k + 3 < K) ? p[3] : 0.0f;
            }
        }
    };

    // B goes straight to shared memory with cp.async (no registers held across
    // the compute of the current slice); out-of-range elements are zero-filled
    // (source size 0).
    auto load_tile_b = [&](int kt, int buf) {
        if (MID) {
            const bool tail = small || (kt + 1 == nk && (K % SG_BK) != 0);
            const int kleft = K - kt * SG_BK;  // rows of this slice inside K
            if (vec_b) {
                // As FULL, from the slid n0 (a multiple of 4 when N is).
                const float* p = b_next;
                const unsigned dst0 = (unsigned)__cvta_generic_to_shared(
                    &Bs[buf][tid / (BN / 4)][4 * (tid % (BN / 4))]);
#pragma unroll
                for (int i = 0; i < BN / 64; ++i) {
                    const bool ok = !tail || (tid / (BN / 4) + B_RSTEP * i < kleft &&
                                              4 * (tid % (BN / 4)) < N - n0);
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                                     dst0 + (unsigned)(i * B_RSTEP * BN * 4)),
                                 "l"(ok ? p : B), "r"(ok ? 16 : 0)
                                 : "memory");
                    p += b_rstride;
                }
            } else {
                const unsigned dst0 = mb_dst + (unsigned)(buf * SG_BK * BN * 4);
                const float* p = mb_next;
                if (tail) {
#pragma unroll
                    for (int j = 0; j < SG_BK / MB_RSTEP; ++j) {
                        const bool ok = tid / BN + MB_RSTEP * j < kleft && tid % BN < N - n0;
                        asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(
                                         dst0 + (unsigned)(j * MB_RSTEP * BN * 4)),
                                     "l"(ok ? p : B), "r"(ok ? 4 : 0)
                                     : "memory");
                        p += mb_rstride;
                    }
                } else {
#pragma unroll
                    for (int j = 0; j < SG_BK / MB_RSTEP; ++j) {
                        asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(
                                         dst0 + (unsigned)(j * MB_RSTEP * BN * 4)),
                                     "l"(p)
                                     : "memory");
                        p += mb_rstride;
                    }
                }
            }
            b_next += (long long)SG_BK * N;
            mb_next += (long long)SG_BK * N;
            asm volatile("cp.async.commit_group;\n" ::: "memory");
            return;
        }
        if (FULL) {
            static_assert(SG_THREADS % (BN / 4) == 0, "B copy map");
            const float* p = b_next;
            const unsigned dst0 = (unsigned)__cvta_generic_to_shared(
                &Bs[buf][tid / (BN / 4)][4 * (tid % (BN / 4))]);
#pragma unroll
            for (int i = 0; i < BN / 64; ++i) {
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                                 dst0 + (unsigned)(i * B_RSTEP * BN * 4)),
                             "l"(p)
                             : "memory");
                p += b_rstride;
            }
            b_next += (long long)SG_BK * N;
            asm volatile("cp.async.commit_group;\n" ::: "memory");
            return;
        }
        const int k0 = kt * SG_BK;
#pragma unroll
        for (int i = 0; i < BN / 64; ++i) {
            const int c = tid + SG_THREADS * i;
            const int kr = c / (BN / 4);
            const int nq = c % (BN / 4);
            const int k = k0 + kr;
            const int n = n0 + 4 * nq;
            const float* p = B + (long long)k * N + n;
            const unsigned dst = (unsigned)__cvta_generic_to_shared(&Bs[buf][kr][4 * nq]);
            if (vec_b) {
                const bool ok = k < K && n < N;
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
                             "l"(ok ? p : B), "r"(ok ? 16 : 0)
                             : "memory");
            } else {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const bool ok = k < K && n + e < N;
                    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst + 4 * e),
                                 "l"(ok ? p + e : B), "r"(ok ? 4 : 0)
                                 : "memory");
                }
            }
        }
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    };

    auto store_tile = [&](int buf) {
        if (MID) {
            return;  // A arrives by cp.async
        }
        const int swz = a_kq << 3;
#pragma unroll
        for (int i = 0; i < BM / 64; ++i) {
            const int col = (a_row + 64 * i) ^ swz;
            As[buf][4 * a_kq + 0][col] = ra[i].x;
            As[buf][4 * a_kq + 1][col] = ra[i].y;
            As[buf][4 * a_kq + 2][col] = ra[i].z;
            As[buf][4 * a_kq + 3][col] = ra[i].w;
        }
    };

    if (nk > 0) {
        load_tile(0);
        load_tile_b(0, 0);
        store_tile(0);
        asm volatile("cp.async.wait_all;\n" ::: "memory");
        __syncthreads();
    }

    const int a_col0 = wm + 4 * lr;
    const int b_col0 = wn + 4 * lc;

    // Fragments of k step k of buffer buf: A's (TM rows) and B's (TN columns).
    auto load_a = [&](float (&av)[TM], int buf, int k) {
        const int swz = MID ? 4 * (k & 7) : ((k >> 2) & 3) << 3;
#pragma unroll
        for (int r = 0; r < RM; ++r) {
            const float4 v =
                *reinterpret_cast<const float4*>(&As[buf][k][(a_col0 + RSTEP * r) ^ swz]);
            av[4 * r + 0] = v.x;
            av[4 * r + 1] = v.y;
            av[4 * r + 2] = v.z;
            av[4 * r + 3] = v.w;
        }
    };
    auto load_b = [&](float (&bv)[TN], int buf, int k) {
#pragma unroll
        for (int c = 0; c < CN; ++c) {
            const float4 v = *reinterpret_cast<const float4*>(&Bs[buf][k][b_col0 + CSTEP * c]);
            bv[4 * c + 0] = v.x;
            bv[4 * c + 1] = v.y;
            bv[4 * c + 2] = v.z;
            bv[4 * c + 3] = v.w;
        }
    };
    auto load_frag = [&](float (&av)[TM], float (&bv)[TN], int buf, int k) {
        load_a(av, buf, k);
        load_b(bv, buf, k);
    };

    // Without A2: fragments one k step ahead in a second register set; the
    // last step of a slice stores the next A slice, waits for the next B slice
    // and passes the barrier before its FMAs, so that the next slice's first
    // fragments load while those FMAs run.
    if constexpr (A2) {
        // A fragments two k steps ahead (four register sets), B fragments
        // one step ahead (two sets). The barrier moves to step SG_BK - 2,
        // whose A load is the next slice's step 0.
        float av[4][TM];
        float bv[2][TN];
        if (nk > 0) {
            load_a(av[0], 0, 0);
            load_a(av[1], 0, 1);
            load_b(bv[0], 0, 0);
        }
        for (int kt = 0; kt < nk; ++kt) {
            const int cur = kt & 1;
            const bool more = kt + 1 < nk;
            if (more) {
                load_tile(kt + 1);
                load_tile_b(kt + 1, cur ^ 1);
            }
#pragma unroll
            for (int k = 0; k < SG_BK; ++k) {
                if (k == SG_BK - 2) {
                    // The slice's last B fragments before the barrier: after
                    // it, the next slice's cp.async may overwrite the other
                    // B buffer, which the slice before this one used.
                    load_b(bv[(k + 1) & 1], cur, k + 1);
                    if (more) {
                        store_tile(cur ^ 1);
                        asm volatile("cp.async.wait_all;\n" ::: "memory");
                    }
                    __syncthreads();
                    if (more) {
                        load_a(av[(k + 2) & 3], cur ^ 1, 0);
                    }
                } else {
                    if (k + 2 < SG_BK) {
                        load_a(av[(k + 2) & 3], cur, k + 2);
                    } else if (more) {
                        load_a(av[(k + 2) & 3], cur ^ 1, k + 2 - SG_BK);
                    }
                    if (k + 1 < SG_BK) {
                        load_b(bv[(k + 1) & 1], cur, k + 1);
                    } else if (more) {
                        load_b(bv[(k + 1) & 1], cur ^ 1, 0);
                    }
                }
#pragma unroll
                for (int i = 0; i < TM; ++i) {
#pragma unroll
                    for (int j = 0; j < TN; ++j) {
                        acc[i][j] = fmaf(av[k & 3][i], bv[k & 1][j], acc[i][j]);
                    }
                }
            }
        }
    } else {
        float av[2][TM];
        float bv[2][TN];
        if (nk > 0) {
            load_frag(av[0], bv[0], 0, 0);
        }
        for (int kt = 0; kt < nk; ++kt) {
            const int cur = kt & 1;
            const bool more = kt + 1 < nk;
            if (more) {
                load_tile(kt + 1);
                load_tile_b(kt + 1, cur ^ 1);
            }
    #pragma unroll
            for (int k = 0; k < SG_BK; ++k) {
                const int f = k & 1;
                if (k + 1 < SG_BK) {
                    load_frag(av[f ^ 1], bv[f ^ 1], cur, k + 1);
                } else {
                    if (more) {
                        store_tile(cur ^ 1);
                        asm volatile("cp.async.wait_all;\n" ::: "memory");
                    }
                    __syncthreads();
                    if (more) {
                        load_frag(av[f ^ 1], bv[f ^ 1], cur ^ 1, 0);
                    }
                }
    #pragma unroll
                for (int i = 0; i < TM; ++i) {
    #pragma unroll
                    for (int j = 0; j < TN; ++j) {
                        acc[i][j] = fmaf(av[f][i], bv[f][j], acc[i][j]);
                    }
                }
            }
        }
    }

    // Epilogue: rows a_col0 + 16*r + {0..3}, columns b_col0 + 32*c + {0..3}.
    // MID stores only the block's own part of a slid tile: rows >= m_lo,
    // columns >= n_lo (the rest belongs to the neighbouring tile; a MID tile
    // never reaches past M or N).
    const bool vec_c = ((N & 3) == 0) && ((((unsigned long long)C) & 15) == 0);
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = m0 + a_col0 + (i & 3) + (i >> 2) * RSTEP;
        if (!FULL && !MID && row >= M) {
            continue;
        }
        if (MID && (row < m_lo || row >= M)) {
            continue;
        }
        float* crow = C + (long long)row * N;
#pragma unroll
        for (int jb = 0; jb < CN; ++jb) {
            const int col = n0 + b_col0 + CSTEP * jb;
            float v[4];
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                v[e] = alpha * acc[i][4 * jb + e];
            }
            if (vec_c && (FULL || ((!MID || col >= n_lo) && col < N))) {
                float4* p = reinterpret_cast<float4*>(crow + col);
                if (beta != 0.0f) {
                    const float4 c = *p;
                    v[0] = fmaf(beta, c.x, v[0]);
                    v[1] = fmaf(beta, c.y, v[1]);
                    v[2] = fmaf(beta, c.z, v[2]);
                    v[3] = fmaf(beta, c.w, v[3]);
                }
                *p = make_float4(v[0], v[1], v[2], v[3]);
            } else if (!vec_c) {
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    if ((!MID || col + e >= n_lo) && col + e < N) {
                        crow[col + e] = (beta != 0.0f) ? fmaf(beta, crow[col + e], v[e]) : v[e];
                    }
                }
            }
        }
    }
}

// The dispatch before issue 23 (kept for same-run comparisons: MIDP =
// false below): interior blocks (whole tile in range, K % 16 == 0, A and B
// vectorizable) take the FULL body; the others the bounds-checked one.
template <int RM, int CN, int WARPS_M, int LANES_M, int GM, bool A2 = false>
__device__ __forceinline__ void sgemm_dispatch(int M, int N, int K, float alpha,
                                               const float* __restrict__ A,
                                               const float* __restrict__ B, float beta,
                                               float* __restrict__ C) {
    constexpr int BM = WARPS_M * 4 * LANES_M * RM;
    constexpr int BN = (8 / WARPS_M) * 4 * (32 / LANES_M) * CN;
    // One copy of the tiles for both bodies (static shared memory is per
    // declaration).
    __shared__ __align__(16) float As[2][SG_BK][BM];
    __shared__ __align__(16) float Bs[2][SG_BK][BN];
    int tm, tn;
    sg_tile_coords<GM>(tm, tn);
    const int m0 = tm * BM, n0 = tn * BN;
    const bool full = ((K | N) & 3) == 0 && K % SG_BK == 0 &&
                      ((((unsigned long long)A) | ((unsigned long long)B)) & 15) == 0 &&
                      (tm + 1) * BM <= M && (tn + 1) * BN <= N;
    if (full) {
        sgemm_body<RM, CN, WARPS_M, LANES_M, SG_FULL, A2>(M, N, K, alpha, A, B, beta, C, As, Bs,
                                                          m0, n0, m0, n0);
    } else {
        sgemm_body<RM, CN, WARPS_M, LANES_M, SG_CHECKED>(M, N, K, alpha, A, B, beta, C, As, Bs,
                                                         m0, n0, m0, n0);
    }
}

// The dispatch since issue 23. Per block:
// - FULL as above when it qualifies (every block at 4096^3: unchanged there);
// - else, when the matrix holds a whole tile (M >= BM, N >= BN), the MID body
//   on the block's tile slid back inside the matrix (origin min(m0, M - BM),
//   min(n0, N - BN)), storing only its own part: no bounds checks but the
//   last K slice's, 4-byte copies where 16-byte ones are not allowed. Any K,
//   N and alignment. The overlap with the neighbouring tile is computed
//   twice but stored once; an edge tile costs what a whole one does;
// - a 128 x 256 configuration's last tile column, when it is at most 128
//   wide, runs as 256 x 128 tiles (the same 8 x 16 outputs per thread, warps
//   8 x 1, MID): the even tile-rows' blocks each cover their row and the
//   next, the odd ones exit at once. So an N a little past a multiple of 256
//   adds half as many blocks (at 4095 x 4097: 528 working blocks, 4 waves on
//   132 SMs, instead of 544, 5 waves);
// - a matrix smaller than a tile in M or N: MID from the origin, with its
//   copies checked in M and N too (a block-uniform choice inside the copy
//   code; the main loop is the same). The bounds-checked body is not used.
template <int RM, int CN, int WARPS_M, int LANES_M, int GM, bool A2 = false>
__device__ __forceinline__ void sgemm_dispatch_mid(int M, int N, int K, float alpha,
                                                   const float* __restrict__ A,
                                                   const float* __restrict__ B, float beta,
                                                   float* __restrict__ C) {
    constexpr int BM = WARPS_M * 4 * LANES_M * RM;
    constexpr int BN = (8 / WARPS_M) * 4 * (32 / LANES_M) * CN;
    constexpr bool TWIN = RM == 2 && CN == 4 && BM == 128 && BN == 256;
    // One copy of the tiles for every body, viewed in each body's shape.
    __shared__ __align__(16) float tiles[2 * SG_BK * (BM + BN)];
    auto& As = *reinterpret_cast<float(*)[2][SG_BK][BM]>(tiles);
    auto& Bs = *reinterpret_cast<float(*)[2][SG_BK][BN]>(tiles + 2 * SG_BK * BM);
    int tm, tn;
    sg_tile_coords<GM>(tm, tn);
    const int m0 = tm * BM, n0 = tn * BN;
    const bool full = ((K | N) & 3) == 0 && K % SG_BK == 0 &&
                      ((((unsigned long long)A) | ((unsigned long long)B)) & 15) == 0 &&
                      (tm + 1) * BM <= M && (tn + 1) * BN <= N;
    if (full) {
        sgemm_body<RM, CN, WARPS_M, LANES_M, SG_FULL, A2>(M, N, K, alpha, A, B, beta, C, As, Bs,
                                                          m0, n0, m0, n0);
        return;
    }
    if constexpr (TWIN) {
        if (N - n0 <= BN / 2 && M >= 2 * BM && N >= BN / 2) {
            if (tm & 1) {
                return;  // covered by tile-row tm - 1's block
            }
            auto& As2 = *reinterpret_cast<float(*)[2][SG_BK][2 * BM]>(tiles);
            auto& Bs2 =
                *reinterpret_cast<float(*)[2][SG_BK][BN / 2]>(tiles + 2 * SG_BK * 2 * BM);
            sgemm_body<2, 4, 8, 4, SG_MID, A2>(M, N, K, alpha, A, B, beta, C, As2, Bs2,
                                               min(m0, M - 2 * BM), N - BN / 2, m0, n0);
            return;
        }
    }
    // A matrix smaller than the tile: MID from the origin, its copies then
    // checked in M and N as well (small).
    sgemm_body<RM, CN, WARPS_M, LANES_M, SG_MID, A2>(M, N, K, alpha, A, B, beta, C, As, Bs,
                                                     max(0, min(m0, M - BM)),
                                                     max(0, min(n0, N - BN)), m0, n0,
                                                     M < BM || N < BN);
}

// C = alpha*A*B + beta*C, f32. Block (256, 1, 1), exactly;
// grid (ceil(N/BN), ceil(M/BM), 1); no dynamic shared memory (static
// 2*16*(BM+BN)*4 bytes, at most 48 KB). MIN_BLOCKS is the __launch_bounds__
// minimum of blocks per SM; GM groups tile-rows for L2 reuse (0 = none).
// A2 (whole tiles only): A fragments two k steps ahead instead of one.
// Name expressions used (spelled exactly so):
//   "sgemm_tiled<2, 4, 4, 4, 1, 8, true>"  128 x 256, 8 x 16 per thread (= sgemm_128x256)
//   "sgemm_tiled<2, 4, 4, 4, 1, 8>"  the same with A one step ahead (the previous default)
//   "sgemm_tiled<2, 4, 2, 8, 1, 8>"  128 x 256, 8 x 16 per thread, warps 2 x 4
//   "sgemm_tiled<2, 2, 4, 4, 2, 0>"  128 x 128, 8 x 8 per thread (= sgemm_128x128)
template <int RM, int CN, int WARPS_M, int LANES_M, int MIN_BLOCKS, int GM, bool A2 = false,
          bool MIDP = true>
__global__ void __launch_bounds__(SG_THREADS, MIN_BLOCKS)
    sgemm_tiled(int M, int N, int K, float alpha, const float* __restrict__ A,
                const float* __restrict__ B, float beta, float* __restrict__ C) {
    if constexpr (MIDP) {
        sgemm_dispatch_mid<RM, CN, WARPS_M, LANES_M, GM, A2>(M, N, K, alpha, A, B, beta, C);
    } else {
        sgemm_dispatch<RM, CN, WARPS_M, LANES_M, GM, A2>(M, N, K, alpha, A, B, beta, C);
    }
}

// Each extern "C" kernel is compiled unless CUDAKIT_ONLY is defined without
// its own CUDAKIT_ONLY_<name> (MatmulKernel::program: one kernel a program).
#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_sgemm_128x256)
// The default SGEMM: 128 x 256 tile, 8 x 16 outputs per thread, one block per
// SM (255 registers), tile-rows grouped by 8, A fragments two k steps ahead
// on whole tiles. Grid (ceil(N/256), ceil(M/128), 1).
extern "C" __global__ void __launch_bounds__(SG_THREADS, 1)
    sgemm_128x256(int M, int N, int K, float alpha, const float* __restrict__ A,
                  const float* __restrict__ B, float beta, float* __restrict__ C) {
    sgemm_dispatch_mid<2, 4, 4, 4, 8, true>(M, N, K, alpha, A, B, beta, C);
}
#endif

#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_sgemm_128x128)
// 128 x 128 tile, 8 x 8 outputs per thread, two blocks per SM (127 registers).
// Grid (ceil(N/128), ceil(M/128), 1).
extern "C" __global__ void __launch_bounds__(SG_THREADS, 2)
    sgemm_128x128(int M, int N, int K, float alpha, const float* __restrict__ A,
                  const float* __restrict__ B, float beta, float* __restrict__ C) {
    sgemm_dispatch_mid<2, 2, 4, 4, 0>(M, N, K, alpha, A, B, beta, C);
}
#endif

#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_sgemm_pad)
// The padded path's copies (issue 23; crates/cudakit-suite/src/gemm.rs, Pad::Device): a shape
// whose K % 16 != 0 or N % 4 != 0 keeps every block of the kernels above off the FULL body, so
// the host side copies A and B into zero-padded buffers, runs the kernel on the padded shape
// into a padded C and copies C back. One kernel does each copy:
//   dst[r*dst_cols + c] = (r < src_rows && c < src_cols) ? src[r*src_cols + c] : 0
// for every r < dst_rows, c < dst_cols (both packed row-major, any sizes >= 0, any
// alignment; the source is read only in range). Block (256, 1, 1), exactly; grid
// (ceil(dst_cols/1024), any y >= 1, e.g. min(dst_rows, 65535), 1): block (x, y) copies columns
// 1024x .. 1024x + 1023 of rows y, y + gridDim.y, ..., each thread four columns 256 apart,
// its four loads issued before its stores (memory-level parallelism: the copy is bound by
// DRAM bandwidth).
extern "C" __global__ void __launch_bounds__(256)
    sgemm_pad(const float* __restrict__ src, int src_rows, int src_cols, float* __restrict__ dst,
              int dst_rows, int dst_cols) {
    const long long c0 = blockIdx.x * 1024LL + threadIdx.x;
    for (long long r = blockIdx.y; r < dst_rows; r += gridDim.y) {
        const bool row_in = r < src_rows;
        const float* s = src + (long long)(row_in ? r : 0) * src_cols;
        float* d = dst + (long long)r * dst_cols;
        float v[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const long long c = c0 + 256 * j;
            v[j] = (row_in && c < src_cols) ? s[c] : 0.0f;
        }
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const long long c = c0 + 256 * j;
            if (c < dst_cols) {
                d[c] = v[j];
            }
        }
    }
}
#endif

#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_sgemm_pad_t)
// The transposed padded path's copies: as sgemm_pad, through a transpose,
//   dst[r*dst_cols + c] = (c < src_rows && r < src_cols) ? src[c*src_cols + r] : 0
// for every r < dst_rows, c < dst_cols (packed row-major, any sizes >= 0, any alignment; the
// source is read only in range). Block (32, 8, 1), exactly; grid (ceil(dst_cols/32), any y >= 1,
// e.g. min(ceil(dst_rows/32), 65535), 1): block (x, y) transposes the 32 x 32 tiles at dst
// columns 32x and rows 32y, 32(y + gridDim.y), ..., through a [32][33] shared tile (reads and
// writes coalesced, as transpose.cu's).
extern "C" __global__ void __launch_bounds__(256)
    sgemm_pad_t(const float* __restrict__ src, int src_rows, int src_cols,
                float* __restrict__ dst, int dst_rows, int dst_cols) {
    __shared__ float tile[32][33];
    const long long c0 = blockIdx.x * 32LL;
    for (long long r0 = blockIdx.y * 32LL; r0 < dst_rows; r0 += gridDim.y * 32LL) {
        // Source rows c0 .. c0 + 31, columns r0 .. r0 + 31.
#pragma unroll
        for (int j = threadIdx.y; j < 32; j += 8) {
            const long long sr = c0 + j, sc = r0 + threadIdx.x;
            tile[j][threadIdx.x] =
                (sr < src_rows && sc < src_cols) ? src[sr * src_cols + sc] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int j = threadIdx.y; j < 32; j += 8) {
            const long long r = r0 + j, c = c0 + threadIdx.x;
            if (r < dst_rows && c < dst_cols) {
                dst[r * dst_cols + c] = tile[threadIdx.x][j];
            }
        }
        __syncthreads();
    }
}
#endif
