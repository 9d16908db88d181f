// volkov08 §3.8 eq. (2): each BLAS1/BLAS2 call of LAPACK's getf2 costs a startup time plus the
// bytes it must move (inputs read once, outputs written once) over the sustained bandwidth.
#pragma once

#include <cstdint>

namespace gpufact::microbench {

struct Getf2Model {
  double calls = 0;    // isamax, sswap, sscal per column and sger per column but the last
  double bytes = 0;    // bytes the ideal calls move
  double seconds = 0;  // calls × startup + bytes / bandwidth
};

// m × n panel, m >= n; startup in seconds, bandwidth in bytes/s.
Getf2Model getf2_model(std::int64_t m, std::int64_t n, double startup_s, double bandwidth_bytes_per_s);

// Leading-order flops of getrf on an m × n panel (m >= n): m n² − n³/3.
double getf2_flops(std::int64_t m, std::int64_t n);

}  // namespace gpufact::microbench
