// Functions shared by host and device code: __host__ __device__ under nvcc, plain elsewhere.
#pragma once

#if defined(__CUDACC__)
#define GPUFACT_HOST_DEVICE __host__ __device__
#else
#define GPUFACT_HOST_DEVICE
#endif
