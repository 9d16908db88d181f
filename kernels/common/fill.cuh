// Device-side random inputs (counter-based: element i depends only on seed and i, so any grid
// shape gives the same data) and a mismatch counter for verifying copies.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpufact::kernels {

void launch_fill_uniform(float* data, std::size_t count, std::uint64_t seed, float lo, float hi, cudaStream_t stream);
void launch_fill_uniform(double* data, std::size_t count, std::uint64_t seed, double lo, double hi,
                         cudaStream_t stream);
// Random 32-bit words, none of them zero.
void launch_fill_random_words(std::uint32_t* data, std::size_t count, std::uint64_t seed, cudaStream_t stream);
// Adds to *count the number of i < n with a[i] != b[i]; *count must be zeroed first.
void launch_count_mismatches(const std::uint32_t* a, const std::uint32_t* b, std::size_t n,
                             unsigned long long* count, cudaStream_t stream);

}  // namespace gpufact::kernels
