// Shared-memory bank conflicts (volkov08 §3.5): one block of warps reading shared memory with a
// stride between consecutive lanes, timed with clock64 on its SM.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

// Words in the table: lane l at stride s reads table[l·s + k] for k < kSharedBankReadsPerIteration,
// and 31·64 + 256 words cover every stride up to 64.
inline constexpr int kSharedBankReadsPerIteration = 256;
inline constexpr int kSharedBankMaxStride = 64;
inline constexpr int kSharedBankTableWords = 31 * kSharedBankMaxStride + kSharedBankReadsPerIteration;

// One block of `warps` warps (1..32) on one SM copies `table` (kSharedBankTableWords words) into
// shared memory, then every thread of lane l reads table[l·stride + k] for k < 256, `iterations`
// times (independent 4-byte loads, so the SM's shared-memory pipe, not latency, sets the pace),
// summing them modulo 2^32 into sums[thread]. *cycles gets the clock64 cycles of the read loop,
// measured between two barriers of the whole block. stride: 0..64 (0: every lane reads one word).
void launch_shared_bank_reads(const std::uint32_t* table, int stride, int warps, int iterations, std::uint32_t* sums,
                              long long* cycles, cudaStream_t stream);

}  // namespace gpufact::kernels
