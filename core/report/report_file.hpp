// Writing and reading report files. A report is rewritten atomically (temp file + rename) after
// every finished result, so a crash, an error or Ctrl-C later in the run loses nothing finished.
#pragma once

#include "core/report/result.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace gpufact {

// Writes `text` to `path` through a temporary file in the same directory and rename(2), so a
// reader sees either the old or the new file, never half of one. Throws on failure.
void write_file_atomically(const std::filesystem::path& path, const std::string& text);

// Throws UsageError with a one-line reason when `path` cannot be written (no directory, no
// permission), before any work is done.
void check_writable(const std::filesystem::path& path);

class ReportWriter {
 public:
  ReportWriter(std::filesystem::path path, nlohmann::json meta, nlohmann::json system, nlohmann::json experiments);
  void add(const Result& r);              // appends and rewrites the file
  void finish(bool complete, const std::string& note = {});  // stamps the end time and rewrites
  const std::vector<Result>& results() const { return results_; }
  const std::filesystem::path& path() const { return path_; }
  nlohmann::json document() const;

 private:
  void flush();
  std::filesystem::path path_;
  nlohmann::json meta_, system_, experiments_;
  std::vector<Result> results_;
};

// Parses a report; throws UsageError naming the file when it is not a gpufact report.
struct Report {
  nlohmann::json meta, system, experiments;
  std::vector<Result> results;
  int schema_version = 0;
};
Report load_report(const std::filesystem::path& path);

std::string utc_now_iso8601();

}  // namespace gpufact
