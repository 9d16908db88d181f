#include "factorizations/gemm/splitk_table.hpp"

#include "core/bench/preset.hpp"
#include "kernels/gemm/sgemm_splitk.cuh"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace gpufact::factorizations {
namespace {

double log_distance(const SplitkEntry& e, std::int64_t m, std::int64_t n, std::int64_t k) {
  const auto d = [](std::int64_t x, std::int64_t y) {
    return std::log2(static_cast<double>(std::max<std::int64_t>(x, 1))) -
           std::log2(static_cast<double>(std::max<std::int64_t>(y, 1)));
  };
  return d(e.m, m) * d(e.m, m) + d(e.n, n) * d(e.n, n) + d(e.k, k) * d(e.k, k);
}

int cap_splits(int splits, std::int64_t k) {
  const std::int64_t most = std::max<std::int64_t>(1, (k + 15) / 16);
  return static_cast<int>(std::clamp<std::int64_t>(splits, 1, std::min<std::int64_t>(most, kernels::kSplitkMaxSplits)));
}

}  // namespace

SplitkTable parse_splitk_table(const std::string& json_text, const std::string& origin) {
  SplitkTable t;
  t.origin = origin;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(origin + ": not JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("entries") || !j["entries"].is_array())
    throw std::runtime_error(origin + ": expected an object with an \"entries\" array");
  if (j.contains("device") && j["device"].is_string()) t.device = j["device"].get<std::string>();
  std::size_t index = 0;
  for (const auto& e : j["entries"]) {
    const std::string where = origin + ": entries[" + std::to_string(index++) + "]";
    SplitkEntry entry;
    const auto field = [&](const char* name, std::int64_t lo, std::int64_t hi) {
      if (!e.is_object() || !e.contains(name) || !e[name].is_number_integer())
        throw std::runtime_error(where + ": missing integer \"" + name + "\"");
      const auto v = e[name].get<std::int64_t>();
      if (v < lo || v > hi)
        throw std::runtime_error(where + ": \"" + name + "\" = " + std::to_string(v) + " outside " +
                                 std::to_string(lo) + ".." + std::to_string(hi));
      return v;
    };
    constexpr std::int64_t big = std::numeric_limits<std::int32_t>::max();
    entry.m = field("m", 1, big);
    entry.n = field("n", 1, big);
    entry.k = field("k", 1, big);
    entry.splits = static_cast<int>(field("splits", 1, kernels::kSplitkMaxSplits));
    t.entries.push_back(entry);
  }
  return t;
}

const std::optional<SplitkTable>& stored_splitk_table() {
  static const std::optional<SplitkTable> table = []() -> std::optional<SplitkTable> {
    const auto path = find_config_file("tuning/sgemm_splitk.json");
    if (!path) return std::nullopt;
    std::ifstream in(*path);
    if (!in) throw std::runtime_error("cannot read " + path->string());
    std::stringstream text;
    text << in.rdbuf();
    return parse_splitk_table(text.str(), path->string());
  }();
  return table;
}

nlohmann::json splitk_table_json(const std::vector<SplitkEntry>& entries, const std::string& description,
                                 const std::string& device) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& e : entries) list.push_back({{"m", e.m}, {"n", e.n}, {"k", e.k}, {"splits", e.splits}});
  return {{"description", description}, {"device", device}, {"entries", list}};
}

int splitk_heuristic(std::int64_t m, std::int64_t n, std::int64_t k, int sm_count) {
  const std::int64_t tiles = std::max<std::int64_t>(1, ((m + 63) / 64) * ((n + 63) / 64));
  const std::int64_t want = (4 * std::max(sm_count, 1) + tiles - 1) / tiles;
  const std::int64_t by_depth = std::max<std::int64_t>(1, k / 256);
  return static_cast<int>(std::clamp<std::int64_t>(std::min(want, by_depth), 1, kernels::kSplitkMaxSplits));
}

int splitk_simt_heuristic(std::int64_t m, std::int64_t n, std::int64_t k, int block_m, int block_n, int ctas_per_sm,
                          int sm_count, std::int64_t min_slice) {
  const std::int64_t bm = std::max(block_m, 1), bn = std::max(block_n, 1);
  const std::int64_t tiles = std::max<std::int64_t>(1, ((m + bm - 1) / bm) * ((n + bn - 1) / bn));
  const std::int64_t slots = std::int64_t{std::max(ctas_per_sm, 1)} * std::max(sm_count, 1);
  const std::int64_t want = (slots + tiles - 1) / tiles;
  const std::int64_t by_depth = std::max<std::int64_t>(1, k / std::max<std::int64_t>(min_slice, 1));
  return static_cast<int>(std::clamp<std::int64_t>(std::min(want, by_depth), 1, kernels::kSplitkMaxSplits));
}

SplitsChoice choose_splits(const SplitkTable* table, std::int64_t m, std::int64_t n, std::int64_t k, int sm_count) {
  if (table && !table->entries.empty()) {
    const SplitkEntry* best = &table->entries.front();
    for (const auto& e : table->entries)
      if (log_distance(e, m, n, k) < log_distance(*best, m, n, k)) best = &e;
    return {cap_splits(best->splits, k), "table (" + std::to_string(best->m) + "×" + std::to_string(best->n) + "×" +
                                             std::to_string(best->k) + ")"};
  }
  return {splitk_heuristic(m, n, k, sm_count), "heuristic"};
}

}  // namespace gpufact::factorizations
