// The co-residency rule of an in-kernel global barrier (volkov08 §3.6): it "synchronizes only
// among threads that run simultaneously", so launching more blocks than can be resident at once
// deadlocks. Host-only, so the rule is tested without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpufact::microbench {

// Why `blocks_per_sm` blocks on each of `sm_count` SMs cannot all be resident at once, given that
// the occupancy API allows `max_blocks_per_sm` of them per SM; nullopt when they can. `what`
// names the kernel in the message ("flags barrier kernel, 128 threads").
std::optional<std::string> coresidency_violation(std::int64_t blocks_per_sm, int max_blocks_per_sm, int sm_count,
                                                 std::string_view what);

}  // namespace gpufact::microbench
