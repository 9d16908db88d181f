// The four kernels of CAQR (anderson10 §IV.D) and what the plan around them needs. All matrices
// are column-major; "panel" points at the panel's top-left entry (row c0, column c0), and rows of
// the trailing matrix C are counted from the same first row. Storage layout and tree geometry:
// factorizations/caqr/caqr_schedule.hpp. Householder convention: LAPACK's (v(j) = 1 implicit,
// β = −sign(α)‖x‖, τ = 0 when nothing lies below the diagonal entry).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace gpufact::kernels {

// anderson10 §IV.E: how apply_qt_h reduces the columns of the block in the matrix-vector product.
enum class QtReduction : int {
  smem_parallel = 0,               // 1) a row per thread, one parallel shared-memory reduction per column
  register_serial = 1,             // 2) Fig. 6 layout: serial sums in registers, partials through shared memory
  smem_combined = 2,               // 3) the block transposed in shared memory, reduced as one long vector
  register_serial_transposed = 3,  // 4) as 2) on panels pre-transposed to row-major tiles (caqr_panel_transpose)
};
const char* to_string(QtReduction r);

// One level of a panel's reduction tree (CaqrTreeLevel): node i stacks the R's of children
// fan_in·i … (the last child has last_child_rows rows, the others `width`), stored child_stride
// rows apart from the panel's first row.
struct CaqrTreeLevelArgs {
  std::int64_t children = 0;
  std::int64_t child_stride = 0;
  std::int64_t last_child_rows = 0;
  int fan_in = 2;
};

// Empty when the kernels can run `block_rows`×`block_cols` blocks in precision T with reduction
// `r` and a tree of this fan-in (0: block_rows / block_cols, at least 2) for panels at most
// `width` wide (0: block_cols) on the current device (compiled shape, shared memory), else why not.
template <class T>
std::string caqr_shape_problem(int block_rows, int block_cols, QtReduction r, int fan_in = 0, int width = 0);
// Sets the kernels' shared-memory limits for this shape once, so that no attribute call happens
// later inside a stream capture (the plan calls it when it is made).
template <class T>
void caqr_prepare_kernels(int block_rows, int block_cols);
// Shapes compiled for apply_qt_h, as "64x16,128x8,...".
std::string caqr_compiled_shapes();

// factor: QR of each block_rows × width block of the `rows` × width panel in shared memory;
// Householder vectors and R overwrite the block, tau[b·tau_ld + j] (0 for j ≥ min(rows_b, width)).
template <class T>
void launch_caqr_factor(T* panel, std::int64_t lda, std::int64_t rows, int width, int block_rows, T* tau, int tau_ld,
                        cudaStream_t stream);

// factor_tree: QR of each node's stack of R's; reflectors written over the children's upper
// trapezoids, the new R over the first child's triangle; tau[node·tau_ld + j], j < width.
// Launchers throw std::runtime_error when a kernel cannot launch with its thread count (register
// use) and std::invalid_argument when the shape needs more shared memory than the device has.
template <class T>
void launch_caqr_factor_tree(T* panel, std::int64_t lda, int width, CaqrTreeLevelArgs level, T* tau, int tau_ld,
                             cudaStream_t stream);

// apply_qt_h: applies each first-level block's Qᵀ (transpose) or Q to the same rows of the
// `cols` columns of C, one block_rows × block_cols tile per thread block. For
// register_serial_transposed, C is in tile layout: element (i, j) at
// c[(j / block_cols)·ldc·block_cols + i·block_cols + j mod block_cols] (ldc ≥ rows).
template <class T>
void launch_caqr_apply_qt_h(const T* panel, std::int64_t lda, std::int64_t rows, int width, int block_rows,
                            int block_cols, const T* tau, int tau_ld, T* c, std::int64_t ldc, std::int64_t cols,
                            bool transpose, QtReduction reduction, cudaStream_t stream);

// apply_qt_tree: applies each tree node's Qᵀ (transpose) or Q to the rows of C its stack covers.
template <class T>
void launch_caqr_apply_qt_tree(const T* panel, std::int64_t lda, int width, CaqrTreeLevelArgs level, const T* tau,
                               int tau_ld, T* c, std::int64_t ldc, std::int64_t cols, bool transpose,
                               cudaStream_t stream);

// Blocked (compact WY, LAPACK geqrf/larft/larfb) variants of factor, factor_tree and
// apply_qt_h: the same storage, reflectors and taus as the columnwise kernels above (any apply
// kernel works on either factor's output), computed kWyCols = 16 columns at a time with the
// trailing update as two small in-shared-memory GEMMs. apply_qt_h_wy takes C column-major.
// caqr_wy_shape_problem: empty when they fit this shape (any block_rows ≥ block_cols; fan_in and
// width as for caqr_shape_problem) on the current device, else why not.
template <class T>
std::string caqr_wy_shape_problem(int block_rows, int block_cols, int fan_in = 0, int width = 0);
template <class T>
void caqr_prepare_wy_kernels();
template <class T>
void launch_caqr_factor_wy(T* panel, std::int64_t lda, std::int64_t rows, int width, int block_rows, T* tau,
                           int tau_ld, cudaStream_t stream);
template <class T>
void launch_caqr_factor_tree_wy(T* panel, std::int64_t lda, int width, CaqrTreeLevelArgs level, T* tau, int tau_ld,
                                cudaStream_t stream);
template <class T>
void launch_caqr_apply_qt_h_wy(const T* panel, std::int64_t lda, std::int64_t rows, int width, int block_rows,
                               const T* tau, int tau_ld, T* c, std::int64_t ldc, std::int64_t cols, bool transpose,
                               cudaStream_t stream);

// §IV.E approach 4's preprocessing: `rows` × `cols` column-major A to and from the tile layout above.
template <class T>
void launch_caqr_panel_transpose(const T* a, std::int64_t lda, std::int64_t rows, std::int64_t cols, int tile_cols,
                                 T* tiles, std::int64_t ldt, cudaStream_t stream);
template <class T>
void launch_caqr_panel_untranspose(const T* tiles, std::int64_t ldt, std::int64_t rows, std::int64_t cols,
                                   int tile_cols, T* a, std::int64_t lda, cudaStream_t stream);

// Q ← the first n columns of the m × m identity (ldq >= m; launch_set_identity_columns).
template <class T>
void launch_set_identity(T* q, std::int64_t ldq, std::int64_t m, std::int64_t n, cudaStream_t stream);
// R (n × n) ← the upper triangle of A's first n rows, zeros below.
template <class T>
void launch_copy_upper_triangle(const T* a, std::int64_t lda, std::int64_t n, T* r, std::int64_t ldr,
                                cudaStream_t stream);
// Adds to *count the number of NaN/Inf entries of the m × n A (*count zeroed by the caller).
template <class T>
void launch_count_nonfinite(const T* a, std::int64_t lda, std::int64_t m, std::int64_t n, unsigned long long* count,
                            cudaStream_t stream);

}  // namespace gpufact::kernels
