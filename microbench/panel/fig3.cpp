// volkov08.fig3 (volkov08 §3.8, Fig. 3): LU factorization of an m × 64 panel. GPU "naive" is
// LAPACK's sgetf2 as cuBLAS calls (isamax, sswap, sscal, sger per column, the pivot fetched to the
// host as the paper did); GPU "fused" runs three kernels per column with no host round trip; GPU
// "persistent" is one cooperative kernel with grid-wide barriers between the steps; "cpu" is
// OpenBLAS sgetrf including the transfers both ways. Beyond the paper, the two GPU panels the
// GPU-resident LU (volkov08.fig7) can use: cuSOLVER's getrf and TSLU with tournament pivoting
// (kernels/lu/tslu.cuh, n <= 64), and the panel held in one thread block cluster's shared memory
// exchanging candidate rows once per column (kernels/lu/panel_coop.cuh, where it fits), with where its
// time goes per column. Beside them, eq. (2)'s estimates from this run's launch overhead
// and bandwidth, and with the grid barrier's cost as the startup time.
#include "microbench/panel/fig3.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "core/errors.hpp"
#include "core/linalg/device_blas.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/residual.hpp"
#include "kernels/common/fill.cuh"
#include "kernels/lu/panel_coop.cuh"
#include "kernels/lu/panel_getf2.cuh"
#include "kernels/lu/tslu.cuh"
#include "kernels/memory/copy.cuh"
#include "microbench/panel/panel_model.hpp"
#include "microbench/sampled_metric.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace gpufact::microbench {
namespace {

constexpr double kTolerance = 30.0;  // MAGMA testers' threshold for ‖PA − LU‖/(n‖A‖ε)


void run_panel(Case& c) {
  const std::int64_t m = c.integer("m"), n = c.integer("n");
  const std::size_t count = static_cast<std::size_t>(m * n), bytes = count * sizeof(float);
  c.require_device_memory(3 * bytes + (256u << 20));
  cudaStream_t s = c.stream();
  const double flops = getf2_flops(m, n);

  DeviceBuffer<float> pristine(count), work(count);
  kernels::launch_fill_uniform(pristine.data(), count, c.seed(), -1.0f, 1.0f, s);
  HostMatrix<float> a(m, n), lu(m, n);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(a.data(), pristine.data(), bytes, cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));

  const int blocks = kernels::getf2_search_blocks(m);
  DeviceBuffer<float> block_max(static_cast<std::size_t>(blocks)), reciprocal(1);
  DeviceBuffer<int> block_index(static_cast<std::size_t>(blocks)), d_ipiv(static_cast<std::size_t>(n)), d_info(1);
  const kernels::Getf2Workspace ws{block_max.data(), block_index.data(), reciprocal.data()};
  std::vector<int> h_ipiv(static_cast<std::size_t>(n));
  int h_info = 0;

  auto restore = [&](std::size_t) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(work.data(), pristine.data(), bytes, cudaMemcpyDeviceToDevice, s));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(d_info.data(), 0, sizeof(int), s));
    h_info = 0;
  };
  // Checks the factors left in `work` against A; pivots and info from the host or the device.
  auto check = [&](const std::string& what, bool on_device) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(lu.data(), work.data(), bytes, cudaMemcpyDeviceToHost, s));
    if (on_device) {
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(h_ipiv.data(), d_ipiv.data(), h_ipiv.size() * sizeof(int),
                                         cudaMemcpyDeviceToHost, s));
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&h_info, d_info.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
    }
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    c.verify(what + " info", h_info, 0);
    c.verify(what + " ‖PA−LU‖₁/(n‖A‖₁ε)", lu_residual<float>(a.view(), lu.view(), h_ipiv.data()), kTolerance);
  };

  MeasureSpec spec;

  spec.max_min_time_s = microbench_max_sample_s;
  spec.flops = flops;
  spec.setup = restore;

  // GPU naive: LAPACK sgetf2 as cuBLAS calls; isamax's result and the pivot come back to the host.
  CublasHandle blas(s);
  spec.name = "naive";
  spec.label = "cuBLAS getf2";
  spec.sync = true;
  spec.body = [&](std::size_t) {
    float* w = work.data();
    const int M = static_cast<int>(m), N = static_cast<int>(n);
    for (int j = 0; j < std::min(M, N); ++j) {
      int idx = 0;
      GPUFACT_CUBLAS_CHECK(cublasIsamax(blas, M - j, w + j + static_cast<std::int64_t>(j) * m, 1, &idx));
      const int p = j + idx - 1;
      h_ipiv[static_cast<std::size_t>(j)] = p + 1;
      if (p != j) GPUFACT_CUBLAS_CHECK(cublasSswap(blas, N, w + j, M, w + p, M));
      float pivot = 0.0f;
      GPUFACT_CUBLAS_CHECK(cublasGetVectorAsync(1, sizeof(float), w + j + static_cast<std::int64_t>(j) * m, 1, &pivot,
                                                1, s));
      GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
      if (pivot == 0.0f) {
        if (h_info == 0) h_info = j + 1;
        continue;
      }
      const float r = 1.0f / pivot, minus_one = -1.0f;
      GPUFACT_CUBLAS_CHECK(cublasSscal(blas, M - j - 1, &r, w + j + 1 + static_cast<std::int64_t>(j) * m, 1));
      if (j + 1 < N)
        GPUFACT_CUBLAS_CHECK(cublasSger(blas, M - j - 1, N - j - 1, &minus_one,
                                        w + j + 1 + static_cast<std::int64_t>(j) * m, 1,
                                        w + j + static_cast<std::int64_t>(j + 1) * m, M,
                                        w + j + 1 + static_cast<std::int64_t>(j + 1) * m, M));
    }
  };
  if (c.measure(spec)) check("cuBLAS getf2", false);

  // GPU fused kernels, no host round trip; the stream is held while the 3n launches are enqueued.
  spec.name = "fused";
  spec.label = "fused kernels";
  spec.sync = false;
  spec.body = [&](std::size_t) {
    for (std::int64_t j = 0; j < std::min(m, n); ++j)
      kernels::launch_getf2_column(work.data(), m, m, n, j, d_ipiv.data(), d_info.data(), ws, s);
  };
  if (c.measure(spec)) check("fused kernels", true);

  spec.name = "persistent";
  spec.label = "one cooperative kernel";
  spec.body = [&](std::size_t) {
    kernels::launch_getf2_persistent(work.data(), m, m, n, d_ipiv.data(), d_info.data(), ws, s);
  };
  if (c.measure(spec)) check("cooperative kernel", true);

  // The GPU-resident LU's panels: cuSOLVER getrf, and TSLU (a tree of getf2s on row blocks in
  // shared memory picks the pivots, then one solve for L21). Both leave 64-bit pivots on the device.
  DeviceBuffer<std::int64_t> ipiv64(static_cast<std::size_t>(n));
  auto check64 = [&](const std::string& what) {
    std::vector<std::int64_t> p(static_cast<std::size_t>(n));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(p.data(), ipiv64.data(), n * sizeof(std::int64_t), cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    for (std::int64_t j = 0; j < n; ++j) h_ipiv[static_cast<std::size_t>(j)] = static_cast<int>(p[static_cast<std::size_t>(j)]);
    check(what, false);
  };
  CusolverHandle solver(s);
  dev::SolverWorkspace sws;
  dev::getrf<float>(solver, m, n, work.data(), m, ipiv64.data(), sws);  // sizes the workspace untimed
  spec.name = "cusolver";
  spec.label = "cusolverDnXgetrf";
  spec.sync = true;
  spec.body = [&](std::size_t) {
    dev::getrf<float>(solver, m, n, work.data(), m, ipiv64.data(), sws);
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  };
  if (c.measure(spec)) {
    h_info = sws.read_info(s);
    check64("cusolverDnXgetrf");
  }
  if (n <= kernels::kTsluMaxWidth) {
    DeviceBuffer<std::byte> tslu_work(kernels::tslu_workspace_bytes(m, n, sizeof(float)));
    spec.name = "tslu";
    spec.label = "TSLU (tournament pivoting)";
    spec.body = [&](std::size_t) {
      kernels::launch_tslu(work.data(), m, m, n, ipiv64.data(), d_info.data(), tslu_work.data(), tslu_work.bytes(), s);
      GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    };
    if (c.measure(spec)) {
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&h_info, d_info.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
      check64("TSLU");
    }
  }

  if (const auto shape = kernels::coop_panel_shape(m, n, sizeof(float)); shape.ctas > 0) {
    spec.name = "cluster";
    spec.label = "panel in one cluster's shared memory";
    spec.body = [&](std::size_t) {
      kernels::launch_lu_panel_coop(work.data(), m, m, n, ipiv64.data(), d_info.data(), s);
      GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    };
    if (c.measure(spec)) {
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&h_info, d_info.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
      check64("cluster panel");
      // One more run with CTA 0's phase clocks: SM cycles per column in each phase.
      restore(0);
      DeviceBuffer<unsigned long long> profile(kernels::kCoopPanelPhases);
      kernels::launch_lu_panel_coop(work.data(), m, m, n, ipiv64.data(), d_info.data(), s, profile.data());
      std::vector<unsigned long long> cycles(kernels::kCoopPanelPhases);
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(cycles.data(), profile.data(), profile.bytes(), cudaMemcpyDeviceToHost, s));
      GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
      c.result().data["cluster_shape"] = {{"ctas", shape.ctas},
                                          {"rows", shape.rows},
                                          {"shared_bytes", shape.shared_bytes},
                                          {"rows_per_thread", shape.rows_per_thread}};
      for (int p = 0; p < kernels::kCoopPanelPhases; ++p)
        c.add_metric({.tag = std::string("cluster_cycles/") + kernels::kCoopPanelPhaseNames[p],
                      .name = std::string("cluster panel, cycles per column: ") + kernels::kCoopPanelPhaseNames[p],
                      .unit = "cycles", .value = static_cast<double>(cycles[static_cast<std::size_t>(p)]) / static_cast<double>(n),
                      .higher_is_better = false, .headline = false, .role = MetricRole::derived});
    }
  }

  // CPU: the panel goes to pinned host memory, OpenBLAS factors it, the factors come back.
  PinnedBuffer<float> host_panel(count);
  spec.name = "cpu";
  spec.label = "OpenBLAS sgetrf + transfers";
  spec.sync = true;
  // Host threads and page faults disturb single samples: more of them for the median.
  spec.min_repetitions = 11;
  spec.body = [&](std::size_t) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(host_panel.data(), work.data(), bytes, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    h_info = host::getrf(m, n, host_panel.data(), m, h_ipiv.data());
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(work.data(), host_panel.data(), bytes, cudaMemcpyHostToDevice, s));
  };
  if (c.measure(spec)) check("OpenBLAS sgetrf", false);

  // Model inputs, measured in this run: launch overhead by the difference method over many
  // asynchronous launches (volkov08 §3.1), sustained copy bandwidth (§3.7), grid barrier cost.
  DeviceBuffer<unsigned char> word(8);
  constexpr int kLaunches = 1000, kRounds = 1000;
  MeasureSpec launches;
  launches.max_min_time_s = microbench_max_sample_s;
  launches.timer = Timer::host_wall;
  launches.sync = true;
  for (int k : {1, kLaunches}) {
    launches.name = "launch" + std::to_string(k);
    launches.label = std::to_string(k) + " launches";
    launches.body = [&, k](std::size_t) {
      for (int i = 0; i < k; ++i) kernels::launch_copy(word.data(), word.data() + 4, 4, s);
      GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    };
    (void)c.measure(launches);
  }
  const std::size_t stream_bytes = std::size_t{256} << 20;
  DeviceBuffer<unsigned char> from(stream_bytes), to(stream_bytes);
  MeasureSpec stream;
  stream.max_min_time_s = microbench_max_sample_s;
  stream.name = "stream";
  stream.label = "256 MiB device copy";
  stream.bytes = 2.0 * stream_bytes;
  stream.body = [&](std::size_t) { kernels::launch_copy(from.data(), to.data(), stream_bytes, s); };
  (void)c.measure(stream);
  const int barrier_blocks = kernels::getf2_persistent_blocks(m);
  MeasureSpec barrier;
  barrier.max_min_time_s = microbench_max_sample_s;
  for (int r : {1, kRounds + 1}) {
    barrier.name = "gridsync" + std::to_string(r);
    barrier.label = std::to_string(r) + " grid.sync";
    barrier.body = [&, r](std::size_t) { kernels::launch_grid_sync_loop(r, barrier_blocks, s); };
    (void)c.measure(barrier);
  }
  Result& res = c.result();
  for (auto& metric : res.metrics)
    if (metric.tag.rfind("launch", 0) == 0 || metric.tag.rfind("stream/", 0) == 0 ||
        metric.tag.rfind("gridsync", 0) == 0)
      metric.headline = false;
  const double launch_s =
      (res.metric_value("launch" + std::to_string(kLaunches) + "/time") - res.metric_value("launch1/time")) /
      (kLaunches - 1);
  const double barrier_s =
      (res.metric_value("gridsync" + std::to_string(kRounds + 1) + "/time") - res.metric_value("gridsync1/time")) / kRounds;
  const double bandwidth = res.metric_value("stream/bandwidth") * 1e9;
  res.data["model_inputs"] = {{"launch_overhead_us", launch_s * 1e6},
                              {"bandwidth_gbs", bandwidth * 1e-9},
                              {"grid_barrier_us", barrier_s * 1e6},
                              {"grid_barrier_blocks", barrier_blocks}};
  if (launch_s > 0 && bandwidth > 0) {
    const auto model = getf2_model(m, n, launch_s, bandwidth);
    c.add_metric({.tag = "estimate/flop_rate", .name = "eq. (2) estimate (launch overhead)", .unit = "GFLOP/s",
                  .value = flops / model.seconds * 1e-9, .higher_is_better = true, .headline = true,
                  .role = MetricRole::derived});
  }
  if (barrier_s > 0 && bandwidth > 0) {
    const auto model = getf2_model(m, n, barrier_s, bandwidth);
    c.add_metric({.tag = "estimate_barrier/flop_rate", .name = "eq. (2) estimate (grid barrier as startup)",
                  .unit = "GFLOP/s", .value = flops / model.seconds * 1e-9, .higher_is_better = true,
                  .headline = true, .role = MetricRole::derived});
  }
}

}  // namespace

void register_fig3(Registry& registry) {
  Experiment e;
  e.key = "volkov08.fig3";
  e.artifact = "volkov08.fig3";
  e.title = "LU of an m × 64 panel: cuBLAS getf2, fused kernels, one cooperative kernel, CPU + transfers, eq. (2)";
  e.axes = {
      {.name = "m", .kind = AxisKind::integer, .help = "panel rows (m >= n)",
       .defaults = "64,256,1024,4096,16384,65536,262144,1048576", .quick = "256,4096,65536,1048576",
       .full = "64:1048576:*2", .min = 1, .max = std::int64_t{1} << 26},
      {.name = "n", .kind = AxisKind::integer, .help = "panel columns (the paper's 64)", .defaults = "64", .min = 1,
       .max = 1024},
  };
  e.needs.gpus = 1;
  e.validate = [](const AxisPoint& p) {
    if (p.integer("m") < p.integer("n"))
      throw UsageError("axis 'm': " + std::to_string(p.integer("m")) + " < n = " + std::to_string(p.integer("n")) +
                       "; a panel has m >= n");
  };
  e.run = run_panel;
  e.plots = {{.artifact = "volkov08.fig3", .x = "m", .y = "*/flop_rate", .series = {}, .logx = true, .logy = true,
              .title = "LU of an m × 64 panel (volkov08 Fig. 3)"}};
  registry.add(std::move(e));
}

}  // namespace gpufact::microbench
