// Batched compact-WY application of many small blocks of Householder reflectors (anderson10's
// apply_qt_h and apply_qt_tree as two small GEMMs per block instead of one reduction per
// reflector): for each block, C_b ← (I − V T Vᵀ)ᵀ C_b = C_b − V (Tᵀ (Vᵀ C_b)), or with T for Q.
//
// A block's reflectors are in LAPACK's geqrf storage: V's column i holds v_i below row i (v_i(i) = 1
// implicit, zero above), τ_i beside. launch_wy_larft builds each block's T (larft, forward,
// columnwise: T(0:i, i) = −τ_i T(0:i, 0:i) V(:, 0:i)ᵀ v_i, T(i, i) = τ_i) once; launch_wy_apply then
// applies the blocks to any number of columns (W = VᵀC, W ← op(T) W, C −= V W as register-tiled
// products from shared memory), so a reflector block costs a few barrier phases, not one per
// reflector. Two kernels (WyApplyKernel below): chunked, any layout up to 32 reflectors, and
// resident, FP32 blocks of up to 256 rows × 64 reflectors, on the FMA pipes or with its two
// products on the tensor cores (resident_3xtf32). Measured on the H100 (anderson10.kernels, 10⁶
// rows, FP32): 256 × 64 blocks on the resident kernel at 29.8 TFLOP/s, 44.8% of the FMA peak,
// with 128 trailing columns (47.8% with 512), on the tensor cores at 36.5 TFLOP/s, 53.0% (58–59%);
// 256 × 32 on the chunked one at 20.8 (30.8%); the per-reflector kernels at most 11.3 (16.9%).
//
// The blocks are one of three row layouts (WyBlocks::rows):
// - fixed: block b owns rows [b·block_rows, min((b + 1)·block_rows, m)) — CAQR's first level;
// - split: block b owns rows [b·m / blocks, (b + 1)·m / blocks) — register TSQR's leaves;
// - tree: a level of register TSQR's tree: node b stacks the top k rows of its children
//   fan_in·b … (`children` nodes below), child c's rows starting at leaf row (c·span)·m / leaves;
//   V is the node's stack (b·v_stride into v), C's rows are gathered from those places.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace gpufact::kernels {

// The most reflectors per block: 64 in FP32, 32 in FP64 (blocks run 16, 32 or 64 wide, padded).
template <class T>
constexpr int wy_max_reflectors() {
  return sizeof(T) == 4 ? 64 : 32;
}
// The most the chunked and split applies take (wider FP32 blocks run on the resident kernel).
constexpr int kWyChunkedMaxReflectors = 32;

enum class WyRows : int { fixed, split, tree };

template <class T>
struct WyBlocks {
  WyRows rows = WyRows::fixed;
  int blocks = 0;  // blocks (tree: nodes of the level)
  int k = 0;       // reflectors per block, 1 … wy_max_reflectors<T>(); a block of fewer rows has that many
  std::int64_t m = 0;  // fixed and split: rows covered; tree: the tree's rows (leaf row arithmetic)
  int block_rows = 0;  // fixed
  // tree
  int leaves = 0, fan_in = 0, children = 0;
  std::int64_t span = 1;  // leaves per child
  std::int64_t v_stride = 0;
  // block b's V: v + b·v_stride (tree) or v + its first row (fixed, split); ld ldv
  const T* v = nullptr;
  std::int64_t ldv = 0;
  const T* tau = nullptr;  // block b's taus at tau + b·tau_stride
  std::int64_t tau_stride = 0;
  // Optional, for launch_wy_apply_split: each block's T as launch_wy_larft writes it (block b at
  // t + b·wy_t_entries(k)), so the apply neither sums VᵀV nor runs larft's recurrence; or, where
  // T is made, t_out to keep it there for later applies of the same blocks.
  const T* t = nullptr;
  T* t_out = nullptr;
};

// Entries of T per block (the padded width squared): what launch_wy_larft writes per block.
int wy_t_entries(int k);

// Sets the kernels' shared-memory limits once (the plans call it when they are made, so that no
// attribute call happens inside a stream capture; the launchers also call it).
template <class T>
void prepare_wy_kernels();

// t (blocks × wy_t_entries(k)) ← each block's T, zeros below the diagonal and past its reflectors.
template <class T>
void launch_wy_larft(const WyBlocks<T>& b, T* t, cudaStream_t stream);

// Which kernel launch_wy_apply runs:
// - chunked: a thread block per (block, 64-column tile in FP32, 32 in FP64), the block's rows
//   through shared memory twice, 256 (FP32) or 128 (FP64) at a time; any row layout, up to
//   kWyChunkedMaxReflectors;
// - resident (FP32, up to 64 reflectors, blocks of at most 256 contiguous rows: fixed or split):
//   one thread block per SM, persistent; a block's V stays in shared memory while C streams
//   through in 64-column tiles, the next load always in flight during the current tile's update;
// - resident_3xtf32: the resident kernel with its two products (VᵀC and V·Y) on the tensor cores,
//   each FP32 operand split into two TF32 parts and three products summed (FP32-level accuracy
//   at three tensor-core products per FMA); phase 2 (op(T)·W) stays on the FMA pipes;
// - automatic: resident for blocks wider than kWyChunkedMaxReflectors, chunked otherwise.
enum class WyApplyKernel : int { automatic, chunked, resident, resident_3xtf32 };
const char* to_string(WyApplyKernel k);
// Throws std::invalid_argument naming the choices.
WyApplyKernel wy_apply_kernel_from(const std::string& name);
// Empty when `kernel` can apply these blocks (check_blocks aside), else why not.
template <class T>
std::string wy_apply_kernel_problem(const WyBlocks<T>& b, WyApplyKernel kernel);
// The kernel `kernel` stands for on these blocks (automatic resolved).
template <class T>
WyApplyKernel wy_apply_kernel_for(const WyBlocks<T>& b, WyApplyKernel kernel);

// C ← Qᵀ C (transpose) or Q C for each block's Q = H_0 H_1 … H_{k−1} = I − V T Vᵀ; C's rows are
// the blocks' rows (fixed, split: counted from C's first row; tree: gathered as above), `cols`
// columns, ldc. Throws std::invalid_argument for malformed blocks, too many column tiles, or a
// kernel that cannot apply them.
template <class T>
void launch_wy_apply(const WyBlocks<T>& b, const T* t, T* c, std::int64_t ldc, std::int64_t cols, bool transpose,
                     cudaStream_t stream, WyApplyKernel kernel = WyApplyKernel::automatic);

// The same apply for few blocks (a TSQR tree level, a panel's leaves at a few thousand rows), up to
// kWyChunkedMaxReflectors: each block's rows in chunks of 64 and C in tiles of 32 columns, a thread
// block each, so they run side by side. Two launches (each chunk's VᵀV and VᵀC into `workspace`, wy_apply_split_workspace
// entries; then per chunk: its block's T, W ← op(T) W, C −= V W); T is made from VᵀV by larft's
// recurrence in every chunk unless b.t holds it (launch_wy_larft beforehand).
template <class T>
std::size_t wy_apply_split_workspace(const WyBlocks<T>& b, std::int64_t cols);
// Thread blocks of each of its two launches.
template <class T>
std::int64_t wy_apply_split_thread_blocks(const WyBlocks<T>& b, std::int64_t cols);
template <class T>
void launch_wy_apply_split(const WyBlocks<T>& b, T* c, std::int64_t ldc, std::int64_t cols, bool transpose,
                           T* workspace, cudaStream_t stream);

}  // namespace gpufact::kernels
