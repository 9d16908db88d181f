// Typed parameter axes (STYLE.md 3–4). Values are written the same way everywhere: in code, in
// presets (configs/*.json) and on the command line (-a name=values):
//   1024,2048,4096        a list
//   1024:16384:*2         a geometric range (lo:hi:*factor), hi included when reached
//   0:128:+32             an arithmetic range (lo:hi:+step)
//   4K,64M,1G             size suffixes K, M, G, T (powers of 1024) on size axes
//   s,d                   text values, checked against the axis's choices
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace gpufact {

enum class AxisKind { integer, size, real, text };

using AxisValue = std::variant<std::int64_t, double, std::string>;

struct AxisSpec {
  std::string name;
  AxisKind kind = AxisKind::integer;
  std::string help;
  std::string defaults;               // values used when no preset or override names the axis
  std::string quick;                  // the quick preset's values (empty: defaults)
  std::string full;                   // the full preset's values (empty: defaults)
  std::vector<std::string> choices;   // text axes: the allowed values
  std::int64_t min = std::numeric_limits<std::int64_t>::min();  // integer/size axes: bounds
  std::int64_t max = std::numeric_limits<std::int64_t>::max();
};

// Parses `text` for `axis`; throws UsageError naming the axis and what it allows.
std::vector<AxisValue> parse_axis_values(const AxisSpec& axis, std::string_view text);

// "1024", "64M" (sizes, when exact), "0.5", "s".
std::string format_axis_value(const AxisSpec& axis, const AxisValue& value);
// Values in the -a syntax: "a,b,c" (an axis's defaults built from a table of names).
std::string join_axis_values(const std::vector<std::string>& values);
std::string axis_kind_name(AxisKind kind);
std::string describe_allowed(const AxisSpec& axis);
nlohmann::json to_json_value(const AxisValue& value);

// One point of an experiment's parameter space, in axis declaration order.
class AxisPoint {
 public:
  void set(const AxisSpec& spec, AxisValue value);
  std::int64_t integer(std::string_view name) const;
  double real(std::string_view name) const;
  const std::string& text(std::string_view name) const;
  bool has(std::string_view name) const;
  nlohmann::json to_json() const;
  std::string label() const;  // "n=1024 precision=s"

 private:
  const AxisValue& get(std::string_view name) const;
  std::vector<std::pair<const AxisSpec*, AxisValue>> values_;
};

// The cartesian product of per-axis value lists, first axis varying slowest.
std::vector<AxisPoint> cartesian_product(const std::vector<AxisSpec>& axes,
                                         const std::vector<std::vector<AxisValue>>& values);

}  // namespace gpufact
