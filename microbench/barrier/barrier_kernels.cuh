// Probe kernels of volkov08.barrier (volkov08 §3.6): R rounds of "write my slot, global
// barrier, read another block's slot" inside one kernel, with three barriers, and the same
// rounds with a kernel boundary as the barrier. Every round each block's last thread writes the
// round's value into the block's slot; after the barrier the block's middle thread reads the
// slot of block (b + 1 + r mod (n − 1)) mod n and counts a violation unless it holds the value
// of this round. Slots alternate between two halves by round parity, so a block that is already
// one round ahead never overwrites a slot that is still being read.
#pragma once

#include <cuda_runtime_api.h>

namespace gpufact::kernels {

enum class GridBarrierKind {
  flags,      // volkov08 §3.6: per-block arrival and wakeup flags, block 0 the master, no atomics
  atomic,     // one arrival counter (atomic add) and a generation flag, sense reversing
  grid_sync,  // cooperative groups grid.sync()
};

// Device memory the rounds use; every pointer but timed_out is device memory, zeroed once.
struct GridBarrierState {
  unsigned int* arrival = nullptr;     // [blocks] flags: the round block b arrived at
  unsigned int* wakeup = nullptr;      // [blocks] flags: the round block b may leave
  unsigned int* arrived = nullptr;     // [1] atomic: blocks arrived in the current round
  unsigned int* generation = nullptr;  // [1] atomic: the round released last
  unsigned int* slots = nullptr;       // [2 × blocks] verification slots, by round parity
  unsigned int* epoch = nullptr;       // [1] relaunch: round values start after it
  unsigned long long* checks = nullptr;      // [1] slot reads made
  unsigned long long* violations = nullptr;  // [1] slot reads that missed the round's write
  // [1] set to 1 when a spin outlasts its timeout; pinned host memory, so the host can see it
  // while later launches are still queued.
  unsigned int* timed_out = nullptr;
};

// Blocks of `threads` threads of `kind`'s kernel that fit on one SM at once (occupancy API).
int grid_barrier_max_blocks_per_sm(GridBarrierKind kind, int threads);

// One kernel of `rounds` rounds on `blocks` blocks, launched cooperatively (the launch fails
// rather than starting more blocks than can be co-resident). Round r uses the value
// first_value + r; values must never repeat on the same state (pass the previous launch's
// first_value + rounds). A spin that waits longer than `timeout_ns` sets *timed_out and its
// block leaves the kernel (grid_sync has no timeout: the cooperative launch guarantees it).
void launch_grid_barrier_rounds(GridBarrierKind kind, const GridBarrierState& state, int blocks, int threads,
                                unsigned int first_value, int rounds, unsigned long long timeout_ns,
                                cudaStream_t stream);

// Round `round` of a sequence with a kernel boundary as the barrier: checks round − 1's slots
// (round > 0), then writes this round's (value *epoch + round + 1).
void launch_relaunch_round(const GridBarrierState& state, int blocks, int threads, int round, cudaStream_t stream);

// Ends a relaunch sequence of `rounds` rounds over `blocks` blocks: checks the last round's
// slots, then advances *epoch by `rounds` so the next sequence uses new values.
void launch_relaunch_finish(const GridBarrierState& state, int blocks, int rounds, cudaStream_t stream);

}  // namespace gpufact::kernels
