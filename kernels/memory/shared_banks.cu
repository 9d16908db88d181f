#include "kernels/memory/shared_banks.cuh"

#include "core/cuda/check.hpp"

#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

__global__ void __launch_bounds__(1024) shared_bank_reads_kernel(const std::uint32_t* table, int stride, int iterations,
                                                                 std::uint32_t* sums, long long* cycles) {
  __shared__ std::uint32_t words[kSharedBankTableWords];
  for (int j = threadIdx.x; j < kSharedBankTableWords; j += blockDim.x) words[j] = table[j];
  // volatile: each load is issued every iteration (no hoisting or merging of repeated addresses).
  const volatile std::uint32_t* p = words + (threadIdx.x & 31u) * static_cast<unsigned>(stride);
  std::uint32_t sum = 0;
  __syncthreads();
  const long long t0 = clock64();
#pragma unroll 1
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int k = 0; k < kSharedBankReadsPerIteration; ++k) sum += p[k];
  }
  // The barrier's predicate depends on every load, so no load is still in flight at t1.
  (void)__syncthreads_or(sum == 0u);
  const long long t1 = clock64();
  sums[threadIdx.x] = sum;
  if (threadIdx.x == 0) *cycles = t1 - t0;
}

}  // namespace

void launch_shared_bank_reads(const std::uint32_t* table, int stride, int warps, int iterations, std::uint32_t* sums,
                              long long* cycles, cudaStream_t stream) {
  if (stride < 0 || stride > kSharedBankMaxStride)
    throw std::invalid_argument("shared-memory stride must be 0.." + std::to_string(kSharedBankMaxStride) +
                                " words, got " + std::to_string(stride));
  if (warps < 1 || warps > 32)
    throw std::invalid_argument("warps must be 1..32 (one block), got " + std::to_string(warps));
  shared_bank_reads_kernel<<<1, warps * 32, 0, stream>>>(table, stride, iterations, sums, cycles);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
