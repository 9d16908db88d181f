// volkov08.transfer (volkov08 §3.2, eq. 1): host-to-device, device-to-host and both at once (two
// streams; bytes of both directions counted), from pinned (cudaMallocHost) and pageable (new[])
// host memory, 1 B to 1 GB. Pinned copies are timed with CUDA events on the stream (the copy's
// own time; issue latency excluded); pageable ones with the host clock around the copy and its
// stream synchronization (what the caller waits for: they are staged through the driver's pinned
// buffers). The summary fits Time = α + bytes/β per direction and memory kind (the paper: 15 µs +
// bytes/3.3 GB/s on PCIe 1.1) and reports the PCIe link read from NVML.
#include "microbench/transfer/transfer.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/stream.hpp"
#include "core/system/nvml.hpp"
#include "microbench/transfer/transfer_model.hpp"
#include "microbench/sampled_metric.hpp"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace gpufact::microbench {
namespace {

constexpr double kAsymmetryFlag = 0.15;  // H2D vs D2H differing by more than this is flagged
constexpr double kTargetGBs = 50.0;      // pinned H2D and D2H on a PCIe Gen5 x16 link
constexpr std::size_t kLinkProbeBytes = std::size_t{64} << 20;
constexpr unsigned char kPoison = 0xA5;

// Host memory of either kind.
class HostBytes {
 public:
  HostBytes(std::size_t n, bool pinned) {
    if (pinned)
      pinned_ = PinnedBuffer<std::byte>(n);
    else
      pageable_ = std::make_unique<std::byte[]>(n);  // value-initialized: every page touched
  }
  std::byte* data() { return pageable_ ? pageable_.get() : pinned_.data(); }

 private:
  PinnedBuffer<std::byte> pinned_;
  std::unique_ptr<std::byte[]> pageable_;
};

void fill_random(std::byte* p, std::size_t n, std::uint64_t seed) {
  std::uint64_t x = seed;
  auto next = [&x] {  // splitmix64
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const std::uint64_t w = next();
    std::memcpy(p + i, &w, 8);
  }
  const std::uint64_t w = next();
  std::memcpy(p + i, &w, n - i);
}

double differing_bytes(const std::byte* a, const std::byte* b, std::size_t n) {
  if (std::memcmp(a, b, n) == 0) return 0;
  double d = 0;
  for (std::size_t i = 0; i < n; ++i) d += a[i] != b[i];
  return d;
}

// Runs one job at a time on a second host thread, spinning rather than sleeping so that waking it
// costs well under a microsecond (pageable bidirectional copies need a second caller).
class SideThread {
 public:
  SideThread() : thread_([this] { loop(); }) {}
  ~SideThread() {
    while (state_.load(std::memory_order_acquire) == kPosted) std::this_thread::yield();
    state_.store(kStop, std::memory_order_release);
    thread_.join();
  }
  SideThread(const SideThread&) = delete;
  SideThread& operator=(const SideThread&) = delete;
  void post(std::function<void()> job) {
    job_ = std::move(job);
    error_ = nullptr;
    state_.store(kPosted, std::memory_order_release);
  }
  void wait() {
    while (state_.load(std::memory_order_acquire) != kDone) std::this_thread::yield();
    state_.store(kIdle, std::memory_order_release);
    if (error_) std::rethrow_exception(error_);
  }

 private:
  enum : int { kIdle, kPosted, kDone, kStop };
  void loop() {
    for (;;) {
      const int s = state_.load(std::memory_order_acquire);
      if (s == kStop) return;
      if (s != kPosted) {
        std::this_thread::yield();
        continue;
      }
      try {
        job_();
      } catch (...) {
        error_ = std::current_exception();
      }
      state_.store(kDone, std::memory_order_release);
    }
  }
  std::atomic<int> state_{kIdle};
  std::function<void()> job_;
  std::exception_ptr error_;
  std::thread thread_;
};

// MemAvailable (free plus reclaimable page cache); 0 when unknown.
std::size_t host_available_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);)
    if (line.rfind("MemAvailable:", 0) == 0) return std::stoull(line.substr(13)) * 1024;  // "... kB"
  return 0;
}

// The PCIe link as NVML reports it while a large pinned copy is in flight (idle links downclock).
nlohmann::json pcie_under_load(int device, void* dst, const void* src, std::size_t n, cudaMemcpyKind kind,
                               cudaStream_t s) {
  for (int i = 0; i < 4; ++i) GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dst, src, n, kind, s));
  nlohmann::json info = Nvml::instance().device_info(device);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  return info.value("pcie", nlohmann::json::object());
}

void run_transfer(Case& c) {
  const auto n = static_cast<std::size_t>(c.integer("bytes"));
  const std::string& direction = c.text("direction");
  const bool pinned = c.text("memory") == "pinned";
  const bool h2d = direction != "d2h", d2h = direction != "h2d";
  const std::size_t device_needed = n * (h2d && d2h ? 2 : 1) + (64u << 20);
  c.require_device_memory(device_needed);
  const std::size_t host_needed = 2 * n + (256u << 20);
  if (const std::size_t avail = host_available_bytes(); avail > 0 && host_needed > avail)
    c.skip("needs " + std::to_string(host_needed >> 20) + " MiB of host memory, " + std::to_string(avail >> 20) +
           " MiB available");

  cudaStream_t s = c.stream();
  const int device = c.session().device();
  HostBytes src(n, pinned), dst(n, pinned);
  DeviceBuffer<std::byte> dev_src(d2h ? n : 0), dev_dst(h2d ? n : 0);
  fill_random(src.data(), n, c.seed());
  // D2H copies the same bytes back, so one host buffer is the reference for both directions.
  if (d2h) GPUFACT_CUDA_CHECK(cudaMemcpy(dev_src.data(), src.data(), n, cudaMemcpyHostToDevice));
  if (h2d) GPUFACT_CUDA_CHECK(cudaMemsetAsync(dev_dst.data(), kPoison, n, s));
  if (d2h) std::memset(dst.data(), kPoison, n);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));

  Stream second;
  Event fork(cudaEventDisableTiming), join(cudaEventDisableTiming);
  std::unique_ptr<SideThread> side;
  if (!pinned && h2d && d2h) side = std::make_unique<SideThread>();

  MeasureSpec m;

  m.max_min_time_s = microbench_max_sample_s;
  m.name = "copy";
  m.label = std::string(direction == "h2d"   ? "H2D"
                        : direction == "d2h" ? "D2H"
                                             : "H2D+D2H") +
            " " + (pinned ? "pinned" : "pageable");
  m.bytes = static_cast<double>(n) * (h2d && d2h ? 2 : 1);
  if (pinned) {
    m.timer = Timer::gpu_events;
    m.body = [&](std::size_t) {
      if (h2d && d2h) {  // both directions at once: D2H on a second stream forked from and joined to the first
        fork.record(s);
        GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(second, fork.get(), 0));
        GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dev_dst.data(), src.data(), n, cudaMemcpyHostToDevice, s));
        GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dst.data(), dev_src.data(), n, cudaMemcpyDeviceToHost, second));
        join.record(second);
        GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(s, join.get(), 0));
      } else if (h2d) {
        GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dev_dst.data(), src.data(), n, cudaMemcpyHostToDevice, s));
      } else {
        GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dst.data(), dev_src.data(), n, cudaMemcpyDeviceToHost, s));
      }
    };
  } else {
    m.timer = Timer::host_wall;
    m.body = [&](std::size_t) {
      if (h2d && d2h) {
        side->post([&] {
          GPUFACT_CUDA_CHECK(cudaSetDevice(device));
          GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dst.data(), dev_src.data(), n, cudaMemcpyDeviceToHost, second));
          second.synchronize();
        });
        GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dev_dst.data(), src.data(), n, cudaMemcpyHostToDevice, s));
        GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
        side->wait();
      } else if (h2d) {
        GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dev_dst.data(), src.data(), n, cudaMemcpyHostToDevice, s));
        GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
      } else {
        GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dst.data(), dev_src.data(), n, cudaMemcpyDeviceToHost, s));
        GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
      }
    };
  }
  // Pageable copies go through the driver's staging buffers and the host's page cache: noisy
  // per sample, so more samples, and reported outside the headline set.
  if (!pinned) m.min_repetitions = 11;
  if (!c.measure(m)) return;
  if (!pinned)
    for (auto& metric : c.result().metrics)
      if (metric.tag.starts_with("copy/") && metric.role == MetricRole::performance) {
        metric.headline = false;
        metric.name += " (pageable: depends on the host's page cache and staging copies; not a headline metric)";
      }
  GPUFACT_CUDA_CHECK(cudaDeviceSynchronize());

  // D2H landed in dst; H2D is read back into dst (after the D2H check) and compared the same way.
  if (d2h)
    c.verify("bytes copied device-to-host that differ from the source", differing_bytes(dst.data(), src.data(), n), 0);
  if (h2d) {
    std::memset(dst.data(), kPoison, n);
    GPUFACT_CUDA_CHECK(cudaMemcpy(dst.data(), dev_dst.data(), n, cudaMemcpyDeviceToHost));
    c.verify("bytes copied host-to-device that differ from the source (read back)",
             differing_bytes(dst.data(), src.data(), n), 0);
  }
  c.result().data["timer"] = pinned ? "CUDA events around the copies" : "host clock around copy + stream sync";
  c.result().data["bytes_counted"] = m.bytes;
  if (pinned && n >= kLinkProbeBytes)
    c.result().data["pcie_during_copy"] =
        h2d ? pcie_under_load(device, dev_dst.data(), src.data(), n, cudaMemcpyHostToDevice, s)
            : pcie_under_load(device, dst.data(), dev_src.data(), n, cudaMemcpyDeviceToHost, s);
}

// --- summary ---------------------------------------------------------------------------------

nlohmann::json inventory_pcie(Summary& s) {
  const int device = s.session().device();
  for (const auto& g : s.session().system().doc.value("gpus", nlohmann::json::array()))
    if (g.value("index", -1) == device && g.contains("nvml")) return g["nvml"].value("pcie", nlohmann::json::object());
  return nlohmann::json::object();
}

void summarize(Summary& s) {
  // Per (direction, memory): the points of the fit and the best bandwidth.
  std::map<std::pair<std::string, std::string>, std::vector<TransferPoint>> groups;
  std::map<std::pair<std::string, std::string>, double> best;
  std::map<std::pair<std::string, std::string>, const Metric*> best_metric;
  nlohmann::json loaded = nlohmann::json::object();  // the widest/fastest link seen under load
  for (const auto& r : s.results()) {
    if (r.status != Status::passed) continue;
    const Metric* t = r.find_metric("copy/time");
    const Metric* bw = r.find_metric("copy/bandwidth");
    if (!t || !bw) continue;
    const auto key = std::make_pair(r.axes.value("direction", std::string()), r.axes.value("memory", std::string()));
    groups[key].push_back({r.data.value("bytes_counted", 0.0), t->value});
    if (bw->value > best[key]) {
      best[key] = bw->value;
      best_metric[key] = bw;
    }
    if (r.data.contains("pcie_during_copy")) {
      const auto& p = r.data["pcie_during_copy"];
      if (p.value("generation", 0) * 100 + p.value("width", 0) >
          loaded.value("generation", 0) * 100 + loaded.value("width", 0))
        loaded = p;
    }
  }
  std::map<std::pair<std::string, std::string>, double> beta;
  for (const auto& [key, pts] : groups) {
    Result d;
    d.experiment = "volkov08.transfer";
    d.artifact = "volkov08.transfer fit";
    d.axes = {{"direction", key.first}, {"memory", key.second}};
    d.device = s.session().device();
    try {
      const TransferFit fit = fit_latency_bandwidth(pts);
      beta[key] = fit.beta_bytes_per_s * 1e-9;
      d.status = Status::passed;
      // Pageable fits describe the host's page cache as much as the link: not headline metrics.
      const bool headline = key.second == "pinned";
      Metric alpha = derived_metric("alpha_us", "α: fixed cost per transfer", "us", fit.alpha_s * 1e6, false, headline);
      alpha.published = Published{15.0, "volkov08 eq. 1 (PCIe 1.1 x16, pinned)"};
      Metric b = derived_metric("beta_GBs", "β: asymptotic bandwidth", "GB/s", fit.beta_bytes_per_s * 1e-9, true, headline);
      b.published = Published{3.3, "volkov08 eq. 1 (PCIe 1.1 x16, pinned)"};
      d.metrics = {alpha, b,
                   derived_metric("n_half_bytes", "n½ = α·β: size reaching half of β", "B", fit.n_half_bytes, false, false),
                   derived_metric("max_rel_residual", "largest |measured − model| / measured", "%",
                           100 * fit.max_abs_rel_residual, false, false)};
      nlohmann::json rows = nlohmann::json::array();
      for (std::size_t i = 0; i < pts.size(); ++i)
        rows.push_back({{"bytes", pts[i].bytes},
                        {"seconds", pts[i].seconds},
                        {"model_seconds", fit.predict_seconds(pts[i].bytes)},
                        {"rel_residual", fit.rel_residuals[i]}});
      d.data["points"] = rows;
      d.data["alpha_clamped"] = fit.alpha_clamped;
      d.data["bytes"] = key.first == "bidir" ? "both directions counted" : "one direction";
      if (fit.alpha_clamped) d.reason = "the free fit gave α < 0; fitted with α = 0";
      if (fit.max_abs_rel_residual > 0.1)
        d.reason += std::string(d.reason.empty() ? "" : "; ") + "eq. 1 misses a point by " +
                    std::to_string(static_cast<int>(100 * fit.max_abs_rel_residual)) + "%";
    } catch (const std::invalid_argument& e) {
      d.status = Status::skipped;
      d.reason = std::string("no fit: ") + e.what();
    }
    s.add(std::move(d));
  }

  // The link: what NVML reported idle (inventory) and under load, the best pinned rates against
  // it and against each other.
  Result link;
  link.experiment = "volkov08.transfer";
  link.artifact = "volkov08.transfer link";
  link.device = s.session().device();
  link.status = Status::passed;
  const nlohmann::json idle = inventory_pcie(s);
  const nlohmann::json& now = loaded.empty() ? idle : loaded;
  link.data["pcie_idle"] = idle;
  link.data["pcie_under_load"] = loaded;
  std::vector<std::string> flags;
  const int gen = now.value("generation", 0), width = now.value("width", 0);
  const int max_gen = now.value("max_generation", 0), max_width = now.value("max_width", 0);
  if (gen > 0 && width > 0) {
    link.metrics.push_back(
        derived_metric("pcie_generation", "PCIe generation", "", gen, true, false, MetricRole::environment));
    link.metrics.push_back(derived_metric("pcie_width", "PCIe lanes", "", width, true, false, MetricRole::environment));
    link.metrics.push_back(
        derived_metric("pcie_max_generation", "PCIe generation (max)", "", max_gen, true, false, MetricRole::environment));
    link.metrics.push_back(
        derived_metric("pcie_max_width", "PCIe lanes (max)", "", max_width, true, false, MetricRole::environment));
    link.metrics.push_back(derived_metric("link_GBs", "PCIe data rate per direction (after line encoding)", "GB/s",
                                   pcie_link_gbs(gen, width), true, false, MetricRole::environment));
    if ((max_gen > 0 && gen < max_gen) || (max_width > 0 && width < max_width))
      flags.push_back("link at Gen" + std::to_string(gen) + " x" + std::to_string(width) + ", below its maximum Gen" +
                      std::to_string(max_gen) + " x" + std::to_string(max_width) +
                      (loaded.empty() ? " (idle reading: an idle link downclocks; no copy >= 64 MiB was probed)" : ""));
  } else {
    link.reason = "PCIe link unknown: " + (Nvml::instance().available() ? std::string("NVML gave no link figures")
                                                                        : Nvml::instance().unavailable_reason());
  }
  for (const std::string memory : {"pinned", "pageable"}) {
    const auto h = best.find({"h2d", memory}), d = best.find({"d2h", memory});
    if (h != best.end())
      link.metrics.push_back(with_spread_of(
          derived_metric("best_h2d_" + memory + "_GBs", "best H2D " + memory, "GB/s", h->second, true, memory == "pinned"),
          *best_metric[h->first]));
    if (d != best.end())
      link.metrics.push_back(with_spread_of(
          derived_metric("best_d2h_" + memory + "_GBs", "best D2H " + memory, "GB/s", d->second, true, memory == "pinned"),
          *best_metric[d->first]));
    if (h == best.end() || d == best.end()) continue;
    // Asymmetry from the fitted β where both fits exist, else from the best rates.
    const auto bh = beta.find({"h2d", memory}), bd = beta.find({"d2h", memory});
    const bool fitted = bh != beta.end() && bd != beta.end();
    const double asym = fitted ? relative_asymmetry(bh->second, bd->second) : relative_asymmetry(h->second, d->second);
    link.metrics.push_back(
        derived_metric("asymmetry_" + memory, "|H2D − D2H| / max, " + memory, "%", 100 * asym, false, false));
    if (asym > kAsymmetryFlag)
      flags.push_back(std::string("H2D and D2H ") + memory + " differ by " +
                      std::to_string(static_cast<int>(100 * asym)) + "% (" + (fitted ? "fitted β" : "best rates") +
                      ")");
    if (memory == "pinned" && max_gen == 5 && max_width == 16 && std::min(h->second, d->second) < kTargetGBs)
      flags.push_back("pinned H2D/D2H below the " + std::to_string(static_cast<int>(kTargetGBs)) +
                      " GB/s target for a Gen5 x16 link");
    if (memory == "pinned" && gen > 0 && width > 0)
      link.metrics.push_back(derived_metric("pinned_vs_link", "best pinned direction / link data rate", "%",
                                     100 * std::max(h->second, d->second) / pcie_link_gbs(gen, width), true, false));
  }
  link.data["flags"] = flags;
  link.data["target_GBs"] = kTargetGBs;
  for (const auto& f : flags) link.reason += (link.reason.empty() ? "" : "; ") + f;
  flag_wide_spread(link);
  s.add(std::move(link));
}

}  // namespace

void register_transfer(Registry& registry) {
  Experiment e;
  e.key = "volkov08.transfer";
  e.artifact = "volkov08.transfer";
  e.title = "CPU-GPU transfers: H2D, D2H, both at once; pinned and pageable; fitted Time = α + bytes/β";
  e.axes = {
      {.name = "direction",
       .kind = AxisKind::text,
       .help = "h2d, d2h, or bidir (both at once on two streams, bytes of both directions counted)",
       .defaults = "h2d,d2h,bidir",
       .choices = {"h2d", "d2h", "bidir"}},
      {.name = "memory",
       .kind = AxisKind::text,
       .help = "pinned (cudaMallocHost) or pageable (new[]) host memory",
       .defaults = "pinned,pageable",
       .choices = {"pinned", "pageable"}},
      {.name = "bytes",
       .kind = AxisKind::size,
       .help = "bytes per direction",
       .defaults = "1,1K,64K,1M,16M,256M",
       .quick = "1,4K,1M,64M,256M",
       .full = "1:1G:*4",
       .min = 1,
       .max = std::int64_t{1} << 32},
  };
  e.needs.gpus = 1;
  e.run = run_transfer;
  e.summarize = summarize;
  e.plots = {{.artifact = "volkov08.transfer",
              .x = "bytes",
              .y = "copy/bandwidth",
              .series = {"direction", "memory"},
              .logx = true,
              .logy = true,
              .title = "CPU-GPU transfer bandwidth vs size (volkov08 §3.2)"}};
  registry.add(std::move(e));
}

}  // namespace gpufact::microbench
