#include "microbench/panel/panel_model.hpp"

#include <stdexcept>

namespace gpufact::microbench {

Getf2Model getf2_model(std::int64_t m, std::int64_t n, double startup_s, double bandwidth_bytes_per_s) {
  if (m < n || n < 1) throw std::invalid_argument("getf2_model: needs m >= n >= 1");
  if (!(bandwidth_bytes_per_s > 0)) throw std::invalid_argument("getf2_model: bandwidth must be positive");
  Getf2Model r;
  const auto M = static_cast<double>(m), N = static_cast<double>(n);
  for (std::int64_t j = 0; j < n; ++j) {
    const double rows = M - static_cast<double>(j);     // rows j..m-1
    const double below = rows - 1;                       // rows below the diagonal
    const double right = N - static_cast<double>(j) - 1;  // trailing columns
    r.bytes += 4 * rows;          // isamax reads the column
    r.bytes += 2 * 2 * 4 * N;     // sswap reads and writes two rows of n words
    r.bytes += 2 * 4 * below;     // sscal reads and writes the column below the diagonal
    r.calls += 3;
    if (j + 1 < n) {              // sger: trailing block read + written, two vectors read
      r.bytes += 2 * 4 * below * right + 4 * below + 4 * right;
      r.calls += 1;
    }
  }
  r.seconds = r.calls * startup_s + r.bytes / bandwidth_bytes_per_s;
  return r;
}

double getf2_flops(std::int64_t m, std::int64_t n) {
  const auto M = static_cast<double>(m), N = static_cast<double>(n);
  return M * N * N - N * N * N / 3;
}

}  // namespace gpufact::microbench
