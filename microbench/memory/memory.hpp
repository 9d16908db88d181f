#pragma once

namespace gpufact {
class Registry;
namespace microbench {
// volkov08.fig1 (§3.3 Fig. 1): pointer-chase latency vs array size × stride, per access kind.
void register_fig1(Registry& registry);
// volkov08.fig2 (§3.3 Fig. 2): the memory system inferred from targeted chase sweeps.
void register_fig2(Registry& registry);
}  // namespace microbench
}  // namespace gpufact
