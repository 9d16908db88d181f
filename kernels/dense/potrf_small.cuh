// Cholesky of a small diagonal block in one CTA (the GPU-resident Cholesky's diagonal blocks,
// factorizations/dense/cholesky_diagonal.hpp): the block sits in shared memory and each column
// step is a few barriers, where cuSOLVER's potrf pays several kernel launches per column.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

inline constexpr int kPotrfSmallMax = 64;  // widest block one CTA factors

// Lower Cholesky in place of the n × n block at a (column-major, ld lda), n <= kPotrfSmallMax;
// only the lower triangle is read and written. On the first non-positive (or NaN) pivot, column j
// of the block, the CTA stops and, if *info is still 0, sets *info = info_offset + j + 1 (LAPACK's
// potrf numbering shifted by the block's place); a successful block leaves *info as it was.
void launch_potrf_small(float* a, std::int64_t lda, int n, int* info, int info_offset, cudaStream_t stream);
void launch_potrf_small(double* a, std::int64_t lda, int n, int* info, int info_offset, cudaStream_t stream);

}  // namespace gpufact::kernels
