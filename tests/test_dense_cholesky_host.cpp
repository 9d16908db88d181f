// The host blocked Cholesky (factorizations/dense/cholesky_host.hpp) against LAPACK potrf: scaled
// residuals and agreement with potrf at odd sizes (n not a multiple of nb, n < nb, n = 1) for
// each update-block width, the strict upper triangle left alone, info on input that is not SPD
// (the same column as potrf's), NaN input; and the schedule, block and width helpers.
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/dense/cholesky_host.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace gpufact::dense {
namespace {

constexpr double kTolerance = 30.0;

template <class T>
void check_cholesky(std::int64_t n, std::int64_t nb, std::int64_t block, std::uint64_t seed) {
  SCOPED_TRACE("n=" + std::to_string(n) + " nb=" + std::to_string(nb) + " block=" + std::to_string(block));
  const std::int64_t lda = n + 3;
  HostMatrix<T> a(n, n, lda), l(n, n, lda), ref(n, n, lda);
  fill_spd(a.view(), seed);
  host::lacpy(n, n, a.data(), lda, l.data(), lda);
  host::lacpy(n, n, a.data(), lda, ref.data(), lda);
  for (std::int64_t j = 0; j < n; ++j)  // the strict upper triangle must come back untouched
    for (std::int64_t i = 0; i < j; ++i) l(i, j) = T(-77);
  CholeskyOptions o;
  o.nb = nb;
  o.update_block = block;
  ASSERT_EQ(cholesky_blocked_host(n, l.data(), lda, o), 0);
  ASSERT_EQ(host::potrf(Uplo::lower, n, ref.data(), lda), 0);
  EXPECT_LT(cholesky_residual<T>(a.view(), l.view()), kTolerance);
  double diff = 0, scale = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      if (i < j) {
        ASSERT_EQ(l(i, j), T(-77)) << "strict upper triangle written at " << i << ", " << j;
        continue;
      }
      diff = std::max(diff, std::abs(static_cast<double>(l(i, j) - ref(i, j))));
      scale = std::max(scale, std::abs(static_cast<double>(ref(i, j))));
    }
  // Same factor as LAPACK's up to rounding (a well-conditioned SPD input: cond ~ 10³·n).
  EXPECT_LT(diff, 1e4 * scale * static_cast<double>(std::numeric_limits<T>::epsilon()) * static_cast<double>(std::max<std::int64_t>(n, 1)));
}

TEST(DenseCholeskyHost, OddSizesMatchPotrf) {
  std::uint64_t seed = 5;
  for (std::int64_t nb : {1, 7, 32, 64})
    for (std::int64_t n : {1, 2, 5, 31, 64, 65, 100, 129, 200})
      for (std::int64_t block : {0, 1, 48}) {
        check_cholesky<float>(n, nb, block, ++seed);
        check_cholesky<double>(n, nb, block, ++seed);
      }
}

TEST(DenseCholeskyHost, NbLargerThanN) {
  check_cholesky<double>(37, 128, 0, 3);
  check_cholesky<float>(37, 128, 16, 4);
}

// A = I except a(k, k) = −1 (k 0-based): potrf stops at column k + 1; and a matrix whose
// leading minor of order k + 1 is singular in a later panel.
template <class T>
void check_not_spd(std::int64_t n, std::int64_t nb, std::int64_t k) {
  SCOPED_TRACE("n=" + std::to_string(n) + " nb=" + std::to_string(nb) + " k=" + std::to_string(k));
  HostMatrix<T> a(n, n), ref(n, n);
  fill_spd(a.view(), 99 + static_cast<std::uint64_t>(k));
  // Make the leading minor of order k + 1 indefinite: a(k, k) far below what the Schur complement needs.
  a(k, k) = T(-1);
  host::lacpy(n, n, a.data(), n, ref.data(), n);
  CholeskyOptions o;
  o.nb = nb;
  o.update_block = 16;
  const int expected = host::potrf(Uplo::lower, n, ref.data(), n);
  ASSERT_EQ(expected, static_cast<int>(k) + 1);
  EXPECT_EQ(cholesky_blocked_host(n, a.data(), n, o), expected);
}

TEST(DenseCholeskyHost, NotPositiveDefiniteInfoNamesTheColumn) {
  for (std::int64_t k : {0, 5, 31, 32, 33, 70, 99}) {
    check_not_spd<float>(100, 32, k);
    check_not_spd<double>(100, 32, k);
  }
}

TEST(DenseCholeskyHost, NanInTheLowerTriangleIsAClearError) {
  HostMatrix<double> a(40, 40);
  fill_spd(a.view(), 8);
  a(30, 12) = std::numeric_limits<double>::quiet_NaN();
  CholeskyOptions o;
  o.nb = 16;
  try {
    cholesky_blocked_host(40, a.data(), 40, o);
    FAIL() << "NaN accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("A(30, 12)"), std::string::npos) << e.what();
  }
  // The strict upper triangle is not referenced (LAPACK semantics): a NaN there is accepted.
  HostMatrix<double> b(40, 40);
  fill_spd(b.view(), 9);
  b(3, 20) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(cholesky_blocked_host(40, b.data(), 40, o), 0);
}

TEST(DenseCholeskyHost, BadArguments) {
  double x = 1;
  CholeskyOptions o;
  EXPECT_THROW(cholesky_blocked_host<double>(-1, &x, 1, o), std::invalid_argument);
  EXPECT_THROW(cholesky_blocked_host<double>(3, &x, 2, o), std::invalid_argument);
  o.nb = 0;
  EXPECT_THROW(cholesky_blocked_host<double>(1, &x, 1, o), std::invalid_argument);
  EXPECT_EQ(cholesky_blocked_host<double>(0, &x, 1, CholeskyOptions{}), 0);
}

TEST(DenseCholeskyHost, ScheduleAndBlocks) {
  const auto s = cholesky_schedule(300, 128);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].j0, 0);
  EXPECT_EQ(s[2].j0, 256);
  EXPECT_EQ(s[2].j1, 300);
  EXPECT_TRUE(cholesky_schedule(0, 64).empty());
  const auto b = update_blocks(10, 105, 40);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].c0, 10);
  EXPECT_EQ(b[0].c1, 50);
  EXPECT_EQ(b[2].c1, 105);
  ASSERT_EQ(update_blocks(10, 105, 0).size(), 1u);
  EXPECT_TRUE(update_blocks(5, 5, 8).empty());
  EXPECT_DOUBLE_EQ(cholesky_flops(30), 9000.0);
}

TEST(DenseCholeskyHost, TriangleTransferWidthFromTheModel) {
  // b* = √(2αβ/e): α = 4.3 µs, β = 52.65 GB/s → 336 (FP32), 238 → 224 or 256 (FP64).
  EXPECT_EQ(triangle_transfer_width(16384, 4), 352);  // 336.4 → nearest multiple of 32
  EXPECT_EQ(triangle_transfer_width(16384, 8), 224);  // 237.9 → 224
  EXPECT_EQ(triangle_transfer_width(100, 4), 100);    // capped at n
  EXPECT_EQ(triangle_transfer_width(20, 4), 20);
  EXPECT_EQ(triangle_transfer_width(1, 8), 1);
  // A slower link per byte (smaller β) favours narrower blocks, a larger α wider ones.
  EXPECT_LT(triangle_transfer_width(1 << 16, 4, {4.3e-6, 5e9}), triangle_transfer_width(1 << 16, 4));
  EXPECT_GT(triangle_transfer_width(1 << 16, 4, {40e-6, 52.65e9}), triangle_transfer_width(1 << 16, 4));
  EXPECT_THROW(triangle_transfer_width(1000, 4, {0, 1e9}), std::invalid_argument);
}

TEST(DenseCholeskyHost, BlockSizesByN) {
  for (std::int64_t n : {1024, 4096, 16384}) {
    EXPECT_GE(cholesky_hybrid_nb(n, 4), 32);
    EXPECT_LE(cholesky_hybrid_nb(n, 4), 256);
  }
  EXPECT_GE(cholesky_resident_nb(16384), 256);
  EXPECT_LE(cholesky_resident_nb(1000), cholesky_resident_nb(16384));
  // The fused diagonal: 128 columns below n = 4096, 256 up to 12288, 512 above.
  EXPECT_EQ(cholesky_resident_fused_nb(1000), 128);
  EXPECT_EQ(cholesky_resident_fused_nb(4095), 128);
  EXPECT_EQ(cholesky_resident_fused_nb(4096), 256);
  EXPECT_EQ(cholesky_resident_fused_nb(8192), 256);
  EXPECT_EQ(cholesky_resident_fused_nb(12288), 512);
  EXPECT_EQ(cholesky_resident_fused_nb(16384), 512);
  // The dataflow: FP32 the whole matrix up to 8192, 4096-column panels above; FP64 the whole
  // matrix up to 4096, 4096-column panels up to 8192, 2048 above.
  EXPECT_EQ(cholesky_dataflow_panel(1000, 4), 1000);
  EXPECT_EQ(cholesky_dataflow_panel(8192, 4), 8192);
  EXPECT_EQ(cholesky_dataflow_panel(8193, 4), 4096);
  EXPECT_EQ(cholesky_dataflow_panel(12288, 4), 4096);
  EXPECT_EQ(cholesky_dataflow_panel(16384, 4), 4096);
  EXPECT_EQ(cholesky_dataflow_panel(4096, 8), 4096);
  EXPECT_EQ(cholesky_dataflow_panel(8192, 8), 4096);
  EXPECT_EQ(cholesky_dataflow_panel(8193, 8), 2048);
  EXPECT_EQ(cholesky_dataflow_panel(16384, 8), 2048);
  // The update's column blocks: set, or by precision (one syrk in FP32, 2048 columns in FP64).
  CholeskyOptions o;
  EXPECT_EQ(cholesky_update_step(o, 4, 5000), 5000);
  EXPECT_EQ(cholesky_update_step(o, 8, 5000), kFp64UpdateBlock);
  o.update_block = 96;
  EXPECT_EQ(cholesky_update_step(o, 4, 5000), 96);
  EXPECT_EQ(cholesky_update_step(o, 8, 5000), 96);
}

TEST(DenseCholeskyHost, DiagonalMethodNames) {
  for (CholeskyDiagonal d : {CholeskyDiagonal::cusolver, CholeskyDiagonal::recursive, CholeskyDiagonal::fused,
                             CholeskyDiagonal::dataflow})
    EXPECT_EQ(cholesky_diagonal_from(cholesky_diagonal_name(d)), d);
  EXPECT_THROW(cholesky_diagonal_from("tournament"), std::invalid_argument);
  CholeskyOptions o;
  EXPECT_EQ(describe(o).find("diagonal="), std::string::npos);  // cusolver: the default, not named
  o.diagonal = CholeskyDiagonal::fused;
  EXPECT_NE(describe(o).find("diagonal=fused"), std::string::npos);
  o.diagonal = CholeskyDiagonal::dataflow;
  o.dataflow_panel = 4096;
  EXPECT_NE(describe(o).find("diagonal=dataflow dataflow_panel=4096"), std::string::npos);
  for (std::int64_t bad : {-64, 100}) {
    o.dataflow_panel = bad;
    EXPECT_THROW(validate(o), std::invalid_argument);
  }
}

}  // namespace
}  // namespace gpufact::dense
