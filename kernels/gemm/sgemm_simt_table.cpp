#include "kernels/gemm/sgemm_simt_table.hpp"

#include "core/bench/preset.hpp"
#include "kernels/gemm/sgemm_simt.cuh"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace gpufact::kernels {

std::string trans_name(Op ta, Op tb) {
  return std::string(ta == Op::N ? "N" : "T") + (tb == Op::N ? "N" : "T");
}

SgemmTuningTable parse_sgemm_tuning_table(const std::string& json_text, const std::string& origin,
                                          const std::vector<std::string>& known_configs) {
  auto fail = [&](const std::string& what) { throw std::runtime_error(origin + ": " + what); };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    fail(std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("entries") || !j["entries"].is_array()) fail("expected an object with \"entries\": [...]");
  SgemmTuningTable t;
  t.device = j.value("device", "");
  t.source = j.value("source", "");
  std::size_t index = 0;
  for (const auto& e : j["entries"]) {
    const std::string where = "entry " + std::to_string(index++);
    if (!e.is_object()) fail(where + " is not an object");
    for (const char* field : {"trans", "m", "n", "k", "config"})
      if (!e.contains(field)) fail(where + " has no \"" + field + "\"");
    SgemmTuningEntry x;
    try {
      x.trans = e.at("trans").get<std::string>();
      x.m = e.at("m").get<std::int64_t>();
      x.n = e.at("n").get<std::int64_t>();
      x.k = e.at("k").get<std::int64_t>();
      x.config = e.at("config").get<std::string>();
      x.gflops = e.value("gflops", 0.0);
    } catch (const nlohmann::json::exception& ex) {
      fail(where + ": " + ex.what());
    }
    if (x.trans != "NN" && x.trans != "NT" && x.trans != "TN") fail(where + ": trans '" + x.trans + "' (NN, NT, TN)");
    if (x.m < 1 || x.n < 1 || x.k < 1) fail(where + ": sizes must be >= 1");
    if (std::find(known_configs.begin(), known_configs.end(), x.config) == known_configs.end())
      fail(where + ": unknown config '" + x.config + "'");
    t.entries.push_back(std::move(x));
  }
  return t;
}

std::string sgemm_tuning_table_json(const SgemmTuningTable& table) {
  nlohmann::json j;
  j["kernel"] = "sgemm_simt";
  j["device"] = table.device;
  j["source"] = table.source;
  j["entries"] = nlohmann::json::array();
  for (const auto& e : table.entries)
    j["entries"].push_back(
        {{"trans", e.trans}, {"m", e.m}, {"n", e.n}, {"k", e.k}, {"config", e.config}, {"gflops", e.gflops}});
  return j.dump(2) + "\n";
}

std::optional<std::string> nearest_sgemm_config(const SgemmTuningTable& table, Op ta, Op tb, std::int64_t m,
                                                std::int64_t n, std::int64_t k) {
  const std::string trans = trans_name(ta, tb);
  const bool any_same = std::any_of(table.entries.begin(), table.entries.end(),
                                    [&](const SgemmTuningEntry& e) { return e.trans == trans; });
  auto lg = [](std::int64_t v) { return std::log2(static_cast<double>(std::max<std::int64_t>(v, 1))); };
  const SgemmTuningEntry* best = nullptr;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& e : table.entries) {
    if (any_same && e.trans != trans) continue;
    const double d = std::abs(lg(e.m) - lg(m)) + std::abs(lg(e.n) - lg(n)) + std::abs(lg(e.k) - lg(k));
    if (d < best_distance) {  // strict: the first of equally near entries wins (table order)
      best_distance = d;
      best = &e;
    }
  }
  if (!best) return std::nullopt;
  return best->config;
}

namespace {

struct LoadedTable {
  SgemmTuningTable table;
  std::string origin;
};

const LoadedTable& loaded_table() {
  static const LoadedTable loaded = [] {
    LoadedTable t;
    const auto path = find_config_file("tuning/sgemm_simt.json");
    if (!path) return t;
    std::ifstream in(*path);
    if (!in) throw std::runtime_error("cannot read " + path->string());
    std::stringstream text;
    text << in.rdbuf();
    const std::vector<std::string> names = sgemm_simt_config_names();
    t.table = parse_sgemm_tuning_table(text.str(), path->string(), names);
    t.origin = path->string();
    return t;
  }();
  return loaded;
}

}  // namespace

std::string sgemm_simt_pick_config(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k) {
  if (auto c = nearest_sgemm_config(loaded_table().table, ta, tb, m, n, k)) return *c;
  return std::string(sgemm_simt_default_config());
}

std::string sgemm_simt_table_origin() { return loaded_table().origin; }

void sgemm_simt(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc,
                cudaStream_t stream) {
  sgemm_simt(sgemm_simt_pick_config(ta, tb, m, n, k), ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
}

}  // namespace gpufact::kernels
