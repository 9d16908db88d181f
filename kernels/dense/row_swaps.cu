#include "kernels/dense/row_swaps.cuh"

#include "core/cuda/check.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 65535;

struct SwapList {
  int count;
  int target[kMaxSwapsPerLaunch];
};

template <class T>
__device__ __forceinline__ T& at(T* a, std::int64_t ld, bool row_major, std::int64_t r, std::int64_t c) {
  return row_major ? a[r * ld + c] : a[r + c * ld];
}

template <class T>
__global__ void apply_row_swaps_kernel(T* a, std::int64_t ld, bool row_major, std::int64_t cols,
                                       std::int64_t skip_begin, std::int64_t skip_end, std::int64_t first_row,
                                       SwapList swaps) {
  for (std::int64_t c = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; c < cols;
       c += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    if (c >= skip_begin && c < skip_end) continue;
    for (int k = 0; k < swaps.count; ++k) {
      const std::int64_t r = first_row + k, p = swaps.target[k];
      if (p == r) continue;
      T& x = at(a, ld, row_major, r, c);
      T& y = at(a, ld, row_major, p, c);
      const T t = x;
      x = y;
      y = t;
    }
  }
}

template <class T>
__global__ void apply_row_swaps_device_kernel(T* a, std::int64_t ld, bool row_major, std::int64_t cols,
                                              std::int64_t skip_begin, std::int64_t skip_end, std::int64_t first_row,
                                              const std::int64_t* ipiv, std::int64_t count) {
  for (std::int64_t c = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; c < cols;
       c += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    if (c >= skip_begin && c < skip_end) continue;
    for (std::int64_t k = 0; k < count; ++k) {
      const std::int64_t r = first_row + k, p = first_row + ipiv[k] - 1;
      if (p == r) continue;
      T& x = at(a, ld, row_major, r, c);
      T& y = at(a, ld, row_major, p, c);
      const T t = x;
      x = y;
      y = t;
    }
  }
}

int blocks_for(std::int64_t cols) {
  return static_cast<int>(std::clamp<std::int64_t>((cols + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

template <class T>
void apply(T* a, std::int64_t ld, bool row_major, std::int64_t cols, std::int64_t skip_begin, std::int64_t skip_end,
           std::int64_t first_row, const int* targets, int count, cudaStream_t stream) {
  if (count < 0 || count > kMaxSwapsPerLaunch)
    throw std::invalid_argument("launch_apply_row_swaps: count = " + std::to_string(count) + " is outside 0.." +
                                std::to_string(kMaxSwapsPerLaunch));
  if (count == 0 || cols <= 0) return;
  SwapList list{};
  list.count = count;
  std::copy(targets, targets + count, list.target);
  apply_row_swaps_kernel<T><<<blocks_for(cols), kThreads, 0, stream>>>(a, ld, row_major, cols, skip_begin, skip_end,
                                                                       first_row, list);
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void apply_device(T* a, std::int64_t ld, bool row_major, std::int64_t cols, std::int64_t skip_begin,
                  std::int64_t skip_end, std::int64_t first_row, const std::int64_t* ipiv, std::int64_t count,
                  cudaStream_t stream) {
  if (count <= 0 || cols <= 0) return;
  apply_row_swaps_device_kernel<T><<<blocks_for(cols), kThreads, 0, stream>>>(a, ld, row_major, cols, skip_begin,
                                                                              skip_end, first_row, ipiv, count);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace

void launch_apply_row_swaps(float* a, std::int64_t ld, bool row_major, std::int64_t cols, std::int64_t skip_begin,
                            std::int64_t skip_end, std::int64_t first_row, const int* targets, int count,
                            cudaStream_t stream) {
  apply(a, ld, row_major, cols, skip_begin, skip_end, first_row, targets, count, stream);
}
void launch_apply_row_swaps(double* a, std::int64_t ld, bool row_major, std::int64_t cols, std::int64_t skip_begin,
                            std::int64_t skip_end, std::int64_t first_row, const int* targets, int count,
                            cudaStream_t stream) {
  apply(a, ld, row_major, cols, skip_begin, skip_end, first_row, targets, count, stream);
}
void launch_apply_row_swaps_device(float* a, std::int64_t ld, bool row_major, std::int64_t cols,
                                   std::int64_t skip_begin, std::int64_t skip_end, std::int64_t first_row,
                                   const std::int64_t* ipiv, std::int64_t count, cudaStream_t stream) {
  apply_device(a, ld, row_major, cols, skip_begin, skip_end, first_row, ipiv, count, stream);
}
void launch_apply_row_swaps_device(double* a, std::int64_t ld, bool row_major, std::int64_t cols,
                                   std::int64_t skip_begin, std::int64_t skip_end, std::int64_t first_row,
                                   const std::int64_t* ipiv, std::int64_t count, cudaStream_t stream) {
  apply_device(a, ld, row_major, cols, skip_begin, skip_end, first_row, ipiv, count, stream);
}

}  // namespace gpufact::kernels
