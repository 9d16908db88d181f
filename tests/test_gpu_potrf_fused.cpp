// Device tests (label gpu) of the fused diagonal-block Cholesky (kernels/dense/potrf_fused and
// potrf_diagonal_fused): the one-CTA kernel alone at n = 1, 7, 32, 33, 64, 127, 128 in s and d
// (L against host potrf, L⁻¹·L = I, the strict upper triangle of A untouched, that of L⁻¹ zero,
// poisoned outputs), info on non-SPD and NaN pivots at the right column with the offset, info
// kept when already set; blocks wider than 128 (two levels with cuBLAS) the same way. Without a
// usable GPU every test skips.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/cuda/handles.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "factorizations/dense/cholesky_diagonal.hpp"
#include "kernels/dense/potrf_fused.cuh"

#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact::dense {
namespace {

using PotrfFusedGpu = GpuTest;
constexpr int kOffset = 500;  // the block's place in a whole matrix, added to info

// A well-conditioned SPD block (XᵀX/n + I, κ < 10) in an lda-strided array, the strict upper
// triangle filled with a marker the kernels must not touch.
template <class T>
HostMatrix<T> spd_block(std::int64_t n, std::int64_t lda, std::uint64_t seed) {
  HostMatrix<T> x(std::max<std::int64_t>(n, 1), std::max<std::int64_t>(n, 1)), a(n, n, lda);
  fill_uniform(x.view(), seed);
  host::syrk(Uplo::lower, Op::T, n, n, T(1) / static_cast<T>(std::max<std::int64_t>(n, 1)), x.data(), x.ld(), T(0),
             a.data(), lda);
  for (std::int64_t j = 0; j < n; ++j) {
    a(j, j) += T(1);
    for (std::int64_t i = 0; i < j; ++i) a(i, j) = T(-77);
  }
  return a;
}

// Runs the factorization of `a` on the device: the kernel alone (w <= 128, blas null) or
// potrf_diagonal_fused. Returns info (starting from `info0`); `a` and `inv` (ld n + 2) come back.
template <class T>
int run_fused(std::int64_t n, HostMatrix<T>& a, std::vector<T>& inv, bool want_inverse, int info0, cudaStream_t s,
              cublasHandle_t blas = nullptr) {
  const std::int64_t lda = a.ld(), ldinv = n + 2;
  DeviceBuffer<T> da(static_cast<std::size_t>(std::max<std::int64_t>(lda * n, 1)));
  DeviceBuffer<T> dinv(static_cast<std::size_t>(std::max<std::int64_t>(ldinv * n, 1)));
  DeviceBuffer<T> scratch(std::max<std::size_t>(potrf_diagonal_fused_scratch(n), 1));
  DeviceBuffer<int> info(1);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(da.data(), a.data(), static_cast<std::size_t>(lda * n) * sizeof(T),
                                     cudaMemcpyHostToDevice, s));
  // Poison: NaN everywhere in the square, except that blocks wider than 128 need the strict
  // upper triangle outside the kernels' squares zero on entry (the driver zeroes it once).
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(dinv.data(), 0xff, dinv.bytes(), s));
  if (n > kernels::kPotrfFusedMax) GPUFACT_CUDA_CHECK(cudaMemsetAsync(dinv.data(), 0, dinv.bytes(), s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(info.data(), &info0, sizeof(int), cudaMemcpyHostToDevice, s));
  if (blas == nullptr)
    kernels::launch_potrf_trtri_fused(da.data(), lda, static_cast<int>(n), want_inverse ? dinv.data() : nullptr, ldinv,
                                      info.data(), kOffset, s);
  else
    potrf_diagonal_fused<T>(blas, da.data(), lda, n, dinv.data(), ldinv, want_inverse, scratch.data(), info.data(),
                            kOffset, s);
  int out = -1;
  inv.assign(static_cast<std::size_t>(ldinv * n), T(0));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(a.data(), da.data(), static_cast<std::size_t>(lda * n) * sizeof(T),
                                     cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(inv.data(), dinv.data(), inv.size() * sizeof(T), cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&out, info.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  return out;
}

template <class T>
void check_block(std::int64_t n, bool want_inverse, std::uint64_t seed, cudaStream_t s, cublasHandle_t blas = nullptr) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s" : "d") + " n=" + std::to_string(n) +
               (blas ? " two-level" : " kernel") + (want_inverse ? "" : " no inverse"));
  const std::int64_t lda = n + 5;
  HostMatrix<T> a = spd_block<T>(n, lda, seed), ref = a;
  ASSERT_EQ(host::potrf(Uplo::lower, n, ref.data(), lda), 0);
  std::vector<T> inv;
  ASSERT_EQ(run_fused<T>(n, a, inv, want_inverse, 0, s, blas), 0);
  const double eps = std::numeric_limits<T>::epsilon();
  const double tol = 50.0 * static_cast<double>(std::max<std::int64_t>(n, 1)) * eps;
  double diff = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      if (i < j) {
        ASSERT_EQ(a(i, j), T(-77)) << "strict upper triangle of A written at " << i << ", " << j;
        continue;
      }
      ASSERT_TRUE(std::isfinite(static_cast<double>(a(i, j)))) << i << ", " << j;
      diff = std::max(diff, std::abs(static_cast<double>(a(i, j)) - static_cast<double>(ref(i, j))));
    }
  EXPECT_LT(diff, tol) << "L against host potrf";
  if (!want_inverse) return;
  const std::int64_t ldinv = n + 2;
  double off_identity = 0;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) {
      const T x = inv[static_cast<std::size_t>(i + j * ldinv)];
      if (i < j) {
        ASSERT_EQ(x, T(0)) << "L⁻¹'s strict upper triangle not zero at " << i << ", " << j;
      }
      ASSERT_TRUE(std::isfinite(static_cast<double>(x))) << "L⁻¹ at " << i << ", " << j;
      double sum = 0;  // (L⁻¹·L)(i, j) with L from the device
      for (std::int64_t k = j; k <= i; ++k)
        sum += static_cast<double>(inv[static_cast<std::size_t>(i + k * ldinv)]) * static_cast<double>(a(k, j));
      off_identity = std::max(off_identity, std::abs(sum - (i == j ? 1.0 : 0.0)));
    }
  EXPECT_LT(off_identity, tol) << "max |L⁻¹·L − I|";
}

TEST_F(PotrfFusedGpu, KernelMatchesHostPotrfAndInverts) {
  std::uint64_t seed = 11;
  for (std::int64_t n : {1, 7, 31, 32, 33, 64, 100, 127, 128}) {
    check_block<float>(n, true, ++seed, stream_);
    check_block<double>(n, true, ++seed, stream_);
  }
  check_block<float>(128, false, ++seed, stream_);  // L only (inv null)
  check_block<double>(77, false, ++seed, stream_);
}

TEST_F(PotrfFusedGpu, WiderBlocksInTwoLevels) {
  CublasHandle blas;
  blas.set_stream(stream_);
  std::uint64_t seed = 70;
  for (std::int64_t n : {129, 200, 256, 300, 512}) {
    check_block<float>(n, true, ++seed, stream_, blas);
    check_block<double>(n, true, ++seed, stream_, blas);
  }
  check_block<float>(300, false, ++seed, stream_, blas);
  // The split: multiples of 128, the first half at least as wide.
  EXPECT_EQ(potrf_diagonal_fused_split(129), 128);
  EXPECT_EQ(potrf_diagonal_fused_split(256), 128);
  EXPECT_EQ(potrf_diagonal_fused_split(300), 256);
  EXPECT_EQ(potrf_diagonal_fused_split(512), 256);
}

// A(k, k) made non-positive (or NaN): info = kOffset + the host potrf's info; an info already set
// stays; a successful block leaves it.
template <class T>
void check_info(std::int64_t n, std::int64_t k, T bad, cudaStream_t s, cublasHandle_t blas = nullptr) {
  SCOPED_TRACE(std::string(sizeof(T) == 4 ? "s" : "d") + " n=" + std::to_string(n) + " bad pivot at column " +
               std::to_string(k + 1) + (std::isnan(static_cast<double>(bad)) ? " (NaN)" : ""));
  HostMatrix<T> a = spd_block<T>(n, n, 600 + static_cast<std::uint64_t>(k)), ref = a;
  a(k, k) = bad;
  ref(k, k) = bad;
  const int expected = host::potrf(Uplo::lower, n, ref.data(), n);
  if (!std::isnan(static_cast<double>(bad))) {
    ASSERT_EQ(expected, static_cast<int>(k) + 1);
  }
  HostMatrix<T> b = a;
  std::vector<T> inv;
  EXPECT_EQ(run_fused<T>(n, a, inv, true, 0, s, blas), kOffset + static_cast<int>(k) + 1);
  EXPECT_EQ(run_fused<T>(n, b, inv, true, 7, s, blas), 7);  // an earlier failure is kept
  // The kernel: the leading minor of the 32-wide inner panels before the failing one is its
  // Cholesky factor, which is all LAPACK promises on failure (rows below it are unspecified; two
  // levels compute them with an unspecified inverse, so only info is checked there).
  // The NaN case has no reference factor: the host potrf stops before touching A.
  if (blas != nullptr || std::isnan(static_cast<double>(bad))) return;
  const std::int64_t done = k / 32 * 32;
  for (std::int64_t j = 0; j < done; ++j)
    for (std::int64_t i = j; i < done; ++i)
      ASSERT_NEAR(static_cast<double>(a(i, j)), static_cast<double>(ref(i, j)),
                  1e3 * static_cast<double>(std::numeric_limits<T>::epsilon()))
          << i << ", " << j;
}

TEST_F(PotrfFusedGpu, InfoNamesTheFailingColumn) {
  for (std::int64_t k : {0, 5, 31, 32, 63, 64, 100, 127}) {
    check_info<float>(128, k, -1.0f, stream_);
    check_info<double>(128, k, -1.0, stream_);
  }
  check_info<double>(77, 76, 0.0, stream_);
  check_info<float>(100, 40, std::numeric_limits<float>::quiet_NaN(), stream_);
  // A successful block leaves info as it was.
  HostMatrix<double> a = spd_block<double>(50, 50, 3);
  std::vector<double> inv;
  EXPECT_EQ(run_fused<double>(50, a, inv, true, 9, stream_), 9);
  CublasHandle blas;
  blas.set_stream(stream_);
  for (std::int64_t k : {5, 127, 128, 130, 255, 299}) {
    check_info<float>(300, k, -1.0f, stream_, blas);
    check_info<double>(300, k, -1.0, stream_, blas);
  }
}

TEST_F(PotrfFusedGpu, BadArgumentsThrow) {
  DeviceBuffer<float> a(200 * 200);
  DeviceBuffer<int> info(1);
  EXPECT_THROW(kernels::launch_potrf_trtri_fused(a.data(), 200, 129, nullptr, 200, info.data(), 0, stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::launch_potrf_trtri_fused(a.data(), 10, 20, nullptr, 20, info.data(), 0, stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::launch_potrf_trtri_fused(a.data(), 20, 20, a.data(), 10, info.data(), 0, stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::launch_potrf_trtri_fused(a.data(), 20, 20, nullptr, 20, nullptr, 0, stream_),
               std::invalid_argument);
  kernels::launch_potrf_trtri_fused(a.data(), 1, 0, nullptr, 1, info.data(), 0, stream_);  // n = 0: nothing
  CublasHandle blas;
  blas.set_stream(stream_);
  EXPECT_THROW(potrf_diagonal_fused<float>(blas, a.data(), 200, 200, nullptr, 200, false, a.data(), info.data(), 0,
                                           stream_),
               std::invalid_argument);  // wider than 128 needs inv for X11
  EXPECT_THROW(potrf_diagonal_fused<float>(blas, a.data(), 200, 200, a.data(), 200, true, nullptr, info.data(), 0,
                                           stream_),
               std::invalid_argument);  // and scratch
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace
}  // namespace gpufact::dense
