// Timing on Google Benchmark (DESIGN.md "Measurement"). Each measurement registers one benchmark
// instance with manual time: GPU work is timed with CUDA events, host work with a steady clock;
// repetitions, aggregates (median, mean, stddev, cv, min, max) and --benchmark_filter are Google
// Benchmark's. Added for GPUs: cold runs (L2 flushed before every sample), the SM clock measured
// by a probe kernel after each repetition, NVML power/clock/temperature sampled during it.
// Repetition length: Google Benchmark runs each repetition until its *timed* (manual) time reaches
// the preset's min_time_s. When untimed work per sample dominates (an L2 flush or the stream hold
// around a microsecond body) that would take many times min_time_s of wall time, so a pilot run
// measures the wall time per sample and fixes the iteration count so that a repetition takes
// about min_time_s of wall time instead (core/bench/case.cpp, Case::measure).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace gpufact {

enum class Timer { gpu_events, host_wall };
// hot: inputs as the previous sample left them; cold: L2 overwritten before every sample;
// rotate: the experiment cycles through rotating input sets (core/bench/rotation.hpp).
enum class CacheState { hot, cold, rotate };

// "hot", "cold" or "rotate"; throws std::invalid_argument otherwise.
CacheState cache_state_from(const std::string& s);

struct MeasureSpec {
  std::string name;   // metric tag prefix, stable: "copy"
  std::string label;  // display name: "copy kernel"
  Timer timer = Timer::gpu_events;
  CacheState cache = CacheState::hot;
  // Untimed work before each sample (reset an input that the body overwrites, pick a rotating
  // input set). GPU timer: enqueue it on the case stream.
  std::function<void(std::size_t iteration)> setup;
  // The timed work. GPU timer: enqueue it on the case stream; it must not synchronize.
  std::function<void(std::size_t iteration)> body;
  double flops = 0;  // per body call: gives a GFLOP/s metric
  double bytes = 0;  // per body call: gives a GB/s metric
  int batch = 1;     // body calls per timed sample, for microsecond kernels (hot cache only)
  // GPU timer: false (default) holds the stream with a blocking kernel until the whole body is
  // enqueued, so launch latency is not timed. Set true when the body synchronizes with the host
  // (blocking copies, host-side panels, library calls that wait): then it is timed as issued.
  bool sync = false;
  // At least this many samples (Google Benchmark repetitions), above the preset's: host-timed
  // metrics (launches, pageable copies) are noisy per sample, and their median and interquartile
  // range need many samples to settle.
  int min_repetitions = 0;
  // > 0: each repetition runs at most this long even when the preset asks for more. For bodies
  // of microseconds to milliseconds, whose per-repetition mean is settled after a few tens of
  // milliseconds: a longer repetition adds time, not precision; more repetitions add precision.
  double max_min_time_s = 0;
};

}  // namespace gpufact
