// Metrics built from an experiment's own samples: median and spread as Google Benchmark gives them.
#include "microbench/sampled_metric.hpp"

#include "core/bench/sample_median.hpp"
#include "core/report/format.hpp"
#include "microbench/launch/difference_method.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace gpufact::microbench {
namespace {

TEST(SampledMetric, OddCountMedianAndSpread) {
  const Metric m = with_samples({.tag = "x/cycles", .unit = "cycles"}, {5, 1, 4, 2, 3});
  EXPECT_EQ(m.value, 3);
  EXPECT_EQ(m.stats.at("median"), 3);
  EXPECT_EQ(m.stats.at("mean"), 3);
  EXPECT_EQ(m.stats.at("min"), 1);
  EXPECT_EQ(m.stats.at("max"), 5);
  EXPECT_NEAR(m.stats.at("stddev"), std::sqrt(2.5), 1e-12);  // sample standard deviation
  EXPECT_NEAR(m.stats.at("cv"), std::sqrt(2.5) / 3, 1e-12);
  EXPECT_EQ(m.samples, (std::vector<double>{5, 1, 4, 2, 3}));  // in the order taken
  EXPECT_EQ(m.tag, "x/cycles");
}

TEST(SampledMetric, EvenCountMedianIsTheMidpoint) {
  EXPECT_EQ(with_samples({}, {4, 1, 3, 2}).value, 2.5);
  EXPECT_EQ(with_samples({}, {7}).value, 7);
  EXPECT_EQ(with_samples({}, {7}).stats.at("stddev"), 0);
}

TEST(SampledMetric, QuartilesAndHalfIqrSpread) {
  // Sorted 1..9 around median 5: q1 = 3, q3 = 7 (type 7), spread = (7 − 3) / 2 / 5.
  const Metric m = with_samples({.tag = "t"}, {9, 1, 8, 2, 7, 3, 6, 4, 5});
  EXPECT_DOUBLE_EQ(m.stats.at("q1"), 3.0);
  EXPECT_DOUBLE_EQ(m.stats.at("q3"), 7.0);
  EXPECT_DOUBLE_EQ(m.stats.at("spread"), 0.4);
  EXPECT_DOUBLE_EQ(quantile_of({1, 2}, 0.25), 1.25);
  EXPECT_DOUBLE_EQ(quantile_of({}, 0.5), 0.0);
  EXPECT_DOUBLE_EQ(half_iqr_over_median({4}), 0.0);
  EXPECT_DOUBLE_EQ(half_iqr_over_median({0, 0, 0}), 0.0) << "zero median: no relative spread";
  // One wild sample among 20 tight ones leaves the robust spread small.
  std::vector<double> v(20, 100.0);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] += static_cast<double>(i % 3) - 1.0;
  v.push_back(1000.0);
  EXPECT_LT(half_iqr_over_median(v), 0.011);
}

TEST(SampledMetric, SummaryMetricCarriesTheSourceSpreadScaled) {
  const Metric rate = with_samples({.tag = "fma/flop_rate", .unit = "GFLOP/s"}, {60000, 61000, 62000, 63000, 64000});
  // A % of peak derived from the rate: same relative spread, its own units.
  const Metric pct = with_spread_of({.tag = "best_percent_of_peak", .unit = "%", .value = 93.0}, rate);
  EXPECT_DOUBLE_EQ(pct.value, 93.0);
  ASSERT_EQ(pct.samples.size(), 5u);
  EXPECT_NEAR(pct.samples[2], 93.0, 1e-9);
  EXPECT_NEAR(pct.stats.at("median"), 93.0, 1e-9);
  EXPECT_DOUBLE_EQ(pct.stats.at("spread"), rate.stats.at("spread"));
  EXPECT_DOUBLE_EQ(pct.stats.at("cv"), rate.stats.at("cv"));
}

TEST(SampledMetric, SummaryFlagsHeadlineSpreadOverTwoPercent) {
  Result d;
  d.reason = "link below its maximum";
  d.metrics.push_back(with_samples({.tag = "tight", .headline = true}, {100, 100.5, 101, 101.5, 102}));
  d.metrics.push_back(with_samples({.tag = "wide", .headline = true}, {80, 90, 100, 110, 120}));
  d.metrics.push_back(with_samples({.tag = "wide_but_not_headline", .headline = false}, {80, 90, 100, 110, 120}));
  d.metrics.push_back({.tag = "no_samples", .value = 1, .headline = true});
  flag_wide_spread(d);
  EXPECT_EQ(d.reason, "link below its maximum; spread over 2%: wide ±10.0%");
  EXPECT_EQ(d.data.at("wide_spread"), "wide ±10.0%");
  Result quiet;
  quiet.metrics.push_back(d.metrics.front());
  flag_wide_spread(quiet);
  EXPECT_TRUE(quiet.reason.empty());
  EXPECT_FALSE(quiet.data.contains("wide_spread"));
}

TEST(SampledMetric, RescaledToCyclesKeepsTheRelativeSpread) {
  // volkov08.barrier: a per-barrier time in seconds at a 1980 MHz clock becomes SM cycles. The
  // spread (half the IQR over the median) is a fraction: scaling it by the clock gave
  // "5170 ±44941588.9%" in the report.
  const std::vector<double> t1 = {1.00e-3, 1.01e-3, 0.99e-3, 1.00e-3, 1.02e-3};
  const std::vector<double> tn = {3.61e-3, 3.60e-3, 3.63e-3, 3.59e-3, 3.62e-3};
  Metric seconds = difference_metric(difference_per_unit(t1, tn, 1, 1000), "per_barrier", "per barrier", "s");
  seconds.published = Published{1.45e-6, "paper, in seconds"};
  const double hz = 1980e6;
  const Metric cycles = rescaled(seconds, hz, "per_barrier_cycles", "cycles per barrier", "cycles");
  EXPECT_EQ(cycles.tag, "per_barrier_cycles");
  EXPECT_EQ(cycles.unit, "cycles");
  EXPECT_FALSE(cycles.published);
  EXPECT_NEAR(cycles.value, seconds.value * hz, 1e-9);
  ASSERT_EQ(cycles.samples.size(), seconds.samples.size());
  for (std::size_t i = 0; i < cycles.samples.size(); ++i) EXPECT_NEAR(cycles.samples[i], seconds.samples[i] * hz, 1e-9);
  for (const char* absolute : {"median", "mean", "stddev", "min", "max", "q1", "q3"})
    EXPECT_NEAR(cycles.stats.at(absolute), seconds.stats.at(absolute) * hz, 1e-6) << absolute;
  for (const char* relative : {"cv", "cv_propagated", "spread"})
    EXPECT_DOUBLE_EQ(cycles.stats.at(relative), seconds.stats.at(relative)) << relative;
  EXPECT_LT(relative_spread(cycles), 0.05);
  EXPECT_EQ(format_spread(cycles), format_spread(seconds));
  EXPECT_THROW(rescaled(seconds, 0.0, "t", "t", "x"), std::invalid_argument);
  EXPECT_THROW(rescaled(seconds, std::nan(""), "t", "t", "x"), std::invalid_argument);
}

TEST(SampledMetric, NoSamplesIsAnError) { EXPECT_THROW(with_samples({.tag = "t"}, {}), std::invalid_argument); }

}  // namespace
}  // namespace gpufact::microbench
