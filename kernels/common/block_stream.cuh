// Holds a stream until the host releases it, so the timed work is fully enqueued before its
// start event runs and launch latency stays out of GPU timings (as nvbench does). The kernel
// gives up after `timeout_ns` and sets *timed_out: the host never released it, typically
// because the timed work synchronized with the host while the stream was held.
#pragma once

#include <cuda_runtime_api.h>

namespace gpufact::kernels {

// `release` and `timed_out` must be device-accessible host memory (pinned, UVA).
void launch_block_stream(const volatile int* release, int* timed_out, unsigned long long timeout_ns,
                         cudaStream_t stream);

}  // namespace gpufact::kernels
