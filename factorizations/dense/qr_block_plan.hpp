// Panel widths per stage of the blocked QR (volkov08 §5: "block sizes per stage chosen by dynamic
// programming over measured times"). A plan is the list of panel widths, first panel first; the
// host, hybrid and GPU-resident QR all walk the same plan. The cost of one stage, starting at
// column j of an m × n matrix with a panel of width b, is t(rows = m − j, b, update cols = n − j − b)
// — measured, or from QrTimeModel — and plan_qr_blocks minimizes their sum.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpufact::dense {

struct QrStep {
  std::int64_t j0 = 0, j1 = 0;  // the panel's columns [j0, j1)
};

// min(m, n) split into panels of nb (the last one narrower when nb does not divide it).
std::vector<std::int64_t> uniform_qr_widths(std::int64_t k, std::int64_t nb);
// The steps of a plan; throws std::invalid_argument unless every width is positive and they sum to k.
std::vector<QrStep> qr_steps(std::int64_t k, const std::vector<std::int64_t>& widths);

// Seconds for one stage: panel of `width` columns over `rows` rows, trailing update of `update_cols`.
using QrStageCost = std::function<double(std::int64_t rows, std::int64_t width, std::int64_t update_cols)>;

struct QrBlockPlan {
  std::vector<std::int64_t> widths;
  double predicted_s = 0;
};

// The widths from `candidates` (each > 0; a final panel narrower than the largest candidate is
// also allowed, so any n is reachable) minimizing the summed stage cost for the m × n QR
// (m >= n). Dynamic programming over the first unfactored column: best(j) = min_b cost(m − j, b,
// n − j − b) + best(j + b), O(n · |candidates|) cost evaluations.
QrBlockPlan plan_qr_blocks(std::int64_t m, std::int64_t n, const std::vector<std::int64_t>& candidates,
                           const QrStageCost& cost);

// A simple fitted model of a look-ahead stage: the panel (CPU geqrf + larft and its transfers for
// the hybrid, cuSOLVER geqrf + T for the GPU-resident) runs beside the trailing update, so a stage
// costs max(panel, update) plus a fixed overhead; the update GEMMs reach gemm_gflops only for wide
// enough panels (rate · b / (b + gemm_half_width)), the panel its rate only for tall ones.
struct QrTimeModel {
  double panel_gflops = 300;      // CPU geqrf (hybrid) or cuSOLVER panel geqrf (GPU-resident)
  double panel_half_rows = 2048;  // panel rate · rows / (rows + this)
  double gemm_gflops = 40000;     // trailing-update GEMM rate for wide panels
  double gemm_half_width = 48;    // update rate · b / (b + this)
  double transfer_gbs = 20;       // hybrid: the panel goes down and up once per stage (0: none)
  double stage_overhead_s = 60e-6;
  std::size_t element_bytes = 4;
  double operator()(std::int64_t rows, std::int64_t width, std::int64_t update_cols) const;
};
// Defaults per method ("hybrid", "gpu_resident") and element size (4 or 8).
QrTimeModel default_qr_time_model(const std::string& method, std::size_t element_bytes);
// The candidate widths the plans choose from: 32, 64, …, 512 in steps of 32.
std::vector<std::int64_t> default_qr_width_candidates();

// The stored plans (configs/tuning/qr_blocks.json): {"entries": [{"method", "precision", "m",
// "n", "widths": [...], "predicted_s"}...]}. Parsing throws std::invalid_argument naming the
// origin and the bad entry.
struct QrBlockEntry {
  std::string method, precision;
  std::int64_t m = 0, n = 0;
  QrBlockPlan plan;
};
std::vector<QrBlockEntry> parse_qr_block_table(const std::string& json_text, const std::string& origin);
nlohmann::json qr_block_table_json(const std::vector<QrBlockEntry>& entries, const std::string& description);
// The stored plan for exactly this method, precision and shape, if configs/tuning/qr_blocks.json
// (find_config_file) has one.
std::optional<std::vector<std::int64_t>> stored_qr_plan(const std::string& method, const std::string& precision,
                                                        std::int64_t m, std::int64_t n);
// The plan a run uses when no nb is given: the stored one, else the DP over the default model.
std::vector<std::int64_t> auto_qr_widths(const std::string& method, const std::string& precision, std::int64_t m,
                                         std::int64_t n);

}  // namespace gpufact::dense
