#include "kernels/qr/block_reflector.cuh"

#include "core/cuda/check.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

unsigned grid_for(std::int64_t count, int threads) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>((count + threads - 1) / threads, 65535 * 8)));
}

template <class T>
__global__ void zero_filled_kernel(const T* panel, std::int64_t ldp, std::int64_t rows, std::int64_t w, T* v,
                                   std::int64_t ldv) {
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < rows * w;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = idx % rows, j = idx / rows;
    v[i + j * ldv] = i > j ? panel[i + j * ldp] : (i == j ? T(1) : T(0));
  }
}

// Thread j owns row j of T. Column i needs T(j, k) for k < i (its own row, written earlier by the
// same thread) and gram(k, i) (the same address for every thread at step k: a broadcast); the
// zeros below T's diagonal make the sum start at k = 0 for every row.
template <class T>
__global__ void larft_kernel(const T* gram, std::int64_t ldg, const T* tau, int w, T* t, std::int64_t ldt) {
  const int j = static_cast<int>(threadIdx.x);
  if (j >= w) return;
  for (int i = 0; i < w; ++i) {
    T value = T(0);
    if (j < i) {
      T sum = T(0);
      for (int k = 0; k < i; ++k) sum += t[j + k * ldt] * gram[k + i * ldg];
      value = -tau[i] * sum;
    } else if (j == i) {
      value = tau[i];
    }
    t[j + i * ldt] = value;
  }
}

// Columns on the grid's y, rows on x: no division per entry (a 64-bit one per entry held a flat
// index version to 0.8 TB/s on the H200, 54 µs for a 110592 × 100 Q).
template <class T>
__global__ void identity_columns_kernel(T* a, std::int64_t lda, std::int64_t m, std::int64_t j0, std::int64_t cols) {
  for (std::int64_t j = j0 + blockIdx.y; j < j0 + cols; j += gridDim.y) {
    T* column = a + j * lda;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < m;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
      column[i] = i == j ? T(1) : T(0);
  }
}

template <class T>
void zero_filled(const T* panel, std::int64_t ldp, std::int64_t rows, std::int64_t w, T* v, std::int64_t ldv,
                 cudaStream_t stream) {
  if (rows <= 0 || w <= 0) return;
  if (ldv < rows || ldp < rows) throw std::invalid_argument("launch_zero_filled_reflectors: leading dimension < rows");
  zero_filled_kernel<T><<<grid_for(rows * w, 256), 256, 0, stream>>>(panel, ldp, rows, w, v, ldv);
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void larft(const T* gram, std::int64_t ldg, const T* tau, std::int64_t w, T* t, std::int64_t ldt, cudaStream_t stream) {
  if (w <= 0) return;
  if (w > kMaxLarftWidth)
    throw std::invalid_argument("launch_larft_from_gram: w = " + std::to_string(w) + " exceeds " +
                                std::to_string(kMaxLarftWidth));
  if (ldg < w || ldt < w) throw std::invalid_argument("launch_larft_from_gram: leading dimension < w");
  const int threads = static_cast<int>((w + 31) / 32 * 32);
  larft_kernel<T><<<1, threads, 0, stream>>>(gram, ldg, tau, static_cast<int>(w), t, ldt);
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void identity_columns(T* a, std::int64_t lda, std::int64_t m, std::int64_t j0, std::int64_t j1, cudaStream_t stream) {
  if (m <= 0 || j1 <= j0) return;
  if (lda < m) throw std::invalid_argument("launch_set_identity_columns: lda < m");
  const std::int64_t cols = j1 - j0;
  const dim3 grid(static_cast<unsigned>(std::min<std::int64_t>((m + 255) / 256, 1024)),
                  static_cast<unsigned>(std::min<std::int64_t>(cols, 65535)));
  identity_columns_kernel<T><<<grid, 256, 0, stream>>>(a, lda, m, j0, cols);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace

void launch_zero_filled_reflectors(const float* panel, std::int64_t ldp, std::int64_t rows, std::int64_t w, float* v,
                                   std::int64_t ldv, cudaStream_t stream) {
  zero_filled(panel, ldp, rows, w, v, ldv, stream);
}
void launch_zero_filled_reflectors(const double* panel, std::int64_t ldp, std::int64_t rows, std::int64_t w,
                                   double* v, std::int64_t ldv, cudaStream_t stream) {
  zero_filled(panel, ldp, rows, w, v, ldv, stream);
}
void launch_larft_from_gram(const float* gram, std::int64_t ldg, const float* tau, std::int64_t w, float* t,
                            std::int64_t ldt, cudaStream_t stream) {
  larft(gram, ldg, tau, w, t, ldt, stream);
}
void launch_larft_from_gram(const double* gram, std::int64_t ldg, const double* tau, std::int64_t w, double* t,
                            std::int64_t ldt, cudaStream_t stream) {
  larft(gram, ldg, tau, w, t, ldt, stream);
}
void launch_set_identity_columns(float* a, std::int64_t lda, std::int64_t m, std::int64_t j0, std::int64_t j1,
                                 cudaStream_t stream) {
  identity_columns(a, lda, m, j0, j1, stream);
}
void launch_set_identity_columns(double* a, std::int64_t lda, std::int64_t m, std::int64_t j0, std::int64_t j1,
                                 cudaStream_t stream) {
  identity_columns(a, lda, m, j0, j1, stream);
}

}  // namespace gpufact::kernels
