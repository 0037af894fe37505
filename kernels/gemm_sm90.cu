// cudakit GEMM kernels for Hopper (sm_90a): wgmma tensor cores fed by TMA.
//
// C = alpha * A * op(B) + beta * C, A and B in bf16, f16 or tf32 (f32 bits),
// accumulated in f32 by the tensor cores, C in f32; and the FP8 products
// C = alpha * scale_a * scale_b * A * B^T + beta * C with A in e4m3 or e5m2
// and B in e4m3 (OCP FP8, their raw bytes), accumulated by the tensor cores
// in their own FP8 accumulation ("fast accumulation", see kernels/README.md
// for its precision). See kernels/README.md for every kernel's parameters,
// launch geometry and tensor maps.
//
// Self-contained: no #include. NVRTC 13 has no cuda.h, so the tensor map (a
// CUtensorMap, 128 opaque bytes, 64-byte aligned) is declared here as
// TensorMap and passed by value as a `const __grid_constant__` parameter; the
// host builds it with cuTensorMapEncodeTiled. wgmma needs the sm_90a target
// (-arch=sm_90a); nothing here runs on other architectures.
//
// Design of the bf16, f16, tf32 NT and FP8 kernels (gemm_body;
// gemm_sm90_tf32_nn has its own, further down):
// - Persistent 2-CTA clusters. CTA rank r of a cluster computes the 128 x 256
//   tile at tile-row 2u + r and tile-column n of each unit u (a 256 x 256
//   block of C) that its cluster walks: units u0, u0 + clusters, ... So
//   both CTAs of a cluster need the same slice of B at the same time.
// - 3 warpgroups (384 threads). Warpgroup 0 is the producer: one thread
//   issues the TMA loads (cp.async.bulk.tensor) of A's 128 x BK slice and
//   half of B's BK x 256 slice into a ring of STAGES shared-memory stages.
//   Each CTA multicasts its half of B into both CTAs' stage, so B crosses
//   L2 once per cluster. Each stage is guarded by a pair of mbarriers
//   ("full": this CTA's bytes arrived; "empty": the consumers of both CTAs
//   are done with it, since the partner writes into it too). The ring runs
//   on across tiles: the producer fills the next tile's stages while the
//   consumers store this one. It gives its registers away (setmaxnreg).
// - Warpgroups 1 and 2 are consumers: each owns 64 rows of the tile and
//   issues wgmma.m64n256kX for its rows over the whole 256 columns (X: 32
//   bytes of K, 16 bf16/f16, 8 tf32 or 32 FP8 elements),
//   128 f32 accumulators per thread. One wgmma batch (a K-slice) stays in
//   flight while the next is issued; a stage is released when the batch
//   that read it has completed, and a tile's last stage as soon as its final
//   batch has.
// - Epilogue, beta == 0 and C's rows a multiple of 16 bytes apart (N % 4 ==
//   0, C 16-byte aligned): each consumer writes its 64 x 256 block to shared
//   memory in 64 x 32 pieces (two buffers, 128-byte swizzle: no bank
//   conflicts) that one thread stores with TMA (cp.async.bulk.tensor, map
//   tmC). The stores run on while the next tile's main loop starts; a buffer
//   is written again only after its previous store has read it. TMA clips
//   the pieces at C's edges. Otherwise (beta != 0, or rows not 16-byte
//   apart): direct bounds-checked stores from the registers, reading C for
//   beta.
// - Shared memory tiles use the 128-byte swizzle, which TMA writes and wgmma
//   reads natively: no bank conflicts, no ldmatrix.
// - Edges: TMA zero-fills every element of a box outside the tensor map's
//   dimensions, so partial tiles in M, N and K contribute zeros; a tile-row
//   past M (the second CTA of the last unit when M has an odd number of
//   tile-rows) computes zeros and stores nothing. Any M, N, K >= 0 (K = 0
//   gives C = beta*C).
// - beta == 0: C is only written (BLAS semantics).
// - Units are visited in groups of 4 (8 tile-rows) so that neighbouring
//   clusters share A and B slices in L2.

struct alignas(64) TensorMap {
    unsigned long long v[16];
};

#define SM90_BM 128
#define SM90_BN 256
#define SM90_STAGES 4
#define SM90_THREADS 384
#define SM90_GROUP_M 8
// One stage: A 128 rows x 128 bytes, B 256 x 128 bytes (either layout).
#define SM90_A_STAGE_BYTES (SM90_BM * 128)
#define SM90_B_STAGE_BYTES (SM90_BN * 128)
#define SM90_STAGE_BYTES (SM90_A_STAGE_BYTES + SM90_B_STAGE_BYTES)
// The epilogue's staging: two 64 x 32 f32 pieces of C per consumer.
#define SM90_OUT_PIECE_BYTES (64 * 32 * 4)
#define SM90_OUT_BYTES (4 * SM90_OUT_PIECE_BYTES)
// Dynamic shared memory: the stages, the epilogue's staging and 1 KB so that
// the ring can be aligned to 1024 bytes (the 128-byte swizzle's period).
#define SM90_SMEM_BYTES (SM90_STAGES * SM90_STAGE_BYTES + SM90_OUT_BYTES + 1024)
// gemm_sm90_tf32_nn's: the stages and the alignment slack (no staging).
#define SM90_NN_SMEM_BYTES (SM90_STAGES * SM90_STAGE_BYTES + 1024)
// CTAs per cluster (along M: they share B).
#define SM90_CLUSTER 2

namespace sm90 {

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

// 2-D TMA load of one box into shared memory, completing on `bar`.
// c0 is the element index along the innermost (contiguous) dimension.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TensorMap* map, unsigned bar, int c0,
                                            int c1) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
        "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}

// The same box into shared memory at this address in every CTA of `mask`
// (cluster ranks), completing on the mbarrier at `bar` in each of them.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const TensorMap* map,
                                                      unsigned bar, int c0, int c1,
                                                      unsigned short mask) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
        "l"((unsigned long long)map), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
        : "memory");
}

// 2-D TMA store of one box from shared memory (bulk async-group of this
// thread). TMA writes only the elements inside the map's dimensions.
__device__ __forceinline__ void tma_store_2d(const TensorMap* map, unsigned src, int c0, int c1) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
                     (unsigned long long)map),
                 "r"(c0), "r"(c1), "r"(src)
                 : "memory");
}
__device__ __forceinline__ void bulk_commit() {
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// This thread's bulk stores except the newest N have read their shared memory.
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// This thread's bulk stores are complete.
__device__ __forceinline__ void bulk_wait_all() {
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}
// Makes this thread's shared-memory writes visible to TMA (the async proxy).
__device__ __forceinline__ void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// Named barrier `id` for the 128 threads of one warpgroup, each warp
// reconverged first (bar.sync is .aligned).
__device__ __forceinline__ void warpgroup_bar(int id) {
    __syncwarp();
    asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory");
}
__device__ __forceinline__ void sts_v2(unsigned addr, float x, float y) {
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

__device__ __forceinline__ unsigned cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}
// Every thread of the cluster: arrives and waits (release / acquire). The
// warp reconverges first (the .aligned barrier needs all its threads).
__device__ __forceinline__ void cluster_sync() {
    __syncwarp();
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::
                     : "memory");
}
// Arrives on the mbarrier at this CTA-relative address in cluster CTA `cta`.
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned cta) {
    asm volatile(
        "{\n.reg .b32 ra;\nmapa.shared::cluster.u32 ra, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar),
        "r"(cta)
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
// start address, leading-dimension byte offset (LBO), stride-dimension byte
// offset (SBO), all in 16-byte units; bits 62-63 = 1 selects the 128-byte
// swizzle. Base offset 0: every tile starts 1024-byte aligned.
__device__ __forceinline__ unsigned long long make_desc(unsigned addr, unsigned lbo, unsigned sbo) {
    return (unsigned long long)((addr & 0x3FFFF) >> 4) |
           ((unsigned long long)((lbo >> 4) & 0x3FFF) << 16) |
           ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

// The 128 f32 accumulators of one m64n256 wgmma: the operand list of the
// instruction (asm operands %0..%127) and the matching read-write constraints.
#define SM90_ACC128_REGS                                                                                 \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "                            \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "                   \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "                   \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "                   \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "                   \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "                   \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "       \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "
#define SM90_ACC128_OUT(d)                                                                                           \
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

template <int TNSP_B>
__device__ __forceinline__ void wgmma_m64n256k16_bf16(float (&d)[128], unsigned long long da,
                                          unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " SM90_ACC128_REGS
        "%128, %129, p, 1, 1, 0, %131;\n}\n"
        : SM90_ACC128_OUT(d)
        : "l"(da), "l"(db), "r"(1), "n"(TNSP_B)
        : "memory");
}

template <int TNSP_B>
__device__ __forceinline__ void wgmma_m64n256k16_f16(float (&d)[128], unsigned long long da,
                                          unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 " SM90_ACC128_REGS
        "%128, %129, p, 1, 1, 0, %131;\n}\n"
        : SM90_ACC128_OUT(d)
        : "l"(da), "l"(db), "r"(1), "n"(TNSP_B)
        : "memory");
}

__device__ __forceinline__ void wgmma_m64n256k8_tf32(float (&d)[128], unsigned long long da,
                                          unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " SM90_ACC128_REGS
        "%128, %129, p, 1, 1;\n}\n"
        : SM90_ACC128_OUT(d)
        : "l"(da), "l"(db), "r"(1)
        : "memory");
}

// Element kinds: 0 = bf16, 1 = f16, 2 = tf32 (f32 storage), 3 = e4m3 x e4m3,
// 4 = e5m2 (A) x e4m3 (B).
template <int KIND>
struct Kind {
    static constexpr int BYTES = (KIND == 2) ? 4 : (KIND >= 3 ? 1 : 2);
    static constexpr bool FP8 = KIND >= 3;
    static constexpr int BK = 128 / BYTES;     // K elements per stage: one 128-byte swizzle row
    static constexpr int KSTEP = 32 / BYTES;   // K of one wgmma (16 for 16-bit, 8 for tf32)
};

// 8-bit inputs, both read K-major (8-bit wgmma has no transpose
// immediates). A_E5M2 false: A e4m3; true: A e5m2. B is e4m3.
template <bool A_E5M2>
__device__ __forceinline__ void wgmma_m64n256k32_fp8(float (&d)[128], unsigned long long da,
                                                     unsigned long long db) {
    if (A_E5M2) {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e4m3 " SM90_ACC128_REGS
            "%128, %129, p, 1, 1;\n}\n"
            : SM90_ACC128_OUT(d)
            : "l"(da), "l"(db), "r"(1)
            : "memory");
    } else {
        asm volatile(
            "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
            "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 " SM90_ACC128_REGS
            "%128, %129, p, 1, 1;\n}\n"
            : SM90_ACC128_OUT(d)
            : "l"(da), "l"(db), "r"(1)
            : "memory");
    }
}

template <int KIND, int TNSP_B>
__device__ __forceinline__ void wgmma_tile(float (&d)[128], unsigned long long da,
                                           unsigned long long db) {
    if (KIND == 0) {
        wgmma_m64n256k16_bf16<TNSP_B>(d, da, db);
    } else if (KIND == 1) {
        wgmma_m64n256k16_f16<TNSP_B>(d, da, db);
    } else if (KIND == 2) {
        wgmma_m64n256k8_tf32(d, da, db);
    } else {
        wgmma_m64n256k32_fp8<KIND == 4>(d, da, db);
    }
}

// B_KMAJOR = true: B is stored N x K (op(B)[k][j] = B[j*K + k], "NT");
// tensor map over B with dims {K, N}, box {BK, 128}: each CTA of the cluster
// loads (and multicasts) one half of the tile's 256 columns.
// B_KMAJOR = false: B is stored K x N (op(B)[k][j] = B[k*N + j], "NN"), only
// for 16-bit types (wgmma transposes B in hardware); tensor map over B with
// dims {N, K}, box {64, BK}: four boxes per stage, one per 64 columns, two
// loaded (and multicast) by each CTA of the cluster.
// FP8 (KIND 3, 4): B stored N x K only; scale_a, scale_b: device pointers to
// one f32 each, or null for 1 (the other kinds pass null).
// tmC: C as f32 {N, M} with rows N*4 bytes apart, box {32, 64}, 128-byte
// swizzle; read only when N % 4 == 0 and C is 16-byte aligned (otherwise any
// valid map).
template <int KIND, bool B_KMAJOR>
__device__ __forceinline__ void gemm_body(const TensorMap* tmA, const TensorMap* tmB,
                                          const TensorMap* tmC, float* __restrict__ C, int M,
                                          int N, int K, float alpha, float beta,
                                          const float* __restrict__ scale_a,
                                          const float* __restrict__ scale_b) {
    typedef Kind<KIND> KT;
    constexpr int BK = KT::BK;
    static_assert(B_KMAJOR || KIND <= 1, "tf32 and FP8 wgmma read B K-major only");

    extern __shared__ unsigned char sm90_dyn_smem[];
    __shared__ __align__(8) unsigned long long full_bar[SM90_STAGES];
    __shared__ __align__(8) unsigned long long empty_bar[SM90_STAGES];

    const unsigned ring = (smem_addr(sm90_dyn_smem) + 1023u) & ~1023u;
    const unsigned a_base = ring;                                       // STAGES x 16 KB
    const unsigned b_base = ring + SM90_STAGES * SM90_A_STAGE_BYTES;    // STAGES x 32 KB
    const unsigned out_base = ring + SM90_STAGES * SM90_STAGE_BYTES;    // 4 x 8 KB, 1024-aligned

    const int tid = threadIdx.x;
    const int wg = tid >> 7;
    const unsigned rank = cluster_rank();

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < SM90_STAGES; ++s) {
            mbar_init(smem_addr(&full_bar[s]), 1);
            // One arrival per consumer warp of each CTA of the cluster.
            mbar_init(smem_addr(&empty_bar[s]), 8 * SM90_CLUSTER);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    // The partner's barriers are initialised before anything reaches them.
    cluster_sync();

    // Units: 256 x 256 blocks of C (two tile-rows, one tile-column), grouped
    // 4 unit-rows at a time for L2 reuse, walked by the clusters in turn.
    const int tiles_m = (M + SM90_BM - 1) / SM90_BM;
    const int tiles_n = (N + SM90_BN - 1) / SM90_BN;
    const int units_m = (tiles_m + SM90_CLUSTER - 1) / SM90_CLUSTER;
    const int units = units_m * tiles_n;
    const int unit0 = blockIdx.x / SM90_CLUSTER;
    const int unit_step = gridDim.x / SM90_CLUSTER;
    constexpr int GROUP = SM90_GROUP_M / SM90_CLUSTER;
    const int nk = (K + BK - 1) / BK;
    auto tile_of = [&](int u, int& m0, int& n0) {
        const int per_group = GROUP * tiles_n;
        const int first = (u / per_group) * GROUP;
        const int rows = min(units_m - first, GROUP);
        const int in_group = u % per_group;
        m0 = (SM90_CLUSTER * (first + in_group % rows) + (int)rank) * SM90_BM;
        n0 = (in_group / rows) * SM90_BN;
    };

    if (wg == 0) {
        // Producer warpgroup: registers go to the consumers.
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 0) {
            int it = 0;  // stages filled so far, across tiles
            for (int u = unit0; u < units; u += unit_step) {
                int m0, n0;
                tile_of(u, m0, n0);
                for (int kt = 0; kt < nk; ++kt, ++it) {
                    const int s = it % SM90_STAGES;
                    if (it >= SM90_STAGES) {
                        mbar_wait(smem_addr(&empty_bar[s]), ((it / SM90_STAGES) - 1) & 1);
                    }
                    const unsigned fb = smem_addr(&full_bar[s]);
                    // This CTA's A, its own half of B and the partner's half.
                    mbar_expect_tx(fb, SM90_STAGE_BYTES);
                    const int k0 = kt * BK;
                    tma_load_2d(a_base + s * SM90_A_STAGE_BYTES, tmA, fb, k0, m0);
                    if (B_KMAJOR) {
                        tma_load_2d_multicast(
                            b_base + s * SM90_B_STAGE_BYTES + rank * (SM90_B_STAGE_BYTES / 2), tmB,
                            fb, k0, n0 + (int)rank * (SM90_BN / 2), (unsigned short)0x3);
                    } else {
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const int c = 2 * (int)rank + h;
                            tma_load_2d_multicast(b_base + s * SM90_B_STAGE_BYTES + c * (BK * 128),
                                                  tmB, fb, n0 + 64 * c, k0, (unsigned short)0x3);
                        }
                    }
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
        const bool issuer = (tid & 127) == 0;  // issues this consumer's TMA stores
        // The factor of every product: alpha, and the FP8 kinds' scales.
        float ab = alpha;
        if (KT::FP8) {
            const float sa = scale_a ? *scale_a : 1.0f;
            const float sb = scale_b ? *scale_b : 1.0f;
            ab = alpha * (sa * sb);
        }
        const bool tma_out = beta == 0.0f && (N & 3) == 0 &&
                             (((unsigned long long)C) & 15) == 0;
        const unsigned my_out = out_base + cw * (2 * SM90_OUT_PIECE_BYTES);
        // A stage goes back when this warp's wgmmas that read it are done:
        // one arrival on the stage's empty barrier in each CTA.
        auto release = [&](int it) {
            if (lane == 0) {
                const unsigned eb = smem_addr(&empty_bar[it % SM90_STAGES]);
#pragma unroll
                for (int r = 0; r < SM90_CLUSTER; ++r) {
                    mbar_arrive_cluster(eb, r);
                }
            }
        };
        int it = 0;  // stages consumed so far, across tiles
        for (int u = unit0; u < units; u += unit_step) {
            int m0, n0;
            tile_of(u, m0, n0);
            float d[128];
#pragma unroll
            for (int i = 0; i < 128; ++i) {
                d[i] = 0.0f;
            }
            for (int kt = 0; kt < nk; ++kt, ++it) {
                const int s = it % SM90_STAGES;
                mbar_wait(smem_addr(&full_bar[s]), (it / SM90_STAGES) & 1);
                const unsigned a_tile = a_base + s * SM90_A_STAGE_BYTES + cw * (64 * 128);
                const unsigned b_tile = b_base + s * SM90_B_STAGE_BYTES;
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / KT::KSTEP; ++kk) {
                    // A: K-major, 128-byte rows; 8-row groups 1024 bytes apart; a K step
                    // of 32 bytes moves the start address inside the swizzled row.
                    const unsigned long long da = make_desc(a_tile + kk * 32, 16, 1024);
                    unsigned long long db;
                    if (B_KMAJOR) {
                        db = make_desc(b_tile + kk * 32, 16, 1024);
                    } else {
                        // B MN-major: each k is one 128-byte row of 64 columns; 8-k groups
                        // 1024 bytes apart (SBO); 64-column chunks BK*128 bytes apart (LBO).
                        db = make_desc(b_tile + kk * (KT::KSTEP * 128), BK * 128, 1024);
                    }
                    wgmma_tile<KIND, B_KMAJOR ? 0 : 1>(d, da, db);
                }
                wgmma_commit();
                // Keep this batch in flight; the previous one is complete after this.
                wgmma_wait<1>();
                if (kt > 0) {
                    release(it - 1);
                }
            }
            wgmma_wait<0>();
            if (nk > 0) {
                release(it - 1);
            }

            // Accumulator layout of wgmma m64nN (f32): for column block j (8
            // columns), d[4j + r] is row 16*warp + g + 8*(r >> 1), column
            // 8j + 2t + (r & 1), with g = lane / 4, t = lane % 4.
            if (tma_out) {
#pragma unroll
                for (int q = 0; q < 8; ++q) {
                    // Piece q: the consumer's 64 rows, columns 32q .. 32q+31.
                    const unsigned buf = my_out + (q & 1) * SM90_OUT_PIECE_BYTES;
                    // The store that last read this buffer (two pieces ago, or
                    // the previous tile's) has read it.
                    if (issuer) {
                        bulk_wait_read<1>();
                    }
                    warpgroup_bar(1 + cw);
#pragma unroll
                    for (int jj = 0; jj < 4; ++jj) {
                        const int j = 4 * q + jj;
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            // Row r of the piece is 128 bytes; its 16-byte chunk c sits
                            // at chunk c ^ (r & 7) (the map's 128-byte swizzle).
                            const int r = warp * 16 + g + 8 * h;
                            const unsigned chunk = (unsigned)((2 * jj + (t >> 1)) ^ (r & 7));
                            sts_v2(buf + r * 128 + chunk * 16 + (t & 1) * 8,
                                   ab * d[4 * j + 2 * h], ab * d[4 * j + 2 * h + 1]);
                        }
                    }
                    fence_proxy_async();
                    warpgroup_bar(1 + cw);
                    if (issuer) {
                        tma_store_2d(tmC, buf, n0 + 32 * q, m0 + 64 * cw);
                        bulk_commit();
                    }
                }
            } else {
                const int row0 = m0 + cw * 64 + warp * 16 + g;
                const bool pair_ok = ((N & 1) == 0) && ((((unsigned long long)C) & 7) == 0);
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
        // The staging stays allocated until the last stores have run.
        if (tma_out && issuer) {
            bulk_wait_all();
        }
    }
    // No CTA leaves while its partner may still arrive on its barriers or
    // multicast into its shared memory.
    cluster_sync();
}


// ---------------------------------------------------------------------------
// tf32 NN: A row-major M x K, B row-major K x N, both as stored (no transpose
// pass). wgmma reads a tf32 operand from shared memory K-major only, and B
// stored K x N is N-major, so this kernel computes the transposed product
// C^T = B^T * A^T per tile: B^T is wgmma's A operand, loaded from shared
// memory into registers by the threads (any layout is fine there), and A^T
// is wgmma's B operand, which row-major A already is K-major.
//
// One CTA computes a 256 (M) x 128 (N) tile of C. Consumer warpgroup cw owns
// the tile's columns 64*cw .. 64*cw+63: its wgmma.m64n256k8 has those 64
// columns of C as its rows (M of the instruction) and the tile's 256 rows of
// C as its columns.
//
// Shared memory per stage: A's 256 x 32 slice (K-major, 128-byte rows,
// 128-byte swizzle: 32 KB, one TMA box {32, 256}) and B's 32 x 128 slice as
// four boxes {32 columns, 32 k} (N-major, 128-byte rows, 128-byte swizzle:
// 4 KB each). 48 KB a stage, 4 stages: SM90_NN_SMEM_BYTES.
//
// Register fragment of wgmma's A for tf32 (m64k8, per warp w of the
// warpgroup, lane = 4g + t): a0 = (row 16w + g, k t), a1 = (row + 8, k t),
// a2 = (row, k t + 4), a3 = (row + 8, k t + 4). The instruction's rows may be
// any permutation of the tile's columns, as long as the epilogue applies the
// same one: row 16w + g + 8v is column
//   64*cw + 32*(w >> 1) + 4g + 2*((g & 1) ^ (w & 1)) + v
// so each thread's two rows are two adjacent columns (one 8-byte load per
// k, one float2 store per C row), and a warp's 32 loads of one k-pair hit
// every bank exactly twice (the minimum for 256 bytes) through the swizzle.
// ---------------------------------------------------------------------------

#define SM90_NN_BM 256
#define SM90_NN_BN 128
#define SM90_NN_A_STAGE_BYTES (SM90_NN_BM * 128)
#define SM90_NN_B_STAGE_BYTES (SM90_NN_BN * 128)

__device__ __forceinline__ void wgmma_m64n256k8_tf32_rs(float (&d)[128], const unsigned (&a)[4],
                                                        unsigned long long db) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " SM90_ACC128_REGS
        "{%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
        : SM90_ACC128_OUT(d)
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(1)
        : "memory");
}

// Ties the fragment registers to their values at this point, so that the
// compiler neither moves them nor reuses their registers before: the
// tensor cores read a wgmma's register operands until the wgmma completes.
__device__ __forceinline__ void fence_regs(unsigned (&a)[16]) {
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        asm volatile("" : "+r"(a[i])::"memory");
    }
}

__device__ __forceinline__ void lds_v2(unsigned addr, unsigned& x, unsigned& y) {
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];\n" : "=r"(x), "=r"(y) : "r"(addr));
}

// One stage of the tf32 NN main loop for consumer rows (cw, warp, lane):
// load the stage's B^T fragments into `f` (this parity's set), issue its 4
// wgmmas, keep them in flight, and release the previous stage once the
// previous batch (which read `other`) is complete.
__device__ __forceinline__ void nn_stage(float (&d)[128], unsigned (&f)[16], unsigned (&other)[16],
                                         int kt, unsigned a_base, unsigned b_base,
                                         unsigned long long* full_bar,
                                         unsigned long long* empty_bar, unsigned frag_off_lo,
                                         unsigned frag_off_hi, int lane) {
    const int s = kt % SM90_STAGES;
    mbar_wait(smem_addr(&full_bar[s]), (kt / SM90_STAGES) & 1);
    const unsigned a_tile = a_base + s * SM90_NN_A_STAGE_BYTES;
    const unsigned b_tile = b_base + s * SM90_NN_B_STAGE_BYTES;
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
        // Rows k = 8kk + t and 8kk + t + 4 of the box: 8kk*128 bytes on.
        lds_v2(b_tile + kk * 1024 + frag_off_lo, f[4 * kk + 0], f[4 * kk + 1]);
        lds_v2(b_tile + kk * 1024 + frag_off_hi, f[4 * kk + 2], f[4 * kk + 3]);
    }
    wgmma_fence();
    fence_regs(f);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
        const unsigned long long db = make_desc(a_tile + kk * 32, 16, 1024);
        const unsigned a[4] = {f[4 * kk + 0], f[4 * kk + 1], f[4 * kk + 2], f[4 * kk + 3]};
        wgmma_m64n256k8_tf32_rs(d, a, db);
    }
    wgmma_commit();
    wgmma_wait<1>();
    // The batch that read `other` is complete: its registers may be reused
    // from here on, and its stage goes back to the producer.
    fence_regs(other);
    if (kt > 0 && lane == 0) {
        mbar_arrive(smem_addr(&empty_bar[(kt - 1) % SM90_STAGES]));
    }
}

__device__ __forceinline__ void gemm_body_tf32_nn(const TensorMap* tmA, const TensorMap* tmB,
                                                  float* __restrict__ C, int M, int N, int K,
                                                  float alpha, float beta) {
    constexpr int BK = 32;
    extern __shared__ unsigned char sm90_dyn_smem[];
    __shared__ __align__(8) unsigned long long full_bar[SM90_STAGES];
    __shared__ __align__(8) unsigned long long empty_bar[SM90_STAGES];

    const unsigned ring = (smem_addr(sm90_dyn_smem) + 1023u) & ~1023u;
    const unsigned a_base = ring;                                        // STAGES x 32 KB
    const unsigned b_base = ring + SM90_STAGES * SM90_NN_A_STAGE_BYTES;  // STAGES x 16 KB

    const int tid = threadIdx.x;
    const int wg = tid >> 7;

    if (tid == 0) {
#pragma unroll
        for (int s = 0; s < SM90_STAGES; ++s) {
            mbar_init(smem_addr(&full_bar[s]), 1);
            mbar_init(smem_addr(&empty_bar[s]), 8);  // one arrival per consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();

    const int tiles_m = (M + SM90_NN_BM - 1) / SM90_NN_BM;
    const int tiles_n = (N + SM90_NN_BN - 1) / SM90_NN_BN;
    const int bid = blockIdx.x;
    const int per_group = SM90_GROUP_M * tiles_n;
    const int first_m = (bid / per_group) * SM90_GROUP_M;
    const int group_rows = min(tiles_m - first_m, SM90_GROUP_M);
    const int in_group = bid % per_group;
    const int tm = first_m + in_group % group_rows;
    const int tn = in_group / group_rows;
    const int m0 = tm * SM90_NN_BM;
    const int n0 = tn * SM90_NN_BN;
    const int nk = (K + BK - 1) / BK;

    if (wg == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n" ::: "memory");
        if (tid == 0) {
            for (int kt = 0; kt < nk; ++kt) {
                const int s = kt % SM90_STAGES;
                if (kt >= SM90_STAGES) {
                    mbar_wait(smem_addr(&empty_bar[s]), ((kt / SM90_STAGES) - 1) & 1);
                }
                const unsigned fb = smem_addr(&full_bar[s]);
                mbar_expect_tx(fb, SM90_NN_A_STAGE_BYTES + SM90_NN_B_STAGE_BYTES);
                const int k0 = kt * BK;
                tma_load_2d(a_base + s * SM90_NN_A_STAGE_BYTES, tmA, fb, k0, m0);
#pragma unroll
                for (int c = 0; c < SM90_NN_BN / 32; ++c) {
                    tma_load_2d(b_base + s * SM90_NN_B_STAGE_BYTES + c * 4096, tmB, fb,
                                n0 + 32 * c, k0);
                }
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
        const int cw = wg - 1;
        const int lane = tid & 31;
        const int warp = (tid >> 5) & 3;
        const int g = lane >> 2;
        const int t = lane & 3;
        const int h = (g & 1) ^ (warp & 1);
        // This thread's fragment in a stage's B slice: box 2cw + (warp >> 1),
        // rows t and t + 4 (the swizzle XORs the 16-byte chunk with the row
        // within its 8), chunk g, half h.
        const unsigned box = (unsigned)(2 * cw + (warp >> 1)) * 4096u;
        const unsigned frag_off_lo = box + t * 128 + ((g ^ t) << 4) + (h << 3);
        const unsigned frag_off_hi = box + (t + 4) * 128 + ((g ^ (t + 4)) << 4) + (h << 3);

        float d[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) {
            d[i] = 0.0f;
        }
        unsigned f0[16];
        unsigned f1[16];
#pragma unroll
        for (int i = 0; i < 16; ++i) {
            f0[i] = 0u;
            f1[i] = 0u;
        }
        int kt = 0;
        for (; kt + 1 < nk; kt += 2) {
            nn_stage(d, f0, f1, kt, a_base, b_base, full_bar, empty_bar, frag_off_lo, frag_off_hi,
                     lane);
            nn_stage(d, f1, f0, kt + 1, a_base, b_base, full_bar, empty_bar, frag_off_lo,
                     frag_off_hi, lane);
        }
        if (kt < nk) {
            nn_stage(d, f0, f1, kt, a_base, b_base, full_bar, empty_bar, frag_off_lo, frag_off_hi,
                     lane);
        }
        wgmma_wait<0>();
        fence_regs(f0);
        fence_regs(f1);

        // Epilogue. d[4j + r]: instruction row 16*warp + g + 8*(r >> 1), i.e.
        // C column col0 + (r >> 1); instruction column 8j + 2t + (r & 1), i.e.
        // C row m0 + 8j + 2t + (r & 1).
        const int col0 = n0 + 64 * cw + 32 * (warp >> 1) + 4 * g + 2 * h;
        const bool pair_ok = ((N & 1) == 0) && ((((unsigned long long)C) & 7) == 0);
        if (col0 < N) {
#pragma unroll
            for (int j = 0; j < 32; ++j) {
#pragma unroll
                for (int q = 0; q < 2; ++q) {
                    const int row = m0 + 8 * j + 2 * t + q;
                    if (row < M) {
                        float* p = C + (long long)row * N + col0;
                        const float v0 = alpha * d[4 * j + q];
                        const float v1 = alpha * d[4 * j + 2 + q];
                        if (pair_ok) {
                            // N even and col0 even: col0 + 1 < N too.
                            float2* p2 = reinterpret_cast<float2*>(p);
                            float2 o;
                            if (beta != 0.0f) {
                                const float2 c = *p2;
                                o.x = v0 + beta * c.x;
                                o.y = v1 + beta * c.y;
                            } else {
                                o.x = v0;
                                o.y = v1;
                            }
                            *p2 = o;
                        } else {
                            p[0] = (beta != 0.0f) ? v0 + beta * p[0] : v0;
                            if (col0 + 1 < N) {
                                p[1] = (beta != 0.0f) ? v1 + beta * p[1] : v1;
                            }
                        }
                    }
                }
            }
        }
    }
}

}  // namespace sm90

// ---------------------------------------------------------------------------
// Kernels. Block (384, 1, 1); clusters of SM90_CLUSTER = 2 CTAs (compiled
// in: a plain launch works); grid (2 * g, 1, 1) for any g >= 1 (the clusters
// walk the units; g = min(units, SMs / 2) keeps one CTA per SM, units =
// ceil(ceil(M/128) / 2) * ceil(N/256)); dynamic shared memory
// SM90_SMEM_BYTES = 230400 bytes (raise
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES first). Tensor maps: see
// kernels/README.md.
// ---------------------------------------------------------------------------

#define SM90_KERNEL(NAME, KIND, BKM)                                                            \
    extern "C" __global__ void __cluster_dims__(SM90_CLUSTER, 1, 1)                            \
        __launch_bounds__(SM90_THREADS, 1)                                                      \
            NAME(const __grid_constant__ TensorMap tmA, const __grid_constant__ TensorMap tmB,  \
                 const __grid_constant__ TensorMap tmC, float* __restrict__ C, int M, int N,    \
                 int K, float alpha, float beta) {                                              \
        sm90::gemm_body<KIND, BKM>(&tmA, &tmB, &tmC, C, M, N, K, alpha, beta, nullptr,         \
                                   nullptr);                                                    \
    }

// The FP8 kernels: the same, and scale_a, scale_b (device pointers to one
// f32 each, or null for 1).
#define SM90_FP8_KERNEL(NAME, KIND)                                                             \
    extern "C" __global__ void __cluster_dims__(SM90_CLUSTER, 1, 1)                            \
        __launch_bounds__(SM90_THREADS, 1)                                                      \
            NAME(const __grid_constant__ TensorMap tmA, const __grid_constant__ TensorMap tmB,  \
                 const __grid_constant__ TensorMap tmC, float* __restrict__ C, int M, int N,    \
                 int K, float alpha, float beta, const float* __restrict__ scale_a,             \
                 const float* __restrict__ scale_b) {                                           \
        sm90::gemm_body<KIND, true>(&tmA, &tmB, &tmC, C, M, N, K, alpha, beta, scale_a,        \
                                    scale_b);                                                   \
    }

// Each kernel is compiled unless CUDAKIT_ONLY is defined without its own
// CUDAKIT_ONLY_<name>: a program for one kernel (MatmulKernel::program)
// compiles only that one (about a fifth of the file's NVRTC time).
// A M x K, B K x N (both row-major), 16-bit inputs.
#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_gemm_sm90_bf16_nn)
SM90_KERNEL(gemm_sm90_bf16_nn, 0, false)
#endif
#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_gemm_sm90_f16_nn)
SM90_KERNEL(gemm_sm90_f16_nn, 1, false)
#endif
// A M x K, B stored N x K (op(B) = B^T).
#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_gemm_sm90_bf16_nt)
SM90_KERNEL(gemm_sm90_bf16_nt, 0, true)
#endif
#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_gemm_sm90_f16_nt)
SM90_KERNEL(gemm_sm90_f16_nt, 1, true)
#endif
#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_gemm_sm90_tf32_nt)
SM90_KERNEL(gemm_sm90_tf32_nt, 2, true)
#endif
// FP8: A M x K (e4m3, or e5m2), B e4m3 stored N x K.
#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_gemm_sm90_e4m3_nt)
SM90_FP8_KERNEL(gemm_sm90_e4m3_nt, 3)
#endif
#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_gemm_sm90_e5m2_e4m3_nt)
SM90_FP8_KERNEL(gemm_sm90_e5m2_e4m3_nt, 4)
#endif
// A M x K, B K x N (both row-major), f32 storage read as tf32: no transpose
// pass (gemm_body_tf32_nn). Block (384, 1, 1); no cluster; grid ceil(M/256) *
// ceil(N/128); dynamic shared memory SM90_NN_SMEM_BYTES = 197632; tensor
// maps: A {K, M} box {32, 256}, B {N, K} box {32, 32}.
#if !defined(CUDAKIT_ONLY) || defined(CUDAKIT_ONLY_gemm_sm90_tf32_nn)
extern "C" __global__ void __launch_bounds__(SM90_THREADS, 1)
    gemm_sm90_tf32_nn(const __grid_constant__ TensorMap tmA, const __grid_constant__ TensorMap tmB,
                      float* __restrict__ C, int M, int N, int K, float alpha, float beta) {
    sm90::gemm_body_tf32_nn(&tmA, &tmB, C, M, N, K, alpha, beta);
}
#endif
