#include "kernels/dense/potrf_dataflow.cuh"

#include "core/cuda/check.hpp"
#include "kernels/common/cp_async.cuh"
#include "kernels/common/vec16.cuh"
#include "kernels/dense/warp_potf2.cuh"

#include <cuda/atomic>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

constexpr int kTile = kPotrfDataflowTile;
constexpr int kThreads = 256;
constexpr int kChunk = 16;  // k columns per pipeline stage
constexpr int kSub = 16;    // the diagonal tile's potrf and every tile's solve go 16 columns at a time
constexpr int kParts = kThreads / kTile;  // threads per row in the off-diagonal solve
constexpr int kLd = kTile + 1;            // the tile and L_jj in shared memory: odd, rows hit distinct banks
// Panels of up to this many tile rows run one CTA per SM, taller ones 3 (FP32; H200: n = 4096 in
// 1.47 ms with 1 per SM, 1.59 with 2, 1.85 with 3; n = 5120 in 2.46 ms with 3, 2.55 with 1;
// n = 8192 in 6.67 ms with 3, 7.32 with 2, 9.25 with 1).
constexpr int kNarrowTileRows = 64;
static_assert(kTile / kSub == kParts, "one 16-column part of the solve per thread of a row");

// Shared memory in elements: the copy pipeline (both operands of kStages chunks, each column of a
// chunk padded by 16 bytes), reused for the tile once the products are done; A_ij, copied in
// while the products run, then L_jj; 1/L_jj(c, c).
template <class T>
struct Smem {
  static constexpr int kStages = 3;
  static constexpr int kVec = 16 / static_cast<int>(sizeof(T));  // entries per 16-byte copy
  // Columns padded by 16 bytes (FP32) or 32 (FP64: the tensor-core fragments' four k rows then
  // fall in distinct banks).
  static constexpr int kStageLd = kTile + 4;
  static constexpr int kOperand = kChunk * kStageLd;
  static constexpr int kStage = 2 * kOperand;
  static constexpr int kPipe = kStages * kStage;
  static constexpr int kWork = kPipe > kTile * kLd ? kPipe : kTile * kLd;
  static constexpr int kLdA = kTile + kVec;  // A_ij as copied in (16-byte aligned columns), later L_jj
  static constexpr std::size_t kBytes = sizeof(T) * (kWork + kTile * kLdA + kTile);
};

// Tickets (and flags) number the lower tiles column by column: column j holds tiles − j tiles
// and starts at ticket j·tiles − j(j − 1)/2.
__host__ __device__ inline long long column_start(long long j, long long tiles) { return j * tiles - j * (j - 1) / 2; }
__device__ inline int flag_index(int i, int j, int tiles) { return static_cast<int>(column_start(j, tiles)) + i - j; }

__device__ inline void tile_of_ticket(int t, int tiles, int& i, int& j) {
  const double b = 2.0 * tiles + 1.0;
  int c = static_cast<int>((b - sqrt(b * b - 8.0 * t)) / 2.0);
  while (c > 0 && column_start(c, tiles) > t) --c;
  while (c + 1 < tiles && column_start(c + 1, tiles) <= t) ++c;
  j = c;
  i = c + t - static_cast<int>(column_start(c, tiles));
}

// A tile's completion flag: set by a release store once its L is written, read by acquire loads
// (or relaxed loads and one acquire fence) before its L is copied.
using Flag = cuda::atomic_ref<int, cuda::thread_scope_device>;

// Spins until *flag == epoch; the acquire orders this thread's later reads after the producer's
// writes.
__device__ __forceinline__ void wait_for(int* flag, int epoch) {
  while (Flag(*flag).load(cuda::memory_order_acquire) != epoch) __nanosleep(20);
}

// *info = min(*info, v) with 0 meaning "no failure yet".
__device__ inline void record_info(int* info, int v) {
  int old = *info;
  while (old == 0 || old > v) {
    const int seen = atomicCAS(info, old, v);
    if (seen == old) break;
    old = seen;
  }
}

// Columns [k0, k0 + kChunk) of the tile row starting at r0 into a stage operand (column kk at
// dst + kk·kStageLd); rows at or past m zero. VEC: 16-byte cp.async (a and lda aligned to them);
// otherwise entry by entry through registers. Both read L2, never L1: another SM's writes of the
// same lines would not invalidate this SM's L1.
template <class T, bool VEC>
__device__ __forceinline__ void load_chunk(T* dst, const T* a, std::int64_t lda, std::int64_t m, std::int64_t r0,
                                           std::int64_t k0, int tid) {
  if constexpr (VEC) {
    constexpr int kVec = Smem<T>::kVec, kPerColumn = kTile / kVec;
#pragma unroll
    for (int c = tid; c < kChunk * kPerColumn; c += kThreads) {
      const int kk = c / kPerColumn, rr = (c % kPerColumn) * kVec;
      const std::int64_t row = r0 + rr;
      const int valid = row < m ? static_cast<int>(min(static_cast<std::int64_t>(kVec), m - row)) : 0;
      cp_async_16(dst + kk * Smem<T>::kStageLd + rr, a + (valid > 0 ? row : 0) + (k0 + kk) * lda,
                  valid * static_cast<int>(sizeof(T)));
    }
  } else {
    for (int c = tid; c < kChunk * kTile; c += kThreads) {
      const int kk = c / kTile, rr = c % kTile;
      const std::int64_t row = r0 + rr;
      dst[kk * Smem<T>::kStageLd + rr] = row < m ? __ldcg(a + row + (k0 + kk) * lda) : T(0);
    }
  }
}

// potf2 (warp_potf2_x4) of the 16 × 16 block at (k0, k0) of the tile by one warp, lane r holding row
// k0 + r (lanes 16–31 hold identity rows, never stored); the first failing column goes to
// *failed (shared, the smallest wins).
template <class T>
__device__ void factor_sub(T* s, int k0, int lane, T* dinv, int* failed) {
  T r[kSub];
#pragma unroll
  for (int c = 0; c < kSub; ++c) r[c] = (lane < kSub && c <= lane) ? s[(k0 + lane) + (k0 + c) * kLd] : T(c == lane);
  const int bad = warp_potf2_x4(r, lane, dinv + k0);
#pragma unroll
  for (int c = 0; c < kSub; ++c)
    if (lane < kSub && c <= lane) s[(k0 + lane) + (k0 + c) * kLd] = r[c];
  if (bad < kSub && lane == 0) atomicMin(failed, k0 + bad);
}

// Row `row` of the tile, columns [k0, k0 + 16), solved against the 16 × 16 lower block of `l` at
// (k0, k0) (reciprocals of its diagonal in dinv): x ← x·L_bb⁻ᵀ, right-looking in registers.
template <class T>
__device__ __forceinline__ void solve_sub(T (&x)[kSub], const T* l, int k0, const T* dinv) {
#pragma unroll
  for (int p = 0; p < kSub; ++p) {
    x[p] *= dinv[k0 + p];
#pragma unroll
    for (int c = p + 1; c < kSub; ++c) x[c] = fma(-x[p], l[(k0 + c) + (k0 + p) * kLd], x[c]);
  }
}

// The diagonal tile's trailing lower triangle, rows and columns [k0 + 16, kTile), −= X·Xᵀ with X
// its columns [k0, k0 + 16): 2 × 2 blocks, one per thread.
template <class T>
__device__ void update_sub(T* s, int k0, int tid) {
  const int r0 = k0 + kSub, half = (kTile - r0) / 2;
  for (int e = tid; e < half * half; e += kThreads) {
    const int bi = e % half, bj = e / half;
    if (bi < bj) continue;
    const int r = r0 + 2 * bi, c = r0 + 2 * bj;
    T acc[2][2] = {{T(0), T(0)}, {T(0), T(0)}};
#pragma unroll
    for (int k = 0; k < kSub; ++k) {
      const T* col = s + (k0 + k) * kLd;
      const T a0 = col[r], a1 = col[r + 1], b0 = col[c], b1 = col[c + 1];
      acc[0][0] = fma(a0, b0, acc[0][0]);
      acc[0][1] = fma(a0, b1, acc[0][1]);
      acc[1][0] = fma(a1, b0, acc[1][0]);
      acc[1][1] = fma(a1, b1, acc[1][1]);
    }
    s[r + c * kLd] -= acc[0][0];
    s[(r + 1) + c * kLd] -= acc[1][0];
    s[(r + 1) + (c + 1) * kLd] -= acc[1][1];
    if (r > c) s[r + (c + 1) * kLd] -= acc[0][1];
  }
}

// The tile's 64 × 64 block of A (column-major at dst, ld kLdA), copied while the products run.
template <class T, bool VEC>
__device__ __forceinline__ void prefetch_tile(T* dst, const T* a, std::int64_t lda, std::int64_t m, std::int64_t r0,
                                              std::int64_t c0, int columns, int tid) {
  constexpr int kVec = Smem<T>::kVec, kPerColumn = kTile / kVec;
  for (int c = tid; c < kTile * kPerColumn; c += kThreads) {
    const int cc = c / kPerColumn, rr = (c % kPerColumn) * kVec;
    const std::int64_t row = r0 + rr;
    const int rows = row < m && cc < columns ? static_cast<int>(min(static_cast<std::int64_t>(kVec), m - row)) : 0;
    const T* src = a + (rows > 0 ? row + (c0 + cc) * lda : 0);
    T* d = dst + cc * Smem<T>::kLdA + rr;
    if constexpr (VEC) {
      cp_async_16(d, src, rows * static_cast<int>(sizeof(T)));
    } else {
#pragma unroll
      for (int e = 0; e < kVec; ++e) cp_async_entry(d + e, src + (e < rows ? e : 0), e < rows);
    }
  }
}

// One CTA per lower tile of the panel: rows [0, m) of the matrix at a, columns [0, nc) (nc a
// multiple of kTile, or nc = m: the whole trailing matrix); tiles_r = ⌈m/64⌉ tile rows,
// tiles_c = ⌈nc/64⌉ tile columns.
// MIN_BLOCKS: CTAs per SM the registers are capped for — 2 (128 registers, no spill), or 3 (80)
// for more products at once on taller FP32 panels.
template <class T, bool VEC, int MIN_BLOCKS>
__global__ void __launch_bounds__(kThreads, MIN_BLOCKS)
    potrf_dataflow_kernel(T* a, std::int64_t lda, std::int64_t m, std::int64_t nc, int tiles_r, int* flags, int epoch,
                          unsigned* ticket, int* info, int info_offset) {
  using S = Smem<T>;
  extern __shared__ float4 smem_raw[];
  T* work = reinterpret_cast<T*>(smem_raw);
  T* side = work + S::kWork;  // A_ij, then L_jj
  T* dinv = side + kTile * S::kLdA;
  __shared__ int sh_ticket, sh_ready, sh_failed;

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  if (tid == 0) {
    sh_ticket = static_cast<int>(atomicAdd(ticket, 1u));
    sh_failed = kTile;
    sh_ready = 0x7fffffff;
  }
  __syncthreads();
  int i, j;
  tile_of_ticket(sh_ticket, tiles_r, i, j);
  const std::int64_t r0 = static_cast<std::int64_t>(i) * kTile, c0 = static_cast<std::int64_t>(j) * kTile;
  const bool diagonal = i == j;
  const int rows = static_cast<int>(min(static_cast<std::int64_t>(kTile), m - r0));
  const int columns = static_cast<int>(min(static_cast<std::int64_t>(kTile), nc - c0));
  prefetch_tile<T, VEC>(side, a, lda, m, r0, c0, columns, tid);

  // The k-tiles whose L_ik and L_jk are already published (read in parallel, relaxed, then one
  // fence: the acquire for all of them); later ones are waited for as the pipeline reaches them.
  for (int k = tid; k < j; k += kThreads)
    if (Flag(flags[flag_index(i, k, tiles_r)]).load(cuda::memory_order_relaxed) != epoch ||
        Flag(flags[flag_index(j, k, tiles_r)]).load(cuda::memory_order_relaxed) != epoch)
      atomicMin(&sh_ready, k);
  cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
  __syncthreads();
  int known = min(sh_ready, j);  // every k-tile below this one is published and acquired

  // acc = Σ_{k<j} L_ik·L_jkᵀ over chunks of kChunk columns; warp (wm, wn) = (warp % 2, warp / 2)
  // owns rows [32·wm, 32·wm + 32) and columns [16·wn, 16·wn + 16). FP32 (SIMT): lane (lane % 8,
  // lane / 8) the 4 × 4 block at rows 4·tm, columns 4·tn. FP64 (tensor cores, DMMA m16n8k8; twice
  // the rate of m8n8k4 here): 2 × 2 products of 16 × 8, acc[2u + h][2w + e] at row
  // 32·wm + 16u + 8h + lane/4, column 16·wn + 8w + 2(lane%4) + e.
  const int wm = warp % 2, wn = warp / 2;
  const int tm = wm * 8 + lane % 8, tn = wn * 4 + lane / 8;
  const int group = lane / 4, quad = lane % 4;
  auto acc_row = [&](int u) { return sizeof(T) == 4 ? 4 * tm + u : 32 * wm + 16 * (u / 2) + 8 * (u % 2) + group; };
  auto acc_col = [&](int v) { return sizeof(T) == 4 ? 4 * tn + v : 16 * wn + 8 * (v / 2) + 2 * quad + v % 2; };
  T acc[4][4];
#pragma unroll
  for (int u = 0; u < 4; ++u)
#pragma unroll
    for (int v = 0; v < 4; ++v) acc[u][v] = T(0);
  constexpr int kChunksPerTile = kTile / kChunk;
  const int chunks = j * kChunksPerTile;
  auto issue = [&](int c, int stage) {
    const int kt = c / kChunksPerTile;
    if (kt >= known) {
      wait_for(flags + flag_index(i, kt, tiles_r), epoch);
      if (!diagonal) wait_for(flags + flag_index(j, kt, tiles_r), epoch);
      known = kt + 1;
    }
    const std::int64_t k0 = static_cast<std::int64_t>(c) * kChunk;
    T* st = work + stage * S::kStage;
    load_chunk<T, VEC>(st, a, lda, m, r0, k0, tid);
    if (!diagonal) load_chunk<T, VEC>(st + S::kOperand, a, lda, m, c0, k0, tid);
  };
#pragma unroll
  for (int s = 0; s < S::kStages - 1; ++s) {
    if (s < chunks) issue(s, s);
    cp_async_commit();
  }
  for (int c = 0; c < chunks; ++c) {
    cp_async_wait<S::kStages - 2>();
    __syncthreads();
    // Chunk c + kStages − 1 goes into the stage read in iteration c − 1 (free after the barrier).
    // If its k-tile is not published yet, chunk c is multiplied first and the wait comes after,
    // so the chunks already here are not held up by it (`known` is the same in every thread).
    const int next = c + S::kStages - 1;
    const bool waits = next < chunks && next / kChunksPerTile >= known;
    if (next < chunks && !waits) issue(next, next % S::kStages);
    const T* as = work + (c % S::kStages) * S::kStage;
    const T* bs = as + (diagonal ? 0 : S::kOperand);
    if constexpr (sizeof(T) == 4) {
#pragma unroll
      for (int kk = 0; kk < kChunk; ++kk) {
        T x[4], y[4];
        load_vec(as + kk * S::kStageLd + 4 * tm, x);
        load_vec(bs + kk * S::kStageLd + 4 * tn, y);
#pragma unroll
        for (int u = 0; u < 4; ++u)
#pragma unroll
          for (int v = 0; v < 4; ++v) acc[u][v] = fma(x[u], y[v], acc[u][v]);
      }
    } else {
#pragma unroll
      for (int kk = 0; kk < kChunk; kk += 8) {
        const T* ak = as + (kk + quad) * S::kStageLd + 32 * wm + group;
        const T* bk = bs + (kk + quad) * S::kStageLd + 16 * wn + group;
        constexpr int k4 = 4 * S::kStageLd;
        T x[2][4], y[2][2];
#pragma unroll
        for (int u = 0; u < 2; ++u) {
          x[u][0] = ak[16 * u], x[u][1] = ak[16 * u + 8], x[u][2] = ak[16 * u + k4], x[u][3] = ak[16 * u + 8 + k4];
        }
#pragma unroll
        for (int w = 0; w < 2; ++w) y[w][0] = bk[8 * w], y[w][1] = bk[8 * w + k4];
#pragma unroll
        for (int u = 0; u < 2; ++u)
#pragma unroll
          for (int w = 0; w < 2; ++w)
            asm volatile(
                "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                "{%0,%1,%2,%3};"
                : "+d"(acc[2 * u][2 * w]), "+d"(acc[2 * u][2 * w + 1]), "+d"(acc[2 * u + 1][2 * w]),
                  "+d"(acc[2 * u + 1][2 * w + 1])
                : "d"(x[u][0]), "d"(x[u][1]), "d"(x[u][2]), "d"(x[u][3]), "d"(y[w][0]), "d"(y[w][1]));
      }
    }
    if (waits) issue(next, next % S::kStages);
    cp_async_commit();
  }
  cp_async_wait_all();
  __syncthreads();  // the pipeline's shared memory becomes the tile; A_ij has landed

  // The tile A_ij − acc (on the diagonal, its lower triangle with rows and columns past the panel
  // acting as the identity, so the potrf stays uniform; off it, rows past m are zero).
  T* s = work;
#pragma unroll
  for (int u = 0; u < 4; ++u)
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      const int rr = acc_row(u), cc = acc_col(v);
      const T value = side[rr + cc * S::kLdA] - acc[u][v];
      s[rr + cc * kLd] = diagonal ? ((rr < rows && cc < rows) ? (rr >= cc ? value : T(0)) : T(rr == cc))
                                  : (rr < rows ? value : T(0));
    }
  __syncthreads();

  if (diagonal) {
#pragma unroll 1
    for (int b = 0; b < kTile; b += kSub) {
      if (warp == 0) factor_sub(s, b, lane, dinv, &sh_failed);
      __syncthreads();
      for (int row = b + kSub + tid; row < kTile; row += kThreads) {
        T x[kSub];
#pragma unroll
        for (int q = 0; q < kSub; ++q) x[q] = s[row + (b + q) * kLd];
        solve_sub(x, s, b, dinv);
#pragma unroll
        for (int q = 0; q < kSub; ++q) s[row + (b + q) * kLd] = x[q];
      }
      __syncthreads();
      if (b + kSub < kTile) {
        update_sub(s, b, tid);
        __syncthreads();
      }
    }
    if (tid == 0 && sh_failed < rows) record_info(info, info_offset + static_cast<int>(r0) + sh_failed + 1);
    for (int e = tid; e < kTile * kTile; e += kThreads) {
      const int rr = e % kTile, cc = e / kTile;
      if (rr >= cc && rr < rows) a[(r0 + rr) + (c0 + cc) * lda] = s[rr + cc * kLd];
    }
  } else {
    // L_ij = tile · L_jj⁻ᵀ: row rr by the kParts threads of `part`, each owning 16 columns, block
    // column b solved by its owner and then subtracted from the later parts' columns. The
    // column tile is whole: nc is a multiple of kTile or this is not its last column.
    wait_for(flags + flag_index(j, j, tiles_r), epoch);
    for (int e = tid; e < kTile * kTile; e += kThreads) {
      const int rr = e % kTile, cc = e / kTile;
      if (rr >= cc) side[rr + cc * kLd] = __ldcg(a + (c0 + rr) + (c0 + cc) * lda);
    }
    if (tid < kTile) dinv[tid] = T(1) / __ldcg(a + (c0 + tid) + (c0 + tid) * lda);
    __syncthreads();
    const T* ljj = side;
    const int rr = tid % kTile, part = tid / kTile;
    T x[kSub];
#pragma unroll
    for (int q = 0; q < kSub; ++q) x[q] = s[rr + (kSub * part + q) * kLd];
#pragma unroll
    for (int b = 0; b < kParts; ++b) {
      if (part == b) {
        solve_sub(x, ljj, kSub * b, dinv);
#pragma unroll
        for (int q = 0; q < kSub; ++q) s[rr + (kSub * b + q) * kLd] = x[q];
      }
      __syncthreads();
      if (part > b) {
#pragma unroll
        for (int k = 0; k < kSub; ++k) {
          const T xb = s[rr + (kSub * b + k) * kLd];
#pragma unroll
          for (int q = 0; q < kSub; ++q) x[q] = fma(-xb, ljj[(kSub * part + q) + (kSub * b + k) * kLd], x[q]);
        }
      }
    }
    if (rr < rows) {
#pragma unroll
      for (int q = 0; q < kSub; ++q) a[(r0 + rr) + (c0 + kSub * part + q) * lda] = x[q];
    }
  }
  __threadfence();
  __syncthreads();
  if (tid == 0) Flag(flags[flag_index(i, j, tiles_r)]).store(epoch, cuda::memory_order_release);
}

template <class T>
void launch(T* a, std::int64_t lda, std::int64_t m, std::int64_t nc, int* flags, int epoch, unsigned* ticket,
            int* info, int info_offset, cudaStream_t stream) {
  if (m < 0 || nc < 0 || nc > m || lda < std::max<std::int64_t>(1, m) || (nc % kTile != 0 && nc != m))
    throw std::invalid_argument("launch_potrf_dataflow: m = " + std::to_string(m) + ", nc = " + std::to_string(nc) +
                                ", lda = " + std::to_string(lda) +
                                " (need 0 <= nc <= m, lda >= max(1, m), nc a multiple of 64 or nc = m)");
  if (nc == 0) return;
  const std::int64_t count = potrf_dataflow_flag_count(m, nc);
  if (count > std::numeric_limits<int>::max())
    throw std::invalid_argument("launch_potrf_dataflow: m = " + std::to_string(m) + " has too many tiles");
  const bool vec = reinterpret_cast<std::uintptr_t>(a) % 16 == 0 && lda % Smem<T>::kVec == 0;
  const int tiles_r = static_cast<int>((m + kTile - 1) / kTile);
  // Narrow panels: one CTA per SM (asking for more than half an SM's shared memory), so the
  // critical chain's tiles share no SM with another tile's products. Taller ones: FP32 3 per SM
  // (80 registers), FP64 2 (its shared memory allows no more).
  const bool narrow = tiles_r <= kNarrowTileRows;
  auto kernel = vec ? potrf_dataflow_kernel<T, true, 2> : potrf_dataflow_kernel<T, false, 2>;
  if constexpr (sizeof(T) == 4)
    if (!narrow) kernel = vec ? potrf_dataflow_kernel<T, true, 3> : potrf_dataflow_kernel<T, false, 3>;
  // Once per process, not per launch (the attributes stay set; one device): the narrow launch's
  // size, more than half of an SM's shared memory so that a second CTA does not fit beside, and
  // every instantiation allowed up to it.
  static const std::size_t narrow_bytes = [] {
    int device = 0, per_sm = 0;
    GPUFACT_CUDA_CHECK(cudaGetDevice(&device));
    GPUFACT_CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    const std::size_t most = std::max(Smem<T>::kBytes, static_cast<std::size_t>(per_sm / 2 + 1));
    const auto allow = [&](auto k) {
      GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(most)));
    };
    allow(potrf_dataflow_kernel<T, true, 2>);
    allow(potrf_dataflow_kernel<T, false, 2>);
    if constexpr (sizeof(T) == 4) {  // FP64 builds no 3-per-SM kernel
      allow(potrf_dataflow_kernel<T, true, 3>);
      allow(potrf_dataflow_kernel<T, false, 3>);
    }
    return most;
  }();
  const std::size_t bytes = narrow ? narrow_bytes : Smem<T>::kBytes;
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(ticket, 0, sizeof(unsigned), stream));
  kernel<<<static_cast<unsigned>(count), kThreads, bytes, stream>>>(a, lda, m, nc, tiles_r, flags, epoch, ticket,
                                                                     info, info_offset);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace

std::int64_t potrf_dataflow_flag_count(std::int64_t m, std::int64_t nc) {
  const std::int64_t tiles_r = (m + kTile - 1) / kTile, tiles_c = (nc + kTile - 1) / kTile;
  return column_start(tiles_c, tiles_r);
}

void launch_potrf_dataflow(float* a, std::int64_t lda, std::int64_t m, std::int64_t nc, int* flags, int epoch,
                           unsigned* ticket, int* info, int info_offset, cudaStream_t stream) {
  launch(a, lda, m, nc, flags, epoch, ticket, info, info_offset, stream);
}
void launch_potrf_dataflow(double* a, std::int64_t lda, std::int64_t m, std::int64_t nc, int* flags, int epoch,
                           unsigned* ticket, int* info, int info_offset, cudaStream_t stream) {
  launch(a, lda, m, nc, flags, epoch, ticket, info, info_offset, stream);
}

}  // namespace gpufact::kernels
