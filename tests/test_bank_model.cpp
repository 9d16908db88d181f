// Shared-memory bank conflict degrees and the bank layout inferred from synthetic curves of
// cycles per access vs stride (volkov08 §3.5): exact and noisy, several layouts, ambiguous
// stride sets, and the inputs it must refuse.
#include "microbench/smem/bank_model.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace gpufact::microbench {
namespace {

const std::vector<int> kQuickStrides = {1, 2, 3, 4, 8, 16, 32, 64};

std::vector<BankCurvePoint> curve(const std::vector<int>& strides, BankLayout truth, double base, double per_degree,
                                  double noise, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-noise, noise);
  std::vector<BankCurvePoint> pts;
  for (int s : strides)
    pts.push_back({s, (base + per_degree * bank_conflict_degree(s, truth.banks, truth.width_bytes)) * (1 + u(gen))});
  return pts;
}

TEST(BankConflictDegree, ThirtyTwoFourByteBanks) {
  // Power-of-two strides: degree = stride up to 32, then flat (volkov08 §3.5: 2-way, 4-way, ...).
  for (int s = 1; s <= 32; s *= 2) EXPECT_EQ(bank_conflict_degree(s, 32, 4), s) << s;
  EXPECT_EQ(bank_conflict_degree(64, 32, 4), 32);
  EXPECT_EQ(bank_conflict_degree(128, 32, 4), 32);
  // Odd strides are conflict-free; in general the degree is gcd(stride, 32).
  for (int s = 1; s <= 64; ++s) EXPECT_EQ(bank_conflict_degree(s, 32, 4), std::gcd(s, 32)) << s;
  EXPECT_EQ(bank_conflict_degree(0, 32, 4), 1);  // one word: a broadcast
}

TEST(BankConflictDegree, WideBanksServeNeighbouringWordsTogether) {
  // 32 banks × 8 bytes (Kepler's 64-bit mode): stride 1 and 2 are free, stride 4 is 2-way.
  EXPECT_EQ(bank_conflict_degree(1, 32, 8), 1);
  EXPECT_EQ(bank_conflict_degree(2, 32, 8), 1);
  EXPECT_EQ(bank_conflict_degree(4, 32, 8), 2);
  EXPECT_EQ(bank_conflict_degree(64, 32, 8), 32);
  EXPECT_EQ(bank_conflict_degree(3, 32, 8), 2);  // odd strides straddle bank words
  // 16 banks (volkov08's G80): a half warp per access would see stride 1 free; a full warp
  // sees two words per bank.
  EXPECT_EQ(bank_conflict_degree(1, 16, 4, 16), 1);
  EXPECT_EQ(bank_conflict_degree(1, 16, 4), 2);
  EXPECT_THROW(bank_conflict_degree(-1, 32, 4), std::invalid_argument);
  EXPECT_THROW(bank_conflict_degree(1, 0, 4), std::invalid_argument);
  EXPECT_THROW(bank_conflict_degree(1, 32, 2), std::invalid_argument);  // word wider than a bank
}

TEST(BankInference, ExactCurveOfTodaysLayout) {
  const auto inf = infer_bank_layout(curve(kQuickStrides, {32, 4}, 0.0, 1.0, 0, 1));
  EXPECT_EQ(inf.layout.banks, 32);
  EXPECT_EQ(inf.layout.width_bytes, 4);
  EXPECT_NEAR(inf.cycles_per_degree, 1.0, 1e-9);
  EXPECT_NEAR(inf.base_cycles, 0.0, 1e-9);
  EXPECT_LT(inf.max_abs_rel_residual, 1e-9);
  EXPECT_TRUE(inf.equally_good.empty());
  EXPECT_EQ(inf.degrees, (std::vector<int>{1, 2, 1, 4, 8, 16, 32, 32}));
}

TEST(BankInference, OtherLayoutsExactAndNoisy) {
  const std::vector<int> strides = {1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};
  for (BankLayout truth : {BankLayout{32, 4}, BankLayout{16, 4}, BankLayout{64, 4}, BankLayout{32, 8},
                           BankLayout{16, 8}, BankLayout{8, 4}}) {
    for (double noise : {0.0, 0.03}) {
      for (unsigned seed = 1; seed <= 5; ++seed) {
        SCOPED_TRACE("truth " + std::to_string(truth.banks) + "x" + std::to_string(truth.width_bytes) + " noise " +
                     std::to_string(noise) + " seed " + std::to_string(seed));
        const auto inf = infer_bank_layout(curve(strides, truth, 2.0, 4.0, noise, seed));
        EXPECT_EQ(inf.layout.banks, truth.banks);
        EXPECT_EQ(inf.layout.width_bytes, truth.width_bytes);
        EXPECT_NEAR(inf.cycles_per_degree, 4.0, 4.0 * 0.1);
        EXPECT_TRUE(inf.equally_good.empty());
      }
    }
  }
}

TEST(BankInference, TodaysLayoutFromNoisyQuickCurves) {
  // What the quick preset measures on Hopper: ~1 cycle per degree, a little fixed overhead.
  for (unsigned seed = 1; seed <= 50; ++seed) {
    const auto inf = infer_bank_layout(curve(kQuickStrides, {32, 4}, 0.3, 1.0, 0.05, seed));
    EXPECT_EQ(inf.layout.banks, 32) << seed;
    EXPECT_EQ(inf.layout.width_bytes, 4) << seed;
    EXPECT_TRUE(inf.equally_good.empty()) << seed;
    EXPECT_GT(inf.max_abs_rel_residual, 0.0);
  }
}

TEST(BankInference, PowerOfTwoStridesAloneCannotTellWidthFromCount) {
  // 32 × 4 B and 16 × 8 B serve power-of-two strides alike; odd strides tell them apart.
  const auto inf = infer_bank_layout(curve({1, 2, 4, 8, 16, 32, 64}, {32, 4}, 0.0, 1.0, 0, 1));
  EXPECT_EQ(inf.layout.banks, 32);
  EXPECT_EQ(inf.layout.width_bytes, 4);
  bool sixteen_by_eight = false;
  for (const auto& l : inf.equally_good) sixteen_by_eight |= l.banks == 16 && l.width_bytes == 8;
  EXPECT_TRUE(sixteen_by_eight);
}

TEST(BankInference, RefusesCurvesItCannotExplain) {
  EXPECT_THROW(infer_bank_layout({{1, 1.0}, {2, 2.0}}), std::invalid_argument);
  EXPECT_THROW(infer_bank_layout({{1, 1.0}, {2, 0.0}, {4, 4.0}}), std::invalid_argument);
  EXPECT_THROW(infer_bank_layout({{1, 1.0}, {-2, 2.0}, {4, 4.0}}), std::invalid_argument);
  EXPECT_THROW(infer_bank_layout({{1, 1.0}, {2, NAN}, {4, 4.0}}), std::invalid_argument);
  // Flat: no layout has cycles rising with the degree... except by noise; a strictly falling
  // curve has none.
  EXPECT_THROW(infer_bank_layout({{1, 32.0}, {2, 16.0}, {4, 8.0}, {8, 4.0}, {16, 2.0}, {32, 1.0}}),
               std::invalid_argument);
  // Only odd strides: every 4-byte layout with >= 32 banks sees degree 1 throughout.
  EXPECT_THROW(infer_bank_layout({{1, 1.0}, {3, 1.0}, {5, 1.0}}, {{32, 4}, {64, 4}}), std::invalid_argument);
}

}  // namespace
}  // namespace gpufact::microbench
