// The summary hooks of volkov08.transfer, volkov08.peak and volkov08.smem on fabricated results
// (no GPU): the transfer fit and link flags, the best % of peak, the inferred bank layout.
#include "apps/gpufact/catalog.hpp"
#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "microbench/smem/bank_model.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpufact {
namespace {

SystemInfo system_with_link(int gen, int width, int max_gen, int max_width) {
  SystemInfo sys;
  sys.doc = {
      {"gpus",
       nlohmann::json::array(
           {{{"index", 0},
             {"nvml",
              {{"available", true},
               {"pcie",
                {{"generation", gen}, {"width", width}, {"max_generation", max_gen}, {"max_width", max_width}}}}}}})}};
  return sys;
}

Result copy_result(const std::string& direction, const std::string& memory, double bytes, double alpha, double beta) {
  Result r;
  r.experiment = "volkov08.transfer";
  r.artifact = "volkov08.transfer";
  r.status = Status::passed;
  r.axes = {{"direction", direction}, {"memory", memory}, {"bytes", bytes}};
  const double counted = direction == "bidir" ? 2 * bytes : bytes;
  const double t = alpha + counted / beta;
  r.metrics.push_back({.tag = "copy/time", .unit = "s", .value = t});
  r.metrics.push_back({.tag = "copy/bandwidth", .unit = "GB/s", .value = counted / t * 1e-9});
  r.data["bytes_counted"] = counted;
  return r;
}

std::vector<Result> summarize(const std::string& key, Session& session, std::vector<Result> results) {
  const Experiment* e = experiment_catalog().find(key);
  EXPECT_NE(e, nullptr);
  Summary s(session, *e, std::move(results));
  e->summarize(s);
  return s.derived();
}

const Result* find(const std::vector<Result>& rs, const std::string& artifact, const nlohmann::json& axes = {}) {
  for (const auto& r : rs)
    if (r.artifact == artifact && (axes.is_null() || r.axes == axes)) return &r;
  return nullptr;
}

const double kSizes[] = {1, 4096, 1 << 20, 64 << 20, 256 << 20};

TEST(TransferSummary, FitsEachDirectionAndMemoryAndFlagsTheLink) {
  Session session(system_with_link(4, 16, 5, 16), 0, {}, nullptr);
  std::vector<Result> rs;
  for (double b : kSizes) {
    rs.push_back(copy_result("h2d", "pinned", b, 2e-6, 55e9));
    rs.push_back(copy_result("d2h", "pinned", b, 2e-6, 40e9));  // 27% slower: asymmetric
    rs.push_back(copy_result("bidir", "pinned", b, 3e-6, 90e9));
  }
  rs.push_back(copy_result("h2d", "pageable", 1024, 8e-6, 20e9));  // one size only: no fit
  Result failed = copy_result("h2d", "pageable", 1 << 20, 8e-6, 20e9);
  failed.status = Status::incorrect;  // not used
  rs.push_back(failed);
  const auto derived = summarize("volkov08.transfer", session, rs);

  const Result* h2d = find(derived, "volkov08.transfer fit", {{"direction", "h2d"}, {"memory", "pinned"}});
  ASSERT_NE(h2d, nullptr);
  EXPECT_EQ(h2d->status, Status::passed);
  EXPECT_NEAR(h2d->find_metric("alpha_us")->value, 2.0, 1e-6);
  EXPECT_NEAR(h2d->find_metric("beta_GBs")->value, 55.0, 1e-6);
  EXPECT_NEAR(h2d->find_metric("n_half_bytes")->value, 2e-6 * 55e9, 1e-3);
  EXPECT_LT(h2d->find_metric("max_rel_residual")->value, 1e-6);
  EXPECT_EQ(h2d->data["points"].size(), 5u);
  ASSERT_TRUE(h2d->find_metric("alpha_us")->published.has_value());
  EXPECT_EQ(h2d->find_metric("alpha_us")->published->value, 15.0);

  const Result* bidir = find(derived, "volkov08.transfer fit", {{"direction", "bidir"}, {"memory", "pinned"}});
  ASSERT_NE(bidir, nullptr);
  EXPECT_NEAR(bidir->find_metric("beta_GBs")->value, 90.0, 1e-6) << "both directions' bytes counted";

  const Result* pageable = find(derived, "volkov08.transfer fit", {{"direction", "h2d"}, {"memory", "pageable"}});
  ASSERT_NE(pageable, nullptr);
  EXPECT_EQ(pageable->status, Status::skipped);

  const Result* link = find(derived, "volkov08.transfer link");
  ASSERT_NE(link, nullptr);
  EXPECT_EQ(link->find_metric("pcie_generation")->value, 4);
  EXPECT_EQ(link->find_metric("pcie_max_generation")->value, 5);
  EXPECT_NEAR(link->find_metric("asymmetry_pinned")->value, 100 * 15.0 / 55.0, 1e-6);
  EXPECT_NE(link->reason.find("below its maximum Gen5 x16"), std::string::npos) << link->reason;
  EXPECT_NE(link->reason.find("H2D and D2H pinned differ"), std::string::npos) << link->reason;
  EXPECT_NE(link->reason.find("below the 50 GB/s target"), std::string::npos) << link->reason;
  EXPECT_EQ(link->data["flags"].size(), 3u);
}

TEST(TransferSummary, SymmetricFullSpeedLinkRaisesNoFlag) {
  Session session(system_with_link(5, 16, 5, 16), 0, {}, nullptr);
  std::vector<Result> rs;
  for (double b : kSizes) {
    rs.push_back(copy_result("h2d", "pinned", b, 2e-6, 56e9));
    rs.push_back(copy_result("d2h", "pinned", b, 2e-6, 54e9));
  }
  rs.back().data["pcie_during_copy"] = {{"generation", 5}, {"width", 16}, {"max_generation", 5}, {"max_width", 16}};
  const auto derived = summarize("volkov08.transfer", session, rs);
  const Result* link = find(derived, "volkov08.transfer link");
  ASSERT_NE(link, nullptr);
  EXPECT_TRUE(link->reason.empty()) << link->reason;
  EXPECT_EQ(link->data["pcie_under_load"]["generation"], 5);
  EXPECT_NEAR(link->find_metric("link_GBs")->value, 63.015, 1e-3);
}

TEST(PeakSummary, BestPercentOfPeakAgainstTheTarget) {
  Session session(SystemInfo{}, 0, {}, nullptr);
  std::vector<Result> rs;
  for (auto [warps, ilp, pct] : {std::tuple{1, 1, 20.0}, std::tuple{32, 4, 96.5}, std::tuple{64, 8, 97.0}}) {
    Result r;
    r.status = Status::passed;
    r.axes = {{"warps", warps}, {"ilp", ilp}};
    r.metrics.push_back({.tag = "fma/percent_of_peak", .unit = "%", .value = pct});
    r.metrics.push_back({.tag = "fma/flop_rate", .unit = "GFLOP/s", .value = pct * 600});
    rs.push_back(r);
  }
  auto derived = summarize("volkov08.peak", session, rs);
  ASSERT_EQ(derived.size(), 1u);
  EXPECT_EQ(derived[0].find_metric("best_percent_of_peak")->value, 97.0);
  EXPECT_EQ(derived[0].data["best"]["warps"], 64);
  EXPECT_TRUE(derived[0].reason.empty());
  rs.pop_back();
  rs.pop_back();
  derived = summarize("volkov08.peak", session, rs);
  EXPECT_NE(derived[0].reason.find("below the 95% target"), std::string::npos) << derived[0].reason;
}

TEST(SmemSummary, InfersThirtyTwoFourByteBanks) {
  Session session(SystemInfo{}, 0, {}, nullptr);
  std::vector<Result> rs;
  for (int stride : {1, 2, 3, 4, 8, 16, 32, 64}) {
    Result r;
    r.status = Status::passed;
    r.axes = {{"stride", stride}};
    r.metrics.push_back({.tag = "bank/cycles_per_access",
                         .unit = "cycles",
                         .value = 0.2 + 1.02 * microbench::bank_conflict_degree(stride, 32, 4)});
    rs.push_back(r);
  }
  // Broadcasts and wider loads are measured beside the curve but do not enter the inference.
  for (const auto& [stride, width] : {std::pair{0, 4}, std::pair{1, 16}, std::pair{2, 8}}) {
    Result r;
    r.status = Status::passed;
    r.axes = {{"stride", stride}, {"width", width}};
    r.metrics.push_back({.tag = "bank/cycles_per_access", .unit = "cycles", .value = 40.0});
    rs.push_back(r);
  }
  const auto derived = summarize("volkov08.smem", session, rs);
  ASSERT_EQ(derived.size(), 1u);
  EXPECT_EQ(derived[0].status, Status::passed);
  EXPECT_EQ(derived[0].find_metric("banks")->value, 32);
  EXPECT_EQ(derived[0].find_metric("bank_width_bytes")->value, 4);
  EXPECT_NEAR(derived[0].find_metric("cycles_per_degree")->value, 1.02, 1e-9);
  EXPECT_TRUE(derived[0].reason.empty()) << derived[0].reason;
  EXPECT_EQ(derived[0].data["curve"].size(), 8u);
}

}  // namespace
}  // namespace gpufact
