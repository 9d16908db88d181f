#include "factorizations/tsqr_baselines/qr_test_matrices.hpp"

#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact::factorizations {
namespace {

// Orthonormal columns: the explicit Q of a Gaussian rows × cols matrix (Haar-distributed).
HostMatrix<double> random_orthonormal(std::int64_t rows, std::int64_t cols, std::mt19937_64& rng) {
  HostMatrix<double> q(rows, cols);
  std::normal_distribution<double> normal;
  for (std::int64_t j = 0; j < cols; ++j)
    for (std::int64_t i = 0; i < rows; ++i) q(i, j) = normal(rng);
  std::vector<double> tau(static_cast<std::size_t>(cols));
  int info = host::geqrf(rows, cols, q.data(), q.ld(), tau.data());
  if (info == 0) info = host::orgqr(rows, cols, cols, q.data(), q.ld(), tau.data());
  if (info != 0) throw std::runtime_error("random_orthonormal: LAPACK info " + std::to_string(info));
  return q;
}

}  // namespace

template <class T>
void fill_qr_uniform(MatrixView<T> a, std::uint64_t seed) {
  fill_uniform(a, seed, T(-1), T(1));
}

template <class T>
void fill_qr_conditioned(MatrixView<T> a, double kappa, std::uint64_t seed) {
  const std::int64_t m = a.rows, n = a.cols;
  if (n < 1 || m < n)
    throw std::invalid_argument("fill_qr_conditioned: needs m >= n >= 1, got " + std::to_string(m) + " × " +
                                std::to_string(n));
  if (!(kappa >= 1.0) || !std::isfinite(kappa))
    throw std::invalid_argument("fill_qr_conditioned: kappa must be a finite number >= 1");
  std::mt19937_64 rng(seed);
  HostMatrix<double> u = random_orthonormal(m, n, rng);
  const HostMatrix<double> v = random_orthonormal(n, n, rng);
  for (std::int64_t j = 0; j < n; ++j) {
    const double sigma = n == 1 ? 1.0 : std::pow(kappa, -static_cast<double>(j) / static_cast<double>(n - 1));
    for (std::int64_t i = 0; i < m; ++i) u(i, j) *= sigma;
  }
  HostMatrix<double> full(m, n);
  host::gemm(Op::N, Op::T, m, n, n, 1.0, u.data(), u.ld(), v.data(), v.ld(), 0.0, full.data(), full.ld());
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) a(i, j) = static_cast<T>(full(i, j));
}

template <class T>
void require_finite(MatrixView<const T> a, const char* what) {
  for (std::int64_t j = 0; j < a.cols; ++j)
    for (std::int64_t i = 0; i < a.rows; ++i)
      if (!std::isfinite(a(i, j)))
        throw std::invalid_argument(std::string(what) + " has a " + (std::isnan(a(i, j)) ? "NaN" : "infinite") +
                                    " entry at row " + std::to_string(i) + ", column " + std::to_string(j) +
                                    "; QR needs finite input");
}

template <class T>
double condition_number(MatrixView<const T> a) {
  const std::int64_t m = a.rows, n = a.cols;
  if (m == 0 || n == 0) return 0.0;
  HostMatrix<T> w(m, n);
  host::lacpy(m, n, a.data, a.ld, w.data(), w.ld());
  std::vector<T> s(static_cast<std::size_t>(std::min(m, n)));
  const int info = host::singular_values(m, n, w.data(), w.ld(), s.data());
  if (info != 0) throw std::runtime_error("condition_number: gesvd info " + std::to_string(info));
  return s.back() == T(0) ? std::numeric_limits<double>::infinity()
                          : static_cast<double>(s.front()) / static_cast<double>(s.back());
}

#define GPUFACT_INSTANTIATE(T)                                                 \
  template void fill_qr_uniform<T>(MatrixView<T>, std::uint64_t);               \
  template void fill_qr_conditioned<T>(MatrixView<T>, double, std::uint64_t);   \
  template void require_finite<T>(MatrixView<const T>, const char*);            \
  template double condition_number<T>(MatrixView<const T>);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact::factorizations
