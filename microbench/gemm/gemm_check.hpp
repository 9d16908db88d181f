// Host checks of GEMM results too large for a full double-precision reference (volkov08 §4
// experiments): a sample of entries computed exactly in double against the componentwise bound,
// a normwise comparison of all of C with another implementation, and, for block-triangular C
// (volkov08 §4.2), that nothing outside the triangle changed.
#pragma once

#include "core/linalg/blas_types.hpp"
#include "core/linalg/matrix_view.hpp"

#include <cstdint>

namespace gpufact::microbench {

// Which entries of C the operation writes: all, or one triangle with its diagonal.
enum class Written { all, lower, upper };

bool is_written(Written w, std::int64_t i, std::int64_t j);

// max over checked (i, j) of |C − (α op(A) op(B) + β C₀)|_ij / (ε (|α| |op(A)| |op(B)| + |β| |C₀|)_ij),
// each entry's dot product and bound accumulated in double. Rounding alone keeps it below
// k + 2 (γ_k-style bound, as gemm_error in core/linalg/residual.hpp). When `samples` is at least
// the number of written entries every written entry is checked; otherwise `samples` written
// entries drawn with `seed`. NaN/Inf in a checked entry gives +inf.
double sampled_gemm_error(Op ta, Op tb, MatrixView<const float> a, MatrixView<const float> b,
                          MatrixView<const float> c0, MatrixView<const float> c, float alpha, float beta,
                          Written written, std::int64_t samples, std::uint64_t seed);

// ‖C − C_ref‖_F / (ε ‖C_ref‖_F) over the written entries (0 when both are zero; +inf for NaN/Inf).
// Two correct FP32 GEMMs differ by far less than k + 2 in these units; one wrong tile or column
// shows up as a relative difference of order tile/size, i.e. 10⁴–10⁶.
double normwise_difference(MatrixView<const float> c, MatrixView<const float> c_ref, Written written);

// Entries outside the written part whose bits differ between C₀ and C.
std::int64_t changed_outside(MatrixView<const float> c0, MatrixView<const float> c, Written written);

}  // namespace gpufact::microbench
