// The whole lower Cholesky factorization in one launch, as a dataflow over 64 × 64 tiles: one CTA
// per tile of the lower triangle, taken in column order from a global ticket counter, each
// left-looking — it accumulates A_ij − Σ_k L_ik·L_jkᵀ as the tiles of earlier columns are
// published, then factors its tile (diagonal) or solves it against the published L_jj
// (off-diagonal), and publishes the result by a flag. No host round trip and no launch per
// panel: the critical chain is one tile's potrf, one tile's solve and one tile product per
// column, and every other tile's products fill the GPU beside it. FP32 products are SIMT FMAs
// (no TF32); FP64 products run on the tensor cores (DMMA, exact FP64 arithmetic).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

inline constexpr int kPotrfDataflowTile = 64;

// Flags one launch needs: one per lower tile of an m × nc panel,
// ⌈nc/64⌉·⌈m/64⌉ − ⌈nc/64⌉(⌈nc/64⌉ − 1)/2 (for the whole matrix, nc = m: T(T + 1)/2).
std::int64_t potrf_dataflow_flag_count(std::int64_t m, std::int64_t nc);

// Cholesky of the leading nc columns of the m × m trailing matrix at a (column-major, ld
// lda >= max(1, m); nc a multiple of 64, or nc = m for the whole of it): the lower triangle of
// the nc × nc diagonal block becomes L11 and the rows below it L21 = A21·L11⁻ᵀ; the columns past
// nc are neither read nor written (the caller updates them). Nothing above the diagonal is
// written. `flags` holds potrf_dataflow_flag_count(m, nc) ints none of which equals `epoch` on
// entry (zero them once and pass 1, 2, 3, … on successive launches); `ticket` is one unsigned
// the launcher zeroes. On a non-positive (or NaN) pivot the columns before it are final, the
// rest undefined (LAPACK's info semantics); *info, 0 on entry, becomes the smallest of its value
// and info_offset + the 1-based failing column. No host synchronization.
void launch_potrf_dataflow(float* a, std::int64_t lda, std::int64_t m, std::int64_t nc, int* flags, int epoch,
                           unsigned* ticket, int* info, int info_offset, cudaStream_t stream);
void launch_potrf_dataflow(double* a, std::int64_t lda, std::int64_t m, std::int64_t nc, int* flags, int epoch,
                           unsigned* ticket, int* info, int info_offset, cudaStream_t stream);

}  // namespace gpufact::kernels
