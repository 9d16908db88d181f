#include "microbench/launch/difference_method.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gpufact::microbench {
namespace {

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

double stddev_of(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / static_cast<double>(v.size() - 1));
}

// The spreads of T(few) and T(many) carried to the difference, relative to d.value.
void propagate_spreads(DifferenceEstimate& d, const std::vector<double>& t_few, const std::vector<double>& t_many,
                       double units) {
  const double sd_few = stddev_of(t_few), sd_many = stddev_of(t_many);
  d.propagated_cv = d.value != 0 ? std::sqrt(sd_few * sd_few + sd_many * sd_many) / units / std::fabs(d.value) : 0.0;
  const double h_few = half_iqr(t_few), h_many = half_iqr(t_many);
  d.propagated_spread = d.value != 0 ? std::sqrt(h_few * h_few + h_many * h_many) / units / std::fabs(d.value) : 0.0;
}

}  // namespace

DifferenceEstimate difference_per_unit(const std::vector<double>& t_few, const std::vector<double>& t_many,
                                       double few, double many) {
  if (!(many > few)) throw std::invalid_argument("difference method: the larger count must exceed the smaller");
  if (t_few.empty() || t_many.empty()) throw std::invalid_argument("difference method: no samples");
  const double units = many - few;
  DifferenceEstimate d;
  d.value = (median_of(t_many) - median_of(t_few)) / units;
  const std::size_t pairs = std::min(t_few.size(), t_many.size());
  for (std::size_t i = 0; i < pairs; ++i) d.samples.push_back((t_many[i] - t_few[i]) / units);
  d.mean = mean_of(d.samples);
  d.stddev = stddev_of(d.samples);
  d.min = *std::min_element(d.samples.begin(), d.samples.end());
  d.max = *std::max_element(d.samples.begin(), d.samples.end());
  propagate_spreads(d, t_few, t_many, units);
  d.spread = d.propagated_spread;
  return d;
}

DifferenceEstimate paired_difference_per_unit(const std::vector<double>& t_few, const std::vector<double>& t_many,
                                              double few, double many) {
  if (t_few.size() != t_many.size())
    throw std::invalid_argument("difference method: paired samples differ in count");
  DifferenceEstimate d = difference_per_unit(t_few, t_many, few, many);
  d.value = median_of(d.samples);
  propagate_spreads(d, t_few, t_many, many - few);
  d.spread = half_iqr_over_median(d.samples);
  return d;
}

Metric difference_metric(const DifferenceEstimate& d, std::string tag, std::string name, std::string unit) {
  Metric m;
  m.tag = std::move(tag);
  m.name = std::move(name);
  m.unit = std::move(unit);
  m.value = d.value;
  m.samples = d.samples;
  m.stats = {{"median", d.value},
             {"mean", d.mean},
             {"stddev", d.stddev},
             {"cv", d.value != 0 ? d.stddev / std::fabs(d.value) : 0.0},
             {"min", d.min},
             {"max", d.max},
             {"cv_propagated", d.propagated_cv},
             {"q1", quantile_of(d.samples, 0.25)},
             {"q3", quantile_of(d.samples, 0.75)},
             {"spread", d.spread}};
  m.higher_is_better = false;
  m.headline = true;
  m.role = MetricRole::derived;
  return m;
}

}  // namespace gpufact::microbench
