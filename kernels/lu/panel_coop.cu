#include "kernels/lu/panel_coop.cuh"

#include "core/cuda/check.hpp"
#include "core/cuda/device.hpp"
#include "kernels/common/cluster_push.cuh"
#include "kernels/common/phase_clock.cuh"
#include "kernels/lu/panel_replay.hpp"

#include <cooperative_groups.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace gpufact::kernels {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMinRows = 64;  // fewest rows worth a CTA of their own
constexpr int kMaxRowsPerThread = 8;  // rows a thread updates with their multipliers in registers
constexpr unsigned kNoRow = 0xffffffffu;
static_assert(kMaxCluster <= 32, "the pick gives each sender one lane");

template <class T>
__device__ __forceinline__ T sfmin();
template <>
__device__ __forceinline__ float sfmin<float>() {
  return FLT_MIN;
}
template <>
__device__ __forceinline__ double sfmin<double>() {
  return DBL_MIN;
}

// Warp-wide best of (v, row) where v is |a| >= 0, or -1 for no candidate: the largest value,
// ties to the lowest row; every lane ends with the winner's value and row. Warp reductions on the
// value's bits (non-negative floats order as their bits; the value comes back from the largest
// key, so no shuffle) and on the lowest row among the ties.
__device__ __forceinline__ unsigned reduce_max(unsigned x) { return __reduce_max_sync(0xffffffffu, x); }
__device__ __forceinline__ unsigned reduce_min(unsigned x) { return __reduce_min_sync(0xffffffffu, x); }

__device__ __forceinline__ void warp_best(float& v, unsigned& row) {
  const unsigned key = v >= 0.0f ? __float_as_uint(v) + 1u : 0u;  // 0: no candidate
  const unsigned top = reduce_max(key);
  row = reduce_min(key == top ? row : kNoRow);
  v = top == 0u ? -1.0f : __uint_as_float(top - 1u);
}
__device__ __forceinline__ void warp_best(double& v, unsigned& row) {
  const auto bits = static_cast<unsigned long long>(__double_as_longlong(v));
  const unsigned hi = v >= 0.0 ? static_cast<unsigned>(bits >> 32) + 1u : 0u, lo = static_cast<unsigned>(bits);
  const unsigned top_hi = reduce_max(hi);
  const unsigned top_lo = reduce_max(hi == top_hi ? lo : 0u);  // every lane takes part in both reductions
  row = reduce_min(hi == top_hi && lo == top_lo ? row : kNoRow);
  v = top_hi == 0u ? -1.0
                   : __longlong_as_double(static_cast<long long>(
                         static_cast<unsigned long long>(top_hi - 1u) << 32 | static_cast<unsigned long long>(top_lo)));
}

// warp_best, returning the lane that held the winner (the lanes' rows are distinct; lane 0 when
// no lane had a candidate).
template <class T>
__device__ __forceinline__ int warp_best_lane(T& v, unsigned& row) {
  const unsigned mine = row;
  warp_best(v, row);
  const unsigned holders = __ballot_sync(0xffffffffu, mine == row);
  return holders == 0u ? 0 : __ffs(static_cast<int>(holders)) - 1;
}

// |a| as the pivot search ranks it, NaN as 0: a NaN never beats a number, yet a column of NaNs
// still has a pivot row, so every search has a winner (the factors are then NaN, and the caller's
// finite check reports the input). On the bits: written as a floating-point test
// (|a| >= 0 ? |a| : 0), the compiled kernel still let NaN through, and an all-NaN column had no
// candidate at all.
__device__ __forceinline__ float pivot_magnitude(float a) {
  const unsigned bits = __float_as_uint(a) & 0x7fffffffu;
  return bits > 0x7f800000u ? 0.0f : __uint_as_float(bits);
}
__device__ __forceinline__ double pivot_magnitude(double a) {
  const auto bits = static_cast<unsigned long long>(__double_as_longlong(a)) & 0x7fffffffffffffffull;
  return bits > 0x7ff0000000000000ull ? 0.0 : __longlong_as_double(static_cast<long long>(bits));
}

using PhaseClock = kernels::PhaseClock<kCoopPanelPhases>;  // CoopPanelPhase order

// One column's exchange inside the cluster: every CTA pushes its candidate (its row index, then
// the row's columns j..b) into every CTA's slot for it; a transaction barrier per column parity
// counts the bytes. Slots hold values by absolute column, `stride` apart per sender.
template <class T>
struct Exchange {
  unsigned long long* bars;  // [2]
  unsigned* received_row;    // [2][kMaxCluster]
  T* received;               // [2][C][stride]
  T* part_value;             // [2][kWarps]: each warp's candidate |a|
  unsigned* part_row;        // [2][kWarps]
  int C, g, b, stride;

  __device__ T* slot(int parity, int sender) const {
    return received + static_cast<std::size_t>(parity * C + sender) * stride;
  }
  __device__ unsigned column_bytes(int j) const { return static_cast<unsigned>(C * (4 + (b - j) * sizeof(T))); }
  // Thread 0, before the cluster meets: barriers ready and each parity's first phase armed, so no
  // push can reach an unarmed phase (later phases are armed right after the previous one's wait).
  __device__ void init() const {
    barrier_init(smem_u32(&bars[0]));
    barrier_init(smem_u32(&bars[1]));
    barrier_expect(smem_u32(&bars[0]), column_bytes(0));
    if (b > 1) barrier_expect(smem_u32(&bars[1]), column_bytes(1));
    barrier_init_fence();
  }
  // The CTA's candidate from its warps' (every lane holding its warp's warp_best): largest, ties
  // to the lowest row. One __syncthreads; returns the warp that found it.
  __device__ int cta_candidate_of_warps(int parity, T& best, unsigned& best_row) const {
    const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
    if (lane == 0) part_value[parity * kWarps + warp] = best, part_row[parity * kWarps + warp] = best_row;
    __syncthreads();
    // Every warp combines the warps' candidates itself, a lane each.
    best = lane < kWarps ? part_value[parity * kWarps + lane] : T(-1);
    best_row = lane < kWarps ? part_row[parity * kWarps + lane] : kNoRow;
    return warp_best_lane(best, best_row);
  }
  // The same from every thread's own (|a|, row).
  __device__ int cta_candidate(int parity, T& best, unsigned& best_row) const {
    warp_best(best, best_row);
    return cta_candidate_of_warps(parity, best, best_row);
  }
  // This thread's share (kThreads / C threads per destination) of pushing the CTA's candidate:
  // its row, then value(k) for columns k = j..b.
  template <class Value>
  __device__ void push_candidate(int parity, int j, unsigned row, Value value) const {
    // C is a power of two (coop_panel_shape doubles it): shifts, not two integer divisions a column.
    const int t = static_cast<int>(threadIdx.x), shift = __ffs(kThreads) - __ffs(C), per_dest = 1 << shift,
              dest = t >> shift;
    // Addresses in the destination CTA (its shared memory is one contiguous window of the cluster's).
    const unsigned dest_bar = in_cta(smem_u32(&bars[parity]), dest);
    const unsigned row_slot = in_cta(smem_u32(&received_row[parity * kMaxCluster + g]), dest);
    const unsigned value_slot = in_cta(smem_u32(slot(parity, g)), dest);
    for (int f = t - dest * per_dest; f <= b - j; f += per_dest) {
      if (f == 0)
        push(row_slot, row, dest_bar);
      else
        push(value_slot + static_cast<unsigned>((j + f - 1) * sizeof(T)), value(j + f - 1), dest_bar);
    }
  }
  // Waits for every CTA's candidate of column j, arms this parity for column j + 2 (no CTA pushes
  // that before it has this CTA's j + 1), and picks the pivot row in every warp alike. Returns
  // the CTA that owns it; `row` its row in the panel.
  __device__ int pick(int parity, int j, unsigned& row) const {
    const unsigned bar = smem_u32(&bars[parity]);
    barrier_wait(bar, static_cast<unsigned>(j >> 1) & 1u);
    if (threadIdx.x == 0 && j + 2 < b) barrier_expect(bar, column_bytes(j + 2));
    const int lane = static_cast<int>(threadIdx.x) & 31;
    T v = T(-1);
    row = kNoRow;
    if (lane < C) {
      const unsigned r = received_row[parity * kMaxCluster + lane];
      if (r != kNoRow) v = pivot_magnitude(slot(parity, lane)[j]), row = r;
    }
    return warp_best_lane(v, row);  // lane c holds CTA c's candidate
  }
};

// After the last column: every push has landed (each CTA waited for all of column b - 1's) and
// no CTA leaves while another could still push to it; then thread 0 replays the interchanges
// (CTA 0 writes ipiv and info) and the CTA meets before its rows go to their final places.
__device__ __forceinline__ void finish_exchanges(const int* piv, int* cur, int* pos_of, int b, std::int64_t* ipiv,
                                                 int pivot_offset, int* info, int first_zero) {
  cg::this_cluster().sync();
  const bool first_cta = cg::this_cluster().block_rank() == 0;
  if (threadIdx.x == 0) {
    replay_interchanges(piv, cur, pos_of, b, first_cta ? ipiv : nullptr, pivot_offset);
    if (first_cta) *info = first_zero;
  }
  __syncthreads();
}

// The span's columns beside the leaf ([-left, 0) and [b, b + right)) take the leaf's interchanges
// as one permutation of at most 2b rows: the row chosen for column j goes to row j (piv), and each
// row j < b not chosen goes where the replay left it (pos_of[j] >= b); no other row moves. A warp
// per column reads every moved row, then writes them, so no two warps touch one word and no
// barrier is needed. K: moves per lane (2b <= 32 K).
template <class T, int K>
__device__ __forceinline__ void interchange_span(T* a, std::int64_t lda, int b, int left, int right, const int* piv,
                                                 const int* pos_of) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int C = static_cast<int>(cg::this_cluster().num_blocks()), g = static_cast<int>(cg::this_cluster().block_rank());
  for (int q = g * kWarps + warp; q < left + right; q += C * kWarps) {
    T* col = a + static_cast<std::int64_t>(q < left ? q - left : b + q - left) * lda;
    T v[K];
    int dest[K];
#pragma unroll
    for (int i = 0; i < K; ++i) {
      const int mv = lane + 32 * i;
      dest[i] = -1;
      if (mv < b) {
        if (piv[mv] != mv) dest[i] = mv, v[i] = col[piv[mv]];
      } else if (mv < 2 * b && pos_of[mv - b] >= b) {
        dest[i] = pos_of[mv - b], v[i] = col[mv - b];
      }
    }
    __syncwarp();
#pragma unroll
    for (int i = 0; i < K; ++i)
      if (dest[i] >= 0) col[dest[i]] = v[i];
  }
}

// Dynamic shared memory of the shared-memory kernel's CTA: its rows (column-major, leading
// dimension rows | 1 so a row's columns fall in distinct banks), per column the pivot, the
// candidate rows every CTA pushed (per column parity and sender), per row the column it was
// chosen for (-1 while a candidate), per column the chosen row, and the replay's two maps.
struct SharedLayout {
  std::size_t pivot, received, chosen, piv, cur, pos_of, total;
};
__host__ __device__ inline SharedLayout shared_layout(int rows, int b, int ctas, std::size_t e) {
  SharedLayout s{};
  s.pivot = static_cast<std::size_t>(rows | 1) * b * e;
  s.received = (s.pivot + b * e + 15) / 16 * 16;
  s.chosen = s.received + static_cast<std::size_t>(2 * ctas) * b * e;
  s.piv = s.chosen + rows * sizeof(int);
  s.cur = s.piv + b * sizeof(int);
  s.pos_of = s.cur + b * sizeof(int);
  s.total = s.pos_of + b * sizeof(int);
  return s;
}

// The rank-1 update of column j's pivot on thread t's rows t, t + kThreads, ... (at most N):
// l = a(r, j) / u as getf2 (by the reciprocal unless the pivot is tiny), kept in registers, and
// columns j+1..b each read once per thread from prow (the pivot row, by absolute column).
template <class T, int N>
__device__ __forceinline__ void update_rows(T* S, int lds, int j, int b, int rows, const int* chosen, const T* prow,
                                            T u) {
  const int t = static_cast<int>(threadIdx.x);
  const bool reciprocal = abs(u) >= sfmin<T>();
  const T rinv = T(1) / u;
  T l[N];
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int r = t + i * kThreads;
    l[i] = T(0);
    if (r < rows && chosen[r] < 0) {
      const T x = S[j * lds + r];
      l[i] = reciprocal ? x * rinv : x / u;
    }
  }
  T* x = S + (j + 1) * lds + t;
#pragma unroll 2
  for (int k = j + 1; k < b; ++k, x += lds) {
    const T p = prow[k];
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (l[i] != T(0)) x[i * kThreads] -= l[i] * p;
  }
}

// The panel in shared memory (any width that fits): thread t owns rows t, t + kThreads, ... of
// its CTA for the search and the update alike, so the only CTA barrier per column is the one
// that meets the warps' candidates. Multipliers are divided by their pivot when written back.
template <class T>
__global__ void __launch_bounds__(kThreads, 1)
    lu_panel_coop_kernel(T* __restrict__ a, std::int64_t lda, int m, int b, int R, std::int64_t* __restrict__ ipiv,
                         int* __restrict__ info, unsigned long long* __restrict__ profile, int left, int right,
                         int pivot_offset) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bars[2];
  __shared__ unsigned received_row[2 * kMaxCluster];
  __shared__ T part_value[2 * kWarps];
  __shared__ unsigned part_row[2 * kWarps];
  cg::cluster_group cluster = cg::this_cluster();
  const int C = static_cast<int>(cluster.num_blocks()), g = static_cast<int>(cluster.block_rank());
  const SharedLayout L = shared_layout(R, b, C, sizeof(T));
  const int lds = R | 1;
  T* S = reinterpret_cast<T*>(smem);
  T* pivot = reinterpret_cast<T*>(smem + L.pivot);
  int* chosen = reinterpret_cast<int*>(smem + L.chosen);
  int* piv = reinterpret_cast<int*>(smem + L.piv);
  int* cur = reinterpret_cast<int*>(smem + L.cur);
  int* pos_of = reinterpret_cast<int*>(smem + L.pos_of);
  const Exchange<T> x{bars, received_row, reinterpret_cast<T*>(smem + L.received), part_value, part_row, C, g, b, b};

  const int t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5;
  const int row0 = g * R, rows = max(0, min(R, m - row0));
  PhaseClock clock(profile);
  for (int k = warp; k < b; k += kWarps)
    for (int r = lane; r < rows; r += 32) S[k * lds + r] = a[row0 + r + k * lda];
  for (int r = t; r < R; r += kThreads) chosen[r] = -1;
  if (t == 0) x.init();
  int first_zero = 0;
  cluster.sync();  // every CTA running, its barriers ready, before anything is pushed to it
  clock.lap(kCoopLoad);

  for (int j = 0; j < b; ++j) {
    const int parity = j & 1;
    // This CTA's candidate: the largest |a(r, j)| among rows not chosen yet (ties: lowest row).
    // Column j holds a(r, j) less the earlier columns' updates, not yet divided by the pivot.
    T best = T(-1);
    unsigned best_row = kNoRow;
    for (int r = t; r < rows; r += kThreads)
      if (chosen[r] < 0) {
        const T v = pivot_magnitude(S[j * lds + r]);
        if (v > best) best = v, best_row = static_cast<unsigned>(row0 + r);
      }
    x.cta_candidate(parity, best, best_row);
    clock.lap(kCoopSearch);
    const int local = best_row == kNoRow ? -1 : static_cast<int>(best_row) - row0;
    x.push_candidate(parity, j, best_row, [&](int k) { return local >= 0 ? S[k * lds + local] : T(0); });
    clock.lap(kCoopSend);
    unsigned row = kNoRow;
    const int owner = x.pick(parity, j, row);
    const T* prow = x.slot(parity, owner);  // the pivot row, by column
    const T u = prow[j];
    const int chosen_local = static_cast<int>(row) - row0;
    if (owner == g && chosen_local % kThreads == t) chosen[chosen_local] = j;  // its owner thread
    if (t == 0) {
      piv[j] = static_cast<int>(row);
      pivot[j] = u;
      if (u == T(0) && first_zero == 0) first_zero = j + 1;
    }
    clock.lap(kCoopWait);
    if (u != T(0)) {
      const int per_thread = (rows + kThreads - 1) / kThreads;
      if (per_thread <= 1)
        update_rows<T, 1>(S, lds, j, b, rows, chosen, prow, u);
      else if (per_thread <= 2)
        update_rows<T, 2>(S, lds, j, b, rows, chosen, prow, u);
      else if (per_thread <= 4)
        update_rows<T, 4>(S, lds, j, b, rows, chosen, prow, u);
      else
        update_rows<T, kMaxRowsPerThread>(S, lds, j, b, rows, chosen, prow, u);
    }
    clock.lap(kCoopUpdate);
  }
  finish_exchanges(piv, cur, pos_of, b, ipiv, pivot_offset, info, first_zero);
  // Each row once to its final row: columns left of the one it was chosen for (all, if never
  // chosen) are multipliers, divided by their column's pivot now; the rest is U.
  for (int k = warp; k < b; k += kWarps) {
    const T u = pivot[k];
    const bool reciprocal = abs(u) >= sfmin<T>();
    const T rinv = T(1) / u;
    for (int r = lane; r < rows; r += 32) {
      const int c = chosen[r];
      T v = S[k * lds + r];
      if ((c < 0 || k < c) && u != T(0)) v = reciprocal ? v * rinv : v / u;
      a[final_row(c, row0 + r, b, pos_of) + k * lda] = v;
    }
  }
  interchange_span<T, 2 * kCoopPanelMaxWidth / 32>(a, lda, b, left, right, piv, pos_of);
  clock.lap(kCoopStore);
  clock.finish();
}

// The panel in registers (b <= BW, at most RPT rows per thread): thread t holds rows t,
// t + kThreads, ... of its CTA, all BW columns, so the rank-1 update is register FMAs with the
// pivot row read once per column; each warp's candidate row goes through shared memory only to
// be pushed. Multipliers are divided by their pivot as they are formed.
//
// The column loop is not unrolled: a thread's registers hold its rows' columns j, j + 1, ...
// (column j in v[.][0]), and each update writes column k + 1's new value into v[.][k], so the
// registers shift down one column per step at no extra cost. The finished column j goes to shared
// memory (R values per column; the rows' final values, written back at the end). An unrolled
// loop, each column with its own code, made the kernel 138-395 KB of instructions, fetched from
// L2 once per column: while a trailing GEMM loaded L2, a leaf took 2.6-3 times longer (its
// register-only update five times).
template <class T, int BW, int RPT>
__global__ void __launch_bounds__(kThreads, 1)
    lu_panel_reg_kernel(T* __restrict__ a, std::int64_t lda, int m, int b, int R, std::int64_t* __restrict__ ipiv,
                        int* __restrict__ info, unsigned long long* __restrict__ profile, int left, int right,
                        int pivot_offset) {
  extern __shared__ __align__(16) unsigned char smem[];  // R x b, column-major: the finished columns
  __shared__ __align__(8) unsigned long long bars[2];
  __shared__ unsigned received_row[2 * kMaxCluster];
  __shared__ T part_value[2 * kWarps];
  __shared__ unsigned part_row[2 * kWarps];
  // + BW: the update reads a pivot row's columns j + 1 .. j + BW - 1, past its slot when j > 0
  // (values that only reach registers past column b).
  __shared__ __align__(16) T received[2 * kMaxCluster * BW + BW];
  // Per parity, each warp's candidate row by column; the columns past b hold what its registers
  // past column b hold (written without a bound, so the lane that writes it does not branch).
  __shared__ T staging[2][kWarps][2 * BW];
  __shared__ int piv[BW], cur[BW], pos_of[BW];
  cg::cluster_group cluster = cg::this_cluster();
  const int C = static_cast<int>(cluster.num_blocks()), g = static_cast<int>(cluster.block_rank());
  const Exchange<T> x{bars, received_row, received, part_value, part_row, C, g, b, BW};
  const int t = static_cast<int>(threadIdx.x), warp = t >> 5;
  const int row0 = g * R, rows = max(0, min(R, m - row0));
  T* done = reinterpret_cast<T*>(smem);
  PhaseClock clock(profile);

  T v[RPT][BW];
  int chosen[RPT];  // the column each row was chosen for; -1 while a candidate (BW: no such row)
#pragma unroll
  for (int i = 0; i < RPT; ++i) {
    const int r = t + i * kThreads;
    chosen[i] = r < rows ? -1 : BW;
#pragma unroll
    for (int k = 0; k < BW; ++k) v[i][k] = r < rows && k < b ? a[row0 + r + k * lda] : T(0);
  }
  if (t < BW) received[2 * kMaxCluster * BW + t] = T(0);
  if (t == 0) x.init();
  int first_zero = 0;
  cluster.sync();
  clock.lap(kCoopLoad);

  // Column j with columns j .. b - 1 in v[.][0 .. W): W, a power of two >= b - j, bounds the
  // registers the staging and the update touch.
  const auto column = [&](int j, auto width) {
    constexpr int W = decltype(width)::value;
    const int parity = j & 1;
    T best = T(-1);
    unsigned best_row = kNoRow;
    int best_i = 0;
#pragma unroll
    for (int i = 0; i < RPT; ++i)
      if (chosen[i] < 0 && pivot_magnitude(v[i][0]) > best) {
        best = pivot_magnitude(v[i][0]);
        best_row = static_cast<unsigned>(row0 + t + i * kThreads);
        best_i = i;
      }
    // The warp's candidate (reduced once: the CTA's reduction starts from it), its row into
    // staging by the lane that holds it, before the CTA meets.
    T wv = best;
    unsigned wrow = best_row;
    warp_best(wv, wrow);
    if (wrow != kNoRow && wrow == best_row) {
#pragma unroll
      for (int k = 0; k < W; ++k) {
        T y = v[0][k];
#pragma unroll
        for (int i = 1; i < RPT; ++i)
          if (best_i == i) y = v[i][k];
        staging[parity][warp][j + k] = y;
      }
    }
    const int cta_warp = x.cta_candidate_of_warps(parity, wv, wrow);
    clock.lap(kCoopSearch);
    x.push_candidate(parity, j, wrow, [&](int k) { return wrow != kNoRow ? staging[parity][cta_warp][k] : T(0); });
    clock.lap(kCoopSend);
    unsigned row = kNoRow;
    const int owner = x.pick(parity, j, row);
    const T* prow = x.slot(parity, owner);
    const T u = prow[j];
    if (owner == g) {
      const int local = static_cast<int>(row) - row0;
#pragma unroll
      for (int i = 0; i < RPT; ++i)
        if (local == t + i * kThreads) chosen[i] = j;
    }
    if (t == 0) {
      piv[j] = static_cast<int>(row);
      if (u == T(0) && first_zero == 0) first_zero = j + 1;
    }
    clock.lap(kCoopWait);
    // Column j is finished: the candidates' multipliers (none when the pivot is zero), the chosen
    // rows' U. Every row's later columns move down a register, less l times the pivot row.
    const bool divide = u != T(0), reciprocal = abs(u) >= sfmin<T>();
    const T rinv = T(1) / u;
    T l[RPT];
#pragma unroll
    for (int i = 0; i < RPT; ++i) {
      T f = v[i][0];
      l[i] = T(0);
      if (divide && chosen[i] < 0) l[i] = f = reciprocal ? f * rinv : f / u;
      const int r = t + i * kThreads;
      if (r < rows) done[j * R + r] = f;
    }
#pragma unroll
    for (int k = 1; k < W; ++k) {
      const T p = prow[j + k];
#pragma unroll
      for (int i = 0; i < RPT; ++i) v[i][k - 1] = v[i][k] - l[i] * p;
    }
    clock.lap(kCoopUpdate);
  };
  int j = 0;
#pragma unroll 1
  for (; j < b - BW / 2; ++j) column(j, std::integral_constant<int, BW>{});
  if constexpr (BW > 32) {
#pragma unroll 1
    for (; j < b - 16; ++j) column(j, std::integral_constant<int, 32>{});
  }
#pragma unroll 1
  for (; j < b - 8; ++j) column(j, std::integral_constant<int, 16>{});
#pragma unroll 1
  for (; j < b; ++j) column(j, std::integral_constant<int, 8>{});
  finish_exchanges(piv, cur, pos_of, b, ipiv, pivot_offset, info, first_zero);
#pragma unroll
  for (int i = 0; i < RPT; ++i) {
    const int r = t + i * kThreads;
    if (r >= rows) break;
    const int dest = final_row(chosen[i], row0 + r, b, pos_of);
    for (int k = 0; k < b; ++k) a[dest + k * lda] = done[k * R + r];
  }
  interchange_span<T, 2 * BW / 32>(a, lda, b, left, right, piv, pos_of);
  clock.lap(kCoopStore);
  clock.finish();
}

// Dynamic shared memory a CTA may take: the opt-in limit less 6 KiB for the kernel's static arrays.
// Read once, like the cluster size and the kernel attributes (the process's device).
std::size_t shared_limit() {
  static const auto limit =
      static_cast<std::size_t>(current_device_shared_optin() - 6 * 1024);
  return limit;
}

// Clusters of 16 allowed, and all the dynamic shared memory the kernel's static arrays leave
// (the shared-memory kernel's panel, the register kernel's finished columns), once per kernel.
// Returns that many bytes.
template <auto Kernel>
std::size_t set_attributes() {
  static const std::size_t most = [] {
    cudaFuncAttributes attributes{};
    GPUFACT_CUDA_CHECK(cudaFuncGetAttributes(&attributes, Kernel));
    const int bytes = current_device_shared_optin() - static_cast<int>(attributes.sharedSizeBytes);
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    return static_cast<std::size_t>(bytes);
  }();
  return most;
}

// The register kernel's class for b columns and rows per CTA: rows per thread (1, 2 or 4; 0: use
// the shared-memory kernel), BW = 32 or 64 columns, at most 128 32-bit registers of panel per thread.
int register_rows_per_thread(std::int64_t b, int rows, std::size_t element_bytes) {
  const std::int64_t bw = b <= 32 ? 32 : (b <= 64 ? 64 : 0);
  for (int rpt : {1, 2, 4})
    if (rpt * kThreads >= rows)
      return bw > 0 && rpt * bw * static_cast<std::int64_t>(element_bytes / 4) <= 128 ? rpt : 0;
  return 0;
}

template <auto Kernel, class T>
void launch_cluster(const CoopPanelShape& shape, T* a, std::int64_t lda, std::int64_t m,
                    std::int64_t b, std::int64_t* ipiv, int* info, cudaStream_t stream, unsigned long long* profile,
                    const LuPanelSpan& span);

template <class T>
void panel_coop(T* a, std::int64_t lda, std::int64_t m, std::int64_t b, std::int64_t* ipiv, int* info,
                cudaStream_t stream, unsigned long long* profile, const LuPanelSpan& span) {
  check_panel_arguments("launch_lu_panel_coop", m, b, kCoopPanelMaxWidth, lda);
  if (span.left < 0 || span.right < 0 || span.left + span.right > INT_MAX / 2)
    throw std::invalid_argument("launch_lu_panel_coop: span.left = " + std::to_string(span.left) +
                                " and span.right = " + std::to_string(span.right) + " must be >= 0");
  if (span.pivot_offset < 0 || span.pivot_offset > INT_MAX / 2)
    throw std::invalid_argument("launch_lu_panel_coop: span.pivot_offset = " + std::to_string(span.pivot_offset) +
                                " must be >= 0");
  const CoopPanelShape shape = coop_panel_shape(m, b, sizeof(T));
  if (shape.ctas == 0)
    throw std::invalid_argument("launch_lu_panel_coop: an " + std::to_string(m) + " x " + std::to_string(b) +
                                " panel does not fit in the shared memory of a cluster of " +
                                std::to_string(coop_panel_max_cluster()) + " CTAs (coop_panel_fit_width)");
  const auto launch = [&](auto kernel) {
    launch_cluster<decltype(kernel)::value, T>(shape, a, lda, m, b, ipiv, info, stream, profile, span);
  };
  using Kernel = decltype(&lu_panel_coop_kernel<T>);  // the register kernels have the same signature
  const int rpt = shape.rows_per_thread;
  if (rpt == 0) return launch(std::integral_constant<Kernel, &lu_panel_coop_kernel<T>>{});
  if (b <= 32) {
    if (rpt == 1) return launch(std::integral_constant<Kernel, &lu_panel_reg_kernel<T, 32, 1>>{});
    if (rpt == 2) return launch(std::integral_constant<Kernel, &lu_panel_reg_kernel<T, 32, 2>>{});
    if constexpr (sizeof(T) == 4)
      return launch(std::integral_constant<Kernel, &lu_panel_reg_kernel<T, 32, 4>>{});
  } else {
    if (rpt == 1) return launch(std::integral_constant<Kernel, &lu_panel_reg_kernel<T, 64, 1>>{});
    if constexpr (sizeof(T) == 4)
      return launch(std::integral_constant<Kernel, &lu_panel_reg_kernel<T, 64, 2>>{});
  }
  throw std::logic_error("launch_lu_panel_coop: no register class for the shape");
}

template <auto Kernel, class T>
void launch_cluster(const CoopPanelShape& shape, T* a, std::int64_t lda, std::int64_t m,
                    std::int64_t b, std::int64_t* ipiv, int* info, cudaStream_t stream, unsigned long long* profile,
                    const LuPanelSpan& span) {
  // A register kernel takes all the shared memory it may, though it needs only shape.shared_bytes:
  // no CTA of another kernel (a trailing GEMM's) then shares its SMs. Beside a GEMM that did, the
  // LU at n = 8192 FP32 ran 5% slower.
  const std::size_t most = set_attributes<Kernel>();
  const std::size_t bytes = shape.rows_per_thread > 0 ? most : shape.shared_bytes;
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t cfg = cluster_launch_config(shape.ctas, kThreads, bytes, stream, &attr);
  GPUFACT_CUDA_CHECK(cudaLaunchKernelEx(&cfg, Kernel, a, lda, static_cast<int>(m), static_cast<int>(b), shape.rows,
                                        ipiv, info, profile, static_cast<int>(span.left), static_cast<int>(span.right),
                                        static_cast<int>(span.pivot_offset)));
}

}  // namespace

int coop_panel_max_cluster() {
  static const int most = [] {
    (void)set_attributes<&lu_panel_coop_kernel<float>>();
    cudaLaunchAttribute attr{};
    const cudaLaunchConfig_t cfg = cluster_launch_config(kMaxCluster, kThreads, shared_limit(), nullptr, &attr);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, lu_panel_coop_kernel<float>, &cfg) != cudaSuccess) {
      (void)cudaGetLastError();
      clusters = 0;
    }
    return clusters > 0 ? kMaxCluster : 8;
  }();
  return most;
}

CoopPanelShape coop_panel_shape(std::int64_t m, std::int64_t b, std::size_t element_bytes) {
  if (m < 1 || b < 1 || b > kCoopPanelMaxWidth || m > INT_MAX / 2) return {};
  const int most = coop_panel_max_cluster();
  int ctas = 1;
  while (ctas < most && static_cast<std::int64_t>(ctas) * kMinRows < m) ctas *= 2;
  const auto rows = static_cast<int>((m + ctas - 1) / ctas);
  if (const int rpt = register_rows_per_thread(b, rows, element_bytes); rpt > 0)
    return {ctas, rows, static_cast<std::size_t>(rows) * static_cast<std::size_t>(b) * element_bytes, rpt};
  if (rows > kMaxRowsPerThread * kThreads) return {};
  const std::size_t bytes = shared_layout(rows, static_cast<int>(b), ctas, element_bytes).total;
  if (bytes > shared_limit()) return {};
  return {ctas, rows, bytes, 0};
}

std::int64_t coop_panel_fit_width(std::int64_t m, std::int64_t b, std::size_t element_bytes) {
  for (std::int64_t w : {std::min<std::int64_t>(b, 64), std::min<std::int64_t>(b, 32)})
    if (coop_panel_shape(m, w, element_bytes).rows_per_thread > 0) return w;
  for (std::int64_t w = std::min<std::int64_t>(b, kCoopPanelMaxWidth); w >= 8; w /= 2)
    if (coop_panel_shape(m, w, element_bytes).ctas > 0) return w;
  return 0;
}

void launch_lu_panel_coop(float* a, std::int64_t lda, std::int64_t m, std::int64_t b, std::int64_t* ipiv, int* info,
                          cudaStream_t stream, unsigned long long* profile, const LuPanelSpan& span) {
  panel_coop(a, lda, m, b, ipiv, info, stream, profile, span);
}
void launch_lu_panel_coop(double* a, std::int64_t lda, std::int64_t m, std::int64_t b, std::int64_t* ipiv, int* info,
                          cudaStream_t stream, unsigned long long* profile, const LuPanelSpan& span) {
  panel_coop(a, lda, m, b, ipiv, info, stream, profile, span);
}

}  // namespace gpufact::kernels
