// Switches of the blocked LU (volkov08 §5): each optimization of Fig. 11 can be turned off on its
// own, and every combination computes the same factorization.
#pragma once

#include "factorizations/dense/update_gemm.hpp"

#include <cstdint>
#include <string>

namespace gpufact::dense {

// How the GPU-resident LU factors each panel leaf: cusolverDnXgetrf (partial pivoting), TSLU
// with tournament pivoting (kernels/lu/tslu.cuh; CALU §2), a different but stable choice of P, or
// partial pivoting in one thread block cluster holding the leaf on chip (kernels/lu/panel_coop.cuh).
enum class PanelMethod { cusolver, tournament, cooperative };

enum class PanelSolve { automatic, kernel, cublas };
const char* panel_solve_name(PanelSolve p);
PanelSolve panel_solve_from(const std::string& name);  // throws std::invalid_argument

struct LuOptions {
  std::int64_t nb = 64;          // fine panel width (the paper's 64 = its SGEMM block)
  int coarse_factor = 4;         // two-level: a coarse window spans coarse_factor fine panels (even, >= 2)
  bool row_major = true;         // keep the matrix transposed on the GPU so row swaps are contiguous
  bool inverse_trsm = true;      // U12 = inv(L11) · A12 by GEMM, inv(L11) from the CPU (trtri)
  bool lookahead = true;         // CPU factors panel j+1 while the GPU updates the rest with panel j
  bool two_level = true;         // fine panels inside coarse windows, switch at half (see lu_schedule.hpp)
  UpdateGemm gemm = UpdateGemm::cublas;
  // Hybrid: OpenBLAS threads for the CPU panel (0: leave the caller's setting, all cores).
  int cpu_threads = 0;
  // GPU-resident: recursive panel factorization down to leaves of this many columns, each leaf by
  // cusolverDnXgetrf, trsm + GEMM between the halves (0: one cusolverDnXgetrf on the whole panel).
  std::int64_t panel_leaf = 0;
  // GPU-resident: the leaf factorization. tournament takes leaves of 8..64 columns (panel_leaf 0:
  // kTournamentLeaf); cooperative takes, per panel, the leaf kernels/lu/panel_coop.cuh's
  // coop_panel_fit_width gives for panel_leaf columns (panel_leaf 0: kCooperativeLeaf), in
  // registers where it can, cut to what fits.
  PanelMethod panel = PanelMethod::cusolver;
  // GPU-resident: the trailing update kept off this many SMs (a green context; rounded up to the
  // device's granularity), which only the panel stream uses; 0: both streams on every SM.
  int panel_sms = 0;
  // GPU-resident: the panel stream's unit lower solves (inside a recursive panel, and inv(L11) on
  // the identity) by kernels/dense/trsm_unit_lower.cuh where L fits it, or by cuBLAS trsm.
  // automatic: the kernel in FP64, cuBLAS in FP32 (same H100, cooperative panels: FP64 LU +4.3% /
  // +4.6% at n = 8192 / 16384 with the kernel; FP32 −3.3% / even, cuBLAS's FP32 trsm being faster
  // on these blocks).
  PanelSolve panel_solve = PanelSolve::automatic;
  // GPU-resident: the whole factorization's launches (three streams, every event between them)
  // captured once per matrix pointer and leading dimension into one CUDA graph, instantiated with
  // each kernel node's priority (the panel stream's stays the highest), and replayed on every
  // later call; false: launched one by one. A call with a PhaseTimer always launches one by one.
  // Needs panel_sms = 0 (the green context's stream is not captured).
  bool graph = false;
};

inline constexpr std::int64_t kTournamentLeaf = 32;
// The cooperative leaf's default width (each panel then takes 64 columns where the register kernel
// holds them, else 32): since the leaf's column loop is rolled, 64 beats 32 on one H100 by 3.5% at
// n = 8192 FP32 and 0.9% at 16384, FP64 even (results/nvidia-h100/lu-solve-leaf-rolled-8192.json and
// -16384.json; with the unrolled loop 32 had won, lu-leaf-32.json).
inline constexpr std::int64_t kCooperativeLeaf = 64;

// The leaf width the GPU-resident LU asks for: panel_leaf, or left at 0 kTournamentLeaf for a
// tournament panel (a TSLU leaf is at most 64 wide) and kCooperativeLeaf for a cooperative one
// (each panel then cut to what fits), 0 (no recursion) for cuSOLVER.
std::int64_t effective_panel_leaf(const LuOptions& o);
const char* panel_method_name(PanelMethod p);
PanelMethod panel_method_from(const std::string& name);  // throws std::invalid_argument

// Throws std::invalid_argument naming the bad field.
void validate(const LuOptions& o);
std::string describe(const LuOptions& o);  // "nb=64 row_major inverse lookahead two_level(4) cublas"

// LAPACK's flop count of an m × n LU: mn² − n³/3 for m >= n (2n³/3 square), mirrored for m < n.
double lu_flops(std::int64_t m, std::int64_t n);

}  // namespace gpufact::dense
