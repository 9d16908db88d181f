#include "kernels/compute/fma_chains.cuh"

#include "core/cuda/check.hpp"

#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

constexpr int kStepsPerIteration = 512;  // FMAs per thread per loop iteration, all chains together

__host__ __device__ inline float chain_start(unsigned thread, int chain) {
  return 1.0f + 0.25f * static_cast<float>(chain) + 0.0625f * static_cast<float>(thread & 3u);
}

__device__ __forceinline__ unsigned sm_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}

// volkov08 §3.4. SASS per loop iteration: ILP × (512 / ILP) FFMA (512 for ILP 1, 2, 4, 8; 510
// for 3 and 6; 505 for 5; 511 for 7) and the loop's counter, compare and branch; b and c stay
// in registers or the constant bank. __launch_bounds__(1024, 2): two 1024-thread blocks per SM
// (64 warps) must fit, so at most 32 registers.
template <int ILP>
__global__ void __launch_bounds__(1024, 2)
    fma_chains_kernel(int iterations, float b, float c, float* out, unsigned* smid) {
  constexpr int kSteps = kStepsPerIteration / ILP;
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  float a[ILP];
#pragma unroll
  for (int i = 0; i < ILP; ++i) a[i] = chain_start(t, i);
#pragma unroll 1
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int k = 0; k < kSteps; ++k)
#pragma unroll
      for (int i = 0; i < ILP; ++i) a[i] = __fmaf_rn(a[i], b, c);
  }
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < ILP; ++i) sum += a[i];
  out[t] = sum;
  if (threadIdx.x == 0) smid[blockIdx.x] = sm_id();
}

// volkov08 §3.5: one operand from shared memory. Today's FFMA takes no shared-memory operand, so
// each step is an LDS (volatile: reloaded every iteration, never hoisted) feeding an FFMA.
template <int ILP>
__global__ void __launch_bounds__(1024, 2)
    fma_chains_shared_kernel(const float* table, int stride, int iterations, float c, float* out, unsigned* smid) {
  extern __shared__ float shared_table[];
  for (int j = threadIdx.x; j < kFmaSharedTableWords; j += blockDim.x) shared_table[j] = table[j];
  __syncthreads();
  constexpr int kSteps = kStepsPerIteration / ILP;
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  const volatile float* s = shared_table + (threadIdx.x & 31u) * static_cast<unsigned>(stride);
  float a[ILP];
#pragma unroll
  for (int i = 0; i < ILP; ++i) a[i] = chain_start(t, i);
#pragma unroll 1
  for (int it = 0; it < iterations; ++it) {
#pragma unroll
    for (int k = 0; k < kSteps; ++k)
#pragma unroll
      for (int i = 0; i < ILP; ++i) a[i] = __fmaf_rn(a[i], s[k * ILP + i], c);
  }
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < ILP; ++i) sum += a[i];
  out[t] = sum;
  if (threadIdx.x == 0) smid[blockIdx.x] = sm_id();
}

// volkov08 §3.3: a ← a·b + c with each step depending on the last; one thread.
template <FmaLatencyOperand Op>
__global__ void fma_latency_kernel(int iterations, float a0, float b, float c, unsigned mask, float* out,
                                   long long* cycles) {
  __shared__ float shared_b[kFmaLatencyUnroll];
  for (int j = threadIdx.x; j < kFmaLatencyUnroll; j += blockDim.x) shared_b[j] = b;
  __syncthreads();
  if (threadIdx.x != 0) return;
  const volatile float* s = shared_b;
  float a = a0;
  long long elapsed = 0;
  for (int pass = 0; pass < 2; ++pass) {
    const long long t0 = clock64();
#pragma unroll 1
    for (int it = 0; it < iterations; ++it) {
#pragma unroll
      for (int k = 0; k < kFmaLatencyUnroll; ++k) {
        if constexpr (Op == FmaLatencyOperand::registers)
          a = __fmaf_rn(a, b, c);
        else if constexpr (Op == FmaLatencyOperand::shared)
          a = __fmaf_rn(a, s[k], c);
        else
          a = __fmaf_rn(a, s[__float_as_uint(a) & mask], c);
      }
    }
    elapsed = clock64() - t0;
  }
  *out = a;
  *cycles = elapsed;
}

template <class F>
void with_ilp(int ilp, F&& f) {
  switch (ilp) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 5: f(std::integral_constant<int, 5>{}); break;
    case 6: f(std::integral_constant<int, 6>{}); break;
    case 7: f(std::integral_constant<int, 7>{}); break;
    case 8: f(std::integral_constant<int, 8>{}); break;
    default: throw std::invalid_argument("ilp must be 1..8, got " + std::to_string(ilp));
  }
}

template <class Kernel>
void prefer_shared(Kernel kernel, std::size_t shared_bytes) {
  GPUFACT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
  GPUFACT_CUDA_CHECK(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared_bytes)));
}

template <class Kernel>
ResidentGrid plan_for(Kernel kernel, int warps_per_sm) {
  int dev = 0;
  GPUFACT_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  GPUFACT_CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  const int max_warps = p.maxThreadsPerMultiProcessor / 32;
  if (warps_per_sm < 1 || warps_per_sm > max_warps)
    throw std::invalid_argument("warps per SM must be 1.." + std::to_string(max_warps) + " on this GPU, got " +
                                std::to_string(warps_per_sm));
  ResidentGrid g;
  g.sm_count = p.multiProcessorCount;
  g.blocks_per_sm = warps_per_sm <= 32 ? 1 : 2;
  if (warps_per_sm % g.blocks_per_sm != 0)
    throw std::invalid_argument("warps per SM above 32 run as two equal blocks and must be even, got " +
                                std::to_string(warps_per_sm));
  g.threads_per_block = warps_per_sm / g.blocks_per_sm * 32;
  // Just under 1/blocks_per_sm of the SM's shared memory per block: blocks_per_sm fit, one more does not.
  const std::size_t per_sm = p.sharedMemPerMultiprocessor;
  const std::size_t reserved = p.reservedSharedMemPerBlock;
  g.shared_bytes = per_sm / static_cast<std::size_t>(g.blocks_per_sm) - reserved - 1024;
  if (g.shared_bytes > p.sharedMemPerBlockOptin) g.shared_bytes = p.sharedMemPerBlockOptin;
  if (g.shared_bytes < kFmaSharedTableWords * sizeof(float))
    throw std::invalid_argument("the SM's shared memory is too small to place blocks one by one");
  prefer_shared(kernel, g.shared_bytes);
  int fit = 0;
  GPUFACT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, g.threads_per_block, g.shared_bytes));
  if (fit != g.blocks_per_sm)
    throw std::invalid_argument(
        "cannot place exactly " + std::to_string(warps_per_sm) + " warps per SM: " + std::to_string(fit) +
        " blocks of " + std::to_string(g.threads_per_block) + " threads with " + std::to_string(g.shared_bytes) +
        " B shared memory fit per SM, wanted " + std::to_string(g.blocks_per_sm));
  return g;
}

}  // namespace

int fma_steps_per_iteration(int ilp) {
  if (ilp < 1 || ilp > 8) throw std::invalid_argument("ilp must be 1..8, got " + std::to_string(ilp));
  return kStepsPerIteration / ilp;
}

float fma_chain_start(unsigned thread, int chain) { return chain_start(thread, chain); }

ResidentGrid plan_fma_grid(FmaOperand operand, int ilp, int warps_per_sm) {
  ResidentGrid g;
  with_ilp(ilp, [&](auto k) {
    constexpr int kIlp = decltype(k)::value;
    g = operand == FmaOperand::registers ? plan_for(fma_chains_kernel<kIlp>, warps_per_sm)
                                         : plan_for(fma_chains_shared_kernel<kIlp>, warps_per_sm);
  });
  return g;
}

void launch_fma_chains(const ResidentGrid& grid, int ilp, int iterations, float b, float c, float* out, unsigned* smid,
                       cudaStream_t stream) {
  with_ilp(ilp, [&](auto k) {
    constexpr int kIlp = decltype(k)::value;
    fma_chains_kernel<kIlp>
        <<<grid.blocks(), grid.threads_per_block, grid.shared_bytes, stream>>>(iterations, b, c, out, smid);
  });
  GPUFACT_CHECK_LAUNCH();
}

void launch_fma_chains_shared(const ResidentGrid& grid, int ilp, int iterations, const float* table, int stride,
                              float c, float* out, unsigned* smid, cudaStream_t stream) {
  if (stride < 0 || stride > kFmaSharedMaxStride)
    throw std::invalid_argument("shared-memory stride must be 0.." + std::to_string(kFmaSharedMaxStride) + ", got " +
                                std::to_string(stride));
  with_ilp(ilp, [&](auto k) {
    constexpr int kIlp = decltype(k)::value;
    fma_chains_shared_kernel<kIlp>
        <<<grid.blocks(), grid.threads_per_block, grid.shared_bytes, stream>>>(table, stride, iterations, c, out, smid);
  });
  GPUFACT_CHECK_LAUNCH();
}

void launch_fma_latency(FmaLatencyOperand operand, int iterations, float a0, float b, float c, float* out,
                        long long* cycles, cudaStream_t stream) {
  // 32 threads fill the shared table; thread 0 alone runs the chain.
  switch (operand) {
    case FmaLatencyOperand::registers:
      fma_latency_kernel<FmaLatencyOperand::registers><<<1, 32, 0, stream>>>(iterations, a0, b, c, 0u, out, cycles);
      break;
    case FmaLatencyOperand::shared:
      fma_latency_kernel<FmaLatencyOperand::shared><<<1, 32, 0, stream>>>(iterations, a0, b, c, 0u, out, cycles);
      break;
    case FmaLatencyOperand::shared_dependent:
      fma_latency_kernel<FmaLatencyOperand::shared_dependent>
          <<<1, 32, 0, stream>>>(iterations, a0, b, c, 0u, out, cycles);
      break;
  }
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
