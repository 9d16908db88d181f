#include "core/report/render.hpp"

#include "core/bench/axis.hpp"
#include "core/report/format.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace gpufact {
namespace {

std::string axis_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

std::string md_escape(std::string s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Results grouped by artifact, in order of first appearance.
std::vector<std::pair<std::string, std::vector<const Result*>>> by_artifact(const Report& r) {
  std::vector<std::pair<std::string, std::vector<const Result*>>> groups;
  for (const auto& res : r.results) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == res.artifact; });
    if (it == groups.end()) {
      groups.emplace_back(res.artifact, std::vector<const Result*>{});
      it = std::prev(groups.end());
    }
    it->second.push_back(&res);
  }
  return groups;
}

// Where the run's time went: wall time per experiment (cases and summaries), from each result's
// elapsed_s. Older reports have none and get no table.
void render_elapsed_table(const Report& report, std::ostream& out) {
  struct Total {
    int cases = 0;
    double seconds = 0;
    double slowest = 0;
  };
  std::vector<std::pair<std::string, Total>> totals;
  double all = 0;
  for (const auto& r : report.results) {
    if (!r.elapsed_s) continue;
    auto it = std::find_if(totals.begin(), totals.end(), [&](const auto& t) { return t.first == r.experiment; });
    if (it == totals.end()) {
      totals.emplace_back(r.experiment, Total{});
      it = std::prev(totals.end());
    }
    if (r.artifact == r.experiment) ++it->second.cases;
    it->second.seconds += *r.elapsed_s;
    it->second.slowest = std::max(it->second.slowest, *r.elapsed_s);
    all += *r.elapsed_s;
  }
  if (totals.empty()) return;
  out << "\n## Wall time per experiment\n\n| experiment | cases | total (s) | share | slowest case (s) |\n"
         "|---|---:|---:|---:|---:|\n";
  char buf[160];
  for (const auto& [key, t] : totals) {
    std::snprintf(buf, sizeof buf, " %d | %.1f | %.0f%% | %.2f |", t.cases, t.seconds,
                  all > 0 ? 100.0 * t.seconds / all : 0.0, t.slowest);
    out << "| " << md_escape(key) << " |" << buf << "\n";
  }
  std::snprintf(buf, sizeof buf, "| all | | %.1f | 100%% | |\n", all);
  out << buf;
}

}  // namespace

void render_markdown(const Report& report, std::ostream& out) {
  const auto& sys = report.system;
  out << "# gpufact report\n\n";
  std::string gpu = "no GPU";
  if (sys.contains("gpus") && !sys["gpus"].empty()) gpu = sys["gpus"][0].value("name", "?");
  out << "- GPU: " << gpu << "\n";
  if (sys.contains("host")) out << "- CPU: " << sys["host"].value("cpu_model", "?") << "\n";
  out << "- gpufact " << report.meta.value("version", "?") << ", preset " << report.meta.value("preset", "?")
      << ", started " << report.meta.value("started_utc", "?")
      << (report.meta.value("complete", false) ? "" : " (incomplete run)") << "\n";
  const bool robust_spread = std::any_of(report.results.begin(), report.results.end(), [](const Result& r) {
    return std::any_of(r.metrics.begin(), r.metrics.end(), [](const Metric& m) { return m.stats.count("spread"); });
  });
  if (robust_spread)
    out << "- ±: half the interquartile range of the samples over their median (the value shown)\n";

  for (const auto& [artifact, results] : by_artifact(report)) {
    out << "\n## " << artifact << "\n\n";
    // Columns: axes in the experiment's declaration order, then headline metrics by tag.
    std::vector<std::string> axes, tags;
    std::map<std::string, std::string> units, axis_kinds;
    std::set<std::string> has_published;
    const std::string& key = results.front()->experiment;
    if (report.experiments.contains(key) && report.experiments[key].contains("axes"))
      for (const auto& a : report.experiments[key]["axes"]) {
        const auto name = a.value("name", "");
        axis_kinds[name] = a.value("kind", "");
        if (std::any_of(results.begin(), results.end(), [&](const Result* r) { return r->axes.contains(name); }))
          axes.push_back(name);
      }
    for (const auto* r : results) {
      for (const auto& [k, v] : r->axes.items())
        if (std::find(axes.begin(), axes.end(), k) == axes.end()) axes.push_back(k);
      for (const auto& m : r->metrics) {
        if (!m.headline) continue;
        if (std::find(tags.begin(), tags.end(), m.tag) == tags.end()) tags.push_back(m.tag);
        units[m.tag] = m.unit;
        if (m.published) has_published.insert(m.tag);
      }
    }
    out << "|";
    for (const auto& a : axes) out << " " << a << " |";
    out << " status |";
    for (const auto& t : tags) {
      out << " " << t << " (" << units[t] << ") |";
      if (has_published.count(t)) out << " published |";
    }
    out << " check |\n|";
    for (std::size_t i = 0; i < axes.size() + 1; ++i) out << "---|";
    for (const auto& t : tags) out << (has_published.count(t) ? "---:|---:|" : "---:|");
    out << "---|\n";
    for (const auto* r : results) {
      out << "|";
      for (const auto& a : axes) {
        std::string cell;
        if (r->axes.contains(a)) {
          const auto& v = r->axes[a];
          cell = axis_kinds[a] == "size" && v.is_number_integer()
                     ? format_axis_value(AxisSpec{.name = a, .kind = AxisKind::size}, v.get<std::int64_t>())
                     : axis_text(v);
        }
        out << " " << md_escape(cell) << " |";
      }
      out << " " << to_string(r->status) << " |";
      for (const auto& t : tags) {
        const Metric* m = r->find_metric(t);
        std::string cell;
        if (m) {
          cell = format_value(m->value, "");
          const auto spread = format_spread(*m);
          if (!spread.empty()) cell += " " + spread;
        }
        out << " " << cell << " |";
        if (has_published.count(t))
          out << " " << (m && m->published ? format_value(m->published->value, "") : "") << " |";
      }
      std::string check;
      if (r->verification) {
        std::ostringstream v;
        v.precision(3);
        v << r->verification->error << " ≤ " << r->verification->tolerance;
        check = v.str();
      } else if (!r->reason.empty()) {
        check = r->reason;
      }
      out << " " << md_escape(check) << " |\n";
    }
    std::set<std::string> sources;
    for (const auto* r : results)
      for (const auto& m : r->metrics)
        if (m.published && !m.published->source.empty()) sources.insert(m.published->source);
    for (const auto& s : sources) out << "\nPublished: " << s << "\n";
  }
  render_elapsed_table(report, out);
}

void render_csv(const Report& report, std::ostream& out) {
  std::vector<std::string> axes;
  for (const auto& r : report.results)
    for (const auto& [k, v] : r.axes.items())
      if (std::find(axes.begin(), axes.end(), k) == axes.end()) axes.push_back(k);
  out << "experiment,artifact";
  for (const auto& a : axes) out << "," << csv_field(a);
  out << ",status,metric,unit,value,median,mean,stddev,min,max,samples,verification_error,tolerance\n";
  for (const auto& r : report.results) {
    auto prefix = [&] {
      std::string s = csv_field(r.experiment) + "," + csv_field(r.artifact);
      for (const auto& a : axes) s += "," + (r.axes.contains(a) ? csv_field(axis_text(r.axes[a])) : std::string());
      return s + "," + to_string(r.status);
    };
    std::string verr, vtol;
    if (r.verification) {
      std::ostringstream e, t;
      e.precision(6);
      t.precision(6);
      e << r.verification->error;
      t << r.verification->tolerance;
      verr = e.str();
      vtol = t.str();
    }
    if (r.metrics.empty()) {
      out << prefix() << ",,,,,,,,,0," << verr << "," << vtol << "\n";
      continue;
    }
    for (const auto& m : r.metrics) {
      auto stat = [&](const char* k) {
        auto it = m.stats.find(k);
        if (it == m.stats.end()) return std::string();
        std::ostringstream s;
        s.precision(9);
        s << it->second;
        return s.str();
      };
      std::ostringstream v;
      v.precision(9);
      v << m.value;
      out << prefix() << "," << csv_field(m.tag) << "," << csv_field(m.unit) << "," << v.str() << ","
          << stat("median") << "," << stat("mean") << "," << stat("stddev") << "," << stat("min") << ","
          << stat("max") << "," << m.samples.size() << "," << verr << "," << vtol << "\n";
    }
  }
}

}  // namespace gpufact
