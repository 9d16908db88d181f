#include "factorizations/gemm/sass_model.hpp"

#include <nlohmann/json.hpp>

#include "core/bench/preset.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace gpufact::factorizations {

namespace fs = std::filesystem;

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

namespace {

// cuobjdump on PATH, under $CUDA_HOME, or where the toolkit usually lives.
std::optional<fs::path> find_cuobjdump() {
  std::vector<fs::path> candidates;
  if (const char* path = std::getenv("PATH")) {
    std::stringstream dirs(path);
    for (std::string d; std::getline(dirs, d, ':');)
      if (!d.empty()) candidates.push_back(fs::path(d) / "cuobjdump");
  }
  if (const char* home = std::getenv("CUDA_HOME")) candidates.push_back(fs::path(home) / "bin" / "cuobjdump");
  candidates.emplace_back("/usr/local/cuda/bin/cuobjdump");
  for (const auto& c : candidates) {
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c;
  }
  return std::nullopt;
}

// The script installed beside the presets (share/gpufact) or in the source tree.
std::optional<fs::path> find_counting_script() {
  for (const auto& d : config_dirs()) {
    for (const auto& c : {d.parent_path() / "sass_loop_counts.py", d.parent_path() / "scripts" / "sass_loop_counts.py"}) {
      std::error_code ec;
      if (fs::is_regular_file(c, ec)) return c;
    }
  }
  return std::nullopt;
}

// When the build machine had no cuobjdump, the counts are read from this very binary's SASS at
// run time (GPU machines usually carry the whole toolkit); they describe the same kernels.
SassLoops counts_from_running_binary(const SassLoops& built) {
  const auto tool = find_cuobjdump();
  const auto script = find_counting_script();
  if (!tool || !script) return built;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return built;
  const std::string command = "python3 '" + script->string() + "' --cuobjdump='" + tool->string() + "' '" +
                              self.string() + "' --json 2>/dev/null";
  std::string out;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buf[4096];
    for (std::size_t got; (got = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, got);
    pclose(pipe);
  }
  try {
    SassLoops runtime = parse_sass_loops(out);
    if (runtime.available) return runtime;
    SassLoops s = built;
    s.reason += "; at run time: " + runtime.reason;
    return s;
  } catch (const std::exception&) {
    return built;
  }
}

}  // namespace

const SassLoops& sgemm_volkov_sass_loops() {
  static const SassLoops loops = [] {
    const SassLoops built = parse_sass_loops(kSgemmVolkovSassJson);
    return built.available ? built : counts_from_running_binary(built);
  }();
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
