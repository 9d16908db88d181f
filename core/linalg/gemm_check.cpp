#include "core/linalg/gemm_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

namespace gpufact {

bool is_written(Written w, std::int64_t i, std::int64_t j) {
  return w == Written::all || (w == Written::lower ? i >= j : i <= j);
}

namespace {

template <class T>
T op_at(Op t, MatrixView<const T> x, std::int64_t i, std::int64_t j) {
  return t == Op::N ? x(i, j) : x(j, i);
}

void check_shapes(Op ta, Op tb, std::int64_t ar, std::int64_t ac, std::int64_t br, std::int64_t bc, std::int64_t m,
                  std::int64_t n) {
  const std::int64_t am = ta == Op::N ? ar : ac, ak = ta == Op::N ? ac : ar;
  const std::int64_t bk = tb == Op::N ? br : bc, bn = tb == Op::N ? bc : br;
  if (am != m || bn != n || ak != bk) throw std::invalid_argument("gemm check: inconsistent shapes");
}

double ratio(double diff, double bound) {
  if (diff == 0.0) return 0.0;
  return bound > 0.0 ? diff / bound : std::numeric_limits<double>::infinity();
}

// |C − ref| / (ε bound) for one entry; the dot product and its absolute bound in long double.
template <class T>
double entry_error(Op ta, Op tb, MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> c0,
                   MatrixView<const T> c, T alpha, T beta, std::int64_t k, std::int64_t i, std::int64_t j) {
  long double dot = 0.0L, abs_dot = 0.0L;
  for (std::int64_t l = 0; l < k; ++l) {
    const long double p = static_cast<long double>(op_at(ta, a, i, l)) * static_cast<long double>(op_at(tb, b, l, j));
    dot += p;
    abs_dot += std::fabs(p);
  }
  const long double al = alpha, be = beta;
  long double ref = al * dot, bound = std::fabs(al) * abs_dot;
  if (beta != T(0)) {
    ref += be * static_cast<long double>(c0(i, j));
    bound += std::fabs(be * static_cast<long double>(c0(i, j)));
  }
  const double v = static_cast<double>(c(i, j));
  if (!std::isfinite(v)) return std::numeric_limits<double>::infinity();
  return ratio(static_cast<double>(std::fabs(static_cast<long double>(v) - ref)),
               static_cast<double>(bound) * unit_roundoff<T>());
}

}  // namespace

template <class T>
double sampled_gemm_error(Op ta, Op tb, MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> c0,
                          MatrixView<const T> c, T alpha, T beta, std::int64_t samples, std::uint64_t seed,
                          Written written) {
  check_shapes(ta, tb, a.rows, a.cols, b.rows, b.cols, c.rows, c.cols);
  const std::int64_t m = c.rows, n = c.cols, k = ta == Op::N ? a.cols : a.rows;
  if (beta != T(0) && (c0.rows != m || c0.cols != n)) throw std::invalid_argument("gemm check: C₀ shape differs from C");
  if (written != Written::all && m != n) throw std::invalid_argument("gemm check: a triangle needs square C");
  if (m == 0 || n == 0) return 0.0;
  const double total = written == Written::all ? static_cast<double>(m) * static_cast<double>(n)
                                               : static_cast<double>(n) * static_cast<double>(n + 1) / 2;
  double worst = 0.0;
  if (static_cast<double>(samples) >= total) {
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i)
        if (is_written(written, i, j)) worst = std::max(worst, entry_error(ta, tb, a, b, c0, c, alpha, beta, k, i, j));
    return worst;
  }
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<std::int64_t> pick_i(0, m - 1), pick_j(0, n - 1);
  for (std::int64_t s = 0; s < samples; ++s) {
    std::int64_t i = pick_i(gen), j = pick_j(gen);
    if (!is_written(written, i, j)) std::swap(i, j);  // the mirror entry is in the triangle
    worst = std::max(worst, entry_error(ta, tb, a, b, c0, c, alpha, beta, k, i, j));
  }
  return worst;
}

template <class T>
double gemm_difference(Op ta, Op tb, MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> c0,
                       MatrixView<const T> c, MatrixView<const T> c2, T alpha, T beta) {
  check_shapes(ta, tb, a.rows, a.cols, b.rows, b.cols, c.rows, c.cols);
  const std::int64_t m = c.rows, n = c.cols, k = ta == Op::N ? a.cols : a.rows;
  std::vector<double> row_norm(static_cast<std::size_t>(m), 0.0), col_norm(static_cast<std::size_t>(n), 0.0);
  // Sums of squares walk each matrix in storage order.
  if (ta == Op::N) {
    for (std::int64_t l = 0; l < k; ++l)
      for (std::int64_t i = 0; i < m; ++i) row_norm[static_cast<std::size_t>(i)] += std::pow(double(a(i, l)), 2);
  } else {
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t l = 0; l < k; ++l) row_norm[static_cast<std::size_t>(i)] += std::pow(double(a(l, i)), 2);
  }
  if (tb == Op::N) {
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t l = 0; l < k; ++l) col_norm[static_cast<std::size_t>(j)] += std::pow(double(b(l, j)), 2);
  } else {
    for (std::int64_t l = 0; l < k; ++l)
      for (std::int64_t j = 0; j < n; ++j) col_norm[static_cast<std::size_t>(j)] += std::pow(double(b(j, l)), 2);
  }
  for (auto& v : row_norm) v = std::sqrt(v);
  for (auto& v : col_norm) v = std::sqrt(v);
  const double al = std::abs(static_cast<double>(alpha)), be = std::abs(static_cast<double>(beta));
  double worst = 0.0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      const double v = static_cast<double>(c(i, j)), w = static_cast<double>(c2(i, j));
      if (!std::isfinite(v) || !std::isfinite(w)) return std::numeric_limits<double>::infinity();
      double bound = al * row_norm[static_cast<std::size_t>(i)] * col_norm[static_cast<std::size_t>(j)];
      if (beta != T(0)) bound += be * std::abs(static_cast<double>(c0(i, j)));
      worst = std::max(worst, ratio(std::abs(v - w), bound * unit_roundoff<T>()));
    }
  return worst;
}

template <class T>
double normwise_difference(MatrixView<const T> c, MatrixView<const T> c_ref, Written written) {
  if (c.rows != c_ref.rows || c.cols != c_ref.cols) throw std::invalid_argument("normwise_difference: shapes differ");
  double diff = 0.0, ref = 0.0;
  for (std::int64_t j = 0; j < c.cols; ++j)
    for (std::int64_t i = 0; i < c.rows; ++i) {
      if (!is_written(written, i, j)) continue;
      const double x = static_cast<double>(c(i, j)), y = static_cast<double>(c_ref(i, j));
      if (!std::isfinite(x) || !std::isfinite(y)) return std::numeric_limits<double>::infinity();
      diff += (x - y) * (x - y);
      ref += y * y;
    }
  if (diff == 0.0) return 0.0;
  return ref > 0 ? std::sqrt(diff) / (unit_roundoff<T>() * std::sqrt(ref)) : std::numeric_limits<double>::infinity();
}

template <class T>
std::int64_t changed_outside(MatrixView<const T> c0, MatrixView<const T> c, Written written) {
  std::int64_t changed = 0;
  for (std::int64_t j = 0; j < c.cols; ++j)
    for (std::int64_t i = 0; i < c.rows; ++i)
      if (!is_written(written, i, j) && std::memcmp(&c0(i, j), &c(i, j), sizeof(T)) != 0) ++changed;
  return changed;
}

template <class T>
double nonfinite_entries(MatrixView<const T> c) {
  double count = 0;
  for (std::int64_t j = 0; j < c.cols; ++j)
    for (std::int64_t i = 0; i < c.rows; ++i) count += !std::isfinite(static_cast<double>(c(i, j)));
  return count;
}

#define GPUFACT_INSTANTIATE(T)                                                                                   \
  template double sampled_gemm_error<T>(Op, Op, MatrixView<const T>, MatrixView<const T>, MatrixView<const T>, \
                                        MatrixView<const T>, T, T, std::int64_t, std::uint64_t, Written);       \
  template double gemm_difference<T>(Op, Op, MatrixView<const T>, MatrixView<const T>, MatrixView<const T>,    \
                                     MatrixView<const T>, MatrixView<const T>, T, T);                           \
  template double normwise_difference<T>(MatrixView<const T>, MatrixView<const T>, Written);                    \
  template std::int64_t changed_outside<T>(MatrixView<const T>, MatrixView<const T>, Written);                  \
  template double nonfinite_entries<T>(MatrixView<const T>);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact
