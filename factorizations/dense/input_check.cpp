#include "factorizations/dense/input_check.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace gpufact::dense {

template <class T>
void require_finite_matrix(const std::string& routine, std::int64_t m, std::int64_t n, const T* a, std::int64_t lda) {
  if (m < 0 || n < 0)
    throw std::invalid_argument(routine + ": m = " + std::to_string(m) + ", n = " + std::to_string(n) +
                                " must be non-negative");
  if (lda < std::max<std::int64_t>(1, m))
    throw std::invalid_argument(routine + ": lda = " + std::to_string(lda) + " < max(1, m = " + std::to_string(m) + ")");
  if (m > 0 && n > 0 && a == nullptr) throw std::invalid_argument(routine + ": A is null");
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      const T v = a[i + j * lda];
      if (!std::isfinite(v)) {
        std::ostringstream msg;
        msg << routine << ": A(" << i << ", " << j << ") = " << v << "; the input must be finite (no NaN or Inf)";
        throw std::invalid_argument(msg.str());
      }
    }
}

template void require_finite_matrix<float>(const std::string&, std::int64_t, std::int64_t, const float*, std::int64_t);
template void require_finite_matrix<double>(const std::string&, std::int64_t, std::int64_t, const double*,
                                            std::int64_t);

}  // namespace gpufact::dense
