// Input checks shared by the dense factorizations (issue 5: NaN/Inf in the input is a clear error).
#pragma once

#include <cstdint>
#include <string>

namespace gpufact::dense {

// Throws std::invalid_argument naming the first non-finite entry (row, column, value) of the
// column-major m × n matrix, or a bad size / leading dimension. `routine` prefixes the message.
template <class T>
void require_finite_matrix(const std::string& routine, std::int64_t m, std::int64_t n, const T* a, std::int64_t lda);

}  // namespace gpufact::dense
