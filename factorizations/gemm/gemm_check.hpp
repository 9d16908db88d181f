// GEMM checks for sizes where gemm_error's full double-precision reference (two host dgemms and
// six double copies) is too slow or too big:
//   sampled_gemm_error: gemm_error's componentwise measure (units of ε, rigorous bound k + 2) on
//     `samples` random entries, each an exact-enough dot product in long double on the host;
//   gemm_difference: every entry of C against a second computation (cuBLAS), scaled by what
//     rounding can do to it: max |C − C₂|ᵢⱼ / (ε (|α| ‖op(A)ᵢ,:‖₂ ‖op(B):,ⱼ‖₂ + |β| |C₀ᵢⱼ|)).
//     Since (|A||B|)ᵢⱼ ≤ ‖Aᵢ‖‖Bⱼ‖ it is rigorously below 2(k + 2); rounding errors of random
//     data stay O(1) in these units, so gemm_difference_tolerance caps the bound at 64, which
//     still flags any entry wrong by more than about 64 ε ‖Aᵢ‖‖Bⱼ‖.
// NaN or Inf in C gives +inf. c0 is only read when β ≠ 0.
#pragma once

#include "core/linalg/blas_types.hpp"
#include "core/linalg/matrix_view.hpp"

#include <cstdint>

namespace gpufact::factorizations {

template <class T>
double sampled_gemm_error(Op ta, Op tb, MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> c0,
                          MatrixView<const T> c, T alpha, T beta, int samples, std::uint64_t seed);

template <class T>
double gemm_difference(Op ta, Op tb, MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> c0,
                       MatrixView<const T> c, MatrixView<const T> c2, T alpha, T beta);

inline double gemm_difference_tolerance(std::int64_t k) {
  const double rigorous = 2.0 * (static_cast<double>(k) + 2.0);
  return rigorous < 64.0 ? rigorous : 64.0;
}

// Entries of C that are NaN or infinite.
template <class T>
double nonfinite_entries(MatrixView<const T> c);

}  // namespace gpufact::factorizations
