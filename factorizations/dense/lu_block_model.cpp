#include "factorizations/dense/lu_block_model.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace gpufact::dense {

HybridRates default_hybrid_rates(std::size_t element_bytes) {
  HybridRates r;
  r.element_bytes = element_bytes;
  if (element_bytes == 8) {
    r.cpu_panel_rate *= 0.5;
    r.gemm_rate *= 0.5;
  }
  return r;
}

double hybrid_lu_model_seconds(std::int64_t n, std::int64_t nb, const HybridRates& r) {
  if (n < 0 || nb < 1) throw std::invalid_argument("hybrid_lu_model_seconds: n >= 0 and nb >= 1 required");
  double total = 0;
  for (std::int64_t j = 0; j < n; j += nb) {
    const double m = static_cast<double>(n - j), b = static_cast<double>(std::min(nb, n - j));
    const double t_cpu = r.cpu_overhead_s + m * b * b / r.cpu_panel_rate;
    const double t_link =
        r.link_overhead_s + 2.0 * m * b * static_cast<double>(r.element_bytes) / r.link_bandwidth;
    const double rate = r.gemm_rate * b / (b + r.gemm_half_k);
    const double t_gpu = 2.0 * m * std::max(0.0, m - b) * b / rate;
    total += std::max(t_cpu + t_link, t_gpu);
  }
  return total;
}

std::int64_t hybrid_lu_nb(std::int64_t n, const HybridRates& r, const std::vector<std::int64_t>& candidates) {
  if (candidates.empty()) throw std::invalid_argument("hybrid_lu_nb: no candidates");
  std::int64_t best = candidates.front();
  double best_t = std::numeric_limits<double>::infinity();
  for (std::int64_t nb : candidates) {
    const double t = hybrid_lu_model_seconds(n, nb, r);
    if (t < best_t) best_t = t, best = nb;
  }
  return best;
}

std::int64_t gpu_resident_lu_nb(std::int64_t n) {
  if (n >= 12288) return 512;
  if (n >= 10240) return 256;
  if (n >= 6144) return 192;
  return 128;
}

}  // namespace gpufact::dense
