// The host blocked LU (factorizations/dense/lu_host.hpp) against LAPACK: scaled residuals at odd
// sizes with every option combination, rectangular shapes, info on singular input, NaN input;
// and the two-level schedule's bookkeeping (every column receives every earlier panel once).
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/dense/lu_block_model.hpp"
#include "factorizations/dense/lu_host.hpp"
#include "factorizations/dense/lu_schedule.hpp"
#include "factorizations/dense/phase_timer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact::dense {
namespace {

constexpr double kTolerance = 30.0;

std::vector<LuOptions> option_sets(std::int64_t nb) {
  std::vector<LuOptions> sets;
  for (bool two_level : {false, true})
    for (bool inverse : {false, true})
      for (int coarse : {2, 4}) {
        if (!two_level && coarse != 2) continue;
        LuOptions o;
        o.nb = nb;
        o.two_level = two_level;
        o.inverse_trsm = inverse;
        o.coarse_factor = coarse;
        sets.push_back(o);
      }
  return sets;
}

template <class T>
void check_lu(std::int64_t m, std::int64_t n, const LuOptions& o, std::uint64_t seed) {
  SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " " + describe(o));
  const std::int64_t lda = m + 3;
  HostMatrix<T> a(m, n, lda), lu(m, n, lda);
  fill_uniform(a.view(), seed);
  host::lacpy(m, n, a.data(), lda, lu.data(), lda);
  std::vector<int> ipiv(static_cast<std::size_t>(std::min(m, n)), -7);
  const int info = lu_blocked_host(m, n, lu.data(), lda, ipiv.data(), o);
  EXPECT_EQ(info, 0);
  for (std::size_t i = 0; i < ipiv.size(); ++i) {
    ASSERT_GE(ipiv[i], static_cast<int>(i) + 1);
    ASSERT_LE(ipiv[i], m);
  }
  EXPECT_LT(lu_residual<T>(a.view(), lu.view(), ipiv.data()), kTolerance);
}

TEST(DenseLuHost, SquareOddSizesEveryOptionSet) {
  std::uint64_t seed = 11;
  for (std::int64_t nb : {32, 64})
    for (const auto& o : option_sets(nb))
      for (std::int64_t n : {1, 17, 100, 257}) {
        check_lu<float>(n, n, o, ++seed);
        check_lu<double>(n, n, o, ++seed);
      }
}

TEST(DenseLuHost, RectangularTallAndWide) {
  std::uint64_t seed = 101;
  for (const auto& o : option_sets(32))
    for (auto [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{{300, 77}, {77, 300}, {257, 100}, {100, 257}, {1, 40}, {40, 1}}) {
      check_lu<float>(m, n, o, ++seed);
      check_lu<double>(m, n, o, ++seed);
    }
}

// Which LAPACK getrf reports for the same matrix: a zero column k stays exactly zero through
// every update, so the first zero pivot is column k whatever the blocking.
TEST(DenseLuHost, SingularInfoMatchesLapack) {
  for (std::int64_t zero_col : {0, 5, 40, 99})
    for (const auto& o : option_sets(32)) {
      const std::int64_t n = 100;
      HostMatrix<double> a(n, n), ref(n, n);
      fill_uniform(a.view(), 7 + static_cast<std::uint64_t>(zero_col));
      for (std::int64_t i = 0; i < n; ++i) a(i, zero_col) = 0.0;
      host::lacpy(n, n, a.data(), n, ref.data(), n);
      std::vector<int> ipiv(n), ref_ipiv(n);
      const int expected = host::getrf(n, n, ref.data(), n, ref_ipiv.data());
      ASSERT_EQ(expected, zero_col + 1);
      EXPECT_EQ(lu_blocked_host(n, n, a.data(), n, ipiv.data(), o), expected) << describe(o);
    }
}

TEST(DenseLuHost, RejectsNonFiniteInputAndBadSizes) {
  HostMatrix<float> a(10, 10);
  fill_uniform(a.view(), 3);
  a(4, 6) = std::numeric_limits<float>::quiet_NaN();
  std::vector<int> ipiv(10);
  try {
    lu_blocked_host(10, 10, a.data(), 10, ipiv.data(), LuOptions{});
    FAIL() << "NaN accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("A(4, 6)"), std::string::npos) << e.what();
  }
  a(4, 6) = std::numeric_limits<float>::infinity();
  EXPECT_THROW(lu_blocked_host(10, 10, a.data(), 10, ipiv.data(), LuOptions{}), std::invalid_argument);
  a(4, 6) = 1.0f;
  EXPECT_THROW(lu_blocked_host(10, 10, a.data(), 9, ipiv.data(), LuOptions{}), std::invalid_argument);
  LuOptions bad;
  bad.coarse_factor = 3;
  EXPECT_THROW(lu_blocked_host(10, 10, a.data(), 10, ipiv.data(), bad), std::invalid_argument);
}

TEST(DenseLuHost, UnitLowerInverseIsTheInverse) {
  const std::int64_t w = 13;
  HostMatrix<double> l(w, w);
  fill_uniform(l.view(), 5);
  std::vector<double> inv(w * w);
  unit_lower_inverse(w, l.data(), w, inv.data());
  for (std::int64_t i = 0; i < w; ++i)
    for (std::int64_t j = 0; j < w; ++j) {
      double s = 0;  // (L · inv)(i, j) with L unit lower
      for (std::int64_t k = 0; k <= i; ++k) s += (k == i ? 1.0 : l(i, k)) * inv[k + j * w];
      EXPECT_NEAR(s, i == j ? 1.0 : 0.0, 1e-10);
      if (j > i) {
        EXPECT_EQ(inv[i + j * w], 0.0);
      }
    }
}

// Every column x right of a panel must receive that panel's update exactly once, before the
// step that factors x's own panel.
void check_schedule(std::int64_t m, std::int64_t n, const LuOptions& o) {
  SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n) + " " + describe(o));
  const auto steps = lu_schedule(m, n, o);
  const std::int64_t k = std::min(m, n);
  std::int64_t next = 0;
  std::map<std::int64_t, std::size_t> step_of_panel;  // j0 -> step index
  for (std::size_t i = 0; i < steps.size(); ++i) {
    ASSERT_EQ(steps[i].j0, next);
    ASSERT_GT(steps[i].j1, steps[i].j0);
    ASSERT_LE(steps[i].j1 - steps[i].j0, o.nb);
    ASSERT_GE(steps[i].fine_end, steps[i].j1);
    ASSERT_LE(steps[i].fine_end, n);
    step_of_panel[steps[i].j0] = i;
    next = steps[i].j1;
  }
  ASSERT_EQ(next, k);
  // updates[(panel j0, column)] = (count, step index of the last one)
  std::map<std::pair<std::int64_t, std::int64_t>, std::pair<int, std::size_t>> updates;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    for (std::int64_t x = s.j1; x < s.fine_end; ++x) {
      auto& u = updates[{s.j0, x}];
      u = {u.first + 1, i};
    }
    if (s.has_coarse())
      for (const auto& t : steps)
        if (t.j0 >= s.coarse_k0 && t.j1 <= s.j1)
          for (std::int64_t x = s.fine_end; x < n; ++x) {
            auto& u = updates[{t.j0, x}];
            u = {u.first + 1, i};
          }
  }
  for (const auto& s : steps)
    for (std::int64_t x = s.j1; x < n; ++x) {
      const auto it = updates.find({s.j0, x});
      ASSERT_NE(it, updates.end()) << "panel " << s.j0 << " never updates column " << x;
      EXPECT_EQ(it->second.first, 1) << "panel " << s.j0 << " column " << x;
      if (x < k) {
        const std::int64_t owner = x - x % o.nb;  // panels are nb wide from column 0
        EXPECT_LT(it->second.second, step_of_panel.at(owner)) << "panel " << s.j0 << " column " << x;
      }
    }
}

TEST(DenseLuSchedule, EveryColumnGetsEveryEarlierPanelOnce) {
  for (std::int64_t nb : {1, 3, 8})
    for (const auto& o : option_sets(nb)) {
      LuOptions six = o;
      six.coarse_factor = 6;
      for (auto [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {50, 50}, {61, 23}, {23, 61}})
        for (const auto& opt : {o, six}) check_schedule(m, n, opt);
    }
}

TEST(DenseLuSchedule, TwoLevelSwitchesAtHalfTheWindow) {
  LuOptions o;
  o.nb = 64;
  o.coarse_factor = 4;
  const auto steps = lu_schedule(1024, 1024, o);
  ASSERT_EQ(steps.size(), 16u);
  EXPECT_EQ(steps[0].fine_end, 256);
  EXPECT_FALSE(steps[0].has_coarse());
  EXPECT_TRUE(steps[1].has_coarse());
  EXPECT_EQ(steps[1].coarse_k0, 0);
  EXPECT_EQ(steps[2].j0, 128);
  EXPECT_EQ(steps[2].fine_end, 384);
  EXPECT_DOUBLE_EQ(lu_flops(1000, 1000), 2e9 / 3);
  EXPECT_DOUBLE_EQ(lu_flops(200, 100), 200.0 * 100 * 100 - 1e6 / 3);
  EXPECT_DOUBLE_EQ(lu_flops(100, 200), lu_flops(200, 100));
}

// The recursive GPU panel's leaves tile the panel left to right, none wider than the leaf, and
// splits are whole leaves (so only the last leaf may be narrow).
TEST(DenseLuSchedule, PanelLeavesTileThePanel) {
  EXPECT_EQ(panel_split(512, 64), 256);
  EXPECT_EQ(panel_split(100, 64), 64);
  EXPECT_EQ(panel_split(130, 32), 64);
  for (std::int64_t leaf : {0, 8, 24, 32, 64})
    for (auto [j0, j1] : std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 1}, {0, 64}, {64, 577}, {5, 517}, {3, 40}}) {
      const auto leaves = panel_leaves(j0, j1, leaf);
      ASSERT_FALSE(leaves.empty());
      EXPECT_EQ(leaves.front().c0, j0);
      EXPECT_EQ(leaves.back().c1, j1);
      for (std::size_t i = 0; i < leaves.size(); ++i) {
        EXPECT_LT(leaves[i].c0, leaves[i].c1);
        if (i > 0) {
          EXPECT_EQ(leaves[i].c0, leaves[i - 1].c1);
        }
        if (leaf > 0) {
          EXPECT_LE(leaves[i].c1 - leaves[i].c0, leaf);
        }
      }
      if (leaf == 0) {
        EXPECT_EQ(leaves.size(), 1u);
      }
    }
  const auto l = panel_leaves(0, 512, 64);
  ASSERT_EQ(l.size(), 8u);
  EXPECT_EQ(l[3].c0, 192);
  LuOptions o;
  o.panel_leaf = 4;
  EXPECT_THROW(validate(o), std::invalid_argument);
  o.panel_leaf = 64;
  EXPECT_NO_THROW(validate(o));
  o.cpu_threads = -1;
  EXPECT_THROW(validate(o), std::invalid_argument);
}

// Fig. 10's overlap: the measure of the intersection of two unions of intervals.
TEST(DenseLuTimer, OverlapIsTheIntersectionOfTheTwoActivities) {
  EXPECT_DOUBLE_EQ(union_length({}), 0.0);
  EXPECT_DOUBLE_EQ(union_length({{0, 1}, {0.5, 2}, {3, 4}, {3.5, 3.6}}), 3.0);
  EXPECT_DOUBLE_EQ(union_length({{2, 1}}), 0.0);  // empty (reversed) intervals count nothing
  // Serialized activities (a look-ahead that never overlaps): no overlap, whatever the gaps.
  EXPECT_DOUBLE_EQ(intersection_length({{0, 1}, {2, 3}}, {{1, 2}, {3, 4}}), 0.0);
  // CPU panel [0, 4) beside GPU work [1, 2) and [3, 6): 2 s at once.
  EXPECT_DOUBLE_EQ(intersection_length({{0, 4}}, {{1, 2}, {3, 6}}), 2.0);
  // Overlapping intervals inside one activity are counted once.
  EXPECT_DOUBLE_EQ(intersection_length({{0, 10}}, {{1, 5}, {2, 6}, {8, 9}}), 6.0);
  EXPECT_DOUBLE_EQ(intersection_length({{1, 5}, {2, 6}, {8, 9}}, {{0, 10}}), 6.0);
  EXPECT_DOUBLE_EQ(intersection_length({{0, 1}}, {}), 0.0);
}

// The hybrid block-size model: known limits and the measured FP32 points it was fitted to.
TEST(DenseLuModel, HybridBlockSizeFollowsTheRates) {
  const HybridRates r = default_hybrid_rates(4);
  // Fitted to volkov08.fig10 on the H200: 2048 / nb 64 took about 17 ms, 8192 / nb 128 about 158 ms.
  EXPECT_NEAR(hybrid_lu_model_seconds(2048, 64, r), 0.0145, 0.004);
  EXPECT_NEAR(hybrid_lu_model_seconds(8192, 128, r), 0.18, 0.05);
  // A CPU panel that costs nothing: the GEMM-bound time falls with nb, so the widest candidate wins.
  HybridRates fast_cpu = r;
  fast_cpu.cpu_overhead_s = 0;
  fast_cpu.cpu_panel_rate = 1e30;
  fast_cpu.link_overhead_s = 0;
  fast_cpu.link_bandwidth = 1e30;
  EXPECT_EQ(hybrid_lu_nb(8192, fast_cpu), 256);
  // A free GPU and no per-panel overhead: the CPU's n²·nb/2 panel flops favour the narrowest.
  HybridRates fast_gpu = r;
  fast_gpu.gemm_rate = 1e30;
  fast_gpu.cpu_overhead_s = 0;
  fast_gpu.link_overhead_s = 0;
  EXPECT_EQ(hybrid_lu_nb(8192, fast_gpu), 32);
  // Step count: n = 100 with nb = 64 is two steps, the second 36 wide.
  HybridRates only_overhead = fast_gpu;
  only_overhead.cpu_panel_rate = 1e30;
  only_overhead.link_bandwidth = 1e30;
  only_overhead.cpu_overhead_s = 1;
  EXPECT_DOUBLE_EQ(hybrid_lu_model_seconds(100, 64, only_overhead), 2.0);
  EXPECT_THROW(hybrid_lu_model_seconds(100, 0, r), std::invalid_argument);
  EXPECT_THROW(hybrid_lu_nb(100, r, {}), std::invalid_argument);
  EXPECT_EQ(gpu_resident_lu_nb(16384), 512);
  EXPECT_EQ(gpu_resident_lu_nb(10240), 256);
  EXPECT_EQ(gpu_resident_lu_nb(8192), 192);
  EXPECT_EQ(gpu_resident_lu_nb(6144), 192);
  EXPECT_EQ(gpu_resident_lu_nb(1024), 128);
}

}  // namespace
}  // namespace gpufact::dense
