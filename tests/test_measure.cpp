// Measurement helpers that need no GPU: rotating input sets, cache-state names, and how
// Case::measure sizes repetitions (host timer).
#include "core/bench/case.hpp"
#include "core/bench/measure.hpp"
#include "core/bench/registry.hpp"
#include "core/bench/rotation.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

namespace gpufact {
namespace {

constexpr std::size_t MiB = std::size_t{1} << 20;

TEST(Rotation, TouchesMoreThanTwiceTheL2BeforeReuse) {
  const std::size_t l2 = 50 * MiB;
  for (std::size_t bytes : {4 * MiB, 7 * MiB, 33 * MiB, 100 * MiB}) {
    const std::size_t sets = rotation_count(bytes, l2);
    EXPECT_GT(sets * bytes, 2 * l2) << bytes;
    EXPECT_LE((sets - 1) * bytes, 2 * l2) << "one set fewer would already do, bytes " << bytes;
  }
}

TEST(Rotation, OneSetWhenASetAloneExceedsTwiceTheL2) {
  EXPECT_EQ(rotation_count(200 * MiB, 50 * MiB), 1u);
  EXPECT_EQ(rotation_count(0, 50 * MiB), 1u);
}

TEST(Rotation, CappedForTinySets) {
  EXPECT_EQ(rotation_count(4096, 60 * MiB), 256u);
  EXPECT_EQ(rotation_count(4096, 60 * MiB, 8), 8u);
}

TEST(CacheState, NamesParseAndBadOnesAreRejected) {
  EXPECT_EQ(cache_state_from("hot"), CacheState::hot);
  EXPECT_EQ(cache_state_from("cold"), CacheState::cold);
  EXPECT_EQ(cache_state_from("rotate"), CacheState::rotate);
  EXPECT_THROW(cache_state_from("warm"), std::invalid_argument);
}

// Spins for `seconds` (a sleep may oversleep by far more than the body's length).
void spin(double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
  }
}

struct HostMeasurement {
  Experiment experiment{.key = "test.measure", .artifact = "test.measure"};
  Result result;
  double wall_s = 0;
};

HostMeasurement measure_on_host(const MeasureOptions& options, const MeasureSpec& spec) {
  HostMeasurement h;
  Session session(SystemInfo{}, 0, options, nullptr);
  Case c(session, h.experiment, AxisPoint{}, h.result);
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_TRUE(c.measure(spec));
  h.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return h;
}

TEST(Measure, UntimedSetupDoesNotStretchRepetitions) {
  // 20 µs timed after 1 ms untimed: by timed time alone, 20 ms repetitions would take 1 s each.
  MeasureSpec spec;
  spec.name = "t";
  spec.timer = Timer::host_wall;
  spec.setup = [](std::size_t) { spin(1e-3); };
  spec.body = [](std::size_t) { spin(20e-6); };
  const auto h = measure_on_host({.repetitions = 3, .min_time_s = 0.02, .warmup_s = 0.01}, spec);
  EXPECT_LT(h.wall_s, 0.6) << "repetitions last about min_time of wall time";
  const Metric* t = h.result.find_metric("t/time");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->samples.size(), 3u);
  EXPECT_GT(t->value, 15e-6);
  EXPECT_LT(t->value, 1e-3) << "the setup is not timed";
  for (const char* k : {"median", "q1", "q3", "spread", "cv"}) EXPECT_EQ(t->stats.count(k), 1u) << k;
}

TEST(Measure, MinRepetitionsAndMaxMinTime) {
  MeasureSpec spec;
  spec.name = "t";
  spec.timer = Timer::host_wall;
  spec.body = [](std::size_t) { spin(100e-6); };
  spec.min_repetitions = 7;
  spec.max_min_time_s = 0.005;
  // The preset asks for 2 repetitions of 1 s: 7 of at most about 5 ms come out.
  const auto h = measure_on_host({.repetitions = 2, .min_time_s = 1.0, .warmup_s = 0.0}, spec);
  const Metric* t = h.result.find_metric("t/time");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->samples.size(), 7u);
  EXPECT_LT(h.wall_s, 1.0);
}

}  // namespace
}  // namespace gpufact
