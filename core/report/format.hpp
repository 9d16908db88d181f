// Number formatting shared by the console, markdown and CSV outputs.
#pragma once

#include "core/report/result.hpp"

#include <string>

namespace gpufact {

// "12.3 µs", "4.56 ms", "2801 GB/s", "0.85 TFLOP/s"-style: 3–4 significant digits, time scaled.
std::string format_value(double value, const std::string& unit);
// "±1.2%" from a metric's cv (or stddev/median), empty when unknown.
std::string format_spread(const Metric& m);
// Relative spread of a metric: cv when present, else stddev/|mean|, else 0.
double relative_spread(const Metric& m);

}  // namespace gpufact
