#include "microbench/transfer/transfer_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gpufact::microbench {

TransferFit fit_latency_bandwidth(const std::vector<TransferPoint>& points) {
  if (points.size() < 2)
    throw std::invalid_argument("transfer fit needs at least two points, got " + std::to_string(points.size()));
  for (const auto& p : points) {
    if (!std::isfinite(p.bytes) || p.bytes < 0)
      throw std::invalid_argument("transfer fit: size " + std::to_string(p.bytes) + " is not a byte count");
    if (!std::isfinite(p.seconds) || p.seconds <= 0)
      throw std::invalid_argument("transfer fit: time " + std::to_string(p.seconds) + " s is not positive");
  }
  // Weighted normal equations for t = α + γ·x with x in GB (conditioning) and w = 1/t².
  double s = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& p : points) {
    const double w = 1.0 / (p.seconds * p.seconds);
    const double x = p.bytes * 1e-9;
    s += w;
    sx += w * x;
    sy += w * p.seconds;
    sxx += w * x * x;
    sxy += w * x * p.seconds;
  }
  const double det = s * sxx - sx * sx;
  if (!(det > 1e-12 * s * sxx)) throw std::invalid_argument("transfer fit needs at least two distinct sizes");
  double gamma = (s * sxy - sx * sy) / det;  // seconds per GB
  double alpha = (sy - gamma * sx) / s;
  TransferFit fit;
  if (alpha < 0) {  // the constrained optimum lies on α = 0
    alpha = 0;
    gamma = sxy / sxx;
    fit.alpha_clamped = true;
  }
  if (!(gamma > 0))
    throw std::invalid_argument("transfer fit: time does not grow with size, so there is no bandwidth term");
  fit.alpha_s = alpha;
  fit.beta_bytes_per_s = 1e9 / gamma;
  fit.n_half_bytes = fit.alpha_s * fit.beta_bytes_per_s;
  fit.rel_residuals.reserve(points.size());
  for (const auto& p : points) {
    const double r = (p.seconds - fit.predict_seconds(p.bytes)) / p.seconds;
    fit.rel_residuals.push_back(r);
    fit.max_abs_rel_residual = std::max(fit.max_abs_rel_residual, std::abs(r));
  }
  return fit;
}

double pcie_link_gbs(int generation, int width) {
  // GT/s per lane and line-code efficiency: 8b/10b for Gen1–2, 128b/130b for Gen3–5, Gen6 PAM4
  // carries 64 GT/s in FLIT mode (its FLIT overhead is counted as packet overhead here).
  static const double gts[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  static const double code[] = {0.8, 0.8, 128.0 / 130.0, 128.0 / 130.0, 128.0 / 130.0, 1.0};
  if (generation < 1 || generation > 6 || width < 1 || width > 32) return 0.0;
  const auto g = static_cast<std::size_t>(generation - 1);
  return gts[g] * code[g] / 8.0 * width;
}

double relative_asymmetry(double a, double b) {
  const double m = std::max(std::abs(a), std::abs(b));
  return m == 0 ? 0.0 : std::abs(a - b) / m;
}

}  // namespace gpufact::microbench
