// The measurement every dense factorization's case starts from (LU, Cholesky, QR): wall time of
// one method on a fresh copy of A, as the paper times its factorizations (volkov08 §6).
#pragma once

#include "core/bench/measure.hpp"
#include "core/cuda/buffer.hpp"
#include "core/linalg/matrix_view.hpp"

#include <cstddef>
#include <cstring>
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

}  // namespace gpufact::dense
