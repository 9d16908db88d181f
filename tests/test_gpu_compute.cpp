// Device tests (label gpu) for the FMA and shared-memory probes of volkov08 §3.3–3.5: every
// thread's result against the host replay, the blocks' placement on SMs, and the bank-conflict
// kernel's sums. Without a usable GPU every test reports skipped.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "kernels/compute/fma_chains.cuh"
#include "kernels/memory/shared_banks.cuh"
#include "microbench/peak/fma_reference.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact {
namespace {

using microbench::fma_chain_expected;
using microbench::fma_chains_expected;
using microbench::fma_chains_shared_expected;

class GpuCompute : public GpuTest {
 protected:
  template <class T>
  std::vector<T> fetch(const DeviceBuffer<T>& d) {
    std::vector<T> h(d.size());
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(h.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, stream_));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return h;
  }
};

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Every SM got exactly blocks_per_sm blocks.
void expect_one_per_sm(const std::vector<unsigned>& smid, const kernels::ResidentGrid& g) {
  std::map<unsigned, int> per_sm;
  for (unsigned s : smid) ++per_sm[s];
  EXPECT_EQ(static_cast<int>(per_sm.size()), g.sm_count);
  for (const auto& [sm, n] : per_sm) EXPECT_EQ(n, g.blocks_per_sm) << "SM " << sm;
}

TEST_F(GpuCompute, FmaChainsMatchTheHostReplayForEveryThread) {
  const float b = 1.0f - 0x1.0p-20f, c = 0x1.0p-6f;
  for (int warps : {1, 3, 32, 64})
    for (int ilp : {1, 3, 8}) {
      SCOPED_TRACE("warps " + std::to_string(warps) + " ilp " + std::to_string(ilp));
      const auto g = kernels::plan_fma_grid(kernels::FmaOperand::registers, ilp, warps);
      EXPECT_EQ(g.blocks_per_sm * g.threads_per_block, warps * 32);
      const int iterations = 3;
      DeviceBuffer<float> out(static_cast<std::size_t>(g.threads()));
      DeviceBuffer<unsigned> smid(static_cast<std::size_t>(g.blocks()));
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(out.data(), 0xff, out.bytes(), stream_));
      kernels::launch_fma_chains(g, ilp, iterations, b, c, out.data(), smid.data(), stream_);
      const auto got = fetch(out);
      const long steps = static_cast<long>(iterations) * kernels::fma_steps_per_iteration(ilp);
      float expected[4];
      for (unsigned t = 0; t < 4; ++t) expected[t] = fma_chains_expected(t, ilp, steps, b, c);
      EXPECT_FALSE(same_bits(expected[0], expected[1])) << "thread classes must start apart";
      int wrong = 0;
      for (std::size_t t = 0; t < got.size(); ++t) wrong += !same_bits(got[t], expected[t & 3]);
      EXPECT_EQ(wrong, 0) << "first thread's value " << got[0] << ", expected " << expected[0];
      // One step fewer gives a different answer: the check sees a dropped FMA.
      EXPECT_FALSE(same_bits(fma_chains_expected(0, ilp, steps - 1, b, c), expected[0]));
      expect_one_per_sm(fetch(smid), g);
    }
}

TEST_F(GpuCompute, SharedOperandChainsMatchTheHostReplay) {
  std::mt19937 gen(5);
  std::vector<float> table(kernels::kFmaSharedTableWords);
  for (auto& v : table) v = 1.0f - static_cast<float>(1 + gen() % 16) * 0x1.0p-22f;
  DeviceBuffer<float> dtable(table.size());
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dtable.data(), table.data(), dtable.bytes(), cudaMemcpyHostToDevice, stream_));
  const float c = 0x1.0p-6f;
  const int ilp = 4, iterations = 2;
  const auto g = kernels::plan_fma_grid(kernels::FmaOperand::shared, ilp, 32);
  for (int stride : {0, 1, 3, 32, 64}) {
    SCOPED_TRACE("stride " + std::to_string(stride));
    DeviceBuffer<float> out(static_cast<std::size_t>(g.threads()));
    DeviceBuffer<unsigned> smid(static_cast<std::size_t>(g.blocks()));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(out.data(), 0xff, out.bytes(), stream_));
    kernels::launch_fma_chains_shared(g, ilp, iterations, dtable.data(), stride, c, out.data(), smid.data(), stream_);
    const auto got = fetch(out);
    int wrong = 0;
    for (std::size_t t = 0; t < got.size(); ++t)
      wrong += !same_bits(got[t],
                          fma_chains_shared_expected(static_cast<unsigned>(t & 31), ilp, iterations, table, stride, c));
    EXPECT_EQ(wrong, 0);
    expect_one_per_sm(fetch(smid), g);
  }
  EXPECT_THROW(kernels::launch_fma_chains_shared(g, ilp, 1, dtable.data(), 65, c, nullptr, nullptr, stream_),
               std::invalid_argument);
}

TEST_F(GpuCompute, GridPlansRefuseWhatCannotBePlacedExactly) {
  EXPECT_THROW(kernels::plan_fma_grid(kernels::FmaOperand::registers, 4, 0), std::invalid_argument);
  EXPECT_THROW(kernels::plan_fma_grid(kernels::FmaOperand::registers, 4, 33), std::invalid_argument);  // odd > 32
  EXPECT_THROW(kernels::plan_fma_grid(kernels::FmaOperand::registers, 4, 1000), std::invalid_argument);
  EXPECT_THROW(kernels::plan_fma_grid(kernels::FmaOperand::registers, 9, 4), std::invalid_argument);
}

TEST_F(GpuCompute, DependentChainLatencyComputesTheChainAndCountsCycles) {
  const float a0 = 1.0f, b = 1.0f - 0x1.0p-20f, c = 0x1.0p-6f;
  const int iterations = 8;
  const long steps = static_cast<long>(iterations) * kernels::kFmaLatencyUnroll;
  const float expected = fma_chain_expected(a0, b, c, 2 * steps);
  DeviceBuffer<float> out(1);
  DeviceBuffer<long long> cycles(1);
  double per_fma[3] = {};
  int i = 0;
  for (auto op : {kernels::FmaLatencyOperand::registers, kernels::FmaLatencyOperand::shared,
                  kernels::FmaLatencyOperand::shared_dependent}) {
    SCOPED_TRACE("operand " + std::to_string(i));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(out.data(), 0xff, sizeof(float), stream_));
    kernels::launch_fma_latency(op, iterations, a0, b, c, out.data(), cycles.data(), stream_);
    const float got = fetch(out)[0];
    EXPECT_TRUE(same_bits(got, expected)) << got << " vs " << expected;
    per_fma[i] = static_cast<double>(fetch(cycles)[0]) / static_cast<double>(steps);
    EXPECT_GE(per_fma[i], 2.0);  // no FFMA pipeline completes a dependent FMA per cycle
    EXPECT_LT(per_fma[i], 2000.0);
    ++i;
  }
  // The load on the chain adds its latency.
  EXPECT_GT(per_fma[2], per_fma[0] + 5.0);
}

TEST_F(GpuCompute, SharedBankReadsSumEveryLoadAndConflictsCostCycles) {
  std::mt19937 gen(11);
  std::vector<std::uint32_t> table(kernels::kSharedBankTableWords);
  for (auto& w : table) w = static_cast<std::uint32_t>(gen());
  DeviceBuffer<std::uint32_t> dtable(table.size()), sums(1024);
  DeviceBuffer<long long> cycles(1);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dtable.data(), table.data(), dtable.bytes(), cudaMemcpyHostToDevice, stream_));
  const int iterations = 4;
  std::map<std::pair<int, int>, double> cyc;  // (width, stride) → cycles
  for (int width : {4, 8, 16})
    for (int stride : {0, 1, 2, 3, 32, 64}) {
      SCOPED_TRACE("width " + std::to_string(width) + " stride " + std::to_string(stride));
      for (int warps : {1, 32}) {
        GPUFACT_CUDA_CHECK(cudaMemsetAsync(sums.data(), 0, sums.bytes(), stream_));
        kernels::launch_shared_bank_reads(dtable.data(), stride, width, warps, iterations, sums.data(), cycles.data(),
                                          stream_);
        const auto got = fetch(sums);
        for (int t = 0; t < warps * 32; ++t) {
          const std::uint32_t once = kernels::shared_bank_iteration_sum(table.data(), t & 31, stride, width);
          ASSERT_EQ(got[static_cast<std::size_t>(t)], once * static_cast<std::uint32_t>(iterations)) << "thread " << t;
        }
        if (warps == 32) cyc[{width, stride}] = static_cast<double>(fetch(cycles)[0]);
      }
    }
  const auto at = [&](int width, int stride) { return cyc.at({width, stride}); };
  EXPECT_GT(at(4, 32), 4 * at(4, 1)) << "a 32-way conflict must cost far more than none";
  EXPECT_GT(at(4, 64), 4 * at(4, 1));
  EXPECT_LT(at(4, 3), 2 * at(4, 1)) << "odd strides are conflict-free on 32 banks";
  // 16 bytes per lane are four times the bytes of 4: at least twice the cycles, contiguous or not.
  EXPECT_GT(at(16, 1), 2 * at(4, 1));
  EXPECT_THROW(kernels::launch_shared_bank_reads(dtable.data(), 65, 4, 32, 1, sums.data(), cycles.data(), stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::launch_shared_bank_reads(dtable.data(), 1, 4, 33, 1, sums.data(), cycles.data(), stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::launch_shared_bank_reads(dtable.data(), 1, 12, 32, 1, sums.data(), cycles.data(), stream_),
               std::invalid_argument);
}

}  // namespace
}  // namespace gpufact
