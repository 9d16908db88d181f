// cp.async (sm_80+) copies from global to shared memory: issued without waiting, so every copy a
// thread issues is in flight at once; they land at cp_async_wait / cp_async_wait_all.
#pragma once

#include <cuda_runtime.h>

namespace gpufact::kernels {

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// 4-, 8- and 16-byte copies of the first `bytes` at src, zeros after (src not read when bytes is
// 0: a zero-filled edge). 16 bytes bypass L1.
__device__ __forceinline__ void cp_async_4(void* dst, const void* src, int bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void cp_async_8(void* dst, const void* src, int bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(bytes));
}
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)), "l"(src), "r"(bytes));
}
// Unpredicated forms for copies that lie wholly inside the source (no zero fill, no clamping).
__device__ __forceinline__ void cp_async_4_full(void* dst, const void* src) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(shared_address(dst)), "l"(src));
}
__device__ __forceinline__ void cp_async_16_full(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address(dst)), "l"(src));
}
// One entry of T (4 or 8 bytes), or a zero when !pred.
template <class T>
__device__ __forceinline__ void cp_async_entry(T* dst, const T* src, bool pred) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "a 4- or 8-byte entry");
  if constexpr (sizeof(T) == 4)
    cp_async_4(dst, src, pred ? 4 : 0);
  else
    cp_async_8(dst, src, pred ? 8 : 0);
}

// sm_90 bulk copy (the TMA engine, no tensor map) of `bytes` (a multiple of 16; both addresses
// 16-byte aligned) from global to shared memory; it completes on the mbarrier at shared address
// `bar` by its byte count (kernels/common/cluster_push.cuh: barrier_expect, barrier_wait).
__device__ __forceinline__ void cp_async_bulk(void* dst, const void* src, unsigned bytes, unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(
                   shared_address(dst)),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
// Orders the block's earlier shared-memory accesses (made visible to this thread by a barrier)
// before this thread's later bulk copies into the same memory.
__device__ __forceinline__ void fence_proxy_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most N committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
// Waits for every copy this thread issued, committed or not.
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

}  // namespace gpufact::kernels
