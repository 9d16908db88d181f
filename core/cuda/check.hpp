// One family of checks for every CUDA-side status: the message names the expression, file:line,
// the current device and the library's error name and text (STYLE.md 9).
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cusolverDn.h>

#include <stdexcept>
#include <string>

namespace gpufact {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline int current_device_or_minus_one() noexcept {
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) dev = -1;
  return dev;
}

inline std::string where(const char* expr, const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line) + " on device " +
         std::to_string(current_device_or_minus_one()) + ": " + expr;
}

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* expr, const char* file, int line) {
  throw CudaError(std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ") at " +
                  where(expr, file, line));
}

[[noreturn]] inline void throw_cublas_error(cublasStatus_t s, const char* expr, const char* file, int line) {
  throw CudaError(std::string(cublasGetStatusName(s)) + " (" + cublasGetStatusString(s) + ") at " +
                  where(expr, file, line));
}

inline const char* cusolver_status_name(cusolverStatus_t s) noexcept {
  switch (s) {
    case CUSOLVER_STATUS_SUCCESS: return "CUSOLVER_STATUS_SUCCESS";
    case CUSOLVER_STATUS_NOT_INITIALIZED: return "CUSOLVER_STATUS_NOT_INITIALIZED";
    case CUSOLVER_STATUS_ALLOC_FAILED: return "CUSOLVER_STATUS_ALLOC_FAILED";
    case CUSOLVER_STATUS_INVALID_VALUE: return "CUSOLVER_STATUS_INVALID_VALUE";
    case CUSOLVER_STATUS_ARCH_MISMATCH: return "CUSOLVER_STATUS_ARCH_MISMATCH";
    case CUSOLVER_STATUS_EXECUTION_FAILED: return "CUSOLVER_STATUS_EXECUTION_FAILED";
    case CUSOLVER_STATUS_INTERNAL_ERROR: return "CUSOLVER_STATUS_INTERNAL_ERROR";
    case CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED: return "CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED";
    case CUSOLVER_STATUS_NOT_SUPPORTED: return "CUSOLVER_STATUS_NOT_SUPPORTED";
    case CUSOLVER_STATUS_INVALID_WORKSPACE: return "CUSOLVER_STATUS_INVALID_WORKSPACE";
    default: return "CUSOLVER_STATUS_UNKNOWN";
  }
}

[[noreturn]] inline void throw_cusolver_error(cusolverStatus_t s, const char* expr, const char* file, int line) {
  throw CudaError(std::string(cusolver_status_name(s)) + " (status " + std::to_string(static_cast<int>(s)) +
                  ") at " + where(expr, file, line));
}

}  // namespace gpufact

#define GPUFACT_CUDA_CHECK(expr)                                                          \
  do {                                                                                    \
    const cudaError_t gpufact_status_ = (expr);                                           \
    if (gpufact_status_ != cudaSuccess)                                                   \
      ::gpufact::throw_cuda_error(gpufact_status_, #expr, __FILE__, __LINE__);            \
  } while (0)

#define GPUFACT_CUBLAS_CHECK(expr)                                                        \
  do {                                                                                    \
    const cublasStatus_t gpufact_status_ = (expr);                                        \
    if (gpufact_status_ != CUBLAS_STATUS_SUCCESS)                                         \
      ::gpufact::throw_cublas_error(gpufact_status_, #expr, __FILE__, __LINE__);          \
  } while (0)

#define GPUFACT_CUSOLVER_CHECK(expr)                                                      \
  do {                                                                                    \
    const cusolverStatus_t gpufact_status_ = (expr);                                      \
    if (gpufact_status_ != CUSOLVER_STATUS_SUCCESS)                                       \
      ::gpufact::throw_cusolver_error(gpufact_status_, #expr, __FILE__, __LINE__);        \
  } while (0)

// Every launcher ends with this: it reports a bad launch configuration at the launch site.
#define GPUFACT_CHECK_LAUNCH() GPUFACT_CUDA_CHECK(cudaGetLastError())
