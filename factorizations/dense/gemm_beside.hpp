// The cuBLAS GEMM at the factorization's n, measured in the same case (volkov08 Fig. 7 plots the
// factorizations against SGEMM; issue 5's "≥ 70% of GEMM" is read against it): metric
// gemm/flop_rate (not headline) and "<factorization>/percent_of_gemm" when
// "<factorization>/flop_rate" was measured. Shared by every factorization's fig7 case.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpufact {
class Case;
}

namespace gpufact::dense {

// Device bytes the measurement allocates (three n × n matrices and cuBLAS workspace).
std::size_t gemm_beside_device_bytes(std::int64_t n, std::size_t element_bytes);

// `label` names the factorization in the percent metric's description ("LU", "Cholesky").
template <class T>
void measure_gemm_beside(Case& c, std::int64_t n, const std::string& factorization, const std::string& label);

}  // namespace gpufact::dense
