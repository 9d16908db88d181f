#include "microbench/memory/change_points.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>

namespace gpufact::microbench {
namespace {

double median_copy(std::vector<double> v) {
  if (v.empty()) return 0.0;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return 0.5 * (*mid + *std::max_element(v.begin(), mid));
}

std::vector<double> log_of(const std::vector<double>& y) {
  std::vector<double> l(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!(y[i] > 0) || !std::isfinite(y[i])) throw std::invalid_argument("change points: y must be finite and > 0");
    l[i] = std::log(y[i]);
  }
  return l;
}

std::vector<double> median3(const std::vector<double>& v) {
  if (v.size() < 3) return v;
  std::vector<double> out(v);
  for (std::size_t i = 1; i + 1 < v.size(); ++i) {
    double a = v[i - 1], b = v[i], c = v[i + 1];
    out[i] = std::max(std::min(a, b), std::min(std::max(a, b), c));
  }
  return out;
}

Segment describe(const std::vector<double>& y, std::size_t b, std::size_t e) {
  Segment s;
  s.begin = b;
  s.end = e;
  std::vector<double> part(y.begin() + static_cast<std::ptrdiff_t>(b), y.begin() + static_cast<std::ptrdiff_t>(e));
  s.level = median_copy(part);
  double sum = 0;
  for (double v : part) sum += v;
  s.mean = sum / static_cast<double>(part.size());
  double var = 0;
  for (double v : part) var += (v - s.mean) * (v - s.mean);
  s.stddev = part.size() > 1 ? std::sqrt(var / static_cast<double>(part.size() - 1)) : 0.0;
  return s;
}

}  // namespace

double merge_threshold(const SegmentOptions& opt, double sigma) { return std::max(opt.merge_relative, 3.0 * sigma); }

double robust_log_noise(const std::vector<double>& y) {
  if (y.size() < 3) return 0.0;
  const auto l = log_of(y);
  std::vector<double> d;
  for (std::size_t i = 1; i < l.size(); ++i) d.push_back(std::fabs(l[i] - l[i - 1]));
  // |difference of two N(0, σ²)| has median 0.6745·√2·σ.
  return median_copy(d) / (0.6745 * std::sqrt(2.0));
}

std::vector<Segment> segment_curve(const std::vector<double>& y, const SegmentOptions& opt) {
  const std::size_t n = y.size();
  if (n == 0) return {};
  std::vector<double> l = log_of(y);
  if (opt.median_filter) l = median3(l);
  // Noise from the raw curve (the filter would hide it), floored.
  const double sigma = std::max(robust_log_noise(y), opt.relative_noise_floor);
  const double beta = opt.penalty_scale * sigma * sigma * std::log(std::max<double>(static_cast<double>(n), 2.0));

  // Optimal partitioning: F[t] = min_s F[s] + SSE(s, t) + β, SSE from prefix sums.
  std::vector<double> s1(n + 1, 0.0), s2(n + 1, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    s1[i + 1] = s1[i] + l[i];
    s2[i + 1] = s2[i] + l[i] * l[i];
  }
  auto sse = [&](std::size_t b, std::size_t e) {
    const double m = static_cast<double>(e - b), s = s1[e] - s1[b];
    return std::max(0.0, (s2[e] - s2[b]) - s * s / m);
  };
  std::vector<double> f(n + 1, std::numeric_limits<double>::infinity());
  std::vector<std::size_t> prev(n + 1, 0);
  f[0] = -beta;
  for (std::size_t t = 1; t <= n; ++t)
    for (std::size_t s = 0; s < t; ++s) {
      const double v = f[s] + sse(s, t) + beta;
      if (v < f[t]) {
        f[t] = v;
        prev[t] = s;
      }
    }
  std::vector<std::size_t> cuts;
  for (std::size_t t = n; t > 0; t = prev[t]) cuts.push_back(t);
  std::reverse(cuts.begin(), cuts.end());

  std::vector<Segment> segs;
  std::size_t b = 0;
  for (std::size_t e : cuts) {
    segs.push_back(describe(y, b, e));
    b = e;
  }
  // Merge neighbours whose levels differ by less than merge_relative (or three noise σ: a
  // difference the noise could make), closest pair first.
  for (;;) {
    std::size_t best = segs.size();
    double best_gap = merge_threshold(opt, sigma);
    for (std::size_t i = 0; i + 1 < segs.size(); ++i) {
      const double a = segs[i].level, c = segs[i + 1].level;
      const double gap = std::fabs(a - c) / std::min(a, c);
      if (gap < best_gap) {
        best_gap = gap;
        best = i;
      }
    }
    if (best == segs.size()) break;
    segs[best] = describe(y, segs[best].begin, segs[best + 1].end);
    segs.erase(segs.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  return segs;
}

StepCurve find_steps(const std::vector<double>& x, const std::vector<double>& y, const SegmentOptions& opt,
                     std::size_t min_plateau_points) {
  if (x.size() != y.size()) throw std::invalid_argument("find_steps: x and y differ in length");
  for (std::size_t i = 1; i < x.size(); ++i)
    if (!(x[i] > x[i - 1])) throw std::invalid_argument("find_steps: x must increase");
  StepCurve c;
  c.noise = std::max(robust_log_noise(y), opt.relative_noise_floor);
  c.segments = segment_curve(y, opt);
  for (const auto& s : c.segments) {
    if (s.size() < min_plateau_points) continue;
    Level lv;
    lv.x_first = x[s.begin];
    lv.x_last = x[s.end - 1];
    lv.level = s.level;
    lv.mean = s.mean;
    lv.stddev = s.stddev;
    lv.points = s.size();
    c.plateaus.push_back(lv);
  }
  // Consecutive plateaus that are close after transitions were dropped are one level.
  for (std::size_t i = 0; i + 1 < c.plateaus.size();) {
    auto& a = c.plateaus[i];
    const auto& b = c.plateaus[i + 1];
    if (std::fabs(a.level - b.level) / std::min(a.level, b.level) < merge_threshold(opt, c.noise)) {
      a.x_last = b.x_last;
      a.points += b.points;
      a.level = 0.5 * (a.level + b.level);
      c.plateaus.erase(c.plateaus.begin() + static_cast<std::ptrdiff_t>(i) + 1);
    } else {
      ++i;
    }
  }
  for (std::size_t i = 0; i + 1 < c.plateaus.size(); ++i)
    c.knees.push_back({.x_below = c.plateaus[i].x_last, .x_above = c.plateaus[i + 1].x_first,
                       .from = c.plateaus[i].level, .to = c.plateaus[i + 1].level, .plateau = i});
  return c;
}

std::vector<Cluster> cluster_values(std::vector<double> values, double min_relative_gap, double min_fraction) {
  std::vector<Cluster> out;
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  std::size_t b = 0;
  auto close = [&](std::size_t e) {
    std::vector<double> part(values.begin() + static_cast<std::ptrdiff_t>(b), values.begin() + static_cast<std::ptrdiff_t>(e));
    Cluster c;
    c.count = part.size();
    c.fraction = static_cast<double>(part.size()) / static_cast<double>(values.size());
    c.min = part.front();
    c.max = part.back();
    c.median = median_copy(part);
    double sum = 0;
    for (double v : part) sum += v;
    c.mean = sum / static_cast<double>(part.size());
    double var = 0;
    for (double v : part) var += (v - c.mean) * (v - c.mean);
    c.stddev = part.size() > 1 ? std::sqrt(var / static_cast<double>(part.size() - 1)) : 0.0;
    c.outlier = c.fraction < min_fraction;
    out.push_back(c);
  };
  for (std::size_t i = 1; i < values.size(); ++i)
    if (values[i] - values[i - 1] > min_relative_gap * std::max(std::fabs(values[i - 1]), 1e-300)) {
      close(i);
      b = i;
    }
  close(values.size());
  return out;
}

double slow_access_period(const std::vector<double>& latency, double threshold, double stride_bytes) {
  std::vector<std::size_t> slow;
  for (std::size_t i = 0; i < latency.size(); ++i)
    if (latency[i] > threshold) slow.push_back(i);
  if (slow.size() < 3) return 0.0;
  std::map<std::size_t, std::size_t> spacing;
  for (std::size_t i = 1; i < slow.size(); ++i) ++spacing[slow[i] - slow[i - 1]];
  std::size_t best = 0, best_count = 0;
  for (const auto& [d, n] : spacing)
    if (n > best_count) {
      best = d;
      best_count = n;
    }
  return static_cast<double>(best) * stride_bytes;
}

}  // namespace gpufact::microbench
