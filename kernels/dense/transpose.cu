#include "kernels/dense/transpose.cuh"

#include "core/cuda/check.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpufact::kernels {
namespace {

constexpr int kTile = 32;
constexpr int kRowsPerPass = 8;  // a 32 × 8 block moves a 32 × 32 tile in four passes
constexpr std::int64_t kMaxGridY = 65535;

// Tile (bx, by) covers in-rows [bx·32, +32) and in-columns [by·32, +32); reads are coalesced
// along in's columns, writes along out's columns; the +1 pad avoids shared bank conflicts.
template <class T>
__global__ void transpose_kernel(const T* in, std::int64_t ld_in, T* out, std::int64_t ld_out, std::int64_t rows,
                                 std::int64_t cols) {
  __shared__ T tile[kTile][kTile + 1];
  const std::int64_t i0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  for (std::int64_t j0 = static_cast<std::int64_t>(blockIdx.y) * kTile; j0 < cols;
       j0 += static_cast<std::int64_t>(gridDim.y) * kTile) {
    for (int y = threadIdx.y; y < kTile; y += kRowsPerPass) {
      const std::int64_t i = i0 + threadIdx.x, j = j0 + y;
      if (i < rows && j < cols) tile[y][threadIdx.x] = in[i + j * ld_in];
    }
    __syncthreads();
    for (int y = threadIdx.y; y < kTile; y += kRowsPerPass) {
      const std::int64_t j = j0 + threadIdx.x, i = i0 + y;
      if (i < rows && j < cols) out[j + i * ld_out] = tile[threadIdx.x][y];
    }
    __syncthreads();
  }
}

template <class T>
void transpose(const T* in, std::int64_t ld_in, T* out, std::int64_t ld_out, std::int64_t rows, std::int64_t cols,
               cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  if (ld_in < rows || ld_out < cols) throw std::invalid_argument("launch_transpose: leading dimension too small");
  const std::int64_t gx = (rows + kTile - 1) / kTile;
  if (gx > 0x7fffffff) throw std::invalid_argument("launch_transpose: too many rows");
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(std::min((cols + kTile - 1) / kTile, kMaxGridY)));
  transpose_kernel<T><<<grid, dim3(kTile, kRowsPerPass), 0, stream>>>(in, ld_in, out, ld_out, rows, cols);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace

void launch_transpose(const float* in, std::int64_t ld_in, float* out, std::int64_t ld_out, std::int64_t rows,
                      std::int64_t cols, cudaStream_t stream) {
  transpose(in, ld_in, out, ld_out, rows, cols, stream);
}
void launch_transpose(const double* in, std::int64_t ld_in, double* out, std::int64_t ld_out, std::int64_t rows,
                      std::int64_t cols, cudaStream_t stream) {
  transpose(in, ld_in, out, ld_out, rows, cols, stream);
}

}  // namespace gpufact::kernels
