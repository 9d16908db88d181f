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
  double factorization = 0.0;  // ‖A − QR‖₁ / (m ‖A‖₁ ε)
  double orthogonality = 0.0;  // ‖I − QᵀQ‖₁ / (m ε)
};
// qr holds geqrf's output (R on and above the diagonal, Householder vectors below), tau its
// scalars. Forms the economy Q (m × min(m, n)) with orgqr.
template <class T>
QrErrors qr_residual(MatrixView<const T> a, MatrixView<const T> qr, const T* tau);

// The same two errors for an explicit m × n Q and n × n R (only R's upper triangle is read).
template <class T>
QrErrors qr_explicit_residual(MatrixView<const T> a, MatrixView<const T> q, MatrixView<const T> r);

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
