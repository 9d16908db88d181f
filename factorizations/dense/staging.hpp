// Moving blocks of a column-major matrix in pinned host memory to and from a device copy kept
// either column-major or row-major (volkov08 §5: the LU keeps it row-major on the GPU; blocks are
// transposed on the GPU through a smaller staging buffer on their way, out of place).
#pragma once

#include "factorizations/dense/phase_timer.hpp"

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpufact::dense {

template <class T>
struct DeviceMatrix {
  T* data = nullptr;
  std::int64_t rows = 0, cols = 0, ld = 0;
  bool row_major = false;
  T* at(std::int64_t i, std::int64_t j) const { return row_major ? data + i * ld + j : data + i + j * ld; }
};

// The padded leading dimension for an m × n device copy in the given layout.
std::int64_t device_ld(std::int64_t m, std::int64_t n, bool row_major);

// Host block rows [r0, r1) × columns [c0, c1) of `a` (lda) to the same block of `d` on `s`. A
// row-major `d` goes through `stage` ((r1 − r0)·(c1 − c0) elements) and a transpose kernel.
template <class T>
void upload_block(const T* a, std::int64_t lda, DeviceMatrix<T> d, std::int64_t r0, std::int64_t r1, std::int64_t c0,
                  std::int64_t c1, T* stage, cudaStream_t s, PhaseTimer* timer);
template <class T>
void download_block(DeviceMatrix<T> d, T* a, std::int64_t lda, std::int64_t r0, std::int64_t r1, std::int64_t c0,
                    std::int64_t c1, T* stage, cudaStream_t s, PhaseTimer* timer);

// The whole matrix, in column chunks that fit `stage` (stage_elements >= d.rows).
template <class T>
void upload_matrix(const T* a, std::int64_t lda, DeviceMatrix<T> d, T* stage, std::int64_t stage_elements,
                   cudaStream_t s, PhaseTimer* timer);
template <class T>
void download_matrix(DeviceMatrix<T> d, T* a, std::int64_t lda, T* stage, std::int64_t stage_elements, cudaStream_t s,
                     PhaseTimer* timer);

}  // namespace gpufact::dense
