// The blocked Householder QR of volkov08 §5 on the host, with the GPU versions' panels and order:
// per stage, geqrf + larft on the panel, then the trailing matrix C ← (I − V T Vᵀ)ᵀ C as three
// GEMMs (W = VᵀC, W = TᵀW, C −= VW) with V copied, its upper triangle zero-filled and its unit
// diagonal explicit (the paper's trick: plain GEMMs apply the block reflector). CI checks it
// against LAPACK geqrf / orgqr; the GPU variants are checked against it.
#pragma once

#include <cstdint>
#include <vector>

namespace gpufact::dense {

// LAPACK geqrf semantics: a (m × n, lda >= max(1, m), m >= n) overwritten by R and the
// Householder vectors, tau (n). `widths` is the panel plan (qr_block_plan.hpp; sums to n).
// Throws std::invalid_argument on bad sizes or a bad plan.
template <class T>
void qr_host_blocked(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* tau,
                     const std::vector<std::int64_t>& widths);

// LAPACK orgqr semantics for qr_host_blocked's output: a (m × n) overwritten by the explicit Q,
// built by applying the blocks of `widths` in reverse to the first n columns of the identity.
template <class T>
void qr_host_form_q(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, const T* tau,
                    const std::vector<std::int64_t>& widths);

// V (rows × w, ld rows) ← the panel's vectors with zeros above and ones on the diagonal.
template <class T>
void zero_filled_reflectors(std::int64_t rows, std::int64_t w, const T* panel, std::int64_t ldp, T* v);

// C (rows × cols) ← (I − V T Vᵀ)ᵀ C (transpose = true) or (I − V T Vᵀ) C, V zero-filled
// (rows × w, ld rows), T (w × w, ld w, zeros below the diagonal), work 2·w·cols.
template <class T>
void apply_block_reflector_host(bool transpose, std::int64_t rows, std::int64_t cols, std::int64_t w, const T* v,
                                const T* t, T* c, std::int64_t ldc, T* work);

}  // namespace gpufact::dense
