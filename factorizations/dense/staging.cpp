#include "factorizations/dense/staging.hpp"

#include "core/cuda/check.hpp"
#include "kernels/dense/transpose.cuh"

#include <algorithm>
#include <stdexcept>

namespace gpufact::dense {

std::int64_t device_ld(std::int64_t m, std::int64_t n, bool row_major) {
  const std::int64_t x = std::max<std::int64_t>(row_major ? n : m, 1);
  return (x + 31) / 32 * 32;  // 128-byte rows for FP32: aligned GEMM operands and swap rows
}

template <class T>
void upload_block(const T* a, std::int64_t lda, DeviceMatrix<T> d, std::int64_t r0, std::int64_t r1, std::int64_t c0,
                  std::int64_t c1, T* stage, cudaStream_t s, PhaseTimer* timer) {
  const std::int64_t rows = r1 - r0, cols = c1 - c0;
  if (rows <= 0 || cols <= 0) return;
  const T* src = a + r0 + c0 * lda;
  if (!d.row_major) {
    GpuPhase p(timer, Phase::transfer, s);
    GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(d.at(r0, c0), d.ld * sizeof(T), src, lda * sizeof(T), rows * sizeof(T), cols,
                                         cudaMemcpyHostToDevice, s));
    return;
  }
  {
    GpuPhase p(timer, Phase::transfer, s);
    GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(stage, rows * sizeof(T), src, lda * sizeof(T), rows * sizeof(T), cols,
                                         cudaMemcpyHostToDevice, s));
  }
  GpuPhase p(timer, Phase::transpose, s);
  kernels::launch_transpose(stage, rows, d.at(r0, c0), d.ld, rows, cols, s);
}

template <class T>
void download_block(DeviceMatrix<T> d, T* a, std::int64_t lda, std::int64_t r0, std::int64_t r1, std::int64_t c0,
                    std::int64_t c1, T* stage, cudaStream_t s, PhaseTimer* timer) {
  const std::int64_t rows = r1 - r0, cols = c1 - c0;
  if (rows <= 0 || cols <= 0) return;
  T* dst = a + r0 + c0 * lda;
  if (!d.row_major) {
    GpuPhase p(timer, Phase::transfer, s);
    GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(dst, lda * sizeof(T), d.at(r0, c0), d.ld * sizeof(T), rows * sizeof(T), cols,
                                         cudaMemcpyDeviceToHost, s));
    return;
  }
  {
    // Row-major block read as column-major is cols × rows with ld d.ld; its transpose is the block.
    GpuPhase p(timer, Phase::transpose, s);
    kernels::launch_transpose(static_cast<const T*>(d.at(r0, c0)), d.ld, stage, rows, cols, rows, s);
  }
  GpuPhase p(timer, Phase::transfer, s);
  GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(dst, lda * sizeof(T), stage, rows * sizeof(T), rows * sizeof(T), cols,
                                       cudaMemcpyDeviceToHost, s));
}

namespace {
std::int64_t chunk_columns(std::int64_t rows, std::int64_t stage_elements) {
  if (rows <= 0) return 1;
  if (stage_elements < rows) throw std::invalid_argument("staging buffer holds less than one column");
  return stage_elements / rows;
}
}  // namespace

template <class T>
void upload_matrix(const T* a, std::int64_t lda, DeviceMatrix<T> d, T* stage, std::int64_t stage_elements,
                   cudaStream_t s, PhaseTimer* timer) {
  if (!d.row_major) return upload_block(a, lda, d, 0, d.rows, 0, d.cols, stage, s, timer);
  const std::int64_t step = chunk_columns(d.rows, stage_elements);
  for (std::int64_t c = 0; c < d.cols; c += step)
    upload_block(a, lda, d, 0, d.rows, c, std::min(c + step, d.cols), stage, s, timer);
}

template <class T>
void download_matrix(DeviceMatrix<T> d, T* a, std::int64_t lda, T* stage, std::int64_t stage_elements, cudaStream_t s,
                     PhaseTimer* timer) {
  if (!d.row_major) return download_block(d, a, lda, 0, d.rows, 0, d.cols, stage, s, timer);
  const std::int64_t step = chunk_columns(d.rows, stage_elements);
  for (std::int64_t c = 0; c < d.cols; c += step)
    download_block(d, a, lda, 0, d.rows, c, std::min(c + step, d.cols), stage, s, timer);
}

#define GPUFACT_INSTANTIATE(T)                                                                                      \
  template void upload_block<T>(const T*, std::int64_t, DeviceMatrix<T>, std::int64_t, std::int64_t, std::int64_t, \
                                std::int64_t, T*, cudaStream_t, PhaseTimer*);                                        \
  template void download_block<T>(DeviceMatrix<T>, T*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,     \
                                  std::int64_t, T*, cudaStream_t, PhaseTimer*);                                      \
  template void upload_matrix<T>(const T*, std::int64_t, DeviceMatrix<T>, T*, std::int64_t, cudaStream_t,          \
                                 PhaseTimer*);                                                                       \
  template void download_matrix<T>(DeviceMatrix<T>, T*, std::int64_t, T*, std::int64_t, cudaStream_t, PhaseTimer*);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact::dense
