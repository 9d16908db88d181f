// volkov08.fig2 (volkov08 §3.3, Fig. 2): the memory system inferred from pointer chases. Each
// case is one targeted sweep (a "study") run with fig1's kernels; change-point detection on its
// curves gives capacities (knees) and latencies (plateaus). The summary prints one table beside
// the paper's 8800GTX values and the published values for the detected GPU, flagging mismatches.
#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/buffer.hpp"
#include "core/errors.hpp"
#include "microbench/memory/change_points.hpp"
#include "microbench/sampled_metric.hpp"
#include "microbench/memory/chase_report.hpp"
#include "microbench/memory/memory.hpp"
#include "microbench/memory/memory_inference.hpp"
#include "microbench/memory/pointer_chase.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>

namespace gpufact::microbench {
namespace {

std::string two_decimals(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

constexpr std::size_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
constexpr double kPointBudgetCycles = 20e6;  // per timed pass of one sweep point (~12 ms)
constexpr double kWalkBudgetCycles = 16e6;   // per verification walk

using kernels::ChaseAccess;
using kernels::ChaseWidth;

// One latency curve: y (cycles per access, median over repetitions) at increasing x.
struct Sweep {
  std::vector<double> x, y, y_max;
  void add(double xv, double yv, double ymax) {
    const auto it = std::lower_bound(x.begin(), x.end(), xv);
    const auto i = it - x.begin();
    if (it != x.end() && *it == xv) return;
    x.insert(it, xv);
    y.insert(y.begin() + i, yv);
    y_max.insert(y_max.begin() + i, ymax);
  }
  bool has(double xv) const { return std::binary_search(x.begin(), x.end(), xv); }
  std::vector<double> values_in(const Level& lv) const {
    std::vector<double> v;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (x[i] >= lv.x_first && x[i] <= lv.x_last) v.push_back(y[i]);
    return v;
  }
};

nlohmann::json curve_json(const Sweep& sw, const StepCurve& c, const std::string& x_name) {
  nlohmann::json plateaus = nlohmann::json::array(), knees = nlohmann::json::array();
  for (const auto& p : c.plateaus)
    plateaus.push_back({{"x_first", p.x_first}, {"x_last", p.x_last}, {"cycles", p.level}, {"stddev", p.stddev},
                        {"points", p.points}});
  for (const auto& k : c.knees)
    knees.push_back({{"x_below", k.x_below}, {"x_above", k.x_above}, {"from_cycles", k.from}, {"to_cycles", k.to}});
  return {{"x", x_name}, {"x_values", sw.x}, {"cycles", sw.y}, {"noise_log_sigma", c.noise},
          {"plateaus", plateaus}, {"knees", knees}};
}

std::vector<std::size_t> size_grid(std::size_t lo, std::size_t hi, int per_octave, std::size_t multiple) {
  std::vector<std::size_t> out;
  for (int i = 0;; ++i) {
    const double v = static_cast<double>(lo) * std::pow(2.0, static_cast<double>(i) / per_octave);
    if (v > static_cast<double>(hi) * 1.0001) break;
    auto b = static_cast<std::size_t>(std::llround(v / static_cast<double>(multiple))) * multiple;
    b = std::max(b, multiple);
    if (out.empty() || b > out.back()) out.push_back(b);
  }
  return out;
}

// Runs sweep points, counting failed checks; a point whose cycle fails its checks is not timed.
class StudyRunner {
 public:
  explicit StudyRunner(Case& c) : c_(c), reps_(std::clamp(c.session().options().repetitions, 2, 3)) {}

  std::optional<ChasePoint> point(ChaseBench& bench, const ChaseSpec& spec) {
    if (c_.session().interrupted()) throw std::runtime_error("interrupted");
    ++points_;
    const std::uint64_t bad = bench.prepare(spec, kWalkBudgetCycles);
    if (bad) {
      mismatches_ += bad;
      if (detail_.empty()) detail_ = "bytes=" + std::to_string(spec.bytes) + ": " + bench.check_detail();
      return std::nullopt;
    }
    ChasePoint pt = bench.measure(reps_, budget_cycles_, 4096);
    mismatches_ += pt.mismatches;
    if (!pt.mismatch_detail.empty() && detail_.empty()) detail_ = pt.mismatch_detail;
    if (spec.blocks > 1) wrong_sms_ += static_cast<std::uint64_t>(spec.blocks - pt.distinct_sms);
    return pt;
  }
  void measure_into(Sweep& sw, double x, ChaseBench& bench, const ChaseSpec& spec) {
    if (auto pt = point(bench, spec)) sw.add(x, pt->cycles, pt->max_over_sms);
  }
  void finish() {
    c_.result().data["sweep_points"] = points_;
    if (!detail_.empty()) c_.result().reason = detail_;
    c_.verify("sweep points whose cycle checks failed or whose chase ended at the wrong index (" +
                  std::to_string(points_) + " points)",
              static_cast<double>(mismatches_), 0);
    if (wrong_sms_ > 0 || multi_) c_.verify("blocks sharing an SM (one chase per SM expected)", static_cast<double>(wrong_sms_), 0);
  }
  void multi() { multi_ = true; }
  void set_budget_cycles(double b) { budget_cycles_ = b; }
  std::uint64_t mismatches() const { return mismatches_; }
  void add_mismatches(std::uint64_t n, const std::string& why) {
    mismatches_ += n;
    if (n && detail_.empty()) detail_ = why;
  }

 private:
  Case& c_;
  int reps_;
  double budget_cycles_ = kPointBudgetCycles;
  std::uint64_t points_ = 0, mismatches_ = 0, wrong_sms_ = 0;
  bool multi_ = false;
  std::string detail_;
};

// Adds up to `n` points strictly inside each knee interval, multiples of `multiple`.
void refine_knees(Sweep& sw, const StepCurve& curve, int n, std::size_t multiple,
                  const std::function<void(std::size_t)>& measure_at, std::size_t max_knees = 8) {
  std::size_t done = 0;
  for (const auto& k : curve.knees) {
    if (done++ == max_knees) break;
    for (int i = 1; i <= n; ++i) {
      const double v = k.x_below + (k.x_above - k.x_below) * i / (n + 1);
      const auto b = static_cast<std::size_t>(std::llround(v / static_cast<double>(multiple))) * multiple;
      if (static_cast<double>(b) <= k.x_below || static_cast<double>(b) >= k.x_above || sw.has(static_cast<double>(b)))
        continue;
      measure_at(b);
    }
  }
}

// A latency level as two metrics, cycles and ns, with the plateau's points as samples.
void add_level(Case& c, const std::string& key, const std::string& name, const std::vector<double>& cycles, double mhz) {
  c.add_metric(
      with_samples({.tag = key + "_cycles", .name = name + " (cycles)", .unit = "cycles", .headline = true, .role = MetricRole::derived},
                   cycles));
  if (mhz > 0) {
    std::vector<double> ns;
    for (double v : cycles) ns.push_back(v * 1e3 / mhz);
    c.add_metric(with_samples({.tag = key + "_ns", .name = name + " (ns)", .unit = "ns", .role = MetricRole::derived}, ns));
  }
}

void add_capacity(Case& c, const std::string& key, const std::string& name, const Knee& k) {
  c.add_metric(derived_metric(key, name + ": last size at the lower level", "B", k.x_below, false));
  c.result().data[key + "_interval"] = {k.x_below, k.x_above};
}

std::size_t sweep_ceiling(Case& c, std::size_t want, int blocks) {
  const std::size_t free = device_free_bytes();
  const std::size_t margin = 1 * GiB;
  std::size_t hi = want;
  while (hi > 64 * MiB && hi * static_cast<std::size_t>(blocks) + margin > free) hi /= 2;
  if (hi * static_cast<std::size_t>(blocks) + margin > free)
    c.skip("not enough free device memory for the sweep (" + std::to_string(free >> 20) + " MiB free)");
  return hi;
}

std::size_t pow2_at_least(double v) {
  std::size_t p = 1;
  while (static_cast<double>(p) < v) p *= 2;
  return p;
}

// L1 and L2 capacity and the latency of each level: ca loads at a 128-byte stride (a new line
// per access) over 4 KB … 4 × L2, knees refined; plus the shared-memory latency.
void study_capacity(Case& c, StudyRunner& r, int per_octave, double mhz) {
  cudaStream_t s = c.stream();
  const std::size_t hi = sweep_ceiling(c, std::max<std::size_t>(pow2_at_least(4.0 * static_cast<double>(c.session().gpu().l2_bytes)), 256 * MiB), 1);
  ChaseBench bench(hi, 1, s);
  // Address chases: latencies without index arithmetic, comparable with published figures.
  ChaseSpec spec{.stride_bytes = 128, .access = ChaseAccess::global_ca, .width = ChaseWidth::address};
  Sweep sw;
  auto at = [&](std::size_t b) {
    spec.bytes = b;
    r.measure_into(sw, static_cast<double>(b), bench, spec);
  };
  for (auto b : size_grid(4 * KiB, hi, per_octave, 128)) at(b);
  if (sw.x.size() < 3) return;
  StepCurve curve = find_steps(sw.x, sw.y);
  refine_knees(sw, curve, 4 * per_octave, 128, at);
  curve = find_steps(sw.x, sw.y);
  c.result().data["curve"] = curve_json(sw, curve, "bytes");

  if (!curve.plateaus.empty()) add_level(c, "l1_hit", "L1 hit latency", sw.values_in(curve.plateaus.front()), mhz);
  if (!curve.knees.empty()) add_capacity(c, "l1_capacity_bytes", "L1 capacity", curve.knees.front());
  // L2 capacity by the midpoint rule, after a second pass at 8 points per octave around the
  // crossing (a quarter octave beyond it on each side).
  if (auto m = midpoint_crossing(sw.x, sw.y, curve)) {
    const double lo = m->x_before * std::pow(2.0, -0.25);
    const double top = std::min(m->x_after * std::pow(2.0, 0.25), static_cast<double>(hi));
    for (double v = lo; v <= top; v *= std::pow(2.0, 1.0 / 8)) {
      const auto b = static_cast<std::size_t>(std::llround(v / 128.0)) * 128;
      if (!sw.has(static_cast<double>(b))) at(b);
    }
    curve = find_steps(sw.x, sw.y);
    c.result().data["curve"] = curve_json(sw, curve, "bytes");
  }
  // Miss onset: a few more points between the last size on the L2 level and the next one.
  if (auto range = miss_range(sw.x, sw.y, curve)) {
    const double step = (range->onset_next_bytes - range->onset_bytes) / 4;
    for (int i = 1; i <= 3; ++i) {
      const auto b = static_cast<std::size_t>(std::llround((range->onset_bytes + i * step) / 128.0)) * 128;
      if (static_cast<double>(b) > range->onset_bytes && static_cast<double>(b) < range->onset_next_bytes &&
          !sw.has(static_cast<double>(b)))
        at(b);
    }
    curve = find_steps(sw.x, sw.y);
    c.result().data["curve"] = curve_json(sw, curve, "bytes");
  }
  const auto levels = capacity_levels(curve);
  if (levels.l2_hit && levels.dram) {
    const Level& l2 = curve.plateaus[*levels.l2_hit];
    const Level& dram = curve.plateaus[*levels.dram];
    if (auto m = midpoint_crossing(sw.x, sw.y, curve)) {
      c.add_metric(derived_metric("l2_capacity_bytes", "L2 capacity (one SM): size where half the accesses miss", "B",
                                  m->bytes, false));
      c.result().data["l2_capacity_bytes_interval"] = {m->x_before, m->x_after};
      c.result().data["l2_capacity_rule"] = {{"rule", "latency halfway between the L2 and DRAM plateaus"},
                                             {"l2_plateau_cycles", m->lower}, {"dram_plateau_cycles", m->upper},
                                             {"midpoint_cycles", m->midpoint}, {"last_knee_bytes", curve.knees.back().x_below}};
    } else {
      add_capacity(c, "l2_capacity_bytes", "L2 capacity (one SM)", curve.knees.back());
    }
    if (auto range = miss_range(sw.x, sw.y, curve)) {
      const double device_l2 = static_cast<double>(c.session().gpu().l2_bytes);
      c.add_metric(derived_metric("l2_miss_onset_bytes", "L2 miss onset (one SM): last size on the L2 plateau", "B",
                                  range->onset_bytes, false));
      c.result().data["l2_miss_onset_bytes_interval"] = {range->onset_bytes, range->onset_next_bytes};
      if (range->all_miss_bytes > 0) {
        c.add_metric(derived_metric("l2_all_miss_bytes", "L2 all-miss size (one SM): first size at the DRAM plateau",
                                    "B", range->all_miss_bytes, false));
        c.result().data["l2_all_miss_bytes_interval"] = {range->all_miss_prev_bytes, range->all_miss_bytes};
      }
      c.result().data["l2_miss_range_rule"] = {
          {"rule", "onset: last size before the latency stays above the L2 plateau by more than the band; all-miss: "
                   "first size from which it stays within the band of the DRAM plateau"},
          {"band_relative", range->tolerance}, {"l2_plateau_cycles", range->l2_cycles}, {"dram_plateau_cycles", range->dram_cycles}};
      if (device_l2 > 0) {
        const double fraction = range->onset_bytes / device_l2;
        c.add_metric(derived_metric("l2_miss_onset_fraction", "L2 miss onset / device L2 size (cudaDeviceProp::l2CacheSize)",
                                    "", fraction, false, false));
        c.result().data["device_l2_bytes"] = device_l2;
        if (onset_near_two_thirds(range->onset_bytes, range->onset_next_bytes, device_l2)) {
          c.result().data["l2_capacity_note"] =
              "misses begin at ≈2/3 of the L2 (onset " + two_decimals(fraction) +
              " × the device's L2): consistent with lines homed in the far partition also taking a copy in the near "
              "one (one SM's view), so that one SM holds ~C/1.5 before evicting";
        }
      }
    }
    add_level(c, "l2_hit", "L2 hit latency, near and far lines mixed", sw.values_in(l2), mhz);
    add_level(c, "dram", "DRAM latency (stride 128 B, beyond L2)", sw.values_in(dram), mhz);
    c.result().data["l2_hit_plateau"] = {{"x_first", l2.x_first}, {"x_last", l2.x_last},
                                         {"rule", "first plateau after L1 spanning an octave of sizes"}};
    if (curve.plateaus.size() > 3)
      c.result().data["extra_levels"] =
          "more than three plateaus: levels between L2 and DRAM (partitions, TLB) are listed under curve";
  } else {
    c.result().reason = "found " + std::to_string(curve.plateaus.size()) +
                        " latency plateaus, expected L1, L2 and DRAM: see curve";
  }

  // Shared memory: the array copied in first, copy not timed (volkov08 §3.3 "local memory").
  ChaseBench shared(16 * KiB, 1, s);
  if (auto pt = r.point(shared, {.bytes = 16 * KiB, .stride_bytes = 128, .access = ChaseAccess::shared}))
    add_level(c, "shared", "shared-memory latency", pt->samples, mhz);
}

// Granularity: the stride from which latency stops rising (every access misses).
double plateau_start(const StepCurve& c) { return c.plateaus.empty() ? 0.0 : c.plateaus.back().x_first; }

// Sector and DRAM fetch: stride sweeps (ca on an array in L2 but not L1: L1 fill granularity; cg
// on an array beyond L2: how many bytes one DRAM miss brings into L2, which on sm_90 is a pair of
// 32 B sectors, less than the 128 B line (tag)) and a cold per-access trace at 4 B.
void study_line(Case& c, StudyRunner& r) {
  cudaStream_t s = c.stream();
  const double l2 = static_cast<double>(c.session().gpu().l2_bytes);
  std::vector<std::size_t> strides;
  for (std::size_t st = 4; st <= 1024; st *= 2) strides.push_back(st);

  ChaseBench mid(8 * MiB, 1, s);
  Sweep ca;
  for (auto st : strides)
    r.measure_into(ca, static_cast<double>(st), mid, {.bytes = 8 * MiB, .stride_bytes = st, .access = ChaseAccess::global_ca});
  const std::size_t big_bytes = sweep_ceiling(c, std::max<std::size_t>(pow2_at_least(4.0 * l2), 256 * MiB), 1);
  ChaseBench big(big_bytes, 1, s);
  Sweep cg;
  for (auto st : strides)
    r.measure_into(cg, static_cast<double>(st), big, {.bytes = big_bytes, .stride_bytes = st, .access = ChaseAccess::global_cg});
  if (ca.x.size() >= 3) {
    const auto curve = find_steps(ca.x, ca.y);
    c.result().data["ca_stride_curve_8M"] = curve_json(ca, curve, "stride");
    c.add_metric(derived_metric("sector_bytes", "L1 fill granularity (ca stride sweep, array in L2)", "B", plateau_start(curve), false));
  }
  if (cg.x.size() >= 3) {
    const auto curve = find_steps(cg.x, cg.y);
    c.result().data["cg_stride_curve_beyond_l2"] = curve_json(cg, curve, "stride");
    c.add_metric(derived_metric("dram_fetch_bytes", "DRAM fetch granularity into L2 (cg stride sweep, array > 4 × L2)", "B",
                         plateau_start(curve), false));
  }

  // Cold trace (L2 flushed, no warm-up) at 4 B on 1 MB: which accesses are slow, how far apart.
  ChaseBench cold(1 * MiB, 1, s);
  const ChaseSpec spec{.bytes = 1 * MiB, .stride_bytes = 4, .access = ChaseAccess::global_ca};
  const std::uint64_t bad = cold.prepare(spec, kWalkBudgetCycles);
  r.add_mismatches(bad, "trace array: " + cold.check_detail());
  if (bad) return;
  c.session().flush_l2(s);
  const auto tr = cold.trace(kernels::chase_trace_max, 0, false);
  r.add_mismatches(tr.mismatches, "cold trace: indices off the cycle");
  const std::vector<double> lat(tr.latency.begin(), tr.latency.end());
  std::vector<Cluster> levels;
  for (const auto& cl : cluster_values(lat))
    if (!cl.outlier) levels.push_back(cl);
  nlohmann::json lv = nlohmann::json::array();
  for (const auto& cl : levels) lv.push_back({{"median_cycles", cl.median}, {"fraction", cl.fraction}});
  c.result().data["cold_trace"] = {{"stride", 4}, {"latency_cycles", tr.latency}, {"levels", lv}};
  if (!levels.empty()) {
    c.add_metric(derived_metric("trace_sector_period_bytes", "cold trace: bytes between accesses slower than L1 hits", "B",
                         slow_access_period(lat, 1.5 * levels.front().median, 4), false, false));
    if (levels.size() >= 2)
      c.add_metric(derived_metric("trace_line_period_bytes", "cold trace: bytes between accesses at the slowest level", "B",
                           slow_access_period(lat, 0.5 * (levels[levels.size() - 2].median + levels.back().median), 4), false,
                           false));
  }
}

// TLB: cg loads (no L1, few lines: the data stays in L2) at strides of 64 KB … 32 MB over
// arrays up to several GB; knees move with the stride once it exceeds the page.
void study_tlb(Case& c, StudyRunner& r, int per_octave) {
  cudaStream_t s = c.stream();
  const std::size_t hi = sweep_ceiling(c, 8 * GiB, 1);
  ChaseBench bench(hi, 1, s);
  // Walk whole cycles (up to 2^17 pages): a chase that stops short would meet lines the L2 no
  // longer holds and show a knee of its own.
  r.set_budget_cycles(1000.0 * (1 << 17));
  const std::vector<std::size_t> strides = {64 * KiB, 2 * MiB, 32 * MiB};
  std::vector<double> used;
  std::vector<StepCurve> curves;
  nlohmann::json data = nlohmann::json::array();
  for (auto st : strides) {
    Sweep sw;
    for (auto b : size_grid(std::max<std::size_t>(st, 8 * MiB), hi, std::max(1, per_octave / 2), st))
      r.measure_into(sw, static_cast<double>(b), bench, {.bytes = b, .stride_bytes = st, .access = ChaseAccess::global_cg});
    if (sw.x.size() < 3) continue;
    const auto curve = find_steps(sw.x, sw.y);
    data.push_back({{"stride", st}, {"curve", curve_json(sw, curve, "bytes")}});
    used.push_back(static_cast<double>(st));
    curves.push_back(curve);
  }
  c.result().data["curves"] = data;
  const auto levels = infer_tlb_levels(used, curves);
  nlohmann::json lv = nlohmann::json::array();
  for (std::size_t j = 0; j < levels.size(); ++j) {
    const auto& l = levels[j];
    const std::string p = "tlb" + std::to_string(j + 1) + "_";
    c.add_metric(derived_metric(p + "reach_bytes", "TLB level " + std::to_string(j + 1) + " reach (dense)", "B", l.reach_bytes, false));
    c.add_metric(derived_metric(p + "entries", "TLB level " + std::to_string(j + 1) + " entries", "", l.entries, false));
    c.add_metric(derived_metric(p + "page_bytes", "TLB level " + std::to_string(j + 1) + " page size" +
                                               (l.page_is_upper_bound ? " (upper bound)" : ""),
                         "B", l.page_bytes, false));
    c.add_metric(derived_metric(p + "miss_penalty_cycles", "TLB level " + std::to_string(j + 1) + " miss penalty", "cycles",
                         l.miss_cycles - l.hit_cycles, false, false));
    lv.push_back({{"reach_bytes", l.reach_bytes}, {"entries", l.entries}, {"page_bytes", l.page_bytes},
                  {"page_is_upper_bound", l.page_is_upper_bound}, {"hit_cycles", l.hit_cycles},
                  {"miss_cycles", l.miss_cycles}});
  }
  c.result().data["tlb_levels"] = lv;
  if (levels.empty()) c.result().reason = "no TLB knee found in the swept range (see curves)";
}

// The L1 knee under each preferred shared-memory carveout (cudaFuncAttributePreferredSharedMemoryCarveout).
void study_carveout(Case& c, StudyRunner& r, int per_octave) {
  cudaStream_t s = c.stream();
  ChaseBench bench(1 * MiB, 1, s);
  nlohmann::json data = nlohmann::json::array();
  for (int pct : {0, 25, 50, 75, 100}) {
    Sweep sw;
    ChaseSpec spec{.stride_bytes = 128, .access = ChaseAccess::global_ca, .carveout_percent = pct};
    auto at = [&](std::size_t b) {
      spec.bytes = b;
      r.measure_into(sw, static_cast<double>(b), bench, spec);
    };
    for (auto b : size_grid(4 * KiB, 1 * MiB, per_octave, 128)) at(b);
    if (sw.x.size() < 3) continue;
    StepCurve curve = find_steps(sw.x, sw.y);
    refine_knees(sw, curve, 4 * per_octave, 128, at, 1);
    curve = find_steps(sw.x, sw.y);
    data.push_back({{"carveout_percent", pct}, {"curve", curve_json(sw, curve, "bytes")}});
    if (!curve.knees.empty())
      add_capacity(c, "l1_capacity_bytes_carveout_" + std::to_string(pct),
                   "L1 capacity at a " + std::to_string(pct) + "% shared carveout", curve.knees.front());
  }
  c.result().data["curves"] = data;
}

// Partitions seen from SM 0 (two-SM traces): after an L2 flush, SM w walks an 8 MiB array once
// with cg loads, then SM 0 traces its first touch of the lines. A line homed in SM 0's partition
// is a near hit; a line homed in the other one is a far hit unless w's walk also left a copy in
// SM 0's partition, which it does when w shares that partition. So a warm SM in the other
// partition shows two hit clusters (near, far), one in SM 0's own partition one: the scan over
// every w gives both latencies and which SMs share SM 0's partition.
struct PartitionScan {
  std::vector<double> near, far, far_share;  // per warm SM that showed two hit clusters
  std::vector<int> peers, others;             // warm SMs with one hit cluster / with two
  nlohmann::json per_sm = nlohmann::json::array();
};

PartitionScan scan_partitions(Case& c, StudyRunner& r, double dram_cycles, double overhead) {
  PartitionScan out;
  cudaStream_t s = c.stream();
  const int sms = c.session().gpu().sm_count;
  const std::size_t bytes = 8 * MiB;
  ChaseBench bench(bytes, 1, s);
  const std::uint64_t bad =
      bench.prepare({.bytes = bytes, .stride_bytes = 128, .access = ChaseAccess::global_cg}, kWalkBudgetCycles);
  r.add_mismatches(bad, "two-SM partition array: " + bench.check_detail());
  if (bad) return out;
  const auto walk = static_cast<long long>(bench.cycle().length);
  int absent = 0;
  for (int w = 1; w < sms && absent < 3; ++w) {
    c.session().flush_l2(s);
    const auto tr = bench.trace_two_sms(w, 0, kernels::chase_trace_max, walk);
    if (!tr.ran) {  // an SM id the device does not use: the tracer waited 2 s for nothing
      ++absent;
      out.per_sm.push_back({{"warm_sm", w}, {"ran", false}});
      continue;
    }
    r.add_mismatches(tr.mismatches, "two-SM trace after SM " + std::to_string(w) + "'s walk: indices off the cycle");
    std::vector<double> lat;
    for (auto v : tr.latency) lat.push_back(std::max(1.0, static_cast<double>(v) - overhead));
    const auto clusters = cluster_values(lat);
    const auto hits = hit_clusters(clusters, dram_cycles);
    nlohmann::json medians = nlohmann::json::array();
    for (const auto& h : hits) medians.push_back({{"median_cycles", h.median}, {"fraction", h.fraction}});
    out.per_sm.push_back({{"warm_sm", w}, {"ran", true}, {"hit_clusters", medians}});
    if (auto split = split_partitions({clusters}, dram_cycles)) {
      out.others.push_back(w);
      out.near.push_back(split->near.median);
      out.far.push_back(split->far.median);
      out.far_share.push_back(static_cast<double>(split->far.count) /
                              static_cast<double>(split->near.count + split->far.count));
    } else if (hits.size() == 1) {
      out.peers.push_back(w);
    }
  }
  return out;
}

// L2 near/far partitions: warm per-access traces of cg loads (a new line per access); latencies
// cluster by the partition holding each line. The trace's own overhead (clock reads, a shared
// store) is measured on L1 hits and subtracted. Two sizes: 8 MiB, and 0.8 × the device's L2. On
// the H200 the 8 MiB trace shows one cluster: while the array fits, lines homed in the far
// partition are consistent with also being copied into the near one (the one-SM capacity curve
// starts missing at ~2/3 of the L2), so only the larger array, where the copies no longer all
// fit, can show both. Its DRAM-latency accesses are misses, told apart by a DRAM latency
// measured here (a timed chase far beyond the L2).
void study_partition(Case& c, StudyRunner& r, double mhz) {
  cudaStream_t s = c.stream();
  ChaseBench small(4 * KiB, 1, s);
  const ChaseSpec l1spec{.bytes = 4 * KiB, .stride_bytes = 128, .access = ChaseAccess::global_ca};
  double overhead = 0;
  if (auto pt = r.point(small, l1spec)) {
    const auto tr = small.trace(1024, 64, true);
    r.add_mismatches(tr.mismatches, "L1 trace: indices off the cycle");
    std::vector<double> v(tr.latency.begin(), tr.latency.end());
    overhead = std::max(0.0, median_of(v) - pt->cycles);
  }
  c.add_metric(derived_metric("trace_overhead_cycles", "per-access trace overhead (traced − timed L1 hit)", "cycles",
                       overhead, false, false));

  // DRAM latency for the same loads: one timed point on an array 4 × the L2 (at least 256 MiB).
  const double l2 = static_cast<double>(c.session().gpu().l2_bytes);
  double dram_cycles = 0;
  {
    const std::size_t big = sweep_ceiling(c, std::max<std::size_t>(pow2_at_least(4.0 * l2), 256 * MiB), 1);
    ChaseBench far(big, 1, s);
    if (auto pt = r.point(far, {.bytes = big, .stride_bytes = 128, .access = ChaseAccess::global_cg}))
      dram_cycles = pt->cycles;
  }
  c.add_metric(derived_metric("partition_dram_cycles", "DRAM latency of the same loads (timed, array 4 × L2)", "cycles",
                              dram_cycles, false, false));

  std::vector<std::size_t> sizes = {8 * MiB};
  const auto large = static_cast<std::size_t>(std::llround(0.8 * l2 / 128.0)) * 128;
  if (large > sizes.front()) sizes.push_back(large);
  std::vector<std::vector<Cluster>> traced;
  nlohmann::json traces = nlohmann::json::array();
  for (const std::size_t bytes : sizes) {
    c.require_device_memory(bytes + 64 * MiB);  // the array and the chase's small buffers
    ChaseBench bench(bytes, 1, s);
    const ChaseSpec spec{.bytes = bytes, .stride_bytes = 128, .access = ChaseAccess::global_cg};
    const std::uint64_t bad = bench.prepare(spec, kWalkBudgetCycles);
    r.add_mismatches(bad, "partition array of " + std::to_string(bytes) + " B: " + bench.check_detail());
    if (bad) return;
    // Warm: one walk of the whole cycle first, then the traced accesses.
    const auto tr = bench.trace(kernels::chase_trace_max, static_cast<long long>(bench.cycle().length), true);
    r.add_mismatches(tr.mismatches, "partition trace: indices off the cycle");
    std::vector<double> lat;
    for (auto v : tr.latency) lat.push_back(std::max(1.0, static_cast<double>(v) - overhead));
    const auto clusters = cluster_values(lat);
    const auto hits = hit_clusters(clusters, dram_cycles);
    nlohmann::json cj = nlohmann::json::array();
    for (const auto& cl : clusters)
      cj.push_back({{"median_cycles", cl.median}, {"stddev_cycles", cl.stddev}, {"count", cl.count},
                    {"fraction", cl.fraction}, {"outlier", cl.outlier},
                    {"miss", is_miss_cluster(cl, dram_cycles)}});
    traces.push_back({{"bytes", bytes}, {"fraction_of_l2", l2 > 0 ? static_cast<double>(bytes) / l2 : 0.0},
                      {"latency_cycles_minus_overhead", lat}, {"index", tr.index}, {"clusters", cj},
                      {"hit_clusters", hits.size()}});
    traced.push_back(clusters);
  }
  c.result().data["traces"] = traces;
  c.result().data["miss_rule"] = "a cluster whose median is at least " + two_decimals(kMissFractionOfDram) +
                                 " × the measured DRAM latency is misses";
  auto level_metric = [&](const std::string& key, const std::string& name, const Cluster& cl) {
    Metric m = derived_metric(key + "_cycles", name + " (cycles)", "cycles", cl.median, false);
    m.stats = {{"median", cl.median}, {"mean", cl.mean}, {"stddev", cl.stddev},
               {"cv", cl.mean > 0 ? cl.stddev / cl.mean : 0.0}, {"min", cl.min}, {"max", cl.max}};
    c.add_metric(m);
    if (mhz > 0) c.add_metric(derived_metric(key + "_ns", name + " (ns)", "ns", cl.median * 1e3 / mhz, false, false));
  };
  const PartitionScan scan = scan_partitions(c, r, dram_cycles, overhead);
  c.result().data["two_sm_scan"] = {{"trace_sm", 0}, {"array_bytes", 8 * MiB},
                                    {"same_partition_as_sm0", scan.peers}, {"other_partition", scan.others},
                                    {"per_warm_sm", scan.per_sm}};
  auto scan_metric = [&](const std::string& key, const std::string& name, const std::vector<double>& cycles) {
    c.add_metric(with_samples({.tag = key + "_cycles", .name = name + " (cycles; one sample per warm SM)",
                               .unit = "cycles", .role = MetricRole::derived},
                              cycles));
    if (mhz <= 0) return;
    std::vector<double> ns;
    for (double v : cycles) ns.push_back(v * 1e3 / mhz);
    c.add_metric(with_samples({.tag = key + "_ns", .name = name + " (ns)", .unit = "ns", .role = MetricRole::derived},
                              ns));
  };
  if (!scan.near.empty()) {
    scan_metric("l2_near", "L2 near-partition hit, SM 0's first touch", scan.near);
    scan_metric("l2_far", "L2 far-partition hit, SM 0's first touch", scan.far);
    c.add_metric(with_samples({.tag = "l2_far_share", .name = "share of the lines homed in the far partition",
                               .unit = "", .role = MetricRole::derived},
                              scan.far_share));
    c.add_metric(derived_metric("l2_partition_sms", "SMs sharing SM 0's L2 partition (SM 0 included)", "",
                                static_cast<double>(scan.peers.size() + 1), false, false));
    c.add_metric(derived_metric("l2_other_partition_sms", "SMs whose walk left far hits for SM 0", "",
                                static_cast<double>(scan.others.size()), false, false));
  } else if (auto split = split_partitions(traced, dram_cycles)) {
    level_metric("l2_near", "L2 near-partition hit", split->near);
    level_metric("l2_far", "L2 far-partition hit", split->far);
    const auto hits = hit_clusters(traced[split->trace], dram_cycles);
    double hit_count = 0;
    for (const auto& h : hits) hit_count += static_cast<double>(h.count);
    c.add_metric(derived_metric("l2_near_fraction", "share of the hits in the near partition", "",
                                hit_count > 0 ? static_cast<double>(split->near.count) / hit_count : 0.0, false, false));
    c.add_metric(derived_metric("partition_trace_bytes", "array size whose trace shows near and far", "B",
                                static_cast<double>(sizes[split->trace]), false, false));
  } else if (!traced.empty()) {
    const auto hits = hit_clusters(traced.front(), dram_cycles);
    if (!hits.empty()) {
      level_metric("l2_hit_single_cluster", "L2 hit (one latency cluster: no partitions seen)", hits.front());
      c.result().reason = "one L2 latency cluster below the DRAM latency at every traced size and after every other "
                          "SM's walk: no near/far partitions seen";
    }
  }
}

// One chase on every SM, each on a private array: L1 knees stay per SM, the L2 knee divides by
// the SM count when the L2 is shared (volkov08 §3.3 multithreaded test). Each block reserves
// more than half an SM's shared memory, so the L1 left per SM is smaller than in one-SM runs.
void study_multi_sm(Case& c, StudyRunner& r, int per_octave, double mhz) {
  cudaStream_t s = c.stream();
  const int sms = c.session().gpu().sm_count;
  r.multi();
  const std::size_t hi = sweep_ceiling(c, 64 * MiB, sms);
  ChaseBench bench(hi, sms, s);
  Sweep sw;
  for (auto b : size_grid(8 * KiB, hi, std::max(1, per_octave / 2), 128))
    r.measure_into(sw, static_cast<double>(b), bench,
                   {.bytes = b, .stride_bytes = 128, .access = ChaseAccess::global_ca, .blocks = sms});
  if (sw.x.size() < 3) return;
  const auto curve = find_steps(sw.x, sw.y);
  auto j = curve_json(sw, curve, "bytes per SM");
  j["slowest_sm_cycles"] = sw.y_max;
  c.result().data["curve"] = j;
  c.result().data["sms"] = sms;
  c.result().data["shared_reserved_per_block"] =
      kernels::chase_shared_bytes({.array = nullptr, .elements = 1, .one_block_per_sm = true});
  if (!curve.plateaus.empty()) add_level(c, "multi_l1_hit", "L1 hit, every SM chasing", sw.values_in(curve.plateaus.front()), mhz);
  if (!curve.knees.empty())
    add_capacity(c, "multi_l1_capacity_bytes_per_sm", "L1 capacity per SM, every SM chasing", curve.knees.front());
  if (curve.knees.size() >= 2) {
    const auto& k = curve.knees.back();
    c.add_metric(derived_metric("multi_l2_capacity_bytes_total", "L2 capacity, every SM chasing: knee × SM count", "B",
                         k.x_below * sms, false));
    c.result().data["multi_l2_capacity_bytes_total_interval"] = {k.x_below * sms, k.x_above * sms};
  }
}

void run_fig2(Case& c) {
  const std::string study = c.text("study");
  const int per_octave = static_cast<int>(c.integer("points_per_octave"));
  const double mhz = c.session().probe_sm_clock_mhz(c.stream());
  c.add_metric({.tag = "sm_clock", .name = "SM clock measured before the study", .unit = "MHz", .value = mhz,
                .role = MetricRole::environment});
  StudyRunner r(c);
  if (study == "capacity") study_capacity(c, r, per_octave, mhz);
  else if (study == "line") study_line(c, r);
  else if (study == "tlb") study_tlb(c, r, per_octave);
  else if (study == "carveout") study_carveout(c, r, per_octave);
  else if (study == "partition") study_partition(c, r, mhz);
  else if (study == "multi_sm") study_multi_sm(c, r, per_octave, mhz);
  r.finish();
}

// ---------------------------------------------------------------------------------------------
// The table: one derived result per inferred quantity, beside the paper and the expected range.

struct Row {
  std::string quantity, label, unit;
  bool capacity = false;  // judged by its knee interval, not its value
};

const std::vector<Row>& table_rows() {
  static const std::vector<Row> rows = {
      {"l1_hit_cycles", "L1 hit latency", "cycles"},
      {"l1_hit_ns", "L1 hit latency", "ns"},
      {"shared_cycles", "shared-memory latency", "cycles"},
      {"shared_ns", "shared-memory latency", "ns"},
      {"l1_capacity_bytes", "L1 capacity (default carveout)", "B", true},
      {"l2_hit_cycles", "L2 hit latency, partitions mixed", "cycles"},
      {"l2_hit_ns", "L2 hit latency, partitions mixed", "ns"},
      {"l2_near_cycles", "L2 near-partition hit", "cycles"},
      {"l2_near_ns", "L2 near-partition hit", "ns"},
      {"l2_far_cycles", "L2 far-partition hit", "cycles"},
      {"l2_far_ns", "L2 far-partition hit", "ns"},
      {"l2_capacity_bytes", "L2 capacity (one SM, half the accesses miss)", "B", true},
      {"l2_miss_onset_bytes", "L2 miss onset (one SM, last size on the L2 plateau)", "B", true},
      {"l2_miss_onset_fraction", "L2 miss onset / device L2 size", ""},
      {"l2_all_miss_bytes", "L2 all-miss size (one SM, first size at the DRAM plateau)", "B", true},
      {"dram_cycles", "DRAM latency", "cycles"},
      {"dram_ns", "DRAM latency", "ns"},
      {"sector_bytes", "sector (L1 fill granularity)", "B"},
      {"dram_fetch_bytes", "DRAM fetch granularity into L2", "B"},
      {"tlb1_reach_bytes", "TLB level 1 reach", "B"},
      {"tlb1_entries", "TLB level 1 entries", ""},
      {"tlb1_page_bytes", "TLB level 1 page size", "B"},
      {"tlb2_reach_bytes", "TLB level 2 reach", "B"},
      {"tlb2_entries", "TLB level 2 entries", ""},
      {"tlb2_page_bytes", "TLB level 2 page size", "B"},
      {"l1_capacity_bytes_carveout_0", "L1 capacity, carveout 0%", "B", true},
      {"l1_capacity_bytes_carveout_25", "L1 capacity, carveout 25%", "B", true},
      {"l1_capacity_bytes_carveout_50", "L1 capacity, carveout 50%", "B", true},
      {"l1_capacity_bytes_carveout_75", "L1 capacity, carveout 75%", "B", true},
      {"l1_capacity_bytes_carveout_100", "L1 capacity, carveout 100%", "B", true},
      {"multi_l1_capacity_bytes_per_sm", "L1 capacity per SM, all SMs chasing", "B", true},
      {"multi_l2_capacity_bytes_total", "L2 capacity, all SMs chasing (knee × SMs)", "B", true},
  };
  return rows;
}

// The quantity whose expectation applies to a row (TLB rows of level 1 compare with the paper's TLB).
std::string expectation_key(const std::string& q) {
  if (q == "tlb1_entries") return "tlb_entries";
  if (q == "tlb1_page_bytes") return "tlb_page_bytes";
  return q;
}

void summarize_fig2(Summary& s) {
  const std::string gpu = s.session().has_gpu() ? s.session().gpu().name : "";
  const auto expected = expected_memory_system(gpu);
  const auto paper = paper_8800gtx();
  std::map<std::string, std::pair<const Result*, const Metric*>> found;
  for (const auto& r : s.results()) {
    if (r.status != Status::passed) continue;
    for (const auto& m : r.metrics) found[m.tag] = {&r, &m};
  }
  int flagged = 0, rows = 0;
  std::string flags, flags_spread;
  for (const auto& row : table_rows()) {
    const auto it = found.find(row.quantity);
    if (it == found.end()) continue;
    const auto& [res, metric] = it->second;
    Result d;
    d.experiment = "volkov08.fig2";
    d.artifact = "volkov08.fig2 table";
    d.status = Status::passed;
    d.device = s.session().device();
    d.axes = {{"quantity", row.label}, {"unit", row.unit}};
    Metric m = *metric;
    m.tag = "measured";
    m.name = row.label;
    m.headline = true;
    m.role = MetricRole::derived;
    const std::string key = expectation_key(row.quantity);
    if (auto p = find_expectation(paper, key)) m.published = Published{p->low, p->source};
    d.metrics.push_back(m);
    d.data["quantity"] = row.quantity;
    d.data["study"] = res->axes.value("study", "");
    const std::string interval_key = row.quantity + "_interval";
    double lo = metric->value, hi = metric->value;
    if (row.capacity && res->data.contains(interval_key)) {
      lo = res->data[interval_key][0].get<double>();
      hi = res->data[interval_key][1].get<double>();
      d.data["knee_interval"] = res->data[interval_key];
    }
    if (auto e = find_expectation(expected, key)) {
      d.metrics.push_back({.tag = "expected_low", .name = "expected (low)", .unit = e->unit, .value = e->low,
                           .headline = true, .role = MetricRole::derived});
      d.metrics.push_back({.tag = "expected_high", .name = "expected (high)", .unit = e->unit, .value = e->high,
                           .headline = true, .role = MetricRole::derived});
      // Capacities: the true knee lies in [last size at the lower level, first size above).
      const bool outside = row.capacity ? (hi < e->low * 0.9 || lo > e->high * 1.1) : outside_expected(metric->value, *e);
      d.metrics.push_back({.tag = "outside_expected", .name = "outside the expected range ±10%", .unit = "",
                           .value = outside ? 1.0 : 0.0, .headline = true, .role = MetricRole::derived});
      d.data["expected_source"] = e->source;
      if (outside) {
        ++flagged;
        d.reason = "outside the expected range for " + gpu + " (" + e->source + ")";
        flags += (flags.empty() ? "" : "; ") + row.label + (row.unit.empty() ? "" : " [" + row.unit + "]");
      } else {
        d.reason = "within the expected range (±10%)";
      }
    }
    // Why a one-SM capacity falls short of the device's L2, when the onset says so (fig2 capacity).
    if (row.quantity == "l2_capacity_bytes" && res->data.contains("l2_capacity_note")) {
      const std::string note = res->data["l2_capacity_note"].get<std::string>();
      d.data["note"] = note;
      d.reason += (d.reason.empty() ? "" : "; ") + note;
    }
    flag_wide_spread(d);
    if (d.data.contains("wide_spread"))
      flags_spread += (flags_spread.empty() ? "" : "; ") + row.label + " [" + row.unit + "]";
    ++rows;
    s.add(std::move(d));
  }
  if (rows == 0) return;
  Result sum;
  sum.experiment = "volkov08.fig2";
  sum.artifact = "volkov08.fig2 summary";
  sum.status = Status::passed;
  sum.device = s.session().device();
  sum.metrics.push_back({.tag = "rows", .name = "inferred quantities", .unit = "", .value = static_cast<double>(rows),
                         .headline = true, .role = MetricRole::derived});
  sum.metrics.push_back({.tag = "outside_expected", .name = "quantities outside the expected range", .unit = "",
                         .value = static_cast<double>(flagged), .headline = true, .role = MetricRole::derived});
  sum.data["gpu"] = gpu;
  sum.data["expected_table"] = expected.empty() ? "no built-in values for this GPU model" : "REFERENCE.md values";
  if (flagged) sum.reason = "outside the expected range: " + flags;
  if (!flags_spread.empty()) sum.reason += (sum.reason.empty() ? "" : "; ") + std::string("spread over 2%: ") + flags_spread;
  s.add(std::move(sum));
}

}  // namespace

void register_fig2(Registry& registry) {
  Experiment e;
  e.key = "volkov08.fig2";
  e.artifact = "volkov08.fig2";
  e.title = "Memory system inferred by change points on chase sweeps: L1/L2 capacity and latency, line/sector, "
            "TLB, carveout, L2 partitions, multi-SM";
  e.axes = {
      {.name = "study", .kind = AxisKind::text,
       .help = "capacity: L1/L2 knees and latencies; line: sector and line; tlb: TLB levels; carveout: L1 knee vs "
               "shared carveout; partition: L2 near/far; multi_sm: one chase on every SM",
       .defaults = "capacity,line,tlb,carveout,partition,multi_sm",
       .choices = {"capacity", "line", "tlb", "carveout", "partition", "multi_sm"}},
      {.name = "points_per_octave", .kind = AxisKind::integer,
       .help = "sweep points per doubling of the array size (knees are refined further)", .defaults = "3",
       .quick = "2", .full = "4", .min = 1, .max = 16},
  };
  e.needs.gpus = 1;
  e.run = run_fig2;
  e.summarize = summarize_fig2;
  registry.add(std::move(e));
}

}  // namespace gpufact::microbench
