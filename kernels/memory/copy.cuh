// Device memory streaming kernels for volkov08 §3.7: copy, read-only, write-only, strided copy.
// Contiguous kernels move 16-byte vectors; a pointer that is not 128-byte aligned has its head
// (up to the next line boundary) and tail peeled off (the paper's fix: "a large aligned copy and one less efficient but much
// smaller copy at the head"), so misalignment costs only those few bytes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpufact::kernels {

// How a streaming kernel is shaped: 16-byte vectors in flight per thread (1, 2, 4, 8), streaming
// cache hints (ld.cs/st.cs: evict-first) or default caching, and the grid: one wave of resident
// blocks looping over the data ("wave") or one block per chunk ("full").
// Default: u4-full, the fastest shape on an H200 for copy, read and write alike (results/nvidia-h200).
struct StreamConfig {
  int unroll = 4;
  bool streaming_hints = false;
  bool full_grid = true;
};
// Parses "u4", "u8-cs", "u4-full", "u8-cs-full", ...; throws std::invalid_argument.
StreamConfig parse_stream_config(const std::string& name);

// Copies `bytes` from src to dst. When src and dst share their alignment modulo 128 the head and
// tail are peeled and the body moves 16-byte vectors; otherwise a byte-wise path copies everything.
void launch_copy(const void* src, void* dst, std::size_t bytes, cudaStream_t stream, StreamConfig config = {});

// The paper's "same code" on misaligned data: one byte per thread, no peeling.
void launch_copy_bytewise(const void* src, void* dst, std::size_t bytes, cudaStream_t stream);

// Reads `bytes` (any alignment) and XORs every 32-bit word of the 4-byte aligned part into
// *checksum (which must be zeroed first); the XOR keeps the loads live and checks them.
void launch_read(const void* src, std::size_t bytes, unsigned* checksum, cudaStream_t stream, StreamConfig config = {});

// Writes `bytes` at dst (any alignment): byte i of the region is (i * 131 + seed) & 0xff.
void launch_write(void* dst, std::size_t bytes, unsigned seed, cudaStream_t stream, StreamConfig config = {});

// Copies n 32-bit words: dst[i * stride] = src[i * stride], one word per thread (volkov08 §3.7's
// strided case: each vector thread reads and writes one vector with the given stride).
void launch_copy_strided(const std::uint32_t* src, std::uint32_t* dst, std::size_t n, std::size_t stride,
                         cudaStream_t stream);

// Counts bytes i < n where region[i] != (i * 131 + seed) & 0xff into *count (zeroed first).
void launch_count_pattern_mismatches(const void* region, std::size_t n, unsigned seed, unsigned long long* count,
                                     cudaStream_t stream);

// Counts words i < n with a[i * stride] != b[i * stride] into *count (zeroed first).
void launch_count_strided_mismatches(const std::uint32_t* a, const std::uint32_t* b, std::size_t n,
                                     std::size_t stride, unsigned long long* count, cudaStream_t stream);

}  // namespace gpufact::kernels
