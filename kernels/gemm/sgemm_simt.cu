#include "kernels/gemm/sgemm_simt.cuh"

#include "core/cuda/check.hpp"
#include "kernels/common/cp_async.cuh"
#include "kernels/dense/transpose.cuh"
#include "kernels/gemm/triangle_tiles.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>

namespace gpufact::kernels {
namespace {

// Shape of the work (volkov08 §4.1 "block matrix multiply", with two more levels of blocking):
//   CTA tile BM × BN, k-slices of BK staged through shared memory by cp.async (STAGES deep);
//   8 warps in a WARPS_M × WARPS_N grid; a warp's lanes form an 8 (m) × 4 (n) grid and each lane
//   holds a TM × TN accumulator tile made of (TM/4) × (TN/4) sub-tiles of 4 × 4, the sub-tiles
//   32 rows / 16 columns apart. Per k-step a lane reads TM/4 + TN/4 float4 (LDS.128) and issues
//   TM·TN FFMA: 4 + 64 for 8 × 8, i.e. 94% FFMA.
// Shared layout: As[k][m] and Bs[k][n] (k-major; m, n contiguous) with rows padded by 4 floats.
//   Fragment reads: the 8 lanes of a quarter warp read 8 consecutive float4 of As (all 32 banks)
//   and one float4 of Bs (broadcast): conflict-free. Stores of the k-contiguous operands (Aᵀ,
//   B in NN) are transposing 4-byte cp.async with a warp covering 8 k × 4 m: banks 4k + m, all
//   distinct thanks to the pad. Stores of m/n-contiguous operands are row segments: conflict-free.
//   The _kb configurations stage NN's B k-major instead (KMajorLoader: 16-byte copies).
// Split-k: blockIdx.y picks a k slice and the tile goes to its own partial (sgemm_simt_partials).
constexpr int kThreads = 256;
constexpr int kPad = 4;

enum class TileMap : int { rectangle = 0, triangle_flipped = 1, triangle_early_exit = 2 };

struct Params {
  std::int64_t m, n, k;
  float alpha, beta;
  const float* a;
  std::int64_t lda;
  const float* b;
  std::int64_t ldb;
  float* c;
  std::int64_t ldc;
  std::int64_t tiles_m, tiles_n;
  int swizzle;      // tile columns per raster group (L2 reuse)
  TileMap map;
  int uplo;         // 0 lower, 1 upper (triangle maps only)
  bool vector_c;    // C's columns start 16-byte aligned: float4 epilogue on full tiles
  // Split-k (volkov08 §4.3): blockIdx.y = s computes k in [s·k_slice, min(k, (s+1)·k_slice)) into
  // C + s·split_stride. A plain GEMM has one split with k_slice = k.
  std::int64_t k_slice;
  std::int64_t split_stride;
  int splits;
};

// Loads one BK-deep slice of an operand tile (BMN along m or n) into shared memory [BK][BMN+pad].
//   MN-contiguous (A in N, B in T): element (mn, kk) at g[mn + kk·ld]; 16-byte copies when VEC.
//   K-contiguous (A in T, B in N): element (mn, kk) at g[kk + mn·ld]; 4-byte transposing copies.
// Out-of-range elements are zero-filled, so the compute loop never branches. Pointers of invalid
// elements are clamped to the base. A slice whose elements (for this thread) all lie inside the
// matrix takes the unpredicated path: no per-copy predicate or select in the interior, which is
// almost every slice of a large GEMM.
template <int BMN, int BK, bool KCONTIG, bool VEC>
struct TileLoader {
  static constexpr int kStride = BMN + kPad;
  static constexpr bool kVector = VEC && !KCONTIG;
  // MN-contiguous: per thread one mn (vector of 4 or scalar) and kIters k rows kStep apart.
  static constexpr int kLanesMN = kVector ? BMN / 4 : BMN;
  static constexpr int kStep = kThreads / kLanesMN;
  // K-contiguous: per thread k = kq + 8·kr (kr < BK/8) and mn = mnl + 32·j (j < BMN/32).
  static_assert(KCONTIG ? (BK % 8 == 0 && BMN % 32 == 0) : (kThreads % kLanesMN == 0 && BK % kStep == 0),
                "tile slice must split evenly over 256 threads");

  // The matrix (clamp target), its leading dimension and the end of this CTA's k range are not
  // kept here: load() takes them from the kernel parameters (constant bank), saving registers.
  const float* ptr;    // this thread's first element of the current k-slice
  bool mn_full;        // every mn this thread copies lies inside the matrix
  int mn_bytes;        // MN-contiguous: bytes of this thread's vector/scalar inside the matrix
  unsigned mn_mask;    // K-contiguous: bit j set when mn = mnl + 32·j is inside the matrix
  int k_first;         // this thread's first k offset within a slice
  int smem_offset;     // this thread's first shared-memory float within a stage

  // k runs over [k_begin, k_end): the first slice loaded is the one at k_begin.
  __device__ void init(const float* g, std::int64_t ld, std::int64_t mn0, std::int64_t mn_total, std::int64_t k_begin,
                       int tid) {
    if constexpr (KCONTIG) {
      const int kq = tid % 8, mnl = tid / 8;
      mn_mask = 0;
#pragma unroll
      for (int j = 0; j < BMN / 32; ++j)
        if (mn0 + mnl + 32 * j < mn_total) mn_mask |= 1u << j;
      mn_full = mn_mask == (1u << (BMN / 32)) - 1u;
      ptr = g + k_begin + kq + (mn0 + mnl) * ld;
      k_first = kq;
      smem_offset = kq * kStride + mnl;
      mn_bytes = 0;
    } else {
      const int lane_mn = (tid % kLanesMN) * (kVector ? 4 : 1), kk = tid / kLanesMN;
      const std::int64_t left = mn_total - (mn0 + lane_mn);
      mn_bytes = kVector ? 4 * static_cast<int>(left <= 0 ? 0 : (left >= 4 ? 4 : left)) : (left > 0 ? 4 : 0);
      mn_full = mn_bytes == (kVector ? 16 : 4);
      ptr = g + (mn0 + lane_mn) + (k_begin + kk) * ld;
      k_first = kk;
      smem_offset = kk * kStride + lane_mn;
      mn_mask = 0;
    }
  }

  // Issues the copies of the slice starting at k0 into `stage`, then moves to the next slice.
  __device__ void load(float* stage, std::int64_t k0, std::int64_t k_total, const float* base, std::int64_t ld) {
    float* dst = stage + smem_offset;
    if (mn_full && k0 + BK <= k_total) {
      if constexpr (KCONTIG) {
#pragma unroll
        for (int j = 0; j < BMN / 32; ++j)
#pragma unroll
          for (int kr = 0; kr < BK / 8; ++kr)
            cp_async_4_full(dst + 8 * kr * kStride + 32 * j, ptr + 8 * kr + static_cast<std::int64_t>(32 * j) * ld);
        ptr += BK;
      } else {
#pragma unroll
        for (int r = 0; r < BK / kStep; ++r) {
          const float* src = ptr + static_cast<std::int64_t>(r * kStep) * ld;
          if constexpr (kVector)
            cp_async_16_full(dst + r * kStep * kStride, src);
          else
            cp_async_4_full(dst + r * kStep * kStride, src);
        }
        ptr += BK * ld;
      }
      return;
    }
    if constexpr (KCONTIG) {
#pragma unroll
      for (int j = 0; j < BMN / 32; ++j)
#pragma unroll
        for (int kr = 0; kr < BK / 8; ++kr) {
          const bool ok = ((mn_mask >> j) & 1u) && k0 + k_first + 8 * kr < k_total;
          const float* src = ptr + 8 * kr + static_cast<std::int64_t>(32 * j) * ld;
          cp_async_4(dst + 8 * kr * kStride + 32 * j, ok ? src : base, ok ? 4 : 0);
        }
      ptr += BK;
    } else {
#pragma unroll
      for (int r = 0; r < BK / kStep; ++r) {
        const bool k_ok = k0 + k_first + r * kStep < k_total;
        const int bytes = k_ok ? mn_bytes : 0;
        const float* src = ptr + static_cast<std::int64_t>(r * kStep) * ld;
        if constexpr (kVector)
          cp_async_16(dst + r * kStep * kStride, bytes ? src : base, bytes);
        else
          cp_async_4(dst + r * kStep * kStride, bytes ? src : base, bytes);
      }
      ptr += BK * ld;
    }
  }
};

// B of NN (k-contiguous) staged as it lies in memory, [n][k] per slice, by 16-byte copies: the
// transposing 4-byte copies of TileLoader cost 4× the copy instructions and their addresses. The
// 16-byte chunks of a row are XOR-swizzled with bits 2–3 of n, so that a warp's fragment reads
// (rows n, n+4, n+8, n+12 of lane_n = 0..3, the same chunk) hit four distinct bank quads.
// Needs ld % 4 == 0, a 16-byte aligned B and k slices starting at multiples of 4.
template <int BN, int BK>
struct KMajorLoader {
  static constexpr int kChunks = BK / 4;                 // 16-byte chunks per row and slice
  static constexpr int kRowStep = kThreads / kChunks;    // rows apart of one thread's copies
  static constexpr int kPerThread = BN / kRowStep;
  static_assert(BK >= 16 && BK % 4 == 0 && kThreads % kChunks == 0 && BN % kRowStep == 0 && kRowStep % 16 == 0,
                "k-major B slice must split evenly over 256 threads, swizzle period 16 rows");

  // Matrix, leading dimension and the end of k are not kept here: load() takes them from the
  // kernel parameters (constant bank), sparing the registers the 8 × 8 tile needs.
  const float* ptr;
  int k_first;        // 4·chunk: this thread's first k within a slice
  unsigned n_mask;    // bit r set when row nl + r·kRowStep is inside the matrix
  int smem_offset;

  __device__ static int swizzle(int n) { return (n >> 2) & 3; }

  __device__ void init(const float* g, std::int64_t ld, std::int64_t n0, std::int64_t n_total, std::int64_t k_begin,
                       int tid) {
    const int q = tid % kChunks, nl = tid / kChunks;
    n_mask = 0;
#pragma unroll
    for (int r = 0; r < kPerThread; ++r)
      if (n0 + nl + r * kRowStep < n_total) n_mask |= 1u << r;
    k_first = 4 * q;
    ptr = g + k_begin + 4 * q + (n0 + nl) * ld;
    smem_offset = nl * BK + 4 * (q ^ swizzle(nl));  // swizzle(nl + r·kRowStep) = swizzle(nl)
  }

  __device__ void load(float* stage, std::int64_t k0, std::int64_t k_total, const float* base, std::int64_t ld) {
    float* dst = stage + smem_offset;
    if (n_mask == (1u << kPerThread) - 1u && k0 + BK <= k_total) {
#pragma unroll
      for (int r = 0; r < kPerThread; ++r)
        cp_async_16_full(dst + r * kRowStep * BK, ptr + static_cast<std::int64_t>(r * kRowStep) * ld);
    } else {
      const std::int64_t left = k_total - (k0 + k_first);
      const int k_bytes = left <= 0 ? 0 : (left >= 4 ? 16 : 4 * static_cast<int>(left));
#pragma unroll
      for (int r = 0; r < kPerThread; ++r) {
        const int bytes = ((n_mask >> r) & 1u) ? k_bytes : 0;
        const float* src = ptr + static_cast<std::int64_t>(r * kRowStep) * ld;
        cp_async_16(dst + r * kRowStep * BK, bytes ? src : base, bytes);
      }
    }
    ptr += BK;
  }
};

// The CTA tile this block computes, or false when it has none (early-exit triangle grid).
__device__ __forceinline__ bool tile_of_block(const Params& p, std::int64_t& tile_m, std::int64_t& tile_n) {
  const std::int64_t id = blockIdx.x;
  if (p.map == TileMap::rectangle) {
    // Raster down tile columns in groups of `swizzle` columns: CTAs running together share
    // A's row panels and a few of B's column panels in L2.
    const std::int64_t group = p.swizzle;
    const std::int64_t first_n = id / (group * p.tiles_m) * group;
    const std::int64_t width = min(group, p.tiles_n - first_n);
    const std::int64_t local = id - first_n * p.tiles_m;
    tile_n = first_n + local % width;
    tile_m = local / width;
    return true;
  }
  if (p.map == TileMap::triangle_flipped) {
    const TileIndex t = lower_tile_of_block(id, p.tiles_m);
    tile_m = p.uplo == 0 ? t.row : t.col;
    tile_n = p.uplo == 0 ? t.col : t.row;
    return true;
  }
  tile_m = id % p.tiles_m;
  tile_n = id / p.tiles_m;
  return p.uplo == 0 ? tile_m >= tile_n : tile_m <= tile_n;
}

template <int BM, int BN, int BK, int WARPS_M, int WARPS_N, int STAGES, int MIN_BLOCKS, bool TA, bool TB, bool VEC,
          bool KB>
__global__ void __launch_bounds__(kThreads, MIN_BLOCKS) sgemm_simt_kernel(const Params p) {
  constexpr int WTM = BM / WARPS_M, WTN = BN / WARPS_N;  // warp tile
  constexpr int TM = WTM / 8, TN = WTN / 4;              // thread tile (lanes: 8 along m × 4 along n)
  static_assert(WARPS_M * WARPS_N * 32 == kThreads, "256 threads");
  static_assert(TM % 4 == 0 && TN % 4 == 0 && TM >= 4 && TN >= 4, "thread tile of 4 × 4 sub-tiles");
  constexpr int SA = BM + kPad, SB = BN + kPad;
  // KB: NN's B staged k-major by KMajorLoader (16-byte copies), fragments read 4 k-steps at a time.
  constexpr bool kKMajorB = KB && !TA && !TB && VEC;
  constexpr int kStageFloats = BK * SA + (kKMajorB ? BN * BK : BK * SB);

  extern __shared__ float4 shared_raw[];
  float* smem = reinterpret_cast<float*>(shared_raw);

  std::int64_t tile_m, tile_n;
  if (!tile_of_block(p, tile_m, tile_n)) return;
  const std::int64_t m0 = tile_m * BM, n0 = tile_n * BN;
  const int tid = threadIdx.x;
  const std::int64_t split = blockIdx.y;
  const std::int64_t k_begin = split * p.k_slice;
  const std::int64_t k_end = min(p.k, k_begin + p.k_slice);
  float* const c_base = p.c + split * p.split_stride;

  // A: MN-contiguous when op(A) = A (TA false); B: MN-contiguous when op(B) = Bᵀ (TB true).
  TileLoader<BM, BK, TA, VEC> load_a;
  using LoaderB = std::conditional_t<kKMajorB, KMajorLoader<BN, BK>, TileLoader<BN, BK, !TB, VEC>>;
  LoaderB load_b;
  load_a.init(p.a, p.lda, m0, p.m, k_begin, tid);
  load_b.init(p.b, p.ldb, n0, p.n, k_begin, tid);
  const auto issue_b = [&](float* stage, std::int64_t k0) { load_b.load(stage, k0, k_end, p.b, p.ldb); };

  // An empty k range (a split past the end of k) still writes its tile: α·0 (+ β C).
  const std::int64_t k_tiles = k_end > k_begin ? (k_end - k_begin + BK - 1) / BK : 0;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) {
      load_a.load(smem + s * kStageFloats, k_begin + static_cast<std::int64_t>(s) * BK, k_end, p.a, p.lda);
      issue_b(smem + s * kStageFloats + BK * SA, k_begin + static_cast<std::int64_t>(s) * BK);
    }
    cp_async_commit();
  }

  const int warp = tid / 32, lane = tid % 32;
  const int warp_m = warp % WARPS_M, warp_n = warp / WARPS_M;
  const int lane_m = lane % 8, lane_n = lane / 8;
  const int a_frag_offset = warp_m * WTM + lane_m * 4;  // + 32·sub-tile
  const int b_frag_offset = warp_n * WTN + lane_n * 4;  // + 16·sub-tile

  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;

  int read_stage = 0, write_stage = STAGES - 1;
  for (std::int64_t kt = 0; kt < k_tiles; ++kt) {
    // Slice kt has landed (this thread's copies); the barrier publishes everyone's and also
    // guarantees that the stage refilled below (read in iteration kt − 1) is no longer in use.
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    if (kt + STAGES - 1 < k_tiles) {
      const std::int64_t k_next = k_begin + (kt + STAGES - 1) * BK;
      load_a.load(smem + write_stage * kStageFloats, k_next, k_end, p.a, p.lda);
      issue_b(smem + write_stage * kStageFloats + BK * SA, k_next);
    }
    cp_async_commit();
    write_stage = write_stage + 1 == STAGES ? 0 : write_stage + 1;

    const float* As = smem + read_stage * kStageFloats + a_frag_offset;
    const float* Bs = smem + read_stage * kStageFloats + BK * SA + b_frag_offset * (kKMajorB ? BK : 1);
    read_stage = read_stage + 1 == STAGES ? 0 : read_stage + 1;

    if constexpr (kKMajorB) {
      // Per group of 4 k-steps: one LDS.128 per B row (4 k values), as many B reads per FFMA as
      // the n-major layout. The 32 registers of the B group leave no room for double-buffered A
      // under the 128-register cap of 2 CTAs/SM: A is read per k-step, its latency covered by the
      // other 15 warps of the SM.
      const int bsw = KMajorLoader<BN, BK>::swizzle(b_frag_offset);
#pragma unroll
      for (int g = 0; g < BK / 4; ++g) {
        // Keeps the next group's B reads from being hoisted over this group's FFMAs (registers).
        asm volatile("" ::: "memory");
        float4 b4[TN];
#pragma unroll
        for (int j = 0; j < TN; ++j)
          b4[j] = *reinterpret_cast<const float4*>(Bs + (16 * (j / 4) + j % 4) * BK + 4 * (g ^ bsw));
#pragma unroll
        for (int t = 0; t < 4; ++t) {
          float a[TM];
#pragma unroll
          for (int i = 0; i < TM / 4; ++i)
            *reinterpret_cast<float4*>(&a[4 * i]) = *reinterpret_cast<const float4*>(As + (4 * g + t) * SA + 32 * i);
#pragma unroll
          for (int j = 0; j < TN; ++j) {
            const float b = t == 0 ? b4[j].x : t == 1 ? b4[j].y : t == 2 ? b4[j].z : b4[j].w;
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i][j] = fmaf(a[i], b, acc[i][j]);
          }
        }
      }
    } else {
      // Fragments double-buffered in registers: step kk+1's LDS.128 issue under step kk's FFMAs.
      float a_frag[2][TM], b_frag[2][TN];
#pragma unroll
      for (int i = 0; i < TM / 4; ++i)
        *reinterpret_cast<float4*>(&a_frag[0][4 * i]) = *reinterpret_cast<const float4*>(As + 32 * i);
#pragma unroll
      for (int j = 0; j < TN / 4; ++j)
        *reinterpret_cast<float4*>(&b_frag[0][4 * j]) = *reinterpret_cast<const float4*>(Bs + 16 * j);
#pragma unroll
      for (int kk = 0; kk < BK; ++kk) {
        const int cur = kk & 1, nxt = cur ^ 1;
        if (kk + 1 < BK) {
#pragma unroll
          for (int i = 0; i < TM / 4; ++i)
            *reinterpret_cast<float4*>(&a_frag[nxt][4 * i]) =
                *reinterpret_cast<const float4*>(As + (kk + 1) * SA + 32 * i);
#pragma unroll
          for (int j = 0; j < TN / 4; ++j)
            *reinterpret_cast<float4*>(&b_frag[nxt][4 * j]) =
                *reinterpret_cast<const float4*>(Bs + (kk + 1) * SB + 16 * j);
        }
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
          for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a_frag[cur][i], b_frag[cur][j], acc[i][j]);
      }
    }
  }
  cp_async_wait<0>();

  // Epilogue: C := α acc + β C (C not read when β = 0); lane rows 4-contiguous in a column, so
  // full, aligned row quads go out as float4. Diagonal tiles of the triangle are masked.
  const bool diagonal = p.map != TileMap::rectangle && tile_m == tile_n;
#pragma unroll
  for (int j = 0; j < TN; ++j) {
    const std::int64_t col = n0 + b_frag_offset + 16 * (j / 4) + j % 4;
    if (col >= p.n) continue;
    float* c_col = c_base + col * p.ldc;
#pragma unroll
    for (int i4 = 0; i4 < TM / 4; ++i4) {
      const std::int64_t row = m0 + a_frag_offset + 32 * i4;
      if (p.vector_c && !diagonal && row + 3 < p.m) {
        float4 v = make_float4(p.alpha * acc[4 * i4][j], p.alpha * acc[4 * i4 + 1][j], p.alpha * acc[4 * i4 + 2][j],
                               p.alpha * acc[4 * i4 + 3][j]);
        float4* dst = reinterpret_cast<float4*>(c_col + row);
        if (p.beta != 0.0f) {
          const float4 old = *dst;
          v.x = fmaf(p.beta, old.x, v.x);
          v.y = fmaf(p.beta, old.y, v.y);
          v.z = fmaf(p.beta, old.z, v.z);
          v.w = fmaf(p.beta, old.w, v.w);
        }
        *dst = v;
      } else {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const std::int64_t r = row + i;
          const bool inside = r < p.m && (!diagonal || (p.uplo == 0 ? r >= col : r <= col));
          if (!inside) continue;
          float v = p.alpha * acc[4 * i4 + i][j];
          if (p.beta != 0.0f) v = fmaf(p.beta, c_col[r], v);
          c_col[r] = v;
        }
      }
    }
  }
}

// ---- configurations ------------------------------------------------------------------------
// Registers per thread (nvcc 13.0 / ptxas -v, sm_90; NN, NT, TN over both load paths), no spill
// in any instantiation:
//   simt_128x128x8_s3   125–127   2 CTAs/SM      simt_128x64x16_s3   95–109   2 CTAs/SM
//   simt_128x128x16_s3  124–128   2 CTAs/SM      simt_128x256x8_s3  201–216   1 CTA/SM
//   simt_128x128x8_s4   125–127   2 CTAs/SM      simt_256x128x8_s3  200–214   1 CTA/SM
//   simt_128x128x32_s3  126–128   2 CTAs/SM      simt_128x256x16_s3 230–246   1 CTA/SM
//   simt_128x128x16_s4  121–128   2 CTAs/SM      simt_256x128x16_s3 230–244   1 CTA/SM
//   simt_64x64x16_s3     63–64    4 CTAs/SM      simt_128x128x16_s3_kb 123–127 2 CTAs/SM (16 × 4)
// (the 8 × 8 tile with the k-major B stage needs ~6 more than 128 and spills: hence 16 × 4 there)
using Launch = void (*)(const Params&, cudaStream_t);

struct ConfigEntry {
  SgemmSimtConfig info;
  Launch nn, nt, tn, nn_vec, nt_vec;
};

template <int BM, int BN, int BK, int WM, int WN, int S, int MINB, bool TA, bool TB, bool VEC, bool KB>
void launch_instance(const Params& p, cudaStream_t stream) {
  constexpr bool k_major_b = KB && !TA && !TB && VEC;
  constexpr std::size_t smem = sizeof(float) * S * (BK * (BM + kPad) + (k_major_b ? BN * BK : BK * (BN + kPad)));
  auto kernel = sgemm_simt_kernel<BM, BN, BK, WM, WN, S, MINB, TA, TB, VEC, KB>;
  // Once per instantiation, not per launch: the attribute stays set for the process (one device).
  static const bool smem_configured = [&] {
    GPUFACT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    return true;
  }();
  (void)smem_configured;
  std::int64_t blocks = p.tiles_m * p.tiles_n;
  if (p.map == TileMap::triangle_flipped) {
    const TriangleRectangle r = triangle_rectangle(p.tiles_m);
    blocks = r.rows * r.cols;
  }
  if (blocks > std::numeric_limits<int>::max())
    throw std::invalid_argument("sgemm_simt: " + std::to_string(blocks) + " CTA tiles exceed the grid limit");
  if (p.splits < 1 || p.splits > 65535)
    throw std::invalid_argument("sgemm_simt: " + std::to_string(p.splits) + " k splits outside 1..65535");
  kernel<<<dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(p.splits)), kThreads, smem, stream>>>(p);
  GPUFACT_CHECK_LAUNCH();
}

// KB: NN with 16-byte B copies into a k-major stage (KMajorLoader); the name gets "_kb".
template <int BM, int BN, int BK, int WM, int WN, int S, bool KB = false>
ConfigEntry make_entry() {
  constexpr int TM = BM / WM / 8, TN = BN / WN / 4;
  constexpr int MINB = TM * TN <= 16 ? 4 : TM * TN <= 64 ? 2 : 1;
  SgemmSimtConfig info;
  info.name = "simt_" + std::to_string(BM) + "x" + std::to_string(BN) + "x" + std::to_string(BK) + "_s" +
              std::to_string(S) + (KB ? "_kb" : "");
  info.block_m = BM;
  info.block_n = BN;
  info.block_k = BK;
  info.stages = S;
  info.warps_m = WM;
  info.warps_n = WN;
  info.thread_m = TM;
  info.thread_n = TN;
  info.min_blocks_per_sm = MINB;
  // The larger of the two stage layouts (the k-major one is used only by NN with aligned B).
  info.shared_bytes = sizeof(float) * S * BK * (BM + kPad + BN + kPad);
  return {info,
          launch_instance<BM, BN, BK, WM, WN, S, MINB, false, false, false, false>,
          launch_instance<BM, BN, BK, WM, WN, S, MINB, false, true, false, false>,
          launch_instance<BM, BN, BK, WM, WN, S, MINB, true, false, false, false>,
          launch_instance<BM, BN, BK, WM, WN, S, MINB, false, false, true, KB>,
          launch_instance<BM, BN, BK, WM, WN, S, MINB, false, true, true, false>};
}

// The default (no tuning table): 128 × 128 × 16 tiles, 8 × 8 per thread, 3 stages — the classic
// shape of the best public SIMT SGEMMs with BK = 16 so that one barrier and one round of copies
// serve 1024 FFMA per thread; 2 CTAs (16 warps) per SM.
constexpr const char* kDefaultConfig = "simt_128x128x16_s3";

const std::vector<ConfigEntry>& entries() {
  static const std::vector<ConfigEntry> all = {
      make_entry<128, 128, 8, 2, 4, 3>(),   // 8 × 8 per thread
      make_entry<128, 128, 16, 2, 4, 3>(),  // 8 × 8, half the barriers per flop
      make_entry<128, 128, 8, 2, 4, 4>(),   // 8 × 8, deeper pipeline
      make_entry<128, 64, 16, 2, 4, 3>(),   // 8 × 4: more CTAs for thin / small C
      make_entry<128, 256, 8, 2, 4, 3>(),   // 8 × 16: 1 CTA/SM, fewer shared loads per FFMA
      make_entry<256, 128, 8, 4, 2, 3>(),   // 8 × 16
      make_entry<128, 128, 32, 2, 4, 3>(),  // 8 × 8, a quarter of BK = 8's barriers and copy rounds
      make_entry<128, 128, 16, 2, 4, 4>(),  // 8 × 8, BK = 16 one stage deeper (2 CTAs still fit)
      make_entry<128, 256, 16, 2, 4, 3>(),  // 8 × 16 at BK = 16: 1 CTA/SM, 2048 FFMA per barrier
      make_entry<256, 128, 16, 4, 2, 3>(),  // 8 × 16 at BK = 16
      make_entry<64, 64, 16, 2, 4, 3>(),   // 4 × 4, 4 CTAs/SM: split-k's tile for small C
      make_entry<128, 128, 16, 1, 8, 3, true>(),  // 16 × 4, NN's B by 16-byte copies (k-major stage)
  };
  return all;
}

bool has_bt_suffix(std::string_view name) {
  return name.size() > kSgemmTransposedBSuffix.size() &&
         name.substr(name.size() - kSgemmTransposedBSuffix.size()) == kSgemmTransposedBSuffix;
}

std::string_view base_name(std::string_view name) {
  return has_bt_suffix(name) ? name.substr(0, name.size() - kSgemmTransposedBSuffix.size()) : name;
}

const ConfigEntry& entry(std::string_view name) {
  for (const auto& e : entries())
    if (e.info.name == name) return e;
  std::string known;
  for (const auto& e : entries()) known += (known.empty() ? "" : ", ") + e.info.name;
  throw std::invalid_argument("sgemm_simt: unknown config '" + std::string(name) + "' (known: " + known + ")");
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

void check_sizes(const char* who, std::int64_t m, std::int64_t n, std::int64_t k, Op ta, Op tb, std::int64_t lda,
                 std::int64_t ldb, std::int64_t ldc) {
  auto fail = [&](const std::string& what) { throw std::invalid_argument(std::string(who) + ": " + what); };
  if (m < 0) fail("m = " + std::to_string(m) + " must be >= 0");
  if (n < 0) fail("n = " + std::to_string(n) + " must be >= 0");
  if (k < 0) fail("k = " + std::to_string(k) + " must be >= 0");
  if (ta == Op::T && tb == Op::T) fail("TT is not supported (NN, NT, TN)");
  const std::int64_t a_rows = ta == Op::N ? m : k, b_rows = tb == Op::N ? k : n;
  if (lda < std::max<std::int64_t>(1, a_rows)) fail("lda = " + std::to_string(lda) + " < " + std::to_string(a_rows));
  if (ldb < std::max<std::int64_t>(1, b_rows)) fail("ldb = " + std::to_string(ldb) + " < " + std::to_string(b_rows));
  if (ldc < std::max<std::int64_t>(1, m)) fail("ldc = " + std::to_string(ldc) + " < " + std::to_string(m));
}

void run(const ConfigEntry& e, Params p, Op ta, Op tb, cudaStream_t stream) {
  // 16-byte copies need every column of the m/n-contiguous operands 16-byte aligned.
  const bool a_vec = ta == Op::N ? (p.lda % 4 == 0 && aligned16(p.a)) : true;
  // k-major B (the _kb configs, NN) copies 16 bytes along k: the same conditions plus split
  // slices starting at multiples of 4.
  const std::string& name = e.info.name;
  const bool k_major_b = name.size() > 3 && name.compare(name.size() - 3, 3, "_kb") == 0;
  const bool b_vec = (p.ldb % 4 == 0 && aligned16(p.b)) || (tb == Op::N && !k_major_b);
  const bool slices_aligned = !k_major_b || p.splits == 1 || p.k_slice % 4 == 0;
  const bool vec = a_vec && b_vec && slices_aligned;
  p.vector_c = p.ldc % 4 == 0 && p.split_stride % 4 == 0 && aligned16(p.c);
  if (ta == Op::N && tb == Op::N) (vec ? e.nn_vec : e.nn)(p, stream);
  else if (ta == Op::N) (vec ? e.nt_vec : e.nt)(p, stream);
  else e.tn(p, stream);
}

}  // namespace

std::vector<SgemmSimtConfig> sgemm_simt_configs() {
  std::vector<SgemmSimtConfig> out;
  for (const auto& e : entries()) out.push_back(e.info);
  return out;
}

std::vector<std::string> sgemm_simt_config_names() {
  std::vector<std::string> out;
  for (const auto& e : entries()) out.push_back(e.info.name);
  for (const auto& e : entries()) out.push_back(e.info.name + std::string(kSgemmTransposedBSuffix));
  return out;
}

SgemmSimtConfig sgemm_simt_config(std::string_view name) {
  SgemmSimtConfig info = entry(base_name(name)).info;
  info.name = std::string(name);
  return info;
}

std::string_view sgemm_simt_default_config() { return kDefaultConfig; }

std::size_t sgemm_simt_bt_workspace_floats(std::int64_t n, std::int64_t k) {
  if (n <= 0 || k <= 0) return 0;
  return static_cast<std::size_t>((n + 3) / 4 * 4) * static_cast<std::size_t>(k);
}

namespace {

// B (k × n, ld ldb) → Bᵀ (n × k, ld round_up(n, 4)) in `bt`, then the base config's NT path.
void run_through_transposed_b(const ConfigEntry& e, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                              const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta,
                              float* c, std::int64_t ldc, float* bt, cudaStream_t stream) {
  const std::int64_t ld_bt = (n + 3) / 4 * 4;
  launch_transpose(b, ldb, bt, ld_bt, k, n, stream);
  sgemm_simt(e.info.name, Op::N, Op::T, m, n, k, alpha, a, lda, bt, ld_bt, beta, c, ldc, stream);
}

struct BtWorkspace {
  float* data = nullptr;
  std::size_t floats = 0;
};

std::mutex& bt_cache_mutex() {
  static std::mutex m;
  return m;
}

std::unordered_map<cudaStream_t, BtWorkspace>& bt_cache() {
  static auto* cache = new std::unordered_map<cudaStream_t, BtWorkspace>();  // never destroyed: see release
  return *cache;
}

// The stream's cached workspace, grown to at least `floats`.
float* cached_bt_workspace(cudaStream_t stream, std::size_t floats) {
  std::lock_guard<std::mutex> lock(bt_cache_mutex());
  BtWorkspace& w = bt_cache()[stream];
  if (w.floats < floats) {
    if (w.data) GPUFACT_CUDA_CHECK(cudaFree(w.data));  // synchronizes: no GEMM still reads it
    w = {};
    void* p = nullptr;
    GPUFACT_CUDA_CHECK(cudaMalloc(&p, floats * sizeof(float)));
    w = {static_cast<float*>(p), floats};
  }
  return w.data;
}

}  // namespace

void sgemm_simt_release_bt_workspaces() {
  std::lock_guard<std::mutex> lock(bt_cache_mutex());
  for (auto& [stream, w] : bt_cache())
    if (w.data) GPUFACT_CUDA_CHECK(cudaFree(w.data));
  bt_cache().clear();
}

void sgemm_simt_bt(std::string_view config, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                   const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                   std::int64_t ldc, float* workspace, std::size_t workspace_floats, cudaStream_t stream) {
  const ConfigEntry& e = entry(base_name(config));
  check_sizes("sgemm_simt_bt", m, n, k, Op::N, Op::N, lda, ldb, ldc);
  if (m == 0 || n == 0) return;
  if (k == 0) {  // C := β C: the direct path does it without touching B
    sgemm_simt(e.info.name, Op::N, Op::N, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, stream);
    return;
  }
  const std::size_t need = sgemm_simt_bt_workspace_floats(n, k);
  if (workspace == nullptr || workspace_floats < need)
    throw std::invalid_argument("sgemm_simt_bt: workspace of " + std::to_string(workspace_floats) + " floats < " +
                                std::to_string(need) + " (sgemm_simt_bt_workspace_floats)");
  if (!aligned16(workspace)) throw std::invalid_argument("sgemm_simt_bt: workspace not 16-byte aligned");
  run_through_transposed_b(e, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, workspace, stream);
}
// The fields every launch shares: one unsplit GEMM over the rectangular grid of tiles; callers
// change the map (triangles) or the split (partial products).
Params gemm_params(const ConfigEntry& e, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const float* a,
                   std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  Params p{};
  p.m = m;
  p.n = n;
  p.k = k;
  p.alpha = alpha;
  p.beta = beta;
  p.a = a;
  p.lda = lda;
  p.b = b;
  p.ldb = ldb;
  p.c = c;
  p.ldc = ldc;
  p.tiles_m = (m + e.info.block_m - 1) / e.info.block_m;
  p.tiles_n = (n + e.info.block_n - 1) / e.info.block_n;
  p.swizzle = 8;
  p.map = TileMap::rectangle;
  p.k_slice = k;
  p.split_stride = 0;
  p.splits = 1;
  return p;
}


void sgemm_simt(std::string_view config, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                std::int64_t ldc, cudaStream_t stream) {
  const ConfigEntry& e = entry(base_name(config));
  check_sizes("sgemm_simt", m, n, k, ta, tb, lda, ldb, ldc);
  if (m == 0 || n == 0) return;
  if (has_bt_suffix(config) && ta == Op::N && tb == Op::N && k > 0) {
    float* bt = cached_bt_workspace(stream, sgemm_simt_bt_workspace_floats(n, k));
    run_through_transposed_b(e, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, bt, stream);
    return;
  }
  const Params p = gemm_params(e, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  run(e, p, ta, tb, stream);
}

void sgemm_simt_partials(std::string_view config, Op ta, Op tb, std::int64_t m, std::int64_t n, std::int64_t k,
                         int splits, std::int64_t slice, const float* a, std::int64_t lda, const float* b,
                         std::int64_t ldb, float* workspace, std::size_t workspace_floats, cudaStream_t stream) {
  const ConfigEntry& e = entry(config);
  check_sizes("sgemm_simt_partials", m, n, k, ta, tb, lda, ldb, std::max<std::int64_t>(1, m));
  if (splits < 1 || splits > 65535)
    throw std::invalid_argument("sgemm_simt_partials: splits = " + std::to_string(splits) + " outside 1..65535");
  if (slice < 1) throw std::invalid_argument("sgemm_simt_partials: slice = " + std::to_string(slice) + " must be >= 1");
  if (slice * splits < k)
    throw std::invalid_argument("sgemm_simt_partials: " + std::to_string(splits) + " slices of " +
                                std::to_string(slice) + " do not cover k = " + std::to_string(k));
  if (m == 0 || n == 0) return;
  const std::size_t need = static_cast<std::size_t>(m) * static_cast<std::size_t>(n) * static_cast<std::size_t>(splits);
  if (workspace == nullptr || workspace_floats < need)
    throw std::invalid_argument("sgemm_simt_partials: workspace of " + std::to_string(workspace_floats) +
                                " floats, " + std::to_string(need) + " needed");
  Params p = gemm_params(e, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, workspace, m);
  p.k_slice = slice;
  p.split_stride = m * n;
  p.splits = splits;
  run(e, p, ta, tb, stream);
}

void sgemm_triangular_simt(std::string_view config, TriangleGrid grid, Uplo uplo, Op ta, Op tb, std::int64_t n,
                           std::int64_t k, float alpha, const float* a, std::int64_t lda, const float* b,
                           std::int64_t ldb, float beta, float* c, std::int64_t ldc, cudaStream_t stream) {
  const ConfigEntry& e = entry(config);
  if (e.info.block_m != e.info.block_n)
    throw std::invalid_argument("sgemm_triangular_simt: config '" + e.info.name + "' has non-square tiles");
  check_sizes("sgemm_triangular_simt", n, n, k, ta, tb, lda, ldb, ldc);
  if (n == 0) return;
  Params p = gemm_params(e, n, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  p.map = grid == TriangleGrid::flipped ? TileMap::triangle_flipped : TileMap::triangle_early_exit;
  p.uplo = uplo == Uplo::lower ? 0 : 1;
  run(e, p, ta, tb, stream);
}

void sgemm_triangular_simt(Uplo uplo, Op ta, Op tb, std::int64_t n, std::int64_t k, float alpha, const float* a,
                           std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
                           std::int64_t ldc, cudaStream_t stream) {
  sgemm_triangular_simt(kDefaultConfig, TriangleGrid::flipped, uplo, ta, tb, n, k, alpha, a, lda, b, ldb, beta, c,
                        ldc, stream);
}

}  // namespace gpufact::kernels
