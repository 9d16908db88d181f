// volkov08.fig7 with factorization = qr (dense_experiments.cpp dispatches here): hybrid (CPU panel,
// volkov08 §5), GPU-resident, cuSOLVER (cusolverDnXgeqrf + orgqr) and OpenBLAS; metric
// "qr/flop_rate" (4n³/3 for the R factorization), explicit Q timed apart as "qr_q/..." where it can
// be repeated; every case forms Q and checks ‖A − QR‖₁/(‖A‖₁ n ε) < 30 and ‖I − QᵀQ‖₁/(n ε) < 30.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpufact {
class Case;
namespace dense {

void run_qr_fig7(Case& c);

// The `applies` rule for the QR cases: methods and data as for LU, and no LU-only axis moved.
bool qr_fig7_applies(const std::string& method, const std::string& data, std::int64_t n, std::int64_t leaf,
                     const std::string& u12);

}  // namespace dense
}  // namespace gpufact
