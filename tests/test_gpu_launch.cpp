// Device tests (label gpu) for volkov08.launch's probe kernels: every launch API adds exactly one
// to the device counter per launch, and so does every node of a replayed graph. Without a usable
// GPU every test reports skipped.
#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/cuda/graph.hpp"
#include "microbench/launch/launch_kernels.cuh"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include "tests/gpu_test.hpp"

#include <string>

namespace gpufact {
namespace {

using kernels::LaunchApi;

class GpuLaunch : public GpuTest {
 protected:
  unsigned long long read(unsigned long long* counter) {
    unsigned long long v = 0;
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&v, counter, sizeof v, cudaMemcpyDeviceToHost, stream_));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return v;
  }
  void zero(unsigned long long* counter) {
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned long long), stream_));
  }
};

TEST_F(GpuLaunch, EveryApiCountsEachLaunchOnce) {
  DeviceBuffer<unsigned long long> own(1);
  for (LaunchApi api : {LaunchApi::chevron, LaunchApi::driver, LaunchApi::launch_ex_no_params, LaunchApi::launch_ex_4kb}) {
    SCOPED_TRACE("api " + std::to_string(static_cast<int>(api)));
    unsigned long long* counter = kernels::launch_counter(api, own.data());
    zero(counter);
    kernels::launch_count_kernels(api, counter, 1, stream_);
    kernels::launch_count_kernels(api, counter, 257, stream_);
    EXPECT_EQ(read(counter), 258u);
  }
}

TEST_F(GpuLaunch, ParameterFreeKernelUsesItsOwnCounter) {
  DeviceBuffer<unsigned long long> own(1);
  zero(own.data());
  unsigned long long* counter = kernels::launch_counter(LaunchApi::launch_ex_no_params, own.data());
  ASSERT_NE(counter, own.data());
  zero(counter);
  kernels::launch_count_kernels(LaunchApi::launch_ex_no_params, counter, 10, stream_);
  EXPECT_EQ(read(counter), 10u);
  EXPECT_EQ(read(own.data()), 0u);
}

TEST_F(GpuLaunch, ParameterSizes) {
  EXPECT_EQ(kernels::launch_param_bytes(LaunchApi::launch_ex_no_params), 0);
  EXPECT_EQ(kernels::launch_param_bytes(LaunchApi::launch_ex_4kb), 4096);
  EXPECT_EQ(kernels::launch_param_bytes(LaunchApi::chevron), 8);
}

TEST_F(GpuLaunch, SynchronizedLaunchesCount) {
  DeviceBuffer<unsigned long long> counter(1);
  zero(counter.data());
  kernels::launch_count_kernels_sync_each(counter.data(), 33, stream_);
  EXPECT_EQ(read(counter.data()), 33u);
}

TEST_F(GpuLaunch, EveryGraphNodeCountsOncePerReplay) {
  DeviceBuffer<unsigned long long> counter(1);
  zero(counter.data());
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  auto graph = CapturedGraph::capture(stream_, [&](cudaStream_t s) {
    kernels::launch_count_kernels(LaunchApi::chevron, counter.data(), 50, s);
  });
  EXPECT_EQ(read(counter.data()), 0u) << "capturing must not run the kernels";
  for (int i = 0; i < 3; ++i) graph.launch(stream_);
  EXPECT_EQ(read(counter.data()), 150u);
}

}  // namespace
}  // namespace gpufact
