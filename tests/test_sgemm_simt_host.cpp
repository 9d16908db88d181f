// Host tests of the SIMT SGEMM's host side (volkov08 §4, §4.2): the flipped-rectangle tile map,
// the tuning table (parse, nearest-shape lookup, round trip, errors), and the GEMM checks the
// experiments use (sampled componentwise error, normwise difference, untouched triangle).
#include "core/linalg/gemm_check.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/matrix_view.hpp"
#include "core/linalg/random.hpp"
#include "kernels/gemm/sgemm_simt.cuh"
#include "kernels/gemm/sgemm_simt_table.hpp"
#include "kernels/gemm/triangle_tiles.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gpufact {
namespace {

using kernels::lower_tile_of_block;
using kernels::triangle_rectangle;

TEST(TriangleTiles, FlippedRectangleCoversEveryLowerTileOnce) {
  for (std::int64_t t = 1; t <= 50; ++t) {
    const auto r = triangle_rectangle(t);
    ASSERT_EQ(r.rows * r.cols, t * (t + 1) / 2) << "T = " << t << ": the rectangle must have no idle cells";
    std::set<std::pair<std::int64_t, std::int64_t>> seen;
    for (std::int64_t id = 0; id < r.rows * r.cols; ++id) {
      const auto tile = lower_tile_of_block(id, t);
      ASSERT_GE(tile.row, tile.col) << "T = " << t << " block " << id;
      ASSERT_GE(tile.col, 0);
      ASSERT_LT(tile.row, t);
      EXPECT_TRUE(seen.insert({tile.row, tile.col}).second) << "T = " << t << " tile twice: " << tile.row << "," << tile.col;
    }
    EXPECT_EQ(static_cast<std::int64_t>(seen.size()), t * (t + 1) / 2);
  }
}

TEST(TriangleTiles, KnownMapForFourTiles) {
  // T = 4: rectangle 2 × 5; row 0 = tile row 3 (4 tiles) + tile row 0 (1 tile).
  const std::vector<std::pair<std::int64_t, std::int64_t>> expected = {{3, 0}, {3, 1}, {3, 2}, {3, 3}, {0, 0},
                                                                       {2, 0}, {2, 1}, {2, 2}, {1, 0}, {1, 1}};
  for (std::int64_t id = 0; id < 10; ++id) {
    const auto t = lower_tile_of_block(id, 4);
    EXPECT_EQ(std::make_pair(t.row, t.col), expected[static_cast<std::size_t>(id)]) << "block " << id;
  }
}

const std::vector<std::string> kKnown = {"simt_a", "simt_b", "simt_c"};

const char* kTable = R"({"kernel": "sgemm_simt", "device": "test", "source": "unit",
  "entries": [
    {"trans": "NN", "m": 4096, "n": 4096, "k": 4096, "config": "simt_a", "gflops": 50000},
    {"trans": "NN", "m": 16384, "n": 16384, "k": 16384, "config": "simt_b"},
    {"trans": "NN", "m": 16384, "n": 16384, "k": 64, "config": "simt_c"},
    {"trans": "NT", "m": 4096, "n": 4096, "k": 4096, "config": "simt_c"}
  ]})";

TEST(SgemmTuningTable, ParsesAndPicksTheNearestShape) {
  const auto t = kernels::parse_sgemm_tuning_table(kTable, "unit", kKnown);
  ASSERT_EQ(t.entries.size(), 4u);
  EXPECT_EQ(t.device, "test");
  EXPECT_DOUBLE_EQ(t.entries[0].gflops, 50000);
  using kernels::nearest_sgemm_config;
  EXPECT_EQ(nearest_sgemm_config(t, Op::N, Op::N, 4096, 4096, 4096), "simt_a");
  EXPECT_EQ(nearest_sgemm_config(t, Op::N, Op::N, 5000, 5000, 5000), "simt_a");
  EXPECT_EQ(nearest_sgemm_config(t, Op::N, Op::N, 12000, 12000, 12000), "simt_b");
  EXPECT_EQ(nearest_sgemm_config(t, Op::N, Op::N, 16384, 16384, 100), "simt_c");
  EXPECT_EQ(nearest_sgemm_config(t, Op::N, Op::T, 16384, 16384, 16384), "simt_c");  // only NT entry
  // No TN entry: the nearest over all transposes.
  EXPECT_EQ(nearest_sgemm_config(t, Op::T, Op::N, 16384, 16384, 64), "simt_c");
  EXPECT_FALSE(nearest_sgemm_config(kernels::SgemmTuningTable{}, Op::N, Op::N, 1, 1, 1).has_value());
}

TEST(SgemmTuningTable, RoundTripsThroughItsJson) {
  const auto t = kernels::parse_sgemm_tuning_table(kTable, "unit", kKnown);
  const auto again = kernels::parse_sgemm_tuning_table(kernels::sgemm_tuning_table_json(t), "round trip", kKnown);
  ASSERT_EQ(again.entries.size(), t.entries.size());
  for (std::size_t i = 0; i < t.entries.size(); ++i) {
    EXPECT_EQ(again.entries[i].trans, t.entries[i].trans);
    EXPECT_EQ(again.entries[i].m, t.entries[i].m);
    EXPECT_EQ(again.entries[i].k, t.entries[i].k);
    EXPECT_EQ(again.entries[i].config, t.entries[i].config);
  }
}

TEST(SgemmTuningTable, RejectsMalformedTables) {
  auto parse = [](const std::string& text) { return kernels::parse_sgemm_tuning_table(text, "bad.json", kKnown); };
  EXPECT_THROW(parse("{"), std::runtime_error);
  EXPECT_THROW(parse(R"({"rows": []})"), std::runtime_error);
  EXPECT_THROW(parse(R"({"entries": [{"trans": "NN", "m": 1, "n": 1, "config": "simt_a"}]})"), std::runtime_error);
  EXPECT_THROW(parse(R"({"entries": [{"trans": "TT", "m": 1, "n": 1, "k": 1, "config": "simt_a"}]})"),
               std::runtime_error);
  EXPECT_THROW(parse(R"({"entries": [{"trans": "NN", "m": 0, "n": 1, "k": 1, "config": "simt_a"}]})"),
               std::runtime_error);
  EXPECT_THROW(parse(R"({"entries": [{"trans": "NN", "m": 1, "n": 1, "k": 1, "config": "simt_zz"}]})"),
               std::runtime_error);
  try {
    parse(R"({"entries": [{"trans": "NN", "m": 1, "n": 1, "k": 1, "config": "simt_zz"}]})");
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("simt_zz"), std::string::npos);
  }
}

TEST(SgemmTuningTable, PlainLauncherFallsBackToAKnownConfig) {
  // With or without a committed table, the pick is one of the instantiated configs.
  const std::string picked = kernels::sgemm_simt_pick_config(Op::N, Op::N, 4096, 4096, 4096);
  EXPECT_FALSE(picked.empty());
  if (kernels::sgemm_simt_table_origin().empty()) {
    EXPECT_EQ(picked, "simt_128x128x16_s3");
  }
}

TEST(SgemmTuningTable, TransposedBConfigsAreKnownNames) {
  const std::vector<std::string> names = kernels::sgemm_simt_config_names();
  const std::set<std::string> set(names.begin(), names.end());
  EXPECT_EQ(set.size(), names.size());
  for (const char* name : {"simt_128x128x16_s3", "simt_128x128x32_s3", "simt_128x128x16_s3+bt", "simt_128x128x32_s3+bt"})
    EXPECT_TRUE(set.count(name)) << name;
  const std::string json = R"({"entries": [{"trans": "NN", "m": 4096, "n": 4096, "k": 4096,
                                             "config": "simt_128x128x32_s3+bt"}]})";
  const auto table = kernels::parse_sgemm_tuning_table(json, "test", names);
  EXPECT_EQ(kernels::nearest_sgemm_config(table, Op::N, Op::N, 8192, 8192, 8192).value(), "simt_128x128x32_s3+bt");
  EXPECT_EQ(kernels::sgemm_simt_config("simt_128x128x32_s3+bt").block_k, 32);
  EXPECT_EQ(kernels::sgemm_simt_config("simt_128x128x32_s3+bt").name, "simt_128x128x32_s3+bt");
  EXPECT_EQ(kernels::sgemm_simt_bt_workspace_floats(17, 5), std::size_t{20 * 5});
  EXPECT_EQ(kernels::sgemm_simt_bt_workspace_floats(0, 5), std::size_t{0});
  EXPECT_THROW(kernels::sgemm_simt_config("no_such+bt"), std::invalid_argument);
}

// C = α op(A) op(B) + β C₀ rounded from a double reference: errors far below the bound.
struct Problem {
  HostMatrix<float> a, b, c0, c;
};
Problem exact_problem(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, float beta) {
  Problem p{HostMatrix<float>(ta == Op::N ? m : k, ta == Op::N ? k : m),
            HostMatrix<float>(tb == Op::N ? k : n, tb == Op::N ? n : k), HostMatrix<float>(m, n), HostMatrix<float>(m, n)};
  fill_uniform(p.a.view(), 1);
  fill_uniform(p.b.view(), 2);
  fill_uniform(p.c0.view(), 3);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      double s = 0;
      for (std::int64_t l = 0; l < k; ++l)
        s += static_cast<double>(ta == Op::N ? p.a(i, l) : p.a(l, i)) * (tb == Op::N ? p.b(l, j) : p.b(j, l));
      p.c(i, j) = static_cast<float>(alpha * s + beta * static_cast<double>(p.c0(i, j)));
    }
  return p;
}

TEST(GemmCheck, SampledErrorIsSmallForACorrectProductAndCatchesOneWrongEntry) {
  for (auto [ta, tb] : {std::pair{Op::N, Op::N}, std::pair{Op::N, Op::T}, std::pair{Op::T, Op::N}}) {
    Problem p = exact_problem(ta, tb, 13, 11, 7, 0.5f, -2.0f);
    const double ok = sampled_gemm_error<float>(ta, tb, p.a.view(), p.b.view(), p.c0.view(), p.c.view(), 0.5f,
                                                -2.0f, 1000, 1, Written::all);
    EXPECT_LE(ok, 1.0);  // one final rounding
    p.c(5, 4) += 1e-3f;
    EXPECT_GT(sampled_gemm_error<float>(ta, tb, p.a.view(), p.b.view(), p.c0.view(), p.c.view(), 0.5f, -2.0f,
                                        1000, 1, Written::all),
              100.0);
    p.c(5, 4) = std::numeric_limits<float>::quiet_NaN();
    EXPECT_TRUE(std::isinf(sampled_gemm_error<float>(ta, tb, p.a.view(), p.b.view(), p.c0.view(), p.c.view(),
                                                     0.5f, -2.0f, 1000, 1, Written::all)));
  }
}

TEST(GemmCheck, TriangleChecksIgnoreTheOtherTriangleAndSeeItChange) {
  Problem p = exact_problem(Op::N, Op::T, 9, 9, 5, 1.0f, 1.0f);
  // Lower triangle computed, upper kept as C₀.
  for (std::int64_t j = 0; j < 9; ++j)
    for (std::int64_t i = 0; i < j; ++i) p.c(i, j) = p.c0(i, j);
  EXPECT_LE(sampled_gemm_error<float>(Op::N, Op::T, p.a.view(), p.b.view(), p.c0.view(), p.c.view(), 1.0f, 1.0f,
                                      100, 1, Written::lower),
            1.0);
  EXPECT_EQ(changed_outside<float>(p.c0.view(), p.c.view(), Written::lower), 0);
  EXPECT_EQ(changed_outside<float>(p.c0.view(), p.c.view(), Written::upper), 9 * 8 / 2);
  p.c(0, 8) = 0.0f;  // above the diagonal
  EXPECT_EQ(changed_outside<float>(p.c0.view(), p.c.view(), Written::lower), 1);
  // Sampling fewer entries than the triangle still draws only triangle entries.
  EXPECT_LE(sampled_gemm_error<float>(Op::N, Op::T, p.a.view(), p.b.view(), p.c0.view(), p.c.view(), 1.0f, 1.0f,
                                      20, 5, Written::lower),
            1.0);
}

TEST(GemmCheck, NormwiseDifference) {
  HostMatrix<float> x(4, 3), y(4, 3);
  fill_uniform(x.view(), 4);
  y = x;
  EXPECT_EQ(normwise_difference<float>(x.view(), y.view(), Written::all), 0.0);
  y(0, 2) += 1.0f;  // strictly above the diagonal
  EXPECT_GT(normwise_difference<float>(x.view(), y.view(), Written::all), 1e5);
  EXPECT_GT(normwise_difference<float>(x.view(), y.view(), Written::upper), 1e5);
  EXPECT_EQ(normwise_difference<float>(x.view(), y.view(), Written::lower), 0.0);
}

}  // namespace
}  // namespace gpufact
