// A few of a device's SMs set apart, and a stream (a CUDA green context) on the rest. A look-ahead
// factorization runs its trailing update on that stream, so the reserved SMs stay free for the
// latency-bound panel chain: measured on the H200, a chain of one fused potrf CTA and two
// 4096 × 128 × 128 GEMMs took 65 µs alone and 218 µs beside an 8192 × 8192 × 256 SGEMM on a
// low-priority stream, because stream priority only orders the blocks waiting for an SM, and each
// GEMM block holds its SM for tens of microseconds.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>

namespace gpufact {

class SmPartition {
 public:
  // Sets `reserved_sms` SMs (rounded up to the device's partition granularity, 8 on Hopper) apart
  // and makes a non-blocking stream, at the device's least priority, on the rest: work on that
  // stream never occupies the reserved SMs, which stay for streams of the primary context. Throws
  // std::invalid_argument naming panel_sms (the option it serves) if it is below 1 or leaves the
  // rest less than one granule, std::runtime_error if the driver has no green contexts (driver
  // entry points are looked up at run time: no link-time libcuda).
  SmPartition(int device, int reserved_sms);
  ~SmPartition();
  SmPartition(const SmPartition&) = delete;
  SmPartition& operator=(const SmPartition&) = delete;

  cudaStream_t stream() const noexcept;  // on the SMs that are not reserved
  int reserved_sms() const noexcept;
  int stream_sms() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpufact
