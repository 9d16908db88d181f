// The block shape CAQR uses for a matrix shape: the nearest entry of the tuning table
// configs/tuning/caqr.json (written from anderson10.fig7's summary on a GPU), or, without a
// table, the documented default below.
#pragma once

#include "factorizations/caqr/caqr_schedule.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace gpufact::factorizations {

struct CaqrTuning {
  CaqrBlockShape shape;
  std::string reduction = "register_serial";
  std::string source;  // "configs/tuning/caqr.json (m×n)" or "default"
};

// Opt-in shared memory per block of the GPUs this targets (H100, H200: 227 KiB); the plan
// checks the real device's limit (caqr_shape_problem).
constexpr std::int64_t kCaqrSharedMemoryBytes = 232448;

// The widest tree whose node kernels fit kCaqrSharedMemoryBytes for panels `width` columns wide.
int caqr_max_tree_fan_in(int width, char precision);
// The smallest fan-in ≤ max_fan_in that reduces `blocks` R's in as few levels as max_fan_in
// does (more, smaller nodes per level: more thread blocks at work); 2 for a single block.
int caqr_balanced_fan_in(std::int64_t blocks, int max_fan_in);

// Default without a table: a panel as wide as the matrix (the paper's TSQR) while it fits shared
// memory — 1024×16 for n ≤ 16 with m ≥ 262144, 256×32 for n ≤ 32, 256×64 for n ≤ 64, 256×128
// for n ≤ 128 in FP32 — with a shallow tree (caqr_balanced_fan_in of caqr_max_tree_fan_in: 2–3
// levels instead of log₂ of the block count), else the paper's best 64×16 and its quad tree
// (anderson10 §IV.F).
CaqrTuning caqr_default_tuning(std::int64_t m, std::int64_t n, char precision);

// The entry of `json_text` ({"entries": [{"precision", "m", "n", "shape", "reduction"}]}) with
// this precision nearest to m × n (distance |log2 m/mₑ| + |log2 n/nₑ|); nullopt if none.
// Throws std::invalid_argument for malformed text.
std::optional<CaqrTuning> caqr_tuning_from_json(const std::string& json_text, std::int64_t m, std::int64_t n,
                                                char precision);

// From configs/tuning/caqr.json when find_config_file finds it, else the default.
CaqrTuning caqr_tuning(std::int64_t m, std::int64_t n, char precision);

}  // namespace gpufact::factorizations
