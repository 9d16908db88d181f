// host.blas — the CPU baseline of every paper: OpenBLAS gemm, getrf, potrf and geqrf in single
// and double precision on all host cores, each run verified with a scaled residual.
#include "factorizations/host_blas/host_blas.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/errors.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"

#include <unistd.h>

#include <string>
#include <vector>

namespace gpufact::factorizations {
namespace {

// MAGMA testers' pass threshold for scaled factorization residuals.
constexpr double kFactorizationTolerance = 30.0;

double flops_of(const std::string& routine, double n) {
  if (routine == "gemm") return 2 * n * n * n;
  if (routine == "getrf") return 2 * n * n * n / 3;
  if (routine == "potrf") return n * n * n / 3;
  return 4 * n * n * n / 3;  // geqrf, square
}

double available_host_bytes() {
  return static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
}

template <class T>
void run_routine(Case& c) {
  const std::string& routine = c.text("routine");
  const std::int64_t n = c.integer("n");
  const std::int64_t threads = c.integer("threads");
  const int default_threads = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  host::set_blas_threads(threads > 0 ? static_cast<int>(threads) : default_threads);
  c.result().data["blas_threads"] = host::blas_threads();

  const double matrix_bytes = static_cast<double>(n) * static_cast<double>(n) * sizeof(T);
  if (6 * matrix_bytes > available_host_bytes())
    c.skip("needs about " + std::to_string(static_cast<long long>(6 * matrix_bytes / (1 << 20))) +
           " MiB of host memory, " + std::to_string(static_cast<long long>(available_host_bytes() / (1 << 20))) +
           " MiB available");

  HostMatrix<T> a(n, n), w(n, n);
  MeasureSpec spec;
  spec.name = routine;
  spec.label = std::string(sizeof(T) == 4 ? "s" : "d") + routine;
  spec.timer = Timer::host_wall;
  spec.flops = flops_of(routine, static_cast<double>(n));

  if (routine == "gemm") {
    HostMatrix<T> b(n, n), c0(n, n);
    fill_uniform(a.view(), c.seed());
    fill_uniform(b.view(), c.seed() + 1);
    fill_uniform(c0.view(), c.seed() + 2);
    spec.setup = [&](std::size_t) { host::lacpy(n, n, c0.data(), c0.ld(), w.data(), w.ld()); };
    spec.body = [&](std::size_t) {
      host::gemm(Op::N, Op::N, n, n, n, T(1), a.data(), a.ld(), b.data(), b.ld(), T(1), w.data(), w.ld());
    };
    if (!c.measure(spec)) return;
    // The reference is computed in double: exact to the bound for float inputs; for double inputs
    // it carries the same k+2 bound itself, so the difference may reach twice that.
    c.verify("gemm componentwise error / ε (bound k+2)",
             gemm_error<T>('N', 'N', a.view(), b.view(), c0.view(), w.view(), T(1), T(1)),
             (static_cast<double>(n) + 2) * (sizeof(T) == 8 ? 2 : 1));
    return;
  }

  if (routine == "potrf")
    fill_spd(a.view(), c.seed());
  else
    fill_uniform(a.view(), c.seed());
  spec.setup = [&](std::size_t) { host::lacpy(n, n, a.data(), a.ld(), w.data(), w.ld()); };
  int info = 0;
  if (routine == "getrf") {
    std::vector<int> ipiv(static_cast<std::size_t>(n));
    spec.body = [&](std::size_t) { info = host::getrf(n, n, w.data(), w.ld(), ipiv.data()); };
    if (!c.measure(spec)) return;
    c.verify("getrf info", info, 0);
    c.verify("‖PA−LU‖₁/(n‖A‖₁ε)", lu_residual<T>(a.view(), w.view(), ipiv.data()), kFactorizationTolerance);
  } else if (routine == "potrf") {
    spec.body = [&](std::size_t) { info = host::potrf(Uplo::lower, n, w.data(), w.ld()); };
    if (!c.measure(spec)) return;
    c.verify("potrf info", info, 0);
    c.verify("‖A−LLᵀ‖₁/(n‖A‖₁ε)", cholesky_residual<T>(a.view(), w.view()), kFactorizationTolerance);
  } else {
    std::vector<T> tau(static_cast<std::size_t>(n));
    spec.body = [&](std::size_t) { info = host::geqrf(n, n, w.data(), w.ld(), tau.data()); };
    if (!c.measure(spec)) return;
    c.verify("geqrf info", info, 0);
    const auto e = qr_residual<T>(a.view(), w.view(), tau.data());
    c.verify("‖A−QR‖₁/(m‖A‖₁ε)", e.factorization, kFactorizationTolerance);
    c.verify("‖I−QᵀQ‖₁/(mε)", e.orthogonality, kFactorizationTolerance);
  }
}

}  // namespace

void register_host_blas(Registry& registry) {
  Experiment e;
  e.key = "host.blas";
  e.artifact = "host.blas";
  e.title = "OpenBLAS gemm/getrf/potrf/geqrf rates vs n on the host CPU (the papers' CPU baseline)";
  e.axes = {
      {.name = "routine", .kind = AxisKind::text, .help = "BLAS/LAPACK routine",
       .defaults = "gemm,getrf,potrf,geqrf", .choices = {"gemm", "getrf", "potrf", "geqrf"}},
      {.name = "precision", .kind = AxisKind::text, .help = "s = FP32, d = FP64", .defaults = "s,d",
       .choices = {"s", "d"}},
      {.name = "n", .kind = AxisKind::integer, .help = "matrix order", .defaults = "1024,2048,4096",
       .quick = "256,1024", .full = "1024,2048,4096,8192", .min = 1, .max = 46340},
      {.name = "threads", .kind = AxisKind::integer, .help = "OpenBLAS threads (0: all online CPUs)",
       .defaults = "0", .min = 0, .max = 4096},
  };
  e.run = [](Case& c) {
    if (c.text("precision") == "s")
      run_routine<float>(c);
    else
      run_routine<double>(c);
  };
  e.plots = {{.artifact = "host.blas", .x = "n", .y = "*/flop_rate", .series = {"routine", "precision"},
              .logx = true, .logy = false, .title = "OpenBLAS on the host"}};
  registry.add(std::move(e));
}

}  // namespace gpufact::factorizations
