// cudakit test kernels for the launch features of issue 21: programmatic
// dependent launch (PDL, sm_90+) and L2 access-policy windows.
//
// Self-contained (no #include). The device side of PDL is two PTX
// instructions (what cudaGridDependencySynchronize() and
// cudaTriggerProgrammaticLaunchCompletion() compile to):
//   griddepcontrol.wait              blocks until every grid this one
//                                    depends on programmatically has
//                                    completed and its memory is visible;
//   griddepcontrol.launch_dependents lets the next grid on the stream
//                                    (launched with the programmatic
//                                    attribute) start before this one ends.
// Both are no-ops for a grid launched without the attribute, so the same
// kernel runs in a plain chain. See kernels/README.md.

__device__ __forceinline__ void pdl_wait() {
    asm volatile("griddepcontrol.wait;" ::: "memory");
}

__device__ __forceinline__ void pdl_trigger() {
    asm volatile("griddepcontrol.launch_dependents;" :::);
}

// out[i] = fma(in[i], a, b + i), after the previous grid's results are
// visible. The trigger comes first: this grid's own work does not gate the
// next grid's launch, only its griddepcontrol.wait does.
extern "C" __global__ void pdl_step(const float* in, float* out, int n, float a, float b) {
    pdl_trigger();
    pdl_wait();
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = __fmaf_rn(in[i], a, b + (float)i);
    }
}

// out[i] = the sum over `reps` passes of buf[(i + pass * stride) % n]: a
// kernel that re-reads a buffer many times, for the L2 window benchmark.
extern "C" __global__ void l2_reread(const float* buf, float* out, int n, int reps, int stride) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float acc = 0.0f;
    long long j = i;
    for (int r = 0; r < reps; ++r) {
        acc += buf[j];
        j += stride;
        if (j >= n) {
            j -= n;
        }
    }
    out[i] = acc;
}
