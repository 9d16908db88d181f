#include "kernels/dense/finite_check.cuh"

#include "core/cuda/check.hpp"

#include <algorithm>

namespace gpufact::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 65535;

// Threads run along the contiguous direction (the smaller stride) so reads coalesce.
template <class T>
__global__ void find_nonfinite_kernel(const T* a, std::int64_t row_stride, std::int64_t col_stride, std::int64_t rows,
                                      std::int64_t cols, unsigned long long* first) {
  const bool rows_inner = row_stride <= col_stride;
  const std::int64_t inner = rows_inner ? rows : cols, outer = rows_inner ? cols : rows;
  for (std::int64_t o = blockIdx.x; o < outer; o += gridDim.x)
    for (std::int64_t in = threadIdx.x; in < inner; in += blockDim.x) {
      const std::int64_t i = rows_inner ? in : o, j = rows_inner ? o : in;
      if (!isfinite(a[i * row_stride + j * col_stride]))
        atomicMin(first, static_cast<unsigned long long>(i + j * rows));
    }
}

template <class T>
void find(const T* a, std::int64_t row_stride, std::int64_t col_stride, std::int64_t rows, std::int64_t cols,
          unsigned long long* first, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  const std::int64_t outer = row_stride <= col_stride ? cols : rows;
  const int blocks = static_cast<int>(std::clamp<std::int64_t>(outer, 1, kMaxBlocks));
  find_nonfinite_kernel<T><<<blocks, kThreads, 0, stream>>>(a, row_stride, col_stride, rows, cols, first);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace

void launch_find_nonfinite(const float* a, std::int64_t row_stride, std::int64_t col_stride, std::int64_t rows,
                           std::int64_t cols, unsigned long long* first, cudaStream_t stream) {
  find(a, row_stride, col_stride, rows, cols, first, stream);
}
void launch_find_nonfinite(const double* a, std::int64_t row_stride, std::int64_t col_stride, std::int64_t rows,
                           std::int64_t cols, unsigned long long* first, cudaStream_t stream) {
  find(a, row_stride, col_stride, rows, cols, first, stream);
}

}  // namespace gpufact::kernels
