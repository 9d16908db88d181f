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

// A machine with one GPU of this name and L2 size (0: unknown), as the summaries see it.
SystemInfo one_gpu(const std::string& name, double l2_bytes) {
  SystemInfo sys;
  GpuSummary gpu;
  gpu.name = name;
  gpu.l2_bytes = static_cast<decltype(gpu.l2_bytes)>(l2_bytes);
  sys.gpus.push_back(gpu);
  return sys;
}

Metric metric(const std::string& tag, double v, const std::string& unit) {
  return {.tag = tag, .name = tag, .unit = unit, .value = v, .headline = true, .role = MetricRole::derived};
}

const Result* row(const std::vector<Result>& rs, const std::string& quantity) {
  for (const auto& r : rs)
    if (r.artifact == "volkov08.fig2 table" && r.data.value("quantity", "") == quantity) return &r;
  return nullptr;
}

TEST(Fig2Table, RowsBesideThePaperAndTheExpectedRangeWithFlags) {
  Session session(one_gpu("NVIDIA H100 80GB HBM3", 50 * 1024 * 1024), 0, {}, nullptr);
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

TEST(Fig2Table, L2CapacityRowExplainsAnOnsetAtTwoThirdsOfTheL2) {
  // The H200 full run: half the accesses miss at 55.0 MB (flagged: 12.5% below 60 MiB), misses
  // begin after 39.9 MB (0.63 of the L2) and every access misses from 92.2 MB.
  Session session(one_gpu("NVIDIA H200", 60 * 1024 * 1024), 0, {}, nullptr);
  const Experiment* e = experiment_catalog().find("volkov08.fig2");
  ASSERT_NE(e, nullptr);
  Result cap;
  cap.experiment = e->key;
  cap.artifact = e->artifact;
  cap.status = Status::passed;
  cap.axes = {{"study", "capacity"}};
  cap.metrics = {metric("l2_capacity_bytes", 55.02e6, "B"), metric("l2_miss_onset_bytes", 39903232, "B"),
                 metric("l2_miss_onset_fraction", 39903232 / (60 * MB), ""),
                 metric("l2_all_miss_bytes", 92241536, "B")};
  cap.data["l2_capacity_bytes_interval"] = {54.3e6, 55.9e6};
  cap.data["l2_miss_onset_bytes_interval"] = {39903232, 41503616};
  cap.data["l2_all_miss_bytes_interval"] = {91353344, 92241536};
  cap.data["l2_capacity_note"] = "misses begin at ≈2/3 of the L2 (onset 0.63 × the device's L2): consistent with ...";
  Summary summary(session, *e, {cap});
  e->summarize(summary);
  const auto& out = summary.derived();
  const Result* l2 = row(out, "l2_capacity_bytes");
  ASSERT_NE(l2, nullptr);
  EXPECT_EQ(l2->find_metric("outside_expected")->value, 1.0) << "the flag stays";
  EXPECT_NE(l2->reason.find("outside the expected range"), std::string::npos) << l2->reason;
  EXPECT_NE(l2->reason.find("misses begin at ≈2/3 of the L2"), std::string::npos) << l2->reason;
  EXPECT_NE(l2->reason.find("consistent with"), std::string::npos) << l2->reason;
  const Result* onset = row(out, "l2_miss_onset_bytes");
  ASSERT_NE(onset, nullptr);
  EXPECT_EQ(onset->find_metric("measured")->value, 39903232);
  EXPECT_EQ(onset->data.at("knee_interval")[1].get<double>(), 41503616);
  ASSERT_NE(row(out, "l2_miss_onset_fraction"), nullptr);
  EXPECT_NEAR(row(out, "l2_miss_onset_fraction")->find_metric("measured")->value, 0.634, 0.001);
  const Result* all = row(out, "l2_all_miss_bytes");
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->find_metric("measured")->value, 92241536);
  // Without the note (an onset far from 2/3) the row says only what the range check says.
  cap.data.erase("l2_capacity_note");
  Summary plain(session, *e, {cap});
  e->summarize(plain);
  EXPECT_EQ(row(plain.derived(), "l2_capacity_bytes")->reason.find("2/3"), std::string::npos);
}

TEST(Fig2Table, UnknownGpuHasNoExpectedColumnsButKeepsThePaper) {
  Session session(one_gpu("Some Future GPU", 0), 0, {}, nullptr);
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
