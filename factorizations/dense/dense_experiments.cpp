// volkov08 §6 experiments on the dense factorizations:
//   volkov08.fig7   rates vs n per factorization (axis `factorization`; LU here, the others from
//                   their own modules through run_fig7): hybrid, GPU-resident, cuSOLVER, OpenBLAS;
//                   BLAS3 rate inside; cuBLAS GEMM at the same n; summary volkov08.table3 (best
//                   rates and speedups per factorization and precision)
//   volkov08.fig10  the hybrid's time breakdown (GPU compute, CPU panel, transfers, overlap,
//                   transpose, pivoting)
//   volkov08.fig11  slowdown when omitting each optimization
//   volkov08.accuracy  backward error at n = 8192 per factorization and method, residuals in
//                   double (backward_error.hpp), beside OpenBLAS's and the paper's
// Every case checks its factors with ‖PA − LU‖₁/(n‖A‖₁ε) < 30 (host below n = 4096, cuBLAS above)
// and info = 0 on fresh uniform [−1, 1] inputs, and records the growth factor max|U|/max|A|.
// fig7's axis `panel` puts the GPU-resident LU's leaves on TSLU with tournament pivoting (CALU),
// a different P than partial pivoting's, held to the same residual check, or on the cooperative
// on-chip panel (partial pivoting, one exchange of candidate rows per column inside a cluster).
#include "factorizations/dense/dense_experiments.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/graph.hpp"
#include "core/cuda/handles.hpp"
#include "core/cuda/stream.hpp"
#include "core/errors.hpp"
#include "core/linalg/device_blas.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/dense/backward_error.hpp"
#include "factorizations/dense/cholesky_experiments.hpp"
#include "factorizations/dense/factorization_measure.hpp"
#include "factorizations/dense/gemm_beside.hpp"
#include "factorizations/dense/gpu_residual.hpp"
#include "factorizations/dense/lu_block_model.hpp"
#include "factorizations/dense/lu_gpu_resident.hpp"
#include "factorizations/dense/lu_hybrid.hpp"
#include "factorizations/dense/lu_schedule.hpp"
#include "factorizations/dense/qr_experiments.hpp"
#include "kernels/common/fill.cuh"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace gpufact::dense {
namespace {

constexpr double kTolerance = 30.0;            // MAGMA testers' threshold
constexpr std::int64_t kHostResidualMax = 4096;  // above: the cuBLAS residual
constexpr std::int64_t kOpenblasMax = 8192;      // OpenBLAS getrf stays under ~5 s per call up to here

// Block sizes when the nb axis is 0 (lu_block_model.hpp: the hybrid's from its time model, the
// GPU-resident's by n; -a nb=... overrides).
std::int64_t auto_nb(const std::string& method, std::int64_t n, std::size_t element_bytes) {
  if (method == "gpu_resident") return gpu_resident_lu_nb(n);
  return hybrid_lu_nb(n, default_hybrid_rates(element_bytes));
}

LuOptions options_for(Case& c, const std::string& method, std::int64_t n) {
  LuOptions o;
  const std::size_t e = c.text("precision") == "s" ? 4 : 8;
  const std::int64_t nb = c.point().has("nb") ? c.integer("nb") : 0;
  o.nb = nb > 0 ? nb : auto_nb(method, n, e);
  if (c.point().has("gemm")) o.gemm = update_gemm_from(c.text("gemm"));
  if (c.point().has("leaf")) o.panel_leaf = c.integer("leaf");
  if (c.point().has("panel")) o.panel = panel_method_from(c.text("panel"));
  if (c.point().has("u12")) o.inverse_trsm = c.text("u12") == "inverse";
  if (c.point().has("threads")) o.cpu_threads = static_cast<int>(c.integer("threads"));
  if (c.point().has("panel_sms")) o.panel_sms = static_cast<int>(c.integer("panel_sms"));
  if (c.point().has("panel_solve")) o.panel_solve = panel_solve_from(c.text("panel_solve"));
  if (c.point().has("launch")) o.graph = c.text("launch") == "graph";
  return o;
}

std::string residual_method(std::int64_t n) {
  return n <= kHostResidualMax ? "‖PA−LU‖₁/(n‖A‖₁ε) host" : "‖PA−LU‖₁/(n‖A‖₁ε) cuBLAS (device, working precision)";
}

template <class T>
double residual_of(const HostMatrix<T>& a, const T* lu, const int* ipiv, cudaStream_t s) {
  const std::int64_t n = a.rows();
  const MatrixView<const T> f{lu, n, a.cols(), n, Layout::col_major};
  if (n <= kHostResidualMax) return lu_residual<T>(a.view(), f, ipiv);
  return lu_residual_device<T>(a.view(), f, ipiv, s);
}

void add_breakdown(Case& c, const PhaseTotals& t, bool headline) {
  c.result().data["breakdown_s"] = nlohmann::json::object();
  for (int p = 0; p < static_cast<int>(Phase::count); ++p) {
    const Phase ph = static_cast<Phase>(p);
    if (t[ph] == 0 && ph != Phase::cpu_panel) continue;
    c.result().data["breakdown_s"][phase_name(ph)] = t[ph];
    c.add_metric(derived_metric(std::string("breakdown/") + phase_name(ph), std::string(phase_name(ph)) + " time", "s",
                                t[ph], false, false));
    if (t.wall_s > 0)
      c.add_metric(derived_metric(std::string("share/") + phase_name(ph), std::string(phase_name(ph)) + " share of wall",
                                  "%", 100 * t[ph] / t.wall_s, false, headline));
  }
  // Overlap from the intervals' timestamps (PhaseTimer): panel (CPU or GPU) running while other
  // GPU work runs; the part of it against trailing updates; time covered by nothing.
  c.result().data["breakdown_s"]["overlap"] = t.overlap;
  c.result().data["breakdown_s"]["overlap_compute"] = t.overlap_compute;
  c.result().data["breakdown_s"]["idle"] = t.idle;
  c.result().data["breakdown_s"]["wall"] = t.wall_s;
  c.add_metric(derived_metric("breakdown/overlap", "panel–GPU overlap (panel running beside other GPU work)", "s",
                              t.overlap, true, false));
  c.add_metric(derived_metric("breakdown/overlap_compute", "panel–update overlap (panel beside a trailing GEMM)", "s",
                              t.overlap_compute, true, false));
  c.add_metric(derived_metric("breakdown/idle", "time with neither a panel nor GPU work", "s", t.idle, false, false));
  if (t.wall_s > 0) {
    c.add_metric(derived_metric("share/overlap", "panel–GPU overlap share of wall", "%", 100 * t.overlap / t.wall_s,
                                true, headline));
    c.add_metric(derived_metric("share/overlap_compute", "panel–update overlap share of wall", "%",
                                100 * t.overlap_compute / t.wall_s, true, headline));
    c.add_metric(derived_metric("share/idle", "idle share of wall", "%", 100 * t.idle / t.wall_s, false, headline));
  }
  if (t[Phase::gpu_compute] > 0)
    c.add_metric(derived_metric("blas3/flop_rate", "BLAS3 rate inside the factorization (GEMM/trsm events)", "GFLOP/s",
                                t.blas3_flops / t[Phase::gpu_compute] * 1e-9, true, true));
}

// launch = graph: one call before the measurement, which captures the launches and replays them
// once, timed on the host clock with its setup before it ("graph/first_call"; the measured calls
// replay only).
void record_first_call(Case& c, const MeasureSpec& spec) {
  spec.setup(0);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(c.stream()));
  const auto begin = std::chrono::steady_clock::now();
  spec.body(0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  c.add_metric(derived_metric("graph/first_call", "first call: capture, instantiation and one replay", "s", seconds,
                              false, false));
}

struct LuCaseOutcome {
  bool measured = false;
  int info = 0;
};

// Times one LU method on a fresh matrix and leaves the verified run's factors in `work`.
template <class T>
LuCaseOutcome measure_lu(Case& c, const std::string& method, const std::string& data, const LuOptions& o,
                         const HostMatrix<T>& a, PinnedBuffer<T>& work, std::vector<int>& ipiv, bool breakdown) {
  const std::int64_t n = a.rows();
  const std::size_t bytes = static_cast<std::size_t>(n * n) * sizeof(T);
  cudaStream_t s = c.stream();
  MeasureSpec spec = factorization_measure_spec("lu", method, data, lu_flops(n, n), a, work);
  LuCaseOutcome out;
  auto restore = [&] {
    std::memcpy(work.data(), a.data(), bytes);
    std::fill(ipiv.begin(), ipiv.end(), -1);
  };

  if (method == "openblas") {
    spec.timer = Timer::host_wall;
    spec.body = [&](std::size_t) { out.info = host::getrf(n, n, work.data(), n, ipiv.data()); };
    out.measured = c.measure(spec);
    restore();
    out.info = host::getrf(n, n, work.data(), n, ipiv.data());
    return out;
  }
  if (method == "hybrid") {
    LuHybridWorkspace<T> ws(n, n, o);
    spec.body = [&](std::size_t) { out.info = lu_hybrid(n, n, work.data(), n, ipiv.data(), ws, s); };
    out.measured = c.measure(spec);
    restore();
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.matrix.data(), 0xff, ws.matrix.bytes(), s));  // poison: NaN
    PhaseTimer timer;
    out.info = lu_hybrid(n, n, work.data(), n, ipiv.data(), ws, s, breakdown ? &timer : nullptr);
    if (breakdown) add_breakdown(c, timer.finish(), false);
    c.result().data["options"] = describe(o);
    return out;
  }
  if (method == "gpu_resident") {
    LuResidentWorkspace<T> ws(n, n, o);
    DeviceBuffer<T> pristine(static_cast<std::size_t>(n * n)), dwork(static_cast<std::size_t>(n * n));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(pristine.data(), a.data(), bytes, cudaMemcpyHostToDevice, s));
    if (data == "device") {
      spec.setup = [&](std::size_t) {
        GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dwork.data(), pristine.data(), bytes, cudaMemcpyDeviceToDevice, s));
      };
      spec.body = [&](std::size_t) { out.info = lu_gpu_resident(n, n, dwork.data(), n, ipiv.data(), ws, s); };
    } else {
      spec.body = [&](std::size_t) { out.info = lu_gpu_resident_host(n, n, work.data(), n, ipiv.data(), ws, s); };
    }
    if (o.graph) record_first_call(c, spec);
    out.measured = c.measure(spec);
    restore();
    PhaseTimer timer;
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(dwork.data(), 0xff, bytes, s));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dwork.data(), pristine.data(), bytes, cudaMemcpyDeviceToDevice, s));
    out.info = lu_gpu_resident(n, n, dwork.data(), n, ipiv.data(), ws, s, breakdown ? &timer : nullptr);
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(work.data(), dwork.data(), bytes, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    if (breakdown) add_breakdown(c, timer.finish(), false);
    c.result().data["options"] = describe(ws.options);
    return out;
  }
  // cuSOLVER getrf (64-bit API) on device data, or with both transfers from pinned host memory.
  CusolverHandle solver(s);
  dev::SolverWorkspace sws;
  DeviceBuffer<T> pristine(static_cast<std::size_t>(n * n)), dwork(static_cast<std::size_t>(n * n));
  DeviceBuffer<std::int64_t> dipiv(static_cast<std::size_t>(n));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(pristine.data(), a.data(), bytes, cudaMemcpyHostToDevice, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dwork.data(), pristine.data(), bytes, cudaMemcpyDeviceToDevice, s));
  dev::getrf<T>(solver, n, n, dwork.data(), n, dipiv.data(), sws);  // sizes the workspace outside the timing
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  // launch = graph: the same call captured once (on an idle stream the handle is moved to) and replayed.
  CapturedGraph graph;
  if (o.graph) {
    const Stream capture;
    solver.set_stream(capture);
    graph = CapturedGraph::capture(capture, [&](cudaStream_t) {
      dev::getrf<T>(solver, n, n, dwork.data(), n, dipiv.data(), sws);
    });
    solver.set_stream(s);
  }
  time_library_factorization<T>(spec, data, a, work, dwork, pristine, s, [&] {
    if (o.graph)
      graph.launch(s);
    else
      dev::getrf<T>(solver, n, n, dwork.data(), n, dipiv.data(), sws);
  });
  out.measured = c.measure(spec);
  restore();
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(dwork.data(), 0xff, bytes, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dwork.data(), work.data(), bytes, cudaMemcpyHostToDevice, s));
  dev::getrf<T>(solver, n, n, dwork.data(), n, dipiv.data(), sws);
  std::vector<std::int64_t> p64(static_cast<std::size_t>(n));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(work.data(), dwork.data(), bytes, cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(p64.data(), dipiv.data(), n * sizeof(std::int64_t), cudaMemcpyDeviceToHost, s));
  out.info = sws.read_info(s);
  for (std::int64_t i = 0; i < n; ++i) ipiv[i] = static_cast<int>(p64[i]);
  return out;
}

std::size_t device_bytes_for(const std::string& method, std::int64_t n, const LuOptions& o, std::size_t e) {
  const std::size_t matrix = static_cast<std::size_t>(n * n) * e;
  if (method == "openblas") return 0;
  if (method == "hybrid") return lu_hybrid_device_bytes(n, n, o, e);
  if (method == "gpu_resident") return lu_gpu_resident_device_bytes(n, n, o, e, true) + 2 * matrix;
  return 2 * matrix + (std::size_t{512} << 20);  // cuSOLVER: pristine + work + its workspace
}

// Element growth of the factors (the stability question tournament pivoting raises; CALU §3):
// max|U| / max|A| and max|L| (1 under partial pivoting, possibly more under tournament pivoting).
// One pass over the host copies the verified run already left.
template <class T>
void record_growth(Case& c, const HostMatrix<T>& a, const T* lu) {
  const std::int64_t n = a.rows();
  double max_a = 0, max_u = 0, max_l = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    const T* col = lu + j * n;
    for (std::int64_t i = 0; i <= j; ++i) max_u = std::max(max_u, static_cast<double>(std::fabs(col[i])));
    for (std::int64_t i = j + 1; i < n; ++i) max_l = std::max(max_l, static_cast<double>(std::fabs(col[i])));
    for (std::int64_t i = 0; i < n; ++i) max_a = std::max(max_a, static_cast<double>(std::fabs(a(i, j))));
  }
  const double growth = max_a > 0 ? max_u / max_a : 0.0;
  c.result().data["growth_factor"] = growth;
  c.result().data["max_abs_l"] = max_l;
  c.add_metric(derived_metric("lu/growth", "growth factor max|U| / max|A|", "x", growth, false, false));
}

double host_bytes_available() {
  return static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
}

// One LU case: memory checks before allocating, fresh input, timing, verification.
template <class T>
void run_lu_case(Case& c, const std::string& method, const std::string& data, const LuOptions& o, bool breakdown,
                 bool with_gemm) {
  const std::int64_t n = c.integer("n");
  const std::size_t e = sizeof(T), matrix = static_cast<std::size_t>(n * n) * e;
  std::size_t need = device_bytes_for(method, n, o, e);
  if (n > kHostResidualMax) need = std::max(need, lu_residual_device_bytes(n, n, e));
  if (with_gemm) need = std::max(need, gemm_beside_device_bytes(n, e));
  if (wants_backward_error(c)) need = std::max(need, backward_error_device_bytes(n, n));
  if (method != "openblas" || need > 0) c.require_device_memory(need);
  if (4.5 * static_cast<double>(matrix) > host_bytes_available())
    c.skip("needs about " + std::to_string(static_cast<long long>(4.5 * static_cast<double>(matrix)) >> 20) + " MiB of host memory");
  // All host cores: OpenBLAS is the CPU baseline, and the hybrid's panels run on every thread.
  host::set_blas_threads(static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));

  HostMatrix<T> a(n, n);
  fill_uniform(a.view(), c.seed());
  PinnedBuffer<T> work(static_cast<std::size_t>(n * n));
  std::vector<int> ipiv(static_cast<std::size_t>(n), -1);
  const LuCaseOutcome out = measure_lu<T>(c, method, data, o, a, work, ipiv, breakdown);
  c.verify("getrf info", out.info, 0);
  c.verify(residual_method(n), residual_of<T>(a, work.data(), ipiv.data(), c.stream()), kTolerance);
  record_growth<T>(c, a, work.data());
  if (const Metric* rate = c.result().find_metric("lu/flop_rate"))
    c.add_metric(derived_metric("lu/tflops", "LU rate", "TFLOP/s", rate->value * 1e-3));
  if (wants_backward_error(c)) {
    const MatrixView<const T> f{work.data(), n, n, n, Layout::col_major};
    add_backward_error(c, "lu", lu_backward_error<T>(a.view(), f, ipiv.data(), c.stream()));
  }

  // cuBLAS GEMM at the same n in the same run: the ceiling "≥ 70% of GEMM" is read against.
  if (with_gemm) measure_gemm_beside<T>(c, n, "lu", "LU");
}

template <class T>
void run_fig7_typed(Case& c) {
  const std::string& method = c.text("method");
  run_lu_case<T>(c, method, c.text("data"), options_for(c, method, c.integer("n")), true, method != "openblas");
}

void run_fig7(Case& c) {
  // Every factorization's case measures "<factorization>/flop_rate" (and gemm/flop_rate beside
  // it), which summarize_fig7 reads.
  if (c.text("factorization") == "qr") return run_qr_fig7(c);
  if (c.text("factorization") == "cholesky") return run_cholesky_fig7(c);
  if (c.text("precision") == "s")
    run_fig7_typed<float>(c);
  else
    run_fig7_typed<double>(c);
}

void run_fig10(Case& c) {
  const LuOptions o = options_for(c, "hybrid", c.integer("n"));
  if (c.text("precision") == "s")
    run_lu_case<float>(c, "hybrid", "host", o, true, false);
  else
    run_lu_case<double>(c, "hybrid", "host", o, true, false);
  // The breakdown is this artifact's headline.
  for (auto& m : c.result().metrics)
    if (m.tag.rfind("share/", 0) == 0) m.headline = true;
}

void run_fig11(Case& c) {
  LuOptions o = options_for(c, "hybrid", c.integer("n"));
  const std::string& omit = c.text("omit");
  if (omit == "row_major") o.row_major = false;
  if (omit == "inverse_trsm") o.inverse_trsm = false;
  if (omit == "lookahead") o.lookahead = false;
  if (omit == "two_level") o.two_level = false;
  if (c.text("precision") == "s")
    run_lu_case<float>(c, "hybrid", "host", o, false, false);
  else
    run_lu_case<double>(c, "hybrid", "host", o, false, false);
}


// volkov08.table3: best rates per method and precision, best speedups over OpenBLAS and over
// cuSOLVER at equal n (hybrid and GPU-resident with host data against cuSOLVER with host data;
// GPU-resident with device data against cuSOLVER with device data), the paper's 8800GTX beside.
void summarize_fig7(Summary& s) {
  using RateKey = std::pair<std::string, std::string>;  // factorization, precision
  std::map<RateKey, std::map<std::string, std::map<std::int64_t, double>>> rate;  // ... method/data, n
  std::map<std::string, double> gemm_best;
  for (const auto& r : s.results()) {
    if (r.status != Status::passed) continue;
    // The trsm ablation of the GPU-resident U12 is a row of its own.
    std::string ablation = r.axes.value("u12", "inverse") == "trsm" ? "+trsm" : "";
    // So are the panel variants (LU's tournament, Cholesky's recursive and fused diagonals).
    if (const std::string panel = r.axes.value("panel", "cusolver"); panel != "cusolver") ablation += "+" + panel;
    // And the panel stream's own SMs.
    if (const std::int64_t sms = r.axes.value("panel_sms", std::int64_t{0}); sms > 0)
      ablation += "+sms" + std::to_string(sms);
    // And the launches replayed as one graph.
    if (r.axes.value("launch", "stream") == "graph") ablation += "+graph";
    const std::string p = r.axes.value("precision", ""),
                      key = r.axes.value("method", "") + ablation + "/" + r.axes.value("data", "");
    const std::int64_t n = r.axes.value("n", std::int64_t{0});
    const std::string f = r.axes.value("factorization", "lu");
    rate[{f, p}][key][n] = r.metric_value(f + "/flop_rate");
    gemm_best[p] = std::max(gemm_best[p], r.metric_value("gemm/flop_rate"));
  }
  // volkov08 Table 3, 8800GTX with the hybrid: best Gflop/s per factorization.
  const std::map<std::string, double> paper_best = {{"lu", 179}, {"cholesky", 183}, {"qr", 192}};
  for (const auto& [fp, by_method] : rate) {
    const auto& [f, p] = fp;
    Result d;
    d.experiment = "volkov08.fig7";
    d.artifact = "volkov08.table3";
    d.status = Status::passed;
    d.device = s.session().device();
    d.axes = {{"factorization", f}, {"precision", p}};
    nlohmann::json rows = nlohmann::json::array();
    auto best_speedup = [&](const std::string& num, const std::string& den) {
      double best = 0;
      std::int64_t at = 0;
      const auto a = by_method.find(num), b = by_method.find(den);
      if (a == by_method.end() || b == by_method.end()) return std::pair<double, std::int64_t>{0, 0};
      for (const auto& [n, v] : a->second)
        if (auto it = b->second.find(n); it != b->second.end() && it->second > 0 && v / it->second > best) {
          best = v / it->second;
          at = n;
        }
      return std::pair<double, std::int64_t>{best, at};
    };
    for (const auto& [key, by_n] : by_method) {
      double best = 0;
      std::int64_t at = 0;
      for (const auto& [n, v] : by_n)
        if (v > best) best = v, at = n;
      Metric m = derived_metric("best/" + key, "best " + f + " rate, " + key, "GFLOP/s", best);
      if (key == "hybrid/host" && p == "s" && paper_best.count(f))
        m.published = Published{paper_best.at(f), "volkov08 Table 3 (8800GTX, " + f + ")"};
      d.metrics.push_back(m);
      const auto vs_cpu = best_speedup(key, "openblas/host");
      const std::string same_data = key.substr(key.find('/') + 1);
      const auto vs_cusolver = best_speedup(key, "cusolver/" + same_data);
      nlohmann::json row = {{"method", key}, {"best_gflops", best}, {"at_n", at}};
      if (vs_cpu.first > 0 && key != "openblas/host") {
        row["speedup_vs_openblas"] = vs_cpu.first;
        row["speedup_vs_openblas_at_n"] = vs_cpu.second;
        d.metrics.push_back(derived_metric("speedup_cpu/" + key, "best speedup vs OpenBLAS, " + key, "x", vs_cpu.first,
                                           true, false));
      }
      if (vs_cusolver.first > 0 && key.rfind("cusolver", 0) != 0) {
        row["speedup_vs_cusolver"] = vs_cusolver.first;
        row["speedup_vs_cusolver_at_n"] = vs_cusolver.second;
        d.metrics.push_back(derived_metric("speedup_cusolver/" + key, "best speedup vs cuSOLVER, " + key, "x",
                                           vs_cusolver.first, true, false));
      }
      rows.push_back(row);
    }
    if (gemm_best[p] > 0) {
      Metric g = derived_metric("best/gemm", "best cuBLAS GEMM rate at the fig7 sizes", "GFLOP/s", gemm_best[p]);
      if (p == "s") g.published = Published{206, "volkov08 Table 3 (8800GTX, sgemm)"};
      d.metrics.push_back(g);
    }
    d.data["rows"] = rows;
    if (f == "lu")
      d.data["paper_8800gtx"] = {{"lu_gflops", 179},  {"lu_core2duo_gflops", 22.7}, {"lu_speedup_core2duo", 7.7},
                                 {"lu_core2quad_gflops", 59.2}, {"lu_speedup_core2quad", 3.0}, {"sgemm_gflops", 206}};
    else if (paper_best.count(f))
      d.data["paper_8800gtx"] = {{f + "_gflops", paper_best.at(f)}, {"sgemm_gflops", 206}};
    s.add(std::move(d));
  }
}

// volkov08.fig11 summary: time with the optimization omitted / time with all of them, per n.
void summarize_fig11(Summary& s) {
  std::map<std::pair<std::string, std::int64_t>, std::map<std::string, double>> time;
  for (const auto& r : s.results())
    if (r.status == Status::passed)
      time[{r.axes.value("precision", ""), r.axes.value("n", std::int64_t{0})}][r.axes.value("omit", "")] =
          r.metric_value("lu/time");
  for (const auto& [key, by_omit] : time) {
    const auto base = by_omit.find("none");
    if (base == by_omit.end() || base->second <= 0) continue;
    Result d;
    d.experiment = "volkov08.fig11";
    d.artifact = "volkov08.fig11 summary";
    d.status = Status::passed;
    d.device = s.session().device();
    d.axes = {{"precision", key.first}, {"n", key.second}};
    for (const auto& [omit, t] : by_omit)
      if (omit != "none" && t > 0)
        d.metrics.push_back(derived_metric("slowdown/" + omit, "slowdown without " + omit, "x", t / base->second, false));
    s.add(std::move(d));
  }
}

// volkov08.accuracy summary: each method's backward error over OpenBLAS's at the same
// factorization, precision and n (the paper: within a factor of 2 of the CPU's, mostly 20%).
void summarize_accuracy(Summary& s) {
  using Key = std::tuple<std::string, std::string, std::int64_t>;  // factorization, precision, n
  std::map<Key, std::map<std::string, double>> error;
  for (const auto& r : s.results())
    if (r.status == Status::passed)
      error[{r.axes.value("factorization", "lu"), r.axes.value("precision", ""), r.axes.value("n", std::int64_t{0})}]
           [r.axes.value("method", "")] = r.metric_value("backward_error/max_units");
  for (const auto& [key, by_method] : error) {
    const auto cpu = by_method.find("openblas");
    if (cpu == by_method.end() || cpu->second <= 0) continue;
    Result d;
    d.experiment = "volkov08.accuracy";
    d.artifact = "volkov08.accuracy summary";
    d.status = Status::passed;
    d.device = s.session().device();
    d.axes = {{"factorization", std::get<0>(key)}, {"precision", std::get<1>(key)}, {"n", std::get<2>(key)}};
    for (const auto& [method, v] : by_method)
      if (method != "openblas")
        d.metrics.push_back(derived_metric("vs_openblas/" + method, "backward error / OpenBLAS's, " + method, "x",
                                           v / cpu->second, false));
    s.add(std::move(d));
  }
}

AxisSpec precision_axis() {
  return {.name = "precision", .kind = AxisKind::text, .help = "s = FP32, d = FP64", .defaults = "s,d",
          .choices = {"s", "d"}};
}
AxisSpec nb_axis() {
  return {.name = "nb", .kind = AxisKind::integer,
          .help = "panel width (0: by method and n; the paper's 64); at most 512", .defaults = "0", .min = 0,
          .max = 512};
}
AxisSpec leaf_axis() {
  return {.name = "leaf", .kind = AxisKind::integer,
          .help = "gpu_resident: recursive panel down to leaves of this many columns, each by cuSOLVER, TSLU or "
                  "the cooperative kernel (axis panel; 0: one cuSOLVER getrf per panel, 32-column TSLU leaves, or "
                  "64-column cooperative leaves, each cut per panel to what fits: 64 or 32 columns in registers, else "
                  "the widest in shared memory)",
          .defaults = "0", .min = 0, .max = 512};
}
AxisSpec panel_axis() {
  return {.name = "panel", .kind = AxisKind::text,
          .help = "gpu_resident: LU panel leaves by cuSOLVER getrf (partial pivoting), by TSLU with tournament "
                  "pivoting (CALU; leaf 0 means 32, else 8..64) or by one thread block cluster holding the leaf on "
                  "chip (partial pivoting; leaf 0: per panel, 64 or 32 columns in registers, else the widest that "
                  "fits shared memory); QR panels by cuSOLVER geqrf or cooperative: leaves of 64, 32 or 16 columns "
                  "held in one cluster's registers (one exchange of column sums per column), halves applied as "
                  "block reflectors (nb 0 means 128, 256 from n = 24576); Cholesky diagonal blocks by cuSOLVER potrf, "
                  "recursive (halves down to one-CTA 64 × 64 blocks) or fused (one CTA writes L11 and inv(L11); "
                  "nb 0 means 128, 256 from n = 12288); Cholesky dataflow: no panel loop, one tile-dataflow launch "
                  "per column panel (axis dataflow_panel; nb must be 0)",
          .defaults = "cusolver,cooperative,dataflow",
          .full = "cusolver,tournament,cooperative,recursive,fused,dataflow",
          .choices = {"cusolver", "tournament", "cooperative", "recursive", "fused", "dataflow"}};
}
AxisSpec panel_sms_axis() {
  return {.name = "panel_sms", .kind = AxisKind::integer,
          .help = "gpu_resident LU, Cholesky and QR: the trailing update kept off this many SMs (a green context, "
                  "rounded up to the device's granularity: 8 on Hopper), which only the panel stream uses; 0: both "
                  "streams on every SM, the panel's by priority only",
          .defaults = "0", .min = 0, .max = 1024};
}
AxisSpec threads_axis() {
  return {.name = "threads", .kind = AxisKind::integer,
          .help = "OpenBLAS threads of the hybrid's CPU panel (0: all cores)", .defaults = "0", .min = 0,
          .max = 1024};
}
AxisSpec gemm_axis() {
  return {.name = "gemm", .kind = AxisKind::text, .help = "the trailing-update GEMM", .defaults = "cublas",
          .choices = update_gemm_names()};
}

}  // namespace

bool wants_backward_error(const Case& c) { return c.experiment().key == "volkov08.accuracy"; }

std::string case_data(const Case& c) {
  if (c.point().has("data")) return c.text("data");
  const std::string& m = c.text("method");
  return m == "hybrid" || m == "openblas" ? "host" : "device";
}

void add_backward_error(Case& c, const std::string& factorization, const BackwardError& e) {
  // volkov08 §6: "about 2000·ε‖A‖max, 200 and 17" for LU, QR and Cholesky at n = 8192 (8800GTX).
  static const std::map<std::string, double> paper = {{"lu", 2000}, {"qr", 200}, {"cholesky", 17}};
  Metric m = derived_metric("backward_error/max_units", "‖A − product‖max / (ε‖A‖max), residual in double", "ε‖A‖max",
                            e.in_max_units(), false, true);
  if (c.text("precision") == "s" && paper.count(factorization) && c.integer("n") == 8192)
    m.published = Published{paper.at(factorization), "volkov08 §6 (8800GTX, n = 8192, ε = 2⁻²³)"};
  c.add_metric(m);
  c.add_metric(derived_metric("backward_error/magma", "‖A − product‖₁ / (n‖A‖₁ε), residual in double", "nε‖A‖₁",
                              e.magma(), false, true));
  c.result().data["backward_error"] = {{"residual_max", e.residual_max}, {"residual_one", e.residual_one},
                                       {"a_max", e.a_max},               {"a_one", e.a_one},
                                       {"epsilon", e.epsilon}};
}

void register_dense(Registry& registry) {
  {
    Experiment e;
    e.key = "volkov08.fig7";
    e.artifact = "volkov08.fig7";
    e.title = "Dense factorization rates vs n: hybrid (CPU panel), GPU-resident, cuSOLVER, OpenBLAS; BLAS3 rate inside; cuBLAS GEMM";
    e.axes = {
        {.name = "factorization", .kind = AxisKind::text, .help = "which factorization",
         .defaults = "lu,cholesky,qr", .choices = {"lu", "cholesky", "qr"}},
        precision_axis(),
        {.name = "n", .kind = AxisKind::integer, .help = "matrix order (square)", .defaults = "1024,2048,4096,8192,16384",
         .quick = "4096,8192", .full = "1024,2048,4096,8192,16384,32768,40000", .min = 1, .max = 65536},
        {.name = "method", .kind = AxisKind::text,
         .help = "hybrid (volkov08 §5), gpu_resident (panel on the GPU), cusolver (cusolverDnXgetrf, Xpotrf, "
                 "Xgeqrf + orgqr), openblas (host, n <= 8192)",
         .defaults = "hybrid,gpu_resident,cusolver,openblas", .quick = "hybrid,gpu_resident,cusolver",
         .choices = {"hybrid", "gpu_resident", "cusolver", "openblas"}},
        {.name = "data", .kind = AxisKind::text,
         .help = "where A starts and ends: host (pinned, transfers timed) or device", .defaults = "host,device",
         .choices = {"host", "device"}},
        nb_axis(),
        gemm_axis(),
        leaf_axis(),
        panel_axis(),
        {.name = "u12", .kind = AxisKind::text,
         .help = "gpu_resident: U12 = inv(L11)·A12 (LU) or L21 = A21·inv(L11)ᵀ (Cholesky) by GEMM (inverse, "
                 "volkov08 §5), or by cuBLAS trsm (the ablation)",
         .defaults = "inverse", .choices = {"inverse", "trsm"}},
        cholesky_update_block_axis(),
        cholesky_dataflow_panel_axis(),
        panel_sms_axis(),
        {.name = "panel_solve", .kind = AxisKind::text,
         .help = "gpu_resident LU: the panel stream's unit lower solves by gpufact's kernel "
                 "(kernels/dense/trsm_unit_lower.cuh), by cuBLAS trsm, or auto (the kernel in FP64, cuBLAS in FP32)",
         .defaults = "auto", .choices = {"auto", "kernel", "cublas"}},
        {.name = "launch", .kind = AxisKind::text,
         .help = "LU by gpu_resident (panel_sms 0) or cusolver: each call's launches issued one by one (stream), or "
                 "captured once into a CUDA graph, kernels keeping their streams' priorities, and replayed (graph; "
                 "the capture is untimed, its first call is reported as graph/first_call)",
         .defaults = "stream", .choices = {"stream", "graph"}},
    };
    // Quick: FP32 at n = 4096 and 8192, the GPU methods (at 16384 the cases took 2.5 minutes of the
    // preset's 8 on one H200; OpenBLAS's QR alone takes half a minute at 8192). host.blas and
    // volkov08.accuracy keep OpenBLAS in the quick preset.
    e.axes[1].quick = "s";
    e.needs.gpus = 1;
    e.applies = [](const AxisPoint& p) {
      const std::string& m = p.text("method");
      const std::string& f = p.text("factorization");
      if (f == "qr" && p.text("panel") != "cusolver" && (p.text("panel") != "cooperative" || m != "gpu_resident"))
        return false;
      if (p.integer("panel_sms") != 0 && m != "gpu_resident") return false;
      if (p.text("panel_solve") != "auto" && (m != "gpu_resident" || f != "lu")) return false;
      if (p.text("launch") != "stream" &&
          (f != "lu" || (m != "gpu_resident" && m != "cusolver") || p.integer("panel_sms") != 0))
        return false;
      if (f == "lu" && (p.text("panel") == "recursive" || p.text("panel") == "fused" || p.text("panel") == "dataflow"))
        return false;  // Cholesky's diagonal blocks
      if (p.text("factorization") == "cholesky") return cholesky_fig7_applies(p);
      if (!cholesky_axes_at_default(p)) return false;
      if (p.text("factorization") == "qr")
        return qr_fig7_applies(m, p.text("data"), p.integer("n"), p.integer("leaf"), p.text("u12"));
      if (m != "gpu_resident" && p.integer("leaf") != 0) return false;
      if (m != "gpu_resident" && p.text("panel") != "cusolver") return false;
      if (m != "gpu_resident" && p.text("u12") != "inverse") return false;
      if (m == "openblas") return p.text("data") == "host" && p.integer("n") <= kOpenblasMax;
      if (m == "hybrid") return p.text("data") == "host";
      return true;
    };
    e.validate = [](const AxisPoint& p) {
      const std::int64_t leaf = p.integer("leaf");
      if (leaf != 0 && leaf < 8)
        throw UsageError("axis 'leaf': " + std::to_string(leaf) + " is not 0 (no recursion) or in 8..512");
      if (p.text("panel") == "tournament" && leaf > 64)
        throw UsageError("axis 'leaf': " + std::to_string(leaf) +
                         " with panel=tournament must be 0 (32) or in 8..64 (the TSLU leaf's widest)");
      if (p.integer("dataflow_panel") % 64 != 0)
        throw UsageError("axis 'dataflow_panel': " + std::to_string(p.integer("dataflow_panel")) +
                         " is not 0 (by n) or a multiple of 64");
      if (p.text("gemm") != "cublas" && p.text("precision") == "d")
        throw UsageError("axis 'gemm': " + p.text("gemm") + " has no FP64 slot; use gemm=cublas for precision d");
    };
    e.run = run_fig7;
    e.summarize = summarize_fig7;
    // One rate plot per factorization (each adds its own beside LU's).
    e.plots = {{.artifact = "volkov08.fig7", .x = "n", .y = "lu/flop_rate", .series = {"method", "data", "precision"},
                .logx = true, .logy = false, .title = "LU rates (volkov08 Fig. 7)"},
               {.artifact = "volkov08.fig7", .x = "n", .y = "cholesky/flop_rate",
                .series = {"method", "data", "precision", "panel"},
                .logx = true, .logy = false, .title = "Cholesky rates (volkov08 Fig. 7)"},
               {.artifact = "volkov08.fig7", .x = "n", .y = "qr/flop_rate", .series = {"method", "data", "precision"},
                .logx = true, .logy = false, .title = "QR rates (volkov08 Fig. 7)"},
               {.artifact = "volkov08.fig7", .x = "n", .y = "blas3/flop_rate", .series = {"method", "precision"},
                .logx = true, .logy = false, .title = "BLAS3 rate inside the LU (volkov08 Fig. 7, green)"}};
    registry.add(std::move(e));
  }
  {
    Experiment e;
    e.key = "volkov08.fig10";
    e.artifact = "volkov08.fig10";
    e.title = "Hybrid LU time breakdown: GPU compute, CPU panel, transfers, CPU–GPU overlap, transpose, pivoting";
    e.axes = {precision_axis(),
              {.name = "n", .kind = AxisKind::integer, .help = "matrix order", .defaults = "1024,2048,4096,8192,16384",
               .quick = "2048,4096", .full = "1024,2048,4096,8192,16384,32768", .min = 1, .max = 65536},
              nb_axis(), gemm_axis(), threads_axis()};
    e.needs.gpus = 1;
    e.run = run_fig10;
    e.plots = {{.artifact = "volkov08.fig10", .x = "n", .y = "share/*", .series = {"precision"}, .logx = true,
                .logy = false, .title = "Hybrid LU time breakdown (volkov08 Fig. 10)"}};
    registry.add(std::move(e));
  }
  {
    Experiment e;
    e.key = "volkov08.fig11";
    e.artifact = "volkov08.fig11";
    e.title = "Hybrid LU slowdown when omitting each optimization (row-major, inverse, look-ahead, 2-level)";
    e.axes = {precision_axis(),
              {.name = "n", .kind = AxisKind::integer, .help = "matrix order", .defaults = "2048,4096,8192",
               .quick = "2048", .full = "1024,2048,4096,8192,16384", .min = 1, .max = 65536},
              {.name = "omit", .kind = AxisKind::text, .help = "the optimization switched off (none: all on)",
               .defaults = "none,row_major,inverse_trsm,lookahead,two_level",
               .choices = {"none", "row_major", "inverse_trsm", "lookahead", "two_level"}},
              nb_axis(), gemm_axis()};
    e.needs.gpus = 1;
    e.run = run_fig11;
    e.summarize = summarize_fig11;
    e.plots = {{.artifact = "volkov08.fig11 summary", .x = "n", .y = "slowdown/*", .series = {"precision"},
                .logx = true, .logy = false, .title = "Slowdown without each optimization (volkov08 Fig. 11)"}};
    registry.add(std::move(e));
  }
  {
    Experiment e;
    e.key = "volkov08.accuracy";
    e.artifact = "volkov08.accuracy";
    e.title = "Backward error in units of ε‖A‖max (and MAGMA's) per factorization and method, residual in double";
    e.axes = {
        {.name = "factorization", .kind = AxisKind::text, .help = "which factorization",
         .defaults = "lu,cholesky,qr", .choices = {"lu", "cholesky", "qr"}},
        precision_axis(),
        {.name = "n", .kind = AxisKind::integer, .help = "matrix order (the paper's 8192)", .defaults = "8192",
         .quick = "4096", .full = "4096,8192,16384", .min = 1, .max = 65536},
        {.name = "method", .kind = AxisKind::text, .help = "as volkov08.fig7",
         .defaults = "hybrid,gpu_resident,cusolver,openblas", .choices = {"hybrid", "gpu_resident", "cusolver", "openblas"}},
        nb_axis(),
    };
    // FP32 at n = 4096 in the quick preset: 12 cases (at 8192 a minute, half of it OpenBLAS's QR).
    e.axes[1].quick = "s";
    e.needs.gpus = 1;
    e.applies = [](const AxisPoint& p) { return p.text("method") != "openblas" || p.integer("n") <= kOpenblasMax; };
    e.run = [](Case& c) {
      if (c.text("factorization") == "qr") return run_qr_fig7(c);
      if (c.text("factorization") == "cholesky") return run_cholesky_fig7(c);
      const std::string& method = c.text("method");
      const std::string data = case_data(c);
      if (c.text("precision") == "s")
        run_lu_case<float>(c, method, data, options_for(c, method, c.integer("n")), false, false);
      else
        run_lu_case<double>(c, method, data, options_for(c, method, c.integer("n")), false, false);
    };
    e.summarize = summarize_accuracy;
    registry.add(std::move(e));
  }
}

}  // namespace gpufact::dense
