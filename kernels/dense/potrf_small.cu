#include "kernels/dense/potrf_small.cuh"

#include "core/cuda/check.hpp"

#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kLd = kPotrfSmallMax + 1;  // odd leading dimension: column walks hit distinct banks

// Right-looking unblocked Cholesky (LAPACK potf2's operations in column order): at step j the
// pivot is final, column j is divided by its square root, and the trailing lower triangle takes
// the rank-1 update. Two barriers per column; every exit is uniform (all threads read the same
// pivot after the same barrier).
template <class T>
__global__ void __launch_bounds__(kThreads) potrf_small_kernel(T* __restrict__ a, std::int64_t lda, int n,
                                                               int* __restrict__ info, int info_offset) {
  __shared__ T s[kPotrfSmallMax * kLd];
  const int t = threadIdx.x;
  for (int e = t; e < n * n; e += kThreads) {
    const int i = e % n, j = e / n;
    if (i >= j) s[i + j * kLd] = a[i + j * lda];
  }
  int failed = -1;
  for (int j = 0; j < n; ++j) {
    __syncthreads();
    const T d = s[j + j * kLd];
    if (!(d > T(0))) {
      failed = j;
      break;
    }
    const T r = sqrt(d);
    __syncthreads();  // every thread has read the pivot before it is overwritten
    if (t == 0) s[j + j * kLd] = r;
    for (int i = j + 1 + t; i < n; i += kThreads) s[i + j * kLd] /= r;
    __syncthreads();
    // Trailing lower triangle: warps take columns, lanes take rows.
    const int lane = t & 31, warp = t >> 5;
    for (int k = j + 1 + warp; k < n; k += kThreads / 32) {
      const T lk = s[k + j * kLd];
      for (int i = k + lane; i < n; i += 32) s[i + k * kLd] = fma(-s[i + j * kLd], lk, s[i + k * kLd]);
    }
  }
  __syncthreads();
  // The columns before the failure are final; the rest are left as the steps left them (LAPACK
  // leaves them partly updated too).
  for (int e = t; e < n * n; e += kThreads) {
    const int i = e % n, j = e / n;
    if (i >= j) a[i + j * lda] = s[i + j * kLd];
  }
  if (failed >= 0 && t == 0) atomicCAS(info, 0, info_offset + failed + 1);
}

template <class T>
void potrf_small(T* a, std::int64_t lda, int n, int* info, int info_offset, cudaStream_t stream) {
  if (n < 0 || n > kPotrfSmallMax)
    throw std::invalid_argument("launch_potrf_small: n = " + std::to_string(n) + " is outside 0.." +
                                std::to_string(kPotrfSmallMax));
  if (lda < (n > 1 ? n : 1)) throw std::invalid_argument("launch_potrf_small: lda < max(1, n)");
  if (n == 0) return;
  potrf_small_kernel<T><<<1, kThreads, 0, stream>>>(a, lda, n, info, info_offset);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace

void launch_potrf_small(float* a, std::int64_t lda, int n, int* info, int info_offset, cudaStream_t stream) {
  potrf_small(a, lda, n, info, info_offset, stream);
}
void launch_potrf_small(double* a, std::int64_t lda, int n, int* info, int info_offset, cudaStream_t stream) {
  potrf_small(a, lda, n, info, info_offset, stream);
}

}  // namespace gpufact::kernels
