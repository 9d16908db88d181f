// volkov08.qr_panel: the panel of the blocked Householder QR (volkov08 §5, the GPU-resident QR of
// volkov08.fig7), studied as fig3 studies LU's. cuSOLVER geqrf on the m × n panel; the panel held
// in one thread block cluster's registers, one exchange of column sums per column
// (kernels/qr/panel_cluster.cuh), with CTA 0's cycles per column by phase from one extra run; and
// OpenBLAS geqrf on the host with both transfers; hot or cold L2 (axis cache). Every method's
// reflectors are checked: Q formed by LAPACK orgqr, ‖A − QR‖₁/(m‖A‖₁ε) and ‖I − QᵀQ‖₁/(mε) < 30.
#include "microbench/panel/qr_panel.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "core/errors.hpp"
#include "core/linalg/device_blas.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "kernels/qr/panel_cluster.cuh"
#include "microbench/sampled_metric.hpp"

#include <string>
#include <vector>

namespace gpufact::microbench {
namespace {

constexpr double kTolerance = 30.0;

template <class T>
void run_qr_panel_case(Case& c) {
  const std::int64_t m = c.integer("m"), n = c.integer("n");
  const std::size_t count = static_cast<std::size_t>(m * n), bytes = count * sizeof(T);
  c.require_device_memory(2 * bytes + (std::size_t{256} << 20));
  cudaStream_t s = c.stream();
  HostMatrix<T> a(m, n), qr(m, n);
  fill_uniform(a.view(), c.seed());
  DeviceBuffer<T> pristine(count), work(count), tau(static_cast<std::size_t>(n));
  std::vector<T> h_tau(static_cast<std::size_t>(n));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(pristine.data(), a.data(), bytes, cudaMemcpyHostToDevice, s));

  auto check = [&](const std::string& what, bool on_device) {
    if (on_device) {
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(qr.data(), work.data(), bytes, cudaMemcpyDeviceToHost, s));
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(h_tau.data(), tau.data(), n * sizeof(T), cudaMemcpyDeviceToHost, s));
    }
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    const QrErrors e = qr_residual<T>(a.view(), qr.view(), h_tau.data());
    c.verify(what + " ‖A−QR‖₁/(m‖A‖₁ε)", e.factorization, kTolerance);
    c.verify(what + " ‖I−QᵀQ‖₁/(mε)", e.orthogonality, kTolerance);
  };
  MeasureSpec spec;
  spec.max_min_time_s = microbench_max_sample_s;
  spec.cache = cache_state_from(c.text("cache"));
  spec.flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(n) -
               2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / 3.0;
  spec.setup = [&](std::size_t) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(work.data(), pristine.data(), bytes, cudaMemcpyDeviceToDevice, s));
  };

  CusolverHandle solver(s);
  dev::SolverWorkspace sws;
  dev::geqrf<T>(solver, m, n, work.data(), m, tau.data(), sws);  // sizes the workspace untimed
  spec.name = "cusolver";
  spec.label = "cusolverDnXgeqrf";
  spec.sync = true;
  spec.body = [&](std::size_t) {
    dev::geqrf<T>(solver, m, n, work.data(), m, tau.data(), sws);
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  };
  if (c.measure(spec)) check("cusolverDnXgeqrf", true);

  if (const auto shape = kernels::qr_panel_cluster_shape(m, n, sizeof(T)); shape.ctas > 0) {
    spec.name = "cluster";
    spec.label = "panel in one cluster's registers";
    spec.sync = false;
    spec.body = [&](std::size_t) { kernels::launch_qr_panel_cluster(work.data(), m, m, n, tau.data(), s); };
    if (c.measure(spec)) {
      check("cluster panel", true);
      spec.setup(0);
      DeviceBuffer<unsigned long long> profile(kernels::kQrPanelPhases);
      kernels::launch_qr_panel_cluster(work.data(), m, m, n, tau.data(), s, profile.data());
      std::vector<unsigned long long> cycles(kernels::kQrPanelPhases);
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(cycles.data(), profile.data(), profile.bytes(), cudaMemcpyDeviceToHost, s));
      GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
      c.result().data["cluster_shape"] = {{"ctas", shape.ctas},
                                          {"rows", shape.rows},
                                          {"width", shape.width},
                                          {"rows_per_thread", shape.rows_per_thread}};
      for (int p = 0; p < kernels::kQrPanelPhases; ++p)
        c.add_metric({.tag = std::string("cluster_cycles/") + kernels::kQrPanelPhaseNames[p],
                      .name = std::string("cluster panel, cycles per column: ") + kernels::kQrPanelPhaseNames[p],
                      .unit = "cycles",
                      .value = static_cast<double>(cycles[static_cast<std::size_t>(p)]) / static_cast<double>(n),
                      .higher_is_better = false, .headline = false, .role = MetricRole::derived});
    }
  } else {
    c.result().data["cluster_shape"] = "does not fit one cluster's registers";
  }

  // CPU: the panel to pinned host memory, OpenBLAS geqrf (all host threads), the factors back.
  PinnedBuffer<T> host_panel(count);
  spec.name = "cpu";
  spec.label = "OpenBLAS geqrf + transfers";
  spec.sync = true;
  spec.min_repetitions = 11;  // host threads and page faults disturb single samples
  spec.body = [&](std::size_t) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(host_panel.data(), work.data(), bytes, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    (void)host::geqrf<T>(m, n, host_panel.data(), m, h_tau.data());
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(work.data(), host_panel.data(), bytes, cudaMemcpyHostToDevice, s));
  };
  if (c.measure(spec)) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(qr.data(), work.data(), bytes, cudaMemcpyDeviceToHost, s));
    check("OpenBLAS geqrf", false);
  }
}

void run_qr_panel(Case& c) {
  if (c.text("precision") == "s")
    run_qr_panel_case<float>(c);
  else
    run_qr_panel_case<double>(c);
}

}  // namespace

void register_qr_panel(Registry& registry) {
  Experiment e;
  e.key = "volkov08.qr_panel";
  e.artifact = "volkov08.qr_panel";
  e.title = "Householder QR of an m × n panel: cuSOLVER geqrf, one thread block cluster, CPU + transfers";
  e.axes = {
      {.name = "precision", .kind = AxisKind::text, .help = "s = FP32, d = FP64", .defaults = "s,d", .quick = "s",
       .choices = {"s", "d"}},
      {.name = "m", .kind = AxisKind::integer, .help = "panel rows (m >= n)", .defaults = "1024,4096,8192,16384",
       .quick = "8192", .min = 1, .max = std::int64_t{1} << 24},
      {.name = "n", .kind = AxisKind::integer, .help = "panel columns (the cluster kernel holds 16, 32 or 64)",
       .defaults = "16,32,64", .quick = "64", .min = 1, .max = 1024},
      {.name = "cache", .kind = AxisKind::text,
       .help = "hot: as the previous sample left the L2 (the panel and the kernels' code); cold: L2 overwritten "
               "before every sample, as a factorization's trailing update leaves it",
       .defaults = "hot,cold", .quick = "hot,cold", .choices = {"hot", "cold"}},
  };
  e.needs.gpus = 1;
  e.validate = [](const AxisPoint& p) {
    if (p.integer("m") < p.integer("n"))
      throw UsageError("axis 'm': " + std::to_string(p.integer("m")) + " < n = " + std::to_string(p.integer("n")) +
                       "; a panel has m >= n");
  };
  e.run = run_qr_panel;
  e.plots = {{.artifact = "volkov08.qr_panel", .x = "m", .y = "*/flop_rate", .series = {"precision", "n"},
              .logx = true, .logy = true, .title = "Householder QR of an m × n panel"}};
  registry.add(std::move(e));
}

}  // namespace gpufact::microbench
