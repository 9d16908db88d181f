#pragma once

namespace gpufact {
class Registry;
namespace microbench {
// volkov08.sgemm_tune (volkov08 §4, modern SIMT SGEMM): every tile configuration × transpose ×
// shape against cuBLAS; summary: the best configuration per (transpose, shape) and the tuning
// table (configs/tuning/sgemm_simt.json format).
void register_sgemm_tune(Registry& registry);
// volkov08.triangular (volkov08 §4.2): block-triangular C := α A Bᵀ + β C with the flipped-
// rectangle grid, the early-exit grid, the full square kernel and cublasSsyrk; rate per useful
// flop and the ratio to the full-C rate.
void register_sgemm_triangular(Registry& registry);
}  // namespace microbench
}  // namespace gpufact
