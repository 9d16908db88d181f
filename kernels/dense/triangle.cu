#include "kernels/dense/triangle.cuh"

#include "core/cuda/check.hpp"

#include <algorithm>

namespace gpufact::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 65535;

int blocks_for(std::int64_t columns) { return static_cast<int>(std::clamp<std::int64_t>(columns, 1, kMaxBlocks)); }

// One block per column (grid-stride), threads down the rows: the upper entries of column j are
// rows [0, j), read from row j of the lower triangle (strided reads; this runs once per test matrix).
template <class T>
__global__ void mirror_kernel(T* a, std::int64_t ld, std::int64_t n) {
  for (std::int64_t j = blockIdx.x; j < n; j += gridDim.x)
    for (std::int64_t i = threadIdx.x; i < j; i += blockDim.x) a[i + j * ld] = a[j + i * ld];
}

template <class T>
__global__ void zero_upper_kernel(T* a, std::int64_t ld, std::int64_t n) {
  for (std::int64_t j = blockIdx.x; j < n; j += gridDim.x)
    for (std::int64_t i = threadIdx.x; i < j; i += blockDim.x) a[i + j * ld] = T(0);
}

template <class T>
__global__ void find_nonfinite_lower_kernel(const T* a, std::int64_t ld, std::int64_t n, unsigned long long* first) {
  for (std::int64_t j = blockIdx.x; j < n; j += gridDim.x)
    for (std::int64_t i = j + threadIdx.x; i < n; i += blockDim.x)
      if (!isfinite(a[i + j * ld])) atomicMin(first, static_cast<unsigned long long>(i + j * n));
}

template <class T>
void mirror(T* a, std::int64_t ld, std::int64_t n, cudaStream_t s) {
  if (n <= 1) return;
  mirror_kernel<T><<<blocks_for(n), kThreads, 0, s>>>(a, ld, n);
  GPUFACT_CHECK_LAUNCH();
}
template <class T>
void zero_upper(T* a, std::int64_t ld, std::int64_t n, cudaStream_t s) {
  if (n <= 1) return;
  zero_upper_kernel<T><<<blocks_for(n), kThreads, 0, s>>>(a, ld, n);
  GPUFACT_CHECK_LAUNCH();
}
template <class T>
void find_lower(const T* a, std::int64_t ld, std::int64_t n, unsigned long long* first, cudaStream_t s) {
  if (n <= 0) return;
  find_nonfinite_lower_kernel<T><<<blocks_for(n), kThreads, 0, s>>>(a, ld, n, first);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace

void launch_mirror_lower_to_upper(float* a, std::int64_t ld, std::int64_t n, cudaStream_t s) { mirror(a, ld, n, s); }
void launch_mirror_lower_to_upper(double* a, std::int64_t ld, std::int64_t n, cudaStream_t s) { mirror(a, ld, n, s); }
void launch_zero_strict_upper(float* a, std::int64_t ld, std::int64_t n, cudaStream_t s) { zero_upper(a, ld, n, s); }
void launch_zero_strict_upper(double* a, std::int64_t ld, std::int64_t n, cudaStream_t s) { zero_upper(a, ld, n, s); }
void launch_find_nonfinite_lower(const float* a, std::int64_t ld, std::int64_t n, unsigned long long* first,
                                 cudaStream_t s) {
  find_lower(a, ld, n, first, s);
}
void launch_find_nonfinite_lower(const double* a, std::int64_t ld, std::int64_t n, unsigned long long* first,
                                 cudaStream_t s) {
  find_lower(a, ld, n, first, s);
}

}  // namespace gpufact::kernels
