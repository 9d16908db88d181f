#include "kernels/qr/tsqr_register.cuh"

#include "core/cuda/check.hpp"
#include "core/cuda/device.hpp"
#include "kernels/common/cp_async.cuh"
#include "kernels/common/vec16.cuh"
#include "kernels/common/warp_butterfly.cuh"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace gpufact::kernels {
namespace {

// Block entries per thread: 64, in FP32 and FP64 alike (measured on the H200: 128 FP32 entries
// per thread lose to 64 with more blocks per SM; 64 FP64 entries beat 32 by 1.2–1.4×, the fixed
// costs of each reflector — reduction, barrier, scalars — spread over more arithmetic).
constexpr int kEntries = 64;

// Rows per thread for c columns per thread: at least kEntries entries, so 12 wide holds 6 rows
// (72 entries; measured on the H200 at 10⁶ × 10: 5 rows run 4% slower in FP32, 4 rows 8%).
constexpr int rows_per_thread_at(int c) { return (kEntries + c - 1) / c; }

// The compiled widths: a panel runs at the narrowest that holds it, so up to 12 columns do no
// arithmetic on the 4 more a 16-wide block would pad.
constexpr int kWidths[] = {12, 16, 32};

// Column groups of the factor's blocks at width w: lanes of a warp that share rows and split the
// columns, so that picking column j, the column sums' butterfly and the τ·w scalars cost per
// column of a thread, not of the panel. Measured on the H200 (8192 × 32, 64 reflectors in a
// chain): four groups of 8 columns (8 rows per thread) factor FP32 in 54 µs instead of 81 with
// one (2 rows × 32 columns), FP64 in 78 instead of 120. A 16-wide FP32 block in two groups spills
// at its 128 registers; 12 columns have no such split into multiples of 4.
constexpr int factor_groups_at(int w) { return w == 32 ? 4 : 1; }
// The apply kernels keep whole rows per thread: their reflector steps have no pick and no
// scalars to shrink, while in four groups every lane loads each reflector row its group shares,
// and CAQR's 32-wide FP32 leaf apply took 145 registers (one block per SM instead of two):
// measured on the H200 at 8192 × 32 and 110592 × 32, that apply ran 15% and 24% slower, form_q
// 6% slower and 9% faster. (CAQR's 32-wide leaf applies now run caqr_apply_leaves_columns_kernel,
// each warp owning whole columns instead.)
constexpr int kApplyGroups = 1;
// The columns layout's block (caqr_apply_leaves_columns_kernel, factor_columns): eight warps of
// four columns make a 32-wide tile.
constexpr int kColumnsThreads = 256;
// A TSQR's explicit Q (tsqr_form_q_kernel) is the exception at 32 wide in FP32: in two groups of
// 16 columns (4 rows a thread) the column sums' butterfly takes 15 shuffles instead of 31 and the
// block fits 128 registers, so two blocks share an SM (one at 140 registers before). Measured on
// one H100, tsqr_register at 110592 × 32: 0.193 → 0.187 ms, and 0.183 with τ folded into the
// reflector's rows (apply_block's TauOnV). CAQR's applies were slower in two groups (110592 × 100
// 0.848 → 0.857 ms) and even with τ folded (±0.4%), so they keep one.
template <class T>
constexpr int form_q_groups_at(int w) {
  return sizeof(T) == 4 && w == 32 ? 2 : 1;
}
// Reflectors per pass of the factor's loop (see factor_block): measured on the H200, 4 beats 1
// at 16 wide (FP32 110592 × 16: 46 µs against 58, though the 128-register block then spills 52
// bytes) and at 12 wide; at 32 wide 4 and 8 run alike.
constexpr int factor_unroll_at(int w) { return w == 32 ? 8 : 4; }

// Blocks per SM the registers must allow: FP32 blocks up to 16 wide keep two 256-thread (four
// 128-thread) blocks resident (128 registers), FP64 blocks take what their data registers need.
template <class T, int W, int TH>
constexpr int min_blocks() {
  return sizeof(T) == 4 ? (W <= 16 ? 2 : 1) * 256 / TH : 1;
}

constexpr int next_power_of_two(int w) { return w <= 1 ? 1 : 2 * next_power_of_two((w + 1) / 2); }
constexpr int log2_of(int w) { return w <= 1 ? 0 : 1 + log2_of(w / 2); }

// A block of TH threads at width W in registers: `groups` neighbouring lanes share their rows and
// split the W columns, `cols` each; the TH / groups row slots hold `rows_per_thread` rows each.
// Each reflector's fixed costs (the column sums' butterfly, picking column j, the τ·w scalars)
// scale with the columns per thread, the arithmetic with the entries.
template <class T_, int W, int TH, int G>
struct Shape {
  using T = T_;
  static constexpr int width = W, groups = G;
  static constexpr int cols = W / G;
  static constexpr int rows_per_thread = rows_per_thread_at(cols);
  static constexpr int slots = TH / G;
  static constexpr int block_rows = slots * rows_per_thread;
  static constexpr int warps = TH / 32;
  // The column sums' butterfly needs a power of two: a thread's values are padded with zeros up
  // to reduction_width (only the reduction pays for a width like 12, not the row arithmetic).
  static constexpr int reduction_width = next_power_of_two(cols);
  static constexpr int log_width = log2_of(reduction_width);
  // Reflectors per pass of the factor's (not unrolled) reflector loop: within a pass, column j's
  // place among a thread's columns is known up to cols / unroll candidates.
  static constexpr int unroll = factor_unroll_at(W) < cols ? factor_unroll_at(W) : cols;
  using Rows = T[rows_per_thread][cols];
  static_assert(W % G == 0 && G * reduction_width <= 32 && cols % 4 == 0,
                "a width the column sums and vector loads handle");
  static_assert(slots >= W, "every diagonal entry lies in a thread's first row");
  static_assert(cols % unroll == 0, "a pass's candidates cover the thread's columns");
};
template <class T, int W, int TH>
using FactorShape = Shape<T, W, TH, factor_groups_at(W)>;
template <class T, int W, int TH>
using ApplyShape = Shape<T, W, TH, kApplyGroups>;
template <class T, int W, int TH>
using FormQShape = Shape<T, W, TH, form_q_groups_at<T>(W)>;

// Where this thread's entries lie: entry (i, k) is row slot + i·slots, column group·cols + k.
template <class S>
struct Place {
  int slot = static_cast<int>(threadIdx.x) / S::groups;
  int group = static_cast<int>(threadIdx.x) % S::groups;
  __device__ __forceinline__ int row(int i) const { return slot + i * S::slots; }
  __device__ __forceinline__ int col(int k) const { return group * S::cols + k; }
};

// Per-warp column sums and row j of the block, both double-buffered across reflectors: a warp
// that runs ahead into the next reflector writes the other buffer, so one barrier per reflector
// suffices.
template <class S>
struct Scratch {
  using T = typename S::T;
  T partial[2][S::warps][S::width];
  alignas(16) T pivot[2][S::width];
  alignas(16) T total[S::warps][S::width];  // each warp's copy of the block column sums
};

// Block-wide sums of the W columns (p: this thread's columns, each summed over its rows), into
// the warp's copy it returns. Within a warp a transposed butterfly over the lanes of a column
// group, on their RW = reduction_width values (the thread's, then zeros): at each stage a lane
// keeps half of its values and adds its partner's copy of the same half, so RW columns cost about
// RW shuffles, not 5·RW; lane L then holds column L >> (5 − log RW) of group L mod groups. After
// one barrier lane c < W of every warp adds up the warps' partials of column c and parks the
// total in the warp's copy, read back by vector loads for a thread's columns and by a scalar
// load for column j (shuffles are the scarcer resource: one warp-wide shuffle per clock per SM).
template <class S>
__device__ __forceinline__ const typename S::T* block_column_totals(const typename S::T (&p)[S::cols],
                                                                    Scratch<S>& s, int parity) {
  using T = typename S::T;
  constexpr int RW = S::reduction_width, G = S::groups, NW = S::warps;
  constexpr int kShift = 5 - S::log_width;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T q[RW];
#pragma unroll
  for (int k = 0; k < RW; ++k) q[k] = k < S::cols ? p[k] : T(0);
  butterfly<T, RW, RW / 2>(q, lane);
  T x = q[0];
#pragma unroll
  for (int offset = (1 << kShift) >> 1; offset >= G; offset >>= 1) x += __shfl_xor_sync(0xffffffffu, x, offset);
  if ((lane & ((1 << kShift) - 1)) < G && (lane >> kShift) < S::cols)
    s.partial[parity][warp][(lane % G) * S::cols + (lane >> kShift)] = x;
  __syncthreads();
  T sum = 0;
#pragma unroll
  for (int w = 0; w < NW; ++w) sum += s.partial[parity][w][lane % S::width];
  __syncwarp();
  if (lane < S::width) s.total[warp][lane] = sum;
  __syncwarp();
  return s.total[warp];
}

// x[i][k] ← src at Place's row i and column k; rows ≥ `rows` and columns ≥ n are zero.
template <class S, bool kFresh>
__device__ __forceinline__ void load_rows(typename S::Rows& x, const typename S::T* src, std::int64_t ld, int rows,
                                          int n) {
  using T = typename S::T;
  const Place<S> at;
#pragma unroll
  for (int i = 0; i < S::rows_per_thread; ++i) {
    const int r = at.row(i);
#pragma unroll
    for (int k = 0; k < S::cols; ++k) {
      const int c = at.col(k);
      const bool in = r < rows && c < n;
      // kFresh: written by another block of this launch, so past L1 (ld.cg).
      x[i][k] = in ? (kFresh ? __ldcg(src + r + c * ld) : src[r + c * ld]) : T(0);
    }
  }
}

template <class S>
__device__ __forceinline__ void store_rows(const typename S::Rows& x, typename S::T* dst, std::int64_t ld, int rows,
                                           int n) {
  const Place<S> at;
#pragma unroll
  for (int i = 0; i < S::rows_per_thread; ++i) {
    const int r = at.row(i);
#pragma unroll
    for (int k = 0; k < S::cols; ++k)
      if (r < rows && at.col(k) < n) dst[r + at.col(k) * ld] = x[i][k];
  }
}

// R (the top n rows, upper triangle) to dst with zeros below the diagonal; rows 0 … n−1 are the
// first rows of row slots 0 … n−1.
template <class S>
__device__ __forceinline__ void store_r(const typename S::Rows& x, typename S::T* dst, std::int64_t ld, int n,
                                        bool zeros_below = true) {
  using T = typename S::T;
  const Place<S> at;
  const int t = at.slot;
  if (t >= n) return;
#pragma unroll
  for (int k = 0; k < S::cols; ++k) {
    const int c = at.col(k);
    if (c < n && (zeros_below || c >= t)) dst[t + c * ld] = c >= t ? x[0][k] : T(0);
  }
}

// p[k] = Σ_i c[i]·x[i][k] over this thread's rows, for all its columns (columns past the panel's
// are zero in x, so they cost FMAs but no tests).
template <class S>
__device__ __forceinline__ void column_products(const typename S::Rows& x, const typename S::T (&c)[S::rows_per_thread],
                                                typename S::T (&p)[S::cols]) {
#pragma unroll
  for (int k = 0; k < S::cols; ++k) {
    p[k] = 0;
#pragma unroll
    for (int i = 0; i < S::rows_per_thread; ++i) p[k] += c[i] * x[i][k];
  }
}

// row[j] for a runtime j < N by a tree of selects on j's bits (depth ⌈log N⌉, N − 1 selects)
// rather than a dynamic index, which would move the row to local memory. An odd count carries
// its last entry up a level unselected (the bit that would pick past it is 0 for any j < N).
template <class T, int N>
__device__ __forceinline__ T pick(const T (&row)[N], int j, int shift = 0) {
  if constexpr (N == 1) {
    return row[0];
  } else {
    constexpr int H = (N + 1) / 2;
    T half[H];
#pragma unroll
    for (int k = 0; k < H; ++k) half[k] = 2 * k + 1 < N && (j >> shift) & 1 ? row[2 * k + 1] : row[2 * k];
    return pick<T, H>(half, j, shift + 1);
  }
}

// β, τ and 1/(α − β) of the reflector that takes (α, x) to (β, 0), with σ = ‖x‖² > 0. FP64:
// sqrt and correctly rounded reciprocals (MUFU plus two FMAs) instead of divisions, shorter on
// the critical path; τ gets one extra rounding. FP32: MUFU's reciprocal square root and
// reciprocal, each refined by one Newton step (‖·‖ and 1/‖·‖ from one rsqrt), with no branch to
// the IEEE functions' slow paths: 16 fewer instructions and 6 fewer branches a reflector, and a
// shorter chain of latencies on a tree node's critical path. Measured on one H100 (same card,
// interleaved): CAQR s 110592 × 100 0.701 → 0.685 ms, × 32 0.155 → 0.146, 8192 × 64 / 256 / 512
// 0.159 / 0.734 / 1.573 → 0.151 / 0.696 / 1.524; ‖I − QᵀQ‖ and ‖A − QR‖ unchanged over κ = 1e2
// … 1e12 (0.38–1.06 √n ε).
__device__ __forceinline__ void reflector_scalars(double alpha, double sigma, double& beta, double& tau,
                                                  double& scale) {
  const double norm = sqrt(alpha * alpha + sigma);
  beta = alpha >= 0.0 ? -norm : norm;
  tau = (beta - alpha) * __drcp_rn(beta);
  scale = __drcp_rn(alpha - beta);
}
__device__ __forceinline__ void reflector_scalars(float alpha, float sigma, float& beta, float& tau, float& scale) {
  const float s2 = alpha * alpha + sigma;
  const float r = rsqrtf(s2);
  const float n0 = s2 * r;
  const float norm = fmaf(0.5f * r, fmaf(-n0, n0, s2), n0);  // √s2, refined
  const float rn = fmaf(r, fmaf(-norm, r, 1.0f), r);          // 1 / √s2, refined
  const bool positive = alpha >= 0.0f;
  beta = positive ? -norm : norm;
  tau = (beta - alpha) * (positive ? -rn : rn);
  const float d = alpha - beta;
  float q;
  asm("rcp.approx.f32 %0, %1;" : "=f"(q) : "f"(d));
  scale = fmaf(q, fmaf(-d, q, 1.0f), q);
}

// Householder QR (geqr2) of the block in x, left in x as geqrf leaves it (the caller stores it): R
// on and above the diagonal of the top rows, each reflector's v below it; taus to tau. Reflector j
// is applied to the columns past j only, by zeroing τ·w of the others (one select per column, no
// per-entry test), and column j takes v and β in its owner's registers: x holds V until one
// coalesced store after, instead of a strided store per reflector. The reflector loop runs `unroll`
// reflectors per pass: fully unrolled, a 32-wide panel's code outgrows the instruction cache and
// every reflector then waits on instruction fetch. Column j comes from the lanes of its column
// group (one shuffle per row), picked out of their registers by selects among the pass's candidates
// instead of a dynamic index (which would put x in local memory).
template <class S>
__device__ __forceinline__ void factor_block(typename S::Rows& x, int n, typename S::T* tau, Scratch<S>& s) {
  using T = typename S::T;
  constexpr int R = S::rows_per_thread, C = S::cols, G = S::groups, U = S::unroll, M = C / U;
  const Place<S> at;
#pragma unroll 1
  for (int j0 = 0; j0 < n; j0 += U) {
    // Column j0 + u is column u + U·place of group `owner`. A thread's column u' + U·m lies past
    // it when m is past (m, u' > u: at or past) the column's.
    const int owner = j0 / C, place = j0 % C / U;
    bool here[M], past[M], at_or_past[M];
#pragma unroll
    for (int m = 0; m < M; ++m) {
      here[m] = at.group == owner && m == place;
      past[m] = at.group > owner || (at.group == owner && m > place);
      at_or_past[m] = past[m] || here[m];
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const int j = j0 + u;
      if (j >= n) break;
      // Column j of this thread's rows strictly below the diagonal (zero elsewhere); every row
      // past the first lies below the diagonal.
      T below[R];
#pragma unroll
      for (int i = 0; i < R; ++i) {
        T candidates[M];
#pragma unroll
        for (int m = 0; m < M; ++m) candidates[m] = x[i][u + m * U];
        T xj = pick<T, M>(candidates, place);
        if constexpr (G > 1) xj = __shfl_sync(0xffffffffu, xj, (threadIdx.x & 31 & ~(G - 1)) | owner);
        below[i] = i > 0 || at.slot > j ? xj : T(0);
      }
      // Σ_{r > j} x[r][j]·x[r][k]: the norm below the diagonal (k = j) and the products that give w.
      T p[C];
      column_products<S>(x, below, p);
      T* pivot = s.pivot[j & 1];
      if (at.slot == j) store_vec<T, C>(x[0], pivot + at.col(0));
      const T* totals = block_column_totals<S>(p, s, j & 1);
      const T alpha = pivot[j], sigma = totals[j];
      T tau_j = 0, beta = alpha, scale = 0;
      if (sigma != T(0)) reflector_scalars(alpha, sigma, beta, tau_j, scale);
      // τ·w_k with w_k = vᵀx_k = x[j][k] + scale·Σ_{r>j} x[r][j]·x[r][k], for the columns past j.
      T top[C], tot[C];
      load_vec<T, C>(pivot + at.col(0), top);
      load_vec<T, C>(totals + at.col(0), tot);
      T tw[C];
#pragma unroll
      for (int k = 0; k < C; ++k) {
        const bool live = k % U > u ? at_or_past[k / U] : past[k / U];
        tw[k] = live ? tau_j * (top[k] + tot[k] * scale) : T(0);
      }
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const T v = below[i] * scale;
        const bool diagonal = i == 0 && at.slot == j;
        const T vr = diagonal ? T(1) : v;
#pragma unroll
        for (int k = 0; k < C; ++k) x[i][k] -= vr * tw[k];
        // Column j: β on the diagonal, v below it, R's entries above it kept.
        const bool on_or_below = i > 0 || at.slot >= j;
#pragma unroll
        for (int m = 0; m < M; ++m)
          if (here[m] && on_or_below) x[i][u + m * U] = diagonal ? beta : v;
      }
      if (threadIdx.x == 0) tau[j] = tau_j;
    }
  }
}

// x ← x − v·(τ·w)ᵀ over this thread's rows and columns: a reflector applied, w its column sums.
template <class S>
__device__ __forceinline__ void reflect_rows(typename S::Rows& x, const typename S::T (&v)[S::rows_per_thread],
                                             typename S::T tau, const typename S::T (&w)[S::cols]) {
  typename S::T tw[S::cols];
#pragma unroll
  for (int k = 0; k < S::cols; ++k) tw[k] = tau * w[k];
#pragma unroll
  for (int i = 0; i < S::rows_per_thread; ++i)
#pragma unroll
    for (int k = 0; k < S::cols; ++k) x[i][k] -= v[i] * tw[k];
}

// x ← H_0 H_1 … H_{w−1} x (backward: H_{w−1} applied first, as orgqr) or x ← H_{w−1} … H_0 x
// (forward: Qᵀx), with the block's w reflectors (v below the diagonal of `v`, `rows` rows). All W
// columns of x are transformed; those past the caller's tile are zero and stay zero. TauOnV
// scales the thread's rows of v by τ rather than its columns of w, fewer products with groups.
template <class S, bool TauOnV = false>
__device__ __forceinline__ void apply_block(typename S::Rows& x, const typename S::T* v, std::int64_t ldv, int rows,
                                            int w, const typename S::T* tau, Scratch<S>& s, bool forward) {
  using T = typename S::T;
  constexpr int R = S::rows_per_thread, C = S::cols;
  const Place<S> at;
  // Reflector j's rows, loaded one reflector ahead so the (L2) load latency overlaps a step.
  const auto load_reflector = [&](int j, T (&out)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int r = at.row(i);
      out[i] = r == j ? T(1) : (r > j && r < rows ? v[r + j * ldv] : T(0));
    }
  };
  T next[R];
  load_reflector(forward ? 0 : w - 1, next);
#pragma unroll 1
  for (int step = 0; step < w; ++step) {
    const int j = forward ? step : w - 1 - step;
    T vr[R];
#pragma unroll
    for (int i = 0; i < R; ++i) vr[i] = next[i];
    if (step + 1 < w) load_reflector(forward ? j + 1 : j - 1, next);
    T p[C];
    column_products<S>(x, vr, p);
    T tot[C];
    load_vec<T, C>(block_column_totals<S>(p, s, step & 1) + at.col(0), tot);
    const T tau_j = tau[j];
    if constexpr (TauOnV) {  // R products τ·v instead of C products τ·w
#pragma unroll
      for (int i = 0; i < R; ++i) {
        const T tv = tau_j * vr[i];
#pragma unroll
        for (int k = 0; k < C; ++k) x[i][k] -= tv * tot[k];
      }
    } else {
      reflect_rows<S>(x, vr, tau_j, tot);
    }
  }
}

// The columns layout of a 32-wide block of 256 threads (caqr_apply_leaves_columns_kernel's): warp
// w holds columns 4w … 4w + 3 and lane l rows l, l + 32, … of the block's 512.
constexpr int kColumnsPerWarp = 4;
constexpr int kColumnsRows = 16;  // rows a lane holds
template <class T>
using ColumnRows = T[kColumnsRows][kColumnsPerWarp];

// The block's pivot column, double-buffered across reflectors like Scratch's.
template <class T>
struct ColumnsScratch {
  T pivot[2][32 * kColumnsRows];
};

__device__ __forceinline__ int columns_first() { return (static_cast<int>(threadIdx.x) >> 5) * kColumnsPerWarp; }
__device__ __forceinline__ int columns_lane() { return static_cast<int>(threadIdx.x) & 31; }

template <class T, bool kFresh>
__device__ __forceinline__ void load_columns(ColumnRows<T>& x, const T* src, std::int64_t ld, int rows, int n) {
  const int first = columns_first(), lane = columns_lane();
#pragma unroll
  for (int k = 0; k < kColumnsPerWarp; ++k)
#pragma unroll
    for (int i = 0; i < kColumnsRows; ++i) {
      const int r = lane + 32 * i, c = first + k;
      const bool in = r < rows && c < n;
      x[i][k] = in ? (kFresh ? __ldcg(src + r + c * ld) : src[r + c * ld]) : T(0);
    }
}

template <class T>
__device__ __forceinline__ void store_columns(const ColumnRows<T>& x, T* dst, std::int64_t ld, int rows, int n) {
  const int first = columns_first(), lane = columns_lane();
#pragma unroll
  for (int k = 0; k < kColumnsPerWarp; ++k)
#pragma unroll
    for (int i = 0; i < kColumnsRows; ++i)
      if (lane + 32 * i < rows && first + k < n) dst[lane + 32 * i + (first + k) * ld] = x[i][k];
}

// R (the top n rows, upper triangle) to dst, with zeros below the diagonal if asked; row t < n ≤ 32
// is lane t's first row.
template <class T>
__device__ __forceinline__ void store_r_columns(const ColumnRows<T>& x, T* dst, std::int64_t ld, int n,
                                                bool zeros_below = true) {
  const int first = columns_first(), t = columns_lane();
  if (t >= n) return;
#pragma unroll
  for (int k = 0; k < kColumnsPerWarp; ++k) {
    const int c = first + k;
    if (c < n && (zeros_below || c >= t)) dst[t + c * ld] = c >= t ? x[0][k] : T(0);
  }
}

// p[k] = Σ_i c[i]·x[i][k] over this lane's rows, in two chains each.
template <class T>
__device__ __forceinline__ void column_sums(const T (&c)[kColumnsRows], const ColumnRows<T>& x,
                                            T (&p)[kColumnsPerWarp]) {
#pragma unroll
  for (int k = 0; k < kColumnsPerWarp; ++k) {
    T even = 0, odd = 0;
#pragma unroll
    for (int i = 0; i < kColumnsRows; i += 2) {
      even += c[i] * x[i][k];
      odd += c[i + 1] * x[i + 1][k];
    }
    p[k] = even + odd;
  }
}

// The sum over the warp of each lane's a[0 … 3], every lane getting the four totals: the
// transposed butterfly's two stages leave lane l value 2·(l ≥ 16) + (l & 8 ≠ 0) summed over four
// lanes, three more stages sum it over the warp, and each total comes from a lane that holds it.
template <class T>
__device__ __forceinline__ void warp_all_reduce4(T (&a)[4]) {
  butterfly<T, 4, 2>(a, columns_lane());
  T b = a[0];
#pragma unroll
  for (int offset = 4; offset > 0; offset >>= 1) b += __shfl_xor_sync(0xffffffffu, b, offset);
#pragma unroll
  for (int k = 0; k < 4; ++k) a[k] = __shfl_sync(0xffffffffu, b, k * 8);
}

// factor_block in the columns layout. Reflector j: the warp that holds column j parks it (as the
// reflectors before left it) in shared memory; after one barrier every warp reads it and sums it
// against its own four columns and itself (the norm below the diagonal) over the warp, so each warp
// forms the same β, τ and 1/(α − β) and applies the reflector to its columns past j with no
// further exchange. Warps whose columns all lie before j only pass the barrier.
template <class T>
__device__ __forceinline__ void factor_columns(ColumnRows<T>& x, int n, T* tau, ColumnsScratch<T>& s) {
  constexpr int R = kColumnsRows, C = kColumnsPerWarp;
  const int first = columns_first(), lane = columns_lane();
#pragma unroll 1
  for (int j = 0; j < n; ++j) {
    T* const pivot = s.pivot[j & 1];
    const int owner_first = j & ~(C - 1);
    if (first == owner_first) {
#pragma unroll
      for (int k = 0; k < C; ++k)
        if (first + k == j) {
#pragma unroll
          for (int i = 0; i < R; ++i) pivot[lane + 32 * i] = x[i][k];
        }
    }
    __syncthreads();
    if (first + C <= j) continue;  // this warp's columns are all done
    T below[R];
#pragma unroll
    for (int i = 0; i < R; ++i) below[i] = i > 0 || lane > j ? pivot[lane + 32 * i] : T(0);
    const T alpha = pivot[j];
    T p[C];
    column_sums<T>(below, x, p);
    T sq0 = 0, sq1 = 0;
#pragma unroll
    for (int i = 0; i < R; i += 2) {
      sq0 += below[i] * below[i];
      sq1 += below[i + 1] * below[i + 1];
    }
    // Row j of this warp's columns (lane j's first row), fetched before the sums complete.
    T top[C];
#pragma unroll
    for (int k = 0; k < C; ++k) top[k] = __shfl_sync(0xffffffffu, x[0][k], j);
    warp_all_reduce4(p);
    const T sigma = warp_sum(sq0 + sq1);
    T tau_j = 0, beta = alpha, scale = 0;
    if (sigma != T(0)) reflector_scalars(alpha, sigma, beta, tau_j, scale);
    T tw[C];
#pragma unroll
    for (int k = 0; k < C; ++k) tw[k] = first + k > j ? tau_j * (top[k] + p[k] * scale) : T(0);
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const T v = below[i] * scale;
      const bool diagonal = i == 0 && lane == j;
      const T vr = diagonal ? T(1) : v;
#pragma unroll
      for (int k = 0; k < C; ++k) x[i][k] -= vr * tw[k];
      // Column j: β on the diagonal, v below it, R's entries above it kept.
      const bool on_or_below = i > 0 || lane >= j;
#pragma unroll
      for (int k = 0; k < C; ++k)
        if (first + k == j && on_or_below) x[i][k] = diagonal ? beta : v;
    }
    if (first == owner_first && lane == 0) tau[j] = tau_j;
  }
}

__device__ __forceinline__ std::int64_t leaf_row(std::int64_t leaf, const TsqrTreeArgs& tree) {
  return leaf * tree.m / tree.nodes[0];
}

// part: TsqrFactorPart as an int; the leaves' launch of a split factorization ends once each leaf
// has put its R in its parent's stack, and the tree's launch starts from level 1's nodes.
// A leaf and a node go through the same code (one factor_block call site): as separate inlined
// copies, a node's ran cold from the instruction cache, most likely (fetch stalls not measured).
// ncu on H100s, alone: 110592 × 100's 4-column first panel in one launch 30.5 → 15.1 µs; a
// 32-wide panel's tree launch (14 nodes, then the root) 78 → 49 µs, its whole factorization in
// one launch unchanged (~107 µs).
// MB: blocks per SM the registers must allow (see launch_tsqr_register_factor).
template <class T, int W, int TH, int MB = min_blocks<T, W, TH>(), bool Columns = false>
__global__ void __launch_bounds__(TH, MB)
    tsqr_factor_kernel(const T* a, std::int64_t lda, T* v, std::int64_t ldv, T* stacks, T* tau, unsigned* counters,
                       T* r, std::int64_t ldr, bool r_zeros_below, const TsqrTreeArgs tree, int part) {
  using S = FactorShape<T, W, TH>;
  static_assert(!Columns || (W == 32 && TH == 256), "the columns layout is a 32-wide block of 256 threads");
  __shared__ std::conditional_t<Columns, ColumnsScratch<T>, Scratch<S>> s;
  __shared__ int last;
  const int n = tree.n;
  const std::int64_t stack_ld = static_cast<std::int64_t>(tree.fan_in) * n;
  std::conditional_t<Columns, ColumnRows<T>, typename S::Rows> x;

  // Where a level's block lies: the leaf's rows of A (V over them), or the node's stack (V in
  // place). Found again for the store after the factorization rather than kept across it, where
  // the narrow classes (128 registers) spill it.
  struct Place {
    const T* in;
    T* out;
    std::int64_t ld_in, ld_out;
    int rows;
  };
  const auto place = [&](int level, int node) {
    if (level == 0) {
      const std::int64_t row0 = leaf_row(node, tree);
      return Place{a + row0, v + row0, lda, ldv, static_cast<int>(leaf_row(node + 1, tree) - row0)};
    }
    T* const stack = stacks + tree.stack_offset[level] + static_cast<std::int64_t>(node) * stack_ld * n;
    return Place{stack, stack, stack_ld, stack_ld, min(tree.fan_in, tree.nodes[level - 1] - node * tree.fan_in) * n};
  };

  int node = blockIdx.x;
  for (int level = part == static_cast<int>(TsqrFactorPart::tree) ? 1 : 0;; ++level) {
    {
      const Place at = place(level, node);
      // A node's stack past L1: other blocks of this launch wrote it. A leaf's rows of A through
      // it: past it too, 10⁶ × 10 took 5% longer.
      if constexpr (Columns) {
        if (level == 0)
          load_columns<T, false>(x, at.in, at.ld_in, at.rows, n);
        else
          load_columns<T, true>(x, at.in, at.ld_in, at.rows, n);
      } else {
        if (level == 0)
          load_rows<S, false>(x, at.in, at.ld_in, at.rows, n);
        else
          load_rows<S, true>(x, at.in, at.ld_in, at.rows, n);
      }
    }
    T* const node_tau = tau + tree.tau_offset[level] + static_cast<std::int64_t>(node) * n;
    if constexpr (Columns)
      factor_columns<T>(x, n, node_tau, s);
    else
      factor_block<S>(x, n, node_tau, s);
    {
      const Place at = place(level, node);
      if constexpr (Columns)
        store_columns<T>(x, at.out, at.ld_out, at.rows, n);
      else
        store_rows<S>(x, at.out, at.ld_out, at.rows, n);
    }
    const auto put_r = [&](T* dst, std::int64_t ld, bool zeros_below) {
      if constexpr (Columns)
        store_r_columns<T>(x, dst, ld, n, zeros_below);
      else
        store_r<S>(x, dst, ld, n, zeros_below);
    };
    if (level == tree.levels) {
      put_r(r, ldr, r_zeros_below);
      return;
    }
    const int parent = node / tree.fan_in;
    T* stack = stacks + tree.stack_offset[level + 1] + static_cast<std::int64_t>(parent) * stack_ld * n;
    put_r(stack + static_cast<std::int64_t>(node % tree.fan_in) * n, stack_ld, true);
    if (part == static_cast<int>(TsqrFactorPart::leaves)) return;
    const int kids = min(tree.fan_in, tree.nodes[level] - parent * tree.fan_in);
    // Publish this block's R, then count it in; the last of the node's children factors the node.
    __threadfence();
    __syncthreads();
    // The last one also zeroes the counter, so every launch finds (and leaves) them all zero.
    if (threadIdx.x == 0) {
      unsigned* const count = counters + tree.counter_offset[level + 1] + parent;
      last = atomicAdd(count, 1u) + 1 == static_cast<unsigned>(kids);
      if (last) *count = 0;
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    node = parent;
  }
}

// One tree level of the explicit Q, root first: each node's top n rows come from its slot of the
// parent's output (the identity at the root, and at the leaves with IdentityTop: each leaf's own
// thin Q), the rest are zero; the node's reflectors are applied and the result goes to the node's
// output stack (tree levels) or to q (leaves).
template <class T, int W, int TH, bool IdentityTop = false>
__global__ void __launch_bounds__(TH, (form_q_groups_at<T>(W) > 1 ? 2 * 256 / TH : min_blocks<T, W, TH>()))
    tsqr_form_q_kernel(const T* v, std::int64_t ldv, const T* stacks, const T* tau, T* q_stacks, T* q,
                       std::int64_t ldq, const TsqrTreeArgs tree, int level) {
  using S = FormQShape<T, W, TH>;
  __shared__ Scratch<S> s;
  const int n = tree.n, node = blockIdx.x;
  const std::int64_t stack_ld = static_cast<std::int64_t>(tree.fan_in) * n, stack_size = stack_ld * n;
  const Place<S> at;
  const int t = at.slot;  // the top n rows are the first rows of slots 0 … n−1
  typename S::Rows x;
#pragma unroll
  for (int i = 0; i < S::rows_per_thread; ++i)
#pragma unroll
    for (int k = 0; k < S::cols; ++k) x[i][k] = T(0);
  if (IdentityTop || level == tree.levels) {
#pragma unroll
    for (int k = 0; k < S::cols; ++k)
      if (at.col(k) == t && t < n) x[0][k] = T(1);
  } else if (t < n) {
    const int parent = node / tree.fan_in;
    const T* top = q_stacks + tree.stack_offset[level + 1] + parent * stack_size + (node % tree.fan_in) * n;
#pragma unroll
    for (int k = 0; k < S::cols; ++k)
      if (at.col(k) < n) x[0][k] = top[t + at.col(k) * stack_ld];
  }
  const T* node_tau = tau + tree.tau_offset[level] + static_cast<std::int64_t>(node) * n;
  if (level == 0) {
    const std::int64_t row0 = leaf_row(node, tree);
    const int rows = static_cast<int>(leaf_row(node + 1, tree) - row0);
    apply_block<S, (S::groups > 1)>(x, v + row0, ldv, rows, n, node_tau, s, false);
    store_rows<S>(x, q + row0, ldq, rows, n);
  } else {
    const int rows = min(tree.fan_in, tree.nodes[level - 1] - node * tree.fan_in) * n;
    apply_block<S, (S::groups > 1)>(x, stacks + tree.stack_offset[level] + node * stack_size, stack_ld, rows, n, node_tau, s, false);
    store_rows<S>(x, q_stacks + tree.stack_offset[level] + node * stack_size, stack_ld, rows, n);
  }
}

// A leaf's rows of an explicit Q from its thin Q: the tree's part leaves the leaf's input zero
// below its top n rows (the identity, Q's columns, goes through the tree to those rows only), so
// the leaf's reflectors take [Y; 0] to Q_leaf·[Y; 0] = thin·Y, thin = Q_leaf's first n columns.
// thin depends on the leaf's V alone: it is formed (tsqr_form_q_kernel with IdentityTop) as soon
// as the leaves are factored, beside the tree's factorization, and the leaf's 32-step reflector
// chain leaves the critical path for this product: n² FMAs a row, no reduction.
// Block `leaf`: Y (n × n) from the leaf's own top n rows of x, then x's leaf rows ← thin's · Y, in
// place (Y is read whole before any row is written, and a block writes its own leaf's rows only).
template <class T, int W, int TH>
__global__ void __launch_bounds__(TH)
    tsqr_leaf_products_kernel(const T* thin, std::int64_t ldt, T* x, std::int64_t ldx, const TsqrTreeArgs tree) {
  constexpr int R = ApplyShape<T, W, TH>::rows_per_thread, kChunk = 4;
  static_assert(W % kChunk == 0, "whole chunks of columns");
  __shared__ alignas(16) T ys[W][W];  // ys[k][c] = Y(k, c), zero past n
  const int leaf = blockIdx.x, n = tree.n;
  const std::int64_t row0 = leaf_row(leaf, tree);
  const int rows = static_cast<int>(leaf_row(leaf + 1, tree) - row0);
  for (int e = static_cast<int>(threadIdx.x); e < W * W; e += TH) {
    const int k = e % W, c = e / W;
    ys[k][c] = k < n && c < n ? x[row0 + k + static_cast<std::int64_t>(c) * ldx] : T(0);
  }
  T q[R][W];
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int r = static_cast<int>(threadIdx.x) + i * TH;
#pragma unroll
    for (int k = 0; k < W; ++k) q[i][k] = r < rows && k < n ? thin[row0 + r + k * ldt] : T(0);
  }
  __syncthreads();
#pragma unroll 1
  for (int c0 = 0; c0 < n; c0 += kChunk) {
    T acc[R][kChunk] = {};
#pragma unroll
    for (int k = 0; k < W; ++k) {
      T yk[kChunk];
      load_vec<T, kChunk>(&ys[k][c0], yk);
#pragma unroll
      for (int i = 0; i < R; ++i)
#pragma unroll
        for (int c = 0; c < kChunk; ++c) acc[i][c] += q[i][k] * yk[c];
    }
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int r = static_cast<int>(threadIdx.x) + i * TH;
      if (r >= rows) continue;
#pragma unroll
      for (int c = 0; c < kChunk; ++c)
        if (c0 + c < n) x[row0 + r + static_cast<std::int64_t>(c0 + c) * ldx] = acc[i][c];
    }
  }
}

// Each leaf's top n rows of x (n columns) ← the identity's rows: ones on the diagonal of leaf 0's,
// zeros in every other leaf's. Where Q is formed by the tree levels and then the leaves' products,
// those are the only rows read before they are written.
template <class T>
__global__ void leaf_tops_identity_kernel(T* x, std::int64_t ldx, const TsqrTreeArgs tree) {
  const int leaf = blockIdx.x, n = tree.n;
  const std::int64_t row0 = leaf_row(leaf, tree);
  for (int e = static_cast<int>(threadIdx.x); e < n * n; e += static_cast<int>(blockDim.x)) {
    const int r = e % n, c = e / n;
    x[row0 + r + static_cast<std::int64_t>(c) * ldx] = leaf == 0 && r == c ? T(1) : T(0);
  }
}

// CAQR's trailing updates and its explicit Q with a panel's TSQR (anderson10's apply_qt_h and
// apply_qt_tree, register-resident): block (node, tile) applies a leaf's or a tree node's
// reflectors to columns [tile·W, tile·W + W) of x, whose rows are counted from the panel's first
// row. A tree node's rows are the top w rows of its children's representative leaves (child c
// at level ℓ − 1 is represented by leaf c·fan_in^(ℓ−1)); they are gathered, transformed and
// scattered back in place, so the root's output lands in the panel's top w rows.
template <class T, int W, int TH>
__global__ void __launch_bounds__(TH, (min_blocks<T, W, TH>()))
    caqr_apply_leaves_kernel(const T* v, std::int64_t ldv, const T* tau, T* x, std::int64_t ldx, const T* x_in,
                             std::int64_t ld_in, int in_rows, int cols, const TsqrTreeArgs tree, bool forward) {
  // x_in: where x's entries are read (x itself for an apply in place); in_rows: the rows of each
  // leaf read from it, the rest taken as zero.
  using S = ApplyShape<T, W, TH>;
  __shared__ Scratch<S> s;
  const int node = blockIdx.x, c0 = blockIdx.y * W, xc = min(W, cols - c0);
  const auto tile = [&] { return x + leaf_row(node, tree) + static_cast<std::int64_t>(c0) * ldx; };
  const auto rows = [&] { return static_cast<int>(leaf_row(node + 1, tree) - leaf_row(node, tree)); };
  typename S::Rows r;
  load_rows<S, false>(r, x_in + leaf_row(node, tree) + static_cast<std::int64_t>(c0) * ld_in, ld_in,
                      min(rows(), in_rows), xc);
  apply_block<S>(r, v + leaf_row(node, tree), ldv, rows(), tree.n,
                 tau + tree.tau_offset[0] + static_cast<std::int64_t>(node) * tree.n, s, forward);
  // The tile's place is evaluated again rather than kept across the reflector loop, where it
  // spills (FP32 blocks have 128 registers).
  store_rows<S>(r, tile(), ldx, rows(), xc);
}

// A one in global memory, where the staging copies the diagonal's ones from.
template <class T>
__device__ const T kUnit = T(1);

// The bytes of a leaf's V staged in shared memory for caqr_apply_leaves_columns_kernel.
template <class T, int W, int TH>
constexpr std::size_t staged_bytes() {
  return sizeof(T) * ApplyShape<T, W, TH>::block_rows * W;
}

// CAQR's 32-wide leaf apply (FP32 and FP64, 256 threads): each warp owns whole columns of the
// tile, warp w columns 4w … 4w + 3 over all the leaf's rows (lane l holds rows l, l + 32, …). A
// reflector's column sums are then one warp's all-reduce of four values (ten shuffles) and no step
// waits at a block barrier. The leaf's V and τ are staged in shared memory, in groups of 8 columns
// in the order the steps take them (column 0 first for Qᵀ, the last first for Q), each one
// cp.async group with zeros where not read and the diagonal's ones copied from a constant, so no
// branch per entry: the steps start once the first group has landed, and the group waits are the
// block's only barriers. A warp whose columns lie past the tile passes those barriers and returns.
// A step is 128 FMAs, 16 shared loads and 10 shuffles a warp. With x_in null, x starts as the
// identity's leading columns (launch_tsqr_register_leaf_q's thin Q's).
// It replaced a kernel with four lanes to a row slot and 8 columns each, whose steps each summed the
// columns over the block (a butterfly, partials through shared memory and a barrier). One H100,
// same card, interleaved, two runs each, ms: FP32 110592 × 100 0.655 → 0.609, × 256 2.703 → 2.395,
// 300000 × 100 1.553 → 1.434, × 256 6.93 → 6.09, 8192 × 512 1.531 → 1.470, × 32 and × 64 even;
// a Q tail apply alone 37–41 → 31.5–35 µs. FP64 took caqr_apply_leaves_kernel (16-wide tiles, 128
// threads): 110592 × 100 1.248 → 1.169, × 256 5.47 → 4.78, × 64 0.600 → 0.569, 8192 × 512 2.63 →
// 2.47. For FP32 columns narrower than a tile the narrow classes stay (even at 110592 and 300000
// × 100; 300000 × 41 0.431 → 0.450 with the FP32 remainder panel last as well).
template <class T, int W, int TH, bool Forward>
__global__ void __launch_bounds__(TH, (sizeof(T) == 4 ? 2 * 256 / TH : 1))
    caqr_apply_leaves_columns_kernel(const T* v, std::int64_t ldv, const T* tau, T* x, std::int64_t ldx,
                                     const T* x_in, std::int64_t ld_in, int in_rows, int cols,
                                     const TsqrTreeArgs tree, bool /* forward: Forward */, int level) {
  constexpr int B = ApplyShape<T, W, TH>::block_rows, R = kColumnsRows, kGroup = 8, kGroups = W / kGroup;
  static_assert(W == kColumnsPerWarp * TH / 32 && B == 32 * R && B == 2 * TH && kGroups == 4,
                "the columns layout, two staged rows of a column per thread");
  extern __shared__ __align__(16) unsigned char staged[];
  T* const sv = reinterpret_cast<T*>(staged);
  __shared__ T taus[W];
  const int node = blockIdx.x, c0 = blockIdx.y * W, xc = min(W, cols - c0), n = tree.n;
  const int lane = columns_lane(), first = columns_first();
  // A leaf: its rows of x from row0 on, V over them. A tree node (level ≥ 1, n = 32): child i's
  // top 32 rows (those of its first leaf) are the node's rows 32i …, lane l's register row i;
  // V in the level's stack, from v on (ldv its leading dimension).
  const std::int64_t row0 = level == 0 ? leaf_row(node, tree) : 0;
  const int kids = level == 0 ? 0 : min(tree.fan_in, tree.nodes[level - 1] - node * tree.fan_in);
  const int m = level == 0 ? static_cast<int>(leaf_row(node + 1, tree) - row0) : kids * n;
  std::int64_t span = 1;  // leaves per child
  for (int l = 1; l < level; ++l) span *= tree.fan_in;
  const auto child_row = [&](int i) {
    return leaf_row((static_cast<std::int64_t>(node) * tree.fan_in + i) * span, tree) + lane;
  };
  const T* const node_v = level == 0 ? v + row0 : v + static_cast<std::int64_t>(node) * ldv * n;
  const T* const node_tau = tau + tree.tau_offset[level] + static_cast<std::int64_t>(node) * n;
  if (static_cast<int>(threadIdx.x) < n) taus[threadIdx.x] = node_tau[threadIdx.x];
  {
    const int t = static_cast<int>(threadIdx.x);
    const T* const lo = node_v + t;
    const T* const hi = lo + TH;
    const bool hi_in = t + TH < m;
#pragma unroll
    for (int g = 0; g < kGroups; ++g) {
#pragma unroll
      for (int u = 0; u < kGroup; ++u) {
        const int j = Forward ? g * kGroup + u : W - 1 - g * kGroup - u;
        if (j < n) {
          const std::int64_t column = static_cast<std::int64_t>(j) * ldv;
          const bool lo_in = t > j && t < m;
          cp_async_entry(sv + j * B + t, t == j ? &kUnit<T> : lo + (lo_in ? column : 0), lo_in || t == j);
          cp_async_entry(sv + j * B + TH + t, hi + (hi_in ? column : 0), hi_in);
        }
      }
      cp_async_commit();
    }
  }
  // The step's column lies in group `needed` (counted from column W − 1 for Q); every warp passes
  // the same barriers, the idle ones included.
  int landed = 0;
  const auto wait_for = [&](int step) {
    const int needed = (Forward ? step : W - n + step) / kGroup;
    if (needed < landed) return;
    switch (needed) {
      case 0: cp_async_wait<3>(); break;
      case 1: cp_async_wait<2>(); break;
      case 2: cp_async_wait<1>(); break;
      default: cp_async_wait<0>(); break;
    }
    __syncthreads();
    landed = needed + 1;
  };
  if (first >= xc) {
    for (int step = 0; step < n; ++step) wait_for(step);
    return;
  }
  ColumnRows<T> r;
  T* const tile = x + static_cast<std::int64_t>(c0 + first) * ldx;
  if (level > 0) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const std::int64_t g = i < kids ? child_row(i) : 0;
#pragma unroll
      for (int k = 0; k < kColumnsPerWarp; ++k) r[i][k] = i < kids && first + k < xc ? tile[g + k * ldx] : T(0);
    }
  } else if (x_in != nullptr) {
    load_columns<T, false>(r, x_in + row0 + static_cast<std::int64_t>(c0) * ld_in, ld_in, min(m, in_rows), xc);
  } else {  // the identity's leading columns: the leaf's thin Q
#pragma unroll
    for (int k = 0; k < kColumnsPerWarp; ++k)
#pragma unroll
      for (int i = 0; i < R; ++i) r[i][k] = lane + 32 * i == c0 + first + k && first + k < xc ? T(1) : T(0);
  }
#pragma unroll 1
  for (int step = 0; step < n; ++step) {
    wait_for(step);
    const int j = Forward ? step : n - 1 - step;
    const T* const vcol = sv + j * B + lane;
    T vr[R];
#pragma unroll
    for (int i = 0; i < R; ++i) vr[i] = vcol[32 * i];
    T tw[kColumnsPerWarp];
    column_sums<T>(vr, r, tw);
    warp_all_reduce4(tw);
    const T tau_j = taus[j];
#pragma unroll
    for (int k = 0; k < kColumnsPerWarp; ++k) tw[k] *= tau_j;
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
      for (int k = 0; k < kColumnsPerWarp; ++k) r[i][k] -= vr[i] * tw[k];
  }
  if (level > 0) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
      if (i >= kids) continue;
      const std::int64_t g = child_row(i);
#pragma unroll
      for (int k = 0; k < kColumnsPerWarp; ++k)
        if (first + k < xc) tile[g + k * ldx] = r[i][k];
    }
    return;
  }
  store_columns<T>(r, x + row0 + static_cast<std::int64_t>(c0) * ldx, ldx, m, xc);
}

template <class T, int W, int TH>
__global__ void __launch_bounds__(TH, (min_blocks<T, W, TH>()))
    caqr_apply_tree_kernel(const T* stacks, const T* tau, T* x, std::int64_t ldx, int cols, const TsqrTreeArgs tree,
                           int level, bool forward) {
  using S = ApplyShape<T, W, TH>;
  constexpr int R = S::rows_per_thread, C = S::cols;
  __shared__ Scratch<S> s;
  const int node = blockIdx.x, c0 = blockIdx.y * W, xc = min(W, cols - c0), w = tree.n;
  const int kids = min(tree.fan_in, tree.nodes[level - 1] - node * tree.fan_in), rows = kids * w;
  std::int64_t span = 1;  // leaves per child
  for (int l = 1; l < level; ++l) span *= tree.fan_in;
  const std::int64_t first_child = static_cast<std::int64_t>(node) * tree.fan_in;
  const Place<S> at;
  typename S::Rows r;
  T* base = x + static_cast<std::int64_t>(c0) * ldx;
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int row = at.row(i);
    const std::int64_t g = row < rows ? leaf_row((first_child + row / w) * span, tree) + row % w : 0;
#pragma unroll
    for (int k = 0; k < C; ++k) r[i][k] = row < rows && at.col(k) < xc ? base[g + at.col(k) * ldx] : T(0);
  }
  const std::int64_t stack_ld = static_cast<std::int64_t>(tree.fan_in) * w;
  apply_block<S>(r, stacks + tree.stack_offset[level] + node * stack_ld * w, stack_ld, rows, w,
                 tau + tree.tau_offset[level] + static_cast<std::int64_t>(node) * w, s, forward);
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int row = at.row(i);
    if (row >= rows) continue;
    const std::int64_t g = leaf_row((first_child + row / w) * span, tree) + row % w;
#pragma unroll
    for (int k = 0; k < C; ++k)
      if (at.col(k) < xc) base[g + at.col(k) * ldx] = r[i][k];
  }
}

// The most rows a leaf has.
std::int64_t most_leaf_rows(const TsqrTreeArgs& tree) { return (tree.m + tree.nodes[0] - 1) / tree.nodes[0]; }

template <class T>
void check_tree(const TsqrTreeArgs& tree) {
  const int w = tsqr_register_width(tree.n);
  if (w == 0)
    throw std::invalid_argument("register TSQR: " + std::to_string(tree.n) + " columns; it factors 1 … " +
                                std::to_string(kTsqrMaxWidth));
  if (tree.levels < 0 || tree.levels > kTsqrMaxLevels || tree.nodes[tree.levels] != 1 || tree.nodes[0] < 1)
    throw std::invalid_argument("register TSQR: malformed tree (levels " + std::to_string(tree.levels) + ")");
  if (tree.threads != 128 && tree.threads != 256)
    throw std::invalid_argument("register TSQR: " + std::to_string(tree.threads) + " threads per block; 128 or 256");
  if (most_leaf_rows(tree) > tsqr_register_block_rows<T>(w, tree.threads))
    throw std::invalid_argument("register TSQR: " + std::to_string(tree.nodes[0]) + " leaves cannot hold " +
                                std::to_string(tree.m) + " rows");
}

// f(w, th) with w = width (one of kWidths) and th = threads (128 or 256) as
// std::integral_constant: the launchers' one dispatch onto the compiled classes.
template <std::size_t... I, class F>
void with_width(std::index_sequence<I...>, int width, F&& f) {
  ((width == kWidths[I] ? f(std::integral_constant<int, kWidths[I]>{}) : void()), ...);
}
template <class F>
void with_class(int width, int threads, F&& f) {
  with_width(std::make_index_sequence<std::size(kWidths)>{}, width, [&](auto w) {
    if (threads == 128)
      f(w, std::integral_constant<int, 128>{});
    else
      f(w, std::integral_constant<int, 256>{});
  });
}

// Whether the tree's blocks take the columns layout: the 32-wide class at 256 threads.
bool columns_layout(const TsqrTreeArgs& tree) {
  return tsqr_register_width(tree.n) == kTsqrMaxWidth && tree.threads == kColumnsThreads;
}

// The columns apply's shared memory (V staged), allowed once per precision; its bytes.
template <class T>
std::size_t prepare_columns_apply() {
  constexpr int W = kTsqrMaxWidth, TH = kColumnsThreads;
  constexpr std::size_t bytes = staged_bytes<T, W, TH>();
  static const bool attribute_set = [] {
    for (const void* kernel : {reinterpret_cast<const void*>(caqr_apply_leaves_columns_kernel<T, W, TH, true>),
                               reinterpret_cast<const void*>(caqr_apply_leaves_columns_kernel<T, W, TH, false>)})
      GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    return true;
  }();
  (void)attribute_set;
  return bytes;
}

}  // namespace

static_assert(kWidths[std::size(kWidths) - 1] == kTsqrMaxWidth, "the widest class is the widest panel");

int tsqr_register_width(int n) {
  if (n < 1) return 0;
  for (const int w : kWidths)
    if (n <= w) return w;
  return 0;
}

template <class T>
int tsqr_register_block_rows(int width, int threads) {
  const bool compiled = width >= 1 && tsqr_register_width(width) == width;  // a class is its own width
  if (!compiled || (threads != 128 && threads != 256)) return 0;
  int rows = 0;
  with_class(width, threads, [&](auto w, auto th) {
    using F = FactorShape<T, decltype(w)::value, decltype(th)::value>;
    using A = ApplyShape<T, decltype(w)::value, decltype(th)::value>;
    static_assert(F::block_rows == A::block_rows &&
                      F::block_rows == FormQShape<T, decltype(w)::value, decltype(th)::value>::block_rows,
                  "the factor's and the apply kernels' blocks hold the same rows");
    rows = F::block_rows;
  });
  return rows;
}

template <class T>
void launch_tsqr_register_factor(const T* a, std::int64_t lda, T* v, std::int64_t ldv, T* stacks, T* tau,
                                 unsigned* counters, T* r, std::int64_t ldr, bool r_zeros_below,
                                 const TsqrTreeArgs& tree, cudaStream_t stream, TsqrFactorPart part) {
  check_tree<T>(tree);
  if (tree.levels == 0 && part != TsqrFactorPart::whole) {  // the one leaf is the root
    if (part == TsqrFactorPart::tree) return;
    part = TsqrFactorPart::whole;
  }
  // The columns layout (factor_columns) for 32-wide blocks of 256 threads: FP64's leaves and tree
  // nodes, and FP32's leaves where there are more of them than SMs (two blocks per SM, one wave).
  // One H100, same card, interleaved, two runs each, against the rows layout (FP32's leaves held to
  // 128 registers there, two blocks per SM), ms: FP32 CAQR 110592 × 100 0.607 → 0.588, × 64 0.288
  // → 0.279, × 32 0.1245 → 0.1224, 300000 × 100 1.432 → 1.388, × 32 0.275 → 0.262, TSQR 300000 ×
  // 32 0.282 → 0.268; FP64 CAQR 110592 × 100 1.174 → 1.135, × 64 0.570 → 0.556, 8192 × 512 2.478
  // → 2.370. A 32-wide panel's 216 leaves at 110592 rows took 39.6–41.5 µs on the timeline against
  // 49.8. FP32's tree nodes (a latency-bound chain on a few SMs, 186 registers in rows) ran slower
  // in columns: a panel's two levels 46–54 → 49–68 µs, CAQR 110592 × 32 0.124 → 0.134 ms.
  const bool columns_leaves = columns_layout(tree) && (sizeof(T) == 8 || tree.nodes[0] > current_device_sm_count());
  if (sizeof(T) == 4 && columns_leaves && part == TsqrFactorPart::whole) {
    // FP32 leaves in columns and the tree in rows: the whole factorization is the split one.
    launch_tsqr_register_factor<T>(a, lda, v, ldv, stacks, tau, counters, r, ldr, r_zeros_below, tree, stream,
                                   TsqrFactorPart::leaves);
    launch_tsqr_register_factor<T>(a, lda, v, ldv, stacks, tau, counters, r, ldr, r_zeros_below, tree, stream,
                                   TsqrFactorPart::tree);
    return;
  }
  const dim3 grid(static_cast<unsigned>(tree.nodes[part == TsqrFactorPart::tree ? 1 : 0]));
  with_class(tsqr_register_width(tree.n), tree.threads, [&](auto w, auto th) {
    constexpr int W = decltype(w)::value, TH = decltype(th)::value;
    if constexpr (W == kTsqrMaxWidth && TH == kColumnsThreads) {
      if (sizeof(T) == 8 || (columns_leaves && part == TsqrFactorPart::leaves)) {
        tsqr_factor_kernel<T, W, TH, sizeof(T) == 4 ? 2 : 1, true><<<grid, TH, 0, stream>>>(
            a, lda, v, ldv, stacks, tau, counters, r, ldr, r_zeros_below, tree, static_cast<int>(part));
        return;
      }
    }
    tsqr_factor_kernel<T, W, TH><<<grid, TH, 0, stream>>>(a, lda, v, ldv, stacks, tau, counters, r, ldr, r_zeros_below,
                                                          tree, static_cast<int>(part));
  });
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void launch_tsqr_register_leaf_q(const T* v, std::int64_t ldv, const T* tau, T* thin, std::int64_t ldt,
                                 const TsqrTreeArgs& tree, cudaStream_t stream) {
  check_tree<T>(tree);
  const unsigned leaves = static_cast<unsigned>(tree.nodes[0]);
  if (columns_layout(tree)) {
    // 32-wide leaves by the columns apply on the identity. One H100, same card, interleaved, two
    // runs each, against tsqr_form_q_kernel, ms: FP32 TSQR 300000 × 32 0.2669 → 0.2629, CAQR
    // 300000 × 32 0.2614 → 0.2596, 110592 × 64 / 100 / 256 even; FP64 CAQR 110592 × 64 0.556 →
    // 0.532, × 256 4.834 → 4.796, TSQR 110592 × 32 0.2306 → 0.2285.
    const std::size_t bytes = prepare_columns_apply<T>();
    caqr_apply_leaves_columns_kernel<T, kTsqrMaxWidth, kColumnsThreads, false><<<leaves, kColumnsThreads, bytes, stream>>>(
        v, ldv, tau, thin, ldt, nullptr, 0, 0, tree.n, tree, false, 0);
    GPUFACT_CHECK_LAUNCH();
    return;
  }
  with_class(tsqr_register_width(tree.n), tree.threads, [&](auto w, auto th) {
    constexpr int W = decltype(w)::value, TH = decltype(th)::value;
    tsqr_form_q_kernel<T, W, TH, true><<<leaves, TH, 0, stream>>>(v, ldv, nullptr, tau, nullptr, thin, ldt, tree, 0);
  });
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void launch_tsqr_register_leaf_tops_identity(T* x, std::int64_t ldx, const TsqrTreeArgs& tree, cudaStream_t stream) {
  check_tree<T>(tree);
  leaf_tops_identity_kernel<T><<<static_cast<unsigned>(tree.nodes[0]), 128, 0, stream>>>(x, ldx, tree);
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void launch_caqr_register_leaf_products(const T* thin, std::int64_t ldt, T* x, std::int64_t ldx,
                                        const TsqrTreeArgs& tree, cudaStream_t stream) {
  check_tree<T>(tree);
  with_class(tsqr_register_width(tree.n), tree.threads, [&](auto w, auto th) {
    constexpr int W = decltype(w)::value, TH = decltype(th)::value;
    tsqr_leaf_products_kernel<T, W, TH><<<static_cast<unsigned>(tree.nodes[0]), TH, 0, stream>>>(thin, ldt, x, ldx,
                                                                                                tree);
  });
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void launch_tsqr_register_form_q(const T* v, std::int64_t ldv, const T* stacks, const T* tau, T* q_stacks, T* q,
                                 std::int64_t ldq, const TsqrTreeArgs& tree, cudaStream_t stream) {
  check_tree<T>(tree);
  for (int level = tree.levels; level >= 0; --level) {
    const dim3 grid(static_cast<unsigned>(tree.nodes[level]));
    with_class(tsqr_register_width(tree.n), tree.threads, [&](auto w, auto th) {
      constexpr int W = decltype(w)::value, TH = decltype(th)::value;
      tsqr_form_q_kernel<T, W, TH><<<grid, TH, 0, stream>>>(v, ldv, stacks, tau, q_stacks, q, ldq, tree, level);
    });
    GPUFACT_CHECK_LAUNCH();
  }
}

bool caqr_register_levels_by_columns(const TsqrTreeArgs& tree) {
  return tree.n == kTsqrMaxWidth && columns_layout(tree);
}

template <class T>
void launch_caqr_register_apply_level(const T* stacks, const T* tau, T* x, std::int64_t ldx, std::int64_t cols,
                                      const TsqrTreeArgs& tree, int level, bool transpose, cudaStream_t stream) {
  check_tree<T>(tree);
  if (!caqr_register_levels_by_columns(tree))
    throw std::invalid_argument("register CAQR: a tree level by the columns apply takes " +
                                std::to_string(kTsqrMaxWidth) + " columns and " + std::to_string(kColumnsThreads) +
                                " threads, not " + std::to_string(tree.n) + " and " + std::to_string(tree.threads));
  if (level < 1 || level > tree.levels)
    throw std::invalid_argument("register CAQR: tree level " + std::to_string(level) + "; the tree has 1 … " +
                                std::to_string(tree.levels));
  if (cols <= 0) return;
  constexpr int W = kTsqrMaxWidth, TH = kColumnsThreads;
  const std::int64_t tiles = (cols + W - 1) / W;
  if (tiles > 65535) throw std::invalid_argument("register CAQR: " + std::to_string(cols) + " columns is too many tiles");
  const std::size_t bytes = prepare_columns_apply<T>();
  const dim3 grid(static_cast<unsigned>(tree.nodes[level]), static_cast<unsigned>(tiles));
  const T* const v = stacks + tree.stack_offset[level];
  const std::int64_t ldv = static_cast<std::int64_t>(tree.fan_in) * tree.n;
  const int c = static_cast<int>(cols);
  if (transpose)
    caqr_apply_leaves_columns_kernel<T, W, TH, true><<<grid, TH, bytes, stream>>>(
        v, ldv, tau, x, ldx, x, ldx, std::numeric_limits<int>::max(), c, tree, true, level);
  else
    caqr_apply_leaves_columns_kernel<T, W, TH, false><<<grid, TH, bytes, stream>>>(
        v, ldv, tau, x, ldx, x, ldx, std::numeric_limits<int>::max(), c, tree, false, level);
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void launch_caqr_register_apply(const T* v, std::int64_t ldv, const T* stacks, const T* tau, T* x, std::int64_t ldx,
                                std::int64_t cols, const TsqrTreeArgs& tree, bool transpose, cudaStream_t stream,
                                bool with_tree, const T* x_in, std::int64_t ld_in, bool x_tops_only) {
  check_tree<T>(tree);
  if (x_in != nullptr && with_tree)
    throw std::invalid_argument("register CAQR: x read from elsewhere (x_in) takes the leaves alone (with_tree false)");
  if (x_tops_only && (transpose || with_tree))
    throw std::invalid_argument("register CAQR: x zero below the leaf tops (x_tops_only) takes Q's leaves alone");
  const int in_rows = x_tops_only ? tree.n : std::numeric_limits<int>::max();
  if (cols <= 0) return;
  const int w = tsqr_register_width(tree.n);
  const unsigned tiles = static_cast<unsigned>((cols + w - 1) / w);
  if (tiles > 65535) throw std::invalid_argument("register CAQR: " + std::to_string(cols) + " columns is too many tiles");
  const int c = static_cast<int>(cols);
  const T* const src = x_in != nullptr ? x_in : x;
  const std::int64_t ld_src = x_in != nullptr ? ld_in : ldx;
  auto leaves = [&](auto kernel, int threads, unsigned col_tiles, std::size_t shared = 0) {
    kernel<<<dim3(static_cast<unsigned>(tree.nodes[0]), col_tiles), threads, shared, stream>>>(
        v, ldv, tau, x, ldx, src, ld_src, in_rows, c, tree, transpose);
    GPUFACT_CHECK_LAUNCH();
  };
  auto level = [&](auto kernel, int threads, int l) {
    kernel<<<dim3(static_cast<unsigned>(tree.nodes[l]), tiles), threads, 0, stream>>>(stacks, tau, x, ldx, c, tree, l,
                                                                                      transpose);
    GPUFACT_CHECK_LAUNCH();
  };
  const int levels = with_tree ? tree.levels : 0;
  auto run = [&](auto leaf_kernel, auto tree_kernel, int threads, std::size_t leaf_shared) {
    if (transpose) {  // Qᵀ: the leaves first, then the tree bottom-up
      leaves(leaf_kernel, threads, tiles, leaf_shared);
      for (int l = 1; l <= levels; ++l) level(tree_kernel, threads, l);
    } else {  // Q: the tree top-down, then the leaves
      for (int l = levels; l >= 1; --l) level(tree_kernel, threads, l);
      leaves(leaf_kernel, threads, tiles, leaf_shared);
    }
  };
  // Columns narrower than the panel: FP32 leaves by a narrower column class at 128 threads when
  // its block holds a leaf's rows (a 32-wide panel's 512-row leaves on 4 columns: 6 rows × 12
  // columns a thread instead of 2 × 32, so a reflector's column sums cover 16 columns, not 32).
  // Measured on one H100 (CAQR, 110592 rows, ms): × 100 (a last panel of 4 columns) 1.007 → 0.968,
  // × 72 0.665 → 0.614. 32-wide panels' leaves otherwise by the columns kernel, FP64's at any
  // width (see caqr_apply_leaves_columns_kernel).
  const bool by_columns = columns_layout(tree);
  const int narrow = tsqr_register_width(static_cast<int>(std::min<std::int64_t>(cols, kTsqrMaxWidth)));
  if (!with_tree && narrow < w && !(by_columns && sizeof(T) == 8) &&
      most_leaf_rows(tree) <= tsqr_register_block_rows<T>(narrow, 128)) {
    with_class(narrow, 128, [&](auto cw, auto th) {
      constexpr int W = decltype(cw)::value, TH = decltype(th)::value;
      leaves(caqr_apply_leaves_kernel<T, W, TH>, TH, static_cast<unsigned>((cols + W - 1) / W));
    });
    return;
  }
  if (by_columns) {
    constexpr int W = kTsqrMaxWidth, TH = kColumnsThreads;
    const std::size_t bytes = prepare_columns_apply<T>();
    const auto columns = [&](auto leaf_kernel) {
      const auto node_level = [&](int l) {
        if (caqr_register_levels_by_columns(tree))
          launch_caqr_register_apply_level<T>(stacks, tau, x, ldx, cols, tree, l, transpose, stream);
        else
          level(caqr_apply_tree_kernel<T, W, TH>, TH, l);
      };
      const auto leaf_level = [&] {
        leaf_kernel<<<dim3(static_cast<unsigned>(tree.nodes[0]), tiles), TH, bytes, stream>>>(
            v, ldv, tau, x, ldx, src, ld_src, in_rows, c, tree, transpose, 0);
        GPUFACT_CHECK_LAUNCH();
      };
      if (transpose) {
        leaf_level();
        for (int l = 1; l <= levels; ++l) node_level(l);
      } else {
        for (int l = levels; l >= 1; --l) node_level(l);
        leaf_level();
      }
    };
    if (transpose)
      columns(caqr_apply_leaves_columns_kernel<T, W, TH, true>);
    else
      columns(caqr_apply_leaves_columns_kernel<T, W, TH, false>);
    return;
  }
  with_class(w, tree.threads, [&](auto cw, auto th) {
    constexpr int W = decltype(cw)::value, TH = decltype(th)::value;
    run(caqr_apply_leaves_kernel<T, W, TH>, caqr_apply_tree_kernel<T, W, TH>, TH, 0);
  });
}

#define GPUFACT_INSTANTIATE(T)                                                                                     \
  template int tsqr_register_block_rows<T>(int, int);                                                                  \
  template void launch_tsqr_register_factor<T>(const T*, std::int64_t, T*, std::int64_t, T*, T*, unsigned*, T*,    \
                                               std::int64_t, bool, const TsqrTreeArgs&, cudaStream_t,             \
                                               TsqrFactorPart);                                                   \
  template void launch_tsqr_register_form_q<T>(const T*, std::int64_t, const T*, const T*, T*, T*, std::int64_t,   \
                                               const TsqrTreeArgs&, cudaStream_t);                                \
  template void launch_tsqr_register_leaf_q<T>(const T*, std::int64_t, const T*, T*, std::int64_t,                \
                                               const TsqrTreeArgs&, cudaStream_t);                                \
  template void launch_caqr_register_leaf_products<T>(const T*, std::int64_t, T*, std::int64_t,                   \
                                                      const TsqrTreeArgs&, cudaStream_t);                         \
  template void launch_tsqr_register_leaf_tops_identity<T>(T*, std::int64_t, const TsqrTreeArgs&, cudaStream_t);    \
  template void launch_caqr_register_apply_level<T>(const T*, const T*, T*, std::int64_t, std::int64_t,          \
                                                    const TsqrTreeArgs&, int, bool, cudaStream_t);                \
  template void launch_caqr_register_apply<T>(const T*, std::int64_t, const T*, const T*, T*, std::int64_t,        \
                                              std::int64_t, const TsqrTreeArgs&, bool, cudaStream_t, bool, const T*, \
                                              std::int64_t, bool);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact::kernels
