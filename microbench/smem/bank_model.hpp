// Shared-memory bank conflicts (volkov08 §3.5): the conflict degree a strided warp access has on
// a given bank layout, and the layout (bank count and width) inferred from a measured curve of
// cycles per access against stride. Host-only: tested on synthetic curves
// (tests/test_bank_model.cpp).
#pragma once

#include <vector>

namespace gpufact::microbench {

// Conflict degree when `threads` threads load `word_bytes`-byte words at word addresses
// t·stride_words from `banks` banks `width_bytes` wide: the most distinct bank words that any
// one bank must serve (threads reading the same bank word share one access). stride_words >= 0
// (0: all threads read one word, degree 1); banks, width_bytes, threads, word_bytes >= 1 and
// word_bytes <= width_bytes, else std::invalid_argument.
int bank_conflict_degree(int stride_words, int banks, int width_bytes, int threads = 32, int word_bytes = 4);

struct BankCurvePoint {
  int stride_words = 0;  // stride between consecutive threads' 4-byte words
  double cycles = 0;     // cycles per warp-wide access
};

struct BankLayout {
  int banks = 0;
  int width_bytes = 0;
};

struct BankInference {
  BankLayout layout;
  double base_cycles = 0;  // cycles ≈ base_cycles + cycles_per_degree · degree
  double cycles_per_degree = 0;
  std::vector<int> degrees;  // the layout's conflict degree at each input point
  std::vector<double> rel_residuals;
  double max_abs_rel_residual = 0;
  // Other layouts that explain the curve as well (within noise): the strides measured cannot
  // tell them apart. Empty when the inference is unique.
  std::vector<BankLayout> equally_good;
};

// Candidate layouts: 8–128 banks × 4, 8 or 16 bytes, in the order ties are resolved (4-byte
// banks first, then fewer banks).
std::vector<BankLayout> default_bank_layouts();

// Fits cycles = a + b·degree(stride; layout) for every candidate (least squares on relative
// errors) and returns the layout with the smallest error. Throws std::invalid_argument for
// fewer than three points, a negative stride, a non-finite or non-positive cycle count, or a
// curve that no candidate explains with cycles rising in the conflict degree.
BankInference infer_bank_layout(const std::vector<BankCurvePoint>& curve,
                                const std::vector<BankLayout>& candidates = default_bank_layouts());

}  // namespace gpufact::microbench
