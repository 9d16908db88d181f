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

int blocks_for(std::int64_t n) { return static_cast<int>(std::clamp<std::int64_t>(n, 1, kMaxBlocks)); }

template <class T>
void split(const T* lu, std::int64_t ld, std::int64_t m, std::int64_t n, T* l, std::int64_t ldl, T* u,
           std::int64_t ldu, cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  split_lu_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(lu, ld, m, n, l, ldl, u, ldu);
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

}  // namespace gpufact::kernels
