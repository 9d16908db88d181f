// The LU panel with partial pivoting in one kernel, held on chip by one thread block cluster
// (volkov08 §3.8's point taken further: the panel's cost is one global synchronization per
// column, so keep the whole panel where that synchronization is cheapest).
//
// The m × b panel is cut into row blocks of R rows, one per CTA of a cluster (up to 16 CTAs on
// Hopper, 16 SMs), each kept on chip from the first column to the last: in registers up to 64
// columns (a thread per 1, 2 or 4 rows), else in the CTA's shared memory. Per
// column j each CTA finds its largest |a(i, j)| among its rows not chosen yet and pushes that
// row (columns j..b) into every CTA's shared memory with asynchronous remote stores that count
// bytes on the receiver's transaction barrier: no cluster-wide barrier, one wait for the bytes.
// Every CTA then picks the same winner (largest |a|, ties to the lowest row) from what it holds
// and updates its own rows. No row moves while factoring: the interchanges are replayed at the end
// (ipiv as LAPACK's sequential swaps) and every row is written once to its final row. The other
// SMs stay free for the trailing update beside it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpufact::kernels {

inline constexpr int kCoopPanelMaxWidth = 512;  // widest panel (b)

// How an m × b panel is spread: a cluster of `ctas` CTAs of `rows` rows each. Panels of up to 64
// columns whose rows fit 1, 2 or 4 per thread (FP64: 1 at 64 columns, 2 at 32) live in registers
// (rows_per_thread > 0; `shared_bytes` then holds the finished columns); others in `shared_bytes`
// of dynamic shared memory per CTA. ctas == 0: the panel fits neither way in the largest cluster.
struct CoopPanelShape {
  int ctas = 0;
  int rows = 0;
  std::size_t shared_bytes = 0;
  int rows_per_thread = 0;
};
CoopPanelShape coop_panel_shape(std::int64_t m, std::int64_t b, std::size_t element_bytes);
// The largest cluster the current device schedules with a full shared memory per CTA (16 or 8).
int coop_panel_max_cluster();

// The leaf width for an m-row panel of b columns: the widest the register kernel holds (b, or 64
// or 32 when b is wider), else the widest that fits shared memory (halving b); 0 if not even 8 do.
std::int64_t coop_panel_fit_width(std::int64_t m, std::int64_t b, std::size_t element_bytes);

// Where the panel's time goes, in SM cycles of CTA 0's first thread: loading its rows, then per
// column the local pivot search, pushing the candidate row to every CTA, waiting for every CTA's
// and picking the winner, the rank-1 update of its rows, and finally writing the rows back.
enum CoopPanelPhase { kCoopLoad, kCoopSearch, kCoopSend, kCoopWait, kCoopUpdate, kCoopStore };
inline constexpr int kCoopPanelPhases = 6;
inline constexpr const char* kCoopPanelPhaseNames[kCoopPanelPhases] = {"load", "search", "send",
                                                                       "wait", "update", "store"};

// A leaf of a wider panel: the leaf is columns [0, b) of a panel spanning columns [-left, b + right)
// of the same rows, whose other columns take the leaf's interchanges in the same launch (a recursive
// panel then needs no interchange launches of its own), and its pivots are counted from the row
// pivot_offset above the leaf's first (the panel's first row: one interchange launch then applies
// the whole panel's pivots to the rest of the matrix).
struct LuPanelSpan {
  std::int64_t left = 0, right = 0, pivot_offset = 0;
};

// getrf of the m × b column-major panel a (lda >= m >= b >= 1, b <= kCoopPanelMaxWidth) in place:
// ipiv[0 .. b) 1-based and relative to row 0 (cusolverDnXgetrf's convention) plus
// span.pivot_offset, *info the first column (1-based) whose pivot is exactly zero, else 0; the
// span's other columns interchanged alike. One cluster launch, no workspace. Throws
// std::invalid_argument naming the bad argument, or when the panel does not fit (coop_panel_shape).
// profile (device, kCoopPanelPhases entries) receives the phase cycles when not null.
void launch_lu_panel_coop(float* a, std::int64_t lda, std::int64_t m, std::int64_t b, std::int64_t* ipiv, int* info,
                          cudaStream_t stream, unsigned long long* profile = nullptr, const LuPanelSpan& span = {});
void launch_lu_panel_coop(double* a, std::int64_t lda, std::int64_t m, std::int64_t b, std::int64_t* ipiv, int* info,
                          cudaStream_t stream, unsigned long long* profile = nullptr, const LuPanelSpan& span = {});

}  // namespace gpufact::kernels
