// Device tests (label gpu) for the compact-WY apply (kernels/qr/wy_apply.cuh), chunked, resident
// and split over chunks: on CAQR's first-level blocks (fixed rows, a short last block, 8 … 64
// reflectors; split rows on the resident kernel) and on a register TSQR's leaves and tree levels
// (split and gathered rows), Qᵀ and Q agree with the columnwise kernels that apply the same
// reflectors one at a time; τ = 0 blocks leave C exactly as it was; Q undoes Qᵀ; bad block
// descriptions are rejected. FP32 and FP64. Skips without a GPU.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "factorizations/caqr/tsqr_register.hpp"
#include "kernels/qr/caqr_kernels.cuh"
#include "kernels/qr/tsqr_register.cuh"
#include "kernels/qr/wy_apply.cuh"

#include <gtest/gtest.h>

#include "tests/caqr_test_util.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact::factorizations {
namespace {

// Agreement with the columnwise kernels, in units of ε: both sum the same products in different
// orders over blocks of up to 512 rows (measured on the H200: at most 20 ε).
constexpr double kTolerance = 64.0;
// The resident kernel on the tensor cores (3xTF32) drops each product's small·small term and
// truncates the small halves to TF32 (about 2⁻²¹ relative per product against FP32's 2⁻²⁴), and
// the tensor cores accumulate their own way (measured on an H100: at most 48 ε).
constexpr double kTolerance3xTf32 = 128.0;

template <class T>
class GpuWyApply : public CaqrDeviceTest<T> {
 protected:
  // CAQR's first-level blocks: `rows`-row blocks of k reflectors stored in v (ld m), taus k apart.
  static kernels::WyBlocks<T> fixed_blocks(const T* v, const T* tau, std::int64_t m, int rows, int k) {
    kernels::WyBlocks<T> b;
    b.rows = kernels::WyRows::fixed;
    b.blocks = static_cast<int>((m + rows - 1) / rows);
    b.k = k;
    b.m = m;
    b.block_rows = rows;
    b.v = v;
    b.ldv = m;
    b.tau = tau;
    b.tau_stride = k;
    return b;
  }
  // The T factors of `blocks` in one buffer, one level after another; returns each level's offset.
  std::vector<std::size_t> build_t(const std::vector<kernels::WyBlocks<T>>& levels, DeviceBuffer<T>& t) {
    std::vector<std::size_t> offsets;
    std::size_t total = 0;
    for (const auto& b : levels) {
      offsets.push_back(total);
      total += static_cast<std::size_t>(b.blocks) * kernels::wy_t_entries(b.k);
    }
    t = DeviceBuffer<T>(total);
    for (std::size_t l = 0; l < levels.size(); ++l) kernels::launch_wy_larft<T>(levels[l], t.data() + offsets[l], this->stream_);
    return offsets;
  }
};

using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(GpuWyApply, Precisions);

TYPED_TEST(GpuWyApply, FixedBlocksMatchTheColumnwiseApply) {
  using T = TypeParam;
  struct Shape {
    int rows, cols;
  };
  const std::int64_t m = 1000, cols = 70;  // a short last block; a partial last column tile
  for (const Shape sh : {Shape{256, 32}, Shape{128, 16}, Shape{128, 8}, Shape{32, 32}, Shape{64, 16}}) {
    SCOPED_TRACE(std::to_string(sh.rows) + "x" + std::to_string(sh.cols));
    kernels::caqr_prepare_kernels<T>(sh.rows, sh.cols);
    const std::int64_t blocks = (m + sh.rows - 1) / sh.rows;
    auto panel = this->upload(this->random(m, sh.cols, 11 + sh.rows));
    DeviceBuffer<T> tau(static_cast<std::size_t>(blocks * sh.cols));
    kernels::launch_caqr_factor<T>(panel.data(), m, m, sh.cols, sh.rows, tau.data(), sh.cols, this->stream_);
    const auto b = this->fixed_blocks(panel.data(), tau.data(), m, sh.rows, sh.cols);
    DeviceBuffer<T> t;
    const auto offsets = this->build_t({b}, t);
    const auto c = this->random(m, cols, 99);
    for (const bool transpose : {true, false}) {
      auto expect = this->upload(c), got = this->upload(c);
      kernels::launch_caqr_apply_qt_h<T>(panel.data(), m, m, sh.cols, sh.rows, sh.cols, tau.data(), sh.cols,
                                         expect.data(), m, cols, transpose, kernels::QtReduction::register_serial,
                                         this->stream_);
      kernels::launch_wy_apply<T>(b, t.data() + offsets[0], got.data(), m, cols, transpose, this->stream_);
      auto split = this->upload(c);
      DeviceBuffer<T> workspace(kernels::wy_apply_split_workspace<T>(b, cols));
      kernels::launch_wy_apply_split<T>(b, split.data(), m, cols, transpose, workspace.data(), this->stream_);
      const auto want = this->download(expect, m, cols);
      EXPECT_LT(this->difference(this->download(got, m, cols), want, 1.0), kTolerance) << (transpose ? "Qᵀ" : "Q");
      EXPECT_LT(this->difference(this->download(split, m, cols), want, 1.0), kTolerance)
          << (transpose ? "Qᵀ" : "Q") << ", split";
    }
  }
}

// The resident kernel (FP32, the only one for blocks wider than 32 reflectors) against the
// columnwise kernels: a short last block whose rows are not a multiple of 4, a partial last
// column tile, C's columns not 16-byte aligned (ldc = m + 1: the row past m stays as it was),
// 16 … 32 reflectors on request (T narrower than the kernel's 64), and the thread blocks' shares
// of the tiles (on 132 SMs): two or three tiles each from 157 blocks of 2, nine or ten from 300
// blocks of 4 (several blocks each, so the three buffers go round), three or four from 80 blocks
// of 5 (shares starting and ending inside a block); each on the FFMA kernel and on the tensor
// cores (3xTF32). FP64 has no resident kernel: it is refused.
TYPED_TEST(GpuWyApply, ResidentMatchesTheColumnwiseApply) {
  using T = TypeParam;
  struct Case {
    std::int64_t m, ldc, cols;
    int rows, k;
    kernels::WyApplyKernel kernel;
  };
  const auto automatic = kernels::WyApplyKernel::automatic, resident = kernels::WyApplyKernel::resident;
  const auto tf32x3 = kernels::WyApplyKernel::resident_3xtf32;
  const Case cases[] = {{1001, 1002, 70, 256, 64, automatic},    {1001, 1001, 70, 256, 48, automatic},
                        {40000, 40000, 70, 256, 64, automatic},  {76800, 76800, 200, 256, 64, automatic},
                        {20480, 20480, 300, 256, 64, automatic},
                        {1001, 1002, 33, 256, 24, resident},     {1001, 1001, 70, 256, 32, resident},
                        {1001, 1001, 70, 256, 16, resident}};
  for (const Case& cs : cases) {
    SCOPED_TRACE(std::to_string(cs.m) + " rows, ldc " + std::to_string(cs.ldc) + ", blocks " +
                 std::to_string(cs.rows) + " x " + std::to_string(cs.k) + ", " + kernels::to_string(cs.kernel));
    const int shape_cols = cs.k <= 32 ? 32 : 64;
    const std::int64_t blocks = (cs.m + cs.rows - 1) / cs.rows;
    DeviceBuffer<T> panel(static_cast<std::size_t>(cs.m * cs.k)), tau(static_cast<std::size_t>(blocks * cs.k));
    if constexpr (sizeof(T) == 4) {
      kernels::caqr_prepare_kernels<T>(cs.rows, shape_cols);
      panel = this->upload(this->random(cs.m, cs.k, 17 + cs.k));
      kernels::launch_caqr_factor<T>(panel.data(), cs.m, cs.m, cs.k, cs.rows, tau.data(), cs.k, this->stream_);
    }
    const auto b = this->fixed_blocks(panel.data(), tau.data(), cs.m, cs.rows, cs.k);
    if constexpr (sizeof(T) == 8) {
      EXPECT_FALSE(kernels::wy_apply_kernel_problem(b, resident).empty());
      EXPECT_FALSE(kernels::wy_apply_kernel_problem(b, tf32x3).empty());
      DeviceBuffer<T> t(static_cast<std::size_t>(blocks * kernels::wy_t_entries(cs.k))), c(1);
      if (cs.k > kernels::wy_max_reflectors<T>()) {
        EXPECT_THROW(kernels::launch_wy_larft<T>(b, t.data(), this->stream_), std::invalid_argument);
      }
      EXPECT_THROW(kernels::launch_wy_apply<T>(b, t.data(), c.data(), cs.m, 1, true, this->stream_, cs.kernel),
                   std::invalid_argument);
      continue;
    } else {
      ASSERT_EQ(kernels::wy_apply_kernel_problem(b, cs.kernel), "");
      ASSERT_EQ(kernels::wy_apply_kernel_for(b, cs.kernel), resident);
      ASSERT_EQ(kernels::wy_apply_kernel_problem(b, tf32x3), "");
      DeviceBuffer<T> t;
      const auto offsets = this->build_t({b}, t);
      const auto c = this->random(cs.ldc, cs.cols, 123);
      for (const bool transpose : {true, false}) {
        auto expect = this->upload(c), got = this->upload(c), got_tc = this->upload(c);
        kernels::launch_caqr_apply_qt_h<T>(panel.data(), cs.m, cs.m, cs.k, cs.rows, shape_cols, tau.data(), cs.k,
                                           expect.data(), cs.ldc, cs.cols, transpose,
                                           kernels::QtReduction::register_serial, this->stream_);
        kernels::launch_wy_apply<T>(b, t.data() + offsets[0], got.data(), cs.ldc, cs.cols, transpose, this->stream_,
                                    cs.kernel);
        kernels::launch_wy_apply<T>(b, t.data() + offsets[0], got_tc.data(), cs.ldc, cs.cols, transpose,
                                    this->stream_, tf32x3);
        const auto want = this->download(expect, cs.ldc, cs.cols);
        const double fma = this->difference(this->download(got, cs.ldc, cs.cols), want, 1.0);
        const double tc = this->difference(this->download(got_tc, cs.ldc, cs.cols), want, 1.0);
        EXPECT_LT(fma, kTolerance) << (transpose ? "Qᵀ" : "Q");
        EXPECT_LT(tc, kTolerance3xTf32) << (transpose ? "Qᵀ" : "Q") << ", 3xTF32";
        std::printf("  %lld x %lld, %d reflectors, %s: from the columnwise apply, FFMA %.1f ε, 3xTF32 %.1f ε\n",
                    static_cast<long long>(cs.m), static_cast<long long>(cs.cols), cs.k, transpose ? "Qᵀ" : "Q", fma,
                    tc);
      }
    }
  }
}

// Split rows on the resident kernel: 1000 rows in 4 blocks of 250 (first rows not 16-byte
// aligned, so C moves entry by entry), against the same rows described as fixed 250-row blocks on
// the chunked kernel (32 reflectors) and on the resident kernel itself (64).
TYPED_TEST(GpuWyApply, ResidentTakesSplitRows) {
  using T = TypeParam;
  if constexpr (sizeof(T) == 8) {
    GTEST_SKIP() << "the resident kernel is FP32 only (ResidentMatchesTheColumnwiseApply checks the refusal)";
  } else {
    const std::int64_t m = 1000, cols = 70;
    const int blocks = 4, rows = 250;
    for (const int k : {32, 64}) {
      SCOPED_TRACE(std::to_string(k) + " reflectors");
      auto panel = this->upload(this->random(m, k, 40 + k));
      DeviceBuffer<T> tau(static_cast<std::size_t>(blocks * k));
      kernels::launch_caqr_factor<T>(panel.data(), m, m, k, rows, tau.data(), k, this->stream_);
      const auto fixed = this->fixed_blocks(panel.data(), tau.data(), m, rows, k);
      auto split = fixed;
      split.rows = kernels::WyRows::split;
      split.block_rows = 0;
      ASSERT_EQ(kernels::wy_apply_kernel_problem(split, kernels::WyApplyKernel::resident), "");
      DeviceBuffer<T> t;
      const auto offsets = this->build_t({split}, t);
      const auto reference = k <= 32 ? kernels::WyApplyKernel::chunked : kernels::WyApplyKernel::resident;
      const auto c = this->random(m + 1, cols, 5);
      for (const bool transpose : {true, false}) {
        auto expect = this->upload(c), got = this->upload(c);
        kernels::launch_wy_apply<T>(fixed, t.data() + offsets[0], expect.data(), m + 1, cols, transpose, this->stream_,
                                    reference);
        kernels::launch_wy_apply<T>(split, t.data() + offsets[0], got.data(), m + 1, cols, transpose, this->stream_,
                                    kernels::WyApplyKernel::resident);
        auto got_tc = this->upload(c);
        kernels::launch_wy_apply<T>(split, t.data() + offsets[0], got_tc.data(), m + 1, cols, transpose,
                                    this->stream_, kernels::WyApplyKernel::resident_3xtf32);
        const auto want = this->download(expect, m + 1, cols);
        EXPECT_LT(this->difference(this->download(got, m + 1, cols), want, 1.0), kTolerance)
            << (transpose ? "Qᵀ" : "Q");
        EXPECT_LT(this->difference(this->download(got_tc, m + 1, cols), want, 1.0), kTolerance3xTf32)
            << (transpose ? "Qᵀ" : "Q") << ", 3xTF32";
      }
    }
  }
}

// The register TSQR's leaves (split rows) and tree levels (rows gathered from the children's
// leaves): Qᵀ applied leaves first, then the levels upwards; Q the other way. The split apply keeps
// the T it makes (equal to launch_wy_larft's), and applies alike when given it. On 70 columns (whole
// and partial tiles) and on 3 and 4 (a tile mostly padding, as for a narrow last panel).
TYPED_TEST(GpuWyApply, RegisterTsqrLevelsMatchTheRegisterApply) {
  using T = TypeParam;
  struct Shape {
    std::int64_t m;
    int n;
  };
  for (const Shape sh : {Shape{8192, 32}, Shape{20000, 12}, Shape{30000, 16}, Shape{1000, 9}, Shape{40000, 32}}) {
    SCOPED_TRACE(std::to_string(sh.m) + "x" + std::to_string(sh.n));
    const int width = kernels::tsqr_register_width(sh.n);
    auto tree = make_tsqr_tree(sh.m, sh.n, kernels::tsqr_register_block_rows<T>(width, 256));
    tree.threads = 256;
    const auto sizes = tsqr_tree_sizes(tree);
    auto a = this->upload(this->random(sh.m, sh.n, 5 + sh.m));
    DeviceBuffer<T> v(static_cast<std::size_t>(sh.m * sh.n)), stacks(std::max<std::size_t>(sizes.stacks, 1)),
        tau(sizes.tau), r(static_cast<std::size_t>(sh.n * sh.n));
    auto counters = zeroed_counters(sizes.counters);
    kernels::launch_tsqr_register_factor<T>(a.data(), sh.m, v.data(), sh.m, stacks.data(), tau.data(), counters.data(),
                                            r.data(), sh.n, true, tree, this->stream_);
    const auto levels = tsqr_wy_levels<T>(tree, v.data(), sh.m, stacks.data(), tau.data());
    DeviceBuffer<T> t;
    const auto offsets = this->build_t(levels, t);
    for (const std::int64_t cols : {70, 4, 3}) {
      SCOPED_TRACE(std::to_string(cols) + " columns");
      std::size_t entries = 1;
      for (const auto& b : levels) entries = std::max(entries, kernels::wy_apply_split_workspace<T>(b, cols));
      DeviceBuffer<T> workspace(entries);
      const auto c = this->random(sh.m, cols, 77);
      for (const bool transpose : {true, false}) {
        auto expect = this->upload(c), got = this->upload(c);
        kernels::launch_caqr_register_apply<T>(v.data(), sh.m, stacks.data(), tau.data(), expect.data(), sh.m, cols,
                                               tree, transpose, this->stream_);
        // The leaves read from elsewhere (x_in) and written to x give bit for bit the in-place leaves.
        auto in_place = this->upload(c), source = this->upload(c);
        auto moved = this->poisoned(static_cast<std::size_t>(sh.m * cols));
        kernels::launch_caqr_register_apply<T>(v.data(), sh.m, stacks.data(), tau.data(), in_place.data(), sh.m, cols,
                                               tree, transpose, this->stream_, false);
        kernels::launch_caqr_register_apply<T>(v.data(), sh.m, stacks.data(), tau.data(), moved.data(), sh.m, cols,
                                               tree, transpose, this->stream_, false, source.data(), sh.m);
        EXPECT_EQ(this->difference(this->download(moved, sh.m, cols), this->download(in_place, sh.m, cols), 1.0), 0.0)
            << "leaves from x_in";
        EXPECT_EQ(this->difference(this->download(source, sh.m, cols), c, 1.0), 0.0) << "x_in left untouched";
        auto split = this->upload(c), split_t = this->upload(c);
        const std::size_t t_count = offsets.back() + static_cast<std::size_t>(levels.back().blocks) *
                                                          kernels::wy_t_entries(levels.back().k);
        auto kept = this->poisoned(t_count);
        for (std::size_t q = 0; q < levels.size(); ++q) {
          const std::size_t l = transpose ? q : levels.size() - 1 - q;
          kernels::launch_wy_apply<T>(levels[l], t.data() + offsets[l], got.data(), sh.m, cols, transpose,
                                      this->stream_);
          auto keep = levels[l];  // T made in every chunk, and kept
          keep.t_out = kept.data() + offsets[l];
          kernels::launch_wy_apply_split<T>(keep, split.data(), sh.m, cols, transpose, workspace.data(),
                                            this->stream_);
          auto given = levels[l];  // T made beforehand rather than in every chunk
          given.t = t.data() + offsets[l];
          kernels::launch_wy_apply_split<T>(given, split_t.data(), sh.m, cols, transpose, workspace.data(),
                                            this->stream_);
        }
        // The kept T's are larft's (the same sums in another order).
        const auto t_rows = static_cast<std::int64_t>(t_count);
        EXPECT_LT(this->difference(this->download(kept, t_rows, 1), this->download(t, t_rows, 1), 1.0), kTolerance)
            << "kept T";
        const auto want = this->download(expect, sh.m, cols);
        EXPECT_LT(this->difference(this->download(got, sh.m, cols), want, 1.0), kTolerance)
            << (transpose ? "Qᵀ" : "Q");
        EXPECT_LT(this->difference(this->download(split, sh.m, cols), want, 1.0), kTolerance)
            << (transpose ? "Qᵀ" : "Q") << ", split";
        EXPECT_LT(this->difference(this->download(split_t, sh.m, cols), want, 1.0), kTolerance)
            << (transpose ? "Qᵀ" : "Q") << ", split with T given";
      }
    }
  }
}

TYPED_TEST(GpuWyApply, QUndoesQtAndZeroTausChangeNothing) {
  using T = TypeParam;
  const std::int64_t m = 777, cols = 33;
  const int br = 256, k = 32;
  const std::int64_t blocks = (m + br - 1) / br;
  kernels::caqr_prepare_kernels<T>(br, k);
  auto panel = this->upload(this->random(m, k, 3));
  DeviceBuffer<T> tau(static_cast<std::size_t>(blocks * k));
  kernels::launch_caqr_factor<T>(panel.data(), m, m, k, br, tau.data(), k, this->stream_);
  const auto b = this->fixed_blocks(panel.data(), tau.data(), m, br, k);
  DeviceBuffer<T> t;
  this->build_t({b}, t);
  const auto c = this->random(m, cols, 8);
  auto x = this->upload(c);
  kernels::launch_wy_apply<T>(b, t.data(), x.data(), m, cols, true, this->stream_);
  kernels::launch_wy_apply<T>(b, t.data(), x.data(), m, cols, false, this->stream_);
  EXPECT_LT(this->difference(this->download(x, m, cols), c, 1.0), kTolerance) << "Q Qᵀ C = C";
  if constexpr (sizeof(T) == 4) {
    const auto tc = kernels::WyApplyKernel::resident_3xtf32;
    auto xt = this->upload(c);
    kernels::launch_wy_apply<T>(b, t.data(), xt.data(), m, cols, true, this->stream_, tc);
    kernels::launch_wy_apply<T>(b, t.data(), xt.data(), m, cols, false, this->stream_, tc);
    EXPECT_LT(this->difference(this->download(xt, m, cols), c, 1.0), kTolerance3xTf32) << "Q Qᵀ C = C, 3xTF32";
  }

  // A zero panel factors to τ = 0 everywhere: T = 0, and C comes back bit for bit.
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(panel.data(), 0, panel.bytes(), this->stream_));
  kernels::launch_caqr_factor<T>(panel.data(), m, m, k, br, tau.data(), k, this->stream_);
  this->build_t({b}, t);
  auto y = this->upload(c);
  kernels::launch_wy_apply<T>(b, t.data(), y.data(), m, cols, true, this->stream_);
  EXPECT_EQ(this->difference(this->download(y, m, cols), c, 1.0), 0.0);
  if constexpr (sizeof(T) == 4) {
    auto yt = this->upload(c);
    kernels::launch_wy_apply<T>(b, t.data(), yt.data(), m, cols, true, this->stream_,
                                kernels::WyApplyKernel::resident_3xtf32);
    EXPECT_EQ(this->difference(this->download(yt, m, cols), c, 1.0), 0.0) << "3xTF32";
  }
}

TYPED_TEST(GpuWyApply, RejectsMalformedBlocks) {
  using T = TypeParam;
  DeviceBuffer<T> v(1024), tau(64), t(4096), c(1024);
  const auto b = this->fixed_blocks(v.data(), tau.data(), 1024, 256, 8);
  auto bad = b;
  bad.k = kernels::wy_max_reflectors<T>() + 1;
  EXPECT_THROW(kernels::launch_wy_apply<T>(bad, t.data(), c.data(), 1024, 1, true, this->stream_), std::invalid_argument);
  bad = b;  // the chunked and split applies stop at kWyChunkedMaxReflectors, the resident one at 256 rows
  bad.k = kernels::kWyChunkedMaxReflectors + 1;
  EXPECT_THROW(kernels::launch_wy_apply<T>(bad, t.data(), c.data(), 1024, 1, true, this->stream_,
                                           kernels::WyApplyKernel::chunked),
               std::invalid_argument);
  EXPECT_THROW(kernels::launch_wy_apply_split<T>(bad, c.data(), 1024, 1, true, t.data(), this->stream_),
               std::invalid_argument);
  bad = b;
  bad.blocks = 2;
  bad.block_rows = 512;
  EXPECT_THROW(kernels::launch_wy_apply<T>(bad, t.data(), c.data(), 1024, 1, true, this->stream_,
                                           kernels::WyApplyKernel::resident),
               std::invalid_argument);
  bad = b;
  bad.k = 0;
  EXPECT_THROW(kernels::launch_wy_larft<T>(bad, t.data(), this->stream_), std::invalid_argument);
  bad = b;
  bad.blocks = 3;  // 3 blocks of 256 rows do not cover 1024
  EXPECT_THROW(kernels::launch_wy_apply<T>(bad, t.data(), c.data(), 1024, 1, true, this->stream_), std::invalid_argument);
  bad = b;
  bad.rows = kernels::WyRows::tree;
  bad.fan_in = 1;
  EXPECT_THROW(kernels::launch_wy_apply<T>(bad, t.data(), c.data(), 1024, 1, true, this->stream_), std::invalid_argument);
}

}  // namespace
}  // namespace gpufact::factorizations
