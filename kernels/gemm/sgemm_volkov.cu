#include "kernels/gemm/sgemm_volkov.cuh"

#include "kernels/gemm/gemm_arguments.hpp"

#include "core/cuda/check.hpp"

#include <cstdint>

namespace gpufact::kernels {
namespace {

constexpr int kThreads = 64;  // one vector thread of volkov08 §4.2: 16 × 4 threads
constexpr int kRows = 64;     // C block: 64 × 16
constexpr int kCols = 16;

// A global load, or for the "no fetch" variant a value made from the address itself (volkov08
// §4.4: the pointer is assigned instead of the value it points to). It stays in [0, 1), so the
// product stays finite; it is not the product of A and B.
template <int V>
__device__ __forceinline__ float fetch(const float* p) {
  if constexpr (V == static_cast<int>(VolkovVariant::no_fetch)) {
    return static_cast<float>(static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(p)) & 0xffffu) * 0x1.0p-16f;
  } else {
    return *p;
  }
}

// The k remainder: loads past k give 0, which adds fma(0, 0, c) = c to every accumulator.
template <int V, bool Guard>
__device__ __forceinline__ float fetch_k(const float* p, int kk, int krem) {
  if constexpr (Guard) return kk < krem ? fetch<V>(p) : 0.0f;
  return fetch<V>(p);
}

// c[j] += a · b[j] for the 16 columns: b is one row of the tile in shared memory (the paper's
// saxpy with a local-memory operand; on sm_90 each b[j] is an LDS feeding an FFMA).
__device__ __forceinline__ void saxpy16(float a, const float* b, float (&c)[kCols]) {
#pragma unroll
  for (int j = 0; j < kCols; ++j) c[j] = __fmaf_rn(a, b[j], c[j]);
}

// One 16-wide step of k in the AB code of Fig. 4. A points at this thread's row, column k0;
// it leaves pointing at column k0 + 16. Guard: only krem (< 16) columns of k remain.
template <int V, bool Guard>
__device__ __forceinline__ void nn_step(const float*& a, std::int64_t lda, const float* b, const std::int64_t (&bofs)[4],
                                        int krem, float (&bs)[16][17], float (&c)[kCols], int inx, int iny) {
  constexpr bool kPrefetch = V != static_cast<int>(VolkovVariant::no_prefetch);
  float ar[4];
  if constexpr (kPrefetch) {
#pragma unroll
    for (int i = 0; i < 4; ++i) ar[i] = fetch_k<V, Guard>(a + i * lda, i, krem);
  }
#pragma unroll
  for (int q = 0; q < 4; ++q) bs[inx][iny + 4 * q] = fetch_k<V, Guard>(b + bofs[q], inx, krem);
  __syncthreads();
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    if constexpr (!kPrefetch) {
      // No prefetch (volkov08 §4.4): every block of A is loaded right before its use.
#pragma unroll
      for (int i = 0; i < 4; ++i) ar[i] = fetch_k<V, Guard>(a + i * lda, 4 * g + i, krem);
    }
    a += 4 * lda;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      saxpy16(ar[i], &bs[4 * g + i][0], c);
      // The paper's schedule: the next 64×4 block of A is loaded as soon as a register is free.
      if constexpr (kPrefetch) {
        if (g < 3) ar[i] = fetch_k<V, Guard>(a + i * lda, 4 * (g + 1) + i, krem);
      }
    }
  }
  __syncthreads();
}

template <int V>
__global__ void __launch_bounds__(kThreads)
    sgemm_volkov_nn_kernel(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
                           const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  __shared__ float bs[16][17];  // row-major 16 × 16 tile of B, padded (volkov08 §4.2)
  const int id = threadIdx.x, inx = id & 15, iny = id >> 4;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kRows + id;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.y) * kCols;
  // Rows past m read row m − 1 and columns past n read column n − 1 (valid addresses whose
  // products are never stored), so the main loop carries no edge tests.
  a += row < m ? row : m - 1;
  std::int64_t bofs[4];
#pragma unroll
  for (int q = 0; q < 4; ++q) {
    const std::int64_t col = col0 + iny + 4 * q;
    bofs[q] = (col < n ? col : n - 1) * ldb;
  }
  b += inx;
  float acc[kCols];
#pragma unroll
  for (int j = 0; j < kCols; ++j) acc[j] = 0.0f;

  const std::int64_t steps = k / 16;
#pragma unroll 1
  for (std::int64_t s = 0; s < steps; ++s) {
    nn_step<V, false>(a, lda, b, bofs, 16, bs, acc, inx, iny);
    b += 16;
  }
  const int krem = static_cast<int>(k - steps * 16);
  if (krem > 0) nn_step<V, true>(a, lda, b, bofs, krem, bs, acc, inx, iny);

  if (row >= m) return;
  c += row + col0 * ldc;
  const int cols = n - col0 < kCols ? static_cast<int>(n - col0) : kCols;
  if (beta == 0.0f) {
#pragma unroll
    for (int j = 0; j < kCols; ++j)
      if (j < cols) c[j * ldc] = alpha * acc[j];
  } else {
#pragma unroll
    for (int j = 0; j < kCols; ++j)
      if (j < cols) c[j * ldc] = __fmaf_rn(alpha, acc[j], beta * c[j * ldc]);
  }
}

// One 4-wide step of k in the ABᵀ code of Fig. 4: the prefetched block (ar, br) goes to the
// tile; with Prefetch the next block is loaded between the barriers (GuardNext: it is the k
// remainder of knext columns). A and B point at the next block on entry and leave past it.
template <int V, bool Prefetch, bool GuardNext>
__device__ __forceinline__ void nt_step(float (&ar)[4], float& br, const float*& a, std::int64_t lda, const float*& b,
                                        std::int64_t ldb, int knext, float (&bs)[4][16], float (&c)[kCols], int inx,
                                        int iny) {
  const float as[4] = {ar[0], ar[1], ar[2], ar[3]};
  bs[iny][inx] = br;
  __syncthreads();
  if constexpr (Prefetch) {
#pragma unroll
    for (int i = 0; i < 4; ++i) ar[i] = fetch_k<V, GuardNext>(a + i * lda, i, knext);
    br = fetch_k<V, GuardNext>(b, iny, knext);
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) saxpy16(as[i], &bs[i][0], c);
  a += 4 * lda;
  b += 4 * ldb;
  __syncthreads();
}

// No prefetch (volkov08 §4.4): the copies before the first barrier become the loads themselves.
template <int V, bool Guard>
__device__ __forceinline__ void nt_step_unprefetched(const float*& a, std::int64_t lda, const float*& b,
                                                     std::int64_t ldb, int krem, float (&bs)[4][16],
                                                     float (&c)[kCols], int inx, int iny) {
  float as[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) as[i] = fetch_k<V, Guard>(a + i * lda, i, krem);
  bs[iny][inx] = fetch_k<V, Guard>(b, iny, krem);
  __syncthreads();
#pragma unroll
  for (int i = 0; i < 4; ++i) saxpy16(as[i], &bs[i][0], c);
  a += 4 * lda;
  b += 4 * ldb;
  __syncthreads();
}

template <int V>
__global__ void __launch_bounds__(kThreads)
    sgemm_volkov_nt_kernel(std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
                           const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  __shared__ float bs[4][16];  // row-major 4 × 16 tile of Bᵀ
  const int id = threadIdx.x, inx = id & 15, iny = id >> 4;
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kRows + id;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.y) * kCols;
  a += row < m ? row : m - 1;
  // Thread (inx, iny) loads Bᵀ(iny, inx) = B(col0 + inx, k0 + iny); columns past n read n − 1.
  b += (col0 + inx < n ? col0 + inx : n - 1) + iny * ldb;
  float acc[kCols];
#pragma unroll
  for (int j = 0; j < kCols; ++j) acc[j] = 0.0f;

  const std::int64_t steps = k / 4;
  const int krem = static_cast<int>(k - steps * 4);
  if constexpr (V == static_cast<int>(VolkovVariant::no_prefetch)) {
#pragma unroll 1
    for (std::int64_t s = 0; s < steps; ++s) nt_step_unprefetched<V, false>(a, lda, b, ldb, 4, bs, acc, inx, iny);
    if (krem > 0) nt_step_unprefetched<V, true>(a, lda, b, ldb, krem, bs, acc, inx, iny);
  } else if (k > 0) {
    float ar[4], br;
    if (steps > 0) {
#pragma unroll
      for (int i = 0; i < 4; ++i) ar[i] = fetch<V>(a + i * lda);
      br = fetch<V>(b);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) ar[i] = fetch_k<V, true>(a + i * lda, i, krem);
      br = fetch_k<V, true>(b, iny, krem);
    }
    a += 4 * lda;
    b += 4 * ldb;
    // The paper's loop: every step but the last full one prefetches a full block.
#pragma unroll 1
    for (std::int64_t s = 0; s + 1 < steps; ++s) nt_step<V, true, false>(ar, br, a, lda, b, ldb, 4, bs, acc, inx, iny);
    if (steps > 0) {
      if (krem > 0)
        nt_step<V, true, true>(ar, br, a, lda, b, ldb, krem, bs, acc, inx, iny);
      else
        nt_step<V, false, false>(ar, br, a, lda, b, ldb, 0, bs, acc, inx, iny);
    }
    if (krem > 0) nt_step<V, false, false>(ar, br, a, lda, b, ldb, 0, bs, acc, inx, iny);
  }

  if (row >= m) return;
  c += row + col0 * ldc;
  const int cols = n - col0 < kCols ? static_cast<int>(n - col0) : kCols;
  if (beta == 0.0f) {
#pragma unroll
    for (int j = 0; j < kCols; ++j)
      if (j < cols) c[j * ldc] = alpha * acc[j];
  } else {
#pragma unroll
    for (int j = 0; j < kCols; ++j)
      if (j < cols) c[j * ldc] = __fmaf_rn(alpha, acc[j], beta * c[j * ldc]);
  }
}

template <int V>
void launch(Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
            const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((m + kRows - 1) / kRows), static_cast<unsigned>((n + kCols - 1) / kCols));
  if (tb == Op::N)
    sgemm_volkov_nn_kernel<V><<<grid, kThreads, 0, stream>>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    sgemm_volkov_nt_kernel<V><<<grid, kThreads, 0, stream>>>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace

void sgemm_volkov(VolkovVariant variant, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                  const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                  std::int64_t ldc, cudaStream_t stream) {
  if (ta != Op::N)
    throw std::invalid_argument("sgemm_volkov: transa must be N (volkov08 §4.2 implements AB and ABᵀ)");
  check_gemm_arguments("sgemm_volkov", ta, tb, m, n, k, lda, ldb, ldc);
  check_grid("sgemm_volkov", (m + kRows - 1) / kRows, (n + kCols - 1) / kCols, 1);
  if (m == 0 || n == 0) return;
  switch (variant) {
    case VolkovVariant::paper:
      launch<0>(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
      break;
    case VolkovVariant::no_fetch:
      launch<1>(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
      break;
    case VolkovVariant::no_prefetch:
      launch<2>(tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
      break;
    default:
      throw std::invalid_argument("sgemm_volkov: unknown variant");
  }
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
