// Device tests (label gpu) for the register TSQR: A = QR and QᵀQ = I at shapes with one leaf,
// one tree level and two (odd row counts, n = 1 … 32 across the 12-, 16- and 32-wide classes, FP32
// and FP64), R upper triangular with zeros below, |R|'s diagonal equal to the host's, a zero
// column (τ = 0) still a valid QR, A left untouched, and repeated calls giving the same answer
// (arrival counters reset). Skips without a GPU.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/linalg/host_blas.hpp"
#include "factorizations/caqr/caqr_accuracy.hpp"
#include "factorizations/caqr/tsqr_register.hpp"

#include <gtest/gtest.h>

#include "tests/caqr_test_util.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <utility>
#include <vector>

namespace gpufact::factorizations {
namespace {

template <class T>
class GpuTsqrRegister : public CaqrDeviceTest<T> {
 protected:
  struct Output {
    HostMatrix<T> q, r;
  };
  Output factor(const HostMatrix<T>& a) {
    const std::int64_t m = a.rows(), n = a.cols();
    auto da = this->upload(a);
    auto dq = this->poisoned(static_cast<std::size_t>(m * n));
    auto dr = this->poisoned(static_cast<std::size_t>(n * n));
    TsqrRegisterPlan<T> plan(m, n);
    plan.factor(da.data(), m, dr.data(), n, this->stream_);
    plan.form_q(dq.data(), m, this->stream_);
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(this->stream_));
    EXPECT_EQ(this->difference(this->download(da, m, n), a, 1.0), 0.0) << "A must be left untouched";
    return {this->download(dq, m, n), this->download(dr, n, n)};
  }
  void expect_valid_qr(const HostMatrix<T>& a, const Output& o, const char* what) {
    const auto acc = qr_accuracy<T>(a.view(), o.q.view(), o.r.view());
    EXPECT_LT(acc.factorization, 10.0) << what << " ‖A−QR‖ in √n ε";
    EXPECT_LT(acc.orthogonality, 10.0) << what << " ‖I−QᵀQ‖ in √n ε";
    for (std::int64_t j = 0; j < a.cols(); ++j)
      for (std::int64_t i = j + 1; i < a.cols(); ++i) EXPECT_EQ(o.r(i, j), T(0)) << what << " R below the diagonal";
  }
};

using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GpuTsqrRegister, Precisions);

TYPED_TEST(GpuTsqrRegister, FactorsEveryTreeDepth) {
  using T = TypeParam;
  struct Shape {
    std::int64_t m, n;
  };
  // One leaf (768 × 12 and 1536 × 12 fill one 128- and one 256-thread block); one tree level; two
  // levels (10⁶ × 10 runs 12 wide: 1303 leaves of 768 rows, fan-in 76). 1–12 columns run at
  // width 12, 13–16 at 16, 17–32 at 32.
  for (const Shape s : {Shape{1, 1}, Shape{37, 32}, Shape{300, 16}, Shape{1000, 7}, Shape{5000, 1}, Shape{768, 12},
                        Shape{1536, 12}, Shape{769, 9}, Shape{4097, 16}, Shape{33000, 11}, Shape{33000, 17},
                        Shape{110592, 12}, Shape{110592, 13}, Shape{110592, 16}, Shape{110592, 32},
                        Shape{1000000, 10}, Shape{70001, 32}}) {
    if (s.m < s.n) continue;
    SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n));
    const auto a = this->random(s.m, s.n, 1234 + static_cast<std::uint64_t>(s.m + s.n));
    const auto out = this->factor(a);
    this->expect_valid_qr(a, out, "random");
    // |R_jj| is unique for a full-rank A: compare with LAPACK geqrf's.
    HostMatrix<T> lapack = a;
    std::vector<T> tau(static_cast<std::size_t>(s.n));
    host::geqrf<T>(s.m, s.n, lapack.data(), lapack.ld(), tau.data());
    double worst = 0;
    for (std::int64_t j = 0; j < s.n; ++j)
      worst = std::max(worst, std::abs(std::abs(static_cast<double>(out.r(j, j))) - std::abs(static_cast<double>(lapack(j, j)))) /
                                  std::abs(static_cast<double>(lapack(0, 0))));
    EXPECT_LT(worst, 1000 * std::numeric_limits<T>::epsilon()) << "|diag R| vs LAPACK";
  }
}

TYPED_TEST(GpuTsqrRegister, ZeroColumnStillGivesAValidQr) {
  using T = TypeParam;
  struct Case {
    std::int64_t n, zero;
  };
  for (const Case c : {Case{12, 5}, Case{10, 9}, Case{16, 15}, Case{32, 0}, Case{24, 17}, Case{32, 31}}) {
    SCOPED_TRACE("n " + std::to_string(c.n) + ", column " + std::to_string(c.zero) + " zero");
    auto a = this->random(20000, c.n, 99);
    for (std::int64_t i = 0; i < a.rows(); ++i) a(i, c.zero) = T(0);
    this->expect_valid_qr(a, this->factor(a), "zero column");
  }
}

// The factorization in two launches (the leaves, then the tree from level 1) gives bit for bit what
// one launch gives: V, the taus, the tree's stacks and R; at no tree level (one leaf: the leaves'
// launch factors it whole, the tree's launches nothing), one, and two, in every width class.
TYPED_TEST(GpuTsqrRegister, SplitFactorizationMatchesOneLaunch) {
  using T = TypeParam;
  struct Shape {
    std::int64_t m, n;
  };
  std::set<int> depths;
  for (const Shape s : {Shape{1000, 7}, Shape{8192, 32}, Shape{33000, 17}, Shape{110592, 32}, Shape{1000000, 10},
                        Shape{70001, 16}}) {
    SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n));
    const int width = kernels::tsqr_register_width(static_cast<int>(s.n));
    auto tree = make_tsqr_tree(s.m, s.n, kernels::tsqr_register_block_rows<T>(width, 256));
    tree.threads = 256;
    depths.insert(tree.levels);
    const auto sizes = tsqr_tree_sizes(tree);
    auto a = this->upload(this->random(s.m, s.n, 77 + static_cast<std::uint64_t>(s.m)));
    auto counters = zeroed_counters(sizes.counters);
    struct Out {
      DeviceBuffer<T> v, stacks, tau, r;
    };
    const auto run = [&](bool split) {
      // The stacks zeroed, not poisoned: a node with fewer children than fan_in leaves slots unwritten.
      Out o{this->poisoned(static_cast<std::size_t>(s.m * s.n)),
            DeviceBuffer<T>(std::max<std::size_t>(sizes.stacks, 1)), this->poisoned(sizes.tau),
            this->poisoned(static_cast<std::size_t>(s.n * s.n))};
      GPUFACT_CUDA_CHECK(cudaMemset(o.stacks.data(), 0, o.stacks.bytes()));
      const auto factor = [&](kernels::TsqrFactorPart part) {
        kernels::launch_tsqr_register_factor<T>(a.data(), s.m, o.v.data(), s.m, o.stacks.data(), o.tau.data(),
                                                counters.data(), o.r.data(), s.n, true, tree, this->stream_, part);
      };
      if (split) {
        factor(kernels::TsqrFactorPart::leaves);
        factor(kernels::TsqrFactorPart::tree);
      } else {
        factor(kernels::TsqrFactorPart::whole);
      }
      return o;
    };
    const Out whole = run(false), split = run(true);
    const auto same = [&](const DeviceBuffer<T>& x, const DeviceBuffer<T>& y, std::size_t count, const char* what) {
      const auto rows = static_cast<std::int64_t>(count);
      EXPECT_EQ(this->difference(this->download(x, rows, 1), this->download(y, rows, 1), 1.0), 0.0) << what;
    };
    same(whole.v, split.v, static_cast<std::size_t>(s.m * s.n), "V");
    same(whole.tau, split.tau, sizes.tau, "tau");
    if (tree.levels > 0) same(whole.stacks, split.stacks, sizes.stacks, "stacks");
    same(whole.r, split.r, static_cast<std::size_t>(s.n * s.n), "R");
  }
  EXPECT_EQ(depths, (std::set<int>{0, 1, 2})) << "the shapes cover trees of no, one and two levels";
}

// The leaves' part of Q from their thin Q's (launch_tsqr_register_leaf_q, then one product per
// leaf with the tree's output) against their reflector chains: TSQR's Q as TsqrRegisterPlan forms
// it with thin Q's (leaf tops set, the tree levels by the split apply, the products; on NaN below
// the leaf tops, which must not be read) against form_q's chains, and CAQR's in-place products on
// a panel's Q after the tree levels (that state made from the full Q by the leaves' Qᵀ), at trees
// of one and two levels in every width class.
TYPED_TEST(GpuTsqrRegister, LeafThinQsGiveTheSameQ) {
  using T = TypeParam;
  struct Shape {
    std::int64_t m, n;
  };
  for (const Shape s : {Shape{8192, 32}, Shape{33000, 17}, Shape{110592, 32}, Shape{1000000, 10}, Shape{70001, 16},
                        Shape{20000, 5}}) {
    SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n));
    const int width = kernels::tsqr_register_width(static_cast<int>(s.n));
    auto tree = make_tsqr_tree(s.m, s.n, kernels::tsqr_register_block_rows<T>(width, 256));
    tree.threads = 256;
    ASSERT_GE(tree.levels, 1);
    const auto sizes = tsqr_tree_sizes(tree);
    const std::size_t mn = static_cast<std::size_t>(s.m * s.n);
    auto a = this->upload(this->random(s.m, s.n, 99 + static_cast<std::uint64_t>(s.m)));
    auto counters = zeroed_counters(sizes.counters);
    auto v = this->poisoned(mn), tau = this->poisoned(sizes.tau), r = this->poisoned(static_cast<std::size_t>(s.n * s.n));
    DeviceBuffer<T> stacks(sizes.stacks), q_stacks(sizes.stacks);
    GPUFACT_CUDA_CHECK(cudaMemset(stacks.data(), 0, stacks.bytes()));
    kernels::launch_tsqr_register_factor<T>(a.data(), s.m, v.data(), s.m, stacks.data(), tau.data(), counters.data(),
                                            r.data(), s.n, true, tree, this->stream_);
    auto thin = this->poisoned(mn), chains = this->poisoned(mn), products = this->poisoned(mn);
    kernels::launch_tsqr_register_leaf_q<T>(v.data(), s.m, tau.data(), thin.data(), s.m, tree, this->stream_);
    kernels::launch_tsqr_register_form_q<T>(v.data(), s.m, stacks.data(), tau.data(), q_stacks.data(), chains.data(),
                                            s.m, tree, this->stream_);
    kernels::launch_tsqr_register_leaf_tops_identity<T>(products.data(), s.m, tree, this->stream_);
    const auto levels = tsqr_wy_levels<T>(tree, v.data(), s.m, stacks.data(), tau.data());
    std::size_t workspace_size = 1;
    for (int l = 1; l <= tree.levels; ++l)
      workspace_size = std::max(workspace_size,
                                kernels::wy_apply_split_workspace<T>(levels[static_cast<std::size_t>(l)], s.n));
    DeviceBuffer<T> workspace(workspace_size);
    for (int l = tree.levels; l >= 1; --l)
      kernels::launch_wy_apply_split<T>(levels[static_cast<std::size_t>(l)], products.data(), s.m, s.n, false,
                                        workspace.data(), this->stream_);
    kernels::launch_caqr_register_leaf_products<T>(thin.data(), s.m, products.data(), s.m, tree, this->stream_);
    const auto q = this->download(chains, s.m, s.n);
    EXPECT_LT(this->difference(this->download(products, s.m, s.n), q, 1.0), 16.0) << "TSQR's Q";

    // CAQR: x = the leaves' Qᵀ applied to Q, which leaves (to rounding) the tree levels' output in
    // each leaf's top n rows and zeros below; the products take x back to Q.
    kernels::launch_caqr_register_apply<T>(v.data(), s.m, stacks.data(), tau.data(), chains.data(), s.m, s.n, tree,
                                           true, this->stream_, false);
    kernels::launch_caqr_register_leaf_products<T>(thin.data(), s.m, chains.data(), s.m, tree, this->stream_);
    EXPECT_LT(this->difference(this->download(chains, s.m, s.n), q, 1.0), 16.0) << "CAQR's leaf products";

    // The leaves' Q reading only each leaf's top rows (x_tops_only) on x with NaN below them gives
    // bit for bit the plain apply on the same x with zeros there.
    HostMatrix<T> tops = this->random(s.m, s.n, 5), nan_below = tops;
    for (std::int64_t leaf = 0; leaf < tree.nodes[0]; ++leaf)
      for (std::int64_t j = 0; j < s.n; ++j)
        for (std::int64_t i = leaf * s.m / tree.nodes[0] + s.n; i < (leaf + 1) * s.m / tree.nodes[0]; ++i) {
          tops(i, j) = T(0);
          nan_below(i, j) = std::numeric_limits<T>::quiet_NaN();
        }
    auto plain = this->upload(tops), skipping = this->upload(nan_below);
    kernels::launch_caqr_register_apply<T>(v.data(), s.m, stacks.data(), tau.data(), plain.data(), s.m, s.n, tree,
                                           false, this->stream_, false);
    kernels::launch_caqr_register_apply<T>(v.data(), s.m, stacks.data(), tau.data(), skipping.data(), s.m, s.n, tree,
                                           false, this->stream_, false, nullptr, 0, true);
    EXPECT_EQ(this->difference(this->download(skipping, s.m, s.n), this->download(plain, s.m, s.n), 1.0), 0.0)
        << "x_tops_only";
  }
}

// 300000 × 16 forms Q by the tree's launches; 110592 × 32 by the leaves' thin Q's (on the plan's
// own streams) after the tree levels' split apply.
TYPED_TEST(GpuTsqrRegister, RepeatedCallsAgree) {
  using T = TypeParam;
  for (const auto& [m, n] : {std::pair<std::int64_t, std::int64_t>{300000, 16}, {110592, 32}}) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n));
    const auto a = this->random(m, n, 7);
    auto da = this->upload(a);
    DeviceBuffer<T> dq(static_cast<std::size_t>(m * n)), dr(static_cast<std::size_t>(n * n));
    TsqrRegisterPlan<T> plan(m, n);
    HostMatrix<T> first_r(n, n);
    for (int call = 0; call < 3; ++call) {
      // R and Q poisoned (NaN) first: a call whose tree stalled (its counters not left zero by the
      // call before) would leave them so.
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(dr.data(), 0xff, dr.bytes(), this->stream_));
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(dq.data(), 0xff, dq.bytes(), this->stream_));
      plan.factor(da.data(), m, dr.data(), n, this->stream_);
      plan.form_q(dq.data(), m, this->stream_);
      const auto r = this->download(dr, n, n);
      if (call == 0)
        first_r = r;
      else
        EXPECT_EQ(this->difference(r, first_r, 1.0), 0.0) << "call " << call;
    }
    this->expect_valid_qr(a, {this->download(dq, m, n), first_r}, "third call");
  }
}

// CAQR from register TSQR panels: several panels (the last narrower), trailing updates through
// one- and two-level trees, square and odd shapes.
TYPED_TEST(GpuTsqrRegister, CaqrFactorsAnyWidth) {
  using T = TypeParam;
  struct Shape {
    std::int64_t m, n;
  };
  // Narrow panels (first in FP32, last in FP64) of 12 (44), 9 (41), 16 (48), 8 (40) and 1 (33)
  // columns; one panel at 37 × 32 (Q by the applies),
  // 110592 × 16 and 10⁶ × 10 (a TSQR: Q from its tree); 300000 × 100, whose look-ahead's tree
  // level has 37 nodes × 2 column tiles (the columns apply's levels).
  for (const Shape s : {Shape{40, 40}, Shape{300, 300}, Shape{1000, 100}, Shape{5000, 33}, Shape{5000, 44},
                        Shape{110592, 41}, Shape{8192, 64}, Shape{8192, 200}, Shape{110592, 100}, Shape{300000, 48},
                        Shape{37, 32}, Shape{110592, 16}, Shape{1000000, 10}, Shape{300000, 100}}) {
    SCOPED_TRACE(std::to_string(s.m) + "x" + std::to_string(s.n));
    const auto a = this->random(s.m, s.n, 4321 + static_cast<std::uint64_t>(s.m + s.n));
    auto da = this->upload(a);
    auto dq = this->poisoned(static_cast<std::size_t>(s.m * s.n));
    auto dr = this->poisoned(static_cast<std::size_t>(s.n * s.n));
    CaqrRegisterPlan<T> plan(s.m, s.n);
    plan.run(da.data(), s.m, dq.data(), s.m, dr.data(), s.n, this->stream_);
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(this->stream_));
    EXPECT_EQ(this->difference(this->download(da, s.m, s.n), a, 1.0), 0.0) << "A must be left untouched";
    this->expect_valid_qr(a, {this->download(dq, s.m, s.n), this->download(dr, s.n, s.n)}, "CAQR");
  }
}

// The plan's streams fork from and join the caller's: back-to-back runs on two inputs, with no
// synchronization between them, give each input's factorization, bitwise the same as a run alone
// (the second run must not start before the first has finished with the plan's workspace).
TYPED_TEST(GpuTsqrRegister, CaqrBackToBackRunsAreOrdered) {
  using T = TypeParam;
  const std::int64_t m = 110592, n = 100;
  const auto a = this->random(m, n, 11), b = this->random(m, n, 12);
  auto da = this->upload(a), db = this->upload(b);
  auto qa = this->poisoned(static_cast<std::size_t>(m * n)), ra = this->poisoned(static_cast<std::size_t>(n * n));
  auto qb = this->poisoned(static_cast<std::size_t>(m * n)), rb = this->poisoned(static_cast<std::size_t>(n * n));
  CaqrRegisterPlan<T> plan(m, n);
  plan.run(db.data(), m, qb.data(), m, rb.data(), n, this->stream_);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(this->stream_));
  const auto alone_q = this->download(qb, m, n), alone_r = this->download(rb, n, n);
  plan.run(da.data(), m, qa.data(), m, ra.data(), n, this->stream_);
  plan.run(db.data(), m, qb.data(), m, rb.data(), n, this->stream_);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(this->stream_));
  this->expect_valid_qr(a, {this->download(qa, m, n), this->download(ra, n, n)}, "first of two");
  EXPECT_EQ(this->difference(this->download(qb, m, n), alone_q, 1.0), 0.0) << "Q of the second run";
  EXPECT_EQ(this->difference(this->download(rb, n, n), alone_r, 1.0), 0.0) << "R of the second run";
}

}  // namespace
}  // namespace gpufact::factorizations
