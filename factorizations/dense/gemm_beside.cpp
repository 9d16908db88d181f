#include "factorizations/dense/gemm_beside.hpp"

#include "core/bench/case.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "core/linalg/device_blas.hpp"
#include "core/report/result.hpp"
#include "kernels/common/fill.cuh"

namespace gpufact::dense {

std::size_t gemm_beside_device_bytes(std::int64_t n, std::size_t element_bytes) {
  return 3 * static_cast<std::size_t>(n * n) * element_bytes + (std::size_t{64} << 20);
}

template <class T>
void measure_gemm_beside(Case& c, std::int64_t n, const std::string& factorization, const std::string& label) {
  DeviceBuffer<T> ga(static_cast<std::size_t>(n * n)), gb(static_cast<std::size_t>(n * n)),
      gc(static_cast<std::size_t>(n * n));
  kernels::launch_fill_uniform(ga.data(), ga.size(), c.seed() + 1, T(-1), T(1), c.stream());
  kernels::launch_fill_uniform(gb.data(), gb.size(), c.seed() + 2, T(-1), T(1), c.stream());
  kernels::launch_fill_uniform(gc.data(), gc.size(), c.seed() + 3, T(-1), T(1), c.stream());
  CublasHandle blas(c.stream());
  MeasureSpec g;
  g.name = "gemm";
  g.label = std::string(sizeof(T) == 4 ? "cuBLAS sgemm" : "cuBLAS dgemm") + " n × n × n";
  g.flops = 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  g.body = [&](std::size_t) {
    dev::gemm<T>(blas, Op::N, Op::N, n, n, n, T(1), ga.data(), n, gb.data(), n, T(0), gc.data(), n);
  };
  if (!c.measure(g)) return;
  for (auto& m : c.result().metrics)
    if (m.tag.rfind("gemm/", 0) == 0) m.headline = false;
  const Metric* f = c.result().find_metric(factorization + "/flop_rate");
  const Metric* gemm = c.result().find_metric("gemm/flop_rate");
  if (f && gemm && gemm->value > 0)
    c.add_metric(derived_metric(factorization + "/percent_of_gemm", label + " rate / cuBLAS GEMM rate at this n", "%",
                                100 * f->value / gemm->value));
}

template void measure_gemm_beside<float>(Case&, std::int64_t, const std::string&, const std::string&);
template void measure_gemm_beside<double>(Case&, std::int64_t, const std::string&, const std::string&);

}  // namespace gpufact::dense
