// The shape of CAQR's work (anderson10 §II.B–C, §IV.B–C): panels of block_cols columns, each
// factored by TSQR over blocks of block_rows rows and a reduction tree whose fan-in is
// block_rows / block_cols (a quad tree for 64×16 blocks; at least 2) unless the shape names its
// own fan-in (a wider, shallower tree for tall-skinny panels: fewer levels, each a launch). The host reference and the
// GPU plan both walk this one schedule, so they run the same blocks, tree and reflector order.
//
// Storage ("CAQR tree layout"), for the panel at columns [c0, c0 + w) and rows [c0, m):
//  * level-0 block b covers panel rows [b·block_rows, min((b+1)·block_rows, h)); its
//    k_b = min(rows_b, w) Householder vectors lie below the block's diagonal (v(j) = 1 implicit),
//    LAPACK geqrf layout relative to the block's first row; taus at tau[tau_offset + b·block_cols + j].
//  * tree level ℓ ≥ 1 stacks the R's of up to fan_in consecutive level-(ℓ−1) nodes. Node i's
//    children are level-(ℓ−1) nodes fan_in·i + c; level-(ℓ−1) node j keeps its R in the top rows
//    of level-0 block j·fan_in^(ℓ−1). A node with one child passes its R up unchanged (no
//    reflectors). Otherwise the stacked matrix S = [R_0; R_1; …] (child c has k_c rows, all but
//    the panel's last node have w) is factored; because the R's are upper trapezoidal, reflector j
//    is 1 at row j of R_0 and nonzero only in rows 0…min(j, k_c − 1) of children c ≥ 1, so it is
//    stored over those children's upper trapezoids, and the new R over R_0's upper triangle
//    (anderson10 §IV.D factor_tree). Taus at tau[level.tau_offset + i·block_cols + j], j < w.
//  * after the whole panel, block 0's top w×w triangle holds this panel's rows of R.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpufact::factorizations {

struct CaqrBlockShape {
  int rows = 64;    // block_rows: rows of a first-level block held in fast memory
  int cols = 16;    // block_cols: panel width
  int fan_in = 0;   // R's stacked per tree node; 0: block_rows / block_cols (the paper's tree)
  // "64x16", or "256x128f4" with an explicit tree fan-in.
  std::string label() const {
    return std::to_string(rows) + "x" + std::to_string(cols) + (fan_in > 0 ? "f" + std::to_string(fan_in) : "");
  }
  // "64x16" without the fan-in: the compiled kernel shape.
  std::string kernel_label() const { return std::to_string(rows) + "x" + std::to_string(cols); }
};

// "64x16" -> {64, 16}, "256x128f4" -> {256, 128, 4}; throws std::invalid_argument naming the text.
CaqrBlockShape parse_block_shape(const std::string& text);

// Stacked R's per tree node (at least 2).
inline int tree_fan_in(CaqrBlockShape s) {
  if (s.fan_in > 0) return s.fan_in >= 2 ? s.fan_in : 2;
  return s.rows / s.cols >= 2 ? s.rows / s.cols : 2;
}

struct CaqrTreeLevel {
  std::int64_t children = 0;         // nodes of the level below
  std::int64_t child_stride = 0;     // rows between consecutive children's R storage
  std::int64_t last_child_rows = 0;  // k of the last child (the others have w)
  std::int64_t nodes = 0;            // ceil(children / fan_in)
  std::int64_t last_node_rows = 0;   // k of this level's last node (w, or last_child_rows if it passes through)
  std::int64_t tau_offset = 0;
};

struct CaqrPanel {
  std::int64_t col0 = 0;  // first column; also the first row of the panel
  std::int64_t width = 0;
  std::int64_t rows = 0;  // m − col0
  std::int64_t blocks = 0;
  std::int64_t last_block_rows = 0;
  std::int64_t tau_offset = 0;  // level-0 taus
  std::vector<CaqrTreeLevel> levels;
};

struct CaqrSchedule {
  std::int64_t m = 0, n = 0;
  CaqrBlockShape shape;
  int fan_in = 2;
  std::vector<CaqrPanel> panels;
  std::int64_t tau_count = 0;  // total tau entries (tau_ld = shape.cols per node)
};

// Throws std::invalid_argument for m < n, n < 1, or a shape with cols < 1 or rows < cols.
CaqrSchedule make_caqr_schedule(std::int64_t m, std::int64_t n, CaqrBlockShape shape);

// Flops of CAQR's R (geqrf's count 2mn² − 2n³/3) and of forming the explicit Q (orgqr's count,
// 4mn² − 4n³/3 for k = n): the counts every method of a comparison divides by.
double qr_flops(std::int64_t m, std::int64_t n);
double orgqr_flops(std::int64_t m, std::int64_t n);

// Flops of applying k Householder reflectors of length `rows` (v(j) = 1, zeros above) to `cols`
// columns: each reflector j costs a dot and an axpy over rows − j entries per column,
// 4·cols·Σ_{j<k}(rows − j) = 4·cols·(k·rows − k(k−1)/2).
double householder_apply_flops(std::int64_t rows, std::int64_t k, std::int64_t cols);

}  // namespace gpufact::factorizations
