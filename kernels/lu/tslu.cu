#include "kernels/lu/tslu.cuh"

#include "core/cuda/check.hpp"

#include <algorithm>
#include <cfloat>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

constexpr int kRows = kTsluBlockRows;  // also the threads of every CTA: thread t owns stack row t
constexpr int kWarps = kRows / 32;
constexpr int kSolveRows = 128;  // rows (threads) per CTA of the L21 solve
constexpr int kMaxLevels = 40;
static_assert(kRows % 32 == 0 && kWarps <= 32 && kRows >= kTsluMaxWidth,
              "a CTA must hold at least one full candidate set");
static_assert(kTsluMaxWidth == 64, "the width classes below end at 64");

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

// Real-type traits: the pivot search key (|value|'s bits + 1, so unsigned order is |value| order
// and 0 marks a row that is not a candidate), the 16-byte vector type, and LAPACK's sfmin.
template <class T>
struct Real;
template <>
struct Real<float> {
  using Key = unsigned;
  using Vec = float4;
  static constexpr int kVec = 4;
  static __device__ __forceinline__ float sfmin() { return FLT_MIN; }
  static __device__ __forceinline__ Key key(float v) { return __float_as_uint(fabsf(v)) + 1u; }
  static __device__ __forceinline__ void unpack(const Vec& v, float (&o)[kVec]) {
    o[0] = v.x, o[1] = v.y, o[2] = v.z, o[3] = v.w;
  }
  static __device__ __forceinline__ Vec pack(const float* x) { return make_float4(x[0], x[1], x[2], x[3]); }
};
template <>
struct Real<double> {
  using Key = unsigned long long;
  using Vec = double2;
  static constexpr int kVec = 2;
  static __device__ __forceinline__ double sfmin() { return DBL_MIN; }
  static __device__ __forceinline__ Key key(double v) {
    return static_cast<Key>(__double_as_longlong(fabs(v))) + 1ull;
  }
  static __device__ __forceinline__ void unpack(const Vec& v, double (&o)[kVec]) { o[0] = v.x, o[1] = v.y; }
  static __device__ __forceinline__ Vec pack(const double* x) { return make_double2(x[0], x[1]); }
};

// Warp argmax of the keys, ties to the lowest lane (LAPACK's i?amax takes the first largest):
// one redux per 32-bit half and a ballot, all lanes get the maximum and the winning lane.
__device__ __forceinline__ unsigned warp_argmax(unsigned key, int& lane) {
  const unsigned best = __reduce_max_sync(0xffffffffu, key);
  lane = __ffs(static_cast<int>(__ballot_sync(0xffffffffu, key == best))) - 1;
  return best;
}
__device__ __forceinline__ unsigned long long warp_argmax(unsigned long long key, int& lane) {
  const auto hi = static_cast<unsigned>(key >> 32), lo = static_cast<unsigned>(key);
  const unsigned best_hi = __reduce_max_sync(0xffffffffu, hi);
  const unsigned best_lo = __reduce_max_sync(0xffffffffu, hi == best_hi ? lo : 0u);
  lane = __ffs(static_cast<int>(__ballot_sync(0xffffffffu, hi == best_hi && lo == best_lo))) - 1;
  return (static_cast<unsigned long long>(best_hi) << 32) | best_lo;
}

// getf2's multiplier x / pivot as LAPACK ?getf2 forms it: by the reciprocal when |pivot| >= sfmin,
// unscaled on an exactly zero pivot (tslu_host.cpp's tslu_multiplier, bit for bit).
template <class T>
__device__ __forceinline__ T multiplier(T x, T pivot, T inverse) {
  return pivot == T(0) ? x : (fabs(pivot) >= Real<T>::sfmin() ? x * inverse : x / pivot);
}

// One warp's pivot candidate at one step: its row (columns from the step's, rounded down to a
// vector, onwards), 1 / its pivot, its stack position and key.
template <class T, int BW>
struct __align__(16) PivotSlot {
  T row[BW];
  T inverse;
  int position;
  typename Real<T>::Key key;
};

// getf2 with partial pivoting on a stack of up to kRows rows, thread t owning stack row t in the
// registers r (BW >= b values, zero past b); rows are not moved. Per step j: the warp argmax
// (redux) of the open rows' |r[j]|; each warp's winner stores its row, key and reciprocal in the
// step's slot (stores only, double-buffered: a slot is rewritten two steps later, after a barrier
// every reader of it has passed); the one __syncthreads; every warp reduces the kWarps slots itself
// and reads the pivot row from the winning slot (broadcast loads, no aliasing with r). Multipliers
// stay in place, so each pivot row ends as its row of [L\U] of the rows taken in pivot order.
// my_step = the step that chose this thread's row (−1: none); first_zero = first exactly zero
// pivot, 1-based (0: none). Returns the pivots found: b, or fewer when fewer open rows exist.
// Called by all kRows threads; every exit is uniform.
template <class T, int BW>
__device__ __forceinline__ int select_pivots(T (&r)[BW], bool open, int b, int& my_step, int& first_zero,
                                             PivotSlot<T, BW> (*slots)[kWarps]) {
  using R = Real<T>;
  using Key = typename R::Key;
  using Vec = typename R::Vec;
  constexpr int V = R::kVec;
  const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
  my_step = -1;
  first_zero = 0;
  int count = b;
#pragma unroll
  for (int j = 0; j < BW; ++j) {
    if (j >= b) break;
    const Key key = open ? R::key(r[j]) : Key(0);
    int winner_lane;
    warp_argmax(key, winner_lane);
    if (lane == winner_lane) {  // also when no lane is open: the slot's key must say so
      PivotSlot<T, BW>& mine = slots[j & 1][warp];
      mine.key = key;
      mine.position = t;
      mine.inverse = T(1) / r[j];
#pragma unroll
      for (int cv = j / V; cv < BW / V; ++cv) reinterpret_cast<Vec*>(mine.row)[cv] = R::pack(r + cv * V);
    }
    __syncthreads();
    int winner_warp;
    const Key best = warp_argmax(lane < kWarps ? slots[j & 1][lane].key : Key(0), winner_warp);
    if (best == Key(0)) {  // no open row left (the same answer in every thread)
      count = j;
      break;
    }
    const PivotSlot<T, BW>& pivot_slot = slots[j & 1][winner_warp];
    const T pivot = pivot_slot.row[j];
    if (pivot == T(0) && first_zero == 0) first_zero = j + 1;
    if (t == pivot_slot.position) {
      open = false;
      my_step = j;
    } else if (open) {
      const T l = multiplier(r[j], pivot, pivot_slot.inverse);
      r[j] = l;
#pragma unroll
      for (int cv = (j + 1) / V; cv < BW / V; ++cv) {
        T u[V];
        R::unpack(reinterpret_cast<const Vec*>(pivot_slot.row)[cv], u);
#pragma unroll
        for (int k = 0; k < V; ++k)
          if (cv * V + k > j) r[cv * V + k] = fma(-l, u[k], r[cv * V + k]);
      }
    }
  }
  return count;
}

template <class T, int BW>
__global__ void __launch_bounds__(kRows, 1) tslu_tournament_kernel(const TsluLayout layout, T* __restrict__ a,
                                                                   std::int64_t lda, int m, int b, int fan,
                                                                   std::int64_t* __restrict__ ipiv, int* __restrict__ info,
                                                                   T* __restrict__ cand_values, int* __restrict__ cand_rows,
                                                                   unsigned* __restrict__ counters) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* top = reinterpret_cast<T*>(shared_raw);  // b × b, ld b: the root's original top rows
  __shared__ PivotSlot<T, BW> slots[2][kWarps];
  __shared__ int row_of[kRows];  // panel row of each stack row, −1 for none (padding never wins)
  __shared__ int winners[BW];    // stack position of the k-th pivot
  __shared__ int list_row[2 * BW], list_pos[2 * BW];
  __shared__ int is_last, list_count;
  const int t = threadIdx.x;
  const std::int64_t bb = static_cast<std::int64_t>(b) * b;
  T r[BW];  // this thread's stack row

  // Leaf round: rows [r0, r0 + rows) of the panel.
  std::int64_t q = blockIdx.x;
  const int r0 = static_cast<int>(q) * kRows;
  const int rows = min(kRows, m - r0);
  bool real = t < rows;
  row_of[t] = real ? r0 + t : -1;
#pragma unroll
  for (int c = 0; c < BW; ++c) r[c] = real && c < b ? a[(r0 + t) + static_cast<std::int64_t>(c) * lda] : T(0);
  int my_step = -1, first_zero = 0;
  int count = select_pivots<T, BW>(r, real, b, my_step, first_zero, slots);
  if (my_step >= 0) winners[my_step] = t;
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
        v = level == 0 ? a[row_of[w] + c * lda]
                       : __ldcg(cand_values + (first_child + w / b) * bb + (w % b) + static_cast<std::int64_t>(c) * b);
      }
      cand_values[set * bb + e] = v;
    }
    if (t < b) cand_rows[set * b + t] = t < count ? row_of[winners[t]] : -1;
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
    row_of[t] = t < stacked ? __ldcg(cand_rows + child0 * b + t) : -1;
    real = t < stacked && row_of[t] >= 0;
    const T* set_row = cand_values + (child0 + (real ? t / b : 0)) * bb + (real ? t % b : 0);
#pragma unroll
    for (int c = 0; c < BW; ++c) r[c] = real && c < b ? __ldcg(set_row + static_cast<std::int64_t>(c) * b) : T(0);
    count = select_pivots<T, BW>(r, real, b, my_step, first_zero, slots);
    if (my_step >= 0) winners[my_step] = t;
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
      const int p = row_of[winners[k]];
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
    top[k + c * b] = a[k + c * lda];
  }
  __syncthreads();
  for (int e = t; e < list_count * b; e += kRows) {
    const int entry = e / b, c = e % b;
    const int rr = list_row[entry], pos = list_pos[entry];
    if (pos >= count) a[pos + c * lda] = top[rr + c * b];  // rr < count: only top rows leave the top
  }
  // The top: pivot row k's [L\U] row from the root's getf2 (the top block factored without
  // pivoting), from the registers of the thread that holds it.
  if (my_step >= 0) {
#pragma unroll
    for (int c = 0; c < BW; ++c)
      if (c < b) a[my_step + static_cast<std::int64_t>(c) * lda] = r[c];
  }
  if (t == 0) *info = first_zero;
}

// L21 = A21·U11⁻¹ for rows [top, m): thread t solves its row x·U11 = a by columns in registers,
// with the same operations as getf2 on a non-pivot row (l = multiplier(a_j, u_jj), then
// a −= l·u_j,: by fma), U11's rows in shared memory (broadcast vector loads).
template <class T, int BW>
__global__ void __launch_bounds__(kSolveRows) tslu_lower_solve_kernel(T* __restrict__ a, std::int64_t lda, int m, int b,
                                                                      int top) {
  using R = Real<T>;
  using Vec = typename R::Vec;
  constexpr int V = R::kVec;
  constexpr int kLd = BW + V;  // padded rows, still 16-byte aligned
  __shared__ __align__(16) T u[BW * kLd];  // row j of U11 at u[j·kLd], zero below the diagonal and past b
  __shared__ T inverse[BW];
  const int t = threadIdx.x;
  for (int e = t; e < BW * BW; e += kSolveRows) {
    const int i = e % BW, j = e / BW;  // coalesced down the columns of a
    u[i * kLd + j] = i < b && j < b && i <= j ? a[i + static_cast<std::int64_t>(j) * lda] : T(0);
  }
  if (t < b) inverse[t] = T(1) / a[t + static_cast<std::int64_t>(t) * lda];
  __syncthreads();
  const std::int64_t row = top + static_cast<std::int64_t>(blockIdx.x) * kSolveRows + t;
  if (row >= m) return;
  T x[BW];
#pragma unroll
  for (int c = 0; c < BW; ++c) x[c] = c < b ? a[row + static_cast<std::int64_t>(c) * lda] : T(0);
#pragma unroll
  for (int j = 0; j < BW; ++j) {
    if (j >= b) break;
    const T l = multiplier(x[j], u[j * kLd + j], inverse[j]);
    x[j] = l;
#pragma unroll
    for (int cv = (j + 1) / V; cv < BW / V; ++cv) {
      T uj[V];
      R::unpack(reinterpret_cast<const Vec*>(u + j * kLd)[cv], uj);
#pragma unroll
      for (int k = 0; k < V; ++k)
        if (cv * V + k > j) x[cv * V + k] = fma(-l, uj[k], x[cv * V + k]);
    }
  }
#pragma unroll
  for (int c = 0; c < BW; ++c)
    if (c < b) a[row + static_cast<std::int64_t>(c) * lda] = x[c];
}

template <class T>
std::size_t tournament_shared_bytes(std::int64_t b) {
  return static_cast<std::size_t>(b * b) * sizeof(T);
}

// The root's top rows take up to 32 KiB (FP64, b = 64) on top of the static slots: opt in once
// per kernel.
template <class T, int BW>
void allow_large_shared() {
  static const bool done = [] {
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(tslu_tournament_kernel<T, BW>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(tournament_shared_bytes<T>(BW))));
    return true;
  }();
  (void)done;
}

// The two launches for panels of width class BW (b <= BW).
template <class T, int BW>
void launch_width_class(const TsluLayout& layout, T* a, std::int64_t lda, std::int64_t m, std::int64_t b,
                        std::int64_t* ipiv, int* info, T* cand_values, int* cand_rows, unsigned* counters,
                        cudaStream_t stream) {
  allow_large_shared<T, BW>();
  tslu_tournament_kernel<T, BW><<<static_cast<unsigned>(layout.sets[0]), kRows, tournament_shared_bytes<T>(b), stream>>>(
      layout, a, lda, static_cast<int>(m), static_cast<int>(b), tslu_fan_in(b), ipiv, info, cand_values, cand_rows,
      counters);
  GPUFACT_CHECK_LAUNCH();
  const std::int64_t top = std::min(m, b);
  if (m > top) {
    const auto blocks = static_cast<unsigned>((m - top + kSolveRows - 1) / kSolveRows);
    tslu_lower_solve_kernel<T, BW><<<blocks, kSolveRows, 0, stream>>>(a, lda, static_cast<int>(m), static_cast<int>(b),
                                                                      static_cast<int>(top));
    GPUFACT_CHECK_LAUNCH();
  }
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
  auto* base = static_cast<unsigned char*>(workspace);
  // The arrival counters' place depends on m and the element size (they follow the candidate
  // sets), so a workspace shared by leaves of different heights, or by s and d, may hold a
  // previous launch's candidates where this launch counts: clear them every launch.
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(base + parts.counters, 0, parts.total - parts.counters, stream));
  auto* cand_values = reinterpret_cast<T*>(base + parts.values);
  auto* cand_rows = reinterpret_cast<int*>(base + parts.rows);
  auto* counters = reinterpret_cast<unsigned*>(base + parts.counters);
  // Width classes: full unrolling, the row in registers (b = 48 runs as 64 with zero columns).
  if (b <= 8)
    launch_width_class<T, 8>(layout, a, lda, m, b, ipiv, info, cand_values, cand_rows, counters, stream);
  else if (b <= 16)
    launch_width_class<T, 16>(layout, a, lda, m, b, ipiv, info, cand_values, cand_rows, counters, stream);
  else if (b <= 32)
    launch_width_class<T, 32>(layout, a, lda, m, b, ipiv, info, cand_values, cand_rows, counters, stream);
  else
    launch_width_class<T, 64>(layout, a, lda, m, b, ipiv, info, cand_values, cand_rows, counters, stream);
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
