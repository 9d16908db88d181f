// The host TSLU (factorizations/dense/tslu_host.hpp, the GPU kernel's replay): PA = LU with small
// scaled residuals at odd shapes (m < b, m not a multiple of the row block, b = 1, several tree
// levels), the pivot rows a permutation's first min(m, b) rows that the interchanges reproduce,
// a single row block equal to LAPACK's partial pivoting, and info on an exactly zero column.
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/dense/lu_schedule.hpp"
#include "factorizations/dense/tslu_host.hpp"
#include "kernels/lu/tslu.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>
#include <vector>

namespace gpufact::dense {
namespace {

constexpr double kTolerance = 30.0;

template <class T>
void check_shape(std::int64_t m, std::int64_t b) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s" : "d") + " m=" + std::to_string(m) + " b=" + std::to_string(b));
  const std::int64_t lda = m + 3;
  HostMatrix<T> a(m, b, lda);
  fill_uniform(a.view(), static_cast<std::uint64_t>(m * 131 + b));
  const auto rows = tslu_pivot_rows<T>(m, b, a.data(), lda);
  const std::int64_t k = std::min(m, b);
  ASSERT_EQ(static_cast<std::int64_t>(rows.size()), k);
  const std::set<std::int64_t> distinct(rows.begin(), rows.end());
  EXPECT_EQ(static_cast<std::int64_t>(distinct.size()), k);
  for (auto r : rows) {
    EXPECT_GE(r, 0);
    EXPECT_LT(r, m);
  }
  HostMatrix<T> f = a;
  std::vector<std::int64_t> ipiv(static_cast<std::size_t>(k), -7);
  EXPECT_EQ(tslu_host<T>(m, b, f.data(), lda, ipiv.data()), 0);
  // The interchanges bring pivot row k to position k.
  std::vector<std::int64_t> perm(static_cast<std::size_t>(m));
  std::iota(perm.begin(), perm.end(), 0);
  for (std::int64_t j = 0; j < k; ++j) {
    ASSERT_GE(ipiv[j], j + 1);
    ASSERT_LE(ipiv[j], m);
    std::swap(perm[j], perm[ipiv[j] - 1]);
    EXPECT_EQ(perm[j], rows[j]) << "j=" << j;
  }
  std::vector<int> ipiv32(ipiv.begin(), ipiv.end());
  EXPECT_LT(lu_residual<T>(a.view(), f.view(), ipiv32.data()), kTolerance);
}

TEST(TsluHost, ResidualAndPivotsAtOddShapes) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {
      {1, 1}, {37, 5}, {20, 32}, {129, 8}, {300, 32}, {1000, 64}, {1000, 1}, {5000, 32}, {3001, 17}, {64, 64},
      {257, 33}, {2000, 16}, {5000, 48}, {20000, 64}};
  for (auto [m, b] : shapes) {
    check_shape<float>(m, b);
    check_shape<double>(m, b);
  }
}

// Up to kTsluBlockRows rows the tournament is one getf2: LAPACK's partial pivoting.
TEST(TsluHost, OneRowBlockIsPartialPivoting) {
  for (auto [m, b] : std::vector<std::pair<std::int64_t, std::int64_t>>{{128, 32}, {256, 32}, {77, 64}, {100, 8}, {256, 64}}) {
    HostMatrix<double> a(m, b), ref(m, b);
    fill_uniform(a.view(), static_cast<std::uint64_t>(m + b));
    host::lacpy(m, b, a.data(), m, ref.data(), m);
    std::vector<int> lapack(static_cast<std::size_t>(std::min(m, b)));
    ASSERT_EQ(host::getrf(m, b, ref.data(), m, lapack.data()), 0);
    std::vector<std::int64_t> ipiv(lapack.size());
    ASSERT_EQ(tslu_host<double>(m, b, a.data(), m, ipiv.data()), 0);
    for (std::size_t j = 0; j < lapack.size(); ++j) EXPECT_EQ(ipiv[j], lapack[j]) << "m=" << m << " j=" << j;
    for (std::int64_t j = 0; j < b; ++j)
      for (std::int64_t i = 0; i < m; ++i) EXPECT_NEAR(a(i, j), ref(i, j), 1e-10 * (1 + std::fabs(ref(i, j))));
  }
}

// b = 1: the pivot is the first largest |a|, wherever it sits in the tree.
TEST(TsluHost, OneColumnPicksTheFirstLargest) {
  const std::int64_t m = 1000;
  std::vector<float> a(static_cast<std::size_t>(m), 0.25f);
  a[700] = -3.0f;
  a[900] = 3.0f;
  EXPECT_EQ(tslu_pivot_rows<float>(m, 1, a.data(), m), std::vector<std::int64_t>{700});
  std::vector<std::int64_t> ipiv(1);
  EXPECT_EQ(tslu_host<float>(m, 1, a.data(), m, ipiv.data()), 0);
  EXPECT_EQ(ipiv[0], 701);
  EXPECT_EQ(a[0], -3.0f);
  EXPECT_FLOAT_EQ(a[700], 0.25f / -3.0f);
  EXPECT_FLOAT_EQ(a[900], -1.0f);
}

// A zero column k stays zero: info = k + 1 (LAPACK's), and PA = LU still holds.
TEST(TsluHost, ZeroColumnGivesLapackInfo) {
  for (std::int64_t zero_col : {0, 3, 31}) {
    const std::int64_t m = 700, b = 32;
    HostMatrix<double> a(m, b);
    fill_uniform(a.view(), 5);
    for (std::int64_t i = 0; i < m; ++i) a(i, zero_col) = 0.0;
    HostMatrix<double> f = a;
    std::vector<std::int64_t> ipiv(b);
    EXPECT_EQ(tslu_host<double>(m, b, f.data(), m, ipiv.data()), zero_col + 1);
    std::vector<int> ipiv32(ipiv.begin(), ipiv.end());
    EXPECT_LT(lu_residual<double>(a.view(), f.view(), ipiv32.data()), kTolerance);
  }
}

TEST(TsluHost, InterchangesFromPivotRows) {
  // Rows 5, 0, 1: step 0 swaps 0↔5, step 1 finds row 0 at position 5 and sends row 1 there, so
  // step 2 finds row 1 at position 5 too.
  EXPECT_EQ(interchanges_from_pivot_rows({5, 0, 1}), (std::vector<std::int64_t>{6, 6, 6}));
  EXPECT_EQ(interchanges_from_pivot_rows({2, 1, 0}), (std::vector<std::int64_t>{3, 2, 3}));
  EXPECT_EQ(interchanges_from_pivot_rows({0, 1, 2}), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_THROW(interchanges_from_pivot_rows({3, 3}), std::invalid_argument);
}

TEST(TsluHost, TreeShapeAndBadArguments) {
  EXPECT_EQ(kernels::kTsluBlockRows, 256);
  EXPECT_EQ(kernels::tslu_fan_in(32), 8);
  EXPECT_EQ(kernels::tslu_fan_in(64), 4);
  EXPECT_EQ(kernels::tslu_fan_in(48), 5);
  EXPECT_EQ(kernels::tslu_fan_in(1), kernels::kTsluBlockRows);
  EXPECT_GT(kernels::tslu_workspace_bytes(100000, 32, 4), std::size_t{100000 / kernels::kTsluBlockRows * 32 * 32 * 4});
  std::vector<float> a(100, 1.0f);
  std::vector<std::int64_t> ipiv(64);
  EXPECT_THROW(tslu_host<float>(10, 0, a.data(), 10, ipiv.data()), std::invalid_argument);
  EXPECT_THROW(tslu_host<float>(1, 65, a.data(), 1, ipiv.data()), std::invalid_argument);
  EXPECT_THROW(tslu_host<float>(10, 2, a.data(), 9, ipiv.data()), std::invalid_argument);
}

TEST(TsluHost, TournamentOptionsValidate) {
  LuOptions o;
  o.panel = PanelMethod::tournament;
  EXPECT_EQ(effective_panel_leaf(o), 32);
  o.panel_leaf = 128;
  EXPECT_THROW(validate(o), std::invalid_argument);
  o.panel_leaf = 64;
  EXPECT_NO_THROW(validate(o));
  EXPECT_NE(describe(o).find("tournament"), std::string::npos);
}

}  // namespace
}  // namespace gpufact::dense
