#include "core/bench/runner.hpp"

#include "core/bench/case.hpp"
#include "core/bench/preset.hpp"
#include "core/build_info.hpp"
#include "core/errors.hpp"
#include "core/report/format.hpp"
#include "core/report/report_file.hpp"
#include "core/system/inventory.hpp"

#include <benchmark/benchmark.h>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

namespace gpufact {
namespace {

struct Plan {
  const Experiment* experiment;
  std::vector<AxisPoint> points;
};

std::pair<std::string, std::string> split_override(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw UsageError("-a " + text + ": expected axis=values, e.g. -a n=1024,2048");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::string default_report_name() {
  const auto t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "gpufact-%Y%m%d-%H%M%S.json", &tm);
  return buf;
}

std::vector<Plan> make_plan(const Registry& registry, const BenchRequest& req, const Preset& preset) {
  const auto selected = registry.match(req.patterns.empty() ? preset.experiments : req.patterns);
  std::vector<std::pair<std::string, std::string>> overrides;
  for (const auto& o : req.axis_overrides) overrides.push_back(split_override(o));
  if (req.precision) overrides.emplace_back("precision", *req.precision);
  for (const auto& [axis, values] : overrides) {
    bool known = false;
    for (const auto* e : selected) known = known || e->axis(axis) != nullptr;
    if (!known) {
      std::string names;
      for (const auto* e : selected)
        for (const auto& a : e->axes)
          if (names.find(" " + a.name + ",") == std::string::npos) names += " " + a.name + ",";
      if (!names.empty()) names.pop_back();
      throw UsageError((axis == "precision" && req.precision ? std::string("--precision") : "-a " + axis) +
                       ": no selected experiment has an axis '" + axis + "' (their axes:" + names + ")");
    }
  }
  // MAGMA's -l: the LAPACK run beside the GPU ones, here the `openblas` value of a method axis.
  auto has_lapack_method = [](const Experiment& e) {
    const AxisSpec* m = e.axis("method");
    return m && std::find(m->choices.begin(), m->choices.end(), "openblas") != m->choices.end();
  };
  if (req.with_lapack && std::none_of(selected.begin(), selected.end(), [&](const Experiment* e) {
        return has_lapack_method(*e);
      }))
    throw UsageError("-l: no selected experiment has an 'openblas' method to run beside");
  std::vector<Plan> plans;
  for (const auto* e : selected) {
    std::vector<std::vector<AxisValue>> values;
    for (const auto& a : e->axes) {
      std::string text = a.defaults;
      if (preset.axis_set == "quick" && !a.quick.empty()) text = a.quick;
      if (preset.axis_set == "full" && !a.full.empty()) text = a.full;
      for (const auto& [glob, axes] : preset.axes)
        if (fnmatch(glob.c_str(), e->key.c_str(), 0) == 0)
          if (auto it = axes.find(a.name); it != axes.end()) text = it->second;
      for (const auto& [axis, v] : overrides)
        if (axis == a.name) text = v;
      if (req.with_lapack && a.name == "method" && has_lapack_method(*e)) {
        const auto listed = parse_axis_values(a, text);
        if (std::none_of(listed.begin(), listed.end(), [](const AxisValue& v) {
              return std::holds_alternative<std::string>(v) && std::get<std::string>(v) == "openblas";
            }))
          text += ",openblas";
      }
      values.push_back(parse_axis_values(a, text));
    }
    Plan p{e, cartesian_product(e->axes, values)};
    if (e->applies) {
      std::erase_if(p.points, [&](const AxisPoint& pt) { return !e->applies(pt); });
      if (p.points.empty())
        throw UsageError(e->key + ": no combination of the requested axis values applies (see `gpufact list`)");
    }
    if (e->validate)
      for (const auto& pt : p.points) e->validate(pt);
    plans.push_back(std::move(p));
  }
  return plans;
}

std::string headline_text(const Result& r) {
  std::string s;
  for (const auto& m : r.metrics) {
    if (!m.headline) continue;
    // Measured metrics are named by their measurement ("copy"), derived ones by their whole tag.
    const std::string name = m.role == MetricRole::derived ? m.tag : m.tag.substr(0, m.tag.find('/'));
    s += (s.empty() ? "" : "  ") + name + " " + format_value(m.value, m.unit);
    const auto spread = format_spread(m);
    if (!spread.empty()) s += " " + spread;
  }
  if (r.verification) {
    std::ostringstream v;
    v << std::setprecision(3) << r.verification->error;
    s += (s.empty() ? "" : "  ") + std::string("err ") + v.str();
  }
  return s;
}

nlohmann::json experiments_json(const std::vector<Plan>& plans) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& p : plans) {
    const auto& e = *p.experiment;
    nlohmann::json axes = nlohmann::json::array();
    for (const auto& a : e.axes) axes.push_back({{"name", a.name}, {"kind", axis_kind_name(a.kind)}, {"help", a.help}});
    nlohmann::json plots = nlohmann::json::array();
    for (const auto& pl : e.plots)
      plots.push_back({{"artifact", pl.artifact}, {"x", pl.x}, {"y", pl.y}, {"series", pl.series},
                       {"logx", pl.logx}, {"logy", pl.logy}, {"title", pl.title}});
    j[e.key] = {{"artifact", e.artifact}, {"title", e.title}, {"axes", axes}, {"plots", plots}};
  }
  return j;
}

}  // namespace

int run_bench(const Registry& registry, const BenchRequest& req, const std::atomic<bool>* interrupted,
              std::ostream& out, std::ostream& err) {
  Preset preset = load_preset(req.preset);
  if (req.repetitions) {
    if (*req.repetitions < 1) throw UsageError("--niter/--repetitions must be >= 1");
    preset.measure.repetitions = *req.repetitions;
  }
  if (req.min_time_s) {
    if (*req.min_time_s < 0) throw UsageError("--min-time must be >= 0");
    preset.measure.min_time_s = *req.min_time_s;
  }
  if (req.device < 0) throw UsageError("--device must be >= 0");
  const auto plans = make_plan(registry, req, preset);

  // Google Benchmark's own flags (filter, display aggregates, ...) pass straight through.
  std::vector<std::string> gb_args{"gpufact"};
  gb_args.insert(gb_args.end(), req.benchmark_args.begin(), req.benchmark_args.end());
  std::vector<char*> gb_argv;
  for (auto& a : gb_args) gb_argv.push_back(a.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());
  if (gb_argc > 1) throw UsageError(std::string("unrecognized option ") + gb_argv[1]);

  SystemInfo sys = collect_system_info();
  const bool explicit_selection = !req.patterns.empty();

  std::size_t total = 0;
  for (const auto& p : plans) total += p.points.size();

  if (req.dry_run) {
    out << "preset " << preset.name << ": " << plans.size() << " experiments, " << total << " cases, "
        << preset.measure.repetitions << " repetitions each\n";
    for (const auto& p : plans) {
      const auto why = unmet_requirement(p.experiment->needs, sys, req.device);
      out << "  " << p.experiment->key << " (" << p.experiment->artifact << "): " << p.points.size() << " cases"
          << (why ? "  [would be skipped: " + *why + "]" : std::string()) << "\n";
      for (const auto& pt : p.points) out << "    " << pt.label() << "\n";
    }
    return exit_ok;
  }

  const std::string path = req.out.empty() ? default_report_name() : req.out;
  check_writable(path);

  // Asked explicitly for GPU work only, on a machine without a usable GPU: one line, exit 3.
  if (explicit_selection && sys.gpus.empty() &&
      std::all_of(plans.begin(), plans.end(), [](const Plan& p) { return p.experiment->needs.gpus > 0; }))
    throw NoDeviceError(sys.gpu_unavailable);

  nlohmann::json meta = {{"tool", "gpufact"},
                         {"version", GPUFACT_VERSION},
                         {"argv", req.argv},
                         {"preset", preset.name},
                         {"axis_set", preset.axis_set},
                         {"device", req.device},
                         {"measurement",
                          {{"engine", "Google Benchmark"},
                           {"repetitions", preset.measure.repetitions},
                           {"min_time_s", preset.measure.min_time_s},
                           {"warmup_s", preset.measure.warmup_s}}},
                         {"host", sys.doc["host"]["hostname"]},
                         {"build", build_info()}};
  ReportWriter writer(path, meta, sys.doc, experiments_json(plans));
  Session session(sys, req.device, preset.measure, interrupted);

  const bool tty = isatty(STDOUT_FILENO) != 0;
  std::size_t done = 0;
  std::map<Status, int> counts;
  std::vector<std::string> gpu_skipped;
  std::string gpu_reason;
  bool asked_gpu_without_one = false;
  const auto t_start = std::chrono::steady_clock::now();

  auto record = [&](const Result& r, const std::string& label) {
    writer.add(r);
    ++counts[r.status];
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    char prefix[64];
    std::snprintf(prefix, sizeof prefix, "[%*zu/%zu %5.0fs] ", static_cast<int>(std::to_string(total).size()), done,
                  total, elapsed);
    if (tty) out << "\r\033[K";
    out << prefix << label << "  " << to_string(r.status);
    const auto text = headline_text(r);
    if (!text.empty()) out << "  " << text;
    if (!r.reason.empty() && r.status != Status::passed) out << "  (" << r.reason << ")";
    out << std::endl;
  };

  bool stopped = false;
  for (const auto& plan : plans) {
    const Experiment& e = *plan.experiment;
    if (auto why = unmet_requirement(e.needs, sys, req.device)) {
      done += plan.points.size();
      Result r;
      r.experiment = e.key;
      r.artifact = e.artifact;
      r.status = Status::skipped;
      r.reason = *why;
      writer.add(r);
      ++counts[Status::skipped];
      if (e.needs.gpus > 0 && sys.gpus.empty()) {
        gpu_skipped.push_back(e.key);
        gpu_reason = *why;
        asked_gpu_without_one = asked_gpu_without_one || explicit_selection;
      } else {
        out << e.key << "  skipped  (" << *why << ")" << std::endl;
      }
      continue;
    }
    std::vector<Result> finished;
    for (const auto& point : plan.points) {
      if (interrupted && interrupted->load()) {
        stopped = true;
        break;
      }
      ++done;
      const std::string label = e.key + " " + point.label();
      if (tty) out << "[" << done << "/" << total << "] " << label << " ..." << std::flush;
      Result r;
      r.experiment = e.key;
      r.artifact = e.artifact;
      r.axes = point.to_json();
      if (e.needs.gpus > 0) r.device = req.device;
      const auto t_case = std::chrono::steady_clock::now();
      try {
        Case c(session, e, point, r);
        e.run(c);
      } catch (const SkipCase& s) {
        r.status = Status::skipped;
        r.reason = s.what();
      } catch (const UsageError&) {
        throw;
      } catch (const std::exception& ex) {
        r.status = Status::error;
        r.reason = ex.what();
      }
      if (interrupted && interrupted->load() && r.status == Status::error) r.reason = "interrupted";
      r.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_case).count();
      record(r, label);
      finished.push_back(r);
    }
    if (stopped) break;
    if (e.summarize && !finished.empty()) {
      Summary summary(session, e, finished);
      const auto t_summary = std::chrono::steady_clock::now();
      try {
        e.summarize(summary);
      } catch (const std::exception& ex) {
        Result r;
        r.experiment = e.key;
        r.artifact = e.artifact + " summary";
        r.status = Status::error;
        r.reason = std::string("summary failed: ") + ex.what();
        summary.add(r);
      }
      // The hook's time goes to its first derived result, so per-experiment totals include it.
      if (!summary.derived().empty())
        summary.derived().front().elapsed_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t_summary).count();
      for (auto& d : summary.derived()) record(d, d.artifact + " " + d.axes.dump());
    }
  }

  if (!gpu_skipped.empty()) {
    std::string keys;
    for (const auto& k : gpu_skipped) keys += (keys.empty() ? "" : ", ") + k;
    out << "skipped " << gpu_skipped.size() << " GPU experiment" << (gpu_skipped.size() == 1 ? "" : "s") << " ("
        << keys << "): " << gpu_reason << std::endl;
  }
  writer.finish(!stopped, stopped ? "interrupted" : "");
  out << counts[Status::passed] << " passed, " << counts[Status::incorrect] << " incorrect, "
      << counts[Status::error] << " error, " << counts[Status::not_verified] << " not verified, "
      << counts[Status::skipped] << " skipped; report: " << path << std::endl;
  if (stopped) {
    err << "gpufact: interrupted; finished results are in " << path << std::endl;
    return exit_interrupted;
  }
  if (counts[Status::incorrect] + counts[Status::error] > 0) return exit_failures;
  if (req.require_verified && counts[Status::not_verified] > 0) {
    err << "gpufact: -c: " << counts[Status::not_verified] << " case(s) verified nothing; see " << path << std::endl;
    return exit_failures;
  }
  if (asked_gpu_without_one) {
    err << "gpufact: GPU experiments were asked for but " << gpu_reason << std::endl;
    return exit_no_device;
  }
  return exit_ok;
}

void print_list(const Registry& registry, std::ostream& out, bool as_json) {
  if (as_json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& e : registry.all()) {
      nlohmann::json axes = nlohmann::json::array();
      for (const auto& a : e.axes)
        axes.push_back({{"name", a.name}, {"kind", axis_kind_name(a.kind)}, {"help", a.help},
                        {"defaults", a.defaults}, {"quick", a.quick.empty() ? a.defaults : a.quick},
                        {"full", a.full.empty() ? a.defaults : a.full}, {"allowed", describe_allowed(a)}});
      j.push_back({{"key", e.key}, {"artifact", e.artifact}, {"title", e.title}, {"axes", axes},
                   {"needs", {{"gpus", e.needs.gpus}, {"device_memory_bytes", e.needs.device_memory_bytes},
                              {"min_compute_capability", e.needs.min_compute_capability},
                              {"mpi", e.needs.mpi}, {"libraries", e.needs.libraries}}}});
    }
    out << j.dump(2) << "\n";
    return;
  }
  for (const auto& e : registry.all()) {
    out << e.key << "  [" << e.artifact << "]  " << e.title << "\n";
    std::string needs;
    if (e.needs.gpus > 0) needs += std::to_string(e.needs.gpus) + " GPU" + (e.needs.gpus > 1 ? "s" : "");
    if (e.needs.device_memory_bytes > 0)
      needs += (needs.empty() ? "" : ", ") + std::to_string(e.needs.device_memory_bytes >> 20) + " MiB device memory";
    if (e.needs.mpi) needs += std::string(needs.empty() ? "" : ", ") + "MPI";
    for (const auto& l : e.needs.libraries) needs += (needs.empty() ? "" : ", ") + l;
    out << "    needs: " << (needs.empty() ? "CPU only" : needs) << "\n";
    for (const auto& a : e.axes) {
      out << "    -a " << a.name << "=" << a.defaults;
      if (!a.quick.empty()) out << "   quick: " << a.quick;
      if (!a.full.empty()) out << "   full: " << a.full;
      out << "   (" << describe_allowed(a) << ")";
      if (!a.help.empty()) out << "  " << a.help;
      out << "\n";
    }
  }
}

}  // namespace gpufact
