// volkov08.bandwidth (volkov08 §3.7): device memory bandwidth of copy, read-only and write-only
// streams vs size; aligned and misaligned by 1…127 bytes (with the paper's fix — peel the head,
// stream the aligned body — against the naive byte-wise code); strided copies (the paper's
// 2^18-word case at strides 1, 8, 512) beside cublasScopy; hot, cold and rotating inputs. GB/s
// count bytes read plus written; cudaMemcpyAsync runs beside every contiguous copy.
#include "microbench/bandwidth/bandwidth.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/bench/rotation.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "core/errors.hpp"
#include "kernels/common/fill.cuh"
#include "kernels/memory/copy.cuh"
#include "microbench/sampled_metric.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>

namespace gpufact::microbench {
namespace {

unsigned long long read_count(DeviceBuffer<unsigned long long>& count, cudaStream_t s) {
  unsigned long long v = 0;
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&v, count.data(), sizeof v, cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  return v;
}

// XOR of the 4-byte aligned words of [base + offset, base + offset + bytes) when byte j of the
// region holds (j * 131 + seed) & 0xff — what launch_read must produce — computed on the host.
unsigned expected_checksum(std::uintptr_t base_address, std::size_t offset, std::size_t bytes, unsigned seed) {
  const std::uintptr_t start = base_address + offset;
  const std::uintptr_t first = (start + 3) / 4 * 4, end = (start + bytes) / 4 * 4;
  unsigned x = 0;
  for (std::uintptr_t a = first; a < end; a += 4) {
    unsigned w = 0;
    for (unsigned k = 0; k < 4; ++k) w |= (static_cast<unsigned>(((a + k - start) * 131u + seed) & 0xffu)) << (8 * k);
    x ^= w;
  }
  return x;
}

struct Buffers {
  RotatingBuffers<std::byte> src, dst;
};

void measure_stream(Case& c) {
  const std::string& op = c.text("op");
  const auto bytes = static_cast<std::size_t>(c.integer("bytes"));
  const auto offset = static_cast<std::size_t>(c.integer("offset"));
  const auto stride = static_cast<std::size_t>(c.integer("stride"));
  const CacheState cache = cache_state_from(c.text("cache"));
  const kernels::StreamConfig config = kernels::parse_stream_config(c.text("variant"));
  const std::size_t l2 = c.session().gpu().l2_bytes;
  const std::size_t footprint = offset + bytes * stride;  // per buffer
  const std::size_t per_set = (op == "read" || op == "write" ? 1 : 2) * footprint;
  const std::size_t sets = cache == CacheState::rotate ? rotation_count(per_set, l2) : 1;
  const std::size_t needed = sets * per_set + (256u << 20);
  c.require_device_memory(needed);
  if (cache == CacheState::rotate) {
    c.result().data["rotation_sets"] = sets;
    c.result().data["rotation_bytes"] = sets * per_set;
    if (sets * per_set <= 2 * l2)
      c.result().reason = "rotation capped at " + std::to_string(sets) + " sets: samples may still hit L2";
  }

  cudaStream_t s = c.stream();
  const auto seed = static_cast<unsigned>(c.seed());
  const bool needs_src = op != "write", needs_dst = op != "read";
  RotatingBuffers<std::byte> src(needs_src ? footprint : 0, sets), dst(needs_dst ? footprint : 0, sets);
  DeviceBuffer<unsigned long long> count(1);
  DeviceBuffer<unsigned> checksum(1);
  for (std::size_t i = 0; i < sets && needs_src; ++i) {
    if (stride == 1)
      kernels::launch_write(src.set(i).data() + offset, bytes, seed, s);  // the pattern the checks expect
    else
      kernels::launch_fill_random_words(reinterpret_cast<std::uint32_t*>(src.set(i).data()), footprint / 4,
                                        c.seed() + i, s);
  }
  auto poison = [&] {
    for (std::size_t i = 0; i < sets && needs_dst; ++i)
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(dst.set(i).data(), 0xff, footprint, s));
  };
  std::size_t used = 0;  // rotation sets some sample touched: those are verified
  auto check_pattern = [&](const std::string& what) {
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, sizeof(unsigned long long), s));
    for (std::size_t i = 0; i < std::min(used, sets); ++i)
      kernels::launch_count_pattern_mismatches(dst.set(i).data() + offset, bytes, seed, count.data(), s);
    c.verify(what + ": bytes differing from the expected data", static_cast<double>(read_count(count, s)), 0.0);
  };

  MeasureSpec spec;

  spec.max_min_time_s = microbench_max_sample_s;
  spec.cache = cache == CacheState::cold ? CacheState::cold : CacheState::hot;
  spec.bytes = static_cast<double>((op == "copy" ? 2 : 1) * bytes);

  if (op == "copy" && stride > 1) {
    // volkov08 §3.7: one 32-bit word per thread at the given stride; GB/s of useful bytes.
    const std::size_t n = bytes / 4;
    auto check_strided = [&](const std::string& what) {
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, sizeof(unsigned long long), s));
      for (std::size_t i = 0; i < std::min(used, sets); ++i)
        kernels::launch_count_strided_mismatches(reinterpret_cast<const std::uint32_t*>(src.set(i).data()),
                                                 reinterpret_cast<const std::uint32_t*>(dst.set(i).data()), n, stride,
                                                 count.data(), s);
      c.verify(what + ": strided words differing from the source", static_cast<double>(read_count(count, s)), 0.0);
    };
    spec.name = "strided";
    spec.label = "strided copy kernel";
    spec.body = [&](std::size_t it) {
      used = std::max(used, it + 1);
      kernels::launch_copy_strided(reinterpret_cast<const std::uint32_t*>(src.at(it)),
                                   reinterpret_cast<std::uint32_t*>(dst.at(it)), n, stride, s);
    };
    poison();
    if (c.measure(spec)) check_strided("strided copy");
    CublasHandle blas(s);
    spec.name = "cublas";
    spec.label = "cublasScopy";
    spec.body = [&](std::size_t it) {
      used = std::max(used, it + 1);
      GPUFACT_CUBLAS_CHECK(cublasScopy(blas, static_cast<int>(n), reinterpret_cast<const float*>(src.at(it)),
                                       static_cast<int>(stride), reinterpret_cast<float*>(dst.at(it)),
                                       static_cast<int>(stride)));
    };
    used = 0;
    poison();
    if (c.measure(spec)) check_strided("cublasScopy");
    return;
  }

  if (op == "read") {
    spec.name = "read";
    spec.label = "read kernel";
    spec.setup = [&](std::size_t) { GPUFACT_CUDA_CHECK(cudaMemsetAsync(checksum.data(), 0, sizeof(unsigned), s)); };
    std::size_t last = 0;
    spec.body = [&](std::size_t it) {
      last = it;
      kernels::launch_read(src.at(it) + offset, bytes, checksum.data(), s, config);
    };
    if (c.measure(spec)) {
      unsigned got = 0;
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&got, checksum.data(), sizeof got, cudaMemcpyDeviceToHost, s));
      GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
      const unsigned want =
          expected_checksum(reinterpret_cast<std::uintptr_t>(src.at(last)), offset, bytes, seed);
      c.verify("read kernel: XOR checksum differs from the host's", got == want ? 0.0 : 1.0, 0.0);
    }
    return;
  }

  if (op == "write") {
    spec.name = "write";
    spec.label = "write kernel";
    spec.body = [&](std::size_t it) {
      used = std::max(used, it + 1);
      kernels::launch_write(dst.at(it) + offset, bytes, seed, s, config);
    };
    poison();
    if (c.measure(spec)) check_pattern("write kernel");
    return;
  }

  // Contiguous copy: ours, cudaMemcpyAsync, and on misaligned data the naive byte-wise code.
  auto copy_with = [&](const char* name, const char* label, auto&& launch) {
    spec.name = name;
    spec.label = label;
    spec.body = [&](std::size_t it) {
      used = std::max(used, it + 1);
      launch(src.at(it) + offset, dst.at(it) + offset);
    };
    used = 0;
    poison();
    if (c.measure(spec)) check_pattern(label);
  };
  copy_with("copy", "copy kernel", [&](const std::byte* from, std::byte* to) {
    kernels::launch_copy(from, to, bytes, s, config);
  });
  copy_with("memcpy", "cudaMemcpyAsync D2D", [&](const std::byte* from, std::byte* to) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(to, from, bytes, cudaMemcpyDeviceToDevice, s));
  });
  if (offset % 16 != 0)
    copy_with("bytewise", "byte-wise copy (no peeling)", [&](const std::byte* from, std::byte* to) {
      kernels::launch_copy_bytewise(from, to, bytes, s);
    });
  const Metric* k = c.result().find_metric("copy/bandwidth");
  const Metric* m = c.result().find_metric("memcpy/bandwidth");
  if (k && m && m->value > 0)
    c.add_metric({.tag = "copy/vs_memcpy", .name = "copy kernel / cudaMemcpy", .unit = "%",
                  .value = 100.0 * k->value / m->value, .higher_is_better = true, .role = MetricRole::derived});
}

// A cold sample of an array smaller than L2 times mostly the L2 flush's aftermath and the
// launch (a 1 MiB copy takes a few µs): reported, but not a headline metric.
void run_stream(Case& c) {
  measure_stream(c);
  const bool small_cold = c.text("cache") == "cold" &&
                          static_cast<std::size_t>(c.integer("bytes")) < c.session().gpu().l2_bytes;
  if (!small_cold) return;
  for (auto& m : c.result().metrics)
    if (m.headline) {
      m.headline = false;
      m.name += " (cold, smaller than L2: launch and flush dominate; not a headline metric)";
    }
}

// Best DRAM rates (contiguous, aligned, sizes > 2 × L2) per stream and against cudaMemcpy and
// the datasheet; the misalignment penalty; strided effective rates.
void summarize(Summary& s) {
  const double l2 = static_cast<double>(s.session().gpu().l2_bytes);
  const double datasheet = s.session().gpu().datasheet_bandwidth_gbs();
  std::map<std::string, double> best_dram, best_any;
  std::map<std::string, const Metric*> best_dram_metric;
  const Metric* best_vs_memcpy = nullptr;
  double copy_vs_memcpy = 0;
  nlohmann::json misaligned = nlohmann::json::array(), strided = nlohmann::json::array();
  std::map<std::tuple<std::string, double, std::string, std::string>, double> aligned;  // (op, bytes, cache, variant)
  for (const auto& r : s.results()) {
    if (r.status != Status::passed) continue;
    const auto& a = r.axes;
    const bool plain = a.value("offset", 0) == 0 && a.value("stride", 1) == 1;
    const bool dram = a.value("bytes", 0.0) > 2 * l2;
    for (const char* tag : {"copy", "memcpy", "read", "write"}) {
      const auto* m = r.find_metric(std::string(tag) + "/bandwidth");
      if (!m || !plain) continue;
      best_any[tag] = std::max(best_any[tag], m->value);
      if (dram && m->value > best_dram[tag]) {
        best_dram[tag] = m->value;
        best_dram_metric[tag] = m;
      }
      if (std::string(tag) != "memcpy")
        aligned[{a.value("op", ""), a.value("bytes", 0.0), a.value("cache", ""), a.value("variant", "")}] = m->value;
    }
    if (dram && plain)
      if (const auto* v = r.find_metric("copy/vs_memcpy"); v && v->value > copy_vs_memcpy) {
        copy_vs_memcpy = v->value;
        best_vs_memcpy = v;
      }
    if (const auto* m = r.find_metric("strided/bandwidth")) {
      const auto* b = r.find_metric("cublas/bandwidth");
      strided.push_back({{"axes", a}, {"kernel_gbs", m->value}, {"cublas_gbs", b ? b->value : 0.0}});
    }
  }
  for (const auto& r : s.results()) {
    const auto& a = r.axes;
    if (r.status != Status::passed || a.value("offset", 0) == 0) continue;
    const std::string op = a.value("op", "");
    auto it = aligned.find({op, a.value("bytes", 0.0), a.value("cache", ""), a.value("variant", "")});
    const auto* m = r.find_metric(op + "/bandwidth");
    if (it == aligned.end() || !m) continue;
    nlohmann::json row = {{"axes", a}, {"gbs", m->value}, {"percent_of_aligned", 100 * m->value / it->second}};
    if (const auto* naive = r.find_metric("bytewise/bandwidth"))
      row["bytewise_percent_of_aligned"] = 100 * naive->value / it->second;
    misaligned.push_back(row);
  }
  if (best_any.empty() && strided.empty()) return;
  Result d;
  d.experiment = "volkov08.bandwidth";
  d.artifact = "volkov08.bandwidth summary";
  d.status = Status::passed;
  d.device = s.session().device();
  double best = 0;
  for (const auto& [op, v] : best_dram) {
    d.metrics.push_back(with_spread_of(derived_metric("dram/" + op, "best " + op + ", sizes > 2 × L2", "GB/s", v),
                                       *best_dram_metric[op]));
    best = std::max(best, v);
  }
  if (best_vs_memcpy) {
    d.metrics.push_back(derived_metric("dram/copy_vs_memcpy", "copy kernel / cudaMemcpy, same sizes (> 2 × L2)", "%",
                                       copy_vs_memcpy));
    if (!best_vs_memcpy->stats.empty()) d.metrics.back() = with_spread_of(d.metrics.back(), *best_vs_memcpy);
  }
  if (best > 0)
    d.metrics.push_back(derived_metric("dram/best_vs_datasheet", "best DRAM stream / datasheet", "%", 100 * best / datasheet));
  else
    d.reason = "no contiguous aligned size exceeded 2 × L2: no DRAM figure";
  for (const auto& [op, v] : best_any)
    d.metrics.push_back(derived_metric("any/" + op, "best " + op + ", any size (hot small sizes hit L2)", "GB/s", v, true, false));
  d.metrics.push_back(derived_metric("datasheet", "datasheet DRAM bandwidth (2 × clock × bus width)", "GB/s", datasheet, true, false));
  d.data["misaligned"] = misaligned;
  d.data["strided"] = strided;
  d.data["l2_bytes"] = l2;
  flag_wide_spread(d);
  s.add(std::move(d));
}

}  // namespace

void register_bandwidth(Registry& registry) {
  Experiment e;
  e.key = "volkov08.bandwidth";
  e.artifact = "volkov08.bandwidth";
  e.title = "Device memory bandwidth: copy/read/write vs size, misaligned, strided; hot/cold/rotating; vs cudaMemcpy";
  e.axes = {
      {.name = "op", .kind = AxisKind::text, .help = "copy (reads + writes), read-only, write-only",
       .defaults = "copy,read,write", .choices = {"copy", "read", "write"}},
      {.name = "bytes", .kind = AxisKind::size, .help = "useful bytes per stream (multiple of 4)",
       .defaults = "1M,16M,256M,1G", .quick = "1M,1G", .full = "4K:4G:*16", .min = 4},
      {.name = "offset", .kind = AxisKind::integer,
       .help = "misalignment of the pointers in bytes (contiguous only); offsets other than 0 and 1 are swept on "
               "DRAM-bound streams only (256 MiB … 1 GiB, hot: cold is the same there)",
       .defaults = "0,1", .quick = "0,1", .full = "0,1,2,3,4,8,16,32,63,64,127", .min = 0, .max = 127},
      {.name = "stride", .kind = AxisKind::integer,
       .help = "copy stride in 32-bit words; 1 = contiguous (volkov08 §3.7: 1, 8, 512)", .defaults = "1,8,512",
       .quick = "1,512", .min = 1, .max = 1 << 20},
      {.name = "cache", .kind = AxisKind::text,
       .help = "hot: as the last sample left it; cold: L2 flushed per sample; rotate: cycle through buffers "
               "totalling > 2 × L2",
       .defaults = "hot,cold,rotate", .quick = "cold", .full = "hot,cold", .choices = {"hot", "cold", "rotate"}},
      {.name = "variant", .kind = AxisKind::text,
       .help = "stream kernel shape: 16-byte vectors in flight per thread (uN), streaming hints (-cs), one block "
               "per chunk (-full) instead of one resident wave",
       .defaults = "u4-full",
       .choices = {"u1", "u2", "u4", "u8", "u4-cs", "u8-cs", "u1-full", "u2-full", "u4-full", "u8-full",
                   "u4-cs-full", "u8-cs-full"}},
  };
  e.needs.gpus = 1;
  e.validate = [](const AxisPoint& p) {
    if (p.integer("bytes") % 4 != 0)
      throw UsageError("axis 'bytes': " + std::to_string(p.integer("bytes")) + " is not a multiple of 4");
  };
  // Strides are a copy pattern of whole words, measured up to 64 MiB of useful data (the paper's
  // case is 1 MiB; the footprint is bytes × stride); misalignment is measured on contiguous streams,
  // 0 and 1 byte at every size, the 1…127 sweep where it costs DRAM bandwidth and not launch time.
  e.applies = [](const AxisPoint& p) {
    if (p.integer("stride") == 1) {
      const std::int64_t offset = p.integer("offset"), bytes = p.integer("bytes");
      return offset <= 1 || (bytes >= (std::int64_t{256} << 20) && bytes <= (std::int64_t{1} << 30) &&
                             p.text("cache") == "hot");
    }
    return p.text("op") == "copy" && p.integer("offset") == 0 && p.integer("bytes") <= (std::int64_t{64} << 20);
  };
  e.run = run_stream;
  e.summarize = summarize;
  e.plots = {{.artifact = "volkov08.bandwidth", .x = "bytes", .y = "*/bandwidth", .series = {"op", "cache"},
              .logx = true, .logy = false, .title = "Device memory bandwidth (volkov08 §3.7)"}};
  registry.add(std::move(e));
}

}  // namespace gpufact::microbench
