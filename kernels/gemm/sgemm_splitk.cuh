// volkov08 §4.3: GEMM for small C with the dot products split. k is cut into `splits` slices of
// sgemm_splitk_slice(k, splits) columns (the last ones may be shorter or empty); one grid of
// 64 × 64-tile blocks per slice writes its partial product to a workspace of splits × m × n
// floats, and a second kernel sums the partials in slice order and merges them: C := αΣ + βC.
// NN and NT, column-major, any m, n, k ≥ 0 and leading dimensions; β = 0 never reads C.
#pragma once

#include "core/linalg/blas_types.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpufact::kernels {

// Largest number of slices the launcher accepts (one grid dimension).
inline constexpr int kSplitkMaxSplits = 4096;

// Columns of k per slice: ceil(k / splits) rounded up to the tile depth (16).
std::int64_t sgemm_splitk_slice(std::int64_t k, int splits);
// Workspace the launcher needs, in floats: splits × m × n.
std::size_t sgemm_splitk_workspace_floats(std::int64_t m, std::int64_t n, int splits);

// C (m × n, ldc) := α A op(B) + β C, A m × k (ta must be Op::N), op(B) = B (k × n) or Bᵀ
// (B n × k). workspace: at least sgemm_splitk_workspace_floats(m, n, splits) floats.
// Throws std::invalid_argument for bad sizes, splits outside 1..kSplitkMaxSplits or a short
// workspace.
void sgemm_splitk(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, int splits, float alpha,
                  const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                  std::int64_t ldc, float* workspace, std::size_t workspace_floats, cudaStream_t stream);

// Split-k on the SIMT SGEMM's main loop (kernels/gemm/sgemm_simt.cuh, sgemm_simt_partials): the
// named tile configuration (simt_64x64x16_s3 for C up to ~128 × 128, simt_128x128x16_s3 above)
// computes the partials of slices of sgemm_splitk_simt_slice(config, k, splits) columns, 16-byte
// copies and all; a reduction that spreads the splits over 8 or 32 thread groups (each summed in
// split order, then the groups in order: deterministic) completes C := αΣ + βC. NN, NT and TN; the
// workspace is sgemm_splitk_workspace_floats(m, n, splits) floats. Throws std::invalid_argument
// like sgemm_splitk, and for TT or an unknown config.
std::int64_t sgemm_splitk_simt_slice(std::string_view config, std::int64_t k, int splits);
void sgemm_splitk_simt(std::string_view config, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                       int splits, float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                       float beta, float* c, std::int64_t ldc, float* workspace, std::size_t workspace_floats,
                       cudaStream_t stream);

}  // namespace gpufact::kernels
