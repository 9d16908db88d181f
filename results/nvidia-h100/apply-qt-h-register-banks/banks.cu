// FFMA streams with operands held in registers, to fit a register-bank model: each kernel runs
// M x N accumulators against M + N loop-invariant operands, in one of two orders.
#include <cstdio>
#include <cuda_runtime.h>

template <int M, int N, bool AREUSE, int UNR>
__global__ void __launch_bounds__(256, 1) tile(const float* in, float* out, int steps, long long* cycles) {
  float a[M], b[N], acc[M][N];
#pragma unroll
  for (int i = 0; i < M; ++i) a[i] = in[threadIdx.x % 32 + 32 * i];
#pragma unroll
  for (int j = 0; j < N; ++j) b[j] = in[1024 + threadIdx.x % 32 + 32 * j];
#pragma unroll
  for (int i = 0; i < M; ++i)
#pragma unroll
    for (int j = 0; j < N; ++j) acc[i][j] = 0.f;
  __syncthreads();
  long long t0 = clock64();
#pragma unroll UNR
  for (int it = 0; it < steps; ++it) {
    if (AREUSE) {
#pragma unroll
      for (int i = 0; i < M; ++i)
#pragma unroll
        for (int j = 0; j < N; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    } else {
#pragma unroll
      for (int j = 0; j < N; ++j)
#pragma unroll
        for (int i = 0; i < M; ++i) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }
  long long t1 = clock64();
  float s = 0;
#pragma unroll
  for (int i = 0; i < M; ++i)
#pragma unroll
    for (int j = 0; j < N; ++j) s += acc[i][j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

template <class K>
void run(const char* name, K kernel, int fma, int sms, const float* in, float* out, long long* cyc) {
  const int steps = 200000 / fma * 64;
  for (int threads : {128, 256}) {
    kernel<<<sms, threads>>>(in, out, steps, cyc);
    long long best = 0;
    for (int rep = 0; rep < 3; ++rep) {
      kernel<<<sms, threads>>>(in, out, steps, cyc);
      cudaDeviceSynchronize();
      long long c = 0;
      cudaMemcpy(&c, cyc, sizeof(c), cudaMemcpyDeviceToHost);
      if (!best || c < best) best = c;
    }
    printf("%s threads %d issue %.3f\n", name, threads, double(fma) * steps * (threads / 128.0) / best);
  }
}
#define RUN(M, N, R, U) run("tile<" #M "," #N "," #R "," #U ">", tile<M, N, R, U>, M * N, sms, in, out, cyc)
int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float *in, *out;
  long long* cyc;
  cudaMalloc(&in, 4096 * 4);
  cudaMemset(in, 0, 4096 * 4);
  cudaMalloc(&out, sms * 256 * 4);
  cudaMalloc(&cyc, sms * 8);
  RUN(8, 8, true, 1); RUN(8, 8, false, 1); RUN(8, 8, true, 2); RUN(8, 8, false, 2);
  RUN(4, 16, true, 1); RUN(4, 16, false, 1); RUN(16, 4, true, 1); RUN(16, 4, false, 1);
  RUN(4, 8, true, 2); RUN(4, 8, false, 2); RUN(8, 12, true, 1); RUN(12, 8, false, 1);
  RUN(6, 6, true, 2); RUN(6, 6, false, 2); RUN(8, 16, true, 1); RUN(16, 8, false, 1);
  printf("status %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
