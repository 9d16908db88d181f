// The cluster LU panel (panel_coop.cuh) never moves a row while it factors: it records, per
// column j, the panel row chosen as pivot (piv[j]). These turn that record into LAPACK's
// sequential interchanges and each row's final place. Host and device share this code.
#pragma once

#include "kernels/common/host_device.hpp"

#include <cstdint>

namespace gpufact::kernels {

// Replays the interchanges as LAPACK's sequential swaps: position j takes the row chosen for
// column j (piv[j], distinct rows); the row it held goes where that one was. Only rows of the
// first b positions ever move other than by being chosen, so two maps of b entries suffice:
// cur (position -> row, positions < b) and pos_of (row -> position, rows < b), both written
// here. ipiv (b entries, 1-based, may be null) receives the interchanges, plus ipiv_offset (pivots
// counted from a row ipiv_offset above the panel's first).
GPUFACT_HOST_DEVICE inline void replay_interchanges(const int* piv, int* cur, int* pos_of, int b, std::int64_t* ipiv,
                                                    std::int64_t ipiv_offset = 0) {
  for (int k = 0; k < b; ++k) cur[k] = k, pos_of[k] = k;
  for (int j = 0; j < b; ++j) {
    const int q = piv[j], p = q < b ? pos_of[q] : q, r = cur[j];
    if (ipiv != nullptr) ipiv[j] = ipiv_offset + p + 1;
    if (p < b) cur[p] = r;
    pos_of[r] = p;
    cur[j] = q;
    if (q < b) pos_of[q] = j;
  }
}

// Where panel row `row` ends: the column it was chosen for (chosen >= 0), else where the replay
// left it (pos_of from replay_interchanges).
GPUFACT_HOST_DEVICE inline int final_row(int chosen, int row, int b, const int* pos_of) {
  return chosen >= 0 ? chosen : (row < b ? pos_of[row] : row);
}

}  // namespace gpufact::kernels
