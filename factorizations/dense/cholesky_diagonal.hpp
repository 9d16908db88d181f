// The GPU-resident Cholesky's diagonal blocks without cuSOLVER: recursion by halves (L11, then
// L21 = A21·L11⁻ᵀ by trsm, A22 −= L21·L21ᵀ by syrk, then L22) down to blocks of
// kernels::kPotrfSmallMax, each factored by one CTA in shared memory (kernels/dense/potrf_small).
// cuSOLVER's potrf pays several launches per column on these small blocks; this pays about one
// launch per 64 columns plus two cuBLAS calls per split.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::dense {

// Lower Cholesky in place of the w × w block at a (column-major, ld lda) on `stream` (`blas`
// must be bound to it). *info must be 0 on entry; it becomes the first failing column (1-based,
// LAPACK's potrf numbering within the block) and stays 0 on success.
template <class T>
void potrf_diagonal_recursive(cublasHandle_t blas, T* a, std::int64_t lda, std::int64_t w, int* info,
                              cudaStream_t stream);

// Where the recursion splits a block of order w (a multiple of 32 when w > 64, so every leaf but
// the last is full).
std::int64_t potrf_diagonal_split(std::int64_t w);

}  // namespace gpufact::dense
