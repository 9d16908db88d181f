// Move-only owner of a CUDA graph captured from a stream and its instantiation (STYLE.md 8), and
// GraphReplay: a call's launches captured once per key and replayed.
#pragma once

#include "core/cuda/check.hpp"
#include "core/cuda/stream.hpp"

#include <memory>
#include <utility>

namespace gpufact {

class CapturedGraph {
 public:
  CapturedGraph() = default;
  // Captures what `enqueue(stream)` issues on `stream` (which must be idle and not capturing)
  // and instantiates it with `instantiate_flags` (cudaGraphInstantiateFlagUseNodePriority: each
  // kernel keeps the priority of the stream it was captured from). A throw from `enqueue` ends
  // the capture and propagates.
  template <class Enqueue>
  static CapturedGraph capture(cudaStream_t stream, Enqueue&& enqueue, unsigned long long instantiate_flags = 0) {
    CapturedGraph g;
    GPUFACT_CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue(stream);
    } catch (...) {
      cudaGraph_t partial = nullptr;
      cudaStreamEndCapture(stream, &partial);
      if (partial) cudaGraphDestroy(partial);
      throw;
    }
    GPUFACT_CUDA_CHECK(cudaStreamEndCapture(stream, &g.graph_));
    GPUFACT_CUDA_CHECK(cudaGraphInstantiate(&g.exec_, g.graph_, instantiate_flags));
    return g;
  }
  ~CapturedGraph() { reset(); }
  CapturedGraph(CapturedGraph&& o) noexcept
      : graph_(std::exchange(o.graph_, nullptr)), exec_(std::exchange(o.exec_, nullptr)) {}
  CapturedGraph& operator=(CapturedGraph&& o) noexcept {
    if (this != &o) {
      reset();
      graph_ = std::exchange(o.graph_, nullptr);
      exec_ = std::exchange(o.exec_, nullptr);
    }
    return *this;
  }
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;

  cudaGraphExec_t exec() const noexcept { return exec_; }
  void launch(cudaStream_t stream) const { GPUFACT_CUDA_CHECK(cudaGraphLaunch(exec_, stream)); }

 private:
  void reset() noexcept {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
  }
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// Launches captured once per key (the pointers and sizes they were issued with) into a CUDA graph,
// on a private idle stream, and replayed: many small launches then pay the launch cost once. A
// new key captures again.
template <class Key>
class GraphReplay {
 public:
  explicit GraphReplay(unsigned long long instantiate_flags = 0) : flags_(instantiate_flags) {}
  // Replays on `stream` what `enqueue(capture_stream)` issues, capturing it first unless the last
  // capture had this key.
  template <class Enqueue>
  void launch(const Key& key, cudaStream_t stream, Enqueue&& enqueue) {
    if (!graph_ || key != key_) {
      graph_.reset();
      graph_ = std::make_unique<CapturedGraph>(CapturedGraph::capture(capture_stream_.get(), enqueue, flags_));
      key_ = key;
    }
    graph_->launch(stream);
  }
  // The instantiation now replayed (null before the first capture).
  cudaGraphExec_t exec() const noexcept { return graph_ ? graph_->exec() : nullptr; }

 private:
  unsigned long long flags_;
  Stream capture_stream_;
  std::unique_ptr<CapturedGraph> graph_;
  Key key_{};
};

}  // namespace gpufact
