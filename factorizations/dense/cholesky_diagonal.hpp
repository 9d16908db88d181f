// The GPU-resident Cholesky's diagonal blocks without cuSOLVER: recursion by halves (L11, then
// L21 = A21·L11⁻ᵀ by trsm, A22 −= L21·L21ᵀ by syrk, then L22) down to blocks of
// kernels::kPotrfSmallMax, each factored by one CTA in shared memory (kernels/dense/potrf_small).
// cuSOLVER's potrf pays several launches per column on these small blocks; this pays about one
// launch per 64 columns plus two cuBLAS calls per split.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpufact::dense {

// Lower Cholesky in place of the w × w block at a (column-major, ld lda) on `stream` (`blas`
// must be bound to it). *info must be 0 on entry; it becomes the first failing column (1-based,
// LAPACK's potrf numbering within the block) and stays 0 on success.
template <class T>
void potrf_diagonal_recursive(cublasHandle_t blas, T* a, std::int64_t lda, std::int64_t w, int* info,
                              cudaStream_t stream);

// Lower Cholesky in place of the w × w block at a (ld lda) by the fused one-CTA kernel
// (kernels/dense/potrf_fused: L11 and L11⁻¹ in one launch) and, when `want_inverse`, L⁻¹ into the
// w × w square at inv (ld ldinv >= w; lower triangle L⁻¹, strict upper triangle zero). Blocks
// wider than kernels::kPotrfFusedMax split in two (n1 a multiple of 128): L11 and X11 = L11⁻¹ by
// the kernel, L21 = A21·X11ᵀ by GEMM (via `scratch`, copied back), A22 −= L21·L21ᵀ by syrk, L22
// and X22 by the kernel, X21 = −X22·L21·X11 by two GEMMs — the inverse then as a full square
// with a zero upper triangle only if inv's strict upper triangle outside the kernels' squares is
// zero on entry (the caller zeroes inv once). inv must be given (it holds X11) whenever
// w > kPotrfFusedMax. scratch: at least potrf_diagonal_fused_scratch(w) elements (none when
// w <= 128). On a non-positive pivot *info becomes info_offset + its 1-based column within the
// block, if *info was 0 (kernels::launch_potrf_trtri_fused); no host synchronization.
template <class T>
void potrf_diagonal_fused(cublasHandle_t blas, T* a, std::int64_t lda, std::int64_t w, T* inv, std::int64_t ldinv,
                          bool want_inverse, T* scratch, int* info, int info_offset, cudaStream_t stream);
std::size_t potrf_diagonal_fused_scratch(std::int64_t w);
std::int64_t potrf_diagonal_fused_split(std::int64_t w);  // n1 for w > 128

// Where the recursion splits a block of order w (a multiple of 32 when w > 64, so every leaf but
// the last is full).
std::int64_t potrf_diagonal_split(std::int64_t w);

}  // namespace gpufact::dense
