#include "kernels/qr/caqr_kernels.cuh"

#include "core/cuda/check.hpp"
#include "core/cuda/device.hpp"
#include "kernels/common/warp_butterfly.cuh"
#include "kernels/qr/block_reflector.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

constexpr int kWarp = 32;
// factor and factor_tree: a warp per trailing column, so 32 warps keep ~1–4 columns each in
// flight per reflector for panels up to 128 wide (one barrier per column, block_geqr2).
constexpr int kFactorThreads = 1024;
constexpr int kTreeThreads = 1024;
// apply_qt_tree: one trailing column per warp, the columns of a tile applied concurrently.
constexpr int kTreeApplyThreads = 1024;
constexpr int kTreeTileCols = kTreeApplyThreads / 32;

extern __shared__ __align__(16) unsigned char caqr_smem[];

// Lets `kernel` use all opt-in shared memory (once per kernel, before any capture needs it).
// The opt-in limit covers static plus dynamic shared memory, so the kernel's static part is
// subtracted (asking for the whole limit is an invalid value when the kernel has any).
template <class Kernel>
void allow_full_smem(Kernel kernel) {
  cudaFuncAttributes attr{};
  GPUFACT_CUDA_CHECK(cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(kernel)));
  const int dynamic = current_device_shared_optin() - static_cast<int>(attr.sharedSizeBytes);
  GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(reinterpret_cast<const void*>(kernel),
                                          cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic));
}

// The most threads per block `kernel` can launch with (its registers decide it).
template <class Kernel>
int max_threads_of(Kernel kernel) {
  cudaFuncAttributes attr{};
  GPUFACT_CUDA_CHECK(cudaFuncGetAttributes(&attr, reinterpret_cast<const void*>(kernel)));
  return attr.maxThreadsPerBlock;
}

// Sets the shared-memory limit once and returns the kernel's thread limit (cached, so no
// attribute call happens inside a stream capture after caqr_prepare_kernels).
template <auto Kernel>
int configure_once() {
  static const int max_threads = (allow_full_smem(Kernel), max_threads_of(Kernel));
  return max_threads;
}

// A launch with more threads than the kernel's registers allow fails and leaves its output
// untouched; say so instead.
template <auto Kernel>
void require_threads(int threads, const char* kernel) {
  const int limit = configure_once<Kernel>();
  if (threads > limit)
    throw std::runtime_error(std::string(kernel) + " cannot launch with " + std::to_string(threads) +
                             " threads per block: its register use allows " + std::to_string(limit));
}

void require_smem(std::size_t bytes, const char* kernel) {
  const auto limit = static_cast<std::size_t>(current_device_shared_optin());
  if (bytes > limit)
    throw std::invalid_argument(std::string(kernel) + " needs " + std::to_string(bytes) +
                                " bytes of shared memory per block; the device allows " + std::to_string(limit));
}

// Checks `Kernel`'s thread and shared-memory limits (errors name it `name`), then launches it.
template <auto Kernel, class... Args>
void launch_checked(const char* name, dim3 grid, int threads, std::size_t smem, cudaStream_t stream, Args... args) {
  require_threads<Kernel>(threads, name);
  require_smem(smem, name);
  Kernel<<<grid, threads, smem, stream>>>(args...);
  GPUFACT_CHECK_LAUNCH();
}

unsigned grid_for(std::int64_t count, int threads) {
  return static_cast<unsigned>(std::min<std::int64_t>((count + threads - 1) / threads, 65535 * 8));
}

// The rows below its diagonal entry that reflector j of a dense block or of a tree stack touches.
// A tree stack holds `children` R's of w rows (the last one last_rows ≤ w rows); the R's are upper
// trapezoidal, so reflector j is 1 at row j of R_0 and nonzero only in rows 0 … min(j, k_c − 1) of
// children c ≥ 1 (caqr_schedule.hpp): (children − 1)·(j + 1) rows at most, not the dense K − j − 1,
// which halves the tree's work or better. w = 0 marks a dense block of `rows` rows.
struct RowPattern {
  int rows = 0;
  int w = 0;
  int children = 0;
  int last_rows = 0;
};
__device__ __forceinline__ int pattern_count(const RowPattern& p, int j) {
  if (p.w == 0) return p.rows - j - 1;
  return (p.children - 2) * (j + 1) + min(j + 1, p.last_rows);
}
__device__ __forceinline__ int pattern_row(const RowPattern& p, int j, int e) {
  if (p.w == 0) return j + 1 + e;
  return (1 + e / (j + 1)) * p.w + e % (j + 1);
}

// Walks pattern rows e, e + kWarp, e + 2·kWarp, … without a division per row: row = base + l,
// l < j + 1 within a child; a step of kWarp adds kWarp / (j+1) children and kWarp mod (j+1) rows.
struct PatternWalk {
  int base = 0, l = 0, jp1 = 0, child_step = 0, row_step = 0, w = 0;
  __device__ __forceinline__ int row() const { return base + l; }
  __device__ __forceinline__ void next() {
    l += row_step;
    base += child_step;
    if (l >= jp1) {
      l -= jp1;
      base += w;
    }
  }
};
__device__ __forceinline__ PatternWalk pattern_walk(const RowPattern& p, int j, int e) {
  PatternWalk pw;
  if (p.w == 0) {  // dense: rows j + 1 + e, never wrapping
    pw.base = j + 1;
    pw.l = e;
    pw.jp1 = 0x7fffffff;
    pw.row_step = kWarp;
    return pw;
  }
  pw.jp1 = j + 1;
  pw.w = p.w;
  pw.base = (1 + e / pw.jp1) * p.w;
  pw.l = e % pw.jp1;
  pw.child_step = (kWarp / pw.jp1) * p.w;
  pw.row_step = kWarp % pw.jp1;
  return pw;
}

// Householder QR (LAPACK geqr2) of the matrix s (ld; rows and sparsity from `pat`, `cols`
// columns) in shared memory by the whole thread block, with ONE barrier per column: every warp
// computes the reflector's norm itself (the same lanes add the same entries, so all warps agree
// bit for bit) and updates its own columns with the unscaled vector x below the diagonal,
// H·c = c − τ(c_j + s·xᵀc)·[1; s·x] with s = 1/(α − β); column j is scaled and β written only
// after the barrier, when no warp reads it any more. tau_out[j] for j < min(rows, cols).
template <class T>
__device__ void block_geqr2(T* s, int ld, RowPattern pat, int cols, T* tau_out) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  const int k = min(pat.rows, cols);
  for (int j = 0; j < k; ++j) {
    T* vj = s + j * ld;
    const int count = pattern_count(pat, j);
    const PatternWalk first = pattern_walk(pat, j, lane);
    T ss = T(0);
    {
      PatternWalk pw = first;
#pragma unroll 4
      for (int e = lane; e < count; e += kWarp, pw.next()) {
        const T x = vj[pw.row()];
        ss += x * x;
      }
    }
    ss = warp_sum(ss);
    const T alpha = vj[j];
    T tau = T(0), scal = T(1), beta = alpha;
    if (ss != T(0)) {
      beta = -copysign(sqrt(alpha * alpha + ss), alpha);
      tau = (beta - alpha) / beta;
      scal = T(1) / (alpha - beta);
    }
    if (tau != T(0)) {
      for (int c = j + 1 + warp; c < cols; c += warps) {
        T* col = s + c * ld;
        const T cj = col[j];  // read by every lane before the shuffle, written by lane 0 after it
        T dot = T(0);
        PatternWalk pw = first;
#pragma unroll 4
        for (int e = lane; e < count; e += kWarp, pw.next()) dot += vj[pw.row()] * col[pw.row()];
        const T td = tau * (cj + scal * warp_sum(dot));
        if (lane == 0) col[j] = cj - td;
        const T f = td * scal;
        pw = first;
#pragma unroll 4
        for (int e = lane; e < count; e += kWarp, pw.next()) col[pw.row()] -= f * vj[pw.row()];
      }
    }
    if (threadIdx.x == 0) tau_out[j] = tau;
    __syncthreads();
    if (tau != T(0)) {
      for (int e = static_cast<int>(threadIdx.x); e < count; e += blockDim.x) vj[pattern_row(pat, j, e)] *= scal;
      if (threadIdx.x == 0) vj[j] = beta;
    }
  }
  __syncthreads();  // the last column's scaling before the caller reads s
}

template <class T>
__global__ void __launch_bounds__(kFactorThreads)
    factor_kernel(T* panel, std::int64_t lda, std::int64_t rows, int width, int block_rows, T* tau, int tau_ld) {
  T* s = reinterpret_cast<T*>(caqr_smem);
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * block_rows;
  const int nr = static_cast<int>(min(static_cast<std::int64_t>(block_rows), rows - r0));
  T* a = panel + r0;
  for (int idx = threadIdx.x; idx < nr * width; idx += blockDim.x) s[idx] = a[idx % nr + (idx / nr) * lda];
  T* t = tau + static_cast<std::int64_t>(blockIdx.x) * tau_ld;
  for (int j = min(nr, width) + static_cast<int>(threadIdx.x); j < tau_ld; j += blockDim.x) t[j] = T(0);
  __syncthreads();
  RowPattern dense;
  dense.rows = nr;
  block_geqr2(s, nr, dense, width, t);
  for (int idx = threadIdx.x; idx < nr * width; idx += blockDim.x) a[idx % nr + (idx / nr) * lda] = s[idx];
}

// A tree node's stack: K rows; stack row r is row r mod w of child r / w (all children but the
// level's last have w rows), stored at panel row (first + r / w)·stride + r mod w.
struct NodeStack {
  std::int64_t first = 0;
  int count = 0, rows = 0;
};
__device__ __forceinline__ NodeStack node_stack(const CaqrTreeLevelArgs& l, std::int64_t node, int w) {
  NodeStack st;
  st.first = node * l.fan_in;
  st.count = static_cast<int>(min(static_cast<std::int64_t>(l.fan_in), l.children - st.first));
  const bool has_last = st.first + st.count == l.children;
  st.rows = (st.count - 1) * w + (has_last ? static_cast<int>(l.last_child_rows) : w);
  return st;
}
__device__ __forceinline__ RowPattern stack_pattern(const NodeStack& st, int w) {
  RowPattern p;
  p.rows = st.rows;
  p.w = w;
  p.children = st.count;
  p.last_rows = st.rows - (st.count - 1) * w;
  return p;
}
__device__ __forceinline__ std::int64_t stack_row(const CaqrTreeLevelArgs& l, const NodeStack& st, int r, int w) {
  return (st.first + r / w) * l.child_stride + r % w;
}

template <class T>
__global__ void __launch_bounds__(kTreeThreads)
    factor_tree_kernel(T* panel, std::int64_t lda, int width, CaqrTreeLevelArgs level, T* tau, int tau_ld) {
  const NodeStack st = node_stack(level, blockIdx.x, width);
  if (st.count < 2) return;  // a single child passes its R up
  T* s = reinterpret_cast<T*>(caqr_smem);
  const int K = st.rows;
  for (int idx = threadIdx.x; idx < K * width; idx += blockDim.x) {
    const int r = idx % K, j = idx / K;
    s[idx] = r % width <= j ? panel[stack_row(level, st, r, width) + j * lda] : T(0);
  }
  __syncthreads();
  block_geqr2(s, K, stack_pattern(st, width), width, tau + static_cast<std::int64_t>(blockIdx.x) * tau_ld);
  for (int idx = threadIdx.x; idx < K * width; idx += blockDim.x) {
    const int r = idx % K, j = idx / K;
    if (r % width <= j) panel[stack_row(level, st, r, width) + j * lda] = s[idx];
  }
}

struct HBlock {
  std::int64_t r0;
  int nr, k;
};
__device__ __forceinline__ HBlock h_block(std::int64_t rows, int width, int BR) {
  HBlock b;
  b.r0 = static_cast<std::int64_t>(blockIdx.x) * BR;
  b.nr = static_cast<int>(min(static_cast<std::int64_t>(BR), rows - b.r0));
  b.k = min(b.nr, width);
  return b;
}

// ---- Blocked (compact WY) variants: kernel=blocked ------------------------------------------
// Per-CTA cost of the columnwise block_geqr2 on a 256×100 FP32 leaf block (the 110592×100
// default, 1024 threads): each of the 100 column steps has ONE barrier, every warp recomputes
// the norm (8 shared loads per lane) and each of the ≤ 99 trailing columns costs a dot (2 loads
// + 1 FMA per entry), a 5-shuffle warp_sum and an axpy (2 loads + 1 store + 1 FMA per entry):
// ~3 shared accesses per FMA, Σ_j (99 − j)(255 − j)·3 ≈ 3.4 M words = 106 k cycles of the SM's
// 32 words/clock, against 1.2 M FMA = 9.5 k cycles at 128 FMA/clock: shared-memory bound at
// ~9% of the FP32 rate, and each step's dependent shuffles and barrier add latency the 2 CTAs
// per SM barely hide. A tree node (fan-in 5, 500 × 100 stack) is the same loop on 87 → 18 → 4 → 1
// CTAs: most SMs idle, latency bound. apply_qt_h register_serial on 256×128 tiles (512 threads,
// 64 rows per thread) reads v with 64 broadcast loads per FMA sweep twice per reflector and
// holds one CTA per SM (135 KB shared): again ~1 shared load per FMA.
// The blocked form (LAPACK geqrf / larft / larfb, anderson10 §IV.D in compact WY) factors kWyCols
// columns at a time with block_geqr2, builds their T (nb × nb) and applies them to the rest of
// the block as two small in-shared-memory GEMMs, W = Vᵀ C then C −= V·op(T)·W, a warp per kWyCw
// columns with kWyCw × kWyCols accumulators in registers: per row, kWyCols + kWyCw loads feed
// kWyCols·kWyCw FMAs (0.31 loads per FMA for FP32), and 3 barriers per kWyCols columns
// instead of kWyCols. Floor at 128 FMA/clock, 1.98 GHz: 2·256·100² flops per leaf block ≈ 20 µs
// of one SM for all 432 blocks over 132 SMs; the tree adds 4 dense nodes (2·500·100² each).
constexpr int kWyCols = 16;          // reflectors per WY chunk (nb)
constexpr int kWyFactorThreads = 512;
constexpr int kWyApplyThreads = 256;
constexpr int kWyTileCols = 32;      // apply_qt_h_wy: C columns per CTA
template <class T>
struct WyCw {  // columns per warp in wy_apply: kWyCols·value accumulators in registers
  static constexpr int value = sizeof(T) == 4 ? 4 : 2;
};

// Sum over the warp of x[lane], for 32 values per lane in 31 shuffles (the transposed butterfly).
template <class T>
__device__ __forceinline__ T warp_transpose_sum32(T (&x)[32], int lane) {
  butterfly<T, 32, 16>(x, lane);
  return x[0];
}

// V(r, i) of a chunk stored below its diagonal in v (ld): 1 on the diagonal, 0 above (whatever
// v holds there, e.g. R), 0 for i ≥ nb.
template <class T>
__device__ __forceinline__ T wy_v(const T* v, int ldv, int r, int i, int nb) {
  if (i >= nb || r < i) return T(0);
  return r == i ? T(1) : v[r + i * ldv];
}

// LAPACK larft (forward, columnwise): t (kWyCols × kWyCols, upper, zeros elsewhere) with
// H_0 … H_{nb−1} = I − V T Vᵀ, from the nb reflectors of v (rows × nb) and tau. g: kWyCols²
// words of scratch. Ends with a barrier.
template <class T>
__device__ void block_larft(const T* v, int ldv, int rows, int nb, const T* tau, T* t, T* g) {
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  const int pairs = nb * (nb - 1) / 2;
  for (int p = warp; p < pairs; p += warps) {  // G(l, j) = V(:, l)ᵀ V(:, j), l < j, a warp each
    int j = 1;
    while (j < nb && (j + 1) * j / 2 <= p) ++j;
    const int l = p - j * (j - 1) / 2;
    T d = T(0);
    for (int r = j + lane; r < rows; r += kWarp) d += v[r + l * ldv] * (r == j ? T(1) : v[r + j * ldv]);
    d = warp_sum(d);
    if (lane == 0) g[l + j * kWyCols] = d;
  }
  __syncthreads();
  if (threadIdx.x < kWyCols) {  // row i of T: T(i, j) = −τ_j Σ_{i≤l<j} T(i, l) G(l, j), its own earlier entries
    const int i = threadIdx.x;
    for (int j = 0; j < kWyCols; ++j) {
      T x = T(0);
      if (j < nb && i == j) {
        x = tau[j];
      } else if (j < nb && i < j) {
        T sum = T(0);
        for (int l = i; l < j; ++l) sum += t[i + l * kWyCols] * g[l + j * kWyCols];
        x = -tau[j] * sum;
      }
      t[i + j * kWyCols] = x;
    }
  }
  __syncthreads();
}

// LAPACK larfb: C (rows × ncols, ldc) ← (I − V op(T) Vᵀ) C, op(T) = Tᵀ for Qᵀ (transpose), T for
// Q; V: the chunk's nb reflectors (wy_v), T from block_larft. w: kWyCols × ncols words. All in
// shared memory; a warp per CW columns, lanes over rows. Ends with a barrier.
template <class T, int CW>
__device__ void wy_apply(const T* v, int ldv, int rows, int nb, const T* t, bool transpose, T* c, int ldc, int ncols,
                         T* w) {
  constexpr int NB = kWyCols, ACC = CW * NB;
  static_assert(ACC % 32 == 0, "accumulators are reduced 32 at a time");
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  for (int c0 = warp * CW; c0 < ncols; c0 += warps * CW) {  // W = Vᵀ C
    T acc[ACC / 32][32];
#pragma unroll
    for (int q = 0; q < ACC / 32; ++q)
#pragma unroll
      for (int e = 0; e < 32; ++e) acc[q][e] = T(0);
    for (int r = lane; r < rows; r += kWarp) {
      T vr[NB];
#pragma unroll
      for (int i = 0; i < NB; ++i) vr[i] = wy_v(v, ldv, r, i, nb);
#pragma unroll
      for (int cc = 0; cc < CW; ++cc) {
        const T x = c0 + cc < ncols ? c[r + (c0 + cc) * ldc] : T(0);
#pragma unroll
        for (int i = 0; i < NB; ++i) acc[(cc * NB + i) / 32][(cc * NB + i) % 32] += vr[i] * x;
      }
    }
#pragma unroll
    for (int q = 0; q < ACC / 32; ++q) {
      const T sum = warp_transpose_sum32(acc[q], lane);  // entry q·32 + lane
      const int f = q * 32 + lane, cc = f / NB, i = f % NB;
      if (c0 + cc < ncols) w[i + (c0 + cc) * NB] = sum;
    }
  }
  __syncthreads();
  for (int col = threadIdx.x; col < ncols; col += blockDim.x) {  // W ← op(T) W, a column per thread
    T x[NB];
#pragma unroll
    for (int l = 0; l < NB; ++l) x[l] = w[l + col * NB];
#pragma unroll
    for (int i = 0; i < NB; ++i) {
      T y = T(0);
#pragma unroll
      for (int l = 0; l < NB; ++l) y += (transpose ? t[l + i * NB] : t[i + l * NB]) * x[l];
      w[i + col * NB] = y;
    }
  }
  __syncthreads();
  for (int c0 = warp * CW; c0 < ncols; c0 += warps * CW) {  // C −= V W
    T wr[CW][NB];
#pragma unroll
    for (int cc = 0; cc < CW; ++cc)
#pragma unroll
      for (int i = 0; i < NB; ++i) wr[cc][i] = c0 + cc < ncols ? w[i + (c0 + cc) * NB] : T(0);
    for (int r = lane; r < rows; r += kWarp) {
      T vr[NB];
#pragma unroll
      for (int i = 0; i < NB; ++i) vr[i] = wy_v(v, ldv, r, i, nb);
#pragma unroll
      for (int cc = 0; cc < CW; ++cc) {
        if (c0 + cc >= ncols) continue;
        T x = c[r + (c0 + cc) * ldc];
#pragma unroll
        for (int i = 0; i < NB; ++i) x -= vr[i] * wr[cc][i];
        c[r + (c0 + cc) * ldc] = x;
      }
    }
  }
  __syncthreads();
}

// Blocked Householder QR (LAPACK geqrf) of the dense rows × cols matrix s (ld) in shared memory:
// block_geqr2 on kWyCols columns, then their WY form applied to the columns right of them.
// tau_out[j] for j < min(rows, cols); t, g: kWyCols² words each; w: kWyCols × cols words.
template <class T>
__device__ void block_geqrf_wy(T* s, int ld, int rows, int cols, T* tau_out, T* t, T* g, T* w) {
  const int k = min(rows, cols);
  for (int j0 = 0; j0 < k; j0 += kWyCols) {
    const int nb = min(kWyCols, k - j0);
    RowPattern sub;
    sub.rows = rows - j0;
    T* panel = s + j0 + static_cast<std::int64_t>(j0) * ld;
    block_geqr2(panel, ld, sub, nb, tau_out + j0);  // ends with a barrier
    const int rest = cols - j0 - nb;
    if (rest <= 0) continue;
    block_larft(panel, ld, rows - j0, nb, tau_out + j0, t, g);
    wy_apply<T, WyCw<T>::value>(panel, ld, rows - j0, nb, t, true, panel + static_cast<std::int64_t>(nb) * ld, ld, rest, w);
  }
}

// factor, blocked: the block in shared memory (nr × width), then t, g, w.
template <class T>
__global__ void __launch_bounds__(kWyFactorThreads)
    factor_wy_kernel(T* panel, std::int64_t lda, std::int64_t rows, int width, int block_rows, T* tau, int tau_ld) {
  T* s = reinterpret_cast<T*>(caqr_smem);
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * block_rows;
  const int nr = static_cast<int>(min(static_cast<std::int64_t>(block_rows), rows - r0));
  T* t = s + static_cast<std::int64_t>(block_rows) * width;
  T* g = t + kWyCols * kWyCols;
  T* w = g + kWyCols * kWyCols;
  T* a = panel + r0;
  for (int idx = threadIdx.x; idx < nr * width; idx += blockDim.x) s[idx] = a[idx % nr + (idx / nr) * lda];
  T* tb = tau + static_cast<std::int64_t>(blockIdx.x) * tau_ld;
  for (int j = min(nr, width) + static_cast<int>(threadIdx.x); j < tau_ld; j += blockDim.x) tb[j] = T(0);
  __syncthreads();
  block_geqrf_wy(s, nr, nr, width, tb, t, g, w);
  for (int idx = threadIdx.x; idx < nr * width; idx += blockDim.x) a[idx % nr + (idx / nr) * lda] = s[idx];
}

// factor_tree, blocked: the node's stack dense in shared memory (zeros outside the stacked
// triangles; they stay exact zeros, since every reflector is zero there too), factored by
// block_geqrf_wy; only the pattern rows are written back, as the columnwise kernel does.
template <class T>
__global__ void __launch_bounds__(kWyFactorThreads)
    factor_tree_wy_kernel(T* panel, std::int64_t lda, int width, CaqrTreeLevelArgs level, T* tau, int tau_ld) {
  const NodeStack st = node_stack(level, blockIdx.x, width);
  if (st.count < 2) return;  // a single child passes its R up
  const int K = st.rows;
  T* s = reinterpret_cast<T*>(caqr_smem);
  T* t = s + static_cast<std::int64_t>(level.fan_in) * width * width;
  T* g = t + kWyCols * kWyCols;
  T* w = g + kWyCols * kWyCols;
  for (int idx = threadIdx.x; idx < K * width; idx += blockDim.x) {
    const int r = idx % K, j = idx / K;
    s[idx] = r % width <= j ? panel[stack_row(level, st, r, width) + j * lda] : T(0);
  }
  __syncthreads();
  block_geqrf_wy(s, K, K, width, tau + static_cast<std::int64_t>(blockIdx.x) * tau_ld, t, g, w);
  for (int idx = threadIdx.x; idx < K * width; idx += blockDim.x) {
    const int r = idx % K, j = idx / K;
    if (r % width <= j) panel[stack_row(level, st, r, width) + j * lda] = s[idx];
  }
}

// apply_qt_h, blocked: a block_rows × kWyTileCols tile of C in shared memory; the block's
// reflectors kWyCols at a time (forward for Qᵀ, backward for Q), each chunk's V copied to shared
// memory, its T built (block_larft) and applied (wy_apply) to the tile's rows below the chunk's
// first row.
template <class T>
__global__ void __launch_bounds__(kWyApplyThreads)
    apply_h_wy_kernel(const T* panel, std::int64_t lda, std::int64_t rows, int width, int block_rows, const T* tau,
                      int tau_ld, T* c, std::int64_t ldc, std::int64_t cols, bool transpose) {
  const HBlock b = h_block(rows, width, block_rows);
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.y) * kWyTileCols;
  const int nc = static_cast<int>(min(static_cast<std::int64_t>(kWyTileCols), cols - c0));
  T* ct = reinterpret_cast<T*>(caqr_smem);  // nr × nc, ld nr
  T* vs = ct + static_cast<std::int64_t>(block_rows) * kWyTileCols;
  T* t = vs + static_cast<std::int64_t>(block_rows) * kWyCols;
  T* g = t + kWyCols * kWyCols;
  T* w = g + kWyCols * kWyCols;
  const int nr = b.nr;
  for (int idx = threadIdx.x; idx < nr * nc; idx += blockDim.x)
    ct[idx] = c[b.r0 + idx % nr + (c0 + idx / nr) * ldc];
  const T* tb = tau + static_cast<std::int64_t>(blockIdx.x) * tau_ld;
  const int chunks = (b.k + kWyCols - 1) / kWyCols;
  for (int q = 0; q < chunks; ++q) {
    const int j0 = (transpose ? q : chunks - 1 - q) * kWyCols, nb = min(kWyCols, b.k - j0), vr = nr - j0;
    __syncthreads();  // the previous chunk's readers of vs are done (and the tile is loaded)
    for (int idx = threadIdx.x; idx < vr * nb; idx += blockDim.x) {
      const int r = idx % vr, i = idx / vr;
      vs[idx] = panel[b.r0 + j0 + r + static_cast<std::int64_t>(j0 + i) * lda];
    }
    __syncthreads();
    block_larft(vs, vr, vr, nb, tb + j0, t, g);
    wy_apply<T, WyCw<T>::value>(vs, vr, vr, nb, t, transpose, ct + j0, nr, nc, w);
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < nr * nc; idx += blockDim.x)
    c[b.r0 + idx % nr + (c0 + idx / nr) * ldc] = ct[idx];
}

// Shared by the apply kernels: block b's reflectors as a dense BR × BC column-major matrix with
// the unit diagonal and zeros stored (zeros also in padding rows and columns), and its taus.
template <class T>
__device__ void load_block_reflectors(const T* panel, std::int64_t lda, int nr, int k, int BR, int BC, const T* tau,
                                      T* vs, T* ts) {
  for (int idx = threadIdx.x; idx < BR * BC; idx += blockDim.x) {
    const int r = idx % BR, j = idx / BR;
    vs[idx] = (j < k && r < nr) ? (r > j ? panel[r + j * lda] : (r == j ? T(1) : T(0))) : T(0);
  }
  for (int j = threadIdx.x; j < BC; j += blockDim.x) ts[j] = j < k ? tau[j] : T(0);
}


// 1) shared-memory parallel reductions: thread t holds row t of the tile in registers.
template <class T, int BR, int BC>
__global__ void __launch_bounds__(BR) apply_h_smem_parallel(const T* panel, std::int64_t lda, std::int64_t rows,
                                                            int width, const T* tau, int tau_ld, T* c,
                                                            std::int64_t ldc, std::int64_t cols, bool transpose) {
  T* vs = reinterpret_cast<T*>(caqr_smem);
  T* ts = vs + BR * BC;
  T* red = ts + BC;
  const HBlock b = h_block(rows, width, BR);
  load_block_reflectors(panel + b.r0, lda, b.nr, b.k, BR, BC, tau + static_cast<std::int64_t>(blockIdx.x) * tau_ld, vs, ts);
  const int t = threadIdx.x;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.y) * BC;
  T reg[BC];
#pragma unroll
  for (int j = 0; j < BC; ++j)
    reg[j] = (t < b.nr && c0 + j < cols) ? c[b.r0 + t + (c0 + j) * ldc] : T(0);
  __syncthreads();
  for (int step = 0; step < b.k; ++step) {
    const int j = transpose ? step : b.k - 1 - step;
    const T v = vs[j * BR + t], tj = ts[j];
#pragma unroll
    for (int col = 0; col < BC; ++col) {
      red[t] = v * reg[col];
      __syncthreads();
      for (int half = BR / 2; half > 0; half >>= 1) {
        if (t < half) red[t] += red[t + half];
        __syncthreads();
      }
      const T td = tj * red[0];
      __syncthreads();
      reg[col] -= td * v;
    }
  }
#pragma unroll
  for (int j = 0; j < BC; ++j)
    if (t < b.nr && c0 + j < cols) c[b.r0 + t + (c0 + j) * ldc] = reg[j];
}

template <int BR, int BC>
struct RegisterLayout {
  static constexpr int threads = (BR * BC / 8 < 64) ? 64 : (BR * BC / 8 > 512 ? 512 : BR * BC / 8);
  static constexpr int per_col = threads / BC;   // threads sharing a column (Fig. 6)
  static constexpr int per_thread = BR / per_col;  // rows each thread holds
  // Narrow tiles (BC < 32) hold 32/BC row groups per warp: those are summed with shuffles, so
  // one partial per warp and column goes through shared memory; else one per row group.
  static constexpr bool warp_reduce = BC < 32;
  static constexpr int partials = warp_reduce ? threads / 32 : per_col;
  static_assert(threads % BC == 0 && per_col >= 1 && BR % per_col == 0, "register layout needs BR·BC ≥ 8·BC");
  static_assert(!warp_reduce || 32 % BC == 0, "narrow tiles must divide a warp");
};

// 2) and 4) register-file serial reduction (Fig. 6): thread t owns column t mod BC, rows
// t / BC + q·per_col; serial partial sums in registers, shuffles across the row groups a warp
// holds, and one shared-memory exchange per reflector: every thread adds its column's partials
// itself, so ONE barrier per reflector suffices (the partials are double-buffered: a reflector's
// buffer is rewritten two reflectors later, after a barrier every reader has passed). TILED reads
// C in the row-major tile layout (approach 4), so consecutive threads touch consecutive words.
template <class T, int BR, int BC, bool TILED>
__global__ void __launch_bounds__(RegisterLayout<BR, BC>::threads)
    apply_h_register_serial(const T* panel, std::int64_t lda, std::int64_t rows, int width, const T* tau, int tau_ld,
                            T* c, std::int64_t ldc, std::int64_t cols, bool transpose) {
  using L = RegisterLayout<BR, BC>;
  T* vs = reinterpret_cast<T*>(caqr_smem);
  T* ts = vs + BR * BC;
  T* part = ts + BC;  // [2][L::partials][BC]
  const HBlock b = h_block(rows, width, BR);
  load_block_reflectors(panel + b.r0, lda, b.nr, b.k, BR, BC, tau + static_cast<std::int64_t>(blockIdx.x) * tau_ld, vs, ts);
  const int t = threadIdx.x, col = t % BC, rg = t / BC;
  const std::int64_t gcol = static_cast<std::int64_t>(blockIdx.y) * BC + col;
  const bool col_ok = gcol < cols;
  auto at = [&](int r) -> T* {
    return TILED ? c + static_cast<std::int64_t>(blockIdx.y) * ldc * BC + (b.r0 + r) * BC + col
                 : c + b.r0 + r + gcol * ldc;
  };
  T reg[L::per_thread];
#pragma unroll
  for (int q = 0; q < L::per_thread; ++q) {
    const int r = rg + q * L::per_col;
    reg[q] = (col_ok && r < b.nr) ? *at(r) : T(0);
  }
  __syncthreads();
  for (int step = 0; step < b.k; ++step) {
    const int j = transpose ? step : b.k - 1 - step;
    const T* v = vs + j * BR;
    T partial = T(0);
#pragma unroll
    for (int q = 0; q < L::per_thread; ++q) partial += v[rg + q * L::per_col] * reg[q];
    T* buf = part + (step & 1) * (L::partials * BC);
    if constexpr (L::warp_reduce) {
#pragma unroll
      for (int off = BC; off < kWarp; off <<= 1) partial += __shfl_xor_sync(0xffffffffu, partial, off);
      if (t % kWarp < BC) buf[(t / kWarp) * BC + col] = partial;
    } else {
      buf[rg * BC + col] = partial;
    }
    __syncthreads();
    T d = T(0);
#pragma unroll
    for (int g = 0; g < L::partials; ++g) d += buf[g * BC + col];
    const T td = ts[j] * d;
#pragma unroll
    for (int q = 0; q < L::per_thread; ++q) reg[q] -= td * v[rg + q * L::per_col];
  }
#pragma unroll
  for (int q = 0; q < L::per_thread; ++q) {
    const int r = rg + q * L::per_col;
    if (col_ok && r < b.nr) *at(r) = reg[q];
  }
}

template <int BR, int BC>
struct CombinedLayout {
  static constexpr int threads = (BR * BC / 2 < 256) ? BR * BC / 2 : 256;
};

// 3) shared-memory combined reduction: the tile transposed (row-major) in shared memory, the
// products v_i·c_ij reduced as one BR·BC vector down to BC sums (anderson10 §IV.E.3).
template <class T, int BR, int BC>
__global__ void __launch_bounds__(CombinedLayout<BR, BC>::threads)
    apply_h_smem_combined(const T* panel, std::int64_t lda, std::int64_t rows, int width, const T* tau, int tau_ld,
                          T* c, std::int64_t ldc, std::int64_t cols, bool transpose) {
  T* vs = reinterpret_cast<T*>(caqr_smem);
  T* tile = vs + BR * BC;
  T* red = tile + BR * BC;
  T* ts = red + BR * BC;
  const HBlock b = h_block(rows, width, BR);
  load_block_reflectors(panel + b.r0, lda, b.nr, b.k, BR, BC, tau + static_cast<std::int64_t>(blockIdx.x) * tau_ld, vs, ts);
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.y) * BC;
  for (int idx = threadIdx.x; idx < BR * BC; idx += blockDim.x) {
    const int r = idx % BR, j = idx / BR;
    tile[r * BC + j] = (r < b.nr && c0 + j < cols) ? c[b.r0 + r + (c0 + j) * ldc] : T(0);
  }
  __syncthreads();
  for (int step = 0; step < b.k; ++step) {
    const int j = transpose ? step : b.k - 1 - step;
    const T* v = vs + j * BR;
    for (int idx = threadIdx.x; idx < BR * BC; idx += blockDim.x) red[idx] = v[idx / BC] * tile[idx];
    __syncthreads();
    for (int half = BR * BC / 2; half >= BC; half >>= 1) {
      for (int idx = threadIdx.x; idx < half; idx += blockDim.x) red[idx] += red[idx + half];
      __syncthreads();
    }
    const T tj = ts[j];
    for (int idx = threadIdx.x; idx < BR * BC; idx += blockDim.x) tile[idx] -= (tj * red[idx % BC]) * v[idx / BC];
    __syncthreads();
  }
  for (int idx = threadIdx.x; idx < BR * BC; idx += blockDim.x) {
    const int r = idx % BR, j = idx / BR;
    if (r < b.nr && c0 + j < cols) c[b.r0 + r + (c0 + j) * ldc] = tile[r * BC + j];
  }
}

// apply_qt_tree: gathers the node's reflectors below R_0 (the R_0 part of each is e_j: nothing to
// store; explicit zeros outside the stack pattern) and the rows of a kTreeTileCols-column tile,
// applies them (a warp per column, no block barrier between reflectors; only the rows in the
// reflector's pattern, RowPattern), scatters the rows back.
template <class T>
__global__ void __launch_bounds__(kTreeApplyThreads)
    apply_tree_kernel(const T* panel, std::int64_t lda, int width, CaqrTreeLevelArgs level, const T* tau, int tau_ld,
                      T* c, std::int64_t ldc, std::int64_t cols, bool transpose) {
  const NodeStack st = node_stack(level, blockIdx.x, width);
  if (st.count < 2) return;
  const int K = st.rows, w = width, KV = K - w;
  T* vs = reinterpret_cast<T*>(caqr_smem);  // KV × w: stack rows w … K−1
  T* tile = vs + static_cast<std::int64_t>(KV) * w;
  T* ts = tile + static_cast<std::int64_t>(K) * kTreeTileCols;
  for (int idx = threadIdx.x; idx < KV * w; idx += blockDim.x) {
    const int r = w + idx % KV, j = idx / KV;
    vs[idx] = r % w <= j ? panel[stack_row(level, st, r, w) + j * lda] : T(0);
  }
  const T* tn = tau + static_cast<std::int64_t>(blockIdx.x) * tau_ld;
  for (int j = threadIdx.x; j < w; j += blockDim.x) ts[j] = tn[j];
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.y) * kTreeTileCols;
  for (int idx = threadIdx.x; idx < K * kTreeTileCols; idx += blockDim.x) {
    const int r = idx % K, j = idx / K;
    tile[idx] = c0 + j < cols ? c[stack_row(level, st, r, w) + (c0 + j) * ldc] : T(0);
  }
  __syncthreads();
  const RowPattern pat = stack_pattern(st, w);
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  for (int j0 = warp; j0 < kTreeTileCols && c0 + j0 < cols; j0 += warps) {
    T* col = tile + j0 * K;
    for (int step = 0; step < w; ++step) {
      const int j = transpose ? step : w - 1 - step;
      const T tj = ts[j];
      if (tj == T(0)) continue;
      const T* v = vs + j * KV;  // v[i − w] for pattern rows i ≥ w
      const int count = pattern_count(pat, j);
      const PatternWalk first = pattern_walk(pat, j, lane);
      const T cj = col[j];  // v(j) = 1: row j of R_0's rows; read by every lane before the shuffle
      T dot = T(0);
      PatternWalk pw = first;
#pragma unroll 4
      for (int e = lane; e < count; e += kWarp, pw.next()) dot += v[pw.row() - w] * col[pw.row()];
      const T td = tj * (cj + warp_sum(dot));
      if (lane == 0) col[j] = cj - td;
      pw = first;
#pragma unroll 4
      for (int e = lane; e < count; e += kWarp, pw.next()) col[pw.row()] -= td * v[pw.row() - w];
      __syncwarp();
    }
  }
  __syncthreads();
  for (int idx = threadIdx.x; idx < K * kTreeTileCols; idx += blockDim.x) {
    const int r = idx % K, j = idx / K;
    if (c0 + j < cols) c[stack_row(level, st, r, w) + (c0 + j) * ldc] = tile[idx];
  }
}

template <class T>
__global__ void to_tiles_kernel(const T* a, std::int64_t lda, std::int64_t rows, std::int64_t cols, int tc, T* tiles,
                                std::int64_t ldt) {
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < rows * cols;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = idx % rows, j = idx / rows;
    tiles[(j / tc) * ldt * tc + r * tc + j % tc] = a[r + j * lda];
  }
}

template <class T>
__global__ void from_tiles_kernel(const T* tiles, std::int64_t ldt, std::int64_t rows, std::int64_t cols, int tc, T* a,
                                  std::int64_t lda) {
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < rows * cols;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t r = idx % rows, j = idx / rows;
    a[r + j * lda] = tiles[(j / tc) * ldt * tc + r * tc + j % tc];
  }
}

template <class T>
__global__ void copy_upper_kernel(const T* a, std::int64_t lda, std::int64_t n, T* r, std::int64_t ldr) {
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < n * n;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = idx % n, j = idx / n;
    r[i + j * ldr] = i <= j ? a[i + j * lda] : T(0);
  }
}

template <class T>
__global__ void count_nonfinite_kernel(const T* a, std::int64_t lda, std::int64_t m, std::int64_t n,
                                       unsigned long long* count) {
  unsigned long long bad = 0;
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; idx < m * n;
       idx += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    if (!isfinite(a[idx % m + (idx / m) * lda])) ++bad;
  for (int off = kWarp / 2; off > 0; off >>= 1) bad += __shfl_xor_sync(0xffffffffu, bad, off);
  if (threadIdx.x % kWarp == 0 && bad) atomicAdd(count, bad);
}

// apply_qt_h's compiled shapes: the paper's 64×16 and 128×8, the brief's square and wider blocks,
// whole-width blocks for tall-skinny panels (anderson10 §IV.F), and 1024×16 for the narrowest
// (n ≤ 16: a million rows are ~1000 blocks, one wave, and a two-level tree).
#define GPUFACT_CAQR_SHAPES(X) \
  X(64, 16) X(128, 8) X(32, 32) X(128, 16) X(256, 16) X(256, 32) X(256, 64) X(256, 128) X(1024, 16)

// Shared memory of apply_qt_h per strategy (all dynamic: the wider shapes exceed 48 KiB).
template <class T, int BR, int BC>
std::size_t apply_h_smem_bytes(QtReduction r) {
  const std::size_t v = static_cast<std::size_t>(BR) * BC;
  switch (r) {
    case QtReduction::smem_parallel: return (v + BC + BR) * sizeof(T);
    case QtReduction::smem_combined: return (3 * v + BC) * sizeof(T);
    default: return (v + BC + 2 * static_cast<std::size_t>(RegisterLayout<BR, BC>::partials) * BC) * sizeof(T);
  }
}

template <class T, int BR, int BC>
void apply_h_shape(const T* panel, std::int64_t lda, std::int64_t rows, int width, const T* tau, int tau_ld, T* c,
                   std::int64_t ldc, std::int64_t cols, bool transpose, QtReduction reduction, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((rows + BR - 1) / BR), static_cast<unsigned>((cols + BC - 1) / BC));
  const std::size_t bytes = apply_h_smem_bytes<T, BR, BC>(reduction);
  switch (reduction) {
    case QtReduction::smem_parallel:
      return launch_checked<apply_h_smem_parallel<T, BR, BC>>("apply_qt_h smem_parallel", grid, BR, bytes, stream,
                                                               panel, lda, rows, width, tau, tau_ld, c, ldc, cols,
                                                               transpose);
    case QtReduction::register_serial:
      return launch_checked<apply_h_register_serial<T, BR, BC, false>>(
          "apply_qt_h register_serial", grid, RegisterLayout<BR, BC>::threads, bytes, stream, panel, lda, rows, width,
          tau, tau_ld, c, ldc, cols, transpose);
    case QtReduction::register_serial_transposed:
      return launch_checked<apply_h_register_serial<T, BR, BC, true>>(
          "apply_qt_h register_serial_transposed", grid, RegisterLayout<BR, BC>::threads, bytes, stream, panel, lda,
          rows, width, tau, tau_ld, c, ldc, cols, transpose);
    case QtReduction::smem_combined:
      return launch_checked<apply_h_smem_combined<T, BR, BC>>("apply_qt_h smem_combined", grid,
                                                               CombinedLayout<BR, BC>::threads, bytes, stream, panel,
                                                               lda, rows, width, tau, tau_ld, c, ldc, cols, transpose);
  }
}

// apply_qt_tree: the reflectors below R_0 ((K − w) × w), the K-row tile, the w taus.
std::size_t tree_apply_smem_words(std::size_t stack_rows, int width) {
  const auto w = static_cast<std::size_t>(width);
  return (stack_rows - w) * w + stack_rows * kTreeTileCols + w;
}

std::size_t factor_smem_bytes(int block_rows, int width, std::size_t elem) {
  return static_cast<std::size_t>(block_rows) * width * elem;
}
std::size_t tree_stack_rows(int block_rows, int block_cols, int fan_in) {
  if (fan_in < 2) fan_in = block_rows / block_cols >= 2 ? block_rows / block_cols : 2;
  return static_cast<std::size_t>(fan_in) * block_cols;
}

// Blocked kernels' shared memory: the matrix (block, stack or C tile + V chunk), then T, G and W.
std::size_t wy_extra_words(int w_cols) {
  return 2 * static_cast<std::size_t>(kWyCols) * kWyCols + static_cast<std::size_t>(kWyCols) * w_cols;
}
std::size_t factor_wy_smem_bytes(int block_rows, int width, std::size_t elem) {
  return (static_cast<std::size_t>(block_rows) * width + wy_extra_words(width)) * elem;
}
std::size_t tree_wy_smem_bytes(int fan_in, int width, std::size_t elem) {
  return (static_cast<std::size_t>(fan_in) * width * width + wy_extra_words(width)) * elem;
}
std::size_t apply_h_wy_smem_bytes(int block_rows, std::size_t elem) {
  return (static_cast<std::size_t>(block_rows) * (kWyTileCols + kWyCols) + wy_extra_words(kWyTileCols)) * elem;
}

}  // namespace

const char* to_string(QtReduction r) {
  switch (r) {
    case QtReduction::smem_parallel: return "smem_parallel";
    case QtReduction::register_serial: return "register_serial";
    case QtReduction::smem_combined: return "smem_combined";
    case QtReduction::register_serial_transposed: return "register_serial_transposed";
  }
  return "unknown";
}

std::string caqr_compiled_shapes() {
  std::string out;
#define GPUFACT_NAME(R, C) out += (out.empty() ? "" : ",") + std::to_string(R) + "x" + std::to_string(C);
  GPUFACT_CAQR_SHAPES(GPUFACT_NAME)
#undef GPUFACT_NAME
  return out;
}

template <class T>
std::string caqr_shape_problem(int block_rows, int block_cols, QtReduction r, int fan_in, int width) {
  std::size_t h_bytes = 0;
#define GPUFACT_MATCH(R, C) \
  if (block_rows == R && block_cols == C) h_bytes = apply_h_smem_bytes<T, R, C>(r);
  GPUFACT_CAQR_SHAPES(GPUFACT_MATCH)
#undef GPUFACT_MATCH
  const std::string shape = std::to_string(block_rows) + "x" + std::to_string(block_cols);
  if (h_bytes == 0) return "block shape " + shape + " is not compiled (compiled: " + caqr_compiled_shapes() + ")";
  const auto limit = static_cast<std::size_t>(current_device_shared_optin());
  // The widest panel decides the factor and tree kernels' shared memory.
  const int w = width > 0 && width < block_cols ? width : block_cols;
  const std::size_t f = tree_stack_rows(block_rows, block_cols, fan_in) / static_cast<std::size_t>(block_cols);
  const std::size_t stack = f * static_cast<std::size_t>(w);
  const std::size_t factor = factor_smem_bytes(block_rows, w, sizeof(T));
  const std::size_t tree = stack * w * sizeof(T);
  const std::size_t tree_apply = tree_apply_smem_words(stack, w) * sizeof(T);
  const std::size_t need = std::max({factor, tree, tree_apply, h_bytes});
  if (need > limit)
    return "block shape " + shape + " (tree fan-in " + std::to_string(f) + ", panels " + std::to_string(w) +
           " wide) needs " +
           std::to_string(need) + " bytes of shared memory per block in " +
           (sizeof(T) == 4 ? "FP32" : "FP64") + "; the device allows " + std::to_string(limit);
  return {};
}

template <class T>
void caqr_prepare_kernels(int block_rows, int block_cols) {
  configure_once<factor_kernel<T>>();
  configure_once<factor_tree_kernel<T>>();
  configure_once<apply_tree_kernel<T>>();
#define GPUFACT_PREPARE(R, C)                                   \
  if (block_rows == R && block_cols == C) {                     \
    configure_once<apply_h_smem_parallel<T, R, C>>();           \
    configure_once<apply_h_register_serial<T, R, C, false>>();  \
    configure_once<apply_h_register_serial<T, R, C, true>>();   \
    configure_once<apply_h_smem_combined<T, R, C>>();           \
  }
  GPUFACT_CAQR_SHAPES(GPUFACT_PREPARE)
#undef GPUFACT_PREPARE
}

template <class T>
void launch_caqr_factor(T* panel, std::int64_t lda, std::int64_t rows, int width, int block_rows, T* tau, int tau_ld,
                        cudaStream_t stream) {
  if (rows < 1 || width < 1 || block_rows < 1 || width > tau_ld)
    throw std::invalid_argument("launch_caqr_factor: needs rows, width, block_rows >= 1 and width <= tau_ld");
  const auto blocks = static_cast<unsigned>((rows + block_rows - 1) / block_rows);
  launch_checked<factor_kernel<T>>("factor", blocks, kFactorThreads, factor_smem_bytes(block_rows, width, sizeof(T)),
                                   stream, panel, lda, rows, width, block_rows, tau, tau_ld);
}

template <class T>
void launch_caqr_factor_tree(T* panel, std::int64_t lda, int width, CaqrTreeLevelArgs level, T* tau, int tau_ld,
                             cudaStream_t stream) {
  if (level.children < 2 || level.fan_in < 2 || width < 1 || width > tau_ld)
    throw std::invalid_argument("launch_caqr_factor_tree: needs >= 2 children, fan_in >= 2, 1 <= width <= tau_ld");
  const std::size_t bytes = static_cast<std::size_t>(level.fan_in) * width * width * sizeof(T);
  const auto nodes = static_cast<unsigned>((level.children + level.fan_in - 1) / level.fan_in);
  launch_checked<factor_tree_kernel<T>>("factor_tree", nodes, kTreeThreads, bytes, stream, panel, lda, width, level,
                                        tau, tau_ld);
}

template <class T>
void launch_caqr_apply_qt_h(const T* panel, std::int64_t lda, std::int64_t rows, int width, int block_rows,
                            int block_cols, const T* tau, int tau_ld, T* c, std::int64_t ldc, std::int64_t cols,
                            bool transpose, QtReduction reduction, cudaStream_t stream) {
  if (cols <= 0 || rows <= 0) return;
  if (width < 1 || width > block_cols || tau_ld < width)
    throw std::invalid_argument("launch_caqr_apply_qt_h: needs 1 <= width <= block_cols and tau_ld >= width");
#define GPUFACT_DISPATCH(R, C)                                                                                   \
  if (block_rows == R && block_cols == C)                                                                        \
    return apply_h_shape<T, R, C>(panel, lda, rows, width, tau, tau_ld, c, ldc, cols, transpose, reduction, stream);
  GPUFACT_CAQR_SHAPES(GPUFACT_DISPATCH)
#undef GPUFACT_DISPATCH
  throw std::invalid_argument("launch_caqr_apply_qt_h: block shape " + std::to_string(block_rows) + "x" +
                              std::to_string(block_cols) + " is not compiled (compiled: " + caqr_compiled_shapes() + ")");
}

template <class T>
void launch_caqr_apply_qt_tree(const T* panel, std::int64_t lda, int width, CaqrTreeLevelArgs level, const T* tau,
                               int tau_ld, T* c, std::int64_t ldc, std::int64_t cols, bool transpose,
                               cudaStream_t stream) {
  if (cols <= 0) return;
  if (level.children < 2 || level.fan_in < 2 || width < 1 || width > tau_ld)
    throw std::invalid_argument("launch_caqr_apply_qt_tree: needs >= 2 children, fan_in >= 2, 1 <= width <= tau_ld");
  const std::size_t stack = static_cast<std::size_t>(level.fan_in) * width;
  const std::size_t bytes = tree_apply_smem_words(stack, width) * sizeof(T);
  const dim3 grid(static_cast<unsigned>((level.children + level.fan_in - 1) / level.fan_in),
                  static_cast<unsigned>((cols + kTreeTileCols - 1) / kTreeTileCols));
  launch_checked<apply_tree_kernel<T>>("apply_qt_tree", grid, kTreeApplyThreads, bytes, stream, panel, lda, width,
                                       level, tau, tau_ld, c, ldc, cols, transpose);
}

template <class T>
std::string caqr_wy_shape_problem(int block_rows, int block_cols, int fan_in, int width) {
  const std::string shape = std::to_string(block_rows) + "x" + std::to_string(block_cols);
  if (block_cols < 1 || block_rows < block_cols) return "block shape " + shape + " needs block_rows >= block_cols >= 1";
  const int w = width > 0 && width < block_cols ? width : block_cols;
  const int f = static_cast<int>(tree_stack_rows(block_rows, block_cols, fan_in) / static_cast<std::size_t>(block_cols));
  const std::size_t need = std::max({factor_wy_smem_bytes(block_rows, w, sizeof(T)),
                                     tree_wy_smem_bytes(f, w, sizeof(T)), apply_h_wy_smem_bytes(block_rows, sizeof(T))});
  const auto limit = static_cast<std::size_t>(current_device_shared_optin());
  if (need > limit)
    return "blocked kernels for " + shape + " (tree fan-in " + std::to_string(f) + ", panels " + std::to_string(w) +
           " wide) need " + std::to_string(need) + " bytes of shared memory per block in " +
           (sizeof(T) == 4 ? "FP32" : "FP64") + "; the device allows " + std::to_string(limit);
  return {};
}

template <class T>
void caqr_prepare_wy_kernels() {
  configure_once<factor_wy_kernel<T>>();
  configure_once<factor_tree_wy_kernel<T>>();
  configure_once<apply_h_wy_kernel<T>>();
}

template <class T>
void launch_caqr_factor_wy(T* panel, std::int64_t lda, std::int64_t rows, int width, int block_rows, T* tau,
                           int tau_ld, cudaStream_t stream) {
  if (rows < 1 || width < 1 || block_rows < 1 || width > tau_ld)
    throw std::invalid_argument("launch_caqr_factor_wy: needs rows, width, block_rows >= 1 and width <= tau_ld");
  const auto blocks = static_cast<unsigned>((rows + block_rows - 1) / block_rows);
  launch_checked<factor_wy_kernel<T>>("factor (blocked)", blocks, kWyFactorThreads,
                                      factor_wy_smem_bytes(block_rows, width, sizeof(T)), stream, panel, lda, rows,
                                      width, block_rows, tau, tau_ld);
}

template <class T>
void launch_caqr_factor_tree_wy(T* panel, std::int64_t lda, int width, CaqrTreeLevelArgs level, T* tau, int tau_ld,
                                cudaStream_t stream) {
  if (level.children < 2 || level.fan_in < 2 || width < 1 || width > tau_ld)
    throw std::invalid_argument("launch_caqr_factor_tree_wy: needs >= 2 children, fan_in >= 2, 1 <= width <= tau_ld");
  const auto nodes = static_cast<unsigned>((level.children + level.fan_in - 1) / level.fan_in);
  launch_checked<factor_tree_wy_kernel<T>>("factor_tree (blocked)", nodes, kWyFactorThreads,
                                           tree_wy_smem_bytes(level.fan_in, width, sizeof(T)), stream, panel, lda,
                                           width, level, tau, tau_ld);
}

template <class T>
void launch_caqr_apply_qt_h_wy(const T* panel, std::int64_t lda, std::int64_t rows, int width, int block_rows,
                               const T* tau, int tau_ld, T* c, std::int64_t ldc, std::int64_t cols, bool transpose,
                               cudaStream_t stream) {
  if (cols <= 0 || rows <= 0) return;
  if (width < 1 || block_rows < 1 || tau_ld < width)
    throw std::invalid_argument("launch_caqr_apply_qt_h_wy: needs width, block_rows >= 1 and tau_ld >= width");
  const dim3 grid(static_cast<unsigned>((rows + block_rows - 1) / block_rows),
                  static_cast<unsigned>((cols + kWyTileCols - 1) / kWyTileCols));
  launch_checked<apply_h_wy_kernel<T>>("apply_qt_h (blocked)", grid, kWyApplyThreads,
                                       apply_h_wy_smem_bytes(block_rows, sizeof(T)), stream, panel, lda, rows, width,
                                       block_rows, tau, tau_ld, c, ldc, cols, transpose);
}

template <class T>
void launch_caqr_panel_transpose(const T* a, std::int64_t lda, std::int64_t rows, std::int64_t cols, int tile_cols,
                                 T* tiles, std::int64_t ldt, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  to_tiles_kernel<T><<<grid_for(rows * cols, 256), 256, 0, stream>>>(a, lda, rows, cols, tile_cols, tiles, ldt);
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void launch_caqr_panel_untranspose(const T* tiles, std::int64_t ldt, std::int64_t rows, std::int64_t cols,
                                   int tile_cols, T* a, std::int64_t lda, cudaStream_t stream) {
  if (rows <= 0 || cols <= 0) return;
  from_tiles_kernel<T><<<grid_for(rows * cols, 256), 256, 0, stream>>>(tiles, ldt, rows, cols, tile_cols, a, lda);
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void launch_set_identity(T* q, std::int64_t ldq, std::int64_t m, std::int64_t n, cudaStream_t stream) {
  launch_set_identity_columns(q, ldq, m, 0, n, stream);
}

template <class T>
void launch_copy_upper_triangle(const T* a, std::int64_t lda, std::int64_t n, T* r, std::int64_t ldr,
                                cudaStream_t stream) {
  if (n <= 0) return;
  copy_upper_kernel<T><<<grid_for(n * n, 256), 256, 0, stream>>>(a, lda, n, r, ldr);
  GPUFACT_CHECK_LAUNCH();
}

template <class T>
void launch_count_nonfinite(const T* a, std::int64_t lda, std::int64_t m, std::int64_t n, unsigned long long* count,
                            cudaStream_t stream) {
  if (m <= 0 || n <= 0) return;
  count_nonfinite_kernel<T><<<std::min(grid_for(m * n, 256), 1024u), 256, 0, stream>>>(a, lda, m, n, count);
  GPUFACT_CHECK_LAUNCH();
}

#define GPUFACT_INSTANTIATE(T)                                                                                     \
  template std::string caqr_shape_problem<T>(int, int, QtReduction, int, int);                                     \
  template void caqr_prepare_kernels<T>(int, int);                                                                 \
  template void launch_caqr_factor<T>(T*, std::int64_t, std::int64_t, int, int, T*, int, cudaStream_t);            \
  template void launch_caqr_factor_tree<T>(T*, std::int64_t, int, CaqrTreeLevelArgs, T*, int, cudaStream_t);       \
  template void launch_caqr_apply_qt_h<T>(const T*, std::int64_t, std::int64_t, int, int, int, const T*, int, T*,  \
                                          std::int64_t, std::int64_t, bool, QtReduction, cudaStream_t);            \
  template void launch_caqr_apply_qt_tree<T>(const T*, std::int64_t, int, CaqrTreeLevelArgs, const T*, int, T*,    \
                                             std::int64_t, std::int64_t, bool, cudaStream_t);                      \
  template std::string caqr_wy_shape_problem<T>(int, int, int, int);                                              \
  template void caqr_prepare_wy_kernels<T>();                                                                      \
  template void launch_caqr_factor_wy<T>(T*, std::int64_t, std::int64_t, int, int, T*, int, cudaStream_t);         \
  template void launch_caqr_factor_tree_wy<T>(T*, std::int64_t, int, CaqrTreeLevelArgs, T*, int, cudaStream_t);    \
  template void launch_caqr_apply_qt_h_wy<T>(const T*, std::int64_t, std::int64_t, int, int, const T*, int, T*,    \
                                             std::int64_t, std::int64_t, bool, cudaStream_t);                      \
  template void launch_caqr_panel_transpose<T>(const T*, std::int64_t, std::int64_t, std::int64_t, int, T*,        \
                                               std::int64_t, cudaStream_t);                                        \
  template void launch_caqr_panel_untranspose<T>(const T*, std::int64_t, std::int64_t, std::int64_t, int, T*,      \
                                                 std::int64_t, cudaStream_t);                                      \
  template void launch_set_identity<T>(T*, std::int64_t, std::int64_t, std::int64_t, cudaStream_t);                \
  template void launch_copy_upper_triangle<T>(const T*, std::int64_t, std::int64_t, T*, std::int64_t, cudaStream_t); \
  template void launch_count_nonfinite<T>(const T*, std::int64_t, std::int64_t, std::int64_t, unsigned long long*, \
                                          cudaStream_t);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact::kernels
