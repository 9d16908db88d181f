#pragma once

namespace gpufact {
class Registry;
namespace factorizations {
// anderson10.fig8 (§V.C), anderson10.fig9 (§V.D) and anderson10.conditioning: R + explicit Q of
// tall-skinny matrices by every method of qr_methods.hpp (cuSOLVER, BLAS2 GPU QR, OpenBLAS,
// CholeskyQR2), each run checked with ‖A − QR‖₁/‖A‖₁ and ‖I − QᵀQ‖₁ against 10 √n ε.
void register_qr_baselines(Registry& registry);
}  // namespace factorizations
}  // namespace gpufact
