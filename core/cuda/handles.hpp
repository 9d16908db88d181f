// Move-only cuBLAS and cuSOLVER handles bound to a stream.
#pragma once

#include "core/cuda/check.hpp"

#include <utility>

namespace gpufact {

class CublasHandle {
 public:
  CublasHandle() { GPUFACT_CUBLAS_CHECK(cublasCreate(&h_)); }
  explicit CublasHandle(cudaStream_t s) : CublasHandle() { set_stream(s); }
  ~CublasHandle() {
    if (h_) cublasDestroy(h_);
  }
  CublasHandle(CublasHandle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  CublasHandle& operator=(CublasHandle&& o) noexcept {
    if (this != &o) {
      if (h_) cublasDestroy(h_);
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  cublasHandle_t get() const noexcept { return h_; }
  operator cublasHandle_t() const noexcept { return h_; }
  void set_stream(cudaStream_t s) { GPUFACT_CUBLAS_CHECK(cublasSetStream(h_, s)); }

 private:
  cublasHandle_t h_ = nullptr;
};

// A cuSOLVER dense handle plus the parameter object of the 64-bit cusolverDnX* API.
class CusolverHandle {
 public:
  CusolverHandle() {
    GPUFACT_CUSOLVER_CHECK(cusolverDnCreate(&h_));
    GPUFACT_CUSOLVER_CHECK(cusolverDnCreateParams(&params_));
  }
  explicit CusolverHandle(cudaStream_t s) : CusolverHandle() { set_stream(s); }
  ~CusolverHandle() {
    if (params_) cusolverDnDestroyParams(params_);
    if (h_) cusolverDnDestroy(h_);
  }
  CusolverHandle(CusolverHandle&& o) noexcept
      : h_(std::exchange(o.h_, nullptr)), params_(std::exchange(o.params_, nullptr)) {}
  CusolverHandle& operator=(CusolverHandle&& o) noexcept {
    if (this != &o) {
      if (params_) cusolverDnDestroyParams(params_);
      if (h_) cusolverDnDestroy(h_);
      h_ = std::exchange(o.h_, nullptr);
      params_ = std::exchange(o.params_, nullptr);
    }
    return *this;
  }
  CusolverHandle(const CusolverHandle&) = delete;
  CusolverHandle& operator=(const CusolverHandle&) = delete;

  cusolverDnHandle_t get() const noexcept { return h_; }
  operator cusolverDnHandle_t() const noexcept { return h_; }
  cusolverDnParams_t params() const noexcept { return params_; }
  void set_stream(cudaStream_t s) { GPUFACT_CUSOLVER_CHECK(cusolverDnSetStream(h_, s)); }

 private:
  cusolverDnHandle_t h_ = nullptr;
  cusolverDnParams_t params_ = nullptr;
};

}  // namespace gpufact
