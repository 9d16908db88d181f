// Robust statistics of samples: the median, quartiles and the report's spread (half the
// interquartile range over the median), for Google Benchmark's samples and hand-collected ones
// (in-kernel cycle counts, per-SM values) alike.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpufact {

// Median of `v` (mean of the two middle values for an even count); 0 for an empty list.
double median_of(std::vector<double> v);

// The p-quantile of `v` (0 <= p <= 1), linear between order statistics (Hyndman–Fan type 7, what
// numpy and R use by default); 0 for an empty list.
double quantile_of(std::vector<double> v, double p);

// Half the interquartile range of `v` (in its units); 0 for fewer than two samples.
double half_iqr(const std::vector<double>& v);

// The report's spread of a metric: half the interquartile range over |median|. Robust: a few
// samples disturbed by the host (a page fault, a context switch) move it little, unlike the
// coefficient of variation; for normal noise it is about 0.67 × cv. 0 for fewer than two samples
// or a zero median.
double half_iqr_over_median(const std::vector<double>& v);

// Adds "q1", "q3" and "spread" (half_iqr_over_median) for `samples` to `stats`.
void add_robust_stats(std::map<std::string, double>& stats, const std::vector<double>& samples);

}  // namespace gpufact
