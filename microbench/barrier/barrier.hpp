// volkov08.barrier (volkov08 §3.6): in-kernel global barriers against kernel relaunch.
#pragma once

namespace gpufact {
class Registry;
}

namespace gpufact::microbench {

void register_barrier(Registry& registry);

}  // namespace gpufact::microbench
