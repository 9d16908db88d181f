// The system inventory behind `gpufact info` and every report's `system` block.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace gpufact {

struct GpuSummary {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::size_t l2_bytes = 0;
  std::size_t memory_bytes = 0;
  std::size_t shared_per_sm_bytes = 0;
  double sm_clock_max_mhz = 0;   // cudaDevAttrClockRate
  double mem_clock_mhz = 0;      // cudaDevAttrMemoryClockRate
  int memory_bus_bits = 0;
  double datasheet_bandwidth_gbs() const { return 2.0 * mem_clock_mhz * 1e6 * memory_bus_bits / 8.0 * 1e-9; }
};

struct SystemInfo {
  nlohmann::json doc;              // the full inventory
  std::vector<GpuSummary> gpus;    // empty when no usable GPU
  std::string gpu_unavailable;     // why, when gpus is empty
};

// Queries CUDA, NVML, /proc and OpenBLAS. Never throws for a missing GPU or driver.
SystemInfo collect_system_info();

nlohmann::json build_info();
nlohmann::json host_info();

}  // namespace gpufact
