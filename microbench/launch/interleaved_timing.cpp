#include "microbench/launch/interleaved_timing.hpp"

#include "core/bench/sample_median.hpp"
#include "microbench/launch/host_clock.hpp"
#include "microbench/sampled_metric.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpufact::microbench {

InterleavedTimes time_interleaved(const InterleavedSpec& spec, const std::function<TimedCall(long)>& timed,
                                  const std::function<bool()>& interrupted) {
  if (spec.samples < 1 || spec.inner < 1 || spec.warmup < 0 || !(spec.warmup_s >= 0))
    throw std::invalid_argument("interleaved timing: samples and inner must be >= 1, warmup and warmup_s >= 0");
  if (!(spec.many > spec.few)) throw std::invalid_argument("interleaved timing: many must exceed few");
  if (!timed) throw std::invalid_argument("interleaved timing: no timed function");
  InterleavedTimes out;
  bool parts = true;
  auto call = [&](long k) {
    if (interrupted && interrupted()) throw std::runtime_error("interrupted");
    ++out.calls;
    const TimedCall t = timed(k);
    parts = parts && t.part >= 0;
    return t;
  };
  double warm = 0;
  for (int w = 0; w < spec.warmup || warm < spec.warmup_s; ++w) {
    warm += call(spec.few).seconds;
    warm += call(spec.many).seconds;
  }
  std::vector<double> few, many, few_part, many_part, hz;
  auto take = [&](long k, std::vector<double>& t, std::vector<double>& part) {
    const TimedCall c = call(k);
    t.push_back(c.seconds);
    part.push_back(c.part);
  };
  for (int s = 0; s < spec.samples; ++s) {
    few.clear();
    many.clear();
    few_part.clear();
    many_part.clear();
    hz.clear();
    for (int i = 0; i < spec.inner; ++i) {
      if (i % 2 == 0) {
        take(spec.few, few, few_part);
        take(spec.many, many, many_part);
      } else {
        take(spec.many, many, many_part);
        take(spec.few, few, few_part);
      }
      if (spec.host_clock) hz.push_back(measure_host_clock_hz());
    }
    if (spec.host_clock) out.host_hz.push_back(median_of(hz));
    out.few.push_back(median_of(few));
    out.many.push_back(median_of(many));
    out.few_part.push_back(median_of(few_part));
    out.many_part.push_back(median_of(many_part));
  }
  if (!out.host_hz.empty() && *std::min_element(out.host_hz.begin(), out.host_hz.end()) <= 0) out.host_hz.clear();
  if (!parts) {
    out.few_part.clear();
    out.many_part.clear();
  }
  return out;
}

InterleavedTimes time_interleaved(const InterleavedSpec& spec, const std::function<double(long)>& timed,
                                  const std::function<bool()>& interrupted) {
  if (!timed) throw std::invalid_argument("interleaved timing: no timed function");
  return time_interleaved(
      spec, std::function<TimedCall(long)>([&](long k) { return TimedCall{.seconds = timed(k)}; }), interrupted);
}

void record_interleaved(Result& result, const InterleavedSpec& spec, const ScopedCpuPin& pin,
                        const InterleavedTimes& times, const std::string& few_name, const std::string& many_name,
                        const std::string& part_name) {
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
  if (!times.host_hz.empty()) {
    std::vector<double> mhz;
    for (double hz : times.host_hz) mhz.push_back(hz * 1e-6);
    result.metrics.push_back(with_samples({.tag = "host_clock", .name = "host CPU clock (dependent-add chain, per sample)",
                                           .unit = "MHz", .higher_is_better = true, .role = MetricRole::environment},
                                          mhz));
  }
  if (times.few_part.empty() || times.many_part.empty()) return;
  result.metrics.push_back(with_samples({.tag = "one/part_time", .name = few_name + ", " + part_name + per_sample,
                                         .unit = "s", .higher_is_better = false, .role = MetricRole::performance},
                                        times.few_part));
  result.metrics.push_back(with_samples({.tag = "many/part_time", .name = many_name + ", " + part_name + per_sample,
                                         .unit = "s", .higher_is_better = false, .role = MetricRole::performance},
                                        times.many_part));
}

}  // namespace gpufact::microbench
