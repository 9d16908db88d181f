// Host tests for the tall-skinny QR baselines (anderson10 §V): the test-matrix generator, the
// explicit-Q residual, the crossover analysis, the OpenBLAS method through the method table, and
// the experiments' bad-input checks.
#include "apps/gpufact/catalog.hpp"
#include "core/bench/registry.hpp"
#include "core/errors.hpp"
#include "core/linalg/blas_types.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/tsqr_baselines/qr_methods.hpp"
#include "factorizations/tsqr_baselines/qr_summary.hpp"
#include "factorizations/tsqr_baselines/qr_test_matrices.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace gpufact::factorizations {
namespace {

TEST(QrTestMatrices, UniformIsInRangeAndNotConstant) {
  HostMatrix<float> a(257, 9);
  fill_qr_uniform(a.view(), 42);
  float lo = 2, hi = -2;
  for (std::int64_t j = 0; j < 9; ++j)
    for (std::int64_t i = 0; i < 257; ++i) {
      lo = std::min(lo, a(i, j));
      hi = std::max(hi, a(i, j));
    }
  EXPECT_GE(lo, -1.0f);
  EXPECT_LT(hi, 1.0f);
  EXPECT_LT(lo, -0.9f);
  EXPECT_GT(hi, 0.9f);
}

TEST(QrTestMatrices, ConditionedMatrixHasThePrescribedKappaInFp64) {
  for (double kappa : {1e2, 1e6, 1e10, 1e12}) {
    HostMatrix<double> a(300, 20);
    fill_qr_conditioned(a.view(), kappa, 7);
    const double measured = condition_number<double>(a.view());
    EXPECT_GT(measured, kappa / 2) << "kappa " << kappa;
    EXPECT_LT(measured, kappa * 2) << "kappa " << kappa;
  }
}

TEST(QrTestMatrices, ConditionedMatrixHasUnitNormAndFreshSeedsDiffer) {
  HostMatrix<double> a(120, 12), b(120, 12);
  fill_qr_conditioned(a.view(), 1e4, 1);
  fill_qr_conditioned(b.view(), 1e4, 2);
  HostMatrix<double> w(120, 12);
  host::lacpy(120, 12, a.data(), a.ld(), w.data(), w.ld());
  std::vector<double> s(12);
  ASSERT_EQ(host::singular_values(120, 12, w.data(), w.ld(), s.data()), 0);
  EXPECT_NEAR(s.front(), 1.0, 1e-12);
  EXPECT_NEAR(s.back(), 1e-4, 1e-14);
  EXPECT_NE(a(0, 0), b(0, 0));
}

TEST(QrTestMatrices, KappaOneAndOneColumn) {
  HostMatrix<double> a(50, 1);
  fill_qr_conditioned(a.view(), 1e8, 3);  // one column: its norm is the single singular value 1
  double sum = 0;
  for (std::int64_t i = 0; i < 50; ++i) sum += a(i, 0) * a(i, 0);
  EXPECT_NEAR(sum, 1.0, 1e-13);
  HostMatrix<double> b(40, 8);
  fill_qr_conditioned(b.view(), 1.0, 3);
  EXPECT_NEAR(condition_number<double>(b.view()), 1.0, 1e-12);
}

TEST(QrTestMatrices, RejectsWideShapesAndBadKappa) {
  HostMatrix<double> wide(5, 8), ok(8, 5);
  EXPECT_THROW(fill_qr_conditioned(wide.view(), 10.0, 1), std::invalid_argument);
  EXPECT_THROW(fill_qr_conditioned(ok.view(), 0.5, 1), std::invalid_argument);
  EXPECT_THROW(fill_qr_conditioned(ok.view(), std::numeric_limits<double>::infinity(), 1), std::invalid_argument);
}

TEST(QrTestMatrices, RequireFiniteNamesTheEntry) {
  HostMatrix<float> a(10, 3);
  fill_qr_uniform(a.view(), 5);
  EXPECT_NO_THROW(require_finite<float>(a.view(), "A"));
  a(7, 2) = std::numeric_limits<float>::quiet_NaN();
  try {
    require_finite<float>(a.view(), "A");
    FAIL() << "NaN not detected";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("NaN entry at row 7, column 2"), std::string::npos) << e.what();
  }
  a(7, 2) = -std::numeric_limits<float>::infinity();
  EXPECT_THROW(require_finite<float>(a.view(), "A"), std::invalid_argument);
}

// Q = the first n columns of I, R known: A = QR exactly; then Q's column 0 scaled by (1 + δ).
TEST(QrExplicitResidual, KnownAnswers) {
  const std::int64_t m = 6, n = 3;
  HostMatrix<double> q(m, n), r(n, n), a(m, n);
  const double rv[3][3] = {{2, -1, 4}, {0, 3, 1}, {0, 0, -5}};
  for (std::int64_t j = 0; j < n; ++j) {
    q(j, j) = 1;
    for (std::int64_t i = 0; i < n; ++i) r(i, j) = a(i, j) = rv[i][j];
  }
  auto e = qr_explicit_residual<double>(a.view(), q.view(), r.view());
  EXPECT_EQ(e.factorization, 0.0);
  EXPECT_EQ(e.orthogonality, 0.0);
  EXPECT_EQ(e.orthogonality_2, 0.0);
  // Garbage below R's diagonal is not read.
  r(2, 0) = std::numeric_limits<double>::quiet_NaN();
  r(1, 0) = 100;
  e = qr_explicit_residual<double>(a.view(), q.view(), r.view());
  EXPECT_EQ(e.factorization, 0.0);
  const double delta = 1e-3;
  q(0, 0) = 1 + delta;
  e = qr_explicit_residual<double>(a.view(), q.view(), r.view());
  // A − QR = −δ R(0, :) in row 0: max column |δ R(0, j)| = 4δ; ‖A‖₁ = max(2, 4, 10) = 10.
  EXPECT_NEAR(e.factorization, 4 * delta / 10, 1e-15);
  EXPECT_NEAR(e.orthogonality, 2 * delta + delta * delta, 1e-15);
  EXPECT_NEAR(e.orthogonality_2, 2 * delta + delta * delta, 1e-15);  // I − QᵀQ has one nonzero
}

TEST(QrExplicitResidual, NanInQFailsAndShapesAreChecked) {
  HostMatrix<float> a(4, 2), q(4, 2), r(2, 2), bad(3, 2);
  q(0, 0) = q(1, 1) = 1;
  q(3, 1) = std::numeric_limits<float>::quiet_NaN();
  const auto e = qr_explicit_residual<float>(a.view(), q.view(), r.view());
  EXPECT_FALSE(std::isfinite(e.factorization) && std::isfinite(e.orthogonality));
  EXPECT_FALSE(std::isfinite(e.orthogonality_2));
  EXPECT_THROW(qr_explicit_residual<float>(a.view(), bad.view(), r.view()), std::invalid_argument);
}

TEST(QrExplicitResidual, LapackQrOfATallMatrixIsWithinTheRule) {
  // 20000 rows exercise the pairwise Gram summation over several row chunks.
  const std::int64_t m = 20000, n = 16;
  HostMatrix<double> a(m, n), q(m, n), r(n, n);
  fill_qr_uniform(a.view(), 11);
  host::lacpy(m, n, a.data(), a.ld(), q.data(), q.ld());
  std::vector<double> tau(n);
  ASSERT_EQ(host::geqrf(m, n, q.data(), q.ld(), tau.data()), 0);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i) r(i, j) = q(i, j);
  ASSERT_EQ(host::orgqr(m, n, n, q.data(), q.ld(), tau.data()), 0);
  const auto e = qr_explicit_residual<double>(a.view(), q.view(), r.view());
  const double unit = std::sqrt(double(n)) * unit_roundoff<double>();
  EXPECT_LT(e.factorization / unit, 10.0);
  EXPECT_LT(e.orthogonality / unit, 10.0);
  EXPECT_GT(e.orthogonality, 0.0);
  // A symmetric E has ‖E‖₂ ≤ ‖E‖₁; here the rounding errors keep the 2-norm well inside.
  EXPECT_GT(e.orthogonality_2, 0.0);
  EXPECT_LE(e.orthogonality_2, e.orthogonality * (1 + 1e-12));
}

TEST(QrCrossover, InterpolatesWhereTheSpeedupFallsToOne) {
  // Speedup 4 at 1024, 0.25 at 4096: log-log midpoint 2048.
  auto x = crossover_width({{4096, 0.25}, {64, 10.0}, {1024, 4.0}});
  ASSERT_TRUE(x.has_value());
  EXPECT_NEAR(x->width, 2048.0, 1e-9);
  EXPECT_EQ(x->last_faster, 1024);
  EXPECT_EQ(x->first_slower, 4096);
  // A dip below 1 that recovers is not the crossover: only the last one counts.
  x = crossover_width({{64, 2.0}, {128, 0.5}, {256, 2.0}, {512, 0.5}});
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->last_faster, 256);
  EXPECT_FALSE(crossover_width({{64, 2.0}, {128, 1.5}}).has_value());    // always faster
  EXPECT_FALSE(crossover_width({{64, 0.5}, {128, 0.25}}).has_value());   // never faster
  EXPECT_FALSE(crossover_width({}).has_value());
}

TEST(QrMethods, TableNamesFlopsAndOpenblasRun) {
  const auto names = qr_method_names();
  ASSERT_EQ(names, (std::vector<std::string>{"cusolver", "blas2_gpu", "caqr", "caqr_blocked", "tsqr_register",
                                             "caqr_register", "householder_cluster", "openblas", "cholqr2"}));
  EXPECT_EQ(qr_method<float>("tsqr_register").max_width, 32);
  EXPECT_TRUE(qr_method<double>("householder_cluster").needs.gpu);
  EXPECT_TRUE(static_cast<bool>(qr_method<double>("householder_cluster").unsupported));  // too tall for a cluster
  EXPECT_EQ(qr_method<float>("caqr").max_width, 0);
  EXPECT_THROW(qr_method<float>("nope"), std::invalid_argument);
  // The nb axis reaches the methods with a panel width; the others skip when it is set.
  for (const auto& m : qr_methods<float>())
    EXPECT_EQ(static_cast<bool>(m.prepare_nb), m.name == "householder_cluster") << m.name;
  for (const char* key : {"anderson10.fig8", "anderson10.fig9"}) {
    const AxisSpec* nb = experiment_catalog().find(key)->axis("nb");
    ASSERT_NE(nb, nullptr) << key;
    EXPECT_EQ(nb->defaults, "0") << key << ": each method's own width unless asked";
  }
  EXPECT_DOUBLE_EQ(qr_explicit_flops(8192, 64), 2 * (2.0 * 8192 * 64 * 64 - 2.0 * 64 * 64 * 64 / 3));
  // 110592 × 100 FP32 on an H100 (66.9 TFLOP/s FMA peak, 3352 GB/s): 4.42 GFLOP take 66 µs, the
  // 88.5 MB of A, Q and R 26 µs, so the flops set the roofline; a 10⁶ × 10 matrix is DRAM-bound.
  const QrRoofline tall = qr_explicit_roofline(110592, 100, 4, 66900, 3352);
  EXPECT_NEAR(tall.flop_seconds, 4.42235e9 / 66.9e12, 1e-10);
  EXPECT_NEAR(tall.dram_seconds, (2.0 * 110592 * 100 + 100 * 100) * 4 / 3352e9, 1e-12);
  EXPECT_EQ(tall.seconds(), tall.flop_seconds);
  const QrRoofline thin = qr_explicit_roofline(1000000, 10, 4, 66900, 3352);
  EXPECT_GT(thin.dram_seconds, thin.flop_seconds);
  EXPECT_EQ(thin.seconds(), thin.dram_seconds);
  EXPECT_EQ(qr_explicit_roofline(1000, 10, 8, 0, 0).seconds(), 0.0);  // no peak known: no roofline
  const auto& openblas = qr_method<float>("openblas");
  EXPECT_FALSE(openblas.needs.gpu);
  for (std::int64_t n : {1, 7, 33}) {
    const std::int64_t m = 1000;
    HostMatrix<float> a(m, n), q(m, n), r(n, n);
    fill_qr_uniform(a.view(), 100 + n);
    std::fill(q.data(), q.data() + m * n, std::numeric_limits<float>::quiet_NaN());
    std::fill(r.data(), r.data() + n * n, std::numeric_limits<float>::quiet_NaN());
    auto plan = openblas.prepare(m, n);
    plan->run(a.data(), m, q.data(), m, r.data(), n, nullptr);
    EXPECT_EQ(plan->failure(nullptr), "");
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = j + 1; i < n; ++i) EXPECT_EQ(r(i, j), 0.0f);
    const auto e = qr_explicit_residual<float>(a.view(), q.view(), r.view());
    const double unit = std::sqrt(double(n)) * unit_roundoff<float>();
    EXPECT_LT(e.factorization / unit, 10.0) << "n = " << n;
    EXPECT_LT(e.orthogonality / unit, 10.0) << "n = " << n;
  }
}

TEST(QrExperiments, RegisteredWithShapeChecks) {
  const auto& reg = experiment_catalog();
  for (const char* key : {"anderson10.fig8", "anderson10.fig9", "anderson10.conditioning"}) {
    const Experiment* e = reg.find(key);
    ASSERT_NE(e, nullptr) << key;
    EXPECT_EQ(e->needs.gpus, 0) << key << ": the OpenBLAS method runs without a GPU";
    ASSERT_TRUE(e->validate);
    AxisPoint wide;
    wide.set(*e->axis("m"), std::int64_t{100});
    wide.set(*e->axis("n"), std::int64_t{101});
    if (e->axis("kappa")) wide.set(*e->axis("kappa"), 1e4);
    try {
      e->validate(wide);
      FAIL() << key << ": n > m accepted";
    } catch (const UsageError& err) {
      EXPECT_NE(std::string(err.what()).find("axis 'n'"), std::string::npos) << err.what();
    }
  }
  const Experiment* fig9 = reg.find("anderson10.fig9");
  AxisPoint p;
  p.set(*fig9->axis("m"), std::int64_t{1000000});
  p.set(*fig9->axis("n"), std::int64_t{100});
  EXPECT_FALSE(fig9->applies(p));
}

}  // namespace
}  // namespace gpufact::factorizations
