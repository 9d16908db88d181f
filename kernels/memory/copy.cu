#include "kernels/memory/copy.cuh"

#include "core/cuda/check.hpp"
#include "core/cuda/device.hpp"

#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

namespace gpufact::kernels {
namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ uint4 load16(const uint4* p, bool streaming) { return streaming ? __ldcs(p) : *p; }
__device__ __forceinline__ void store16(uint4* p, uint4 v, bool streaming) {
  if (streaming)
    __stcs(p, v);
  else
    *p = v;
}

// Each block handles chunks of U × kThreads vectors; all U loads of a chunk are issued before its
// stores, so U 16-byte requests per thread are in flight (volkov08 §3.7: bandwidth needs many
// outstanding accesses). FULL: one chunk per block; otherwise a resident wave loops over the data.
template <int U, bool CS, bool FULL>
__global__ void __launch_bounds__(kThreads) copy_vec16_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst,
                                                               std::size_t n) {
  const std::size_t chunk = static_cast<std::size_t>(kThreads) * U;
  const std::size_t step = FULL ? n : static_cast<std::size_t>(gridDim.x) * chunk;
  for (std::size_t base = blockIdx.x * chunk + threadIdx.x; base < n; base += step) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * kThreads;
      if (i < n) v[u] = load16(src + i, CS);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * kThreads;
      if (i < n) store16(dst + i, v[u], CS);
    }
  }
}

__device__ __forceinline__ void xor_reduce_to(unsigned acc, unsigned* checksum) {
  for (int off = 16; off > 0; off >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, off);
  if ((threadIdx.x & 31) == 0 && acc) atomicXor(checksum, acc);
}

template <int U, bool CS, bool FULL>
__global__ void __launch_bounds__(kThreads) read_vec16_kernel(const uint4* __restrict__ src, std::size_t n,
                                                               unsigned* checksum) {
  const std::size_t chunk = static_cast<std::size_t>(kThreads) * U;
  const std::size_t step = FULL ? n : static_cast<std::size_t>(gridDim.x) * chunk;
  unsigned acc = 0;
  for (std::size_t base = blockIdx.x * chunk + threadIdx.x; base < n; base += step) {
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * kThreads;
      v[u] = i < n ? load16(src + i, CS) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  xor_reduce_to(acc, checksum);
}

// Byte j of a written region is (j * 131 + seed) & 0xff; four consecutive bytes differ by
// 0, 131, 262, 393 (mod 256) = 0x00, 0x83, 0x06, 0x89, added per byte without carries.
__device__ __forceinline__ unsigned pattern_word(std::size_t byte_offset, unsigned seed) {
  const unsigned b = static_cast<unsigned>(byte_offset * 131u + seed) & 0xffu;
  return __vadd4(b * 0x01010101u, 0x89068300u);
}

template <int U, bool CS, bool FULL>
__global__ void __launch_bounds__(kThreads) write_vec16_kernel(uint4* __restrict__ dst, std::size_t n,
                                                                std::size_t region_offset, unsigned seed) {
  const std::size_t chunk = static_cast<std::size_t>(kThreads) * U;
  const std::size_t step = FULL ? n : static_cast<std::size_t>(gridDim.x) * chunk;
  for (std::size_t base = blockIdx.x * chunk + threadIdx.x; base < n; base += step) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      const std::size_t i = base + static_cast<std::size_t>(u) * kThreads;
      if (i < n) {
        const std::size_t o = region_offset + 16 * i;
        store16(dst + i,
                make_uint4(pattern_word(o, seed), pattern_word(o + 4, seed), pattern_word(o + 8, seed),
                           pattern_word(o + 12, seed)),
                CS);
      }
    }
  }
}

__global__ void copy_bytes_kernel(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                                  std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    dst[i] = src[i];
}

__global__ void xor_words_kernel(const std::uint32_t* __restrict__ src, std::size_t n, unsigned* checksum) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    acc ^= src[i];
  xor_reduce_to(acc, checksum);
}

__global__ void write_bytes_kernel(unsigned char* __restrict__ dst, std::size_t n, std::size_t region_offset,
                                   unsigned seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    dst[i] = static_cast<unsigned char>(((region_offset + i) * 131u + seed) & 0xffu);
}

__global__ void copy_strided_kernel(const std::uint32_t* __restrict__ src, std::uint32_t* __restrict__ dst,
                                    std::size_t n, std::size_t stride) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) dst[i * stride] = src[i * stride];
}

__global__ void count_pattern_kernel(const unsigned char* region, std::size_t n, unsigned seed,
                                     unsigned long long* count) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    local += region[i] != static_cast<unsigned char>((i * 131u + seed) & 0xffu);
  for (int off = 16; off > 0; off >>= 1) local += __shfl_down_sync(0xffffffffu, local, off);
  if ((threadIdx.x & 31) == 0 && local) atomicAdd(count, local);
}

__global__ void count_strided_kernel(const std::uint32_t* a, const std::uint32_t* b, std::size_t n,
                                     std::size_t stride, unsigned long long* count) {
  const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  unsigned long long local = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += step)
    local += a[i * stride] != b[i * stride];
  for (int off = 16; off > 0; off >>= 1) local += __shfl_down_sync(0xffffffffu, local, off);
  if ((threadIdx.x & 31) == 0 && local) atomicAdd(count, local);
}

unsigned grid_stride_blocks(std::size_t n, unsigned threads) {
  const std::size_t b = (n + threads - 1) / threads;
  return static_cast<unsigned>(b == 0 ? 1 : (b < 65536 ? b : 65536));
}

// Blocks for a streaming kernel over n vectors: one chunk each (full grid), or one resident wave.
template <class Kernel>
unsigned stream_blocks(Kernel kernel, std::size_t n, int unroll, bool full_grid) {
  const std::size_t chunks = (n + static_cast<std::size_t>(kThreads) * unroll - 1) / (static_cast<std::size_t>(kThreads) * unroll);
  if (full_grid) return static_cast<unsigned>(chunks == 0 ? 1 : chunks);
  static std::unordered_map<const void*, int> occupancy;
  auto it = occupancy.find(reinterpret_cast<const void*>(kernel));
  if (it == occupancy.end()) {
    int blocks = 0;
    GPUFACT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kThreads, 0));
    it = occupancy.emplace(reinterpret_cast<const void*>(kernel), blocks).first;
  }
  const std::size_t wave = static_cast<std::size_t>(current_device_sm_count()) * static_cast<std::size_t>(it->second);
  return static_cast<unsigned>(chunks < wave ? (chunks == 0 ? 1 : chunks) : wave);
}

// Calls f(integral_constant<int, U>, bool_constant<CS>, bool_constant<FULL>) for the
// configuration's template instance.
template <class F>
void dispatch(const StreamConfig& c, F&& f) {
  auto by_grid = [&](auto u, auto cs) {
    if (c.full_grid)
      f(u, cs, std::true_type{});
    else
      f(u, cs, std::false_type{});
  };
  auto by_hint = [&](auto u) {
    if (c.streaming_hints)
      by_grid(u, std::true_type{});
    else
      by_grid(u, std::false_type{});
  };
  switch (c.unroll) {
    case 1: by_hint(std::integral_constant<int, 1>{}); break;
    case 2: by_hint(std::integral_constant<int, 2>{}); break;
    case 4: by_hint(std::integral_constant<int, 4>{}); break;
    case 8: by_hint(std::integral_constant<int, 8>{}); break;
    default: throw std::invalid_argument("StreamConfig.unroll must be 1, 2, 4 or 8");
  }
}

// Splits [p, p + bytes) into a head before the first 128-byte boundary, 16-byte vectors, and a
// tail. Aligning the body to whole lines (not just to 16 bytes) keeps each warp's 512-byte access
// on whole 32-byte sectors: a body that starts mid-sector makes neighbouring warps write halves
// of the same sectors, which the L2 must merge (measured ~20% slower on an H200).
struct Peel {
  std::size_t head, vectors, tail;
};
Peel peel(std::uintptr_t p, std::size_t bytes) {
  std::size_t head = (128 - p % 128) % 128;
  if (head > bytes) head = bytes;
  const std::size_t vectors = (bytes - head) / 16;
  return {head, vectors, bytes - head - 16 * vectors};
}

}  // namespace

StreamConfig parse_stream_config(const std::string& name) {
  StreamConfig c;
  c.full_grid = false;
  std::size_t pos = 0;
  if (name.size() < 2 || name[0] != 'u') throw std::invalid_argument("stream config '" + name + "': expected uN[-cs][-full]");
  c.unroll = name[1] - '0';
  pos = 2;
  while (pos < name.size()) {
    if (name.compare(pos, 3, "-cs") == 0) {
      c.streaming_hints = true;
      pos += 3;
    } else if (name.compare(pos, 5, "-full") == 0) {
      c.full_grid = true;
      pos += 5;
    } else {
      throw std::invalid_argument("stream config '" + name + "': expected uN[-cs][-full]");
    }
  }
  if (c.unroll != 1 && c.unroll != 2 && c.unroll != 4 && c.unroll != 8)
    throw std::invalid_argument("stream config '" + name + "': unroll must be 1, 2, 4 or 8");
  return c;
}

void launch_copy_bytewise(const void* src, void* dst, std::size_t bytes, cudaStream_t stream) {
  if (bytes == 0) return;
  const std::size_t cap = static_cast<std::size_t>(current_device_sm_count()) * 8;
  const std::size_t needed = (bytes + kThreads - 1) / kThreads;
  copy_bytes_kernel<<<static_cast<unsigned>(needed < cap ? needed : cap), kThreads, 0, stream>>>(
      static_cast<const unsigned char*>(src), static_cast<unsigned char*>(dst), bytes);
  GPUFACT_CHECK_LAUNCH();
}

void launch_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream, StreamConfig config) {
  if (bytes == 0) return;
  const auto s = reinterpret_cast<std::uintptr_t>(src), d = reinterpret_cast<std::uintptr_t>(dst);
  if (s % 128 != d % 128) {  // differing misalignment would need shifts: byte-wise fallback
    launch_copy_bytewise(src, dst, bytes, stream);
    return;
  }
  const Peel p = peel(s, bytes);
  const auto* s8 = static_cast<const unsigned char*>(src);
  auto* d8 = static_cast<unsigned char*>(dst);
  if (p.head) {
    copy_bytes_kernel<<<1, 32, 0, stream>>>(s8, d8, p.head);
    GPUFACT_CHECK_LAUNCH();
  }
  if (p.vectors) {
    const auto* sv = reinterpret_cast<const uint4*>(s8 + p.head);
    auto* dv = reinterpret_cast<uint4*>(d8 + p.head);
    dispatch(config, [&](auto u, auto cs, auto full) {
      constexpr int U = decltype(u)::value;
      constexpr bool CS = decltype(cs)::value, FULL = decltype(full)::value;
      const unsigned blocks = stream_blocks(copy_vec16_kernel<U, CS, FULL>, p.vectors, U, FULL);
      copy_vec16_kernel<U, CS, FULL><<<blocks, kThreads, 0, stream>>>(sv, dv, p.vectors);
      GPUFACT_CHECK_LAUNCH();
    });
  }
  if (p.tail) {
    const std::size_t at = p.head + 16 * p.vectors;
    copy_bytes_kernel<<<1, 32, 0, stream>>>(s8 + at, d8 + at, p.tail);
    GPUFACT_CHECK_LAUNCH();
  }
}

void launch_read(const void* src, std::size_t bytes, unsigned* checksum, cudaStream_t stream, StreamConfig config) {
  const auto s = reinterpret_cast<std::uintptr_t>(src);
  const std::uintptr_t first_word = (s + 3) / 4 * 4, end_word = (s + bytes) / 4 * 4;
  if (end_word <= first_word) return;
  const Peel p = peel(first_word, end_word - first_word);  // head and tail are whole words here (4 | 128)
  const auto* w = reinterpret_cast<const std::uint32_t*>(first_word);
  if (p.head) {
    xor_words_kernel<<<1, 32, 0, stream>>>(w, p.head / 4, checksum);
    GPUFACT_CHECK_LAUNCH();
  }
  if (p.vectors) {
    const auto* v = reinterpret_cast<const uint4*>(first_word + p.head);
    dispatch(config, [&](auto u, auto cs, auto full) {
      constexpr int U = decltype(u)::value;
      constexpr bool CS = decltype(cs)::value, FULL = decltype(full)::value;
      const unsigned blocks = stream_blocks(read_vec16_kernel<U, CS, FULL>, p.vectors, U, FULL);
      read_vec16_kernel<U, CS, FULL><<<blocks, kThreads, 0, stream>>>(v, p.vectors, checksum);
      GPUFACT_CHECK_LAUNCH();
    });
  }
  if (p.tail) {
    xor_words_kernel<<<1, 32, 0, stream>>>(w + (p.head + 16 * p.vectors) / 4, p.tail / 4, checksum);
    GPUFACT_CHECK_LAUNCH();
  }
}

void launch_write(void* dst, std::size_t bytes, unsigned seed, cudaStream_t stream, StreamConfig config) {
  if (bytes == 0) return;
  const Peel p = peel(reinterpret_cast<std::uintptr_t>(dst), bytes);
  auto* d8 = static_cast<unsigned char*>(dst);
  if (p.head) {
    write_bytes_kernel<<<1, 32, 0, stream>>>(d8, p.head, 0, seed);
    GPUFACT_CHECK_LAUNCH();
  }
  if (p.vectors) {
    auto* v = reinterpret_cast<uint4*>(d8 + p.head);
    dispatch(config, [&](auto u, auto cs, auto full) {
      constexpr int U = decltype(u)::value;
      constexpr bool CS = decltype(cs)::value, FULL = decltype(full)::value;
      const unsigned blocks = stream_blocks(write_vec16_kernel<U, CS, FULL>, p.vectors, U, FULL);
      write_vec16_kernel<U, CS, FULL><<<blocks, kThreads, 0, stream>>>(v, p.vectors, p.head, seed);
      GPUFACT_CHECK_LAUNCH();
    });
  }
  if (p.tail) {
    const std::size_t at = p.head + 16 * p.vectors;
    write_bytes_kernel<<<1, 32, 0, stream>>>(d8 + at, p.tail, at, seed);
    GPUFACT_CHECK_LAUNCH();
  }
}

void launch_copy_strided(const std::uint32_t* src, std::uint32_t* dst, std::size_t n, std::size_t stride,
                         cudaStream_t stream) {
  if (n == 0) return;
  const std::size_t blocks = (n + kThreads - 1) / kThreads;
  copy_strided_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(src, dst, n, stride);
  GPUFACT_CHECK_LAUNCH();
}

void launch_count_pattern_mismatches(const void* region, std::size_t n, unsigned seed, unsigned long long* count,
                                     cudaStream_t stream) {
  if (n == 0) return;
  count_pattern_kernel<<<grid_stride_blocks(n, 256), 256, 0, stream>>>(static_cast<const unsigned char*>(region), n,
                                                                       seed, count);
  GPUFACT_CHECK_LAUNCH();
}

void launch_count_strided_mismatches(const std::uint32_t* a, const std::uint32_t* b, std::size_t n,
                                     std::size_t stride, unsigned long long* count, cudaStream_t stream) {
  if (n == 0) return;
  count_strided_kernel<<<grid_stride_blocks(n, 256), 256, 0, stream>>>(a, b, n, stride, count);
  GPUFACT_CHECK_LAUNCH();
}

}  // namespace gpufact::kernels
