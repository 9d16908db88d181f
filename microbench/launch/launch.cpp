// volkov08.launch (volkov08 §3.1): the host cost of one kernel launch, as the paper measured it:
// issue N launches of a kernel that does next to nothing, synchronize once, and take
// (T(N) − T(1)) / (N − 1). Host wall time, since the cost is paid on the host, with T(1) and
// T(N) timed interleaved and the timing thread pinned to its CPU; when the GPU
// retires empty kernels more slowly than the host issues them, the launch queue fills and the
// figure becomes the GPU's per-kernel time instead (the steady state a launch-bound code sees).
#include "microbench/launch/launch.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/cuda/graph.hpp"
#include "core/errors.hpp"
#include "microbench/launch/cpu_pin.hpp"
#include "microbench/launch/difference_method.hpp"
#include "microbench/launch/interleaved_timing.hpp"
#include "microbench/launch/launch_kernels.cuh"
#include "microbench/sampled_metric.hpp"

#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace gpufact::microbench {
namespace {

struct Method {
  const char* name;
  const char* label;
  double published_us;  // volkov08 §3.1 on the 8800GTX with CUDA 1.1 (0: no counterpart)
  const char* published_note;
};

constexpr Method methods[] = {
    {"async_chevron", "asynchronous <<<>>> launch", 6.0, "volkov08 §3.1, 8800GTX, CUDA 1.1: 5–7 µs with <<<>>>"},
    {"async_driver", "asynchronous cuLaunchKernel", 5.0, "volkov08 §3.1, 8800GTX, CUDA 1.1: 5 µs with cuLaunchGrid"},
    {"async_ex_0B", "asynchronous cudaLaunchKernelEx, 0 B of parameters", 0, ""},
    {"async_ex_4KB", "asynchronous cudaLaunchKernelEx, 4 KB of parameters", 0, ""},
    {"sync_each", "<<<>>> launch + cudaStreamSynchronize", 11.5,
     "volkov08 §3.1, 8800GTX, CUDA 1.1: 11–12 µs synchronizing each launch"},
    {"graph_node", "one kernel node of a CUDA graph replay", 0, ""},
};

const Method& method_named(const std::string& name) {
  for (const auto& m : methods)
    if (name == m.name) return m;
  throw UsageError("axis 'method': unknown method '" + name + "'");
}

// The launch cost is paid by this CPU; the system block has it too, the result keeps it at hand.
std::string host_cpu_model(const SystemInfo& sys) {
  const auto host = sys.doc.find("host");
  if (host == sys.doc.end() || !host->is_object()) return "";
  return host->value("cpu_model", std::string());
}

// Samples of the difference method: 41 pairs, each the median of 5 timings of T(1) and of T(N).
// At N = 1000 the slowest method (a synchronization per launch, ~9 µs) takes ~2 s.
constexpr int launch_samples = 41, launch_inner_timings = 5;

kernels::LaunchApi api_of(const std::string& method) {
  if (method == "async_driver") return kernels::LaunchApi::driver;
  if (method == "async_ex_0B") return kernels::LaunchApi::launch_ex_no_params;
  if (method == "async_ex_4KB") return kernels::LaunchApi::launch_ex_4kb;
  return kernels::LaunchApi::chevron;  // async_chevron, sync_each, graph_node
}

void run_launch(Case& c) {
  const std::string method = c.text("method");
  const Method& info = method_named(method);
  const long n = static_cast<long>(c.integer("launches"));
  const kernels::LaunchApi api = api_of(method);
  cudaStream_t s = c.stream();

  DeviceBuffer<unsigned long long> own(1);
  unsigned long long* counter = kernels::launch_counter(api, own.data());
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));

  // Graphs of 1 and N kernel nodes, captured from <<<>>> launches.
  CapturedGraph graph_one, graph_many;
  if (method == "graph_node") {
    auto capture = [&](long k) {
      return CapturedGraph::capture(
          s, [&](cudaStream_t cs) { kernels::launch_count_kernels(kernels::LaunchApi::chevron, counter, k, cs); });
    };
    graph_one = capture(1);
    graph_many = capture(n);
  }

  // Issues `k` launches (k is 1 or n) and waits for them; counts every launch made on the host.
  // Asynchronous launches return when the last launch call did, before the wait: the host's own
  // share of the time, which the difference method turns into the issue cost per launch.
  using Clock = std::chrono::steady_clock;
  unsigned long long launched = 0;
  std::function<std::optional<Clock::time_point>(long)> issue;
  if (method == "sync_each") {
    issue = [&](long k) -> std::optional<Clock::time_point> {
      launched += static_cast<unsigned long long>(k);
      kernels::launch_count_kernels_sync_each(counter, k, s);
      return std::nullopt;
    };
  } else if (method == "graph_node") {
    issue = [&](long k) -> std::optional<Clock::time_point> {
      launched += static_cast<unsigned long long>(k);
      (k == 1 ? graph_one : graph_many).launch(s);
      GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
      return std::nullopt;
    };
  } else {
    issue = [&](long k) -> std::optional<Clock::time_point> {
      launched += static_cast<unsigned long long>(k);
      kernels::launch_count_kernels(api, counter, k, s);
      const auto issued = Clock::now();
      GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
      return issued;
    };
  }
  // Warm-up: the first launch loads the module, a graph's first replay uploads it.
  issue(1);
  issue(n);

  // T(1) and T(N) interleaved, each sample the median of a few inner timings, the thread pinned
  // to its CPU: drift and migrations cancel or vanish instead of widening the spread.
  const ScopedCpuPin pin;
  const InterleavedSpec sampling{
      .few = 1, .many = n, .samples = launch_samples, .inner = launch_inner_timings, .warmup_s = 0.25,
      .host_clock = true};
  const auto times = time_interleaved(
      sampling,
      std::function<TimedCall(long)>([&](long k) {
        const auto t0 = Clock::now();
        const auto issued = issue(k);
        const auto t1 = Clock::now();
        return TimedCall{.seconds = std::chrono::duration<double>(t1 - t0).count(),
                         .part = issued ? std::chrono::duration<double>(*issued - t0).count() : -1.0};
      }),
      [&] { return c.session().interrupted(); });
  record_interleaved(c.result(), sampling, pin, times, "1 launch + sync", std::to_string(n) + " launches + sync",
                     "until the last launch call returned");

  unsigned long long counted = 0;
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&counted, counter, sizeof counted, cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  c.verify("|device launch counter − launches issued|",
           std::fabs(static_cast<double>(counted) - static_cast<double>(launched)), 0.0);
  c.result().data["launches_issued"] = launched;
  c.result().data["device_counter"] = counted;
  c.result().data["kernel_param_bytes"] = kernels::launch_param_bytes(api);
  c.result().data["host_cpu"] = host_cpu_model(c.session().system());
  c.result().data["method"] = info.label;

  Metric per = difference_metric(paired_difference_per_unit(times.few, times.many, 1.0, static_cast<double>(n)),
                                 "per_launch",
                                 method == "graph_node" ? "time per graph node (T(N) − T(1))/(N − 1)"
                                                        : "time per launch (T(N) − T(1))/(N − 1)",
                                 "s");
  if (info.published_us > 0) per.published = Published{info.published_us * 1e-6, info.published_note};
  const double per_launch = per.value;
  c.add_metric(std::move(per));
  // The same in host cycles, each pair at the clock measured beside it: what a launch costs the
  // host whatever clock it ran at (host_clock.hpp).
  if (!times.host_hz.empty()) {
    std::vector<double> few_cycles, many_cycles;
    for (std::size_t i = 0; i < times.host_hz.size(); ++i) {
      few_cycles.push_back(times.few[i] * times.host_hz[i]);
      many_cycles.push_back(times.many[i] * times.host_hz[i]);
    }
    Metric cycles = difference_metric(paired_difference_per_unit(few_cycles, many_cycles, 1.0, static_cast<double>(n)),
                                      "per_launch_host_cycles",
                                      "host cycles per launch, each pair at its measured host clock", "cycles");
    cycles.headline = false;
    c.add_metric(std::move(cycles));
  }
  // The host's share: (I(N) − I(1))/(N − 1) with I the time until the last launch call returned.
  // Equal to per_launch when the host paces the launches; below it when the GPU retires the
  // kernels more slowly than the host issues them (per_launch is then the GPU's pace). Only
  // asynchronous launches report the part.
  if (!times.few_part.empty()) {
    Metric part = difference_metric(
        paired_difference_per_unit(times.few_part, times.many_part, 1.0, static_cast<double>(n)), "issue_per_launch",
        "host time per launch call, before the wait (I(N) − I(1))/(N − 1)", "s");
    part.headline = false;
    const double host_share = part.value / per_launch;
    c.add_metric(std::move(part));
    c.add_metric({.tag = "issue_share", .name = "issue_per_launch / per_launch (1: the host paces the launches)",
                  .unit = "x", .value = host_share, .higher_is_better = false, .role = MetricRole::derived});
  }
}

// One line per method at its largest N: the per-launch costs side by side, and what a
// synchronization adds to a launch (sync_each − async_chevron).
void summarize(Summary& s) {
  Result d;
  d.experiment = "volkov08.launch";
  d.artifact = "volkov08.launch summary";
  d.device = s.session().device();
  std::map<std::string, std::pair<std::int64_t, const Metric*>> best;  // method -> (N, per launch)
  for (const auto& r : s.results()) {
    if (r.status != Status::passed) continue;
    const auto* m = r.find_metric("per_launch");
    if (!m) continue;
    const std::string method = r.axes.value("method", "");
    const std::int64_t n = r.axes.value("launches", std::int64_t{0});
    auto it = best.find(method);
    if (it == best.end() || n > it->second.first) best[method] = {n, m};
  }
  if (best.empty()) return;
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& m : methods) {
    auto it = best.find(m.name);
    if (it == best.end()) continue;
    d.metrics.push_back(with_spread_of({.tag = std::string(m.name) + "/per_launch", .name = m.label, .unit = "s",
                                        .value = it->second.second->value, .higher_is_better = false,
                                        .headline = true, .role = MetricRole::derived},
                                       *it->second.second));
    rows.push_back(
        {{"method", m.name}, {"launches", it->second.first}, {"per_launch_us", it->second.second->value * 1e6}});
  }
  if (best.count("sync_each") && best.count("async_chevron"))
    d.metrics.push_back({.tag = "sync_cost", .name = "synchronization added per launch (sync_each − async_chevron)",
                         .unit = "s", .value = best["sync_each"].second->value - best["async_chevron"].second->value,
                         .higher_is_better = false, .headline = true, .role = MetricRole::derived});
  d.data["per_launch"] = rows;
  d.data["host_cpu"] = host_cpu_model(s.session().system());
  d.status = Status::passed;
  flag_wide_spread(d);
  s.add(std::move(d));
}

}  // namespace

void register_launch(Registry& registry) {
  Experiment e;
  e.key = "volkov08.launch";
  e.artifact = "volkov08.launch";
  e.title = "Kernel launch overhead (difference method): <<<>>>, cuLaunchKernel, cudaLaunchKernelEx 0 B/4 KB, "
            "synchronized each launch, CUDA graph node";
  std::vector<std::string> choices;
  for (const auto& m : methods) choices.emplace_back(m.name);
  e.axes = {
      {.name = "method", .kind = AxisKind::text,
       .help = "async_chevron: <<<>>>; async_driver: cuLaunchKernel; async_ex_0B/async_ex_4KB: cudaLaunchKernelEx "
               "with 0 B / 4 KB of parameters; sync_each: cudaStreamSynchronize after every launch; graph_node: per "
               "node of a replayed CUDA graph",
       .defaults = join_axis_values(choices), .choices = choices},
      {.name = "launches", .kind = AxisKind::integer,
       .help = "N of the difference method (T(N) − T(1))/(N − 1); up to 1000 the host never waits on a full "
               "launch queue, above it the figure drifts toward the GPU's per-kernel time and gets noisy",
       .defaults = "1000", .quick = "1000", .full = "100,1000", .min = 2, .max = 1'000'000},
  };
  e.needs.gpus = 1;
  e.validate = [](const AxisPoint& p) {
    if (p.integer("launches") < 2)
      throw UsageError("axis 'launches': " + std::to_string(p.integer("launches")) +
                       " is below 2; the difference method needs N >= 2");
  };
  e.run = run_launch;
  e.summarize = summarize;
  registry.add(std::move(e));
}

}  // namespace gpufact::microbench
