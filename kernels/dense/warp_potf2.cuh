// The register potf2 one warp runs on a small diagonal block: shared by the one-CTA fused
// diagonal kernel (potrf_fused) and the tile dataflow Cholesky (potrf_dataflow).
#pragma once

#include <cuda_runtime.h>

namespace gpufact::kernels {

// 1/√d for d > 0 near full precision: the hardware approximation (rsqrt.approx) refined by Newton
// steps, y ← y + y·(1 − d·y²)/2 (each doubles the correct bits; two for FP64). Shorter on the
// per-column critical chain than an IEEE sqrt followed by a division.
template <class T>
__device__ __forceinline__ T reciprocal_sqrt(T d) {
  T y = rsqrt(d);
  constexpr int kSteps = sizeof(T) == 4 ? 1 : 2;
#pragma unroll
  for (int k = 0; k < kSteps; ++k) y = fma(T(0.5) * y, fma(-d * y, y, T(1)), y);
  return y;
}

// potf2 of a W × W block by one warp, lane i holding row i in r[0..i] (lanes and rows past the
// block hold identity rows, so every step is uniform), each column's multipliers broadcast by
// shuffles — no barrier inside. The critical chain per column is FMA → shuffle → reciprocal
// square root → multiply: lane j + 1 updates its own diagonal from its own multiplier and
// broadcasts it ahead of the column's other shuffles (about 230 cycles a column on the H200 at
// W = 32). A non-positive or NaN pivot does not branch: from that column on every multiplier is
// zero, so the columns before it are final and the rest keep their partly updated values (as
// LAPACK's potf2 leaves them). Lane j writes 1/L(j, j) to dinv[j] (0 from the failing column on).
// Returns the first failing column, W if none (the same in every lane).
template <class T, int W>
__device__ __forceinline__ int warp_potf2(T (&r)[W], int lane, T* dinv) {
  int failed = W;
  T d = __shfl_sync(0xffffffffu, r[0], 0);
#pragma unroll
  for (int j = 0; j < W; ++j) {
    if (!(d > T(0)) && failed == W) failed = j;  // d is the same in every lane: uniform
    const bool live = failed == W;
    const T rinv = reciprocal_sqrt(live ? d : T(1));
    const T l = !live ? T(0) : (lane > j ? r[j] * rinv : (lane == j ? d * rinv : T(0)));
    if (live) r[j] = l;
    if (lane == j) dinv[j] = live ? rinv : T(0);
    if (j + 1 < W) {
      d = __shfl_sync(0xffffffffu, fma(-l, l, r[j + 1]), j + 1);
#pragma unroll
      for (int k = j + 1; k < W; ++k) r[k] = fma(-l, __shfl_sync(0xffffffffu, l, k), r[k]);
    }
  }
  return failed;
}

// The same factorization four columns at a time: each 4 × 4 diagonal block is gathered into
// every lane (10 shuffles) and factored there redundantly, each lane solves its row's four
// entries against it, and the columns to the right take one rank-4 update (4 shuffles per
// column). The per-column chain loses its shuffle round trip: four reciprocal square roots in a
// row, then one broadcast per four columns. Same results up to rounding, same failure semantics
// (a column from the failing one on keeps its partly updated values, its multipliers and
// reciprocal zero).
template <class T, int W>
__device__ __forceinline__ int warp_potf2_x4(T (&r)[W], int lane, T* dinv) {
  static_assert(W % 4 == 0, "whole 4-column blocks");
  int failed = W;
#pragma unroll
  for (int p = 0; p < W; p += 4) {
    T a[4][4], l[4][4], rinv[4];
#pragma unroll
    for (int u = 0; u < 4; ++u)
#pragma unroll
      for (int v = 0; v <= u; ++v) a[u][v] = __shfl_sync(0xffffffffu, r[p + v], p + u);
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      T d = a[v][v];
#pragma unroll
      for (int q = 0; q < v; ++q) d = fma(-l[v][q], l[v][q], d);
      if (!(d > T(0)) && failed == W) failed = p + v;  // the same in every lane
      rinv[v] = failed == W ? reciprocal_sqrt(d) : T(0);
#pragma unroll
      for (int u = v + 1; u < 4; ++u) {
        T t = a[u][v];
#pragma unroll
        for (int q = 0; q < v; ++q) t = fma(-l[u][q], l[v][q], t);
        l[u][v] = t * rinv[v];
      }
      l[v][v] = d * rinv[v];
    }
    // Row `lane`'s entries in these columns (in the block itself this gives its row of L).
    T x[4];
#pragma unroll
    for (int v = 0; v < 4; ++v) {
      T t = r[p + v];
#pragma unroll
      for (int q = 0; q < v; ++q) t = fma(-x[q], l[v][q], t);
      x[v] = t * rinv[v];
      if (failed > p + v) r[p + v] = x[v];  // a live column
      if (lane == p + v) dinv[p + v] = rinv[v];
    }
#pragma unroll
    for (int k = p + 4; k < W; ++k) {
      T t = r[k];
#pragma unroll
      for (int v = 0; v < 4; ++v) t = fma(-x[v], __shfl_sync(0xffffffffu, x[v], k), t);
      r[k] = t;
    }
  }
  return failed;
}

}  // namespace gpufact::kernels
