// gpufact_ktrace: a kernel timeline for any CUDA program, for machines without Nsight Systems.
// Loaded by the CUDA driver as an injection library, it records every kernel, memcpy and memset
// (GPU start and end in ns, stream, launch shape, registers, shared memory) through CUPTI's
// activity API and writes them as CSV when the program exits:
//
//   export CUDA_INJECTION64_PATH=/path/to/lib/libgpufact_ktrace.so GPUFACT_KTRACE_OUT=trace.csv
//   gpufact bench volkov08.fig7 -a factorization=cholesky -N 4096 --niter 3
//
// Concurrent kernels keep their real overlap (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), so the
// trace shows which stream waited on which — what a per-kernel profiler (ncu) serializes away.
#include <cupti.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace {

std::FILE* out = nullptr;
std::mutex out_mutex;
constexpr std::size_t kBufferBytes = std::size_t{8} << 20;

void report(CUptiResult r, const char* what) {
  if (r == CUPTI_SUCCESS) return;
  const char* text = nullptr;
  cuptiGetResultString(r, &text);
  std::fprintf(stderr, "gpufact_ktrace: %s: %s\n", what, text ? text : "unknown CUPTI error");
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  const std::lock_guard<std::mutex> lock(out_mutex);
  CUpti_Activity* record = nullptr;
  while (out && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        std::fprintf(out, "kernel,%llu,%llu,%u,%u,%u,%d,%u,\"%s\"\n", static_cast<unsigned long long>(k->start),
                     static_cast<unsigned long long>(k->end), k->streamId, k->gridX * k->gridY * k->gridZ,
                     k->blockX * k->blockY * k->blockZ, k->dynamicSharedMemory + k->staticSharedMemory,
                     k->registersPerThread, k->name ? k->name : "");
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        std::fprintf(out, "memcpy,%llu,%llu,%u,,,,,\"%llu bytes, kind %u\"\n",
                     static_cast<unsigned long long>(m->start), static_cast<unsigned long long>(m->end), m->streamId,
                     static_cast<unsigned long long>(m->bytes), static_cast<unsigned>(m->copyKind));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        std::fprintf(out, "memset,%llu,%llu,%u,,,,,\"%llu bytes\"\n", static_cast<unsigned long long>(m->start),
                     static_cast<unsigned long long>(m->end), m->streamId,
                     static_cast<unsigned long long>(m->bytes));
        break;
      }
      default:
        break;
    }
  }
  std::free(buffer);
}

void finish() {
  report(cuptiActivityFlushAll(1), "flush");
  const std::lock_guard<std::mutex> lock(out_mutex);
  if (out) std::fclose(out);
  out = nullptr;
}

}  // namespace

// Called by the CUDA driver once, when it loads the library named by CUDA_INJECTION64_PATH.
extern "C" int InitializeInjection() {
  const char* path = std::getenv("GPUFACT_KTRACE_OUT");
  out = std::fopen(path && *path ? path : "ktrace.csv", "w");
  if (!out) {
    std::fprintf(stderr, "gpufact_ktrace: cannot write %s\n", path && *path ? path : "ktrace.csv");
    return 0;
  }
  std::fprintf(out, "kind,start_ns,end_ns,stream,grid,block,shared_bytes,registers,name\n");
  report(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "register callbacks");
  report(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), "enable kernels");
  report(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY), "enable memcpy");
  report(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET), "enable memset");
  std::atexit(finish);
  return 1;
}
