#include "factorizations/tsqr_baselines/qr_methods.hpp"

#include "core/cuda/buffer.hpp"
#include "core/cuda/check.hpp"
#include "core/cuda/graph.hpp"
#include "core/cuda/handles.hpp"
#include "core/cuda/stream.hpp"
#include "core/linalg/device_blas.hpp"
#include "core/linalg/host_blas.hpp"
#include "factorizations/caqr/caqr.hpp"
#include "factorizations/caqr/caqr_tuning.hpp"
#include "factorizations/caqr/tsqr_register.hpp"
#include "factorizations/dense/qr_device.hpp"
#include "kernels/qr/caqr_kernels.cuh"
#include "kernels/qr/householder_blas2.cuh"
#include "kernels/qr/panel_cluster.cuh"

#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <tuple>
#include <type_traits>

namespace gpufact::factorizations {

template <class T>
std::string QrPlan<T>::failure(cudaStream_t stream) {
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return {};
}
template class QrPlan<float>;
template class QrPlan<double>;

namespace {

template <class T>
void copy_matrix(const T* a, std::int64_t lda, T* b, std::int64_t ldb, std::int64_t m, std::int64_t n,
                 cudaStream_t s) {
  GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(b, static_cast<std::size_t>(ldb) * sizeof(T), a,
                                       static_cast<std::size_t>(lda) * sizeof(T), static_cast<std::size_t>(m) * sizeof(T),
                                       static_cast<std::size_t>(n), cudaMemcpyDeviceToDevice, s));
}

// cuBLAS trmm, in place on B (cuBLAS is out of place; B == C gives BLAS's in-place form).
template <class T>
void trmm_left_upper(cublasHandle_t h, std::int64_t n, const T* a, std::int64_t lda, T* b, std::int64_t ldb) {
  const T one = 1;
  const int N = static_cast<int>(n), LDA = static_cast<int>(lda), LDB = static_cast<int>(ldb);
  if constexpr (std::is_same_v<T, float>)
    GPUFACT_CUBLAS_CHECK(cublasStrmm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, N,
                                     N, &one, a, LDA, b, LDB, b, LDB));
  else
    GPUFACT_CUBLAS_CHECK(cublasDtrmm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, N,
                                     N, &one, a, LDA, b, LDB, b, LDB));
}

// cuSOLVER geqrf on a copy of A (in Q's storage), R copied out of its upper triangle, then orgqr
// overwrites the Householder vectors with Q. The first run grows the solver workspace.
template <class T>
class CusolverPlan final : public QrPlan<T> {
 public:
  CusolverPlan(std::int64_t m, std::int64_t n) : m_(m), n_(n), tau_(static_cast<std::size_t>(n)) {}
  void run(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r, std::int64_t ldr, cudaStream_t s) override {
    solver_.set_stream(s);
    copy_matrix(a, lda, q, ldq, m_, n_, s);
    dev::geqrf(solver_, m_, n_, q, ldq, tau_.data(), ws_);
    kernels::launch_copy_upper_triangle(q, ldq, n_, r, ldr, s);
    dev::orgqr(solver_, m_, n_, n_, q, ldq, tau_.data(), ws_);
  }
  std::string failure(cudaStream_t s) override {
    const int info = ws_.read_info(s);
    return info == 0 ? std::string() : "cuSOLVER orgqr returned info " + std::to_string(info);
  }

 private:
  std::int64_t m_, n_;
  CusolverHandle solver_;
  dev::SolverWorkspace ws_;
  DeviceBuffer<T> tau_;
};

// A plan's launches replayed per set of pointers (core/cuda/graph.hpp).
template <class T>
using PlanGraph = GraphReplay<std::tuple<const T*, std::int64_t, T*, std::int64_t, T*, std::int64_t>>;

// The hand-written BLAS2 Householder QR (kernels/qr/householder_blas2.cuh) on a copy of A, then
// explicit Q by backward accumulation and R from the upper triangle; its ~7n launches replayed
// as one graph.
template <class T>
class Blas2Plan final : public QrPlan<T> {
 public:
  Blas2Plan(std::int64_t m, std::int64_t n)
      : m_(m), n_(n), work_(static_cast<std::size_t>(m * n)), tau_(static_cast<std::size_t>(n)) {
    const auto c = kernels::householder_blas2_workspace_counts(m, n);
    partials_ = DeviceBuffer<T>(c.partials);
    sumsq_ = DeviceBuffer<T>(c.sumsq_partials);
    w_ = DeviceBuffer<T>(c.w);
    v_ = DeviceBuffer<T>(c.v);
    scale_ = DeviceBuffer<T>(c.scale);
  }
  void run(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r, std::int64_t ldr, cudaStream_t s) override {
    graph_.launch({a, lda, q, ldq, r, ldr}, s, [&](cudaStream_t cs) { enqueue(a, lda, q, ldq, r, ldr, cs); });
  }

 private:
  void enqueue(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r, std::int64_t ldr, cudaStream_t s) {
    const kernels::HouseholderBlas2Workspace<T> ws{partials_.data(), sumsq_.data(), w_.data(), v_.data(),
                                                   scale_.data()};
    copy_matrix(a, lda, work_.data(), m_, m_, n_, s);
    kernels::launch_householder_blas2_geqr2(work_.data(), m_, m_, n_, tau_.data(), ws, s);
    kernels::launch_copy_upper_triangle(work_.data(), m_, n_, r, ldr, s);
    kernels::launch_householder_blas2_org2r(work_.data(), m_, tau_.data(), m_, n_, q, ldq, ws, s);
  }
  std::int64_t m_, n_;
  DeviceBuffer<T> work_, tau_, partials_, sumsq_, w_, v_, scale_;
  PlanGraph<T> graph_;
};

// Blocked Householder QR with each panel held on chip by one thread block cluster (the GPU-resident
// dense QR with panel = cooperative, kernels/qr/panel_cluster.cuh), on Q's storage; R copied out,
// then Q formed in place from the blocks' V and T. Stream-ordered (the experiment checks its input
// for NaN/Inf, as for CAQR), the whole run replayed as one graph.
template <class T>
class HouseholderClusterPlan final : public QrPlan<T> {
 public:
  HouseholderClusterPlan(std::int64_t m, std::int64_t n, std::int64_t nb = 0)
      : m_(m), n_(n), ws_(m, n, options(n, nb), dense::QrVariant::gpu_resident), tau_(static_cast<std::size_t>(n)) {}
  // Up to 1024 columns a panel is one leaf (64 columns): the chain of panels is the run's critical
  // path, and a wider panel adds its halves' T and update to it (8192 × 512 FP32 on an H100: 1.65
  // against 1.70 ms at nb 128); wider, the dense QR's cooperative width.
  static std::int64_t default_nb(std::int64_t n) {
    return n <= 1024 ? kernels::kQrPanelClusterMaxWidth : dense::cooperative_qr_nb(n);
  }
  static dense::QrOptions options(std::int64_t n, std::int64_t nb = 0) {
    dense::QrOptions o;
    o.panel = dense::QrPanel::cooperative;
    o.nb = nb > 0 ? nb : default_nb(n);
    o.stream_ordered = true;
    return o;
  }
  void run(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r, std::int64_t ldr, cudaStream_t s) override {
    graph_.launch({a, lda, q, ldq, r, ldr}, s, [&](cudaStream_t cs) {
      copy_matrix(a, lda, q, ldq, m_, n_, cs);
      dense::qr_gpu_resident<T>(m_, n_, q, ldq, tau_.data(), ws_, cs);
      kernels::launch_copy_upper_triangle(q, ldq, n_, r, ldr, cs);
      dense::qr_form_q_device<T>(q, ldq, ws_, cs);
    });
  }

 private:
  std::int64_t m_, n_;
  dense::QrWorkspace<T> ws_;
  DeviceBuffer<T> tau_;
  PlanGraph<T> graph_;
};

// CholeskyQR2 (beyond the paper): R₁ = chol(AᵀA), Q₁ = A R₁⁻¹, the same once more on Q₁, R = R₂R₁.
// BLAS3 only, so fast; orthogonality degrades like κ²ε and the Cholesky breaks down at κ²ε ≳ 1.
// The Gram matrices are formed by gemm, not syrk: cuBLAS splits gemm's long k across the GPU but
// ran syrk with n = 10, k = 110592 in 17 ms on an H200 (gemm's extra n²/2 entries cost nothing).
template <class T>
class CholQr2Plan final : public QrPlan<T> {
 public:
  CholQr2Plan(std::int64_t m, std::int64_t n)
      : m_(m), n_(n), g1_(static_cast<std::size_t>(n * n)), g2_(static_cast<std::size_t>(n * n)) {}
  void run(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r, std::int64_t ldr, cudaStream_t s) override {
    blas_.set_stream(s);
    solver_.set_stream(s);
    dev::gemm(blas_, Op::T, Op::N, n_, n_, m_, T(1), a, lda, a, lda, T(0), g1_.data(), n_);
    dev::potrf(solver_, Uplo::upper, n_, g1_.data(), n_, ws1_);
    copy_matrix(a, lda, q, ldq, m_, n_, s);
    dev::trsm(blas_, Side::right, Uplo::upper, Op::N, Diag::non_unit, m_, n_, T(1), g1_.data(), n_, q, ldq);
    dev::gemm(blas_, Op::T, Op::N, n_, n_, m_, T(1), q, ldq, q, ldq, T(0), g2_.data(), n_);
    dev::potrf(solver_, Uplo::upper, n_, g2_.data(), n_, ws2_);
    dev::trsm(blas_, Side::right, Uplo::upper, Op::N, Diag::non_unit, m_, n_, T(1), g2_.data(), n_, q, ldq);
    kernels::launch_copy_upper_triangle(g1_.data(), n_, n_, r, ldr, s);
    trmm_left_upper<T>(blas_, n_, g2_.data(), n_, r, ldr);
  }
  std::string failure(cudaStream_t s) override {
    const int first = ws1_.read_info(s), second = ws2_.read_info(s);
    if (first < 0 || second < 0)
      throw std::runtime_error("cholqr2: potrf rejected an argument (info " + std::to_string(std::min(first, second)) +
                               ")");
    if (first > 0)
      return "Cholesky of AᵀA failed (κ too large): potrf info " + std::to_string(first) + " in the first pass";
    if (second > 0)
      return "Cholesky of AᵀA failed (κ too large): potrf info " + std::to_string(second) +
             " in the second pass (on Q₁ᵀQ₁)";
    return {};
  }

 private:
  std::int64_t m_, n_;
  CublasHandle blas_;
  CusolverHandle solver_;
  dev::SolverWorkspace ws1_, ws2_;
  DeviceBuffer<T> g1_, g2_;
};

// CAQR (anderson10 §IV, factorizations/caqr): A copied to a work buffer (A is only read), factored
// in place, R copied out, Q formed by applying the tree representation to the identity; each call's
// launches captured once into a CUDA graph. The block shape comes from the tuning table; `kernels`
// picks the columnwise (paper) or blocked compact-WY factor / apply kernels.
template <class T>
class CaqrQrPlan final : public QrPlan<T> {
 public:
  CaqrQrPlan(std::int64_t m, std::int64_t n, CaqrKernels kernels)
      : m_(m), n_(n), work_(static_cast<std::size_t>(m * n)), plan_(m, n, options(m, n, kernels)) {}
  void run(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r, std::int64_t ldr, cudaStream_t s) override {
    copy_matrix(a, lda, work_.data(), m_, m_, n_, s);
    caqr_factor(plan_, work_.data(), m_, s);
    caqr_copy_r(plan_, work_.data(), m_, r, ldr, s);
    caqr_form_q(plan_, work_.data(), m_, q, ldq, s);
  }
  // The same launches as run, not captured, with an event before each (CaqrOptions::on_phase):
  // each interval is charged to the phase and tree level of the kernel it starts with.
  std::vector<QrPhaseTime> phase_breakdown(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r,
                                           std::int64_t ldr, cudaStream_t s) override {
    std::vector<Event> events;
    std::vector<std::pair<std::string, int>> names;
    events.reserve(8192);
    const auto mark = [&](const char* phase, int level) {
      if (events.size() == events.capacity()) return;
      events.emplace_back();
      events.back().record(s);
      names.emplace_back(phase, level);
    };
    auto& o = plan_.options();
    const bool graph = o.use_graph;
    o.use_graph = false;
    o.on_phase = mark;
    try {
      mark("copy", 0);  // a memcpy, not a kernel
      copy_matrix(a, lda, work_.data(), m_, m_, n_, s);
      caqr_factor(plan_, work_.data(), m_, s);
      mark("copy_r", 0);
      caqr_copy_r(plan_, work_.data(), m_, r, ldr, s);
      caqr_form_q(plan_, work_.data(), m_, q, ldq, s);
    } catch (...) {
      o.on_phase = nullptr;
      o.use_graph = graph;
      throw;
    }
    o.on_phase = nullptr;
    o.use_graph = graph;
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<QrPhaseTime> out;
    for (std::size_t i = 0; i + 1 < events.size(); ++i) {
      if (names[i].first == "end") continue;
      auto it = std::find_if(out.begin(), out.end(), [&](const QrPhaseTime& p) {
        return p.phase == names[i].first && p.level == names[i].second;
      });
      if (it == out.end()) it = out.insert(out.end(), QrPhaseTime{names[i].first, names[i].second, 0.0, 0});
      it->seconds += Event::elapsed_seconds(events[i], events[i + 1]);
      it->launches += names[i].first == "copy" ? 0 : 1;
    }
    return out;
  }
  static CaqrOptions options(std::int64_t m, std::int64_t n, CaqrKernels which) {
    const CaqrTuning t = caqr_tuning(m, n, sizeof(T) == 4 ? 's' : 'd');
    CaqrOptions o{.shape = t.shape,
                  .reduction = qt_reduction_from(t.reduction),
                  .check_finite = false,
                  .use_graph = true,
                  .kernels = which,
                  .on_phase = {}};
    // The tuned shape is the columnwise kernels'; the blocked ones keep a block's WY factors in
    // shared memory, which a wide tree in FP64 outgrows: they then run the paper's 64×16 blocks.
    const int width = static_cast<int>(std::min<std::int64_t>(n, o.shape.cols));
    if (which == CaqrKernels::blocked &&
        !kernels::caqr_wy_shape_problem<T>(o.shape.rows, o.shape.cols, tree_fan_in(o.shape), width).empty())
      o.shape = CaqrBlockShape{64, 16};
    return o;
  }

 private:
  std::int64_t m_, n_;
  DeviceBuffer<T> work_;
  CaqrPlan<T> plan_;
};

// Register TSQR (factorizations/caqr/tsqr_register.hpp) for panels up to 32 wide: A only read,
// R written by the factor launch (leaves and tree), Q by one launch per tree level; replayed as a
// graph whose kernels keep their streams' priorities (the leaves' thin Q's run on a low-priority
// stream beside the tree).
template <class T>
class TsqrRegisterQrPlan final : public QrPlan<T> {
 public:
  TsqrRegisterQrPlan(std::int64_t m, std::int64_t n) : plan_(m, n) {}
  void run(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r, std::int64_t ldr, cudaStream_t s) override {
    graph_.launch({a, lda, q, ldq, r, ldr}, s, [&](cudaStream_t cs) {
      plan_.factor(a, lda, r, ldr, cs);
      plan_.form_q(q, ldq, cs);
    });
  }
  std::vector<QrPhaseTime> phase_breakdown(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r,
                                           std::int64_t ldr, cudaStream_t s) override {
    Event start, factored, done;
    start.record(s);
    plan_.factor(a, lda, r, ldr, s);
    factored.record(s);
    plan_.form_q(q, ldq, s);
    done.record(s);
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    return {{"factor_and_tree", 0, Event::elapsed_seconds(start, factored), 1},
            {"form_q", 0, Event::elapsed_seconds(factored, done), plan_.tree().levels + 1}};
  }

 private:
  TsqrRegisterPlan<T> plan_;
  PlanGraph<T> graph_{cudaGraphInstantiateFlagUseNodePriority};
};

// CAQR from register TSQR panels (factorizations/caqr/tsqr_register.hpp), any width; each call's
// launches (about 60 at 110592 × 100, on the plan's three streams) captured once into a CUDA
// graph whose kernels keep their streams' priorities.
template <class T>
class CaqrRegisterQrPlan final : public QrPlan<T> {
 public:
  CaqrRegisterQrPlan(std::int64_t m, std::int64_t n) : plan_(m, n) {}
  void run(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r, std::int64_t ldr, cudaStream_t s) override {
    graph_.launch({a, lda, q, ldq, r, ldr}, s, [&](cudaStream_t cs) { plan_.run(a, lda, q, ldq, r, ldr, cs); });
  }

 private:
  CaqrRegisterPlan<T> plan_;
  PlanGraph<T> graph_{cudaGraphInstantiateFlagUseNodePriority};
};

// LAPACK geqrf + orgqr (OpenBLAS) on the host, all online cores, host memory, no transfers.
template <class T>
class OpenblasPlan final : public QrPlan<T> {
 public:
  OpenblasPlan(std::int64_t m, std::int64_t n) : m_(m), n_(n), tau_(static_cast<std::size_t>(n)) {
    host::set_blas_threads(static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  }
  void run(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r, std::int64_t ldr, cudaStream_t) override {
    host::lacpy(m_, n_, a, lda, q, ldq);
    info_ = host::geqrf(m_, n_, q, ldq, tau_.data());
    for (std::int64_t j = 0; j < n_; ++j)
      for (std::int64_t i = 0; i < n_; ++i) r[i + j * ldr] = i <= j ? q[i + j * ldq] : T(0);
    if (info_ == 0) info_ = host::orgqr(m_, n_, n_, q, ldq, tau_.data());
  }
  std::string failure(cudaStream_t) override {
    return info_ == 0 ? std::string() : "LAPACK geqrf/orgqr returned info " + std::to_string(info_);
  }

 private:
  std::int64_t m_, n_;
  std::vector<T> tau_;
  int info_ = 0;
};

template <class T>
std::vector<QrMethod<T>> make_table() {
  const auto bytes = [](double count) { return static_cast<std::size_t>(count * sizeof(T)) + (std::size_t{64} << 20); };
  const auto d = [](std::int64_t x) { return static_cast<double>(x); };
  return {
      {"cusolver", "cuSOLVER geqrf + orgqr", {true, QrMemory::device}, true,
       [bytes, d](std::int64_t m, std::int64_t n) { return bytes(d(n) * d(n + 64) + 0.05 * d(m) * d(n)); },
       [](std::int64_t m, std::int64_t n) { return std::make_unique<CusolverPlan<T>>(m, n); }},
      {"blas2_gpu", "BLAS2 Householder QR (GPU)", {true, QrMemory::device}, false,
       [bytes, d](std::int64_t m, std::int64_t n) {
         const auto c = kernels::householder_blas2_workspace_counts(m, n);
         return bytes(d(m) * d(n) + static_cast<double>(c.partials + c.sumsq_partials + c.v) + 2.0 * d(n));
       },
       [](std::int64_t m, std::int64_t n) { return std::make_unique<Blas2Plan<T>>(m, n); }},
      {"caqr", "CAQR (anderson10, GPU)", {true, QrMemory::device}, false,
       [bytes, d](std::int64_t m, std::int64_t n) {
         return bytes(d(m) * d(n)) +
                CaqrPlan<T>::workspace_bytes(m, n, CaqrQrPlan<T>::options(m, n, CaqrKernels::columnwise));
       },
       [](std::int64_t m, std::int64_t n) { return std::make_unique<CaqrQrPlan<T>>(m, n, CaqrKernels::columnwise); }},
      {"caqr_blocked", "CAQR, blocked WY kernels (GPU)", {true, QrMemory::device}, false,
       [bytes, d](std::int64_t m, std::int64_t n) {
         return bytes(d(m) * d(n)) +
                CaqrPlan<T>::workspace_bytes(m, n, CaqrQrPlan<T>::options(m, n, CaqrKernels::blocked));
       },
       [](std::int64_t m, std::int64_t n) { return std::make_unique<CaqrQrPlan<T>>(m, n, CaqrKernels::blocked); }},
      {"tsqr_register", "TSQR, register-resident blocks (GPU, n <= 32)", {true, QrMemory::device}, false,
       [bytes](std::int64_t m, std::int64_t n) {
         return bytes(0) + (n <= kernels::kTsqrMaxWidth ? TsqrRegisterPlan<T>::workspace_bytes(m, n) : 0);
       },
       [](std::int64_t m, std::int64_t n) { return std::make_unique<TsqrRegisterQrPlan<T>>(m, n); },
       kernels::kTsqrMaxWidth},
      {"caqr_register", "CAQR, register TSQR panels (GPU)", {true, QrMemory::device}, false,
       [bytes](std::int64_t m, std::int64_t n) { return bytes(0) + CaqrRegisterPlan<T>::workspace_bytes(m, n); },
       [](std::int64_t m, std::int64_t n) { return std::make_unique<CaqrRegisterQrPlan<T>>(m, n); }},
      {"householder_cluster", "Householder QR, cluster panels (GPU)", {true, QrMemory::device}, false,
       [](std::int64_t m, std::int64_t n) {
         return dense::qr_device_bytes(m, n, HouseholderClusterPlan<T>::options(n), dense::QrVariant::gpu_resident,
                                       sizeof(T));
       },
       [](std::int64_t m, std::int64_t n) { return std::make_unique<HouseholderClusterPlan<T>>(m, n); }, 0,
       [](std::int64_t m, std::int64_t n) {
         const std::int64_t nb = std::min(n, HouseholderClusterPlan<T>::default_nb(n));
         return kernels::qr_panel_cluster_fit_width(m, nb, sizeof(T)) > 0
                    ? std::string()
                    : "an " + std::to_string(m) + "-row panel does not fit one cluster's registers";
       },
       [](std::int64_t m, std::int64_t n, std::int64_t nb) {
         return std::make_unique<HouseholderClusterPlan<T>>(m, n, nb);
       }},
      {"openblas", "OpenBLAS geqrf + orgqr (host)", {false, QrMemory::host}, true,
       [](std::int64_t, std::int64_t) { return std::size_t{0}; },
       [](std::int64_t m, std::int64_t n) { return std::make_unique<OpenblasPlan<T>>(m, n); }},
      {"cholqr2", "CholeskyQR2 (cuBLAS + cuSOLVER)", {true, QrMemory::device}, true,
       [bytes, d](std::int64_t, std::int64_t n) { return bytes(4.0 * d(n) * d(n)); },
       [](std::int64_t m, std::int64_t n) { return std::make_unique<CholQr2Plan<T>>(m, n); }},
  };
}

}  // namespace

template <class T>
const std::vector<QrMethod<T>>& qr_methods() {
  static const std::vector<QrMethod<T>> table = make_table<T>();
  return table;
}

template <class T>
const QrMethod<T>& qr_method(std::string_view name) {
  for (const auto& m : qr_methods<T>())
    if (m.name == name) return m;
  throw std::invalid_argument("unknown QR method '" + std::string(name) + "'");
}

std::vector<std::string> qr_method_names() {
  std::vector<std::string> names;
  for (const auto& m : qr_methods<float>()) names.push_back(m.name);
  return names;
}

double qr_explicit_flops(std::int64_t m, std::int64_t n) {
  const double M = static_cast<double>(m), N = static_cast<double>(n);
  return 2.0 * (2.0 * M * N * N - 2.0 * N * N * N / 3.0);
}

QrRoofline qr_explicit_roofline(std::int64_t m, std::int64_t n, int word, double peak_gflops, double dram_gbs) {
  const double M = static_cast<double>(m), N = static_cast<double>(n);
  QrRoofline r;
  if (peak_gflops > 0) r.flop_seconds = qr_explicit_flops(m, n) / (peak_gflops * 1e9);
  if (dram_gbs > 0) r.dram_seconds = (2.0 * M * N + N * N) * word / (dram_gbs * 1e9);
  return r;
}

template const std::vector<QrMethod<float>>& qr_methods<float>();
template const std::vector<QrMethod<double>>& qr_methods<double>();
template const QrMethod<float>& qr_method<float>(std::string_view);
template const QrMethod<double>& qr_method<double>(std::string_view);

}  // namespace gpufact::factorizations
