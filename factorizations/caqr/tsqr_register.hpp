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
// factored by one launch (leaves and tree), the trailing columns get its Qᵀ (one launch for the
// leaves, one per tree level), and Q is formed by applying the panels in reverse order to the
// identity. A is m × n (m ≥ n ≥ 1), only read; run writes Q (m × n) and R (n × n, zeros below).
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
  };
  std::int64_t m_, n_;
  std::vector<Panel> panels_;
  DeviceBuffer<T> work_, stacks_, tau_;
  DeviceBuffer<unsigned> counters_;
};

}  // namespace gpufact::factorizations
