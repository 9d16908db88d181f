#pragma once

namespace gpufact {
class Registry;
namespace factorizations {
// anderson10.kernels (§IV.E): apply_qt_h with the four reduction strategies per block shape, % of
// the FP32 FMA peak, and the tuning summary. anderson10.fig7 (§IV.F Fig. 7): apply_qt_h vs
// apply_qt_tree rates per block shape and the share of CAQR time spent in the tree.
void register_caqr(Registry& registry);
}  // namespace factorizations
}  // namespace gpufact
