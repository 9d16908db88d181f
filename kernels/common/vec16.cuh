// N consecutive entries of shared memory (16-byte aligned, N·sizeof(T) a multiple of 16) moved by
// 16-byte loads and stores: N/4 in FP32, N/2 in FP64, instead of N scalar accesses.
#pragma once

#include <cuda_runtime.h>

namespace gpufact::kernels {

template <class T, int N>
__device__ __forceinline__ void load_vec(const T* src, T (&dst)[N]) {
  static_assert(N * sizeof(T) % 16 == 0, "whole 16-byte vectors");
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int c = 0; c < N / 4; ++c) {
      const float4 v = reinterpret_cast<const float4*>(src)[c];
      dst[4 * c] = v.x;
      dst[4 * c + 1] = v.y;
      dst[4 * c + 2] = v.z;
      dst[4 * c + 3] = v.w;
    }
  } else {
#pragma unroll
    for (int c = 0; c < N / 2; ++c) {
      const double2 v = reinterpret_cast<const double2*>(src)[c];
      dst[2 * c] = v.x;
      dst[2 * c + 1] = v.y;
    }
  }
}

template <class T, int N>
__device__ __forceinline__ void store_vec(const T (&src)[N], T* dst) {
  static_assert(N * sizeof(T) % 16 == 0, "whole 16-byte vectors");
  if constexpr (sizeof(T) == 4) {
#pragma unroll
    for (int c = 0; c < N / 4; ++c)
      reinterpret_cast<float4*>(dst)[c] = make_float4(src[4 * c], src[4 * c + 1], src[4 * c + 2], src[4 * c + 3]);
  } else {
#pragma unroll
    for (int c = 0; c < N / 2; ++c) reinterpret_cast<double2*>(dst)[c] = make_double2(src[2 * c], src[2 * c + 1]);
  }
}

}  // namespace gpufact::kernels
