// `gpufact compare` (core/report/compare): the Mann-Whitney U test against known p-values, and
// FAST/SLOW/SAME verdicts on seeded synthetic reports with planted changes.
#include "core/report/compare.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace gpufact {
namespace {

// --- Mann-Whitney U --------------------------------------------------------------------------
// Reference values: exact p by enumerating all C(n, n1) splits, and the tie-corrected normal
// approximation with continuity correction computed from pair counts (an independent Python
// implementation; scipy.stats.mannwhitneyu(method="asymptotic") uses the same formula).

TEST(MannWhitney, SeparatedSmallSamplesExact) {
  const std::vector<double> a{1, 2, 3, 4, 5}, b{6, 7, 8, 9, 10};
  EXPECT_NEAR(mann_whitney_p(a, b), 2.0 / 252.0, 1e-12);  // 0.00794
  EXPECT_NEAR(mann_whitney_p(b, a), 2.0 / 252.0, 1e-12);  // two-sided: symmetric
}

TEST(MannWhitney, InterleavedSamplesExact) {
  EXPECT_NEAR(mann_whitney_p({1, 3, 5, 7, 9}, {2, 4, 6, 8, 10}), 29.0 / 42.0, 1e-12);
  EXPECT_NEAR(mann_whitney_p({1.5, 2.0, 7.0}, {3.0, 4.0, 5.0, 6.0}), 22.0 / 35.0, 1e-12);  // unequal sizes
}

TEST(MannWhitney, IdenticalSamplesAreNotSignificant) {
  const std::vector<double> a{1, 2, 3, 4, 5};
  EXPECT_NEAR(mann_whitney_p(a, a), 1.0, 1e-12);
  EXPECT_NEAR(mann_whitney_p({7, 7, 7, 7}, {7, 7, 7}), 1.0, 1e-12);  // all tied: no information
}

TEST(MannWhitney, TooFewSamplesGiveOne) {
  EXPECT_EQ(mann_whitney_p({1}, {5, 6, 7}), 1.0);
  EXPECT_EQ(mann_whitney_p({}, {}), 1.0);
}

TEST(MannWhitney, LargeSamplesWithTiesNormalApproximation) {
  std::vector<double> a, b;
  for (auto [v, count] : std::vector<std::pair<double, int>>{{1, 6}, {2, 8}, {3, 6}, {4, 5}}) a.insert(a.end(), count, v);
  for (auto [v, count] : std::vector<std::pair<double, int>>{{2, 4}, {3, 7}, {4, 9}, {5, 5}}) b.insert(b.end(), count, v);
  ASSERT_EQ(a.size() + b.size(), 50u);
  EXPECT_NEAR(mann_whitney_p(a, b), 0.0005316914640830058, 1e-9);
  EXPECT_NEAR(mann_whitney_p(b, a), 0.0005316914640830058, 1e-9);
}

TEST(MannWhitney, LargeSeparatedSamples) {
  std::vector<double> a, b;
  for (int i = 0; i < 25; ++i) {
    a.push_back(i);
    b.push_back(i + 25);
  }
  EXPECT_NEAR(mann_whitney_p(a, b), 1.4156562248495634e-09, 1e-12);
}

// --- synthetic reports -----------------------------------------------------------------------

std::vector<double> normal_samples(std::uint64_t seed, double mean, double rel_sd, int n = 10) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> d(mean, mean * rel_sd);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = d(gen);
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Metric measured(std::string tag, std::string unit, bool higher_is_better, bool headline, std::vector<double> samples) {
  Metric m;
  m.tag = std::move(tag);
  m.name = m.tag;
  m.unit = std::move(unit);
  m.value = median(samples);
  m.samples = std::move(samples);
  m.stats = {{"median", m.value}, {"stddev", 1.0}};
  m.higher_is_better = higher_is_better;
  m.headline = headline;
  return m;
}

struct Plant {
  double rate = 1.0;  // factor on the rate metric
  double time = 1.0;  // factor on the time metric
};

// Two results (n = 256, 1024), each with a headline rate (higher is better), a time (lower is
// better) and an environment metric, ~N(μ, 1%) over 10 repetitions.
Report make_report(std::uint64_t seed, Plant plant = {}, const std::string& gpu = "GPU A") {
  Report r;
  r.system = {{"gpus", {{{"name", gpu}}}}, {"host", {{"cpu_model", "CPU"}, {"logical_cpus", 8}, {"blas", {{"threads", 8}}}}}};
  r.meta = {{"build", {{"build_type", "Release"}}}};
  for (int n : {256, 1024}) {
    Result res;
    res.experiment = "host.blas";
    res.artifact = "host.blas";
    res.axes = {{"routine", "gemm"}, {"n", n}};
    res.status = Status::passed;
    auto rate = normal_samples(seed * 7 + static_cast<std::uint64_t>(n), 100.0, 0.01);
    for (auto& x : rate) x *= plant.rate;
    auto time = normal_samples(seed * 13 + static_cast<std::uint64_t>(n), 1e-3, 0.01);
    for (auto& x : time) x *= plant.time;
    res.metrics.push_back(measured("gemm/flop_rate", "GFLOP/s", true, true, rate));
    res.metrics.push_back(measured("gemm/time", "s", false, false, time));
    Metric clock = measured("sm_clock", "MHz", true, true, normal_samples(seed + 99, 1980, 0.2));
    clock.role = MetricRole::environment;  // never compared, whatever it does
    res.metrics.push_back(clock);
    r.results.push_back(res);
  }
  return r;
}

const MetricComparison* row(const std::vector<MetricComparison>& rows, const std::string& tag, int n) {
  for (const auto& c : rows)
    if (c.tag == tag && c.key.find("n=" + std::to_string(n)) != std::string::npos) return &c;
  return nullptr;
}

std::vector<Verdict> verdicts(const std::vector<MetricComparison>& rows, const std::string& tag) {
  std::vector<Verdict> out;
  for (const auto& c : rows)
    if (c.tag == tag) out.push_back(c.verdict);
  return out;
}

TEST(Compare, SameDistributionIsSame) {
  for (std::uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    const auto rows = compare_reports(make_report(100 + seed), make_report(200 + seed), {});
    ASSERT_EQ(rows.size(), 4u);  // 2 results × 2 performance metrics; the environment metric is left out
    for (const auto& c : rows) {
      EXPECT_EQ(c.verdict, Verdict::same) << c.key << " " << c.tag << " change " << c.change << " p " << c.p_value;
      EXPECT_LT(std::fabs(c.change), 0.02);
      EXPECT_NE(c.tag, "sm_clock");
    }
  }
}

TEST(Compare, ReportAgainstItselfIsSameWithPOne) {
  const auto r = make_report(7);
  for (const auto& c : compare_reports(r, r, {})) {
    EXPECT_EQ(c.verdict, Verdict::same);
    EXPECT_EQ(c.change, 0.0);
    EXPECT_NEAR(c.p_value, 1.0, 1e-12);
  }
}

TEST(Compare, TenPercentLowerRateIsSlow) {
  const auto rows = compare_reports(make_report(1), make_report(2, {.rate = 0.9}), {});
  EXPECT_EQ(verdicts(rows, "gemm/flop_rate"), (std::vector<Verdict>{Verdict::slow, Verdict::slow}));
  EXPECT_EQ(verdicts(rows, "gemm/time"), (std::vector<Verdict>{Verdict::same, Verdict::same}));
  const auto* c = row(rows, "gemm/flop_rate", 1024);
  ASSERT_NE(c, nullptr);
  EXPECT_NEAR(c->change, -0.10, 0.02);
  EXPECT_LT(c->p_value, 0.001);
  EXPECT_TRUE(c->higher_is_better);
}

TEST(Compare, TenPercentShorterTimeIsFast) {
  const auto rows = compare_reports(make_report(1), make_report(2, {.time = 0.9}), {});
  EXPECT_EQ(verdicts(rows, "gemm/time"), (std::vector<Verdict>{Verdict::fast, Verdict::fast}));
  EXPECT_EQ(verdicts(rows, "gemm/flop_rate"), (std::vector<Verdict>{Verdict::same, Verdict::same}));
}

TEST(Compare, DirectionFollowsHigherIsBetter) {
  const auto rows = compare_reports(make_report(1), make_report(2, {.rate = 1.1, .time = 1.1}), {});
  EXPECT_EQ(verdicts(rows, "gemm/flop_rate"), (std::vector<Verdict>{Verdict::fast, Verdict::fast}));
  EXPECT_EQ(verdicts(rows, "gemm/time"), (std::vector<Verdict>{Verdict::slow, Verdict::slow}));
}

TEST(Compare, SignificantButBelowThresholdIsSame) {
  // 3% with 1% noise is significant, but below the 5% threshold.
  const auto rows = compare_reports(make_report(1), make_report(2, {.rate = 0.97}), {});
  for (const auto& c : rows) EXPECT_EQ(c.verdict, Verdict::same) << c.tag;
  EXPECT_LT(row(rows, "gemm/flop_rate", 256)->p_value, 0.01);
  // With a 1% threshold the same data is SLOW.
  const auto strict = compare_reports(make_report(1), make_report(2, {.rate = 0.97}), {.threshold = 0.01});
  EXPECT_EQ(verdicts(strict, "gemm/flop_rate"), (std::vector<Verdict>{Verdict::slow, Verdict::slow}));
}

TEST(Compare, LargeButNotSignificantIsSame) {
  // Medians 100 → 110 (+10%), but the samples overlap so much that the U test cannot tell.
  Report base, cur;
  Result r;
  r.experiment = "x.y";
  r.artifact = "x.y";
  r.metrics = {measured("k/bandwidth", "GB/s", true, true, {80, 90, 100, 110, 120})};
  base.results = {r};
  r.metrics = {measured("k/bandwidth", "GB/s", true, true, {88, 99, 110, 121, 132})};
  cur.results = {r};
  const auto rows = compare_reports(base, cur, {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_NEAR(rows[0].change, 0.10, 1e-12);
  EXPECT_GT(rows[0].p_value, 0.01);
  EXPECT_EQ(rows[0].verdict, Verdict::same);
}

TEST(Compare, FewSamplesUseOnlyTheThreshold) {
  Report base, cur;
  Result r;
  r.experiment = "x.y";
  r.artifact = "x.y";
  r.metrics = {measured("k/bandwidth", "GB/s", true, true, {100, 100})};
  base.results = {r};
  r.metrics = {measured("k/bandwidth", "GB/s", true, true, {80, 80})};
  cur.results = {r};
  const auto rows = compare_reports(base, cur, {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].verdict, Verdict::slow);
}

TEST(Compare, SamplesTooFewForTheTestToReachAlphaUseTheThreshold) {
  // 3 vs 3 (smallest two-sided p 0.1) and 4 vs 4 (0.029) can never be significant at alpha 0.01:
  // a regression must still be caught, by the threshold alone.
  for (const std::vector<double>& base_samples :
       {std::vector<double>{99, 100, 101}, std::vector<double>{99, 99.5, 100.5, 101}}) {
    Report base, cur;
    Result r;
    r.experiment = "x.y";
    r.artifact = "x.y";
    r.metrics = {measured("k/flop_rate", "GFLOP/s", true, true, base_samples)};
    base.results = {r};
    std::vector<double> slower = base_samples;
    for (auto& x : slower) x *= 0.9;
    r.metrics = {measured("k/flop_rate", "GFLOP/s", true, true, slower)};
    cur.results = {r};
    const auto rows = compare_reports(base, cur, {});
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].verdict, Verdict::slow) << base_samples.size() << " samples a side";
    // 5 vs 5 can reach alpha (2/252 = 0.0079), so there the U test decides.
  }
}

TEST(Compare, MissingAndAddedResults) {
  auto base = make_report(1), cur = make_report(2);
  base.results.pop_back();   // n=1024 only in the new report
  cur.results.erase(cur.results.begin());  // n=256 only in the base report
  const auto rows = compare_reports(base, cur, {});
  EXPECT_EQ(row(rows, "gemm/flop_rate", 1024)->verdict, Verdict::added);
  EXPECT_EQ(row(rows, "gemm/flop_rate", 256)->verdict, Verdict::missing);
  EXPECT_EQ(row(rows, "gemm/time", 256)->verdict, Verdict::missing);
}

TEST(Compare, DifferentAxesAreDifferentResults) {
  auto base = make_report(1), cur = make_report(2);
  cur.results[0].axes["n"] = 257;
  const auto rows = compare_reports(base, cur, {});
  EXPECT_EQ(row(rows, "gemm/flop_rate", 257)->verdict, Verdict::added);
  EXPECT_EQ(row(rows, "gemm/flop_rate", 256)->verdict, Verdict::missing);
}

TEST(Compare, MarkdownSummaryCountsVerdicts) {
  const CompareOptions opt;
  const auto rows = compare_reports(make_report(1), make_report(2, {.rate = 0.9}), opt);
  std::ostringstream md;
  render_comparison_markdown(rows, opt, md);
  const std::string text = md.str();
  EXPECT_NE(text.find("2 SLOW, 0 FAST, 2 SAME, 0 MISSING, 0 NEW"), std::string::npos) << text;
  // SLOW rows come first.
  EXPECT_LT(text.find("| SLOW |"), text.find("| SAME |"));
  EXPECT_NE(text.find("| host.blas n=1024 routine=gemm | gemm/flop_rate |"), std::string::npos) << text;
}

TEST(Environment, AlikeReportsHaveNoDifferences) {
  EXPECT_TRUE(environment_differences(make_report(1), make_report(2)).empty());
}

TEST(Environment, DifferentGpuNamesAreReported) {
  const auto diffs = environment_differences(make_report(1, {}, "NVIDIA H100 80GB HBM3"),
                                             make_report(2, {}, "NVIDIA H200"));
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_NE(diffs[0].find("GPU"), std::string::npos) << diffs[0];
  EXPECT_NE(diffs[0].find("H100"), std::string::npos) << diffs[0];
  EXPECT_NE(diffs[0].find("H200"), std::string::npos) << diffs[0];
}

TEST(Environment, BlasThreadsAndBuildTypeAreReported) {
  auto a = make_report(1), b = make_report(2);
  b.system["host"]["blas"]["threads"] = 1;
  b.meta["build"]["build_type"] = "Debug";
  const auto diffs = environment_differences(a, b);
  ASSERT_EQ(diffs.size(), 2u);
  EXPECT_NE(diffs[0].find("BLAS threads"), std::string::npos) << diffs[0];
  EXPECT_NE(diffs[1].find("Debug"), std::string::npos) << diffs[1];
}

TEST(Dashboard, OnlyHeadlineHigherIsBetterPerformanceMetrics) {
  auto r = make_report(3);
  Metric derived = measured("best", "%", true, true, {1, 2, 3});
  derived.role = MetricRole::derived;
  Metric quiet_rate = measured("memcpy/bandwidth", "GB/s", true, false, {1, 2, 3});
  Metric headline_time = measured("copy/time", "s", false, true, {1, 2, 3});
  r.results[0].metrics.push_back(derived);
  r.results[0].metrics.push_back(quiet_rate);
  r.results[0].metrics.push_back(headline_time);
  const auto j = dashboard_json(r);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);  // gemm/flop_rate for n=256 and n=1024
  for (std::size_t i = 0; i < j.size(); ++i) {
    const std::string name = j[i]["name"];
    EXPECT_NE(name.find("gemm/flop_rate"), std::string::npos) << name;
    EXPECT_NE(name.find(i == 0 ? "n=256" : "n=1024"), std::string::npos) << name;
    EXPECT_EQ(j[i]["unit"], "GFLOP/s");
    EXPECT_EQ(j[i]["value"].get<double>(), r.results[i].find_metric("gemm/flop_rate")->value);
    EXPECT_TRUE(j[i].contains("range"));  // stddev is present
  }
}

TEST(VerdictNames, AreStable) {
  EXPECT_EQ(to_string(Verdict::fast), "FAST");
  EXPECT_EQ(to_string(Verdict::slow), "SLOW");
  EXPECT_EQ(to_string(Verdict::same), "SAME");
  EXPECT_EQ(to_string(Verdict::missing), "MISSING");
  EXPECT_EQ(to_string(Verdict::added), "NEW");
}

}  // namespace
}  // namespace gpufact
