// volkov08 §4 on today's GPUs: the SIMT SGEMM's tuning sweep (volkov08.sgemm_tune) and the
// block-triangular C update (volkov08.triangular, §4.2). Every case checks what it timed on fresh
// random inputs: C poisoned with NaN before a β = 0 run (so reading C would show), C₀ restored
// before a β ≠ 0 run; a full double-precision reference where affordable, otherwise 256 entries
// computed in long double against the componentwise bound plus all of C against cuBLAS; for
// a triangle, the other triangle bit for bit.
#include "microbench/gemm/sgemm_simt_bench.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "core/errors.hpp"
#include "core/linalg/device_blas.hpp"
#include "core/linalg/gemm_check.hpp"
#include "core/linalg/residual.hpp"
#include "kernels/common/fill.cuh"
#include "kernels/gemm/sgemm_simt.cuh"
#include "kernels/gemm/sgemm_simt_table.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace gpufact::microbench {
namespace {

constexpr std::int64_t kSamples = 256;
// A full double-precision host reference (gemm_error: two host dgemms) up to this many flops;
// above it, sampled entries plus the normwise comparison with cuBLAS.
constexpr double kFullReferenceFlops = 0x1.0p33;
constexpr const char* kTuneArtifact = "volkov08 §4 (modern SIMT SGEMM, tuning)";
constexpr const char* kTriangularArtifact = "volkov08 §4.2";

Op op_of(char c) { return c == 'T' ? Op::T : Op::N; }
char op_char(Op o) { return o == Op::N ? 'N' : 'T'; }

// Device operands of C := α op(A) op(B) + β C with their host copies; C₀ is C's initial content
// (restored before every timed sample), c_ref receives cuBLAS's answer for the normwise check.
struct Operands {
  Op ta = Op::N, tb = Op::N;
  std::int64_t m = 0, n = 0, k = 0;
  bool b_is_a = false;
  DeviceBuffer<float> a, b, c, c0, c_ref;
  HostMatrix<float> ha, hb, hc0, hc, hc_ref;

  std::int64_t a_rows() const { return ta == Op::N ? m : k; }
  std::int64_t a_cols() const { return ta == Op::N ? k : m; }
  std::int64_t b_rows() const { return tb == Op::N ? k : n; }
  std::int64_t b_cols() const { return tb == Op::N ? n : k; }
  std::int64_t lda() const { return std::max<std::int64_t>(1, a_rows()); }
  std::int64_t ldb() const { return std::max<std::int64_t>(1, b_rows()); }
  std::int64_t ldc() const { return std::max<std::int64_t>(1, m); }
  const float* b_data() const { return b_is_a ? a.data() : b.data(); }
  MatrixView<const float> b_view() const { return b_is_a ? ha.view() : hb.view(); }
};

std::size_t count_of(std::int64_t rows, std::int64_t cols) { return static_cast<std::size_t>(rows * cols); }

void to_host(HostMatrix<float>& h, const float* d, cudaStream_t s) {
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(h.data(), d, count_of(h.ld(), h.cols()) * sizeof(float), cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
}

void restore(float* dst, const DeviceBuffer<float>& src, cudaStream_t s) {
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), src.bytes(), cudaMemcpyDeviceToDevice, s));
}

Operands make_operands(Case& c, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, bool b_is_a) {
  Operands o;
  o.ta = ta;
  o.tb = tb;
  o.m = m;
  o.n = n;
  o.k = k;
  o.b_is_a = b_is_a;
  const std::size_t na = count_of(o.lda(), o.a_cols()), nb = b_is_a ? 0 : count_of(o.ldb(), o.b_cols()),
                    nc = count_of(o.ldc(), n);
  c.require_device_memory((na + nb + 3 * nc) * sizeof(float) + (std::size_t{256} << 20));
  cudaStream_t s = c.stream();
  o.a = DeviceBuffer<float>(na);
  o.b = DeviceBuffer<float>(nb);
  o.c = DeviceBuffer<float>(nc);
  o.c0 = DeviceBuffer<float>(nc);
  o.c_ref = DeviceBuffer<float>(nc);
  kernels::launch_fill_uniform(o.a.data(), na, c.seed(), -1.0f, 1.0f, s);
  if (nb) kernels::launch_fill_uniform(o.b.data(), nb, c.seed() + 1, -1.0f, 1.0f, s);
  kernels::launch_fill_uniform(o.c0.data(), nc, c.seed() + 2, -1.0f, 1.0f, s);
  o.ha = HostMatrix<float>(o.a_rows(), o.a_cols(), o.lda());
  if (!b_is_a) o.hb = HostMatrix<float>(o.b_rows(), o.b_cols(), o.ldb());
  o.hc0 = HostMatrix<float>(m, n, o.ldc());
  o.hc = HostMatrix<float>(m, n, o.ldc());
  o.hc_ref = HostMatrix<float>(m, n, o.ldc());
  to_host(o.ha, o.a.data(), s);
  if (!b_is_a) to_host(o.hb, o.b.data(), s);
  to_host(o.hc0, o.c0.data(), s);
  return o;
}

// Runs `gemm` once on fresh C (C₀ for β ≠ 0, NaN for β = 0) and checks it: the componentwise
// error (full reference or sampled), the other triangle untouched, all of C against cuBLAS
// (`with_cublas`: cuBLAS sgemm with the same α, β into c_ref).
void verify_run(Case& c, Operands& o, const std::string& what, float alpha, float beta, Written written,
                bool with_cublas, CublasHandle& blas, const std::function<void(float beta, float* c)>& gemm) {
  cudaStream_t s = c.stream();
  if (beta == 0.0f && written == Written::all)
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(o.c.data(), 0xff, o.c.bytes(), s));  // NaN everywhere
  else if (beta == 0.0f) {
    // The triangle gets NaN, the rest keeps C₀ (it must come back bit for bit): poison on the
    // host copy and upload it.
    HostMatrix<float> poisoned = o.hc0;
    for (std::int64_t j = 0; j < o.n; ++j)
      for (std::int64_t i = 0; i < o.m; ++i)
        if (is_written(written, i, j)) poisoned(i, j) = std::numeric_limits<float>::quiet_NaN();
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(o.c.data(), poisoned.data(), o.c.bytes(), cudaMemcpyHostToDevice, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    o.hc0 = poisoned;  // what "untouched" means for this run
  } else
    restore(o.c.data(), o.c0, s);
  gemm(beta, o.c.data());
  to_host(o.hc, o.c.data(), s);
  const std::string label = what + (beta == 0.0f ? " (β = 0, C poisoned)" : " (β ≠ 0)");
  const double tol = static_cast<double>(o.k) + 2.0;
  const double flops = 2.0 * static_cast<double>(o.m) * static_cast<double>(o.n) * static_cast<double>(o.k);
  if (written == Written::all && flops <= kFullReferenceFlops)
    c.verify(label + " max |C−Ĉ|/(ε(|α||A||B|+|β||C₀|)), all entries",
             gemm_error<float>(op_char(o.ta), op_char(o.tb), o.ha.view(), o.b_view(), o.hc0.view(), o.hc.view(),
                               alpha, beta),
             tol);
  else
    c.verify(label + " max |C−Ĉ|/(ε(|α||A||B|+|β||C₀|)), " + std::to_string(kSamples) + " sampled entries",
             sampled_gemm_error<float>(o.ta, o.tb, o.ha.view(), o.b_view(), o.hc0.view(), o.hc.view(), alpha, beta,
                                       kSamples, c.seed() + 3, written),
             tol);
  if (written != Written::all)
    c.verify(label + " entries outside the triangle changed",
             static_cast<double>(changed_outside<float>(o.hc0.view(), o.hc.view(), written)), 0);
  if (with_cublas) {
    if (beta == 0.0f)
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(o.c_ref.data(), 0, o.c_ref.bytes(), s));
    else
      restore(o.c_ref.data(), o.c0, s);
    dev::gemm<float>(blas, o.ta, o.tb, o.m, o.n, o.k, alpha, o.a.data(), o.lda(), o.b_data(), o.ldb(), beta,
                     o.c_ref.data(), o.ldc());
    to_host(o.hc_ref, o.c_ref.data(), s);
    c.verify(label + " ‖C−C_cuBLAS‖_F/(ε‖C_cuBLAS‖_F)",
             normwise_difference<float>(o.hc.view(), o.hc_ref.view(), written), tol);
  }
  if (beta == 0.0f && written != Written::all) to_host(o.hc0, o.c0.data(), s);  // back to the real C₀
}

// One untimed call before timing: the kernel's module is loaded (lazy loading) and its shared-
// memory attribute set while no stream is held by the measurement's blocking kernel.
void warm_up(const std::function<void(float, float*)>& gemm, float* c, cudaStream_t s) {
  gemm(0.0f, c);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
}

// ---- volkov08.sgemm_tune ----------------------------------------------------------------------

struct TuneShape {
  std::int64_t m, n, k;
};

// square: n × n · n × n; k64: m × 64 · 64 × n (rank-64 update); n64: m × n · n × 64 (thin C).
TuneShape tune_shape(const std::string& shape, std::int64_t size) {
  if (shape == "k64") return {size, size, 64};
  if (shape == "n64") return {size, 64, size};
  return {size, size, size};
}

std::vector<std::string> config_names() {
  std::vector<std::string> names;
  for (const auto& name : kernels::sgemm_simt_config_names()) names.push_back(name);
  return names;
}

void run_tune(Case& c) {
  const std::string config = c.text("config"), trans = c.text("trans"), shape = c.text("shape");
  const TuneShape sh = tune_shape(shape, c.integer("size"));
  const Op ta = op_of(trans[0]), tb = op_of(trans[1]);
  Operands o = make_operands(c, ta, tb, sh.m, sh.n, sh.k, false);
  cudaStream_t s = c.stream();
  CublasHandle blas(s);
  const bool is_cublas = config == "cublas";
  // "+bt" configs run NN through Bᵀ in a workspace owned by this case (allocated before timing).
  const bool through_bt = !is_cublas && ta == Op::N && tb == Op::N &&
                          config.ends_with(kernels::kSgemmTransposedBSuffix);
  const std::size_t bt_floats = through_bt ? kernels::sgemm_simt_bt_workspace_floats(o.n, o.k) : 0;
  if (through_bt) c.require_device_memory(bt_floats * sizeof(float));
  DeviceBuffer<float> bt(std::max<std::size_t>(bt_floats, 1));
  auto gemm = [&](float beta, float* cptr) {
    if (is_cublas)
      dev::gemm<float>(blas, ta, tb, o.m, o.n, o.k, 1.0f, o.a.data(), o.lda(), o.b.data(), o.ldb(), beta, cptr,
                       o.ldc());
    else if (through_bt)
      kernels::sgemm_simt_bt(config, o.m, o.n, o.k, 1.0f, o.a.data(), o.lda(), o.b.data(), o.ldb(), beta, cptr,
                             o.ldc(), bt.data(), bt_floats, s);
    else
      kernels::sgemm_simt(config, ta, tb, o.m, o.n, o.k, 1.0f, o.a.data(), o.lda(), o.b.data(), o.ldb(), beta, cptr,
                          o.ldc(), s);
  };
  if (!is_cublas) {
    const auto cfg = kernels::sgemm_simt_config(config);
    c.result().data["config"] = {{"block_m", cfg.block_m}, {"block_n", cfg.block_n}, {"block_k", cfg.block_k},
                                 {"stages", cfg.stages}, {"thread_m", cfg.thread_m}, {"thread_n", cfg.thread_n},
                                 {"shared_bytes", cfg.shared_bytes}};
  }
  c.result().data["m"] = o.m;
  c.result().data["n"] = o.n;
  c.result().data["k"] = o.k;

  // Timed: C := op(A) op(B) + C (the paper's C += AB), C₀ restored before every sample.
  MeasureSpec spec;
  spec.name = "gemm";
  spec.label = is_cublas ? "cuBLAS sgemm" : config;
  spec.flops = 2.0 * static_cast<double>(o.m) * static_cast<double>(o.n) * static_cast<double>(o.k);
  spec.setup = [&](std::size_t) { restore(o.c.data(), o.c0, s); };
  spec.body = [&](std::size_t) { gemm(1.0f, o.c.data()); };
  warm_up(gemm, o.c.data(), s);
  if (!c.measure(spec)) return;
  for (float beta : {1.0f, 0.0f}) verify_run(c, o, spec.label, 1.0f, beta, Written::all, !is_cublas, blas, gemm);
}


// Best configuration per (trans, shape, size) against cuBLAS, and the tuning table built from it.
void summarize_tune(Summary& s) {
  struct Best {
    std::string config;
    double rate = 0, cublas = 0;
    std::int64_t m = 0, n = 0, k = 0;
  };
  std::map<std::tuple<std::string, std::string, std::int64_t>, Best> best;
  for (const auto& r : s.results()) {
    if (r.status != Status::passed) continue;
    const auto key = std::make_tuple(r.axes.value("trans", ""), r.axes.value("shape", ""),
                                     r.axes.value("size", std::int64_t{0}));
    const std::string config = r.axes.value("config", "");
    const double rate = r.metric_value("gemm/flop_rate");
    Best& b = best[key];
    b.m = r.data.value("m", std::int64_t{0});
    b.n = r.data.value("n", std::int64_t{0});
    b.k = r.data.value("k", std::int64_t{0});
    if (config == "cublas")
      b.cublas = rate;
    else if (rate > b.rate) {
      b.rate = rate;
      b.config = config;
    }
  }
  kernels::SgemmTuningTable table;
  table.device = s.session().has_gpu() ? s.session().gpu().name : "";
  table.source = "gpufact bench volkov08.sgemm_tune (summary)";
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [key, b] : best) {
    if (b.config.empty()) continue;
    const auto& [trans, shape, size] = key;
    Result d;
    d.experiment = "volkov08.sgemm_tune";
    d.artifact = std::string(kTuneArtifact) + " summary";
    d.status = Status::passed;
    d.device = s.session().device();
    d.axes = {{"trans", trans}, {"shape", shape}, {"size", size}};
    d.metrics.push_back(derived_metric("best/flop_rate", "best SIMT config (" + b.config + ")", "GFLOP/s", b.rate));
    if (b.cublas > 0) {
      d.metrics.push_back(derived_metric("cublas/flop_rate", "cuBLAS sgemm", "GFLOP/s", b.cublas, true, false));
      d.metrics.push_back(derived_metric("best_vs_cublas", "best SIMT / cuBLAS", "%", 100.0 * b.rate / b.cublas));
    }
    d.data["best_config"] = b.config;
    s.add(std::move(d));
    table.entries.push_back({trans, b.m, b.n, b.k, b.config, b.rate});
  }
  if (table.entries.empty()) return;
  Result t;
  t.experiment = "volkov08.sgemm_tune";
  t.artifact = std::string(kTuneArtifact) + " table";
  t.status = Status::passed;
  t.device = s.session().device();
  t.reason = "tuning table for configs/tuning/sgemm_simt.json: scripts/tuning_table.py REPORT volkov08.sgemm_tune > FILE";
  t.data["tuning_table"] = nlohmann::json::parse(kernels::sgemm_tuning_table_json(table));
  s.add(std::move(t));
}

// ---- volkov08.triangular -----------------------------------------------------------------------

std::string triangular_config(std::int64_t n, std::int64_t k) {
  // The tuned square-tile config for this shape, else the default (both kernels must use the
  // same tiles for the per-useful-flop comparison).
  const std::string picked = kernels::sgemm_simt_pick_config(Op::N, Op::T, n, n, k);
  const auto cfg = kernels::sgemm_simt_config(picked);
  return cfg.block_m == cfg.block_n ? picked : std::string(kernels::sgemm_simt_default_config());
}

void run_triangular(Case& c) {
  const std::int64_t n = c.integer("n"), k = c.integer("k");
  const std::string variant = c.text("variant"), uplo_name = c.text("uplo");
  const bool syrk = c.text("operands") == "syrk";
  const Uplo uplo = uplo_name == "lower" ? Uplo::lower : Uplo::upper;
  const Written written = variant == "full_gemm" ? Written::all : (uplo == Uplo::lower ? Written::lower : Written::upper);
  Operands o = make_operands(c, Op::N, Op::T, n, n, k, syrk);
  cudaStream_t s = c.stream();
  CublasHandle blas(s);
  const std::string config = triangular_config(n, k);
  c.result().data["config"] = config;
  const float alpha = -1.0f;  // the Cholesky trailing update C −= A Aᵀ
  auto gemm = [&](float beta, float* cptr) {
    if (variant == "cublas_syrk")
      dev::syrk<float>(blas, uplo, Op::N, n, k, alpha, o.a.data(), o.lda(), beta, cptr, o.ldc());
    else if (variant == "full_gemm")
      kernels::sgemm_simt(config, Op::N, Op::T, n, n, k, alpha, o.a.data(), o.lda(), o.b_data(), o.ldb(), beta, cptr,
                          o.ldc(), s);
    else
      kernels::sgemm_triangular_simt(
          config, variant == "flipped" ? kernels::TriangleGrid::flipped : kernels::TriangleGrid::early_exit, uplo,
          Op::N, Op::T, n, k, alpha, o.a.data(), o.lda(), o.b_data(), o.ldb(), beta, cptr, o.ldc(), s);
  };
  const double triangle_flops = static_cast<double>(n) * static_cast<double>(n + 1) * static_cast<double>(k);
  MeasureSpec spec;
  spec.name = "update";
  spec.label = variant;
  // Rate per useful flop: the triangle's n(n+1)k; all of C's 2n²k for the square kernel.
  spec.flops = variant == "full_gemm" ? 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(k)
                                      : triangle_flops;
  spec.setup = [&](std::size_t) { restore(o.c.data(), o.c0, s); };
  spec.body = [&](std::size_t) { gemm(1.0f, o.c.data()); };
  warm_up(gemm, o.c.data(), s);
  if (!c.measure(spec)) return;
  for (float beta : {1.0f, 0.0f}) verify_run(c, o, variant, alpha, beta, written, true, blas, gemm);
}

// Per (n, k, uplo, operands): each variant's useful-flop rate over the full-C rate of the square
// kernel (volkov08 §4.2: the triangle at the full matrix's peak; early exit ~10% lower).
void summarize_triangular(Summary& s) {
  using Key = std::tuple<std::int64_t, std::int64_t, std::string, std::string>;
  std::map<Key, std::map<std::string, double>> rates;
  for (const auto& r : s.results()) {
    if (r.status != Status::passed) continue;
    const Key key{r.axes.value("n", std::int64_t{0}), r.axes.value("k", std::int64_t{0}), r.axes.value("uplo", ""),
                  r.axes.value("operands", "")};
    rates[key][r.axes.value("variant", "")] = r.metric_value("update/flop_rate");
  }
  for (const auto& [key, by_variant] : rates) {
    const auto full = by_variant.find("full_gemm");
    if (full == by_variant.end() || full->second <= 0) continue;
    Result d;
    d.experiment = "volkov08.triangular";
    d.artifact = std::string(kTriangularArtifact) + " summary";
    d.status = Status::passed;
    d.device = s.session().device();
    d.axes = {{"n", std::get<0>(key)}, {"k", std::get<1>(key)}, {"uplo", std::get<2>(key)},
              {"operands", std::get<3>(key)}};
    d.metrics.push_back(derived_metric("full_gemm/flop_rate", "square kernel, all of C", "GFLOP/s", full->second, true,
                                       false));
    for (const auto& [variant, rate] : by_variant) {
      if (variant == "full_gemm") continue;
      d.metrics.push_back(derived_metric(variant + "/vs_full", variant + " useful-flop rate / full-C rate", "%",
                                         100.0 * rate / full->second, true, variant == "flipped"));
    }
    s.add(std::move(d));
  }
}

}  // namespace

void register_sgemm_tune(Registry& registry) {
  std::vector<std::string> configs = config_names();
  configs.push_back("cublas");
  Experiment e;
  e.key = "volkov08.sgemm_tune";
  e.artifact = kTuneArtifact;
  e.title = "SIMT SGEMM (no tensor cores): tile configs × transposes × shapes vs cuBLAS; best config table";
  e.axes = {
      {.name = "config", .kind = AxisKind::text, .help = "tile configuration (+bt: NN through a transposed B), or cublas (cublasSgemm, TF32 off)",
       .defaults = join_axis_values(configs), .quick = "simt_128x128x16_s3,simt_128x128x32_s3,simt_128x128x16_s3+bt,simt_128x128x32_s3+bt,cublas",
       .full = join_axis_values(configs), .choices = configs},
      {.name = "trans", .kind = AxisKind::text, .help = "op(A) op(B)", .defaults = "NN,NT,TN", .quick = "NN,NT",
       .full = "NN,NT,TN", .choices = {"NN", "NT", "TN"}},
      {.name = "shape", .kind = AxisKind::text,
       .help = "square: size³; k64: size × 64 · 64 × size; n64: size × size · size × 64",
       .defaults = "square", .quick = "square", .full = "square,k64,n64", .choices = {"square", "k64", "n64"}},
      {.name = "size", .kind = AxisKind::integer, .help = "n of the square shape; m and the long side of thin ones",
       .defaults = "4096,8192", .quick = "4096,8192", .full = "1024:16384:*2", .min = 1, .max = 65536},
  };
  e.needs.gpus = 1;
  // Thin shapes are swept from 4096 up (the factorizations' panel updates).
  // "+bt" (NN through a transposed B) exists for NN only.
  e.applies = [](const AxisPoint& p) {
    if (p.text("config").ends_with(kernels::kSgemmTransposedBSuffix) && p.text("trans") != "NN") return false;
    return p.text("shape") == "square" || p.integer("size") >= 4096;
  };
  e.run = run_tune;
  e.summarize = summarize_tune;
  e.plots = {{.artifact = kTuneArtifact, .x = "size", .y = "gemm/flop_rate", .series = {"config"}, .logx = true,
              .logy = false, .title = "SIMT SGEMM configurations vs cuBLAS (volkov08 §4)"}};
  registry.add(std::move(e));
}

void register_sgemm_triangular(Registry& registry) {
  Experiment e;
  e.key = "volkov08.triangular";
  e.artifact = kTriangularArtifact;
  e.title = "Block-triangular C −= A Bᵀ: flipped-rectangle grid, early-exit grid, full square kernel, cublasSsyrk";
  e.axes = {
      {.name = "n", .kind = AxisKind::integer, .help = "order of C", .defaults = "4096,8192", .quick = "4096,8192",
       .full = "4096,8192,16384", .min = 1, .max = 65536},
      {.name = "k", .kind = AxisKind::integer, .help = "inner dimension (panel width)", .defaults = "64,256,1024",
       .quick = "1024", .full = "64,256,1024", .min = 1, .max = 65536},
      {.name = "variant", .kind = AxisKind::text,
       .help = "flipped (only nonzero tiles), early_exit (full grid, off-triangle blocks return), full_gemm (square "
               "kernel on all of C), cublas_syrk (B = A only)",
       .defaults = "flipped,early_exit,full_gemm,cublas_syrk",
       .choices = {"flipped", "early_exit", "full_gemm", "cublas_syrk"}},
      {.name = "uplo", .kind = AxisKind::text, .help = "triangle of C updated", .defaults = "lower",
       .full = "lower,upper", .choices = {"lower", "upper"}},
      {.name = "operands", .kind = AxisKind::text, .help = "syrk: B = A (SYRK-like); gemm: independent B",
       .defaults = "syrk", .full = "syrk,gemm", .choices = {"syrk", "gemm"}},
  };
  e.needs.gpus = 1;
  e.applies = [](const AxisPoint& p) { return p.text("variant") != "cublas_syrk" || p.text("operands") == "syrk"; };
  e.run = run_triangular;
  e.summarize = summarize_triangular;
  e.plots = {{.artifact = kTriangularArtifact, .x = "n", .y = "update/flop_rate", .series = {"variant", "k"},
              .logx = true, .logy = false, .title = "Block-triangular C update per useful flop (volkov08 §4.2)"}};
  registry.add(std::move(e));
}

}  // namespace gpufact::microbench
