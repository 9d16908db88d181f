#include "factorizations/caqr/tsqr_register.hpp"

#include "core/cuda/check.hpp"
#include "core/cuda/device.hpp"
#include "kernels/qr/block_reflector.cuh"
#include "kernels/qr/caqr_kernels.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpufact::factorizations {

kernels::TsqrTreeArgs make_tsqr_tree(std::int64_t m, std::int64_t n, int block_rows) {
  if (n < 1 || n > kernels::kTsqrMaxWidth)
    throw std::invalid_argument("register TSQR: n = " + std::to_string(n) + "; it factors 1 … " +
                                std::to_string(kernels::kTsqrMaxWidth) + " columns");
  if (m < n) throw std::invalid_argument("register TSQR: m = " + std::to_string(m) + " < n = " + std::to_string(n));
  if (block_rows < 2 * n)
    throw std::invalid_argument("register TSQR: blocks of " + std::to_string(block_rows) + " rows cannot stack two " +
                                std::to_string(n) + "-row R's");
  kernels::TsqrTreeArgs t;
  t.m = m;
  t.n = static_cast<int>(n);
  t.fan_in = static_cast<int>(block_rows / n);
  const std::int64_t leaves = (m + block_rows - 1) / block_rows;
  if (leaves > (std::int64_t{1} << 30)) throw std::invalid_argument("register TSQR: m = " + std::to_string(m) + " is too tall");
  if (m / leaves < n)
    throw std::invalid_argument("register TSQR: leaves of " + std::to_string(m / leaves) + " rows are shorter than n = " +
                                std::to_string(n));
  t.nodes[0] = static_cast<int>(leaves);
  while (t.nodes[t.levels] > 1) {
    if (t.levels == kernels::kTsqrMaxLevels)
      throw std::invalid_argument("register TSQR: more than " + std::to_string(kernels::kTsqrMaxLevels) + " tree levels");
    const int below = t.nodes[t.levels];
    ++t.levels;
    t.nodes[t.levels] = (below + t.fan_in - 1) / t.fan_in;
  }
  const std::int64_t stack = static_cast<std::int64_t>(t.fan_in) * n * n;
  for (int l = 0; l < t.levels; ++l) {
    t.tau_offset[l + 1] = t.tau_offset[l] + static_cast<std::int64_t>(t.nodes[l]) * n;
    if (l >= 1) {
      t.stack_offset[l + 1] = t.stack_offset[l] + t.nodes[l] * stack;
      t.counter_offset[l + 1] = t.counter_offset[l] + t.nodes[l];
    }
  }
  return t;
}

namespace {
// Entries of tree level l's T: its nodes' T's, one after another.
std::size_t level_t_entries(const kernels::TsqrTreeArgs& t, int l) {
  return static_cast<std::size_t>(t.nodes[l]) * static_cast<std::size_t>(kernels::wy_t_entries(t.n));
}
}  // namespace

TsqrTreeSizes tsqr_tree_sizes(const kernels::TsqrTreeArgs& t) {
  TsqrTreeSizes s;
  const int top = t.levels;
  for (int l = 1; l <= top; ++l) s.tree_t += level_t_entries(t, l);
  s.tau = static_cast<std::size_t>(t.tau_offset[top] + static_cast<std::int64_t>(t.nodes[top]) * t.n);
  if (top >= 1) {
    s.stacks = static_cast<std::size_t>(t.stack_offset[top] + static_cast<std::int64_t>(t.nodes[top]) * t.fan_in * t.n * t.n);
    s.counters = static_cast<std::size_t>(t.counter_offset[top] + t.nodes[top]);
  }
  return s;
}

DeviceBuffer<unsigned> zeroed_counters(std::size_t count) {
  DeviceBuffer<unsigned> c(std::max<std::size_t>(count, 1));
  GPUFACT_CUDA_CHECK(cudaMemset(c.data(), 0, c.bytes()));
  return c;
}

namespace {
template <class T>
kernels::TsqrTreeArgs tree_for(std::int64_t m, std::int64_t n) {
  const int width = kernels::tsqr_register_width(static_cast<int>(n));
  if (width == 0)
    throw std::invalid_argument("register TSQR: n = " + std::to_string(n) + "; it factors 1 … " +
                                std::to_string(kernels::kTsqrMaxWidth) + " columns");
  // Measured on the H200 (results/nvidia-h200/tsqr-register-threads-{128,256}.md): 128-thread blocks (four
  // per SM, more latency hidden across blocks) win for 16-wide FP32 panels by 10–12%; 256 win
  // for 32-wide panels and for FP64 at 16 wide. At 12 wide (both precisions) 128 win by 5–15%
  // for equally deep trees, and 256 by 15–25% when their larger leaves save a tree level (each
  // level adds a chain of n dependent reflectors): 10⁶ × 10 runs on 128, 110592 × 10 on 256.
  const auto tree_of = [&](int threads) {
    auto tree = make_tsqr_tree(m, n, kernels::tsqr_register_block_rows<T>(width, threads));
    tree.threads = threads;
    return tree;
  };
  if (width == 12) {
    auto narrow = tree_of(128), wide = tree_of(256);
    return wide.levels < narrow.levels ? wide : narrow;
  }
  return tree_of(width == 16 && sizeof(T) == 4 ? 128 : 256);
}
}  // namespace

namespace {
// The tree's block sets without their pointers: rows, counts and shapes only.
template <class T>
std::vector<kernels::WyBlocks<T>> tsqr_wy_shapes(const kernels::TsqrTreeArgs& tree) {
  std::vector<kernels::WyBlocks<T>> levels(static_cast<std::size_t>(tree.levels) + 1);
  std::int64_t span = 1;  // leaves per child
  for (int l = 0; l <= tree.levels; ++l) {
    auto& b = levels[static_cast<std::size_t>(l)];
    b.rows = l == 0 ? kernels::WyRows::split : kernels::WyRows::tree;
    b.blocks = tree.nodes[l];
    b.k = tree.n;
    b.m = tree.m;
    b.tau_stride = tree.n;
    if (l == 0) continue;
    b.leaves = tree.nodes[0];
    b.fan_in = tree.fan_in;
    b.children = tree.nodes[l - 1];
    b.span = span;
    b.ldv = static_cast<std::int64_t>(tree.fan_in) * tree.n;
    b.v_stride = b.ldv * tree.n;
    span *= tree.fan_in;
  }
  return levels;
}

// The split apply's workspace for any level of the tree on `cols` columns.
template <class T>
std::size_t tsqr_apply_workspace(const kernels::TsqrTreeArgs& tree, std::int64_t cols) {
  std::size_t most = 1;
  for (const auto& b : tsqr_wy_shapes<T>(tree)) most = std::max(most, kernels::wy_apply_split_workspace<T>(b, cols));
  return most;
}
}  // namespace

template <class T>
std::vector<kernels::WyBlocks<T>> tsqr_wy_levels(const kernels::TsqrTreeArgs& tree, const T* v, std::int64_t ldv,
                                                 const T* stacks, const T* tau) {
  auto levels = tsqr_wy_shapes<T>(tree);
  for (int l = 0; l <= tree.levels; ++l) {
    auto& b = levels[static_cast<std::size_t>(l)];
    b.tau = tau + tree.tau_offset[l];
    if (l == 0) {
      b.v = v;
      b.ldv = ldv;
    } else {
      b.v = stacks + tree.stack_offset[l];
    }
  }
  return levels;
}

namespace {
// Whether a register TSQR is factored in two launches, the leaves and then the tree: wherever
// other work runs beside the tree (CAQR's panels with a panel after them), and in FP32 wherever
// there is a tree, since 32-wide leaves that outnumber the SMs then run two per SM
// (launch_tsqr_register_factor) and other streams get the SMs that the tree's few nodes leave idle.
// One H100, same card, against one launch, ms: tsqr_register 110592 × 16 / 32 0.0747 / 0.1756 →
// 0.0730 / 0.1665, 300000 × 10 / 32 0.0695 / 0.3717 → 0.0687 / 0.3447, 10⁶ × 10 0.1346 → 0.1328;
// CAQR's last panel, 110592 × 32 / 36 / 64 / 100 0.1650 / 0.2203 / 0.3476 / 0.7049 → 0.1549 /
// 0.2115 / 0.3428 / 0.7002, 300000 × 100 1.628 → 1.612, 8192 rows unchanged. FP64's last panel
// lost (110592 × 100 1.279 → 1.284), so FP64 keeps one launch where nothing runs beside the tree.
template <class T>
bool factor_in_two_launches(const kernels::TsqrTreeArgs& tree, bool work_beside_tree) {
  return tree.levels >= 1 && (work_beside_tree || sizeof(T) == 4);
}

// Whether a TSQR's explicit Q takes its leaves' thin Q's (formed beside the tree's factorization):
// where the tree has a level, and the leaves' chains are long (the 32-wide class) or the leaves
// fit one wave beside the tree. Many short chains (10⁶ × 10: 651 leaves of 10 reflectors) are
// bound by memory, and their thin Q's then only add traffic: measured on one H100 with the thin
// Q's everywhere, FP32 10⁶ × 10 0.130 → 0.154 ms, 300000 × 10 0.066 → 0.070.
bool leaf_q_for(const kernels::TsqrTreeArgs& tree) {
  return tree.levels >= 1 && (tree.n > 16 || tree.nodes[0] <= current_device_sm_count());
}
}  // namespace

template <class T>
TsqrRegisterPlan<T>::TsqrRegisterPlan(std::int64_t m, std::int64_t n) : tree_(tree_for<T>(m, n)) {
  const auto sizes = tsqr_tree_sizes(tree_);
  v_ = DeviceBuffer<T>(static_cast<std::size_t>(m * n));
  stacks_ = DeviceBuffer<T>(sizes.stacks);
  tau_ = DeviceBuffer<T>(sizes.tau);
  counters_ = zeroed_counters(sizes.counters);
  if (!leaf_q_for(tree_)) {
    q_stacks_ = DeviceBuffer<T>(sizes.stacks);  // the tree launches' outputs of Q
  } else {
    leaf_q_ = DeviceBuffer<T>(static_cast<std::size_t>(m * n));
    main_ = Stream::with_priority(true);
    side_ = Stream::with_priority(false);
    levels_ = tsqr_wy_levels<T>(tree_, v_.data(), m, stacks_.data(), tau_.data());
    std::size_t workspace = 1;
    for (int l = 1; l <= tree_.levels; ++l)
      workspace = std::max(workspace, kernels::wy_apply_split_workspace<T>(levels_[static_cast<std::size_t>(l)], n));
    apply_workspace_ = DeviceBuffer<T>(workspace);
    kernels::prepare_wy_kernels<T>();
  }
}

template <class T>
std::size_t TsqrRegisterPlan<T>::workspace_bytes(std::int64_t m, std::int64_t n) {
  const auto tree = tree_for<T>(m, n);
  const auto sizes = tsqr_tree_sizes(tree);
  const std::size_t mn = static_cast<std::size_t>(m * n);
  // leaf_q_ and the apply's workspace counted wherever they may be allocated (the SM count aside: no
  // device is asked here).
  const std::size_t thin = tree.levels >= 1 ? mn + tsqr_apply_workspace<T>(tree, n) : 0;
  return (mn + thin + 2 * sizes.stacks + sizes.tau) * sizeof(T) + sizes.counters * sizeof(unsigned);
}

template <class T>
void TsqrRegisterPlan<T>::factor(const T* a, std::int64_t lda, T* r, std::int64_t ldr, cudaStream_t s) {
  const auto launch = [&](kernels::TsqrFactorPart part, cudaStream_t st) {
    kernels::launch_tsqr_register_factor<T>(a, lda, v_.data(), tree_.m, stacks_.data(), tau_.data(), counters_.data(),
                                            r, ldr, true, tree_, st, part);
  };
  if (main_.get() != nullptr) {
    // The leaves' thin Q's on side_ (the lowest priority) beside the tree on main_ (the highest),
    // so that the tree's few nodes are not kept waiting behind them for SMs. Measured on one H100
    // (same card, interleaved, two runs, both as graphs), ms: FP32 110592 × 32 0.161 → 0.140,
    // 300000 × 32 0.340 → 0.293, × 16 even; FP64 110592 × 16 / 32 0.126 / 0.314 → 0.117 / 0.267.
    // With the thin Q's issued before the tree, the tree waited for them: × 32 0.161 → 0.177.
    const auto wait = [](cudaStream_t st, const Event& e) { GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(st, e.get(), 0)); };
    // The tree is issued first: its nodes (186 registers a thread) find no room on an SM that
    // already holds a thin-Q block, so they must not queue behind them.
    launch(kernels::TsqrFactorPart::leaves, s);
    leaves_factored_.record(s);
    wait(main_, leaves_factored_);
    launch(kernels::TsqrFactorPart::tree, main_);
    tree_factored_.record(main_);
    wait(side_, leaves_factored_);
    kernels::launch_tsqr_register_leaf_q<T>(v_.data(), tree_.m, tau_.data(), leaf_q_.data(), tree_.m, tree_, side_);
    leaf_q_formed_.record(side_);
    wait(s, tree_factored_);
  } else if (factor_in_two_launches<T>(tree_, false)) {
    launch(kernels::TsqrFactorPart::leaves, s);
    launch(kernels::TsqrFactorPart::tree, s);
  } else {
    launch(kernels::TsqrFactorPart::whole, s);
  }
}

template <class T>
void TsqrRegisterPlan<T>::form_q(T* q, std::int64_t ldq, cudaStream_t s) {
  if (main_.get() == nullptr) {
    kernels::launch_tsqr_register_form_q<T>(v_.data(), tree_.m, stacks_.data(), tau_.data(), q_stacks_.data(), q, ldq,
                                            tree_, s);
    return;
  }
  // The tree's levels on main_ while the leaves' thin Q's may still be forming, then the products.
  // The levels go through the compact-WY split apply on Q's leaf tops (as CAQR's tail), not the
  // register chains of launch_tsqr_register_form_q (a node's 32-step chain, ~21 µs a level at
  // 110592 × 32). One H100, same card, ms: FP32 110592 × 32 0.139 → 0.121, 300000 × 32 0.295 →
  // 0.282; FP64 110592 × 16 / 32 0.117 / 0.266 → 0.109 / 0.235.
  const auto wait = [](cudaStream_t st, const Event& e) { GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(st, e.get(), 0)); };
  q_started_.record(s);
  wait(main_, q_started_);
  kernels::launch_tsqr_register_leaf_tops_identity<T>(q, ldq, tree_, main_);
  for (int l = tree_.levels; l >= 1; --l)
    kernels::launch_wy_apply_split<T>(levels_[static_cast<std::size_t>(l)], q, ldq, tree_.n, false,
                                      apply_workspace_.data(), main_);
  wait(main_, leaf_q_formed_);
  kernels::launch_caqr_register_leaf_products<T>(leaf_q_.data(), tree_.m, q, ldq, tree_, main_);
  q_formed_.record(main_);
  wait(s, q_formed_);
}

namespace {
struct PanelSizes {
  std::size_t stacks = 0, tau = 0, counters = 0;
};
// Panels of 32 columns and one narrower (first in FP32, last in FP64), each a TSQR of the rows
// from its first column down.
template <class T>
std::vector<kernels::TsqrTreeArgs> caqr_panel_trees(std::int64_t m, std::int64_t n) {
  if (n < 1 || m < n)
    throw std::invalid_argument("register CAQR: " + std::to_string(m) + " × " + std::to_string(n) + "; needs m ≥ n ≥ 1");
  std::vector<kernels::TsqrTreeArgs> trees;
  const std::int64_t w = kernels::kTsqrMaxWidth;
  // FP32 puts the narrow remainder panel first: its update of the next panel is then a chain of
  // n mod 32 reflectors rather than 32, while the tail (the last panel's Q columns through every
  // panel) keeps its n reflectors. One H100, ms: 110592 × 36 0.272 → 0.2515, × 72 0.599 → 0.570,
  // × 100 0.941 → 0.904, × 132 1.366 → 1.331, × 200 2.366 → 2.300, × 400 7.13 → 7.08; 8192 × 100
  // 0.361 → 0.354. FP64 loses (110592 × 100 1.478 → 1.521, × 132 2.179 → 2.218), so keeps the
  // remainder last.
  const std::int64_t first = sizeof(T) == 4 && n % w != 0 ? n % w : w;
  for (std::int64_t c0 = 0; c0 < n;) {
    const std::int64_t width = std::min<std::int64_t>(c0 == 0 ? first : w, n - c0);
    trees.push_back(tree_for<T>(m - c0, width));
    c0 += width;
  }
  return trees;
}
}  // namespace

namespace {
// The widest single panel whose Q comes from the TSQR's own launches (launch_tsqr_register_form_q)
// rather than from the apply kernels on an identity. One H100, FP32: 110592 × 16 0.0945 → 0.0866
// ms, 10⁶ × 10 0.2105 → 0.1807, but 110592 × 32 0.188 → 0.208. A panel whose leaves take thin Q's
// (leaf_q_for) goes through Q's tail instead: its tree levels by the split apply, then the products.
constexpr std::int64_t kTsqrQMaxWidth = 16;
bool q_from_tsqr(const std::vector<kernels::TsqrTreeArgs>& trees, std::int64_t n) {
  return trees.size() == 1 && n <= kTsqrQMaxWidth && !leaf_q_for(trees.front());
}

// Q's column groups: the panels before the last in at most kQGroups ranges of consecutive panels,
// then the last panel alone.
constexpr int kQGroups = 3;
std::vector<std::pair<int, int>> caqr_q_groups(int panels) {
  std::vector<std::pair<int, int>> groups;
  const int before_last = panels - 1, size = std::max(1, (before_last + kQGroups - 1) / kQGroups);
  for (int g0 = 0; g0 < before_last; g0 += size) groups.emplace_back(g0, std::min(before_last, g0 + size));
  groups.emplace_back(before_last, panels);
  return groups;
}
}  // namespace

template <class T>
CaqrRegisterPlan<T>::CaqrRegisterPlan(std::int64_t m, std::int64_t n) : m_(m), n_(n) {
  std::size_t stacks = 0, tau = 0, counters = 0;
  std::int64_t c0 = 0;
  for (const auto& tree : caqr_panel_trees<T>(m, n)) {
    const auto sizes = tsqr_tree_sizes(tree);
    panels_.push_back({c0, tree, stacks, tau});
    stacks += sizes.stacks;
    tau += sizes.tau;
    counters = std::max(counters, sizes.counters);
    c0 += tree.n;
  }
  q_groups_ = caqr_q_groups(static_cast<int>(panels_.size()));
  work_ = DeviceBuffer<T>(static_cast<std::size_t>(m * n));
  stacks_ = DeviceBuffer<T>(stacks);
  std::vector<kernels::TsqrTreeArgs> trees;
  for (const auto& p : panels_) trees.push_back(p.tree);
  tsqr_q_ = q_from_tsqr(trees, n);
  if (tsqr_q_) q_stacks_ = DeviceBuffer<T>(stacks);
  tau_ = DeviceBuffer<T>(tau);
  counters_ = zeroed_counters(counters);
  std::size_t workspace = 1;
  for (auto& p : panels_) {
    p.levels = tsqr_wy_levels<T>(p.tree, work_.data() + p.col0 + p.col0 * m, m, stacks_.data() + p.stack_offset,
                                 tau_.data() + p.tau_offset);
    for (const auto& b : p.levels) workspace = std::max(workspace, kernels::wy_apply_split_workspace<T>(b, n - p.col0));
  }
  for (auto& w : apply_workspace_) w = DeviceBuffer<T>(workspace);
  std::size_t t_entries = 0;
  for (auto& p : panels_)
    for (int l = 1; l <= p.tree.levels; ++l) {
      p.t_offsets.push_back(t_entries);
      t_entries += level_t_entries(p.tree, l);
    }
  tree_t_ = DeviceBuffer<T>(std::max<std::size_t>(t_entries, 1));
  // Q's tail starts with the last panel on its own identity columns, so its leaves' part is thin·Y
  // (launch_caqr_register_leaf_products) once their thin Q's are formed beside its tree. Measured
  // on one H100 (same card, interleaved, two runs), FP32 ms: 110592 × 32 0.147 → 0.127, × 100
  // 0.684 → 0.673, 300000 × 32 0.339 → 0.286, 8192 × 64 / 256 0.151 / 0.695 → 0.146 / 0.687,
  // × 512 even; FP64 110592 × 16 / 32 0.127 / 0.281 → 0.119 / 0.239, × 100 even. Every Q group's
  // last panel taking its thin Q's (formed beside its tree, where the next panel's update runs)
  // was slower: × 100 0.722 against 0.682.
  const auto& last = panels_.back();
  thin_tail_ = leaf_q_for(last.tree);
  if (thin_tail_) leaf_q_ = DeviceBuffer<T>(static_cast<std::size_t>(last.tree.m * last.tree.n));
  for (std::size_t p = 0; p < panels_.size(); ++p) {
    leaves_factored_.emplace_back(cudaEventDisableTiming);
    factored_.emplace_back(cudaEventDisableTiming);
    lookahead_done_.emplace_back(cudaEventDisableTiming);
    next_leaves_.emplace_back(cudaEventDisableTiming);
    next_updated_.emplace_back(cudaEventDisableTiming);
  }
  kernels::prepare_wy_kernels<T>();
  int device = 0;
  GPUFACT_CUDA_CHECK(cudaGetDevice(&device));
  GPUFACT_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device));
}

template <class T>
bool CaqrRegisterPlan<T>::register_leaves(const Panel& p, std::int64_t cols) const {
  // The leaves by the split apply while they fit in about one wave (3 FP32 blocks fit an SM's
  // shared memory; the same count measured best for FP64 too, whose blocks take twice the room),
  // else by the register kernel. The tree's levels by the split apply, but for 32-wide levels on
  // many blocks (see apply): a register tree level runs its node's 32-reflector chain over
  // fan_in·w rows in one CTA per node and column tile, about 20 µs on an H100 however few the
  // nodes (27 µs on the H200 in the rows layout).
  constexpr std::int64_t kSplitBlocksPerSm = 3;
  return kernels::wy_apply_split_thread_blocks<T>(p.levels.front(), cols) > kSplitBlocksPerSm * sm_count_;
}

template <class T>
void CaqrRegisterPlan<T>::apply(const Panel& p, T* x, std::int64_t ldx, std::int64_t cols, bool transpose, Lane lane,
                                TreeT tree_t, Part part, const T* x_in, std::int64_t ld_in, bool x_tops_only) {
  const bool by_register = register_leaves(p, cols);
  if (x_in != nullptr && (!by_register || part == Part::levels))
    throw std::logic_error("register CAQR: only the register leaf apply reads x from elsewhere");
  if (x_tops_only && !by_register) throw std::logic_error("register CAQR: only the register leaf apply skips zero rows");
  const std::size_t levels = p.levels.size();
  const cudaStream_t s = stream(lane);
  bool waited = false;
  for (std::size_t q = 0; q < levels; ++q) {
    const std::size_t l = transpose ? q : levels - 1 - q;
    if ((l == 0 && part == Part::levels) || (l >= 1 && part == Part::leaves)) continue;
    if (l == 0 && by_register) {
      kernels::launch_caqr_register_apply<T>(p.levels.front().v, m_, stacks_.data() + p.stack_offset,
                                             tau_.data() + p.tau_offset, x, ldx, cols, p.tree, transpose, s, false,
                                             x_in, ld_in, x_tops_only);
      continue;
    }
    // A 32-wide panel's tree level on many blocks (nodes × 32-column tiles) by the columns apply,
    // which needs no T, except in the critical update, which keeps the split apply's T for Q's
    // groups. A level's block is a 32-step chain of about 20 µs alone, so few blocks lose to the
    // split apply (all levels by columns: FP32 110592 × 100 0.586 → 0.680 ms, 8192 × 512 1.48 →
    // 1.79). Measured on one H100 (same card, interleaved, two runs each), from 64 blocks, ms:
    // FP32 110592 × 256 2.360 → 2.331, × 512 8.11 → 7.83, 300000 × 256 5.91 → 5.62, × 512 20.23 →
    // 19.23, FP64 110592 × 256 4.832 → 4.740; × 100, × 64, × 32 and 8192 rows even.
    const std::int64_t level_blocks =
        l >= 1 ? p.tree.nodes[l] * ((cols + kernels::kTsqrMaxWidth - 1) / kernels::kTsqrMaxWidth) : 0;
    if (l >= 1 && tree_t != TreeT::keep && level_blocks >= 64 && kernels::caqr_register_levels_by_columns(p.tree)) {
      kernels::launch_caqr_register_apply_level<T>(stacks_.data() + p.stack_offset, tau_.data() + p.tau_offset, x, ldx,
                                                   cols, p.tree, static_cast<int>(l), transpose, s);
      continue;
    }
    auto b = p.levels[l];
    if (l >= 1 && tree_t != TreeT::make) {
      T* const t = tree_t_.data() + p.t_offsets[l - 1];
      if (tree_t == TreeT::keep) {
        b.t_out = t;
      } else {
        if (!waited) {
          GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(s, next_updated_[static_cast<std::size_t>(&p - panels_.data())].get(), 0));
          waited = true;
        }
        b.t = t;
      }
    }
    kernels::launch_wy_apply_split<T>(b, x, ldx, cols, transpose, apply_workspace_[lane].data(), s);
  }
}

template <class T>
std::size_t CaqrRegisterPlan<T>::workspace_bytes(std::int64_t m, std::int64_t n) {
  std::size_t count = static_cast<std::size_t>(m * n), counters = 0, workspace = 1;
  std::int64_t c0 = 0;
  const auto trees = caqr_panel_trees<T>(m, n);
  for (const auto& tree : trees) {
    const auto sizes = tsqr_tree_sizes(tree);
    // The TSQR's Q stacks counted wherever they may be allocated (no device is asked here).
    count += sizes.stacks * (trees.size() == 1 && n <= kTsqrQMaxWidth ? 2 : 1) + sizes.tau + sizes.tree_t;
    counters = std::max(counters, sizes.counters);
    workspace = std::max(workspace, tsqr_apply_workspace<T>(tree, n - c0));
    c0 += tree.n;
  }
  if (trees.back().levels >= 1)  // leaf_q_, where it may be
    count += static_cast<std::size_t>(trees.back().m * trees.back().n);
  return (count + kLanes * workspace) * sizeof(T) + counters * sizeof(unsigned);
}

template <class T>
void CaqrRegisterPlan<T>::run(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r, std::int64_t ldr,
                              cudaStream_t s) {
  const std::int64_t m = m_, n = n_;
  const int panels = static_cast<int>(panels_.size());
  const cudaStream_t cs = stream(kCritical), ss = stream(kSide), ls = stream(kLookahead), q0 = stream(kQ0),
                     q1 = stream(kQ1);
  const auto first_col = [&](int p) { return p < panels ? panels_[static_cast<std::size_t>(p)].col0 : n; };
  const auto wait = [](cudaStream_t st, const Event& e) { GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(st, e.get(), 0)); };
  forked_.record(s);
  for (const auto lane : {cs, ss, ls, q0, q1}) wait(lane, forked_);

  T* w = work_.data();
  // The first panel is factored straight from A (its V and R land in the work copy). Its Qᵀ on
  // the columns past it reads them from A too and writes them to the work copy, where its leaves
  // run the register apply (every row of those columns passes through a leaf): A is never copied.
  // One H100, same card, against copying (both with the factorizations split, below), FP32, ms:
  // 110592 × 100 0.776 → 0.743, × 132 1.188 → 1.134, × 36 0.2375 → 0.2271, × 256 3.104 → 3.011,
  // 300000 × 100 1.912 → 1.780; FP64 110592 × 100 1.299 → 1.256; × 64 and 8192 rows even.
  // Otherwise the columns past the first panel are copied on the look-ahead stream meanwhile, and
  // the critical stream's first update waits for that copy.
  // When copied, after a narrow first panel (FP32's remainder, quickly factored), the next
  // panel's columns are copied first, and they are all the critical stream waits for. One H100,
  // FP32, ms: 110592 × 100 0.908 → 0.894, × 132 1.334 → 1.319, × 36 unchanged. Split after a
  // 32-wide first panel too: s × 256 3.20 → 3.18 but d × 100 1.476 → 1.484, so not there. The
  // columns past the next panel's are copied only once the critical stream has updated the next
  // panel, so that the narrow panel and its update do not share the memory with that copy; the
  // look-ahead, which needs them, still finishes within the next panel's factorization. Same
  // card: × 100 0.850 → 0.834, × 132 1.262 → 1.257, the others even.
  const bool from_a = panels > 1 && register_leaves(panels_.front(), first_col(2) - first_col(1)) &&
                      (panels == 2 || register_leaves(panels_.front(), n - first_col(2)));
  const auto copy_columns = [&](std::int64_t c0, std::int64_t c1) {
    if (c0 < c1)
      GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(w + c0 * m, static_cast<std::size_t>(m) * sizeof(T), a + c0 * lda,
                                           static_cast<std::size_t>(lda) * sizeof(T), static_cast<std::size_t>(m) * sizeof(T),
                                           static_cast<std::size_t>(c1 - c0), cudaMemcpyDeviceToDevice, ls));
  };
  // Where panel 0's applies read columns c… of x: A itself, or the work copy.
  const auto source = [&](int i, std::int64_t c) -> const T* { return i == 0 && from_a ? a + c * lda : nullptr; };
  const bool split_copy = !from_a && panels > 1 && panels_.front().tree.n < kernels::kTsqrMaxWidth;
  if (!from_a) copy_columns(first_col(1), split_copy ? first_col(2) : n);
  copied_.record(ls);
  // Q's identity a column group at a time, each on its group's stream just before its applies;
  // the tail's (on the critical stream at the end) after the first group. One memset of all of
  // Q's columns at the start ran beside the first panel's factorization and update, and the copy
  // of A, all bandwidth-bound. One H100, same card, ms: s 110592 × 64 0.464 → 0.428, × 100 0.898 →
  // 0.851, × 36 0.248 → 0.244, × 132 1.275 → 1.266; d × 100 1.451 → 1.429, × 64 0.746 → 0.720;
  // 8192 × 64 / 512 0.8 / 0.3% faster; s × 256 0.3% faster, d × 256 0.2% slower. Each by a memset
  // and a launch for its ones: the one-kernel identity (under half the bandwidth at 32 columns)
  // was 0.5–3% faster at s and d × 64 and × 100 but slower at s × 36, × 132, × 256 and 8192 rows.
  // A group of one panel starts with that panel's Q on its own identity columns: the tree levels
  // (on the leaves' top rows), then the leaves, by the thin Q's' products (the tail) or by the
  // register apply reading only their top rows (x_tops_only). Those columns are then read before
  // they are written only above the panel (zeros) and in its leaves' top rows (the identity's,
  // launch_tsqr_register_leaf_tops_identity), so only those are set: 1 MB rather than 14 a 32-wide
  // group at 110592 rows. One H100, same card each, ms: the tail's alone, FP32 110592 × 100 / 256
  // 0.673 / 2.712 → 0.668 / 2.695, 300000 × 32 / 64 0.284 / 0.761 → 0.274 / 0.747, FP64 110592 × 32
  // 0.236 → 0.234; then every group of one panel, FP32 110592 × 64 / 100 / 256 0.304 / 0.673 /
  // 2.722 → 0.292 / 0.657 / 2.694, 300000 × 100 1.570 → 1.550, FP64 110592 × 100 1.279 → 1.248;
  // 8192 rows and × 32 even.
  const auto thin_group = [&](std::pair<int, int> g) { return g == q_groups_.back() && thin_tail_; };
  const auto tops_only = [&](std::pair<int, int> g) {
    if (g.second != g.first + 1) return false;
    const auto& p = panels_[static_cast<std::size_t>(g.first)];
    return thin_group(g) || register_leaves(p, p.tree.n);
  };
  const auto set_identity = [&](std::pair<int, int> g, cudaStream_t st) {
    if (tops_only(g)) {
      const auto& p = panels_[static_cast<std::size_t>(g.first)];
      kernels::launch_set_identity_columns(q, ldq, p.col0, p.col0, p.col0 + p.tree.n, st, true);
      kernels::launch_tsqr_register_leaf_tops_identity<T>(q + p.col0 + p.col0 * ldq, ldq, p.tree, st);
      return;
    }
    kernels::launch_set_identity_columns(q, ldq, m, first_col(g.first), first_col(g.second), st, true);
  };
  if (!tsqr_q_ && q_groups_.size() == 1) {  // one panel of 17 … 32 columns: the tail alone
    set_identity(q_groups_.back(), q0);
    identity_set_.record(q0);
  }
  // Q's columns of panels [g0, g1) ← Q_0 … Q_{g1−1} applied to them (the identity's), the last
  // panel's reflectors first; panel i acts on the rows from its first and on the columns from
  // its own first or the group's, whichever is later.
  // The panels before the group's last have had their critical update, which kept their tree
  // levels' T (below).
  // The tail's last panel acts on its own identity columns only; with its leaves' thin Q's, their
  // part is one product per leaf after the tree levels.
  const auto form_q_group = [&](std::pair<int, int> g, Lane lane) {
    const std::int64_t end = first_col(g.second);
    for (int i = g.second - 1; i >= 0; --i) {
      const auto& p = panels_[static_cast<std::size_t>(i)];
      const std::int64_t c = std::max(p.col0, first_col(g.first));
      T* const x = q + p.col0 + c * ldq;
      if (i == g.second - 1 && thin_group(g)) {
        apply(p, x, ldq, end - c, false, lane, TreeT::make, Part::levels);
        wait(stream(lane), leaf_q_formed_);
        kernels::launch_caqr_register_leaf_products<T>(leaf_q_.data(), p.tree.m, x, ldq, p.tree, stream(lane));
        continue;
      }
      apply(p, x, ldq, end - c, false, lane, i < g.second - 1 ? TreeT::kept : TreeT::make, Part::all, nullptr, 0,
            i == g.second - 1 && tops_only(g));
    }
  };
  std::size_t group = 0;
  for (int i = 0; i < panels; ++i) {
    const std::size_t pi = static_cast<std::size_t>(i);
    const auto& p = panels_[pi];
    T* panel = w + p.col0 + p.col0 * m;
    // The root's R goes over the panel's top (upper triangle only: the first leaf's V stays
    // below it); the rows above it are the earlier panels' trailing updates, so R is then one
    // copy of the upper triangle.
    // With a panel after it and a tree, the factorization is two launches: the leaves, then the
    // tree. The next panel's columns and the look-ahead's get the leaves' Qᵀ meanwhile (the side
    // stream and the look-ahead stream), in the SMs that the tree's few nodes leave idle; their
    // tree levels follow the tree. A 32-wide panel's tree (14 nodes, then the root) takes about
    // 50 µs at 110592 rows, and its leaves' apply to the next 32 columns about 40. One H100, same
    // card, against one launch (both reading A, above), ms: FP32 110592 × 36 / 64 / 100 / 132 /
    // 256 / 512 0.2325 / 0.4350 / 0.8139 / 1.2209 / 3.166 / 10.77 → 0.2271 / 0.3681 / 0.7426 /
    // 1.1336 / 3.011 / 10.71, 300000 × 100 1.841 → 1.780, 8192 × 64 / 256 / 512 0.1746 / 0.8421 /
    // 1.905 → 0.1597 / 0.7424 / 1.654; FP64 110592 × 100 1.367 → 1.256.
    // FP32 splits the last panel too (factor_in_two_launches).
    const bool split = factor_in_two_launches<T>(p.tree, i + 1 < panels || thin_tail_);
    const auto factor = [&](kernels::TsqrFactorPart part) {
      kernels::launch_tsqr_register_factor<T>(i == 0 ? a : panel, i == 0 ? lda : m, panel, m,
                                              stacks_.data() + p.stack_offset, tau_.data() + p.tau_offset,
                                              counters_.data(), panel, m, false, p.tree, cs, part);
    };
    if (split) {
      factor(kernels::TsqrFactorPart::leaves);
      leaves_factored_[pi].record(cs);
      factor(kernels::TsqrFactorPart::tree);
      if (i + 1 == panels && thin_tail_) {
        // Beside the tree (issued after it, so that its nodes are not kept waiting for SMs behind
        // the thin-Q blocks), on the side stream: the last panel has no next panel to update.
        wait(ss, leaves_factored_[pi]);
        kernels::launch_tsqr_register_leaf_q<T>(panel, m, tau_.data() + p.tau_offset, leaf_q_.data(), p.tree.m, p.tree,
                                                ss);
        leaf_q_formed_.record(ss);
      }
    } else {
      factor(kernels::TsqrFactorPart::whole);
    }
    factored_[pi].record(cs);
    // The next panel's columns on the critical stream, once the look-ahead has brought them up to
    // the panels before this one (or, after the first panel, once they are copied); the columns
    // past them on the look-ahead stream.
    // That update keeps the T of each of the panel's tree levels (made from VᵀV by larft's
    // recurrence in every chunk of the split apply) for Q's groups and tail, which then skip VᵀV
    // and the recurrence. One H100, same card, ms: FP32 110592 × 36 / 64 / 100 / 132 / 256 0.2441 /
    // 0.4266 / 0.8368 / 1.2504 / 3.169 → 0.2416 / 0.4178 / 0.8062 / 1.2220 / 3.125, FP64 × 100 1.420
    // → 1.392, × 256 5.815 → 5.717, 8192 × 256 / 512 0.880 / 1.922 → 0.846 / 1.900.
    if (i + 1 < panels) {
      const Event& ready = i >= 1 ? lookahead_done_[static_cast<std::size_t>(i - 1)] : copied_;
      T* const next = w + p.col0 + first_col(i + 1) * m;
      const std::int64_t next_cols = first_col(i + 2) - first_col(i + 1);
      // The leaves' Qᵀ on the side stream where the factorization is split (beside the tree),
      // else after it on the critical stream; the tree levels' on the critical stream.
      const Lane leaf_lane = split ? kSide : kCritical;
      wait(stream(leaf_lane), split ? leaves_factored_[pi] : factored_[pi]);
      wait(stream(leaf_lane), ready);
      apply(p, next, m, next_cols, true, leaf_lane, TreeT::keep, Part::leaves, source(i, first_col(i + 1)), lda);
      if (split) {
        next_leaves_[pi].record(ss);
        wait(cs, next_leaves_[pi]);
      }
      apply(p, next, m, next_cols, true, kCritical, TreeT::keep, Part::levels);
      next_updated_[pi].record(cs);
      if (i == 0 && split_copy) {  // the rest of A, now
        wait(ls, next_updated_[0]);
        copy_columns(first_col(2), n);
      }
    }
    if (i + 2 < panels) {
      // The look-ahead makes its own T: waiting for the kept one (its leaves come first, so it
      // seldom waits) moved FP32 by −0.5% and FP64 110592 × 100 by +1.3%.
      T* const rest = w + p.col0 + first_col(i + 2) * m;
      const std::int64_t rest_cols = n - first_col(i + 2);
      wait(ls, split ? leaves_factored_[pi] : factored_[pi]);
      apply(p, rest, m, rest_cols, true, kLookahead, TreeT::make, Part::leaves, source(i, first_col(i + 2)), lda);
      if (split) wait(ls, factored_[pi]);
      apply(p, rest, m, rest_cols, true, kLookahead, TreeT::make, Part::levels);
      lookahead_done_[pi].record(ls);
    }
    if (group + 1 < q_groups_.size() && q_groups_[group].second == i + 1) {
      const Lane lane = group % 2 == 0 ? kQ0 : kQ1;
      wait(stream(lane), factored_[pi]);
      set_identity(q_groups_[group], stream(lane));
      form_q_group(q_groups_[group++], lane);
      if (group == 1) {  // the tail's columns
        set_identity(q_groups_.back(), stream(lane));
        identity_set_.record(stream(lane));
      }
    }
  }
  // R on the look-ahead stream (idle by now; the trailing updates that wrote R's rows came before the
  // last panel's factorization), so that Q's tail starts right after the last tree. One H100, same
  // card, FP32 ms: 110592 × 32 0.1273 → 0.1255, × 64 0.3079 → 0.3056, × 100 and × 256 even.
  wait(ls, factored_.back());
  kernels::launch_copy_upper_triangle<T>(w, m, n, r, ldr, ls);
  if (tsqr_q_) {
    // One panel is a TSQR: its Q straight from the tree, root to leaves (a launch per level).
    kernels::launch_tsqr_register_form_q<T>(w, m, stacks_.data(), tau_.data(), q_stacks_.data(), q, ldq,
                                            panels_.front().tree, cs);
  } else {
    wait(cs, identity_set_);
    form_q_group(q_groups_.back(), kCritical);
  }

  lookahead_joined_.record(ls);
  q_joined_[0].record(q0);
  q_joined_[1].record(q1);
  wait(cs, lookahead_joined_);
  wait(cs, q_joined_[0]);
  wait(cs, q_joined_[1]);
  done_.record(cs);
  wait(s, done_);
}

template std::vector<kernels::WyBlocks<float>> tsqr_wy_levels<float>(const kernels::TsqrTreeArgs&, const float*,
                                                                     std::int64_t, const float*, const float*);
template std::vector<kernels::WyBlocks<double>> tsqr_wy_levels<double>(const kernels::TsqrTreeArgs&, const double*,
                                                                       std::int64_t, const double*, const double*);
template class CaqrRegisterPlan<float>;
template class CaqrRegisterPlan<double>;
template class TsqrRegisterPlan<float>;
template class TsqrRegisterPlan<double>;

}  // namespace gpufact::factorizations
