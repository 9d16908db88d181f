// volkov08.table2 (volkov08 §4.4, Table 2): square C := C + AB and C := C + ABᵀ (α = β = 1) for
// cuBLAS, the paper's kernel, its "no fetch" and "no prefetch" ablations and every other SGEMM of
// gemm_variants. Cases of kernel=volkov also measure the table's "peak" column (FP32 FMA with a
// shared-memory operand, volkov08.smem's kernel, in this run) and its "est." column (sass_model:
// the compiled main loop's instruction mix at this run's measured throughputs). The summary
// prints Table 2, one row per n, beside the paper's 8800GTX numbers.
#include "factorizations/gemm/gemm_experiments.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/handles.hpp"
#include "core/errors.hpp"
#include "core/linalg/device_blas.hpp"
#include "core/linalg/gemm_check.hpp"
#include "factorizations/gemm/gemm_bench.hpp"
#include "factorizations/gemm/gemm_variants.hpp"
#include "factorizations/gemm/sass_model.hpp"
#include "microbench/peak/fma_reference.hpp"
#include "microbench/smem/smem.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace gpufact::factorizations {
namespace {


// volkov08 Table 2, GeForce 8800GTX, GFLOP/s (its arithmetic peak: 128 lanes × 1.35 GHz × 2).
constexpr double kPaperArithmeticPeak = 345.6;
struct PaperColumn {
  const char* column;
  double ab, abt;
};
constexpr PaperColumn kPaper8800[] = {
    {"cublas", 128, 122}, {"estimate", 202, 197}, {"volkov", 206, 205},
    {"volkov_no_fetch", 210, 205}, {"volkov_no_prefetch", 186, 192},
};
constexpr double kPaperSmemPeak = 230;  // "peak": FMA with one operand in local memory

// The Table 2 "peak" column: volkov08.smem's FMA-with-shared-operand kernel, conflict-free.
void measure_smem_peak(Case& c) {
  if (!microbench::run_shared_operand_fma(
          c, 1, static_cast<std::uint32_t>(c.seed() >> 17), "FP32 FMA, b from shared memory (Table 2 peak)",
          "peak column: threads whose shared-operand FMA chains differ from the host replay (exact)"))
    return;
  gemm_bench::add_rate_metrics(c, "smem_fma", "FMA with a shared-memory operand");
}

// The Table 2 "est." column for the paper kernel of this transpose.
void add_estimate(Case& c, Op tb) {
  const SassLoops& sass = sgemm_volkov_sass_loops();
  Result& r = c.result();
  if (!sass.available) {
    r.data["estimate"] = {{"available", false}, {"reason", sass.reason}};
    return;
  }
  const std::string key = std::string(tb == Op::N ? "nn" : "nt") + "/paper";
  const auto it = sass.loops.find(key);
  if (it == sass.loops.end()) {
    r.data["estimate"] = {{"available", false}, {"reason", "no main loop found for " + key}};
    return;
  }
  const GpuSummary& gpu = c.session().gpu();
  const double clock = r.metric_value("smem_fma/sm_clock") > 0 ? r.metric_value("smem_fma/sm_clock")
                                                                  : gpu.sm_clock_max_mhz;
  const int lanes = microbench::fp32_lanes_per_sm(gpu.cc_major, gpu.cc_minor);
  ThroughputInputs in;
  in.smem_fma_gflops = r.metric_value("smem_fma/flop_rate");
  in.fma_peak_gflops = microbench::fp32_peak_gflops(gpu.sm_count, lanes, clock);
  in.issue_ginstr = static_cast<double>(gpu.sm_count) * 128.0 * clock * 1e-3;
  const LoopMix& mix = it->second;
  r.data["estimate"] = {{"available", true},
                        {"sass_source", sass.source},
                        {"loop", {{"total", mix.total}, {"ffma", mix.ffma}, {"ffma_shared_operand", mix.ffma_shared_operand},
                                  {"lds", mix.lds}, {"other", mix.other}}},
                        {"smem_fma_gflops", in.smem_fma_gflops},
                        {"fma_peak_gflops", in.fma_peak_gflops},
                        {"issue_ginstr_per_s", in.issue_ginstr},
                        {"paper_loop", tb == Op::N ? "312 instructions, 256 FMA with a local-memory operand"
                                                   : "83 instructions, 64 FMA with a local-memory operand"}};
  const double est = estimate_gflops(mix, in);
  if (est <= 0) return;
  c.add_metric(derived_metric("estimate/tflop_rate", "model estimate (volkov08 §4.4)", "TFLOP/s", est * 1e-3));
  if (in.fma_peak_gflops > 0)
    c.add_metric(derived_metric("estimate/percent_of_peak", "model estimate / FP32 FMA peak", "%",
                                100.0 * est / in.fma_peak_gflops));
}

void run_table2(Case& c) {
  const std::int64_t n = c.integer("n");
  const std::string& kernel = c.text("kernel");
  const gemm_bench::Shape shape{n, n, n, gemm_bench::trans_b_from(c.text("trans"))};
  const SgemmVariant* variant = find_sgemm_variant(kernel);
  const bool large = shape.work() > gemm_bench::kFullReferenceWork;
  const bool needs_cublas_reference = variant && large && !variant->wrong_by_design;
  c.require_device_memory(gemm_bench::operand_bytes<float>(shape, needs_cublas_reference ? 1 : 0) + (64u << 20));

  auto op = gemm_bench::make_operands<float>(c, shape, 1.0f, 1.0f);  // the paper's C := C + AB
  cudaStream_t s = c.stream();
  CublasHandle blas(s);
  GPUFACT_CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));  // FP32 FMA, no TF32
  const auto cublas_launch = [&] {
    dev::gemm<float>(blas, Op::N, shape.tb, shape.m, shape.n, shape.k, op.alpha, op.a.data(), op.lda(), op.b.data(),
                     op.ldb(), op.beta, op.c.data(), op.ldc());
  };

  if (!variant) {  // cuBLAS
    const auto got = gemm_bench::time_and_run<float>(c, op, "cublas", "cuBLAS sgemm", cublas_launch);
    if (got) gemm_bench::verify_product<float>(c, "cuBLAS", shape, op.ha, op.hb, op.hc0, *got, nullptr, op.alpha, op.beta);
    return;
  }
  std::optional<HostMatrix<float>> reference;
  if (needs_cublas_reference) {
    gemm_bench::prepare_output(op, s);
    cublas_launch();
    reference = gemm_bench::fetch_output(op, s);
  }
  const auto launch = [&] {
    variant->launch(Op::N, shape.tb, shape.m, shape.n, shape.k, op.alpha, op.a.data(), op.lda(), op.b.data(), op.ldb(),
                    op.beta, op.c.data(), op.ldc(), s);
  };
  const auto got = gemm_bench::time_and_run<float>(c, op, kernel, variant->label, launch);
  if (!got) return;
  if (variant->wrong_by_design) {
    c.verify("no fetch: the product is wrong by design (volkov08 §4.4); entries of C that are not finite",
             nonfinite_entries<float>(got->view()), 0);
  } else {
    gemm_bench::verify_product<float>(c, variant->label, shape, op.ha, op.hb, op.hc0, *got,
                                      reference ? &*reference : nullptr, op.alpha, op.beta);
  }
  if (kernel == "volkov") {
    measure_smem_peak(c);
    add_estimate(c, shape.tb);
  }
}

// Table 2 as the paper prints it, one row per n: peak, then per transpose cuBLAS, est., the
// kernels; TFLOP/s and % of the FP32 FMA peak, the 8800GTX's GFLOP/s beside.
void summarize_table2(Summary& s) {
  std::map<std::int64_t, std::vector<const Result*>> by_n;
  for (const auto& r : s.results())
    if (r.status == Status::passed) by_n[r.axes.value("n", std::int64_t{0})].push_back(&r);
  for (const auto& [n, results] : by_n) {
    Result d;
    d.experiment = s.experiment().key;
    d.artifact = "volkov08.table2 table";
    d.device = s.session().device();
    d.axes = {{"n", n}};
    d.status = Status::passed;
    nlohmann::json row = {{"n", n}};
    std::set<std::string> seen;
    for (const Result* r : results) {
      const std::string trans = r->axes.value("trans", std::string());
      const std::string kernel = r->axes.value("kernel", std::string());
      const auto add = [&](const std::string& column, const std::string& tag_prefix, bool per_trans) {
        const std::string key = per_trans ? trans + "/" + column : column;
        const double tflops = r->metric_value(tag_prefix + "/tflop_rate");
        if (tflops <= 0 || !seen.insert(key).second) return;
        const double pct = r->metric_value(tag_prefix + "/percent_of_peak");
        row[key] = {{"tflop_rate", tflops}, {"percent_of_peak", pct}};
        d.metrics.push_back(derived_metric(key + "/tflop_rate", key + " rate", "TFLOP/s", tflops, true, false));
        Metric p = derived_metric(key + "/percent_of_peak", key + " / FP32 FMA peak", "%", pct, true, true);
        for (const auto& paper : kPaper8800)
          if (column == paper.column)
            p.published = Published{100.0 * (trans == "NN" ? paper.ab : paper.abt) / kPaperArithmeticPeak,
                                    "volkov08 Table 2, 8800GTX, % of 345.6 GFLOP/s"};
        if (column == "peak")
          p.published = Published{100.0 * kPaperSmemPeak / kPaperArithmeticPeak,
                                  "volkov08 Table 2 peak, 8800GTX, % of 345.6 GFLOP/s"};
        d.metrics.push_back(p);
      };
      add(kernel, kernel, true);
      if (kernel == "volkov") {
        add("peak", "smem_fma", false);
        add("estimate", "estimate", true);
      }
    }
    // The paper's kernel as a fraction of the shared-operand peak (89–90% on every G80 GPU).
    for (const char* trans : {"NN", "NT"}) {
      const std::string k = std::string(trans) + "/volkov";
      if (row.contains(k) && row.contains("peak") && row["peak"]["tflop_rate"].get<double>() > 0) {
        Metric f = derived_metric(k + "/percent_of_smem_peak", k + " / FMA-with-shared-operand peak", "%",
                                  100.0 * row[k]["tflop_rate"].get<double>() / row["peak"]["tflop_rate"].get<double>());
        f.published = Published{100.0 * (std::string(trans) == "NN" ? 206 : 205) / kPaperSmemPeak,
                                 "volkov08 §4.4, 8800GTX"};
        d.metrics.push_back(f);
      }
    }
    d.data["row"] = row;
    nlohmann::json paper = nlohmann::json::object();
    paper["peak"] = kPaperSmemPeak;
    for (const auto& p : kPaper8800) paper[std::string("NN/") + p.column] = p.ab, paper[std::string("NT/") + p.column] = p.abt;
    d.data["paper_8800gtx_gflops"] = paper;
    s.add(std::move(d));
  }
}

}  // namespace

void register_table2(Registry& registry) {
  std::vector<std::string> kernels = {"cublas"};
  for (const auto& name : sgemm_variant_names(true)) kernels.push_back(name);
  Experiment e;
  e.key = "volkov08.table2";
  e.artifact = "volkov08.table2";
  e.title = "Square SGEMM C += AB and C += ABᵀ: FMA-with-shared-operand peak, cuBLAS, SASS model estimate, the paper's "
            "kernel, no fetch, no prefetch (volkov08 Table 2)";
  e.axes = {
      {.name = "n", .kind = AxisKind::integer, .help = "m = n = k", .defaults = "1024,2048,4096,8192",
       .quick = "1024,4096", .full = "1024,2048,4096,8192,16384", .min = 1, .max = 46340},
      {.name = "trans", .kind = AxisKind::text, .help = "NN: C += AB; NT: C += ABᵀ", .defaults = "NN,NT",
       .choices = {"NN", "NT"}},
      {.name = "kernel", .kind = AxisKind::text,
       .help = "cuBLAS sgemm (FP32, no TF32), the volkov08 kernel and its Table 2 ablations, other SGEMMs",
       .defaults = join_axis_values(kernels), .choices = kernels},
  };
  e.needs.gpus = 1;
  e.run = run_table2;
  e.summarize = summarize_table2;
  e.plots = {{.artifact = "volkov08.table2", .x = "n", .y = "*/tflop_rate", .series = {"kernel", "trans"},
              .logx = true, .logy = false, .title = "Square SGEMM rates (volkov08 Table 2)"}};
  registry.add(std::move(e));
}

}  // namespace gpufact::factorizations
