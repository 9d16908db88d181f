// Seeded random inputs. Every run draws a fresh seed (recorded in its result), never zeros.
#pragma once

#include "core/linalg/matrix_view.hpp"

#include <cstdint>

namespace gpufact {

// A fresh 64-bit seed from the OS entropy source mixed with the clock.
std::uint64_t fresh_seed();

// Uniform entries in [lo, hi), column by column; the padding below rows is left untouched.
template <class T>
void fill_uniform(MatrixView<T> a, std::uint64_t seed, T lo = T(-1), T hi = T(1));

// The paper's SPD test matrix (volkov08 §6): A = 0.001·I + XᵀX with X uniform in [-1, 1).
template <class T>
void fill_spd(MatrixView<T> a, std::uint64_t seed);

}  // namespace gpufact
