#include "kernels/qr/tsqr_register.cuh"

#include "core/cuda/check.hpp"

#include <cstddef>
#include <iterator>
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

// Rows per thread at width w: at least kEntries entries, so 12 wide holds 6 rows (72 entries;
// measured on the H200 at 10⁶ × 10: 5 rows run 4% slower in FP32, 4 rows 8%).
constexpr int rows_per_thread_at(int w) { return (kEntries + w - 1) / w; }

// The compiled widths: a panel runs at the narrowest that holds it, so up to 12 columns do no
// arithmetic on the 4 more a 16-wide block would pad.
constexpr int kWidths[] = {12, 16, 32};

// Blocks per SM the registers must allow: FP32 blocks up to 16 wide keep two 256-thread (four
// 128-thread) blocks resident (128 registers), FP64 blocks take what their data registers need.
template <class T, int W, int TH>
constexpr int min_blocks() {
  return sizeof(T) == 4 ? (W <= 16 ? 2 : 1) * 256 / TH : 1;
}

constexpr int next_power_of_two(int w) { return w <= 1 ? 1 : 2 * next_power_of_two((w + 1) / 2); }
constexpr int log2_of(int w) { return w <= 1 ? 0 : 1 + log2_of(w / 2); }

template <class T, int W, int TH>
struct Shape {
  static constexpr int rows_per_thread = rows_per_thread_at(W);
  // The column sums' butterfly needs a power of two: W's values are padded with zeros up to
  // reduction_width (only the reduction pays for a width like 12, not the row arithmetic).
  static constexpr int reduction_width = next_power_of_two(W);
  static constexpr int log_width = log2_of(reduction_width);
  static_assert(reduction_width <= 32 && W % 4 == 0, "a width the column sums and vector loads handle");
};

// Per-warp column sums and row j of the block, both double-buffered across reflectors: a warp
// that runs ahead into the next reflector writes the other buffer, so one barrier per reflector
// suffices.
template <class T, int W, int TH>
struct Scratch {
  T partial[2][(TH / 32)][Shape<T, W, TH>::reduction_width];
  alignas(16) T pivot[2][W];
  alignas(16) T total[TH / 32][W];  // each warp's copy of the block column sums (read back by vector loads)
  T beta[W];                         // R's diagonal
};

// dst ← src[0 … W) by 16-byte shared-memory loads (W/4 in FP32, W/2 in FP64) instead of W
// scalar loads or shuffles.
template <class T, int W>
__device__ __forceinline__ void load_vec(const T* src, T (&dst)[W]) {
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int c = 0; c < W / 4; ++c) {
      const float4 v = reinterpret_cast<const float4*>(src)[c];
      dst[4 * c] = v.x;
      dst[4 * c + 1] = v.y;
      dst[4 * c + 2] = v.z;
      dst[4 * c + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int c = 0; c < W / 2; ++c) {
      const double2 v = reinterpret_cast<const double2*>(src)[c];
      dst[2 * c] = v.x;
      dst[2 * c + 1] = v.y;
    }
  }
}

// dst[0 … W) ← src by 16-byte shared-memory stores.
template <class T, int W>
__device__ __forceinline__ void store_vec(const T (&src)[W], T* dst) {
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int c = 0; c < W / 4; ++c)
      reinterpret_cast<float4*>(dst)[c] = make_float4(src[4 * c], src[4 * c + 1], src[4 * c + 2], src[4 * c + 3]);
  } else {
#pragma unroll
    for (int c = 0; c < W / 2; ++c) reinterpret_cast<double2*>(dst)[c] = make_double2(src[2 * c], src[2 * c + 1]);
  }
}

// One stage of the transposed butterfly per H (W/2, W/4, …, 1): the lane keeps H of its values
// and adds its partner's (lane ^ offset) copy of the same H.
template <class T, int W, int H>
__device__ __forceinline__ void butterfly(T (&p)[W], int lane) {
  if constexpr (H >= 1) {
    constexpr int offset = 32 * H / W;
    const bool upper = (lane & offset) != 0;
#pragma unroll
    for (int i = 0; i < H; ++i) {
      const T send = upper ? p[i] : p[i + H];
      const T keep = upper ? p[i + H] : p[i];
      p[i] = keep + __shfl_xor_sync(0xffffffffu, send, offset);
    }
    butterfly<T, W, H / 2>(p, lane);
  }
}

// Block-wide sums of each of the W columns of p (one value per thread and column). Within a
// warp a transposed butterfly over the RW = reduction_width values (W's, then zeros): at each
// stage a lane keeps half of its values and adds its partner's copy of the same half, so RW
// columns cost about RW shuffles, not 5·RW; lane L then holds column L >> (5 − log RW). After
// one barrier every warp adds up the warps' partials itself: the result, column L mod W, is in
// lane L.
template <class T, int W, int TH>
__device__ __forceinline__ T block_column_sums(const T (&p)[W], Scratch<T, W, TH>& s, int parity) {
  constexpr int RW = Shape<T, W, TH>::reduction_width;
  constexpr int kShift = 5 - Shape<T, W, TH>::log_width;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  T q[RW];
#pragma unroll
  for (int k = 0; k < RW; ++k) q[k] = k < W ? p[k] : T(0);
  butterfly<T, RW, RW / 2>(q, lane);
  T x = q[0];
#pragma unroll
  for (int offset = (1 << kShift) >> 1; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffffu, x, offset);
  if ((lane & ((1 << kShift) - 1)) == 0) s.partial[parity][warp][lane >> kShift] = x;
  __syncthreads();
  T sum = 0;
#pragma unroll
  for (int w = 0; w < (TH / 32); ++w) sum += s.partial[parity][w][lane % W];
  return sum;
}

// All W column sums in every thread: the warp parks its lanes' sums in shared memory and reads
// them back by vector loads (shuffles are the scarcer resource: one warp-wide shuffle per clock
// per SM). Also returns the warp's copy for scalar reads (column j).
template <class T, int W, int TH>
__device__ __forceinline__ const T* block_column_totals(const T (&p)[W], Scratch<T, W, TH>& s, int parity, T (&tot)[W]) {
  const T sums = block_column_sums<T, W, TH>(p, s, parity);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncwarp();
  if (lane < W) s.total[warp][lane] = sums;
  __syncwarp();
  load_vec<T, W>(s.total[warp], tot);
  return s.total[warp];
}

// Thread t holds rows t + i·TH of the block in x[i]; rows ≥ `rows` and columns ≥ n are zero.
template <class T, int W, int TH>
using Rows = T[Shape<T, W, TH>::rows_per_thread][W];

template <class T, int W, int TH, bool kFresh>
__device__ __forceinline__ void load_rows(Rows<T, W, TH>& x, const T* src, std::int64_t ld, int rows, int n) {
#pragma unroll
  for (int i = 0; i < Shape<T, W, TH>::rows_per_thread; ++i) {
    const int r = threadIdx.x + i * TH;
#pragma unroll
    for (int k = 0; k < W; ++k) {
      const bool in = r < rows && k < n;
      // kFresh: written by another block of this launch, so past L1 (ld.cg).
      x[i][k] = in ? (kFresh ? __ldcg(src + r + k * ld) : src[r + k * ld]) : T(0);
    }
  }
}

template <class T, int W, int TH>
__device__ __forceinline__ void store_rows(const Rows<T, W, TH>& x, T* dst, std::int64_t ld, int rows, int n) {
#pragma unroll
  for (int i = 0; i < Shape<T, W, TH>::rows_per_thread; ++i) {
    const int r = threadIdx.x + i * TH;
#pragma unroll
    for (int k = 0; k < W; ++k)
      if (r < rows && k < n) dst[r + k * ld] = x[i][k];
  }
}

// R (the top n rows) to dst, with zeros below the diagonal or (zeros_below false) leaving what
// lies there; rows 0 … n−1 live in x[0] of threads 0 … n−1.
template <class T, int W, int TH>
__device__ __forceinline__ void store_r(const Rows<T, W, TH>& x, T* dst, std::int64_t ld, int n,
                                        bool zeros_below = true) {
  const int t = threadIdx.x;
  if (t >= n) return;
#pragma unroll
  for (int k = 0; k < W; ++k)
    if (k < n && (zeros_below || k >= t)) dst[t + k * ld] = k >= t ? x[0][k] : T(0);
}

// p[k] = Σ_i c[i]·x[i][k] over this thread's rows, for all W columns (columns past the panel's
// are zero in x, so they cost FMAs but no tests).
template <class T, int W, int TH>
__device__ __forceinline__ void column_products(const Rows<T, W, TH>& x, const T (&c)[Shape<T, W, TH>::rows_per_thread],
                                                T (&p)[W]) {
#pragma unroll
  for (int k = 0; k < W; ++k) {
    p[k] = T(0);
#pragma unroll
    for (int i = 0; i < Shape<T, W, TH>::rows_per_thread; ++i) p[k] += c[i] * x[i][k];
  }
}

// row[j] for a runtime j < W by a tree of selects on j's bits (depth ⌈log W⌉, W − 1 selects)
// rather than a dynamic index, which would move the row to local memory. An odd count carries
// its last entry up a level unselected (the bit that would pick past it is 0 for any j < W).
template <class T, int W>
__device__ __forceinline__ T pick(const T (&row)[W], int j, int shift = 0) {
  if constexpr (W == 1) {
    return row[0];
  } else {
    constexpr int H = (W + 1) / 2;
    T half[H];
#pragma unroll
    for (int k = 0; k < H; ++k) half[k] = 2 * k + 1 < W && (j >> shift) & 1 ? row[2 * k + 1] : row[2 * k];
    return pick<T, H>(half, j, shift + 1);
  }
}

__device__ __forceinline__ float reciprocal(float x) { return __frcp_rn(x); }
__device__ __forceinline__ double reciprocal(double x) { return __drcp_rn(x); }

// Householder QR (geqr2) of the block in x (`rows` valid rows): R on and above the diagonal of
// x's top rows, taus to tau, and each reflector's v (below the diagonal) stored to column j of
// v_out as soon as it is formed, so the registers never take it back. Every reflector is applied
// to all W columns, finished ones included: H_j only mixes rows ≥ j, where a finished column k < j
// holds the rounding-level remains of its own elimination (an orthogonal map keeps them there),
// and its R entries (rows ≤ k < j) meet v = 0. That drops every per-column test of j from the
// update (measured on the H200: the masked update and the divergent pivot-row branch were half of
// a reflector's 940 instructions per warp). The diagonal is set to β exactly at the end.
// The reflector loop is not unrolled: fully unrolled, a 32-wide panel's code outgrows the
// instruction cache and every reflector then waits on instruction fetch. Column j is picked out
// of the registers by compile-time selects instead of a dynamic index (which would put x in
// local memory).
template <class T, int W, int TH>
__device__ __forceinline__ void factor_block(Rows<T, W, TH>& x, int n, T* tau, Scratch<T, W, TH>& s, T* v_out,
                                             std::int64_t ldv, int rows) {
  constexpr int R = Shape<T, W, TH>::rows_per_thread;
  const int t = threadIdx.x;
#pragma unroll 1
  for (int j = 0; j < n; ++j) {
    // Column j of this thread's rows strictly below the diagonal (zero elsewhere).
    T below[R];
#pragma unroll
    for (int i = 0; i < R; ++i) below[i] = t + i * TH > j ? pick<T, W>(x[i], j) : T(0);
    // Σ_{r > j} x[r][j]·x[r][k]: the norm below the diagonal (k = j) and the products that give w.
    T p[W];
    column_products<T, W, TH>(x, below, p);
    T* pivot = s.pivot[j & 1];
    if (t == j) store_vec<T, W>(x[0], pivot);
    T tot[W];
    const T* totals = block_column_totals<T, W, TH>(p, s, j & 1, tot);
    const T alpha = pivot[j], sigma = totals[j];
    T tau_j = 0, beta = alpha, scale = 0;
    if (sigma != T(0)) {
      const T norm = sqrt(alpha * alpha + sigma);
      beta = alpha >= T(0) ? -norm : norm;
      // Correctly rounded reciprocals (MUFU plus two FMAs) instead of divisions: shorter on the
      // critical path; τ gets one extra rounding.
      tau_j = (beta - alpha) * reciprocal(beta);
      scale = reciprocal(alpha - beta);
    }
    // τ·w_k with w_k = vᵀx_k = x[j][k] + scale·Σ_{r>j} x[r][j]·x[r][k].
    T tw[W];
#pragma unroll
    for (int k = 0; k < W; ++k) tw[k] = tau_j * (pivot[k] + tot[k] * scale);
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int row = t + i * TH;
      const T v = below[i] * scale;
      if (row > j && row < rows) v_out[row + static_cast<std::int64_t>(j) * ldv] = v;
      const T vr = row == j ? T(1) : v;
#pragma unroll
      for (int k = 0; k < W; ++k) x[i][k] -= vr * tw[k];
    }
    if (t == 0) {
      tau[j] = tau_j;
      s.beta[j] = beta;
    }
  }
  __syncthreads();  // the last β
  if (t < n) {
#pragma unroll
    for (int k = 0; k < W; ++k)
      if (k == t) x[0][k] = s.beta[k];
  }
}

// x ← H_0 H_1 … H_{w−1} x (backward: H_{w−1} applied first, as orgqr) or x ← H_{w−1} … H_0 x
// (forward: Qᵀx), with the block's w reflectors (v below the diagonal of `v`, `rows` rows). All W
// columns of x are transformed; those past the caller's tile are zero and stay zero.
template <class T, int W, int TH>
__device__ __forceinline__ void apply_block(Rows<T, W, TH>& x, const T* v, std::int64_t ldv, int rows, int w,
                                            const T* tau, Scratch<T, W, TH>& s, bool forward) {
  constexpr int R = Shape<T, W, TH>::rows_per_thread;
  const int t = threadIdx.x;
  // Reflector j's rows, loaded one reflector ahead so the (L2) load latency overlaps a step.
  const auto load_reflector = [&](int j, T (&out)[R]) {
#pragma unroll
    for (int i = 0; i < R; ++i) {
      const int r = t + i * TH;
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
    T p[W];
    column_products<T, W, TH>(x, vr, p);
    T tot[W];
    block_column_totals<T, W, TH>(p, s, step & 1, tot);
    const T tau_j = tau[j];
    T tw[W];
#pragma unroll
    for (int k = 0; k < W; ++k) tw[k] = tau_j * tot[k];
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
      for (int k = 0; k < W; ++k) x[i][k] -= vr[i] * tw[k];
  }
}

__device__ __forceinline__ std::int64_t leaf_row(std::int64_t leaf, const TsqrTreeArgs& tree) {
  return leaf * tree.m / tree.nodes[0];
}

template <class T, int W, int TH>
__global__ void __launch_bounds__(TH, (min_blocks<T, W, TH>()))
    tsqr_factor_kernel(const T* a, std::int64_t lda, T* v, std::int64_t ldv, T* stacks, T* tau, unsigned* counters,
                       T* r, std::int64_t ldr, bool r_zeros_below, const TsqrTreeArgs tree) {
  __shared__ Scratch<T, W, TH> s;
  __shared__ int last;
  const int n = tree.n;
  const std::int64_t stack_ld = static_cast<std::int64_t>(tree.fan_in) * n;
  Rows<T, W, TH> x;

  int node = blockIdx.x;
  const std::int64_t row0 = leaf_row(node, tree);
  load_rows<T, W, TH, false>(x, a + row0, lda, static_cast<int>(leaf_row(node + 1, tree) - row0), n);
  factor_block<T, W, TH>(x, n, tau + tree.tau_offset[0] + static_cast<std::int64_t>(node) * n, s, v + row0, ldv,
                         static_cast<int>(leaf_row(node + 1, tree) - row0));
  store_r<T, W, TH>(x, v + row0, ldv, n, false);

  for (int level = 0;; ++level) {
    if (level == tree.levels) {
      store_r<T, W, TH>(x, r, ldr, n, r_zeros_below);
      return;
    }
    const int parent = node / tree.fan_in;
    T* stack = stacks + tree.stack_offset[level + 1] + static_cast<std::int64_t>(parent) * stack_ld * n;
    store_r<T, W, TH>(x, stack + static_cast<std::int64_t>(node % tree.fan_in) * n, stack_ld, n);
    const int kids = min(tree.fan_in, tree.nodes[level] - parent * tree.fan_in);
    // Publish this block's R, then count it in; the last of the node's children factors the node.
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
      last = atomicAdd(counters + tree.counter_offset[level + 1] + parent, 1u) + 1 == static_cast<unsigned>(kids);
    __syncthreads();
    if (!last) return;
    __threadfence();
    node = parent;
    load_rows<T, W, TH, true>(x, stack, stack_ld, kids * n, n);
    factor_block<T, W, TH>(x, n, tau + tree.tau_offset[level + 1] + static_cast<std::int64_t>(node) * n, s, stack,
                           stack_ld, kids * n);
    store_r<T, W, TH>(x, stack, stack_ld, n, false);
  }
}

// One tree level of the explicit Q, root first: each node's top n rows come from its slot of the
// parent's output (the identity at the root), the rest are zero; the node's reflectors are applied
// and the result goes to the node's output stack (tree levels) or to Q (leaves).
template <class T, int W, int TH>
__global__ void __launch_bounds__(TH, (min_blocks<T, W, TH>()))
    tsqr_form_q_kernel(const T* v, std::int64_t ldv, const T* stacks, const T* tau, T* q_stacks, T* q,
                       std::int64_t ldq, const TsqrTreeArgs tree, int level) {
  __shared__ Scratch<T, W, TH> s;
  const int n = tree.n, node = blockIdx.x, t = threadIdx.x;
  const std::int64_t stack_ld = static_cast<std::int64_t>(tree.fan_in) * n, stack_size = stack_ld * n;
  Rows<T, W, TH> x;
#pragma unroll
  for (int i = 0; i < Shape<T, W, TH>::rows_per_thread; ++i)
#pragma unroll
    for (int k = 0; k < W; ++k) x[i][k] = T(0);
  if (level == tree.levels) {
#pragma unroll
    for (int k = 0; k < W; ++k)
      if (k == t && k < n) x[0][k] = T(1);
  } else if (t < n) {
    const int parent = node / tree.fan_in;
    const T* top = q_stacks + tree.stack_offset[level + 1] + parent * stack_size + (node % tree.fan_in) * n;
#pragma unroll
    for (int k = 0; k < W; ++k)
      if (k < n) x[0][k] = top[t + k * stack_ld];
  }
  const T* node_tau = tau + tree.tau_offset[level] + static_cast<std::int64_t>(node) * n;
  if (level == 0) {
    const std::int64_t row0 = leaf_row(node, tree);
    const int rows = static_cast<int>(leaf_row(node + 1, tree) - row0);
    apply_block<T, W, TH>(x, v + row0, ldv, rows, n, node_tau, s, false);
    store_rows<T, W, TH>(x, q + row0, ldq, rows, n);
  } else {
    const int rows = min(tree.fan_in, tree.nodes[level - 1] - node * tree.fan_in) * n;
    apply_block<T, W, TH>(x, stacks + tree.stack_offset[level] + node * stack_size, stack_ld, rows, n, node_tau, s,
                          false);
    store_rows<T, W, TH>(x, q_stacks + tree.stack_offset[level] + node * stack_size, stack_ld, rows, n);
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
    caqr_apply_leaves_kernel(const T* v, std::int64_t ldv, const T* tau, T* x, std::int64_t ldx, int cols,
                             const TsqrTreeArgs tree, bool forward) {
  __shared__ Scratch<T, W, TH> s;
  const int node = blockIdx.x, c0 = blockIdx.y * W, xc = min(W, cols - c0);
  const auto tile = [&] { return x + leaf_row(node, tree) + static_cast<std::int64_t>(c0) * ldx; };
  const auto rows = [&] { return static_cast<int>(leaf_row(node + 1, tree) - leaf_row(node, tree)); };
  Rows<T, W, TH> r;
  load_rows<T, W, TH, false>(r, tile(), ldx, rows(), xc);
  apply_block<T, W, TH>(r, v + leaf_row(node, tree), ldv, rows(), tree.n,
                        tau + tree.tau_offset[0] + static_cast<std::int64_t>(node) * tree.n, s, forward);
  // The tile's place is evaluated again rather than kept across the reflector loop, where it
  // spills (FP32 blocks have 128 registers).
  store_rows<T, W, TH>(r, tile(), ldx, rows(), xc);
}

template <class T, int W, int TH>
__global__ void __launch_bounds__(TH, (min_blocks<T, W, TH>()))
    caqr_apply_tree_kernel(const T* stacks, const T* tau, T* x, std::int64_t ldx, int cols, const TsqrTreeArgs tree,
                           int level, bool forward) {
  constexpr int R = Shape<T, W, TH>::rows_per_thread;
  __shared__ Scratch<T, W, TH> s;
  const int node = blockIdx.x, c0 = blockIdx.y * W, xc = min(W, cols - c0), w = tree.n;
  const int kids = min(tree.fan_in, tree.nodes[level - 1] - node * tree.fan_in), rows = kids * w;
  std::int64_t span = 1;  // leaves per child
  for (int l = 1; l < level; ++l) span *= tree.fan_in;
  const std::int64_t first_child = static_cast<std::int64_t>(node) * tree.fan_in;
  Rows<T, W, TH> r;
  T* base = x + static_cast<std::int64_t>(c0) * ldx;
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int row = threadIdx.x + i * TH;
    const std::int64_t g = row < rows ? leaf_row((first_child + row / w) * span, tree) + row % w : 0;
#pragma unroll
    for (int k = 0; k < W; ++k) r[i][k] = row < rows && k < xc ? base[g + k * ldx] : T(0);
  }
  const std::int64_t stack_ld = static_cast<std::int64_t>(tree.fan_in) * w;
  apply_block<T, W, TH>(r, stacks + tree.stack_offset[level] + node * stack_ld * w, stack_ld, rows, w,
                        tau + tree.tau_offset[level] + static_cast<std::int64_t>(node) * w, s, forward);
#pragma unroll
  for (int i = 0; i < R; ++i) {
    const int row = threadIdx.x + i * TH;
    if (row >= rows) continue;
    const std::int64_t g = leaf_row((first_child + row / w) * span, tree) + row % w;
#pragma unroll
    for (int k = 0; k < W; ++k)
      if (k < xc) base[g + k * ldx] = r[i][k];
  }
}

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
  if ((tree.m + tree.nodes[0] - 1) / tree.nodes[0] > tsqr_register_block_rows<T>(w, tree.threads))
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
  return threads * rows_per_thread_at(width);
}

template <class T>
void launch_tsqr_register_factor(const T* a, std::int64_t lda, T* v, std::int64_t ldv, T* stacks, T* tau,
                                 unsigned* counters, T* r, std::int64_t ldr, bool r_zeros_below,
                                 const TsqrTreeArgs& tree, cudaStream_t stream) {
  check_tree<T>(tree);
  if (tree.levels > 0)
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(counters, 0, sizeof(unsigned) * tree.counter_offset[tree.levels] +
                                                        sizeof(unsigned) * tree.nodes[tree.levels], stream));
  const dim3 grid(static_cast<unsigned>(tree.nodes[0]));
  with_class(tsqr_register_width(tree.n), tree.threads, [&](auto w, auto th) {
    constexpr int W = decltype(w)::value, TH = decltype(th)::value;
    tsqr_factor_kernel<T, W, TH><<<grid, TH, 0, stream>>>(a, lda, v, ldv, stacks, tau, counters, r, ldr, r_zeros_below,
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

template <class T>
void launch_caqr_register_apply(const T* v, std::int64_t ldv, const T* stacks, const T* tau, T* x, std::int64_t ldx,
                                std::int64_t cols, const TsqrTreeArgs& tree, bool transpose, cudaStream_t stream) {
  check_tree<T>(tree);
  if (cols <= 0) return;
  const int w = tsqr_register_width(tree.n);
  const unsigned tiles = static_cast<unsigned>((cols + w - 1) / w);
  if (tiles > 65535) throw std::invalid_argument("register CAQR: " + std::to_string(cols) + " columns is too many tiles");
  const int c = static_cast<int>(cols);
  auto leaves = [&](auto kernel, int threads) {
    kernel<<<dim3(static_cast<unsigned>(tree.nodes[0]), tiles), threads, 0, stream>>>(v, ldv, tau, x, ldx, c, tree,
                                                                                      transpose);
    GPUFACT_CHECK_LAUNCH();
  };
  auto level = [&](auto kernel, int threads, int l) {
    kernel<<<dim3(static_cast<unsigned>(tree.nodes[l]), tiles), threads, 0, stream>>>(stacks, tau, x, ldx, c, tree, l,
                                                                                      transpose);
    GPUFACT_CHECK_LAUNCH();
  };
  auto run = [&](auto leaf_kernel, auto tree_kernel, int threads) {
    if (transpose) {  // Qᵀ: the leaves first, then the tree bottom-up
      leaves(leaf_kernel, threads);
      for (int l = 1; l <= tree.levels; ++l) level(tree_kernel, threads, l);
    } else {  // Q: the tree top-down, then the leaves
      for (int l = tree.levels; l >= 1; --l) level(tree_kernel, threads, l);
      leaves(leaf_kernel, threads);
    }
  };
  with_class(w, tree.threads, [&](auto cw, auto th) {
    constexpr int W = decltype(cw)::value, TH = decltype(th)::value;
    run(caqr_apply_leaves_kernel<T, W, TH>, caqr_apply_tree_kernel<T, W, TH>, TH);
  });
}

#define GPUFACT_INSTANTIATE(T)                                                                                     \
  template int tsqr_register_block_rows<T>(int, int);                                                                  \
  template void launch_tsqr_register_factor<T>(const T*, std::int64_t, T*, std::int64_t, T*, T*, unsigned*, T*,    \
                                               std::int64_t, bool, const TsqrTreeArgs&, cudaStream_t);            \
  template void launch_tsqr_register_form_q<T>(const T*, std::int64_t, const T*, const T*, T*, T*, std::int64_t,   \
                                               const TsqrTreeArgs&, cudaStream_t);                  \
  template void launch_caqr_register_apply<T>(const T*, std::int64_t, const T*, const T*, T*, std::int64_t,        \
                                              std::int64_t, const TsqrTreeArgs&, bool, cudaStream_t);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact::kernels
