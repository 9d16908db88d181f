// Change-point detection for latency curves (volkov08 §3.3, Fig. 2 "by change-point detection,
// not by hand"): a curve y(x) sampled on a log-x grid is split into piecewise-constant
// segments by optimal partitioning (least squares plus a BIC-style penalty per segment) on
// log y, where the chase's noise is roughly relative. Plateaus are cache levels, their values
// latencies; the last x of a plateau before a jump is the capacity of that level.
#pragma once

#include <cstddef>
#include <vector>

namespace gpufact::microbench {

struct SegmentOptions {
  double penalty_scale = 4.0;          // penalty per segment = scale × σ² × ln(n), σ of log y
  double relative_noise_floor = 0.01;  // σ >= this: noiseless curves still have a scale
  bool median_filter = true;           // running median of 3 first: one outlier is not a level
  double merge_relative = 0.04;        // adjacent segments closer than this (relative) merge
};

struct Segment {
  std::size_t begin = 0, end = 0;  // [begin, end) into the curve
  double level = 0;                // median of the raw y in the segment
  double mean = 0, stddev = 0;     // of the raw y
  std::size_t size() const { return end - begin; }
};

// Relative difference below which two neighbouring levels are one: the larger of
// opt.merge_relative and 3σ.
double merge_threshold(const SegmentOptions& opt, double sigma);

// σ of log y from the median absolute first difference (robust to the jumps themselves).
double robust_log_noise(const std::vector<double>& y);

// Piecewise-constant segmentation of y (all y > 0).
std::vector<Segment> segment_curve(const std::vector<double>& y, const SegmentOptions& opt = {});

struct Level {
  double x_first = 0, x_last = 0;  // first and last x on the plateau
  double level = 0, mean = 0, stddev = 0;
  std::size_t points = 0;
};

// A jump between consecutive plateaus: the lower level holds up to x_below (the capacity
// estimate); from x_above on the curve sits at the next level. Points between are transition.
struct Knee {
  double x_below = 0, x_above = 0;
  double from = 0, to = 0;
  std::size_t plateau = 0;  // index of the plateau below the knee
};

struct StepCurve {
  std::vector<Level> plateaus;     // segments with at least min_plateau_points points
  std::vector<Knee> knees;         // between consecutive plateaus
  std::vector<Segment> segments;   // every segment, plateaus and transitions
  double noise = 0;                // σ of log y used for the penalty
};

// x increasing, y > 0, same length.
StepCurve find_steps(const std::vector<double>& x, const std::vector<double>& y, const SegmentOptions& opt = {},
                     std::size_t min_plateau_points = 2);

// 1-D clustering of latency samples by gaps: sorted values split where the next value exceeds
// the previous by more than `min_relative_gap`. Clusters holding less than `min_fraction` of
// the samples are marked as outliers (a TLB miss, an interrupt).
struct Cluster {
  double median = 0, mean = 0, stddev = 0, min = 0, max = 0;
  std::size_t count = 0;
  double fraction = 0;
  bool outlier = false;
};
std::vector<Cluster> cluster_values(std::vector<double> values, double min_relative_gap = 0.1,
                                    double min_fraction = 0.01);

// The most frequent distance, in bytes, between consecutive accesses of a trace whose latency
// exceeds `threshold` (accesses `stride_bytes` apart): 32 for sector misses, 128 for lines.
// 0 when fewer than three accesses exceed it.
double slow_access_period(const std::vector<double>& latency, double threshold, double stride_bytes);

}  // namespace gpufact::microbench
