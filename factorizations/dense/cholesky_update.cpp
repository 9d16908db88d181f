#include "factorizations/dense/cholesky_update.hpp"

#include "core/linalg/device_blas.hpp"
#include "kernels/gemm/sgemm_simt.cuh"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

namespace gpufact::dense {
namespace {

// Lower triangle of the w × w square at c −= L·Lᵀ (L: w × k at l).
template <class T>
void rank_k_lower(UpdateGemm gemm, std::int64_t w, std::int64_t k, const T* l, std::int64_t ldl, T* c,
                  std::int64_t ldc, cublasHandle_t blas, cudaStream_t s) {
  if (w <= 0 || k <= 0) return;
  if (gemm == UpdateGemm::cublas) {
    dev::syrk<T>(blas, Uplo::lower, Op::N, w, k, T(-1), l, ldl, T(1), c, ldc);
    return;
  }
  if constexpr (std::is_same_v<T, float>) {
    // volkov08 §4.2: the block-triangular C computed by the SGEMM main loop on its nonzero tiles.
    kernels::sgemm_triangular_simt(Uplo::lower, Op::N, Op::T, w, k, -1.0f, l, ldl, l, ldl, 1.0f, c, ldc, s);
  } else {
    throw std::invalid_argument("cholesky: update GEMM '" + std::string(update_gemm_entry(gemm).name) +
                                "' has no FP64 triangle update");
  }
}

}  // namespace

template <class T>
void cholesky_update_columns(DeviceMatrix<T> d, std::int64_t k0, std::int64_t k1, std::int64_t c0, std::int64_t c1,
                             const CholeskyOptions& o, cublasHandle_t blas, cudaStream_t s, PhaseTimer* timer) {
  cholesky_update_columns<T>(d, d.data + k0 * d.ld, d.ld, 0, k1 - k0, c0, c1, o, blas, s, timer);
}

template <class T>
void cholesky_update_columns(DeviceMatrix<T> d, const T* l, std::int64_t ldl, std::int64_t l_row0, std::int64_t k,
                             std::int64_t c0, std::int64_t c1, const CholeskyOptions& o, cublasHandle_t blas,
                             cudaStream_t s, PhaseTimer* timer) {
  const std::int64_t n = d.rows;
  if (c1 <= c0 || k <= 0) return;
  if (d.row_major) throw std::invalid_argument("cholesky_update_columns: the matrix must be column-major");
  if (c0 < l_row0) throw std::invalid_argument("cholesky_update_columns: columns before L's first row");
  auto l_at = [&](std::int64_t i) { return l + (i - l_row0); };
  const UpdateGemmFn<T> gemm = update_gemm_fn<T>(o.gemm);
  // update_blocks' blocks, walked without building the list: this runs twice per step inside the
  // factorization loop, which allocates nothing.
  const std::int64_t step = cholesky_update_step(o, sizeof(T), c1 - c0);
  double flops = 0;
  for (std::int64_t b0 = c0; b0 < c1; b0 += step) {
    const std::int64_t b1 = std::min(c1, b0 + step);
    const double w = static_cast<double>(b1 - b0);
    flops += w * (w + 1) * static_cast<double>(k) + 2.0 * static_cast<double>(n - b1) * w * static_cast<double>(k);
  }
  GpuPhase phase(timer, Phase::gpu_compute, s, flops);
  for (std::int64_t b0 = c0; b0 < c1; b0 += step) {
    const UpdateBlock b{b0, std::min(c1, b0 + step)};
    const std::int64_t w = b.c1 - b.c0;
    rank_k_lower<T>(o.gemm, w, k, l_at(b.c0), ldl, d.at(b.c0, b.c0), d.ld, blas, s);
    if (b.c1 < n)
      gemm(blas, Op::N, Op::T, n - b.c1, w, k, T(-1), l_at(b.c1), ldl, l_at(b.c0), ldl, T(1), d.at(b.c1, b.c0), d.ld,
           s);
  }
}

template <class T>
void upload_lower(const T* a, std::int64_t lda, DeviceMatrix<T> d, std::int64_t c0, std::int64_t width,
                  cudaStream_t s, PhaseTimer* timer) {
  const std::int64_t n = d.rows;
  for (std::int64_t c = c0; c < n; c += std::max<std::int64_t>(width, 1))
    upload_block(a, lda, d, c, n, c, std::min(n, c + std::max<std::int64_t>(width, 1)), static_cast<T*>(nullptr), s,
                 timer);
}

template <class T>
void download_lower(DeviceMatrix<T> d, T* a, std::int64_t lda, std::int64_t c0, std::int64_t width, cudaStream_t s,
                    PhaseTimer* timer) {
  const std::int64_t n = d.rows;
  for (std::int64_t c = c0; c < n; c += std::max<std::int64_t>(width, 1))
    download_block(d, a, lda, c, n, c, std::min(n, c + std::max<std::int64_t>(width, 1)), static_cast<T*>(nullptr), s,
                   timer);
}

#define GPUFACT_CHOLESKY_UPDATE(T)                                                                                     \
  template void cholesky_update_columns<T>(DeviceMatrix<T>, std::int64_t, std::int64_t, std::int64_t, std::int64_t,     \
                                           const CholeskyOptions&, cublasHandle_t, cudaStream_t, PhaseTimer*);          \
  template void cholesky_update_columns<T>(DeviceMatrix<T>, const T*, std::int64_t, std::int64_t, std::int64_t,         \
                                           std::int64_t, std::int64_t, const CholeskyOptions&, cublasHandle_t,          \
                                           cudaStream_t, PhaseTimer*);                                                  \
  template void upload_lower<T>(const T*, std::int64_t, DeviceMatrix<T>, std::int64_t, std::int64_t, cudaStream_t,     \
                                PhaseTimer*);                                                                          \
  template void download_lower<T>(DeviceMatrix<T>, T*, std::int64_t, std::int64_t, std::int64_t, cudaStream_t,         \
                                  PhaseTimer*);
GPUFACT_CHOLESKY_UPDATE(float)
GPUFACT_CHOLESKY_UPDATE(double)
#undef GPUFACT_CHOLESKY_UPDATE

}  // namespace gpufact::dense
