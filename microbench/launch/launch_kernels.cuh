// Probe kernels of volkov08.launch (volkov08 §3.1): a one-thread kernel that adds 1 to a device
// counter, launched through each API under test. The launchers issue `launches` launches in a
// loop and check the launch status once at the end, so the loop costs what the API costs.
#pragma once

#include <cuda_runtime_api.h>

namespace gpufact::kernels {

enum class LaunchApi {
  chevron,           // kernel<<<1, 1, 0, stream>>>(counter)
  driver,            // cuLaunchKernel, reached through cudaGetDriverEntryPointByVersion
  launch_ex_no_params,  // cudaLaunchKernelEx of a kernel with 0 bytes of parameters
  launch_ex_4kb,     // cudaLaunchKernelEx of a kernel with 4096 bytes of parameters
};

// Kernel parameter bytes each API's kernel takes (8, 8, 0, 4096).
int launch_param_bytes(LaunchApi api);

// The counter that `api`'s kernel increments: `own` for every API but launch_ex_no_params,
// whose parameterless kernel increments a __device__ variable; this returns its address.
unsigned long long* launch_counter(LaunchApi api, unsigned long long* own);

// Enqueues `launches` asynchronous launches on `stream`; each adds 1 to launch_counter(api, counter).
void launch_count_kernels(LaunchApi api, unsigned long long* counter, long launches, cudaStream_t stream);

// `launches` <<<>>> launches, each followed by cudaStreamSynchronize (volkov08 §3.1, "when
// synchronizing at each kernel invocation").
void launch_count_kernels_sync_each(unsigned long long* counter, long launches, cudaStream_t stream);

}  // namespace gpufact::kernels
