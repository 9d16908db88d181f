// The GEMM that performs the trailing updates (issue 5: "gpufact's own GEMM or cuBLAS: an axis").
// One table entry per implementation, each with an FP32 and an FP64 slot; adding gpufact's own
// kernel is one more entry (its FP64 slot may stay null: the axis then rejects precision d).
#pragma once

#include "core/linalg/blas_types.hpp"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpufact::dense {

// Column-major C = alpha · op(A) · op(B) + beta · C on `stream` (cuBLAS argument order). `blas`
// is a handle the caller owns and has bound to `stream` (one per stream: a handle's workspace must
// not serve two streams running at once); implementations without cuBLAS ignore it.
template <class T>
using UpdateGemmFn = void (*)(cublasHandle_t blas, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
                              std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc,
                              cudaStream_t stream);

enum class UpdateGemm { cublas, simt };

struct UpdateGemmEntry {
  UpdateGemm id;
  const char* name;  // the `gemm` axis value
  UpdateGemmFn<float> sgemm;
  UpdateGemmFn<double> dgemm;  // null where the implementation is FP32 only
};

const std::vector<UpdateGemmEntry>& update_gemm_table();
const UpdateGemmEntry& update_gemm_entry(UpdateGemm id);
// Throws std::invalid_argument listing the known names.
UpdateGemm update_gemm_from(const std::string& name);
std::vector<std::string> update_gemm_names();

// The slot for T; throws std::invalid_argument when the implementation lacks that precision.
template <class T>
UpdateGemmFn<T> update_gemm_fn(UpdateGemm id);

}  // namespace gpufact::dense
