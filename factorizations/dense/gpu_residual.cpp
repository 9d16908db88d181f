#include "factorizations/dense/gpu_residual.hpp"

#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "core/linalg/blas_types.hpp"
#include "core/linalg/device_blas.hpp"
#include "kernels/dense/lu_residual.cuh"
#include "kernels/dense/row_swaps.cuh"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <vector>

namespace gpufact::dense {
namespace {

double max_column_sum(const double* sums, std::int64_t n, cudaStream_t s) {
  std::vector<double> host(static_cast<std::size_t>(n));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(host.data(), sums, n * sizeof(double), cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  double best = 0;
  for (double v : host) {
    if (!(v == v)) return std::numeric_limits<double>::infinity();  // NaN in the matrix
    best = std::max(best, v);
  }
  return best;
}

}  // namespace

template <class T>
double device_norm1(const T* d, std::int64_t ld, std::int64_t m, std::int64_t n, double* sums, cudaStream_t s) {
  kernels::launch_column_abs_sums(d, ld, m, n, sums, s);
  return max_column_sum(sums, n, s);
}

std::size_t lu_residual_device_bytes(std::int64_t m, std::int64_t n, std::size_t element_bytes) {
  const std::int64_t k = std::min(m, n);
  return static_cast<std::size_t>(2 * m * n + m * k + k * n) * element_bytes + static_cast<std::size_t>(n) * 8 +
         (std::size_t{64} << 20);
}

template <class T>
double lu_residual_device(MatrixView<const T> a, MatrixView<const T> lu, const int* ipiv, cudaStream_t s) {
  const std::int64_t m = a.rows, n = a.cols, k = std::min(m, n);
  if (a.layout != Layout::col_major || lu.layout != Layout::col_major || lu.rows != m || lu.cols != n)
    throw std::invalid_argument("lu_residual_device: A and LU must be column-major of one shape");
  if (k == 0) return 0.0;
  const std::size_t e = sizeof(T);
  DeviceBuffer<T> da(static_cast<std::size_t>(m * n)), dlu(static_cast<std::size_t>(m * n)),
      dl(static_cast<std::size_t>(m * k)), du(static_cast<std::size_t>(k * n));
  DeviceBuffer<double> sums(static_cast<std::size_t>(n));
  GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(da.data(), m * e, a.data, a.ld * e, m * e, n, cudaMemcpyHostToDevice, s));
  GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(dlu.data(), m * e, lu.data, lu.ld * e, m * e, n, cudaMemcpyHostToDevice, s));
  const double a_norm = device_norm1(da.data(), m, m, n, sums.data(), s);  // row swaps keep column sums
  std::vector<int> targets(static_cast<std::size_t>(kernels::kMaxSwapsPerLaunch));
  for (std::int64_t k0 = 0; k0 < k; k0 += kernels::kMaxSwapsPerLaunch) {
    const int count = static_cast<int>(std::min<std::int64_t>(kernels::kMaxSwapsPerLaunch, k - k0));
    for (int i = 0; i < count; ++i) targets[i] = ipiv[k0 + i] - 1;
    kernels::launch_apply_row_swaps(da.data(), m, false, n, 0, 0, k0, targets.data(), count, s);
  }
  kernels::launch_split_lu(dlu.data(), m, m, n, dl.data(), m, du.data(), k, s);
  CublasHandle blas(s);
  dev::gemm<T>(blas, Op::N, Op::N, m, n, k, T(-1), dl.data(), m, du.data(), k, T(1), da.data(), m);
  const double r = device_norm1(da.data(), m, m, n, sums.data(), s);
  const double denom = static_cast<double>(n) * a_norm * unit_roundoff<T>();
  return denom > 0 ? r / denom : (r == 0 ? 0.0 : std::numeric_limits<double>::infinity());
}

template double device_norm1<float>(const float*, std::int64_t, std::int64_t, std::int64_t, double*, cudaStream_t);
template double device_norm1<double>(const double*, std::int64_t, std::int64_t, std::int64_t, double*, cudaStream_t);
template double lu_residual_device<float>(MatrixView<const float>, MatrixView<const float>, const int*, cudaStream_t);
template double lu_residual_device<double>(MatrixView<const double>, MatrixView<const double>, const int*,
                                           cudaStream_t);

}  // namespace gpufact::dense
