// The median of hand-collected samples (in-kernel cycle counts, per-SM values) that do not come
// from a Google Benchmark run; Google Benchmark's aggregates cover everything it measures.
#pragma once

#include <vector>

namespace gpufact {

// Median of `v` (mean of the two middle values for an even count); 0 for an empty list.
double median_of(std::vector<double> v);

}  // namespace gpufact
