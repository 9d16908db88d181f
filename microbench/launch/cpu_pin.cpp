#include "microbench/launch/cpu_pin.hpp"

#include <cerrno>
#include <cstring>

namespace gpufact::microbench {

ScopedCpuPin::ScopedCpuPin() {
  const int cpu = sched_getcpu();
  if (cpu < 0) {
    error_ = std::string("sched_getcpu: ") + std::strerror(errno);
    return;
  }
  if (cpu >= CPU_SETSIZE) {
    error_ = "CPU " + std::to_string(cpu) + " is beyond cpu_set_t";
    return;
  }
  CPU_ZERO(&saved_);
  if (sched_getaffinity(0, sizeof saved_, &saved_) != 0) {
    error_ = std::string("sched_getaffinity: ") + std::strerror(errno);
    return;
  }
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (sched_setaffinity(0, sizeof one, &one) != 0) {
    error_ = std::string("sched_setaffinity: ") + std::strerror(errno);
    return;
  }
  restore_ = true;
  cpu_ = cpu;
}

ScopedCpuPin::~ScopedCpuPin() {
  if (restore_) sched_setaffinity(0, sizeof saved_, &saved_);
}

}  // namespace gpufact::microbench
