#include "kernels/common/block_stream.cuh"

#include "core/cuda/check.hpp"

namespace gpufact::kernels {
namespace {

__global__ void block_stream_kernel(const volatile int* release, int* timed_out, unsigned long long timeout_ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  while (*release == 0) {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    if (t - t0 > timeout_ns) {
      *timed_out = 1;
      return;
    }
    __nanosleep(1000);
  }
}

}  // namespace

void launch_block_stream(const volatile int* release, int* timed_out, unsigned long long timeout_ns,
                         cudaStream_t stream) {
  block_stream_kernel<<<1, 1, 0, stream>>>(release, timed_out, timeout_ns);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
