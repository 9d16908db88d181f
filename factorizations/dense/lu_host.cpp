#include "factorizations/dense/lu_host.hpp"

#include "core/linalg/host_blas.hpp"
#include "factorizations/dense/input_check.hpp"
#include "factorizations/dense/lu_schedule.hpp"

#include <stdexcept>
#include <vector>

namespace gpufact::dense {
namespace {

// U12 = inv(L11) · A12 for L11 = rows/columns [k0, k1), A12 = rows [k0, k1) × columns [c0, c1).
template <class T>
void solve_u12(T* a, std::int64_t lda, std::int64_t k0, std::int64_t k1, std::int64_t c0, std::int64_t c1,
               bool inverse) {
  const std::int64_t w = k1 - k0, cols = c1 - c0;
  if (w == 0 || cols <= 0) return;
  T* l11 = a + k0 + k0 * lda;
  T* a12 = a + k0 + c0 * lda;
  if (!inverse) {
    host::trsm(Side::left, Uplo::lower, Op::N, Diag::unit, w, cols, T(1), l11, lda, a12, lda);
    return;
  }
  std::vector<T> linv(static_cast<std::size_t>(w * w)), copy(static_cast<std::size_t>(w * cols));
  unit_lower_inverse(w, l11, lda, linv.data());
  host::lacpy(w, cols, a12, lda, copy.data(), w);
  host::gemm(Op::N, Op::N, w, cols, w, T(1), linv.data(), w, copy.data(), w, T(0), a12, lda);
}

// A22 -= L21 · U12: rows [k1, m), columns [c0, c1), inner dimension [k0, k1).
template <class T>
void update_a22(T* a, std::int64_t lda, std::int64_t m, std::int64_t k0, std::int64_t k1, std::int64_t c0,
                std::int64_t c1) {
  if (m <= k1 || c1 <= c0 || k1 <= k0) return;
  host::gemm(Op::N, Op::N, m - k1, c1 - c0, k1 - k0, T(-1), a + k1 + k0 * lda, lda, a + k0 + c0 * lda, lda, T(1),
             a + k1 + c0 * lda, lda);
}

}  // namespace

template <class T>
void unit_lower_inverse(std::int64_t w, const T* l, std::int64_t ldl, T* inverse) {
  for (std::int64_t j = 0; j < w; ++j)
    for (std::int64_t i = 0; i < w; ++i) inverse[i + j * w] = i > j ? l[i + j * ldl] : (i == j ? T(1) : T(0));
  if (w == 0) return;
  const int info = host::trtri(Uplo::lower, Diag::unit, w, inverse, w);
  if (info != 0) throw std::runtime_error("trtri of a unit-lower block returned info " + std::to_string(info));
}

template <class T>
int lu_blocked_host(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, int* ipiv, const LuOptions& o) {
  require_finite_matrix("lu_blocked_host", m, n, a, lda);
  int info = 0;
  for (const LuStep& s : lu_schedule(m, n, o)) {
    const std::int64_t w = s.j1 - s.j0;
    const int panel_info = host::getrf(m - s.j0, w, a + s.j0 + s.j0 * lda, lda, ipiv + s.j0);
    if (panel_info < 0) throw std::runtime_error("getrf on a panel returned info " + std::to_string(panel_info));
    if (panel_info > 0 && info == 0) info = static_cast<int>(s.j0) + panel_info;
    for (std::int64_t i = s.j0; i < s.j1; ++i) ipiv[i] += static_cast<int>(s.j0);
    // The panel's interchanges on every other column (the GPU does whole rows at once).
    if (s.j0 > 0) host::laswp(s.j0, a, lda, s.j0 + 1, s.j1, ipiv);
    if (s.j1 < n) host::laswp(n - s.j1, a + s.j1 * lda, lda, s.j0 + 1, s.j1, ipiv);
    solve_u12(a, lda, s.j0, s.j1, s.j1, s.fine_end, o.inverse_trsm);
    update_a22(a, lda, m, s.j0, s.j1, s.j1, s.fine_end);
    if (s.has_coarse()) {
      solve_u12(a, lda, s.coarse_k0, s.j1, s.fine_end, n, o.inverse_trsm);
      update_a22(a, lda, m, s.coarse_k0, s.j1, s.fine_end, n);
    }
  }
  return info;
}

template int lu_blocked_host<float>(std::int64_t, std::int64_t, float*, std::int64_t, int*, const LuOptions&);
template int lu_blocked_host<double>(std::int64_t, std::int64_t, double*, std::int64_t, int*, const LuOptions&);
template void unit_lower_inverse<float>(std::int64_t, const float*, std::int64_t, float*);
template void unit_lower_inverse<double>(std::int64_t, const double*, std::int64_t, double*);

}  // namespace gpufact::dense
