// Host replays of the FMA probes in kernels/compute/fma_chains.cuh (same float operations in the
// same order, so results compare exactly) and the FP32 peak they are measured against.
#pragma once

#include "core/system/inventory.hpp"

#include <vector>

namespace gpufact::microbench {

// FP32 FMA lanes per SM for a compute capability (128 on sm_86/89/90/100/120, 64 on sm_70/80);
// 0 when unknown.
int fp32_lanes_per_sm(int cc_major, int cc_minor);
// SM count × lanes × 2 flops × clock, in GFLOP/s (volkov08 §3.4's peak at the measured clock).
double fp32_peak_gflops(int sm_count, int lanes_per_sm, double sm_clock_mhz);
// The same for `gpu` at a measured SM clock; 0 when its lanes per SM are unknown or the clock is not
// positive (no peak to compare with).
double fp32_peak_gflops(const GpuSummary& gpu, double sm_clock_mhz);

// What launch_fma_chains writes for `thread`: ilp chains of steps_per_chain FMAs, summed in order.
float fma_chains_expected(unsigned thread, int ilp, long steps_per_chain, float b, float c);
// What launch_fma_chains_shared writes for `thread` after `iterations` iterations.
float fma_chains_shared_expected(unsigned thread, int ilp, int iterations, const std::vector<float>& table, int stride,
                                 float c);
// a after `steps` steps of a ← a·b + c (launch_fma_latency runs 2 × iterations × unroll steps).
float fma_chain_expected(float a0, float b, float c, long steps);

}  // namespace gpufact::microbench
