#include "factorizations/dense/lu_schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpufact::dense {

void validate(const LuOptions& o) {
  if (o.nb < 1 || o.nb > 512) throw std::invalid_argument("nb = " + std::to_string(o.nb) + " is outside 1..512");
  if (o.two_level && (o.coarse_factor < 2 || o.coarse_factor % 2 != 0 || o.coarse_factor > 64))
    throw std::invalid_argument("coarse_factor = " + std::to_string(o.coarse_factor) +
                                " must be even and in 2..64");
}

std::string describe(const LuOptions& o) {
  std::string s = "nb=" + std::to_string(o.nb);
  s += o.row_major ? " row_major" : " col_major";
  s += o.inverse_trsm ? " inverse" : " trsm";
  s += o.lookahead ? " lookahead" : " no_lookahead";
  s += o.two_level ? " two_level(" + std::to_string(o.coarse_factor) + ")" : " one_level";
  s += std::string(" ") + update_gemm_entry(o.gemm).name;
  return s;
}

double lu_flops(std::int64_t m, std::int64_t n) {
  const double a = static_cast<double>(std::max(m, n)), b = static_cast<double>(std::min(m, n));
  return a * b * b - b * b * b / 3.0;
}

std::vector<LuStep> lu_schedule(std::int64_t m, std::int64_t n, const LuOptions& o) {
  validate(o);
  if (m < 0 || n < 0) throw std::invalid_argument("lu_schedule: negative size");
  const std::int64_t k = std::min(m, n);
  std::vector<LuStep> steps;
  if (!o.two_level) {
    for (std::int64_t j0 = 0; j0 < k; j0 += o.nb)
      steps.push_back({j0, std::min(j0 + o.nb, k), n, n});
    for (auto& s : steps) s.coarse_k0 = s.j1;  // no coarse updates
    return steps;
  }
  const std::int64_t half = o.coarse_factor / 2;
  for (std::int64_t w = 0; w < k; w += half * o.nb) {
    const std::int64_t window_end = std::min(w + o.coarse_factor * o.nb, n);
    for (std::int64_t p = 0; p < half; ++p) {
      const std::int64_t j0 = w + p * o.nb;
      if (j0 >= k) break;
      LuStep s{j0, std::min(j0 + o.nb, k), window_end, 0};
      const bool last_of_window = p == half - 1 || s.j1 == k;
      s.coarse_k0 = last_of_window && window_end < n ? w : s.j1;
      steps.push_back(s);
    }
  }
  return steps;
}

}  // namespace gpufact::dense
