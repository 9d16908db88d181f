#include "core/bench/preset.hpp"

#include "core/errors.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

#include <unistd.h>

#ifndef GPUFACT_SOURCE_DIR
#define GPUFACT_SOURCE_DIR "."
#endif

namespace gpufact {

namespace fs = std::filesystem;

std::vector<fs::path> config_dirs() {
  std::vector<fs::path> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    dirs.push_back(exe.parent_path() / "configs");
    dirs.push_back(exe.parent_path().parent_path() / "share" / "gpufact" / "configs");
  }
  dirs.push_back(fs::path(GPUFACT_SOURCE_DIR) / "configs");
  return dirs;
}

std::optional<fs::path> find_config_file(const fs::path& relative) {
  for (const auto& d : config_dirs()) {
    std::error_code ec;
    if (fs::is_regular_file(d / relative, ec)) return d / relative;
  }
  return std::nullopt;
}

Preset parse_preset(const std::string& text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("preset " + origin + " is not valid JSON: " + e.what());
  }
  try {
    Preset p;
    p.name = j.value("name", fs::path(origin).stem().string());
    p.description = j.value("description", "");
    p.axis_set = j.value("axis_set", "defaults");
    if (p.axis_set != "quick" && p.axis_set != "full" && p.axis_set != "defaults")
      throw UsageError("preset " + origin + ": axis_set must be quick, full or defaults");
    if (j.contains("experiments")) p.experiments = j["experiments"].get<std::vector<std::string>>();
    if (j.contains("measurement")) {
      const auto& m = j["measurement"];
      p.measure.repetitions = m.value("repetitions", p.measure.repetitions);
      p.measure.min_time_s = m.value("min_time_s", p.measure.min_time_s);
      p.measure.warmup_s = m.value("warmup_s", p.measure.warmup_s);
      if (p.measure.repetitions < 1 || p.measure.min_time_s < 0 || p.measure.warmup_s < 0)
        throw UsageError("preset " + origin + ": repetitions must be >= 1 and times >= 0");
    }
    if (j.contains("axes"))
      for (const auto& [glob, axes] : j["axes"].items())
        p.axes.emplace_back(glob, axes.get<std::map<std::string, std::string>>());
    return p;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("preset " + origin + " is malformed: " + e.what());
  }
}

Preset load_preset(const std::string& name_or_path) {
  fs::path file;
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json")) {
    file = name_or_path;
    if (!fs::exists(file)) throw UsageError("--preset " + name_or_path + ": no such file");
  } else {
    for (const auto& d : config_dirs())
      if (fs::exists(d / (name_or_path + ".json"))) {
        file = d / (name_or_path + ".json");
        break;
      }
    if (file.empty()) {
      std::string known;
      for (const auto& d : config_dirs()) {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(d, ec))
          if (e.path().extension() == ".json") known += (known.empty() ? "" : ", ") + e.path().stem().string();
        if (!known.empty()) break;
      }
      throw UsageError("--preset " + name_or_path + ": unknown preset (known: " +
                       (known.empty() ? "none found" : known) + ")");
    }
  }
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_preset(ss.str(), file.string());
}

}  // namespace gpufact
