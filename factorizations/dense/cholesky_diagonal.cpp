#include "factorizations/dense/cholesky_diagonal.hpp"

#include "core/linalg/blas_types.hpp"
#include "core/linalg/device_blas.hpp"
#include "core/cuda/check.hpp"
#include "kernels/dense/potrf_fused.cuh"
#include "kernels/dense/potrf_small.cuh"

#include <algorithm>
#include <stdexcept>

namespace gpufact::dense {
namespace {

template <class T>
void factor(cublasHandle_t blas, T* a, std::int64_t lda, std::int64_t w, int* info, int offset, cudaStream_t s) {
  if (w <= kernels::kPotrfSmallMax) {
    kernels::launch_potrf_small(a, lda, static_cast<int>(w), info, offset, s);
    return;
  }
  const std::int64_t n1 = potrf_diagonal_split(w), n2 = w - n1;
  T* a21 = a + n1;
  T* a22 = a + n1 + n1 * lda;
  factor(blas, a, lda, n1, info, offset, s);
  dev::trsm<T>(blas, Side::right, Uplo::lower, Op::T, Diag::non_unit, n2, n1, T(1), a, lda, a21, lda);
  dev::syrk<T>(blas, Uplo::lower, Op::N, n2, n1, T(-1), a21, lda, T(1), a22, lda);
  factor(blas, a22, lda, n2, info, offset + static_cast<int>(n1), s);
}

template <class T>
void factor_fused(cublasHandle_t blas, T* a, std::int64_t lda, std::int64_t w, T* x, std::int64_t ldx,
                  bool want_inverse, T* scratch, int* info, int offset, cudaStream_t s) {
  if (w <= kernels::kPotrfFusedMax) {
    kernels::launch_potrf_trtri_fused(a, lda, static_cast<int>(w), want_inverse ? x : nullptr, ldx, info, offset, s);
    return;
  }
  const std::int64_t n1 = potrf_diagonal_fused_split(w), n2 = w - n1;
  T* a21 = a + n1;
  T* a22 = a + n1 + n1 * lda;
  T* x21 = x + n1;
  T* x22 = x + n1 + n1 * ldx;
  factor_fused(blas, a, lda, n1, x, ldx, true, scratch, info, offset, s);
  // L21 = A21·X11ᵀ (X11's zero upper triangle makes the full-square GEMM exact), out of place.
  dev::gemm<T>(blas, Op::N, Op::T, n2, n1, n1, T(1), a21, lda, x, ldx, T(0), scratch, n2);
  const std::size_t column_bytes = static_cast<std::size_t>(n2) * sizeof(T);
  GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(a21, static_cast<std::size_t>(lda) * sizeof(T), scratch, column_bytes,
                                       column_bytes, static_cast<std::size_t>(n1), cudaMemcpyDeviceToDevice, s));
  dev::syrk<T>(blas, Uplo::lower, Op::N, n2, n1, T(-1), a21, lda, T(1), a22, lda);
  factor_fused(blas, a22, lda, n2, x22, ldx, want_inverse, scratch, info, offset + static_cast<int>(n1), s);
  if (!want_inverse) return;
  // X21 = −X22·(L21·X11).
  dev::gemm<T>(blas, Op::N, Op::N, n2, n1, n1, T(1), a21, lda, x, ldx, T(0), scratch, n2);
  dev::gemm<T>(blas, Op::N, Op::N, n2, n1, n2, T(-1), x22, ldx, scratch, n2, T(0), x21, ldx);
}

}  // namespace

std::int64_t potrf_diagonal_fused_split(std::int64_t w) {
  const std::int64_t m = kernels::kPotrfFusedMax;
  return std::min<std::int64_t>(w - 1, std::max<std::int64_t>(m, (w / 2 + m - 1) / m * m));
}

std::size_t potrf_diagonal_fused_scratch(std::int64_t w) {
  // n1·n2 <= w²/4 at every level (n1 + n2 = w, and the levels below are narrower).
  return w <= kernels::kPotrfFusedMax ? 0 : static_cast<std::size_t>(w * w / 4 + w);
}

template <class T>
void potrf_diagonal_fused(cublasHandle_t blas, T* a, std::int64_t lda, std::int64_t w, T* inv, std::int64_t ldinv,
                          bool want_inverse, T* scratch, int* info, int info_offset, cudaStream_t stream) {
  if (w < 0 || lda < std::max<std::int64_t>(1, w))
    throw std::invalid_argument("potrf_diagonal_fused: w < 0 or lda < max(1, w)");
  if ((want_inverse || w > kernels::kPotrfFusedMax) && (inv == nullptr || ldinv < std::max<std::int64_t>(1, w)))
    throw std::invalid_argument("potrf_diagonal_fused: inv missing or ldinv < max(1, w)");
  if (w > kernels::kPotrfFusedMax && scratch == nullptr)
    throw std::invalid_argument("potrf_diagonal_fused: blocks wider than 128 need scratch");
  factor_fused(blas, a, lda, w, inv, ldinv, want_inverse, scratch, info, info_offset, stream);
}

std::int64_t potrf_diagonal_split(std::int64_t w) {
  return std::min<std::int64_t>(w - 1, (w / 2 + 31) / 32 * 32);
}

template <class T>
void potrf_diagonal_recursive(cublasHandle_t blas, T* a, std::int64_t lda, std::int64_t w, int* info,
                              cudaStream_t stream) {
  if (w < 0 || lda < std::max<std::int64_t>(1, w))
    throw std::invalid_argument("potrf_diagonal_recursive: w < 0 or lda < max(1, w)");
  factor(blas, a, lda, w, info, 0, stream);
}

template void potrf_diagonal_fused<float>(cublasHandle_t, float*, std::int64_t, std::int64_t, float*, std::int64_t,
                                          bool, float*, int*, int, cudaStream_t);
template void potrf_diagonal_fused<double>(cublasHandle_t, double*, std::int64_t, std::int64_t, double*, std::int64_t,
                                           bool, double*, int*, int, cudaStream_t);
template void potrf_diagonal_recursive<float>(cublasHandle_t, float*, std::int64_t, std::int64_t, int*, cudaStream_t);
template void potrf_diagonal_recursive<double>(cublasHandle_t, double*, std::int64_t, std::int64_t, int*,
                                               cudaStream_t);

}  // namespace gpufact::dense
