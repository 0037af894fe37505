// cudakit test kernels for green contexts: which SMs a grid ran on, and
// long-running blocks that show two partitions running at once.
//
// Self-contained (no #include). %smid is the PTX special register holding
// the SM a thread runs on (it can change only if the block is preempted and
// resumed elsewhere, which these short kernels do not rely on either way:
// every value read is recorded); %globaltimer is the GPU's nanosecond
// timer, the same on every SM. See kernels/README.md.

__device__ __forceinline__ unsigned int sm_id() {
    unsigned int id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// out[b] = the SM block b runs on, for every block of the grid (thread 0
// writes it). With `spin_cycles` > 0 every block first stays resident for
// that many SM clock cycles (clock64), so that the grid's blocks are spread
// over every SM the context may use, not only the first few.
extern "C" __global__ void smid_blocks(unsigned int* out, unsigned int n, long long spin_cycles) {
    if (spin_cycles > 0) {
        const long long start = clock64();
        while (clock64() - start < spin_cycles) {
        }
    }
    const unsigned int b = blockIdx.x + blockIdx.y * gridDim.x;
    if (threadIdx.x == 0 && b < n) {
        out[b] = sm_id();
    }
}

// A persistent grid: every block loops `rounds` times, and in each round
// thread 0 records the SM it runs on in out[b * rounds + r], then spins
// `spin_cycles` clock cycles. The smids of all rounds of all blocks are the
// SMs the grid used while it ran.
extern "C" __global__ void smid_persistent(unsigned int* out, unsigned int blocks,
                                           unsigned int rounds, long long spin_cycles) {
    const unsigned int b = blockIdx.x;
    if (b >= blocks) {
        return;
    }
    for (unsigned int r = 0; r < rounds; ++r) {
        if (threadIdx.x == 0) {
            out[b * rounds + r] = sm_id();
        }
        const long long start = clock64();
        while (clock64() - start < spin_cycles) {
        }
        __syncthreads();
    }
}

// Every block spins `spin_cycles` SM clock cycles; thread 0 of each block
// writes its start and end %globaltimer (ns) into times[2b] and times[2b+1].
// Two grids on two partitions overlap in time when one's earliest start is
// before the other's latest end.
extern "C" __global__ void spin_timed(unsigned long long* times, unsigned int n,
                                      long long spin_cycles) {
    const unsigned long long t0 = global_ns();
    const long long start = clock64();
    while (clock64() - start < spin_cycles) {
    }
    const unsigned long long t1 = global_ns();
    const unsigned int b = blockIdx.x;
    if (threadIdx.x == 0 && b < n) {
        times[2 * b] = t0;
        times[2 * b + 1] = t1;
    }
}
