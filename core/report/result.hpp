// The report's result records (DESIGN.md "Report schema"). Every console table, markdown, CSV
// and plot is derived from these; report.schema.json pins their JSON form.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpufact {

inline constexpr int report_schema_version = 1;

// One outcome per result (STYLE.md 6).
enum class Status { passed, incorrect, not_verified, skipped, error };
std::string to_string(Status s);
Status status_from_string(const std::string& s);

// What a metric is for: `performance` metrics are compared between runs; `environment` ones
// (clocks, power, temperature) describe the conditions; `derived` ones come from analysis.
enum class MetricRole { performance, environment, derived };

struct Published {
  double value = 0.0;
  std::string source;  // e.g. "volkov08 Table 2 (8800GTX)"
};

struct Metric {
  std::string tag;    // machine tag, stable across versions: "copy/bandwidth"
  std::string name;   // display name: "copy kernel bandwidth"
  std::string unit;   // "s", "GB/s", "GFLOP/s", "MHz", "W", "%", ...
  double value = 0.0;                   // the median for measured metrics
  // median, mean, stddev, cv, min, max (Google Benchmark's aggregates) and q1, q3, spread: the
  // quartiles and half the interquartile range over the median, the spread the report shows.
  std::map<std::string, double> stats;
  std::vector<double> samples;          // raw samples, one per repetition
  bool higher_is_better = false;
  bool headline = false;                // shown in summary tables and dashboards
  MetricRole role = MetricRole::performance;
  std::optional<Published> published;
};

struct Verification {
  std::string method;     // "‖PA−LU‖₁/(n‖A‖₁ε)"
  double error = 0.0;
  double tolerance = 0.0;
};

struct Result {
  std::string experiment;
  std::string artifact;
  nlohmann::json axes = nlohmann::json::object();
  Status status = Status::not_verified;
  std::string reason;
  std::optional<std::uint64_t> seed;
  std::optional<int> device;
  std::optional<double> elapsed_s;  // wall time of the case (or summary) in the run, seconds
  std::vector<Metric> metrics;
  std::optional<Verification> verification;
  nlohmann::json data = nlohmann::json::object();  // derived tables (fits, inferred sizes, ...)

  const Metric* find_metric(const std::string& tag) const;
  double metric_value(const std::string& tag) const;  // the metric's value, 0 when absent
};

// A computed (not timed) metric: fitted parameters, inferred sizes, best-of summaries.
Metric derived_metric(std::string tag, std::string name, std::string unit, double value, bool higher_is_better = true,
                      bool headline = true, MetricRole role = MetricRole::derived);

void to_json(nlohmann::json& j, const Metric& m);
void from_json(const nlohmann::json& j, Metric& m);
void to_json(nlohmann::json& j, const Result& r);
void from_json(const nlohmann::json& j, Result& r);

}  // namespace gpufact
