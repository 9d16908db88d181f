#include "microbench/sampled_metric.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gpufact::microbench {

Metric with_samples(Metric m, std::vector<double> samples) {
  if (samples.empty()) throw std::invalid_argument("metric '" + m.tag + "' has no samples");
  std::vector<double> v = samples;
  const std::size_t n = v.size();
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2), v.end());
  double median = v[n / 2];
  if (n % 2 == 0) {
    const double below = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(n / 2));
    median = 0.5 * (median + below);
  }
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
  m.value = median;
  m.samples = std::move(samples);
  return m;
}

}  // namespace gpufact::microbench
