// volkov08.barrier (volkov08 §3.6): the cost of one global barrier. Inside one kernel of R
// rounds: the paper's barrier (per-block arrival and wakeup flags, one master block), an
// atomic-counter barrier and cooperative groups' grid.sync(); against ending the kernel and
// launching the next one per round, from the host or as a CUDA graph. Cost per barrier by the
// difference method over rounds, (T(R) − T(1)) / (R − 1), in seconds and in SM cycles at the
// clock measured during the run. Every round includes the verification's slot store and load.
#include "microbench/barrier/barrier.hpp"

#include "microbench/barrier/barrier_buffers.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/cuda/graph.hpp"
#include "core/errors.hpp"
#include "microbench/barrier/barrier_kernels.cuh"
#include "microbench/barrier/coresidency.hpp"
#include "core/cuda/stream.hpp"
#include "microbench/launch/cpu_pin.hpp"
#include "microbench/launch/difference_method.hpp"
#include "microbench/launch/interleaved_timing.hpp"
#include "microbench/sampled_metric.hpp"

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

namespace gpufact::microbench {
namespace {

constexpr unsigned long long spin_timeout_ns = 2'000'000'000ull;  // a lost wakeup ends as an error, not a hang

// Relaunch samples: 31 pairs, each the median of 5 timings of T(1) and of T(R); at R = 2000
// (~8 ms a sequence) about 1.3 s per case.
constexpr int relaunch_samples = 31, relaunch_inner_timings = 5;

struct Variant {
  const char* name;
  const char* label;
  std::optional<kernels::GridBarrierKind> in_kernel;  // nullopt: the kernel boundary is the barrier
};

constexpr kernels::GridBarrierKind flags_kind = kernels::GridBarrierKind::flags;

const Variant variants[] = {
    {"flags", "arrival/wakeup flags barrier (volkov08 §3.6)", kernels::GridBarrierKind::flags},
    {"atomic", "atomic counter barrier", kernels::GridBarrierKind::atomic},
    {"grid_sync", "cooperative groups grid.sync()", kernels::GridBarrierKind::grid_sync},
    {"relaunch", "kernel relaunch per round", std::nullopt},
    {"graph", "kernel relaunch per round, as a CUDA graph", std::nullopt},
};

const Variant& variant_named(const std::string& name) {
  for (const auto& v : variants)
    if (name == v.name) return v;
  throw UsageError("axis 'barrier': unknown barrier '" + name + "'");
}


void run_barrier(Case& c) {
  const Variant& variant = variant_named(c.text("barrier"));
  const auto blocks_per_sm = c.integer("blocks_per_sm");
  const int threads = static_cast<int>(c.integer("threads"));
  const int rounds = static_cast<int>(c.integer("rounds"));
  const int sm_count = c.session().gpu().sm_count;
  const auto blocks64 = blocks_per_sm * sm_count;
  if (blocks64 > (1 << 20)) c.skip("blocks_per_sm × SMs = " + std::to_string(blocks64) + " blocks is more than this probe supports");
  const int blocks = static_cast<int>(blocks64);
  cudaStream_t s = c.stream();

  // The co-resident limit of the kernel that runs (the flags kernel's, for reference, when the
  // kernel boundary is the barrier and any block count is safe).
  const int max_per_sm = kernels::grid_barrier_max_blocks_per_sm(variant.in_kernel.value_or(flags_kind), threads);
  c.result().data["blocks"] = blocks;
  c.result().data["sm_count"] = sm_count;
  c.result().data["max_coresident_blocks_per_sm"] = max_per_sm;
  c.result().data["spin_timeout_s"] = static_cast<double>(spin_timeout_ns) * 1e-9;
  c.result().data["round"] = "slot store by one thread per block, the barrier, slot load of another block by one thread";
  if (variant.in_kernel) {
    int cooperative = 0;
    GPUFACT_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, c.session().device()));
    if (!cooperative) c.skip("the device does not support cooperative launches (needed to guarantee co-residency)");
    if (auto why = coresidency_violation(blocks_per_sm, max_per_sm, sm_count,
                                         std::string(variant.name) + " barrier kernel at " + std::to_string(threads) +
                                             " threads"))
      c.skip(*why);
  }

  BarrierBuffers buffers(blocks, s);
  const kernels::GridBarrierState& state = buffers.state();
  auto check_timeout = [&] {
    if (buffers.timed_out())
      throw std::runtime_error(std::string(variant.name) + " barrier: a spin waited longer than " +
                               std::to_string(spin_timeout_ns / 1'000'000'000ull) +
                               " s (a block never arrived or a wakeup was lost) over " + std::to_string(blocks) +
                               " blocks");
  };

  // Enqueues one sequence of `k` rounds (k is 1 or R); counts the slot checks it makes.
  unsigned long long checks_issued = 0;
  unsigned int next_value = 1;  // round values never repeat on this state
  CapturedGraph graph_one, graph_many;
  std::function<void(int)> enqueue;
  if (variant.in_kernel) {
    enqueue = [&](int k) {
      check_timeout();  // stop queueing 2-second kernels once one has failed
      kernels::launch_grid_barrier_rounds(*variant.in_kernel, state, blocks, threads, next_value, k, spin_timeout_ns, s);
      next_value += static_cast<unsigned int>(k);
      checks_issued += static_cast<unsigned long long>(blocks) * static_cast<unsigned long long>(k);
    };
  } else {
    auto relaunch = [&](int k, cudaStream_t cs) {
      for (int r = 0; r < k; ++r) kernels::launch_relaunch_round(state, blocks, threads, r, cs);
      kernels::launch_relaunch_finish(state, blocks, k, cs);
    };
    if (std::string(variant.name) == "graph") {
      graph_one = CapturedGraph::capture(s, [&](cudaStream_t cs) { relaunch(1, cs); });
      graph_many = CapturedGraph::capture(s, [&](cudaStream_t cs) { relaunch(rounds, cs); });
      enqueue = [&](int k) { (k == 1 ? graph_one : graph_many).launch(s); };
    } else {
      enqueue = [&, relaunch](int k) { relaunch(k, s); };
    }
    auto launch_only = enqueue;
    enqueue = [&, launch_only](int k) {
      launch_only(k);
      checks_issued += static_cast<unsigned long long>(blocks) * static_cast<unsigned long long>(k);
    };
  }
  // Warm-up: module load, graph upload.
  enqueue(1);
  enqueue(rounds);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  check_timeout();

  // In-kernel barriers: Google Benchmark samples of T(1) and T(R), GPU events around a held
  // stream. Relaunches are paced by the host: T(1) and T(R) interleaved, each sample the median
  // of a few inner timings, the thread pinned to its CPU (as volkov08.launch). A relaunch
  // sequence is R + 1 launches: queued behind a stream hold they could fill the launch queue and
  // block the host, so they are timed as issued (host launch cost included when it is the
  // slower side, as for any code that relaunches per step).
  std::optional<DifferenceEstimate> estimate;
  double clock_mhz = 0;
  if (variant.in_kernel) {
    MeasureSpec one;
    one.max_min_time_s = microbench_max_sample_s;
    one.name = "one";
    one.label = "1 round";
    one.timer = Timer::gpu_events;
    one.body = [&](std::size_t) { enqueue(1); };
    MeasureSpec many = one;
    many.name = "many";
    many.label = std::to_string(rounds) + " rounds";
    many.body = [&](std::size_t) { enqueue(rounds); };
    const bool measured_one = c.measure(one);
    const bool measured_many = c.measure(many);
    const Metric* t1 = c.result().find_metric("one/time");
    const Metric* tr = c.result().find_metric("many/time");
    const Metric* clock = c.result().find_metric("many/sm_clock");
    if (measured_one && measured_many && t1 && tr) {
      estimate = difference_per_unit(t1->samples, tr->samples, 1.0, rounds);
      if (clock) clock_mhz = clock->value;
    }
  } else {
    const ScopedCpuPin pin;
    Event start, stop;
    const InterleavedSpec sampling{.few = 1, .many = rounds, .samples = relaunch_samples,
                                   .inner = relaunch_inner_timings, .warmup_s = 0.25};
    const auto times = time_interleaved(
        sampling,
        [&](long k) {
          start.record(s);
          enqueue(static_cast<int>(k));
          stop.record(s);
          stop.synchronize();
          return Event::elapsed_seconds(start, stop);
        },
        [&] { return c.session().interrupted(); });
    record_interleaved(c.result(), sampling, pin, times, "1 round", std::to_string(rounds) + " rounds");
    clock_mhz = c.session().probe_sm_clock_mhz(s);
    c.add_metric({.tag = "many/sm_clock", .name = "SM clock (probe, after the samples)", .unit = "MHz",
                  .value = clock_mhz, .role = MetricRole::environment});
    estimate = paired_difference_per_unit(times.few, times.many, 1.0, rounds);
  }

  const auto [checks, violations] = buffers.tallies(s);
  check_timeout();
  c.result().data["slot_checks"] = checks;
  c.result().data["violations"] = violations;
  c.verify("slot reads after the barrier that missed the partner block's write of the round",
           static_cast<double>(violations), 0.0);
  c.verify("|slot reads made − blocks × rounds issued|",
           std::fabs(static_cast<double>(checks) - static_cast<double>(checks_issued)), 0.0);

  if (!estimate) return;
  for (auto& m : c.result().metrics) m.headline = false;
  Metric per = difference_metric(*estimate, "per_barrier",
                                 std::string(variant.label) + ": time per barrier (T(R) − T(1))/(R − 1)", "s");
  const bool paper_setting = variant.in_kernel == flags_kind && blocks_per_sm == 1;
  if (paper_setting)
    per.published = Published{1.45e-6, "volkov08 §3.6: 1.3–1.6 µs per barrier, one block per SM, four 2007 GPUs"};
  if (clock_mhz > 0) {
    Metric cycles = rescaled(per, clock_mhz * 1e6, "per_barrier_cycles",
                           std::string(variant.label) + ": SM cycles per barrier", "cycles");
    if (paper_setting) cycles.published = Published{1960, "volkov08 §3.6: 1920–2000 cycles per barrier"};
    c.add_metric(std::move(per));
    c.add_metric(std::move(cycles));
  } else {
    c.add_metric(std::move(per));
  }
}

// Per variant, the cost at the fewest blocks per SM measured, and how many in-kernel barriers a
// relaunch costs (volkov08 §3.6: the flags barrier took a third to a quarter of a launch).
void summarize(Summary& s) {
  std::map<std::string, std::pair<std::int64_t, const Metric*>> fewest;  // variant -> (blocks_per_sm, metric)
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : s.results()) {
    if (r.status != Status::passed) continue;
    const auto* m = r.find_metric("per_barrier");
    if (!m) continue;
    const std::string v = r.axes.value("barrier", "");
    const std::int64_t bps = r.axes.value("blocks_per_sm", std::int64_t{0});
    rows.push_back({{"barrier", v}, {"blocks_per_sm", bps}, {"threads", r.axes.value("threads", 0)},
                    {"per_barrier_us", m->value * 1e6}});
    auto it = fewest.find(v);
    if (it == fewest.end() || bps < it->second.first) fewest[v] = {bps, m};
  }
  if (fewest.empty()) return;
  Result d;
  d.experiment = "volkov08.barrier";
  d.artifact = "volkov08.barrier summary";
  d.device = s.session().device();
  d.status = Status::passed;
  for (const auto& v : variants) {
    auto it = fewest.find(v.name);
    if (it == fewest.end()) continue;
    d.metrics.push_back(with_spread_of(
        {.tag = std::string(v.name) + "/per_barrier",
         .name = std::string(v.label) + " at " + std::to_string(it->second.first) + " block(s)/SM", .unit = "s",
         .value = it->second.second->value, .higher_is_better = false, .headline = true, .role = MetricRole::derived},
        *it->second.second));
  }
  if (fewest.count("relaunch") && fewest.count("flags") && fewest["flags"].second->value > 0 &&
      fewest["relaunch"].first == fewest["flags"].first)
    d.metrics.push_back({.tag = "relaunch_vs_flags", .name = "kernel relaunch / flags barrier", .unit = "x",
                         .value = fewest["relaunch"].second->value / fewest["flags"].second->value,
                         .higher_is_better = true,
                         .headline = true, .role = MetricRole::derived,
                         .published = Published{3.5, "volkov08 §3.6: the barrier is 3–4× cheaper than a launch"}});
  d.data["per_barrier"] = rows;
  flag_wide_spread(d);
  s.add(std::move(d));
}

}  // namespace

void register_barrier(Registry& registry) {
  Experiment e;
  e.key = "volkov08.barrier";
  e.artifact = "volkov08.barrier";
  e.title = "Global barrier cost: arrival/wakeup flags, atomic counter, grid.sync() in one kernel vs kernel "
            "relaunch and graph relaunch, vs blocks per SM";
  std::vector<std::string> choices;
  for (const auto& v : variants) choices.emplace_back(v.name);
  e.axes = {
      {.name = "barrier", .kind = AxisKind::text,
       .help = "flags: per-block arrival/wakeup flags, master block 0 (volkov08 §3.6); atomic: counter + "
               "generation; grid_sync: cooperative groups; relaunch: one kernel per round; graph: the same as a "
               "CUDA graph",
       .defaults = join_axis_values(choices), .choices = choices},
      {.name = "blocks_per_sm", .kind = AxisKind::integer,
       .help = "blocks per SM (blocks = this × SM count); in-kernel barriers are skipped above the co-resident "
               "maximum the occupancy API reports",
       .defaults = "1,2,4,8,16", .quick = "1,4,16", .full = "1,2,4,8,16", .min = 1, .max = 64},
      {.name = "threads", .kind = AxisKind::integer, .help = "threads per block (multiple of 32)",
       .defaults = "128", .min = 32, .max = 1024},
      {.name = "rounds", .kind = AxisKind::integer, .help = "R of the difference method (T(R) − T(1))/(R − 1)",
       .defaults = "1000", .quick = "500", .full = "2000", .min = 2, .max = 1'000'000},
  };
  e.needs.gpus = 1;
  e.validate = [](const AxisPoint& p) {
    if (p.integer("blocks_per_sm") < 1)
      throw UsageError("axis 'blocks_per_sm': " + std::to_string(p.integer("blocks_per_sm")) + " is below 1");
    const auto t = p.integer("threads");
    if (t < 32 || t > 1024 || t % 32 != 0)
      throw UsageError("axis 'threads': " + std::to_string(t) + " is not a multiple of 32 in [32, 1024]");
    if (p.integer("rounds") < 2)
      throw UsageError("axis 'rounds': " + std::to_string(p.integer("rounds")) +
                       " is below 2; the difference method needs R >= 2");
  };
  e.run = run_barrier;
  e.summarize = summarize;
  e.plots = {{.artifact = "volkov08.barrier", .x = "blocks_per_sm", .y = "per_barrier", .series = {"barrier"},
              .logx = true, .logy = true, .title = "Global barrier time vs blocks per SM (volkov08 §3.6)"},
             {.artifact = "volkov08.barrier", .x = "blocks_per_sm", .y = "per_barrier_cycles",
              .series = {"barrier"}, .logx = true, .logy = true,
              .title = "Global barrier SM cycles vs blocks per SM (volkov08 §3.6)"}};
  registry.add(std::move(e));
}

}  // namespace gpufact::microbench
