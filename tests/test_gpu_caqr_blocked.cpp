// Device tests (label gpu) for CAQR's blocked compact-WY kernels (kernel=blocked): factor_wy and
// factor_tree_wy against the host reference's steps (same blocks, same tree), apply_qt_h_wy for
// Q and Qᵀ, and whole factorizations with CaqrKernels::blocked (R to rounding against the host,
// Q orthogonal, A = QR) at odd sizes: m not a multiple of the block rows, n = 1, n not a multiple
// of the 16-column WY chunk, 110592×100; FP32 and FP64. Skips without a GPU.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/linalg/blas_types.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/caqr/caqr.hpp"
#include "factorizations/caqr/caqr_accuracy.hpp"
#include "factorizations/caqr/caqr_host.hpp"
#include "factorizations/caqr/caqr_tuning.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "tests/caqr_test_util.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

namespace gpufact::factorizations {
namespace {

// Shapes whose blocked kernels fit shared memory, with the paper's and with wide shallow trees;
// 128×8 gives chunks narrower than the 16-column WY chunk.
const CaqrBlockShape kShapes[] = {{64, 16},     {128, 8},      {32, 32},     {128, 16},      {256, 32, 5},
                                  {256, 64, 6}, {256, 128, 3}, {256, 128},   {1024, 16, 32}, {64, 16, 7}};

// Elementwise agreement with the host reference: the blocked kernels sum in another order than
// the host's geqr2, so a few hundred ε of the data's scale, as test_gpu_caqr.
constexpr double kStepTolerance = 2000.0;

template <class T>
class GpuCaqrBlocked : public CaqrDeviceTest<T> {
 protected:
  static std::string problem(CaqrBlockShape s, std::int64_t n = 0) {
    const int w = static_cast<int>(n > 0 && n < s.cols ? n : s.cols);
    auto why = kernels::caqr_wy_shape_problem<T>(s.rows, s.cols, tree_fan_in(s), w);
    if (why.empty()) why = kernels::caqr_shape_problem<T>(s.rows, s.cols, QtReduction::register_serial, tree_fan_in(s), w);
    return why;
  }

  // A plan with the blocked kernels: factor, Q, R; checked against the host reference and by residuals.
  void check_factorization(CaqrBlockShape shape, std::int64_t m, std::int64_t n, bool graph, std::uint64_t seed) {
    SCOPED_TRACE(shape.label() + " " + std::to_string(m) + "×" + std::to_string(n) + (graph ? " graph" : ""));
    CaqrOptions o;
    o.shape = shape;
    o.kernels = CaqrKernels::blocked;
    o.use_graph = graph;
    CaqrPlan<T> plan(m, n, o);
    const auto a = this->random(m, n, seed);
    auto da = this->upload(a);
    auto dq = this->poisoned(static_cast<std::size_t>(m * n));
    auto dr = this->poisoned(static_cast<std::size_t>(n * n));
    caqr_factor(plan, da.data(), m, this->stream_);
    caqr_form_q(plan, da.data(), m, dq.data(), m, this->stream_);
    caqr_copy_r(plan, da.data(), m, dr.data(), n, this->stream_);
    const auto q = this->download(dq, m, n), rr = this->download(dr, n, n);
    const auto acc = qr_accuracy<T>(a.view(), q.view(), rr.view());
    EXPECT_LE(acc.factorization, 10.0) << "‖A−QR‖₂/(‖A‖₂√nε)";
    EXPECT_LE(acc.orthogonality, 10.0) << "‖I−QᵀQ‖₂/(√nε)";
    auto f = a;
    const auto s = make_caqr_schedule(m, n, shape);
    const auto tau = caqr_host_factor<T>(f.view(), s);
    HostMatrix<T> hq(m, n);
    caqr_host_form_q<T>(f.view(), s, tau.data(), hq.view());
    EXPECT_LE(this->difference(rr, caqr_extract_r<T>(f.view()), std::sqrt(static_cast<double>(m))), kStepTolerance) << "R";
    EXPECT_LE(this->difference(q, hq, 1.0), kStepTolerance) << "Q";
    const auto dtau = caqr_download_tau(plan, this->stream_);
    ASSERT_EQ(dtau.size(), tau.size());
    double worst = 0;
    for (std::size_t i = 0; i < tau.size(); ++i) worst = std::max(worst, std::abs(static_cast<double>(dtau[i] - tau[i])));
    EXPECT_LE(worst / unit_roundoff<T>(), kStepTolerance) << "tau";
  }
};

using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GpuCaqrBlocked, Precisions);

TYPED_TEST(GpuCaqrBlocked, FactorAndFactorTreeMatchTheHostSteps) {
  using T = TypeParam;
  for (const auto shape : kShapes) {
    if (const auto why = this->problem(shape); !why.empty()) {
      std::printf("  skipping %s: %s\n", shape.label().c_str(), why.c_str());
      continue;
    }
    // Several blocks, a short last block (fewer rows than columns for the wide shapes), a
    // narrower second panel.
    const std::int64_t m = shape.rows * 9 + 5, n = shape.cols + 3;
    SCOPED_TRACE(shape.label() + " m " + std::to_string(m));
    const auto s = make_caqr_schedule(m, n, shape);
    auto host = this->random(m, n, 21);
    auto dev = this->upload(host);
    std::vector<T> tau(static_cast<std::size_t>(s.tau_count), T(0));
    DeviceBuffer<T> dtau = this->poisoned(tau.size());
    const auto& p = s.panels[0];
    caqr_host_step<T>(host.view(), s, 0, 0, tau.data());
    kernels::launch_caqr_factor_wy<T>(dev.data(), m, p.rows, static_cast<int>(p.width), shape.rows,
                                      dtau.data() + p.tau_offset, shape.cols, this->stream_);
    for (std::size_t l = 0; l < p.levels.size(); ++l) {
      caqr_host_step<T>(host.view(), s, 0, static_cast<int>(l) + 1, tau.data());
      kernels::launch_caqr_factor_tree_wy<T>(dev.data(), m, static_cast<int>(p.width),
                                             {p.levels[l].children, p.levels[l].child_stride,
                                              p.levels[l].last_child_rows, s.fan_in},
                                             dtau.data() + p.levels[l].tau_offset, shape.cols, this->stream_);
    }
    const auto got = this->download(dev, m, n);
    HostMatrix<T> panel_host(m, p.width), panel_dev(m, p.width);
    for (std::int64_t j = 0; j < p.width; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        panel_host(i, j) = host(i, j);
        panel_dev(i, j) = got(i, j);
      }
    EXPECT_LE(this->difference(panel_dev, panel_host, std::sqrt(static_cast<double>(m))), kStepTolerance);
    // The columns right of the panel are untouched by factor (the blocked update stays inside it).
    HostMatrix<T> rest_host(m, n - p.width), rest_dev(m, n - p.width);
    for (std::int64_t j = p.width; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) {
        rest_host(i, j - p.width) = host(i, j);
        rest_dev(i, j - p.width) = got(i, j);
      }
    EXPECT_LE(this->difference(rest_dev, rest_host, 1.0), 0.0) << "columns beyond the panel";
    std::vector<T> dtau_h(tau.size());
    GPUFACT_CUDA_CHECK(cudaMemcpy(dtau_h.data(), dtau.data(), dtau.bytes(), cudaMemcpyDeviceToHost));
    double worst = 0;
    auto compare = [&](std::int64_t offset, std::int64_t nodes) {
      for (std::int64_t b = 0; b < nodes; ++b)
        for (int j = 0; j < shape.cols; ++j) {
          const auto i = static_cast<std::size_t>(offset + b * shape.cols + j);
          const double d = std::abs(static_cast<double>(dtau_h[i] - tau[i]));
          worst = std::isfinite(d) ? std::max(worst, d) : std::numeric_limits<double>::infinity();
        }
    };
    compare(p.tau_offset, p.blocks);
    EXPECT_LE(worst / unit_roundoff<T>(), kStepTolerance) << "first-level taus";
  }
}

TYPED_TEST(GpuCaqrBlocked, ApplyQtHMatchesTheHostStep) {
  using T = TypeParam;
  for (const auto shape : kShapes) {
    if (const auto why = this->problem(shape); !why.empty()) continue;
    // A short last block; C wider than one 32-column tile and not a multiple of it.
    const std::int64_t m = shape.rows * 6 + 7, w = shape.cols, cols = 2 * shape.cols + 5;
    SCOPED_TRACE(shape.label());
    const auto s = make_caqr_schedule(m, w, shape);
    auto f = this->random(m, w, 5);
    const auto tau = caqr_host_factor<T>(f.view(), s);
    auto dv = this->upload(f);
    DeviceBuffer<T> dtau(tau.size());
    this->to_device(dtau.data(), tau.data(), dtau.bytes());
    for (bool transpose : {true, false}) {
      SCOPED_TRACE(transpose ? "Qᵀ" : "Q");
      auto c = this->random(m, cols, 9);
      auto dc = this->upload(c);
      caqr_host_apply_step<T>(f.view(), s, 0, 0, tau.data(), c.view(), 0, cols, transpose);
      kernels::launch_caqr_apply_qt_h_wy<T>(dv.data(), m, m, static_cast<int>(w), shape.rows, dtau.data(), shape.cols,
                                            dc.data(), m, cols, transpose, this->stream_);
      EXPECT_LE(this->difference(this->download(dc, m, cols), c, 1.0), kStepTolerance) << "apply_qt_h_wy";
    }
  }
}

TYPED_TEST(GpuCaqrBlocked, FullFactorizationMatchesHostAndResiduals) {
  struct Size { std::int64_t m, n; };
  for (const auto shape : kShapes) {
    if (const auto why = this->problem(shape); !why.empty()) continue;
    const Size sizes[] = {{shape.rows * 5 + 3, 2 * shape.cols + 3}, {shape.rows * 4 + 1, 1}, {700, shape.cols},
                          {3 * shape.cols + 1, 3 * shape.cols + 1}, {shape.rows * 3 + 2, 21}};
    for (const auto sz : sizes) {
      if (sz.m < sz.n) continue;
      for (bool graph : {false, true}) this->check_factorization(shape, sz.m, sz.n, graph, 31);
    }
  }
}

// The tall-skinny defaults the method table runs (caqr_default_tuning), 110592×100 included.
TYPED_TEST(GpuCaqrBlocked, DefaultTallSkinnyShapesMatchHostAndResiduals) {
  using T = TypeParam;
  struct Size { std::int64_t m, n; };
  const Size sizes[] = {{110592, 100}, {20000, 100}, {300001, 10}, {9000, 64}, {70001, 33}, {5000, 16}, {262144, 1}};
  for (const auto sz : sizes) {
    const auto tuning = caqr_default_tuning(sz.m, sz.n, sizeof(T) == 4 ? 's' : 'd');
    if (const auto why = this->problem(tuning.shape, sz.n); !why.empty()) {
      std::printf("  skipping %s at %lld×%lld: %s\n", tuning.shape.label().c_str(), static_cast<long long>(sz.m),
                  static_cast<long long>(sz.n), why.c_str());
      continue;
    }
    this->check_factorization(tuning.shape, sz.m, sz.n, true, 41);
  }
}

}  // namespace
}  // namespace gpufact::factorizations
