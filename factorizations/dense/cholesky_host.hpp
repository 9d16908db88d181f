// The blocked right-looking Cholesky (volkov08 §5: "the entire matrix is updated as soon as the
// next block column is available") shared by the hybrid and the GPU-resident drivers: the panel
// schedule, the column blocks of the trailing update, the block sizes, the width of the rectangles
// that carry the lower triangle over PCIe, and the same algorithm on the host (same panels, same
// order, same update blocks) so CI checks it against LAPACK potrf without a GPU.
#pragma once

#include "factorizations/dense/update_gemm.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpufact::dense {

// How the GPU-resident Cholesky factors its nb × nb diagonal blocks.
enum class CholeskyDiagonal {
  cusolver,   // cusolverDnXpotrf
  recursive,  // halves by cuBLAS trsm/syrk down to one-CTA 64 × 64 blocks (cholesky_diagonal.hpp)
  fused,      // one CTA writes L11 and L11⁻¹ in one launch (nb <= 128; wider: halves of those)
  // No blocked loop at all: the tile dataflow kernel (kernels/dense/potrf_dataflow) factors each
  // column panel of CholeskyOptions::dataflow_panel columns in one launch, one cuBLAS syrk updates
  // the rest between panels; nb is not used.
  dataflow,
};
const char* cholesky_diagonal_name(CholeskyDiagonal d);  // "cusolver", "recursive", "fused", "dataflow"
CholeskyDiagonal cholesky_diagonal_from(const std::string& name);  // throws std::invalid_argument

struct CholeskyOptions {
  std::int64_t nb = 256;  // panel width
  bool lookahead = true;  // the next panel's columns are updated first and factored beside the rest of the update
  // GPU-resident: L21 = A21 · inv(L11)ᵀ by one GEMM, inv(L11) by trsm on the identity (as the
  // LU's U12, volkov08 §5); false: cuBLAS trsm in place.
  bool inverse_trsm = true;
  // Trailing update A22 −= L21·L21ᵀ (lower triangle only) in column blocks of this width: each
  // block's diagonal square by a rank-k triangle update (cuBLAS syrk, or gpufact's triangular
  // SGEMM) and the rectangle below it by one GEMM. 0: by precision (cholesky_update_step): the
  // whole trailing triangle in one call in FP32, 2048-column blocks in FP64.
  std::int64_t update_block = 0;
  UpdateGemm gemm = UpdateGemm::cublas;
  CholeskyDiagonal diagonal = CholeskyDiagonal::cusolver;  // GPU-resident only
  // GPU-resident only: the trailing update kept off this many SMs (a green context; rounded up to
  // the device's granularity), which only the panel stream uses; 0: both streams on every SM.
  int panel_sms = 0;
  // GPU-resident dataflow only: columns per dataflow launch (a multiple of 64); 0: by n
  // (cholesky_dataflow_panel).
  std::int64_t dataflow_panel = 0;
};

// Throws std::invalid_argument naming the bad field.
void validate(const CholeskyOptions& o);
std::string describe(const CholeskyOptions& o);  // "nb=256 lookahead inverse block=2048 cublas"

// The flop count the rates use: n³/3 (LAPACK's n³/3 + n²/2 + n/6 without the lower terms).
double cholesky_flops(std::int64_t n);

// Panel k covers columns [j0, j1), j1 − j0 = nb except the last (n not a multiple of nb).
struct CholeskyStep {
  std::int64_t j0 = 0, j1 = 0;
};
std::vector<CholeskyStep> cholesky_schedule(std::int64_t n, std::int64_t nb);

// One column block [c0, c1) of a trailing update: the lower triangle of its diagonal square
// (rows and columns [c0, c1)) and the rectangle below it (rows [c1, n), columns [c0, c1)).
struct UpdateBlock {
  std::int64_t c0 = 0, c1 = 0;
};
// The blocks covering columns [c0, c1) (block = 0: one block).
std::vector<UpdateBlock> update_blocks(std::int64_t c0, std::int64_t c1, std::int64_t block);
// The update's column block for `columns` trailing columns of `element_bytes`-byte entries:
// o.update_block where set, else kFp64UpdateBlock in FP64 and all of them in FP32.
std::int64_t cholesky_update_step(const CholeskyOptions& o, std::size_t element_bytes, std::int64_t columns);
// cuBLAS's dsyrk over a whole trailing triangle ran at ~45 TFLOP/s on the H100 where 2048-column
// blocks (dsyrk on each diagonal square, one tensor-core DGEMM below) ran at ~52: n = 16384 and
// 20480 at 40.4 and 41.5 TFLOP/s against 37.0 and 36.7 with one dsyrk (dataflow panels of 2048).
// ssyrk keeps pace with sgemm, and FP32 was best with one call (H200: 38.4 against 37.7).
inline constexpr std::int64_t kFp64UpdateBlock = 2048;

// LAPACK potrf semantics, lower: the column-major n × n `a` (lda >= max(1, n)); its lower
// triangle is overwritten by L, the strict upper triangle is neither read nor written. Returns
// info: 0, or the 1-based order of the first leading minor that is not positive definite (the
// factorization stops there, as LAPACK's). Only nb and update_block matter on the host. Throws
// std::invalid_argument on bad sizes or a NaN/Inf in the lower triangle.
template <class T>
int cholesky_blocked_host(std::int64_t n, T* a, std::int64_t lda, const CholeskyOptions& o);

// volkov08 §5: "the transfer of the triangular matrix is done by transferring a set of rectangular
// blocks that includes the triangular part; the width of the blocks is optimized using the
// performance model of §3.2" (eq. 1: time = α + bytes/β per transfer). The lower triangle of an
// n × n matrix sent as column blocks of width b costs ⌈n/b⌉·α + (n²/2 + n·b/2)·e/β: fewer,
// wider blocks pay less latency and carry more of the upper triangle along. The minimum is at
// b* = √(2αβ/e); returned rounded to a multiple of 32 in [32, n] (n when n <= 32). Defaults: the
// H200's pinned host-to-device fit (volkov08.transfer: α = 4.3 µs, β = 52.7 GB/s) → b* ≈ 336 in
// FP32, 238 in FP64.
struct TransferLink {
  double alpha_s = 4.3e-6;
  double beta_bytes_per_s = 52.65e9;
};
std::int64_t triangle_transfer_width(std::int64_t n, std::size_t element_bytes, const TransferLink& link = {});

// Panel widths when the nb axis is 0. Hybrid: the LU's time model (lu_block_model.hpp) with the
// update's flops halved (a syrk is half a GEMM of the same shape), so the CPU panel (potrf + trsm,
// m·b² flops like getrf's) is balanced against half the GPU work. GPU-resident: the trailing
// syrk's k grows with n until it runs near the GEMM's rate, as gpu_resident_lu_nb.
std::int64_t cholesky_hybrid_nb(std::int64_t n, std::size_t element_bytes);
std::int64_t cholesky_resident_nb(std::int64_t n);
// The same for the fused diagonal (one launch per block up to 128 columns; wider blocks split in
// two around cuBLAS calls): 128 below n = 4096, 256 up to 12288, 512 above (measured on the H200,
// FP32: 8192 20.7 TFLOP/s at 256 against 17.4 at 128; 16384 34.7 at 512, 34.2 at 384, 33.2 at 256).
std::int64_t cholesky_resident_fused_nb(std::int64_t n);
// Columns per dataflow launch when CholeskyOptions::dataflow_panel is 0. FP32: the whole matrix
// up to n = 8192, 4096-column panels above (H200: n = 8192 whole 6.67 ms against 6.87 in
// 4096-column panels; n = 16384 in 37.7 ms with 4096, 39.4 with 2048, 41.6 with 8192, 48.5
// whole; H100: n = 12288 whole at 28.5 TFLOP/s against cuSOLVER's 32.2, 16384/32768 at
// 38.3/44.6 with 4096, 37.0/38.1 with 2048, 34.1/40.8 with 8192). FP64: the whole matrix up to
// 4096, 4096-column panels up to 8192 (H200: 6.46 ms against 6.85 whole), 2048 above (H100,
// panels of 1024/2048/3072/4096: n = 12288 at 32.4/33.6/33.0/32.3 TFLOP/s, 16384 at
// 34.8/35.6/35.3/34.5, 20480 at 35.5/36.7/36.1/35.4, one dsyrk between).
std::int64_t cholesky_dataflow_panel(std::int64_t n, std::size_t element_bytes);
// Columns per dataflow launch for `o` (the first panel's, the widest): o.dataflow_panel where
// set, else cholesky_dataflow_panel; never more than n.
std::int64_t cholesky_dataflow_width(std::int64_t n, const CholeskyOptions& o, std::size_t element_bytes);

}  // namespace gpufact::dense
