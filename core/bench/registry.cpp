#include "core/bench/registry.hpp"

#include "core/errors.hpp"
#include "core/system/inventory.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <stdexcept>

namespace gpufact {

const AxisSpec* Experiment::axis(std::string_view name) const {
  for (const auto& a : axes)
    if (a.name == name) return &a;
  return nullptr;
}

void Registry::add(Experiment e) {
  if (e.key.empty() || !e.run) throw std::logic_error("experiment needs a key and a run function");
  if (find(e.key)) throw std::logic_error("duplicate experiment key " + e.key);
  for (const auto& a : e.axes) {
    // Every declared value list must parse: a typo in code fails the registry test, not a user's run.
    parse_axis_values(a, a.defaults);
    if (!a.quick.empty()) parse_axis_values(a, a.quick);
    if (!a.full.empty()) parse_axis_values(a, a.full);
  }
  experiments_.push_back(std::move(e));
}

const Experiment* Registry::find(std::string_view key) const {
  for (const auto& e : experiments_)
    if (e.key == key) return &e;
  return nullptr;
}

std::vector<const Experiment*> Registry::match(const std::vector<std::string>& globs) const {
  std::vector<const Experiment*> out;
  for (const auto& g : globs) {
    bool any = false;
    for (const auto& e : experiments_)
      if (fnmatch(g.c_str(), e.key.c_str(), 0) == 0) {
        any = true;
        if (std::find(out.begin(), out.end(), &e) == out.end()) out.push_back(&e);
      }
    if (!any) throw UsageError("unknown experiment '" + g + "' (see `gpufact list`)");
  }
  return out;
}

bool built_with_library(std::string_view name) {
  (void)name;  // no optional libraries are linked in this build yet
  return false;
}

std::optional<std::string> unmet_requirement(const Requirements& needs, const SystemInfo& sys, int device) {
  for (const auto& lib : needs.libraries)
    if (!built_with_library(lib)) return "built without " + lib;
  if (needs.mpi) return "needs an MPI launch (mpirun), which this build does not support yet";
  if (needs.gpus == 0) return std::nullopt;
  if (sys.gpus.empty()) return sys.gpu_unavailable.empty() ? std::string("no usable GPU") : sys.gpu_unavailable;
  if (static_cast<int>(sys.gpus.size()) < needs.gpus)
    return "needs " + std::to_string(needs.gpus) + " GPUs, found " + std::to_string(sys.gpus.size());
  if (device < 0 || device >= static_cast<int>(sys.gpus.size()))
    return "device " + std::to_string(device) + " does not exist (" + std::to_string(sys.gpus.size()) + " GPUs)";
  const auto& g = sys.gpus[static_cast<std::size_t>(device)];
  if (g.cc_major * 10 + g.cc_minor < needs.min_compute_capability)
    return "needs compute capability " + std::to_string(needs.min_compute_capability / 10) + "." +
           std::to_string(needs.min_compute_capability % 10) + ", device has " + std::to_string(g.cc_major) + "." +
           std::to_string(g.cc_minor);
  if (g.memory_bytes < needs.device_memory_bytes)
    return "needs " + std::to_string(needs.device_memory_bytes >> 20) + " MiB of device memory, device has " +
           std::to_string(g.memory_bytes >> 20) + " MiB";
  return std::nullopt;
}

}  // namespace gpufact
