// volkov08.pipeline (volkov08 §3.3, end): a ← a·b + c in one thread, each step depending on the
// last, timed with clock64 around a long unrolled chain: cycles per dependent FMA, the pipeline
// latency that enough warps or independent chains must hide (24 cycles on the 8800GTX, 26 with
// b in shared memory). Reported in cycles (median over kernel launches, with spread) and in ns
// at the SM clock measured around them.
#include "microbench/pipeline/pipeline.hpp"

#include "core/bench/case.hpp"
#include "core/bench/registry.hpp"
#include "core/cuda/buffer.hpp"
#include "kernels/compute/fma_chains.cuh"
#include "microbench/peak/fma_reference.hpp"
#include "microbench/sampled_metric.hpp"

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace gpufact::microbench {
namespace {

constexpr int kIterations = 64;  // 64 × 256 = 16384 dependent FMAs per timed pass
constexpr float kA0 = 1.0f;
constexpr float kB = 1.0f - 0x1.0p-20f;
constexpr float kC = 0x1.0p-6f;

kernels::FmaLatencyOperand operand_from(const std::string& s) {
  if (s == "register") return kernels::FmaLatencyOperand::registers;
  if (s == "shared") return kernels::FmaLatencyOperand::shared;
  return kernels::FmaLatencyOperand::shared_dependent;
}

void run_pipeline(Case& c) {
  const std::string& operand = c.text("operand");
  cudaStream_t s = c.stream();
  DeviceBuffer<float> out(1);
  DeviceBuffer<long long> cycles(1);
  const long steps = static_cast<long>(kIterations) * kernels::kFmaLatencyUnroll;
  const float expected = fma_chain_expected(kA0, kB, kC, 2 * steps);
  const int launches = std::max(3, c.session().options().repetitions);

  // One untimed launch loads the module and warms the SM clock.
  kernels::launch_fma_latency(operand_from(operand), kIterations, kA0, kB, kC, out.data(), cycles.data(), s);
  GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
  const double mhz_before = c.session().probe_sm_clock_mhz(s);
  std::vector<double> per_fma;
  double wrong = 0;
  for (int i = 0; i < launches; ++i) {
    GPUFACT_CUDA_CHECK(cudaMemsetAsync(out.data(), 0xff, sizeof(float), s));
    kernels::launch_fma_latency(operand_from(operand), kIterations, kA0, kB, kC, out.data(), cycles.data(), s);
    float a = 0;
    long long n = 0;
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&a, out.data(), sizeof a, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaMemcpyAsync(&n, cycles.data(), sizeof n, cudaMemcpyDeviceToHost, s));
    GPUFACT_CUDA_CHECK(cudaStreamSynchronize(s));
    wrong += std::memcmp(&a, &expected, sizeof a) != 0;
    per_fma.push_back(static_cast<double>(n) / static_cast<double>(steps));
  }
  const double mhz = 0.5 * (mhz_before + c.session().probe_sm_clock_mhz(s));
  c.verify("launches whose chain result differs from the host replay (exact)", wrong, 0);

  Metric cyc{.tag = "latency/cycles", .name = "cycles per dependent FMA", .unit = "cycles", .headline = true};
  if (operand == "register") cyc.published = Published{24.0, "volkov08 §3.3 (8800GTX, all registers)"};
  if (operand == "shared") cyc.published = Published{26.0, "volkov08 §3.3 (8800GTX, b in local memory)"};
  c.add_metric(with_samples(cyc, per_fma));
  std::vector<double> ns;
  for (double x : per_fma) ns.push_back(x / mhz * 1e3);
  c.add_metric(with_samples({.tag = "latency/ns", .name = "ns per dependent FMA", .unit = "ns"}, ns));
  c.add_metric({.tag = "latency/sm_clock",
                .name = "SM clock (probe, around the launches)",
                .unit = "MHz",
                .value = mhz,
                .higher_is_better = true,
                .role = MetricRole::environment});
  c.result().data["dependent_fmas_per_launch"] = steps;
}

}  // namespace

void register_pipeline(Registry& registry) {
  Experiment e;
  e.key = "volkov08.pipeline";
  e.artifact = "volkov08.pipeline";
  e.title = "Dependent FP32 FMA latency: all registers, b from shared memory, b from an address computed from a";
  e.axes = {{.name = "operand",
             .kind = AxisKind::text,
             .help = "register: a←a·b+c; shared: b loaded from shared memory each step (address fixed, the load "
                     "may run ahead); shared_dependent: b loaded at an address computed from a (load on the chain)",
             .defaults = "register,shared,shared_dependent",
             .choices = {"register", "shared", "shared_dependent"}}};
  e.needs.gpus = 1;
  e.run = run_pipeline;
  registry.add(std::move(e));
}

}  // namespace gpufact::microbench
