// Host tests for the pointer-chase cycles (volkov08 §3.3): what the device array holds, the
// cycle length and index sum the device walk is checked against, and the step counts.
#include "microbench/memory/chase_cycle.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace gpufact::microbench {
namespace {

// Walks the cycle the way the device would: A[k] = (k + s) mod n, or the scattered random one.
std::vector<std::uint64_t> device_array(const ChaseCycle& c) {
  std::vector<std::uint64_t> a(c.elements, 0);
  if (!c.random) {
    for (std::uint64_t k = 0; k < c.elements; ++k) a[k] = (k + c.stride) % c.elements;
  } else {
    for (std::uint64_t j = 0; j < c.successor.size(); ++j) a[j * c.stride] = c.successor[j] * c.stride;
  }
  return a;
}

void expect_walk_matches(const ChaseCycle& c) {
  const auto a = device_array(c);
  std::uint64_t k = 0, sum = 0, first_return = 0;
  std::set<std::uint64_t> seen;
  for (std::uint64_t t = 1; t <= c.length; ++t) {
    k = a[k];
    sum += k;
    seen.insert(k);
    if (k == 0 && first_return == 0) first_return = t;
    ASSERT_EQ(c.index_after(t), k) << "step " << t;
  }
  EXPECT_EQ(first_return, c.length);
  EXPECT_EQ(sum, c.index_sum);
  EXPECT_EQ(seen.size(), c.length);
  EXPECT_EQ(c.prefix_sum(c.length), c.index_sum);
  EXPECT_EQ(c.index_after(c.length + 3), c.index_after(3));
}

TEST(ChaseCycle, StrideDividingTheArray) {
  const auto c = stride_cycle(1024, 32);
  EXPECT_EQ(c.length, 32u);
  expect_walk_matches(c);
}

TEST(ChaseCycle, StrideNotDividingTheArrayVisitsMultiplesOfTheGcd) {
  const auto c = stride_cycle(1000, 48);  // gcd 8
  EXPECT_EQ(c.length, 125u);
  expect_walk_matches(c);
  const auto d = stride_cycle(97, 5);  // coprime: every element
  EXPECT_EQ(d.length, 97u);
  expect_walk_matches(d);
}

TEST(ChaseCycle, StrideOfTheWholeArrayStaysOnElementZero) {
  const auto c = stride_cycle(64, 64);
  EXPECT_EQ(c.length, 1u);
  EXPECT_EQ(c.index_sum, 0u);
  expect_walk_matches(c);
  const auto one = stride_cycle(1, 1);
  EXPECT_EQ(one.length, 1u);
}

TEST(ChaseCycle, RejectsEmptyArraysAndZeroStrides) {
  EXPECT_THROW(stride_cycle(0, 1), std::invalid_argument);
  EXPECT_THROW(stride_cycle(16, 0), std::invalid_argument);
  EXPECT_THROW(random_cycle(16, 0, 1), std::invalid_argument);
}

TEST(ChaseCycle, SattoloGivesOneCycleThroughEveryPosition) {
  for (std::uint64_t m : {1u, 2u, 3u, 17u, 1000u}) {
    for (std::uint64_t seed : {1u, 2u, 99u}) {
      const auto p = sattolo_cycle(m, seed);
      std::uint64_t j = 0, steps = 0;
      do {
        j = p[j];
        ++steps;
      } while (j != 0 && steps <= m);
      EXPECT_EQ(steps, m) << "m=" << m << " seed=" << seed;
    }
  }
  EXPECT_NE(sattolo_cycle(1000, 1), sattolo_cycle(1000, 2));
}

TEST(ChaseCycle, RandomCycleOverStridePositions) {
  const auto c = random_cycle(1000, 16, 7);  // positions 0, 16, ..., 992: 63 of them
  EXPECT_EQ(c.length, 63u);
  expect_walk_matches(c);
  const auto d = random_cycle(4096, 1, 3);
  EXPECT_EQ(d.length, 4096u);
  expect_walk_matches(d);
}

TEST(ChaseCycle, StepsCoverTheCycleWithinTheBudget) {
  // Small cycle: at least min_steps, walked many times; warm-up covers it once.
  auto st = chase_steps(100, 128, 8192, 40e6, 1000, 16);
  EXPECT_EQ(st.timed, 8192);
  EXPECT_EQ(st.warm, 100);
  // Medium cycle: the whole cycle, rounded to the unroll.
  st = chase_steps(20001, 128, 8192, 40e6, 1000, 16);
  EXPECT_EQ(st.timed, 20016);
  EXPECT_EQ(st.warm, 20001);
  // Huge cycle at a missing stride: capped by the budget (40e6 / 1000).
  st = chase_steps(1u << 30, 4096, 8192, 40e6, 1000, 16);
  EXPECT_EQ(st.timed, 40000);
  EXPECT_EQ(st.warm, 40000);
  // Small strides miss once per 32-byte sector: 8 times the steps at 4 B.
  st = chase_steps(1u << 30, 4, 8192, 40e6, 1000, 16);
  EXPECT_EQ(st.timed, 320000);
}

}  // namespace
}  // namespace gpufact::microbench
