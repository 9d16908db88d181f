#include "kernels/dense/trsm_unit_lower.cuh"

#include "core/cuda/check.hpp"
#include "kernels/common/vec16.cuh"

#include <algorithm>

#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

constexpr int kMaxThreads = 256;
constexpr int kBlock = 16;  // rows solved per step
constexpr int kCols = 8;    // right-hand sides per CTA (X, this block's L and the next one's in registers)

// blockDim.x = h rounded up to a warp, at most kMaxThreads; RPT rows a thread.
template <class T, int RPT>
__global__ void __launch_bounds__(kMaxThreads)
    trsm_unit_lower_kernel(const T* __restrict__ l, std::int64_t ldl, int h, T* __restrict__ b, std::int64_t ldb,
                           std::int64_t nrhs) {
  constexpr int C = kCols;
  __shared__ __align__(16) T solved[2][kBlock][C];
  const int t = static_cast<int>(threadIdx.x), threads = static_cast<int>(blockDim.x);
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.x) * C;
  const int cols = static_cast<int>(nrhs - c0 < C ? nrhs - c0 : C);
  // Rows t + r·threads of the CTA's columns.
  T x[RPT][C];
#pragma unroll
  for (int r = 0; r < RPT; ++r) {
    const int i = t + r * threads;
#pragma unroll
    for (int c = 0; c < C; ++c) x[r][c] = i < h && c < cols ? b[i + (c0 + c) * ldb] : T(0);
  }
  // L(i, k0 .. k0 + 15) of this thread's rows, zero on and above the diagonal.
  const auto load_l = [&](int k0, T (&dst)[RPT][kBlock]) {
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
      const int i = t + r * threads;
#pragma unroll
      for (int j = 0; j < kBlock; ++j)
        dst[r][j] = i < h && k0 + j < i ? l[i + static_cast<std::int64_t>(k0 + j) * ldl] : T(0);
    }
  };
  T lrow[RPT][kBlock];
  load_l(0, lrow);
  const int blocks = (h + kBlock - 1) / kBlock;
  for (int blk = 0; blk < blocks; ++blk) {
    const int k0 = blk * kBlock;
    T next[RPT][kBlock];
    if (blk + 1 < blocks) load_l(k0 + kBlock, next);  // in flight during this block
    // The block's rows are threads base .. base + 15 at register row owner: one warp solves them,
    // row j's values shuffled to the rows below it.
    const int owner = k0 / threads, base = k0 % threads;
    if ((t >> 5) == (base >> 5)) {
      const int off = t - base;
#pragma unroll
      for (int r = 0; r < RPT; ++r) {
        if (r != owner) continue;
#pragma unroll
        for (int j = 0; j < kBlock; ++j) {
          const int src = (base & 31) + j;
#pragma unroll
          for (int c = 0; c < C; ++c) {
            const T v = __shfl_sync(0xffffffffu, x[r][c], src);
            if (off > j && off < kBlock) x[r][c] -= lrow[r][j] * v;
          }
        }
        if (off >= 0 && off < kBlock) {
#pragma unroll
          for (int c = 0; c < C; ++c) solved[blk & 1][off][c] = x[r][c];
        }
      }
    }
    __syncthreads();  // the block's X written; the other buffer's readers are past the last barrier
#pragma unroll
    for (int r = 0; r < RPT; ++r) {
      if (t + r * threads < k0 + kBlock) continue;  // final already, or the block itself
#pragma unroll
      for (int j = 0; j < kBlock; ++j) {
        T xj[C];
        load_vec(&solved[blk & 1][j][0], xj);
#pragma unroll
        for (int c = 0; c < C; ++c) x[r][c] -= lrow[r][j] * xj[c];
      }
    }
    if (blk + 1 < blocks) {
#pragma unroll
      for (int r = 0; r < RPT; ++r)
#pragma unroll
        for (int j = 0; j < kBlock; ++j) lrow[r][j] = next[r][j];
    }
  }
#pragma unroll
  for (int r = 0; r < RPT; ++r) {
    const int i = t + r * threads;
    if (i >= h) continue;
#pragma unroll
    for (int c = 0; c < C; ++c)
      if (c < cols) b[i + (c0 + c) * ldb] = x[r][c];
  }
}

template <class T>
void trsm_unit_lower(const T* l, std::int64_t ldl, std::int64_t h, T* b, std::int64_t ldb, std::int64_t nrhs,
                     cudaStream_t stream) {
  const auto bad = [](const std::string& what) { throw std::invalid_argument("launch_trsm_unit_lower: " + what); };
  if (h < 0 || nrhs < 0) bad("negative size");
  if (h > kTrsmUnitLowerMaxRows)
    bad("h = " + std::to_string(h) + " exceeds " + std::to_string(kTrsmUnitLowerMaxRows));
  if (ldl < h || ldb < h) bad("leading dimension < h");
  if (h == 0 || nrhs == 0) return;
  const auto grid = static_cast<unsigned>((nrhs + kCols - 1) / kCols);
  if (grid > 0x7fffffffu) bad("nrhs = " + std::to_string(nrhs) + " too large");
  const int hi = static_cast<int>(h);
  // Fewer threads for a short L: every block step has a barrier.
  const int threads = static_cast<int>(std::min<std::int64_t>(kMaxThreads, (h + 31) / 32 * 32));
  if (h <= kMaxThreads)
    trsm_unit_lower_kernel<T, 1><<<grid, threads, 0, stream>>>(l, ldl, hi, b, ldb, nrhs);
  else
    trsm_unit_lower_kernel<T, 2><<<grid, threads, 0, stream>>>(l, ldl, hi, b, ldb, nrhs);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace

void launch_trsm_unit_lower(const float* l, std::int64_t ldl, std::int64_t h, float* b, std::int64_t ldb,
                            std::int64_t nrhs, cudaStream_t stream) {
  trsm_unit_lower(l, ldl, h, b, ldb, nrhs, stream);
}
void launch_trsm_unit_lower(const double* l, std::int64_t ldl, std::int64_t h, double* b, std::int64_t ldb,
                            std::int64_t nrhs, cudaStream_t stream) {
  trsm_unit_lower(l, ldl, h, b, ldb, nrhs, stream);
}

}  // namespace gpufact::kernels
