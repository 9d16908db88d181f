// anderson10.fig8 / fig9 / conditioning: tall-skinny QR with explicit Q by the baselines of
// anderson10 §V.A (vendor library, hand-written BLAS2 GPU QR, multicore LAPACK) and CholeskyQR2.
// All are credited the flops of LAPACK geqrf + orgqr (2mn² − 2n³/3 each, §V.C); GPU methods start
// and end in device memory (the paper times no transfers), OpenBLAS in host memory.
#include "factorizations/tsqr_baselines/qr_baselines.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/errors.hpp"
#include "core/linalg/blas_types.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/tsqr_baselines/qr_methods.hpp"
#include "factorizations/tsqr_baselines/qr_summary.hpp"
#include "factorizations/tsqr_baselines/qr_test_matrices.hpp"
#include "microbench/peak/fma_reference.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace gpufact::factorizations {
namespace {

// How close a GPU method came to qr_explicit_roofline: FP32 only, since the FP32 FMA peak is the
// one known per architecture (fp32_lanes_per_sm); it is taken at the case's measured SM clock.
void add_roofline(Case& c, std::int64_t m, std::int64_t n) {
  const auto& gpu = c.session().gpu();
  const Metric* clock = c.result().find_metric("qr/sm_clock");
  const Metric* time = c.result().find_metric("qr/time");
  const double peak = clock ? microbench::fp32_peak_gflops(gpu, clock->value) : 0.0;
  const double dram = gpu.datasheet_bandwidth_gbs();
  if (!time || time->value <= 0 || peak <= 0 || dram <= 0) return;
  const QrRoofline r = qr_explicit_roofline(m, n, sizeof(float), peak, dram);
  c.add_metric(derived_metric("roofline/time_ms",
                              "roofline: geqrf + orgqr flops at the FP32 FMA peak, or A read and Q, R written "
                              "once at the datasheet DRAM rate, whichever is longer",
                              "ms", r.seconds() * 1e3, false, false));
  c.add_metric(derived_metric("roofline/percent", "roofline time / measured time", "%", 100.0 * r.seconds() / time->value));
}

// anderson10's pass rule for R + explicit Q: both errors <= 10 √n ε (ε = unit roundoff of T),
// orthogonality in the 2-norm. Rounding errors of random sign make ‖I − QᵀQ‖₂ grow like √n times
// an entry and ‖I − QᵀQ‖₁ like n times: by the 1-norm, cuSOLVER's own FP64 Q of 8192 × 4096 fails
// (10.95 √n ε on an H100), by the 2-norm it passes. The 1-norm is still reported.
constexpr double kTolerance = 10.0;
// Host LAPACK is skipped above this many flops (a few seconds per call on a 16-core host) in the
// very tall sweeps; REFERENCE.md: 110592×100 FP32 takes 0.58 s.
constexpr double kHostFlopLimit = 2e10;


struct CaseInput {
  bool conditioned = false;  // U Σ Vᵀ with κ from the `kappa` axis; else uniform [−1, 1)
  double host_flop_limit = 0;  // 0: host methods run at every size
};

// The phase breakdown of one extra, untimed run (QrPlan::phase_breakdown): ms per phase (headline)
// and per tree level, kernel launches, and the table in the result's data.
void add_phase_breakdown(Case& c, const std::vector<QrPhaseTime>& phases) {
  if (phases.empty()) return;
  std::map<std::string, double> by_phase;
  int launches = 0;
  double total = 0;
  nlohmann::json table = nlohmann::json::array();
  for (const auto& p : phases) {
    by_phase[p.phase] += p.seconds;
    launches += p.launches;
    total += p.seconds;
    table.push_back({{"phase", p.phase}, {"level", p.level}, {"ms", p.seconds * 1e3}, {"launches", p.launches}});
    if (p.level > 0)
      c.add_metric(derived_metric("phase/" + p.phase + "_L" + std::to_string(p.level) + "_ms",
                                  p.phase + " tree level " + std::to_string(p.level) + " (breakdown run)", "ms",
                                  p.seconds * 1e3, false, false));
  }
  for (const auto& [phase, seconds] : by_phase)
    c.add_metric(derived_metric("phase/" + phase + "_ms", phase + " (breakdown run)", "ms", seconds * 1e3, false,
                                phase != "copy" && phase != "copy_r" && phase != "identity"));
  c.add_metric(derived_metric("phase/total_ms", "all phases (breakdown run, not graph-launched)", "ms", total * 1e3,
                              false));
  c.add_metric(derived_metric("launches", "kernel launches per call", "", launches, false));
  c.result().data["phases"] = table;
}

template <class T>
void run_method(Case& c, const CaseInput& in) {
  const std::int64_t m = c.integer("m"), n = c.integer("n");
  const QrMethod<T>& method = qr_method<T>(c.text("method"));
  c.result().data["method"] = method.label;
  if (method.needs.gpu && !c.session().has_gpu())
    c.skip(method.name + " needs a GPU: " + c.session().system().gpu_unavailable);
  if (method.max_width > 0 && n > method.max_width)
    c.skip(method.name + " factors at most " + std::to_string(method.max_width) + " columns; n = " + std::to_string(n));
  if (method.unsupported)
    if (const std::string why = method.unsupported(m, n); !why.empty()) c.skip(method.name + ": " + why);
  const std::int64_t nb = c.point().has("nb") ? c.integer("nb") : 0;
  if (nb != 0 && !method.prepare_nb)
    c.skip(method.name + " has no panel width to set (nb = " + std::to_string(nb) + ")");
  const auto prepare = [&] { return nb != 0 ? method.prepare_nb(m, n, nb) : method.prepare(m, n); };
  const double flops = qr_explicit_flops(m, n);
  if (method.needs.memory == QrMemory::host && in.host_flop_limit > 0 && flops > in.host_flop_limit) {
    std::ostringstream why;
    why << method.name << " skipped at " << m << "×" << n << ": " << flops * 1e-9
        << " GFLOP would take several seconds per call on the host (limit " << in.host_flop_limit * 1e-9 << " GFLOP)";
    c.skip(why.str());
  }

  HostMatrix<T> a(m, n), q(m, n), r(n, n);
  if (in.conditioned) {
    const double kappa = c.real("kappa");
    fill_qr_conditioned(a.view(), kappa, c.seed());
    c.result().data["kappa"] = kappa;
  } else {
    fill_qr_uniform(a.view(), c.seed());
  }
  require_finite<T>(a.view(), "input matrix A");
  const std::size_t entries = static_cast<std::size_t>(m * n), bytes = entries * sizeof(T);

  MeasureSpec spec;
  spec.name = "qr";
  spec.label = method.label;
  spec.flops = flops;
  spec.sync = method.synchronizes;
  std::unique_ptr<QrPlan<T>> plan;
  DeviceBuffer<T> da, dq, dr;
  cudaStream_t s = nullptr;
  if (method.needs.memory == QrMemory::device) {
    s = c.stream();
    c.require_device_memory(2 * bytes + static_cast<std::size_t>(n * n) * sizeof(T) + method.workspace_bytes(m, n));
    da = DeviceBuffer<T>(entries);
    dq = DeviceBuffer<T>(entries);
    dr = DeviceBuffer<T>(static_cast<std::size_t>(n * n));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(da.data(), a.data(), bytes, cudaMemcpyHostToDevice, s));
    plan = prepare();
    // All-ones bytes are a NaN in FP32 and FP64: an output the method never writes fails the check.
    spec.setup = [&](std::size_t) {
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(dq.data(), 0xFF, dq.bytes(), s));
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(dr.data(), 0xFF, dr.bytes(), s));
    };
    spec.body = [&](std::size_t) { plan->run(da.data(), m, dq.data(), m, dr.data(), n, s); };
  } else {
    spec.timer = Timer::host_wall;
    plan = prepare();
    spec.setup = [&](std::size_t) {
      std::fill(q.data(), q.data() + entries, std::numeric_limits<T>::quiet_NaN());
      std::fill(r.data(), r.data() + n * n, std::numeric_limits<T>::quiet_NaN());
    };
    spec.body = [&](std::size_t) { plan->run(a.data(), m, q.data(), m, r.data(), n, nullptr); };
  }
  if (!c.measure(spec)) return;
  const std::string failure = plan->failure(s);
  if (method.needs.memory == QrMemory::device) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(q.data(), dq.data(), bytes, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(r.data(), dr.data(), dr.bytes(), cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    // Outputs are on the host already: the instrumented run cannot change what is verified.
    add_phase_breakdown(c, plan->phase_breakdown(da.data(), m, dq.data(), m, dr.data(), n, s));
  }
  if (const Metric* t = c.result().find_metric("qr/time"))
    c.add_metric(derived_metric("qr/time_ms", "time (R + explicit Q)", "ms", t->value * 1e3, false, true,
                                MetricRole::performance));
  if constexpr (std::is_same_v<T, float>)
    if (method.needs.memory == QrMemory::device) add_roofline(c, m, n);
  if (!failure.empty()) {
    c.result().reason = failure;  // a result, not an error: the method broke down on this input
    c.verify("numerical breakdown (1 = failed)", 1.0, 0.0);
    return;
  }
  const QrErrors e = qr_explicit_residual<T>(a.view(), q.view(), r.view());
  const double unit = std::sqrt(static_cast<double>(n)) * unit_roundoff<T>();
  c.add_metric(derived_metric("error/factorization", "‖A−QR‖₁/‖A‖₁", "", e.factorization, false, false));
  c.add_metric(derived_metric("error/orthogonality", "‖I−QᵀQ‖₁", "", e.orthogonality, false, false));
  c.add_metric(derived_metric("error/factorization_sqrt_n_eps", "‖A−QR‖₁/(‖A‖₁√n ε)", "√n ε",
                              e.factorization / unit, false, true));
  c.add_metric(derived_metric("error/orthogonality_sqrt_n_eps", "‖I−QᵀQ‖₁/(√n ε)", "√n ε", e.orthogonality / unit,
                              false, true));
  c.add_metric(derived_metric("error/orthogonality_2norm", "‖I−QᵀQ‖₂", "", e.orthogonality_2, false, false));
  c.add_metric(derived_metric("error/orthogonality_2norm_sqrt_n_eps", "‖I−QᵀQ‖₂/(√n ε)", "√n ε",
                              e.orthogonality_2 / unit, false, true));
  c.verify("‖A−QR‖₁/(‖A‖₁√n ε)", e.factorization / unit, kTolerance);
  c.verify("‖I−QᵀQ‖₂/(√n ε)", e.orthogonality_2 / unit, kTolerance);
}

void run_case(Case& c, const CaseInput& in) {
  if (c.text("precision") == "s")
    run_method<float>(c, in);
  else
    run_method<double>(c, in);
}

void validate_shape(const AxisPoint& p) {
  const std::int64_t m = p.integer("m"), n = p.integer("n");
  if (m < 1) throw UsageError("axis 'm': " + std::to_string(m) + " rows; QR needs m >= 1");
  if (n < 1) throw UsageError("axis 'n': " + std::to_string(n) + " columns; QR needs n >= 1");
  if (n > m)
    throw UsageError("axis 'n': width " + std::to_string(n) + " > m = " + std::to_string(m) +
                     " rows; tall-skinny QR needs n <= m");
}

AxisSpec method_axis() {
  return {.name = "method", .kind = AxisKind::text, .help = "QR method (qr_methods.hpp)",
          .defaults = join_axis_values(qr_method_names()), .choices = qr_method_names()};
}
AxisSpec precision_axis() {
  return {.name = "precision", .kind = AxisKind::text, .help = "s = FP32, d = FP64", .defaults = "s,d",
          .choices = {"s", "d"}};
}
AxisSpec nb_axis() {
  return {.name = "nb", .kind = AxisKind::integer,
          .help = "panel width of the methods with one (householder_cluster); 0: the method's own choice",
          .defaults = "0", .min = 0, .max = std::int64_t{1} << 20};
}

// Median times of the passed runs by (precision, m, n, method) [, kappa]; the best over block sizes.
using TimeKey = std::tuple<std::string, std::int64_t, std::int64_t, std::string>;
std::map<TimeKey, double> passed_times(const Summary& s) {
  std::map<TimeKey, double> t;
  for (const auto& r : s.results()) {
    if (r.status != Status::passed || r.axes.contains("kappa")) continue;
    if (const Metric* m = r.find_metric("qr/time")) {
      const TimeKey key{r.axes.value("precision", ""), r.axes.value("m", std::int64_t{0}),
                        r.axes.value("n", std::int64_t{0}), r.axes.value("method", "")};
      const auto it = t.find(key);
      if (it == t.end() || m->value < it->second) t[key] = m->value;
    }
  }
  return t;
}

Result summary_result(Summary& s, const std::string& artifact, const std::string& precision) {
  Result d;
  d.experiment = s.experiment().key;
  d.artifact = artifact;
  d.axes = {{"precision", precision}};
  d.status = Status::passed;
  if (s.session().has_gpu()) d.device = s.session().device();
  return d;
}

// Speedup of every method over cuSOLVER per shape, per precision; with `crossovers`, the width
// where cuSOLVER starts to win for each method (anderson10 §V.C).
void summarize_speedups(Summary& s, bool crossovers) {
  const auto times = passed_times(s);
  std::map<std::string, std::map<std::string, std::vector<std::pair<std::int64_t, double>>>> by_width;
  std::map<std::string, nlohmann::json> tables;
  for (const auto& [key, t] : times) {
    const auto& [precision, m, n, method] = key;
    const auto ref = times.find({precision, m, n, "cusolver"});
    if (ref == times.end() || method == "cusolver" || t <= 0) continue;
    const double speedup = ref->second / t;
    tables[precision].push_back({{"m", m}, {"n", n}, {"method", method}, {"speedup_over_cusolver", speedup},
                                 {"time_ms", t * 1e3}, {"cusolver_ms", ref->second * 1e3}});
    by_width[precision][method].push_back({n, speedup});
  }
  for (const auto& [precision, table] : tables) {
    Result d = summary_result(s, s.experiment().artifact + " speedup over cuSOLVER", precision);
    d.data["speedups"] = table;
    double best = 0;
    std::string best_method;
    for (const auto& row : table)
      if (row["speedup_over_cusolver"].get<double>() > best) {
        best = row["speedup_over_cusolver"].get<double>();
        best_method = row["method"].get<std::string>() + " at " + std::to_string(row["m"].get<std::int64_t>()) + "×" +
                      std::to_string(row["n"].get<std::int64_t>());
      }
    d.metrics.push_back(derived_metric("speedup/best", "best speedup over cuSOLVER (" + best_method + ")", "×", best));
    if (crossovers)
      for (const auto& [method, points] : by_width[precision]) {
        const auto x = crossover_width(points);
        if (x) {
          d.metrics.push_back(derived_metric("crossover/" + method, "width where cuSOLVER overtakes " + method,
                                             "columns", x->width));
          d.data["crossover"][method] = {{"width", x->width}, {"last_faster", x->last_faster},
                                         {"first_slower", x->first_slower}};
        } else {
          d.data["crossover"][method] = "none in the measured widths";
        }
      }
    s.add(d);
  }
}

// Per method and shape: the largest κ at which it still passes, and orthogonality vs κ.
void summarize_conditioning(Summary& s) {
  std::map<std::string, nlohmann::json> tables;
  std::map<std::tuple<std::string, std::string, std::int64_t, std::int64_t>, double> max_passed;
  for (const auto& r : s.results()) {
    if (r.status != Status::passed && r.status != Status::incorrect) continue;
    const std::string precision = r.axes.value("precision", ""), method = r.axes.value("method", "");
    const std::int64_t m = r.axes.value("m", std::int64_t{0}), n = r.axes.value("n", std::int64_t{0});
    const double kappa = r.axes.value("kappa", 0.0);
    const Metric* orth = r.find_metric("error/orthogonality_sqrt_n_eps");
    const Metric* orth2 = r.find_metric("error/orthogonality_2norm_sqrt_n_eps");
    const Metric* fact = r.find_metric("error/factorization_sqrt_n_eps");
    const Metric* t = r.find_metric("qr/time");
    tables[precision].push_back({{"m", m}, {"n", n}, {"method", method}, {"kappa", kappa},
                                 {"status", to_string(r.status)}, {"reason", r.reason},
                                 {"orthogonality_sqrt_n_eps", orth ? orth->value : -1.0},
                                 {"orthogonality_2norm_sqrt_n_eps", orth2 ? orth2->value : -1.0},
                                 {"factorization_sqrt_n_eps", fact ? fact->value : -1.0},
                                 {"time_ms", t ? t->value * 1e3 : -1.0}});
    auto& best = max_passed[{precision, method, m, n}];
    if (r.status == Status::passed) best = std::max(best, kappa);
  }
  for (const auto& [precision, table] : tables) {
    Result d = summary_result(s, "anderson10.conditioning summary", precision);
    d.data["runs"] = table;
    for (const auto& [key, kappa] : max_passed) {
      const auto& [p, method, m, n] = key;
      if (p != precision) continue;
      d.metrics.push_back(derived_metric("max_kappa_passed/" + method + "/" + std::to_string(m) + "x" +
                                             std::to_string(n),
                                         "largest κ passing 10√n ε: " + method + " " + std::to_string(m) + "×" +
                                             std::to_string(n) + " (0: none)",
                                         "κ", kappa));
    }
    s.add(d);
  }
}

}  // namespace

void register_qr_baselines(Registry& registry) {
  {
    Experiment e;
    e.key = "anderson10.fig8";
    e.artifact = "anderson10.fig8";
    e.title = "QR + explicit Q, 8192 rows × widths: cuSOLVER, BLAS2 GPU QR, OpenBLAS, CholeskyQR2; crossover width";
    e.axes = {
        method_axis(),
        precision_axis(),
        {.name = "m", .kind = AxisKind::integer, .help = "rows (the paper's 8192)", .defaults = "8192", .min = 1,
         .max = std::int64_t{1} << 31},
        {.name = "n", .kind = AxisKind::integer, .help = "columns (width), n <= m",
         .defaults = "64,128,256,512,1024,2048,4096", .quick = "64,256,1024",
         .full = "64,128,256,512,1024,2048,4096,8192", .min = 1, .max = std::int64_t{1} << 20},
        nb_axis(),
    };
    // CPU-only machines still run the OpenBLAS method; GPU methods skip there with the reason.
    e.needs.gpus = 0;
    e.validate = validate_shape;
    e.run = [](Case& c) { run_case(c, {}); };
    e.summarize = [](Summary& s) { summarize_speedups(s, true); };
    e.plots = {{.artifact = "anderson10.fig8", .x = "n", .y = "qr/flop_rate", .series = {"method", "precision"},
                .logx = true, .logy = true, .title = "QR + explicit Q, 8192 rows (anderson10 Fig. 8)"}};
    registry.add(std::move(e));
  }
  {
    Experiment e;
    e.key = "anderson10.fig9";
    e.artifact = "anderson10.fig9";
    e.title = "Very tall-skinny QR + explicit Q (110592 × 16…512, 1,000,000 × 10): every baseline";
    e.axes = {
        method_axis(),
        precision_axis(),
        {.name = "m", .kind = AxisKind::integer, .help = "rows (110592 = 384×288 video pixels; 1,000,000)",
         .defaults = "110592,1000000", .min = 1, .max = std::int64_t{1} << 31},
        {.name = "n", .kind = AxisKind::integer, .help = "columns; the 1,000,000-row case is 10 wide",
         .defaults = "10,16,32,64,100,128,256,512", .quick = "10,100", .min = 1, .max = std::int64_t{1} << 20},
        nb_axis(),
    };
    e.needs.gpus = 0;
    e.validate = validate_shape;
    // The paper's very tall shapes: 10⁶ rows only at width 10 (the video/least-squares extreme).
    e.applies = [](const AxisPoint& p) { return p.integer("m") < 1000000 || p.integer("n") <= 10; };
    e.run = [](Case& c) { run_case(c, {.conditioned = false, .host_flop_limit = kHostFlopLimit}); };
    e.summarize = [](Summary& s) { summarize_speedups(s, false); };
    e.plots = {{.artifact = "anderson10.fig9", .x = "n", .y = "qr/flop_rate", .series = {"method", "precision", "m"},
                .logx = true, .logy = true, .title = "Very tall-skinny QR (anderson10 Fig. 9)"}};
    registry.add(std::move(e));
  }
  {
    Experiment e;
    e.key = "anderson10.conditioning";
    e.artifact = "anderson10.conditioning";
    e.title = "QR + explicit Q vs condition number (A = UΣVᵀ, κ = 1e2…1e12): time, ‖I−QᵀQ‖, ‖A−QR‖/‖A‖";
    e.axes = {
        method_axis(),
        precision_axis(),
        {.name = "kappa", .kind = AxisKind::real, .help = "2-norm condition number of A (singular values 1 … 1/κ)",
         .defaults = "1e2,1e4,1e6,1e8,1e10,1e12", .quick = "1e4,1e12"},
        {.name = "m", .kind = AxisKind::integer, .help = "rows", .defaults = "8192,110592", .quick = "8192", .min = 1,
         .max = std::int64_t{1} << 31},
        {.name = "n", .kind = AxisKind::integer, .help = "columns", .defaults = "100,256", .quick = "256", .min = 1,
         .max = std::int64_t{1} << 20},
    };
    // The quick preset (the default run, whose exit status CI reads) leaves CholeskyQR2 out: its
    // Cholesky of AᵀA breaks down at κ = 1e12, as it should, and every quick run would exit 1. Its
    // breakdown κ is measured with the default and full axes; fig8 and fig9 time it in quick.
    {
      std::vector<std::string> quick;
      for (const auto& name : qr_method_names())
        if (name != "cholqr2") quick.push_back(name);
      e.axes[0].quick = join_axis_values(quick);
    }
    e.needs.gpus = 0;
    e.validate = [](const AxisPoint& p) {
      validate_shape(p);
      if (!(p.real("kappa") >= 1.0)) throw UsageError("axis 'kappa': needs a condition number >= 1");
    };
    // Two shapes: 110592 × 100 and 8192 × 256 (not the crossed pairs).
    e.applies = [](const AxisPoint& p) {
      const std::int64_t m = p.integer("m"), n = p.integer("n");
      return !(m == 8192 && n == 100) && !(m == 110592 && n == 256);
    };
    e.run = [](Case& c) { run_case(c, {.conditioned = true, .host_flop_limit = kHostFlopLimit}); };
    e.summarize = summarize_conditioning;
    e.plots = {{.artifact = "anderson10.conditioning", .x = "kappa", .y = "error/orthogonality_sqrt_n_eps",
                .series = {"method", "precision", "m"}, .logx = true, .logy = true,
                .title = "Loss of orthogonality vs κ"}};
    registry.add(std::move(e));
  }
}

}  // namespace gpufact::factorizations
