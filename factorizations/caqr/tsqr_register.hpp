// TSQR of a panel up to 32 columns with register-resident blocks (kernels/qr/tsqr_register.cuh):
// the tree shape and a plan that owns its workspace. The factorization is one launch, or two (the
// leaves, then the tree); the explicit Q takes one launch per tree level. Where the leaves'
// reflector chains are long, their thin Q's are formed beside the tree's factorization (on the
// plan's own streams); Q's tree levels then go through the compact-WY split apply and its leaves
// are one product each.
//
// Contract: A is m × n column-major on the device, m ≥ n, 1 ≤ n ≤ 32, lda ≥ m; it is only read.
// factor writes R (n × n, zeros below the diagonal); form_q then writes Q (m × n, orgqr
// semantics) from the representation the plan keeps. No call allocates or synchronizes; both
// calls are ordered on the caller's stream (the plan's streams fork from and join it).
#pragma once

#include "core/cuda/buffer.hpp"
#include "core/cuda/stream.hpp"
#include "kernels/qr/tsqr_register.cuh"
#include "kernels/qr/wy_apply.cuh"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace gpufact::factorizations {

// The tree for m × n with leaves of at most block_rows rows: ⌈m / block_rows⌉ leaves of
// ⌊m/leaves⌋ or ⌈m/leaves⌉ rows, fan_in = block_rows / n R's per node, levels until one node.
// Throws std::invalid_argument when m < n, n is outside 1 … 32, or a leaf would hold fewer
// than n rows.
kernels::TsqrTreeArgs make_tsqr_tree(std::int64_t m, std::int64_t n, int block_rows);

// Elements of the tree's stacks, taus and arrival counters, and of its levels' T (each node's
// compact-WY T as launch_wy_larft lays it out, level 1 first).
struct TsqrTreeSizes {
  std::size_t stacks = 0, tau = 0, counters = 0, tree_t = 0;
};
TsqrTreeSizes tsqr_tree_sizes(const kernels::TsqrTreeArgs& tree);

// `count` tree counters (at least one), zeroed: launch_tsqr_register_factor leaves them zero, so
// they are zeroed only here, once, and not before each factorization.
DeviceBuffer<unsigned> zeroed_counters(std::size_t count);

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
  // The leaves' thin Q's (where they pay, see leaf_q_for), formed on side_ beside the tree's
  // factorization on main_; main_ also forms Q: the tree levels by the compact-WY split apply
  // (levels_, apply_workspace_) on Q's leaf tops, then one product per leaf. Neither stream exists
  // otherwise.
  DeviceBuffer<T> leaf_q_, apply_workspace_;
  std::vector<kernels::WyBlocks<T>> levels_;
  DeviceBuffer<unsigned> counters_;
  Stream main_{nullptr}, side_{nullptr};
  Event leaves_factored_{cudaEventDisableTiming}, leaf_q_formed_{cudaEventDisableTiming};
  Event tree_factored_{cudaEventDisableTiming}, q_started_{cudaEventDisableTiming}, q_formed_{cudaEventDisableTiming};
};

// CAQR (anderson10 §IV) built from register TSQR panels of up to 32 columns: each panel is factored
// (the leaves, then the tree, two launches where a panel follows), the trailing columns get its Qᵀ,
// and Q is formed by applying the panels in reverse order to the identity. An application whose
// leaves, split into 64-row chunks, fit in one wave (at most 3 thread blocks per SM) runs the split
// compact-WY apply (kernels/qr/wy_apply.cuh: two launches per level, chunks side by side); a larger
// one the register kernels (one launch per level, a reflector chain per block), which keep more
// work per SM. Measured on the H200 (8192 rows, FP32): the split apply took fig8's n = 64 from
// 0.271 to 0.214 ms but n = 512 from 2.75 to 2.96 when used everywhere, 110592 × 100 from 1.31 to
// 1.96.
//
// The work runs as a task graph on five streams of the plan, forked from and joined to the
// caller's. Only the chain panel p → its Qᵀ on panel p + 1's columns → panel p + 1 is on the
// critical stream (the device's highest priority), but for that Qᵀ's leaves: they run on a side
// stream (one priority level lower) beside panel p's tree, which they do not need. Its Qᵀ on the
// columns past those (look-ahead, volkov08 §5) and Q's column groups (two streams, groups
// alternating) run at the lowest priority, in the SMs that the chain's latency-bound launches leave
// idle (a 32-wide panel's 216 leaves at 110592 rows, then its tree's 14 nodes and its root). Q's
// columns of the panels [g0, g1) are Q_0 … Q_{g1−1} applied to the identity's, which needs only the
// panels up to g1 − 1: each group starts once they are factored, with the flops of the backward
// order. The panels before the last form at most three groups; the last panel is a group of its
// own, the tail after the last factorization. Each group's columns of the identity are set on its
// stream just before its applies (the tail's after the first group), not all at the start, where
// they took bandwidth from the first panel. A single panel of at most 16 columns is a TSQR: its Q
// comes straight from its tree (launch_tsqr_register_form_q), without an identity.
// Measured on one H100 against the one-stream schedule before it (FP32, ms): 110592 × 100
// 1.158 → 1.048, × 256 3.93 → 3.35, × 512 12.41 → 11.25, 8192 × 512 2.25 → 2.17, but 8192 × 256
// 0.983 → 1.013; FP64 110592 × 100 2.20 → 1.85. Q's groups on one stream instead of two:
// 110592 × 100 1.032 against 1.045, × 256 3.50 against 3.34. Leaves by the split apply up to 16
// thread blocks per SM (the near columns and Q's tail then split): 110592 × 100 1.65.
// The first panel is factored straight from A into the plan's copy (one H100, against copying all
// of A first on the critical stream: FP32 110592 × 100 0.969 → 0.953 ms, × 64 0.477 → 0.459,
// 10⁶ × 10 (one panel, no copy left) 0.182 → 0.137; FP64 110592 × 100 1.552 → 1.483), and its Qᵀ
// reads the columns past it from A too where its leaves run the register apply, so A is not
// copied at all (run says what that gained). Otherwise they are copied on the look-ahead stream;
// after a narrow first panel, the columns past the next panel's only once the next panel is
// updated (run says why).
// Each panel's critical update keeps the T of its tree levels, which Q's groups and tail then take
// instead of making it again (run says what it gained).
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
    std::vector<std::size_t> t_offsets;          // per tree level: where tree_t_ keeps its T
  };
  // What a tree level's split apply does with its T: make it (larft's recurrence in every chunk),
  // make it and keep it in tree_t_, or take the kept one.
  enum class TreeT { make, keep, kept };
  // The streams: critical, its side (the next panel's leaf apply beside the factor's tree),
  // look-ahead, Q's groups (two); each applies with its own workspace.
  enum Lane : int { kCritical = 0, kSide = 1, kLookahead = 2, kQ0 = 3, kQ1 = 4, kLanes = 5 };
  // Which of a panel's reflectors an apply takes: all, the leaves only or the tree levels only.
  enum class Part { all, leaves, levels };
  // x (rows from the panel's first row, `cols` columns) ← Qᵀx (transpose) or Qx for panel p:
  // the leaves then the levels upwards, or the other way. With TreeT::kept the lane first waits
  // for the panel's next_updated_.
  // x_in: the leaves read x's entries from there (panel 0's applies straight from A), where
  // register_leaves holds.
  // x_tops_only: x is zero below each leaf's top rows (Q on the panel's identity columns, see
  // launch_caqr_register_apply), where register_leaves holds.
  void apply(const Panel& p, T* x, std::int64_t ldx, std::int64_t cols, bool transpose, Lane lane,
             TreeT tree_t = TreeT::make, Part part = Part::all, const T* x_in = nullptr, std::int64_t ld_in = 0,
             bool x_tops_only = false);
  // Whether an apply of panel p to `cols` columns runs its leaves by the register kernel.
  bool register_leaves(const Panel& p, std::int64_t cols) const;
  cudaStream_t stream(Lane lane) const { return lanes_[lane].get(); }
  std::int64_t m_, n_;
  int sm_count_ = 0;
  std::vector<Panel> panels_;
  std::vector<std::pair<int, int>> q_groups_;
  bool tsqr_q_ = false;  // one panel of at most 16 columns: Q by launch_tsqr_register_form_q
  DeviceBuffer<T> work_, stacks_, q_stacks_, tau_;  // q_stacks_: that form_q's workspace
  DeviceBuffer<T> tree_t_;  // the tree levels' T, kept by each panel's critical update
  DeviceBuffer<T> apply_workspace_[kLanes];
  DeviceBuffer<unsigned> counters_;
  Stream lanes_[kLanes] = {Stream::with_priority(true), Stream::below_highest(1), Stream::with_priority(false),
                           Stream::with_priority(false), Stream::with_priority(false)};
  Event forked_{cudaEventDisableTiming}, identity_set_{cudaEventDisableTiming}, copied_{cudaEventDisableTiming};
  Event lookahead_joined_{cudaEventDisableTiming}, q_joined_[2] = {Event{cudaEventDisableTiming}, Event{cudaEventDisableTiming}};
  Event done_{cudaEventDisableTiming};
  // Per panel: its leaves factored (where the factorization is split), factored, its look-ahead
  // done, its leaves applied to the next panel's columns (split), its critical update of the next
  // panel done (which kept its tree levels' T).
  std::vector<Event> leaves_factored_, factored_, lookahead_done_, next_leaves_, next_updated_;
  // Whether the last panel's leaves' thin Q's are formed (where they pay, as for a TSQR), on the
  // side stream beside its tree: Q's tail then takes that panel's leaves as one product per leaf.
  // leaf_q_: the panel's rows × its width.
  bool thin_tail_ = false;
  DeviceBuffer<T> leaf_q_;
  Event leaf_q_formed_{cudaEventDisableTiming};
};

}  // namespace gpufact::factorizations
