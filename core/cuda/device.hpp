// Properties of the current CUDA device that launch paths need often: read once per device, since
// launchers on a factorization's critical chain run thousands of times per call.
#pragma once

#include "core/cuda/check.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>

namespace gpufact {

// Number of SMs of the current device.
inline int current_device_sm_count() {
  static std::array<std::atomic<int>, 64> cached{};
  int device = 0;
  GPUFACT_CUDA_CHECK(cudaGetDevice(&device));
  const bool cacheable = device >= 0 && device < static_cast<int>(cached.size());
  if (cacheable) {
    if (const int v = cached[static_cast<std::size_t>(device)].load(std::memory_order_relaxed); v > 0) return v;
  }
  int sms = 0;
  GPUFACT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  if (cacheable) cached[static_cast<std::size_t>(device)].store(sms, std::memory_order_relaxed);
  return sms;
}

}  // namespace gpufact
