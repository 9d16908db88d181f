// Phase 1 and phase 3 loops of the resident compact-WY apply with V column-major (as loaded) or
// row-major (each 16-byte group holds four reflectors of one row), one block per SM.
#include <cstdio>
#include <cuda_runtime.h>

constexpr int ld = 260;   // column-major buffers
constexpr int NB = 64;
__device__ __forceinline__ int swz(int r) { return (r ^ (r >> 2)) & 7; }
// Row-major V: V(r, l) at r*64 + 4*((l/4) ^ swz(r)) + l%4.
__device__ __forceinline__ const float* vt_at(const float* s, int r, int l4) { return s + r * NB + 4 * ((l4 >> 2) ^ swz(r)); }

template <int MODE, int kP1 = 2, int kP3 = 2>
__global__ void __launch_bounds__(256, 1) kern(float* out, int steps, long long* cycles) {
  extern __shared__ float4 smem4[];
  float* s = reinterpret_cast<float*>(smem4);
  for (int i = threadIdx.x; i < 2 * 64 * ld; i += blockDim.x) s[i] = 1e-3f * (i % 97);
  __syncthreads();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  float acc[8][8] = {};
  long long t0 = clock64();
  if (MODE == 0) {  // phase 1, V column-major (the kernel)
    const int jg = lane % 8, q = lane / 8;
    const float* pv = s + 8 * warp * ld + 4 * q;
    const float* pc = s + 64 * ld + jg * ld + 4 * q;
#pragma unroll 2
    for (int it = 0; it < steps; ++it) {
      const int r = (it * 16) & 255;
      float4 va[8], ca[8];
#pragma unroll
      for (int u = 0; u < 8; ++u) va[u] = *reinterpret_cast<const float4*>(pv + u * ld + r);
#pragma unroll
      for (int e = 0; e < 8; ++e) ca[e] = *reinterpret_cast<const float4*>(pc + 8 * e * ld + r);
#pragma unroll
      for (int u = 0; u < 8; ++u)
#pragma unroll
        for (int e = 0; e < 8; ++e)
          acc[u][e] = fmaf(va[u].w, ca[e].w, fmaf(va[u].z, ca[e].z, fmaf(va[u].y, ca[e].y, fmaf(va[u].x, ca[e].x, acc[u][e]))));
    }
  } else if (MODE == 1) {  // phase 1, V row-major
    const int jg = lane % 8, q = lane / 8;
    const float* pc = s + 64 * ld + jg * ld + 4 * q;
#pragma unroll kP1
    for (int it = 0; it < steps; ++it) {
      const int r = (it * 16) & 255;
      float4 va[4][2], ca[8];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        va[k][0] = *reinterpret_cast<const float4*>(vt_at(s, r + 4 * q + k, 8 * warp));
        va[k][1] = *reinterpret_cast<const float4*>(vt_at(s, r + 4 * q + k, 8 * warp + 4));
      }
#pragma unroll
      for (int e = 0; e < 8; ++e) ca[e] = *reinterpret_cast<const float4*>(pc + 8 * e * ld + r);
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float* vk = reinterpret_cast<const float*>(va[k]);
#pragma unroll
        for (int e = 0; e < 8; ++e) {
          const float c = reinterpret_cast<const float*>(&ca[e])[k];
#pragma unroll
          for (int u = 0; u < 8; ++u) acc[u][e] = fmaf(vk[u], c, acc[u][e]);
        }
      }
    }
  } else if (MODE == 2) {  // phase 3, V column-major (the kernel's rank-1 steps)
    const int a3 = lane % 8 + 8 * (warp % 4), g3 = lane / 8 + 4 * (warp / 4);
    const float* pv = s + 4 * a3;
    const float* py = s + 64 * ld + 8 * g3;
#pragma unroll 2
    for (int it = 0; it < 4 * steps; ++it) {
      const int l = it & 63;
      const float4 v0 = *reinterpret_cast<const float4*>(pv + l * ld), v1 = *reinterpret_cast<const float4*>(pv + l * ld + 128);
      const float4 y0 = *reinterpret_cast<const float4*>(py + l * 64), y1 = *reinterpret_cast<const float4*>(py + l * 64 + 4);
      const float vr[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
      const float yr[8] = {y0.x, y0.y, y0.z, y0.w, y1.x, y1.y, y1.z, y1.w};
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int r = 0; r < 8; ++r) acc[j][r] = fmaf(-vr[r], yr[j], acc[j][r]);
    }
  } else {  // phase 3, V row-major: four l's a step
    const int a3 = lane % 8 + 8 * (warp % 4), g3 = lane / 8 + 4 * (warp / 4);
    const float* py = s + 64 * ld + 8 * g3;
#pragma unroll kP3
    for (int it = 0; it < steps; ++it) {
      const int l4 = (it * 4) & 63;
      float4 vq[8], yq[4][2];
#pragma unroll
      for (int i = 0; i < 8; ++i) vq[i] = *reinterpret_cast<const float4*>(vt_at(s, 4 * a3 + (i % 4) + 128 * (i / 4), l4));
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        yq[k][0] = *reinterpret_cast<const float4*>(py + (l4 + k) * 64);
        yq[k][1] = *reinterpret_cast<const float4*>(py + (l4 + k) * 64 + 4);
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const float* yk = reinterpret_cast<const float*>(yq[k]);
#pragma unroll
        for (int r = 0; r < 8; ++r) {
          const float v = reinterpret_cast<const float*>(&vq[r])[k];
#pragma unroll
          for (int j = 0; j < 8; ++j) acc[j][r] = fmaf(-v, yk[j], acc[j][r]);
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

template <int MODE, int U = 2>
void run(const char* name, int sms, float* out, long long* cyc) {
  const int smem = 2 * 64 * ld * 4, steps = 20000;
  cudaFuncSetAttribute(kern<MODE, U, U>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  for (int threads : {128, 256}) {
    kern<MODE, U, U><<<sms, threads, smem>>>(out, steps, cyc);
    long long best = 0;
    for (int rep = 0; rep < 3; ++rep) {
      kern<MODE, U, U><<<sms, threads, smem>>>(out, steps, cyc);
      cudaDeviceSynchronize();
      long long c = 0;
      cudaMemcpy(&c, cyc, sizeof(c), cudaMemcpyDeviceToHost);
      if (!best || c < best) best = c;
    }
    printf("%-32s threads %3d  FFMA issue per scheduler-cycle %.3f\n", name, threads, 256.0 * steps * (threads / 128.0) / best);
  }
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* out;
  long long* cyc;
  cudaMalloc(&out, sms * 256 * sizeof(float));
  cudaMalloc(&cyc, sms * sizeof(long long));
  run<0>("phase 1, V column-major", sms, out, cyc);
  run<1>("phase 1, V row-major", sms, out, cyc);
  run<2>("phase 3, V column-major", sms, out, cyc);
  run<3>("phase 3, V row-major", sms, out, cyc);
  run<1, 1>("phase 1, V row-major, unroll 1", sms, out, cyc);
  run<3, 1>("phase 3, V row-major, unroll 1", sms, out, cyc);
  printf("status: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
