#pragma once

namespace gpufact {
class Registry;
namespace microbench {
// volkov08.smem (§3.5): FMA with a shared-memory operand; bank conflicts vs stride; bank layout inferred.
void register_smem(Registry& registry);
}  // namespace microbench
}  // namespace gpufact
