#include "factorizations/gemm/gemm_experiments.hpp"

namespace gpufact::factorizations {

void register_gemm(Registry& registry) {
  register_table2(registry);  // §4.4 Table 2
  register_fig5(registry);    // §4.3–4.4 Fig. 5
  register_fig6(registry);    // §4.4 Fig. 6
}

}  // namespace gpufact::factorizations
