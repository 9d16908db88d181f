#include "factorizations/dense/cholesky_hybrid.hpp"

#include "core/linalg/host_blas.hpp"
#include "factorizations/dense/cholesky_update.hpp"
#include "factorizations/dense/staging.hpp"
#include "kernels/dense/triangle.cuh"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gpufact::dense {

template <class T>
CholeskyHybridWorkspace<T>::CholeskyHybridWorkspace(std::int64_t n_, const CholeskyOptions& o)
    : n(n_), ld(device_ld(n_, n_, false)), transfer_width(0), options(o) {
  if (n < 0) throw std::invalid_argument("cholesky_hybrid: negative size");
  validate(options);
  // The model's width rounded to a multiple of nb, so every panel's diagonal square goes up whole
  // inside one rectangle: the panel downloads (rows [j0, n) of a panel's columns) then bring back
  // exactly the strict-upper entries that went up, and the caller's upper triangle is unchanged.
  const double blocks = static_cast<double>(triangle_transfer_width(n, sizeof(T))) / static_cast<double>(o.nb);
  transfer_width = std::max<std::int64_t>(1, std::llround(blocks)) * o.nb;
  (void)update_gemm_fn<T>(options.gemm);  // throws for a precision the GEMM lacks
  matrix = DeviceBuffer<T>(static_cast<std::size_t>(std::max<std::int64_t>(ld * n, 1)));
  first_nonfinite = DeviceBuffer<unsigned long long>(1);
  host_first_nonfinite = PinnedBuffer<unsigned long long>(1);
  panel_blas.set_stream(streams.panel);
  update_blas.set_stream(streams.update);
}

std::size_t cholesky_hybrid_device_bytes(std::int64_t n, const CholeskyOptions&, std::size_t element_bytes) {
  const std::int64_t ld = device_ld(n, n, false);
  return static_cast<std::size_t>(ld * n) * element_bytes + (std::size_t{64} << 20);  // + cuBLAS workspaces
}

template <class T>
int cholesky_hybrid(std::int64_t n, T* a, std::int64_t lda, CholeskyHybridWorkspace<T>& ws, cudaStream_t stream,
                    PhaseTimer* timer) {
  if (n != ws.n) throw std::invalid_argument("cholesky_hybrid: workspace made for another n");
  if (lda < std::max<std::int64_t>(1, n))
    throw std::invalid_argument("cholesky_hybrid: lda = " + std::to_string(lda) + " < max(1, n)");
  if (n == 0) return 0;
  if (timer) timer->start(stream);
  const CholeskyOptions& o = ws.options;
  const auto steps = cholesky_schedule(n, o.nb);
  const DeviceMatrix<T> d{ws.matrix.data(), n, n, ws.ld, false};
  auto& st = ws.streams;
  cudaStream_t sp = st.panel, su = st.update;
  st.join_from(stream);
  auto at = [&](std::int64_t i, std::int64_t j) { return a + i + j * lda; };

  // The lower triangle goes up as rectangles: the first panel's columns first (the host must not
  // write them while the copy engine reads them), then the rest, then the finite check.
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.first_nonfinite.data(), 0xff, sizeof(unsigned long long), sp));
  const std::int64_t first_end = steps[0].j1;
  upload_block(a, lda, d, 0, n, 0, first_end, static_cast<T*>(nullptr), sp, timer);
  ws.upload_done.record(sp);
  upload_lower(a, lda, d, first_end, ws.transfer_width, sp, timer);
  kernels::launch_find_nonfinite_lower(d.data, d.ld, n, ws.first_nonfinite.data(), sp);
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(ws.host_first_nonfinite.data(), ws.first_nonfinite.data(),
                                     sizeof(unsigned long long), cudaMemcpyDeviceToHost, sp));
  st.panel_ready.record(sp);  // the finite check's answer is in host memory
  ws.upload_done.synchronize();

  int info = 0;
  bool nonfinite = false;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const CholeskyStep& s = steps[i];
    const std::int64_t w = s.j1 - s.j0, below = n - s.j1;
    // CPU: the panel, in its final place in `a` (downloaded there by the previous step).
    int panel_info = 0;
    {
      const HostPhase phase(timer, Phase::cpu_panel);
      panel_info = host::potrf(Uplo::lower, w, at(s.j0, s.j0), lda);
      if (panel_info < 0) throw std::runtime_error("potrf on a panel returned info " + std::to_string(panel_info));
      if (panel_info == 0 && below > 0)
        host::trsm(Side::right, Uplo::lower, Op::T, Diag::non_unit, below, w, T(1), at(s.j0, s.j0), lda,
                   at(s.j1, s.j0), lda);
    }
    if (i == 0) {  // the finite check ran beside the first panel; a NaN outranks its info
      st.panel_ready.synchronize();
      if (*ws.host_first_nonfinite.data() != ~0ull) {
        nonfinite = true;
        break;
      }
    }
    if (panel_info > 0) {
      info = static_cast<int>(s.j0) + panel_info;
      break;
    }
    if (below == 0) break;
    // (a) the factored column block goes back up as one rectangle, rows [j0, n) × its w columns
    // (the w(w − 1)/2 strict-upper entries of its diagonal square ride along: one transfer costs
    // less than splitting the square off, since w < triangle_transfer_width's b* at nb <= 256 and
    // its extra bytes are w/(2(n − j0)) of the block's). Its columns are disjoint from
    // everything the update stream touches, so it does not wait for the previous update.
    upload_block(a, lda, d, s.j0, n, s.j0, s.j1, static_cast<T*>(nullptr), sp, timer);
    st.update_after_lookahead();  // the update stream needs this panel's L
    st.panel_after_update();      // the next panel's columns were written by the previous update
    const bool has_next = i + 1 < steps.size();
    const std::int64_t next_end = has_next ? steps[i + 1].j1 : s.j1;
    const std::int64_t rest_begin = o.lookahead && has_next ? next_end : s.j1;
    if (o.lookahead && has_next) {
      // The next panel's columns first on the high-priority stream, then down into `a`.
      cholesky_update_columns(d, s.j0, s.j1, s.j1, next_end, o, ws.panel_blas, sp, timer);
      download_block(d, a, lda, s.j1, n, s.j1, next_end, static_cast<T*>(nullptr), sp, timer);
      st.panel_ready.record(sp);
    }
    cholesky_update_columns(d, s.j0, s.j1, rest_begin, n, o, ws.update_blas, su, timer);
    if (!o.lookahead && has_next) {
      st.panel_after_update();
      download_block(d, a, lda, s.j1, n, s.j1, next_end, static_cast<T*>(nullptr), sp, timer);
      st.panel_ready.record(sp);
    }
    if (has_next) st.panel_ready.synchronize();
  }
  st.join_into(stream);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (timer) timer->stop();
  if (nonfinite) {
    const unsigned long long bad = *ws.host_first_nonfinite.data();
    throw std::invalid_argument("cholesky_hybrid: A(" + std::to_string(bad % static_cast<unsigned long long>(n)) +
                                ", " + std::to_string(bad / static_cast<unsigned long long>(n)) +
                                ") is NaN or Inf; the input must be finite");
  }
  return info;
}

template class CholeskyHybridWorkspace<float>;
template class CholeskyHybridWorkspace<double>;
template int cholesky_hybrid<float>(std::int64_t, float*, std::int64_t, CholeskyHybridWorkspace<float>&, cudaStream_t,
                                    PhaseTimer*);
template int cholesky_hybrid<double>(std::int64_t, double*, std::int64_t, CholeskyHybridWorkspace<double>&,
                                     cudaStream_t, PhaseTimer*);

}  // namespace gpufact::dense
