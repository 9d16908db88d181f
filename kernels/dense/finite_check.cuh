// Finds NaN/Inf in a device matrix (issue 5: non-finite input is a clear error), cheaply enough to
// run inside a timed factorization instead of a host scan.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

// *first = min(*first, i + j * rows) over the non-finite entries a[i * row_stride + j * col_stride],
// i < rows, j < cols (either layout). Set *first to ~0ull before the first call.
void launch_find_nonfinite(const float* a, std::int64_t row_stride, std::int64_t col_stride, std::int64_t rows,
                           std::int64_t cols, unsigned long long* first, cudaStream_t stream);
void launch_find_nonfinite(const double* a, std::int64_t row_stride, std::int64_t col_stride, std::int64_t rows,
                           std::int64_t cols, unsigned long long* first, cudaStream_t stream);

}  // namespace gpufact::kernels
