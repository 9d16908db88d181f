// Device tests (label gpu) of the TSLU leaf (kernels/lu/tslu.cuh) and the GPU-resident LU with
// panel = tournament: the kernel's pivots equal the host replay's exactly and its factors agree
// to rounding (s and d; 1 × 1 up to 100000 × 32; m < b; m not a multiple of the row block; lda >
// m with poisoned padding; one workspace reused across heights and precisions, whose candidates overlap the counters' place), a
// zero column's info, bad arguments; then the whole LU at odd sizes, whose first leaf is the
// tournament on the untouched input and so must pick the host's pivots.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/dense/lu_gpu_resident.hpp"
#include "factorizations/dense/lu_schedule.hpp"
#include "factorizations/dense/tslu_host.hpp"
#include "kernels/lu/tslu.cuh"

#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"
#include "tests/lu_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace gpufact::dense {
namespace {

constexpr double kTolerance = 30.0;
using TsluGpu = GpuTest;

// One panel through launch_tslu and tslu_host; `zero_col` >= 0 zeroes that column.
template <class T>
void check_leaf(std::int64_t m, std::int64_t b, DeviceBuffer<std::byte>& work, cudaStream_t s, std::uint64_t seed,
                std::int64_t zero_col = -1) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s" : "d") + " tslu m=" + std::to_string(m) + " b=" + std::to_string(b) +
               " seed=" + std::to_string(seed) + (zero_col >= 0 ? " zero column " + std::to_string(zero_col) : ""));
  const std::int64_t lda = m + 5, k = std::min(m, b);
  const HostMatrix<T> a = panel_test_matrix<T>(m, b, seed, zero_col, lda);
  HostMatrix<T> ref = a;
  std::vector<std::int64_t> ref_ipiv(static_cast<std::size_t>(k));
  const int ref_info = tslu_host<T>(m, b, ref.data(), lda, ref_ipiv.data());

  const std::size_t need = kernels::tslu_workspace_bytes(m, b, sizeof(T));
  ASSERT_LE(need, work.bytes());
  DevicePanel<T> dev(a, k, s);
  kernels::launch_tslu(dev.values.data(), lda, m, b, dev.ipiv.data(), dev.info.data(), work.data(), work.bytes(), s);
  const auto f = download(dev.values.data(), dev.values.size(), s);
  const auto ipiv = download(dev.ipiv.data(), dev.ipiv.size(), s);
  EXPECT_EQ(download(dev.info.data(), 1, s)[0], ref_info);
  EXPECT_EQ(ipiv, ref_ipiv) << "pivots differ from the host tournament";
  double max_ref = 1, max_diff = 0;
  for (std::int64_t j = 0; j < b; ++j) {
    for (std::int64_t i = 0; i < m; ++i) {
      const double g = f[static_cast<std::size_t>(i + j * lda)], h = ref(i, j);
      ASSERT_TRUE(std::isfinite(g)) << "i=" << i << " j=" << j;
      max_ref = std::max(max_ref, std::fabs(h));
      max_diff = std::max(max_diff, std::fabs(g - h));
    }
    for (std::int64_t i = m; i < lda; ++i) ASSERT_TRUE(std::isnan(f[static_cast<std::size_t>(i + j * lda)])) << "padding written";
  }
  EXPECT_LE(max_diff / max_ref, 16.0 * static_cast<double>(b) * std::numeric_limits<T>::epsilon());
  std::vector<int> ipiv32(ipiv.begin(), ipiv.end());
  const MatrixView<const T> lu{f.data(), m, b, lda, Layout::col_major};
  EXPECT_LT(lu_residual<T>(a.view(), lu, ipiv32.data()), kTolerance);
}

TEST_F(TsluGpu, LeafMatchesHostReplay) {
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes = {
      {1, 1}, {37, 5}, {20, 32}, {129, 8}, {300, 32}, {1000, 64}, {1000, 1}, {3001, 17}, {100000, 32},
      // every width class (8, 16, 32, 64) at b below and at its top; a deep b = 64 tree
      {257, 33}, {2000, 16}, {5000, 48}, {513, 9}, {70000, 64}};
  for (auto [m, b] : shapes) {
    // One workspace for s and d, twice each: a launch must not trust what the last one left.
    DeviceBuffer<std::byte> work(std::max(kernels::tslu_workspace_bytes(m, b, 4), kernels::tslu_workspace_bytes(m, b, 8)));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(work.data(), 0, work.bytes(), stream_));
    for (std::uint64_t seed : {1u, 2u}) {
      check_leaf<float>(m, b, work, stream_, seed + static_cast<std::uint64_t>(m));
      check_leaf<double>(m, b, work, stream_, seed + static_cast<std::uint64_t>(m));
    }
  }
}

TEST_F(TsluGpu, ZeroColumnInfoAsLapack) {
  DeviceBuffer<std::byte> work(kernels::tslu_workspace_bytes(1000, 32, 8));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(work.data(), 0, work.bytes(), stream_));
  for (std::int64_t zero_col : {0, 5, 31}) {
    check_leaf<double>(1000, 32, work, stream_, 3, zero_col);
    check_leaf<float>(1000, 32, work, stream_, 3, zero_col);
  }
}

TEST_F(TsluGpu, BadArgumentsThrow) {
  DeviceBuffer<std::byte> work(256);
  DeviceBuffer<float> a(100);
  DeviceBuffer<std::int64_t> ipiv(64);
  DeviceBuffer<int> info(1);
  EXPECT_THROW(kernels::launch_tslu(a.data(), 1, 1, 65, ipiv.data(), info.data(), work.data(), work.bytes(), stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::launch_tslu(a.data(), 9, 10, 2, ipiv.data(), info.data(), work.data(), work.bytes(), stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::launch_tslu(a.data(), 100000, 100000, 32, ipiv.data(), info.data(), work.data(), work.bytes(),
                                    stream_),
               std::invalid_argument);  // workspace too small
}

template <class T>
void check_lu(std::int64_t m, std::int64_t n, std::int64_t nb, std::int64_t leaf, bool lookahead, bool inverse,
              cudaStream_t s, std::int64_t zero_col = -1) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s" : "d") + " tournament LU m=" + std::to_string(m) + " n=" +
               std::to_string(n) + " nb=" + std::to_string(nb) + " leaf=" + std::to_string(leaf) +
               (lookahead ? " lookahead" : "") + (inverse ? " inverse" : " trsm") +
               (zero_col >= 0 ? " zero column " + std::to_string(zero_col) : ""));
  const HostMatrix<T> a = panel_test_matrix<T>(m, n, static_cast<std::uint64_t>(m * 3 + n), zero_col);
  LuOptions o;
  o.nb = nb;
  o.panel_leaf = leaf;
  o.panel = PanelMethod::tournament;
  o.lookahead = lookahead;
  o.inverse_trsm = inverse;
  LuResidentWorkspace<T> ws(m, n, o);
  const auto [f, ipiv, info] = factor_resident(a, ws, s);
  int expected = 0;
  if (zero_col >= 0) {
    HostMatrix<T> lapack = a;
    std::vector<int> p(ipiv.size());
    expected = host::getrf(m, n, lapack.data(), m, p.data());
  }
  EXPECT_EQ(info, expected);
  const MatrixView<const T> lu{f.data(), m, n, m, Layout::col_major};
  EXPECT_LT(lu_residual<T>(a.view(), lu, ipiv.data()), kTolerance);
  // The first leaf factors the untouched first columns: the host tournament's pivots exactly.
  const std::int64_t first = std::min({effective_panel_leaf(o), nb, m, n});
  const auto host_ipiv = interchanges_from_pivot_rows(tslu_pivot_rows<T>(m, first, a.data(), m));
  for (std::int64_t j = 0; j < first; ++j) EXPECT_EQ(ipiv[j], host_ipiv[j]) << "first leaf, j=" << j;
}

TEST_F(TsluGpu, GpuResidentLuWithTournamentPanel) {
  for (std::int64_t n : {37, 300, 1000})
    for (auto [nb, leaf] : std::vector<std::pair<std::int64_t, std::int64_t>>{{64, 32}, {128, 32}, {128, 0}, {128, 64}, {64, 8}})
      for (bool la : {true, false}) {
        check_lu<float>(n, n, nb, leaf, la, true, stream_);
        check_lu<double>(n, n, nb, leaf, la, true, stream_);
      }
  for (bool inverse : {true, false}) {
    check_lu<float>(700, 300, 128, 32, true, inverse, stream_);
    check_lu<double>(300, 700, 64, 32, true, inverse, stream_);
    check_lu<double>(2049, 2049, 256, 48, true, inverse, stream_);
  }
  for (std::int64_t zero_col : {0, 70, 299}) check_lu<double>(300, 300, 64, 32, true, true, stream_, zero_col);
}

}  // namespace
}  // namespace gpufact::dense
