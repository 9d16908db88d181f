#include "microbench/launch/host_clock.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>

namespace gpufact::microbench {

double measure_host_clock_hz(long adds) {
#if defined(__x86_64__)
  const long iterations = (adds + 15) / 16;
  if (iterations < 1) return 0;
  std::uint64_t x = 1;
  const std::uint64_t y = 3;
  double best = 0;
  for (int chain = 0; chain < kHostClockChains; ++chain) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < iterations; ++i) {
      // 16 adds, each waiting for the last: the loop's own counter and branch run beside them.
      asm volatile(
          "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
          "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
          "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
          "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
          : "+r"(x)
          : "r"(y));
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0) best = std::max(best, static_cast<double>(16 * iterations) / s);
  }
  return best;
#else
  (void)adds;
  return 0;
#endif
}

}  // namespace gpufact::microbench
