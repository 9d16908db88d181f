// volkov08.fig7, factorization = cholesky. Every case factors a fresh A = 0.001·I + XᵀX/n (X
// uniform in [−1, 1], volkov08 §6, scaled so entries stay O(1)), checks info = 0 and
// ‖A − LLᵀ‖₁/(n‖A‖₁ε) < 30 (host up to n = 4096, cuBLAS above), and measures
// "cholesky/flop_rate" (n³/3 flops) with the cuBLAS GEMM at the same n beside it.
#include "factorizations/dense/cholesky_experiments.hpp"

#include "core/bench/case.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "core/errors.hpp"
#include "core/linalg/device_blas.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/dense/backward_error.hpp"
#include "factorizations/dense/cholesky_gpu_resident.hpp"
#include "factorizations/dense/cholesky_gpu_residual.hpp"
#include "factorizations/dense/cholesky_hybrid.hpp"
#include "factorizations/dense/dense_experiments.hpp"
#include "factorizations/dense/factorization_measure.hpp"
#include "factorizations/dense/gemm_beside.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace gpufact::dense {
namespace {

constexpr double kTolerance = 30.0;              // MAGMA testers' threshold
constexpr std::int64_t kHostResidualMax = 4096;  // above: the cuBLAS residual
constexpr std::int64_t kOpenblasMax = 8192;      // OpenBLAS potrf: ~1–2 s per call at 8192
// By precision (cholesky_update_step): in FP32 one syrk over the whole trailing triangle (on the
// H200 it beat 2048-wide column blocks by 1.3–1.6× at n = 8192–16384, nb 128–256, and tied at
// nb = 512); in FP64 2048-column blocks.
constexpr std::int64_t kDefaultUpdateBlock = 0;

CholeskyOptions options_for(Case& c, const std::string& method, std::int64_t n) {
  CholeskyOptions o;
  const std::size_t e = c.text("precision") == "s" ? 4 : 8;
  const std::int64_t nb = c.point().has("nb") ? c.integer("nb") : 0;
  // The LU's panel axis names the GPU-resident Cholesky's diagonal blocks: cusolver (potrf),
  // recursive or fused (one-CTA L11 and inv(L11)).
  if (c.point().has("panel")) o.diagonal = cholesky_diagonal_from(c.text("panel"));
  const bool fused = method == "gpu_resident" && o.diagonal == CholeskyDiagonal::fused;
  o.nb = nb > 0 ? nb
                : (method == "hybrid" ? cholesky_hybrid_nb(n, e)
                                      : (fused ? cholesky_resident_fused_nb(n) : cholesky_resident_nb(n)));
  if (c.point().has("gemm")) o.gemm = update_gemm_from(c.text("gemm"));
  if (c.point().has("update_block")) o.update_block = c.integer("update_block");
  // The LU's u12 axis, for the GPU-resident Cholesky's L21: inv(L11)ᵀ GEMM or cuBLAS trsm.
  if (c.point().has("u12")) o.inverse_trsm = c.text("u12") == "inverse";
  if (c.point().has("panel_sms")) o.panel_sms = static_cast<int>(c.integer("panel_sms"));
  if (c.point().has("dataflow_panel")) o.dataflow_panel = c.integer("dataflow_panel");
  return o;
}

// The hybrid's breakdown (volkov08 Fig. 10's phases; Cholesky has no transpose or pivoting).
void add_cholesky_breakdown(Case& c, const PhaseTotals& t) {
  auto& b = c.result().data["breakdown_s"];
  b = nlohmann::json::object();
  for (Phase ph : {Phase::cpu_panel, Phase::gpu_compute, Phase::transfer, Phase::gpu_panel}) {
    if (t[ph] == 0 && ph != Phase::cpu_panel) continue;
    b[phase_name(ph)] = t[ph];
    c.add_metric(derived_metric(std::string("breakdown/") + phase_name(ph), std::string(phase_name(ph)) + " time", "s",
                                t[ph], false, false));
    if (t.wall_s > 0)
      c.add_metric(derived_metric(std::string("share/") + phase_name(ph), std::string(phase_name(ph)) + " share of wall",
                                  "%", 100 * t[ph] / t.wall_s, false, false));
  }
  b["overlap"] = t.overlap;
  b["overlap_compute"] = t.overlap_compute;
  b["idle"] = t.idle;
  b["wall"] = t.wall_s;
  c.add_metric(derived_metric("breakdown/overlap", "panel–GPU overlap (panel running beside other GPU work)", "s",
                              t.overlap, true, false));
  if (t.wall_s > 0)
    c.add_metric(derived_metric("share/overlap", "panel–GPU overlap share of wall", "%", 100 * t.overlap / t.wall_s,
                                true, false));
  if (t[Phase::gpu_compute] > 0)
    c.add_metric(derived_metric("blas3/flop_rate", "BLAS3 rate inside the factorization (syrk/GEMM events)", "GFLOP/s",
                                t.blas3_flops / t[Phase::gpu_compute] * 1e-9, true, true));
}

// Times one method on `a` and leaves the verified run's factor in `work`; returns its info
// (or -1 when a --benchmark_filter excluded the measurement: nothing to verify then).
template <class T>
int measure_cholesky(Case& c, const std::string& method, const std::string& data, const CholeskyOptions& o,
                     const HostMatrix<T>& a, PinnedBuffer<T>& work) {
  const std::int64_t n = a.rows();
  const std::size_t bytes = static_cast<std::size_t>(n * n) * sizeof(T);
  cudaStream_t s = c.stream();
  MeasureSpec spec = factorization_measure_spec("cholesky", method, data, cholesky_flops(n), a, work);
  auto restore = [&] { std::memcpy(work.data(), a.data(), bytes); };
  int info = 0;

  if (method == "openblas") {
    spec.timer = Timer::host_wall;
    spec.body = [&](std::size_t) { info = host::potrf(Uplo::lower, n, work.data(), n); };
    if (!c.measure(spec)) return -1;
    restore();
    return host::potrf(Uplo::lower, n, work.data(), n);
  }
  if (method == "hybrid") {
    CholeskyHybridWorkspace<T> ws(n, o);
    spec.body = [&](std::size_t) { info = cholesky_hybrid(n, work.data(), n, ws, s); };
    if (!c.measure(spec)) return -1;
    restore();
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.matrix.data(), 0xff, ws.matrix.bytes(), s));  // poison: NaN
    PhaseTimer timer;
    info = cholesky_hybrid(n, work.data(), n, ws, s, &timer);
    add_cholesky_breakdown(c, timer.finish());
    c.result().data["options"] = describe(o) + " transfer_width=" + std::to_string(ws.transfer_width);
    return info;
  }
  DeviceBuffer<T> pristine(static_cast<std::size_t>(n * n)), dwork(static_cast<std::size_t>(n * n));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(pristine.data(), a.data(), bytes, cudaMemcpyHostToDevice, s));
  auto restore_device = [&](std::size_t) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dwork.data(), pristine.data(), bytes, cudaMemcpyDeviceToDevice, s));
  };
  if (method == "gpu_resident") {
    CholeskyResidentWorkspace<T> ws(n, o);
    if (data == "device") {
      spec.setup = restore_device;
      spec.body = [&](std::size_t) { info = cholesky_gpu_resident(n, dwork.data(), n, ws, s); };
    } else {
      spec.body = [&](std::size_t) { info = cholesky_gpu_resident_host(n, work.data(), n, ws, s); };
    }
    if (!c.measure(spec)) return -1;
    restore();
    c.result().data["options"] = describe(ws.options);
    // What the defaults (0) resolved to at this n and precision.
    c.result().data["update_block_columns"] = cholesky_update_step(ws.options, sizeof(T), n);
    if (ws.options.diagonal == CholeskyDiagonal::dataflow)
      c.result().data["dataflow_panel_columns"] = cholesky_dataflow_width(n, ws.options, sizeof(T));
    if (data == "host") return cholesky_gpu_resident_host(n, work.data(), n, ws, s);
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(dwork.data(), 0xff, bytes, s));
    restore_device(0);
    info = cholesky_gpu_resident(n, dwork.data(), n, ws, s);
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(work.data(), dwork.data(), bytes, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    return info;
  }
  // cuSOLVER potrf (64-bit API) on device data, or with both transfers from pinned host memory
  // (the whole n × n array each way: cuSOLVER's own usage from host data).
  CusolverHandle solver(s);
  dev::SolverWorkspace sws;
  restore_device(0);
  dev::potrf<T>(solver, Uplo::lower, n, dwork.data(), n, sws);  // sizes the workspace outside the timing
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  time_library_factorization<T>(spec, data, a, work, dwork, pristine, s,
                                [&] { dev::potrf<T>(solver, Uplo::lower, n, dwork.data(), n, sws); });
  if (!c.measure(spec)) return -1;
  restore();
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(dwork.data(), 0xff, bytes, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dwork.data(), work.data(), bytes, cudaMemcpyHostToDevice, s));
  dev::potrf<T>(solver, Uplo::lower, n, dwork.data(), n, sws);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(work.data(), dwork.data(), bytes, cudaMemcpyDeviceToHost, s));
  return sws.read_info(s);
}

std::size_t device_bytes_for(const std::string& method, std::int64_t n, const CholeskyOptions& o, std::size_t e) {
  const std::size_t matrix = static_cast<std::size_t>(n * n) * e;
  if (method == "openblas") return 0;
  if (method == "hybrid") return cholesky_hybrid_device_bytes(n, o, e);
  if (method == "gpu_resident") return cholesky_gpu_resident_device_bytes(n, o, e, true) + 2 * matrix;
  return 2 * matrix + (std::size_t{512} << 20);  // cuSOLVER: pristine + work + its workspace
}

template <class T>
void run_cholesky_case(Case& c) {
  const std::string& method = c.text("method");
  const std::string data = case_data(c);
  const bool accuracy = wants_backward_error(c);
  const std::int64_t n = c.integer("n");
  const CholeskyOptions o = options_for(c, method, n);
  const std::size_t e = sizeof(T), matrix = static_cast<std::size_t>(n * n) * e;
  std::size_t need = std::max(device_bytes_for(method, n, o, e), cholesky_device_bytes_for_checks(n, e));
  if (method != "openblas" && !accuracy) need = std::max(need, gemm_beside_device_bytes(n, e));
  if (accuracy) need = std::max(need, backward_error_device_bytes(n, n));
  c.require_device_memory(need);
  const double host_need = 3.5 * static_cast<double>(matrix);
  if (host_need > static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE)))
    c.skip("needs about " + std::to_string(static_cast<long long>(host_need) >> 20) + " MiB of host memory");
  // All host cores: OpenBLAS is the CPU baseline, and the hybrid's panels run on every thread.
  host::set_blas_threads(static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));

  HostMatrix<T> a(n, n);
  make_spd_test_matrix(a.view(), c.seed(), c.stream());
  PinnedBuffer<T> work(static_cast<std::size_t>(n * n));
  const int info = measure_cholesky<T>(c, method, data, o, a, work);
  if (info < 0) return;  // filtered out: nothing was measured
  c.verify("potrf info", info, 0);
  const MatrixView<const T> l{work.data(), n, n, n, Layout::col_major};
  if (n <= kHostResidualMax)
    c.verify("‖A−LLᵀ‖₁/(n‖A‖₁ε) host", cholesky_residual<T>(a.view(), l), kTolerance);
  else
    c.verify("‖A−LLᵀ‖₁/(n‖A‖₁ε) cuBLAS (device, working precision)",
             cholesky_residual_device<T>(a.view(), l, c.stream()), kTolerance);
  if (const Metric* rate = c.result().find_metric("cholesky/flop_rate"))
    c.add_metric(derived_metric("cholesky/tflops", "Cholesky rate", "TFLOP/s", rate->value * 1e-3));
  if (accuracy) add_backward_error(c, "cholesky", cholesky_backward_error<T>(a.view(), l, c.stream()));
  if (method != "openblas" && !accuracy) measure_gemm_beside<T>(c, n, "cholesky", "Cholesky");
}

}  // namespace

AxisSpec cholesky_update_block_axis() {
  return {.name = "update_block", .kind = AxisKind::integer,
          .help = "cholesky: trailing update in column blocks of this width (syrk on each diagonal square, one GEMM "
                  "below it); 0: by precision (one syrk over the whole trailing triangle in s, 2048-column blocks in "
                  "d); n or more: one syrk",
          .defaults = std::to_string(kDefaultUpdateBlock), .min = 0, .max = 65536};
}

AxisSpec cholesky_dataflow_panel_axis() {
  return {.name = "dataflow_panel", .kind = AxisKind::integer,
          .help = "cholesky, panel=dataflow: columns per dataflow launch, a multiple of 64 (one syrk updates the "
                  "rest between launches); 0: by n and precision (s: the whole matrix up to n = 8192, 4096 columns "
                  "above; d: the whole matrix up to 4096, 4096 columns up to 8192, 2048 above)",
          .defaults = "0", .min = 0, .max = 65536};
}

bool cholesky_axes_at_default(const AxisPoint& p) {
  return (!p.has("update_block") || p.integer("update_block") == kDefaultUpdateBlock) &&
         (!p.has("dataflow_panel") || p.integer("dataflow_panel") == 0);
}

bool cholesky_fig7_applies(const AxisPoint& p) {
  if (p.has("leaf") && p.integer("leaf") != 0) return false;  // LU-only axis
  const std::string& m = p.text("method");
  if (m != "gpu_resident" && p.has("u12") && p.text("u12") != "inverse") return false;
  if (p.has("panel") && p.text("panel") != "cusolver" &&
      (m != "gpu_resident" ||
       (p.text("panel") != "recursive" && p.text("panel") != "fused" && p.text("panel") != "dataflow")))
    return false;  // the LU's tournament has no Cholesky counterpart
  if (p.has("panel") && p.text("panel") == "dataflow") {
    // No blocked loop: nb, u12 and panel_sms do not apply (update_block, gemm and dataflow_panel do).
    if ((p.has("nb") && p.integer("nb") != 0) || (p.has("u12") && p.text("u12") != "inverse") ||
        (p.has("panel_sms") && p.integer("panel_sms") != 0))
      return false;
  } else if (p.has("dataflow_panel") && p.integer("dataflow_panel") != 0) {
    return false;  // dataflow only
  }
  if (m == "openblas")
    return p.text("data") == "host" && p.integer("n") <= kOpenblasMax && cholesky_axes_at_default(p) &&
           (!p.has("gemm") || p.text("gemm") == "cublas") && (!p.has("nb") || p.integer("nb") == 0);
  if (m == "cusolver")
    return cholesky_axes_at_default(p) && (!p.has("gemm") || p.text("gemm") == "cublas") &&
           (!p.has("nb") || p.integer("nb") == 0);
  if (m == "hybrid") return p.text("data") == "host";
  return true;
}

void run_cholesky_fig7(Case& c) {
  if (c.text("precision") == "s")
    run_cholesky_case<float>(c);
  else
    run_cholesky_case<double>(c);
}

}  // namespace gpufact::dense
