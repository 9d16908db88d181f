#include "factorizations/dense/qr_device.hpp"

#include "core/linalg/host_blas.hpp"
#include "kernels/dense/finite_check.cuh"
#include "kernels/qr/block_reflector.cuh"
#include "kernels/qr/panel_cluster.cuh"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace gpufact::dense {
namespace {

void check_shape(const char* routine, std::int64_t m, std::int64_t n, std::int64_t lda) {
  if (n < 0 || m < n)
    throw std::invalid_argument(std::string(routine) + ": needs m >= n >= 0, got m = " + std::to_string(m) +
                                ", n = " + std::to_string(n));
  if (lda < std::max<std::int64_t>(1, m))
    throw std::invalid_argument(std::string(routine) + ": leading dimension " + std::to_string(lda) + " < max(1, m)");
}

template <class T>
void check_workspace(const char* routine, std::int64_t m, std::int64_t n, const QrWorkspace<T>& ws, QrVariant v) {
  if (m != ws.m || n != ws.n) throw std::invalid_argument(std::string(routine) + ": workspace made for another shape");
  if (v != ws.variant) throw std::invalid_argument(std::string(routine) + ": workspace made for the other variant");
}

std::int64_t widest_of(const std::vector<std::int64_t>& w) {
  std::int64_t b = 1;
  for (const auto x : w) b = std::max(b, x);
  return b;
}

// The OpenBLAS thread count for the hybrid's CPU panels, restored on scope exit.
class BlasThreadsScope {
 public:
  explicit BlasThreadsScope(int threads) : saved_(host::blas_threads()), changed_(threads > 0) {
    if (changed_) host::set_blas_threads(threads);
  }
  ~BlasThreadsScope() {
    if (changed_) host::set_blas_threads(saved_);
  }
  BlasThreadsScope(const BlasThreadsScope&) = delete;
  BlasThreadsScope& operator=(const BlasThreadsScope&) = delete;

 private:
  int saved_;
  bool changed_;
};

template <class T>
struct QrDriver {
  std::int64_t m, n, ld;
  T* d;  // device matrix, column-major
  QrWorkspace<T>& ws;
  PhaseTimer* timer;
  UpdateGemmFn<T> gemm;
  cudaStream_t sp, su;

  T* at(std::int64_t i, std::int64_t j) const { return d + i + j * ld; }
  T* t_of(const QrStep& s) const { return ws.t_factors.data() + s.j0 * ws.widest; }
  // V of step i (and, while its T is formed, the next panel's columns beside it): 2·widest wide.
  T* slot(std::size_t i) const {
    return ws.reflectors.data() + static_cast<std::int64_t>(i % 3) * m * 2 * ws.widest;
  }

  // C (rows [s.j0, m) × cols [c0, c1)) ← (I − V T Vᵀ)ᵀ C (transpose) or (I − V T Vᵀ) C with the
  // zero-filled V in `v` (ld m − s.j0): three GEMMs on stream `st` with its own handle and work,
  // timed as update GEMMs unless `inside_panel` (a panel's halves, timed with the panel). `vtc`:
  // VᵀC already formed (w × cols, ld w; reflector_block's), so two GEMMs.
  void apply(const QrStep& s, const T* v, std::int64_t c0, std::int64_t c1, bool transpose, cudaStream_t st,
             bool inside_panel = false, const T* vtc = nullptr) {
    const std::int64_t rows = m - s.j0, cols = c1 - c0, w = s.j1 - s.j0;
    if (rows <= 0 || cols <= 0 || w <= 0) return;
    cublasHandle_t blas = st == sp ? ws.panel_blas.get() : ws.update_blas.get();
    T* w1 = (st == sp ? ws.panel_work : ws.update_work).data();
    T* w2 = w1 + ws.widest * n;
    const double r = static_cast<double>(rows), c = static_cast<double>(cols), b = static_cast<double>(w);
    GpuPhase phase(inside_panel ? nullptr : timer, Phase::gpu_compute, st, 4 * r * c * b + 2 * b * b * c);
    if (vtc == nullptr) gemm(blas, Op::T, Op::N, w, cols, rows, T(1), v, rows, at(s.j0, c0), ld, T(0), w1, w, st);
    gemm(blas, transpose ? Op::T : Op::N, Op::N, w, cols, w, T(1), t_of(s), ws.widest, vtc ? vtc : w1, w, T(0), w2,
         w, st);
    gemm(blas, Op::N, Op::N, rows, cols, w, T(-1), v, rows, w2, w, T(1), at(s.j0, c0), ld, st);
  }

  void start_nonfinite_check() {
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.first_nonfinite.data(), 0xff, sizeof(unsigned long long), sp));
    kernels::launch_find_nonfinite(d, 1, ld, m, n, ws.first_nonfinite.data(), sp);
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(ws.host_first_nonfinite.data(), ws.first_nonfinite.data(),
                                       sizeof(unsigned long long), cudaMemcpyDeviceToHost, sp));
  }
  bool nonfinite_found() const { return *ws.host_first_nonfinite.data() != ~0ull; }
  void throw_if_nonfinite(const char* routine) const {
    const unsigned long long bad = *ws.host_first_nonfinite.data();
    if (bad != ~0ull)
      throw std::invalid_argument(std::string(routine) + ": A(" +
                                  std::to_string(bad % static_cast<unsigned long long>(m)) + ", " +
                                  std::to_string(bad / static_cast<unsigned long long>(m)) +
                                  ") is NaN or Inf; the input must be finite");
  }

  void copy_block(T* dst, std::int64_t ldd, const T* src, std::int64_t lds, std::int64_t rows, std::int64_t cols,
                  cudaMemcpyKind kind, cudaStream_t st) {
    if (rows <= 0 || cols <= 0) return;
    GpuPhase phase(timer, Phase::transfer, st);
    const std::size_t e = sizeof(T);
    GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(dst, ldd * e, src, lds * e, rows * e, cols, kind, st));
  }

  // volkov08 §5: CPU panels, GPU updates, look-ahead. `a`/`tau` on the host.
  void run_hybrid(T* a, std::int64_t lda, T* tau) {
    const auto& steps = ws.steps;
    copy_block(d, ld, a, lda, m, n, cudaMemcpyHostToDevice, sp);
    start_nonfinite_check();
    auto download_panel = [&](const QrStep& s) {
      copy_block(a + s.j0 + s.j0 * lda, lda, at(s.j0, s.j0), ld, m - s.j0, s.j1 - s.j0, cudaMemcpyDeviceToHost, sp);
      ws.streams.panel_ready.record(sp);
    };
    if (!steps.empty()) download_panel(steps[0]);
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const QrStep& s = steps[i];
      const std::int64_t rows = m - s.j0, w = s.j1 - s.j0;
      // The panel is in host memory, and the previous T upload (before it on the panel stream) done.
      ws.streams.panel_ready.synchronize();
      if (i == 0 && nonfinite_found()) break;  // reported after the streams drain
      T* panel = a + s.j0 + s.j0 * lda;
      {
        const HostPhase phase(timer, Phase::cpu_panel);
        const int info = host::geqrf<T>(rows, w, panel, lda, tau + s.j0);
        if (info != 0) throw std::runtime_error("qr_hybrid: geqrf on a panel returned info " + std::to_string(info));
        std::fill(ws.host_t.data(), ws.host_t.data() + w * w, T(0));
        host::larft<T>(rows, w, panel, lda, tau + s.j0, ws.host_t.data(), w);
      }
      // (a) the factored panel and T go to the GPU; the zero-filled V is made there.
      copy_block(at(s.j0, s.j0), ld, panel, lda, rows, w, cudaMemcpyHostToDevice, sp);
      copy_block(t_of(s), ws.widest, ws.host_t.data(), w, w, w, cudaMemcpyHostToDevice, sp);
      kernels::launch_zero_filled_reflectors(at(s.j0, s.j0), ld, rows, w, slot(i), rows, sp);
      // (b) the previous step's update of the next panel's columns must be done before they change
      // again: its first GEMMs, which covered them (the rest of that update may still run).
      ws.streams.panel_after_update(i > 0 && ws.options.lookahead);
      enqueue_updates(i);
    }
    ws.streams.panel_after_update();
    copy_block(a, lda, d, ld, m, n, cudaMemcpyDeviceToHost, sp);
  }

  // The updates of step i once its V (slot i) and T are enqueued on the panel stream, and the
  // panel stream waits for the previous update's first part: the next panel's columns on the panel
  // stream (then, hybrid, down to the CPU), the rest on the update stream. `lookahead_vtc`: VᵀC of
  // the next panel's columns, formed already (reflector_block).
  void enqueue_updates(std::size_t i, const T* lookahead_vtc = nullptr) {
    const auto& steps = ws.steps;
    const QrStep& s = steps[i];
    const bool has_next = i + 1 < steps.size();
    const bool ahead = ws.options.lookahead && has_next;
    const std::int64_t rest_begin = ahead ? steps[i + 1].j1 : s.j1;
    const std::int64_t split = ahead && i + 2 < steps.size() ? steps[i + 2].j1 : rest_begin;
    // (c) the rest needs only V and T: it may start beside the look-ahead (disjoint columns).
    ws.streams.update_after_lookahead();
    if (ahead) {
      apply(s, slot(i), s.j1, rest_begin, true, sp, false, lookahead_vtc);
      if (ws.variant == QrVariant::hybrid) download_next(steps[i + 1]);
    }
    // The panel after next first, so the next look-ahead need not wait for the whole update
    // (V of three panels kept: the panel stream may factor panel i + 2 while this one runs).
    apply(s, slot(i), rest_begin, split, true, su);
    ws.streams.next_panel_updated.record(su);
    apply(s, slot(i), split, n, true, su);
    if (!ahead && has_next) {
      ws.streams.panel_after_update();
      if (ws.variant == QrVariant::hybrid) download_next(steps[i + 1]);
    }
  }

  T* host_a = nullptr;
  std::int64_t host_lda = 0;
  void download_next(const QrStep& s) {
    copy_block(host_a + s.j0 + s.j0 * host_lda, host_lda, at(s.j0, s.j0), ld, m - s.j0, s.j1 - s.j0,
               cudaMemcpyDeviceToHost, sp);
    ws.streams.panel_ready.record(sp);
  }

  // The zero-filled V of the factored columns [s.j0, s.j1) into `v` (ld m − s.j0) and their T at
  // t_of(s): Gram matrix VᵀV, then larft's recurrence. With `next` > 0 the next columns C, which
  // must be up to date, are copied beside V, and the one GEMM Vᵀ[V C] also gives VᵀC, the first
  // product of applying the block to C; returned (w × next, ld w), else null.
  const T* reflector_block(const QrStep& s, const T* d_tau, T* v, std::int64_t next = 0) {
    const std::int64_t rows = m - s.j0, w = s.j1 - s.j0;
    kernels::launch_zero_filled_reflectors(at(s.j0, s.j0), ld, rows, w, v, rows, sp, next);
    dev::gemm<T>(ws.panel_blas, Op::T, Op::N, w, w + next, rows, T(1), v, rows, v, rows, T(0), ws.gram.data(), w);
    kernels::launch_larft_from_gram(ws.gram.data(), w, d_tau + s.j0, w, t_of(s), ws.widest, sp);
    return next > 0 ? ws.gram.data() + w * w : nullptr;
  }

  // geqrf of columns [j0, j1) (rows j0..m) on the panel stream by the cluster kernel: a leaf if
  // its registers hold the columns, else the first half (in whole leaves), its block reflector
  // applied to the second, then the second half. `v` is scratch for the halves' V (the panel's
  // slot, rewritten once the panel is done); their T go where the panel's T will.
  void factor_panel_cluster(std::int64_t j0, std::int64_t j1, T* d_tau, T* v) {
    const std::int64_t rows = m - j0, w = j1 - j0;
    const std::int64_t leaf = kernels::qr_panel_cluster_fit_width(rows, w, sizeof(T));
    if (leaf == 0) {  // too tall for a cluster's registers
      dev::geqrf<T>(ws.solver, rows, w, at(j0, j0), ld, d_tau + j0, ws.solver_ws);
      return;
    }
    if (leaf == w) {
      kernels::launch_qr_panel_cluster(at(j0, j0), ld, rows, w, d_tau + j0, sp);
      return;
    }
    const std::int64_t leaves = (w + leaf - 1) / leaf, half = leaf * ((leaves + 1) / 2);
    const QrStep first{j0, j0 + half};
    factor_panel_cluster(first.j0, first.j1, d_tau, v);
    const T* vtc = reflector_block(first, d_tau, v, j1 - first.j1);
    apply(first, v, first.j1, j1, true, sp, true, vtc);
    factor_panel_cluster(first.j1, j1, d_tau, v);
  }

  // The panel on the GPU (cuSOLVER geqrf or the cluster kernel), then its zero-filled V and T.
  void run_resident(T* d_tau) {
    const auto& steps = ws.steps;
    if (!ws.options.stream_ordered) start_nonfinite_check();
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const QrStep& s = steps[i];
      const T* lookahead_vtc = nullptr;
      {
        GpuPhase phase(timer, Phase::gpu_panel, sp);
        if (ws.options.panel == QrPanel::cooperative)
          factor_panel_cluster(s.j0, s.j1, d_tau, slot(i));
        else
          dev::geqrf<T>(ws.solver, m - s.j0, s.j1 - s.j0, at(s.j0, s.j0), ld, d_tau + s.j0, ws.solver_ws);
        // The next panel's columns as the previous update leaves them (its first GEMMs), so that
        // the GEMM forming T also gives the look-ahead's VᵀC.
        // (b) as in the hybrid loop, before the GEMM that reads them.
        ws.streams.panel_after_update(i > 0 && ws.options.lookahead);
        const bool ahead = ws.options.lookahead && i + 1 < steps.size();
        lookahead_vtc = reflector_block(s, d_tau, slot(i), ahead ? steps[i + 1].j1 - s.j1 : 0);
      }
      enqueue_updates(i, lookahead_vtc);
    }
    ws.streams.panel_after_update();
  }

  // Q = H_0 … H_{k−1} [I; 0], the last block first, in place (qr_host_form_q's order). The last
  // three blocks' V are still in their slots; older ones are rebuilt into a slot already used here.
  void form_q() {
    const auto& steps = ws.steps;
    for (std::size_t i = steps.size(); i-- > 0;) {
      const QrStep& s = steps[i];
      const std::int64_t rows = m - s.j0, w = s.j1 - s.j0;
      if (i + 3 < steps.size()) kernels::launch_zero_filled_reflectors(at(s.j0, s.j0), ld, rows, w, slot(i), rows, sp);
      kernels::launch_set_identity_columns(d, ld, m, s.j0, s.j1, sp);
      apply(s, slot(i), s.j0, n, false, sp);
    }
  }
};

template <class T>
QrDriver<T> driver_for(T* d, std::int64_t ld, QrWorkspace<T>& ws, PhaseTimer* timer) {
  return QrDriver<T>{ws.m, ws.n, ld, d, ws, timer, update_gemm_fn<T>(ws.options.gemm), ws.streams.panel,
                     ws.streams.update};
}

}  // namespace

std::string qr_panel_name(QrPanel p) { return p == QrPanel::cooperative ? "cooperative" : "cusolver"; }

QrPanel qr_panel_from(const std::string& name) {
  for (const QrPanel p : {QrPanel::cusolver, QrPanel::cooperative})
    if (qr_panel_name(p) == name) return p;
  throw std::invalid_argument("qr panel = " + name + " is not cusolver or cooperative");
}

std::int64_t cooperative_qr_nb(std::int64_t n) { return n >= 24576 ? 256 : 128; }

std::string describe(const QrOptions& o) {
  std::string s;
  if (o.widths.empty()) {
    s = "nb=" + std::to_string(o.nb);
  } else {
    std::int64_t lo = o.widths.front(), hi = o.widths.front();
    for (const auto w : o.widths) lo = std::min(lo, w), hi = std::max(hi, w);
    s = "plan(" + std::to_string(o.widths.size()) + " stages, " + std::to_string(lo) + ".." + std::to_string(hi) + ")";
  }
  s += o.lookahead ? " lookahead" : " no-lookahead";
  s += std::string(" ") + update_gemm_entry(o.gemm).name;
  if (o.panel == QrPanel::cooperative) s += " panel=cooperative";
  if (o.panel_sms > 0) s += " panel_sms=" + std::to_string(o.panel_sms);
  if (o.stream_ordered) s += " stream_ordered";
  return s;
}

std::vector<std::int64_t> qr_widths(const QrOptions& o, std::int64_t n) {
  std::vector<std::int64_t> w = o.widths.empty() ? uniform_qr_widths(n, o.nb) : o.widths;
  (void)qr_steps(n, w);
  for (const auto b : w)
    if (b > kernels::kMaxLarftWidth)
      throw std::invalid_argument("qr: panel width " + std::to_string(b) + " exceeds " +
                                  std::to_string(kernels::kMaxLarftWidth));
  return w;
}

double qr_flops(std::int64_t m, std::int64_t n) {
  const double dm = static_cast<double>(m), dn = static_cast<double>(n);
  return 2 * dm * dn * dn - 2 * dn * dn * dn / 3;
}

std::size_t qr_device_bytes(std::int64_t m, std::int64_t n, const QrOptions& o, QrVariant variant,
                            std::size_t element_bytes) {
  const std::int64_t b = widest_of(qr_widths(o, n));
  const std::int64_t elements = m * n + 6 * m * b + b * n + 2 * b * b + n + 4 * b * n;
  std::size_t bytes = static_cast<std::size_t>(elements) * element_bytes + (std::size_t{128} << 20);  // cuBLAS x2
  if (variant == QrVariant::gpu_resident)
    bytes += static_cast<std::size_t>(m * b) * element_bytes + (std::size_t{64} << 20);  // cuSOLVER geqrf
  return bytes;
}

template <class T>
QrWorkspace<T>::QrWorkspace(std::int64_t m_, std::int64_t n_, const QrOptions& o, QrVariant v)
    : m(m_), n(n_), widest(1), options(o), variant(v), streams(v == QrVariant::gpu_resident ? o.panel_sms : 0) {
  check_shape("QrWorkspace", m, n, std::max<std::int64_t>(1, m));
  (void)update_gemm_fn<T>(o.gemm);  // throws for a precision the GEMM lacks
  options.widths = qr_widths(o, n);
  steps = qr_steps(n, options.widths);
  widest = widest_of(options.widths);
  auto count = [](std::int64_t e) { return static_cast<std::size_t>(std::max<std::int64_t>(e, 1)); };
  matrix = DeviceBuffer<T>(count(m * n));
  reflectors = DeviceBuffer<T>(count(3 * m * 2 * widest));
  t_factors = DeviceBuffer<T>(count(widest * n));
  gram = DeviceBuffer<T>(count(2 * widest * widest));
  tau = DeviceBuffer<T>(count(n));
  panel_work = DeviceBuffer<T>(count(2 * widest * n));
  update_work = DeviceBuffer<T>(count(2 * widest * n));
  first_nonfinite = DeviceBuffer<unsigned long long>(1);
  host_first_nonfinite = PinnedBuffer<unsigned long long>(1);
  host_t = PinnedBuffer<T>(count(widest * widest));
  panel_blas.set_stream(streams.panel);
  update_blas.set_stream(streams.update);
  solver.set_stream(streams.panel);
  if (variant == QrVariant::gpu_resident && m > 0 && n > 0) {
    // Size cuSOLVER's workspace now (the first, tallest panel needs the most), on zeros.
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(matrix.data(), 0, matrix.bytes(), streams.panel));
    dev::geqrf<T>(solver, m, options.widths.front(), matrix.data(), m, tau.data(), solver_ws);
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(streams.panel));
  }
}

template <class T>
void qr_hybrid(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* tau, QrWorkspace<T>& ws, cudaStream_t stream,
               PhaseTimer* timer) {
  check_shape("qr_hybrid", m, n, lda);
  check_workspace("qr_hybrid", m, n, ws, QrVariant::hybrid);
  if (n == 0) return;
  if (timer) timer->start(stream);
  const BlasThreadsScope threads(ws.options.cpu_threads);
  QrDriver<T> drv = driver_for(ws.matrix.data(), m, ws, timer);
  drv.host_a = a;
  drv.host_lda = lda;
  ws.streams.join_from(stream);
  drv.run_hybrid(a, lda, tau);
  ws.streams.join_into(stream);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (timer) timer->stop();
  drv.throw_if_nonfinite("qr_hybrid");
}

template <class T>
void qr_hybrid_form_q(T* q, std::int64_t ldq, QrWorkspace<T>& ws, cudaStream_t stream) {
  check_shape("qr_hybrid_form_q", ws.m, ws.n, ldq);
  if (ws.variant != QrVariant::hybrid) throw std::invalid_argument("qr_hybrid_form_q: workspace of the GPU-resident QR");
  if (ws.n == 0) return;
  QrDriver<T> drv = driver_for(ws.matrix.data(), ws.m, ws, nullptr);
  ws.streams.join_from(stream);
  drv.form_q();
  drv.copy_block(q, ldq, ws.matrix.data(), ws.m, ws.m, ws.n, cudaMemcpyDeviceToHost, ws.streams.panel);
  ws.streams.join_into(stream);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class T>
void qr_gpu_resident(std::int64_t m, std::int64_t n, T* d_a, std::int64_t ldda, T* d_tau, QrWorkspace<T>& ws,
                     cudaStream_t stream, PhaseTimer* timer) {
  check_shape("qr_gpu_resident", m, n, ldda);
  check_workspace("qr_gpu_resident", m, n, ws, QrVariant::gpu_resident);
  if (n == 0) return;
  if (timer) timer->start(stream);
  QrDriver<T> drv = driver_for(d_a, ldda, ws, timer);
  ws.streams.join_from(stream);
  drv.run_resident(d_tau);
  ws.streams.join_into(stream);
  if (ws.options.stream_ordered) return;
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (timer) timer->stop();
  drv.throw_if_nonfinite("qr_gpu_resident");
}

template <class T>
void qr_gpu_resident_host(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* tau, QrWorkspace<T>& ws,
                          cudaStream_t stream, PhaseTimer* timer) {
  check_shape("qr_gpu_resident_host", m, n, lda);
  check_workspace("qr_gpu_resident_host", m, n, ws, QrVariant::gpu_resident);
  if (n == 0) return;
  const std::size_t e = sizeof(T);
  GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(ws.matrix.data(), m * e, a, lda * e, m * e, n, cudaMemcpyHostToDevice, stream));
  qr_gpu_resident(m, n, ws.matrix.data(), m, ws.tau.data(), ws, stream, timer);
  GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(a, lda * e, ws.matrix.data(), m * e, m * e, n, cudaMemcpyDeviceToHost, stream));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(tau, ws.tau.data(), n * e, cudaMemcpyDeviceToHost, stream));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

template <class T>
void qr_form_q_device(T* d_a, std::int64_t ldda, QrWorkspace<T>& ws, cudaStream_t stream) {
  check_shape("qr_form_q_device", ws.m, ws.n, ldda);
  if (ws.n == 0) return;
  QrDriver<T> drv = driver_for(d_a, ldda, ws, nullptr);
  ws.streams.join_from(stream);
  drv.form_q();
  ws.streams.join_into(stream);
  if (!ws.options.stream_ordered) GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));
}

#define GPUFACT_INSTANTIATE(T)                                                                                       \
  template class QrWorkspace<T>;                                                                                     \
  template void qr_hybrid<T>(std::int64_t, std::int64_t, T*, std::int64_t, T*, QrWorkspace<T>&, cudaStream_t,        \
                             PhaseTimer*);                                                                           \
  template void qr_hybrid_form_q<T>(T*, std::int64_t, QrWorkspace<T>&, cudaStream_t);                                \
  template void qr_gpu_resident<T>(std::int64_t, std::int64_t, T*, std::int64_t, T*, QrWorkspace<T>&, cudaStream_t,  \
                                   PhaseTimer*);                                                                     \
  template void qr_gpu_resident_host<T>(std::int64_t, std::int64_t, T*, std::int64_t, T*, QrWorkspace<T>&,           \
                                        cudaStream_t, PhaseTimer*);                                                  \
  template void qr_form_q_device<T>(T*, std::int64_t, QrWorkspace<T>&, cudaStream_t);
GPUFACT_INSTANTIATE(float)
GPUFACT_INSTANTIATE(double)
#undef GPUFACT_INSTANTIATE

}  // namespace gpufact::dense
