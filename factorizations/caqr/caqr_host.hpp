// CAQR on the host: the same blocks, tree and reflector order as the GPU plan (caqr.hpp), in
// plain loops, as the reference the GPU results are checked against (DESIGN.md "Testing").
// Householder convention: LAPACK's (H = I − τ v vᵀ, v(1) = 1, β = −sign(α)‖x‖); a column with
// nothing below its diagonal entry gets τ = 0, so rank-deficient input still gives a valid QR.
#pragma once

#include "core/linalg/matrix_view.hpp"
#include "factorizations/caqr/caqr_schedule.hpp"

#include <cstdint>
#include <vector>

namespace gpufact::factorizations {

// Factors the m×n column-major A in place (R on and above the diagonal of each panel's first
// block, the Householder vectors in the tree layout of caqr_schedule.hpp). Returns the taus
// (s.tau_count entries; unused entries 0). A must be s.m × s.n.
template <class T>
std::vector<T> caqr_host_factor(MatrixView<T> a, const CaqrSchedule& s);

// The explicit m×n Q (orgqr semantics: the first n columns of Q₀Q₁…) from caqr_host_factor's output.
template <class T>
void caqr_host_form_q(MatrixView<const T> a, const CaqrSchedule& s, const T* tau, MatrixView<T> q);

// Applies Qᵀ (transpose) or Q of the whole factorization to the m×k matrix C.
template <class T>
void caqr_host_apply_q(MatrixView<const T> a, const CaqrSchedule& s, const T* tau, MatrixView<T> c, bool transpose);

// One kernel's worth of the algorithm, for checking the GPU kernels one at a time. level 0: the
// first-level blocks of panel `panel` (factor / apply_qt_h); level ℓ ≥ 1: tree level ℓ
// (factor_tree / apply_qt_tree). The apply step acts on rows [col0, m) of C's columns
// [c_begin, c_end); C's row i is the matrix's row i.
template <class T>
void caqr_host_step(MatrixView<T> a, const CaqrSchedule& s, int panel, int level, T* tau);
template <class T>
void caqr_host_apply_step(MatrixView<const T> a, const CaqrSchedule& s, int panel, int level, const T* tau,
                          MatrixView<T> c, std::int64_t c_begin, std::int64_t c_end, bool transpose);

// The n×n upper triangle R (zeros below).
template <class T>
HostMatrix<T> caqr_extract_r(MatrixView<const T> a);

// The tree representation in LAPACK layout: one entry per first-level block and per tree node
// with reflectors. `v` is a rows.size() × k matrix in geqrf layout (v(j) = 1 on the diagonal,
// stored explicitly; zeros above; the vector below), `tau` its k scalars, `rows` the matrix rows
// (0-based) it acts on and [col0, col0 + k) the columns it was computed from. Qᵀ of the whole
// factorization is the product of the entries' Hᵀ in list order: for each entry, gather `rows`
// of C, apply ormqr('L', 'T') with (v, tau), scatter back (Q: reverse order, ormqr 'N').
template <class T>
struct CaqrReflectorSet {
  int panel = 0;
  int level = 0;  // 0: first-level block; ≥ 1: tree level
  std::int64_t node = 0;
  std::int64_t col0 = 0;
  std::vector<std::int64_t> rows;
  HostMatrix<T> v;
  std::vector<T> tau;
};
template <class T>
std::vector<CaqrReflectorSet<T>> caqr_lapack_reflectors(MatrixView<const T> a, const CaqrSchedule& s, const T* tau);

}  // namespace gpufact::factorizations
