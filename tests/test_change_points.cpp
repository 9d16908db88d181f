// Host tests for the memory-system inference (volkov08 §3.3 Fig. 2): change-point detection on
// synthetic latency curves with known knees (1, 2, 3 levels; 1-3% noise; a single outlier), the
// knee -> capacity mapping, L2-partition clustering of bimodal latencies, trace periods and the
// TLB inference from knees at several strides.
#include "microbench/memory/change_points.hpp"
#include "microbench/memory/memory_inference.hpp"

#include <gtest/gtest.h>

#include <algorithm>
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

// The shape of the H200 capacity sweep (one SM, ca loads, 128 B stride; results/nvidia-h200):
// L1 32 cycles to 220 KB, a ramp, short transition plateaus at 236 (252-258 KB) and 263 cycles
// (262-279 KB), the L2 at 281 from 285 KB to 2.5 MB, a slope 288-297 to 3.6 MB, 320 from 4 to 40 MB (L1 TLB
// reach passed), then a climb linear in log size to DRAM at 683 cycles by 91 MB. The grid is
// four points per octave plus the dense points a refinement adds around the knees.
std::vector<double> h200_shaped_x() {
  std::vector<double> x = grid(4 * KB, 256 * MB, 4);
  for (double v = 221 * KB; v <= 312 * KB; v += 5.25 * KB) x.push_back(std::round(v));
  for (double v = 2.83 * MB; v <= 3.37 * MB; v += 32 * KB) x.push_back(std::round(v));
  for (double v = 38 * MB; v <= 90 * MB; v += 1.6 * MB) x.push_back(std::round(v));
  std::sort(x.begin(), x.end());
  x.erase(std::unique(x.begin(), x.end()), x.end());
  return x;
}

std::vector<double> h200_shaped_y(const std::vector<double>& x, double noise, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> n01(0.0, 1.0);
  std::vector<double> y;
  for (double v : x) {
    double lv;
    if (v <= 220 * KB) lv = 32;
    else if (v < 252 * KB) lv = 32 + (229 - 32) * (v - 220 * KB) / (32 * KB);
    else if (v < 262 * KB) lv = 236;
    else if (v < 284 * KB) lv = 263;
    else if (v <= 2.5 * MB) lv = 281;
    else if (v <= 3.6 * MB) lv = 288 + 9 * (v - 2.5 * MB) / (1.1 * MB);
    else if (v <= 40 * MB) lv = 320;
    else if (v < 91 * MB) lv = 320 + (683 - 320) * std::log(v / (40 * MB)) / std::log(91.0 / 40.0);
    else lv = 683;
    y.push_back(lv * (1 + noise * n01(gen)));
  }
  return y;
}

// The H200-shaped curve without noise, then with 1% noise under five seeds.
struct ShapedCurve {
  double noise;
  unsigned seed;
  std::vector<double> y;
};
std::vector<ShapedCurve> h200_shaped_curves(const std::vector<double>& x) {
  std::vector<ShapedCurve> curves{{0.0, 1, h200_shaped_y(x, 0.0, 1)}};
  for (unsigned seed = 1; seed <= 5; ++seed) curves.push_back({0.01, seed, h200_shaped_y(x, 0.01, seed)});
  return curves;
}

TEST(CapacityLevels, L2HitIsTheFirstPlateauSpanningAnOctave) {
  // The first plateau after L1 is a transition of two points (236 cycles): not the L2 hit.
  const auto x = h200_shaped_x();
  for (const auto& [noise, seed, y] : h200_shaped_curves(x)) {
    const auto c = find_steps(x, y);
    const auto lv = capacity_levels(c);
    ASSERT_TRUE(lv.l2_hit && lv.l2_before_climb && lv.dram) << describe(c);
    EXPECT_EQ(lv.l1, 0u);
    EXPECT_NEAR(c.plateaus[lv.l1].level, 32, 1) << describe(c);
    const Level& l2 = c.plateaus[*lv.l2_hit];
    // Noisy: the segmentation may take the 281 plateau and the slope after it (288-297) for one
    // level when their difference is within 3σ of the noise; either way not a transition's.
    const double slack = noise > 0 ? 0.045 : 0.015;
    EXPECT_NEAR(l2.level, 281, 281 * slack) << "noise " << noise << " seed " << seed << "; " << describe(c);
    EXPECT_GE(l2.x_last, 2 * l2.x_first);
    EXPECT_GE(l2.x_first, 279 * KB) << describe(c);
    EXPECT_LE(l2.x_first, 300 * KB) << describe(c);
    EXPECT_NEAR(c.plateaus[*lv.l2_before_climb].level, 320, 320 * 0.02) << describe(c);
    EXPECT_NEAR(c.plateaus[*lv.dram].level, 683, 683 * 0.02) << describe(c);
  }
}

TEST(CapacityLevels, FewPlateausAndNoWideOne) {
  const auto x = grid(4 * KB, 256 * MB, 4);
  const auto two = curve(x, {{192 * KB, 32.0}}, 300.0, 0.0);
  const auto lv2 = capacity_levels(find_steps(x, two));
  EXPECT_FALSE(lv2.l2_hit);
  EXPECT_FALSE(lv2.dram);
  // Plateaus between L1 and DRAM that are all shorter than an octave: the widest is the L2.
  StepCurve c;
  c.plateaus = {{.x_first = 4 * KB, .x_last = 200 * KB, .level = 32},
                {.x_first = 250 * KB, .x_last = 260 * KB, .level = 236},
                {.x_first = 300 * KB, .x_last = 500 * KB, .level = 281},
                {.x_first = 600 * KB, .x_last = 700 * KB, .level = 300},
                {.x_first = 100 * MB, .x_last = 150 * MB, .level = 683}};
  const auto lv = capacity_levels(c);
  EXPECT_EQ(*lv.l2_hit, 2u);
  EXPECT_EQ(*lv.l2_before_climb, 2u);
  EXPECT_EQ(*lv.dram, 4u) << "no level beyond the L2 spans an octave: the last plateau";
  // A short plateau after a wide DRAM one (a small step at the sweep's end) is not DRAM, and the
  // DRAM plateau is not the L2 hit.
  c.plateaus.back().x_last = 256 * MB;
  c.plateaus.push_back({.x_first = 260 * MB, .x_last = 270 * MB, .level = 750});
  const auto trailing = capacity_levels(c);
  EXPECT_EQ(*trailing.dram, 4u);
  EXPECT_EQ(*trailing.l2_hit, 2u);
  // A wide L2 plateau and a climb whose top is short: the top is DRAM, the L2 is not.
  StepCurve climb;
  climb.plateaus = {{.x_first = 4 * KB, .x_last = 200 * KB, .level = 32},
                    {.x_first = 300 * KB, .x_last = 40 * MB, .level = 320},
                    {.x_first = 45 * MB, .x_last = 50 * MB, .level = 450},
                    {.x_first = 80 * MB, .x_last = 120 * MB, .level = 683}};
  const auto short_top = capacity_levels(climb);
  EXPECT_EQ(*short_top.dram, 3u);
  EXPECT_EQ(*short_top.l2_hit, 1u);
  EXPECT_EQ(*short_top.l2_before_climb, 1u);
}

TEST(MissRange, GradualClimbGivesOnsetAndAllMissSizes) {
  // The climb starts at 40 MB (2/3 of a 60 MB L2) and reaches DRAM at 91 MB; the band around
  // each level is 4% (merge_relative), so the detected all-miss size is where the climb comes
  // within 4% of DRAM: 40 · (91/40)^(1 − 0.04 · 683 / 363) ≈ 85.6 MB, and the onset is the last
  // size at most 4% above 320 cycles (≤ 41.2 MB).
  const auto x = h200_shaped_x();
  for (const auto& [noise, seed, y] : h200_shaped_curves(x)) {
    const auto c = find_steps(x, y);
    const auto r = miss_range(x, y, c);
    ASSERT_TRUE(r) << describe(c);
    const std::string why = "noise " + std::to_string(noise) + " seed " + std::to_string(seed) + "; " + describe(c);
    EXPECT_NEAR(r->l2_cycles, 320, 320 * 0.02) << why;
    EXPECT_NEAR(r->dram_cycles, 683, 683 * 0.02) << why;
    EXPECT_GE(r->tolerance, 0.04);
    if (noise == 0) {
      EXPECT_DOUBLE_EQ(r->tolerance, 0.04);
    }
    EXPECT_GE(r->onset_bytes, 36 * MB) << why;
    EXPECT_LE(r->onset_bytes, 41.2 * MB) << why;
    EXPECT_GT(r->onset_next_bytes, 40 * MB) << why;
    EXPECT_GE(r->all_miss_bytes, 80 * MB) << why;
    EXPECT_LE(r->all_miss_bytes, 92 * MB) << why;
    EXPECT_LT(r->all_miss_prev_bytes, r->all_miss_bytes);
    EXPECT_TRUE(onset_near_two_thirds(r->onset_bytes, r->onset_next_bytes, 60 * MB)) << why;
    EXPECT_FALSE(onset_near_two_thirds(r->onset_bytes, r->onset_next_bytes, 90 * MB)) << why;
    // The half-miss size lies between them.
    const auto m = midpoint_crossing(x, y, c);
    ASSERT_TRUE(m);
    EXPECT_GT(m->bytes, r->onset_bytes);
    EXPECT_LT(m->bytes, r->all_miss_bytes);
  }
}

TEST(MissRange, SharpStepHasOnsetAndAllMissOneStepApart) {
  const auto x = grid(4 * KB, 256 * MB, 8);
  const auto y = curve(x, {{192 * KB, 32.0}, {2 * MB, 260.0}, {60 * MB, 320.0}}, 660.0, 0.0);
  const auto c = find_steps(x, y);
  const auto r = miss_range(x, y, c);
  ASSERT_TRUE(r) << describe(c);
  EXPECT_DOUBLE_EQ(r->onset_bytes, grid_floor(x, 60 * MB));
  EXPECT_DOUBLE_EQ(r->all_miss_bytes, r->onset_next_bytes);
  EXPECT_DOUBLE_EQ(r->all_miss_prev_bytes, r->onset_bytes);
}

TEST(MissRange, NoClimbOrNoDramLevel) {
  const auto x = grid(4 * KB, 256 * MB, 4);
  const auto flat_top = curve(x, {{192 * KB, 32.0}, {2 * MB, 300.0}}, 310.0, 0.0);
  EXPECT_FALSE(miss_range(x, flat_top, find_steps(x, flat_top)));
  // A climb that never reaches the DRAM band within the sweep: onset, no all-miss size.
  auto y = curve(x, {{192 * KB, 32.0}, {2 * MB, 260.0}, {60 * MB, 320.0}}, 660.0, 0.0);
  const auto c = find_steps(x, y);
  StepCurve raised = c;
  raised.plateaus.back().level = 900;  // a DRAM level the sweep's points never come near
  const auto r = miss_range(x, y, raised);
  ASSERT_TRUE(r);
  EXPECT_DOUBLE_EQ(r->onset_bytes, grid_floor(x, 60 * MB));
  EXPECT_EQ(r->all_miss_bytes, 0.0);
}

TEST(MissRange, H200FullRunCurve) {
  // The capacity curve of the H200 full-preset run (results/nvidia-h200/microbench-full.json):
  // the L2 hit is the 281-cycle plateau (285 KB-2.5 MB), not the 236-cycle transition; misses
  // begin after 39.9 MB and every access misses from 92.2 MB.
  const std::vector<double> x = {
      4096, 4864, 5760, 6912, 8192, 9728, 11648, 13824, 16384, 19456, 23168, 27520, 32768, 38912, 46336,
      55168, 65536, 77952, 92672, 110208, 131072, 155904, 185344, 220416, 225792, 231168, 236544, 241920,
      247296, 252672, 258048, 262144, 263424, 268672, 274048, 279424, 284800, 290176, 295552, 300928, 306304,
      311680, 370688, 440832, 524288, 623488, 741504, 881792, 1048576, 1246976, 1482880, 1763456, 2097152,
      2493952, 2965760, 2998784, 3031808, 3064832, 3097856, 3130752, 3163776, 3196800, 3229824, 3262848,
      3295872, 3328896, 3361920, 3394816, 3427840, 3460864, 3493888, 3526912, 4194304, 4241024, 4287616,
      4334336, 4381056, 4427776, 4474368, 4521088, 4567808, 4614400, 4661120, 4707840, 4754432, 4801152,
      4847872, 4894592, 4941184, 4987904, 5931648, 7053952, 8388608, 9975808, 11863296, 14107904, 16777216,
      19951616, 23726592, 28215808, 33554432, 39903232, 41503616, 43103872, 44704256, 45665920, 46304512,
      47453184, 47904896, 49505280, 49799040, 51105536, 52705920, 54306176, 55906560, 56431616, 57506816,
      59107200, 59221248, 60707584, 62307840, 63908224, 64581248, 65508480, 67108864, 79806336, 80694528,
      81582848, 82471040, 83359232, 84247424, 85135744, 86023936, 86912128, 87800448, 88688640, 89576832,
      90465152, 91353344, 92241536, 93129728, 94018048, 94906240, 112863232, 134217728, 159612672, 189812480,
      225726464, 268435456};
  const std::vector<double> y = {
      32.0, 32.1, 32.1, 32.1, 32.0, 32.1, 32.1, 32.1, 32.0, 32.0, 32.1, 32.1, 32.0, 32.0, 32.1, 32.1, 32.1,
      32.1, 32.1, 32.1, 32.1, 32.1, 32.1, 32.1, 56.6, 96.1, 111.6, 148.0, 184.2, 229.3, 242.2, 256.8, 256.9,
      263.2, 267.1, 270.9, 277.2, 280.1, 282.0, 282.3, 282.1, 282.1, 281.5, 281.2, 281.3, 281.4, 280.8,
      281.1, 281.1, 281.1, 281.0, 281.0, 281.1, 281.0, 287.9, 288.2, 288.8, 289.7, 290.0, 290.8, 290.3,
      291.2, 292.3, 292.7, 293.4, 293.7, 294.6, 295.5, 295.8, 296.6, 296.6, 297.2, 309.1, 310.2, 311.6,
      311.7, 312.0, 313.1, 312.6, 314.1, 315.2, 315.6, 316.6, 316.6, 317.0, 318.7, 319.5, 320.6, 321.1,
      322.3, 323.5, 322.2, 322.9, 323.1, 323.1, 323.0, 324.3, 324.1, 324.2, 323.8, 324.1, 332.8, 352.1,
      354.4, 364.5, 372.0, 367.3, 398.4, 415.5, 433.2, 430.4, 448.9, 458.1, 473.0, 536.8, 541.2, 559.9,
      562.4, 562.8, 563.7, 571.9, 571.7, 582.7, 588.7, 594.2, 599.0, 600.7, 599.9, 599.8, 608.6, 614.9,
      616.4, 613.0, 613.6, 613.4, 631.4, 631.3, 634.3, 653.9, 661.8, 661.5, 660.5, 657.8, 683.4, 685.4,
      686.4, 687.0, 685.4, 684.8};
  const auto c = find_steps(x, y);
  const auto lv = capacity_levels(c);
  ASSERT_TRUE(lv.l2_hit) << describe(c);
  EXPECT_NEAR(c.plateaus[*lv.l2_hit].level, 281.1, 0.5) << describe(c);
  EXPECT_DOUBLE_EQ(c.plateaus[*lv.l2_hit].x_first, 284800);
  EXPECT_DOUBLE_EQ(c.plateaus[*lv.l2_hit].x_last, 2493952);
  const auto r = miss_range(x, y, c);
  ASSERT_TRUE(r) << describe(c);
  EXPECT_DOUBLE_EQ(r->onset_bytes, 39903232);
  EXPECT_DOUBLE_EQ(r->onset_next_bytes, 41503616);
  EXPECT_DOUBLE_EQ(r->all_miss_bytes, 92241536);
  EXPECT_NEAR(r->onset_bytes / (60 * MB), 0.634, 0.001);
  EXPECT_TRUE(onset_near_two_thirds(r->onset_bytes, r->onset_next_bytes, 60 * MB));
  const auto m = midpoint_crossing(x, y, c);
  ASSERT_TRUE(m);
  EXPECT_NEAR(m->bytes, 55.0e6, 0.3e6);
}

TEST(PartitionSplit, TwoHitClustersAppearOnlyAtTheLargerSize) {
  auto cluster = [](double median, std::size_t count, double fraction, bool outlier = false) {
    Cluster c;
    c.median = c.mean = c.min = c.max = median;
    c.count = count;
    c.fraction = fraction;
    c.outlier = outlier;
    return c;
  };
  // 8 MiB: one cluster (far lines copied into the near partition) and a rare outlier; 48 MiB:
  // near and far hits plus DRAM misses at ~680 cycles (DRAM plateau 683).
  const std::vector<Cluster> small = {cluster(296, 4090, 0.9985), cluster(700, 6, 0.0015, true)};
  const std::vector<Cluster> large = {cluster(272, 1800, 0.44), cluster(478, 1500, 0.37), cluster(690, 796, 0.19)};
  EXPECT_EQ(hit_clusters(small, 683).size(), 1u);
  EXPECT_EQ(hit_clusters(large, 683).size(), 2u);
  EXPECT_EQ(hit_clusters(large, 0).size(), 3u) << "no DRAM latency: every cluster is a hit";
  const auto s = split_partitions({small, large}, 683);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->trace, 1u);
  EXPECT_DOUBLE_EQ(s->near.median, 272);
  EXPECT_DOUBLE_EQ(s->far.median, 478);
  EXPECT_FALSE(split_partitions({small}, 683));
  // Misses more common than far hits do not become the far partition.
  const std::vector<Cluster> miss_heavy = {cluster(272, 900, 0.22), cluster(478, 700, 0.17), cluster(690, 2496, 0.61)};
  const auto m = split_partitions({small, miss_heavy}, 683);
  ASSERT_TRUE(m);
  EXPECT_DOUBLE_EQ(m->far.median, 478);
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
