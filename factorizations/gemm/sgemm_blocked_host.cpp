#include "factorizations/gemm/sgemm_blocked_host.hpp"

#include "kernels/gemm/gemm_arguments.hpp"
#include "kernels/gemm/sgemm_splitk.cuh"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace gpufact::factorizations {
namespace {

constexpr std::int64_t kBlockRows = 64, kBlockCols = 16, kBk = 4;

float b_at(Op tb, const float* b, std::int64_t ldb, std::int64_t kk, std::int64_t j) {
  return tb == Op::N ? b[kk + j * ldb] : b[j + kk * ldb];
}

float merge(float alpha, float acc, float beta, float c) {
  return beta == 0.0f ? alpha * acc : std::fma(alpha, acc, beta * c);
}

}  // namespace

void sgemm_volkov_host(Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                       std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  kernels::check_gemm_arguments("sgemm_volkov_host", Op::N, tb, m, n, k, lda, ldb, ldc);
  std::array<float, kBlockRows * kBlockCols> acc{};
  for (std::int64_t j0 = 0; j0 < n; j0 += kBlockCols)
    for (std::int64_t i0 = 0; i0 < m; i0 += kBlockRows) {
      const std::int64_t rows = std::min(kBlockRows, m - i0), cols = std::min(kBlockCols, n - j0);
      acc.fill(0.0f);
      // One 64 × 4 block of A against one 4 × 16 block of op(B) per step, as the threads of the
      // GPU block do it together; the k remainder's padding (fma(0, 0, c) = c) is left out.
      for (std::int64_t k0 = 0; k0 < k; k0 += kBk)
        for (std::int64_t kk = k0; kk < std::min(k0 + kBk, k); ++kk)
          for (std::int64_t jj = 0; jj < cols; ++jj) {
            const float bv = b_at(tb, b, ldb, kk, j0 + jj);
            for (std::int64_t ii = 0; ii < rows; ++ii) {
              float& s = acc[static_cast<std::size_t>(ii + jj * kBlockRows)];
              s = std::fma(a[i0 + ii + kk * lda], bv, s);
            }
          }
      for (std::int64_t jj = 0; jj < cols; ++jj)
        for (std::int64_t ii = 0; ii < rows; ++ii) {
          float& out = c[i0 + ii + (j0 + jj) * ldc];
          out = merge(alpha, acc[static_cast<std::size_t>(ii + jj * kBlockRows)], beta, out);
        }
    }
}

void sgemm_splitk_host(Op tb, std::int64_t m, std::int64_t n, std::int64_t k, int splits, float alpha, const float* a,
                       std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  kernels::check_gemm_arguments("sgemm_splitk_host", Op::N, tb, m, n, k, lda, ldb, ldc);
  const std::int64_t slice = kernels::sgemm_splitk_slice(k, splits);
  const auto count = static_cast<std::size_t>(m * n);
  std::vector<float> sum(count, 0.0f), partial(count);
  for (int s = 0; s < splits; ++s) {
    std::fill(partial.begin(), partial.end(), 0.0f);
    const std::int64_t k0 = s * slice, k1 = std::min(k, k0 + slice);
    for (std::int64_t kk = k0; kk < k1; ++kk)
      for (std::int64_t j = 0; j < n; ++j) {
        const float bv = b_at(tb, b, ldb, kk, j);
        for (std::int64_t i = 0; i < m; ++i) {
          float& p = partial[static_cast<std::size_t>(i + j * m)];
          p = std::fma(a[i + kk * lda], bv, p);
        }
      }
    // ws[0] + ws[1] + … as the reduction kernel adds them (the first partial is not added to 0).
    for (std::size_t e = 0; e < count; ++e) sum[e] = s == 0 ? partial[e] : sum[e] + partial[e];
  }
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      float& out = c[i + j * ldc];
      out = merge(alpha, sum[static_cast<std::size_t>(i + j * m)], beta, out);
    }
}

}  // namespace gpufact::factorizations
