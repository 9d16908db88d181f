// The Cholesky cases of volkov08.fig7 (factorization = cholesky; dense_experiments.cpp dispatches
// here): hybrid (volkov08 §5, host data), gpu_resident (host and device data), cuSOLVER
// cusolverDnXpotrf (host and device data), OpenBLAS potrf (host, n <= 8192); the rate metric is
// "cholesky/flop_rate" (n³/3 flops), with the cuBLAS GEMM at the same n beside it.
#pragma once

#include "core/bench/axis.hpp"

namespace gpufact {
class Case;
}

namespace gpufact::dense {

// Axis `update_block` (Cholesky only): CholeskyOptions::update_block.
AxisSpec cholesky_update_block_axis();
// Axis `dataflow_panel` (Cholesky, panel = dataflow): CholeskyOptions::dataflow_panel.
AxisSpec cholesky_dataflow_panel_axis();
// The fig7 points that exist for factorization = cholesky (LU-only axes at their defaults).
bool cholesky_fig7_applies(const AxisPoint& p);
// For the other factorizations: the Cholesky-only axes at their defaults.
bool cholesky_axes_at_default(const AxisPoint& p);

void run_cholesky_fig7(Case& c);

}  // namespace gpufact::dense
