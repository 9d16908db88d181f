#include "core/report/compare.hpp"

#include "core/report/format.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <sstream>

namespace gpufact {

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::fast: return "FAST";
    case Verdict::slow: return "SLOW";
    case Verdict::same: return "SAME";
    case Verdict::missing: return "MISSING";
    case Verdict::added: return "NEW";
  }
  return "?";
}

namespace {

// Exact two-sided p-value of U for small samples without ties: the number of orderings of
// n1 a's and n2 b's with each value of U, by the recurrence f(i, j, u) = f(i−1, j, u−j) + f(i, j−1, u).
double exact_u_p(std::size_t n1, std::size_t n2, double u) {
  const std::size_t umax = n1 * n2;
  std::vector<std::vector<double>> prev(n2 + 1, std::vector<double>(umax + 1, 0.0)), cur = prev;
  for (std::size_t j = 0; j <= n2; ++j) prev[j][0] = 1.0;  // i = 0
  for (std::size_t i = 1; i <= n1; ++i) {
    for (std::size_t j = 0; j <= n2; ++j) {
      std::fill(cur[j].begin(), cur[j].end(), 0.0);
      for (std::size_t v = 0; v <= umax; ++v) {
        double c = 0;
        if (v >= j) c += prev[j][v - j];
        if (j > 0) c += cur[j - 1][v];
        cur[j][v] = c;
      }
    }
    std::swap(prev, cur);
  }
  const auto& f = prev[n2];
  const double total = std::accumulate(f.begin(), f.end(), 0.0);
  const double mean = static_cast<double>(umax) / 2.0;
  const double dist = std::fabs(u - mean);
  double tail = 0;
  for (std::size_t v = 0; v <= umax; ++v)
    if (std::fabs(static_cast<double>(v) - mean) >= dist - 1e-9) tail += f[v];
  return std::min(1.0, tail / total);
}

// The smallest two-sided p-value the U test can give for these sample sizes: 2 / C(n1 + n2, n1).
double smallest_u_p(std::size_t n1, std::size_t n2) {
  double c = 1;  // C(n1 + n2, n1), built up as a product of ratios
  for (std::size_t i = 1; i <= n1; ++i) c = c * static_cast<double>(n2 + i) / static_cast<double>(i);
  return std::min(1.0, 2.0 / c);
}

std::string result_key(const Result& r) { return r.experiment + "|" + r.artifact + "|" + r.axes.dump(); }

std::string result_label(const Result& r) {
  std::string s = r.experiment;
  if (r.artifact != r.experiment) s += " [" + r.artifact + "]";
  for (const auto& [k, v] : r.axes.items()) s += " " + k + "=" + (v.is_string() ? v.get<std::string>() : v.dump());
  return s;
}

}  // namespace

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n1 = a.size(), n2 = b.size(), n = n1 + n2;
  if (n1 < 2 || n2 < 2) return 1.0;
  std::vector<std::pair<double, int>> all;
  for (double v : a) all.emplace_back(v, 0);
  for (double v : b) all.emplace_back(v, 1);
  std::sort(all.begin(), all.end());
  double r1 = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && all[j].first == all[i].first) ++j;
    const double rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    const double t = static_cast<double>(j - i);
    if (t > 1) ties = true;
    tie_term += t * t * t - t;
    for (std::size_t k = i; k < j; ++k)
      if (all[k].second == 0) r1 += rank;
    i = j;
  }
  const double u1 = r1 - static_cast<double>(n1) * static_cast<double>(n1 + 1) / 2.0;
  if (!ties && n <= 40) return exact_u_p(n1, n2, u1);
  const double nn = static_cast<double>(n);
  const double mu = static_cast<double>(n1) * static_cast<double>(n2) / 2.0;
  const double var = static_cast<double>(n1) * static_cast<double>(n2) / 12.0 * ((nn + 1) - tie_term / (nn * (nn - 1)));
  if (var <= 0) return 1.0;
  const double z = std::max(0.0, std::fabs(u1 - mu) - 0.5) / std::sqrt(var);
  return std::erfc(z / std::sqrt(2.0));
}

std::vector<std::string> environment_differences(const Report& base, const Report& current) {
  std::vector<std::string> diffs;
  auto check = [&](const std::string& what, const nlohmann::json& a, const nlohmann::json& b) {
    if (a != b) diffs.push_back(what + ": " + a.dump() + " vs " + b.dump());
  };
  auto gpu_names = [](const Report& r) {
    nlohmann::json names = nlohmann::json::array();
    if (r.system.contains("gpus"))
      for (const auto& g : r.system["gpus"]) names.push_back(g.value("name", "?"));
    return names;
  };
  auto host = [](const Report& r, const char* k) {
    return r.system.contains("host") ? r.system["host"].value(k, nlohmann::json()) : nlohmann::json();
  };
  auto blas_threads = [](const Report& r) {
    return r.system.contains("host") && r.system["host"].contains("blas") ? r.system["host"]["blas"].value("threads", 0)
                                                                           : 0;
  };
  check("GPUs", gpu_names(base), gpu_names(current));
  check("CPU", host(base, "cpu_model"), host(current, "cpu_model"));
  check("logical CPUs", host(base, "logical_cpus"), host(current, "logical_cpus"));
  check("BLAS threads", blas_threads(base), blas_threads(current));
  auto blas_core = [](const Report& r) {
    return r.system.contains("host") && r.system["host"].contains("blas")
               ? r.system["host"]["blas"].value("core", nlohmann::json())
               : nlohmann::json();
  };
  check("BLAS kernels", blas_core(base), blas_core(current));
  auto build_type = [](const Report& r) {
    return r.meta.contains("build") ? r.meta["build"].value("build_type", nlohmann::json()) : nlohmann::json();
  };
  check("build type", build_type(base), build_type(current));
  return diffs;
}

std::vector<MetricComparison> compare_reports(const Report& base, const Report& current, const CompareOptions& opt) {
  std::map<std::string, const Result*> base_by_key;
  for (const auto& r : base.results) base_by_key[result_key(r)] = &r;
  std::vector<MetricComparison> rows;
  std::map<std::string, bool> seen;
  for (const auto& r : current.results) {
    const auto key = result_key(r);
    seen[key] = true;
    auto it = base_by_key.find(key);
    for (const auto& m : r.metrics) {
      if (m.role != MetricRole::performance) continue;
      MetricComparison c;
      c.key = result_label(r);
      c.experiment = r.experiment;
      c.tag = m.tag;
      c.unit = m.unit;
      c.higher_is_better = m.higher_is_better;
      c.current = m.value;
      const Metric* b = it == base_by_key.end() ? nullptr : it->second->find_metric(m.tag);
      if (!b) {
        c.verdict = Verdict::added;
        rows.push_back(c);
        continue;
      }
      c.base = b->value;
      c.change = b->value != 0 ? (m.value - b->value) / std::fabs(b->value) : 0.0;
      const bool enough = b->samples.size() >= 3 && m.samples.size() >= 3 &&
                          smallest_u_p(b->samples.size(), m.samples.size()) <= opt.alpha;
      c.p_value = enough ? mann_whitney_p(b->samples, m.samples) : 0.0;
      if (std::fabs(c.change) <= opt.threshold || (enough && c.p_value > opt.alpha))
        c.verdict = Verdict::same;
      else
        c.verdict = (c.change > 0) == m.higher_is_better ? Verdict::fast : Verdict::slow;
      rows.push_back(c);
    }
  }
  for (const auto& r : base.results) {
    if (seen.count(result_key(r))) continue;
    for (const auto& m : r.metrics) {
      if (m.role != MetricRole::performance) continue;
      MetricComparison c;
      c.key = result_label(r);
      c.experiment = r.experiment;
      c.tag = m.tag;
      c.unit = m.unit;
      c.base = m.value;
      c.verdict = Verdict::missing;
      rows.push_back(c);
    }
  }
  return rows;
}

void render_comparison_markdown(const std::vector<MetricComparison>& rows, const CompareOptions& opt,
                                std::ostream& out) {
  std::map<Verdict, int> counts;
  for (const auto& r : rows) ++counts[r.verdict];
  out << "# gpufact compare\n\n";
  out << "Test: two-sided Mann-Whitney U on per-repetition samples, alpha = " << opt.alpha
      << "; verdict FAST/SLOW when significant and the median moved by more than " << opt.threshold * 100
      << "%.\n\n";
  out << counts[Verdict::slow] << " SLOW, " << counts[Verdict::fast] << " FAST, " << counts[Verdict::same]
      << " SAME, " << counts[Verdict::missing] << " MISSING, " << counts[Verdict::added] << " NEW\n\n";
  if (rows.empty()) return;
  out << "| verdict | result | metric | base | new | change | p |\n|---|---|---|---:|---:|---:|---:|\n";
  auto order = [](Verdict v) {
    switch (v) {
      case Verdict::slow: return 0;
      case Verdict::missing: return 1;
      case Verdict::fast: return 2;
      case Verdict::added: return 3;
      case Verdict::same: return 4;
    }
    return 5;
  };
  std::vector<const MetricComparison*> sorted;
  for (const auto& r : rows) sorted.push_back(&r);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [&](const auto* a, const auto* b) { return order(a->verdict) < order(b->verdict); });
  for (const auto* r : sorted) {
    char change[32] = "", p[32] = "";
    if (r->verdict != Verdict::missing && r->verdict != Verdict::added) {
      std::snprintf(change, sizeof change, "%+.1f%%", 100 * r->change);
      std::snprintf(p, sizeof p, "%.3g", r->p_value);
    }
    out << "| " << to_string(r->verdict) << " | " << r->key << " | " << r->tag << " | "
        << (r->verdict == Verdict::added ? "" : format_value(r->base, r->unit)) << " | "
        << (r->verdict == Verdict::missing ? "" : format_value(r->current, r->unit)) << " | " << change << " | " << p
        << " |\n";
  }
}

nlohmann::json dashboard_json(const Report& current) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : current.results)
    for (const auto& m : r.metrics) {
      if (m.role != MetricRole::performance || !m.higher_is_better || !m.headline) continue;
      nlohmann::json e = {{"name", result_label(r) + " " + m.tag}, {"unit", m.unit}, {"value", m.value}};
      if (auto it = m.stats.find("stddev"); it != m.stats.end()) {
        std::ostringstream s;
        s.precision(4);
        s << "± " << it->second;
        e["range"] = s.str();
      }
      out.push_back(e);
    }
  return out;
}

}  // namespace gpufact
