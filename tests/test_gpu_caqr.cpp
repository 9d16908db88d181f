// Device tests (label gpu) for CAQR (anderson10): each of the four kernels against one step of
// the host reference (same blocks, same tree), apply_qt_h with every reduction strategy, Q and Qᵀ,
// and the whole factorization (R, explicit Q, residuals) for every compiled block shape,
// FP32 and FP64, at odd sizes; bad input (NaN, m < n) fails clearly. Skips without a GPU.
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

using kernels::QtReduction;

// Every compiled shape with the paper's tree, and wide shallow trees (explicit fan-in) as the
// tall-skinny default picks them (caqr_default_tuning).
const CaqrBlockShape kShapes[] = {{64, 16},       {128, 8},       {32, 32},       {128, 16},
                                  {256, 16},      {256, 32},      {256, 64},      {256, 128},
                                  {1024, 16},     {256, 32, 5},   {256, 64, 6},   {256, 128, 3},
                                  {1024, 16, 32}, {64, 16, 7}};
const QtReduction kReductions[] = {QtReduction::smem_parallel, QtReduction::register_serial, QtReduction::smem_combined,
                                   QtReduction::register_serial_transposed};

template <class T>
class GpuCaqr : public CaqrDeviceTest<T> {
 protected:
  static std::string problem(CaqrBlockShape s, QtReduction r) {
    return kernels::caqr_shape_problem<T>(s.rows, s.cols, r, tree_fan_in(s));
  }
};

using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GpuCaqr, Precisions);

// Elementwise agreement with the host reference: rounding differs only in summation order, so
// a few hundred ε of the data's scale (entries and R are O(√m)) is generous yet catches any
// wrong index.
constexpr double kStepTolerance = 2000.0;

TYPED_TEST(GpuCaqr, FactorAndFactorTreeMatchTheHostSteps) {
  using T = TypeParam;
  for (const auto shape : kShapes) {
    if (const auto why = this->problem(shape, QtReduction::register_serial); !why.empty()) {
      std::printf("  skipping %s: %s\n", shape.label().c_str(), why.c_str());
      continue;
    }
    // Several blocks, a short last block, a narrower second panel.
    const std::int64_t m = shape.rows * 9 + 5, n = shape.cols + 3;
    SCOPED_TRACE(shape.label() + " m " + std::to_string(m));
    const auto s = make_caqr_schedule(m, n, shape);
    auto host = this->random(m, n, 21);
    auto dev = this->upload(host);
    std::vector<T> tau(static_cast<std::size_t>(s.tau_count), T(0));
    DeviceBuffer<T> dtau = this->poisoned(tau.size());
    const auto& p = s.panels[0];
    caqr_host_step<T>(host.view(), s, 0, 0, tau.data());
    kernels::launch_caqr_factor<T>(dev.data(), m, p.rows, static_cast<int>(p.width), shape.rows,
                                   dtau.data() + p.tau_offset, shape.cols, this->stream_);
    for (std::size_t l = 0; l < p.levels.size(); ++l) {
      caqr_host_step<T>(host.view(), s, 0, static_cast<int>(l) + 1, tau.data());
      kernels::launch_caqr_factor_tree<T>(dev.data(), m, static_cast<int>(p.width),
                                          {p.levels[l].children, p.levels[l].child_stride, p.levels[l].last_child_rows,
                                           s.fan_in},
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
    // Every tau of the panel's blocks and nodes was written (the poison is gone) and matches.
    std::vector<T> dtau_h(tau.size());
    GPUFACT_CUDA_CHECK(cudaMemcpy(dtau_h.data(), dtau.data(), dtau.bytes(), cudaMemcpyDeviceToHost));
    double worst = 0;
    for (std::int64_t b = 0; b < p.blocks; ++b)
      for (int j = 0; j < shape.cols; ++j) {
        const auto i = static_cast<std::size_t>(p.tau_offset + b * shape.cols + j);
        worst = std::max(worst, std::abs(static_cast<double>(dtau_h[i] - tau[i])));
      }
    EXPECT_LE(worst / unit_roundoff<T>(), kStepTolerance);
  }
}

TYPED_TEST(GpuCaqr, ApplyQtHEveryReductionAndApplyQtTreeMatchTheHostSteps) {
  using T = TypeParam;
  for (const auto shape : kShapes)
    for (const auto r : kReductions) {
      if (const auto why = this->problem(shape, r); !why.empty()) {
        std::printf("  skipping %s %s: %s\n", shape.label().c_str(), kernels::to_string(r), why.c_str());
        continue;
      }
      const std::int64_t m = shape.rows * 6 + 7, w = shape.cols, cols = 2 * shape.cols + 5;
      SCOPED_TRACE(shape.label() + " " + kernels::to_string(r));
      const auto s = make_caqr_schedule(m, w, shape);
      auto f = this->random(m, w, 5);
      const auto tau = caqr_host_factor<T>(f.view(), s);
      auto dv = this->upload(f);
      DeviceBuffer<T> dtau(tau.size());
      this->to_device(dtau.data(), tau.data(), dtau.bytes());
      const auto& p = s.panels[0];
      for (bool transpose : {true, false}) {
        SCOPED_TRACE(transpose ? "Qᵀ" : "Q");
        auto c = this->random(m, cols, 9);
        auto dc = this->upload(c);
        caqr_host_apply_step<T>(f.view(), s, 0, 0, tau.data(), c.view(), 0, cols, transpose);
        if (r == QtReduction::register_serial_transposed) {
          const std::int64_t tiles = (cols + shape.cols - 1) / shape.cols;
          DeviceBuffer<T> t = this->poisoned(static_cast<std::size_t>(tiles * shape.cols * m));
          kernels::launch_caqr_panel_transpose<T>(dc.data(), m, m, cols, shape.cols, t.data(), m, this->stream_);
          kernels::launch_caqr_apply_qt_h<T>(dv.data(), m, m, static_cast<int>(w), shape.rows, shape.cols, dtau.data(),
                                             shape.cols, t.data(), m, cols, transpose, r, this->stream_);
          kernels::launch_caqr_panel_untranspose<T>(t.data(), m, m, cols, shape.cols, dc.data(), m, this->stream_);
        } else {
          kernels::launch_caqr_apply_qt_h<T>(dv.data(), m, m, static_cast<int>(w), shape.rows, shape.cols, dtau.data(),
                                             shape.cols, dc.data(), m, cols, transpose, r, this->stream_);
        }
        EXPECT_LE(this->difference(this->download(dc, m, cols), c, 1.0), kStepTolerance) << "apply_qt_h";
        if (r != QtReduction::register_serial) continue;
        for (std::size_t l = 0; l < p.levels.size(); ++l) {
          caqr_host_apply_step<T>(f.view(), s, 0, static_cast<int>(l) + 1, tau.data(), c.view(), 0, cols, transpose);
          kernels::launch_caqr_apply_qt_tree<T>(
              dv.data(), m, static_cast<int>(w),
              {p.levels[l].children, p.levels[l].child_stride, p.levels[l].last_child_rows, s.fan_in},
              dtau.data() + p.levels[l].tau_offset, shape.cols, dc.data(), m, cols, transpose, this->stream_);
          EXPECT_LE(this->difference(this->download(dc, m, cols), c, 1.0), kStepTolerance) << "apply_qt_tree level " << l + 1;
        }
      }
    }
}

TYPED_TEST(GpuCaqr, FullFactorizationMatchesHostAndResiduals) {
  using T = TypeParam;
  struct Size { std::int64_t m, n; };
  for (const auto shape : kShapes)
    for (const auto r : kReductions) {
      if (const auto why = this->problem(shape, r); !why.empty()) continue;
      const Size sizes[] = {{shape.rows * 5 + 3, 2 * shape.cols + 3}, {shape.rows * 4, 1}, {700, shape.cols},
                            {3 * shape.cols + 1, 3 * shape.cols + 1}};
      for (const auto sz : sizes) {
        if (sz.m < sz.n) continue;
        SCOPED_TRACE(shape.label() + " " + kernels::to_string(r) + " " + std::to_string(sz.m) + "×" + std::to_string(sz.n));
        for (bool graph : {false, true}) {
          CaqrOptions o;
          o.shape = shape;
          o.reduction = r;
          o.use_graph = graph;
          CaqrPlan<T> plan(sz.m, sz.n, o);
          const auto a = this->random(sz.m, sz.n, 31);
          auto da = this->upload(a);
          auto dq = this->poisoned(static_cast<std::size_t>(sz.m * sz.n));
          auto dr = this->poisoned(static_cast<std::size_t>(sz.n * sz.n));
          caqr_factor(plan, da.data(), sz.m, this->stream_);
          caqr_form_q(plan, da.data(), sz.m, dq.data(), sz.m, this->stream_);
          caqr_copy_r(plan, da.data(), sz.m, dr.data(), sz.n, this->stream_);
          const auto q = this->download(dq, sz.m, sz.n), rr = this->download(dr, sz.n, sz.n);
          const auto acc = qr_accuracy<T>(a.view(), q.view(), rr.view());
          EXPECT_LE(acc.factorization, 10.0) << "‖A−QR‖₂/(‖A‖₂√nε)";
          EXPECT_LE(acc.orthogonality, 10.0) << "‖I−QᵀQ‖₂/(√nε)";
          // Against the host reference: same algorithm, so R and Q agree entry by entry.
          auto f = a;
          const auto s = make_caqr_schedule(sz.m, sz.n, shape);
          const auto tau = caqr_host_factor<T>(f.view(), s);
          HostMatrix<T> hq(sz.m, sz.n);
          caqr_host_form_q<T>(f.view(), s, tau.data(), hq.view());
          EXPECT_LE(this->difference(rr, caqr_extract_r<T>(f.view()), std::sqrt(static_cast<double>(sz.m))),
                    kStepTolerance) << "R";
          EXPECT_LE(this->difference(q, hq, 1.0), kStepTolerance) << "Q";
          // The taus the plan kept give the same Q through the LAPACK-layout reflectors.
          const auto dtau = caqr_download_tau(plan, this->stream_);
          EXPECT_EQ(dtau.size(), tau.size());
          if (graph) {  // the captured graph replayed on fresh data gives the same R
            this->to_device(da.data(), a.data(), da.bytes());
            caqr_factor(plan, da.data(), sz.m, this->stream_);
            caqr_copy_r(plan, da.data(), sz.m, dr.data(), sz.n, this->stream_);
            EXPECT_LE(this->difference(this->download(dr, sz.n, sz.n), rr, 1.0), 0.0) << "graph replay";
          }
        }
      }
    }
}

// The shapes the method table runs (caqr_default_tuning: whole-width blocks, shallow trees whose
// fan-in fits the actual panel width) at tall-skinny sizes with short last blocks and nodes.
TYPED_TEST(GpuCaqr, DefaultTallSkinnyShapesMatchHostAndResiduals) {
  using T = TypeParam;
  struct Size { std::int64_t m, n; };
  const Size sizes[] = {{20000, 100}, {300001, 10}, {9000, 64}, {5000, 16}, {70001, 33}, {262144, 1}};
  for (const auto sz : sizes) {
    const auto tuning = caqr_default_tuning(sz.m, sz.n, sizeof(T) == 4 ? 's' : 'd');
    SCOPED_TRACE(tuning.shape.label() + " " + std::to_string(sz.m) + "×" + std::to_string(sz.n));
    CaqrOptions o;
    o.shape = tuning.shape;
    o.reduction = qt_reduction_from(tuning.reduction);
    o.use_graph = true;
    CaqrPlan<T> plan(sz.m, sz.n, o);
    const auto a = this->random(sz.m, sz.n, 41);
    auto da = this->upload(a);
    auto dq = this->poisoned(static_cast<std::size_t>(sz.m * sz.n));
    auto dr = this->poisoned(static_cast<std::size_t>(sz.n * sz.n));
    caqr_factor(plan, da.data(), sz.m, this->stream_);
    caqr_form_q(plan, da.data(), sz.m, dq.data(), sz.m, this->stream_);
    caqr_copy_r(plan, da.data(), sz.m, dr.data(), sz.n, this->stream_);
    const auto q = this->download(dq, sz.m, sz.n), rr = this->download(dr, sz.n, sz.n);
    const auto acc = qr_accuracy<T>(a.view(), q.view(), rr.view());
    EXPECT_LE(acc.factorization, 10.0) << "‖A−QR‖₂/(‖A‖₂√nε)";
    EXPECT_LE(acc.orthogonality, 10.0) << "‖I−QᵀQ‖₂/(√nε)";
    auto f = a;
    const auto s = make_caqr_schedule(sz.m, sz.n, o.shape);
    const auto tau = caqr_host_factor<T>(f.view(), s);
    HostMatrix<T> hq(sz.m, sz.n);
    caqr_host_form_q<T>(f.view(), s, tau.data(), hq.view());
    EXPECT_LE(this->difference(rr, caqr_extract_r<T>(f.view()), std::sqrt(static_cast<double>(sz.m))), kStepTolerance)
        << "R";
    EXPECT_LE(this->difference(q, hq, 1.0), kStepTolerance) << "Q";
  }
}

TYPED_TEST(GpuCaqr, RankDeficientGivesAValidQrAndBadInputFailsClearly) {
  using T = TypeParam;
  const std::int64_t m = 1000, n = 40;
  auto a = this->random(m, n, 77);
  for (std::int64_t i = 0; i < m; ++i) {
    a(i, 5) = T(0);
    a(i, 9) = a(i, 1);
  }
  CaqrPlan<T> plan(m, n, CaqrOptions{});
  auto da = this->upload(a);
  auto dq = this->poisoned(static_cast<std::size_t>(m * n));
  auto dr = this->poisoned(static_cast<std::size_t>(n * n));
  caqr_factor(plan, da.data(), m, this->stream_);
  caqr_form_q(plan, da.data(), m, dq.data(), m, this->stream_);
  caqr_copy_r(plan, da.data(), m, dr.data(), n, this->stream_);
  const auto acc = qr_accuracy<T>(a.view(), this->download(dq, m, n).view(), this->download(dr, n, n).view());
  EXPECT_LE(acc.factorization, 10.0);
  EXPECT_LE(acc.orthogonality, 10.0);

  a(17, 3) = std::numeric_limits<T>::quiet_NaN();
  a(500, 30) = std::numeric_limits<T>::infinity();
  auto bad = this->upload(a);
  try {
    caqr_factor(plan, bad.data(), m, this->stream_);
    ADD_FAILURE() << "NaN/Inf input was factored";
  } catch (const std::invalid_argument& ex) {
    EXPECT_NE(std::string(ex.what()).find("2 NaN/Inf"), std::string::npos) << ex.what();
  }
  EXPECT_THROW(CaqrPlan<T>(10, 11, CaqrOptions{}), std::invalid_argument);
  EXPECT_THROW(CaqrPlan<T>(10, 0, CaqrOptions{}), std::invalid_argument);
  CaqrOptions odd;
  odd.shape = {48, 16};
  EXPECT_THROW(CaqrPlan<T>(100, 10, odd), std::invalid_argument);  // not a compiled shape
}

}  // namespace
}  // namespace gpufact::factorizations
