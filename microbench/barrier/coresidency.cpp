#include "microbench/barrier/coresidency.hpp"

namespace gpufact::microbench {

std::optional<std::string> coresidency_violation(std::int64_t blocks_per_sm, int max_blocks_per_sm, int sm_count,
                                                 std::string_view what) {
  const std::string kernel(what);
  if (max_blocks_per_sm < 1)
    return "the " + kernel + " cannot be resident on an SM at all (occupancy API: 0 blocks per SM)";
  if (blocks_per_sm <= max_blocks_per_sm) return std::nullopt;
  return "blocks_per_sm=" + std::to_string(blocks_per_sm) + " (" + std::to_string(blocks_per_sm * sm_count) +
         " blocks) exceeds the co-resident maximum of " + std::to_string(max_blocks_per_sm) + " per SM (" +
         std::to_string(static_cast<std::int64_t>(max_blocks_per_sm) * sm_count) + " blocks on " +
         std::to_string(sm_count) + " SMs) for the " + kernel +
         "; an in-kernel barrier over more blocks than can run at once would deadlock";
}

}  // namespace gpufact::microbench
