// `gpufact bench` and `gpufact list` behind the CLI: selection, axis resolution, requirement
// checks, the run loop, console progress and the report. The CLI only parses arguments.
#pragma once

#include "core/bench/registry.hpp"

#include <atomic>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace gpufact {

struct BenchRequest {
  std::vector<std::string> patterns;        // experiment globs; empty: the preset's
  std::string preset = "quick";
  std::vector<std::string> axis_overrides;  // "name=values" (-a)
  std::optional<std::string> precision;     // --precision s,d: the `precision` axis
  std::string out;                          // report path; empty: gpufact-<UTC time>.json
  int device = 0;
  bool dry_run = false;
  std::optional<int> repetitions;           // --niter / --repetitions
  std::optional<double> min_time_s;
  bool with_lapack = false;                 // -l: add the host LAPACK (OpenBLAS) method beside
  bool require_verified = false;            // -c: a case that verified nothing fails the run
  std::vector<std::string> benchmark_args;  // forwarded --benchmark_* flags
  std::vector<std::string> argv;            // recorded in the report
};

// Returns the exit code (DESIGN.md): 0 all passed/skipped, 1 some incorrect or error (or, with
// -c, not verified), 2 usage,
// 3 a GPU experiment was asked for explicitly and no usable GPU exists, 130 interrupted.
// Throws UsageError for bad requests before any work starts.
int run_bench(const Registry& registry, const BenchRequest& request, const std::atomic<bool>* interrupted,
              std::ostream& out, std::ostream& err);

// `gpufact list`: every experiment with its artifact, axes (defaults, quick, full) and needs.
void print_list(const Registry& registry, std::ostream& out, bool as_json);

}  // namespace gpufact
