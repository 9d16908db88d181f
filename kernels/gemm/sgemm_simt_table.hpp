// The SIMT SGEMM's tuning table (configs/tuning/sgemm_simt.json, written from a volkov08.sgemm_tune
// report) and the launcher that picks its tile configuration from it. Format:
//   {"kernel": "sgemm_simt", "device": "NVIDIA H200", "source": "...",
//    "entries": [{"trans": "NN", "m": 4096, "n": 4096, "k": 4096,
//                 "config": "simt_128x128x8_s3", "gflops": 51234.5}, ...]}
// Lookup: among the entries of the same transpose pair (all entries when it has none), the one
// nearest in log2 distance |Δlog m| + |Δlog n| + |Δlog k|; no table → sgemm_simt_default_config().
#pragma once

#include "core/linalg/blas_types.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpufact::kernels {

struct SgemmTuningEntry {
  std::string trans;  // "NN", "NT", "TN"
  std::int64_t m = 0, n = 0, k = 0;
  std::string config;
  double gflops = 0.0;  // the measured rate that made it the best (informational)
};

struct SgemmTuningTable {
  std::string device;
  std::string source;
  std::vector<SgemmTuningEntry> entries;
};

// Parses the JSON text; throws std::runtime_error naming `origin` for malformed JSON, a missing
// field, a transpose pair other than NN/NT/TN, a size < 1 or a config not in `known_configs`.
SgemmTuningTable parse_sgemm_tuning_table(const std::string& json_text, const std::string& origin,
                                          const std::vector<std::string>& known_configs);
// The table as JSON text in the format above (what parse_sgemm_tuning_table reads).
std::string sgemm_tuning_table_json(const SgemmTuningTable& table);

std::string trans_name(Op ta, Op tb);  // "NN", "NT", "TN", "TT"

// The nearest entry's config, or nullopt for an empty table.
std::optional<std::string> nearest_sgemm_config(const SgemmTuningTable& table, Op ta, Op tb, std::int64_t m,
                                                std::int64_t n, std::int64_t k);

// The config the plain launcher uses for this problem: tuning/sgemm_simt.json found like the
// presets (core/bench/preset.hpp find_config_file), read and parsed once per process; the
// default config when the file is absent.
std::string sgemm_simt_pick_config(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k);
// Where the table was read from, or "" when none was found (the default config is in use).
std::string sgemm_simt_table_origin();

// C := α op(A) op(B) + β C with the tile configuration from the tuning table (see sgemm_simt.cuh).
void sgemm_simt(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc,
                cudaStream_t stream);

}  // namespace gpufact::kernels
