// CAQR entirely on the GPU (anderson10 §IV): TSQR panels (factor, factor_tree), trailing updates
// (apply_qt_h, apply_qt_tree), the grid redrawn each panel, and the explicit Q by applying the
// stored representation to the identity in reverse order. A matrix no wider than the block is
// one panel: that is the paper's TSQR. The host reference beside it is caqr_host.hpp.
//
// Contract: A is m × n column-major on the device, m ≥ n ≥ 1, lda ≥ m. caqr_factor overwrites A
// with R (on and above the diagonal of A's top n × n) and the Householder vectors in the tree
// layout of caqr_schedule.hpp; the taus stay in the plan (plan.tau(), device memory, the layout
// of the schedule). All workspace is allocated when the plan is made; the calls never allocate
// (except the first call with use_graph for new pointers, which captures and instantiates a graph).
// Failures throw: std::invalid_argument for bad shapes, a block shape the kernels cannot run, or
// NaN/Inf in A (check_finite); CudaError for CUDA failures.
#pragma once

#include "core/cuda/graph.hpp"
#include "core/cuda/stream.hpp"
#include "core/cuda/buffer.hpp"
#include "factorizations/caqr/caqr_schedule.hpp"
#include "kernels/qr/caqr_kernels.cuh"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gpufact::factorizations {

using kernels::QtReduction;

// "smem_parallel", "register_serial", "smem_combined", "register_serial_transposed".
QtReduction qt_reduction_from(const std::string& name);
std::vector<std::string> qt_reduction_names();

// Which factor / factor_tree / apply_qt_h kernels the plan runs: the columnwise ones (one
// reflector at a time, the paper's) or the blocked compact-WY ones (caqr_kernels.cuh); the
// representation is the same, so apply_qt_tree serves both. "columnwise", "blocked".
enum class CaqrKernels { columnwise, blocked };
CaqrKernels caqr_kernels_from(const std::string& name);
const char* to_string(CaqrKernels k);

struct CaqrOptions {
  CaqrBlockShape shape{64, 16};
  QtReduction reduction = QtReduction::register_serial;
  bool check_finite = true;  // count NaN/Inf before factoring (one small kernel and a host sync)
  bool use_graph = false;    // capture each call's launches once per set of pointers and replay the graph
  CaqrKernels kernels = CaqrKernels::columnwise;
  // Called before each kernel of a call (one launch each) with its phase ("factor",
  // "factor_tree", "apply_qt_h", "apply_qt_tree", "transpose", "identity") and tree level (0 for
  // the first-level blocks, ℓ ≥ 1 for tree level ℓ), and with "end" after the last one: fig7 and
  // fig9 record events there to split the time. Not used while capturing a graph.
  std::function<void(const char* phase, int level)> on_phase;
};

template <class T>
class CaqrPlan {
 public:
  CaqrPlan(std::int64_t m, std::int64_t n, CaqrOptions options);
  CaqrPlan(CaqrPlan&&) = default;
  CaqrPlan& operator=(CaqrPlan&&) = default;

  const CaqrSchedule& schedule() const { return schedule_; }
  const CaqrOptions& options() const { return options_; }
  CaqrOptions& options() { return options_; }
  std::int64_t m() const { return schedule_.m; }
  std::int64_t n() const { return schedule_.n; }
  T* tau() { return tau_.data(); }
  const T* tau() const { return tau_.data(); }
  // Device bytes a plan of this shape allocates (for Case::require_device_memory).
  static std::size_t workspace_bytes(std::int64_t m, std::int64_t n, const CaqrOptions& options);

 private:
  template <class U>
  friend void caqr_factor(CaqrPlan<U>&, U*, std::int64_t, cudaStream_t);
  template <class U>
  friend void caqr_form_q(const CaqrPlan<U>&, const U*, std::int64_t, U*, std::int64_t, cudaStream_t);
  template <class U>
  friend void caqr_check_finite(const CaqrPlan<U>&, const U*, std::int64_t, cudaStream_t);

  void enqueue_factor(T* a, std::int64_t lda, cudaStream_t s);
  void enqueue_form_q(const T* a, std::int64_t lda, T* q, std::int64_t ldq, cudaStream_t s) const;
  void enqueue_apply_h(const CaqrPanel& p, const T* panel, std::int64_t lda, T* c, std::int64_t ldc,
                       std::int64_t cols, bool transpose, QtReduction r, cudaStream_t s) const;
  void phase(const char* name, bool capturing, int level = 0) const;

  CaqrSchedule schedule_;
  CaqrOptions options_;
  DeviceBuffer<T> tau_;
  mutable DeviceBuffer<T> tiles_;  // register_serial_transposed: the trailing matrix in tile layout
  mutable DeviceBuffer<unsigned long long> nonfinite_;
  mutable PinnedBuffer<unsigned long long> nonfinite_host_;
  Stream capture_stream_;
  struct Cached {
    const void* a = nullptr;
    const void* q = nullptr;
    std::int64_t lda = 0, ldq = 0;
    CapturedGraph graph;
  };
  mutable Cached factor_graph_, form_q_graph_;
  mutable bool capturing_ = false;
};

// Factors A in place (see the contract above). Checks A for NaN/Inf first when options().check_finite.
template <class T>
void caqr_factor(CaqrPlan<T>& plan, T* a, std::int64_t lda, cudaStream_t stream);

// Q (m × n, ldq ≥ m, not aliasing A) ← the first n columns of the orthogonal factor of the last
// caqr_factor of A with this plan (orgqr semantics).
template <class T>
void caqr_form_q(const CaqrPlan<T>& plan, const T* a, std::int64_t lda, T* q, std::int64_t ldq, cudaStream_t stream);

// R (n × n, ldr ≥ n) ← the upper triangle of the factored A, zeros below.
template <class T>
void caqr_copy_r(const CaqrPlan<T>& plan, const T* a, std::int64_t lda, T* r, std::int64_t ldr, cudaStream_t stream);

// Throws std::invalid_argument naming the count when A holds NaN or Inf (synchronizes `stream`).
template <class T>
void caqr_check_finite(const CaqrPlan<T>& plan, const T* a, std::int64_t lda, cudaStream_t stream);

// The plan's taus on the host (synchronizes `stream`): with the factored A copied to the host,
// caqr_lapack_reflectors (caqr_host.hpp) gives the representation in LAPACK layout.
template <class T>
std::vector<T> caqr_download_tau(const CaqrPlan<T>& plan, cudaStream_t stream);

}  // namespace gpufact::factorizations
