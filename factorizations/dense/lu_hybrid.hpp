// volkov08 §5 hybrid LU: the panel factored on the CPU (OpenBLAS getrf, all threads), the
// trailing matrix updated on the GPU, with look-ahead, a row-major copy on the GPU, one pivoting
// launch per panel, inv(L11) GEMMs instead of trsm and two-level blocking — each switchable
// (LuOptions) for Fig. 11.
#pragma once

#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "factorizations/dense/lookahead.hpp"
#include "factorizations/dense/lu_options.hpp"
#include "factorizations/dense/phase_timer.hpp"

#include <cstdint>
#include <vector>

namespace gpufact::dense {

// Device and pinned scratch for one (m, n, options) shape, allocated once so timed calls never
// allocate. Device bytes: lu_hybrid_device_bytes().
template <class T>
class LuHybridWorkspace {
 public:
  LuHybridWorkspace(std::int64_t m, std::int64_t n, const LuOptions& o);
  std::int64_t m, n, ld;
  LuOptions options;
  DeviceBuffer<T> matrix;         // the device copy, row- or column-major
  DeviceBuffer<T> stage;          // transposes of panels and matrix chunks (panel stream)
  DeviceBuffer<T> u12_copy;       // A12 before inv(L11) · A12 (panel stream, then update stream)
  DeviceBuffer<T> fine_inverse;   // inv(L11) of the current panel
  DeviceBuffer<T> coarse_inverse; // two buffers: inv(L_K) of the current and the previous window
  DeviceBuffer<unsigned long long> first_nonfinite;
  PinnedBuffer<T> host_fine_inverse, host_coarse_inverse;
  PinnedBuffer<unsigned long long> host_first_nonfinite;
  std::int64_t stage_elements = 0, coarse_width = 0;
  LookaheadStreams streams;
  CublasHandle panel_blas, update_blas;  // for trsm (the GEMMs go through the update-GEMM table)
};

std::size_t lu_hybrid_device_bytes(std::int64_t m, std::int64_t n, const LuOptions& o, std::size_t element_bytes);

// LAPACK getrf semantics on `a`: column-major m × n in pinned host memory (lda >= max(1, m)),
// overwritten by L and U; ipiv[0 .. min(m, n)) 1-based; returns info (first exactly zero pivot,
// 1-based, or 0). Work is enqueued after what is already on `stream`; returns when the result is
// in `a`. Throws std::invalid_argument on bad sizes or NaN/Inf in `a` (found on the device).
// `timer` (optional) receives the Fig. 10 breakdown.
template <class T>
int lu_hybrid(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, int* ipiv, LuHybridWorkspace<T>& ws,
              cudaStream_t stream, PhaseTimer* timer = nullptr);

}  // namespace gpufact::dense
