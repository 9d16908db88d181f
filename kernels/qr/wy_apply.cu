#include "kernels/qr/wy_apply.cuh"

#include "core/cuda/check.hpp"
#include "core/cuda/device.hpp"
#include "kernels/common/cluster_push.cuh"
#include "kernels/common/cp_async.cuh"
#include "kernels/common/vec16.cuh"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Chunk rows and column-tile width: FP32 256 × 64, so a phase-3 thread updates an 8 × 8 tile of C
// (two 16-byte loads of V and two of W per 64 FMAs: the shared-memory pipe keeps up with the FMA
// pipe); FP64 128 × 32 (4 × 4), the largest whose chunks still fit twice per SM.
template <class T>
struct Shape {
  static constexpr int chunk = sizeof(T) == 4 ? 256 : 128;
  static constexpr int cols = sizeof(T) == 4 ? 64 : 32;
  static constexpr int tile = sizeof(T) == 4 ? 8 : 4;  // phase 3: tile × tile entries of C per thread
  // A chunk's column stride: its rows plus 16 bytes, so consecutive columns start four banks apart.
  static constexpr int ld = chunk + 16 / sizeof(T);
  static_assert(kThreads % chunk == 0, "every thread on one row of a chunk");
  static_assert((chunk / tile) * (cols / tile) == kThreads, "phase 3 covers the chunk once");
};

// Dynamic shared memory: the V and C chunks (column-major; phase 1's per-warp partial sums reuse
// them), W (row-major, NB × cols) and T (T(i, l) at i·(NB + 1) + l: rows and columns of it both
// read conflict-free).
template <class T, int NB>
constexpr std::size_t smem_bytes() {
  using S = Shape<T>;
  static_assert(static_cast<std::size_t>(kWarps) * NB * S::cols <= static_cast<std::size_t>(NB + S::cols) * S::ld,
                "the partial sums fit in the chunks");
  return sizeof(T) * (static_cast<std::size_t>(NB + S::cols) * S::ld + NB * S::cols + NB * (NB + 1));
}

// Whether columns of `ld` entries starting at p can be moved by 16-byte copies.
template <class T>
__device__ __forceinline__ bool aligned_16(const T* p, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld * sizeof(T) % 16 == 0;
}

// A chunk's column j (rows r0 … r0 + chunk of the column starting at src, `valid` of them real,
// the rest zeros) to dst, by 16-byte copies: thread t moves vector t mod (chunk / E) of columns
// t / (chunk / E) + q·(kThreads·E / chunk), E entries to a vector.
template <class T, int COLS, class L = Shape<T>>
__device__ __forceinline__ void copy_columns_16(T* dst, const T* src, std::int64_t ld, int valid, int cols_valid) {
  constexpr int E = 16 / sizeof(T), V = L::chunk / E, step = kThreads / V;
  static_assert(kThreads % V == 0, "whole columns per pass");
  const int v = threadIdx.x % V, j0 = threadIdx.x / V;
  const int bytes = static_cast<int>(sizeof(T)) * max(0, min(E, valid - v * E));
  const T* s = src + v * E + j0 * ld;
#pragma unroll 4
  for (int j = j0; j < COLS; j += step, s += step * ld)
    cp_async_16(dst + j * L::ld + v * E, s, j < cols_valid ? bytes : 0);
}

// X = VᵀY over a chunk (Y: NY columns), phase 1: every warp sums the whole NB × NY product over
// its eighth of the chunk's rows, a row a step; a lane holds (NB/4) × (NY/8) entries, rows ig + 4u
// and columns cg + 8w of X (four row groups × eight column groups: a warp's loads of a row touch
// 12 distinct words in distinct banks, and each loaded value feeds NY/8 or NB/4 FMAs). Rows past
// `rows` (the chunk's valid ones) are zero and skipped.
template <class T, int NB, int NY>
struct Gram {
  static constexpr int MI = NB / 4, MC = NY / 8;
};

// Column j of row i of a warp's partial sums (NY columns, a power of two), swizzled (j XOR
// 8·(i mod 4), within the row): for NY ≥ 32 a warp's 4 row groups × 8 column groups then store to
// 32 distinct banks.
template <int NY>
__device__ __forceinline__ int part_col(int i, int j) {
  static_assert((NY & (NY - 1)) == 0, "a power of two");
  return j ^ ((8 * (i % 4)) & (NY - 1));
}

template <class T, int NB, int NY, class L = Shape<T>>
__device__ __forceinline__ void accumulate_gram(const T* sv, const T* sy, int rows,
                                                T (&acc)[Gram<T, NB, NY>::MI][Gram<T, NB, NY>::MC]) {
  using G = Gram<T, NB, NY>;
  constexpr int ld = L::ld, per_warp = L::chunk / kWarps;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, ig = lane % 4, cg = lane / 4;
  const int end = min((warp + 1) * per_warp, rows);
  if constexpr (sizeof(T) == 4) {  // two rows a step by 8-byte loads: half the load instructions
#pragma unroll 1
    for (int r = warp * per_warp; r < end; r += 2) {
      float2 a[G::MI], b[G::MC];
#pragma unroll
      for (int u = 0; u < G::MI; ++u) a[u] = *reinterpret_cast<const float2*>(sv + (ig + 4 * u) * ld + r);
#pragma unroll
      for (int w = 0; w < G::MC; ++w) b[w] = *reinterpret_cast<const float2*>(sy + (cg + 8 * w) * ld + r);
#pragma unroll
      for (int u = 0; u < G::MI; ++u)
#pragma unroll
        for (int w = 0; w < G::MC; ++w) acc[u][w] = fmaf(a[u].y, b[w].y, fmaf(a[u].x, b[w].x, acc[u][w]));
    }
  } else {
#pragma unroll 2
    for (int r = warp * per_warp; r < end; ++r) {
      T a[G::MI], b[G::MC];
#pragma unroll
      for (int u = 0; u < G::MI; ++u) a[u] = sv[(ig + 4 * u) * ld + r];
#pragma unroll
      for (int w = 0; w < G::MC; ++w) b[w] = sy[(cg + 8 * w) * ld + r];
#pragma unroll
      for (int u = 0; u < G::MI; ++u)
#pragma unroll
        for (int w = 0; w < G::MC; ++w) acc[u][w] += a[u] * b[w];
    }
  }
}

// out[i·NY + j] ← the warps' partial sums added up; `part` holds kWarps·NB·NY entries (it
// overwrites chunk data). Ends with a barrier.
template <class T, int NB, int NY>
__device__ __forceinline__ void reduce_gram(const T (&acc)[Gram<T, NB, NY>::MI][Gram<T, NB, NY>::MC], T* part,
                                            T* out) {
  using G = Gram<T, NB, NY>;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, ig = lane % 4, cg = lane / 4;
  __syncthreads();  // the chunk's readers are done
#pragma unroll
  for (int u = 0; u < G::MI; ++u)
#pragma unroll
    for (int w = 0; w < G::MC; ++w) {
      const int i = ig + 4 * u;
      part[(warp * NB + i) * NY + part_col<NY>(i, cg + 8 * w)] = acc[u][w];
    }
  __syncthreads();
  for (int idx = threadIdx.x; idx < NB * NY; idx += kThreads) {
    const int i = idx / NY, j = part_col<NY>(i, idx % NY);
    T s = T(0);
#pragma unroll
    for (int p = 0; p < kWarps; ++p) s += part[(p * NB + i) * NY + j];
    out[idx] = s;
  }
  __syncthreads();
}

// The reverse of copy_columns_16 for the first `valid` rows of `cols_valid` columns: whole
// vectors by 16-byte stores, a last partial one entry by entry.
template <class T, int COLS, class L = Shape<T>>
__device__ __forceinline__ void store_columns_16(const T* src, T* dst, std::int64_t ld, int valid, int cols_valid) {
  constexpr int E = 16 / sizeof(T), V = L::chunk / E, step = kThreads / V;
  const int v = threadIdx.x % V, j0 = threadIdx.x / V, n = min(E, valid - v * E);
  if (n <= 0) return;
  T* d = dst + v * E + j0 * ld;
#pragma unroll 4
  for (int j = j0; j < cols_valid; j += step, d += step * ld) {
    const T* x = src + j * L::ld + v * E;
    if (n == E) {
      *reinterpret_cast<int4*>(d) = *reinterpret_cast<const int4*>(x);
    } else {
      for (int e = 0; e < n; ++e) d[e] = x[e];
    }
  }
}

// Where block `blk` lies: its rows, its first row (fixed, split), its reflector count, its V.
template <class T>
struct Block {
  std::int64_t first = 0;
  int rows = 0, k = 0;
  const T* v = nullptr;
};

template <class T>
__device__ __forceinline__ Block<T> block_of(const WyBlocks<T>& b, int blk) {
  Block<T> x;
  if (b.rows == WyRows::fixed) {
    x.first = static_cast<std::int64_t>(blk) * b.block_rows;
    x.rows = static_cast<int>(min(static_cast<std::int64_t>(b.block_rows), b.m - x.first));
    x.v = b.v + x.first;
  } else if (b.rows == WyRows::split) {
    x.first = static_cast<std::int64_t>(blk) * b.m / b.blocks;
    x.rows = static_cast<int>((static_cast<std::int64_t>(blk) + 1) * b.m / b.blocks - x.first);
    x.v = b.v + x.first;
  } else {
    x.rows = min(b.fan_in, b.children - blk * b.fan_in) * b.k;
    x.v = b.v + static_cast<std::int64_t>(blk) * b.v_stride;
  }
  x.k = min(x.rows, b.k);
  return x;
}

// C's row for block row r.
template <class T>
__device__ __forceinline__ std::int64_t c_row(const WyBlocks<T>& b, const Block<T>& x, int blk, int r) {
  if (b.rows != WyRows::tree) return x.first + r;
  const std::int64_t child = static_cast<std::int64_t>(blk) * b.fan_in + r / b.k;
  return child * b.span * b.m / b.leaves + r % b.k;
}

// Chunk loads entry by entry: thread t moves row t mod chunk of columns t / chunk + q·per_row
// (coalesced: a warp reads 32 consecutive rows of a column), all as cp.async, so every load of
// the chunk is in flight at once; the caller waits (cp_async_wait_all) and then synchronizes.
template <class L>
constexpr int kPerRow = kThreads / L::chunk;  // threads per chunk row

// sv[i·ld + r] ← V(r0 + r, i): v below the diagonal, 1 on it, 0 above, past the block's rows and
// past its reflectors (up to NB columns).
// With `aligned` (V's columns move by 16-byte copies) the first chunk's entries on and above the
// diagonal are copied as stored and set by fix_v_diagonal after the copies land.
template <class T, int NB, class L = Shape<T>>
__device__ __forceinline__ void load_v_chunk(const WyBlocks<T>& b, const Block<T>& x, int r0, T* sv, bool aligned) {
  if (aligned) {
    copy_columns_16<T, NB, L>(sv, x.v + r0, b.ldv, x.rows - r0, x.k);
    return;
  }
  constexpr int step = kPerRow<L>;
  const int r = threadIdx.x % L::chunk, row = r0 + r, i0 = threadIdx.x / L::chunk;
  const T* src = x.v + row + i0 * b.ldv;
  // Not unrolled further: fully unrolled, the compiler keeps every column's address live.
#pragma unroll 4
  for (int i = i0; i < NB; i += step, src += step * b.ldv) {
    T* dst = sv + i * L::ld + r;
    if (row == i && i < x.k)
      *dst = T(1);
    else
      cp_async_entry(dst, src, i < x.k && row < x.rows && row > i);
  }
}

// A thread block's column tile of C (blockIdx.y; L::cols wide) chunk by chunk, to and from
// shared memory: 16-byte copies where the block's rows are contiguous and their columns start
// aligned, else entry by entry, each thread's C row looked up once per chunk (at).
template <class T, class L>
struct ChunkTile {
  const WyBlocks<T>& b;
  const Block<T>& x;
  int blk;
  T* c;
  std::int64_t ldc, c0;
  int nc;
  bool aligned;
  int r0 = 0;
  std::int64_t crow = -1;  // this thread's C row in the chunk (entry by entry), −1 past the block

  __device__ ChunkTile(const WyBlocks<T>& b_, const Block<T>& x_, int blk_, T* c_, std::int64_t ldc_,
                       std::int64_t cols)
      : b(b_), x(x_), blk(blk_), c(c_), ldc(ldc_), c0(static_cast<std::int64_t>(blockIdx.y) * L::cols) {
    nc = static_cast<int>(min(static_cast<std::int64_t>(L::cols), cols - c0));
    aligned = b.rows != WyRows::tree && aligned_16(c + x.first + c0 * ldc, ldc);
  }
  __device__ void at(int chunk_row) {
    r0 = chunk_row;
    const int row = r0 + static_cast<int>(threadIdx.x) % L::chunk;
    if (!aligned) crow = row < x.rows ? c_row(b, x, blk, row) : -1;
  }
  __device__ void load(T* sc) const {
    if (aligned) {
      copy_columns_16<T, L::cols, L>(sc, c + x.first + r0 + c0 * ldc, ldc, x.rows - r0, nc);
      return;
    }
    constexpr int step = kPerRow<L>;
    const int r = threadIdx.x % L::chunk, j0 = threadIdx.x / L::chunk;
    const T* src = c + max(crow, std::int64_t{0}) + (c0 + j0) * ldc;
#pragma unroll 4
    for (int j = j0; j < L::cols; j += step, src += step * ldc) cp_async_entry(sc + j * L::ld + r, src, crow >= 0 && j < nc);
  }
  // After a barrier: the chunk's valid rows of sc back to C.
  __device__ void store(const T* sc) const {
    if (aligned) {
      store_columns_16<T, L::cols, L>(sc, c + x.first + r0 + c0 * ldc, ldc, x.rows - r0, nc);
      return;
    }
    if (crow < 0) return;
    constexpr int step = kPerRow<L>;
    const int r = threadIdx.x % L::chunk, j0 = threadIdx.x / L::chunk;
    T* dst = c + crow + (c0 + j0) * ldc;
#pragma unroll 4
    for (int j = j0; j < nc; j += step, dst += step * ldc) *dst = sc[j * L::ld + r];
  }
};

// After an aligned first chunk has landed (and a barrier): V's unit diagonal and zeros above it.
// Ends with a barrier.
template <class T, int NB, class L = Shape<T>>
__device__ __forceinline__ void fix_v_diagonal(const Block<T>& x, T* sv) {
  for (int idx = threadIdx.x; idx < NB * NB; idx += kThreads) {
    const int r = idx % NB, i = idx / NB;
    if (r <= i && i < x.k) sv[i * L::ld + r] = r == i ? T(1) : T(0);
  }
  __syncthreads();
}

// Lane i < NB makes row i of T from G = VᵀV (row-major NB × NB in shared memory) and the block's
// k taus by larft's recurrence over its own row (T(i, j) = −τ_j Σ_{i ≤ l < j} T(i, l) G(l, j)): no
// lane waits on another. out(i, j, value) stores an entry.
template <class T, int NB, class Out>
__device__ __forceinline__ void larft_rows(const T* g, const T* tau, int k, Out out) {
  if (threadIdx.x >= NB) return;
  const int i = threadIdx.x;
  T row[NB];
#pragma unroll
  for (int j = 0; j < NB; ++j) {
    const T tau_j = j < k ? tau[j] : T(0);
    T s = T(0);  // row[l] is zero for l < i
#pragma unroll
    for (int l = 0; l < j; ++l) s += row[l] * g[l * NB + j];
    row[j] = j < i ? T(0) : (j == i ? tau_j : -tau_j * s);
  }
#pragma unroll
  for (int j = 0; j < NB; ++j) out(i, j, row[j]);
}

// Phase 2 of the apply: sw (NB × TC, row-major) ← Tᵀ sw (Qᵀ) or T sw (Q), T upper triangular at
// st[i·(NB + 1) + l]. A thread makes rows i and i + NB/2 of CP consecutive columns: per l, two
// entries of T and CP of W for 2·CP FMAs. Reads after a barrier; its writes need one before
// they are read.
template <class T, int NB, int TC>
__device__ __forceinline__ void apply_op_t(const T* st, T* sw, bool transpose) {
  constexpr int CP = NB * TC / (2 * kThreads);
  static_assert(CP >= 1 && TC % CP == 0, "whole column groups");
  const int i = threadIdx.x % (NB / 2), j = CP * (threadIdx.x / (NB / 2));
  T y0[CP] = {}, y1[CP] = {};
#pragma unroll 4
  for (int l = 0; l < NB; ++l) {
    const T t0 = transpose ? st[l * (NB + 1) + i] : st[i * (NB + 1) + l];
    const T t1 = transpose ? st[l * (NB + 1) + i + NB / 2] : st[(i + NB / 2) * (NB + 1) + l];
#pragma unroll
    for (int q = 0; q < CP; ++q) {
      const T w = sw[l * TC + j + q];
      y0[q] += t0 * w;
      y1[q] += t1 * w;
    }
  }
  __syncthreads();
#pragma unroll
  for (int q = 0; q < CP; ++q) {
    sw[i * TC + j + q] = y0[q];
    sw[(i + NB / 2) * TC + j + q] = y1[q];
  }
}

// T of each block: G = VᵀV through the chunks, then larft_rows.
template <class T, int NB>
__global__ void __launch_bounds__(kThreads) wy_larft_kernel(const WyBlocks<T> b, T* t) {
  using S = Shape<T>;
  extern __shared__ __align__(16) unsigned char wy_smem[];
  T* sv = reinterpret_cast<T*>(wy_smem);
  T* g = sv + static_cast<std::size_t>(NB + S::cols) * S::ld;  // NB × NB, row-major
  const int blk = blockIdx.x;
  const Block<T> x = block_of(b, blk);
  const bool v_aligned = aligned_16(x.v, b.ldv);
  T acc[Gram<T, NB, NB>::MI][Gram<T, NB, NB>::MC] = {};
  for (int r0 = 0; r0 < x.rows; r0 += S::chunk) {
    __syncthreads();
    load_v_chunk<T, NB>(b, x, r0, sv, v_aligned);
    cp_async_wait_all();
    __syncthreads();
    if (v_aligned && r0 == 0) fix_v_diagonal<T, NB>(x, sv);
    accumulate_gram<T, NB, NB>(sv, sv, x.rows - r0, acc);
  }
  reduce_gram<T, NB, NB>(acc, sv, g);
  T* out = t + static_cast<std::int64_t>(blk) * NB * NB;
  larft_rows<T, NB>(g, b.tau + static_cast<std::int64_t>(blk) * b.tau_stride, x.k,
                    [&](int i, int j, T v) { out[i + j * NB] = v; });
}

// The apply, per (block, column tile): phase 1, W = VᵀC through the chunks (accumulate_gram with
// Y = the C tile); phase 2, W ← op(T) W; phase 3, per chunk again, C −= V W, each thread a tile ×
// tile block of C (lanes: 8 row groups × 4 column groups), written back through shared memory.
template <class T, int NB>
__global__ void __launch_bounds__(kThreads, 2) wy_apply_kernel(const WyBlocks<T> b, const T* t, T* c,
                                                               std::int64_t ldc, std::int64_t cols, bool transpose) {
  using S = Shape<T>;
  constexpr int ld = S::ld, TC = S::cols, TL = S::tile;
  extern __shared__ __align__(16) unsigned char wy_smem[];
  T* sv = reinterpret_cast<T*>(wy_smem);
  T* sc = sv + NB * ld;
  T* sw = sc + TC * ld;  // NB × TC, row-major
  T* st = sw + NB * TC;  // T(i, l) at st[i·(NB + 1) + l]
  const int blk = blockIdx.x;
  const Block<T> x = block_of(b, blk);
  const T* tb = t + static_cast<std::int64_t>(blk) * NB * NB;
  for (int idx = threadIdx.x; idx < NB * NB; idx += kThreads) st[(idx % NB) * (NB + 1) + idx / NB] = tb[idx];
  ChunkTile<T, S> tile(b, x, blk, c, ldc, cols);
  const bool v_aligned = aligned_16(x.v, b.ldv);

  T acc[Gram<T, NB, TC>::MI][Gram<T, NB, TC>::MC] = {};
  for (int r0 = 0; r0 < x.rows; r0 += S::chunk) {
    __syncthreads();
    tile.at(r0);
    load_v_chunk<T, NB>(b, x, r0, sv, v_aligned);
    tile.load(sc);
    cp_async_wait_all();
    __syncthreads();
    if (v_aligned && r0 == 0) fix_v_diagonal<T, NB>(x, sv);
    accumulate_gram<T, NB, TC>(sv, sc, x.rows - r0, acc);
  }
  // The partial sums overwrite the C chunk where it holds them (FP32), so a block of one chunk
  // keeps its V for phase 3 and reloads only C.
  constexpr bool kPartInC = kWarps * NB * TC <= TC * ld;
  reduce_gram<T, NB, TC>(acc, kPartInC ? sc : sv, sw);
  const bool keep_v = kPartInC && x.rows <= S::chunk;

  apply_op_t<T, NB, TC>(st, sw, transpose);

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int rg = lane % 8 + 8 * (warp % 4), cg = lane / 8 + 4 * (warp / 4);  // rows TL·rg …, columns TL·cg …
  for (int r0 = 0; r0 < x.rows; r0 += S::chunk) {
    __syncthreads();
    tile.at(r0);
    if (!keep_v) load_v_chunk<T, NB>(b, x, r0, sv, v_aligned);
    tile.load(sc);
    cp_async_wait_all();
    __syncthreads();
    if (!keep_v && v_aligned && r0 == 0) fix_v_diagonal<T, NB>(x, sv);
    if (TL * rg < x.rows - r0) {
      T z[TL][TL];  // z[column][row]
#pragma unroll
      for (int j = 0; j < TL; ++j) load_vec(sc + (TL * cg + j) * ld + TL * rg, z[j]);
#pragma unroll 1
      for (int l = 0; l < NB; ++l) {
        T vl[TL], wl[TL];
        load_vec(sv + l * ld + TL * rg, vl);
        load_vec(sw + l * TC + TL * cg, wl);
#pragma unroll
        for (int j = 0; j < TL; ++j)
#pragma unroll
          for (int r = 0; r < TL; ++r) z[j][r] -= vl[r] * wl[j];
      }
#pragma unroll
      for (int j = 0; j < TL; ++j) store_vec(z[j], sc + (TL * cg + j) * ld + TL * rg);
    }
    __syncthreads();
    tile.store(sc);
  }
}

// ---- The split apply: few blocks, many chunks -------------------------------------------------
//
// A block's rows in chunks of 64 and C in tiles of 32 columns, each (chunk, tile) a thread block,
// so a TSQR level of a few blocks still fills the GPU. Launch 1 sums each chunk's VᵀC (and, in
// tile 0, VᵀV) into a workspace; launch 2 adds up its block's chunks, builds T (larft_rows),
// W ← op(T) W, and updates its chunk. Workspace per (block, chunk): G (NB × NB), then W per tile
// (NB × 32).
template <class T>
struct SplitShape {
  static constexpr int chunk = 64, cols = 32;
  static constexpr int ld = chunk + 16 / sizeof(T);  // as Shape's: columns four banks apart
};

// Shared memory of the split kernels: V and C chunks, the warps' partial sums, W and T.
template <class T, int NB>
constexpr std::size_t split_smem_bytes() {
  using L = SplitShape<T>;
  return sizeof(T) * (static_cast<std::size_t>(NB + L::cols) * L::ld + kWarps * NB * L::cols + NB * L::cols +
                      NB * (NB + 1));
}

template <class T, int NB>
struct SplitSmem {
  T *sv, *sc, *part, *sw, *st;
  __device__ explicit SplitSmem(unsigned char* p) {
    using L = SplitShape<T>;
    sv = reinterpret_cast<T*>(p);
    sc = sv + NB * L::ld;
    part = sc + L::cols * L::ld;
    sw = part + kWarps * NB * L::cols;
    st = sw + NB * L::cols;
  }
};

template <class T, int NB>
__device__ __forceinline__ std::int64_t split_slot(int blk, int chunk, int chunks, int tiles) {
  return (static_cast<std::int64_t>(blk) * chunks + chunk) *
         (NB * NB + static_cast<std::int64_t>(tiles) * NB * SplitShape<T>::cols);
}

template <class T, int NB>
__global__ void __launch_bounds__(kThreads) wy_split_gram_kernel(const WyBlocks<T> b, T* c, std::int64_t ldc,
                                                                 std::int64_t cols, int chunks, T* ws) {
  using L = SplitShape<T>;
  extern __shared__ __align__(16) unsigned char wy_smem[];
  const SplitSmem<T, NB> m(wy_smem);
  const int blk = blockIdx.x / chunks, chunk = blockIdx.x % chunks, r0 = chunk * L::chunk;
  const Block<T> x = block_of(b, blk);
  if (r0 >= x.rows) return;
  ChunkTile<T, L> tile(b, x, blk, c, ldc, cols);  // only loaded from here
  tile.at(r0);
  const bool v_aligned = aligned_16(x.v, b.ldv);
  load_v_chunk<T, NB, L>(b, x, r0, m.sv, v_aligned);
  tile.load(m.sc);
  cp_async_wait_all();
  __syncthreads();
  if (v_aligned && r0 == 0) fix_v_diagonal<T, NB, L>(x, m.sv);
  T* out = ws + split_slot<T, NB>(blk, chunk, chunks, gridDim.y);
  {
    T acc[Gram<T, NB, L::cols>::MI][Gram<T, NB, L::cols>::MC] = {};
    accumulate_gram<T, NB, L::cols, L>(m.sv, m.sc, x.rows - r0, acc);
    reduce_gram<T, NB, L::cols>(acc, m.part, m.sw);
  }
  T* w = out + NB * NB + static_cast<std::int64_t>(blockIdx.y) * NB * L::cols;
  for (int idx = threadIdx.x; idx < NB * L::cols; idx += kThreads) w[idx] = m.sw[idx];
  if (blockIdx.y != 0 || b.t) return;  // VᵀV (for T) once per chunk, unless T is given
  T acc[Gram<T, NB, NB>::MI][Gram<T, NB, NB>::MC] = {};
  accumulate_gram<T, NB, NB, L>(m.sv, m.sv, x.rows - r0, acc);
  reduce_gram<T, NB, NB>(acc, m.part, m.sw);
  for (int idx = threadIdx.x; idx < NB * NB; idx += kThreads) out[idx] = m.sw[idx];
}

template <class T, int NB>
__global__ void __launch_bounds__(kThreads) wy_split_update_kernel(const WyBlocks<T> b, T* c, std::int64_t ldc,
                                                                   std::int64_t cols, bool transpose, int chunks,
                                                                   const T* ws) {
  using L = SplitShape<T>;
  constexpr int TC = L::cols;
  extern __shared__ __align__(16) unsigned char wy_smem[];
  const SplitSmem<T, NB> m(wy_smem);
  const int blk = blockIdx.x / chunks, chunk = blockIdx.x % chunks, r0 = chunk * L::chunk;
  const Block<T> x = block_of(b, blk);
  if (r0 >= x.rows) return;
  ChunkTile<T, L> tile(b, x, blk, c, ldc, cols);
  tile.at(r0);
  const bool v_aligned = aligned_16(x.v, b.ldv);
  load_v_chunk<T, NB, L>(b, x, r0, m.sv, v_aligned);  // in flight while T and W are made
  tile.load(m.sc);
  const int own = (x.rows + L::chunk - 1) / L::chunk;
  const T* first = ws + split_slot<T, NB>(blk, 0, chunks, gridDim.y);
  const std::int64_t stride = split_slot<T, NB>(0, 1, chunks, gridDim.y);
  const T* w0 = first + NB * NB + static_cast<std::int64_t>(blockIdx.y) * NB * TC;
  // G (for larft_rows) and this tile's W: the chunks' partial sums, added in chunk order. The
  // loads of a batch of chunks are all issued before the first add. A loop that added each load
  // as it came waited on the L2 once per chunk and entry: on one H100, CAQR 110592 × 100 FP32 took
  // 1.048 ms with it and 1.001 without, 8192 × 256 1.018 and 0.930.
  constexpr int kG = NB * NB / kThreads, kW = NB * TC / kThreads, kBatch = 4;
  static_assert(kG * kThreads == NB * NB && kW * kThreads == NB * TC, "whole entries per thread");
  const bool given_t = b.t != nullptr;
  T g[kG] = {}, w[kW] = {};
  for (int q0 = 0; q0 < own; q0 += kBatch) {
    T pg[kBatch][kG], pw[kBatch][kW];
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
      const bool in = q0 + u < own;
      const std::int64_t at = static_cast<std::int64_t>(q0 + u) * stride + threadIdx.x;
#pragma unroll
      for (int e = 0; e < kG; ++e) pg[u][e] = in && !given_t ? first[at + e * kThreads] : T(0);
#pragma unroll
      for (int e = 0; e < kW; ++e) pw[u][e] = in ? w0[at + e * kThreads] : T(0);
    }
#pragma unroll
    for (int u = 0; u < kBatch; ++u) {
#pragma unroll
      for (int e = 0; e < kG; ++e) g[e] += pg[u][e];
#pragma unroll
      for (int e = 0; e < kW; ++e) w[e] += pw[u][e];
    }
  }
  if (!given_t)  // G, for larft_rows
#pragma unroll
    for (int e = 0; e < kG; ++e) m.part[threadIdx.x + e * kThreads] = g[e];
#pragma unroll
  for (int e = 0; e < kW; ++e) m.sw[threadIdx.x + e * kThreads] = w[e];
  if (given_t) {  // T(i, j) at tb[i + j·NB]
    const T* tb = b.t + static_cast<std::int64_t>(blk) * NB * NB;
    for (int idx = threadIdx.x; idx < NB * NB; idx += kThreads) m.st[(idx % NB) * (NB + 1) + idx / NB] = tb[idx];
  }
  __syncthreads();
  if (!given_t) {
    T* const keep = b.t_out && chunk == 0 && blockIdx.y == 0 ? b.t_out + static_cast<std::int64_t>(blk) * NB * NB : nullptr;
    larft_rows<T, NB>(m.part, b.tau + static_cast<std::int64_t>(blk) * b.tau_stride, x.k, [&](int i, int j, T v) {
      m.st[i * (NB + 1) + j] = v;
      if (keep) keep[i + j * NB] = v;
    });
  }
  __syncthreads();
  apply_op_t<T, NB, TC>(m.st, m.sw, transpose);
  cp_async_wait_all();
  __syncthreads();
  if (v_aligned && r0 == 0) fix_v_diagonal<T, NB, L>(x, m.sv);
  // C −= V W: a thread 4 rows × 2 columns (16 row groups × 16 column pairs).
  const int rg = threadIdx.x % 16, cg = threadIdx.x / 16;
  if (4 * rg < x.rows - r0) {
    T z[2][4];
#pragma unroll
    for (int j = 0; j < 2; ++j) load_vec(m.sc + (2 * cg + j) * L::ld + 4 * rg, z[j]);
#pragma unroll 4
    for (int l = 0; l < NB; ++l) {
      T vl[4];
      load_vec(m.sv + l * L::ld + 4 * rg, vl);
      const T w0l = m.sw[l * TC + 2 * cg], w1l = m.sw[l * TC + 2 * cg + 1];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        z[0][r] -= vl[r] * w0l;
        z[1][r] -= vl[r] * w1l;
      }
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) store_vec(z[j], m.sc + (2 * cg + j) * L::ld + 4 * rg);
  }
  __syncthreads();
  tile.store(m.sc);
}

// ---- The resident apply: FP32 blocks of at most 256 rows and 64 reflectors ------------------
//
// One thread block per SM, persistent over work items (a run of one block's 64-column tiles of C;
// each thread block takes an equal share of all the blocks' tiles in order, to within one tile:
// against items of whole groups dealt round robin, 43.4 → 44.3% of the FMA peak at 10⁶ × 128,
// 42.4 → 44.5% at 110592 × 512, results/nvidia-h100/apply-qt-h-3xtf32).
// Shared memory holds three 256 × 64 buffers that take turns as the item's V, the tile of C being
// updated, and the next load (bulk copies of whole columns where the block is whole), so every
// load is issued at least half a tile ahead: the tile's buffer is released once each thread has
// its entries of C in registers, V's once the item's last tile is done, and the next load in
// order (V of the next item, or its next tile) goes into whichever is free. Per tile, 256
// threads, each with 8 × 8 entries in registers (16-byte loads of 8 + 8 operands per 64 FMAs: the
// shared-memory pipe keeps pace with the FMA pipe):
// - phase 1, W = VᵀC (64 × 64): each warp has eight rows of W; lane (jg, q) its columns jg + 8e
//   over the rows 16s + 4q …, the four q's partial sums added by two shuffle rounds;
// - phase 2, Y = op(T) W, in place of W: a lane per two columns and the row groups w and 15 − w
//   (so the warps share T's zero triangle evenly), both in one loop where their ranges meet; T
//   stays in shared memory per item;
// - phase 3, C −= V Y: lane (a, jg) has rows 4a … and 128 + 4a …, columns 8jg …; stored straight
//   to global memory.
// What limits it (ncu, H100, 10⁶ × 128, at 42.2% of the FMA peak; 42.8% with whole tiles stored
// without edge checks and phase 2's loops unrolled twice): issue slots are 64% busy. With two
// warps per scheduler the FFMA loops of phases 1 and 3 issue on about 80% of their cycles; the
// bulk copies' issue loops, the shuffles, phase 2, the stores and the barriers take about a third
// of the time at half that rate. 12% of the FMAs meet V's zero triangle. Register-bank conflicts
// are one limit on the loops' own rate (about 70%): phase 1 loads both operands as four rows of a
// column, so row k's pair sits in registers of parity k mod 2 and each accumulator clashes on half
// the rows (scripts/sass_banks.py; V stored row-major gained too little,
// results/nvidia-h100/apply-qt-h-register-banks). Splitting the warps into
// two groups a phase apart, so that one group's loops would hide the other's rest, lost (29–34%,
// results/nvidia-h100/apply-qt-h-pingpong-tried): one warp alone issues its FFMA loop on only
// about 63% of its cycles, and the other group's phase 2 starves beside it.
//
// resident_3xtf32 (kTf32x3) runs phases 1 and 3 on the tensor cores (3xTF32 below), with the
// same buffers, loads, phase 2 and stores: phase 1 as 32 × 16 blocks of W per warp (rows 32·(warp
// / 4), columns 16·(warp mod 4)), phase 3 as 32 rows of C per warp; z becomes the accumulators'
// fragments (246–251 registers, no spills with tile positions in 32 bits). On an
// H100, 10⁶ rows: 53–54% of the FMA peak at 128 columns and 58–59% at 512, against 44.8% and 47.8%
// on the FMA pipes (results/nvidia-h100/apply-qt-h-3xtf32). ncu, before the loops were unrolled:
// the tensor pipe a third busy, warps waiting mostly on fixed-latency dependencies (the splits'
// integer operations and the products' chains) and on the tensor pipe itself, with two warps per
// scheduler.
struct ResidentShape {
  static constexpr int chunk = 256, cols = 64, nb = 64;
  static constexpr int ld = chunk + 4;  // columns four banks apart, 16-byte aligned
  static_assert(chunk == kThreads, "a thread per row when loading entry by entry");
};
constexpr int kResidentMaxRows = ResidentShape::chunk;
constexpr int kResidentBuffers = 3;

// Three buffers, W/Y (64 × 64, row-major) and T (op(T) row by row, 16-byte groups swizzled).
constexpr std::size_t resident_smem_bytes() {
  using L = ResidentShape;
  return sizeof(float) * (static_cast<std::size_t>(kResidentBuffers) * L::cols * L::ld + 2 * L::nb * L::nb);
}

// Phase 1's step: acc[u][e] += the 4-row dot products of V's column 8·ib + u and C's column jg + 8e.
__device__ __forceinline__ void resident_dot4(float (&acc)[8][8], const float4 (&v)[8], const float4 (&y)[8]) {
#pragma unroll
  for (int u = 0; u < 8; ++u)
#pragma unroll
    for (int e = 0; e < 8; ++e)
      acc[u][e] = fmaf(v[u].w, y[e].w, fmaf(v[u].z, y[e].z, fmaf(v[u].y, y[e].y, fmaf(v[u].x, y[e].x, acc[u][e]))));
}
// Eight 16-byte loads `stride` entries apart.
__device__ __forceinline__ void resident_load8(float4 (&x)[8], const float* p, int stride) {
#pragma unroll
  for (int u = 0; u < 8; ++u) x[u] = *reinterpret_cast<const float4*>(p + u * stride);
}
// Phase 3's step: z[j][r] −= V(row r, l)·Y(l, column j) for one l (rows 4a …, 128 + 4a …; 8 columns).
struct ResidentRank1 {
  float4 v0, v1, y0, y1;
  __device__ __forceinline__ void load(const float* pv, const float* py) {
    v0 = *reinterpret_cast<const float4*>(pv);
    v1 = *reinterpret_cast<const float4*>(pv + 128);
    y0 = *reinterpret_cast<const float4*>(py);
    y1 = *reinterpret_cast<const float4*>(py + 4);
  }
  __device__ __forceinline__ void apply(float (&z)[8][8]) const {
    const float vr[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
    const float yr[8] = {y0.x, y0.y, y0.z, y0.w, y1.x, y1.y, y1.z, y1.w};
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int r = 0; r < 8; ++r) z[j][r] = fmaf(-vr[r], yr[j], z[j][r]);
  }
};

// ---- 3xTF32: phases 1 and 3 of the resident apply on the tensor cores ---------------------------
//
// Each FP32 operand x is split into two TF32 numbers (TF32 keeps 10 of FP32's 23 fraction bits):
// big = x rounded to 10 fraction bits by integer arithmetic on its bits (half-way cases away from
// zero, as cvt.rna rounds), and small = x − big, exact, which the tensor core truncates to TF32.
// a·b is summed as
// a_small·b_big + a_big·b_small + a_big·b_big in FP32 (mma.sync m16n8k8, three tensor-core
// products per FP32 FMA). Per product the dropped a_small·b_small and the truncation of the small
// parts are below 2⁻²¹ relative, against FP32's 2⁻²⁴ per rounding; the accumulation inside the
// tensor core adds its own, so long chains of it are avoided (tc_gram). Measured on an H100
// against the columnwise FFMA apply: at most 48 ε, the FFMA resident kernel 40 ε
// (test_gpu_wy_apply). Finite x within 2⁻¹² of FLT_MAX would round to infinity. cvt.rna.tf32.f32
// for big ran the whole kernel at 31% of the FMA peak against 44%: the conversions were the
// bottleneck. The flop count stays the FP32 one, so the rate compares with the FMA peak like the
// FFMA kernel's.
__device__ __forceinline__ void split_tf32(float x, std::uint32_t& big, std::uint32_t& small) {
  big = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
  small = __float_as_uint(x - __uint_as_float(big));
}
// An m16n8k8 operand fragment, split.
template <int N>
struct Tf32Frag {
  std::uint32_t big[N], small[N];
  __device__ __forceinline__ void set(const float (&x)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) split_tf32(x[i], big[i], small[i]);
  }
};
__device__ __forceinline__ void mma_tf32(float* d, const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
// acc(j, n) += a[j]·b[n] in 3xTF32 for MT × NT tiles, term by term over all of them (small·big,
// big·small, big·big), so that no accumulator waits on itself.
template <int MT, int NT, class Acc>
__device__ __forceinline__ void mma_3xtf32(Acc&& acc, const Tf32Frag<4> (&a)[MT], const Tf32Frag<2> (&b)[NT]) {
#pragma unroll
  for (int term = 0; term < 3; ++term)
#pragma unroll
    for (int j = 0; j < MT; ++j)
#pragma unroll
      for (int n = 0; n < NT; ++n) mma_tf32(acc(j, n), term == 0 ? a[j].small : a[j].big, term == 1 ? b[n].small : b[n].big);
}
// Phase 1's 16-row steps on the tensor cores over V's rows [r_begin, r_end): acc[j][n] += VᵀC for
// MT 16-column groups of V (pa + 16j·ld …) and NT 8-column groups of C (pb + 8n·ld …). The sum
// over the rows is permuted so that a lane loads 16 bytes: rows r0 + 4t … r0 + 4t + 3 are k = t
// and t + 4 of the steps at r0 and r0 + 8. Each step's six products are summed
// in fresh accumulators and added to acc in FP32: one chain of tensor-core sums over all 256 rows
// was 3–4 times less accurate (test_gpu_wy_apply: 160 ε from the columnwise apply against 48 ε;
// the FFMA kernel 40 ε), for no measurable cost once the tile positions were held in 32-bit
// registers (with 64-bit ones the step loop could only be unrolled twice without spills).
template <int MT, int NT>
__device__ __forceinline__ void tc_gram(float (&acc)[MT][NT][4], const float* pa, const float* pb, int ld,
                                        int r_begin, int r_end) {
#pragma unroll 4
  for (int r0 = r_begin; r0 < r_end; r0 += 16) {
    float4 av[MT][2], bv[NT];
    float part[MT][NT][4] = {};
#pragma unroll
    for (int j = 0; j < MT; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) av[j][h] = *reinterpret_cast<const float4*>(pa + (16 * j + 8 * h) * ld + r0);
#pragma unroll
    for (int n = 0; n < NT; ++n) bv[n] = *reinterpret_cast<const float4*>(pb + 8 * n * ld + r0);
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      Tf32Frag<4> fa[MT];
      Tf32Frag<2> fb[NT];
#pragma unroll
      for (int j = 0; j < MT; ++j) {
        const float4 lo = av[j][0], hi = av[j][1];
        const float x[4] = {s == 0 ? lo.x : lo.z, s == 0 ? hi.x : hi.z, s == 0 ? lo.y : lo.w, s == 0 ? hi.y : hi.w};
        fa[j].set(x);
      }
#pragma unroll
      for (int n = 0; n < NT; ++n) {
        const float x[2] = {s == 0 ? bv[n].x : bv[n].z, s == 0 ? bv[n].y : bv[n].w};
        fb[n].set(x);
      }
      mma_3xtf32<MT, NT>([&](int j, int n) { return part[j][n]; }, fa, fb);
    }
#pragma unroll
    for (int j = 0; j < MT; ++j)
#pragma unroll
      for (int n = 0; n < NT; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[j][n][e] += part[j][n][e];
  }
}
// W and Y (64 × 64, row-major) for the tensor-core phases: the column pairs of row l XOR-swizzled
// by 4·((l / 2) mod 4). Phase 3's fragment loads (rows l0 + 2t and l0 + 2t + 1, both swizzled by
// 4t, columns 8n + g) then fall in 32 distinct banks, phase 2 reads and writes whole rows, and
// phase 1's 4-byte stores meet two-way conflicts.
__device__ __forceinline__ int tc_swizzle(int l) { return 4 * ((l >> 1) & 3); }
__device__ __forceinline__ int tc_index(int l, int e) { return l * 64 + 2 * ((e >> 1) ^ tc_swizzle(l & 7)) + (e & 1); }

template <bool kTf32x3>
__global__ void __launch_bounds__(kThreads, 1)
    wy_apply_resident_kernel(const WyBlocks<float> b, const float* t, int t_width, float* c, std::int64_t ldc,
                             std::int64_t cols, bool transpose) {
  using L = ResidentShape;
  constexpr int ld = L::ld, NB = L::nb, TC = L::cols;
  extern __shared__ __align__(16) unsigned char wy_smem[];
  float* const buffers = reinterpret_cast<float*>(wy_smem);
  float* const sw = buffers + kResidentBuffers * TC * ld;  // W, then Y
  // A(l, i) = op(T)(i, l) at l·64 + 4·((i / 4) XOR ((l / 4) mod 16)) + i mod 4: the transposing
  // copy's stores spread over the banks, and phase 2 reads four i's at once, one offset per four l.
  float* const sa = sw + NB * NB;
  const auto buffer = [&](int i) { return buffers + i * TC * ld; };
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int tiles = static_cast<int>((cols + TC - 1) / TC);
  // Work items, each a run of one block's tiles: thread block c takes tiles
  // [total·c / G, total·(c + 1) / G) of all the blocks' tiles in order (total = blocks × tiles, G
  // thread blocks), so every thread block gets its share to within one tile and loads V once per
  // block it meets. An item starts at a tile position `cur`.
  const std::int64_t total = static_cast<std::int64_t>(b.blocks) * tiles;  // < 2³¹ (the launcher checks)
  const int start = static_cast<int>(total * blockIdx.x / gridDim.x);
  const int stop = static_cast<int>(total * (blockIdx.x + 1) / gridDim.x);
  const auto item_at = [&](int cur, int& blk, int& first, int& end) {
    blk = static_cast<int>(cur / tiles);
    first = cur % tiles;
    end = min(tiles, first + (stop - cur));
  };

  // The loads, in the order they are needed: per item its V, then its tiles (the first one with T).
  int load_cur = start, load_tile = 0, load_end = 0, load_first = 0;
  int load_blk = 0;
  bool load_v = true;
  item_at(load_cur, load_blk, load_tile, load_end);
  load_first = load_tile;
  int free_mask = (1 << kResidentBuffers) - 1;
  int fifo = 0, fifo_n = 0;  // buffers of the issued loads not yet taken, oldest in the lowest 4 bits
  // A whole V or tile (256 rows, 64 columns, 16-byte aligned) comes by 64 bulk copies of a column
  // each, eight from the first lane of every warp, completing on the buffer's mbarrier (in column
  // 0's padding; one arrival per warp); bulk_mask: buffers whose pending load is such, parity:
  // each mbarrier's phase to wait for.
  int bulk_mask = 0, parity = 0;
  const auto bar = [&](int i) { return smem_u32(buffer(i) + L::chunk); };
  const auto bulk_load = [&](int buf, const float* src, std::int64_t lds) {
    bulk_mask |= 1 << buf;
    if (threadIdx.x % 32 != 0) return;
    constexpr int per_warp = TC / kWarps;
    constexpr unsigned column = L::chunk * sizeof(float);
    fence_proxy_async_shared();
    barrier_expect(bar(buf), per_warp * column);
    const int j0 = per_warp * static_cast<int>(threadIdx.x / 32);
#pragma unroll
    for (int j = j0; j < j0 + per_warp; ++j) cp_async_bulk(buffer(buf) + j * ld, src + j * lds, column, bar(buf));
  };
  const auto landed = [&](int buf) {  // a bulk load's bytes are in
    if (!(bulk_mask >> buf & 1)) return;
    barrier_wait(bar(buf), parity >> buf & 1);
    parity ^= 1 << buf;
    bulk_mask &= ~(1 << buf);
  };
  if (threadIdx.x == 0)
    for (int i = 0; i < kResidentBuffers; ++i) barrier_init(bar(i), kWarps);
  barrier_init_fence();
  __syncthreads();
  const auto issue = [&] {
    while (free_mask != 0 && load_cur < stop) {
      const int buf = __ffs(free_mask) - 1;
      free_mask &= free_mask - 1;
      const int blk = load_blk;
      const Block<float> x = block_of(b, blk);
      if (load_v) {
        if (x.rows == L::chunk && x.k == NB && aligned_16(x.v, b.ldv)) {
          bulk_load(buf, x.v, b.ldv);
        } else {
          load_v_chunk<float, NB, L>(b, x, 0, buffer(buf), aligned_16(x.v, b.ldv));
        }
        load_v = false;
      } else {
        float* cb = c + x.first + load_tile * TC * ldc;
        const int nc = static_cast<int>(min(static_cast<std::int64_t>(TC), cols - load_tile * TC));
        if (aligned_16(c + x.first, ldc)) {
          if (x.rows == L::chunk && nc == TC) {
            bulk_load(buf, cb, ldc);
          } else {
            copy_columns_16<float, TC, L>(buffer(buf), cb, ldc, x.rows, nc);
          }
        } else {
          const int r = threadIdx.x;
          const float* src = cb + min(r, x.rows - 1);
#pragma unroll 4
          for (int j = 0; j < TC; ++j) cp_async_entry(buffer(buf) + j * ld + r, src + j * ldc, r < x.rows && j < nc);
        }
        if (load_tile == load_first) {  // the item's T, as A = op(T) (zeros past the block's padded width)
          // Thread: row r = 4rq + rr of T, columns 4k + c0. A(r, 4k + c0) lies at 64r + c0 + 4(k XOR rq)
          // and A(4k + c0, r) at 64c0 + rr + 256k + 4(k XOR rq).
          const float* tb = t + static_cast<std::int64_t>(blk) * t_width * t_width;
          const int r = threadIdx.x % NB, c0 = threadIdx.x / NB, rq = r / 4;
          float* const base = sa + (transpose ? NB * r + c0 : NB * c0 + r % 4);
          const int step = transpose ? 0 : 4 * NB;
          if (t_width == NB) {
            const float* src = tb + r + c0 * NB;
#pragma unroll
            for (int k = 0; k < NB / 4; ++k) cp_async_4_full(base + step * k + 4 * (k ^ rq), src + 4 * k * NB);
          } else {
#pragma unroll
            for (int k = 0; k < NB / 4; ++k) {
              const int col = 4 * k + c0;
              const bool in = r < t_width && col < t_width;
              cp_async_4(base + step * k + 4 * (k ^ rq), tb + (in ? r + col * t_width : 0), in ? 4 : 0);
            }
          }
        }
        if (++load_tile == load_end) {
          load_cur += load_end - load_first;
          load_v = true;
          if (load_cur < stop) {
            item_at(load_cur, load_blk, load_tile, load_end);
            load_first = load_tile;
          }
        }
      }
      cp_async_commit();
      fifo |= buf << (4 * fifo_n++);
    }
  };
  const auto take = [&] {
    const int buf = fifo & 15;
    fifo >>= 4;
    --fifo_n;
    return buf;
  };
  issue();

  // Phase 1: rows 8·ib + u of W, columns jg + 8e, over rows 16s + 4q … 16s + 4q + 3. Warps w and
  // w + 4 share a scheduler; with ib = w, w ^ 2 for w ≥ 4, each pair skips 3 of its 32 steps.
  const int jg = lane % 8, q = lane / 8, ib = warp < 4 ? warp : warp ^ 2;
  // Phase 2: columns 2·lane, 2·lane + 1 of Y; row groups warp and 15 − warp (4 rows each).
  // Phase 3: rows 4a … and 128 + 4a …, columns 8·g3 … of C.
  const int a3 = lane % 8 + 8 * (warp % 4), g3 = lane / 8 + 4 * (warp / 4);

  int next_cur = start;
  for (int cur = start; cur < stop; cur = next_cur) {
    int blk = 0;
    int first = 0, end = 0;
    item_at(cur, blk, first, end);
    next_cur = cur + (end - first);
    const Block<float> x = block_of(b, blk);
    const bool v_aligned = aligned_16(x.v, b.ldv);
    float* cout = c + x.first;
    const bool c_aligned = aligned_16(cout, ldc);
    const int vbuf = take();
    for (int tile = first; tile < end; ++tile) {
      const int cbuf = take();
      if (fifo_n >= 2)
        cp_async_wait<2>();
      else if (fifo_n == 1)
        cp_async_wait<1>();
      else
        cp_async_wait<0>();
      if (tile == first) landed(vbuf);
      landed(cbuf);
      __syncthreads();
      if (tile == first && v_aligned) fix_v_diagonal<float, NB, L>(x, buffer(vbuf));
      const float* sv = buffer(vbuf);
      const float* sc = buffer(cbuf);

      if constexpr (kTf32x3) {
        // Phase 1 on the tensor cores. A fragment's row (column) g is V's (C's) column
        // σ(g) = g / 2 + 4·(g mod 2) of its group of 8, so a quarter warp's loads fall in distinct
        // banks. V is zero above its diagonal: rows of V below W's first row are skipped.
        const int g = lane >> 2, t = lane & 3, sg = (g >> 1) + 4 * (g & 1);
        // Warp (mi, nq) = (warp / 4, warp mod 4): rows 32mi … and columns 16nq … of W (warps w and
        // w + 4 share a scheduler, so each pair skips 2 of its 32 steps).
        const int mi = warp >> 2, nq = warp & 3;
        float acc[2][2][4] = {};
        tc_gram<2, 2>(acc, sv + (32 * mi + sg) * ld + 4 * t, sc + (16 * nq + sg) * ld + 4 * t, ld, 32 * mi, L::chunk);
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
          for (int n = 0; n < 2; ++n)
#pragma unroll
            for (int e = 0; e < 4; ++e)
              sw[tc_index(32 * mi + 16 * j + 8 * (e >> 1) + sg, 16 * nq + 8 * n + 4 * (e & 1) + t)] = acc[j][n][e];
      } else {  // phase 1 on the FMA pipes; V is zero above its diagonal, so rows below 8·ib are skipped
        float acc[8][8] = {};
        const float* pv = sv + 8 * ib * ld + 4 * q;
        const float* pc = sc + jg * ld + 4 * q;
#pragma unroll 2
        for (int r = 16 * (ib / 2); r < L::chunk; r += 16) {
          float4 va[8], ca[8];
          resident_load8(va, pv + r, ld);
          resident_load8(ca, pc + r, 8 * ld);
          resident_dot4(acc, va, ca);
        }
        // The four q's sums: lanes 16 apart swap column halves, then lanes 8 apart row halves.
        const bool hi_e = lane & 16, hi_u = lane & 8;
        float k1[8][4];
#pragma unroll
        for (int u = 0; u < 8; ++u)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float mine = hi_e ? acc[u][e + 4] : acc[u][e], other = hi_e ? acc[u][e] : acc[u][e + 4];
            k1[u][e] = mine + __shfl_xor_sync(0xffffffffu, other, 16);
          }
        const int u0 = hi_u ? 4 : 0, e0 = hi_e ? 4 : 0;
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const float mine = hi_u ? k1[u + 4][e] : k1[u][e], other = hi_u ? k1[u][e] : k1[u + 4][e];
            sw[(8 * ib + u0 + u) * NB + jg + 8 * (e0 + e)] = mine + __shfl_xor_sync(0xffffffffu, other, 8);
          }
      }
      // This lane's entries of C for phase 3. FFMA: z[column][row], rows 4a … then 128 + 4a ….
      // 3xTF32: the accumulators of its two 16 × 8 tiles (rows 32·warp + 4g …, a fragment's rows g
      // and g + 8 being rows 4g + 2j and 4g + 2j + 1) in each of the eight column groups,
      // z[n][4j + e].
      float z[8][8];
      if constexpr (kTf32x3) {
        const int rw = 32 * warp + 4 * (lane >> 2);
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int cc = 0; cc < 2; ++cc) {
            const float4 x4 = *reinterpret_cast<const float4*>(sc + (8 * n + 2 * (lane & 3) + cc) * ld + rw);
            z[n][cc] = x4.x, z[n][2 + cc] = x4.y, z[n][4 + cc] = x4.z, z[n][6 + cc] = x4.w;
          }
      } else {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const float* col = sc + (8 * g3 + j) * ld + 4 * a3;
          const float4 lo = *reinterpret_cast<const float4*>(col), hi = *reinterpret_cast<const float4*>(col + 128);
          z[j][0] = lo.x, z[j][1] = lo.y, z[j][2] = lo.z, z[j][3] = lo.w;
          z[j][4] = hi.x, z[j][5] = hi.y, z[j][6] = hi.z, z[j][7] = hi.w;
        }
      }
      __syncthreads();  // W is whole

      {  // phase 2, Y = op(T) W: rows 4g … of Y from A(l, 4g …) (nonzero for l ≤ i with Tᵀ, l ≥ i with T)
        // Row l's columns 2·lane and 2·lane + 1 of W and Y (3xTF32: Y negated, for phase 3's sums).
        const auto w_pair = [&](int l) { return l * NB + 2 * (kTf32x3 ? lane ^ tc_swizzle(l & 7) : lane); };
        float y[2][4][2] = {};
        int lo[2], hi[2];
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int g = h == 0 ? warp : 15 - warp;
          lo[h] = transpose ? 0 : 4 * g;
          hi[h] = transpose ? 4 * g + 4 : NB;
        }
        // Rows l4 … l4 + 3 of A for the groups in `groups` (bit h: group h), W's rows read once.
        const auto step = [&](int l4, int groups) {
          const int s = (l4 >> 2) & 15;
          const float* pa0 = sa + l4 * NB + ((warp ^ s) << 2);  // A(l4 + k, 4g) at pa + k·NB
          const float* pa1 = sa + l4 * NB + (((15 - warp) ^ s) << 2);
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            const float2 wv = *reinterpret_cast<const float2*>(sw + w_pair(l4 + k));
#pragma unroll
            for (int h = 0; h < 2; ++h) {
              if (!(groups >> h & 1)) continue;
              const float4 av = *reinterpret_cast<const float4*>((h == 0 ? pa0 : pa1) + k * NB);
              const float ar[4] = {av.x, av.y, av.z, av.w};
#pragma unroll
              for (int ii = 0; ii < 4; ++ii) {
                y[h][ii][0] = fmaf(ar[ii], wv.x, y[h][ii][0]);
                y[h][ii][1] = fmaf(ar[ii], wv.y, y[h][ii][1]);
              }
            }
          }
        };
        // Both groups where their ranges meet, then each alone over the rest of its own.
        const int both_lo = max(lo[0], lo[1]), both_hi = min(hi[0], hi[1]);
#pragma unroll 2
        for (int l4 = both_lo; l4 < both_hi; l4 += 4) step(l4, 3);
#pragma unroll
        for (int h = 0; h < 2; ++h) {
#pragma unroll 2
          for (int l4 = lo[h]; l4 < both_lo; l4 += 4) step(l4, 1 << h);
#pragma unroll 2
          for (int l4 = both_hi; l4 < hi[h]; l4 += 4) step(l4, 1 << h);
        }
        __syncthreads();  // W's readers are done: Y overwrites it
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int g = h == 0 ? warp : 15 - warp;
#pragma unroll
          for (int ii = 0; ii < 4; ++ii)
            *reinterpret_cast<float2*>(sw + w_pair(4 * g + ii)) = kTf32x3 ? make_float2(-y[h][ii][0], -y[h][ii][1])
                                                                        : make_float2(y[h][ii][0], y[h][ii][1]);
        }
      }
      __syncthreads();  // Y is whole; the tile's buffer has been read
      free_mask |= 1 << cbuf;
      issue();

      if constexpr (kTf32x3) {
        // C is the accumulator here, so the tensor cores' truncating sums shrink its entries by a
        // few units of 2⁻²⁴ per apply: fine for one apply (48 ε above), but applies chained on the
        // same columns compound it (CAQR's Q reached ‖I − QᵀQ‖ = 7.6 √n ε with a leaf apply built
        // this way, results/nvidia-h100/leaf-apply-3xtf32-tried), so CAQR does not use this kernel.
        // Phase 3 on the tensor cores, C += V·(−Y): this warp's rows 32·warp …, the sum over l
        // permuted so that columns l0 + 2t and l0 + 2t + 1 of V are k = t and t + 4 of the step at
        // l0 (each a 16-byte load of rows 4g … 4g + 3, both fragments' rows); Y's entries of rows
        // l0 + 2t, l0 + 2t + 1 and columns 8n + g fall in distinct banks (tc_swizzle).
        const int g = lane >> 2, t = lane & 3;
        const float* pv = sv + 2 * t * ld + 32 * warp + 4 * g;
        const float* py = sw + 2 * t * NB;  // rows l0 + 2t and l0 + 2t + 1 of Y, both swizzled by 4t
#pragma unroll 4
        for (int l0 = 0; l0 < NB; l0 += 8) {
          const float4 v0 = *reinterpret_cast<const float4*>(pv + l0 * ld);
          const float4 v1 = *reinterpret_cast<const float4*>(pv + (l0 + 1) * ld);
          Tf32Frag<4> fa[2];
          const float x0[4] = {v0.x, v0.y, v1.x, v1.y}, x1[4] = {v0.z, v0.w, v1.z, v1.w};
          fa[0].set(x0);
          fa[1].set(x1);
#pragma unroll
          for (int n = 0; n < 8; ++n) {
            Tf32Frag<2> fb[1];
            const int col = 8 * ((n & 4) | ((n & 3) ^ t)) + g;  // = tc_index(l0 + 2t (+ 1), 8n + g) − its row's start
            const float y[2] = {py[l0 * NB + col], py[l0 * NB + NB + col]};
            fb[0].set(y);
            mma_3xtf32<2, 1>([&](int j, int) { return z[n] + 4 * j; }, fa, fb);
          }
        }
      } else {  // phase 3 on the FMA pipes, the next l's operands loaded while these are used
        const float* pv = sv + 4 * a3;
        const float* py = sw + 8 * g3;
        ResidentRank1 p, n;
        p.load(pv, py);
#pragma unroll 2
        for (int l = 0; l < NB; l += 2) {
          n.load(pv + (l + 1) * ld, py + (l + 1) * NB);
          p.apply(z);
          if (l + 2 < NB) p.load(pv + (l + 2) * ld, py + (l + 2) * NB);
          n.apply(z);
        }
      }
      const int nc = static_cast<int>(min(static_cast<std::int64_t>(TC), cols - tile * TC));
      if constexpr (kTf32x3) {  // rows 32·warp + 4g … 4g + 3 of columns 8n + 2t + cc
        const int r0 = 32 * warp + 4 * (lane >> 2);
        const bool whole = c_aligned && x.rows == L::chunk && nc == TC;
        const bool rows_aligned = c_aligned && r0 + 4 <= x.rows;
        float* const base = cout + (tile * TC + 2 * (lane & 3)) * ldc + r0;
#pragma unroll
        for (int n = 0; n < 8; ++n)
#pragma unroll
          for (int cc = 0; cc < 2; ++cc) {
            const int col = 8 * n + 2 * (lane & 3) + cc;
            float* const dst = base + (8 * n + cc) * ldc;
            const float e[4] = {z[n][cc], z[n][2 + cc], z[n][4 + cc], z[n][6 + cc]};
            if (whole || (col < nc && rows_aligned)) {
              *reinterpret_cast<float4*>(dst) = make_float4(e[0], e[1], e[2], e[3]);
            } else if (col < nc) {
              for (int r = 0; r < 4 && r0 + r < x.rows; ++r) dst[r] = e[r];
            }
          }
        continue;
      }
      if (c_aligned && x.rows == L::chunk && nc == TC) {  // a whole tile: 16-byte stores only
        float* dst = cout + (tile * TC + 8 * g3) * ldc + 4 * a3;
#pragma unroll
        for (int j = 0; j < 8; ++j, dst += ldc) {
          *reinterpret_cast<float4*>(dst) = make_float4(z[j][0], z[j][1], z[j][2], z[j][3]);
          *reinterpret_cast<float4*>(dst + 128) = make_float4(z[j][4], z[j][5], z[j][6], z[j][7]);
        }
        continue;
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) {
        if (8 * g3 + j >= nc) break;
        float* dst = cout + (tile * TC + 8 * g3 + j) * ldc;
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int r0 = 4 * a3 + 128 * half;
          if (c_aligned && r0 + 4 <= x.rows) {
            *reinterpret_cast<float4*>(dst + r0) =
                make_float4(z[j][4 * half], z[j][4 * half + 1], z[j][4 * half + 2], z[j][4 * half + 3]);
          } else {
            for (int r = 0; r < 4 && r0 + r < x.rows; ++r) dst[r0 + r] = z[j][4 * half + r];
          }
        }
      }
    }
    __syncthreads();  // V's readers are done
    free_mask |= 1 << vbuf;
    issue();
  }
  cp_async_wait<0>();
}

template <class T>
void check_blocks(const WyBlocks<T>& b) {
  const auto bad = [](const std::string& why) { throw std::invalid_argument("compact-WY apply: " + why); };
  if (b.k < 1 || b.k > wy_max_reflectors<T>())
    bad("k = " + std::to_string(b.k) + "; 1 … " + std::to_string(wy_max_reflectors<T>()) + " reflectors per block in " +
        (sizeof(T) == 4 ? "FP32" : "FP64"));
  if (b.blocks < 1) bad("no blocks");
  if (!b.v || !b.tau || b.ldv < 1) bad("no reflectors");
  switch (b.rows) {
    case WyRows::fixed:
      if (b.block_rows < 1 || (b.m + b.block_rows - 1) / b.block_rows != b.blocks)
        bad("fixed blocks of " + std::to_string(b.block_rows) + " rows do not tile m = " + std::to_string(b.m) + " in " +
            std::to_string(b.blocks) + " blocks");
      break;
    case WyRows::split:
      if (b.m < b.blocks) bad("m = " + std::to_string(b.m) + " rows cannot split into " + std::to_string(b.blocks) + " blocks");
      break;
    case WyRows::tree:
      if (b.fan_in < 2 || b.leaves < 1 || b.span < 1 || b.children < 1 ||
          (b.children + b.fan_in - 1) / b.fan_in != b.blocks)
        bad("a tree level of " + std::to_string(b.blocks) + " nodes cannot stack " + std::to_string(b.children) +
            " children " + std::to_string(b.fan_in) + " at a time");
      break;
  }
}

// The width a block of k reflectors runs at (its V and T padded with zeros): 16, 32 or 64.
int padded_width(int k) { return k <= 16 ? 16 : k <= kWyChunkedMaxReflectors ? kWyChunkedMaxReflectors : 64; }

// f(NB) with NB = padded_width(k) as a std::integral_constant (64 only in FP32; check_blocks has
// rejected wider FP64 blocks).
template <class T, class F>
void with_width(int k, F&& f) {
  if (k <= 16)
    f(std::integral_constant<int, 16>{});
  else if (k <= kWyChunkedMaxReflectors)
    f(std::integral_constant<int, kWyChunkedMaxReflectors>{});
  else if constexpr (sizeof(T) == 4)
    f(std::integral_constant<int, 64>{});
}

// Opt-in shared memory for each instantiation, once (FP64 at 32 wide needs 82 KB). The chunked
// and split applies run at most 32 wide; the resident apply and 64-wide T are FP32 only.
template <class T, int NB>
void configure() {
  static const bool done = [] {
    constexpr int bytes = static_cast<int>(smem_bytes<T, NB>());
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(wy_larft_kernel<T, NB>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    if constexpr (NB <= kWyChunkedMaxReflectors) {
      GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(wy_apply_kernel<T, NB>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
      constexpr int split = static_cast<int>(split_smem_bytes<T, NB>());
      GPUFACT_CUDA_CHECK(
          cudaFuncSetAttribute(wy_split_gram_kernel<T, NB>, cudaFuncAttributeMaxDynamicSharedMemorySize, split));
      GPUFACT_CUDA_CHECK(
          cudaFuncSetAttribute(wy_split_update_kernel<T, NB>, cudaFuncAttributeMaxDynamicSharedMemorySize, split));
    }
    if constexpr (sizeof(T) == 4 && NB == 64) {
      constexpr int resident = static_cast<int>(resident_smem_bytes());
      GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(wy_apply_resident_kernel<false>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize, resident));
      GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(wy_apply_resident_kernel<true>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize, resident));
    }
    return true;
  }();
  (void)done;
}

// The most rows any block has.
template <class T>
std::int64_t widest_block_rows(const WyBlocks<T>& b) {
  if (b.rows == WyRows::fixed) return b.block_rows;
  if (b.rows == WyRows::split) return (b.m + b.blocks - 1) / b.blocks;
  return static_cast<std::int64_t>(b.fan_in) * b.k;
}

}  // namespace

const char* to_string(WyApplyKernel k) {
  switch (k) {
    case WyApplyKernel::automatic:
      return "auto";
    case WyApplyKernel::chunked:
      return "chunked";
    case WyApplyKernel::resident:
      return "resident";
    case WyApplyKernel::resident_3xtf32:
      return "resident_3xtf32";
  }
  return "?";
}

WyApplyKernel wy_apply_kernel_from(const std::string& name) {
  for (const auto k : {WyApplyKernel::automatic, WyApplyKernel::chunked, WyApplyKernel::resident,
                       WyApplyKernel::resident_3xtf32})
    if (name == to_string(k)) return k;
  throw std::invalid_argument("compact-WY apply kernel '" + name + "': auto, chunked, resident or resident_3xtf32");
}

int wy_t_entries(int k) { return padded_width(k) * padded_width(k); }

template <class T>
WyApplyKernel wy_apply_kernel_for(const WyBlocks<T>& b, WyApplyKernel kernel) {
  if (kernel != WyApplyKernel::automatic) return kernel;
  return b.k > kWyChunkedMaxReflectors ? WyApplyKernel::resident : WyApplyKernel::chunked;
}

template <class T>
std::string wy_apply_kernel_problem(const WyBlocks<T>& b, WyApplyKernel kernel) {
  if (wy_apply_kernel_for(b, kernel) == WyApplyKernel::chunked) {
    if (b.k > kWyChunkedMaxReflectors)
      return "the chunked apply takes at most " + std::to_string(kWyChunkedMaxReflectors) +
             " reflectors per block; k = " + std::to_string(b.k);
    return {};
  }
  if (sizeof(T) != 4) return std::string("the ") + to_string(wy_apply_kernel_for(b, kernel)) + " apply is FP32 only";
  if (b.rows == WyRows::tree) return "a tree level gathers its rows; the resident apply needs contiguous ones";
  if (const std::int64_t rows = widest_block_rows(b); rows > kResidentMaxRows)
    return "blocks of " + std::to_string(rows) + " rows; the resident apply holds at most " +
           std::to_string(kResidentMaxRows);
  return {};
}

template <class T>
void prepare_wy_kernels() {
  configure<T, 16>();
  configure<T, 32>();
  if constexpr (sizeof(T) == 4) configure<T, 64>();
}

template <class T>
void launch_wy_larft(const WyBlocks<T>& b, T* t, cudaStream_t stream) {
  check_blocks(b);
  with_width<T>(b.k, [&](auto nb) {
    constexpr int NB = decltype(nb)::value;
    configure<T, NB>();
    wy_larft_kernel<T, NB><<<static_cast<unsigned>(b.blocks), kThreads, smem_bytes<T, NB>(), stream>>>(b, t);
  });
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void launch_wy_apply(const WyBlocks<T>& b, const T* t, T* c, std::int64_t ldc, std::int64_t cols, bool transpose,
                     cudaStream_t stream, WyApplyKernel kernel) {
  check_blocks(b);
  if (const auto why = wy_apply_kernel_problem(b, kernel); !why.empty())
    throw std::invalid_argument("compact-WY apply: " + why);
  if (cols <= 0) return;
  if (const auto kind = wy_apply_kernel_for(b, kernel);
      kind == WyApplyKernel::resident || kind == WyApplyKernel::resident_3xtf32) {
    if constexpr (sizeof(T) == 4) {
      configure<T, 64>();
      constexpr std::int64_t kTileCols = ResidentShape::cols;
      const std::int64_t tiles = (cols + kTileCols - 1) / kTileCols;
      const std::int64_t items = b.blocks * tiles;  // a thread block per SM takes its share of the tiles
      if (items >= (std::int64_t{1} << 31) || cols >= (std::int64_t{1} << 31))
        throw std::invalid_argument("compact-WY apply: " + std::to_string(b.blocks) + " blocks × " +
                                    std::to_string(cols) + " columns is too many");
      const auto grid = static_cast<unsigned>(std::min<std::int64_t>(items, current_device_sm_count()));
      const auto run = kind == WyApplyKernel::resident_3xtf32 ? wy_apply_resident_kernel<true>
                                                              : wy_apply_resident_kernel<false>;
      run<<<grid, kThreads, resident_smem_bytes(), stream>>>(b, t, padded_width(b.k), c, ldc, cols, transpose);
    }
    GPUFACT_CHECK_LAUNCH();
    return;
  }
  constexpr int kTileCols = Shape<T>::cols;
  const std::int64_t tiles = (cols + kTileCols - 1) / kTileCols;
  if (tiles > 65535)
    throw std::invalid_argument("compact-WY apply: cols = " + std::to_string(cols) + "; at most " +
                                std::to_string(65535 * kTileCols));
  with_width<T>(b.k, [&](auto nb) {
    constexpr int NB = decltype(nb)::value;
    if constexpr (NB <= kWyChunkedMaxReflectors) {
      configure<T, NB>();
      const dim3 grid(static_cast<unsigned>(b.blocks), static_cast<unsigned>(tiles));
      wy_apply_kernel<T, NB><<<grid, kThreads, smem_bytes<T, NB>(), stream>>>(b, t, c, ldc, cols, transpose);
    }
  });
  GPUFACT_CHECK_LAUNCH();
}

// The most chunks of SplitShape rows any block has.
template <class T>
std::int64_t split_chunks(const WyBlocks<T>& b) {
  std::int64_t rows = b.block_rows;
  if (b.rows == WyRows::split) rows = (b.m + b.blocks - 1) / b.blocks;
  if (b.rows == WyRows::tree) rows = static_cast<std::int64_t>(b.fan_in) * b.k;
  return (rows + SplitShape<T>::chunk - 1) / SplitShape<T>::chunk;
}

template <class T>
std::int64_t wy_apply_split_thread_blocks(const WyBlocks<T>& b, std::int64_t cols) {
  constexpr std::int64_t TC = SplitShape<T>::cols;
  return b.blocks * split_chunks(b) * ((std::max<std::int64_t>(cols, 1) + TC - 1) / TC);
}

template <class T>
std::size_t wy_apply_split_workspace(const WyBlocks<T>& b, std::int64_t cols) {
  constexpr std::int64_t TC = SplitShape<T>::cols;
  const std::int64_t tiles = (std::max<std::int64_t>(cols, 1) + TC - 1) / TC, nb = padded_width(b.k);
  return static_cast<std::size_t>(b.blocks * split_chunks(b) * (nb * nb + tiles * nb * TC));
}

template <class T>
void launch_wy_apply_split(const WyBlocks<T>& b, T* c, std::int64_t ldc, std::int64_t cols, bool transpose, T* ws,
                           cudaStream_t stream) {
  check_blocks(b);
  if (b.k > kWyChunkedMaxReflectors)
    throw std::invalid_argument("compact-WY apply: the split apply takes at most " +
                                std::to_string(kWyChunkedMaxReflectors) + " reflectors per block; k = " +
                                std::to_string(b.k));
  if (cols <= 0) return;
  constexpr int TC = SplitShape<T>::cols;
  const std::int64_t tiles = (cols + TC - 1) / TC, chunks = split_chunks(b);
  if (tiles > 65535 || b.blocks * chunks >= (std::int64_t{1} << 31))
    throw std::invalid_argument("compact-WY apply: " + std::to_string(b.blocks) + " blocks of " +
                                std::to_string(chunks) + " chunks × " + std::to_string(cols) + " columns is too many");
  with_width<T>(b.k, [&](auto nb) {
    constexpr int NB = decltype(nb)::value;
    if constexpr (NB <= kWyChunkedMaxReflectors) {
      configure<T, NB>();
      const dim3 grid(static_cast<unsigned>(b.blocks * chunks), static_cast<unsigned>(tiles));
      const int ch = static_cast<int>(chunks);
      constexpr std::size_t bytes = split_smem_bytes<T, NB>();
      wy_split_gram_kernel<T, NB><<<grid, kThreads, bytes, stream>>>(b, c, ldc, cols, ch, ws);
      GPUFACT_CHECK_LAUNCH();
      wy_split_update_kernel<T, NB><<<grid, kThreads, bytes, stream>>>(b, c, ldc, cols, transpose, ch, ws);
    }
  });
  GPUFACT_CHECK_LAUNCH();
}

#define GPUFACT_INSTANTIATE(T)                                                                                  \
  template void prepare_wy_kernels<T>();                                                                        \
  template void launch_wy_larft<T>(const WyBlocks<T>&, T*, cudaStream_t);                                       \
  template std::string wy_apply_kernel_problem<T>(const WyBlocks<T>&, WyApplyKernel);                          \
  template WyApplyKernel wy_apply_kernel_for<T>(const WyBlocks<T>&, WyApplyKernel);                             \
  template void launch_wy_apply<T>(const WyBlocks<T>&, const T*, T*, std::int64_t, std::int64_t, bool, cudaStream_t, \
                                   WyApplyKernel);                                                               \
  template std::size_t wy_apply_split_workspace<T>(const WyBlocks<T>&, std::int64_t);                           \
  template std::int64_t wy_apply_split_thread_blocks<T>(const WyBlocks<T>&, std::int64_t);                      \
  template void launch_wy_apply_split<T>(const WyBlocks<T>&, T*, std::int64_t, std::int64_t, bool, T*, cudaStream_t);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact::kernels
