// Where the time of a hybrid factorization goes (volkov08 §6.2, Fig. 10): GPU intervals timed with
// CUDA events around the enqueued work, host intervals with a steady clock. Events come from a pool
// reused across runs, so instrumenting costs no allocation after the first run.
#pragma once

#include "core/cuda/stream.hpp"

#include <array>
#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

namespace gpufact::dense {

enum class Phase { gpu_compute, pivoting, transpose, transfer, cpu_panel, gpu_panel, count };
const char* phase_name(Phase p);  // "gpu_compute", ...

struct PhaseTotals {
  std::array<double, static_cast<std::size_t>(Phase::count)> seconds{};
  double blas3_flops = 0;  // flops of the timed GEMM/trsm calls (the BLAS3 rate inside the factorization)
  double wall_s = 0;       // the whole call, host clock
  double operator[](Phase p) const { return seconds[static_cast<std::size_t>(p)]; }
  // Time in which CPU and GPU work ran at once: the sum of the parts beyond the wall time.
  double overlap_s() const;
};

class PhaseTimer {
 public:
  void start();  // host clock; clears the intervals
  // Enqueues a start event on `s`; the matching stop() ends the interval on the same stream.
  void gpu_begin(Phase p, cudaStream_t s);
  void gpu_end(cudaStream_t s, double flops = 0);
  void host_add(Phase p, double seconds) { totals_.seconds[static_cast<std::size_t>(p)] += seconds; }
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
  std::size_t used_ = 0;
  std::vector<Interval> intervals_;
  bool open_ = false;
  PhaseTotals totals_;
  std::chrono::steady_clock::time_point t0_;
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

}  // namespace gpufact::dense
