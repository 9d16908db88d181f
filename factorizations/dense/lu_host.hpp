// The blocked LU of lu_hybrid.hpp on the host, in plain C++ over OpenBLAS: same panels, same
// order, the same inverse-instead-of-trsm and the same two-level schedule (lu_schedule.hpp), so
// CI checks the algorithm against LAPACK without a GPU.
#pragma once

#include "factorizations/dense/lu_options.hpp"

#include <cstdint>

namespace gpufact::dense {

// LAPACK getrf semantics: column-major m × n `a` (lda >= max(1, m)) overwritten by L (unit lower,
// below the diagonal) and U; ipiv[0 .. min(m, n)) 1-based row interchanges; returns info: 0, or
// the 1-based column of the first exactly zero pivot (the factorization is still completed).
// Only nb, two_level, coarse_factor and inverse_trsm matter on the host. Throws
// std::invalid_argument on bad sizes or a NaN/Inf in `a`.
template <class T>
int lu_blocked_host(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, int* ipiv, const LuOptions& o);

// inv(L) of the unit-lower w × w block `l` (ld ldl; its diagonal and upper part are not read),
// written as a full w × w column-major matrix (ld w) with the unit diagonal and zeros above it,
// ready for a GEMM (volkov08 §5: "the inverse is computed on the CPU").
template <class T>
void unit_lower_inverse(std::int64_t w, const T* l, std::int64_t ldl, T* inverse);

}  // namespace gpufact::dense
