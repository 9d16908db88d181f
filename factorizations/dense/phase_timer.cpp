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
    case Phase::gpu_u12: return "gpu_u12";
    case Phase::count: break;
  }
  return "unknown";
}

namespace {

// Sorted, disjoint intervals covering the same set.
std::vector<TimeInterval> merged(std::vector<TimeInterval> a) {
  std::erase_if(a, [](const TimeInterval& x) { return !(x.second > x.first); });
  std::sort(a.begin(), a.end());
  std::vector<TimeInterval> out;
  for (const auto& x : a) {
    if (!out.empty() && x.first <= out.back().second)
      out.back().second = std::max(out.back().second, x.second);
    else
      out.push_back(x);
  }
  return out;
}

}  // namespace

double union_length(std::vector<TimeInterval> a) {
  double sum = 0;
  for (const auto& x : merged(std::move(a))) sum += x.second - x.first;
  return sum;
}

double intersection_length(std::vector<TimeInterval> a, std::vector<TimeInterval> b) {
  const auto x = merged(std::move(a)), y = merged(std::move(b));
  double sum = 0;
  std::size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    const double lo = std::max(x[i].first, y[j].first), hi = std::min(x[i].second, y[j].second);
    if (hi > lo) sum += hi - lo;
    if (x[i].second < y[j].second)
      ++i;
    else
      ++j;
  }
  return sum;
}

void PhaseTimer::start(cudaStream_t s) {
  used_ = 0;
  intervals_.clear();
  host_intervals_.clear();
  open_ = false;
  stopped_ = false;
  totals_ = {};
  anchor_.record(s);
  anchor_.synchronize();
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

void PhaseTimer::host_interval(Phase p, std::chrono::steady_clock::time_point begin,
                               std::chrono::steady_clock::time_point end) {
  const double b = std::chrono::duration<double>(begin - t0_).count();
  const double e = std::chrono::duration<double>(end - t0_).count();
  host_intervals_.push_back({p, {b, e}});
}

void PhaseTimer::stop() {
  t1_ = std::chrono::steady_clock::now();
  stopped_ = true;
}

PhaseTotals PhaseTimer::finish() {
  if (!stopped_) stop();
  std::vector<TimeInterval> panel, other, compute, all;
  for (const auto& iv : intervals_) {
    pool_[iv.stop].synchronize();
    const TimeInterval t{Event::elapsed_seconds(anchor_, pool_[iv.start]), Event::elapsed_seconds(anchor_, pool_[iv.stop])};
    totals_.seconds[static_cast<std::size_t>(iv.phase)] += t.second - t.first;
    if (iv.phase == Phase::gpu_compute) {
      totals_.blas3_flops += iv.flops;
      compute.push_back(t);
    }
    (iv.phase == Phase::gpu_panel ? panel : other).push_back(t);
    all.push_back(t);
  }
  for (const auto& [p, t] : host_intervals_) {
    totals_.seconds[static_cast<std::size_t>(p)] += t.second - t.first;
    if (p == Phase::cpu_panel) panel.push_back(t);
    all.push_back(t);
  }
  totals_.wall_s = std::chrono::duration<double>(t1_ - t0_).count();
  totals_.overlap = intersection_length(panel, other);
  totals_.overlap_compute = intersection_length(panel, compute);
  totals_.idle = std::max(0.0, totals_.wall_s - union_length(all));
  return totals_;
}

}  // namespace gpufact::dense
