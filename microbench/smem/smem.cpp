// volkov08.smem (volkov08 §3.5). Per stride s between consecutive lanes' 4-byte words:
//   smem_fma: FP32 FMA throughput when b comes from shared memory for every FMA (32 warps per SM,
//             4 chains per thread), % of peak at the measured clock. The paper got 66% on G80;
//             today's FFMA takes no shared operand, so each FMA needs an LDS, and the SM's one
//             shared-memory wavefront per cycle against four FFMA warp-instructions bounds it
//             near 25%, divided by the conflict degree.
//   bank:     cycles per warp-wide shared load on one SM (32 warps of independent loads, clock64),
//             which grows with the conflict degree (2-way: 2×, 4-way: 4×, ...); beyond the paper,
//             loads of 8 and 16 bytes (axis `width`; the stride then counts loads) and stride 0,
//             every lane reading one address: the bytes the pipe hands the lanes per clock.
// The summary infers the bank count and width from the 4-byte bank curve
// (microbench/smem/bank_model).
#include "microbench/smem/smem.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/buffer.hpp"
#include "core/errors.hpp"
#include "kernels/compute/fma_chains.cuh"
#include "kernels/memory/shared_banks.cuh"
#include "microbench/peak/fma_reference.hpp"
#include "microbench/sampled_metric.hpp"
#include "microbench/smem/bank_model.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact::microbench {
namespace {

constexpr int kFmaWarps = 32;
constexpr int kFmaIlp = 4;
constexpr int kFmaIterations = 64;  // 32768 FMAs per thread
constexpr float kC = 0x1.0p-6f;
constexpr int kBankWarps = 32;
constexpr int kBankIterations = 8;  // 2048 loads per thread: ~65k cycles conflict-free, ~2M at 32-way

double misplaced_sms(const std::vector<unsigned>& smid, int sm_count, int blocks_per_sm) {
  std::map<unsigned, int> per_sm;
  for (unsigned s : smid) ++per_sm[s];
  int bad = std::abs(static_cast<int>(per_sm.size()) - sm_count);
  for (const auto& [sm, n] : per_sm) bad += n != blocks_per_sm;
  return bad;
}

}  // namespace

bool run_shared_operand_fma(Case& c, int stride, std::uint32_t table_seed, const std::string& label,
                            const std::string& check, std::vector<unsigned>* block_sms) {
  const kernels::ResidentGrid grid = kernels::plan_fma_grid(kernels::FmaOperand::shared, kFmaIlp, kFmaWarps);
  const auto threads = static_cast<std::size_t>(grid.threads());
  cudaStream_t s = c.stream();
  // b in [1 − 16·2⁻²², 1 − 2⁻²²]: the chains grow slowly and every FMA shows in the result.
  std::mt19937 gen(table_seed);
  std::vector<float> table(kernels::kFmaSharedTableWords);
  for (auto& b : table) b = 1.0f - static_cast<float>(1 + gen() % 16) * 0x1.0p-22f;
  DeviceBuffer<float> dtable(table.size()), out(threads);
  DeviceBuffer<unsigned> smid(static_cast<std::size_t>(grid.blocks()));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dtable.data(), table.data(), dtable.bytes(), cudaMemcpyHostToDevice, s));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(out.data(), 0xff, out.bytes(), s));

  const long fmas = static_cast<long>(kFmaIterations) * kernels::fma_steps_per_iteration(kFmaIlp) * kFmaIlp;
  MeasureSpec m;
  m.max_min_time_s = microbench_max_sample_s;
  m.name = "smem_fma";
  m.label = label;
  m.flops = 2.0 * static_cast<double>(threads) * static_cast<double>(fmas);
  m.body = [&](std::size_t) {
    kernels::launch_fma_chains_shared(grid, kFmaIlp, kFmaIterations, dtable.data(), stride, kC, out.data(), smid.data(),
                                      s);
  };
  if (!c.measure(m)) return false;

  std::vector<float> got(threads);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(got.data(), out.data(), out.bytes(), cudaMemcpyDeviceToHost, s));
  if (block_sms) {
    block_sms->resize(static_cast<std::size_t>(grid.blocks()));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(block_sms->data(), smid.data(), smid.bytes(), cudaMemcpyDeviceToHost, s));
  }
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  std::vector<float> expected(32);  // a thread's result depends only on its lane
  for (unsigned lane = 0; lane < 32; ++lane)
    expected[lane] = fma_chains_shared_expected(lane, kFmaIlp, kFmaIterations, table, stride, kC);
  double wrong = 0;
  for (std::size_t t = 0; t < threads; ++t) wrong += std::memcmp(&got[t], &expected[t & 31], sizeof(float)) != 0;
  c.verify(check, wrong, 0);
  return true;
}

namespace {

void measure_fma_with_shared_operand(Case& c, int stride) {
  std::vector<unsigned> sms;
  if (!run_shared_operand_fma(c, stride, static_cast<std::uint32_t>(c.seed()), "FP32 FMA, b from shared memory",
                              "threads whose shared-operand FMA chains differ from the host replay (exact)", &sms))
    return;
  const kernels::ResidentGrid grid = kernels::plan_fma_grid(kernels::FmaOperand::shared, kFmaIlp, kFmaWarps);
  c.verify("SMs without exactly one block of " + std::to_string(kFmaWarps) + " warps",
           misplaced_sms(sms, grid.sm_count, grid.blocks_per_sm), 0);

  const Metric* rate = c.result().find_metric("smem_fma/flop_rate");
  const Metric* clock = c.result().find_metric("smem_fma/sm_clock");
  const double peak = clock ? fp32_peak_gflops(c.session().gpu(), clock->value) : 0.0;
  if (rate && peak > 0) {
    Metric pct{.tag = "smem_fma/percent_of_peak",
               .name = "FMA rate with b in shared memory / FP32 peak",
               .unit = "%",
               .value = 100.0 * rate->value / peak,
               .higher_is_better = true,
               .headline = true,
               .role = MetricRole::derived};
    if (stride == 1) pct.published = Published{66.0, "volkov08 §3.5 (all four GPUs, conflict-free)"};
    c.add_metric(pct);
  }
}

void measure_bank_conflicts(Case& c, int stride, int width) {
  cudaStream_t s = c.stream();
  std::mt19937 gen(static_cast<std::uint32_t>(c.seed() >> 32));
  std::vector<std::uint32_t> table(kernels::kSharedBankTableWords);
  for (auto& w : table) w = static_cast<std::uint32_t>(gen());
  const std::size_t threads = kBankWarps * 32;
  DeviceBuffer<std::uint32_t> dtable(table.size()), sums(threads);
  DeviceBuffer<long long> cycles(1);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dtable.data(), table.data(), dtable.bytes(), cudaMemcpyHostToDevice, s));
  std::vector<std::uint32_t> expected(32, 0);
  for (int lane = 0; lane < 32; ++lane)
    expected[static_cast<std::size_t>(lane)] = kernels::shared_bank_iteration_sum(table.data(), lane, stride, width) *
                                               static_cast<std::uint32_t>(kBankIterations);
  const double accesses_per_warp = static_cast<double>(kBankIterations) * kernels::kSharedBankReadsPerIteration;
  const int launches = std::max(3, c.session().options().repetitions);
  std::vector<double> per_access;
  std::vector<std::uint32_t> got(threads);
  double wrong = 0;
  for (int i = -1; i < launches; ++i) {  // launch -1 loads the module, not recorded
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(sums.data(), 0, sums.bytes(), s));
    kernels::launch_shared_bank_reads(dtable.data(), stride, width, kBankWarps, kBankIterations, sums.data(),
                                      cycles.data(), s);
    long long n = 0;
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&n, cycles.data(), sizeof n, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(got.data(), sums.data(), sums.bytes(), cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    for (std::size_t t = 0; t < threads; ++t) wrong += got[t] != expected[t & 31];
    if (i >= 0) per_access.push_back(static_cast<double>(n) / (accesses_per_warp * kBankWarps));
  }
  c.verify("thread sums of shared loads that differ from the host's", wrong, 0);
  c.add_metric(with_samples({.tag = "bank/cycles_per_access",
                             .name = "cycles per warp-wide shared load (SM throughput)",
                             .unit = "cycles",
                             .headline = true},
                            per_access));
  if (const Metric* m = c.result().find_metric("bank/cycles_per_access"); m && m->value > 0)
    c.add_metric(derived_metric("bank/bytes_per_cycle", "bytes the warp's lanes receive per clock (32 × width / cycles)",
                                "B", 32.0 * width / m->value));
  if (width == 4 && stride > 0)
    c.add_metric({.tag = "bank/degree_32x4",
                  .name = "conflict degree on 32 banks × 4 B",
                  .unit = "",
                  .value = static_cast<double>(bank_conflict_degree(stride, 32, 4)),
                  .role = MetricRole::derived});
}

void run_smem(Case& c) {
  const int stride = static_cast<int>(c.integer("stride"));
  const int width = static_cast<int>(c.integer("width"));
  // The paper's FMA with a shared operand: 4-byte operands, one per lane.
  if (width == 4 && stride > 0) measure_fma_with_shared_operand(c, stride);
  measure_bank_conflicts(c, stride, width);
}

void summarize(Summary& s) {
  std::vector<BankCurvePoint> curve;
  for (const auto& r : s.results()) {
    const Metric* m = r.find_metric("bank/cycles_per_access");
    const int stride = r.axes.value("stride", 0);
    if (r.status == Status::passed && m && stride > 0 && r.axes.value("width", 4) == 4) curve.push_back({stride, m->value});
  }
  if (curve.empty()) return;
  Result d;
  d.experiment = "volkov08.smem";
  d.artifact = "volkov08.smem banks";
  d.device = s.session().device();
  try {
    const BankInference inf = infer_bank_layout(curve);
    d.status = Status::passed;
    d.metrics.push_back(derived_metric("banks", "shared-memory banks (inferred)", "", inf.layout.banks, false, true));
    d.metrics.push_back(derived_metric("bank_width_bytes", "bank width (inferred)", "B", inf.layout.width_bytes, false, true));
    d.metrics.push_back(derived_metric("cycles_per_degree", "cycles per access per degree of conflict", "cycles",
                                inf.cycles_per_degree, false, false));
    d.metrics.push_back(
        derived_metric("base_cycles", "cycles per access at degree 0 (intercept)", "cycles", inf.base_cycles, false, false));
    d.metrics.push_back(derived_metric("max_rel_residual", "largest relative misfit of the linear model", "%",
                                100 * inf.max_abs_rel_residual, false, false));
    nlohmann::json pts = nlohmann::json::array();
    for (std::size_t i = 0; i < curve.size(); ++i)
      pts.push_back({{"stride", curve[i].stride_words},
                     {"cycles_per_access", curve[i].cycles},
                     {"degree", inf.degrees[i]},
                     {"rel_residual", inf.rel_residuals[i]}});
    d.data["curve"] = pts;
    nlohmann::json ties = nlohmann::json::array();
    for (const auto& l : inf.equally_good) ties.push_back({{"banks", l.banks}, {"width_bytes", l.width_bytes}});
    d.data["equally_good"] = ties;
    std::vector<std::string> notes;
    if (!inf.equally_good.empty())
      notes.push_back("the strides measured cannot tell " + std::to_string(inf.equally_good.size()) +
                      " other layout(s) apart (add odd strides such as 3)");
    if (inf.max_abs_rel_residual > 0.15)
      notes.push_back("cycles are not linear in the conflict degree (largest misfit " +
                      std::to_string(static_cast<int>(100 * inf.max_abs_rel_residual)) + "%)");
    for (const auto& n : notes) d.reason += (d.reason.empty() ? "" : "; ") + n;
  } catch (const std::invalid_argument& e) {
    d.status = Status::skipped;
    d.reason = std::string("no bank layout inferred: ") + e.what();
  }
  s.add(std::move(d));
}

}  // namespace

void register_smem(Registry& registry) {
  Experiment e;
  e.key = "volkov08.smem";
  e.artifact = "volkov08.smem";
  e.title = "FP32 FMA with a shared-memory operand and shared-memory bank conflicts vs stride and load width; bank "
            "layout inferred";
  e.axes = {{.name = "stride",
             .kind = AxisKind::integer,
             .help = "loads between consecutive lanes' addresses (words at width 4); on 32 banks × 4 B the conflict "
                     "degree of 4-byte loads is gcd(stride, 32): 1, 2, 4, ... 32 for powers of two, 1 for odd strides; "
                     "0: every lane reads the same address (a broadcast; bank cycles only)",
             .defaults = "1,2,3,4,8,16,32,64",
             .full = "0:8:+1,16,17,31,32,33,64",
             .min = 0,
             .max = 64},
            {.name = "width",
             .kind = AxisKind::integer,
             .help = "bytes per lane per shared load: 4, 8 or 16 (LDS.32, .64, .128); the FMA test and the bank "
                     "inference take 4",
             .defaults = "4",
             .full = "4,8,16",
             .min = 4,
             .max = 16}};
  e.validate = [](const AxisPoint& p) {
    const std::int64_t w = p.integer("width");
    if (w != 4 && w != 8 && w != 16)
      throw UsageError("axis 'width': " + std::to_string(w) + " bytes is not a shared load width (4, 8 or 16)");
  };
  e.needs.gpus = 1;
  e.run = run_smem;
  e.summarize = summarize;
  e.plots = {
      {.artifact = "volkov08.smem",
       .x = "stride",
       .y = "bank/cycles_per_access",
       .series = {},
       .logx = true,
       .logy = true,
       .title = "Shared-memory cycles per warp access vs stride (= conflict degree for powers of two; volkov08 §3.5)"},
      {.artifact = "volkov08.smem",
       .x = "stride",
       .y = "smem_fma/percent_of_peak",
       .series = {},
       .logx = true,
       .logy = true,
       .title = "FP32 FMA with b in shared memory, % of peak (volkov08 §3.5)"}};
  registry.add(std::move(e));
}

}  // namespace gpufact::microbench
