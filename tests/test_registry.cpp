// The experiment registry (core/bench/registry) and the shipped catalog: stable unique keys,
// artifacts, axis value lists that parse, glob selection, and the "can it run here" check.
#include "apps/gpufact/catalog.hpp"
#include "core/bench/registry.hpp"
#include "core/bench/runner.hpp"
#include "core/errors.hpp"
#include "core/system/inventory.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace gpufact {
namespace {

std::vector<std::string> keys_of(const std::vector<const Experiment*>& v) {
  std::vector<std::string> out;
  for (const auto* e : v) out.push_back(e->key);
  return out;
}

Experiment tiny(const std::string& key) {
  Experiment e;
  e.key = key;
  e.artifact = key;
  e.axes = {{.name = "n", .kind = AxisKind::integer, .defaults = "1,2", .min = 1}};
  e.run = [](Case&) {};
  return e;
}

TEST(Catalog, HoldsTheShippedExperiments) {
  const auto& reg = experiment_catalog();
  ASSERT_NE(reg.find("host.blas"), nullptr);
  ASSERT_NE(reg.find("volkov08.bandwidth"), nullptr);
  EXPECT_EQ(reg.find("host.blas")->needs.gpus, 0);
  EXPECT_GE(reg.find("volkov08.bandwidth")->needs.gpus, 1);
  EXPECT_EQ(reg.find("no.such"), nullptr);
}

TEST(Catalog, KeysAreUniqueAndEveryExperimentIsComplete) {
  std::set<std::string> keys;
  for (const auto& e : experiment_catalog().all()) {
    SCOPED_TRACE(e.key);
    EXPECT_TRUE(keys.insert(e.key).second) << "duplicate key";
    EXPECT_FALSE(e.artifact.empty());
    EXPECT_FALSE(e.title.empty());
    EXPECT_TRUE(static_cast<bool>(e.run));
    // Keys are lowercase "paper.name" identifiers usable as globs and file names.
    EXPECT_NE(e.key.find('.'), std::string::npos);
    EXPECT_TRUE(std::all_of(e.key.begin(), e.key.end(), [](char c) {
      return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_';
    }));
    std::set<std::string> axis_names;
    for (const auto& a : e.axes) {
      SCOPED_TRACE(a.name);
      EXPECT_TRUE(axis_names.insert(a.name).second) << "duplicate axis";
      EXPECT_FALSE(a.help.empty());
      EXPECT_FALSE(parse_axis_values(a, a.defaults).empty());
      if (!a.quick.empty()) EXPECT_FALSE(parse_axis_values(a, a.quick).empty());
      if (!a.full.empty()) EXPECT_FALSE(parse_axis_values(a, a.full).empty());
      if (a.kind == AxisKind::text) EXPECT_FALSE(a.choices.empty()) << "text axes list their choices";
    }
    for (const auto& p : e.plots) {
      EXPECT_NE(e.axis(p.x), nullptr) << "plot x axis " << p.x;
      for (const auto& s : p.series) EXPECT_NE(e.axis(s), nullptr) << "plot series axis " << s;
    }
  }
  EXPECT_GE(keys.size(), 2u);
}

TEST(Catalog, CiPresetAxesExistInTheirExperiments) {
  // configs/ci.json overrides axes by name; a typo there would silently be ignored at run time.
  const auto& reg = experiment_catalog();
  EXPECT_NE(reg.find("host.blas")->axis("n"), nullptr);
  EXPECT_NE(reg.find("host.blas")->axis("threads"), nullptr);
  EXPECT_NE(reg.find("volkov08.bandwidth")->axis("bytes"), nullptr);
}

TEST(Registry, MatchGlobs) {
  const auto& reg = experiment_catalog();
  // Every volkov08 key and nothing else (the list grows as experiments land).
  const auto volkov = keys_of(reg.match({"volkov08.*"}));
  EXPECT_NE(std::find(volkov.begin(), volkov.end(), "volkov08.bandwidth"), volkov.end());
  for (const auto& k : volkov) {
    EXPECT_EQ(k.rfind("volkov08.", 0), 0u) << k;
  }
  EXPECT_EQ(keys_of(reg.match({"volkov08.bandwidth"})), std::vector<std::string>{"volkov08.bandwidth"});
  EXPECT_EQ(keys_of(reg.match({"host.blas"})), std::vector<std::string>{"host.blas"});
  EXPECT_EQ(reg.match({"*"}).size(), reg.all().size());
  // Overlapping globs select each experiment once.
  EXPECT_EQ(keys_of(reg.match({"host.*", "*.blas", "host.blas"})), std::vector<std::string>{"host.blas"});
}

TEST(Registry, UnknownGlobIsAUsageErrorNamingIt) {
  const auto& reg = experiment_catalog();
  try {
    reg.match({"host.blas", "nosuch.*"});
    FAIL() << "matched an unknown experiment";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("nosuch.*"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gpufact list"), std::string::npos) << e.what();
  }
  EXPECT_THROW(reg.match({"volkov08"}), UsageError);  // a prefix is not a glob
}

TEST(Registry, RejectsDuplicatesAndMalformedExperiments) {
  Registry reg;
  reg.add(tiny("a.one"));
  reg.add(tiny("a.two"));
  EXPECT_THROW(reg.add(tiny("a.one")), std::logic_error);
  EXPECT_EQ(reg.all().size(), 2u);

  Experiment no_run = tiny("a.three");
  no_run.run = nullptr;
  EXPECT_THROW(reg.add(no_run), std::logic_error);
  EXPECT_THROW(reg.add(tiny("")), std::logic_error);

  // A declared value list that does not parse fails at registration, not in a user's run.
  Experiment bad_axis = tiny("a.four");
  bad_axis.axes[0].quick = "0,1";  // 0 < min
  EXPECT_ANY_THROW(reg.add(bad_axis));
  EXPECT_EQ(reg.find("a.four"), nullptr);
}

TEST(Registry, AxisPointersSurviveLaterAdds) {
  // AxisPoints keep pointers to AxisSpecs, so adding experiments must not move earlier ones.
  Registry reg;
  reg.add(tiny("a.first"));
  const AxisSpec* before = reg.find("a.first")->axis("n");
  for (int i = 0; i < 100; ++i) reg.add(tiny("a.x" + std::to_string(i)));
  EXPECT_EQ(reg.find("a.first")->axis("n"), before);
}

TEST(Requirements, GpuExperimentWithoutGpuGivesTheReason) {
  SystemInfo none;
  none.gpu_unavailable = "no usable GPU: test machine";
  const auto& bw = *experiment_catalog().find("volkov08.bandwidth");
  const auto why = unmet_requirement(bw.needs, none, 0);
  ASSERT_TRUE(why.has_value());
  EXPECT_EQ(*why, "no usable GPU: test machine");

  SystemInfo silent;  // no reason recorded: still a reason, never an empty string
  const auto why2 = unmet_requirement(bw.needs, silent, 0);
  ASSERT_TRUE(why2.has_value());
  EXPECT_FALSE(why2->empty());

  const auto& blas = *experiment_catalog().find("host.blas");
  EXPECT_EQ(unmet_requirement(blas.needs, none, 0), std::nullopt);
}

TEST(Requirements, DeviceLimits) {
  SystemInfo sys;
  GpuSummary g;
  g.name = "Test GPU";
  g.cc_major = 8;
  g.cc_minor = 0;
  g.memory_bytes = std::size_t{16} << 30;
  sys.gpus.push_back(g);

  Requirements one{.gpus = 1};
  EXPECT_EQ(unmet_requirement(one, sys, 0), std::nullopt);
  const auto bad_device = unmet_requirement(one, sys, 3);
  ASSERT_TRUE(bad_device);
  EXPECT_NE(bad_device->find("device 3"), std::string::npos) << *bad_device;

  Requirements two{.gpus = 2};
  const auto few = unmet_requirement(two, sys, 0);
  ASSERT_TRUE(few);
  EXPECT_NE(few->find("found 1"), std::string::npos) << *few;

  Requirements hopper{.gpus = 1, .min_compute_capability = 90};
  const auto cc = unmet_requirement(hopper, sys, 0);
  ASSERT_TRUE(cc);
  EXPECT_NE(cc->find("9.0"), std::string::npos) << *cc;
  EXPECT_NE(cc->find("8.0"), std::string::npos) << *cc;

  Requirements big{.gpus = 1, .device_memory_bytes = std::size_t{32} << 30};
  const auto mem = unmet_requirement(big, sys, 0);
  ASSERT_TRUE(mem);
  EXPECT_NE(mem->find("32768 MiB"), std::string::npos) << *mem;

  Requirements mpi{.mpi = true};
  EXPECT_TRUE(unmet_requirement(mpi, sys, 0));
  Requirements lib{.libraries = {"cholmod"}};
  const auto nolib = unmet_requirement(lib, sys, 0);
  ASSERT_TRUE(nolib);
  EXPECT_NE(nolib->find("cholmod"), std::string::npos);
}

TEST(PrintList, TextNamesEveryExperimentAndAxis) {
  std::ostringstream out;
  print_list(experiment_catalog(), out, false);
  const std::string text = out.str();
  for (const auto& e : experiment_catalog().all()) {
    EXPECT_NE(text.find(e.key), std::string::npos) << e.key;
    EXPECT_NE(text.find(e.artifact), std::string::npos) << e.artifact;
    for (const auto& a : e.axes) EXPECT_NE(text.find("-a " + a.name + "="), std::string::npos) << a.name;
  }
  EXPECT_NE(text.find("CPU only"), std::string::npos);
  EXPECT_NE(text.find("1 GPU"), std::string::npos);
}

TEST(PrintList, JsonIsTheRegistry) {
  std::ostringstream out;
  print_list(experiment_catalog(), out, true);
  const auto j = nlohmann::json::parse(out.str());
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), experiment_catalog().all().size());
  for (const auto& e : experiment_catalog().all()) {
    const auto it = std::find_if(j.begin(), j.end(), [&](const auto& x) { return x.at("key") == e.key; });
    ASSERT_NE(it, j.end()) << e.key;
    EXPECT_EQ((*it)["artifact"], e.artifact);
    EXPECT_EQ((*it)["needs"]["gpus"], e.needs.gpus);
    ASSERT_EQ((*it)["axes"].size(), e.axes.size());
    for (std::size_t i = 0; i < e.axes.size(); ++i) {
      EXPECT_EQ((*it)["axes"][i]["name"], e.axes[i].name);
      EXPECT_EQ((*it)["axes"][i]["defaults"], e.axes[i].defaults);
      // quick/full fall back to the defaults, so the JSON alone says what each preset runs.
      EXPECT_FALSE((*it)["axes"][i]["quick"].get<std::string>().empty());
      EXPECT_FALSE((*it)["axes"][i]["full"].get<std::string>().empty());
    }
  }
}

}  // namespace
}  // namespace gpufact
