// The two streams and the events of a look-ahead factorization (volkov08 §5, "pipelined
// updating"): the panel stream carries transfers, pivoting, U12 and the update of the next panel;
// the update stream the rest of the trailing matrix. The host waits on events only.
#pragma once

#include "core/cuda/stream.hpp"

namespace gpufact::dense {

struct LookaheadStreams {
  Stream panel, update;
  Event panel_ready{cudaEventDisableTiming};     // the next panel is in host memory
  Event lookahead_done{cudaEventDisableTiming};  // U12 and the next panel's columns updated
  Event update_done{cudaEventDisableTiming};     // the rest of the trailing matrix updated
  Event finished{cudaEventDisableTiming};

  // The update stream waits for the panel stream's lookahead_done, and vice versa.
  void update_after_lookahead() {
    lookahead_done.record(panel);
    GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(update, lookahead_done.get(), 0));
  }
  void panel_after_update() {
    update_done.record(update);
    GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(panel, update_done.get(), 0));
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

}  // namespace gpufact::dense
