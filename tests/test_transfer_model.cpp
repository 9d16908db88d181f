// The volkov08 §3.2 transfer model fit on synthetic data with known α and β: exact, noisy, with
// a negative-intercept fit, and the inputs it must refuse.
#include "microbench/transfer/transfer_model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace gpufact::microbench {
namespace {

std::vector<TransferPoint> eq1_curve(double alpha, double beta, double noise, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-noise, noise);
  std::vector<TransferPoint> pts;
  for (double bytes = 1; bytes <= 1024.0 * 1024 * 1024; bytes *= 4)
    pts.push_back({bytes, (alpha + bytes / beta) * (1 + u(gen))});
  return pts;
}

TEST(TransferModel, RecoversThePapersEquationExactly) {
  // volkov08 eq. 1: 15 µs + bytes / 3.3 GB/s.
  const auto fit = fit_latency_bandwidth(eq1_curve(15e-6, 3.3e9, 0, 1));
  EXPECT_NEAR(fit.alpha_s, 15e-6, 1e-15);
  EXPECT_NEAR(fit.beta_bytes_per_s / 3.3e9, 1.0, 1e-9);
  EXPECT_NEAR(fit.n_half_bytes, 15e-6 * 3.3e9, 1e-3);
  EXPECT_LT(fit.max_abs_rel_residual, 1e-9);
  EXPECT_FALSE(fit.alpha_clamped);
  EXPECT_EQ(fit.rel_residuals.size(), 16u);
  EXPECT_NEAR(fit.predict_seconds(3.3e9), 1.0 + 15e-6, 1e-12);
}

TEST(TransferModel, RecoversAModernLinkFromNoisyData) {
  // A Gen5 x16 link: ~2 µs + bytes / 55 GB/s, each time off by up to ±3%.
  for (unsigned seed = 1; seed <= 20; ++seed) {
    const auto fit = fit_latency_bandwidth(eq1_curve(2e-6, 55e9, 0.03, seed));
    EXPECT_NEAR(fit.alpha_s / 2e-6, 1.0, 0.05) << "seed " << seed;
    EXPECT_NEAR(fit.beta_bytes_per_s / 55e9, 1.0, 0.05) << "seed " << seed;
    EXPECT_LE(fit.max_abs_rel_residual, 0.07) << "seed " << seed;
    EXPECT_GE(fit.max_abs_rel_residual, 0.005) << "noise must show in the residuals";
  }
}

TEST(TransferModel, ResidualsAreRelativeAndSigned) {
  auto pts = eq1_curve(10e-6, 10e9, 0, 3);
  pts.push_back({1e6, 2 * (10e-6 + 1e6 / 10e9)});  // one point twice as slow as the model
  const auto fit = fit_latency_bandwidth(pts);
  ASSERT_EQ(fit.rel_residuals.size(), pts.size());
  EXPECT_GT(fit.rel_residuals.back(), 0.3);  // measured above the model
  EXPECT_NEAR(fit.max_abs_rel_residual, std::abs(fit.rel_residuals.back()), 1e-12);
}

TEST(TransferModel, NegativeInterceptIsClampedToZero) {
  // Pure bandwidth with small sizes measured too fast: the free fit would give α < 0.
  std::vector<TransferPoint> pts = {{1e3, 0.5e-7}, {1e6, 1e-4}, {1e8, 1e-2}};
  const auto fit = fit_latency_bandwidth(pts);
  EXPECT_TRUE(fit.alpha_clamped);
  EXPECT_EQ(fit.alpha_s, 0.0);
  // With α = 0 the relative least squares gives β = Σrᵢ² / Σrᵢ over the points' rates rᵢ = bytes/time:
  // rates 20, 10, 10 GB/s give 15 GB/s.
  EXPECT_NEAR(fit.beta_bytes_per_s / 15e9, 1.0, 1e-12);
  EXPECT_EQ(fit.n_half_bytes, 0.0);
}

TEST(TransferModel, RefusesDegenerateInput) {
  EXPECT_THROW(fit_latency_bandwidth({}), std::invalid_argument);
  EXPECT_THROW(fit_latency_bandwidth({{1024, 1e-5}}), std::invalid_argument);
  EXPECT_THROW(fit_latency_bandwidth({{1024, 1e-5}, {1024, 1.1e-5}, {1024, 0.9e-5}}), std::invalid_argument);
  EXPECT_THROW(fit_latency_bandwidth({{1, 1e-5}, {1024, 0}}), std::invalid_argument);
  EXPECT_THROW(fit_latency_bandwidth({{1, 1e-5}, {1024, -1e-5}}), std::invalid_argument);
  EXPECT_THROW(fit_latency_bandwidth({{1, 1e-5}, {1024, NAN}}), std::invalid_argument);
  EXPECT_THROW(fit_latency_bandwidth({{-1, 1e-5}, {1024, 2e-5}}), std::invalid_argument);
  // Time falling with size: no bandwidth term.
  EXPECT_THROW(fit_latency_bandwidth({{1, 2e-5}, {1e6, 1e-5}, {1e8, 0.5e-5}}), std::invalid_argument);
}

TEST(PcieLink, RatesPerGenerationAndWidth) {
  EXPECT_NEAR(pcie_link_gbs(1, 16), 4.0, 1e-12);  // volkov08 §3.2: PCIe 1.1 x16 bounds the link by 4 GB/s
  EXPECT_NEAR(pcie_link_gbs(2, 16), 8.0, 1e-12);
  EXPECT_NEAR(pcie_link_gbs(3, 16), 15.754, 1e-3);
  EXPECT_NEAR(pcie_link_gbs(4, 16), 31.508, 1e-3);
  EXPECT_NEAR(pcie_link_gbs(5, 16), 63.015, 1e-3);
  EXPECT_NEAR(pcie_link_gbs(5, 8), pcie_link_gbs(5, 16) / 2, 1e-12);
  EXPECT_EQ(pcie_link_gbs(0, 16), 0.0);
  EXPECT_EQ(pcie_link_gbs(7, 16), 0.0);
  EXPECT_EQ(pcie_link_gbs(5, 0), 0.0);
}

TEST(PcieLink, Asymmetry) {
  EXPECT_EQ(relative_asymmetry(50, 50), 0.0);
  EXPECT_NEAR(relative_asymmetry(40, 50), 0.2, 1e-12);
  EXPECT_NEAR(relative_asymmetry(50, 40), 0.2, 1e-12);
  EXPECT_EQ(relative_asymmetry(0, 0), 0.0);
}

}  // namespace
}  // namespace gpufact::microbench
