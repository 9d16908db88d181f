#include "factorizations/dense/phase_timer.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpufact::dense {

const char* phase_name(Phase p) {
  switch (p) {
    case Phase::gpu_compute: return "gpu_compute";
    case Phase::pivoting: return "pivoting";
    case Phase::transpose: return "transpose";
    case Phase::transfer: return "transfer";
    case Phase::cpu_panel: return "cpu_panel";
    case Phase::gpu_panel: return "gpu_panel";
    case Phase::count: break;
  }
  return "unknown";
}

double PhaseTotals::overlap_s() const {
  double sum = 0;
  for (double s : seconds) sum += s;
  return std::max(0.0, sum - wall_s);
}

void PhaseTimer::start() {
  used_ = 0;
  intervals_.clear();
  open_ = false;
  totals_ = {};
  t0_ = std::chrono::steady_clock::now();
}

std::size_t PhaseTimer::next_event() {
  if (used_ == pool_.size()) pool_.emplace_back();
  return used_++;
}

void PhaseTimer::gpu_begin(Phase p, cudaStream_t s) {
  if (open_) throw std::logic_error("PhaseTimer: nested GPU intervals");
  const std::size_t e = next_event();
  pool_[e].record(s);
  intervals_.push_back({p, e, e, 0});
  open_ = true;
}

void PhaseTimer::gpu_end(cudaStream_t s, double flops) {
  if (!open_) throw std::logic_error("PhaseTimer: gpu_end without gpu_begin");
  const std::size_t e = next_event();
  pool_[e].record(s);
  intervals_.back().stop = e;
  intervals_.back().flops = flops;
  open_ = false;
}

PhaseTotals PhaseTimer::finish() {
  for (const auto& iv : intervals_) {
    pool_[iv.stop].synchronize();
    totals_.seconds[static_cast<std::size_t>(iv.phase)] += Event::elapsed_seconds(pool_[iv.start], pool_[iv.stop]);
    if (iv.phase == Phase::gpu_compute) totals_.blas3_flops += iv.flops;
  }
  totals_.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  return totals_;
}

}  // namespace gpufact::dense
