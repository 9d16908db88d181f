#include "microbench/barrier/barrier_kernels.cuh"

#include "core/cuda/check.hpp"

#include <cooperative_groups.h>
#include <cuda/atomic>

namespace gpufact::kernels {
namespace {

using DeviceFlag = cuda::atomic_ref<unsigned int, cuda::thread_scope_device>;

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__device__ __forceinline__ void flag_timeout(unsigned int* timed_out) {
  cuda::atomic_ref<unsigned int, cuda::thread_scope_system>(*timed_out).store(1u, cuda::memory_order_relaxed);
}

__device__ __forceinline__ bool timed_out_elsewhere(unsigned int* timed_out) {
  return cuda::atomic_ref<unsigned int, cuda::thread_scope_system>(*timed_out).load(cuda::memory_order_relaxed) != 0;
}

// Spins until *flag == value, then acquires: what the flag's writer released before storing it
// is visible to this thread and, through the __syncthreads that follows, to its block. Gives up
// (false, *timed_out set) after timeout_ns, or soon after another block gave up.
__device__ bool wait_for_flag(unsigned int* flag, unsigned int value, unsigned int* timed_out,
                              unsigned long long timeout_ns) {
  DeviceFlag f(*flag);
  if (f.load(cuda::memory_order_relaxed) != value) {
    const unsigned long long t0 = global_timer_ns();
    unsigned int spins = 0;
    while (f.load(cuda::memory_order_relaxed) != value) {
      if (global_timer_ns() - t0 > timeout_ns) {
        flag_timeout(timed_out);
        return false;
      }
      if ((++spins & 1023u) == 0 && timed_out_elsewhere(timed_out)) return false;
    }
  }
  // Relaxed loads in the spin keep each poll one L2 round trip; one fence after it is the
  // acquire (fence.acq_rel.gpu), as cooperative groups' own grid barrier does.
  cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
  return true;
}

// Release store: the fence orders every write of this block made before the preceding
// __syncthreads (by any of its threads: bar.sync puts them before this thread's fence in
// causality order) before the flag, at GPU scope.
__device__ __forceinline__ void release_flag(unsigned int* flag, unsigned int value) {
  DeviceFlag(*flag).store(value, cuda::memory_order_release);
}

// volkov08 §3.6. Block i > 0 writes only arrival[i] and reads only wakeup[i]; block 0 (the
// master) reads every arrival flag and writes every wakeup flag, thread t handling flags t + 1,
// t + 1 + blockDim, ..., so one warp-wide access covers 32 flags. No read-modify-write atomics:
// each flag has one writer, and the flag accesses are plain loads and stores (ld.relaxed,
// st.release). The paper relied on word-sized uncached accesses being atomic and noted that,
// without a memory model, the barrier does not order earlier accesses. The PTX memory model
// orders them only with a release on each flag store and an acquire after each spin; without
// those a block could pass the barrier and still read another block's stale data (from its own
// L1, or writes still in flight). Returns false, for the whole block, when a wait timed out.
__device__ bool flags_barrier(const GridBarrierState& st, unsigned int value, unsigned long long timeout_ns) {
  const unsigned int n = gridDim.x;
  bool ok = true;
  __syncthreads();  // the block's writes of this round come before its arrival
  if (blockIdx.x == 0) {
    for (unsigned int i = threadIdx.x + 1; ok && i < n; i += blockDim.x)
      ok = wait_for_flag(&st.arrival[i], value, st.timed_out, timeout_ns);
    if (__syncthreads_or(!ok)) return false;  // every arrival has been seen by some master thread
    for (unsigned int i = threadIdx.x + 1; i < n; i += blockDim.x) release_flag(&st.wakeup[i], value);
  } else if (threadIdx.x == 0) {
    release_flag(&st.arrival[blockIdx.x], value);
    ok = wait_for_flag(&st.wakeup[blockIdx.x], value, st.timed_out, timeout_ns);
  }
  return !__syncthreads_or(!ok);
}

// Sense-reversing counter barrier: each block's thread 0 adds 1 to `arrived` (acq_rel, so the
// last arriver acquires every earlier arriver's release); the last one resets the counter and
// releases `generation` = value, for which the others spin. The reset is ordered before the
// release, so no block can arrive at the next round before it.
__device__ bool atomic_barrier(const GridBarrierState& st, unsigned int value, unsigned long long timeout_ns) {
  bool ok = true;
  __syncthreads();
  if (threadIdx.x == 0) {
    DeviceFlag arrived(*st.arrived);
    if (arrived.fetch_add(1u, cuda::memory_order_acq_rel) == gridDim.x - 1) {
      arrived.store(0u, cuda::memory_order_relaxed);
      release_flag(st.generation, value);
    } else {
      ok = wait_for_flag(st.generation, value, st.timed_out, timeout_ns);
    }
  }
  return !__syncthreads_or(!ok);
}

// The block whose slot block b reads after round r: never b itself when there are 2+ blocks,
// and a different partner each round.
__device__ __forceinline__ unsigned int partner_of(unsigned int b, int round, unsigned int n) {
  return n > 1 ? (b + 1 + static_cast<unsigned int>(round) % (n - 1)) % n : b;
}

__device__ __forceinline__ bool is_writer() { return threadIdx.x == blockDim.x - 1; }
__device__ __forceinline__ bool is_checker() { return threadIdx.x == blockDim.x / 2; }

template <GridBarrierKind Kind>
__global__ void grid_barrier_rounds_kernel(GridBarrierState st, unsigned int first_value, int rounds,
                                           unsigned long long timeout_ns) {
  const unsigned int n = gridDim.x, b = blockIdx.x;
  unsigned long long checks = 0, violations = 0;
  for (int r = 0; r < rounds; ++r) {
    const unsigned int value = first_value + static_cast<unsigned int>(r);
    unsigned int* slots = st.slots + (r & 1) * n;
    if (is_writer()) slots[b] = value;
    bool passed = true;
    if constexpr (Kind == GridBarrierKind::flags) {
      passed = flags_barrier(st, value, timeout_ns);
    } else if constexpr (Kind == GridBarrierKind::atomic) {
      passed = atomic_barrier(st, value, timeout_ns);
    } else {
      cooperative_groups::this_grid().sync();
    }
    if (!passed) break;  // block-uniform: every thread got the same answer
    if (is_checker()) {
      ++checks;
      violations += slots[partner_of(b, r, n)] != value;
    }
  }
  if (is_checker()) {
    atomicAdd(st.checks, checks);
    if (violations) atomicAdd(st.violations, violations);
  }
}

__global__ void relaunch_round_kernel(GridBarrierState st, int round) {
  const unsigned int n = gridDim.x, b = blockIdx.x;
  const unsigned int value = *st.epoch + static_cast<unsigned int>(round) + 1;
  if (round > 0 && is_checker()) {
    const unsigned int* previous = st.slots + ((round - 1) & 1) * n;
    atomicAdd(st.checks, 1ull);
    if (previous[partner_of(b, round - 1, n)] != value - 1) atomicAdd(st.violations, 1ull);
  }
  if (is_writer()) st.slots[(round & 1) * n + b] = value;
}

__global__ void relaunch_finish_kernel(GridBarrierState st, unsigned int n, int rounds) {
  const unsigned int last = *st.epoch + static_cast<unsigned int>(rounds);
  const unsigned int* slots = st.slots + ((rounds - 1) & 1) * n;
  unsigned long long violations = 0;
  for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) violations += slots[i] != last;
  if (violations) atomicAdd(st.violations, violations);
  __syncthreads();  // every read of *st.epoch above comes before the update
  if (threadIdx.x == 0) {
    atomicAdd(st.checks, static_cast<unsigned long long>(n));
    *st.epoch += static_cast<unsigned int>(rounds);
  }
}

template <GridBarrierKind Kind>
void launch_rounds(const GridBarrierState& st, int blocks, int threads, unsigned int first_value, int rounds,
                   unsigned long long timeout_ns, cudaStream_t stream) {
  GridBarrierState state = st;
  void* args[] = {&state, &first_value, &rounds, &timeout_ns};
  const cudaError_t e =
      cudaLaunchCooperativeKernel(reinterpret_cast<const void*>(&grid_barrier_rounds_kernel<Kind>),
                                  dim3(static_cast<unsigned>(blocks)), dim3(static_cast<unsigned>(threads)), args, 0, stream);
  if (e != cudaSuccess) {
    // A refused launch (cudaErrorCooperativeLaunchTooLarge: more blocks than can be co-resident)
    // is not sticky; clear it so later launch checks do not report it again.
    cudaGetLastError();
    throw_cuda_error(e, "cudaLaunchCooperativeKernel(grid_barrier_rounds_kernel)", __FILE__, __LINE__);
  }
}

template <GridBarrierKind Kind>
int max_blocks_per_sm(int threads) {
  int blocks = 0;
  GPUFACT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, grid_barrier_rounds_kernel<Kind>, threads, 0));
  return blocks;
}

}  // namespace

int grid_barrier_max_blocks_per_sm(GridBarrierKind kind, int threads) {
  switch (kind) {
    case GridBarrierKind::flags: return max_blocks_per_sm<GridBarrierKind::flags>(threads);
    case GridBarrierKind::atomic: return max_blocks_per_sm<GridBarrierKind::atomic>(threads);
    case GridBarrierKind::grid_sync: return max_blocks_per_sm<GridBarrierKind::grid_sync>(threads);
  }
  return 0;
}

void launch_grid_barrier_rounds(GridBarrierKind kind, const GridBarrierState& state, int blocks, int threads,
                                unsigned int first_value, int rounds, unsigned long long timeout_ns,
                                cudaStream_t stream) {
  switch (kind) {
    case GridBarrierKind::flags:
      launch_rounds<GridBarrierKind::flags>(state, blocks, threads, first_value, rounds, timeout_ns, stream);
      break;
    case GridBarrierKind::atomic:
      launch_rounds<GridBarrierKind::atomic>(state, blocks, threads, first_value, rounds, timeout_ns, stream);
      break;
    case GridBarrierKind::grid_sync:
      launch_rounds<GridBarrierKind::grid_sync>(state, blocks, threads, first_value, rounds, timeout_ns, stream);
      break;
  }
  GPUFACT_CHECK_LAUNCH();
}

void launch_relaunch_round(const GridBarrierState& state, int blocks, int threads, int round, cudaStream_t stream) {
  relaunch_round_kernel<<<blocks, threads, 0, stream>>>(state, round);
  GPUFACT_CHECK_LAUNCH();
}

void launch_relaunch_finish(const GridBarrierState& state, int blocks, int rounds, cudaStream_t stream) {
  relaunch_finish_kernel<<<1, 256, 0, stream>>>(state, static_cast<unsigned int>(blocks), rounds);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
