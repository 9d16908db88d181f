#include "microbench/gemm/gemm_check.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

namespace gpufact::microbench {

bool is_written(Written w, std::int64_t i, std::int64_t j) {
  return w == Written::all || (w == Written::lower ? i >= j : i <= j);
}

namespace {

// |C − ref| / (ε bound) for one entry; the dot product and its absolute bound in double.
double entry_error(Op ta, Op tb, MatrixView<const float> a, MatrixView<const float> b, MatrixView<const float> c0,
                   MatrixView<const float> c, double alpha, double beta, std::int64_t k, std::int64_t i,
                   std::int64_t j) {
  double dot = 0.0, abs_dot = 0.0;
  for (std::int64_t l = 0; l < k; ++l) {
    const double x = ta == Op::N ? a(i, l) : a(l, i);
    const double y = tb == Op::N ? b(l, j) : b(j, l);
    dot += x * y;
    abs_dot += std::abs(x * y);
  }
  const double old = beta != 0.0 ? static_cast<double>(c0(i, j)) : 0.0;
  const double ref = alpha * dot + beta * old;
  const double bound = std::abs(alpha) * abs_dot + std::abs(beta) * std::abs(old);
  const double v = c(i, j);
  if (!std::isfinite(v)) return std::numeric_limits<double>::infinity();
  const double diff = std::abs(v - ref);
  if (diff == 0.0) return 0.0;
  const double scale = bound * unit_roundoff<float>();
  return scale > 0 ? diff / scale : std::numeric_limits<double>::infinity();
}

}  // namespace

double sampled_gemm_error(Op ta, Op tb, MatrixView<const float> a, MatrixView<const float> b,
                          MatrixView<const float> c0, MatrixView<const float> c, float alpha, float beta,
                          Written written, std::int64_t samples, std::uint64_t seed) {
  const std::int64_t m = c.rows, n = c.cols, k = ta == Op::N ? a.cols : a.rows;
  if ((ta == Op::N ? a.rows : a.cols) != m || (tb == Op::N ? b.cols : b.rows) != n ||
      (tb == Op::N ? b.rows : b.cols) != k || c0.rows != m || c0.cols != n)
    throw std::invalid_argument("sampled_gemm_error: inconsistent shapes");
  if (written != Written::all && m != n) throw std::invalid_argument("sampled_gemm_error: a triangle needs square C");
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
  std::uniform_int_distribution<std::int64_t> row(0, m - 1), col(0, n - 1);
  for (std::int64_t s = 0; s < samples;) {
    std::int64_t i = row(gen), j = col(gen);
    if (!is_written(written, i, j)) std::swap(i, j);  // the mirror entry is in the triangle
    worst = std::max(worst, entry_error(ta, tb, a, b, c0, c, alpha, beta, k, i, j));
    ++s;
  }
  return worst;
}

double normwise_difference(MatrixView<const float> c, MatrixView<const float> c_ref, Written written) {
  if (c.rows != c_ref.rows || c.cols != c_ref.cols) throw std::invalid_argument("normwise_difference: shapes differ");
  double diff = 0.0, ref = 0.0;
  for (std::int64_t j = 0; j < c.cols; ++j)
    for (std::int64_t i = 0; i < c.rows; ++i) {
      if (!is_written(written, i, j)) continue;
      const double x = c(i, j), y = c_ref(i, j);
      if (!std::isfinite(x) || !std::isfinite(y)) return std::numeric_limits<double>::infinity();
      diff += (x - y) * (x - y);
      ref += y * y;
    }
  if (diff == 0.0) return 0.0;
  return ref > 0 ? std::sqrt(diff) / (unit_roundoff<float>() * std::sqrt(ref)) : std::numeric_limits<double>::infinity();
}

std::int64_t changed_outside(MatrixView<const float> c0, MatrixView<const float> c, Written written) {
  std::int64_t changed = 0;
  for (std::int64_t j = 0; j < c.cols; ++j)
    for (std::int64_t i = 0; i < c.rows; ++i)
      if (!is_written(written, i, j) && std::memcmp(&c0(i, j), &c(i, j), sizeof(float)) != 0) ++changed;
  return changed;
}

}  // namespace gpufact::microbench
