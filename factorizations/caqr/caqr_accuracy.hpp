// The acceptance test of issue 6: ‖A − QR‖₂/‖A‖₂ and ‖I − QᵀQ‖₂, each in units of √n·ε, must be
// ≤ 10. Spectral norms (the norm that bound is natural in: an n × n matrix of independent O(ε)
// errors has 2-norm O(√n ε), its 1-norm O(n ε)), computed in double precision by Lanczos
// (symmetric_norm2, core/linalg/residual.hpp) on n × n symmetric matrices: I − QᵀQ itself, and
// the Gram matrices of A and of A − QR.
#pragma once

#include "core/linalg/matrix_view.hpp"

namespace gpufact::factorizations {

struct QrAccuracy {
  double factorization = 0;  // ‖A − QR‖₂ / (‖A‖₂ √n ε)
  double orthogonality = 0;  // ‖I − QᵀQ‖₂ / (√n ε)
};

// A and Q m × n, R n × n (upper triangle read). NaN/Inf anywhere gives +inf.
template <class T>
QrAccuracy qr_accuracy(MatrixView<const T> a, MatrixView<const T> q, MatrixView<const T> r);

// Max |x − y| over x's entries (y at least as large), in units of scale·ε with ε the unit
// roundoff of T; NaN/Inf in a difference gives +inf.
template <class T>
double max_difference_eps(const HostMatrix<T>& x, const HostMatrix<T>& y, double scale = 1.0);

}  // namespace gpufact::factorizations
