#include "factorizations/tsqr_baselines/qr_summary.hpp"

#include <algorithm>
#include <cmath>

namespace gpufact::factorizations {

std::optional<Crossover> crossover_width(std::vector<std::pair<std::int64_t, double>> speedup_by_width) {
  std::sort(speedup_by_width.begin(), speedup_by_width.end());
  const auto& s = speedup_by_width;
  std::size_t first = s.size();  // first index from which the method loses everywhere
  while (first > 0 && s[first - 1].second < 1.0) --first;
  if (first == 0 || first == s.size()) return std::nullopt;
  const auto [w0, s0] = s[first - 1];
  const auto [w1, s1] = s[first];
  const double l0 = std::log(static_cast<double>(w0)), l1 = std::log(static_cast<double>(w1));
  const double g0 = std::log(s0), g1 = std::log(s1);  // g0 >= 0 > g1
  const double t = g0 / (g0 - g1);
  return Crossover{std::exp(l0 + t * (l1 - l0)), w0, w1};
}

}  // namespace gpufact::factorizations
