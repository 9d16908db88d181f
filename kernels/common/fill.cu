#include "kernels/common/fill.cuh"

#include "core/cuda/check.hpp"

namespace gpufact::kernels {
namespace {

__device__ __forceinline__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <class T>
__global__ void fill_uniform_kernel(T* data, std::size_t count, std::uint64_t seed, T lo, T hi) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    const std::uint64_t r = splitmix64(seed ^ splitmix64(i));
    const double u = static_cast<double>(r >> 11) * 0x1.0p-53;  // [0, 1)
    data[i] = static_cast<T>(lo + (hi - lo) * u);
  }
}

__global__ void fill_words_kernel(std::uint32_t* data, std::size_t count, std::uint64_t seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count; i += stride) {
    const std::uint32_t w = static_cast<std::uint32_t>(splitmix64(seed ^ splitmix64(i)) >> 32);
    data[i] = w == 0 ? 1u : w;
  }
}

__global__ void count_mismatches_kernel(const std::uint32_t* a, const std::uint32_t* b, std::size_t n,
                                        unsigned long long* count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    local += a[i] != b[i];
  // Reduce within the warp before one atomic per warp.
  for (int off = 16; off > 0; off >>= 1) local += __shfl_down_sync(0xffffffffu, local, off);
  if ((threadIdx.x & 31) == 0 && local) atomicAdd(count, local);
}

unsigned grid_for(std::size_t count, unsigned threads) {
  const std::size_t blocks = (count + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 65536 ? (blocks == 0 ? 1 : blocks) : 65536);
}

}  // namespace

void launch_fill_uniform(float* data, std::size_t count, std::uint64_t seed, float lo, float hi, cudaStream_t stream) {
  fill_uniform_kernel<<<grid_for(count, 256), 256, 0, stream>>>(data, count, seed, lo, hi);
  GPUFACT_CHECK_LAUNCH();
}

void launch_fill_uniform(double* data, std::size_t count, std::uint64_t seed, double lo, double hi,
                         cudaStream_t stream) {
  fill_uniform_kernel<<<grid_for(count, 256), 256, 0, stream>>>(data, count, seed, lo, hi);
  GPUFACT_CHECK_LAUNCH();
}

void launch_fill_random_words(std::uint32_t* data, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
  fill_words_kernel<<<grid_for(count, 256), 256, 0, stream>>>(data, count, seed);
  GPUFACT_CHECK_LAUNCH();
}

void launch_count_mismatches(const std::uint32_t* a, const std::uint32_t* b, std::size_t n,
                             unsigned long long* count, cudaStream_t stream) {
  count_mismatches_kernel<<<grid_for(n, 256), 256, 0, stream>>>(a, b, n, count);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
