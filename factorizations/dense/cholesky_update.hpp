// Device pieces shared by the hybrid and the GPU-resident Cholesky: the trailing update of a set
// of columns (lower triangle only, in the column blocks of CholeskyOptions::update_block), and the
// lower triangle moved between pinned host memory and the device as rectangles (volkov08 §5).
#pragma once

#include "factorizations/dense/cholesky_host.hpp"
#include "factorizations/dense/phase_timer.hpp"
#include "factorizations/dense/staging.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::dense {

// A(i, j) −= Σ_{k0 <= p < k1} L(i, p)·L(j, p) for columns j in [c0, c1) and rows i in [j, n) of
// the column-major n × n device matrix `d` (L = its columns [k0, k1), rows [c0, n), already
// final). Per UpdateBlock: the diagonal square's lower triangle by cuBLAS syrk (gemm = cublas) or
// gpufact's triangular SGEMM (gemm = simt, FP32 only), the rectangle below by the update GEMM.
// The strict upper triangle is never written. `blas` must be bound to `s`. Timed as gpu_compute.
template <class T>
void cholesky_update_columns(DeviceMatrix<T> d, std::int64_t k0, std::int64_t k1, std::int64_t c0, std::int64_t c1,
                             const CholeskyOptions& o, cublasHandle_t blas, cudaStream_t s, PhaseTimer* timer);
// The same with L's k columns read from elsewhere: L(i, p) at l + (i − l_row0) + p·ldl for rows
// i >= l_row0 (c0 >= l_row0) — the GPU-resident driver's out-of-place L21 before it is copied in.
template <class T>
void cholesky_update_columns(DeviceMatrix<T> d, const T* l, std::int64_t ldl, std::int64_t l_row0, std::int64_t k,
                             std::int64_t c0, std::int64_t c1, const CholeskyOptions& o, cublasHandle_t blas,
                             cudaStream_t s, PhaseTimer* timer);

// The lower triangle of columns [c0, n) between the column-major host `a` (lda) and `d`, as
// rectangles rows [cb, n) × columns [cb, cb + width) (the strict upper part of each block's
// diagonal square travels along unchanged: on the device nothing writes it). Timed as transfer.
template <class T>
void upload_lower(const T* a, std::int64_t lda, DeviceMatrix<T> d, std::int64_t c0, std::int64_t width,
                  cudaStream_t s, PhaseTimer* timer);
template <class T>
void download_lower(DeviceMatrix<T> d, T* a, std::int64_t lda, std::int64_t c0, std::int64_t width, cudaStream_t s,
                    PhaseTimer* timer);

}  // namespace gpufact::dense
