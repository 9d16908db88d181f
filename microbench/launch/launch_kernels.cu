#include "microbench/launch/launch_kernels.cuh"

#include "core/cuda/check.hpp"

// Driver API types only: the binary must start on machines without libcuda.so.1, so
// cuLaunchKernel is reached through the runtime (cudaGetDriverEntryPointByVersion), never linked.
#include <cuda.h>

#include <string>

namespace gpufact::kernels {
namespace {

// The "simplest possible" program of volkov08 §3.1; the counter makes every launch checkable.
__global__ void count_launch_kernel(unsigned long long* counter) { atomicAdd(counter, 1ull); }

__device__ unsigned long long param_free_launch_count;

__global__ void count_launch_no_params_kernel() { atomicAdd(&param_free_launch_count, 1ull); }

// 4096 bytes of parameters, the classic kernel parameter limit. Only the last word is read, so
// the whole block must have arrived for the count to be right.
struct LaunchParams4KB {
  unsigned long long* counter;
  unsigned long long increment[511];
};
static_assert(sizeof(LaunchParams4KB) == 4096, "4 KB of kernel parameters");

__global__ void count_launch_4kb_kernel(LaunchParams4KB p) { atomicAdd(p.counter, p.increment[510]); }

using LaunchKernelFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                    CUstream, void**, void**);
using GetErrorNameFn = CUresult (*)(CUresult, const char**);

template <class Fn>
Fn driver_entry_point(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  // 12000: the cuLaunchKernel ABI of CUDA 12.0 (unchanged since 4.0), matching LaunchKernelFn.
  GPUFACT_CUDA_CHECK(cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr)
    throw CudaError(std::string("driver entry point ") + symbol + " not found (query result " +
                    std::to_string(static_cast<int>(found)) + ")");
  return reinterpret_cast<Fn>(fn);
}

void launch_through_driver(unsigned long long* counter, long launches, cudaStream_t stream) {
  static const LaunchKernelFn launch = driver_entry_point<LaunchKernelFn>("cuLaunchKernel");
  // cudaFunction_t and CUfunction are the same handle type; looked up per call because the
  // handle belongs to the current device's context.
  cudaFunction_t fn = nullptr;
  GPUFACT_CUDA_CHECK(cudaGetFuncBySymbol(&fn, reinterpret_cast<const void*>(&count_launch_kernel)));
  void* args[] = {&counter};
  for (long i = 0; i < launches; ++i) {
    const CUresult r = launch(fn, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr);
    if (r != CUDA_SUCCESS) {
      static const GetErrorNameFn error_name = driver_entry_point<GetErrorNameFn>("cuGetErrorName");
      const char* name = nullptr;
      error_name(r, &name);
      throw CudaError(std::string("cuLaunchKernel failed: ") + (name ? name : "unknown error") + " (" +
                      std::to_string(static_cast<int>(r)) + ") at launch " + std::to_string(i));
    }
  }
}

void check_launch_ex(cudaError_t e, long i) {
  if (e != cudaSuccess) {
    cudaGetLastError();  // reported here; keep it out of later launch checks
    throw CudaError(std::string("cudaLaunchKernelEx failed: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
                    ") at launch " + std::to_string(i));
  }
}

cudaLaunchConfig_t one_thread_config(cudaStream_t stream) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(1);
  cfg.blockDim = dim3(1);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  cfg.attrs = nullptr;
  cfg.numAttrs = 0;
  return cfg;
}

}  // namespace

int launch_param_bytes(LaunchApi api) {
  switch (api) {
    case LaunchApi::launch_ex_no_params: return 0;
    case LaunchApi::launch_ex_4kb: return static_cast<int>(sizeof(LaunchParams4KB));
    default: return static_cast<int>(sizeof(unsigned long long*));
  }
}

unsigned long long* launch_counter(LaunchApi api, unsigned long long* own) {
  if (api != LaunchApi::launch_ex_no_params) return own;
  void* p = nullptr;
  GPUFACT_CUDA_CHECK(cudaGetSymbolAddress(&p, param_free_launch_count));
  return static_cast<unsigned long long*>(p);
}

void launch_count_kernels(LaunchApi api, unsigned long long* counter, long launches, cudaStream_t stream) {
  switch (api) {
    case LaunchApi::chevron:
      for (long i = 0; i < launches; ++i) count_launch_kernel<<<1, 1, 0, stream>>>(counter);
      break;
    case LaunchApi::driver:
      launch_through_driver(counter, launches, stream);
      break;
    case LaunchApi::launch_ex_no_params: {
      const cudaLaunchConfig_t cfg = one_thread_config(stream);
      for (long i = 0; i < launches; ++i) check_launch_ex(cudaLaunchKernelEx(&cfg, count_launch_no_params_kernel), i);
      break;
    }
    case LaunchApi::launch_ex_4kb: {
      const cudaLaunchConfig_t cfg = one_thread_config(stream);
      LaunchParams4KB p{};
      p.counter = counter;
      p.increment[510] = 1;
      for (long i = 0; i < launches; ++i) check_launch_ex(cudaLaunchKernelEx(&cfg, count_launch_4kb_kernel, p), i);
      break;
    }
  }
  GPUFACT_CHECK_LAUNCH();
}

void launch_count_kernels_sync_each(unsigned long long* counter, long launches, cudaStream_t stream) {
  for (long i = 0; i < launches; ++i) {
    count_launch_kernel<<<1, 1, 0, stream>>>(counter);
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
