#include "kernels/dense/lu_residual.cuh"

#include "core/cuda/check.hpp"

#include <algorithm>

namespace gpufact::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 65535;

// One block per column (grid-stride over columns): writes column j of l (if j < k) and of u.
template <class T>
__global__ void split_lu_kernel(const T* lu, std::int64_t ld, std::int64_t m, std::int64_t n, T* l, std::int64_t ldl,
                                T* u, std::int64_t ldu) {
  const std::int64_t k = m < n ? m : n;
  for (std::int64_t j = blockIdx.x; j < n; j += gridDim.x) {
    for (std::int64_t i = threadIdx.x; i < m; i += blockDim.x) {
      const T v = lu[i + j * ld];
      if (j < k) l[i + j * ldl] = i > j ? v : (i == j ? T(1) : T(0));
      if (i < k) u[i + j * ldu] = i <= j ? v : T(0);
    }
  }
}

template <class T>
__global__ void column_abs_sums_kernel(const T* a, std::int64_t ld, std::int64_t m, std::int64_t n, double* sums) {
  __shared__ double partial[kThreads / 32];
  for (std::int64_t j = blockIdx.x; j < n; j += gridDim.x) {
    double s = 0.0;
    for (std::int64_t i = threadIdx.x; i < m; i += blockDim.x) s += fabs(static_cast<double>(a[i + j * ld]));
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if ((threadIdx.x & 31) == 0) partial[threadIdx.x / 32] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
      double t = 0.0;
      for (int w = 0; w < kThreads / 32; ++w) t += partial[w];
      sums[j] = t;
    }
    __syncthreads();
  }
}

template <class T>
__global__ void widen_factor_kernel(const T* src, std::int64_t ld, std::int64_t m, std::int64_t n, FactorPart part,
                                    double* dst, std::int64_t lddst) {
  for (std::int64_t j = blockIdx.x; j < n; j += gridDim.x)
    for (std::int64_t i = threadIdx.x; i < m; i += blockDim.x) {
      const double v = static_cast<double>(src[i + j * ld]);
      double out = v;
      if (part == FactorPart::upper) out = i <= j ? v : 0.0;
      if (part == FactorPart::lower) out = i >= j ? v : 0.0;
      if (part == FactorPart::unit_lower) out = i > j ? v : (i == j ? 1.0 : 0.0);
      dst[i + j * lddst] = out;
    }
}

__global__ void column_abs_stats_kernel(const double* a, std::int64_t ld, std::int64_t m, std::int64_t n,
                                        double* sums, double* maxes) {
  __shared__ double partial_sum[kThreads / 32], partial_max[kThreads / 32];
  for (std::int64_t j = blockIdx.x; j < n; j += gridDim.x) {
    double s = 0.0, x = 0.0;
    for (std::int64_t i = threadIdx.x; i < m; i += blockDim.x) {
      const double v = fabs(a[i + j * ld]);
      s += v;
      x = (v > x || v != v) ? v : x;  // keeps a NaN
    }
    for (int off = 16; off > 0; off >>= 1) {
      s += __shfl_down_sync(0xffffffffu, s, off);
      const double y = __shfl_down_sync(0xffffffffu, x, off);
      x = (y > x || y != y) ? y : x;
    }
    if ((threadIdx.x & 31) == 0) partial_sum[threadIdx.x / 32] = s, partial_max[threadIdx.x / 32] = x;
    __syncthreads();
    if (threadIdx.x == 0) {
      double t = 0.0, u = 0.0;
      for (int w = 0; w < kThreads / 32; ++w) {
        t += partial_sum[w];
        u = (partial_max[w] > u || partial_max[w] != partial_max[w]) ? partial_max[w] : u;
      }
      sums[j] = t;
      maxes[j] = u;
    }
    __syncthreads();
  }
}

int blocks_for(std::int64_t n) { return static_cast<int>(std::clamp<std::int64_t>(n, 1, kMaxBlocks)); }

template <class T>
void split(const T* lu, std::int64_t ld, std::int64_t m, std::int64_t n, T* l, std::int64_t ldl, T* u,
           std::int64_t ldu, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  split_lu_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(lu, ld, m, n, l, ldl, u, ldu);
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void widen(const T* src, std::int64_t ld, std::int64_t m, std::int64_t n, FactorPart part, double* dst,
           std::int64_t lddst, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  widen_factor_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(src, ld, m, n, part, dst, lddst);
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void abs_sums(const T* a, std::int64_t ld, std::int64_t m, std::int64_t n, double* sums, cudaStream_t stream) {
  if (n <= 0) return;
  column_abs_sums_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(a, ld, m, n, sums);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace

void launch_split_lu(const float* lu, std::int64_t ld, std::int64_t m, std::int64_t n, float* l, std::int64_t ldl,
                     float* u, std::int64_t ldu, cudaStream_t stream) {
  split(lu, ld, m, n, l, ldl, u, ldu, stream);
}
void launch_split_lu(const double* lu, std::int64_t ld, std::int64_t m, std::int64_t n, double* l, std::int64_t ldl,
                     double* u, std::int64_t ldu, cudaStream_t stream) {
  split(lu, ld, m, n, l, ldl, u, ldu, stream);
}
void launch_column_abs_sums(const float* a, std::int64_t ld, std::int64_t m, std::int64_t n, double* sums,
                            cudaStream_t stream) {
  abs_sums(a, ld, m, n, sums, stream);
}
void launch_column_abs_sums(const double* a, std::int64_t ld, std::int64_t m, std::int64_t n, double* sums,
                            cudaStream_t stream) {
  abs_sums(a, ld, m, n, sums, stream);
}

void launch_widen_factor(const float* src, std::int64_t ld, std::int64_t m, std::int64_t n, FactorPart part,
                         double* dst, std::int64_t lddst, cudaStream_t stream) {
  widen(src, ld, m, n, part, dst, lddst, stream);
}
void launch_widen_factor(const double* src, std::int64_t ld, std::int64_t m, std::int64_t n, FactorPart part,
                         double* dst, std::int64_t lddst, cudaStream_t stream) {
  widen(src, ld, m, n, part, dst, lddst, stream);
}
void launch_column_abs_stats(const double* a, std::int64_t ld, std::int64_t m, std::int64_t n, double* sums,
                             double* maxes, cudaStream_t stream) {
  if (n <= 0) return;
  column_abs_stats_kernel<<<blocks_for(n), kThreads, 0, stream>>>(a, ld, m, n, sums, maxes);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
