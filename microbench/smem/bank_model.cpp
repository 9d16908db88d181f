#include "microbench/smem/bank_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace gpufact::microbench {

int bank_conflict_degree(int stride_words, int banks, int width_bytes, int threads, int word_bytes) {
  if (stride_words < 0) throw std::invalid_argument("bank_conflict_degree: stride must be >= 0");
  if (banks < 1 || width_bytes < 1 || threads < 1 || word_bytes < 1 || word_bytes > width_bytes)
    throw std::invalid_argument("bank_conflict_degree: banks, widths and threads must be positive, word <= bank width");
  std::map<std::int64_t, std::set<std::int64_t>> words_per_bank;
  for (int t = 0; t < threads; ++t) {
    const std::int64_t byte = std::int64_t{t} * stride_words * word_bytes;
    const std::int64_t bank_word = byte / width_bytes;
    words_per_bank[bank_word % banks].insert(bank_word);
  }
  std::size_t degree = 1;
  for (const auto& [bank, words] : words_per_bank) degree = std::max(degree, words.size());
  return static_cast<int>(degree);
}

std::vector<BankLayout> default_bank_layouts() {
  std::vector<BankLayout> out;
  for (int width : {4, 8, 16})
    for (int banks : {8, 16, 32, 64, 128}) out.push_back({banks, width});
  return out;
}

namespace {

struct LinearFit {
  double a = 0, b = 0, score = std::numeric_limits<double>::infinity();
  bool ok = false;
};

// Least squares of y = a + b·d with weights 1/y² (relative errors); score = Σ relative residual².
LinearFit fit_relative(const std::vector<int>& d, const std::vector<double>& y) {
  double s = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const double w = 1.0 / (y[i] * y[i]);
    s += w;
    sx += w * d[i];
    sy += w * y[i];
    sxx += w * d[i] * d[i];
    sxy += w * d[i] * y[i];
  }
  LinearFit f;
  const double det = s * sxx - sx * sx;
  if (!(det > 1e-12 * s * sxx)) return f;  // one degree everywhere: no slope to fit
  f.b = (s * sxy - sx * sy) / det;
  f.a = (sy - f.b * sx) / s;
  if (!(f.b > 0)) return f;
  f.score = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    const double r = (y[i] - (f.a + f.b * d[i])) / y[i];
    f.score += r * r;
  }
  f.ok = true;
  return f;
}

}  // namespace

BankInference infer_bank_layout(const std::vector<BankCurvePoint>& curve, const std::vector<BankLayout>& candidates) {
  if (curve.size() < 3)
    throw std::invalid_argument("bank inference needs at least three strides, got " + std::to_string(curve.size()));
  std::vector<double> y;
  for (const auto& p : curve) {
    if (p.stride_words < 0) throw std::invalid_argument("bank inference: negative stride");
    if (!std::isfinite(p.cycles) || p.cycles <= 0)
      throw std::invalid_argument("bank inference: cycles " + std::to_string(p.cycles) + " at stride " +
                                  std::to_string(p.stride_words) + " is not positive");
    y.push_back(p.cycles);
  }
  std::vector<LinearFit> fits;
  std::vector<std::vector<int>> degrees;
  std::size_t best = candidates.size();
  for (std::size_t c = 0; c < candidates.size(); ++c) {
    std::vector<int> d;
    for (const auto& p : curve)
      d.push_back(bank_conflict_degree(p.stride_words, candidates[c].banks, candidates[c].width_bytes));
    fits.push_back(fit_relative(d, y));
    degrees.push_back(std::move(d));
    if (fits.back().ok && (best == candidates.size() || fits.back().score < fits[best].score)) best = c;
  }
  if (best == candidates.size())
    throw std::invalid_argument("bank inference: no candidate layout has cycles rising with the conflict degree");
  // Layouts within 2% rms relative error of the best are indistinguishable from it; the first
  // of them in candidate order is reported.
  const double tie = fits[best].score + 4e-4 * static_cast<double>(curve.size());
  std::size_t chosen = best;
  for (std::size_t c = 0; c < candidates.size(); ++c)
    if (fits[c].ok && fits[c].score <= tie) {
      chosen = c;
      break;
    }
  BankInference out;
  out.layout = candidates[chosen];
  out.base_cycles = fits[chosen].a;
  out.cycles_per_degree = fits[chosen].b;
  out.degrees = degrees[chosen];
  for (std::size_t i = 0; i < curve.size(); ++i) {
    const double r = (y[i] - (out.base_cycles + out.cycles_per_degree * out.degrees[i])) / y[i];
    out.rel_residuals.push_back(r);
    out.max_abs_rel_residual = std::max(out.max_abs_rel_residual, std::abs(r));
  }
  for (std::size_t c = 0; c < candidates.size(); ++c)
    if (c != chosen && fits[c].ok && fits[c].score <= tie) out.equally_good.push_back(candidates[c]);
  return out;
}

}  // namespace gpufact::microbench
