// volkov08.fig5 (volkov08 §4.3–4.4, Fig. 5): runtime vs the number of 64 × 16 blocks of C at
// k = 1024 for cuBLAS, the paper's kernel (and the other SGEMMs of gemm_variants) and split-k;
// C = αAB with β = 0 on a NaN-poisoned C. Each block count B is shaped as square as it gets
// (gemm_bench::block_rows_for; 4q² blocks are 64q × 64q). The small-C target rides on the same
// axes: k = 16384 and 65536 run for C up to 256 × 256 (B ≤ 64). Split-k runs the stored table's
// splits ("auto") or explicit ones; the summary turns the explicit sweep into the table
// (configs/tuning/sgemm_splitk.json, scripts/tuning_table.py) and gives split-k's speedups over
// cuBLAS for small C against the 1.5×. splitk_simt64 / splitk_simt128 run split-k on the
// SIMT main loop (64 × 64 / 128 × 128 tiles; "auto" fills every SM, slices >= 64 columns); the
// small-C speedup takes the fastest of all split-k kernels and splits, and splitk_auto the fastest
// kernel with its automatic splits (both name the kernel and slices that won).
#include "factorizations/gemm/gemm_experiments.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/handles.hpp"
#include "core/errors.hpp"
#include "core/linalg/device_blas.hpp"
#include "factorizations/gemm/gemm_bench.hpp"
#include "factorizations/gemm/gemm_variants.hpp"
#include "factorizations/gemm/splitk_table.hpp"
#include "kernels/gemm/sgemm_simt.cuh"
#include "kernels/gemm/sgemm_splitk.cuh"

#include <charconv>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace gpufact::factorizations {
namespace {


constexpr std::int64_t kSmallCBlocks = 64;  // C up to 256 × 256: the small-C target's sizes
constexpr double kTargetSpeedup = 1.5;      // issue 4: split-k ≥ 1.5× cuBLAS for small C, large k

// "auto" → 0, an integer 1..kSplitkMaxSplits → itself; anything else throws UsageError.
int parse_splits(const std::string& text) {
  if (text == "auto") return 0;
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 1 || v > kernels::kSplitkMaxSplits)
    throw UsageError("axis 'splits': '" + text + "' is not auto or an integer in 1.." +
                     std::to_string(kernels::kSplitkMaxSplits));
  return v;
}

// Split-k on the SIMT main loop (kernels/gemm/sgemm_splitk.cuh): the fig5 kernel name → its tile
// configuration; empty for the other kernels.
std::string splitk_simt_config(const std::string& kernel) {
  if (kernel == "splitk_simt64") return "simt_64x64x16_s3";
  if (kernel == "splitk_simt128") return "simt_128x128x16_s3";
  return {};
}

bool is_splitk(const std::string& kernel) { return kernel.rfind("splitk", 0) == 0; }

gemm_bench::Shape shape_of(std::int64_t blocks, std::int64_t k) {
  const std::int64_t bm = gemm_bench::block_rows_for(blocks);
  return {64 * bm, 16 * (blocks / bm), k, Op::N};
}

void run_fig5(Case& c) {
  const std::int64_t blocks = c.integer("blocks");
  const std::string& kernel = c.text("kernel");
  const gemm_bench::Shape shape = shape_of(blocks, c.integer("k"));
  Result& res = c.result();
  res.data["m"] = shape.m;
  res.data["n"] = shape.n;
  res.data["k"] = shape.k;

  int splits = 0;
  const std::string simt_config = splitk_simt_config(kernel);
  if (!simt_config.empty()) {
    splits = parse_splits(c.text("splits"));
    if (splits == 0) {
      const kernels::SgemmSimtConfig cfg = kernels::sgemm_simt_config(simt_config);
      splits = splitk_simt_heuristic(shape.m, shape.n, shape.k, cfg.block_m, cfg.block_n, cfg.min_blocks_per_sm,
                                     c.session().gpu().sm_count);
      res.data["splits_source"] = "heuristic";
    }
    res.data["splits"] = splits;
    res.data["config"] = simt_config;
  } else if (kernel == "splitk") {
    splits = parse_splits(c.text("splits"));
    if (splits == 0) {
      const auto& table = stored_splitk_table();
      const SplitsChoice choice =
          choose_splits(table ? &*table : nullptr, shape.m, shape.n, shape.k, c.session().gpu().sm_count);
      splits = choice.splits;
      res.data["splits_source"] = choice.source;
    }
    res.data["splits"] = splits;
  }
  const SgemmVariant* variant = find_sgemm_variant(kernel);
  const bool large = shape.work() > gemm_bench::kFullReferenceWork;
  const bool needs_cublas_reference = kernel != "cublas" && large;
  const std::size_t workspace_floats =
      splits > 0 ? kernels::sgemm_splitk_workspace_floats(shape.m, shape.n, splits) : 0;
  c.require_device_memory(gemm_bench::operand_bytes<float>(shape, needs_cublas_reference ? 1 : 0) +
                          workspace_floats * sizeof(float) + (64u << 20));

  auto op = gemm_bench::make_operands<float>(c, shape, 1.0f, 0.0f);
  cudaStream_t s = c.stream();
  CublasHandle blas(s);
  GPUFACT_CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
  const auto cublas_launch = [&] {
    dev::gemm<float>(blas, Op::N, shape.tb, shape.m, shape.n, shape.k, op.alpha, op.a.data(), op.lda(), op.b.data(),
                     op.ldb(), op.beta, op.c.data(), op.ldc());
  };
  std::optional<HostMatrix<float>> reference;
  if (needs_cublas_reference) {
    gemm_bench::prepare_output(op, s);
    cublas_launch();
    reference = gemm_bench::fetch_output(op, s);
  }
  DeviceBuffer<float> workspace(workspace_floats);
  std::function<void()> launch;
  std::string label;
  if (kernel == "cublas") {
    launch = cublas_launch;
    label = "cuBLAS sgemm";
  } else if (kernel == "splitk") {
    launch = [&] {
      kernels::sgemm_splitk(Op::N, shape.tb, shape.m, shape.n, shape.k, splits, op.alpha, op.a.data(), op.lda(),
                            op.b.data(), op.ldb(), op.beta, op.c.data(), op.ldc(), workspace.data(), workspace_floats,
                            s);
    };
    label = "split-k (" + std::to_string(splits) + " slices)";
  } else if (!simt_config.empty()) {
    launch = [&] {
      kernels::sgemm_splitk_simt(simt_config, Op::N, shape.tb, shape.m, shape.n, shape.k, splits, op.alpha,
                                 op.a.data(), op.lda(), op.b.data(), op.ldb(), op.beta, op.c.data(), op.ldc(),
                                 workspace.data(), workspace_floats, s);
    };
    label = "split-k on " + simt_config + " (" + std::to_string(splits) + " slices)";
  } else if (variant) {
    launch = [&] {
      variant->launch(Op::N, shape.tb, shape.m, shape.n, shape.k, op.alpha, op.a.data(), op.lda(), op.b.data(),
                      op.ldb(), op.beta, op.c.data(), op.ldc(), s);
    };
    label = variant->label;
  } else {
    throw UsageError("axis 'kernel': unknown kernel '" + kernel + "'");
  }
  const auto got = gemm_bench::time_and_run<float>(c, op, kernel, label, launch);
  if (got)
    gemm_bench::verify_product<float>(c, label, shape, op.ha, op.hb, op.hc0, *got, reference ? &*reference : nullptr,
                                      op.alpha, op.beta);
}

void summarize_fig5(Summary& s) {
  using Key = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // m, n, k
  struct Times {
    double cublas = 0, volkov = 0, splitk_auto = 0, splitk_best = 0;
    int auto_splits = 0, best_splits = 0;     // best over explicit values
    double explicit_best = 0;
    std::string best_kernel;                   // fastest split-k kernel and its splits
    int best_kernel_splits = 0;
    std::string auto_kernel;                   // the split-k kernel whose automatic splits ran fastest
  };
  std::map<Key, Times> shapes;
  for (const auto& r : s.results()) {
    if (r.status != Status::passed || !r.data.contains("m")) continue;
    const Key key{r.data["m"].get<std::int64_t>(), r.data["n"].get<std::int64_t>(), r.data["k"].get<std::int64_t>()};
    const std::string kernel = r.axes.value("kernel", std::string());
    const double t = r.metric_value(kernel + "/time");
    if (t <= 0) continue;
    Times& times = shapes[key];
    if (kernel == "cublas") times.cublas = t;
    if (kernel == "volkov") times.volkov = t;
    if (!is_splitk(kernel)) continue;
    const int splits = r.data.value("splits", 0);
    if (times.splitk_best == 0 || t < times.splitk_best) {
      times.splitk_best = t;
      times.best_kernel = kernel;
      times.best_kernel_splits = splits;
    }
    // "auto" over every split-k kernel (stored table for splitk, the fill-every-SM heuristic for
    // the SIMT ones): the fastest automatic choice is what a caller without a sweep gets.
    if (r.axes.value("splits", std::string()) == "auto") {
      if (times.splitk_auto == 0 || t < times.splitk_auto) {
        times.splitk_auto = t;
        times.auto_splits = splits;
        times.auto_kernel = kernel;
      }
      continue;
    }
    if (kernel != "splitk") continue;
    if (times.explicit_best == 0 || t < times.explicit_best) {
      times.explicit_best = t;
      times.best_splits = splits;
    }
  }
  // The search result: the fastest explicit splits per shape, as the stored table's JSON.
  std::vector<SplitkEntry> entries;
  for (const auto& [key, t] : shapes)
    if (t.best_splits > 0) entries.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), t.best_splits});
  if (!entries.empty()) {
    Result d;
    d.experiment = s.experiment().key;
    d.artifact = "volkov08.fig5 splitk table";
    d.device = s.session().device();
    d.status = Status::passed;
    const std::string device = s.session().has_gpu() ? s.session().gpu().name : std::string();
    d.data["tuning_table"] = splitk_table_json(entries, "fastest split-k slice count per (m, n, k) from volkov08.fig5's sweep",
                                        device);
    d.metrics.push_back(derived_metric("shapes", "shapes searched", "", static_cast<double>(entries.size()), true, false));
    d.reason = "store as configs/tuning/sgemm_splitk.json (scripts/tuning_table.py REPORT volkov08.fig5 > FILE): " +
               d.data["tuning_table"].dump();
    s.add(std::move(d));
  }
  // The small-C target: split-k over cuBLAS for C ≤ 256 × 256 at k ≥ 16384.
  for (const auto& [key, t] : shapes) {
    const auto [m, n, k] = key;
    if (k < 16384 || m * n > 256 * 256 || t.cublas <= 0 || t.splitk_best <= 0) continue;
    Result d;
    d.experiment = s.experiment().key;
    d.artifact = "volkov08.fig5 small C";
    d.device = s.session().device();
    d.axes = {{"m", m}, {"n", n}, {"k", k}};
    d.status = Status::passed;
    d.metrics.push_back(derived_metric("splitk_best/speedup", "best split-k / cuBLAS (target 1.5×)", "×",
                                       t.cublas / t.splitk_best));
    d.metrics.push_back(derived_metric("splitk_best/splits", "slices of the fastest split-k (" + t.best_kernel + ")",
                                       "", static_cast<double>(t.best_kernel_splits), true, false));
    if (t.splitk_auto > 0)
      d.metrics.push_back(derived_metric("splitk_auto/speedup",
                                         "fastest split-k with automatic splits (" + t.auto_kernel + ", " +
                                             std::to_string(t.auto_splits) + " slices) / cuBLAS",
                                         "×", t.cublas / t.splitk_auto));
    if (t.volkov > 0)
      d.metrics.push_back(derived_metric("volkov/speedup", "volkov08 kernel / cuBLAS", "×", t.cublas / t.volkov, true,
                                         false));
    d.data = {{"cublas_s", t.cublas}, {"splitk_best_s", t.splitk_best}, {"splitk_auto_s", t.splitk_auto},
              {"auto_splits", t.auto_splits}, {"best_splits", t.best_splits}, {"target_speedup", kTargetSpeedup},
              {"best_kernel", t.best_kernel}, {"best_kernel_splits", t.best_kernel_splits},
              {"auto_kernel", t.auto_kernel}};
    if (t.cublas / t.splitk_best < kTargetSpeedup)
      d.reason = "below the 1.5× target: cuBLAS " + std::to_string(t.cublas * 1e6) + " µs, best split-k " +
                 std::to_string(t.splitk_best * 1e6) + " µs (" + t.best_kernel + ", " + std::to_string(t.best_kernel_splits) +
                 " slices)";
    s.add(std::move(d));
  }
}

}  // namespace

void register_fig5(Registry& registry) {
  std::vector<std::string> kernels = {"cublas"};
  for (const auto& name : sgemm_variant_names(false)) kernels.push_back(name);
  kernels.push_back("splitk");
  kernels.push_back("splitk_simt64");
  kernels.push_back("splitk_simt128");
  Experiment e;
  e.key = "volkov08.fig5";
  e.artifact = "volkov08.fig5";
  e.title = "SGEMM runtime vs number of 64×16 blocks of C at k = 1024: cuBLAS, the paper's kernel, split-k (also on "
            "the SIMT main loop); small C at large k (volkov08 Fig. 5, §4.3)";
  e.axes = {
      {.name = "blocks", .kind = AxisKind::integer,
       .help = "64×16 blocks of C (C as square as the count allows: 4q² blocks = 64q × 64q)",
       .defaults = "1,2,3,4,6,8,12,16,24,32,48,64,96,128,192,256,384,512,768,1024,1536,2048,3072,4096",
       .quick = "4,16,64,256,1024,4096", .full = "1:64:+1,72:512:+8,544:4096:+32", .min = 1, .max = 65536},
      {.name = "k", .kind = AxisKind::integer,
       .help = "shared dimension; values other than 1024 run only for blocks <= 64 (C up to 256 × 256)",
       .defaults = "1024,16384,65536", .quick = "1024,16384", .min = 1, .max = std::int64_t{1} << 22},
      {.name = "kernel", .kind = AxisKind::text, .help = "cuBLAS sgemm (no TF32), the SGEMMs of this suite, split-k",
       .defaults = join_axis_values(kernels), .choices = kernels},
      {.name = "splits", .kind = AxisKind::text,
       .help = "split-k slices: auto (splitk: stored table, else heuristic; splitk_simt*: fill every SM, slices >= 64) "
               "or a count (<= ceil(k/16); steps of about √2)",
       .defaults = "auto,1,2,4,8,16,32,64,128,256,512", .quick = "auto,8,64,256,512",
       .choices = {"auto", "1", "2", "3", "4", "6", "8", "12", "16", "24", "32", "48", "64", "96", "128", "192", "256",
                   "384", "512", "768", "1024", "1536", "2048", "3072", "4096"}},
  };
  e.needs.gpus = 1;
  e.validate = [](const AxisPoint& p) { (void)parse_splits(p.text("splits")); };
  e.applies = [](const AxisPoint& p) {
    if (p.integer("k") != 1024 && p.integer("blocks") > kSmallCBlocks) return false;
    const std::string& splits = p.text("splits");
    if (splits == "auto") return true;
    return is_splitk(p.text("kernel")) && parse_splits(splits) <= (p.integer("k") + 15) / 16;
  };
  e.run = run_fig5;
  e.summarize = summarize_fig5;
  e.plots = {{.artifact = "volkov08.fig5", .x = "blocks", .y = "*/time", .series = {"kernel", "splits"},
              .logx = true, .logy = true, .title = "SGEMM time vs blocks of C (volkov08 Fig. 5)"}};
  registry.add(std::move(e));
}

}  // namespace gpufact::factorizations
