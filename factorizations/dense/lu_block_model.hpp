// Block sizes of the LU drivers from a simple time model (volkov08 §5: the panel width trades the
// CPU's panel time against the GPU's update rate; the paper fixed 64 for its 8800GTX, a 16-core
// host against a 50 TFLOP/s GPU needs another value per n).
//
// Hybrid, step at column j with panel width b and m = n − j rows left:
//   CPU panel   t_cpu  = cpu_overhead_s + m·b² / cpu_panel_rate          (getrf + inv(L11))
//   chain       t_link = link_overhead_s + 2·m·b·element_bytes / link_bandwidth
//                        (panel up + down, pivoting, U12 and the look-ahead GEMM on the GPU)
//   GPU update  t_gpu  = 2·m·(m − b)·b / (gemm_rate · b / (b + gemm_half_k))
// With look-ahead the CPU and the trailing update run at once, so a step costs
// max(t_cpu + t_link, t_gpu); the model sums that over the steps and picks the candidate b with the
// least total. Default rates are fitted to the H200 run (FP32, 16 cores, volkov08.fig10 at
// n = 2048 / nb = 64 and n = 4096 / nb = 128: 0.38 and 1.56 ms per CPU panel → 0.2 ms + m·b²/25
// GFLOP/s); FP64 halves the CPU rate and the GEMM rate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpufact::dense {

struct HybridRates {
  double cpu_overhead_s = 2.0e-4;    // per panel: OpenBLAS thread start-up, laswp, inverse, host sync
  double cpu_panel_rate = 25e9;      // flop/s of getrf on an m × b panel, all cores
  double link_overhead_s = 6.0e-5;   // per step: launches and event waits on the panel's chain
  double link_bandwidth = 25e9;      // bytes/s, pinned PCIe transfers
  double gemm_rate = 50e12;          // flop/s of a large trailing-update GEMM
  double gemm_half_k = 64;           // inner dimension at which the GEMM runs at half its rate
  std::size_t element_bytes = 4;
};

HybridRates default_hybrid_rates(std::size_t element_bytes);  // 4: FP32, 8: FP64

// Predicted seconds of the hybrid LU of an n × n matrix with panel width nb (nb >= 1).
double hybrid_lu_model_seconds(std::int64_t n, std::int64_t nb, const HybridRates& r);

// The candidate with the least predicted time (first of equals); candidates must be non-empty.
std::int64_t hybrid_lu_nb(std::int64_t n, const HybridRates& r,
                          const std::vector<std::int64_t>& candidates = {32, 48, 64, 96, 128, 192, 256});

// GPU-resident panel width: the trailing-update GEMM is n × n × nb, so nb grows with n until the
// GEMM runs near its peak (measured at n = 16384: nb 128 / 256 / 512 → 18.9 / 19.6 / 20.7 TFLOP/s),
// and stays small at small n where the panel chain dominates. 192 from n = 6144 to 10239: against
// 256 on three H100s with cooperative panels, FP32 +0.4–2.5% at n = 6144 and 8192 in five
// comparisons, FP64 even; at 10240 both precisions lost (−0.3 to −2.3%)
// (results/nvidia-h100/lu-graph/lu-graph-nb.json, lu-nb-192-256/).
std::int64_t gpu_resident_lu_nb(std::int64_t n);

}  // namespace gpufact::dense
