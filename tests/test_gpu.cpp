// Device tests (label gpu) for the kernel launchers: exact copies at odd sizes and misaligned
// pointers into poisoned outputs, the fill kernels, and the SM clock probe. Without a usable GPU
// every test reports skipped.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "kernels/common/block_stream.cuh"
#include "kernels/common/clock_probe.cuh"
#include "kernels/common/fill.cuh"
#include "kernels/memory/copy.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace gpufact {
namespace {

constexpr unsigned char kPoison = 0xA5;

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
      cudaGetLastError();
      GTEST_SKIP() << "no usable GPU: "
                   << (err != cudaSuccess ? std::string(cudaGetErrorName(err)) : std::string("no CUDA device"));
    }
    GPUFACT_CUDA_CHECK(cudaSetDevice(0));
    GPUFACT_CUDA_CHECK(cudaStreamCreate(&stream_));
  }
  void TearDown() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  cudaStream_t stream_ = nullptr;
};

// Copies `bytes` random bytes from src + src_offset to dst + dst_offset (both buffers poisoned
// around the target) and checks every byte inside and the guard bytes outside.
void check_copy(std::size_t bytes, std::size_t src_offset, std::size_t dst_offset, cudaStream_t stream,
                int blocks_per_sm = 0) {
  SCOPED_TRACE("bytes=" + std::to_string(bytes) + " src+" + std::to_string(src_offset) + " dst+" +
               std::to_string(dst_offset) + " blocks_per_sm=" + std::to_string(blocks_per_sm));
  constexpr std::size_t guard = 64;
  const std::size_t total = bytes + 2 * guard;
  DeviceBuffer<unsigned char> src(total), dst(total);  // cudaMalloc: 256-byte aligned

  std::vector<unsigned char> host(bytes);
  std::mt19937_64 gen(bytes * 131 + src_offset * 17 + dst_offset);
  for (auto& b : host) b = static_cast<unsigned char>(gen());
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(src.data(), 0x5A, total, stream));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(src.data() + src_offset, host.data(), bytes, cudaMemcpyHostToDevice, stream));
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(dst.data(), kPoison, total, stream));

  kernels::launch_copy(src.data() + src_offset, dst.data() + dst_offset, bytes, stream, blocks_per_sm);

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

TEST_F(Gpu, CopyWithFewBlocksStillCoversEverything) {
  // One block per SM: every block loops over many chunks.
  check_copy((std::size_t{16} << 20) + 4, 0, 0, stream_, 1);
  check_copy((std::size_t{4} << 20) + 8, 3, 5, stream_, 1);
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
