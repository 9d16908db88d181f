#include "core/bench/sample_median.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace gpufact {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return 0.5 * (*mid + *std::max_element(v.begin(), mid));
}

double quantile_of(std::vector<double> v, double p) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const double pos = std::clamp(p, 0.0, 1.0) * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double half_iqr(const std::vector<double>& v) {
  return v.size() < 2 ? 0.0 : 0.5 * (quantile_of(v, 0.75) - quantile_of(v, 0.25));
}

double half_iqr_over_median(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  const double median = median_of(v);
  if (median == 0 || !std::isfinite(median)) return 0.0;
  return half_iqr(v) / std::fabs(median);
}

void add_robust_stats(std::map<std::string, double>& stats, const std::vector<double>& samples) {
  if (samples.empty()) return;
  stats["q1"] = quantile_of(samples, 0.25);
  stats["q3"] = quantile_of(samples, 0.75);
  stats["spread"] = half_iqr_over_median(samples);
}

}  // namespace gpufact
