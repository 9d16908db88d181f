// Device tests (label gpu) of the cluster LU panel (kernels/lu/panel_coop.cuh) and the
// GPU-resident LU with panel = cooperative. Partial pivoting is checked by what defines it, not
// by one rounding order: every multiplier has |l| <= 1, the first pivot is the first largest
// |a(i, 0)|, ‖PA − LU‖ is at rounding level; in FP64, where near-ties are out of reach, the
// pivots equal LAPACK's getrf exactly. Shapes from 1 × 1 to 30000 × 16, every register class and
// the shared-memory kernel, and the widest panels that fit (8192 × 96 s); lda > m with poisoned
// padding; exactly zero columns (info as LAPACK); bad arguments and panels too tall for a
// cluster; then whole LUs, including one whose panels must be cut into leaves that fit.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/dense/lu_gpu_resident.hpp"
#include "kernels/lu/panel_coop.cuh"

#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"
#include "tests/lu_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace gpufact::dense {
namespace {

constexpr double kTolerance = 30.0;
using LuPanelCoopGpu = GpuTest;

// One m × b panel through launch_lu_panel_coop; `zero_col` >= 0 zeroes that column.
template <class T>
void check_panel(std::int64_t m, std::int64_t b, cudaStream_t s, std::uint64_t seed, std::int64_t zero_col = -1) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s" : "d") + " panel m=" + std::to_string(m) + " b=" + std::to_string(b) +
               " seed=" + std::to_string(seed) + (zero_col >= 0 ? " zero column " + std::to_string(zero_col) : ""));
  const std::int64_t lda = m + 3;
  const HostMatrix<T> a = panel_test_matrix<T>(m, b, seed, zero_col, lda);
  DevicePanel<T> dev(a, b, s);
  kernels::launch_lu_panel_coop(dev.values.data(), lda, m, b, dev.ipiv.data(), dev.info.data(), s);
  const auto f = download(dev.values.data(), dev.values.size(), s);
  const auto ipiv = download(dev.ipiv.data(), dev.ipiv.size(), s);
  const int info = download(dev.info.data(), 1, s)[0];

  HostMatrix<T> lapack = a;
  std::vector<int> lapack_ipiv(static_cast<std::size_t>(b));
  const int lapack_info = host::getrf(m, b, lapack.data(), lda, lapack_ipiv.data());
  EXPECT_EQ(info, lapack_info);

  std::vector<int> ipiv32(ipiv.size());
  for (std::size_t j = 0; j < ipiv.size(); ++j) {
    ASSERT_GE(ipiv[j], static_cast<std::int64_t>(j) + 1) << "j=" << j;  // a swap reaches down, never up
    ASSERT_LE(ipiv[j], m) << "j=" << j;
    ipiv32[j] = static_cast<int>(ipiv[j]);
  }
  // The first pivot: the first row of largest |a(i, 0)|, as isamax (no rounding involved).
  if (zero_col != 0) {
    std::int64_t first = 0;
    for (std::int64_t i = 1; i < m; ++i)
      if (std::fabs(a(i, 0)) > std::fabs(a(first, 0))) first = i;
    EXPECT_EQ(ipiv[0], first + 1);
  }
  if (sizeof(T) == 8 && zero_col < 0) {
    EXPECT_EQ(ipiv32, lapack_ipiv) << "FP64 pivots differ from LAPACK's getrf";
  }
  const double bound = 1.0 + 2.0 * std::numeric_limits<T>::epsilon();
  for (std::int64_t j = 0; j < b; ++j) {
    for (std::int64_t i = 0; i < m; ++i) {
      const double v = f[static_cast<std::size_t>(i + j * lda)];
      ASSERT_TRUE(std::isfinite(v)) << "i=" << i << " j=" << j;
      if (i > j) {
        ASSERT_LE(std::fabs(v), bound) << "multiplier over 1 at i=" << i << " j=" << j;
      }
    }
    for (std::int64_t i = m; i < lda; ++i)
      ASSERT_TRUE(std::isnan(f[static_cast<std::size_t>(i + j * lda)])) << "padding written";
  }
  const MatrixView<const T> lu{f.data(), m, b, lda, Layout::col_major};
  EXPECT_LT(lu_residual<T>(a.view(), lu, ipiv32.data()), kTolerance);
}

TEST_F(LuPanelCoopGpu, PanelIsPartialPivoting) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {
      {1, 1},    {8, 8},      {37, 37},    {100, 7},    {65, 65},   {1000, 64},
      {3001, 129}, {8192, 64}, {30000, 16}, {4097, 100}, {8192, 32}, {16384, 32}};
  for (auto [m, b] : shapes)
    for (std::uint64_t seed : {1u, 2u}) {
      ASSERT_GT(kernels::coop_panel_shape(m, b, 4).ctas, 0) << m << " x " << b;
      check_panel<float>(m, b, stream_, seed + static_cast<std::uint64_t>(m));
      if (kernels::coop_panel_shape(m, b, 8).ctas > 0)
        check_panel<double>(m, b, stream_, seed + static_cast<std::uint64_t>(m));
    }
  // The widest FP32 panel of 8192 rows a cluster holds.
  const std::int64_t wide = std::min<std::int64_t>(3 * kernels::coop_panel_fit_width(8192, 512, 4) / 2, 512);
  if (kernels::coop_panel_shape(8192, wide, 4).ctas > 0) check_panel<float>(8192, wide, stream_, 7);
}

// A leaf of a wider panel (LuPanelSpan): the columns left and right of the leaf take exactly the
// leaf's interchanges (as LAPACK's laswp would apply them), the leaf factors as alone, and the
// pivots count from pivot_offset rows above.
template <class T>
void check_span(std::int64_t m, std::int64_t b, std::int64_t left, std::int64_t right, std::int64_t offset,
                cudaStream_t s, std::uint64_t seed) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s" : "d") + " span m=" + std::to_string(m) + " b=" + std::to_string(b) +
               " left=" + std::to_string(left) + " right=" + std::to_string(right) + " offset=" +
               std::to_string(offset));
  const std::int64_t lda = m + 1, w = left + b + right;
  const HostMatrix<T> a = panel_test_matrix<T>(m, w, seed, -1, lda);
  DevicePanel<T> dev(a, b, s);
  kernels::launch_lu_panel_coop(dev.values.data() + left * lda, lda, m, b, dev.ipiv.data(), dev.info.data(), s,
                                nullptr, kernels::LuPanelSpan{left, right, offset});
  const auto f = download(dev.values.data(), dev.values.size(), s);
  const auto ipiv = download(dev.ipiv.data(), dev.ipiv.size(), s);
  EXPECT_EQ(download(dev.info.data(), 1, s)[0], 0);

  HostMatrix<T> leaf(m, b, lda);
  for (std::int64_t j = 0; j < b; ++j)
    for (std::int64_t i = 0; i < m; ++i) leaf(i, j) = a(i, left + j);
  std::vector<int> ipiv32(static_cast<std::size_t>(b));
  HostMatrix<T> swapped = a;
  for (std::int64_t k = 0; k < b; ++k) {
    const std::int64_t p = ipiv[static_cast<std::size_t>(k)] - 1 - offset;
    ASSERT_GE(p, k) << "k=" << k;
    ASSERT_LT(p, m) << "k=" << k;
    ipiv32[static_cast<std::size_t>(k)] = static_cast<int>(p + 1);
    for (std::int64_t j = 0; j < w; ++j) std::swap(swapped(k, j), swapped(p, j));
  }
  for (std::int64_t j = 0; j < w; ++j) {
    if (j >= left && j < left + b) continue;
    for (std::int64_t i = 0; i < m; ++i)
      ASSERT_EQ(f[static_cast<std::size_t>(i + j * lda)], swapped(i, j)) << "i=" << i << " column " << j;
  }
  const MatrixView<const T> lu{f.data() + left * lda, m, b, lda, Layout::col_major};
  EXPECT_LT(lu_residual<T>(leaf.view(), lu, ipiv32.data()), kTolerance);
}

TEST_F(LuPanelCoopGpu, LeafInterchangesTheWholePanel) {
  check_span<float>(1000, 64, 64, 128, 64, stream_, 11);     // register kernel, 2 rows a thread
  check_span<float>(8192, 32, 0, 480, 0, stream_, 12);       // only right of the leaf
  check_span<float>(3000, 32, 96, 0, 96, stream_, 13);       // only left
  check_span<double>(700, 64, 192, 256, 192, stream_, 14);   // the widest span (512 columns)
  check_span<float>(4097, 100, 28, 384, 28, stream_, 15);    // shared-memory kernel
  check_span<double>(40, 40, 3, 5, 7, stream_, 16);          // fewer rows than 2b moves
}

TEST_F(LuPanelCoopGpu, ZeroColumnInfoAsLapack) {
  for (std::int64_t zero_col : {0, 5, 63}) {
    check_panel<float>(500, 64, stream_, 3, zero_col);
    check_panel<double>(500, 64, stream_, 3, zero_col);
  }
}

// NaN or Inf in a panel (the LU checks its input only after the factorization, which runs on
// whatever it was given): the cluster still finishes, every pivot is a valid row below its column
// and no later launch fails. A whole column of NaN, one Inf (whose updates make NaNs), in the
// register kernel and the shared-memory kernel.
template <class T>
void check_nonfinite_panel(std::int64_t m, std::int64_t b, std::int64_t col, bool whole_column, cudaStream_t s) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s" : "d") + " m=" + std::to_string(m) + " b=" + std::to_string(b) +
               (whole_column ? " NaN column " : " one Inf in column ") + std::to_string(col));
  const std::int64_t lda = m;
  HostMatrix<T> a = panel_test_matrix<T>(m, b, 21, -1, lda);
  if (whole_column)
    for (std::int64_t i = 0; i < m; ++i) a(i, col) = std::numeric_limits<T>::quiet_NaN();
  else
    a(m / 2, col) = std::numeric_limits<T>::infinity();
  DevicePanel<T> dev(a, b, s);
  kernels::launch_lu_panel_coop(dev.values.data(), lda, m, b, dev.ipiv.data(), dev.info.data(), s);
  const auto ipiv = download(dev.ipiv.data(), dev.ipiv.size(), s);  // checks the launch's errors too
  std::string pivots;
  for (std::size_t j = 0; j < ipiv.size(); ++j) pivots += " " + std::to_string(ipiv[j]);
  for (std::size_t j = 0; j < ipiv.size(); ++j) {
    ASSERT_GE(ipiv[j], static_cast<std::int64_t>(j) + 1) << "j=" << j << "; ipiv:" << pivots;
    ASSERT_LE(ipiv[j], m) << "j=" << j << "; ipiv:" << pivots;
  }
}

TEST_F(LuPanelCoopGpu, NonFinitePanelStillFinishes) {
  for (bool whole : {true, false}) {
    check_nonfinite_panel<float>(8192, 64, 0, whole, stream_);     // register kernel
    check_nonfinite_panel<double>(1000, 32, 7, whole, stream_);
    check_nonfinite_panel<float>(4097, 100, 50, whole, stream_);   // shared-memory kernel
  }
}

TEST_F(LuPanelCoopGpu, BadArgumentsAndPanelsThatDoNotFit) {
  DeviceBuffer<float> a(64 * 64);
  DeviceBuffer<std::int64_t> ipiv(64);
  DeviceBuffer<int> info(1);
  auto launch = [&](std::int64_t lda, std::int64_t m, std::int64_t b) {
    kernels::launch_lu_panel_coop(a.data(), lda, m, b, ipiv.data(), info.data(), stream_);
  };
  EXPECT_THROW(launch(64, 64, 0), std::invalid_argument);
  EXPECT_THROW(launch(600, 600, 513), std::invalid_argument);
  EXPECT_THROW(launch(64, 32, 64), std::invalid_argument);  // m < b
  EXPECT_THROW(launch(63, 64, 64), std::invalid_argument);  // lda < m
  EXPECT_THROW(kernels::launch_lu_panel_coop(a.data(), 64, 64, 8, ipiv.data(), info.data(), stream_, nullptr,
                                             kernels::LuPanelSpan{-1, 0, 0}),
               std::invalid_argument);
  // 10^6 rows: over 60000 rows per CTA, more than its threads hold; the check comes before any launch.
  EXPECT_EQ(kernels::coop_panel_shape(1000000, 8, 4).ctas, 0);
  EXPECT_THROW(launch(1000000, 1000000, 8), std::invalid_argument);
  EXPECT_EQ(kernels::coop_panel_fit_width(1000000, 512, 8), 0);
  EXPECT_GE(kernels::coop_panel_max_cluster(), 8);
  EXPECT_GT(kernels::coop_panel_shape(8192, 64, 4).ctas, 0);
  // Up to 64 columns the panel lives in registers where its rows fit 1, 2 or 4 per thread.
  if (kernels::coop_panel_max_cluster() == 16) {
    EXPECT_EQ(kernels::coop_panel_shape(8192, 64, 4).rows_per_thread, 2);
    EXPECT_EQ(kernels::coop_panel_shape(16384, 32, 4).rows_per_thread, 4);
    EXPECT_EQ(kernels::coop_panel_shape(8192, 32, 8).rows_per_thread, 2);
    EXPECT_EQ(kernels::coop_panel_shape(8192, 64, 8).rows_per_thread, 0);
    EXPECT_EQ(kernels::coop_panel_shape(4097, 100, 4).rows_per_thread, 0);
  }
}

template <class T>
void check_lu(std::int64_t m, std::int64_t n, std::int64_t nb, std::int64_t leaf, bool lookahead, cudaStream_t s,
              std::int64_t zero_col = -1, std::int64_t expect_leaf = -1) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s" : "d") + " cooperative LU m=" + std::to_string(m) + " n=" +
               std::to_string(n) + " nb=" + std::to_string(nb) + " leaf=" + std::to_string(leaf) +
               (lookahead ? " lookahead" : "") + (zero_col >= 0 ? " zero column " + std::to_string(zero_col) : ""));
  const HostMatrix<T> a = panel_test_matrix<T>(m, n, static_cast<std::uint64_t>(m * 5 + n), zero_col);
  LuOptions o;
  o.nb = nb;
  o.panel_leaf = leaf;
  o.panel = PanelMethod::cooperative;
  o.lookahead = lookahead;
  LuResidentWorkspace<T> ws(m, n, o);
  if (expect_leaf >= 0) {
    EXPECT_EQ(ws.leaf_for(0), expect_leaf);
  }
  const auto [f, ipiv, info] = factor_resident(a, ws, s);
  HostMatrix<T> lapack = a;
  std::vector<int> lapack_ipiv(ipiv.size());
  EXPECT_EQ(info, host::getrf(m, n, lapack.data(), m, lapack_ipiv.data()));
  if (sizeof(T) == 8 && zero_col < 0) {
    EXPECT_EQ(ipiv, lapack_ipiv) << "FP64 pivots differ from LAPACK's getrf";
  }
  const MatrixView<const T> lu{f.data(), m, n, m, Layout::col_major};
  EXPECT_LT(lu_residual<T>(a.view(), lu, ipiv.data()), kTolerance);
}

TEST_F(LuPanelCoopGpu, GpuResidentLuWithCooperativePanel) {
  for (std::int64_t n : {37, 300, 1000})
    for (auto [nb, leaf] : std::vector<std::pair<std::int64_t, std::int64_t>>{{64, 0}, {128, 0}, {128, 32}, {256, 0}})
      for (bool la : {true, false}) {
        check_lu<float>(n, n, nb, leaf, la, stream_);
        check_lu<double>(n, n, nb, leaf, la, stream_);
      }
  check_lu<float>(700, 300, 128, 0, true, stream_);
  check_lu<double>(300, 700, 64, 0, true, stream_);
  check_lu<double>(2049, 2049, 256, 0, true, stream_);
  for (std::int64_t zero_col : {0, 70, 299}) check_lu<double>(300, 300, 64, 0, true, stream_, zero_col);
  // 20000 rows × 256 FP64: 1250 rows per CTA of 16 hold at most 22 columns, so the panel becomes
  // leaves of 16 (the widest power-of-two cut of 256 that fits).
  const std::int64_t fit = kernels::coop_panel_fit_width(20000, 256, 8);
  ASSERT_GT(fit, 0);
  ASSERT_LT(fit, 256);
  check_lu<double>(20000, 256, 256, 0, true, stream_, -1, fit);
  // Several panels of many leaves each, with look-ahead (the update stream's split GEMM).
  check_lu<float>(3000, 3000, 512, 32, true, stream_);
}

}  // namespace
}  // namespace gpufact::dense
