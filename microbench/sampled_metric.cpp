#include "microbench/sampled_metric.hpp"

#include "core/bench/sample_median.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
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

}  // namespace gpufact::microbench
