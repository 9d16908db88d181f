#include "factorizations/gemm/gemm_bench.hpp"

#include "core/errors.hpp"
#include "core/linalg/gemm_check.hpp"
#include "core/linalg/residual.hpp"
#include "kernels/common/fill.cuh"
#include "microbench/peak/fma_reference.hpp"

#include <cmath>

namespace gpufact::factorizations::gemm_bench {
namespace {

template <class T>
MatrixView<const T> cview(const HostMatrix<T>& m) {
  return m.view();
}

template <class T>
void to_host(HostMatrix<T>& h, const DeviceBuffer<T>& d, cudaStream_t s) {
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(h.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost, s));
}

std::size_t elements(std::int64_t rows, std::int64_t cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

}  // namespace

Op trans_b_from(const std::string& trans) {
  if (trans == "NN") return Op::N;
  if (trans == "NT") return Op::T;
  throw UsageError("axis 'trans': '" + trans + "' is not NN or NT (C := αAB + βC or αABᵀ + βC)");
}

template <class T>
std::size_t operand_bytes(const Shape& s, int extra_matrices) {
  return (elements(s.m, s.k) + elements(s.k, s.n) + (2 + static_cast<std::size_t>(extra_matrices)) * elements(s.m, s.n)) *
         sizeof(T);
}

template <class T>
Operands<T> make_operands(Case& c, const Shape& s, T alpha, T beta) {
  Operands<T> op;
  op.shape = s;
  op.alpha = alpha;
  op.beta = beta;
  const std::int64_t brows = s.tb == Op::N ? s.k : s.n, bcols = s.tb == Op::N ? s.n : s.k;
  op.a = DeviceBuffer<T>(elements(s.m, s.k));
  op.b = DeviceBuffer<T>(elements(brows, bcols));
  op.c0 = DeviceBuffer<T>(elements(s.m, s.n));
  op.c = DeviceBuffer<T>(elements(s.m, s.n));
  op.ha = HostMatrix<T>(s.m, s.k);
  op.hb = HostMatrix<T>(brows, bcols);
  op.hc0 = HostMatrix<T>(s.m, s.n);
  cudaStream_t st = c.stream();
  kernels::launch_fill_uniform(op.a.data(), op.a.size(), c.seed(), T(-1), T(1), st);
  kernels::launch_fill_uniform(op.b.data(), op.b.size(), c.seed() ^ 0x9e3779b97f4a7c15ull, T(-1), T(1), st);
  kernels::launch_fill_uniform(op.c0.data(), op.c0.size(), c.seed() ^ 0xc2b2ae3d27d4eb4full, T(-1), T(1), st);
  to_host(op.ha, op.a, st);
  to_host(op.hb, op.b, st);
  to_host(op.hc0, op.c0, st);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(st));
  return op;
}

template <class T>
void prepare_output(Operands<T>& op, cudaStream_t s) {
  if (op.c.size() == 0) return;
  if (op.beta == T(0))
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(op.c.data(), 0xff, op.c.bytes(), s));  // all-ones bits: NaN
  else
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(op.c.data(), op.c0.data(), op.c.bytes(), cudaMemcpyDeviceToDevice, s));
}

template <class T>
HostMatrix<T> fetch_output(const Operands<T>& op, cudaStream_t s) {
  HostMatrix<T> h(op.shape.m, op.shape.n);
  to_host(h, op.c, s);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  return h;
}

template <class T>
std::optional<HostMatrix<T>> time_and_run(Case& c, Operands<T>& op, const std::string& name, const std::string& label,
                                          const std::function<void()>& launch) {
  cudaStream_t s = c.stream();
  MeasureSpec spec;
  spec.name = name;
  spec.label = label;
  spec.flops = op.shape.flops();
  // With β ≠ 0 each call would accumulate into the last one's C: restore C₀ (untimed).
  if (op.beta != T(0)) spec.setup = [&](std::size_t) { prepare_output(op, s); };
  spec.body = [&](std::size_t) { launch(); };
  if (!c.measure(spec)) return std::nullopt;
  add_rate_metrics(c, name, label);
  prepare_output(op, s);
  launch();
  return fetch_output(op, s);
}

template <class T>
void verify_product(Case& c, const std::string& who, const Shape& s, const HostMatrix<T>& ha, const HostMatrix<T>& hb,
                    const HostMatrix<T>& hc0, const HostMatrix<T>& result, const HostMatrix<T>* second, T alpha,
                    T beta) {
  const bool fp64 = sizeof(T) == 8;
  const double k_bound = static_cast<double>(s.k) + 2.0;
  const std::string prec = fp64 ? "FP64" : "FP32";
  if (s.work() <= kFullReferenceWork) {
    c.verify(who + ": max |C−Ĉ|/(ε(|α||A||B|+|β||C₀|)) vs double reference, every entry, bound " +
                 (fp64 ? "2(k+2) (FP64)" : "k+2 (FP32)"),
             gemm_error<T>('N', s.tb == Op::N ? 'N' : 'T', cview(ha), cview(hb), cview(hc0), cview(result), alpha, beta),
             fp64 ? 2 * k_bound : k_bound);
    return;
  }
  c.verify(who + ": same measure on " + std::to_string(kSampledEntries) +
               " random entries vs long-double dot products, bound k+2 (" + prec + ")",
           sampled_gemm_error<T>(Op::N, s.tb, cview(ha), cview(hb), cview(hc0), cview(result), alpha, beta,
                                 kSampledEntries, c.seed() ^ 0x5bd1e995u),
           k_bound);
  if (second)
    c.verify(who + ": every entry vs cuBLAS, max |C−C_cuBLAS|/(ε(|α|‖Aᵢ‖₂‖Bⱼ‖₂+|β||C₀|)), bound min(2(k+2), 64) (" +
                 prec + ")",
             gemm_difference<T>(Op::N, s.tb, cview(ha), cview(hb), cview(hc0), cview(result), cview(*second), alpha,
                                beta),
             gemm_difference_tolerance(s.k));
}

void add_rate_metrics(Case& c, const std::string& name, const std::string& label) {
  const double gflops = c.result().metric_value(name + "/flop_rate");
  if (gflops <= 0) return;
  c.add_metric(derived_metric(name + "/tflop_rate", label + " rate", "TFLOP/s", gflops * 1e-3, true, true,
                              MetricRole::performance));
  if (!c.session().has_gpu()) return;
  const GpuSummary& gpu = c.session().gpu();
  double clock = c.result().metric_value(name + "/sm_clock");
  if (clock <= 0) clock = gpu.sm_clock_max_mhz;
  const int lanes = microbench::fp32_lanes_per_sm(gpu.cc_major, gpu.cc_minor);
  if (clock <= 0 || lanes <= 0) return;
  c.add_metric(derived_metric(name + "/percent_of_peak", label + " / FP32 FMA peak at the measured clock", "%",
                              100.0 * gflops / microbench::fp32_peak_gflops(gpu.sm_count, lanes, clock)));
}

std::int64_t block_rows_for(std::int64_t blocks) {
  if (blocks < 1) return 1;
  auto limit = static_cast<std::int64_t>(std::floor(std::sqrt(static_cast<double>(blocks) / 4.0)));
  for (std::int64_t d = std::max<std::int64_t>(limit, 1); d > 1; --d)
    if (blocks % d == 0) return d;
  return 1;
}


#define GPUFACT_INSTANTIATE(T)                                                                                     \
  template std::size_t operand_bytes<T>(const Shape&, int);                                                        \
  template Operands<T> make_operands<T>(Case&, const Shape&, T, T);                                                \
  template void prepare_output<T>(Operands<T>&, cudaStream_t);                                                     \
  template HostMatrix<T> fetch_output<T>(const Operands<T>&, cudaStream_t);                                        \
  template std::optional<HostMatrix<T>> time_and_run<T>(Case&, Operands<T>&, const std::string&, const std::string&, \
                                                        const std::function<void()>&);                             \
  template void verify_product<T>(Case&, const std::string&, const Shape&, const HostMatrix<T>&, const HostMatrix<T>&, \
                                  const HostMatrix<T>&, const HostMatrix<T>&, const HostMatrix<T>*, T, T);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact::factorizations::gemm_bench
