// volkov08 §3.8 eq. (2) for getf2: call counts, byte counts and flops of an m × n panel.
#include "microbench/panel/panel_model.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <stdexcept>

namespace gpufact::microbench {
namespace {

TEST(Getf2Model, CountsFourCallsPerColumnButTheLast) {
  const auto r = getf2_model(1000, 64, 5e-6, std::numeric_limits<double>::infinity());
  EXPECT_DOUBLE_EQ(r.calls, 4 * 64 - 1);
  EXPECT_DOUBLE_EQ(r.seconds, (4 * 64 - 1) * 5e-6);
}

TEST(Getf2Model, BytesOfASingleColumnPanel) {
  // n = 1: isamax reads 10 words, sswap moves 2 rows of 1 word both ways, sscal 9 words both ways.
  const auto r = getf2_model(10, 1, 0.0, 1.0);
  EXPECT_DOUBLE_EQ(r.bytes, 4 * 10 + 16 * 1 + 8 * 9);
  EXPECT_DOUBLE_EQ(r.seconds, r.bytes);
}

TEST(Getf2Model, SgerDominatesTallPanels) {
  const auto r = getf2_model(1 << 20, 64, 0.0, 1.0);
  // The trailing updates read and write ~m n² / 2 words each way: ~4 m n² bytes.
  const double sger_bytes = 4.0 * (1 << 20) * 64 * 64;
  EXPECT_GT(r.bytes, 0.9 * sger_bytes);
  EXPECT_LT(r.bytes, 1.1 * sger_bytes);
}

TEST(Getf2Model, RejectsWidePanelsAndBadBandwidth) {
  EXPECT_THROW(getf2_model(10, 64, 0, 1), std::invalid_argument);
  EXPECT_THROW(getf2_model(64, 64, 0, 0), std::invalid_argument);
}

TEST(Getf2Model, FlopsOfASquarePanelAreTwoThirdsNCubed) {
  EXPECT_DOUBLE_EQ(getf2_flops(300, 300), 2.0 / 3.0 * 300.0 * 300.0 * 300.0);
  EXPECT_DOUBLE_EQ(getf2_flops(1000, 64), 1000.0 * 64 * 64 - 64.0 * 64 * 64 / 3);
}

}  // namespace
}  // namespace gpufact::microbench
