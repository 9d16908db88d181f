// FFMA issue rate of register-tile loops of the resident compact-WY apply, by operand layout.
// One block per SM, 128 or 256 threads, a shared tile of 2 x 64 columns of 260 floats.
#include <cstdio>
#include <cuda_runtime.h>

constexpr int ld = 260;

// Layout Q (the kernel's phase 1): lane (jg = lane % 8, q = lane / 8); V's columns u (shared by
// the 8 jg lanes), C's columns jg + 8e; q splits the rows four ways. 8 + 32 wavefronts a step.
// Layout O: lane (jg = lane % 8, ug = lane / 8); V's columns ug + 4u, C's columns jg + 8e, all
// lanes the same rows. 8 + 8 wavefronts a step.
template <bool Q>
__device__ __forceinline__ void load_step(float4 (&va)[8], float4 (&ca)[8], const float* pv, const float* pc, int r) {
#pragma unroll
  for (int u = 0; u < 8; ++u) va[u] = *reinterpret_cast<const float4*>(pv + (Q ? u : 4 * u) * ld + r);
#pragma unroll
  for (int e = 0; e < 8; ++e) ca[e] = *reinterpret_cast<const float4*>(pc + 8 * e * ld + r);
}
// Order D: acc[u][e] += the 4-row dot product (four dependent FFMAs per entry, as in the kernel).
// Order K: the four rows outermost, 64 independent FFMAs between dependent ones.
template <bool D>
__device__ __forceinline__ void fma_step(float (&acc)[8][8], const float4 (&va)[8], const float4 (&ca)[8]) {
  if (D) {
#pragma unroll
    for (int u = 0; u < 8; ++u)
#pragma unroll
      for (int e = 0; e < 8; ++e)
        acc[u][e] = fmaf(va[u].w, ca[e].w, fmaf(va[u].z, ca[e].z, fmaf(va[u].y, ca[e].y, fmaf(va[u].x, ca[e].x, acc[u][e]))));
  } else {
    const float* a = reinterpret_cast<const float*>(va);
    const float* c = reinterpret_cast<const float*>(ca);
#pragma unroll
    for (int k = 0; k < 4; ++k)
#pragma unroll
      for (int u = 0; u < 8; ++u)
#pragma unroll
        for (int e = 0; e < 8; ++e) acc[u][e] = fmaf(a[4 * u + k], c[4 * e + k], acc[u][e]);
  }
}

template <int UNROLL, bool Q, bool D>
__global__ void __launch_bounds__(256, 1) loop(float* out, int steps, long long* cycles) {
  extern __shared__ float4 smem4[];
  float* s = reinterpret_cast<float*>(smem4);
  for (int i = threadIdx.x; i < 2 * 64 * ld; i += blockDim.x) s[i] = 1e-3f * (i % 97);
  __syncthreads();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int jg = lane % 8, g = lane / 8;
  const float* pv = Q ? s + 8 * (warp % 8) * ld + 4 * g : s + (32 * (warp % 2) + g) * ld;
  const float* pc = s + 64 * ld + jg * ld + (Q ? 4 * g : 0);
  const int stride = Q ? 16 : 4;
  float acc[8][8] = {};
  long long t0 = clock64();
#pragma unroll UNROLL
  for (int it = 0; it < steps; ++it) {
    float4 va[8], ca[8];
    load_step<Q>(va, ca, pv, pc, (it * stride) & 255);
    fma_step<D>(acc, va, ca);
  }
  long long t1 = clock64();
  float sum = 0;
#pragma unroll
  for (int u = 0; u < 8; ++u)
#pragma unroll
    for (int e = 0; e < 8; ++e) sum += acc[u][e];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

// Phase 3's rank-1 step, as in the kernel: z[j][r] -= v(r) y(j), rows 4a .. and 128 + 4a .., 8 columns.
__global__ void __launch_bounds__(256, 1) rank1(float* out, int steps, long long* cycles) {
  extern __shared__ float4 smem4[];
  float* s = reinterpret_cast<float*>(smem4);
  for (int i = threadIdx.x; i < 2 * 64 * ld; i += blockDim.x) s[i] = 1e-3f * (i % 97);
  __syncthreads();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int a3 = lane % 8 + 8 * (warp % 4), g3 = lane / 8 + 4 * (warp / 4);
  const float* pv = s + 4 * a3;
  const float* py = s + 64 * ld + 8 * g3;
  float z[8][8] = {};
  long long t0 = clock64();
#pragma unroll 2
  for (int it = 0; it < steps; ++it) {
    const int l = it & 63;
    const float4 v0 = *reinterpret_cast<const float4*>(pv + l * ld), v1 = *reinterpret_cast<const float4*>(pv + l * ld + 128);
    const float4 y0 = *reinterpret_cast<const float4*>(py + l * 64), y1 = *reinterpret_cast<const float4*>(py + l * 64 + 4);
    const float vr[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
    const float yr[8] = {y0.x, y0.y, y0.z, y0.w, y1.x, y1.y, y1.z, y1.w};
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int r = 0; r < 8; ++r) z[j][r] = fmaf(-vr[r], yr[j], z[j][r]);
  }
  long long t1 = clock64();
  float sum = 0;
#pragma unroll
  for (int u = 0; u < 8; ++u)
#pragma unroll
    for (int e = 0; e < 8; ++e) sum += z[u][e];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

// No loads in the loop: the operands stay in registers (the FMA pipe's own ceiling for this tile).
template <bool D>
__global__ void __launch_bounds__(256, 1) regs_only(float* out, int steps, long long* cycles) {
  extern __shared__ float4 smem4[];
  float* s = reinterpret_cast<float*>(smem4);
  for (int i = threadIdx.x; i < 2 * 64 * ld; i += blockDim.x) s[i] = 1e-3f * (i % 97);
  __syncthreads();
  const int lane = threadIdx.x % 32;
  float4 va[8], ca[8];
  load_step<true>(va, ca, s + 4 * (lane / 8), s + 64 * ld + (lane % 8) * ld, 0);
  float acc[8][8] = {};
  long long t0 = clock64();
#pragma unroll 2
  for (int it = 0; it < steps; ++it) fma_step<D>(acc, va, ca);
  long long t1 = clock64();
  float sum = 0;
#pragma unroll
  for (int u = 0; u < 8; ++u)
#pragma unroll
    for (int e = 0; e < 8; ++e) sum += acc[u][e];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

template <class K>
void run(const char* name, K kernel, int threads, int sms, float* out, long long* cyc, int steps, int ffma_per_step) {
  const int smem = 2 * 64 * ld * 4;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  kernel<<<sms, threads, smem>>>(out, steps, cyc);  // warm-up
  long long best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    kernel<<<sms, threads, smem>>>(out, steps, cyc);
    cudaDeviceSynchronize();
    long long c = 0;
    cudaMemcpy(&c, cyc, sizeof(c), cudaMemcpyDeviceToHost);
    if (best == 0 || c < best) best = c;
  }
  const double warps_per_sched = threads / 128.0;
  printf("%-34s threads %3d  FFMA issue per scheduler-cycle %.3f\n", name, threads,
         static_cast<double>(ffma_per_step) * steps * warps_per_sched / static_cast<double>(best));
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* out;
  long long* cyc;
  cudaMalloc(&out, sms * 256 * sizeof(float));
  cudaMalloc(&cyc, sms * sizeof(long long));
  const int steps = 20000;
  for (int threads : {128, 256}) {
    run("phase 1, q split, dot4 (kernel)", loop<2, true, true>, threads, sms, out, cyc, steps, 256);
    run("phase 1, q split, rows outer", loop<2, true, false>, threads, sms, out, cyc, steps, 256);
    run("phase 1, outer layout, dot4", loop<2, false, true>, threads, sms, out, cyc, steps, 256);
    run("phase 1, outer layout, rows outer", loop<2, false, false>, threads, sms, out, cyc, steps, 256);
    run("phase 1, outer layout, rows outer u4", loop<4, false, false>, threads, sms, out, cyc, steps, 256);
    run("registers only, dot4", regs_only<true>, threads, sms, out, cyc, steps, 256);
    run("registers only, rows outer", regs_only<false>, threads, sms, out, cyc, steps, 256);
    run("phase 3, rank-1 (kernel)", rank1, threads, sms, out, cyc, 4 * steps, 64);
  }
  cudaError_t e = cudaDeviceSynchronize();
  printf("status: %s\n", cudaGetErrorString(e));
  return 0;
}
