// The order of work of the blocked right-looking LU (volkov08 §5), shared by the host reference
// (lu_host.hpp) and the GPU drivers so that all factor the same panels in the same order.
//
// Two-level blocking, as we read §5: "both levels are done in the right-looking manner ... we
// switch to the coarse blocking level when only half the finer level is complete". A coarse
// window spans c = coarse_factor fine panels starting at column W. Inside it, fine panels are
// factored right-looking, but each fine update reaches only the window's columns [j1, W + c·nb)
// (thin matrix, little bandwidth per flop lost since the window is narrow). After c/2 fine panels —
// half of the finer level — the fine updates would shrink below c/2 block columns and offer little
// thread parallelism, so we switch to the coarse level: one GEMM with k = (c/2)·nb updates every
// column right of the window with all c/2 panels at once (the bandwidth saving of a larger block).
// The next window starts at W + (c/2)·nb, so its first c/2 columns were finished by fine updates
// and the rest by the coarse one. Windows overlap by half, which is why this is "not a subset of
// the traditional recursive blocking". One-level is the special case of a window reaching column n.
#pragma once

#include "factorizations/dense/lu_options.hpp"

#include <cstdint>
#include <vector>

namespace gpufact::dense {

struct LuStep {
  std::int64_t j0 = 0, j1 = 0;  // panel columns [j0, j1); its rows are [j0, m)
  // Fine update with this panel: U12 and A22 on columns [j1, fine_end).
  std::int64_t fine_end = 0;
  // Coarse update after this panel when coarse_k0 < j1: columns [fine_end, n) with the panels of
  // columns [coarse_k0, j1) (the U12 rows [coarse_k0, j1) and L21 rows [j1, m)).
  std::int64_t coarse_k0 = 0;
  bool has_coarse() const { return coarse_k0 < j1; }
};

// Steps for an m × n matrix; the panels cover columns [0, min(m, n)).
std::vector<LuStep> lu_schedule(std::int64_t m, std::int64_t n, const LuOptions& o);

// The GPU-resident recursive panel (LuOptions::panel_leaf): the panel's columns [j0, j1) split
// into a left part of panel_split(width, leaf) columns and the rest, recursively, until a part has
// at most `leaf` columns. panel_leaves lists the leaves left to right (the order they are
// factored); leaf <= 0 gives the whole panel as one leaf.
struct PanelLeaf {
  std::int64_t c0 = 0, c1 = 0;
};
std::vector<PanelLeaf> panel_leaves(std::int64_t j0, std::int64_t j1, std::int64_t leaf);
std::int64_t panel_split(std::int64_t width, std::int64_t leaf);  // width > leaf > 0

}  // namespace gpufact::dense
