#include "kernels/lu/panel_coop.cuh"

#include "core/cuda/check.hpp"

#include <cooperative_groups.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {
namespace {

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kMaxCluster = 16;
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

// Largest value, ties to the lower row; every lane ends with the warp's winner.
template <class T>
__device__ __forceinline__ void warp_argmax(T& v, unsigned& row, int& owner) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const T ov = __shfl_xor_sync(0xffffffffu, v, o);
    const unsigned orow = __shfl_xor_sync(0xffffffffu, row, o);
    const int oowner = __shfl_xor_sync(0xffffffffu, owner, o);
    if (ov > v || (ov == v && orow < row)) v = ov, row = orow, owner = oowner;
  }
}

// Shared-memory addresses, the transaction barrier, and remote asynchronous stores (sm_90).
__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ unsigned in_cta(unsigned addr, int cta) {  // the same address in CTA `cta`
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(cta));
  return r;
}
__device__ __forceinline__ void barrier_init(unsigned bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void barrier_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void barrier_wait(unsigned bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (done == 0);
}
__device__ __forceinline__ void push(unsigned addr, unsigned v, unsigned bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];" ::"r"(addr), "r"(v),
               "r"(bar)
               : "memory");
}
__device__ __forceinline__ void push(unsigned addr, float v, unsigned bar) { push(addr, __float_as_uint(v), bar); }
__device__ __forceinline__ void push(unsigned addr, double v, unsigned bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b64 [%0], %1, [%2];" ::"r"(addr),
               "l"(__double_as_longlong(v)), "r"(bar)
               : "memory");
}

// Dynamic shared memory of one CTA: its rows (column-major, leading dimension rows | 1 so a row's
// columns fall in distinct banks), per column the pivot, the candidate rows every CTA pushed
// (per column parity and sender, columns j..b), per row the column it was chosen for (-1 while
// a candidate), per column the chosen row, and the replay's two maps.
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
// columns j+1..b each read once per thread from prow (the pivot row's columns j..b).
template <class T, int N>
__device__ __forceinline__ void update_rows(T* S, int lds, int j, int width, int rows, const int* chosen, const T* prow,
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
  for (int k = 1; k < width; ++k, x += lds) {
    const T p = prow[k];
#pragma unroll
    for (int i = 0; i < N; ++i)
      if (l[i] != T(0)) x[i * kThreads] -= l[i] * p;
  }
}

template <class T>
__global__ void __launch_bounds__(kThreads, 1)
    lu_panel_coop_kernel(T* __restrict__ a, std::int64_t lda, int m, int b, int R, std::int64_t* __restrict__ ipiv,
                         int* __restrict__ info, unsigned long long* __restrict__ profile) {
  extern __shared__ __align__(16) unsigned char smem[];
  __shared__ __align__(8) unsigned long long bars[2];  // per column parity: every CTA's candidate arrived
  __shared__ unsigned received_row[2][kMaxCluster];    // per parity and sender: its candidate's row
  __shared__ T part_value[2][kWarps];                  // per parity and warp: its candidate |a|
  __shared__ unsigned part_row[2][kWarps];
  cg::cluster_group cluster = cg::this_cluster();
  const int C = static_cast<int>(cluster.num_blocks()), g = static_cast<int>(cluster.block_rank());
  const SharedLayout L = shared_layout(R, b, C, sizeof(T));
  const int lds = R | 1;
  T* S = reinterpret_cast<T*>(smem);
  T* pivot = reinterpret_cast<T*>(smem + L.pivot);
  T* received = reinterpret_cast<T*>(smem + L.received);
  int* chosen = reinterpret_cast<int*>(smem + L.chosen);
  int* piv = reinterpret_cast<int*>(smem + L.piv);
  int* cur = reinterpret_cast<int*>(smem + L.cur);
  int* pos_of = reinterpret_cast<int*>(smem + L.pos_of);
  auto received_values = [&](int parity, int sender) { return received + static_cast<std::size_t>(parity * C + sender) * b; };

  const int t = static_cast<int>(threadIdx.x), lane = t & 31, warp = t >> 5;
  const int row0 = g * R, rows = max(0, min(R, m - row0));
  // CTA 0's thread 0 times its phases when asked (CoopPanelPhase order).
  const bool timed = profile != nullptr && g == 0 && t == 0;
  long long phase_cycles[kCoopPanelPhases] = {};
  long long mark = timed ? clock64() : 0;
  auto lap = [&](int phase) {
    if (!timed) return;
    const long long now = clock64();
    phase_cycles[phase] += now - mark;
    mark = now;
  };

  for (int k = warp; k < b; k += kWarps)
    for (int r = lane; r < rows; r += 32) S[k * lds + r] = a[row0 + r + k * lda];
  for (int r = t; r < R; r += kThreads) chosen[r] = -1;
  // Bytes column j brings: every sender's row index and columns j..b.
  auto column_bytes = [&](int j) { return static_cast<unsigned>(C * (4 + (b - j) * sizeof(T))); };
  if (t == 0) {  // each parity's first phase armed before anyone can push to it
    barrier_init(smem_u32(&bars[0]));
    barrier_init(smem_u32(&bars[1]));
    barrier_expect(smem_u32(&bars[0]), column_bytes(0));
    if (b > 1) barrier_expect(smem_u32(&bars[1]), column_bytes(1));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  int first_zero = 0;
  cluster.sync();  // every CTA running, its barriers ready, before anything is pushed to it
  lap(kCoopLoad);

  // Thread t owns rows t, t + kThreads, ... of its CTA for the search and the update alike, so
  // the only CTA barrier per column is the one that meets the warps' candidates.
  for (int j = 0; j < b; ++j) {
    const int parity = j & 1, width = b - j;
    // This CTA's candidate: the largest |a(r, j)| among rows not chosen yet (ties: lowest row).
    // Column j holds a(r, j) less the earlier columns' updates, not yet divided by the pivot.
    T best = T(-1);
    unsigned best_row = kNoRow;
    int unused = 0;
    for (int r = t; r < rows; r += kThreads)
      if (chosen[r] < 0) {
        const T v = abs(S[j * lds + r]);
        if (v > best) best = v, best_row = static_cast<unsigned>(row0 + r);
      }
    warp_argmax(best, best_row, unused);
    if (lane == 0) part_value[parity][warp] = best, part_row[parity][warp] = best_row;
    __syncthreads();
    best = part_value[parity][0];
    best_row = part_row[parity][0];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) {
      const T v = part_value[parity][w];
      const unsigned r = part_row[parity][w];
      if (v > best || (v == best && r < best_row)) best = v, best_row = r;
    }
    lap(kCoopSearch);
    // Push it (its row, then its columns j..b) into every CTA's slot for this sender: kThreads / C
    // threads per destination.
    const int local = best_row == kNoRow ? -1 : static_cast<int>(best_row) - row0;
    const unsigned bar = smem_u32(&bars[parity]), row_slot = smem_u32(&received_row[parity][g]);
    const unsigned value_slot = smem_u32(received_values(parity, g));
    {
      const int per_dest = kThreads / C, dest = t / per_dest;
      const unsigned dest_bar = in_cta(bar, dest);
      for (int f = t - dest * per_dest; f <= width; f += per_dest) {
        if (f == 0) {
          push(in_cta(row_slot, dest), best_row, dest_bar);
        } else {
          const T v = local >= 0 ? S[(j + f - 1) * lds + local] : T(0);
          push(in_cta(value_slot + static_cast<unsigned>((f - 1) * sizeof(T)), dest), v, dest_bar);
        }
      }
    }
    lap(kCoopSend);
    // Every CTA's candidate here: every warp picks the same winner.
    barrier_wait(bar, static_cast<unsigned>(j >> 1) & 1u);
    // Arm this parity for column j + 2 now: no CTA pushes that before it has this CTA's j + 1.
    if (t == 0 && j + 2 < b) barrier_expect(bar, column_bytes(j + 2));
    T v = T(-1);
    unsigned row = kNoRow;
    int owner = -1;
    if (lane < C) {
      const unsigned r = received_row[parity][lane];
      if (r != kNoRow) v = abs(received_values(parity, lane)[0]), row = r, owner = lane;
    }
    warp_argmax(v, row, owner);
    const T* prow = received_values(parity, owner);  // the pivot row's columns j..b
    const T u = prow[0];
    const int chosen_local = static_cast<int>(row) - row0;
    if (owner == g && chosen_local % kThreads == t) chosen[chosen_local] = j;  // its owner thread
    if (t == 0) {
      piv[j] = static_cast<int>(row);
      pivot[j] = u;
      if (u == T(0) && first_zero == 0) first_zero = j + 1;
    }
    lap(kCoopWait);
    // Rank-1 update of this thread's candidate rows, columns j+1..b.
    if (u != T(0)) {
      const int per_thread = (rows + kThreads - 1) / kThreads;
      if (per_thread <= 1)
        update_rows<T, 1>(S, lds, j, width, rows, chosen, prow, u);
      else if (per_thread <= 2)
        update_rows<T, 2>(S, lds, j, width, rows, chosen, prow, u);
      else if (per_thread <= 4)
        update_rows<T, 4>(S, lds, j, width, rows, chosen, prow, u);
      else
        update_rows<T, kMaxRowsPerThread>(S, lds, j, width, rows, chosen, prow, u);
    }
    lap(kCoopUpdate);
  }
  // Every push has landed (each CTA waited for all of column b - 1's); no CTA leaves early.
  cluster.sync();

  // Replay the interchanges as LAPACK's sequential swaps: position j takes the row chosen for
  // column j; the row it held goes where that one was. Only rows of the first b positions ever
  // move other than by being chosen, so two maps of b entries suffice (cur: position -> row for
  // positions < b; pos_of: row -> position for rows < b).
  if (t == 0) {
    for (int k = 0; k < b; ++k) cur[k] = k, pos_of[k] = k;
    for (int j = 0; j < b; ++j) {
      const int q = piv[j], p = q < b ? pos_of[q] : q, r = cur[j];
      if (g == 0) ipiv[j] = p + 1;
      if (p < b) cur[p] = r;
      pos_of[r] = p;
      cur[j] = q;
      if (q < b) pos_of[q] = j;
    }
    if (g == 0) *info = first_zero;
  }
  __syncthreads();
  // Each row once to its final row: columns left of the one it was chosen for (all, if never
  // chosen) are multipliers, divided by their column's pivot now; the rest is U.
  for (int k = warp; k < b; k += kWarps) {
    const T u = pivot[k];
    const bool reciprocal = abs(u) >= sfmin<T>();
    const T rinv = T(1) / u;
    for (int r = lane; r < rows; r += 32) {
      const int c = chosen[r], row = row0 + r;
      const int dest = c >= 0 ? c : (row < b ? pos_of[row] : row);
      T x = S[k * lds + r];
      if ((c < 0 || k < c) && u != T(0)) x = reciprocal ? x * rinv : x / u;
      a[dest + k * lda] = x;
    }
  }
  lap(kCoopStore);
  if (timed)
    for (int p = 0; p < kCoopPanelPhases; ++p) profile[p] = static_cast<unsigned long long>(phase_cycles[p]);
}

int current_device_attribute(cudaDeviceAttr attr) {
  int device = 0, value = 0;
  GPUFACT_CUDA_CHECK(cudaGetDevice(&device));
  GPUFACT_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

// Dynamic shared memory a CTA may take: the opt-in limit less 6 KiB for the kernel's static arrays.
std::size_t shared_limit() {
  return static_cast<std::size_t>(current_device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin) - 6 * 1024);
}

// Large shared memory and clusters of 16 allowed, once per element type.
template <class T>
void set_attributes() {
  static const bool done = [] {
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(lu_panel_coop_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            static_cast<int>(shared_limit())));
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(lu_panel_coop_kernel<T>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    return true;
  }();
  (void)done;
}

cudaLaunchConfig_t cluster_config(int ctas, std::size_t shared_bytes, cudaStream_t stream, cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(ctas));
  cfg.blockDim = dim3(kThreads);
  cfg.dynamicSmemBytes = shared_bytes;
  cfg.stream = stream;
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = static_cast<unsigned>(ctas);
  attr->val.clusterDim.y = 1;
  attr->val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cfg;
}

template <class T>
void panel_coop(T* a, std::int64_t lda, std::int64_t m, std::int64_t b, std::int64_t* ipiv, int* info,
                cudaStream_t stream, unsigned long long* profile) {
  if (b < 1 || b > kCoopPanelMaxWidth)
    throw std::invalid_argument("launch_lu_panel_coop: b = " + std::to_string(b) + " is outside 1.." +
                                std::to_string(kCoopPanelMaxWidth));
  if (m < b || m > INT_MAX / 2)
    throw std::invalid_argument("launch_lu_panel_coop: m = " + std::to_string(m) + " is outside b.." +
                                std::to_string(INT_MAX / 2));
  if (lda < m) throw std::invalid_argument("launch_lu_panel_coop: lda = " + std::to_string(lda) + " < m");
  const CoopPanelShape shape = coop_panel_shape(m, b, sizeof(T));
  if (shape.ctas == 0)
    throw std::invalid_argument("launch_lu_panel_coop: an " + std::to_string(m) + " x " + std::to_string(b) +
                                " panel does not fit in the shared memory of a cluster of " +
                                std::to_string(coop_panel_max_cluster()) + " CTAs (coop_panel_fit_width)");
  set_attributes<T>();
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t cfg = cluster_config(shape.ctas, shape.shared_bytes, stream, &attr);
  GPUFACT_CUDA_CHECK(cudaLaunchKernelEx(&cfg, lu_panel_coop_kernel<T>, a, lda, static_cast<int>(m),
                                        static_cast<int>(b), shape.rows, ipiv, info, profile));
}

}  // namespace

int coop_panel_max_cluster() {
  static const int most = [] {
    set_attributes<float>();
    cudaLaunchAttribute attr{};
    const cudaLaunchConfig_t cfg = cluster_config(kMaxCluster, shared_limit(), nullptr, &attr);
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
  if (rows > kMaxRowsPerThread * kThreads) return {};
  const std::size_t bytes = shared_layout(rows, static_cast<int>(b), ctas, element_bytes).total;
  if (bytes > shared_limit()) return {};
  return {ctas, rows, bytes};
}

std::int64_t coop_panel_fit_width(std::int64_t m, std::int64_t b, std::size_t element_bytes) {
  for (std::int64_t w = std::min<std::int64_t>(b, kCoopPanelMaxWidth); w >= 8; w /= 2)
    if (coop_panel_shape(m, w, element_bytes).ctas > 0) return w;
  return 0;
}

void launch_lu_panel_coop(float* a, std::int64_t lda, std::int64_t m, std::int64_t b, std::int64_t* ipiv, int* info,
                          cudaStream_t stream, unsigned long long* profile) {
  panel_coop(a, lda, m, b, ipiv, info, stream, profile);
}
void launch_lu_panel_coop(double* a, std::int64_t lda, std::int64_t m, std::int64_t b, std::int64_t* ipiv, int* info,
                          cudaStream_t stream, unsigned long long* profile) {
  panel_coop(a, lda, m, b, ipiv, info, stream, profile);
}

}  // namespace gpufact::kernels
