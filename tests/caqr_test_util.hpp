// Helpers of the CAQR device tests (test_gpu_caqr, test_gpu_caqr_blocked): host matrices up to the
// device and back, NaN-poisoned outputs, and elementwise agreement in units of ε.
#pragma once

#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/linalg/matrix_view.hpp"
#include "core/linalg/random.hpp"
#include "factorizations/caqr/caqr_accuracy.hpp"

#include <cuda_runtime_api.h>

#include "tests/gpu_test.hpp"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace gpufact::factorizations {

template <class T>
class CaqrDeviceTest : public GpuTest {
 protected:
  // cudaMemcpy from pageable memory may return before the data reaches the device, and the
  // test stream is non-blocking (no implicit order with the legacy stream): wait for the copy,
  // or a kernel on stream_ can run first and its output be overwritten by the late copy.
  static void to_device(void* dst, const void* src, std::size_t bytes) {
    GPUFACT_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice));
    GPUFACT_CUDA_CHECK(cudaDeviceSynchronize());
  }
  DeviceBuffer<T> upload(const HostMatrix<T>& h) {
    DeviceBuffer<T> d(static_cast<std::size_t>(h.ld() * h.cols()));
    to_device(d.data(), h.data(), d.bytes());
    return d;
  }
  HostMatrix<T> download(const DeviceBuffer<T>& d, std::int64_t rows, std::int64_t cols) {
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    HostMatrix<T> h(rows, cols);
    GPUFACT_CUDA_CHECK(cudaMemcpy(h.data(), d.data(), static_cast<std::size_t>(rows * cols) * sizeof(T),
                                  cudaMemcpyDeviceToHost));
    return h;
  }
  DeviceBuffer<T> poisoned(std::size_t count) {
    DeviceBuffer<T> d(count);
    std::vector<T> nan(count, std::numeric_limits<T>::quiet_NaN());
    to_device(d.data(), nan.data(), d.bytes());
    return d;
  }
  // Max |x − y| over the matrices, in units of ε·scale; NaN anywhere gives +inf.
  static double difference(const HostMatrix<T>& x, const HostMatrix<T>& y, double scale) {
    return max_difference_eps(x, y, scale);
  }
  static HostMatrix<T> random(std::int64_t m, std::int64_t n, std::uint64_t seed) {
    HostMatrix<T> a(m, n);
    fill_uniform<T>(a.view(), seed);
    return a;
  }
};

}  // namespace gpufact::factorizations
