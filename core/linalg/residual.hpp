// Scaled residuals that decide pass/fail (MAGMA testers' convention: a run passes when the
// scaled residual is below a small multiple of 1, typically 30). All are computed in the
// working precision with BLAS3, as MAGMA does, on column-major host matrices.
#pragma once

#include "core/linalg/matrix_view.hpp"

namespace gpufact {

// ‖PA − LU‖₁ / (n ‖A‖₁ ε); lu holds getrf's output (unit-lower L below the diagonal, U on and
// above), ipiv LAPACK's 1-based row interchanges. n = number of columns of A.
template <class T>
double lu_residual(MatrixView<const T> a, MatrixView<const T> lu, const int* ipiv);

// ‖A − LLᵀ‖₁ / (n ‖A‖₁ ε); l holds potrf's lower factor (the upper triangle is ignored).
template <class T>
double cholesky_residual(MatrixView<const T> a, MatrixView<const T> l);

struct QrErrors {
  double factorization = 0.0;  // ‖A − QR‖₁ / (m ‖A‖₁ ε)   (qr_explicit_residual: ‖A − QR‖₁ / ‖A‖₁)
  double orthogonality = 0.0;  // ‖I − QᵀQ‖₁ / (m ε)        (qr_explicit_residual: ‖I − QᵀQ‖₁)
  double orthogonality_2 = 0.0;  // qr_explicit_residual only: ‖I − QᵀQ‖₂ (symmetric_norm2)
};
// qr holds geqrf's output (R on and above the diagonal, Householder vectors below), tau its
// scalars. Forms the economy Q (m × min(m, n)) with orgqr.
template <class T>
QrErrors qr_residual(MatrixView<const T> a, MatrixView<const T> qr, const T* tau);

// Unscaled ‖A − QR‖₁ / ‖A‖₁ and ‖I − QᵀQ‖₁ for an explicit Q (m × n) and R (n × n; only its upper
// triangle is read), computed in double precision whatever T is, with QᵀQ summed pairwise over
// row chunks, so the check's own rounding stays far below the ε of T even for m = 10⁶ in FP64.
// Callers scale by √n·ε of their own precision (the anderson10 pass rule is ≤ 10 √n ε).
template <class T>
QrErrors qr_explicit_residual(MatrixView<const T> a, MatrixView<const T> q, MatrixView<const T> r);

// ‖E‖₂ of a symmetric n × n matrix given by its lower triangle: the largest |Ritz value| of
// Lanczos with full reorthogonalization from a fixed pseudo-random start, at most 128 steps.
// Exact (to rounding) when the Krylov space closes first, as it does by n steps; for larger n the
// extreme Ritz values approach the extreme eigenvalues from inside: 1.4e-6 short, relatively, for
// 3000 eigenvalues spread evenly (no gap at the end), at once for an isolated one.
double symmetric_norm2(MatrixView<const double> lower);

// out (n × n) ← the lower triangle of XᵀX for the m × n matrix x, summed pairwise over chunks of
// 4096 rows: the rounding error grows with log(m), not with m. For LAPACK's FP64 Q of two uniform
// random 10⁶ × 10 matrices, one dsyrk over every row gave ‖I − QᵀQ‖₂ = 13.3 and 5.1 √n ε where
// exact products and sums give 1.28 and 1.58; pairwise sums gave 1.59 for the second.
void pairwise_gram(const HostMatrix<double>& x, HostMatrix<double>& out);

// ‖I − QᵀQ‖₁ / (m ε) for an explicit m × n Q with orthonormal columns.
template <class T>
double orthogonality_error(MatrixView<const T> q);

// GEMM error against the componentwise rounding bound, in units of ε:
//   max_ij |C − (α op(A) op(B) + β C₀)|_ij / (ε (|α| |op(A)| |op(B)| + |β| |C₀|)_ij),
// with the reference and the bound computed in double precision (two host dgemms). Rounding
// alone keeps it below k + 2 for any summation order; one element off by a fraction of its bound
// pushes it far above. ta/tb are 'N' or 'T'. NaN or Inf in C gives +inf.
template <class T>
double gemm_error(char ta, char tb, MatrixView<const T> a, MatrixView<const T> b, MatrixView<const T> c0,
                  MatrixView<const T> c, T alpha, T beta);

}  // namespace gpufact
