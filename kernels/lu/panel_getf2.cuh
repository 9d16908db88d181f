// Unblocked LU with partial pivoting of an m × n column-major panel (LAPACK getf2 semantics:
// ipiv 1-based, info = first zero pivot column, 1-based), for volkov08 §3.8 / Fig. 3.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

// Scratch for the pivot search: one (max, index) pair per search block.
struct Getf2Workspace {
  float* block_max;   // getf2_search_blocks(m) entries
  int* block_index;   // same
  float* reciprocal;  // 1 entry: 1 / pivot of the current column
};
int getf2_search_blocks(std::int64_t m);

// One column step of getf2 as three fused kernels with no host round trip: the pivot search
// (many blocks), the pivot choice + row swap across the panel + reciprocal (one block), and the
// scaling of column j fused with the rank-1 update of the trailing columns (many blocks).
void launch_getf2_column(float* a, std::int64_t lda, std::int64_t m, std::int64_t n, std::int64_t j, int* ipiv,
                         int* info, Getf2Workspace ws, cudaStream_t stream);

// The whole panel in one cooperative kernel: the same three steps per column, separated by
// grid-wide barriers (cooperative_groups grid.sync) instead of kernel boundaries — volkov08 §3.6's
// point that an in-kernel global barrier is cheaper than a relaunch. n <= 1024.
void launch_getf2_persistent(float* a, std::int64_t lda, std::int64_t m, std::int64_t n, int* ipiv, int* info,
                             Getf2Workspace ws, cudaStream_t stream);
// Blocks the persistent kernel runs with (all co-resident) for this m.
int getf2_persistent_blocks(std::int64_t m);

// A cooperative kernel that only runs `rounds` grid.sync()s on `blocks` co-resident blocks of
// 256 threads: the barrier cost the fast-barrier model uses. blocks <= co-resident maximum.
void launch_grid_sync_loop(int rounds, int blocks, cudaStream_t stream);

}  // namespace gpufact::kernels
