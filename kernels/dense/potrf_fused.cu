#include "kernels/dense/potrf_fused.cuh"

#include "core/cuda/check.hpp"
#include "kernels/dense/warp_potf2.cuh"

#include <cuda_pipeline.h>

#include <algorithm>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kInner = 32;                   // inner panel width: one warp's 32 lanes own its rows
constexpr int kLd = kPotrfFusedMax + 1;      // odd leading dimension: lanes walking a row hit distinct banks
constexpr int kTempLd = kInner + 1;          // trtri scratch, row-major
constexpr int kBlocks = kPotrfFusedMax / kInner;

// Shared memory, in elements: the block (column-major, ld kLd), the trtri scratch ((n − 32) × 32,
// row-major) and the reciprocals of L's diagonal.
constexpr std::size_t shared_elements(int n) {
  return static_cast<std::size_t>(n) * kLd + static_cast<std::size_t>(n > kInner ? n - kInner : 0) * kTempLd +
         kPotrfFusedMax;
}

// Step 1 of an inner panel, by warp 0 alone: potf2 (warp_potf2) on the bw × bw diagonal block at
// (k0, k0), lane i holding row k0 + i in registers, rows past bw padded with the identity. About
// 7.5k cycles a 32-wide block in FP32 on the H200: a third of the kernel's potrf and trtri.
// Records 1/L(j, j) in dinv and the failing column in *failed_at.
template <class T>
__device__ void factor_diagonal_block(T* s, int k0, int bw, int lane, T* dinv, int* failed_at) {
  T r[kInner];
#pragma unroll
  for (int c = 0; c < kInner; ++c)
    r[c] = (lane < bw && c <= lane) ? s[(k0 + lane) + (k0 + c) * kLd] : (c == lane ? T(1) : T(0));
  const int failed = warp_potf2(r, lane, dinv + k0);
#pragma unroll
  for (int c = 0; c < kInner; ++c)
    if (lane < bw && c <= lane) s[(k0 + lane) + (k0 + c) * kLd] = r[c];
  if (failed < bw && lane == 0) *failed_at = k0 + failed;
}

// Step 2: the rows below a full diagonal block, L21 = A21·L11⁻ᵀ, one row per thread in registers
// (right-looking substitution: each x_p final after one multiply, then independent FMAs).
template <class T>
__device__ void solve_below(T* s, int k0, int n, const T* dinv) {
  for (int row = k0 + kInner + static_cast<int>(threadIdx.x); row < n; row += kThreads) {
    T x[kInner];
#pragma unroll
    for (int c = 0; c < kInner; ++c) x[c] = s[row + (k0 + c) * kLd];
#pragma unroll
    for (int p = 0; p < kInner; ++p) {
      x[p] *= dinv[k0 + p];
#pragma unroll
      for (int c = p + 1; c < kInner; ++c) x[c] = fma(-x[p], s[(k0 + c) + (k0 + p) * kLd], x[c]);
    }
#pragma unroll
    for (int c = 0; c < kInner; ++c) s[row + (k0 + c) * kLd] = x[c];
  }
}

// Step 3: the block's trailing lower triangle, rows and columns [r0, n), −= L21·L21ᵀ (L21 = the
// 32 columns from k0). 32 × 32 tiles, one per warp; lane (ly, lx) = (lane / 8, lane % 8) keeps
// rows ly + 4u and columns lx + 8v (8 × 4 accumulators), so each k costs 12 conflict-free shared
// loads for 32 FMAs.
template <class T>
__device__ void update_trailing(T* s, int k0, int r0, int n, int warp, int lane) {
  const int tiles = (n - r0 + kInner - 1) / kInner;
  const int ly = lane >> 3, lx = lane & 7;
  for (int tile = warp; tile < tiles * (tiles + 1) / 2; tile += kWarps) {
    int bi = 0, first = 0;  // tile = bi·(bi + 1)/2 + bj, bj <= bi
    while (first + bi + 1 <= tile) first += ++bi;
    const int bj = tile - first;
    const int rb = r0 + bi * kInner + ly, cb = r0 + bj * kInner + lx;
    T acc[8][4];
#pragma unroll
    for (int u = 0; u < 8; ++u)
#pragma unroll
      for (int v = 0; v < 4; ++v) acc[u][v] = T(0);
#pragma unroll 4
    for (int p = 0; p < kInner; ++p) {
      const T* col = s + (k0 + p) * kLd;
      T av[8], bv[4];
#pragma unroll
      for (int u = 0; u < 8; ++u) av[u] = col[min(rb + 4 * u, n - 1)];  // rows past n: clamped, never stored
#pragma unroll
      for (int v = 0; v < 4; ++v) bv[v] = col[min(cb + 8 * v, n - 1)];
#pragma unroll
      for (int u = 0; u < 8; ++u)
#pragma unroll
        for (int v = 0; v < 4; ++v) acc[u][v] = fma(av[u], bv[v], acc[u][v]);
    }
#pragma unroll
    for (int u = 0; u < 8; ++u)
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        const int i = rb + 4 * u, j = cb + 8 * v;
        if (i < n && j <= i) s[i + j * kLd] -= acc[u][v];
      }
  }
}

// trtri step 1, warp b: the bw × bw diagonal block b of L inverted in place, lane c computing
// column c of its inverse by forward substitution in registers. Rows and columns past bw act as
// the identity, so every step is uniform (no per-step bound checks on the dependent chain), and
// each step's column of L is read once into registers before the FMAs that use it.
template <class T>
__device__ void invert_diagonal_block(T* s, int k0, int bw, int lane, const T* dinv) {
  T x[kInner];
#pragma unroll
  for (int i = 0; i < kInner; ++i) x[i] = i == lane ? T(1) : T(0);
#pragma unroll
  for (int p = 0; p < kInner; ++p) {
    T col[kInner];
#pragma unroll
    for (int i = p + 1; i < kInner; ++i) col[i] = (i < bw && p < bw) ? s[(k0 + i) + (k0 + p) * kLd] : T(0);
    x[p] *= p < bw ? dinv[k0 + p] : T(1);
#pragma unroll
    for (int i = p + 1; i < kInner; ++i) x[i] = fma(-col[i], x[p], x[i]);
  }
  __syncwarp();  // every lane has read the block's L before it is overwritten
#pragma unroll
  for (int i = 0; i < kInner; ++i)
    if (lane < bw && i >= lane && i < bw) s[(k0 + i) + (k0 + lane) * kLd] = x[i];
}

// One k-step of a 16 × 32 register tile: acc[u][v] += a[u]·b[v].
template <class T>
__device__ __forceinline__ void add_outer_product(T (&acc)[4][4], const T (&a)[4], const T (&b)[4]) {
#pragma unroll
  for (int u = 0; u < 4; ++u)
#pragma unroll
    for (int v = 0; v < 4; ++v) acc[u][v] = fma(a[u], b[v], acc[u][v]);
}

// Writes sign·acc of a 16 × 32 tile (lane (ly, lx): rows ly + 4u, columns lx + 8v) to
// out[row·row_stride + column·column_stride], rows at or past `rows` left alone.
template <class T>
__device__ __forceinline__ void store_tile(const T (&acc)[4][4], T sign, T* out, int row_stride, int column_stride,
                                           int ly, int lx, int rows) {
#pragma unroll
  for (int u = 0; u < 4; ++u)
#pragma unroll
    for (int v = 0; v < 4; ++v)
      if (ly + 4 * u < rows) out[(ly + 4 * u) * row_stride + (lx + 8 * v) * column_stride] = sign * acc[u][v];
}

// Columns [c0, c1) of the block's lower triangle from shared memory to `a`, worker w of
// `workers` warps taking every workers-th column (lanes down its rows: coalesced).
template <class T>
__device__ __forceinline__ void store_lower_columns(const T* s, int n, int c0, int c1, T* a, std::int64_t lda, int w,
                                                   int workers, int lane) {
  for (int j = c0 + w; j < c1; j += workers)
    for (int i = j + lane; i < n; i += 32) a[i + static_cast<std::int64_t>(j) * lda] = s[i + j * kLd];
}

// Columns [c0, c1) of L⁻¹ to inv as full columns, zeros above the diagonal.
template <class T>
__device__ __forceinline__ void store_inverse_columns(const T* s, int n, int c0, int c1, T* inv, std::int64_t ldinv,
                                                     int w, int workers, int lane) {
  for (int j = c0 + w; j < c1; j += workers)
    for (int i = lane; i < n; i += 32) inv[i + static_cast<std::int64_t>(j) * ldinv] = i >= j ? s[i + j * kLd] : T(0);
}

template <class T>
__global__ void __launch_bounds__(kThreads) potrf_trtri_fused_kernel(T* __restrict__ a, std::int64_t lda, int n,
                                                                     T* __restrict__ inv, std::int64_t ldinv,
                                                                     int* __restrict__ info, int info_offset) {
  extern __shared__ __align__(16) unsigned char shared_raw[];
  T* s = reinterpret_cast<T*>(shared_raw);
  T* temp = s + static_cast<std::size_t>(n) * kLd;
  T* dinv = temp + static_cast<std::size_t>(n > kInner ? n - kInner : 0) * kTempLd;
  __shared__ int failed_at;
  const int t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5;
  if (t == 0) failed_at = -1;
  // Copies in and out: a warp per column, lanes down its rows (coalesced, no index division).
  // In: asynchronous element copies (cp.async), all in flight at once, so the block's load costs
  // about one memory latency rather than one per column a warp walks.
  for (int j = warp; j < n; j += kWarps)
    for (int i = j + lane; i < n; i += 32)
      __pipeline_memcpy_async(s + i + j * kLd, a + i + static_cast<std::int64_t>(j) * lda, sizeof(T));
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();

  // potrf, right-looking over 32-wide inner panels: three barriers per panel. While warp 0
  // factors a diagonal block the other warps write the previous panel's columns of L out (final
  // since that panel's solve), so only the last panel's columns are written after the loop.
  int written = 0;  // L's columns [0, written) are in `a`
  for (int k0 = 0; k0 < n; k0 += kInner) {
    const int bw = min(kInner, n - k0);
    if (warp == 0)
      factor_diagonal_block(s, k0, bw, lane, dinv, &failed_at);
    else
      store_lower_columns(s, n, written, k0, a, lda, warp - 1, kWarps - 1, lane);
    written = k0;
    __syncthreads();
    if (failed_at >= 0) break;  // read after the barrier by every thread: uniform
    if (k0 + bw >= n) break;
    solve_below(s, k0, n, dinv);  // bw == kInner here: only the last panel is narrower
    __syncthreads();
    update_trailing(s, k0, k0 + kInner, n, warp, lane);
    __syncthreads();
  }
  store_lower_columns(s, n, written, n, a, lda, warp, kWarps, lane);
  if (failed_at >= 0) {
    if (t == 0) atomicCAS(info, 0, info_offset + failed_at + 1);
    return;
  }
  if (inv == nullptr) return;
  __syncthreads();  // L is read out before the inversion overwrites it

  // trtri in place (LAPACK's lower trtri by 32-wide blocks, right to left): the diagonal blocks
  // inverted one per warp, then each block column below, X21 = −X22·L21·X11, with X22 (the
  // columns right of it) already inverted.
  const int blocks = (n + kInner - 1) / kInner;
  const int ly = lane >> 3, lx = lane & 7;
  if (warp < blocks) invert_diagonal_block(s, warp * kInner, min(kInner, n - warp * kInner), lane, dinv);
  __syncthreads();
  for (int jb = blocks - 2; jb >= 0; --jb) {
    const int c0 = jb * kInner, rs = c0 + kInner;
    // temp = X22·L21 (X22 lower triangular: k <= r), then L21's place ← −temp·X11 (X11 lower
    // triangular: k >= c). Both in 16 × 32 register tiles, one per warp (lane (ly, lx) keeps
    // rows ly + 4u and columns lx + 8v): 8 shared loads per 16 FMAs, where a row per warp took
    // 2 per FMA and made the inversion shared-memory bound.
    const int tiles = (n - rs + 15) / 16;  // fewer than the warps: the rest write X's block column jb + 1 out
    if (warp >= tiles) store_inverse_columns(s, n, rs, min(n, rs + kInner), inv, ldinv, warp - tiles, kWarps - tiles, lane);
    for (int tile = warp; tile < tiles; tile += kWarps) {
      const int t0 = rs + tile * 16, k_end = min(n, t0 + 16);
      T acc[4][4] = {};
      for (int k = rs; k < k_end; ++k) {
        T x[4], l[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) {
          const int r = t0 + ly + 4 * u;
          x[u] = (r < n && k <= r) ? s[r + k * kLd] : T(0);  // s's strict upper triangle is not X22
        }
#pragma unroll
        for (int v = 0; v < 4; ++v) l[v] = s[k + (c0 + lx + 8 * v) * kLd];
        add_outer_product(acc, x, l);
      }
      store_tile(acc, T(1), temp + (t0 - rs) * kTempLd, kTempLd, 1, ly, lx, n - t0);
    }
    __syncthreads();
    for (int tile = warp; tile < tiles; tile += kWarps) {
      const int t0 = rs + tile * 16;
      T acc[4][4] = {};
#pragma unroll 4
      for (int k = 0; k < kInner; ++k) {
        T t[4], x[4];
#pragma unroll
        for (int u = 0; u < 4; ++u) t[u] = temp[min(t0 + ly + 4 * u - rs, n - 1 - rs) * kTempLd + k];
#pragma unroll
        for (int v = 0; v < 4; ++v) {
          const int c = lx + 8 * v;
          x[v] = k >= c ? s[(c0 + k) + (c0 + c) * kLd] : T(0);
        }
        add_outer_product(acc, t, x);
      }
      store_tile(acc, T(-1), s + t0 + c0 * kLd, 1, kLd, ly, lx, n - t0);
    }
    __syncthreads();
  }
  store_inverse_columns(s, n, 0, min(n, kInner), inv, ldinv, warp, kWarps, lane);
}

static_assert(kBlocks <= kWarps, "one warp per diagonal block in the inversion");
static_assert((kPotrfFusedMax - kInner + 15) / 16 < kWarps, "a warp free of inversion tiles writes X out");

// Above the default 48 KB of dynamic shared memory: opt in to the most this kernel ever takes,
// once per device (a host API call per panel would sit on the host's side of every step).
template <class T>
void opt_in_shared_memory() {
  static std::mutex mutex;
  static std::vector<int> devices_done;
  int device = 0;
  GPUFACT_CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mutex);
  if (std::find(devices_done.begin(), devices_done.end(), device) != devices_done.end()) return;
  GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(potrf_trtri_fused_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(shared_elements(kPotrfFusedMax) * sizeof(T))));
  devices_done.push_back(device);
}

template <class T>
void potrf_trtri_fused(T* a, std::int64_t lda, int n, T* inv, std::int64_t ldinv, int* info, int info_offset,
                       cudaStream_t stream) {
  if (n < 0 || n > kPotrfFusedMax)
    throw std::invalid_argument("launch_potrf_trtri_fused: n = " + std::to_string(n) + " is outside 0.." +
                                std::to_string(kPotrfFusedMax));
  if (lda < (n > 1 ? n : 1)) throw std::invalid_argument("launch_potrf_trtri_fused: lda < max(1, n)");
  if (inv != nullptr && ldinv < (n > 1 ? n : 1))
    throw std::invalid_argument("launch_potrf_trtri_fused: ldinv < max(1, n)");
  if (info == nullptr) throw std::invalid_argument("launch_potrf_trtri_fused: info is null");
  if (n == 0) return;
  opt_in_shared_memory<T>();
  potrf_trtri_fused_kernel<T><<<1, kThreads, shared_elements(n) * sizeof(T), stream>>>(a, lda, n, inv, ldinv, info,
                                                                                        info_offset);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace

void launch_potrf_trtri_fused(float* a, std::int64_t lda, int n, float* inv, std::int64_t ldinv, int* info,
                              int info_offset, cudaStream_t stream) {
  potrf_trtri_fused(a, lda, n, inv, ldinv, info, info_offset, stream);
}
void launch_potrf_trtri_fused(double* a, std::int64_t lda, int n, double* inv, std::int64_t ldinv, int* info,
                              int info_offset, cudaStream_t stream) {
  potrf_trtri_fused(a, lda, n, inv, ldinv, info, info_offset, stream);
}

}  // namespace gpufact::kernels
