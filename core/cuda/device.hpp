// Properties of the current CUDA device that launch paths need often: read once per device, since
// launchers on a factorization's critical chain run thousands of times per call.
#pragma once

#include "core/cuda/check.hpp"

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>

namespace gpufact {

// Attribute `Attr` of the current device, read once per device.
template <cudaDeviceAttr Attr>
int current_device_attribute() {
  static std::array<std::atomic<int>, 64> cached{};
  int device = 0;
  GPUFACT_CUDA_CHECK(cudaGetDevice(&device));
  const bool cacheable = device >= 0 && device < static_cast<int>(cached.size());
  if (cacheable) {
    if (const int v = cached[static_cast<std::size_t>(device)].load(std::memory_order_relaxed); v > 0) return v;
  }
  int value = 0;
  GPUFACT_CUDA_CHECK(cudaDeviceGetAttribute(&value, Attr, device));
  if (cacheable) cached[static_cast<std::size_t>(device)].store(value, std::memory_order_relaxed);
  return value;
}

// Number of SMs of the current device.
inline int current_device_sm_count() { return current_device_attribute<cudaDevAttrMultiProcessorCount>(); }
// Shared memory one block may opt into (static plus dynamic), in bytes.
inline int current_device_shared_optin() { return current_device_attribute<cudaDevAttrMaxSharedMemoryPerBlockOptin>(); }

}  // namespace gpufact
