// volkov08 §4.4's performance estimate for the paper's SGEMM: the instruction mix of the compiled
// main loop (counted in the SASS at build time by scripts/sass_loop_counts.py) at measured
// instruction throughputs. The paper charged 6 cycles per warp for an FMA with a local-memory
// operand, 2 for half-width and 4 for other instructions, on one issue port. On sm_90 FFMA takes
// no shared-memory operand, so the loop has an LDS beside each such FMA; the estimate charges
//   min(FFMA, LDS) FMA+LDS pairs at the rate volkov08.smem's kernel measures for exactly that pair
//     (one LDS per FFMA, conflict-free), in this run,
//   the remaining FFMA at the FP32 FMA peak (lanes × SMs × measured clock),
//   every other instruction (and LDS beyond the pairs) at the issue rate: 4 warp-instructions per
//     SM per cycle at the measured clock,
// and adds the times, as the paper did.
#pragma once

#include <map>
#include <string>

namespace gpufact::factorizations {

struct LoopMix {
  int total = 0;                // instructions in the loop (its backward branch included)
  int ffma = 0;
  int ffma_shared_operand = 0;  // FFMA reading shared memory directly (G80 could; sm_90 cannot)
  int lds = 0;
  int other = 0;
};

struct SassLoops {
  bool available = false;
  std::string reason;  // why not, when not
  std::string source;
  std::map<std::string, LoopMix> loops;  // "nn/paper", "nt/no_prefetch", ...
};

// Throws std::runtime_error for JSON that is not what the script writes.
SassLoops parse_sass_loops(const std::string& json_text);
// The counts embedded at build time, or, when the build had no cuobjdump, read from this
// binary's SASS at run time if the machine has cuobjdump and python3 (else unavailable, with why).
const SassLoops& sgemm_volkov_sass_loops();

struct ThroughputInputs {
  double smem_fma_gflops = 0;  // FMA with a shared-memory operand (FFMA + LDS), 2 flops per FMA
  double fma_peak_gflops = 0;  // FP32 FMA peak at the measured clock
  double issue_ginstr = 0;     // thread-instructions per ns the SMs can issue: SMs × 128 × GHz
};

// Estimated GFLOP/s of a loop (2 flops per FFMA); 0 when an input is missing.
double estimate_gflops(const LoopMix& loop, const ThroughputInputs& rates);

}  // namespace gpufact::factorizations
