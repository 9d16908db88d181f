#include "microbench/memory/chase_cycle.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

namespace gpufact::microbench {

namespace {
__extension__ typedef unsigned __int128 uint128;  // t * s mod n without overflow
}  // namespace

std::uint64_t ChaseCycle::index_after(std::uint64_t steps) const {
  const std::uint64_t t = steps % length;
  if (!random) return static_cast<std::uint64_t>((static_cast<uint128>(t) * (stride % elements)) % elements);
  std::uint64_t j = 0;
  for (std::uint64_t i = 0; i < t; ++i) j = successor[j];
  return j * stride;
}

std::uint64_t ChaseCycle::prefix_sum(std::uint64_t steps) const {
  std::uint64_t sum = 0;
  if (!random) {
    const std::uint64_t s = stride % elements;
    std::uint64_t k = 0;
    for (std::uint64_t i = 0; i < steps; ++i) {
      k = k + s < elements ? k + s : k + s - elements;
      sum += k;
    }
    return sum;
  }
  std::uint64_t j = 0;
  for (std::uint64_t i = 0; i < steps; ++i) {
    j = successor[j];
    sum += j * stride;
  }
  return sum;
}

ChaseCycle stride_cycle(std::uint64_t elements, std::uint64_t stride) {
  if (elements == 0) throw std::invalid_argument("stride_cycle: the array needs at least one element");
  if (stride == 0) throw std::invalid_argument("stride_cycle: stride must be > 0");
  ChaseCycle c;
  c.elements = elements;
  c.stride = stride;
  const std::uint64_t g = std::gcd(elements, stride % elements);  // gcd(n, 0) = n: A[0] = 0
  c.length = elements / g;
  c.index_sum = g * (c.length * (c.length - 1) / 2);
  return c;
}

std::vector<std::uint32_t> sattolo_cycle(std::uint64_t m, std::uint64_t seed) {
  if (m == 0) throw std::invalid_argument("sattolo_cycle: needs at least one position");
  if (m > (std::uint64_t{1} << 32)) throw std::invalid_argument("sattolo_cycle: more than 2^32 positions");
  std::vector<std::uint32_t> p(m);
  std::iota(p.begin(), p.end(), 0u);
  std::mt19937_64 gen(seed);
  // Sattolo: j strictly below i, so the permutation is one cycle of length m.
  for (std::uint64_t i = m - 1; i > 0; --i) {
    const std::uint64_t j = std::uniform_int_distribution<std::uint64_t>(0, i - 1)(gen);
    std::swap(p[i], p[j]);
  }
  return p;
}

ChaseCycle random_cycle(std::uint64_t elements, std::uint64_t stride, std::uint64_t seed) {
  if (elements == 0) throw std::invalid_argument("random_cycle: the array needs at least one element");
  if (stride == 0) throw std::invalid_argument("random_cycle: stride must be > 0");
  const std::uint64_t m = (elements - 1) / stride + 1;
  if (m > random_cycle_max_positions)
    throw std::invalid_argument("random_cycle: " + std::to_string(m) + " positions exceed the host limit of " +
                                std::to_string(random_cycle_max_positions));
  ChaseCycle c;
  c.elements = elements;
  c.stride = stride;
  c.random = true;
  c.length = m;
  c.index_sum = stride * (m * (m - 1) / 2);
  c.successor = sattolo_cycle(m, seed);
  return c;
}

ChaseSteps chase_steps(std::uint64_t cycle_length, std::uint64_t stride_bytes, long long min_steps,
                       double budget_cycles, double miss_cycles, int unroll) {
  // Below one sector per step, only every (32 / stride)-th step can miss.
  const double per_step = miss_cycles * std::min(1.0, static_cast<double>(stride_bytes) / 32.0);
  const auto budget = static_cast<long long>(budget_cycles / per_step);
  const long long cap = std::max(min_steps, budget);
  ChaseSteps st;
  st.timed = std::clamp(static_cast<long long>(std::min<std::uint64_t>(cycle_length, 1ull << 40)), min_steps, cap);
  st.timed = (st.timed + unroll - 1) / unroll * unroll;
  st.warm = static_cast<long long>(std::min<std::uint64_t>(cycle_length, static_cast<std::uint64_t>(st.timed)));
  return st;
}

}  // namespace gpufact::microbench
