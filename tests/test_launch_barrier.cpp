// Host-side pieces of volkov08.launch and volkov08.barrier: the difference method and its spread
// (exact and noisy synthetic timings with known answers), the co-residency rule, and the bad
// axis values both experiments reject before any work.
#include "apps/gpufact/catalog.hpp"
#include "core/bench/registry.hpp"
#include "core/bench/runner.hpp"
#include "core/errors.hpp"
#include "microbench/barrier/coresidency.hpp"
#include "microbench/launch/difference_method.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact::microbench {
namespace {

TEST(DifferenceMethod, ExactTimingsGiveTheUnitCostWithNoSpread) {
  // T(k) = 40 µs fixed + k × 2.5 µs.
  const std::vector<double> t1(5, 40e-6 + 2.5e-6), tn(5, 40e-6 + 1000 * 2.5e-6);
  const auto d = difference_per_unit(t1, tn, 1, 1000);
  EXPECT_NEAR(d.value, 2.5e-6, 1e-15);
  ASSERT_EQ(d.samples.size(), 5u);
  for (double s : d.samples) EXPECT_NEAR(s, 2.5e-6, 1e-15);
  EXPECT_NEAR(d.stddev, 0.0, 1e-18);
  EXPECT_NEAR(d.propagated_cv, 0.0, 1e-12);
}

TEST(DifferenceMethod, ValueComesFromTheMediansNotTheMeans) {
  // One outlier repetition of T(N) moves the mean but not the median.
  const std::vector<double> t1 = {1.0, 1.0, 1.0, 1.0, 1.0};
  const std::vector<double> tn = {11.0, 11.0, 11.0, 11.0, 111.0};
  const auto d = difference_per_unit(t1, tn, 1, 11);
  EXPECT_DOUBLE_EQ(d.value, 1.0);
  EXPECT_DOUBLE_EQ(d.min, 1.0);
  EXPECT_DOUBLE_EQ(d.max, 11.0);
  EXPECT_GT(d.mean, d.value);
}

TEST(DifferenceMethod, NoisyTimingsRecoverTheCostAndTheirSpread) {
  // 2 µs per launch, 30 µs fixed, Gaussian noise of 1 µs (T(1)) and 20 µs (T(N)), N = 10000.
  std::mt19937_64 gen(7);
  std::normal_distribution<double> noise1(0.0, 1e-6), noise_n(0.0, 20e-6);
  const double n = 10000, cost = 2e-6, fixed = 30e-6;
  std::vector<double> t1, tn;
  for (int i = 0; i < 200; ++i) {
    t1.push_back(fixed + cost + noise1(gen));
    tn.push_back(fixed + n * cost + noise_n(gen));
  }
  const auto d = difference_per_unit(t1, tn, 1, n);
  // The medians' error is about 1.25 × 20 µs / sqrt(200) / (N − 1) ≈ 1.8e-10 s.
  EXPECT_NEAR(d.value, cost, 1e-9);
  const double expected_sd = std::sqrt(1e-12 + 400e-12) / (n - 1);
  EXPECT_NEAR(d.stddev, expected_sd, 0.2 * expected_sd);
  EXPECT_NEAR(d.propagated_cv, expected_sd / cost, 0.2 * expected_sd / cost);
  EXPECT_LE(d.min, d.value);
  EXPECT_GE(d.max, d.value);
}

TEST(DifferenceMethod, PairsOnlyAsManyRepetitionsAsBothHave) {
  const auto d = difference_per_unit({1.0, 1.0, 1.0}, {3.0, 5.0}, 1, 2);
  ASSERT_EQ(d.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(d.samples[0], 2.0);
  EXPECT_DOUBLE_EQ(d.samples[1], 4.0);
  EXPECT_DOUBLE_EQ(d.value, 3.0);  // median of {3, 5} is 4, minus 1
}

TEST(DifferenceMethod, RejectsDegenerateInput) {
  EXPECT_THROW(difference_per_unit({1.0}, {2.0}, 5, 5), std::invalid_argument);
  EXPECT_THROW(difference_per_unit({1.0}, {2.0}, 5, 1), std::invalid_argument);
  EXPECT_THROW(difference_per_unit({}, {2.0}, 1, 2), std::invalid_argument);
  EXPECT_THROW(difference_per_unit({1.0}, {}, 1, 2), std::invalid_argument);
}

TEST(DifferenceMethod, MedianOfOddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(median_of({3.0, 1.0, 2.0}), 2.0);
  EXPECT_DOUBLE_EQ(median_of({4.0, 1.0, 3.0, 2.0}), 2.5);
  EXPECT_DOUBLE_EQ(median_of({}), 0.0);
}

TEST(DifferenceMethod, MetricIsADerivedHeadlineWithItsSpread) {
  const auto d = difference_per_unit({1.0, 1.1, 0.9}, {11.0, 11.2, 10.9}, 1, 11);
  const Metric m = difference_metric(d, "per_launch", "time per launch", "s");
  EXPECT_EQ(m.tag, "per_launch");
  EXPECT_EQ(m.role, MetricRole::derived);
  EXPECT_TRUE(m.headline);
  EXPECT_FALSE(m.higher_is_better);
  EXPECT_DOUBLE_EQ(m.value, d.value);
  EXPECT_EQ(m.samples, d.samples);
  for (const char* k : {"median", "mean", "stddev", "cv", "min", "max", "cv_propagated"})
    EXPECT_EQ(m.stats.count(k), 1u) << k;
  EXPECT_NEAR(m.stats.at("cv"), d.stddev / d.value, 1e-12);
  EXPECT_NEAR(m.stats.at("spread"), d.propagated_spread, 1e-15);
}

TEST(DifferenceMethod, RobustSpreadIgnoresOneDisturbedSample) {
  // N = 1000 launches at 3 µs each; one repetition of T(N) caught a 2 ms host stall.
  std::vector<double> few(21, 10e-6), many;
  for (int i = 0; i < 21; ++i) many.push_back(10e-6 + 999 * 3e-6 * (1 + 0.002 * ((i % 5) - 2)));
  many[7] += 2e-3;
  const auto d = difference_per_unit(few, many, 1, 1000);
  EXPECT_NEAR(d.value, 3e-6, 0.01e-6);
  EXPECT_LT(d.propagated_spread, 0.005) << "half IQR over the median sees the bulk, not the stall";
  EXPECT_GT(d.propagated_cv, 0.05) << "the stall dominates the standard deviation";
}

TEST(Coresidency, AllowsUpToTheOccupancyLimit) {
  EXPECT_FALSE(coresidency_violation(1, 16, 132, "flags barrier kernel").has_value());
  EXPECT_FALSE(coresidency_violation(16, 16, 132, "flags barrier kernel").has_value());
}

TEST(Coresidency, RefusesMoreBlocksThanCanBeResidentAndSaysWhy) {
  const auto why = coresidency_violation(17, 16, 132, "flags barrier kernel at 128 threads");
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("blocks_per_sm=17"), std::string::npos) << *why;
  EXPECT_NE(why->find("2244 blocks"), std::string::npos) << *why;
  EXPECT_NE(why->find("16 per SM"), std::string::npos) << *why;
  EXPECT_NE(why->find("2112 blocks on 132 SMs"), std::string::npos) << *why;
  EXPECT_NE(why->find("flags barrier kernel at 128 threads"), std::string::npos) << *why;
  EXPECT_NE(why->find("deadlock"), std::string::npos) << *why;
}

TEST(Coresidency, AKernelThatCannotRunAtAllIsRefused) {
  const auto why = coresidency_violation(1, 0, 132, "atomic barrier kernel at 1024 threads");
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("0 blocks per SM"), std::string::npos) << *why;
}

AxisPoint point(const Experiment& e, const std::vector<std::pair<std::string, AxisValue>>& values) {
  AxisPoint p;
  for (const auto& [name, v] : values) p.set(*e.axis(name), v);
  return p;
}

void expect_usage_error_naming(const std::function<void()>& f, const std::string& axis) {
  try {
    f();
    ADD_FAILURE() << "no UsageError for axis " << axis;
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(axis), std::string::npos) << e.what();
  }
}

TEST(BarrierAxes, BadValuesAreUsageErrorsNamingTheAxis) {
  const Experiment* e = experiment_catalog().find("volkov08.barrier");
  ASSERT_NE(e, nullptr);
  ASSERT_TRUE(static_cast<bool>(e->validate));
  auto with = [&](std::int64_t bps, std::int64_t threads, std::int64_t rounds) {
    return point(*e, {{"barrier", std::string("flags")}, {"blocks_per_sm", bps}, {"threads", threads},
                      {"rounds", rounds}});
  };
  EXPECT_NO_THROW(e->validate(with(1, 128, 100)));
  expect_usage_error_naming([&] { e->validate(with(0, 128, 100)); }, "blocks_per_sm");
  expect_usage_error_naming([&] { e->validate(with(-3, 128, 100)); }, "blocks_per_sm");
  expect_usage_error_naming([&] { e->validate(with(1, 100, 100)); }, "threads");
  expect_usage_error_naming([&] { e->validate(with(1, 2048, 100)); }, "threads");
  expect_usage_error_naming([&] { e->validate(with(1, 128, 1)); }, "rounds");
  // From the command line the axis bounds reject them before validate runs.
  expect_usage_error_naming([&] { parse_axis_values(*e->axis("blocks_per_sm"), "0"); }, "blocks_per_sm");
}

TEST(LaunchAxes, BadValuesAreUsageErrorsNamingTheAxis) {
  const Experiment* e = experiment_catalog().find("volkov08.launch");
  ASSERT_NE(e, nullptr);
  ASSERT_TRUE(static_cast<bool>(e->validate));
  EXPECT_NO_THROW(e->validate(point(*e, {{"method", std::string("sync_each")}, {"launches", std::int64_t{2}}})));
  expect_usage_error_naming(
      [&] { e->validate(point(*e, {{"method", std::string("sync_each")}, {"launches", std::int64_t{1}}})); },
      "launches");
  expect_usage_error_naming([&] { parse_axis_values(*e->axis("method"), "async_magic"); }, "method");
}

TEST(LaunchBarrier, DryRunListsTheQuickCases) {
  BenchRequest req;
  req.patterns = {"volkov08.launch", "volkov08.barrier"};
  req.dry_run = true;
  std::ostringstream out, err;
  EXPECT_EQ(run_bench(experiment_catalog(), req, nullptr, out, err), 0);
  EXPECT_NE(out.str().find("volkov08.launch (volkov08.launch): 6 cases"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("volkov08.barrier (volkov08.barrier): 15 cases"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace gpufact::microbench
