// The GPU-resident Cholesky's diagonal block in one launch: one CTA factors the w × w SPD block
// (w <= 128) in shared memory and writes L11 and its inverse L11⁻¹, so the panel's
// L21 = A21·L11⁻ᵀ is one GEMM (volkov08 §5: the explicit inverse instead of a triangular solve).
// Where cuSOLVER's potrf on a 256-wide block pays dozens of launches, this pays one.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

inline constexpr int kPotrfFusedMax = 128;  // widest block one CTA factors (FP64: ~154 KB of shared memory)

// Lower Cholesky in place of the n × n block at a (column-major, ld lda), 0 <= n <= kPotrfFusedMax;
// only the lower triangle is read and written. On success, if inv is not null, the n × n
// column-major inv (ld ldinv >= max(1, n)) receives L⁻¹ in its lower triangle and zeros in its
// strict upper triangle (a full square a GEMM can take as is). On the first non-positive (or NaN)
// pivot, column j of the block, the factorization stops (the columns before j are final, the rest
// partly updated, as LAPACK's blocked potrf leaves them), inv is left unspecified and, if *info is
// still 0, *info = info_offset + j + 1 (LAPACK's numbering shifted by the block's place in the
// whole matrix, so one int can collect a whole factorization's info without a host sync); a
// successful block leaves *info as it was.
void launch_potrf_trtri_fused(float* a, std::int64_t lda, int n, float* inv, std::int64_t ldinv, int* info,
                              int info_offset, cudaStream_t stream);
void launch_potrf_trtri_fused(double* a, std::int64_t lda, int n, double* inv, std::int64_t ldinv, int* info,
                              int info_offset, cudaStream_t stream);

}  // namespace gpufact::kernels
