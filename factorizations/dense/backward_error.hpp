// volkov08.accuracy: the backward error of a finished factorization, with the residual formed in
// double on the GPU from the working-precision factors (so an FP32 residual's own rounding does
// not blur the comparison between methods), reported two ways:
//   the paper's   ‖A − product‖max / (ε ‖A‖max), ε = machine epsilon (2⁻²³ in FP32; volkov08 §6
//                 found about 2000 for LU, 200 for QR, 17 for Cholesky at n = 8192), and
//   MAGMA's       ‖A − product‖₁ / (n ‖A‖₁ ε).
#pragma once

#include "core/linalg/matrix_view.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpufact::dense {

struct BackwardError {
  double residual_max = 0, residual_one = 0;  // ‖A − product‖max, ‖A − product‖₁
  double a_max = 0, a_one = 0;                // ‖A‖max, ‖A‖₁
  double epsilon = 0;                          // machine epsilon of the working precision
  std::int64_t n = 0;                          // columns (MAGMA's n)
  double in_max_units() const;                 // ‖A − product‖max / (ε ‖A‖max)
  double magma() const;                        // ‖A − product‖₁ / (n ‖A‖₁ ε)
};

// Device bytes the checks below need for an m × n problem (A, the two factors and the product in
// double).
std::size_t backward_error_device_bytes(std::int64_t m, std::int64_t n);

// PA − LU; lu and ipiv (1-based) as getrf leaves them; everything on the host, column-major.
template <class T>
BackwardError lu_backward_error(MatrixView<const T> a, MatrixView<const T> lu, const int* ipiv, cudaStream_t stream);
// A − LLᵀ; l: potrf's output (lower triangle referenced).
template <class T>
BackwardError cholesky_backward_error(MatrixView<const T> a, MatrixView<const T> l, cudaStream_t stream);
// A − QR; r: geqrf's output (upper triangle referenced), q: the explicit m × n Q.
template <class T>
BackwardError qr_backward_error(MatrixView<const T> a, MatrixView<const T> r, MatrixView<const T> q,
                                cudaStream_t stream);

}  // namespace gpufact::dense
