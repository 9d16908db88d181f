#include "core/cuda/sm_partition.hpp"

#include "core/cuda/check.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>

#include <stdexcept>
#include <string>

namespace gpufact {
namespace {

// The driver entry points green contexts need, from the runtime (cudart loads libcuda itself).
struct Driver {
  PFN_cuDeviceGetDevResource_v12040 get_resource = nullptr;
  PFN_cuDevSmResourceSplitByCount_v12040 split = nullptr;
  PFN_cuDevResourceGenerateDesc_v12040 describe = nullptr;
  PFN_cuGreenCtxCreate_v12040 create = nullptr;
  PFN_cuGreenCtxDestroy_v12040 destroy = nullptr;
  PFN_cuGreenCtxStreamCreate_v12050 stream_create = nullptr;
  PFN_cuStreamDestroy_v4000 stream_destroy = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuGetErrorString_v6000 error_string = nullptr;
};

template <class F>
void entry(const char* name, int version, F& f) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  GPUFACT_CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || p == nullptr)
    throw std::runtime_error(std::string("SM partition: the driver has no ") + name + " (green contexts need CUDA 12.5+)");
  f = reinterpret_cast<F>(p);
}

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    entry("cuDeviceGetDevResource", 12040, r.get_resource);
    entry("cuDevSmResourceSplitByCount", 12040, r.split);
    entry("cuDevResourceGenerateDesc", 12040, r.describe);
    entry("cuGreenCtxCreate", 12040, r.create);
    entry("cuGreenCtxDestroy", 12040, r.destroy);
    entry("cuGreenCtxStreamCreate", 12050, r.stream_create);
    entry("cuStreamDestroy", 4000, r.stream_destroy);
    entry("cuDeviceGet", 2000, r.device_get);
    entry("cuGetErrorString", 6000, r.error_string);
    return r;
  }();
  return d;
}

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* message = nullptr;
  if (driver().error_string) driver().error_string(r, &message);
  throw std::runtime_error(std::string("SM partition: ") + what + ": " + (message ? message : "unknown error"));
}

}  // namespace

struct SmPartition::State {
  CUgreenCtx contexts[2] = {nullptr, nullptr};
  CUstream streams[2] = {nullptr, nullptr};
  int sms[2] = {0, 0};
  ~State() {
    for (CUstream s : streams)
      if (s) driver().stream_destroy(s);
    for (CUgreenCtx c : contexts)
      if (c) driver().destroy(c);
  }
};

SmPartition::SmPartition(int device, int first_sms) : state_(std::make_unique<State>()) {
  const Driver& d = driver();
  GPUFACT_CUDA_CHECK(cudaSetDevice(device));
  GPUFACT_CUDA_CHECK(cudaFree(nullptr));  // the primary context exists before the driver calls
  CUdevice dev = 0;
  check(d.device_get(&dev, device), "cuDeviceGet");
  CUdevResource all{};
  check(d.get_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  const int total = static_cast<int>(all.sm.smCount), grain = static_cast<int>(all.sm.minSmPartitionSize);
  if (first_sms < 1 || (first_sms + grain - 1) / grain * grain > total - grain)
    throw std::invalid_argument("panel_sms = " + std::to_string(first_sms) + ": must be 1.." +
                                std::to_string(total - 2 * grain) + " on this device (" + std::to_string(total) +
                                " SMs, partitions in steps of " + std::to_string(grain) + ", the rest keeps at least " +
                                std::to_string(grain) + ")");
  CUdevResource part{}, rest{};
  unsigned groups = 1;
  check(d.split(&part, &groups, &all, &rest, 0, static_cast<unsigned>(first_sms)), "cuDevSmResourceSplitByCount");
  CUdevResource* sets[2] = {&part, &rest};
  int least = 0, greatest = 0;
  GPUFACT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  for (int i = 0; i < 2; ++i) {
    CUdevResourceDesc desc = nullptr;
    check(d.describe(&desc, sets[i], 1), "cuDevResourceGenerateDesc");
    check(d.create(&state_->contexts[i], desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
    check(d.stream_create(&state_->streams[i], state_->contexts[i], CU_STREAM_NON_BLOCKING, i == 0 ? greatest : least),
          "cuGreenCtxStreamCreate");
    state_->sms[i] = static_cast<int>(sets[i]->sm.smCount);
  }
}

SmPartition::~SmPartition() = default;

cudaStream_t SmPartition::first() const noexcept { return reinterpret_cast<cudaStream_t>(state_->streams[0]); }
cudaStream_t SmPartition::second() const noexcept { return reinterpret_cast<cudaStream_t>(state_->streams[1]); }
int SmPartition::first_sms() const noexcept { return state_->sms[0]; }
int SmPartition::second_sms() const noexcept { return state_->sms[1]; }

}  // namespace gpufact
