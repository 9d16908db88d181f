#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpufact {
class Case;
class Registry;
namespace microbench {
// volkov08.smem (§3.5): FMA with a shared-memory operand; bank conflicts vs stride; bank layout inferred.
void register_smem(Registry& registry);

// volkov08.smem's FMA-with-shared-operand run (32 warps per SM, 4 chains per thread, lanes `stride`
// words apart in a table of b drawn with `table_seed`), measured as "smem_fma" under `label`; every
// thread's result is then checked bit for bit against the host replay (verification named
// `check`). Also the Table 2 "peak" column (volkov08 §4.4). Returns false when a
// --benchmark_filter excluded it. `block_sms`, when given, receives each block's SM.
bool run_shared_operand_fma(Case& c, int stride, std::uint32_t table_seed, const std::string& label,
                            const std::string& check, std::vector<unsigned>* block_sms = nullptr);
}  // namespace microbench
}  // namespace gpufact
