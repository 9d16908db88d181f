// Number formatting shared by the console, markdown and CSV outputs.
#pragma once

#include "core/report/result.hpp"

#include <string>

namespace gpufact {

// "12.3 µs", "4.56 ms", "2801 GB/s", "0.85 TFLOP/s"-style: 3–4 significant digits, time scaled.
std::string format_value(double value, const std::string& unit);
// "±1.2%" from relative_spread, empty when unknown.
std::string format_spread(const Metric& m);
// Relative spread of a metric: stats "spread" (half the interquartile range over the median)
// when present, else cv (reports written before "spread" existed), else stddev/|mean|, else 0.
double relative_spread(const Metric& m);
// Spread above which a headline metric is flagged in its experiment's summary (issue 3: every
// headline metric within 2% run to run).
inline constexpr double headline_spread_limit = 0.02;

}  // namespace gpufact
