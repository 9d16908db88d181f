// TSLU: LU of a tall m × b panel with tournament pivoting (Grigori, Demmel, Xiang, "CALU: a
// communication optimal LU factorization algorithm", §2). Instead of one global pivot search per
// column (the per-column synchronization that makes getf2 latency bound, volkov08 §3.8), blocks
// of kTsluBlockRows rows each pick b candidate rows by getf2 with partial pivoting (each thread
// holding its row in registers), the candidate sets meet fan_in at a time in a reduction tree,
// and the winners of the last getf2 are the panel's pivot rows. The panel is then factored
// without further pivoting.
//
// Shape of the tournament (shared with the host reference, factorizations/dense/tslu_host.hpp):
//   level 0: row blocks [k·R, min((k + 1)·R, m)), R = kTsluBlockRows, one candidate set each;
//   level L + 1: set q stacks sets q·F .. q·F + F − 1 of level L (F = tslu_fan_in(b)), in order,
//   each set's rows in the order its getf2 pivoted them; until one set is left.
//   Pivot search: largest |value|, ties to the first row of the block or stack.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace gpufact::kernels {

// Rows per leaf block = threads per CTA = the most rows a tree node stacks: 256 keeps the serial
// getf2 rounds few (8192 rows, b = 32: 32 leaves, then 4 nodes, then the root).
inline constexpr int kTsluBlockRows = 256;
inline constexpr int kTsluMaxWidth = 64;    // widest panel (b) the kernels take

// Candidate sets stacked per tree node: as many as fill the kTsluBlockRows rows a CTA holds, at
// least 2 (b = 32: 8 sets of 32 rows; b = 64: 4 of 64).
inline int tslu_fan_in(std::int64_t b) {
  return static_cast<int>(std::max<std::int64_t>(2, kTsluBlockRows / std::max<std::int64_t>(b, 1)));
}

// Device workspace of launch_tslu for an m × b panel of element_bytes-sized values: candidate
// values and row indices for every set of every level, and one arrival counter per tree node.
// Each launch clears its arrival counters first (one small memset), so one workspace serves
// panels of any height up to its size.
std::size_t tslu_workspace_bytes(std::int64_t m, std::int64_t b, std::size_t element_bytes);

// Factors the m × b column-major panel a (lda >= m, 1 <= b <= kTsluMaxWidth, m < 2^31) in place
// as getrf would, with the tournament's pivots: ipiv[0 .. min(m, b)) the interchanges, 1-based
// and relative to row 0 (cusolverDnXgetrf's convention, so they apply as sequential swaps), L
// unit lower and U upper in a. *info = the first k (1-based) with U(k−1, k−1) exactly zero, else 0.
// Two launches, no host synchronization: (1) one kernel runs the leaf round on all row blocks
// and the whole tree (the last-arriving CTA of each group runs the group's node: a fence and an
// atomic ticket, no waiting on other CTAs, so nothing assumes co-residency); the root also turns
// the pivot rows into ipiv, applies the interchanges to the b columns and writes the factored
// b × b top (its getf2 already factored the pivot rows in pivot order); (2) L21 = A21·U11⁻¹ by
// substitution, a thread per row. Both kernels are compiled per width class (b rounded up to 8,
// 16, 32 or 64) and keep each thread's row in registers.
void launch_tslu(float* a, std::int64_t lda, std::int64_t m, std::int64_t b, std::int64_t* ipiv, int* info,
                 void* workspace, std::size_t workspace_bytes, cudaStream_t stream);
void launch_tslu(double* a, std::int64_t lda, std::int64_t m, std::int64_t b, std::int64_t* ipiv, int* info,
                 void* workspace, std::size_t workspace_bytes, cudaStream_t stream);

}  // namespace gpufact::kernels
