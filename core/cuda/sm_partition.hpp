// Two disjoint sets of a device's SMs (CUDA green contexts), a stream in each. A look-ahead
// factorization runs its trailing update in the second set, so a few SMs stay free for the
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
  // The first set gets `first_sms` SMs rounded up to the device's partition granularity (8 on
  // Hopper); the second the rest. Streams: non-blocking, the first at the device's greatest
  // priority, the second at its least. Throws std::invalid_argument naming first_sms if it leaves
  // no SMs for the second set (or is below 1), std::runtime_error if the driver has no green
  // contexts (driver API entry points are looked up at run time: no link-time libcuda).
  SmPartition(int device, int first_sms);
  ~SmPartition();
  SmPartition(const SmPartition&) = delete;
  SmPartition& operator=(const SmPartition&) = delete;

  cudaStream_t first() const noexcept;
  cudaStream_t second() const noexcept;
  int first_sms() const noexcept;
  int second_sms() const noexcept;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpufact
