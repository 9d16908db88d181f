// A metric from samples an experiment took itself (in-kernel clock64 counts, one per kernel
// launch): value = median, with the same stats Google Benchmark gives measured metrics.
#pragma once

#include "core/report/result.hpp"

#include <string>
#include <vector>

namespace gpufact::microbench {

// Fills m.samples, m.stats (median, mean, stddev, cv, min, max, q1, q3, spread = half the
// interquartile range over the median) and m.value (the median).
// Throws std::invalid_argument for no samples.
Metric with_samples(Metric m, std::vector<double> samples);

// Longest repetition a microbenchmark measurement asks for (MeasureSpec::max_min_time_s): its
// bodies take microseconds to milliseconds, so 30 ms already averages tens to thousands of calls
// per sample; the full preset's 0.1 s would triple the group's time for no precision. The quick
// preset's 0.02 s is below it and unchanged.
inline constexpr double microbench_max_sample_s = 0.03;

// A summary metric that repeats or rescales a measured one (the best case, a % of peak from a
// rate): `m` with the samples and stats of `source` scaled by m.value / source.value, so its
// relative spread is the source's; value kept.
Metric with_spread_of(Metric m, const Metric& source);

// `m` in other units (seconds to SM cycles): value, samples and the absolute stats (median, mean,
// stddev, min, max, q1, q3) multiplied by `factor` > 0; the relative ones (cv, cv_propagated,
// spread) kept, since a unit change leaves them as they were. Any published value is dropped (it
// was given in m's units). Throws std::invalid_argument for a factor that is not finite and > 0.
Metric rescaled(Metric m, double factor, std::string tag, std::string name, std::string unit);

// The summary's check: every headline metric of `summary` whose spread (half the interquartile
// range over the median) exceeds headline_spread_limit (2%) is named in its reason, which the
// report's check column shows; reasons already there are kept.
void flag_wide_spread(Result& summary);

}  // namespace gpufact::microbench
