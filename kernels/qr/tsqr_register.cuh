// TSQR with each block held in registers: one launch factors every leaf block and the whole
// reduction tree, one launch per tree level forms the explicit Q. For panels up to 32 columns.
//
// Beyond anderson10's 64×16 blocks in shared memory (§IV.B): a block of 128 or 256 threads keeps
// at least 64 entries per thread in registers. Blocks come in three widths, and a panel runs at
// the narrowest that holds it: 12 columns (6 rows per thread, 768 or 1536 rows a block), 16 (4
// rows, 512 or 1024) and 32 (2 rows, 256 or 512; the factor lays the same 64 entries out as 8
// rows × 8 columns, four lanes sharing the rows, so a reflector's fixed costs scale with 8
// columns, not 32); a 10⁶ × 10 panel has ~650–1300 leaves and a two-level tree. Each reflector
// costs one block-wide reduction of the panel's columns (a transposed butterfly of warp shuffles
// over a thread's columns rounded up to a power of two, then one shared memory pass): one
// barrier per column. The tree runs in the factor launch itself: the last block to finish among
// a node's children factors the node (threadfence + arrival counter), so no block waits for
// another and nothing depends on co-residency.
//
// Layout: leaf c owns rows [c·m/leaves, (c+1)·m/leaves) of A (at least 128 rows, at most the
// block's capacity). Its R (n × n, zeros below) goes to slot c mod fan_in of its parent's
// stack; a node's stack is fan_in·n rows × n, column-major, leading dimension fan_in·n. The
// root's R goes to the output. Householder convention: LAPACK's (v(j) = 1 implicit,
// β = −sign(α)‖x‖, τ = 0 when nothing lies below the diagonal entry).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::kernels {

constexpr int kTsqrMaxLevels = 8;
constexpr int kTsqrMaxWidth = 32;

// The tree (factorizations/caqr/tsqr_register.hpp builds it). Offsets are in elements.
struct TsqrTreeArgs {
  std::int64_t m = 0;
  int n = 0;
  int threads = 256;  // per block: 128 or 256
  int fan_in = 0;  // R's stacked per node
  int levels = 0;  // tree levels above the leaves (0: one leaf, which is the root)
  int nodes[kTsqrMaxLevels + 1] = {};                  // nodes[0]: leaves
  std::int64_t stack_offset[kTsqrMaxLevels + 1] = {};  // level ℓ ≥ 1: node p's stack at + p·fan_in·n·n
  std::int64_t tau_offset[kTsqrMaxLevels + 1] = {};    // level ℓ: node p's n taus at + p·n
  std::int64_t counter_offset[kTsqrMaxLevels + 1] = {};  // level ℓ ≥ 1: node p's arrival counter
};

// The register width a panel of n columns runs at (12, 16 or 32), 0 when n > 32 or n < 1.
int tsqr_register_width(int n);
// Rows one block of `threads` (128 or 256) holds at that width: threads × ⌈64 / width⌉; 0 for
// a width or thread count not compiled.
template <class T>
int tsqr_register_block_rows(int width, int threads);

// Factors A (m × n, lda ≥ m; only read unless v aliases it): V and the leaves' R into v (m × n,
// ldv ≥ m), the tree's stacks (V and R of each node) into `stacks`, taus into `tau`, the final R
// (n × n) into r: with zeros below the diagonal, or (r_zeros_below false: r is the top of v) over
// the upper triangle only, keeping the first leaf's V below it. `counters` (one per tree node
// above the leaves, tsqr_tree_sizes' count) must be zero; the launch leaves them zero, so they
// are zeroed once, when allocated, and no launch needs a memset before it.
//
// part splits the factorization in two launches: `leaves` factors the leaves and puts their R's in
// the level-1 stacks; `tree` then factors the tree from level 1 up. Between them the leaves' V is
// final, so whatever needs only the leaves (CAQR's leaf applies) can run beside the tree. A tree
// of no levels is factored whole by `leaves`, and `tree` launches nothing.
enum class TsqrFactorPart : int { whole, leaves, tree };
template <class T>
void launch_tsqr_register_factor(const T* a, std::int64_t lda, T* v, std::int64_t ldv, T* stacks, T* tau,
                                 unsigned* counters, T* r, std::int64_t ldr, bool r_zeros_below,
                                 const TsqrTreeArgs& tree, cudaStream_t stream,
                                 TsqrFactorPart part = TsqrFactorPart::whole);

// Q (m × n, ldq ≥ m) ← the first n columns of the orthogonal factor of the last factor call,
// applying the tree top-down (one launch per level) to the identity. q_stacks: workspace the size
// of `stacks`. (With the leaves' thin Q's, Q goes otherwise: launch_tsqr_register_leaf_tops_identity,
// the tree levels by the split apply, launch_caqr_register_leaf_products.)
template <class T>
void launch_tsqr_register_form_q(const T* v, std::int64_t ldv, const T* stacks, const T* tau, T* q_stacks, T* q,
                                 std::int64_t ldq, const TsqrTreeArgs& tree, cudaStream_t stream);

// thin (m × n, ldt ≥ m) ← each leaf's own thin Q: its reflectors (v, tau as the factor wrote them)
// applied to the identity's first n columns, in the leaf's rows. It needs the leaves only, so it
// can run beside the tree's factorization (TsqrFactorPart::tree).
template <class T>
void launch_tsqr_register_leaf_q(const T* v, std::int64_t ldv, const T* tau, T* thin, std::int64_t ldt,
                                 const TsqrTreeArgs& tree, cudaStream_t stream);

// Each leaf's top n rows of x (n columns, rows counted from the tree's first) ← the identity's: the
// state that Q's tree levels (applied to x's leaf tops, as launch_caqr_register_apply's) and then
// launch_caqr_register_leaf_products need, where x is to become Q; no other row of x is read.
template <class T>
void launch_tsqr_register_leaf_tops_identity(T* x, std::int64_t ldx, const TsqrTreeArgs& tree, cudaStream_t stream);

// A TSQR's (or CAQR panel's) Q applied to the identity's columns, after its tree levels (x's rows
// from the panel's first row, tree.n columns, each leaf's top n rows holding the tree's output and
// its other rows zero): the leaves' part, in place, as thin·Y per leaf (thin from
// launch_tsqr_register_leaf_q); no row of x below a leaf's top n is read.
template <class T>
void launch_caqr_register_leaf_products(const T* thin, std::int64_t ldt, T* x, std::int64_t ldx,
                                        const TsqrTreeArgs& tree, cudaStream_t stream);

// CAQR with register TSQR panels: x (rows counted from the panel's first row, ldx, `cols`
// columns) ← Qᵀx (transpose) or Qx, Q the orthogonal factor of the panel's last factor call
// (v: its V as launch_tsqr_register_factor wrote it; tree.n reflectors per block). The tree's
// representative rows (the top n rows of leaf c·fan_in^(ℓ−1)) carry the tree's part, so after Qᵀ
// the panel's top n rows of x hold R's rows. One launch for the leaves, one per tree level;
// with_tree false: the leaves alone (the caller applies the tree's levels, after the leaves for
// Qᵀ and before them for Q). FP32 leaves take column tiles of the narrowest class that holds
// `cols` where a 128-thread block of it holds a leaf's rows, else of the panel's width; 32-wide
// panels of 256-thread blocks run the columns layout (FP64 at any `cols`, and the tree levels too
// where tree.n is 32: launch_caqr_register_apply_level).
// x_in (leaves alone): the leaves read x's entries from x_in (ld_in) and write them to x, so that
// CAQR's first panel applies straight from A into its work copy, which every row of the leaves
// covers; std::invalid_argument with the tree. x_tops_only (Q's leaves alone): x is zero below each
// leaf's top n rows, which the leaves then do not read (Q of the identity's columns after the tree
// levels, with launch_tsqr_register_leaf_tops_identity's state before them).
template <class T>
void launch_caqr_register_apply(const T* v, std::int64_t ldv, const T* stacks, const T* tau, T* x, std::int64_t ldx,
                                std::int64_t cols, const TsqrTreeArgs& tree, bool transpose, cudaStream_t stream,
                                bool with_tree = true, const T* x_in = nullptr, std::int64_t ld_in = 0,
                                bool x_tops_only = false);

// Whether launch_caqr_register_apply_level takes the tree's levels: 32 columns, 256 threads.
bool caqr_register_levels_by_columns(const TsqrTreeArgs& tree);

// One tree level's Qᵀ (transpose) or Q applied to x's rows that the level mixes (each child's
// first leaf's top n rows, rows counted from the tree's first), `cols` columns, in place: a block
// per node and 32-column tile in the columns layout (caqr_apply_leaves_columns_kernel).
template <class T>
void launch_caqr_register_apply_level(const T* stacks, const T* tau, T* x, std::int64_t ldx, std::int64_t cols,
                                      const TsqrTreeArgs& tree, int level, bool transpose, cudaStream_t stream);

}  // namespace gpufact::kernels
