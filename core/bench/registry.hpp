// The one experiment registry (STYLE.md 3). An experiment is declared once: stable key, paper
// artifact, typed axes with defaults and quick/full values, what it needs, and how to run one
// point of its parameter space. `gpufact list` prints exactly this.
#pragma once

#include "core/bench/axis.hpp"

#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpufact {

class Case;
class Summary;
struct SystemInfo;

struct Requirements {
  int gpus = 0;                         // GPUs the experiment uses
  std::size_t device_memory_bytes = 0;  // at least this much device memory
  int min_compute_capability = 0;       // e.g. 90 for Hopper-only instructions
  bool mpi = false;                     // needs an MPI launch
  std::vector<std::string> libraries;   // optional libraries it was built with ("cholmod", "ffmpeg")
};

struct PlotSpec {
  std::string artifact;             // which results (by artifact) the figure draws
  std::string x;                    // axis name on the x axis
  std::string y;                    // metric tag on the y axis
  std::vector<std::string> series;  // axes that split lines (others are held as panels)
  bool logx = true;
  bool logy = false;
  std::string title;
};

struct Experiment {
  std::string key;       // stable: "volkov08.bandwidth"
  std::string artifact;  // paper artifact of its main results: "volkov08 §3.7"
  std::string title;
  std::vector<AxisSpec> axes;
  Requirements needs;
  std::function<void(Case&)> run;                      // one point of the parameter space
  std::function<void(const AxisPoint&)> validate;      // optional: reject bad points before any work
  // Optional: false for combinations of axis values that do not exist (a read-only run has no
  // copy stride); they are left out of the plan rather than reported as skipped.
  std::function<bool(const AxisPoint&)> applies;
  std::function<void(Summary&)> summarize;             // optional: derived results from the finished ones
  std::vector<PlotSpec> plots;

  const AxisSpec* axis(std::string_view name) const;
};

class Registry {
 public:
  void add(Experiment e);  // throws std::logic_error on a duplicate key or a malformed axis
  const std::deque<Experiment>& all() const { return experiments_; }
  const Experiment* find(std::string_view key) const;
  // Experiments whose key matches any glob (fnmatch); throws UsageError for a glob matching none.
  std::vector<const Experiment*> match(const std::vector<std::string>& globs) const;

 private:
  std::deque<Experiment> experiments_;  // deque: AxisPoints keep pointers to AxisSpecs
};

// Why the experiment cannot run here (device `device` of `sys`), or nullopt when it can.
std::optional<std::string> unmet_requirement(const Requirements& needs, const SystemInfo& sys, int device);

// Optional libraries this build was made with.
bool built_with_library(std::string_view name);

}  // namespace gpufact
