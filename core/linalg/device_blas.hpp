// Templated s/d wrappers over cuBLAS and cuSOLVER (the 64-bit cusolverDnX* API where it exists),
// column-major, asynchronous on the handle's stream. Failures of the numerical kind (info > 0)
// stay on the device in the workspace; read_info() fetches them.
#pragma once

#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "core/linalg/blas_types.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace gpufact::dev {

using gpufact::Diag;
using gpufact::Op;
using gpufact::Side;
using gpufact::Uplo;

template <class T>
void gemm(cublasHandle_t h, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc);
template <class T>
void syrk(cublasHandle_t h, Uplo uplo, Op trans, std::int64_t n, std::int64_t k, T alpha, const T* a,
          std::int64_t lda, T beta, T* c, std::int64_t ldc);
template <class T>
void trsm(cublasHandle_t h, Side side, Uplo uplo, Op trans, Diag diag, std::int64_t m, std::int64_t n, T alpha,
          const T* a, std::int64_t lda, T* b, std::int64_t ldb);

// Device and host scratch for cuSOLVER, grown on demand (so timed calls after a warm-up never allocate).
class SolverWorkspace {
 public:
  SolverWorkspace() : info_(1) {}
  void reserve(std::size_t device_bytes, std::size_t host_bytes);
  void* device() { return device_.data(); }
  void* host() { return host_.empty() ? nullptr : host_.data(); }
  std::size_t device_bytes() const { return device_.bytes(); }
  std::size_t host_bytes() const { return host_.size(); }
  int* info() { return info_.data(); }
  // Blocks on the stream and returns LAPACK's info of the last call.
  int read_info(cudaStream_t s);

 private:
  DeviceBuffer<std::byte> device_;
  std::vector<std::byte> host_;
  DeviceBuffer<int> info_;
};

template <class T>
void getrf(CusolverHandle& h, std::int64_t m, std::int64_t n, T* a, std::int64_t lda, std::int64_t* ipiv,
           SolverWorkspace& ws);
template <class T>
void potrf(CusolverHandle& h, Uplo uplo, std::int64_t n, T* a, std::int64_t lda, SolverWorkspace& ws);
template <class T>
void geqrf(CusolverHandle& h, std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* tau, SolverWorkspace& ws);
// Explicit Q (LAPACK orgqr semantics); cuSOLVER has no 64-bit variant, so sizes must fit in int.
template <class T>
void orgqr(CusolverHandle& h, std::int64_t m, std::int64_t n, std::int64_t k, T* a, std::int64_t lda, const T* tau,
           SolverWorkspace& ws);

}  // namespace gpufact::dev
