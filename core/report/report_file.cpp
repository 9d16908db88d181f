#include "core/report/report_file.hpp"

#include "core/errors.hpp"

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gpufact {

namespace fs = std::filesystem;

void write_file_atomically(const fs::path& path, const std::string& text) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + path.filename().string() + ".XXXXXX")).string();
  const int fd = mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(err));
  }
  if (std::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmpl.c_str());
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(err));
  }
}

void check_writable(const fs::path& path) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError("--out " + path.string() + ": directory " + dir.string() + " does not exist");
  if (fs::is_directory(path, ec)) throw UsageError("--out " + path.string() + ": is a directory");
  if (::access(dir.c_str(), W_OK) != 0)
    throw UsageError("--out " + path.string() + ": directory " + dir.string() + " is not writable");
  if (fs::exists(path, ec) && ::access(path.c_str(), W_OK) != 0)
    throw UsageError("--out " + path.string() + ": file is not writable");
}

std::string utc_now_iso8601() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ReportWriter::ReportWriter(fs::path path, nlohmann::json meta, nlohmann::json system, nlohmann::json experiments)
    : path_(std::move(path)), meta_(std::move(meta)), system_(std::move(system)), experiments_(std::move(experiments)) {
  meta_["started_utc"] = utc_now_iso8601();
  meta_["complete"] = false;
  flush();
}

nlohmann::json ReportWriter::document() const {
  return {{"schema_version", report_schema_version},
          {"meta", meta_},
          {"system", system_},
          {"experiments", experiments_},
          {"results", results_}};
}

void ReportWriter::add(const Result& r) {
  results_.push_back(r);
  flush();
}

void ReportWriter::finish(bool complete, const std::string& note) {
  meta_["finished_utc"] = utc_now_iso8601();
  meta_["complete"] = complete;
  if (!note.empty()) meta_["note"] = note;
  flush();
}

void ReportWriter::flush() { write_file_atomically(path_, document().dump(1) + "\n"); }

Report load_report(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("cannot read report " + path.string());
  nlohmann::json j;
  try {
    in >> j;
  } catch (const nlohmann::json::exception& e) {
    throw UsageError("report " + path.string() + " is not valid JSON: " + e.what());
  }
  if (!j.is_object() || !j.contains("schema_version") || !j["schema_version"].is_number_integer() ||
      !j.contains("results"))
    throw UsageError("report " + path.string() + " is not a gpufact report (no schema_version/results)");
  Report r;
  r.schema_version = j["schema_version"].get<int>();
  if (r.schema_version > report_schema_version)
    throw UsageError("report " + path.string() + " has schema_version " + std::to_string(r.schema_version) +
                     "; this gpufact reads up to " + std::to_string(report_schema_version));
  r.meta = j.value("meta", nlohmann::json::object());
  r.system = j.value("system", nlohmann::json::object());
  r.experiments = j.value("experiments", nlohmann::json::object());
  try {
    r.results = j.at("results").get<std::vector<Result>>();
  } catch (const std::exception& e) {
    throw UsageError("report " + path.string() + " has a malformed result: " + e.what());
  }
  return r;
}

}  // namespace gpufact
