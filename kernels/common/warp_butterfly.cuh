// Sums over a warp's 32 lanes: of N values per lane, with about N shuffles instead of 5·N (a
// transposed butterfly), and of one value (warp_sum).
#pragma once

#include <cuda_runtime.h>

namespace gpufact::kernels {

// One stage of the transposed butterfly per H (N/2, N/4, …, 1): the lane keeps H of its values
// and adds its partner's (lane ^ offset) copy of the same H. After every stage lane L holds the
// warp's sum of value L >> log2(32 / N) (N <= 32) in p[0]; N > 32 leaves N/32 values per lane.
template <class T, int N, int H>
__device__ __forceinline__ void butterfly(T (&p)[N], int lane) {
  if constexpr (H >= 1) {
    constexpr int offset = 32 * H / N;
    const bool upper = (lane & offset) != 0;
#pragma unroll
    for (int i = 0; i < H; ++i) {
      const T send = upper ? p[i] : p[i + H];
      const T keep = upper ? p[i + H] : p[i];
      p[i] = keep + __shfl_xor_sync(0xffffffffu, send, offset);
    }
    butterfly<T, N, H / 2>(p, lane);
  }
}

// The sum of x over the warp's 32 lanes, in every lane.
template <class T>
__device__ __forceinline__ T warp_sum(T x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

}  // namespace gpufact::kernels
