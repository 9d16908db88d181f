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
  CUgreenCtx context = nullptr;
  CUstream stream = nullptr;
  int reserved = 0, rest = 0;
  ~State() {
    if (stream) driver().stream_destroy(stream);
    if (context) driver().destroy(context);
  }
};

SmPartition::SmPartition(int device, int reserved_sms) : state_(std::make_unique<State>()) {
  const Driver& d = driver();
  GPUFACT_CUDA_CHECK(cudaSetDevice(device));
  GPUFACT_CUDA_CHECK(cudaFree(nullptr));  // the primary context exists before the driver calls
  CUdevice dev = 0;
  check(d.device_get(&dev, device), "cuDeviceGet");
  CUdevResource all{};
  check(d.get_resource(dev, &all, CU_DEV_RESOURCE_TYPE_SM), "cuDeviceGetDevResource");
  const int total = static_cast<int>(all.sm.smCount), grain = static_cast<int>(all.sm.minSmPartitionSize);
  const int most = (total - grain) / grain * grain;  // rounded up, it still leaves a granule
  if (reserved_sms < 1 || reserved_sms > most)
    throw std::invalid_argument("panel_sms = " + std::to_string(reserved_sms) + ": must be 1.." +
                                std::to_string(most) + " on this device (" + std::to_string(total) +
                                " SMs, set apart in steps of " + std::to_string(grain) + ")");
  CUdevResource reserved{}, rest{};
  unsigned groups = 1;
  check(d.split(&reserved, &groups, &all, &rest, 0, static_cast<unsigned>(reserved_sms)),
        "cuDevSmResourceSplitByCount");
  int least = 0, greatest = 0;
  GPUFACT_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  CUdevResourceDesc desc = nullptr;
  check(d.describe(&desc, &rest, 1), "cuDevResourceGenerateDesc");
  check(d.create(&state_->context, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM), "cuGreenCtxCreate");
  check(d.stream_create(&state_->stream, state_->context, CU_STREAM_NON_BLOCKING, least), "cuGreenCtxStreamCreate");
  state_->reserved = static_cast<int>(reserved.sm.smCount);
  state_->rest = static_cast<int>(rest.sm.smCount);
}

SmPartition::~SmPartition() = default;

cudaStream_t SmPartition::stream() const noexcept { return reinterpret_cast<cudaStream_t>(state_->stream); }
int SmPartition::reserved_sms() const noexcept { return state_->reserved; }
int SmPartition::stream_sms() const noexcept { return state_->rest; }

}  // namespace gpufact
