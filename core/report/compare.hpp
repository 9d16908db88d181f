// `gpufact compare`: per performance metric, FAST / SLOW / SAME from the raw samples of two
// reports. The test: a two-sided Mann-Whitney U test on the per-repetition samples (exact for
// small samples without ties, else the tie-corrected normal approximation) at significance alpha, and a change of the medians beyond
// threshold. SLOW/FAST need both; otherwise SAME. With fewer than 3 samples a side, or too few
// for the test ever to reach alpha (3 vs 3: the smallest two-sided p is 0.1), only the threshold
// is applied.
#pragma once

#include "core/report/report_file.hpp"

#include <nlohmann/json.hpp>

#include <ostream>
#include <string>
#include <vector>

namespace gpufact {

enum class Verdict { fast, slow, same, missing, added };
std::string to_string(Verdict v);

struct CompareOptions {
  double threshold = 0.05;  // relative change of the median
  double alpha = 0.05;      // U-test significance level
  bool force = false;       // compare unlike environments
};

struct MetricComparison {
  std::string key;          // experiment + axes, human-readable
  std::string experiment;
  std::string tag;
  std::string unit;
  bool higher_is_better = false;
  double base = 0, current = 0;  // medians
  double change = 0;             // (current − base) / base
  double p_value = 1;
  Verdict verdict = Verdict::same;
};

// Two-sided p-value of the Mann-Whitney U test (normal approximation, tie-corrected, with
// continuity correction). Returns 1 when either sample has fewer than 2 values.
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);

// Reasons the two reports' environments differ (GPU, CPU, BLAS threads, build type); empty if alike.
std::vector<std::string> environment_differences(const Report& base, const Report& current);

std::vector<MetricComparison> compare_reports(const Report& base, const Report& current, const CompareOptions& opt);

void render_comparison_markdown(const std::vector<MetricComparison>& rows, const CompareOptions& opt, std::ostream& out);
// github-action-benchmark's customBiggerIsBetter input: rate metrics of `current`.
nlohmann::json dashboard_json(const Report& current);

}  // namespace gpufact
