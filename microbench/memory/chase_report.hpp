// How chase measurements become metrics and result data (shared by volkov08.fig1 and fig2).
#pragma once

#include "core/report/result.hpp"
#include "microbench/memory/pointer_chase.hpp"

#include <string>
#include <vector>

namespace gpufact {
class Case;
namespace microbench {

// latency/cycles and latency/ns (cycles at the measured SM clock `mhz`); multi-SM adds the
// slowest SM and the distinct SM count.
void add_latency_metrics(Case& c, const ChasePoint& pt, double mhz);

// Skips the case when `bytes` × `blocks` (regions rounded as ChaseBench does) does not fit the
// free device memory with a margin.
void skip_unless_fits(Case& c, std::size_t bytes, int blocks);

}  // namespace microbench
}  // namespace gpufact
