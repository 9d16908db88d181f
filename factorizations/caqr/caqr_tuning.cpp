#include "factorizations/caqr/caqr_tuning.hpp"

#include "core/bench/preset.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace gpufact::factorizations {

int caqr_max_tree_fan_in(int width, char precision) {
  const std::int64_t elem = precision == 's' ? 4 : 8, w = width;
  const std::int64_t words = kCaqrSharedMemoryBytes / elem;
  // apply_qt_tree holds the reflectors below R_0 and a 32-column tile of the F·w-row stack,
  // (F − 1)·w² + 32·F·w + w words; factor_tree the stack, F·w².
  const std::int64_t f = std::min((words + w * w - w) / (w * (w + 32)), words / (w * w));
  return static_cast<int>(std::clamp<std::int64_t>(f, 2, 1024));
}

int caqr_balanced_fan_in(std::int64_t blocks, int max_fan_in) {
  if (blocks <= 1 || max_fan_in < 2) return 2;
  int levels = 0;
  for (std::int64_t reach = 1; reach < blocks; reach *= max_fan_in) ++levels;
  // The smallest F with F^levels ≥ blocks: the same depth, the smallest stacks.
  for (int f = 2; f < max_fan_in; ++f) {
    std::int64_t reach = 1;
    for (int l = 0; l < levels && reach < blocks; ++l) reach *= f;
    if (reach >= blocks) return f;
  }
  return max_fan_in;
}

CaqrTuning caqr_default_tuning(std::int64_t m, std::int64_t n, char precision) {
  CaqrTuning t;
  t.source = "default";
  if (n <= 16 && m >= 262144)
    t.shape = {1024, 16};
  else if (n <= 32)
    t.shape = {256, 32};
  else if (n <= 64)
    t.shape = {256, 64};
  else if (n <= 128 && precision == 's')
    t.shape = {256, 128};
  else
    t.shape = {64, 16};
  if (n <= t.shape.cols) {  // one panel: a shallow tree whose stacks still fit shared memory
    const std::int64_t blocks = (m + t.shape.rows - 1) / t.shape.rows;
    t.shape.fan_in = caqr_balanced_fan_in(blocks, caqr_max_tree_fan_in(static_cast<int>(n), precision));
  }
  return t;
}

std::optional<CaqrTuning> caqr_tuning_from_json(const std::string& json_text, std::int64_t m, std::int64_t n,
                                                char precision) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("CAQR tuning table is not JSON: ") + e.what());
  }
  if (!doc.contains("entries") || !doc["entries"].is_array())
    throw std::invalid_argument("CAQR tuning table has no \"entries\" array");
  std::optional<CaqrTuning> best;
  double best_distance = std::numeric_limits<double>::infinity();
  for (const auto& e : doc["entries"]) {
    try {
      if (e.at("precision").get<std::string>() != std::string(1, precision)) continue;
      const double em = e.at("m").get<double>(), en = e.at("n").get<double>();
      const double d = std::abs(std::log2(static_cast<double>(m) / em)) + std::abs(std::log2(static_cast<double>(n) / en));
      if (d >= best_distance) continue;
      CaqrTuning t;
      t.shape = parse_block_shape(e.at("shape").get<std::string>());
      t.reduction = e.value("reduction", std::string("register_serial"));
      t.source = "configs/tuning/caqr.json (" + std::to_string(static_cast<long long>(em)) + "×" +
                 std::to_string(static_cast<long long>(en)) + ")";
      best = t;
      best_distance = d;
    } catch (const nlohmann::json::exception& ex) {
      throw std::invalid_argument(std::string("CAQR tuning entry malformed: ") + ex.what());
    }
  }
  return best;
}

CaqrTuning caqr_tuning(std::int64_t m, std::int64_t n, char precision) {
  if (const auto path = find_config_file("tuning/caqr.json")) {
    std::ifstream in(*path);
    std::stringstream text;
    text << in.rdbuf();
    if (auto t = caqr_tuning_from_json(text.str(), m, n, precision)) return *t;
  }
  return caqr_default_tuning(m, n, precision);
}

}  // namespace gpufact::factorizations
