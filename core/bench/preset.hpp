// Run presets (configs/*.json): which experiments, which axis value set (quick/full/defaults),
// per-experiment axis overrides in the -a syntax, and measurement settings.
#pragma once

#include "core/bench/case.hpp"

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpufact {

struct Preset {
  std::string name;
  std::string description;
  std::string axis_set = "defaults";       // quick | full | defaults
  std::vector<std::string> experiments{"*"};
  MeasureOptions measure;
  // (experiment glob, axis name → values)
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> axes;
};

// Directories searched for built-in presets: next to the binary (bundle), ../share/gpufact
// (install), then the source tree this binary was built from.
std::vector<std::filesystem::path> config_dirs();

// The first `relative` path (e.g. "tuning/sgemm_simt.json") that exists under config_dirs(), or
// nullopt. Tuning tables measured on a GPU live there, next to the presets.
std::optional<std::filesystem::path> find_config_file(const std::filesystem::path& relative);

// `name_or_path` is a built-in preset name (quick, full, ci, ...) or a JSON file path.
// Throws UsageError naming the preset and what exists.
Preset load_preset(const std::string& name_or_path);
Preset parse_preset(const std::string& json_text, const std::string& origin);

}  // namespace gpufact
