#pragma once

namespace gpufact {
class Registry;
namespace microbench {
// volkov08.bandwidth (§3.7): device copy bandwidth vs size, against cudaMemcpy in the same run.
void register_bandwidth(Registry& registry);
}  // namespace microbench
}  // namespace gpufact
