#include "kernels/qr/block_reflector.cuh"

#include "core/cuda/check.hpp"
#include "core/cuda/device.hpp"

#include <algorithm>
#include <cstddef>
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

// The same T by blocks, in shared memory: the 16 × 16 diagonal blocks by the column recurrence
// (a warp each), then pairs of neighbouring blocks merged at sizes 16, 32, 64, …, as
//   T = [T_A  −T_A·G_AB·T_B; 0  T_B]   (the product of two block reflectors),
// each merge two small products over every thread. The recurrence alone is a chain of w
// dependent matrix-vector products (47 µs for w = 64 on an H100, with T re-read from memory);
// by blocks the chain is 16 columns long and the rest runs in parallel. The Gram matrix's upper
// triangle is copied to shared memory first where it fits beside T (every read of it in the
// chain was an L2 round trip: 40 µs for w = 128 with 256 threads reading G from memory).
constexpr int kLarftBlockThreads = 1024;
constexpr int kLarftDiagonal = 16;

// X: the largest level's pairs' size × size blocks.
__host__ __device__ inline int larft_x_elements(int w) {
  int x = 0;
  for (int size = kLarftDiagonal; size < w; size *= 2) x = max(x, (w - size + 2 * size - 1) / (2 * size) * size * size);
  return x;
}
// X, plus T (w × w) when `with_t` and a copy of G (w × w) when `with_gram`.
template <class T>
std::size_t larft_blocked_bytes(int w, bool with_t, bool with_gram) {
  return (static_cast<std::size_t>(w) * w * ((with_t ? 1 : 0) + (with_gram ? 1 : 0)) +
          static_cast<std::size_t>(larft_x_elements(w))) *
         sizeof(T);
}

template <class T>
__global__ void __launch_bounds__(kLarftBlockThreads)
    larft_blocked_kernel(const T* __restrict__ gram, std::int64_t ldg, const T* __restrict__ tau, int w,
                         T* __restrict__ t, std::int64_t ldt, int t_in_shared, int gram_in_shared) {
  extern __shared__ __align__(16) unsigned char larft_smem[];
  T* x = reinterpret_cast<T*>(larft_smem);  // G_AB·T_B of a merge's pairs (larft_x_elements)
  T* s = t;                                  // T(i, j) at s[i + j·ls]: in shared memory, or built in place
  std::int64_t ls = ldt;
  T* next = x + larft_x_elements(w);
  if (t_in_shared) s = next, ls = w, next += w * w;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  const T* g = gram;  // G(i, j) at g[i + j·lg]: read where it lies, or its copy's upper triangle
  std::int64_t lg = ldg;
  if (gram_in_shared) {
    for (int idx = tid; idx < w * w; idx += kLarftBlockThreads) {
      const int i = idx % w, j = idx / w;
      next[idx] = i < j ? gram[i + j * ldg] : T(0);
    }
    g = next;
    lg = w;
  }
  for (int idx = tid; idx < w * w; idx += kLarftBlockThreads) s[idx % w + (idx / w) * ls] = T(0);
  __syncthreads();
  for (int p = warp * kLarftDiagonal; p < w; p += kLarftBlockThreads / 32 * kLarftDiagonal) {
    const int bs = min(kLarftDiagonal, w - p);
    for (int i = 0; i < bs; ++i) {
      T value = T(0);
      if (lane < i) {
        T sum = T(0);
        for (int k = lane; k < i; ++k) sum += s[(p + lane) + (p + k) * ls] * g[(p + k) + (p + i) * lg];
        value = -tau[p + i] * sum;
      } else if (lane == i) {
        value = tau[p + i];
      }
      __syncwarp();
      if (lane <= i) s[(p + lane) + (p + i) * ls] = value;
      __syncwarp();
    }
  }
  __syncthreads();
  for (int size = kLarftDiagonal; size < w; size *= 2) {
    // Pairs A = [p, p + size), B = [p + size, min(p + 2·size, w)) for p = 0, 2·size, …; X of pair
    // q at x + q·size·size (rows of A by columns of B, ld size).
    const int pairs = (w - size + 2 * size - 1) / (2 * size);
    for (int idx = tid; idx < pairs * size * size; idx += kLarftBlockThreads) {
      const int q = idx / (size * size), r = idx % size, c = (idx / size) % size;
      const int a0 = 2 * q * size, b0 = a0 + size, col = b0 + c;
      if (col >= w) continue;
      T sum = T(0);  // (G_AB·T_B)(r, c): T_B is upper triangular, so k <= col
      for (int k = b0; k <= col; ++k) sum += g[(a0 + r) + k * lg] * s[k + col * ls];
      x[q * size * size + r + c * size] = sum;
    }
    __syncthreads();
    for (int idx = tid; idx < pairs * size * size; idx += kLarftBlockThreads) {
      const int q = idx / (size * size), r = idx % size, c = (idx / size) % size;
      const int a0 = 2 * q * size, b0 = a0 + size, col = b0 + c;
      if (col >= w) continue;
      T sum = T(0);  // −(T_A·X)(r, c): T_A is upper triangular, so k >= r
      for (int k = r; k < size; ++k) sum += s[(a0 + r) + (a0 + k) * ls] * x[q * size * size + k + c * size];
      s[(a0 + r) + col * ls] = -sum;
    }
    __syncthreads();
  }
  if (t_in_shared)
    for (int idx = tid; idx < w * w; idx += kLarftBlockThreads) t[idx % w + (idx / w) * ldt] = s[idx];
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
  // T in shared memory where it fits, else built in place (FP32 w = 256: the merges then read T
  // from L2, still far from the column recurrence's w dependent steps); G copied beside it if room.
  const auto limit = static_cast<std::size_t>(current_device_shared_optin());
  const int wi = static_cast<int>(w);
  const bool t_in_shared = larft_blocked_bytes<T>(wi, true, false) <= limit;
  const bool gram_in_shared = larft_blocked_bytes<T>(wi, t_in_shared, true) <= limit;
  const std::size_t bytes = larft_blocked_bytes<T>(wi, t_in_shared, gram_in_shared);
  if (bytes <= limit) {
    static const bool attribute_set = [limit] {
      GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(larft_blocked_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(limit)));
      return true;
    }();
    (void)attribute_set;
    larft_blocked_kernel<T><<<1, kLarftBlockThreads, bytes, stream>>>(gram, ldg, tau, wi, t, ldt, t_in_shared ? 1 : 0,
                                                                      gram_in_shared ? 1 : 0);
  } else {
    const int threads = static_cast<int>((w + 31) / 32 * 32);
    larft_kernel<T><<<1, threads, 0, stream>>>(gram, ldg, tau, static_cast<int>(w), t, ldt);
  }
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
