// MAGMA's ‖PA − LU‖₁ / (n ‖A‖₁ ε) computed on the GPU with cuBLAS in the working precision, for
// sizes where the host residual (core/linalg/residual.hpp) costs seconds. Same formula, same
// tolerance; the product L·U is one device GEMM.
#pragma once

#include "core/linalg/matrix_view.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpufact::dense {

// ‖A‖₁ of the column-major m × n device matrix `d`, through `sums` (n doubles on the device);
// +inf when A holds a NaN. Synchronizes `stream`.
template <class T>
double device_norm1(const T* d, std::int64_t ld, std::int64_t m, std::int64_t n, double* sums, cudaStream_t stream);

// Device bytes lu_residual_device needs for an m × n matrix.
std::size_t lu_residual_device_bytes(std::int64_t m, std::int64_t n, std::size_t element_bytes);

// a: the input, lu: getrf's output, ipiv: 1-based, all on the host (column-major).
template <class T>
double lu_residual_device(MatrixView<const T> a, MatrixView<const T> lu, const int* ipiv, cudaStream_t stream);

}  // namespace gpufact::dense
