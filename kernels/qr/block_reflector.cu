#include "kernels/qr/block_reflector.cuh"

#include "core/cuda/check.hpp"
#include "core/cuda/device.hpp"
#include "kernels/common/vec16.cuh"

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

// The column-wise kernels' grid: columns on y, rows on x (no division per entry).
dim3 column_grid(std::int64_t rows, std::int64_t cols) {
  return {static_cast<unsigned>(std::min<std::int64_t>((rows + 255) / 256, 1024)),
          static_cast<unsigned>(std::min<std::int64_t>(cols, 65535))};
}

// Columns from w on are copied as they are.
template <class T>
__global__ void zero_filled_kernel(const T* __restrict__ panel, std::int64_t ldp, std::int64_t rows, std::int64_t w,
                                   std::int64_t cols, T* __restrict__ v, std::int64_t ldv) {
  for (std::int64_t j = blockIdx.y; j < cols; j += gridDim.y) {
    const T* src = panel + j * ldp;
    T* dst = v + j * ldv;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < rows;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
      dst[i] = i > j || j >= w ? src[i] : (i == j ? T(1) : T(0));
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

// The same T by blocks, built in place: the 16 × 16 diagonal blocks by the column recurrence (a
// warp each), then pairs of neighbouring blocks merged at sizes 16, 32, 64, …, as
//   T = [T_A  −T_A·G_AB·T_B; 0  T_B]   (the product of two block reflectors),
// each merge two small products over every thread. The recurrence alone is a chain of w
// dependent matrix-vector products (47 µs for w = 64 on an H100, with T re-read from memory);
// by blocks the chain is 16 columns long and the rest runs in parallel. Only for T too wide for
// larft_tiled_kernel (its T and G in shared memory); G is then read from L2 (its copy would not
// fit beside X either).
constexpr int kLarftBlockThreads = 1024;
constexpr int kLarftDiagonal = 16;

// Pairs [A B] of w columns at merge level `size` (the last B may be narrower).
__host__ __device__ inline int larft_pairs(int w, int size) { return (w - size + 2 * size - 1) / (2 * size); }
// X: the largest level's pairs' size × size blocks.
template <class T>
std::size_t larft_blocked_bytes(int w) {
  int x = 0;
  for (int size = kLarftDiagonal; size < w; size *= 2) x = max(x, larft_pairs(w, size) * size * size);
  return static_cast<std::size_t>(x) * sizeof(T);
}

template <class T>
__global__ void __launch_bounds__(kLarftBlockThreads)
    larft_blocked_kernel(const T* __restrict__ gram, std::int64_t ldg, const T* __restrict__ tau, int w,
                         T* __restrict__ t, std::int64_t ldt) {
  extern __shared__ __align__(16) unsigned char larft_smem[];
  T* x = reinterpret_cast<T*>(larft_smem);  // G_AB·T_B of a merge's pairs (larft_blocked_bytes)
  T* s = t;                                  // T(i, j) at s[i + j·ls], built in place
  const std::int64_t ls = ldt;
  const T* g = gram;  // G(i, j) at g[i + j·lg]
  const std::int64_t lg = ldg;
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
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
    const int pairs = larft_pairs(w, size);
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
}

// The same T by the same blocks and merges, tiled, where T and the Gram matrix fit shared memory
// together: one (wp × wp + 4) array, wp = w rounded up to 16, holds T on and above its diagonal
// and G's strict upper triangle transposed below it (G(i, j), i < j, at (j, i)); rows and columns
// past w are zero (τ = 0 there gives zero columns of T). A warp builds each 16 × 16 diagonal block
// with the block's rows in registers (16 dependent steps, G broadcast from shared memory). Each
// merge is Y = T_A·G_AB, then T_AB = −Y·T_B, in 4 × 4 register tiles whose four rows of the left
// operand are one 16-byte load (columns of T_A and of Y, and G_AB's rows, are contiguous; ld is a
// multiple of 4); the right operand's four entries are the same for a warp's lanes but two. It is
// latency-bound: with a tile per thread, the top merge's 64-step tiles ran on 8 of the 16 warps
// while the others waited at the barrier (ncu, H100: 11.5 µs for w = 64, 31 µs for w = 128; the
// untiled merges with a load per multiply-add and τ re-read from memory took 19 and 53 µs).
constexpr int kLarftTiledThreads = 512;

__host__ __device__ inline int larft_padded(int w) {
  return (w + kLarftDiagonal - 1) / kLarftDiagonal * kLarftDiagonal;
}
// Y of a level: each pair's size × bw block, ld size + 4.
__host__ __device__ inline int larft_tiled_y_elements(int wp) {
  int y = 0;
  for (int size = kLarftDiagonal; size < wp; size *= 2) {
    const int pairs = larft_pairs(wp, size), last_b = (2 * pairs - 1) * size;
    y = max(y, ((pairs - 1) * size + min(size, wp - last_b)) * (size + 4));
  }
  return y;
}
template <class T>
std::size_t larft_tiled_bytes(int w) {
  const auto wp = static_cast<std::size_t>(larft_padded(w));
  return (wp * (wp + 4) + static_cast<std::size_t>(larft_tiled_y_elements(static_cast<int>(wp))) + wp) * sizeof(T);
}

template <class T>
__global__ void __launch_bounds__(kLarftTiledThreads, 1)
    larft_tiled_kernel(const T* __restrict__ gram, std::int64_t ldg, const T* __restrict__ tau, int w,
                       T* __restrict__ t, std::int64_t ldt) {
  extern __shared__ __align__(16) unsigned char larft_smem[];
  const int wp = larft_padded(w), ld = wp + 4;
  T* m = reinterpret_cast<T*>(larft_smem);
  T* y = m + wp * ld;
  T* taus = y + larft_tiled_y_elements(wp);
  const int tid = static_cast<int>(threadIdx.x), lane = tid & 31, warp = tid >> 5;
  constexpr int kWarps = kLarftTiledThreads / 32;
  // A warp per column, a lane per row (no division per entry).
  for (int j = warp; j < wp; j += kWarps) {
#pragma unroll 4
    for (int i = lane; i < j; i += 32) m[j + i * ld] = j < w ? gram[i + j * ldg] : T(0);
  }
  for (int i = tid; i < wp; i += kLarftTiledThreads) taus[i] = i < w ? tau[i] : T(0);
  __syncthreads();

  // Diagonal blocks: lane r holds row p + r of the block's T; column i is
  // T(r, i) = −τ_i Σ_{k<i} T(r, k) G(k, i) for r < i (T(r, k) = 0 for k < r), τ_i on the diagonal.
  for (int p = warp * kLarftDiagonal; p < wp; p += kWarps * kLarftDiagonal) {
    T row[kLarftDiagonal];
#pragma unroll
    for (int i = 0; i < kLarftDiagonal; ++i) {
      T sum = T(0);
#pragma unroll
      for (int k = 0; k < i; ++k) sum += row[k] * m[(p + i) + (p + k) * ld];
      const T tau_i = taus[p + i];
      row[i] = lane < i ? -tau_i * sum : (lane == i ? tau_i : T(0));
    }
    if (lane < kLarftDiagonal) {
#pragma unroll
      for (int i = 0; i < kLarftDiagonal; ++i)
        if (i >= lane) m[(p + lane) + (p + i) * ld] = row[i];
    }
  }
  __syncthreads();

  // Merges: pairs A = [a0, a0 + size), B = [b0, b0 + bw). Two neighbouring lanes own a 4 × 4 tile
  // (rows r0.., columns c0..), each summing half of its k range, and add their halves by a
  // shuffle; below T's diagonal the array holds G, so the tile's diagonal 4 × 4 block of T_A (in
  // Y) and of T_B (in T_A·G_AB·T_B) is masked. Tiles come in multiples of 16, so a warp's lanes
  // run the same iterations.
  for (int size = kLarftDiagonal; size < wp; size *= 2) {
    const int pairs = larft_pairs(wp, size), side = size / 4, yld = size + 4;
    const int items = 2 * pairs * side * side;
    const auto tile = [&](int idx, int& q, int& r0, int& c0, int& a0, int& b0) {
      const int at = idx >> 1;
      q = at / (side * side);
      r0 = 4 * (at % side);
      c0 = 4 * ((at / side) % side);
      a0 = 2 * q * size;
      b0 = a0 + size;
      return c0 < min(size, wp - b0);
    };
    const auto add_halves = [](T (&acc)[4][4]) {
#pragma unroll
      for (int e = 0; e < 4; ++e)
#pragma unroll
        for (int f = 0; f < 4; ++f) acc[e][f] += __shfl_xor_sync(0xffffffffu, acc[e][f], 1);
    };
    // Y(r, c) = Σ_{k >= r} T_A(r, k) G(a0 + k, b0 + c)
    for (int idx = tid; idx < items; idx += kLarftTiledThreads) {
      int q, r0, c0, a0, b0;
      const bool valid = tile(idx, q, r0, c0, a0, b0), second = idx & 1;
      T acc[4][4] = {};
      const auto step = [&](int k, bool diagonal) {
        T a[4], b[4];
        load_vec(&m[(a0 + r0) + (a0 + k) * ld], a);  // T_A(r0.., k)
        if (diagonal)
#pragma unroll
          for (int e = 0; e < 4; ++e) a[e] = r0 + e <= k ? a[e] : T(0);
        load_vec(&m[(b0 + c0) + (a0 + k) * ld], b);  // G(a0 + k, b0 + c0..)
#pragma unroll
        for (int e = 0; e < 4; ++e)
#pragma unroll
          for (int f = 0; f < 4; ++f) acc[e][f] += a[e] * b[f];
      };
      if (valid) {
        const int mid = r0 + 4 + (size - r0 - 4) / 8 * 4;
        if (!second) {
#pragma unroll
          for (int k = 0; k < 4; ++k) step(r0 + k, true);
        }
#pragma unroll 4
        for (int k = second ? mid : r0 + 4; k < (second ? size : mid); ++k) step(k, false);
      }
      add_halves(acc);
      if (valid && !second) {
        T* yq = y + q * size * yld;
#pragma unroll
        for (int f = 0; f < 4; ++f) {
          const T column[4] = {acc[0][f], acc[1][f], acc[2][f], acc[3][f]};
          store_vec(column, &yq[r0 + (c0 + f) * yld]);
        }
      }
    }
    __syncthreads();
    // T_AB(r, c) = −Σ_{k <= c} Y(r, k) T_B(k, c)
    for (int idx = tid; idx < items; idx += kLarftTiledThreads) {
      int q, r0, c0, a0, b0;
      const bool valid = tile(idx, q, r0, c0, a0, b0), second = idx & 1;
      const T* yq = y + q * size * yld;
      T acc[4][4] = {};
      const auto step = [&](int k, bool diagonal) {
        T a[4], b[4];
        load_vec(&yq[r0 + k * yld], a);
#pragma unroll
        for (int f = 0; f < 4; ++f) b[f] = !diagonal || k <= c0 + f ? m[(b0 + k) + (b0 + c0 + f) * ld] : T(0);
#pragma unroll
        for (int e = 0; e < 4; ++e)
#pragma unroll
          for (int f = 0; f < 4; ++f) acc[e][f] += a[e] * b[f];
      };
      if (valid) {
        const int mid = c0 / 8 * 4;
#pragma unroll 4
        for (int k = second ? mid : 0; k < (second ? c0 : mid); ++k) step(k, false);
        if (second) {
#pragma unroll
          for (int k = 0; k < 4; ++k) step(c0 + k, true);
        }
      }
      add_halves(acc);
      if (valid && !second) {
#pragma unroll
        for (int f = 0; f < 4; ++f) {
          const T column[4] = {-acc[0][f], -acc[1][f], -acc[2][f], -acc[3][f]};
          store_vec(column, &m[(a0 + r0) + (b0 + c0 + f) * ld]);
        }
      }
    }
    __syncthreads();
  }
  for (int j = warp; j < w; j += kWarps) {
#pragma unroll 4
    for (int i = lane; i < w; i += 32) t[i + j * ldt] = i <= j ? m[i + j * ld] : T(0);
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

// The ones of columns [j0, j1) (rows below m), on columns already zero.
template <class T>
__global__ void identity_diagonal_kernel(T* a, std::int64_t lda, std::int64_t m, std::int64_t j0, std::int64_t j1) {
  const std::int64_t j = j0 + blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (j < j1 && j < m) a[j + j * lda] = T(1);
}

// From this many entries the identity is a memset and its diagonal (two launches); below, one
// kernel (the LU's and Cholesky's nb × nb inverse seeds sit on their panel chains). Measured on
// the H100: the kernel wrote a 110592 × 100 FP32 Q in 51 µs (0.87 TB/s).
constexpr std::int64_t kMemsetIdentityEntries = std::int64_t{1} << 22;

template <class T>
void zero_filled(const T* panel, std::int64_t ldp, std::int64_t rows, std::int64_t w, T* v, std::int64_t ldv,
                 cudaStream_t stream, std::int64_t copy) {
  if (rows <= 0 || w <= 0) return;
  if (ldv < rows || ldp < rows) throw std::invalid_argument("launch_zero_filled_reflectors: leading dimension < rows");
  if (copy < 0) throw std::invalid_argument("launch_zero_filled_reflectors: copy = " + std::to_string(copy) + " < 0");
  const std::int64_t cols = w + copy;
  zero_filled_kernel<T><<<column_grid(rows, cols), 256, 0, stream>>>(panel, ldp, rows, w, cols, v, ldv);
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void larft(const T* gram, std::int64_t ldg, const T* tau, std::int64_t w, T* t, std::int64_t ldt, cudaStream_t stream) {
  if (w <= 0) return;
  if (w > kMaxLarftWidth)
    throw std::invalid_argument("launch_larft_from_gram: w = " + std::to_string(w) + " exceeds " +
                                std::to_string(kMaxLarftWidth));
  if (ldg < w || ldt < w) throw std::invalid_argument("launch_larft_from_gram: leading dimension < w");
  // T and G together in shared memory where they fit (FP32 w <= 208, FP64 w <= 144), else T built
  // in place by the untiled merges (FP32 w = 256: they then read T and G from L2, still far from
  // the column recurrence's w dependent steps).
  const auto limit = static_cast<std::size_t>(current_device_shared_optin());
  const int wi = static_cast<int>(w);
  static const bool attributes_set = [limit] {
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(larft_tiled_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(limit)));
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(larft_blocked_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(limit)));
    return true;
  }();
  (void)attributes_set;
  if (larft_tiled_bytes<T>(wi) <= limit) {
    larft_tiled_kernel<T><<<1, kLarftTiledThreads, larft_tiled_bytes<T>(wi), stream>>>(gram, ldg, tau, wi, t, ldt);
  } else if (larft_blocked_bytes<T>(wi) <= limit) {
    larft_blocked_kernel<T><<<1, kLarftBlockThreads, larft_blocked_bytes<T>(wi), stream>>>(gram, ldg, tau, wi, t,
                                                                                          ldt);
  } else {
    const int threads = static_cast<int>((w + 31) / 32 * 32);
    larft_kernel<T><<<1, threads, 0, stream>>>(gram, ldg, tau, static_cast<int>(w), t, ldt);
  }
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void identity_columns(T* a, std::int64_t lda, std::int64_t m, std::int64_t j0, std::int64_t j1, cudaStream_t stream,
                      bool memset) {
  if (m <= 0 || j1 <= j0) return;
  if (lda < m) throw std::invalid_argument("launch_set_identity_columns: lda < m");
  const std::int64_t cols = j1 - j0;
  if (memset || m * cols >= kMemsetIdentityEntries) {
    GPUFACT_CUDA_CHECK(cudaMemset2DAsync(a + j0 * lda, static_cast<std::size_t>(lda) * sizeof(T), 0,
                                         static_cast<std::size_t>(m) * sizeof(T), static_cast<std::size_t>(cols),
                                         stream));
    identity_diagonal_kernel<T><<<static_cast<unsigned>((cols + 255) / 256), 256, 0, stream>>>(a, lda, m, j0, j1);
    GPUFACT_CHECK_LAUNCH();
    return;
  }
  identity_columns_kernel<T><<<column_grid(m, cols), 256, 0, stream>>>(a, lda, m, j0, cols);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace

void launch_zero_filled_reflectors(const float* panel, std::int64_t ldp, std::int64_t rows, std::int64_t w, float* v,
                                   std::int64_t ldv, cudaStream_t stream, std::int64_t copy) {
  zero_filled(panel, ldp, rows, w, v, ldv, stream, copy);
}
void launch_zero_filled_reflectors(const double* panel, std::int64_t ldp, std::int64_t rows, std::int64_t w,
                                   double* v, std::int64_t ldv, cudaStream_t stream, std::int64_t copy) {
  zero_filled(panel, ldp, rows, w, v, ldv, stream, copy);
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
                                 cudaStream_t stream, bool by_memset) {
  identity_columns(a, lda, m, j0, j1, stream, by_memset);
}
void launch_set_identity_columns(double* a, std::int64_t lda, std::int64_t m, std::int64_t j0, std::int64_t j1,
                                 cudaStream_t stream, bool by_memset) {
  identity_columns(a, lda, m, j0, j1, stream, by_memset);
}

}  // namespace gpufact::kernels
