#pragma once

namespace gpufact {
class Registry;
namespace dense {
// volkov08 §6 dense factorizations: fig7 (with the table3 summary), fig10, fig11.
void register_dense(Registry& registry);
}  // namespace dense
}  // namespace gpufact
