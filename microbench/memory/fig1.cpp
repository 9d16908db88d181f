// volkov08.fig1 (volkov08 §3.3, Fig. 1): pointer-chasing latency vs array size × stride for
// L1-cached loads, L1-bypassing loads and shared memory, one thread (or one thread on each SM).
#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/errors.hpp"
#include "microbench/memory/change_points.hpp"
#include "microbench/memory/chase_report.hpp"
#include "microbench/memory/memory.hpp"
#include "microbench/memory/pointer_chase.hpp"

#include <algorithm>

namespace gpufact::microbench {
namespace {

constexpr int kTraceLength = 4096;

nlohmann::json clusters_json(const std::vector<Cluster>& cs) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& c : cs)
    j.push_back({{"median_cycles", c.median}, {"mean_cycles", c.mean}, {"stddev_cycles", c.stddev},
                 {"min_cycles", c.min}, {"max_cycles", c.max}, {"count", c.count}, {"fraction", c.fraction},
                 {"outlier", c.outlier}});
  return j;
}

void run_fig1(Case& c) {
  const auto bytes = static_cast<std::size_t>(c.integer("bytes"));
  const auto stride = static_cast<std::size_t>(c.integer("stride"));
  const auto access = chase_access_from(c.text("access"));
  const auto width = chase_width_from(c.text("index"));
  const bool random = c.text("pattern") == "random";
  const bool multi = c.text("mode") == "multi_sm";
  const bool trace = c.text("trace") == "on";
  const std::size_t elem = kernels::chase_element_bytes(width);
  if (access == kernels::ChaseAccess::shared) {
    const std::size_t limit = kernels::chase_shared_limit();
    if (bytes > limit)
      c.skip("shared memory holds at most " + std::to_string(limit) + " bytes per block (opt-in maximum)");
    if (trace && bytes + kTraceLength * (4 + elem) + 32 > limit)
      c.skip("shared array plus the trace buffers exceed the opt-in maximum of " + std::to_string(limit) + " bytes");
  }
  if (random && (bytes / elem - 1) / (stride / elem) + 1 > random_cycle_max_positions)
    c.skip("a random cycle over more than " + std::to_string(random_cycle_max_positions) +
           " positions is too large to build on the host");
  const int blocks = multi ? c.session().gpu().sm_count : 1;
  skip_unless_fits(c, bytes, blocks);

  cudaStream_t s = c.stream();
  ChaseBench bench(bytes, blocks, s);
  ChaseSpec spec{.bytes = bytes, .stride_bytes = stride, .access = access, .width = width, .random = random,
                 .seed = c.seed(), .blocks = blocks};
  const std::uint64_t bad_cycle = bench.prepare(spec);
  c.result().data["cycle_length"] = bench.cycle().length;
  if (bad_cycle) {
    c.result().reason = bench.check_detail();
    c.verify("chase cycle checks failed (whole-cycle walk, index sum, contents)", static_cast<double>(bad_cycle), 0);
    return;
  }
  const double mhz = c.session().probe_sm_clock_mhz(s);
  const ChasePoint pt = bench.measure(c.session().options().repetitions);
  add_latency_metrics(c, pt, mhz);
  std::uint64_t mismatches = pt.mismatches;
  if (!pt.mismatch_detail.empty()) c.result().reason = pt.mismatch_detail;

  if (trace) {
    // Cold array (L2 flushed, no warm-up) exposes sector and line granularity (volkov08 §3.3).
    c.session().flush_l2(s);
    const ChaseTrace tr = bench.trace(kTraceLength, 0, false);
    mismatches += tr.mismatches;
    std::vector<double> lat(tr.latency.begin(), tr.latency.end());
    const auto clusters = cluster_values(lat);
    std::size_t levels = 0;
    for (const auto& cl : clusters) levels += cl.outlier ? 0 : 1;
    c.result().data["trace"] = {{"latency_cycles", tr.latency}, {"index", tr.index}, {"cold", true},
                                {"levels", clusters_json(clusters)}};
    c.add_metric({.tag = "trace/levels", .name = "distinct latency levels in the cold trace", .unit = "",
                  .value = static_cast<double>(levels), .role = MetricRole::derived});
    if (!clusters.empty()) {
      const double fast = clusters.front().median;
      c.add_metric({.tag = "trace/slow_period", .name = "bytes between accesses slower than the fastest level",
                    .unit = "B", .value = slow_access_period(lat, 1.5 * fast, static_cast<double>(stride)),
                    .role = MetricRole::derived});
    }
  }
  c.verify("chases ending at the wrong index + trace indices off the cycle", static_cast<double>(mismatches), 0);
  if (multi)
    c.verify("blocks sharing an SM (one chase per SM expected)", static_cast<double>(blocks - pt.distinct_sms), 0);
}

void validate_fig1(const AxisPoint& p) {
  validate_chase_axes(p.integer("bytes"), p.integer("stride"), chase_width_from(p.text("index")));
}

}  // namespace

void register_fig1(Registry& registry) {
  Experiment e;
  e.key = "volkov08.fig1";
  e.artifact = "volkov08.fig1";
  e.title = "Pointer-chase latency vs array size × stride: L1-cached (ca), L1-bypassing (cg), shared memory";
  e.axes = {
      {.name = "bytes", .kind = AxisKind::size, .help = "array size (per SM in multi_sm mode)",
       .defaults = "1K:256M:*4", .quick = "4K,64K,1M,16M,128M", .full = "1K:4G:*4,8G"},
      {.name = "stride", .kind = AxisKind::size,
       .help = "bytes between consecutive accesses (A[k] = (k + stride) mod size); a multiple of the element",
       .defaults = "4,32,128,1K,4K,64K,2M", .quick = "4,128,4K,2M",
       .full = "4,16,32,64,128,512,4K,64K,512K,2M,8M,32M"},
      {.name = "access", .kind = AxisKind::text,
       .help = "ca: ld.global.ca (L1-cached); cg: ld.global.cg (L2 only); shared: array copied to shared memory "
               "first (copy not timed)",
       .defaults = "ca,cg,shared", .quick = "ca,cg", .choices = {"ca", "cg", "shared"}},
      {.name = "pattern", .kind = AxisKind::text,
       .help = "stride: A[k] = (k + stride) mod size; random: one random cycle (Sattolo) over the stride positions",
       .defaults = "stride", .full = "stride,random", .choices = {"stride", "random"}},
      {.name = "index", .kind = AxisKind::text,
       .help = "u32/u64: k = A[k] on 32/64-bit indices (the paper's chase); ptr: p = *p on absolute "
               "addresses, no index arithmetic in the chain (global loads only)",
       .defaults = "u32", .choices = {"u32", "u64", "ptr"}},
      {.name = "mode", .kind = AxisKind::text,
       .help = "single: one thread; multi_sm: one thread on every SM, each on a private array",
       .defaults = "single", .choices = {"single", "multi_sm"}},
      {.name = "trace", .kind = AxisKind::text,
       .help = "on: also record each of the first 4096 accesses' latency on a cold array", .defaults = "off",
       .choices = {"off", "on"}},
  };
  e.needs.gpus = 1;
  e.validate = validate_fig1;
  // A stride beyond the array walks on element 0 alone: such points are not part of the sweep.
  // Strides finer than the element (4 B with 8-byte elements) belong to narrower index widths.
  e.applies = [](const AxisPoint& p) {
    const auto elem = static_cast<std::int64_t>(kernels::chase_element_bytes(chase_width_from(p.text("index"))));
    return p.integer("stride") <= p.integer("bytes") && p.integer("stride") % elem == 0 &&
           !(p.text("index") == "ptr" && p.text("access") == "shared");
  };
  e.run = run_fig1;
  e.plots = {{.artifact = "volkov08.fig1", .x = "bytes", .y = "latency/cycles", .series = {"stride"}, .logx = true,
              .logy = true, .title = "Pointer-chase latency (volkov08 §3.3 Fig. 1)"}};
  registry.add(std::move(e));
}

}  // namespace gpufact::microbench
