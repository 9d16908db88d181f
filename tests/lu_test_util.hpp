// Helpers of the GPU-resident LU device tests (test_gpu_tslu, test_gpu_lu_panel_coop): the panel
// test matrix (also the QR panel's, test_gpu_qr_panel_cluster) and one factorization through
// lu_gpu_resident with its factors brought back.
#pragma once

#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/linalg/matrix_view.hpp"
#include "core/linalg/random.hpp"
#include "factorizations/dense/lu_gpu_resident.hpp"

#include <cuda_runtime_api.h>

#include "tests/gpu_test.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace gpufact::dense {

// Uniform [−1, 1] m × n from seed; column zero_col (>= 0) exactly zero; rows m..ld (ld > m) NaN,
// so a kernel that reads or writes the padding shows.
template <class T>
HostMatrix<T> panel_test_matrix(std::int64_t m, std::int64_t n, std::uint64_t seed, std::int64_t zero_col = -1,
                             std::int64_t ld = 0) {
  HostMatrix<T> a(m, n, ld);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = m; i < a.ld(); ++i) a(i, j) = std::numeric_limits<T>::quiet_NaN();
  fill_uniform(a.view(), seed);
  if (zero_col >= 0)
    for (std::int64_t i = 0; i < m; ++i) a(i, zero_col) = T(0);
  return a;
}

// A panel's device copy (the host matrix's ld) with its pivots and info poisoned, for one launch.
template <class T>
struct DevicePanel {
  DevicePanel(const HostMatrix<T>& a, std::int64_t pivots, cudaStream_t s)
      : values(static_cast<std::size_t>(a.ld() * a.cols())), ipiv(static_cast<std::size_t>(pivots)), info(1) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(values.data(), a.data(), values.bytes(), cudaMemcpyHostToDevice, s));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(ipiv.data(), 0xff, ipiv.bytes(), s));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(info.data(), 0x7f, info.bytes(), s));
  }
  DeviceBuffer<T> values;
  DeviceBuffer<std::int64_t> ipiv;
  DeviceBuffer<int> info;
};

template <class T>
struct ResidentLu {
  std::vector<T> factors;  // m × n, ld m
  std::vector<int> ipiv;
  int info = 0;
};

// a factored on the device by lu_gpu_resident with ws (made for its shape), on s.
template <class T>
ResidentLu<T> factor_resident(const HostMatrix<T>& a, LuResidentWorkspace<T>& ws, cudaStream_t s) {
  const std::int64_t m = a.rows(), n = a.cols();
  DeviceBuffer<T> d(static_cast<std::size_t>(m * n));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), a.data(), d.bytes(), cudaMemcpyHostToDevice, s));
  ResidentLu<T> out;
  out.ipiv.assign(static_cast<std::size_t>(std::min(m, n)), -1);
  out.info = lu_gpu_resident(m, n, d.data(), m, out.ipiv.data(), ws, s);
  out.factors = download(d.data(), d.size(), s);
  return out;
}

}  // namespace gpufact::dense
