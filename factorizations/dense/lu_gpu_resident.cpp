#include "factorizations/dense/lu_gpu_resident.hpp"

#include "core/linalg/device_blas.hpp"
#include "factorizations/dense/lu_schedule.hpp"
#include "factorizations/dense/staging.hpp"
#include "kernels/dense/finite_check.cuh"
#include "kernels/dense/row_swaps.cuh"
#include "kernels/dense/trsm_unit_lower.cuh"
#include "kernels/lu/panel_coop.cuh"
#include "kernels/lu/tslu.cuh"
#include "kernels/qr/caqr_kernels.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace gpufact::dense {
namespace {

template <class T>
constexpr cudaDataType_t cuda_type() {
  return std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
}

LuOptions one_level(LuOptions o) {
  o.cpu_threads = 0;
  o.two_level = false;
  o.row_major = false;
  return o;
}

// Every leaf of every panel, in the order they are factored (one cuSOLVER info each).
template <class T>
std::vector<PanelLeaf> all_leaves(const std::vector<LuStep>& steps, const LuResidentWorkspace<T>& ws) {
  std::vector<PanelLeaf> out;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto l = panel_leaves(steps[i].j0, steps[i].j1, ws.leaf_for(i));
    out.insert(out.end(), l.begin(), l.end());
  }
  return out;
}

}  // namespace

template <class T>
LuResidentWorkspace<T>::LuResidentWorkspace(std::int64_t m_, std::int64_t n_, const LuOptions& o)
    : ResidentContext(o.panel_sms), m(m_), n(n_), ld(device_ld(m_, n_, false)),
      options(one_level(o)) {
  validate(options);
  (void)update_gemm_fn<T>(options.gemm);
  const std::int64_t k = std::min(m, n);
  steps = lu_schedule(m, n, options);
  // Each panel's leaf width, once: with panel = cooperative what panel_coop.cuh's
  // coop_panel_fit_width gives for that panel's height and kCooperativeLeaf or the panel_leaf asked
  // for (in registers where it can, cut to what fits), else the one width the options give.
  for (const auto& s : steps) {
    const std::int64_t width = s.j1 - s.j0;
    if (options.panel != PanelMethod::cooperative) {
      step_leaf.push_back(effective_panel_leaf(options));
      continue;
    }
    const std::int64_t want = std::min(effective_panel_leaf(options), width);
    const std::int64_t fit = kernels::coop_panel_fit_width(m - s.j0, want, sizeof(T));
    if (fit == 0)
      throw std::invalid_argument("panel = cooperative: an " + std::to_string(m - s.j0) +
                                  "-row panel of 8 columns does not fit in a cluster's shared memory");
    step_leaf.push_back(fit >= width ? 0 : fit);
  }
  const auto leaves = all_leaves(steps, *this);
  ipiv = DeviceBuffer<std::int64_t>(static_cast<std::size_t>(std::max<std::int64_t>(k, 1)));
  infos = DeviceBuffer<int>(std::max<std::size_t>(leaves.size(), 1));
  host_ipiv = PinnedBuffer<std::int64_t>(ipiv.size());
  host_infos = PinnedBuffer<int>(infos.size());
  std::size_t dmax = 0, hmax = 0;
  const DeviceBuffer<T> probe(1);  // the size query takes a matrix pointer it does not read
  const bool tournament = options.panel == PanelMethod::tournament;
  if (tournament) {
    std::size_t tbytes = 0;
    for (const auto& l : leaves)
      tbytes = std::max(tbytes, kernels::tslu_workspace_bytes(m - l.c0, l.c1 - l.c0, sizeof(T)));
    tslu_work = DeviceBuffer<std::byte>(std::max<std::size_t>(tbytes, 1));  // launch_tslu clears its counters
  }
  for (const auto& l : leaves) {
    if (options.panel != PanelMethod::cusolver) break;
    std::size_t dbytes = 0, hbytes = 0;
    GPUFACT_CUSOLVER_CHECK(cusolverDnXgetrf_bufferSize(solver, solver.params(), m - l.c0, l.c1 - l.c0, cuda_type<T>(),
                                                       const_cast<T*>(probe.data()), ld, cuda_type<T>(), &dbytes,
                                                       &hbytes));
    dmax = std::max(dmax, dbytes);
    hmax = std::max(hmax, hbytes);
  }
  allocate_solver_workspace(dmax, hmax);
  if (options.inverse_trsm && k > 0) {
    inverse = DeviceBuffer<T>(static_cast<std::size_t>(3 * options.nb * options.nb));
    u12 = DeviceBuffer<T>(static_cast<std::size_t>(options.nb * n));
  }
}

std::size_t lu_gpu_resident_device_bytes(std::int64_t m, std::int64_t n, const LuOptions& o,
                                         std::size_t element_bytes, bool with_matrix) {
  const std::int64_t ld = device_ld(m, n, false);
  return (with_matrix ? static_cast<std::size_t>(ld * n) * element_bytes : 0) +
         static_cast<std::size_t>(std::min(m, n)) * 8 + static_cast<std::size_t>(m) * o.nb * element_bytes +
         (o.inverse_trsm ? static_cast<std::size_t>(o.nb * (n + 3 * o.nb)) * element_bytes : 0) +
         (o.panel == PanelMethod::tournament
              ? kernels::tslu_workspace_bytes(m, std::min(effective_panel_leaf(o), std::min(m, n)), element_bytes)
              : 0) +
         (std::size_t{128} << 20);  // cuSOLVER and cuBLAS workspaces
}

namespace {

// Everything the factorization does on the GPU, enqueued behind the work on `stream` and joined
// back into it: the finite check, the panels and updates on the workspace's streams, then ipiv,
// the leaves' infos and the first non-finite entry copied to ws's pinned buffers.
template <class T>
void enqueue_lu(std::int64_t m, std::int64_t n, T* d_a, std::int64_t ldda, LuResidentWorkspace<T>& ws,
                cudaStream_t stream, PhaseTimer* timer) {
  const auto& steps = ws.steps;
  const bool tournament = ws.options.panel == PanelMethod::tournament;
  const bool cooperative = ws.options.panel == PanelMethod::cooperative;
  const DeviceMatrix<T> d{d_a, m, n, ldda, false};
  const UpdateGemmFn<T> gemm = update_gemm_fn<T>(ws.options.gemm);
  auto& st = ws.streams;
  cudaStream_t sp = st.panel, su = st.update;
  st.join_from(stream);

  GPUFACT_CUDA_CHECK(cudaMemsetAsync(ws.first_nonfinite.data(), 0xff, sizeof(unsigned long long), sp));
  kernels::launch_find_nonfinite(d_a, 1, ldda, m, n, ws.first_nonfinite.data(), sp);

  // A22 −= L21 · U12 on rows [k1, m) × cols [c0, c1), inner dimension [k0, k1), on `s` with that
  // stream's cuBLAS handle. `timed`: an interval of its own (not inside the panel's interval).
  auto update = [&](std::int64_t k0, std::int64_t k1, std::int64_t c0, std::int64_t c1, cudaStream_t s, bool timed) {
    const std::int64_t rows = m - k1, cols = c1 - c0, k = k1 - k0;
    if (rows <= 0 || cols <= 0 || k <= 0) return;
    cublasHandle_t blas = s == sp ? ws.panel_blas.get() : ws.update_blas.get();
    GpuPhase phase(timed ? timer : nullptr, Phase::gpu_compute, s,
                   2.0 * static_cast<double>(rows) * static_cast<double>(cols) * static_cast<double>(k));
    gemm(blas, Op::N, Op::N, rows, cols, k, T(-1), d.at(k1, k0), ldda, d.at(k0, c0), ldda, T(1), d.at(k1, c0), ldda, s);
  };
  // The leaf's interchanges (1-based, relative to its first row, as cuSOLVER leaves them) on
  // columns [c0, c1) minus [skip0, skip1).
  auto swap_rows = [&](const PanelLeaf& l, std::int64_t c0, std::int64_t c1, std::int64_t skip0, std::int64_t skip1,
                       cudaStream_t strm) {
    if (c1 <= c0) return;
    kernels::launch_apply_row_swaps_device(d.at(0, c0), ldda, false, c1 - c0, skip0 - c0, skip1 - c0, l.c0,
                                           ws.ipiv.data() + l.c0, l.c1 - l.c0, strm);
  };
  // The panel stream's solves (inside the recursive panel, and inv(L11) on the identity): B ←
  // L⁻¹·B for the unit lower L at (c0, c0), h columns, by kernels/dense/trsm_unit_lower.cuh where L
  // fits it (cuBLAS trsm ran far below its flops on these blocks), else by cuBLAS.
  const bool kernel_solve = ws.options.panel_solve == PanelSolve::kernel ||
                            (ws.options.panel_solve == PanelSolve::automatic && sizeof(T) == 8);
  auto solve_unit_lower = [&](std::int64_t c0, std::int64_t h, T* bm, std::int64_t ldb, std::int64_t nrhs) {
    if (kernel_solve && h <= kernels::kTrsmUnitLowerMaxRows)
      return kernels::launch_trsm_unit_lower(d.at(c0, c0), ldda, h, bm, ldb, nrhs, sp);
    dev::trsm<T>(ws.panel_blas, Side::left, Uplo::lower, Op::N, Diag::unit, h, nrhs, T(1), d.at(c0, c0), ldda, bm,
                 ldb);
  };
  std::size_t leaf_index = 0;  // infos slot of the next leaf
  // Columns [c0, c1) of panel p.
  auto factor_leaf = [&](const LuStep& p, std::int64_t c0, std::int64_t c1) {
    if (tournament) {  // TSLU: two launches, same ipiv and infos conventions as cuSOLVER's
      kernels::launch_tslu(d.at(c0, c0), ldda, m - c0, c1 - c0, ws.ipiv.data() + c0, ws.infos.data() + leaf_index,
                           ws.tslu_work.data(), ws.tslu_work.bytes(), sp);
      ++leaf_index;
      return;
    }
    if (cooperative) {  // one cluster launch that also interchanges the rest of the panel; pivots
                        // counted from the panel's first row
      const kernels::LuPanelSpan span{c0 - p.j0, p.j1 - c1, c0 - p.j0};
      kernels::launch_lu_panel_coop(d.at(c0, c0), ldda, m - c0, c1 - c0, ws.ipiv.data() + c0,
                                    ws.infos.data() + leaf_index, sp, nullptr, span);
      ++leaf_index;
      return;
    }
    GPUFACT_CUSOLVER_CHECK(cusolverDnXgetrf(ws.solver, ws.solver.params(), m - c0, c1 - c0, cuda_type<T>(), d.at(c0, c0),
                                            ldda, ws.ipiv.data() + c0, cuda_type<T>(), ws.solver_device.data(),
                                            ws.solver_device.bytes(),
                                            ws.solver_host.empty() ? nullptr : ws.solver_host.data(),
                                            ws.solver_host.size(), ws.infos.data() + leaf_index));
    ++leaf_index;
  };
  // Recursive panel (LuOptions::panel_leaf; volkov08 §5's two levels inside the panel): factor the
  // left part, bring the right part up to date with it (interchanges, solve, GEMM), factor the
  // right part, then apply its interchanges to the left part. Everything on the panel stream.
  // The cooperative leaf interchanges the whole panel itself.
  auto factor_columns = [&](auto&& self, const LuStep& p, std::int64_t c0, std::int64_t c1,
                            std::int64_t leaf) -> void {
    if (leaf <= 0 || c1 - c0 <= leaf) return factor_leaf(p, c0, c1);
    const std::int64_t mid = c0 + panel_split(c1 - c0, leaf);
    self(self, p, c0, mid, leaf);
    if (!cooperative)
      for (const auto& l : panel_leaves(c0, mid, leaf)) swap_rows(l, mid, c1, 0, 0, sp);
    solve_unit_lower(c0, mid - c0, d.at(c0, mid), ldda, c1 - mid);
    update(c0, mid, mid, c1, sp, false);
    self(self, p, mid, c1, leaf);
    if (!cooperative)
      for (const auto& l : panel_leaves(mid, c1, leaf)) swap_rows(l, c0, mid, 0, 0, sp);
  };
  const bool inverse = ws.options.inverse_trsm;
  const std::int64_t nb = ws.options.nb;
  auto inverse_of = [&](std::size_t i) { return ws.inverse.data() + static_cast<std::int64_t>(i % 3) * nb * nb; };
  auto factor_panel = [&](std::size_t i) {
    const LuStep& s = steps[i];
    GpuPhase phase(timer, Phase::gpu_panel, sp);
    factor_columns(factor_columns, s, s.j0, s.j1, ws.leaf_for(i));
    // inv(L11) for this step's U12 GEMMs (volkov08 §5): trsm on the w × w identity, w³ flops, on
    // the panel stream before the panel's ready event. Only when some column lies right of the panel.
    const std::int64_t w = s.j1 - s.j0;
    if (inverse && s.j1 < n && w > 0) {
      kernels::launch_set_identity<T>(inverse_of(i), nb, w, w, sp);
      solve_unit_lower(s.j0, w, inverse_of(i), nb, w);
    }
  };

  // Stream roles per step i (panel i = columns [j0, j1) already factored, ready event recorded):
  //   panel  (high priority): the next panel's columns [j1, j1') — interchanges, U12, the
  //          look-ahead GEMM — then the next panel's factorization: the critical chain;
  //   update: interchanges, U12 and GEMM on [j1', n), back to back with the previous update,
  //          the columns of panel i + 2 first ([j1', j1'')), then the rest;
  //   aux    (low priority): interchanges on the finished columns [0, j0), off every chain.
  // The panel stream waits for the previous update's first part (the next panel's columns: it
  // need not wait for the whole trailing GEMM, which would idle the critical chain while the
  // trailing matrix is large), the update stream for the panel's factorization, aux for the whole
  // previous update (it reads L21).
  auto record_panel_ready = [&] { st.lookahead_done.record(sp); };
  // U12 on columns [c0, c1) of step i: inv(L11)·A12 into ws.u12 by one GEMM and copied back
  // (a GEMM cannot write over its input), or cuBLAS trsm in place.
  auto solve_u12 = [&](std::size_t i, std::int64_t c0, std::int64_t c1, cudaStream_t strm) {
    if (c1 <= c0) return;
    const LuStep& s = steps[i];
    const std::int64_t w = s.j1 - s.j0, cols = c1 - c0;
    CublasHandle& blas = strm == sp ? ws.panel_blas : ws.update_blas;
    if (inverse) {
      GpuPhase phase(timer, Phase::gpu_u12, strm, 2.0 * static_cast<double>(w) * static_cast<double>(w) * static_cast<double>(cols));
      T* out = ws.u12.data() + c0 * nb;
      dev::gemm<T>(blas, Op::N, Op::N, w, cols, w, T(1), inverse_of(i), nb, d.at(s.j0, c0), ldda, T(0), out, nb);
      GPUFACT_CUDA_CHECK(cudaMemcpy2DAsync(d.at(s.j0, c0), static_cast<std::size_t>(ldda) * sizeof(T), out,
                                           static_cast<std::size_t>(nb) * sizeof(T), static_cast<std::size_t>(w) * sizeof(T),
                                           static_cast<std::size_t>(cols), cudaMemcpyDeviceToDevice, strm));
      return;
    }
    GpuPhase phase(timer, Phase::gpu_u12, strm, static_cast<double>(w) * static_cast<double>(w) * static_cast<double>(cols));
    dev::trsm<T>(blas, Side::left, Uplo::lower, Op::N, Diag::unit, w, cols, T(1), d.at(s.j0, s.j0), ldda,
                 d.at(s.j0, c0), ldda);  // u12 = trsm: cuBLAS, the ablation's baseline (volkov08 Fig. 11)
  };
  auto swap_panel_rows = [&](std::size_t i, std::int64_t c0, std::int64_t c1, cudaStream_t strm) {
    if (c1 <= c0) return;
    GpuPhase phase(timer, Phase::pivoting, strm);
    if (cooperative) return swap_rows(PanelLeaf{steps[i].j0, steps[i].j1}, c0, c1, 0, 0, strm);  // one launch
    for (const auto& l : panel_leaves(steps[i].j0, steps[i].j1, ws.leaf_for(i))) swap_rows(l, c0, c1, 0, 0, strm);
  };
  cudaStream_t sa = ws.aux;
  ws.aux_start.record(sp);  // aux starts after the finite check (and what the caller enqueued)
  GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(sa, ws.aux_start.get(), 0));

  if (!steps.empty()) {
    factor_panel(0);
    record_panel_ready();
  }
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const LuStep& s = steps[i];
    const bool has_next = i + 1 < steps.size();
    const bool ahead = ws.options.lookahead && has_next;
    const std::int64_t rest_begin = ahead ? steps[i + 1].j1 : s.j1;
    const std::int64_t split = ahead && i + 2 < steps.size() ? steps[i + 2].j1 : rest_begin;
    // The previous update's end: aux waits for it, the panel stream for its first part.
    st.panel_after_update(i > 0 && ws.options.lookahead);
    GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(sa, st.update_done.get(), 0));
    // Panel i factored: update and aux may use its L and interchanges (waits enqueued before the
    // event is recorded again for panel i + 1).
    GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(su, st.lookahead_done.get(), 0));
    GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(sa, st.lookahead_done.get(), 0));
    swap_panel_rows(i, 0, s.j0, sa);
    for (auto [c0, c1] : {std::pair{rest_begin, split}, std::pair{split, n}}) {
      swap_panel_rows(i, c0, c1, su);
      solve_u12(i, c0, c1, su);
      update(s.j0, s.j1, c0, c1, su, true);
      if (c1 == split) st.next_panel_updated.record(su);
    }
    if (ahead) {
      swap_panel_rows(i, s.j1, rest_begin, sp);
      solve_u12(i, s.j1, rest_begin, sp);
      update(s.j0, s.j1, s.j1, rest_begin, sp, true);
      factor_panel(i + 1);
      record_panel_ready();
    } else if (has_next) {
      st.panel_after_update();
      factor_panel(i + 1);
      record_panel_ready();
    }
  }
  st.panel_after_update();
  ws.aux_done.record(sa);
  GPUFACT_CUDA_CHECK(cudaStreamWaitEvent(sp, ws.aux_done.get(), 0));
  const auto leaves = all_leaves(steps, ws);
  if (leaves.size() != leaf_index) throw std::logic_error("lu_gpu_resident: leaf count mismatch");
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(ws.host_ipiv.data(), ws.ipiv.data(), std::min(m, n) * sizeof(std::int64_t),
                                     cudaMemcpyDeviceToHost, sp));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(ws.host_infos.data(), ws.infos.data(), leaves.size() * sizeof(int),
                                     cudaMemcpyDeviceToHost, sp));
  GPUFACT_CUDA_CHECK(cudaMemcpyAsync(ws.host_first_nonfinite.data(), ws.first_nonfinite.data(),
                                     sizeof(unsigned long long), cudaMemcpyDeviceToHost, sp));
  st.join_into(stream);
}

}  // namespace

template <class T>
int lu_gpu_resident(std::int64_t m, std::int64_t n, T* d_a, std::int64_t ldda, int* ipiv, LuResidentWorkspace<T>& ws,
                    cudaStream_t stream, PhaseTimer* timer) {
  if (m != ws.m || n != ws.n) throw std::invalid_argument("lu_gpu_resident: workspace made for another shape");
  if (ldda < std::max<std::int64_t>(1, m))
    throw std::invalid_argument("lu_gpu_resident: ldda = " + std::to_string(ldda) + " < max(1, m)");
  if (m == 0 || n == 0) return 0;
  if (ws.options.graph && !timer) {
    ws.graph.launch({d_a, ldda}, stream, [&](cudaStream_t s) { enqueue_lu(m, n, d_a, ldda, ws, s, nullptr); });
  } else {
    if (timer) timer->start(stream);
    enqueue_lu(m, n, d_a, ldda, ws, stream, timer);
  }
  ws.call_done.record(stream);
  ws.call_done.synchronize();
  const auto& steps = ws.steps;
  const bool cooperative = ws.options.panel == PanelMethod::cooperative;
  const unsigned long long bad = ws.host_first_nonfinite[0];
  if (bad != ~0ull)
    throw std::invalid_argument("lu_gpu_resident: A(" + std::to_string(bad % static_cast<unsigned long long>(m)) +
                                ", " + std::to_string(bad / static_cast<unsigned long long>(m)) +
                                ") is NaN or Inf; the input must be finite");
  int info = 0;
  std::size_t i = 0;  // the leaf's infos slot
  for (std::size_t step = 0; step < steps.size(); ++step)
    for (const PanelLeaf& l : panel_leaves(steps[step].j0, steps[step].j1, ws.leaf_for(step))) {
      // Pivots count from the leaf's first row; the cooperative leaf's from its panel's.
      const std::int64_t base = cooperative ? steps[step].j0 : l.c0;
      for (std::int64_t j = l.c0; j < l.c1; ++j) ipiv[j] = static_cast<int>(base + ws.host_ipiv[j]);
      if (ws.host_infos[i] < 0) throw std::runtime_error(std::string(panel_method_name(ws.options.panel)) + " returned info " + std::to_string(ws.host_infos[i]));
      if (ws.host_infos[i] > 0 && info == 0) info = static_cast<int>(l.c0) + ws.host_infos[i];
      ++i;
    }
  if (timer) timer->stop();
  return info;
}

template <class T>
int lu_gpu_resident_host(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, int* ipiv,
                         LuResidentWorkspace<T>& ws, cudaStream_t stream, PhaseTimer* timer) {
  if (lda < std::max<std::int64_t>(1, m))
    throw std::invalid_argument("lu_gpu_resident_host: lda = " + std::to_string(lda) + " < max(1, m)");
  if (m == 0 || n == 0) return 0;
  if (ws.matrix.size() < static_cast<std::size_t>(ws.ld * n)) ws.matrix = DeviceBuffer<T>(static_cast<std::size_t>(ws.ld * n));
  const DeviceMatrix<T> d{ws.matrix.data(), m, n, ws.ld, false};
  upload_matrix(a, lda, d, static_cast<T*>(nullptr), 0, stream, nullptr);
  const int info = lu_gpu_resident(m, n, ws.matrix.data(), ws.ld, ipiv, ws, stream, timer);
  download_matrix(d, a, lda, static_cast<T*>(nullptr), 0, stream, nullptr);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(stream));
  return info;
}

template class LuResidentWorkspace<float>;
template class LuResidentWorkspace<double>;
template int lu_gpu_resident<float>(std::int64_t, std::int64_t, float*, std::int64_t, int*, LuResidentWorkspace<float>&,
                                    cudaStream_t, PhaseTimer*);
template int lu_gpu_resident<double>(std::int64_t, std::int64_t, double*, std::int64_t, int*,
                                     LuResidentWorkspace<double>&, cudaStream_t, PhaseTimer*);
template int lu_gpu_resident_host<float>(std::int64_t, std::int64_t, float*, std::int64_t, int*,
                                         LuResidentWorkspace<float>&, cudaStream_t, PhaseTimer*);
template int lu_gpu_resident_host<double>(std::int64_t, std::int64_t, double*, std::int64_t, int*,
                                          LuResidentWorkspace<double>&, cudaStream_t, PhaseTimer*);

}  // namespace gpufact::dense
