// Host checks of GEMM results too large for gemm_error's full double-precision reference (two
// host dgemms and six double copies; volkov08 §4 experiments):
//   sampled_gemm_error: gemm_error's componentwise measure (units of ε, rigorous bound k + 2) on
//     a sample of entries, each dot product and its bound accumulated in long double;
//   gemm_difference: every entry of C against a second computation (cuBLAS), scaled by what
//     rounding can do to it: max |C − C₂|ᵢⱼ / (ε (|α| ‖op(A)ᵢ,:‖₂ ‖op(B):,ⱼ‖₂ + |β| |C₀ᵢⱼ|)).
//     Since (|A||B|)ᵢⱼ ≤ ‖Aᵢ‖‖Bⱼ‖ it is rigorously below 2(k + 2); rounding errors of random
//     data stay O(1) in these units, so gemm_difference_tolerance caps the bound at 64, which
//     still flags any entry wrong by more than about 64 ε ‖Aᵢ‖‖Bⱼ‖;
//   normwise_difference: ‖C − C_ref‖_F / (ε ‖C_ref‖_F), the cheap whole-matrix cross-check;
//   changed_outside: for block-triangular C (volkov08 §4.2), that nothing outside the triangle
//     changed.
// NaN or Inf in a checked entry of C gives +inf. c0 is only read when β ≠ 0.
#pragma once

#include "core/linalg/blas_types.hpp"
#include "core/linalg/matrix_view.hpp"

#include <cstdint>

namespace gpufact {

// Which entries of C the operation writes: all, or one triangle with its diagonal.
enum class Written { all, lower, upper };

bool is_written(Written w, std::int64_t i, std::int64_t j);

// max over checked (i, j) of |C − (α op(A) op(B) + β C₀)|_ij / (ε (|α| |op(A)| |op(B)| + |β| |C₀|)_ij).
// Rounding alone keeps it below k + 2 (γ_k-style bound, as gemm_error in core/linalg/residual.hpp).
// When `samples` is at least the number of written entries every written entry is checked;
// otherwise `samples` written entries drawn with `seed`. A triangle needs square C.
template <class T>
double sampled_gemm_error(Op ta, Op tb, MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> c0,
                          MatrixView<const T> c, T alpha, T beta, std::int64_t samples, std::uint64_t seed,
                          Written written = Written::all);

template <class T>
double gemm_difference(Op ta, Op tb, MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> c0,
                       MatrixView<const T> c, MatrixView<const T> c2, T alpha, T beta);

inline double gemm_difference_tolerance(std::int64_t k) {
  const double rigorous = 2.0 * (static_cast<double>(k) + 2.0);
  return rigorous < 64.0 ? rigorous : 64.0;
}

// ‖C − C_ref‖_F / (ε ‖C_ref‖_F) over the written entries (0 when both are zero; +inf for NaN/Inf).
// Two correct GEMMs differ by far less than k + 2 in these units; one wrong tile or column
// shows up as a relative difference of order tile/size, i.e. 10⁴–10⁶ in FP32.
template <class T>
double normwise_difference(MatrixView<const T> c, MatrixView<const T> c_ref, Written written = Written::all);

// Entries outside the written part whose bits differ between C₀ and C.
template <class T>
std::int64_t changed_outside(MatrixView<const T> c0, MatrixView<const T> c, Written written);

// Entries of C that are NaN or infinite.
template <class T>
double nonfinite_entries(MatrixView<const T> c);

}  // namespace gpufact
