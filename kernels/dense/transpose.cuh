// Out-of-place matrix transpose through shared-memory tiles (volkov08 §5: the LU keeps the matrix
// row-major on the GPU; the matrix is transposed on upload and download, each panel on its way
// to and from the CPU).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

// out[j + i * ld_out] = in[i + j * ld_in] for i < rows, j < cols: `in` read column-major
// rows × cols, `out` its transpose (equivalently, `in` written row-major with row stride ld_out).
// ld_in >= rows, ld_out >= cols; the buffers must not overlap.
void launch_transpose(const float* in, std::int64_t ld_in, float* out, std::int64_t ld_out, std::int64_t rows,
                      std::int64_t cols, cudaStream_t stream);
void launch_transpose(const double* in, std::int64_t ld_in, double* out, std::int64_t ld_out, std::int64_t rows,
                      std::int64_t cols, cudaStream_t stream);

}  // namespace gpufact::kernels
