#include "microbench/sampled_metric.hpp"

#include "core/bench/sample_median.hpp"
#include "core/report/format.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <cstdio>
#include <stdexcept>

namespace gpufact::microbench {

Metric with_samples(Metric m, std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("metric '" + m.tag + "' has no samples");
  const std::size_t n = samples.size();
  const double median = median_of(samples);
  const double mean = std::accumulate(samples.begin(), samples.end(), 0.0) / static_cast<double>(n);
  double ss = 0;
  for (double x : samples) ss += (x - mean) * (x - mean);
  const double stddev = n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : 0.0;
  m.stats = {{"median", median},
             {"mean", mean},
             {"stddev", stddev},
             {"cv", mean != 0 ? stddev / mean : 0.0},
             {"min", *std::min_element(samples.begin(), samples.end())},
             {"max", *std::max_element(samples.begin(), samples.end())}};
  add_robust_stats(m.stats, samples);
  m.value = median;
  m.samples = std::move(samples);
  return m;
}

namespace {

// Whether the stat named `name` is relative (a fraction of the value), not in the metric's units.
bool is_relative_stat(const std::string& name) { return name == "cv" || name == "cv_propagated" || name == "spread"; }

// m's samples and absolute stats times `factor`; the relative stats stay as they are.
void scale_units(Metric& m, double factor) {
  for (double& x : m.samples) x *= factor;
  for (auto& [name, v] : m.stats)
    if (!is_relative_stat(name)) v *= factor;
}

}  // namespace

Metric with_spread_of(Metric m, const Metric& source) {
  // Scaled to m's value, so a derived quantity (a % of peak from a rate) keeps its units.
  const double scale = source.value != 0 && std::isfinite(source.value) ? m.value / source.value : 1.0;
  m.samples = source.samples;
  m.stats = source.stats;
  scale_units(m, scale);
  return m;
}

Metric rescaled(Metric m, double factor, std::string tag, std::string name, std::string unit) {
  if (!(factor > 0) || !std::isfinite(factor))
    throw std::invalid_argument("rescaled metric '" + tag + "': the factor must be finite and > 0");
  m.tag = std::move(tag);
  m.name = std::move(name);
  m.unit = std::move(unit);
  m.value *= factor;
  scale_units(m, factor);
  m.published.reset();
  return m;
}

void flag_wide_spread(Result& summary) {
  std::string wide;
  for (const auto& m : summary.metrics) {
    if (!m.headline || !m.stats.count("spread")) continue;
    const double spread = relative_spread(m);
    if (!(spread > headline_spread_limit)) continue;
    char buf[32];
    std::snprintf(buf, sizeof buf, " ±%.1f%%", 100 * spread);
    wide += (wide.empty() ? "" : ", ") + m.tag + buf;
  }
  if (wide.empty()) return;
  char limit[16];
  std::snprintf(limit, sizeof limit, "%.0f%%", 100 * headline_spread_limit);
  summary.reason += (summary.reason.empty() ? "" : "; ") + std::string("spread over ") + limit + ": " + wide;
  summary.data["wide_spread"] = wide;
}

}  // namespace gpufact::microbench
