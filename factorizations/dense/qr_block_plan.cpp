#include "factorizations/dense/qr_block_plan.hpp"

#include "core/bench/preset.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace gpufact::dense {

std::vector<std::int64_t> uniform_qr_widths(std::int64_t k, std::int64_t nb) {
  if (k < 0) throw std::invalid_argument("uniform_qr_widths: k = " + std::to_string(k) + " < 0");
  if (nb < 1) throw std::invalid_argument("uniform_qr_widths: nb = " + std::to_string(nb) + " < 1");
  std::vector<std::int64_t> w;
  for (std::int64_t j = 0; j < k; j += nb) w.push_back(std::min(nb, k - j));
  return w;
}

std::vector<QrStep> qr_steps(std::int64_t k, const std::vector<std::int64_t>& widths) {
  std::vector<QrStep> steps;
  std::int64_t j = 0;
  for (const std::int64_t b : widths) {
    if (b < 1) throw std::invalid_argument("qr plan: panel width " + std::to_string(b) + " < 1");
    steps.push_back({j, j + b});
    j += b;
  }
  if (j != k)
    throw std::invalid_argument("qr plan: panel widths sum to " + std::to_string(j) + ", not min(m, n) = " +
                                std::to_string(k));
  return steps;
}

QrBlockPlan plan_qr_blocks(std::int64_t m, std::int64_t n, const std::vector<std::int64_t>& candidates,
                           const QrStageCost& cost) {
  if (n < 0 || m < n) throw std::invalid_argument("plan_qr_blocks: needs m >= n >= 0");
  if (candidates.empty()) throw std::invalid_argument("plan_qr_blocks: no candidate widths");
  std::int64_t widest = 0;
  for (const std::int64_t b : candidates) {
    if (b < 1) throw std::invalid_argument("plan_qr_blocks: candidate width " + std::to_string(b) + " < 1");
    widest = std::max(widest, b);
  }
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> best(static_cast<std::size_t>(n + 1), inf);
  std::vector<std::int64_t> choice(static_cast<std::size_t>(n + 1), 0);
  best[static_cast<std::size_t>(n)] = 0;
  auto consider = [&](std::int64_t j, std::int64_t b) {
    const double t = cost(m - j, b, n - j - b) + best[static_cast<std::size_t>(j + b)];
    if (t < best[static_cast<std::size_t>(j)]) {
      best[static_cast<std::size_t>(j)] = t;
      choice[static_cast<std::size_t>(j)] = b;
    }
  };
  for (std::int64_t j = n - 1; j >= 0; --j) {
    for (const std::int64_t b : candidates)
      if (b <= n - j) consider(j, b);
    if (n - j < widest) consider(j, n - j);  // the last, narrower panel
  }
  QrBlockPlan plan;
  plan.predicted_s = best[0];
  for (std::int64_t j = 0; j < n; j += choice[static_cast<std::size_t>(j)]) plan.widths.push_back(choice[static_cast<std::size_t>(j)]);
  return plan;
}

double QrTimeModel::operator()(std::int64_t rows, std::int64_t width, std::int64_t update_cols) const {
  const double r = static_cast<double>(rows), b = static_cast<double>(width), c = static_cast<double>(update_cols);
  // geqrf of the panel (2rb² − 2b³/3) plus larft (about rb²).
  const double panel_flops = 3 * r * b * b - 2 * b * b * b / 3;
  double panel = panel_flops / (panel_gflops * 1e9 * r / (r + panel_half_rows));
  if (transfer_gbs > 0) panel += 2 * r * b * static_cast<double>(element_bytes) / (transfer_gbs * 1e9);
  // W = VᵀC, W = TᵀW, C −= VW.
  const double update_flops = 4 * r * c * b + 2 * b * b * c;
  const double update = update_flops / (gemm_gflops * 1e9 * b / (b + gemm_half_width));
  return std::max(panel, update) + stage_overhead_s;
}

QrTimeModel default_qr_time_model(const std::string& method, std::size_t element_bytes) {
  QrTimeModel m;
  m.element_bytes = element_bytes;
  const bool single = element_bytes == 4;
  if (method == "hybrid") {
    // A 16-core host's OpenBLAS geqrf on a tall panel; pinned PCIe/C2C transfers.
    m.panel_gflops = single ? 400 : 200;
    m.transfer_gbs = 20;
    m.stage_overhead_s = 80e-6;
  } else if (method == "gpu_resident") {
    // cuSOLVER geqrf on a tall panel is BLAS2- and latency-bound. Fitted on the H200 (FP32,
    // volkov08.fig7 nb sweep): its panels ran at about 170 GFLOP/s on 16384-row panels, and fixed
    // widths of 64–128 beat plans of 96–512 by 1.25× at n = 16384. FP64 is assumed proportionate.
    m.panel_gflops = single ? 300 : 250;
    m.panel_half_rows = 8192;
    m.transfer_gbs = 0;
    m.stage_overhead_s = 150e-6;
  } else {
    throw std::invalid_argument("default_qr_time_model: method '" + method + "' is not hybrid or gpu_resident");
  }
  m.gemm_gflops = single ? 45000 : 50000;
  return m;
}

std::vector<std::int64_t> default_qr_width_candidates() {
  std::vector<std::int64_t> c;
  for (std::int64_t b = 32; b <= 512; b += 32) c.push_back(b);
  return c;
}

std::vector<QrBlockEntry> parse_qr_block_table(const std::string& json_text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument(origin + ": not JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("entries") || !j["entries"].is_array())
    throw std::invalid_argument(origin + ": needs an object with an \"entries\" array");
  std::vector<QrBlockEntry> out;
  for (std::size_t i = 0; i < j["entries"].size(); ++i) {
    const auto& e = j["entries"][i];
    QrBlockEntry q;
    try {
      q.method = e.at("method").get<std::string>();
      q.precision = e.at("precision").get<std::string>();
      q.m = e.at("m").get<std::int64_t>();
      q.n = e.at("n").get<std::int64_t>();
      q.plan.widths = e.at("widths").get<std::vector<std::int64_t>>();
      q.plan.predicted_s = e.value("predicted_s", 0.0);
      (void)qr_steps(std::min(q.m, q.n), q.plan.widths);
    } catch (const std::exception& ex) {
      throw std::invalid_argument(origin + ": entry " + std::to_string(i) + ": " + ex.what());
    }
    out.push_back(std::move(q));
  }
  return out;
}

nlohmann::json qr_block_table_json(const std::vector<QrBlockEntry>& entries, const std::string& description) {
  nlohmann::json j;
  j["description"] = description;
  j["entries"] = nlohmann::json::array();
  for (const auto& e : entries)
    j["entries"].push_back({{"method", e.method},
                            {"precision", e.precision},
                            {"m", e.m},
                            {"n", e.n},
                            {"widths", e.plan.widths},
                            {"predicted_s", e.plan.predicted_s}});
  return j;
}

namespace {

const std::vector<QrBlockEntry>& stored_table() {
  static const std::vector<QrBlockEntry> table = [] {
    const auto path = find_config_file("tuning/qr_blocks.json");
    if (!path) return std::vector<QrBlockEntry>{};
    std::ifstream in(*path);
    if (!in) throw std::runtime_error("cannot read " + path->string());
    std::stringstream text;
    text << in.rdbuf();
    return parse_qr_block_table(text.str(), path->string());
  }();
  return table;
}

}  // namespace

std::optional<std::vector<std::int64_t>> stored_qr_plan(const std::string& method, const std::string& precision,
                                                        std::int64_t m, std::int64_t n) {
  for (const auto& e : stored_table())
    if (e.method == method && e.precision == precision && e.m == m && e.n == n) return e.plan.widths;
  return std::nullopt;
}

std::vector<std::int64_t> auto_qr_widths(const std::string& method, const std::string& precision, std::int64_t m,
                                         std::int64_t n) {
  if (auto w = stored_qr_plan(method, precision, m, n)) return *w;
  const QrTimeModel model = default_qr_time_model(method, precision == "s" ? 4 : 8);
  return plan_qr_blocks(m, n, default_qr_width_candidates(), model).widths;
}

}  // namespace gpufact::dense
