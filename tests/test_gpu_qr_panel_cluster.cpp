// Device tests (label gpu) of the cluster Householder panel (kernels/qr/panel_cluster.cuh) and the
// GPU-resident QR with panel = cooperative. The panel against LAPACK's geqrf on the same input: R,
// tau and the reflectors agree to rounding, and Q (orgqr of our reflectors) gives A = QR with
// QᵀQ = I; shapes from 1 × 1 to 30000 × 16, every register class and cluster size; lda > m with
// NaN padding that must stay untouched; exactly zero columns (tau = 0, as LAPACK); bad arguments
// and panels too tall for a cluster. Then whole QRs through the recursive cooperative panel,
// including one whose first panels are too tall and fall back to cuSOLVER.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/dense/qr_device.hpp"
#include "kernels/qr/panel_cluster.cuh"

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
using QrPanelClusterGpu = GpuTest;

// One m × b panel (ld m + 5, NaN padding) through launch_qr_panel_cluster against LAPACK.
template <class T>
void check_panel(std::int64_t m, std::int64_t b, cudaStream_t s, std::uint64_t seed, std::int64_t zero_col = -1) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s" : "d") + " panel m=" + std::to_string(m) + " b=" + std::to_string(b) +
               (zero_col >= 0 ? " zero column " + std::to_string(zero_col) : ""));
  const std::int64_t lda = m + 5;
  const HostMatrix<T> a = panel_test_matrix<T>(m, b, seed, zero_col, lda);
  const auto shape = kernels::qr_panel_cluster_shape(m, b, sizeof(T));
  ASSERT_GT(shape.ctas, 0);
  EXPECT_GE(static_cast<std::int64_t>(shape.ctas) * shape.rows, m);

  DeviceBuffer<T> d(static_cast<std::size_t>(lda * b)), dtau(static_cast<std::size_t>(b));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), a.data(), d.bytes(), cudaMemcpyHostToDevice, s));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(dtau.data(), 0xff, dtau.bytes(), s));  // poison: NaN
  kernels::launch_qr_panel_cluster(d.data(), lda, m, b, dtau.data(), s);
  const auto f = download(d.data(), d.size(), s);
  const auto tau = download(dtau.data(), dtau.size(), s);

  HostMatrix<T> lapack = a;
  std::vector<T> lapack_tau(static_cast<std::size_t>(b));
  ASSERT_EQ(host::geqrf<T>(m, b, lapack.data(), lda, lapack_tau.data()), 0);

  // Same reflectors as LAPACK's to rounding: R scaled by ‖A‖ (|r| <= √m), V and tau (|v|, τ <= 2).
  const double eps = std::numeric_limits<T>::epsilon();
  double r_err = 0, v_err = 0, tau_err = 0;
  for (std::int64_t j = 0; j < b; ++j) {
    tau_err = std::max(tau_err, std::fabs(static_cast<double>(tau[j]) - lapack_tau[j]));
    if (zero_col == j) {
      EXPECT_EQ(tau[j], T(0)) << "a zero column reflects nothing";
    }
    for (std::int64_t i = 0; i < m; ++i) {
      const double ours = f[static_cast<std::size_t>(i + j * lda)], theirs = lapack(i, j);
      ASSERT_TRUE(std::isfinite(ours)) << "i=" << i << " j=" << j;
      (i <= j ? r_err : v_err) = std::max(i <= j ? r_err : v_err, std::fabs(ours - theirs));
    }
    for (std::int64_t i = m; i < lda; ++i)
      ASSERT_TRUE(std::isnan(f[static_cast<std::size_t>(i + j * lda)])) << "padding written";
  }
  const double scale = static_cast<double>(m) * eps;
  EXPECT_LT(r_err / (scale * std::sqrt(static_cast<double>(m))), kTolerance);
  EXPECT_LT(v_err / scale, kTolerance);
  EXPECT_LT(tau_err / scale, kTolerance);

  // A = QR with Q from our reflectors (orgqr), residuals as MAGMA's testers scale them.
  const std::vector<T> tau_host(tau.begin(), tau.end());
  const QrErrors e = qr_residual<T>(a.view(), MatrixView<const T>{f.data(), m, b, lda, Layout::col_major},
                                    tau_host.data());
  EXPECT_LT(e.factorization, kTolerance);
  EXPECT_LT(e.orthogonality, kTolerance);
}

TEST_F(QrPanelClusterGpu, MatchesLapackOnEveryClass) {
  check_panel<float>(1, 1, stream_, 1);
  check_panel<float>(37, 5, stream_, 2);       // one CTA, 16-wide class
  check_panel<float>(100, 37, stream_, 3);     // two CTAs, 64-wide class with 27 unused columns
  check_panel<float>(1000, 64, stream_, 4);    // 16 CTAs of 63 rows
  check_panel<float>(4096, 64, stream_, 5);    // 64 × 1 row per thread
  check_panel<float>(8192, 64, stream_, 6);    // 64 × 2
  check_panel<float>(8191, 32, stream_, 7);    // 32 × 4, ragged last CTA
  check_panel<float>(16384, 32, stream_, 8);   // 32 × 4, full
  check_panel<float>(30000, 16, stream_, 9);   // 16 × 8
  check_panel<float>(3000, 20, stream_, 10);   // 32 × 1
  check_panel<double>(1, 1, stream_, 11);
  check_panel<double>(300, 64, stream_, 12);   // 64 × 1
  check_panel<double>(4096, 64, stream_, 13);  // 64 × 1, full
  check_panel<double>(8000, 32, stream_, 14);  // 32 × 2
  check_panel<double>(2000, 17, stream_, 15);  // 32 × 1
  check_panel<double>(16384, 16, stream_, 16); // 16 × 4, full
}

TEST_F(QrPanelClusterGpu, ZeroColumnsGiveZeroTau) {
  check_panel<float>(500, 32, stream_, 21, 0);
  check_panel<double>(4096, 64, stream_, 22, 63);
  check_panel<double>(777, 40, stream_, 23, 17);
}

TEST_F(QrPanelClusterGpu, FitWidthAndBadArguments) {
  EXPECT_EQ(kernels::qr_panel_cluster_fit_width(8192, 128, 4), 64);
  EXPECT_EQ(kernels::qr_panel_cluster_fit_width(16384, 128, 4), 32);
  EXPECT_EQ(kernels::qr_panel_cluster_fit_width(32768, 128, 4), 16);
  EXPECT_EQ(kernels::qr_panel_cluster_fit_width(40000, 128, 4), 0);
  EXPECT_EQ(kernels::qr_panel_cluster_fit_width(4096, 128, 8), 64);
  EXPECT_EQ(kernels::qr_panel_cluster_fit_width(8192, 128, 8), 32);
  EXPECT_EQ(kernels::qr_panel_cluster_fit_width(16384, 128, 8), 16);
  EXPECT_EQ(kernels::qr_panel_cluster_fit_width(20000, 128, 8), 0);
  EXPECT_EQ(kernels::qr_panel_cluster_fit_width(500, 7, 8), 7);
  DeviceBuffer<double> d(64 * 64), tau(64);
  EXPECT_THROW(kernels::launch_qr_panel_cluster(d.data(), 64, 64, 0, tau.data(), stream_), std::invalid_argument);
  EXPECT_THROW(kernels::launch_qr_panel_cluster(d.data(), 64, 64, 65, tau.data(), stream_), std::invalid_argument);
  EXPECT_THROW(kernels::launch_qr_panel_cluster(d.data(), 64, 8, 9, tau.data(), stream_), std::invalid_argument);
  EXPECT_THROW(kernels::launch_qr_panel_cluster(d.data(), 63, 64, 8, tau.data(), stream_), std::invalid_argument);
  try {
    kernels::launch_qr_panel_cluster(d.data(), 20000, 20000, 16, tau.data(), stream_);
    ADD_FAILURE() << "a 20000-row FP64 panel does not fit a cluster's registers";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("qr_panel_cluster_fit_width"), std::string::npos) << e.what();
  }
}

// The GPU-resident QR with panel = cooperative against the host blocked QR of the same plan.
template <class T>
void check_qr(std::int64_t m, std::int64_t n, const QrOptions& o, cudaStream_t s, bool zero_columns = false) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s " : "d ") + std::to_string(m) + "×" + std::to_string(n) + " " +
               describe(o) + (zero_columns ? " zero columns" : ""));
  HostMatrix<T> a(m, n);
  fill_uniform(a.view(), 31 * static_cast<std::uint64_t>(m) + static_cast<std::uint64_t>(n));
  if (zero_columns)
    for (std::int64_t j = 1; j < n; j += 5)
      for (std::int64_t i = 0; i < m; ++i) a(i, j) = T(0);
  const std::size_t mn = static_cast<std::size_t>(m * n);
  QrWorkspace<T> ws(m, n, o, QrVariant::gpu_resident);
  DeviceBuffer<T> d(mn), dtau(static_cast<std::size_t>(n));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(dtau.data(), 0xff, dtau.bytes(), s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), a.data(), mn * sizeof(T), cudaMemcpyHostToDevice, s));
  qr_gpu_resident<T>(m, n, d.data(), m, dtau.data(), ws, s);
  const auto f = download(d.data(), mn, s);
  const auto tau = download(dtau.data(), static_cast<std::size_t>(n), s);
  qr_form_q_device<T>(d.data(), m, ws, s);
  const auto q = download(d.data(), mn, s);

  HostMatrix<T> r(n, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i) r(i, j) = f[static_cast<std::size_t>(i + j * m)];
  const QrErrors e =
      qr_explicit_residual<T>(a.view(), MatrixView<const T>{q.data(), m, n, m, Layout::col_major}, r.view());
  const double ne = static_cast<double>(m) * std::numeric_limits<T>::epsilon();
  EXPECT_LT(e.factorization / ne, kTolerance);
  EXPECT_LT(e.orthogonality / ne, kTolerance);
  HostMatrix<T> ref = a;
  std::vector<T> tau_ref(static_cast<std::size_t>(n));
  ASSERT_EQ(host::geqrf<T>(m, n, ref.data(), m, tau_ref.data()), 0);
  double tau_err = 0;
  for (std::int64_t j = 0; j < n; ++j) {
    tau_err = std::max(tau_err, std::fabs(static_cast<double>(tau[j]) - tau_ref[j]));
    if (zero_columns && j % 5 == 1) {
      EXPECT_EQ(tau[j], T(0)) << "column " << j;
    }
  }
  EXPECT_LT(tau_err / ne, kTolerance);
}

QrOptions cooperative(std::int64_t nb) {
  QrOptions o;
  o.nb = nb;
  o.panel = QrPanel::cooperative;
  return o;
}

TEST_F(QrPanelClusterGpu, WholeQr) {
  check_qr<float>(1, 1, cooperative(32), stream_);
  check_qr<float>(37, 37, cooperative(32), stream_);
  check_qr<double>(300, 200, cooperative(64), stream_);
  check_qr<float>(1000, 1000, cooperative(128), stream_);     // one split per panel
  check_qr<double>(1500, 1100, cooperative(256), stream_);    // two levels of halves, ragged last panel
  check_qr<float>(20000, 96, cooperative(96), stream_);       // 16-wide leaves (FP32 32-wide needs <= 16384)
  check_qr<double>(17000, 80, cooperative(128), stream_);     // too tall: cuSOLVER for the panel
  check_qr<double>(600, 300, cooperative(64), stream_, true);
  QrOptions o = cooperative(64);
  o.widths = {96, 33, 128, 1, 64, 190};
  check_qr<float>(600, 512, o, stream_);
  o = cooperative(128);
  o.lookahead = false;
  check_qr<double>(700, 513, o, stream_);
}

}  // namespace
}  // namespace gpufact::dense
