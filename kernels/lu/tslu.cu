#include "kernels/lu/tslu.cuh"

#include "core/cuda/check.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

constexpr int kRows = kTsluBlockRows;  // also the threads of every CTA: thread t owns stack row t
constexpr int kWarps = kRows / 32;
constexpr int kMaxLevels = 40;
static_assert(kRows % 32 == 0 && kRows >= kTsluMaxWidth, "a CTA must hold at least one full candidate set");

// Sizes of the tournament's levels and where each level's sets and arrival counters start.
struct TsluLayout {
  int levels = 0;
  std::int64_t sets[kMaxLevels] = {};            // sets of level L
  std::int64_t set_offset[kMaxLevels] = {};      // first set of level L in the candidate buffer
  std::int64_t counter_offset[kMaxLevels] = {};  // first counter of level L (L >= 1)
  std::int64_t total_sets = 0, total_counters = 0;
};

TsluLayout tslu_layout(std::int64_t m, std::int64_t b) {
  TsluLayout l;
  const std::int64_t fan = tslu_fan_in(b);
  std::int64_t n = (m + kRows - 1) / kRows;
  for (;;) {
    if (l.levels == kMaxLevels) throw std::logic_error("tslu: too many tree levels");
    l.sets[l.levels] = n;
    l.set_offset[l.levels] = l.total_sets;
    l.counter_offset[l.levels] = l.levels == 0 ? 0 : l.total_counters;
    l.total_sets += n;
    if (l.levels > 0) l.total_counters += n;
    ++l.levels;
    if (n <= 1) break;
    n = (n + fan - 1) / fan;
  }
  return l;
}

constexpr std::size_t align_up(std::size_t x) { return (x + 255) / 256 * 256; }

struct WorkspaceParts {
  std::size_t values = 0, rows = 0, counters = 0, total = 0;  // byte offsets and the total
};

WorkspaceParts workspace_parts(const TsluLayout& l, std::int64_t b, std::size_t element_bytes) {
  WorkspaceParts p;
  p.values = 0;
  p.rows = align_up(static_cast<std::size_t>(l.total_sets * b * b) * element_bytes);
  p.counters = p.rows + align_up(static_cast<std::size_t>(l.total_sets * b) * sizeof(int));
  p.total = p.counters + align_up(static_cast<std::size_t>(std::max<std::int64_t>(l.total_counters, 1)) * sizeof(unsigned));
  return p;
}

// (value, stack position) max with ties to the first position, as LAPACK's i?amax.
template <class T>
__device__ __forceinline__ void better(T& v, int& i, T v2, int i2) {
  if (v2 > v || (v2 == v && i2 < i)) {
    v = v2;
    i = i2;
  }
}

// Shared memory of the tournament kernel (dynamic part): the stack tile (kRows × b, ld kRows),
// the original top rows at the root (b × b, ld b), then the stack's row indices.
template <class T>
struct TournamentShared {
  T* tile;
  T* top;
  int* row;  // kRows: panel row of each stack row, −1 for none (padding never wins)
};

template <class T>
std::size_t tournament_shared_bytes(std::int64_t b) {
  return static_cast<std::size_t>(kRows * b + b * b) * sizeof(T) + kRows * sizeof(int);
}

// getf2 with partial pivoting on the stack in shared memory, pivot rows found but not moved: thread
// t owns stack row t, so after the pivot search (warp shuffles, then the kWarps partial results
// after the one __syncthreads of the step) each thread updates only its own row, reading the pivot
// row, which its owner finished in the previous step. Multipliers are stored in place, so each
// pivot row ends as its row of [L\U] of the rows taken in pivot order. winners[k] = stack position
// of the k-th pivot. Returns the pivots found: b, or fewer when fewer real rows exist.
// Called by all kRows threads; every exit is uniform.
template <class T>
__device__ int select_pivots(T* tile, const int* row, int b, int* winners, T (*slot_v)[kWarps],
                             int (*slot_i)[kWarps]) {
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  bool open = row[t] >= 0;  // a real row not yet chosen
  for (int j = 0; j < b; ++j) {
    T v = open ? fabs(tile[t + j * kRows]) : T(-1);
    int i = t;
    for (int off = 16; off > 0; off >>= 1) {
      const T v2 = __shfl_xor_sync(0xffffffffu, v, off);
      const int i2 = __shfl_xor_sync(0xffffffffu, i, off);
      better(v, i, v2, i2);
    }
    // Double-buffered slots: a thread still reading step j's while another writes step j + 1's.
    if (lane == 0) {
      slot_v[j & 1][warp] = v;
      slot_i[j & 1][warp] = i;
    }
    __syncthreads();
    v = slot_v[j & 1][0];
    i = slot_i[j & 1][0];
    for (int w = 1; w < kWarps; ++w) better(v, i, slot_v[j & 1][w], slot_i[j & 1][w]);
    if (v < T(0)) return j;  // no real row left (same answer in every thread)
    const int p = i;
    if (t == 0) winners[j] = p;
    if (t == p) {
      open = false;
    } else if (open) {
      const T pivot = tile[p + j * kRows];
      const T x = tile[t + j * kRows];
      // LAPACK leaves the column unscaled on an exactly zero pivot (then every open entry is 0).
      const T l = pivot != T(0) ? x / pivot : x;
      tile[t + j * kRows] = l;
      for (int c = j + 1; c < b; ++c) tile[t + c * kRows] = fma(-l, tile[p + c * kRows], tile[t + c * kRows]);
    }
  }
  return b;
}

template <class T>
__global__ void __launch_bounds__(kRows) tslu_tournament_kernel(const TsluLayout layout, T* __restrict__ a,
                                                                std::int64_t lda, int m, int b, int fan,
                                                                std::int64_t* __restrict__ ipiv, int* __restrict__ info,
                                                                T* __restrict__ cand_values, int* __restrict__ cand_rows,
                                                                unsigned* __restrict__ counters) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  TournamentShared<T> sh;
  sh.tile = reinterpret_cast<T*>(shared_raw);
  sh.top = sh.tile + kRows * b;
  sh.row = reinterpret_cast<int*>(sh.top + b * b);
  __shared__ T slot_v[2][kWarps];
  __shared__ int slot_i[2][kWarps];
  __shared__ int winners[kTsluMaxWidth];
  __shared__ int list_row[2 * kTsluMaxWidth], list_pos[2 * kTsluMaxWidth];
  __shared__ int is_last, list_count;
  const int t = threadIdx.x;
  const std::int64_t bb = static_cast<std::int64_t>(b) * b;

  // Leaf round: rows [r0, r0 + rows) of the panel.
  std::int64_t q = blockIdx.x;
  const int r0 = static_cast<int>(q) * kRows;
  const int rows = min(kRows, m - r0);
  sh.row[t] = t < rows ? r0 + t : -1;
  for (int c = 0; c < b; ++c) sh.tile[t + c * kRows] = t < rows ? a[(r0 + t) + c * lda] : T(0);
  __syncthreads();
  int count = select_pivots(sh.tile, sh.row, b, winners, slot_v, slot_i);
  __syncthreads();

  int level = 0;
  for (;;) {
    if (layout.sets[level] == 1) break;  // this CTA holds the final set
    // Write this set: the winners' panel rows and ORIGINAL values (from the panel at level 0,
    // from the children's sets above), padded to b rows with row −1 and zeros.
    const std::int64_t set = layout.set_offset[level] + q;
    const std::int64_t first_child = level == 0 ? 0 : layout.set_offset[level - 1] + q * fan;
    for (std::int64_t e = t; e < bb; e += kRows) {
      const int k = static_cast<int>(e % b), c = static_cast<int>(e / b);
      T v = T(0);
      if (k < count) {
        const int w = winners[k];
        v = level == 0 ? a[sh.row[w] + c * lda]
                       : __ldcg(cand_values + (first_child + w / b) * bb + (w % b) + static_cast<std::int64_t>(c) * b);
      }
      cand_values[set * bb + e] = v;
    }
    if (t < b) cand_rows[set * b + t] = t < count ? sh.row[winners[t]] : -1;
    // Arrive at the parent; the last of its children runs it (threadFenceReduction's pattern).
    __threadfence();
    __syncthreads();
    const std::int64_t parent = q / fan;
    const int children = static_cast<int>(min(static_cast<std::int64_t>(fan), layout.sets[level] - parent * fan));
    if (t == 0) {
      unsigned* counter = counters + layout.counter_offset[level + 1] + parent;
      const unsigned arrived = atomicAdd(counter, 1u);
      is_last = arrived + 1 == static_cast<unsigned>(children);
      if (is_last) __threadfence();
    }
    __syncthreads();
    if (!is_last) return;
    // Stack the children's sets (stack row g·b + k = row k of child g) and select again.
    const std::int64_t child0 = layout.set_offset[level] + parent * fan;
    const int stacked = children * b;
    sh.row[t] = t < stacked ? __ldcg(cand_rows + child0 * b + t) : -1;
    for (int c = 0; c < b; ++c) {
      T v = T(0);
      if (t < stacked) v = __ldcg(cand_values + (child0 + t / b) * bb + (t % b) + static_cast<std::int64_t>(c) * b);
      sh.tile[t + c * kRows] = v;
    }
    __syncthreads();
    count = select_pivots(sh.tile, sh.row, b, winners, slot_v, slot_i);
    __syncthreads();
    ++level;
    q = parent;
  }

  // Root. ipiv from the pivot rows by replaying the interchanges on a list of the rows away from
  // home (at most 2 added per step): position k takes pivot row p_k from where it is now (>= k),
  // and the row at k goes there. One warp; lookups by ballot.
  if (t < 32) {
    int listed = 0;
    for (int k = 0; k < count; ++k) {
      const int p = sh.row[winners[k]];
      int found = -1, holder = -1;  // the entry of row p; the entry whose position is k
      for (int e0 = 0; e0 < listed; e0 += 32) {
        const int e = e0 + t;
        const unsigned hit_row = __ballot_sync(0xffffffffu, e < listed && list_row[e] == p);
        const unsigned hit_pos = __ballot_sync(0xffffffffu, e < listed && list_pos[e] == k);
        if (hit_row != 0u && found < 0) found = e0 + __ffs(static_cast<int>(hit_row)) - 1;
        if (hit_pos != 0u && holder < 0) holder = e0 + __ffs(static_cast<int>(hit_pos)) - 1;
      }
      const int loc = found >= 0 ? list_pos[found] : p;
      const int resident = holder >= 0 ? list_row[holder] : k;
      __syncwarp();
      if (t == 0) {
        ipiv[k] = loc + 1;
        if (loc != k) {
          int n = listed;
          if (found >= 0) {
            list_pos[found] = k;
          } else {
            list_row[n] = p;
            list_pos[n] = k;
            ++n;
          }
          if (holder >= 0) {
            list_pos[holder] = loc;
          } else {
            list_row[n] = resident;
            list_pos[n] = loc;
          }
        }
      }
      if (loc != k) listed += (found < 0 ? 1 : 0) + (holder < 0 ? 1 : 0);
      __syncwarp();
    }
    if (t == 0) list_count = listed;
  }
  // The original top rows: each row that leaves the top goes below with its original values.
  for (std::int64_t e = t; e < static_cast<std::int64_t>(count) * b; e += kRows) {
    const int k = static_cast<int>(e % count), c = static_cast<int>(e / count);
    sh.top[k + c * b] = a[k + c * lda];
  }
  __syncthreads();
  for (int e = t; e < list_count * b; e += kRows) {
    const int entry = e / b, c = e % b;
    const int r = list_row[entry], pos = list_pos[entry];
    if (pos >= count) a[pos + c * lda] = sh.top[r + c * b];  // r < count: only top rows leave the top
  }
  // The top: pivot row k's [L\U] row from the root's getf2 (the top block factored without pivoting).
  for (std::int64_t e = t; e < static_cast<std::int64_t>(count) * b; e += kRows) {
    const int k = static_cast<int>(e % count), c = static_cast<int>(e / count);
    a[k + c * lda] = sh.tile[winners[k] + c * kRows];
  }
  if (t == 0) {
    int first_zero = 0;
    for (int k = 0; k < count && first_zero == 0; ++k)
      if (sh.tile[winners[k] + k * kRows] == T(0)) first_zero = k + 1;
    *info = first_zero;
  }
}

// L21 = A21·U11⁻¹ for rows [top, m): thread t solves its row x·U11 = a by columns, with the same
// operations as getf2 on a non-pivot row (l = a/u_jj, then a −= l·u_j,: by fma), U11 in shared memory.
template <class T>
__global__ void __launch_bounds__(kRows) tslu_lower_solve_kernel(T* __restrict__ a, std::int64_t lda, int m, int b,
                                                                 int top) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* u = reinterpret_cast<T*>(shared_raw);  // b × b, ld b (upper part used)
  T* row = u + b * b;                        // kRows × b, ld kRows: thread t's row in column-major
  const int t = threadIdx.x;
  for (int e = t; e < b * b; e += kRows) {
    const int i = e % b, j = e / b;
    u[e] = i <= j ? a[i + static_cast<std::int64_t>(j) * lda] : T(0);
  }
  __syncthreads();
  const std::int64_t r = top + static_cast<std::int64_t>(blockIdx.x) * kRows + t;
  if (r >= m) return;
  for (int c = 0; c < b; ++c) row[t + c * kRows] = a[r + c * lda];
  for (int j = 0; j < b; ++j) {
    const T d = u[j + j * b], x = row[t + j * kRows];
    const T l = d != T(0) ? x / d : x;
    row[t + j * kRows] = l;
    for (int c = j + 1; c < b; ++c) row[t + c * kRows] = fma(-l, u[j + c * b], row[t + c * kRows]);
  }
  for (int c = 0; c < b; ++c) a[r + c * lda] = row[t + c * kRows];
}

template <class T>
std::size_t lower_solve_shared_bytes(std::int64_t b) {
  return static_cast<std::size_t>(b * b + kRows * b) * sizeof(T);
}

// Both kernels take up to 96 KiB (FP64, b = 64): opt in once per type.
template <class T>
void allow_large_shared() {
  static const bool done = [] {
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(tslu_tournament_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(tournament_shared_bytes<T>(kTsluMaxWidth))));
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(tslu_lower_solve_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(lower_solve_shared_bytes<T>(kTsluMaxWidth))));
    return true;
  }();
  (void)done;
}

template <class T>
void tslu(T* a, std::int64_t lda, std::int64_t m, std::int64_t b, std::int64_t* ipiv, int* info, void* workspace,
          std::size_t workspace_bytes, cudaStream_t stream) {
  if (b < 1 || b > kTsluMaxWidth)
    throw std::invalid_argument("launch_tslu: b = " + std::to_string(b) + " is outside 1.." + std::to_string(kTsluMaxWidth));
  if (m < 0 || m > std::int64_t{0x7fffffff} - kRows)
    throw std::invalid_argument("launch_tslu: m = " + std::to_string(m) + " is outside 0..2^31 - " + std::to_string(kRows + 1));
  if (lda < std::max<std::int64_t>(1, m))
    throw std::invalid_argument("launch_tslu: lda = " + std::to_string(lda) + " < max(1, m)");
  if (m == 0) {
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(info, 0, sizeof(int), stream));
    return;
  }
  const TsluLayout layout = tslu_layout(m, b);
  const WorkspaceParts parts = workspace_parts(layout, b, sizeof(T));
  if (workspace == nullptr || workspace_bytes < parts.total)
    throw std::invalid_argument("launch_tslu: workspace of " + std::to_string(workspace_bytes) + " bytes < the " +
                                std::to_string(parts.total) + " an " + std::to_string(m) + " x " + std::to_string(b) +
                                " panel needs (tslu_workspace_bytes)");
  allow_large_shared<T>();
  auto* base = static_cast<unsigned char*>(workspace);
  const int top = static_cast<int>(std::min(m, b));
  // The arrival counters' place depends on m and the element size (they follow the candidate
  // sets), so a workspace shared by leaves of different heights, or by s and d, may hold a
  // previous launch's candidates where this launch counts: clear them every launch.
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(base + parts.counters, 0, parts.total - parts.counters, stream));
  tslu_tournament_kernel<T><<<static_cast<unsigned>(layout.sets[0]), kRows, tournament_shared_bytes<T>(b), stream>>>(
      layout, a, lda, static_cast<int>(m), static_cast<int>(b), tslu_fan_in(b), ipiv, info,
      reinterpret_cast<T*>(base + parts.values), reinterpret_cast<int*>(base + parts.rows),
      reinterpret_cast<unsigned*>(base + parts.counters));
  GPUFACT_CHECK_LAUNCH();
  if (m > top) {
    const auto blocks = static_cast<unsigned>((m - top + kRows - 1) / kRows);
    tslu_lower_solve_kernel<T><<<blocks, kRows, lower_solve_shared_bytes<T>(b), stream>>>(
        a, lda, static_cast<int>(m), static_cast<int>(b), top);
    GPUFACT_CHECK_LAUNCH();
  }
}

}  // namespace

std::size_t tslu_workspace_bytes(std::int64_t m, std::int64_t b, std::size_t element_bytes) {
  if (m <= 0 || b <= 0) return 256;
  return workspace_parts(tslu_layout(m, b), b, element_bytes).total;
}

void launch_tslu(float* a, std::int64_t lda, std::int64_t m, std::int64_t b, std::int64_t* ipiv, int* info,
                 void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  tslu(a, lda, m, b, ipiv, info, workspace, workspace_bytes, stream);
}
void launch_tslu(double* a, std::int64_t lda, std::int64_t m, std::int64_t b, std::int64_t* ipiv, int* info,
                 void* workspace, std::size_t workspace_bytes, cudaStream_t stream) {
  tslu(a, lda, m, b, ipiv, info, workspace, workspace_bytes, stream);
}

}  // namespace gpufact::kernels
