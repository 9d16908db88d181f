// Device tests (label gpu) of the dense Cholesky: the triangle kernels, the hybrid and the
// GPU-resident Cholesky (host and device data) in s and d at odd n (1, 37, 300, 1000) with nb 64
// and 128, each option switched, against host potrf and the scaled residual; the strict upper
// triangle left untouched; info on input that is not SPD as LAPACK's; NaN input rejected; the
// device test matrix and residual against the host ones. Without a usable GPU every test skips.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/dense/cholesky_gpu_residual.hpp"
#include "factorizations/dense/cholesky_gpu_resident.hpp"
#include "factorizations/dense/cholesky_hybrid.hpp"
#include "kernels/dense/triangle.cuh"

#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact::dense {
namespace {

constexpr double kTolerance = 30.0;
using DenseCholeskyGpu = GpuTest;

enum class Driver { hybrid, resident_host, resident_device };
const char* name_of(Driver d) {
  return d == Driver::hybrid ? "hybrid" : d == Driver::resident_host ? "gpu_resident (host data)" : "gpu_resident (device data)";
}

// Factors `a` (n × n, ld lda, pinned) in place with the driver; returns info.
template <class T>
int factor(Driver drv, std::int64_t n, T* a, std::int64_t lda, const CholeskyOptions& o, cudaStream_t s) {
  if (drv == Driver::hybrid) {
    CholeskyHybridWorkspace<T> ws(n, o);
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.matrix.data(), 0xff, ws.matrix.bytes(), s));  // poison: NaN
    return cholesky_hybrid(n, a, lda, ws, s);
  }
  CholeskyResidentWorkspace<T> ws(n, o);
  if (drv == Driver::resident_host) return cholesky_gpu_resident_host(n, a, lda, ws, s);
  DeviceBuffer<T> d(static_cast<std::size_t>(std::max<std::int64_t>(lda * n, 1)));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), a, static_cast<std::size_t>(lda * n) * sizeof(T), cudaMemcpyHostToDevice, s));
  int info = 0;
  info = cholesky_gpu_resident(n, d.data(), lda, ws, s);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(a, d.data(), static_cast<std::size_t>(lda * n) * sizeof(T), cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  return info;
}

template <class T>
void check_factor(Driver drv, std::int64_t n, const CholeskyOptions& o, std::uint64_t seed, cudaStream_t s,
                  bool benchmark_matrix = false) {
  SCOPED_TRACE(std::string(name_of(drv)) + (sizeof(T) == 4 ? " s" : " d") + " n=" + std::to_string(n) + " " +
               describe(o));
  const std::int64_t lda = n + 3;
  HostMatrix<T> a(n, n, lda), ref(n, n, lda);
  if (benchmark_matrix)
    make_spd_test_matrix(a.view(), seed, s);
  else
    fill_spd(a.view(), seed);
  host::lacpy(n, n, a.data(), lda, ref.data(), lda);
  PinnedBuffer<T> work(static_cast<std::size_t>(lda * n));
  std::memcpy(work.data(), a.data(), work.bytes());
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < j; ++i) work[static_cast<std::size_t>(i + j * lda)] = T(-77);
  ASSERT_EQ(factor<T>(drv, n, work.data(), lda, o, s), 0);
  ASSERT_EQ(host::potrf(Uplo::lower, n, ref.data(), lda), 0);
  const MatrixView<const T> l{work.data(), n, n, lda, Layout::col_major};
  EXPECT_LT(cholesky_residual<T>(a.view(), l), kTolerance);
  double diff = 0, scale = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      const T v = work[static_cast<std::size_t>(i + j * lda)];
      if (i < j) {
        ASSERT_EQ(v, T(-77)) << "strict upper triangle written at " << i << ", " << j;
        continue;
      }
      ASSERT_TRUE(std::isfinite(static_cast<double>(v))) << "non-finite L at " << i << ", " << j;
      diff = std::max(diff, std::abs(static_cast<double>(v - ref(i, j))));
      scale = std::max(scale, std::abs(static_cast<double>(ref(i, j))));
    }
  EXPECT_LT(diff, 1e4 * scale * static_cast<double>(std::numeric_limits<T>::epsilon()) * static_cast<double>(std::max<std::int64_t>(n, 1)));
}

std::vector<CholeskyOptions> option_sets(std::int64_t nb, bool fp32) {
  std::vector<CholeskyOptions> sets;
  CholeskyOptions base;
  base.nb = nb;
  base.update_block = 96;
  sets.push_back(base);
  CholeskyOptions o = base;
  o.lookahead = false;
  sets.push_back(o);
  o = base;
  o.inverse_trsm = false;
  sets.push_back(o);
  o = base;
  o.update_block = 0;
  sets.push_back(o);
  if (fp32) {
    o = base;
    o.gemm = UpdateGemm::simt;
    sets.push_back(o);
    o.update_block = 0;
    sets.push_back(o);
  }
  return sets;
}

TEST_F(DenseCholeskyGpu, FactorsMatchPotrfAtOddSizes) {
  std::uint64_t seed = 21;
  for (Driver drv : {Driver::hybrid, Driver::resident_host, Driver::resident_device})
    for (std::int64_t nb : {64, 128})
      for (std::int64_t n : {1, 37, 300, 1000}) {
        for (const auto& o : option_sets(nb, true)) check_factor<float>(drv, n, o, ++seed, stream_);
        for (const auto& o : option_sets(nb, false)) check_factor<double>(drv, n, o, ++seed, stream_);
      }
}

template <class T>
void check_not_spd(Driver drv, std::int64_t n, std::int64_t nb, std::int64_t k, cudaStream_t s,
                   CholeskyDiagonal diagonal = CholeskyDiagonal::cusolver, std::int64_t dataflow_panel = 0) {
  SCOPED_TRACE(std::string(name_of(drv)) + " not SPD at column " + std::to_string(k + 1) + " n=" + std::to_string(n) +
               " diagonal=" + cholesky_diagonal_name(diagonal) + " nb=" + std::to_string(nb));
  HostMatrix<T> a(n, n);
  fill_spd(a.view(), 500 + static_cast<std::uint64_t>(k));
  a(k, k) = T(-1);  // the leading minor of order k + 1 is indefinite
  HostMatrix<T> ref(n, n);
  host::lacpy(n, n, a.data(), n, ref.data(), n);
  const int expected = host::potrf(Uplo::lower, n, ref.data(), n);
  ASSERT_EQ(expected, static_cast<int>(k) + 1);
  PinnedBuffer<T> work(static_cast<std::size_t>(n * n));
  std::memcpy(work.data(), a.data(), work.bytes());
  CholeskyOptions o;
  o.nb = nb;
  o.diagonal = diagonal;
  o.dataflow_panel = dataflow_panel;
  EXPECT_EQ(factor<T>(drv, n, work.data(), n, o, s), expected);
}

TEST_F(DenseCholeskyGpu, NotPositiveDefiniteInfoNamesTheColumn) {
  for (Driver drv : {Driver::hybrid, Driver::resident_host, Driver::resident_device})
    for (std::int64_t k : {0, 40, 64, 65, 299}) {
      check_not_spd<float>(drv, 300, 64, k, stream_);
      check_not_spd<double>(drv, 300, 64, k, stream_);
    }
}

// Diagonal blocks by recursion down to one-CTA 64 × 64 blocks: blocks of 1, 64, 65, 100, 256 and
// 512 columns (leaves full and ragged), s and d, and the failing column's info inside a leaf, at
// a leaf boundary and in the second half of a split.
TEST_F(DenseCholeskyGpu, RecursiveDiagonalBlocks) {
  std::uint64_t seed = 900;
  for (Driver drv : {Driver::resident_host, Driver::resident_device})
    for (std::int64_t nb : {64, 100, 256, 512})
      for (std::int64_t n : {1, 65, 300, 1000}) {
        CholeskyOptions o;
        o.nb = nb;
        o.diagonal = CholeskyDiagonal::recursive;
        check_factor<float>(drv, n, o, ++seed, stream_);
        check_factor<double>(drv, n, o, ++seed, stream_);
        o.inverse_trsm = false;
        check_factor<float>(drv, n, o, ++seed, stream_);
      }
  for (std::int64_t k : {0, 40, 63, 64, 200, 299}) {
    check_not_spd<float>(Driver::resident_device, 300, 256, k, stream_, CholeskyDiagonal::recursive);
    check_not_spd<double>(Driver::resident_device, 300, 256, k, stream_, CholeskyDiagonal::recursive);
  }
}

template <class T>
void check_nan(Driver drv, cudaStream_t s, CholeskyDiagonal diagonal) {
  SCOPED_TRACE(name_of(drv));
  const std::int64_t n = 200;
  HostMatrix<T> a(n, n);
  fill_spd(a.view(), 77);
  PinnedBuffer<T> work(static_cast<std::size_t>(n * n));
  std::memcpy(work.data(), a.data(), work.bytes());
  work[static_cast<std::size_t>(150 + 70 * n)] = std::numeric_limits<T>::quiet_NaN();
  CholeskyOptions o;
  o.nb = 64;
  o.diagonal = diagonal;
  try {
    factor<T>(drv, n, work.data(), n, o, s);
    FAIL() << "NaN input accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("A(150, 70)"), std::string::npos) << e.what();
  }
  // Infinity in the first panel: reported before the CPU's info would be.
  std::memcpy(work.data(), a.data(), work.bytes());
  work[3] = std::numeric_limits<T>::infinity();
  EXPECT_THROW(factor<T>(drv, n, work.data(), n, o, s), std::invalid_argument);
  // The strict upper triangle is not referenced: a NaN there is accepted (LAPACK semantics).
  std::memcpy(work.data(), a.data(), work.bytes());
  work[static_cast<std::size_t>(10 + 150 * n)] = std::numeric_limits<T>::quiet_NaN();
  EXPECT_EQ(factor<T>(drv, n, work.data(), n, o, s), 0);
}

TEST_F(DenseCholeskyGpu, NanInputIsAClearError) {
  for (Driver drv : {Driver::hybrid, Driver::resident_host, Driver::resident_device}) {
    check_nan<float>(drv, stream_, CholeskyDiagonal::cusolver);
    check_nan<double>(drv, stream_, CholeskyDiagonal::cusolver);
  }
}

// The fused diagonal (one-CTA L11 and inv(L11); nb > 128 in two levels): odd n up to 4097 with
// nb 128 (one kernel per block), 64, 100 and 256; each option switched; info on non-SPD input at
// a failing column inside a 32-wide inner panel, at its edges, at a 128 boundary and in the
// second level; NaN input rejected.
TEST_F(DenseCholeskyGpu, FusedDiagonalBlocks) {
  std::uint64_t seed = 3000;
  for (Driver drv : {Driver::resident_host, Driver::resident_device})
    for (std::int64_t nb : {64, 100, 128, 256})
      for (std::int64_t n : {1, 65, 129, 300, 1000}) {
        CholeskyOptions o;
        o.nb = nb;
        o.diagonal = CholeskyDiagonal::fused;
        check_factor<float>(drv, n, o, ++seed, stream_);
        check_factor<double>(drv, n, o, ++seed, stream_);
        o.inverse_trsm = false;
        check_factor<float>(drv, n, o, ++seed, stream_);
        o.inverse_trsm = true;
        o.lookahead = false;
        check_factor<double>(drv, n, o, ++seed, stream_);
        o.lookahead = true;
        o.update_block = 96;
        check_factor<float>(drv, n, o, ++seed, stream_);
      }
  for (std::int64_t nb : {128, 256}) {
    CholeskyOptions o;
    o.nb = nb;
    o.diagonal = CholeskyDiagonal::fused;
    // The benchmark's matrix (XᵀX/n + 0.001·I): unscaled XᵀX is too ill-conditioned for FP32 here.
    check_factor<float>(Driver::resident_device, 4097, o, ++seed, stream_, true);
    check_factor<double>(Driver::resident_device, 4097, o, ++seed, stream_, true);
  }
  for (std::int64_t nb : {128, 256})
    for (std::int64_t k : {0, 31, 32, 40, 127, 128, 200, 299}) {
      check_not_spd<float>(Driver::resident_device, 300, nb, k, stream_, CholeskyDiagonal::fused);
      check_not_spd<double>(Driver::resident_device, 300, nb, k, stream_, CholeskyDiagonal::fused);
    }
  check_not_spd<float>(Driver::resident_host, 1000, 128, 777, stream_, CholeskyDiagonal::fused);
  for (Driver drv : {Driver::resident_host, Driver::resident_device}) {
    check_nan<float>(drv, stream_, CholeskyDiagonal::fused);
    check_nan<double>(drv, stream_, CholeskyDiagonal::fused);
  }
}

// The tile dataflow (one launch per column panel, a syrk or column blocks between): the whole
// matrix and 64- and 192-column panels at odd n, with 16-byte aligned columns (n = 1021, 4093: lda = n + 3) and not;
// the 3-CTA-per-SM kernel above 64 tile rows (n = 4097); info at a failing column inside a tile
// and at tile edges, in one launch and across panels; NaN input rejected.
TEST_F(DenseCholeskyGpu, DataflowTiles) {
  std::uint64_t seed = 5000;
  for (Driver drv : {Driver::resident_host, Driver::resident_device})
    for (std::int64_t panel : {0, 64, 192})
      for (std::int64_t n : {1, 63, 65, 300, 1000, 1021}) {
        CholeskyOptions o;
        o.diagonal = CholeskyDiagonal::dataflow;
        o.dataflow_panel = panel;
        check_factor<float>(drv, n, o, ++seed, stream_);
        check_factor<double>(drv, n, o, ++seed, stream_);
      }
  for (std::int64_t n : {300, 1000}) {  // the update between panels in column blocks (syrk + GEMM)
    CholeskyOptions o;
    o.diagonal = CholeskyDiagonal::dataflow;
    o.dataflow_panel = 128;
    o.update_block = 96;
    check_factor<float>(Driver::resident_device, n, o, ++seed, stream_);
    check_factor<double>(Driver::resident_device, n, o, ++seed, stream_);
  }
  for (std::int64_t panel : {0, 1024}) {
    CholeskyOptions o;
    o.diagonal = CholeskyDiagonal::dataflow;
    o.dataflow_panel = panel;
    for (std::int64_t n : {4093, 4097}) {
      check_factor<float>(Driver::resident_device, n, o, ++seed, stream_, true);
      check_factor<double>(Driver::resident_device, n, o, ++seed, stream_, true);
    }
  }
  for (std::int64_t k : {0, 15, 16, 40, 63, 64, 65, 127, 128, 200, 299}) {
    check_not_spd<float>(Driver::resident_device, 300, 64, k, stream_, CholeskyDiagonal::dataflow);
    check_not_spd<double>(Driver::resident_device, 300, 64, k, stream_, CholeskyDiagonal::dataflow);
  }
  for (std::int64_t k : {63, 64, 130, 250})  // in the first 128-column panel, or after a syrk
    check_not_spd<float>(Driver::resident_device, 300, 64, k, stream_, CholeskyDiagonal::dataflow, 128);
  check_not_spd<float>(Driver::resident_host, 1000, 64, 777, stream_, CholeskyDiagonal::dataflow);
  for (Driver drv : {Driver::resident_host, Driver::resident_device}) {
    check_nan<float>(drv, stream_, CholeskyDiagonal::dataflow);
    check_nan<double>(drv, stream_, CholeskyDiagonal::dataflow);
  }
  CholeskyOptions bad;
  bad.diagonal = CholeskyDiagonal::dataflow;
  bad.dataflow_panel = 100;
  EXPECT_THROW(validate(bad), std::invalid_argument);
}

// The trailing update kept off panel_sms SMs (a green context): the same factor, for each
// diagonal kind; a partition that leaves the update no SMs is a clear error naming panel_sms.
TEST_F(DenseCholeskyGpu, UpdateKeptOffPanelSms) {
  std::uint64_t seed = 4000;
  for (CholeskyDiagonal diagonal : {CholeskyDiagonal::cusolver, CholeskyDiagonal::fused})
    for (int sms : {1, 16}) {
      CholeskyOptions o;
      o.nb = 128;
      o.diagonal = diagonal;
      o.panel_sms = sms;
      check_factor<float>(Driver::resident_device, 1000, o, ++seed, stream_);
      check_factor<double>(Driver::resident_host, 777, o, ++seed, stream_);
    }
  CholeskyOptions o;
  o.panel_sms = 100000;
  try {
    CholeskyResidentWorkspace<float> ws(256, o);
    ADD_FAILURE() << "panel_sms = 100000 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("panel_sms = 100000"), std::string::npos) << e.what();
  }
  o.panel_sms = -1;
  EXPECT_THROW(CholeskyResidentWorkspace<float>(256, o), std::invalid_argument);
}

TEST_F(DenseCholeskyGpu, TriangleKernels) {
  for (std::int64_t n : {1, 2, 33, 300}) {
    const std::int64_t ld = n + 5;
    std::vector<double> h(static_cast<std::size_t>(ld * n));
    for (std::size_t i = 0; i < h.size(); ++i) h[i] = static_cast<double>(i % 997) + 0.25;
    DeviceBuffer<double> d(h.size());
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), h.data(), d.bytes(), cudaMemcpyHostToDevice, stream_));
    kernels::launch_mirror_lower_to_upper(d.data(), ld, n, stream_);
    std::vector<double> m(h.size());
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(m.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, stream_));
    kernels::launch_zero_strict_upper(d.data(), ld, n, stream_);
    std::vector<double> z(h.size());
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(z.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, stream_));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < ld; ++i) {
        const std::size_t at = static_cast<std::size_t>(i + j * ld);
        if (i < j) {
          ASSERT_EQ(m[at], h[static_cast<std::size_t>(j + i * ld)]) << i << "," << j;
          ASSERT_EQ(z[at], 0.0);
        } else {
          ASSERT_EQ(m[at], h[at]);  // lower triangle and padding untouched
          ASSERT_EQ(z[at], h[at]);
        }
      }
  }
  // The lower-triangle finite check ignores the strict upper triangle and finds the first bad entry.
  const std::int64_t n = 50;
  std::vector<float> f(static_cast<std::size_t>(n * n), 1.0f);
  f[static_cast<std::size_t>(3 + 40 * n)] = std::numeric_limits<float>::quiet_NaN();  // upper: ignored
  f[static_cast<std::size_t>(45 + 20 * n)] = std::numeric_limits<float>::infinity();
  f[static_cast<std::size_t>(30 + 20 * n)] = std::numeric_limits<float>::quiet_NaN();
  DeviceBuffer<float> df(f.size());
  DeviceBuffer<unsigned long long> first(1);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(df.data(), f.data(), df.bytes(), cudaMemcpyHostToDevice, stream_));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(first.data(), 0xff, sizeof(unsigned long long), stream_));
  kernels::launch_find_nonfinite_lower(df.data(), n, n, first.data(), stream_);
  unsigned long long got = 0;
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&got, first.data(), sizeof(got), cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  EXPECT_EQ(got, static_cast<unsigned long long>(30 + 20 * n));
}

template <class T>
void check_device_matrix_and_residual(std::int64_t n, cudaStream_t s) {
  SCOPED_TRACE("n=" + std::to_string(n));
  HostMatrix<T> a(n, n);
  make_spd_test_matrix(a.view(), 1234 + static_cast<std::uint64_t>(n), s);
  for (std::int64_t j = 0; j < n; ++j) {
    ASSERT_GT(a(j, j), T(0.001) * T(0.99));
    for (std::int64_t i = 0; i < j; ++i) ASSERT_EQ(a(i, j), a(j, i));
    for (std::int64_t i = 0; i < n; ++i) ASSERT_LE(std::abs(static_cast<double>(a(i, j))), 2.0);  // O(1) entries
  }
  HostMatrix<T> l(n, n);
  host::lacpy(n, n, a.data(), n, l.data(), n);
  ASSERT_EQ(host::potrf(Uplo::lower, n, l.data(), n), 0);
  const double host_r = cholesky_residual<T>(a.view(), l.view());
  const double dev_r = cholesky_residual_device<T>(a.view(), l.view(), s);
  EXPECT_LT(dev_r, kTolerance);
  EXPECT_LT(std::abs(dev_r - host_r), 2.0 + 0.5 * host_r);
  // A wrong factor is caught.
  l(n - 1, 0) += T(0.01);
  EXPECT_GT(cholesky_residual_device<T>(a.view(), l.view(), s), 100.0);
}

TEST_F(DenseCholeskyGpu, DeviceTestMatrixAndResidual) {
  for (std::int64_t n : {2, 129, 700}) {
    check_device_matrix_and_residual<float>(n, stream_);
    check_device_matrix_and_residual<double>(n, stream_);
  }
}

}  // namespace
}  // namespace gpufact::dense
