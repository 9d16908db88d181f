// Measures the SM clock actually running: clock64() cycles over %globaltimer nanoseconds while
// one thread spins for a fixed wall time.
#pragma once

#include <cuda_runtime_api.h>

namespace gpufact::kernels {

struct ClockProbeSample {
  unsigned long long cycles;
  unsigned long long nanoseconds;
};

void launch_clock_probe(ClockProbeSample* out, unsigned long long spin_ns, cudaStream_t stream);

}  // namespace gpufact::kernels
