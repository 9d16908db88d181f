// The number of k slices split-k uses per shape (volkov08 §4.3: "the optimal number of partial
// sums is found using brute force search for every particular matrix dimension"). The search is
// volkov08.fig5's sweep; its summary prints the table, which is stored as
// configs/tuning/sgemm_splitk.json (scripts/tuning_table.py REPORT volkov08.fig5 extracts it):
//   {"description": "...", "device": "NVIDIA H200", "entries": [{"m": 64, "n": 64, "k": 16384, "splits": 64}, ...]}
// A shape not in the table takes the entry nearest to it in (log2 m, log2 n, log2 k); without a
// table, splitk_heuristic decides.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpufact::factorizations {

struct SplitkEntry {
  std::int64_t m = 0, n = 0, k = 0;
  int splits = 1;
};

struct SplitkTable {
  std::string origin;  // file it came from
  std::string device;  // GPU it was measured on, when recorded
  std::vector<SplitkEntry> entries;
};

// Throws std::runtime_error naming `origin` for malformed JSON, a missing field or a value out of
// range (sizes >= 1, splits 1..kSplitkMaxSplits).
SplitkTable parse_splitk_table(const std::string& json_text, const std::string& origin);
// The stored table (configs/tuning/sgemm_splitk.json via find_config_file), read once; nullopt
// when there is none. A malformed file throws.
const std::optional<SplitkTable>& stored_splitk_table();

nlohmann::json splitk_table_json(const std::vector<SplitkEntry>& entries, const std::string& description,
                                 const std::string& device);

// Without a table: enough blocks for 4 per SM (64×64 tiles × splits), each slice keeping at least
// 256 columns of k, at most kSplitkMaxSplits.
int splitk_heuristic(std::int64_t m, std::int64_t n, std::int64_t k, int sm_count);

// For split-k on SIMT tiles (block_m × block_n, ctas_per_sm resident per SM): enough CTAs to fill
// every SM ctas_per_sm times (tiles × splits), each slice keeping at least min_slice columns of k,
// at most kSplitkMaxSplits.
int splitk_simt_heuristic(std::int64_t m, std::int64_t n, std::int64_t k, int block_m, int block_n, int ctas_per_sm,
                          int sm_count, std::int64_t min_slice = 64);

struct SplitsChoice {
  int splits = 1;
  std::string source;  // "table (m×n×k)", "heuristic"
};
// The nearest table entry's splits (capped at ceil(k / 16) so no slice is empty), else the heuristic.
SplitsChoice choose_splits(const SplitkTable* table, std::int64_t m, std::int64_t n, std::int64_t k, int sm_count);

}  // namespace gpufact::factorizations
