#include "microbench/memory/chase_report.hpp"

#include "microbench/sampled_metric.hpp"

#include "core/bench/case.hpp"
#include "core/cuda/buffer.hpp"

#include <algorithm>
#include <cmath>

namespace gpufact::microbench {

void add_latency_metrics(Case& c, const ChasePoint& pt, double mhz) {
  c.add_metric(with_samples({.tag = "latency/cycles", .name = "cycles per dependent access", .unit = "cycles", .headline = true}, pt.samples));
  if (mhz > 0) {
    std::vector<double> ns;
    for (double v : pt.samples) ns.push_back(v * 1e3 / mhz);
    c.add_metric(with_samples({.tag = "latency/ns", .name = "ns per dependent access at the measured SM clock", .unit = "ns", .headline = true}, ns));
  }
  c.add_metric({.tag = "sm_clock", .name = "SM clock measured before the chase", .unit = "MHz", .value = mhz,
                .role = MetricRole::environment});
  if (!pt.per_sm.empty()) {
    c.add_metric({.tag = "latency_max_sm/cycles", .name = "slowest SM's cycles per access", .unit = "cycles",
                  .value = pt.max_over_sms, .headline = true, .role = MetricRole::performance});
    c.add_metric({.tag = "sms", .name = "distinct SMs that ran a chase", .unit = "", .value = static_cast<double>(pt.distinct_sms),
                  .role = MetricRole::environment});
    c.result().data["per_sm_cycles"] = pt.per_sm;
    c.result().data["smid"] = pt.smids;
  }
  c.result().data["warm_steps"] = pt.warm_steps;
  c.result().data["timed_steps"] = pt.timed_steps;
}

void skip_unless_fits(Case& c, std::size_t bytes, int blocks) {
  const std::size_t region = blocks > 1 ? (bytes + (2u << 20) - 1) / (2u << 20) * (2u << 20) : bytes;
  const std::size_t needed = region * static_cast<std::size_t>(blocks) + (256u << 20);
  c.require_device_memory(needed);
}

}  // namespace gpufact::microbench
