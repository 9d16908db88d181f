// Pushing values into every CTA of a thread block cluster without a cluster barrier (sm_90): a
// CTA's shared-memory address mapped into another CTA's window, transaction barriers (mbarrier)
// that count the bytes a column's exchange brings, and asynchronous remote stores that complete
// on the receiver's barrier. The on-chip panels (kernels/lu/panel_coop, kernels/qr/panel_cluster)
// exchange one column's data this way: each CTA pushes, then waits for its own barrier's bytes.
// Host side: the launch configuration of a one-dimensional cluster and the panels' argument checks.
#pragma once

#include <cuda_runtime.h>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {

// The largest cluster the on-chip panels launch (Hopper's non-portable size; 8 is portable).
inline constexpr int kMaxCluster = 16;

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// The same address in CTA `cta`: a pure function of its operands, so not volatile (the compiler
// may hoist it out of the column loop).
__device__ __forceinline__ unsigned in_cta(unsigned addr, int cta) {
  unsigned r;
  asm("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(cta));
  return r;
}
// A barrier whose phases complete after `arrivals` arrivals (and the bytes they expect).
__device__ __forceinline__ void barrier_init(unsigned bar, unsigned arrivals = 1) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(arrivals) : "memory");
}
// Arrives once and expects `bytes` more to complete the current phase.
__device__ __forceinline__ void barrier_expect(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
// Makes the initialized barriers visible to the cluster's remote stores.
__device__ __forceinline__ void barrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
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
// Stores v at `addr` (a cluster shared-memory address) and counts its bytes on barrier `bar`
// (the receiver's, mapped the same way).
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

// 16 bytes at once (addr 16-byte aligned): four floats or two doubles.
__device__ __forceinline__ void push_vec(unsigned addr, const float (&v)[4], unsigned bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(addr),
               "r"(__float_as_uint(v[0])), "r"(__float_as_uint(v[1])), "r"(__float_as_uint(v[2])),
               "r"(__float_as_uint(v[3])), "r"(bar)
               : "memory");
}
__device__ __forceinline__ void push_vec(unsigned addr, const double (&v)[2], unsigned bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.b64 [%0], {%1, %2}, [%3];" ::"r"(addr),
               "l"(__double_as_longlong(v[0])), "l"(__double_as_longlong(v[1])), "r"(bar)
               : "memory");
}

// A launch of `ctas` CTAs of `threads` threads as one cluster; `attr` holds the cluster attribute.
inline cudaLaunchConfig_t cluster_launch_config(int ctas, int threads, std::size_t shared_bytes, cudaStream_t stream,
                                                cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(ctas));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
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

// An on-chip panel's arguments: b in 1..max_b, m in b..INT_MAX/2, lda >= m; otherwise
// std::invalid_argument naming the launcher and the argument.
inline void check_panel_arguments(const char* launcher, std::int64_t m, std::int64_t b, std::int64_t max_b,
                                  std::int64_t lda) {
  const std::string who(launcher);
  if (b < 1 || b > max_b)
    throw std::invalid_argument(who + ": b = " + std::to_string(b) + " is outside 1.." + std::to_string(max_b));
  if (m < b || m > INT_MAX / 2)
    throw std::invalid_argument(who + ": m = " + std::to_string(m) + " is outside b.." + std::to_string(INT_MAX / 2));
  if (lda < m) throw std::invalid_argument(who + ": lda = " + std::to_string(lda) + " < m");
}

}  // namespace gpufact::kernels
