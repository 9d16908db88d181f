// Host tests for volkov08 §4's GEMM module: the blocked replays of the paper's kernel and of
// split-k against the double-precision reference (odd sizes, k not a multiple of 4, NN and NT,
// β = 0 over NaN, lda > m), the sampled and cross checks catching a wrong entry, the split-k
// table's parsing and lookup, and the SASS model.
#include "core/linalg/gemm_check.hpp"
#include "core/linalg/matrix_view.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/gemm/gemm_bench.hpp"
#include "factorizations/gemm/gemm_variants.hpp"
#include "factorizations/gemm/sass_model.hpp"
#include "factorizations/gemm/sgemm_blocked_host.hpp"
#include "factorizations/gemm/splitk_table.hpp"
#include "kernels/gemm/sgemm_splitk.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>

namespace gpufact::factorizations {
namespace {

struct Problem {
  HostMatrix<float> a, b, c0, c;
};

// A m × k with lda = m + 3, B k × n or n × k with ldb + 2, C m × n with ldc = m + 1.
Problem make(Op tb, std::int64_t m, std::int64_t n, std::int64_t k, std::uint64_t seed, bool nan_c) {
  Problem p{HostMatrix<float>(m, k, m + 3), tb == Op::N ? HostMatrix<float>(k, n, k + 2) : HostMatrix<float>(n, k, n + 2),
            HostMatrix<float>(m, n, m + 1), HostMatrix<float>(m, n, m + 1)};
  fill_uniform(p.a.view(), seed);
  fill_uniform(p.b.view(), seed + 1);
  fill_uniform(p.c0.view(), seed + 2);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) p.c(i, j) = nan_c ? std::numeric_limits<float>::quiet_NaN() : p.c0(i, j);
  return p;
}

using Sizes = std::tuple<std::int64_t, std::int64_t, std::int64_t>;
const Sizes kSizes[] = {{1, 1, 1}, {17, 17, 17}, {100, 100, 100}, {65, 33, 7}, {17, 100, 1}, {100, 17, 99},
                        {64, 16, 16}, {128, 48, 0}};

TEST(GemmHost, VolkovBlockedReplayMatchesTheDoubleReference) {
  for (Op tb : {Op::N, Op::T})
    for (const auto& [m, n, k] : kSizes)
      for (float beta : {0.0f, 0.75f}) {
        SCOPED_TRACE("tb " + std::string(tb == Op::N ? "N" : "T") + " m " + std::to_string(m) + " n " +
                     std::to_string(n) + " k " + std::to_string(k) + " beta " + std::to_string(beta));
        Problem p = make(tb, m, n, k, 11 + static_cast<std::uint64_t>(m * n + k), beta == 0.0f);
        const float alpha = -1.25f;
        sgemm_volkov_host(tb, m, n, k, alpha, p.a.data(), p.a.ld(), p.b.data(), p.b.ld(), beta, p.c.data(), p.c.ld());
        const double err = gemm_error<float>('N', tb == Op::N ? 'N' : 'T', p.a.view(), p.b.view(), p.c0.view(),
                                             p.c.view(), alpha, beta);
        EXPECT_LE(err, static_cast<double>(k) + 2);
      }
}

TEST(GemmHost, SplitkReplayMatchesTheDoubleReferenceForEverySplitCount) {
  for (Op tb : {Op::N, Op::T})
    for (const auto& [m, n, k] : kSizes)
      for (int splits : {1, 2, 3, 7, 64}) {
        SCOPED_TRACE("splits " + std::to_string(splits) + " m " + std::to_string(m) + " k " + std::to_string(k));
        Problem p = make(tb, m, n, k, 99 + static_cast<std::uint64_t>(splits), true);
        sgemm_splitk_host(tb, m, n, k, splits, 0.5f, p.a.data(), p.a.ld(), p.b.data(), p.b.ld(), 0.0f, p.c.data(),
                          p.c.ld());
        EXPECT_LE(gemm_error<float>('N', tb == Op::N ? 'N' : 'T', p.a.view(), p.b.view(), p.c0.view(), p.c.view(), 0.5f,
                                    0.0f),
                  static_cast<double>(k) + 2);
      }
}

TEST(GemmHost, SplitkSlicesCoverKInMultiplesOfTheTileDepth) {
  EXPECT_EQ(kernels::sgemm_splitk_slice(1000, 1), 1008);
  EXPECT_EQ(kernels::sgemm_splitk_slice(1024, 4), 256);
  EXPECT_EQ(kernels::sgemm_splitk_slice(17, 2), 16);  // 2 slices: 16 + 1
  EXPECT_EQ(kernels::sgemm_splitk_slice(0, 3), 16);
  for (std::int64_t k : {1, 15, 16, 17, 1000, 65536})
    for (int s : {1, 2, 5, 64}) EXPECT_GE(kernels::sgemm_splitk_slice(k, s) * s, k);
  EXPECT_THROW(kernels::sgemm_splitk_slice(10, 0), std::invalid_argument);
  EXPECT_EQ(kernels::sgemm_splitk_workspace_floats(64, 32, 8), 64u * 32u * 8u);
}

TEST(GemmHost, SplitkSimtHeuristicFillsTheGpuWithSlicesOfAtLeast64) {
  using factorizations::splitk_simt_heuristic;
  // C 64 × 64 on 64 × 64 tiles, 4 CTAs on 132 SMs: 528 wanted, k / 64 = 256 allowed.
  EXPECT_EQ(splitk_simt_heuristic(64, 64, 16384, 64, 64, 4, 132), 256);
  // C 256 × 256: 16 tiles → ceil(528 / 16) = 33.
  EXPECT_EQ(splitk_simt_heuristic(256, 256, 16384, 64, 64, 4, 132), 33);
  // 128 × 128 tiles, 2 CTAs/SM: 4 tiles → 66.
  EXPECT_EQ(splitk_simt_heuristic(256, 256, 16384, 128, 128, 2, 132), 66);
  // Large C needs no split; short k allows none.
  EXPECT_EQ(splitk_simt_heuristic(8192, 8192, 16384, 64, 64, 4, 132), 1);
  EXPECT_EQ(splitk_simt_heuristic(64, 64, 63, 64, 64, 4, 132), 1);
  EXPECT_EQ(splitk_simt_heuristic(64, 64, 1 << 22, 64, 64, 4, 132, 64), 528);
}

TEST(GemmHost, BadArgumentsAreRejected) {
  float x = 0;
  EXPECT_THROW(sgemm_volkov_host(Op::N, -1, 1, 1, 1.0f, &x, 1, &x, 1, 0.0f, &x, 1), std::invalid_argument);
  EXPECT_THROW(sgemm_volkov_host(Op::N, 4, 1, 1, 1.0f, &x, 3, &x, 1, 0.0f, &x, 4), std::invalid_argument);  // lda < m
  EXPECT_THROW(sgemm_splitk_host(Op::T, 1, 4, 1, 1, 1.0f, &x, 1, &x, 1, 0.0f, &x, 1), std::invalid_argument);  // ldb < n
}

TEST(GemmHost, SampledAndCrossChecksCatchOneWrongEntry) {
  const std::int64_t m = 40, n = 30, k = 50;
  Problem p = make(Op::N, m, n, k, 5, true);
  sgemm_volkov_host(Op::N, m, n, k, 1.0f, p.a.data(), p.a.ld(), p.b.data(), p.b.ld(), 0.0f, p.c.data(), p.c.ld());
  HostMatrix<float> again(m, n, m + 1);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) again(i, j) = p.c(i, j);
  EXPECT_LE(sampled_gemm_error<float>(Op::N, Op::N, p.a.view(), p.b.view(), p.c0.view(), p.c.view(), 1.0f, 0.0f,
                                      5000, 1),
            k + 2.0);
  EXPECT_EQ(gemm_difference<float>(Op::N, Op::N, p.a.view(), p.b.view(), p.c0.view(), p.c.view(), again.view(), 1.0f,
                                   0.0f),
            0.0);
  p.c(7, 9) += 0.01f;
  // Enough samples to hit the entry with near certainty (1 − (1 − 1/1200)^20000).
  EXPECT_GT(sampled_gemm_error<float>(Op::N, Op::N, p.a.view(), p.b.view(), p.c0.view(), p.c.view(), 1.0f, 0.0f,
                                      20000, 2),
            k + 2.0);
  EXPECT_GT(gemm_difference<float>(Op::N, Op::N, p.a.view(), p.b.view(), p.c0.view(), p.c.view(), again.view(), 1.0f,
                                   0.0f),
            gemm_difference_tolerance(k));
  p.c(0, 0) = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(nonfinite_entries<float>(p.c.view()), 1.0);
  EXPECT_TRUE(std::isinf(gemm_difference<float>(Op::N, Op::N, p.a.view(), p.b.view(), p.c0.view(), p.c.view(),
                                                 again.view(), 1.0f, 0.0f)));
  EXPECT_EQ(gemm_difference_tolerance(4), 12.0);
  EXPECT_EQ(gemm_difference_tolerance(4096), 64.0);
}

TEST(GemmHost, SplitkTableParsesAndFindsTheNearestShape) {
  const SplitkTable t = parse_splitk_table(
      R"({"description": "x", "device": "NVIDIA H200", "entries": [
            {"m": 64, "n": 64, "k": 16384, "splits": 64},
            {"m": 256, "n": 256, "k": 65536, "splits": 32},
            {"m": 2048, "n": 2048, "k": 1024, "splits": 1}]})",
      "test.json");
  ASSERT_EQ(t.entries.size(), 3u);
  EXPECT_EQ(t.device, "NVIDIA H200");
  EXPECT_EQ(choose_splits(&t, 64, 64, 16384, 132).splits, 64);
  EXPECT_EQ(choose_splits(&t, 70, 60, 20000, 132).splits, 64);
  EXPECT_EQ(choose_splits(&t, 256, 256, 60000, 132).splits, 32);
  EXPECT_EQ(choose_splits(&t, 2000, 2000, 1000, 132).splits, 1);
  EXPECT_EQ(choose_splits(&t, 64, 64, 100, 132).splits, 7);  // capped at ceil(k / 16)
  EXPECT_NE(choose_splits(&t, 64, 64, 16384, 132).source.find("table"), std::string::npos);
  EXPECT_EQ(choose_splits(nullptr, 64, 64, 16384, 132).source, "heuristic");
  // Round trip through the summary's JSON.
  const auto again = parse_splitk_table(splitk_table_json(t.entries, "d", "g").dump(), "again");
  ASSERT_EQ(again.entries.size(), 3u);
  EXPECT_EQ(again.entries[1].splits, 32);
}

TEST(GemmHost, SplitkTableRejectsMalformedFiles) {
  EXPECT_THROW(parse_splitk_table("not json", "f"), std::runtime_error);
  EXPECT_THROW(parse_splitk_table(R"({"rows": []})", "f"), std::runtime_error);
  EXPECT_THROW(parse_splitk_table(R"({"entries": [{"m": 1, "n": 1, "k": 1}]})", "f"), std::runtime_error);
  EXPECT_THROW(parse_splitk_table(R"({"entries": [{"m": 1, "n": 1, "k": 1, "splits": 0}]})", "f"), std::runtime_error);
  EXPECT_THROW(parse_splitk_table(R"({"entries": [{"m": -4, "n": 1, "k": 1, "splits": 2}]})", "f"), std::runtime_error);
}

TEST(GemmHost, SplitkHeuristicFillsTheGpuWithoutThinSlices) {
  EXPECT_EQ(splitk_heuristic(64, 64, 65536, 132), 256);   // 1 tile wants 4 × 132 blocks; 256 of k per slice
  EXPECT_EQ(splitk_heuristic(64, 64, 1024, 132), 4);      // at least 256 of k per slice
  EXPECT_EQ(splitk_heuristic(4096, 4096, 4096, 132), 1);  // 4096 tiles fill the GPU
  EXPECT_EQ(splitk_heuristic(1, 1, 1, 132), 1);
}

TEST(GemmHost, SassModelChargesPairsAtTheSharedOperandRate) {
  const SassLoops s = parse_sass_loops(
      R"({"available": true, "source": "t", "loops": {"nn/paper": {"total": 600, "ffma": 256, "ffma_shared_operand": 0,
          "lds": 256, "other": 88}}})");
  ASSERT_TRUE(s.available);
  const LoopMix& mix = s.loops.at("nn/paper");
  // 256 pairs at 10 GFLOP/s (5 FMA/ns), 88 others at 100 instructions per ns.
  const ThroughputInputs in{10.0, 60.0, 100.0};
  const double ns = 256 / 5.0 + 88 / 100.0;
  EXPECT_NEAR(estimate_gflops(mix, in), 512 / ns, 1e-9);
  // FFMA beyond the LDS count run at the FMA peak.
  const LoopMix lone{80, 64, 0, 16, 0};
  EXPECT_NEAR(estimate_gflops(lone, in), 128 / (16 / 5.0 + 48 / 30.0), 1e-9);
  EXPECT_EQ(estimate_gflops(mix, ThroughputInputs{}), 0.0);
  const SassLoops none = parse_sass_loops(R"({"available": false, "reason": "no cuobjdump"})");
  EXPECT_FALSE(none.available);
  EXPECT_EQ(none.reason, "no cuobjdump");
  EXPECT_THROW(parse_sass_loops("{}"), std::runtime_error);
  // The embedded counts parse, available or not.
  EXPECT_NO_THROW(sgemm_volkov_sass_loops());
}

TEST(GemmHost, BlockCountsBecomeNearlySquareShapes) {
  EXPECT_EQ(gemm_bench::block_rows_for(1), 1);
  EXPECT_EQ(gemm_bench::block_rows_for(4), 1);    // 64 × 64
  EXPECT_EQ(gemm_bench::block_rows_for(16), 2);   // 128 × 128
  EXPECT_EQ(gemm_bench::block_rows_for(64), 4);   // 256 × 256
  EXPECT_EQ(gemm_bench::block_rows_for(4096), 32);
  EXPECT_EQ(gemm_bench::block_rows_for(7), 1);
  EXPECT_EQ(gemm_bench::block_rows_for(96), 4);
  for (std::int64_t b = 1; b < 5000; b += 37) EXPECT_EQ(b % gemm_bench::block_rows_for(b), 0);
}

TEST(GemmHost, VariantTableNamesTheKernelAxisValues) {
  ASSERT_NE(find_sgemm_variant("volkov"), nullptr);
  EXPECT_TRUE(find_sgemm_variant("volkov_no_fetch")->wrong_by_design);
  EXPECT_EQ(find_sgemm_variant("cublas"), nullptr);
  const auto all = sgemm_variant_names(true), plain = sgemm_variant_names(false);
  EXPECT_GT(all.size(), plain.size());
  for (const auto& v : sgemm_variants()) EXPECT_NE(v.launch, nullptr) << v.name;
}

}  // namespace
}  // namespace gpufact::factorizations

// The summary hooks of volkov08.table2 and volkov08.fig5 on fabricated results (no GPU).
#include "apps/gpufact/catalog.hpp"
#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"

namespace gpufact::factorizations {
namespace {

std::vector<Result> summarize(const std::string& key, std::vector<Result> results) {
  Session session(SystemInfo{}, 0, {}, nullptr);
  const Experiment* e = experiment_catalog().find(key);
  EXPECT_NE(e, nullptr);
  Summary s(session, *e, std::move(results));
  e->summarize(s);
  return s.derived();
}

Result gemm_result(const std::string& key, nlohmann::json axes, const std::string& kernel, double time_s) {
  Result r;
  r.experiment = key;
  r.artifact = key;
  r.status = Status::passed;
  r.axes = std::move(axes);
  r.metrics.push_back({.tag = kernel + "/time", .unit = "s", .value = time_s});
  r.metrics.push_back({.tag = kernel + "/tflop_rate", .unit = "TFLOP/s", .value = 1e-3 / time_s});
  r.metrics.push_back({.tag = kernel + "/percent_of_peak", .unit = "%", .value = 10});
  return r;
}

TEST(GemmSummaries, Fig5StoresTheFastestSplitsAndTheSmallCSpeedup) {
  std::vector<Result> rs;
  const auto add = [&](const std::string& kernel, const std::string& splits, int used, double t) {
    Result r = gemm_result("volkov08.fig5", {{"blocks", 4}, {"k", 16384}, {"kernel", kernel}, {"splits", splits}},
                           kernel, t);
    r.data = {{"m", 64}, {"n", 64}, {"k", 16384}};
    if (used) r.data["splits"] = used;
    rs.push_back(r);
  };
  add("cublas", "auto", 0, 30e-6);
  add("volkov", "auto", 0, 200e-6);
  add("splitk", "auto", 24, 12e-6);
  add("splitk", "1", 1, 150e-6);
  add("splitk", "8", 8, 25e-6);
  add("splitk", "64", 64, 10e-6);
  const auto derived = summarize("volkov08.fig5", rs);
  const Result* table = nullptr;
  const Result* small = nullptr;
  for (const auto& d : derived) {
    if (d.artifact == "volkov08.fig5 splitk table") table = &d;
    if (d.artifact == "volkov08.fig5 small C") small = &d;
  }
  ASSERT_NE(table, nullptr);
  const SplitkTable t = parse_splitk_table(table->data["tuning_table"].dump(), "summary");
  ASSERT_EQ(t.entries.size(), 1u);
  EXPECT_EQ(t.entries[0].splits, 64);
  EXPECT_NE(table->reason.find("\"splits\":64"), std::string::npos);
  ASSERT_NE(small, nullptr);
  EXPECT_NEAR(small->find_metric("splitk_best/speedup")->value, 3.0, 1e-12);
  EXPECT_NEAR(small->find_metric("splitk_auto/speedup")->value, 2.5, 1e-12);
  EXPECT_TRUE(small->reason.empty());
}

TEST(GemmSummaries, Table2HasOneRowPerNWithThePapersColumns) {
  std::vector<Result> rs;
  for (const char* trans : {"NN", "NT"})
    for (const char* kernel : {"cublas", "volkov", "volkov_no_fetch", "volkov_no_prefetch"}) {
      Result r = gemm_result("volkov08.table2", {{"n", 4096}, {"trans", trans}, {"kernel", kernel}}, kernel, 1e-3);
      if (std::string(kernel) == "volkov") {
        r.metrics.push_back({.tag = "smem_fma/tflop_rate", .unit = "TFLOP/s", .value = 2.0});
        r.metrics.push_back({.tag = "estimate/tflop_rate", .unit = "TFLOP/s", .value = 0.9});
      }
      rs.push_back(r);
    }
  const auto derived = summarize("volkov08.table2", rs);
  ASSERT_EQ(derived.size(), 1u);
  const Result& row = derived[0];
  EXPECT_EQ(row.artifact, "volkov08.table2 table");
  for (const char* tag : {"NN/cublas/tflop_rate", "NT/volkov_no_prefetch/tflop_rate", "peak/tflop_rate",
                          "NN/estimate/tflop_rate", "NT/volkov/percent_of_smem_peak"})
    EXPECT_NE(row.find_metric(tag), nullptr) << tag;
  EXPECT_NEAR(row.find_metric("NN/volkov/percent_of_smem_peak")->value, 50.0, 1e-9);
  ASSERT_TRUE(row.find_metric("NN/volkov/percent_of_peak")->published.has_value());
  EXPECT_NEAR(row.find_metric("NN/volkov/percent_of_peak")->published->value, 100.0 * 206 / 345.6, 1e-9);
}

}  // namespace
}  // namespace gpufact::factorizations
