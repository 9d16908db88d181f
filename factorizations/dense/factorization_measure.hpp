// The measurement every dense factorization's case starts from (LU, Cholesky, QR): wall time of
// one method on a fresh copy of A, as the paper times its factorizations (volkov08 §6).
#pragma once

#include "core/bench/measure.hpp"
#include "core/cuda/buffer.hpp"
#include "core/linalg/matrix_view.hpp"

#include "core/cuda/check.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstring>
#include <functional>
#include <string>

namespace gpufact::dense {

// name: the metric tag ("lu"); label: the method and where the data lives (axis `data`). Every
// body waits for its result (sync), and setup copies the n × n `a` into `work` before each
// iteration, untimed. The caller sets timer and body.
template <class T>
MeasureSpec factorization_measure_spec(const std::string& name, const std::string& method, const std::string& data,
                                       double flops, const HostMatrix<T>& a, PinnedBuffer<T>& work) {
  const std::size_t bytes = static_cast<std::size_t>(a.rows() * a.rows()) * sizeof(T);
  MeasureSpec spec;
  spec.name = name;
  spec.label = method + (data == "device" ? " (device data)" : " (host data)");
  spec.flops = flops;
  spec.sync = true;  // every body waits for its result (wall time, as the paper)
  spec.setup = [&a, &work, bytes](std::size_t) { std::memcpy(work.data(), a.data(), bytes); };
  return spec;
}

// A library routine that factors `dwork` in place (cuSOLVER's), timed as fig7 times every method:
// with data = "device" each iteration starts from `pristine` (copied untimed) and the body is the
// call alone; with "host" the body also moves A from pinned `work` and the factors back (then
// `copy_back` adds what else comes back, e.g. tau). Sets spec.setup and spec.body; `factor`
// enqueues on `s`, and the body waits for it.
template <class T>
void time_library_factorization(MeasureSpec& spec, const std::string& data, const HostMatrix<T>& a,
                                PinnedBuffer<T>& work, DeviceBuffer<T>& dwork, const DeviceBuffer<T>& pristine,
                                cudaStream_t s, std::function<void()> factor, std::function<void()> copy_back = {}) {
  const std::size_t bytes = static_cast<std::size_t>(a.rows() * a.cols()) * sizeof(T);
  const bool host = data == "host";
  spec.setup = [&a, &work, &dwork, &pristine, host, bytes, s](std::size_t) {
    if (host)
      std::memcpy(work.data(), a.data(), bytes);
    else
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dwork.data(), pristine.data(), bytes, cudaMemcpyDeviceToDevice, s));
  };
  spec.body = [&work, &dwork, host, bytes, s, factor = std::move(factor), copy_back = std::move(copy_back)](std::size_t) {
    if (host) GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dwork.data(), work.data(), bytes, cudaMemcpyHostToDevice, s));
    factor();
    if (host) {
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(work.data(), dwork.data(), bytes, cudaMemcpyDeviceToHost, s));
      if (copy_back) copy_back();
    }
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  };
}

}  // namespace gpufact::dense
