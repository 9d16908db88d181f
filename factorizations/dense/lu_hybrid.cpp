#include "factorizations/dense/lu_hybrid.hpp"

#include "core/linalg/device_blas.hpp"
#include "core/linalg/host_blas.hpp"
#include "factorizations/dense/lu_host.hpp"
#include "factorizations/dense/lu_schedule.hpp"
#include "factorizations/dense/staging.hpp"
#include "kernels/dense/finite_check.cuh"
#include "kernels/dense/row_swaps.cuh"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

namespace gpufact::dense {
namespace {

constexpr std::int64_t kChunkElements = std::int64_t{1} << 24;  // matrix up/download in column chunks

std::int64_t coarse_width_of(const LuOptions& o) { return o.two_level ? (o.coarse_factor / 2) * o.nb : 0; }

struct Sizes {
  std::int64_t ld, matrix, stage, u12, inverse, coarse;
};

Sizes sizes_of(std::int64_t m, std::int64_t n, const LuOptions& o) {
  validate(o);
  Sizes s{};
  s.ld = device_ld(m, n, o.row_major);
  s.matrix = o.row_major ? m * s.ld : s.ld * n;
  s.stage = o.row_major ? std::max({m * std::min(o.nb, n), std::min(m * n, kChunkElements), m}) : 0;
  const std::int64_t k_max = std::max(o.nb, coarse_width_of(o));
  s.u12 = o.inverse_trsm ? k_max * n : 0;
  s.inverse = o.inverse_trsm ? o.nb * o.nb : 0;
  s.coarse = o.inverse_trsm ? coarse_width_of(o) * coarse_width_of(o) : 0;
  return s;
}

template <class T>
struct Driver {
  std::int64_t m, n, lda;
  T* a;
  int* ipiv;
  LuHybridWorkspace<T>& ws;
  PhaseTimer* timer;
  DeviceMatrix<T> d;
  UpdateGemmFn<T> gemm;
  cudaStream_t sp, su;  // panel and update streams

  // U12 = inv(L11) · A12 for L11 = rows/cols [k0, k1), A12 = rows [k0, k1) × cols [c0, c1).
  void solve_u12(std::int64_t k0, std::int64_t k1, std::int64_t c0, std::int64_t c1, const T* inverse,
                 cublasHandle_t blas, cudaStream_t s) {
    const std::int64_t w = k1 - k0, cols = c1 - c0;
    if (w <= 0 || cols <= 0) return;
    GpuPhase phase(timer, Phase::gpu_compute, s, static_cast<double>(w) * static_cast<double>(w) * static_cast<double>(cols));
    const std::size_t e = sizeof(T);
    if (!ws.options.inverse_trsm) {
      if (d.row_major)  // the block read column-major is U12ᵀ: X · L11ᵀ = A12ᵀ, L11ᵀ upper
        dev::trsm<T>(blas, Side::right, Uplo::upper, Op::N, Diag::unit, cols, w, T(1), d.at(k0, k0), d.ld,
                     d.at(k0, c0), d.ld);
      else
        dev::trsm<T>(blas, Side::left, Uplo::lower, Op::N, Diag::unit, w, cols, T(1), d.at(k0, k0), d.ld,
                     d.at(k0, c0), d.ld);
      return;
    }
    T* copy = ws.u12_copy.data();
    if (d.row_major) {  // U12ᵀ = A12ᵀ · inv(L11)ᵀ, with A12 copied row-major (ld cols)
      GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(copy, cols * e, d.at(k0, c0), d.ld * e, cols * e, w,
                                           cudaMemcpyDeviceToDevice, s));
      gemm(blas, Op::N, Op::T, cols, w, w, T(1), copy, cols, inverse, w, T(0), d.at(k0, c0), d.ld, s);
    } else {
      GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(copy, w * e, d.at(k0, c0), d.ld * e, w * e, cols,
                                           cudaMemcpyDeviceToDevice, s));
      gemm(blas, Op::N, Op::N, w, cols, w, T(1), inverse, w, copy, w, T(0), d.at(k0, c0), d.ld, s);
    }
  }

  // A22 −= L21 · U12 on rows [k1, m) × cols [c0, c1), inner dimension [k0, k1); `s` is the panel
  // or the update stream, each with its own cuBLAS handle.
  void update(std::int64_t k0, std::int64_t k1, std::int64_t c0, std::int64_t c1, cudaStream_t s) {
    const std::int64_t rows = m - k1, cols = c1 - c0, k = k1 - k0;
    if (rows <= 0 || cols <= 0 || k <= 0) return;
    cublasHandle_t blas = s == sp ? ws.panel_blas.get() : ws.update_blas.get();
    GpuPhase phase(timer, Phase::gpu_compute, s,
                   2.0 * static_cast<double>(rows) * static_cast<double>(cols) * static_cast<double>(k));
    if (d.row_major)
      gemm(blas, Op::N, Op::N, cols, rows, k, T(-1), d.at(k0, c0), d.ld, d.at(k1, k0), d.ld, T(1), d.at(k1, c0), d.ld, s);
    else
      gemm(blas, Op::N, Op::N, rows, cols, k, T(-1), d.at(k1, k0), d.ld, d.at(k0, c0), d.ld, T(1), d.at(k1, c0), d.ld, s);
  }

  void download_panel(const LuStep& s) {
    download_block(d, a, lda, s.j0, m, s.j0, s.j1, ws.stage.data(), sp, timer);
    ws.streams.panel_ready.record(sp);
  }

  // CPU: getrf on the panel in its final place in `a`, all OpenBLAS threads; returns its info.
  int factor_panel(const LuStep& s) {
    const HostPhase phase(timer, Phase::cpu_panel);
    const int info = host::getrf(m - s.j0, s.j1 - s.j0, a + s.j0 + s.j0 * lda, lda, ipiv + s.j0);
    if (info < 0) throw std::runtime_error("getrf on a panel returned info " + std::to_string(info));
    for (std::int64_t i = s.j0; i < s.j1; ++i) ipiv[i] += static_cast<int>(s.j0);
    if (ws.options.inverse_trsm)
      unit_lower_inverse(s.j1 - s.j0, a + s.j0 + s.j0 * lda, lda, ws.host_fine_inverse.data());
    return info;
  }

  // CPU: inv(L_K) of the window's panels [k0, j1). Their host columns still lack the interchanges
  // of the later panels of the window (the GPU applied those to its copy); apply them here first,
  // as getrf's output needs them anyway.
  void coarse_inverse(const std::vector<LuStep>& steps, std::size_t last) {
    const HostPhase phase(timer, Phase::cpu_panel);
    const LuStep& s = steps[last];
    for (std::size_t q = 0; q <= last; ++q)
      if (steps[q].j0 > s.coarse_k0 && steps[q].j0 < s.j1)
        host::laswp(steps[q].j0 - s.coarse_k0, a + s.coarse_k0 * lda, lda, steps[q].j0 + 1, steps[q].j1, ipiv);
    unit_lower_inverse(s.j1 - s.coarse_k0, a + s.coarse_k0 + s.coarse_k0 * lda, lda, ws.host_coarse_inverse.data());
  }

  int run() {
    const auto steps = lu_schedule(m, n, ws.options);
    const bool lookahead = ws.options.lookahead;
    const std::size_t e = sizeof(T);
    int info = 0;
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.first_nonfinite.data(), 0xff, sizeof(unsigned long long), sp));
    upload_matrix(a, lda, d, ws.stage.data(), ws.stage_elements, sp, timer);
    if (d.row_major)
      kernels::launch_find_nonfinite(d.data, d.ld, 1, m, n, ws.first_nonfinite.data(), sp);
    else
      kernels::launch_find_nonfinite(d.data, 1, d.ld, m, n, ws.first_nonfinite.data(), sp);
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(ws.host_first_nonfinite.data(), ws.first_nonfinite.data(),
                                       sizeof(unsigned long long), cudaMemcpyDeviceToHost, sp));
    if (!steps.empty()) download_panel(steps[0]);
    std::vector<int> targets;
    int coarse_slot = 0;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const LuStep& s = steps[i];
      const std::int64_t w = s.j1 - s.j0;
      ws.streams.panel_ready.synchronize();
      if (i == 0 && *ws.host_first_nonfinite.data() != ~0ull) break;  // reported after the streams drain
      const int panel_info = factor_panel(s);
      if (panel_info > 0 && info == 0) info = static_cast<int>(s.j0) + panel_info;
      const bool coarse = s.has_coarse() && s.fine_end < n;
      if (coarse && ws.options.inverse_trsm) coarse_inverse(steps, i);
      T* coarse_inv = ws.coarse_inverse.data() + coarse_slot * ws.coarse_width * ws.coarse_width;

      // (a) the factored panel and its inverses go back to the GPU.
      upload_block(a, lda, d, s.j0, m, s.j0, s.j1, ws.stage.data(), sp, timer);
      if (ws.options.inverse_trsm) {
        GpuPhase phase(timer, Phase::transfer, sp);
        GPUFACT_CUDA_CHECK(cudaMemcpyAsync(ws.fine_inverse.data(), ws.host_fine_inverse.data(), w * w * e,
                                           cudaMemcpyHostToDevice, sp));
        if (coarse) {
          const std::int64_t kw = s.j1 - s.coarse_k0;
          GPUFACT_CUDA_CHECK(cudaMemcpyAsync(coarse_inv, ws.host_coarse_inverse.data(), kw * kw * e,
                                             cudaMemcpyHostToDevice, sp));
        }
      }
      // (b) nothing may swap rows while the previous step's update still reads or writes them.
      ws.streams.panel_after_update();
      // (c) all of the panel's interchanges, every column but the panel's, one launch.
      targets.assign(ipiv + s.j0, ipiv + s.j1);
      for (int& t : targets) t -= 1;
      {
        GpuPhase phase(timer, Phase::pivoting, sp);
        kernels::launch_apply_row_swaps(d.data, d.ld, d.row_major, n, s.j0, s.j1, s.j0, targets.data(),
                                        static_cast<int>(w), sp);
      }
      // (d) U12 of every column the fine level updates.
      solve_u12(s.j0, s.j1, s.j1, s.fine_end, ws.fine_inverse.data(), ws.panel_blas, sp);
      // (e) look-ahead: the next panel's columns first, then the panel goes to the CPU.
      std::int64_t rest_begin = s.j1;
      const bool has_next = i + 1 < steps.size();
      const bool ahead = lookahead && has_next;
      if (ahead) rest_begin = steps[i + 1].j1;
      // The rest needs only U12 and L21: it starts now, beside the next panel's columns (disjoint),
      // which go first on the high-priority panel stream, then down to the CPU.
      ws.streams.update_after_lookahead();
      if (ahead) {
        update(s.j0, s.j1, s.j1, rest_begin, sp);
        download_panel(steps[i + 1]);
      }
      // (f) the rest of the trailing matrix on the update stream, fine then coarse.
      update(s.j0, s.j1, rest_begin, s.fine_end, su);
      if (coarse) {
        solve_u12(s.coarse_k0, s.j1, s.fine_end, n, coarse_inv, ws.update_blas, su);
        update(s.coarse_k0, s.j1, s.fine_end, n, su);
        coarse_slot ^= 1;
      }
      if (!lookahead && has_next) {
        ws.streams.panel_after_update();
        download_panel(steps[i + 1]);
      }
    }
    ws.streams.panel_after_update();
    download_matrix(d, a, lda, ws.stage.data(), ws.stage_elements, sp, timer);
    ws.streams.finished.record(sp);
    ws.streams.finished.synchronize();
    const unsigned long long bad = *ws.host_first_nonfinite.data();
    if (bad != ~0ull)
      throw std::invalid_argument("lu_hybrid: A(" + std::to_string(bad % static_cast<unsigned long long>(m)) + ", " +
                                  std::to_string(bad / static_cast<unsigned long long>(m)) +
                                  ") is NaN or Inf; the input must be finite");
    return info;
  }
};

}  // namespace

std::size_t lu_hybrid_device_bytes(std::int64_t m, std::int64_t n, const LuOptions& o, std::size_t element_bytes) {
  const Sizes s = sizes_of(m, n, o);
  return static_cast<std::size_t>(s.matrix + s.stage + s.u12 + s.inverse + 2 * s.coarse) * element_bytes +
         (std::size_t{64} << 20);  // cuBLAS workspaces
}

template <class T>
LuHybridWorkspace<T>::LuHybridWorkspace(std::int64_t m_, std::int64_t n_, const LuOptions& o)
    : m(m_), n(n_), ld(0), options(o) {
  if (m < 0 || n < 0) throw std::invalid_argument("lu_hybrid: negative size");
  (void)update_gemm_fn<T>(o.gemm);  // throws for a precision the GEMM lacks
  const Sizes s = sizes_of(m, n, o);
  ld = s.ld;
  matrix = DeviceBuffer<T>(static_cast<std::size_t>(std::max<std::int64_t>(s.matrix, 1)));
  stage_elements = s.stage;
  stage = DeviceBuffer<T>(static_cast<std::size_t>(s.stage));
  u12_copy = DeviceBuffer<T>(static_cast<std::size_t>(s.u12));
  fine_inverse = DeviceBuffer<T>(static_cast<std::size_t>(s.inverse));
  coarse_width = coarse_width_of(o);
  coarse_inverse = DeviceBuffer<T>(static_cast<std::size_t>(2 * s.coarse));
  host_fine_inverse = PinnedBuffer<T>(static_cast<std::size_t>(s.inverse));
  host_coarse_inverse = PinnedBuffer<T>(static_cast<std::size_t>(s.coarse));
  first_nonfinite = DeviceBuffer<unsigned long long>(1);
  host_first_nonfinite = PinnedBuffer<unsigned long long>(1);
  panel_blas.set_stream(streams.panel);
  update_blas.set_stream(streams.update);
}

template <class T>
int lu_hybrid(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, int* ipiv, LuHybridWorkspace<T>& ws,
              cudaStream_t stream, PhaseTimer* timer) {
  if (m != ws.m || n != ws.n) throw std::invalid_argument("lu_hybrid: workspace made for another shape");
  if (lda < std::max<std::int64_t>(1, m))
    throw std::invalid_argument("lu_hybrid: lda = " + std::to_string(lda) + " < max(1, m)");
  if (m == 0 || n == 0) return 0;
  if (timer) timer->start(stream);
  // The CPU panel's OpenBLAS threads (LuOptions::cpu_threads), restored on return.
  const int caller_threads = host::blas_threads();
  if (ws.options.cpu_threads > 0) host::set_blas_threads(ws.options.cpu_threads);
  struct RestoreThreads {
    int threads;
    bool changed;
    ~RestoreThreads() {
      if (changed) host::set_blas_threads(threads);
    }
  } restore{caller_threads, ws.options.cpu_threads > 0};
  Driver<T> drv{m,  n, lda, a, ipiv, ws, timer, DeviceMatrix<T>{ws.matrix.data(), m, n, ws.ld, ws.options.row_major},
                update_gemm_fn<T>(ws.options.gemm), ws.streams.panel, ws.streams.update};
  ws.streams.join_from(stream);
  const int info = drv.run();
  ws.streams.join_into(stream);
  if (timer) timer->stop();
  return info;
}

template class LuHybridWorkspace<float>;
template class LuHybridWorkspace<double>;
template int lu_hybrid<float>(std::int64_t, std::int64_t, float*, std::int64_t, int*, LuHybridWorkspace<float>&,
                              cudaStream_t, PhaseTimer*);
template int lu_hybrid<double>(std::int64_t, std::int64_t, double*, std::int64_t, int*, LuHybridWorkspace<double>&,
                               cudaStream_t, PhaseTimer*);

}  // namespace gpufact::dense
