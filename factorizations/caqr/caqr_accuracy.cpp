#include "factorizations/caqr/caqr_accuracy.hpp"

#include "core/linalg/blas_types.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/residual.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace gpufact::factorizations {
namespace {

// Lower triangle of XᵀX for the m × n double matrix X, summed pairwise over row chunks: I − QᵀQ
// of an FP64 Q is of the order of one dsyrk's own rounding over 10⁶ rows (see pairwise_gram).
HostMatrix<double> gram(const HostMatrix<double>& x) {
  HostMatrix<double> g(x.cols(), x.cols());
  pairwise_gram(x, g);
  return g;
}

}  // namespace

template <class T>
QrAccuracy qr_accuracy(MatrixView<const T> a, MatrixView<const T> q, MatrixView<const T> r) {
  const std::int64_t m = a.rows, n = a.cols;
  if (q.rows != m || q.cols != n || r.rows != n || r.cols != n)
    throw std::invalid_argument("qr_accuracy: needs A and Q m × n, R n × n");
  if (m == 0 || n == 0) return {};
  HostMatrix<double> ad(m, n), qd(m, n), rd(n, n);
  bool finite = true;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      ad(i, j) = static_cast<double>(a(i, j));
      qd(i, j) = static_cast<double>(q(i, j));
      finite = finite && std::isfinite(qd(i, j));
    }
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i) {
      rd(i, j) = static_cast<double>(r(i, j));
      finite = finite && std::isfinite(rd(i, j));
    }
  const double inf = std::numeric_limits<double>::infinity();
  if (!finite) return {inf, inf};
  const double unit = std::sqrt(static_cast<double>(n)) * unit_roundoff<T>();
  QrAccuracy out;
  HostMatrix<double> res = ad;
  host::gemm<double>(Op::N, Op::N, m, n, n, -1.0, qd.data(), qd.ld(), rd.data(), rd.ld(), 1.0, res.data(), res.ld());
  const double a_norm = std::sqrt(symmetric_norm2(gram(ad).view()));
  const double res_norm = std::sqrt(symmetric_norm2(gram(res).view()));
  out.factorization = a_norm == 0 ? (res_norm == 0 ? 0 : inf) : res_norm / a_norm / unit;
  HostMatrix<double> e = gram(qd);
  for (std::int64_t i = 0; i < n; ++i) e(i, i) -= 1.0;
  out.orthogonality = symmetric_norm2(e.view()) / unit;
  return out;
}

template <class T>
double max_difference_eps(const HostMatrix<T>& x, const HostMatrix<T>& y, double scale) {
  double worst = 0;
  for (std::int64_t j = 0; j < x.cols(); ++j)
    for (std::int64_t i = 0; i < x.rows(); ++i) {
      const double d = std::abs(static_cast<double>(x(i, j)) - static_cast<double>(y(i, j)));
      if (!std::isfinite(d)) return std::numeric_limits<double>::infinity();
      worst = std::max(worst, d);
    }
  return worst / (scale * unit_roundoff<T>());
}

template QrAccuracy qr_accuracy<float>(MatrixView<const float>, MatrixView<const float>, MatrixView<const float>);
template QrAccuracy qr_accuracy<double>(MatrixView<const double>, MatrixView<const double>, MatrixView<const double>);

template double max_difference_eps<float>(const HostMatrix<float>&, const HostMatrix<float>&, double);
template double max_difference_eps<double>(const HostMatrix<double>&, const HostMatrix<double>&, double);

}  // namespace gpufact::factorizations
