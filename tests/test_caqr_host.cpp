// The host CAQR reference (factorizations/caqr/caqr_host.hpp) against LAPACK: ‖A − QR‖₂/(‖A‖₂ √n ε)
// and ‖I − QᵀQ‖₂/(√n ε) below 10 (caqr_accuracy.hpp), MAGMA's 1-norm residuals below 30, R equal to geqrf's R up to row signs,
// the tree schedule's shape, the LAPACK-layout reflectors reproducing Q, and the bad inputs.
#include "core/linalg/blas_types.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/caqr/caqr_accuracy.hpp"
#include "factorizations/caqr/caqr_host.hpp"
#include "factorizations/caqr/caqr_schedule.hpp"

#include <gtest/gtest.h>
#include <lapacke.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace gpufact::factorizations {
namespace {

constexpr double kTolerance = 10.0;  // in units of √n ε (issue 6)

TEST(CaqrSchedule, QuadTreeFor64x16Blocks) {
  const auto s = make_caqr_schedule(1024, 16, {64, 16});
  EXPECT_EQ(s.fan_in, 4);
  ASSERT_EQ(s.panels.size(), 1u);
  const auto& p = s.panels[0];
  EXPECT_EQ(p.blocks, 16);
  ASSERT_EQ(p.levels.size(), 2u);
  EXPECT_EQ(p.levels[0].nodes, 4);
  EXPECT_EQ(p.levels[0].child_stride, 64);
  EXPECT_EQ(p.levels[1].nodes, 1);
  EXPECT_EQ(p.levels[1].child_stride, 256);
  EXPECT_EQ(s.tau_count, (16 + 4 + 1) * 16);
}

TEST(CaqrSchedule, OddShapesRedrawTheGridEachPanel) {
  const auto s = make_caqr_schedule(1000, 20, {64, 16});
  ASSERT_EQ(s.panels.size(), 2u);
  EXPECT_EQ(s.panels[0].last_block_rows, 1000 - 15 * 64);
  EXPECT_EQ(s.panels[1].col0, 16);
  EXPECT_EQ(s.panels[1].width, 4);
  EXPECT_EQ(s.panels[1].rows, 984);
  EXPECT_EQ(s.panels[1].blocks, 16);
  // A 32×32 block holds one R: the tree still pairs R's (fan-in 2).
  EXPECT_EQ(make_caqr_schedule(256, 32, {32, 32}).fan_in, 2);
  // A short last block (5 rows < w) passes a 5-row R up the tree.
  const auto t = make_caqr_schedule(64 * 4 + 5, 16, {64, 16});
  EXPECT_EQ(t.panels[0].levels[0].last_child_rows, 5);
  EXPECT_EQ(t.panels[0].levels[0].last_node_rows, 5);  // node 1 has the one short child
}

TEST(CaqrSchedule, RejectsBadShapes) {
  EXPECT_THROW(make_caqr_schedule(10, 11, {64, 16}), std::invalid_argument);
  EXPECT_THROW(make_caqr_schedule(10, 0, {64, 16}), std::invalid_argument);
  EXPECT_THROW(make_caqr_schedule(100, 10, {8, 16}), std::invalid_argument);
  EXPECT_THROW(parse_block_shape("64by16"), std::invalid_argument);
  EXPECT_EQ(parse_block_shape("128x8").rows, 128);
  EXPECT_EQ(parse_block_shape("128x8").cols, 8);
  EXPECT_EQ(parse_block_shape("128x8").fan_in, 0);
  EXPECT_EQ(parse_block_shape("256x128f4").fan_in, 4);
  EXPECT_EQ(parse_block_shape("256x128f4").label(), "256x128f4");
  EXPECT_EQ(parse_block_shape("256x128f4").kernel_label(), "256x128");
  EXPECT_THROW(parse_block_shape("256x128f"), std::invalid_argument);
  EXPECT_THROW(parse_block_shape("256x128f1"), std::invalid_argument);
  EXPECT_THROW(parse_block_shape("256xf4"), std::invalid_argument);
  EXPECT_THROW(parse_block_shape("256x128f4x"), std::invalid_argument);
}

TEST(CaqrSchedule, AnExplicitFanInGivesAShallowTree) {
  // 110592×100 on 256×128 blocks: 432 R's; the paper's fan-in 2 needs 9 levels, fan-in 8 three.
  EXPECT_EQ(make_caqr_schedule(110592, 100, {256, 128}).panels[0].levels.size(), 9u);
  const auto s = make_caqr_schedule(110592, 100, {256, 128, 8});
  EXPECT_EQ(s.fan_in, 8);
  const auto& p = s.panels[0];
  EXPECT_EQ(p.blocks, 432);
  ASSERT_EQ(p.levels.size(), 3u);
  EXPECT_EQ(p.levels[0].nodes, 54);
  EXPECT_EQ(p.levels[1].nodes, 7);
  EXPECT_EQ(p.levels[1].child_stride, 256 * 8);
  EXPECT_EQ(p.levels[2].nodes, 1);
  EXPECT_EQ(p.levels[2].children, 7);
  EXPECT_EQ(s.tau_count, (432 + 54 + 7 + 1) * 128);
}

TEST(CaqrFlops, HouseholderApplyCount) {
  // One reflector of length 10 on 3 columns: a dot and an axpy of 10 each, 4·3·10.
  EXPECT_DOUBLE_EQ(householder_apply_flops(10, 1, 3), 120.0);
  EXPECT_DOUBLE_EQ(householder_apply_flops(10, 2, 1), 4.0 * (10 + 9));
  EXPECT_DOUBLE_EQ(qr_flops(100, 10), 2.0 * 100 * 100 - 2000.0 / 3);
}

template <class T>
struct Factored {
  HostMatrix<T> a, f, q, r;
  std::vector<T> tau;
  CaqrSchedule s;
};

template <class T>
Factored<T> factor(HostMatrix<T> a, CaqrBlockShape shape) {
  Factored<T> out;
  out.s = make_caqr_schedule(a.rows(), a.cols(), shape);
  out.a = a;
  out.f = a;
  out.tau = caqr_host_factor<T>(out.f.view(), out.s);
  out.q = HostMatrix<T>(a.rows(), a.cols());
  for (std::int64_t j = 0; j < a.cols(); ++j)
    for (std::int64_t i = 0; i < a.rows(); ++i) out.q(i, j) = std::nan("");
  caqr_host_form_q<T>(out.f.view(), out.s, out.tau.data(), out.q.view());
  out.r = caqr_extract_r<T>(out.f.view());
  return out;
}

template <class T>
void expect_valid_qr(const Factored<T>& f) {
  const auto acc = qr_accuracy<T>(f.a.view(), f.q.view(), f.r.view());
  EXPECT_LE(acc.factorization, kTolerance) << "‖A−QR‖₂/(‖A‖₂√nε)";
  EXPECT_LE(acc.orthogonality, kTolerance) << "‖I−QᵀQ‖₂/(√nε)";
  const auto e = qr_explicit_residual<T>(f.a.view(), f.q.view(), f.r.view());
  const double m_eps = static_cast<double>(f.a.rows()) * unit_roundoff<T>();
  EXPECT_LE(e.factorization / m_eps, 30.0) << "‖A−QR‖₁/(m‖A‖₁ε)";
  EXPECT_LE(e.orthogonality / m_eps, 30.0) << "‖I−QᵀQ‖₁/(mε)";
}

// R against geqrf's R: equal up to the sign of each row.
template <class T>
void expect_r_matches_lapack(const Factored<T>& f) {
  HostMatrix<T> l = f.a;
  std::vector<T> tau(static_cast<std::size_t>(f.a.cols()));
  ASSERT_EQ(host::geqrf<T>(l.rows(), l.cols(), l.data(), l.ld(), tau.data()), 0);
  const std::int64_t n = f.a.cols();
  double worst = 0, scale = host::lange<T>('M', f.a.rows(), n, f.a.data(), f.a.ld());
  for (std::int64_t i = 0; i < n; ++i) {
    const T sign = (f.r(i, i) < 0) == (l(i, i) < 0) ? T(1) : T(-1);
    for (std::int64_t j = i; j < n; ++j)
      worst = std::max(worst, std::abs(static_cast<double>(f.r(i, j) - sign * l(i, j))));
  }
  EXPECT_LE(worst / (scale * std::sqrt(static_cast<double>(f.a.rows())) * unit_roundoff<T>()),
            100.0 * std::sqrt(static_cast<double>(n)));
}

template <class T>
HostMatrix<T> random_matrix(std::int64_t m, std::int64_t n, std::uint64_t seed) {
  HostMatrix<T> a(m, n);
  fill_uniform<T>(a.view(), seed);
  return a;
}

template <class T>
class CaqrHost : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CaqrHost, Precisions);

TYPED_TEST(CaqrHost, SmallAndOddShapesMatchLapack) {
  using T = TypeParam;
  struct Case { std::int64_t m, n; CaqrBlockShape shape; };
  const Case cases[] = {{64, 16, {64, 16}},   {1024, 16, {64, 16}}, {1000, 37, {64, 16}}, {197, 16, {64, 16}},
                        {300, 300, {64, 16}}, {129, 1, {64, 16}},   {77, 5, {128, 8}},    {2048, 24, {128, 8}},
                        {500, 64, {32, 32}},  {333, 33, {32, 32}},  {45, 45, {8, 8}},     {1031, 100, {256, 32}},
                        {700, 70, {16, 4}},   {96, 96, {256, 128}}, {5000, 10, {256, 16}},
                        // wide, shallow trees (explicit fan-in), short last blocks and nodes
                        {5000, 10, {256, 16, 7}}, {3000, 40, {64, 32, 5}}, {20000, 16, {1024, 16, 3}},
                        {1031, 100, {128, 128, 2}}, {2600, 24, {128, 32, 9}}};
  std::uint64_t seed = 11;
  for (const auto& c : cases) {
    SCOPED_TRACE(std::to_string(c.m) + "×" + std::to_string(c.n) + " blocks " + c.shape.label());
    const auto f = factor<T>(random_matrix<T>(c.m, c.n, ++seed), c.shape);
    expect_valid_qr(f);
    expect_r_matches_lapack(f);
  }
}

TYPED_TEST(CaqrHost, RankDeficientAndZeroColumnsGiveAValidQr) {
  using T = TypeParam;
  auto a = random_matrix<T>(400, 20, 7);
  for (std::int64_t i = 0; i < a.rows(); ++i) {
    a(i, 3) = T(0);          // a zero column
    a(i, 7) = a(i, 2);       // a repeated column
    a(i, 19) = T(0);         // a zero last column
  }
  const auto f = factor<T>(a, {64, 16});
  expect_valid_qr(f);
  // Column 3 is zero below the diagonal in every block after columns 0–2 were eliminated only
  // up to rounding, but the first panel's tau of a zero column in the first level is exactly 0
  // when everything below is zero: check the all-zero matrix, where every tau must be 0.
  HostMatrix<T> zero(200, 5);
  const auto z = factor<T>(zero, {64, 16});
  for (T t : z.tau) EXPECT_EQ(t, T(0));
  expect_valid_qr(z);
  for (std::int64_t j = 0; j < 5; ++j)
    for (std::int64_t i = 0; i < 200; ++i) EXPECT_EQ(z.q(i, j), i == j ? T(1) : T(0));
}

TYPED_TEST(CaqrHost, ApplyQtThenQIsTheIdentityAndQtAGivesR) {
  using T = TypeParam;
  const auto f = factor<T>(random_matrix<T>(700, 40, 3), {64, 16});
  HostMatrix<T> c = f.a;
  caqr_host_apply_q<T>(f.f.view(), f.s, f.tau.data(), c.view(), true);  // QᵀA = [R; 0]
  double worst = 0;
  for (std::int64_t j = 0; j < 40; ++j)
    for (std::int64_t i = 0; i < 700; ++i)
      worst = std::max(worst, std::abs(static_cast<double>(c(i, j) - (i <= j ? f.r(i, j) : T(0)))));
  EXPECT_LE(worst, 1000 * unit_roundoff<T>() * 40);
}

TYPED_TEST(CaqrHost, LapackLayoutReflectorsReproduceQ) {
  using T = TypeParam;
  const auto f = factor<T>(random_matrix<T>(600, 20, 5), {64, 16});
  const auto sets = caqr_lapack_reflectors<T>(f.f.view(), f.s, f.tau.data());
  HostMatrix<T> q(600, 20);
  for (std::int64_t j = 0; j < 20; ++j) q(j, j) = T(1);
  for (auto e = sets.rbegin(); e != sets.rend(); ++e) {
    const auto rows = static_cast<lapack_int>(e->rows.size());
    HostMatrix<T> g(rows, 20);
    for (std::int64_t j = 0; j < 20; ++j)
      for (lapack_int r = 0; r < rows; ++r) g(r, j) = q(e->rows[static_cast<std::size_t>(r)], j);
    const auto k = static_cast<lapack_int>(e->tau.size());
    lapack_int info;
    if constexpr (std::is_same_v<T, float>)
      info = LAPACKE_sormqr(LAPACK_COL_MAJOR, 'L', 'N', rows, 20, k, e->v.data(), static_cast<lapack_int>(e->v.ld()),
                            e->tau.data(), g.data(), static_cast<lapack_int>(g.ld()));
    else
      info = LAPACKE_dormqr(LAPACK_COL_MAJOR, 'L', 'N', rows, 20, k, e->v.data(), static_cast<lapack_int>(e->v.ld()),
                            e->tau.data(), g.data(), static_cast<lapack_int>(g.ld()));
    ASSERT_EQ(info, 0);
    for (std::int64_t j = 0; j < 20; ++j)
      for (lapack_int r = 0; r < rows; ++r) q(e->rows[static_cast<std::size_t>(r)], j) = g(r, j);
  }
  double worst = 0;
  for (std::int64_t j = 0; j < 20; ++j)
    for (std::int64_t i = 0; i < 600; ++i) worst = std::max(worst, std::abs(static_cast<double>(q(i, j) - f.q(i, j))));
  EXPECT_LE(worst, 100 * unit_roundoff<T>());
}

}  // namespace
}  // namespace gpufact::factorizations

#include "factorizations/caqr/caqr_tuning.hpp"

namespace gpufact::factorizations {
namespace {

TEST(CaqrTuning, NearestEntryOfTheSamePrecision) {
  const std::string table = R"({"entries": [
    {"precision": "s", "m": 8192, "n": 64, "shape": "64x16", "reduction": "register_serial"},
    {"precision": "s", "m": 110592, "n": 100, "shape": "256x128", "reduction": "smem_combined"},
    {"precision": "d", "m": 110592, "n": 100, "shape": "256x64"}]})";
  const auto t = caqr_tuning_from_json(table, 100000, 90, 's');
  ASSERT_TRUE(t);
  EXPECT_EQ(t->shape.label(), "256x128");
  EXPECT_EQ(t->reduction, "smem_combined");
  EXPECT_EQ(caqr_tuning_from_json(table, 8000, 70, 's')->shape.label(), "64x16");
  EXPECT_EQ(caqr_tuning_from_json(table, 8000, 70, 'd')->shape.label(), "256x64");
  EXPECT_FALSE(caqr_tuning_from_json(R"({"entries": []})", 10, 10, 's'));
  EXPECT_THROW(caqr_tuning_from_json("{", 10, 10, 's'), std::invalid_argument);
  EXPECT_THROW(caqr_tuning_from_json(R"({"rows": 1})", 10, 10, 's'), std::invalid_argument);
}

TEST(CaqrTuning, DefaultIsAWholeWidthPanelWithAShallowTreeWhileItFits) {
  // 1M×10: 977 blocks of 1024 rows; fan-in ≤ 138 reaches them in 2 levels, so 32 suffices.
  EXPECT_EQ(caqr_max_tree_fan_in(10, 's'), 138);
  EXPECT_EQ(caqr_max_tree_fan_in(16, 's'), 75);
  EXPECT_EQ(caqr_default_tuning(1000000, 10, 's').shape.label(), "1024x16f32");
  // 110592×100: 432 blocks; a 100-wide stack fits 5 R's (4 levels instead of 9).
  EXPECT_EQ(caqr_max_tree_fan_in(128, 's'), 3);
  EXPECT_EQ(caqr_max_tree_fan_in(100, 's'), 5);
  EXPECT_EQ(caqr_default_tuning(110592, 100, 's').shape.label(), "256x128f5");
  EXPECT_EQ(caqr_default_tuning(110592, 100, 'd').shape.label(), "64x16");
  EXPECT_EQ(caqr_default_tuning(8192, 512, 's').shape.label(), "64x16");
  EXPECT_EQ(caqr_default_tuning(8192, 64, 's').shape.label(), "256x64f6");  // 32 blocks, ≤ 10: 2 levels
  EXPECT_EQ(caqr_default_tuning(8192, 16, 's').shape.label(), "256x32f32");  // 32 blocks, ≤ 75: one level
}

TEST(CaqrTuning, BalancedFanInKeepsTheDepthWithSmallerNodes) {
  EXPECT_EQ(caqr_balanced_fan_in(1, 100), 2);
  EXPECT_EQ(caqr_balanced_fan_in(977, 113), 32);  // 2 levels: 32² = 1024 ≥ 977
  EXPECT_EQ(caqr_balanced_fan_in(100, 113), 100);  // 1 level needs all 100
  EXPECT_EQ(caqr_balanced_fan_in(432, 3), 3);
  EXPECT_EQ(caqr_balanced_fan_in(64, 8), 8);       // 2 levels
  EXPECT_EQ(caqr_balanced_fan_in(65, 8), 5);       // 3 levels: 5³ = 125 ≥ 65 > 4³
}

}  // namespace
}  // namespace gpufact::factorizations
