#include "kernels/qr/wy_apply.cuh"

#include "core/cuda/check.hpp"
#include "kernels/common/vec16.cuh"

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
  static_assert(chunk % kThreads == 0 || kThreads % chunk == 0, "whole rows per thread");
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

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// *dst ← *src, or 0 when !pred (src is then not read), asynchronously (cp.async.wait_all ends it).
template <class T>
__device__ __forceinline__ void copy_async(T* dst, const T* src, bool pred) {
  if constexpr (sizeof(T) == 4)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(pred ? 4 : 0));
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(pred ? 8 : 0));
}
// 16 bytes at dst ← the first `bytes` of them at src, zeros after (src not read when bytes is 0).
__device__ __forceinline__ void copy_async_16(void* dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void wait_async() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

// Whether columns of `ld` entries starting at p can be moved by 16-byte copies.
template <class T>
__device__ __forceinline__ bool aligned_16(const T* p, std::int64_t ld) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && ld * sizeof(T) % 16 == 0;
}

// A chunk's column j (rows r0 … r0 + chunk of the column starting at src, `valid` of them real,
// the rest zeros) to dst, by 16-byte copies: thread t moves vector t mod (chunk / E) of columns
// t / (chunk / E) + q·(kThreads·E / chunk), E entries to a vector.
template <class T, int COLS>
__device__ __forceinline__ void copy_columns_16(T* dst, const T* src, std::int64_t ld, int valid, int cols_valid) {
  constexpr int E = 16 / sizeof(T), V = Shape<T>::chunk / E, step = kThreads / V;
  static_assert(kThreads % V == 0, "whole columns per pass");
  const int v = threadIdx.x % V, j0 = threadIdx.x / V;
  const int bytes = static_cast<int>(sizeof(T)) * max(0, min(E, valid - v * E));
  const T* s = src + v * E + j0 * ld;
#pragma unroll 4
  for (int j = j0; j < COLS; j += step, s += step * ld)
    copy_async_16(dst + j * Shape<T>::ld + v * E, s, j < cols_valid ? bytes : 0);
}

// X = VᵀY over a chunk (Y: NY columns), phase 1: every warp sums the whole NB × NY product over
// its eighth of the chunk's rows, a row a step; a lane holds (NB/4) × (NY/8) entries, rows ig + 4u
// and columns cg + 8w of X (four row groups × eight column groups: a warp's loads of a row touch
// 12 distinct words in distinct banks, and each loaded value feeds NY/8 or NB/4 FMAs). Rows past
// `rows` (the chunk's valid ones) are zero and skipped.
template <class T, int NB, int NY>
struct Gram {
  static constexpr int MI = NB / 4, MC = NY / 8, rows = Shape<T>::chunk / kWarps;
};

// Column j of row i of a warp's partial sums (NY columns, a power of two), swizzled (j XOR
// 8·(i mod 4), within the row): for NY ≥ 32 a warp's 4 row groups × 8 column groups then store to
// 32 distinct banks.
template <int NY>
__device__ __forceinline__ int part_col(int i, int j) {
  static_assert((NY & (NY - 1)) == 0, "a power of two");
  return j ^ ((8 * (i % 4)) & (NY - 1));
}

template <class T, int NB, int NY>
__device__ __forceinline__ void accumulate_gram(const T* sv, const T* sy, int rows,
                                                T (&acc)[Gram<T, NB, NY>::MI][Gram<T, NB, NY>::MC]) {
  using G = Gram<T, NB, NY>;
  constexpr int ld = Shape<T>::ld;
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, ig = lane % 4, cg = lane / 4;
  const int end = min((warp + 1) * G::rows, rows);
  if constexpr (sizeof(T) == 4) {  // two rows a step by 8-byte loads: half the load instructions
#pragma unroll 1
    for (int r = warp * G::rows; r < end; r += 2) {
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
    for (int r = warp * G::rows; r < end; ++r) {
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
template <class T, int COLS>
__device__ __forceinline__ void store_columns_16(const T* src, T* dst, std::int64_t ld, int valid, int cols_valid) {
  constexpr int E = 16 / sizeof(T), V = Shape<T>::chunk / E, step = kThreads / V;
  const int v = threadIdx.x % V, j0 = threadIdx.x / V, n = min(E, valid - v * E);
  if (n <= 0) return;
  T* d = dst + v * E + j0 * ld;
#pragma unroll 4
  for (int j = j0; j < cols_valid; j += step, d += step * ld) {
    const T* x = src + j * Shape<T>::ld + v * E;
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

// Chunk loads: thread t moves row t mod chunk of columns t / chunk + q·(kThreads / chunk)
// (coalesced: a warp reads 32 consecutive rows of a column), all as cp.async, so every load of
// the chunk is in flight at once; the caller waits (wait_async) and then synchronizes.
template <class T>
struct ChunkRows {
  static constexpr int chunk = Shape<T>::chunk;
  static constexpr int per_row = chunk >= kThreads ? 1 : kThreads / chunk;  // threads per row
  static constexpr int passes = chunk >= kThreads ? chunk / kThreads : 1;   // rows per thread
};

// sv[i·ld + r] ← V(r0 + r, i): v below the diagonal, 1 on it, 0 above, past the block's rows and
// past its reflectors (up to NB columns).
// With `aligned` (V's columns move by 16-byte copies) the first chunk's entries on and above the
// diagonal are copied as stored and set by fix_v_diagonal after the copies land.
template <class T, int NB>
__device__ __forceinline__ void load_v_chunk(const WyBlocks<T>& b, const Block<T>& x, int r0, T* sv, bool aligned) {
  if (aligned) {
    copy_columns_16<T, NB>(sv, x.v + r0, b.ldv, x.rows - r0, x.k);
    return;
  }
  using R = ChunkRows<T>;
#pragma unroll
  for (int p = 0; p < R::passes; ++p) {
    const int r = (threadIdx.x + p * kThreads) % R::chunk, row = r0 + r, i0 = threadIdx.x / R::chunk;
    const T* src = x.v + row + i0 * b.ldv;
    // Not unrolled further: fully unrolled, the compiler keeps every column's address live.
#pragma unroll 4
    for (int i = i0; i < NB; i += R::per_row, src += R::per_row * b.ldv) {
      T* dst = sv + i * Shape<T>::ld + r;
      if (row == i && i < x.k)
        *dst = T(1);
      else
        copy_async(dst, src, i < x.k && row < x.rows && row > i);
    }
  }
}

// After an aligned first chunk has landed (and a barrier): V's unit diagonal and zeros above it.
// Ends with a barrier.
template <class T, int NB>
__device__ __forceinline__ void fix_v_diagonal(const Block<T>& x, T* sv) {
  for (int idx = threadIdx.x; idx < NB * NB; idx += kThreads) {
    const int r = idx % NB, i = idx / NB;
    if (r <= i && i < x.k) sv[i * Shape<T>::ld + r] = r == i ? T(1) : T(0);
  }
  __syncthreads();
}

// T of each block: G = VᵀV through the chunks, then one lane per row of T runs larft's
// recurrence over its own row (T(i, j) = −τ_j Σ_{i ≤ l < j} T(i, l) G(l, j)): no lane waits on another.
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
    wait_async();
    __syncthreads();
    if (v_aligned && r0 == 0) fix_v_diagonal<T, NB>(x, sv);
    accumulate_gram<T, NB, NB>(sv, sv, x.rows - r0, acc);
  }
  reduce_gram<T, NB, NB>(acc, sv, g);
  T* out = t + static_cast<std::int64_t>(blk) * NB * NB;
  const T* tau = b.tau + static_cast<std::int64_t>(blk) * b.tau_stride;
  if (threadIdx.x < NB) {
    const int i = threadIdx.x;
    T row[NB];
#pragma unroll
    for (int j = 0; j < NB; ++j) {
      const T tau_j = j < x.k ? tau[j] : T(0);
      T s = T(0);  // row[l] is zero for l < i
#pragma unroll
      for (int l = 0; l < j; ++l) s += row[l] * g[l * NB + j];
      row[j] = j < i ? T(0) : (j == i ? tau_j : -tau_j * s);
    }
#pragma unroll
    for (int j = 0; j < NB; ++j) out[i + j * NB] = row[j];
  }
}

// The apply, per (block, column tile): phase 1, W = VᵀC through the chunks (accumulate_gram with
// Y = the C tile); phase 2, W ← op(T) W; phase 3, per chunk again, C −= V W, each thread a tile ×
// tile block of C (lanes: 8 row groups × 4 column groups), written back through shared memory.
template <class T, int NB>
__global__ void __launch_bounds__(kThreads, 2) wy_apply_kernel(const WyBlocks<T> b, const T* t, T* c,
                                                               std::int64_t ldc, std::int64_t cols, bool transpose) {
  using S = Shape<T>;
  using R = ChunkRows<T>;
  constexpr int ld = S::ld, TC = S::cols, TL = S::tile;
  extern __shared__ __align__(16) unsigned char wy_smem[];
  T* sv = reinterpret_cast<T*>(wy_smem);
  T* sc = sv + NB * ld;
  T* sw = sc + TC * ld;  // NB × TC, row-major
  T* st = sw + NB * TC;  // T(i, l) at st[i·(NB + 1) + l]
  const int blk = blockIdx.x;
  const Block<T> x = block_of(b, blk);
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.y) * TC;
  const int nc = static_cast<int>(min(static_cast<std::int64_t>(TC), cols - c0));
  const T* tb = t + static_cast<std::int64_t>(blk) * NB * NB;
  for (int idx = threadIdx.x; idx < NB * NB; idx += kThreads) st[(idx % NB) * (NB + 1) + idx / NB] = tb[idx];

  // C's rows of the chunk's rows this thread moves, looked up once per chunk.
  std::int64_t crow[R::passes];
  const auto locate = [&](int r0) {
#pragma unroll
    for (int p = 0; p < R::passes; ++p) {
      const int row = r0 + (threadIdx.x + p * kThreads) % R::chunk;
      crow[p] = row < x.rows ? c_row(b, x, blk, row) : -1;
    }
  };
  // Contiguous rows whose columns start 16-byte aligned move by 16-byte copies.
  const bool v_aligned = aligned_16(x.v, b.ldv);
  const bool c_aligned = b.rows != WyRows::tree && aligned_16(c + x.first + c0 * ldc, ldc);
  const auto load_c_chunk = [&](int r0) {
    if (c_aligned) {
      copy_columns_16<T, TC>(sc, c + x.first + r0 + c0 * ldc, ldc, x.rows - r0, nc);
      return;
    }
#pragma unroll
    for (int p = 0; p < R::passes; ++p) {
      const int r = (threadIdx.x + p * kThreads) % R::chunk;
      const int j0 = threadIdx.x / R::chunk;
      const T* src = c + max(crow[p], std::int64_t{0}) + (c0 + j0) * ldc;
#pragma unroll 4
      for (int j = j0; j < TC; j += R::per_row, src += R::per_row * ldc)
        copy_async(sc + j * ld + r, src, crow[p] >= 0 && j < nc);
    }
  };

  T acc[Gram<T, NB, TC>::MI][Gram<T, NB, TC>::MC] = {};
  for (int r0 = 0; r0 < x.rows; r0 += S::chunk) {
    __syncthreads();
    locate(r0);
    load_v_chunk<T, NB>(b, x, r0, sv, v_aligned);
    load_c_chunk(r0);
    wait_async();
    __syncthreads();
    if (v_aligned && r0 == 0) fix_v_diagonal<T, NB>(x, sv);
    accumulate_gram<T, NB, TC>(sv, sc, x.rows - r0, acc);
  }
  // The partial sums overwrite the C chunk where it holds them (FP32), so a block of one chunk
  // keeps its V for phase 3 and reloads only C.
  constexpr bool kPartInC = kWarps * NB * TC <= TC * ld;
  reduce_gram<T, NB, TC>(acc, kPartInC ? sc : sv, sw);
  const bool keep_v = kPartInC && x.rows <= S::chunk;

  // W ← Tᵀ W (Qᵀ) or T W (Q); T is upper triangular. A thread makes rows i and i + NB/2 of CP
  // consecutive columns: per l, two entries of T and CP of W for 2·CP FMAs.
  {
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

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int rg = lane % 8 + 8 * (warp % 4), cg = lane / 8 + 4 * (warp / 4);  // rows TL·rg …, columns TL·cg …
  for (int r0 = 0; r0 < x.rows; r0 += S::chunk) {
    __syncthreads();
    locate(r0);
    if (!keep_v) load_v_chunk<T, NB>(b, x, r0, sv, v_aligned);
    load_c_chunk(r0);
    wait_async();
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
    if (c_aligned) {
      store_columns_16<T, TC>(sc, c + x.first + r0 + c0 * ldc, ldc, x.rows - r0, nc);
      continue;
    }
#pragma unroll
    for (int p = 0; p < R::passes; ++p) {
      if (crow[p] < 0) continue;
      const int r = (threadIdx.x + p * kThreads) % R::chunk;
      const int j0 = threadIdx.x / R::chunk;
      T* dst = c + crow[p] + (c0 + j0) * ldc;
#pragma unroll 4
      for (int j = j0; j < nc; j += R::per_row, dst += R::per_row * ldc) *dst = sc[j * ld + r];
    }
  }
}

template <class T>
void check_blocks(const WyBlocks<T>& b) {
  const auto bad = [](const std::string& why) { throw std::invalid_argument("compact-WY apply: " + why); };
  if (b.k < 1 || b.k > kWyMaxReflectors)
    bad("k = " + std::to_string(b.k) + "; 1 … " + std::to_string(kWyMaxReflectors) + " reflectors per block");
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

// f(NB) with NB the padded width (16 or 32) as a std::integral_constant.
template <class F>
void with_width(int k, F&& f) {
  if (k <= 16)
    f(std::integral_constant<int, 16>{});
  else
    f(std::integral_constant<int, 32>{});
}

// Opt-in shared memory for each instantiation, once (FP64 at 32 wide needs 82 KB).
template <class T, int NB>
void configure() {
  static const bool done = [] {
    constexpr int bytes = static_cast<int>(smem_bytes<T, NB>());
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(wy_larft_kernel<T, NB>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(wy_apply_kernel<T, NB>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return true;
  }();
  (void)done;
}

}  // namespace

int wy_t_entries(int k) { return k <= 16 ? 16 * 16 : kWyMaxReflectors * kWyMaxReflectors; }

template <class T>
void prepare_wy_kernels() {
  configure<T, 16>();
  configure<T, 32>();
}

template <class T>
void launch_wy_larft(const WyBlocks<T>& b, T* t, cudaStream_t stream) {
  check_blocks(b);
  with_width(b.k, [&](auto nb) {
    constexpr int NB = decltype(nb)::value;
    configure<T, NB>();
    wy_larft_kernel<T, NB><<<static_cast<unsigned>(b.blocks), kThreads, smem_bytes<T, NB>(), stream>>>(b, t);
  });
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void launch_wy_apply(const WyBlocks<T>& b, const T* t, T* c, std::int64_t ldc, std::int64_t cols, bool transpose,
                     cudaStream_t stream) {
  check_blocks(b);
  if (cols <= 0) return;
  constexpr int kTileCols = Shape<T>::cols;
  const std::int64_t tiles = (cols + kTileCols - 1) / kTileCols;
  if (tiles > 65535)
    throw std::invalid_argument("compact-WY apply: cols = " + std::to_string(cols) + "; at most " +
                                std::to_string(65535 * kTileCols));
  with_width(b.k, [&](auto nb) {
    constexpr int NB = decltype(nb)::value;
    configure<T, NB>();
    const dim3 grid(static_cast<unsigned>(b.blocks), static_cast<unsigned>(tiles));
    wy_apply_kernel<T, NB><<<grid, kThreads, smem_bytes<T, NB>(), stream>>>(b, t, c, ldc, cols, transpose);
  });
  GPUFACT_CHECK_LAUNCH();
}

#define GPUFACT_INSTANTIATE(T)                                                                                  \
  template void prepare_wy_kernels<T>();                                                                        \
  template void launch_wy_larft<T>(const WyBlocks<T>&, T*, cudaStream_t);                                       \
  template void launch_wy_apply<T>(const WyBlocks<T>&, const T*, T*, std::int64_t, std::int64_t, bool, cudaStream_t);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact::kernels
