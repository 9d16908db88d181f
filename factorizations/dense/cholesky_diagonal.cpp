#include "factorizations/dense/cholesky_diagonal.hpp"

#include "core/linalg/blas_types.hpp"
#include "core/linalg/device_blas.hpp"
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

}  // namespace

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

template void potrf_diagonal_recursive<float>(cublasHandle_t, float*, std::int64_t, std::int64_t, int*, cudaStream_t);
template void potrf_diagonal_recursive<double>(cublasHandle_t, double*, std::int64_t, std::int64_t, int*,
                                               cudaStream_t);

}  // namespace gpufact::dense
