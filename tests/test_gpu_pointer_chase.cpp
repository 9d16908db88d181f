// Device tests (label gpu) for the pointer-chase kernels (volkov08 §3.3): the chase visits the
// whole cycle and ends where the host says, for every access kind, width and pattern; the
// verification walk catches a corrupted array; traces return the cycle's indices; the
// multi-SM launch puts one chase on each SM. Without a usable GPU every test reports skipped.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "kernels/memory/pointer_chase.cuh"
#include "microbench/memory/pointer_chase.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <string>
#include <vector>

namespace gpufact {
namespace {

using kernels::ChaseAccess;
using kernels::ChaseWidth;
using microbench::ChaseBench;
using microbench::ChaseSpec;

using GpuChase = GpuTest;

TEST_F(GpuChase, VisitsTheWholeCycleForEveryKindWidthAndPattern) {
  for (auto access : {ChaseAccess::global_ca, ChaseAccess::global_cg, ChaseAccess::shared})
    for (auto width : {ChaseWidth::u32, ChaseWidth::u64, ChaseWidth::address})
      for (bool random : {false, true})
        for (std::size_t bytes : {std::size_t{1} << 10, std::size_t{24000}, std::size_t{96} << 10})
          for (std::size_t stride : {8u, 136u, 4096u}) {
            if (width == ChaseWidth::address && access == ChaseAccess::shared) continue;  // global only
            SCOPED_TRACE(microbench::to_string(access) +
                         (width == ChaseWidth::u32 ? " u32" : width == ChaseWidth::u64 ? " u64" : " ptr") +
                         (random ? " random" : " stride") + " bytes=" + std::to_string(bytes) +
                         " stride=" + std::to_string(stride));
            if (stride > bytes) continue;
            ChaseBench bench(bytes, 1, stream_);
            const ChaseSpec spec{.bytes = bytes, .stride_bytes = stride, .access = access, .width = width,
                                 .random = random, .seed = 42};
            ASSERT_EQ(bench.prepare(spec), 0u) << bench.check_detail();
            const auto pt = bench.measure(2, 4e6, 1024);
            EXPECT_EQ(pt.mismatches, 0u) << pt.mismatch_detail;
            EXPECT_GT(pt.cycles, 1.0);
            EXPECT_LT(pt.cycles, 1e5);
            EXPECT_EQ(pt.samples.size(), 2u);
          }
}

// The address chase ends where the index chase ends, leaves the indices in place for the next
// check, and on an L1-resident array is no slower than the index chase (no arithmetic in the chain).
TEST_F(GpuChase, AddressChaseMatchesTheIndexChaseAndRestoresTheArray) {
  const std::size_t bytes = 16 << 10, stride = 128;
  ChaseBench bench(bytes, 1, stream_);
  ASSERT_EQ(bench.prepare({.bytes = bytes, .stride_bytes = stride, .access = ChaseAccess::global_ca,
                           .width = ChaseWidth::address}), 0u);
  const auto ptr = bench.measure(3, 4e6, 4096);
  EXPECT_EQ(ptr.mismatches, 0u) << ptr.mismatch_detail;
  // A second run on the same array works only if the first put the indices back.
  const auto again = bench.measure(1, 4e6, 4096);
  EXPECT_EQ(again.mismatches, 0u) << again.mismatch_detail;
  ASSERT_EQ(bench.prepare({.bytes = bytes, .stride_bytes = stride, .access = ChaseAccess::global_ca,
                           .width = ChaseWidth::u64}), 0u);
  const auto idx = bench.measure(3, 4e6, 4096);
  EXPECT_EQ(idx.mismatches, 0u) << idx.mismatch_detail;
  EXPECT_LE(ptr.cycles, idx.cycles + 0.5) << "address " << ptr.cycles << " vs index " << idx.cycles;
}

TEST_F(GpuChase, WalkReturnsAfterExactlyTheCycleLengthWithTheIndexSum) {
  const std::size_t n = 5000, s = 12;  // gcd 4: 1250 elements on the cycle
  DeviceBuffer<std::uint32_t> a(n);
  DeviceBuffer<kernels::ChaseWalk> w(1);
  kernels::launch_fill_stride_cycle(ChaseWidth::u32, a.data(), n, s, stream_);
  kernels::launch_chase_walk(ChaseWidth::u32, a.data(), n, 0, 1250, w.data(), stream_);
  kernels::ChaseWalk h{};
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&h, w.data(), sizeof h, cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  EXPECT_EQ(h.first_return, 1250u);
  EXPECT_EQ(h.index_sum, 4ull * 1250 * 1249 / 2);
  EXPECT_EQ(h.out_of_range, 0u);

  // A corrupted element (pointing back to 0 early) shortens the cycle: the walk sees it. Element
  // 400 is reached after t steps with 12 t ≡ 400 (mod 5000), i.e. t = 450, so the walk is back at 0
  // after step 451.
  const std::uint32_t zero = 0;
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(a.data() + 400, &zero, sizeof zero, cudaMemcpyHostToDevice, stream_));
  kernels::launch_chase_walk(ChaseWidth::u32, a.data(), n, 0, 1250, w.data(), stream_);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&h, w.data(), sizeof h, cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  EXPECT_EQ(h.first_return, 451u);

  // An index past the end stops the walk instead of faulting.
  const std::uint32_t past = static_cast<std::uint32_t>(n + 7);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(a.data() + 12, &past, sizeof past, cudaMemcpyHostToDevice, stream_));
  kernels::launch_chase_walk(ChaseWidth::u32, a.data(), n, 0, 1250, w.data(), stream_);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&h, w.data(), sizeof h, cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  EXPECT_EQ(h.out_of_range, 1u);

  // The contents check counts the two corrupted elements.
  DeviceBuffer<unsigned long long> count(1);
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, sizeof(unsigned long long), stream_));
  kernels::launch_count_stride_cycle_mismatches(ChaseWidth::u32, a.data(), n, s, count.data(), stream_);
  unsigned long long wrong = 0;
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&wrong, count.data(), sizeof wrong, cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  EXPECT_EQ(wrong, 2u);
}

TEST_F(GpuChase, LargeCycleIsCheckedByPrefixAndContents) {
  // 2^22 elements at stride 4 B: too long to walk whole, checked by a prefix and in parallel.
  ChaseBench bench(16u << 20, 1, stream_);
  ASSERT_EQ(bench.prepare({.bytes = 16u << 20, .stride_bytes = 4, .access = ChaseAccess::global_ca}), 0u)
      << bench.check_detail();
  const auto pt = bench.measure(1, 2e6, 1024);
  EXPECT_EQ(pt.mismatches, 0u) << pt.mismatch_detail;
}

TEST_F(GpuChase, TraceReturnsTheCycleIndicesAndPositiveLatencies) {
  for (auto access : {ChaseAccess::global_ca, ChaseAccess::global_cg, ChaseAccess::shared}) {
    SCOPED_TRACE(microbench::to_string(access));
    ChaseBench bench(64u << 10, 1, stream_);
    ASSERT_EQ(bench.prepare({.bytes = 64u << 10, .stride_bytes = 4, .access = access, .random = false}), 0u);
    const auto cold = bench.trace(4096, 0, false);
    ASSERT_EQ(cold.latency.size(), 4096u);
    EXPECT_EQ(cold.mismatches, 0u);
    for (auto v : cold.latency) ASSERT_GT(v, 0u);
    const auto warm = bench.trace(1000, 777, true);
    EXPECT_EQ(warm.mismatches, 0u);
  }
  ChaseBench random(1u << 20, 1, stream_);
  ASSERT_EQ(random.prepare({.bytes = 1u << 20, .stride_bytes = 128, .access = ChaseAccess::global_cg,
                            .width = ChaseWidth::u64, .random = true, .seed = 5}),
            0u);
  EXPECT_EQ(random.trace(2048, 100, true).mismatches, 0u);
}

TEST_F(GpuChase, TwoSmTraceFollowsTheOtherSmsWalk) {
  int sms = 0, dev = 0;
  ASSERT_EQ(cudaGetDevice(&dev), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), cudaSuccess);
  ASSERT_GE(sms, 2);
  for (auto width : {ChaseWidth::u32, ChaseWidth::u64})
    for (bool random : {false, true}) {
      ChaseBench bench(1u << 20, 1, stream_);
      ASSERT_EQ(bench.prepare({.bytes = 1u << 20, .stride_bytes = 128, .access = ChaseAccess::global_cg,
                               .width = width, .random = random, .seed = 11}),
                0u);
      // The trace continues where the other SM's walk stopped: after 1000 steps, and after the
      // whole cycle (back at the start).
      for (long long walk : {1000LL, static_cast<long long>(bench.cycle().length)}) {
        const auto t = bench.trace_two_sms(sms - 1, 0, 2048, walk);
        EXPECT_TRUE(t.ran);
        EXPECT_EQ(t.mismatches, 0u) << "walk " << walk;
        ASSERT_EQ(t.latency.size(), 2048u);
        for (auto v : t.latency) ASSERT_GT(v, 0u);
      }
    }
  ChaseBench bench(64u << 10, 1, stream_);
  ASSERT_EQ(bench.prepare({.bytes = 64u << 10, .stride_bytes = 128, .access = ChaseAccess::global_cg}), 0u);
  EXPECT_THROW(bench.trace_two_sms(0, 0, 16, 10), std::invalid_argument) << "the same SM twice";
  EXPECT_THROW(bench.trace_two_sms(sms, 0, 16, 10), std::invalid_argument) << "no such SM";
  EXPECT_THROW(bench.trace_two_sms(1, 0, kernels::chase_trace_max + 1, 10), std::invalid_argument);
  ChaseBench ca(64u << 10, 1, stream_);
  ASSERT_EQ(ca.prepare({.bytes = 64u << 10, .stride_bytes = 128, .access = ChaseAccess::global_ca}), 0u);
  EXPECT_THROW(ca.trace_two_sms(1, 0, 16, 10), std::invalid_argument) << "cg loads only";
}

TEST_F(GpuChase, MultiSmPutsOneChaseOnEverySm) {
  int sms = 0;
  GPUFACT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  for (auto access : {ChaseAccess::global_ca, ChaseAccess::shared}) {
    ChaseBench bench(32u << 10, sms, stream_);
    ASSERT_EQ(bench.prepare({.bytes = 32u << 10, .stride_bytes = 128, .access = access, .blocks = sms}), 0u)
        << bench.check_detail();
    const auto pt = bench.measure(2, 4e6, 1024);
    EXPECT_EQ(pt.mismatches, 0u) << pt.mismatch_detail;
    EXPECT_EQ(pt.distinct_sms, sms);
    EXPECT_EQ(pt.per_sm.size(), static_cast<std::size_t>(sms));
    EXPECT_GE(pt.max_over_sms, pt.cycles);
  }
}

TEST_F(GpuChase, CarveoutPreferencesLaunch) {
  ChaseBench bench(64u << 10, 1, stream_);
  for (int pct : {0, 25, 50, 75, 100, -1}) {
    ASSERT_EQ(bench.prepare({.bytes = 64u << 10, .stride_bytes = 128, .carveout_percent = pct}), 0u);
    const auto pt = bench.measure(1, 4e6, 1024);
    EXPECT_EQ(pt.mismatches, 0u) << "carveout " << pct;
  }
}

TEST_F(GpuChase, SharedArraysBeyondTheLimitAreRefused) {
  const std::size_t limit = kernels::chase_shared_limit();
  ChaseBench bench(limit + 4096, 1, stream_);
  ASSERT_EQ(bench.prepare({.bytes = limit + 4096, .stride_bytes = 128, .access = ChaseAccess::shared}), 0u);
  EXPECT_THROW((void)bench.measure(1), std::invalid_argument);
}

}  // namespace
}  // namespace gpufact
