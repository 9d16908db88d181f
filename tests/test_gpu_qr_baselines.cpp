// Device tests (label gpu) for the tall-skinny QR baselines: every GPU method of the table on odd
// shapes against the anderson10 rule (‖A−QR‖₁/‖A‖₁ and ‖I−QᵀQ‖₁ <= 10 √n ε, in double on the
// host), outputs poisoned with NaN first; the BLAS2 kernels on rank-deficient input (zero
// columns: tau = 0 and still a valid QR), square and very tall shapes (several rows per thread);
// CholeskyQR2's breakdown reported as a failure, not an error. Without a GPU every test skips.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/linalg/blas_types.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/tsqr_baselines/qr_methods.hpp"
#include "factorizations/tsqr_baselines/qr_test_matrices.hpp"
#include "kernels/qr/caqr_kernels.cuh"
#include "kernels/qr/householder_blas2.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <cmath>
#include <string>
#include <vector>

namespace gpufact::factorizations {
namespace {

class GpuQrBaselines : public GpuTest {
 protected:
  template <class T>
  void upload(DeviceBuffer<T>& d, const HostMatrix<T>& h) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), h.data(), d.bytes(), cudaMemcpyHostToDevice, stream_));
  }
  template <class T>
  void download(HostMatrix<T>& h, const DeviceBuffer<T>& d) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(h.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, stream_));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // Runs `method` on a (m × n) and checks both errors against 10 √n ε; returns the failure text.
  template <class T>
  std::string run_and_check(const std::string& method, const HostMatrix<T>& a, bool expect_valid = true) {
    const std::int64_t m = a.rows(), n = a.cols();
    DeviceBuffer<T> da(static_cast<std::size_t>(m * n)), dq(static_cast<std::size_t>(m * n)),
        dr(static_cast<std::size_t>(n * n));
    upload(da, a);
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(dq.data(), 0xFF, dq.bytes(), stream_));  // NaN poison
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(dr.data(), 0xFF, dr.bytes(), stream_));
    auto plan = qr_method<T>(method).prepare(m, n);
    plan->run(da.data(), m, dq.data(), m, dr.data(), n, stream_);
    const std::string failure = plan->failure(stream_);
    if (!failure.empty()) return failure;
    // A second run with the same pointers replays (the BLAS2 method's captured graph).
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(dq.data(), 0xFF, dq.bytes(), stream_));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(dr.data(), 0xFF, dr.bytes(), stream_));
    plan->run(da.data(), m, dq.data(), m, dr.data(), n, stream_);
    EXPECT_EQ(plan->failure(stream_), "");
    HostMatrix<T> q(m, n), r(n, n), a_after(m, n);
    download(q, dq);
    download(r, dr);
    download(a_after, da);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) EXPECT_EQ(a_after(i, j), a(i, j)) << method << ": A was modified";
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = j + 1; i < n; ++i) EXPECT_EQ(r(i, j), T(0)) << method << ": R(" << i << "," << j << ")";
    const QrErrors e = qr_explicit_residual<T>(a.view(), q.view(), r.view());
    const double unit = std::sqrt(static_cast<double>(n)) * unit_roundoff<T>();
    if (expect_valid) {
      EXPECT_LE(e.factorization / unit, 10.0) << method << " " << m << "×" << n << " ‖A−QR‖₁/‖A‖₁ = " << e.factorization;
      EXPECT_LE(e.orthogonality / unit, 10.0) << method << " " << m << "×" << n << " ‖I−QᵀQ‖₁ = " << e.orthogonality;
    }
    // Other outputs: a captured graph must be captured again, not replayed onto the old pointers.
    DeviceBuffer<T> dq2(dq.size()), dr2(dr.size());
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(dq2.data(), 0xFF, dq2.bytes(), stream_));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(dr2.data(), 0xFF, dr2.bytes(), stream_));
    plan->run(da.data(), m, dq2.data(), m, dr2.data(), n, stream_);
    EXPECT_EQ(plan->failure(stream_), "");
    HostMatrix<T> q2(m, n), r2(n, n);
    download(q2, dq2);
    download(r2, dr2);
    if (expect_valid) {
      const QrErrors e2 = qr_explicit_residual<T>(a.view(), q2.view(), r2.view());
      EXPECT_LE(e2.factorization / unit, 10.0) << method << " new outputs: ‖A−QR‖₁/‖A‖₁ = " << e2.factorization;
      EXPECT_LE(e2.orthogonality / unit, 10.0) << method << " new outputs: ‖I−QᵀQ‖₁ = " << e2.orthogonality;
    }
    return {};
  }

  template <class T>
  void every_gpu_method_on_odd_shapes() {
    for (const auto& method : qr_methods<T>()) {
      if (!method.needs.gpu) continue;
      for (std::int64_t n : {1, 7, 32, 33}) {
        if (method.max_width > 0 && n > method.max_width) continue;  // the bench skips it with the reason
        HostMatrix<T> a(1000, n);
        fill_qr_uniform(a.view(), 1234 + static_cast<std::uint64_t>(n));
        EXPECT_EQ(run_and_check<T>(method.name, a), "") << method.name << " n = " << n;
      }
    }
  }

  // The BLAS2 kernels directly: tau, R's diagonal and Q for a matrix with zero columns.
  template <class T>
  void blas2_zero_columns(std::int64_t m, std::int64_t n, std::vector<std::int64_t> zero_columns) {
    HostMatrix<T> a(m, n);
    fill_qr_uniform(a.view(), 77);
    for (auto j : zero_columns)
      for (std::int64_t i = 0; i < m; ++i) a(i, j) = T(0);
    const auto c = kernels::householder_blas2_workspace_counts(m, n);
    DeviceBuffer<T> work(static_cast<std::size_t>(m * n)), q(static_cast<std::size_t>(m * n)),
        r(static_cast<std::size_t>(n * n)), tau(static_cast<std::size_t>(n)), partials(c.partials),
        sumsq(c.sumsq_partials), w(c.w), v(c.v), scale(c.scale);
    const kernels::HouseholderBlas2Workspace<T> ws{partials.data(), sumsq.data(), w.data(), v.data(), scale.data()};
    upload(work, a);
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(q.data(), 0xFF, q.bytes(), stream_));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(r.data(), 0xFF, r.bytes(), stream_));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(tau.data(), 0xFF, tau.bytes(), stream_));
    kernels::launch_householder_blas2_geqr2(work.data(), m, m, n, tau.data(), ws, stream_);
    kernels::launch_copy_upper_triangle(work.data(), m, n, r.data(), n, stream_);
    kernels::launch_householder_blas2_org2r(work.data(), m, tau.data(), m, n, q.data(), m, ws, stream_);
    std::vector<T> h_tau(static_cast<std::size_t>(n));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(h_tau.data(), tau.data(), tau.bytes(), cudaMemcpyDeviceToHost, stream_));
    HostMatrix<T> hq(m, n), hr(n, n);
    download(hq, q);
    download(hr, r);
    for (auto j : zero_columns) {
      EXPECT_EQ(h_tau[static_cast<std::size_t>(j)], T(0)) << "zero column " << j;
      EXPECT_EQ(hr(j, j), T(0)) << "zero column " << j;
    }
    for (std::int64_t j = 0; j < n; ++j) {
      EXPECT_TRUE(std::isfinite(h_tau[static_cast<std::size_t>(j)])) << "tau " << j;
      // LAPACK's tau lies in [1, 2] for a non-trivial reflector (0 for H = I).
      EXPECT_TRUE(h_tau[static_cast<std::size_t>(j)] == T(0) ||
                  (h_tau[static_cast<std::size_t>(j)] >= T(1) && h_tau[static_cast<std::size_t>(j)] <= T(2)))
          << "tau " << j << " = " << h_tau[static_cast<std::size_t>(j)];
    }
    const QrErrors e = qr_explicit_residual<T>(a.view(), hq.view(), hr.view());
    const double unit = std::sqrt(static_cast<double>(n)) * unit_roundoff<T>();
    EXPECT_LE(e.factorization / unit, 10.0) << m << "×" << n << " ‖A−QR‖₁/‖A‖₁ = " << e.factorization;
    EXPECT_LE(e.orthogonality / unit, 10.0) << m << "×" << n << " ‖I−QᵀQ‖₁ = " << e.orthogonality;
  }
};

TEST_F(GpuQrBaselines, EveryGpuMethodFp32OddShapes) { every_gpu_method_on_odd_shapes<float>(); }
TEST_F(GpuQrBaselines, EveryGpuMethodFp64OddShapes) { every_gpu_method_on_odd_shapes<double>(); }

TEST_F(GpuQrBaselines, Blas2RankDeficientZeroColumnsGiveZeroTau) {
  blas2_zero_columns<float>(1000, 7, {0, 3});
  blas2_zero_columns<double>(1000, 7, {0, 3, 6});
  blas2_zero_columns<double>(1000, 1, {0});
}

TEST_F(GpuQrBaselines, Blas2SquareAndVeryTallShapes) {
  blas2_zero_columns<double>(33, 33, {});           // the last column has no rows below the diagonal
  blas2_zero_columns<float>(2, 2, {});
  blas2_zero_columns<double>(300001, 3, {});        // several rows per thread, ragged last block
  blas2_zero_columns<float>(5000, 70, {});          // several matvec and update column groups
}

TEST_F(GpuQrBaselines, TallShapesForEveryGpuMethod) {
  HostMatrix<float> a(300001, 5);
  fill_qr_uniform(a.view(), 9);
  for (const char* method : {"cusolver", "blas2_gpu", "caqr"}) EXPECT_EQ(run_and_check<float>(method, a), "") << method;
  // CholeskyQR2's orthogonality error grows with m·ε (the Gram matrix's rounding), so in FP32 it
  // fails the √n·ε rule at 300001 rows even for a well-conditioned A (measured: tens of √n·ε);
  // in FP64 it passes.
  HostMatrix<double> ad(300001, 5);
  fill_qr_uniform(ad.view(), 9);
  EXPECT_EQ(run_and_check<double>("cholqr2", ad), "");
}

TEST_F(GpuQrBaselines, CholQr2BreakdownIsReportedNotThrown) {
  HostMatrix<double> a(1000, 7);
  fill_qr_uniform(a.view(), 3);
  for (std::int64_t i = 0; i < 1000; ++i) a(i, 4) = 0.0;  // AᵀA singular: potrf must stop
  const std::string failure = run_and_check<double>("cholqr2", a, false);
  EXPECT_NE(failure.find("Cholesky of AᵀA failed (κ too large)"), std::string::npos) << failure;
  // cuSOLVER and the BLAS2 QR factor the same matrix fine.
  EXPECT_EQ(run_and_check<double>("cusolver", a), "");
  EXPECT_EQ(run_and_check<double>("blas2_gpu", a), "");
}

TEST_F(GpuQrBaselines, CholQr2LosesOrthogonalityAtLargeKappa) {
  HostMatrix<float> a(2000, 20);
  fill_qr_conditioned(a.view(), 1e6, 5);  // κ²ε₃₂ ≫ 1: either breakdown or orthogonality far off
  const std::int64_t m = 2000, n = 20;
  DeviceBuffer<float> da(m * n), dq(m * n), dr(n * n);
  upload(da, a);
  auto plan = qr_method<float>("cholqr2").prepare(m, n);
  plan->run(da.data(), m, dq.data(), m, dr.data(), n, stream_);
  const std::string failure = plan->failure(stream_);
  if (failure.empty()) {
    HostMatrix<float> q(m, n), r(n, n);
    download(q, dq);
    download(r, dr);
    const QrErrors e = qr_explicit_residual<float>(a.view(), q.view(), r.view());
    EXPECT_GT(e.orthogonality / (std::sqrt(20.0) * unit_roundoff<float>()), 10.0);
  } else {
    EXPECT_NE(failure.find("Cholesky of AᵀA failed"), std::string::npos);
  }
}

}  // namespace
}  // namespace gpufact::factorizations
