// Where the time of a hybrid factorization goes (volkov08 §6.2, Fig. 10): GPU intervals timed with
// CUDA events around the enqueued work, host intervals with a steady clock, both on one timeline
// (the events are read relative to an anchor event the host waited for at start()). Events come
// from a pool reused across runs, so instrumenting costs no allocation after the first run.
#pragma once

#include "core/cuda/stream.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace gpufact::dense {

// gpu_u12: the GPU-resident LU's U12 = inv(L11)·A12 (or trsm), apart from its trailing GEMM (gpu_compute).
enum class Phase { gpu_compute, pivoting, transpose, transfer, cpu_panel, gpu_panel, gpu_u12, count };
const char* phase_name(Phase p);  // "gpu_compute", ...

// [begin, end) in seconds on a common timeline.
using TimeInterval = std::pair<double, double>;

// Total length of the union of `a` (any order, overlaps allowed).
double union_length(std::vector<TimeInterval> a);
// Length of (∪a) ∩ (∪b): the time during which both activities ran.
double intersection_length(std::vector<TimeInterval> a, std::vector<TimeInterval> b);

struct PhaseTotals {
  std::array<double, static_cast<std::size_t>(Phase::count)> seconds{};
  double blas3_flops = 0;  // flops of the timed GEMM/trsm calls (the BLAS3 rate inside the factorization)
  double wall_s = 0;       // start() to stop() (or finish()), host clock
  // Measured from the intervals' timestamps: time during which a panel factorization (CPU or GPU
  // panel) ran while other GPU work (updates, transfers, pivoting, transposes) ran too ...
  double overlap = 0;
  // ... and the part of it during which that other work was a trailing update (gpu_compute).
  double overlap_compute = 0;
  // Wall time covered by no interval at all: host overhead, launch gaps, synchronizations.
  double idle = 0;
  double operator[](Phase p) const { return seconds[static_cast<std::size_t>(p)]; }
  double overlap_s() const { return overlap; }
};

class PhaseTimer {
 public:
  // Host clock zero; records an anchor event on `s` and waits for it, so GPU events and host
  // timestamps share a timeline (within the synchronization's latency, a few µs). Clears intervals.
  void start(cudaStream_t s);
  // Enqueues a start event on `s`; the matching stop() ends the interval on the same stream.
  void gpu_begin(Phase p, cudaStream_t s);
  void gpu_end(cudaStream_t s, double flops = 0);
  // A host interval [begin, end).
  void host_interval(Phase p, std::chrono::steady_clock::time_point begin, std::chrono::steady_clock::time_point end);
  void stop();  // ends the wall interval (the factorization returned); finish() does it otherwise
  // Waits for every recorded event and sums the intervals (call after the work has finished).
  PhaseTotals finish();

 private:
  struct Interval {
    Phase phase;
    std::size_t start, stop;
    double flops;
  };
  std::size_t next_event();
  std::vector<Event> pool_;
  Event anchor_;
  std::size_t used_ = 0;
  std::vector<Interval> intervals_;
  std::vector<std::pair<Phase, TimeInterval>> host_intervals_;
  bool open_ = false, stopped_ = false;
  PhaseTotals totals_;
  std::chrono::steady_clock::time_point t0_, t1_;
};

// RAII interval: GPU phase around the enqueues in scope (no-op with a null timer).
class GpuPhase {
 public:
  GpuPhase(PhaseTimer* t, Phase p, cudaStream_t s, double flops = 0) : t_(t), s_(s), flops_(flops) {
    if (t_) t_->gpu_begin(p, s_);
  }
  ~GpuPhase() {
    try {
      if (t_) t_->gpu_end(s_, flops_);
    } catch (...) {  // a failed event record loses one interval, never the factorization
    }
  }
  GpuPhase(const GpuPhase&) = delete;
  GpuPhase& operator=(const GpuPhase&) = delete;

 private:
  PhaseTimer* t_;
  cudaStream_t s_;
  double flops_;
};

// RAII host interval (no-op with a null timer).
class HostPhase {
 public:
  HostPhase(PhaseTimer* t, Phase p) : t_(t), p_(p), t0_(std::chrono::steady_clock::now()) {}
  ~HostPhase() {
    if (t_) t_->host_interval(p_, t0_, std::chrono::steady_clock::now());
  }
  HostPhase(const HostPhase&) = delete;
  HostPhase& operator=(const HostPhase&) = delete;

 private:
  PhaseTimer* t_;
  Phase p_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace gpufact::dense
