// Device tests (label gpu) for the kernel launchers: exact copies at odd sizes and misaligned
// pointers into poisoned outputs, the fill kernels, and the SM clock probe. Without a usable GPU
// every test reports skipped.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "kernels/common/block_stream.cuh"
#include "kernels/common/clock_probe.cuh"
#include "core/linalg/matrix_view.hpp"
#include "core/linalg/residual.hpp"
#include "kernels/common/fill.cuh"
#include "kernels/lu/panel_getf2.cuh"
#include "kernels/memory/copy.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <algorithm>
#include <chrono>
#include <thread>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace gpufact {
namespace {

constexpr unsigned char kPoison = 0xA5;

using Gpu = GpuTest;

// Copies `bytes` random bytes from src + src_offset to dst + dst_offset (both buffers poisoned
// around the target) and checks every byte inside and the guard bytes outside.
void check_copy(std::size_t bytes, std::size_t src_offset, std::size_t dst_offset, cudaStream_t stream,
                const std::string& variant = "u4") {
  SCOPED_TRACE("bytes=" + std::to_string(bytes) + " src+" + std::to_string(src_offset) + " dst+" +
               std::to_string(dst_offset) + " variant=" + variant);
  constexpr std::size_t guard = 64;
  const std::size_t total = bytes + 2 * guard;
  DeviceBuffer<unsigned char> src(total), dst(total);  // cudaMalloc: 256-byte aligned

  std::vector<unsigned char> host(bytes);
  std::mt19937_64 gen(bytes * 131 + src_offset * 17 + dst_offset);
  for (auto& b : host) b = static_cast<unsigned char>(gen());
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(src.data(), 0x5A, total, stream));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(src.data() + src_offset, host.data(), bytes, cudaMemcpyHostToDevice, stream));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(dst.data(), kPoison, total, stream));

  kernels::launch_copy(src.data() + src_offset, dst.data() + dst_offset, bytes, stream,
                       kernels::parse_stream_config(variant));

  std::vector<unsigned char> out(total);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(out.data(), dst.data(), total, cudaMemcpyDeviceToHost, stream));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));

  std::size_t wrong = 0, first_wrong = bytes;
  for (std::size_t i = 0; i < bytes; ++i)
    if (out[dst_offset + i] != host[i]) {
      if (wrong++ == 0) first_wrong = i;
    }
  EXPECT_EQ(wrong, 0u) << "first wrong byte at " << first_wrong;
  for (std::size_t i = 0; i < dst_offset; ++i) ASSERT_EQ(out[i], kPoison) << "wrote before dst at " << i;
  for (std::size_t i = dst_offset + bytes; i < total; ++i) ASSERT_EQ(out[i], kPoison) << "wrote past the end at " << i;
}

TEST_F(Gpu, CopyIsExactAtOddSizes) {
  for (std::size_t bytes : {std::size_t{4}, std::size_t{16}, std::size_t{1000}, std::size_t{(1 << 20) + 12}})
    check_copy(bytes, 0, 0, stream_);
}

TEST_F(Gpu, CopyIsExactFromAndToMisalignedPointers) {
  for (std::size_t bytes : {std::size_t{4}, std::size_t{1000}, std::size_t{(1 << 20) + 12}})
    for (std::size_t off = 1; off < 16; ++off) {
      check_copy(bytes, off, off, stream_);
      check_copy(bytes, off, 0, stream_);
      check_copy(bytes, 0, off, stream_);
    }
}

constexpr const char* kVariants[] = {"u1",      "u2",      "u4",      "u8",         "u4-cs",     "u8-cs",
                                     "u1-full", "u2-full", "u4-full", "u8-full", "u4-cs-full", "u8-cs-full"};

TEST_F(Gpu, EveryStreamVariantCopiesExactly) {
  // Sizes that leave partial chunks and waves; equal misalignment takes the peeled path.
  for (const char* v : kVariants) {
    check_copy((std::size_t{16} << 20) + 4, 0, 0, stream_, v);
    check_copy((std::size_t{4} << 20) + 8, 3, 3, stream_, v);
    check_copy(1000, 5, 5, stream_, v);
  }
}

TEST_F(Gpu, ReadChecksumAndWritePatternMatchTheHost) {
  constexpr std::size_t bytes = (std::size_t{3} << 20) + 7;
  DeviceBuffer<unsigned char> buf(bytes + 128);
  DeviceBuffer<unsigned> checksum(1);
  DeviceBuffer<unsigned long long> count(1);
  for (const char* v : kVariants)
    for (std::size_t off : {std::size_t{0}, std::size_t{1}, std::size_t{6}, std::size_t{127}}) {
      SCOPED_TRACE(std::string(v) + " offset " + std::to_string(off));
      const unsigned seed = 17u + static_cast<unsigned>(off);
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(buf.data(), 0xff, bytes + 128, stream_));
      kernels::launch_write(buf.data() + off, bytes, seed, stream_, kernels::parse_stream_config(v));
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, sizeof(unsigned long long), stream_));
      kernels::launch_count_pattern_mismatches(buf.data() + off, bytes, seed, count.data(), stream_);
      std::vector<unsigned char> host(bytes + 128);
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(host.data(), buf.data(), bytes + 128, cudaMemcpyDeviceToHost, stream_));
      GPUFACT_CUDA_CHECK(cudaMemsetAsync(checksum.data(), 0, sizeof(unsigned), stream_));
      kernels::launch_read(buf.data() + off, bytes, checksum.data(), stream_, kernels::parse_stream_config(v));
      unsigned long long wrong = 1;
      unsigned got = 0;
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&wrong, count.data(), sizeof wrong, cudaMemcpyDeviceToHost, stream_));
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&got, checksum.data(), sizeof got, cudaMemcpyDeviceToHost, stream_));
      GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      EXPECT_EQ(wrong, 0u);
      for (std::size_t j = 0; j < bytes; ++j)
        ASSERT_EQ(host[off + j], static_cast<unsigned char>((j * 131u + seed) & 0xffu)) << "byte " << j;
      for (std::size_t j = 0; j < off; ++j) ASSERT_EQ(host[j], 0xff) << "wrote before the region";
      for (std::size_t j = off + bytes; j < bytes + 128; ++j) ASSERT_EQ(host[j], 0xff) << "wrote past the region";
      // XOR of the 4-byte aligned words inside the region, from the host copy.
      const auto base = reinterpret_cast<std::uintptr_t>(buf.data());
      const std::uintptr_t first = (base + off + 3) / 4 * 4, end = (base + off + bytes) / 4 * 4;
      unsigned want = 0;
      for (std::uintptr_t a = first; a < end; a += 4) {
        unsigned w = 0;
        std::memcpy(&w, host.data() + (a - base), 4);
        want ^= w;
      }
      EXPECT_EQ(got, want);
    }
}

TEST_F(Gpu, StridedCopyTouchesOnlyItsWords) {
  constexpr std::size_t n = 1000, stride = 8;
  DeviceBuffer<std::uint32_t> src(n * stride), dst(n * stride);
  kernels::launch_fill_random_words(src.data(), n * stride, 99, stream_);
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(dst.data(), 0, n * stride * 4, stream_));
  kernels::launch_copy_strided(src.data(), dst.data(), n, stride, stream_);
  std::vector<std::uint32_t> a(n * stride), b(n * stride);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(a.data(), src.data(), n * stride * 4, cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(b.data(), dst.data(), n * stride * 4, cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  for (std::size_t i = 0; i < n * stride; ++i) ASSERT_EQ(b[i], i % stride == 0 ? a[i] : 0u) << i;
}

TEST_F(Gpu, CopyOfZeroBytesDoesNothing) { check_copy(0, 0, 0, stream_); }

TEST_F(Gpu, FillUniformIsInRangeAndSeeded) {
  const std::size_t n = 100003;
  DeviceBuffer<float> f(n);
  DeviceBuffer<double> d(n), d2(n);
  kernels::launch_fill_uniform(f.data(), n, 42, -1.0f, 1.0f, stream_);
  kernels::launch_fill_uniform(d.data(), n, 42, 2.0, 3.0, stream_);
  kernels::launch_fill_uniform(d2.data(), n, 43, 2.0, 3.0, stream_);
  std::vector<float> hf(n);
  std::vector<double> hd(n), hd2(n);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(hf.data(), f.data(), n * sizeof(float), cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(hd.data(), d.data(), n * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(hd2.data(), d2.data(), n * sizeof(double), cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  std::size_t zeros = 0;
  double sum = 0;
  for (float v : hf) {
    ASSERT_TRUE(v >= -1.0f && v <= 1.0f) << v;
    zeros += v == 0.0f;
    sum += v;
  }
  EXPECT_LT(zeros, 3u);
  EXPECT_NEAR(sum / static_cast<double>(n), 0.0, 0.02);  // uniform on [-1, 1): mean 0
  std::size_t same = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(hd[i] >= 2.0 && hd[i] < 3.0) << hd[i];
    same += hd[i] == hd2[i];
  }
  EXPECT_LT(same, 10u) << "different seeds must give different data";
  EXPECT_GT(*std::max_element(hd.begin(), hd.end()) - *std::min_element(hd.begin(), hd.end()), 0.99);
}

TEST_F(Gpu, RandomWordsAreNonZeroAndMismatchesAreCounted) {
  const std::size_t n = (1 << 20) + 3;
  DeviceBuffer<std::uint32_t> a(n), b(n);
  DeviceBuffer<unsigned long long> count(1);
  kernels::launch_fill_random_words(a.data(), n, 7, stream_);
  kernels::launch_fill_random_words(b.data(), n, 7, stream_);  // same seed: same words
  std::vector<std::uint32_t> ha(n);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(ha.data(), a.data(), n * 4, cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, sizeof(unsigned long long), stream_));
  kernels::launch_count_mismatches(a.data(), b.data(), n, count.data(), stream_);
  unsigned long long mismatches = 99;
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&mismatches, count.data(), sizeof mismatches, cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  EXPECT_EQ(mismatches, 0u);
  EXPECT_EQ(std::count(ha.begin(), ha.end(), 0u), 0);
  std::vector<std::uint32_t> sorted(ha.begin(), ha.begin() + 10000);
  std::sort(sorted.begin(), sorted.end());
  EXPECT_GT(std::unique(sorted.begin(), sorted.end()) - sorted.begin(), 9990);

  // Change three words (first, middle, last): exactly three mismatches.
  for (std::size_t i : {std::size_t{0}, n / 2, n - 1}) {
    const std::uint32_t flipped = ha[i] ^ 1u;
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(b.data() + i, &flipped, 4, cudaMemcpyHostToDevice, stream_));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, sizeof(unsigned long long), stream_));
  kernels::launch_count_mismatches(a.data(), b.data(), n, count.data(), stream_);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&mismatches, count.data(), sizeof mismatches, cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  EXPECT_EQ(mismatches, 3u);
}

TEST_F(Gpu, BlockStreamHoldsWorkUntilReleased) {
  PinnedBuffer<int> flags(2);
  flags[0] = 0;
  flags[1] = 0;
  cudaEvent_t after = nullptr;
  GPUFACT_CUDA_CHECK(cudaEventCreate(&after));
  kernels::launch_block_stream(flags.data(), flags.data() + 1, 5'000'000'000ull, stream_);
  GPUFACT_CUDA_CHECK(cudaEventRecord(after, stream_));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(cudaEventQuery(after), cudaErrorNotReady) << "work behind the hold ran before the release";
  __atomic_store_n(&flags[0], 1, __ATOMIC_SEQ_CST);
  GPUFACT_CUDA_CHECK(cudaEventSynchronize(after));
  EXPECT_EQ(flags[1], 0) << "the hold reported a timeout although it was released";
  cudaEventDestroy(after);
}

TEST_F(Gpu, BlockStreamGivesUpAfterItsTimeout) {
  PinnedBuffer<int> flags(2);
  flags[0] = 0;
  flags[1] = 0;
  kernels::launch_block_stream(flags.data(), flags.data() + 1, 2'000'000ull, stream_);  // 2 ms, never released
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  EXPECT_EQ(flags[1], 1);
}

// Factors an m × n panel on the device with the fused or the cooperative getf2 and returns
// (residual ‖PA − LU‖/(n‖A‖ε), info); `zero_column` >= 0 zeroes that column first.
std::pair<double, int> device_getf2(std::int64_t m, std::int64_t n, bool persistent, cudaStream_t s,
                                    std::int64_t zero_column = -1) {
  HostMatrix<float> a(m, n), lu(m, n);
  std::mt19937_64 gen(static_cast<std::uint64_t>(m * 1000 + n));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) a(i, j) = j == zero_column ? 0.0f : u(gen);
  const std::size_t bytes = static_cast<std::size_t>(m * n) * sizeof(float);
  DeviceBuffer<float> d(static_cast<std::size_t>(m * n));
  const int blocks = kernels::getf2_search_blocks(m);
  DeviceBuffer<float> bmax(static_cast<std::size_t>(blocks)), recip(1);
  DeviceBuffer<int> bidx(static_cast<std::size_t>(blocks)), ipiv(static_cast<std::size_t>(n)), info(1);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(d.data(), a.data(), bytes, cudaMemcpyHostToDevice, s));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(info.data(), 0, sizeof(int), s));
  const kernels::Getf2Workspace ws{bmax.data(), bidx.data(), recip.data()};
  if (persistent)
    kernels::launch_getf2_persistent(d.data(), m, m, n, ipiv.data(), info.data(), ws, s);
  else
    for (std::int64_t j = 0; j < std::min(m, n); ++j)
      kernels::launch_getf2_column(d.data(), m, m, n, j, ipiv.data(), info.data(), ws, s);
  std::vector<int> h_ipiv(static_cast<std::size_t>(n));
  int h_info = -1;
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(lu.data(), d.data(), bytes, cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(h_ipiv.data(), ipiv.data(), h_ipiv.size() * sizeof(int), cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&h_info, info.data(), sizeof(int), cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  return {lu_residual<float>(a.view(), lu.view(), h_ipiv.data()), h_info};
}

TEST_F(Gpu, Getf2KernelsFactorPanelsOfOddShapes) {
  for (bool persistent : {false, true})
    for (auto [m, n] : {std::pair<std::int64_t, std::int64_t>{64, 64}, {777, 33}, {5000, 64}, {100000, 64}, {1, 1}}) {
      SCOPED_TRACE(std::string(persistent ? "persistent " : "fused ") + std::to_string(m) + "x" + std::to_string(n));
      const auto [residual, info] = device_getf2(m, n, persistent, stream_);
      EXPECT_EQ(info, 0);
      EXPECT_LT(residual, 30.0);
    }
}

TEST_F(Gpu, Getf2KernelsReportTheFirstZeroPivotColumn) {
  for (bool persistent : {false, true}) {
    const auto [residual, info] = device_getf2(300, 40, persistent, stream_, 7);
    EXPECT_EQ(info, 8) << (persistent ? "persistent" : "fused");
    EXPECT_LT(residual, 30.0) << "a zero column still factors (LAPACK leaves it unscaled)";
  }
}

TEST_F(Gpu, ClockProbeGivesAPlausibleSmClock) {
  DeviceBuffer<kernels::ClockProbeSample> out(1);
  const unsigned long long spin_ns = 20'000'000;  // 20 ms
  kernels::launch_clock_probe(out.data(), spin_ns, stream_);
  kernels::ClockProbeSample s{};
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&s, out.data(), sizeof s, cudaMemcpyDeviceToHost, stream_));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  EXPECT_GE(s.nanoseconds, spin_ns);
  EXPECT_LT(s.nanoseconds, 10 * spin_ns);
  const double mhz = static_cast<double>(s.cycles) / static_cast<double>(s.nanoseconds) * 1e3;
  EXPECT_GT(mhz, 100.0);
  EXPECT_LT(mhz, 5000.0);
}

}  // namespace
}  // namespace gpufact
