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

// Zeroed state for `blocks` blocks.
class State {
 public:
  State(int blocks, cudaStream_t s)
      : flags_(2 * static_cast<std::size_t>(blocks)), words_(3), slots_(2 * static_cast<std::size_t>(blocks)),
        tallies_(2), timed_out_(1) {
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(flags_.data(), 0, flags_.bytes(), s));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(words_.data(), 0, words_.bytes(), s));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(slots_.data(), 0, slots_.bytes(), s));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(tallies_.data(), 0, tallies_.bytes(), s));
    timed_out_[0] = 0;
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    st.arrival = flags_.data();
    st.wakeup = flags_.data() + blocks;
    st.arrived = words_.data();
    st.generation = words_.data() + 1;
    st.epoch = words_.data() + 2;
    st.slots = slots_.data();
    st.checks = tallies_.data();
    st.violations = tallies_.data() + 1;
    st.timed_out = timed_out_.data();
  }
  Tallies read(cudaStream_t s) {
    unsigned long long t[2];
    unsigned int words[3];
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(t, tallies_.data(), sizeof t, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(words, words_.data(), sizeof words, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    return {t[0], t[1], timed_out_[0], words[2]};
  }
  kernels::GridBarrierState st;

 private:
  DeviceBuffer<unsigned int> flags_, words_, slots_;
  DeviceBuffer<unsigned long long> tallies_;
  PinnedBuffer<unsigned int> timed_out_;
};

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
        State state(blocks, stream_);
        // Two launches on the same state: values continue, so stale flags never match.
        kernels::launch_grid_barrier_rounds(kind, state.st, blocks, threads, 1, 40, two_seconds, stream_);
        kernels::launch_grid_barrier_rounds(kind, state.st, blocks, threads, 41, 25, two_seconds, stream_);
        const Tallies t = state.read(stream_);
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
    State state(blocks, stream_);
    for (int sequence = 0; sequence < 2; ++sequence) {
      for (int r = 0; r < 10; ++r) kernels::launch_relaunch_round(state.st, blocks, 128, r, stream_);
      kernels::launch_relaunch_finish(state.st, blocks, 10, stream_);
    }
    const Tallies t = state.read(stream_);
    EXPECT_EQ(t.violations, 0u);
    EXPECT_EQ(t.checks, static_cast<unsigned long long>(blocks) * 20u);
    EXPECT_EQ(t.epoch, 20u);
  }
}

TEST_F(GpuBarrier, AMissingWriteIsCounted) {
  const int blocks = 7;
  State state(blocks, stream_);
  // Round 3 without rounds 0–2: every block finds its partner's round-2 slot unwritten.
  kernels::launch_relaunch_round(state.st, blocks, 64, 3, stream_);
  Tallies t = state.read(stream_);
  EXPECT_EQ(t.checks, static_cast<unsigned long long>(blocks));
  EXPECT_EQ(t.violations, static_cast<unsigned long long>(blocks));
  // Finishing a 5-round sequence whose last round never ran: every slot is wrong.
  State fresh(blocks, stream_);
  kernels::launch_relaunch_finish(fresh.st, blocks, 5, stream_);
  t = fresh.read(stream_);
  EXPECT_EQ(t.violations, static_cast<unsigned long long>(blocks));
}

TEST_F(GpuBarrier, AWaitPastItsTimeoutEndsTheKernelWithTheErrorFlag) {
  // A zero timeout: the first wait that does not find its flag already set gives up. Over many
  // rounds on several blocks the master always waits for some arrival.
  for (GridBarrierKind kind : {GridBarrierKind::flags, GridBarrierKind::atomic}) {
    SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)));
    const int blocks = 2 * sm_count_;
    State state(blocks, stream_);
    const auto t0 = std::chrono::steady_clock::now();
    kernels::launch_grid_barrier_rounds(kind, state.st, blocks, 128, 1, 2000, 0, stream_);
    const Tallies t = state.read(stream_);
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
    State state(too_many, stream_);
    EXPECT_THROW(kernels::launch_grid_barrier_rounds(kind, state.st, too_many, 128, 1, 10, two_seconds, stream_),
                 CudaError);
    EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "the refusal must not linger for later launch checks";
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the refusal left the context usable
  }
}

}  // namespace
}  // namespace gpufact
