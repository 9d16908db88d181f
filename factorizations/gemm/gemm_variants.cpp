#include "factorizations/gemm/gemm_variants.hpp"

#include "kernels/gemm/sgemm_simt_table.hpp"
#include "kernels/gemm/sgemm_volkov.cuh"

namespace gpufact::factorizations {
namespace {

template <kernels::VolkovVariant V>
void volkov(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
            std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc,
            cudaStream_t stream) {
  kernels::sgemm_volkov(V, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
}

// The modern kernel with its tile shape from the tuning table (configs/tuning/sgemm_simt.json).
void simt(Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a, std::int64_t lda,
          const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc, cudaStream_t stream) {
  kernels::sgemm_simt(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
}

}  // namespace

const std::vector<SgemmVariant>& sgemm_variants() {
  using kernels::VolkovVariant;
  static const std::vector<SgemmVariant> variants = {
      {.name = "volkov", .label = "volkov08 Fig. 4 kernel", .launch = volkov<VolkovVariant::paper>},
      {.name = "volkov_no_fetch", .label = "volkov08 kernel, no fetch", .launch = volkov<VolkovVariant::no_fetch>,
       .ablation = true, .wrong_by_design = true},
      {.name = "volkov_no_prefetch", .label = "volkov08 kernel, no prefetch",
       .launch = volkov<VolkovVariant::no_prefetch>, .ablation = true},
      {.name = "simt", .label = "modern SIMT SGEMM (tuned tiles, cp.async pipeline)", .launch = simt},
  };
  return variants;
}

const SgemmVariant* find_sgemm_variant(std::string_view name) {
  for (const auto& v : sgemm_variants())
    if (v.name == name) return &v;
  return nullptr;
}

std::vector<std::string> sgemm_variant_names(bool with_ablations) {
  std::vector<std::string> names;
  for (const auto& v : sgemm_variants())
    if (with_ablations || !v.ablation) names.push_back(v.name);
  return names;
}

}  // namespace gpufact::factorizations
