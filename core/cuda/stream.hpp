// Move-only CUDA stream and event owners.
#pragma once

#include "core/cuda/check.hpp"

#include <cstddef>
#include <utility>

namespace gpufact {

class Stream {
 public:
  Stream() { GPUFACT_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  // No stream (get() is null), for owners that may hold none.
  explicit Stream(std::nullptr_t) noexcept {}
  // A non-blocking stream at the device's greatest priority (highest) or its default, lowest one.
  static Stream with_priority(bool highest) { return highest ? below_highest(0) : below_highest(-1); }
  // A non-blocking stream `steps` priority levels below the greatest (clamped to the lowest);
  // negative: the lowest.
  static Stream below_highest(int steps) {
    int least = 0, greatest = 0;
    GPUFACT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    // Greater priority is a smaller number.
    const int priority = steps < 0 || greatest + steps > least ? least : greatest + steps;
    Stream s(nullptr);
    GPUFACT_CUDA_CHECK(cudaStreamCreateWithPriority(&s.s_, cudaStreamNonBlocking, priority));
    return s;
  }
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  Stream(Stream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Stream& operator=(Stream&& o) noexcept {
    if (this != &o) {
      if (s_) cudaStreamDestroy(s_);
      s_ = std::exchange(o.s_, nullptr);
    }
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const noexcept { return s_; }
  operator cudaStream_t() const noexcept { return s_; }
  void synchronize() const { GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  explicit Event(unsigned flags = cudaEventDefault) { GPUFACT_CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags)); }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event& operator=(Event&& o) noexcept {
    if (this != &o) {
      if (e_) cudaEventDestroy(e_);
      e_ = std::exchange(o.e_, nullptr);
    }
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const noexcept { return e_; }
  void record(cudaStream_t s) { GPUFACT_CUDA_CHECK(cudaEventRecord(e_, s)); }
  void synchronize() const { GPUFACT_CUDA_CHECK(cudaEventSynchronize(e_)); }

  // Seconds from `start` to `stop`; both must have completed.
  static double elapsed_seconds(const Event& start, const Event& stop) {
    float ms = 0.0f;
    GPUFACT_CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, stop.e_));
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  cudaEvent_t e_ = nullptr;
};

}  // namespace gpufact
