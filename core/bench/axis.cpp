#include "core/bench/axis.hpp"

#include "core/errors.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

namespace gpufact {
namespace {

std::string trim(std::string_view s) {
  std::size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    out.push_back(trim(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start)));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

[[noreturn]] void bad_value(const AxisSpec& axis, std::string_view value, const std::string& why) {
  throw UsageError("axis '" + axis.name + "': bad value '" + std::string(value) + "' (" + why + "); allowed: " +
                   describe_allowed(axis));
}

std::int64_t parse_integer(const AxisSpec& axis, const std::string& token) {
  if (token.empty()) bad_value(axis, token, "empty");
  std::size_t used = 0;
  long double v = 0;
  try {
    v = std::stold(token, &used);
  } catch (const std::exception&) {
    bad_value(axis, token, "not a number");
  }
  std::string suffix = token.substr(used);
  long double scale = 1;
  if (!suffix.empty()) {
    if (axis.kind != AxisKind::size) bad_value(axis, token, "unit suffixes are for size axes");
    const char c = static_cast<char>(std::toupper(static_cast<unsigned char>(suffix[0])));
    if (suffix.size() > 1 && !(suffix.size() == 2 && (suffix[1] == 'B' || suffix[1] == 'b')) &&
        !(suffix.size() == 3 && suffix.substr(1) == "iB"))
      bad_value(axis, token, "unknown suffix");
    switch (c) {
      case 'B': scale = 1; break;
      case 'K': scale = 1024.0L; break;
      case 'M': scale = 1024.0L * 1024; break;
      case 'G': scale = 1024.0L * 1024 * 1024; break;
      case 'T': scale = 1024.0L * 1024 * 1024 * 1024; break;
      default: bad_value(axis, token, "unknown suffix");
    }
  }
  const long double scaled = v * scale;
  if (scaled != std::floor(scaled)) bad_value(axis, token, "not a whole number");
  if (scaled < static_cast<long double>(axis.min) || scaled > static_cast<long double>(axis.max))
    bad_value(axis, token, "out of range");
  return static_cast<std::int64_t>(scaled);
}

double parse_real(const AxisSpec& axis, const std::string& token) {
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(token, &used);
  } catch (const std::exception&) {
    bad_value(axis, token, "not a number");
  }
  if (used != token.size() || !std::isfinite(v)) bad_value(axis, token, "not a finite number");
  if (v < static_cast<double>(axis.min) || v > static_cast<double>(axis.max)) bad_value(axis, token, "out of range");
  return v;
}

void append_range(const AxisSpec& axis, const std::string& token, std::vector<AxisValue>& out) {
  const auto parts = split(token, ':');
  if (parts.size() != 3 || parts[2].size() < 2 || (parts[2][0] != '*' && parts[2][0] != '+'))
    bad_value(axis, token, "a range is lo:hi:*factor or lo:hi:+step");
  if (axis.kind == AxisKind::text) bad_value(axis, token, "ranges are for numeric axes");
  const bool geometric = parts[2][0] == '*';
  if (axis.kind == AxisKind::real) {
    const double lo = parse_real(axis, parts[0]), hi = parse_real(axis, parts[1]);
    AxisSpec step_axis = axis;  // the step is checked for being a number, not against the axis bounds
    step_axis.min = std::numeric_limits<std::int64_t>::min();
    step_axis.max = std::numeric_limits<std::int64_t>::max();
    const double step = parse_real(step_axis, parts[2].substr(1));
    if (geometric ? !(step > 1.0 && lo > 0) : !(step > 0.0)) bad_value(axis, token, "the range does not advance");
    if (lo > hi) bad_value(axis, token, "lo > hi");
    for (double v = lo; v <= hi + 1e-12 * std::fabs(hi); v = geometric ? v * step : v + step) {
      out.emplace_back(v);
      if (out.size() > 100000) bad_value(axis, token, "more than 100000 values");
    }
    return;
  }
  const std::int64_t lo = parse_integer(axis, parts[0]), hi = parse_integer(axis, parts[1]);
  AxisSpec step_axis = axis;
  step_axis.min = 1;
  const std::int64_t step = parse_integer(step_axis, parts[2].substr(1));
  if (geometric ? !(step > 1 && lo > 0) : !(step > 0)) bad_value(axis, token, "the range does not advance");
  if (lo > hi) bad_value(axis, token, "lo > hi");
  for (std::int64_t v = lo; v <= hi;) {
    out.emplace_back(v);
    if (out.size() > 100000) bad_value(axis, token, "more than 100000 values");
    if (geometric ? v > hi / step : v > hi - step) break;
    v = geometric ? v * step : v + step;
  }
}

}  // namespace

std::string axis_kind_name(AxisKind kind) {
  switch (kind) {
    case AxisKind::integer: return "integer";
    case AxisKind::size: return "size";
    case AxisKind::real: return "real";
    case AxisKind::text: return "text";
  }
  return "?";
}

std::string describe_allowed(const AxisSpec& axis) {
  std::string s;
  if (axis.kind == AxisKind::text) {
    for (const auto& c : axis.choices) s += (s.empty() ? "" : "|") + c;
    return s.empty() ? "any text" : s;
  }
  s = axis_kind_name(axis.kind);
  const bool has_min = axis.min != std::numeric_limits<std::int64_t>::min();
  const bool has_max = axis.max != std::numeric_limits<std::int64_t>::max();
  if (has_min && has_max)
    s += " in [" + std::to_string(axis.min) + ", " + std::to_string(axis.max) + "]";
  else if (has_min)
    s += " >= " + std::to_string(axis.min);
  else if (has_max)
    s += " <= " + std::to_string(axis.max);
  if (axis.kind != AxisKind::text) s += ", as a list a,b,c or a range lo:hi:*factor / lo:hi:+step";
  if (axis.kind == AxisKind::size) s += ", with optional K/M/G/T suffix";
  return s;
}

std::vector<AxisValue> parse_axis_values(const AxisSpec& axis, std::string_view text) {
  std::vector<AxisValue> out;
  if (trim(text).empty()) bad_value(axis, text, "no values");
  for (const auto& token : split(text, ',')) {
    if (token.empty()) bad_value(axis, text, "empty list element");
    if (axis.kind != AxisKind::text && token.find(':') != std::string::npos) {
      append_range(axis, token, out);
      continue;
    }
    switch (axis.kind) {
      case AxisKind::integer:
      case AxisKind::size: out.emplace_back(parse_integer(axis, token)); break;
      case AxisKind::real: out.emplace_back(parse_real(axis, token)); break;
      case AxisKind::text:
        if (!axis.choices.empty() && std::find(axis.choices.begin(), axis.choices.end(), token) == axis.choices.end())
          bad_value(axis, token, "not one of the choices");
        out.emplace_back(token);
        break;
    }
  }
  return out;
}

std::string join_axis_values(const std::vector<std::string>& values) {
  std::string out;
  for (const auto& v : values) out += (out.empty() ? "" : ",") + v;
  return out;
}

std::string format_axis_value(const AxisSpec& axis, const AxisValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  if (const auto* d = std::get_if<double>(&value)) {
    std::string s = std::to_string(*d);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  }
  const std::int64_t v = std::get<std::int64_t>(value);
  if (axis.kind == AxisKind::size && v > 0) {
    static constexpr const char* suffix[] = {"", "K", "M", "G", "T"};
    std::int64_t x = v;
    int i = 0;
    while (i < 4 && x % 1024 == 0) {
      x /= 1024;
      ++i;
    }
    return std::to_string(x) + suffix[i];
  }
  return std::to_string(v);
}

nlohmann::json to_json_value(const AxisValue& value) {
  return std::visit([](const auto& v) { return nlohmann::json(v); }, value);
}

void AxisPoint::set(const AxisSpec& spec, AxisValue value) {
  for (auto& [s, v] : values_)
    if (s->name == spec.name) {
      v = std::move(value);
      return;
    }
  values_.emplace_back(&spec, std::move(value));
}

bool AxisPoint::has(std::string_view name) const {
  return std::any_of(values_.begin(), values_.end(), [&](const auto& p) { return p.first->name == name; });
}

const AxisValue& AxisPoint::get(std::string_view name) const {
  for (const auto& [s, v] : values_)
    if (s->name == name) return v;
  throw std::logic_error("no axis '" + std::string(name) + "' in this experiment");
}

std::int64_t AxisPoint::integer(std::string_view name) const {
  const auto& v = get(name);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  throw std::logic_error("axis '" + std::string(name) + "' is not an integer axis");
}

double AxisPoint::real(std::string_view name) const {
  const auto& v = get(name);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  throw std::logic_error("axis '" + std::string(name) + "' is not numeric");
}

const std::string& AxisPoint::text(std::string_view name) const {
  const auto& v = get(name);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  throw std::logic_error("axis '" + std::string(name) + "' is not a text axis");
}

nlohmann::json AxisPoint::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [s, v] : values_) j[s->name] = to_json_value(v);
  return j;
}

std::string AxisPoint::label() const {
  std::string out;
  for (const auto& [s, v] : values_) out += (out.empty() ? "" : " ") + s->name + "=" + format_axis_value(*s, v);
  return out;
}

std::vector<AxisPoint> cartesian_product(const std::vector<AxisSpec>& axes,
                                         const std::vector<std::vector<AxisValue>>& values) {
  std::vector<AxisPoint> points(1);
  for (std::size_t a = 0; a < axes.size(); ++a) {
    std::vector<AxisPoint> next;
    next.reserve(points.size() * values[a].size());
    for (const auto& p : points)
      for (const auto& v : values[a]) {
        AxisPoint q = p;
        q.set(axes[a], v);
        next.push_back(std::move(q));
      }
    points = std::move(next);
  }
  return points;
}

}  // namespace gpufact
