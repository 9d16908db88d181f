// The two streams and the events of a look-ahead factorization (volkov08 §5, "pipelined
// updating"): the panel stream carries transfers, pivoting, U12 and the update of the next panel;
// the update stream the rest of the trailing matrix. The host waits on events only.
//
// The panel stream has the device's highest priority: a trailing-update GEMM fills every SM for
// several waves, and without priority the block scheduler would start the panel's kernels only
// after the GEMM's last wave had been issued — the look-ahead would then serialize on the GPU even
// though the streams are independent. With priority, the panel's (small, latency-bound) kernels
// take SMs as soon as GEMM blocks retire. Even so each waits for a block to retire; with
// panel_sms > 0 the update stream runs in a green context without that many SMs
// (sm_partition.hpp), which only the panel stream (still on every SM) then finds free.
#pragma once

#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "core/cuda/sm_partition.hpp"
#include "core/cuda/stream.hpp"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace gpufact::dense {

// A stream of a given priority, or the partition's stream.
class PriorityStream {
 public:
  // highest = true: the device's greatest priority; false: its default (lowest) priority. With a
  // partition (lowest priority only): its stream, which the partition owns.
  explicit PriorityStream(bool highest, const SmPartition* partition = nullptr)
      : own_(partition && !highest ? Stream(nullptr) : Stream::with_priority(highest)),
        s_(partition && !highest ? partition->stream() : own_.get()) {}
  PriorityStream(const PriorityStream&) = delete;
  PriorityStream& operator=(const PriorityStream&) = delete;
  cudaStream_t get() const noexcept { return s_; }
  operator cudaStream_t() const noexcept { return s_; }

 private:
  Stream own_;  // empty when the partition lends its stream
  cudaStream_t s_ = nullptr;
};

// panel_sms > 0: that many SMs of the current device (rounded up to the partition granularity)
// set apart from the rest, where the update stream runs; 0: no partition.
inline std::unique_ptr<SmPartition> panel_partition(int panel_sms) {
  if (panel_sms <= 0) return nullptr;
  int device = 0;
  GPUFACT_CUDA_CHECK(cudaGetDevice(&device));
  return std::make_unique<SmPartition>(device, panel_sms);
}

struct LookaheadStreams {
  explicit LookaheadStreams(int panel_sms = 0) : partition(panel_partition(panel_sms)) {}

  std::unique_ptr<SmPartition> partition;  // declared before the stream it may lend
  // The panel stream keeps every SM (and the priority): the reserved SMs are only kept free of the
  // update, so the panel's kernels never queue behind its blocks.
  PriorityStream panel{true}, update{false, partition.get()};
  Event panel_ready{cudaEventDisableTiming};     // the next panel is in host memory
  Event lookahead_done{cudaEventDisableTiming};  // U12 ready: the rest of the trailing matrix may start
  Event update_done{cudaEventDisableTiming};     // the rest of the trailing matrix updated
  // The update stream has brought the panel after next up to date: a step's update may do those
  // columns first and record this, so the next look-ahead need not wait for the whole update.
  Event next_panel_updated{cudaEventDisableTiming};
  Event finished{cudaEventDisableTiming};

  // The update stream waits for the panel stream's lookahead_done, and vice versa.
  void update_after_lookahead() {
    lookahead_done.record(panel);
    GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(update, lookahead_done.get(), 0));
  }
  // first_part_only: for the update's next_panel_updated only (update_done is recorded either way).
  void panel_after_update(bool first_part_only = false) {
    update_done.record(update);
    GPUFACT_CUDA_CHECK(
        cudaStreamWaitEvent(panel, (first_part_only ? next_panel_updated : update_done).get(), 0));
  }
  // Both streams wait for work already enqueued on `s` (the caller's stream), and `s` for them.
  void join_from(cudaStream_t s) {
    finished.record(s);
    GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(panel, finished.get(), 0));
    GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(update, finished.get(), 0));
  }
  void join_into(cudaStream_t s) {
    panel_after_update();
    finished.record(panel);
    GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(s, finished.get(), 0));
  }
};

// What the GPU-resident factorizations (LU, Cholesky) share around their look-ahead streams:
// cuSOLVER and one cuBLAS handle on the panel stream, one cuBLAS handle on the update stream, the
// solver's workspaces and the first non-finite input entry found.
struct ResidentContext {
  explicit ResidentContext(int panel_sms = 0) : streams(panel_sms) {
    solver.set_stream(streams.panel);
    panel_blas.set_stream(streams.panel);
    update_blas.set_stream(streams.update);
  }
  // The largest workspace any of the panel factorizations asked for (device and host bytes).
  void allocate_solver_workspace(std::size_t device_bytes, std::size_t host_bytes) {
    solver_device = DeviceBuffer<std::byte>(std::max<std::size_t>(device_bytes, 1));
    solver_host.resize(host_bytes);
  }

  LookaheadStreams streams;
  CusolverHandle solver;
  CublasHandle panel_blas, update_blas;
  DeviceBuffer<std::byte> solver_device;
  std::vector<std::byte> solver_host;
  DeviceBuffer<unsigned long long> first_nonfinite{1};
  PinnedBuffer<unsigned long long> host_first_nonfinite{1};
};

}  // namespace gpufact::dense
