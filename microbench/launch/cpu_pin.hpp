// Host-timed launch measurements (volkov08 §3.1) pay for every migration of the timing thread
// between CPUs (a cold cache, another core's clock); pinning it to the CPU it already runs on
// removes that without choosing a CPU for it.
#pragma once

#include <sched.h>

#include <string>

namespace gpufact::microbench {

// Pins the calling thread to the CPU it runs on at construction (sched_setaffinity) and
// restores its previous affinity at destruction. Never throws: when pinning fails, cpu() is -1
// and error() says why, and the thread runs as before.
class ScopedCpuPin {
 public:
  ScopedCpuPin();
  ~ScopedCpuPin();
  ScopedCpuPin(const ScopedCpuPin&) = delete;
  ScopedCpuPin& operator=(const ScopedCpuPin&) = delete;

  int cpu() const { return cpu_; }
  const std::string& error() const { return error_; }

 private:
  cpu_set_t saved_{};
  bool restore_ = false;
  int cpu_ = -1;
  std::string error_;
};

}  // namespace gpufact::microbench
