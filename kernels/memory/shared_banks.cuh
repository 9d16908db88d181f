// Shared-memory bank conflicts (volkov08 §3.5): one block of warps reading shared memory with a
// stride between consecutive lanes, timed with clock64 on its SM.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

// Loads are `width` bytes (4, 8 or 16: LDS.32, .64, .128), w = width / 4 words. Lane l at stride s
// reads the w words from table[(l·s + k)·w] for k < kSharedBankReadsPerIteration, so the stride
// counts loads, not words; 31·64·4 + 256·4 words cover every stride up to 64 at 16 bytes.
inline constexpr int kSharedBankReadsPerIteration = 256;
inline constexpr int kSharedBankMaxStride = 64;
inline constexpr int kSharedBankMaxWidthWords = 4;
inline constexpr int kSharedBankTableWords =
    (31 * kSharedBankMaxStride + kSharedBankReadsPerIteration) * kSharedBankMaxWidthWords;

// One block of `warps` warps (1..32) on one SM copies `table` (kSharedBankTableWords words) into
// shared memory, then every thread of lane l makes the 256 loads above, `iterations` times
// (independent loads, so the SM's shared-memory pipe, not latency, sets the pace), summing every
// word it reads modulo 2^32 into sums[thread]. *cycles gets the clock64 cycles of the read loop,
// measured between two barriers of the whole block. stride: 0..64 (0: every lane reads the same
// address, a broadcast); width: 4, 8 or 16.
void launch_shared_bank_reads(const std::uint32_t* table, int stride, int width, int warps, int iterations,
                              std::uint32_t* sums, long long* cycles, cudaStream_t stream);

// The host replay: what a thread of lane `lane` adds up in one iteration (modulo 2^32).
inline std::uint32_t shared_bank_iteration_sum(const std::uint32_t* table, int lane, int stride, int width) {
  const int words = width / 4;
  std::uint32_t sum = 0;
  for (int k = 0; k < kSharedBankReadsPerIteration; ++k)
    for (int w = 0; w < words; ++w) sum += table[(lane * stride + k) * words + w];
  return sum;
}

}  // namespace gpufact::kernels
