// The cycle a pointer chase walks (volkov08 §3.3), on the host: what the device array holds,
// how long the cycle is, which index the chase reaches after t steps and how many steps to time.
// Host-only, so the expectations the device results are checked against are tested in CI.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpufact::microbench {

struct ChaseCycle {
  std::uint64_t elements = 0;   // n: array length in elements
  std::uint64_t stride = 0;     // s: stride in elements
  std::uint64_t length = 0;     // elements on the cycle through index 0
  std::uint64_t index_sum = 0;  // sum of the indices on that cycle
  bool random = false;
  // Random cycles: position j (index j * stride) links to position successor[j].
  std::vector<std::uint32_t> successor;

  // Index reached from index 0 after `steps` steps.
  std::uint64_t index_after(std::uint64_t steps) const;
  // Sum of the indices reached at steps 1..steps.
  std::uint64_t prefix_sum(std::uint64_t steps) const;
};

// A[k] = (k + s) mod n. The walk from 0 visits the multiples of gcd(n, s mod n).
ChaseCycle stride_cycle(std::uint64_t elements, std::uint64_t stride);

// One random cycle through the positions 0, s, 2s, ... < n (Sattolo's algorithm): every
// position is visited once per lap and the order defeats prefetchers.
ChaseCycle random_cycle(std::uint64_t elements, std::uint64_t stride, std::uint64_t seed);
inline constexpr std::uint64_t random_cycle_max_positions = std::uint64_t{1} << 24;

// Sattolo's algorithm: successor[j] of a uniformly random single cycle through 0..m-1.
std::vector<std::uint32_t> sattolo_cycle(std::uint64_t m, std::uint64_t seed);

// Steps per run: the timed walk covers the whole cycle when that fits a budget of about
// `budget_cycles` at a pessimistic `miss_cycles` per sector touched, and at least `min_steps`
// (small cycles are walked many times); the warm-up walks min(cycle, timed) steps first.
struct ChaseSteps {
  long long warm = 0;
  long long timed = 0;
};
ChaseSteps chase_steps(std::uint64_t cycle_length, std::uint64_t stride_bytes, long long min_steps = 8192,
                       double budget_cycles = 40e6, double miss_cycles = 1000, int unroll = 16);

}  // namespace gpufact::microbench
