#include "kernels/dense/row_swaps.cuh"

#include "core/cuda/check.hpp"
#include "core/cuda/device.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 65535;

struct SwapList {
  int count;
  int target[kMaxSwapsPerLaunch];
};

template <class T>
__device__ __forceinline__ T& at(T* a, std::int64_t ld, bool row_major, std::int64_t r, std::int64_t c) {
  return row_major ? a[r * ld + c] : a[r + c * ld];
}

// Where swap k sends row first_row + k: a host list of absolute rows passed by value, or getrf's
// 1-based pivots relative to first_row read from the device.
struct ListTarget {
  SwapList list;
  __device__ std::int64_t operator()(std::int64_t k) const { return list.target[k]; }
};
struct PivotTarget {
  const std::int64_t* ipiv;
  std::int64_t first_row;
  __device__ std::int64_t operator()(std::int64_t k) const { return first_row + ipiv[k] - 1; }
};

// A thread per column applies the swaps in order.
template <class T, class Target>
__global__ void apply_row_swaps_kernel(T* a, std::int64_t ld, bool row_major, std::int64_t cols,
                                       std::int64_t skip_begin, std::int64_t skip_end, std::int64_t first_row,
                                       std::int64_t count, Target target) {
  for (std::int64_t c = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; c < cols;
       c += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    if (c >= skip_begin && c < skip_end) continue;
    for (std::int64_t k = 0; k < count; ++k) {
      const std::int64_t r = first_row + k, p = target(k);
      if (p == r) continue;
      T& x = at(a, ld, row_major, r, c);
      T& y = at(a, ld, row_major, p, c);
      const T t = x;
      x = y;
      y = t;
    }
  }
}

// Column-major, pivots on the device: a thread per column walks the swaps one after another, each
// a dependent pair of scattered loads (a warp's 32 columns are ld apart), so a 512-swap panel over
// 16K columns costs hundreds of µs on the update chain. This kernel turns the swap sequence into
// the permutation it amounts to once per block, in shared memory, then moves each column's touched
// rows with all threads at once (the panel's rows are contiguous in a column: coalesced).
//   Slots: s < count is row first + s; s = count + k is row first + tgt[k] for the first k with
//   that target outside the panel's rows (later duplicates share the slot). src[s] = the row whose
//   original value ends up in slot s, found by replaying the swaps on slot indices (one thread).
constexpr int kPermuteMaxCount = 512;
constexpr int kPermuteThreads = 256;

std::size_t permute_shared_bytes(int count, std::size_t element_bytes) {
  return static_cast<std::size_t>(2 * count) * element_bytes + static_cast<std::size_t>(count) * 2 * sizeof(int) +
         static_cast<std::size_t>(2 * count) * sizeof(int);
}

template <class T>
__global__ void __launch_bounds__(kPermuteThreads) permute_rows_col_major_kernel(
    T* a, std::int64_t ld, std::int64_t cols, std::int64_t skip_begin, std::int64_t skip_end, std::int64_t first_row,
    const std::int64_t* ipiv, int count) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* vals = reinterpret_cast<T*>(shared_raw);                  // 2·count
  int* tgt = reinterpret_cast<int*>(vals + 2 * count);          // count: target row − first_row
  int* slot_of = tgt + count;                                   // count: the slot of tgt[k]
  int* src = slot_of + count;                                   // 2·count: source row − first_row, or −1
  const int slots = 2 * count;
  for (int k = threadIdx.x; k < count; k += blockDim.x) tgt[k] = static_cast<int>(ipiv[k] - 1);
  __syncthreads();
  for (int k = threadIdx.x; k < count; k += blockDim.x) {
    const int t = tgt[k];
    int slot = t < 0 ? k : t;  // a negative target (not a getrf pivot) swaps nothing
    if (t >= count) {
      int firstk = k;
      for (int q = 0; q < k; ++q)
        if (tgt[q] == t) {
          firstk = q;
          break;
        }
      slot = count + firstk;
    }
    slot_of[k] = slot;
  }
  for (int s = threadIdx.x; s < slots; s += blockDim.x) src[s] = s < count ? s : -1;
  __syncthreads();
  for (int k = threadIdx.x; k < count; k += blockDim.x)
    if (slot_of[k] == count + k) src[count + k] = tgt[k];  // first occurrence: the slot's own row
  __syncthreads();
  if (threadIdx.x == 0)
    for (int k = 0; k < count; ++k) {
      const int s = slot_of[k];
      if (s == k) continue;
      const int x = src[k];
      src[k] = src[s];
      src[s] = x;
    }
  __syncthreads();
  for (std::int64_t c = blockIdx.x; c < cols; c += gridDim.x) {
    if (c >= skip_begin && c < skip_end) continue;  // uniform across the block: the barriers stay matched
    T* col = a + first_row + c * ld;
    for (int s = threadIdx.x; s < slots; s += blockDim.x) {
      const int from = src[s];
      if (from >= 0) vals[s] = col[from];
    }
    __syncthreads();
    for (int s = threadIdx.x; s < slots; s += blockDim.x) {
      const int from = src[s];
      const int row = s < count ? s : tgt[s - count];
      if (from >= 0 && from != row) col[row] = vals[s];
    }
    __syncthreads();
  }
}

int blocks_for(std::int64_t cols) {
  return static_cast<int>(std::clamp<std::int64_t>((cols + kThreads - 1) / kThreads, 1, kMaxBlocks));
}

template <class T>
void apply(T* a, std::int64_t ld, bool row_major, std::int64_t cols, std::int64_t skip_begin, std::int64_t skip_end,
           std::int64_t first_row, const int* targets, int count, cudaStream_t stream) {
  if (count < 0 || count > kMaxSwapsPerLaunch)
    throw std::invalid_argument("launch_apply_row_swaps: count = " + std::to_string(count) + " is outside 0.." +
                                std::to_string(kMaxSwapsPerLaunch));
  if (count == 0 || cols <= 0) return;
  SwapList list{};
  list.count = count;
  std::copy(targets, targets + count, list.target);
  apply_row_swaps_kernel<<<blocks_for(cols), kThreads, 0, stream>>>(a, ld, row_major, cols, skip_begin, skip_end,
                                                                    first_row, std::int64_t{count}, ListTarget{list});
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void apply_device(T* a, std::int64_t ld, bool row_major, std::int64_t cols, std::int64_t skip_begin,
                  std::int64_t skip_end, std::int64_t first_row, const std::int64_t* ipiv, std::int64_t count,
                  cudaStream_t stream) {
  if (count <= 0 || cols <= 0) return;
  if (!row_major && count <= kPermuteMaxCount) {
    const int sms = current_device_sm_count();
    // A few blocks per SM: each replays the swaps once, then takes every gridDim-th column.
    const int blocks = static_cast<int>(std::clamp<std::int64_t>(cols, 1, std::int64_t{4} * std::max(sms, 1)));
    const int n = static_cast<int>(count);
    permute_rows_col_major_kernel<T><<<blocks, kPermuteThreads, permute_shared_bytes(n, sizeof(T)), stream>>>(
        a, ld, cols, skip_begin, skip_end, first_row, ipiv, n);
    GPUFACT_CHECK_LAUNCH();
    return;
  }
  apply_row_swaps_kernel<<<blocks_for(cols), kThreads, 0, stream>>>(a, ld, row_major, cols, skip_begin, skip_end,
                                                                    first_row, count, PivotTarget{ipiv, first_row});
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace

void launch_apply_row_swaps(float* a, std::int64_t ld, bool row_major, std::int64_t cols, std::int64_t skip_begin,
                            std::int64_t skip_end, std::int64_t first_row, const int* targets, int count,
                            cudaStream_t stream) {
  apply(a, ld, row_major, cols, skip_begin, skip_end, first_row, targets, count, stream);
}
void launch_apply_row_swaps(double* a, std::int64_t ld, bool row_major, std::int64_t cols, std::int64_t skip_begin,
                            std::int64_t skip_end, std::int64_t first_row, const int* targets, int count,
                            cudaStream_t stream) {
  apply(a, ld, row_major, cols, skip_begin, skip_end, first_row, targets, count, stream);
}
void launch_apply_row_swaps_device(float* a, std::int64_t ld, bool row_major, std::int64_t cols,
                                   std::int64_t skip_begin, std::int64_t skip_end, std::int64_t first_row,
                                   const std::int64_t* ipiv, std::int64_t count, cudaStream_t stream) {
  apply_device(a, ld, row_major, cols, skip_begin, skip_end, first_row, ipiv, count, stream);
}
void launch_apply_row_swaps_device(double* a, std::int64_t ld, bool row_major, std::int64_t cols,
                                   std::int64_t skip_begin, std::int64_t skip_end, std::int64_t first_row,
                                   const std::int64_t* ipiv, std::int64_t count, cudaStream_t stream) {
  apply_device(a, ld, row_major, cols, skip_begin, skip_end, first_row, ipiv, count, stream);
}

}  // namespace gpufact::kernels
