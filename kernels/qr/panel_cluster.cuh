// The Householder QR of a tall panel (LAPACK's geqr2) in one kernel, held on chip by one thread
// block cluster: the same idea as the LU panel of kernels/lu/panel_coop.cuh, for QR.
//
// The m × b panel is cut into row blocks of R rows, one per CTA of a cluster (up to 16 CTAs on
// Hopper), each kept in registers from the first column to the last (a thread per 1 … 8 rows, 16,
// 32 or 64 columns; the block rotates, so column j is always the first and the code is one column's
// worth, run from the instruction cache). Column j needs one cluster-wide exchange: every CTA sums, over its rows below
// j, a(i, j)·a(i, k) for k = j..W (σ = ‖x‖² and the dot products of x with the later columns) and
// pushes those sums, and the CTA holding row j pushes that row, into every CTA's shared memory by
// asynchronous remote stores counted on the receiver's transaction barrier. From the same sums, in
// the same order, every CTA then forms β = −sign(α)·√(α² + σ), τ = (β − α)/β, v = x/(α − β) and
// wₖ = a(j, k) + (xᵀa_k)/(α − β), and applies a_k −= τ·wₖ·v to its own rows: no cluster barrier,
// no second reduction. Output as LAPACK's dgeqr2: R on and above the diagonal, v below it (v(j) = 1
// implied), τ per column; no scaling against overflow (|a| up to about 1e18 in FP32, 1e150 in FP64).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpufact::kernels {

inline constexpr int kQrPanelClusterMaxWidth = 64;

// How an m × b panel is spread: `ctas` CTAs of `rows` rows, each thread holding `rows_per_thread`
// rows of a `width`-column register block (width >= b). ctas == 0: no register class holds it.
struct QrPanelClusterShape {
  int ctas = 0;
  int rows = 0;
  int width = 0;
  int rows_per_thread = 0;
};
QrPanelClusterShape qr_panel_cluster_shape(std::int64_t m, std::int64_t b, std::size_t element_bytes);

// The widest leaf (64, 32 or 16 columns, at most b) the kernel holds for an m-row panel; 0: none.
std::int64_t qr_panel_cluster_fit_width(std::int64_t m, std::int64_t b, std::size_t element_bytes);

// Where the panel's time goes, in SM cycles of CTA 0's first thread: loading its rows, then per
// column the column sums (products and the warp and CTA reductions), pushing them to every CTA,
// waiting for every CTA's, forming the reflector (β, τ and the coefficients τ·wₖ), updating its
// rows, and storing the finished column (its registers then move down one column).
enum QrPanelPhase { kQrPanelLoad, kQrPanelSums, kQrPanelPush, kQrPanelWait, kQrPanelReflector, kQrPanelUpdate,
                    kQrPanelStore };
inline constexpr int kQrPanelPhases = 7;
inline constexpr const char* kQrPanelPhaseNames[kQrPanelPhases] = {"load", "sums", "push", "wait",
                                                                   "reflector", "update", "store"};

// geqr2 of the m × b column-major panel a (lda >= m >= b >= 1, b <= 64) in place; tau[0 .. b).
// One cluster launch, no workspace. Throws std::invalid_argument naming the bad argument, or when
// no register class holds the panel (qr_panel_cluster_fit_width says which widths do). profile
// (device, kQrPanelPhases entries) receives the phase cycles when not null.
void launch_qr_panel_cluster(float* a, std::int64_t lda, std::int64_t m, std::int64_t b, float* tau,
                             cudaStream_t stream, unsigned long long* profile = nullptr);
void launch_qr_panel_cluster(double* a, std::int64_t lda, std::int64_t m, std::int64_t b, double* tau,
                             cudaStream_t stream, unsigned long long* profile = nullptr);

}  // namespace gpufact::kernels
