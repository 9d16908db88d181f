// gpufact: the command-line driver. Parsing only; the work lives in core/ (STYLE.md).
#include "apps/gpufact/catalog.hpp"
#include "core/bench/preset.hpp"
#include "core/bench/runner.hpp"
#include "core/build_info.hpp"
#include "core/errors.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/report/compare.hpp"
#include "core/report/render.hpp"
#include "core/report/report_file.hpp"
#include "core/system/inventory.hpp"

#include <CLI/CLI.hpp>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <unistd.h>

namespace {

std::atomic<bool> g_interrupted{false};

extern "C" void on_sigint(int) {
  if (g_interrupted.exchange(true)) {
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::filesystem::path find_plot_script() {
  for (const auto& dir : gpufact::config_dirs()) {
    for (const auto& candidate : {dir.parent_path() / "plot_report.py", dir.parent_path() / "scripts" / "plot_report.py"})
      if (std::filesystem::exists(candidate)) return candidate;
  }
  throw std::runtime_error("plot_report.py not found next to the binary or in the source tree");
}

void write_output(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  gpufact::check_writable(path);
  gpufact::write_file_atomically(path, text);
}

// MAGMA's --range start:stop:step (arithmetic) in the -a syntax.
std::string magma_range(const std::string& r) {
  const auto a = r.find(':'), b = r.rfind(':');
  if (a == std::string::npos || a == b) throw gpufact::UsageError("--range " + r + ": expected start:stop:step");
  return r.substr(0, b) + ":+" + r.substr(b + 1);
}

}  // namespace

int main(int argc, char** argv) {
  // OpenBLAS chooses its kernels when it loads, before main; when it fell back to kernels weaker
  // than this CPU supports, run again with the right OPENBLAS_CORETYPE (once; recorded in reports).
  if (!std::getenv("OPENBLAS_CORETYPE") && !std::getenv("GPUFACT_OPENBLAS_CORE_FORCED")) {
    const std::string core = gpufact::host::stronger_openblas_core();
    if (!core.empty()) {
      setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
      setenv("GPUFACT_OPENBLAS_CORE_FORCED", "1", 1);
      execv("/proc/self/exe", argv);  // on failure, go on with OpenBLAS's own choice
    }
  }
  CLI::App app{"gpufact: GPU microbenchmarks and the factorizations of four papers, with JSON reports", "gpufact"};
  app.set_version_flag("--version", std::string(GPUFACT_VERSION) + " (" + gpufact::build::git_sha + ")");
  app.require_subcommand(1);

  // bench
  gpufact::BenchRequest req;
  std::vector<std::string> sizes, block_sizes;
  std::string range;
  auto* bench = app.add_subcommand("bench", "run experiments and write one JSON report");
  bench->add_option("experiments", req.patterns, "experiment keys or globs (default: the preset's)");
  bench->add_option("--preset", req.preset, "quick, full, ci, or a preset JSON file")->capture_default_str();
  bench->add_option("-o,--out", req.out, "report path (default: gpufact-<UTC time>.json)");
  bench->add_option("--device", req.device, "CUDA device index")->capture_default_str();
  bench->add_option("--precision", req.precision, "values of the precision axis, e.g. s,d");
  bench->add_option("-a,--axis", req.axis_overrides, "axis override name=values (lists a,b; ranges lo:hi:*f or lo:hi:+s)")
      ->take_last()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  bench->add_option("-N", sizes, "matrix sizes (MAGMA tester shortcut for -a n=...)")->delimiter(',');
  bench->add_option("--range", range, "start:stop:step (MAGMA tester shortcut for -a n=start:stop:+step)");
  bench->add_option("--niter,--repetitions", req.repetitions, "samples per measurement");
  bench->add_option("--nb", block_sizes, "block sizes (MAGMA tester shortcut for -a nb=...)")->delimiter(',');
  bench->add_flag("-l,--lapack", req.with_lapack, "also run the host LAPACK (OpenBLAS) method (MAGMA tester -l)");
  bench->add_flag("-c,--check", req.require_verified,
                  "fail the run when a case verified nothing (every case checks its answer; MAGMA tester -c)");
  bench->add_option("--min-time", req.min_time_s, "seconds each sample runs at least");
  bench->add_flag("--dry-run", req.dry_run, "print the plan, run nothing");
  bench->allow_extras();
  bench->footer("Google Benchmark flags (--benchmark_filter=REGEX, ...) are passed through.");

  // list / info
  bool list_json = false;
  auto* list = app.add_subcommand("list", "every experiment, its artifact, axes and needs");
  list->add_flag("--json", list_json, "machine-readable");
  auto* info = app.add_subcommand("info", "the system inventory as JSON");

  // report
  std::string report_file, report_format = "md", report_out, plots_dir;
  auto* report = app.add_subcommand("report", "tables (markdown or CSV) and figures from a report");
  report->add_option("file", report_file, "report JSON")->required()->check(CLI::ExistingFile);
  report->add_option("--format", report_format, "md or csv")->check(CLI::IsMember({"md", "csv"}))->capture_default_str();
  report->add_option("-o,--out", report_out, "write here instead of stdout");
  report->add_option("--plots", plots_dir, "render PNG figures into this directory");

  // compare
  std::string base_file, new_file, compare_out, dashboard_out;
  double threshold_pct = 5.0;
  gpufact::CompareOptions copt;
  auto* compare = app.add_subcommand("compare", "FAST/SLOW/SAME per metric between two reports");
  compare->add_option("base", base_file, "baseline report")->required()->check(CLI::ExistingFile);
  compare->add_option("new", new_file, "new report")->required()->check(CLI::ExistingFile);
  compare->add_option("--threshold", threshold_pct, "percent change of the median below which a metric is SAME")
      ->check(CLI::Range(0.0, 1000.0))
      ->capture_default_str();
  compare->add_option("--alpha", copt.alpha, "significance level of the Mann-Whitney U test")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  compare->add_flag("--force", copt.force, "compare reports from unlike environments");
  compare->add_option("-o,--out", compare_out, "write the markdown summary here instead of stdout");
  compare->add_option("--dashboard", dashboard_out, "write the new report's rates as customBiggerIsBetter JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : gpufact::exit_usage;
  }

  try {
    if (*bench) {
      for (const auto& extra : bench->remaining()) {
        if (extra.rfind("--benchmark_", 0) != 0)
          throw gpufact::UsageError("bench: unknown option " + extra + " (see gpufact bench --help)");
        req.benchmark_args.push_back(extra);
      }
      if (!sizes.empty()) {
        std::string joined;
        for (const auto& s : sizes) joined += (joined.empty() ? "" : ",") + s;
        req.axis_overrides.push_back("n=" + joined);
      }
      if (!range.empty()) req.axis_overrides.push_back("n=" + magma_range(range));
      if (!block_sizes.empty()) {
        std::string joined;
        for (const auto& b : block_sizes) joined += (joined.empty() ? "" : ",") + b;
        req.axis_overrides.push_back("nb=" + joined);
      }
      req.argv.assign(argv, argv + argc);
      std::signal(SIGINT, on_sigint);
      return gpufact::run_bench(gpufact::experiment_catalog(), req, &g_interrupted, std::cout, std::cerr);
    }
    if (*list) {
      gpufact::print_list(gpufact::experiment_catalog(), std::cout, list_json);
      return 0;
    }
    if (*info) {
      std::cout << gpufact::collect_system_info().doc.dump(2) << "\n";
      return 0;
    }
    if (*report) {
      const auto r = gpufact::load_report(report_file);
      std::ostringstream text;
      if (report_format == "csv")
        gpufact::render_csv(r, text);
      else
        gpufact::render_markdown(r, text);
      write_output(report_out, text.str());
      if (!plots_dir.empty()) {
        std::filesystem::create_directories(plots_dir);
        const std::string python = std::filesystem::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
        const std::string cmd = python + " " + shell_quote(find_plot_script().string()) + " " +
                                shell_quote(report_file) + " " + shell_quote(plots_dir);
        const int rc = std::system(cmd.c_str());
        if (rc != 0) throw std::runtime_error("plot script failed (" + cmd + ")");
      }
      return 0;
    }
    if (*compare) {
      copt.threshold = threshold_pct / 100.0;
      const auto base = gpufact::load_report(base_file);
      const auto current = gpufact::load_report(new_file);
      const auto diffs = gpufact::environment_differences(base, current);
      if (!diffs.empty() && !copt.force) {
        std::string all;
        for (const auto& d : diffs) all += (all.empty() ? "" : "; ") + d;
        throw gpufact::UsageError("compare: the reports come from unlike environments (" + all +
                                  "); use --force to compare anyway");
      }
      const auto rows = gpufact::compare_reports(base, current, copt);
      std::ostringstream text;
      if (!diffs.empty()) {
        text << "Environments differ (compared with --force):\n";
        for (const auto& d : diffs) text << "- " << d << "\n";
        text << "\n";
      }
      gpufact::render_comparison_markdown(rows, copt, text);
      write_output(compare_out, text.str());
      if (!dashboard_out.empty()) {
        gpufact::check_writable(dashboard_out);
        gpufact::write_file_atomically(dashboard_out, gpufact::dashboard_json(current).dump(2) + "\n");
      }
      for (const auto& row : rows)
        if (row.verdict == gpufact::Verdict::slow || row.verdict == gpufact::Verdict::missing) return gpufact::exit_failures;
      return 0;
    }
  } catch (const gpufact::UsageError& e) {
    std::cerr << "gpufact: " << e.what() << "\n";
    return gpufact::exit_usage;
  } catch (const gpufact::NoDeviceError& e) {
    std::cerr << "gpufact: " << e.what() << "\n";
    return gpufact::exit_no_device;
  } catch (const std::exception& e) {
    std::cerr << "gpufact: error: " << e.what() << "\n";
    return gpufact::exit_failures;
  }
  return 0;
}
