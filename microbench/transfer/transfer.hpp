#pragma once

namespace gpufact {
class Registry;
namespace microbench {
// volkov08.transfer (§3.2, eq. 1): CPU-GPU copies, pinned and pageable, fitted to α + bytes/β.
void register_transfer(Registry& registry);
}  // namespace microbench
}  // namespace gpufact
