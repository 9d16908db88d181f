// Pointer-chasing latency probes for volkov08 §3.3 (Fig. 1, Fig. 2): one thread runs k = A[k]
// through an array that holds a single cycle, timing itself with clock64. Host code builds the
// cycle (fill or scatter), checks it with the walk kernel, then times it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpufact::kernels {

// How the chase reads: L1-cached global loads (ld.global.ca), L1-bypassing global loads
// (ld.global.cg), or shared memory (the array copied in first; the copy is not timed).
enum class ChaseAccess : int { global_ca, global_cg, shared };
// Element width: 32-bit or 64-bit indices (each element holds the index of the next), or
// `address`: 64-bit indices while the cycle is built and checked, rewritten as absolute addresses
// for the timed chase (p = *p: no index-to-address arithmetic in the dependent chain, as latency
// studies such as gpu-benches measure; the paper's k = A[k] adds that arithmetic to every access).
// Global accesses only.
enum class ChaseWidth : int { u32, u64, address };

inline std::size_t chase_element_bytes(ChaseWidth w) { return w == ChaseWidth::u32 ? 4 : 8; }

struct ChaseSample {
  unsigned long long cycles;      // clock64 cycles of the timed walk
  unsigned long long last_index;  // where the timed walk ended: keeps the chain live, checked by the host
  unsigned int smid;              // SM the block ran on (%smid)
  unsigned int reserved;
};

struct ChaseLaunch {
  ChaseAccess access = ChaseAccess::global_ca;
  ChaseWidth width = ChaseWidth::u32;
  const void* array = nullptr;        // block b chases the array at element b * region_elements
  std::size_t elements = 0;           // elements per array
  std::size_t region_elements = 0;    // distance between the blocks' arrays (0 with one block)
  unsigned long long start = 0;       // first index
  long long warm_steps = 0;           // untimed steps before timing (fills caches and TLBs)
  long long timed_steps = 0;          // timed steps; rounded up to a multiple of chase_unroll
  int blocks = 1;                     // one thread chases per block
  bool one_block_per_sm = false;      // reserve more than half an SM's shared memory per block
  int carveout_percent = -1;          // cudaFuncAttributePreferredSharedMemoryCarveout; -1: default
};

inline constexpr int chase_unroll = 16;
inline constexpr int chase_trace_max = 4096;

// Dynamic shared memory launch_chase would request per block; 0 when it needs none.
std::size_t chase_shared_bytes(const ChaseLaunch& p);
// Largest dynamic shared memory one block may opt in to on the current device.
std::size_t chase_shared_limit();

// out[b] for each block b.
void launch_chase(const ChaseLaunch& p, ChaseSample* out, cudaStream_t stream);

// One block, one thread: after p.warm_steps untimed steps, records the latency (clock64 before
// and after each dependent load) and the index loaded for the next `trace_len` (<=
// chase_trace_max) steps in shared memory, then writes them out. p.timed_steps is ignored.
void launch_chase_trace(const ChaseLaunch& p, int trace_len, std::uint32_t* latency_out,
                        unsigned long long* index_out, ChaseSample* out, cudaStream_t stream);

// Two SMs (an L2 split into partitions, each line homed in one): the block on SM `warm_sm` walks
// p.warm_steps steps from p.start with L1-bypassing loads, so the L2 holds the lines as that SM
// left them; then the block on SM `trace_sm`, which has never touched them, traces `trace_len`
// (<= chase_trace_max) steps from where the walk ended, as launch_chase_trace. One block per SM
// on every SM, launched cooperatively (all co-resident, so the tracer can wait for the walker);
// only the two named blocks work. out[0] describes the trace (reserved = 1: the walker's flag
// never came within 2 s, the trace is empty), out[1] the walk. Global u32/u64 arrays only.
void launch_chase_trace_two_sms(const ChaseLaunch& p, int warm_sm, int trace_sm, int trace_len,
                                std::uint32_t* latency_out, unsigned long long* index_out, ChaseSample* out,
                                unsigned int* flag, cudaStream_t stream);

// Verification walk, one thread, plain loads: `steps` steps from `start`, bounds-checked.
struct ChaseWalk {
  unsigned long long first_return;  // step at which the walk first came back to start; 0: never
  unsigned long long index_sum;     // sum of the indices reached at steps 1..steps (or until out of range)
  unsigned long long last_index;
  unsigned long long out_of_range;  // 1 if an index >= elements was met (the walk stopped there)
};
void launch_chase_walk(ChaseWidth w, const void* array, std::size_t elements, unsigned long long start,
                       unsigned long long steps, ChaseWalk* out, cudaStream_t stream);

// A[k] = (k + stride) mod n for every k < n (volkov08 §3.3: "initialized with a stride").
void launch_fill_stride_cycle(ChaseWidth w, void* array, std::size_t n, std::size_t stride, cudaStream_t stream);
// A[j * stride] = successor[j] * stride for j < positions: a cycle built on the host.
void launch_scatter_cycle(ChaseWidth w, void* array, const std::uint32_t* successor, std::size_t positions,
                          std::size_t stride, cudaStream_t stream);
// Adds to *count the number of k < n with A[k] != (k + stride) mod n; *count zeroed first.
void launch_count_stride_cycle_mismatches(ChaseWidth w, const void* array, std::size_t n, std::size_t stride,
                                          unsigned long long* count, cudaStream_t stream);
// Reads one word of every 32-byte sector of [array, array + bytes) with L1-bypassing loads
// from the whole GPU, so that the L2 holds what fits before a chase.
void launch_touch_sectors(const void* array, std::size_t bytes, unsigned int* sink, cudaStream_t stream);

}  // namespace gpufact::kernels
