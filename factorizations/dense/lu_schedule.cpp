#include "factorizations/dense/lu_schedule.hpp"

#include <algorithm>
#include <stdexcept>

namespace gpufact::dense {

void validate(const LuOptions& o) {
  if (o.nb < 1 || o.nb > 512) throw std::invalid_argument("nb = " + std::to_string(o.nb) + " is outside 1..512");
  if (o.two_level && (o.coarse_factor < 2 || o.coarse_factor % 2 != 0 || o.coarse_factor > 64))
    throw std::invalid_argument("coarse_factor = " + std::to_string(o.coarse_factor) +
                                " must be even and in 2..64");
  if (o.cpu_threads < 0 || o.cpu_threads > 1024)
    throw std::invalid_argument("cpu_threads = " + std::to_string(o.cpu_threads) + " is outside 0..1024");
  if (o.panel_leaf != 0 && (o.panel_leaf < 8 || o.panel_leaf > 512))
    throw std::invalid_argument("panel_leaf = " + std::to_string(o.panel_leaf) + " must be 0 (no recursion) or in 8..512");
  if (o.panel == PanelMethod::tournament && o.panel_leaf > 64)
    throw std::invalid_argument("panel_leaf = " + std::to_string(o.panel_leaf) +
                                " with panel = tournament must be 0 (32) or in 8..64 (the TSLU leaf's widest)");
  if (o.panel_sms < 0) throw std::invalid_argument("panel_sms = " + std::to_string(o.panel_sms) + " must be >= 0");
  if (o.graph && o.panel_sms > 0)
    throw std::invalid_argument("graph: panel_sms = " + std::to_string(o.panel_sms) +
                                " must be 0 (the update's green-context stream is not captured)");
}

std::int64_t effective_panel_leaf(const LuOptions& o) {
  if (o.panel_leaf != 0) return o.panel_leaf;
  if (o.panel == PanelMethod::tournament) return kTournamentLeaf;
  if (o.panel == PanelMethod::cooperative) return kCooperativeLeaf;
  return 0;
}

const char* panel_method_name(PanelMethod p) {
  switch (p) {
    case PanelMethod::tournament: return "tournament";
    case PanelMethod::cooperative: return "cooperative";
    case PanelMethod::cusolver: break;
  }
  return "cusolver";
}

PanelMethod panel_method_from(const std::string& name) {
  for (const PanelMethod p : {PanelMethod::cusolver, PanelMethod::tournament, PanelMethod::cooperative})
    if (name == panel_method_name(p)) return p;
  throw std::invalid_argument("panel = " + name + " is not cusolver, tournament or cooperative");
}

const char* panel_solve_name(PanelSolve p) {
  switch (p) {
    case PanelSolve::kernel: return "kernel";
    case PanelSolve::cublas: return "cublas";
    case PanelSolve::automatic: break;
  }
  return "auto";
}

PanelSolve panel_solve_from(const std::string& name) {
  for (const PanelSolve p : {PanelSolve::automatic, PanelSolve::kernel, PanelSolve::cublas})
    if (name == panel_solve_name(p)) return p;
  throw std::invalid_argument("panel_solve = " + name + " is not auto, kernel or cublas");
}

std::vector<PanelLeaf> panel_leaves(std::int64_t j0, std::int64_t j1, std::int64_t leaf) {
  std::vector<PanelLeaf> out;
  if (j1 <= j0) return out;
  if (leaf <= 0 || j1 - j0 <= leaf) {
    out.push_back({j0, j1});
    return out;
  }
  const std::int64_t first = panel_split(j1 - j0, leaf);
  auto left = panel_leaves(j0, j0 + first, leaf), right = panel_leaves(j0 + first, j1, leaf);
  out.insert(out.end(), left.begin(), left.end());
  out.insert(out.end(), right.begin(), right.end());
  return out;
}

std::int64_t panel_split(std::int64_t width, std::int64_t leaf) {
  // Half the width rounded down to whole leaves, at least one leaf: leaves stay full width except
  // the last, and the left half (the one whose GEMM updates the right) is never the narrow one.
  return std::max(leaf, (width / 2) / leaf * leaf);
}

std::string describe(const LuOptions& o) {
  std::string s = "nb=" + std::to_string(o.nb);
  s += o.row_major ? " row_major" : " col_major";
  s += o.inverse_trsm ? " inverse" : " trsm";
  s += o.lookahead ? " lookahead" : " no_lookahead";
  s += o.two_level ? " two_level(" + std::to_string(o.coarse_factor) + ")" : " one_level";
  s += std::string(" ") + update_gemm_entry(o.gemm).name;
  if (o.cpu_threads > 0) s += " cpu_threads=" + std::to_string(o.cpu_threads);
  if (o.panel_leaf > 0) s += " panel_leaf=" + std::to_string(o.panel_leaf);
  if (o.panel == PanelMethod::tournament) s += " panel=tournament(leaf=" + std::to_string(effective_panel_leaf(o)) + ")";
  if (o.panel == PanelMethod::cooperative) s += " panel=cooperative";
  if (o.panel_sms > 0) s += " panel_sms=" + std::to_string(o.panel_sms);
  if (o.panel_solve != PanelSolve::automatic) s += std::string(" panel_solve=") + panel_solve_name(o.panel_solve);
  if (o.graph) s += " graph";
  return s;
}

double lu_flops(std::int64_t m, std::int64_t n) {
  const double a = static_cast<double>(std::max(m, n)), b = static_cast<double>(std::min(m, n));
  return a * b * b - b * b * b / 3.0;
}

std::vector<LuStep> lu_schedule(std::int64_t m, std::int64_t n, const LuOptions& o) {
  validate(o);
  if (m < 0 || n < 0) throw std::invalid_argument("lu_schedule: negative size");
  const std::int64_t k = std::min(m, n);
  std::vector<LuStep> steps;
  if (!o.two_level) {
    for (std::int64_t j0 = 0; j0 < k; j0 += o.nb)
      steps.push_back({j0, std::min(j0 + o.nb, k), n, n});
    for (auto& s : steps) s.coarse_k0 = s.j1;  // no coarse updates
    return steps;
  }
  const std::int64_t half = o.coarse_factor / 2;
  for (std::int64_t w = 0; w < k; w += half * o.nb) {
    const std::int64_t window_end = std::min(w + o.coarse_factor * o.nb, n);
    for (std::int64_t p = 0; p < half; ++p) {
      const std::int64_t j0 = w + p * o.nb;
      if (j0 >= k) break;
      LuStep s{j0, std::min(j0 + o.nb, k), window_end, 0};
      const bool last_of_window = p == half - 1 || s.j1 == k;
      s.coarse_k0 = last_of_window && window_end < n ? w : s.j1;
      steps.push_back(s);
    }
  }
  return steps;
}

}  // namespace gpufact::dense
