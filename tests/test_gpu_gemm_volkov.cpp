// Device tests (label gpu) for volkov08 §4's SGEMM kernels: the paper's kernel, its ablations
// and split-k at odd sizes (1, 17, 1000, 4097; k not a multiple of 4 or 16), NN and NT, β = 0
// over a NaN-filled C and β ≠ 0, padded leading dimensions (the padding must stay untouched):
// each C against the double-precision reference (gemm_error ≤ k + 2) and, entry for entry,
// against the host replay of the same blocking and order (sgemm_blocked_host), which the
// kernels match exactly. One run tells whether every kernel is right.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/linalg/gemm_check.hpp"
#include "core/linalg/matrix_view.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/gemm/sgemm_blocked_host.hpp"
#include "kernels/gemm/sgemm_splitk.cuh"
#include "kernels/gemm/sgemm_volkov.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace gpufact {
namespace {

using factorizations::sgemm_splitk_host;
using factorizations::sgemm_volkov_host;
using kernels::VolkovVariant;

constexpr float kPadding = 12345.0f;

struct Problem {
  Op tb;
  std::int64_t m, n, k;
  float alpha, beta;
  HostMatrix<float> a, b, c0;  // c0: the C the kernel starts from (NaN when β = 0), padding = kPadding
};

Problem make(Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float beta, std::uint64_t seed) {
  Problem p{tb, m, n, k, -0.75f, beta, HostMatrix<float>(m, k, m + 3),
            tb == Op::N ? HostMatrix<float>(k, n, k + 2) : HostMatrix<float>(n, k, n + 2), HostMatrix<float>(m, n, m + 1)};
  fill_uniform(p.a.view(), seed);
  fill_uniform(p.b.view(), seed + 1);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < p.c0.ld(); ++i)
      p.c0(i, j) = i >= m ? kPadding : std::numeric_limits<float>::quiet_NaN();
  if (beta != 0.0f) {
    HostMatrix<float> c(m, n);
    fill_uniform(c.view(), seed + 2);
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t i = 0; i < m; ++i) p.c0(i, j) = c(i, j);
  }
  return p;
}

std::size_t storage(const HostMatrix<float>& h) { return static_cast<std::size_t>(h.ld() * h.cols()); }

class GpuGemm : public GpuTest {
 protected:
  // Runs `launch(a, b, c)` on device copies and returns C (with its padding).
  template <class Launch>
  HostMatrix<float> run(const Problem& p, Launch launch) {
    DeviceBuffer<float> a(storage(p.a)), b(storage(p.b)), c(storage(p.c0));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(a.data(), p.a.data(), a.bytes(), cudaMemcpyHostToDevice, stream_));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(b.data(), p.b.data(), b.bytes(), cudaMemcpyHostToDevice, stream_));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(c.data(), p.c0.data(), c.bytes(), cudaMemcpyHostToDevice, stream_));
    launch(a.data(), b.data(), c.data());
    HostMatrix<float> out(p.m, p.n, p.c0.ld());
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(out.data(), c.data(), c.bytes(), cudaMemcpyDeviceToHost, stream_));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return out;
  }

  // gemm_error ≤ k + 2, every entry equal to the host replay, the padding untouched.
  void check(const Problem& p, const HostMatrix<float>& got, const HostMatrix<float>& replay) {
    HostMatrix<float> c0(p.m, p.n);  // β = 0: the reference never looks at C
    for (std::int64_t j = 0; j < p.n; ++j)
      for (std::int64_t i = 0; i < p.m; ++i) c0(i, j) = p.beta == 0.0f ? 0.0f : p.c0(i, j);
    EXPECT_LE(gemm_error<float>('N', p.tb == Op::N ? 'N' : 'T', p.a.view(), p.b.view(), c0.view(), got.view(), p.alpha,
                                p.beta),
              static_cast<double>(p.k) + 2);
    std::int64_t differ = 0, padding = 0;
    for (std::int64_t j = 0; j < p.n; ++j) {
      for (std::int64_t i = 0; i < p.m; ++i) differ += !(got(i, j) == replay(i, j));
      for (std::int64_t i = p.m; i < got.ld(); ++i) padding += got(i, j) != kPadding;
    }
    EXPECT_EQ(differ, 0) << "entries that differ from the host replay of the same blocking";
    EXPECT_EQ(padding, 0) << "padding entries below row m that were written";
  }

  HostMatrix<float> volkov_replay(const Problem& p) {
    HostMatrix<float> r(p.m, p.n, p.c0.ld());
    for (std::int64_t j = 0; j < p.n; ++j)
      for (std::int64_t i = 0; i < r.ld(); ++i) r(i, j) = p.c0(i, j);
    sgemm_volkov_host(p.tb, p.m, p.n, p.k, p.alpha, p.a.data(), p.a.ld(), p.b.data(), p.b.ld(), p.beta, r.data(), r.ld());
    return r;
  }
};

using Sizes = std::tuple<std::int64_t, std::int64_t, std::int64_t>;
const Sizes kSizes[] = {{1, 1, 1},       {17, 17, 17},   {1, 16, 3},     {64, 16, 16},   {65, 17, 4},
                        {100, 33, 0},    {1000, 40, 1001}, {4097, 17, 203}, {17, 4097, 59}, {300, 300, 1024},
                        {129, 31, 4097}};

std::string describe(const Problem& p) {
  return std::string(p.tb == Op::N ? "NN" : "NT") + " m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) +
         " k=" + std::to_string(p.k) + " beta=" + std::to_string(p.beta);
}

TEST_F(GpuGemm, VolkovKernelAndNoPrefetchMatchTheReferenceAndTheReplay) {
  for (Op tb : {Op::N, Op::T})
    for (const auto& [m, n, k] : kSizes)
      for (float beta : {0.0f, 1.0f}) {
        const Problem p = make(tb, m, n, k, beta, 7 + static_cast<std::uint64_t>(m + 31 * n + 977 * k));
        const HostMatrix<float> replay = volkov_replay(p);
        for (VolkovVariant v : {VolkovVariant::paper, VolkovVariant::no_prefetch}) {
          SCOPED_TRACE(describe(p) + (v == VolkovVariant::paper ? " paper" : " no prefetch"));
          const auto got = run(p, [&](const float* a, const float* b, float* c) {
            kernels::sgemm_volkov(v, Op::N, tb, m, n, k, p.alpha, a, p.a.ld(), b, p.b.ld(), p.beta, c, p.c0.ld(),
                                  stream_);
          });
          check(p, got, replay);
        }
      }
}

TEST_F(GpuGemm, NoFetchRunsAndLeavesFiniteOutput) {
  // volkov08 §4.4's "no fetch": the product is wrong by design; it must run and stay finite.
  for (Op tb : {Op::N, Op::T})
    for (const auto& [m, n, k] : kSizes) {
      const Problem p = make(tb, m, n, k, 0.0f, 3);
      SCOPED_TRACE(describe(p));
      const auto got = run(p, [&](const float* a, const float* b, float* c) {
        kernels::sgemm_volkov(VolkovVariant::no_fetch, Op::N, tb, m, n, k, p.alpha, a, p.a.ld(), b, p.b.ld(), p.beta, c,
                              p.c0.ld(), stream_);
      });
      EXPECT_EQ(nonfinite_entries<float>(got.view()), 0.0);
    }
}

TEST_F(GpuGemm, SplitkMatchesTheReferenceAndTheReplayForSeveralSplits) {
  for (Op tb : {Op::N, Op::T})
    for (const auto& [m, n, k] : kSizes)
      for (int splits : {1, 3, 8, 64}) {
        const float beta = splits % 2 ? 0.0f : 0.5f;
        const Problem p = make(tb, m, n, k, beta, 101 + static_cast<std::uint64_t>(splits * 7 + m));
        SCOPED_TRACE(describe(p) + " splits=" + std::to_string(splits));
        HostMatrix<float> replay(p.m, p.n, p.c0.ld());
        for (std::int64_t j = 0; j < p.n; ++j)
          for (std::int64_t i = 0; i < replay.ld(); ++i) replay(i, j) = p.c0(i, j);
        sgemm_splitk_host(tb, m, n, k, splits, p.alpha, p.a.data(), p.a.ld(), p.b.data(), p.b.ld(), p.beta,
                          replay.data(), replay.ld());
        const std::size_t floats = kernels::sgemm_splitk_workspace_floats(m, n, splits);
        DeviceBuffer<float> ws(floats);
        GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.data(), 0xff, ws.bytes(), stream_));  // NaN: every slot must be written
        const auto got = run(p, [&](const float* a, const float* b, float* c) {
          kernels::sgemm_splitk(Op::N, tb, m, n, k, splits, p.alpha, a, p.a.ld(), b, p.b.ld(), p.beta, c, p.c0.ld(),
                                ws.data(), floats, stream_);
        });
        check(p, got, replay);
      }
}

TEST_F(GpuGemm, LaunchersRejectBadArguments) {
  DeviceBuffer<float> x(64);
  float* d = x.data();
  EXPECT_THROW(kernels::sgemm_volkov(VolkovVariant::paper, Op::T, Op::N, 4, 4, 4, 1, d, 4, d, 4, 0, d, 4, stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::sgemm_volkov(VolkovVariant::paper, Op::N, Op::N, -1, 4, 4, 1, d, 4, d, 4, 0, d, 4, stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::sgemm_volkov(VolkovVariant::paper, Op::N, Op::N, 4, 4, 4, 1, d, 3, d, 4, 0, d, 4, stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::sgemm_splitk(Op::N, Op::N, 4, 4, 4, 0, 1, d, 4, d, 4, 0, d, 4, d, 64, stream_),
               std::invalid_argument);
  EXPECT_THROW(kernels::sgemm_splitk(Op::N, Op::N, 4, 4, 4, 8, 1, d, 4, d, 4, 0, d, 4, d, 64, stream_),
               std::invalid_argument);  // 8 × 16 floats needed
  // Empty C: nothing runs, nothing fails.
  EXPECT_NO_THROW(kernels::sgemm_volkov(VolkovVariant::paper, Op::N, Op::N, 0, 4, 4, 1, d, 1, d, 4, 0, d, 1, stream_));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace
}  // namespace gpufact
