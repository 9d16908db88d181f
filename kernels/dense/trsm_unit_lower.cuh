// X = L⁻¹·B in place for a unit lower triangular L: the blocked LU's U12 = L11⁻¹·A12, inside a
// recursive panel and for inv(L11) (B = I). cuBLAS trsm takes 24–108 µs on an H100 for the 32- to
// 256-column blocks of an n = 16384 LU (L11 of h columns, h right-hand sides), far from its
// flops; these solves lie on the panel stream, the factorization's critical chain.
//
// One CTA per 8 right-hand sides, a thread per row (two rows a thread, h <= 512), the columns in
// registers. Per 16-row block: the warp holding the block solves it by shuffles (16
// dependent steps), writes the 16 × 16 solution to shared memory, and every thread subtracts
// L(i, block)·X(block, :) from its rows below, L read from memory (L2) a block ahead.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

inline constexpr std::int64_t kTrsmUnitLowerMaxRows = 512;

// b (h × nrhs, ldb >= h) ← L⁻¹·b for the unit lower triangular h × h matrix in l (ldl >= h; its
// diagonal and upper part not read). Throws std::invalid_argument naming the bad argument
// (h > kTrsmUnitLowerMaxRows among them).
void launch_trsm_unit_lower(const float* l, std::int64_t ldl, std::int64_t h, float* b, std::int64_t ldb,
                            std::int64_t nrhs, cudaStream_t stream);
void launch_trsm_unit_lower(const double* l, std::int64_t ldl, std::int64_t h, double* b, std::int64_t ldb,
                            std::int64_t nrhs, cudaStream_t stream);

}  // namespace gpufact::kernels
