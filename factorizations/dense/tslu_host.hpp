// Host replay of the GPU TSLU (kernels/lu/tslu.cuh; Grigori, Demmel, Xiang, CALU §2): the same
// tournament (row blocks of kTsluBlockRows, tslu_fan_in(b) sets per tree node, sets stacked in
// order, pivot search by largest |value| with ties to the first row of the stack), the same
// arithmetic in the same order (l = x·(1/pivot) as LAPACK getf2, then fma updates), so it finds exactly the GPU's
// pivot rows and the same factors. Builds and runs without a GPU.
#pragma once

#include <cstdint>
#include <vector>

namespace gpufact::dense {

// The tournament's winners: panel rows (0-based) of the m × b column-major panel a, in the order
// the last getf2 pivoted them; min(m, b) of them. a is not modified.
template <class T>
std::vector<std::int64_t> tslu_pivot_rows(std::int64_t m, std::int64_t b, const T* a, std::int64_t lda);

// Sequential interchanges (LAPACK ipiv, 1-based) that bring pivot_rows[k] to row k, k = 0, 1, ...
std::vector<std::int64_t> interchanges_from_pivot_rows(const std::vector<std::int64_t>& pivot_rows);

// launch_tslu on the host: a (m × b, lda) overwritten by L and U, ipiv[0 .. min(m, b)) 1-based;
// returns info (first exactly zero U(k, k), 1-based; 0 if none). 1 <= b <= kTsluMaxWidth.
template <class T>
int tslu_host(std::int64_t m, std::int64_t b, T* a, std::int64_t lda, std::int64_t* ipiv);

}  // namespace gpufact::dense
