// The difference method of volkov08 §3.1: the cost of one more unit of work (a kernel launch, a
// barrier round) is (T(N) − T(1)) / (N − 1), which cancels what every sample pays once (the
// final synchronization, the launch around in-kernel rounds, the clock reads).
#pragma once

#include "core/bench/sample_median.hpp"

#include "core/report/result.hpp"

#include <string>
#include <vector>

namespace gpufact::microbench {

struct DifferenceEstimate {
  double value = 0;  // (median T(many) − median T(few)) / (many − few)
  // Per-repetition differences: repetition i of T(many) minus repetition i of T(few), over
  // (many − few). Their min/max/stddev are the spread; the repetitions alternate in time only
  // per measurement, so the pairing is by index.
  std::vector<double> samples;
  double stddev = 0;  // of `samples`
  double min = 0, max = 0;
  double mean = 0;
  // sqrt(sd(T(many))² + sd(T(few))²) / (many − few) / value: the spread the two measurements'
  // own noise implies, independent of how the repetitions pair up.
  double propagated_cv = 0;
  // The same with half interquartile ranges: sqrt(h(T(many))² + h(T(few))²) / (many − few) /
  // |value|, h = (q3 − q1) / 2. The report's spread: robust to a few disturbed samples and,
  // like the median difference itself, independent of the pairing.
  double propagated_spread = 0;
  // The report's spread: propagated_spread for separate measurements; for paired ones (taken
  // interleaved) half the interquartile range of `samples` over |value|.
  double spread = 0;
};

// `few` and `many` are the units in each sample (1 and N); `t_few`, `t_many` the per-repetition
// times. Throws std::invalid_argument when many <= few or a sample list is empty.
DifferenceEstimate difference_per_unit(const std::vector<double>& t_few, const std::vector<double>& t_many,
                                       double few, double many);

// Paired measurements: t_few[i] and t_many[i] were taken together, interleaved (see
// interleaved_timing.hpp). The value is the median of the per-pair differences over (many −
// few) and the spread half their interquartile range over |value|: a drift between pairs
// cancels in each difference instead of widening both distributions. Throws
// std::invalid_argument when many <= few, a list is empty or the lists differ in length.
DifferenceEstimate paired_difference_per_unit(const std::vector<double>& t_few, const std::vector<double>& t_many,
                                              double few, double many);

// A derived metric from an estimate: value, samples and stats (median = value, mean, stddev,
// cv, min, max, cv_propagated, q1, q3, spread = d.spread).
Metric difference_metric(const DifferenceEstimate& d, std::string tag, std::string name, std::string unit);

}  // namespace gpufact::microbench
