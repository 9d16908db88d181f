#include "factorizations/gemm/sass_model.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>

namespace gpufact::factorizations {

extern const char* const kSgemmVolkovSassJson;  // generated: scripts/sass_loop_counts.py

SassLoops parse_sass_loops(const std::string& json_text) {
  SassLoops s;
  try {
    const auto j = nlohmann::json::parse(json_text);
    s.available = j.at("available").get<bool>();
    if (!s.available) {
      s.reason = j.value("reason", std::string("no reason recorded"));
      return s;
    }
    s.source = j.value("source", std::string());
    for (const auto& [key, v] : j.at("loops").items())
      s.loops[key] = LoopMix{v.at("total").get<int>(), v.at("ffma").get<int>(), v.at("ffma_shared_operand").get<int>(),
                             v.at("lds").get<int>(), v.at("other").get<int>()};
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(std::string("SASS loop counts: ") + e.what());
  }
  return s;
}

const SassLoops& sgemm_volkov_sass_loops() {
  static const SassLoops loops = parse_sass_loops(kSgemmVolkovSassJson);
  return loops;
}

double estimate_gflops(const LoopMix& loop, const ThroughputInputs& r) {
  if (loop.ffma <= 0 || r.smem_fma_gflops <= 0 || r.fma_peak_gflops <= 0 || r.issue_ginstr <= 0) return 0.0;
  // G80-style FFMA with a shared operand counts as a pair without its LDS.
  const int pairs = std::min(loop.ffma, loop.lds + loop.ffma_shared_operand);
  const int lone_lds = loop.lds + loop.ffma_shared_operand - pairs;
  const int lone_ffma = loop.ffma - pairs;
  // Nanoseconds per loop iteration of one thread when the whole GPU runs such threads, summed
  // over the instruction classes (rates are per GPU: FMAs per ns = GFLOP/s / 2).
  const double ns = pairs / (r.smem_fma_gflops / 2) + lone_ffma / (r.fma_peak_gflops / 2) +
                    (loop.other + lone_lds) / r.issue_ginstr;
  return 2.0 * loop.ffma / ns;
}

}  // namespace gpufact::factorizations
