#include "kernels/gemm/sgemm_splitk.cuh"

#include "kernels/gemm/gemm_arguments.hpp"

#include "core/cuda/check.hpp"
#include "kernels/gemm/sgemm_simt.cuh"

#include <cstdint>

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

// The same sum four rows at a time (m % 4 == 0, C and ldc 16-byte aligned): float4 reads of the
// partials and of C, still in slice order, so the result equals splitk_reduce_kernel's.
__global__ void splitk_reduce4_kernel(std::int64_t m, std::int64_t n, int splits, const float4* ws, float alpha,
                                      float beta, float* c, std::int64_t ldc) {
  const std::int64_t quads = m / 4 * n;  // float4 per partial
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t q = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; q < quads; q += stride) {
    float4 sum = ws[q];
    for (int s = 1; s < splits; ++s) {
      const float4 v = ws[static_cast<std::int64_t>(s) * quads + q];
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
    const std::int64_t idx = 4 * q, j = idx / m, i = idx - j * m;
    float4* out = reinterpret_cast<float4*>(c + i + j * ldc);
    float4 r = make_float4(alpha * sum.x, alpha * sum.y, alpha * sum.z, alpha * sum.w);
    if (beta != 0.0f) {
      const float4 old = *out;
      r = make_float4(__fmaf_rn(alpha, sum.x, beta * old.x), __fmaf_rn(alpha, sum.y, beta * old.y),
                      __fmaf_rn(alpha, sum.z, beta * old.z), __fmaf_rn(alpha, sum.w, beta * old.w));
    }
    *out = r;
  }
}

// Split-k's reduction with the splits spread over threads too (small C has few outputs and many
// splits: one thread per output would walk hundreds of partials in a row). A block takes
// 256 / GROUPS items (4-row quads, or single entries when W = 1) × GROUPS groups of consecutive
// splits; each thread sums its group in split order with 4 loads in flight, then the groups are
// added in order in shared memory. Deterministic; the order is fixed by (splits, GROUPS).

__device__ __forceinline__ float4 add(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }
__device__ __forceinline__ float add(float a, float b) { return a + b; }
__device__ __forceinline__ void merge(float4& out, float4 sum, float alpha, float beta) {
  if (beta == 0.0f) {
    out = make_float4(alpha * sum.x, alpha * sum.y, alpha * sum.z, alpha * sum.w);
  } else {
    const float4 old = out;
    out = make_float4(__fmaf_rn(alpha, sum.x, beta * old.x), __fmaf_rn(alpha, sum.y, beta * old.y),
                      __fmaf_rn(alpha, sum.z, beta * old.z), __fmaf_rn(alpha, sum.w, beta * old.w));
  }
}
__device__ __forceinline__ void merge(float& out, float sum, float alpha, float beta) {
  out = beta == 0.0f ? alpha * sum : __fmaf_rn(alpha, sum, beta * out);
}

template <typename T, int GROUPS>
__global__ void __launch_bounds__(256)
    splitk_grouped_reduce_kernel(std::int64_t m, std::int64_t n, int splits, const T* __restrict__ ws, float alpha,
                                 float beta, float* c, std::int64_t ldc) {
  constexpr int W = sizeof(T) / sizeof(float);
  constexpr int kGroups = GROUPS, kGroupItems = 256 / GROUPS;
  static_assert(kGroups * kGroupItems == 256, "256 threads");
  __shared__ T partial[kGroups][kGroupItems];
  const std::int64_t items = m / W * n;  // W = 4 needs m % 4 == 0
  const int slot = threadIdx.x % kGroupItems, group = threadIdx.x / kGroupItems;
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * kGroupItems + slot;
  const int per = (splits + kGroups - 1) / kGroups;
  const int s_begin = group * per, s_end = min(splits, s_begin + per);
  T sum{};
  if (item < items) {
    const T* src = ws + item;
    int s = s_begin;
    for (; s + 4 <= s_end; s += 4) {
      const T v0 = src[static_cast<std::int64_t>(s) * items], v1 = src[static_cast<std::int64_t>(s + 1) * items];
      const T v2 = src[static_cast<std::int64_t>(s + 2) * items], v3 = src[static_cast<std::int64_t>(s + 3) * items];
      sum = add(add(add(add(sum, v0), v1), v2), v3);
    }
    for (; s < s_end; ++s) sum = add(sum, src[static_cast<std::int64_t>(s) * items]);
  }
  partial[group][slot] = sum;
  __syncthreads();
  if (group != 0 || item >= items) return;
#pragma unroll
  for (int g = 1; g < kGroups; ++g) sum = add(sum, partial[g][slot]);
  const std::int64_t idx = W * item, j = idx / m, i = idx - j * m;
  merge(*reinterpret_cast<T*>(c + i + j * ldc), sum, alpha, beta);
}

template <typename T, int GROUPS>
void launch_grouped_reduce(std::int64_t m, std::int64_t n, int splits, const float* ws, float alpha, float beta,
                           float* c, std::int64_t ldc, cudaStream_t stream) {
  const std::int64_t items = m / static_cast<std::int64_t>(sizeof(T) / sizeof(float)) * n;
  const std::int64_t blocks = (items + 256 / GROUPS - 1) / (256 / GROUPS);
  check_grid("sgemm_splitk_simt", blocks, 1, 1);
  splitk_grouped_reduce_kernel<T, GROUPS><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
      m, n, splits, reinterpret_cast<const T*>(ws), alpha, beta, c, ldc);
  GPUFACT_CHECK_LAUNCH();
}

// 32 groups when C is small and the splits many (C = 64 × 64 with 256 splits: 128 blocks of 8
// splits per thread), else 8.
void reduce_partials_grouped(std::int64_t m, std::int64_t n, int splits, const float* ws, float alpha, float beta,
                             float* c, std::int64_t ldc, cudaStream_t stream) {
  const bool vector = m % 4 == 0 && ldc % 4 == 0 && reinterpret_cast<std::uintptr_t>(c) % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(ws) % 16 == 0;
  const std::int64_t items = vector ? m / 4 * n : m * n;
  const bool wide = splits >= 64 && items <= 16384;
  if (vector)
    (wide ? launch_grouped_reduce<float4, 32> : launch_grouped_reduce<float4, 8>)(m, n, splits, ws, alpha, beta, c,
                                                                                  ldc, stream);
  else
    (wide ? launch_grouped_reduce<float, 32> : launch_grouped_reduce<float, 8>)(m, n, splits, ws, alpha, beta, c, ldc,
                                                                                stream);
}

// C := α Σ_s ws[s] + β C over the splits × m × n partials (ld m): float4 when the shapes allow.
void reduce_partials(std::int64_t m, std::int64_t n, int splits, const float* ws, float alpha, float beta, float* c,
                     std::int64_t ldc, cudaStream_t stream) {
  const bool vector = m % 4 == 0 && ldc % 4 == 0 && reinterpret_cast<std::uintptr_t>(c) % 16 == 0 &&
                      reinterpret_cast<std::uintptr_t>(ws) % 16 == 0;
  const std::int64_t items = vector ? m / 4 * n : m * n;
  const std::int64_t blocks = (items + 255) / 256 < 4096 ? (items + 255) / 256 : 4096;
  if (vector)
    splitk_reduce4_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
        m, n, splits, reinterpret_cast<const float4*>(ws), alpha, beta, c, ldc);
  else
    splitk_reduce_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(m, n, splits, ws, alpha, beta, c, ldc);
  GPUFACT_CHECK_LAUNCH();
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
  reduce_partials(m, n, splits, workspace, alpha, beta, c, ldc, stream);
}

std::int64_t sgemm_splitk_simt_slice(std::string_view config, std::int64_t k, int splits) {
  if (splits < 1) throw std::invalid_argument("sgemm_splitk_simt: splits = " + std::to_string(splits) + " must be >= 1");
  const std::int64_t depth = sgemm_simt_config(config).block_k;
  const std::int64_t per = (k + splits - 1) / splits;
  return per <= 0 ? depth : (per + depth - 1) / depth * depth;
}

void sgemm_splitk_simt(std::string_view config, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                       int splits, float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                       float beta, float* c, std::int64_t ldc, float* workspace, std::size_t workspace_floats,
                       cudaStream_t stream) {
  check_gemm_arguments("sgemm_splitk_simt", ta, tb, m, n, k, lda, ldb, ldc);
  if (ta == Op::T && tb == Op::T) throw std::invalid_argument("sgemm_splitk_simt: TT is not supported (NN, NT, TN)");
  if (splits < 1 || splits > kSplitkMaxSplits)
    throw std::invalid_argument("sgemm_splitk_simt: splits = " + std::to_string(splits) + " outside 1.." +
                                std::to_string(kSplitkMaxSplits));
  if (m == 0 || n == 0) return;
  const std::size_t need = sgemm_splitk_workspace_floats(m, n, splits);
  if (workspace == nullptr || workspace_floats < need)
    throw std::invalid_argument("sgemm_splitk_simt: workspace of " + std::to_string(workspace_floats) + " floats, " +
                                std::to_string(need) + " needed");
  const std::int64_t slice = sgemm_splitk_simt_slice(config, k, splits);
  sgemm_simt_partials(config, ta, tb, m, n, k, splits, slice, a, lda, b, ldb, workspace, workspace_floats, stream);
  reduce_partials_grouped(m, n, splits, workspace, alpha, beta, c, ldc, stream);
}

}  // namespace gpufact::kernels
