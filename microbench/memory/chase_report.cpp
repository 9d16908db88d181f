#include "microbench/memory/chase_report.hpp"

#include "core/bench/case.hpp"
#include "core/cuda/buffer.hpp"

#include <algorithm>
#include <cmath>

namespace gpufact::microbench {

Metric sampled_metric(std::string tag, std::string name, std::string unit, const std::vector<double>& samples,
                      bool headline, MetricRole role) {
  Metric m{.tag = std::move(tag), .name = std::move(name), .unit = std::move(unit)};
  m.samples = samples;
  m.headline = headline;
  m.role = role;
  if (samples.empty()) return m;
  double mean = 0;
  for (double v : samples) mean += v;
  mean /= static_cast<double>(samples.size());
  double var = 0;
  for (double v : samples) var += (v - mean) * (v - mean);
  const double sd = samples.size() > 1 ? std::sqrt(var / static_cast<double>(samples.size() - 1)) : 0.0;
  m.value = median_of(samples);
  m.stats = {{"median", m.value},
             {"mean", mean},
             {"stddev", sd},
             {"cv", mean != 0 ? sd / std::fabs(mean) : 0.0},
             {"min", *std::min_element(samples.begin(), samples.end())},
             {"max", *std::max_element(samples.begin(), samples.end())}};
  return m;
}

void add_latency_metrics(Case& c, const ChasePoint& pt, double mhz) {
  c.add_metric(sampled_metric("latency/cycles", "cycles per dependent access", "cycles", pt.samples, true));
  if (mhz > 0) {
    std::vector<double> ns;
    for (double v : pt.samples) ns.push_back(v * 1e3 / mhz);
    c.add_metric(sampled_metric("latency/ns", "ns per dependent access at the measured SM clock", "ns", ns, true));
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
  const std::size_t free = device_free_bytes();
  if (needed > free)
    c.skip("needs " + std::to_string(needed >> 20) + " MiB of device memory, " + std::to_string(free >> 20) +
           " MiB free");
}

}  // namespace gpufact::microbench
