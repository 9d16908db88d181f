#pragma once

namespace gpufact {
class Registry;
namespace microbench {
// volkov08.pipeline (§3.3, end): dependent FP32 FMA latency, all-register and with a shared operand.
void register_pipeline(Registry& registry);
}  // namespace microbench
}  // namespace gpufact
