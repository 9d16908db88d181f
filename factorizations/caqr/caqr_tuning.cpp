#include "factorizations/caqr/caqr_tuning.hpp"

#include "core/bench/preset.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace gpufact::factorizations {

CaqrTuning caqr_default_tuning(std::int64_t m, std::int64_t n, char precision) {
  (void)m;
  CaqrTuning t;
  t.source = "default";
  if (n <= 32)
    t.shape = {256, 32};
  else if (n <= 64)
    t.shape = {256, 64};
  else if (n <= 128 && precision == 's')
    t.shape = {256, 128};
  else
    t.shape = {64, 16};
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
