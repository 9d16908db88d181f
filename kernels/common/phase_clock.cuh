// Where an on-chip panel kernel's time goes: CTA 0's first thread (of the cluster) adds the SM
// cycles since its last lap to the phase named, and writes the totals at the end. Every other
// thread, and every launch without a profile buffer, does nothing.
#pragma once

#include <cooperative_groups.h>

namespace gpufact::kernels {

template <int Phases>
struct PhaseClock {
  __device__ explicit PhaseClock(unsigned long long* profile)
      : out(profile != nullptr && cooperative_groups::this_cluster().block_rank() == 0 && threadIdx.x == 0 ? profile
                                                                                                           : nullptr) {
    if (out != nullptr) mark = clock64();
  }
  __device__ void lap(int phase) {
    if (out == nullptr) return;
    const long long now = clock64();
    cycles[phase] += now - mark;
    mark = now;
  }
  __device__ void finish() const {
    if (out == nullptr) return;
    for (int p = 0; p < Phases; ++p) out[p] = static_cast<unsigned long long>(cycles[p]);
  }
  unsigned long long* out;
  long long mark = 0;
  long long cycles[Phases] = {};
};

}  // namespace gpufact::kernels
