// Host-side pieces of volkov08.launch and volkov08.barrier: the difference method and its spread
// (exact and noisy synthetic timings with known answers), the co-residency rule, and the bad
// axis values both experiments reject before any work.
#include "apps/gpufact/catalog.hpp"
#include "core/bench/registry.hpp"
#include "core/bench/runner.hpp"
#include "core/errors.hpp"
#include "microbench/barrier/coresidency.hpp"
#include "microbench/launch/cpu_pin.hpp"
#include "microbench/launch/difference_method.hpp"
#include "microbench/launch/host_clock.hpp"
#include "microbench/launch/interleaved_timing.hpp"

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

// Synthetic host timings: T(k) = fixed + k × cost, plus a drift that grows with every call (a
// clock ramping down, a busier host), plus optional disturbances.
struct DriftingHost {
  double fixed = 20e-6, cost = 3e-6, drift_per_call = 0;
  long calls = 0;
  std::vector<long> order;
  double operator()(long k) {
    order.push_back(k);
    return fixed + static_cast<double>(k) * cost + drift_per_call * static_cast<double>(calls++);
  }
};

// A timed warm-up keeps pairing calls until they add up to warmup_s (clocks ramp before the
// samples start), and never stops before the warm-up pairs asked for.
TEST(InterleavedTiming, TimedWarmupRunsUntilItsSecondsAreSpent) {
  long calls = 0;
  auto timed = [&](long k) {
    ++calls;
    return k == 1 ? 1e-3 : 9e-3;  // a pair: 10 ms
  };
  const auto t = time_interleaved({.few = 1, .many = 10, .samples = 1, .inner = 1, .warmup = 2, .warmup_s = 0.095},
                                  timed);
  EXPECT_EQ(t.calls, 2 * 10 + 2);  // ten warm-up pairs reach 0.1 s ≥ 0.095 s, then one sample pair
  const auto short_warm =
      time_interleaved({.few = 1, .many = 10, .samples = 1, .inner = 1, .warmup = 3, .warmup_s = 0.001}, timed);
  EXPECT_EQ(short_warm.calls, 2 * 3 + 2);
  EXPECT_THROW(time_interleaved({.few = 1, .many = 2, .warmup_s = -1}, timed), std::invalid_argument);
}

TEST(InterleavedTiming, AlternatesAbbaAndKeepsTheMedianPerSample) {
  DriftingHost host;
  const InterleavedSpec spec{.few = 1, .many = 100, .samples = 3, .inner = 4, .warmup = 1};
  const auto t = time_interleaved(spec, [&](long k) { return host(k); });
  // Warm-up pair, then per sample: few many, many few, few many, many few.
  const std::vector<long> expected_order = {1, 100, 1, 100, 100, 1, 1, 100, 100, 1, 1, 100, 100, 1, 1, 100,
                                            100, 1, 1, 100, 100, 1, 1, 100, 100, 1};
  EXPECT_EQ(host.order, expected_order);
  EXPECT_EQ(t.calls, 26);
  ASSERT_EQ(t.few.size(), 3u);
  ASSERT_EQ(t.many.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(t.few[i], 23e-6, 1e-15);
    EXPECT_NEAR(t.many[i], 320e-6, 1e-15);
  }
}

TEST(InterleavedTiming, DriftCancelsInPairedDifferences) {
  // A drift of 0.1 µs per call over 2 × 5 × 41 calls adds up to 41 µs, 14% of T(N) = 0.32 ms:
  // measured one after the other, T(N) would carry all of it; interleaved, each pair only its
  // share over one sample (~1 µs, a third of one launch over N − 1).
  DriftingHost host{.drift_per_call = 0.1e-6};
  const InterleavedSpec spec{.few = 1, .many = 100, .samples = 41, .inner = 5, .warmup = 0};
  const auto t = time_interleaved(spec, [&](long k) { return host(k); });
  const auto d = paired_difference_per_unit(t.few, t.many, 1, 100);
  EXPECT_NEAR(d.value, 3e-6, 0.01 * 3e-6);
  EXPECT_LT(d.spread, 0.001) << "every pair sees the same difference";
  // The same drift across separate measurements (all T(1) first, then all T(N)).
  DriftingHost serial{.drift_per_call = 0.1e-6};
  std::vector<double> few, many;
  for (int i = 0; i < 41 * 5; ++i) few.push_back(serial(1));
  for (int i = 0; i < 41 * 5; ++i) many.push_back(serial(100));
  const auto apart = difference_per_unit(few, many, 1, 100);
  EXPECT_GT(std::fabs(apart.value - 3e-6), 0.05 * 3e-6) << "drift shifts the unpaired estimate";
  EXPECT_GT(apart.spread, 0.02) << "and widens both distributions (over the 2% target)";
}

TEST(InterleavedTiming, OneDisturbedCallPerSampleDoesNotMoveIt) {
  // Every sample has one call stalled by 1 ms (a context switch); its median ignores it.
  DriftingHost host;
  long call = 0;
  const InterleavedSpec spec{.few = 1, .many = 1000, .samples = 21, .inner = 5, .warmup = 0};
  const auto t = time_interleaved(spec, [&](long k) {
    const double v = host(k);
    return (call++ % 10 == 3) ? v + 1e-3 : v;
  });
  const auto d = paired_difference_per_unit(t.few, t.many, 1, 1000);
  EXPECT_NEAR(d.value, 3e-6, 1e-12);
  EXPECT_NEAR(d.spread, 0.0, 1e-9);
}

TEST(InterleavedTiming, KeepsThePartMediansOnlyWhenEveryCallReportsOne) {
  // The host issues a launch in 3 µs and the GPU retires one in 5 µs: the part (time until the
  // last launch call returned) grows by 3 µs a launch, the whole call by 5 µs.
  const InterleavedSpec spec{.few = 1, .many = 100, .samples = 5, .inner = 3, .warmup = 1};
  const auto t = time_interleaved(spec, std::function<TimedCall(long)>([](long k) {
                                    const double n = static_cast<double>(k);
                                    return TimedCall{.seconds = 20e-6 + 5e-6 * n, .part = 1e-6 + 3e-6 * n};
                                  }));
  ASSERT_EQ(t.few_part.size(), 5u);
  ASSERT_EQ(t.many_part.size(), 5u);
  EXPECT_NEAR(paired_difference_per_unit(t.few, t.many, 1, 100).value, 5e-6, 1e-15);
  EXPECT_NEAR(paired_difference_per_unit(t.few_part, t.many_part, 1, 100).value, 3e-6, 1e-15);
  // One call without a part: no part medians at all (never a median of partial data).
  long call = 0;
  const auto some = time_interleaved(spec, std::function<TimedCall(long)>([&](long k) {
                                       return TimedCall{.seconds = 1e-6 * static_cast<double>(k), .part = call++ == 7 ? -1.0 : 0.0};
                                     }));
  EXPECT_EQ(some.few.size(), 5u);
  EXPECT_TRUE(some.few_part.empty());
  EXPECT_TRUE(some.many_part.empty());
  // A plain timed function reports none.
  EXPECT_TRUE(time_interleaved(spec, [](long k) { return 1e-6 * static_cast<double>(k); }).many_part.empty());
}

TEST(HostClock, MeasuresAPlausibleClockAndRecordsItPerSample) {
#if defined(__x86_64__)
  const double hz = measure_host_clock_hz();
  EXPECT_GT(hz, 0.3e9) << "a dependent add takes one cycle: below 300 MHz means the chain was not timed";
  EXPECT_LT(hz, 7e9) << "above 7 GHz means the adds did not wait for each other";
  const InterleavedSpec spec{.few = 1, .many = 10, .samples = 4, .inner = 3, .warmup = 0, .host_clock = true};
  const auto t = time_interleaved(spec, [](long k) { return 1e-6 * static_cast<double>(k); });
  ASSERT_EQ(t.host_hz.size(), 4u);
  for (double h : t.host_hz) EXPECT_GT(h, 0.3e9);
#else
  EXPECT_EQ(measure_host_clock_hz(), 0.0);
#endif
  EXPECT_TRUE(time_interleaved({.few = 1, .many = 2, .samples = 2, .warmup = 0}, [](long) { return 1e-6; })
                  .host_hz.empty());
}

TEST(InterleavedTiming, RejectsBadSpecsAndStopsWhenInterrupted) {
  auto timed = [](long k) { return static_cast<double>(k); };
  EXPECT_THROW(time_interleaved({.few = 1, .many = 1}, timed), std::invalid_argument);
  EXPECT_THROW(time_interleaved({.few = 1, .many = 2, .samples = 0}, timed), std::invalid_argument);
  EXPECT_THROW(time_interleaved({.few = 1, .many = 2, .inner = 0}, timed), std::invalid_argument);
  EXPECT_THROW(time_interleaved({.few = 1, .many = 2, .warmup = -1}, timed), std::invalid_argument);
  int calls = 0;
  EXPECT_THROW(time_interleaved({.few = 1, .many = 2}, [&](long k) { ++calls; return static_cast<double>(k); },
                                [&] { return calls >= 7; }),
               std::runtime_error);
  EXPECT_EQ(calls, 7);
}

TEST(DifferenceMethod, PairedSpreadIsTheHalfIqrOfTheDifferences) {
  // Per-pair differences (T(N) − T(1))/(N − 1) = 1..9 µs: median 5, q1 3, q3 7: spread 0.4.
  std::vector<double> few, many;
  for (int i = 1; i <= 9; ++i) {
    few.push_back(10e-6 + i * 1e-6);  // T(1) drifts too: only the difference counts
    many.push_back(few.back() + 10 * i * 1e-6);
  }
  const auto d = paired_difference_per_unit(few, many, 1, 11);
  EXPECT_NEAR(d.value, 5e-6, 1e-15);
  EXPECT_NEAR(d.spread, 0.4, 1e-12);
  const Metric m = difference_metric(d, "per_launch", "per launch", "s");
  EXPECT_NEAR(m.stats.at("spread"), 0.4, 1e-12);
  EXPECT_NEAR(m.stats.at("q1"), 3e-6, 1e-15);
  EXPECT_NEAR(m.stats.at("q3"), 7e-6, 1e-15);
  EXPECT_THROW(paired_difference_per_unit({1.0, 2.0}, {3.0}, 1, 2), std::invalid_argument);
}

TEST(CpuPin, PinsToTheCurrentCpuAndRestoresTheMask) {
  cpu_set_t before;
  CPU_ZERO(&before);
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  {
    const ScopedCpuPin pin;
    if (pin.cpu() < 0) GTEST_SKIP() << "cannot pin here: " << pin.error();
    EXPECT_TRUE(pin.error().empty());
    cpu_set_t now;
    CPU_ZERO(&now);
    ASSERT_EQ(sched_getaffinity(0, sizeof now, &now), 0);
    EXPECT_EQ(CPU_COUNT(&now), 1);
    EXPECT_TRUE(CPU_ISSET(pin.cpu(), &now));
    EXPECT_EQ(sched_getcpu(), pin.cpu());
  }
  cpu_set_t after;
  CPU_ZERO(&after);
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after));
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
