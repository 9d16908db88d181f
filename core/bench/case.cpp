#include "core/bench/case.hpp"

#include "core/bench/registry.hpp"
#include "core/bench/sample_median.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/stream.hpp"
#include "core/linalg/random.hpp"
#include "core/system/nvml.hpp"
#include "kernels/common/block_stream.cuh"
#include "kernels/common/clock_probe.cuh"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <thread>

namespace gpufact {

CacheState cache_state_from(const std::string& s) {
  if (s == "hot") return CacheState::hot;
  if (s == "cold") return CacheState::cold;
  if (s == "rotate") return CacheState::rotate;
  throw std::invalid_argument("cache must be hot, cold or rotate, got '" + s + "'");
}

// ---------------------------------------------------------------------------------------------
// Session

struct Session::DeviceState {
  Stream stream;
  DeviceBuffer<std::byte> l2_scrub;
  DeviceBuffer<kernels::ClockProbeSample> probe;
  PinnedBuffer<kernels::ClockProbeSample> probe_host{1};
  PinnedBuffer<int> hold{2};  // [0] release flag, [1] timed-out flag; device-visible through UVA
};

Session::Session(SystemInfo system, int device, MeasureOptions options, const std::atomic<bool>* interrupted)
    : system_(std::move(system)), device_(device), options_(options), interrupted_(interrupted) {}

Session::~Session() = default;

const GpuSummary& Session::gpu() const {
  if (!has_gpu() || device_ < 0 || device_ >= static_cast<int>(system_.gpus.size()))
    throw std::runtime_error("no usable GPU: " + system_.gpu_unavailable);
  return system_.gpus[static_cast<std::size_t>(device_)];
}

Session::DeviceState& Session::device_state() {
  if (!state_) {
    gpu();  // throws without a device
    GPUFACT_CUDA_CHECK(cudaSetDevice(device_));
    state_ = std::make_unique<DeviceState>();
  }
  return *state_;
}

cudaStream_t Session::stream() { return device_state().stream.get(); }

void Session::flush_l2(cudaStream_t s) {
  auto& st = device_state();
  if (st.l2_scrub.size() == 0) st.l2_scrub = DeviceBuffer<std::byte>(std::max<std::size_t>(2 * gpu().l2_bytes, 1 << 20));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(st.l2_scrub.data(), 0x5a, st.l2_scrub.bytes(), s));
}

double Session::probe_sm_clock_mhz(cudaStream_t s) {
  auto& st = device_state();
  if (st.probe.size() == 0) st.probe = DeviceBuffer<kernels::ClockProbeSample>(1);
  kernels::launch_clock_probe(st.probe.data(), 200'000, s);  // 200 µs: %globaltimer's µs steps stay < 1%
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(st.probe_host.data(), st.probe.data(), sizeof(kernels::ClockProbeSample),
                                     cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  const auto& p = st.probe_host[0];
  return p.nanoseconds ? static_cast<double>(p.cycles) / static_cast<double>(p.nanoseconds) * 1e3 : 0.0;
}

void Session::hold_stream(cudaStream_t s) {
  auto& st = device_state();
  __atomic_store_n(&st.hold[0], 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&st.hold[1], 0, __ATOMIC_SEQ_CST);
  kernels::launch_block_stream(st.hold.data(), st.hold.data() + 1, 10'000'000'000ull, s);  // 10 s
}

void Session::release_stream() { __atomic_store_n(&device_state().hold[0], 1, __ATOMIC_SEQ_CST); }

bool Session::hold_timed_out() { return __atomic_load_n(&device_state().hold[1], __ATOMIC_SEQ_CST) != 0; }

// ---------------------------------------------------------------------------------------------
// Case

Case::Case(Session& session, const Experiment& experiment, AxisPoint point, Result& result)
    : session_(session), experiment_(experiment), point_(std::move(point)), result_(result), seed_(fresh_seed()) {
  result_.seed = seed_;
}

void Case::require_device_memory(std::size_t bytes) {
  const std::size_t free = device_free_bytes();
  if (bytes > free)
    skip("needs " + std::to_string(bytes >> 20) + " MiB of device memory, " + std::to_string(free >> 20) +
         " MiB free");
}

void Case::verify(const std::string& method, double error, double tolerance) {
  const bool ok = std::isfinite(error) && error <= tolerance;
  // Keep the check that is worst relative to its tolerance.
  const bool worse = !result_.verification || !std::isfinite(error) ||
                     error / std::max(tolerance, 1e-300) >
                         result_.verification->error / std::max(result_.verification->tolerance, 1e-300);
  if (worse) result_.verification = Verification{method, error, tolerance};
  checked_ = true;
  failed_ = failed_ || !ok;
  result_.status = failed_ ? Status::incorrect : Status::passed;
  if (!ok && result_.reason.empty())
    result_.reason = method + " = " + std::to_string(error) + " exceeds tolerance " + std::to_string(tolerance);
}

namespace {

// Collects what Google Benchmark reports for one instance: per-repetition counter values (the
// raw samples) and its aggregates of them.
class Collector : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs) {
      if (r.error_occurred) {
        error = r.error_message;
        continue;
      }
      if (r.run_type == Run::RT_Iteration) {
        for (const auto& [name, c] : r.counters) samples[name].push_back(c.value);
      } else {
        for (const auto& [name, c] : r.counters) stats[name][r.aggregate_name] = c.value;
      }
    }
  }
  std::map<std::string, std::vector<double>> samples;
  std::map<std::string, std::map<std::string, double>> stats;
  std::string error;
};

double stat_min(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::min_element(v.begin(), v.end()); }
double stat_max(const std::vector<double>& v) { return v.empty() ? 0.0 : *std::max_element(v.begin(), v.end()); }

// Polls NVML in the background while a repetition runs.
class NvmlSampler {
 public:
  explicit NvmlSampler(int device) : device_(device) {
    if (!Nvml::instance().available()) return;
    thread_ = std::thread([this] {
      std::unique_lock lock(mutex_);
      while (!stop_) {
        lock.unlock();
        auto r = Nvml::instance().read(device_);
        lock.lock();
        if (r) readings_.push_back(*r);
        cv_.wait_for(lock, std::chrono::milliseconds(10), [this] { return stop_; });
      }
    });
  }
  ~NvmlSampler() { stop(); }
  std::vector<NvmlReading> stop() {
    if (thread_.joinable()) {
      {
        std::lock_guard lock(mutex_);
        stop_ = true;
      }
      cv_.notify_all();
      thread_.join();
    }
    return readings_;
  }

 private:
  int device_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::vector<NvmlReading> readings_;
};

template <class F>
double mean_of(const std::vector<NvmlReading>& rs, F field) {
  double s = 0;
  for (const auto& r : rs) s += field(r);
  return rs.empty() ? 0.0 : s / static_cast<double>(rs.size());
}

bool filter_admits(const std::string& name) {
  const std::string f = benchmark::GetBenchmarkFilter();
  if (f.empty() || f == "." || f == "all") return true;
  const bool negative = f[0] == '-';
  try {
    const bool hit = std::regex_search(name, std::regex(negative ? f.substr(1) : f, std::regex::extended));
    return negative ? !hit : hit;
  } catch (const std::regex_error&) {
    return true;  // let Google Benchmark report the bad pattern
  }
}

struct CounterInfo {
  const char* tag;
  const char* name;
  const char* unit;
  bool higher_is_better;
  MetricRole role;
};

}  // namespace

bool Case::measure(const MeasureSpec& spec) {
  if (!spec.body) throw std::logic_error("MeasureSpec '" + spec.name + "' has no body");
  if (spec.batch < 1) throw std::logic_error("MeasureSpec batch must be >= 1");
  const bool gpu = spec.timer == Timer::gpu_events;
  const bool cold = spec.cache == CacheState::cold;
  if (cold && spec.batch != 1) throw std::logic_error("a cold-cache measurement times one call per sample");
  const std::string bench_name = experiment_.key + "/" + point_.label() + "/" + spec.name;
  if (!filter_admits(bench_name)) {
    result_.reason = "measurement '" + spec.name + "' excluded by --benchmark_filter";
    return false;
  }
  MeasureOptions opt = session_.options();
  if (spec.max_min_time_s > 0) opt.min_time_s = std::min(opt.min_time_s, spec.max_min_time_s);
  cudaStream_t s = gpu ? stream() : nullptr;
  const int device = session_.device();
  std::exception_ptr failure;
  std::size_t iteration = 0;

  // One sample: untimed setup (and flush, hold), then the timed body. Returns the timed seconds.
  auto one_sample = [&](std::size_t it, std::optional<Event>& start, std::optional<Event>& stop) {
    if (spec.setup) spec.setup(it);
    if (gpu) {
      if (cold) session_.flush_l2(s);
      if (!spec.sync) session_.hold_stream(s);
      start->record(s);
      for (int b = 0; b < spec.batch; ++b) spec.body(it);
      stop->record(s);
      if (!spec.sync) session_.release_stream();
      stop->synchronize();
      if (!spec.sync && session_.hold_timed_out())
        throw std::runtime_error("measurement '" + spec.name +
                                 "': the stream hold timed out: the body waited on the host (blocking "
                                 "call or first use of a kernel), so its MeasureSpec needs sync = true");
      return Event::elapsed_seconds(*start, *stop);
    }
    const auto t0 = std::chrono::steady_clock::now();
    for (int b = 0; b < spec.batch; ++b) spec.body(it);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };

  auto fn = [&](benchmark::State& st) {
    std::optional<Event> start, stop;
    if (gpu) {
      start.emplace();
      stop.emplace();
    }
    std::optional<NvmlSampler> sampler;
    if (gpu) sampler.emplace(device);
    double total = 0.0;
    try {
      for (auto _ : st) {
        if (session_.interrupted()) {
          st.SkipWithError("interrupted");
          break;
        }
        const double t = one_sample(iteration++, start, stop);
        st.SetIterationTime(t);
        total += t;
      }
      if (st.iterations() > 0) {
        const auto iters = static_cast<double>(st.iterations());
        const double per_call = total / iters / spec.batch;
        st.counters["time"] = benchmark::Counter(per_call);
        if (spec.flops > 0) st.counters["flop_rate"] = benchmark::Counter(spec.flops * 1e-9 / per_call);
        if (spec.bytes > 0) st.counters["bandwidth"] = benchmark::Counter(spec.bytes * 1e-9 / per_call);
        if (gpu) {
          const auto readings = sampler->stop();
          st.counters["sm_clock"] = benchmark::Counter(session_.probe_sm_clock_mhz(s));
          if (!readings.empty()) {
            st.counters["power"] = benchmark::Counter(mean_of(readings, [](auto& r) { return r.power_w; }));
            st.counters["temperature"] =
                benchmark::Counter(mean_of(readings, [](auto& r) { return r.temperature_c; }));
            st.counters["nvml_sm_clock"] =
                benchmark::Counter(mean_of(readings, [](auto& r) { return r.sm_clock_mhz; }));
          }
        }
      }
    } catch (...) {
      if (gpu) session_.release_stream();
      failure = std::current_exception();
      st.SkipWithError("exception");
    }
  };

  // One untimed call first: CUDA loads modules lazily at a kernel's first launch and that load
  // waits for the device, which would deadlock behind the stream hold; it also warms caches and
  // library handles when the preset asks for no warm-up.
  if (gpu && !spec.sync) {
    if (spec.setup) spec.setup(iteration);
    spec.body(iteration++);
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  }

  // Pilot: wall vs timed seconds per sample. Google Benchmark sizes repetitions by timed time;
  // where untimed work per sample dominates, fix the iteration count (and warm up by wall time)
  // so a repetition lasts about min_time_s of wall time. Bodies that fill their samples are left
  // to Google Benchmark, its warm-up shortened by what the pilot already ran.
  std::optional<std::int64_t> fixed_iterations;
  double warmup_s = opt.warmup_s;
  if (opt.min_time_s > 0) {
    std::optional<Event> start, stop;
    if (gpu) {
      start.emplace();
      stop.emplace();
    }
    double timed = 0, wall = 0;
    int samples = 0;
    try {
      // A body that alone fills the budget stops the pilot after one sample.
      while (samples < 16 && wall < std::min(0.005, opt.min_time_s)) {
        const auto t0 = std::chrono::steady_clock::now();
        timed += one_sample(iteration++, start, stop);
        wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ++samples;
      }
    } catch (...) {
      if (gpu) session_.release_stream();
      throw;
    }
    const double timed_share = wall > 0 ? timed / wall : 1.0;
    if (samples > 0 && timed_share < 0.5) {
      const double wall_per_sample = wall / samples;
      fixed_iterations = std::max<std::int64_t>(1, std::llround(opt.min_time_s / wall_per_sample));
      // Google Benchmark runs no warm-up with a fixed iteration count: warm up here, by wall time.
      try {
        for (std::int64_t n = 0; wall < opt.warmup_s && n < 100 * *fixed_iterations; ++n) {
          const auto t0 = std::chrono::steady_clock::now();
          one_sample(iteration++, start, stop);
          wall += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        }
      } catch (...) {
        if (gpu) session_.release_stream();
        throw;
      }
    } else {
      warmup_s = std::max(0.0, opt.warmup_s - timed);  // the pilot samples were warm-up too
    }
  }

  Collector collector;
  benchmark::ClearRegisteredBenchmarks();
  auto* bench = benchmark::RegisterBenchmark(bench_name.c_str(), fn);
  bench->UseManualTime()
      ->Repetitions(std::max({1, opt.repetitions, spec.min_repetitions}))
      ->ComputeStatistics("min", stat_min)
      ->ComputeStatistics("max", stat_max)
      ->Unit(benchmark::kMicrosecond);
  if (fixed_iterations)
    bench->Iterations(*fixed_iterations);  // Google Benchmark refuses a warm-up time with it
  else if (opt.min_time_s > 0)
    bench->MinTime(opt.min_time_s)->MinWarmUpTime(warmup_s);
  else
    bench->Iterations(1);  // no minimum time: a sample is one call (Google Benchmark aborts on MinTime(0))
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::ClearRegisteredBenchmarks();
  if (failure) std::rethrow_exception(failure);
  if (!collector.error.empty()) {
    if (session_.interrupted()) throw std::runtime_error("interrupted");
    throw std::runtime_error("measurement '" + spec.name + "' failed: " + collector.error);
  }

  static const CounterInfo infos[] = {
      {"time", "time", "s", false, MetricRole::performance},
      {"flop_rate", "rate", "GFLOP/s", true, MetricRole::performance},
      {"bandwidth", "bandwidth", "GB/s", true, MetricRole::performance},
      {"sm_clock", "SM clock (probe)", "MHz", true, MetricRole::environment},
      {"nvml_sm_clock", "SM clock (NVML)", "MHz", true, MetricRole::environment},
      {"power", "power (NVML)", "W", false, MetricRole::environment},
      {"temperature", "temperature (NVML)", "C", false, MetricRole::environment},
  };
  const bool has_rate = collector.samples.count("flop_rate") || collector.samples.count("bandwidth");
  const std::string label = spec.label.empty() ? spec.name : spec.label;
  for (const auto& info : infos) {
    auto it = collector.samples.find(info.tag);
    if (it == collector.samples.end()) continue;
    Metric m;
    m.tag = spec.name + "/" + info.tag;
    m.name = label + " " + info.name;
    m.unit = info.unit;
    m.samples = it->second;
    m.stats = collector.stats[info.tag];
    m.value = m.stats.count("median") ? m.stats["median"] : m.samples.front();
    add_robust_stats(m.stats, m.samples);
    m.higher_is_better = info.higher_is_better;
    m.role = info.role;
    m.headline = info.role == MetricRole::performance && (has_rate ? std::string(info.tag) != "time" : true);
    result_.metrics.push_back(std::move(m));
  }
  return true;
}

}  // namespace gpufact
