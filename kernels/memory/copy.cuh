// Device-to-device copy kernels for volkov08 §3.7.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpufact::kernels {

// Copies `bytes` from src to dst with 16-byte loads and stores, four in flight per thread,
// on a grid of `blocks_per_sm` × SM-count blocks (0: one wave at full occupancy). Pointers that
// are not 16-byte aligned take a byte-wise path.
void launch_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream, int blocks_per_sm = 0);

}  // namespace gpufact::kernels
