// Pieces of the on-device LU residual ‖PA − LU‖₁ (factorizations/dense/gpu_residual.hpp), used
// where the host residual would take seconds (large n).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

// From getrf's packed m × n column-major `lu`: l = the m × k unit-lower factor (ld ldl), u = the
// k × n upper factor (ld ldu), k = min(m, n), zeros outside the triangles.
void launch_split_lu(const float* lu, std::int64_t ld, std::int64_t m, std::int64_t n, float* l, std::int64_t ldl,
                     float* u, std::int64_t ldu, cudaStream_t stream);
void launch_split_lu(const double* lu, std::int64_t ld, std::int64_t m, std::int64_t n, double* l, std::int64_t ldl,
                     double* u, std::int64_t ldu, cudaStream_t stream);

// sums[j] = Σ_i |a(i, j)| in double, for the column-major m × n `a` (the 1-norm is their max).
void launch_column_abs_sums(const float* a, std::int64_t ld, std::int64_t m, std::int64_t n, double* sums,
                            cudaStream_t stream);
void launch_column_abs_sums(const double* a, std::int64_t ld, std::int64_t m, std::int64_t n, double* sums,
                            cudaStream_t stream);

// Which part of a packed factor to widen (volkov08.accuracy's residuals in double).
enum class FactorPart {
  full,        // every entry (an explicit Q, or A itself)
  upper,       // on and above the diagonal (U of getrf, R of geqrf), zeros below
  lower,       // on and below the diagonal (L of potrf), zeros above
  unit_lower,  // strictly below the diagonal, ones on it, zeros above (L of getrf)
};

// dst (double, m × n, ld lddst) = the `part` of the m × n column-major `src`.
void launch_widen_factor(const float* src, std::int64_t ld, std::int64_t m, std::int64_t n, FactorPart part,
                         double* dst, std::int64_t lddst, cudaStream_t stream);
void launch_widen_factor(const double* src, std::int64_t ld, std::int64_t m, std::int64_t n, FactorPart part,
                         double* dst, std::int64_t lddst, cudaStream_t stream);

// sums[j] = Σ_i |a(i, j)| and maxes[j] = max_i |a(i, j)| (NaN propagates into both).
void launch_column_abs_stats(const double* a, std::int64_t ld, std::int64_t m, std::int64_t n, double* sums,
                             double* maxes, cudaStream_t stream);

}  // namespace gpufact::kernels
