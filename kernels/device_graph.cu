// cudakit test kernels for device graph launch (issue 21): a kernel in a
// graph launches another executable graph from the device with the device
// runtime's
//
//   cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
//
// where `stream` is cudaStreamGraphTailLaunch (the graph runs after the
// launching graph has finished, in its place on the stream) or
// cudaStreamGraphFireAndForget (it runs at once, as a child that the
// launching graph waits for before it ends). The executable graph must be
// instantiated for device launch and uploaded
// (`InstantiateOptions::device_launch` does both); cudakit passes it as
// `&GraphExec` (`cudaGraphExec_t`). NVRTC declares cudaGraphLaunch and the
// two stream handles only in relocatable device code, and libcudadevrt.a
// provides the function: compile with -rdc=true and link with the device
// runtime. Self-contained otherwise (no #include). See kernels/README.md.

// data[i] = data[i] * 2 + add (each step rounded: the CPU gets the same
// bits). Thread 0 of block 0 then launches `next` (if not null) as a tail
// launch (mode 0) or fire-and-forget (mode 1), and writes trace[depth]:
// depth + 1 when the launch was accepted (or there was none), 1000 + the
// error code when cudaGraphLaunch refused it.
extern "C" __global__ void dgl_step(float* data, int n, float add, unsigned* trace,
                                    unsigned depth, cudaGraphExec_t next, int mode) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        data[i] = __fadd_rn(__fmul_rn(data[i], 2.0f), add);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned code = depth + 1u;
        if (next != 0) {
            cudaError_t e = cudaGraphLaunch(
                next, mode == 0 ? cudaStreamGraphTailLaunch : cudaStreamGraphFireAndForget);
            if (e != cudaSuccess) {
                code = 1000u + (unsigned)e;
            }
        }
        trace[depth] = code;
    }
}
