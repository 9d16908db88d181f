// FP32 FMA probes: throughput of independent chains (volkov08 §3.4), the same with the b operand
// read from shared memory (§3.5), and the latency of one dependent chain (§3.3, end).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gpufact::kernels {

// FMAs per chain per loop iteration at `ilp` chains: 512 / ilp, so every ILP runs ~512 FMAs per
// thread per iteration (ilp × (512 / ilp) in all).
int fma_steps_per_iteration(int ilp);
// Where chain `chain` of global thread `thread` starts (host copy of what the kernels use).
float fma_chain_start(unsigned thread, int chain);

// Floats in the shared-memory operand table of launch_fma_chains_shared: lane l at stride s
// reads table[l·s + j] for j < 512, and 31·64 + 512 words cover every stride up to 64.
inline constexpr int kFmaSharedTableWords = 31 * 64 + 512;
inline constexpr int kFmaSharedMaxStride = 64;

enum class FmaOperand { registers, shared };

// A grid that puts exactly `warps_per_sm` warps on every SM (volkov08 §3.4 counts warps per SM):
// one block of warps_per_sm warps when that fits in a block (<= 32 warps), otherwise two blocks
// of half as many. Each block asks for enough dynamic shared memory that no more blocks than
// that fit on one SM, so the block scheduler cannot stack them; the kernels record their SM.
struct ResidentGrid {
  int sm_count = 0;
  int blocks_per_sm = 0;
  int threads_per_block = 0;
  std::size_t shared_bytes = 0;  // dynamic shared memory per block
  int blocks() const { return sm_count * blocks_per_sm; }
  int threads() const { return blocks() * threads_per_block; }
};

// For the kernel of `operand` and `ilp` on the current device. Throws std::invalid_argument when
// warps_per_sm cannot be placed exactly: below 1, odd above 32, above the SM's thread limit, ilp
// outside 1..8, or the occupancy API disagreeing with the plan.
ResidentGrid plan_fma_grid(FmaOperand operand, int ilp, int warps_per_sm);

// Every thread runs `ilp` independent chains a_i ← a_i·b + c, fma_steps_per_iteration(ilp) steps
// per iteration, starting at fma_chain_start(thread, i), and writes a_0 + a_1 + … (in that
// order) to out[thread]. smid[block] receives the SM the block ran on.
void launch_fma_chains(const ResidentGrid& grid, int ilp, int iterations, float b, float c, float* out, unsigned* smid,
                       cudaStream_t stream);

// Same with b read from shared memory for every FMA: step k of chain i in a thread of lane l
// reads table[l·stride + k·ilp + i], the table (kFmaSharedTableWords floats) copied in first.
// Consecutive lanes are stride words apart: the bank conflicts of volkov08 §3.5.
void launch_fma_chains_shared(const ResidentGrid& grid, int ilp, int iterations, const float* table, int stride,
                              float c, float* out, unsigned* smid, cudaStream_t stream);

// Dependent-chain latency: one thread runs a ← a·b + c for iterations × kFmaLatencyUnroll steps,
// twice (the first pass loads the loop into the instruction cache), and writes the final a to
// *out and the second pass's clock64 cycles to *cycles (so the chain is 2 × that many FMAs).
//   registers:        b in a register
//   shared:           b loaded from shared memory at a fixed address each step (the load does
//                     not depend on the chain and may be issued ahead)
//   shared_dependent: b loaded from shared memory at an address computed from the previous a
//                     (index = bits(a) & mask, mask = 0 at run time), so each step waits for
//                     the address arithmetic, the load and the FMA
// Every shared word holds b, so all three compute the same a.
enum class FmaLatencyOperand { registers, shared, shared_dependent };
inline constexpr int kFmaLatencyUnroll = 256;
void launch_fma_latency(FmaLatencyOperand operand, int iterations, float a0, float b, float c, float* out,
                        long long* cycles, cudaStream_t stream);

}  // namespace gpufact::kernels
