// FFMA issue rate of register-tile loops like the resident compact-WY apply's, one block per SM
// (128 threads: one warp per scheduler; 256: two), by operand layout, FMA order and unrolling:
//   A. phase 1 (W = VᵀC) with both operands loaded as four rows of a column, as the kernel does,
//      in two lane layouts and two FMA orders, and the same FFMAs with no loads at all;
//   B. register-only M × N tiles (operands loaded once), to fit a register-bank model
//      (scripts/sass_banks.py);
//   C. phase 3 (C −= V Y) as the kernel's rank-1 steps, with C's entries zero or loaded;
//   D. V stored row-major (16-byte groups of four reflectors of one row), phases 1 and 3.
//   nvcc -O3 -arch=sm_90a -o loops loops.cu && ./loops
#include <cstdio>
#include <cuda_runtime.h>

constexpr int ld = 260;  // column-major buffers: 64 columns of 256 rows, padded
constexpr int NB = 64;
constexpr int kSmem = 2 * 64 * ld * 4;

__device__ void fill_shared(float* s) {
  for (int i = threadIdx.x; i < 2 * 64 * ld; i += blockDim.x) s[i] = 1e-3f * (i % 97);
  __syncthreads();
}
template <int A, int B>
__device__ void finish(const float (&acc)[A][B], float* out, long long* cycles, long long t0, long long t1) {
  float sum = 0;
#pragma unroll
  for (int i = 0; i < A; ++i)
#pragma unroll
    for (int j = 0; j < B; ++j) sum += acc[i][j];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

// ---- A. phase 1, operands as four rows of a column ----------------------------------------------
// Q: lane (jg, q): V's columns u (shared by the 8 jg lanes), C's columns jg + 8e, q splits the rows
// four ways (the kernel). Otherwise lane (jg, ug): V's columns ug + 4u, C's columns jg + 8e.
// D: acc[u][e] += a 4-row dot product (four dependent FFMAs); otherwise the rows outermost.
template <bool Q, bool D>
__device__ __forceinline__ void p1_step(float (&acc)[8][8], const float* pv, const float* pc, int r) {
  float4 va[8], ca[8];
#pragma unroll
  for (int u = 0; u < 8; ++u) va[u] = *reinterpret_cast<const float4*>(pv + (Q ? u : 4 * u) * ld + r);
#pragma unroll
  for (int e = 0; e < 8; ++e) ca[e] = *reinterpret_cast<const float4*>(pc + 8 * e * ld + r);
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
__global__ void __launch_bounds__(256, 1) phase1(const float*, float* out, int steps, long long* cycles) {
  extern __shared__ float4 smem4[];
  float* s = reinterpret_cast<float*>(smem4);
  fill_shared(s);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, jg = lane % 8, g = lane / 8;
  const float* pv = Q ? s + 8 * warp * ld + 4 * g : s + (32 * (warp % 2) + g) * ld;
  const float* pc = s + 64 * ld + jg * ld + (Q ? 4 * g : 0);
  float acc[8][8] = {};
  const long long t0 = clock64();
#pragma unroll UNROLL
  for (int it = 0; it < steps; ++it) p1_step<Q, D>(acc, pv, pc, (it * (Q ? 16 : 4)) & 255);
  finish(acc, out, cycles, t0, clock64());
}

template <bool D>
__global__ void __launch_bounds__(256, 1) registers_only(const float*, float* out, int steps, long long* cycles) {
  extern __shared__ float4 smem4[];
  float* s = reinterpret_cast<float*>(smem4);
  fill_shared(s);
  const int lane = threadIdx.x % 32;
  const float* pv = s + 4 * (lane / 8);
  const float* pc = s + 64 * ld + (lane % 8) * ld;
  float4 va[8], ca[8];
#pragma unroll
  for (int u = 0; u < 8; ++u) va[u] = *reinterpret_cast<const float4*>(pv + u * ld);
#pragma unroll
  for (int e = 0; e < 8; ++e) ca[e] = *reinterpret_cast<const float4*>(pc + 8 * e * ld);
  float acc[8][8] = {};
  const long long t0 = clock64();
#pragma unroll 2
  for (int it = 0; it < steps; ++it) {
#pragma unroll
    for (int u = 0; u < 8; ++u)
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        if (D) {
          acc[u][e] = fmaf(va[u].w, ca[e].w, fmaf(va[u].z, ca[e].z, fmaf(va[u].y, ca[e].y, fmaf(va[u].x, ca[e].x, acc[u][e]))));
        } else {
          acc[u][e] = fmaf(va[u].x, ca[e].x, acc[u][e]);
          acc[u][e] = fmaf(va[u].y, ca[e].y, acc[u][e]);
          acc[u][e] = fmaf(va[u].z, ca[e].z, acc[u][e]);
          acc[u][e] = fmaf(va[u].w, ca[e].w, acc[u][e]);
        }
      }
  }
  finish(acc, out, cycles, t0, clock64());
}

// ---- B. register-only M × N tiles: acc[i][j] += a[i] b[j], a (AREUSE) or b reused by consecutive FFMAs
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
  const long long t0 = clock64();
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
  finish(acc, out, cycles, t0, clock64());
}

// ---- C. phase 3 as the kernel's rank-1 steps: z[j][r] −= v(r) y(j), rows 4a … and 128 + 4a …
// ZMODE 0: z starts at zero; 1: z loaded from shared memory as the kernel does (four rows to a
// 16-byte load, so row r's entry sits in a register of parity r mod 2, as V's does); 2: loaded,
// then each entry copied by an FADD, so the compiler may place it anywhere.
template <int ZMODE>
__global__ void __launch_bounds__(256, 1) phase3_rank1(const float*, float* out, int steps, long long* cycles) {
  extern __shared__ float4 smem4[];
  float* s = reinterpret_cast<float*>(smem4);
  fill_shared(s);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int a3 = lane % 8 + 8 * (warp % 4), g3 = lane / 8 + 4 * (warp / 4);
  const float* pv = s + 4 * a3;
  const float* py = s + 64 * ld + 8 * g3;
  float z[8][8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const float* col = s + 64 * ld + (8 * g3 + j) * ld + 4 * a3;
    const float4 lo = *reinterpret_cast<const float4*>(col), hi = *reinterpret_cast<const float4*>(col + 128);
    const float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
    for (int r = 0; r < 8; ++r) z[j][r] = ZMODE == 0 ? 0.0f : ZMODE == 2 ? __fadd_rn(v[r], 0.0f) : v[r];
  }
  const long long t0 = clock64();
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
  finish(z, out, cycles, t0, clock64());
}

// ---- D. V row-major: V(r, l) at r·64 + 4·((l / 4) XOR swz(r)) + l mod 4 -----------------------
// First swizzle (r XOR r / 4) mod 8, addresses computed per row; second (r / 4) mod 8, fixed per
// lane over two 16-row steps.
__device__ __forceinline__ int swz_first(int r) { return (r ^ (r >> 2)) & 7; }
__device__ __forceinline__ const float* vt_first(const float* s, int r, int l4) {
  return s + r * NB + 4 * ((l4 >> 2) ^ swz_first(r));
}

template <int UNROLL>
__global__ void __launch_bounds__(256, 1) phase1_rows_first(const float*, float* out, int steps, long long* cycles) {
  extern __shared__ float4 smem4[];
  float* s = reinterpret_cast<float*>(smem4);
  fill_shared(s);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, jg = lane % 8, q = lane / 8;
  const float* pc = s + 64 * ld + jg * ld + 4 * q;
  float acc[8][8] = {};
  const long long t0 = clock64();
#pragma unroll UNROLL
  for (int it = 0; it < steps; ++it) {
    const int r = (it * 16) & 255;
    float4 va[4][2], ca[8];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      va[k][0] = *reinterpret_cast<const float4*>(vt_first(s, r + 4 * q + k, 8 * warp));
      va[k][1] = *reinterpret_cast<const float4*>(vt_first(s, r + 4 * q + k, 8 * warp + 4));
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
  finish(acc, out, cycles, t0, clock64());
}

// ORDER 0: rows k, then C's columns e, then V's columns u; 1: e, k, u; 2: as 0, u serpentine.
template <int ORDER>
__global__ void __launch_bounds__(256, 1) phase1_rows(const float*, float* out, int steps, long long* cycles) {
  extern __shared__ float4 smem4[];
  float* s = reinterpret_cast<float*>(smem4);
  fill_shared(s);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, jg = lane % 8, q = lane / 8;
  const float* pc = s + 64 * ld + jg * ld + 4 * q;
  // V(r, 8·warp + 4w …) for r = r0 + 16h + 4q + k lies at r·64 + 4·((2·warp + w) XOR (q + 4h)).
  int off[2][2];
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int w = 0; w < 2; ++w) off[h][w] = (16 * h + 4 * q) * NB + 4 * ((2 * warp + w) ^ (q + 4 * h));
  float acc[8][8] = {};
  const long long t0 = clock64();
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
#pragma unroll
      for (int x = 0; x < 4 * 8; ++x) {
        const int k = ORDER == 1 ? x % 4 : x / 8, e = ORDER == 1 ? x / 4 : x % 8;
        const float c = reinterpret_cast<const float*>(&ca[e])[k];
        const float* vk = reinterpret_cast<const float*>(va[k]);
#pragma unroll
        for (int uu = 0; uu < 8; ++uu) {
          const int u = ORDER == 2 && (e & 1) ? 7 - uu : uu;
          acc[u][e] = fmaf(vk[u], c, acc[u][e]);
        }
      }
    }
  }
  finish(acc, out, cycles, t0, clock64());
}

// Phase 3, four l's a step. FIRST: the first swizzle, l4 from the step count; otherwise the
// second (one swizzle per lane for its eight rows). ORDER 0: k, rows, columns; 1: k, columns, rows.
template <bool FIRST, int ORDER, int UNROLL>
__global__ void __launch_bounds__(256, 1) phase3_rows(const float*, float* out, int steps, long long* cycles) {
  extern __shared__ float4 smem4[];
  float* s = reinterpret_cast<float*>(smem4);
  fill_shared(s);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int a3 = lane % 8 + 8 * (warp % 4), g3 = lane / 8 + 4 * (warp / 4), sw = a3 & 7;
  const float* py = s + 64 * ld + 8 * g3;
  float z[8][8] = {};
  const long long t0 = clock64();
#pragma unroll UNROLL
  for (int it = 0; it < steps; ++it) {
    const int g = it & 15;
    float4 vq[8], yq[4][2];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int r = 4 * a3 + (i % 4) + 128 * (i / 4);
      vq[i] = *reinterpret_cast<const float4*>(FIRST ? vt_first(s, r, 4 * g) : s + r * NB + 4 * (g ^ sw));
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      yq[k][0] = *reinterpret_cast<const float4*>(py + (4 * g + k) * 64);
      yq[k][1] = *reinterpret_cast<const float4*>(py + (4 * g + k) * 64 + 4);
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const float* yk = reinterpret_cast<const float*>(yq[k]);
#pragma unroll
      for (int x = 0; x < 64; ++x) {
        const int r = ORDER == 0 ? x / 8 : x % 8, j = ORDER == 0 ? x % 8 : x / 8;
        z[j][r] = fmaf(-reinterpret_cast<const float*>(&vq[r])[k], yk[j], z[j][r]);
      }
    }
  }
  finish(z, out, cycles, t0, clock64());
}

// ---- harness --------------------------------------------------------------------------------------
template <class K>
void run(const char* name, K kernel, int sms, const float* in, float* out, long long* cyc, int steps,
         double ffma_per_step) {
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmem);
  for (int threads : {128, 256}) {
    kernel<<<sms, threads, kSmem>>>(in, out, steps, cyc);  // warm-up
    long long best = 0;
    for (int rep = 0; rep < 3; ++rep) {
      kernel<<<sms, threads, kSmem>>>(in, out, steps, cyc);
      cudaDeviceSynchronize();
      long long c = 0;
      cudaMemcpy(&c, cyc, sizeof(c), cudaMemcpyDeviceToHost);
      if (!best || c < best) best = c;
    }
    // ffma_per_step FFMAs per warp and step; threads / 128 warps per scheduler.
    printf("%-40s threads %3d  FFMA issue per scheduler-cycle %.3f\n", name, threads,
           ffma_per_step * steps * (threads / 128.0) / static_cast<double>(best));
  }
}
#define TILE(M, N, R, U) \
  run("tile<" #M "," #N "," #R "," #U ">", tile<M, N, R, U>, sms, in, out, cyc, 200000 / (M * N) * 64, M * N)

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  printf("%s, %d SMs\n", prop.name, sms);
  float *in, *out;
  long long* cyc;
  cudaMalloc(&in, 4096 * sizeof(float));
  cudaMemset(in, 0, 4096 * sizeof(float));
  cudaMalloc(&out, sms * 256 * sizeof(float));
  cudaMalloc(&cyc, sms * sizeof(long long));
  const int steps = 20000;
  // A
  run("phase 1, q split, dot4 (kernel)", phase1<2, true, true>, sms, in, out, cyc, steps, 256);
  run("phase 1, q split, rows outer", phase1<2, true, false>, sms, in, out, cyc, steps, 256);
  run("phase 1, outer layout, dot4", phase1<2, false, true>, sms, in, out, cyc, steps, 256);
  run("phase 1, outer layout, rows outer", phase1<2, false, false>, sms, in, out, cyc, steps, 256);
  run("phase 1, outer layout, rows outer, u4", phase1<4, false, false>, sms, in, out, cyc, steps, 256);
  run("registers only, dot4", registers_only<true>, sms, in, out, cyc, steps, 256);
  run("registers only, rows in turn", registers_only<false>, sms, in, out, cyc, steps, 256);
  // B
  TILE(8, 8, true, 1); TILE(8, 8, false, 1); TILE(8, 8, true, 2); TILE(8, 8, false, 2);
  TILE(4, 16, true, 1); TILE(4, 16, false, 1); TILE(16, 4, true, 1); TILE(16, 4, false, 1);
  TILE(4, 8, true, 2); TILE(4, 8, false, 2); TILE(8, 12, true, 1); TILE(12, 8, false, 1);
  TILE(6, 6, true, 2); TILE(6, 6, false, 2); TILE(8, 16, true, 1); TILE(16, 8, false, 1);
  // C
  run("phase 3, rank-1 steps (kernel)", phase3_rank1<0>, sms, in, out, cyc, 4 * steps, 64);
  run("phase 3, rank-1, z loaded as rows", phase3_rank1<1>, sms, in, out, cyc, 4 * steps, 64);
  run("phase 3, rank-1, z loaded and copied", phase3_rank1<2>, sms, in, out, cyc, 4 * steps, 64);
  // D
  run("phase 1, V row-major, first swizzle", phase1_rows_first<2>, sms, in, out, cyc, steps, 256);
  run("phase 1, V row-major, first swizzle, u1", phase1_rows_first<1>, sms, in, out, cyc, steps, 256);
  run("phase 1, V row-major, k e u", phase1_rows<0>, sms, in, out, cyc, steps / 2, 512);
  run("phase 1, V row-major, e k u", phase1_rows<1>, sms, in, out, cyc, steps / 2, 512);
  run("phase 1, V row-major, serpentine", phase1_rows<2>, sms, in, out, cyc, steps / 2, 512);
  run("phase 3, V row-major, first swizzle", phase3_rows<true, 0, 2>, sms, in, out, cyc, steps, 256);
  run("phase 3, V row-major, first swizzle, u1", phase3_rows<true, 0, 1>, sms, in, out, cyc, steps, 256);
  run("phase 3, V row-major, k r j", phase3_rows<false, 0, 2>, sms, in, out, cyc, steps, 256);
  run("phase 3, V row-major, k j r", phase3_rows<false, 1, 2>, sms, in, out, cyc, steps, 256);
  printf("status: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
