#include "kernels/qr/panel_cluster.cuh"

#include "core/cuda/check.hpp"
#include "kernels/common/cluster_push.cuh"
#include "kernels/common/phase_clock.cuh"
#include "kernels/common/vec16.cuh"
#include "kernels/common/warp_butterfly.cuh"

#include <cooperative_groups.h>

#include <climits>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMinRows = 64;  // fewest rows worth a CTA of their own
constexpr int kChunk = 16;    // columns per butterfly of the column sums
static_assert(kMaxCluster <= 2 * kWarps, "each warp pushes to at most two CTAs");

__host__ __device__ constexpr int pow2_at_least(int k) { return k <= 1 ? 1 : 2 * pow2_at_least((k + 1) / 2); }

// The warp's sums Σ x·a_k for slots C0..W, 16 at a time, into `out` (by slot): a butterfly over
// the chunk's slots padded to a power of two, then plain sums over the lanes that share a slot
// (16 slots cost 16 shuffles, as 32 cost 32, in fewer registers). Chunks wholly past the panel's
// last column (slot `live` on) are skipped: the branch is the same for the whole CTA.
template <class T, int W, int RPT, int C0>
__device__ __forceinline__ void column_sums(const T (&x)[RPT], const T (&v)[RPT][W], T* out, int lane, int live) {
  if (C0 >= live) return;
  constexpr int K = W - C0 < kChunk ? W - C0 : kChunk;
  constexpr int N = pow2_at_least(K);
  constexpr int shift = N == 16 ? 1 : (N == 8 ? 2 : (N == 4 ? 3 : (N == 2 ? 4 : 5)));
  T q[N];
#pragma unroll
  for (int c = 0; c < N; ++c) {
    q[c] = T(0);
    if (c < K) {
#pragma unroll
      for (int i = 0; i < RPT; ++i) q[c] += x[i] * v[i][C0 + c];
    }
  }
  butterfly<T, N, N / 2>(q, lane);
  T y = q[0];
#pragma unroll
  for (int offset = (1 << shift) >> 1; offset >= 1; offset >>= 1) y += __shfl_xor_sync(0xffffffffu, y, offset);
  const int c = lane >> shift;
  if ((lane & ((1 << shift) - 1)) == 0 && c < K) out[C0 + c] = y;
  if constexpr (C0 + kChunk < W) column_sums<T, W, RPT, C0 + kChunk>(x, v, out, lane, live);
}

// Shared memory of a CTA: per column parity, each warp's column sums and the staged row j (by
// slot: slot k holds column j + k), what every CTA pushed (its sums, and row j from the CTA that
// holds it), and per warp the update coefficients τ·wₖ read back by every lane.
template <class T, int W>
struct Scratch {
  unsigned long long bars[2];
  alignas(16) T partial[2][kWarps][W];
  alignas(16) T row_j[2][W];
  alignas(16) T received[2][kMaxCluster][W];
  alignas(16) T received_row_j[2][W];
  alignas(16) T coef[kWarps][W];
};

using Clock = PhaseClock<kQrPanelPhases>;

struct Panel {
  int b, R, C, g, row0;
  // Bytes every CTA receives per column: each CTA's W sums and row j's W slots.
  template <class T, int W>
  __device__ unsigned column_bytes() const {
    return static_cast<unsigned>((C + 1) * W * sizeof(T));
  }
};

// Column j of the panel on this thread's rows (row0 + t + i·kThreads, i < RPT). The register block
// rotates: slot 0 holds column j, slot k column j + k, so the loop over columns is a runtime loop
// over one body with every register index fixed. Slots past the panel's last column (from
// `live` = b − j on) hold no panel data: their sums are not formed, so what they carry is never
// stored and never enters a live slot's arithmetic (every slot is summed and updated apart). Unrolled over the
// columns the kernel was hundreds of kilobytes of straight-line code that a cold L2 (after a
// trailing update) had to feed from memory: 2.3 times slower than with the code cached.
template <class T, int W, int RPT>
__device__ __forceinline__ void factor_column(const Panel& p, Scratch<T, W>& s, T (&v)[RPT][W], T* tau, int j,
                                              Clock& clock) {
  constexpr int kVec = 16 / sizeof(T);  // entries per 16-byte vector
  constexpr int kVectors = W / kVec;
  const int parity = j & 1;
  const int t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5;
  // x: this thread's entries of column j below row j.
  T x[RPT];
#pragma unroll
  for (int i = 0; i < RPT; ++i) x[i] = p.row0 + t + i * kThreads > j ? v[i][0] : T(0);

  // Σ x·a_k over the warp's rows for every slot (slot 0: σ = ‖x‖²) into the warp's partial sums.
  const int live = p.b - j;  // slots that hold panel columns
  column_sums<T, W, RPT, 0>(x, v, s.partial[parity][warp], lane, live);
  // Row j, staged by the thread that holds it (its entries selected, not indexed, so v stays in
  // registers).
  const int holder = j - p.row0;  // its index in this CTA
  const bool holds_row_j = holder >= 0 && holder < p.R;
  if (holds_row_j && holder % kThreads == t) {
    const int which = holder / kThreads;
#pragma unroll
    for (int c = 0; c < W; c += kVec) {
      T q[kVec];
#pragma unroll
      for (int e = 0; e < kVec; ++e) {
        q[e] = v[0][c + e];
#pragma unroll
        for (int i = 1; i < RPT; ++i)
          if (which == i) q[e] = v[i][c + e];
      }
      store_vec(q, &s.row_j[parity][c]);
    }
  }
  __syncthreads();
  clock.lap(kQrPanelSums);

  // Push the CTA's sums (and row j, from its holder) to CTAs warp and warp + kWarps, a 16-byte
  // vector of slots per lane.
  if (lane < kVectors) {
    const int c = kVec * lane;
    T sum[kVec], part[kVec], row[kVec];
    load_vec(&s.partial[parity][0][c], sum);
#pragma unroll
    for (int w = 1; w < kWarps; ++w) {
      load_vec(&s.partial[parity][w][c], part);
#pragma unroll
      for (int e = 0; e < kVec; ++e) sum[e] += part[e];
    }
    if (holds_row_j) load_vec(&s.row_j[parity][c], row);
#pragma unroll
    for (int d = warp; d < kMaxCluster; d += kWarps) {
      if (d >= p.C) break;
      const unsigned bar = in_cta(smem_u32(&s.bars[parity]), d);
      push_vec(in_cta(smem_u32(&s.received[parity][p.g][c]), d), sum, bar);
      if (holds_row_j) push_vec(in_cta(smem_u32(&s.received_row_j[parity][c]), d), row, bar);
    }
  }
  clock.lap(kQrPanelPush);

  // Every CTA's sums and row j are here: arm this parity for column j + 2 (no CTA pushes that
  // before it has this CTA's j + 1), then form the reflector exactly as every other CTA does
  // (the same sums in the same order).
  barrier_wait(smem_u32(&s.bars[parity]), static_cast<unsigned>(j >> 1) & 1u);
  if (t == 0 && j + 2 < p.b) barrier_expect(smem_u32(&s.bars[parity]), p.column_bytes<T, W>());
  clock.lap(kQrPanelWait);
  T total[kVec] = {}, row[kVec] = {};
  if (lane < kVectors) {
    const int c = kVec * lane;
    // Every sender's slot is read, so the loads issue together; slots past the cluster (stale
    // shared memory) are selected away, not multiplied.
#pragma unroll
    for (int g = 0; g < kMaxCluster; ++g) {
      T part[kVec];
      load_vec(&s.received[parity][g][c], part);
#pragma unroll
      for (int e = 0; e < kVec; ++e) total[e] += g < p.C ? part[e] : T(0);
    }
    load_vec(&s.received_row_j[parity][c], row);
  }
  const T sigma = __shfl_sync(0xffffffffu, total[0], 0);
  const T alpha = __shfl_sync(0xffffffffu, row[0], 0);
  T beta = alpha, tau_j = T(0), scale = T(0);
  if (sigma != T(0)) {
    beta = -copysign(sqrt(alpha * alpha + sigma), alpha);
    tau_j = (beta - alpha) / beta;
    scale = T(1) / (alpha - beta);
  }
  if (lane < kVectors) {
    T coef[kVec];
#pragma unroll
    for (int e = 0; e < kVec; ++e) coef[e] = tau_j * (row[e] + total[e] * scale);
    store_vec(coef, &s.coef[warp][kVec * lane]);
  }
  __syncwarp();
  if (p.g == 0 && t == 0) tau[j] = tau_j;
  clock.lap(kQrPanelReflector);

  // a_k −= τ·wₖ·v on this thread's rows; v = x/(α − β) below row j, 1 on it.
  T y[RPT];
#pragma unroll
  for (int i = 0; i < RPT; ++i) {
    const int row_i = p.row0 + t + i * kThreads;
    y[i] = row_i > j ? x[i] * scale : (row_i == j ? T(1) : T(0));
  }
#pragma unroll
  for (int k = 1; k < W; ++k) {
    const T c = s.coef[warp][k];
#pragma unroll
    for (int i = 0; i < RPT; ++i) v[i][k] -= c * y[i];
  }
#pragma unroll
  for (int i = 0; i < RPT; ++i) {
    const int row_i = p.row0 + t + i * kThreads;
    if (row_i > j) v[i][0] = y[i];
    if (row_i == j) v[i][0] = beta;
  }
  clock.lap(kQrPanelUpdate);
}

template <class T, int W, int RPT>
__global__ void __launch_bounds__(kThreads, 1)
    qr_panel_cluster_kernel(T* __restrict__ a, std::int64_t lda, int m, int b, int R, T* __restrict__ tau,
                            unsigned long long* __restrict__ profile) {
  __shared__ Scratch<T, W> s;
  Clock clock(profile);
  cg::cluster_group cluster = cg::this_cluster();
  Panel p{};
  p.b = b;
  p.R = R;
  p.C = static_cast<int>(cluster.num_blocks());
  p.g = static_cast<int>(cluster.block_rank());
  p.row0 = p.g * R;
  const int t = static_cast<int>(threadIdx.x);
  const int rows = max(0, min(R, m - p.row0));

  T v[RPT][W];
#pragma unroll
  for (int i = 0; i < RPT; ++i) {
    const int r = t + i * kThreads;
#pragma unroll
    for (int k = 0; k < W; ++k) v[i][k] = r < rows && k < b ? a[p.row0 + r + k * lda] : T(0);
  }
  if (t == 0) {
    barrier_init(smem_u32(&s.bars[0]));
    barrier_init(smem_u32(&s.bars[1]));
    barrier_expect(smem_u32(&s.bars[0]), p.column_bytes<T, W>());
    if (b > 1) barrier_expect(smem_u32(&s.bars[1]), p.column_bytes<T, W>());
    barrier_init_fence();
  }
  cluster.sync();  // every CTA running, its barriers armed, before anything is pushed to it
  clock.lap(kQrPanelLoad);

#pragma unroll 1
  for (int j = 0; j < b; ++j) {
    factor_column<T, W, RPT>(p, s, v, tau, j, clock);
    // Column j is final: out to memory, and every slot moves down one.
#pragma unroll
    for (int i = 0; i < RPT; ++i) {
      const int r = t + i * kThreads;
      if (r < rows) a[p.row0 + r + static_cast<std::int64_t>(j) * lda] = v[i][0];
#pragma unroll
      for (int k = 0; k + 1 < W; ++k) v[i][k] = v[i][k + 1];
      v[i][W - 1] = T(0);
    }
    clock.lap(kQrPanelStore);
  }
  cluster.sync();  // no CTA leaves while another could still push into it
  clock.finish();
}

// The register classes built: (width, rows per thread), narrowest width first, then fewest rows;
// at most 128 32-bit registers of panel per thread.
struct RegisterClass {
  int width, rows_per_thread;
};
constexpr RegisterClass kClassesFp32[] = {{16, 8}, {32, 1}, {32, 4}, {64, 1}, {64, 2}};
constexpr RegisterClass kClassesFp64[] = {{16, 4}, {32, 1}, {32, 2}, {64, 1}};

template <auto Kernel>
void allow_large_clusters() {
  static const bool done = [] {
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    return true;
  }();
  (void)done;
}

// The largest cluster the current device schedules (16, else the portable 8), read once.
int max_cluster() {
  static const int most = [] {
    constexpr auto kernel = &qr_panel_cluster_kernel<float, 64, 2>;
    allow_large_clusters<kernel>();
    cudaLaunchAttribute attr{};
    const cudaLaunchConfig_t cfg = cluster_launch_config(kMaxCluster, kThreads, 0, nullptr, &attr);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess) {
      (void)cudaGetLastError();
      clusters = 0;
    }
    return clusters > 0 ? kMaxCluster : 8;
  }();
  return most;
}

template <class T, int W, int RPT>
void launch_class(const QrPanelClusterShape& shape, T* a, std::int64_t lda, std::int64_t m, std::int64_t b, T* tau,
                  cudaStream_t stream, unsigned long long* profile) {
  constexpr auto kernel = &qr_panel_cluster_kernel<T, W, RPT>;
  allow_large_clusters<kernel>();
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t cfg = cluster_launch_config(shape.ctas, kThreads, 0, stream, &attr);
  GPUFACT_CUDA_CHECK(
      cudaLaunchKernelEx(&cfg, kernel, a, lda, static_cast<int>(m), static_cast<int>(b), shape.rows, tau, profile));
}

template <class T>
void panel_cluster(T* a, std::int64_t lda, std::int64_t m, std::int64_t b, T* tau, cudaStream_t stream,
                   unsigned long long* profile) {
  check_panel_arguments("launch_qr_panel_cluster", m, b, kQrPanelClusterMaxWidth, lda);
  const QrPanelClusterShape shape = qr_panel_cluster_shape(m, b, sizeof(T));
  if (shape.ctas == 0)
    throw std::invalid_argument("launch_qr_panel_cluster: an " + std::to_string(m) + " x " + std::to_string(b) +
                                " panel does not fit the registers of a cluster of " + std::to_string(max_cluster()) +
                                " CTAs (qr_panel_cluster_fit_width)");
  const int w = shape.width, rpt = shape.rows_per_thread;
  if constexpr (sizeof(T) == 4) {
    if (w == 16) return launch_class<T, 16, 8>(shape, a, lda, m, b, tau, stream, profile);
    if (w == 32 && rpt == 1) return launch_class<T, 32, 1>(shape, a, lda, m, b, tau, stream, profile);
    if (w == 32) return launch_class<T, 32, 4>(shape, a, lda, m, b, tau, stream, profile);
    if (rpt == 1) return launch_class<T, 64, 1>(shape, a, lda, m, b, tau, stream, profile);
    return launch_class<T, 64, 2>(shape, a, lda, m, b, tau, stream, profile);
  } else {
    if (w == 16) return launch_class<T, 16, 4>(shape, a, lda, m, b, tau, stream, profile);
    if (w == 32 && rpt == 1) return launch_class<T, 32, 1>(shape, a, lda, m, b, tau, stream, profile);
    if (w == 32) return launch_class<T, 32, 2>(shape, a, lda, m, b, tau, stream, profile);
    return launch_class<T, 64, 1>(shape, a, lda, m, b, tau, stream, profile);
  }
}

}  // namespace

QrPanelClusterShape qr_panel_cluster_shape(std::int64_t m, std::int64_t b, std::size_t element_bytes) {
  if (m < 1 || b < 1 || b > kQrPanelClusterMaxWidth || m < b || m > INT_MAX / 2) return {};
  const int most = max_cluster();
  int ctas = 1;
  while (ctas < most && static_cast<std::int64_t>(ctas) * kMinRows < m) ctas *= 2;
  const auto rows = static_cast<int>((m + ctas - 1) / ctas);
  const int need = (rows + kThreads - 1) / kThreads;
  const auto pick = [&](const auto& classes) -> QrPanelClusterShape {
    for (const RegisterClass& c : classes)
      if (c.width >= b && c.rows_per_thread >= need) return {ctas, rows, c.width, c.rows_per_thread};
    return {};
  };
  return element_bytes == 4 ? pick(kClassesFp32) : pick(kClassesFp64);
}

std::int64_t qr_panel_cluster_fit_width(std::int64_t m, std::int64_t b, std::size_t element_bytes) {
  for (std::int64_t w : {64, 32, 16})
    if (w <= b && qr_panel_cluster_shape(m, w, element_bytes).ctas > 0) return w;
  if (b < 16 && qr_panel_cluster_shape(m, b, element_bytes).ctas > 0) return b;
  return 0;
}

void launch_qr_panel_cluster(float* a, std::int64_t lda, std::int64_t m, std::int64_t b, float* tau,
                             cudaStream_t stream, unsigned long long* profile) {
  panel_cluster(a, lda, m, b, tau, stream, profile);
}
void launch_qr_panel_cluster(double* a, std::int64_t lda, std::int64_t m, std::int64_t b, double* tau,
                             cudaStream_t stream, unsigned long long* profile) {
  panel_cluster(a, lda, m, b, tau, stream, profile);
}

}  // namespace gpufact::kernels
