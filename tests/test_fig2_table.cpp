// Host test for volkov08.fig2's summary table: each inferred quantity becomes one row beside
// the paper's 8800GTX value and the expected range for the GPU model, and values outside that
// range are flagged (a capacity by its knee interval), not hidden.
#include "apps/gpufact/catalog.hpp"
#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"

#include <gtest/gtest.h>

#include <string>

namespace gpufact {
namespace {

constexpr double KB = 1024.0, MB = 1024.0 * 1024.0;

Metric metric(const std::string& tag, double v, const std::string& unit) {
  return {.tag = tag, .name = tag, .unit = unit, .value = v, .headline = true, .role = MetricRole::derived};
}

const Result* row(const std::vector<Result>& rs, const std::string& quantity) {
  for (const auto& r : rs)
    if (r.artifact == "volkov08.fig2 table" && r.data.value("quantity", "") == quantity) return &r;
  return nullptr;
}

TEST(Fig2Table, RowsBesideThePaperAndTheExpectedRangeWithFlags) {
  SystemInfo sys;
  GpuSummary gpu;
  gpu.name = "NVIDIA H100 80GB HBM3";
  gpu.l2_bytes = 50 * 1024 * 1024;
  sys.gpus.push_back(gpu);
  Session session(sys, 0, {}, nullptr);
  const Experiment* e = experiment_catalog().find("volkov08.fig2");
  ASSERT_NE(e, nullptr);
  ASSERT_TRUE(e->summarize);

  Result cap;
  cap.experiment = e->key;
  cap.artifact = e->artifact;
  cap.status = Status::passed;
  cap.axes = {{"study", "capacity"}};
  cap.metrics = {metric("l1_hit_cycles", 37, "cycles"), metric("l1_capacity_bytes", 224 * KB, "B"),
                 metric("l2_capacity_bytes", 30 * MB, "B"), metric("dram_cycles", 900, "cycles")};
  cap.data["l1_capacity_bytes_interval"] = {224 * KB, 232 * KB};
  cap.data["l2_capacity_bytes_interval"] = {30 * MB, 32 * MB};
  Result failed = cap;  // an incorrect study contributes no rows
  failed.status = Status::incorrect;
  failed.axes = {{"study", "line"}};
  failed.metrics = {metric("sector_bytes", 32, "B")};

  Summary summary(session, *e, {cap, failed});
  e->summarize(summary);
  const auto& out = summary.derived();

  const Result* l1 = row(out, "l1_hit_cycles");
  ASSERT_NE(l1, nullptr);
  EXPECT_EQ(l1->find_metric("outside_expected")->value, 0.0);
  ASSERT_TRUE(l1->find_metric("measured")->published);
  EXPECT_EQ(l1->find_metric("measured")->published->value, 280.0);  // volkov08: L1 hit ~280 cycles
  EXPECT_EQ(l1->find_metric("expected_low")->value, 34.0);

  EXPECT_EQ(row(out, "l1_capacity_bytes")->find_metric("outside_expected")->value, 0.0);  // knee 224-232 KB
  const Result* l2 = row(out, "l2_capacity_bytes");
  ASSERT_NE(l2, nullptr);
  EXPECT_EQ(l2->find_metric("outside_expected")->value, 1.0);
  EXPECT_NE(l2->reason.find("outside"), std::string::npos);
  EXPECT_EQ(row(out, "dram_cycles")->find_metric("outside_expected")->value, 1.0);
  EXPECT_EQ(row(out, "sector_bytes"), nullptr);

  const Result& sum = out.back();
  EXPECT_EQ(sum.artifact, "volkov08.fig2 summary");
  EXPECT_EQ(sum.find_metric("outside_expected")->value, 2.0);
  EXPECT_NE(sum.reason.find("L2 capacity"), std::string::npos);
}

TEST(Fig2Table, UnknownGpuHasNoExpectedColumnsButKeepsThePaper) {
  SystemInfo sys;
  GpuSummary gpu;
  gpu.name = "Some Future GPU";
  sys.gpus.push_back(gpu);
  Session session(sys, 0, {}, nullptr);
  const Experiment* e = experiment_catalog().find("volkov08.fig2");
  Result cap;
  cap.experiment = e->key;
  cap.status = Status::passed;
  cap.axes = {{"study", "tlb"}};
  cap.metrics = {metric("tlb1_entries", 16, "")};
  Summary summary(session, *e, {cap});
  e->summarize(summary);
  const Result* r = row(summary.derived(), "tlb1_entries");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->find_metric("expected_low"), nullptr);
  EXPECT_EQ(r->find_metric("measured")->published->value, 16.0);
}

}  // namespace
}  // namespace gpufact
