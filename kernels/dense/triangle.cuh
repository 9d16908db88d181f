// Triangle helpers of the dense Cholesky (factorizations/dense/cholesky_*.hpp): the test matrix
// made symmetric, the factor's strict upper triangle cleared for the device residual, and the
// NaN/Inf check of the lower triangle only (potrf's strict upper triangle is not referenced).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

// a(i, j) = a(j, i) for i < j < n: the strict upper triangle becomes the mirror of the lower one
// (column-major, ld >= n).
void launch_mirror_lower_to_upper(float* a, std::int64_t ld, std::int64_t n, cudaStream_t stream);
void launch_mirror_lower_to_upper(double* a, std::int64_t ld, std::int64_t n, cudaStream_t stream);

// a(i, j) = 0 for i < j < n (column-major, ld >= n).
void launch_zero_strict_upper(float* a, std::int64_t ld, std::int64_t n, cudaStream_t stream);
void launch_zero_strict_upper(double* a, std::int64_t ld, std::int64_t n, cudaStream_t stream);

// *first = min(*first, i + j·n) over the non-finite a(i, j) with j <= i < n, for the lower
// triangle of the n × n column-major `a`. Set *first to ~0ull before the first call.
void launch_find_nonfinite_lower(const float* a, std::int64_t ld, std::int64_t n, unsigned long long* first,
                                 cudaStream_t stream);
void launch_find_nonfinite_lower(const double* a, std::int64_t ld, std::int64_t n, unsigned long long* first,
                                 cudaStream_t stream);

}  // namespace gpufact::kernels
