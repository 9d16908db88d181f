#include "core/bench/rotation.hpp"

#include <algorithm>

namespace gpufact {

std::size_t rotation_count(std::size_t bytes_per_set, std::size_t l2_bytes, std::size_t max_sets) {
  if (bytes_per_set == 0) return 1;
  const std::size_t target = 2 * l2_bytes;
  const std::size_t sets = target / bytes_per_set + 1;  // strictly more than the target
  return std::clamp<std::size_t>(sets, 1, std::max<std::size_t>(max_sets, 1));
}

}  // namespace gpufact
