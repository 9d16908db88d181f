// Test matrices for the tall-skinny QR experiments (anderson10 §V; the conditioning sweep), made
// on the host and checked there before any upload.
#pragma once

#include "core/linalg/matrix_view.hpp"

#include <cstdint>

namespace gpufact::factorizations {

// Uniform entries in [−1, 1) (the paper's random test matrices).
template <class T>
void fill_qr_uniform(MatrixView<T> a, std::uint64_t seed);

// A = U Σ Vᵀ with singular values geometrically spaced from 1 down to 1/kappa: U (m × n) and
// V (n × n) are the orthonormal factors of Gaussian matrices' QR. Generated in double and rounded
// to T, so in FP32 the rounding itself bounds the κ actually reached (about 1/ε₃₂ ≈ 10⁷).
// Needs m >= n >= 1 and kappa >= 1.
template <class T>
void fill_qr_conditioned(MatrixView<T> a, double kappa, std::uint64_t seed);

// Throws std::invalid_argument naming the first NaN or Inf entry (row, column) of a.
template <class T>
void require_finite(MatrixView<const T> a, const char* what);

// 2-norm condition number σ_max / σ_min from gesvd (small sizes; a is copied).
template <class T>
double condition_number(MatrixView<const T> a);

}  // namespace gpufact::factorizations
