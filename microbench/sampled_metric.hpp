// A metric from samples an experiment took itself (in-kernel clock64 counts, one per kernel
// launch): value = median, with the same stats Google Benchmark gives measured metrics.
#pragma once

#include "core/report/result.hpp"

#include <vector>

namespace gpufact::microbench {

// Fills m.samples, m.stats (median, mean, stddev, cv, min, max, q1, q3, spread = half the
// interquartile range over the median) and m.value (the median).
// Throws std::invalid_argument for no samples.
Metric with_samples(Metric m, std::vector<double> samples);

}  // namespace gpufact::microbench
