#include "factorizations/caqr/tsqr_register.hpp"

#include <stdexcept>
#include <string>

namespace gpufact::factorizations {

kernels::TsqrTreeArgs make_tsqr_tree(std::int64_t m, std::int64_t n, int block_rows) {
  if (n < 1 || n > kernels::kTsqrMaxWidth)
    throw std::invalid_argument("register TSQR: n = " + std::to_string(n) + "; it factors 1 … " +
                                std::to_string(kernels::kTsqrMaxWidth) + " columns");
  if (m < n) throw std::invalid_argument("register TSQR: m = " + std::to_string(m) + " < n = " + std::to_string(n));
  if (block_rows < 2 * n)
    throw std::invalid_argument("register TSQR: blocks of " + std::to_string(block_rows) + " rows cannot stack two " +
                                std::to_string(n) + "-row R's");
  kernels::TsqrTreeArgs t;
  t.m = m;
  t.n = static_cast<int>(n);
  t.fan_in = static_cast<int>(block_rows / n);
  const std::int64_t leaves = (m + block_rows - 1) / block_rows;
  if (leaves > (std::int64_t{1} << 30)) throw std::invalid_argument("register TSQR: m = " + std::to_string(m) + " is too tall");
  if (m / leaves < n)
    throw std::invalid_argument("register TSQR: leaves of " + std::to_string(m / leaves) + " rows are shorter than n = " +
                                std::to_string(n));
  t.nodes[0] = static_cast<int>(leaves);
  while (t.nodes[t.levels] > 1) {
    if (t.levels == kernels::kTsqrMaxLevels)
      throw std::invalid_argument("register TSQR: more than " + std::to_string(kernels::kTsqrMaxLevels) + " tree levels");
    const int below = t.nodes[t.levels];
    ++t.levels;
    t.nodes[t.levels] = (below + t.fan_in - 1) / t.fan_in;
  }
  const std::int64_t stack = static_cast<std::int64_t>(t.fan_in) * n * n;
  for (int l = 0; l < t.levels; ++l) {
    t.tau_offset[l + 1] = t.tau_offset[l] + static_cast<std::int64_t>(t.nodes[l]) * n;
    if (l >= 1) {
      t.stack_offset[l + 1] = t.stack_offset[l] + t.nodes[l] * stack;
      t.counter_offset[l + 1] = t.counter_offset[l] + t.nodes[l];
    }
  }
  return t;
}

TsqrTreeSizes tsqr_tree_sizes(const kernels::TsqrTreeArgs& t) {
  TsqrTreeSizes s;
  const int top = t.levels;
  s.tau = static_cast<std::size_t>(t.tau_offset[top] + static_cast<std::int64_t>(t.nodes[top]) * t.n);
  if (top >= 1) {
    s.stacks = static_cast<std::size_t>(t.stack_offset[top] + static_cast<std::int64_t>(t.nodes[top]) * t.fan_in * t.n * t.n);
    s.counters = static_cast<std::size_t>(t.counter_offset[top] + t.nodes[top]);
  }
  return s;
}

namespace {
template <class T>
kernels::TsqrTreeArgs tree_for(std::int64_t m, std::int64_t n) {
  const int width = kernels::tsqr_register_width(static_cast<int>(n));
  if (width == 0)
    throw std::invalid_argument("register TSQR: n = " + std::to_string(n) + "; it factors 1 … " +
                                std::to_string(kernels::kTsqrMaxWidth) + " columns");
  // Measured on the H200 (results/nvidia-h200/tsqr-register-threads-{128,256}.md): 128-thread blocks (four
  // per SM, more latency hidden across blocks) win for 16-wide FP32 panels by 10–12%; 256 win
  // for 32-wide panels and for FP64 at 16 wide except n ≤ 10.
  const int threads = width == 16 && (sizeof(T) == 4 || n <= 10) ? 128 : 256;
  auto tree = make_tsqr_tree(m, n, kernels::tsqr_register_block_rows<T>(width, threads));
  tree.threads = threads;
  return tree;
}
}  // namespace

template <class T>
TsqrRegisterPlan<T>::TsqrRegisterPlan(std::int64_t m, std::int64_t n) : tree_(tree_for<T>(m, n)) {
  const auto sizes = tsqr_tree_sizes(tree_);
  v_ = DeviceBuffer<T>(static_cast<std::size_t>(m * n));
  stacks_ = DeviceBuffer<T>(sizes.stacks);
  q_stacks_ = DeviceBuffer<T>(sizes.stacks);
  tau_ = DeviceBuffer<T>(sizes.tau);
  counters_ = DeviceBuffer<unsigned>(sizes.counters);
}

template <class T>
std::size_t TsqrRegisterPlan<T>::workspace_bytes(std::int64_t m, std::int64_t n) {
  const auto sizes = tsqr_tree_sizes(tree_for<T>(m, n));
  return (static_cast<std::size_t>(m * n) + 2 * sizes.stacks + sizes.tau) * sizeof(T) + sizes.counters * sizeof(unsigned);
}

template <class T>
void TsqrRegisterPlan<T>::factor(const T* a, std::int64_t lda, T* r, std::int64_t ldr, cudaStream_t s) {
  kernels::launch_tsqr_register_factor<T>(a, lda, v_.data(), tree_.m, stacks_.data(), tau_.data(), counters_.data(), r,
                                          ldr, tree_, s);
}

template <class T>
void TsqrRegisterPlan<T>::form_q(T* q, std::int64_t ldq, cudaStream_t s) {
  kernels::launch_tsqr_register_form_q<T>(v_.data(), tree_.m, stacks_.data(), tau_.data(), q_stacks_.data(), q, ldq,
                                          tree_, s);
}

template class TsqrRegisterPlan<float>;
template class TsqrRegisterPlan<double>;

}  // namespace gpufact::factorizations
