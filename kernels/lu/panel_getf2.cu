#include "kernels/lu/panel_getf2.cuh"

#include "core/cuda/check.hpp"
#include "core/cuda/device.hpp"

#include <cooperative_groups.h>

#include <algorithm>

namespace gpufact::kernels {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kMaxSearchBlocks = 1024;

// (value, index) max with ties to the smaller index, as LAPACK's isamax.
__device__ __forceinline__ void better(float& v, int& i, float v2, int i2) {
  if (v2 > v || (v2 == v && i2 < i)) {
    v = v2;
    i = i2;
  }
}

// Block-wide argmax of |x| over rows [j, m) of column j; result in (*out_v, *out_i) by thread 0.
__device__ void block_argmax(const float* a, std::int64_t lda, std::int64_t m, std::int64_t j, std::int64_t first,
                             std::int64_t step, float* out_v, int* out_i) {
  __shared__ float sv[kThreads / 32];
  __shared__ int si[kThreads / 32];
  float v = -1.0f;
  int idx = 0x7fffffff;
  const float* col = a + j * lda;
  for (std::int64_t r = j + first; r < m; r += step) better(v, idx, fabsf(col[r]), static_cast<int>(r));
  for (int off = 16; off > 0; off >>= 1) {
    const float v2 = __shfl_down_sync(0xffffffffu, v, off);
    const int i2 = __shfl_down_sync(0xffffffffu, idx, off);
    better(v, idx, v2, i2);
  }
  if ((threadIdx.x & 31) == 0) {
    sv[threadIdx.x / 32] = v;
    si[threadIdx.x / 32] = idx;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / 32; ++w) better(v, idx, sv[w], si[w]);
    *out_v = v;
    *out_i = idx;
  }
  __syncthreads();
}

// Reduces the search blocks' pairs, records the pivot, swaps rows j and p across all n columns
// and stores 1 / pivot. Runs on one block; columns are spread over its threads.
__device__ void choose_and_swap(float* a, std::int64_t lda, std::int64_t n, std::int64_t j, int blocks,
                                const float* block_max, const int* block_index, int* ipiv, int* info,
                                float* reciprocal) {
  __shared__ int pivot;
  if (threadIdx.x == 0) {
    float v = -1.0f;
    int p = 0x7fffffff;
    for (int b = 0; b < blocks; ++b) better(v, p, block_max[b], block_index[b]);
    pivot = p;
    ipiv[j] = p + 1;
  }
  __syncthreads();
  const int p = pivot;
  if (p != j)
    for (std::int64_t c = threadIdx.x; c < n; c += blockDim.x) {
      const float t = a[j + c * lda];
      a[j + c * lda] = a[p + c * lda];
      a[p + c * lda] = t;
    }
  __syncthreads();
  if (threadIdx.x == 0) {
    const float d = a[j + j * lda];
    if (d == 0.0f && *info == 0) *info = static_cast<int>(j) + 1;
    *reciprocal = d == 0.0f ? 0.0f : 1.0f / d;  // LAPACK leaves the column unscaled on a zero pivot
  }
}

// Rows i > j: l = a_ij / a_jj, then a_ik -= l · a_jk for k > j. Row j's trailing part is staged
// in shared memory; each thread owns rows, so the column accesses coalesce across the warp.
__device__ void scale_and_update(float* a, std::int64_t lda, std::int64_t m, std::int64_t n, std::int64_t j,
                                 const float* reciprocal, std::int64_t first, std::int64_t step) {
  __shared__ float row[1024];
  for (std::int64_t k = j + 1 + threadIdx.x; k < n; k += blockDim.x) row[k - j - 1] = a[j + k * lda];
  __syncthreads();
  const float r = *reciprocal;
  const std::int64_t width = n - j - 1;
  for (std::int64_t i = j + 1 + first; i < m; i += step) {
    const float l = a[i + j * lda] * r;
    a[i + j * lda] = l;
    float* ai = a + i + (j + 1) * lda;
    for (std::int64_t k = 0; k < width; ++k) ai[k * lda] -= l * row[k];
  }
  __syncthreads();
}

__global__ void __launch_bounds__(kThreads) search_kernel(const float* a, std::int64_t lda, std::int64_t m,
                                                          std::int64_t j, float* block_max, int* block_index) {
  block_argmax(a, lda, m, j, static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x,
               static_cast<std::int64_t>(gridDim.x) * kThreads, block_max + blockIdx.x, block_index + blockIdx.x);
}

__global__ void __launch_bounds__(kThreads) pivot_kernel(float* a, std::int64_t lda, std::int64_t n, std::int64_t j,
                                                         int blocks, const float* block_max, const int* block_index,
                                                         int* ipiv, int* info, float* reciprocal) {
  choose_and_swap(a, lda, n, j, blocks, block_max, block_index, ipiv, info, reciprocal);
}

__global__ void __launch_bounds__(kThreads) update_kernel(float* a, std::int64_t lda, std::int64_t m, std::int64_t n,
                                                          std::int64_t j, const float* reciprocal) {
  scale_and_update(a, lda, m, n, j, reciprocal, static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x,
                   static_cast<std::int64_t>(gridDim.x) * kThreads);
}

__global__ void __launch_bounds__(kThreads) persistent_kernel(float* a, std::int64_t lda, std::int64_t m,
                                                              std::int64_t n, int* ipiv, int* info, float* block_max,
                                                              int* block_index, float* reciprocal) {
  cg::grid_group grid = cg::this_grid();
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kThreads + threadIdx.x;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * kThreads;
  for (std::int64_t j = 0; j < n && j < m; ++j) {
    block_argmax(a, lda, m, j, first, step, block_max + blockIdx.x, block_index + blockIdx.x);
    grid.sync();
    if (blockIdx.x == 0)
      choose_and_swap(a, lda, n, j, static_cast<int>(gridDim.x), block_max, block_index, ipiv, info, reciprocal);
    grid.sync();
    scale_and_update(a, lda, m, n, j, reciprocal, first, step);
    grid.sync();
  }
}

__global__ void __launch_bounds__(kThreads) grid_sync_loop_kernel(int rounds) {
  cg::grid_group grid = cg::this_grid();
  for (int r = 0; r < rounds; ++r) grid.sync();
}

int co_resident_blocks(const void* kernel) {
  int per_sm = 0;
  GPUFACT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0));
  return current_device_sm_count() * per_sm;
}

}  // namespace

int getf2_search_blocks(std::int64_t m) {
  const std::int64_t wanted = (m + 8 * kThreads - 1) / (8 * kThreads);  // ~8 rows per thread
  return static_cast<int>(std::clamp<std::int64_t>(wanted, 1, kMaxSearchBlocks));
}

int getf2_persistent_blocks(std::int64_t m) {
  const int limit = co_resident_blocks(reinterpret_cast<const void*>(persistent_kernel));
  return std::min(getf2_search_blocks(m), limit);
}

void launch_getf2_column(float* a, std::int64_t lda, std::int64_t m, std::int64_t n, std::int64_t j, int* ipiv,
                         int* info, Getf2Workspace ws, cudaStream_t stream) {
  if (n > 1024) throw std::invalid_argument("getf2 panel width must be <= 1024");
  const int blocks = getf2_search_blocks(m - j);
  search_kernel<<<blocks, kThreads, 0, stream>>>(a, lda, m, j, ws.block_max, ws.block_index);
  GPUFACT_CHECK_LAUNCH();
  pivot_kernel<<<1, kThreads, 0, stream>>>(a, lda, n, j, blocks, ws.block_max, ws.block_index, ipiv, info,
                                           ws.reciprocal);
  GPUFACT_CHECK_LAUNCH();
  if (j + 1 < m) {
    update_kernel<<<getf2_search_blocks(m - j - 1), kThreads, 0, stream>>>(a, lda, m, n, j, ws.reciprocal);
    GPUFACT_CHECK_LAUNCH();
  }
}

void launch_getf2_persistent(float* a, std::int64_t lda, std::int64_t m, std::int64_t n, int* ipiv, int* info,
                             Getf2Workspace ws, cudaStream_t stream) {
  if (n > 1024) throw std::invalid_argument("getf2 panel width must be <= 1024");
  const int blocks = getf2_persistent_blocks(m);
  void* args[] = {&a, &lda, &m, &n, &ipiv, &info, &ws.block_max, &ws.block_index, &ws.reciprocal};
  GPUFACT_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(persistent_kernel), dim3(blocks),
                                                 dim3(kThreads), args, 0, stream));
}

void launch_grid_sync_loop(int rounds, int blocks, cudaStream_t stream) {
  const int limit = co_resident_blocks(reinterpret_cast<const void*>(grid_sync_loop_kernel));
  if (blocks < 1 || blocks > limit)
    throw std::invalid_argument("grid_sync_loop: blocks must be in [1, " + std::to_string(limit) + "]");
  void* args[] = {&rounds};
  GPUFACT_CUDA_CHECK(cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(grid_sync_loop_kernel), dim3(blocks),
                                                 dim3(kThreads), args, 0, stream));
}

}  // namespace gpufact::kernels
