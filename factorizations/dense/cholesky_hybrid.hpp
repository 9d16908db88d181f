// volkov08 §5 hybrid Cholesky (lower): the panel on the CPU — OpenBLAS potrf of the nb × nb
// diagonal block and trsm of the column block below it, as the paper ("in our implementation
// triangular solve in Cholesky is also done on the CPU") — and the trailing update on the GPU
// (syrk/GEMM through CholeskyOptions::gemm), with look-ahead: the GPU first updates the next
// panel's columns and sends them down, the CPU factors that panel while the GPU updates the rest.
// Panels are downloaded into their final place in the caller's matrix, so nothing else comes back
// at the end (volkov08 §5); the lower triangle goes up once, as rectangles of the transfer model's
// width (triangle_transfer_width).
#pragma once

#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "factorizations/dense/cholesky_host.hpp"
#include "factorizations/dense/lookahead.hpp"
#include "factorizations/dense/phase_timer.hpp"

#include <cstddef>
#include <cstdint>

namespace gpufact::dense {

template <class T>
class CholeskyHybridWorkspace {
 public:
  CholeskyHybridWorkspace(std::int64_t n, const CholeskyOptions& o);
  std::int64_t n, ld, transfer_width;
  CholeskyOptions options;
  DeviceBuffer<T> matrix;  // column-major device copy (ld)
  DeviceBuffer<unsigned long long> first_nonfinite;
  PinnedBuffer<unsigned long long> host_first_nonfinite;
  LookaheadStreams streams;
  Event upload_done{cudaEventDisableTiming};  // the first panel's columns are on the device
  CublasHandle panel_blas, update_blas;
};

std::size_t cholesky_hybrid_device_bytes(std::int64_t n, const CholeskyOptions& o, std::size_t element_bytes);

// LAPACK potrf semantics (lower) on `a`: column-major n × n in pinned host memory (lda >=
// max(1, n)), lower triangle overwritten by L, strict upper triangle untouched; returns info (0, or
// the order of the first leading minor that is not positive definite; the factorization stops
// there). Enqueued after the work on `stream`; returns when done. Throws std::invalid_argument on
// bad sizes or NaN/Inf in the lower triangle (found on the device). `timer`: the Fig. 10 breakdown.
template <class T>
int cholesky_hybrid(std::int64_t n, T* a, std::int64_t lda, CholeskyHybridWorkspace<T>& ws, cudaStream_t stream,
                    PhaseTimer* timer = nullptr);

}  // namespace gpufact::dense
