// cudakit FP8 GEMM kernels for Hopper (sm_90a): wgmma tensor cores fed by TMA.
//
// C = alpha * scale_a * scale_b * A * B^T + beta * C with A (M x K, row-major)
// and B (stored N x K, row-major: both operands K-major, the only layout
// wgmma accepts for 8-bit types) in OCP FP8 (e4m3, or e5m2 for A), the
// products accumulated by the tensor cores in their own FP8 accumulation
// ("fast accumulation", see kernels/README.md for its precision), C in f32.
// See kernels/README.md for every kernel's parameters, launch geometry and
// tensor maps.
//
// Self-contained: no #include (NVRTC 13 has no cuda_fp8.h built in); FP8
// values travel as their raw bytes (`unsigned char`), read only through the
// tensor maps. wgmma needs the sm_90a target (-arch=sm_90a).
//
// Design, derived from gemm_sm90.cu (one 128 x 256 tile of C at a time):
// - 3 warpgroups (384 threads). Warpgroup 0 is the producer: one thread
//   issues the TMA loads (cp.async.bulk.tensor) of A's 128 x 128-byte and
//   B's 256 x 128-byte slices into a ring of 4 shared-memory stages, each
//   guarded by a "full" and an "empty" mbarrier; it gives its registers
//   away (setmaxnreg).
// - Warpgroups 1 and 2 are consumers: each owns 64 rows of the tile and
//   issues wgmma.m64n256k32 (4 per stage: 128 bytes of K) over all 256
//   columns, 128 f32 accumulators per thread. One stage's batch stays in
//   flight while the next is issued; a stage is released when the batch
//   that read it has completed.
// - Persistent: the grid may be smaller than the number of tiles (the host
//   launches min(tiles, SMs)); each CTA walks tiles blockIdx.x,
//   blockIdx.x + gridDim.x, ... The ring's stage and phase counters run on
//   across tiles, so the producer loads the next tile's first stages while
//   the consumers are still in the previous tile's epilogue.
// - 128-byte swizzle in shared memory, written by TMA and read by wgmma.
// - Edges: TMA zero-fills every element of a box outside the tensor map's
//   dimensions, so partial tiles in M, N and K contribute zeros; the
//   epilogue bounds-checks every store. Any M, N, K >= 0 (K = 0 gives
//   C = beta*C); the host keeps every row pitch a multiple of 16 bytes.
// - beta == 0: C is only written (BLAS semantics).
// - Tiles are visited in groups of 8 tile-rows so that CTAs running at the
//   same time share A and B slices in L2.

struct alignas(64) TensorMap {
    unsigned long long v[16];
};

#define F8_BM 128
#define F8_BN 256
#define F8_BK 128  // K elements (= bytes) per stage: one 128-byte swizzle row
#define F8_KSTEP 32
#define F8_STAGES 4
#define F8_THREADS 384
#define F8_GROUP_M 8
#define F8_A_STAGE_BYTES (F8_BM * F8_BK)
#define F8_B_STAGE_BYTES (F8_BN * F8_BK)
#define F8_STAGE_BYTES (F8_A_STAGE_BYTES + F8_B_STAGE_BYTES)
// Dynamic shared memory: the stages plus 1 KB so that the ring can be
// aligned to 1024 bytes (the 128-byte swizzle's period).
#define F8_SMEM_BYTES (F8_STAGES * F8_STAGE_BYTES + 1024)

namespace sm90f8 {

__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void mbar_init(unsigned bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_expect_tx(unsigned bar, unsigned bytes) {
    asm volatile(
        "{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(bar),
        "r"(bytes)
        : "memory");
}

__device__ __forceinline__ void mbar_arrive(unsigned bar) {
    asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(bar)
                 : "memory");
}

__device__ __forceinline__ void mbar_wait(unsigned bar, unsigned parity) {
    unsigned done = 0;
    do {
        asm volatile(
            "{\n.reg .pred p;\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n}\n"
            : "=r"(done)
            : "r"(bar), "r"(parity)
            : "memory");
    } while (!done);
}

// 2-D TMA load of one box into shared memory, completing on `bar`; c0 is
// the element index along the innermost (contiguous) dimension.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TensorMap* map, unsigned bar, int c0,
                                            int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
        "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}

__device__ __forceinline__ void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"):
// start address, leading-dimension byte offset, stride-dimension byte
// offset (16-byte units); bits 62-63 = 1: 128-byte swizzle; base offset 0
// (every tile starts 1024-byte aligned).
__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) |
           ((unsigned long long)((lbo >> 4) & 0x3FFF) << 16) |
           ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

#define F8_ACC128_REGS                                                                                   \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                            \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                   \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                   \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "                   \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "                   \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "                   \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "       \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
#define F8_ACC128_OUT(d)                                                                                             \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),                  \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),            \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),          \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),          \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]),          \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),          \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),          \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]),          \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),          \
    "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]),          \
    "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]),          \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),          \
    "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]),      \
    "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),  \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),  \
    "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// One wgmma m64n256k32 with 8-bit inputs, both read K-major from shared
// memory (8-bit wgmma has no transpose immediates). A_KIND 0: A e4m3;
// 1: A e5m2. B is e4m3.
template <int A_KIND>
__device__ __forceinline__ void wgmma_m64n256k32(float (&d)[128], unsigned long long da,
                                                 unsigned long long db) {
    if (A_KIND == 0) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 " F8_ACC128_REGS
            "%128, %129, p, 1, 1;\n}\n"
            : F8_ACC128_OUT(d)
            : "l"(da), "l"(db), "r"(1)
            : "memory");
    } else {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e4m3 " F8_ACC128_REGS
            "%128, %129, p, 1, 1;\n}\n"
            : F8_ACC128_OUT(d)
            : "l"(da), "l"(db), "r"(1)
            : "memory");
    }
}

// Tile `tile` of a tiles_m x tiles_n grid, walked in groups of F8_GROUP_M
// tile-rows: its first row and column of C.
__device__ __forceinline__ void tile_origin(int tile, int tiles_m, int tiles_n, int& m0, int& n0) {
    const int per_group = F8_GROUP_M * tiles_n;
    const int first_m = (tile / per_group) * F8_GROUP_M;
    const int group_rows = min(tiles_m - first_m, F8_GROUP_M);
    const int in_group = tile % per_group;
    m0 = (first_m + in_group % group_rows) * F8_BM;
    n0 = (in_group / group_rows) * F8_BN;
}

// Tensor maps (kernels/README.md): A dims {K, M}, box {128, 128}; B dims
// {K, N}, box {128, 256}; both UINT8, 128-byte swizzle, zero fill.
template <int A_KIND>
__device__ __forceinline__ void gemm_body(const TensorMap* tmA, const TensorMap* tmB,
                                          float* __restrict__ C, int M, int N, int K, float alpha,
                                          float beta, const float* __restrict__ scale_a,
                                          const float* __restrict__ scale_b) {
    extern __shared__ unsigned char f8_dyn_smem[];
    __shared__ __align__(8) unsigned long long full_bar[F8_STAGES];
    __shared__ __align__(8) unsigned long long empty_bar[F8_STAGES];

    const unsigned ring = (smem_addr(f8_dyn_smem) + 1023u) & ~1023u;
    const unsigned a_base = ring;                                   // STAGES x 16 KB
    const unsigned b_base = ring + F8_STAGES * F8_A_STAGE_BYTES;    // STAGES x 32 KB

    const int tid = threadIdx.x;
    const int wg = tid >> 7;

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < F8_STAGES; ++s) {
            mbar_init(smem_addr(&full_bar[s]), 1);
            mbar_init(smem_addr(&empty_bar[s]), 8);  // one arrival per consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    const int tiles_m = (M + F8_BM - 1) / F8_BM;
    const int tiles_n = (N + F8_BN - 1) / F8_BN;
    const int tiles = tiles_m * tiles_n;
    const int nk = (K + F8_BK - 1) / F8_BK;

    if (wg == 0) {
        // Producer warpgroup: registers go to the consumers.
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 0) {
            unsigned it = 0;  // stage uses so far, across tiles
            for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
                int m0, n0;
                tile_origin(tile, tiles_m, tiles_n, m0, n0);
                for (int kt = 0; kt < nk; ++kt, ++it) {
                    const unsigned s = it % F8_STAGES;
                    if (it >= F8_STAGES) {
                        mbar_wait(smem_addr(&empty_bar[s]), ((it / F8_STAGES) - 1) & 1);
                    }
                    const unsigned fb = smem_addr(&full_bar[s]);
                    mbar_expect_tx(fb, F8_STAGE_BYTES);
                    const int k0 = kt * F8_BK;
                    tma_load_2d(a_base + s * F8_A_STAGE_BYTES, tmA, fb, k0, m0);
                    tma_load_2d(b_base + s * F8_B_STAGE_BYTES, tmB, fb, k0, n0);
                }
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int cw = wg - 1;  // consumer 0 or 1: rows 64*cw .. 64*cw+63 of the tile
        const int lane = tid & 31;
        const int warp = (tid >> 5) & 3;
        const int g = lane >> 2;
        const int t = lane & 3;
        const float sa = scale_a ? *scale_a : 1.0f;
        const float sb = scale_b ? *scale_b : 1.0f;
        const float ab = alpha * (sa * sb);
        const bool pair_ok = ((N & 1) == 0) && ((((unsigned long long)C) & 7) == 0);
        unsigned it = 0;
        for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
            int m0, n0;
            tile_origin(tile, tiles_m, tiles_n, m0, n0);
            float d[128];
#pragma unroll
            for (int i = 0; i < 128; ++i) {
                d[i] = 0.0f;
            }
            for (int kt = 0; kt < nk; ++kt, ++it) {
                const unsigned s = it % F8_STAGES;
                mbar_wait(smem_addr(&full_bar[s]), (it / F8_STAGES) & 1);
                const unsigned a_tile = a_base + s * F8_A_STAGE_BYTES + cw * (64 * F8_BK);
                const unsigned b_tile = b_base + s * F8_B_STAGE_BYTES;
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < F8_BK / F8_KSTEP; ++kk) {
                    // K-major, 128-byte rows, 8-row groups 1024 bytes apart; a
                    // K step of 32 bytes moves the start inside the swizzled row.
                    const unsigned long long da = make_desc(a_tile + kk * F8_KSTEP, 16, 1024);
                    const unsigned long long db = make_desc(b_tile + kk * F8_KSTEP, 16, 1024);
                    wgmma_m64n256k32<A_KIND>(d, da, db);
                }
                wgmma_commit();
                // Keep this batch in flight; the previous one is complete after this.
                wgmma_wait<1>();
                if (kt > 0 && lane == 0) {
                    mbar_arrive(smem_addr(&empty_bar[(it - 1) % F8_STAGES]));
                }
            }
            wgmma_wait<0>();
            if (nk > 0 && lane == 0) {
                // The tile's last stage: free it for the next tile's loads.
                mbar_arrive(smem_addr(&empty_bar[(it - 1) % F8_STAGES]));
            }

            // Epilogue. Accumulator layout of wgmma m64nN (f32): for column
            // block j (8 columns), d[4j + r] is row 16*warp + g + 8*(r >> 1),
            // column 8j + 2t + (r & 1), with g = lane / 4, t = lane % 4.
            const int row0 = m0 + cw * 64 + warp * 16 + g;
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = row0 + 8 * h;
                if (row < M) {
                    float* crow = C + (long long)row * N;
#pragma unroll
                    for (int j = 0; j < 32; ++j) {
                        const int col = n0 + 8 * j + 2 * t;
                        const float v0 = ab * d[4 * j + 2 * h];
                        const float v1 = ab * d[4 * j + 2 * h + 1];
                        if (pair_ok) {
                            if (col < N) {
                                float2* p = reinterpret_cast<float2*>(crow + col);
                                float2 o;
                                if (beta != 0.0f) {
                                    const float2 c = *p;
                                    o.x = v0 + beta * c.x;
                                    o.y = v1 + beta * c.y;
                                } else {
                                    o.x = v0;
                                    o.y = v1;
                                }
                                *p = o;
                            }
                        } else {
                            if (col < N) {
                                crow[col] = (beta != 0.0f) ? v0 + beta * crow[col] : v0;
                            }
                            if (col + 1 < N) {
                                crow[col + 1] = (beta != 0.0f) ? v1 + beta * crow[col + 1] : v1;
                            }
                        }
                    }
                }
            }
        }
    }
}

}  // namespace sm90f8

// ---------------------------------------------------------------------------
// Kernels. Block (384, 1, 1); grid (G, 1, 1) for any G >= 1, best
// min(ceil(M/128) * ceil(N/256), SMs); dynamic shared memory F8_SMEM_BYTES
// = 197632 bytes (raise CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
// first). scale_a, scale_b: device pointers to one f32 each, or null for 1.
// ---------------------------------------------------------------------------

#define F8_KERNEL(NAME, A_KIND)                                                                  \
    extern "C" __global__ void __launch_bounds__(F8_THREADS, 1)                                  \
        NAME(const __grid_constant__ TensorMap tmA, const __grid_constant__ TensorMap tmB,       \
             float* __restrict__ C, int M, int N, int K, float alpha, float beta,                \
             const float* __restrict__ scale_a, const float* __restrict__ scale_b) {             \
        sm90f8::gemm_body<A_KIND>(&tmA, &tmB, C, M, N, K, alpha, beta, scale_a, scale_b);        \
    }

// Each kernel is compiled unless CUDAKIT_ONLY is defined without its own
// CUDAKIT_ONLY_<name> (MatmulKernel::program compiles one kernel).
// A e4m3 M x K, B e4m3 stored N x K.
#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_gemm_sm90_e4m3_nt)
F8_KERNEL(gemm_sm90_e4m3_nt, 0)
#endif
// A e5m2 M x K, B e4m3 stored N x K.
#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_gemm_sm90_e5m2_e4m3_nt)
F8_KERNEL(gemm_sm90_e5m2_e4m3_nt, 1)
#endif
