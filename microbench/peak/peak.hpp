#pragma once

namespace gpufact {
class Registry;
namespace microbench {
// volkov08.peak (§3.4): FP32 FMA throughput vs warps per SM and independent chains per thread.
void register_peak(Registry& registry);
}  // namespace microbench
}  // namespace gpufact
