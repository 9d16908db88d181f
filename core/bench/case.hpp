// What an experiment's run function sees: its axis point, the session (system, device, stream,
// measurement options), and the result it fills in. Summary is what a summarize hook sees.
#pragma once

#include "core/bench/axis.hpp"
#include "core/bench/measure.hpp"
#include "core/report/result.hpp"
#include "core/system/inventory.hpp"

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact {

struct Experiment;

struct MeasureOptions {
  int repetitions = 5;      // samples per measurement (Google Benchmark repetitions)
  double min_time_s = 0.05;  // each repetition runs at least this long
  double warmup_s = 0.02;    // Google Benchmark's MinWarmUpTime
};

// Thrown by Case::skip(); the runner records `skipped` with the reason.
class SkipCase : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Session {
 public:
  Session(SystemInfo system, int device, MeasureOptions options, const std::atomic<bool>* interrupted);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const SystemInfo& system() const { return system_; }
  bool has_gpu() const { return !system_.gpus.empty(); }
  int device() const { return device_; }
  const GpuSummary& gpu() const;  // the selected device; throws without one
  const MeasureOptions& options() const { return options_; }
  bool interrupted() const { return interrupted_ && interrupted_->load(); }

  cudaStream_t stream();               // one non-blocking stream on the selected device
  void flush_l2(cudaStream_t stream);  // overwrites 2× the L2 size (buffer made on first use)
  double probe_sm_clock_mhz(cudaStream_t stream);  // clock64 cycles over %globaltimer ns
  // Holds `stream` until release_stream(); see kernels/common/block_stream.cuh.
  void hold_stream(cudaStream_t stream);
  void release_stream();  // harmless when nothing is held
  bool hold_timed_out();  // the last hold gave up before release_stream()

 private:
  struct DeviceState;
  DeviceState& device_state();
  SystemInfo system_;
  int device_ = 0;
  MeasureOptions options_;
  const std::atomic<bool>* interrupted_ = nullptr;
  std::unique_ptr<DeviceState> state_;
};

class Case {
 public:
  Case(Session& session, const Experiment& experiment, AxisPoint point, Result& result);

  const AxisPoint& point() const { return point_; }
  const Experiment& experiment() const { return experiment_; }
  std::int64_t integer(std::string_view axis) const { return point_.integer(axis); }
  double real(std::string_view axis) const { return point_.real(axis); }
  const std::string& text(std::string_view axis) const { return point_.text(axis); }
  std::uint64_t seed() const { return seed_; }
  Session& session() { return session_; }
  cudaStream_t stream() { return session_.stream(); }
  Result& result() { return result_; }

  // Times spec as one Google Benchmark instance and appends its metrics to the result. Returns
  // false when --benchmark_filter excludes it: the body never ran, so check nothing it would make.
  [[nodiscard]] bool measure(const MeasureSpec& spec);
  void add_metric(Metric m) { result_.metrics.push_back(std::move(m)); }
  // Records a check; the result passes only if every check has error <= tolerance (NaN fails).
  void verify(const std::string& method, double error, double tolerance);
  [[noreturn]] void skip(const std::string& reason) { throw SkipCase(reason); }
  // Skips the case, naming both sizes, unless `bytes` of device memory are free (checked before
  // allocating, so an oversized case never fails half-way).
  void require_device_memory(std::size_t bytes);

 private:
  Session& session_;
  const Experiment& experiment_;
  AxisPoint point_;
  Result& result_;
  std::uint64_t seed_;
  bool checked_ = false;
  bool failed_ = false;
};

class Summary {
 public:
  Summary(Session& session, const Experiment& experiment, std::vector<Result> finished)
      : session_(session), experiment_(experiment), finished_(std::move(finished)) {}
  Session& session() { return session_; }
  const Experiment& experiment() const { return experiment_; }
  const std::vector<Result>& results() const { return finished_; }  // this experiment's, this run
  void add(Result r) { derived_.push_back(std::move(r)); }
  std::vector<Result>& derived() { return derived_; }

 private:
  Session& session_;
  const Experiment& experiment_;
  std::vector<Result> finished_;
  std::vector<Result> derived_;
};

}  // namespace gpufact
