// The Cholesky test matrix and residual on the GPU, for sizes where the host versions cost
// seconds: the paper's A = 0.001·I + XᵀX (volkov08 §6) with X uniform in [−1, 1] scaled by 1/√n
// (entries O(1) at every n, so the 0.001 shift keeps the condition number near 10³ instead of
// growing with n), and ‖A − LLᵀ‖₁/(n‖A‖₁ε) with cuBLAS in the working precision.
#pragma once

#include "core/linalg/matrix_view.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpufact::dense {

// Device bytes of either function below at order n.
std::size_t cholesky_device_bytes_for_checks(std::int64_t n, std::size_t element_bytes);

// A = 0.001·I + (X/√n)ᵀ(X/√n), full symmetric storage (both triangles, bitwise mirrored), made on
// the GPU from `seed` and copied into the column-major host `a` (n × n).
template <class T>
void make_spd_test_matrix(MatrixView<T> a, std::uint64_t seed, cudaStream_t stream);

// ‖A − LLᵀ‖₁/(n‖A‖₁ε): a the symmetric input (both triangles), l potrf's output (lower triangle
// read, upper ignored), both column-major on the host. NaN in the factor gives +inf.
template <class T>
double cholesky_residual_device(MatrixView<const T> a, MatrixView<const T> l, cudaStream_t stream);

}  // namespace gpufact::dense
