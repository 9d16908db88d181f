// Base fixture of every device test (label gpu): skips cleanly when no usable GPU exists, else
// gives each test device 0 and a non-blocking stream; and the device-to-host copy tests read
// results with.
#pragma once

#include "core/cuda/check.hpp"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

namespace gpufact {

class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
      cudaGetLastError();
      GTEST_SKIP() << "no usable GPU: "
                   << (err != cudaSuccess ? std::string(cudaGetErrorName(err)) : std::string("no CUDA device"));
    }
    GPUFACT_CUDA_CHECK(cudaSetDevice(0));
    GPUFACT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  cudaStream_t stream_ = nullptr;
};

// count elements of device memory d, copied to the host on s (synchronized).
template <class T>
std::vector<T> download(const T* d, std::size_t count, cudaStream_t s) {
  std::vector<T> h(count);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(h.data(), d, count * sizeof(T), cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  return h;
}

}  // namespace gpufact
