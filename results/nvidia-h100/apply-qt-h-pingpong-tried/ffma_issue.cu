// How often one warp per scheduler, or two, can issue the 8 x 8 register-tile FFMA loop of the
// resident compact-WY apply's phase 1 (16-byte shared loads of 8 + 8 operands per 256 FFMAs).
// Every block: blockDim threads, one block per SM, a 64-column x 260-row shared tile.
#include <cstdio>
#include <cuda_runtime.h>

constexpr int ld = 260;

// One step's operands: rows r … r + 3 of V's columns u and of C's columns 8e.
__device__ __forceinline__ void load_step(float4 (&va)[8], float4 (&ca)[8], const float* pv, const float* pc, int r) {
#pragma unroll
  for (int u = 0; u < 8; ++u) va[u] = *reinterpret_cast<const float4*>(pv + u * ld + r);
#pragma unroll
  for (int e = 0; e < 8; ++e) ca[e] = *reinterpret_cast<const float4*>(pc + 8 * e * ld + r);
}
// The step's 256 FFMAs: acc[u][e] += the 4-row dot product of V's column u and C's column 8e.
__device__ __forceinline__ void fma_step(float (&acc)[8][8], const float4 (&va)[8], const float4 (&ca)[8]) {
#pragma unroll
  for (int u = 0; u < 8; ++u)
#pragma unroll
    for (int e = 0; e < 8; ++e)
      acc[u][e] = fmaf(va[u].w, ca[e].w, fmaf(va[u].z, ca[e].z, fmaf(va[u].y, ca[e].y, fmaf(va[u].x, ca[e].x, acc[u][e]))));
}

template <int UNROLL, bool PIPE>
__global__ void __launch_bounds__(256, 1) loop(float* out, int steps, long long* cycles) {
  extern __shared__ float4 smem4[];
  float* s = reinterpret_cast<float*>(smem4);
  for (int i = threadIdx.x; i < 2 * 64 * ld; i += blockDim.x) s[i] = 1e-3f * (i % 97);
  __syncthreads();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int jg = lane % 8, q = lane / 8;
  const float* pv = s + 8 * (warp % 8) * ld + 4 * q;
  const float* pc = s + 64 * ld + jg * ld + 4 * q;
  float acc[8][8] = {};
  long long t0 = clock64();
  if (!PIPE) {
#pragma unroll UNROLL
    for (int it = 0; it < steps; ++it) {
      float4 va[8], ca[8];
      load_step(va, ca, pv, pc, (it * 16) & 255);
      fma_step(acc, va, ca);
    }
  } else {  // next step's operands loaded before this step's FMAs
    float4 va[8], ca[8];
    load_step(va, ca, pv, pc, 0);
#pragma unroll 1
    for (int it = 0; it < steps; ++it) {
      float4 vb[8], cb[8];
      load_step(vb, cb, pv, pc, ((it + 1) * 16) & 255);
      fma_step(acc, va, ca);
#pragma unroll
      for (int u = 0; u < 8; ++u) va[u] = vb[u], ca[u] = cb[u];
    }
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

template <int U, bool P>
void run(const char* name, int threads, int sms, float* out, long long* cyc, int steps) {
  const int smem = 2 * 64 * 260 * 4;
  cudaFuncSetAttribute(loop<U, P>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  loop<U, P><<<sms, threads, smem>>>(out, steps, cyc);  // warm-up
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  float best = 1e30f;
  long long c = 0;
  for (int rep = 0; rep < 5; ++rep) {
    cudaEventRecord(a);
    loop<U, P><<<sms, threads, smem>>>(out, steps, cyc);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (ms < best) best = ms;
    cudaMemcpy(&c, cyc, sizeof(c), cudaMemcpyDeviceToHost);
  }
  // FFMA issue per scheduler: each warp issues 256 FFMA per step; warps per scheduler = threads / 128.
  const double warps_per_sched = threads / 128.0;
  const double issue = 256.0 * steps * warps_per_sched / static_cast<double>(c);
  printf("%-28s threads %3d  cycles/step/warp %.1f  FFMA issue per scheduler-cycle %.3f  (%.3f ms)\n", name, threads,
         static_cast<double>(c) / steps, issue, best);
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
    run<1, false>("unroll 1", threads, sms, out, cyc, steps);
    run<2, false>("unroll 2", threads, sms, out, cyc, steps);
    run<4, false>("unroll 4", threads, sms, out, cyc, steps);
    run<1, true>("loads one step ahead", threads, sms, out, cyc, steps);
  }
  cudaError_t e = cudaDeviceSynchronize();
  printf("status: %s\n", cudaGetErrorString(e));
  return 0;
}
