// From change points to the memory system (volkov08 §3.3, Fig. 2): TLB levels from knees at
// several strides, and the values a result is judged against: the paper's 8800GTX numbers and
// a small built-in table of published values per GPU model (REFERENCE.md).
#pragma once

#include "microbench/memory/change_points.hpp"

#include <optional>
#include <string>
#include <vector>

namespace gpufact::microbench {

// One TLB level seen at knee index `level` of latency-vs-bytes curves taken at several strides
// (each access on its own page once stride >= page). Dense access reaches entries × page; at a
// stride s >= page the knee sits at entries × s. So entries = min over strides of knee / s
// (strides >= page) and page = knee at the smallest stride / entries (if that stride < page).
struct TlbLevel {
  double reach_bytes = 0;    // knee at the smallest stride
  double entries = 0;
  double page_bytes = 0;
  bool page_is_upper_bound = false;  // the smallest stride was already >= the page
  double hit_cycles = 0, miss_cycles = 0;  // plateau below and above (at the largest stride)
};
std::vector<TlbLevel> infer_tlb_levels(const std::vector<double>& strides, const std::vector<StepCurve>& curves);

// Capacity of the level whose plateau ends at the curve's last big rise (L2 before DRAM), by
// the midpoint rule: the size where the latency first reaches halfway between that plateau and
// the last one, i.e. where half of the accesses miss. A knee (last size on the plateau) cannot
// place it: the replacement policy and the L2 partitions make the rise gradual, spread over an
// octave or more, and two points per octave straddle it. The lower plateau is the last one
// between the first and the last that spans an octave (else the widest); the crossing is the
// first point beyond it from which two consecutive points stay at or above the midpoint (one
// noisy point does not cross), placed by linear interpolation in log size between it and the
// point before.
struct MidpointCrossing {
  double bytes = 0;                    // interpolated size at the midpoint
  double x_before = 0, x_after = 0;    // the measured sizes around it
  double lower = 0, upper = 0, midpoint = 0;  // plateau levels and their mean (cycles)
};
std::optional<MidpointCrossing> midpoint_crossing(const std::vector<double>& x, const std::vector<double>& y,
                                                  const StepCurve& curve);

struct Expectation {
  std::string quantity;  // "l1_hit_cycles", "l1_capacity_bytes", ...
  double low = 0, high = 0;
  std::string unit;
  std::string source;
};

// Expected values for the GPU model named `gpu_name` (H100, H200), empty for other models.
std::vector<Expectation> expected_memory_system(const std::string& gpu_name);
// The paper's 8800GTX values (volkov08 §3.3 and Fig. 2).
std::vector<Expectation> paper_8800gtx();
std::optional<Expectation> find_expectation(const std::vector<Expectation>& table, const std::string& quantity);

// Whether `value` lies within [low, high] widened by `tolerance` (relative) on each side.
bool outside_expected(double value, const Expectation& e, double tolerance = 0.10);

}  // namespace gpufact::microbench
