// The GPU-resident Cholesky (lower): the matrix stays in device memory and the panels are factored
// on the GPU too — the nb × nb diagonal block by cusolverDnXpotrf, by recursion
// (cholesky_diagonal.hpp) or by the fused one-CTA kernel that writes L11 and inv(L11) in one
// launch (CholeskyOptions::diagonal), then L21 = A21 · inv(L11)ᵀ by one GEMM (inv(L11) from the
// fused kernel, or from a trsm on the identity: CholeskyOptions::inverse_trsm, as the LU's U12),
// or cuBLAS trsm — with look-ahead on two streams: the next panel's columns are updated
// first on the high-priority panel stream and factored there while the update stream runs the
// rest of the trailing update (CholeskyOptions::update_block: a few big syrk + GEMM calls per
// step). The modern variant beside the paper's hybrid. CholeskyDiagonal::dataflow replaces the
// whole loop: one tile dataflow launch per column panel (kernels/dense/potrf_dataflow), one syrk
// between panels.
#pragma once

#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "factorizations/dense/cholesky_host.hpp"
#include "factorizations/dense/lookahead.hpp"
#include "factorizations/dense/phase_timer.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpufact::dense {

template <class T>
class CholeskyResidentWorkspace : public ResidentContext {
 public:
  CholeskyResidentWorkspace(std::int64_t n, const CholeskyOptions& o);
  std::int64_t n, ld, transfer_width;
  CholeskyOptions options;
  DeviceBuffer<T> matrix;  // for calls from host memory (allocated on first use)
  // One per panel (cusolver, recursive: 1-based within the panel); fused: infos[0] for the whole
  // matrix (1-based in it). Zeroed once per factorization, read once at its end.
  DeviceBuffer<int> infos;
  // inv(L11) (nb × nb; fused: zeroed once, its strict upper triangle stays zero) and
  // A21·inv(L11)ᵀ out of place (two n × nb buffers, alternate panels)
  DeviceBuffer<T> inverse, l21;
  DeviceBuffer<T> diagonal_scratch;  // fused with nb > 128: potrf_diagonal_fused's scratch
  // dataflow: one completion flag per tile of the widest panel (zeroed once; each launch marks
  // its tiles with the next epoch) and the launch's tile ticket.
  DeviceBuffer<int> dataflow_flags;
  DeviceBuffer<unsigned> dataflow_ticket;
  int dataflow_epoch = 0;
  PinnedBuffer<int> host_infos;
};

std::size_t cholesky_gpu_resident_device_bytes(std::int64_t n, const CholeskyOptions& o, std::size_t element_bytes,
                                               bool with_matrix);

// potrf semantics (lower) on the device matrix d_a (column-major, ldda >= max(1, n)): lower
// triangle overwritten by L, strict upper triangle untouched; returns info as LAPACK's (the
// panels after a failing one are still processed, their contents then undefined as LAPACK's).
// Returns when done. Throws std::invalid_argument on NaN/Inf in the lower triangle.
template <class T>
int cholesky_gpu_resident(std::int64_t n, T* d_a, std::int64_t ldda, CholeskyResidentWorkspace<T>& ws,
                          cudaStream_t stream, PhaseTimer* timer = nullptr);

// The same from pinned host memory (lda): the lower triangle up into ws.matrix and back down as
// rectangles of triangle_transfer_width (the strict upper triangle of `a` is unchanged), timed.
template <class T>
int cholesky_gpu_resident_host(std::int64_t n, T* a, std::int64_t lda, CholeskyResidentWorkspace<T>& ws,
                               cudaStream_t stream, PhaseTimer* timer = nullptr);

}  // namespace gpufact::dense
