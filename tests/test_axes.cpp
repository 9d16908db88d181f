// Axis value parsing and formatting (core/bench/axis), the cartesian product of axes, and run
// presets (core/bench/preset): the -a syntax and configs/*.json must mean the same thing.
#include "core/bench/axis.hpp"
#include "core/bench/preset.hpp"
#include "core/errors.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

namespace gpufact {
namespace {

AxisSpec integer_axis(std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                      std::int64_t hi = std::numeric_limits<std::int64_t>::max()) {
  return {.name = "n", .kind = AxisKind::integer, .help = "order", .defaults = "1", .min = lo, .max = hi};
}
AxisSpec size_axis() { return {.name = "bytes", .kind = AxisKind::size, .defaults = "4K", .min = 4}; }
AxisSpec real_axis() { return {.name = "alpha", .kind = AxisKind::real, .defaults = "1"}; }
AxisSpec text_axis() {
  return {.name = "routine", .kind = AxisKind::text, .defaults = "gemm", .choices = {"gemm", "getrf", "potrf"}};
}

std::vector<std::int64_t> ints(const std::vector<AxisValue>& v) {
  std::vector<std::int64_t> out;
  for (const auto& x : v) out.push_back(std::get<std::int64_t>(x));
  return out;
}
std::vector<double> reals(const std::vector<AxisValue>& v) {
  std::vector<double> out;
  for (const auto& x : v) out.push_back(std::get<double>(x));
  return out;
}

// The UsageError's message, or a failure when parsing succeeds or throws something else.
std::string usage_error(const AxisSpec& axis, const std::string& text) {
  try {
    parse_axis_values(axis, text);
  } catch (const UsageError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "'" << text << "' threw a non-UsageError: " << e.what();
    return {};
  }
  ADD_FAILURE() << "'" << text << "' parsed without error";
  return {};
}

constexpr std::int64_t K = 1024, M = K * K, G = M * K, T = G * K;

TEST(AxisParse, List) {
  EXPECT_EQ(ints(parse_axis_values(integer_axis(), "1024,2048,4096")), (std::vector<std::int64_t>{1024, 2048, 4096}));
  EXPECT_EQ(ints(parse_axis_values(integer_axis(), " 7 , -3 ")), (std::vector<std::int64_t>{7, -3}));
  EXPECT_EQ(ints(parse_axis_values(integer_axis(), "5")), (std::vector<std::int64_t>{5}));
}

TEST(AxisParse, GeometricRangeIncludesHiWhenReached) {
  EXPECT_EQ(ints(parse_axis_values(integer_axis(), "1024:16384:*2")),
            (std::vector<std::int64_t>{1024, 2048, 4096, 8192, 16384}));
  EXPECT_EQ(ints(parse_axis_values(integer_axis(), "1000:20000:*4")), (std::vector<std::int64_t>{1000, 4000, 16000}));
  EXPECT_EQ(ints(parse_axis_values(integer_axis(), "3:3:*2")), (std::vector<std::int64_t>{3}));
}

TEST(AxisParse, ArithmeticRange) {
  EXPECT_EQ(ints(parse_axis_values(integer_axis(), "0:128:+32")), (std::vector<std::int64_t>{0, 32, 64, 96, 128}));
  EXPECT_EQ(ints(parse_axis_values(integer_axis(), "1:10:+4")), (std::vector<std::int64_t>{1, 5, 9}));
}

TEST(AxisParse, RangesAndListsMix) {
  EXPECT_EQ(ints(parse_axis_values(integer_axis(), "1,8:32:*2,100")), (std::vector<std::int64_t>{1, 8, 16, 32, 100}));
}

TEST(AxisParse, RangeNearInt64MaxDoesNotOverflow) {
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  const std::string top = std::to_string(max);
  EXPECT_EQ(ints(parse_axis_values(integer_axis(), std::to_string(max / 2) + ":" + top + ":*2")),
            (std::vector<std::int64_t>{max / 2, max / 2 * 2}));
  EXPECT_EQ(ints(parse_axis_values(integer_axis(), std::to_string(max - 3) + ":" + top + ":+2")),
            (std::vector<std::int64_t>{max - 3, max - 1}));
  EXPECT_EQ(ints(parse_axis_values(integer_axis(), top + ":" + top + ":+1000")), (std::vector<std::int64_t>{max}));
}

TEST(AxisParse, SizeSuffixesArePowersOf1024) {
  EXPECT_EQ(ints(parse_axis_values(size_axis(), "4K,64M,1G,2T")), (std::vector<std::int64_t>{4 * K, 64 * M, G, 2 * T}));
  EXPECT_EQ(ints(parse_axis_values(size_axis(), "4k,1KB,1KiB,100B,100")), (std::vector<std::int64_t>{4 * K, K, K, 100, 100}));
  EXPECT_EQ(ints(parse_axis_values(size_axis(), "1.5K")), (std::vector<std::int64_t>{1536}));
  EXPECT_EQ(ints(parse_axis_values(size_axis(), "4K:64K:*4")), (std::vector<std::int64_t>{4 * K, 16 * K, 64 * K}));
  EXPECT_EQ(ints(parse_axis_values(size_axis(), "1M:3M:+1M")), (std::vector<std::int64_t>{M, 2 * M, 3 * M}));
}

TEST(AxisParse, Reals) {
  EXPECT_EQ(reals(parse_axis_values(real_axis(), "0.5,1e-3,-2")), (std::vector<double>{0.5, 1e-3, -2.0}));
  EXPECT_EQ(reals(parse_axis_values(real_axis(), "0.5:2:+0.5")), (std::vector<double>{0.5, 1.0, 1.5, 2.0}));
  EXPECT_EQ(reals(parse_axis_values(real_axis(), "1:8:*2")), (std::vector<double>{1, 2, 4, 8}));
  // hi is included for negative bounds too.
  EXPECT_EQ(reals(parse_axis_values(real_axis(), "-2:-1:+0.5")), (std::vector<double>{-2.0, -1.5, -1.0}));
  EXPECT_EQ(reals(parse_axis_values(real_axis(), "0.1:0.3:+0.1")).size(), 3u);
}

TEST(AxisParse, TextChoices) {
  const auto v = parse_axis_values(text_axis(), "potrf,gemm");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(std::get<std::string>(v[0]), "potrf");
  EXPECT_EQ(std::get<std::string>(v[1]), "gemm");
  AxisSpec free_text{.name = "label", .kind = AxisKind::text, .defaults = "x"};
  EXPECT_EQ(std::get<std::string>(parse_axis_values(free_text, "anything")[0]), "anything");
}

TEST(AxisErrors, OutOfBoundsNamesAxisAndRange) {
  const auto axis = integer_axis(1, 100);
  for (const char* bad : {"0", "101", "-1", "50,200", "1:1000:*2", "1e30"}) {
    const auto msg = usage_error(axis, bad);
    EXPECT_NE(msg.find("axis 'n'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[1, 100]"), std::string::npos) << msg;
  }
  // The size axis has only a lower bound.
  const auto msg = usage_error(size_axis(), "2");
  EXPECT_NE(msg.find("axis 'bytes'"), std::string::npos) << msg;
  EXPECT_NE(msg.find(">= 4"), std::string::npos) << msg;
  EXPECT_NE(msg.find("K/M/G/T"), std::string::npos) << msg;
}

TEST(AxisErrors, ChoicesAreListed) {
  const auto msg = usage_error(text_axis(), "gemm,trsm");
  EXPECT_NE(msg.find("axis 'routine'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("'trsm'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("gemm|getrf|potrf"), std::string::npos) << msg;
}

TEST(AxisErrors, Malformed) {
  const auto n = integer_axis(), bytes = size_axis(), alpha = real_axis();
  for (const char* bad : {"", "  ", "abc", "1,,2", "1,", "12K", "1.5", "nan", "1:10", "1:10:2", "1:10:*", "10:1:+1",
                          "1:10:+0", "1:10:*1", "0:10:*2", "1:10:+-1", "1:x:+1", "1:1000000000:+1"}) {
    const auto msg = usage_error(n, bad);
    EXPECT_NE(msg.find("axis 'n'"), std::string::npos) << "'" << bad << "': " << msg;
  }
  for (const char* bad : {"4X", "4KX", "4Kbytes", "1.0001K", "4K:1K:*2", "-4K"}) {
    const auto msg = usage_error(bytes, bad);
    EXPECT_NE(msg.find("axis 'bytes'"), std::string::npos) << "'" << bad << "': " << msg;
  }
  for (const char* bad : {"x", "1.5e", "inf", "nan", "1:2", "0:1:+0", "0:1:+abc", "1:4:*x", "0:4:*2", "1:2:*1",
                          "4:1:*2", "2:1:+0.5"}) {
    const auto msg = usage_error(alpha, bad);
    EXPECT_NE(msg.find("axis 'alpha'"), std::string::npos) << "'" << bad << "': " << msg;
  }
}

TEST(AxisErrors, RangesAreCapped) {
  // A range that would allocate millions of points is refused, for integer and real axes alike.
  EXPECT_NE(usage_error(integer_axis(), "1:100000000:+1").find("100000"), std::string::npos);
  EXPECT_NE(usage_error(real_axis(), "0:1:+1e-9").find("100000"), std::string::npos);
}

TEST(AxisFormat, SizesUseTheLargestExactSuffix) {
  const auto bytes = size_axis();
  EXPECT_EQ(format_axis_value(bytes, AxisValue{std::int64_t{64 * M}}), "64M");
  EXPECT_EQ(format_axis_value(bytes, AxisValue{std::int64_t{4 * K}}), "4K");
  EXPECT_EQ(format_axis_value(bytes, AxisValue{std::int64_t{G}}), "1G");
  EXPECT_EQ(format_axis_value(bytes, AxisValue{std::int64_t{3 * T}}), "3T");
  EXPECT_EQ(format_axis_value(bytes, AxisValue{std::int64_t{2048 * T}}), "2048T");
  EXPECT_EQ(format_axis_value(bytes, AxisValue{std::int64_t{1536}}), "1536");
  EXPECT_EQ(format_axis_value(bytes, AxisValue{std::int64_t{1000}}), "1000");
  EXPECT_EQ(format_axis_value(bytes, AxisValue{std::int64_t{M + K}}), "1025K");
  // Integer axes never get suffixes.
  EXPECT_EQ(format_axis_value(integer_axis(), AxisValue{std::int64_t{1024}}), "1024");
  EXPECT_EQ(format_axis_value(real_axis(), AxisValue{0.5}), "0.5");
  EXPECT_EQ(format_axis_value(real_axis(), AxisValue{2.0}), "2");
  EXPECT_EQ(format_axis_value(text_axis(), AxisValue{std::string("getrf")}), "getrf");
}

TEST(AxisFormat, FormattedSizesParseBack) {
  const auto bytes = size_axis();
  for (std::int64_t v : {std::int64_t{4}, std::int64_t{1000}, 3 * K, 5 * M + 7, 64 * M, 7 * G, T}) {
    const auto text = format_axis_value(bytes, AxisValue{v});
    EXPECT_EQ(ints(parse_axis_values(bytes, text)), std::vector<std::int64_t>{v}) << text;
  }
}

TEST(AxisPoints, CartesianProductFirstAxisSlowest) {
  const std::vector<AxisSpec> axes{integer_axis(), text_axis()};
  const std::vector<std::vector<AxisValue>> values{parse_axis_values(axes[0], "1,2"),
                                                   parse_axis_values(axes[1], "gemm,getrf,potrf")};
  const auto points = cartesian_product(axes, values);
  ASSERT_EQ(points.size(), 6u);
  const std::vector<std::string> expected{"n=1 routine=gemm", "n=1 routine=getrf", "n=1 routine=potrf",
                                          "n=2 routine=gemm", "n=2 routine=getrf", "n=2 routine=potrf"};
  for (std::size_t i = 0; i < points.size(); ++i) EXPECT_EQ(points[i].label(), expected[i]);
  EXPECT_EQ(points[4].integer("n"), 2);
  EXPECT_EQ(points[4].text("routine"), "getrf");
  EXPECT_DOUBLE_EQ(points[4].real("n"), 2.0);
  EXPECT_EQ(points[4].to_json(), (nlohmann::json{{"n", 2}, {"routine", "getrf"}}));
  EXPECT_TRUE(points[0].has("routine"));
  EXPECT_FALSE(points[0].has("bytes"));
  EXPECT_THROW(points[0].integer("routine"), std::logic_error);
  EXPECT_THROW(points[0].text("nosuch"), std::logic_error);
}

TEST(AxisPoints, SizeLabelsUseSuffixes) {
  const std::vector<AxisSpec> axes{size_axis()};
  const auto points = cartesian_product(axes, {parse_axis_values(axes[0], "64M")});
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].label(), "bytes=64M");
  EXPECT_EQ(points[0].to_json()["bytes"], 64 * M);
}

TEST(AxisPoints, EmptyAxisListGivesOnePoint) {
  EXPECT_EQ(cartesian_product({}, {}).size(), 1u);
}

// --- presets ---------------------------------------------------------------------------------

TEST(Preset, ParsesEveryField) {
  const auto p = parse_preset(R"({
    "name": "mine", "description": "d", "axis_set": "full", "experiments": ["host.*", "volkov08.bandwidth"],
    "measurement": {"repetitions": 7, "min_time_s": 0.25, "warmup_s": 0.5},
    "axes": {"host.blas": {"n": "64,128", "threads": "1"}}
  })",
                              "mine.json");
  EXPECT_EQ(p.name, "mine");
  EXPECT_EQ(p.description, "d");
  EXPECT_EQ(p.axis_set, "full");
  EXPECT_EQ(p.experiments, (std::vector<std::string>{"host.*", "volkov08.bandwidth"}));
  EXPECT_EQ(p.measure.repetitions, 7);
  EXPECT_DOUBLE_EQ(p.measure.min_time_s, 0.25);
  EXPECT_DOUBLE_EQ(p.measure.warmup_s, 0.5);
  ASSERT_EQ(p.axes.size(), 1u);
  EXPECT_EQ(p.axes[0].first, "host.blas");
  EXPECT_EQ(p.axes[0].second.at("n"), "64,128");
  EXPECT_EQ(p.axes[0].second.at("threads"), "1");
}

TEST(Preset, DefaultsWhenFieldsAreAbsent) {
  const auto p = parse_preset("{}", "/some/dir/nightly.json");
  EXPECT_EQ(p.name, "nightly");
  EXPECT_EQ(p.axis_set, "defaults");
  EXPECT_EQ(p.experiments, std::vector<std::string>{"*"});
  EXPECT_TRUE(p.axes.empty());
}

TEST(Preset, BadInputIsAUsageErrorNamingTheOrigin) {
  for (const char* bad : {"{", "not json", R"({"axis_set": "medium"})", R"({"experiments": 3})",
                          R"({"measurement": {"repetitions": 0}})", R"({"measurement": {"min_time_s": -1}})",
                          R"({"axes": {"host.blas": {"n": 64}}})", R"({"name": 5})"}) {
    try {
      parse_preset(bad, "broken.json");
      ADD_FAILURE() << bad << " parsed";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("broken.json"), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << bad << " threw a non-UsageError: " << e.what();
    }
  }
  try {
    parse_preset(R"({"axis_set": "medium"})", "p.json");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("quick, full or defaults"), std::string::npos) << e.what();
  }
}

TEST(Preset, BuiltInPresetsLoadByName) {
  const auto quick = load_preset("quick");
  EXPECT_EQ(quick.name, "quick");
  EXPECT_EQ(quick.axis_set, "quick");
  const auto ci = load_preset("ci");
  EXPECT_EQ(ci.name, "ci");
  EXPECT_GE(ci.measure.repetitions, 3);  // compare needs >= 3 samples for the U test
  const auto full = load_preset("full");
  EXPECT_EQ(full.axis_set, "full");
}

TEST(Preset, LoadsAFilePath) {
  const auto dir = std::filesystem::temp_directory_path() / ("gpufact_preset_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "tiny.json";
  std::ofstream(file) << R"({"axis_set": "quick", "experiments": ["host.blas"]})";
  const auto p = load_preset(file.string());
  EXPECT_EQ(p.name, "tiny");
  EXPECT_EQ(p.experiments, std::vector<std::string>{"host.blas"});
  std::filesystem::remove_all(dir);
  EXPECT_THROW(load_preset(file.string()), UsageError);
}

TEST(Preset, UnknownNameListsKnownPresets) {
  try {
    load_preset("nosuchpreset");
    FAIL() << "loaded an unknown preset";
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("nosuchpreset"), std::string::npos) << msg;
    for (const char* known : {"quick", "full", "ci"}) EXPECT_NE(msg.find(known), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace gpufact
