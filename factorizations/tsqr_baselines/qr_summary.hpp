// Host-side analysis of the tall-skinny QR runs: speedups over a reference method and the
// crossover width where the reference wins (anderson10 §V.C: about 3000 columns at 8192 rows).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace gpufact::factorizations {

struct Crossover {
  double width = 0;               // log-log interpolated width where the speedup falls to 1
  std::int64_t last_faster = 0;   // the widest measured width where the method still wins
  std::int64_t first_slower = 0;  // from this width on the reference wins at every measured width
};

// speedup_by_width: (width, t_reference / t_method) pairs in any order, widths distinct. Returns
// nothing when the method wins at the widest width or loses already at the narrowest.
std::optional<Crossover> crossover_width(std::vector<std::pair<std::int64_t, double>> speedup_by_width);

}  // namespace gpufact::factorizations
