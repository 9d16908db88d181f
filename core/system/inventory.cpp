#include "core/system/inventory.hpp"

#include "core/build_info.hpp"
#include "core/linalg/host_blas.hpp"
#include "core/system/nvml.hpp"

#include <cuda_runtime_api.h>
#include <cublas_v2.h>
#include <cusolverDn.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <dlfcn.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace gpufact {
namespace {

std::string read_key(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) == 0) {
      auto pos = line.find_first_of(":=", key.size());
      if (pos == std::string::npos) continue;
      std::string v = line.substr(pos + 1);
      v.erase(0, v.find_first_not_of(" \t\""));
      while (!v.empty() && (v.back() == '"' || v.back() == ' ')) v.pop_back();
      return v;
    }
  }
  return {};
}

int physical_cores() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, physical, core;
  std::set<std::string> cores;
  while (std::getline(in, line)) {
    if (line.rfind("physical id", 0) == 0) physical = line.substr(line.find(':') + 1);
    if (line.rfind("core id", 0) == 0) {
      core = line.substr(line.find(':') + 1);
      cores.insert(physical + "/" + core);
    }
  }
  return static_cast<int>(cores.size());
}

int attribute(cudaDeviceAttr attr, int dev) {
  int v = 0;
  if (cudaDeviceGetAttribute(&v, attr, dev) != cudaSuccess) return 0;
  return v;
}

}  // namespace

nlohmann::json build_info() {
  return {{"version", GPUFACT_VERSION},
          {"git_sha", build::git_sha},
          {"git_dirty", build::git_dirty},
          {"build_type", build::build_type},
          {"cuda_architectures", build::cuda_architectures},
          {"cxx_compiler", build::cxx_compiler},
          {"cuda_compiler", build::cuda_compiler},
          {"cuda_toolkit", std::to_string(CUDART_VERSION / 1000) + "." + std::to_string(CUDART_VERSION % 1000 / 10)}};
}

nlohmann::json host_info() {
  nlohmann::json h;
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  h["hostname"] = name;
  utsname u{};
  if (uname(&u) == 0) h["kernel"] = std::string(u.sysname) + " " + u.release + " " + u.machine;
  h["os"] = read_key("/etc/os-release", "PRETTY_NAME");
  h["cpu_model"] = read_key("/proc/cpuinfo", "model name");
  h["logical_cpus"] = std::thread::hardware_concurrency();
  h["physical_cores"] = physical_cores();
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  h["memory_bytes"] = static_cast<double>(pages) * static_cast<double>(page);
  const auto blas = host::blas_info();
  h["blas"] = {{"library", blas.library}, {"config", blas.config}, {"core", blas.core}, {"core_source", blas.core_source},
               {"threads", blas.threads}, {"parallel", blas.parallel}};
  return h;
}

SystemInfo collect_system_info() {
  SystemInfo info;
  nlohmann::json cuda;
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cuda["runtime_version"] = std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
    cuda["driver_api_version"] = std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10);
  int cublas_version = 0;
  cublasGetProperty(MAJOR_VERSION, &cublas_version);
  int minor = 0, patch = 0;
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  cuda["cublas_version"] = std::to_string(cublas_version) + "." + std::to_string(minor) + "." + std::to_string(patch);
  int cs_major = 0, cs_minor = 0, cs_patch = 0;
  cusolverGetProperty(MAJOR_VERSION, &cs_major);
  cusolverGetProperty(MINOR_VERSION, &cs_minor);
  cusolverGetProperty(PATCH_LEVEL, &cs_patch);
  cuda["cusolver_version"] = std::to_string(cs_major) + "." + std::to_string(cs_minor) + "." + std::to_string(cs_patch);

  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    void* driver_lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!driver_lib)
      info.gpu_unavailable = "no usable GPU: no NVIDIA driver on this machine (libcuda.so.1 not found)";
    else if (err != cudaSuccess)
      info.gpu_unavailable = std::string("no usable GPU: ") + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
    else
      info.gpu_unavailable = "no usable GPU: the driver reports no CUDA device";
    if (driver_lib) dlclose(driver_lib);
    cudaGetLastError();  // clear the sticky-free error so later queries start clean
    count = 0;
  }
  const Nvml& nvml = Nvml::instance();
  cuda["device_count"] = count;
  if (!info.gpu_unavailable.empty()) cuda["unavailable"] = info.gpu_unavailable;
  nlohmann::json nvml_j = {{"available", nvml.available()}};
  if (nvml.available())
    nvml_j["driver_version"] = nvml.driver_version();
  else
    nvml_j["reason"] = nvml.unavailable_reason();

  nlohmann::json gpus = nlohmann::json::array();
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    GpuSummary g;
    g.index = d;
    g.name = p.name;
    g.cc_major = p.major;
    g.cc_minor = p.minor;
    g.sm_count = p.multiProcessorCount;
    g.l2_bytes = static_cast<std::size_t>(p.l2CacheSize);
    g.memory_bytes = p.totalGlobalMem;
    g.shared_per_sm_bytes = p.sharedMemPerMultiprocessor;
    g.sm_clock_max_mhz = attribute(cudaDevAttrClockRate, d) / 1000.0;
    g.mem_clock_mhz = attribute(cudaDevAttrMemoryClockRate, d) / 1000.0;
    g.memory_bus_bits = p.memoryBusWidth;
    char bus[64] = {};
    cudaDeviceGetPCIBusId(bus, sizeof bus, d);
    char uuid[64] = {};
    for (int i = 0; i < 16; ++i)
      std::snprintf(uuid + 2 * i, 3, "%02x", static_cast<unsigned char>(p.uuid.bytes[i]));
    gpus.push_back({{"index", d},
                    {"name", g.name},
                    {"uuid", uuid},
                    {"pci_bus_id", bus},
                    {"compute_capability", std::to_string(g.cc_major) + "." + std::to_string(g.cc_minor)},
                    {"sm_count", g.sm_count},
                    {"l2_bytes", g.l2_bytes},
                    {"memory_bytes", g.memory_bytes},
                    {"shared_memory_per_sm_bytes", g.shared_per_sm_bytes},
                    {"shared_memory_per_block_optin_bytes", p.sharedMemPerBlockOptin},
                    {"registers_per_sm", p.regsPerMultiprocessor},
                    {"max_threads_per_sm", p.maxThreadsPerMultiProcessor},
                    {"sm_clock_max_mhz", g.sm_clock_max_mhz},
                    {"memory_clock_mhz", g.mem_clock_mhz},
                    {"memory_bus_bits", g.memory_bus_bits},
                    {"datasheet_bandwidth_gbs", g.datasheet_bandwidth_gbs()},
                    {"ecc", p.ECCEnabled != 0},
                    {"nvml", nvml.device_info(d)}});
    info.gpus.push_back(g);
  }
  info.doc = {{"host", host_info()}, {"cuda", cuda}, {"nvml", nvml_j}, {"gpus", gpus}, {"build", build_info()}};
  return info;
}

}  // namespace gpufact
