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

// Which plateaus of a one-SM capacity curve (latency vs array size) are the memory levels. The
// rule is one for every level: a level is a plateau that spans at least an octave of sizes
// (x_last / x_first >= 2); a few points at one latency inside a transition (the L1 knee's tail,
// a TLB step) are not levels. On the H200: L1 32 cycles; transitions at 236 and 263 cycles over
// 252-279 KB; L2 281 cycles from 285 KB to 2.5 MB; 292 to 3.5 MB; 320 from 4 to 40 MB (the L1 TLB
// reach passed); a gradual climb to DRAM (683 cycles) by 91 MB.
struct CapacityLevels {
  std::size_t l1 = 0;                    // the first plateau
  std::optional<std::size_t> l2_hit;     // the first level above L1 (else the widest plateau between)
  std::optional<std::size_t> l2_before_climb;  // the last level before DRAM: its end is the miss onset
  std::optional<std::size_t> dram;       // the last level beyond the L2 (else the last plateau)
};
// Fills l2_* and dram only with at least three plateaus.
CapacityLevels capacity_levels(const StepCurve& curve);

// Capacity of the level whose plateau ends at the curve's last big rise (L2 before DRAM), by
// the midpoint rule: the size where the latency first reaches halfway between that plateau and
// the DRAM one, i.e. where half of the accesses miss. A knee (last size on the plateau) cannot
// place it: the replacement policy and the L2 partitions make the rise gradual, spread over an
// octave or more, and two points per octave straddle it. The plateaus are capacity_levels'
// l2_before_climb and dram; the crossing is the first point beyond the lower one from which two
// consecutive points stay at or above the midpoint (one noisy point does not cross), placed by
// linear interpolation in log size between it and the point before.
struct MidpointCrossing {
  double bytes = 0;                    // interpolated size at the midpoint
  double x_before = 0, x_after = 0;    // the measured sizes around it
  double lower = 0, upper = 0, midpoint = 0;  // plateau levels and their mean (cycles)
};
std::optional<MidpointCrossing> midpoint_crossing(const std::vector<double>& x, const std::vector<double>& y,
                                                  const StepCurve& curve);

// Where the climb from the L2 to DRAM begins and ends (one SM). The band around a level is the
// relative difference below which the segmentation takes two levels for one (merge_threshold:
// the larger of SegmentOptions::merge_relative and 3σ of the curve's noise). The onset is the
// last size before the first point from which the latency stays above the L2 level's band (two
// consecutive points, so one noisy point is not the onset); the all-miss size is the first
// point after it from which the latency stays within the DRAM level's band.
struct MissRange {
  double onset_bytes = 0, onset_next_bytes = 0;  // last size on the L2 level; the next size measured
  double all_miss_bytes = 0;       // first size at the DRAM level; 0 when the sweep never gets there
  double all_miss_prev_bytes = 0;  // the size measured before it
  double l2_cycles = 0, dram_cycles = 0;
  double tolerance = 0;  // the relative band
};
std::optional<MissRange> miss_range(const std::vector<double>& x, const std::vector<double>& y, const StepCurve& curve,
                                    const SegmentOptions& opt = {});

// Whether an L2 miss onset at `onset_bytes` (the next size measured: `onset_next_bytes`) is
// consistent with 2/3 of an L2 of `l2_bytes`: 2/3 of it lies in [onset × 0.9, next × 1.1].
bool onset_near_two_thirds(double onset_bytes, double onset_next_bytes, double l2_bytes);

// L2 near/far partition latencies from per-access traces of arrays of increasing size. Clusters
// at a DRAM latency are misses: a cluster is a hit when its median is below `miss_fraction` ×
// `dram_cycles` (no DRAM latency given: every cluster is a hit). Outlier clusters are dropped.
inline constexpr double kMissFractionOfDram = 0.85;
bool is_miss_cluster(const Cluster& c, double dram_cycles, double miss_fraction = kMissFractionOfDram);
std::vector<Cluster> hit_clusters(const std::vector<Cluster>& clusters, double dram_cycles,
                                  double miss_fraction = kMissFractionOfDram);
struct PartitionSplit {
  std::size_t trace = 0;  // which trace showed two hit clusters
  Cluster near, far;      // its two most populated hit clusters, by latency
};
// The first trace (in the order given) with two or more hit clusters; nullopt when none has.
std::optional<PartitionSplit> split_partitions(const std::vector<std::vector<Cluster>>& traces, double dram_cycles,
                                               double miss_fraction = kMissFractionOfDram);

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
