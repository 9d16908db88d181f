#include "kernels/common/clock_probe.cuh"

#include "core/cuda/check.hpp"

namespace gpufact::kernels {
namespace {

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void clock_probe_kernel(ClockProbeSample* out, unsigned long long spin_ns) {
  const unsigned long long t0 = global_timer_ns();
  const long long c0 = clock64();
  unsigned long long t1 = t0;
  do {
    t1 = global_timer_ns();
  } while (t1 - t0 < spin_ns);
  const long long c1 = clock64();
  out->cycles = static_cast<unsigned long long>(c1 - c0);
  out->nanoseconds = t1 - t0;
}

}  // namespace

void launch_clock_probe(ClockProbeSample* out, unsigned long long spin_ns, cudaStream_t stream) {
  clock_probe_kernel<<<1, 1, 0, stream>>>(out, spin_ns);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
