#include "core/report/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace gpufact {

namespace {
std::string sig(double v, int digits = 4) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  char buf[64];
  const double a = std::fabs(v);
  if (a != 0 && (a >= 1e7 || a < 1e-3))
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  else {
    const int mag = a == 0 ? 0 : static_cast<int>(std::floor(std::log10(a)));
    const int decimals = std::max(0, digits - 1 - mag);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  }
  return buf;
}
}  // namespace

std::string format_value(double value, const std::string& unit) {
  if (unit == "s") {
    const double a = std::fabs(value);
    if (a == 0) return "0 s";
    if (a < 1e-6) return sig(value * 1e9, 3) + " ns";
    if (a < 1e-3) return sig(value * 1e6, 3) + " us";
    if (a < 1) return sig(value * 1e3, 3) + " ms";
    return sig(value, 3) + " s";
  }
  return unit.empty() ? sig(value) : sig(value) + " " + unit;
}

double relative_spread(const Metric& m) {
  if (auto it = m.stats.find("spread"); it != m.stats.end()) return it->second;
  if (auto it = m.stats.find("cv"); it != m.stats.end()) return it->second;
  auto sd = m.stats.find("stddev"), mean = m.stats.find("mean");
  if (sd != m.stats.end() && mean != m.stats.end() && mean->second != 0) return sd->second / std::fabs(mean->second);
  return 0.0;
}

std::string format_spread(const Metric& m) {
  // Unknown (no spread, no cv, no stddev and mean) is empty, not "±0.0%".
  const bool given = m.stats.count("spread") || m.stats.count("cv");
  const bool known = given || (m.stats.count("stddev") && m.stats.count("mean"));
  if (!known || (m.samples.size() < 2 && !given)) return {};
  char buf[32];
  std::snprintf(buf, sizeof buf, "±%.1f%%", 100.0 * relative_spread(m));
  return buf;
}

}  // namespace gpufact
