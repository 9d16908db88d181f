#include "core/report/result.hpp"

#include <limits>
#include <stdexcept>

namespace gpufact {

std::string to_string(Status s) {
  switch (s) {
    case Status::passed: return "passed";
    case Status::incorrect: return "incorrect";
    case Status::not_verified: return "not_verified";
    case Status::skipped: return "skipped";
    case Status::error: return "error";
  }
  return "error";
}

Status status_from_string(const std::string& s) {
  for (Status st : {Status::passed, Status::incorrect, Status::not_verified, Status::skipped, Status::error})
    if (to_string(st) == s) return st;
  throw std::invalid_argument("unknown result status '" + s + "'");
}

namespace {
const char* role_name(MetricRole r) {
  switch (r) {
    case MetricRole::performance: return "performance";
    case MetricRole::environment: return "environment";
    case MetricRole::derived: return "derived";
  }
  return "performance";
}
MetricRole role_from(const std::string& s) {
  if (s == "environment") return MetricRole::environment;
  if (s == "derived") return MetricRole::derived;
  return MetricRole::performance;
}
}  // namespace

Metric derived_metric(std::string tag, std::string name, std::string unit, double value, bool higher_is_better,
                      bool headline, MetricRole role) {
  Metric m;
  m.tag = std::move(tag);
  m.name = std::move(name);
  m.unit = std::move(unit);
  m.value = value;
  m.higher_is_better = higher_is_better;
  m.headline = headline;
  m.role = role;
  return m;
}

const Metric* Result::find_metric(const std::string& tag) const {
  for (const auto& m : metrics)
    if (m.tag == tag) return &m;
  return nullptr;
}

double Result::metric_value(const std::string& tag) const {
  const Metric* m = find_metric(tag);
  return m ? m->value : 0.0;
}

void to_json(nlohmann::json& j, const Metric& m) {
  j = {{"tag", m.tag},
       {"name", m.name},
       {"unit", m.unit},
       {"value", m.value},
       {"higher_is_better", m.higher_is_better},
       {"headline", m.headline},
       {"role", role_name(m.role)}};
  if (!m.stats.empty()) j["stats"] = m.stats;
  if (!m.samples.empty()) j["samples"] = m.samples;
  if (m.published) j["published"] = {{"value", m.published->value}, {"source", m.published->source}};
}

namespace {
// nlohmann writes NaN and infinities as null; read them back as NaN.
double number_or_nan(const nlohmann::json& v) {
  return v.is_null() ? std::numeric_limits<double>::quiet_NaN() : v.get<double>();
}
}  // namespace

void from_json(const nlohmann::json& j, Metric& m) {
  m.tag = j.at("tag").get<std::string>();
  m.name = j.value("name", m.tag);
  m.unit = j.value("unit", "");
  m.value = number_or_nan(j.at("value"));
  m.higher_is_better = j.value("higher_is_better", false);
  m.headline = j.value("headline", false);
  m.role = role_from(j.value("role", "performance"));
  if (j.contains("stats"))
    for (const auto& [k, v] : j.at("stats").items()) m.stats[k] = number_or_nan(v);
  if (j.contains("samples"))
    for (const auto& v : j.at("samples")) m.samples.push_back(number_or_nan(v));
  if (j.contains("published"))
    m.published = Published{j["published"].at("value").get<double>(), j["published"].value("source", "")};
}

void to_json(nlohmann::json& j, const Result& r) {
  j = {{"experiment", r.experiment}, {"artifact", r.artifact}, {"axes", r.axes},
       {"status", to_string(r.status)}, {"reason", r.reason}, {"metrics", r.metrics}};
  if (r.seed) j["seed"] = *r.seed;
  if (r.device) j["device"] = *r.device;
  if (r.elapsed_s) j["elapsed_s"] = *r.elapsed_s;
  if (r.verification)
    j["verification"] = {{"method", r.verification->method},
                         {"error", r.verification->error},
                         {"tolerance", r.verification->tolerance}};
  if (!r.data.empty()) j["data"] = r.data;
}

void from_json(const nlohmann::json& j, Result& r) {
  r.experiment = j.at("experiment").get<std::string>();
  r.artifact = j.value("artifact", r.experiment);
  r.axes = j.value("axes", nlohmann::json::object());
  r.status = status_from_string(j.at("status").get<std::string>());
  r.reason = j.value("reason", "");
  if (j.contains("seed")) r.seed = j["seed"].get<std::uint64_t>();
  if (j.contains("device")) r.device = j["device"].get<int>();
  if (j.contains("elapsed_s") && j["elapsed_s"].is_number()) r.elapsed_s = j["elapsed_s"].get<double>();
  r.metrics = j.value("metrics", std::vector<Metric>{});
  if (j.contains("verification")) {
    const auto& v = j["verification"];
    r.verification = Verification{v.at("method").get<std::string>(), number_or_nan(v.at("error")),
                                  v.at("tolerance").get<double>()};
  }
  r.data = j.value("data", nlohmann::json::object());
}

}  // namespace gpufact
