#include "core/linalg/residual.hpp"

#include "core/linalg/blas_types.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact {
namespace {

template <class T>
HostMatrix<T> copy_of(MatrixView<const T> a) {
  HostMatrix<T> c(a.rows, a.cols);
  if (!a.empty()) host::lacpy(a.rows, a.cols, a.data, a.ld, c.data(), c.ld());
  return c;
}

double scaled(double residual, double scale) {
  if (scale == 0.0) return residual == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return residual / scale;
}

template <class T>
void require_col_major(MatrixView<const T> a, const char* what) {
  if (a.layout != Layout::col_major) throw std::invalid_argument(std::string(what) + " must be column-major");
}

template <class T>
HostMatrix<double> to_double(MatrixView<const T> a) {
  HostMatrix<double> d(a.rows, a.cols);
  for (std::int64_t j = 0; j < a.cols; ++j)
    for (std::int64_t i = 0; i < a.rows; ++i) d(i, j) = static_cast<double>(a(i, j));
  return d;
}

// Lower triangle of QᵀQ for rows [first, first + rows) of q, summed pairwise over chunks of rows
// (the rounding error then grows with log(m) rather than with m).
void pairwise_gram_rows(const HostMatrix<double>& q, std::int64_t first, std::int64_t rows, HostMatrix<double>& out) {
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t n = q.cols();
  if (rows <= kChunk) {
    host::syrk(Uplo::lower, Op::T, n, rows, 1.0, q.data() + first, q.ld(), 0.0, out.data(), out.ld());
    return;
  }
  const std::int64_t half = (rows / 2 + kChunk - 1) / kChunk * kChunk;
  pairwise_gram_rows(q, first, half, out);
  HostMatrix<double> bottom(n, n);
  pairwise_gram_rows(q, first + half, rows - half, bottom);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j; i < n; ++i) out(i, j) += bottom(i, j);
}

}  // namespace

void pairwise_gram(const HostMatrix<double>& x, HostMatrix<double>& out) {
  if (out.rows() != x.cols() || out.cols() != x.cols())
    throw std::invalid_argument("pairwise_gram: out must be " + std::to_string(x.cols()) + " × " +
                                std::to_string(x.cols()));
  pairwise_gram_rows(x, 0, x.rows(), out);
}

double symmetric_norm2(MatrixView<const double> lower) {
  require_col_major(lower, "symmetric_norm2: E");
  const std::int64_t n = lower.rows;
  if (lower.cols != n) throw std::invalid_argument("symmetric_norm2: E must be square");
  if (n == 0) return 0.0;
  HostMatrix<double> e(n, n);
  bool finite = true;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = j; i < n; ++i) {
      e(i, j) = e(j, i) = lower(i, j);
      finite = finite && std::isfinite(lower(i, j));
    }
  if (!finite) return std::numeric_limits<double>::infinity();
  const double scale = host::lange('1', n, n, e.data(), e.ld());
  if (scale == 0.0) return 0.0;
  constexpr std::int64_t kMaxSteps = 128;
  const std::int64_t steps = std::min(n, kMaxSteps);
  HostMatrix<double> v(n, steps + 1);  // the Lanczos basis
  fill_uniform(MatrixView<double>{v.data(), n, 1, v.ld(), Layout::col_major}, 0x9e3779b97f4a7c15ull);
  double start = 0.0;
  for (std::int64_t i = 0; i < n; ++i) start += v(i, 0) * v(i, 0);
  for (std::int64_t i = 0; i < n; ++i) v(i, 0) /= std::sqrt(start);
  std::vector<double> alpha, beta, w(static_cast<std::size_t>(n)), h(static_cast<std::size_t>(steps));
  for (std::int64_t j = 0; j < steps; ++j) {
    double* vj = v.data() + j * v.ld();
    host::gemv(Op::N, n, n, 1.0, e.data(), e.ld(), vj, 0.0, w.data());
    double a = 0.0;
    for (std::int64_t i = 0; i < n; ++i) a += vj[i] * w[static_cast<std::size_t>(i)];
    alpha.push_back(a);
    for (int pass = 0; pass < 2; ++pass) {  // w −= V Vᵀ w, twice (full reorthogonalization)
      host::gemv(Op::T, n, j + 1, 1.0, v.data(), v.ld(), w.data(), 0.0, h.data());
      host::gemv(Op::N, n, j + 1, -1.0, v.data(), v.ld(), h.data(), 1.0, w.data());
    }
    double b = 0.0;
    for (const double x : w) b += x * x;
    b = std::sqrt(b);
    // The Krylov space is invariant: T's eigenvalues are all of E's that the start vector reaches.
    if (b <= 64.0 * std::numeric_limits<double>::epsilon() * scale || j + 1 == steps) break;
    beta.push_back(b);
    for (std::int64_t i = 0; i < n; ++i) v(i, j + 1) = w[static_cast<std::size_t>(i)] / b;
  }
  const auto k = static_cast<std::int64_t>(alpha.size());
  HostMatrix<double> t(k, k);
  for (std::int64_t i = 0; i < k; ++i) {
    t(i, i) = alpha[static_cast<std::size_t>(i)];
    if (i + 1 < k) t(i + 1, i) = t(i, i + 1) = beta[static_cast<std::size_t>(i)];
  }
  std::vector<double> sigma(static_cast<std::size_t>(k));
  if (host::singular_values(k, k, t.data(), t.ld(), sigma.data()) != 0)
    throw std::runtime_error("symmetric_norm2: the tridiagonal's SVD did not converge");
  return sigma.front();  // a symmetric T's singular values are its eigenvalues' magnitudes
}

template <class T>
QrErrors qr_explicit_residual(MatrixView<const T> a, MatrixView<const T> q, MatrixView<const T> r) {
  require_col_major(a, "qr_explicit_residual: A");
  require_col_major(q, "qr_explicit_residual: Q");
  require_col_major(r, "qr_explicit_residual: R");
  const std::int64_t m = a.rows, n = a.cols;
  if (q.rows != m || q.cols != n || r.rows != n || r.cols != n)
    throw std::invalid_argument("qr_explicit_residual: needs A and Q m × n and R n × n, got A " +
                                std::to_string(m) + "×" + std::to_string(n) + ", Q " + std::to_string(q.rows) +
                                "×" + std::to_string(q.cols) + ", R " + std::to_string(r.rows) + "×" +
                                std::to_string(r.cols));
  if (m == 0 || n == 0) return {};
  HostMatrix<double> res = to_double(a), qd = to_double(q), rd(n, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i) rd(i, j) = static_cast<double>(r(i, j));
  const double a_norm = host::lange('1', m, n, res.data(), res.ld());
  host::gemm(Op::N, Op::N, m, n, n, -1.0, qd.data(), qd.ld(), rd.data(), rd.ld(), 1.0, res.data(), res.ld());
  QrErrors e;
  e.factorization = scaled(host::lange('1', m, n, res.data(), res.ld()), a_norm);
  HostMatrix<double> gram(n, n);
  pairwise_gram(qd, gram);
  for (std::int64_t j = 0; j < n; ++j) gram(j, j) -= 1.0;
  e.orthogonality = host::lansy('1', Uplo::lower, n, gram.data(), gram.ld());
  e.orthogonality_2 = symmetric_norm2(gram.view());
  return e;
}

template <class T>
double lu_residual(MatrixView<const T> a, MatrixView<const T> lu, const int* ipiv) {
  require_col_major(a, "lu_residual: A");
  const std::int64_t m = a.rows, n = a.cols, k = std::min(m, n);
  if (lu.rows != m || lu.cols != n) throw std::invalid_argument("lu_residual: LU must have A's shape");
  if (k == 0) return 0.0;
  HostMatrix<T> pa = copy_of(a);
  host::laswp(n, pa.data(), pa.ld(), 1, k, ipiv);
  HostMatrix<T> l(m, k), u(k, n);
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t i = 0; i < m; ++i) l(i, j) = i > j ? lu(i, j) : (i == j ? T(1) : T(0));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < k; ++i) u(i, j) = i <= j ? lu(i, j) : T(0);
  host::gemm(Op::N, Op::N, m, n, k, T(-1), l.data(), l.ld(), u.data(), u.ld(), T(1), pa.data(), pa.ld());
  const double r = host::lange('1', m, n, pa.data(), pa.ld());
  return scaled(r, static_cast<double>(n) * host::lange('1', m, n, a.data, a.ld) * unit_roundoff<T>());
}

template <class T>
double cholesky_residual(MatrixView<const T> a, MatrixView<const T> l) {
  require_col_major(a, "cholesky_residual: A");
  const std::int64_t n = a.rows;
  if (a.cols != n || l.rows != n || l.cols != n) throw std::invalid_argument("cholesky_residual: A and L must be n × n");
  if (n == 0) return 0.0;
  HostMatrix<T> r = copy_of(a), lower(n, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) lower(i, j) = i >= j ? l(i, j) : T(0);
  host::syrk(Uplo::lower, Op::N, n, n, T(-1), lower.data(), lower.ld(), T(1), r.data(), r.ld());
  const double res = host::lansy('1', Uplo::lower, n, r.data(), r.ld());
  return scaled(res, static_cast<double>(n) * host::lansy('1', Uplo::lower, n, a.data, a.ld) * unit_roundoff<T>());
}

template <class T>
double orthogonality_error(MatrixView<const T> q) {
  require_col_major(q, "orthogonality_error: Q");
  const std::int64_t m = q.rows, n = q.cols;
  if (n == 0) return 0.0;
  HostMatrix<T> w(n, n);
  for (std::int64_t j = 0; j < n; ++j) w(j, j) = T(1);
  host::syrk(Uplo::lower, Op::T, n, m, T(-1), q.data, q.ld, T(1), w.data(), w.ld());
  return host::lansy('1', Uplo::lower, n, w.data(), w.ld()) / (static_cast<double>(std::max<std::int64_t>(m, 1)) * unit_roundoff<T>());
}

template <class T>
QrErrors qr_residual(MatrixView<const T> a, MatrixView<const T> qr, const T* tau) {
  require_col_major(a, "qr_residual: A");
  const std::int64_t m = a.rows, n = a.cols, k = std::min(m, n);
  if (qr.rows != m || qr.cols != n) throw std::invalid_argument("qr_residual: QR must have A's shape");
  if (k == 0) return {};
  HostMatrix<T> q(m, k), r(k, n);
  host::lacpy(m, k, qr.data, qr.ld, q.data(), q.ld());
  const int info = host::orgqr(m, k, k, q.data(), q.ld(), tau);
  if (info != 0) throw std::runtime_error("qr_residual: orgqr returned info " + std::to_string(info));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < k; ++i) r(i, j) = i <= j ? qr(i, j) : T(0);
  HostMatrix<T> res = copy_of(a);
  host::gemm(Op::N, Op::N, m, n, k, T(-1), q.data(), q.ld(), r.data(), r.ld(), T(1), res.data(), res.ld());
  QrErrors e;
  e.factorization = scaled(host::lange('1', m, n, res.data(), res.ld()),
                           static_cast<double>(m) * host::lange('1', m, n, a.data, a.ld) * unit_roundoff<T>());
  e.orthogonality = orthogonality_error<T>(q.view());
  return e;
}

template <class T>
double gemm_error(char ta, char tb, MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> c0,
                  MatrixView<const T> c, T alpha, T beta) {
  const bool at = ta == 'T' || ta == 't', bt = tb == 'T' || tb == 't';
  const std::int64_t m = c.rows, n = c.cols, k = at ? a.rows : a.cols;
  if ((at ? a.cols : a.rows) != m || (bt ? b.rows : b.cols) != n || (bt ? b.cols : b.rows) != k ||
      c0.rows != m || c0.cols != n)
    throw std::invalid_argument("gemm_error: inconsistent shapes");
  if (m == 0 || n == 0) return 0.0;
  // op(A), op(B) and their absolute values, upcast to double.
  HostMatrix<double> oa(m, k), ob(k, n), abs_a(m, k), abs_b(k, n), ref(m, n), bound(m, n);
  for (std::int64_t l = 0; l < k; ++l)
    for (std::int64_t i = 0; i < m; ++i) {
      oa(i, l) = static_cast<double>(at ? a(l, i) : a(i, l));
      abs_a(i, l) = std::abs(oa(i, l));
    }
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t l = 0; l < k; ++l) {
      ob(l, j) = static_cast<double>(bt ? b(j, l) : b(l, j));
      abs_b(l, j) = std::abs(ob(l, j));
    }
  const double al = static_cast<double>(alpha), be = static_cast<double>(beta);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      ref(i, j) = be * static_cast<double>(c0(i, j));
      bound(i, j) = std::abs(ref(i, j));
    }
  if (k > 0) {
    host::gemm(Op::N, Op::N, m, n, k, al, oa.data(), oa.ld(), ob.data(), ob.ld(), 1.0, ref.data(), ref.ld());
    host::gemm(Op::N, Op::N, m, n, k, std::abs(al), abs_a.data(), abs_a.ld(), abs_b.data(), abs_b.ld(), 1.0,
               bound.data(), bound.ld());
  }
  double worst = 0.0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      const double v = static_cast<double>(c(i, j));
      if (!std::isfinite(v)) return std::numeric_limits<double>::infinity();
      worst = std::max(worst, scaled(std::abs(v - ref(i, j)), bound(i, j) * unit_roundoff<T>()));
    }
  return worst;
}

#define GPUFACT_INSTANTIATE(T)                                                                              \
  template double lu_residual<T>(MatrixView<const T>, MatrixView<const T>, const int*);                     \
  template double cholesky_residual<T>(MatrixView<const T>, MatrixView<const T>);                           \
  template QrErrors qr_residual<T>(MatrixView<const T>, MatrixView<const T>, const T*);                     \
  template QrErrors qr_explicit_residual<T>(MatrixView<const T>, MatrixView<const T>, MatrixView<const T>); \
  template double orthogonality_error<T>(MatrixView<const T>);                                              \
  template double gemm_error<T>(char, char, MatrixView<const T>, MatrixView<const T>, MatrixView<const T>,  \
                                MatrixView<const T>, T, T);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact
