// Device tests (label gpu) for volkov08.barrier's kernels: each barrier really synchronizes
// (after every round each block reads another block's write of that round), the checks count
// what they should, a missing write is caught, a wait that outlasts its timeout ends the kernel
// with the error flag set instead of hanging, and more blocks than can be co-resident are
// refused at launch. Without a usable GPU every test reports skipped.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "microbench/barrier/barrier_kernels.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"
#include "microbench/barrier/barrier_buffers.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace gpufact {
namespace {

using kernels::GridBarrierKind;

constexpr unsigned long long two_seconds = 2'000'000'000ull;

struct Tallies {
  unsigned long long checks = 0, violations = 0;
  unsigned int timed_out = 0, epoch = 0;
};

// Everything a test checks after the barrier kernels ran; synchronizes `s`.
Tallies read(const microbench::BarrierBuffers& b, cudaStream_t s) {
  const auto [checks, violations] = b.tallies(s);
  return {checks, violations, b.timed_out() ? 1u : 0u, b.epoch(s)};
}

class GpuBarrier : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    GPUFACT_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, 0));
  }
  // Block counts to try at `threads`: tiny, one and two per SM, and the co-resident maximum.
  std::vector<int> block_counts(GridBarrierKind kind, int threads) {
    const int max_blocks = kernels::grid_barrier_max_blocks_per_sm(kind, threads) * sm_count_;
    std::vector<int> out;
    for (int b : {1, 2, 5, sm_count_, 2 * sm_count_, max_blocks})
      if (b <= max_blocks) out.push_back(b);
    return out;
  }
  int sm_count_ = 0;
};

TEST_F(GpuBarrier, InKernelBarriersSynchronizeEveryRound) {
  for (GridBarrierKind kind : {GridBarrierKind::flags, GridBarrierKind::atomic, GridBarrierKind::grid_sync}) {
    for (int threads : {32, 128}) {
      for (int blocks : block_counts(kind, threads)) {
        SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)) + " threads " + std::to_string(threads) +
                     " blocks " + std::to_string(blocks));
        microbench::BarrierBuffers state(blocks, stream_);
        // Two launches on the same state: values continue, so stale flags never match.
        kernels::launch_grid_barrier_rounds(kind, state.state(), blocks, threads, 1, 40, two_seconds, stream_);
        kernels::launch_grid_barrier_rounds(kind, state.state(), blocks, threads, 41, 25, two_seconds, stream_);
        const Tallies t = read(state, stream_);
        EXPECT_EQ(t.timed_out, 0u);
        EXPECT_EQ(t.violations, 0u);
        EXPECT_EQ(t.checks, static_cast<unsigned long long>(blocks) * 65u);
      }
    }
  }
}

TEST_F(GpuBarrier, RelaunchSequencesCheckEveryRound) {
  for (int blocks : {1, 3, sm_count_, 8 * sm_count_}) {
    SCOPED_TRACE("blocks " + std::to_string(blocks));
    microbench::BarrierBuffers state(blocks, stream_);
    for (int sequence = 0; sequence < 2; ++sequence) {
      for (int r = 0; r < 10; ++r) kernels::launch_relaunch_round(state.state(), blocks, 128, r, stream_);
      kernels::launch_relaunch_finish(state.state(), blocks, 10, stream_);
    }
    const Tallies t = read(state, stream_);
    EXPECT_EQ(t.violations, 0u);
    EXPECT_EQ(t.checks, static_cast<unsigned long long>(blocks) * 20u);
    EXPECT_EQ(t.epoch, 20u);
  }
}

TEST_F(GpuBarrier, AMissingWriteIsCounted) {
  const int blocks = 7;
  microbench::BarrierBuffers state(blocks, stream_);
  // Round 3 without rounds 0–2: every block finds its partner's round-2 slot unwritten.
  kernels::launch_relaunch_round(state.state(), blocks, 64, 3, stream_);
  Tallies t = read(state, stream_);
  EXPECT_EQ(t.checks, static_cast<unsigned long long>(blocks));
  EXPECT_EQ(t.violations, static_cast<unsigned long long>(blocks));
  // Finishing a 5-round sequence whose last round never ran: every slot is wrong.
  microbench::BarrierBuffers fresh(blocks, stream_);
  kernels::launch_relaunch_finish(fresh.state(), blocks, 5, stream_);
  t = read(fresh, stream_);
  EXPECT_EQ(t.violations, static_cast<unsigned long long>(blocks));
}

TEST_F(GpuBarrier, AWaitPastItsTimeoutEndsTheKernelWithTheErrorFlag) {
  // A zero timeout: the first wait that does not find its flag already set gives up. Over many
  // rounds on several blocks the master always waits for some arrival.
  for (GridBarrierKind kind : {GridBarrierKind::flags, GridBarrierKind::atomic}) {
    SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)));
    const int blocks = 2 * sm_count_;
    microbench::BarrierBuffers state(blocks, stream_);
    const auto t0 = std::chrono::steady_clock::now();
    kernels::launch_grid_barrier_rounds(kind, state.state(), blocks, 128, 1, 2000, 0, stream_);
    const Tallies t = read(state, stream_);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(t.timed_out, 1u);
    EXPECT_LT(t.checks, static_cast<unsigned long long>(blocks) * 2000u) << "some block left early";
    EXPECT_LT(seconds, 10.0);
  }
}

TEST_F(GpuBarrier, MoreBlocksThanCanBeCoResidentAreRefusedAtLaunch) {
  for (GridBarrierKind kind : {GridBarrierKind::flags, GridBarrierKind::atomic, GridBarrierKind::grid_sync}) {
    SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)));
    const int too_many = kernels::grid_barrier_max_blocks_per_sm(kind, 128) * sm_count_ + 1;
    microbench::BarrierBuffers state(too_many, stream_);
    EXPECT_THROW(kernels::launch_grid_barrier_rounds(kind, state.state(), too_many, 128, 1, 10, two_seconds, stream_),
                 CudaError);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the refusal must not linger for later launch checks";
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the refusal left the context usable
  }
}

}  // namespace
}  // namespace gpufact
