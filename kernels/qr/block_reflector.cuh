// The small kernels of the blocked Householder QR (volkov08 §5) around its GEMMs: the zero-filled
// copy of a panel's reflectors (so that plain GEMMs apply I − V T Vᵀ), the triangular factor T of
// the block reflector (LAPACK larft, forward, columnwise) from the Gram matrix VᵀV, and the
// identity columns an in-place explicit Q starts from. Column-major throughout.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

// The widest panel launch_larft_from_gram takes (one thread per row of T, one CTA).
constexpr int kMaxLarftWidth = 1024;

// v (rows × w, ldv >= rows) ← the panel's entries below the diagonal, ones on it, zeros above;
// the `copy` columns right of the panel follow unchanged (v then holds [V C], so that one GEMM
// forms VᵀV and VᵀC together).
void launch_zero_filled_reflectors(const float* panel, std::int64_t ldp, std::int64_t rows, std::int64_t w, float* v,
                                   std::int64_t ldv, cudaStream_t stream, std::int64_t copy = 0);
void launch_zero_filled_reflectors(const double* panel, std::int64_t ldp, std::int64_t rows, std::int64_t w,
                                   double* v, std::int64_t ldv, cudaStream_t stream, std::int64_t copy = 0);

// t (w × w, ldt >= w) ← larft's T for reflectors with Gram matrix gram = VᵀV (w × w, ldg >= w; only
// the strictly upper part is read) and scalars tau (w), all on the device; zeros below the
// diagonal. The recurrence T(0:i, i) = −tau_i · T(0:i, 0:i) · gram(0:i, i), T(i, i) = tau_i, by
// 16 × 16 diagonal blocks merged pairwise: in shared memory with T and G together where they
// fit (w <= 208 in FP32, 144 in FP64 with Hopper's 227 KiB), else T built in place in `t`, else
// (no room for the merges' scratch) column by column with a thread per row; one block each way.
// Throws std::invalid_argument for w > kMaxLarftWidth.
void launch_larft_from_gram(const float* gram, std::int64_t ldg, const float* tau, std::int64_t w, float* t,
                            std::int64_t ldt, cudaStream_t stream);
void launch_larft_from_gram(const double* gram, std::int64_t ldg, const double* tau, std::int64_t w, double* t,
                            std::int64_t ldt, cudaStream_t stream);

// a(i, j) ← (i == j) for rows i < m and columns j0 <= j < j1. From 2²² entries, or always with
// by_memset, a memset of the columns and a launch for their ones; below, one kernel (one launch
// on a panel chain, but under half the memset's bandwidth: beside other streams CAQR's 110592 ×
// 32 column groups of Q took 18–50 µs that way on the H100, so it passes by_memset).
void launch_set_identity_columns(float* a, std::int64_t lda, std::int64_t m, std::int64_t j0, std::int64_t j1,
                                 cudaStream_t stream, bool by_memset = false);
void launch_set_identity_columns(double* a, std::int64_t lda, std::int64_t m, std::int64_t j0, std::int64_t j1,
                                 cudaStream_t stream, bool by_memset = false);

}  // namespace gpufact::kernels
