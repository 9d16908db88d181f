// Host tests of the cluster LU panel's interchange replay (kernels/lu/panel_replay.hpp): for
// random choices of pivot rows, the ipiv it returns and every row's final place equal those of
// LAPACK's sequential swaps carried out on an explicit permutation.
#include "kernels/lu/panel_replay.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace gpufact::kernels {
namespace {

// Pivot rows chosen like the kernel does: per column, any row not chosen before.
std::vector<int> random_pivot_rows(int m, int b, std::mt19937& rng, int bias_to_top) {
  std::vector<int> free(static_cast<std::size_t>(m));
  std::iota(free.begin(), free.end(), 0);
  std::vector<int> piv;
  for (int j = 0; j < b; ++j) {
    // Half the time (bias_to_top) a row among the first b, so rows displaced there move again.
    const int limit = bias_to_top && (rng() & 1u) ? std::min<int>(static_cast<int>(free.size()), b) : static_cast<int>(free.size());
    const std::size_t k = std::uniform_int_distribution<std::size_t>(0, static_cast<std::size_t>(limit - 1))(rng);
    piv.push_back(free[k]);
    free.erase(free.begin() + static_cast<std::ptrdiff_t>(k));
  }
  return piv;
}

void check(int m, int b, const std::vector<int>& piv) {
  SCOPED_TRACE("m=" + std::to_string(m) + " b=" + std::to_string(b));
  // Reference: the rows as positioned, swapped in order.
  std::vector<int> at(static_cast<std::size_t>(m));
  std::iota(at.begin(), at.end(), 0);
  std::vector<std::int64_t> want_ipiv;
  for (int j = 0; j < b; ++j) {
    const auto p = std::find(at.begin(), at.end(), piv[static_cast<std::size_t>(j)]) - at.begin();
    ASSERT_GE(p, j) << "a pivot row must not be one chosen before";
    want_ipiv.push_back(p + 1);
    std::swap(at[static_cast<std::size_t>(j)], at[static_cast<std::size_t>(p)]);
  }
  std::vector<int> cur(static_cast<std::size_t>(b)), pos_of(static_cast<std::size_t>(b));
  std::vector<std::int64_t> ipiv(static_cast<std::size_t>(b), -1);
  replay_interchanges(piv.data(), cur.data(), pos_of.data(), b, ipiv.data());
  EXPECT_EQ(ipiv, want_ipiv);
  std::vector<int> chosen(static_cast<std::size_t>(m), -1);
  for (int j = 0; j < b; ++j) chosen[static_cast<std::size_t>(piv[static_cast<std::size_t>(j)])] = j;
  for (int position = 0; position < m; ++position) {
    const int row = at[static_cast<std::size_t>(position)];
    ASSERT_EQ(final_row(chosen[static_cast<std::size_t>(row)], row, b, pos_of.data()), position) << "row " << row;
  }
}

TEST(PanelReplay, MatchesSequentialSwaps) {
  std::mt19937 rng(7);
  for (auto [m, b] : std::vector<std::pair<int, int>>{{1, 1}, {2, 2}, {5, 3}, {64, 64}, {100, 7}, {1000, 64}, {300, 300}})
    for (int bias : {0, 1})
      for (int trial = 0; trial < 20; ++trial) check(m, b, random_pivot_rows(m, b, rng, bias));
}

TEST(PanelReplay, NoInterchanges) {
  std::vector<int> piv(16);
  std::iota(piv.begin(), piv.end(), 0);
  check(40, 16, piv);
}

TEST(PanelReplay, EveryPivotFromBelowThePanel) {
  std::vector<int> piv;
  for (int j = 0; j < 8; ++j) piv.push_back(100 + 3 * j);  // each displaces a top row to its place
  check(200, 8, piv);
}

}  // namespace
}  // namespace gpufact::kernels
