#include "factorizations/dense/cholesky_gpu_resident.hpp"

#include "core/linalg/device_blas.hpp"
#include "factorizations/dense/cholesky_diagonal.hpp"
#include "factorizations/dense/cholesky_update.hpp"
#include "factorizations/dense/staging.hpp"
#include "kernels/dense/potrf_dataflow.cuh"
#include "kernels/dense/potrf_fused.cuh"
#include "kernels/dense/triangle.cuh"
#include "kernels/qr/caqr_kernels.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace gpufact::dense {
namespace {

template <class T>
constexpr cudaDataType_t cuda_type() {
  return std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
}

// The blocked loop's L21 by the inv(L11) GEMM, out of place (the dataflow has no such step).
bool blocked_inverse_gemm(std::int64_t n, const CholeskyOptions& o) {
  return o.inverse_trsm && n > o.nb && o.diagonal != CholeskyDiagonal::dataflow;
}

}  // namespace

template <class T>
CholeskyResidentWorkspace<T>::CholeskyResidentWorkspace(std::int64_t n_, const CholeskyOptions& o)
    : ResidentContext(o.panel_sms),
      n(n_),
      ld(device_ld(n_, n_, false)),
      transfer_width(triangle_transfer_width(n_, sizeof(T))),
      options(o) {
  if (n < 0) throw std::invalid_argument("cholesky_gpu_resident: negative size");
  validate(options);
  (void)update_gemm_fn<T>(options.gemm);
  const auto steps = cholesky_schedule(n, options.nb);
  infos = DeviceBuffer<int>(std::max<std::size_t>(steps.size(), 1));
  host_infos = PinnedBuffer<int>(infos.size());
  if (options.diagonal == CholeskyDiagonal::cusolver) {  // only Xpotrf takes a workspace
    std::size_t dmax = 0, hmax = 0;
    const DeviceBuffer<T> probe(1);  // the size query takes a matrix pointer it does not read
    for (const auto& s : steps) {
      std::size_t dbytes = 0, hbytes = 0;
      GPUFACT_CUSOLVER_CHECK(cusolverDnXpotrf_bufferSize(solver, solver.params(), CUBLAS_FILL_MODE_LOWER,
                                                         s.j1 - s.j0, cuda_type<T>(), const_cast<T*>(probe.data()),
                                                         ld, cuda_type<T>(), &dbytes, &hbytes));
      dmax = std::max(dmax, dbytes);
      hmax = std::max(hmax, hbytes);
    }
    allocate_solver_workspace(dmax, hmax);
  }
  const bool fused = options.diagonal == CholeskyDiagonal::fused;
  const bool inverse_gemm = blocked_inverse_gemm(n, options);
  if (inverse_gemm || fused) {
    inverse = DeviceBuffer<T>(static_cast<std::size_t>(options.nb * options.nb));
    if (fused) GPUFACT_CUDA_CHECK(cudaMemsetAsync(inverse.data(), 0, inverse.bytes(), streams.panel));
  }
  if (inverse_gemm) l21 = DeviceBuffer<T>(static_cast<std::size_t>(2 * n * options.nb));
  if (fused && options.nb > kernels::kPotrfFusedMax)
    diagonal_scratch = DeviceBuffer<T>(potrf_diagonal_fused_scratch(options.nb));
  if (options.diagonal == CholeskyDiagonal::dataflow && n > 0) {
    const std::int64_t width = cholesky_dataflow_width(n, options, sizeof(T));
    dataflow_flags = DeviceBuffer<int>(static_cast<std::size_t>(kernels::potrf_dataflow_flag_count(n, width)));
    dataflow_ticket = DeviceBuffer<unsigned>(1);
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(dataflow_flags.data(), 0, dataflow_flags.bytes(), streams.panel));
  }
}

std::size_t cholesky_gpu_resident_device_bytes(std::int64_t n, const CholeskyOptions& o, std::size_t element_bytes,
                                               bool with_matrix) {
  const std::int64_t ld = device_ld(n, n, false);
  return (with_matrix ? static_cast<std::size_t>(ld * n) * element_bytes : 0) +
         (blocked_inverse_gemm(n, o) ? static_cast<std::size_t>(o.nb * (2 * n + o.nb)) * element_bytes : 0) +
         (o.diagonal == CholeskyDiagonal::fused
              ? (static_cast<std::size_t>(o.nb * o.nb) + potrf_diagonal_fused_scratch(o.nb)) * element_bytes
              : 0) +
         (o.diagonal == CholeskyDiagonal::dataflow && n > 0
              ? static_cast<std::size_t>(
                    kernels::potrf_dataflow_flag_count(n, cholesky_dataflow_width(n, o, element_bytes))) *
                    sizeof(int)
              : 0) +
         (std::size_t{128} << 20);  // cuSOLVER and cuBLAS workspaces
}

namespace {

// Panel by panel: the dataflow kernel factors columns [p0, p0 + nc) (L11 and L21 at once), the
// trailing lower triangle is updated with them (one syrk, or update_block column blocks);
// infos[0] collects the first failure. On the panel stream.
template <class T>
void factor_dataflow(std::int64_t n, std::int64_t ldda, const DeviceMatrix<T>& d, CholeskyResidentWorkspace<T>& ws,
                     PhaseTimer* timer) {
  const CholeskyOptions& o = ws.options;
  cudaStream_t sp = ws.streams.panel;
  const std::int64_t width = cholesky_dataflow_width(n, o, sizeof(T));
  for (std::int64_t p0 = 0; p0 < n; p0 += width) {
    const std::int64_t m = n - p0, nc = std::min(width, m);
    {
      GpuPhase phase(timer, Phase::gpu_panel, sp);
      kernels::launch_potrf_dataflow(d.at(p0, p0), ldda, m, nc, ws.dataflow_flags.data(), ++ws.dataflow_epoch,
                                     ws.dataflow_ticket.data(), ws.infos.data(), static_cast<int>(p0), sp);
    }
    if (m > nc) cholesky_update_columns<T>(d, p0, p0 + nc, p0 + nc, n, o, ws.panel_blas, sp, timer);
  }
}

// The blocked right-looking loop with look-ahead on the panel and update streams (steps: the
// panels of o.nb columns).
template <class T>
void factor_blocked(std::int64_t n, std::int64_t ldda, const DeviceMatrix<T>& d, const std::vector<CholeskyStep>& steps,
                    CholeskyResidentWorkspace<T>& ws, PhaseTimer* timer) {
  const CholeskyOptions& o = ws.options;
  auto& st = ws.streams;
  cudaStream_t sp = st.panel, su = st.update;
  const std::int64_t nb = o.nb;
  const bool fused = o.diagonal == CholeskyDiagonal::fused;
  // inverse_trsm: panel i's L21 (rows [j1, n)) lives in one of two n × nb buffers (ld n) from its
  // GEMM until the update stream has copied it into the matrix after step i's update; the GEMM of
  // panel i + 2 reuses the buffer only after the panel stream has waited for that update.
  const bool l21_out_of_place = blocked_inverse_gemm(n, o);
  auto l21_of = [&](std::size_t i) { return ws.l21.data() + static_cast<std::size_t>((i % 2) * n * nb); };
  // Panel i on the panel stream: potrf of its diagonal block (info into infos[i], fused: into
  // infos[0] numbered in the whole matrix), then L21. Per panel, the critical chain (after the
  // look-ahead's syrk and GEMM on the panel's columns) is: fused — one kernel (for nb > 128,
  // halves: two kernels, a GEMM, a copy, a syrk and two GEMMs per split) and the L21 GEMM;
  // cusolver — potrf (its own launches), the identity, a trsm and the L21 GEMM. Nothing on it
  // synchronizes with the host or allocates.
  auto factor_panel = [&](std::size_t i) {
    const CholeskyStep& s = steps[i];
    const std::int64_t w = s.j1 - s.j0, below = n - s.j1;
    GpuPhase phase(timer, Phase::gpu_panel, sp);
    const bool inverse_wanted = below > 0 && o.inverse_trsm;
    if (fused) {
      potrf_diagonal_fused<T>(ws.panel_blas, d.at(s.j0, s.j0), ldda, w, ws.inverse.data(), nb, inverse_wanted,
                              ws.diagonal_scratch.data(), ws.infos.data(), static_cast<int>(s.j0), sp);
    } else if (o.diagonal == CholeskyDiagonal::recursive) {
      potrf_diagonal_recursive<T>(ws.panel_blas, d.at(s.j0, s.j0), ldda, w, ws.infos.data() + i, sp);
    } else {
      GPUFACT_CUSOLVER_CHECK(cusolverDnXpotrf(ws.solver, ws.solver.params(), CUBLAS_FILL_MODE_LOWER, w,
                                              cuda_type<T>(), d.at(s.j0, s.j0), ldda, cuda_type<T>(),
                                              ws.solver_device.data(), ws.solver_device.bytes(),
                                              ws.solver_host.empty() ? nullptr : ws.solver_host.data(),
                                              ws.solver_host.size(), ws.infos.data() + i));
    }
    if (below <= 0) return;
    if (o.inverse_trsm) {
      // inv(L11) (fused: already written; else by trsm on the w × w identity, w³/3 flops), then
      // one GEMM instead of the triangular solve with `below` right-hand sides (volkov08 §5), out
      // of place into l21_of(i): the updates read it there and the update stream copies it into
      // the matrix, off the critical chain.
      if (!fused) {
        kernels::launch_set_identity<T>(ws.inverse.data(), nb, w, w, sp);
        dev::trsm<T>(ws.panel_blas, Side::left, Uplo::lower, Op::N, Diag::non_unit, w, w, T(1), d.at(s.j0, s.j0),
                     ldda, ws.inverse.data(), nb);
      }
      dev::gemm<T>(ws.panel_blas, Op::N, Op::T, below, w, w, T(1), d.at(s.j1, s.j0), ldda, ws.inverse.data(), nb, T(0),
                   l21_of(i), n);
    } else {
      dev::trsm<T>(ws.panel_blas, Side::right, Uplo::lower, Op::T, Diag::non_unit, below, w, T(1), d.at(s.j0, s.j0),
                   ldda, d.at(s.j1, s.j0), ldda);
    }
  };

  // Stream roles per step i (panel i factored, its ready event recorded on the panel stream):
  //   panel  (high priority): the next panel's columns [j1, j1') updated with panel i, then
  //          factored — the critical chain;
  //   update: the rest [j1', n) with panel i, back to back with the previous step's update.
  // The panel stream waits for the previous update (it wrote the next panel's columns), the
  // update stream for panel i's factorization.
  factor_panel(0);
  st.lookahead_done.record(sp);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const CholeskyStep& s = steps[i];
    const bool has_next = i + 1 < steps.size();
    const bool ahead = o.lookahead && has_next;
    const std::int64_t rest_begin = ahead ? steps[i + 1].j1 : s.j1;
    st.update_done.record(su);
    GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(sp, st.update_done.get(), 0));
    GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(su, st.lookahead_done.get(), 0));
    const std::int64_t w = s.j1 - s.j0, below = n - s.j1;
    // Panel i's L: rows [j1, n) from its out-of-place buffer, or in the matrix.
    const bool l_apart = l21_out_of_place && below > 0;
    const T* l = l_apart ? l21_of(i) : d.at(0, s.j0);
    const std::int64_t ldl = l_apart ? n : ldda, l_row0 = l_apart ? s.j1 : 0;
    cholesky_update_columns<T>(d, l, ldl, l_row0, w, rest_begin, n, o, ws.update_blas, su, timer);
    if (l_apart)
      GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(d.at(s.j1, s.j0), static_cast<std::size_t>(ldda) * sizeof(T), l21_of(i),
                                           static_cast<std::size_t>(n) * sizeof(T),
                                           static_cast<std::size_t>(below) * sizeof(T), static_cast<std::size_t>(w),
                                           cudaMemcpyDeviceToDevice, su));
    if (ahead) {
      cholesky_update_columns<T>(d, l, ldl, l_row0, w, s.j1, rest_begin, o, ws.panel_blas, sp, timer);
      factor_panel(i + 1);
      st.lookahead_done.record(sp);
    } else if (has_next) {
      st.panel_after_update();
      factor_panel(i + 1);
      st.lookahead_done.record(sp);
    }
  }
}

}  // namespace

template <class T>
int cholesky_gpu_resident(std::int64_t n, T* d_a, std::int64_t ldda, CholeskyResidentWorkspace<T>& ws,
                          cudaStream_t stream, PhaseTimer* timer) {
  if (n != ws.n) throw std::invalid_argument("cholesky_gpu_resident: workspace made for another n");
  if (ldda < std::max<std::int64_t>(1, n))
    throw std::invalid_argument("cholesky_gpu_resident: ldda = " + std::to_string(ldda) + " < max(1, n)");
  if (n == 0) return 0;
  if (timer) timer->start(stream);
  const CholeskyOptions& o = ws.options;
  const auto steps = cholesky_schedule(n, o.nb);
  const DeviceMatrix<T> d{d_a, n, n, ldda, false};
  auto& st = ws.streams;
  cudaStream_t sp = st.panel;
  st.join_from(stream);
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.first_nonfinite.data(), 0xff, sizeof(unsigned long long), sp));
  // All infos at once, not per panel: nothing but kernels and cuBLAS calls inside the loop.
  GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.infos.data(), 0, steps.size() * sizeof(int), sp));
  kernels::launch_find_nonfinite_lower(d_a, ldda, n, ws.first_nonfinite.data(), sp);

  if (o.diagonal == CholeskyDiagonal::dataflow)
    factor_dataflow<T>(n, ldda, d, ws, timer);
  else
    factor_blocked<T>(n, ldda, d, steps, ws, timer);
  st.panel_after_update();
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(ws.host_infos.data(), ws.infos.data(), steps.size() * sizeof(int),
                                     cudaMemcpyDeviceToHost, sp));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(ws.host_first_nonfinite.data(), ws.first_nonfinite.data(),
                                     sizeof(unsigned long long), cudaMemcpyDeviceToHost, sp));
  st.finished.record(sp);
  st.finished.synchronize();
  st.join_into(stream);
  if (timer) timer->stop();
  const unsigned long long bad = ws.host_first_nonfinite[0];
  if (bad != ~0ull)
    throw std::invalid_argument("cholesky_gpu_resident: A(" + std::to_string(bad % static_cast<unsigned long long>(n)) +
                                ", " + std::to_string(bad / static_cast<unsigned long long>(n)) +
                                ") is NaN or Inf; the input must be finite");
  if (o.diagonal == CholeskyDiagonal::fused || o.diagonal == CholeskyDiagonal::dataflow) {  // one info
    if (ws.host_infos[0] < 0)
      throw std::runtime_error(std::string(cholesky_diagonal_name(o.diagonal)) + " potrf returned info " +
                               std::to_string(ws.host_infos[0]));
    return ws.host_infos[0];
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const int panel_info = ws.host_infos[i];
    if (panel_info < 0) throw std::runtime_error("cusolverDnXpotrf returned info " + std::to_string(panel_info));
    if (panel_info > 0) return static_cast<int>(steps[i].j0) + panel_info;
  }
  return 0;
}

template <class T>
int cholesky_gpu_resident_host(std::int64_t n, T* a, std::int64_t lda, CholeskyResidentWorkspace<T>& ws,
                               cudaStream_t stream, PhaseTimer* timer) {
  if (lda < std::max<std::int64_t>(1, n))
    throw std::invalid_argument("cholesky_gpu_resident_host: lda = " + std::to_string(lda) + " < max(1, n)");
  if (n != ws.n) throw std::invalid_argument("cholesky_gpu_resident_host: workspace made for another n");
  if (n == 0) return 0;
  if (ws.matrix.size() < static_cast<std::size_t>(ws.ld * n)) ws.matrix = DeviceBuffer<T>(static_cast<std::size_t>(ws.ld * n));
  const DeviceMatrix<T> d{ws.matrix.data(), n, n, ws.ld, false};
  upload_lower(a, lda, d, 0, ws.transfer_width, stream, nullptr);
  int info = 0;
  try {
    info = cholesky_gpu_resident(n, ws.matrix.data(), ws.ld, ws, stream, timer);
  } catch (const std::invalid_argument&) {
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));  // nothing comes back; the caller's matrix is unchanged
    throw;
  }
  download_lower(d, a, lda, 0, ws.transfer_width, stream, nullptr);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return info;
}

template class CholeskyResidentWorkspace<float>;
template class CholeskyResidentWorkspace<double>;
#define GPUFACT_CHOLESKY_RESIDENT(T)                                                                                   \
  template int cholesky_gpu_resident<T>(std::int64_t, T*, std::int64_t, CholeskyResidentWorkspace<T>&, cudaStream_t,   \
                                        PhaseTimer*);                                                                  \
  template int cholesky_gpu_resident_host<T>(std::int64_t, T*, std::int64_t, CholeskyResidentWorkspace<T>&,            \
                                             cudaStream_t, PhaseTimer*);
GPUFACT_CHOLESKY_RESIDENT(float)
GPUFACT_CHOLESKY_RESIDENT(double)
#undef GPUFACT_CHOLESKY_RESIDENT

}  // namespace gpufact::dense
