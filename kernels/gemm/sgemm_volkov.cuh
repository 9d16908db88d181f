// volkov08 §4.2, Fig. 4: the paper's SGEMM. One 64-thread block per 64×16 block of C; each
// thread owns one row of that block (16 accumulators in registers) and streams its row of A
// through registers, while the block's tile of B sits in shared memory, row-major:
//   C := αAB + βC  (NN): B in 16×16 tiles (padded to 16×17), A fetched as 64×4 blocks (bk = 4),
//                        each A block loaded while the previous one is multiplied;
//   C := αABᵀ + βC (NT): Bᵀ in 4×16 tiles, the next A block and Bᵀ tile prefetched one ahead.
// Column-major, any m, n, k ≥ 0 and leading dimensions; the main loop is the paper's, the edges
// (rows past m, columns past n, the k remainder) are handled outside it. β = 0 never reads C.
#pragma once

#include "core/linalg/blas_types.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

// The Table 2 columns: the kernel as published, "no fetch" (every load of A and B replaced by a
// register assignment computed from its address, keeping the dependence pattern: volkov08 §4.4;
// the product is then wrong by design, only finite), and "no prefetch" (each block of A, and of
// Bᵀ in NT, loaded only after the barrier that publishes the tile it is multiplied with).
enum class VolkovVariant { paper = 0, no_fetch = 1, no_prefetch = 2 };

// C (m × n, ldc) := α op(A) op(B) + β C with op(A) = A (m × k, lda; ta must be Op::N) and
// op(B) = B (k × n) or Bᵀ (B n × k), ldb. Throws std::invalid_argument for ta = T, negative
// sizes or leading dimensions below the rows they hold.
void sgemm_volkov(VolkovVariant variant, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                  const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                  std::int64_t ldc, cudaStream_t stream);

}  // namespace gpufact::kernels
