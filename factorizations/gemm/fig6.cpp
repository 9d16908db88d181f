// volkov08.fig6 (volkov08 §4.4, Fig. 6): GEMM rates for square matrices and for the thin shapes
// the factorizations multiply (C = AB, β = 0 on a NaN-poisoned C):
//   square  n × n · n × n
//   k64     n × 64 · 64 × n   (a right-looking update with a 64-wide panel)
//   n64     n × n · n × 64    (a 64-column block times the trailing matrix)
//   k16     n × 16 · 16 × n
// for cuBLAS, the SGEMMs of gemm_variants and OpenBLAS on all host cores (host matrices, host
// timer, no transfers), in FP32 and, for cuBLAS (the FP64 baseline the factorizations use) and
// OpenBLAS, FP64. OpenBLAS cases need no GPU: on a CPU-only machine they run and the GPU cases
// are skipped with the reason.
#include "factorizations/gemm/gemm_experiments.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/handles.hpp"
#include "core/errors.hpp"
#include "core/linalg/device_blas.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "factorizations/gemm/gemm_bench.hpp"
#include "factorizations/gemm/gemm_variants.hpp"

#include <unistd.h>

#include <string>
#include <vector>

namespace gpufact::factorizations {
namespace {

gemm_bench::Shape shape_of(const std::string& shape, std::int64_t n) {
  if (shape == "square") return {n, n, n, Op::N};
  if (shape == "k64") return {n, n, 64, Op::N};
  if (shape == "n64") return {n, 64, n, Op::N};
  if (shape == "k16") return {n, n, 16, Op::N};
  throw UsageError("axis 'shape': '" + shape + "' is not square, k64, n64 or k16");
}

template <class T>
void run_openblas(Case& c, const gemm_bench::Shape& shape) {
  const auto online = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  host::set_blas_threads(online);
  c.result().data["blas_threads"] = host::blas_threads();
  const double bytes = (static_cast<double>(shape.m) * static_cast<double>(shape.k) +
                        static_cast<double>(shape.k) * static_cast<double>(shape.n) +
                        3.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n)) *
                       sizeof(T);
  const double available =
      static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  if (bytes > 0.8 * available)
    c.skip("needs about " + std::to_string(static_cast<long long>(bytes / (1 << 20))) + " MiB of host memory, " +
           std::to_string(static_cast<long long>(available / (1 << 20))) + " MiB available");
  HostMatrix<T> a(shape.m, shape.k), b(shape.k, shape.n), c0(shape.m, shape.n), out(shape.m, shape.n);
  fill_uniform(a.view(), c.seed());
  fill_uniform(b.view(), c.seed() + 1);
  fill_uniform(c0.view(), c.seed() + 2);
  const T alpha = T(1), beta = T(0);
  MeasureSpec spec;
  spec.name = "openblas";
  spec.label = std::string("OpenBLAS ") + (sizeof(T) == 4 ? "s" : "d") + "gemm";
  spec.timer = Timer::host_wall;
  spec.flops = shape.flops();
  spec.body = [&](std::size_t) {
    host::gemm(Op::N, Op::N, shape.m, shape.n, shape.k, alpha, a.data(), a.ld(), b.data(), b.ld(), beta, out.data(),
               out.ld());
  };
  if (!c.measure(spec)) return;
  gemm_bench::add_rate_metrics(c, "openblas", spec.label);
  for (std::int64_t j = 0; j < shape.n; ++j)
    for (std::int64_t i = 0; i < shape.m; ++i) out(i, j) = std::numeric_limits<T>::quiet_NaN();
  spec.body(0);
  gemm_bench::verify_product<T>(c, spec.label, shape, a, b, c0, out, nullptr, alpha, beta);
}

template <class T>
void run_device(Case& c, const gemm_bench::Shape& shape, const std::string& kernel) {
  const SgemmVariant* variant = find_sgemm_variant(kernel);
  const bool needs_cublas_reference = variant && shape.work() > gemm_bench::kFullReferenceWork;
  c.require_device_memory(gemm_bench::operand_bytes<T>(shape, needs_cublas_reference ? 1 : 0) + (64u << 20));
  auto op = gemm_bench::make_operands<T>(c, shape, T(1), T(0));
  cudaStream_t s = c.stream();
  CublasHandle blas(s);
  GPUFACT_CUBLAS_CHECK(cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH));
  const auto cublas_launch = [&] {
    dev::gemm<T>(blas, Op::N, shape.tb, shape.m, shape.n, shape.k, op.alpha, op.a.data(), op.lda(), op.b.data(),
                 op.ldb(), op.beta, op.c.data(), op.ldc());
  };
  const std::string prefix = sizeof(T) == 4 ? "s" : "d";
  if (!variant) {
    const auto got = gemm_bench::time_and_run<T>(c, op, "cublas", "cuBLAS " + prefix + "gemm", cublas_launch);
    if (got) gemm_bench::verify_product<T>(c, "cuBLAS", shape, op.ha, op.hb, op.hc0, *got, nullptr, op.alpha, op.beta);
    return;
  }
  if constexpr (sizeof(T) == 4) {
    std::optional<HostMatrix<float>> reference;
    if (needs_cublas_reference) {
      gemm_bench::prepare_output(op, s);
      cublas_launch();
      reference = gemm_bench::fetch_output(op, s);
    }
    const auto got = gemm_bench::time_and_run<float>(c, op, kernel, variant->label, [&] {
      variant->launch(Op::N, shape.tb, shape.m, shape.n, shape.k, op.alpha, op.a.data(), op.lda(), op.b.data(),
                      op.ldb(), op.beta, op.c.data(), op.ldc(), s);
    });
    if (got)
      gemm_bench::verify_product<float>(c, variant->label, shape, op.ha, op.hb, op.hc0, *got,
                                        reference ? &*reference : nullptr, op.alpha, op.beta);
  } else {
    throw UsageError("axis 'precision': kernel '" + kernel + "' is FP32 only");
  }
}

void run_fig6(Case& c) {
  const gemm_bench::Shape shape = shape_of(c.text("shape"), c.integer("size"));
  const std::string& kernel = c.text("kernel");
  const bool fp64 = c.text("precision") == "d";
  if (kernel == "openblas") {
    if (fp64)
      run_openblas<double>(c, shape);
    else
      run_openblas<float>(c, shape);
    return;
  }
  if (!c.session().has_gpu()) c.skip("GPU kernel: " + c.session().system().gpu_unavailable);
  if (fp64)
    run_device<double>(c, shape, kernel);
  else
    run_device<float>(c, shape, kernel);
}

}  // namespace

void register_fig6(Registry& registry) {
  std::vector<std::string> kernels = {"cublas"};
  for (const auto& name : sgemm_variant_names(false)) kernels.push_back(name);
  kernels.push_back("openblas");
  Experiment e;
  e.key = "volkov08.fig6";
  e.artifact = "volkov08.fig6";
  e.title = "GEMM rates for square and thin shapes (n×64·64×n, n×n·n×64, n×16·16×n): the paper's kernel, cuBLAS "
            "(s and d), OpenBLAS on all host cores (volkov08 Fig. 6)";
  e.axes = {
      {.name = "shape", .kind = AxisKind::text,
       .help = "square: n×n·n×n; k64: n×64·64×n; n64: n×n·n×64; k16: n×16·16×n", .defaults = "square,k64,n64,k16",
       .choices = {"square", "k64", "n64", "k16"}},
      {.name = "size", .kind = AxisKind::integer, .help = "n, the large dimension",
       .defaults = "256,512,1024,2048,4096,8192", .quick = "1024,4096", .full = "256:16384:*2", .min = 1,
       .max = 46340},
      {.name = "kernel", .kind = AxisKind::text,
       .help = "cuBLAS, the SGEMMs of this suite (FP32 only), OpenBLAS on the host (all cores)",
       .defaults = join_axis_values(kernels), .choices = kernels},
      {.name = "precision", .kind = AxisKind::text, .help = "s = FP32, d = FP64 (cuBLAS and OpenBLAS only)",
       .defaults = "s,d", .choices = {"s", "d"}},
  };
  e.needs.gpus = 0;  // OpenBLAS runs anywhere; GPU kernels skip without a GPU
  e.applies = [](const AxisPoint& p) {
    const std::string& kernel = p.text("kernel");
    return p.text("precision") == "s" || kernel == "cublas" || kernel == "openblas";
  };
  e.run = run_fig6;
  e.plots = {{.artifact = "volkov08.fig6", .x = "size", .y = "*/tflop_rate", .series = {"kernel", "precision"},
              .logx = true, .logy = false, .title = "GEMM rates, square and thin shapes (volkov08 Fig. 6)"}};
  registry.add(std::move(e));
}

}  // namespace gpufact::factorizations
