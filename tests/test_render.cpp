// `gpufact report` output (core/report/render): the markdown is pinned by a golden file; the CSV
// is long format, one row per (result, metric).
//
// To regenerate the golden after an intended change to the markdown, run this test with
// GPUFACT_UPDATE_GOLDEN=1, then read tests/golden/report_small.md before committing it.
#include "core/report/format.hpp"
#include "core/report/render.hpp"
#include "core/report/report_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gpufact {
namespace {

const std::string kTestDir = GPUFACT_TEST_DIR;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Splits one CSV record (RFC 4180 quoting, no embedded newlines).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

Report fixture() { return load_report(kTestDir + "/fixtures/report_small.json"); }

TEST(RenderMarkdown, MatchesGolden) {
  std::ostringstream md;
  render_markdown(fixture(), md);
  const std::string golden_path = kTestDir + "/golden/report_small.md";
  if (const char* update = std::getenv("GPUFACT_UPDATE_GOLDEN"); update && std::string(update) == "1") {
    std::ofstream(golden_path, std::ios::binary) << md.str();
    GTEST_SKIP() << "rewrote " << golden_path << "; read it before committing";
  }
  const std::string golden = slurp(golden_path);
  ASSERT_FALSE(golden.empty()) << golden_path << " is missing";
  EXPECT_EQ(md.str(), golden) << "markdown output changed; if intended, regenerate with GPUFACT_UPDATE_GOLDEN=1";
}

TEST(RenderMarkdown, OneTablePerArtifactWithPublishedColumn) {
  std::ostringstream md;
  render_markdown(fixture(), md);
  const std::string text = md.str();
  EXPECT_NE(text.find("- GPU: Fixture GPU 80GB"), std::string::npos);
  EXPECT_NE(text.find("\n## host.blas\n"), std::string::npos);
  EXPECT_NE(text.find("\n## volkov08.bandwidth\n"), std::string::npos);
  EXPECT_LT(text.find("## host.blas"), text.find("## volkov08.bandwidth"));  // first-appearance order
  EXPECT_NE(text.find("| copy/bandwidth (GB/s) | published |"), std::string::npos);
  EXPECT_EQ(text.find("| getrf/flop_rate (GFLOP/s) | published |"), std::string::npos);  // no published value
  EXPECT_EQ(text.find("getrf/time"), std::string::npos);  // not a headline metric
  EXPECT_NE(text.find("Published: test fixture"), std::string::npos);
  EXPECT_NE(text.find("needs 2048 MiB of device memory"), std::string::npos);  // the skip reason is shown
}

TEST(RenderMarkdown, IncompleteRunAndPipesAreMarked) {
  Report r;
  r.meta = {{"version", "x"}, {"preset", "p"}, {"started_utc", "t"}, {"complete", false}};
  Result res;
  res.experiment = "a.b";
  res.artifact = "a.b";
  res.axes = {{"label", "x|y"}};
  res.status = Status::error;
  res.reason = "failed | badly";
  r.results.push_back(res);
  std::ostringstream md;
  render_markdown(r, md);
  const std::string text = md.str();
  EXPECT_NE(text.find("(incomplete run)"), std::string::npos);
  EXPECT_NE(text.find("x\\|y"), std::string::npos);
  EXPECT_NE(text.find("failed \\| badly"), std::string::npos);
  EXPECT_NE(text.find("- GPU: no GPU"), std::string::npos);
  // Every table row has the header's number of cells.
  std::size_t header_cells = 0;
  for (const auto& line : lines_of(text)) {
    if (line.empty() || line[0] != '|') continue;
    std::size_t cells = 0;
    for (std::size_t i = 0; i < line.size(); ++i)
      if (line[i] == '|' && (i == 0 || line[i - 1] != '\\')) ++cells;
    if (header_cells == 0) header_cells = cells;
    EXPECT_EQ(cells, header_cells) << line;
  }
  EXPECT_GT(header_cells, 0u);
}

TEST(RenderMarkdown, WallTimePerExperimentFromElapsed) {
  Report r;
  r.meta = {{"version", "x"}, {"preset", "p"}, {"started_utc", "t"}, {"complete", true}};
  auto add = [&](const std::string& key, const std::string& artifact, double s) {
    Result res;
    res.experiment = key;
    res.artifact = artifact;
    res.status = Status::passed;
    res.elapsed_s = s;
    r.results.push_back(res);
  };
  add("a.one", "a.one", 1.5);
  add("a.one", "a.one", 2.5);
  add("a.one", "a.one summary", 0.5);
  add("a.two", "a.two", 4.0);
  std::ostringstream md;
  render_markdown(r, md);
  const std::string text = md.str();
  EXPECT_NE(text.find("## Wall time per experiment"), std::string::npos) << text;
  EXPECT_NE(text.find("| a.one | 2 | 4.5 | 53% | 2.50 |"), std::string::npos) << text;
  EXPECT_NE(text.find("| a.two | 1 | 4.0 | 47% | 4.00 |"), std::string::npos) << text;
  EXPECT_NE(text.find("| all | | 8.5 | 100% | |"), std::string::npos) << text;
  // Reports without elapsed_s (older ones, the fixture) get no table.
  std::ostringstream old;
  render_markdown(fixture(), old);
  EXPECT_EQ(old.str().find("Wall time"), std::string::npos);
}

TEST(RenderCsv, HeaderAndOneRowPerMetric) {
  const Report r = fixture();
  std::ostringstream csv;
  render_csv(r, csv);
  const auto lines = lines_of(csv.str());
  ASSERT_FALSE(lines.empty());
  const auto header = csv_fields(lines[0]);
  EXPECT_EQ(header.front(), "experiment");
  const auto col = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name;
    return static_cast<std::size_t>(it - header.begin());
  };
  for (const char* axis : {"routine", "precision", "n", "threads", "bytes", "cache"}) col(axis);
  const std::size_t metric_col = col("metric"), value_col = col("value"), samples_col = col("samples"),
                    status_col = col("status");

  std::size_t metrics = 0, rows_without_metrics = 0;
  for (const auto& res : r.results) {
    metrics += res.metrics.size();
    rows_without_metrics += res.metrics.empty() ? 1 : 0;
  }
  ASSERT_EQ(lines.size(), 1 + metrics + rows_without_metrics);
  std::size_t row = 1;
  for (const auto& res : r.results) {
    if (res.metrics.empty()) {
      const auto f = csv_fields(lines[row++]);
      ASSERT_EQ(f.size(), header.size()) << lines[row - 1];
      EXPECT_EQ(f[status_col], "skipped");
      EXPECT_EQ(f[metric_col], "");
      continue;
    }
    for (const auto& m : res.metrics) {
      const auto f = csv_fields(lines[row++]);
      ASSERT_EQ(f.size(), header.size()) << lines[row - 1];
      EXPECT_EQ(f[0], res.experiment);
      EXPECT_EQ(f[metric_col], m.tag);
      EXPECT_DOUBLE_EQ(std::stod(f[value_col]), m.value);  // precision 9 is enough for these values
      EXPECT_EQ(f[samples_col], std::to_string(m.samples.size()));
    }
  }
}

TEST(RenderCsv, QuotesFieldsWithCommasAndQuotes) {
  Report r;
  Result res;
  res.experiment = "a.b";
  res.artifact = "fig \"3\", left";
  res.axes = {{"list", "1,2"}};
  res.status = Status::passed;
  Metric m;
  m.tag = "t";
  m.unit = "GB/s";
  m.value = 1.5;
  res.metrics.push_back(m);
  r.results.push_back(res);
  std::ostringstream csv;
  render_csv(r, csv);
  const auto lines = lines_of(csv.str());
  ASSERT_EQ(lines.size(), 2u);
  const auto header = csv_fields(lines[0]), f = csv_fields(lines[1]);
  ASSERT_EQ(f.size(), header.size()) << lines[1];
  EXPECT_EQ(f[1], "fig \"3\", left");
  EXPECT_EQ(f[2], "1,2");
}

TEST(Format, ValuesAndSpreads) {
  EXPECT_EQ(format_value(1.5e-5, "s"), "15.0 us");
  EXPECT_EQ(format_value(2.5e-9, "s"), "2.50 ns");
  EXPECT_EQ(format_value(0.25, "s"), "250 ms");
  EXPECT_EQ(format_value(2561.3, "GB/s"), "2561 GB/s");
  EXPECT_EQ(format_value(0.0656, ""), "0.06560");
  EXPECT_EQ(format_value(1e9, "FLOP"), "1.000e+09 FLOP");
  Metric m;
  m.samples = {1, 2, 3};
  EXPECT_EQ(format_spread(m), "") << "no stats: the spread is unknown, not zero";
  m.stats = {{"cv", 0.008}};
  EXPECT_EQ(format_spread(m), "±0.8%");
  m.stats = {{"stddev", 1.0}, {"mean", 50.0}};
  EXPECT_EQ(format_spread(m), "±2.0%");
  m.samples = {5};
  EXPECT_EQ(format_spread(m), "");
  m.samples = {1, 2, 3};
  m.stats = {{"cv", 0.05}, {"spread", 0.012}};
  EXPECT_EQ(format_spread(m), "±1.2%") << "the robust spread wins over cv";
  EXPECT_DOUBLE_EQ(relative_spread(m), 0.012);
}

}  // namespace
}  // namespace gpufact
