#include "factorizations/dense/update_gemm.hpp"

#include "core/cuda/handles.hpp"
#include "core/linalg/device_blas.hpp"
#include "kernels/gemm/sgemm_simt_table.hpp"

#include <stdexcept>
#include <type_traits>

namespace gpufact::dense {
namespace {

template <class T>
void cublas_gemm(cublasHandle_t blas, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda,
                 const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc, cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  (void)stream;  // the handle is bound to it
  dev::gemm<T>(blas, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// gpufact's modern SIMT SGEMM (FP32 only), tile shape from the tuning table.
void simt_sgemm(cublasHandle_t, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc,
                cudaStream_t stream) {
  if (m == 0 || n == 0) return;
  kernels::sgemm_simt(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
}

}  // namespace

const std::vector<UpdateGemmEntry>& update_gemm_table() {
  static const std::vector<UpdateGemmEntry> table = {
      {UpdateGemm::cublas, "cublas", &cublas_gemm<float>, &cublas_gemm<double>},
      {UpdateGemm::simt, "simt", &simt_sgemm, nullptr},
  };
  return table;
}

const UpdateGemmEntry& update_gemm_entry(UpdateGemm id) {
  for (const auto& e : update_gemm_table())
    if (e.id == id) return e;
  throw std::invalid_argument("unknown update GEMM");
}

UpdateGemm update_gemm_from(const std::string& name) {
  for (const auto& e : update_gemm_table())
    if (name == e.name) return e.id;
  std::string known;
  for (const auto& n : update_gemm_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("update GEMM '" + name + "' is not one of: " + known);
}

std::vector<std::string> update_gemm_names() {
  std::vector<std::string> names;
  for (const auto& e : update_gemm_table()) names.emplace_back(e.name);
  return names;
}

template <class T>
UpdateGemmFn<T> update_gemm_fn(UpdateGemm id) {
  const auto& e = update_gemm_entry(id);
  UpdateGemmFn<T> fn = nullptr;
  if constexpr (std::is_same_v<T, float>)
    fn = e.sgemm;
  else
    fn = e.dgemm;
  if (!fn)
    throw std::invalid_argument(std::string("update GEMM '") + e.name + "' has no " +
                                (std::is_same_v<T, float> ? "FP32" : "FP64") + " implementation");
  return fn;
}

template UpdateGemmFn<float> update_gemm_fn<float>(UpdateGemm);
template UpdateGemmFn<double> update_gemm_fn<double>(UpdateGemm);

}  // namespace gpufact::dense
