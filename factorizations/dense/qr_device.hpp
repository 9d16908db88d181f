// The blocked Householder QR on the GPU, two ways (issue 5), both with look-ahead on the two
// streams of lookahead.hpp and the trailing update C ← (I − V T Vᵀ)ᵀ C as three GEMMs (W = VᵀC,
// W = TᵀW, C −= VW) on a copy of V with zeros above and ones on the diagonal (volkov08 §5: plain
// GEMMs, no triangular kernels), through the update-GEMM table (cublas | simt):
//   qr_hybrid        volkov08 §5: each panel factored on the CPU (OpenBLAS geqrf + larft, all
//                    threads), V and T sent to the GPU; the next panel's columns updated first and
//                    sent down, so the CPU factors it while the GPU updates the rest.
//   qr_gpu_resident  the panel on the GPU too: cusolverDnXgeqrf on the m × nb panel (or the
//                    cluster kernel's leaves, QrOptions::panel), T from the Gram matrix VᵀV (one
//                    GEMM) and larft's recurrence (one small kernel).
// Explicit Q (orgqr semantics) applies the blocks in reverse to the identity, on the GPU, with the
// T factors the factorization kept in the workspace. Panel widths per stage: QrOptions::widths
// (qr_block_plan.hpp, the paper's dynamic programming) or a uniform nb.
#pragma once

#include "core/cuda/buffer.hpp"
#include "core/cuda/handles.hpp"
#include "core/linalg/device_blas.hpp"
#include "factorizations/dense/lookahead.hpp"
#include "factorizations/dense/phase_timer.hpp"
#include "factorizations/dense/qr_block_plan.hpp"
#include "factorizations/dense/update_gemm.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpufact::dense {

// How the GPU-resident QR factors a panel: one cusolverDnXgeqrf, or leaves held on chip by one
// thread block cluster (kernels/qr/panel_cluster.cuh: the widest of 64, 32 or 16 columns its
// registers hold for the panel's rows), each leaf's reflectors applied to the rest of the panel as
// one block (the panel halved recursively); panels no register class holds fall back to cuSOLVER.
enum class QrPanel { cusolver, cooperative };
std::string qr_panel_name(QrPanel p);
QrPanel qr_panel_from(const std::string& name);  // throws std::invalid_argument naming the choices
// The uniform panel width the cooperative panel runs at by default for an n-column matrix.
std::int64_t cooperative_qr_nb(std::int64_t n);

struct QrOptions {
  std::int64_t nb = 128;             // uniform panel width when `widths` is empty
  std::vector<std::int64_t> widths;  // the per-stage plan (sums to n); overrides nb
  bool lookahead = true;
  UpdateGemm gemm = UpdateGemm::cublas;
  int cpu_threads = 0;  // hybrid: OpenBLAS threads of the CPU panel (0: leave the caller's setting)
  QrPanel panel = QrPanel::cusolver;  // GPU-resident only
  int panel_sms = 0;  // GPU-resident: SMs kept off the update stream (lookahead.hpp; 0: none)
  // GPU-resident: qr_gpu_resident and qr_form_q_device only enqueue on the caller's stream (no
  // NaN/Inf check of the input, which the caller then owns, and no synchronization), so a caller
  // can capture both into one CUDA graph.
  bool stream_ordered = false;
};
std::string describe(const QrOptions& o);  // "nb=128 lookahead cublas" or "plan(64 stages, 96..256) ..."
// The plan the options give for min(m, n) = n columns; throws std::invalid_argument on a bad one.
std::vector<std::int64_t> qr_widths(const QrOptions& o, std::int64_t n);

enum class QrVariant { hybrid, gpu_resident };

// Device and pinned scratch for one (m, n, options, variant), allocated once so timed calls never
// allocate (the cuSOLVER workspace is sized in the constructor). Device bytes: qr_device_bytes().
template <class T>
class QrWorkspace {
 public:
  QrWorkspace(std::int64_t m, std::int64_t n, const QrOptions& o, QrVariant variant);
  std::int64_t m, n, widest;
  QrOptions options;
  QrVariant variant;
  std::vector<QrStep> steps;
  DeviceBuffer<T> matrix;      // hybrid: the device copy; GPU-resident: for calls from host memory
  DeviceBuffer<T> reflectors;  // three slots of m × 2·widest: zero-filled V of panels i .. i + 2
                               // (and the next panel's columns beside V while T is formed)
  DeviceBuffer<T> t_factors;   // widest × n (ld widest): T of the panel starting at column j, at column j
  DeviceBuffer<T> gram;        // widest × 2·widest: Vᵀ[V C] of the GPU-resident panel
  DeviceBuffer<T> tau;         // n: GPU-resident calls from host memory
  DeviceBuffer<T> panel_work, update_work;  // 2 · widest · n each: W = VᵀC and TᵀW per stream
  DeviceBuffer<unsigned long long> first_nonfinite;
  PinnedBuffer<unsigned long long> host_first_nonfinite;
  PinnedBuffer<T> host_t;  // hybrid: T of the current panel (widest × widest)
  LookaheadStreams streams;
  CublasHandle panel_blas, update_blas;
  CusolverHandle solver;  // on the panel stream
  dev::SolverWorkspace solver_ws;
};

std::size_t qr_device_bytes(std::int64_t m, std::int64_t n, const QrOptions& o, QrVariant variant,
                            std::size_t element_bytes);

// LAPACK geqrf semantics on `a`: column-major m × n (m >= n) in pinned host memory (lda >= max(1,
// m)), overwritten by R and the Householder vectors; tau (host, n). Returns when the result is in
// `a`; the device copy (ws.matrix) then holds the same factors for qr_hybrid_form_q. Throws
// std::invalid_argument on bad sizes or NaN/Inf in `a`.
template <class T>
void qr_hybrid(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* tau, QrWorkspace<T>& ws, cudaStream_t stream,
               PhaseTimer* timer = nullptr);
// Explicit Q (m × n) of the last qr_hybrid call on `ws` into pinned host memory q (ldq >= m),
// formed on the GPU (the device copy is overwritten by Q).
template <class T>
void qr_hybrid_form_q(T* q, std::int64_t ldq, QrWorkspace<T>& ws, cudaStream_t stream);

// geqrf semantics on the device matrix d_a (ldda >= max(1, m)) with tau on the device (n).
// Returns when done (enqueued, with QrOptions::stream_ordered). Throws std::invalid_argument on
// bad sizes or NaN/Inf in the input (not checked with stream_ordered).
template <class T>
void qr_gpu_resident(std::int64_t m, std::int64_t n, T* d_a, std::int64_t ldda, T* d_tau, QrWorkspace<T>& ws,
                     cudaStream_t stream, PhaseTimer* timer = nullptr);
// The same from pinned host memory (a, tau): upload into ws.matrix, factor, download, all timed.
template <class T>
void qr_gpu_resident_host(std::int64_t m, std::int64_t n, T* a, std::int64_t lda, T* tau, QrWorkspace<T>& ws,
                          cudaStream_t stream, PhaseTimer* timer = nullptr);

// orgqr semantics on the device: d_a (m × n, ldda) holds the factors of the last factorization on
// `ws` (either variant: the T factors are in ws.t_factors) and is overwritten by Q. Returns when
// done (enqueued, with QrOptions::stream_ordered).
template <class T>
void qr_form_q_device(T* d_a, std::int64_t ldda, QrWorkspace<T>& ws, cudaStream_t stream);

// LAPACK's geqrf flop count for m >= n: 2mn² − 2n³/3 (4n³/3 square).
double qr_flops(std::int64_t m, std::int64_t n);

}  // namespace gpufact::dense
