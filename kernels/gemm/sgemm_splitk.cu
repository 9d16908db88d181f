#include "kernels/gemm/sgemm_splitk.cuh"

#include "kernels/gemm/gemm_arguments.hpp"

#include "core/cuda/check.hpp"

#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

constexpr int kTile = 64;      // C tile per block: 64 × 64
constexpr int kDepth = 16;     // k per shared-memory stage
constexpr int kThreads = 256;  // 16 × 16 threads, 4 × 4 outputs each
constexpr int kPad = 4;        // keeps rows 16-byte aligned for the float4 reads
constexpr int kLoads = kTile * kDepth / kThreads;  // elements of A (and of B) per thread per stage

// Partial product of one k slice for one 64 × 64 tile: ws[slice] (m × n, ld m) :=
// A(rows, slice) · op(B)(slice, cols). Each output accumulates its slice in k order (fma), so the
// host reference can replay it exactly. Out-of-range loads give 0 (fma(0, 0, c) = c).
template <bool TransB>
__global__ void __launch_bounds__(kThreads)
    splitk_partial_kernel(std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t slice, const float* a,
                          std::int64_t lda, const float* b, std::int64_t ldb, float* ws) {
  __shared__ __align__(16) float as[2][kDepth][kTile + kPad];  // as[kk][row]
  __shared__ __align__(16) float bs[2][kDepth][kTile + kPad];  // bs[kk][col]
  const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * kTile;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.y) * kTile;
  const std::int64_t kbegin = static_cast<std::int64_t>(blockIdx.z) * slice;
  const std::int64_t kend = kbegin + slice < k ? kbegin + slice : k;

  float ra[kLoads], rb[kLoads];
  // A: 64 rows × 16 k, rows fastest (coalesced). NN B: 16 k × 64 columns, k fastest;
  // NT B (n × k): columns fastest.
  auto load = [&](std::int64_t k0) {
#pragma unroll
    for (int r = 0; r < kLoads; ++r) {
      const int idx = tid + r * kThreads;
      const int arow = idx & (kTile - 1), akk = idx / kTile;
      const std::int64_t gi = row0 + arow, gk = k0 + akk;
      ra[r] = gi < m && gk < kend ? a[gi + gk * lda] : 0.0f;
      if (TransB) {
        const int bcol = idx & (kTile - 1), bkk = idx / kTile;
        const std::int64_t gj = col0 + bcol, gkb = k0 + bkk;
        rb[r] = gj < n && gkb < kend ? b[gj + gkb * ldb] : 0.0f;
      } else {
        const int bkk = idx & (kDepth - 1), bcol = idx / kDepth;
        const std::int64_t gj = col0 + bcol, gkb = k0 + bkk;
        rb[r] = gj < n && gkb < kend ? b[gkb + gj * ldb] : 0.0f;
      }
    }
  };
  auto store = [&](int stage) {
#pragma unroll
    for (int r = 0; r < kLoads; ++r) {
      const int idx = tid + r * kThreads;
      as[stage][idx / kTile][idx & (kTile - 1)] = ra[r];
      if (TransB)
        bs[stage][idx / kTile][idx & (kTile - 1)] = rb[r];
      else
        bs[stage][idx & (kDepth - 1)][idx / kDepth] = rb[r];
    }
  };

  float acc[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;

  const std::int64_t stages = kend > kbegin ? (kend - kbegin + kDepth - 1) / kDepth : 0;
  if (stages > 0) {
    load(kbegin);
    store(0);
    __syncthreads();
  }
  // Two shared stages: the next stage's loads are in flight while this one is multiplied, and
  // one barrier per stage suffices because a stage is rewritten only two stages later.
#pragma unroll 1
  for (std::int64_t s = 0; s < stages; ++s) {
    const int cur = static_cast<int>(s & 1);
    if (s + 1 < stages) load(kbegin + (s + 1) * kDepth);
#pragma unroll
    for (int kk = 0; kk < kDepth; ++kk) {
      const float4 av = *reinterpret_cast<const float4*>(&as[cur][kk][tx * 4]);
      const float4 bv = *reinterpret_cast<const float4*>(&bs[cur][kk][ty * 4]);
      const float ar[4] = {av.x, av.y, av.z, av.w}, br[4] = {bv.x, bv.y, bv.z, bv.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = __fmaf_rn(ar[i], br[j], acc[i][j]);
    }
    if (s + 1 < stages) store(cur ^ 1);
    __syncthreads();
  }

  float* out = ws + static_cast<std::int64_t>(blockIdx.z) * m * n;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const std::int64_t gj = col0 + ty * 4 + j;
    if (gj >= n) continue;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const std::int64_t gi = row0 + tx * 4 + i;
      if (gi < m) out[gi + gj * m] = acc[i][j];
    }
  }
}

// C := α (ws[0] + ws[1] + … in slice order) + β C; β = 0 never reads C.
__global__ void splitk_reduce_kernel(std::int64_t m, std::int64_t n, int splits, const float* ws, float alpha,
                                     float beta, float* c, std::int64_t ldc) {
  const std::int64_t count = m * n;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t idx = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; idx < count;
       idx += stride) {
    float sum = ws[idx];
    for (int s = 1; s < splits; ++s) sum += ws[static_cast<std::int64_t>(s) * count + idx];
    const std::int64_t j = idx / m, i = idx - j * m;
    float* out = c + i + j * ldc;
    *out = beta == 0.0f ? alpha * sum : __fmaf_rn(alpha, sum, beta * *out);
  }
}

}  // namespace

std::int64_t sgemm_splitk_slice(std::int64_t k, int splits) {
  if (splits < 1) throw std::invalid_argument("sgemm_splitk: splits = " + std::to_string(splits) + " must be >= 1");
  const std::int64_t per = (k + splits - 1) / splits;
  return per <= 0 ? kDepth : (per + kDepth - 1) / kDepth * kDepth;
}

std::size_t sgemm_splitk_workspace_floats(std::int64_t m, std::int64_t n, int splits) {
  if (m < 0 || n < 0 || splits < 1) throw std::invalid_argument("sgemm_splitk_workspace_floats: bad sizes");
  return static_cast<std::size_t>(m) * static_cast<std::size_t>(n) * static_cast<std::size_t>(splits);
}

void sgemm_splitk(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, int splits, float alpha,
                  const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                  std::int64_t ldc, float* workspace, std::size_t workspace_floats, cudaStream_t stream) {
  if (ta != Op::N) throw std::invalid_argument("sgemm_splitk: transa must be N (AB and ABᵀ, as volkov08 §4.2)");
  check_gemm_arguments("sgemm_splitk", ta, tb, m, n, k, lda, ldb, ldc);
  if (splits < 1 || splits > kSplitkMaxSplits)
    throw std::invalid_argument("sgemm_splitk: splits = " + std::to_string(splits) + " outside 1.." +
                                std::to_string(kSplitkMaxSplits));
  if (m == 0 || n == 0) return;
  const std::size_t need = sgemm_splitk_workspace_floats(m, n, splits);
  if (workspace == nullptr || workspace_floats < need)
    throw std::invalid_argument("sgemm_splitk: workspace of " + std::to_string(workspace_floats) + " floats, " +
                                std::to_string(need) + " needed");
  const std::int64_t gx = (m + kTile - 1) / kTile, gy = (n + kTile - 1) / kTile;
  check_grid("sgemm_splitk", gx, gy, splits);
  const std::int64_t slice = sgemm_splitk_slice(k, splits);
  const dim3 grid(static_cast<unsigned>(gx), static_cast<unsigned>(gy), static_cast<unsigned>(splits));
  if (tb == Op::N)
    splitk_partial_kernel<false><<<grid, kThreads, 0, stream>>>(m, n, k, slice, a, lda, b, ldb, workspace);
  else
    splitk_partial_kernel<true><<<grid, kThreads, 0, stream>>>(m, n, k, slice, a, lda, b, ldb, workspace);
  GPUFACT_CHECK_LAUNCH();
  const std::int64_t count = m * n;
  const std::int64_t blocks = (count + 255) / 256 < 4096 ? (count + 255) / 256 : 4096;
  splitk_reduce_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(m, n, splits, workspace, alpha, beta, c,
                                                                          ldc);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
