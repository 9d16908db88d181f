#include "kernels/memory/shared_banks.cuh"

#include "core/cuda/check.hpp"

#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

// The load of one `Words`-word vector; volatile, so that each is issued every iteration (no
// hoisting or merging of repeated addresses), and as one instruction of that width.
template <int Words>
__device__ __forceinline__ std::uint32_t load_sum(const std::uint32_t* p) {
  if constexpr (Words == 1) {
    return *static_cast<const volatile std::uint32_t*>(p);
  } else if constexpr (Words == 2) {
    std::uint32_t a, b;
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p))));
    return a + b;
  } else {
    std::uint32_t a, b, c, d;
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                 : "r"(static_cast<unsigned>(__cvta_generic_to_shared(p))));
    return a + b + c + d;
  }
}

template <int Words>
__global__ void __launch_bounds__(1024) shared_bank_reads_kernel(const std::uint32_t* table, int stride, int iterations,
                                                                 std::uint32_t* sums, long long* cycles) {
  __shared__ __align__(16) std::uint32_t words[kSharedBankTableWords];
  for (int j = threadIdx.x; j < kSharedBankTableWords; j += blockDim.x) words[j] = table[j];
  const std::uint32_t* p = words + (threadIdx.x & 31u) * static_cast<unsigned>(stride) * Words;
  std::uint32_t sum = 0;
  __syncthreads();
  const long long t0 = clock64();
#pragma unroll 1
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int k = 0; k < kSharedBankReadsPerIteration; ++k) sum += load_sum<Words>(p + k * Words);
  }
  // The barrier's predicate depends on every load, so no load is still in flight at t1.
  (void)__syncthreads_or(sum == 0u);
  const long long t1 = clock64();
  sums[threadIdx.x] = sum;
  if (threadIdx.x == 0) *cycles = t1 - t0;
}

}  // namespace

void launch_shared_bank_reads(const std::uint32_t* table, int stride, int width, int warps, int iterations,
                              std::uint32_t* sums, long long* cycles, cudaStream_t stream) {
  if (stride < 0 || stride > kSharedBankMaxStride)
    throw std::invalid_argument("shared-memory stride must be 0.." + std::to_string(kSharedBankMaxStride) +
                                " loads, got " + std::to_string(stride));
  if (warps < 1 || warps > 32)
    throw std::invalid_argument("warps must be 1..32 (one block), got " + std::to_string(warps));
  switch (width) {
    case 4: shared_bank_reads_kernel<1><<<1, warps * 32, 0, stream>>>(table, stride, iterations, sums, cycles); break;
    case 8: shared_bank_reads_kernel<2><<<1, warps * 32, 0, stream>>>(table, stride, iterations, sums, cycles); break;
    case 16: shared_bank_reads_kernel<4><<<1, warps * 32, 0, stream>>>(table, stride, iterations, sums, cycles); break;
    default:
      throw std::invalid_argument("shared-memory load width must be 4, 8 or 16 bytes, got " + std::to_string(width));
  }
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
