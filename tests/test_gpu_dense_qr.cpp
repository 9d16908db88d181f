// Device tests (label gpu) of the dense QR: the zero-fill and larft kernels against the host, the
// hybrid and GPU-resident QR in s and d at 1 × 1, 37 × 37, 300 × 200 and 1000 × 1000 with nb
// 32/64/128 against the host blocked QR (same plan: R and tau to rounding) and cuSOLVER, explicit
// Q checked for A = QR and QᵀQ = I, look-ahead off, the SIMT GEMM, a mixed plan, zero columns and
// NaN input. Without a usable GPU every test reports skipped.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/cuda/handles.hpp"
#include "core/linalg/device_blas.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/dense/qr_device.hpp"
#include "factorizations/dense/qr_host.hpp"
#include "kernels/qr/block_reflector.cuh"

#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace gpufact::dense {
namespace {

using DenseQrGpu = GpuTest;

template <class T>
DeviceBuffer<T> upload(const std::vector<T>& h, cudaStream_t s) {
  DeviceBuffer<T> d(std::max<std::size_t>(h.size(), 1));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice, s));
  return d;
}
// zero_column >= 0: that column of A is zero, so its τ is 0 (T's column and row through it vanish).
template <class T>
void check_kernels(std::int64_t rows, std::int64_t w, cudaStream_t s, std::int64_t zero_column = -1) {
  HostMatrix<T> a(rows, w);
  fill_uniform(a.view(), 100 + static_cast<std::uint64_t>(rows));
  if (zero_column >= 0)
    for (std::int64_t i = 0; i < rows; ++i) a(i, zero_column) = T(0);
  std::vector<T> tau(static_cast<std::size_t>(w));
  ASSERT_EQ(host::geqrf<T>(rows, w, a.data(), rows, tau.data()), 0);
  std::vector<T> panel(a.data(), a.data() + rows * w), v_ref(static_cast<std::size_t>(rows * w)),
      t_ref(static_cast<std::size_t>(w * w), T(0));
  zero_filled_reflectors<T>(rows, w, panel.data(), rows, v_ref.data());
  host::larft<T>(rows, w, panel.data(), rows, tau.data(), t_ref.data(), w);
  auto dpanel = upload(panel, s);
  auto dtau = upload(tau, s);
  DeviceBuffer<T> dv(static_cast<std::size_t>(rows * w)), dg(static_cast<std::size_t>(w * w)),
      dt(static_cast<std::size_t>(w * w));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(dv.data(), 0xff, dv.bytes(), s));  // poison: NaN
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(dt.data(), 0xff, dt.bytes(), s));
  kernels::launch_zero_filled_reflectors(dpanel.data(), rows, rows, w, dv.data(), rows, s);
  CublasHandle blas(s);
  dev::gemm<T>(blas, Op::T, Op::N, w, w, rows, T(1), dv.data(), rows, dv.data(), rows, T(0), dg.data(), w);
  kernels::launch_larft_from_gram(dg.data(), w, dtau.data(), w, dt.data(), w, s);
  const auto v = download(dv.data(), v_ref.size(), s);
  const auto t = download(dt.data(), t_ref.size(), s);
  EXPECT_EQ(v, v_ref);
  double err = 0, norm = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    err = std::max(err, std::abs(static_cast<double>(t[i]) - static_cast<double>(t_ref[i])));
    norm = std::max(norm, std::abs(static_cast<double>(t_ref[i])));
  }
  EXPECT_LT(err, 100 * static_cast<double>(rows) * unit_roundoff<T>() * std::max(norm, 1.0)) << rows << "×" << w;
  for (std::int64_t j = 0; j < w; ++j)
    for (std::int64_t i = j + 1; i < w; ++i) EXPECT_EQ(t[i + j * w], T(0));
}

TEST_F(DenseQrGpu, ReflectorKernelsMatchHost) {
  check_kernels<float>(1, 1, stream_);
  check_kernels<double>(37, 5, stream_);
  check_kernels<float>(300, 64, stream_);
  check_kernels<float>(2000, 128, stream_);  // T and G in shared memory, tiled merges
  check_kernels<float>(700, 96, stream_);    // a level with an odd block out
  check_kernels<float>(500, 100, stream_);   // w padded to 112: a partial 16-block and a short last B
  check_kernels<float>(400, 100, stream_, 17);  // τ = 0 inside a diagonal block
  check_kernels<float>(1500, 208, stream_);     // the widest tiled FP32 T
  check_kernels<float>(3000, 256, stream_);  // T built in place (it does not fit shared memory)
  check_kernels<double>(2000, 256, stream_);
  check_kernels<double>(1000, 128, stream_);
  check_kernels<double>(900, 144, stream_, 64);  // the widest tiled FP64 T, τ = 0 at a merge's edge
  check_kernels<double>(300, 160, stream_);       // FP64 T built in place
  check_kernels<double>(600, 512, stream_);
}

// The columns right of the panel follow V unchanged (reflector_block's [V C]).
TEST_F(DenseQrGpu, ZeroFilledCopiesTheNextColumns) {
  const std::int64_t rows = 300, w = 40, copy = 24, ld = rows + 5;
  HostMatrix<double> a(ld, w + copy);
  fill_uniform(a.view(), 9);
  std::vector<double> panel(a.data(), a.data() + ld * (w + copy));
  auto dpanel = upload(panel, stream_);
  DeviceBuffer<double> dv(static_cast<std::size_t>(rows * (w + copy)));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(dv.data(), 0xff, dv.bytes(), stream_));
  kernels::launch_zero_filled_reflectors(dpanel.data(), ld, rows, w, dv.data(), rows, stream_, copy);
  const auto v = download(dv.data(), static_cast<std::size_t>(rows * (w + copy)), stream_);
  for (std::int64_t j = 0; j < w + copy; ++j)
    for (std::int64_t i = 0; i < rows; ++i) {
      const double want = j >= w || i > j ? panel[i + j * ld] : (i == j ? 1.0 : 0.0);
      ASSERT_EQ(v[i + j * rows], want) << i << ", " << j;
    }
  EXPECT_THROW(kernels::launch_zero_filled_reflectors(dpanel.data(), ld, rows, w, dv.data(), rows, stream_, -1),
               std::invalid_argument);
}

struct Checked {
  double r_vs_host = 0, tau_vs_host = 0, factorization = 0, orthogonality = 0;
};

// Runs `variant` on a fresh m × n matrix (optionally with zero columns) and checks everything.
template <class T>
Checked run_variant(QrVariant variant, std::int64_t m, std::int64_t n, const QrOptions& o, cudaStream_t s,
                    bool device_data, bool zero_columns = false) {
  HostMatrix<T> a(m, n);
  fill_uniform(a.view(), 7 * static_cast<std::uint64_t>(m) + static_cast<std::uint64_t>(n));
  if (zero_columns)
    for (std::int64_t j = 0; j < n; j += 3)
      for (std::int64_t i = 0; i < m; ++i) a(i, j) = T(0);
  const std::size_t mn = static_cast<std::size_t>(m * n);
  QrWorkspace<T> ws(m, n, o, variant);
  PinnedBuffer<T> work(mn), tau(static_cast<std::size_t>(n)), q(mn);
  std::memcpy(work.data(), a.data(), mn * sizeof(T));
  std::fill(tau.data(), tau.data() + n, std::numeric_limits<T>::quiet_NaN());
  std::fill(q.data(), q.data() + mn, std::numeric_limits<T>::quiet_NaN());
  if (variant == QrVariant::hybrid) {
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.matrix.data(), 0xff, ws.matrix.bytes(), s));
    qr_hybrid<T>(m, n, work.data(), m, tau.data(), ws, s);
    qr_hybrid_form_q<T>(q.data(), m, ws, s);
  } else if (device_data) {
    DeviceBuffer<T> d(mn), dtau(static_cast<std::size_t>(n));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(dtau.data(), 0xff, dtau.bytes(), s));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), a.data(), mn * sizeof(T), cudaMemcpyHostToDevice, s));
    qr_gpu_resident<T>(m, n, d.data(), m, dtau.data(), ws, s);
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(work.data(), d.data(), mn * sizeof(T), cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(tau.data(), dtau.data(), n * sizeof(T), cudaMemcpyDeviceToHost, s));
    qr_form_q_device<T>(d.data(), m, ws, s);
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(q.data(), d.data(), mn * sizeof(T), cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  } else {
    qr_gpu_resident_host<T>(m, n, work.data(), m, tau.data(), ws, s);
    DeviceBuffer<T> d(mn);
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), work.data(), mn * sizeof(T), cudaMemcpyHostToDevice, s));
    qr_form_q_device<T>(d.data(), m, ws, s);
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(q.data(), d.data(), mn * sizeof(T), cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  // The host blocked QR with the same plan: R and tau agree to rounding (LAPACK's conventions).
  HostMatrix<T> ref = a;
  std::vector<T> tau_ref(static_cast<std::size_t>(n));
  qr_host_blocked<T>(m, n, ref.data(), m, tau_ref.data(), ws.options.widths);
  double a_max = 1e-300;
  for (std::size_t i = 0; i < mn; ++i) a_max = std::max(a_max, std::abs(static_cast<double>(a.data()[i])));
  Checked c;
  HostMatrix<T> r(n, n);
  for (std::int64_t j = 0; j < n; ++j) {
    for (std::int64_t i = 0; i <= j; ++i) {
      r(i, j) = work.data()[i + j * m];
      c.r_vs_host = std::max(c.r_vs_host, std::abs(static_cast<double>(r(i, j)) - static_cast<double>(ref(i, j))));
    }
    c.tau_vs_host = std::max(c.tau_vs_host, std::abs(static_cast<double>(tau.data()[j]) - static_cast<double>(tau_ref[j])));
  }
  const double ne = static_cast<double>(m) * unit_roundoff<T>();
  c.r_vs_host /= ne * a_max * std::sqrt(static_cast<double>(m));
  c.tau_vs_host /= ne;
  const QrErrors e = qr_explicit_residual<T>(a.view(), MatrixView<const T>{q.data(), m, n, m, Layout::col_major}, r.view());
  c.factorization = e.factorization / ne;
  c.orthogonality = e.orthogonality / ne;
  return c;
}

template <class T>
void expect_good(QrVariant v, std::int64_t m, std::int64_t n, const QrOptions& o, cudaStream_t s, bool device_data,
                 bool zero_columns = false) {
  const Checked c = run_variant<T>(v, m, n, o, s, device_data, zero_columns);
  const std::string what = std::string(v == QrVariant::hybrid ? "hybrid " : "gpu_resident ") +
                           (sizeof(T) == 4 ? "s " : "d ") + std::to_string(m) + "×" + std::to_string(n) + " " +
                           describe(o) + (device_data ? " device" : " host");
  EXPECT_LT(c.factorization, 30.0) << what;
  EXPECT_LT(c.orthogonality, 30.0) << what;
  EXPECT_LT(c.r_vs_host, 30.0) << what;
  EXPECT_LT(c.tau_vs_host, 30.0) << what;
}

QrOptions with_nb(std::int64_t nb) {
  QrOptions o;
  o.nb = nb;
  return o;
}

struct Shape {
  std::int64_t m, n, nb;
};
const Shape kShapes[] = {{1, 1, 32}, {37, 37, 32}, {300, 200, 64}, {1000, 1000, 128}, {1000, 1000, 32}};

TEST_F(DenseQrGpu, HybridSingleAndDouble) {
  for (const Shape& sh : kShapes) {
    expect_good<float>(QrVariant::hybrid, sh.m, sh.n, with_nb(sh.nb), stream_, false);
    expect_good<double>(QrVariant::hybrid, sh.m, sh.n, with_nb(sh.nb), stream_, false);
  }
}

TEST_F(DenseQrGpu, GpuResidentSingleAndDouble) {
  for (const Shape& sh : kShapes)
    for (const bool device : {true, false}) {
      expect_good<float>(QrVariant::gpu_resident, sh.m, sh.n, with_nb(sh.nb), stream_, device);
      expect_good<double>(QrVariant::gpu_resident, sh.m, sh.n, with_nb(sh.nb), stream_, device);
    }
}

TEST_F(DenseQrGpu, OptionsPlansAndZeroColumns) {
  QrOptions o = with_nb(64);
  o.lookahead = false;
  expect_good<float>(QrVariant::hybrid, 500, 333, o, stream_, false);
  expect_good<double>(QrVariant::gpu_resident, 500, 333, o, stream_, true);
  o = with_nb(64);
  o.gemm = UpdateGemm::simt;
  expect_good<float>(QrVariant::hybrid, 700, 513, o, stream_, false);
  expect_good<float>(QrVariant::gpu_resident, 700, 513, o, stream_, true);
  o = QrOptions{};
  o.widths = {96, 33, 128, 1, 64, 190};
  expect_good<double>(QrVariant::hybrid, 600, 512, o, stream_, false);
  expect_good<float>(QrVariant::gpu_resident, 600, 512, o, stream_, true);
  expect_good<double>(QrVariant::hybrid, 300, 200, with_nb(32), stream_, false, true);
  expect_good<double>(QrVariant::gpu_resident, 300, 200, with_nb(32), stream_, true, true);
}

// Stream-ordered (no NaN check, no synchronization: what householder_cluster captures into a
// graph) with cooperative panels of one leaf and of two halves: more than three panels, so Q's
// formation rebuilds the older panels' V and reuses the last three slots.
TEST_F(DenseQrGpu, StreamOrderedCooperative) {
  QrOptions o;
  o.panel = QrPanel::cooperative;
  o.stream_ordered = true;
  for (const std::int64_t nb : {64, 128}) {
    o.nb = nb;
    expect_good<float>(QrVariant::gpu_resident, 1500, 520, o, stream_, true);
    expect_good<double>(QrVariant::gpu_resident, 900, 460, o, stream_, true);
  }
}

TEST_F(DenseQrGpu, RMatchesCusolver) {
  const std::int64_t n = 512;
  HostMatrix<float> a(n, n);
  fill_uniform(a.view(), 99);
  DeviceBuffer<float> d(static_cast<std::size_t>(n * n)), dtau(static_cast<std::size_t>(n)),
      c(static_cast<std::size_t>(n * n)), ctau(static_cast<std::size_t>(n));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), a.data(), d.bytes(), cudaMemcpyHostToDevice, stream_));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(c.data(), a.data(), c.bytes(), cudaMemcpyHostToDevice, stream_));
  QrWorkspace<float> ws(n, n, with_nb(128), QrVariant::gpu_resident);
  qr_gpu_resident<float>(n, n, d.data(), n, dtau.data(), ws, stream_);
  CusolverHandle solver(stream_);
  dev::SolverWorkspace sws;
  dev::geqrf<float>(solver, n, n, c.data(), n, ctau.data(), sws);
  EXPECT_EQ(sws.read_info(stream_), 0);
  const auto ours = download(d.data(), static_cast<std::size_t>(n * n), stream_);
  const auto theirs = download(c.data(), static_cast<std::size_t>(n * n), stream_);
  double err = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i)
      err = std::max(err, std::abs(static_cast<double>(ours[i + j * n]) - static_cast<double>(theirs[i + j * n])));
  EXPECT_LT(err / (n * unit_roundoff<float>() * std::sqrt(static_cast<double>(n))), 30.0);
}

TEST_F(DenseQrGpu, NonFiniteInputIsAClearError) {
  const std::int64_t n = 100;
  HostMatrix<double> a(n, n);
  fill_uniform(a.view(), 5);
  a(17, 42) = std::numeric_limits<double>::quiet_NaN();
  PinnedBuffer<double> work(static_cast<std::size_t>(n * n)), tau(static_cast<std::size_t>(n));
  std::memcpy(work.data(), a.data(), work.size() * sizeof(double));
  QrWorkspace<double> hws(n, n, with_nb(32), QrVariant::hybrid);
  try {
    qr_hybrid<double>(n, n, work.data(), n, tau.data(), hws, stream_);
    ADD_FAILURE() << "qr_hybrid accepted NaN";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("A(17, 42)"), std::string::npos) << e.what();
  }
  std::memcpy(work.data(), a.data(), work.size() * sizeof(double));
  QrWorkspace<double> rws(n, n, with_nb(32), QrVariant::gpu_resident);
  EXPECT_THROW(qr_gpu_resident_host<double>(n, n, work.data(), n, tau.data(), rws, stream_), std::invalid_argument);
  EXPECT_THROW(qr_hybrid<double>(n, n, work.data(), n - 1, tau.data(), hws, stream_), std::invalid_argument);
  EXPECT_THROW(QrWorkspace<double>(n, n, QrOptions{.nb = 64, .widths = {}, .lookahead = true, .gemm = UpdateGemm::simt},
                                   QrVariant::hybrid),
               std::invalid_argument);  // the SIMT GEMM is FP32 only
}

}  // namespace
}  // namespace gpufact::dense
