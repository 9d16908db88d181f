#include "factorizations/caqr/caqr.hpp"

#include "core/cuda/check.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gpufact::factorizations {
namespace {

kernels::CaqrTreeLevelArgs level_args(const CaqrTreeLevel& l, int fan_in) {
  return {l.children, l.child_stride, l.last_child_rows, fan_in};
}

std::string shape_problem(const CaqrOptions& o, std::int64_t n, std::size_t elem) {
  const int fan_in = tree_fan_in(o.shape);
  const int w = static_cast<int>(std::min<std::int64_t>(n, o.shape.cols));
  if (o.kernels == CaqrKernels::blocked) {
    auto why = elem == sizeof(float) ? kernels::caqr_wy_shape_problem<float>(o.shape.rows, o.shape.cols, fan_in, w)
                                     : kernels::caqr_wy_shape_problem<double>(o.shape.rows, o.shape.cols, fan_in, w);
    if (!why.empty()) return why;
  }
  return elem == sizeof(float) ? kernels::caqr_shape_problem<float>(o.shape.rows, o.shape.cols, o.reduction, fan_in, w)
                               : kernels::caqr_shape_problem<double>(o.shape.rows, o.shape.cols, o.reduction, fan_in, w);
}

}  // namespace

CaqrKernels caqr_kernels_from(const std::string& name) {
  if (name == "columnwise") return CaqrKernels::columnwise;
  if (name == "blocked") return CaqrKernels::blocked;
  throw std::invalid_argument("unknown CAQR kernel variant '" + name + "' (columnwise, blocked)");
}

const char* to_string(CaqrKernels k) { return k == CaqrKernels::blocked ? "blocked" : "columnwise"; }

QtReduction qt_reduction_from(const std::string& name) {
  for (auto r : {QtReduction::smem_parallel, QtReduction::register_serial, QtReduction::smem_combined,
                 QtReduction::register_serial_transposed})
    if (name == kernels::to_string(r)) return r;
  throw std::invalid_argument("unknown apply_qt_h reduction '" + name +
                              "' (smem_parallel, register_serial, smem_combined, register_serial_transposed)");
}

std::vector<std::string> qt_reduction_names() {
  return {"smem_parallel", "register_serial", "smem_combined", "register_serial_transposed"};
}

template <class T>
std::size_t CaqrPlan<T>::workspace_bytes(std::int64_t m, std::int64_t n, const CaqrOptions& options) {
  const auto s = make_caqr_schedule(m, n, options.shape);
  std::size_t bytes = static_cast<std::size_t>(s.tau_count) * sizeof(T) + 64;
  if (options.reduction == QtReduction::register_serial_transposed && n > options.shape.cols)
    bytes += static_cast<std::size_t>(m) * static_cast<std::size_t>(n + options.shape.cols) * sizeof(T);
  return bytes;
}

template <class T>
CaqrPlan<T>::CaqrPlan(std::int64_t m, std::int64_t n, CaqrOptions options)
    : schedule_(make_caqr_schedule(m, n, options.shape)), options_(std::move(options)) {
  if (const auto why = shape_problem(options_, n, sizeof(T)); !why.empty()) throw std::invalid_argument("CAQR: " + why);
  kernels::caqr_prepare_kernels<T>(options_.shape.rows, options_.shape.cols);
  if (options_.kernels == CaqrKernels::blocked) kernels::caqr_prepare_wy_kernels<T>();
  tau_ = DeviceBuffer<T>(static_cast<std::size_t>(schedule_.tau_count));
  GPUFACT_CUDA_CHECK(cudaMemset(tau_.data(), 0, tau_.bytes()));
  if (options_.reduction == QtReduction::register_serial_transposed && n > options_.shape.cols)
    tiles_ = DeviceBuffer<T>(static_cast<std::size_t>(m) * static_cast<std::size_t>(n + options_.shape.cols));
  nonfinite_ = DeviceBuffer<unsigned long long>(1);
  nonfinite_host_ = PinnedBuffer<unsigned long long>(1);
}

template <class T>
void CaqrPlan<T>::phase(const char* name, bool capturing, int level) const {
  if (!capturing && options_.on_phase) options_.on_phase(name, level);
}

template <class T>
void CaqrPlan<T>::enqueue_apply_h(const CaqrPanel& p, const T* panel, std::int64_t lda, T* c, std::int64_t ldc,
                                  std::int64_t cols, bool transpose, QtReduction r, cudaStream_t s) const {
  const auto& sh = schedule_.shape;
  const T* tau = tau_.data() + p.tau_offset;
  const int w = static_cast<int>(p.width);
  if (options_.kernels == CaqrKernels::blocked) {  // column-major C; no reduction strategy
    phase("apply_qt_h", capturing_);
    kernels::launch_caqr_apply_qt_h_wy<T>(panel, lda, p.rows, w, sh.rows, tau, sh.cols, c, ldc, cols, transpose, s);
    return;
  }
  if (r == QtReduction::register_serial_transposed) {
    // anderson10 §IV.E approach 4: the trailing rows in row-major tiles for the update.
    phase("transpose", capturing_);
    kernels::launch_caqr_panel_transpose<T>(c, ldc, p.rows, cols, sh.cols, tiles_.data(), p.rows, s);
    phase("apply_qt_h", capturing_);
    kernels::launch_caqr_apply_qt_h<T>(panel, lda, p.rows, w, sh.rows, sh.cols, tau, sh.cols, tiles_.data(),
                                       p.rows, cols, transpose, r, s);
    phase("transpose", capturing_);
    kernels::launch_caqr_panel_untranspose<T>(tiles_.data(), p.rows, p.rows, cols, sh.cols, c, ldc, s);
    return;
  }
  phase("apply_qt_h", capturing_);
  kernels::launch_caqr_apply_qt_h<T>(panel, lda, p.rows, w, sh.rows, sh.cols, tau, sh.cols, c, ldc, cols, transpose, r, s);
}

template <class T>
void CaqrPlan<T>::enqueue_factor(T* a, std::int64_t lda, cudaStream_t s) {
  const auto& sh = schedule_.shape;
  for (const auto& p : schedule_.panels) {
    T* panel = a + p.col0 + p.col0 * lda;
    const int w = static_cast<int>(p.width);
    const bool blocked = options_.kernels == CaqrKernels::blocked;
    phase("factor", capturing_);
    if (blocked)
      kernels::launch_caqr_factor_wy<T>(panel, lda, p.rows, w, sh.rows, tau_.data() + p.tau_offset, sh.cols, s);
    else
      kernels::launch_caqr_factor<T>(panel, lda, p.rows, w, sh.rows, tau_.data() + p.tau_offset, sh.cols, s);
    int level = 0;
    for (const auto& l : p.levels) {
      phase("factor_tree", capturing_, ++level);
      if (blocked)
        kernels::launch_caqr_factor_tree_wy<T>(panel, lda, w, level_args(l, schedule_.fan_in),
                                               tau_.data() + l.tau_offset, sh.cols, s);
      else
        kernels::launch_caqr_factor_tree<T>(panel, lda, w, level_args(l, schedule_.fan_in),
                                            tau_.data() + l.tau_offset, sh.cols, s);
    }
    const std::int64_t cols = schedule_.n - p.col0 - p.width;
    if (cols <= 0) continue;
    T* c = panel + p.width * lda;
    enqueue_apply_h(p, panel, lda, c, lda, cols, true, options_.reduction, s);
    level = 0;
    for (const auto& l : p.levels) {
      phase("apply_qt_tree", capturing_, ++level);
      kernels::launch_caqr_apply_qt_tree<T>(panel, lda, w, level_args(l, schedule_.fan_in), tau_.data() + l.tau_offset,
                                            sh.cols, c, lda, cols, true, s);
    }
  }
  phase("end", capturing_);
}

template <class T>
void CaqrPlan<T>::enqueue_form_q(const T* a, std::int64_t lda, T* q, std::int64_t ldq, cudaStream_t s) const {
  const auto& sh = schedule_.shape;
  phase("identity", capturing_);
  kernels::launch_set_identity<T>(q, ldq, schedule_.m, schedule_.n, s);
  // Q's columns left of a panel are still unit vectors above the panel's rows, so each panel
  // only updates its own and later columns (orgqr's saving). The transposed-tile strategy's
  // preprocessing is a factorization-time layout; forming Q uses the plain register kernel.
  const QtReduction r = options_.reduction == QtReduction::register_serial_transposed ? QtReduction::register_serial
                                                                                       : options_.reduction;
  for (auto p = schedule_.panels.rbegin(); p != schedule_.panels.rend(); ++p) {
    const T* panel = a + p->col0 + p->col0 * lda;
    T* c = q + p->col0 + p->col0 * ldq;
    const std::int64_t cols = schedule_.n - p->col0;
    const int w = static_cast<int>(p->width);
    int level = static_cast<int>(p->levels.size());
    for (auto l = p->levels.rbegin(); l != p->levels.rend(); ++l) {
      phase("apply_qt_tree", capturing_, level--);
      kernels::launch_caqr_apply_qt_tree<T>(panel, lda, w, level_args(*l, schedule_.fan_in), tau_.data() + l->tau_offset,
                                            sh.cols, c, ldq, cols, false, s);
    }
    enqueue_apply_h(*p, panel, lda, c, ldq, cols, false, r, s);
  }
  phase("end", capturing_);
}

template <class T>
void caqr_check_finite(const CaqrPlan<T>& plan, const T* a, std::int64_t lda, cudaStream_t stream) {
  auto& count = plan.nonfinite_;
  auto& host = plan.nonfinite_host_;
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(count.data(), 0, sizeof(unsigned long long), stream));
  kernels::launch_count_nonfinite<T>(a, lda, plan.m(), plan.n(), count.data(), stream);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(host.data(), count.data(), sizeof(unsigned long long), cudaMemcpyDeviceToHost, stream));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (host[0] != 0)
    throw std::invalid_argument("CAQR: A (" + std::to_string(plan.m()) + "×" + std::to_string(plan.n()) + ") has " +
                                std::to_string(host[0]) + " NaN/Inf entries; QR of non-finite input is undefined");
}

namespace {
void require_ld(std::int64_t ld, std::int64_t rows, const char* what) {
  if (ld < rows) throw std::invalid_argument(std::string(what) + " = " + std::to_string(ld) + " < " + std::to_string(rows));
}
}  // namespace

template <class T>
void caqr_factor(CaqrPlan<T>& plan, T* a, std::int64_t lda, cudaStream_t stream) {
  require_ld(lda, plan.m(), "caqr_factor: lda");
  if (plan.options_.check_finite) caqr_check_finite(plan, a, lda, stream);
  if (!plan.options_.use_graph) {
    plan.enqueue_factor(a, lda, stream);
    return;
  }
  auto& g = plan.factor_graph_;
  if (g.a != a || g.lda != lda || !g.graph.exec()) {
    plan.capturing_ = true;
    try {
      g.graph = CapturedGraph::capture(plan.capture_stream_, [&](cudaStream_t s) { plan.enqueue_factor(a, lda, s); });
    } catch (...) {
      plan.capturing_ = false;
      throw;
    }
    plan.capturing_ = false;
    g.a = a;
    g.lda = lda;
  }
  g.graph.launch(stream);
}

template <class T>
void caqr_form_q(const CaqrPlan<T>& plan, const T* a, std::int64_t lda, T* q, std::int64_t ldq, cudaStream_t stream) {
  require_ld(lda, plan.m(), "caqr_form_q: lda");
  require_ld(ldq, plan.m(), "caqr_form_q: ldq");
  if (!plan.options_.use_graph) {
    plan.enqueue_form_q(a, lda, q, ldq, stream);
    return;
  }
  auto& g = plan.form_q_graph_;
  if (g.a != a || g.q != q || g.lda != lda || g.ldq != ldq || !g.graph.exec()) {
    plan.capturing_ = true;
    try {
      g.graph = CapturedGraph::capture(static_cast<cudaStream_t>(plan.capture_stream_),
                                       [&](cudaStream_t s) { plan.enqueue_form_q(a, lda, q, ldq, s); });
    } catch (...) {
      plan.capturing_ = false;
      throw;
    }
    plan.capturing_ = false;
    g.a = a;
    g.q = q;
    g.lda = lda;
    g.ldq = ldq;
  }
  g.graph.launch(stream);
}

template <class T>
void caqr_copy_r(const CaqrPlan<T>& plan, const T* a, std::int64_t lda, T* r, std::int64_t ldr, cudaStream_t stream) {
  require_ld(lda, plan.m(), "caqr_copy_r: lda");
  require_ld(ldr, plan.n(), "caqr_copy_r: ldr");
  kernels::launch_copy_upper_triangle<T>(a, lda, plan.n(), r, ldr, stream);
}

template <class T>
std::vector<T> caqr_download_tau(const CaqrPlan<T>& plan, cudaStream_t stream) {
  std::vector<T> tau(static_cast<std::size_t>(plan.schedule().tau_count));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(tau.data(), plan.tau(), tau.size() * sizeof(T), cudaMemcpyDeviceToHost, stream));
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return tau;
}

#define GPUFACT_INSTANTIATE_CAQR(T)                                                                          \
  template class CaqrPlan<T>;                                                                               \
  template void caqr_factor<T>(CaqrPlan<T>&, T*, std::int64_t, cudaStream_t);                               \
  template void caqr_form_q<T>(const CaqrPlan<T>&, const T*, std::int64_t, T*, std::int64_t, cudaStream_t); \
  template void caqr_copy_r<T>(const CaqrPlan<T>&, const T*, std::int64_t, T*, std::int64_t, cudaStream_t); \
  template void caqr_check_finite<T>(const CaqrPlan<T>&, const T*, std::int64_t, cudaStream_t);             \
  template std::vector<T> caqr_download_tau<T>(const CaqrPlan<T>&, cudaStream_t);
GPUFACT_INSTANTIATE_CAQR(float)
GPUFACT_INSTANTIATE_CAQR(double)
#undef GPUFACT_INSTANTIATE_CAQR

}  // namespace gpufact::factorizations
