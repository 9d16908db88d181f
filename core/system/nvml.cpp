#include "core/system/nvml.hpp"

#include <cuda_runtime_api.h>

#include <dlfcn.h>

#include <mutex>

namespace gpufact {

// The few NVML entry points gpufact uses, declared from the documented C API.
struct Nvml::Api {
  using Ret = int;  // nvmlReturn_t; 0 is NVML_SUCCESS
  using Device = void*;
  Ret (*init)() = nullptr;
  Ret (*shutdown)() = nullptr;
  const char* (*error_string)(Ret) = nullptr;
  Ret (*driver_version)(char*, unsigned) = nullptr;
  Ret (*by_pci_bus_id)(const char*, Device*) = nullptr;
  Ret (*power_usage)(Device, unsigned*) = nullptr;
  Ret (*power_limit)(Device, unsigned*) = nullptr;
  Ret (*temperature)(Device, int, unsigned*) = nullptr;
  Ret (*clock_info)(Device, int, unsigned*) = nullptr;
  Ret (*max_clock_info)(Device, int, unsigned*) = nullptr;
  Ret (*pcie_gen)(Device, unsigned*) = nullptr;
  Ret (*pcie_width)(Device, unsigned*) = nullptr;
  Ret (*pcie_max_gen)(Device, unsigned*) = nullptr;
  Ret (*pcie_max_width)(Device, unsigned*) = nullptr;
  Ret (*throttle_reasons)(Device, unsigned long long*) = nullptr;
};

namespace {
constexpr int kTemperatureGpu = 0;
constexpr int kClockSm = 1;
constexpr int kClockMem = 2;

template <class F>
bool load(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}
}  // namespace

Nvml& Nvml::instance() {
  static Nvml nvml;
  return nvml;
}

Nvml::Nvml() {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    reason_ = "libnvidia-ml.so.1 not found (no NVIDIA driver on this machine)";
    return;
  }
  api_ = new Api;
  bool ok = load(lib_, "nvmlInit_v2", api_->init) && load(lib_, "nvmlShutdown", api_->shutdown) &&
            load(lib_, "nvmlErrorString", api_->error_string) &&
            load(lib_, "nvmlSystemGetDriverVersion", api_->driver_version) &&
            load(lib_, "nvmlDeviceGetHandleByPciBusId_v2", api_->by_pci_bus_id) &&
            load(lib_, "nvmlDeviceGetPowerUsage", api_->power_usage) &&
            load(lib_, "nvmlDeviceGetTemperature", api_->temperature) &&
            load(lib_, "nvmlDeviceGetClockInfo", api_->clock_info) &&
            load(lib_, "nvmlDeviceGetMaxClockInfo", api_->max_clock_info) &&
            load(lib_, "nvmlDeviceGetCurrPcieLinkGeneration", api_->pcie_gen) &&
            load(lib_, "nvmlDeviceGetCurrPcieLinkWidth", api_->pcie_width) &&
            load(lib_, "nvmlDeviceGetMaxPcieLinkGeneration", api_->pcie_max_gen) &&
            load(lib_, "nvmlDeviceGetMaxPcieLinkWidth", api_->pcie_max_width);
  if (!ok) {
    reason_ = "libnvidia-ml.so.1 lacks an entry point gpufact needs";
    return;
  }
  load(lib_, "nvmlDeviceGetEnforcedPowerLimit", api_->power_limit);
  if (!load(lib_, "nvmlDeviceGetCurrentClocksEventReasons", api_->throttle_reasons))
    load(lib_, "nvmlDeviceGetCurrentClocksThrottleReasons", api_->throttle_reasons);
  const int rc = api_->init();
  if (rc != 0) {
    reason_ = std::string("nvmlInit failed: ") + api_->error_string(rc);
    return;
  }
  available_ = true;
}

Nvml::~Nvml() {
  if (available_) api_->shutdown();
  delete api_;
  if (lib_) dlclose(lib_);
}

void* Nvml::handle_for(int cuda_device) const {
  if (!available_) return nullptr;
  char bus_id[64] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_device) != cudaSuccess) return nullptr;
  void* dev = nullptr;
  if (api_->by_pci_bus_id(bus_id, &dev) != 0) return nullptr;
  return dev;
}

std::optional<NvmlReading> Nvml::read(int cuda_device) const {
  void* dev = handle_for(cuda_device);
  if (!dev) return std::nullopt;
  NvmlReading r;
  unsigned v = 0;
  if (api_->power_usage(dev, &v) == 0) r.power_w = v * 1e-3;
  if (api_->temperature(dev, kTemperatureGpu, &v) == 0) r.temperature_c = v;
  if (api_->clock_info(dev, kClockSm, &v) == 0) r.sm_clock_mhz = v;
  if (api_->clock_info(dev, kClockMem, &v) == 0) r.mem_clock_mhz = v;
  if (api_->throttle_reasons) api_->throttle_reasons(dev, &r.throttle_reasons);
  return r;
}

nlohmann::json Nvml::device_info(int cuda_device) const {
  nlohmann::json j = nlohmann::json::object();
  void* dev = handle_for(cuda_device);
  if (!dev) {
    j["available"] = false;
    j["reason"] = available_ ? "NVML has no device at this PCI bus id" : reason_;
    return j;
  }
  j["available"] = true;
  unsigned v = 0;
  nlohmann::json pcie = nlohmann::json::object();
  if (api_->pcie_gen(dev, &v) == 0) pcie["generation"] = v;
  if (api_->pcie_width(dev, &v) == 0) pcie["width"] = v;
  if (api_->pcie_max_gen(dev, &v) == 0) pcie["max_generation"] = v;
  if (api_->pcie_max_width(dev, &v) == 0) pcie["max_width"] = v;
  j["pcie"] = pcie;
  if (api_->max_clock_info(dev, kClockSm, &v) == 0) j["sm_clock_max_mhz"] = v;
  if (api_->max_clock_info(dev, kClockMem, &v) == 0) j["mem_clock_max_mhz"] = v;
  if (api_->power_limit && api_->power_limit(dev, &v) == 0) j["power_limit_w"] = v * 1e-3;
  if (auto r = read(cuda_device)) {
    j["now"] = {{"power_w", r->power_w},
                {"temperature_c", r->temperature_c},
                {"sm_clock_mhz", r->sm_clock_mhz},
                {"mem_clock_mhz", r->mem_clock_mhz},
                {"clock_event_reasons", r->throttle_reasons}};
  }
  return j;
}

std::string Nvml::driver_version() const {
  if (!available_) return {};
  char buf[96] = {};
  if (api_->driver_version(buf, sizeof buf) != 0) return {};
  return buf;
}

}  // namespace gpufact
