// Report files (core/report/report_file, result): atomic rewrites that never leave half a file or
// a temp file behind, early --out checks, the writer's rewrite-after-every-result contract, and a
// loss-free JSON round trip of every Result field.
#include "core/errors.hpp"
#include "core/report/report_file.hpp"
#include "core/report/result.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpufact {
namespace {

namespace fs = std::filesystem;

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "gpufact_report_XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
  void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }
  fs::path dir_;
};

Result full_result() {
  Result r;
  r.experiment = "host.blas";
  r.artifact = "host.blas";
  r.axes = {{"routine", "getrf"}, {"precision", "d"}, {"n", 1024}};
  r.status = Status::passed;
  r.reason = "";
  r.seed = 0xfedcba9876543210ull;
  r.device = 1;
  Metric rate;
  rate.tag = "getrf/flop_rate";
  rate.name = "getrf rate";
  rate.unit = "GFLOP/s";
  rate.value = 123.456789012345;
  rate.stats = {{"median", 123.456789012345}, {"mean", 123.4}, {"stddev", 0.1}, {"cv", 8.1e-4},
                {"min", 1e-300}, {"max", 130.0}};
  rate.samples = {0.1, 123.456789012345, 1e-300, 6.02214076e23};
  rate.higher_is_better = true;
  rate.headline = true;
  rate.role = MetricRole::performance;
  rate.published = Published{110.5, "volkov08 Table 3 (8800GTX)"};
  Metric clock;
  clock.tag = "sm_clock";
  clock.name = "SM clock";
  clock.unit = "MHz";
  clock.value = 1980;
  clock.role = MetricRole::environment;
  r.metrics = {rate, clock};
  r.verification = Verification{"‖PA−LU‖₁/(n‖A‖₁ε)", 0.0123, 30.0};
  r.data = {{"blas_threads", 2}, {"fit", {{"slope", 1.5}}}};
  return r;
}

void expect_same(const Result& a, const Result& b) {
  EXPECT_EQ(a.experiment, b.experiment);
  EXPECT_EQ(a.artifact, b.artifact);
  EXPECT_EQ(a.axes, b.axes);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.reason, b.reason);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.device, b.device);
  ASSERT_EQ(a.metrics.size(), b.metrics.size());
  for (std::size_t i = 0; i < a.metrics.size(); ++i) {
    const auto &x = a.metrics[i], &y = b.metrics[i];
    EXPECT_EQ(x.tag, y.tag);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.unit, y.unit);
    EXPECT_EQ(x.value, y.value);  // exact: JSON numbers must round-trip doubles
    EXPECT_EQ(x.stats, y.stats);
    EXPECT_EQ(x.samples, y.samples);
    EXPECT_EQ(x.higher_is_better, y.higher_is_better);
    EXPECT_EQ(x.headline, y.headline);
    EXPECT_EQ(x.role, y.role);
    ASSERT_EQ(x.published.has_value(), y.published.has_value());
    if (x.published) {
      EXPECT_EQ(x.published->value, y.published->value);
      EXPECT_EQ(x.published->source, y.published->source);
    }
  }
  ASSERT_EQ(a.verification.has_value(), b.verification.has_value());
  if (a.verification) {
    EXPECT_EQ(a.verification->method, b.verification->method);
    EXPECT_EQ(a.verification->error, b.verification->error);
    EXPECT_EQ(a.verification->tolerance, b.verification->tolerance);
  }
  EXPECT_EQ(a.data, b.data);
}

using AtomicWrite = TempDir;

TEST_F(AtomicWrite, ReplacesContentAndLeavesNoTempFiles) {
  const auto file = dir_ / "r.json";
  write_file_atomically(file, "first\n");
  EXPECT_EQ(slurp(file), "first\n");
  write_file_atomically(file, "second, longer content\n");
  EXPECT_EQ(slurp(file), "second, longer content\n");
  write_file_atomically(file, "");
  EXPECT_EQ(slurp(file), "");
  const std::string big(3 << 20, 'x');  // several write(2) calls' worth
  write_file_atomically(file, big);
  EXPECT_EQ(slurp(file), big);
  EXPECT_EQ(entries(), std::vector<std::string>{"r.json"});
  // Readable by others like any report (mkstemp alone would give 0600).
  EXPECT_NE(fs::status(file).permissions() & fs::perms::others_read, fs::perms::none);
}

TEST_F(AtomicWrite, RelativePathWithoutDirectory) {
  const auto cwd = fs::current_path();
  fs::current_path(dir_);
  write_file_atomically("plain.json", "x");
  fs::current_path(cwd);
  EXPECT_EQ(slurp(dir_ / "plain.json"), "x");
  EXPECT_EQ(entries(), std::vector<std::string>{"plain.json"});
}

TEST_F(AtomicWrite, MissingDirectoryThrows) {
  EXPECT_THROW(write_file_atomically(dir_ / "no" / "such" / "r.json", "x"), std::runtime_error);
  EXPECT_TRUE(entries().empty());
}

TEST_F(AtomicWrite, FailedWriteKeepsThePreviousFile) {
  // A write that fails half way (here: the file size limit, which binds root too) must leave the
  // old report intact and no temp file behind.
  const auto file = dir_ / "r.json";
  write(file, "previous report\n");
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit small = old;
  small.rlim_cur = 4096;
  auto* old_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  try {
    write_file_atomically(file, std::string(64 << 10, 'y'));
  } catch (const std::runtime_error& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("r.json"), std::string::npos) << e.what();
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_TRUE(threw);
  EXPECT_EQ(slurp(file), "previous report\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"r.json"});
}

TEST_F(AtomicWrite, ReadOnlyDirectoryThrowsAndKeepsThePreviousFile) {
  const auto file = dir_ / "r.json";
  write(file, "previous report\n");
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec);
  if (::access(dir_.c_str(), W_OK) == 0) GTEST_SKIP() << "running as root: permissions do not bind";
  EXPECT_THROW(write_file_atomically(file, "new"), std::runtime_error);
  EXPECT_THROW(check_writable(file), UsageError);
  fs::permissions(dir_, fs::perms::owner_all);
  EXPECT_EQ(slurp(file), "previous report\n");
  EXPECT_EQ(entries(), std::vector<std::string>{"r.json"});
}

TEST_F(AtomicWrite, TargetIsADirectoryThrowsAndLeavesNoTemp) {
  fs::create_directories(dir_ / "r.json" / "inside");
  EXPECT_THROW(write_file_atomically(dir_ / "r.json", "x"), std::runtime_error);
  EXPECT_TRUE(fs::is_directory(dir_ / "r.json"));
  EXPECT_EQ(entries(), std::vector<std::string>{"r.json"});
}

using CheckWritable = TempDir;

TEST_F(CheckWritable, AcceptsNewAndExistingFiles) {
  EXPECT_NO_THROW(check_writable(dir_ / "new.json"));
  write(dir_ / "old.json", "x");
  EXPECT_NO_THROW(check_writable(dir_ / "old.json"));
  EXPECT_TRUE(fs::exists(dir_ / "old.json"));
  EXPECT_FALSE(fs::exists(dir_ / "new.json")) << "the check must not create the file";
}

TEST_F(CheckWritable, RejectsMissingDirectoryAndDirectories) {
  try {
    check_writable("/nonexistent/dir/r.json");
    FAIL() << "accepted a path in a missing directory";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/dir"), std::string::npos) << e.what();
  }
  try {
    check_writable(dir_);
    FAIL() << "accepted a directory";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("directory"), std::string::npos) << e.what();
  }
  write(dir_ / "file", "x");
  EXPECT_THROW(check_writable(dir_ / "file" / "r.json"), UsageError);  // parent is a file
}

using Writer = TempDir;

TEST_F(Writer, RewritesAfterEveryResultAndRoundTrips) {
  const auto file = dir_ / "report.json";
  const nlohmann::json meta = {{"tool", "gpufact"}, {"version", "0.0.0-test"}, {"preset", "ci"}};
  const nlohmann::json system = {{"gpus", nlohmann::json::array()}, {"host", {{"cpu_model", "Test CPU"}}}};
  const nlohmann::json experiments = {{"host.blas", {{"artifact", "host.blas"}}}};
  ReportWriter w(file, meta, system, experiments);

  // The file exists, loadable and empty, before the first result.
  auto r0 = load_report(file);
  EXPECT_EQ(r0.schema_version, report_schema_version);
  EXPECT_TRUE(r0.results.empty());
  EXPECT_EQ(r0.meta.value("complete", true), false);
  EXPECT_TRUE(r0.meta.contains("started_utc"));
  EXPECT_EQ(r0.system, system);
  EXPECT_EQ(r0.experiments, experiments);

  const Result first = full_result();
  w.add(first);
  auto r1 = load_report(file);
  ASSERT_EQ(r1.results.size(), 1u);
  expect_same(r1.results[0], first);

  Result skipped;
  skipped.experiment = "volkov08.bandwidth";
  skipped.artifact = "volkov08.bandwidth";
  skipped.status = Status::skipped;
  skipped.reason = "no usable GPU";
  w.add(skipped);
  auto r2 = load_report(file);
  ASSERT_EQ(r2.results.size(), 2u);
  expect_same(r2.results[0], first);
  expect_same(r2.results[1], skipped);
  EXPECT_FALSE(r2.results[1].seed.has_value());
  EXPECT_FALSE(r2.results[1].verification.has_value());
  EXPECT_EQ(r2.meta.value("complete", true), false);

  w.finish(true);
  auto r3 = load_report(file);
  EXPECT_EQ(r3.meta.value("complete", false), true);
  EXPECT_TRUE(r3.meta.contains("finished_utc"));
  EXPECT_EQ(r3.meta["tool"], "gpufact");
  EXPECT_EQ(r3.results.size(), 2u);
  EXPECT_EQ(entries(), std::vector<std::string>{"report.json"});
}

TEST_F(Writer, InterruptedRunIsMarked) {
  const auto file = dir_ / "report.json";
  ReportWriter w(file, nlohmann::json::object(), nlohmann::json::object(), nlohmann::json::object());
  w.finish(false, "interrupted");
  const auto r = load_report(file);
  EXPECT_EQ(r.meta.value("complete", true), false);
  EXPECT_EQ(r.meta.value("note", ""), "interrupted");
}

TEST(ResultJson, EveryStatusRoundTrips) {
  for (Status s : {Status::passed, Status::incorrect, Status::not_verified, Status::skipped, Status::error}) {
    EXPECT_EQ(status_from_string(to_string(s)), s);
    Result r;
    r.experiment = "x.y";
    r.status = s;
    const Result back = nlohmann::json(r).get<Result>();
    EXPECT_EQ(back.status, s);
  }
  EXPECT_THROW(status_from_string("PASSED"), std::invalid_argument);
}

TEST(ResultJson, OptionalFieldsAreOmittedNotNull) {
  Result r;
  r.experiment = "x.y";
  Metric m;
  m.tag = "t";
  m.value = 1;
  r.metrics.push_back(m);
  const nlohmann::json j = r;
  EXPECT_FALSE(j.contains("seed"));
  EXPECT_FALSE(j.contains("device"));
  EXPECT_FALSE(j.contains("verification"));
  EXPECT_FALSE(j.contains("data"));
  EXPECT_FALSE(j["metrics"][0].contains("published"));
  EXPECT_FALSE(j["metrics"][0].contains("samples"));
  EXPECT_EQ(j["metrics"][0]["role"], "performance");
  const Result full = full_result();
  const nlohmann::json jf = full;
  EXPECT_EQ(jf["metrics"][1]["role"], "environment");
  EXPECT_EQ(jf["metrics"][0]["published"]["source"], "volkov08 Table 3 (8800GTX)");
}

using LoadReport = TempDir;

TEST_F(LoadReport, RejectsWhatIsNotAReport) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"text.json", "localhost\n"},
      {"empty.json", ""},
      {"array.json", "[1, 2, 3]"},
      {"noversion.json", R"({"results": []})"},
      {"noresults.json", R"({"schema_version": 1})"},
      {"stringversion.json", R"({"schema_version": "1", "results": []})"},
      {"badstatus.json", R"({"schema_version": 1, "results": [{"experiment": "a.b", "status": "great"}]})"},
      {"nometricvalue.json",
       R"({"schema_version": 1, "results": [{"experiment": "a.b", "status": "passed", "metrics": [{"tag": "t"}]}]})"},
      {"resultsobject.json", R"({"schema_version": 1, "results": {}})"},
  };
  for (const auto& [name, text] : bad) {
    write(dir_ / name, text);
    try {
      load_report(dir_ / name);
      ADD_FAILURE() << name << " loaded";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << " threw a non-UsageError: " << e.what();
    }
  }
  EXPECT_THROW(load_report(dir_ / "missing.json"), UsageError);
}

TEST_F(LoadReport, RejectsNewerSchemaVersion) {
  const auto file = dir_ / "future.json";
  write(file, nlohmann::json{{"schema_version", report_schema_version + 1}, {"results", nlohmann::json::array()}}.dump());
  try {
    load_report(file);
    FAIL() << "loaded a newer schema";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("schema_version " + std::to_string(report_schema_version + 1)),
              std::string::npos)
        << e.what();
  }
}

TEST_F(LoadReport, AcceptsAMinimalReport) {
  const auto file = dir_ / "min.json";
  write(file, R"({"schema_version": 1, "results": [{"experiment": "a.b", "status": "skipped"}]})");
  const auto r = load_report(file);
  ASSERT_EQ(r.results.size(), 1u);
  EXPECT_EQ(r.results[0].artifact, "a.b");  // defaults to the experiment
  EXPECT_EQ(r.results[0].status, Status::skipped);
  EXPECT_TRUE(r.meta.is_object());
}

}  // namespace
}  // namespace gpufact
