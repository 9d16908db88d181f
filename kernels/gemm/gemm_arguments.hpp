// Argument checks shared by the GEMM launchers: BLAS's rules (sizes ≥ 0, leading dimensions at
// least the rows they hold, at least 1) and the grid limits, as std::invalid_argument naming the
// routine and the parameter.
#pragma once

#include "core/linalg/blas_types.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>

namespace gpufact::kernels {

inline void check_gemm_arguments(const char* routine, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                                 std::int64_t lda, std::int64_t ldb, std::int64_t ldc) {
  const auto fail = [&](const std::string& what) { throw std::invalid_argument(std::string(routine) + ": " + what); };
  if (ta != Op::N && ta != Op::T) fail("transa must be N or T");
  if (tb != Op::N && tb != Op::T) fail("transb must be N or T");
  if (m < 0) fail("m = " + std::to_string(m) + " must be >= 0");
  if (n < 0) fail("n = " + std::to_string(n) + " must be >= 0");
  if (k < 0) fail("k = " + std::to_string(k) + " must be >= 0");
  const auto at_least = [](std::int64_t rows) { return rows > 1 ? rows : std::int64_t{1}; };
  const std::int64_t a_rows = ta == Op::N ? m : k, b_rows = tb == Op::N ? k : n;
  if (lda < at_least(a_rows)) fail("lda = " + std::to_string(lda) + " < max(1, " + std::to_string(a_rows) + ")");
  if (ldb < at_least(b_rows)) fail("ldb = " + std::to_string(ldb) + " < max(1, " + std::to_string(b_rows) + ")");
  if (ldc < at_least(m)) fail("ldc = " + std::to_string(ldc) + " < max(1, " + std::to_string(m) + ")");
}

// CUDA's grid limits: x < 2^31, y and z <= 65535.
inline void check_grid(const char* routine, std::int64_t x, std::int64_t y, std::int64_t z) {
  if (x > 2147483647 || y > 65535 || z > 65535)
    throw std::invalid_argument(std::string(routine) + ": grid " + std::to_string(x) + " × " + std::to_string(y) +
                                " × " + std::to_string(z) + " exceeds CUDA's limits (x < 2^31, y, z <= 65535)");
}

}  // namespace gpufact::kernels
