// Measurement helpers that need no GPU: rotating input sets and cache-state names.
#include "core/bench/measure.hpp"
#include "core/bench/rotation.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

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

}  // namespace
}  // namespace gpufact
