// The GPU SGEMM kernels the GEMM experiments compare, by the name their `kernel` axis uses. One
// row per kernel; an experiment's kernel axis offers cuBLAS, every row here (the ablations only
// in volkov08.table2) and its own extras (split-k, OpenBLAS).
#pragma once

#include "core/linalg/blas_types.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpufact::factorizations {

// C (m × n, ldc) := α op(A) op(B) + β C, column-major, enqueued on `stream`.
using SgemmLauncher = void (*)(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                               const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
                               float* c, std::int64_t ldc, cudaStream_t stream);

struct SgemmVariant {
  std::string name;             // axis value: "volkov"
  std::string label;            // display name
  SgemmLauncher launch = nullptr;
  bool ablation = false;        // a Table 2 ablation: run only by volkov08.table2
  bool wrong_by_design = false;  // computes no product ("no fetch"): checked for finite output only
  bool supports_transa = false;  // op(A) = Aᵀ as well as A
};

const std::vector<SgemmVariant>& sgemm_variants();
const SgemmVariant* find_sgemm_variant(std::string_view name);  // nullptr when unknown
// Names of the variants, ablations included or not.
std::vector<std::string> sgemm_variant_names(bool with_ablations);

}  // namespace gpufact::factorizations
