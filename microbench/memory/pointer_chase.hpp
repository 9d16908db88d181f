// Runs pointer chases for volkov08.fig1 and volkov08.fig2 (volkov08 §3.3): builds the cycle in
// one device allocation (reused across sizes of a sweep), checks it, times it, traces it.
#pragma once

#include "core/bench/sample_median.hpp"

#include "core/cuda/buffer.hpp"
#include "kernels/memory/pointer_chase.cuh"
#include "microbench/memory/chase_cycle.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gpufact::microbench {

struct ChaseSpec {
  std::size_t bytes = 0;         // array bytes (per block)
  std::size_t stride_bytes = 0;  // multiple of the element size
  kernels::ChaseAccess access = kernels::ChaseAccess::global_ca;
  kernels::ChaseWidth width = kernels::ChaseWidth::u32;
  bool random = false;
  std::uint64_t seed = 0;
  int blocks = 1;             // > 1: one block per SM, each on a private array
  int carveout_percent = -1;  // preferred shared-memory carveout; -1: the driver's default
};

kernels::ChaseAccess chase_access_from(const std::string& s);  // "ca", "cg", "shared"
kernels::ChaseWidth chase_width_from(const std::string& s);    // "u32", "u64"
std::string to_string(kernels::ChaseAccess a);

struct ChasePoint {
  double cycles = 0;                  // cycles per access: median over repetitions (and SMs)
  std::vector<double> samples;        // per repetition (multi-SM: median over the SMs)
  std::vector<double> per_sm;         // multi-SM: each block's median over repetitions
  std::vector<unsigned> smids;        // multi-SM: the SM each block ran on (last repetition)
  double max_over_sms = 0;            // multi-SM: the slowest SM
  int distinct_sms = 0;
  long long warm_steps = 0, timed_steps = 0;
  std::uint64_t mismatches = 0;       // cycle checks failed + chases that ended at the wrong index
  std::string mismatch_detail;        // what failed, when something did
};

struct ChaseTrace {
  std::vector<std::uint32_t> latency;  // cycles per access, in walk order
  std::vector<std::uint64_t> index;    // index each access returned
  std::uint64_t mismatches = 0;        // indices that differ from the host's cycle
  bool ran = true;                     // trace_two_sms: both named SMs ran (false: no trace taken)
};

class ChaseBench {
 public:
  // Allocates room for `capacity_bytes` per block (rounded to whole 2 MiB regions when blocks > 1).
  ChaseBench(std::size_t capacity_bytes, int blocks, cudaStream_t stream);

  // Builds the cycle for `spec` (bytes <= capacity) in every block's array and checks it on
  // the device: a walk of the whole cycle when that is cheap (it must return to the start after
  // exactly the cycle length, with the expected index sum), otherwise a walk of a prefix against
  // the host's sums plus a parallel check of every element. Returns the mismatches found.
  std::uint64_t prepare(const ChaseSpec& spec, double walk_budget_cycles = 64e6);
  const ChaseCycle& cycle() const { return cycle_; }
  const ChaseSpec& spec() const { return spec_; }
  const std::string& check_detail() const { return detail_; }

  // `repetitions` launches (each: touch the array into L2 for global accesses, warm up, time).
  ChasePoint measure(int repetitions, double budget_cycles = 40e6, long long min_steps = 8192);
  // Per-access latencies of `length` accesses after `warm_steps` untimed ones (0: a cold
  // start; flush the L2 first for a cold array).
  ChaseTrace trace(int length, long long warm_steps, bool touch_first);
  // `length` accesses traced on SM `trace_sm` after SM `warm_sm` walked `warm_steps` (L1-bypassing
  // loads; kernels::launch_chase_trace_two_sms). Flush the L2 first so that only the walk placed
  // the lines. ChaseTrace::ran is false (and the trace meaningless) when no block ran on one of
  // the two SMs (an SM id the device does not use); mismatches as trace().
  ChaseTrace trace_two_sms(int warm_sm, int trace_sm, int length, long long warm_steps);

 private:
  ChaseTrace finish_trace(const DeviceBuffer<std::uint32_t>& lat, const DeviceBuffer<unsigned long long>& idx,
                          long long warm_steps);
  kernels::ChaseLaunch launch_params(long long warm, long long timed) const;
  kernels::ChaseLaunch trace_params(long long warm_steps) const;  // one block; throws before prepare
  std::size_t region_bytes_ = 0;
  int blocks_ = 1;
  cudaStream_t stream_ = nullptr;
  DeviceBuffer<unsigned char> array_;
  DeviceBuffer<kernels::ChaseSample> samples_;
  DeviceBuffer<kernels::ChaseWalk> walk_;
  DeviceBuffer<unsigned long long> count_;
  DeviceBuffer<unsigned int> sink_;
  ChaseSpec spec_;
  ChaseCycle cycle_;
  std::string detail_;
  bool ready_ = false;
};

// Checks a sweep's axes: stride > 0 and a multiple of the element size, bytes >= one element
// and within 32-bit indices for u32. Throws UsageError naming the axis.
void validate_chase_axes(std::int64_t bytes, std::int64_t stride_bytes, kernels::ChaseWidth width);


}  // namespace gpufact::microbench
