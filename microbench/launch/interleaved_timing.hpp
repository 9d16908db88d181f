// Interleaved timing for the difference method (volkov08 §3.1): T(few) and T(many) are taken
// alternately rather than one measurement after the other, so that a drift of the host (clock
// boost, another process, the launch queue's state) moves both alike and cancels in their
// difference; each sample is the median of a few inner timings, so one disturbed call does not
// move it.
#pragma once

#include "core/report/result.hpp"
#include "microbench/launch/cpu_pin.hpp"

#include <functional>
#include <string>
#include <vector>

namespace gpufact::microbench {

struct InterleavedSpec {
  long few = 1, many = 2;  // units per timed call (1 and N)
  int samples = 31;        // samples kept, each one pair (T(few), T(many))
  int inner = 5;           // timings of each count per sample; the sample is their median
  int warmup = 2;          // untimed pairs first ...
  double warmup_s = 0;     // ... and more, until the warm-up calls add up to this many seconds (clocks ramp)
  bool host_clock = false;  // measure the host CPU's clock after every pair (host_clock.hpp), untimed
};

struct InterleavedTimes {
  std::vector<double> few, many;  // per sample: the median of `inner` timings of each count
  // Per sample, where the timed call reports it (TimedCall::part): the median of the inner
  // timings' part, e.g. the host time until the last launch call returned, before the wait.
  std::vector<double> few_part, many_part;
  // Per sample, with InterleavedSpec::host_clock: the median of the host clock (Hz) measured
  // after each of its pairs; empty where not asked for or not measurable.
  std::vector<double> host_hz;
  long calls = 0;  // timed calls made, warm-up included
};

// One timed call: its seconds, and optionally (>= 0) the seconds of a part of it.
struct TimedCall {
  double seconds = 0;
  double part = -1;
};

// `timed(k)` runs k units and returns the seconds they took. Within a sample the counts
// alternate few, many, many, few, few, many, … (ABBA): a drift linear in time shifts the two
// medians by at most one call's share. `interrupted` (optional) is polled between calls and
// ends the measurement with std::runtime_error. Throws std::invalid_argument for samples or
// inner below 1, warmup below 0, or many <= few.
InterleavedTimes time_interleaved(const InterleavedSpec& spec, const std::function<double(long)>& timed,
                                  const std::function<bool()>& interrupted = {});
// The same with a part timed inside each call: few_part and many_part hold its per-sample
// medians when every call reported one (part >= 0), and stay empty otherwise.
InterleavedTimes time_interleaved(const InterleavedSpec& spec, const std::function<TimedCall(long)>& timed,
                                  const std::function<bool()>& interrupted = {});

// Records an interleaved measurement in `result`: how it was sampled (data["sampling"]: order,
// samples, inner timings), the CPU the timing thread was pinned to (host_cpu_pinned: the CPU
// index, or null with host_cpu_pin_error saying why not), and the per-sample medians as the
// metrics one/time and many/time, named "<few_name> (median of the inner timings)" and so on;
// the parts, where measured, as one/part_time and many/part_time named after `part_name`; the
// host clock, where measured, as host_clock (MHz, an environment metric).
void record_interleaved(Result& result, const InterleavedSpec& spec, const ScopedCpuPin& pin,
                        const InterleavedTimes& times, const std::string& few_name, const std::string& many_name,
                        const std::string& part_name = "");

}  // namespace gpufact::microbench
