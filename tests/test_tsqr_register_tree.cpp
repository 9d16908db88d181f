// The register TSQR's tree (make_tsqr_tree): leaves cover the rows with none shorter than n,
// fan-in from the block capacity, levels down to one node, offsets that do not overlap, and
// clear errors for shapes it cannot factor.
#include "factorizations/caqr/tsqr_register.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace gpufact::factorizations {
namespace {

// Rows of leaf c, as the kernels compute them.
std::int64_t leaf_rows(const kernels::TsqrTreeArgs& t, std::int64_t c) {
  return (c + 1) * t.m / t.nodes[0] - c * t.m / t.nodes[0];
}

TEST(TsqrRegisterTree, OneLeafWhenTheMatrixFitsOneBlock) {
  const auto t = make_tsqr_tree(1000, 10, 1024);
  EXPECT_EQ(t.levels, 0);
  EXPECT_EQ(t.nodes[0], 1);
  const auto s = tsqr_tree_sizes(t);
  EXPECT_EQ(s.stacks, 0u);
  EXPECT_EQ(s.counters, 0u);
  EXPECT_EQ(s.tau, 10u);
  EXPECT_EQ(s.tree_t, 0u);  // no tree level
}

TEST(TsqrRegisterTree, MillionByTenHasTwoLevels) {
  const auto t = make_tsqr_tree(1000000, 10, 1024);
  EXPECT_EQ(t.nodes[0], 977);  // ⌈10⁶ / 1024⌉
  EXPECT_EQ(t.fan_in, 102);
  EXPECT_EQ(t.levels, 2);
  EXPECT_EQ(t.nodes[1], 10);
  EXPECT_EQ(t.nodes[2], 1);
  std::int64_t covered = 0;
  for (std::int64_t c = 0; c < t.nodes[0]; ++c) {
    const auto rows = leaf_rows(t, c);
    EXPECT_LE(rows, 1024);
    EXPECT_GE(rows, 10);
    covered += rows;
  }
  EXPECT_EQ(covered, 1000000);
  const auto s = tsqr_tree_sizes(t);
  EXPECT_EQ(t.stack_offset[1], 0);
  EXPECT_EQ(t.stack_offset[2], 10 * 102 * 10 * 10);
  EXPECT_EQ(s.stacks, static_cast<std::size_t>(11 * 102 * 10 * 10));
  EXPECT_EQ(t.tau_offset[1], 977 * 10);
  EXPECT_EQ(t.tau_offset[2], (977 + 10) * 10);
  EXPECT_EQ(s.tau, static_cast<std::size_t>((977 + 10 + 1) * 10));
  EXPECT_EQ(t.counter_offset[2], 10);
  EXPECT_EQ(s.counters, 11u);
  EXPECT_EQ(s.tree_t, static_cast<std::size_t>(11 * 16 * 16));  // 10 columns: T padded to 16 × 16
}

TEST(TsqrRegisterTree, EveryLeafHoldsAtLeastNRows) {
  for (std::int64_t m : {32, 33, 511, 512, 513, 1025, 4097, 110592, 123457})
    for (std::int64_t n : {1, 7, 16, 32}) {
      if (m < n) continue;
      const auto t = make_tsqr_tree(m, n, 512);
      for (std::int64_t c = 0; c < t.nodes[0]; ++c) {
        EXPECT_GE(leaf_rows(t, c), n) << m << "x" << n;
        EXPECT_LE(leaf_rows(t, c), 512) << m << "x" << n;
      }
      EXPECT_EQ(t.nodes[t.levels], 1);
      for (int l = 1; l <= t.levels; ++l)
        EXPECT_EQ(t.nodes[l], (t.nodes[l - 1] + t.fan_in - 1) / t.fan_in);
    }
}

// The compiled classes: 1–12 columns run 12 wide (6 rows per thread), 13–16 at 16 and 17–32 at
// 32 (4 and 2 rows per thread).
TEST(TsqrRegisterTree, WidthClassesAndBlockRows) {
  for (const int n : {1, 8, 9, 10, 12}) EXPECT_EQ(kernels::tsqr_register_width(n), 12) << n;
  for (const int n : {13, 16}) EXPECT_EQ(kernels::tsqr_register_width(n), 16) << n;
  for (const int n : {17, 31, 32}) EXPECT_EQ(kernels::tsqr_register_width(n), 32) << n;
  for (const int n : {0, 33}) EXPECT_EQ(kernels::tsqr_register_width(n), 0) << n;
  EXPECT_EQ(kernels::tsqr_register_block_rows<float>(12, 128), 768);
  EXPECT_EQ(kernels::tsqr_register_block_rows<double>(12, 256), 1536);
  EXPECT_EQ(kernels::tsqr_register_block_rows<float>(16, 128), 512);
  EXPECT_EQ(kernels::tsqr_register_block_rows<double>(32, 256), 512);
  EXPECT_EQ(kernels::tsqr_register_block_rows<float>(10, 128), 0);  // not a compiled width
  EXPECT_EQ(kernels::tsqr_register_block_rows<float>(12, 64), 0);
}

TEST(TsqrRegisterTree, RejectsShapesItCannotFactor) {
  EXPECT_THROW(make_tsqr_tree(100, 33, 1024), std::invalid_argument);  // wider than 32
  EXPECT_THROW(make_tsqr_tree(100, 0, 1024), std::invalid_argument);
  EXPECT_THROW(make_tsqr_tree(8, 10, 1024), std::invalid_argument);    // m < n
  EXPECT_THROW(make_tsqr_tree(1000, 16, 16), std::invalid_argument);   // a block cannot stack two R's
}

}  // namespace
}  // namespace gpufact::factorizations
