#include "factorizations/dense/cholesky_gpu_residual.hpp"

#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "core/linalg/blas_types.hpp"
#include "core/linalg/device_blas.hpp"
#include "factorizations/dense/gpu_residual.hpp"
#include "kernels/common/fill.cuh"
#include "kernels/dense/triangle.cuh"
#include "kernels/qr/caqr_kernels.cuh"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace gpufact::dense {
std::size_t cholesky_device_bytes_for_checks(std::int64_t n, std::size_t element_bytes) {
  return static_cast<std::size_t>(2 * n * n) * element_bytes + static_cast<std::size_t>(n) * 8 +
         (std::size_t{64} << 20);
}

template <class T>
void make_spd_test_matrix(MatrixView<T> a, std::uint64_t seed, cudaStream_t s) {
  const std::int64_t n = a.rows;
  if (a.cols != n || a.layout != Layout::col_major)
    throw std::invalid_argument("make_spd_test_matrix: A must be square and column-major");
  if (n == 0) return;
  DeviceBuffer<T> x(static_cast<std::size_t>(n * n)), c(static_cast<std::size_t>(n * n));
  kernels::launch_fill_uniform(x.data(), x.size(), seed, T(-1), T(1), s);
  kernels::launch_set_identity<T>(c.data(), n, n, n, s);
  CublasHandle blas(s);
  // Lower triangle: (1/n)·XᵀX + 0.001·I, then mirrored so the stored matrix is exactly symmetric.
  dev::syrk<T>(blas, Uplo::lower, Op::T, n, n, T(1) / static_cast<T>(n), x.data(), n, T(0.001), c.data(), n);
  kernels::launch_mirror_lower_to_upper(c.data(), n, n, s);
  GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(a.data, a.ld * sizeof(T), c.data(), n * sizeof(T), n * sizeof(T), n,
                                       cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
}

template <class T>
double cholesky_residual_device(MatrixView<const T> a, MatrixView<const T> l, cudaStream_t s) {
  const std::int64_t n = a.rows;
  if (a.layout != Layout::col_major || l.layout != Layout::col_major || a.cols != n || l.rows != n || l.cols != n)
    throw std::invalid_argument("cholesky_residual_device: A and L must be column-major n × n");
  if (n == 0) return 0.0;
  const std::size_t e = sizeof(T);
  DeviceBuffer<T> da(static_cast<std::size_t>(n * n)), dl(static_cast<std::size_t>(n * n));
  DeviceBuffer<double> sums(static_cast<std::size_t>(n));
  GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(da.data(), n * e, a.data, a.ld * e, n * e, n, cudaMemcpyHostToDevice, s));
  GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(dl.data(), n * e, l.data, l.ld * e, n * e, n, cudaMemcpyHostToDevice, s));
  const double a_norm = device_norm1(da.data(), n, n, n, sums.data(), s);
  kernels::launch_zero_strict_upper(dl.data(), n, n, s);
  CublasHandle blas(s);
  dev::gemm<T>(blas, Op::N, Op::T, n, n, n, T(-1), dl.data(), n, dl.data(), n, T(1), da.data(), n);
  const double r = device_norm1(da.data(), n, n, n, sums.data(), s);
  const double denom = static_cast<double>(n) * a_norm * unit_roundoff<T>();
  return denom > 0 ? r / denom : (r == 0 ? 0.0 : std::numeric_limits<double>::infinity());
}

template void make_spd_test_matrix<float>(MatrixView<float>, std::uint64_t, cudaStream_t);
template void make_spd_test_matrix<double>(MatrixView<double>, std::uint64_t, cudaStream_t);
template double cholesky_residual_device<float>(MatrixView<const float>, MatrixView<const float>, cudaStream_t);
template double cholesky_residual_device<double>(MatrixView<const double>, MatrixView<const double>, cudaStream_t);

}  // namespace gpufact::dense
