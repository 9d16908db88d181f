// Host tests for the memory-system inference (volkov08 §3.3 Fig. 2): change-point detection on
// synthetic latency curves with known knees (1, 2, 3 levels; 1-3% noise; a single outlier), the
// knee -> capacity mapping, L2-partition clustering of bimodal latencies, trace periods and the
// TLB inference from knees at several strides.
#include "microbench/memory/change_points.hpp"
#include "microbench/memory/memory_inference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace gpufact::microbench {
namespace {

constexpr double KB = 1024.0, MB = 1024.0 * 1024.0;

// Geometric grid with `per_octave` points per doubling.
std::vector<double> grid(double lo, double hi, int per_octave) {
  std::vector<double> x;
  for (int i = 0;; ++i) {
    const double v = std::round(lo * std::pow(2.0, static_cast<double>(i) / per_octave));
    if (v > hi * 1.0001) break;
    x.push_back(v);
  }
  return x;
}

struct Step {
  double capacity;  // last x at which `level` holds
  double level;
};

// Latency: the first level whose capacity holds x, the last level beyond them all, times
// (1 + noise · N(0,1)).
std::vector<double> curve(const std::vector<double>& x, const std::vector<Step>& steps, double top, double noise,
                          unsigned seed = 1) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> n01(0.0, 1.0);
  std::vector<double> y;
  for (double v : x) {
    double lv = top;
    for (const auto& s : steps)
      if (v <= s.capacity) {
        lv = s.level;
        break;
      }
    y.push_back(lv * (1 + noise * n01(gen)));
  }
  return y;
}

std::string describe(const StepCurve& c) {
  std::string s = "noise " + std::to_string(c.noise) + ";";
  for (const auto& p : c.plateaus)
    s += " [" + std::to_string(p.x_first) + ".." + std::to_string(p.x_last) + "]=" + std::to_string(p.level);
  return s;
}

double grid_floor(const std::vector<double>& x, double v) {
  double best = x.front();
  for (double g : x)
    if (g <= v) best = g;
  return best;
}

TEST(ChangePoints, OneLevelHasNoKnee) {
  const auto x = grid(4 * KB, 64 * MB, 4);
  for (double noise : {0.0, 0.01, 0.03}) {
    const auto c = find_steps(x, curve(x, {}, 35.0, noise), {});
    ASSERT_EQ(c.plateaus.size(), 1u) << "noise " << noise;
    EXPECT_TRUE(c.knees.empty());
    EXPECT_NEAR(c.plateaus[0].level, 35.0, 35.0 * 0.02);
  }
}

TEST(ChangePoints, TwoLevelsGiveTheL1Capacity) {
  const auto x = grid(4 * KB, 4 * MB, 8);
  for (double noise : {0.0, 0.01, 0.02, 0.03}) {
    for (unsigned seed = 1; seed < 40; ++seed) {
      SCOPED_TRACE("noise " + std::to_string(noise) + " seed " + std::to_string(seed));
      const auto y = curve(x, {{230 * KB, 35.0}}, 260.0, noise, seed);
      const auto c = find_steps(x, y);
      ASSERT_EQ(c.knees.size(), 1u);
      EXPECT_DOUBLE_EQ(c.knees[0].x_below, grid_floor(x, 230 * KB));
      EXPECT_GT(c.knees[0].x_above, 230 * KB);
      EXPECT_NEAR(c.knees[0].from, 35.0, 35.0 * 0.03);
      EXPECT_NEAR(c.knees[0].to, 260.0, 260.0 * 0.03);
    }
  }
}

TEST(ChangePoints, ThreeLevelsGiveL1AndL2Capacities) {
  const auto x = grid(4 * KB, 512 * MB, 4);
  for (double noise : {0.0, 0.01, 0.03}) {
    for (unsigned seed = 1; seed < 40; ++seed) {
      SCOPED_TRACE("noise " + std::to_string(noise) + " seed " + std::to_string(seed));
      const auto y = curve(x, {{224 * KB, 35.0}, {50 * MB, 260.0}}, 620.0, noise, seed);
      const auto c = find_steps(x, y);
      ASSERT_EQ(c.plateaus.size(), 3u) << describe(c);
      ASSERT_EQ(c.knees.size(), 2u);
      EXPECT_DOUBLE_EQ(c.knees[0].x_below, grid_floor(x, 224 * KB));
      EXPECT_DOUBLE_EQ(c.knees[1].x_below, grid_floor(x, 50 * MB));
      EXPECT_NEAR(c.plateaus[2].level, 620.0, 620.0 * 0.05);
    }
  }
}

TEST(ChangePoints, FourLevelsIncludingASmallStep) {
  // A 20% step (a TLB level) between two large ones, with 1% noise.
  const auto x = grid(1 * MB, 8192 * MB, 4);
  const auto y = curve(x, {{32 * MB, 300.0}, {512 * MB, 360.0}, {2048 * MB, 700.0}}, 1400.0, 0.01, 9);
  const auto c = find_steps(x, y);
  ASSERT_EQ(c.knees.size(), 3u);
  EXPECT_DOUBLE_EQ(c.knees[0].x_below, 32 * MB);
  EXPECT_DOUBLE_EQ(c.knees[1].x_below, 512 * MB);
  EXPECT_DOUBLE_EQ(c.knees[2].x_below, 2048 * MB);
}

TEST(ChangePoints, ASingleOutlierIsNotALevel) {
  const auto x = grid(4 * KB, 512 * MB, 4);
  for (double noise : {0.0, 0.02}) {
    auto y = curve(x, {{224 * KB, 35.0}, {50 * MB, 260.0}}, 620.0, noise, 11);
    y[6] *= 4.0;   // in the L1 plateau
    y[30] *= 0.3;  // in the L2 plateau
    const auto c = find_steps(x, y);
    ASSERT_EQ(c.knees.size(), 2u) << "noise " << noise;
    EXPECT_DOUBLE_EQ(c.knees[0].x_below, grid_floor(x, 224 * KB));
    EXPECT_DOUBLE_EQ(c.knees[1].x_below, grid_floor(x, 50 * MB));
  }
}

TEST(ChangePoints, TransitionPointsSitBetweenPlateaus) {
  // Partial hits on a ramp: the capacity is the last point of the lower plateau.
  const std::vector<double> x = {64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448};
  const std::vector<double> y = {35, 35, 35, 35, 35, 35, 90, 180, 260, 260, 260, 260, 260};
  const auto c = find_steps(x, y);
  ASSERT_EQ(c.knees.size(), 1u);
  EXPECT_DOUBLE_EQ(c.knees[0].x_below, 224);
  EXPECT_DOUBLE_EQ(c.knees[0].x_above, 320);
}

TEST(ChangePoints, NoiseEstimateIsRobustToSteps) {
  const auto x = grid(4 * KB, 512 * MB, 4);
  const auto y = curve(x, {{224 * KB, 35.0}, {50 * MB, 260.0}}, 620.0, 0.02, 3);
  EXPECT_NEAR(robust_log_noise(y), 0.02, 0.01);
}

TEST(ChangePoints, RejectsBadInput) {
  EXPECT_THROW(find_steps({1, 2}, {1}), std::invalid_argument);
  EXPECT_THROW(find_steps({2, 1}, {1, 1}), std::invalid_argument);
  EXPECT_THROW(find_steps({1, 2}, {1, 0}), std::invalid_argument);
  EXPECT_TRUE(find_steps({}, {}).plateaus.empty());
}

TEST(Clustering, BimodalL2LatenciesGiveNearAndFar) {
  std::mt19937 gen(7);
  std::normal_distribution<double> near(265.0, 5.0), far(475.0, 6.0);
  std::vector<double> v;
  for (int i = 0; i < 2000; ++i) v.push_back(near(gen));
  for (int i = 0; i < 1500; ++i) v.push_back(far(gen));
  v.push_back(1900);  // a TLB miss
  v.push_back(1950);
  const auto cs = cluster_values(v);
  std::vector<Cluster> main;
  for (const auto& c : cs)
    if (!c.outlier) main.push_back(c);
  ASSERT_EQ(main.size(), 2u);
  EXPECT_NEAR(main[0].median, 265.0, 3.0);
  EXPECT_NEAR(main[1].median, 475.0, 3.0);
  EXPECT_EQ(main[0].count, 2000u);
  EXPECT_EQ(main[1].count, 1500u);
  EXPECT_TRUE(cs.back().outlier);
}

TEST(Clustering, OneModeIsOneCluster) {
  std::mt19937 gen(8);
  std::normal_distribution<double> one(300.0, 6.0);
  std::vector<double> v;
  for (int i = 0; i < 4096; ++i) v.push_back(one(gen));
  EXPECT_EQ(cluster_values(v).size(), 1u);
}

TEST(TracePeriod, SectorAndLineMissesAtStride4) {
  // Cold walk at 4 B: a new line every 128 B (DRAM), a new sector every 32 B (L2), else L1.
  std::vector<double> lat;
  for (int i = 0; i < 4096; ++i) lat.push_back(i % 32 == 0 ? 650.0 : i % 8 == 0 ? 270.0 : 36.0);
  EXPECT_DOUBLE_EQ(slow_access_period(lat, 1.5 * 36.0, 4), 32.0);
  EXPECT_DOUBLE_EQ(slow_access_period(lat, 0.5 * (270.0 + 650.0), 4), 128.0);
  EXPECT_DOUBLE_EQ(slow_access_period(std::vector<double>(100, 36.0), 50, 4), 0.0);
}

TEST(Tlb, EntriesAndPageFromKneesAtSeveralStrides) {
  // 16 entries of 2 MiB pages (reach 32 MiB) and a second level of 512 entries (reach 1 GiB).
  const std::vector<double> strides = {64 * KB, 2 * MB, 32 * MB};
  std::vector<StepCurve> curves;
  for (double s : strides) {
    std::vector<double> x;
    for (double b = std::max(4 * MB, s); b <= 16384 * MB; b *= 2) x.push_back(b);
    const double r1 = 16 * std::max(s, 2 * MB), r2 = 512 * std::max(s, 2 * MB);
    curves.push_back(find_steps(x, curve(x, {{r1, 300.0}, {r2, 420.0}}, 900.0, 0.01, 21)));
  }
  const auto levels = infer_tlb_levels(strides, curves);
  ASSERT_EQ(levels.size(), 2u);
  EXPECT_DOUBLE_EQ(levels[0].entries, 16);
  EXPECT_DOUBLE_EQ(levels[0].page_bytes, 2 * MB);
  EXPECT_DOUBLE_EQ(levels[0].reach_bytes, 32 * MB);
  EXPECT_FALSE(levels[0].page_is_upper_bound);
  EXPECT_DOUBLE_EQ(levels[1].entries, 512);
  EXPECT_DOUBLE_EQ(levels[1].page_bytes, 2 * MB);
  EXPECT_NEAR(levels[1].miss_cycles, 900.0, 30.0);
}

// L1 (32 cycles to 192 KB), TLB-ish steps, L2 at 320 cycles, then a gradual rise to DRAM at 660:
// latency = L2 + (DRAM − L2) · miss(x), miss a logistic in log x with miss(capacity) = 1/2 and
// `steepness` the exponent (8: from 10% to 90% misses over about 0.8 octave, as on the H200).
std::vector<double> gradual_l2_curve(const std::vector<double>& x, double capacity, double steepness, double noise,
                                     unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> n01(0.0, 1.0);
  std::vector<double> y;
  for (double v : x) {
    double lv;
    if (v <= 192 * KB)
      lv = 32;
    else if (v <= 2 * MB)
      lv = 260;
    else {
      const double miss = 1.0 / (1.0 + std::pow(capacity / v, steepness));
      lv = 320 + (660 - 320) * miss;
    }
    y.push_back(lv * (1 + noise * n01(gen)));
  }
  return y;
}

TEST(MidpointCrossing, GradualRiseGivesTheHalfMissSize) {
  // Eight points per octave (the second pass): within 3% of the true size, noisy or not.
  for (double capacity : {50 * MB, 60 * MB}) {
    const auto x = grid(4 * KB, 256 * MB, 8);
    for (double noise : {0.0, 0.01}) {
      for (unsigned seed = 1; seed <= 5; ++seed) {
        const auto y = gradual_l2_curve(x, capacity, 8, noise, seed);
        const auto c = find_steps(x, y);
        const auto m = midpoint_crossing(x, y, c);
        ASSERT_TRUE(m) << describe(c);
        EXPECT_NEAR(m->bytes / capacity, 1.0, 0.03) << "noise " << noise << " seed " << seed << "; " << describe(c);
        EXPECT_LE(m->x_before, m->bytes);
        EXPECT_GE(m->x_after, m->bytes);
        EXPECT_NEAR(m->lower, 320, 320 * 0.05);
        EXPECT_NEAR(m->upper, 660, 660 * 0.05);
      }
    }
  }
}

TEST(MidpointCrossing, TwoPointsPerOctaveStillBracketTheSize) {
  // The first pass: the interpolated size is within a quarter octave, and the bracket holds it.
  const double capacity = 60 * MB;
  const auto x = grid(4 * KB, 256 * MB, 2);
  const auto y = gradual_l2_curve(x, capacity, 8, 0.01, 3);
  const auto m = midpoint_crossing(x, y, find_steps(x, y));
  ASSERT_TRUE(m);
  EXPECT_LE(m->x_before, capacity);
  EXPECT_GE(m->x_after, capacity);
  EXPECT_NEAR(std::log2(m->bytes / capacity), 0.0, 0.25);
}

TEST(MidpointCrossing, SharpStepAndOneNoisyPoint) {
  // LRU-like: every access misses past 60 MB; the crossing lies between the last hit and first miss.
  const auto x = grid(4 * KB, 256 * MB, 8);
  auto y = curve(x, {{192 * KB, 32.0}, {2 * MB, 260.0}, {60 * MB, 320.0}}, 660.0, 0.005, 4);
  // One wild point on the L2 plateau (an interrupt) does not count as the crossing.
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i] >= 20 * MB) {
      y[i] = 700;
      break;
    }
  const auto c = find_steps(x, y);
  const auto m = midpoint_crossing(x, y, c);
  ASSERT_TRUE(m) << describe(c);
  EXPECT_GE(m->bytes, 60 * MB * 0.999) << describe(c);
  EXPECT_LE(m->bytes, 60 * MB * std::pow(2.0, 1.0 / 8) * 1.001) << describe(c);
}

TEST(MidpointCrossing, H200CapacityCurve) {
  // The capacity sweep of an H200 run (2 points per octave, knees refined; ca loads, 128 B
  // stride): L1 to 201 KB, TLB steps to 4.7 MB, L2 at ~323 cycles to 40 MB, a gradual rise to
  // DRAM at ~662 cycles by 94 MB. The last knee (81 MB) overstated the capacity; the midpoint
  // lies between 51.5 and 58 MiB.
  const std::vector<double> x = {
      4096, 5760, 8192, 11648, 16384, 23168, 32768, 46336, 65536, 92672, 131072, 185344, 205952, 226560, 247168,
      262144, 267776, 288256, 308864, 329472, 350080, 370688, 524288, 741504, 1048576, 1482880, 2097152, 2965760,
      3295360, 3624832, 3954432, 4194304, 4283904, 4613504, 4942976, 5272576, 5602048, 5931648, 8388608, 11863296,
      16777216, 23726592, 33554432, 40371328, 47188224, 47453184, 54004992, 60821888, 67108864, 67638784, 74455680,
      81272448, 88089344, 94906240, 134217728, 189812480, 268435456};
  const std::vector<double> y = {
      32.0,  32.1,  32.1,  32.1,  32.0,  32.1,  32.1,  32.1,  32.1,  32.1,  32.0,  32.1,  32.1,  63.2,  183.8,
      258.2, 261.6, 275.0, 280.9, 281.0, 281.0, 281.3, 281.1, 280.1, 279.8, 280.1, 279.9, 286.7, 291.9, 296.7,
      303.7, 306.7, 311.2, 313.7, 319.9, 321.6, 322.3, 323.2, 322.5, 322.7, 325.2, 323.5, 323.0, 328.8, 368.2,
      375.3, 484.4, 523.8, 562.9, 565.7, 590.1, 614.3, 639.1, 656.1, 662.6, 662.6, 662.4};
  const auto c = find_steps(x, y);
  const auto m = midpoint_crossing(x, y, c);
  ASSERT_TRUE(m) << describe(c);
  EXPECT_NEAR(m->lower, 323, 5) << describe(c);
  EXPECT_NEAR(m->upper, 662, 5) << describe(c);
  EXPECT_DOUBLE_EQ(m->x_before, 54004992);
  EXPECT_DOUBLE_EQ(m->x_after, 60821888);
  EXPECT_GT(m->bytes, 54004992);
  EXPECT_LT(m->bytes, 60821888);
}

TEST(MidpointCrossing, NoRiseNoCrossing) {
  const auto x = grid(4 * KB, 256 * MB, 4);
  const auto two = curve(x, {{192 * KB, 32.0}}, 300.0, 0.0);
  EXPECT_FALSE(midpoint_crossing(x, two, find_steps(x, two))) << "two plateaus: no level above L2";
  const auto flat_top = curve(x, {{192 * KB, 32.0}, {2 * MB, 300.0}}, 310.0, 0.0);
  EXPECT_FALSE(midpoint_crossing(x, flat_top, find_steps(x, flat_top)));
}

TEST(Expectations, HopperTableAndPaperValues) {
  const auto h100 = expected_memory_system("NVIDIA H100 80GB HBM3");
  const auto l2 = find_expectation(h100, "l2_capacity_bytes");
  ASSERT_TRUE(l2);
  EXPECT_DOUBLE_EQ(l2->low, 50 * MB);
  EXPECT_DOUBLE_EQ(find_expectation(expected_memory_system("NVIDIA H200"), "l2_capacity_bytes")->low, 60 * MB);
  EXPECT_TRUE(expected_memory_system("Tesla T4").empty());
  const auto l1 = *find_expectation(h100, "l1_hit_cycles");
  EXPECT_FALSE(outside_expected(37, l1));
  EXPECT_FALSE(outside_expected(42, l1));  // within 10% of the range
  EXPECT_TRUE(outside_expected(60, l1));
  EXPECT_DOUBLE_EQ(find_expectation(paper_8800gtx(), "tlb_entries")->low, 16);
  // What a DRAM miss brings into L2: a 64 B sector pair on sm_90, the 32 B line on the 8800GTX.
  EXPECT_DOUBLE_EQ(find_expectation(h100, "dram_fetch_bytes")->low, 64);
  EXPECT_DOUBLE_EQ(find_expectation(paper_8800gtx(), "dram_fetch_bytes")->low, 32);
  EXPECT_FALSE(find_expectation(h100, "line_bytes"));
}

}  // namespace
}  // namespace gpufact::microbench
