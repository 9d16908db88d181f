// Device tests (label gpu) of the dense LU: the pivoting and transpose kernels against the host,
// the hybrid and GPU-resident LU in s and d at odd and rectangular sizes with every option
// switched off one at a time, info on singular input as LAPACK's, NaN input rejected, and the
// device residual against the host one. Without a usable GPU every test reports skipped.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/dense/backward_error.hpp"
#include "factorizations/dense/gpu_residual.hpp"
#include "factorizations/dense/lu_gpu_resident.hpp"
#include "factorizations/dense/lu_hybrid.hpp"
#include "factorizations/dense/lu_schedule.hpp"
#include "kernels/dense/finite_check.cuh"
#include "kernels/dense/row_swaps.cuh"
#include "kernels/dense/transpose.cuh"
#include "kernels/dense/trsm_unit_lower.cuh"

#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace gpufact::dense {
namespace {

constexpr double kTolerance = 30.0;
using DenseLuGpu = GpuTest;

template <class T>
void check_transpose(std::int64_t rows, std::int64_t cols, cudaStream_t s) {
  SCOPED_TRACE("transpose " + std::to_string(rows) + " x " + std::to_string(cols));
  const std::int64_t ld_in = rows + 5, ld_out = cols + 3;
  std::vector<T> in(static_cast<std::size_t>(ld_in * cols));
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<T>(i % 1009) + T(0.5);
  DeviceBuffer<T> din(in.size()), dout(static_cast<std::size_t>(ld_out * rows));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(din.data(), in.data(), din.bytes(), cudaMemcpyHostToDevice, s));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(dout.data(), 0xff, dout.bytes(), s));
  kernels::launch_transpose(din.data(), ld_in, dout.data(), ld_out, rows, cols, s);
  const auto out = download(dout.data(), dout.size(), s);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < ld_out; ++j) {
      const T v = out[static_cast<std::size_t>(j + i * ld_out)];
      if (j < cols)
        ASSERT_EQ(v, in[static_cast<std::size_t>(i + j * ld_in)]) << "i=" << i << " j=" << j;
      else
        ASSERT_TRUE(std::isnan(v)) << "padding written at i=" << i << " j=" << j;
    }
}

TEST_F(DenseLuGpu, TransposeMatchesHost) {
  for (auto [r, c] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {1, 77}, {77, 1}, {33, 65}, {1000, 129}, {64, 2049}}) {
    check_transpose<float>(r, c, stream_);
    check_transpose<double>(r, c, stream_);
  }
}

template <class T>
void check_swaps(std::int64_t rows, std::int64_t cols, bool row_major, bool from_device, cudaStream_t s,
                 std::int64_t max_count = 300, int distinct_targets = 0) {
  SCOPED_TRACE("swaps " + std::to_string(rows) + " x " + std::to_string(cols) + (row_major ? " row-major" : " col-major") +
               (from_device ? " device pivots" : " pivots by value") + " max_count " + std::to_string(max_count) +
               " distinct " + std::to_string(distinct_targets));
  const std::int64_t ld = (row_major ? cols : rows) + 7;
  const std::int64_t first = rows / 3, count = std::min<std::int64_t>(rows - first, max_count);
  const std::int64_t skip0 = cols / 4, skip1 = cols / 4 + std::min<std::int64_t>(cols / 4, 5);
  std::vector<T> a(static_cast<std::size_t>(ld * (row_major ? rows : cols)));
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(i);
  std::mt19937 gen(static_cast<unsigned>(rows * 31 + cols));
  std::vector<int> targets(static_cast<std::size_t>(count));
  std::vector<std::int64_t> local(static_cast<std::size_t>(count));
  for (std::int64_t k = 0; k < count; ++k) {
    targets[k] = static_cast<int>(first + k + gen() % (rows - first - k));
    // Few distinct rows below the panel: the same row is swapped again and again.
    if (distinct_targets > 0 && first + count + distinct_targets <= rows && gen() % 4 != 0)
      targets[k] = static_cast<int>(first + count + gen() % distinct_targets);
    local[k] = targets[k] - first + 1;
  }
  auto at = [&](std::vector<T>& x, std::int64_t r, std::int64_t c) -> T& {
    return row_major ? x[static_cast<std::size_t>(r * ld + c)] : x[static_cast<std::size_t>(r + c * ld)];
  };
  std::vector<T> expected = a;
  for (std::int64_t c = 0; c < cols; ++c) {
    if (c >= skip0 && c < skip1) continue;
    for (std::int64_t k = 0; k < count; ++k) std::swap(at(expected, first + k, c), at(expected, targets[k], c));
  }
  DeviceBuffer<T> d(a.size());
  DeviceBuffer<std::int64_t> dpiv(local.size());
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), a.data(), d.bytes(), cudaMemcpyHostToDevice, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dpiv.data(), local.data(), dpiv.bytes(), cudaMemcpyHostToDevice, s));
  if (from_device)
    kernels::launch_apply_row_swaps_device(d.data(), ld, row_major, cols, skip0, skip1, first, dpiv.data(), count, s);
  else
    kernels::launch_apply_row_swaps(d.data(), ld, row_major, cols, skip0, skip1, first, targets.data(),
                                    static_cast<int>(count), s);
  EXPECT_EQ(download(d.data(), d.size(), s), expected);
}

TEST_F(DenseLuGpu, RowSwapsMatchHostBothLayoutsBothPivotSources) {
  for (auto [r, c] : std::vector<std::pair<std::int64_t, std::int64_t>>{{3, 1}, {100, 17}, {1000, 1000}, {2049, 300}})
    for (bool row_major : {true, false})
      for (bool dev : {false, true}) {
        check_swaps<float>(r, c, row_major, dev, stream_);
        check_swaps<double>(r, c, row_major, dev, stream_);
      }
  // Column-major device pivots: the permutation kernel at its limit (512) with heavily repeated
  // targets, one swap, and the thread-per-column fallback above 512.
  for (int distinct : {0, 1, 3, 40}) {
    check_swaps<float>(3000, 333, false, true, stream_, 512, distinct);
    check_swaps<double>(3000, 70, false, true, stream_, 512, distinct);
    check_swaps<float>(700, 33, false, true, stream_, 7, distinct);
  }
  check_swaps<float>(5, 9, false, true, stream_, 1);
  check_swaps<float>(3000, 100, false, true, stream_, 700, 5);
  check_swaps<double>(3000, 100, false, true, stream_, 513);
  std::vector<int> too_many(kernels::kMaxSwapsPerLaunch + 1, 0);
  EXPECT_THROW(kernels::launch_apply_row_swaps(static_cast<float*>(nullptr), 1, true, 1, 0, 0, 0, too_many.data(),
                                               kernels::kMaxSwapsPerLaunch + 1, stream_),
               std::invalid_argument);
}

// The panel's unit lower solve against a plain host forward substitution: block edges (h around
// 16 and 256), partial CTAs of right-hand sides, a leading dimension larger than h, and the values
// on and above L's diagonal never read (NaN there).
template <class T>
void check_trsm_unit_lower(std::int64_t h, std::int64_t nrhs, cudaStream_t s) {
  SCOPED_TRACE("trsm_unit_lower h = " + std::to_string(h) + ", nrhs = " + std::to_string(nrhs));
  const std::int64_t ldl = h + 3, ldb = h + 7;
  HostMatrix<T> l(ldl, h), b(ldb, nrhs);
  fill_uniform(l.view(), 40 + static_cast<std::uint64_t>(h));
  fill_uniform(b.view(), 41 + static_cast<std::uint64_t>(nrhs));
  for (std::int64_t j = 0; j < h; ++j)
    for (std::int64_t i = 0; i < ldl; ++i) {
      if (i <= j) l(i, j) = std::numeric_limits<T>::quiet_NaN();
      else l(i, j) *= T(2) / static_cast<T>(h);  // keeps L⁻¹ bounded
    }
  std::vector<T> lv(l.data(), l.data() + ldl * h), bv(b.data(), b.data() + ldb * nrhs), want = bv;
  for (std::int64_t c = 0; c < nrhs; ++c)
    for (std::int64_t i = 0; i < h; ++i) {
      double x = want[static_cast<std::size_t>(i + c * ldb)];
      for (std::int64_t k = 0; k < i; ++k)
        x -= static_cast<double>(lv[static_cast<std::size_t>(i + k * ldl)]) *
             static_cast<double>(want[static_cast<std::size_t>(k + c * ldb)]);
      want[static_cast<std::size_t>(i + c * ldb)] = static_cast<T>(x);
    }
  DeviceBuffer<T> dl(lv.size()), db(bv.size());
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dl.data(), lv.data(), dl.bytes(), cudaMemcpyHostToDevice, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(db.data(), bv.data(), db.bytes(), cudaMemcpyHostToDevice, s));
  kernels::launch_trsm_unit_lower(dl.data(), ldl, h, db.data(), ldb, nrhs, s);
  const auto got = download(db.data(), db.size(), s);
  double err = 0;
  for (std::int64_t c = 0; c < nrhs; ++c)
    for (std::int64_t i = 0; i < ldb; ++i) {
      const auto at = static_cast<std::size_t>(i + c * ldb);
      if (i >= h) {
        ASSERT_EQ(got[at], bv[at]) << "row " << i << " below h changed";
        continue;
      }
      err = std::max(err, std::abs(static_cast<double>(got[at]) - static_cast<double>(want[at])));
    }
  EXPECT_LT(err, 100 * static_cast<double>(h) * unit_roundoff<T>());
}

TEST_F(DenseLuGpu, TrsmUnitLowerMatchesForwardSubstitution) {
  for (auto [h, nrhs] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {1, 1}, {15, 3}, {16, 16}, {17, 33}, {100, 8}, {256, 40}, {257, 17}, {512, 512}}) {
    check_trsm_unit_lower<float>(h, nrhs, stream_);
    check_trsm_unit_lower<double>(h, nrhs, stream_);
  }
  DeviceBuffer<float> x(1);
  EXPECT_THROW(kernels::launch_trsm_unit_lower(x.data(), 513, 513, x.data(), 513, 1, stream_), std::invalid_argument);
  EXPECT_THROW(kernels::launch_trsm_unit_lower(x.data(), 4, 5, x.data(), 5, 1, stream_), std::invalid_argument);
}

TEST_F(DenseLuGpu, FindNonfiniteReportsTheFirst) {
  const std::int64_t m = 300, n = 70;
  std::vector<float> a(m * n, 1.0f);
  a[5 + 60 * m] = std::numeric_limits<float>::infinity();
  a[200 + 10 * m] = std::numeric_limits<float>::quiet_NaN();
  DeviceBuffer<float> d(a.size());
  DeviceBuffer<unsigned long long> first(1);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), a.data(), d.bytes(), cudaMemcpyHostToDevice, stream_));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(first.data(), 0xff, 8, stream_));
  kernels::launch_find_nonfinite(d.data(), 1, m, m, n, first.data(), stream_);
  EXPECT_EQ(download(first.data(), first.size(), stream_)[0], 200u + 10u * m);
}

struct Shape {
  std::int64_t m, n;
};

std::vector<Shape> shapes() { return {{1, 1}, {17, 17}, {100, 100}, {1000, 1000}, {2049, 2049}, {700, 300}, {300, 700}}; }

std::vector<std::pair<std::string, LuOptions>> option_sets() {
  std::vector<std::pair<std::string, LuOptions>> sets;
  LuOptions all;
  all.nb = 64;
  sets.push_back({"all on", all});
  for (const char* off : {"row_major", "inverse_trsm", "lookahead", "two_level"}) {
    LuOptions o = all;
    if (std::string(off) == "row_major") o.row_major = false;
    if (std::string(off) == "inverse_trsm") o.inverse_trsm = false;
    if (std::string(off) == "lookahead") o.lookahead = false;
    if (std::string(off) == "two_level") o.two_level = false;
    sets.push_back({std::string("without ") + off, o});
  }
  LuOptions odd = all;
  odd.nb = 48;
  odd.coarse_factor = 2;
  sets.push_back({"nb 48, coarse 2", odd});
  return sets;
}

template <class T>
void check_hybrid(Shape sh, const std::string& what, const LuOptions& o, cudaStream_t s) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s" : "d") + " hybrid m=" + std::to_string(sh.m) + " n=" +
               std::to_string(sh.n) + " " + what);
  const std::int64_t lda = sh.m + 2;
  HostMatrix<T> a(sh.m, sh.n, lda);
  fill_uniform(a.view(), static_cast<std::uint64_t>(sh.m * 7 + sh.n));
  PinnedBuffer<T> work(static_cast<std::size_t>(lda * sh.n));
  std::memcpy(work.data(), a.data(), work.bytes());
  std::vector<int> ipiv(static_cast<std::size_t>(std::min(sh.m, sh.n)), -1);
  LuHybridWorkspace<T> ws(sh.m, sh.n, o);
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.matrix.data(), 0xff, ws.matrix.bytes(), s));  // poison
  PhaseTimer timer;
  const int info = lu_hybrid(sh.m, sh.n, work.data(), lda, ipiv.data(), ws, s, &timer);
  EXPECT_EQ(info, 0);
  const MatrixView<const T> lu{work.data(), sh.m, sh.n, lda, Layout::col_major};
  EXPECT_LT(lu_residual<T>(a.view(), lu, ipiv.data()), kTolerance);
  const PhaseTotals t = timer.finish();
  EXPECT_GT(t[Phase::transfer], 0.0);
  // The overlap is measured from the intervals: never more than either activity or the wall.
  EXPECT_GE(t.overlap, 0.0);
  EXPECT_LE(t.overlap, t[Phase::cpu_panel] + 1e-9);
  EXPECT_LE(t.overlap_compute, t.overlap + 1e-9);
  EXPECT_LE(t.overlap, t.wall_s);
  EXPECT_GE(t.idle, 0.0);
  EXPECT_LE(t.idle, t.wall_s);
  if (sh.m > 1 && sh.n > 1 && sh.m > o.nb) {
    EXPECT_GT(t[Phase::gpu_compute], 0.0);
  }
}

template <class T>
void check_resident(Shape sh, bool lookahead, bool from_host, cudaStream_t s, std::int64_t nb = 64,
                    std::int64_t leaf = 0, UpdateGemm gemm = UpdateGemm::cublas, bool inverse = true,
                    int panel_sms = 0, PanelSolve panel_solve = PanelSolve::automatic) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s" : "d") + " resident m=" + std::to_string(sh.m) + " n=" +
               std::to_string(sh.n) + (lookahead ? " lookahead" : "") + (from_host ? " host data" : " device data") +
               " nb=" + std::to_string(nb) + " leaf=" + std::to_string(leaf) + " " + update_gemm_entry(gemm).name +
               (inverse ? " inverse" : " trsm") + " panel_sms=" + std::to_string(panel_sms) +
               " panel_solve=" + panel_solve_name(panel_solve));
  HostMatrix<T> a(sh.m, sh.n);
  fill_uniform(a.view(), static_cast<std::uint64_t>(sh.m * 5 + sh.n));
  PinnedBuffer<T> work(static_cast<std::size_t>(sh.m * sh.n));
  std::memcpy(work.data(), a.data(), work.bytes());
  std::vector<int> ipiv(static_cast<std::size_t>(std::min(sh.m, sh.n)), -1);
  LuOptions o;
  o.nb = nb;
  o.lookahead = lookahead;
  o.panel_leaf = leaf;
  o.gemm = gemm;
  o.inverse_trsm = inverse;
  o.panel_sms = panel_sms;
  o.panel_solve = panel_solve;
  LuResidentWorkspace<T> ws(sh.m, sh.n, o);
  int info = 0;
  PhaseTimer timer;
  if (from_host) {
    info = lu_gpu_resident_host(sh.m, sh.n, work.data(), sh.m, ipiv.data(), ws, s);
  } else {
    DeviceBuffer<T> d(work.size());
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), work.data(), d.bytes(), cudaMemcpyHostToDevice, s));
    info = lu_gpu_resident(sh.m, sh.n, d.data(), sh.m, ipiv.data(), ws, s, &timer);
    const PhaseTotals t = timer.finish();
    if (sh.m > 16 && sh.n > 16) {
      EXPECT_GT(t[Phase::gpu_panel], 0.0);
    }
    // U12 exists (and is timed) when some column lies right of the first panel.
    if (std::min(sh.m, sh.n) > 0 && sh.n > std::min({nb, sh.m, sh.n})) {
      EXPECT_GT(t[Phase::gpu_u12], 0.0);
    }
    EXPECT_LE(t.overlap, t[Phase::gpu_panel] + 1e-9);
    EXPECT_LE(t.overlap_compute, t.overlap + 1e-9);
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(work.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  EXPECT_EQ(info, 0);
  const MatrixView<const T> lu{work.data(), sh.m, sh.n, sh.m, Layout::col_major};
  EXPECT_LT(lu_residual<T>(a.view(), lu, ipiv.data()), kTolerance);
}

TEST_F(DenseLuGpu, HybridEveryOptionOffOneAtATime) {
  for (const auto& sh : shapes())
    for (const auto& [what, o] : option_sets()) {
      check_hybrid<float>(sh, what, o, stream_);
      check_hybrid<double>(sh, what, o, stream_);
    }
}

TEST_F(DenseLuGpu, GpuResidentWithAndWithoutLookahead) {
  for (const auto& sh : shapes())
    for (bool la : {true, false})
      for (bool host : {false, true}) {
        check_resident<float>(sh, la, host, stream_);
        check_resident<double>(sh, la, host, stream_);
      }
}

// The recursive panel (leaves by cuSOLVER, trsm + GEMM between halves, interchanges carried to
// both sides): leaf = nb (one leaf), leaves that tile nb, a narrow last leaf (nb 100, leaf 24),
// the smallest leaf, with and without look-ahead, and the simt GEMM in FP32.
TEST_F(DenseLuGpu, GpuResidentRecursivePanel) {
  for (const auto& sh : shapes())
    for (auto [nb, leaf] : std::vector<std::pair<std::int64_t, std::int64_t>>{{64, 64}, {64, 16}, {100, 24}, {128, 8}})
      for (bool la : {true, false}) {
        check_resident<float>(sh, la, false, stream_, nb, leaf);
        check_resident<double>(sh, la, false, stream_, nb, leaf);
      }
  check_resident<float>({300, 300}, true, false, stream_, 96, 32, UpdateGemm::simt);
  check_resident<float>({300, 300}, true, false, stream_, 64, 0, UpdateGemm::simt);
  // The panel's solves each way (automatic: FP32 by cuBLAS, FP64 by the kernel).
  check_resident<float>({300, 200}, true, false, stream_, 128, 16, UpdateGemm::cublas, true, 0, PanelSolve::kernel);
  check_resident<double>({257, 257}, true, false, stream_, 100, 24, UpdateGemm::cublas, true, 0, PanelSolve::cublas);
}

// The trailing update kept off panel_sms SMs (a green context): the same factorization.
TEST_F(DenseLuGpu, GpuResidentUpdateKeptOffPanelSms) {
  for (int sms : {8, 24}) {
    check_resident<float>({1000, 1000}, true, false, stream_, 128, 0, UpdateGemm::cublas, true, sms);
    check_resident<double>({777, 1031}, true, true, stream_, 64, 32, UpdateGemm::cublas, true, sms);
  }
}

// U12 by inv(L11)·A12 (GEMM, the default) and by trsm (the ablation) give the same factorization:
// odd sizes, nb not dividing n, a narrow last panel, m < n and m > n, recursive panels, both data
// places, with and without look-ahead.
TEST_F(DenseLuGpu, GpuResidentInverseAndTrsmU12) {
  for (const auto& sh : shapes())
    for (bool inverse : {true, false})
      for (bool la : {true, false}) {
        check_resident<float>(sh, la, false, stream_, 64, 0, UpdateGemm::cublas, inverse);
        check_resident<double>(sh, la, false, stream_, 64, 0, UpdateGemm::cublas, inverse);
        check_resident<float>(sh, la, true, stream_, 100, 24, UpdateGemm::cublas, inverse);
        check_resident<double>(sh, la, false, stream_, 100, 24, UpdateGemm::cublas, inverse);
      }
  for (bool inverse : {true, false}) {
    check_resident<float>({1000, 1000}, true, false, stream_, 256, 0, UpdateGemm::cublas, inverse);
    check_resident<double>({777, 1031}, true, false, stream_, 128, 32, UpdateGemm::cublas, inverse);
    check_resident<float>({1031, 777}, false, false, stream_, 128, 0, UpdateGemm::cublas, inverse);
  }
}

// A zero column k stays exactly zero through every update: LAPACK's info is k + 1.
TEST_F(DenseLuGpu, SingularInfoAsLapack) {
  const std::int64_t n = 300;
  for (std::int64_t zero_col : {0, 70, 299}) {
    HostMatrix<double> a(n, n), ref(n, n);
    fill_uniform(a.view(), 9);
    for (std::int64_t i = 0; i < n; ++i) a(i, zero_col) = 0.0;
    host::lacpy(n, n, a.data(), n, ref.data(), n);
    std::vector<int> ipiv(n);
    const int expected = host::getrf(n, n, ref.data(), n, ipiv.data());
    ASSERT_EQ(expected, zero_col + 1);
    for (const auto& [what, o] : option_sets()) {
      PinnedBuffer<double> work(static_cast<std::size_t>(n * n));
      std::memcpy(work.data(), a.data(), work.bytes());
      LuHybridWorkspace<double> ws(n, n, o);
      EXPECT_EQ(lu_hybrid(n, n, work.data(), n, ipiv.data(), ws, stream_), expected) << what;
      const MatrixView<const double> lu{work.data(), n, n, n, Layout::col_major};
      EXPECT_LT(lu_residual<double>(a.view(), lu, ipiv.data()), kTolerance) << what;
    }
    for (std::int64_t leaf : {0, 16})
      for (bool inverse : {true, false}) {
        PinnedBuffer<double> work(static_cast<std::size_t>(n * n));
        std::memcpy(work.data(), a.data(), work.bytes());
        LuOptions o;
        o.nb = 64;
        o.panel_leaf = leaf;
        o.inverse_trsm = inverse;
        LuResidentWorkspace<double> ws(n, n, o);
        EXPECT_EQ(lu_gpu_resident_host(n, n, work.data(), n, ipiv.data(), ws, stream_), expected)
            << "gpu_resident leaf " << leaf << (inverse ? " inverse" : " trsm");
        const MatrixView<const double> lu{work.data(), n, n, n, Layout::col_major};
        EXPECT_LT(lu_residual<double>(a.view(), lu, ipiv.data()), kTolerance) << "gpu_resident leaf " << leaf;
      }
  }
}

// LuOptions::graph: the first call captures, later calls on the same matrix replay the graph on
// new data (each replay must factor what the matrix holds now, and report its own info, pivots
// and non-finite entries), and a call on another matrix captures again. Cooperative and cuSOLVER
// leaves, odd and rectangular shapes, both precisions.
template <class T>
void check_graph_replays(std::int64_t m, std::int64_t n, PanelMethod panel, cudaStream_t s) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s" : "d") + " graph m=" + std::to_string(m) + " n=" + std::to_string(n) +
               " panel=" + panel_method_name(panel));
  LuOptions o;
  o.panel = panel;
  o.graph = true;
  LuResidentWorkspace<T> ws(m, n, o);
  DeviceBuffer<T> first(static_cast<std::size_t>(m * n)), second(first.size());
  std::vector<int> ipiv(static_cast<std::size_t>(std::min(m, n)), -1);
  auto factor = [&](DeviceBuffer<T>& d, const HostMatrix<T>& a) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), a.data(), d.bytes(), cudaMemcpyHostToDevice, s));
    std::fill(ipiv.begin(), ipiv.end(), -1);
    const int info = lu_gpu_resident(m, n, d.data(), m, ipiv.data(), ws, s);
    const auto lu = download(d.data(), d.size(), s);
    return std::pair{info, lu_residual<T>(a.view(), MatrixView<const T>{lu.data(), m, n, m, Layout::col_major},
                                          ipiv.data())};
  };
  for (std::uint64_t seed : {1, 2, 3}) {  // capture, then two replays on fresh matrices
    HostMatrix<T> a(m, n);
    fill_uniform(a.view(), seed);
    const auto [info, residual] = factor(first, a);
    EXPECT_EQ(info, 0) << "seed " << seed;
    EXPECT_LT(residual, kTolerance) << "seed " << seed;
  }
  const cudaGraphExec_t captured = ws.graph.exec();
  HostMatrix<T> singular(m, n);
  fill_uniform(singular.view(), 4);
  const std::int64_t zero_col = std::min(m, n) / 2;
  for (std::int64_t i = 0; i < m; ++i) singular(i, zero_col) = T(0);
  const auto [info, residual] = factor(first, singular);
  EXPECT_EQ(info, zero_col + 1) << "replayed on a matrix with column " << zero_col << " zero";
  EXPECT_LT(residual, kTolerance);
  EXPECT_EQ(ws.graph.exec(), captured) << "the same matrix must replay, not capture again";
  HostMatrix<T> other(m, n);
  fill_uniform(other.view(), 5);
  const auto [info2, residual2] = factor(second, other);
  EXPECT_EQ(info2, 0);
  EXPECT_LT(residual2, kTolerance) << "after capturing for another matrix";
  HostMatrix<T> bad(m, n);
  fill_uniform(bad.view(), 6);
  bad(m - 1, n - 1) = std::numeric_limits<T>::infinity();
  EXPECT_THROW(factor(second, bad), std::invalid_argument) << "Inf in a replayed call";
}

TEST_F(DenseLuGpu, GpuResidentGraphReplays) {
  check_graph_replays<float>(1000, 1000, PanelMethod::cooperative, stream_);
  check_graph_replays<double>(777, 1031, PanelMethod::cooperative, stream_);
  check_graph_replays<float>(1031, 777, PanelMethod::cusolver, stream_);
  check_graph_replays<double>(300, 300, PanelMethod::cusolver, stream_);
  LuOptions o;
  o.graph = true;
  o.panel_sms = 8;
  EXPECT_THROW(validate(o), std::invalid_argument) << "graph with a green context";
}

TEST_F(DenseLuGpu, NonFiniteInputIsAClearError) {
  const std::int64_t n = 200;
  HostMatrix<float> a(n, n);
  fill_uniform(a.view(), 4);
  a(33, 150) = std::numeric_limits<float>::quiet_NaN();
  std::vector<int> ipiv(n);
  for (bool row_major : {true, false}) {
    PinnedBuffer<float> work(static_cast<std::size_t>(n * n));
    std::memcpy(work.data(), a.data(), work.bytes());
    LuOptions o;
    o.row_major = row_major;
    LuHybridWorkspace<float> ws(n, n, o);
    try {
      lu_hybrid(n, n, work.data(), n, ipiv.data(), ws, stream_);
      ADD_FAILURE() << "NaN accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("A(33, 150)"), std::string::npos) << e.what();
    }
  }
  for (PanelMethod panel : {PanelMethod::cusolver, PanelMethod::cooperative}) {
    PinnedBuffer<float> work(static_cast<std::size_t>(n * n));
    std::memcpy(work.data(), a.data(), work.bytes());
    LuOptions o;
    o.panel = panel;
    LuResidentWorkspace<float> ws(n, n, o);
    EXPECT_THROW(lu_gpu_resident_host(n, n, work.data(), n, ipiv.data(), ws, stream_), std::invalid_argument)
        << panel_method_name(panel);
  }
}

TEST_F(DenseLuGpu, DeviceResidualAgreesWithHost) {
  for (auto [m, n] : std::vector<std::pair<std::int64_t, std::int64_t>>{{1, 1}, {257, 257}, {300, 100}, {100, 300}}) {
    HostMatrix<double> a(m, n), lu(m, n);
    fill_uniform(a.view(), 12);
    host::lacpy(m, n, a.data(), m, lu.data(), m);
    std::vector<int> ipiv(static_cast<std::size_t>(std::min(m, n)));
    ASSERT_EQ(host::getrf(m, n, lu.data(), m, ipiv.data()), 0);
    const double h = lu_residual<double>(a.view(), lu.view(), ipiv.data());
    const double d = lu_residual_device<double>(a.view(), lu.view(), ipiv.data(), stream_);
    EXPECT_NEAR(d, h, 0.5 + 0.5 * h) << m << " x " << n;
    lu(0, 0) += 1e-3;  // a wrong factor must show
    EXPECT_GT(lu_residual_device<double>(a.view(), lu.view(), ipiv.data(), stream_), 1e3);
  }
}

// volkov08.accuracy's residuals in double from FP32 factors, against the same sums done on the
// host in double, for LU (PA − LU), Cholesky (A − LLᵀ) and QR (A − QR).
double max_abs(const std::vector<double>& r) {
  double x = 0;
  for (double v : r) x = std::max(x, std::fabs(v));
  return x;
}

TEST_F(DenseLuGpu, BackwardErrorInDoubleMatchesHost) {
  const std::int64_t m = 70, n = 50;
  HostMatrix<float> a(n, n), f(n, n);
  fill_uniform(a.view(), 5);
  host::lacpy(n, n, a.data(), n, f.data(), n);
  std::vector<int> ipiv(static_cast<std::size_t>(n));
  ASSERT_EQ(host::getrf(n, n, f.data(), n, ipiv.data()), 0);
  std::vector<double> pa(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n * n; ++i) pa[static_cast<std::size_t>(i)] = a.data()[i];
  for (std::int64_t k = 0; k < n; ++k)  // P A, LAPACK's sequential interchanges
    for (std::int64_t j = 0; j < n; ++j) std::swap(pa[k + j * n], pa[(ipiv[k] - 1) + j * n]);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double lu = 0;
      for (std::int64_t k = 0; k <= std::min(i, j); ++k)
        lu += (k == i ? 1.0 : static_cast<double>(f(i, k))) * static_cast<double>(f(k, j));
      pa[i + j * n] -= lu;
    }
  double a_max = 0;
  for (std::int64_t i = 0; i < n * n; ++i) a_max = std::max(a_max, std::fabs(static_cast<double>(a.data()[i])));
  const BackwardError e = lu_backward_error<float>(a.view(), f.view(), ipiv.data(), stream_);
  EXPECT_NEAR(e.residual_max, max_abs(pa), 1e-12);
  EXPECT_DOUBLE_EQ(e.a_max, a_max);
  EXPECT_NEAR(e.in_max_units(), max_abs(pa) / (std::ldexp(1.0, -23) * a_max), 1e-6);
  EXPECT_GT(e.residual_max, 0.0);  // FP32 factors are not exact in double
  f(3, 7) += 1e-2f;                // a wrong factor must show
  EXPECT_GT(lu_backward_error<float>(a.view(), f.view(), ipiv.data(), stream_).in_max_units(), 1e3);

  // Cholesky: SPD A = XᵀX/n + I.
  HostMatrix<float> x(n, n), spd(n, n), l(n, n);
  fill_uniform(x.view(), 6);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double v = i == j ? 1.0 : 0.0;
      for (std::int64_t k = 0; k < n; ++k) v += static_cast<double>(x(k, i)) * x(k, j) / n;
      spd(i, j) = static_cast<float>(v);
    }
  host::lacpy(n, n, spd.data(), n, l.data(), n);
  ASSERT_EQ(host::potrf(Uplo::lower, n, l.data(), n), 0);
  double chol_max = 0;
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j <= i; ++j) {  // A − LLᵀ is symmetric: the lower half has its max
      double v = spd(i, j);
      for (std::int64_t k = 0; k <= j; ++k) v -= static_cast<double>(l(i, k)) * l(j, k);
      chol_max = std::max(chol_max, std::fabs(v));
    }
  l(0, n - 1) = 1e6f;  // the strict upper triangle is not part of the factor
  EXPECT_NEAR(cholesky_backward_error<float>(spd.view(), l.view(), stream_).residual_max, chol_max, 1e-12);

  // QR of a 70 × 50 matrix.
  HostMatrix<float> b(m, n), qr(m, n);
  fill_uniform(b.view(), 7);
  host::lacpy(m, n, b.data(), m, qr.data(), m);
  std::vector<float> tau(static_cast<std::size_t>(n));
  ASSERT_EQ(host::geqrf(m, n, qr.data(), m, tau.data()), 0);
  HostMatrix<float> q(m, n);
  host::lacpy(m, n, qr.data(), m, q.data(), m);
  ASSERT_EQ(host::orgqr(m, n, n, q.data(), m, tau.data()), 0);
  double qr_max = 0;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double v = b(i, j);
      for (std::int64_t k = 0; k <= j; ++k) v -= static_cast<double>(q(i, k)) * qr(k, j);
      qr_max = std::max(qr_max, std::fabs(v));
    }
  EXPECT_NEAR(qr_backward_error<float>(b.view(), qr.view(), q.view(), stream_).residual_max, qr_max, 1e-12);
}

}  // namespace
}  // namespace gpufact::dense
