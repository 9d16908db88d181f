// What the three GEMM experiments share: operands made on the device from a fresh seed (with
// host copies for the references), one timed-then-verified run per kernel, the verification
// policy, and the rate metrics (TFLOP/s, % of the FP32 FMA peak at the measured clock).
#pragma once

#include "core/bench/case.hpp"
#include "core/cuda/buffer.hpp"
#include "core/linalg/blas_types.hpp"
#include "core/linalg/matrix_view.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpufact::factorizations::gemm_bench {

struct Shape {
  std::int64_t m = 0, n = 0, k = 0;
  Op tb = Op::N;  // op(A) = A always: the paper's AB and ABᵀ
  double flops() const { return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
  double work() const { return static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k); }
};

// Up to this m·n·k the full double-precision host reference (gemm_error) checks every entry;
// above it, 256 sampled entries against exact dot products plus every entry against cuBLAS.
inline constexpr double kFullReferenceWork = 2147483648.0;  // 2^31, about 1290³
inline constexpr int kSampledEntries = 256;

// "NN" / "NT" → op(B); throws UsageError naming the axis otherwise.
Op trans_b_from(const std::string& trans);

// A (m × k), B (k × n or n × k), C₀ (m × n) uniform in [-1, 1) from the case's seed, on the
// device, with host copies. c is the output buffer the kernels write.
template <class T>
struct Operands {
  Shape shape;
  T alpha = T(1), beta = T(0);
  DeviceBuffer<T> a, b, c0, c;
  HostMatrix<T> ha, hb, hc0;
  std::int64_t lda() const { return shape.m; }
  std::int64_t ldb() const { return shape.tb == Op::N ? shape.k : shape.n; }
  std::int64_t ldc() const { return shape.m; }
};

// Device bytes the operands need, plus `extra_matrices` more of C's size.
template <class T>
std::size_t operand_bytes(const Shape& s, int extra_matrices);

template <class T>
Operands<T> make_operands(Case& c, const Shape& s, T alpha, T beta);

// Makes c ready for a run: C₀ when β ≠ 0, NaN everywhere when β = 0 (the kernel must not read it).
template <class T>
void prepare_output(Operands<T>& op, cudaStream_t s);

// Copies the device output back.
template <class T>
HostMatrix<T> fetch_output(const Operands<T>& op, cudaStream_t s);

// Times `launch` (C := α A op(B) + β C on the case stream) as measurement `name`, then runs it
// once more on a prepared output and returns that output (nullopt when the filter excluded it).
template <class T>
std::optional<HostMatrix<T>> time_and_run(Case& c, Operands<T>& op, const std::string& name, const std::string& label,
                                          const std::function<void()>& launch);

// The verification policy (precision-specific bounds in the method names):
//   m·n·k ≤ kFullReferenceWork: every entry, gemm_error (units of ε; bound k + 2, doubled for
//   FP64 whose reference is only as exact as the computation);
//   larger: kSampledEntries entries against long-double dot products (bound k + 2) and, when
//   `second` is given (cuBLAS's C), every entry against it with gemm_difference.
template <class T>
void verify_product(Case& c, const std::string& who, const Shape& s, const HostMatrix<T>& ha, const HostMatrix<T>& hb,
                    const HostMatrix<T>& hc0, const HostMatrix<T>& result, const HostMatrix<T>* second, T alpha,
                    T beta);

// Adds `<name>/tflop_rate` and `<name>/percent_of_peak` (FP32 FMA peak at `<name>/sm_clock`, or
// at the device's maximum clock when no probe ran) from `<name>/flop_rate`.
void add_rate_metrics(Case& c, const std::string& name, const std::string& label);

// The largest divisor of blocks that is at most sqrt(blocks / 4): C of `blocks` 64 × 16 blocks
// as square as it gets (4 q² blocks: exactly 64q × 64q).
std::int64_t block_rows_for(std::int64_t blocks);


}  // namespace gpufact::factorizations::gemm_bench
