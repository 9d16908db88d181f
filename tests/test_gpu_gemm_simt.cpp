// Device tests (label gpu) of the SIMT SGEMM and its block-triangular variant (volkov08 §4, §4.2):
// every configuration and transpose at sizes that are not multiples of any tile (1, 17, 100,
// 1000, 4097; k = 1, 3, 1000, 4097), 16-byte-aligned and odd leading dimensions, β = 0 with NaN
// in C and β ≠ 0, against a double-precision host reference; the triangle kernels with both
// grids and both triangles, with the other triangle checked bit for bit; split-k on the SIMT
// main loop with NaN-poisoned workspaces and more splits than k has slices.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/linalg/gemm_check.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "kernels/gemm/sgemm_simt.cuh"
#include "kernels/gemm/sgemm_simt_table.hpp"
#include "kernels/gemm/sgemm_splitk.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpufact {
namespace {

using kernels::TriangleGrid;

struct Shape {
  std::int64_t m, n, k;
};

// Every size of the brief appears as m, n and k somewhere; none is a multiple of a tile.
const std::vector<Shape> kShapes = {{1, 1, 1},       {17, 17, 17},   {100, 1, 3},       {1, 100, 1000},
                                    {17, 1000, 4097}, {1000, 17, 1000}, {4097, 100, 3}, {100, 4097, 1},
                                    {1000, 1000, 1000}};

class GpuGemmSimt : public GpuTest {
 protected:
  // Column-major host matrix with leading dimension `ld`, uniform in [-1, 1), copied to the device.
  struct Operand {
    HostMatrix<float> host;
    DeviceBuffer<float> dev;
  };
  Operand make(std::int64_t rows, std::int64_t cols, std::int64_t ld, std::uint64_t seed) {
    Operand o{HostMatrix<float>(rows, cols, ld), DeviceBuffer<float>(static_cast<std::size_t>(ld * std::max<std::int64_t>(cols, 1)))};
    fill_uniform(o.host.view(), seed);
    upload(o);
    return o;
  }
  void upload(Operand& o) {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(o.dev.data(), o.host.data(), o.dev.bytes(), cudaMemcpyHostToDevice, stream_));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  HostMatrix<float> download(const Operand& o) {
    HostMatrix<float> h(o.host.rows(), o.host.cols(), o.host.ld());
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(h.data(), o.dev.data(), o.dev.bytes(), cudaMemcpyDeviceToHost, stream_));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return h;
  }
  // Leading dimension: a multiple of 4 (16-byte columns) or odd (the scalar path).
  static std::int64_t leading(std::int64_t rows, bool odd) {
    const std::int64_t r = std::max<std::int64_t>(rows, 1);
    return odd ? (r % 2 ? r : r + 1) : (r + 3) / 4 * 4;
  }

  // Runs one config on one shape and checks C against the double-precision reference; splits > 0
  // runs split-k on that config (sgemm_splitk_simt) instead.
  void check_gemm(const std::string& config, Op ta, Op tb, Shape s, bool odd_ld, float beta, int splits = 0) {
    SCOPED_TRACE(config + " " + kernels::trans_name(ta, tb) + " m=" + std::to_string(s.m) + " n=" +
                 std::to_string(s.n) + " k=" + std::to_string(s.k) + (odd_ld ? " odd ld" : " aligned ld") +
                 " beta=" + std::to_string(beta) + " splits=" + std::to_string(splits));
    const std::int64_t ar = ta == Op::N ? s.m : s.k, ac = ta == Op::N ? s.k : s.m;
    const std::int64_t br = tb == Op::N ? s.k : s.n, bc = tb == Op::N ? s.n : s.k;
    Operand a = make(ar, ac, leading(ar, odd_ld), 11 + s.m);
    Operand b = make(br, bc, leading(br, odd_ld), 23 + s.n);
    Operand c = make(s.m, s.n, leading(s.m, odd_ld), 37 + s.k);
    const HostMatrix<float> c0 = c.host;
    if (beta == 0.0f) {  // NaN in C: a kernel that read C would leave NaN behind
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(c.dev.data(), 0xff, c.dev.bytes(), stream_));
    }
    const float alpha = 0.75f;
    if (splits > 0) {
      const std::size_t floats = kernels::sgemm_splitk_workspace_floats(s.m, s.n, splits);
      DeviceBuffer<float> ws(std::max<std::size_t>(floats, 1));
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.data(), 0xff, ws.bytes(), stream_));  // NaN: every slot must be written
      kernels::sgemm_splitk_simt(config, ta, tb, s.m, s.n, s.k, splits, alpha, a.dev.data(), a.host.ld(), b.dev.data(),
                                 b.host.ld(), beta, c.dev.data(), c.host.ld(), ws.data(), floats, stream_);
      GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    } else {
      kernels::sgemm_simt(config, ta, tb, s.m, s.n, s.k, alpha, a.dev.data(), a.host.ld(), b.dev.data(), b.host.ld(),
                          beta, c.dev.data(), c.host.ld(), stream_);
    }
    const HostMatrix<float> got = download(c);
    const double err = gemm_error<float>(ta == Op::N ? 'N' : 'T', tb == Op::N ? 'N' : 'T', a.host.view(), b.host.view(),
                                         c0.view(), got.view(), alpha, beta);
    EXPECT_LE(err, static_cast<double>(s.k) + 2.0);
  }
};

TEST_F(GpuGemmSimt, SplitkOnTheSimtMainLoopMatchesTheReference) {
  // Small C at large k (the split-k target), odd sizes, and splits beyond k's slices (empty ones).
  const std::vector<Shape> shapes = {{1, 1, 1}, {17, 100, 1000}, {64, 64, 4099}, {100, 17, 4097}, {256, 256, 2000}};
  for (const char* config : {"simt_64x64x16_s3", "simt_128x128x16_s3"})
    for (auto [ta, tb] : {std::pair{Op::N, Op::N}, std::pair{Op::N, Op::T}, std::pair{Op::T, Op::N}})
      for (const Shape& s : shapes)
        for (int splits : {1, 3, 64, 257}) {
          check_gemm(config, ta, tb, s, false, 0.0f, splits);
          check_gemm(config, ta, tb, s, true, -1.5f, splits);
        }
  // The splits the fig5 heuristic picks for C = 64 × 64, k = 16384.
  check_gemm("simt_64x64x16_s3", Op::N, Op::N, {64, 64, 16384}, false, 0.0f, 256);
  check_gemm("simt_64x64x16_s3", Op::N, Op::T, {64, 64, 16384}, false, 0.0f, 256);
}

TEST_F(GpuGemmSimt, SplitkRejectsBadArguments) {
  DeviceBuffer<float> buf(64);
  const std::string cfg = "simt_64x64x16_s3";
  EXPECT_THROW(kernels::sgemm_splitk_simt(cfg, Op::N, Op::N, 4, 4, 4, 0, 1, buf.data(), 4, buf.data(), 4, 0, buf.data(),
                                          4, buf.data(), 64, stream_),
               std::invalid_argument);  // splits = 0
  EXPECT_THROW(kernels::sgemm_splitk_simt(cfg, Op::N, Op::N, 4, 4, 4, 8, 1, buf.data(), 4, buf.data(), 4, 0, buf.data(),
                                          4, buf.data(), 64, stream_),
               std::invalid_argument);  // 8 × 16 floats needed
  EXPECT_THROW(kernels::sgemm_splitk_simt(cfg, Op::T, Op::T, 4, 4, 4, 1, 1, buf.data(), 4, buf.data(), 4, 0, buf.data(),
                                          4, buf.data(), 64, stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::sgemm_splitk_simt("no_such_config", Op::N, Op::N, 4, 4, 4, 1, 1, buf.data(), 4, buf.data(), 4,
                                          0, buf.data(), 4, buf.data(), 64, stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::sgemm_simt_partials(cfg, Op::N, Op::N, 4, 4, 64, 2, 16, buf.data(), 4, buf.data(), 64,
                                            buf.data(), 64, stream_),
               std::invalid_argument);  // 2 slices of 16 miss k = 64
}

TEST_F(GpuGemmSimt, EveryConfigAndTransposeMatchesTheReference) {
  for (const auto& cfg : kernels::sgemm_simt_configs())
    for (auto [ta, tb] : {std::pair{Op::N, Op::N}, std::pair{Op::N, Op::T}, std::pair{Op::T, Op::N}})
      for (const Shape& s : kShapes)
        for (bool odd_ld : {false, true}) {
          check_gemm(cfg.name, ta, tb, s, odd_ld, 0.0f);
          check_gemm(cfg.name, ta, tb, s, odd_ld, -1.5f);
        }
}

// NN through the transposed B ("+bt"): the per-stream cached workspace (sgemm_simt with the
// suffix), odd sizes, odd (unaligned) ldb, β = 0 on a NaN C; NT/TN with the suffix run the base.
TEST_F(GpuGemmSimt, TransposedBPathMatchesTheReference) {
  for (const char* config : {"simt_128x128x16_s3+bt", "simt_128x128x32_s3+bt", "simt_64x64x16_s3+bt"})
    for (const Shape& s : kShapes)
      for (bool odd_ld : {false, true}) {
        check_gemm(config, Op::N, Op::N, s, odd_ld, 0.0f);
        check_gemm(config, Op::N, Op::N, s, odd_ld, -1.5f);
      }
  for (auto [ta, tb] : {std::pair{Op::N, Op::T}, std::pair{Op::T, Op::N}})
    check_gemm("simt_128x128x32_s3+bt", ta, tb, {100, 4097, 17}, true, 0.0f);
  // The cache grows from a small problem to a larger one on the same stream.
  check_gemm("simt_128x128x32_s3+bt", Op::N, Op::N, {17, 17, 17}, true, 0.0f);
  check_gemm("simt_128x128x32_s3+bt", Op::N, Op::N, {1000, 1000, 1000}, true, 0.0f);
  kernels::sgemm_simt_release_bt_workspaces();
  check_gemm("simt_128x128x32_s3+bt", Op::N, Op::N, {100, 1, 3}, false, 0.0f);
  kernels::sgemm_simt_release_bt_workspaces();
}

TEST_F(GpuGemmSimt, TransposedBWithCallerWorkspace) {
  const std::int64_t m = 1000, n = 999, k = 1001, ldb = k + 1;  // odd ldb: unaligned B columns
  Operand a = make(m, k, m + 3, 5);
  Operand b = make(k, n, ldb, 6);
  Operand c = make(m, n, m, 7);
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(c.dev.data(), 0xff, c.dev.bytes(), stream_));  // NaN: β = 0 must not read C
  const std::size_t floats = kernels::sgemm_simt_bt_workspace_floats(n, k);
  EXPECT_EQ(floats, static_cast<std::size_t>(1000 * 1001));
  DeviceBuffer<float> ws(floats);
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.data(), 0xff, ws.bytes(), stream_));
  kernels::sgemm_simt_bt("simt_128x128x32_s3", m, n, k, 1.25f, a.dev.data(), a.host.ld(), b.dev.data(), ldb, 0.0f,
                         c.dev.data(), c.host.ld(), ws.data(), floats, stream_);
  const HostMatrix<float> got = download(c);
  const double err = gemm_error<float>('N', 'N', a.host.view(), b.host.view(), c.host.view(), got.view(), 1.25f, 0.0f);
  EXPECT_LE(err, static_cast<double>(k) + 2.0);
  EXPECT_THROW(kernels::sgemm_simt_bt("simt_128x128x32_s3", m, n, k, 1.0f, a.dev.data(), a.host.ld(), b.dev.data(),
                                      ldb, 0.0f, c.dev.data(), c.host.ld(), ws.data(), floats - 1, stream_),
               std::invalid_argument);  // short workspace
  EXPECT_THROW(kernels::sgemm_simt_bt("simt_128x128x32_s3", m, n, k, 1.0f, a.dev.data(), a.host.ld(), b.dev.data(),
                                      ldb, 0.0f, c.dev.data(), c.host.ld(), ws.data() + 1, floats - 4, stream_),
               std::invalid_argument);  // misaligned workspace
  EXPECT_EQ(kernels::sgemm_simt_config("simt_128x128x32_s3+bt").block_k, 32);
  EXPECT_THROW(kernels::sgemm_simt_config("no_such+bt"), std::invalid_argument);
}

TEST_F(GpuGemmSimt, LargeSquareAgainstSampledReference) {
  // 4097³ is beyond a full host reference in a test: 256 entries exactly in double.
  for (auto [ta, tb] : {std::pair{Op::N, Op::N}, std::pair{Op::N, Op::T}, std::pair{Op::T, Op::N}}) {
    const std::int64_t n = 4097;
    Operand a = make(n, n, n, 5), b = make(n, n, n, 6), c = make(n, n, n + 3, 7);
    const HostMatrix<float> c0 = c.host;
    kernels::sgemm_simt(ta, tb, n, n, n, 1.0f, a.dev.data(), n, b.dev.data(), n, 1.0f, c.dev.data(), n + 3, stream_);
    const HostMatrix<float> got = download(c);
    EXPECT_LE(sampled_gemm_error<float>(ta, tb, a.host.view(), b.host.view(), c0.view(), got.view(), 1.0f, 1.0f,
                                        256, 99, Written::all),
              static_cast<double>(n) + 2.0);
  }
}

TEST_F(GpuGemmSimt, ZeroKScalesC) {
  Operand a = make(5, 1, 5, 1), b = make(1, 7, 1, 2), c = make(5, 7, 5, 3);
  kernels::sgemm_simt(std::string(kernels::sgemm_simt_default_config()), Op::N, Op::N, 5, 7, 0, 1.0f, a.dev.data(), 5,
                      b.dev.data(), 1, 2.0f, c.dev.data(), 5, stream_);
  const HostMatrix<float> got = download(c);
  for (std::int64_t j = 0; j < 7; ++j)
    for (std::int64_t i = 0; i < 5; ++i) EXPECT_EQ(got(i, j), 2.0f * c.host(i, j));
}

TEST_F(GpuGemmSimt, BadArgumentsAreClearErrors) {
  DeviceBuffer<float> buf(64);
  const std::string cfg(kernels::sgemm_simt_default_config());
  EXPECT_THROW(kernels::sgemm_simt(cfg, Op::N, Op::N, -1, 4, 4, 1, buf.data(), 4, buf.data(), 4, 0, buf.data(), 4,
                                   stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::sgemm_simt(cfg, Op::T, Op::T, 4, 4, 4, 1, buf.data(), 4, buf.data(), 4, 0, buf.data(), 4,
                                   stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::sgemm_simt(cfg, Op::N, Op::N, 8, 4, 4, 1, buf.data(), 4, buf.data(), 4, 0, buf.data(), 8,
                                   stream_),
               std::invalid_argument);  // lda 4 < m 8
  EXPECT_THROW(kernels::sgemm_simt("no_such_config", Op::N, Op::N, 4, 4, 4, 1, buf.data(), 4, buf.data(), 4, 0,
                                   buf.data(), 4, stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::sgemm_triangular_simt("simt_128x64x16_s3", TriangleGrid::flipped, Uplo::lower, Op::N, Op::T, 4,
                                              4, 1, buf.data(), 4, buf.data(), 4, 0, buf.data(), 4, stream_),
               std::invalid_argument);  // non-square tiles
}

class GpuTriangular : public GpuGemmSimt {
 protected:
  void check_triangle(const std::string& config, TriangleGrid grid, Uplo uplo, Op ta, Op tb, std::int64_t n,
                      std::int64_t k, bool b_is_a, float beta) {
    SCOPED_TRACE(config + (grid == TriangleGrid::flipped ? " flipped" : " early_exit") +
                 (uplo == Uplo::lower ? " lower " : " upper ") + kernels::trans_name(ta, tb) + " n=" +
                 std::to_string(n) + " k=" + std::to_string(k) + (b_is_a ? " B=A" : "") +
                 " beta=" + std::to_string(beta));
    const Written w = uplo == Uplo::lower ? Written::lower : Written::upper;
    const std::int64_t ar = ta == Op::N ? n : k, ac = ta == Op::N ? k : n;
    const std::int64_t br = tb == Op::N ? k : n, bc = tb == Op::N ? n : k;
    Operand a = make(ar, ac, leading(ar, true), 41 + n);
    Operand b = b_is_a ? make(ar, ac, leading(ar, true), 41 + n) : make(br, bc, leading(br, false), 43 + k);
    Operand c = make(n, n, leading(n, false), 47);
    if (beta == 0.0f) {  // NaN inside the triangle, random values outside (which must survive)
      for (std::int64_t j = 0; j < n; ++j)
        for (std::int64_t i = 0; i < n; ++i)
          if (is_written(w, i, j)) c.host(i, j) = std::numeric_limits<float>::quiet_NaN();
      upload(c);
    }
    const HostMatrix<float> c0 = c.host;
    const float alpha = -1.0f;
    kernels::sgemm_triangular_simt(config, grid, uplo, ta, tb, n, k, alpha, a.dev.data(), a.host.ld(),
                                   b_is_a ? a.dev.data() : b.dev.data(), b.host.ld(), beta, c.dev.data(), c.host.ld(),
                                   stream_);
    const HostMatrix<float> got = download(c);
    EXPECT_EQ(changed_outside<float>(c0.view(), got.view(), w), 0) << "entries outside the triangle changed";
    const std::int64_t samples = n <= 200 ? n * n : 20000;
    EXPECT_LE(sampled_gemm_error<float>(ta, tb, a.host.view(), b.host.view(), c0.view(), got.view(), alpha, beta,
                                        samples, 7, w),
              static_cast<double>(k) + 2.0);
  }
};

TEST_F(GpuTriangular, BothGridsBothTrianglesOddSizes) {
  for (const auto& cfg : kernels::sgemm_simt_configs()) {
    if (cfg.block_m != cfg.block_n) continue;
    for (TriangleGrid grid : {TriangleGrid::flipped, TriangleGrid::early_exit})
      for (Uplo uplo : {Uplo::lower, Uplo::upper})
        for (auto [ta, tb] : {std::pair{Op::N, Op::T}, std::pair{Op::T, Op::N}})
          for (std::int64_t n : {1, 17, 129, 1000})
            for (std::int64_t k : {3, 1000}) {
              check_triangle(cfg.name, grid, uplo, ta, tb, n, k, true, 1.0f);
              check_triangle(cfg.name, grid, uplo, ta, tb, n, k, false, 0.0f);
            }
  }
}

TEST_F(GpuTriangular, DefaultLauncherLargeOddN) {
  for (Uplo uplo : {Uplo::lower, Uplo::upper})
    check_triangle(std::string(kernels::sgemm_simt_default_config()), TriangleGrid::flipped, uplo, Op::N, Op::T, 4097,
                   300, true, 1.0f);
}

}  // namespace
}  // namespace gpufact
