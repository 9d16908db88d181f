#include "kernels/qr/householder_blas2.cuh"

#include "core/cuda/check.hpp"
#include "kernels/common/warp_butterfly.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxRowsPerThread = 8;
// Enough row blocks to fill an H200 twice over (132 SMs) before a thread takes more rows.
constexpr std::int64_t kTargetRowBlocks = 256;
constexpr int kMatvecColumns = 32;  // columns per matvec block: one shared-memory row per warp
constexpr int kUpdateColumns = 16;  // columns per update block

int rows_per_thread(std::int64_t rows) {
  const std::int64_t wanted = (rows + kThreads * kTargetRowBlocks - 1) / (kThreads * kTargetRowBlocks);
  return static_cast<int>(std::clamp<std::int64_t>(wanted, 1, kMaxRowsPerThread));
}

// Sum over the block, valid in thread 0. Every thread of the block must call it.
template <class T>
__device__ T block_sum(T x) {
  __shared__ T warp_totals[kWarps];
  x = warp_sum(x);
  if ((threadIdx.x & 31) == 0) warp_totals[threadIdx.x / 32] = x;
  __syncthreads();
  T total = 0;
  if (threadIdx.x == 0)
    for (int w = 0; w < kWarps; ++w) total += warp_totals[w];
  return total;
}

// Row of the slice held in register r of this thread: consecutive threads take consecutive rows,
// so every column access of a warp is one coalesced 128-byte (FP32) or 256-byte (FP64) line.
__device__ __forceinline__ std::int64_t row_of(int rows_per_thread, int r) {
  return static_cast<std::int64_t>(blockIdx.x) * kThreads * rows_per_thread + r * kThreads + threadIdx.x;
}

// Partial sums of squares of x[first_row, rows) per block (the norm of the first column).
template <class T>
__global__ void __launch_bounds__(kThreads) sumsq_kernel(const T* x, std::int64_t rows, std::int64_t first_row,
                                                         int rpt, T* out) {
  T s = 0;
#pragma unroll
  for (int r = 0; r < kMaxRowsPerThread; ++r) {
    const std::int64_t i = row_of(rpt, r);
    if (r < rpt && i < rows && i >= first_row) s += x[i] * x[i];
  }
  const T total = block_sum(s);
  if (threadIdx.x == 0) out[blockIdx.x] = total;
}

// LAPACK larfg for column j, in one block: alpha = a(j, j), xnorm = ‖a(j+1:m, j)‖ from `count`
// partial sums of squares. Writes beta over a(j, j), tau[j], and the scale 1/(alpha − beta)
// that turns x into v. xnorm = 0 gives tau = 0 (H = I) and leaves x as it is.
template <class T>
__global__ void __launch_bounds__(kThreads) reflector_kernel(T* a, std::int64_t lda, std::int64_t j,
                                                             const T* sumsq_partials, std::int64_t count, T* tau,
                                                             T* scale) {
  T s = 0;
  for (std::int64_t b = threadIdx.x; b < count; b += kThreads) s += sumsq_partials[b];
  const T sumsq = block_sum(s);
  if (threadIdx.x != 0) return;
  const T alpha = a[j + j * lda];
  const T xnorm = sqrt(sumsq);
  if (xnorm == T(0)) {
    tau[j] = T(0);
    *scale = T(1);
    return;
  }
  const T beta = -copysign(hypot(alpha, xnorm), alpha);
  tau[j] = (beta - alpha) / beta;
  *scale = T(1) / (alpha - beta);
  a[j + j * lda] = beta;
}

// Per-block partials of vᵀ C over a rows × cols slice: partials[k · row_blocks + block] for the
// block's kMatvecColumns columns (blockIdx.y). v[0] is the implicit 1. With kScaleV, v = x · scale
// (x unscaled, read-only here) and the blockIdx.y = 0 blocks store v in v_out for the update.
template <class T, bool kScaleV>
__global__ void __launch_bounds__(kThreads) matvec_kernel(const T* v_src, const T* scale, T* v_out, const T* c,
                                                          std::int64_t ldc, std::int64_t rows, std::int64_t cols,
                                                          int rpt, T* partials, std::int64_t row_blocks) {
  __shared__ T warp_sums[kWarps][kMatvecColumns];
  const T s = kScaleV ? *scale : T(1);
  T v[kMaxRowsPerThread];
#pragma unroll
  for (int r = 0; r < kMaxRowsPerThread; ++r) {
    const std::int64_t i = row_of(rpt, r);
    v[r] = (r < rpt && i < rows) ? (i == 0 ? T(1) : (kScaleV ? v_src[i] * s : v_src[i])) : T(0);
  }
  if (kScaleV && blockIdx.y == 0) {
#pragma unroll
    for (int r = 0; r < kMaxRowsPerThread; ++r) {
      const std::int64_t i = row_of(rpt, r);
      if (r < rpt && i < rows) v_out[i] = v[r];
    }
  }
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.y) * kMatvecColumns;
  const int width = static_cast<int>(cols - k0 < kMatvecColumns ? cols - k0 : kMatvecColumns);
  for (int kk = 0; kk < width; ++kk) {
    const T* ck = c + (k0 + kk) * ldc;
    T acc = 0;
#pragma unroll
    for (int r = 0; r < kMaxRowsPerThread; ++r) {
      const std::int64_t i = row_of(rpt, r);
      if (r < rpt && i < rows) acc += v[r] * ck[i];
    }
    acc = warp_sum(acc);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x / 32][kk] = acc;
  }
  __syncthreads();
  if (static_cast<int>(threadIdx.x) < width) {
    T total = 0;
    for (int w = 0; w < kWarps; ++w) total += warp_sums[w][threadIdx.x];
    partials[(k0 + threadIdx.x) * row_blocks + blockIdx.x] = total;
  }
}

// Second stage of the matvec, in a fixed order: w[k] = tau · Σ_b partials[k · row_blocks + b],
// one warp per column.
template <class T>
__global__ void __launch_bounds__(kThreads) reduce_kernel(const T* partials, std::int64_t row_blocks,
                                                          std::int64_t cols, const T* tau, T* w) {
  const std::int64_t k = static_cast<std::int64_t>(blockIdx.x) * kWarps + threadIdx.x / 32;
  if (k >= cols) return;
  T s = 0;
  for (std::int64_t b = threadIdx.x & 31; b < row_blocks; b += 32) s += partials[k * row_blocks + b];
  s = warp_sum(s);
  if ((threadIdx.x & 31) == 0) w[k] = *tau * s;
}

// C −= v wᵀ over the block's rows and kUpdateColumns columns (blockIdx.y); v[0] is the implicit 1.
// The blockIdx.y = 0 blocks also store v (rows >= 1) in v_dst, and, with sumsq_out, the partial
// sums of squares of the updated column 0 from first_row on: the next reflector's norm.
template <class T>
__global__ void __launch_bounds__(kThreads) update_kernel(const T* v_src, T* v_dst, T* c, std::int64_t ldc,
                                                          std::int64_t rows, std::int64_t cols, int rpt, const T* w,
                                                          T* sumsq_out, std::int64_t first_row) {
  T v[kMaxRowsPerThread];
#pragma unroll
  for (int r = 0; r < kMaxRowsPerThread; ++r) {
    const std::int64_t i = row_of(rpt, r);
    v[r] = (r < rpt && i < rows) ? (i == 0 ? T(1) : v_src[i]) : T(0);
  }
  if (v_dst && blockIdx.y == 0) {
#pragma unroll
    for (int r = 0; r < kMaxRowsPerThread; ++r) {
      const std::int64_t i = row_of(rpt, r);
      if (r < rpt && i < rows && i >= 1) v_dst[i] = v[r];
    }
  }
  const std::int64_t k0 = static_cast<std::int64_t>(blockIdx.y) * kUpdateColumns;
  const int width = static_cast<int>(cols - k0 < 0 ? 0 : (cols - k0 < kUpdateColumns ? cols - k0 : kUpdateColumns));
  T sq = 0;
  for (int kk = 0; kk < width; ++kk) {
    const T wk = w[k0 + kk];
    T* ck = c + (k0 + kk) * ldc;
#pragma unroll
    for (int r = 0; r < kMaxRowsPerThread; ++r) {
      const std::int64_t i = row_of(rpt, r);
      if (r < rpt && i < rows) {
        const T x = ck[i] - v[r] * wk;
        ck[i] = x;
        if (kk == 0 && i >= first_row) sq += x * x;
      }
    }
  }
  if (sumsq_out && blockIdx.y == 0) {  // uniform over the block
    const T total = block_sum(sq);
    if (threadIdx.x == 0) sumsq_out[blockIdx.x] = total;
  }
}

template <class T>
__global__ void set_identity_kernel(T* q, std::int64_t ldq, std::int64_t m, std::int64_t n) {
  for (std::int64_t j = blockIdx.y; j < n; j += gridDim.y)
    for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < m;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
      q[i + j * ldq] = i == j ? T(1) : T(0);
}


unsigned grid_count(std::int64_t items, std::int64_t per_block, std::int64_t cap) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((items + per_block - 1) / per_block, 1, cap));
}

void check_shape(const char* what, std::int64_t m, std::int64_t n, std::int64_t ld, const char* ld_name) {
  if (n < 1 || m < n)
    throw std::invalid_argument(std::string(what) + ": needs m >= n >= 1, got m = " + std::to_string(m) +
                                ", n = " + std::to_string(n));
  if (ld < m)
    throw std::invalid_argument(std::string(what) + ": " + ld_name + " = " + std::to_string(ld) + " < m = " +
                                std::to_string(m));
}

template <class T>
void geqr2(T* a, std::int64_t lda, std::int64_t m, std::int64_t n, T* tau, HouseholderBlas2Workspace<T> ws,
           cudaStream_t stream) {
  check_shape("householder_blas2_geqr2", m, n, lda, "lda");
  std::int64_t count = householder_blas2_row_blocks(m);
  sumsq_kernel<T><<<static_cast<unsigned>(count), kThreads, 0, stream>>>(a, m, 1, rows_per_thread(m),
                                                                         ws.sumsq_partials);
  GPUFACT_CHECK_LAUNCH();
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t rows = m - j, cols = n - j - 1;
    T* column = a + j + j * lda;
    T* trailing = column + lda;
    reflector_kernel<T><<<1, kThreads, 0, stream>>>(a, lda, j, ws.sumsq_partials, count, tau, ws.scale);
    GPUFACT_CHECK_LAUNCH();
    const int rpt = rows_per_thread(rows);
    const std::int64_t blocks = householder_blas2_row_blocks(rows);
    const dim3 matvec_grid(static_cast<unsigned>(blocks), grid_count(cols, kMatvecColumns, 65535));
    matvec_kernel<T, true><<<matvec_grid, kThreads, 0, stream>>>(column, ws.scale, ws.v, trailing, lda, rows, cols,
                                                                 rpt, ws.partials, blocks);
    GPUFACT_CHECK_LAUNCH();
    if (cols > 0) {
      reduce_kernel<T><<<grid_count(cols, kWarps, 1 << 30), kThreads, 0, stream>>>(ws.partials, blocks, cols,
                                                                                    tau + j, ws.w);
      GPUFACT_CHECK_LAUNCH();
    }
    // The next column's x starts two rows below this slice's first row.
    const bool next_norm = cols > 0 && rows > 2;
    const dim3 update_grid(static_cast<unsigned>(blocks), grid_count(cols, kUpdateColumns, 65535));
    update_kernel<T><<<update_grid, kThreads, 0, stream>>>(ws.v, column, trailing, lda, rows, cols, rpt, ws.w,
                                                           next_norm ? ws.sumsq_partials : nullptr, 2);
    GPUFACT_CHECK_LAUNCH();
    count = next_norm ? blocks : 0;
  }
}

template <class T>
void org2r(const T* a, std::int64_t lda, const T* tau, std::int64_t m, std::int64_t n, T* q, std::int64_t ldq,
           HouseholderBlas2Workspace<T> ws, cudaStream_t stream) {
  check_shape("householder_blas2_org2r", m, n, lda, "lda");
  check_shape("householder_blas2_org2r", m, n, ldq, "ldq");
  set_identity_kernel<T><<<dim3(grid_count(m, kThreads, 1024), grid_count(n, 1, 1024)), kThreads, 0, stream>>>(
      q, ldq, m, n);
  GPUFACT_CHECK_LAUNCH();
  // dorg2r's order: H_j acts on rows j.., and only columns j.. of Q are non-trivial there.
  for (std::int64_t j = n - 1; j >= 0; --j) {
    const std::int64_t rows = m - j, cols = n - j;
    const T* v = a + j + j * lda;
    T* block = q + j + j * ldq;
    const int rpt = rows_per_thread(rows);
    const std::int64_t blocks = householder_blas2_row_blocks(rows);
    matvec_kernel<T, false><<<dim3(static_cast<unsigned>(blocks), grid_count(cols, kMatvecColumns, 65535)),
                              kThreads, 0, stream>>>(v, nullptr, nullptr, block, ldq, rows, cols, rpt, ws.partials,
                                                     blocks);
    GPUFACT_CHECK_LAUNCH();
    reduce_kernel<T><<<grid_count(cols, kWarps, 1 << 30), kThreads, 0, stream>>>(ws.partials, blocks, cols, tau + j,
                                                                                  ws.w);
    GPUFACT_CHECK_LAUNCH();
    update_kernel<T><<<dim3(static_cast<unsigned>(blocks), grid_count(cols, kUpdateColumns, 65535)), kThreads, 0,
                       stream>>>(v, nullptr, block, ldq, rows, cols, rpt, ws.w, nullptr, 0);
    GPUFACT_CHECK_LAUNCH();
  }
}

}  // namespace

std::int64_t householder_blas2_rows_per_block(std::int64_t rows) {
  return static_cast<std::int64_t>(kThreads) * rows_per_thread(rows);
}

std::int64_t householder_blas2_row_blocks(std::int64_t rows) {
  const std::int64_t per_block = householder_blas2_rows_per_block(rows);
  return std::max<std::int64_t>(1, (rows + per_block - 1) / per_block);
}

HouseholderBlas2Counts householder_blas2_workspace_counts(std::int64_t m, std::int64_t n) {
  // Row blocks never exceed kTargetRowBlocks while a thread takes fewer than the maximum rows,
  // nor m / (kThreads · kMaxRowsPerThread) rounded up once it takes the maximum.
  const std::int64_t max_blocks =
      kTargetRowBlocks + (m + kThreads * kMaxRowsPerThread - 1) / (kThreads * kMaxRowsPerThread) + 1;
  const auto size = [](std::int64_t x) { return static_cast<std::size_t>(std::max<std::int64_t>(x, 1)); };
  return {size(max_blocks * n), size(max_blocks), size(n), size(m), 1};
}

void launch_householder_blas2_geqr2(float* a, std::int64_t lda, std::int64_t m, std::int64_t n, float* tau,
                                    HouseholderBlas2Workspace<float> ws, cudaStream_t stream) {
  geqr2(a, lda, m, n, tau, ws, stream);
}
void launch_householder_blas2_geqr2(double* a, std::int64_t lda, std::int64_t m, std::int64_t n, double* tau,
                                    HouseholderBlas2Workspace<double> ws, cudaStream_t stream) {
  geqr2(a, lda, m, n, tau, ws, stream);
}
void launch_householder_blas2_org2r(const float* a, std::int64_t lda, const float* tau, std::int64_t m,
                                    std::int64_t n, float* q, std::int64_t ldq, HouseholderBlas2Workspace<float> ws,
                                    cudaStream_t stream) {
  org2r(a, lda, tau, m, n, q, ldq, ws, stream);
}
void launch_householder_blas2_org2r(const double* a, std::int64_t lda, const double* tau, std::int64_t m,
                                    std::int64_t n, double* q, std::int64_t ldq, HouseholderBlas2Workspace<double> ws,
                                    cudaStream_t stream) {
  org2r(a, lda, tau, m, n, q, ldq, ws, stream);
}

}  // namespace gpufact::kernels
