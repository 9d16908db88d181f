#include "kernels/memory/copy.cuh"

#include "core/cuda/check.hpp"

#include <cstdint>

namespace gpufact::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;

// Each block walks chunks of kUnroll × kThreads vectors; all loads of a chunk are issued before
// its stores so that kUnroll 16-byte requests per thread are in flight (volkov08 §3.7: bandwidth
// needs many outstanding accesses).
__global__ void __launch_bounds__(kThreads) copy_vec16_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                               std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * kThreads * kUnroll;
  for (std::size_t base = blockIdx.x * static_cast<std::size_t>(kThreads) * kUnroll + threadIdx.x; base < n;
       base += stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * kThreads;
      if (i < n) v[u] = src[i];
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * kThreads;
      if (i < n) dst[i] = v[u];
    }
  }
}

__global__ void copy_bytes_kernel(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                                  std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    dst[i] = src[i];
}

int sm_count() {
  int dev = 0, sms = 0;
  GPUFACT_CUDA_CHECK(cudaGetDevice(&dev));
  GPUFACT_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

}  // namespace

void launch_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream, int blocks_per_sm) {
  if (bytes == 0) return;
  static int occupancy = [] {
    int blocks = 0;
    GPUFACT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, copy_vec16_kernel, kThreads, 0));
    return blocks;
  }();
  const int per_sm = blocks_per_sm > 0 ? blocks_per_sm : occupancy;
  const auto s = reinterpret_cast<std::uintptr_t>(src), d = reinterpret_cast<std::uintptr_t>(dst);
  const std::size_t max_blocks = static_cast<std::size_t>(sm_count()) * static_cast<std::size_t>(per_sm);
  if (s % 16 == 0 && d % 16 == 0) {
    const std::size_t vectors = bytes / 16, tail = bytes % 16;
    if (vectors > 0) {
      const std::size_t needed = (vectors + kThreads * kUnroll - 1) / (kThreads * kUnroll);
      const auto blocks = static_cast<unsigned>(needed < max_blocks ? needed : max_blocks);
      copy_vec16_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const uint4*>(src), static_cast<uint4*>(dst),
                                                         vectors);
      GPUFACT_CHECK_LAUNCH();
    }
    if (tail > 0) {
      copy_bytes_kernel<<<1, 32, 0, stream>>>(static_cast<const unsigned char*>(src) + vectors * 16,
                                              static_cast<unsigned char*>(dst) + vectors * 16, tail);
      GPUFACT_CHECK_LAUNCH();
    }
    return;
  }
  const std::size_t needed = (bytes + kThreads - 1) / kThreads;
  const auto blocks = static_cast<unsigned>(needed < max_blocks ? needed : max_blocks);
  copy_bytes_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const unsigned char*>(src),
                                                     static_cast<unsigned char*>(dst), bytes);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
