#pragma once

namespace gpufact {
class Registry;
namespace microbench {
// volkov08.fig3 (§3.8 Fig. 3): LU of an m × 64 panel on the GPU (cuBLAS getf2, fused kernels,
// one cooperative kernel), on the CPU with transfers, and the eq. (2) model estimates.
void register_fig3(Registry& registry);
}  // namespace microbench
}  // namespace gpufact
