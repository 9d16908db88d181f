// The CPU-GPU transfer model of volkov08 §3.2, eq. 1: Time = α + bytes/β, fitted by least squares
// to measured (bytes, seconds) points, and the PCIe link figures the fit is judged against.
// Host-only: tested on synthetic data (tests/test_transfer_model.cpp).
#pragma once

#include <vector>

namespace gpufact::microbench {

struct TransferPoint {
  double bytes = 0;
  double seconds = 0;
};

struct TransferFit {
  double alpha_s = 0;                 // α: fixed cost per transfer (latency)
  double beta_bytes_per_s = 0;        // β: asymptotic bandwidth
  double n_half_bytes = 0;            // n½ = α·β: the size that reaches half of β
  std::vector<double> rel_residuals;  // (measured − model) / measured, one per input point
  double max_abs_rel_residual = 0;
  bool alpha_clamped = false;  // the unconstrained fit gave α < 0; refitted with α = 0
  double predict_seconds(double bytes) const { return alpha_s + bytes / beta_bytes_per_s; }
};

// Least squares on relative errors (weights 1/seconds²), so 1-byte and 1-GB transfers count
// alike, as eq. 1 "fits the measured data within a few percent" over 1 B – 100 MB.
// Throws std::invalid_argument for fewer than two distinct sizes, a non-finite or non-positive
// time, a negative or non-finite size, or times that do not grow with size (no bandwidth term).
TransferFit fit_latency_bandwidth(const std::vector<TransferPoint>& points);

// One direction's PCIe data rate in GB/s (10⁹ B/s) after line encoding, before packet overhead:
// generation 1–6, width 1–32 lanes. Returns 0 for values outside those ranges.
double pcie_link_gbs(int generation, int width);

// |a − b| / max(a, b): 0 when equal; 0 when both are 0.
double relative_asymmetry(double a, double b);

}  // namespace gpufact::microbench
