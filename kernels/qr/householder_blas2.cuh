// Unblocked Householder QR of a tall-skinny column-major matrix built from BLAS2 steps: the
// anderson10 §V.A.3 "BLAS2 QR" baseline, entirely on the GPU. Per column j (LAPACK geqr2/larfg
// semantics, R on and above the diagonal, v below it with an implicit unit head, tau[j]):
//   1. reflector (one block): ‖a(j+1:m, j)‖ from per-block partial sums of squares, beta, tau,
//      the scale 1/(alpha − beta) for v;
//   2. matvec (many blocks over rows × column groups): per-block partials of vᵀ C, scaling v;
//   3. reduce (one warp per column): w = tau · Σ partials, a fixed-order second stage;
//   4. rank-1 update (many blocks): C −= v wᵀ, plus the next column's partial sums of squares.
// Explicit Q (orgqr semantics) applies H_{n−1} … H_0 backwards to the first n columns of I with
// the same matvec / reduce / update kernels. Every step only enqueues kernels on `stream`.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpufact::kernels {

// Scratch for one m × n factorization; sizes from householder_blas2_workspace_counts(m, n).
template <class T>
struct HouseholderBlas2Workspace {
  T* partials;        // row blocks × n: matvec partial sums
  T* sumsq_partials;  // row blocks: partial sums of squares of the next column
  T* w;               // n: tau · vᵀC
  T* v;               // m: the current column's scaled Householder vector
  T* scale;           // 1: 1 / (alpha − beta) of the current column
};

struct HouseholderBlas2Counts {
  std::size_t partials, sumsq_partials, w, v, scale;
};
HouseholderBlas2Counts householder_blas2_workspace_counts(std::int64_t m, std::int64_t n);

// Rows of a column slice handled by one block of the matvec/update kernels for `rows` rows, and
// the number of such blocks (exposed for tests of the tiling).
std::int64_t householder_blas2_rows_per_block(std::int64_t rows);
std::int64_t householder_blas2_row_blocks(std::int64_t rows);

// Geqr2 of a (m × n, m >= n >= 1, lda >= m) in place: R on and above the diagonal, Householder
// vectors below it, tau (n) on the device. A zero column gives tau = 0 (H = I), as LAPACK.
void launch_householder_blas2_geqr2(float* a, std::int64_t lda, std::int64_t m, std::int64_t n, float* tau,
                                    HouseholderBlas2Workspace<float> ws, cudaStream_t stream);
void launch_householder_blas2_geqr2(double* a, std::int64_t lda, std::int64_t m, std::int64_t n, double* tau,
                                    HouseholderBlas2Workspace<double> ws, cudaStream_t stream);

// Org2r: q (m × n, ldq >= m) = H_0 … H_{n−1} [I_n; 0] from geqr2's a and tau (a is only read).
void launch_householder_blas2_org2r(const float* a, std::int64_t lda, const float* tau, std::int64_t m,
                                    std::int64_t n, float* q, std::int64_t ldq, HouseholderBlas2Workspace<float> ws,
                                    cudaStream_t stream);
void launch_householder_blas2_org2r(const double* a, std::int64_t lda, const double* tau, std::int64_t m,
                                    std::int64_t n, double* q, std::int64_t ldq, HouseholderBlas2Workspace<double> ws,
                                    cudaStream_t stream);


}  // namespace gpufact::kernels
