// cudakit test kernels for the launch path: every argument kind, structs by
// value with padding, many parameters, large dynamic shared memory, thread
// block clusters, cooperative grid synchronization, and timing helpers.
//
// Self-contained (no #include): NVRTC 13 ships no cooperative_groups.h, so
// clusters and the grid barrier are written with the PTX that
// cooperative_groups itself uses. Compiled with NVRTC for sm_90.
// See kernels/README.md.
//
// Only thread 0 of a block writes the argument-echo outputs; launch those
// kernels with one block of one thread (more threads are harmless).

// ---------------------------------------------------------------------------
// Structs passed by value. C layout (offsets in bytes, "pad" = padding bytes
// whose content the kernel copies but gives no meaning); the Rust side
// mirrors each with #[repr(C)] (V16 with #[repr(C, align(16))]).
//
//   S4   size 4,  align 2: a: u8 @0, pad @1, b: i16 @2
//   S8   size 8,  align 4: a: f32 @0, b: u8 @4, pad @5..8
//   S12  size 12, align 4: a: i32 @0, b: u8 @4, pad @5..8, c: f32 @8
//   S16  size 16, align 8: a: f64 @0, b: i32 @8, pad @12..16
//   S24  size 24, align 8: a: i8 @0, pad @1..8, b: f64 @8, c: i16 @16, pad @18..24
//   S32  size 32, align 8: a: i32 @0, pad @4..8, b: f64 @8, c: f32 @16, pad @20..24, d: i64 @24
//   S64  size 64, align 8: v: [f64; 7] @0, tag: u8 @56, pad @57..64
//   V16  size 16, align 16: x, y, z, w: f32 @0, 4, 8, 12
//   F8   size 32, align 4: v: [f32; 8] @0   (a fixed array by value)
//
// dump() writes the fields as f64, in declaration order (array elements in
// order), and returns how many it wrote.
// ---------------------------------------------------------------------------

struct S4 {
    unsigned char a;
    short b;
    __device__ int dump(double* o) const {
        o[0] = a;
        o[1] = b;
        return 2;
    }
};
struct S8 {
    float a;
    unsigned char b;
    __device__ int dump(double* o) const {
        o[0] = a;
        o[1] = b;
        return 2;
    }
};
struct S12 {
    int a;
    unsigned char b;
    float c;
    __device__ int dump(double* o) const {
        o[0] = a;
        o[1] = b;
        o[2] = c;
        return 3;
    }
};
struct S16 {
    double a;
    int b;
    __device__ int dump(double* o) const {
        o[0] = a;
        o[1] = b;
        return 2;
    }
};
struct S24 {
    signed char a;
    double b;
    short c;
    __device__ int dump(double* o) const {
        o[0] = a;
        o[1] = b;
        o[2] = c;
        return 3;
    }
};
struct S32 {
    int a;
    double b;
    float c;
    long long d;
    __device__ int dump(double* o) const {
        o[0] = a;
        o[1] = b;
        o[2] = c;
        o[3] = (double)d;
        return 4;
    }
};
struct S64 {
    double v[7];
    unsigned char tag;
    __device__ int dump(double* o) const {
        for (int i = 0; i < 7; ++i) {
            o[i] = v[i];
        }
        o[7] = tag;
        return 8;
    }
};
struct __align__(16) V16 {
    float x, y, z, w;
    __device__ int dump(double* o) const {
        o[0] = x;
        o[1] = y;
        o[2] = z;
        o[3] = w;
        return 4;
    }
};
struct F8 {
    float v[8];
    __device__ int dump(double* o) const {
        for (int i = 0; i < 8; ++i) {
            o[i] = v[i];
        }
        return 8;
    }
};

#define CHECK_LAYOUT(T, SIZE, ALIGN)                                  \
    static_assert(sizeof(T) == SIZE, "sizeof(" #T ") == " #SIZE);     \
    static_assert(alignof(T) == ALIGN, "alignof(" #T ") == " #ALIGN)
CHECK_LAYOUT(S4, 4, 2);
CHECK_LAYOUT(S8, 8, 4);
CHECK_LAYOUT(S12, 12, 4);
CHECK_LAYOUT(S16, 16, 8);
CHECK_LAYOUT(S24, 24, 8);
CHECK_LAYOUT(S32, 32, 8);
CHECK_LAYOUT(S64, 64, 8);
CHECK_LAYOUT(V16, 16, 16);
CHECK_LAYOUT(F8, 32, 4);
#define OFFSET(s, m) (unsigned long long)(reinterpret_cast<const char*>(&s.m) - reinterpret_cast<const char*>(&s))

// The layout as the device compiler sees it, for comparing with the Rust
// mirrors (std::mem::offset_of!): out[0..35) =
//   S4:  size, align, off(a), off(b)                       [0..4)
//   S8:  size, align, off(a), off(b)                       [4..8)
//   S12: size, align, off(a), off(b), off(c)               [8..13)
//   S16: size, align, off(a), off(b)                       [13..17)
//   S24: size, align, off(a), off(b), off(c)               [17..22)
//   S32: size, align, off(a), off(b), off(c), off(d)       [22..28)
//   S64: size, align, off(v), off(tag)                     [28..32)
//   V16: size, align                                       [32..34)
//   F8:  size                                              [34..35)
extern "C" __global__ void struct_layout(unsigned long long* out) {
    if (blockIdx.x != 0 || threadIdx.x != 0) {
        return;
    }
    S4 s4;
    S8 s8;
    S12 s12;
    S16 s16;
    S24 s24;
    S32 s32;
    S64 s64;
    int n = 0;
    out[n++] = sizeof(S4);
    out[n++] = alignof(S4);
    out[n++] = OFFSET(s4, a);
    out[n++] = OFFSET(s4, b);
    out[n++] = sizeof(S8);
    out[n++] = alignof(S8);
    out[n++] = OFFSET(s8, a);
    out[n++] = OFFSET(s8, b);
    out[n++] = sizeof(S12);
    out[n++] = alignof(S12);
    out[n++] = OFFSET(s12, a);
    out[n++] = OFFSET(s12, b);
    out[n++] = OFFSET(s12, c);
    out[n++] = sizeof(S16);
    out[n++] = alignof(S16);
    out[n++] = OFFSET(s16, a);
    out[n++] = OFFSET(s16, b);
    out[n++] = sizeof(S24);
    out[n++] = alignof(S24);
    out[n++] = OFFSET(s24, a);
    out[n++] = OFFSET(s24, b);
    out[n++] = OFFSET(s24, c);
    out[n++] = sizeof(S32);
    out[n++] = alignof(S32);
    out[n++] = OFFSET(s32, a);
    out[n++] = OFFSET(s32, b);
    out[n++] = OFFSET(s32, c);
    out[n++] = OFFSET(s32, d);
    out[n++] = sizeof(S64);
    out[n++] = alignof(S64);
    out[n++] = OFFSET(s64, v);
    out[n++] = OFFSET(s64, tag);
    out[n++] = sizeof(V16);
    out[n++] = alignof(V16);
    out[n++] = sizeof(F8);
}
#undef OFFSET

// fields[0..n) = the struct's fields as f64 (see dump()), bytes[0..sizeof(S))
// = its bytes exactly as the kernel received them, padding included
// (__grid_constant__ makes &s the parameter itself rather than a
// member-by-member local copy, whose padding would be undefined).
// Instantiated for S = S4, S8, S12, S16, S24, S32, S64, V16, F8.
template <typename S>
__global__ void args_struct(const __grid_constant__ S s, double* fields, unsigned char* bytes) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        s.dump(fields);
        const unsigned char* raw = reinterpret_cast<const unsigned char*>(&s);
        for (int i = 0; i < (int)sizeof(S); ++i) {
            bytes[i] = raw[i];
        }
    }
}

// Every struct at once, so that the parameter buffer holds them at their
// aligned offsets one after another: out[0..28) = S4's 2 fields, S8's 2,
// S12's 3, S16's 2, S24's 3, S32's 4, S64's 8, V16's 4, in that order.
extern "C" __global__ void args_structs_all(S4 s4, S8 s8, S12 s12, S16 s16, S24 s24, S32 s32,
                                            S64 s64, V16 v16, double* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        int n = 0;
        n += s4.dump(out + n);
        n += s8.dump(out + n);
        n += s12.dump(out + n);
        n += s16.dump(out + n);
        n += s24.dump(out + n);
        n += s32.dump(out + n);
        n += s64.dump(out + n);
        v16.dump(out + n);
    }
}

// out[0..8) = a.v[0..8): a fixed array passed by value inside a struct.
extern "C" __global__ void args_array(F8 a, float* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        for (int i = 0; i < 8; ++i) {
            out[i] = a.v[i];
        }
    }
}

// ---------------------------------------------------------------------------
// Scalars of every width, and many parameters.
// ---------------------------------------------------------------------------

// values[0..10) = each argument converted to f64, in parameter order;
// bits[0..10) = each argument's own bit pattern, zero-extended to 64 bits
// (i8 -1 -> 0xff; f32 -> its IEEE bits; f64 -> its IEEE bits), so the i64 and
// u64 values are checked exactly even where f64 would round them.
extern "C" __global__ void args_scalars(signed char i8, unsigned char u8, short i16,
                                        unsigned short u16, int i32, unsigned int u32,
                                        long long i64, unsigned long long u64, float f32,
                                        double f64, double* values,
                                        unsigned long long* bits) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        values[0] = i8;
        values[1] = u8;
        values[2] = i16;
        values[3] = u16;
        values[4] = i32;
        values[5] = u32;
        values[6] = (double)i64;
        values[7] = (double)u64;
        values[8] = f32;
        values[9] = f64;
        bits[0] = (unsigned char)i8;
        bits[1] = u8;
        bits[2] = (unsigned short)i16;
        bits[3] = u16;
        bits[4] = (unsigned int)i32;
        bits[5] = u32;
        bits[6] = (unsigned long long)i64;
        bits[7] = u64;
        bits[8] = __float_as_uint(f32);
        bits[9] = (unsigned long long)__double_as_longlong(f64);
    }
}

// 20 parameters whose types alternate widths so that the parameter buffer
// has alignment gaps: out[i - 1] = (double)p<i> for i = 1..19.
extern "C" __global__ void args_many(double* out, signed char p1, double p2, short p3, float p4,
                                     unsigned char p5, long long p6, int p7, double p8,
                                     unsigned char p9, unsigned long long p10, float p11,
                                     short p12, double p13, int p14, signed char p15, float p16,
                                     long long p17, unsigned short p18, double p19) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        out[0] = p1;
        out[1] = p2;
        out[2] = p3;
        out[3] = p4;
        out[4] = p5;
        out[5] = (double)p6;
        out[6] = p7;
        out[7] = p8;
        out[8] = p9;
        out[9] = (double)p10;
        out[10] = p11;
        out[11] = p12;
        out[12] = p13;
        out[13] = p14;
        out[14] = p15;
        out[15] = p16;
        out[16] = (double)p17;
        out[17] = p18;
        out[18] = p19;
    }
}

// ---------------------------------------------------------------------------
// Dynamic shared memory beyond the default 48 KB.
// ---------------------------------------------------------------------------

// Block b stages in[b*n .. b*n + n) in dynamic shared memory, then writes it
// reversed: out[b*n + i] = in[b*n + n - 1 - i]. Dynamic shared memory must be
// n * 4 bytes; above 48 KB the function needs
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES raised first (an H200
// allows up to 227 KB = 232448 bytes per block). Any 1-D block; grid = the
// number of segments of n.
extern "C" __global__ void big_shared(const float* __restrict__ in, float* __restrict__ out,
                                      int n) {
    extern __shared__ float smem[];
    const long long base = (long long)blockIdx.x * n;
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        smem[i] = in[base + i];
    }
    __syncthreads();
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        out[base + i] = smem[n - 1 - i];
    }
}

// ---------------------------------------------------------------------------
// Thread block clusters (sm_90): rank, size, and distributed shared memory.
// ---------------------------------------------------------------------------

__device__ __forceinline__ unsigned cluster_ctarank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

__device__ __forceinline__ unsigned cluster_nctarank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    return r;
}

// cooperative_groups' cluster.sync(): every thread of every block of the
// cluster arrives, then waits.
__device__ __forceinline__ void cluster_sync() {
    asm volatile(
        "barrier.cluster.arrive.release.aligned;\n"
        "barrier.cluster.wait.acquire.aligned;\n" ::
            : "memory");
}

// The u32 at the same shared-memory offset as `local`, in the block of the
// cluster whose rank is `rank` (cluster.map_shared_rank + a load).
__device__ __forceinline__ unsigned dsmem_load(const unsigned* local, unsigned rank) {
    const unsigned addr = (unsigned)__cvta_generic_to_shared(local);
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
    unsigned v;
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(remote) : "memory");
    return v;
}

// With a 1-D grid, block b: out[4b] = its rank in the cluster, out[4b+1] =
// the cluster's size in blocks, out[4b+2] = the blockIdx.x of the next rank
// ((rank + 1) % size) of the same cluster, read from that block's shared
// memory, i.e. b - rank + (rank + 1) % size, out[4b+3] = the cluster's
// index in the grid (%clusterid.x) = b / size.
__device__ __forceinline__ void cluster_body(unsigned* out) {
    __shared__ unsigned mine;
    const unsigned rank = cluster_ctarank();
    const unsigned size = cluster_nctarank();
    if (threadIdx.x == 0) {
        mine = blockIdx.x;
    }
    cluster_sync();  // every block's `mine` is written and visible cluster-wide
    if (threadIdx.x == 0) {
        const unsigned next = dsmem_load(&mine, (rank + 1) % size);
        unsigned cid;
        asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(cid));
        out[4 * blockIdx.x + 0] = rank;
        out[4 * blockIdx.x + 1] = size;
        out[4 * blockIdx.x + 2] = next;
        out[4 * blockIdx.x + 3] = cid;
    }
    cluster_sync();  // no block exits while a neighbour may still read its shared memory
}

// Compile-time cluster of 2 blocks: launch with an ordinary launch, 1-D grid
// whose size is a multiple of 2, any 1-D block. out has 4 * gridDim.x u32.
extern "C" __global__ void __cluster_dims__(2, 1, 1) cluster_static(unsigned* out) {
    cluster_body(out);
}

// Cluster shape chosen at launch (cuLaunchKernelEx with
// CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION = (c, 1, 1), c <= 8 portable); 1-D
// grid whose size is a multiple of c. Launched without the attribute, each
// block is its own cluster (rank 0, size 1, next = itself).
extern "C" __global__ void cluster_dynamic(unsigned* out) {
    cluster_body(out);
}

// ---------------------------------------------------------------------------
// Cooperative launch: a grid-wide barrier.
// ---------------------------------------------------------------------------

// The grid-barrier word the driver provides to cooperative launches, found as
// cooperative_groups finds it (details/driver_abi.h): %envreg1 (high half)
// and %envreg2 (low half) hold the address of
// struct { unsigned wsSize; unsigned barrier; }. Null when the launch was
// not cooperative.
__device__ __forceinline__ unsigned* grid_barrier_word() {
    unsigned hi;
    unsigned lo;
    asm("mov.u32 %0, %%envreg1;" : "=r"(hi));
    asm("mov.u32 %0, %%envreg2;" : "=r"(lo));
    const unsigned long long ws = ((unsigned long long)hi << 32) | lo;
    return ws == 0 ? nullptr : reinterpret_cast<unsigned*>(ws) + 1;
}

// cooperative_groups::this_grid().sync() (details/sync.h, sm_70+ path): the
// first block adds 0x80000000 - (blocks - 1), every other block 1, so the
// top bit flips exactly when all blocks have arrived. Traps (as
// cooperative_groups does) when the launch was not cooperative.
__device__ __forceinline__ void grid_sync() {
    unsigned* bar = grid_barrier_word();
    if (bar == nullptr) {
        __trap();
    }
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        const unsigned expected = gridDim.x * gridDim.y * gridDim.z;
        const bool first = (blockIdx.x + blockIdx.y + blockIdx.z) == 0;
        const unsigned nb = first ? 0x80000000u - (expected - 1) : 1u;
        unsigned old;
        asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;"
                     : "=r"(old)
                     : "l"(bar), "r"(nb)
                     : "memory");
        unsigned now;
        do {
            asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(now) : "l"(bar) : "memory");
        } while (((old ^ now) & 0x80000000u) == 0);
    }
    __syncthreads();
}

// Launch with cuLaunchCooperativeKernel (or the cooperative launch
// attribute), a 1-D grid of nb blocks that fit on the device at once, any
// 1-D block. a and out have nb u32 each. Each round, every block reads its
// right neighbour's value written in the previous round, so without a real
// grid barrier the result is wrong (or the kernel traps when not launched
// cooperatively). After `rounds` rounds: out[b] = (b + rounds) % nb + rounds.
extern "C" __global__ void coop_grid_sync(unsigned* a, unsigned* out, int rounds) {
    volatile unsigned* va = a;
    const unsigned nb = gridDim.x;
    const unsigned b = blockIdx.x;
    if (threadIdx.x == 0) {
        va[b] = b;
    }
    for (int r = 0; r < rounds; ++r) {
        grid_sync();
        unsigned v = 0;
        if (threadIdx.x == 0) {
            v = va[(b + 1) % nb];
        }
        grid_sync();
        if (threadIdx.x == 0) {
            va[b] = v + 1;
        }
    }
    grid_sync();
    if (threadIdx.x == 0) {
        out[b] = va[b];
    }
}

// ---------------------------------------------------------------------------
// Timing and counting helpers for stream, event and stress tests.
// ---------------------------------------------------------------------------

// Every thread busy-waits until `cycles` SM clock cycles (clock64) have
// passed; then, if flag is not null, thread 0 of block 0 stores `value` to
// *flag. An H200 clocks at roughly 2 GHz (2e6 cycles ~ 1 ms); use this for
// work whose length matters only roughly. Any geometry.
extern "C" __global__ void spin(long long cycles, unsigned* flag, unsigned value) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
    if (flag != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {
        *reinterpret_cast<volatile unsigned*>(flag) = value;
    }
}

// As spin, measured in nanoseconds of the GPU's global timer (%globaltimer;
// its resolution may be as coarse as 1 microsecond).
extern "C" __global__ void spin_ns(unsigned long long ns, unsigned* flag, unsigned value) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    unsigned long long now = start;
    while (now - start < ns) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    }
    if (flag != nullptr && blockIdx.x == 0 && threadIdx.x == 0) {
        *reinterpret_cast<volatile unsigned*>(flag) = value;
    }
}

// *counter += 1 for every thread launched (atomic): after L launches of
// B blocks of T threads, *counter = L * B * T. Any geometry.
extern "C" __global__ void count_threads(unsigned long long* counter) {
    atomicAdd(counter, 1ull);
}
