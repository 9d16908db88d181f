#include "factorizations/dense/qr_experiments.hpp"

#include "core/bench/case.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "core/linalg/device_blas.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/linalg/random.hpp"
#include "core/linalg/residual.hpp"
#include "factorizations/dense/backward_error.hpp"
#include "factorizations/dense/dense_experiments.hpp"
#include "factorizations/dense/factorization_measure.hpp"
#include "factorizations/dense/gemm_beside.hpp"
#include "factorizations/dense/gpu_residual.hpp"
#include "factorizations/dense/qr_block_plan.hpp"
#include "factorizations/dense/qr_device.hpp"
#include "kernels/common/fill.cuh"
#include "kernels/qr/block_reflector.cuh"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace gpufact::dense {
namespace {

constexpr double kTolerance = 30.0;              // MAGMA testers' threshold
constexpr std::int64_t kHostResidualMax = 4096;  // above: the cuBLAS residual
constexpr std::int64_t kOpenblasMax = 8192;

double host_bytes_available() {
  return static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
}

// ‖A − QR‖₁/‖A‖₁ and ‖I − QᵀQ‖₁ on the GPU in the working precision (cuBLAS, as the LU's device
// residual), for n where the host's double-precision check costs many seconds.
template <class T>
QrErrors qr_residual_device(const T* a, const T* q, const T* r_factors, std::int64_t n, cudaStream_t s) {
  const std::size_t e = sizeof(T), bytes = static_cast<std::size_t>(n * n) * e;
  DeviceBuffer<T> da(static_cast<std::size_t>(n * n)), dq(static_cast<std::size_t>(n * n)),
      dr(static_cast<std::size_t>(n * n));
  DeviceBuffer<double> sums(static_cast<std::size_t>(n));
  std::vector<T> r(static_cast<std::size_t>(n * n), T(0));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i <= j; ++i) r[i + j * n] = r_factors[i + j * n];
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(da.data(), a, bytes, cudaMemcpyHostToDevice, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dq.data(), q, bytes, cudaMemcpyHostToDevice, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dr.data(), r.data(), bytes, cudaMemcpyHostToDevice, s));
  const double a_norm = device_norm1(da.data(), n, n, n, sums.data(), s);
  CublasHandle blas(s);
  dev::gemm<T>(blas, Op::N, Op::N, n, n, n, T(-1), dq.data(), n, dr.data(), n, T(1), da.data(), n);
  QrErrors out;
  const double res = device_norm1(da.data(), n, n, n, sums.data(), s);
  out.factorization = a_norm > 0 ? res / a_norm : (res == 0 ? 0.0 : std::numeric_limits<double>::infinity());
  kernels::launch_set_identity_columns(dr.data(), n, n, 0, n, s);  // QᵀQ − I into the R buffer
  dev::gemm<T>(blas, Op::T, Op::N, n, n, n, T(1), dq.data(), n, dq.data(), n, T(-1), dr.data(), n);
  out.orthogonality = device_norm1(dr.data(), n, n, n, sums.data(), s);
  return out;
}

struct QrRun {
  bool measured = false;
};

template <class T>
QrOptions options_for(Case& c, const std::string& method, std::int64_t n) {
  QrOptions o;
  if (c.point().has("gemm")) o.gemm = update_gemm_from(c.text("gemm"));
  if (method == "gpu_resident" && c.point().has("panel")) o.panel = qr_panel_from(c.text("panel"));
  if (method == "gpu_resident" && c.point().has("panel_sms")) o.panel_sms = static_cast<int>(c.integer("panel_sms"));
  const std::int64_t nb = c.point().has("nb") ? c.integer("nb") : 0;
  if (nb > 0)
    o.nb = nb;
  else if (o.panel == QrPanel::cooperative)
    o.nb = cooperative_qr_nb(n);
  else if (method == "hybrid" || method == "gpu_resident")
    o.widths = auto_qr_widths(method, c.text("precision"), n, n);
  return o;
}

void add_inner_rate(Case& c, const PhaseTotals& t) {
  if (t[Phase::gpu_compute] > 0)
    c.add_metric(derived_metric("blas3/flop_rate", "BLAS3 rate inside the factorization (update GEMM events)",
                                "GFLOP/s", t.blas3_flops / t[Phase::gpu_compute] * 1e-9, true, true));
  c.result().data["breakdown_s"] = {{"gpu_compute", t[Phase::gpu_compute]}, {"cpu_panel", t[Phase::cpu_panel]},
                                    {"gpu_panel", t[Phase::gpu_panel]},     {"transfer", t[Phase::transfer]},
                                    {"overlap", t.overlap},                 {"wall", t.wall_s}};
}

// Times one method on a fresh matrix; leaves R (and the vectors) in `work` and the explicit Q in `q`.
template <class T>
QrRun measure_qr(Case& c, const std::string& method, const std::string& data, const QrOptions& o,
                 const HostMatrix<T>& a, PinnedBuffer<T>& work, PinnedBuffer<T>& tau, PinnedBuffer<T>& q) {
  const std::int64_t n = a.rows();
  const std::size_t bytes = static_cast<std::size_t>(n * n) * sizeof(T);
  cudaStream_t s = c.stream();
  MeasureSpec spec = factorization_measure_spec("qr", method, data, qr_flops(n, n), a, work);
  QrRun out;
  auto restore = [&] {
    std::memcpy(work.data(), a.data(), bytes);
    std::fill(tau.data(), tau.data() + n, std::numeric_limits<T>::quiet_NaN());
    std::fill(q.data(), q.data() + n * n, std::numeric_limits<T>::quiet_NaN());
  };

  if (method == "openblas") {
    spec.timer = Timer::host_wall;
    spec.body = [&](std::size_t) { (void)host::geqrf<T>(n, n, work.data(), n, tau.data()); };
    out.measured = c.measure(spec);
    restore();
    const int info = host::geqrf<T>(n, n, work.data(), n, tau.data());
    c.verify("geqrf info", info, 0);
    std::memcpy(q.data(), work.data(), bytes);
    c.verify("orgqr info", host::orgqr<T>(n, n, n, q.data(), n, tau.data()), 0);
    return out;
  }
  if (method == "hybrid") {
    QrWorkspace<T> ws(n, n, o, QrVariant::hybrid);
    spec.body = [&](std::size_t) { qr_hybrid<T>(n, n, work.data(), n, tau.data(), ws, s); };
    out.measured = c.measure(spec);
    restore();
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.matrix.data(), 0xff, ws.matrix.bytes(), s));  // poison: NaN
    PhaseTimer timer;
    qr_hybrid<T>(n, n, work.data(), n, tau.data(), ws, s, &timer);
    add_inner_rate(c, timer.finish());
    qr_hybrid_form_q<T>(q.data(), n, ws, s);
    c.result().data["options"] = describe(ws.options);
    return out;
  }
  DeviceBuffer<T> pristine(static_cast<std::size_t>(n * n)), dwork(static_cast<std::size_t>(n * n)),
      factored(static_cast<std::size_t>(n * n)), dtau(static_cast<std::size_t>(n));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(pristine.data(), a.data(), bytes, cudaMemcpyHostToDevice, s));
  auto download_q = [&] {
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(q.data(), dwork.data(), bytes, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  };
  // Explicit Q timed apart (device data only, where the factors can be restored untimed).
  auto measure_q = [&](const std::string& label, std::function<void()> body) {
    if (data != "device") return;
    MeasureSpec qs;
    qs.name = "qr_q";
    qs.label = label;
    qs.flops = qr_flops(n, n);  // orgqr's count equals geqrf's for a square matrix
    qs.sync = true;
    qs.setup = [&](std::size_t) {
      GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dwork.data(), factored.data(), bytes, cudaMemcpyDeviceToDevice, s));
    };
    qs.body = [&](std::size_t) { body(); };
    if (c.measure(qs))
      for (auto& m : c.result().metrics)
        if (m.tag.rfind("qr_q/", 0) == 0) m.headline = false;
  };
  if (method == "gpu_resident") {
    QrWorkspace<T> ws(n, n, o, QrVariant::gpu_resident);
    if (data == "device") {
      spec.setup = [&](std::size_t) {
        GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dwork.data(), pristine.data(), bytes, cudaMemcpyDeviceToDevice, s));
      };
      spec.body = [&](std::size_t) { qr_gpu_resident<T>(n, n, dwork.data(), n, dtau.data(), ws, s); };
    } else {
      spec.body = [&](std::size_t) { qr_gpu_resident_host<T>(n, n, work.data(), n, tau.data(), ws, s); };
    }
    out.measured = c.measure(spec);
    restore();
    PhaseTimer timer;
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(dwork.data(), 0xff, bytes, s));
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(dtau.data(), 0xff, n * sizeof(T), s));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dwork.data(), pristine.data(), bytes, cudaMemcpyDeviceToDevice, s));
    qr_gpu_resident<T>(n, n, dwork.data(), n, dtau.data(), ws, s, &timer);
    add_inner_rate(c, timer.finish());
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(work.data(), dwork.data(), bytes, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(tau.data(), dtau.data(), n * sizeof(T), cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(factored.data(), dwork.data(), bytes, cudaMemcpyDeviceToDevice, s));
    qr_form_q_device<T>(dwork.data(), n, ws, s);
    download_q();
    c.result().data["options"] = describe(ws.options);
    measure_q("gpu_resident explicit Q (device data)", [&] { qr_form_q_device<T>(dwork.data(), n, ws, s); });
    return out;
  }
  // cuSOLVER geqrf (64-bit API) + orgqr, on device data or with both transfers from pinned memory.
  CusolverHandle solver(s);
  dev::SolverWorkspace sws;
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dwork.data(), pristine.data(), bytes, cudaMemcpyDeviceToDevice, s));
  dev::geqrf<T>(solver, n, n, dwork.data(), n, dtau.data(), sws);  // sizes the workspace outside the timing
  dev::orgqr<T>(solver, n, n, n, dwork.data(), n, dtau.data(), sws);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  time_library_factorization<T>(
      spec, data, a, work, dwork, pristine, s, [&] { dev::geqrf<T>(solver, n, n, dwork.data(), n, dtau.data(), sws); },
      [&] { GPUFACT_CUDA_CHECK(cudaMemcpyAsync(tau.data(), dtau.data(), n * sizeof(T), cudaMemcpyDeviceToHost, s)); });
  out.measured = c.measure(spec);
  restore();
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(dwork.data(), 0xff, bytes, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(dwork.data(), work.data(), bytes, cudaMemcpyHostToDevice, s));
  dev::geqrf<T>(solver, n, n, dwork.data(), n, dtau.data(), sws);
  c.verify("cusolverDnXgeqrf info", sws.read_info(s), 0);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(work.data(), dwork.data(), bytes, cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(tau.data(), dtau.data(), n * sizeof(T), cudaMemcpyDeviceToHost, s));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(factored.data(), dwork.data(), bytes, cudaMemcpyDeviceToDevice, s));
  dev::orgqr<T>(solver, n, n, n, dwork.data(), n, dtau.data(), sws);
  c.verify("cusolver orgqr info", sws.read_info(s), 0);
  download_q();
  measure_q("cuSOLVER orgqr (device data)", [&] {
    dev::orgqr<T>(solver, n, n, n, dwork.data(), n, dtau.data(), sws);
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  });
  return out;
}

std::size_t device_bytes_for(const std::string& method, std::int64_t n, const QrOptions& o, std::size_t e) {
  const std::size_t matrix = static_cast<std::size_t>(n * n) * e;
  if (method == "openblas") return 0;
  if (method == "hybrid") return qr_device_bytes(n, n, o, QrVariant::hybrid, e);
  if (method == "gpu_resident") return qr_device_bytes(n, n, o, QrVariant::gpu_resident, e) + 3 * matrix;
  return 3 * matrix + (std::size_t{512} << 20);  // cuSOLVER: pristine + work + factored + its workspace
}

template <class T>
void run_qr_case(Case& c) {
  const std::int64_t n = c.integer("n");
  const std::string& method = c.text("method");
  const std::string data = case_data(c);
  const bool accuracy = wants_backward_error(c);
  const std::size_t e = sizeof(T), matrix = static_cast<std::size_t>(n * n) * e;
  const QrOptions o = options_for<T>(c, method, n);
  std::size_t need = device_bytes_for(method, n, o, e);
  if (n > kHostResidualMax) need = std::max(need, 3 * matrix + n * 8 + (std::size_t{64} << 20));
  if (method != "openblas" && !accuracy) need = std::max(need, gemm_beside_device_bytes(n, e));
  if (accuracy) need = std::max(need, backward_error_device_bytes(n, n));
  if (need > 0) c.require_device_memory(need);
  if (5.5 * static_cast<double>(matrix) > host_bytes_available())
    c.skip("needs about " + std::to_string(static_cast<long long>(5.5 * static_cast<double>(matrix)) >> 20) +
           " MiB of host memory");
  host::set_blas_threads(static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));

  HostMatrix<T> a(n, n);
  fill_uniform(a.view(), c.seed());
  PinnedBuffer<T> work(static_cast<std::size_t>(n * n)), tau(static_cast<std::size_t>(n)),
      q(static_cast<std::size_t>(n * n));
  (void)measure_qr<T>(c, method, data, o, a, work, tau, q);
  for (std::int64_t j = 0; j < n; ++j)  // R alone: zeros below the diagonal
    std::fill(work.data() + j * n + j + 1, work.data() + (j + 1) * n, T(0));
  const MatrixView<const T> av = a.view(), qv{q.data(), n, n, n, Layout::col_major},
                            rv{work.data(), n, n, n, Layout::col_major};
  const QrErrors err = n <= kHostResidualMax ? qr_explicit_residual<T>(av, qv, rv)
                                             : qr_residual_device<T>(a.data(), q.data(), work.data(), n, c.stream());
  const double scale = static_cast<double>(n) * unit_roundoff<T>();
  const std::string where = n <= kHostResidualMax ? " host (double)" : " cuBLAS (device, working precision)";
  c.verify("‖A−QR‖₁/(‖A‖₁nε)" + where, err.factorization / scale, kTolerance);
  c.verify("‖I−QᵀQ‖₁/(nε)" + where, err.orthogonality / scale, kTolerance);
  if (const Metric* rate = c.result().find_metric("qr/flop_rate"))
    c.add_metric(derived_metric("qr/tflops", "QR rate", "TFLOP/s", rate->value * 1e-3));
  if (accuracy) add_backward_error(c, "qr", qr_backward_error<T>(av, rv, qv, c.stream()));

  if (method == "openblas" || accuracy) return;
  measure_gemm_beside<T>(c, n, "qr", "QR");
}

}  // namespace

bool qr_fig7_applies(const std::string& method, const std::string& data, std::int64_t n, std::int64_t leaf,
                     const std::string& u12) {
  if (leaf != 0 || u12 != "inverse") return false;  // LU-only axes
  if (method == "openblas") return data == "host" && n <= kOpenblasMax;
  if (method == "hybrid") return data == "host";
  return true;
}

void run_qr_fig7(Case& c) {
  if (c.text("precision") == "s")
    run_qr_case<float>(c);
  else
    run_qr_case<double>(c);
}

}  // namespace gpufact::dense
