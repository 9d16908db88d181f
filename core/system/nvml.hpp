// NVML loaded at run time from the driver's libnvidia-ml.so.1 (the toolkit here ships no nvml.h
// or stub). Without it every query says "not available" and nothing else changes.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace gpufact {

struct NvmlReading {
  double power_w = 0;
  double temperature_c = 0;
  double sm_clock_mhz = 0;
  double mem_clock_mhz = 0;
  unsigned long long throttle_reasons = 0;  // nvmlClocksEventReason bit mask
};

class Nvml {
 public:
  static Nvml& instance();  // loads and initializes on first use; thread-safe
  bool available() const { return available_; }
  const std::string& unavailable_reason() const { return reason_; }

  // Instantaneous readings of the GPU that CUDA calls `cuda_device`; nullopt when unavailable.
  std::optional<NvmlReading> read(int cuda_device) const;
  // Static facts: PCIe link (current and max generation and width), max clocks, power limit.
  nlohmann::json device_info(int cuda_device) const;
  std::string driver_version() const;

  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

 private:
  Nvml();
  void* handle_for(int cuda_device) const;
  struct Api;
  Api* api_ = nullptr;
  void* lib_ = nullptr;
  bool available_ = false;
  std::string reason_;
};

}  // namespace gpufact
