// TSQR of a panel up to 32 columns with register-resident blocks (kernels/qr/tsqr_register.cuh):
// the tree shape and a plan that owns its workspace. One factor launch covers the leaves and the
// whole tree; the explicit Q takes one launch per tree level.
//
// Contract: A is m × n column-major on the device, m ≥ n, 1 ≤ n ≤ 32, lda ≥ m; it is only read.
// factor writes R (n × n, zeros below the diagonal); form_q then writes Q (m × n, orgqr
// semantics) from the representation the plan keeps. No call allocates or synchronizes.
#pragma once

#include "core/cuda/buffer.hpp"
#include "kernels/qr/tsqr_register.cuh"
#include "kernels/qr/wy_apply.cuh"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpufact::factorizations {

// The tree for m × n with leaves of at most block_rows rows: ⌈m / block_rows⌉ leaves of
// ⌊m/leaves⌋ or ⌈m/leaves⌉ rows, fan_in = block_rows / n R's per node, levels until one node.
// Throws std::invalid_argument when m < n, n is outside 1 … 32, or a leaf would hold fewer
// than n rows.
kernels::TsqrTreeArgs make_tsqr_tree(std::int64_t m, std::int64_t n, int block_rows);

// Elements of the tree's stacks, taus and arrival counters.
struct TsqrTreeSizes {
  std::size_t stacks = 0, tau = 0, counters = 0;
};
TsqrTreeSizes tsqr_tree_sizes(const kernels::TsqrTreeArgs& tree);

// The tree's reflector blocks as compact-WY block sets (kernels/qr/wy_apply.cuh): the leaves
// (split rows of v, ldv) first, then each level's nodes (stacks, rows gathered from the
// children). v, stacks and tau as launch_tsqr_register_factor wrote them.
template <class T>
std::vector<kernels::WyBlocks<T>> tsqr_wy_levels(const kernels::TsqrTreeArgs& tree, const T* v, std::int64_t ldv,
                                                 const T* stacks, const T* tau);

template <class T>
class TsqrRegisterPlan {
 public:
  TsqrRegisterPlan(std::int64_t m, std::int64_t n);
  const kernels::TsqrTreeArgs& tree() const { return tree_; }
  static std::size_t workspace_bytes(std::int64_t m, std::int64_t n);

  void factor(const T* a, std::int64_t lda, T* r, std::int64_t ldr, cudaStream_t s);
  void form_q(T* q, std::int64_t ldq, cudaStream_t s);

 private:
  kernels::TsqrTreeArgs tree_;
  DeviceBuffer<T> v_, stacks_, q_stacks_, tau_;
  DeviceBuffer<unsigned> counters_;
};

// CAQR (anderson10 §IV) built from register TSQR panels of up to 32 columns: each panel is
// factored by one launch (leaves and tree), the trailing columns get its Qᵀ, and Q is formed by
// applying the panels in reverse order to the identity. An application whose leaves, split into
// 64-row chunks, fit in one wave (at most 3 thread blocks per SM) runs the split compact-WY apply
// (kernels/qr/wy_apply.cuh: two launches per level, chunks side by side); a larger one the
// register kernels (one launch per level, a reflector chain per block), which keep more work
// per SM. Measured on the H200 (8192 rows, FP32): the split apply took fig8's n = 64 from 0.271
// to 0.214 ms but n = 512 from 2.75 to 2.96 when used everywhere, 110592 × 100 from 1.31 to 1.96.
// A is m × n (m ≥ n ≥ 1), only read; run writes Q (m × n) and R (n × n, zeros below).
template <class T>
class CaqrRegisterPlan {
 public:
  CaqrRegisterPlan(std::int64_t m, std::int64_t n);
  static std::size_t workspace_bytes(std::int64_t m, std::int64_t n);
  void run(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r, std::int64_t ldr, cudaStream_t s);

 private:
  struct Panel {
    std::int64_t col0 = 0;
    kernels::TsqrTreeArgs tree;
    std::size_t stack_offset = 0, tau_offset = 0;
    std::vector<kernels::WyBlocks<T>> levels;  // leaves, then the tree levels
  };
  // x (rows from the panel's first row, `cols` columns) ← Qᵀx (transpose) or Qx for panel p:
  // the leaves then the levels upwards, or the other way.
  void apply(const Panel& p, T* x, std::int64_t ldx, std::int64_t cols, bool transpose, cudaStream_t s);
  std::int64_t m_, n_;
  int sm_count_ = 0;
  std::vector<Panel> panels_;
  DeviceBuffer<T> work_, stacks_, tau_, apply_workspace_;
  DeviceBuffer<unsigned> counters_;
};

}  // namespace gpufact::factorizations
