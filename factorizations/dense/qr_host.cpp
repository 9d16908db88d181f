#include "factorizations/dense/qr_host.hpp"

#include "core/linalg/host_blas.hpp"
#include "factorizations/dense/qr_block_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact::dense {
namespace {

void check_sizes(const char* routine, std::int64_t m, std::int64_t n, std::int64_t lda) {
  if (n < 0 || m < n)
    throw std::invalid_argument(std::string(routine) + ": needs m >= n >= 0, got m = " + std::to_string(m) +
                                ", n = " + std::to_string(n));
  if (lda < std::max<std::int64_t>(1, m))
    throw std::invalid_argument(std::string(routine) + ": lda = " + std::to_string(lda) + " < max(1, m)");
}

// T (w × w, ld w) of the panel, zeros below the diagonal so that GEMM may read all of it.
template <class T>
void panel_t(std::int64_t rows, std::int64_t w, const T* panel, std::int64_t ldp, const T* tau, T* t) {
  std::fill(t, t + w * w, T(0));
  host::larft<T>(rows, w, panel, ldp, tau, t, w);
}

// V (zero-filled, m × w), T (w × w) and the GEMM temporaries of apply_block_reflector_host,
// sized for the widest of `steps` on an m × n matrix.
template <class T>
struct ReflectorScratch {
  ReflectorScratch(std::int64_t m, std::int64_t n, const std::vector<QrStep>& steps) {
    std::int64_t widest = 0;
    for (const auto& s : steps) widest = std::max(widest, s.j1 - s.j0);
    v.resize(static_cast<std::size_t>(m * widest));
    t.resize(static_cast<std::size_t>(widest * widest));
    work.resize(static_cast<std::size_t>(2 * widest * std::max<std::int64_t>(n, 1)));
  }
  std::vector<T> v, t, work;
};

}  // namespace

template <class T>
void zero_filled_reflectors(std::int64_t rows, std::int64_t w, const T* panel, std::int64_t ldp, T* v) {
  for (std::int64_t j = 0; j < w; ++j)
    for (std::int64_t i = 0; i < rows; ++i) v[i + j * rows] = i > j ? panel[i + j * ldp] : (i == j ? T(1) : T(0));
}

template <class T>
void apply_block_reflector_host(bool transpose, std::int64_t rows, std::int64_t cols, std::int64_t w, const T* v,
                                const T* t, T* c, std::int64_t ldc, T* work) {
  if (rows == 0 || cols == 0 || w == 0) return;
  T* w1 = work;
  T* w2 = work + w * cols;
  host::gemm<T>(Op::T, Op::N, w, cols, rows, T(1), v, rows, c, ldc, T(0), w1, w);
  host::gemm<T>(transpose ? Op::T : Op::N, Op::N, w, cols, w, T(1), t, w, w1, w, T(0), w2, w);
  host::gemm<T>(Op::N, Op::N, rows, cols, w, T(-1), v, rows, w2, w, T(1), c, ldc);
}

template <class T>
void qr_host_blocked(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* tau,
                     const std::vector<std::int64_t>& widths) {
  check_sizes("qr_host_blocked", m, n, lda);
  const auto steps = qr_steps(n, widths);
  ReflectorScratch<T> scratch(m, n, steps);
  auto& [v, t, work] = scratch;
  for (const auto& s : steps) {
    const std::int64_t rows = m - s.j0, w = s.j1 - s.j0;
    T* panel = a + s.j0 + s.j0 * lda;
    const int info = host::geqrf<T>(rows, w, panel, lda, tau + s.j0);
    if (info != 0) throw std::runtime_error("qr_host_blocked: geqrf on a panel returned info " + std::to_string(info));
    if (s.j1 == n) break;
    panel_t<T>(rows, w, panel, lda, tau + s.j0, t.data());
    zero_filled_reflectors<T>(rows, w, panel, lda, v.data());
    apply_block_reflector_host<T>(true, rows, n - s.j1, w, v.data(), t.data(), a + s.j0 + s.j1 * lda, lda, work.data());
  }
}

template <class T>
void qr_host_form_q(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, const T* tau,
                    const std::vector<std::int64_t>& widths) {
  check_sizes("qr_host_form_q", m, n, lda);
  const auto steps = qr_steps(n, widths);
  ReflectorScratch<T> scratch(m, n, steps);
  auto& [v, t, work] = scratch;
  // Q = H_0 H_1 … [I; 0]: the last block first; block b touches rows and columns from its j0 on,
  // and its own columns start as identity columns once its vectors have been copied out.
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    const std::int64_t rows = m - it->j0, w = it->j1 - it->j0;
    T* panel = a + it->j0 + it->j0 * lda;
    panel_t<T>(rows, w, panel, lda, tau + it->j0, t.data());
    zero_filled_reflectors<T>(rows, w, panel, lda, v.data());
    for (std::int64_t j = it->j0; j < it->j1; ++j)
      for (std::int64_t i = 0; i < m; ++i) a[i + j * lda] = i == j ? T(1) : T(0);
    apply_block_reflector_host<T>(false, rows, n - it->j0, w, v.data(), t.data(), panel, lda, work.data());
  }
}

#define GPUFACT_INSTANTIATE(T)                                                                                        \
  template void qr_host_blocked<T>(std::int64_t, std::int64_t, T*, std::int64_t, T*, const std::vector<std::int64_t>&); \
  template void qr_host_form_q<T>(std::int64_t, std::int64_t, T*, std::int64_t, const T*,                            \
                                  const std::vector<std::int64_t>&);                                                 \
  template void zero_filled_reflectors<T>(std::int64_t, std::int64_t, const T*, std::int64_t, T*);                   \
  template void apply_block_reflector_host<T>(bool, std::int64_t, std::int64_t, std::int64_t, const T*, const T*, T*, \
                                              std::int64_t, T*);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact::dense
