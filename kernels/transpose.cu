// cudakit test kernels: out-of-place matrix transpose through shared memory.
//
// Self-contained (no #include), compiled with NVRTC for sm_90. See
// kernels/README.md.

#define TRANSPOSE_TILE 32
#define TRANSPOSE_ROWS 8

// out = in^T: `in` is rows x cols row-major (in[r*cols + c]), `out` is
// cols x rows row-major (out[c*rows + r] = in[r*cols + c]). Any rows,
// cols >= 0; every access is bounds-checked.
//
// Block exactly (32, 8, 1): each thread moves 4 elements of a 32 x 32 tile.
// Grid (ceil(cols/32), ceil(rows/32), 1). The tile has one padding column
// (32 x 33) so that reading it by columns has no bank conflicts. Reads of
// `in` and writes of `out` are both coalesced along rows.
template <typename T>
__global__ void __launch_bounds__(TRANSPOSE_TILE * TRANSPOSE_ROWS)
    transpose(const T* __restrict__ in, T* __restrict__ out, int rows, int cols) {
    __shared__ T tile[TRANSPOSE_TILE][TRANSPOSE_TILE + 1];

    const int bx = blockIdx.x * TRANSPOSE_TILE;  // first column of `in` in this tile
    const int by = blockIdx.y * TRANSPOSE_TILE;  // first row of `in` in this tile

    {
        const int c = bx + threadIdx.x;
#pragma unroll
        for (int dy = 0; dy < TRANSPOSE_TILE; dy += TRANSPOSE_ROWS) {
            const int r = by + threadIdx.y + dy;
            if (r < rows && c < cols) {
                tile[threadIdx.y + dy][threadIdx.x] = in[(long long)r * cols + c];
            }
        }
    }
    __syncthreads();
    {
        const int r = by + threadIdx.x;  // a row of `in` = a column of `out`
#pragma unroll
        for (int dy = 0; dy < TRANSPOSE_TILE; dy += TRANSPOSE_ROWS) {
            const int c = bx + threadIdx.y + dy;  // a column of `in` = a row of `out`
            if (c < cols && r < rows) {
                out[(long long)c * rows + r] = tile[threadIdx.x][threadIdx.y + dy];
            }
        }
    }
}
