// Row interchanges of one LU panel applied to a whole matrix in one launch (volkov08 §5: "pivoting
// kernel does 64 row interchanges per call ... pivot indices passed in as function parameters").
// Each thread owns one column and applies the swaps in order, so no two threads touch one word:
// in a row-major matrix a warp's 32 columns are 32 consecutive words (coalesced); in a
// column-major one they are ld apart (the strided access §6.2 measures as the slow case).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

// Most interchanges one launch takes by value (they travel as a kernel parameter).
inline constexpr int kMaxSwapsPerLaunch = 512;

// For k in [0, count): swaps row first_row + k with row targets[k] (0-based, global) in every
// column c in [0, cols) outside [skip_begin, skip_end). `row_major`: element (r, c) is
// a[r * ld + c], else a[r + c * ld]. count <= kMaxSwapsPerLaunch; targets is read on the host.
void launch_apply_row_swaps(float* a, std::int64_t ld, bool row_major, std::int64_t cols, std::int64_t skip_begin,
                            std::int64_t skip_end, std::int64_t first_row, const int* targets, int count,
                            cudaStream_t stream);
void launch_apply_row_swaps(double* a, std::int64_t ld, bool row_major, std::int64_t cols, std::int64_t skip_begin,
                            std::int64_t skip_end, std::int64_t first_row, const int* targets, int count,
                            cudaStream_t stream);

// The same with the interchanges in device memory as cuSOLVER getrf leaves them: row first_row + k
// goes with row first_row + ipiv[k] - 1 (1-based, relative to first_row). Any count. Column-major
// with count <= 512 replays the swaps as one permutation of the touched rows per block and moves
// each column's rows with the whole block (coalesced); otherwise a thread per column.
void launch_apply_row_swaps_device(float* a, std::int64_t ld, bool row_major, std::int64_t cols,
                                   std::int64_t skip_begin, std::int64_t skip_end, std::int64_t first_row,
                                   const std::int64_t* ipiv, std::int64_t count, cudaStream_t stream);
void launch_apply_row_swaps_device(double* a, std::int64_t ld, bool row_major, std::int64_t cols,
                                   std::int64_t skip_begin, std::int64_t skip_end, std::int64_t first_row,
                                   const std::int64_t* ipiv, std::int64_t count, cudaStream_t stream);

}  // namespace gpufact::kernels
