#include <cstdio>
#include <cuda_runtime.h>
constexpr int ld = 260, NB = 64;
// Phase 1 with row-major V (granule swizzle (r >> 2) & 7), two 16-row steps per iteration.
template <int ORDER>
__global__ void __launch_bounds__(256, 1) p1(float* out, int steps, long long* cycles) {
  extern __shared__ float4 smem4[];
  float* s = reinterpret_cast<float*>(smem4);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int jg = lane % 8, q = lane / 8, ib = warp;
  const float* pc = s + 64 * ld + jg * ld + 4 * q;
  // V(r, 8ib + 4w ..) for r = r0 + 16h + 4q + k lies at r*64 + 4*((2ib + w) ^ (q + 4h)).
  int off[2][2];
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int w = 0; w < 2; ++w) off[h][w] = (16 * h + 4 * q) * NB + 4 * ((2 * ib + w) ^ (q + 4 * h));
  float acc[8][8] = {};
  long long t0 = clock64();
#pragma unroll 1
  for (int it = 0; it < steps; ++it) {
    const int r0 = (it * 32) & 255;
    const float* pv = s + r0 * NB;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float4 va[4][2], ca[8];
#pragma unroll
      for (int k = 0; k < 4; ++k)
#pragma unroll
        for (int w = 0; w < 2; ++w) va[k][w] = *reinterpret_cast<const float4*>(pv + off[h][w] + k * NB);
#pragma unroll
      for (int e = 0; e < 8; ++e) ca[e] = *reinterpret_cast<const float4*>(pc + 8 * e * ld + r0 + 16 * h);
      if (ORDER == 0) {
#pragma unroll
        for (int k = 0; k < 4; ++k)
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            const float c = reinterpret_cast<const float*>(&ca[e])[k];
            const float* vk = reinterpret_cast<const float*>(va[k]);
#pragma unroll
            for (int u = 0; u < 8; ++u) acc[u][e] = fmaf(vk[u], c, acc[u][e]);
          }
      } else if (ORDER == 1) {
#pragma unroll
        for (int e = 0; e < 8; ++e)
#pragma unroll
          for (int k = 0; k < 4; ++k) {
            const float c = reinterpret_cast<const float*>(&ca[e])[k];
            const float* vk = reinterpret_cast<const float*>(va[k]);
#pragma unroll
            for (int u = 0; u < 8; ++u) acc[u][e] = fmaf(vk[u], c, acc[u][e]);
          }
      } else {  // serpentine over u
#pragma unroll
        for (int k = 0; k < 4; ++k)
#pragma unroll
          for (int e = 0; e < 8; ++e) {
            const float c = reinterpret_cast<const float*>(&ca[e])[k];
            const float* vk = reinterpret_cast<const float*>(va[k]);
#pragma unroll
            for (int uu = 0; uu < 8; ++uu) {
              const int u = (e & 1) ? 7 - uu : uu;
              acc[u][e] = fmaf(vk[u], c, acc[u][e]);
            }
          }
      }
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

// Phase 3 with row-major V: lane rows 4a + i and 128 + 4a + i (swizzle a & 7 for all eight), four l's a step.
template <int ORDER>
__global__ void __launch_bounds__(256, 1) p3(float* out, int steps, long long* cycles) {
  extern __shared__ float4 smem4[];
  float* s = reinterpret_cast<float*>(smem4);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int a3 = lane % 8 + 8 * (warp % 4), g3 = lane / 8 + 4 * (warp / 4);
  const int sw = a3 & 7;
  const float* pv = s + 4 * a3 * NB;
  const float* py = s + 64 * ld + 8 * g3;
  float z[8][8] = {};
  long long t0 = clock64();
#pragma unroll 1
  for (int it = 0; it < steps; it += 16) {
#pragma unroll 2
    for (int g = 0; g < 16; ++g) {
      float4 vq[8], yq[4][2];
      const float* pg = pv + 4 * (g ^ sw);
#pragma unroll
      for (int i = 0; i < 8; ++i) vq[i] = *reinterpret_cast<const float4*>(pg + ((i % 4) + 128 * (i / 4)) * NB);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        yq[k][0] = *reinterpret_cast<const float4*>(py + (4 * g + k) * 64);
        yq[k][1] = *reinterpret_cast<const float4*>(py + (4 * g + k) * 64 + 4);
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float* yk = reinterpret_cast<const float*>(yq[k]);
        if (ORDER == 0) {
#pragma unroll
          for (int r = 0; r < 8; ++r) {
            const float v = reinterpret_cast<const float*>(&vq[r])[k];
#pragma unroll
            for (int j = 0; j < 8; ++j) z[j][r] = fmaf(-v, yk[j], z[j][r]);
          }
        } else {
#pragma unroll
          for (int j = 0; j < 8; ++j) {
#pragma unroll
            for (int r = 0; r < 8; ++r) z[j][r] = fmaf(-reinterpret_cast<const float*>(&vq[r])[k], yk[j], z[j][r]);
          }
        }
      }
    }
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

template <class K>
void run(const char* name, K kern, int sms, float* out, long long* cyc, int steps, double fma_per_step) {
  const int smem = 2 * 64 * ld * 4;
  cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  for (int threads : {128, 256}) {
    kern<<<sms, threads, smem>>>(out, steps, cyc);
    long long best = 0;
    for (int rep = 0; rep < 3; ++rep) {
      kern<<<sms, threads, smem>>>(out, steps, cyc);
      cudaDeviceSynchronize();
      long long c = 0;
      cudaMemcpy(&c, cyc, sizeof(c), cudaMemcpyDeviceToHost);
      if (!best || c < best) best = c;
    }
    printf("%-36s threads %3d  FFMA issue per scheduler-cycle %.3f\n", name, threads, fma_per_step * steps * (threads / 128.0) / best);
  }
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* out;
  long long* cyc;
  cudaMalloc(&out, sms * 256 * sizeof(float));
  cudaMalloc(&cyc, sms * sizeof(long long));
  run("phase 1 row-major, k e u", p1<0>, sms, out, cyc, 10000, 512);
  run("phase 1 row-major, e k u", p1<1>, sms, out, cyc, 10000, 512);
  run("phase 1 row-major, serpentine", p1<2>, sms, out, cyc, 10000, 512);
  run("phase 3 row-major, k r j", p3<0>, sms, out, cyc, 16 * 1250, 256);
  run("phase 3 row-major, k j r", p3<1>, sms, out, cyc, 16 * 1250, 256);
  printf("status: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
