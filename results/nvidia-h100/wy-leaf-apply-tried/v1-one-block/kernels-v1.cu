
// CAQR's FP32 32-wide leaf apply in compact-WY form (anderson10's apply_qt_h as BLAS3): a leaf's
// 32 reflectors are I − V T Vᵀ, so its tile C of x (the leaf's rows × 32 columns) becomes
// C − V·op(T)·(VᵀC), op(T) = Tᵀ for Qᵀ and T for Q, with T made once per panel
// (caqr_leaf_t_kernel). Three products in shared memory instead of a chain of 32 rank-1 steps
// with a block-wide reduction each: W = VᵀC (each warp over the rows it staged, 4 × 8 entries a
// lane, then the eight warps' partial sums added), Y = op(T)·W, and C − V·Y (8 rows × 8 columns a
// thread). The chain (caqr_apply_leaves_staged_kernel) spends about 77 of a step's 205
// instructions a warp on the reduction, its barrier and the scalars; the products spend about 20%
// on shared loads, with no barrier between steps.
constexpr int kWyLeafThreads = 256, kWyLeafWidth = 32;
constexpr int kWyLeafRows = 2 * kWyLeafThreads;  // a 32-wide 256-thread block's rows: rows t and t + 256 a thread
// Column stride of V and C in shared memory: a leaf's rows plus 16 bytes, so that the columns that
// a 16-byte load of consecutive lanes touches start four banks apart.
constexpr int kWyLeafLd = kWyLeafRows + 4;
// Row stride of the warps' partial sums of W: the 4 × 8 entries of lanes (j0, c0) land in distinct banks.
constexpr int kWyPartLd = kWyLeafWidth + 4;

struct WyLeafSmem {
  float v[kWyLeafWidth * kWyLeafLd];  // V, column-major: unit diagonal, zeros above it, past the leaf and past n
  float c[kWyLeafWidth * kWyLeafLd];  // the tile of x, column-major (zeros past its rows and columns)
  float part[kWyLeafThreads / 32][kWyLeafWidth * kWyPartLd];
  float w[kWyLeafWidth * kWyLeafWidth];  // W (row-major), then Y
  float t[kWyLeafWidth * kWyLeafWidth];  // T (row-major)
};

// Column j < 32 of a leaf's V (rows t and t + 256 of thread t) into sv, zeros where nothing is
// stored (above the diagonal, past `rows`, past n), the diagonal's one from kUnit.
__device__ __forceinline__ void wy_leaf_stage_v(float* sv, const float* v, std::int64_t ldv, int rows, int n) {
  const int t = static_cast<int>(threadIdx.x);
#pragma unroll 4
  for (int j = 0; j < kWyLeafWidth; ++j) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = t + h * kWyLeafThreads;
      const bool in = j < n && r > j && r < rows, one = j < n && r == j;
      cp_async_entry(sv + j * kWyLeafLd + r, one ? &kUnit<float> : v + (in ? r + j * ldv : 0), in || one);
    }
  }
}

// This warp's partial sums of VᵀC over the rows it staged (32w … 32w + 31 and 256 + 32w … ,
// before `live` rows), into s.part[warp]: lane (j0, c0) = (lane / 4, lane % 4) sums entries
// (j0 + 8u, c0 + 4q), so the lanes of one 16-byte load read columns that start four banks apart.
__device__ __forceinline__ void wy_leaf_partials(const float* sv, const float* sc, int live, WyLeafSmem& s) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int j0 = lane >> 2, c0 = lane & 3;
  float acc[4][8] = {};
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const int base = h * kWyLeafThreads + 32 * warp;
    if (base >= live) continue;
#pragma unroll 2
    for (int r = base; r < base + 32; r += 4) {
      float4 a[4], b[8];
#pragma unroll
      for (int u = 0; u < 4; ++u) a[u] = *reinterpret_cast<const float4*>(sv + (j0 + 8 * u) * kWyLeafLd + r);
#pragma unroll
      for (int q = 0; q < 8; ++q) b[q] = *reinterpret_cast<const float4*>(sc + (c0 + 4 * q) * kWyLeafLd + r);
#pragma unroll
      for (int u = 0; u < 4; ++u)
#pragma unroll
        for (int q = 0; q < 8; ++q) {
          acc[u][q] += a[u].x * b[q].x;
          acc[u][q] += a[u].y * b[q].y;
          acc[u][q] += a[u].z * b[q].z;
          acc[u][q] += a[u].w * b[q].w;
        }
    }
  }
#pragma unroll
  for (int u = 0; u < 4; ++u)
#pragma unroll
    for (int q = 0; q < 8; ++q) s.part[warp][(j0 + 8 * u) * kWyPartLd + c0 + 4 * q] = acc[u][q];
}

// out (32 × 32, row-major) ← the sum of the warps' partial sums; the block's threads four entries
// each, after a barrier (and one is needed before out is read).
__device__ __forceinline__ void wy_leaf_sum_partials(WyLeafSmem& s, float* out) {
  __syncthreads();
#pragma unroll
  for (int e = static_cast<int>(threadIdx.x); e < kWyLeafWidth * kWyLeafWidth; e += kWyLeafThreads) {
    const int j = e / kWyLeafWidth, c = e % kWyLeafWidth;
    float sum = 0;
#pragma unroll
    for (int w = 0; w < kWyLeafThreads / 32; ++w) sum += s.part[w][j * kWyPartLd + c];
    out[e] = sum;
  }
}

// T of each leaf's reflectors (row-major 32 × 32, zero rows and columns past n) into
// leaf_t + leaf·1024: G = VᵀV as the apply's W, then larft's recurrence.
__global__ void __launch_bounds__(kWyLeafThreads)
    caqr_leaf_t_kernel(const float* v, std::int64_t ldv, const float* tau, float* leaf_t, const TsqrTreeArgs tree) {
  extern __shared__ __align__(16) unsigned char raw[];
  WyLeafSmem& s = *reinterpret_cast<WyLeafSmem*>(raw);
  const int leaf = blockIdx.x, n = tree.n;
  const std::int64_t row0 = leaf_row(leaf, tree);
  const int rows = static_cast<int>(leaf_row(leaf + 1, tree) - row0);
  wy_leaf_stage_v(s.v, v + row0, ldv, rows, n);
  cp_async_commit();
  cp_async_wait_all();
  __syncwarp();
  wy_leaf_partials(s.v, s.v, rows, s);
  wy_leaf_sum_partials(s, s.w);
  __syncthreads();
  float* const t = leaf_t + static_cast<std::int64_t>(leaf) * kWyLeafWidth * kWyLeafWidth;
  larft_rows<float, kWyLeafWidth>(s.w, tau + tree.tau_offset[0] + static_cast<std::int64_t>(leaf) * n, n,
                                  [&](int i, int j, float value) { t[i * kWyLeafWidth + j] = value; });
}

// Block (leaf, tile): columns [32·tile, 32·tile + 32) of the leaf's rows of x, read from x_in (its
// first in_rows rows, zeros below), written to x.
__global__ void __launch_bounds__(kWyLeafThreads)
    caqr_apply_leaves_wy_kernel(const float* v, std::int64_t ldv, const float* leaf_t, float* x, std::int64_t ldx,
                                const float* x_in, std::int64_t ld_in, int in_rows, int cols, const TsqrTreeArgs tree,
                                bool forward) {
  extern __shared__ __align__(16) unsigned char raw[];
  WyLeafSmem& s = *reinterpret_cast<WyLeafSmem*>(raw);
  const int leaf = blockIdx.x, c0 = blockIdx.y * kWyLeafWidth, xc = min(kWyLeafWidth, cols - c0);
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t row0 = leaf_row(leaf, tree);
  const int rows = static_cast<int>(leaf_row(leaf + 1, tree) - row0), live = min(rows, in_rows);
  // Each thread stages rows t and t + 256 of V and of C: a warp's rows are its own in W's partial
  // sums, so it starts them without a block barrier.
  wy_leaf_stage_v(s.v, v + row0, ldv, rows, tree.n);
  {
    const float* const src = x_in + row0 + static_cast<std::int64_t>(c0) * ld_in;
#pragma unroll 4
    for (int c = 0; c < kWyLeafWidth; ++c) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = t + h * kWyLeafThreads;
        const bool in = c < xc && r < live;
        cp_async_entry(s.c + c * kWyLeafLd + r, src + (in ? r + c * ld_in : 0), in);
      }
    }
  }
  cp_async_commit();
  const float* const tt = leaf_t + static_cast<std::int64_t>(leaf) * kWyLeafWidth * kWyLeafWidth;
#pragma unroll
  for (int e = t; e < kWyLeafWidth * kWyLeafWidth; e += kWyLeafThreads) s.t[e] = tt[e];
  cp_async_wait_all();
  __syncwarp();
  wy_leaf_partials(s.v, s.c, live, s);
  wy_leaf_sum_partials(s, s.w);
  __syncthreads();
  // Y = op(T)·W: thread (warp, lane) makes rows warp + 8q of column lane.
  {
    const int warp = t >> 5, lane = t & 31;
    float y[4] = {};
#pragma unroll 8
    for (int k = 0; k < kWyLeafWidth; ++k) {
      const float wk = s.w[k * kWyLeafWidth + lane];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        const int i = warp + 8 * q;
        y[q] += (forward ? s.t[k * kWyLeafWidth + i] : s.t[i * kWyLeafWidth + k]) * wk;
      }
    }
    __syncthreads();
#pragma unroll
    for (int q = 0; q < 4; ++q) s.w[(warp + 8 * q) * kWyLeafWidth + lane] = y[q];
  }
  __syncthreads();
  // C − V·Y: thread t takes rows 4g … 4g + 3 and 256 + 4g … of columns 8·cg … 8·cg + 7
  // (g = t mod 64, cg = t / 64: one column group a warp, so Y's loads are broadcasts), in place.
  {
    const int g = t & 63, cg = t >> 6;
    float acc[8][8] = {};
#pragma unroll 4
    for (int j = 0; j < kWyLeafWidth; ++j) {
      const float4 v0 = *reinterpret_cast<const float4*>(s.v + j * kWyLeafLd + 4 * g);
      const float4 v1 = *reinterpret_cast<const float4*>(s.v + j * kWyLeafLd + kWyLeafThreads + 4 * g);
      const float4 y0 = *reinterpret_cast<const float4*>(s.w + j * kWyLeafWidth + 8 * cg);
      const float4 y1 = *reinterpret_cast<const float4*>(s.w + j * kWyLeafWidth + 8 * cg + 4);
      const float vr[8] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
      const float yc[8] = {y0.x, y0.y, y0.z, y0.w, y1.x, y1.y, y1.z, y1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int c = 0; c < 8; ++c) acc[i][c] += vr[i] * yc[c];
    }
#pragma unroll
    for (int c = 0; c < 8; ++c) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float4* const p = reinterpret_cast<float4*>(s.c + (8 * cg + c) * kWyLeafLd + h * kWyLeafThreads + 4 * g);
        float4 e = *p;
        e.x -= acc[4 * h][c];
        e.y -= acc[4 * h + 1][c];
        e.z -= acc[4 * h + 2][c];
        e.w -= acc[4 * h + 3][c];
        *p = e;
      }
    }
  }
  __syncthreads();
  // Coalesced: rows t and t + 256 of each of the tile's columns.
  float* const dst = x + row0 + static_cast<std::int64_t>(c0) * ldx;
  for (int c = 0; c < xc; ++c) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = t + h * kWyLeafThreads;
      if (r < rows) dst[r + static_cast<std::int64_t>(c) * ldx] = s.c[c * kWyLeafLd + r];
    }
  }
}
