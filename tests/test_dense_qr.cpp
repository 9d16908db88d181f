// Host tests (label host) of the blocked QR: qr_host_blocked against LAPACK geqrf (R and tau to
// rounding) at odd, rectangular and 1 × 1 sizes with uniform and mixed panel plans, the explicit Q
// against LAPACK orgqr, rank-deficient input, and the block-size dynamic programming on synthetic
// cost tables with a known optimum (checked by brute force), the model and the stored JSON plans.
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/dense/qr_block_plan.hpp"
#include "factorizations/dense/qr_host.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact::dense {
namespace {

template <class T>
double max_abs(const HostMatrix<T>& a) {
  double m = 0;
  for (std::int64_t j = 0; j < a.cols(); ++j)
    for (std::int64_t i = 0; i < a.rows(); ++i) m = std::max(m, std::abs(static_cast<double>(a(i, j))));
  return m;
}

// R (upper triangle) and tau of the blocked QR against LAPACK's, in units of n ε ‖A‖max.
template <class T>
void expect_matches_lapack(std::int64_t m, std::int64_t n, const std::vector<std::int64_t>& widths, std::uint64_t seed) {
  HostMatrix<T> a(m, n);
  fill_uniform(a.view(), seed);
  HostMatrix<T> ours = a, ref = a;
  std::vector<T> tau(static_cast<std::size_t>(n)), tau_ref(static_cast<std::size_t>(n));
  qr_host_blocked<T>(m, n, ours.data(), ours.ld(), tau.data(), widths);
  ASSERT_EQ(host::geqrf<T>(m, n, ref.data(), ref.ld(), tau_ref.data()), 0);
  const double scale = static_cast<double>(std::max<std::int64_t>(n, 1)) * unit_roundoff<T>() * max_abs(a) *
                       std::sqrt(static_cast<double>(m));
  double r_err = 0, v_err = 0, tau_err = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i <= j; ++i)
      r_err = std::max(r_err, std::abs(static_cast<double>(ours(i, j)) - static_cast<double>(ref(i, j))));
    for (std::int64_t i = j + 1; i < m; ++i)
      v_err = std::max(v_err, std::abs(static_cast<double>(ours(i, j)) - static_cast<double>(ref(i, j))));
    tau_err = std::max(tau_err, std::abs(static_cast<double>(tau[j]) - static_cast<double>(tau_ref[j])));
  }
  EXPECT_LT(r_err / scale, 30.0) << m << "×" << n;
  EXPECT_LT(v_err / (static_cast<double>(std::max<std::int64_t>(n, 1)) * std::sqrt(static_cast<double>(m)) * unit_roundoff<T>()), 30.0);
  EXPECT_LT(tau_err / (static_cast<double>(std::max<std::int64_t>(n, 1)) * unit_roundoff<T>()), 30.0);

  // Explicit Q: against LAPACK orgqr on LAPACK's factors, and A = QR, QᵀQ = I.
  HostMatrix<T> q = ours, q_ref = ref;
  qr_host_form_q<T>(m, n, q.data(), q.ld(), tau.data(), widths);
  ASSERT_EQ(host::orgqr<T>(m, n, n, q_ref.data(), q_ref.ld(), tau_ref.data()), 0);
  double q_err = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i)
      q_err = std::max(q_err, std::abs(static_cast<double>(q(i, j)) - static_cast<double>(q_ref(i, j))));
  EXPECT_LT(q_err / (static_cast<double>(std::max<std::int64_t>(n, 1)) * std::sqrt(static_cast<double>(m)) * unit_roundoff<T>()), 30.0);
  HostMatrix<T> r(n, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i) r(i, j) = ours(i, j);
  const QrErrors e = qr_explicit_residual<T>(a.view(), q.view(), r.view());
  const double ne = static_cast<double>(std::max<std::int64_t>(m, 1)) * unit_roundoff<T>();
  EXPECT_LT(e.factorization / ne, 30.0);
  EXPECT_LT(e.orthogonality / ne, 30.0);
}

TEST(DenseQrHost, MatchesLapackAtOddSizes) {
  expect_matches_lapack<double>(1, 1, {1}, 1);
  expect_matches_lapack<float>(1, 1, {1}, 2);
  expect_matches_lapack<double>(37, 37, uniform_qr_widths(37, 8), 3);
  expect_matches_lapack<float>(37, 37, uniform_qr_widths(37, 32), 4);
  expect_matches_lapack<double>(300, 200, uniform_qr_widths(200, 32), 5);
  expect_matches_lapack<float>(300, 200, uniform_qr_widths(200, 64), 6);
  expect_matches_lapack<double>(129, 129, uniform_qr_widths(129, 64), 7);
  expect_matches_lapack<double>(90, 1, {1}, 8);
}

TEST(DenseQrHost, MixedPanelPlan) {
  expect_matches_lapack<double>(120, 100, {7, 33, 1, 40, 19}, 9);
  expect_matches_lapack<float>(120, 100, {64, 36}, 10);
}

TEST(DenseQrHost, ZeroColumnsStillGiveAValidQr) {
  const std::int64_t m = 60, n = 45;
  HostMatrix<double> a(m, n);
  fill_uniform(a.view(), 11);
  for (const std::int64_t j : {0, 7, 20, 44})
    for (std::int64_t i = 0; i < m; ++i) a(i, j) = 0;
  HostMatrix<double> f = a;
  std::vector<double> tau(n);
  const auto widths = uniform_qr_widths(n, 16);
  qr_host_blocked<double>(m, n, f.data(), f.ld(), tau.data(), widths);
  EXPECT_EQ(tau[0], 0.0);
  HostMatrix<double> q = f, r(n, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i) r(i, j) = f(i, j);
  qr_host_form_q<double>(m, n, q.data(), q.ld(), tau.data(), widths);
  const QrErrors e = qr_explicit_residual<double>(a.view(), q.view(), r.view());
  EXPECT_LT(e.factorization / (m * unit_roundoff<double>()), 30.0);
  EXPECT_LT(e.orthogonality / (m * unit_roundoff<double>()), 30.0);
}

TEST(DenseQrHost, RejectsBadInput) {
  std::vector<double> a(100), tau(10);
  EXPECT_THROW(qr_host_blocked<double>(5, 10, a.data(), 5, tau.data(), {10}), std::invalid_argument);  // m < n
  EXPECT_THROW(qr_host_blocked<double>(10, 10, a.data(), 9, tau.data(), {10}), std::invalid_argument);  // lda
  EXPECT_THROW(qr_host_blocked<double>(10, 10, a.data(), 10, tau.data(), {4, 4}), std::invalid_argument);  // sum
  EXPECT_THROW(qr_host_blocked<double>(10, 10, a.data(), 10, tau.data(), {0, 10}), std::invalid_argument);
}

TEST(QrBlockPlan, UniformWidthsAndSteps) {
  EXPECT_EQ(uniform_qr_widths(200, 64), (std::vector<std::int64_t>{64, 64, 64, 8}));
  EXPECT_EQ(uniform_qr_widths(0, 64), (std::vector<std::int64_t>{}));
  const auto steps = qr_steps(200, uniform_qr_widths(200, 64));
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[3].j0, 192);
  EXPECT_EQ(steps[3].j1, 200);
  EXPECT_THROW(uniform_qr_widths(10, 0), std::invalid_argument);
}

// Every composition of n into candidate widths (plus a final narrower panel), by recursion.
double brute_force(std::int64_t m, std::int64_t n, std::int64_t j, const std::vector<std::int64_t>& cands,
                   const QrStageCost& cost) {
  if (j == n) return 0;
  const std::int64_t widest = *std::max_element(cands.begin(), cands.end());
  double best = std::numeric_limits<double>::infinity();
  for (const auto b : cands)
    if (b <= n - j) best = std::min(best, cost(m - j, b, n - j - b) + brute_force(m, n, j + b, cands, cost));
  if (n - j < widest) best = std::min(best, cost(m - j, n - j, 0) + brute_force(m, n, n, cands, cost));
  return best;
}

TEST(QrBlockPlan, DynamicProgrammingFindsTheKnownOptimum) {
  // Stage times by width only: three 64s (4.5) beat six 32s (6), two 96s (7) and every mix.
  const std::map<std::int64_t, double> table = {{32, 1.0}, {64, 1.5}, {96, 3.5}};
  const QrStageCost by_width = [&](std::int64_t, std::int64_t b, std::int64_t) {
    auto it = table.find(b);
    return it == table.end() ? 100.0 : it->second;
  };
  const QrBlockPlan p = plan_qr_blocks(192, 192, {32, 64, 96}, by_width);
  EXPECT_EQ(p.widths, (std::vector<std::int64_t>{64, 64, 64}));
  EXPECT_DOUBLE_EQ(p.predicted_s, 4.5);

  // Wide panels pay off only while the trailing matrix is large (the paper's observation): the
  // optimum starts wide and ends narrow.
  const QrStageCost by_size = [](std::int64_t rows, std::int64_t b, std::int64_t cols) {
    return 1e-3 * static_cast<double>(rows) * static_cast<double>(b) +
           static_cast<double>(cols) * static_cast<double>(rows) / static_cast<double>(b) * 1e-2 + 1.0;
  };
  const std::vector<std::int64_t> cands = {16, 32, 48, 64};
  const QrBlockPlan q = plan_qr_blocks(200, 176, cands, by_size);
  EXPECT_NEAR(q.predicted_s, brute_force(200, 176, 0, cands, by_size), 1e-9);
  std::int64_t sum = 0;
  for (const auto b : q.widths) sum += b;
  EXPECT_EQ(sum, 176);
  EXPECT_GE(q.widths.front(), q.widths.back());

  // n not reachable by the candidates: the last panel is narrower.
  const QrBlockPlan r = plan_qr_blocks(100, 70, {32}, by_width);
  EXPECT_EQ(r.widths, (std::vector<std::int64_t>{32, 32, 6}));
  EXPECT_THROW(plan_qr_blocks(10, 20, {32}, by_width), std::invalid_argument);
  EXPECT_THROW(plan_qr_blocks(20, 20, {}, by_width), std::invalid_argument);
}

TEST(QrBlockPlan, ModelPlansAreValidAndWidenWithN) {
  for (const char* method : {"hybrid", "gpu_resident"}) {
    const QrTimeModel model = default_qr_time_model(method, 4);
    const auto small = plan_qr_blocks(1024, 1024, default_qr_width_candidates(), model);
    const auto large = plan_qr_blocks(16384, 16384, default_qr_width_candidates(), model);
    EXPECT_NO_THROW((void)qr_steps(1024, small.widths));
    EXPECT_NO_THROW((void)qr_steps(16384, large.widths));
    EXPECT_GT(large.predicted_s, small.predicted_s);
    EXPECT_GE(large.widths.front(), small.widths.front()) << method;
  }
  EXPECT_THROW(default_qr_time_model("cusolver", 4), std::invalid_argument);
}

TEST(QrBlockPlan, JsonRoundTripAndErrors) {
  std::vector<QrBlockEntry> entries = {{"hybrid", "s", 100, 100, {{64, 36}, 0.5}}};
  const std::string text = qr_block_table_json(entries, "test").dump();
  const auto back = parse_qr_block_table(text, "memory");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].plan.widths, (std::vector<std::int64_t>{64, 36}));
  EXPECT_EQ(back[0].method, "hybrid");
  EXPECT_THROW(parse_qr_block_table("{", "x"), std::invalid_argument);
  EXPECT_THROW(parse_qr_block_table(R"({"entries": [{"method": "hybrid", "precision": "s", "m": 100, "n": 100,
                                        "widths": [64, 30]}]})", "x"), std::invalid_argument);  // sums to 94
}

TEST(QrBlockPlan, StoredTableLoadsAndIsUsed) {
  std::ifstream in(std::string(GPUFACT_SOURCE_DIR) + "/configs/tuning/qr_blocks.json");
  ASSERT_TRUE(in) << "configs/tuning/qr_blocks.json missing";
  std::stringstream text;
  text << in.rdbuf();
  const auto entries = parse_qr_block_table(text.str(), "configs/tuning/qr_blocks.json");
  ASSERT_FALSE(entries.empty());
  for (const auto& e : entries) {
    EXPECT_TRUE(e.method == "hybrid" || e.method == "gpu_resident");
    EXPECT_TRUE(e.precision == "s" || e.precision == "d");
  }
  const auto w = auto_qr_widths("hybrid", "s", 777, 777);  // not stored: from the model
  EXPECT_NO_THROW((void)qr_steps(777, w));
}

}  // namespace
}  // namespace gpufact::dense
