// Metrics built from an experiment's own samples: median and spread as Google Benchmark gives them.
#include "microbench/sampled_metric.hpp"

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

TEST(SampledMetric, NoSamplesIsAnError) { EXPECT_THROW(with_samples({.tag = "t"}, {}), std::invalid_argument); }

}  // namespace
}  // namespace gpufact::microbench
