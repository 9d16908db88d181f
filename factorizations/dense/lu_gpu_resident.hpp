// The GPU-resident LU: the matrix stays in device memory (column-major, LAPACK's layout) and the
// panels are factored on the GPU too (cusolverDnXgetrf on the panel's columns), with the same
// look-ahead on two streams: panel j+1 is factored while the rest is updated with panel j (the
// next panel's columns on the high-priority panel stream, the rest on the update stream, each
// with its own interchanges and U12). U12 = inv(L11) · A12 by one GEMM per stream and step
// (LuOptions::inverse_trsm, volkov08 §5: cuBLAS trsm runs far below the GEMM rate; inv(L11) by a
// trsm on the nb × nb identity right after the panel), or by cuBLAS trsm; updates through the update-GEMM table;
// the panel optionally recursive (LuOptions::panel_leaf), its leaves by cuSOLVER or by TSLU with
// tournament pivoting (LuOptions::panel, kernels/lu/tslu.cuh: no global synchronization per
// column) or by one thread block cluster holding the leaf on chip (kernels/lu/panel_coop.cuh: one
// exchange of candidate rows per column inside the cluster, 16 SMs). The modern variant beside
// the paper's hybrid: a 16-core host against a 60 TFLOP/s GPU.
#pragma once

#include "core/cuda/buffer.hpp"
#include "core/cuda/graph.hpp"
#include "core/cuda/handles.hpp"
#include "factorizations/dense/lookahead.hpp"
#include "factorizations/dense/lu_options.hpp"
#include "factorizations/dense/lu_schedule.hpp"
#include "factorizations/dense/phase_timer.hpp"

#include <cstddef>
#include <cstdint>
#include <tuple>
#include <vector>

namespace gpufact::dense {

template <class T>
class LuResidentWorkspace : public ResidentContext {
 public:
  // Uses o.nb, o.lookahead, o.gemm, o.inverse_trsm, o.panel_leaf (0: one cuSOLVER getrf per
  // panel, which blocks inside it; > 0: the recursive panel) and o.panel (tournament: TSLU leaves
  // of effective_panel_leaf(o) columns; cooperative: each panel its own leaf, leaf_for).
  LuResidentWorkspace(std::int64_t m, std::int64_t n, const LuOptions& o);
  // The leaf width step i of lu_schedule(m, n, options) is factored with (0: the whole panel).
  std::int64_t leaf_for(std::size_t i) const { return step_leaf[i]; }
  std::int64_t m, n, ld;
  LuOptions options;
  std::vector<LuStep> steps;  // lu_schedule(m, n, options)
  std::vector<std::int64_t> step_leaf;  // leaf_for, per step
  DeviceBuffer<T> matrix;  // for calls from host memory
  DeviceBuffer<std::int64_t> ipiv;
  DeviceBuffer<int> infos;  // one per panel
  DeviceBuffer<std::byte> tslu_work;  // panel = tournament: candidates and tree counters (largest leaf)
  // inverse_trsm: inv(L11) of three consecutive panels (nb × nb each, ld nb; the update stream may
  // still read panel i's while panel i + 2's is made), and U12 = inv(L11)·A12 out of place
  // (nb × n, ld nb, indexed by the matrix column, so the two streams' column ranges never meet).
  DeviceBuffer<T> inverse, u12;
  PinnedBuffer<std::int64_t> host_ipiv;
  PinnedBuffer<int> host_infos;
  // Interchanges on finished columns, off the panel and update chains (lowest priority).
  PriorityStream aux{false};
  Event aux_start{cudaEventDisableTiming}, aux_done{cudaEventDisableTiming};
  // LuOptions::graph: the factorization captured per matrix (pointer, leading dimension), kernels
  // keeping their streams' priorities; call_done: what the host waits on at the end of every call.
  GraphReplay<std::tuple<const T*, std::int64_t>> graph{cudaGraphInstantiateFlagUseNodePriority};
  Event call_done{cudaEventDisableTiming};
};

std::size_t lu_gpu_resident_device_bytes(std::int64_t m, std::int64_t n, const LuOptions& o,
                                         std::size_t element_bytes, bool with_matrix);

// getrf semantics on the device matrix d_a (column-major, ldda >= max(1, m)); ipiv (host,
// min(m, n) entries, 1-based) and the returned info as LAPACK's. Returns when done. Throws
// std::invalid_argument on NaN/Inf in the input. With ws.options.graph (and no timer) the first
// call for d_a and ldda captures the launches and every call replays them.
template <class T>
int lu_gpu_resident(std::int64_t m, std::int64_t n, T* d_a, std::int64_t ldda, int* ipiv, LuResidentWorkspace<T>& ws,
                    cudaStream_t stream, PhaseTimer* timer = nullptr);

// The same from pinned host memory (lda): upload into ws.matrix, factor, download, all timed.
template <class T>
int lu_gpu_resident_host(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, int* ipiv,
                         LuResidentWorkspace<T>& ws, cudaStream_t stream, PhaseTimer* timer = nullptr);

}  // namespace gpufact::dense
