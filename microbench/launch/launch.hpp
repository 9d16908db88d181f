// volkov08.launch (volkov08 §3.1): kernel launch overhead by the difference method.
#pragma once

namespace gpufact {
class Registry;
}

namespace gpufact::microbench {

void register_launch(Registry& registry);

}  // namespace gpufact::microbench
