// The QR methods the anderson10 experiments compare (§V.A): one small table, each entry a name,
// what it needs, a prepare step (workspace, untimed) and a run step that turns A into an explicit
// Q (m × n) and R (n × n, zeros below the diagonal). A new method is one more table entry.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpufact::factorizations {

// Where a method's A, Q and R live: device methods take device pointers and enqueue on the
// stream; host methods take host pointers and run on the calling thread (host timer).
enum class QrMemory { device, host };

struct QrNeeds {
  bool gpu = true;
  QrMemory memory = QrMemory::device;
};

// Time of one phase of a run (CUDA events around its kernels) and the kernels it launched.
struct QrPhaseTime {
  std::string phase;  // "factor", "factor_tree", "apply_qt_tree", "apply_qt_h", "copy", ...
  int level = 0;      // tree level (0: first-level blocks or not a tree phase)
  double seconds = 0;
  int launches = 0;
};

template <class T>
class QrPlan {
 public:
  virtual ~QrPlan() = default;
  // Contract: a (m × n, lda >= m) is only read; q (m × n, ldq >= m) receives Q with orthonormal
  // columns, r (n × n, ldr >= n) receives R, upper triangular with zeros below, A = QR. The plan's
  // m and n fix the shape. Device methods enqueue on `stream` (which may be held by a blocking
  // kernel unless the method synchronizes); host methods ignore it.
  virtual void run(const T* a, std::int64_t lda, T* q, std::int64_t ldq, T* r, std::int64_t ldr,
                   cudaStream_t stream) = 0;
  // Blocks until the last run finished and returns why it failed numerically (a result, e.g. a
  // Cholesky breakdown), or an empty string; methods that cannot break down only synchronize.
  virtual std::string failure(cudaStream_t stream);
  // One extra, untimed run (same contract as run) with CUDA events around each phase, for
  // methods that have phases to show; empty for the others. Synchronizes `stream`.
  virtual std::vector<QrPhaseTime> phase_breakdown(const T*, std::int64_t, T*, std::int64_t, T*, std::int64_t,
                                                   cudaStream_t) {
    return {};
  }
};

template <class T>
struct QrMethod {
  std::string name;   // the `method` axis value: "cusolver"
  std::string label;  // display name
  QrNeeds needs;
  bool synchronizes = false;  // run waits for the host (library calls): time it as issued
  // Device memory the plan allocates beyond A, Q and R (an estimate for require_device_memory).
  std::function<std::size_t(std::int64_t m, std::int64_t n)> workspace_bytes;
  std::function<std::unique_ptr<QrPlan<T>>(std::int64_t m, std::int64_t n)> prepare;
  std::int64_t max_width = 0;  // widest n the method factors (0: any)
  // Why the method does not run at m × n (empty: it does); asked only where a GPU is present.
  std::function<std::string(std::int64_t m, std::int64_t n)> unsupported;
  // Methods with a panel width: the plan at width nb >= 1 (the `nb` axis; prepare picks its own).
  std::function<std::unique_ptr<QrPlan<T>>(std::int64_t m, std::int64_t n, std::int64_t nb)> prepare_nb;
};

// The table, in display order.
template <class T>
const std::vector<QrMethod<T>>& qr_methods();
// Throws std::invalid_argument for an unknown name.
template <class T>
const QrMethod<T>& qr_method(std::string_view name);
// The names, for the `method` axis choices.
std::vector<std::string> qr_method_names();

// Flops credited to every method: LAPACK geqrf + orgqr of an m × n matrix, 2mn² − 2n³/3 each
// (anderson10 §V.C counts "SGEQRF + SORGQR").
double qr_explicit_flops(std::int64_t m, std::int64_t n);

// What R + explicit Q of an m × n matrix cannot beat on a GPU: qr_explicit_flops at the FMA peak,
// and the DRAM traffic no method avoids (A read once, Q and R written once; `word` bytes an entry)
// at the datasheet bandwidth. The longer of the two is the roofline time.
struct QrRoofline {
  double flop_seconds = 0;
  double dram_seconds = 0;
  double seconds() const { return flop_seconds > dram_seconds ? flop_seconds : dram_seconds; }
};
QrRoofline qr_explicit_roofline(std::int64_t m, std::int64_t n, int word, double peak_gflops, double dram_gbs);

}  // namespace gpufact::factorizations
