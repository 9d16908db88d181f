// Operation flags shared by the host (OpenBLAS/LAPACKE) and device (cuBLAS/cuSOLVER) wrappers.
#pragma once

namespace gpufact {

enum class Op { N, T };
enum class Uplo { lower, upper };
enum class Side { left, right };
enum class Diag { non_unit, unit };

// LAPACK's relative machine precision (slamch/dlamch 'E'): half an ulp of 1, i.e. 2^-24 and 2^-53.
template <class T>
constexpr double unit_roundoff();
template <>
constexpr double unit_roundoff<float>() { return 5.9604644775390625e-08; }
template <>
constexpr double unit_roundoff<double>() { return 1.1102230246251565e-16; }

}  // namespace gpufact
