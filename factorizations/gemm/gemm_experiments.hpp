#pragma once

namespace gpufact {
class Registry;
namespace factorizations {
// volkov08 §4 (SGEMM): volkov08.table2, volkov08.fig5, volkov08.fig6.
void register_gemm(Registry& registry);
void register_table2(Registry& registry);
void register_fig5(Registry& registry);
void register_fig6(Registry& registry);
}  // namespace factorizations
}  // namespace gpufact
