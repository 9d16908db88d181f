#include "microbench/peak/fma_reference.hpp"

#include "kernels/compute/fma_chains.cuh"

#include <cmath>
#include <cstddef>

namespace gpufact::microbench {

int fp32_lanes_per_sm(int cc_major, int cc_minor) {
  if (cc_major >= 9) return 128;
  if (cc_major == 8) return cc_minor == 0 ? 64 : 128;
  if (cc_major == 7) return 64;
  if (cc_major == 6) return cc_minor == 0 ? 64 : 128;
  if (cc_major == 5) return 128;
  return 0;
}

double fp32_peak_gflops(int sm_count, int lanes_per_sm, double sm_clock_mhz) {
  return static_cast<double>(sm_count) * lanes_per_sm * 2.0 * sm_clock_mhz * 1e-3;
}

double fp32_peak_gflops(const GpuSummary& gpu, double sm_clock_mhz) {
  const int lanes = fp32_lanes_per_sm(gpu.cc_major, gpu.cc_minor);
  return lanes > 0 && sm_clock_mhz > 0 ? fp32_peak_gflops(gpu.sm_count, lanes, sm_clock_mhz) : 0.0;
}

float fma_chains_expected(unsigned thread, int ilp, long steps_per_chain, float b, float c) {
  float sum = 0.0f;
  for (int i = 0; i < ilp; ++i) {
    float a = kernels::fma_chain_start(thread, i);
    for (long k = 0; k < steps_per_chain; ++k) a = std::fma(a, b, c);
    sum += a;
  }
  return sum;
}

float fma_chains_shared_expected(unsigned thread, int ilp, int iterations, const std::vector<float>& table, int stride,
                                 float c) {
  const int steps = kernels::fma_steps_per_iteration(ilp);
  const std::size_t base = static_cast<std::size_t>(thread & 31u) * static_cast<std::size_t>(stride);
  float sum = 0.0f;
  for (int i = 0; i < ilp; ++i) {
    float a = kernels::fma_chain_start(thread, i);
    for (int it = 0; it < iterations; ++it)
      for (int k = 0; k < steps; ++k) a = std::fma(a, table[base + static_cast<std::size_t>(k * ilp + i)], c);
    sum += a;
  }
  return sum;
}

float fma_chain_expected(float a0, float b, float c, long steps) {
  float a = a0;
  for (long k = 0; k < steps; ++k) a = std::fma(a, b, c);
  return a;
}

}  // namespace gpufact::microbench
