#include "microbench/launch/interleaved_timing.hpp"

#include "core/bench/sample_median.hpp"
#include "microbench/sampled_metric.hpp"

#include <stdexcept>

namespace gpufact::microbench {

InterleavedTimes time_interleaved(const InterleavedSpec& spec, const std::function<double(long)>& timed,
                                  const std::function<bool()>& interrupted) {
  if (spec.samples < 1 || spec.inner < 1 || spec.warmup < 0 || !(spec.warmup_s >= 0))
    throw std::invalid_argument("interleaved timing: samples and inner must be >= 1, warmup and warmup_s >= 0");
  if (!(spec.many > spec.few)) throw std::invalid_argument("interleaved timing: many must exceed few");
  if (!timed) throw std::invalid_argument("interleaved timing: no timed function");
  InterleavedTimes out;
  auto call = [&](long k) {
    if (interrupted && interrupted()) throw std::runtime_error("interrupted");
    ++out.calls;
    return timed(k);
  };
  double warm = 0;
  for (int w = 0; w < spec.warmup || warm < spec.warmup_s; ++w) {
    warm += call(spec.few);
    warm += call(spec.many);
  }
  std::vector<double> few, many;
  for (int s = 0; s < spec.samples; ++s) {
    few.clear();
    many.clear();
    for (int i = 0; i < spec.inner; ++i) {
      if (i % 2 == 0) {
        few.push_back(call(spec.few));
        many.push_back(call(spec.many));
      } else {
        many.push_back(call(spec.many));
        few.push_back(call(spec.few));
      }
    }
    out.few.push_back(median_of(few));
    out.many.push_back(median_of(many));
  }
  return out;
}

void record_interleaved(Result& result, const InterleavedSpec& spec, const ScopedCpuPin& pin,
                        const InterleavedTimes& times, const std::string& few_name, const std::string& many_name) {
  result.data["sampling"] = {{"order", "T(few) and T(many) interleaved ABBA within each sample"},
                             {"few", spec.few}, {"many", spec.many}, {"samples", spec.samples},
                             {"inner_timings", spec.inner}, {"sample", "median of the inner timings"},
                             {"warmup_pairs", spec.warmup}, {"warmup_s", spec.warmup_s}};
  if (pin.cpu() >= 0) {
    result.data["host_cpu_pinned"] = pin.cpu();
  } else {
    result.data["host_cpu_pinned"] = nullptr;
    result.data["host_cpu_pin_error"] = pin.error();
  }
  const std::string per_sample = " (median of the inner timings)";
  result.metrics.push_back(with_samples({.tag = "one/time", .name = few_name + per_sample, .unit = "s",
                                         .higher_is_better = false, .role = MetricRole::performance},
                                        times.few));
  result.metrics.push_back(with_samples({.tag = "many/time", .name = many_name + per_sample, .unit = "s",
                                         .higher_is_better = false, .role = MetricRole::performance},
                                        times.many));
}

}  // namespace gpufact::microbench
