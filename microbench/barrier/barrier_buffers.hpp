// Device state of the global-barrier kernels for one case (volkov08 §3.6): per-block arrival
// and wakeup flags, the atomic barrier's counter/generation, the relaunch epoch, the slots and
// tallies of the synchronization check; all zeroed. The spin-timeout flag lives in pinned host
// memory so the host sees it while kernels still run.
#pragma once

#include "core/cuda/buffer.hpp"
#include "microbench/barrier/barrier_kernels.cuh"

#include <cstddef>
#include <utility>

namespace gpufact::microbench {

class BarrierBuffers {
 public:
  BarrierBuffers(int blocks, cudaStream_t s)
      : flags_(2 * static_cast<std::size_t>(blocks)), words_(3), slots_(2 * static_cast<std::size_t>(blocks)),
        tallies_(2), timed_out_(1) {
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(flags_.data(), 0, flags_.bytes(), s));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(words_.data(), 0, words_.bytes(), s));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(slots_.data(), 0, slots_.bytes(), s));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(tallies_.data(), 0, tallies_.bytes(), s));
    timed_out_[0] = 0;
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    state_.arrival = flags_.data();
    state_.wakeup = flags_.data() + blocks;
    state_.arrived = words_.data();
    state_.generation = words_.data() + 1;
    state_.epoch = words_.data() + 2;
    state_.slots = slots_.data();
    state_.checks = tallies_.data();
    state_.violations = tallies_.data() + 1;
    state_.timed_out = timed_out_.data();
  }
  const kernels::GridBarrierState& state() const { return state_; }
  bool timed_out() const { return __atomic_load_n(timed_out_.data(), __ATOMIC_SEQ_CST) != 0; }
  // The round counter the relaunch finish kernel advances; synchronizes `s`.
  unsigned int epoch(cudaStream_t s) const {
    unsigned int words[3] = {0, 0, 0};
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(words, words_.data(), sizeof words, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    return words[2];
  }
  // [checks, violations]; synchronizes `s`.
  std::pair<unsigned long long, unsigned long long> tallies(cudaStream_t s) const {
    unsigned long long t[2] = {0, 0};
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(t, tallies_.data(), sizeof t, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    return {t[0], t[1]};
  }

 private:
  DeviceBuffer<unsigned int> flags_, words_, slots_;
  DeviceBuffer<unsigned long long> tallies_;
  PinnedBuffer<unsigned int> timed_out_;
  kernels::GridBarrierState state_;
};

}  // namespace gpufact::microbench
