// A modern FP32 SIMT SGEMM for Hopper (no tensor cores, no TF32), column-major:
//   C := α op(A) op(B) + β C,  op ∈ {N, T} for (ta, tb) ∈ {NN, NT, TN},
// any m, n, k ≥ 0, any leading dimensions; β = 0 never reads C. CTA tiles of register-blocked
// warp tiles, a cp.async multistage shared-memory pipeline, 16-byte loads where the operand
// allows, conflict-free shared layouts, block swizzling (volkov08 §4 revisited on today's GPUs).
// The block-triangular-C variant (volkov08 §4.2) runs the same main loop on the nonzero tiles only.
//
// The launcher that picks its tile configuration from the tuning table (tuning/sgemm_simt.json)
// is in kernels/gemm/sgemm_simt_table.hpp; here every launcher names its configuration.
#pragma once

#include "core/linalg/blas_types.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpufact::kernels {

// One instantiated tile configuration. The name is stable (reports and tuning tables use it).
struct SgemmSimtConfig {
  std::string name;  // "simt_128x128x8_s3": block_m × block_n × block_k, pipeline stages
  int block_m = 0, block_n = 0, block_k = 0;
  int stages = 0;
  int warps_m = 0, warps_n = 0;    // warp grid of the CTA (256 threads)
  int thread_m = 0, thread_n = 0;  // accumulator tile per thread, in registers
  int min_blocks_per_sm = 0;       // __launch_bounds__'s promise (2 caps registers at 128)
  std::size_t shared_bytes = 0;    // dynamic shared memory per CTA
};

// Every instantiated configuration, in a fixed order.
std::vector<SgemmSimtConfig> sgemm_simt_configs();
// The configuration called `name` (a "+bt" name: its base's tiles under that name); throws
// std::invalid_argument listing the names otherwise.
SgemmSimtConfig sgemm_simt_config(std::string_view name);
// The configuration used when no tuning table is found (documented in sgemm_simt.cu).
std::string_view sgemm_simt_default_config();

// C := α op(A) op(B) + β C with the named tile configuration (a "+bt" name: see below). Throws std::invalid_argument for a
// negative size, a leading dimension below the rows it must hold, TT, or an unknown config.
void sgemm_simt(std::string_view config, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                std::int64_t ldc, cudaStream_t stream);

// NN through a transposed B (the "+bt" configurations, e.g. "simt_128x128x32_s3+bt"): B (k × n)
// is first copied into a workspace Bᵀ (n × k, column-major, ld = n rounded up to 4 so that every
// column is 16-byte aligned) by the shared-memory tiled transpose (kernels/dense/transpose.cuh,
// coalesced both ways, 8 bytes moved per element: ~0.3% of the GEMM's time at n = k = 16384), then
// the NT main loop of the base configuration runs with 16-byte copies of both operands. NN's own
// B (k-contiguous) is staged by 4-byte copies, which costs the direct path ~3–5% against NT on
// the H200. For NT and TN a "+bt" name runs its base configuration unchanged.
inline constexpr std::string_view kSgemmTransposedBSuffix = "+bt";
// Every configuration's name (sgemm_simt_configs() order), then each with kSgemmTransposedBSuffix.
std::vector<std::string> sgemm_simt_config_names();
// Floats of the Bᵀ workspace NN needs through the transposed B: round_up(n, 4) · k.
std::size_t sgemm_simt_bt_workspace_floats(std::int64_t n, std::int64_t k);
// C := α A B + β C (NN) through Bᵀ in the caller's workspace (at least
// sgemm_simt_bt_workspace_floats(n, k) floats, 16-byte aligned; it must not overlap A, B or C).
// `config` names the base configuration, with or without the suffix. Throws std::invalid_argument
// as sgemm_simt does and for a short or misaligned workspace.
void sgemm_simt_bt(std::string_view config, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                   const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                   std::int64_t ldc, float* workspace, std::size_t workspace_floats, cudaStream_t stream);
// sgemm_simt with a "+bt" configuration and NN uses a per-stream workspace cache instead: it grows
// (cudaFree + cudaMalloc, both synchronizing the device) the first time a stream needs a larger
// Bᵀ and is reused afterwards, so a timed loop allocates nothing after its first (warm-up) call.
// The cache lives until the process ends or this releases it (call it only when no GEMM that
// uses it is in flight).
void sgemm_simt_release_bt_workspaces();

// Split-k partial products on the same main loop (volkov08 §4.3): for s < splits,
//   workspace + s·m·n (m × n, ld m) := op(A)(:, K_s) op(B)(K_s, :),  K_s = [s·slice, min(k, (s+1)·slice)),
// an empty K_s giving zeros. slice·splits must cover k; the workspace holds m·n·splits floats.
// The sum over s (kernels/gemm/sgemm_splitk.cuh) completes C. Throws std::invalid_argument as
// sgemm_simt does, and for splits outside 1..65535, slices that miss k or a short workspace.
void sgemm_simt_partials(std::string_view config, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                         int splits, std::int64_t slice, const float* a, std::int64_t lda, const float* b,
                         std::int64_t ldb, float* workspace, std::size_t workspace_floats, cudaStream_t stream);

// How the triangular launcher maps CTAs to C's tiles (volkov08 §4.2): `flipped` launches exactly
// the T(T+1)/2 nonzero tiles (the triangle cut in two and one piece flipped into a rectangle);
// `early_exit` launches the full T × T grid and the blocks off the triangle return at once.
enum class TriangleGrid { flipped, early_exit };

// The lower (or upper) triangle of the n × n C := α op(A) op(B) + β C, op(A) n × k, op(B) k × n
// (SYRK-like when B = A with (ta, tb) = (N, T) or (T, N)). Entries strictly above (below) the
// diagonal are neither read nor written. `config` must have square tiles.
void sgemm_triangular_simt(std::string_view config, TriangleGrid grid, Uplo uplo, Op ta, Op tb, std::int64_t n,
                           std::int64_t k, float alpha, const float* a, std::int64_t lda, const float* b,
                           std::int64_t ldb, float beta, float* c, std::int64_t ldc, cudaStream_t stream);
// The same with the flipped-rectangle grid and the default square configuration.
void sgemm_triangular_simt(Uplo uplo, Op ta, Op tb, std::int64_t n, std::int64_t k, float alpha, const float* a,
                           std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                           std::int64_t ldc, cudaStream_t stream);

}  // namespace gpufact::kernels
