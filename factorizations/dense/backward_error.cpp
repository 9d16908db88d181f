#include "factorizations/dense/backward_error.hpp"

#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "core/linalg/blas_types.hpp"
#include "core/linalg/device_blas.hpp"
#include "kernels/dense/lu_residual.cuh"
#include "kernels/dense/row_swaps.cuh"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace gpufact::dense {
namespace {

using kernels::FactorPart;

struct Norms {
  double max = 0, one = 0;
};

// ‖·‖max and ‖·‖₁ of a device m × n double matrix; a NaN anywhere makes both infinite.
Norms norms_of(const double* d, std::int64_t ld, std::int64_t m, std::int64_t n, cudaStream_t s) {
  DeviceBuffer<double> sums(static_cast<std::size_t>(n)), maxes(static_cast<std::size_t>(n));
  kernels::launch_column_abs_stats(d, ld, m, n, sums.data(), maxes.data(), s);
  std::vector<double> hs(static_cast<std::size_t>(n)), hm(static_cast<std::size_t>(n));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(hs.data(), sums.data(), n * sizeof(double), cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(hm.data(), maxes.data(), n * sizeof(double), cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  Norms out;
  for (std::int64_t j = 0; j < n; ++j) {
    if (std::isnan(hs[j]) || std::isnan(hm[j])) return {std::numeric_limits<double>::infinity(),
                                                        std::numeric_limits<double>::infinity()};
    out.one = std::max(out.one, hs[j]);
    out.max = std::max(out.max, hm[j]);
  }
  return out;
}

template <class T>
DeviceBuffer<double> widened(MatrixView<const T> h, FactorPart part, cudaStream_t s) {
  if (h.layout != Layout::col_major) throw std::invalid_argument("backward error: factors must be column-major");
  const std::int64_t m = h.rows, n = h.cols;
  DeviceBuffer<T> staged(static_cast<std::size_t>(std::max<std::int64_t>(m * n, 1)));
  DeviceBuffer<double> out(static_cast<std::size_t>(std::max<std::int64_t>(m * n, 1)));
  if (m * n == 0) return out;
  GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(staged.data(), m * sizeof(T), h.data, h.ld * sizeof(T), m * sizeof(T), n,
                                       cudaMemcpyHostToDevice, s));
  kernels::launch_widen_factor(staged.data(), m, m, n, part, out.data(), m, s);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));  // `staged` is freed on return
  return out;
}

template <class T>
BackwardError finish(DeviceBuffer<double>& residual, std::int64_t m, std::int64_t n, Norms a, cudaStream_t s) {
  const Norms r = norms_of(residual.data(), m, m, n, s);
  BackwardError e;
  e.residual_max = r.max;
  e.residual_one = r.one;
  e.a_max = a.max;
  e.a_one = a.one;
  e.epsilon = 2 * unit_roundoff<T>();
  e.n = n;
  return e;
}

}  // namespace

double BackwardError::in_max_units() const {
  const double d = epsilon * a_max;
  return d > 0 ? residual_max / d : (residual_max == 0 ? 0.0 : std::numeric_limits<double>::infinity());
}

double BackwardError::magma() const {
  // MAGMA's testers divide by the unit roundoff (lapackf77_lamch("E") = ε/2).
  const double d = static_cast<double>(n) * a_one * epsilon / 2;
  return d > 0 ? residual_one / d : (residual_one == 0 ? 0.0 : std::numeric_limits<double>::infinity());
}

std::size_t backward_error_device_bytes(std::int64_t m, std::int64_t n) {
  const std::int64_t k = std::min(m, n);
  return static_cast<std::size_t>(m * n + m * k + k * n + m * n / 2) * sizeof(double) + (std::size_t{64} << 20);
}

template <class T>
BackwardError lu_backward_error(MatrixView<const T> a, MatrixView<const T> lu, const int* ipiv, cudaStream_t s) {
  const std::int64_t m = a.rows, n = a.cols, k = std::min(m, n);
  if (lu.rows != m || lu.cols != n) throw std::invalid_argument("lu_backward_error: A and LU differ in shape");
  DeviceBuffer<double> r = widened(a, FactorPart::full, s);
  const Norms an = norms_of(r.data(), m, m, n, s);  // row swaps keep both norms
  std::vector<int> targets(static_cast<std::size_t>(kernels::kMaxSwapsPerLaunch));
  for (std::int64_t k0 = 0; k0 < k; k0 += kernels::kMaxSwapsPerLaunch) {
    const int count = static_cast<int>(std::min<std::int64_t>(kernels::kMaxSwapsPerLaunch, k - k0));
    for (int i = 0; i < count; ++i) targets[i] = ipiv[k0 + i] - 1;
    kernels::launch_apply_row_swaps(r.data(), m, false, n, 0, 0, k0, targets.data(), count, s);
  }
  const MatrixView<const T> l{lu.data, m, k, lu.ld, Layout::col_major}, u{lu.data, k, n, lu.ld, Layout::col_major};
  const DeviceBuffer<double> dl = widened(l, FactorPart::unit_lower, s), du = widened(u, FactorPart::upper, s);
  CublasHandle blas(s);
  dev::gemm<double>(blas, Op::N, Op::N, m, n, k, -1.0, dl.data(), m, du.data(), k, 1.0, r.data(), m);
  return finish<T>(r, m, n, an, s);
}

template <class T>
BackwardError cholesky_backward_error(MatrixView<const T> a, MatrixView<const T> l, cudaStream_t s) {
  const std::int64_t n = a.rows;
  if (a.cols != n || l.rows != n || l.cols != n) throw std::invalid_argument("cholesky_backward_error: shapes differ");
  DeviceBuffer<double> r = widened(a, FactorPart::full, s);
  const Norms an = norms_of(r.data(), n, n, n, s);
  const DeviceBuffer<double> dl = widened(l, FactorPart::lower, s);
  CublasHandle blas(s);
  dev::gemm<double>(blas, Op::N, Op::T, n, n, n, -1.0, dl.data(), n, dl.data(), n, 1.0, r.data(), n);
  return finish<T>(r, n, n, an, s);
}

template <class T>
BackwardError qr_backward_error(MatrixView<const T> a, MatrixView<const T> r_factor, MatrixView<const T> q,
                                cudaStream_t s) {
  const std::int64_t m = a.rows, n = a.cols;
  if (q.rows != m || q.cols != n || r_factor.cols != n || r_factor.rows < n)
    throw std::invalid_argument("qr_backward_error: shapes differ");
  DeviceBuffer<double> r = widened(a, FactorPart::full, s);
  const Norms an = norms_of(r.data(), m, m, n, s);
  const MatrixView<const T> rr{r_factor.data, n, n, r_factor.ld, Layout::col_major};
  const DeviceBuffer<double> dq = widened(q, FactorPart::full, s), dr = widened(rr, FactorPart::upper, s);
  CublasHandle blas(s);
  dev::gemm<double>(blas, Op::N, Op::N, m, n, n, -1.0, dq.data(), m, dr.data(), n, 1.0, r.data(), m);
  return finish<T>(r, m, n, an, s);
}

#define GPUFACT_BACKWARD_ERROR(T)                                                                                  \
  template BackwardError lu_backward_error<T>(MatrixView<const T>, MatrixView<const T>, const int*, cudaStream_t); \
  template BackwardError cholesky_backward_error<T>(MatrixView<const T>, MatrixView<const T>, cudaStream_t);       \
  template BackwardError qr_backward_error<T>(MatrixView<const T>, MatrixView<const T>, MatrixView<const T>,       \
                                              cudaStream_t);
GPUFACT_BACKWARD_ERROR(float)
GPUFACT_BACKWARD_ERROR(double)
#undef GPUFACT_BACKWARD_ERROR

}  // namespace gpufact::dense
