// volkov08.bandwidth (volkov08 §3.7), first form: device-to-device copy bandwidth vs size, hot
// and cold L2, counting bytes read plus written, against cudaMemcpyAsync in the same run and
// the datasheet rate.
#include "microbench/bandwidth/bandwidth.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/bench/rotation.hpp"
#include "core/cuda/buffer.hpp"
#include "core/errors.hpp"
#include "kernels/common/fill.cuh"
#include "kernels/memory/copy.cuh"

#include <algorithm>
#include <cstdint>

namespace gpufact::microbench {
namespace {

// Verifies the first `used` rotation sets (those some sample wrote) word for word.
void check_copy(Case& c, RotatingBuffers<std::uint32_t>& src, RotatingBuffers<std::uint32_t>& dst,
                std::size_t used, DeviceBuffer<unsigned long long>& count, const char* what) {
  cudaStream_t s = c.stream();
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, sizeof(unsigned long long), s));
  for (std::size_t i = 0; i < std::min(used, src.sets()); ++i)
    kernels::launch_count_mismatches(src.set(i).data(), dst.set(i).data(), src.set(i).size(), count.data(), s);
  unsigned long long mismatches = 0;
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&mismatches, count.data(), sizeof mismatches, cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  c.verify(std::string(what) + ": words differing from the source", static_cast<double>(mismatches), 0.0);
}

void poison(RotatingBuffers<std::uint32_t>& dst, cudaStream_t s) {
  for (std::size_t i = 0; i < dst.sets(); ++i)
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(dst.set(i).data(), 0xff, dst.set(i).bytes(), s));
}

void run_copy(Case& c) {
  const auto bytes = static_cast<std::size_t>(c.integer("bytes"));
  const CacheState cache = cache_state_from(c.text("cache"));
  const std::size_t l2 = c.session().gpu().l2_bytes;
  // rotate: enough source/destination pairs that no sample finds its data in L2.
  const std::size_t sets = cache == CacheState::rotate ? rotation_count(2 * bytes, l2) : 1;
  const std::size_t needed = sets * 2 * bytes + (64u << 20);
  if (needed > device_free_bytes())
    c.skip("needs " + std::to_string(needed >> 20) + " MiB of device memory, " +
           std::to_string(device_free_bytes() >> 20) + " MiB free");
  if (cache == CacheState::rotate) {
    c.result().data["rotation_sets"] = sets;
    c.result().data["rotation_bytes"] = sets * 2 * bytes;
    if (sets * 2 * bytes <= 2 * l2)
      c.result().reason = "rotation capped at " + std::to_string(sets) + " sets: samples may still hit L2";
  }
  cudaStream_t s = c.stream();
  const std::size_t words = bytes / 4;
  RotatingBuffers<std::uint32_t> src(words, sets), dst(words, sets);
  DeviceBuffer<unsigned long long> count(1);
  for (std::size_t i = 0; i < sets; ++i) kernels::launch_fill_random_words(src.set(i).data(), words, c.seed() + i, s);

  std::size_t used = 0;
  MeasureSpec copy;
  copy.name = "copy";
  copy.label = "copy kernel";
  copy.cache = cache == CacheState::cold ? CacheState::cold : CacheState::hot;
  copy.bytes = 2.0 * static_cast<double>(bytes);
  copy.body = [&](std::size_t it) {
    used = std::max(used, it + 1);
    kernels::launch_copy(src.at(it), dst.at(it), bytes, s);
  };
  poison(dst, s);
  if (c.measure(copy)) check_copy(c, src, dst, used, count, "copy kernel");

  MeasureSpec memcpy = copy;
  memcpy.name = "memcpy";
  memcpy.label = "cudaMemcpyAsync D2D";
  memcpy.body = [&](std::size_t it) {
    used = std::max(used, it + 1);
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dst.at(it), src.at(it), bytes, cudaMemcpyDeviceToDevice, s));
  };
  used = 0;
  poison(dst, s);
  if (c.measure(memcpy)) check_copy(c, src, dst, used, count, "cudaMemcpyAsync");

  const Metric* k = c.result().find_metric("copy/bandwidth");
  const Metric* m = c.result().find_metric("memcpy/bandwidth");
  if (k && m && m->value > 0)
    c.add_metric({.tag = "copy/vs_memcpy", .name = "copy kernel / cudaMemcpy", .unit = "%",
                  .value = 100.0 * k->value / m->value, .higher_is_better = true, .role = MetricRole::derived});
}

// Best rates over sizes whose source alone exceeds twice the L2 (DRAM, whatever the cache
// state) and, separately, over all sizes (hot small sizes run from L2).
void summarize(Summary& s) {
  const double l2 = static_cast<double>(s.session().gpu().l2_bytes);
  double dram_copy = 0, dram_memcpy = 0, any_copy = 0, any_memcpy = 0;
  for (const auto& r : s.results()) {
    if (r.status != Status::passed) continue;
    const bool dram = r.axes.value("bytes", 0.0) >= 2 * l2;
    if (const auto* m = r.find_metric("copy/bandwidth")) {
      any_copy = std::max(any_copy, m->value);
      if (dram) dram_copy = std::max(dram_copy, m->value);
    }
    if (const auto* m = r.find_metric("memcpy/bandwidth")) {
      any_memcpy = std::max(any_memcpy, m->value);
      if (dram) dram_memcpy = std::max(dram_memcpy, m->value);
    }
  }
  if (any_copy == 0 || any_memcpy == 0) return;
  Result d;
  d.experiment = "volkov08.bandwidth";
  d.artifact = "volkov08.bandwidth summary";
  d.status = Status::passed;
  d.device = s.session().device();
  const double datasheet = s.session().gpu().datasheet_bandwidth_gbs();
  auto derived = [](std::string tag, std::string name, std::string unit, double v) {
    return Metric{.tag = std::move(tag), .name = std::move(name), .unit = std::move(unit), .value = v,
                  .higher_is_better = true, .headline = true, .role = MetricRole::derived};
  };
  if (dram_copy > 0 && dram_memcpy > 0) {
    d.metrics.push_back(derived("dram/copy", "best copy kernel, sizes > 2 × L2", "GB/s", dram_copy));
    d.metrics.push_back(derived("dram/memcpy", "best cudaMemcpy, sizes > 2 × L2", "GB/s", dram_memcpy));
    d.metrics.push_back(derived("dram/copy_vs_memcpy", "copy kernel / cudaMemcpy (DRAM)", "%",
                                100 * dram_copy / dram_memcpy));
    d.metrics.push_back(derived("dram/vs_datasheet", "best DRAM copy / datasheet", "%",
                                100 * std::max(dram_copy, dram_memcpy) / datasheet));
  } else {
    d.reason = "no size exceeded 2 × L2: no DRAM figure";
  }
  d.metrics.push_back(derived("any/copy", "best copy kernel, any size (hot small sizes hit L2)", "GB/s", any_copy));
  d.metrics.push_back(derived("any/memcpy", "best cudaMemcpy, any size", "GB/s", any_memcpy));
  d.metrics.push_back(derived("datasheet", "datasheet DRAM bandwidth (2 × clock × bus width)", "GB/s", datasheet));
  const double best = std::max(any_copy, any_memcpy);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : s.results())
    if (const auto* m = r.find_metric("copy/bandwidth"))
      rows.push_back({{"axes", r.axes}, {"copy_gbs", m->value}, {"percent_of_best", 100 * m->value / best}});
  d.data["percent_of_best_measured"] = rows;
  d.data["l2_bytes"] = l2;
  s.add(std::move(d));
}

}  // namespace

void register_bandwidth(Registry& registry) {
  Experiment e;
  e.key = "volkov08.bandwidth";
  e.artifact = "volkov08.bandwidth";
  e.title = "Device copy bandwidth vs size (bytes read + written), hot/cold/rotating inputs, vs cudaMemcpy";
  e.axes = {
      {.name = "bytes", .kind = AxisKind::size, .help = "bytes copied (multiple of 4)",
       .defaults = "1M,16M,256M,1G", .quick = "4M,64M,1G", .full = "4K:4G:*4", .min = 4},
      {.name = "cache", .kind = AxisKind::text,
       .help = "hot: as the last sample left it; cold: L2 flushed per sample; rotate: cycle through buffer "
               "pairs totalling > 2 × L2",
       .defaults = "hot,cold,rotate", .quick = "hot,cold", .choices = {"hot", "cold", "rotate"}},
  };
  e.needs.gpus = 1;
  e.validate = [](const AxisPoint& p) {
    if (p.integer("bytes") % 4 != 0)
      throw UsageError("axis 'bytes': " + std::to_string(p.integer("bytes")) + " is not a multiple of 4");
  };
  e.run = run_copy;
  e.summarize = summarize;
  e.plots = {{.artifact = "volkov08.bandwidth", .x = "bytes", .y = "copy/bandwidth", .series = {"cache"},
              .logx = true, .logy = false, .title = "Device copy bandwidth (volkov08 §3.7)"}};
  registry.add(std::move(e));
}

}  // namespace gpufact::microbench
