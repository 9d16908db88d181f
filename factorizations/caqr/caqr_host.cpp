#include "factorizations/caqr/caqr_host.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gpufact::factorizations {
namespace {

template <class T>
MatrixView<T> sub(MatrixView<T> a, std::int64_t r0, std::int64_t c0, std::int64_t rows, std::int64_t cols) {
  return {a.data + r0 + c0 * a.ld, rows, cols, a.ld, Layout::col_major};
}

// LAPACK larfg on x[0..len): x[0] = α becomes β, x[1..] becomes v(2..); returns τ. Σx² without
// scaling, as the GPU kernels do (inputs near overflow are outside this reference's range).
template <class T>
T householder(T* x, std::int64_t stride, std::int64_t len) {
  T ss = T(0);
  for (std::int64_t i = 1; i < len; ++i) ss += x[i * stride] * x[i * stride];
  if (ss == T(0)) return T(0);
  const T alpha = x[0];
  const T beta = -std::copysign(std::sqrt(alpha * alpha + ss), alpha);
  const T tau = (beta - alpha) / beta, scal = T(1) / (alpha - beta);
  for (std::int64_t i = 1; i < len; ++i) x[i * stride] *= scal;
  x[0] = beta;
  return tau;
}

// Applies reflectors j (v(j) = 1 implicit, v below row j in column j of `v`) to C.
template <class T>
void apply_reflectors(MatrixView<const T> v, std::int64_t k, const T* tau, MatrixView<T> c, bool transpose) {
  for (std::int64_t step = 0; step < k; ++step) {
    const std::int64_t j = transpose ? step : k - 1 - step;
    const T t = tau[j];
    if (t == T(0)) continue;
    for (std::int64_t col = 0; col < c.cols; ++col) {
      T dot = c(j, col);
      for (std::int64_t i = j + 1; i < c.rows; ++i) dot += v(i, j) * c(i, col);
      const T td = t * dot;
      c(j, col) -= td;
      for (std::int64_t i = j + 1; i < c.rows; ++i) c(i, col) -= td * v(i, j);
    }
  }
}

// Householder QR of s in place (geqr2); tau[j] for j < min(rows, cols).
template <class T>
void geqr2(MatrixView<T> s, T* tau) {
  const std::int64_t k = std::min(s.rows, s.cols);
  for (std::int64_t j = 0; j < k; ++j) {
    tau[j] = householder(&s(j, j), 1, s.rows - j);
    if (j + 1 < s.cols)
      apply_reflectors<T>(sub<const T>(s, j, j, s.rows - j, 1), 1, &tau[j], sub(s, j, j + 1, s.rows - j, s.cols - j - 1),
                          true);
  }
}

struct NodeChildren {
  std::int64_t first = 0, count = 0;
};
NodeChildren children_of(const CaqrTreeLevel& l, int fan_in, std::int64_t node) {
  const std::int64_t first = node * fan_in;
  return {first, std::min<std::int64_t>(fan_in, l.children - first)};
}
std::int64_t child_rows(const CaqrTreeLevel& l, std::int64_t child, std::int64_t w) {
  return child == l.children - 1 ? l.last_child_rows : w;
}

// The matrix rows of a node's stacked R's, in stack order.
std::vector<std::int64_t> stack_rows(const CaqrPanel& p, const CaqrTreeLevel& l, int fan_in, std::int64_t node) {
  const auto ch = children_of(l, fan_in, node);
  std::vector<std::int64_t> rows;
  for (std::int64_t c = 0; c < ch.count; ++c) {
    const std::int64_t base = p.col0 + (ch.first + c) * l.child_stride;
    for (std::int64_t r = 0; r < child_rows(l, ch.first + c, p.width); ++r) rows.push_back(base + r);
  }
  return rows;
}

// Whether a (stack row, column) position of a node lies in the pattern its R's and reflectors
// occupy: child 0's upper triangle and the other children's upper trapezoids (caqr_schedule.hpp).
// Every child but the level's last has w rows, so the row within its child is stack_row mod w.
bool in_stack_pattern(std::int64_t stack_row, std::int64_t col, std::int64_t w) { return stack_row % w <= col; }

// The node's reflectors as a dense K×w matrix (explicit zeros outside the pattern).
template <class T>
HostMatrix<T> tree_reflectors(MatrixView<const T> a, const CaqrPanel& p, const CaqrTreeLevel& l, int fan_in,
                              std::int64_t node) {
  const auto rows = stack_rows(p, l, fan_in, node);
  const std::int64_t K = static_cast<std::int64_t>(rows.size()), w = p.width;
  HostMatrix<T> v(K, w);
  for (std::int64_t j = 0; j < w; ++j)
    for (std::int64_t s = 0; s < K; ++s)
      v(s, j) = s < w ? (s == j ? T(1) : T(0)) : (in_stack_pattern(s, j, w) ? a(rows[s], p.col0 + j) : T(0));
  return v;
}

template <class T>
void factor_blocks(MatrixView<T> a, const CaqrSchedule& s, const CaqrPanel& p, T* tau) {
  const std::int64_t br = s.shape.rows, w = p.width;
  for (std::int64_t b = 0; b < p.blocks; ++b) {
    const std::int64_t rows = b + 1 == p.blocks ? p.last_block_rows : br;
    geqr2(sub(a, p.col0 + b * br, p.col0, rows, w), tau + p.tau_offset + b * s.shape.cols);
  }
}

template <class T>
void factor_tree_level(MatrixView<T> a, const CaqrSchedule& s, const CaqrPanel& p, const CaqrTreeLevel& l, T* tau) {
  const std::int64_t w = p.width;
  for (std::int64_t node = 0; node < l.nodes; ++node) {
    if (children_of(l, s.fan_in, node).count < 2) continue;
    const auto rows = stack_rows(p, l, s.fan_in, node);
    const std::int64_t K = static_cast<std::int64_t>(rows.size());
    HostMatrix<T> st(K, w);
    for (std::int64_t j = 0; j < w; ++j)
      for (std::int64_t r = 0; r < K; ++r) st(r, j) = in_stack_pattern(r, j, w) ? a(rows[r], p.col0 + j) : T(0);
    geqr2(st.view(), tau + l.tau_offset + node * s.shape.cols);
    for (std::int64_t j = 0; j < w; ++j)
      for (std::int64_t r = 0; r < K; ++r)
        if (in_stack_pattern(r, j, w)) a(rows[r], p.col0 + j) = st(r, j);
  }
}

template <class T>
void factor_panel(MatrixView<T> a, const CaqrSchedule& s, const CaqrPanel& p, T* tau) {
  factor_blocks(a, s, p, tau);
  for (const auto& l : p.levels) factor_tree_level(a, s, p, l, tau);
}

template <class T>
void apply_blocks(MatrixView<const T> a, const CaqrSchedule& s, const CaqrPanel& p, const T* tau, MatrixView<T> c,
                  std::int64_t c_begin, std::int64_t c_end, bool transpose) {
  const std::int64_t br = s.shape.rows, w = p.width, cols = c_end - c_begin;
  for (std::int64_t b = 0; b < p.blocks; ++b) {
    const std::int64_t r0 = p.col0 + b * br, rows = b + 1 == p.blocks ? p.last_block_rows : br;
    apply_reflectors(sub(a, r0, p.col0, rows, w), std::min(rows, w), tau + p.tau_offset + b * s.shape.cols,
                     sub(c, r0, c_begin, rows, cols), transpose);
  }
}

template <class T>
void apply_tree_level(MatrixView<const T> a, const CaqrSchedule& s, const CaqrPanel& p, const CaqrTreeLevel& l,
                      const T* tau, MatrixView<T> c, std::int64_t c_begin, std::int64_t c_end, bool transpose) {
  const std::int64_t w = p.width, cols = c_end - c_begin;
  for (std::int64_t node = 0; node < l.nodes; ++node) {
    if (children_of(l, s.fan_in, node).count < 2) continue;
    const auto rows = stack_rows(p, l, s.fan_in, node);
    const std::int64_t K = static_cast<std::int64_t>(rows.size());
    const HostMatrix<T> v = tree_reflectors(a, p, l, s.fan_in, node);
    HostMatrix<T> g(K, cols);
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t r = 0; r < K; ++r) g(r, j) = c(rows[r], c_begin + j);
    apply_reflectors(v.view(), w, tau + l.tau_offset + node * s.shape.cols, g.view(), transpose);
    for (std::int64_t j = 0; j < cols; ++j)
      for (std::int64_t r = 0; r < K; ++r) c(rows[r], c_begin + j) = g(r, j);
  }
}

// Applies panel p's Qᵀ (blocks, then tree levels bottom-up) or Q (the reverse) to rows
// [p.col0, m) of C's columns [c_begin, c_end); C's row i is the matrix's row i.
template <class T>
void apply_panel(MatrixView<const T> a, const CaqrSchedule& s, const CaqrPanel& p, const T* tau, MatrixView<T> c,
                 std::int64_t c_begin, std::int64_t c_end, bool transpose) {
  if (c_end <= c_begin) return;
  if (transpose) {
    apply_blocks(a, s, p, tau, c, c_begin, c_end, true);
    for (const auto& l : p.levels) apply_tree_level(a, s, p, l, tau, c, c_begin, c_end, true);
  } else {
    for (auto l = p.levels.rbegin(); l != p.levels.rend(); ++l) apply_tree_level(a, s, p, *l, tau, c, c_begin, c_end, false);
    apply_blocks(a, s, p, tau, c, c_begin, c_end, false);
  }
}

template <class T>
void require_shape(MatrixView<const T> a, const CaqrSchedule& s, const char* what) {
  if (a.rows != s.m || a.cols != s.n || a.layout != Layout::col_major || a.ld < std::max<std::int64_t>(a.rows, 1))
    throw std::invalid_argument(std::string(what) + ": A must be a column-major " + std::to_string(s.m) + "×" +
                                std::to_string(s.n) + " matrix with ld >= m");
}

}  // namespace

template <class T>
std::vector<T> caqr_host_factor(MatrixView<T> a, const CaqrSchedule& s) {
  require_shape<T>(a, s, "caqr_host_factor");
  std::vector<T> tau(static_cast<std::size_t>(s.tau_count), T(0));
  for (const auto& p : s.panels) {
    factor_panel(a, s, p, tau.data());
    apply_panel<T>(a, s, p, tau.data(), a, p.col0 + p.width, s.n, true);
  }
  return tau;
}

template <class T>
void caqr_host_form_q(MatrixView<const T> a, const CaqrSchedule& s, const T* tau, MatrixView<T> q) {
  require_shape<T>(a, s, "caqr_host_form_q");
  if (q.rows != s.m || q.cols != s.n) throw std::invalid_argument("caqr_host_form_q: Q must be m×n");
  for (std::int64_t j = 0; j < s.n; ++j)
    for (std::int64_t i = 0; i < s.m; ++i) q(i, j) = i == j ? T(1) : T(0);
  // Columns left of a panel are still unit vectors above its rows, so each panel only touches
  // its own and later columns (orgqr's saving).
  for (auto p = s.panels.rbegin(); p != s.panels.rend(); ++p) apply_panel<T>(a, s, *p, tau, q, p->col0, s.n, false);
}

template <class T>
void caqr_host_apply_q(MatrixView<const T> a, const CaqrSchedule& s, const T* tau, MatrixView<T> c, bool transpose) {
  require_shape<T>(a, s, "caqr_host_apply_q");
  if (c.rows != s.m) throw std::invalid_argument("caqr_host_apply_q: C must have m rows");
  if (transpose)
    for (const auto& p : s.panels) apply_panel<T>(a, s, p, tau, c, 0, c.cols, true);
  else
    for (auto p = s.panels.rbegin(); p != s.panels.rend(); ++p) apply_panel<T>(a, s, *p, tau, c, 0, c.cols, false);
}

template <class T>
void caqr_host_step(MatrixView<T> a, const CaqrSchedule& s, int panel, int level, T* tau) {
  require_shape<T>(a, s, "caqr_host_step");
  const CaqrPanel& p = s.panels.at(static_cast<std::size_t>(panel));
  if (level == 0)
    factor_blocks(a, s, p, tau);
  else
    factor_tree_level(a, s, p, p.levels.at(static_cast<std::size_t>(level - 1)), tau);
}

template <class T>
void caqr_host_apply_step(MatrixView<const T> a, const CaqrSchedule& s, int panel, int level, const T* tau,
                          MatrixView<T> c, std::int64_t c_begin, std::int64_t c_end, bool transpose) {
  require_shape<T>(a, s, "caqr_host_apply_step");
  const CaqrPanel& p = s.panels.at(static_cast<std::size_t>(panel));
  if (c_end <= c_begin) return;
  if (level == 0)
    apply_blocks(a, s, p, tau, c, c_begin, c_end, transpose);
  else
    apply_tree_level(a, s, p, p.levels.at(static_cast<std::size_t>(level - 1)), tau, c, c_begin, c_end, transpose);
}

template <class T>
HostMatrix<T> caqr_extract_r(MatrixView<const T> a) {
  const std::int64_t n = a.cols;
  HostMatrix<T> r(n, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j && i < a.rows; ++i) r(i, j) = a(i, j);
  return r;
}

template <class T>
std::vector<CaqrReflectorSet<T>> caqr_lapack_reflectors(MatrixView<const T> a, const CaqrSchedule& s, const T* tau) {
  require_shape<T>(a, s, "caqr_lapack_reflectors");
  std::vector<CaqrReflectorSet<T>> out;
  const std::int64_t br = s.shape.rows;
  for (std::size_t pi = 0; pi < s.panels.size(); ++pi) {
    const CaqrPanel& p = s.panels[pi];
    const std::int64_t w = p.width;
    for (std::int64_t b = 0; b < p.blocks; ++b) {
      CaqrReflectorSet<T> e;
      e.panel = static_cast<int>(pi);
      e.node = b;
      e.col0 = p.col0;
      const std::int64_t r0 = p.col0 + b * br, rows = b + 1 == p.blocks ? p.last_block_rows : br, k = std::min(rows, w);
      for (std::int64_t r = 0; r < rows; ++r) e.rows.push_back(r0 + r);
      e.v = HostMatrix<T>(rows, k);
      for (std::int64_t j = 0; j < k; ++j)
        for (std::int64_t r = 0; r < rows; ++r) e.v(r, j) = r < j ? T(0) : (r == j ? T(1) : a(r0 + r, p.col0 + j));
      const T* t = tau + p.tau_offset + b * s.shape.cols;
      e.tau.assign(t, t + k);
      out.push_back(std::move(e));
    }
    for (std::size_t li = 0; li < p.levels.size(); ++li) {
      const CaqrTreeLevel& l = p.levels[li];
      for (std::int64_t node = 0; node < l.nodes; ++node) {
        if (children_of(l, s.fan_in, node).count < 2) continue;
        CaqrReflectorSet<T> e;
        e.panel = static_cast<int>(pi);
        e.level = static_cast<int>(li) + 1;
        e.node = node;
        e.col0 = p.col0;
        e.rows = stack_rows(p, l, s.fan_in, node);
        e.v = tree_reflectors(a, p, l, s.fan_in, node);
        const T* t = tau + l.tau_offset + node * s.shape.cols;
        e.tau.assign(t, t + w);
        out.push_back(std::move(e));
      }
    }
  }
  return out;
}

#define GPUFACT_INSTANTIATE_CAQR_HOST(T)                                                                        \
  template std::vector<T> caqr_host_factor<T>(MatrixView<T>, const CaqrSchedule&);                              \
  template void caqr_host_form_q<T>(MatrixView<const T>, const CaqrSchedule&, const T*, MatrixView<T>);          \
  template void caqr_host_apply_q<T>(MatrixView<const T>, const CaqrSchedule&, const T*, MatrixView<T>, bool);   \
  template HostMatrix<T> caqr_extract_r<T>(MatrixView<const T>);                                                 \
  template void caqr_host_step<T>(MatrixView<T>, const CaqrSchedule&, int, int, T*);                             \
  template void caqr_host_apply_step<T>(MatrixView<const T>, const CaqrSchedule&, int, int, const T*, MatrixView<T>, \
                                        std::int64_t, std::int64_t, bool);                                       \
  template std::vector<CaqrReflectorSet<T>> caqr_lapack_reflectors<T>(MatrixView<const T>, const CaqrSchedule&, \
                                                                       const T*);
GPUFACT_INSTANTIATE_CAQR_HOST(float)
GPUFACT_INSTANTIATE_CAQR_HOST(double)
#undef GPUFACT_INSTANTIATE_CAQR_HOST

}  // namespace gpufact::factorizations
